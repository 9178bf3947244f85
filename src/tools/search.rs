//! list_directory, glob and grep: read-only views of the workspace.
//!
//! All three walk directories in sorted order (so results are stable) through directory
//! handles, never follow a symbolic link into a directory (so they cannot leave the
//! workspace), skip FIFOs, sockets and devices, and stop after a bounded number of entries
//! and levels.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;

use serde_json::{json, Value};

use super::workspace::{open_regular, refusal, Parents, Place};
use super::{looks_binary, object_schema, ArgError, Args, Outcome, Workspace};
use crate::search::glob::Glob;
use crate::search::ignore::{read_ignore, IgnoreFileError, Level, Stack, Verdict};
use crate::search::regex::Regex;
use crate::sys::dirfd::{Dir, Kind};
use crate::tools::workspace::PathError;

/// Directories skipped like ignored ones (unless `include_ignored`), whatever the ignore
/// files say: dependencies nobody edits.
const DEFAULT_IGNORED: &[&str] = &["node_modules"];
/// Entries visited by one walk at most.
const WALK_LIMIT: usize = 200_000;
/// Lines of a list_directory answer at most.
const LIST_LIMIT: usize = 1000;
/// Files larger than this are not searched by grep.
const GREP_FILE_LIMIT: u64 = 50 * 1024 * 1024;
/// A matching line is shown up to this many characters.
const GREP_LINE_CHARS: usize = 500;
/// The first bytes of a line that grep searches (the rest of a longer line is skipped).
const GREP_LINE_BYTES: usize = 1024 * 1024;
/// grep reads a file in pieces of at most this many bytes (at line ends).
const GREP_PIECE_BYTES: usize = 4 * 1024 * 1024;
/// Directory levels a walk enters at most (each open level holds one file descriptor).
const MAX_WALK_DEPTH: usize = 128;

pub fn list_schema() -> Value {
    object_schema(
        json!({
            "path": {"type": "string", "description": "Directory, relative to the workspace root (default: the root)."},
            "recursive": {"type": "boolean", "description": "List subdirectories too (default false)."},
            "max_depth": {"type": "integer", "minimum": 1, "maximum": 5, "description": "How deep to recurse (default 2)."},
            "include_ignored": {"type": "boolean", "description": "Also list what .gitignore, .ignore and .git/info/exclude leave out, and node_modules (default false)."},
        }),
        &[],
    )
}

pub fn grep_schema() -> Value {
    object_schema(
        json!({
            "pattern": {"type": "string", "minLength": 1, "description": "Regular expression to search for."},
            "path": {"type": "string", "description": "File or directory to search (default: the workspace root)."},
            "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.rs or src/**/*.ts."},
            "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "Default content."},
            "-i": {"type": "boolean", "description": "Case-insensitive."},
            "-n": {"type": "boolean", "description": "Show line numbers (default true)."},
            "head_limit": {"type": "integer", "minimum": 1, "description": "Return at most this many lines (default 50)."},
            "include_ignored": {"type": "boolean", "description": "Also search files .gitignore, .ignore and .git/info/exclude leave out, and node_modules (default false)."},
        }),
        &["pattern"],
    )
}

