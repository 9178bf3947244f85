//! The run's output behind one door: [`Output`] is what the rest of zero holds, and each of its
//! methods takes the emitter's lock for the line it writes (or the state it sets), so no code
//! outside `output/` locks the emitter, and none can hold it across a wait.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{lock, Decision, Emitter, Finished, Format, Gate, Held, Phase, RunInfo, Wire};
use crate::conversation::Answer;
use crate::error::{Exit, Failure, OutputClosed};
use crate::protocol::events::{ListedTool, PermissionMode, RunStatus, SchemaVersion, Warning};
use crate::provider::models::Usage;
use crate::redact::Redactor;

/// The emitter of a run, shared with the heartbeat thread and the interrupt and panic endings.
#[derive(Clone)]
pub struct Output {
    emitter: Arc<Mutex<Emitter>>,
}

/// `Output` methods that lock the emitter for one call of its method of the same name.
macro_rules! through_the_lock {
    ($( $(#[$doc:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?; )*) => {
        impl Output {
            $(
                $(#[$doc])*
                pub fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
                    lock(&self.emitter).$name($($arg),*)
                }
            )*
        }
    };
}

through_the_lock! {
    /// ACP: the session's workspace and context window, for its updates.
    fn set_acp_view(&self, cwd: &std::path::Path, root: &std::path::Path, window: u64);
    /// ACP: whether a model call stopped at its output limit since this was last asked.
    fn take_cut_short(&self) -> bool;
    /// ACP: a message of the session's front-end, redacted with the session's secrets.
    fn acp_message(&self, message: &serde_json::Value) -> Result<(), OutputClosed>;
    /// Selects the schema version (before the first line, or for an error found early).
    fn set_schema(&self, version: SchemaVersion);
    fn schema2(&self) -> bool;
    fn set_heartbeat(&self, interval: Duration);
    /// What the run now waits for (heartbeats say so); `None` between phases.
    fn set_phase(&self, phase: Option<Phase>, tool_call_id: Option<&str>);
    #[cfg(test)]
    fn beat(&self, now: Instant) -> Option<Duration>;
    fn panic_on_next_text(&self);
    fn format(&self) -> Format;
    fn ended_flag(&self) -> Arc<AtomicBool>;
    fn wire(&self) -> Arc<Wire>;
    fn add_secret_min(&self, value: &str, min: usize);
    fn run_start(&self, info: &RunInfo) -> Result<(), OutputClosed>;
    fn warning(&self, warning: &Warning) -> Result<(), OutputClosed>;
    fn reasoning(&self, delta: &str) -> Result<(), OutputClosed>;
    fn text(&self, delta: &str) -> Result<(), OutputClosed>;
    fn last_text(&self, delta: &str) -> Result<(), OutputClosed>;
    fn not_the_answer(&self);
    fn end_turn(&self) -> Result<(), OutputClosed>;
    fn tool_call(&self, id: &str, name: &str, arguments: &str, side_effect: crate::protocol::events::SideEffect) -> Result<(), OutputClosed>;
    fn tool_result(&self, call: &Finished<'_>) -> Result<(), OutputClosed>;
    fn mcp_server(&self, report: &crate::mcp::Report) -> Result<(), OutputClosed>;
    fn permission_request(&self, gate: &Gate<'_>, pending: Option<(&str, u64)>) -> Result<(), OutputClosed>;
    fn permission_decision(&self, gate: &Gate<'_>, decision: &Decision<'_>) -> Result<(), OutputClosed>;
    fn usage(&self, usage: &Usage, cost: Option<f64>) -> Result<(), OutputClosed>;
    fn success(&self, answer: &Answer) -> Result<(), OutputClosed>;
    fn turn_answer(&self, answer: &Answer) -> Result<(), OutputClosed>;
    fn turn_error(&self, failure: &Failure) -> Result<(), OutputClosed>;
    fn input_error(&self, message: &str) -> Result<(), OutputClosed>;
    fn turn_end(&self, turn: u64, status: RunStatus) -> Result<(), OutputClosed>;
    fn live_end(&self, status: RunStatus, exit_code: Exit) -> Result<(), OutputClosed>;
    fn failure(&self, failure: &Failure) -> Result<(), OutputClosed>;
    fn tool_list(&self, mode: PermissionMode, rows: &[ListedTool<'_>], info: &RunInfo, warnings: &[Warning]) -> Result<(), OutputClosed>;
}

impl Output {
    pub fn new(emitter: Emitter) -> Output {
        Output { emitter: Arc::new(Mutex::new(emitter)) }
    }

    /// The redactor as it is now (a copy: secrets registered later are not in it).
    pub fn redactor(&self) -> Redactor {
        lock(&self.emitter).redactor().clone()
    }

    /// The run's id (a copy).
    pub fn run_id(&self) -> String {
        lock(&self.emitter).run_id().to_string()
    }

    /// For the ending from outside the main loop (a signal, a panic): waits at most `wait`
    /// for the line being written (to a reader that may be slow), writes the failure's lines
    /// within `write_for`, and returns the lock, to be held until the process exits so no
    /// other thread writes after the end. `None` when the emitter could not be had in time.
    pub fn end_from_outside(
        &self,
        failure: &Failure,
        wait: Duration,
        write_for: Duration,
    ) -> Option<Held<'_>> {
        let guard = crate::sys::threads::lock_for(&self.emitter, wait)?;
        let mut held = Held::from_guard(guard);
        // A reader that stopped reading must not keep the process alive.
        crate::sys::stdio::write_deadline(Instant::now() + write_for);
        let _ = held.failure(failure);
        Some(held)
    }

    /// Starts the heartbeat thread when heartbeats are on (see `start_heartbeats`).
    pub fn start_heartbeats(&self) -> Result<(), OutputClosed> {
        super::start_heartbeats(&self.emitter)
    }
}
