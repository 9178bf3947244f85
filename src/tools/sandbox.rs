//! `bash`'s sandbox as a run decides it: the mode (`off`, `read-only`, `workspace-write`), the
//! network, the directories a command may write, what this kernel enforces of that, and the
//! line a command's output gets when the sandbox is why it failed. The confinement itself is
//! `sys::sandbox`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::sys::sandbox::{self, Policy, Prepared, Support};

/// `--sandbox`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Off,
    ReadOnly,
    WorkspaceWrite,
}

impl Mode {
    pub fn parse(value: &str) -> Option<Mode> {
        match value.trim() {
            "off" => Some(Mode::Off),
            "read-only" => Some(Mode::ReadOnly),
            "workspace-write" => Some(Mode::WorkspaceWrite),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::ReadOnly => "read-only",
            Mode::WorkspaceWrite => "workspace-write",
        }
    }
}

/// What the run asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub mode: Mode,
    /// `--sandbox-network on` (the default).
    pub network: bool,
    /// `--sandbox-writable`, absolute.
    pub writable: Vec<PathBuf>,
    /// `--sandbox-caches on` (the default): the build caches that exist are writable.
    pub caches: bool,
}

/// The devices every command may write (and the directories of terminals and shared memory).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// The build caches (under the home directory) that tools fail or complain without.
const HOME_CACHES: &[&str] = &[
    ".cargo/registry",
    ".cargo/git",
    ".cargo/.package-cache",
    ".npm",
    "go/pkg/mod",
    ".m2/repository",
    ".gradle/caches",
];

/// The sandbox of a run: what is asked, what is enforced, and the prepared rules.
#[derive(Clone)]
pub struct Sandbox {
    pub request: Request,
    /// The Landlock ABI used (`None`: filesystem rules not enforced).
    pub abi: Option<u32>,
    /// The network filter is enforced.
    pub network_enforced: bool,
    /// Where commands may write (absolute), for the failure line.
    pub writable: Vec<PathBuf>,
    /// The temp directory of the run's own that commands get as `TMPDIR`, when every temp
    /// directory holds the home directory (removed when the run ends).
    tmpdir: Option<Arc<OwnTemp>>,
    prepared: Option<Arc<Prepared>>,
}

/// A temp directory made for one run's commands; it goes with the run.
struct OwnTemp(PathBuf);

