//! `zero acp`: the Agent Client Protocol (version 1) over stdio, for editors. Being built in
//! steps (issue 37): how tool calls look in an editor and zero's events as `session/update`s
//! come first.

// Until `zero acp` drives them, only their tests use these.
#![allow(dead_code)]

pub mod tool_calls;
pub mod updates;
