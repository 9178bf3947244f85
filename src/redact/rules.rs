//! Stage two of redaction: every rule but exact values (sensitive keys and headers, URL
//! passwords, private keys, token shapes), as one left-to-right state machine.
//!
//! Each character is looked at once. Keys (`password=`, `"token":`, `Authorization:`) are written
//! as they pass, and the machine remembers what it has just seen, so the value after them is
//! replaced however the text was split into pieces. Only a few rules must look ahead before they
//! can decide: token shapes (is this `sk-` followed by 20 more characters?), a private-key
//! header, a URL's `user:password@` and the first word of an `Authorization` value. Their
//! lookahead is bounded, and it is the only text a stream holds back.
//!
//! Two rules go further than Zero's, both for values Zero would have let through: an
//! assignment's quoted value may contain spaces (`PASSWORD="correct horse"`), and a sensitive
//! YAML key at the start of a line (`password: hunter2`) has its value replaced.

use super::keys::{self, is_auth_header, is_secret_header};
use super::secrets::{SECRET_STAND_IN, SECRET_STAND_IN_CHAR};
use super::REDACTED;

/// Identifiers longer than this are never keys (and are not collected further).
const IDENT_CAP: usize = 128;
/// Lookahead for `user:password@` after `scheme://`.
const AUTHORITY_CAP: usize = 512;
/// Lookahead for the scheme word after `Authorization:`.
const AUTH_WORD_CAP: usize = 64;
/// Longest JWT header or payload segment recognised by shape.
const JWT_SEGMENT_CAP: usize = 16 * 1024;
/// Longest label between `-----BEGIN ` and `-----`.
const PEM_LABEL_CAP: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Quote {
    Double,
    Single,
    /// `\"`, as in JSON that was itself put inside a JSON string.
    EscapedDouble,
}

/// Characters a token shape continues with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TokenClass {
    /// `[A-Za-z0-9_-]`
    Dashed,
    /// `[A-Za-z0-9_]`
    Word,
    /// `[A-Za-z0-9-]`
    Slack,
}

impl TokenClass {
    fn contains(self, b: u8) -> bool {
        match self {
            TokenClass::Dashed => b.is_ascii_alphanumeric() || b == b'_' || b == b'-',
            TokenClass::Word => b.is_ascii_alphanumeric() || b == b'_',
            TokenClass::Slack => b.is_ascii_alphanumeric() || b == b'-',
        }
    }
}

/// What a `:` after a key leads to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum AfterColon {
    Nothing,
    Authorization,
    RestOfLine,
    Yaml,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Normal,
    /// After `<sensitive key>=`: blanks, then a quoted or bare value.
    AssignStart,
    Quoted {
        quote: Quote,
        redacted: bool,
        escape: bool,
    },
    /// A bare value: up to whitespace, a quote or `&`.
    Unquoted,
    Colon {
        next: AfterColon,
        url: bool,
    },
    UrlSlash,
    /// Right after `scheme://`, where `user:password@` may follow.
    UrlAuthority,
    /// Blanks, then the rest of the line is the value.
    LineStart {
        quotes: bool,
    },
    Line,
    /// Blanks, then the scheme word (kept) or the credential itself.
    AuthStart,
    CredentialStart,
    Credential,
    /// After `"<sensitive key>":`, waiting for the value's opening quote.
    JsonValueStart(Quote),
    JsonValueBackslash,
    Token(TokenClass),
    /// Inside a private-key block, up to its END line.
    Pem,
}

impl Mode {
    /// The mode that `c` leaves this one for, or `None` when `c` belongs to this one.
    #[inline]
    fn left_for(self, c: char) -> Option<Mode> {
        let stays = match self {
            Mode::Normal | Mode::Pem | Mode::UrlAuthority => true,
            // `::` is a path separator, not a key's colon.
            Mode::Colon { .. } if c == ':' => return Some(Mode::Normal),
            Mode::Colon { url, .. } if c == '/' && url => true,
            Mode::Colon { next, .. } => {
                return Some(match next {
                    AfterColon::Nothing => Mode::Normal,
                    AfterColon::Authorization => Mode::AuthStart,
                    AfterColon::RestOfLine => Mode::LineStart { quotes: false },
                    AfterColon::Yaml => Mode::LineStart { quotes: true },
                })
            }
            Mode::UrlSlash => c == '/',
            // `==` and `=>` are operators, not assignments.
            Mode::AssignStart => {
                is_blank(c)
                    || c == '"'
                    || c == '\''
                    || (is_value_char(c) && !matches!(c, '=' | '>'))
            }
            Mode::Quoted { .. } | Mode::LineStart { .. } | Mode::Line | Mode::AuthStart => {
                !is_newline(c)
            }
            Mode::Unquoted => is_value_char(c),
            Mode::CredentialStart => is_blank(c) || !ends_credential(c),
            Mode::Credential => !ends_credential(c),
            Mode::JsonValueStart(quote) => {
                let opens = match quote {
                    Quote::Double => c == '"',
                    Quote::Single => c == '\'',
                    Quote::EscapedDouble => c == '\\',
                };
                is_blank(c) || opens
            }
            Mode::JsonValueBackslash => c == '"',
            // An exact secret glued to the token is part of it.
            Mode::Token(class) => {
                (c.is_ascii() && class.contains(c as u8)) || c == SECRET_STAND_IN_CHAR
            }
        };
        (!stays).then_some(Mode::Normal)
    }
}

