//! Glob patterns for the glob and grep tools: `*`, `**`, `?`, `[...]` (ranges, `!`/`^`
//! negation), `{a,b}` (nested), and `\` escapes.
//!
//! Paths are matched segment by segment (`/`-separated). `**` as a whole segment matches any
//! number of directories. A leading `.` is matched like any other character: which hidden
//! entries are seen is the walk's business (it leaves them out, except those an ignore file
//! re-includes by name, such as `!.github/`, as ripgrep and fd do).

/// Brace alternatives beyond this many are refused.
const MAX_ALTERNATIVES: usize = 1024;
/// A pattern is at most this many characters, with at most this many `{` groups: expanding
/// braces recurses once per group, and its work is bounded by [`MAX_EXPANSION`] besides.
const MAX_CHARS: usize = 4096;
const MAX_GROUPS: usize = 64;
/// Characters the expansion of braces may write in all, so every pattern is expanded or
/// refused in a few milliseconds.
pub(crate) const MAX_EXPANSION: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Literal(char),
    Any,
    Star,
    Class { ranges: Vec<(char, char)>, negated: bool },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Globstar,
    Tokens(Vec<Token>),
}

impl Segment {
    fn matches(&self, part: &str) -> bool {
        match self {
            Segment::Globstar => true,
            Segment::Tokens(tokens) => wildcard(tokens, &part.chars().collect::<Vec<_>>()),
        }
    }

    fn literal(&self) -> Option<String> {
        match self {
            Segment::Globstar => None,
            Segment::Tokens(tokens) => tokens
                .iter()
                .map(|t| if let Token::Literal(c) = t { Some(*c) } else { None })
                .collect(),
        }
    }
}

/// A compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    alternatives: Vec<Vec<Segment>>,
}

/// Why a glob pattern cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobError {
    Empty,
    UnclosedBrace,
    UnclosedClass,
    TrailingBackslash,
    TooLong,
    TooManyGroups,
    TooManyAlternatives,
    TooComplex,
}

impl std::fmt::Display for GlobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GlobError::Empty => f.write_str("empty glob pattern"),
            GlobError::UnclosedBrace => f.write_str("unclosed { in glob pattern"),
            GlobError::UnclosedClass => f.write_str("unclosed [ in glob pattern"),
            GlobError::TrailingBackslash => f.write_str("glob pattern ends with a backslash"),
            GlobError::TooLong => write!(f, "glob pattern longer than {MAX_CHARS} characters"),
            GlobError::TooManyGroups => {
                write!(f, "glob pattern with more than {MAX_GROUPS} {{...}} groups")
            }
            GlobError::TooManyAlternatives => {
                write!(f, "too many {{...}} alternatives (more than {MAX_ALTERNATIVES})")
            }
            GlobError::TooComplex => write!(
                f,
                "glob pattern too complex: its {{...}} alternatives expand past {MAX_EXPANSION} characters"
            ),
        }
    }
}

impl std::error::Error for GlobError {}

impl Glob {
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        if pattern.is_empty() {
            return Err(GlobError::Empty);
        }
        if pattern.chars().count() > MAX_CHARS {
            return Err(GlobError::TooLong);
        }
        if pattern.matches('{').count() > MAX_GROUPS {
            return Err(GlobError::TooManyGroups);
        }
        let mut budget = MAX_EXPANSION;
        let expanded = expand_braces(pattern, &mut budget)?;
        let alternatives = expanded
            .iter()
            .map(|p| p.split('/').filter(|s| !s.is_empty()).map(parse_segment).collect())
            .collect::<Result<Vec<Vec<Segment>>, GlobError>>()?;
        Ok(Glob { alternatives })
    }

    /// The tokens of every alternative: what matching costs at most per name.
    #[cfg(test)]
    pub fn size(&self) -> usize {
        self.alternatives
            .iter()
            .flatten()
            .map(|s| match s {
                Segment::Globstar => 1,
                Segment::Tokens(tokens) => tokens.len(),
            })
            .sum()
    }

    /// Whether a relative, `/`-separated path matches.
    pub fn matches(&self, path: &str) -> bool {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        self.alternatives.iter().any(|segments| match_parts(segments, &parts))
    }

    /// The directory every match lies under: the leading literal segments common to all
    /// alternatives (so a walk can start there).
    pub fn base(&self) -> Vec<String> {
        let mut base: Option<Vec<String>> = None;
        for segments in &self.alternatives {
            // The last segment names the entries themselves, not a directory to start in.
            let lead: Vec<String> = segments[..segments.len().saturating_sub(1)]
                .iter()
                .map_while(Segment::literal)
                .collect();
            base = Some(match base {
                None => lead,
                Some(prev) => {
                    prev.into_iter().zip(lead).take_while(|(a, b)| a == b).map(|(a, _)| a).collect()
                }
            });
        }
        base.unwrap_or_default()
    }

    /// Whether some alternative starts with `..` or is absolute: such a glob would leave the
    /// directory it is applied to.
    pub fn escapes(pattern: &str) -> bool {
        pattern.starts_with('/') || pattern.split('/').any(|s| s == "..")
    }
}

