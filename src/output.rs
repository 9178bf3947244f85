//! Everything zero writes during a run goes through the [`Emitter`]: the three output formats
//! (SPEC B 1.5, B 9, A3), redaction of every string (A6), and one `write_all` plus `flush` per
//! line the moment an event exists (A4).
//!
//! Answer text is redacted as a stream: a delta is written at once unless its tail could still
//! grow into a secret, and that tail is released when the next delta decides it, when the
//! turn ends, or before a tool call.
#![forbid(unsafe_code)]

use std::cell::Cell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::error::{Failure, OutputClosed};
use crate::models::Usage;
use crate::redact::{Redactor, TextStream};
use crate::text::{cap_utf8, cut_chars};

/// `output` of a `tool_result` event is capped at this many bytes (A9).
pub const TOOL_OUTPUT_EVENT_CAP: usize = 32 * 1024;
/// `[result]` rows in text mode are cut at this many characters.
const RESULT_ROW_CHARS: usize = 200;
/// A tool name in a text-mode `[tool]` row is cut at this many characters.
const TOOL_NAME_ROW_CHARS: usize = 100;

/// `-o` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    StreamJson,
}

impl Format {
    /// `text`, `json` or `stream-json`, trimmed, any case.
    pub fn parse(value: &str) -> Option<Format> {
        match value.trim().to_ascii_lowercase().as_str() {
            "text" => Some(Format::Text),
            "json" => Some(Format::Json),
            "stream-json" => Some(Format::StreamJson),
            _ => None,
        }
    }
}

/// What `run_start` says about the run.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    pub session_id: Option<String>,
    pub cwd: String,
    pub provider: String,
    pub model: String,
    pub api_model: String,
    pub model_label: String,
    pub model_profile: Option<String>,
    pub autonomy: String,
    pub permission_mode: String,
    pub reasoning_effort: Option<String>,
    pub enabled_tools: Vec<String>,
    pub disabled_tools: Vec<String>,
}

/// A tool as listed by `--list-tools`.
#[derive(Debug, Clone)]
pub struct ToolRow {
    pub name: &'static str,
    pub side_effect: &'static str,
    pub permission: &'static str,
    pub reason: &'static str,
}

/// The emitter, shared with the interrupt and panic handlers so they can end the stream.
pub type Shared = Arc<Mutex<Emitter>>;

thread_local! {
    /// This thread holds the emitter's lock (so a panic here cannot take it again).
    static HOLDING: Cell<bool> = const { Cell::new(false) };
}

/// The locked emitter.
pub struct Held<'a> {
    guard: MutexGuard<'a, Emitter>,
}

impl std::ops::Deref for Held<'_> {
    type Target = Emitter;
    fn deref(&self) -> &Emitter {
        &self.guard
    }
}

impl std::ops::DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut Emitter {
        &mut self.guard
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        HOLDING.with(|h| h.set(false));
    }
}

/// Locks the shared emitter; a poisoned lock (a panic while writing) is still usable, since
/// every write is a whole line.
pub fn lock(shared: &Shared) -> Held<'_> {
    let guard = shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    HOLDING.with(|h| h.set(true));
    Held { guard }
}

/// Whether the calling thread holds the emitter's lock right now.
pub fn held_by_this_thread() -> bool {
    HOLDING.with(Cell::get)
}

/// Writes a run's output.
pub struct Emitter {
    format: Format,
    run_id: String,
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
    redactor: Redactor,
    text: TextStream,
    line: Vec<u8>,
    scratch: String,
    /// Text-mode stdout received answer text, and whether it ended with a newline.
    streamed: bool,
    at_line_start: bool,
    /// A turn ended: text-mode output of the next turn starts on a new line.
    turn_break: bool,
    /// The terminal line was written: nothing more may follow. Shared with the fallback
    /// ending of a panic inside the emitter (`ending`).
    ended: Arc<AtomicBool>,
    /// A failpoint for the tests (debug builds only set it): panic while writing text.
    panic_on_text: bool,
}

impl Emitter {
    pub fn new(
        format: Format,
        run_id: String,
        out: Box<dyn Write + Send>,
        err: Box<dyn Write + Send>,
        redactor: Redactor,
    ) -> Emitter {
        Emitter {
            format,
            run_id,
            out,
            err,
            redactor,
            text: TextStream::default(),
            line: Vec::with_capacity(1024),
            scratch: String::new(),
            streamed: false,
            at_line_start: true,
            turn_break: false,
            ended: Arc::new(AtomicBool::new(false)),
            panic_on_text: false,
        }
    }

