//! Which files a developer would look at: `.gitignore` (in a git repository), `.ignore`
//! (anywhere, as ripgrep reads it) and `.git/info/exclude`, with git's semantics: blank lines
//! and `#` comments skipped, `!` to re-include, a slash at the start or in the middle anchors a
//! pattern to its file's directory, a trailing slash matches directories only, `*` and `?` do
//! not cross `/`, `**` does, `[...]` classes, `\` escapes, trailing spaces trimmed unless
//! escaped, and the last matching line wins. Deeper files win over shallower ones, `.ignore`
//! over `.gitignore`, both over the exclude file.
//!
//! Matching is a dynamic programme over pattern and path (no backtracking), so a hostile
//! pattern costs at most its length times the path's.

/// An ignore file is read up to this size. A larger one (or one that cannot be read) is not
/// dropped: the walk leaves out the directory it rules, since what it excludes (`.env`,
/// `secrets/`) cannot be told apart.
pub const MAX_IGNORE_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// An ignore file as a walk finds it: its text (lossy UTF-8: git reads bytes), none, or why
/// it cannot be applied.
pub type IgnoreFile = Result<Option<String>, IgnoreFileError>;

/// Why an ignore file cannot be applied, by kind; the message names the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IgnoreFileError {
    /// It cannot be read.
    Unreadable(String),
    /// A FIFO, socket or device: it may hold any rules, so the walk leaves the directory out.
    NotRegular(String),
    /// It is larger than zero reads of an ignore file.
    TooLarge(String),
}

crate::error::message_error!(IgnoreFileError: Unreadable, NotRegular, TooLarge);
/// Patterns longer than this are skipped (git's own limit is about the same order).
const MAX_PATTERN_BYTES: usize = 4096;

/// One element of a compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Byte(u8),
    /// `?`: one byte but `/`.
    Any,
    /// `[...]`: one byte but `/`, in the ranges (or not in them).
    Class {
        negated: bool,
        ranges: Vec<(u8, u8)>,
    },
    /// `*`: any run of bytes without `/`.
    Star,
    /// `**` as a whole segment at the end (`a/**`): anything.
    DoubleStar,
    /// `**/` at the start or `/**/` in the middle: nothing, or anything ending in `/`.
    DirsPrefix,
}

/// One line of an ignore file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    tokens: Vec<Token>,
    /// The common forms (`target`, `*.log`, `build*`), matched without the general programme.
    shape: Shape,
    negated: bool,
    dir_only: bool,
    /// Matched against the path from the file's directory, not the name alone.
    anchored: bool,
}

/// How a pattern is matched: most lines of real ignore files are a name, `*` and a suffix, or
/// a prefix and `*`, which need no table.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    Exact(Vec<u8>),
    /// `*` then these bytes (no `/` among them).
    StarThen(Vec<u8>),
    /// These bytes then `*` (no `/` among them).
    ThenStar(Vec<u8>),
    /// Anything else, run as a programme on the texts that begin and end with the literal
    /// bytes the pattern begins and ends with.
    General {
        head: Vec<u8>,
        tail: Vec<u8>,
    },
}

impl Shape {
    fn of(tokens: &[Token]) -> Shape {
        let bytes = |tokens: &[Token]| -> Option<Vec<u8>> {
            tokens.iter().map(|t| if let Token::Byte(b) = t { Some(*b) } else { None }).collect()
        };
        let no_slash = |b: &Vec<u8>| !b.contains(&b'/');
        match tokens {
            [Token::Star, rest @ ..] => bytes(rest).filter(no_slash).map(Shape::StarThen),
            [rest @ .., Token::Star] => bytes(rest).filter(no_slash).map(Shape::ThenStar),
            all => bytes(all).map(Shape::Exact),
        }
        .unwrap_or_else(|| {
            let literal = |t: &Token| if let Token::Byte(b) = t { Some(*b) } else { None };
            let head: Vec<u8> = tokens.iter().map_while(literal).collect();
            let mut tail: Vec<u8> = tokens.iter().rev().map_while(literal).collect();
            tail.reverse();
            Shape::General { head, tail }
        })
    }

