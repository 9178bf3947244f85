//! Sessions: every run's history on disk, so a later run can resume or fork it with the real
//! conversation.
//!
//! Layout: `<root>/<id>/metadata.json` (pretty JSON, replaced atomically by temp file and
//! rename) and `<root>/<id>/events.jsonl` (one compact JSON event per line, each appended with
//! a single write). An advisory lock on `<id>/lock` keeps two runs from appending to one
//! session at once; the kernel drops it with the process that held it. A torn last line (a run
//! killed mid-write) is skipped with a warning. Everything stored passes the redactor.
//!
//! Every file is reached through a handle of its session's directory, one name at a time and
//! never through a symbolic link (`sys::dirfd`): a session directory, `events.jsonl` or
//! `metadata.json` that is a link, or not a directory or regular file, is refused with a
//! message naming it, before anything is read or written.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::clock::{random_base36, Utc};
use crate::config::Env;
use crate::conversation::{Message, ToolCall};
use crate::error::Failure;
use crate::protocol::events::SideEffect;
use crate::provider::models::Usage;
use crate::redact::Redactor;
use crate::sys::dirfd::{self, Dir};

/// How long a run waits for another run's lock on the same session.
const LOCK_WAIT: Duration = Duration::from_secs(2);
/// Tool output kept in a session event.
const STORED_OUTPUT_CAP: usize = 64 * 1024;
/// metadata.json is read up to this size (zero writes well under a kilobyte).
const MAX_METADATA: u64 = 1024 * 1024;

mod history;

#[cfg(test)]
pub use history::{conversation, parse_events};
pub use history::{trim_to_budget, EventReader, History};

/// A session store problem; selection problems are usage errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionError {
    Usage(String),
    /// A session's directory or file is a symbolic link or not what it should be: nothing
    /// is read or written through it.
    Refused(String),
    Io(String),
}

crate::error::message_error!(SessionError: Usage, Refused, Io);

impl SessionError {
    pub fn message(&self) -> &str {
        let (SessionError::Usage(m) | SessionError::Refused(m) | SessionError::Io(m)) = self;
        m
    }
}

impl From<SessionError> for Failure {
    fn from(err: SessionError) -> Failure {
        match err {
            SessionError::Usage(m) | SessionError::Refused(m) => Failure::Usage(m),
            SessionError::Io(m) => Failure::Crash(m),
        }
    }
}

fn io(context: &str, err: std::io::Error) -> SessionError {
    SessionError::Io(format!("{context}: {err}"))
}

/// metadata.json; fields in this order, absent ones omitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    pub session_id: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub parent_session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub forked_from_event_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub forked_from_sequence: Option<u64>,
    pub created_at: String,
    pub updated_at: String,
    pub event_count: u64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub last_event_type: Option<String>,
    /// sha256 of the `--output-schema` of the last run that gave one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output_schema_sha256: Option<String>,
}

/// One line of events.jsonl.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub id: String,
    pub session_id: String,
    pub sequence: u64,
    #[serde(rename = "type")]
    pub kind: Kind,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub payload: Option<Value>,
}

/// What one stored event is (its `type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Message,
    ToolCall,
    ToolResult,
    ProviderUsage,
    Error,
    PermissionRequest,
    PermissionDecision,
    TurnEnd,
    /// The first event of a fork: where it came from.
    SessionFork,
    /// A kind this version does not write (an older or newer zero did): kept as it was.
    Other(String),
}

impl Kind {
    const KNOWN: [Kind; 9] = [
        Kind::Message,
        Kind::ToolCall,
        Kind::ToolResult,
        Kind::ProviderUsage,
        Kind::Error,
        Kind::PermissionRequest,
        Kind::PermissionDecision,
        Kind::TurnEnd,
        Kind::SessionFork,
    ];

