//! Everything zero writes during a run goes through the [`Emitter`]: each event is built once
//! as an [`Event`] (with every string redacted) and rendered into the run's output format
//! (text, json or stream-json; see `views`), with one `write_all` plus `flush` per line the moment
//! it exists.
//!
//! Answer text is redacted as a stream: a delta is written at once unless its tail could still
//! grow into a secret, and that tail is released when the next delta decides it, when the
//! turn ends, or before a tool call.

mod handle;
mod views;

pub use handle::Output;
pub use views::call_summary;

use std::cell::Cell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::conversation::Answer;
use crate::error::{Exit, Failure, OutputClosed};
use crate::protocol::events::{
    Action, Autonomy, DecidedBy, ErrorCode, Event, Legacy, ListedTool, Permission, PermissionMode,
    Risk, RunDetails, RunStatus, SchemaVersion, SideEffect, Status, Totals, Warning,
};
use crate::provider::models::Usage;
use crate::redact::{Redactor, TextStream};
use crate::sys::threads::Named;
use crate::text::cap_utf8;

/// `output` of a `tool_result` event is capped at this many bytes.
pub const TOOL_OUTPUT_EVENT_CAP: usize = 32 * 1024;

/// `-o` values, and `zero acp`'s own: ACP `session/update` notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    StreamJson,
    /// One ACP session's updates (`zero acp`; never an `-o` value).
    Acp,
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

/// `--heartbeat-ms` when not given (schema 2 only).
pub const DEFAULT_HEARTBEAT_MS: u64 = 10_000;

/// What the wire carries that the fallback ending of a panic (`ending`) must continue: the
/// schema version, decided once the input is read, and the last `seq` written.
#[derive(Debug, Default)]
pub struct Wire {
    schema: AtomicU8,
    seq: AtomicU64,
}

impl Wire {
    pub fn schema(&self) -> SchemaVersion {
        match self.schema.load(Ordering::SeqCst) {
            2 => SchemaVersion::V2,
            _ => SchemaVersion::V1,
        }
    }

    /// The `seq` the next line gets (schema 2), taking it.
    pub fn take_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::SeqCst) + 1
    }

    fn next_seq(&self) -> u64 {
        self.seq.load(Ordering::SeqCst) + 1
    }
}

pub use crate::protocol::events::Phase;

/// A gated tool call, as the permission events describe it (not yet redacted).
#[derive(Debug, Clone)]
pub struct Gate<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub permission_mode: PermissionMode,
    pub autonomy: Autonomy,
    pub side_effect: SideEffect,
    /// Why approval is needed.
    pub reason: &'a str,
}

/// How a gated call was decided.
#[derive(Debug, Clone)]
pub struct Decision<'a> {
    pub action: Action,
    pub reason: &'a str,
    pub decided_by: DecidedBy,
}

impl Decision<'_> {
    /// `permissionGranted`: the call runs.
    pub fn granted(&self) -> bool {
        self.action == Action::Allow
    }
}

/// A finished tool call, as its `tool_result` reports it.
#[derive(Debug, Clone)]
pub struct Finished<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub ok: bool,
    pub output: &'a str,
    pub exit_code: Option<i32>,
    pub changed_files: &'a [String],
    /// The call was not run for want of permission.
    pub refused: Option<crate::tools::Refusal>,
    pub duration: Duration,
    /// An MCP tool's server and its own name for the tool (`meta.mcp`).
    pub mcp: Option<(&'a str, &'a str)>,
    /// How each file changed (ACP shows them as diffs).
    pub diffs: &'a [crate::tools::editor::FileDiff],
    /// The client's terminal the command ran in (ACP shows it in the call).
    pub terminal: Option<&'a str>,
}

/// A [`Gate`]'s strings, redacted.
struct RedactedGate {
    id: String,
    name: String,
    reason: String,
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
    /// The `AGENTS.md` files read (relative to the repository root; the user's with `~`).
    pub instructions: Vec<String>,
    /// The extra roots (`--add-dir`), absolute.
    pub add_dirs: Vec<String>,
    /// Bash's sandbox: `{mode, network, enforcement}`.
    pub sandbox: Option<Value>,
}

