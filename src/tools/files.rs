//! read_file, write_file and edit_file (SPEC B 5.3 with A9: confined to the workspace, binary
//! files refused, capped reads, literal edits, sizes in bytes).

use std::io::{BufRead, BufReader, Read};

use serde_json::{json, Value};

use super::{looks_binary, object_schema, ArgError, Args, Outcome, Workspace};

/// Lines returned when the caller gives no range.
const DEFAULT_LINES: u64 = 2000;
/// Bytes of numbered output returned when the caller gives no range, and at most otherwise.
const DEFAULT_BYTES: usize = 256 * 1024;
const MAX_BYTES: usize = 1024 * 1024;

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
            return Err(ArgError(format!("end_line: {end} is before start_line {start}")));
        }
    }
    let fail = |detail: String| Ok(Outcome::error(format!("Error reading file {path}: {detail}")));
    let resolved = match ws.resolve(path) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let file = match std::fs::metadata(&resolved) {
        Ok(meta) if meta.is_dir() => {
            return fail("it is a directory; use list_directory".to_string())
        }
        Ok(_) => std::fs::File::open(&resolved),
        Err(err) => Err(err),
    };
    let file = match file {
        Ok(f) => f,
        Err(err) => return fail(err.to_string()),
    };
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    match reader.fill_buf() {
        Ok(sample) if looks_binary(&sample[..sample.len().min(8192)]) => {
            let size = std::fs::metadata(&resolved).map(|m| m.len()).unwrap_or(0);
            return Ok(Outcome::error(format!(
                "Error reading file {path}: it is a binary file ({size} bytes); read_file only returns text"
            )));
        }
        Ok(_) => {}
        Err(err) => return fail(err.to_string()),
    }
    let asked = start_arg.is_some() || end_arg.is_some() || max_arg.is_some();
    let start = start_arg.unwrap_or(1);
    let end = end_arg.unwrap_or(u64::MAX);
    let limit = max_arg.or(if end_arg.is_some() { None } else { Some(DEFAULT_LINES) });
    let byte_cap = if asked { MAX_BYTES } else { DEFAULT_BYTES };
    let mut lines: Vec<String> = Vec::new();
    let mut bytes = 0usize;
    let mut total = 0u64;
    let mut capped = false;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(err) => return fail(err.to_string()),
        }
        total += 1;
        if total < start || total > end {
            continue;
        }
        let over_lines = limit.is_some_and(|l| lines.len() as u64 >= l);
        if over_lines || bytes >= byte_cap {
            // The caller's own max_lines is not a cap worth a note; the defaults are.
            capped |= bytes >= byte_cap || max_arg.is_none();
            continue;
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        let line = String::from_utf8_lossy(&buf).into_owned();
        bytes += line.len() + 8;
        lines.push(line);
    }
    if total == 0 && start == 1 {
        return Ok(Outcome::ok(format!("File: {path} (0 lines)\n")));
    }
    if start > total {
        return Ok(Outcome::error(format!(
            "File: {path}\n(start_line {start} is past the end of the file, which has {total} lines)"
        )));
    }
    let last = start + lines.len() as u64 - 1;
    let width = last.to_string().len();
    let mut out = if asked {
        format!("File: {path} (lines {start}-{last} of {total})\n\n")
    } else {
        format!("File: {path} ({total} lines)\n\n")
    };
    for (i, line) in lines.iter().enumerate() {
        out.push_str(&format!("{:>width$} | {line}\n", start + i as u64));
    }
    // Cut a single enormous line so the result stays within the cap.
    if out.len() > byte_cap + 4096 {
        let mut cut = byte_cap;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('\n');
        capped = true;
    }
    if capped {
        out.push_str(&format!(
            "... (output capped; showing lines {start}-{last} of {total}; pass start_line to read further)\n"
        ));
    }
    Ok(Outcome::ok(out))
}

pub(super) fn write_file(ws: &Workspace, args: &Args<'_>) -> Result<Outcome, ArgError> {
    let path = args.required("path", true)?;
    let content = args.required("content", false)?;
    let overwrite = args.flag("overwrite", false)?;
    let fail = |detail: String| Ok(Outcome::error(format!("Error writing file {path}: {detail}")));
    let resolved = match ws.resolve(path) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let existing = std::fs::symlink_metadata(&resolved).ok();
    if let Some(meta) = &existing {
        if meta.is_dir() {
            return fail("it is a directory".to_string());
        }
        if !overwrite {
            return Ok(Outcome::error(format!(
                "Error: {path} already exists. Pass overwrite: true to replace it."
            )));
        }
    }
    if let Some(parent) = resolved.parent() {
        if let Err(err) = std::fs::create_dir_all(parent) {
            return fail(err.to_string());
        }
    }
    if let Err(err) = std::fs::write(&resolved, content) {
        return fail(err.to_string());
    }
    let verb = if existing.is_some() { "Overwrote" } else { "Created" };
    Ok(Outcome::ok(format!("{verb} {path} ({} bytes).", content.len())))
}

pub(super) fn edit_file(ws: &Workspace, args: &Args<'_>) -> Result<Outcome, ArgError> {
    let path = args.required("path", true)?;
    let old = args.required("old_string", true)?;
    let new = args.required("new_string", false)?;
    let all = args.flag("replace_all", false)?;
    let resolved = match ws.resolve(path) {
        Ok(p) => p,
        Err(e) => return Ok(Outcome::error(format!("Error reading {path}: {e}"))),
    };
    let mut bytes = Vec::new();
    if let Err(err) = std::fs::File::open(&resolved).and_then(|mut f| f.read_to_end(&mut bytes)) {
        return Ok(Outcome::error(format!("Error reading {path}: {err}")));
    }
    let Ok(content) = String::from_utf8(bytes) else {
        return Ok(Outcome::error(format!("Error reading {path}: it is not a UTF-8 text file")));
    };
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
    // Literal replacement: `$` in new_string is just a dollar sign (A9).
    let updated = if all { content.replace(old, new) } else { content.replacen(old, new, 1) };
    if let Err(err) = std::fs::write(&resolved, updated) {
        return Ok(Outcome::error(format!("Error writing {path}: {err}")));
    }
    let noun = if count == 1 { "occurrence" } else { "occurrences" };
    Ok(Outcome::ok(format!("Successfully edited {path} (replaced {count} {noun}).")))
}