    pub fn name(&self) -> &str {
        match self {
            Kind::Message => "message",
            Kind::ToolCall => "tool_call",
            Kind::ToolResult => "tool_result",
            Kind::ProviderUsage => "provider_usage",
            Kind::Error => "error",
            Kind::PermissionRequest => "permission_request",
            Kind::PermissionDecision => "permission_decision",
            Kind::TurnEnd => "turn_end",
            Kind::SessionFork => "session_fork",
            Kind::Other(name) => name,
        }
    }

    pub fn parse(name: &str) -> Kind {
        Kind::KNOWN
            .into_iter()
            .find(|k| k.name() == name)
            .unwrap_or_else(|| Kind::Other(name.to_string()))
    }
}

impl Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
        String::deserialize(d).map(|name| Kind::parse(&name))
    }
}

/// What a new session is about.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    pub title: String,
    pub cwd: String,
    pub model_id: String,
    pub provider: String,
}

/// `^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`
pub fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id.len() <= 128
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The shape of a generated id: `zero_<14 digits>_<suffix>`.
pub fn looks_generated(id: &str) -> bool {
    let Some(rest) = id.strip_prefix("zero_") else { return false };
    let Some((stamp, suffix)) = rest.split_once('_') else { return false };
    stamp.len() == 14
        && stamp.bytes().all(|b| b.is_ascii_digit())
        && !suffix.is_empty()
        && suffix.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The time of a session write: ISO 8601 with milliseconds, strictly increasing within the
/// process, so that "the latest session" follows the order of writes even within one
/// millisecond.
fn stamp() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut last = LAST.load(Ordering::Relaxed);
    let millis = loop {
        let next = now.max(last + 1);
        match LAST.compare_exchange(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break next,
            Err(seen) => last = seen,
        }
    };
    Utc::at(std::time::UNIX_EPOCH + Duration::from_millis(millis)).iso()
}

/// Session title: whitespace collapsed, at most 80 characters.
pub fn title_of(prompt: &str) -> String {
    let collapsed = crate::text::one_line(prompt);
    let title: String = collapsed.chars().take(80).collect();
    if title.is_empty() {
        "Zero exec session".to_string()
    } else {
        title
    }
}

