//! apply_patch: a native unified-diff applier (no `git`), confined to the workspace.
//!
//! A patch may touch several files; each file is created (`--- /dev/null`), deleted
//! (`+++ /dev/null`) or modified. Hunks are matched against the file at their stated line,
//! else at the nearest place where their context and removed lines match exactly (then
//! ignoring trailing whitespace). Every file is computed in memory and every target checked
//! (parents included) first; then new contents are staged in temporary files, renamed into
//! place, and deletions done last. If any step fails, what was done is undone: a patch
//! changes everything or nothing.

use std::ffi::OsString;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use serde_json::{json, Value};

use super::files::{put, read_text};
use super::workspace::{self, write_temp, Parents, Place};
use super::{object_schema, ArgError, Args, Outcome, Workspace};
use crate::sys::dirfd::{Dir, Kind};
use crate::tools::workspace::PathError;

pub fn schema() -> Value {
    object_schema(
        json!({
            "patch": {"type": "string", "minLength": 1, "description": "A unified diff."},
            "cwd": {"type": "string", "description": "Directory the patch paths are relative to (inside the workspace)."},
        }),
        &["patch"],
    )
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    Context(String),
    Remove(String),
    Add(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    header: String,
    old_start: usize,
    lines: Vec<Line>,
    /// `\ No newline at end of file` after the old / new side's last line.
    old_no_newline: bool,
    new_no_newline: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct FilePatch {
    /// `None` is `/dev/null`.
    old: Option<String>,
    new: Option<String>,
    hunks: Vec<Hunk>,
}

/// Why a patch was not applied, by kind; each message names the line, hunk or file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatchError {
    /// The text is not a unified diff zero reads.
    Malformed(String),
    /// It does not fit the files as they are: a hunk's lines are not there, a file to create
    /// exists, a file to delete keeps lines.
    Conflict(String),
    /// A path it names cannot be used (outside the workspace, read-only, a link).
    Path(String),
    /// Writing failed; everything was put back as it was.
    Write(String),
}

crate::error::message_error!(PatchError: Malformed, Conflict, Path, Write);

impl From<PathError> for PatchError {
    fn from(err: PathError) -> PatchError {
        PatchError::Path(err.to_string())
    }
}

/// Parses a unified diff (plain or git-style) into per-file patches.
fn parse(patch: &str) -> Result<Vec<FilePatch>, PatchError> {
    let lines: Vec<&str> = patch.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut files: Vec<FilePatch> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(old) = line.strip_prefix("--- ") {
            let Some(new) = lines.get(i + 1).and_then(|l| l.strip_prefix("+++ ")) else {
                return Err(PatchError::Malformed(format!(
                    "line {}: \"--- \" header without a \"+++ \" line after it",
                    i + 1
                )));
            };
            files.push(FilePatch {
                old: header_path(old),
                new: header_path(new),
                hunks: Vec::new(),
            });
            i += 2;
            continue;
        }
        if line.starts_with("@@") {
            let Some(file) = files.last_mut() else {
                return Err(PatchError::Malformed(format!(
                    "line {}: hunk before any ---/+++ file header",
                    i + 1
                )));
            };
            let (hunk, next) = parse_hunk(&lines, i)?;
            file.hunks.push(hunk);
            i = next;
            continue;
        }
        // Anything else (diff --git, index, mode lines, prose) is skipped.
        i += 1;
    }
    if files.is_empty() {
        return Err(PatchError::Malformed(
            "no file changes found: expected a unified diff with ---/+++ headers and @@ hunks"
                .to_string(),
        ));
    }
    for file in &files {
        if file.old.is_none() && file.new.is_none() {
            return Err(PatchError::Malformed(
                "a file header names /dev/null on both sides".to_string(),
            ));
        }
        if file.hunks.is_empty() && file.new.is_some() {
            return Err(PatchError::Malformed(format!(
                "{} has no @@ hunks",
                file.new.as_deref().unwrap_or_default()
            )));
        }
    }
    Ok(files)
}

