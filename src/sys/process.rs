//! Child processes that cannot outlive their call: the bash tool and `ZERO_PROVIDER_COMMAND`.
//!
//! A command runs as `/bin/sh -c` in a session (and process group) of its own, without a
//! controlling terminal, with stdin at `/dev/null` and
//! stdout and stderr captured up to a cap (the rest is drained and counted). When it ends, or
//! at its deadline, every descendant of zero is killed: the group first, then anything that
//! left it (`setsid`, a daemon), which zero finds in `/proc` because it is the subreaper of its
//! orphans. Output is read until the pipes close, but no longer than a short grace after the
//! end, whatever still holds them.
//!
//! MCP stdio servers are the exception: they serve the whole run, so their process groups are
//! kept (left out of that cleanup) until the run stops them ([`stop_kept_groups`]): SIGTERM,
//! then SIGKILL after a grace, however zero ends.
//!
//! One command runs at a time (tool calls run in order); the lock that enforces it is what lets
//! "every descendant of zero" mean "every process this call started".

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard, Once, OnceLock};
use std::time::{Duration, Instant};

use super::poll::{self, PollFd, POLLIN};
use super::signals;

/// How long output is still read after the command ended or was killed.
const OUTPUT_GRACE: Duration = Duration::from_millis(500);
/// Rounds of "find descendants, kill them" before giving up on a process that keeps forking.
const KILL_ROUNDS: usize = 50;

/// The one command running at a time.
static RUNNING: Mutex<()> = Mutex::new(());
/// A kept group was ever started: the end sweeps for what its servers left behind.
static EVER_KEPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// How long a kept group has between SIGTERM and SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

fn become_subreaper_once() {
    static SUBREAPER: Once = Once::new();
    SUBREAPER.call_once(|| {
        // Without it (an old kernel), a process that leaves its group escapes the cleanup;
        // the group itself is still killed.
        let _ = signals::become_subreaper();
    });
}

/// A long-lived child in a session (and so a process group) of its own (an MCP stdio server):
/// stdin, stdout and stderr piped, kept out of the tool calls' cleanup until
/// [`stop_kept_groups`]. A command cannot join its group (another session), so it cannot hide
/// from its own cleanup there.
pub fn spawn_kept(mut command: Command) -> std::io::Result<std::process::Child> {
    become_subreaper_once();
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    signals::own_session_with_death_signal(&mut command);
    // The lock: no tool call's cleanup runs between the start and the registration.
    let _one = lock_running();
    let mut child = command.spawn()?;
    EVER_KEPT.store(true, std::sync::atomic::Ordering::SeqCst);
    if !signals::note_kept_group(child.id()) {
        signals::kill_group(child.id());
        let _ = child.wait();
        return Err(std::io::Error::other(format!(
            "more than {} servers run at once",
            signals::MAX_KEPT
        )));
    }
    Ok(child)
}