/// The directory of all sessions.
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// `$XDG_DATA_HOME/zero/sessions`, else `$HOME/.local/share/zero/sessions`.
    pub fn locate(env: &Env) -> Result<Store, SessionError> {
        let root = match (env.get("XDG_DATA_HOME"), env.get("HOME")) {
            (Some(data), _) => Path::new(data).join("zero").join("sessions"),
            (None, Some(home)) => Path::new(home).join(".local/share/zero/sessions"),
            (None, None) => {
                return Err(SessionError::Io(
                    "cannot find the session directory: neither XDG_DATA_HOME nor HOME is set"
                        .to_string(),
                ))
            }
        };
        Ok(Store { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self, id: &str) -> PathBuf {
        self.root.join(id)
    }

    /// The session's directory, opened without following a link.
    fn handle(&self, id: &str) -> Result<Dir, SessionError> {
        if !valid_id(id) {
            return Err(SessionError::Usage(format!("Invalid Zero session id: {id}")));
        }
        let root = Dir::open(&self.root).map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => {
                SessionError::Usage(format!("Zero session not found: {id}"))
            }
            _ => io(&format!("cannot read {}", self.root.display()), err),
        })?;
        root.open_dir(OsStr::new(id)).map_err(|err| match err.raw_os_error() {
            _ if err.kind() == std::io::ErrorKind::NotFound => {
                SessionError::Usage(format!("Zero session not found: {id}"))
            }
            Some(dirfd::ELOOP | dirfd::ENOTDIR) => SessionError::Refused(format!(
                "Zero session {id} is refused: {} is a symbolic link or not a directory",
                self.dir(id).display()
            )),
            _ => io(&format!("cannot read {}", self.dir(id).display()), err),
        })
    }

    /// Whether a session with this id exists.
    pub fn exists(&self, id: &str) -> bool {
        valid_id(id) && self.dir(id).join("metadata.json").is_file()
    }

    pub fn metadata(&self, id: &str) -> Result<Metadata, SessionError> {
        let dir = self.handle(id)?;
        let path = self.dir(id).join("metadata.json");
        let file =
            match regular(&dir, "metadata.json", &path, dir.open_read(OsStr::new("metadata.json")))
            {
                Ok(file) => file,
                Err(Opened::Missing) => {
                    return Err(SessionError::Usage(format!("Zero session not found: {id}")))
                }
                Err(Opened::Refused(why)) => {
                    return Err(SessionError::Refused(format!(
                        "Zero session {id} is refused: {why}"
                    )))
                }
                Err(Opened::Failed(err)) => {
                    return Err(io(&format!("cannot read {}", path.display()), err))
                }
            };
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file.take(MAX_METADATA + 1), &mut text)
            .map_err(|err| io(&format!("cannot read {}", path.display()), err))?;
        serde_json::from_str(&text).map_err(|err| {
            SessionError::Usage(format!("Invalid metadata in Zero session {id}: {err}"))
        })
    }

    /// Every session, most recently updated first (ties by id).
    pub fn list(&self) -> Result<Vec<Metadata>, SessionError> {
        let entries = match fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(io(&format!("cannot read {}", self.root.display()), err)),
        };
        let mut out = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if valid_id(&name) && entry.path().join("metadata.json").is_file() {
                // A session whose metadata cannot be read is skipped, not fatal for the list.
                if let Ok(meta) = self.metadata(&name) {
                    out.push(meta);
                }
            }
        }
        out.sort_by(|a, b| {
            b.updated_at.cmp(&a.updated_at).then_with(|| a.session_id.cmp(&b.session_id))
        });
        Ok(out)
    }

    /// Reads a session's events one at a time; lines that are not events are skipped and
    /// reported in the reader's warnings. An `events.jsonl` that is a link or not a regular
    /// file is refused, naming it.
    pub fn reader(&self, id: &str) -> Result<EventReader<Box<dyn std::io::BufRead>>, SessionError> {
        let dir = self.handle(id)?;
        let path = self.dir(id).join("events.jsonl");
        let opened = dir.open_read(OsStr::new("events.jsonl"));
        let source: Box<dyn std::io::BufRead> = match regular(&dir, "events.jsonl", &path, opened) {
            Ok(file) => Box::new(std::io::BufReader::with_capacity(256 * 1024, file)),
            Err(Opened::Missing) => Box::new(std::io::empty()),
            Err(Opened::Refused(why)) => {
                return Err(SessionError::Refused(format!("Zero session {id} is refused: {why}")))
            }
            Err(Opened::Failed(err)) => {
                return Err(io(&format!("cannot read {}", path.display()), err))
            }
        };
        Ok(EventReader::new(id, source))
    }

    /// Every event of a session at once, with the warnings for the lines skipped (for the
    /// tests; the commands and resumes read with [`Store::reader`]).
    #[cfg(test)]
    pub fn events(&self, id: &str) -> Result<(Vec<Event>, Vec<String>), SessionError> {
        let mut reader = self.reader(id)?;
        let mut events = Vec::new();
        while let Some(event) = reader.next_event()? {
            events.push(event);
        }
        Ok((events, reader.warnings()))
    }

    /// The conversation of a session, kept to about `budget` tokens while it is read, and
    /// the warnings for the lines skipped.
    pub fn history(
        &self,
        id: &str,
        budget: u64,
    ) -> Result<(Vec<Message>, Vec<String>), SessionError> {
        let mut reader = self.reader(id)?;
        let mut history = History::new(budget);
        while let Some(event) = reader.next_event()? {
            history.push(&event);
        }
        Ok((history.finish(), reader.warnings()))
    }

    /// This workspace's sessions (metadata `cwd` equal to `cwd`, as it was stored: redacted),
    /// most recently updated first.
    pub fn list_for(&self, cwd: &str, redactor: &Redactor) -> Result<Vec<Metadata>, SessionError> {
        let stored = redactor.redact_str(cwd);
        let mut list = self.list()?;
        list.retain(|m| m.cwd.as_deref() == Some(stored.as_str()));
        Ok(list)
    }

    /// Deletes a session. A session that a run holds is refused, not waited for.
    pub fn delete(&self, id: &str) -> Result<(), SessionError> {
        if !valid_id(id) {
            return Err(SessionError::Usage(format!("Invalid Zero session id: {id}")));
        }
        let dir = self.dir(id);
        // A session entry that is a symbolic link: the link goes, nothing is read, written or
        // removed where it points.
        if fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return fs::remove_file(&dir)
                .map_err(|e| io(&format!("cannot delete {}", dir.display()), e));
        }
        self.metadata(id)?;
        // Held while the files go, so no run can open the session halfway through.
        let _lock = Lock::acquire(&self.handle(id)?, &dir, id, Duration::ZERO)?;
        // `remove_dir_all` removes a symlink itself, never what it points to.
        fs::remove_dir_all(&dir).map_err(|e| io(&format!("cannot delete {}", dir.display()), e))
    }

    /// Creates a new session.
    pub fn create(&self, new: &NewSession, redactor: &Redactor) -> Result<Session, SessionError> {
        let id = format!("zero_{}_{}", Utc::now().compact(), random_base36(8));
        self.create_with_id(&id, new, redactor)
    }

    fn create_with_id(
        &self,
        id: &str,
        new: &NewSession,
        redactor: &Redactor,
    ) -> Result<Session, SessionError> {
        fs::create_dir_all(&self.root)
            .map_err(|e| io(&format!("cannot create {}", self.root.display()), e))?;
        let path = self.dir(id);
        let root = Dir::open(&self.root)
            .map_err(|e| io(&format!("cannot open {}", self.root.display()), e))?;
        match root.mkdir(OsStr::new(id), 0o700) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(SessionError::Usage(format!("Zero session already exists: {id}")))
            }
            Err(err) => return Err(io(&format!("cannot create {}", path.display()), err)),
        }
        let dir = self.handle(id)?;
        let now = stamp();
        let text = |s: &str| Some(redactor.redact_str(s)).filter(|s| !s.is_empty());
        let meta = Metadata {
            session_id: id.to_string(),
            title: text(&new.title),
            cwd: text(&new.cwd),
            model_id: text(&new.model_id),
            provider: text(&new.provider),
            parent_session_id: None,
            forked_from_event_id: None,
            forked_from_sequence: None,
            created_at: now.clone(),
            updated_at: now,
            event_count: 0,
            last_event_type: None,
            output_schema_sha256: None,
        };
        let lock = Lock::acquire(&dir, &path, id, LOCK_WAIT)?;
        write_metadata(&dir, &path, &meta)?;
        let events = open_events(&dir, &path, id)?;
        Ok(Session {
            dir,
            path,
            meta,
            events,
            redactor: redactor.clone(),
            _lock: lock,
            failed: None,
            reported: false,
            ended: false,
        })
    }

    /// Opens an existing session to append to it (resume), with the warnings of what it
    /// found. Everything is read again once the lock is held: a run that held it may have
    /// appended meanwhile. A torn last line (a run killed mid-write) is cut off first, so the
    /// appends start on a line of their own. A session that cannot be written is refused here,
    /// before anything runs.
    pub fn open(
        &self,
        id: &str,
        redactor: &Redactor,
    ) -> Result<(Session, Vec<String>), SessionError> {
        self.metadata(id)?;
        let path = self.dir(id);
        let dir = self.handle(id)?;
        let lock = Lock::acquire(&dir, &path, id, LOCK_WAIT)?;
        let mut meta = self.metadata(id)?;
        let unwritable = |what: &str, err: std::io::Error| {
            SessionError::Usage(format!("Zero session {id} cannot be written: {what}: {err}"))
        };
        let mut events = open_events(&dir, &path, id)?;
        let events_path = path.join("events.jsonl");
        let (last, warnings) = repair_tail(id, &mut events)
            .map_err(|e| unwritable(&events_path.display().to_string(), e))?;
        // Counted again from the file: metadata may lag behind a run that was killed.
        let last = match last {
            Some(sequence) => Some(sequence),
            // The last line is no event: the highest sequence of the lines that are.
            None => {
                let mut reader = self.reader(id)?;
                let mut highest = None;
                while let Some(event) = reader.next_event()? {
                    highest = highest.max(Some(event.sequence));
                }
                highest
            }
        };
        meta.event_count = meta.event_count.max(last.unwrap_or(0));
        // Written now, so a directory that cannot be written is found before any model call.
        write_metadata(&dir, &path, &meta).map_err(|e| {
            SessionError::Usage(format!("Zero session {id} cannot be written: {}", e.message()))
        })?;
        let session = Session {
            dir,
            path,
            meta,
            events,
            redactor: redactor.clone(),
            _lock: lock,
            failed: None,
            reported: false,
            ended: false,
        };
        Ok((session, warnings))
    }

    /// Creates a fork of `parent`: its events copied one at a time, then a `session_fork`
    /// event. Returns the fork, the parent's conversation within `budget` tokens, and
    /// the warnings of the lines skipped.
    pub fn fork(
        &self,
        parent: &str,
        new: &NewSession,
        redactor: &Redactor,
        budget: u64,
    ) -> Result<(Session, Vec<Message>, Vec<String>), SessionError> {
        let parent_meta = self.metadata(parent)?;
        let mut reader = self.reader(parent)?;
        let mut session = self.create(new, redactor)?;
        session.meta.parent_session_id = Some(parent.to_string());
        let mut history = History::new(budget);
        let mut copied = 0u64;
        let mut last: Option<(String, u64)> = None;
        while let Some(event) = reader.next_event()? {
            history.push(&event);
            session.meta.forked_from_event_id = Some(event.id.clone());
            session.meta.forked_from_sequence = Some(event.sequence);
            session.append(event.kind, event.payload)?;
            last = Some((event.id, event.sequence));
            copied += 1;
        }
        session.append(
            Kind::SessionFork,
            Some(json!({
                "parentSessionId": parent,
                "parentEventCount": parent_meta.event_count,
                "copiedEventCount": copied,
                "forkedFromEventId": last.as_ref().map(|(id, _)| id.clone()),
                "forkedFromSequence": last.as_ref().map(|(_, n)| *n),
            })),
        )?;
        Ok((session, history.finish(), reader.warnings()))
    }
}