pub fn glob_schema() -> Value {
    object_schema(
        json!({
            "pattern": {"type": "string", "minLength": 1, "description": "Glob pattern, e.g. **/*.rs."},
            "cwd": {"type": "string", "description": "Directory to search from, relative to the workspace root."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Most paths returned (default 100)."},
            "include_dirs": {"type": "boolean", "description": "Match directories too (default false)."},
            "include_ignored": {"type": "boolean", "description": "Also match what .gitignore, .ignore and .git/info/exclude leave out, and node_modules (default false)."},
        }),
        &["pattern"],
    )
}

/// A directory entry met by a walk.
struct Entry {
    name: OsString,
    /// Relative to the walk's start, `/`-separated.
    rel: String,
    depth: usize,
    kind: Kind,
    /// An ignore file re-includes it by name (`!.github/`): shown even when hidden, as
    /// ripgrep and fd do.
    whitelisted: bool,
}

impl Entry {
    fn is_dir(&self) -> bool {
        self.kind == Kind::Dir
    }

    fn name(&self) -> &str {
        self.rel.rsplit('/').next().unwrap_or(&self.rel)
    }
}

/// What a walk left out because of its limits.
#[derive(Debug, Default)]
struct Walked {
    /// It stopped after [`WALK_LIMIT`] entries.
    out_of_budget: bool,
    /// Directories below [`MAX_WALK_DEPTH`] levels were not entered.
    too_deep: bool,
    /// Directories left out because an ignore file of theirs cannot be applied: each one and
    /// why (the first few).
    refused: Vec<(String, String)>,
}

/// Refused directories named in a note at most.
const MAX_REFUSED_NOTES: usize = 8;

impl Walked {
    /// A note for the model on what was not searched, if anything.
    fn note(&self) -> String {
        let mut note = String::new();
        if self.out_of_budget {
            note.push_str(&format!("\n... (the search stopped after {WALK_LIMIT} entries)"));
        }
        if self.too_deep {
            note.push_str(&format!(
                "\n... (directories more than {MAX_WALK_DEPTH} levels deep were not searched)"
            ));
        }
        for (dir, why) in &self.refused {
            note.push_str(&format!(
                "\n... ({dir} was left out: {why}, so what it excludes cannot be told apart)"
            ));
        }
        note
    }
}

/// Visits entries under `dir` in sorted order, depth first, through directory handles only
/// (a link is listed, never entered; FIFOs, sockets and devices are skipped). `descend`
/// decides whether a directory is entered; `visit` gets each entry with the handle of its
/// directory, and returns false to stop.
fn walk(
    dir: &Dir,
    max_depth: usize,
    ignore: Option<Stack>,
    descend: &dyn Fn(&Entry) -> bool,
    visit: &mut dyn FnMut(&Entry, &Dir) -> bool,
) -> Walked {
    let mut walk = Walk { budget: WALK_LIMIT, max_depth, ignore, walked: Walked::default() };
    // An ignore file of the start or above it that cannot be applied: nothing is shown.
    if let Some(why) = walk.ignore.as_ref().and_then(Stack::refused) {
        walk.walked.refused.push((".".to_string(), why.to_string()));
        return walk.walked;
    }
    walk.enter(dir, "", 0, descend, visit);
    walk.walked
}

struct Walk {
    budget: usize,
    max_depth: usize,
    /// The ignore rules in force (none with `include_ignored`).
    ignore: Option<Stack>,
    walked: Walked,
}

impl Walk {
    fn enter(
        &mut self,
        dir: &Dir,
        prefix: &str,
        depth: usize,
        descend: &dyn Fn(&Entry) -> bool,
        visit: &mut dyn FnMut(&Entry, &Dir) -> bool,
    ) -> bool {
        let Ok(mut entries) = dir.entries(self.budget + 1) else { return true };
        entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        // The start's own rules were read with its ancestors'; a directory below it brings
        // its ignore files (read only when the listing has them) and may be a repository.
        let pushed = match &mut self.ignore {
            Some(stack) if depth > 0 => {
                let level = level_of(dir, &entries, prefix);
                if let Some(why) = level.refused {
                    // Fail closed: the directory is left out, never shown unruled.
                    if self.walked.refused.len() < MAX_REFUSED_NOTES {
                        self.walked.refused.push((format!("{prefix}/"), why));
                    }
                    return true;
                }
                stack.push(prefix, level);
                true
            }
            _ => false,
        };
        let go_on = self.visit_all(dir, entries, prefix, depth, descend, visit);
        if pushed {
            if let Some(stack) = &mut self.ignore {
                stack.pop();
            }
        }
        go_on
    }

    fn visit_all(
        &mut self,
        dir: &Dir,
        entries: Vec<crate::sys::dirfd::Entry>,
        prefix: &str,
        depth: usize,
        descend: &dyn Fn(&Entry) -> bool,
        visit: &mut dyn FnMut(&Entry, &Dir) -> bool,
    ) -> bool {
        for found in entries {
            if found.kind == Kind::Special {
                continue;
            }
            if self.budget == 0 {
                self.walked.out_of_budget = true;
                return false;
            }
            self.budget -= 1;
            let name = found.name.to_string_lossy();
            let rel =
                if prefix.is_empty() { name.into_owned() } else { format!("{prefix}/{name}") };
            let mut entry =
                Entry { name: found.name, rel, depth, kind: found.kind, whitelisted: false };
            // Git's own directory (or a worktree's `.git` file) is never shown; ignored
            // entries are left out with all they hold, as git and ripgrep do.
            if entry.name() == ".git" {
                continue;
            }
            match self.ignore.as_ref().and_then(|i| i.verdict(&entry.rel, entry.is_dir())) {
                Some(Verdict::Ignored) => continue,
                Some(Verdict::Included) => entry.whitelisted = true,
                None => {}
            }
            if !visit(&entry, dir) {
                return false;
            }
            if !entry.is_dir() || depth >= self.max_depth || !descend(&entry) {
                continue;
            }
            if depth >= MAX_WALK_DEPTH {
                self.walked.too_deep = true;
                continue;
            }
            let Ok(sub) = dir.open_dir(&entry.name) else { continue };
            if !self.enter(&sub, &entry.rel, depth + 1, descend, visit) {
                return false;
            }
        }
        true
    }
}

pub(super) fn list_directory(ws: &Workspace, args: &Args<'_>) -> Result<Outcome, ArgError> {
    let path = args.string("path")?.unwrap_or(".");
    let recursive = args.flag("recursive", false)?;
    let max_depth = args.integer("max_depth", 1, 5)?.unwrap_or(2) as usize;
    let include_ignored = args.flag("include_ignored", false)?;
    let place = match ws.locate(path, true, Parents::Existing) {
        Ok(place) => place,
        Err(e) => return Ok(Outcome::error(format!("Error listing {path}: {e}"))),
    };
    match place.kind() {
        Ok(Some((Kind::Dir, _))) => {}
        Ok(Some(_)) => {
            return Ok(Outcome::error(format!("Error listing {path}: it is a file; use read_file")))
        }
        Ok(None) => {
            return Ok(Outcome::error(format!(
                "Error listing {path}: No such file or directory (os error 2)"
            )))
        }
        Err(err) => return Ok(Outcome::error(format!("Error listing {path}: {err}"))),
    }
    let dir = match place.open_dir() {
        Ok(dir) => dir,
        Err(err) => return Ok(Outcome::error(format!("Error listing {path}: {err}"))),
    };
    let depth = if recursive { max_depth } else { 0 };
    let ignore = ignore_rules(ws, &place, include_ignored);
    let mut lines = Vec::new();
    let mut capped = false;
    let walked = walk(&dir, depth, ignore, &|_| true, &mut |entry, _| {
        if lines.len() >= LIST_LIMIT {
            capped = true;
            return false;
        }
        let indent = "  ".repeat(entry.depth);
        let name = entry.name();
        let name = crate::text::shown_name(name);
        lines.push(if entry.is_dir() {
            format!("{indent}📁 {name}/")
        } else {
            format!("{indent}📄 {name}")
        });
        true
    });
    if lines.is_empty() && walked.refused.is_empty() {
        return Ok(Outcome::ok(format!("Directory is empty: {path}")));
    }
    let mut out = format!("Contents of {path}:\n\n{}", lines.join("\n"));
    if capped {
        out.push_str(&format!("\n... (listing capped at {LIST_LIMIT} entries)"));
    }
    out.push_str(&walked.note());
    Ok(Outcome::ok(out))
}

pub(super) fn glob(ws: &Workspace, args: &Args<'_>) -> Result<Outcome, ArgError> {
    let pattern = args.required("pattern", true)?;
    let limit = args.integer("limit", 1, 1000)?.unwrap_or(100) as usize;
    let include_dirs = args.flag("include_dirs", false)?;
    let include_ignored = args.flag("include_ignored", false)?;
    // A pattern is quoted whole only when it is short: a 50,000-character one would push the
    // reason out of the capped result.
    let shown = crate::text::cut_chars(pattern, 200);
    let fail =
        |detail: String| Ok(Outcome::error(format!("Error running glob \"{shown}\": {detail}")));
    let root = match args.string("cwd")? {
        None => None,
        Some(cwd) => match ws.open_dir(None, cwd) {
            Ok((place, _)) => Some(place),
            Err(PathError::NotADirectory(_)) => {
                return fail(format!("cwd {cwd:?} is not a directory"))
            }
            Err(e) => return fail(e.to_string()),
        },
    };
    if Glob::escapes(pattern) {
        return fail(
            "the pattern leaves the search directory; use a pattern relative to it".to_string(),
        );
    }
    let glob = match Glob::new(pattern) {
        Ok(g) => g,
        Err(e) => return fail(e.to_string()),
    };
    let base = glob.base().join("/");
    let start = if base.is_empty() {
        ws.open_dir(root.as_ref(), ".")
    } else {
        ws.open_dir(root.as_ref(), &base)
    };
    let Ok((start_place, start)) = start else {
        return Ok(Outcome::ok(format!("No matches found for {pattern}")));
    };
    let ignore = ignore_rules(ws, &start_place, include_ignored);
    let mut found = Vec::new();
    let mut more = false;
    let walked = walk(&start, usize::MAX, ignore, &|e| !hidden(e), &mut |entry, _| {
        if hidden(entry) || (entry.is_dir() && !include_dirs) {
            return true;
        }
        let rel = if base.is_empty() { entry.rel.clone() } else { format!("{base}/{}", entry.rel) };
        if glob.matches(&rel) {
            if found.len() == limit {
                more = true;
                return false;
            }
            found.push(crate::text::shown_name(&rel).into_owned());
        }
        true
    });
    if found.is_empty() {
        return Ok(Outcome::ok(format!("No matches found for {pattern}{}", walked.note())));
    }
    let mut out = found.join("\n");
    if more {
        out.push_str(&format!("\n... truncated after {limit} matches"));
    }
    out.push_str(&walked.note());
    Ok(Outcome::ok(out))
}

pub(super) fn grep(ws: &Workspace, args: &Args<'_>) -> Result<Outcome, ArgError> {
    let pattern = args.required("pattern", true)?;
    let path = args.string("path")?.unwrap_or(".");
    let filter = args.string("glob")?;
    let mode = args.string("output_mode")?.unwrap_or("content");
    if !matches!(mode, "content" | "files_with_matches" | "count") {
        return Err(ArgError::expected("output_mode", "content, files_with_matches or count"));
    }
    let ignore_case = args.flag("-i", false)?;
    let numbers = args.flag("-n", true)?;
    let include_ignored = args.flag("include_ignored", false)?;
    let head_limit = args.integer("head_limit", 1, u64::MAX)?.unwrap_or(50) as usize;
    let regex = match Regex::new(pattern, ignore_case) {
        Ok(r) => r,
        Err(err) => {
            let shown = crate::text::cut_chars(pattern, 200);
            return Ok(Outcome::error(format!("Error: invalid regex pattern {shown:?}: {err}")));
        }
    };
    let filter = match filter.map(Glob::new).transpose() {
        Ok(f) => f.map(|g| (g, filter.is_some_and(|f| f.contains('/')))),
        Err(err) => return Ok(Outcome::error(format!("Error: invalid glob filter: {err}"))),
    };
    let target = match ws.locate(path, true, Parents::Existing) {
        Ok(t) => t,
        Err(e) => return Ok(Outcome::error(format!("Error searching {path}: {e}"))),
    };
    // Each file is searched as the walk meets it, so no more than one is open at a time.
    let mut found = Found {
        mode,
        numbers,
        head_limit,
        lines: Vec::new(),
        more: false,
        total: 0,
        files: 0,
        buffer: Vec::new(),
        too_large: Vec::new(),
    };
    let mut walked = Walked::default();
    match target.kind() {
        Ok(Some((Kind::File, _))) => match open_regular(&target) {
            Ok((file, meta)) => {
                found.file(&target.shown(), file, meta.len(), &regex);
            }
            Err(e) => return Ok(Outcome::error(format!("Error searching {path}: {e}"))),
        },
        Ok(Some((Kind::Dir, _))) => {
            let tree = Tree { ws, target: &target, include_ignored, filter: filter.as_ref() };
            walked = match tree.search(&mut found, &regex) {
                Ok(walked) => walked,
                Err(e) => return Ok(Outcome::error(format!("Error searching {path}: {e}"))),
            };
        }
        Ok(Some((kind, _))) => {
            let why = refusal(kind).unwrap_or("it cannot be searched");
            return Ok(Outcome::error(format!("Error searching {path}: {why}")));
        }
        Ok(None) => {
            return Ok(Outcome::error(format!(
                "Error searching {path}: No such file or directory (os error 2)"
            )))
        }
        Err(err) => return Ok(Outcome::error(format!("Error searching {path}: {err}"))),
    }
    Ok(found.report(&walked))
}

/// A directory grep searches: the files the walk meets (not ignored, not hidden, matching
/// the `glob` filter, by path when it holds a `/`, else by name).
struct Tree<'a> {
    ws: &'a Workspace,
    target: &'a Place,
    include_ignored: bool,
    filter: Option<&'a (Glob, bool)>,
}

