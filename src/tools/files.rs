//! read_file, write_file and edit_file (confined to the workspace, binary
//! and special files refused, reads capped in memory as in output, literal edits, files
//! replaced atomically, sizes in bytes). With a client's editor (`tools::editor`) the text is
//! read and written through it, once the confinement has allowed the path.

use std::fs::Metadata;
use std::io::{BufRead, BufReader, Read};

use serde_json::{json, Value};

use super::editor::FileDiff;
use super::workspace::{self, open_regular, refusal, Parents, Place};
use super::{looks_binary, object_schema, ArgError, Args, Outcome, Workspace};
use crate::sys::dirfd::Kind;
use crate::tools::workspace::PathError;

/// Lines returned when the caller gives no range.
const DEFAULT_LINES: u64 = 2000;
/// Bytes of numbered output returned when the caller gives no range, and at most otherwise.
const DEFAULT_BYTES: usize = 256 * 1024;
const MAX_BYTES: usize = 1024 * 1024;
/// Files larger than this are not edited (edit_file, apply_patch): they are read whole.
pub(super) const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

pub fn read_schema() -> Value {
    object_schema(
        json!({
            "path": {"type": "string", "minLength": 1, "description": "File path, relative to the workspace root."},
            "start_line": {"type": "integer", "minimum": 1, "description": "First line to return (1-based)."},
            "end_line": {"type": "integer", "minimum": 1, "description": "Last line to return (inclusive)."},
            "max_lines": {"type": "integer", "minimum": 1, "description": "Return at most this many lines."},
        }),
        &["path"],
    )
}

pub fn write_schema() -> Value {
    object_schema(
        json!({
            "path": {"type": "string", "minLength": 1, "description": "File path, relative to the workspace root."},
            "content": {"type": "string", "description": "The whole new content of the file."},
            "overwrite": {"type": "boolean", "description": "Replace the file if it exists (default false)."},
        }),
        &["path", "content"],
    )
}

pub fn edit_schema() -> Value {
    object_schema(
        json!({
            "path": {"type": "string", "minLength": 1, "description": "File path, relative to the workspace root."},
            "old_string": {"type": "string", "minLength": 1, "description": "Exact text to replace."},
            "new_string": {"type": "string", "description": "Replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false: old_string must be unique)."},
        }),
        &["path", "old_string", "new_string"],
    )
}

pub(super) fn read_file(ws: &Workspace, args: &Args<'_>) -> Result<Outcome, ArgError> {
    let path = args.required("path", true)?;
    let start_arg = args.integer("start_line", 1, u64::MAX)?;
    let end_arg = args.integer("end_line", 1, u64::MAX)?;
    let max_arg = args.integer("max_lines", 1, u64::MAX)?;
    if let (Some(start), Some(end)) = (start_arg, end_arg) {
        if end < start {
            return Err(ArgError::Inconsistent {
                field: "end_line".to_string(),
                why: format!("{end} is before start_line {start}"),
            });
        }
    }
    let fail = |detail: String| Ok(Outcome::error(format!("Error reading file {path}: {detail}")));
    let place = match ws.locate(path, true, Parents::Existing) {
        Ok(p) => p,
        Err(e) => return fail(e.to_string()),
    };
    let (file, meta) = match open_regular(&place) {
        Ok(opened) => opened,
        Err(PathError::IsADirectory(_)) => {
            return fail("it is a directory; use list_directory".to_string())
        }
        Err(e) => return fail(e.to_string()),
    };
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    match reader.fill_buf() {
        Ok(sample) if looks_binary(&sample[..sample.len().min(8192)]) => {
            return Ok(Outcome::error(format!(
                "Error reading file {path}: it is a binary file ({} bytes); read_file only returns text",
                meta.len()
            )));
        }
        Ok(_) => {}
        Err(err) => return fail(err.to_string()),
    }
    let window = Window {
        asked: start_arg.is_some() || end_arg.is_some() || max_arg.is_some(),
        start: start_arg.unwrap_or(1),
        end: end_arg.unwrap_or(u64::MAX),
        limit: max_arg.or(if end_arg.is_some() { None } else { Some(DEFAULT_LINES) }),
        own_limit: max_arg.is_some(),
    };
    if let Some(editor) = ws.reading_editor() {
        // What the editor holds, unsaved changes included.
        let text = match editor.read(&ws.absolute(&place)) {
            Ok(text) => text,
            Err(err) => return fail(err.to_string()),
        };
        return match window.read(&mut text.as_bytes()) {
            Ok(read) => Ok(read.answer(path, &window)),
            Err(err) => fail(err.to_string()),
        };
    }
    match window.read(&mut reader) {
        Ok(read) => Ok(read.answer(path, &window)),
        Err(err) => fail(err.to_string()),
    }
}