    fn matches(&self, tokens: &[Token], text: &[u8]) -> bool {
        match self {
            Shape::Exact(b) => text == b.as_slice(),
            Shape::StarThen(b) => {
                text.ends_with(b) && !text[..text.len() - b.len()].contains(&b'/')
            }
            Shape::ThenStar(b) => text.starts_with(b) && !text[b.len()..].contains(&b'/'),
            Shape::General { head, tail } => {
                text.starts_with(head) && text.ends_with(tail) && matches(tokens, text)
            }
        }
    }
}

/// The patterns of one ignore file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    patterns: Vec<Pattern>,
}

/// What the rules say about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Ignored,
    /// Re-included by a `!` line.
    Included,
}

impl Rules {
    pub fn parse(text: &str) -> Rules {
        Rules { patterns: text.lines().filter_map(parse_line).collect() }
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The verdict of the last line that matches `path` (relative to this file's directory,
    /// `/`-separated), if any.
    pub fn verdict(&self, path: &str, is_dir: bool) -> Option<Verdict> {
        let name = path.rsplit('/').next().unwrap_or(path);
        self.patterns.iter().rev().find_map(|p| {
            if p.dir_only && !is_dir {
                return None;
            }
            let subject = if p.anchored { path } else { name };
            p.shape.matches(&p.tokens, subject.as_bytes()).then_some(if p.negated {
                Verdict::Included
            } else {
                Verdict::Ignored
            })
        })
    }
}

fn parse_line(line: &str) -> Option<Pattern> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.is_empty() || line.starts_with('#') || line.len() > MAX_PATTERN_BYTES {
        return None;
    }
    let line = trim_trailing_spaces(line);
    let (negated, body) = match line.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (dir_only, body) = match body.strip_suffix('/') {
        // `\/` at the end is an escaped slash, kept as is (and then matches nothing).
        Some(rest) if !rest.ends_with('\\') => (true, rest),
        _ => (false, body),
    };
    if body.is_empty() {
        return None;
    }
    // A slash anywhere but at the end anchors the pattern to the file's directory.
    let anchored = body.contains('/');
    let body = body.strip_prefix('/').unwrap_or(body);
    let tokens = compile(body.as_bytes())?;
    Some(Pattern { shape: Shape::of(&tokens), tokens, negated, dir_only, anchored })
}

/// Trailing spaces are dropped unless escaped with a backslash (which is then kept as an
/// escape of the space).
fn trim_trailing_spaces(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut end = bytes.len();
    while end > 0 && bytes[end - 1] == b' ' {
        if end >= 2 && bytes[end - 2] == b'\\' {
            break;
        }
        end -= 1;
    }
    &line[..end]
}

fn compile(pattern: &[u8]) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut i = 0;
    let mut unclosed = false;
    while i < pattern.len() {
        let b = pattern[i];
        match b {
            b'*' => {
                let start = i;
                while i < pattern.len() && pattern[i] == b'*' {
                    i += 1;
                }
                let run = i - start;
                let at_segment_start = start == 0 || pattern[start - 1] == b'/';
                let at_segment_end = i == pattern.len() || pattern[i] == b'/';
                if run >= 2 && at_segment_start && at_segment_end {
                    if i == pattern.len() {
                        tokens.push(Token::DoubleStar);
                    } else {
                        // `**/`: the slash is part of the token.
                        tokens.push(Token::DirsPrefix);
                        i += 1;
                    }
                } else {
                    tokens.push(Token::Star);
                }
                continue;
            }
            b'?' => tokens.push(Token::Any),
            b'[' if !unclosed => match class(pattern, i) {
                Some((token, next)) => {
                    tokens.push(token);
                    i = next;
                    continue;
                }
                // An unclosed bracket is a literal `[`, and so is every later one (each would
                // read to the end again: a line of brackets would take quadratic time).
                None => {
                    unclosed = true;
                    tokens.push(Token::Byte(b'['));
                }
            },
            b'\\' => {
                // An escape at the very end makes the pattern invalid, as in git.
                let escaped = *pattern.get(i + 1)?;
                tokens.push(Token::Byte(escaped));
                i += 2;
                continue;
            }
            other => tokens.push(Token::Byte(other)),
        }
        i += 1;
    }
    Some(tokens)
}