/// Stops every kept group: SIGTERM, up to [`STOP_GRACE`] for the leaders to exit, then
/// SIGKILL for whatever of the groups is left, and for every other descendant (a process a
/// server moved out of its group). Idempotent. Called only where no tool call runs.
pub fn stop_kept_groups() {
    // One stop at a time: a second caller (the signal watcher and the main thread, at the
    // same end) waits until the first is done, so neither exits half-way through the grace.
    static STOPPING: Mutex<()> = Mutex::new(());
    let _stopping = STOPPING.lock().unwrap_or_else(|p| p.into_inner());
    if !EVER_KEPT.load(std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    let groups = signals::kept_groups();
    for &pgid in &groups {
        signals::terminate_group(pgid);
    }
    let deadline = Instant::now() + STOP_GRACE;
    let exits: Vec<Option<OwnedFd>> = groups.iter().map(|&pid| poll::pidfd(pid)).collect();
    let mut left: Vec<u32> = groups.clone();
    while !left.is_empty() && Instant::now() < deadline {
        left.retain(|&pid| !signals::reap(pid));
        if left.is_empty() {
            break;
        }
        // Wait on the leaders' exits where pidfds exist, else look again soon.
        let mut fds: Vec<PollFd> = groups
            .iter()
            .zip(&exits)
            .filter(|(pid, _)| left.contains(pid))
            .map(|(_, fd)| PollFd::new(fd.as_ref().map_or(-1, AsRawFd::as_raw_fd), POLLIN))
            .collect();
        let soon = Instant::now() + EXIT_LOOK;
        let wake = if fds.iter().any(|f| f.fd < 0) { soon.min(deadline) } else { deadline };
        if poll::wait(&mut fds, Some(wake)).is_err() {
            break;
        }
    }
    for &pgid in &groups {
        signals::kill_group(pgid);
        signals::reap(pgid);
        signals::forget_kept_group(pgid);
    }
    // What a server started and sent out of its group (`setsid`) is below zero still.
    kill_descendants(None);
    reap_orphans(0);
}

/// Stops one kept group at once (a server that failed, or whose transport closed).
pub fn stop_kept_group(pgid: u32) {
    signals::kill_group(pgid);
    signals::reap(pgid);
    signals::forget_kept_group(pgid);
}

#[cfg(test)]
/// Runs `work` while no command runs. Code that starts other child processes in the same
/// process (tests) goes through here, so a call's cleanup never kills what it did not start.
pub fn serialized<T>(work: impl FnOnce() -> T) -> T {
    let _one = lock_running();
    work()
}

fn lock_running() -> MutexGuard<'static, ()> {
    RUNNING.lock().unwrap_or_else(|p| p.into_inner())
}

/// What to run.
pub struct Spec<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    pub timeout: Duration,
    /// Environment variables the command does not get.
    pub env_remove: &'a [OsString],
    pub stdout_cap: usize,
    pub stderr_cap: usize,
    /// The sandbox the command confines itself to (`None`: none).
    pub sandbox: Option<&'a std::sync::Arc<super::sandbox::Prepared>>,
    /// `TMPDIR` for the command, instead of zero's.
    pub tmpdir: Option<&'a Path>,
}

/// One captured stream: the first bytes and the total count.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    pub kept: Vec<u8>,
    pub total: u64,
}

/// How a command ended.
#[derive(Debug)]
pub struct Finished {
    /// `None` when the shell could not be waited for (killed, but not yet gone).
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    pub stdout: Captured,
    pub stderr: Captured,
}

/// A child's output pipe being read: what was kept, and the pipe while it is open.
struct Pipe {
    file: Option<std::fs::File>,
    captured: Captured,
    cap: usize,
}

impl Pipe {
    fn new(fd: Option<impl Into<OwnedFd>>, cap: usize) -> Pipe {
        let file = fd.map(|fd| std::fs::File::from(fd.into()));
        Pipe { file, captured: Captured::default(), cap }
    }