impl Tree<'_> {
    fn search(&self, found: &mut Found<'_>, regex: &Regex) -> std::io::Result<Walked> {
        let dir = self.target.open_dir()?;
        let shown_base = self.target.shown();
        let ignore = ignore_rules(self.ws, self.target, self.include_ignored);
        Ok(walk(&dir, usize::MAX, ignore, &|e| !hidden(e), &mut |entry, parent| {
            if entry.is_dir() || hidden(entry) {
                return true;
            }
            let wanted = match self.filter {
                None => true,
                Some((glob, true)) => glob.matches(&entry.rel),
                Some((glob, false)) => glob.matches(entry.name()),
            };
            if !wanted {
                return true;
            }
            let opened = match entry.kind {
                Kind::File => open_file_in(parent, &entry.name),
                // A linked file is searched only where it really is inside the workspace,
                // resolved as any path the model gives.
                _ => self
                    .ws
                    .locate_from(Some(self.target), &entry.rel, true, Parents::Existing)
                    .ok()
                    .and_then(|place| open_regular(&place).ok().map(|(f, m)| (f, m.len()))),
            };
            let Some((file, size)) = opened else { return true };
            let shown = if shown_base == "." {
                entry.rel.clone()
            } else {
                format!("{shown_base}/{}", entry.rel)
            };
            found.file(&shown, file, size, regex)
        }))
    }
}