/// `[...]` starting at `open`: the token and the index after `]`.
fn class(pattern: &[u8], open: usize) -> Option<(Token, usize)> {
    let mut i = open + 1;
    let negated = matches!(pattern.get(i), Some(b'!' | b'^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let mut b = *pattern.get(i)?;
        if b == b']' && !first {
            return Some((Token::Class { negated, ranges }, i + 1));
        }
        first = false;
        if b == b'\\' {
            i += 1;
            b = *pattern.get(i)?;
        }
        if pattern.get(i + 1) == Some(&b'-') && pattern.get(i + 2).is_some_and(|&e| e != b']') {
            let mut end = pattern[i + 2];
            let mut skip = 3;
            if end == b'\\' {
                end = *pattern.get(i + 3)?;
                skip = 4;
            }
            ranges.push((b.min(end), b.max(end)));
            i += skip;
        } else {
            ranges.push((b, b));
            i += 1;
        }
    }
}

/// Whether the tokens match the whole text: `reach[j]` says whether the tokens so far can
/// consume exactly `text[..j]`.
fn matches(tokens: &[Token], text: &[u8]) -> bool {
    let n = text.len();
    // The rows live on the stack for the usual path lengths.
    let (mut small_reach, mut small_next) = ([false; 256], [false; 256]);
    let (mut large_reach, mut large_next);
    let (mut reach, mut next): (&mut [bool], &mut [bool]) = if n < 256 {
        (&mut small_reach[..=n], &mut small_next[..=n])
    } else {
        large_reach = vec![false; n + 1];
        large_next = vec![false; n + 1];
        (&mut large_reach[..], &mut large_next[..])
    };
    reach[0] = true;
    for token in tokens {
        next.iter_mut().for_each(|r| *r = false);
        match token {
            Token::Star => {
                next[0] = reach[0];
                for j in 1..=n {
                    next[j] = reach[j] || (next[j - 1] && text[j - 1] != b'/');
                }
            }
            Token::DoubleStar => {
                next[0] = reach[0];
                for j in 1..=n {
                    next[j] = reach[j] || next[j - 1];
                }
            }
            Token::DirsPrefix => {
                let mut seen = false;
                for j in 0..=n {
                    next[j] = reach[j] || (seen && j > 0 && text[j - 1] == b'/');
                    seen |= reach[j];
                }
            }
            single => {
                for j in 0..n {
                    if reach[j] && one(single, text[j]) {
                        next[j + 1] = true;
                    }
                }
            }
        }
        std::mem::swap(&mut reach, &mut next);
        if !reach.iter().any(|&r| r) {
            return false;
        }
    }
    reach[n]
}

fn one(token: &Token, b: u8) -> bool {
    match token {
        Token::Byte(c) => *c == b,
        Token::Any => b != b'/',
        Token::Class { negated, ranges } => {
            b != b'/' && ranges.iter().any(|&(lo, hi)| lo <= b && b <= hi) != *negated
        }
        _ => false,
    }
}

/// The ignore files in force during a walk: those of the start directory and its ancestors
/// (read by path when the walk starts), and those of the directories the walk is inside
/// (pushed and popped by the walk as it enters and leaves them).
///
/// As in ripgrep, `.gitignore` files apply from an entry's directory up to the nearest
/// repository root (a directory holding `.git`) and not above it, with that root's
/// `.git/info/exclude`; an entry with no repository root above it gets none of them (so a
/// workspace holding several checkouts reads each one's rules). `.ignore` files apply at
/// every level.
#[derive(Debug, Default)]
pub struct Stack {
    /// The start directory and its ancestors, nearest first, each with the path from it to
    /// the start.
    above: Vec<(Level, String)>,
    /// Directories below the start the walk is inside, outermost first, each with its path
    /// from the start.
    below: Vec<(Level, String)>,
    /// Names ignored when no file decides (`node_modules`).
    names: Vec<String>,
}

impl Stack {
    /// Why the start itself cannot be walked: an ignore file of it or an ancestor cannot be
    /// applied.
    pub fn refused(&self) -> Option<&str> {
        self.above.iter().find_map(|(level, _)| level.refused.as_deref())
    }
}

/// The ignore files of one directory.
#[derive(Debug, Default)]
pub struct Level {
    dot_ignore: Rules,
    gitignore: Rules,
    /// The directory holds `.git`: the root of a repository.
    repo_root: bool,
    /// The root's `.git/info/exclude`.
    exclude: Rules,
    /// An ignore file here cannot be applied (why, naming it): nothing below is walked.
    pub refused: Option<String>,
}

impl Level {
    /// A directory's rules from its `.ignore` and `.gitignore`, and, for the root of a
    /// repository, its `.git/info/exclude`.
    pub fn new(
        dot_ignore: IgnoreFile,
        gitignore: IgnoreFile,
        repo_root: bool,
        exclude: IgnoreFile,
    ) -> Level {
        let mut refused = None;
        let mut parse = |file: IgnoreFile| match file {
            Ok(text) => text.as_deref().map(Rules::parse).unwrap_or_default(),
            Err(why) => {
                refused.get_or_insert(why.to_string());
                Rules::default()
            }
        };
        let (dot_ignore, gitignore, exclude) =
            (parse(dot_ignore), parse(gitignore), parse(exclude));
        Level { dot_ignore, gitignore, repo_root, exclude, refused }
    }
}

/// Reads an ignore file from an open handle: a regular file of at most
/// [`MAX_IGNORE_FILE_BYTES`], as lossy UTF-8. `shown` names it in the refusal.
pub fn read_ignore(file: std::io::Result<std::fs::File>, shown: &str) -> IgnoreFile {
    use std::io::Read;
    let file = match file {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            return Err(IgnoreFileError::Unreadable(format!("{shown} cannot be read ({err})")))
        }
    };
    let meta = file
        .metadata()
        .map_err(|e| IgnoreFileError::Unreadable(format!("{shown} cannot be read ({e})")))?;
    // A directory by that name holds no rules, as git reads it; a FIFO, socket or device may
    // hold any, so the walk leaves the directory out rather than show what they may exclude.
    if meta.is_dir() {
        return Ok(None);
    }
    if !meta.is_file() {
        return Err(IgnoreFileError::NotRegular(format!("{shown} is not a regular file")));
    }
    if meta.len() > MAX_IGNORE_FILE_BYTES {
        return Err(IgnoreFileError::TooLarge(format!(
            "{shown} is {} MiB, over the {} MiB zero reads of an ignore file",
            meta.len().div_ceil(1024 * 1024),
            MAX_IGNORE_FILE_BYTES >> 20
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_IGNORE_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| IgnoreFileError::Unreadable(format!("{shown} cannot be read ({e})")))?;
    if bytes.len() as u64 > MAX_IGNORE_FILE_BYTES {
        return Err(IgnoreFileError::TooLarge(format!(
            "{shown} grew past {} MiB while it was read",
            MAX_IGNORE_FILE_BYTES >> 20
        )));
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// Ancestors of the start read for ignore files at most.
const MAX_ANCESTORS: usize = 64;

impl Stack {
    /// The rules for a walk starting at `start` (an absolute directory): the start and its
    /// ancestors up to the repository's root, or up to the filesystem's root (for `.ignore`)
    /// outside a repository.
    pub fn for_start(start: &std::path::Path) -> Stack {
        let mut stack = Stack::default();
        let mut prefix: Vec<String> = Vec::new();
        let mut dir = Some(start);
        for _ in 0..MAX_ANCESTORS {
            let Some(current) = dir else { break };
            let git_dir = current.join(".git");
            let is_root = std::fs::symlink_metadata(&git_dir).is_ok();
            let rel = prefix.iter().rev().cloned().collect::<Vec<_>>().join("/");
            let read = |path: std::path::PathBuf| {
                let shown = path.display().to_string();
                // A link is not followed (and so not read), as in the walk.
                match std::fs::symlink_metadata(&path) {
                    Ok(meta) if meta.file_type().is_symlink() => Ok(None),
                    _ => read_ignore(crate::sys::dirfd::open_path_nonblocking(&path), &shown),
                }
            };
            let exclude =
                if is_root { read(git_dir.join("info").join("exclude")) } else { Ok(None) };
            let level = Level::new(
                read(current.join(".ignore")),
                read(current.join(".gitignore")),
                is_root,
                exclude,
            );
            stack.above.push((level, rel));
            if is_root {
                break;
            }
            match (current.parent(), current.file_name()) {
                (Some(parent), Some(name)) => {
                    prefix.push(name.to_string_lossy().into_owned());
                    dir = Some(parent);
                }
                _ => dir = None,
            }
        }
        stack
    }

    /// Also ignores entries with these names, wherever they are (below every file's rules).
    pub fn ignore_names(&mut self, names: &[&str]) {
        self.names = names.iter().map(|n| n.to_string()).collect();
    }

    /// Enters a directory at `rel` (from the start) with its rules.
    pub fn push(&mut self, rel: &str, level: Level) {
        self.below.push((level, rel.to_string()));
    }

    pub fn pop(&mut self) {
        self.below.pop();
    }

    /// What the rules say about the entry at `rel` (from the start): `.ignore` files before
    /// `.gitignore` files, deeper before shallower, the exclude file last, then the names.
    pub fn verdict(&self, rel: &str, is_dir: bool) -> Option<Verdict> {
        // The levels nearest first, each with `rel` as seen from its directory.
        let levels = || {
            self.below
                .iter()
                .rev()
                .map(|(level, at)| (level, at.as_str(), true))
                .chain(self.above.iter().map(|(level, at)| (level, at.as_str(), false)))
        };
        let verdict_of = |rules: &Rules, at: &str, below: bool| -> Option<Verdict> {
            if rules.is_empty() {
                return None;
            }
            if below {
                let path = rel.strip_prefix(at).and_then(|r| r.strip_prefix('/'))?;
                rules.verdict(path, is_dir)
            } else if at.is_empty() {
                rules.verdict(rel, is_dir)
            } else {
                rules.verdict(&format!("{at}/{rel}"), is_dir)
            }
        };
        let verdict = levels()
            .find_map(|(level, at, below)| verdict_of(&level.dot_ignore, at, below))
            .or_else(|| {
                let root = levels().position(|(level, _, _)| level.repo_root)?;
                levels()
                    .take(root + 1)
                    .find_map(|(level, at, below)| verdict_of(&level.gitignore, at, below))
                    .or_else(|| {
                        let (level, at, below) = levels().nth(root)?;
                        verdict_of(&level.exclude, at, below)
                    })
            });
        verdict.or_else(|| {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            self.names.iter().any(|n| n == name).then_some(Verdict::Ignored)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignored(rules: &str, path: &str, is_dir: bool) -> Option<Verdict> {
        Rules::parse(rules).verdict(path, is_dir)
    }

    #[test]
    fn names_match_at_any_depth_and_anchored_patterns_from_the_file() {
        assert_eq!(ignored("*.o", "a/b/c.o", false), Some(Verdict::Ignored));
        assert_eq!(ignored("target", "crates/x/target", true), Some(Verdict::Ignored));
        assert_eq!(ignored("/target", "crates/x/target", true), None);
        assert_eq!(ignored("/target", "target", true), Some(Verdict::Ignored));
        assert_eq!(ignored("doc/out", "doc/out", true), Some(Verdict::Ignored));
        assert_eq!(ignored("doc/out", "x/doc/out", true), None);
        assert_eq!(ignored("*.o", "a.rs", false), None);
    }

    #[test]
    fn trailing_slash_is_directories_only_and_the_last_match_wins() {
        assert_eq!(ignored("build/", "build", false), None);
        assert_eq!(ignored("build/", "build", true), Some(Verdict::Ignored));
        assert_eq!(ignored("*.log\n!keep.log", "keep.log", false), Some(Verdict::Included));
        assert_eq!(ignored("!keep.log\n*.log", "keep.log", false), Some(Verdict::Ignored));
    }

    #[test]
    fn stars_questions_classes_and_double_stars() {
        assert_eq!(ignored("a*b", "a/b", false), None);
        assert_eq!(ignored("a/*/b", "a/x/b", false), Some(Verdict::Ignored));
        assert_eq!(ignored("a/*/b", "a/x/y/b", false), None);
        assert_eq!(ignored("a/**/b", "a/b", false), Some(Verdict::Ignored));
        assert_eq!(ignored("a/**/b", "a/x/y/b", false), Some(Verdict::Ignored));
        assert_eq!(ignored("**/gen", "x/y/gen", true), Some(Verdict::Ignored));
        assert_eq!(ignored("**/gen", "gen", true), Some(Verdict::Ignored));
        assert_eq!(ignored("out/**", "out/a/b.txt", false), Some(Verdict::Ignored));
        assert_eq!(ignored("out/**", "out", true), None);
        assert_eq!(ignored("file?.txt", "file1.txt", false), Some(Verdict::Ignored));
        assert_eq!(ignored("file[0-9].txt", "file7.txt", false), Some(Verdict::Ignored));
        assert_eq!(ignored("file[!0-9].txt", "file7.txt", false), None);
        assert_eq!(ignored("file[!0-9].txt", "fileA.txt", false), Some(Verdict::Ignored));
        assert_eq!(ignored("a**b", "axyb", false), Some(Verdict::Ignored));
        assert_eq!(ignored("a**b", "ax/yb", false), None, "** inside a segment is *");
    }

    #[test]
    fn comments_escapes_and_spaces() {
        assert_eq!(ignored("# comment", "# comment", false), None);
        assert_eq!(ignored("\\#hash", "#hash", false), Some(Verdict::Ignored));
        assert_eq!(ignored("\\!bang", "!bang", false), Some(Verdict::Ignored));
        assert_eq!(ignored("space   ", "space", false), Some(Verdict::Ignored));
        assert_eq!(ignored("space\\ ", "space ", false), Some(Verdict::Ignored));
        assert_eq!(ignored("a\\*b", "a*b", false), Some(Verdict::Ignored));
        assert_eq!(ignored("a\\*b", "axb", false), None);
        assert_eq!(ignored("trailing\\", "trailing\\", false), None, "invalid: skipped");
        assert_eq!(ignored("crlf\r", "crlf", false), Some(Verdict::Ignored));
        assert!(Rules::parse("\n\n   \n# x\n").is_empty());
    }

    #[test]
    fn the_common_shapes_agree_with_the_general_programme() {
        let patterns = ["target", "*.log", "build*", "*", "a*b", "*.tar.gz", "x/*.o", "**/gen"];
        let texts = ["target", "targets", "x.log", "a/x.log", "build", "build.rs", "b/uild", ""];
        for pattern in patterns {
            let tokens = compile(pattern.as_bytes()).unwrap();
            let shape = Shape::of(&tokens);
            for text in texts {
                assert_eq!(
                    shape.matches(&tokens, text.as_bytes()),
                    matches(&tokens, text.as_bytes()),
                    "{pattern} on {text} ({shape:?})"
                );
            }
        }
        assert_eq!(Shape::of(&compile(b"*.log").unwrap()), Shape::StarThen(b".log".to_vec()));
        // A path longer than the rows kept on the stack.
        let long = format!("{}/x.log", "d/".repeat(300));
        assert!(matches(&compile(b"**/*.log").unwrap(), long.as_bytes()));
    }

    #[test]
    fn random_patterns_give_the_same_answer_by_shape_and_by_programme() {
        let mut rng = crate::testing::kit::Rng::new(99);
        let parts = ["a", "b", ".", "*", "**", "/", "?", "[ab]", "[!a]", "\\*", "log"];
        let names = ["a", "b", "ab", "a.log", "b/a", "a/b/c", ".a", "log", "a*", "x/log"];
        for _ in 0..20_000 {
            let pattern: String =
                (0..1 + rng.below(5)).map(|_| parts[rng.below(parts.len())]).collect();
            let Some(tokens) = compile(pattern.as_bytes()) else { continue };
            let shape = Shape::of(&tokens);
            let text: String = (0..1 + rng.below(3))
                .map(|_| names[rng.below(names.len())])
                .collect::<Vec<_>>()
                .join("/");
            assert_eq!(
                shape.matches(&tokens, text.as_bytes()),
                matches(&tokens, text.as_bytes()),
                "{pattern} on {text} ({shape:?})"
            );
        }
    }

    #[test]
    fn lines_of_unclosed_brackets_are_read_in_linear_time() {
        // Each bracket read to the line's end would be 8 million steps a line (3 * 10^10 for
        // a 16 MiB ignore file of them).
        let line = "[".repeat(MAX_PATTERN_BYTES);
        let rules = Rules::parse(&format!("{line}\n").repeat(512));
        assert_eq!(rules.verdict(&line, false), Some(Verdict::Ignored));
        assert_eq!(rules.verdict("a", false), None);
    }

    #[test]
    fn a_pattern_that_would_make_a_backtracker_explode_is_answered() {
        // 1001 tokens against 2000 bytes: two million steps here, 2^500 for a backtracker.
        let pattern = "*a".repeat(500) + "b";
        assert_eq!(ignored(&pattern, &"a".repeat(2000), false), None);
        assert_eq!(ignored(&pattern, &("a".repeat(600) + "b"), false), Some(Verdict::Ignored));
    }
}
