//! `poll(2)` over a few descriptors, and `pidfd_open(2)`, which makes a child's exit one more
//! descriptor to wait on: the shell tool and the standard streams wait this way, in the
//! calling thread, with no thread per pipe.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Instant;

pub const POLLIN: i16 = 0x1;
pub const POLLOUT: i16 = 0x4;
const EINTR: i32 = 4;
/// `pidfd_open` on every 64-bit Linux architecture zero runs on (the generic table).
const SYS_PIDFD_OPEN: i64 = 434;

/// One entry of a `poll` call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PollFd {
    pub fd: i32,
    pub events: i16,
    pub revents: i16,
}

impl PollFd {
    pub fn new(fd: i32, events: i16) -> PollFd {
        PollFd { fd, events, revents: 0 }
    }

    /// Ready, or at an error or hang-up that the next read or write reports.
    pub fn ready(&self) -> bool {
        self.revents != 0
    }
}

extern "C" {
    fn poll(fds: *mut PollFd, nfds: u64, timeout: i32) -> i32;
    fn syscall(number: i64, ...) -> i64;
    fn fcntl(fd: i32, cmd: i32, ...) -> i32;
}

const F_GETFL: i32 = 3;
const F_SETFL: i32 = 4;
const O_NONBLOCK: i32 = 0o4000;

/// Makes reads and writes on `fd` return `WouldBlock` instead of waiting: a pipe to a child
/// that stopped reading must not hold zero past a deadline (MCP servers' stdin).
pub fn set_nonblocking(fd: &impl std::os::fd::AsRawFd) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl with F_GETFL/F_SETFL takes and returns plain integers.
    let flags = unsafe { fcntl(fd, F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { fcntl(fd, F_SETFL, flags | O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Waits until one of `fds` is ready or `deadline` passes (`None`: no deadline); a negative
/// descriptor is left out, as poll does. Returns how many are ready (0 at the deadline).
pub fn wait(fds: &mut [PollFd], deadline: Option<Instant>) -> io::Result<usize> {
    loop {
        let timeout = match deadline {
            None => -1,
            Some(at) => {
                let left = at.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    0
                } else {
                    // Rounded up, so a wait never ends just before its deadline.
                    left.as_millis().saturating_add(1).min(i32::MAX as u128) as i32
                }
            }
        };
        for entry in fds.iter_mut() {
            entry.revents = 0;
        }
        // SAFETY: `fds` is a valid array of pollfd for the duration of the call.
        let ready = unsafe { poll(fds.as_mut_ptr(), fds.len() as u64, timeout) };
        if ready >= 0 {
            if ready == 0 && deadline.is_some_and(|at| Instant::now() < at) {
                // Woken early (a timeout rounded by the kernel): wait on.
                continue;
            }
            return Ok(ready as usize);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(EINTR) {
            return Err(err);
        }
    }
}

/// A descriptor that becomes readable when process `pid` (a child) exits; `None` on a kernel
/// without `pidfd_open` (before Linux 5.3).
pub fn pidfd(pid: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { syscall(SYS_PIDFD_OPEN, pid as i64, 0i64) };
    if fd < 0 || fd > i32::MAX as i64 {
        return None;
    }
    // SAFETY: the descriptor was just returned to us and is owned by nothing else.
    Some(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}