impl Drop for OwnTemp {
    fn drop(&mut self) {
        // `remove_dir_all` removes links, never what they point to.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Makes `/tmp/zero-bash-<pid>-<random>`, readable and writable by this user only.
fn own_temp() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = PathBuf::from(format!(
        "/tmp/zero-bash-{}-{}",
        std::process::id(),
        crate::clock::random_base36(8)
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

/// The environment the policy reads: temp, cache and home directories, and zero's own.
pub struct Places<'a> {
    pub tmpdir: Option<&'a str>,
    pub home: Option<&'a str>,
    pub xdg_cache: Option<&'a str>,
    /// What a later run trusts: zero's config directory (its config file, MCP servers, the
    /// user's AGENTS.md) and its data directory (the sessions a run resumes).
    pub zero_dirs: Vec<PathBuf>,
}

/// What a run's bash may write besides its roots and git's directories, before the rules
/// below narrow it: the temp directories, the build caches that exist, `--sandbox-writable`.
fn besides_roots(request: &Request, places: &Places<'_>) -> Vec<PathBuf> {
    let mut writable = vec![PathBuf::from("/tmp")];
    if let Some(tmp) = places.tmpdir.filter(|t| t.starts_with('/')) {
        writable.push(PathBuf::from(tmp));
    }
    if request.caches {
        let cache = places
            .xdg_cache
            .map(PathBuf::from)
            .or_else(|| places.home.map(|h| Path::new(h).join(".cache")));
        writable.extend(cache.filter(|c| c.exists()));
        if let Some(home) = places.home {
            writable
                .extend(HOME_CACHES.iter().map(|c| Path::new(home).join(c)).filter(|c| c.exists()));
        }
    }
    writable.extend(request.writable.iter().cloned());
    writable
}

/// The directories where a command of this run could have written before, besides the
/// workspace: a `.git` found in one of them cannot be trusted (`tools::repository`). They are
/// the same whatever the sandbox's mode, so the repository a run sees does not depend on it.
pub fn plantable(request: &Request, places: &Places<'_>, added_roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs = besides_roots(request, places);
    dirs.extend(added_roots.iter().cloned());
    dirs.into_iter().map(|d| std::fs::canonicalize(&d).unwrap_or(d)).collect()
}

/// Whether `dir` holds `inner` (or is it), links resolved where they can be.
fn holds(dir: &Path, inner: &Path) -> bool {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    real(inner).starts_with(real(dir))
}

/// The workspace and its added roots, and the repository's git directories outside them
/// (git keeps its data outside a workspace that is a subdirectory of a repository, or a
/// worktree: without it, `git commit` fails). Never a directory that holds the workspace's
/// parent or the home directory, however it was found: that one goes to `narrowed`.
fn workspace_writable(
    roots: &[PathBuf],
    git_dirs: &[PathBuf],
    home: Option<&Path>,
    narrowed: &mut Vec<String>,
) -> Vec<PathBuf> {
    let mut writable = roots.to_vec();
    let parent = roots.first().and_then(|w| w.parent());
    for dir in git_dirs {
        let broad = parent.is_some_and(|p| holds(dir, p)) || home.is_some_and(|h| holds(dir, h));
        if broad {
            narrowed.push(format!(
                "bash's sandbox does not make {} writable, as it holds the workspace's parent or the home directory.",
                dir.display()
            ));
        } else {
            writable.push(dir.clone());
        }
    }
    writable
}

/// The temp, cache and `--sandbox-writable` directories, and the temp directory of the
/// commands' own when none is left (`commands_run`: bash may run in this run).
fn temp_writable(
    request: &Request,
    places: &Places<'_>,
    commands_run: bool,
    narrowed: &mut Vec<String>,
) -> (Vec<PathBuf>, Option<Arc<OwnTemp>>) {
    let home = places.home.map(Path::new);
    let temps = [Some("/tmp"), places.tmpdir.filter(|t| t.starts_with('/'))];
    let from_env = [places.tmpdir, places.xdg_cache];
    let mut others = besides_roots(request, places);
    // A temp or cache directory that holds the home directory (`TMPDIR=/`, a CI
    // container's `HOME=/tmp/home`, `XDG_CACHE_HOME=$HOME`) would open all of it, its
    // programs and dotfiles included; one that holds zero's own directories
    // (`XDG_CONFIG_HOME=/tmp/config`) would let a command change what the next run trusts:
    // it is left out, and said.
    let mut temp_note = None;
    others.retain(|dir| {
        let temp = temps.iter().flatten().any(|t| Path::new(t) == dir);
        let named = from_env.iter().flatten().any(|v| Path::new(v) == dir);
        let what = if dir == Path::new("/") || home.is_some_and(|h| holds(dir, h)) {
            Some("the home directory".to_string())
        } else {
            places.zero_dirs.iter().find(|own| holds(dir, own)).map(|own| {
                format!("zero's own directory {}, which later runs trust", own.display())
            })
        };
        let broad = what.is_some();
        if temp && broad && temp_note.is_none() {
            temp_note = Some(narrowed.len());
        }
        if let Some(what) = what.filter(|_| temp || named) {
            narrowed.push(format!(
                "bash's sandbox does not make {} writable, as it holds {what}.",
                dir.display()
            ));
        }
        !((temp || named) && broad)
    });
    // No temp directory left: commands get one of their own as TMPDIR.
    let temp_left = temps.iter().flatten().any(|t| others.iter().any(|o| o == Path::new(t)));
    let mut tmpdir = None;
    if !temp_left && commands_run {
        let said = match own_temp() {
            Ok(own) => {
                let said = format!("; its commands get TMPDIR={} instead", own.display());
                others.push(own.clone());
                tmpdir = Some(Arc::new(OwnTemp(own)));
                said
            }
            Err(err) => format!("; no temp directory of its own could be made ({err})"),
        };
        if let Some(note) = temp_note.and_then(|i| narrowed.get_mut(i)) {
            note.insert_str(note.len() - 1, &said);
        }
    }
    (others, tmpdir)
}

/// What this kernel does not enforce of what was asked.
fn unenforced(request: &Request, support: Support) -> Vec<String> {
    let mut missing = Vec::new();
    if request.mode != Mode::Off {
        match support.landlock {
            None => missing.push(format!("writes are not confined (--sandbox {}): this kernel has no Landlock", request.mode.name())),
            Some(abi) if abi < 3 => missing.push(format!("truncating a file outside the writable directories is not refused (Landlock ABI {abi} has no truncate right)")),
            _ => {}
        }
    }
    // What only the seccomp filter refuses.
    let mut unfiltered = Vec::new();
    if !request.network {
        unfiltered.push("network sockets (--sandbox-network off)");
    }
    if request.mode != Mode::Off {
        unfiltered.push("typing into a terminal (TIOCSTI)");
        unfiltered.push("setting extended attributes");
    }
    if !support.seccomp && !unfiltered.is_empty() {
        missing.push(format!(
            "{} are not refused: this kernel has no seccomp filters",
            unfiltered.join(", ")
        ));
    }
    missing
}

impl Sandbox {
    /// The sandbox for `request` on this kernel (`support`, which a test may override), for a
    /// workspace and its added roots (`roots`, the workspace first) and the repository's git
    /// directories outside them. Returns it, the warning to give when something asked for is
    /// not enforced, and what was not made writable (and why). `commands_run`: bash may run
    /// in this run (else nothing is made for its commands).
    pub fn build(
        request: &Request,
        support: Support,
        roots: &[PathBuf],
        git_dirs: &[PathBuf],
        places: &Places<'_>,
        commands_run: bool,
    ) -> Result<(Sandbox, Option<String>, Vec<String>), sandbox::SandboxError> {
        let mut narrowed = Vec::new();
        let home = places.home.map(Path::new);
        let mut writable: Vec<PathBuf> = Vec::new();
        if request.mode == Mode::WorkspaceWrite {
            writable = workspace_writable(roots, git_dirs, home, &mut narrowed);
        }
        let mut tmpdir = None;
        if request.mode != Mode::Off {
            let (others, own) = temp_writable(request, places, commands_run, &mut narrowed);
            writable.extend(others);
            tmpdir = own;
        }
        let mut sandbox = Sandbox {
            request: request.clone(),
            abi: None,
            network_enforced: false,
            writable,
            tmpdir,
            prepared: None,
        };
        if request.mode == Mode::Off && request.network {
            return Ok((sandbox, None, narrowed));
        }
        let abi = support.landlock.filter(|_| request.mode != Mode::Off);
        let missing = unenforced(request, support);
        let network_off = !request.network;
        sandbox.abi = abi;
        sandbox.network_enforced = network_off && support.seccomp;
        let policy = Policy {
            writable: sandbox.writable.clone(),
            devices: DEVICES.iter().map(PathBuf::from).collect(),
            no_network: sandbox.network_enforced,
            no_terminal_input_or_xattrs: request.mode != Mode::Off && support.seccomp,
        };
        if abi.is_some() || policy.no_network || policy.no_terminal_input_or_xattrs {
            sandbox.prepared = Some(Arc::new(sandbox::prepare(&policy, abi)?));
        }
        let warning = (!missing.is_empty())
            .then(|| format!("The bash sandbox is not fully enforced: {}.", missing.join("; ")));
        Ok((sandbox, warning, narrowed))
    }

    /// No sandbox at all (`--sandbox off`, network on).
    pub fn off() -> Sandbox {
        Sandbox {
            request: Request { mode: Mode::Off, network: true, writable: Vec::new(), caches: true },
            abi: None,
            network_enforced: false,
            writable: Vec::new(),
            tmpdir: None,
            prepared: None,
        }
    }

    /// The `TMPDIR` commands get instead of the environment's (see [`Sandbox::tmpdir`]).
    pub fn tmpdir(&self) -> Option<&Path> {
        self.tmpdir.as_deref().map(|t| t.0.as_path())
    }

    pub fn prepared(&self) -> Option<&Arc<Prepared>> {
        self.prepared.as_ref()
    }

    /// `run_start.sandbox`'s `enforcement`: `landlock-v<N>` or `none`.
    pub fn enforcement(&self) -> String {
        match self.abi {
            Some(abi) => format!("landlock-v{abi}"),
            None => "none".to_string(),
        }
    }

    /// What confines bash, for the warning of a run whose level lets it run (`None` when
    /// nothing does: `--sandbox off`, or a kernel without Landlock).
    pub fn confinement(&self) -> Option<String> {
        self.abi?;
        let mode = self.request.mode;
        let mut places = Vec::new();
        if mode == Mode::WorkspaceWrite {
            places.push("the workspace");
            places.push("its --add-dir directories");
        }
        places.push("the temp directories");
        if !self.request.writable.is_empty() {
            places.push("the --sandbox-writable directories");
        }
        if self.request.caches {
            places.push("the build caches");
        }
        let last = places.pop().unwrap_or_default();
        let places = match places.is_empty() {
            true => last.to_string(),
            false => format!("{} and {last}", places.join(", ")),
        };
        let network = if self.request.network { "on" } else { "off" };
        Some(format!(
            "bash runs in its sandbox (--sandbox {}): commands write only in {places}; network {network}.",
            mode.name()
        ))
    }

    /// `run_start.sandbox`.
    pub fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "mode": self.request.mode.name(),
            "network": if self.request.network { "on" } else { "off" },
            "enforcement": self.enforcement(),
        })
    }

