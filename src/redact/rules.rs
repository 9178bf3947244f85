//! Stage two of redaction: the rules of SPEC B 7.2 (2 to 9), as one left-to-right state machine.
//!
//! Each character is looked at once. Keys (`password=`, `"token":`, `Authorization:`) are written
//! as they pass, and the machine remembers what it has just seen, so the value after them is
//! replaced however the text was split into pieces. Only a few rules must look ahead before they
//! can decide: token shapes (is this `sk-` followed by 20 more characters?), a private-key
//! header, a URL's `user:password@` and the first word of an `Authorization` value. Their
//! lookahead is bounded, and it is the only text a stream holds back.
//!
//! Two rules go further than the reference, both for values it would have let through: an
//! assignment's quoted value may contain spaces (`PASSWORD="correct horse"`), and a sensitive
//! YAML key at the start of a line (`password: hunter2`) has its value replaced.

use super::keys::{self, is_auth_header, is_secret_header, is_sensitive_normalized};
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

/// The identifier being read, or the one that just ended (blanks may follow it before `=`).
#[derive(Clone, Debug, Default)]
struct Ident {
    active: bool,
    ended: bool,
    spaced: bool,
    line_start: bool,
    too_long: bool,
    raw: String,
}

impl Ident {
    fn normalized(&self) -> Option<String> {
        (!self.too_long).then(|| keys::normalize(&self.raw))
    }
}

/// A quoted string that may turn out to be a key: `"password"` followed by `:`.
#[derive(Clone, Debug, Default)]
struct QuotedKey {
    open: bool,
    escape: bool,
    too_long: bool,
    raw: String,
    /// A sensitive key closed; a `:` (after blanks) starts its value.
    closed_sensitive: bool,
}

impl QuotedKey {
    fn push(&mut self, c: char) {
        if self.raw.len() < IDENT_CAP {
            self.raw.push(c);
        } else {
            self.too_long = true;
        }
    }

