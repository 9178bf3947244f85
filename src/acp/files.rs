//! The client's editor as the tools see it: `fs/read_text_file` and `fs/write_text_file` when
//! the client said it has them (`clientCapabilities.fs`), and with `--client-terminal` its
//! terminal for `bash` (`terminal/*`), each asked through the session's connection and waited
//! for like any of zero's requests.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{json, Value};

use super::wire::{CallError, Peer, Wait};
use crate::tools::editor::{CommandRun, Editor, EditorError, TerminalRun};

/// How long the editor has to read or write a file.
const FILE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a terminal's output, release or kill may take.
const TERMINAL_TIMEOUT: Duration = Duration::from_secs(10);
/// The same once the turn is cancelled or the command timed out: the turn's end waits little.
const STOPPING_TIMEOUT: Duration = Duration::from_secs(1);

/// What the client said it can do with files and commands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileCapabilities {
    pub read: bool,
    pub write: bool,
    /// `bash` runs in the client's terminal (`--client-terminal`, and the client has one).
    pub terminal: bool,
}

impl FileCapabilities {
    /// `clientCapabilities` of `initialize`; the terminal only when zero was asked to use it.
    pub fn of(initialize: &Value, client_terminal: bool) -> FileCapabilities {
        let caps = &initialize["clientCapabilities"];
        let fs = &caps["fs"];
        FileCapabilities {
            read: fs["readTextFile"].as_bool() == Some(true),
            write: fs["writeTextFile"].as_bool() == Some(true),
            terminal: client_terminal && caps["terminal"].as_bool() == Some(true),
        }
    }
}

/// One session's editor.
pub struct ClientEditor {
    peer: Arc<Peer>,
    can: FileCapabilities,
    /// Known once the session is opened (the tools run only after).
    pub session_id: OnceLock<String>,
    /// The workspace as zero resolved it (links followed) and as the editor named it: the
    /// editor is given its own paths.
    pub roots: OnceLock<(PathBuf, PathBuf)>,
}

impl std::fmt::Debug for ClientEditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClientEditor({:?})", self.can)
    }
}

impl ClientEditor {
    pub fn new(peer: Arc<Peer>, can: FileCapabilities) -> ClientEditor {
        ClientEditor { peer, can, session_id: OnceLock::new(), roots: OnceLock::new() }
    }

    fn call(&self, method: &str, params: Value) -> Result<Value, EditorError> {
        self.call_for(
            method,
            params,
            Wait { timeout: FILE_TIMEOUT, cancellable: true, exact: false },
        )
    }

    fn call_for(&self, method: &str, mut params: Value, wait: Wait) -> Result<Value, EditorError> {
        params["sessionId"] = json!(self.session());
        self.peer.call(method, params, wait).map_err(|e| match e {
            CallError::Refused(e) => EditorError::Refused(format!("{} ({})", e.message, e.code)),
            CallError::TimedOut => EditorError::TimedOut,
            CallError::Cancelled => EditorError::Cancelled,
            CallError::Gone => EditorError::Gone,
        })
    }
}

impl ClientEditor {
    fn session(&self) -> String {
        self.session_id.get().cloned().unwrap_or_default()
    }

    /// `path` as the editor names it: under the workspace it named, not its resolved root.
    fn shown(&self, path: &Path) -> PathBuf {
        match self.roots.get() {
            Some((root, cwd)) => super::shown_path(path, root, cwd),
            None => path.to_path_buf(),
        }
    }

    /// Shows terminal `id` in tool call `call_id` while its command runs.
    fn show_terminal(&self, call_id: &str, id: &str) {
        let update = json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": crate::output::wire_id(call_id),
            "content": [{"type": "terminal", "terminalId": id}],
        });
        let notice = super::updates::notification(&self.session(), update);
        let _ = self.peer.out().send(&notice, self.peer.redactor());
    }
}

impl Editor for ClientEditor {
    fn runs_commands(&self) -> bool {
        self.can.terminal
    }

    fn run_command(&self, run: &CommandRun<'_>) -> Result<TerminalRun, EditorError> {
        let created = self.call_for(
            "terminal/create",
            json!({"command": "/bin/sh", "args": ["-c", run.command], "cwd": self.shown(run.cwd), "outputByteLimit": run.output_limit}),
            Wait { timeout: FILE_TIMEOUT, cancellable: true, exact: true },
        )?;
        let Some(id) = created.get("terminalId").and_then(Value::as_str).map(str::to_string) else {
            return Err(EditorError::Malformed("to terminal/create has no terminalId"));
        };
        self.show_terminal(run.call_id, &id);
        let mut done = TerminalRun { terminal_id: id.clone(), ..TerminalRun::default() };
        let terminal = json!({"terminalId": id});
        let waiting = Wait { timeout: run.timeout, cancellable: true, exact: false };
        match self.call_for("terminal/wait_for_exit", terminal.clone(), waiting) {
            Ok(exit) => {
                done.exit_code = exit.get("exitCode").and_then(Value::as_i64).map(|c| c as i32);
                done.signal = exit.get("signal").and_then(Value::as_str).map(str::to_string);
            }
            Err(EditorError::TimedOut) => done.timed_out = true,
            Err(EditorError::Cancelled) => done.interrupted = true,
            Err(err) => return Err(err),
        }
        let wait = if done.timed_out || done.interrupted {
            // Not cancellable (the turn may already be cancelled, and the command must stop),
            // but short: the turn's end does not wait on a silent client.
            let stopping = Wait { timeout: STOPPING_TIMEOUT, cancellable: false, exact: false };
            let _ = self.call_for("terminal/kill", terminal.clone(), stopping);
            stopping
        } else {
            Wait { timeout: TERMINAL_TIMEOUT, cancellable: false, exact: false }
        };
        let output = self.call_for("terminal/output", terminal.clone(), wait);
        if let Ok(output) = output {
            done.output =
                output.get("output").and_then(Value::as_str).unwrap_or_default().to_string();
            done.truncated = output.get("truncated").and_then(Value::as_bool).unwrap_or(false);
        }
        let _ = self.call_for("terminal/release", terminal, wait);
        Ok(done)
    }

    fn reads(&self) -> bool {
        self.can.read
    }

    fn writes(&self) -> bool {
        self.can.write
    }

    fn read(&self, path: &Path) -> Result<String, EditorError> {
        let answer = self.call("fs/read_text_file", json!({"path": self.shown(path)}))?;
        match answer.get("content").and_then(Value::as_str) {
            Some(content) => Ok(content.to_string()),
            None => Err(EditorError::Malformed("to fs/read_text_file has no content")),
        }
    }

    fn write(&self, path: &Path, content: &str) -> Result<(), EditorError> {
        let exact = Wait { timeout: FILE_TIMEOUT, cancellable: true, exact: true };
        self.call_for(
            "fs/write_text_file",
            json!({"path": self.shown(path), "content": content}),
            exact,
        )
        .map(|_| ())
    }
}
