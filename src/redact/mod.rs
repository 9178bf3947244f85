//! Redaction of every byte zero writes.
//!
//! Text passes two stages: exact secret values ([`secrets`]), then the rules for keys, headers,
//! URLs, private keys and token shapes ([`rules`]). Both stages are streaming machines, so a
//! one-shot [`Redactor::redact_str`] is the stream fed once and finished, and a secret split over
//! any number of text deltas ([`TextStream`]) is replaced exactly as it would be in one piece.
//! Both stages read each byte once: linear time whatever the input.

mod keys;
mod rules;
mod secrets;

use serde_json::Value;

pub use keys::{is_secret_env_name, is_sensitive_key};

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// Exact secret values shorter than this are not registered: short values would blank out
/// ordinary words.
pub const MIN_SECRET_LEN: usize = 8;

/// The redaction rules of one run: the fixed rules plus the exact secret values it knows.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    values: Vec<String>,
    set: secrets::SecretSet,
}

impl Redactor {
    /// A redactor that knows the given exact secret values (shorter ones are ignored).
    pub fn new(values: impl IntoIterator<Item = String>) -> Redactor {
        let mut redactor = Redactor::default();
        redactor.add_secrets(values);
        redactor
    }

    /// Registers more exact secret values. A value that is part of the marker itself is
    /// skipped, so that redacting twice changes nothing.
    pub fn add_secrets(&mut self, values: impl IntoIterator<Item = String>) {
        self.add_secrets_min(values, MIN_SECRET_LEN);
    }

    /// Registers exact secret values of at least `min` bytes.
    pub fn add_secrets_min(&mut self, values: impl IntoIterator<Item = String>, min: usize) {
        let before = self.values.len();
        for value in values {
            let value = value.trim().to_string();
            if value.len() >= min.max(1)
                && !REDACTED.contains(value.as_str())
                && !self.values.contains(&value)
            {
                // Percent-encoded, in a URL or a query, it is the same secret.
                for form in crate::text::percent_encodings(&value) {
                    if !self.values.contains(&form) {
                        self.values.push(form);
                    }
                }
                self.values.push(value);
            }
        }
        if self.values.len() != before {
            self.set = secrets::SecretSet::new(&self.values);
        }
    }

    /// The text with every secret replaced.
    pub fn redact_str(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        self.redact_into(text, &mut out);
        out
    }

    /// Appends the redacted text to `out`.
    pub fn redact_into(&self, text: &str, out: &mut String) {
        let mut stream = TextStream::default();
        stream.push(self, text, out);
        stream.finish(self, out);
    }

    /// A JSON value with secrets removed: the whole value of a sensitive key,
    /// whatever its type, and the string rules in every other string.
    ///
    /// The value is taken: each string is let go as soon as its redacted copy exists, so a
    /// large value (a session event holding a 16 MiB prompt) is not held twice.
    pub fn redact_value(&self, value: Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.redact_str(&s)),
            Value::Array(items) => {
                Value::Array(items.into_iter().map(|v| self.redact_value(v)).collect())
            }
            // A secret can be a member's name too; the name is redacted as text.
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| {
                        let v = if is_sensitive_key(&k) {
                            Value::String(REDACTED.to_string())
                        } else {
                            self.redact_value(v)
                        };
                        (self.redact_str(&k), v)
                    })
                    .collect(),
            ),
            // A numeric secret (a PIN, an account number) written as a JSON number.
            Value::Number(n) => {
                let text = n.to_string();
                let redacted = self.redact_str(&text);
                if redacted == text {
                    Value::Number(n)
                } else {
                    Value::String(redacted)
                }
            }
            other @ (Value::Null | Value::Bool(_)) => other,
        }
    }
}

impl Redactor {
    /// JSON text as a model wrote it (tool-call arguments) with no secret left in it, escaped
    /// or not: valid JSON is decoded, its values redacted, and serialised again, so
    /// `"\u0073k-..."` cannot spell a key past the rules. Text that is not JSON is redacted
    /// as text, or, when its JSON-style escapes decode to a secret, in its decoded form.
    pub fn redact_json_text(&self, text: &str) -> String {
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            return self.redact_value(value).to_string();
        }
        let decoded = unescape_lenient(text);
        if let std::borrow::Cow::Owned(decoded) = decoded {
            let redacted = self.redact_str(&decoded);
            if redacted != decoded {
                return redacted;
            }
        }
        self.redact_str(text)
    }
}

