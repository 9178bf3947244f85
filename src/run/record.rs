//! `--record FILE`: besides its stream, a run writes a script for the scripted provider that
//! plays its model calls again (each call's reasoning, text pieces, tool calls and usage, in
//! order), redacted as every line zero writes. `--provider scripted --script FILE` with the
//! same prompt then gives the run's events offline; the tools run again, so a test sees
//! whether the workspace still behaves the same.
//!
//! The file is opened when the run starts (without following a link, a regular file only)
//! and rewritten whole after each call, so a run that ends early leaves the calls it made.

use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::error::{Failure, Stop};
use crate::output::Output;
use crate::provider::StreamEvent;
use crate::redact::Redactor;

/// The script being written.
pub struct Recorder {
    path: PathBuf,
    file: std::fs::File,
    /// Each call so far, and the provider's error that ended it.
    turns: Vec<(Tape, Option<String>)>,
}

/// What one model call said, in order, as the script keeps it.
#[derive(Default)]
pub struct Tape {
    reasoning: Vec<String>,
    text: Vec<String>,
    calls: Vec<Value>,
    usage: Option<Value>,
}

impl Tape {
    /// Keeps what `event` says that a script can play.
    pub fn see(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Text(piece) | StreamEvent::LastText(piece) => {
                self.text.push(piece.clone());
            }
            StreamEvent::Reasoning(piece) => self.reasoning.push(piece.clone()),
            StreamEvent::ToolCall(call) => {
                // Arguments that are a JSON object are kept as one; anything else (a model's
                // broken JSON) verbatim, as the script reads them.
                let arguments = match serde_json::from_str::<Value>(&call.arguments) {
                    Ok(object @ Value::Object(_)) => object,
                    _ => Value::String(call.arguments.clone()),
                };
                self.calls.push(json!({"id": call.id, "name": call.name, "arguments": arguments}));
            }
            StreamEvent::Usage(usage) => {
                let mut counts = Map::new();
                counts.insert("promptTokens".into(), usage.prompt_tokens.into());
                counts.insert("completionTokens".into(), usage.completion_tokens.into());
                if usage.cache_read_reported {
                    counts.insert("cachedTokens".into(), usage.cached_tokens.into());
                }
                if usage.cache_write_reported {
                    counts.insert("cacheWriteTokens".into(), usage.cache_write_tokens.into());
                }
                self.usage = Some(Value::Object(counts));
            }
            // A retry's warning is the provider's weather, not the model's answer.
            StreamEvent::Warning(_) | StreamEvent::Native(_) => {}
        }
    }

    /// The script's turn for this call, redacted; `failed`: the provider's error that ended it.
    fn turn(&self, failed: Option<&str>, redactor: &Redactor) -> Value {
        let mut turn = Map::new();
        if !self.reasoning.is_empty() {
            turn.insert("reasoning".into(), pieces(&self.reasoning, redactor));
        }
        if !self.text.is_empty() {
            turn.insert("text".into(), pieces(&self.text, redactor));
        }
        if !self.calls.is_empty() {
            let calls = self.calls.iter().map(|c| redactor.redact_value(c.clone())).collect();
            turn.insert("toolCalls".into(), Value::Array(calls));
        }
        // Counts, under names the redactor would take for secrets ("...Tokens").
        if let Some(usage) = &self.usage {
            turn.insert("usage".into(), usage.clone());
        }
        if let Some(message) = failed {
            turn.insert("error".into(), json!(redactor.redact_str(message)));
        }
        Value::Object(turn)
    }
}

/// Streamed pieces, redacted as the stream redacts them: what a piece decides is that
/// piece, and what is held back at the end goes with the last. The replay then writes the
/// same deltas as the run did.
fn pieces(pieces: &[String], redactor: &Redactor) -> Value {
    let mut stream = crate::redact::TextStream::default();
    let mut out: Vec<String> = Vec::new();
    for piece in pieces {
        let mut decided = String::new();
        stream.push(redactor, piece, &mut decided);
        if !decided.is_empty() {
            out.push(decided);
        }
    }
    let mut rest = String::new();
    stream.finish(redactor, &mut rest);
    match out.last_mut() {
        Some(last) => last.push_str(&rest),
        None if !rest.is_empty() => out.push(rest),
        None => {}
    }
    json!(out)
}

impl Recorder {
    /// Opens `path` for the script: created or replaced, never through a link, and only a
    /// regular file. An error is the command line's (exit 2), before any call.
    pub fn open(path: &Path) -> Result<Recorder, Failure> {
        let cannot = |why: String| {
            Failure::Usage(format!("Cannot write the --record file {}: {why}", path.display()))
        };
        let file = crate::sys::dirfd::open_for_rewrite(path).map_err(|err| {
            cannot(match err.raw_os_error() {
                Some(40) => "it is a symbolic link".to_string(),
                _ => err.to_string(),
            })
        })?;
        match file.metadata() {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(cannot("it is not a regular file".to_string())),
            Err(err) => return Err(cannot(err.to_string())),
        }
        let mut recorder = Recorder { path: path.to_path_buf(), file, turns: Vec::new() };
        recorder.write(&Redactor::new([])).map_err(|e| cannot(e.to_string()))?;
        Ok(recorder)
    }

    /// Adds one call (`streamed`: how it ended) and rewrites the file, redacted by `out`'s
    /// rules as they are now. A call stopped by the user or the output is not the model's:
    /// it is not kept.
    pub fn add(
        &mut self,
        tape: Tape,
        streamed: &Result<(), Stop>,
        out: &Output,
    ) -> Result<(), Stop> {
        let failed = match streamed {
            Ok(()) => None,
            Err(Stop::Failed(Failure::Provider(message))) => Some(
                message
                    .strip_prefix("Provider returned error during streaming: ")
                    .unwrap_or(message)
                    .to_string(),
            ),
            Err(_) => return Ok(()),
        };
        self.turns.push((tape, failed));
        self.write(&out.redactor()).map_err(|err| {
            Stop::Failed(Failure::Usage(format!(
                "Cannot write the --record file {}: {err}",
                self.path.display()
            )))
        })
    }

    fn write(&mut self, redactor: &Redactor) -> std::io::Result<()> {
        let turns: Vec<Value> = self
            .turns
            .iter()
            .map(|(tape, failed)| tape.turn(failed.as_deref(), redactor))
            .collect();
        let mut text = serde_json::to_string_pretty(&json!({"turns": turns})).unwrap_or_default();
        text.push('\n');
        self.file.set_len(0)?;
        self.file.rewind()?;
        self.file.write_all(text.as_bytes())?;
        self.file.flush()
    }
}
