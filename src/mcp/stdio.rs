//! The stdio transport: the server is a child process in its own process group, kept out of
//! the tool calls' cleanup; JSON-RPC goes one message per line over its stdin and stdout, and
//! the last 8 KiB of its stderr are kept for error messages (never copied to zero's output).
//! Every pipe is non-blocking, so a server that stops reading or writing cannot hold zero past
//! a deadline.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::wire::LinkError;
use super::wire::MAX_MESSAGE_BYTES;
use crate::sys::poll::{self, PollFd, POLLIN, POLLOUT};
use crate::sys::process;

/// How much of the server's stderr is kept.
const STDERR_TAIL: usize = 8 * 1024;
/// Bytes of stdout read at one go: a server that writes without pause cannot keep zero reading
/// (and its lines piling up) instead of looking at its deadline.
const READ_AT_ONCE: usize = 1024 * 1024;

pub struct StdioLink {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    /// Bytes of stdout after the last complete line.
    partial: Vec<u8>,
    lines: VecDeque<String>,
    tail: VecDeque<u8>,
    /// Why the link is closed, once it is.
    closed: Option<String>,
    /// Readable when the server exits (a pidfd): a child of its that holds its pipes open
    /// must not hide its death.
    exit: Option<std::os::fd::OwnedFd>,
    /// Held while a message is written to stdin, by this link or by a signal's ending telling
    /// the server a call is cancelled: two messages never mix on the pipe.
    writing: Arc<Mutex<()>>,
}

/// Where a pending call's cancellation goes when a signal ends the run: the server's stdin
/// (another descriptor of it, non-blocking like the link's) and the link's write lock.
pub struct Notifier {
    stdin: std::os::fd::OwnedFd,
    writing: Arc<Mutex<()>>,
}

impl Notifier {
    /// Writes `message` as one line, within `within`; nothing when the link is writing (half a
    /// message of its own would be on the pipe) or the pipe stays full.
    pub fn notify(&self, message: &Value, within: Duration) {
        let deadline = Instant::now() + within;
        let Some(_writing) = crate::sys::threads::lock_for(&self.writing, within) else { return };
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        let mut pipe = std::fs::File::from(match self.stdin.try_clone() {
            Ok(fd) => fd,
            Err(_) => return,
        });
        let mut written = 0;
        while written < line.len() && Instant::now() < deadline {
            match pipe.write(&line[written..]) {
                Ok(n) => written += n,
                Err(err) if err.kind() == ErrorKind::WouldBlock => {
                    let mut fds = [PollFd::new(pipe.as_raw_fd(), POLLOUT)];
                    let _ = poll::wait(&mut fds, Some(deadline));
                }
                Err(err) if err.kind() == ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }
}

/// What starting a server needs besides its configuration.
pub struct Launch<'a> {
    pub command: &'a str,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    pub cwd: &'a Path,
    /// The variables `bash` does not get either (names that look secret).
    pub env_remove: &'a [OsString],
}

impl StdioLink {
    pub fn start(launch: &Launch<'_>) -> Result<StdioLink, LinkError> {
        if !launch.cwd.is_dir() {
            return Err(LinkError::Setup(format!(
                "cwd {} is not a directory",
                launch.cwd.display()
            )));
        }
        let mut command = Command::new(launch.command);
        command.args(launch.args).current_dir(launch.cwd);
        for name in launch.env_remove {
            command.env_remove(name);
        }
        command.envs(launch.env.iter().map(|(k, v)| (k, v)));
        let mut child = process::spawn_kept(command).map_err(|err| {
            let hint = if err.kind() == ErrorKind::NotFound && launch.command.contains(' ') {
                " (command names one program; its arguments go in args)"
            } else {
                ""
            };
            LinkError::Setup(format!(
                "cannot start {}: {}{hint}",
                launch.command,
                crate::net::http::io_text(&err)
            ))
        })?;
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let nonblocking = [
            stdin.as_ref().map(poll::set_nonblocking),
            stdout.as_ref().map(poll::set_nonblocking),
            stderr.as_ref().map(poll::set_nonblocking),
        ];
        if nonblocking.iter().any(|r| !matches!(r, Some(Ok(())))) {
            process::stop_kept_group(child.id());
            return Err(LinkError::Setup("cannot set up its pipes".to_string()));
        }
        let exit = poll::pidfd(child.id());
        Ok(StdioLink {
            exit,
            child,
            stdin,
            stdout,
            stderr,
            partial: Vec::new(),
            lines: VecDeque::new(),
            tail: VecDeque::new(),
            closed: None,
            writing: Arc::new(Mutex::new(())),
        })
    }

