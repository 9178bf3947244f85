//! Workspace confinement that holds under races: every path a file tool touches is
//! resolved from an open handle of the workspace root, one name at a time, with our own
//! bookkeeping for `..` and for symbolic links, so nothing the kernel follows on our behalf can
//! lead out. A link is followed only by reading it and resolving its target the same way; a
//! directory swapped for a link between two steps makes the next `openat` fail (`O_NOFOLLOW`)
//! instead of leading elsewhere.
//!
//! Writes never go through a name that might have changed: new files are created with
//! `O_EXCL`, and a file is replaced by writing a temporary file in the same directory handle
//! and renaming it over the old name. Only regular files and directories are opened: a FIFO,
//! socket or device is refused before it is opened.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::sys::dirfd::{self, Dir, Kind};

/// Why a path cannot be used, by kind; its message names the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// It leads outside the workspace and its added roots.
    Outside(String),
    /// It does not exist.
    Missing(String),
    /// A symbolic link on the way points at nothing.
    BrokenLink(String),
    /// Symbolic links on the way loop, or are too many.
    LinkLoop(String),
    /// It is a directory where a file is needed.
    IsADirectory(String),
    /// A part of it that must be a directory is not.
    NotADirectory(String),
    /// It is refused whatever the file system holds: a NUL byte, a special file where a
    /// regular file is needed, a file replaced while it was opened.
    Refused(String),
    /// It may not be written: no write bit, or not this user's to write.
    ReadOnly(String),
    /// The system refused an operation on it.
    Io(String),
}

crate::error::message_error!(
    PathError: Outside,
    Missing,
    BrokenLink,
    LinkLoop,
    IsADirectory,
    NotADirectory,
    Refused,
    ReadOnly,
    Io
);

/// The tools put a path's problem into their results as text.
impl From<PathError> for String {
    fn from(err: PathError) -> String {
        err.to_string()
    }
}

/// Symbolic links followed while resolving one path at most (as the kernel's MAXSYMLINKS).
const MAX_LINKS: u32 = 40;

/// The workspace: the working directory after `-C`, canonicalised and held open, and the
/// extra roots of `--add-dir`, each confined the same way. A path is relative to the
/// workspace, or absolute inside one of the roots.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    dir: Arc<Dir>,
    /// The extra roots (empty in an extra root itself).
    added: Arc<Vec<Workspace>>,
    /// This is an extra root: its places are shown as absolute paths.
    is_added: bool,
    /// Every root, as the refusal of a path outside them names them, and that rule.
    roots_shown: Arc<str>,
    /// The client's editor, when the file tools read or write through it.
    editor: Option<Arc<dyn super::editor::Editor>>,
    /// The calls that change files say how (a client shows the diffs).
    diffs: bool,
}

/// What to do with directories on the way to the last name that do not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parents {
    /// They are an error.
    Existing,
    /// They are created.
    Create,
    /// They are listed in [`Place::missing`], to be created later.
    Plan,
}

/// A resolved location inside the workspace.
#[derive(Debug, Clone)]
pub struct Place {
    /// The directory holding the last name (the deepest existing one with [`Parents::Plan`]).
    pub dir: Arc<Dir>,
    /// The last name; `None` for the workspace root itself.
    pub name: Option<OsString>,
    /// Directories still to create between `dir` and `name` ([`Parents::Plan`] only).
    pub missing: Vec<OsString>,
    /// The physical path from the root, every link resolved: `dir`'s path, `missing`, `name`.
    pub rel: Vec<OsString>,
    /// The extra root the place is in (`None`: the workspace).
    pub root: Option<PathBuf>,
}

impl Place {
    /// The path relative to the workspace, `/`-separated (`.` for the workspace itself); in
    /// an extra root, the absolute path.
    pub fn shown(&self) -> String {
        let parts: Vec<String> =
            self.rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        match &self.root {
            Some(root) if parts.is_empty() => root.display().to_string(),
            Some(root) => {
                format!("{}/{}", root.display().to_string().trim_end_matches('/'), parts.join("/"))
            }
            None if parts.is_empty() => ".".to_string(),
            None => parts.join("/"),
        }
    }