/// Decodes the escapes of JSON strings (`\n`, `\"`, `\u0073`, surrogate pairs) wherever they
/// appear; anything else is kept as it is.
pub(crate) fn unescape_lenient(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\\') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let simple = match rest.as_bytes().get(1) {
            Some(b'n') => Some('\n'),
            Some(b't') => Some('\t'),
            Some(b'r') => Some('\r'),
            Some(b'b') => Some('\u{8}'),
            Some(b'f') => Some('\u{c}'),
            Some(b'"') => Some('"'),
            Some(b'\\') => Some('\\'),
            Some(b'/') => Some('/'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            rest = &rest[2..];
            continue;
        }
        let hex = |s: &str| {
            let digits = s.strip_prefix("\\u")?.get(..4)?;
            digits
                .bytes()
                .all(|b| b.is_ascii_hexdigit())
                .then(|| u32::from_str_radix(digits, 16).ok())?
        };
        match hex(rest) {
            Some(high @ 0xD800..=0xDBFF) => {
                match rest.get(6..).and_then(hex).filter(|low| (0xDC00..=0xDFFF).contains(low)) {
                    Some(low) => {
                        let c = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                        out.extend(char::from_u32(c));
                        rest = &rest[12..];
                    }
                    None => {
                        out.push('\\');
                        rest = &rest[1..];
                    }
                }
            }
            Some(code) if char::from_u32(code).is_some() => {
                out.extend(char::from_u32(code));
                rest = &rest[6..];
            }
            _ => {
                out.push('\\');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// `zero redact`: copies `input` to `output` redacted, in pieces of 64 KiB, so memory stays
/// flat whatever the size. Bytes that are not UTF-8 are replaced (U+FFFD); a character cut by
/// a piece boundary is completed from the next piece first.
pub fn filter(
    mut input: impl std::io::Read,
    mut output: impl std::io::Write,
    redactor: &Redactor,
) -> std::io::Result<()> {
    let mut stream = TextStream::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut carry: Vec<u8> = Vec::new();
    let mut out = String::new();
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        carry.extend_from_slice(&buf[..n]);
        // Keep an incomplete character at the end for the next piece.
        let keep = match std::str::from_utf8(&carry) {
            Ok(_) => 0,
            Err(err) if err.error_len().is_none() => carry.len() - err.valid_up_to(),
            Err(_) => 0,
        };
        let ready = carry.len() - keep;
        out.clear();
        match std::str::from_utf8(&carry[..ready]) {
            Ok(text) => stream.push(redactor, text, &mut out),
            Err(_) => stream.push(redactor, &String::from_utf8_lossy(&carry[..ready]), &mut out),
        }
        carry.drain(..ready);
        output.write_all(out.as_bytes())?;
    }
    out.clear();
    stream.push(redactor, &String::from_utf8_lossy(&carry), &mut out);
    stream.finish(redactor, &mut out);
    output.write_all(out.as_bytes())?;
    output.flush()
}

/// Redaction of a text that arrives in pieces. Only the shortest tail that could still grow
/// into a secret is held back; [`TextStream::finish`] releases it.
#[derive(Debug, Clone, Default)]
pub struct TextStream {
    secrets: secrets::SecretStream,
    rules: rules::Scanner,
    between: String,
    /// The text written last ended in a secret's stand-ins (see `secrets`).
    in_secret: bool,
}

impl TextStream {
    /// Feeds one piece; appends to `out` what is decided.
    pub fn push(&mut self, redactor: &Redactor, piece: &str, out: &mut String) {
        if redactor.set.is_empty() {
            self.rules.push(piece, out);
            return;
        }
        self.between.clear();
        self.secrets.push(&redactor.set, piece, &mut self.between);
        let from = out.len();
        self.rules.push(&self.between, out);
        secrets::collapse_stand_ins(out, from, &mut self.in_secret);
    }

    /// Ends the text: appends everything held back, and starts afresh.
    pub fn finish(&mut self, redactor: &Redactor, out: &mut String) {
        let from = out.len();
        if !redactor.set.is_empty() {
            self.between.clear();
            self.secrets.finish(&mut self.between);
            self.rules.push(&self.between, out);
        }
        self.rules.finish(out);
        if !redactor.set.is_empty() {
            secrets::collapse_stand_ins(out, from, &mut self.in_secret);
        }
        self.between.clear();
        self.in_secret = false;
    }
}

#[cfg(test)]
mod tests;
