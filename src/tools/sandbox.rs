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
    prepared: Option<Arc<Prepared>>,
}

/// The environment the policy reads: temp, cache and home directories.
pub struct Places<'a> {
    pub tmpdir: Option<&'a str>,
    pub home: Option<&'a str>,
    pub xdg_cache: Option<&'a str>,
}

impl Sandbox {
    /// The sandbox for `request` on this kernel (`support`, which a test may override), for
    /// a workspace and its added roots. Returns it, the warning to give when something asked
    /// for is not enforced, and what of the environment was not made writable (and why).
    pub fn build(
        request: &Request,
        support: Support,
        roots: &[PathBuf],
        places: &Places<'_>,
    ) -> Result<(Sandbox, Option<String>, Vec<String>), String> {
        let mut writable: Vec<PathBuf> = Vec::new();
        if request.mode == Mode::WorkspaceWrite {
            writable.extend(roots.iter().cloned());
            // git keeps its data outside a workspace that is a subdirectory of a repository,
            // or a worktree: without it, `git commit` fails.
            if let Some(root) = roots.first() {
                writable.extend(git_dirs(root).into_iter().filter(|d| !d.starts_with(root)));
            }
        }
        if request.mode != Mode::Off {
            writable.push(PathBuf::from("/tmp"));
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
                    writable.extend(
                        HOME_CACHES.iter().map(|c| Path::new(home).join(c)).filter(|c| c.exists()),
                    );
                }
            }
            writable.extend(request.writable.iter().cloned());
        }
        let mut narrowed = Vec::new();
        // A temp or cache directory from the environment that holds the home directory
        // (`TMPDIR=/`, `XDG_CACHE_HOME=$HOME`) would open all of it: it is left out, and said.
        let home = places.home.map(Path::new);
        let from_env = [places.tmpdir, places.xdg_cache];
        writable.retain(|dir| {
            let named = from_env.iter().flatten().any(|v| Path::new(v) == dir);
            let broad = dir == Path::new("/") || home.is_some_and(|h| h.starts_with(dir));
            if named && broad {
                narrowed.push(format!(
                    "bash's sandbox does not make {} writable, as it holds the home directory.",
                    dir.display()
                ));
            }
            !(named && broad)
        });
        let mut sandbox = Sandbox {
            request: request.clone(),
            abi: None,
            network_enforced: false,
            writable,
            prepared: None,
        };
        if request.mode == Mode::Off && request.network {
            return Ok((sandbox, None, narrowed));
        }
        let mut missing = Vec::new();
        let abi = support.landlock.filter(|_| request.mode != Mode::Off);
        if request.mode != Mode::Off {
            match support.landlock {
                None => missing.push(format!("writes are not confined (--sandbox {}): this kernel has no Landlock", request.mode.name())),
                Some(abi) if abi < 3 => missing.push(format!("truncating a file outside the writable directories is not refused (Landlock ABI {abi} has no truncate right)")),
                _ => {}
            }
        }
        let network_off = !request.network;
        if network_off && !support.seccomp {
            missing.push("network sockets are not refused (--sandbox-network off): this kernel has no seccomp filters".to_string());
        }
        sandbox.abi = abi;
        sandbox.network_enforced = network_off && support.seccomp;
        let policy = Policy {
            writable: sandbox.writable.clone(),
            devices: DEVICES.iter().map(PathBuf::from).collect(),
            no_network: sandbox.network_enforced,
        };
        if abi.is_some() || sandbox.network_enforced {
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
            prepared: None,
        }
    }

    pub fn prepared(&self) -> Option<&Prepared> {
        self.prepared.as_deref()
    }

    /// `run_start.sandbox`'s `enforcement`: `landlock-v<N>` or `none`.
    pub fn enforcement(&self) -> String {
        match self.abi {
            Some(abi) => format!("landlock-v{abi}"),
            None => "none".to_string(),
        }
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
    /// is not 0 and its stderr says a path outside the writable set was refused (relative
    /// paths against the command's directory).
    pub fn refusal_note(&self, status_ok: bool, stderr: &str, cwd: &Path) -> Option<String> {
        if status_ok || self.abi.is_none() {
            return None;
        }
        // A refusal of a write: reading is never refused by the sandbox, and a program that
        // is not executable is not its doing.
        let refused = stderr.lines().filter(|line| {
            let denied =
                ["EACCES", "EPERM", "Permission denied", "Operation not permitted", "Read-only"]
                    .iter()
                    .any(|m| line.contains(m));
            let lower = line.to_ascii_lowercase();
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
            ]
            .iter()
            .any(|w| lower.contains(w));
            denied && writing
        });
        let outside = refused.flat_map(paths_in).any(|p| {
            let path = resolved(&lexical(&if p.is_absolute() { p } else { cwd.join(p) }), 0);
            !self.writable.iter().any(|w| path.starts_with(w))
        });
        outside.then(|| match self.request.mode {
            Mode::ReadOnly => "[sandbox: writes are refused (--sandbox read-only)]".to_string(),
            _ => "[sandbox: writes outside the workspace are refused (--sandbox workspace-write)]"
                .to_string(),
        })
    }
}