    /// The line a failed command's output gets when the sandbox refused it: its exit status
    /// is not 0 and its stderr says a write to a path outside the writable set was refused
    /// (relative paths against the command's directory), in any of the forms programs use:
    /// coreutils and shells, Python, Node, Go, Rust and Java.
    pub fn refusal_note(&self, status_ok: bool, stderr: &str, cwd: &Path) -> Option<String> {
        self.refusal_note_judging(status_ok, stderr, cwd, &state_of)
    }

    /// [`Sandbox::refusal_note`], with `state` saying what a path is to zero.
    fn refusal_note_judging(
        &self,
        status_ok: bool,
        stderr: &str,
        cwd: &Path,
        state: &dyn Fn(&Path) -> PathState,
    ) -> Option<String> {
        if status_ok || self.abi.is_none() {
            return None;
        }
        let outside = |p: &PathBuf| {
            let path =
                resolved(&lexical(&if p.is_absolute() { p.clone() } else { cwd.join(p) }), 0);
            (!self.writable.iter().any(|w| path.starts_with(w))).then_some(path)
        };
        let refused = stderr.lines().any(|line| {
            let Some(writing) = denial(line) else { return false };
            let paths: Vec<PathBuf> = paths_in(line).iter().filter_map(outside).collect();
            // Rust's own message names no path: `Permission denied (os error 13)`.
            let bare_rust = (line.contains("(os error 13)") || line.contains("(os error 1)"))
                && paths_in(line).iter().all(|p| p.is_relative() && !p.exists());
            // Reading is never refused by the sandbox: without a verb that says a write, the
            // path's state decides. A name not there yet was being made; one zero can read was
            // refused for something else than reading, unless a shell could not run it.
            bare_rust
                || paths.iter().any(|path| match state(path) {
                    _ if writing => true,
                    PathState::Missing => true,
                    PathState::Readable => !shell_could_not_run(line, path),
                    PathState::Unreadable => false,
                })
        });
        refused.then(|| match self.request.mode {
            Mode::ReadOnly => "[sandbox: writes are refused (--sandbox read-only)]".to_string(),
            _ => "[sandbox: writes outside the workspace are refused (--sandbox workspace-write)]"
                .to_string(),
        })
    }
}