    /// The emitter failpoint (see `exec`).
    pub fn panic_on_next_text(&mut self) {
        self.panic_on_text = cfg!(debug_assertions);
    }

    pub fn format(&self) -> Format {
        self.format
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Set once the terminal line is written.
    pub fn ended_flag(&self) -> Arc<AtomicBool> {
        self.ended.clone()
    }

    fn ended(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
    }

    fn mark_ended(&mut self) {
        self.ended.store(true, Ordering::SeqCst);
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Registers one secret value explicitly named by the user (`--redact-env`), which may be
    /// shorter than the automatic minimum.
    pub fn add_secret_min(&mut self, value: &str, min: usize) {
        self.redactor.add_secrets_min([value.to_string()], min);
    }

    pub fn run_start(&mut self, info: &RunInfo) -> Result<(), OutputClosed> {
        match self.format {
            Format::Text => Ok(()),
            Format::StreamJson => {
                let mut l = self.begin("run_start");
                if let Some(id) = &info.session_id {
                    l.str("sessionId", id);
                }
                l.str("cwd", &info.cwd).str("provider", &info.provider).str("model", &info.model);
                l.str("apiModel", &info.api_model);
                self.finish_line()
            }
            Format::Json => {
                let mut l = self.begin_legacy("run_start");
                l.str("cwd", &info.cwd).str("provider", &info.provider).str("model", &info.model);
                if let Some(profile) = &info.model_profile {
                    l.str("model_profile", profile);
                }
                l.str("model_label", &info.model_label).str("api_model", &info.api_model);
                l.str("autonomy", &info.autonomy).str("permission_mode", &info.permission_mode);
                if let Some(effort) = &info.reasoning_effort {
                    l.str("reasoning_effort", effort);
                }
                if !info.enabled_tools.is_empty() {
                    l.strings("enabled_tools", &info.enabled_tools);
                }
                if !info.disabled_tools.is_empty() {
                    l.strings("disabled_tools", &info.disabled_tools);
                }
                l.str("output_format", "json");
                if let Some(id) = &info.session_id {
                    l.str("session_id", id);
                }
                self.finish_line()
            }
        }
    }

    pub fn warning(&mut self, message: &str) -> Result<(), OutputClosed> {
        self.end_text()?;
        match self.format {
            Format::Text => {
                let message = self.redactor.redact_str(message);
                self.stderr(&format!("[zero] WARNING: {message}"));
                Ok(())
            }
            Format::StreamJson => {
                self.begin("warning").str("message", message);
                self.finish_line()
            }
            Format::Json => {
                self.begin_legacy("warning").str("message", message);
                self.finish_line()
            }
        }
    }

    /// Answer text as it streams.
    pub fn text(&mut self, delta: &str) -> Result<(), OutputClosed> {
        let mut released = std::mem::take(&mut self.scratch);
        released.clear();
        self.text.push(&self.redactor, delta, &mut released);
        let result = self.write_text(&released);
        self.scratch = released;
        result
    }

    /// Releases text held back by the stream redactor: at the end of a turn and before any
    /// event that must follow the text.
    pub fn end_text(&mut self) -> Result<(), OutputClosed> {
        let mut released = std::mem::take(&mut self.scratch);
        released.clear();
        self.text.finish(&self.redactor, &mut released);
        let result = self.write_text(&released);
        self.scratch = released;
        result
    }

    /// The end of a model turn: held text is released, and in text mode the next turn's
    /// text will start on a line of its own.
    pub fn end_turn(&mut self) -> Result<(), OutputClosed> {
        self.end_text()?;
        self.turn_break = self.streamed;
        Ok(())
    }

    fn write_text(&mut self, text: &str) -> Result<(), OutputClosed> {
        if text.is_empty() || self.ended() {
            return Ok(());
        }
        if self.panic_on_text {
            panic!("ZERO_DEBUG_PANIC=emitter: a panic inside the emitter");
        }
        match self.format {
            Format::Text => {
                if std::mem::take(&mut self.turn_break) && !self.at_line_start {
                    write_all(&mut self.out, b"\n")?;
                }
                self.streamed = true;
                self.at_line_start = text.ends_with('\n');
                write_all(&mut self.out, terminal_safe(text, false).as_bytes())
            }
            Format::StreamJson => {
                self.begin("text").raw_str("delta", text);
                self.finish_line()
            }
            Format::Json => {
                self.begin_legacy("text").raw_str("delta", text);
                self.finish_line()
            }
        }
    }

    /// A complete tool call.
    pub fn tool_call(
        &mut self,
        id: &str,
        name: &str,
        arguments: &str,
        side_effect: &str,
    ) -> Result<(), OutputClosed> {
        self.end_text()?;
        match self.format {
            Format::Text => {
                let name = cut_chars(&self.redactor.redact_str(name), TOOL_NAME_ROW_CHARS);
                self.stderr(&format!("[tool] {name}"));
                Ok(())
            }
            Format::StreamJson => {
                // Arguments that are not JSON are shown as the text the model wrote.
                let args = match serde_json::from_str::<Value>(arguments) {
                    Ok(value) => self.redactor.redact_value(&value),
                    Err(_) => Value::String(self.redactor.redact_json_text(arguments)),
                };
                let id = self.redactor.redact_str(id);
                let mut l = self.begin("tool_call");
                l.raw_str("id", &wire_id(&id)).str("name", name);
                l.value("args", &args);
                l.str("sideEffect", side_effect);
                self.finish_line()
            }
            Format::Json => {
                let arguments = self.redactor.redact_json_text(arguments);
                let mut l = self.begin_legacy("tool_call");
                l.str("id", id).str("name", name).raw_str("arguments", &arguments);
                self.finish_line()
            }
        }
    }

    /// The result of a tool call; `output` is capped for the event (A9).
    pub fn tool_result(&mut self, id: &str, ok: bool, output: &str) -> Result<(), OutputClosed> {
        self.end_text()?;
        let status = if ok { "ok" } else { "error" };
        // Redacted whole, then cut: a cut first could leave a secret's prefix, too short to
        // be recognised.
        let redacted = if self.format == Format::Text {
            String::new()
        } else {
            self.redactor.redact_str(output)
        };
        let (shown, truncated) = cap_utf8(&redacted, TOOL_OUTPUT_EVENT_CAP);
        match self.format {
            Format::Text => {
                let summary = crate::text::one_line(&self.redactor.redact_str(output));
                self.stderr(&format!("[result] {}", cut_chars(&summary, RESULT_ROW_CHARS)));
                Ok(())
            }
            Format::StreamJson => {
                let id = self.redactor.redact_str(id);
                let mut l = self.begin("tool_result");
                l.raw_str("id", &wire_id(&id)).raw("status", status).raw_str("output", shown);
                l.bool("truncated", truncated);
                self.finish_line()
            }
            Format::Json => {
                let mut l = self.begin_legacy("tool_result");
                l.str("tool_call_id", id).raw("status", status).raw_str("result", shown);
                l.bool("truncated", truncated);
                self.finish_line()
            }
        }
    }

    /// Token counts (and cost, when the model's prices are known) of one provider call.
    pub fn usage(&mut self, usage: &Usage, cost: Option<f64>) -> Result<(), OutputClosed> {
        match self.format {
            Format::Text => Ok(()),
            Format::StreamJson => {
                let mut l = self.begin("usage");
                l.num("promptTokens", usage.prompt_tokens);
                l.num("completionTokens", usage.completion_tokens);
                l.num("totalTokens", usage.total());
                if let Some(cost) = cost {
                    l.float("costUsd", cost);
                }
                self.finish_line()
            }
            Format::Json => {
                let mut l = self.begin_legacy("usage");
                l.num("prompt_tokens", usage.prompt_tokens);
                l.num("completion_tokens", usage.completion_tokens);
                l.num("total_tokens", usage.total());
                if let Some(cost) = cost {
                    l.float("cost_usd", cost);
                }
                self.finish_line()
            }
        }
    }

    /// The final answer and the success ending.
    pub fn success(&mut self, answer: &str) -> Result<(), OutputClosed> {
        self.end_text()?;
        let answer = self.redactor.redact_str(answer);
        match self.format {
            Format::Text => {
                if !self.streamed && !answer.is_empty() {
                    self.streamed = true;
                    self.at_line_start = answer.ends_with('\n');
                    write_all(&mut self.out, terminal_safe(&answer, false).as_bytes())?;
                }
                self.close_text_line()?;
            }
            Format::StreamJson => {
                self.begin("final").raw_str("text", &answer);
                self.finish_line()?;
                self.begin("run_end").raw("status", "success").num("exitCode", 0);
                self.finish_line()?;
            }
            Format::Json => {
                self.begin_legacy("final").raw_str("text", &answer);
                self.finish_line()?;
                self.begin_legacy("done").num("exit_code", 0);
                self.finish_line()?;
            }
        }
        self.mark_ended();
        Ok(())
    }

    /// The failure ending: `error` (and `run_end` in stream-json). Does nothing if the run has
    /// already ended.
    pub fn failure(&mut self, failure: &Failure) -> Result<(), OutputClosed> {
        if self.ended() {
            return Ok(());
        }
        self.end_text()?;
        let message = failure.message();
        match self.format {
            Format::Text => {
                self.close_text_line()?;
                let message = self.redactor.redact_str(&message);
                self.stderr(&format!("[zero] {message}"));
            }
            Format::StreamJson => {
                self.crash_row(failure);
                let mut l = self.begin("error");
                l.raw("code", failure.code()).str("message", &message);
                l.bool("recoverable", failure.recoverable());
                self.finish_line()?;
                self.begin("run_end")
                    .raw("status", "error")
                    .num("exitCode", failure.exit_code().into());
                self.finish_line()?;
            }
            Format::Json => {
                self.crash_row(failure);
                self.begin_legacy("error").raw("code", failure.code()).str("message", &message);
                self.finish_line()?;
            }
        }
        self.mark_ended();
        Ok(())
    }

    /// `--list-tools` (B 1.7).
    pub fn tool_list(
        &mut self,
        mode: &str,
        tools: &[ToolRow],
        info: &RunInfo,
    ) -> Result<(), OutputClosed> {
        let mut listing = format!("Tools visible to model ({mode}):\n");
        for t in tools {
            listing.push_str(&format!(
                "  {:<14} {:<16} {} - {}\n",
                t.name, t.side_effect, t.permission, t.reason
            ));
        }
        match self.format {
            Format::Text => {
                write_all(&mut self.out, listing.as_bytes())?;
            }
            Format::StreamJson => {
                self.run_start(info)?;
                self.begin("final").raw_str("text", &listing);
                self.finish_line()?;
                self.begin("run_end").raw("status", "success").num("exitCode", 0);
                self.finish_line()?;
            }
            Format::Json => {
                let rows: Vec<Value> = tools
                    .iter()
                    .map(|t| {
                        serde_json::json!({"name": t.name, "side_effect": t.side_effect,
                            "permission": t.permission, "reason": t.reason})
                    })
                    .collect();
                let mut l = self.begin_legacy("tool_list");
                l.str("permission_mode", mode).value("tools", &Value::Array(rows));
                self.finish_line()?;
                self.begin_legacy("done").num("exit_code", 0);
                self.finish_line()?;
            }
        }
        self.mark_ended();
        Ok(())
    }

    /// Text mode: the answer on stdout ends with a newline.
    fn close_text_line(&mut self) -> Result<(), OutputClosed> {
        if self.format == Format::Text && self.streamed && !self.at_line_start {
            self.at_line_start = true;
            write_all(&mut self.out, b"\n")?;
        }
        Ok(())
    }

    /// A stream-json line: `{"schemaVersion":1,"type":...,"runId":...`.
    fn begin(&mut self, kind: &str) -> Line<'_> {
        self.line.clear();
        self.line.extend_from_slice(b"{\"schemaVersion\":1,\"type\":\"");
        self.line.extend_from_slice(kind.as_bytes());
        self.line.extend_from_slice(b"\"");
        let mut line = Line { buf: &mut self.line, redactor: &self.redactor };
        // Run ids are made by zero and hold nothing to redact.
        line.raw_str("runId", &self.run_id);
        line
    }

    /// A legacy json line: `{"type":...`.
    fn begin_legacy(&mut self, kind: &str) -> Line<'_> {
        self.line.clear();
        self.line.extend_from_slice(b"{\"type\":\"");
        self.line.extend_from_slice(kind.as_bytes());
        self.line.extend_from_slice(b"\"");
        Line { buf: &mut self.line, redactor: &self.redactor }
    }

