//! The prompt: text input (words and `--file`) or stream-json events from stdin or `--file`,
//! validated by hand line by line as they are read.
//!
//! Text input reads stdin only when asked (`zero exec -` or `--file -`). Stream-json lines are
//! capped at 8 MiB in schema 1 and 16 MiB in schema 2 (which carries images); a byte-order
//! mark on line 1 and CRLF line ends are accepted; invalid UTF-8, NUL bytes, and every schema
//! problem are usage errors naming the 1-based line and the field.
//!
//! Every line carries the schema version of the run: the one `--schema-version` asks for, else
//! the first line's.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{Map, Value};

use crate::protocol::events::SchemaVersion;
use crate::protocol::images::{self, Image, MAX_IMAGES};

/// Longest stream-json input line in schema 1.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;
/// Longest stream-json input line in schema 2.
pub const MAX_LINE_BYTES_V2: usize = 16 * 1024 * 1024;

/// A stream-json prompt: the content of its lines joined with blank lines, and the images of
/// its messages in order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct StreamPrompt {
    pub text: String,
    pub images: Vec<Image>,
}
/// Longest text prompt read from a file or stdin.
pub const MAX_PROMPT_BYTES: u64 = 16 * 1024 * 1024;

/// Where the part of a text prompt that is not words comes from.
pub enum PromptText<'a> {
    File(&'a Path),
    /// `zero exec -` or `--file -`.
    Stdin(&'a mut dyn Read),
}

/// A bad prompt or input: always a usage error (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// No prompt was given: the message says how to give one.
    Missing(String),
    /// The prompt file, the stream-json input file or stdin: missing, unreadable, empty, too
    /// large, not UTF-8 (the message names it).
    Source(String),
    /// A stream-json line that is not a valid input event: its number, and what is wrong.
    Line { number: usize, detail: String },
    /// A stream-json line that could not be read.
    Unreadable { number: usize, reason: String },
    /// Prompt words beside stream-json input.
    WordsWithStreamJson,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::Missing(message) | InputError::Source(message) => f.write_str(message),
            InputError::Line { number, detail } => {
                write!(f, "Invalid stream-json input at line {number}: {detail}")
            }
            InputError::Unreadable { number, reason } => {
                write!(f, "Cannot read stream-json input at line {number}: {reason}")
            }
            InputError::WordsWithStreamJson => f.write_str(
                "Stream-json input takes no prompt words or --prompt: pipe JSONL or use --file.",
            ),
        }
    }
}

impl std::error::Error for InputError {}

impl From<InputError> for crate::error::Failure {
    fn from(err: InputError) -> Self {
        crate::error::Failure::Usage(err.to_string())
    }
}

/// How the prompt arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    Text,
    StreamJson,
}

impl InputFormat {
    /// `text` or `stream-json`, trimmed, any case.
    pub fn parse(value: &str) -> Option<InputFormat> {
        match value.trim().to_ascii_lowercase().as_str() {
            "text" => Some(InputFormat::Text),
            "stream-json" => Some(InputFormat::StreamJson),
            _ => None,
        }
    }
}