/// The git directories a workspace's repository uses: the nearest `.git` directory at or
/// above it, or for a worktree (a `.git` file) its `gitdir` and the repository's `.git`.
fn git_dirs(workspace: &Path) -> Vec<PathBuf> {
    for dir in workspace.ancestors() {
        let dot_git = dir.join(".git");
        if dot_git.is_dir() {
            return vec![dot_git];
        }
        if dot_git.is_file() {
            let Ok(text) = std::fs::read_to_string(&dot_git) else { return Vec::new() };
            let Some(gitdir) = text.lines().next().and_then(|l| l.strip_prefix("gitdir: ")) else {
                return Vec::new();
            };
            let gitdir = dir.join(gitdir.trim());
            let common = gitdir.ancestors().find(|a| a.ends_with(".git")).map(Path::to_path_buf);
            return std::iter::once(gitdir).chain(common).collect();
        }
    }
    Vec::new()
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
        let places = Places { tmpdir: None, home: None, xdg_cache: None };
        Sandbox::build(&request, support, &["/w".into()], &places).unwrap().0
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
        assert_eq!(s.refusal_note(false, "cat: /etc/shadow: Permission denied", cwd), None);
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
        let places = Places { tmpdir: Some("/var/tmp/t"), home: Some(&home_path), xdg_cache: None };
        let support = Support { landlock: Some(7), seccomp: true };
        let request = |caches| Request {
            mode: Mode::WorkspaceWrite,
            network: true,
            writable: vec!["/x".into()],
            caches,
        };
        let (with, _, _) =
            Sandbox::build(&request(true), support, &["/w".into()], &places).unwrap();
        assert_eq!(
            with.writable,
            [
                PathBuf::from("/w"),
                PathBuf::from("/tmp"),
                PathBuf::from("/var/tmp/t"),
                home.join(".cache"),
                home.join(".cargo/registry"),
                PathBuf::from("/x"),
            ]
        );
        let (without, _, _) =
            Sandbox::build(&request(false), support, &["/w".into()], &places).unwrap();
        assert_eq!(
            without.writable,
            [
                PathBuf::from("/w"),
                PathBuf::from("/tmp"),
                PathBuf::from("/var/tmp/t"),
                PathBuf::from("/x")
            ]
        );
    }

    #[test]
    fn an_environment_that_would_open_the_home_directory_is_refused() {
        let home = crate::testing::kit::TempDir::new("sandbox-home");
        let home_path = home.path.display().to_string();
        let places =
            Places { tmpdir: Some("/"), home: Some(&home_path), xdg_cache: Some(&home_path) };
        let request =
            Request { mode: Mode::WorkspaceWrite, network: true, writable: vec![], caches: true };
        let support = Support { landlock: Some(7), seccomp: true };
        let (s, warning, narrowed) =
            Sandbox::build(&request, support, &["/w".into()], &places).unwrap();
        assert_eq!(s.writable, [PathBuf::from("/w"), PathBuf::from("/tmp")]);
        // Nothing is less enforced for it: it is not the unavailable sandbox's warning.
        assert_eq!(warning, None);
        assert_eq!(
            narrowed,
            [
                "bash's sandbox does not make / writable, as it holds the home directory.".to_string(),
                format!("bash's sandbox does not make {home_path} writable, as it holds the home directory.")
            ]
        );
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
            &Places { tmpdir: None, home: None, xdg_cache: None },
        )
        .unwrap();
        assert_eq!(off.enforcement(), "none");
        assert_eq!(
            warning.as_deref(),
            Some("The bash sandbox is not fully enforced: writes are not confined (--sandbox read-only): this kernel has no Landlock; network sockets are not refused (--sandbox-network off): this kernel has no seccomp filters.")
        );
    }
}