    /// The descriptor to poll (-1, which poll leaves out, once closed).
    fn fd(&self) -> i32 {
        self.file.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// Reads what is there (the pipe is readable); at its end, or on an error, closes it.
    fn read_ready(&mut self, chunk: &mut [u8]) {
        let Some(file) = &mut self.file else { return };
        match file.read(chunk) {
            Ok(0) => self.file = None,
            Ok(n) => {
                self.captured.total += n as u64;
                let room = self.cap.saturating_sub(self.captured.kept.len());
                self.captured.kept.extend_from_slice(&chunk[..n.min(room)]);
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => self.file = None,
        }
    }
}

/// Waits, in this thread, on the two pipes and the shell's exit (a pidfd) until `until` says
/// the wait is over or `deadline` passes; reads the pipes as they fill. Returns whether the
/// shell has exited. Without pidfds (Linux before 5.3) the exit is looked for every 20 ms.
fn pump(
    pipes: &mut [Pipe; 2],
    child: &mut std::process::Child,
    exit_fd: Option<&OwnedFd>,
    deadline: Instant,
    chunk: &mut [u8],
    until: impl Fn(&[Pipe; 2], bool) -> bool,
) -> bool {
    let mut exited = false;
    // A cancellation that came before the command's group was known to the interrupt path
    // (between the turn's check and the spawn) is seen here: the interrupt socket stays
    // readable until the next turn begins.
    let mut interrupt = signals::interrupt_fd();
    loop {
        if !exited {
            exited = matches!(child.try_wait(), Ok(Some(_)));
        }
        if until(pipes, exited) {
            return exited;
        }
        let now = Instant::now();
        if now >= deadline {
            return exited;
        }
        // Without a pidfd the exit cannot be waited on: look again soon.
        let wake = if exit_fd.is_none() && !exited { now + EXIT_LOOK } else { deadline };
        let mut fds = [
            PollFd::new(pipes[0].fd(), POLLIN),
            PollFd::new(pipes[1].fd(), POLLIN),
            PollFd::new(exit_fd.filter(|_| !exited).map_or(-1, |fd| fd.as_raw_fd()), POLLIN),
            PollFd::new(if exited { -1 } else { interrupt }, POLLIN),
        ];
        if poll::wait(&mut fds, Some(wake.min(deadline))).is_err() {
            return exited;
        }
        if fds[3].fd >= 0 && fds[3].ready() {
            signals::kill_group(child.id());
            interrupt = -1;
        }
        for (pipe, entry) in pipes.iter_mut().zip(&fds) {
            if entry.fd >= 0 && entry.ready() {
                pipe.read_ready(chunk);
            }
        }
    }
}

/// How often the shell's exit is looked for where there is no pidfd to wait on.
const EXIT_LOOK: Duration = Duration::from_millis(20);

/// Runs a shell command to its end or its deadline; nothing it started survives the call. It
/// all happens in the calling thread: the pipes and the shell's exit are waited on with
/// `poll`.
pub fn run_shell(spec: &Spec<'_>) -> std::io::Result<Finished> {
    become_subreaper_once();
    let _one = lock_running();
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(spec.command)
        .current_dir(spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in spec.env_remove {
        command.env_remove(name);
    }
    if let Some(tmpdir) = spec.tmpdir {
        command.env("TMPDIR", tmpdir);
    }
    // A session of its own (and so a process group): no controlling terminal to type into,
    // as in CI, and one group to kill.
    signals::own_session(&mut command);
    if let Some(sandbox) = spec.sandbox {
        super::sandbox::Prepared::apply_to(sandbox, &mut command);
    }
    // What already ran below zero (a daemon an MCP server started) is not this call's; without
    // servers nothing outlives a call, so there is nothing to look for.
    let before = if EVER_KEPT.load(std::sync::atomic::Ordering::SeqCst) {
        descendants(std::process::id()).0
    } else {
        Vec::new()
    };
    let mut child = command.spawn()?;
    let pid = child.id();
    signals::set_running_group(pid);
    let exit_fd = poll::pidfd(pid);
    let mut pipes = [
        Pipe::new(child.stdout.take(), spec.stdout_cap),
        Pipe::new(child.stderr.take(), spec.stderr_cap),
    ];
    let mut chunk = vec![0u8; 64 * 1024];
    let deadline = Instant::now() + spec.timeout;
    // Until the shell exits (its output is read meanwhile), or the deadline.
    let exited =
        pump(&mut pipes, &mut child, exit_fd.as_ref(), deadline, &mut chunk, |_, exited| exited);
    let timed_out = !exited;
    // Whether the shell finished or not, nothing it started may survive the call.
    signals::kill_group(pid);
    kill_descendants_but(Some(pid), &before);
    signals::clear_running_group();
    let grace = Instant::now() + OUTPUT_GRACE;
    if timed_out {
        // Killed: its exit comes at once.
        pump(&mut pipes, &mut child, exit_fd.as_ref(), grace, &mut chunk, |_, exited| exited);
    }
    let status = child.try_wait().ok().flatten();
    reap_orphans(pid);
    // Output still in the pipes is read, but only for a short while, whatever holds them.
    pump(&mut pipes, &mut child, exit_fd.as_ref(), grace, &mut chunk, |pipes, _| {
        pipes.iter().all(|p| p.file.is_none())
    });
    let [out, err] = pipes;
    Ok(Finished { status, timed_out, stdout: out.captured, stderr: err.captured })
}

/// Whether `/proc/<pid>/task/<tid>/children` exists on this kernel (CONFIG_PROC_CHILDREN): it
/// names a process's children directly, without reading every process's `stat`.
fn has_children_files() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        let me = std::process::id();
        Path::new(&format!("/proc/{me}/task/{me}/children")).exists()
    })
}

