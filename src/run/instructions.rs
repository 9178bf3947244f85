//! What the model is told before the conversation: the system prompt (zero's, replaced or
//! extended by the `--system-prompt` flags), and the project instructions, every `AGENTS.md`
//! from the repository root down to the workspace, after the user's own, as one message of
//! their own.
//!
//! The repository's files are read from an open handle of its root with the file tools'
//! confinement ([`Workspace`]): a link is followed only where it stays inside the repository,
//! and only regular files are opened. They are read afresh on every run, resumed or not.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::config::Env;
use crate::error::Failure;
use crate::protocol::events::{Warning, WarningCode};
use crate::run::agent::SYSTEM_PROMPT;
use crate::run::plan::{PromptText, SystemPromptFlags};
use crate::sys::dirfd::{self, Kind, SmallFileError};
use crate::tools::workspace::PathError;
use crate::tools::workspace::{open_regular, Parents, Workspace};

/// A system prompt file is read up to this size.
const MAX_PROMPT_FILE: u64 = 1024 * 1024;
/// Each `AGENTS.md` is cut (at a line end) to this size.
const MAX_INSTRUCTIONS_FILE: usize = 32 * 1024;
/// All of them together; the files nearest the workspace are kept first.
const MAX_INSTRUCTIONS: usize = 64 * 1024;
const FILE_NAME: &str = "AGENTS.md";

/// The system prompt: zero's or `--system-prompt[-file]`'s, then `--append-system-prompt[-file]`,
/// then the extra directories the file tools may use. Files are relative to `started_in`.
pub fn system_prompt(
    flags: &SystemPromptFlags,
    started_in: &Path,
    add_dirs: &[PathBuf],
) -> Result<String, Failure> {
    let mut prompt = match &flags.replace {
        Some(part) => text_of(part, started_in, "--system-prompt-file")?,
        None => SYSTEM_PROMPT.to_string(),
    };
    if let Some(part) = &flags.append {
        let more = text_of(part, started_in, "--append-system-prompt-file")?;
        prompt = format!("{}\n\n{}", prompt.trim_end(), more.trim());
    }
    if !add_dirs.is_empty() {
        let dirs: Vec<String> = add_dirs.iter().map(|d| d.display().to_string()).collect();
        prompt = format!(
            "{}\n\nBesides the working directory, the file tools may use these directories (give paths in them as absolute paths): {}.",
            prompt.trim_end(),
            dirs.join(", ")
        );
    }
    Ok(prompt)
}

/// A flag's text, or its file's (a regular file of at most 1 MiB, in UTF-8).
fn text_of(part: &PromptText, started_in: &Path, flag: &str) -> Result<String, Failure> {
    let path = match part {
        PromptText::Text(text) => return Ok(text.clone()),
        PromptText::File(path) => started_in.join(path),
    };
    let cannot =
        |why: String| Failure::Usage(format!("Cannot read {flag} {}: {why}", path.display()));
    let bytes =
        dirfd::read_small_file(&path, MAX_PROMPT_FILE).map_err(|e| cannot(e.to_string()))?;
    String::from_utf8(bytes).map_err(|_| cannot("it is not valid UTF-8".to_string()))
}

/// The project instructions of a run: the message the model gets (none when no file was
/// read), the files read (paths relative to the repository root, the user's own with `~`),
/// and a warning for each file that was skipped.
#[derive(Debug, Default)]
pub struct Instructions {
    pub message: Option<String>,
    pub files: Vec<String>,
    pub warnings: Vec<Warning>,
}

/// One file found: where it is shown as coming from, its text (at most what is kept of a file,
/// and a byte more), and its size.
struct Found {
    shown: String,
    text: String,
    size: u64,
}

/// `$XDG_CONFIG_HOME/zero/AGENTS.md`, else `~/.config/zero/AGENTS.md`.
fn user_file(env: &Env) -> Option<PathBuf> {
    let dir = match env.get("XDG_CONFIG_HOME") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env.get("HOME")?).join(".config"),
    };
    Some(dir.join("zero").join(FILE_NAME))
}

/// A path with `~` for `$HOME`.
fn with_tilde(path: &Path, env: &Env) -> String {
    match env.get("HOME").and_then(|home| path.strip_prefix(home).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// `text` (of a file of `size` bytes) cut to `max` bytes at a line end, with a note of what
/// was cut.
fn cut(text: String, size: u64, max: usize, shown: &str, why: &str) -> String {
    if text.len() <= max && size <= max as u64 {
        return text;
    }
    let (head, _) = crate::text::cap_utf8(&text, max);
    let head = match head.rfind('\n') {
        Some(end) => &head[..=end],
        None => head,
    };
    format!(
        "{head}[... the last {} bytes of {shown} were left out: {why} ...]\n",
        size.saturating_sub(head.len() as u64)
    )
}

/// A file's text as far as it can be kept, and its size.
fn read_kept(file: impl Read, size: u64) -> std::io::Result<(String, u64)> {
    let mut bytes = Vec::new();
    file.take(MAX_INSTRUCTIONS_FILE as u64 + 1).read_to_end(&mut bytes)?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), size.max(bytes.len() as u64)))
}

