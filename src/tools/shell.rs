//! The bash tool (A9): `/bin/sh -c` in the workspace, in its own process group, stdin at
//! `/dev/null`, stdout and stderr each captured up to 1 MiB (the rest is drained and counted,
//! so memory stays flat whatever the command prints), and a timeout that kills the whole
//! group. When the shell exits, whatever it left running in its group is killed too, so no
//! process outlives the call and no pipe is held open.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use super::{object_schema, ArgError, Args, Outcome, Workspace};
use crate::signals;

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

/// One captured stream: the first bytes and the total count.
struct Captured {
    kept: Vec<u8>,
    total: u64,
}

fn capture(mut stream: impl Read) -> Captured {
    let mut kept = Vec::new();
    let mut total = 0u64;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                total += n as u64;
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    Captured { kept, total }
}

pub(super) fn bash(ws: &Workspace, args: &Args<'_>) -> Result<Outcome, ArgError> {
    let command = args.required("command", true)?;
    let timeout_ms = args.integer("timeout_ms", 1, MAX_TIMEOUT_MS)?.unwrap_or(DEFAULT_TIMEOUT_MS);
    let dir = match args.string("cwd")? {
        None => ws.root().to_path_buf(),
        Some(cwd) => match ws.resolve(cwd) {
            Ok(dir) if dir.is_dir() => dir,
            Ok(_) => {
                return Ok(Outcome::error(format!(
                    "Error executing bash: cwd {cwd:?} is not a directory"
                )))
            }
            Err(e) => return Ok(Outcome::error(format!("Error executing bash: {e}"))),
        },
    };
    let spawned = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => {
            return Ok(Outcome::error(format!("Error executing bash: cannot start /bin/sh: {err}")))
        }
    };
    let pid = child.id();
    signals::set_running_group(pid);
    let stdout = child.stdout.take().map(|s| std::thread::spawn(move || capture(s)));
    let stderr = child.stderr.take().map(|s| std::thread::spawn(move || capture(s)));
    let (done_tx, done_rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = done_tx.send(());
        status
    });
    let timed_out = done_rx.recv_timeout(Duration::from_millis(timeout_ms)).is_err();
    // Whether the shell finished or not, nothing of its group may survive the call.
    signals::kill_group(pid);
    signals::clear_running_group();
    let status = waiter.join().ok().and_then(Result::ok);
    let empty = || Captured { kept: Vec::new(), total: 0 };
    let stdout = stdout.and_then(|h| h.join().ok()).unwrap_or_else(empty);
    let stderr = stderr.and_then(|h| h.join().ok()).unwrap_or_else(empty);

    let mut out = String::new();
    if timed_out {
        out.push_str(&format!(
            "Error: Command timed out after {} ms; it was killed with its process group.\n",
            timeout_ms
        ));
    }
    for (label, captured) in [("stdout", &stdout), ("stderr", &stderr)] {
        if captured.total == 0 {
            continue;
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
    Ok(Outcome { ok, output: out })
}
