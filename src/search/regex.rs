//! A small regular-expression engine for the grep tool, matching in linear time.
//!
//! Patterns compile to a Thompson NFA that is simulated breadth-first (a Pike VM without
//! captures), so matching costs O(pattern × text) whatever the pattern: `(a*)*b` on a long run
//! of `a`s is as cheap as `ab`. Supported: literals, `.`, classes with ranges and negation,
//! `\d \w \s` (and negations), `\b \B`, `^ $`, alternation, groups (`(...)`, `(?:...)`, named),
//! `* + ? {m} {m,} {m,n}` (lazy forms match the same lines), and case-insensitive matching.
//! Backreferences and lookaround are not supported: they cannot be matched in linear time.

use std::fmt;

use crate::search::substring::{self, Finder};

mod dfa;

/// The largest compiled program accepted (after counted repetitions are expanded). The size
/// is worked out from the parsed pattern before anything is compiled, so a pattern that would
/// pass it (`(?:){1000}{1000}{1000}`) is refused at once rather than expanded for an hour.
pub(crate) const MAX_PROGRAM: usize = 100_000;

/// Groups and repetitions nest at most this deep (half the `regex` crate's limit). Parsing,
/// compiling and every walk over a pattern recurse at most this far, so no pattern can
/// exhaust the stack (`a` followed by 50,000 `*`, 5,000 nested groups).
const MAX_NESTING: u32 = 128;

/// The most characters a counted repetition (`{m,n}` with its braces) can take.
const COUNT_WINDOW: usize = 32;

/// A pattern that could not be compiled: what is wrong and where (1-based character position).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegexError {
    pub position: usize,
    pub message: String,
}

impl fmt::Display for RegexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at position {}", self.message, self.position)
    }
}

impl std::error::Error for RegexError {}

#[derive(Debug, Clone)]
enum Node {
    Empty,
    Char(char),
    Any,
    Class(Class),
    Look(Look),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat { node: Box<Node>, min: u32, max: Option<u32> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    Start,
    End,
    WordBoundary,
    NotWordBoundary,
}

/// The shorthand classes, on Unicode: `\w` is what `\b` calls a word character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shorthand {
    /// `\d`: any Unicode decimal digit (category Nd, as in ripgrep and Python).
    Digit,
    /// `\w`: any Unicode letter or number, or `_`.
    Word,
    /// `\s`: Unicode white space.
    Space,
}

impl Shorthand {
    fn contains(self, c: char) -> bool {
        match self {
            Shorthand::Digit => is_decimal_digit(c),
            Shorthand::Word => is_word_char(c),
            Shorthand::Space => c.is_whitespace(),
        }
    }
}

/// A word character for `\w` and `\b` alike.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Class {
    ranges: Vec<(char, char)>,
    shorthands: Vec<Shorthand>,
    negated: bool,
}

impl Class {
    fn contains(&self, c: char, fold: bool) -> bool {
        let hit = |c: char| {
            // The ranges are sorted and merged: one binary search.
            let after = self.ranges.partition_point(|&(lo, _)| lo <= c);
            (after > 0 && c <= self.ranges[after - 1].1)
                || self.shorthands.iter().any(|s| s.contains(c))
        };
        let found = hit(c)
            || (fold && (hit(simple_lower(c)) || hit(simple_upper(c)) || other_forms_hit(c, hit)));
        found != self.negated
    }
}