/// The children of `pid` (of all its threads), from the children files.
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let mut out = Vec::new();
    for task in tasks.filter_map(Result::ok) {
        if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(list.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
        }
    }
    out
}

/// `(pid, parent pid, zombie)` of every process, from `/proc/<pid>/stat` (empty without
/// `/proc`): the slower way, for kernels without children files. Kept groups are left out.
fn process_table() -> Vec<(u32, u32, bool)> {
    let kept = signals::kept_groups();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut table = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Some((ppid, zombie, group)) = stat_of(pid) {
            if !kept.contains(&group) {
                table.push((pid, ppid, zombie));
            }
        }
    }
    table
}

/// The parent, whether it is a zombie, and the process group, from `/proc/<pid>/stat`.
fn stat_of(pid: u32) -> Option<(u32, bool, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`; the command name may hold spaces and parentheses.
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let zombie = fields.next() == Some("Z");
    let ppid = fields.next()?.parse::<u32>().ok()?;
    let group = fields.next()?.parse::<u32>().ok()?;
    Some((ppid, zombie, group))
}

/// Every live descendant of `ancestor`, and the zombies among them.
fn descendants(ancestor: u32) -> (Vec<u32>, Vec<u32>) {
    if has_children_files() {
        descendants_by_children(ancestor)
    } else {
        descendants_in(&process_table(), ancestor)
    }
}

fn descendants_by_children(ancestor: u32) -> (Vec<u32>, Vec<u32>) {
    let kept = signals::kept_groups();
    let mut live = Vec::new();
    let mut zombies = Vec::new();
    let mut frontier = vec![ancestor];
    while let Some(parent) = frontier.pop() {
        for pid in children_of(parent) {
            match stat_of(pid) {
                Some((_, _, group)) if kept.contains(&group) => {}
                Some((_, true, _)) => zombies.push(pid),
                Some((_, false, _)) if !live.contains(&pid) => {
                    live.push(pid);
                    frontier.push(pid);
                }
                _ => {}
            }
        }
    }
    (live, zombies)
}

fn descendants_in(table: &[(u32, u32, bool)], ancestor: u32) -> (Vec<u32>, Vec<u32>) {
    let mut live = Vec::new();
    let mut zombies = Vec::new();
    let mut frontier = vec![ancestor];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid, zombie) in table {
            if ppid == parent && pid != ancestor {
                if zombie {
                    zombies.push(pid);
                } else if !live.contains(&pid) {
                    live.push(pid);
                    frontier.push(pid);
                }
            }
        }
    }
    (live, zombies)
}

/// Kills every descendant of zero, however far it went from its group, in rounds until none
/// is left. With `shell` (waited for by its owner), every other child that ended is reaped.
fn kill_descendants(shell: Option<u32>) {
    kill_descendants_but(shell, &[]);
}

/// [`kill_descendants`], sparing the processes in `spared` (those that ran before a call).
fn kill_descendants_but(shell: Option<u32>, spared: &[u32]) {
    let me = std::process::id();
    for _ in 0..KILL_ROUNDS {
        let (mut live, _) = descendants(me);
        live.retain(|pid| !spared.contains(pid));
        if live.is_empty() {
            return;
        }
        for pid in live {
            signals::kill_process(pid);
        }
        if let Some(shell) = shell {
            reap_orphans(shell);
        }
    }
}

/// Collects the exit status of zero's ended children other than `shell` (re-parented
/// orphans, a daemon an MCP server started among them), so they do not stay as zombies. The
/// MCP servers are zero's own children: their owners collect their exit, with its status.
fn reap_orphans(shell: u32) {
    let me = std::process::id();
    let (_, zombies) = descendants(me);
    let kept = signals::kept_groups();
    for pid in zombies {
        if pid != shell && !kept.contains(&pid) {
            signals::reap(pid);
        }
    }
}

/// For the interrupt path: kills the running command's group and every descendant, without
/// waiting for the command lock (the main thread may hold it).
pub fn kill_everything() {
    signals::kill_running_group();
    kill_descendants(None);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kit::process_gone_within;

    fn spec<'a>(command: &'a str, cwd: &'a Path, timeout_ms: u64) -> Spec<'a> {
        Spec {
            command,
            cwd,
            timeout: Duration::from_millis(timeout_ms),
            env_remove: &[],
            stdout_cap: 1024,
            stderr_cap: 1024,
            sandbox: None,
            tmpdir: None,
        }
    }

    #[test]
    fn both_ways_of_finding_descendants_agree() {
        serialized(|| {
            let mut command = Command::new("/bin/sh");
            command.args(["-c", "sleep 30 & sleep 30"]);
            signals::own_session(&mut command);
            let mut shell = command.spawn().unwrap();
            let me = std::process::id();
            let deadline = Instant::now() + Duration::from_secs(5);
            // The shell's two sleeps start soon after it does.
            let found = loop {
                let mut by_table = descendants_in(&process_table(), me).0;
                by_table.sort_unstable();
                if by_table.len() >= 3 || Instant::now() > deadline {
                    break by_table;
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            let mut by_files = descendants_by_children(me).0;
            by_files.sort_unstable();
            signals::kill_group(shell.id());
            let _ = shell.wait();
            assert!(found.contains(&shell.id()) && found.len() == 3, "{found:?}");
            if has_children_files() {
                assert_eq!(by_files, found);
            }
        });
    }

    #[test]
    fn output_and_status_are_captured_and_capped() {
        let dir = std::env::temp_dir();
        let done =
            run_shell(&spec("printf 'a%.0s' $(seq 2000); echo err >&2; exit 3", &dir, 10_000))
                .unwrap();
        assert_eq!(done.status.and_then(|s| s.code()), Some(3));
        assert!(!done.timed_out);
        assert_eq!((done.stdout.kept.len(), done.stdout.total), (1024, 2000));
        assert_eq!(done.stderr.kept, b"err\n");
    }

    #[test]
    fn a_process_that_left_the_group_is_killed_and_does_not_hold_the_call() {
        let dir = crate::testing::kit::TempDir::new("process-setsid");
        let marker = dir.join("pid");
        // The daemon keeps stdout open and sleeps far longer than the call may take.
        let command = format!(
            "setsid sh -c 'echo $$ > {}; exec sleep 60' & sleep 0.2; echo done",
            marker.display()
        );
        let started = Instant::now();
        let done = run_shell(&spec(&command, &dir.path, 30_000)).unwrap();
        assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
        assert_eq!(done.stdout.kept, b"done\n");
        let pid: u32 = std::fs::read_to_string(&marker).unwrap().trim().parse().unwrap();
        assert!(process_gone_within(pid, Duration::from_secs(5)), "the daemon {pid} survived");
    }

    #[test]
    fn a_deadline_holds_even_when_a_daemon_keeps_the_pipe() {
        let dir = crate::testing::kit::TempDir::new("process-deadline");
        let command = "setsid sleep 60 & sleep 60";
        let started = Instant::now();
        let done = run_shell(&spec(command, &dir.path, 300)).unwrap();
        assert!(done.timed_out);
        assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    }
}
