//! zero: a headless coding-agent runner. `zero exec` takes a prompt, runs a model with tools
//! in a loop, and writes the answer or a stream of schema-versioned JSON events.
//!
//! One synchronous loop, no async runtime. `main` parses the command line and maps the run's
//! outcome to an exit code; everything else lives in the modules below, named for what they
//! hold (`ending` installs the interrupt and panic handlers).
//!
//! Unsafe code is denied everywhere (`[lints]` in Cargo.toml) but in the rooms of `sys`
//! that hold the FFI to libc and the SSE2 instructions, which allow it file by file.
//! `unwrap`, `expect` and `print!` are denied in product code (`[lints.clippy]`); unit tests
//! may use them.
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, clippy::print_stderr)
)]

mod acp;
mod cli;
mod clock;
mod commands;
mod config;
mod conversation;
mod error;
mod hooks;
mod jsonschema;
mod mcp;
mod net;
mod output;
mod protocol;
mod provider;
mod redact;
mod rpc;
mod run;
mod search;
mod session;
mod sha256;
mod sys;
#[cfg(test)]
mod testing;
mod text;
mod tools;

use std::process::ExitCode;

use cli::Command;
use error::Exit;

fn main() -> ExitCode {
    let code = match cli::parse(std::env::args_os().skip(1).collect()) {
        Command::Help(text) => {
            let _ = sys::stdio::print(text.as_bytes());
            Exit::Success
        }
        Command::Version => {
            let _ = sys::stdio::print(format!("{}\n", cli::VERSION).as_bytes());
            Exit::Success
        }
        Command::Invalid(message) => {
            sys::stdio::eprint_line(&format!("[zero] {message}"));
            Exit::Usage
        }
        Command::Sessions(args) => commands::sessions(&args, &config::Env::from_process()),
        Command::Search(args) => commands::search(&args, &config::Env::from_process()),
        Command::Config { json } => commands::config(json, &config::Env::from_process()),
        Command::Doctor { json, offline } => {
            commands::doctor(json, offline, &config::Env::from_process())
        }
        Command::McpList(args) => commands::mcp_list(&args, &config::Env::from_process()),
        Command::Redact(names) => commands::redact(&names, &config::Env::from_process()),
        Command::Schema(version) => commands::print_schema(&version),
        Command::Completions(shell) => {
            match sys::stdio::print(cli::completions::script(shell).as_bytes()) {
                Ok(()) => Exit::Success,
                Err(_) => Exit::Internal,
            }
        }
        Command::Acp(args) => acp::run(*args, config::Env::from_process()),
        Command::Exec(args) => {
            let process = run::exec::Process {
                env: config::Env::from_process(),
                stdout: Box::new(sys::stdio::stdout()),
                stderr: Box::new(sys::stdio::stderr()),
            };
            run::exec::run(*args, process, run::ending::install)
        }
    };
    ExitCode::from(code.code())
}
