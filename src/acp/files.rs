//! The client's editor as the file tools see it: `fs/read_text_file` and `fs/write_text_file`
//! when the client said it has them (`clientCapabilities.fs`), asked through the session's
//! connection and waited for like any of zero's requests.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{json, Value};

use super::wire::{CallError, Peer};
use crate::tools::editor::{Editor, EditorError};

/// How long the editor has to read or write a file.
const FILE_TIMEOUT: Duration = Duration::from_secs(60);

/// What the client said it can do with files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileCapabilities {
    pub read: bool,
    pub write: bool,
}

impl FileCapabilities {
    /// `clientCapabilities.fs` of `initialize`.
    pub fn of(initialize: &Value) -> FileCapabilities {
        let fs = &initialize["clientCapabilities"]["fs"];
        FileCapabilities {
            read: fs["readTextFile"].as_bool() == Some(true),
            write: fs["writeTextFile"].as_bool() == Some(true),
        }
    }
}

/// One session's editor.
pub struct ClientEditor {
    peer: Arc<Peer>,
    can: FileCapabilities,
    /// Known once the session is opened (the tools run only after).
    pub session_id: OnceLock<String>,
}

impl std::fmt::Debug for ClientEditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClientEditor({:?})", self.can)
    }
}

impl ClientEditor {
    pub fn new(peer: Arc<Peer>, can: FileCapabilities) -> ClientEditor {
        ClientEditor { peer, can, session_id: OnceLock::new() }
    }

    fn call(&self, method: &str, mut params: Value) -> Result<Value, EditorError> {
        let session = self.session_id.get().cloned().unwrap_or_default();
        params["sessionId"] = json!(session);
        self.peer.call(method, params, FILE_TIMEOUT, true).map_err(|e| match e {
            CallError::Refused(e) => EditorError::Refused(format!("{} ({})", e.message, e.code)),
            CallError::TimedOut => EditorError::TimedOut,
            CallError::Cancelled => EditorError::Cancelled,
            CallError::Gone => EditorError::Gone,
        })
    }
}

impl Editor for ClientEditor {
    fn reads(&self) -> bool {
        self.can.read
    }

    fn writes(&self) -> bool {
        self.can.write
    }

    fn read(&self, path: &Path) -> Result<String, EditorError> {
        let answer = self.call("fs/read_text_file", json!({"path": path}))?;
        match answer.get("content").and_then(Value::as_str) {
            Some(content) => Ok(content.to_string()),
            None => Err(EditorError::Malformed("to fs/read_text_file has no content")),
        }
    }

    fn write(&self, path: &Path, content: &str) -> Result<(), EditorError> {
        self.call("fs/write_text_file", json!({"path": path, "content": content})).map(|_| ())
    }
}