/// Ranges sorted and merged where they overlap or touch, so a class is searched in
/// logarithmic time however many ranges a pattern writes.
fn merged(mut ranges: Vec<(char, char)>) -> Vec<(char, char)> {
    ranges.sort_unstable();
    let mut out: Vec<(char, char)> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if lo as u32 <= last.1 as u32 + 1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

#[derive(Debug, Clone)]
enum Inst {
    Char(char),
    Any,
    Class(Class),
    Look(Look),
    Split(usize, usize),
    Jmp(usize),
    Match,
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Regex {
    program: Vec<Inst>,
    fold: bool,
    /// The pattern is plain text: matched with a substring search.
    literal: Option<String>,
    /// Literals one of which every match contains: whole buffers are searched for them
    /// first, and the program runs only on the lines they are in.
    prefilter: Vec<Finder>,
    /// The same literals searched for in one pass (when their rare bytes are few enough).
    together: Option<substring::Finders>,
    /// The pattern is exactly an alternation of those literals: a line that holds one
    /// matches, with no program to run.
    exact: bool,
    /// Characters outside ASCII that a folded literal's letters also match (the Kelvin sign
    /// for `k`, `ſ` for `s`): a buffer holding one is searched without the ASCII-folding
    /// prefilter.
    outsiders: Vec<char>,
    /// The lazy DFA, for a program without assertions (`None` otherwise).
    dfa: Option<std::cell::RefCell<dfa::Dfa>>,
}

/// Literal alternatives a prefilter searches for at most.
const MAX_PREFILTER_LITERALS: usize = 8;

impl Regex {
    /// Compiles `pattern`; `ignore_case` matches letters of either case.
    pub fn new(pattern: &str, ignore_case: bool) -> Result<Regex, RegexError> {
        let mut parser = Parser { chars: pattern.chars().collect(), at: 0, fold: ignore_case };
        let node = parser.parse()?;
        let fold = parser.fold;
        // Plain text is searched as a substring; folded text goes through the program, whose
        // folding is Unicode's, not `to_lowercase`'s.
        let literal = literal_of(&node).filter(|_| !fold);
        if compile_cost(&node) > MAX_PROGRAM as u64 {
            return Err(too_large());
        }
        let mut program = Vec::new();
        let mut budget = Budget { left: MAX_PROGRAM as u64 };
        compile(&node, &mut program, fold, &mut budget)?;
        program.push(Inst::Match);
        let (prefilter, exact, outsiders) = prefilter(&node, fold);
        let together =
            (prefilter.len() > 1).then(|| substring::Finders::new(prefilter.clone())).flatten();
        let has_looks = program.iter().any(|inst| matches!(inst, Inst::Look(_)));
        let dfa = (!has_looks).then(Default::default);
        Ok(Regex { program, fold, literal, prefilter, together, exact, outsiders, dfa })
    }

    /// Calls `on_line(start, end)` for each line of `haystack` the pattern matches (byte
    /// offsets, the newline excluded) until it returns false. Lines are split at `\n` with a
    /// trailing `\r` dropped; only the first `max_line` bytes of a line are searched.
    pub fn matching_lines(
        &self,
        haystack: &[u8],
        max_line: usize,
        mut on_line: impl FnMut(usize, usize) -> bool,
    ) {
        // The VM's thread lists, allocated once for the whole buffer.
        let scratch = std::cell::RefCell::new(Scratch::new(self.program.len()));
        let line_matches = |start: usize, end: usize| -> bool {
            let mut line = &haystack[start..end.min(start.saturating_add(max_line))];
            if let Some(stripped) = line.strip_suffix(b"\r") {
                line = stripped;
            }
            self.matches_with(&mut scratch.borrow_mut(), &String::from_utf8_lossy(line))
        };
        let outsider_present = || {
            self.outsiders.iter().any(|c| {
                let mut utf8 = [0; 4];
                Finder::new(c.encode_utf8(&mut utf8).as_bytes(), false).find(haystack, 0).is_some()
            })
        };
        if self.prefilter.is_empty() || outsider_present() {
            let mut start = 0;
            while start < haystack.len() {
                let end = substring::memchr(b'\n', haystack, start).unwrap_or(haystack.len());
                if line_matches(start, end) && !on_line(start, end) {
                    return;
                }
                start = end + 1;
            }
            return;
        }
        // The next occurrence of each literal at or after `pos`: searched again only once the
        // search has passed it, so each literal's scan goes through the buffer once.
        let mut next: Vec<Option<Option<usize>>> = vec![None; self.prefilter.len()];
        let mut pos = 0;
        while pos < haystack.len() {
            let mut candidate: Option<usize> = None;
            if let Some(together) = &self.together {
                // One pass for every literal.
                candidate = together.find(haystack, pos);
            }
            for (i, finder) in self.prefilter.iter().enumerate().filter(|_| self.together.is_none())
            {
                let stale = match next[i] {
                    None => true,
                    Some(Some(at)) => at < pos,
                    Some(None) => false,
                };
                if stale {
                    next[i] = Some(finder.find(haystack, pos));
                }
                if let Some(Some(at)) = next[i] {
                    candidate = Some(candidate.map_or(at, |c: usize| c.min(at)));
                }
            }
            let Some(hit) = candidate else { return };
            let start = substring::memrchr(b'\n', haystack, hit).map_or(0, |nl| nl + 1);
            let end = substring::memchr(b'\n', haystack, hit).unwrap_or(haystack.len());
            // An occurrence past the searched part of a long line does not count.
            let within = hit - start < max_line;
            let matched = within
                && if self.exact {
                    let last = self.prefilter.iter().map(Finder::len).max().unwrap_or(0);
                    hit + last <= start.saturating_add(max_line) || line_matches(start, end)
                } else {
                    line_matches(start, end)
                };
            if matched && !on_line(start, end) {
                return;
            }
            pos = end + 1;
        }
    }

    /// The same pattern matched by the VM alone (to check the DFA against it).
    #[cfg(test)]
    pub fn without_dfa(mut self) -> Regex {
        self.dfa = None;
        self
    }

    /// Whether the pattern matches anywhere in `text` (`^` and `$` are its start and end).
    pub fn is_match(&self, text: &str) -> bool {
        self.matches_with(&mut Scratch::new(self.program.len()), text)
    }

    fn matches_with(&self, scratch: &mut Scratch, text: &str) -> bool {
        if let Some(literal) = &self.literal {
            return text.contains(literal.as_str());
        }
        let Scratch { current, next, stack } = scratch;
        if let Some(dfa) = &self.dfa {
            if let Some(matched) = dfa.borrow_mut().is_match(self, current, stack, text) {
                return matched;
            }
        }
        current.clear();
        let mut prev: Option<char> = None;
        let mut chars = text.chars().peekable();
        loop {
            let c = chars.next();
            let ctx = Context { prev, next: c };
            // Unanchored search: a new thread starts at every position.
            if self.add(current, 0, ctx, stack) {
                return true;
            }
            let Some(c) = c else { return false };
            let ctx_after = Context { prev: Some(c), next: chars.peek().copied() };
            next.clear();
            for i in 0..current.len {
                let pc = current.dense[i];
                if self.steps(pc, c) && self.add(next, pc + 1, ctx_after, stack) {
                    return true;
                }
            }
            std::mem::swap(current, next);
            prev = Some(c);
        }
    }

    /// Whether the instruction at `pc` reads `c`.
    fn steps(&self, pc: usize, c: char) -> bool {
        match &self.program[pc] {
            Inst::Char(want) => *want == c || (self.fold && *want == fold_char(c)),
            Inst::Any => c != '\n',
            Inst::Class(class) => class.contains(c, self.fold),
            _ => false,
        }
    }

    /// Adds `pc` and everything reachable without reading a character; true on a match.
    fn add(&self, threads: &mut Threads, pc: usize, ctx: Context, stack: &mut Vec<usize>) -> bool {
        stack.clear();
        stack.push(pc);
        while let Some(pc) = stack.pop() {
            if !threads.insert(pc) {
                continue;
            }
            match &self.program[pc] {
                Inst::Match => return true,
                Inst::Jmp(to) => stack.push(*to),
                Inst::Split(a, b) => {
                    stack.push(*b);
                    stack.push(*a);
                }
                Inst::Look(look) => {
                    if ctx.holds(*look) {
                        stack.push(pc + 1);
                    }
                }
                Inst::Char(_) | Inst::Any | Inst::Class(_) => {}
            }
        }
        false
    }
}

#[derive(Clone, Copy)]
struct Context {
    prev: Option<char>,
    next: Option<char>,
}

impl Context {
    /// No neighbours: for programs without assertions, where none is asked about.
    const NONE: Context = Context { prev: None, next: None };

    fn holds(self, look: Look) -> bool {
        let word = |c: Option<char>| c.is_some_and(is_word_char);
        match look {
            Look::Start => self.prev.is_none(),
            Look::End => self.next.is_none(),
            Look::WordBoundary => word(self.prev) != word(self.next),
            Look::NotWordBoundary => word(self.prev) == word(self.next),
        }
    }
}

/// What one run of the VM works in, reused from line to line.
struct Scratch {
    current: Threads,
    next: Threads,
    stack: Vec<usize>,
}

impl Scratch {
    fn new(program_len: usize) -> Scratch {
        Scratch {
            current: Threads::new(program_len),
            next: Threads::new(program_len),
            stack: Vec::new(),
        }
    }
}

/// A sparse set of program counters: O(1) insert, clear and membership.
struct Threads {
    dense: Vec<usize>,
    sparse: Vec<usize>,
    len: usize,
}

impl Threads {
    fn new(n: usize) -> Threads {
        Threads { dense: vec![0; n], sparse: vec![0; n], len: 0 }
    }

    fn insert(&mut self, pc: usize) -> bool {
        let i = self.sparse[pc];
        if i < self.len && self.dense[i] == pc {
            return false;
        }
        self.sparse[pc] = self.len;
        self.dense[self.len] = pc;
        self.len += 1;
        true
    }

    fn clear(&mut self) {
        self.len = 0;
    }
}

fn simple_lower(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

fn simple_upper(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// The form `c` is compared in when case is ignored: Unicode's simple case folding, which is
/// the simple lowercase except for some letters with more than two forms ([`FOLD_EXTRAS`]).
fn fold_char(c: char) -> char {
    let lower = simple_lower(c);
    if lower.is_ascii() {
        return lower;
    }
    FOLD_EXTRAS.iter().find(|&&(x, _)| x == lower).map_or(lower, |&(_, to)| to)
}

/// Whether some character that folds as `c` does (other than its own cases) satisfies `hit`.
fn other_forms_hit(c: char, hit: impl Fn(char) -> bool) -> bool {
    let folded = fold_char(c);
    if hit(folded) || hit(simple_upper(folded)) {
        return true;
    }
    // Only `k` and `s` have such forms among ASCII letters.
    (!folded.is_ascii() || matches!(folded, 'k' | 's'))
        && FOLD_EXTRAS.iter().any(|&(x, to)| to == folded && hit(x))
}

/// The letters with more than two forms under Unicode's simple case folding (CaseFolding.txt,
/// statuses C and S), each with the form it folds to, where neither its simple lowercase nor
/// the uppercase of its fold says so: `ſ` (to `s`), final sigma, the Greek symbol variants,
/// the Cyrillic small letter variants, the Kelvin and Ångström signs, the titlecase digraphs.
/// Generated with Python's `unicodedata` (Unicode 14).
const FOLD_EXTRAS: [(char, char); 58] = [
    ('\u{B5}', '\u{3BC}'),
    ('\u{17F}', 's'),
    ('\u{1C5}', '\u{1C6}'),
    ('\u{1C8}', '\u{1C9}'),
    ('\u{1CB}', '\u{1CC}'),
    ('\u{1F2}', '\u{1F3}'),
    ('\u{345}', '\u{3B9}'),
    ('\u{3C2}', '\u{3C3}'),
    ('\u{3D0}', '\u{3B2}'),
    ('\u{3D1}', '\u{3B8}'),
    ('\u{3D5}', '\u{3C6}'),
    ('\u{3D6}', '\u{3C0}'),
    ('\u{3F0}', '\u{3BA}'),
    ('\u{3F1}', '\u{3C1}'),
    ('\u{3F4}', '\u{3B8}'),
    ('\u{3F5}', '\u{3B5}'),
    ('\u{1C80}', '\u{432}'),
    ('\u{1C81}', '\u{434}'),
    ('\u{1C82}', '\u{43E}'),
    ('\u{1C83}', '\u{441}'),
    ('\u{1C84}', '\u{442}'),
    ('\u{1C85}', '\u{442}'),
    ('\u{1C86}', '\u{44A}'),
    ('\u{1C87}', '\u{463}'),
    ('\u{1C88}', '\u{A64B}'),
    ('\u{1E9B}', '\u{1E61}'),
    ('\u{1E9E}', '\u{DF}'),
    ('\u{1F88}', '\u{1F80}'),
    ('\u{1F89}', '\u{1F81}'),
    ('\u{1F8A}', '\u{1F82}'),
    ('\u{1F8B}', '\u{1F83}'),
    ('\u{1F8C}', '\u{1F84}'),
    ('\u{1F8D}', '\u{1F85}'),
    ('\u{1F8E}', '\u{1F86}'),
    ('\u{1F8F}', '\u{1F87}'),
    ('\u{1F98}', '\u{1F90}'),
    ('\u{1F99}', '\u{1F91}'),
    ('\u{1F9A}', '\u{1F92}'),
    ('\u{1F9B}', '\u{1F93}'),
    ('\u{1F9C}', '\u{1F94}'),
    ('\u{1F9D}', '\u{1F95}'),
    ('\u{1F9E}', '\u{1F96}'),
    ('\u{1F9F}', '\u{1F97}'),
    ('\u{1FA8}', '\u{1FA0}'),
    ('\u{1FA9}', '\u{1FA1}'),
    ('\u{1FAA}', '\u{1FA2}'),
    ('\u{1FAB}', '\u{1FA3}'),
    ('\u{1FAC}', '\u{1FA4}'),
    ('\u{1FAD}', '\u{1FA5}'),
    ('\u{1FAE}', '\u{1FA6}'),
    ('\u{1FAF}', '\u{1FA7}'),
    ('\u{1FBC}', '\u{1FB3}'),
    ('\u{1FBE}', '\u{3B9}'),
    ('\u{1FCC}', '\u{1FC3}'),
    ('\u{1FFC}', '\u{1FF3}'),
    ('\u{2126}', '\u{3C9}'),
    ('\u{212A}', 'k'),
    ('\u{212B}', '\u{E5}'),
];

/// The characters outside ASCII whose fold is an ASCII letter.
const NON_ASCII_FOLDS_TO_ASCII: [(char, char); 2] = [('\u{212A}', 'k'), ('\u{17F}', 's')];

/// Unicode's decimal digits (category Nd, Unicode 14): `\d`.
fn is_decimal_digit(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    let c = c as u32;
    DECIMAL_DIGITS.iter().any(|&(lo, hi)| lo <= c && c <= hi)
}

const DECIMAL_DIGITS: &[(u32, u32)] = &[
    (0x30, 0x39),
    (0x660, 0x669),
    (0x6F0, 0x6F9),
    (0x7C0, 0x7C9),
    (0x966, 0x96F),
    (0x9E6, 0x9EF),
    (0xA66, 0xA6F),
    (0xAE6, 0xAEF),
    (0xB66, 0xB6F),
    (0xBE6, 0xBEF),
    (0xC66, 0xC6F),
    (0xCE6, 0xCEF),
    (0xD66, 0xD6F),
    (0xDE6, 0xDEF),
    (0xE50, 0xE59),
    (0xED0, 0xED9),
    (0xF20, 0xF29),
    (0x1040, 0x1049),
    (0x1090, 0x1099),
    (0x17E0, 0x17E9),
    (0x1810, 0x1819),
    (0x1946, 0x194F),
    (0x19D0, 0x19D9),
    (0x1A80, 0x1A89),
    (0x1A90, 0x1A99),
    (0x1B50, 0x1B59),
    (0x1BB0, 0x1BB9),
    (0x1C40, 0x1C49),
    (0x1C50, 0x1C59),
    (0xA620, 0xA629),
    (0xA8D0, 0xA8D9),
    (0xA900, 0xA909),
    (0xA9D0, 0xA9D9),
    (0xA9F0, 0xA9F9),
    (0xAA50, 0xAA59),
    (0xABF0, 0xABF9),
    (0xFF10, 0xFF19),
    (0x104A0, 0x104A9),
    (0x10D30, 0x10D39),
    (0x11066, 0x1106F),
    (0x110F0, 0x110F9),
    (0x11136, 0x1113F),
    (0x111D0, 0x111D9),
    (0x112F0, 0x112F9),
    (0x11450, 0x11459),
    (0x114D0, 0x114D9),
    (0x11650, 0x11659),
    (0x116C0, 0x116C9),
    (0x11730, 0x11739),
    (0x118E0, 0x118E9),
    (0x11950, 0x11959),
    (0x11C50, 0x11C59),
    (0x11D50, 0x11D59),
    (0x11DA0, 0x11DA9),
    (0x16A60, 0x16A69),
    (0x16AC0, 0x16AC9),
    (0x16B50, 0x16B59),
    (0x1D7CE, 0x1D7FF),
    (0x1E140, 0x1E149),
    (0x1E2F0, 0x1E2F9),
    (0x1E950, 0x1E959),
    (0x1FBF0, 0x1FBF9),
];

/// The literals every match contains one of, whether matching one is the whole pattern, and
/// the characters outside ASCII the folded literals also match (see `Regex::outsiders`).
/// With case folding only ASCII literals are used, compared ASCII-insensitively.
fn prefilter(node: &Node, fold: bool) -> (Vec<Finder>, bool, Vec<char>) {
    let Some(literals) = required(node) else { return (Vec::new(), false, Vec::new()) };
    let usable = |l: &String| {
        !l.is_empty() && !l.contains(['\n', '\r', '\u{FFFD}']) && (!fold || l.is_ascii())
    };
    if literals.is_empty()
        || literals.len() > MAX_PREFILTER_LITERALS
        || !literals.iter().all(usable)
    {
        return (Vec::new(), false, Vec::new());
    }
    let outsiders: Vec<char> = NON_ASCII_FOLDS_TO_ASCII
        .iter()
        .filter(|(_, ascii)| {
            fold && literals.iter().any(|l| l.to_ascii_lowercase().contains(*ascii))
        })
        .map(|&(c, _)| c)
        .collect();
    let exact = exact_alternation(node);
    let finders = literals
        .iter()
        .map(|l| {
            let bytes = if fold { l.to_ascii_lowercase() } else { l.clone() };
            Finder::new(bytes.as_bytes(), fold)
        })
        .collect();
    (finders, exact, outsiders)
}

/// Literals one of which every match of `node` contains, if such a set is known.
fn required(node: &Node) -> Option<Vec<String>> {
    match node {
        Node::Char(c) => Some(vec![c.to_string()]),
        Node::Repeat { node, min, .. } if *min >= 1 => required(node),
        Node::Alt(branches) => {
            let mut all = Vec::new();
            for branch in branches {
                all.extend(required(branch)?);
            }
            all.sort();
            all.dedup();
            Some(all)
        }
        Node::Concat(nodes) => {
            // Candidates: each run of plain characters, and what each other part requires.
            let mut candidates: Vec<Vec<String>> = Vec::new();
            let mut run = String::new();
            for n in nodes {
                match n {
                    Node::Char(c) => run.push(*c),
                    other => {
                        if !run.is_empty() {
                            candidates.push(vec![std::mem::take(&mut run)]);
                        }
                        if let Some(set) = required(other) {
                            candidates.push(set);
                        }
                    }
                }
            }
            if !run.is_empty() {
                candidates.push(vec![run]);
            }
            // The best: the longest shortest literal, then the fewest alternatives.
            candidates.into_iter().max_by_key(|set| {
                let shortest = set.iter().map(|l| l.chars().count()).min().unwrap_or(0);
                (shortest, std::cmp::Reverse(set.len()))
            })
        }
        _ => None,
    }
}

/// Whether the pattern is plain text or an alternation of plain texts.
fn exact_alternation(node: &Node) -> bool {
    match node {
        Node::Alt(branches) => branches.iter().all(|b| literal_of(b).is_some()),
        other => literal_of(other).is_some(),
    }
}

/// The pattern as plain text, when it has no operators at all.
fn literal_of(node: &Node) -> Option<String> {
    match node {
        Node::Char(c) => Some(c.to_string()),
        Node::Concat(nodes) => {
            nodes.iter().map(|n| if let Node::Char(c) = n { Some(*c) } else { None }).collect()
        }
        _ => None,
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    fold: bool,
}

impl Parser {
    fn error(&self, message: &str) -> RegexError {
        RegexError { position: self.at + 1, message: message.to_string() }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn parse(&mut self) -> Result<Node, RegexError> {
        // A leading `(?i)` turns on case-insensitive matching.
        if self.chars[self.at..].starts_with(&['(', '?', 'i', ')']) {
            self.at += 4;
            self.fold = true;
        }
        let (node, _) = self.alternation(0)?;
        if self.at < self.chars.len() {
            return Err(self.error("unmatched closing parenthesis"));
        }
        Ok(node)
    }

    fn too_deep(&self) -> RegexError {
        self.error(&format!(
            "pattern nested too deeply (more than {MAX_NESTING} levels of groups and repetitions)"
        ))
    }

    /// A node one level above children of height `below` (a leaf is 1 high).
    fn above(&self, below: u32) -> Result<u32, RegexError> {
        if below >= MAX_NESTING {
            return Err(self.too_deep());
        }
        Ok(below + 1)
    }

    /// An alternation and its height (`depth`: the groups it is inside).
    fn alternation(&mut self, depth: u32) -> Result<(Node, u32), RegexError> {
        if depth > MAX_NESTING {
            return Err(self.too_deep());
        }
        let mut branches = vec![self.concat(depth)?];
        while self.eat('|') {
            branches.push(self.concat(depth)?);
        }
        if branches.len() == 1 {
            return Ok(branches.remove(0));
        }
        let height = self.above(branches.iter().map(|(_, h)| *h).max().unwrap_or(1))?;
        Ok((Node::Alt(branches.into_iter().map(|(n, _)| n).collect()), height))
    }

    fn concat(&mut self, depth: u32) -> Result<(Node, u32), RegexError> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom(depth)?;
            items.push(self.quantified(atom)?);
        }
        Ok(match items.len() {
            0 => (Node::Empty, 1),
            1 => items.remove(0),
            _ => {
                let height = self.above(items.iter().map(|(_, h)| *h).max().unwrap_or(1))?;
                (Node::Concat(items.into_iter().map(|(n, _)| n).collect()), height)
            }
        })
    }

    fn atom(&mut self, depth: u32) -> Result<(Node, u32), RegexError> {
        let start = self.at;
        let Some(c) = self.peek() else { return Err(self.error("unexpected end of pattern")) };
        self.at += 1;
        let leaf = match c {
            '.' => Node::Any,
            '^' => Node::Look(Look::Start),
            '$' => Node::Look(Look::End),
            '[' => Node::Class(self.class()?),
            '(' => {
                if self.eat('?') {
                    if self.eat(':') {
                    } else if (self.eat('P') && self.eat('<')) || self.eat('<') {
                        while let Some(c) = self.peek() {
                            self.at += 1;
                            if c == '>' {
                                break;
                            }
                        }
                    } else {
                        return Err(self.error("unsupported group syntax (lookaround and flags other than a leading (?i) are not supported)"));
                    }
                }
                let inner = self.alternation(depth + 1)?;
                if !self.eat(')') {
                    self.at = start;
                    return Err(self.error("unclosed group"));
                }
                return Ok(inner);
            }
            '*' | '+' | '?' => {
                self.at = start;
                return Err(self.error("quantifier without anything to repeat"));
            }
            '\\' => self.escape(false)?,
            c => Node::Char(if self.fold { fold_char(c) } else { c }),
        };
        Ok((leaf, 1))
    }

    /// After `\`: a class, an assertion or a literal.
    fn escape(&mut self, in_class: bool) -> Result<Node, RegexError> {
        let Some(c) = self.peek() else { return Err(self.error("pattern ends with a backslash")) };
        self.at += 1;
        let class = |shorthand: Shorthand, negated: bool| {
            Node::Class(Class { ranges: Vec::new(), shorthands: vec![shorthand], negated })
        };
        Ok(match c {
            'd' => class(Shorthand::Digit, false),
            'D' => class(Shorthand::Digit, true),
            'w' => class(Shorthand::Word, false),
            'W' => class(Shorthand::Word, true),
            's' => class(Shorthand::Space, false),
            'S' => class(Shorthand::Space, true),
            'b' if !in_class => Node::Look(Look::WordBoundary),
            'B' if !in_class => Node::Look(Look::NotWordBoundary),
            'n' => Node::Char('\n'),
            't' => Node::Char('\t'),
            'r' => Node::Char('\r'),
            'f' => Node::Char('\u{c}'),
            'v' => Node::Char('\u{b}'),
            '0' => Node::Char('\0'),
            'x' => {
                let hex: String = self.chars.iter().skip(self.at).take(2).collect();
                let value = u32::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == 2);
                let value = value.ok_or_else(|| self.error("\\x needs two hex digits"))?;
                self.at += 2;
                Node::Char(char::from_u32(value).unwrap_or('\u{fffd}'))
            }
            c if c.is_ascii_alphanumeric() => {
                self.at -= 1;
                return Err(self.error(&format!("unsupported escape \\{c}")));
            }
            c => Node::Char(if self.fold { fold_char(c) } else { c }),
        })
    }

    /// After `[`.
    fn class(&mut self) -> Result<Class, RegexError> {
        let open = self.at - 1;
        let negated = self.eat('^');
        let mut ranges = Vec::new();
        let mut shorthands = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                self.at = open;
                return Err(self.error("unclosed character class"));
            };
            if c == ']' && !first {
                self.at += 1;
                break;
            }
            first = false;
            self.at += 1;
            let lo = if c == '\\' {
                match self.escape(true)? {
                    Node::Char(c) => c,
                    Node::Class(inner) if !inner.negated => {
                        ranges.extend(inner.ranges);
                        shorthands.extend(inner.shorthands);
                        continue;
                    }
                    _ => {
                        return Err(
                            self.error("negated shorthand classes cannot appear inside [...]")
                        )
                    }
                }
            } else {
                c
            };
            if self.peek() == Some('-') && self.chars.get(self.at + 1).is_some_and(|&n| n != ']') {
                self.at += 1;
                let hi = match self.peek() {
                    Some('\\') => {
                        self.at += 1;
                        match self.escape(true)? {
                            Node::Char(c) => c,
                            _ => return Err(self.error("invalid range end")),
                        }
                    }
                    Some(c) => {
                        self.at += 1;
                        c
                    }
                    None => return Err(self.error("unclosed character class")),
                };
                if hi < lo {
                    // Point at the end of the range.
                    return Err(RegexError {
                        position: self.at,
                        message: "range out of order".to_string(),
                    });
                }
                ranges.push((lo, hi));
            } else {
                ranges.push((lo, lo));
            }
        }
        Ok(Class { ranges: merged(ranges), shorthands, negated })
    }

    /// An atom with its quantifiers, each one level higher.
    fn quantified(&mut self, (atom, height): (Node, u32)) -> Result<(Node, u32), RegexError> {
        let mut node = atom;
        let mut height = height;
        loop {
            let start = self.at;
            let (min, max) = match self.peek() {
                Some('*') => (0, None),
                Some('+') => (1, None),
                Some('?') => (0, Some(1)),
                // `counted` consumes the braces itself.
                Some('{') => match self.counted()? {
                    Some(bounds) => bounds,
                    None => return Ok((node, height)),
                },
                _ => return Ok((node, height)),
            };
            height = self.above(height)?;
            if self.at == start {
                self.at += 1;
            }
            // A repeated assertion (`\b?`, `^*`) is accepted, as Python and ripgrep accept it:
            // the VM's thread set ends the empty loop.
            // Lazy and possessive forms match the same set of lines.
            if !self.eat('?') {
                self.eat('+');
            }
            node = Node::Repeat { node: Box::new(node), min, max };
        }
    }

    /// `{m}`, `{m,}`, `{m,n}`; `None` (and nothing consumed) when the brace is a literal.
    fn counted(&mut self) -> Result<Option<(u32, Option<u32>)>, RegexError> {
        let start = self.at;
        // A count is short (`{1000,1000}`): only that much is looked at, so a pattern of many
        // braces is read in linear time.
        let window: Vec<char> = self.chars[self.at..]
            .iter()
            .take(COUNT_WINDOW)
            .take_while(|&&c| c != '}')
            .copied()
            .collect();
        let rest: String = window.iter().collect();
        let inner = &rest[1..];
        let digits_only =
            !inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit() || c == ',');
        if self.chars.get(self.at + window.len()) != Some(&'}') {
            if digits_only && window.len() == COUNT_WINDOW {
                return Err(self.error("repetition count above 1000 or malformed"));
            }
            return Ok(None);
        }
        let number = |s: &str| s.parse::<u32>().ok().filter(|n| *n <= 1000);
        let bounds = match inner.split_once(',') {
            None => number(inner).map(|n| (n, Some(n))),
            Some((lo, "")) => number(lo).map(|n| (n, None)),
            Some((lo, hi)) => number(lo).zip(number(hi)).map(|(lo, hi)| (lo, Some(hi))),
        };
        match bounds {
            Some((lo, Some(hi))) if hi < lo => Err(self.error("repetition range out of order")),
            Some(bounds) => {
                self.at = start + window.len() + 1;
                Ok(Some(bounds))
            }
            None if digits_only => Err(self.error("repetition count above 1000 or malformed")),
            None => Ok(None),
        }
    }
}