/// What a lookahead rule decided at one position.
enum Hold {
    /// The rule does not apply here.
    Pass,
    /// More text is needed to decide.
    Need,
    /// The rule takes `len` bytes and writes them as `emit` says.
    Take { len: usize, emit: Emit, then: Mode },
}

enum Emit {
    Marker,
    Nothing,
    Verbatim,
    /// `user:` is kept, the password replaced, `@` kept; `colon` is the offset of the `:`.
    Userinfo {
        colon: usize,
    },
}

/// How far back a key is looked for before `=` or `:` (the key, blanks, and for YAML the
/// start of its line). The same in one piece and in a stream, so results cannot differ. The
/// look-back reads what was written, not what was read: a token already replaced is
/// `[REDACTED]` there, exactly as a second pass would see it, so redacting twice changes
/// nothing.
const LOOKBACK: usize = 256;

/// Held text up to this length is looked at again after every piece (see `worth_a_look`).
const ALWAYS_LOOK: usize = 32;

/// Pairs of bytes at which the fast path stops: `=`, `:` and `-` followed by anything, and the
/// first two letters of every token-shape prefix (`sk`, `gh`, `AK`, `ey`, ...). A bit per pair
/// `first << 8 | second` (8 KiB, so it stays in the first-level cache); built at compile time.
static STOPS: [u64; 1024] = {
    let mut table = [0u64; 1024];
    let mut second = 0;
    while second < 256 {
        let mut first = 0;
        while first < 3 {
            let key = ([b'=', b':', b'-'][first] as usize) << 8 | second;
            table[key >> 6] |= 1 << (key & 63);
            first += 1;
        }
        second += 1;
    }
    let pairs: [&[u8; 2]; 14] = [
        b"sk", b"gh", b"gi", b"gl", b"gs", b"AI", b"AK", b"AS", b"xo", b"xa", b"rk", b"np", b"hf",
        b"ey",
    ];
    let mut k = 0;
    while k < pairs.len() {
        let key = (pairs[k][0] as usize) << 8 | pairs[k][1] as usize;
        table[key >> 6] |= 1 << (key & 63);
        k += 1;
    }
    table
};

/// The rule machine, with the text it holds back when it is fed a stream.
#[derive(Clone, Debug)]
pub(crate) struct Scanner {
    /// Undecided text, waiting for more.
    held: String,
    /// The last `LOOKBACK` bytes written before this call.
    tail: Vec<u8>,
    /// Bytes written in all (to know whether a look-back reaches the start of the text).
    written: u64,
    /// The input byte before `held` (for word boundaries).
    last_byte: Option<u8>,
    mode: Mode,
    /// How long `held` was when the rules last looked at it.
    checked: usize,
}

impl Default for Scanner {
    fn default() -> Scanner {
        Scanner {
            held: String::new(),
            tail: Vec::new(),
            written: 0,
            last_byte: None,
            mode: Mode::Normal,
            checked: 0,
        }
    }
}

impl Scanner {
    /// Feeds a piece of a stream; appends to `out` everything that is decided.
    pub(crate) fn push(&mut self, piece: &str, out: &mut String) {
        if self.held.is_empty() {
            self.run(piece, false, out);
            return;
        }
        self.held.push_str(piece);
        if !self.worth_a_look(piece) {
            return;
        }
        let text = std::mem::take(&mut self.held);
        self.run(&text, false, out);
    }

    /// Whether the rules should look at the held text again now that `piece` has joined it.
    /// The rules decide from the start of what is held, so looking after every piece of a
    /// long token costs its length each time: quadratic. A long hold (past [`ALWAYS_LOOK`]) is
    /// looked at again only when a piece brings a byte that can end a token, or once it has
    /// grown by half, so the work stays linear. Looking later changes nothing but when
    /// the text is written: the rules give the same output however a text is cut.
    fn worth_a_look(&self, piece: &str) -> bool {
        let continues = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
        self.held.len() <= ALWAYS_LOOK
            || self.held.len() - self.checked >= self.checked / 2
            || !piece.bytes().all(|b| continues(&b))
    }