    /// What a signal's ending uses to reach the server (`None` once its stdin is closed).
    pub fn notifier(&self) -> Option<Notifier> {
        use std::os::fd::AsFd;
        let stdin = self.stdin.as_ref()?.as_fd().try_clone_to_owned().ok()?;
        Some(Notifier { stdin, writing: self.writing.clone() })
    }

    /// Writes one message as a line, by `deadline`; the server's output is read meanwhile, so
    /// a server blocked writing cannot deadlock with zero writing.
    pub fn send(
        &mut self,
        message: &Value,
        deadline: Instant,
        interrupt_fd: i32,
    ) -> Result<(), LinkError> {
        if let Some(why) = &self.closed {
            return Err(LinkError::Closed(why.clone()));
        }
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        let writing = self.writing.clone();
        let _writing = writing.lock().unwrap_or_else(|p| p.into_inner());
        let mut written = 0;
        while written < line.len() {
            let Some(stdin) = self.stdin.as_mut() else {
                return Err(LinkError::Closed(self.close("closed its stdin")));
            };
            match stdin.write(&line[written..]) {
                Ok(n) => written += n,
                Err(err) if err.kind() == ErrorKind::WouldBlock => {
                    let mut fds = [
                        PollFd::new(stdin.as_raw_fd(), POLLOUT),
                        PollFd::new(self.fd_out(), POLLIN),
                        PollFd::new(self.fd_err(), POLLIN),
                        PollFd::new(interrupt_fd, POLLIN),
                    ];
                    if Instant::now() >= deadline {
                        return Err(LinkError::Timeout(
                            "stopped reading its input (a message could not be written in time)"
                                .to_string(),
                        ));
                    }
                    let _ = poll::wait(&mut fds, Some(deadline));
                    // Half a message cannot be taken back: the link is given up.
                    if fds[3].ready() {
                        return Err(LinkError::Interrupted(
                            "an interrupt came while a message was being written to it".to_string(),
                        ));
                    }
                    if fds[1].ready() || fds[2].ready() {
                        self.read_available();
                    }
                }
                Err(err) if err.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Err(LinkError::Closed(self.close_with_status())),
            }
        }
        Ok(())
    }

