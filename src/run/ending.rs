//! How a process ends: the ending state machine, in one place. Every `zero exec` ends in
//! exactly one of three ways, and only the first to start its ending writes the last lines.
//!
//! **Who may end the process, and in which order.**
//! 1. The main thread, at the end of `exec::run` (success, or a failure returned up to it):
//!    it writes `final`/`error` and `run_end` through the output, then stops the MCP servers
//!    (`process::stop_kept_groups`) and returns its exit code to `main`.
//! 2. The signal watcher thread (`zero-signals`), for SIGINT, SIGTERM or SIGHUP, through
//!    [`on_signal`]: in a live turn a first SIGINT only interrupts that turn (below);
//!    otherwise it runs [`end_from_outside`].
//! 3. The panic hook, on whichever thread panicked: [`end_from_outside`] too, or, when the
//!    panic is inside the emitter (that thread holds its lock), the pre-rendered fallback
//!    ending ([`write_fallback`]), which carries no text that would need redacting.
//!
//! [`end_from_outside`] takes the emitter's lock (waiting up to 5 s for a line being written
//! to a slow reader, so no line is torn), writes `error` and `run_end` within 2 s, and keeps
//! the lock until exit, so the main thread cannot write a line after the end. Then
//! [`finish`]: each MCP call still waiting is cancelled on its server
//! (`notifications/cancelled`, 0.5 s), HTTP sessions are ended (1 s), the servers' groups get
//! SIGTERM and SIGKILL after 2 s, every descendant is killed, the failure is recorded in the
//! session, and the process exits with the failure's code.
//!
//! **What each signal does.** The handler (`sys::signals`) only counts and writes a byte to the
//! watcher. Outside live mode, a second signal exits at once (130) from the handler, killing
//! the running command's group and the kept groups first. In live mode, a SIGINT during a turn
//! sets [`TURN_INTERRUPTED`], kills the running command's group and wakes what waits on the
//! interrupt socket (an MCP call, an approval): the turn ends as interrupted and the process
//! goes on; a second SIGINT within 2 s, a SIGINT between turns, SIGTERM or SIGHUP end the
//! process; any signal once the ending has begun (`signals::set_ending`) exits at once.
//!
//! **The statics, and why each is one.** They are read from other threads (the watcher, the
//! heartbeat thread) or from the signal handler, which can reach nothing else:
//! - here: [`LIVE_STATE`] and [`TURN_INTERRUPTED`], [`LAST_TURN_INTERRUPT`] (live mode's
//!   turns, for the watcher), [`ACTIVE_SESSION`] (where the ending records the failure),
//!   [`FALLBACK`] (what the fallback ending writes), [`SIGNALS_MISSING`] (a warning to give);
//! - `sys::signals`: `WAKE_FD` and `RECEIVED` (the handler's socket and count),
//!   `RUNNING_GROUP` (the command to kill), `KEPT_GROUPS` (the one list of process groups kept
//!   out of the tool calls' cleanup: MCP servers), `LIVE` and `ENDING` (what a further signal
//!   does), the interrupt socket pair;
//! - `sys::process`: `RUNNING` (one command at a time, so "every descendant" is the call's)
//!   and `EVER_KEPT` (whether the end must sweep for what servers left);
//! - `sys::stdio`: `DEADLINE` (writes give up at the ending's deadline);
//! - `mcp`: `PENDING` (calls to cancel) and `http::ENDPOINTS` (sessions to end);
//! - `output`: `HOLDING` (this thread holds the emitter: a panic there cannot lock it again).

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::error::Failure;
use crate::output::{self, Format, Output};
use crate::protocol::events::{SchemaVersion, Warning, WarningCode};
use crate::session::{Kind, Session};
use crate::sys::threads::lock_for;

/// Live mode's state, for the signal watcher: not live, waiting for input, or in a turn.
static LIVE_STATE: AtomicU8 = AtomicU8::new(NOT_LIVE);
const NOT_LIVE: u8 = 0;
const LIVE_WAITING: u8 = 1;
const LIVE_IN_TURN: u8 = 2;
/// A SIGINT asked the current live turn to stop.
static TURN_INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// When the last live turn was interrupted: a second SIGINT within 2 s ends the process.
static LAST_TURN_INTERRUPT: Mutex<Option<Instant>> = Mutex::new(None);
/// How close a second SIGINT must follow the first to end a live process.
const SECOND_INTERRUPT: Duration = Duration::from_secs(2);