    /// Ends the stream: decides everything held, then starts afresh.
    pub(crate) fn finish(&mut self, out: &mut String) {
        let text = std::mem::take(&mut self.held);
        self.run(&text, true, out);
        *self = Scanner::default();
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut String) {
        let bytes = text.as_bytes();
        let out_start = out.len();
        let mut i = 0;
        while i < bytes.len() {
            let skip = match self.mode {
                Mode::Normal => plain_run(bytes, i, self.word_before(bytes, i), at_end),
                // Swallow everything up to the next `-`, which may start the END line.
                Mode::Pem => bytes[i..].iter().position(|&b| b == b'-').unwrap_or(bytes.len() - i),
                _ => 0,
            };
            // A run stops at an ASCII byte or at the end of the text: both are boundaries.
            if skip > 0 && text.is_char_boundary(i + skip) {
                if self.mode == Mode::Normal {
                    out.push_str(&text[i..i + skip]);
                }
                i += skip;
                continue;
            }
            let c = match text[i..].chars().next() {
                Some(c) => c,
                None => break,
            };
            self.settle(c);
            match self.lookahead(bytes, i, at_end) {
                Hold::Need => {
                    self.keep_tail(bytes, i, &out.as_bytes()[out_start..]);
                    self.held = text[i..].to_string();
                    self.checked = self.held.len();
                    return;
                }
                Hold::Take { len, emit, then } => {
                    let taken = &text[i..i + len];
                    match emit {
                        Emit::Marker => out.push_str(REDACTED),
                        Emit::Nothing => {}
                        Emit::Verbatim => out.push_str(taken),
                        Emit::Userinfo { colon } => {
                            out.push_str(&taken[..=colon]);
                            if colon + 2 < len {
                                out.push_str(REDACTED);
                            }
                            out.push('@');
                        }
                    }
                    self.mode = then;
                    i += len;
                }
                Hold::Pass => {
                    self.consume(c, bytes, i, out, out_start);
                    i += c.len_utf8();
                }
            }
        }
        self.keep_tail(bytes, bytes.len(), &out.as_bytes()[out_start..]);
    }

    /// Whether the input byte before position `i` is a word character.
    fn word_before(&self, bytes: &[u8], i: usize) -> bool {
        let prev = if i > 0 { bytes.get(i - 1).copied() } else { self.last_byte };
        prev.is_some_and(is_word_byte)
    }

    /// At the end of a call (or a hold at `upto`): remembers the last input byte consumed and
    /// the last `LOOKBACK` bytes written.
    fn keep_tail(&mut self, bytes: &[u8], upto: usize, written: &[u8]) {
        if upto > 0 {
            self.last_byte = Some(bytes[upto - 1]);
        }
        self.written += written.len() as u64;
        if written.len() >= LOOKBACK {
            self.tail.clear();
            self.tail.extend_from_slice(&written[written.len() - LOOKBACK..]);
        } else {
            self.tail.extend_from_slice(written);
            let excess = self.tail.len().saturating_sub(LOOKBACK);
            self.tail.drain(..excess);
        }
    }

    /// Leaves the modes that `c` ends or that only wait for a particular next character, so the
    /// lookahead rules and `consume` see the mode that really applies to `c`.
    #[inline]
    fn settle(&mut self, c: char) {
        while let Some(next) = self.mode.left_for(c) {
            self.mode = next;
        }
    }

    /// The rules that must look ahead before deciding.
    fn lookahead(&self, bytes: &[u8], i: usize, at_end: bool) -> Hold {
        let b = bytes[i];
        match self.mode {
            Mode::Normal => {
                if b == b'-' {
                    pem_begin(&bytes[i..], at_end)
                } else if is_shape_start(b) {
                    shape(&bytes[i..], at_end, self.word_before(bytes, i))
                } else {
                    Hold::Pass
                }
            }
            Mode::Pem if b == b'-' => pem_end(&bytes[i..], at_end),
            Mode::UrlAuthority => userinfo(&bytes[i..], at_end),
            Mode::AuthStart if !is_blank(b as char) => auth_word(&bytes[i..], at_end),
            _ => Hold::Pass,
        }
    }

    /// Writes (or swallows) one character in the current mode.
    fn consume(&mut self, c: char, bytes: &[u8], i: usize, out: &mut String, out_start: usize) {
        match self.mode {
            Mode::Normal => {
                if c == '=' || c == ':' {
                    self.mode = self.after_separator(c, bytes, i, &out.as_bytes()[out_start..]);
                }
                out.push(c);
            }
            Mode::UrlAuthority | Mode::AuthStart if !is_blank(c) => {
                // The lookahead found no `user:password@` (or nothing to take).
                self.mode = Mode::Normal;
                out.push(c);
            }
            Mode::Pem | Mode::Unquoted | Mode::Line | Mode::Credential | Mode::Token(_) => {}
            Mode::Colon { .. } => {
                out.push(c);
                self.mode = Mode::UrlSlash;
            }
            Mode::UrlSlash => {
                out.push(c);
                self.mode = Mode::UrlAuthority;
            }
            Mode::UrlAuthority | Mode::AuthStart => out.push(c),
            Mode::AssignStart => {
                if is_blank(c) {
                    out.push(c);
                } else if c == '"' || c == '\'' {
                    out.push(c);
                    self.mode = Mode::Quoted { quote: quote_of(c), redacted: false, escape: false };
                } else {
                    out.push_str(REDACTED);
                    self.mode = Mode::Unquoted;
                }
            }
            Mode::Quoted { quote, redacted, escape } => {
                self.quoted(c, quote, redacted, escape, out)
            }
            Mode::LineStart { quotes } => {
                if is_blank(c) {
                    out.push(c);
                } else if quotes && (c == '"' || c == '\'') {
                    out.push(c);
                    self.mode = Mode::Quoted { quote: quote_of(c), redacted: false, escape: false };
                } else {
                    out.push_str(REDACTED);
                    self.mode = Mode::Line;
                }
            }
            Mode::CredentialStart => {
                if is_blank(c) {
                    out.push(c);
                } else {
                    out.push_str(REDACTED);
                    self.mode = Mode::Credential;
                }
            }
            Mode::JsonValueStart(quote) => {
                out.push(c);
                if !is_blank(c) {
                    self.mode = if quote == Quote::EscapedDouble {
                        Mode::JsonValueBackslash
                    } else {
                        Mode::Quoted { quote, redacted: false, escape: false }
                    };
                }
            }
            Mode::JsonValueBackslash => {
                out.push(c);
                self.mode =
                    Mode::Quoted { quote: Quote::EscapedDouble, redacted: false, escape: false };
            }
        }
    }