    fn fd_out(&self) -> i32 {
        self.stdout.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    fn fd_err(&self) -> i32 {
        self.stderr.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// The descriptors to wait on for what the server says (and for its exit).
    pub fn fds(&self) -> [i32; 3] {
        let exit =
            self.exit.as_ref().filter(|_| self.closed.is_none()).map_or(-1, AsRawFd::as_raw_fd);
        [self.fd_out(), self.fd_err(), exit]
    }

    /// The complete lines read so far (reading what is there first); an error once the
    /// server has closed its output or sent a line over the limit.
    pub fn receive(&mut self) -> Result<Vec<String>, LinkError> {
        self.read_available();
        // The server exited while something else holds its output open: what it said before
        // is delivered first, then its exit.
        if self.lines.is_empty() && self.closed.is_none() {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.close(&format!("exited ({status})"));
            }
        }
        let lines: Vec<String> = self.lines.drain(..).collect();
        match (&self.closed, lines.is_empty()) {
            (Some(why), true) => Err(LinkError::Closed(why.clone())),
            _ => Ok(lines),
        }
    }

    /// Reads what both pipes hold now (stdout up to [`READ_AT_ONCE`]; the rest waits for the
    /// next look, which `poll` makes at once).
    fn read_available(&mut self) {
        let mut chunk = [0u8; 64 * 1024];
        while let Some(stderr) = self.stderr.as_mut() {
            match stderr.read(&mut chunk) {
                Ok(0) => self.stderr = None,
                Ok(n) => {
                    self.tail.extend(&chunk[..n]);
                    let over = self.tail.len().saturating_sub(STDERR_TAIL);
                    self.tail.drain(..over);
                }
                Err(err) if err.kind() == ErrorKind::Interrupted => {}
                Err(err) if err.kind() == ErrorKind::WouldBlock => break,
                Err(_) => self.stderr = None,
            }
        }
        let mut read = 0;
        while let Some(stdout) = self.stdout.as_mut().filter(|_| read < READ_AT_ONCE) {
            match stdout.read(&mut chunk) {
                Ok(0) => {
                    self.stdout = None;
                    if self.closed.is_none() {
                        self.close_with_status();
                    }
                }
                Ok(n) => {
                    read += n;
                    self.take_lines(&chunk[..n]);
                }
                Err(err) if err.kind() == ErrorKind::Interrupted => {}
                Err(err) if err.kind() == ErrorKind::WouldBlock => break,
                Err(_) => {
                    self.stdout = None;
                    self.close_with_status();
                }
            }
        }
    }

    fn take_lines(&mut self, bytes: &[u8]) {
        if !split_lines(&mut self.partial, bytes, &mut self.lines) {
            self.close(&format!("sent a message over {} MiB", MAX_MESSAGE_BYTES >> 20));
        }
    }

    /// Closes the link for good: the server's group is stopped; later sends and receives
    /// give `why`.
    pub fn close(&mut self, why: &str) -> String {
        if self.closed.is_none() {
            self.closed = Some(why.to_string());
            self.stdin = None;
            process::stop_kept_group(self.child.id());
        }
        self.closed.clone().unwrap_or_default()
    }

    /// The server closed its output: why, with its exit status when it has one by now.
    fn close_with_status(&mut self) -> String {
        let exit = poll::pidfd(self.child.id());
        let deadline = Instant::now() + Duration::from_millis(200);
        let mut status = self.child.try_wait().ok().flatten();
        if status.is_none() {
            if let Some(fd) = &exit {
                let _ = poll::wait(&mut [PollFd::new(fd.as_raw_fd(), POLLIN)], Some(deadline));
                status = self.child.try_wait().ok().flatten();
            }
        }
        let why = match status {
            Some(status) => format!("exited ({status})"),
            None => "closed its output".to_string(),
        };
        self.close(&why)
    }

    /// The last non-empty line of the server's stderr.
    pub fn last_stderr_line(&mut self) -> Option<String> {
        self.read_available();
        let bytes: Vec<u8> = self.tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        // Not cut: a cut could leave part of a secret the redactor then cannot recognise; the
        // tail itself is bounded.
        text.lines().rev().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
    }

    /// Ends the server politely: its stdin is closed, which tells an MCP server to exit; the
    /// run's end stops its group (SIGTERM, then SIGKILL).
    pub fn hang_up(&mut self) {
        self.stdin = None;
    }
}

/// Splits what a server wrote into its messages, one per line (`\r\n` too; blank lines are
/// not messages). `partial` holds a line not finished yet between reads. `false`: the
/// unfinished line passed [`MAX_MESSAGE_BYTES`] (it is dropped, and the link must close).
pub(crate) fn split_lines(
    partial: &mut Vec<u8>,
    bytes: &[u8],
    lines: &mut VecDeque<String>,
) -> bool {
    let mut rest = bytes;
    while let Some(end) = rest.iter().position(|&b| b == b'\n') {
        partial.extend_from_slice(&rest[..end]);
        rest = &rest[end + 1..];
        let line = std::mem::take(partial);
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\r');
        if !text.trim().is_empty() {
            lines.push_back(text.to_string());
        }
    }
    partial.extend_from_slice(rest);
    if partial.len() > MAX_MESSAGE_BYTES {
        *partial = Vec::new();
        return false;
    }
    true
}
