//! FFI to libc for signals and process control, since std has neither and the
//! dependency set stays at four crates. Like every file of `sys`, it may hold unsafe code,
//! which the rest of zero may not.
//!
//! SIGINT, SIGTERM and SIGHUP (a closed terminal or editor) are caught by a handler installed
//! with `sigaction` that does only async-signal-safe work, keeping `errno` as it found it: it
//! bumps a counter and writes one byte (the signal's number) to a socket. A watcher thread
//! blocked on the other end then decides (see `ending`), wherever the main thread is blocked:
//! a run ends; in live mode a first SIGINT during a turn interrupts only that turn. Outside
//! live mode a second signal exits at once with 130 from inside the handler (`_exit` is
//! async-signal-safe); in live mode every signal goes to the watcher, which ends the process
//! itself when it should.
//!
//! The child processes of tool calls run in their own process group, registered here so an
//! interrupt kills the group; zero is also a child subreaper, so a process that leaves the
//! group (`setsid`, a daemon) is re-parented to zero and can still be found and killed
//! (`process`).
#![allow(unsafe_code)]

use std::io::Read;
use std::os::unix::io::IntoRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

const SIGHUP: i32 = 1;
pub const SIGINT: i32 = 2;
pub const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;
/// `sa_flags`: restart interrupted system calls instead of failing them with EINTR.
const SA_RESTART: i32 = 0x1000_0000;
const PR_SET_CHILD_SUBREAPER: i32 = 36;
const PR_SET_PDEATHSIG: i32 = 1;
const WNOHANG: i32 = 1;

/// `struct sigaction` as glibc and musl lay it out on 64-bit Linux: the handler, a 1024-bit
/// signal mask, the flags, and the restorer (unused: libc fills it in).
#[repr(C)]
struct SigAction {
    handler: usize,
    mask: [u64; 16],
    flags: i32,
    restorer: usize,
}

extern "C" {
    fn sigaction(signum: i32, act: *const SigAction, old: *mut SigAction) -> i32;
    fn kill(pid: i32, sig: i32) -> i32;
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn prctl(option: i32, ...) -> i32;
    fn setsid() -> i32;
    fn getppid() -> i32;
    fn __errno_location() -> *mut i32;
    fn _exit(status: i32) -> !;
}

