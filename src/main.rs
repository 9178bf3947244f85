//! zero: a headless coding-agent runner. `zero exec` takes a prompt, runs a model with tools
//! in a loop, and writes the answer or a stream of schema-versioned JSON events.
//!
//! One synchronous loop, no async runtime. `main` parses the command line and maps the run's
//! outcome to an exit code; everything else lives in the modules below, named for what they
//! hold (`ending` installs the interrupt and panic handlers).
//!
//! Unsafe code is forbidden in every module but `signals` and `dirfd`, which hold the FFI to
//! libc (the crate root can only deny it, since a forbid here would reach them too).
#![deny(unsafe_code)]

mod agent;
mod cli;
mod clock;
mod config;
mod dirfd;
mod ending;
mod error;
mod exec;
#[cfg(test)]
mod fuzz;
mod glob;
mod http;
mod input;
mod models;
mod output;
mod process;
mod provider;
mod redact;
mod regex;
mod session;
mod signals;
mod sse;
#[cfg(test)]
mod testkit;
mod tools;

use std::io::Write;
use std::process::ExitCode;

use cli::Command;

fn main() -> ExitCode {
    let code = match cli::parse(std::env::args_os().skip(1).collect()) {
        Command::Help(text) => {
            let _ = std::io::stdout().write_all(text.as_bytes());
            0
        }
        Command::Version => {
            let _ = writeln!(std::io::stdout(), "zero {}", cli::VERSION);
            0
        }
        Command::Invalid(message) => {
            let _ = writeln!(std::io::stderr(), "[zero] {message}");
            2
        }
        Command::Sessions(args) => session::command(&args, &config::Env::from_process()),
        Command::Redact(names) => redact_stdin(&names, &config::Env::from_process()),
        Command::Exec(args) => {
            let process = exec::Process {
                env: config::Env::from_process(),
                stdout: Box::new(std::io::stdout()),
                stderr: Box::new(std::io::stderr()),
            };
            exec::run(*args, process, ending::install)
        }
    };
    ExitCode::from(code)
}

/// `zero redact`: stdin to stdout through the redactor, with the environment's secrets.
fn redact_stdin(names: &[String], env: &config::Env) -> u8 {
    let sensitive =
        env.iter().filter(|(k, _)| redact::is_sensitive_key(k)).map(|(_, v)| v.to_string());
    let mut redactor = redact::Redactor::new(sensitive);
    for name in names {
        match env.get(name) {
            Some(value) => redactor.add_secrets_min([value.to_string()], 4),
            None => {
                let _ = writeln!(
                    std::io::stderr(),
                    "[zero] WARNING: --redact-env {name}: the variable is not set."
                );
            }
        }
    }
    match redact::filter(std::io::stdin().lock(), std::io::stdout().lock(), &redactor) {
        Ok(()) => 0,
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => 1,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "[zero] redact failed: {err}");
            1
        }
    }
}