/// The text prompt: inline words first, then the file (or stdin), joined by a blank line.
pub fn text_prompt(words: &[String], more: Option<PromptText<'_>>) -> Result<String, InputError> {
    let inline = words.join(" ").trim().to_string();
    let from_file = match more {
        Some(PromptText::File(path)) => {
            let text = read_file(path, "Prompt file")?;
            let text = text.trim();
            if text.is_empty() {
                return Err(InputError::Source(format!(
                    "Prompt file is empty: {}",
                    path.display()
                )));
            }
            Some(text.to_string())
        }
        Some(PromptText::Stdin(stdin)) => {
            let mut bytes = Vec::new();
            stdin.take(MAX_PROMPT_BYTES + 1).read_to_end(&mut bytes).map_err(|err| {
                InputError::Source(format!("Cannot read the prompt from stdin: {err}"))
            })?;
            if bytes.len() as u64 > MAX_PROMPT_BYTES {
                return Err(InputError::Source(format!(
                    "The prompt on stdin is larger than {} MiB",
                    MAX_PROMPT_BYTES / (1024 * 1024)
                )));
            }
            let text = String::from_utf8(bytes).map_err(|_| {
                InputError::Source("The prompt on stdin is not valid UTF-8".to_string())
            })?;
            let text = text.trim();
            if text.is_empty() {
                return Err(InputError::Source("The prompt on stdin is empty".to_string()));
            }
            Some(text.to_string())
        }
        None => None,
    };
    let prompt = match (inline.is_empty(), from_file) {
        (false, Some(file)) => format!("{inline}\n\n{file}"),
        (true, Some(file)) => file,
        (false, None) => inline,
        (true, None) => {
            return Err(InputError::Missing(
                "Prompt required. Use `zero exec \"prompt\"`, `zero exec --file prompt.txt`, or `zero exec -` to read it from stdin."
                    .to_string(),
            ))
        }
    };
    Ok(prompt)
}

/// The stream-json prompt from `--file`, or from stdin when it is not a terminal. `version`
/// holds the schema version `--schema-version` asked for, and is set from the first line
/// when it asked for none (also when a later line is wrong).
pub fn stream_json_prompt(
    words: &[String],
    file: Option<&Path>,
    stdin: Option<&mut dyn Read>,
    version: &mut Option<SchemaVersion>,
) -> Result<StreamPrompt, InputError> {
    if !words.is_empty() {
        return Err(InputError::WordsWithStreamJson);
    }
    match (file, stdin) {
        (Some(path), _) => {
            let file = open_file(path, "Stream-json input file")?;
            read_events(BufReader::new(file), version)
        }
        (None, Some(stdin)) => read_events(BufReader::new(stdin), version),
        (None, None) => Err(InputError::Missing(
            "Stream-json input required. Pipe JSONL or use --file.".to_string(),
        )),
    }
}

fn open_file(path: &Path, what: &str) -> Result<std::fs::File, InputError> {
    let shown = path.display();
    match std::fs::metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(InputError::Source(format!("{what} not found: {shown}")))
        }
        Ok(meta) if meta.is_dir() => {
            return Err(InputError::Source(format!("{what} is a directory: {shown}")))
        }
        _ => {}
    }
    std::fs::File::open(path).map_err(|err| {
        InputError::Source(format!("Cannot read {} {shown}: {err}", what.to_lowercase()))
    })
}