/// `{a,b}` expansion, nested, in order; each string made is paid for from `budget`.
fn expand_braces(pattern: &str, budget: &mut usize) -> Result<Vec<String>, GlobError> {
    let chars: Vec<char> = pattern.chars().collect();
    // Find the first top-level `{` with its matching `}`.
    let mut depth = 0;
    let mut open = None;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '{' => {
                if depth == 0 {
                    open = Some(i);
                }
                depth += 1;
            }
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    let start = open.unwrap_or(0);
                    let prefix: String = chars[..start].iter().collect();
                    let suffix: String = chars[i + 1..].iter().collect();
                    let mut options = Vec::new();
                    let mut level = 0;
                    let mut current = String::new();
                    let mut j = start + 1;
                    while j < i {
                        let c = chars[j];
                        match c {
                            '\\' if j + 1 < i => {
                                current.push(c);
                                current.push(chars[j + 1]);
                                j += 1;
                            }
                            '{' => {
                                level += 1;
                                current.push(c);
                            }
                            '}' => {
                                level -= 1;
                                current.push(c);
                            }
                            ',' if level == 0 => options.push(std::mem::take(&mut current)),
                            _ => current.push(c),
                        }
                        j += 1;
                    }
                    options.push(current);
                    let mut out = Vec::new();
                    for option in options {
                        let next = format!("{option}{suffix}");
                        *budget = budget.checked_sub(next.len()).ok_or(GlobError::TooComplex)?;
                        for tail in expand_braces(&next, budget)? {
                            let whole = format!("{prefix}{tail}");
                            *budget =
                                budget.checked_sub(whole.len()).ok_or(GlobError::TooComplex)?;
                            out.push(whole);
                            if out.len() > MAX_ALTERNATIVES {
                                return Err(GlobError::TooManyAlternatives);
                            }
                        }
                    }
                    return Ok(out);
                }
            }
            _ => {}
        }
        i += 1;
    }
    if depth > 0 {
        return Err(GlobError::UnclosedBrace);
    }
    Ok(vec![pattern.to_string()])
}

fn parse_segment(segment: &str) -> Result<Segment, GlobError> {
    if segment == "**" {
        return Ok(Segment::Globstar);
    }
    let chars: Vec<char> = segment.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        tokens.push(match c {
            '\\' => {
                let escaped = chars.get(i).copied().ok_or(GlobError::TrailingBackslash)?;
                i += 1;
                Token::Literal(escaped)
            }
            '?' => Token::Any,
            '*' => {
                // `**` inside a segment is just a star.
                while chars.get(i) == Some(&'*') {
                    i += 1;
                }
                Token::Star
            }
            '[' => {
                let mut j = i;
                let negated = matches!(chars.get(j), Some('!') | Some('^'));
                if negated {
                    j += 1;
                }
                let mut ranges = Vec::new();
                let mut first = true;
                loop {
                    let Some(&c) = chars.get(j) else {
                        return Err(GlobError::UnclosedClass);
                    };
                    if c == ']' && !first {
                        j += 1;
                        break;
                    }
                    first = false;
                    let lo = if c == '\\' {
                        j += 1;
                        *chars.get(j).ok_or(GlobError::UnclosedClass)?
                    } else {
                        c
                    };
                    j += 1;
                    if chars.get(j) == Some(&'-') && chars.get(j + 1).is_some_and(|&n| n != ']') {
                        let hi = chars[j + 1];
                        j += 2;
                        ranges.push((lo.min(hi), lo.max(hi)));
                    } else {
                        ranges.push((lo, lo));
                    }
                }
                i = j;
                Token::Class { ranges, negated }
            }
            c => Token::Literal(c),
        });
    }
    Ok(Segment::Tokens(tokens))
}

/// One segment against one name: `*` backtracks only to the last star, so this is
/// O(pattern × name) at worst.
fn wildcard(tokens: &[Token], text: &[char]) -> bool {
    let (mut t, mut s) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while s < text.len() {
        let step = match tokens.get(t) {
            Some(Token::Star) => {
                star = Some((t, s));
                t += 1;
                continue;
            }
            Some(Token::Literal(c)) => *c == text[s],
            Some(Token::Any) => true,
            Some(Token::Class { ranges, negated }) => {
                ranges.iter().any(|&(lo, hi)| lo <= text[s] && text[s] <= hi) != *negated
            }
            None => false,
        };
        if step {
            t += 1;
            s += 1;
        } else if let Some((star_t, star_s)) = star {
            t = star_t + 1;
            s = star_s + 1;
            star = Some((star_t, star_s + 1));
        } else {
            return false;
        }
    }
    tokens[t..].iter().all(|tok| *tok == Token::Star)
}