/// The lines read_file is asked for: from `start` to `end`, at most `limit` of them.
struct Window {
    /// The caller named lines (else the defaults apply, and the cap is smaller).
    asked: bool,
    start: u64,
    end: u64,
    limit: Option<u64>,
    /// The limit is the caller's `max_lines`, not the default.
    own_limit: bool,
}

/// What was read of a file: the lines in the window, how many the file has, and whether a
/// cap cut the answer short.
struct Lines {
    lines: Vec<String>,
    total: u64,
    capped: bool,
}

impl Window {
    fn byte_cap(&self) -> usize {
        if self.asked {
            MAX_BYTES
        } else {
            DEFAULT_BYTES
        }
    }

    /// Reads the whole file, keeping the window's lines within the caps.
    fn read(&self, reader: &mut impl BufRead) -> std::io::Result<Lines> {
        let byte_cap = self.byte_cap();
        let mut read = Lines { lines: Vec::new(), total: 0, capped: false };
        let mut bytes = 0usize;
        let mut buf = Vec::new();
        // A line is held up to the cap at most, however long it is in the file.
        while let Some(cut) = read_line_capped(reader, &mut buf, byte_cap + 1)? {
            read.total += 1;
            if read.total < self.start || read.total > self.end {
                continue;
            }
            let over_lines = self.limit.is_some_and(|l| read.lines.len() as u64 >= l);
            if over_lines || bytes >= byte_cap {
                // The caller's own max_lines is not a cap worth a note; the defaults are.
                read.capped |= bytes >= byte_cap || !self.own_limit;
                continue;
            }
            read.capped |= cut;
            let line = String::from_utf8_lossy(&buf).into_owned();
            bytes += line.len() + 8;
            read.lines.push(line);
        }
        Ok(read)
    }
}

impl Lines {
    /// The numbered lines, with a header saying which, and a note when a cap cut them.
    fn answer(mut self, path: &str, window: &Window) -> Outcome {
        let (start, total) = (window.start, self.total);
        if total == 0 && start == 1 {
            return Outcome::ok(format!("File: {path} (0 lines)\n"));
        }
        if start > total {
            return Outcome::error(format!(
                "File: {path}\n(start_line {start} is past the end of the file, which has {total} lines)"
            ));
        }
        let last = start + self.lines.len() as u64 - 1;
        let width = last.to_string().len();
        let mut out = if window.asked {
            format!("File: {path} (lines {start}-{last} of {total})\n\n")
        } else {
            format!("File: {path} ({total} lines)\n\n")
        };
        for (i, line) in self.lines.iter().enumerate() {
            out.push_str(&format!("{:>width$} | {line}\n", start + i as u64));
        }
        // Cut a single enormous line so the result stays within the cap.
        let byte_cap = window.byte_cap();
        if out.len() > byte_cap + 4096 {
            let mut cut = byte_cap;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push('\n');
            self.capped = true;
        }
        if self.capped {
            out.push_str(&format!(
                "... (output capped; showing lines {start}-{last} of {total}; pass start_line to read further)\n"
            ));
        }
        Outcome::ok(out)
    }
}