fn read_file(path: &Path, what: &str) -> Result<String, InputError> {
    let mut bytes = Vec::new();
    open_file(path, what)?.take(MAX_PROMPT_BYTES + 1).read_to_end(&mut bytes).map_err(|err| {
        InputError::Source(format!("Cannot read {} {}: {err}", what.to_lowercase(), path.display()))
    })?;
    if bytes.len() as u64 > MAX_PROMPT_BYTES {
        return Err(InputError::Source(format!(
            "{what} is larger than {} MiB: {}",
            MAX_PROMPT_BYTES / (1024 * 1024),
            path.display()
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| InputError::Source(format!("{what} is not valid UTF-8: {}", path.display())))
}

/// Reads and validates JSONL events, joining their content with blank lines. `version` is the
/// schema version the lines must carry; `None` lets the first line decide, and is then set.
pub fn read_events(
    mut reader: impl BufRead,
    version: &mut Option<SchemaVersion>,
) -> Result<StreamPrompt, InputError> {
    let mut parts: Vec<String> = Vec::new();
    let mut images: Vec<Image> = Vec::new();
    let mut saw_line = false;
    let mut buf = Vec::new();
    let mut number = 0usize;
    loop {
        buf.clear();
        number += 1;
        let cap =
            if *version == Some(SchemaVersion::V1) { MAX_LINE_BYTES } else { MAX_LINE_BYTES_V2 };
        let read = (&mut reader)
            .take(cap as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|err| InputError::Unreadable { number, reason: err.to_string() })?;
        if read == 0 {
            break;
        }
        let at = |detail: &str| InputError::Line { number, detail: detail.to_string() };
        let too_long = |cap: usize| at(&format!("line is longer than {} MiB", cap / (1024 * 1024)));
        if buf.last() == Some(&b'\n') {
            buf.pop();
        } else if buf.len() > cap {
            return Err(too_long(cap));
        }
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        let mut line = std::str::from_utf8(&buf).map_err(|_| at("not valid UTF-8"))?;
        if number == 1 {
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.contains('\0') {
            return Err(at("contains a NUL byte"));
        }
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        saw_line = true;
        let value: Value = serde_json::from_str(line).map_err(|_| at("expected a JSON object."))?;
        let Value::Object(event) = value else { return Err(at("expected a JSON object.")) };
        let line_version =
            check_version(&event, *version).map_err(|detail| at(&detail.to_string()))?;
        *version = Some(line_version);
        if line_version == SchemaVersion::V1 && line.len() > MAX_LINE_BYTES {
            return Err(too_long(MAX_LINE_BYTES));
        }
        let content =
            validate_event(&event, line_version, &mut images).map_err(|d| at(&d.to_string()))?;
        let content = content.trim();
        if !content.is_empty() {
            parts.push(content.to_string());
        }
    }
    if !saw_line {
        return Err(InputError::Missing(
            "Stream-json input required. Pipe JSONL or use --file.".to_string(),
        ));
    }
    if parts.is_empty() && images.is_empty() {
        return Err(InputError::Missing(
            "Stream-json input must include at least one prompt or user message event.".to_string(),
        ));
    }
    Ok(StreamPrompt { text: parts.join("\n\n"), images })
}

/// One line of live mode's input.
#[derive(Debug, PartialEq, Eq)]
pub enum LiveLine {
    /// A `prompt` or `message`: one user turn.
    Turn(StreamPrompt),
    /// A client's answer to a `permission_request`.
    Response(Response),
    /// Only whitespace: skipped.
    Blank,
}

/// A `permission_response` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub request_id: String,
    pub decision: Answer,
    pub reason: Option<String>,
}

/// `permission_response.decision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Allow,
    Deny,
    AllowSession,
}

/// What is wrong with a live input line: a line that is not JSON ends the process; a JSON
/// line that is wrong is reported and skipped. Both messages name the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveLineError {
    Fatal(String),
    Skip(String),
}

crate::error::message_error!(LiveLineError: Fatal, Skip);

/// Checks one live input line (`number` from 1; its newline already removed).
pub fn live_line(bytes: &[u8], number: usize) -> Result<LiveLine, LiveLineError> {
    let at = |detail: &str| format!("Invalid stream-json input at line {number}: {detail}");
    let fatal = |detail: &str| LiveLineError::Fatal(at(detail));
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let mut line = std::str::from_utf8(bytes).map_err(|_| fatal("not valid UTF-8"))?;
    if number == 1 {
        line = line.strip_prefix('\u{feff}').unwrap_or(line);
    }
    if line.contains('\0') {
        return Err(fatal("contains a NUL byte"));
    }
    let line = line.trim();
    if line.is_empty() {
        return Ok(LiveLine::Blank);
    }
    let value: Value = serde_json::from_str(line).map_err(|_| fatal("expected a JSON object."))?;
    let Value::Object(event) = value else { return Err(fatal("expected a JSON object.")) };
    let skip = |detail: FieldError| LiveLineError::Skip(at(&detail.to_string()));
    check_version(&event, Some(SchemaVersion::V2)).map_err(skip)?;
    if event.get("type").and_then(Value::as_str) == Some("permission_response") {
        return validate_response(&event).map(LiveLine::Response).map_err(skip);
    }
    let mut images = Vec::new();
    let content = validate_event(&event, SchemaVersion::V2, &mut images).map_err(skip)?;
    Ok(LiveLine::Turn(StreamPrompt { text: content.trim().to_string(), images }))
}

/// What is wrong with one field of an input event, by kind; the message starts with the
/// field's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldError {
    /// A required field is missing.
    Missing(String),
    /// A field this event does not have.
    Unknown(String),
    /// `schemaVersion` is missing, not the one expected, or one zero does not speak.
    Version(String),
    /// The field's value is not what it may be.
    Invalid(String),
}

