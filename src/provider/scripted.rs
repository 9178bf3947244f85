//! The scripted provider: plays a JSON script of model turns through the real pipeline,
//! so zero runs offline for demos and for integrators' tests. The format is documented in the
//! README; in short:
//!
//! ```json
//! {"turns": [
//!   {"text": ["Let me look", "."], "toolCalls": [{"name": "read_file", "arguments": {"path": "a"}}]},
//!   {"text": ["Done."], "usage": {"promptTokens": 10, "completionTokens": 2}, "delayMs": 20},
//!   {"error": "simulated outage"}
//! ]}
//! ```
//!
//! Each provider call plays the next turn. The script is checked when it is loaded, so a typo
//! is reported with its place before the run starts.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::{CallError, Request, Sink, StreamEvent};
use crate::conversation::ToolCall;
use crate::error::{Failure, Stop};
use crate::provider::models::Usage;

/// One scripted model turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub reasoning: Vec<String>,
    pub text: Vec<String>,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub error: Option<String>,
    pub delay: Duration,
}

/// A script file is read up to this size.
const MAX_SCRIPT_BYTES: u64 = 16 * 1024 * 1024;

/// The provider: the turns and how many have been played.
#[derive(Debug)]
pub struct Scripted {
    turns: Vec<Turn>,
    played: usize,
}

/// Why a script could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptError {
    /// No file at the path given: the command line is wrong.
    NotFound(String),
    /// A file that cannot be read or played.
    Invalid(String),
}

crate::error::message_error!(ScriptError: NotFound, Invalid);

impl From<ScriptError> for crate::error::Failure {
    fn from(err: ScriptError) -> crate::error::Failure {
        match err {
            ScriptError::NotFound(m) => crate::error::Failure::Usage(m),
            ScriptError::Invalid(m) => crate::error::Failure::Provider(m),
        }
    }
}

impl Scripted {
    /// Reads and checks a script file.
    pub fn load(path: &Path) -> Result<Scripted, ScriptError> {
        let shown = path.display();
        let cannot =
            |detail: String| ScriptError::Invalid(format!("Cannot read script {shown}: {detail}"));
        // A regular file, and only so much of it: a script linked to a FIFO or /dev/zero is an
        // error at once, not a hang.
        let file = crate::sys::dirfd::open_path_nonblocking(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                ScriptError::NotFound(format!("Script file not found: {shown}"))
            }
            _ => cannot(e.to_string()),
        })?;
        match file.metadata() {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(cannot("it is not a regular file".to_string())),
            Err(err) => return Err(cannot(err.to_string())),
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, MAX_SCRIPT_BYTES + 1),
            &mut bytes,
        )
        .map_err(|e| cannot(e.to_string()))?;
        if bytes.len() as u64 > MAX_SCRIPT_BYTES {
            return Err(cannot(format!("it is larger than {} MiB", MAX_SCRIPT_BYTES >> 20)));
        }
        let text = String::from_utf8(bytes).map_err(|_| cannot("not valid UTF-8".to_string()))?;
        let turns = parse(&text)
            .map_err(|e| ScriptError::Invalid(format!("Invalid script {shown}: {e}")))?;
        Ok(Scripted { turns, played: 0 })
    }

    /// A provider playing a script given as text (for tests).
    #[cfg(test)]
    pub fn from_text(text: &str) -> Scripted {
        Scripted {
            turns: parse(text).unwrap_or_else(|e| panic!("bad test script: {e}")),
            played: 0,
        }
    }

    pub fn stream(&mut self, _request: &Request<'_>, sink: &mut Sink<'_>) -> Result<(), Stop> {
        let number = self.played + 1;
        let Some(turn) = self.turns.get(self.played).cloned() else {
            return Err(Failure::Provider(format!(
                "Provider returned error: the script has no turn {number} (it has {})",
                self.turns.len()
            ))
            .into());
        };
        self.played += 1;
        for text in turn.reasoning {
            std::thread::sleep(turn.delay);
            sink(StreamEvent::Reasoning(text))?;
        }
        let pieces = turn.text.len();
        for (n, text) in turn.text.into_iter().enumerate() {
            std::thread::sleep(turn.delay);
            // The script knows where the text ends: the last piece is written with what the
            // redactor held, as one delta.
            sink(if n + 1 == pieces {
                StreamEvent::LastText(text)
            } else {
                StreamEvent::Text(text)
            })?;
        }
        if let Some(message) = turn.error {
            return Err(Failure::from(CallError::fatal(format!(
                "Provider returned error during streaming: {message}"
            )))
            .into());
        }
        for call in turn.tool_calls {
            std::thread::sleep(turn.delay);
            sink(StreamEvent::ToolCall(call))?;
        }
        if let Some(usage) = turn.usage {
            sink(StreamEvent::Usage(usage))?;
        }
        Ok(())
    }
}

