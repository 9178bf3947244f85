//! End-to-end tests: the real `zero` binary against a loopback mock provider.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, clippy::print_stderr)]

mod corpus;
mod jsonschema;
mod mcp_server;
mod mock;
mod prompt_cache;
mod schema;
mod schema2;
mod util;

mod acp;
mod acp_sdks;
mod agent;
mod bench_mock;
mod cli;
mod context;
mod faults;
mod field;
mod house;
mod inputs;
mod live;
mod mcp;
mod promises;
mod protocol2;
mod providers;
mod readme;
mod record;
mod recorded;
mod redaction;
mod sandbox;
mod scripts;
mod sessions;
mod signals;
mod stdio;
mod stream;
mod structured;
mod trust;
mod walks;