    fn close(&mut self) {
        self.closed_sensitive =
            !self.too_long && is_sensitive_normalized(&keys::normalize(&self.raw));
        self.open = false;
        self.escape = false;
        self.too_long = false;
        self.raw.clear();
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

/// A run of bytes the fast path handled.
enum Run {
    Copy(usize),
    Swallow(usize),
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

/// The rule machine, with the text it holds back when it is fed a stream.
#[derive(Clone, Debug)]
pub(crate) struct Scanner {
    held: String,
    prev: char,
    line_start: bool,
    mode: Mode,
    ident: Ident,
    double: QuotedKey,
    single: QuotedKey,
    escaped: QuotedKey,
}

impl Default for Scanner {
    fn default() -> Scanner {
        Scanner {
            held: String::new(),
            prev: '\n',
            line_start: true,
            mode: Mode::Normal,
            ident: Ident::default(),
            double: QuotedKey::default(),
            single: QuotedKey::default(),
            escaped: QuotedKey::default(),
        }
    }
}

impl Scanner {
    /// Feeds a piece of a stream; appends to `out` everything that is decided.
    pub(crate) fn push(&mut self, piece: &str, out: &mut String) {
        if self.held.is_empty() {
            self.run(piece, false, out);
        } else {
            let mut text = std::mem::take(&mut self.held);
            text.push_str(piece);
            self.run(&text, false, out);
        }
    }

    /// Ends the stream: decides everything held, then starts afresh.
    pub(crate) fn finish(&mut self, out: &mut String) {
        let text = std::mem::take(&mut self.held);
        self.run(&text, true, out);
        *self = Scanner::default();
    }

    fn run(&mut self, text: &str, at_end: bool, out: &mut String) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match self.plain_run(text, i) {
                Some(Run::Copy(n)) => {
                    out.push_str(&text[i..i + n]);
                    i += n;
                    continue;
                }
                Some(Run::Swallow(n)) => {
                    i += n;
                    continue;
                }
                None => {}
            }
            let c = match text[i..].chars().next() {
                Some(c) => c,
                None => break,
            };
            self.settle(c);
            match self.lookahead(bytes, i, at_end) {
                Hold::Need => {
                    self.held = text[i..].to_string();
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
                    for c in taken.chars() {
                        self.after_char(c);
                    }
                    self.reset_trackers();
                    self.mode = then;
                    i += len;
                }
                Hold::Pass => {
                    self.consume(c, out);
                    self.after_char(c);
                    i += c.len_utf8();
                }
            }
        }
    }

    /// The fast path for ordinary text: a run starting at `i` that changes nothing but `prev`
    /// (and the current word), handled in one go. `None` when the byte at `i` needs the full
    /// machine.
    fn plain_run(&mut self, text: &str, i: usize) -> Option<Run> {
        let rest = &text.as_bytes()[i..];
        match self.mode {
            Mode::Normal => {}
            Mode::Pem => {
                // Swallow everything up to the next `-`, which may start the END line. Every
                // byte up to an ASCII `-` ends a character, so the run ends on a boundary.
                let n = rest.iter().position(|&b| b == b'-').unwrap_or(rest.len());
                if n == 0 || !text.is_char_boundary(i + n) {
                    return None;
                }
                self.prev = ' ';
                self.line_start = false;
                return Some(Run::Swallow(n));
            }
            _ => return None,
        }
        if self.trackers_open() || self.ident.ended {
            return None;
        }
        if self.ident.active {
            // Inside an identifier: the rest of its word goes in one go.
            let n = rest.iter().position(|&b| !is_word_byte(b)).unwrap_or(rest.len());
            if n == 0 {
                return None;
            }
            if self.ident.raw.len() + n <= IDENT_CAP {
                // Word bytes are ASCII.
                self.ident.raw.extend(rest[..n].iter().map(|&b| b as char));
            } else {
                self.ident.too_long = true;
            }
            self.prev = rest[n - 1] as char;
            self.line_start = false;
            return Some(Run::Copy(n));
        }
        let mut n = 0;
        let mut prev_word = is_word(self.prev);
        for &b in rest {
            let plain = match b {
                b'"' | b'\\' | b'\'' | b'-' | b'\n' | b'\r' => false,
                b'A'..=b'Z' | b'a'..=b'z' | b'_' => prev_word,
                _ => true,
            };
            if !plain {
                break;
            }
            prev_word = is_word_byte(b);
            n += 1;
        }
        // The run stops at an ASCII byte or at the end of the text: both are boundaries.
        if n == 0 || !text.is_char_boundary(i + n) {
            return None;
        }
        let last = rest[n - 1];
        self.prev = if last < 0x80 { last as char } else { '\u{80}' };
        if self.line_start {
            self.line_start = rest[..n].iter().all(|&b| b == b' ' || b == b'\t');
        }
        Some(Run::Copy(n))
    }

    fn trackers_open(&self) -> bool {
        self.double.open
            || self.single.open
            || self.escaped.open
            || self.double.closed_sensitive
            || self.single.closed_sensitive
            || self.escaped.closed_sensitive
    }

    fn reset_trackers(&mut self) {
        self.ident = Ident::default();
        self.double = QuotedKey::default();
        self.single = QuotedKey::default();
        self.escaped = QuotedKey::default();
    }

    /// Leaves the modes that `c` ends or that only wait for a particular next character, so the
    /// lookahead rules and `consume` see the mode that really applies to `c`.
    fn settle(&mut self, c: char) {
        loop {
            let next = match self.mode {
                Mode::Normal | Mode::Pem | Mode::UrlAuthority => return,
                Mode::Colon { next, url } => {
                    if c == '/' && url {
                        return;
                    }
                    match next {
                        AfterColon::Nothing => Mode::Normal,
                        AfterColon::Authorization => Mode::AuthStart,
                        AfterColon::RestOfLine => Mode::LineStart { quotes: false },
                        AfterColon::Yaml => Mode::LineStart { quotes: true },
                    }
                }
                Mode::UrlSlash => {
                    if c == '/' {
                        return;
                    }
                    Mode::Normal
                }
                Mode::AssignStart => {
                    if is_blank(c) || c == '"' || c == '\'' || (is_value_char(c) && c != '=') {
                        return;
                    }
                    Mode::Normal
                }
                Mode::Quoted { .. } | Mode::LineStart { .. } | Mode::Line | Mode::AuthStart => {
                    if !is_newline(c) {
                        return;
                    }
                    Mode::Normal
                }
                Mode::Unquoted => {
                    if is_value_char(c) {
                        return;
                    }
                    Mode::Normal
                }
                Mode::CredentialStart => {
                    if is_blank(c) || !ends_credential(c) {
                        return;
                    }
                    Mode::Normal
                }
                Mode::Credential => {
                    if !ends_credential(c) {
                        return;
                    }
                    Mode::Normal
                }
                Mode::JsonValueStart(quote) => {
                    let opens = match quote {
                        Quote::Double => c == '"',
                        Quote::Single => c == '\'',
                        Quote::EscapedDouble => c == '\\',
                    };
                    if is_blank(c) || opens {
                        return;
                    }
                    Mode::Normal
                }
                Mode::JsonValueBackslash => {
                    if c == '"' {
                        return;
                    }
                    Mode::Normal
                }
                Mode::Token(class) => {
                    if c.is_ascii() && class.contains(c as u8) {
                        return;
                    }
                    Mode::Normal
                }
            };
            if next == Mode::Normal {
                self.reset_trackers();
            }
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
                } else if !is_word(self.prev) && is_shape_start(b) {
                    shape(&bytes[i..], at_end)
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
    fn consume(&mut self, c: char, out: &mut String) {
        match self.mode {
            Mode::Normal => {
                out.push(c);
                self.observe(c);
            }
            Mode::UrlAuthority | Mode::AuthStart if !is_blank(c) => {
                // The lookahead found no `user:password@` (or nothing to take).
                self.mode = Mode::Normal;
                out.push(c);
                self.observe(c);
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

    /// Follows keys in Normal mode: identifiers before `=` or `:`, and quoted keys before `:`.
    fn observe(&mut self, c: char) {
        self.observe_ident(c);
        if self.mode != Mode::Normal {
            return;
        }
        self.observe_quoted(c);
    }

    fn observe_ident(&mut self, c: char) {
        let id = &mut self.ident;
        if id.active {
            if is_ident_char(c) {
                if id.raw.len() < IDENT_CAP {
                    id.raw.push(c);
                } else {
                    id.too_long = true;
                }
                return;
            }
            id.active = false;
            id.ended = true;
            id.spaced = false;
        }
        if id.ended {
            match c {
                ' ' | '\t' => {
                    id.spaced = true;
                    return;
                }
                '=' => {
                    let sensitive = id.normalized().is_some_and(|k| is_sensitive_normalized(&k));
                    self.ident = Ident::default();
                    if sensitive {
                        self.enter(Mode::AssignStart);
                    }
                    return;
                }
                ':' => {
                    let key = id.normalized().unwrap_or_default();
                    let next = if is_auth_header(&key) {
                        AfterColon::Authorization
                    } else if is_secret_header(&key) {
                        AfterColon::RestOfLine
                    } else if id.line_start && is_sensitive_normalized(&key) {
                        AfterColon::Yaml
                    } else {
                        AfterColon::Nothing
                    };
                    let url = !id.spaced && !id.too_long && is_scheme(&id.raw);
                    self.ident = Ident::default();
                    if next != AfterColon::Nothing || url {
                        self.enter(Mode::Colon { next, url });
                    }
                    return;
                }
                _ => self.ident = Ident::default(),
            }
        }
        if (c.is_ascii_alphabetic() || c == '_') && !is_word(self.prev) {
            self.ident = Ident {
                active: true,
                ended: false,
                spaced: false,
                line_start: self.line_start,
                too_long: false,
                raw: c.to_string(),
            };
        }
    }

    fn observe_quoted(&mut self, c: char) {
        let escaped_quote = c == '"' && self.prev == '\\';
        let trackers: [(&mut QuotedKey, Quote); 3] = [
            (&mut self.double, Quote::Double),
            (&mut self.single, Quote::Single),
            (&mut self.escaped, Quote::EscapedDouble),
        ];
        let mut value: Option<Quote> = None;
        for (key, quote) in trackers {
            if is_newline(c) {
                *key = QuotedKey::default();
                continue;
            }
            let is_quote = match quote {
                Quote::Double => c == '"' && !key.escape,
                Quote::Single => c == '\'' && !key.escape,
                Quote::EscapedDouble => escaped_quote,
            };
            if key.closed_sensitive {
                if is_blank(c) {
                    continue;
                }
                key.closed_sensitive = false;
                if c == ':' {
                    value = value.or(Some(quote));
                    continue;
                }
            }
            if key.open {
                if is_quote {
                    key.close();
                    if !key.closed_sensitive {
                        // Not a key: the same quote may open the next string.
                        key.open = true;
                    }
                    continue;
                }
                match quote {
                    Quote::Double | Quote::Single => {
                        if key.escape {
                            key.escape = false;
                            key.push(c);
                        } else if c == '\\' {
                            key.escape = true;
                        } else {
                            key.push(c);
                        }
                    }
                    Quote::EscapedDouble => {
                        if c != '\\' {
                            key.push(c);
                        }
                    }
                }
            } else if is_quote {
                key.open = true;
            }
        }
        if let Some(quote) = value {
            self.enter(Mode::JsonValueStart(quote));
        }
    }

    fn enter(&mut self, mode: Mode) {
        self.reset_trackers();
        self.mode = mode;
    }

    fn after_char(&mut self, c: char) {
        self.line_start = c == '\n' || (self.line_start && (c == ' ' || c == '\t' || c == '-'));
        self.prev = c;
    }
}

fn quote_of(c: char) -> Quote {
    if c == '"' {
        Quote::Double
    } else {
        Quote::Single
    }
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
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
    // Beyond the reference: Stripe, npm, Hugging Face, Groq and xAI keys.
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

/// Token shapes at a word start (SPEC B 7.2 rule 9).
fn shape(s: &[u8], at_end: bool) -> Hold {
    let mut need = false;
    for shape in SHAPES.iter().filter(|shape| shape.prefix[0] == s[0]) {
        match prefixed_run(s, shape.prefix, shape.class, shape.min, at_end) {
            Hold::Pass => {}
            Hold::Need => need = true,
            take => return take,
        }
    }
    if s[0] == b'A' {
        for prefix in [&b"AKIA"[..], &b"ASIA"[..]] {
            match aws_key_id(s, prefix, at_end) {
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

fn prefixed_run(s: &[u8], prefix: &[u8], class: TokenClass, min: usize, at_end: bool) -> Hold {
    if let Some(hold) = literal(s, prefix, at_end) {
        return hold;
    }
    let body = &s[prefix.len()..];
    let n = body.iter().take_while(|&&b| class.contains(b)).count();
    if n >= min {
        Hold::Take { len: prefix.len() + n, emit: Emit::Marker, then: Mode::Token(class) }
    } else if n == body.len() && !at_end {
        Hold::Need
    } else {
        Hold::Pass
    }
}

/// `AKIA`/`ASIA` and exactly 16 of `[A-Z0-9]`, ending at a word boundary.
fn aws_key_id(s: &[u8], prefix: &[u8], at_end: bool) -> Hold {
    if let Some(hold) = literal(s, prefix, at_end) {
        return hold;
    }
    let body = &s[prefix.len()..];
    let n = body.iter().take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit()).count();
    match (n.cmp(&16), body.get(n)) {
        (std::cmp::Ordering::Less, None) if !at_end => Hold::Need,
        (std::cmp::Ordering::Equal, None) if !at_end => Hold::Need,
        (std::cmp::Ordering::Equal, next) if next.is_none_or(|&b| !is_word_byte(b)) => {
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

/// `user:password@` right after `scheme://` (SPEC B 7.2 rule 7).
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