crate::error::message_error!(FieldError: Missing, Unknown, Version, Invalid);

/// A `permission_response`: `requestId`, `decision`, optional `reason`, nothing else.
fn validate_response(event: &Map<String, Value>) -> Result<Response, FieldError> {
    let allowed = ["schemaVersion", "type", "requestId", "decision", "reason"];
    if let Some(key) = event.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(FieldError::Unknown(format!(
            "{}: unknown field for a \"permission_response\" event",
            field_name(key)
        )));
    }
    let request_id = match event.get("requestId") {
        None => return Err(FieldError::Missing("requestId: required".to_string())),
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        Some(other) => {
            return Err(FieldError::Invalid(format!(
                "requestId: expected a non-empty string, got {}",
                describe(other)
            )))
        }
    };
    let decision = match event.get("decision") {
        None => {
            return Err(FieldError::Missing(
                "decision: required (\"allow\", \"deny\" or \"allow_session\")".to_string(),
            ))
        }
        Some(Value::String(d)) if d == "allow" => Answer::Allow,
        Some(Value::String(d)) if d == "deny" => Answer::Deny,
        Some(Value::String(d)) if d == "allow_session" => Answer::AllowSession,
        Some(other) => {
            return Err(FieldError::Invalid(format!(
                "decision: expected \"allow\", \"deny\" or \"allow_session\", got {}",
                describe(other)
            )))
        }
    };
    let reason = match event.get("reason") {
        None => None,
        Some(Value::String(r)) => Some(r.clone()),
        Some(other) => {
            return Err(FieldError::Invalid(format!(
                "reason: expected a string, got {}",
                describe(other)
            )))
        }
    };
    Ok(Response { request_id, decision, reason })
}

/// The line's `schemaVersion`: the `expected` one, or (when none is expected yet) one zero
/// speaks.
fn check_version(
    event: &Map<String, Value>,
    expected: Option<SchemaVersion>,
) -> Result<SchemaVersion, FieldError> {
    let found = match event.get("schemaVersion") {
        Some(Value::Number(n)) if !n.is_f64() => n.as_u64(),
        _ => None,
    };
    // The common case first, without building any message.
    if let (Some(v), Some(e)) = (found, expected) {
        if v == u64::from(e.number()) {
            return Ok(e);
        }
    }
    let supported = SchemaVersion::supported();
    let wanted = match expected {
        Some(v) => v.number().to_string(),
        None => supported.replace(", ", " or "),
    };
    let Some(given) = event.get("schemaVersion") else {
        return Err(FieldError::Version(format!("schemaVersion: required (expected {wanted})")));
    };
    match (found, expected) {
        (Some(v), None) => SchemaVersion::from_number(v).ok_or_else(|| {
            FieldError::Version(format!(
                "schemaVersion: unsupported version {v}; supported: {supported}"
            ))
        }),
        // A version zero does not speak is named as such, whatever was expected.
        (Some(v), Some(_)) if SchemaVersion::from_number(v).is_none() => Err(FieldError::Version(format!(
            "schemaVersion: expected {wanted}, got {v}, a version zero does not speak (supported: {supported})"
        ))),
        _ => Err(FieldError::Version(format!("schemaVersion: expected {wanted}, got {}", describe(given)))),
    }
}