/// Makes the end of an events file end a line: a torn last line (no newline, not an event)
/// is cut off; a whole event that only lacks its newline gets one. Returns the sequence of
/// the last event when the last line is one (`None` when it is not, or the file is empty),
/// and a warning for bytes cut.
fn repair_tail(id: &str, file: &mut File) -> std::io::Result<(Option<u64>, Vec<String>)> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok((None, Vec::new()));
    }
    let ends_line = read_at(file, len - 1, 1)? == b"\n";
    let line_start = last_line_start(file, if ends_line { len - 1 } else { len })?;
    let tail = if len - line_start <= history::MAX_EVENT_LINE as u64 {
        read_at(file, line_start, (len - line_start) as usize)?
    } else {
        Vec::new()
    };
    match serde_json::from_slice::<Event>(&tail) {
        Ok(event) => {
            if !ends_line {
                file.write_all(b"\n")?;
            }
            Ok((Some(event.sequence), Vec::new()))
        }
        Err(_) if ends_line => Ok((None, Vec::new())),
        Err(_) => {
            file.set_len(line_start)?;
            let line = count_lines(file, line_start)? + 1;
            Ok((None, vec![format!(
                "Zero session {id}: cut off a truncated last event at line {line} (the run that wrote it was stopped mid-write)"
            )]))
        }
    }
}

