//! `zero acp`: the Agent Client Protocol (version 1) over stdio, for editors. JSON-RPC 2.0,
//! one message per line; nothing else on stdout, diagnostics on stderr.
//!
//! One main loop takes the client's requests in order ([`inbox`] reads them on its own thread)
//! and answers each: `initialize` and `authenticate`, the sessions ([`sessions`]: each a zero
//! session with its own run engine, opened from the flags' plan and the session's workspace),
//! and `session/prompt`, whose turn runs on this loop while the reader hears `session/cancel`
//! and the answers to zero's own requests (permissions, [`permissions`]). Each session's
//! events become its `session/update`s in the session's own output ([`updates`]), redacted as
//! every byte zero writes. The process ends when stdin does (every session is closed, its MCP
//! servers stopped, exit 0) or at a signal (the same cleanup, the signal's exit code).

pub mod files;
pub mod inbox;
pub mod permissions;
pub mod prompt;
pub mod sessions;
pub mod tool_calls;
pub mod updates;
pub mod wire;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::cli::ExecArgs;
use crate::config::Env;
use crate::error::{Exit, Failure};
use crate::output::{Emitter, Format, Output};
use crate::redact::Redactor;
use crate::rpc::{self, code, Id, RpcError};
use crate::run::plan::RunPlan;
use wire::{Incoming, Peer, Stdout};

/// The protocol version zero speaks.
pub const PROTOCOL_VERSION: u64 = 1;
/// How long a permission request waits by default: a person decides.
const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(3600);
/// The one authentication method: the provider zero is configured with.
const AUTH_METHOD: &str = "zero-provider";

/// `zero acp`'s options: exec's run defaults, and its own.
#[derive(Debug, Default, PartialEq)]
pub struct AcpArgs {
    pub exec: ExecArgs,
    /// `--client-terminal`: `bash` runs in the client's terminal, under its rules.
    pub client_terminal: bool,
}

/// Runs `zero acp` until stdin ends; returns the exit code.
pub fn run(args: AcpArgs, env: Env) -> Exit {
    let client_terminal = args.client_terminal;
    let (plan, timeout) = match defaults(args, &env) {
        Ok(found) => found,
        Err(failure) => {
            crate::sys::stdio::eprint_line(&format!("[zero] {}", failure.message()));
            return failure.exit();
        }
    };
    let started_in = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(err) => {
            crate::sys::stdio::eprint_line(&format!(
                "[zero] Cannot read the current directory: {err}"
            ));
            return Exit::Usage;
        }
    };
    let mut redactor = Redactor::new(env.secret_values());
    redactor.add_secrets_min(plan.redact_values.clone(), 4);
    let stdout = Stdout::new(Box::new(crate::sys::stdio::stdout()));
    let turns = Arc::new(Mutex::new(inbox::Turns::default()));
    let awaiting = Arc::default();
    let reader = inbox::Reader {
        out: stdout.clone(),
        redactor: redactor.clone(),
        turns: turns.clone(),
        awaiting: Arc::clone(&awaiting),
    };
    let (requests, answers) = match inbox::start(reader) {
        Ok(channels) => channels,
        Err(err) => {
            crate::sys::stdio::eprint_line(&format!(
                "[zero] Cannot read stdin: the ACP input thread could not start ({err})"
            ));
            return Exit::Internal;
        }
    };
    // A signal ends the process after the cleanup; it has no run to end on stdout.
    let quiet = Emitter::new(
        Format::Acp,
        crate::clock::new_run_id(),
        Box::new(std::io::sink()),
        Box::new(crate::sys::stdio::stderr()),
        redactor.clone(),
    );
    crate::run::ending::install(&Output::new(quiet));
    let peer = Arc::new(Peer::new(stdout, redactor, awaiting, answers));
    let mut server = sessions::Server::new(plan, env, started_in, peer, turns, timeout);
    server.use_client_terminal(client_terminal);
    while let Ok(Incoming::Request { id, method, params }) = requests.recv() {
        if !server.answer(&id, &method, params) {
            break;
        }
    }
    server.close_all("zero acp is ending: its input ended");
    crate::sys::process::stop_kept_groups();
    Exit::Success
}

/// The plan every session starts from, and how long a permission request waits. The flags
/// that make no sense for an editor's sessions are refused, naming them.
fn defaults(args: AcpArgs, env: &Env) -> Result<(RunPlan, Duration), Failure> {
    let mut exec = args.exec;
    if let Some(error) = &exec.error {
        return Err(Failure::Usage(format!("{error} (see zero acp --help)")));
    }
    let refused = refused_flags(&exec);
    if !refused.is_empty() {
        return Err(Failure::Usage(format!(
            "zero acp does not take {}: the editor sends the prompts, and each session's output is ACP (see zero acp --help)",
            refused.join(", ")
        )));
    }
    let timeout = match exec.approval_timeout_ms.take() {
        Some(value) => Duration::from_millis(crate::run::plan::approval_timeout_ms(&value)?),
        None => DEFAULT_APPROVAL_TIMEOUT,
    };
    let mut plan = crate::run::plan::resolve(&exec, env)?;
    plan.output_format = Format::Acp;
    // Every gated call is asked about: the client answers.
    plan.approvals = Some(timeout);
    Ok((plan, timeout))
}