/// Checks one input event against the strict schema of its version;
/// returns its content and adds its images to `images`.
fn validate_event<'a>(
    event: &'a Map<String, Value>,
    version: SchemaVersion,
    images: &mut Vec<Image>,
) -> Result<&'a str, FieldError> {
    let kind = match event.get("type") {
        None => {
            return Err(FieldError::Missing(
                "type: required (expected \"prompt\" or \"message\")".to_string(),
            ))
        }
        Some(Value::String(t)) if t == "prompt" || t == "message" => t.as_str(),
        Some(Value::String(t)) if t == "permission_response" && version == SchemaVersion::V2 => {
            return Err(FieldError::Invalid(
                "type: \"permission_response\" is read only in live mode, which this run is not"
                    .to_string(),
            ))
        }
        Some(other) => {
            return Err(FieldError::Invalid(format!(
                "type: expected \"prompt\" or \"message\", got {}",
                describe(other)
            )))
        }
    };
    if kind == "message" {
        match event.get("role") {
            None => {
                return Err(FieldError::Missing("role: required (expected \"user\")".to_string()))
            }
            Some(Value::String(r)) if r == "user" => {}
            Some(other) => {
                return Err(FieldError::Invalid(format!(
                    "role: expected \"user\", got {}",
                    describe(other)
                )))
            }
        }
    }
    let with_images = version == SchemaVersion::V2 && kind == "message";
    let allowed: &[&str] = match (kind, with_images) {
        ("message", true) => &["schemaVersion", "type", "role", "content", "images"],
        ("message", false) => &["schemaVersion", "type", "role", "content"],
        _ => &["schemaVersion", "type", "content"],
    };
    if let Some(key) = event.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(FieldError::Unknown(format!(
            "{}: unknown field for a \"{kind}\" event",
            field_name(key)
        )));
    }
    let before = images.len();
    if with_images {
        if let Some(list) = event.get("images") {
            read_images(list, images)?;
        }
    }
    let content = match event.get("content") {
        None => {
            return Err(FieldError::Missing("content: required (a non-empty string)".to_string()))
        }
        Some(Value::String(c)) if !c.is_empty() => c.as_str(),
        // A message may be only images.
        Some(Value::String(c)) if images.len() > before => c.as_str(),
        Some(Value::String(_)) => {
            return Err(FieldError::Invalid("content: must not be empty".to_string()))
        }
        Some(other) => {
            return Err(FieldError::Invalid(format!(
                "content: expected a string, got {}",
                describe(other)
            )))
        }
    };
    Ok(content)
}

/// A message's `images`: `[{mediaType, data}]`, each checked (see `images`).
fn read_images(list: &Value, images: &mut Vec<Image>) -> Result<(), FieldError> {
    let Value::Array(list) = list else {
        return Err(FieldError::Invalid(format!(
            "images: expected an array, got {}",
            describe(list)
        )));
    };
    for (i, entry) in list.iter().enumerate() {
        let at = |detail: String| format!("images[{i}].{detail}");
        let Value::Object(fields) = entry else {
            return Err(FieldError::Invalid(format!(
                "images[{i}]: expected an object, got {}",
                describe(entry)
            )));
        };
        if let Some(key) = fields.keys().find(|k| *k != "mediaType" && *k != "data") {
            return Err(FieldError::Unknown(at(format!(
                "{}: unknown field for an image",
                field_name(key)
            ))));
        }
        let text = |key: &str| match fields.get(key) {
            None => Err(FieldError::Missing(at(format!("{key}: required")))),
            Some(Value::String(s)) => Ok(s.as_str()),
            Some(other) => Err(FieldError::Invalid(at(format!(
                "{key}: expected a string, got {}",
                describe(other)
            )))),
        };
        let image = images::from_input(text("mediaType")?, text("data")?)
            .map_err(|err| FieldError::Invalid(at(err.to_string())))?;
        if images.len() == MAX_IMAGES {
            return Err(FieldError::Invalid(format!(
                "images: more than {MAX_IMAGES} images in one prompt"
            )));
        }
        images.push(image);
    }
    Ok(())
}