/// The emitter, shared with the heartbeat thread and the endings (held as [`Output`]).
type Shared = Arc<Mutex<Emitter>>;

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
fn lock(shared: &Shared) -> Held<'_> {
    Held::from_guard(shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

impl<'a> Held<'a> {
    fn from_guard(guard: MutexGuard<'a, Emitter>) -> Held<'a> {
        HOLDING.with(|h| h.set(true));
        Held { guard }
    }
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
    /// The schema version and the line count, shared with the fallback ending.
    wire: Arc<Wire>,
    /// Reasoning text, redacted as a stream like answer text (schema 2).
    reasoning: TextStream,
    /// Reasoning went into `reasoning` since it was last released.
    reasoning_held: bool,
    /// Text went into `text` since it was last released.
    text_held: bool,
    /// The schema version (the copy in `wire` is for the fallback ending).
    schema: SchemaVersion,
    /// Model calls so far and their summed usage (schema 2's `usage.call`, `cumulative`).
    calls: u64,
    totals: Totals,
    /// Heartbeats: the interval (0: none), when stdout was last written, and what the run is
    /// waiting for (no heartbeat without a phase).
    heartbeat: Duration,
    last_line: Instant,
    phase: Option<(Phase, Instant, Option<String>)>,
    /// `run_start.sessionId`, redacted, which the permission events repeat.
    session_id: Option<String>,
    /// ACP: what the updates need beyond the events.
    acp: AcpView,
}

/// What ACP updates say that zero's events do not: the workspace (locations are absolute),
/// the context window (`usage_update.size`), and whether the turn's last model call stopped
/// at its output limit (the prompt's `stopReason` is then `max_tokens`).
#[derive(Debug, Default)]
struct AcpView {
    cwd: std::path::PathBuf,
    /// The workspace resolved (links followed): paths under it are shown under `cwd`.
    root: std::path::PathBuf,
    window: u64,
    cut_short: bool,
    /// The `update_plan` calls of the model call waiting for their results: each one's id and
    /// arguments, shown as the plan once it succeeded.
    plans: Vec<(String, Value)>,
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
            wire: Arc::new(Wire { schema: AtomicU8::new(1), seq: AtomicU64::new(0) }),
            reasoning: TextStream::default(),
            reasoning_held: false,
            text_held: false,
            schema: SchemaVersion::V1,
            calls: 0,
            totals: Totals { cost_usd: Some(0.0), ..Totals::default() },
            heartbeat: Duration::ZERO,
            last_line: Instant::now(),
            phase: None,
            session_id: None,
            acp: AcpView::default(),
        }
    }

    /// ACP: the session's workspace (as the editor named it, and resolved) and context window.
    pub fn set_acp_view(&mut self, cwd: &std::path::Path, root: &std::path::Path, window: u64) {
        self.acp.cwd = cwd.to_path_buf();
        self.acp.root = root.to_path_buf();
        self.acp.window = window;
    }

    /// ACP: whether a model call stopped at its output limit since this was last asked.
    pub fn take_cut_short(&mut self) -> bool {
        std::mem::take(&mut self.acp.cut_short)
    }

    /// Whether the events carry their details (schema 2, and ACP's updates).
    fn detailed(&self) -> bool {
        self.schema2() || self.format == Format::Acp
    }

    /// Selects the schema version before the first line.
    pub fn set_schema(&mut self, version: SchemaVersion) {
        self.schema = version;
        self.wire.schema.store(version.number(), Ordering::SeqCst);
    }

    /// Whether this output carries schema 2's events.
    pub fn schema2(&self) -> bool {
        self.format == Format::StreamJson && self.schema == SchemaVersion::V2
    }

    /// Shared with the fallback ending.
    pub fn wire(&self) -> Arc<Wire> {
        self.wire.clone()
    }

    /// Heartbeats every `interval` of silence (schema 2 stream-json only; zero turns them off).
    pub fn set_heartbeat(&mut self, interval: Duration) {
        self.heartbeat = interval;
    }

    /// The heartbeat interval in effect, if heartbeats are written.
    pub fn heartbeat_interval(&self) -> Option<Duration> {
        (self.schema2() && !self.heartbeat.is_zero()).then_some(self.heartbeat)
    }

    /// What the run now waits for; `None` between phases (no heartbeats then). In ACP a tool
    /// call that starts to run is `in_progress`.
    pub fn set_phase(&mut self, phase: Option<Phase>, tool_call_id: Option<&str>) {
        self.phase = phase.map(|p| (p, Instant::now(), tool_call_id.map(|id| wire_id(id).into())));
        if let (Format::Acp, Some(Phase::Tool), Some(id)) = (self.format, phase, tool_call_id) {
            let id = wire_id(&self.redactor.redact_str(id)).into_owned();
            // A closed stdout is seen by the next event, which reports it.
            let _ = self.write_update(crate::acp::updates::started(&id));
        }
    }

    /// Writes a heartbeat if stdout has been silent for the interval while the run waits for
    /// something; returns how long until the next one could be due (`None` once ended).
    pub fn beat(&mut self, now: Instant) -> Option<Duration> {
        let interval = self.heartbeat_interval()?;
        if self.ended() {
            return None;
        }
        let silent = now.saturating_duration_since(self.last_line);
        if silent < interval {
            return Some(interval - silent);
        }
        // Without a phase the silence is the run's own (it writes next); look again later.
        let Some((phase, since, id)) = self.phase.clone() else { return Some(interval) };
        let elapsed = now.saturating_duration_since(since).as_millis() as u64;
        let id = id.map(|id| self.redactor.redact_str(&id));
        let event = Event::Heartbeat { phase, elapsed_ms: elapsed, tool_call_id: id.as_deref() };
        self.emit(&event).ok()?;
        Some(interval)
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
        match event {
            // A delta of one kind releases what the other kind held.
            Event::Text { .. } => self.end_reasoning()?,
            Event::Reasoning { .. } | Event::Heartbeat { .. } => {}
            // Every held byte of a model call comes before any other event: its tool calls,
            // its usage, a warning, a permission event, the answer, an error.
            _ => {
                self.end_text()?;
                self.end_reasoning()?;
            }
        }
        match self.format {
            Format::StreamJson => {
                let seq = (self.schema == SchemaVersion::V2).then(|| self.wire.take_seq());
                views::stream_json(&mut self.line, &mut self.event, &self.run_id, seq, event);
                if seq.is_some() && !self.heartbeat.is_zero() {
                    // Only heartbeats need to know when stdout was last written.
                    self.last_line = Instant::now();
                }
                write_all(&mut self.out, &self.line)
            }
            Format::Json => match views::legacy(event) {
                Some(line) => self.write_legacy(&line),
                None => Ok(()),
            },
            Format::Text => self.text_view(event),
            Format::Acp => self.acp_view(event),
        }
    }

    /// ACP: the updates an event gives; an accepted plan is shown after its call's result.
    fn acp_view(&mut self, event: &Event<'_>) -> Result<(), OutputClosed> {
        if let Event::ToolCall { id, name: "update_plan", args: Some(args), .. } = event {
            self.acp.plans.push((id.to_string(), (*args).clone()));
        }
        if let Some(update) = crate::acp::updates::updates(event, &self.acp.cwd, self.acp.window) {
            self.write_update(update)?;
        }
        let Event::ToolResult { id, status, .. } = event else { return Ok(()) };
        let Some(at) = self.acp.plans.iter().position(|(call, _)| call == id) else {
            return Ok(());
        };
        let (_, args) = self.acp.plans.remove(at);
        match crate::acp::updates::plan(&args).filter(|_| *status == Status::Ok) {
            Some(plan) => self.write_update(plan),
            None => Ok(()),
        }
    }

    /// ACP: one `session/update` of this session (nothing before the session has its id).
    fn write_update(&mut self, update: Value) -> Result<(), OutputClosed> {
        let Some(session_id) = &self.session_id else { return Ok(()) };
        let notification = crate::acp::updates::notification(session_id, update);
        self.write_value(&notification)
    }

    /// ACP: a message of the session's front-end (a response, a replayed update), redacted
    /// as a value with the session's secrets, as one line.
    pub fn acp_message(&mut self, message: &Value) -> Result<(), OutputClosed> {
        self.end_text()?;
        self.end_reasoning()?;
        let redacted = self.redactor.redact_value(message.clone());
        self.write_value(&redacted)
    }

    /// ACP: a JSON-RPC message, as one line (its strings already redacted).
    fn write_value(&mut self, value: &Value) -> Result<(), OutputClosed> {
        self.line.clear();
        // Writing a `Value` to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.line, value);
        self.line.push(b'\n');
        write_all(&mut self.out, &self.line)
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
            autonomy: d.autonomy,
            permission_mode: d.permission_mode,
            reasoning_effort: d.reasoning_effort.as_deref().map(r),
            enabled_tools: all(&d.enabled_tools),
            disabled_tools: all(&d.disabled_tools),
        };
        let session_id = info.session_id.as_deref().map(r);
        self.session_id = session_id.clone();
        let (cwd, provider, model, api_model) =
            (r(&info.cwd), r(&info.provider), r(&info.model), r(&info.api_model));
        let two = self.schema2();
        let heartbeat_ms = self.heartbeat.as_millis() as u64;
        let (instructions, add_dirs) = (all(&info.instructions), all(&info.add_dirs));
        self.emit(&Event::RunStart {
            session_id: session_id.as_deref(),
            cwd: &cwd,
            provider: &provider,
            model: &model,
            api_model: &api_model,
            permission_mode: two.then_some(details.permission_mode),
            autonomy: two.then_some(details.autonomy),
            heartbeat_ms: two.then_some(heartbeat_ms),
            instructions: (two && !instructions.is_empty()).then_some(&instructions),
            add_dirs: (two && !add_dirs.is_empty()).then_some(&add_dirs),
            sandbox: info.sandbox.as_ref().filter(|_| two),
            details: &details,
        })
    }

    pub fn warning(&mut self, warning: &Warning) -> Result<(), OutputClosed> {
        let message = self.redactor.redact_str(&warning.message);
        if self.format == Format::Acp {
            // ACP has no warnings: stderr is the agent's log.
            self.acp.cut_short |= warning.code == crate::protocol::events::WarningCode::OutputLimit;
            self.end_text()?;
            self.end_reasoning()?;
            self.stderr(&format!("[zero] warning: {message}"));
            return Ok(());
        }
        let code = self.schema2().then_some(warning.code);
        self.emit(&Event::Warning { message: &message, code })
    }

    /// Model reasoning as it streams: schema 2 writes it as `reasoning` deltas, never as text;
    /// the other outputs leave it out.
    pub fn reasoning(&mut self, delta: &str) -> Result<(), OutputClosed> {
        if !self.detailed() {
            return Ok(());
        }
        self.end_text()?;
        let mut released = String::new();
        self.reasoning.push(&self.redactor, delta, &mut released);
        self.reasoning_held = true;
        self.write_reasoning(&released)
    }

    /// Releases reasoning held back by the stream redactor (before every other event, so it
    /// costs nothing when there was no reasoning).
    fn end_reasoning(&mut self) -> Result<(), OutputClosed> {
        if !std::mem::take(&mut self.reasoning_held) {
            return Ok(());
        }
        let mut released = String::new();
        self.reasoning.finish(&self.redactor, &mut released);
        self.write_reasoning(&released)
    }

    fn write_reasoning(&mut self, text: &str) -> Result<(), OutputClosed> {
        if text.is_empty() {
            return Ok(());
        }
        self.emit(&Event::Reasoning { delta: text })
    }

    /// Answer text as it streams.
    pub fn text(&mut self, delta: &str) -> Result<(), OutputClosed> {
        self.stream_text(delta, false)
    }

    /// The last piece of a call's text: written at once with everything held before it.
    pub fn last_text(&mut self, delta: &str) -> Result<(), OutputClosed> {
        self.stream_text(delta, true)
    }

    /// Releases text held back by the stream redactor: at the end of a turn and before any
    /// event that must follow the text.
    pub fn end_text(&mut self) -> Result<(), OutputClosed> {
        if !self.text_held {
            return Ok(());
        }
        self.stream_text("", true)
    }

    /// Feeds `delta` to the stream redactor (releasing what it held when `last`) and writes
    /// what it decided.
    fn stream_text(&mut self, delta: &str, last: bool) -> Result<(), OutputClosed> {
        let mut released = std::mem::take(&mut self.scratch);
        released.clear();
        self.text.push(&self.redactor, delta, &mut released);
        if last {
            self.text.finish(&self.redactor, &mut released);
        }
        self.text_held = !last;
        let result = self.write_text(&released);
        self.scratch = released;
        result
    }

    /// The end of a model turn: held text is released. In text mode, the text of a turn that
    /// called tools is written as narration; a turn without calls holds the answer.
    /// A turn's text that turned out not to be the answer (`--output-schema` wants a call):
    /// in text mode it is narration, like the text of a turn that called tools.
    pub fn not_the_answer(&mut self) {
        self.narrate();
    }

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
        side_effect: SideEffect,
    ) -> Result<(), OutputClosed> {
        // Arguments that are not JSON are shown as the text the model wrote; either way they
        // are redacted decoded (see `Redactor::redact_json_text`).
        let args = match serde_json::from_str::<Value>(arguments) {
            Ok(value) => self.redactor.redact_value(value),
            Err(_) => Value::String(self.redactor.redact_json_text(arguments)),
        };
        // Schema 2 shows only an object; the tool_result then reports the argument error.
        let shown = (!self.schema2() || args.is_object()).then_some(&args);
        let text = self.redactor.redact_json_text(arguments);
        // Redacted before it is fitted to the protocol's id rule, which may cut it.
        let raw_id = self.redactor.redact_str(id);
        let name = self.redactor.redact_str(name);
        let side_effect = match side_effect {
            SideEffect::None if !self.schema2() => SideEffect::Read,
            other => other,
        };
        self.emit(&Event::ToolCall {
            id: &wire_id(&raw_id),
            name: &name,
            args: shown,
            side_effect,
            arguments: &text,
            raw_id: &raw_id,
        })
    }

    /// The result of a tool call; `output` is capped for the event.
    pub fn tool_result(&mut self, call: &Finished<'_>) -> Result<(), OutputClosed> {
        // Redacted whole, then cut: a cut first could leave a secret's prefix, too short to
        // be recognised.
        let redacted = self.redactor.redact_str(call.output);
        let changed = redacted != call.output;
        let (shown, truncated) = cap_utf8(&redacted, TOOL_OUTPUT_EVENT_CAP);
        let raw_id = self.redactor.redact_str(call.id);
        let two = self.detailed();
        let name = self.redactor.redact_str(call.name);
        let files: Vec<String> =
            call.changed_files.iter().map(|f| self.redactor.redact_str(f)).collect();
        let mut meta = serde_json::Map::new();
        if let Some(refusal) = call.refused {
            meta.insert("permission".into(), Value::String(refusal.name().into()));
        }
        if let Some((server, tool)) = call.mcp {
            let (server, tool) = (self.redactor.redact_str(server), self.redactor.redact_str(tool));
            meta.insert("mcp".into(), serde_json::json!({"server": server, "tool": tool}));
        }
        let event = Event::ToolResult {
            id: &wire_id(&raw_id),
            name: two.then_some(name.as_str()),
            status: if call.ok { Status::Ok } else { Status::Error },
            output: shown,
            truncated,
            redacted: (two && changed).then_some(true),
            changed_files: (two && !files.is_empty()).then_some(files.as_slice()),
            meta: (two && !meta.is_empty()).then_some(&meta),
            exit_code: call.exit_code.filter(|_| two),
            duration_ms: two.then_some(call.duration.as_millis() as u64),
            raw_id: &raw_id,
            command_exit: call.exit_code,
        };
        if self.format != Format::Acp || (call.diffs.is_empty() && call.terminal.is_none()) {
            return self.emit(&event);
        }
        self.end_text()?;
        self.end_reasoning()?;
        // An editor shows the command's terminal and each changed file as a diff, before the
        // tool's own words.
        let terminal = call
            .terminal
            .map(|id| serde_json::json!({"type": "terminal", "terminalId": self.redactor.redact_str(id)}));
        let diffs: Vec<Value> = terminal
            .into_iter()
            .chain(call.diffs.iter().map(|d| {
                let r = |s: &str| self.redactor.redact_str(s);
                let path = crate::acp::shown_path(&d.path, &self.acp.root, &self.acp.cwd);
                crate::acp::updates::diff(
                    &r(&path.to_string_lossy()),
                    d.old.as_deref().map(r).as_deref(),
                    &r(&d.new),
                )
            }))
            .collect();
        match crate::acp::updates::updates(&event, &self.acp.cwd, self.acp.window) {
            Some(update) => self.write_update(crate::acp::updates::with_diffs(update, diffs)),
            None => Ok(()),
        }
    }

    /// Schema 2: how one MCP server's start ended (the other outputs say it with a warning).
    pub fn mcp_server(&mut self, report: &crate::mcp::Report) -> Result<(), OutputClosed> {
        if !self.schema2() || self.format != Format::StreamJson {
            return Ok(());
        }
        let error = report.error.as_ref().map(|e| self.redactor.redact_str(e));
        let name = self.redactor.redact_str(&report.name);
        self.emit(&Event::McpServer {
            name: &name,
            status: if report.error.is_none() { "ready" } else { "failed" },
            transport: report.transport,
            tools: report.tools,
            protocol_version: report.protocol.as_deref(),
            error: error.as_deref(),
        })
    }

    /// A gated call's `permission_request` (schema 2; the other outputs show only the result).
    /// `ask` carries the request id and timeout when a client is asked.
    pub fn permission_request(
        &mut self,
        gate: &Gate<'_>,
        ask: Option<(&str, u64)>,
    ) -> Result<(), OutputClosed> {
        if let (Format::Acp, Some((request_id, _))) = (self.format, ask) {
            return self.request_permission(gate, request_id);
        }
        if !self.schema2() {
            return Ok(());
        }
        let g = self.redacted_gate(gate, gate.reason);
        let request_id = ask.map(|(id, _)| self.redactor.redact_str(id));
        let session_id = self.session_id.clone();
        self.emit(&Event::PermissionRequest {
            id: &wire_id(&g.id),
            name: &g.name,
            action: Permission::Prompt,
            permission: Permission::Prompt,
            permission_granted: false,
            permission_mode: gate.permission_mode,
            autonomy: gate.autonomy,
            side_effect: gate.side_effect,
            session_id: session_id.as_deref(),
            risk: Risk::of(gate.side_effect),
            reason: &g.reason,
            request_id: request_id.as_deref(),
            timeout_ms: ask.map(|(_, ms)| ms),
        })
    }

    /// ACP: the client is asked with `session/request_permission`, whose answer
    /// (`run::agent::Approvals::wait`) matches `request_id`.
    fn request_permission(
        &mut self,
        gate: &Gate<'_>,
        request_id: &str,
    ) -> Result<(), OutputClosed> {
        self.end_text()?;
        self.end_reasoning()?;
        let Some(session_id) = self.session_id.clone() else { return Ok(()) };
        let g = self.redacted_gate(gate, gate.reason);
        let id = crate::rpc::Id::Text(request_id.to_string());
        let request = crate::acp::permissions::request(&id, &session_id, &wire_id(&g.id), &g.name);
        self.write_value(&request)
    }

    /// How a gated call was decided (schema 2).
    pub fn permission_decision(
        &mut self,
        gate: &Gate<'_>,
        decision: &Decision<'_>,
    ) -> Result<(), OutputClosed> {
        if !self.schema2() {
            return Ok(());
        }
        let g = self.redacted_gate(gate, decision.reason);
        let session_id = self.session_id.clone();
        self.emit(&Event::PermissionDecision {
            id: &wire_id(&g.id),
            name: &g.name,
            action: decision.action,
            permission: Permission::Prompt,
            permission_granted: decision.granted(),
            permission_mode: gate.permission_mode,
            autonomy: gate.autonomy,
            side_effect: gate.side_effect,
            session_id: session_id.as_deref(),
            risk: Risk::of(gate.side_effect),
            decision_reason: &g.reason,
            decided_by: decision.decided_by,
        })
    }

    /// A gate's strings, redacted, with the reason the event gives.
    fn redacted_gate(&self, gate: &Gate<'_>, reason: &str) -> RedactedGate {
        let r = |s: &str| self.redactor.redact_str(s);
        RedactedGate { id: r(gate.id), name: r(gate.name), reason: r(reason) }
    }

    /// Token counts (and cost, when the model's prices are known) of one provider call.
    pub fn usage(&mut self, usage: &Usage, cost: Option<f64>) -> Result<(), OutputClosed> {
        // Costs are rounded to a millionth of a cent.
        let round = |c: f64| (c * 1e8).round() / 1e8;
        self.calls += 1;
        let t = &mut self.totals;
        t.prompt_tokens += usage.prompt_tokens;
        t.completion_tokens += usage.completion_tokens;
        t.total_tokens += usage.total();
        t.cost_usd = t.cost_usd.zip(cost).map(|(sum, c)| sum + c);
        let two = self.detailed();
        let cumulative = Totals { cost_usd: self.totals.cost_usd.map(round), ..self.totals };
        self.emit(&Event::Usage {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            total_tokens: usage.total(),
            cost_usd: cost.map(round),
            cache_read_tokens: (two && usage.cache_read_reported).then_some(usage.cached_tokens),
            cache_write_tokens: (two && usage.cache_write_reported)
                .then_some(usage.cache_write_tokens),
            call: two.then_some(self.calls),
            cumulative: two.then_some(cumulative),
        })
    }

    /// The final answer and the success ending.
    pub fn success(&mut self, answer: &Answer) -> Result<(), OutputClosed> {
        self.turn_answer(answer)?;
        self.run_end(RunStatus::Success, Exit::Success)
    }

    /// A turn's answer (`final`). A structured answer is redacted as a value, then written
    /// as compact JSON, so redaction cannot break its syntax.
    pub fn turn_answer(&mut self, answer: &Answer) -> Result<(), OutputClosed> {
        let Some(value) = &answer.structured else {
            let text = self.redactor.redact_str(&answer.text);
            return self.emit(&Event::Final { text: &text, structured: None });
        };
        let value = self.redactor.redact_value(value.clone());
        let text = value.to_string();
        let structured = (self.schema2() && !value.is_null()).then_some(&value);
        self.emit(&Event::Final { text: &text, structured })
    }

    /// Live mode: a turn that failed (`error`, without the run's end).
    pub fn turn_error(&mut self, failure: &Failure) -> Result<(), OutputClosed> {
        self.error_event(failure.code_v2(), &failure.message(), failure.recoverable())
    }

    /// Live mode: an input line that is wrong but does not end the process.
    pub fn input_error(&mut self, message: &str) -> Result<(), OutputClosed> {
        self.error_event(ErrorCode::Usage, message, false)
    }

    fn error_event(
        &mut self,
        code: ErrorCode,
        message: &str,
        recoverable: bool,
    ) -> Result<(), OutputClosed> {
        let message = self.redactor.redact_str(message);
        self.emit(&Event::Error { code, message: &message, recoverable })
    }

    /// Live mode: the end of user turn `turn`.
    pub fn turn_end(&mut self, turn: u64, status: RunStatus) -> Result<(), OutputClosed> {
        self.emit(&Event::TurnEnd { turn, status })
    }

    /// Live mode: the end of input ends the process with the last turn's status.
    pub fn live_end(&mut self, status: RunStatus, exit_code: Exit) -> Result<(), OutputClosed> {
        self.run_end(status, exit_code)
    }

    /// `run_end`, the last line; schema 2 counts the lines, this one included.
    fn run_end(&mut self, status: RunStatus, exit_code: Exit) -> Result<(), OutputClosed> {
        // Held text is released first: `eventCount` counts its lines.
        self.end_text()?;
        self.end_reasoning()?;
        let event_count = self.schema2().then(|| self.wire.next_seq());
        let result = self.emit(&Event::RunEnd { status, exit_code, event_count });
        self.mark_ended();
        result
    }

    /// The failure ending: `error` (and `run_end` in stream-json). Does nothing if the run has
    /// already ended.
    pub fn failure(&mut self, failure: &Failure) -> Result<(), OutputClosed> {
        if self.ended() {
            return Ok(());
        }
        let message = self.redactor.redact_str(&failure.message());
        if let (Failure::Crash(_), false) = (failure, self.format == Format::Text) {
            // A bug is also reported on stderr in the JSON formats, for whoever reads logs.
            self.stderr(&format!("[zero] {message}"));
        }
        let two = self.schema2();
        self.emit(&Event::Error {
            code: if two { failure.code_v2() } else { failure.code() },
            message: &message,
            recoverable: failure.recoverable(),
        })?;
        let status = if two { failure.status_v2() } else { RunStatus::Error };
        self.run_end(status, failure.exit())
    }

    /// `--list-tools`.
    pub fn tool_list(
        &mut self,
        mode: PermissionMode,
        tools: &[ListedTool<'_>],
        info: &RunInfo,
        warnings: &[Warning],
    ) -> Result<(), OutputClosed> {
        // An MCP server's names, descriptions and schemas are its own text: redacted like
        // every other byte written.
        let texts: Vec<[String; 3]> = tools
            .iter()
            .map(|t| [t.name, t.description, t.reason].map(|s| self.redactor.redact_str(s)))
            .collect();
        let redacted: Vec<ListedTool<'_>> = tools
            .iter()
            .zip(&texts)
            .map(|(t, [name, description, reason])| ListedTool {
                name,
                description,
                reason,
                withheld: t.withheld.as_deref().map(|w| self.redactor.redact_str(w)),
                parameters: self.redactor.redact_value(t.parameters.clone()),
                sandbox: t.sandbox.clone(),
                ..*t
            })
            .collect();
        let tools = redacted.as_slice();
        let listing = tool_listing(mode, tools);
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
                self.emit(&Event::Final { text: &listing, structured: None })?;
                self.run_end(RunStatus::Success, Exit::Success)?;
            }
            Format::Json => {
                self.write_legacy(&Legacy::ToolList { permission_mode: mode, tools })?;
                self.write_legacy(&Legacy::Done { exit_code: Exit::Success })?;
            }
            // `zero acp` lists no tools.
            Format::Acp => {}
        }
        self.mark_ended();
        Ok(())
    }

    /// A stderr row: one line, control characters shown escaped, nothing after the end. A
    /// closed stderr is ignored.
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