/// `n` bytes of a file from `offset`.
fn read_at(file: &mut File, offset: u64, n: usize) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    let mut buf = vec![0u8; n];
    file.read_exact(&mut buf)?;
    Ok(buf)
}

/// Where the line holding byte `end - 1` starts: after the last newline before `end`, read
/// backwards in blocks (0 when there is none).
fn last_line_start(file: &mut File, end: u64) -> std::io::Result<u64> {
    const BLOCK: u64 = 64 * 1024;
    let mut upto = end;
    while upto > 0 {
        let from = upto.saturating_sub(BLOCK);
        let block = read_at(file, from, (upto - from) as usize)?;
        if let Some(at) = block.iter().rposition(|&b| b == b'\n') {
            return Ok(from + at as u64 + 1);
        }
        upto = from;
    }
    Ok(0)
}

/// The number of newlines in the first `upto` bytes of a file.
fn count_lines(file: &mut File, upto: u64) -> std::io::Result<u64> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(0))?;
    let mut left = upto;
    let mut lines = 0u64;
    let mut buf = vec![0u8; 256 * 1024];
    while left > 0 {
        let want = left.min(buf.len() as u64) as usize;
        let n = file.read(&mut buf[..want])?;
        if n == 0 {
            break;
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        left -= n as u64;
    }
    Ok(lines)
}