/// A field name from the input as an error shows it: as typed, or quoted and shortened when it
/// holds control characters or is long (the error stays one line).
fn field_name(key: &str) -> String {
    if key.len() <= 64 && !key.chars().any(char::is_control) {
        return key.to_string();
    }
    Value::String(crate::text::summarize(key)).to_string()
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("the string {}", Value::String(crate::text::summarize(s))),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Result<String, String> {
        read_events(text.as_bytes(), &mut None).map(|p| p.text).map_err(|e| e.to_string())
    }

    #[test]
    fn joins_messages_and_prompts_with_blank_lines() {
        let input = "{\"schemaVersion\":1,\"type\":\"message\",\"role\":\"user\",\"content\":\"Review the changed files.\"}\n\n{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"  Return only blockers. \"}\n\n";
        assert_eq!(events(input).unwrap(), "Review the changed files.\n\nReturn only blockers.");
    }

    #[test]
    fn accepts_crlf_and_a_bom_on_line_one() {
        let input = "\u{feff}{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"a\"}\r\n{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"b\"}\r\n";
        assert_eq!(events(input).unwrap(), "a\n\nb");
    }

    #[test]
    fn every_schema_problem_names_line_and_field() {
        let ok = "{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"x\"}\n";
        let cases = [
            ("not json", "Invalid stream-json input at line 2: expected a JSON object."),
            ("[1,2]", "Invalid stream-json input at line 2: expected a JSON object."),
            ("{\"schemaVersion\":0,\"type\":\"prompt\",\"content\":\"x\"}", "line 2: schemaVersion: expected 1, got 0, a version zero does not speak (supported: 1, 2)"),
            ("{\"schemaVersion\":3,\"type\":\"prompt\",\"content\":\"x\"}", "line 2: schemaVersion: expected 1, got 3, a version zero does not speak (supported: 1, 2)"),
            ("{\"schemaVersion\":2,\"type\":\"prompt\",\"content\":\"x\"}", "line 2: schemaVersion: expected 1, got 2"),
            ("{\"schemaVersion\":\"1\",\"type\":\"prompt\",\"content\":\"x\"}", "line 2: schemaVersion: expected 1, got the string \"1\""),
            ("{\"schemaVersion\":1.0,\"type\":\"prompt\",\"content\":\"x\"}", "line 2: schemaVersion: expected 1, got 1.0"),
            ("{\"type\":\"prompt\",\"content\":\"x\"}", "line 2: schemaVersion: required (expected 1)"),
            ("{\"schemaVersion\":1,\"type\":\"ask\",\"content\":\"x\"}", "line 2: type: expected \"prompt\" or \"message\", got the string \"ask\""),
            ("{\"schemaVersion\":1,\"type\":\"message\",\"role\":\"assistant\",\"content\":\"x\"}", "line 2: role: expected \"user\", got the string \"assistant\""),
            ("{\"schemaVersion\":1,\"type\":\"message\",\"content\":\"x\"}", "line 2: role: required (expected \"user\")"),
            ("{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"\"}", "line 2: content: must not be empty"),
            ("{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":5}", "line 2: content: expected a string, got 5"),
            ("{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"x\",\"extra\":true}", "line 2: extra: unknown field for a \"prompt\" event"),
            ("{\"schemaVersion\":1,\"type\":\"prompt\",\"role\":\"user\",\"content\":\"x\"}", "line 2: role: unknown field for a \"prompt\" event"),
            ("{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"a\u{0}b\"}", "line 2: contains a NUL byte"),
        ];
        for (line, expected) in cases {
            let err = events(&format!("{ok}{line}\n")).unwrap_err();
            assert!(
                err.ends_with(expected) && err.starts_with("Invalid stream-json input at line 2"),
                "{line}: {err}"
            );
        }
    }

    #[test]
    fn invalid_utf8_empty_input_and_long_lines() {
        let err = read_events(&b"{\"a\":\xff}\n"[..], &mut None).unwrap_err().to_string();
        assert_eq!(err, "Invalid stream-json input at line 1: not valid UTF-8");
        assert_eq!(
            events("\n  \n").unwrap_err(),
            "Stream-json input required. Pipe JSONL or use --file."
        );
        assert_eq!(
            events("{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"   \"}").unwrap_err(),
            "Stream-json input must include at least one prompt or user message event."
        );
        let long = format!("{}\n", "x".repeat(MAX_LINE_BYTES + 1));
        let err =
            read_events(long.as_bytes(), &mut Some(SchemaVersion::V1)).unwrap_err().to_string();
        assert_eq!(err, "Invalid stream-json input at line 1: line is longer than 8 MiB");
        let longer = format!("{}\n", "x".repeat(MAX_LINE_BYTES_V2 + 1));
        assert_eq!(
            events(&longer).unwrap_err(),
            "Invalid stream-json input at line 1: line is longer than 16 MiB"
        );
        // A schema-1 line past 8 MiB is refused once its version is known.
        let big = format!(
            "{{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"{}\"}}\n",
            "x".repeat(MAX_LINE_BYTES)
        );
        assert_eq!(
            events(&big).unwrap_err(),
            "Invalid stream-json input at line 1: line is longer than 8 MiB"
        );
    }

    #[test]
    fn schema_2_lines_carry_images_and_may_be_longer() {
        let png = crate::protocol::images::encode(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
        let line = |content: &str, images: &str| {
            format!("{{\"schemaVersion\":2,\"type\":\"message\",\"role\":\"user\",\"content\":\"{content}\",\"images\":{images}}}\n")
        };
        let two = format!("[{{\"mediaType\":\"image/png\",\"data\":\"{png}\"}}]");
        let input = line("", &two) + &line("and this", &two);
        let prompt = read_events(input.as_bytes(), &mut None).unwrap();
        assert_eq!((prompt.text.as_str(), prompt.images.len()), ("and this", 2));
        // An empty message without images is still refused.
        assert!(events(&line("", "[]"))
            .unwrap_err()
            .ends_with("line 1: content: must not be empty"));
        // Past 8 MiB is fine in schema 2, up to 16 MiB.
        let big = format!(
            "{{\"schemaVersion\":2,\"type\":\"prompt\",\"content\":\"{}\"}}\n",
            "x".repeat(9 << 20)
        );
        let mut version = None;
        assert_eq!(read_events(big.as_bytes(), &mut version).unwrap().text.len(), 9 << 20);
        assert_eq!(version, Some(SchemaVersion::V2));
        // Seventeen images are one too many.
        let many = format!(
            "[{}]",
            vec![format!("{{\"mediaType\":\"image/png\",\"data\":\"{png}\"}}"); 17].join(",")
        );
        assert!(events(&line("x", &many))
            .unwrap_err()
            .ends_with("images: more than 16 images in one prompt"));
    }

    #[test]
    fn live_lines_end_the_process_only_when_they_are_not_json() {
        let line = |text: &str, n| live_line(text.as_bytes(), n);
        let skip = |text: &str| match line(text, 3) {
            Err(LiveLineError::Skip(m)) => m,
            other => panic!("{text}: {other:?}"),
        };
        let fatal = |bytes: &[u8]| match live_line(bytes, 3) {
            Err(LiveLineError::Fatal(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(line("  \r", 3), Ok(LiveLine::Blank));
        assert_eq!(
            line("\u{feff}{\"schemaVersion\":2,\"type\":\"prompt\",\"content\":\" hi \"}\r", 1),
            Ok(LiveLine::Turn(StreamPrompt { text: "hi".into(), images: vec![] }))
        );
        assert_eq!(
            line(
                r#"{"schemaVersion":2,"type":"permission_response","requestId":"perm_1","decision":"allow_session","reason":"ok"}"#,
                3
            ),
            Ok(LiveLine::Response(Response {
                request_id: "perm_1".into(),
                decision: Answer::AllowSession,
                reason: Some("ok".into())
            }))
        );
        for (text, detail) in [
            (r#"{"schemaVersion":2,"type":"permission_response","decision":"allow"}"#, "requestId: required"),
            (r#"{"schemaVersion":2,"type":"permission_response","requestId":"","decision":"allow"}"#, "requestId: expected a non-empty string, got the string \"\""),
            (r#"{"schemaVersion":2,"type":"permission_response","requestId":"p","decision":"yes"}"#, "decision: expected \"allow\", \"deny\" or \"allow_session\", got the string \"yes\""),
            (r#"{"schemaVersion":2,"type":"permission_response","requestId":"p","decision":"deny","why":1}"#, "why: unknown field for a \"permission_response\" event"),
            (r#"{"schemaVersion":2,"type":"permission_response","requestId":"p","decision":"deny","reason":3}"#, "reason: expected a string, got 3"),
            (r#"{"schemaVersion":1,"type":"prompt","content":"x"}"#, "schemaVersion: expected 2, got 1"),
            (r#"{"schemaVersion":2,"type":"prompt"}"#, "content: required (a non-empty string)"),
        ] {
            assert_eq!(skip(text), format!("Invalid stream-json input at line 3: {detail}"));
        }
        assert_eq!(
            fatal(b"not json"),
            "Invalid stream-json input at line 3: expected a JSON object."
        );
        assert_eq!(fatal(b"[1]"), "Invalid stream-json input at line 3: expected a JSON object.");
        assert_eq!(fatal(b"{\"a\":\xff}"), "Invalid stream-json input at line 3: not valid UTF-8");
    }

    #[test]
    fn text_prompt_joins_inline_and_file() {
        let scratch = crate::testing::kit::TempDir::new("input");
        let dir = scratch.path.clone();
        let file = dir.join("p.txt");
        std::fs::write(&file, "from file\n").unwrap();
        let words = vec!["from".to_string(), "cli".to_string()];
        assert_eq!(
            text_prompt(&words, Some(PromptText::File(&file))).unwrap(),
            "from cli\n\nfrom file"
        );
        std::fs::write(&file, "  \n").unwrap();
        assert!(text_prompt(&words, Some(PromptText::File(&file)))
            .unwrap_err()
            .to_string()
            .starts_with("Prompt file is empty: "));
        assert!(text_prompt(&[], Some(PromptText::File(&dir)))
            .unwrap_err()
            .to_string()
            .starts_with("Prompt file is a directory: "));
        assert!(text_prompt(&[], Some(PromptText::File(&dir.join("nope"))))
            .unwrap_err()
            .to_string()
            .starts_with("Prompt file not found: "));
        assert!(
            matches!(text_prompt(&[], None).unwrap_err(), InputError::Missing(m) if m.starts_with("Prompt required."))
        );
        let mut stdin: &[u8] = b"  from stdin\n";
        let joined = text_prompt(&words, Some(PromptText::Stdin(&mut stdin))).unwrap();
        assert_eq!(joined, "from cli\n\nfrom stdin");
        let mut empty: &[u8] = b"\n";
        let err = text_prompt(&[], Some(PromptText::Stdin(&mut empty))).unwrap_err();
        assert_eq!(err, InputError::Source("The prompt on stdin is empty".into()));
    }

    #[test]
    fn formats_parse_case_insensitively() {
        assert_eq!(InputFormat::parse(" STREAM-JSON "), Some(InputFormat::StreamJson));
        assert_eq!(InputFormat::parse("text"), Some(InputFormat::Text));
        assert_eq!(InputFormat::parse("yaml"), None);
    }
}