/// Write end of the wake-up socket (-1 until installed).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
/// Signals received so far.
static RECEIVED: AtomicU32 = AtomicU32::new(0);
/// Process group of the running tool command (0 when none).
static RUNNING_GROUP: AtomicI32 = AtomicI32::new(0);
/// The process groups kept out of the tool calls' cleanup (MCP servers; their leaders' pids,
/// 0 is a free slot): the one list of them, lock-free so the handler can read it (a second
/// signal, which exits at once, still kills them) and `process` too.
static KEPT_GROUPS: [AtomicI32; MAX_KEPT] = [const { AtomicI32::new(0) }; MAX_KEPT];
/// Kept groups at most: a server past them is not started.
pub const MAX_KEPT: usize = 256;
/// Live mode: a signal does not end the process from the handler.
static LIVE: AtomicBool = AtomicBool::new(false);
/// The process is ending (its last lines are being written): any further signal exits at
/// once, live mode or not.
static ENDING: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(signum: i32) {
    // SAFETY: __errno_location returns this thread's errno slot; it is restored before return.
    let saved = unsafe { *__errno_location() };
    let repeated = RECEIVED.fetch_add(1, Ordering::SeqCst) > 0;
    let ending = ENDING.load(Ordering::SeqCst);
    if signum != SIGINT {
        // SIGTERM and SIGHUP end the process in every mode: one more signal exits at once.
        ENDING.store(true, Ordering::SeqCst);
    }
    if repeated && (!LIVE.load(Ordering::SeqCst) || ending) {
        let group = RUNNING_GROUP.load(Ordering::SeqCst);
        // SAFETY: kill and _exit are async-signal-safe; the arguments are plain integers.
        unsafe {
            if group > 0 {
                kill(-group, SIGKILL);
            }
            for slot in &KEPT_GROUPS {
                let kept = slot.load(Ordering::SeqCst);
                if kept > 0 {
                    kill(-kept, SIGKILL);
                }
            }
            _exit(crate::error::Exit::Interrupted.code().into());
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
    // SAFETY: as above.
    unsafe { *__errno_location() = saved };
}

/// Catches SIGINT, SIGTERM and SIGHUP; `decide` runs on a watcher thread for each, with
/// the signal's number (outside live mode the handler itself ends the process at the second).
pub fn install(mut decide: impl FnMut(i32) + Send + 'static) -> std::io::Result<()> {
    let (mut reader, writer) = UnixStream::pair()?;
    // The write end lives for the whole process: the handler may use it at any time.
    WAKE_FD.store(writer.into_raw_fd(), Ordering::SeqCst);
    super::threads::spawn(super::threads::Named::Signals, move || {
        let mut byte = [0u8; 1];
        while matches!(reader.read(&mut byte), Ok(1)) {
            decide(i32::from(byte[0]));
        }
    })?;
    let action = SigAction {
        handler: on_signal as extern "C" fn(i32) as usize,
        mask: [0; 16],
        flags: SA_RESTART,
        restorer: 0,
    };
    for signum in [SIGINT, SIGTERM, SIGHUP] {
        // SAFETY: `action` is a valid sigaction for the call; the handler only performs
        // async-signal-safe calls.
        if unsafe { sigaction(signum, &action, std::ptr::null_mut()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The process has begun its ending: a signal from now on exits at once (130).
pub fn set_ending() {
    ENDING.store(true, Ordering::SeqCst);
}

/// Whether the process's ending has begun.
pub fn ending() -> bool {
    ENDING.load(Ordering::SeqCst)
}

/// Live mode: every signal reaches the watcher, which decides whether the process ends.
pub fn set_live(live: bool) {
    LIVE.store(live, Ordering::SeqCst);
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

/// Keeps a group out of the tool calls' cleanup (see [`KEPT_GROUPS`]); false when every slot
/// is taken.
pub fn note_kept_group(pgid: u32) -> bool {
    let pgid = pgid as i32;
    KEPT_GROUPS
        .iter()
        .any(|slot| slot.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst).is_ok())
}

/// The group is gone (or being stopped): its slot is free again.
pub fn forget_kept_group(pgid: u32) {
    let pgid = pgid as i32;
    for slot in &KEPT_GROUPS {
        let _ = slot.compare_exchange(pgid, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// The groups kept now.
pub fn kept_groups() -> Vec<u32> {
    KEPT_GROUPS
        .iter()
        .map(|slot| slot.load(Ordering::SeqCst))
        .filter(|&pgid| pgid > 0)
        .map(|pgid| pgid as u32)
        .collect()
}

/// Starts `command` as a session of its own: its own process group (its pid), and no
/// controlling terminal, so nothing it runs can type into the user's terminal.
pub fn own_session(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only setsid, which is async-signal-safe, is called.
    unsafe {
        command.pre_exec(|| {
            if setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Starts `command` as a session of its own (so no other process can join its group, and it
/// has no terminal), which gets SIGTERM if zero dies without stopping it (SIGKILL, the OOM
/// killer).
pub fn own_session_with_death_signal(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let zero = std::process::id() as i32;
    // SAFETY: between fork and exec only async-signal-safe calls are made (setsid, prctl,
    // getppid, kill), with plain integer arguments and no allocation.
    unsafe {
        command.pre_exec(move || {
            if setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            prctl(PR_SET_PDEATHSIG, SIGTERM as u64, 0u64, 0u64, 0u64);
            // zero may have died before the prctl: then nothing would send it.
            if getppid() != zero {
                kill(0, SIGTERM);
            }
            Ok(())
        });
    }
}

/// Sends SIGTERM to every process of a group: the polite first step of stopping an MCP
/// server, which may want to clean up.
pub fn terminate_group(pgid: u32) {
    if pgid == 0 || pgid > i32::MAX as u32 {
        return;
    }
    // SAFETY: kill has no memory effects; a negative pid addresses a process group.
    unsafe {
        kill(-(pgid as i32), SIGTERM);
    }
}

/// A socket pair that wakes a `poll` waiting on a tool call when a live turn is interrupted
/// (an MCP call waits on its server's pipes, not on a child zero can kill).
fn interrupt_pair() -> Option<&'static (UnixStream, UnixStream)> {
    static PAIR: std::sync::OnceLock<Option<(UnixStream, UnixStream)>> = std::sync::OnceLock::new();
    PAIR.get_or_init(|| {
        let (reader, writer) = UnixStream::pair().ok()?;
        reader.set_nonblocking(true).ok()?;
        writer.set_nonblocking(true).ok()?;
        Some((reader, writer))
    })
    .as_ref()
}

/// The descriptor that becomes readable when a turn is interrupted (-1 without one).
pub fn interrupt_fd() -> i32 {
    use std::os::fd::AsRawFd;
    interrupt_pair().map_or(-1, |(reader, _)| reader.as_raw_fd())
}

/// Wakes whatever waits on [`interrupt_fd`] (from the signal watcher thread).
pub fn wake_interrupted() {
    use std::io::Write;
    if let Some((_, writer)) = interrupt_pair() {
        let _ = (&*writer).write(&[1]);
    }
}

/// Empties the interrupt socket, at the start of a turn.
pub fn clear_interrupted() {
    if let Some((reader, _)) = interrupt_pair() {
        let mut buf = [0u8; 64];
        while matches!((&*reader).read(&mut buf), Ok(n) if n > 0) {}
    }
}

/// Sends SIGKILL to one process.
pub fn kill_process(pid: u32) {
    if pid <= 1 || pid > i32::MAX as u32 {
        return;
    }
    // SAFETY: kill has no memory effects.
    unsafe {
        kill(pid as i32, SIGKILL);
    }
}

/// Collects the exit status of a child that has ended, without waiting: true when it was
/// collected (or is not our child at all).
pub fn reap(pid: u32) -> bool {
    if pid == 0 || pid > i32::MAX as u32 {
        return true;
    }
    let mut status = 0;
    // SAFETY: `status` is a valid out-pointer for the call.
    let result = unsafe { waitpid(pid as i32, &mut status, WNOHANG) };
    result != 0
}

/// Makes this process the reaper of its orphaned descendants, so that a process that left
/// its group is still below zero in the process tree.
pub fn become_subreaper() -> bool {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes one integer argument.
    unsafe { prctl(PR_SET_CHILD_SUBREAPER, 1u64, 0u64, 0u64, 0u64) == 0 }
}