/// The exec flags given that `zero acp` does not take.
fn refused_flags(exec: &ExecArgs) -> Vec<&'static str> {
    let given = [
        (!exec.prompt_words.is_empty() || exec.prompt.is_some(), "a prompt"),
        (exec.file.is_some(), "--file"),
        (exec.input_format.is_some(), "-i/--input-format"),
        (exec.output_format.is_some(), "-o/--output-format"),
        (exec.schema_version.is_some(), "--schema-version"),
        (exec.heartbeat_ms.is_some(), "--heartbeat-ms"),
        (exec.live, "--live"),
        (exec.approvals.is_some(), "--approvals"),
        (exec.resume.is_some(), "--resume"),
        (exec.fork.is_some(), "--fork"),
        (exec.ephemeral, "--ephemeral"),
        (exec.list_tools, "--list-tools"),
        (!exec.images.is_empty(), "--image"),
        (exec.output_schema.is_some(), "--output-schema"),
        (exec.output_schema_attempts.is_some(), "--output-schema-attempts"),
        (exec.record.is_some(), "--record"),
        (exec.cwd.is_some(), "-C/--cwd"),
    ];
    given.into_iter().filter(|(set, _)| *set).map(|(_, name)| name).collect()
}

/// `initialize`'s answer: the version zero speaks, whatever the client asked.
fn initialized() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "agentInfo": {"name": "zero", "title": "zero", "version": crate::cli::VERSION},
        "agentCapabilities": {
            "loadSession": true,
            "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
            "mcpCapabilities": {"http": true, "sse": false},
            "sessionCapabilities": {"list": {}, "close": {}, "additionalDirectories": {}},
        },
        "authMethods": [{
            "type": "agent",
            "id": AUTH_METHOD,
            "name": "The provider zero is configured with",
            "description": "zero uses the provider and key from its environment and config file (see zero doctor).",
        }],
    })
}

/// A JSON-RPC error for a failure of zero's.
fn failure_error(failure: &Failure) -> RpcError {
    let code = match failure {
        Failure::Usage(_) => code::INVALID_PARAMS,
        _ => code::INTERNAL_ERROR,
    };
    RpcError {
        code,
        message: failure.message(),
        data: Some(json!({"code": failure.code_v2(), "recoverable": failure.recoverable()})),
    }
}

/// Reads a required string member of `params`.
fn string<'a>(params: &'a Value, key: &str) -> Result<&'a str, RpcError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("{key} must be a string")))
}

/// An absolute directory path member of `params`.
fn directory(params: &Value, key: &str) -> Result<PathBuf, RpcError> {
    let path = PathBuf::from(string(params, key)?);
    if !path.is_absolute() {
        return Err(RpcError::invalid_params(format!("{key} must be an absolute path")));
    }
    if !path.is_dir() {
        return Err(RpcError::invalid_params(format!(
            "{key} is not a directory: {}",
            path.display()
        )));
    }
    Ok(path)
}

/// `path` with the resolved workspace `root` put back as the `cwd` the editor named (they
/// differ when that `cwd` holds a symbolic link); a path elsewhere is left as it is.
pub fn shown_path(path: &Path, root: &Path, cwd: &Path) -> PathBuf {
    match path.strip_prefix(root) {
        Ok(rest) if rest.as_os_str().is_empty() => cwd.to_path_buf(),
        Ok(rest) => cwd.join(rest),
        Err(_) => path.to_path_buf(),
    }
}

/// The answer written for request `id`.
fn response(id: &Id, answer: Result<Value, RpcError>) -> Value {
    match answer {
        Ok(result) => rpc::result(id, result),
        Err(error) => rpc::error(id, &error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_without_meaning_for_an_editor_are_refused_by_name() {
        let exec = ExecArgs {
            output_format: Some("json".into()),
            live: true,
            resume: Some(crate::cli::Resume::Latest),
            ..ExecArgs::default()
        };
        let failure =
            defaults(AcpArgs { exec, client_terminal: false }, &Env::default()).unwrap_err();
        assert_eq!(
            failure.message(),
            "zero acp does not take -o/--output-format, --live, --resume: the editor sends the prompts, and each session's output is ACP (see zero acp --help)"
        );
        assert_eq!(failure.exit(), Exit::Usage);
    }

    #[test]
    fn initialize_says_what_zero_can_do() {
        let answer = initialized();
        assert_eq!(answer["protocolVersion"], 1);
        assert_eq!(answer["agentCapabilities"]["loadSession"], true);
        assert_eq!(
            answer["agentCapabilities"]["mcpCapabilities"],
            json!({"http": true, "sse": false})
        );
        assert_eq!(answer["authMethods"][0]["id"], AUTH_METHOD);
        assert_eq!(answer["authMethods"][0]["type"], "agent");
        let caps = &answer["agentCapabilities"];
        assert_eq!(
            caps["promptCapabilities"],
            json!({"image": true, "audio": false, "embeddedContext": true})
        );
        assert_eq!(
            caps["sessionCapabilities"],
            json!({"list": {}, "close": {}, "additionalDirectories": {}})
        );
    }
}