/// What grep has found so far, in its output mode.
struct Found<'a> {
    mode: &'a str,
    numbers: bool,
    head_limit: usize,
    lines: Vec<String>,
    /// Results past `head_limit` exist.
    more: bool,
    total: usize,
    files: usize,
    /// The piece of the file being searched (reused from file to file).
    buffer: Vec<u8>,
    /// Files not searched for being over [`GREP_FILE_LIMIT`].
    too_large: Vec<String>,
}

impl Found<'_> {
    /// What grep answers: the lines (or files, or counts), whether there were more, and what
    /// the walk left out.
    fn report(&self, walked: &Walked) -> Outcome {
        if self.lines.is_empty() {
            return Outcome::ok(format!(
                "No matches found.{}{}",
                self.skipped_note(),
                walked.note()
            ));
        }
        let mut out = self.lines.join("\n");
        if self.mode == "count" {
            out.push_str(&format!("\n{} matches in {} files", self.total, self.files));
        }
        if self.more {
            out.push_str(&format!(
                "\n... (limited to the first {} results; raise head_limit for more)",
                self.head_limit
            ));
        }
        out.push_str(&self.skipped_note());
        out.push_str(&walked.note());
        Outcome::ok(out)
    }

    /// The files over the size grep searches, named (the first few), so "no matches" is not
    /// taken for "not there".
    fn skipped_note(&self) -> String {
        let Some(first) = self.too_large.first() else { return String::new() };
        let limit = GREP_FILE_LIMIT / (1024 * 1024);
        let shown: Vec<&str> =
            self.too_large.iter().take(MAX_REFUSED_NOTES).map(String::as_str).collect();
        match self.too_large.len() {
            1 => format!(
                "\n... ({first} was not searched: it is over the {limit} MiB grep searches)"
            ),
            n => format!(
                "\n... ({n} files over the {limit} MiB grep searches were not searched: {}{})",
                shown.join(", "),
                if n > shown.len() { ", ..." } else { "" }
            ),
        }
    }

    /// Searches one file; false when the walk can stop (content mode, enough lines).
    fn file(&mut self, shown: &str, file: File, size: u64, regex: &Regex) -> bool {
        let shown = &crate::text::shown_name(shown);
        let (mode, numbers, head_limit) = (self.mode, self.numbers, self.head_limit);
        let lines = &mut self.lines;
        let mut more = false;
        let want_numbers = mode == "content" && numbers;
        let count = search_file(file, size, regex, &mut self.buffer, want_numbers, |n, text| {
            // One matching line is all a file's name needs.
            if mode == "files_with_matches" {
                return false;
            }
            if mode == "content" {
                if lines.len() >= head_limit {
                    more = true;
                    return false;
                }
                let text = String::from_utf8_lossy(text);
                let text = text.trim();
                let text: String = text.chars().take(GREP_LINE_CHARS).collect();
                lines.push(if numbers {
                    format!("{shown}:{n}: {text}")
                } else {
                    format!("{shown}: {text}")
                });
            }
            true
        });
        self.more |= more;
        let Some(count) = count else {
            self.too_large.push(shown.to_string());
            return true;
        };
        if count == 0 {
            return true;
        }
        self.total += count;
        self.files += 1;
        match mode {
            "files_with_matches" if self.lines.len() < head_limit => {
                self.lines.push(shown.to_string())
            }
            "count" if self.lines.len() < head_limit => self.lines.push(format!("{shown}:{count}")),
            "files_with_matches" | "count" => self.more = true,
            _ => {}
        }
        !(self.more && mode == "content")
    }
}