/// The steps compiling `node` takes (one per node compiled, the ranges a class copies, every
/// copy of a counted repetition's body), worked out without compiling: saturating, and a walk
/// of the parsed pattern only. It bounds the program's length too.
fn compile_cost(node: &Node) -> u64 {
    match node {
        Node::Empty | Node::Char(_) | Node::Any | Node::Look(_) => 1,
        Node::Class(class) => 1 + class.ranges.len() as u64,
        Node::Concat(nodes) => nodes.iter().fold(1, |sum, n| sum.saturating_add(compile_cost(n))),
        Node::Alt(branches) => {
            branches.iter().fold(1, |sum, n| sum.saturating_add(compile_cost(n)).saturating_add(2))
        }
        Node::Repeat { node, min, max } => {
            let copies = u64::from(*min) + max.map_or(1, |max| u64::from(max.saturating_sub(*min)));
            compile_cost(node).saturating_add(2).saturating_mul(copies.max(1)).saturating_add(1)
        }
    }
}

/// What compiling may still take: counted down as it goes, a second guard behind
/// [`compile_cost`].
struct Budget {
    left: u64,
}

impl Budget {
    fn spend(&mut self, steps: u64) -> Result<(), RegexError> {
        #[cfg(test)]
        SPENT.with(|spent| spent.set(spent.get() + steps));
        self.left = self.left.checked_sub(steps).ok_or_else(too_large)?;
        Ok(())
    }
}