#[cfg(test)]
impl Emitter {
    /// `tool_result` of a call with no files, no denial and no duration, for the tests.
    pub fn result(
        &mut self,
        id: &str,
        ok: bool,
        output: &str,
        exit_code: Option<i32>,
    ) -> Result<(), OutputClosed> {
        self.tool_result(&Finished {
            id,
            name: "bash",
            ok,
            output,
            exit_code,
            changed_files: &[],
            refused: None,
            duration: Duration::ZERO,
            mcp: None,
            diffs: &[],
            terminal: None,
        })
    }

    /// A warning of no particular kind, for the tests.
    pub fn warn(&mut self, message: &str) -> Result<(), OutputClosed> {
        self.warning(&Warning::new(crate::protocol::events::WarningCode::IgnoredOption, message))
    }
}

/// The heartbeat thread never waits less than this between looks.
const MIN_BEAT_WAIT: Duration = Duration::from_millis(10);

/// Starts the heartbeat thread when heartbeats are on: it wakes when the next one could be due
/// and writes it through the emitter's lock, so a heartbeat never breaks a line, and it stops
/// once the run has ended. A thread, because the main thread may be blocked in a read from the
/// provider or a wait for a tool when a heartbeat is due.
/// A thread that cannot be started (a container's thread limit) is said in a warning, and the
/// run goes on without heartbeats.
fn start_heartbeats(shared: &Shared) -> Result<(), OutputClosed> {
    if lock(shared).heartbeat_interval().is_none() {
        return Ok(());
    }
    let beating = shared.clone();
    let started = crate::sys::threads::spawn(Named::Heartbeat, move || loop {
        let wait = lock(&beating).beat(Instant::now());
        match wait {
            Some(wait) => std::thread::sleep(wait.max(MIN_BEAT_WAIT)),
            None => return,
        }
    });
    match started {
        Ok(_) => Ok(()),
        Err(err) => lock(shared).warning(&Warning::new(
            crate::protocol::events::WarningCode::ThreadUnavailable,
            format!("No heartbeats in this run: the heartbeat thread could not start ({err})."),
        )),
    }
}