/// Whether a line of stderr reports a refused operation (`Some`), and whether it says the
/// operation was a write (`Some(true)`: a verb of writing).
fn denial(line: &str) -> Option<bool> {
    let lower = line.to_ascii_lowercase();
    let denied =
        ["EACCES", "EPERM", "Operation not permitted", "Read-only", "AccessDeniedException"]
            .iter()
            .any(|m| line.contains(m))
            || lower.contains("permission denied");
    if !denied {
        return None;
    }
    let writing = [
        "creat",
        "touch",
        "remov",
        "move",
        "writ",
        "mkdir",
        "directory",
        "renam",
        "link",
        "read-only",
        "truncat",
        "lock",
        "unlink",
        "rmdir",
    ]
    .iter()
    .any(|w| lower.contains(w));
    Some(writing)
}

/// What a path named in a refusal is to zero (the command, the same user, sees the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathState {
    /// Not there: the refused operation was making it.
    Missing,
    /// zero can read it: reading it was not what was refused.
    Readable,
    /// zero cannot read it either: its mode refused a read.
    Unreadable,
}

fn state_of(path: &Path) -> PathState {
    match crate::sys::dirfd::open_path_nonblocking(path) {
        Ok(_) => PathState::Readable,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => PathState::Missing,
        Err(_) => PathState::Unreadable,
    }
}

