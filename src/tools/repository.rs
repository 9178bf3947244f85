//! Where a workspace's repository is: the root that decides which `AGENTS.md` files are read,
//! and git's own directories that bash's sandbox makes writable so `git commit` works.
//!
//! Both are decided only from what a command in bash's sandbox cannot have planted, since
//! what a command writes must never change what a later run trusts:
//!
//! - A `.git` *file* (a worktree or a submodule) counts only when it is a real link: it points
//!   at `<common>/worktrees/<name>` whose `gitdir` file points back at this `.git`, or at
//!   `.../modules/<name>` whose `core.worktree` leads back to this directory. Writing those
//!   back links needs the target to be writable already, so a planted file gains nothing.
//! - A `.git` above the workspace counts only when it is a real directory (or a worktree's
//!   file as above), not a link, and its directory is not one bash may write (`/tmp`, the
//!   caches, `--sandbox-writable`, `--add-dir`): a `git init` in a shared `/tmp` cannot make
//!   itself the repository of a workspace below it.
//! - A `.git` of the workspace itself makes the workspace the root; it never moves the root up.
//!
//! The sandbox then refuses any git directory that contains the workspace's parent or the home
//! directory, whatever led to it (`tools::sandbox`).

use std::path::{Path, PathBuf};

/// git's small files (`gitdir`, `commondir`, a `.git` file, a module's `config`) are read up to
/// this size; anything larger is not git's.
const MAX_GIT_FILE: u64 = 64 * 1024;

/// A workspace's repository, as far as it can be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    /// The directory `AGENTS.md` files are read from, down to the workspace: the workspace
    /// itself unless a trusted repository root lies above it.
    pub root: PathBuf,
    /// git's directories that lie outside the workspace (a root's `.git` above it, a
    /// worktree's own directory and its repository's, a submodule's), for bash's sandbox.
    pub git_dirs: Vec<PathBuf>,
}

/// Finds the repository of `workspace` (absolute, links resolved). `plantable` are the
/// directories bash may write besides the workspace: a `.git` in one of them does not count.
pub fn find(workspace: &Path, plantable: &[PathBuf]) -> Repository {
    let outside = |dirs: Vec<PathBuf>| -> Vec<PathBuf> {
        dirs.into_iter().filter(|d| !d.starts_with(workspace)).collect()
    };
    for (level, dir) in workspace.ancestors().enumerate() {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot_git) else { continue };
        if level == 0 {
            // The workspace's own: its root whatever it is, and a linked git directory only
            // when the link is real.
            let git_dirs = if meta.is_file() { linked_git_dirs(dir) } else { Vec::new() };
            return Repository { root: dir.to_path_buf(), git_dirs: outside(git_dirs) };
        }
        if plantable.iter().any(|p| dir.starts_with(p)) {
            continue;
        }
        let git_dirs = if meta.file_type().is_dir() {
            vec![dot_git]
        } else if meta.is_file() {
            linked_git_dirs(dir)
        } else {
            Vec::new()
        };
        if !git_dirs.is_empty() {
            return Repository { root: dir.to_path_buf(), git_dirs: outside(git_dirs) };
        }
    }
    Repository { root: workspace.to_path_buf(), git_dirs: Vec::new() }
}

/// The git directories of `dir`'s `.git` file when it is a real worktree or submodule link
/// (see the module's notes); none otherwise.
fn linked_git_dirs(dir: &Path) -> Vec<PathBuf> {
    let dot_git = dir.join(".git");
    let Some(text) = small_file(&dot_git) else { return Vec::new() };
    let Some(target) = text.lines().next().and_then(|l| l.strip_prefix("gitdir:")) else {
        return Vec::new();
    };
    let Ok(git_dir) = std::fs::canonicalize(dir.join(target.trim())) else { return Vec::new() };
    if !git_dir.is_dir() {
        return Vec::new();
    }
    let Ok(this) = std::fs::canonicalize(&dot_git) else { return Vec::new() };
    // A worktree: `<common>/worktrees/<name>/gitdir` names this `.git` file.
    if let Some(back) = small_file(&git_dir.join("gitdir")) {
        let points_back = std::fs::canonicalize(git_dir.join(back.trim())).is_ok_and(|p| p == this);
        let common = small_file(&git_dir.join("commondir"))
            .and_then(|c| std::fs::canonicalize(git_dir.join(c.trim())).ok());
        return match common {
            Some(common)
                if points_back && git_dir.parent() == Some(common.join("worktrees").as_path()) =>
            {
                vec![git_dir, common]
            }
            _ => Vec::new(),
        };
    }
    // A submodule: `.../modules/<name>/config` says `worktree = <path to this directory>`.
    let in_modules = git_dir.parent().is_some_and(|p| p.file_name() == Some("modules".as_ref()));
    let worktree = small_file(&git_dir.join("config")).and_then(|config| core_worktree(&config));
    let leads_back = worktree
        .and_then(|w| std::fs::canonicalize(git_dir.join(w)).ok())
        .zip(std::fs::canonicalize(dir).ok())
        .is_some_and(|(w, d)| w == d);
    if in_modules && leads_back {
        vec![git_dir]
    } else {
        Vec::new()
    }
}