fn write_all(out: &mut Box<dyn Write + Send>, bytes: &[u8]) -> Result<(), OutputClosed> {
    out.write_all(bytes).and_then(|()| out.flush()).map_err(|_| OutputClosed)
}

pub use crate::text::terminal_safe;

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

/// `--list-tools`' text: the tools offered, those the level holds back, and where bash runs.
fn tool_listing(mode: PermissionMode, tools: &[ListedTool<'_>]) -> String {
    let mut listing = format!("Tools visible to model ({mode}):\n");
    // As wide as the longest name (MCP tools' names run long), at least the built-ins'.
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0).max(14);
    for t in tools.iter().filter(|t| t.enabled) {
        listing.push_str(&format!(
            "  {:<width$} {:<16} {} - {}\n",
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
        listing.push_str(&format!("  {:<width$} {:<16} {why}\n", t.name, t.side_effect));
    }
    // Of a tool listed above: one the filters leave out does not run anywhere.
    let listed = tools.iter().filter(|t| t.enabled || held_back(t));
    for (name, sandbox) in listed.filter_map(|t| Some((t.name, t.sandbox.as_ref()?))) {
        listing.push_str(&sandbox_line(name, sandbox));
        listing.push('\n');
    }
    listing
}

/// Where a tool's commands run (`run_start.sandbox`), in words.
fn sandbox_line(name: &str, sandbox: &serde_json::Value) -> String {
    let field = |k: &str| sandbox[k].as_str().unwrap_or("?").to_string();
    match (field("mode").as_str(), field("enforcement").as_str()) {
        ("off", _) => {
            format!("{name} runs without a sandbox (--sandbox off), network {}", field("network"))
        }
        (mode, "none") => format!(
            "{name} runs in the sandbox: {mode}, network {}, not enforced on this kernel",
            field("network")
        ),
        (mode, how) => format!(
            "{name} runs in the sandbox: {mode}, network {}, enforced by {how}",
            field("network")
        ),
    }
}

#[cfg(test)]
mod tests;