    /// The path relative to the root.
    pub fn rel_path(&self) -> PathBuf {
        self.rel.iter().collect()
    }

    /// What the last name is now, without following it (`None` when it does not exist).
    pub fn kind(&self) -> std::io::Result<Option<(Kind, Metadata)>> {
        let Some(name) = &self.name else {
            let meta = self.dir.own_metadata()?;
            return Ok(Some((Kind::Dir, meta)));
        };
        if !self.missing.is_empty() {
            return Ok(None);
        }
        match self.dir.metadata(name) {
            Ok(meta) => Ok(Some((Kind::of(&meta), meta))),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Opens the place as a directory.
    pub fn open_dir(&self) -> std::io::Result<Arc<Dir>> {
        match &self.name {
            None => Ok(self.dir.clone()),
            Some(name) => Ok(Arc::new(self.dir.open_dir(name)?)),
        }
    }
}

/// One step of a path still to resolve.
enum Step {
    Up,
    Name(OsString),
}

/// A step, and whether it came from a link's target (a missing name there is a broken link).
struct Pending {
    step: Step,
    link: bool,
}

/// The steps of a relative path (`.` dropped).
fn steps(path: &Path) -> impl Iterator<Item = Step> + '_ {
    path.components().filter_map(|c| match c {
        Component::ParentDir => Some(Step::Up),
        Component::Normal(name) => Some(Step::Name(name.to_os_string())),
        _ => None,
    })
}

/// A path being resolved, one step at a time (see [`Workspace::locate_from`]).
struct Resolution<'w> {
    /// The root the walk is in now.
    ws: &'w Workspace,
    /// Every root: a walk that leaves one by name (`..`, an absolute link) may come back into
    /// any of them.
    roots: Vec<&'w Workspace>,
    raw: &'w str,
    follow: bool,
    parents: Parents,
    /// The steps still to take; a link's target is put at the front.
    queue: VecDeque<Pending>,
    /// Where the path is while it is outside the root (followed by name only).
    outside: Option<PathBuf>,
    /// The directories entered so far, from the root down.
    stack: Vec<(OsString, Arc<Dir>)>,
    /// Directories on the way that do not exist yet ([`Parents::Plan`]).
    missing: Vec<OsString>,
    links: u32,
}