/// How a session's file could not be opened.
enum Opened {
    Missing,
    /// A link, or not a regular file: the message says which.
    Refused(String),
    Failed(std::io::Error),
}

/// What was opened, when it is a regular file (it was opened without following a link).
fn regular(
    dir: &Dir,
    name: &str,
    path: &Path,
    opened: std::io::Result<File>,
) -> Result<File, Opened> {
    let file = match opened {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(Opened::Missing),
        Err(err) => {
            // ELOOP: a link; ENXIO: a FIFO with no writer or reader.
            let kind = dir.metadata(OsStr::new(name)).map(|m| dirfd::Kind::of(&m));
            return Err(match kind {
                Ok(dirfd::Kind::Symlink) => {
                    Opened::Refused(format!("{} is a symbolic link", path.display()))
                }
                Ok(dirfd::Kind::File | dirfd::Kind::Dir) | Err(_) => Opened::Failed(err),
                Ok(_) => Opened::Refused(format!("{} is not a regular file", path.display())),
            });
        }
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => Ok(file),
        Ok(_) => Err(Opened::Refused(format!("{} is not a regular file", path.display()))),
        Err(err) => Err(Opened::Failed(err)),
    }
}

/// Opens (creating) `events.jsonl` for appending, refusing a link or anything but a regular
/// file.
fn open_events(dir: &Dir, session: &Path, id: &str) -> Result<File, SessionError> {
    let path = session.join("events.jsonl");
    let opened = dir.open_append(OsStr::new("events.jsonl"), true);
    regular(dir, "events.jsonl", &path, opened).map_err(|why| match why {
        Opened::Refused(why) => {
            SessionError::Refused(format!("Zero session {id} is refused: {why}"))
        }
        Opened::Missing => {
            io(&format!("cannot open {}", path.display()), std::io::ErrorKind::NotFound.into())
        }
        Opened::Failed(err) => SessionError::Usage(format!(
            "Zero session {id} cannot be written: {}: {err}",
            path.display()
        )),
    })
}

/// Replaces metadata.json atomically: a new temp file in the same directory (created, never
/// opened through a link), then rename.
fn write_metadata(dir: &Dir, session: &Path, meta: &Metadata) -> Result<(), SessionError> {
    let mut text =
        serde_json::to_string_pretty(meta).map_err(|e| SessionError::Io(e.to_string()))?;
    text.push('\n');
    let tmp = format!(".metadata.json.{}.{}.tmp", std::process::id(), random_base36(6));
    let target = session.join("metadata.json");
    let cannot = |e| io(&format!("cannot write {}", target.display()), e);
    let mut file = dir.create_new(OsStr::new(&tmp), 0o644).map_err(cannot)?;
    let written = file.write_all(text.as_bytes());
    drop(file);
    let renamed =
        written.and_then(|()| dir.rename(OsStr::new(&tmp), dir, OsStr::new("metadata.json")));
    if let Err(err) = renamed {
        let _ = dir.unlink(OsStr::new(&tmp));
        return Err(cannot(err));
    }
    Ok(())
}