/// `a/src/x.rs\t2024-01-01 ...` to `src/x.rs`; `/dev/null` to `None`.
fn header_path(raw: &str) -> Option<String> {
    let path = raw.split('\t').next().unwrap_or(raw).trim();
    let path = path.trim_matches('"');
    if path == "/dev/null" {
        return None;
    }
    let path = path.strip_prefix("a/").or_else(|| path.strip_prefix("b/")).unwrap_or(path);
    Some(path.to_string())
}

fn parse_hunk(lines: &[&str], at: usize) -> Result<(Hunk, usize), PatchError> {
    let header = lines[at];
    let bad =
        || PatchError::Malformed(format!("line {}: malformed hunk header {header:?}", at + 1));
    let inner = header.strip_prefix("@@ ").and_then(|h| h.split(" @@").next()).ok_or_else(bad)?;
    let mut ranges = inner.split_whitespace();
    let range = |s: Option<&str>, sign: char| -> Option<(usize, usize)> {
        let s = s?.strip_prefix(sign)?;
        let (start, len) = s.split_once(',').unwrap_or((s, "1"));
        Some((start.parse().ok()?, len.parse().ok()?))
    };
    let (old_start, mut old_left) = range(ranges.next(), '-').ok_or_else(bad)?;
    let (_, mut new_left) = range(ranges.next(), '+').ok_or_else(bad)?;
    let mut hunk = Hunk {
        header: header.to_string(),
        old_start,
        lines: Vec::new(),
        old_no_newline: false,
        new_no_newline: false,
    };
    let mut i = at + 1;
    while i < lines.len() && (old_left > 0 || new_left > 0) {
        let line = lines[i];
        match line.chars().next() {
            Some(' ') => {
                hunk.lines.push(Line::Context(line[1..].to_string()));
                old_left = old_left.saturating_sub(1);
                new_left = new_left.saturating_sub(1);
            }
            // Models often drop the space of an empty context line.
            None if old_left > 0 && new_left > 0 && i + 1 < lines.len() => {
                hunk.lines.push(Line::Context(String::new()));
                old_left -= 1;
                new_left -= 1;
            }
            Some('-') if old_left > 0 => {
                hunk.lines.push(Line::Remove(line[1..].to_string()));
                old_left -= 1;
            }
            Some('+') if new_left > 0 => {
                hunk.lines.push(Line::Add(line[1..].to_string()));
                new_left -= 1;
            }
            Some('\\') => hunk.mark_no_newline(),
            _ => {
                return Err(PatchError::Malformed(format!(
                    "line {}: hunk {header:?} ends early: {old_left} old and {new_left} new lines were still expected",
                    i + 1
                )))
            }
        }
        i += 1;
    }
    if old_left > 0 || new_left > 0 {
        return Err(PatchError::Malformed(format!(
            "hunk {header:?} is cut off before its last line"
        )));
    }
    while lines.get(i).is_some_and(|l| l.starts_with('\\')) {
        hunk.mark_no_newline();
        i += 1;
    }
    Ok((hunk, i))
}

impl Hunk {
    /// A "\ No newline at end of file" marker: it refers to the line just before it.
    fn mark_no_newline(&mut self) {
        match self.lines.last() {
            Some(Line::Add(_)) => self.new_no_newline = true,
            Some(Line::Remove(_)) => self.old_no_newline = true,
            _ => {
                self.old_no_newline = true;
                self.new_no_newline = true;
            }
        }
    }
}

/// Parses a patch and applies its first file's hunks to `content` in memory (for the fuzzer).
#[cfg(test)]
pub(crate) fn apply_text(content: &str, patch: &str) -> Result<String, PatchError> {
    let files = parse(patch)?;
    let mut text = Text::parse(content);
    apply_hunks(&mut text, &files[0].hunks, "fuzz")?;
    Ok(text.render())
}

/// A file's text as lines, remembering whether it ended with a newline.
struct Text {
    lines: Vec<String>,
    final_newline: bool,
}

