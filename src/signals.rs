//! The only unsafe code in zero: a few lines of FFI to libc for signals and process groups
//! (A13), since std has neither and the dependency set stays at four crates.
//!
//! SIGINT and SIGTERM are caught by a handler that does only async-signal-safe work: it bumps
//! a counter and writes one byte to a socket. A watcher thread blocked on the other end then
//! ends the run (see `exec`), wherever the main thread is blocked. A second signal exits at
//! once with 130 from inside the handler (`_exit` is async-signal-safe).
//!
//! The bash tool runs each command in its own process group and registers the group here, so
//! an interrupt (or a timeout) kills the command with everything it started.
#![allow(unsafe_code)]

use std::io::Read;
use std::os::unix::io::IntoRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

const SIGINT: i32 = 2;
const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;

extern "C" {
    fn signal(signum: i32, handler: usize) -> usize;
    fn kill(pid: i32, sig: i32) -> i32;
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
    fn _exit(status: i32) -> !;
}

/// Write end of the wake-up socket (-1 until installed).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
/// Signals received so far.
static RECEIVED: AtomicU32 = AtomicU32::new(0);
/// Process group of the running bash command (0 when none).
static RUNNING_GROUP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signum: i32) {
    if RECEIVED.fetch_add(1, Ordering::SeqCst) > 0 {
        let group = RUNNING_GROUP.load(Ordering::SeqCst);
        // SAFETY: kill and _exit are async-signal-safe; the arguments are plain integers.
        unsafe {
            if group > 0 {
                kill(-group, SIGKILL);
            }
            _exit(130);
        }
    }
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = signum as u8;
        // SAFETY: write is async-signal-safe; the buffer is one byte on this stack frame.
        unsafe {
            write(fd, &byte, 1);
        }
    }
}

/// Catches SIGINT and SIGTERM; `on_interrupt` runs on a watcher thread at the first one.
pub fn install(on_interrupt: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    let (mut reader, writer) = UnixStream::pair()?;
    // The write end lives for the whole process: the handler may use it at any time.
    WAKE_FD.store(writer.into_raw_fd(), Ordering::SeqCst);
    std::thread::Builder::new().name("zero-signals".into()).spawn(move || {
        let mut byte = [0u8; 1];
        if matches!(reader.read(&mut byte), Ok(1)) {
            on_interrupt();
        }
    })?;
    let handler = on_signal as extern "C" fn(i32) as usize;
    // SAFETY: `handler` is an `extern "C" fn(i32)` that only performs async-signal-safe calls.
    unsafe {
        signal(SIGINT, handler);
        signal(SIGTERM, handler);
    }
    Ok(())
}

/// Records the process group of the command now running (its leader's pid).
pub fn set_running_group(pid: u32) {
    RUNNING_GROUP.store(pid as i32, Ordering::SeqCst);
}

pub fn clear_running_group() {
    RUNNING_GROUP.store(0, Ordering::SeqCst);
}

/// Kills the running command's whole process group, if any.
pub fn kill_running_group() {
    let group = RUNNING_GROUP.swap(0, Ordering::SeqCst);
    if group > 0 {
        kill_group(group as u32);
    }
}

/// Kills every process of a group (SIGKILL). A group that no longer exists is not an error.
pub fn kill_group(pgid: u32) {
    if pgid == 0 || pgid > i32::MAX as u32 {
        return;
    }
    // SAFETY: kill has no memory effects; a negative pid addresses a process group.
    unsafe {
        kill(-(pgid as i32), SIGKILL);
    }
}