/// Hidden entries (dot names): glob and grep skip them, as ripgrep and fd do.
fn hidden(entry: &Entry) -> bool {
    entry.name().starts_with('.') && !entry.whitelisted
}

/// The ignore rules for a walk from `start`, none with `include_ignored`. `node_modules` is
/// ignored besides what the files say.
fn ignore_rules(ws: &Workspace, start: &Place, include_ignored: bool) -> Option<Stack> {
    if include_ignored {
        return None;
    }
    let mut stack = Stack::for_start(&ws.absolute(start));
    stack.ignore_names(DEFAULT_IGNORED);
    Some(stack)
}

/// The ignore rules of a directory met by a walk, from its listing: its `.ignore` and
/// `.gitignore`, and whether it holds `.git` (then with `.git/info/exclude`).
fn level_of(dir: &Dir, entries: &[crate::sys::dirfd::Entry], prefix: &str) -> Level {
    let has = |name: &str| entries.iter().find(|e| e.name == name).map(|e| e.kind);
    let shown = |name: &str| format!("{prefix}/{name}");
    // A regular file through the directory's handle; a link or a directory is no ignore file
    // (as git reads them); a FIFO, socket or device may hold any rules, so it is refused and
    // the directory left out.
    let read = |name: &str| match has(name) {
        Some(Kind::File) => read_ignore(dir.open_read(OsStr::new(name)), &shown(name)),
        Some(Kind::Special) => {
            Err(IgnoreFileError::NotRegular(format!("{} is not a regular file", shown(name))))
        }
        _ => Ok(None),
    };
    let git = has(".git");
    let exclude = match git {
        Some(Kind::Dir) => {
            match dir.open_dir(OsStr::new(".git")).and_then(|git| git.open_dir(OsStr::new("info")))
            {
                Ok(info) => {
                    read_ignore(info.open_read(OsStr::new("exclude")), &shown(".git/info/exclude"))
                }
                Err(_) => Ok(None),
            }
        }
        _ => Ok(None),
    };
    Level::new(read(".ignore"), read(".gitignore"), git.is_some(), exclude)
}