impl Text {
    fn parse(content: &str) -> Text {
        if content.is_empty() {
            return Text { lines: Vec::new(), final_newline: false };
        }
        let final_newline = content.ends_with('\n');
        let body = content.strip_suffix('\n').unwrap_or(content);
        Text { lines: body.split('\n').map(str::to_string).collect(), final_newline }
    }

    fn render(&self) -> String {
        let mut out = self.lines.join("\n");
        if self.final_newline && !self.lines.is_empty() {
            out.push('\n');
        }
        out
    }
}

/// Applies one file's hunks to its text.
fn apply_hunks(text: &mut Text, hunks: &[Hunk], shown: &str) -> Result<(), PatchError> {
    let mut offset: isize = 0;
    for (n, hunk) in hunks.iter().enumerate() {
        let old: Vec<&str> = hunk
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Context(s) | Line::Remove(s) => Some(s.as_str()),
                Line::Add(_) => None,
            })
            .collect();
        let new: Vec<String> = hunk
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Context(s) | Line::Add(s) => Some(s.clone()),
                Line::Remove(_) => None,
            })
            .collect();
        // `-N,L` names old lines N.. (1-based); `-N,0` adds after line N, as git reads it.
        let first = if old.is_empty() { hunk.old_start } else { hunk.old_start.max(1) - 1 };
        let wanted = (first as isize + offset).max(0) as usize;
        // "\ No newline at end of file" says the hunk ends the file: its place is the end.
        let ends_file = hunk.old_no_newline || hunk.new_no_newline;
        let at_end = text.lines.len().checked_sub(old.len()).filter(|_| ends_file);
        let at = at_end
            .and_then(|end| find_block(&text.lines[end..], &old, 0, |a, b| a == b).map(|_| end))
            .or_else(|| find_block(&text.lines, &old, wanted, |a, b| a == b))
            .or_else(|| find_block(&text.lines, &old, wanted, |a, b| a.trim_end() == b.trim_end()));
        let Some(at) = at else {
            return Err(PatchError::Conflict(mismatch(
                text,
                &old,
                wanted,
                n + 1,
                hunks.len(),
                &hunk.header,
                shown,
            )));
        };
        // Where the file goes on after a hunk that ends it, the patch was made for another
        // file (git would glue the lines together).
        if ends_file && at + old.len() != text.lines.len() {
            return Err(PatchError::Conflict(format!(
                "hunk {} of {} ({}) does not apply to {shown}: it ends the file (\"\\ No newline at end of file\"), but the file goes on after line {}",
                n + 1,
                hunks.len(),
                hunk.header,
                at + old.len()
            )));
        }
        text.lines.splice(at..at + old.len(), new.iter().cloned());
        offset += new.len() as isize - old.len() as isize;
        if hunk.new_no_newline {
            text.final_newline = false;
        } else if hunk.old_no_newline || (at + new.len() == text.lines.len() && !new.is_empty()) {
            text.final_newline = true;
        }
    }
    Ok(())
}

/// The position nearest `wanted` where `block` matches.
fn find_block(
    lines: &[String],
    block: &[&str],
    wanted: usize,
    eq: impl Fn(&str, &str) -> bool,
) -> Option<usize> {
    if block.len() > lines.len() {
        return None;
    }
    let last = lines.len() - block.len();
    let fits = |at: usize| block.iter().enumerate().all(|(k, b)| eq(&lines[at + k], b));
    let wanted = wanted.min(last);
    for distance in 0..=last {
        let below = wanted.checked_sub(distance);
        let above = wanted + distance;
        if below.is_none() && above > last {
            break;
        }
        if let Some(at) = below.filter(|&at| fits(at)) {
            return Some(at);
        }
        if distance > 0 && above <= last && fits(above) {
            return Some(above);
        }
    }
    None
}