/// A shell that could not run a program (`sh: 1: ./run.sh: Permission denied`): the path is
/// a regular file without an execute bit, named by a shell's error.
fn shell_could_not_run(line: &str, path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let program = line.split(':').next().unwrap_or_default().trim();
    let shell = ["sh", "bash", "dash", "zsh", "ksh", "ash"]
        .iter()
        .any(|s| program == *s || program.ends_with(&format!("/{s}")));
    shell
        && std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 == 0)
}

/// Where a path leads, as Landlock judges it: links followed (a dangling one too), and for a
/// name that does not exist yet, its nearest existing directory resolved with the rest added.
fn resolved(path: &Path, depth: usize) -> PathBuf {
    if depth < 8 {
        if let Ok(target) = std::fs::read_link(path) {
            let base = path.parent().unwrap_or(Path::new("/"));
            return resolved(&lexical(&base.join(target)), depth + 1);
        }
    }
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if depth < 64 => resolved(parent, depth + 1).join(name),
        _ => path.to_path_buf(),
    }
}

/// A path with `.` and `..` taken out by their names alone (the refused path may not exist).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The paths an error line names: quoted ones (`'x'`, `‘x’`, `"x"`), and words before a
/// colon that look like paths (`sh: 1: cannot create /etc/x: Permission denied`).
fn paths_in(line: &str) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for (open, close) in [('\'', '\''), ('‘', '’'), ('"', '"')] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            paths.push(PathBuf::from(&after[..end]));
            rest = &after[end + close.len_utf8()..];
        }
    }
    // `cannot create here.txt: Permission denied`: what follows a verb, to the colon.
    for verb in ["cannot create ", "cannot touch ", "cannot remove ", "cannot open "] {
        if let Some((_, rest)) = line.split_once(verb) {
            let end = rest.find(": ").unwrap_or(rest.len());
            let name = rest[..end].trim().trim_matches(['\'', '"', '‘', '’']);
            if !name.is_empty() && !name.contains(' ') {
                paths.push(PathBuf::from(name));
            }
        }
    }
    // The first word is the program that complains (`/bin/sh:`), not what it refused.
    for word in line.split_whitespace().skip(1) {
        let word = word.trim_end_matches(':');
        if word.starts_with('/') || word.starts_with("./") || word.starts_with("../") {
            paths.push(PathBuf::from(word));
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(mode: Mode) -> Sandbox {
        let request = Request { mode, network: true, writable: vec![], caches: false };
        let support = Support { landlock: Some(7), seccomp: true };
        let places = Places { tmpdir: None, home: None, xdg_cache: None, zero_dirs: vec![] };
        Sandbox::build(&request, support, &["/w".into()], &[], &places, true).unwrap().0
    }

    #[test]
    fn the_note_knows_how_python_node_go_rust_and_java_report_a_refused_write() {
        let s = sandbox(Mode::WorkspaceWrite);
        let cwd = Path::new("/w");
        let note =
            Some("[sandbox: writes outside the workspace are refused (--sandbox workspace-write)]");
        // `/etc/zero-new` does not exist (a write made it); `/etc/hosts` can be read (so
        // reading it was not what was refused); `/secret` cannot be read.
        let state = |p: &Path| match p.to_str() {
            Some("/etc/zero-new") => PathState::Missing,
            Some("/secret") => PathState::Unreadable,
            _ => PathState::Readable,
        };
        let judge = |stderr: &str| s.refusal_note_judging(false, stderr, cwd, &state);
        for stderr in [
            "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nPermissionError: [Errno 13] Permission denied: '/etc/zero-new'",
            "node:fs:581\nError: EACCES: permission denied, open '/etc/hosts'\n    at Object.openSync (node:fs:581:18)",
            "panic: open /etc/zero-new: permission denied",
            "Error: Permission denied (os error 13)",
            "Exception in thread \"main\" java.nio.file.AccessDeniedException: /etc/hosts",
        ] {
            assert_eq!(judge(stderr).as_deref(), note, "{stderr}");
        }
        // The same forms for a path inside the workspace, or one zero cannot read itself (a
        // read the file's mode refused): no note.
        for stderr in [
            "PermissionError: [Errno 13] Permission denied: 'a.txt'",
            "Error: EACCES: permission denied, open '/secret'",
            "open /secret: permission denied",
            "Error: failed to write /w/out.txt: Permission denied (os error 13)",
            "java.nio.file.AccessDeniedException: /w/x",
        ] {
            assert_eq!(judge(stderr), None, "{stderr}");
        }
    }

    #[test]
    fn the_note_names_a_refused_path_outside_the_writable_set() {
        let s = sandbox(Mode::WorkspaceWrite);
        let cwd = Path::new("/w/sub");
        let note =
            "[sandbox: writes outside the workspace are refused (--sandbox workspace-write)]";
        assert_eq!(
            s.refusal_note(false, "touch: cannot touch '/etc/x': Permission denied", cwd)
                .as_deref(),
            Some(note)
        );
        assert_eq!(
            s.refusal_note(false, "sh: 1: cannot create /home/u/.bashrc: Permission denied", cwd)
                .as_deref(),
            Some(note)
        );
        assert_eq!(
            s.refusal_note(false, "rm: cannot remove '../../etc/x': Permission denied", cwd)
                .as_deref(),
            Some(note)
        );
        // Inside the workspace, or a success, or another error: no note.
        assert_eq!(
            s.refusal_note(false, "touch: cannot touch 'a.txt': Permission denied", cwd),
            None
        );
        assert_eq!(
            s.refusal_note(true, "touch: cannot touch '/etc/x': Permission denied", cwd),
            None
        );
        assert_eq!(s.refusal_note(false, "cat: /etc/x: No such file or directory", cwd), None);
        // Not the sandbox's doing: a program that is not executable, a refused read.
        assert_eq!(s.refusal_note(false, "/bin/sh: 1: ./run.sh: Permission denied", cwd), None);
        let unreadable = |_: &Path| PathState::Unreadable;
        assert_eq!(
            s.refusal_note_judging(false, "cat: /etc/shadow: Permission denied", cwd, &unreadable),
            None
        );
        assert_eq!(
            s.refusal_note(
                false,
                "fatal: Unable to create '/elsewhere/.git/index.lock': Permission denied",
                cwd
            )
            .as_deref(),
            Some(note)
        );
        let ro = sandbox(Mode::ReadOnly);
        assert_eq!(
            ro.refusal_note(false, "touch: cannot touch 'a.txt': Permission denied", cwd)
                .as_deref(),
            Some("[sandbox: writes are refused (--sandbox read-only)]")
        );
    }

    #[test]
    fn the_build_caches_that_exist_are_writable_unless_left_out() {
        let home = crate::testing::kit::TempDir::new("sandbox-caches");
        home.write(".cargo/registry/index", "");
        home.write(".cargo/bin/cargo", "");
        home.write(".cache/pip/x", "");
        let home_path = home.path.display().to_string();
        let places = Places {
            tmpdir: Some("/var/tmp/t"),
            home: Some(&home_path),
            xdg_cache: None,
            zero_dirs: vec![],
        };
        let support = Support { landlock: Some(7), seccomp: true };
        let request = |caches| Request {
            mode: Mode::WorkspaceWrite,
            network: true,
            writable: vec!["/x".into()],
            caches,
        };
        // The home is below /tmp (as the unit tests' are), so /tmp is left out: $TMPDIR is
        // the temp directory.
        let (with, _, narrowed) =
            Sandbox::build(&request(true), support, &["/w".into()], &[], &places, true).unwrap();
        assert_eq!(
            with.writable,
            [
                PathBuf::from("/w"),
                PathBuf::from("/var/tmp/t"),
                home.join(".cache"),
                home.join(".cargo/registry"),
                PathBuf::from("/x"),
            ]
        );
        assert_eq!(
            narrowed,
            ["bash's sandbox does not make /tmp writable, as it holds the home directory."]
        );
        assert_eq!(with.tmpdir(), None);
        let (without, _, _) =
            Sandbox::build(&request(false), support, &["/w".into()], &[], &places, true).unwrap();
        assert_eq!(
            without.writable,
            [PathBuf::from("/w"), PathBuf::from("/var/tmp/t"), PathBuf::from("/x")]
        );
    }

    #[test]
    fn a_home_in_a_temp_directory_keeps_its_programs_and_dotfiles_read_only() {
        // A CI container's HOME=/tmp/home: /tmp is not opened (it would open ~/.profile and
        // ~/.cargo/bin); the caches are, and commands get a temp directory of their own.
        let home = crate::testing::kit::TempDir::new("sandbox-home-in-tmp");
        home.write(".cargo/registry/index", "");
        let home_path = home.path.display().to_string();
        let places =
            Places { tmpdir: None, home: Some(&home_path), xdg_cache: None, zero_dirs: vec![] };
        let request =
            Request { mode: Mode::WorkspaceWrite, network: true, writable: vec![], caches: true };
        let support = Support { landlock: Some(7), seccomp: true };
        let (s, warning, narrowed) =
            Sandbox::build(&request, support, &["/w".into()], &[], &places, true).unwrap();
        let own = s.tmpdir().expect("a temp directory of its own").to_path_buf();
        assert!(
            own.is_dir() && own.display().to_string().starts_with("/tmp/zero-bash-"),
            "{own:?}"
        );
        assert_eq!(s.writable, [PathBuf::from("/w"), home.join(".cargo/registry"), own.clone()]);
        assert_eq!(warning, None);
        assert_eq!(
            narrowed,
            [format!("bash's sandbox does not make /tmp writable, as it holds the home directory; its commands get TMPDIR={} instead.", own.display())]
        );
        // It goes with the run.
        drop(s);
        assert!(!own.exists());
    }

    #[test]
    fn a_temp_directory_that_holds_zeros_own_directories_is_not_opened() {
        let config = PathBuf::from("/tmp/ci-config/zero");
        let places = Places {
            tmpdir: None,
            home: Some("/home/u"),
            xdg_cache: None,
            zero_dirs: vec![config.clone(), PathBuf::from("/home/u/.local/share/zero")],
        };
        let request =
            Request { mode: Mode::WorkspaceWrite, network: true, writable: vec![], caches: false };
        let support = Support { landlock: Some(7), seccomp: true };
        let (s, _, narrowed) =
            Sandbox::build(&request, support, &["/w".into()], &[], &places, true).unwrap();
        let own = s.tmpdir().unwrap().to_path_buf();
        assert_eq!(s.writable, [PathBuf::from("/w"), own.clone()]);
        assert_eq!(
            narrowed,
            [format!("bash's sandbox does not make /tmp writable, as it holds zero's own directory /tmp/ci-config/zero, which later runs trust; its commands get TMPDIR={} instead.", own.display())]
        );
    }

    #[test]
    fn an_environment_that_would_open_the_home_directory_is_refused() {
        let home = crate::testing::kit::TempDir::new("sandbox-home");
        let home_path = home.path.display().to_string();
        let places = Places {
            tmpdir: Some("/"),
            home: Some(&home_path),
            xdg_cache: Some(&home_path),
            zero_dirs: vec![],
        };
        let request =
            Request { mode: Mode::WorkspaceWrite, network: true, writable: vec![], caches: true };
        let support = Support { landlock: Some(7), seccomp: true };
        let (s, warning, narrowed) =
            Sandbox::build(&request, support, &["/w".into()], &[], &places, true).unwrap();
        let own = s.tmpdir().unwrap().to_path_buf();
        assert_eq!(s.writable, [PathBuf::from("/w"), own.clone()]);
        // Nothing is less enforced for it: it is not the unavailable sandbox's warning.
        assert_eq!(warning, None);
        assert_eq!(
            narrowed,
            [
                format!("bash's sandbox does not make /tmp writable, as it holds the home directory; its commands get TMPDIR={} instead.", own.display()),
                "bash's sandbox does not make / writable, as it holds the home directory.".to_string(),
                format!("bash's sandbox does not make {home_path} writable, as it holds the home directory."),
            ]
        );
    }

    #[test]
    fn a_git_directory_that_holds_the_workspaces_parent_or_home_is_never_writable() {
        let home = crate::testing::kit::TempDir::new("sandbox-git-broad");
        let home_path = home.path.display().to_string();
        let places = Places {
            tmpdir: Some("/var/tmp"),
            home: Some(&home_path),
            xdg_cache: None,
            zero_dirs: vec![],
        };
        let request =
            Request { mode: Mode::WorkspaceWrite, network: true, writable: vec![], caches: false };
        let support = Support { landlock: Some(7), seccomp: true };
        let git = [PathBuf::from("/"), PathBuf::from("/srv"), PathBuf::from("/srv/repo/.git")];
        let (s, _, narrowed) =
            Sandbox::build(&request, support, &["/srv/repo/w".into()], &git, &places, true)
                .unwrap();
        assert_eq!(
            s.writable,
            [
                PathBuf::from("/srv/repo/w"),
                PathBuf::from("/srv/repo/.git"),
                PathBuf::from("/var/tmp")
            ]
        );
        assert_eq!(narrowed[..2], [
            "bash's sandbox does not make / writable, as it holds the workspace's parent or the home directory.".to_string(),
            "bash's sandbox does not make /srv writable, as it holds the workspace's parent or the home directory.".to_string(),
        ]);
    }

    #[test]
    fn links_are_judged_where_they_lead_also_to_names_not_there_yet() {
        let work = crate::testing::kit::TempDir::new("sandbox-links");
        let root = work.path.canonicalize().unwrap();
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        std::os::unix::fs::symlink("/etc/not-there-yet", root.join("dangling")).unwrap();
        assert_eq!(resolved(&root.join("out/new.conf"), 0), PathBuf::from("/etc/new.conf"));
        assert_eq!(resolved(&root.join("dangling"), 0), PathBuf::from("/etc/not-there-yet"));
        assert_eq!(resolved(&root.join("sub/new.txt"), 0), root.join("sub/new.txt"));
    }

    #[test]
    fn the_writable_set_follows_the_mode() {
        assert_eq!(
            sandbox(Mode::WorkspaceWrite).writable,
            [PathBuf::from("/w"), PathBuf::from("/tmp")]
        );
        assert_eq!(sandbox(Mode::ReadOnly).writable, [PathBuf::from("/tmp")]);
        let (off, warning, _) = Sandbox::build(
            &Request { mode: Mode::ReadOnly, network: false, writable: vec![], caches: false },
            Support { landlock: None, seccomp: false },
            &[],
            &[],
            &Places { tmpdir: None, home: None, xdg_cache: None, zero_dirs: vec![] },
            true,
        )
        .unwrap();
        assert_eq!(off.enforcement(), "none");
        assert_eq!(
            warning.as_deref(),
            Some("The bash sandbox is not fully enforced: writes are not confined (--sandbox read-only): this kernel has no Landlock; network sockets (--sandbox-network off), typing into a terminal (TIOCSTI), setting extended attributes are not refused: this kernel has no seccomp filters.")
        );
    }
}