impl<'w> Resolution<'w> {
    fn new(
        ws: &'w Workspace,
        base: &[OsString],
        raw: &'w str,
        follow: bool,
        parents: Parents,
    ) -> Resolution<'w> {
        let path = Path::new(raw);
        let mut queue: VecDeque<Pending> = VecDeque::new();
        let mut outside = None;
        if let Ok(rest) = path.strip_prefix(&ws.root) {
            queue.extend(steps(rest).map(|step| Pending { step, link: false }));
        } else if path.is_absolute() {
            outside = Some(PathBuf::from("/"));
            queue.extend(steps(path).map(|step| Pending { step, link: false }));
        } else {
            queue.extend(base.iter().map(|b| Pending { step: Step::Name(b.clone()), link: false }));
            queue.extend(steps(path).map(|step| Pending { step, link: false }));
        }
        let (stack, missing) = (Vec::new(), Vec::new());
        let roots = vec![ws];
        Resolution { ws, roots, raw, follow, parents, queue, outside, stack, missing, links: 0 }
    }

    fn current(&self) -> Arc<Dir> {
        self.stack.last().map_or(&self.ws.dir, |(_, d)| d).clone()
    }

    fn place(&self, dir: Arc<Dir>, name: OsString) -> Place {
        self.ws.place(dir, Some(name), self.missing.clone(), &self.stack)
    }

    /// A step outside the root, by name only; back under the root, the walk goes on from it.
    fn step_outside(&mut self, step: Step, link: bool) {
        let Some(at) = &mut self.outside else { return };
        match step {
            Step::Up => {
                at.pop();
            }
            Step::Name(name) => at.push(name),
        }
        // Back under a root (the deepest, when one holds another): the walk goes on in it.
        let entered = self
            .roots
            .iter()
            .filter(|root| at.starts_with(&root.root))
            .max_by_key(|root| root.root.as_os_str().len());
        if let Some(root) = entered {
            self.ws = root;
            let rest = at.strip_prefix(&root.root).unwrap_or(Path::new(""));
            let back: Vec<Step> = steps(rest).collect();
            for step in back.into_iter().rev() {
                self.queue.push_front(Pending { step, link });
            }
            self.outside = None;
            self.stack.clear();
        }
    }

    /// `..`: out of a planned directory, of an entered one, or out of the root.
    fn up(&mut self) {
        if self.missing.pop().is_none() && self.stack.pop().is_none() {
            self.outside = Some(self.ws.root.parent().unwrap_or(Path::new("/")).to_path_buf());
        }
    }

    /// One name: entered as a directory, followed as a link, or the end of the walk (the
    /// place is returned).
    fn name(&mut self, name: OsString, link: bool) -> Result<Option<Place>, PathError> {
        let current = self.current();
        let last = self.queue.is_empty();
        if !self.missing.is_empty() {
            // Below a directory that does not exist yet, nothing can be a link.
            if last {
                return Ok(Some(self.place(current, name)));
            }
            self.missing.push(name);
            return Ok(None);
        }
        if last && !self.follow {
            return Ok(Some(self.place(current, name)));
        }
        if !last {
            match current.open_dir(&name) {
                Ok(dir) => {
                    self.stack.push((name, Arc::new(dir)));
                    return Ok(None);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    self.missing_dir(&current, name, link)?;
                    return Ok(None);
                }
                // A link (ELOOP or ENOTDIR) or a file: read on.
                Err(e) if matches!(e.raw_os_error(), Some(dirfd::ELOOP | dirfd::ENOTDIR)) => {}
                Err(e) => {
                    let shown = self.ws.shown_with(&self.stack, &name);
                    return Err(PathError::Io(format!("path {:?}: {shown}: {e}", self.raw)));
                }
            }
        }
        self.link_or_end(current, name, link, last)
    }

    /// A name that is not a directory to enter: a link is read and its target walked; a file
    /// or nothing at all ends the walk when it is last.
    fn link_or_end(
        &mut self,
        current: Arc<Dir>,
        name: OsString,
        link: bool,
        last: bool,
    ) -> Result<Option<Place>, PathError> {
        let raw = self.raw;
        match current.read_link(&name) {
            Ok(target) => {
                self.links += 1;
                if self.links > MAX_LINKS {
                    return Err(PathError::LinkLoop(format!(
                        "path {raw:?} has too many symbolic links"
                    )));
                }
                let target = PathBuf::from(target);
                if target.is_absolute() {
                    self.outside = Some(PathBuf::from("/"));
                }
                let expanded: Vec<Step> = steps(&target).collect();
                for step in expanded.into_iter().rev() {
                    self.queue.push_front(Pending { step, link: true });
                }
                Ok(None)
            }
            Err(e) if e.raw_os_error() == Some(dirfd::EINVAL) => {
                if last {
                    return Ok(Some(self.place(current, name)));
                }
                let shown = self.ws.shown_with(&self.stack, &name);
                Err(PathError::NotADirectory(format!("path {raw:?}: {shown} is not a directory")))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if link {
                    return Err(PathError::BrokenLink(format!(
                        "path {raw:?} goes through a broken symbolic link"
                    )));
                }
                if last {
                    return Ok(Some(self.place(current, name)));
                }
                self.missing_dir(&current, name, link)?;
                Ok(None)
            }
            Err(e) => Err(PathError::Io(format!("path {raw:?}: {e}"))),
        }
    }

    /// A directory on the way that does not exist: an error, a plan, or created now.
    fn missing_dir(&mut self, current: &Dir, name: OsString, link: bool) -> Result<(), PathError> {
        let raw = self.raw;
        if link {
            return Err(PathError::BrokenLink(format!(
                "path {raw:?} goes through a broken symbolic link"
            )));
        }
        let shown = || self.ws.shown_with(&self.stack, &name);
        match self.parents {
            Parents::Existing => Err(PathError::Missing(format!(
                "path {raw:?}: directory {} does not exist",
                shown()
            ))),
            Parents::Plan => {
                self.missing.push(name);
                Ok(())
            }
            Parents::Create => {
                match current.mkdir(&name, 0o777) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => {
                        return Err(PathError::Io(format!(
                            "cannot create directory {}: {e}",
                            shown()
                        )))
                    }
                }
                // Opened like any other step: whatever is there now must not be a link.
                let dir = current.open_dir(&name).map_err(|e| {
                    PathError::Io(format!("cannot enter directory {}: {e}", shown()))
                })?;
                self.stack.push((name, Arc::new(dir)));
                Ok(())
            }
        }
    }

    /// Every step taken: the path ended on a directory (or on `..`), which is the place.
    fn finish(mut self) -> Result<Place, PathError> {
        if self.outside.is_some() {
            return Err(PathError::Outside(self.ws.outside(self.raw)));
        }
        if let Some(name) = self.missing.pop() {
            return Ok(self.place(self.current(), name));
        }
        match self.stack.pop() {
            None => Ok(self.ws.place(self.ws.dir.clone(), None, self.missing, &[])),
            Some((name, _)) => Ok(self.place(self.current(), name)),
        }
    }
}

