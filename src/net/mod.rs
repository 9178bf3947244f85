//! The network, as providers and the MCP client both use it: one HTTP client setup (proxies
//! from the environment, extra certificate authorities, timeouts, redirects) and its errors
//! (`http`), the server-sent events reader (`sse`), and URLs parsed to decide what they are
//! (`url`). `provider/` and `mcp/` import from here and never from each other.

pub mod http;
pub mod sse;
pub mod url;