    fn quoted(&mut self, c: char, quote: Quote, redacted: bool, escape: bool, out: &mut String) {
        let mut redacted = redacted;
        match quote {
            Quote::Double | Quote::Single => {
                let close = if quote == Quote::Double { '"' } else { '\'' };
                if !escape && c == close {
                    out.push(c);
                    self.mode = Mode::Normal;
                    return;
                }
                if !redacted {
                    out.push_str(REDACTED);
                    redacted = true;
                }
                self.mode = Mode::Quoted { quote, redacted, escape: !escape && c == '\\' };
            }
            Quote::EscapedDouble => {
                if escape && c == '"' {
                    out.push_str("\\\"");
                    self.mode = Mode::Normal;
                    return;
                }
                if !redacted {
                    out.push_str(REDACTED);
                    redacted = true;
                }
                self.mode = Mode::Quoted { quote, redacted, escape: c == '\\' };
            }
        }
    }

    /// At `=` or `:` (input position `i`, after `written` was written in this call): what the
    /// text written before it makes of the value after it.
    fn after_separator(&self, c: char, bytes: &[u8], i: usize, written: &[u8]) -> Mode {
        // `::`, `==` and `=>` never start a value; the full path would reach Normal at the next
        // character anyway (see `settle`), so deciding it here changes nothing.
        if let Some(&next) = bytes.get(i + 1) {
            if (c == ':' && next == b':') || (c == '=' && matches!(next, b'=' | b'>')) {
                return Mode::Normal;
            }
        }
        // The window of bytes written before the separator, the tail first when this call has
        // written little.
        let from_call = written.len().min(LOOKBACK);
        let joined;
        let window: &[u8] = if from_call == LOOKBACK || self.tail.is_empty() {
            &written[written.len() - from_call..]
        } else {
            let need = (LOOKBACK - from_call).min(self.tail.len());
            joined = [&self.tail[self.tail.len() - need..], written].concat();
            &joined
        };
        let reaches_start = self.written + written.len() as u64 == window.len() as u64;
        if c == ':' {
            if let Some((quote, key)) = quoted_key_before(window) {
                if keys::is_sensitive_bytes(key) {
                    return Mode::JsonValueStart(quote);
                }
                return Mode::Normal;
            }
        }
        let Some(ident) = ident_before(window, reaches_start) else { return Mode::Normal };
        if c == '=' {
            // A name written as an environment variable (`SENTRY_DSN=`, `DB_PASS=`) follows
            // the wider rules of variable names.
            let env_secret = || {
                keys::is_env_shaped(ident.name)
                    && keys::is_secret_env_name(std::str::from_utf8(ident.name).unwrap_or(""))
            };
            return if keys::is_sensitive_bytes(ident.name) || env_secret() {
                Mode::AssignStart
            } else {
                Mode::Normal
            };
        }
        // Identifier bytes are ASCII.
        let raw = std::str::from_utf8(ident.name).unwrap_or_default();
        let next = if is_auth_header(raw) {
            AfterColon::Authorization
        } else if is_secret_header(raw) {
            AfterColon::RestOfLine
        } else if ident.line_start && keys::is_sensitive_bytes(ident.name) {
            AfterColon::Yaml
        } else {
            AfterColon::Nothing
        };
        // A scheme matters only before `//`; when the next byte is known not to be `/`, the
        // answer cannot change what follows.
        let slash_may_follow = bytes.get(i + 1).is_none_or(|&b| b == b'/');
        let url = !ident.spaced && slash_may_follow && is_scheme(raw);
        if next == AfterColon::Nothing && !url {
            return Mode::Normal;
        }
        Mode::Colon { next, url }
    }
}