/// Live mode: whether a turn is running (SIGINT interrupts it) or zero waits for input
/// (SIGINT ends the process). Entering a turn clears an interrupt left from before it.
pub fn set_live_turn(in_turn: bool) {
    if in_turn {
        TURN_INTERRUPTED.store(false, Ordering::SeqCst);
        crate::sys::signals::clear_interrupted();
    }
    LIVE_STATE.store(if in_turn { LIVE_IN_TURN } else { LIVE_WAITING }, Ordering::SeqCst);
    crate::sys::signals::set_live(true);
}

/// A front-end's turn begins (`zero acp`): a cancellation left from before it is cleared.
pub fn begin_turn() {
    TURN_INTERRUPTED.store(false, Ordering::SeqCst);
    crate::sys::signals::clear_interrupted();
}

/// Whether a SIGINT interrupted the current live turn.
pub fn turn_interrupted() -> bool {
    TURN_INTERRUPTED.load(Ordering::SeqCst)
}

/// Stops the running turn as a first SIGINT in a live turn does: its command's process group
/// is killed, its model call's connection is shut down, every wait wakes, and the turn ends
/// `interrupted`. A front-end that hears a
/// cancellation from its client (not a signal) calls this too.
pub fn cancel_turn() {
    TURN_INTERRUPTED.store(true, Ordering::SeqCst);
    crate::sys::signals::kill_running_group();
    crate::sys::signals::wake_interrupted();
    // A model call waiting for the provider's next byte is dropped now.
    crate::net::http::interrupt_stream();
}

/// What a signal does: in a live turn, a first SIGINT stops that turn (its command's process
/// group is killed at once); anything else ends the process.
fn on_signal(shared: &Output, signum: i32) {
    let in_turn = LIVE_STATE.load(Ordering::SeqCst) == LIVE_IN_TURN;
    if signum == crate::sys::signals::SIGINT && in_turn {
        let mut last = LAST_TURN_INTERRUPT.lock().unwrap_or_else(|p| p.into_inner());
        let recent = last.is_some_and(|at| at.elapsed() < SECOND_INTERRUPT);
        if !recent {
            *last = Some(Instant::now());
            cancel_turn();
            return;
        }
    }
    end_from_outside(shared, Failure::Interrupted);
}

/// The session of the running exec.
static ACTIVE_SESSION: Mutex<Option<Arc<Mutex<Session>>>> = Mutex::new(None);

/// What the fallback ending needs, taken when the handlers are installed.
struct Fallback {
    format: Format,
    run_id: String,
    /// Set by the emitter once the terminal line is written.
    ended: Arc<AtomicBool>,
    /// The schema version and the lines written so far.
    wire: Arc<output::Wire>,
}

static FALLBACK: OnceLock<Fallback> = OnceLock::new();

/// Makes `session` the one the interrupt and panic endings record into.
pub fn set_active_session(session: Option<Arc<Mutex<Session>>>) {
    *ACTIVE_SESSION.lock().unwrap_or_else(|p| p.into_inner()) = session;
}

/// Records a failure in the active session and flushes it (never waiting long for a lock).
pub fn record_failure(failure: &Failure) {
    let Some(active) = lock_for(&ACTIVE_SESSION, Duration::from_millis(50)).and_then(|a| a.clone())
    else {
        return;
    };
    // The main thread may be appending an event (a write and the metadata's rename, slow on
    // a loaded disk): it is given time to finish, within the ending's deadline.
    let Some(mut session) = lock_for(&active, Duration::from_millis(500)) else { return };
    let payload = serde_json::json!({"code": failure.code(), "message": failure.message()});
    session.record(Kind::Error, payload);
    session.sync();
    if crate::sys::signals::ending() {
        // The process exits now: no later event may follow the failure.
        session.end();
    }
}

/// Installs the interrupt handler and the panic hook once the emitter exists.
/// Why the signal watcher could not be installed, if it could not.
static SIGNALS_MISSING: OnceLock<String> = OnceLock::new();

/// The warning a run writes when signals end it without its last lines.
pub fn signals_missing() -> Option<Warning> {
    SIGNALS_MISSING.get().map(|err| {
        Warning::new(
            WarningCode::ThreadUnavailable,
            format!("An interrupt ends this run at once, without its last lines: the signal watcher could not start ({err})."),
        )
    })
}

pub fn install(shared: &Output) {
    let _ = FALLBACK.set(Fallback {
        format: shared.format(),
        run_id: shared.run_id(),
        ended: shared.ended_flag(),
        wire: shared.wire(),
    });
    let for_signals = shared.clone();
    // Without the handler the default action (terminate) still applies; the run says so
    // once it has started (see `signals_missing`).
    if let Err(err) = crate::sys::signals::install(move |signum| on_signal(&for_signals, signum)) {
        let _ = SIGNALS_MISSING.set(err.to_string());
    }
    let for_panics = shared.clone();
    std::panic::set_hook(Box::new(move |info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let place =
            info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let failure = Failure::Crash(format!("Internal error (a bug in zero): {what}{place}"));
        if output::held_by_this_thread() {
            // The panic is inside the emitter: its lock and its redactor are out of reach.
            write_fallback(&format!("Internal error (a bug in zero){place}"));
            finish(&failure);
        }
        end_from_outside(&for_panics, failure);
    }));
}

