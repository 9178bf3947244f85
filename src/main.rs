//! zero: a headless coding-agent runner. `zero exec` takes a prompt, runs a model with tools
//! in a loop, and writes the answer or a stream of schema-versioned JSON events.
//!
//! One synchronous loop, no async runtime. `main` parses the command line, installs the
//! interrupt and panic handlers, and maps the run's outcome to an exit code; everything else
//! lives in the modules below, named for what they hold.
//!
//! Unsafe code is forbidden in every module but `signals`, which holds a few lines of FFI
//! (the crate root can only deny it, since a forbid here would reach `signals` too).
#![deny(unsafe_code)]

mod agent;
mod cli;
mod clock;
mod config;
mod error;
mod exec;
#[cfg(test)]
mod fuzz;
mod glob;
mod http;
mod input;
mod models;
mod output;
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
use std::time::Duration;

use cli::Command;
use error::Failure;
use output::Shared;

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
            exec::run(*args, process, install_handlers)
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

/// Ends the run from another thread (interrupt) or from a panic: writes the failure through
/// the emitter, records it in the session, and exits. The emitter lock is held only while one
/// line is written, so waiting for it is brief; if it cannot be had in time, exit anyway.
fn end_from_outside(shared: &Shared, failure: Failure) -> ! {
    signals::kill_running_group();
    // The lock is kept until exit, so the main thread cannot write after the end.
    let emitter = exec::lock_for(shared, Duration::from_millis(100));
    if let Some(mut emitter) = emitter {
        let _ = emitter.failure(&failure);
    }
    exec::record_failure(&failure);
    std::process::exit(failure.exit_code().into());
}

/// Installs the SIGINT/SIGTERM handler and the panic hook once the emitter exists.
fn install_handlers(shared: &Shared) {
    let for_signals = shared.clone();
    // Without the handler the default action (terminate) still applies; that is the best
    // that can be done if the socket pair cannot be created.
    let _ = signals::install(move || end_from_outside(&for_signals, Failure::Interrupted));
    let for_panics = shared.clone();
    std::panic::set_hook(Box::new(move |info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let place =
            info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let failure = Failure::Crash(format!("Internal error (a bug in zero): {what}{place}"));
        let _ = writeln!(std::io::stderr(), "[zero] {}", failure.message());
        end_from_outside(&for_panics, failure);
    }));
}