/// Opens a regular file met by a walk, with its size (anything else there now is skipped).
fn open_file_in(dir: &Dir, name: &OsStr) -> Option<(File, u64)> {
    let file = dir.open_read(name).ok()?;
    let meta = file.metadata().ok()?;
    (Kind::of(&meta) == Kind::File).then_some((file, meta.len()))
}

/// Matches the lines of a file of `size` bytes; `on_match(line_number, line)` returns false
/// to stop (the line number is counted only when `want_numbers`, else it is 1). Binary and
/// oversized files are skipped, and only the first [`GREP_LINE_BYTES`] of a line are
/// searched. The file is read into `buffer` (reused from file to file) in pieces of at most
/// [`GREP_PIECE_BYTES`] that end at a line's end, so almost every file takes one read, and
/// memory stays flat for the large ones. Returns the number of matching lines seen, or
/// `None` for a file over [`GREP_FILE_LIMIT`] (not searched).
fn search_file(
    file: File,
    size: u64,
    regex: &Regex,
    buffer: &mut Vec<u8>,
    want_numbers: bool,
    mut on_match: impl FnMut(usize, &[u8]) -> bool,
) -> Option<usize> {
    if size > GREP_FILE_LIMIT {
        return None;
    }
    buffer.clear();
    buffer.reserve((size as usize).min(GREP_PIECE_BYTES) + 1);
    // Reading no more than the size seen at open saves the read that would find the end; a
    // file that says it is empty (as some special filesystems do) is read to its end.
    let mut reader = file.take(if size == 0 { GREP_FILE_LIMIT + 1 } else { size });
    let (mut count, mut read, mut first) = (0, 0u64, true);
    // The number of the buffer's first line, and whether the buffer is the rest of a line
    // longer than a piece, not searched.
    let (mut first_line, mut skipping) = (1usize, false);
    loop {
        let room = GREP_PIECE_BYTES - buffer.len();
        let got = match (&mut reader).take(room as u64).read_to_end(buffer) {
            Ok(got) => got,
            Err(_) => return Some(count),
        };
        read += got as u64;
        if read > GREP_FILE_LIMIT {
            return None;
        }
        let at_end = got < room;
        if first {
            if looks_binary(&buffer[..buffer.len().min(8192)]) {
                return Some(0);
            }
            first = false;
        }
        if skipping {
            match crate::search::substring::memchr(b'\n', buffer, 0) {
                Some(newline) => {
                    buffer.drain(..=newline);
                    first_line += 1;
                    skipping = false;
                }
                None => {
                    buffer.clear();
                    if at_end {
                        break;
                    }
                    continue;
                }
            }
        }
        // Whole lines only, but at the end; a piece with no line end at all is one line
        // longer than a piece: its first bytes are searched and the rest skipped.
        let whole = if at_end {
            buffer.len()
        } else {
            crate::search::substring::memrchr(b'\n', buffer, buffer.len())
                .map_or(0, |newline| newline + 1)
        };
        let (part, rest) = if whole == 0 && !at_end {
            skipping = true;
            (GREP_LINE_BYTES.min(buffer.len()), buffer.len())
        } else {
            (whole, whole)
        };
        let numbers = want_numbers.then_some(first_line);
        let reporting = match_piece(regex, &buffer[..part], numbers, &mut count, &mut on_match);
        if !reporting || at_end {
            break;
        }
        if want_numbers && !skipping {
            first_line += crate::search::substring::count(b'\n', buffer, 0, rest);
        }
        buffer.drain(..rest);
    }
    Some(count)
}