/// The bytes of a plain run starting at `i`: everything up to a byte that may start a rule.
/// One table lookup per byte; what it flags is then checked properly (a token prefix counts
/// only at a word start, a dash only when it may begin `-----BEGIN `).
fn plain_run(bytes: &[u8], i: usize, word_before: bool, at_end: bool) -> usize {
    let Some(&first) = bytes.get(i) else { return 0 };
    let last = bytes.len() - 1;
    let mut j = i;
    let mut b = first;
    while j < last {
        let next = bytes[j + 1];
        let key = (b as usize) << 8 | next as usize;
        if STOPS[key >> 6] & (1 << (key & 63)) != 0 {
            let stop = match b {
                b'=' | b':' => true,
                b'-' => could_be_pem(&bytes[j..], at_end),
                // A token shape may start anywhere, but inside a word only its head counts.
                _ => !word_at(bytes, j, word_before) || could_be_shape(&bytes[j..], at_end),
            };
            if stop {
                return j - i;
            }
        }
        b = next;
        j += 1;
    }
    // The last byte may begin something together with what comes next.
    let separator = matches!(b, b'=' | b':' | b'-');
    if separator || (!at_end && is_shape_start(b)) {
        return j - i;
    }
    j + 1 - i
}

/// The first three bytes of every token shape.
const SHAPE_HEADS: &[&[u8; 3]] = &[
    b"sk-", b"sk_", b"ghp", b"gho", b"ghu", b"ghs", b"ghr", b"git", b"glp", b"gsk", b"AIz", b"AKI",
    b"ASI", b"xox", b"xai", b"rk_", b"npm", b"hf_", b"eyJ",
];

/// Whether a token shape may begin at the start of `s` (or does, once more text arrives).
fn could_be_shape(s: &[u8], at_end: bool) -> bool {
    if s.len() >= 3 {
        SHAPE_HEADS.iter().any(|head| s[..3] == head[..])
    } else {
        !at_end && SHAPE_HEADS.iter().any(|head| head.starts_with(s))
    }
}

/// Whether a token's body looks generated rather than written: upper and lower case letters,
/// or upper case and digits. Required of a shape that starts inside a word (after `\n`
/// written as text, an ANSI colour, `%20`, `_`), where a word like `task-` could otherwise
/// begin a match; a real key's random body has both almost surely.
fn looks_random(body: &[u8]) -> bool {
    let upper = body.iter().any(u8::is_ascii_uppercase);
    let lower = body.iter().any(u8::is_ascii_lowercase);
    let digit = body.iter().any(u8::is_ascii_digit);
    upper && (lower || digit)
}

/// A shape inside a word is given up after this many body bytes that do not look random, so
/// a long written word cannot hold a stream back.
const IN_WORD_BODY_CAP: usize = 512;

/// Whether the byte before `j` is a word character (`word_before` at the start of the text).
fn word_at(bytes: &[u8], j: usize, word_before: bool) -> bool {
    if j == 0 {
        word_before
    } else {
        is_word_byte(bytes[j - 1])
    }
}

fn could_be_pem(s: &[u8], at_end: bool) -> bool {
    // Most dashes are alone: decide on the second byte before comparing more.
    if s.len() > 1 && s[1] != b'-' {
        return false;
    }
    let marker = b"-----BEGIN ";
    let n = s.len().min(marker.len());
    s[..n] == marker[..n] && (n == marker.len() || !at_end)
}

/// An identifier found before a separator.
struct IdentBefore<'a> {
    name: &'a [u8],
    /// Blanks stand between it and the separator.
    spaced: bool,
    /// Only blanks (and a YAML list dash) precede it on its line.
    line_start: bool,
}