    fn finish_line(&mut self) -> Result<(), OutputClosed> {
        self.line.extend_from_slice(b"}\n");
        if self.ended() {
            // After the terminal line nothing may follow: the interrupt or panic handler ended
            // the run while the main thread was still working.
            return Ok(());
        }
        write_all(&mut self.out, &self.line)
    }

    /// A bug is also reported on stderr in the JSON formats, for whoever reads the logs.
    fn crash_row(&mut self, failure: &Failure) {
        if let Failure::Crash(_) = failure {
            let message = self.redactor.redact_str(&failure.message());
            self.stderr(&format!("[zero] {message}"));
        }
    }

    /// A stderr row: one line, control characters shown escaped, nothing after the end. A
    /// closed stderr is ignored (A4).
    fn stderr(&mut self, row: &str) {
        if self.ended() {
            return;
        }
        let row = terminal_safe(row, true);
        let mut bytes = Vec::with_capacity(row.len() + 1);
        bytes.extend_from_slice(row.as_bytes());
        bytes.push(b'\n');
        let _ = self.err.write_all(&bytes).and_then(|()| self.err.flush());
    }
}

fn write_all(out: &mut Box<dyn Write + Send>, bytes: &[u8]) -> Result<(), OutputClosed> {
    out.write_all(bytes).and_then(|()| out.flush()).map_err(|_| OutputClosed)
}