/// A problem of the script's text, at its place.
fn invalid(message: impl Into<String>) -> ScriptError {
    ScriptError::Invalid(message.into())
}

/// Parses a script, naming the place of the first problem.
pub fn parse(text: &str) -> Result<Vec<Turn>, ScriptError> {
    let root: Value = serde_json::from_str(text)
        .map_err(|err| invalid(format!("line {}, column {}: {err}", err.line(), err.column())))?;
    let turns = match &root {
        Value::Object(map) => {
            if let Some(key) = map.keys().find(|k| k.as_str() != "turns") {
                return Err(invalid(format!("unknown field \"{key}\" (expected \"turns\")")));
            }
            map.get("turns").ok_or_else(|| invalid("missing field \"turns\""))?
        }
        Value::Array(_) => &root,
        _ => return Err(invalid("expected an object with \"turns\"".to_string())),
    };
    let turns = turns.as_array().ok_or_else(|| invalid("\"turns\" must be an array"))?;
    let mut calls = 0;
    turns
        .iter()
        .enumerate()
        .map(|(i, turn)| {
            parse_turn(turn, &mut calls).map_err(|err| invalid(format!("turns[{i}]: {err}")))
        })
        .collect()
}

fn parse_turn(turn: &Value, calls: &mut u32) -> Result<Turn, ScriptError> {
    let map = turn.as_object().ok_or_else(|| invalid("a turn must be an object"))?;
    let mut out = Turn {
        reasoning: Vec::new(),
        text: Vec::new(),
        tool_calls: Vec::new(),
        usage: None,
        error: None,
        delay: Duration::ZERO,
    };
    for (key, value) in map {
        match key.as_str() {
            "text" => out.text = strings(value, "text")?,
            "reasoning" => out.reasoning = strings(value, "reasoning")?,
            "toolCalls" => {
                let list = value.as_array().ok_or_else(|| invalid("\"toolCalls\" must be an array"))?;
                for (i, call) in list.iter().enumerate() {
                    *calls += 1;
                    let call = parse_call(call, *calls)
                        .map_err(|e| invalid(format!("toolCalls[{i}]: {e}")))?;
                    out.tool_calls.push(call);
                }
            }
            "usage" => out.usage = Some(parse_usage(value)?),
            "error" => {
                let message = value.as_str().filter(|m| !m.trim().is_empty());
                out.error = Some(message.ok_or_else(|| invalid("\"error\" must be a non-empty string"))?.to_string());
            }
            "delayMs" => {
                let ms = value.as_u64().ok_or_else(|| invalid("\"delayMs\" must be a non-negative integer"))?;
                out.delay = Duration::from_millis(ms);
            }
            other => {
                return Err(invalid(format!(
                    "unknown field \"{other}\" (expected text, reasoning, toolCalls, usage, error, delayMs)"
                )))
            }
        }
    }
    Ok(out)
}

/// A string or a list of strings (the chunks, in order).
fn strings(value: &Value, field: &str) -> Result<Vec<String>, ScriptError> {
    match value {
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| invalid(format!("\"{field}\" must be a string or an array of strings"))),
        _ => Err(invalid(format!("\"{field}\" must be a string or an array of strings"))),
    }
}

