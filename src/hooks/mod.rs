//! Hooks: the user's own commands at each step of a run, in Claude Code's format (issue 38),
//! so that the scripts a team already has run unchanged. Being built in steps: where hooks
//! come from and how they are checked ([`config`]), and how zero's tools are named to them
//! ([`names`]) come first; running them and their decisions come next.

// Until the runs use them, only their tests do.
#![allow(dead_code)]

pub mod config;
pub mod names;
