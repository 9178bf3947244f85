//! Every thread zero starts, by name. The design is one blocking loop; a thread exists only
//! where the OS leaves no other way:
//!
//! - `zero-signals`: runs what a signal decides (write the ending, kill the tool's group)
//!   outside the handler, where only async-signal-safe calls are allowed.
//! - `zero-heartbeat`: writes schema 2 heartbeats while the main thread is blocked in a
//!   provider read or a tool's wait (only with heartbeats on).
//! - `zero-live-input`: reads live mode's stdin one line ahead, so an approval's deadline
//!   holds while a client is half-way through writing a line (live mode only).
//! - `zero-acp-input`: reads `zero acp`'s stdin, so that `session/cancel` and the answers to
//!   zero's own requests are heard while the main loop is blocked in a turn (`zero acp` only).
//! - `zero-mcp-http`: one request to a streamable HTTP MCP server, from its POST to the end
//!   of its answer; or a server's messages that need no answer, sent in order; or its
//!   listening stream (the HTTP client blocks; the thread hands each message to the main loop,
//!   which waits on it with `poll` beside its stdio servers, its deadline and interrupts). One
//!   per request in flight, each ended by its request's deadline, and per HTTP server one
//!   sending (ended when the link goes) and one listening (ended when its stream next ends
//!   after the link goes, or with the process).
//!
//! Names are at most 15 bytes, as Linux keeps them. A thread that cannot start (a container's
//! thread limit) is an error its caller reports, never a panic.

use std::sync::atomic::{AtomicBool, Ordering};

/// The threads zero starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    Signals,
    Heartbeat,
    LiveInput,
    AcpInput,
    McpHttp,
}

impl Named {
    pub fn name(self) -> &'static str {
        match self {
            Named::Signals => "zero-signals",
            Named::Heartbeat => "zero-heartbeat",
            Named::LiveInput => "zero-live-input",
            Named::AcpInput => "zero-acp-input",
            Named::McpHttp => "zero-mcp-http",
        }
    }
}

/// Set by a debug-build failpoint (`ZERO_DEBUG_NO_THREADS`): every start fails, as under a
/// thread limit, so the tests can see what each caller does then.
static REFUSED: AtomicBool = AtomicBool::new(false);

pub fn refuse_all() {
    REFUSED.store(true, Ordering::SeqCst);
}

/// Starts the named thread.
pub fn spawn(
    which: Named,
    body: impl FnOnce() + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    if REFUSED.load(Ordering::SeqCst) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            "Resource temporarily unavailable (ZERO_DEBUG_NO_THREADS)",
        ));
    }
    std::thread::Builder::new().name(which.name().to_string()).spawn(body)
}

/// Locks `mutex`, waiting at most `wait`; a poisoned lock is still usable (every write under
/// these locks is whole). For the interrupt and panic paths, which must not hang on a lock a
/// blocked thread holds.
pub fn lock_for<T>(
    mutex: &std::sync::Mutex<T>,
    wait: std::time::Duration,
) -> Option<std::sync::MutexGuard<'_, T>> {
    use std::sync::TryLockError;
    let deadline = std::time::Instant::now() + wait;
    loop {
        match mutex.try_lock() {
            Ok(guard) => return Some(guard),
            Err(TryLockError::Poisoned(poisoned)) => return Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(1))
            }
            Err(TryLockError::WouldBlock) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_what_linux_keeps() {
        for which in [Named::Signals, Named::Heartbeat, Named::LiveInput, Named::McpHttp] {
            assert!(which.name().len() <= 15, "{}", which.name());
        }
    }
}