/// Reads the instructions for a run in `workspace`, whose repository root is `root` (itself, or
/// a directory above it: see `tools::repository`, which never takes a planted `.git`).
pub fn read(workspace: &Path, root: &Path, env: &Env) -> Instructions {
    let mut found = Vec::new();
    let mut warnings = Vec::new();
    let mut skip = |shown: &str, why: &str| {
        warnings.push(Warning::new(
            WarningCode::IgnoredOption,
            format!("Project instructions {shown} are skipped: {why}."),
        ))
    };
    if let Some(path) = user_file(env) {
        let shown = with_tilde(&path, env);
        match read_user_file(&path) {
            Ok(Some((text, size))) => found.push(Found { shown, text, size }),
            Ok(None) => {}
            Err(why) => skip(&shown, &why.to_string()),
        }
    }
    if let Ok(repo) = Workspace::new(root) {
        let below = workspace.strip_prefix(root).unwrap_or(Path::new(""));
        let mut dirs = vec![PathBuf::new()];
        for part in below.components() {
            let next = dirs[dirs.len() - 1].join(part);
            dirs.push(next);
        }
        for dir in dirs {
            let rel = dir.join(FILE_NAME);
            let shown = rel.display().to_string();
            match read_in_repository(&repo, &shown) {
                Ok(Some((text, size))) => found.push(Found { shown, text, size }),
                Ok(None) => {}
                Err(why) => skip(&shown, &why.to_string()),
            }
        }
    }
    assemble(found, warnings)
}

/// The user's own file: a regular file (a FIFO or device is refused without waiting).
fn read_user_file(path: &Path) -> Result<Option<(String, u64)>, PathError> {
    let file = match dirfd::open_path_nonblocking(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(PathError::Io(err.to_string())),
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => {
            read_kept(file, meta.len()).map(Some).map_err(|e| PathError::Io(e.to_string()))
        }
        Ok(_) => Err(PathError::Refused(SmallFileError::NotRegular.to_string())),
        Err(err) => Err(PathError::Io(err.to_string())),
    }
}

/// One `AGENTS.md` of the repository: `None` when there is none.
fn read_in_repository(repo: &Workspace, rel: &str) -> Result<Option<(String, u64)>, PathError> {
    let place = repo.locate(rel, false, Parents::Existing)?;
    match place.kind() {
        Ok(None) => return Ok(None),
        Ok(Some((Kind::Symlink, _))) => {}
        Ok(Some((Kind::File, _))) => {}
        Ok(Some(_)) => return Err(PathError::Refused("it is not a regular file".to_string())),
        Err(err) => return Err(PathError::Io(err.to_string())),
    }
    // The reasons in the file's own terms: it is a link, and where it leads is the matter.
    let place = match repo.locate(rel, true, Parents::Existing) {
        Ok(place) => place,
        Err(PathError::Outside(_)) => {
            return Err(PathError::Outside(
                "it is a link leading outside the repository".to_string(),
            ))
        }
        Err(PathError::BrokenLink(_)) => {
            return Err(PathError::BrokenLink("it is a broken link".to_string()))
        }
        Err(PathError::LinkLoop(_)) => {
            return Err(PathError::LinkLoop("it is a link that loops".to_string()))
        }
        Err(e) => return Err(e),
    };
    if let Ok(None) = place.kind() {
        return Err(PathError::BrokenLink("it is a broken link".to_string()));
    }
    let (file, meta) = open_regular(&place)?;
    read_kept(file, meta.len()).map(Some).map_err(|e| PathError::Io(e.to_string()))
}

/// The message's first line.
const INTRO: &str = "Instructions from AGENTS.md files (yours first, then the repository's from its root down; later files are nearer the working directory and take precedence):\n";

/// Room kept for a file's heading line and the note of a cut.
const HEADING_AND_NOTE: usize = 256;

/// The message from the files found (the user's first, then root to workspace): each cut to
/// 32 KiB, and the whole message to 64 KiB, the files nearest the workspace kept first.
fn assemble(found: Vec<Found>, mut warnings: Vec<Warning>) -> Instructions {
    let mut left = MAX_INSTRUCTIONS - INTRO.len();
    let mut kept: Vec<Found> = Vec::new();
    for Found { shown, text, size } in found.into_iter().rev() {
        if left < 2 * HEADING_AND_NOTE {
            warnings.push(Warning::new(
                WarningCode::IgnoredOption,
                format!("Project instructions {shown} are skipped: the instructions nearer the working directory fill the 64 KiB they may use."),
            ));
            continue;
        }
        let room = left - HEADING_AND_NOTE;
        let text = if room < MAX_INSTRUCTIONS_FILE && size > room as u64 {
            cut(text, size, room, &shown, "all instructions together are cut at 64 KiB")
        } else {
            cut(text, size, MAX_INSTRUCTIONS_FILE, &shown, "each file is cut at 32 KiB")
        };
        left -= (text.len() + shown.len() + 10).min(left);
        kept.push(Found { shown, text, size });
    }
    kept.reverse();
    if kept.is_empty() {
        return Instructions { message: None, files: Vec::new(), warnings };
    }
    let mut message = String::from(INTRO);
    for file in &kept {
        message.push_str(&format!("\n--- {} ---\n{}", file.shown, file.text));
        if !file.text.ends_with('\n') {
            message.push('\n');
        }
    }
    let files = kept.into_iter().map(|f| f.shown).collect();
    Instructions { message: Some(message), files, warnings }
}