/// Reports the matching lines of one piece of a file (whole lines, or the searched head of
/// one longer than a piece) to `on_match`, counting them, until it says stop (false).
/// `first_line` is the piece's first line number, when numbers are wanted: they are counted
/// only when a match is reported, from the last one.
#[inline]
fn match_piece(
    regex: &Regex,
    haystack: &[u8],
    first_line: Option<usize>,
    count: &mut usize,
    on_match: &mut impl FnMut(usize, &[u8]) -> bool,
) -> bool {
    let (mut counted_to, mut line_number) = (0usize, first_line.unwrap_or(1));
    let mut reporting = true;
    regex.matching_lines(haystack, GREP_LINE_BYTES, |start, end| {
        *count += 1;
        if first_line.is_some() {
            line_number += crate::search::substring::count(b'\n', haystack, counted_to, start);
            counted_to = start;
        }
        let mut line = &haystack[start..end.min(start + GREP_LINE_BYTES)];
        if let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        reporting = on_match(line_number, line);
        reporting
    });
    reporting
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kit::TempDir;

    /// What grep must report: every line (its first GREP_LINE_BYTES) the regex matches, with
    /// its number.
    fn line_by_line(text: &[u8], regex: &Regex) -> Vec<(usize, Vec<u8>)> {
        let mut found = Vec::new();
        let body = text.strip_suffix(b"\n").unwrap_or(text);
        for (i, line) in body.split(|&b| b == b'\n').enumerate() {
            let line = &line[..line.len().min(GREP_LINE_BYTES)];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if regex.is_match(&String::from_utf8_lossy(line)) {
                found.push((i + 1, line.to_vec()));
            }
        }
        found
    }

    #[test]
    fn large_files_are_read_in_pieces_with_the_same_lines_and_numbers() {
        let dir = TempDir::new("grep-pieces");
        let filler = "some ordinary line of source text that matches nothing\n";
        // 11 MB: matches on both sides of every 4 MiB boundary, a 5 MiB line (longer than a
        // piece: its first MiB is searched), CRLF lines, and no newline at the very end.
        let mut text = String::new();
        for i in 0..200_000 {
            text.push_str(if i % 997 == 0 { "fn needle() {}\r\n" } else { filler });
        }
        text.push_str(&format!(
            "needle at the start{}needle past the first MiB\n",
            "x".repeat(5 << 20)
        ));
        for _ in 0..1000 {
            text.push_str(filler);
        }
        text.push_str("last needle");
        let path = dir.write("big.txt", &text);
        let regex = Regex::new("needle", false).unwrap();
        let mut buffer = Vec::new();
        let mut got = Vec::new();
        let file = File::open(&path).unwrap();
        let size = file.metadata().unwrap().len();
        let count = search_file(file, size, &regex, &mut buffer, true, |n, line| {
            got.push((n, line.to_vec()));
            true
        });
        let want = line_by_line(text.as_bytes(), &regex);
        assert_eq!(count, Some(want.len()));
        assert_eq!(got.len(), want.len());
        assert!(
            got == want,
            "first difference: {:?}",
            got.iter().zip(&want).find(|(a, b)| a != b).map(|(a, b)| (a.0, b.0))
        );
        assert!(buffer.capacity() <= GREP_PIECE_BYTES * 2, "{} bytes held", buffer.capacity());
        // Stopping at the first match reads no further.
        let file = File::open(&path).unwrap();
        let mut first = None;
        search_file(file, size, &regex, &mut buffer, true, |n, _| {
            first = Some(n);
            false
        });
        assert_eq!(first, Some(1));
    }
}