/// The identifier (`[A-Za-z_][A-Za-z0-9_.-]*` at a word start) ending the window, allowing
/// blanks between it and the separator.
fn ident_before(window: &[u8], reaches_start: bool) -> Option<IdentBefore<'_>> {
    let mut end = window.len();
    while end > 0 && matches!(window[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    let spaced = end != window.len();
    let mut start = end;
    while start > 0 && is_ident_byte(window[start - 1]) {
        start -= 1;
    }
    if start == end || end - start > IDENT_CAP || (start == 0 && !reaches_start) {
        return None;
    }
    // It begins at the first letter or `_` that starts a word.
    let first = (start..end).find(|&k| {
        (window[k].is_ascii_alphabetic() || window[k] == b'_')
            && (k == start || !is_word_byte(window[k - 1]))
    })?;
    let mut k = start;
    while k > 0 && matches!(window[k - 1], b' ' | b'\t' | b'-') {
        k -= 1;
    }
    let line_start = line_begins_at(window, k, reaches_start);
    Some(IdentBefore {
        name: &window[first..end],
        spaced,
        line_start: line_start && first == start,
    })
}

/// Whether a line's content begins at `k`: at the start of a line, or after the prefixes the
/// tools put before file lines (read_file's `  12 | `, grep's `path:12: `), so a YAML secret
/// read through a tool is still at the start of its line.
fn line_begins_at(window: &[u8], k: usize, reaches_start: bool) -> bool {
    let at_line_start =
        |j: usize| if j == 0 { reaches_start } else { matches!(window[j - 1], b'\n' | b'\r') };
    if at_line_start(k) {
        return true;
    }
    let digits_before = |mut j: usize| {
        let end = j;
        while j > 0 && window[j - 1].is_ascii_digit() {
            j -= 1;
        }
        (j < end).then_some(j)
    };
    match window[k - 1] {
        // read_file: blanks, digits, blanks, `|`.
        b'|' => {
            let mut j = k - 1;
            while j > 0 && window[j - 1] == b' ' {
                j -= 1;
            }
            let Some(mut j) = digits_before(j) else { return false };
            while j > 0 && window[j - 1] == b' ' {
                j -= 1;
            }
            at_line_start(j)
        }
        // grep: a path without blanks, `:`, digits, `:`.
        b':' => {
            let Some(j) = digits_before(k - 1) else { return false };
            if j == 0 || window[j - 1] != b':' {
                return false;
            }
            let mut j = j - 1;
            while j > 0 && !window[j - 1].is_ascii_whitespace() {
                j -= 1;
            }
            j < k - 1 && at_line_start(j)
        }
        _ => false,
    }
}

/// A quoted key (`"key"`, `'key'` or `\"key\"`) ending the window, allowing blanks after it.
fn quoted_key_before(window: &[u8]) -> Option<(Quote, &[u8])> {
    let mut end = window.len();
    while end > 0 && matches!(window[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    let close = *window.get(end.checked_sub(1)?)?;
    if close != b'"' && close != b'\'' {
        return None;
    }
    let escaped_close = close == b'"' && end >= 2 && window[end - 2] == b'\\';
    let body_end = if escaped_close { end - 2 } else { end - 1 };
    let mut k = body_end;
    while k > 0 && body_end - k <= IDENT_CAP {
        let b = window[k - 1];
        if b == b'\n' || b == b'\r' {
            return None;
        }
        if escaped_close {
            if b == b'"' && k >= 2 && window[k - 2] == b'\\' {
                return Some((Quote::EscapedDouble, &window[k..body_end]));
            }
        } else if b == close {
            // A quote is escaped by an odd number of backslashes before it.
            let slashes = window[..k - 1].iter().rev().take_while(|&&b| b == b'\\').count();
            if slashes % 2 == 0 {
                let quote = if close == b'"' { Quote::Double } else { Quote::Single };
                return Some((quote, &window[k..body_end]));
            }
        }
        k -= 1;
    }
    None
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

fn quote_of(c: char) -> Quote {
    if c == '"' {
        Quote::Double
    } else {
        Quote::Single
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn is_newline(c: char) -> bool {
    c == '\n' || c == '\r'
}

/// A bare assignment value continues with anything but whitespace, quotes and `&`.
fn is_value_char(c: char) -> bool {
    !(c.is_whitespace() || matches!(c, '"' | '\'' | '&'))
}

fn ends_credential(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | ';' | '"' | '\'')
}

/// `[A-Za-z][A-Za-z0-9+.-]*`, the shape of a URL scheme.
fn is_scheme(raw: &str) -> bool {
    let mut chars = raw.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}

/// Schemes kept in front of an `Authorization` credential.
fn is_auth_scheme(word: &[u8]) -> bool {
    const SCHEMES: &[&str] =
        &["bearer", "basic", "token", "digest", "negotiate", "ntlm", "dpop", "aws4-hmac-sha256"];
    SCHEMES.iter().any(|s| s.as_bytes().eq_ignore_ascii_case(word))
}

/// A token shape: a literal prefix, then at least `min` characters of a class.
struct Shape {
    prefix: &'static [u8],
    class: TokenClass,
    min: usize,
}

const SHAPES: &[Shape] = &[
    // OpenAI (`sk-`, `sk-proj-`) and Anthropic (`sk-ant-api03-`) keys.
    Shape { prefix: b"sk-", class: TokenClass::Dashed, min: 20 },
    Shape { prefix: b"github_pat_", class: TokenClass::Word, min: 20 },
    Shape { prefix: b"ghp_", class: TokenClass::Word, min: 20 },
    Shape { prefix: b"gho_", class: TokenClass::Word, min: 20 },
    Shape { prefix: b"ghu_", class: TokenClass::Word, min: 20 },
    Shape { prefix: b"ghs_", class: TokenClass::Word, min: 20 },
    Shape { prefix: b"ghr_", class: TokenClass::Word, min: 20 },
    Shape { prefix: b"glpat-", class: TokenClass::Dashed, min: 20 },
    Shape { prefix: b"AIza", class: TokenClass::Dashed, min: 20 },
    Shape { prefix: b"xoxb-", class: TokenClass::Slack, min: 20 },
    Shape { prefix: b"xoxa-", class: TokenClass::Slack, min: 20 },
    Shape { prefix: b"xoxp-", class: TokenClass::Slack, min: 20 },
    Shape { prefix: b"xoxr-", class: TokenClass::Slack, min: 20 },
    Shape { prefix: b"xoxs-", class: TokenClass::Slack, min: 20 },
    // Beyond Zero's shapes: Stripe, npm, Hugging Face, Groq and xAI keys.
    Shape { prefix: b"sk_live_", class: TokenClass::Word, min: 16 },
    Shape { prefix: b"sk_test_", class: TokenClass::Word, min: 16 },
    Shape { prefix: b"rk_live_", class: TokenClass::Word, min: 16 },
    Shape { prefix: b"rk_test_", class: TokenClass::Word, min: 16 },
    Shape { prefix: b"npm_", class: TokenClass::Word, min: 30 },
    Shape { prefix: b"hf_", class: TokenClass::Word, min: 30 },
    Shape { prefix: b"gsk_", class: TokenClass::Word, min: 30 },
    Shape { prefix: b"xai-", class: TokenClass::Dashed, min: 30 },
];

fn is_shape_start(b: u8) -> bool {
    matches!(b, b's' | b'g' | b'A' | b'x' | b'r' | b'n' | b'h' | b'e')
}

/// Token shapes, wherever they start: at a word start by their shape
/// alone, inside a word (`in_word`) only with a body that looks random.
fn shape(s: &[u8], at_end: bool, in_word: bool) -> Hold {
    let mut need = false;
    for shape in SHAPES.iter().filter(|shape| shape.prefix[0] == s[0]) {
        match prefixed_run(s, shape.prefix, shape.class, shape.min, at_end, in_word) {
            Hold::Pass => {}
            Hold::Need => need = true,
            take => return take,
        }
    }
    if s[0] == b'A' {
        for prefix in [&b"AKIA"[..], &b"ASIA"[..]] {
            match aws_key_id(s, prefix, at_end, in_word) {
                Hold::Pass => {}
                Hold::Need => need = true,
                take => return take,
            }
        }
    }
    if s[0] == b'e' {
        match jwt(s, at_end) {
            Hold::Pass => {}
            Hold::Need => need = true,
            take => return take,
        }
    }
    if need {
        Hold::Need
    } else {
        Hold::Pass
    }
}

/// Decides a literal prefix: `Some(hold)` when the text is too short or differs.
fn literal(s: &[u8], prefix: &[u8], at_end: bool) -> Option<Hold> {
    if s.len() < prefix.len() {
        return Some(if !at_end && prefix.starts_with(s) { Hold::Need } else { Hold::Pass });
    }
    (!s.starts_with(prefix)).then_some(Hold::Pass)
}

fn prefixed_run(
    s: &[u8],
    prefix: &[u8],
    class: TokenClass,
    min: usize,
    at_end: bool,
    in_word: bool,
) -> Hold {
    if let Some(hold) = literal(s, prefix, at_end) {
        return hold;
    }
    let body = &s[prefix.len()..];
    let (n, chars, open) = token_body(body, class, at_end);
    if in_word && chars >= min && !looks_random(&body[..n]) {
        let open = open && n < IN_WORD_BODY_CAP;
        return if open { Hold::Need } else { Hold::Pass };
    }
    if chars >= min {
        Hold::Take { len: prefix.len() + n, emit: Emit::Marker, then: Mode::Token(class) }
    } else if open {
        Hold::Need
    } else {
        Hold::Pass
    }
}

/// The length of a token's body in bytes and in characters: bytes of its class, and the
/// stand-ins of exact secrets stage one replaced inside it (a `--redact-env` value or a secret
/// variable's value that is part of a key: the key is then redacted whole, so no part of it is
/// written). Also whether the body runs to the end of the text and could go on (`open`).
fn token_body(body: &[u8], class: TokenClass, at_end: bool) -> (usize, usize, bool) {
    let stand_in = SECRET_STAND_IN.as_bytes();
    let (mut bytes, mut chars) = (0, 0);
    loop {
        let run = body[bytes..].iter().take_while(|&&b| class.contains(b)).count();
        bytes += run;
        chars += run;
        let rest = &body[bytes..];
        if rest.starts_with(stand_in) {
            bytes += stand_in.len();
            chars += 1;
            continue;
        }
        let open = !at_end && (rest.is_empty() || stand_in.starts_with(rest));
        return (bytes, chars, open);
    }
}

/// `AKIA`/`ASIA` and exactly 16 of `[A-Z0-9]`, ending at a word boundary (inside a word, with
/// a digit among them).
fn aws_key_id(s: &[u8], prefix: &[u8], at_end: bool, in_word: bool) -> Hold {
    if let Some(hold) = literal(s, prefix, at_end) {
        return hold;
    }
    let body = &s[prefix.len()..];
    let n = body.iter().take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit()).count();
    // A marker right after the id stands for the word that was there (a key glued to the id,
    // redacted earlier): the id did not end at a word boundary then, so it does not now, and
    // redacting twice changes nothing.
    let after = &body[n..];
    if n == 16 && after.first() == Some(&b'[') {
        let marker = REDACTED.as_bytes();
        if after.starts_with(marker) {
            return Hold::Pass;
        }
        if !at_end && marker.starts_with(after) {
            return Hold::Need;
        }
    }
    match (n.cmp(&16), body.get(n)) {
        (std::cmp::Ordering::Less, None) if !at_end => Hold::Need,
        (std::cmp::Ordering::Equal, None) if !at_end => Hold::Need,
        (std::cmp::Ordering::Equal, next)
            if next.is_none_or(|&b| !is_word_byte(b))
                && (!in_word || body[..16].iter().any(u8::is_ascii_digit)) =>
        {
            Hold::Take { len: prefix.len() + 16, emit: Emit::Marker, then: Mode::Normal }
        }
        _ => Hold::Pass,
    }
}

/// `eyJ` and three dot-separated segments of at least 8 characters.
fn jwt(s: &[u8], at_end: bool) -> Hold {
    if let Some(hold) = literal(s, b"eyJ", at_end) {
        return hold;
    }
    let mut at = 3;
    for segment in 0..3 {
        let n = s[at..]
            .iter()
            .take(JWT_SEGMENT_CAP + 1)
            .take_while(|&&b| TokenClass::Dashed.contains(b))
            .count();
        if n > JWT_SEGMENT_CAP {
            return Hold::Pass;
        }
        if at + n == s.len() && !at_end && (segment < 2 || n < 8) {
            return Hold::Need;
        }
        if n < 8 {
            return Hold::Pass;
        }
        at += n;
        if segment < 2 {
            match s.get(at) {
                Some(b'.') => at += 1,
                None if !at_end => return Hold::Need,
                _ => return Hold::Pass,
            }
        }
    }
    Hold::Take { len: at, emit: Emit::Marker, then: Mode::Token(TokenClass::Dashed) }
}

/// Reads `-----<word> <LABEL>PRIVATE KEY-----`; the length when it is there.
fn pem_marker(s: &[u8], word: &[u8], at_end: bool) -> Result<usize, Hold> {
    if let Some(hold) = literal(s, word, at_end) {
        return Err(hold);
    }
    let label_start = word.len();
    let n = s[label_start..]
        .iter()
        .take(PEM_LABEL_CAP + 1)
        .take_while(|b| b.is_ascii_uppercase() || **b == b' ')
        .count();
    if n > PEM_LABEL_CAP {
        return Err(Hold::Pass);
    }
    let after = label_start + n;
    if after == s.len() {
        return Err(if at_end { Hold::Pass } else { Hold::Need });
    }
    if !s[label_start..after].ends_with(b"PRIVATE KEY") {
        return Err(Hold::Pass);
    }
    match literal(&s[after..], b"-----", at_end) {
        Some(hold) => Err(hold),
        None => Ok(after + 5),
    }
}

fn pem_begin(s: &[u8], at_end: bool) -> Hold {
    match pem_marker(s, b"-----BEGIN ", at_end) {
        Ok(len) => Hold::Take { len, emit: Emit::Marker, then: Mode::Pem },
        Err(hold) => hold,
    }
}

fn pem_end(s: &[u8], at_end: bool) -> Hold {
    match pem_marker(s, b"-----END ", at_end) {
        Ok(len) => Hold::Take { len, emit: Emit::Nothing, then: Mode::Normal },
        Err(hold) => hold,
    }
}

/// `user:password@` right after `scheme://`.
fn userinfo(s: &[u8], at_end: bool) -> Hold {
    let mut last_at = None;
    let mut end = 0;
    while end < s.len() && end < AUTHORITY_CAP {
        match s[end] {
            b'@' => last_at = Some(end),
            b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' => break,
            b if b.is_ascii_whitespace() => break,
            _ => {}
        }
        end += 1;
    }
    if end == s.len() && !at_end && end < AUTHORITY_CAP {
        return Hold::Need;
    }
    let Some(at) = last_at else { return Hold::Pass };
    match s[..at].iter().position(|&b| b == b':') {
        Some(colon) => {
            Hold::Take { len: at + 1, emit: Emit::Userinfo { colon }, then: Mode::Normal }
        }
        None => Hold::Pass,
    }
}

/// The first word of an `Authorization` value: a scheme to keep, or the credential itself.
fn auth_word(s: &[u8], at_end: bool) -> Hold {
    let n = s
        .iter()
        .take(AUTH_WORD_CAP + 1)
        .take_while(|&&b| !(b.is_ascii_whitespace() || matches!(b, b',' | b';' | b'"' | b'\'')))
        .count();
    if n == 0 {
        return Hold::Pass;
    }
    if n == s.len() && !at_end && n <= AUTH_WORD_CAP {
        return Hold::Need;
    }
    // A multi-byte character may sit at the cap: stop before it.
    let mut n = n.min(AUTH_WORD_CAP);
    while n < s.len() && (s[n] & 0xC0) == 0x80 {
        n -= 1;
    }
    if n == 0 {
        return Hold::Pass;
    }
    if is_auth_scheme(&s[..n]) {
        Hold::Take { len: n, emit: Emit::Verbatim, then: Mode::CredentialStart }
    } else {
        Hold::Take { len: n, emit: Emit::Marker, then: Mode::Credential }
    }
}