/// Text for a terminal: C0 and C1 control characters (escape sequences, OSC 52 clipboard
/// writes, screen clears, carriage returns) are shown escaped, so model text and tool output
/// cannot drive the terminal or forge rows. Newlines are kept unless `one_line`; tabs are kept.
pub fn terminal_safe(text: &str, one_line: bool) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\t' && (one_line || c != '\n');
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !unsafe_char(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A tool-call id as the protocol allows it (1 to 128 of `[A-Za-z0-9._:-]`, starting with a
/// letter or digit). Provider ids nearly always are; any other is mapped, the same way for the
/// call and its result, so the two still pair up.
pub fn wire_id(id: &str) -> std::borrow::Cow<'_, str> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-');
    let valid = (1..=128).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_alphanumeric())
        && id.chars().all(allowed);
    if valid {
        return std::borrow::Cow::Borrowed(id);
    }
    let mut out: String = id.chars().map(|c| if allowed(c) { c } else { '_' }).collect();
    if !out.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        out.insert_str(0, "id");
    }
    if out.len() > 128 {
        // Keep the ids of long, similar ids apart with a checksum of the whole.
        let sum = id.bytes().fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(b.into()));
        out.truncate(119);
        out.push_str(&format!("-{sum:08x}"));
    }
    std::borrow::Cow::Owned(out)
}

