//! Reading a session back in bounded memory: its events one line at a time ([`EventReader`]),
//! and the conversation they hold ([`History`]), kept to the newest exchanges that fit a token
//! budget while it is read, so a session of any size resumes in about the memory of what is
//! sent.
//!
//! A line that is not a valid event (a run killed mid-write, a disk that lost a block) costs
//! only itself: it is skipped with a warning naming its line, and the rest is read.

use std::collections::VecDeque;
use std::io::{BufRead, Read};

use serde_json::Value;

use super::{Event, Kind, SessionError};
use crate::conversation::{Message, Role, ToolCall};

/// The longest event line read (a 16 MiB prompt, escaped, fits); a longer one is skipped.
pub const MAX_EVENT_LINE: usize = 48 * 1024 * 1024;
/// A line buffer larger than this is not kept from one line to the next.
const KEEP_LINE_BUFFER: usize = 1024 * 1024;
/// Warnings kept per read; the lines skipped past this are counted in one more.
const MAX_WARNINGS: usize = 10;

/// The events of one session, read one line at a time.
pub struct EventReader<R> {
    id: String,
    reader: R,
    /// The number of the last line read, from 1.
    number: usize,
    line: Vec<u8>,
    warnings: Vec<String>,
    unreported: usize,
}

impl<R: BufRead> EventReader<R> {
    pub fn new(id: &str, reader: R) -> EventReader<R> {
        EventReader {
            id: id.to_string(),
            reader,
            number: 0,
            line: Vec::new(),
            warnings: Vec::new(),
            unreported: 0,
        }
    }

    /// The next valid event, `None` at the end; lines that are not events are skipped (see
    /// [`EventReader::warnings`]).
    pub fn next_event(&mut self) -> Result<Option<Event>, SessionError> {
        loop {
            self.line.clear();
            let read = (&mut self.reader)
                .take(MAX_EVENT_LINE as u64 + 1)
                .read_until(b'\n', &mut self.line)
                .map_err(|e| {
                    SessionError::Io(format!("cannot read Zero session {}: {e}", self.id))
                })?;
            if read == 0 {
                return Ok(None);
            }
            self.number += 1;
            let ended = self.line.last() == Some(&b'\n');
            if !ended && self.line.len() > MAX_EVENT_LINE {
                self.skip_rest()?;
                self.warn(format!(
                    "skipped line {} of events.jsonl: it is longer than {} MiB",
                    self.number,
                    MAX_EVENT_LINE >> 20
                ));
                continue;
            }
            if self.line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parsed = serde_json::from_slice::<Event>(&self.line);
            // A large line's buffer is let go at once rather than kept for the next line: the
            // caller's copies of a big event then fit where the line was.
            if self.line.capacity() > KEEP_LINE_BUFFER {
                self.line = Vec::new();
            }
            match parsed {
                Ok(event) => return Ok(Some(event)),
                Err(_) if !ended => self.warn(format!(
                    "skipped a truncated last event at line {} (the run that wrote it was stopped mid-write)",
                    self.number
                )),
                Err(_) => self.warn(format!(
                    "skipped line {} of events.jsonl: it is not a valid event (only that line is lost)",
                    self.number
                )),
            }
        }
    }

    /// Reads past the rest of an over-long line.
    fn skip_rest(&mut self) -> Result<(), SessionError> {
        loop {
            let buf = self.reader.fill_buf().map_err(|e| {
                SessionError::Io(format!("cannot read Zero session {}: {e}", self.id))
            })?;
            if buf.is_empty() {
                return Ok(());
            }
            match buf.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    self.reader.consume(at + 1);
                    return Ok(());
                }
                None => {
                    let n = buf.len();
                    self.reader.consume(n);
                }
            }
        }
    }

    fn warn(&mut self, what: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(format!("Zero session {}: {what}", self.id));
        } else {
            self.unreported += 1;
        }
    }

    /// What was skipped so far, one message per line (the `torn_session` warnings).
    pub fn warnings(&self) -> Vec<String> {
        let mut all = self.warnings.clone();
        if self.unreported > 0 {
            all.push(format!(
                "Zero session {}: skipped {} more lines that are not valid events",
                self.id, self.unreported
            ));
        }
        all
    }
}

/// Every event of `bytes` (an events.jsonl file) and the warnings for the lines skipped.
#[cfg(test)]
pub fn parse_events(id: &str, bytes: &[u8]) -> (Vec<Event>, Vec<String>) {
    let mut reader = EventReader::new(id, bytes);
    let mut events = Vec::new();
    // Reading a slice cannot fail.
    while let Ok(Some(event)) = reader.next_event() {
        events.push(event);
    }
    (events, reader.warnings())
}

/// The conversation of a session as it is read: user prompts, assistant turns with their tool
/// calls, and tool results, in whole exchanges (a user message and what followed it). Once the
/// exchanges held are over the budget, the oldest go first (the newest one always stays), so
/// memory follows the budget, not the session's size.
pub struct History {
    /// Exchanges, oldest first, each with its estimated size in tokens.
    exchanges: VecDeque<(Vec<Message>, u64)>,
    total: u64,
    budget: u64,
    /// Calls of the last assistant turn that have no result yet.
    open: Vec<ToolCall>,
    /// The one exchange held is over the budget alone: its tool results are shortened.
    shortening: bool,
}

/// Tool results of an exchange that alone is over the budget are cut to this many bytes.
const SHORTENED_RESULT: usize = 8192;

/// About how many tokens a message costs (4 characters a token).
fn tokens_of(m: &Message) -> u64 {
    let calls: usize = m.tool_calls.iter().map(|c| c.arguments.len() + c.name.len()).sum();
    ((m.content.len() + calls) / 4 + 8) as u64
}

