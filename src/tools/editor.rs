//! The client's editor, when it has one (ACP's `fs/read_text_file` and `fs/write_text_file`):
//! the file tools read what the editor holds (unsaved changes too) and write through it, so
//! the editor tracks each change. The workspace's confinement is checked first, always: the
//! editor is asked only about paths the tools may use. And what each call changed, file by
//! file, for a client to show as a diff.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// A file's text before and after a call changed it (`old: None`: it was created).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: PathBuf,
    pub old: Option<String>,
    pub new: String,
}

/// Files larger than this are not shown as a diff (the call still changes them).
pub const MAX_DIFF_BYTES: usize = 1 << 20;

impl FileDiff {
    /// The diff of one file, unless either side is too large to show.
    pub fn of(path: PathBuf, old: Option<&str>, new: &str) -> Option<FileDiff> {
        let small = new.len() <= MAX_DIFF_BYTES && old.is_none_or(|o| o.len() <= MAX_DIFF_BYTES);
        small.then(|| FileDiff { path, old: old.map(str::to_string), new: new.to_string() })
    }
}

/// Why the editor could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorError {
    /// The editor answered with an error (its message).
    Refused(String),
    /// Its answer is not what the protocol says it gives.
    Malformed(&'static str),
    /// No answer in time.
    TimedOut,
    /// The turn was cancelled while the tool waited.
    Cancelled,
    /// The client is gone.
    Gone,
}

impl std::fmt::Display for EditorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditorError::Refused(message) => write!(f, "the editor answered: {message}"),
            EditorError::Malformed(what) => write!(f, "the editor's answer {what}"),
            EditorError::TimedOut => write!(f, "the editor did not answer in time"),
            EditorError::Cancelled => write!(f, "the turn was cancelled"),
            EditorError::Gone => write!(f, "the editor is gone"),
        }
    }
}

/// A client that reads and writes files for the tools.
pub trait Editor: Send + Sync + std::fmt::Debug {
    /// Whether the tools read through it (`fs.readTextFile`).
    fn reads(&self) -> bool;
    /// Whether the tools write through it (`fs.writeTextFile`).
    fn writes(&self) -> bool;
    /// The text of the file at `path` (absolute) as the editor has it.
    fn read(&self, path: &Path) -> Result<String, EditorError>;
    /// Writes `content` to the file at `path` (absolute), creating it if needed.
    fn write(&self, path: &Path, content: &str) -> Result<(), EditorError>;
    /// Whether `bash` runs in the client's terminal instead of zero's sandbox.
    fn runs_commands(&self) -> bool {
        false
    }
    /// Runs `command` with `/bin/sh -c` in a terminal of the client, in `cwd`, shown in tool
    /// call `call_id`; killed at `timeout` or when the turn is cancelled.
    fn run_command(&self, _run: &CommandRun<'_>) -> Result<TerminalRun, EditorError> {
        Err(EditorError::Malformed("has no terminal"))
    }
}

/// A command for the client's terminal.
pub struct CommandRun<'a> {
    pub call_id: &'a str,
    pub command: &'a str,
    pub cwd: &'a Path,
    pub timeout: Duration,
    /// The most output the client keeps (it drops the start of the rest).
    pub output_limit: usize,
}

/// How a command in the client's terminal ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalRun {
    pub terminal_id: String,
    /// stdout and stderr as the terminal shows them, together.
    pub output: String,
    pub truncated: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub timed_out: bool,
    pub interrupted: bool,
}
