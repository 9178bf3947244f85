//! The two directions of `zero acp`'s stdio, shared by the main loop and the reader thread.
//!
//! Out: every line goes through one [`Stdout`], whose lock is held for a whole line, so the
//! sessions' updates (each session's own emitter), the responses and zero's requests never
//! interleave inside a line. In: the reader thread ([`super::inbox`]) hands zero's main loop the
//! requests it must act on, and the answers to zero's own requests to whoever waits for them
//! ([`Peer::call`]).

use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::redact::Redactor;
use crate::rpc::{self, Id, RpcError};

/// How often a wait for the client looks at the cancellation flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// stdout, one whole line per write.
#[derive(Clone)]
pub struct Stdout {
    inner: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl Stdout {
    pub fn new(out: Box<dyn Write + Send>) -> Stdout {
        Stdout { inner: Arc::new(Mutex::new(out)) }
    }

    /// A message, redacted as a value (so redaction cannot break its syntax), as one line.
    pub fn send(&self, message: &Value, redactor: &Redactor) -> std::io::Result<()> {
        self.send_line(&redactor.redact_value(message.clone()))
    }

    /// A message as it is: only for content the client must write or run exactly.
    pub fn send_exact(&self, message: &Value) -> std::io::Result<()> {
        self.send_line(message)
    }

    fn send_line(&self, message: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(message).unwrap_or_default();
        line.push(b'\n');
        let mut out = self.lock();
        out.write_all(&line).and_then(|()| out.flush())
    }

    fn lock(&self) -> MutexGuard<'_, Box<dyn Write + Send>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Each write is one line the emitter made whole: written under the lock at once.
impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut out = self.lock();
        out.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.lock().flush()
    }
}

/// What zero's main loop is told by the reader thread.
pub enum Incoming {
    Request {
        id: Id,
        method: String,
        params: Value,
    },
    /// stdin ended (or could not be read): every session ends.
    End,
}

/// An answer to one of zero's own requests.
pub struct Answer {
    pub id: Id,
    pub outcome: Result<Value, RpcError>,
}

/// Why a call to the client gave no result.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// The client answered with an error.
    Refused(RpcError),
    /// No answer within the deadline.
    TimedOut,
    /// The turn was cancelled while waiting.
    Cancelled,
    /// stdin ended, or stdout is gone.
    Gone,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Refused(e) => {
                write!(f, "the client answered error {}: {}", e.code, e.message)
            }
            CallError::TimedOut => write!(f, "the client did not answer in time"),
            CallError::Cancelled => write!(f, "the turn was cancelled"),
            CallError::Gone => write!(f, "the client is gone"),
        }
    }
}

/// How a call waits for its answer, and how its request is written.
#[derive(Debug, Clone, Copy)]
pub struct Wait {
    pub timeout: Duration,
    /// A cancelled turn stops the wait.
    pub cancellable: bool,
    /// The request carries what the client must write or run exactly: not redacted.
    pub exact: bool,
}

/// The client as zero asks it things: its answers come from the reader thread, matched by id.
pub struct Peer {
    out: Stdout,
    redactor: Redactor,
    /// Ids zero waits an answer for; the reader drops answers to any other id.
    awaiting: Arc<Mutex<HashSet<Id>>>,
    answers: Mutex<Receiver<Answer>>,
    next: AtomicU64,
}

impl Peer {
    pub fn new(
        out: Stdout,
        redactor: Redactor,
        awaiting: Arc<Mutex<HashSet<Id>>>,
        answers: Receiver<Answer>,
    ) -> Peer {
        Peer { out, redactor, awaiting, answers: Mutex::new(answers), next: AtomicU64::new(0) }
    }

    pub fn out(&self) -> &Stdout {
        &self.out
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// A fresh id for one of zero's requests.
    pub fn new_id(&self, prefix: &str) -> String {
        let n = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        format!("{prefix}-{n}-{}", crate::clock::unpredictable_base36(8))
    }

    /// Marks `id` as awaited: an answer the reader sees from now on is handed over.
    pub fn expect(&self, id: &Id) {
        lock(&self.awaiting).insert(id.clone());
    }

    /// Sends request `method` and waits for its answer until `timeout`; a cancelled turn
    /// (`cancellable`) stops the wait.
    pub fn call(&self, method: &str, params: Value, wait: Wait) -> Result<Value, CallError> {
        let id = Id::Text(self.new_id("zero"));
        self.expect(&id);
        let request = rpc::request(&id, method, params);
        // Content the editor must write or run exactly is sent as it is: redacting it would
        // change the file or the command. It is the user's own file, in their own editor.
        let sent = if wait.exact {
            self.out.send_exact(&request)
        } else {
            self.out.send(&request, &self.redactor)
        };
        if sent.is_err() {
            lock(&self.awaiting).remove(&id);
            return Err(CallError::Gone);
        }
        self.wait(&id, wait.timeout, wait.cancellable)
    }

    /// Waits for the answer to `id` (made with [`Peer::expect`] before it was sent).
    pub fn wait(&self, id: &Id, timeout: Duration, cancellable: bool) -> Result<Value, CallError> {
        let deadline = Instant::now() + timeout;
        let answers = lock(&self.answers);
        let result = loop {
            if cancellable && crate::run::ending::turn_interrupted() {
                break Err(CallError::Cancelled);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break Err(CallError::TimedOut);
            }
            match answers.recv_timeout(left.min(CANCEL_POLL)) {
                Ok(answer) if &answer.id == id => break answer.outcome.map_err(CallError::Refused),
                // A late answer to a request that was given up on.
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break Err(CallError::Gone),
            }
        };
        lock(&self.awaiting).remove(id);
        if let Err(CallError::TimedOut | CallError::Cancelled) = result {
            // The client is told the request is no longer waited for.
            let notice = rpc::notification("$/cancel_request", json!({"requestId": id.to_value()}));
            let _ = self.out.send(&notice, &self.redactor);
        }
        result
    }
}

pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
