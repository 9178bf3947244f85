//! The standard streams as raw descriptors, written and read so that a line is never torn and a
//! wait is always possible: a descriptor whose file description is non-blocking (a Node.js
//! parent leaves its pipes so) answers `EAGAIN` when it is full or empty, and the call then
//! waits with `poll(2)` until it is ready, as a blocking descriptor would have.
//!
//! The ending of an interrupted run writes under a deadline ([`write_deadline`]): it waits with
//! `poll` before each write and writes at most `PIPE_BUF` bytes at a time, which a pipe that
//! `poll` calls writable takes whole without blocking, so a reader that stopped reading cannot
//! keep zero from exiting.
#![allow(unsafe_code)]

use std::io;
use std::sync::OnceLock;
use std::time::Instant;

use super::poll::{PollFd, POLLIN, POLLOUT};

const EINTR: i32 = 4;
const EAGAIN: i32 = 11;
/// The largest write a pipe takes whole (Linux's `PIPE_BUF`).
const PIPE_BUF: usize = 4096;

extern "C" {
    fn read(fd: i32, buf: *mut u8, count: usize) -> isize;
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
}

/// Once set, every write to the standard streams gives up at this instant.
static DEADLINE: OnceLock<Instant> = OnceLock::new();

/// From now on writes to stdout and stderr end at `deadline` (for the interrupted ending,
/// which must exit whatever the reader does). Set once; a later call changes nothing.
pub fn write_deadline(deadline: Instant) {
    let _ = DEADLINE.set(deadline);
}

/// Waits until `fd` is ready for `events`; false when the deadline passed first.
fn wait_for(fd: i32, events: i16, deadline: Option<Instant>) -> io::Result<bool> {
    let mut entry = [PollFd::new(fd, events)];
    Ok(super::poll::wait(&mut entry, deadline)? > 0)
}

/// A standard stream to write: stdout (1) or stderr (2).
#[derive(Debug, Clone, Copy)]
pub struct Output(i32);

pub fn stdout() -> Output {
    Output(1)
}

pub fn stderr() -> Output {
    Output(2)
}

impl io::Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let deadline = DEADLINE.get().copied();
        let buf = if deadline.is_some() { &buf[..buf.len().min(PIPE_BUF)] } else { buf };
        let mut ready = false;
        loop {
            if deadline.is_some() && !ready && !wait_for(self.0, POLLOUT, deadline)? {
                return Err(io::ErrorKind::TimedOut.into());
            }
            // SAFETY: `buf` is valid for reads of its length.
            let n = unsafe { write(self.0, buf.as_ptr(), buf.len()) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(EINTR) => ready = true,
                Some(EAGAIN) => {
                    if !wait_for(self.0, POLLOUT, deadline)? {
                        return Err(io::ErrorKind::TimedOut.into());
                    }
                    ready = true;
                }
                _ => return Err(err),
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes all of `bytes` to stdout in as few writes as it takes.
pub fn print(bytes: &[u8]) -> io::Result<()> {
    io::Write::write_all(&mut stdout(), bytes)
}

/// Writes one line to stderr, with its newline, in one write (errors ignored: a closed
/// stderr is no reason to fail).
pub fn eprint_line(line: &str) {
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    let _ = io::Write::write_all(&mut stderr(), &bytes);
}

/// Standard input, read without a buffer of its own (wrap it in a `BufReader`).
#[derive(Debug, Clone, Copy)]
pub struct Input;

pub fn stdin() -> Input {
    Input
}

impl io::Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            // SAFETY: `buf` is valid for writes of its length.
            let n = unsafe { read(0, buf.as_mut_ptr(), buf.len()) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(EINTR) => {}
                Some(EAGAIN) => {
                    wait_for(0, POLLIN, None)?;
                }
                _ => return Err(err),
            }
        }
    }
}