#[cfg(test)]
thread_local! {
    /// The compile steps this thread has taken, for the tests that bound them.
    pub static SPENT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn too_large() -> RegexError {
    RegexError {
        position: 1,
        message: format!(
            "pattern too large: it would compile to more than {MAX_PROGRAM} instructions (counted repetitions multiply what they repeat)"
        ),
    }
}

fn compile(
    node: &Node,
    program: &mut Vec<Inst>,
    fold: bool,
    budget: &mut Budget,
) -> Result<(), RegexError> {
    budget.spend(match node {
        Node::Class(class) => 1 + class.ranges.len() as u64,
        _ => 1,
    })?;
    match node {
        Node::Empty => {}
        Node::Char(c) => program.push(Inst::Char(if fold { fold_char(*c) } else { *c })),
        Node::Any => program.push(Inst::Any),
        Node::Class(class) => program.push(Inst::Class(class.clone())),
        Node::Look(look) => program.push(Inst::Look(*look)),
        Node::Concat(nodes) => {
            for n in nodes {
                compile(n, program, fold, budget)?;
            }
        }
        Node::Alt(branches) => {
            let mut jumps = Vec::new();
            for (i, branch) in branches.iter().enumerate() {
                if i + 1 < branches.len() {
                    let split = program.len();
                    program.push(Inst::Split(split + 1, 0));
                    compile(branch, program, fold, budget)?;
                    jumps.push(program.len());
                    program.push(Inst::Jmp(0));
                    let next = program.len();
                    program[split] = Inst::Split(split + 1, next);
                } else {
                    compile(branch, program, fold, budget)?;
                }
            }
            let end = program.len();
            for j in jumps {
                program[j] = Inst::Jmp(end);
            }
        }
        Node::Repeat { node, min, max } => {
            for _ in 0..*min {
                compile(node, program, fold, budget)?;
            }
            match max {
                None => {
                    // x*: L: split body, out; body; jmp L
                    let split = program.len();
                    program.push(Inst::Split(split + 1, 0));
                    compile(node, program, fold, budget)?;
                    program.push(Inst::Jmp(split));
                    let out = program.len();
                    program[split] = Inst::Split(split + 1, out);
                }
                Some(max) => {
                    let mut splits = Vec::new();
                    for _ in *min..*max {
                        splits.push(program.len());
                        program.push(Inst::Split(program.len() + 1, 0));
                        compile(node, program, fold, budget)?;
                    }
                    let out = program.len();
                    for s in splits {
                        program[s] = Inst::Split(s + 1, out);
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, text: &str) -> bool {
        Regex::new(pattern, false).unwrap().is_match(text)
    }

    /// What `matching_lines` must find: the lines `is_match` accepts, one by one.
    fn lines_one_by_one(regex: &Regex, haystack: &str, max_line: usize) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        let mut start = 0;
        for line in haystack.split_inclusive('\n') {
            let body = line.strip_suffix('\n').unwrap_or(line);
            let end = start + body.len();
            let cut = &body.as_bytes()[..body.len().min(max_line)];
            let cut = cut.strip_suffix(b"\r").unwrap_or(cut);
            if regex.is_match(&String::from_utf8_lossy(cut)) {
                found.push((start, end));
            }
            start += line.len();
        }
        found
    }

    #[test]
    fn prefiltered_lines_are_the_lines_that_match() {
        let haystack = "fn main() {}\nlet e = IoError::new();\r\nunsafe { x.unwrap() }\n\
            TOKIO runtime\nto\u{212A}io with a Kelvin sign\nnothing here\n\
            a very long line that mentions fn main only after forty bytes\n\
            Error\nerror: ParseError\nuse tokio::sync;\nun\u{17F}afe with a long s\nfn";
        for (pattern, fold) in [
            ("fn main", false),
            ("[A-Z][a-z]+Error", false),
            ("unsafe|unwrap", false),
            ("tokio", true),
            ("UNSAFE", true),
            ("TOKIO", false),
            ("error", true),
            ("x+\\.unwrap\\(", false),
            ("(Io|Parse)Error", false),
            ("^fn$", false),
            ("e\\w*", false),
            ("nope", false),
        ] {
            let regex = Regex::new(pattern, fold).unwrap();
            for max_line in [40, 1 << 20] {
                let mut got = Vec::new();
                regex.matching_lines(haystack.as_bytes(), max_line, |s, e| {
                    got.push((s, e));
                    true
                });
                assert_eq!(
                    got,
                    lines_one_by_one(&regex, haystack, max_line),
                    "{pattern} (fold {fold}, max_line {max_line})"
                );
            }
        }
        // Without the Kelvin sign in the buffer, the ASCII prefilter still finds every case.
        let regex = Regex::new("tokio", true).unwrap();
        let mut got = Vec::new();
        regex.matching_lines(b"ToKiO\ntokio\nTOKIO\ntoki", 1 << 20, |s, e| {
            got.push((s, e));
            true
        });
        assert_eq!(got, [(0, 5), (6, 11), (12, 17)]);
    }

    #[test]
    fn literals_classes_and_anchors() {
        assert!(m("fn main", "pub fn main() {"));
        assert!(!m("fn main", "fn  main"));
        assert!(m("^use ", "use std::io;"));
        assert!(!m("^use ", " use std::io;"));
        assert!(m(";$", "let x = 1;"));
        assert!(m("[a-c]x[^0-9]", "bx!"));
        assert!(!m("[a-c]x[^0-9]", "bx1"));
        assert!(m(r"\d{3}-\d{4}", "call 555-1234 now"));
        assert!(m(r"\bword\b", "a word here"));
        assert!(!m(r"\bword\b", "swordfish"));
        assert!(m(r"\Bord", "sword"));
        assert!(m(r"\s+\w+\s*=", "  let x = 3"));
        assert!(m("a.c", "abc") && !m("a.c", "a\nc"));
        assert!(m(r"[\d.]+", "v1.2"));
        assert!(m(r"\.", "a.b") && !m(r"\.", "ab"));
        assert!(m("[]a]", "]") && m("[a-]", "-"));
    }

    #[test]
    fn shorthands_and_word_boundaries_agree_on_unicode() {
        assert!(m(r"^\w+\b$", "café"));
        assert!(m(r"\bnaïve\b", "a naïve plan") && !m(r"\bcafé\b", "cafés"));
        assert!(m(r"^\w+$", "Straße_42") && m(r"^\w+$", "日本語"));
        assert!(!m(r"\w", "!?.") && m(r"^\W+$", "—…"));
        assert!(m(r"^\d+$", "٣٤٥") && !m(r"\d", "abc"));
        assert!(m(r"a\sb", "a\u{2003}b") && m(r"a\sb", "a\u{3000}b") && !m(r"a\Sb", "a b"));
        assert!(m(r"^[\w-]+$", "élan-vital") && !m(r"^[\w-]+$", "a b"));
        // Every character is a word character for \w exactly when \b sees one.
        for c in ['a', 'é', 'ß', '_', '9', '٣', '中', ' ', '-', '—', '\u{a0}'] {
            let word = m(r"^\w$", &c.to_string());
            assert_eq!(m(r"^.\b", &c.to_string()), word, "{c:?}");
        }
    }

    #[test]
    fn alternation_groups_and_repetition() {
        assert!(m("cat|dog", "hotdog"));
        assert!(m("(?:ab)+c", "xababcx"));
        assert!(!m("^(ab)+$", "aba"));
        assert!(m("^a{2,3}$", "aaa") && !m("^a{2,3}$", "aaaa") && !m("^a{2,3}$", "a"));
        assert!(m("^a{2}$", "aa") && m("^a{2,}$", "aaaaa"));
        assert!(m("^a{2}b$", "aab") && !m("^a{2}b$", "aaab"));
        assert!(m("colou?r", "color") && m("colou?r", "colour"));
        assert!(m("x{y", "x{y"), "a brace that is not a count is literal");
        assert!(m("(?P<name>ab)c", "abc") && m("(?<n>a)", "a"));
        assert!(m("a*?b", "aab"));
        assert!(m("", "anything"));
    }

    #[test]
    fn case_folding_is_unicode_simple_folding_and_digits_are_decimal() {
        let i = |pattern: &str, text: &str| Regex::new(pattern, true).unwrap().is_match(text);
        assert!(i("s", "\u{17F}") && i("\u{17F}", "S") && i("[r-t]", "\u{17F}"));
        assert!(i("σ", "ς") && i("Σ", "ς") && i("[ς]", "σ") && i("k", "\u{212A}"));
        assert!(i("μ", "µ") && i("в", "\u{1C80}") && i("straße", "STRAẞE"));
        // Dotless and dotted i stay apart, as in ripgrep (Python's re joins them).
        assert!(!i("i", "ı") && !i("i", "İ"));
        assert!(m(r"^\d+$", "٣٤") && !m(r"\d", "²") && !m(r"\d", "Ⅷ") && m(r"\w", "²"));
    }

    #[test]
    fn the_dfa_gives_the_vms_answer_also_when_its_states_run_out() {
        // `a[ab]{12}c` over random a/b text needs a state per set of recent `a`s: 4096 of
        // them, past the cap, so the cache is dropped and rebuilt along the way.
        let regex = Regex::new("a[ab]{12}c", false).unwrap();
        let vm = regex.clone().without_dfa();
        let mut rng = crate::testing::kit::Rng::new(12);
        let text: String = (0..20_000).map(|_| if rng.below(2) == 0 { 'a' } else { 'b' }).collect();
        for line in
            [text.clone(), format!("{text}c"), format!("{}c{}", &text[..9000], &text[9000..])]
        {
            assert_eq!(regex.is_match(&line), vm.is_match(&line));
        }
        let states = || regex.dfa.as_ref().map(|d| d.borrow().states());
        assert!(!regex.is_match(&text));
        assert_eq!(states(), Some(0), "the cap was reached and the cache dropped");
        assert!(!regex.is_match("abab") && regex.is_match("xaabababababab c aabababababbbc"));
        assert!(states().is_some_and(|n| n > 0 && n < 100), "{:?}", states());
    }

    #[test]
    fn the_dfa_of_a_large_program_stays_within_its_memory() {
        // Each state of `a[ab]{1000}c` over a/b text holds a thread per recent `a`: hundreds of
        // threads in thousands of states, far past the memory cap without it.
        let regex = Regex::new("a[ab]{1000}c", false).unwrap();
        let vm = regex.clone().without_dfa();
        let mut rng = crate::testing::kit::Rng::new(7);
        let bytes = || regex.dfa.as_ref().map_or((0, 0), |d| d.borrow().bytes());
        let line: String = (0..2500).map(|_| ['a', 'b'][rng.below(2)]).collect();
        assert!(!regex.is_match(&line[..40]) && bytes().0 > 0);
        for _ in 0..2 {
            assert_eq!(regex.is_match(&line), vm.is_match(&line));
            // The memory cap was reached on the way (well before the cap on states), and the
            // cache dropped: it never held more than the cap and one state.
            let (now, peak) = bytes();
            assert!(
                now == 0 && (8 * 1024 * 1024..8 * 1024 * 1024 + 65536).contains(&peak),
                "{peak}"
            );
            let line = format!("{line}a{}c", "b".repeat(1000));
            assert!(regex.is_match(&line) && vm.is_match(&line));
        }
    }

    #[test]
    fn case_insensitive() {
        let r = Regex::new("hello WORLD", true).unwrap();
        assert!(r.is_match("Hello world"));
        let r = Regex::new("[a-z]+ ÉTÉ", true).unwrap();
        assert!(r.is_match("BEL été"));
        assert!(Regex::new("(?i)todo", false).unwrap().is_match("TODO: x"));
    }

    #[test]
    fn invalid_patterns_name_the_position() {
        let cases = [
            ("(ab", 1, "unclosed group"),
            ("ab)", 3, "unmatched closing parenthesis"),
            ("[ab", 1, "unclosed character class"),
            ("*a", 1, "quantifier without anything to repeat"),
            ("a{5,2}", 2, "repetition range out of order"),
            ("a{2000}", 2, "repetition count above 1000 or malformed"),
            (r"\q", 2, r"unsupported escape \q"),
            ("[z-a]", 4, "range out of order"),
            ("(?=x)", 3, "unsupported group syntax (lookaround and flags other than a leading (?i) are not supported)"),
            ("a\\", 3, "pattern ends with a backslash"),
        ];
        for (pattern, position, message) in cases {
            let err = Regex::new(pattern, false).unwrap_err();
            assert_eq!((err.position, err.message.as_str()), (position, message), "{pattern}");
        }
    }

    /// Runs `work` in a thread with a small stack (1 MiB: an eighth of the main thread's, where
    /// tools run; a debug build's frames are the largest): a recursion that input could deepen
    /// would overflow it.
    fn on_a_small_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new().stack_size(1024 * 1024).spawn(work).unwrap().join().unwrap()
    }

    #[test]
    fn deep_nesting_is_refused_by_name_and_never_overflows_the_stack() {
        let message = "pattern nested too deeply (more than 128 levels of groups and repetitions)";
        let stars = format!("a{}", "*".repeat(50_000));
        let groups = format!("{}a{}", "(".repeat(5_000), ")".repeat(5_000));
        let mixed = "(a*)+".to_string() + &"(?:b+)?".repeat(3) + &"{1,2}".repeat(300);
        for pattern in [stars, groups, format!("a{mixed}")] {
            let err = on_a_small_stack(move || Regex::new(&pattern, false).unwrap_err());
            assert_eq!(err.message, message);
        }
        // Below the limit, everything compiles and matches on the same small stack.
        let deep = format!("{}a{}", "(".repeat(127), ")*".repeat(127));
        assert!(on_a_small_stack(move || Regex::new(&deep, false).unwrap().is_match("xa")));
    }

    #[test]
    fn compile_work_is_bounded_before_it_is_done() {
        let message = too_large().message;
        for pattern in [
            "(?:){1000}{1000}{1000}",
            "(?:){1000}{1000}{1000}{1000}",
            "(?:(?:a{1000}){1000})",
            "[a-zA-Z0-9_]{1000}{100}",
        ] {
            SPENT.with(|s| s.set(0));
            assert_eq!(Regex::new(pattern, false).unwrap_err().message, message, "{pattern}");
            // Refused from the parsed pattern: no step of compiling was taken.
            assert_eq!(SPENT.with(|s| s.get()), 0, "{pattern}");
        }
        // Braces that are no counts are read in linear time.
        let braces = "a{".repeat(200_000);
        assert!(Regex::new(&braces, false).is_err(), "too large once literal");
        assert!(Regex::new(&"x{".repeat(20_000), false).unwrap().is_match(&"x{".repeat(20_000)));
        assert_eq!(
            Regex::new("a{99999999999999999999999999999999999}", false).unwrap_err().message,
            "repetition count above 1000 or malformed"
        );
    }

    #[test]
    fn classes_with_many_ranges_are_searched_as_sorted_ranges() {
        let class: String = (0..5000u32).map(|i| format!("\\x{:02x}", i % 200)).collect();
        let r = Regex::new(&format!("^[{class}é-ë]+$"), false).unwrap();
        assert!(r.is_match("ab\u{c7}ê") && !r.is_match("aé\u{100}"));
        assert_eq!(
            merged(vec![('c', 'e'), ('a', 'b'), ('x', 'x'), ('d', 'g')]),
            [('a', 'g'), ('x', 'x')]
        );
    }

    #[test]
    fn pathological_patterns_stay_linear() {
        let text = "a".repeat(100_000);
        for pattern in ["(a*)*b", "(a|a)*c", "(a+)+$x", "(a|aa)*b", "^(a?){50}a{50}$x"] {
            let r = Regex::new(pattern, false).unwrap();
            assert!(!r.is_match(&text), "{pattern}");
        }
        assert!(Regex::new("(a*)*b", false).unwrap().is_match(&format!("{text}b")));
    }
}