impl History {
    /// A history that keeps about `budget` tokens (`u64::MAX`: everything).
    pub fn new(budget: u64) -> History {
        History {
            exchanges: VecDeque::new(),
            total: 0,
            budget,
            open: Vec::new(),
            shortening: false,
        }
    }

    /// Adds one stored event.
    pub fn push(&mut self, event: &Event) {
        let Some(payload) = &event.payload else { return };
        let text = |k: &str| payload.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        match event.kind {
            Kind::Message => {
                self.close_open();
                match text("role").as_str() {
                    "user" => self.add(Message::user(with_image_note(
                        text("content"),
                        payload.get("images"),
                    ))),
                    "assistant" => {
                        let message = assistant_of(payload, text("content"));
                        self.open = message.tool_calls.clone();
                        // An assistant turn that said and called nothing answers nothing.
                        if !(message.content.is_empty() && message.tool_calls.is_empty()) {
                            self.add(message);
                        }
                    }
                    _ => {}
                }
            }
            Kind::ToolResult => {
                let id = text("id");
                if let Some(at) = self.open.iter().position(|c| c.id == id) {
                    let call = self.open.remove(at);
                    self.add(Message::tool_result(&call, text("output")));
                }
            }
            _ => {}
        }
    }

    /// Calls that never got a result (the run was stopped) get one saying so, since providers
    /// require every call answered.
    fn close_open(&mut self) {
        for call in std::mem::take(&mut self.open) {
            self.add(Message::tool_result(&call, "The run ended before this tool call finished."));
        }
    }

    fn add(&mut self, mut message: Message) {
        if message.role == Role::User || self.exchanges.is_empty() {
            self.exchanges.push_back((Vec::new(), 0));
            self.shortening = false;
        }
        if self.shortening {
            shorten(&mut message);
        }
        let size = tokens_of(&message);
        self.total += size;
        if let Some((messages, total)) = self.exchanges.back_mut() {
            messages.push(message);
            *total += size;
        }
        while self.total > self.budget && self.exchanges.len() > 1 {
            if let Some((_, size)) = self.exchanges.pop_front() {
                self.total -= size;
            }
        }
        if self.total > self.budget && !self.shortening {
            // One exchange alone is too big: shorten its tool results, now and from here on.
            self.shortening = true;
            if let Some((messages, total)) = self.exchanges.back_mut() {
                for m in messages.iter_mut() {
                    let before = tokens_of(m);
                    shorten(m);
                    let after = tokens_of(m);
                    *total -= before - after;
                    self.total -= before - after;
                }
            }
        }
    }

    /// The conversation kept, starting with a user message.
    pub fn finish(mut self) -> Vec<Message> {
        self.close_open();
        let mut kept: Vec<Message> = self.exchanges.into_iter().flat_map(|(m, _)| m).collect();
        while kept.first().is_some_and(|m| m.role != Role::User) {
            kept.remove(0);
        }
        kept
    }
}

/// A long tool result, cut to its head with a note.
fn shorten(m: &mut Message) {
    if m.role == Role::Tool && m.content.len() > SHORTENED_RESULT {
        let (head, _) = crate::text::cap_utf8(&m.content, SHORTENED_RESULT);
        m.content = format!("{head}\n[... shortened to fit the context window]");
    }
}

/// An assistant message event as a message, with its calls and the provider-native content to
/// send back.
fn assistant_of(payload: &Value, content: String) -> Message {
    let calls: Vec<ToolCall> = payload
        .get("toolCalls")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|c| {
                    Some(ToolCall {
                        id: c.get("id")?.as_str()?.to_string(),
                        name: c.get("name")?.as_str()?.to_string(),
                        arguments: c.get("arguments")?.as_str()?.to_string(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut message = Message::assistant(content, calls);
    // Signed or encrypted content that redaction changed would be refused by the provider;
    // it is left out (the model then reasons afresh).
    message.native = payload
        .get("native")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter(|item| !item.to_string().contains(crate::redact::REDACTED))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    message
}

/// A resumed user message that had images: the session kept what they were, not their bytes
/// (see `images`), so the model is told they were there.
fn with_image_note(content: String, images: Option<&Value>) -> String {
    let list = images.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if list.is_empty() {
        return content;
    }
    let shown: Vec<String> = list
        .iter()
        .map(|i| {
            let kind = i.get("mediaType").and_then(Value::as_str).unwrap_or("image");
            match i.get("bytes").and_then(Value::as_u64) {
                Some(n) => format!("{kind}, {n} bytes"),
                None => kind.to_string(),
            }
        })
        .collect();
    let noun = if list.len() == 1 { "An image was" } else { "Images were" };
    let note = format!(
        "[{noun} attached here ({}); the session does not keep image data.]",
        shown.join("; ")
    );
    if content.is_empty() {
        note
    } else {
        format!("{content}\n\n{note}")
    }
}

/// The whole conversation of a list of events (no budget).
#[cfg(test)]
pub fn conversation(events: &[Event]) -> Vec<Message> {
    let mut history = History::new(u64::MAX);
    for event in events {
        history.push(event);
    }
    history.finish()
}

/// Trims a conversation oldest-first to about `budget` tokens, in whole exchanges, so a call
/// is never separated from its result (what [`History`] does while it reads).
pub fn trim_to_budget(messages: Vec<Message>, budget: u64) -> Vec<Message> {
    let mut history = History::new(budget);
    for message in messages {
        history.add(message);
    }
    let mut kept: Vec<Message> = history.exchanges.into_iter().flat_map(|(m, _)| m).collect();
    while kept.first().is_some_and(|m| m.role != Role::User) {
        kept.remove(0);
    }
    kept
}