/// Why a file could not be opened for reading, in words for the model.
pub fn refusal(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Dir => Some("it is a directory"),
        Kind::Special => {
            Some("it is not a regular file (a FIFO, socket or device); file tools only open regular files")
        }
        Kind::File | Kind::Symlink => None,
    }
}

/// A refusal of a kind of file as the error of its kind.
fn refused(kind: Kind, why: &str) -> PathError {
    match kind {
        Kind::Dir => PathError::IsADirectory(why.to_string()),
        _ => PathError::Refused(why.to_string()),
    }
}

impl Workspace {
    pub fn new(root: &Path) -> std::io::Result<Workspace> {
        let root = root.canonicalize()?;
        let dir = Arc::new(Dir::open(&root)?);
        let roots_shown =
            format!("the workspace ({}); file tools only work inside it", root.display()).into();
        Ok(Workspace {
            root,
            dir,
            added: Arc::default(),
            is_added: false,
            roots_shown,
            editor: None,
            diffs: false,
        })
    }

    /// The workspace with extra roots (each an existing directory, canonicalised and held
    /// open). An extra root that is the workspace, or one given twice, is kept once.
    pub fn with_added(mut self, dirs: &[PathBuf]) -> std::io::Result<Workspace> {
        let mut added: Vec<Workspace> = Vec::new();
        for dir in dirs {
            let extra = Workspace::new(dir)?;
            if extra.root != self.root && !added.iter().any(|a| a.root == extra.root) {
                added.push(Workspace { is_added: true, ..extra });
            }
        }
        if added.is_empty() {
            return Ok(self);
        }
        let shown: Vec<String> = added.iter().map(|a| a.root.display().to_string()).collect();
        let roots_shown: Arc<str> = format!(
            "the workspace ({}) and the added directories ({}); file tools only work inside them",
            self.root.display(),
            shown.join(", ")
        )
        .into();
        for extra in &mut added {
            extra.roots_shown = roots_shown.clone();
        }
        self.roots_shown = roots_shown;
        self.added = Arc::new(added);
        Ok(self)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file tools read and write through `editor` where it says it can, and every call
    /// that changes files says how.
    pub fn with_editor(mut self, editor: Option<Arc<dyn super::editor::Editor>>) -> Workspace {
        self.editor = editor;
        self.diffs = true;
        self
    }

    /// The editor the file tools read through, if any.
    pub fn reading_editor(&self) -> Option<&dyn super::editor::Editor> {
        self.editor.as_deref().filter(|e| e.reads())
    }

    /// The editor the file tools write through, if any.
    pub fn writing_editor(&self) -> Option<&dyn super::editor::Editor> {
        self.editor.as_deref().filter(|e| e.writes())
    }

    /// The editor whose terminal runs `bash`, if any.
    pub fn terminal_editor(&self) -> Option<&dyn super::editor::Editor> {
        self.editor.as_deref().filter(|e| e.runs_commands())
    }

    /// Whether the calls that change files say how.
    pub fn shows_diffs(&self) -> bool {
        self.diffs
    }

    /// The extra roots' paths.
    pub fn added_roots(&self) -> Vec<PathBuf> {
        self.added.iter().map(|a| a.root.clone()).collect()
    }

    fn outside(&self, raw: &str) -> String {
        format!("path {raw:?} is outside {}", self.roots_shown)
    }

    /// The root a path is resolved in: for an absolute path, the root holding it (the deepest,
    /// when one holds another); for a relative one, the root of `base`, else the workspace.
    fn root_for(&self, base: Option<&Place>, raw: &str) -> &Workspace {
        let path = Path::new(raw);
        if path.is_absolute() {
            let holding = std::iter::once(self)
                .chain(self.added.iter())
                .filter(|ws| path.starts_with(&ws.root))
                .max_by_key(|ws| ws.root.as_os_str().len());
            return holding.unwrap_or(self);
        }
        match base.and_then(|b| b.root.as_ref()) {
            Some(root) => self.added.iter().find(|a| &a.root == root).unwrap_or(self),
            None => self,
        }
    }

    /// Resolves a path the model gave (relative to `base`, a place inside the workspace, or
    /// absolute). With `follow`, a link in the last position is followed too; links elsewhere
    /// always are. Every link must resolve inside the workspace. Outside the root nothing is
    /// opened: a path that leaves it is followed by name only, and is refused unless it comes
    /// straight back in (`../ws/x`, or a link to the workspace's own absolute path).
    pub fn locate_from(
        &self,
        base: Option<&Place>,
        raw: &str,
        follow: bool,
        parents: Parents,
    ) -> Result<Place, PathError> {
        if raw.contains('\0') {
            return Err(PathError::Refused(format!("path {raw:?} contains a NUL byte")));
        }
        let ws = self.root_for(base, raw);
        let base = base.map_or(&[][..], |b| &b.rel[..]);
        let mut walk = Resolution::new(ws, base, raw, follow, parents);
        walk.roots = std::iter::once(self).chain(self.added.iter()).collect();
        while let Some(Pending { step, link }) = walk.queue.pop_front() {
            if walk.outside.is_some() {
                walk.step_outside(step, link);
                continue;
            }
            match step {
                Step::Up => walk.up(),
                Step::Name(name) => {
                    if let Some(place) = walk.name(name, link)? {
                        return Ok(place);
                    }
                }
            }
        }
        walk.finish()
    }

    fn place(
        &self,
        dir: Arc<Dir>,
        name: Option<OsString>,
        missing: Vec<OsString>,
        stack: &[(OsString, Arc<Dir>)],
    ) -> Place {
        let mut rel: Vec<OsString> = stack.iter().map(|(n, _)| n.clone()).collect();
        rel.extend(missing.iter().cloned());
        rel.extend(name.iter().cloned());
        Place { dir, name, missing, rel, root: self.is_added.then(|| self.root.clone()) }
    }

    fn shown_with(&self, stack: &[(OsString, Arc<Dir>)], name: &OsStr) -> String {
        let mut parts: Vec<String> =
            stack.iter().map(|(n, _)| n.to_string_lossy().into_owned()).collect();
        parts.push(name.to_string_lossy().into_owned());
        parts.join("/")
    }

    /// [`Workspace::locate_from`] the root.
    pub fn locate(&self, raw: &str, follow: bool, parents: Parents) -> Result<Place, PathError> {
        self.locate_from(None, raw, follow, parents)
    }

    /// A directory inside one of the roots, opened.
    pub fn open_dir(
        &self,
        base: Option<&Place>,
        raw: &str,
    ) -> Result<(Place, Arc<Dir>), PathError> {
        let place = self.locate_from(base, raw, true, Parents::Existing)?;
        match place.kind() {
            Ok(Some((Kind::Dir, _))) => {}
            Ok(Some(_)) => {
                return Err(PathError::NotADirectory(format!("{raw:?} is not a directory")))
            }
            Ok(None) => return Err(PathError::Missing(format!("{raw:?} does not exist"))),
            Err(e) => return Err(PathError::Io(e.to_string())),
        }
        let dir =
            place.open_dir().map_err(|e| PathError::Io(format!("cannot open {raw:?}: {e}")))?;
        Ok((place, dir))
    }

    /// The absolute path of a place (for the bash tool's working directory).
    pub fn absolute(&self, place: &Place) -> PathBuf {
        place.root.as_ref().unwrap_or(&self.root).join(place.rel_path())
    }
}

/// Opens the regular file at a place for reading. The type is checked before the open (so a
/// device is never opened) and again on what was opened (so a swap in between is caught).
pub fn open_regular(place: &Place) -> Result<(File, Metadata), PathError> {
    let Some(name) = &place.name else {
        return Err(PathError::IsADirectory("it is a directory".to_string()));
    };
    match place.kind() {
        Ok(Some((kind, _))) => {
            if let Some(why) = refusal(kind) {
                return Err(refused(kind, why));
            }
        }
        Ok(None) => {
            return Err(PathError::Missing("No such file or directory (os error 2)".to_string()))
        }
        Err(e) => return Err(PathError::Io(e.to_string())),
    }
    let file = place.dir.open_read(name).map_err(|e| match e.raw_os_error() {
        Some(dirfd::ELOOP) => {
            PathError::Refused("it was replaced by a symbolic link while being opened".to_string())
        }
        _ => PathError::Io(e.to_string()),
    })?;
    let meta = file.metadata().map_err(|e| PathError::Io(e.to_string()))?;
    if let Some(why) = refusal(Kind::of(&meta)) {
        return Err(refused(Kind::of(&meta), why));
    }
    Ok((file, meta))
}

/// A unique name for a temporary file beside the one it will replace.
fn temp_name(attempt: u32) -> OsString {
    OsString::from(format!(
        ".zero-{}-{}-{attempt}.tmp",
        std::process::id(),
        crate::clock::random_base36(6)
    ))
}

/// Writes `content` to a new temporary file in `dir` with `mode`, and returns its name.
pub fn write_temp(dir: &Dir, content: &[u8], mode: u32) -> std::io::Result<OsString> {
    let mut attempt = 0;
    loop {
        let name = temp_name(attempt);
        match dir.create_new(&name, 0o600) {
            Ok(mut file) => {
                let written = file
                    .write_all(content)
                    .and_then(|()| file.set_permissions(std::fs::Permissions::from_mode(mode)))
                    .and_then(|()| file.sync_all());
                return match written {
                    Ok(()) => Ok(name),
                    Err(err) => {
                        let _ = dir.unlink(&name);
                        Err(err)
                    }
                };
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => {
                attempt += 1;
            }
            Err(err) => return Err(err),
        }
    }
}

/// Replaces the regular file at a place with `content`: a temporary file in the same
/// directory, renamed over it. The mode (and, where permitted, the owner) is kept.
pub fn replace(place: &Place, content: &[u8], old: &Metadata) -> std::io::Result<()> {
    let Some(name) = &place.name else {
        return Err(std::io::Error::new(std::io::ErrorKind::IsADirectory, "a directory"));
    };
    let temp = write_temp(&place.dir, content, old.mode() & 0o7777)?;
    // Best effort: a file owned by someone else stays theirs when we may say so.
    if let Ok(file) = place.dir.open_read(&temp) {
        let meta = file.metadata().ok();
        if meta.is_some_and(|m| m.uid() != old.uid() || m.gid() != old.gid()) {
            let _ = std::os::unix::fs::fchown(&file, Some(old.uid()), Some(old.gid()));
        }
    }
    place.dir.rename(&temp, &place.dir, name).inspect_err(|_| {
        let _ = place.dir.unlink(&temp);
    })
}

/// Creates a new file at a place (it must not exist in any form) holding `content`.
pub fn create(place: &Place, content: &[u8]) -> std::io::Result<()> {
    let Some(name) = &place.name else {
        return Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "the root"));
    };
    let mut file = place.dir.create_new(name, 0o666)?;
    file.write_all(content).inspect_err(|_| {
        let _ = place.dir.unlink(name);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kit::TempDir;

    fn scratch(name: &str) -> TempDir {
        let dir = TempDir::new(name);
        std::fs::create_dir_all(dir.join("ws/sub")).unwrap();
        dir.write("outside.txt", "secret");
        dir
    }

    fn resolve(ws: &Workspace, raw: &str) -> Result<String, String> {
        ws.locate(raw, true, Parents::Existing).map(|p| p.shown()).map_err(|e| e.to_string())
    }

    #[test]
    fn inside_paths_resolve_and_escapes_are_refused() {
        let dir = scratch("escape");
        let ws = Workspace::new(&dir.join("ws")).unwrap();
        let root = ws.root().to_path_buf();
        assert_eq!(resolve(&ws, "sub/new.txt").unwrap(), "sub/new.txt");
        assert_eq!(resolve(&ws, "./sub/../a.txt").unwrap(), "a.txt");
        assert_eq!(resolve(&ws, &root.join("sub").to_string_lossy()).unwrap(), "sub");
        assert_eq!(resolve(&ws, ".").unwrap(), ".");
        assert_eq!(resolve(&ws, "sub/..").unwrap(), ".");
        for escape in
            ["../outside.txt", "sub/../../outside.txt", "/etc/passwd", "/", "..", "a/../../x"]
        {
            let err = ws.locate(escape, true, Parents::Plan).unwrap_err();
            assert!(err.to_string().contains("outside the workspace"), "{escape}: {err}");
        }
        std::os::unix::fs::symlink(dir.join("outside.txt"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(&dir.path, root.join("dirlink")).unwrap();
        std::os::unix::fs::symlink("sub", root.join("rel")).unwrap();
        assert!(resolve(&ws, "link").unwrap_err().contains("outside the workspace"));
        assert!(resolve(&ws, "dirlink/outside.txt").is_err());
        assert_eq!(resolve(&ws, "dirlink/ws/sub").unwrap(), "sub", "a link back inside is fine");
        assert_eq!(resolve(&ws, "rel/x.txt").unwrap(), "sub/x.txt");
        assert_eq!(resolve(&ws, "rel/..").unwrap(), ".", "`..` after a link is physical");
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).unwrap();
        assert!(resolve(&ws, "dangling").unwrap_err().contains("broken symbolic link"));
        // Without following, the last name is the link itself.
        let place = ws.locate("link", false, Parents::Existing).unwrap();
        assert_eq!(place.kind().unwrap().unwrap().0, Kind::Symlink);
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        assert!(resolve(&ws, "loop").unwrap_err().contains("too many symbolic links"));
    }

    #[test]
    fn added_roots_take_absolute_paths_and_keep_their_own_confinement() {
        let dir = scratch("added");
        std::fs::create_dir_all(dir.join("docs/api")).unwrap();
        std::fs::create_dir_all(dir.join("ws/vendored")).unwrap();
        std::fs::write(dir.join("docs/api/a.md"), "a").unwrap();
        let docs = dir.join("docs").canonicalize().unwrap();
        let vendored = dir.join("ws/vendored").canonicalize().unwrap();
        let ws = Workspace::new(&dir.join("ws"))
            .unwrap()
            .with_added(&[docs.clone(), vendored.clone(), docs.clone()])
            .unwrap();
        assert_eq!(ws.added_roots(), [docs.clone(), vendored.clone()], "each root once");
        let at = |p: &Path| p.display().to_string();
        let place = ws.locate(&at(&docs.join("api/a.md")), true, Parents::Existing).unwrap();
        assert_eq!(place.shown(), at(&docs.join("api/a.md")));
        assert_eq!(ws.absolute(&place), docs.join("api/a.md"));
        // A relative path from a place in an added root stays in that root.
        let base = ws.locate(&at(&docs.join("api")), true, Parents::Existing).unwrap();
        let next = ws.locate_from(Some(&base), "../api/a.md", true, Parents::Existing).unwrap();
        assert_eq!(next.shown(), at(&docs.join("api/a.md")));
        // Relative paths are the workspace's; a root inside the workspace is the deeper one.
        assert_eq!(resolve(&ws, "vendored").unwrap(), "vendored");
        let inner = ws.locate(&at(&vendored), true, Parents::Existing).unwrap();
        assert_eq!(inner.shown(), at(&vendored));
        // Out of an added root through `..` or a link is outside every root.
        std::os::unix::fs::symlink(dir.join("outside.txt"), docs.join("out")).unwrap();
        for escape in [docs.join("out"), docs.join("../outside.txt")] {
            let err = ws.locate(&at(&escape), true, Parents::Existing).unwrap_err();
            assert!(err.to_string().contains("and the added directories ("), "{err}");
        }
        // A path or a link that leaves one root by name and comes into another goes on there.
        let across = ws.locate("../docs/api/a.md", true, Parents::Existing).unwrap();
        assert_eq!(across.shown(), at(&docs.join("api/a.md")));
        std::os::unix::fs::symlink(docs.join("api"), dir.join("ws/api-link")).unwrap();
        let linked = ws.locate("api-link/a.md", true, Parents::Existing).unwrap();
        assert_eq!(ws.absolute(&linked), docs.join("api/a.md"));
        assert!(resolve(&ws, "../outside.txt").is_err());
    }

    #[test]
    fn missing_parents_are_an_error_a_plan_or_created() {
        let dir = scratch("parents");
        let ws = Workspace::new(&dir.join("ws")).unwrap();
        let err = ws.locate("a/b/c.txt", false, Parents::Existing).unwrap_err();
        assert!(err.to_string().contains("directory a does not exist"), "{err}");
        let plan = ws.locate("a/b/c.txt", false, Parents::Plan).unwrap();
        assert_eq!(plan.missing, [OsString::from("a"), OsString::from("b")]);
        assert_eq!(plan.shown(), "a/b/c.txt");
        assert!(!dir.join("ws/a").exists());
        let made = ws.locate("a/b/c.txt", false, Parents::Create).unwrap();
        assert!(made.missing.is_empty() && dir.join("ws/a/b").is_dir());
        create(&made, b"hi").unwrap();
        assert_eq!(dir.read("ws/a/b/c.txt"), "hi");
        dir.write("ws/file", "");
        assert!(matches!(
            ws.locate("file/x", false, Parents::Create),
            Err(PathError::NotADirectory(why)) if why.contains("not a directory")
        ));
    }

    #[test]
    fn replacing_keeps_the_mode_and_never_writes_through_a_link() {
        let dir = scratch("replace");
        let ws = Workspace::new(&dir.join("ws")).unwrap();
        dir.write("ws/run.sh", "old");
        std::fs::set_permissions(dir.join("ws/run.sh"), std::fs::Permissions::from_mode(0o751))
            .unwrap();
        let place = ws.locate("run.sh", true, Parents::Existing).unwrap();
        let (_, meta) = open_regular(&place).unwrap();
        replace(&place, b"new", &meta).unwrap();
        assert_eq!(dir.read("ws/run.sh"), "new");
        let mode = std::fs::metadata(dir.join("ws/run.sh")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o751);
        // The name became a link to an outside file after it was resolved: the link is
        // replaced, the outside file is untouched.
        std::fs::remove_file(dir.join("ws/run.sh")).unwrap();
        std::os::unix::fs::symlink(dir.join("outside.txt"), dir.join("ws/run.sh")).unwrap();
        replace(&place, b"again", &meta).unwrap();
        assert_eq!(dir.read("outside.txt"), "secret");
        assert_eq!(dir.read("ws/run.sh"), "again");
        let leftovers: Vec<_> = std::fs::read_dir(dir.join("ws"))
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn special_files_are_refused_before_they_are_opened() {
        let dir = scratch("special");
        let ws = Workspace::new(&dir.join("ws")).unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(dir.join("ws/sock")).unwrap();
        let place = ws.locate("sock", true, Parents::Existing).unwrap();
        assert!(
            matches!(open_regular(&place), Err(PathError::Refused(why)) if why.contains("not a regular file"))
        );
        let root = ws.locate(".", true, Parents::Existing).unwrap();
        assert_eq!(
            open_regular(&root).unwrap_err(),
            PathError::IsADirectory("it is a directory".into())
        );
    }
}