/// Explains where a hunk stopped matching, at its stated place.
fn mismatch(
    text: &Text,
    old: &[&str],
    at: usize,
    n: usize,
    of: usize,
    header: &str,
    shown: &str,
) -> String {
    for (k, want) in old.iter().enumerate() {
        match text.lines.get(at + k) {
            Some(found) if found == want => continue,
            Some(found) => {
                return format!(
                    "hunk {n} of {of} ({header}) does not apply to {shown}: line {} should be {want:?} but is {found:?}, and the hunk's lines appear nowhere else in the file",
                    at + k + 1
                )
            }
            None => {
                return format!(
                    "hunk {n} of {of} ({header}) does not apply to {shown}: the file has only {} lines",
                    text.lines.len()
                )
            }
        }
    }
    format!("hunk {n} of {of} ({header}) does not apply to {shown}")
}

/// One file the patch touches: where it is, what it held, and what it will hold.
struct Target {
    place: Place,
    /// The content and metadata before the patch; `None` when the file does not exist.
    original: Option<(String, Metadata)>,
    /// The content after the patch; `None` when the patch deletes it.
    content: Option<String>,
}

/// The targets of a patch, in the order the patch names them.
#[derive(Default)]
struct Plan {
    targets: Vec<Target>,
}

impl Plan {
    fn find(&mut self, place: &Place) -> Option<&mut Target> {
        self.targets.iter_mut().find(|t| t.place.rel == place.rel)
    }

    /// The text of an existing file, as earlier sections of this patch left it.
    fn current(&mut self, ws: &Workspace, place: Place, shown: &str) -> Result<String, PatchError> {
        if let Some(target) = self.find(&place) {
            return target.content.clone().ok_or_else(|| {
                PatchError::Conflict(format!("{shown} is deleted earlier in this patch"))
            });
        }
        let (text, meta) = read_text(ws, &place)
            .map_err(|e| PatchError::Path(format!("cannot read {shown}: {e}")))?;
        super::files::refuse_read_only(&place, &meta, shown)?;
        self.targets.push(Target {
            place,
            original: Some((text.clone(), meta)),
            content: Some(text.clone()),
        });
        Ok(text)
    }

    fn set(&mut self, place: &Place, content: Option<String>) {
        if let Some(target) = self.find(place) {
            target.content = content;
        }
    }

    /// A new file: nothing may be there (unless this patch deletes it first).
    fn create(&mut self, place: Place, content: String, shown: &str) -> Result<(), PatchError> {
        if let Some(target) = self.find(&place) {
            if target.content.is_some() {
                return Err(PatchError::Conflict(format!(
                    "cannot create {shown}: it already exists"
                )));
            }
            target.content = Some(content);
            return Ok(());
        }
        match place.kind() {
            Ok(None) => {}
            Ok(Some(_)) => {
                return Err(PatchError::Conflict(format!(
                    "cannot create {shown}: it already exists"
                )))
            }
            Err(e) => return Err(PatchError::Path(format!("cannot create {shown}: {e}"))),
        }
        self.targets.push(Target { place, original: None, content: Some(content) });
        Ok(())
    }
}