/// Reads one line into `buf` without its newline, keeping at most `keep` bytes of it (the rest
/// is read and dropped). `Some(cut)` says whether the line was longer; `None` at the end.
fn read_line_capped(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    keep: usize,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut any = false;
    let mut cut = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if available.is_empty() {
            return Ok(any.then_some(cut));
        }
        any = true;
        let (piece, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        let room = keep.saturating_sub(buf.len());
        cut |= piece.len() > room;
        buf.extend_from_slice(&piece[..piece.len().min(room)]);
        reader.consume(used);
        if done {
            return Ok(Some(cut));
        }
    }
}

/// Reads a whole text file for an edit, up to [`MAX_EDIT_BYTES`].
pub(super) fn read_for_edit(place: &Place) -> Result<(String, Metadata), PathError> {
    let (file, meta) = open_regular(place)?;
    if meta.len() > MAX_EDIT_BYTES {
        return Err(PathError::Refused(format!(
            "it is {} bytes; files over {} MiB are not edited",
            meta.len(),
            MAX_EDIT_BYTES / (1024 * 1024)
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_EDIT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| PathError::Io(e.to_string()))?;
    if bytes.len() as u64 > MAX_EDIT_BYTES {
        return Err(PathError::Refused(format!(
            "it grew past {} MiB while being read",
            MAX_EDIT_BYTES / (1024 * 1024)
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| PathError::Refused("it is not a UTF-8 text file".to_string()))?;
    Ok((text, meta))
}

/// A file's whole text for an edit: from the editor when the client reads files (its unsaved
/// changes count), else from disk; the disk file is checked either way.
pub(super) fn read_text(ws: &Workspace, place: &Place) -> Result<(String, Metadata), PathError> {
    let (text, meta) = read_for_edit(place)?;
    match ws.reading_editor() {
        Some(editor) => {
            let text =
                editor.read(&ws.absolute(place)).map_err(|e| PathError::Io(e.to_string()))?;
            Ok((text, meta))
        }
        None => Ok((text, meta)),
    }
}

/// Writes `content` at a place: through the editor when the client writes files (a new file is
/// first created empty on disk, so the editor writes only where a file may be), else on disk
/// (an existing file replaced, a new one created).
pub(super) fn put(
    ws: &Workspace,
    place: &Place,
    content: &str,
    existing: Option<&Metadata>,
) -> std::io::Result<()> {
    let Some(editor) = ws.writing_editor() else {
        return match existing {
            Some(meta) => workspace::replace(place, content.as_bytes(), meta),
            None => workspace::create(place, content.as_bytes()),
        };
    };
    if existing.is_none() {
        workspace::create(place, b"")?;
    }
    editor.write(&ws.absolute(place), content).map_err(|err| {
        if let (None, Some(name)) = (existing, &place.name) {
            let _ = place.dir.unlink(name);
        }
        std::io::Error::other(err.to_string())
    })
}

/// The diff of one changed file, when the workspace shows diffs.
pub(super) fn diff(ws: &Workspace, place: &Place, old: Option<&str>, new: &str) -> Vec<FileDiff> {
    if !ws.shows_diffs() {
        return Vec::new();
    }
    FileDiff::of(ws.absolute(place), old, new).into_iter().collect()
}

/// A file this process may not write (`chmod a-w`, another user's file, a read-only mount)
/// is not replaced: zero writes by rename, which the file's own permissions would not stop, so
/// it says no instead.
pub(super) fn refuse_read_only(
    place: &Place,
    meta: &Metadata,
    shown: &str,
) -> Result<(), PathError> {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode() & 0o7777;
    // No write bit at all says "leave me", even to root, who may write anything.
    if mode & 0o222 == 0 {
        return Err(PathError::ReadOnly(format!(
            "{shown} is read-only (mode {mode:04o}); it was left as it is"
        )));
    }
    let Some(name) = &place.name else { return Ok(()) };
    if place.dir.may_write(name).map_err(|err| PathError::Io(err.to_string()))? {
        return Ok(());
    }
    Err(PathError::ReadOnly(format!(
        "{shown} is read-only for this user (mode {mode:04o}, owner uid {}); it was left as it is",
        meta.uid()
    )))
}

pub(super) fn write_file(ws: &Workspace, args: &Args<'_>) -> Result<Outcome, ArgError> {
    let path = args.required("path", true)?;
    let content = args.required("content", false)?;
    let overwrite = args.flag("overwrite", false)?;
    let fail = |detail: String| Ok(Outcome::error(format!("Error writing file {path}: {detail}")));
    let place = match ws.locate(path, true, Parents::Create) {
        Ok(p) => p,
        Err(e) => return fail(e.to_string()),
    };
    let existing = match place.kind() {
        Ok(found) => found,
        Err(err) => return fail(err.to_string()),
    };
    let mut old = None;
    let written = match &existing {
        Some((Kind::Dir, _)) => return fail("it is a directory".to_string()),
        Some((Kind::Special, _)) => return fail(refusal(Kind::Special).unwrap_or("").to_string()),
        Some(_) if !overwrite => {
            return Ok(Outcome::error(format!(
                "Error: {path} already exists. Pass overwrite: true to replace it."
            )));
        }
        Some((_, meta)) => match refuse_read_only(&place, meta, path) {
            Ok(()) => {
                // Only for the diff: a file that cannot be read as text shows none.
                if ws.shows_diffs() {
                    old = read_text(ws, &place).ok().map(|(text, _)| text);
                }
                put(ws, &place, content, Some(meta))
            }
            Err(why) => return Ok(Outcome::error(format!("Error: {why}."))),
        },
        None => put(ws, &place, content, None),
    };
    if let Err(err) = written {
        return fail(err.to_string());
    }
    let verb = if existing.is_some() { "Overwrote" } else { "Created" };
    let diffs = match (&existing, &old) {
        // An overwritten file whose old text is unknown shows no diff.
        (Some(_), None) => Vec::new(),
        _ => diff(ws, &place, old.as_deref(), content),
    };
    Ok(Outcome::ok(format!("{verb} {path} ({} bytes).", content.len()))
        .changing([place.shown()])
        .showing(diffs))
}

pub(super) fn edit_file(ws: &Workspace, args: &Args<'_>) -> Result<Outcome, ArgError> {
    let path = args.required("path", true)?;
    let old = args.required("old_string", true)?;
    let new = args.required("new_string", false)?;
    let all = args.flag("replace_all", false)?;
    let read = ws
        .locate(path, true, Parents::Existing)
        .and_then(|place| read_text(ws, &place).map(|(text, meta)| (place, text, meta)));
    let (place, content, meta) = match read {
        Ok(found) => found,
        Err(e) => return Ok(Outcome::error(format!("Error reading {path}: {e}"))),
    };
    if let Err(why) = refuse_read_only(&place, &meta, path) {
        return Ok(Outcome::error(format!("Error: {why}.")));
    }
    let count = content.matches(old).count();
    if count == 0 {
        return Ok(Outcome::error(format!(
            "Error: Could not find the exact string to replace in {path}. The old_string must match the file byte-for-byte."
        )));
    }
    if count > 1 && !all {
        return Ok(Outcome::error(format!(
            "Error: old_string matches {count} locations in {path}. Either make old_string more specific, or pass replace_all: true to replace every occurrence."
        )));
    }
    if old == new {
        return Ok(Outcome::ok("No changes: new_string is identical to old_string."));
    }
    // Literal replacement: `$` in new_string is just a dollar sign.
    let updated = if all { content.replace(old, new) } else { content.replacen(old, new, 1) };
    if let Err(err) = put(ws, &place, &updated, Some(&meta)) {
        return Ok(Outcome::error(format!("Error writing {path}: {err}")));
    }
    let noun = if count == 1 { "occurrence" } else { "occurrences" };
    Ok(Outcome::ok(format!("Successfully edited {path} (replaced {count} {noun})."))
        .changing([place.shown()])
        .showing(diff(ws, &place, Some(&content), &updated)))
}
