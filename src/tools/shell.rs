//! The bash tool: `/bin/sh -c` in the workspace, in its own process group, stdin at
//! `/dev/null`, stdout and stderr each captured up to 1 MiB (the rest is drained and counted,
//! so memory stays flat whatever the command prints), and a timeout. When the shell exits or
//! times out, everything it started is killed, also what left its group (`process`), so no
//! process outlives the call and no pipe holds it open. Variables with sensitive names are
//! not passed on unless the run says so (`--shell-env`). With a client whose terminal runs
//! commands (`zero acp --client-terminal`), the command runs there instead, and the client's
//! rules hold for it, not zero's sandbox.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use serde_json::{json, Value};

use super::editor::{CommandRun, Editor};
use super::{object_schema, ArgError, Args, Outcome, Workspace};
use crate::sys::process::{self, Finished};

/// Bytes kept of each stream.
pub const OUTPUT_CAP: usize = 1024 * 1024;
const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const MAX_TIMEOUT_MS: u64 = 3_600_000;

pub fn schema() -> Value {
    object_schema(
        json!({
            "command": {"type": "string", "minLength": 1, "description": "The shell command."},
            "cwd": {"type": "string", "description": "Directory to run in, relative to the workspace root."},
            "timeout_ms": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_MS, "description": "Kill the command after this many milliseconds (default 120000)."},
        }),
        &["command"],
    )
}

/// What a `bash` call runs with besides its arguments.
pub(super) struct Context<'a> {
    pub call_id: &'a str,
    pub env_remove: &'a [OsString],
    pub sandbox: &'a super::sandbox::Sandbox,
    pub interrupted: fn() -> bool,
}

pub(super) fn bash(ws: &Workspace, args: &Args<'_>, cx: &Context<'_>) -> Result<Outcome, ArgError> {
    let Context { env_remove, sandbox, interrupted, .. } = *cx;
    let command = args.required("command", true)?;
    let timeout_ms = args.integer("timeout_ms", 1, MAX_TIMEOUT_MS)?.unwrap_or(DEFAULT_TIMEOUT_MS);
    let dir = match args.string("cwd")? {
        None => ws.root().to_path_buf(),
        Some(cwd) => match ws.open_dir(None, cwd) {
            Ok((place, _)) => ws.absolute(&place),
            Err(super::workspace::PathError::NotADirectory(_)) => {
                return Ok(Outcome::error(format!(
                    "Error executing bash: cwd {cwd:?} is not a directory"
                )))
            }
            Err(e) => return Ok(Outcome::error(format!("Error executing bash: {e}"))),
        },
    };
    if let Some(editor) = ws.terminal_editor() {
        let run = CommandRun {
            call_id: cx.call_id,
            command,
            cwd: &dir,
            timeout: Duration::from_millis(timeout_ms),
            output_limit: OUTPUT_CAP,
        };
        return Ok(in_client_terminal(editor, &run));
    }
    let spec = process::Spec {
        command,
        cwd: &dir,
        timeout: Duration::from_millis(timeout_ms),
        env_remove,
        stdout_cap: OUTPUT_CAP,
        stderr_cap: OUTPUT_CAP,
        sandbox: sandbox.prepared(),
        tmpdir: sandbox.tmpdir(),
    };
    let Finished { status, timed_out, stdout, stderr } = match process::run_shell(&spec) {
        Ok(done) => done,
        Err(err) => {
            return Ok(Outcome::error(format!("Error executing bash: cannot start /bin/sh: {err}")))
        }
    };
    // An interrupt killed it: what it wrote so far, then the interruption, as every call of
    // an interrupted turn ends (not "Killed by signal 9", which reads as the command's doing).
    let interrupted = interrupted();
    let mut out = String::new();
    if timed_out && !interrupted {
        out.push_str(&format!(
            "Error: Command timed out after {} ms; it was killed with everything it started.\n",
            timeout_ms
        ));
    }
    for (label, captured) in [("stdout", &stdout), ("stderr", &stderr)] {
        push_captured(&mut out, label, captured);
    }
    if interrupted {
        out.push_str("The call was interrupted.");
        return Ok(Outcome::error(out));
    }
    if stdout.total == 0 && stderr.total == 0 && !timed_out {
        out.push_str("Command completed with no output.\n");
    }
    let code = status.and_then(|s| s.code());
    match (code, status.and_then(|s| s.signal())) {
        (Some(code), _) => out.push_str(&format!("Exit code: {code}")),
        (None, Some(sig)) => out.push_str(&format!("Killed by signal {sig}")),
        (None, None) => out.push_str("Exit status unknown"),
    }
    let ok = !timed_out && code == Some(0);
    if let Some(note) = sandbox.refusal_note(ok, &String::from_utf8_lossy(&stderr.kept), &dir) {
        out.push('\n');
        out.push_str(&note);
    }
    Ok(Outcome { ok, exit_code: code, ..Outcome::ok(out) })
}

/// A command run in the client's terminal: its output (stdout and stderr together, as the
/// terminal shows them) and how it ended, in the words of a local run.
fn in_client_terminal(editor: &dyn Editor, run: &CommandRun<'_>) -> Outcome {
    let done = match editor.run_command(run) {
        Ok(done) => done,
        Err(err) => {
            return Outcome::error(format!("Error executing bash in the client's terminal: {err}"))
        }
    };
    let mut out = String::new();
    if done.timed_out && !done.interrupted {
        out.push_str(&format!(
            "Error: Command timed out after {} ms; the client's terminal was told to kill it.\n",
            run.timeout.as_millis()
        ));
    }
    if !done.output.is_empty() {
        out.push_str("output:\n");
        out.push_str(done.output.strip_suffix('\n').unwrap_or(&done.output));
        out.push('\n');
        if done.truncated {
            out.push_str("[output truncated by the client's terminal: its start was dropped]\n");
        }
    }
    let terminal = Some(done.terminal_id.clone());
    if done.interrupted {
        out.push_str("The call was interrupted.");
        return Outcome { terminal, ..Outcome::error(out) };
    }
    if done.output.is_empty() && !done.timed_out {
        out.push_str("Command completed with no output.\n");
    }
    match (done.exit_code, &done.signal) {
        (Some(code), _) => out.push_str(&format!("Exit code: {code}")),
        (None, Some(signal)) => out.push_str(&format!("Killed by signal {signal}")),
        (None, None) => out.push_str("Exit status unknown"),
    }
    let ok = !done.timed_out && done.exit_code == Some(0);
    Outcome { ok, exit_code: done.exit_code, terminal, ..Outcome::ok(out) }
}

/// One stream's part of the result: what was kept, and how much more was written.
fn push_captured(out: &mut String, label: &str, captured: &process::Captured) {
    if captured.total == 0 {
        return;
    }
    let text = String::from_utf8_lossy(&captured.kept);
    out.push_str(label);
    out.push_str(":\n");
    out.push_str(text.strip_suffix('\n').unwrap_or(&text));
    out.push('\n');
    if captured.total > captured.kept.len() as u64 {
        out.push_str(&format!(
            "[{label} truncated: {} bytes written, the first {} kept]\n",
            captured.total,
            captured.kept.len()
        ));
    }
}