pub(super) fn apply_patch(ws: &Workspace, args: &Args<'_>) -> Result<Outcome, ArgError> {
    let patch = args.required("patch", true)?;
    let fail = |detail: String| Ok(Outcome::error(format!("Error applying patch: {detail}")));
    let base = match patch_base(ws, args.string("cwd")?) {
        Ok(base) => base,
        Err(e) => return fail(e.to_string()),
    };
    let files = match parse(patch) {
        Ok(files) => files,
        Err(e) => return fail(e.to_string()),
    };
    // 1. Everything is checked and computed before anything is written.
    let mut plan = Plan::default();
    let mut summary = Vec::new();
    for file in &files {
        if let Err(e) = plan.add(ws, base.as_ref(), file, &mut summary) {
            return fail(e.to_string());
        }
    }
    // 2. Then written as one change: staged, renamed into place, deleted last; on any
    // failure everything is put back as it was. Through a client's editor, file by file.
    if ws.writing_editor().is_some() {
        if let Err(e) = write_through_editor(ws, &plan) {
            return fail(format!("writing through the editor failed: {e}"));
        }
    } else if let Err(e) = commit(&plan) {
        return fail(format!("writing failed, nothing was changed: {e}"));
    }
    summary.dedup();
    let changed = plan.targets.iter().map(|t| t.place.shown());
    let diffs = if ws.shows_diffs() {
        plan.targets
            .iter()
            .filter_map(|t| {
                let old = t.original.as_ref().map(|(text, _)| text.as_str());
                let new = t.content.as_deref().unwrap_or_default();
                super::editor::FileDiff::of(ws.absolute(&t.place), old, new)
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(Outcome::ok(format!("Patch applied successfully.\n{}", summary.join("\n")))
        .changing(changed)
        .showing(diffs))
}

/// The directory the patch's paths are relative to: `cwd`, which must be inside the
/// workspace, else its root.
fn patch_base(ws: &Workspace, cwd: Option<&str>) -> Result<Option<Place>, PatchError> {
    let Some(cwd) = cwd else { return Ok(None) };
    match ws.open_dir(None, cwd) {
        Ok((place, _)) => Ok(Some(place)),
        Err(PathError::NotADirectory(_)) => {
            Err(PatchError::Path(format!("cwd {cwd:?} is not a directory")))
        }
        Err(_) => Err(PatchError::Path(format!(
            "cwd must stay inside the workspace ({})",
            ws.root().display()
        ))),
    }
}

impl Plan {
    /// Adds one file of the patch: created, deleted, modified or renamed, checked against
    /// the file as earlier sections of the patch left it, with its line of the summary.
    fn add(
        &mut self,
        ws: &Workspace,
        base: Option<&Place>,
        file: &FilePatch,
        summary: &mut Vec<String>,
    ) -> Result<(), PatchError> {
        let locate =
            |p: &str, follow: bool, parents: Parents| ws.locate_from(base, p, follow, parents);
        let applied = |text: String, shown: &str| -> Result<String, PatchError> {
            let mut text = Text::parse(&text);
            apply_hunks(&mut text, &file.hunks, shown)?;
            Ok(text.render())
        };
        match (&file.old, &file.new) {
            (None, Some(new)) => {
                let place = locate(new, false, Parents::Plan)?;
                let content = applied(String::new(), new)?;
                summary.push(format!("A {new}"));
                self.create(place, content, new)
            }
            (Some(old), None) => {
                let place = locate(old, false, Parents::Existing)?;
                if matches!(place.kind(), Ok(Some((Kind::Symlink, _)))) {
                    return Err(PatchError::Path(format!(
                        "cannot delete {old}: it is a symbolic link"
                    )));
                }
                let text = self.current(ws, place.clone(), old)?;
                let mut left = Text::parse(&text);
                apply_hunks(&mut left, &file.hunks, old)?;
                if !left.lines.is_empty() {
                    return Err(PatchError::Conflict(format!(
                        "cannot delete {old}: the patch does not remove all of its lines"
                    )));
                }
                summary.push(format!("D {old}"));
                self.set(&place, None);
                Ok(())
            }
            (Some(old), Some(new)) => {
                let from = locate(old, true, Parents::Existing)?;
                let text = self.current(ws, from.clone(), old)?;
                let content = applied(text, old)?;
                let to = locate(new, true, Parents::Plan)?;
                if to.rel == from.rel {
                    summary.push(format!("M {new}"));
                    self.set(&from, Some(content));
                    return Ok(());
                }
                summary.push(format!("R {old} -> {new}"));
                self.set(&from, None);
                self.create(to, content, new)
            }
            (None, None) => Err(PatchError::Malformed(
                "a file header names /dev/null on both sides".to_string(),
            )),
        }
    }
}

/// What has been done so far, to undo it.
#[derive(Default)]
struct Undo {
    dirs: Vec<(Arc<Dir>, OsString)>,
    created: Vec<(Arc<Dir>, OsString)>,
    temps: Vec<(Arc<Dir>, OsString)>,
    /// Replaced or deleted files, with what they held.
    changed: Vec<usize>,
}

fn commit(plan: &Plan) -> Result<(), PatchError> {
    let mut undo = Undo::default();
    let result = stage_and_apply(plan, &mut undo);
    if result.is_err() {
        roll_back(plan, &undo);
    }
    result
}

fn stage_and_apply(plan: &Plan, undo: &mut Undo) -> Result<(), PatchError> {
    let shown = |t: &Target| t.place.shown();
    // New content: new files are created (O_EXCL) with their directories, replacements are
    // written to temporary files beside the files they replace.
    let mut staged: Vec<Option<OsString>> = Vec::with_capacity(plan.targets.len());
    for target in &plan.targets {
        let (Some(content), Some(name)) = (&target.content, &target.place.name) else {
            staged.push(None);
            continue;
        };
        match &target.original {
            Some((_, meta)) => {
                let temp = write_temp(&target.place.dir, content.as_bytes(), meta.mode() & 0o7777)
                    .map_err(|e| PatchError::Write(format!("{}: {e}", shown(target))))?;
                undo.temps.push((target.place.dir.clone(), temp.clone()));
                staged.push(Some(temp));
            }
            None => {
                let mut dir = target.place.dir.clone();
                for missing in &target.place.missing {
                    match dir.mkdir(missing, 0o777) {
                        Ok(()) => undo.dirs.push((dir.clone(), missing.clone())),
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(PatchError::Write(format!("{}: {e}", shown(target)))),
                    }
                    dir = Arc::new(
                        dir.open_dir(missing)
                            .map_err(|e| PatchError::Write(format!("{}: {e}", shown(target))))?,
                    );
                }
                let place = Place { dir: dir.clone(), missing: Vec::new(), ..target.place.clone() };
                workspace::create(&place, content.as_bytes())
                    .map_err(|e| PatchError::Write(format!("{}: {e}", shown(target))))?;
                undo.created.push((dir, name.clone()));
                staged.push(None);
            }
        }
    }
    // Replacements, each one atomic.
    for (i, target) in plan.targets.iter().enumerate() {
        let (Some(temp), Some(name)) = (&staged[i], &target.place.name) else { continue };
        target
            .place
            .dir
            .rename(temp, &target.place.dir, name)
            .map_err(|e| PatchError::Write(format!("{}: {e}", shown(target))))?;
        undo.temps.retain(|(_, t)| t != temp);
        undo.changed.push(i);
    }
    // Deletions last.
    for (i, target) in plan.targets.iter().enumerate() {
        if target.content.is_some() || target.original.is_none() {
            continue;
        }
        let Some(name) = &target.place.name else { continue };
        target
            .place
            .dir
            .unlink(name)
            .map_err(|e| PatchError::Write(format!("{}: {e}", shown(target))))?;
        undo.changed.push(i);
    }
    Ok(())
}

/// The plan written through the client's editor: each new or changed file written by it (a
/// new one's directories made first), then the deleted files (and the old names of renamed
/// ones) removed on disk, once every write succeeded, so a failed write loses no file. The
/// editor's writes cannot be staged: a failure names the file and the ones already written.
fn write_through_editor(ws: &Workspace, plan: &Plan) -> Result<(), PatchError> {
    let shown = |t: &Target| t.place.shown();
    let mut written: Vec<String> = Vec::new();
    let failed = |target: &Target, why: String, written: &[String]| {
        let done = if written.is_empty() {
            "nothing was changed".to_string()
        } else {
            format!("already written: {}; nothing was deleted", written.join(", "))
        };
        PatchError::Write(format!("{}: {why} ({done})", shown(target)))
    };
    for target in plan.targets.iter().filter(|t| t.content.is_some()) {
        let Some(content) = &target.content else { continue };
        let mut dir = target.place.dir.clone();
        for missing in &target.place.missing {
            match dir.mkdir(missing, 0o777) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(failed(target, e.to_string(), &written)),
            }
            let opened =
                dir.open_dir(missing).map_err(|e| failed(target, e.to_string(), &written))?;
            dir = Arc::new(opened);
        }
        let place = Place { dir, missing: Vec::new(), ..target.place.clone() };
        put(ws, &place, content, target.original.as_ref().map(|(_, meta)| meta))
            .map_err(|e| failed(target, e.to_string(), &written))?;
        written.push(shown(target));
    }
    for target in plan.targets.iter().filter(|t| t.content.is_none() && t.original.is_some()) {
        let Some(name) = &target.place.name else { continue };
        target.place.dir.unlink(name).map_err(|e| {
            PatchError::Write(format!(
                "{}: {e} (written: {}; the files deleted before it stay deleted)",
                shown(target),
                written.join(", ")
            ))
        })?;
    }
    Ok(())
}

/// Puts back what a failed commit changed, newest first (best effort: it is already failing).
fn roll_back(plan: &Plan, undo: &Undo) {
    for &i in undo.changed.iter().rev() {
        let target = &plan.targets[i];
        if let (Some((text, meta)), Some(name)) = (&target.original, &target.place.name) {
            if let Ok(temp) = write_temp(&target.place.dir, text.as_bytes(), meta.mode() & 0o7777) {
                if target.place.dir.rename(&temp, &target.place.dir, name).is_err() {
                    let _ = target.place.dir.unlink(&temp);
                }
            }
        }
    }
    for (dir, name) in undo.temps.iter().chain(undo.created.iter()) {
        let _ = dir.unlink(name);
    }
    for (dir, name) in undo.dirs.iter().rev() {
        let _ = dir.rmdir(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_git_style_multi_file_patches() {
        let patch = "diff --git a/x.txt b/x.txt\nindex 1..2 100644\n--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n";
        let files = parse(patch).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].old.as_deref(), Some("x.txt"));
        assert_eq!(
            files[0].hunks[0].lines,
            [Line::Context("one".into()), Line::Remove("two".into()), Line::Add("TWO".into())]
        );
        assert_eq!(files[1].old, None);
        assert_eq!(files[1].new.as_deref(), Some("new.txt"));
    }

    #[test]
    fn hunks_apply_at_an_offset_and_keep_newline_state() {
        let mut text = Text::parse("a\nb\nc\nd\ne\n");
        let hunk = Hunk {
            header: "@@ -1,2 +1,2 @@".into(),
            old_start: 1,
            lines: vec![Line::Context("c".into()), Line::Remove("d".into()), Line::Add("D".into())],
            old_no_newline: false,
            new_no_newline: false,
        };
        apply_hunks(&mut text, &[hunk], "f").unwrap();
        assert_eq!(text.render(), "a\nb\nc\nD\ne\n");
        let mut text = Text::parse("a\nb");
        let patch =
            parse("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+B\n")
                .unwrap();
        apply_hunks(&mut text, &patch[0].hunks, "f").unwrap();
        assert_eq!(text.render(), "a\nB\n");
    }

    #[test]
    fn a_pure_addition_goes_after_the_line_it_names_as_git_reads_it() {
        let patch = "--- a/f\n+++ b/f\n@@ -2,0 +3 @@\n+new\n";
        assert_eq!(apply_text("a\nb\nc\n", patch).unwrap(), "a\nb\nnew\nc\n");
        let at_top = "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+new\n";
        assert_eq!(apply_text("a\nb\n", at_top).unwrap(), "new\na\nb\n");
    }

    #[test]
    fn a_hunk_that_ends_the_file_is_placed_at_its_end_even_when_its_lines_come_earlier_too() {
        // "x\ny" is both at lines 1-2 and at the end; the marker says which one is meant.
        let patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+Y\n";
        assert_eq!(apply_text("x\ny\nm\nx\ny", patch).unwrap(), "x\ny\nm\nx\nY\n");
    }

    #[test]
    fn malformed_patches_are_explained() {
        let malformed = |patch: &str| match parse(patch) {
            Err(PatchError::Malformed(message)) => message,
            other => panic!("not malformed: {other:?}"),
        };
        assert!(malformed("just prose").starts_with("no file changes found"));
        assert!(
            malformed("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n").contains("were still expected")
        );
        assert!(malformed("@@ -1 +1 @@\n-a\n+b\n").contains("hunk before any"));
        assert!(malformed("--- a/x\n+++ b/x\n@@ bogus @@\n").contains("malformed hunk header"));
    }
}
