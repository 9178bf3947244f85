//! Everything zero writes during a run goes through the [`Emitter`]: each event is built once
//! as an [`Event`] (with every string redacted, A6) and rendered into the run's output format
//! (SPEC B 1.5, B 9, A3; see `views`), with one `write_all` plus `flush` per line the moment it
//! exists (A4).
//!
//! Answer text is redacted as a stream: a delta is written at once unless its tail could still
//! grow into a secret, and that tail is released when the next delta decides it, when the
//! turn ends, or before a tool call.
#![forbid(unsafe_code)]

mod views;

pub use views::call_summary;

use std::cell::Cell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::error::{Failure, OutputClosed};
use crate::events::{Event, Legacy, ListedTool, RunDetails, RunStatus, Status};
use crate::models::Usage;
use crate::redact::{Redactor, TextStream};
use crate::text::cap_utf8;

/// `output` of a `tool_result` event is capped at this many bytes (A9).
pub const TOOL_OUTPUT_EVENT_CAP: usize = 32 * 1024;

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

/// What `run_start` says about the run (not yet redacted).
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    pub session_id: Option<String>,
    pub cwd: String,
    pub provider: String,
    pub model: String,
    pub api_model: String,
    pub details: RunDetails,
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
    /// The line being written, and the event serialised on its own (see `views`).
    line: Vec<u8>,
    event: Vec<u8>,
    scratch: String,
    /// Text mode: the current turn's text, held until the turn shows what it is (the answer
    /// goes to stdout, the text of a turn that calls tools to stderr as narration).
    turn_text: String,
    /// Text mode: the current turn made a tool call, so its text is narration.
    narrating: bool,
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
            event: Vec::with_capacity(1024),
            scratch: String::new(),
            turn_text: String::new(),
            narrating: false,
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

    /// Writes one event in the run's format; nothing once the run has ended.
    fn emit(&mut self, event: &Event<'_>) -> Result<(), OutputClosed> {
        if self.ended() {
            // The interrupt or panic handler ended the run while the main thread still worked.
            return Ok(());
        }
        match self.format {
            Format::StreamJson => {
                views::stream_json(&mut self.line, &mut self.event, &self.run_id, event);
                write_all(&mut self.out, &self.line)
            }
            Format::Json => match views::legacy(event) {
                Some(line) => self.write_legacy(&line),
                None => Ok(()),
            },
            Format::Text => self.text_view(event),
        }
    }

    fn write_legacy(&mut self, line: &Legacy<'_>) -> Result<(), OutputClosed> {
        views::legacy_line(&mut self.line, line);
        write_all(&mut self.out, &self.line)
    }

    /// Text mode: only the final answer on stdout, so `ANSWER=$(zero exec ...)` captures it;
    /// everything else is a row on stderr (see `views::text_row`).
    fn text_view(&mut self, event: &Event<'_>) -> Result<(), OutputClosed> {
        match event {
            Event::Text { delta, .. } => {
                // Bounded: a turn's text is at most `provider::MAX_TURN_TEXT`.
                self.turn_text.push_str(delta);
                Ok(())
            }
            Event::ToolCall { .. } => {
                self.narrate();
                self.narrating = true;
                self.text_row(event);
                Ok(())
            }
            Event::Final { text, .. } => {
                self.turn_text.clear();
                let mut answer = terminal_safe(text, false).into_owned();
                if !answer.ends_with('\n') {
                    answer.push('\n');
                }
                write_all(&mut self.out, answer.as_bytes())
            }
            Event::Error { .. } => {
                // A turn that did not finish gave no answer: its text is narration too.
                self.narrate();
                self.text_row(event);
                Ok(())
            }
            _ => {
                self.text_row(event);
                Ok(())
            }
        }
    }

    /// Text mode: the held text of a turn that called tools, as `[model]` rows on stderr.
    fn narrate(&mut self) {
        let text = std::mem::take(&mut self.turn_text);
        for line in text.lines().map(str::trim_end).filter(|l| !l.is_empty()) {
            self.stderr(&format!("[model] {line}"));
        }
    }

    fn text_row(&mut self, event: &Event<'_>) {
        if let Some(row) = views::text_row(event) {
            self.stderr(&row);
        }
    }

    pub fn run_start(&mut self, info: &RunInfo) -> Result<(), OutputClosed> {
        let r = |s: &str| self.redactor.redact_str(s);
        let all = |list: &[String]| list.iter().map(|s| r(s)).collect::<Vec<_>>();
        let d = &info.details;
        let details = RunDetails {
            model_label: r(&d.model_label),
            model_profile: d.model_profile.as_deref().map(r),
            autonomy: r(&d.autonomy),
            permission_mode: r(&d.permission_mode),
            reasoning_effort: d.reasoning_effort.as_deref().map(r),
            enabled_tools: all(&d.enabled_tools),
            disabled_tools: all(&d.disabled_tools),
        };
        let session_id = info.session_id.as_deref().map(r);
        let (cwd, provider, model, api_model) =
            (r(&info.cwd), r(&info.provider), r(&info.model), r(&info.api_model));
        self.emit(&Event::RunStart {
            session_id: session_id.as_deref(),
            cwd: &cwd,
            provider: &provider,
            model: &model,
            api_model: &api_model,
            details: &details,
        })
    }

    pub fn warning(&mut self, message: &str) -> Result<(), OutputClosed> {
        self.end_text()?;
        let message = self.redactor.redact_str(message);
        self.emit(&Event::Warning { message: &message })
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

    /// The end of a model turn: held text is released. In text mode, the text of a turn that
    /// called tools is written as narration; a turn without calls holds the answer.
    pub fn end_turn(&mut self) -> Result<(), OutputClosed> {
        self.end_text()?;
        if std::mem::take(&mut self.narrating) {
            self.narrate();
        }
        Ok(())
    }

    /// Text the stream redactor released (so already redacted).
    fn write_text(&mut self, text: &str) -> Result<(), OutputClosed> {
        if text.is_empty() || self.ended() {
            return Ok(());
        }
        if self.panic_on_text {
            panic!("ZERO_DEBUG_PANIC=emitter: a panic inside the emitter");
        }
        self.emit(&Event::Text { delta: text })
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
        // Arguments that are not JSON are shown as the text the model wrote; either way they
        // are redacted decoded (see `Redactor::redact_json_text`).
        let args = match serde_json::from_str::<Value>(arguments) {
            Ok(value) => self.redactor.redact_value(&value),
            Err(_) => Value::String(self.redactor.redact_json_text(arguments)),
        };
        let text = self.redactor.redact_json_text(arguments);
        // Redacted before it is fitted to the protocol's id rule, which may cut it.
        let raw_id = self.redactor.redact_str(id);
        let name = self.redactor.redact_str(name);
        let side_effect = self.redactor.redact_str(side_effect);
        self.emit(&Event::ToolCall {
            id: &wire_id(&raw_id),
            name: &name,
            args: &args,
            side_effect: &side_effect,
            arguments: &text,
            raw_id: &raw_id,
        })
    }

    /// The result of a tool call; `output` is capped for the event (A9).
    pub fn tool_result(
        &mut self,
        id: &str,
        ok: bool,
        output: &str,
        exit_code: Option<i32>,
    ) -> Result<(), OutputClosed> {
        self.end_text()?;
        // Redacted whole, then cut: a cut first could leave a secret's prefix, too short to
        // be recognised.
        let redacted = self.redactor.redact_str(output);
        let (shown, truncated) = cap_utf8(&redacted, TOOL_OUTPUT_EVENT_CAP);
        let raw_id = self.redactor.redact_str(id);
        self.emit(&Event::ToolResult {
            id: &wire_id(&raw_id),
            status: if ok { Status::Ok } else { Status::Error },
            output: shown,
            truncated,
            raw_id: &raw_id,
            exit_code,
        })
    }

    /// Token counts (and cost, when the model's prices are known) of one provider call.
    pub fn usage(&mut self, usage: &Usage, cost: Option<f64>) -> Result<(), OutputClosed> {
        self.emit(&Event::Usage {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            total_tokens: usage.total(),
            // Costs are rounded to a millionth of a cent.
            cost_usd: cost.map(|c| (c * 1e8).round() / 1e8),
        })
    }

    /// The final answer and the success ending.
    pub fn success(&mut self, answer: &str) -> Result<(), OutputClosed> {
        self.end_text()?;
        let answer = self.redactor.redact_str(answer);
        self.emit(&Event::Final { text: &answer })?;
        self.emit(&Event::RunEnd { status: RunStatus::Success, exit_code: 0 })?;
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
        let message = self.redactor.redact_str(&failure.message());
        if let (Failure::Crash(_), false) = (failure, self.format == Format::Text) {
            // A bug is also reported on stderr in the JSON formats, for whoever reads logs.
            self.stderr(&format!("[zero] {message}"));
        }
        self.emit(&Event::Error {
            code: failure.code(),
            message: &message,
            recoverable: failure.recoverable(),
        })?;
        self.emit(&Event::RunEnd { status: RunStatus::Error, exit_code: failure.exit_code() })?;
        self.mark_ended();
        Ok(())
    }

    /// `--list-tools` (B 1.7).
    pub fn tool_list(
        &mut self,
        mode: &str,
        tools: &[ListedTool<'_>],
        info: &RunInfo,
        warnings: &[String],
    ) -> Result<(), OutputClosed> {
        let mut listing = format!("Tools visible to model ({mode}):\n");
        for t in tools.iter().filter(|t| t.enabled) {
            listing.push_str(&format!(
                "  {:<14} {:<16} {} - {}\n",
                t.name, t.side_effect, t.permission, t.reason
            ));
        }
        // Tools the autonomy level holds back; those the user filtered out are left out.
        let held_back = |t: &&ListedTool| {
            !t.enabled && t.withheld.as_deref().is_some_and(|w| w.starts_with("needs"))
        };
        if tools.iter().any(|t| held_back(&t)) {
            listing.push_str("Not offered at this autonomy level:\n");
        }
        for t in tools.iter().filter(held_back) {
            let why = t.withheld.as_deref().unwrap_or_default();
            listing.push_str(&format!("  {:<14} {:<16} {why}\n", t.name, t.side_effect));
        }
        if self.format != Format::StreamJson {
            for warning in warnings {
                self.warning(warning)?;
            }
        }
        match self.format {
            Format::Text => write_all(&mut self.out, listing.as_bytes())?,
            Format::StreamJson => {
                self.run_start(info)?;
                for warning in warnings {
                    self.warning(warning)?;
                }
                self.emit(&Event::Final { text: &listing })?;
                self.emit(&Event::RunEnd { status: RunStatus::Success, exit_code: 0 })?;
            }
            Format::Json => {
                let mode = self.redactor.redact_str(mode);
                self.write_legacy(&Legacy::ToolList { permission_mode: &mode, tools })?;
                self.write_legacy(&Legacy::Done { exit_code: 0 })?;
            }
        }
        self.mark_ended();
        Ok(())
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

#[cfg(test)]
mod tests;