/// Segments against path parts; `**` matches zero or more parts. Dynamic programming over
/// (segment, part) so several `**` cannot blow up.
fn match_parts(segments: &[Segment], parts: &[&str]) -> bool {
    let (n, m) = (segments.len(), parts.len());
    // can[i][j]: segments[i..] match parts[j..].
    let mut can = vec![vec![false; m + 1]; n + 1];
    can[n][m] = true;
    for i in (0..n).rev() {
        for j in (0..=m).rev() {
            can[i][j] = match &segments[i] {
                Segment::Globstar => {
                    can[i + 1][j] || (j < m && segments[i].matches(parts[j]) && can[i][j + 1])
                }
                seg => j < m && seg.matches(parts[j]) && can[i + 1][j + 1],
            };
        }
    }
    can[0][0]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(pattern: &str, path: &str) -> bool {
        Glob::new(pattern).unwrap().matches(path)
    }

    #[test]
    fn stars_questions_and_classes() {
        assert!(g("*.rs", "main.rs"));
        assert!(!g("*.rs", "src/main.rs"));
        assert!(g("src/*.rs", "src/main.rs"));
        assert!(g("?.txt", "a.txt") && !g("?.txt", "ab.txt"));
        assert!(g("[abc].md", "b.md") && !g("[!abc].md", "b.md") && g("[^abc].md", "d.md"));
        assert!(g("file[0-9].log", "file7.log"));
        assert!(g(r"\*.txt", "*.txt") && !g(r"\*.txt", "a.txt"));
        assert!(g("a*b*c", "axxbyyc") && !g("a*b*c", "axxbyy"));
    }

    #[test]
    fn globstar_spans_directories() {
        assert!(g("**/*.rs", "main.rs"));
        assert!(g("**/*.rs", "src/a/b/main.rs"));
        assert!(g("src/**/test_*.py", "src/test_x.py"));
        assert!(g("src/**/test_*.py", "src/a/b/test_x.py"));
        assert!(!g("src/**/test_*.py", "lib/test_x.py"));
        assert!(g("**", "a/b/c"));
        assert!(g("a/**/b/**/c", "a/x/b/y/z/c"));
    }

    #[test]
    fn braces_expand_nested() {
        assert!(
            g("*.{rs,toml}", "Cargo.toml")
                && g("*.{rs,toml}", "lib.rs")
                && !g("*.{rs,toml}", "a.md")
        );
        assert!(g("{src,tests}/**/*.{rs,{md,txt}}", "tests/x/y.txt"));
        assert_eq!(Glob::new("{a,b").unwrap_err().to_string(), "unclosed { in glob pattern");
    }

    #[test]
    fn a_leading_dot_is_an_ordinary_character() {
        // Hidden entries are left out by the walks (tests/walks.rs), not here.
        assert!(g("*", ".env") && g(".*", ".env") && !g(".*", "env"));
        assert!(g("**/*.yml", ".github/workflows/ci.yml"));
        assert!(g(".github/**/*.yml", ".github/workflows/ci.yml"));
    }

    #[test]
    fn base_directory_and_escapes() {
        assert_eq!(Glob::new("src/tools/**/*.rs").unwrap().base(), ["src", "tools"]);
        assert_eq!(Glob::new("{src,tests}/*.rs").unwrap().base(), Vec::<String>::new());
        assert_eq!(Glob::new("*.rs").unwrap().base(), Vec::<String>::new());
        assert!(Glob::escapes("../**") && Glob::escapes("/etc/*") && Glob::escapes("a/../../b"));
        assert!(!Glob::escapes("src/**/*.rs"));
    }

    #[test]
    fn nested_long_or_explosive_patterns_are_refused_by_name() {
        let nested = format!("{}a{}", "{".repeat(10_000), "}".repeat(10_000));
        assert_eq!(Glob::new(&nested), Err(GlobError::TooLong));
        let nested = format!("{}a{}", "{".repeat(100), "}".repeat(100));
        assert_eq!(Glob::new(&nested), Err(GlobError::TooManyGroups));
        assert_eq!(Glob::new(&"{a}".repeat(1000)), Err(GlobError::TooManyGroups));
        assert_eq!(Glob::new(&"{a,b}".repeat(11)), Err(GlobError::TooManyAlternatives));
        // Few alternatives, but long ones copied at every level.
        let long = format!("{}{}", "{,}".repeat(9), "x".repeat(4000));
        assert_eq!(Glob::new(&long), Err(GlobError::TooComplex));
        assert!(Glob::new(&format!("{}{}", "{,}".repeat(9), "x".repeat(100))).is_ok());
        assert_eq!(
            GlobError::TooManyGroups.to_string(),
            "glob pattern with more than 64 {...} groups"
        );
    }

    #[test]
    fn many_stars_stay_fast() {
        let name = "a".repeat(5000);
        assert!(!g("*a*a*a*a*a*a*a*b", &name));
        let deep = vec!["x"; 200].join("/");
        assert!(!g("**/**/**/**/**/y", &deep));
    }
}