/// The lock of a session being written: an advisory lock on `<session>/lock`. The kernel
/// releases it when the process ends, however it ends, so a dead run never holds a session
/// (and a reused pid, or zero running as PID 1 in a container, cannot look alive). The file
/// stays; it holds the pid of the last run that took it, for the message.
struct Lock {
    _file: File,
}

impl Lock {
    fn acquire(handle: &Dir, dir: &Path, id: &str, wait: Duration) -> Result<Lock, SessionError> {
        let path = dir.join("lock");
        let cannot = |detail: String| {
            SessionError::Usage(format!(
                "Zero session {id} cannot be locked ({}): {detail}",
                path.display()
            ))
        };
        let mut file = handle.open_lock(OsStr::new("lock")).map_err(|e| cannot(e.to_string()))?;
        let is_file = file.metadata().map(|m| m.is_file()).map_err(|e| cannot(e.to_string()))?;
        if !is_file {
            return Err(cannot("it is not a regular file".to_string()));
        }
        let deadline = Instant::now() + wait;
        loop {
            match crate::sys::dirfd::try_lock(&file) {
                Ok(true) => break,
                Ok(false) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Ok(false) => {
                    let mut holder = String::new();
                    let _ = std::io::Read::read_to_string(&mut (&file).take(64), &mut holder);
                    let holder = Some(holder);
                    let holder = holder.as_deref().map(str::trim).filter(|p| !p.is_empty());
                    let by = holder.map(|pid| format!(" (pid {pid})")).unwrap_or_default();
                    return Err(SessionError::Usage(format!(
                        "Zero session {id} is in use by another zero run{by}; try again when it ends"
                    )));
                }
                Err(e) => return Err(cannot(e.to_string())),
            }
        }
        // Informational only; a lock file that cannot be written still locks.
        let _ = file.set_len(0).and_then(|()| writeln!(file, "{}", std::process::id()));
        Ok(Lock { _file: file })
    }
}

/// A session open for appending.
pub struct Session {
    /// Its directory, held open: every write goes through it.
    dir: Dir,
    /// The directory's path, for messages.
    path: PathBuf,
    meta: Metadata,
    events: File,
    redactor: Redactor,
    _lock: Lock,
    /// The first write failure; later appends are skipped.
    failed: Option<String>,
    reported: bool,
    /// The process's ending recorded its last event: nothing may follow it (a thread still
    /// finishing a tool call would otherwise append after the ending).
    ended: bool,
}