/// Appends `,"key":value` pairs to a line; every string value is redacted.
struct Line<'a> {
    buf: &'a mut Vec<u8>,
    redactor: &'a Redactor,
}

impl Line<'_> {
    fn key(&mut self, key: &str) {
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    /// A string, redacted.
    fn str(&mut self, key: &str, value: &str) -> &mut Self {
        let value = self.redactor.redact_str(value);
        self.raw_str(key, &value)
    }

    /// A string that is already redacted (answer text) or fixed by zero (a status).
    fn raw_str(&mut self, key: &str, value: &str) -> &mut Self {
        self.key(key);
        // Writing to a Vec cannot fail, and a &str always serialises.
        let _ = serde_json::to_writer(&mut *self.buf, value);
        self
    }

    fn raw(&mut self, key: &str, value: &'static str) -> &mut Self {
        self.raw_str(key, value)
    }

    fn strings(&mut self, key: &str, values: &[String]) -> &mut Self {
        let values: Vec<Value> =
            values.iter().map(|v| Value::String(self.redactor.redact_str(v))).collect();
        self.key(key);
        let _ = serde_json::to_writer(&mut *self.buf, &values);
        self
    }

    /// A JSON value that is already redacted.
    fn value(&mut self, key: &str, value: &Value) -> &mut Self {
        self.key(key);
        let _ = serde_json::to_writer(&mut *self.buf, value);
        self
    }

    fn num(&mut self, key: &str, value: u64) -> &mut Self {
        self.key(key);
        self.buf.extend_from_slice(value.to_string().as_bytes());
        self
    }

    fn float(&mut self, key: &str, value: f64) -> &mut Self {
        self.key(key);
        // Costs are rounded to a millionth of a cent; non-finite values cannot occur.
        let rounded = (value * 1e8).round() / 1e8;
        let _ = serde_json::to_writer(&mut *self.buf, &rounded);
        self
    }

    fn bool(&mut self, key: &str, value: bool) -> &mut Self {
        self.key(key);
        self.buf.extend_from_slice(if value { b"true" } else { b"false" });
        self
    }
}

#[cfg(test)]
mod tests;