fn parse_call(call: &Value, number: u32) -> Result<ToolCall, ScriptError> {
    let map = call.as_object().ok_or_else(|| invalid("a tool call must be an object"))?;
    if let Some(key) = map.keys().find(|k| !matches!(k.as_str(), "id" | "name" | "arguments")) {
        return Err(invalid(format!("unknown field \"{key}\" (expected id, name, arguments)")));
    }
    let name = map.get("name").and_then(Value::as_str).filter(|n| !n.is_empty());
    let name = name.ok_or_else(|| invalid("\"name\" must be a non-empty string"))?.to_string();
    let id = match map.get("id") {
        None => format!("call_{number}"),
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        Some(_) => return Err(invalid("\"id\" must be a non-empty string".to_string())),
    };
    // Arguments as an object are serialised; as a string they are sent verbatim, so a script
    // can also play a model that writes broken JSON.
    let arguments = match map.get("arguments") {
        None => "{}".to_string(),
        Some(Value::String(raw)) => raw.clone(),
        Some(value @ Value::Object(_)) => value.to_string(),
        Some(_) => return Err(invalid("\"arguments\" must be an object or a string".to_string())),
    };
    Ok(ToolCall { id, name, arguments })
}

fn parse_usage(value: &Value) -> Result<Usage, ScriptError> {
    let map = value.as_object().ok_or_else(|| invalid("\"usage\" must be an object"))?;
    let mut usage = Usage::default();
    for (key, value) in map {
        let n = value
            .as_u64()
            .ok_or_else(|| invalid(format!("usage \"{key}\" must be a non-negative integer")))?;
        match key.as_str() {
            "promptTokens" => usage.prompt_tokens = n,
            "completionTokens" => usage.completion_tokens = n,
            "cachedTokens" => {
                usage.cached_tokens = n;
                usage.cache_read_reported = true;
            }
            "cacheWriteTokens" => {
                usage.cache_write_tokens = n;
                usage.cache_write_reported = true;
            }
            other => {
                return Err(invalid(format!(
                    "unknown usage field \"{other}\" (expected promptTokens, completionTokens, cachedTokens, cacheWriteTokens)"
                )))
            }
        }
    }
    Ok(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_field() {
        let turns = parse(
            r#"{"turns": [
                {"reasoning": "think", "text": ["a", "b"], "delayMs": 5,
                 "toolCalls": [{"name": "read_file", "arguments": {"path": "x"}},
                               {"id": "c9", "name": "bash", "arguments": "{broken"}],
                 "usage": {"promptTokens": 3, "completionTokens": 4, "cachedTokens": 1}},
                {"error": "boom"}
            ]}"#,
        )
        .unwrap();
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].text, ["a", "b"]);
        assert_eq!(turns[0].reasoning, ["think"]);
        assert_eq!(turns[0].delay, Duration::from_millis(5));
        assert_eq!(
            turns[0].tool_calls,
            [
                ToolCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"x"}"#.into()
                },
                ToolCall { id: "c9".into(), name: "bash".into(), arguments: "{broken".into() },
            ]
        );
        assert_eq!(
            turns[0].usage,
            Some(Usage {
                prompt_tokens: 3,
                completion_tokens: 4,
                cached_tokens: 1,
                cache_write_tokens: 0,
                cache_read_reported: true,
                cache_write_reported: false,
            })
        );
        assert_eq!(turns[1].error.as_deref(), Some("boom"));
    }

    #[test]
    fn errors_name_the_place() {
        assert_eq!(parse("{\"turns\": [{\"txt\": []}]}").unwrap_err(),
            invalid("turns[0]: unknown field \"txt\" (expected text, reasoning, toolCalls, usage, error, delayMs)"));
        assert_eq!(
            parse("{\"turns\": [{\"toolCalls\": [{}]}]}").unwrap_err(),
            invalid("turns[0]: toolCalls[0]: \"name\" must be a non-empty string")
        );
        assert!(parse("{\"turns\": [\n{]}")
            .unwrap_err()
            .to_string()
            .starts_with("line 2, column 2"));
        assert_eq!(parse("{}").unwrap_err(), invalid("missing field \"turns\""));
    }
}