/// `core.worktree` of a git config file: the `worktree` key of its `[core]` section.
fn core_worktree(config: &str) -> Option<String> {
    let mut in_core = false;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_core = line
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .eq_ignore_ascii_case("core");
            continue;
        }
        if !in_core {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            if key.trim().eq_ignore_ascii_case("worktree") {
                return Some(value.trim().trim_matches('"').to_string());
            }
        }
    }
    None
}

/// A small regular file's text (a FIFO, a device or a large file reads as nothing).
fn small_file(path: &Path) -> Option<String> {
    let bytes = crate::sys::dirfd::read_small_file(path, MAX_GIT_FILE).ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kit::TempDir;

    fn git(dir: &Path, args: &[&str]) {
        let done = crate::sys::process::serialized(|| {
            std::process::Command::new("git")
                .args(args)
                .current_dir(dir)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
        })
        .unwrap();
        assert!(done.status.success(), "{done:?}");
    }

    #[test]
    fn a_real_repository_root_above_the_workspace_counts() {
        let tmp = TempDir::new("repository-root");
        let root = tmp.path.canonicalize().unwrap();
        git(&root, &["init", "-q"]);
        std::fs::create_dir_all(root.join("app/core")).unwrap();
        let found = find(&root.join("app/core"), &[]);
        assert_eq!(found, Repository { root: root.clone(), git_dirs: vec![root.join(".git")] });
        // The same directory inside a place bash may write: it could have been planted.
        let planted = find(&root.join("app/core"), std::slice::from_ref(&root));
        assert_eq!(planted, Repository { root: root.join("app/core"), git_dirs: vec![] });
        // At the workspace: the root, and nothing outside it to open.
        assert_eq!(find(&root, &[]), Repository { root: root.clone(), git_dirs: vec![] });
    }

    #[test]
    fn worktrees_and_submodules_count_only_when_they_link_back() {
        let tmp = TempDir::new("repository-links");
        let base = tmp.path.canonicalize().unwrap();
        let main = base.join("main");
        std::fs::create_dir_all(&main).unwrap();
        git(&main, &["init", "-q"]);
        git(
            &main,
            &[
                "-c",
                "user.email=z@e",
                "-c",
                "user.name=z",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "x",
            ],
        );
        git(&main, &["worktree", "add", "-q", "../wt"]);
        let wt = base.join("wt");
        let found = find(&wt, &[]);
        assert_eq!(found.root, wt);
        assert_eq!(found.git_dirs, [main.join(".git/worktrees/wt"), main.join(".git")]);
        // A workspace below the worktree finds it too.
        std::fs::create_dir_all(wt.join("sub")).unwrap();
        assert_eq!(find(&wt.join("sub"), &[]).git_dirs, found.git_dirs);
        // A planted file naming the same directory does not point back: nothing opens.
        let other = base.join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(
            other.join(".git"),
            format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        assert_eq!(find(&other, &[]), Repository { root: other.clone(), git_dirs: vec![] });
        std::fs::write(other.join(".git"), "gitdir: /\n").unwrap();
        assert_eq!(find(&other, &[]), Repository { root: other.clone(), git_dirs: vec![] });
        // A submodule's module directory whose core.worktree leads back.
        let module = main.join(".git/modules/lib");
        std::fs::create_dir_all(&module).unwrap();
        let lib = main.join("lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::write(lib.join(".git"), "gitdir: ../.git/modules/lib\n").unwrap();
        std::fs::write(
            module.join("config"),
            "[core]\n\tbare = false\n\tworktree = ../../../lib\n",
        )
        .unwrap();
        assert_eq!(find(&lib, &[]).git_dirs, std::slice::from_ref(&module));
        std::fs::write(module.join("config"), "[core]\n\tworktree = ../../../elsewhere\n").unwrap();
        assert_eq!(find(&lib, &[]).git_dirs, Vec::<PathBuf>::new());
    }

    #[test]
    fn a_link_named_git_above_the_workspace_never_counts() {
        let tmp = TempDir::new("repository-link");
        let base = tmp.path.canonicalize().unwrap();
        std::fs::create_dir_all(base.join("ws")).unwrap();
        std::os::unix::fs::symlink("/", base.join(".git")).unwrap();
        assert_eq!(
            find(&base.join("ws"), &[]),
            Repository { root: base.join("ws"), git_dirs: vec![] }
        );
    }
}
