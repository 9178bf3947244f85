//! The engine of the search tools (`tools::walk`): a linear-time regex with its lazy DFA
//! (`regex`), byte and substring scans over file buffers (`substring`), the glob matcher
//! (`glob`) and git's ignore rules (`ignore`). A leaf: only `tools` uses it.

pub mod glob;
pub mod ignore;
pub mod regex;
pub mod substring;