/// How long the ending waits for a line being written (to a slow reader) to finish.
const LINE_IN_PROGRESS: Duration = Duration::from_secs(5);
/// How long the ending's own lines may take to write, once it holds the emitter.
const ENDING_LINES: Duration = Duration::from_secs(2);

/// Writes the failure through the emitter, kills what the run started, records, and exits.
fn end_from_outside(shared: &Output, failure: Failure) -> ! {
    // The lock is kept until exit, so the main thread cannot write after the end; it is taken
    // before anything is killed, so a tool that ends now cannot report first. Whoever holds it
    // is writing a line, perhaps to a reader that is slow: the line is let finish, so it is
    // never torn, but not for ever. A second signal meanwhile exits at once, in live mode too.
    crate::sys::signals::set_ending();
    // A turn still running on the main thread (a front-end whose output is not this one, such
    // as an editor's session) stops before its next model call, and its model call is dropped.
    TURN_INTERRUPTED.store(true, Ordering::SeqCst);
    crate::net::http::interrupt_stream();
    // Held until the process exits. A reader that stopped reading must not keep the process
    // alive: the ending's lines are written if they can be, within a deadline.
    let _held = shared.end_from_outside(&failure, LINE_IN_PROGRESS, ENDING_LINES);
    finish(&failure);
}

fn finish(failure: &Failure) -> ! {
    // MCP servers are told first that the call they work on is cancelled, then asked to stop:
    // HTTP sessions are ended (1 s in all), stdio servers get SIGTERM, then SIGKILL after
    // their grace; then nothing the run started is left.
    let reason = match failure {
        Failure::Interrupted => "zero was interrupted",
        _ => "zero is ending",
    };
    crate::mcp::cancel_pending(reason, Duration::from_millis(500));
    crate::mcp::end_http_sessions(std::time::Duration::from_secs(1));
    crate::sys::process::stop_kept_groups();
    crate::sys::process::kill_everything();
    record_failure(failure);
    std::process::exit(failure.exit().code().into());
}

/// The crash ending without the emitter, rendered here from fixed text.
fn write_fallback(message: &str) {
    let Some(fallback) = FALLBACK.get() else { return };
    if fallback.ended.swap(true, Ordering::SeqCst) {
        return;
    }
    let failure = Failure::Crash(message.to_string());
    let lines = match fallback.format {
        // ACP has no run to end: stderr is its log.
        Format::Text | Format::Acp => {
            let _ = writeln!(crate::sys::stdio::stderr(), "[zero] {message}");
            return;
        }
        Format::StreamJson if fallback.wire.schema() == SchemaVersion::V2 => {
            let run_id = json_string(&fallback.run_id);
            let (error_seq, end_seq) = (fallback.wire.take_seq(), fallback.wire.take_seq());
            format!(
                "{{\"schemaVersion\":2,\"type\":\"error\",\"runId\":{run_id},\"seq\":{error_seq},\"code\":\"{}\",\"message\":{},\"recoverable\":false}}\n\
                 {{\"schemaVersion\":2,\"type\":\"run_end\",\"runId\":{run_id},\"seq\":{end_seq},\"status\":\"error\",\"exitCode\":{},\"eventCount\":{end_seq}}}\n",
                failure.code().name(),
                json_string(message),
                failure.exit()
            )
        }
        Format::StreamJson => {
            let run_id = json_string(&fallback.run_id);
            format!(
                "{{\"schemaVersion\":1,\"type\":\"error\",\"runId\":{run_id},\"code\":\"{}\",\"message\":{},\"recoverable\":false}}\n\
                 {{\"schemaVersion\":1,\"type\":\"run_end\",\"runId\":{run_id},\"status\":\"error\",\"exitCode\":{}}}\n",
                failure.code().name(),
                json_string(message),
                failure.exit()
            )
        }
        Format::Json => format!(
            "{{\"type\":\"error\",\"code\":\"{}\",\"message\":{}}}\n",
            failure.code().name(),
            json_string(message)
        ),
    };
    let mut out = crate::sys::stdio::stdout();
    let _ = out.write_all(lines.as_bytes()).and_then(|()| out.flush());
    let _ = writeln!(crate::sys::stdio::stderr(), "[zero] {message}");
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}