impl Session {
    pub fn id(&self) -> &str {
        &self.meta.session_id
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Appends one event (redacted) with a single write, then replaces the metadata.
    pub fn append(&mut self, kind: Kind, payload: Option<Value>) -> Result<(), SessionError> {
        let sequence = self.meta.event_count + 1;
        let now = stamp();
        let event = Event {
            id: format!("{}:{sequence}", self.meta.session_id),
            session_id: self.meta.session_id.clone(),
            sequence,
            kind,
            created_at: now.clone(),
            payload: payload.map(|p| self.redactor.redact_value(p)),
        };
        let mut line = serde_json::to_vec(&event).map_err(|e| SessionError::Io(e.to_string()))?;
        line.push(b'\n');
        self.events.write_all(&line).map_err(|e| io("cannot append to the session", e))?;
        self.meta.event_count = sequence;
        self.meta.updated_at = now;
        self.meta.last_event_type = Some(event.kind.name().to_string());
        write_metadata(&self.dir, &self.path, &self.meta)
    }

    /// Keeps the digest of this run's output schema, or forgets an earlier run's when this
    /// one has none (written with the next event).
    pub fn set_output_schema(&mut self, digest: Option<String>) {
        self.meta.output_schema_sha256 = digest;
    }

    /// Names the session (written with the next event): a live session's title comes from
    /// its first turn, which arrives after the session exists.
    pub fn retitle(&mut self, title: String) {
        self.meta.title = Some(title);
    }

    /// Appends, keeping the first failure for one warning instead of failing the run.
    pub fn record(&mut self, kind: Kind, payload: Value) {
        if self.failed.is_some() || self.ended {
            return;
        }
        if let Err(err) = self.append(kind, Some(payload)) {
            self.failed = Some(err.message().to_string());
        }
    }

    /// The first write failure, if any, reported once.
    pub fn take_failure(&mut self) -> Option<String> {
        if self.reported {
            return None;
        }
        self.reported = self.failed.is_some();
        self.failed.clone()
    }

    /// The process ends: the event just recorded is the last.
    pub fn end(&mut self) {
        self.ended = true;
    }

    /// Flushes to disk at the end of a run.
    pub fn sync(&mut self) {
        let _ = self.events.sync_all();
        let _ = self.dir.sync();
    }
}

/// Payload of a `tool_call` event. Arguments are stored decoded (and so redacted decoded):
/// an escaped secret in the model's JSON text cannot reach the file.
/// A user message: its text, and what was attached (not the image bytes, see `images`).
pub fn user_payload(
    content: &str,
    images: &[crate::protocol::images::Image],
    source: &str,
) -> Value {
    let mut payload = serde_json::json!({"role": "user", "content": content, "source": source});
    if !images.is_empty() {
        let shown: Vec<Value> = images
            .iter()
            .map(|i| serde_json::json!({"mediaType": i.media_type, "bytes": i.bytes}))
            .collect();
        payload["images"] = Value::Array(shown);
    }
    payload
}

pub fn tool_call_payload(call: &ToolCall, side_effect: SideEffect, redactor: &Redactor) -> Value {
    let args = if call.arguments.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(&call.arguments)
            .unwrap_or_else(|_| Value::String(redactor.redact_json_text(&call.arguments)))
    };
    json!({"id": call.id, "name": call.name, "args": args, "sideEffect": side_effect})
}

/// Payload of an assistant `message` event, with the calls it made (their argument text
/// redacted as decoded JSON, see [`Redactor::redact_json_text`]) and the provider-native
/// content a resumed run sends back (reasoning items, thinking blocks; redacted on append
/// like everything else).
pub fn assistant_payload(
    text: &str,
    calls: &[ToolCall],
    native: &[Value],
    redactor: &Redactor,
) -> Value {
    let mut payload = json!({"role": "assistant", "content": text, "source": "exec"});
    if !calls.is_empty() {
        payload["toolCalls"] = calls
            .iter()
            .map(|c| {
                let arguments = redactor.redact_json_text(&c.arguments);
                json!({"id": c.id, "name": c.name, "arguments": arguments})
            })
            .collect();
    }
    if !native.is_empty() {
        payload["native"] = Value::Array(native.to_vec());
    }
    payload
}

/// Payload of a `tool_result` event. The output is redacted before it is cut, so a cut cannot
/// leave a secret's prefix too short to be recognised.
pub fn tool_result_payload(id: &str, ok: bool, output: &str, redactor: &Redactor) -> Value {
    let redacted = redactor.redact_str(output);
    let (kept, truncated) = crate::text::cap_utf8(&redacted, STORED_OUTPUT_CAP);
    json!({"id": id, "status": if ok { "ok" } else { "error" }, "output": kept, "truncated": truncated})
}

/// Payload of a `provider_usage` event.
pub fn usage_payload(usage: &Usage, cost: Option<f64>) -> Value {
    let mut payload = json!({
        "promptTokens": usage.prompt_tokens,
        "completionTokens": usage.completion_tokens,
        "totalTokens": usage.total(),
    });
    if let Some(cost) = cost {
        payload["costUsd"] = json!((cost * 1e8).round() / 1e8);
    }
    payload
}

#[cfg(test)]
mod tests;
