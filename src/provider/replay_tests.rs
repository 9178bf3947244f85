//! Replays the recorded provider streams under `$ZERO_RECORDED_FIXTURES` (third-party
//! recordings, read in place, never copied) through the SSE reader and each decoder, and checks
//! the result against a deliberately simple extraction of what the recorded chunks contain.
//! Skipped, saying so, when the variable is unset.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::anthropic::AnthropicDecoder;
use super::gemini::GeminiDecoder;
use super::openai::OpenAiDecoder;
use super::responses::ResponsesDecoder;
use super::{Decoder, StreamEvent};
use crate::net::http::status_error;
use crate::net::sse::SseReader;

fn fixtures() -> Option<PathBuf> {
    match std::env::var_os("ZERO_RECORDED_FIXTURES") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            // The fixtures are data beside the repository, not an install: a skip, counted.
            crate::testing::kit::skip(
                "recorded-stream replay",
                crate::testing::kit::Skip::Machine,
                "ZERO_RECORDED_FIXTURES is unset",
            );
            None
        }
    }
}

fn files(dir: &Path, sub: &str, accept: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.join(sub).display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.ends_with(".meta.json") && accept(n))
        })
        .collect();
    out.sort();
    out
}

/// A reader handing out one byte at a time: chunk boundaries must not matter.
struct OneByte<'a>(&'a [u8]);

impl Read for OneByte<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() || buf.is_empty() {
            return Ok(0);
        }
        buf[0] = self.0[0];
        self.0 = &self.0[1..];
        Ok(1)
    }
}

/// What a decoder made of a body: its events and its error, if any.
fn run<D: Decoder + Default>(body: &[u8], trickle: bool) -> (Vec<StreamEvent>, Option<String>) {
    let reader: Box<dyn std::io::BufRead> = if trickle {
        Box::new(std::io::BufReader::with_capacity(1, OneByte(body)))
    } else {
        Box::new(body)
    };
    let mut sse = SseReader::new(reader);
    let mut decoder = D::default();
    let mut out = Vec::new();
    loop {
        match sse.next_frame() {
            Ok(Some(frame)) => {
                if let Err(err) = decoder.feed(frame, &mut out) {
                    return (out, Some(err.message));
                }
            }
            Ok(None) => break,
            Err(err) => return (out, Some(err.to_string())),
        }
    }
    match decoder.finish(&mut out) {
        Ok(()) => (out, None),
        Err(err) => (out, Some(err.message)),
    }
}

fn reasoning_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| if let StreamEvent::Reasoning(t) = e { Some(t.as_str()) } else { None })
        .collect()
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| if let StreamEvent::Text(t) = e { Some(t.as_str()) } else { None })
        .collect()
}

fn calls_of(events: &[StreamEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| {
            if let StreamEvent::ToolCall(c) = e {
                Some((c.name.clone(), c.arguments.clone()))
            } else {
                None
            }
        })
        .collect()
}

/// The JSON payloads of every `data:` line.
fn payloads(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| *d != "[DONE]")
        .map(|d| {
            serde_json::from_str(d)
                .unwrap_or_else(|e| panic!("fixture payload is not JSON ({e}): {d}"))
        })
        .collect()
}

/// Expected result of a recording, extracted without any streaming logic.
struct Expected {
    text: String,
    /// Reasoning or thinking text: schema 2's `reasoning` deltas, never part of `text`.
    reasoning: String,
    calls: Vec<(String, String)>,
    error: Option<String>,
}

fn check<D: Decoder + Default>(path: &Path, expected: Expected) {
    let body = std::fs::read(path).unwrap();
    let name = path.display();
    for trickle in [false, true] {
        let (events, error) = run::<D>(&body, trickle);
        match &expected.error {
            Some(message) => {
                let error = error
                    .unwrap_or_else(|| panic!("{name}: expected an error containing {message:?}"));
                assert!(
                    error.contains(message.as_str()),
                    "{name}: {error:?} does not name {message:?}"
                );
                assert!(!error.contains('\n'), "{name}: error is not one line");
            }
            None => {
                assert_eq!(error, None, "{name}");
                assert_eq!(text_of(&events), expected.text, "{name}: text");
                assert_eq!(reasoning_of(&events), expected.reasoning, "{name}: reasoning");
                assert_eq!(calls_of(&events), expected.calls, "{name}: tool calls");
                let recorded_usage = String::from_utf8_lossy(&body).contains("sage");
                let decoded_usage = events.iter().any(|e| matches!(e, StreamEvent::Usage(_)));
                assert_eq!(decoded_usage, recorded_usage, "{name}: usage");
            }
        }
    }
}

fn openai_expected(body: &str) -> Expected {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls: std::collections::BTreeMap<u64, (String, String)> = Default::default();
    let mut error = None;
    for chunk in payloads(body) {
        if let Some(e) = chunk.get("error").filter(|e| !e.is_null()) {
            error = e.get("message").and_then(Value::as_str).map(str::to_string);
            break;
        }
        let Some(choice) = chunk["choices"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["index"].as_u64().unwrap_or(0) == 0))
        else {
            continue;
        };
        for key in ["content", "refusal"] {
            if let Some(t) = choice["delta"][key].as_str() {
                text.push_str(t);
            }
        }
        for key in ["reasoning_content", "reasoning"] {
            if let Some(t) = choice["delta"][key].as_str() {
                reasoning.push_str(t);
            }
        }
        for (i, call) in choice["delta"]["tool_calls"].as_array().into_iter().flatten().enumerate()
        {
            let index = call["index"].as_u64().unwrap_or(i as u64);
            let slot = calls.entry(index).or_default();
            if let Some(name) = call["function"]["name"].as_str() {
                slot.0 = name.to_string();
            }
            slot.1.push_str(call["function"]["arguments"].as_str().unwrap_or_default());
        }
    }
    let calls = calls
        .into_values()
        .map(|(n, a)| (n, if a.is_empty() { "{}".to_string() } else { a }))
        .collect();
    Expected { text, reasoning, calls, error }
}

fn anthropic_expected(body: &str) -> Expected {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut blocks: std::collections::BTreeMap<u64, (String, String, String)> = Default::default();
    let mut error = None;
    for event in payloads(body) {
        let index = event["index"].as_u64().unwrap_or(0);
        match event["type"].as_str().unwrap_or_default() {
            "content_block_start" if event["content_block"]["type"] == "tool_use" => {
                let input = &event["content_block"]["input"];
                let initial = if input.as_object().is_some_and(|m| !m.is_empty()) {
                    input.to_string()
                } else {
                    String::new()
                };
                blocks.insert(
                    index,
                    (
                        event["content_block"]["name"].as_str().unwrap_or_default().into(),
                        String::new(),
                        initial,
                    ),
                );
            }
            "content_block_delta" => match event["delta"]["type"].as_str() {
                Some("text_delta") => {
                    text.push_str(event["delta"]["text"].as_str().unwrap_or_default())
                }
                Some("thinking_delta") => {
                    reasoning.push_str(event["delta"]["thinking"].as_str().unwrap_or_default())
                }
                Some("input_json_delta") => {
                    if let Some(block) = blocks.get_mut(&index) {
                        block
                            .1
                            .push_str(event["delta"]["partial_json"].as_str().unwrap_or_default());
                    }
                }
                _ => {}
            },
            "error" => error = event["error"]["message"].as_str().map(str::to_string),
            _ => {}
        }
    }
    let calls = blocks
        .into_values()
        .map(|(name, fragments, initial)| {
            let args = if !fragments.is_empty() {
                fragments
            } else if !initial.is_empty() {
                initial
            } else {
                "{}".into()
            };
            (name, args)
        })
        .collect();
    Expected { text, reasoning, calls, error }
}

fn gemini_expected(body: &str) -> Expected {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    let mut error = None;
    // Text after the last SSE event that is a bare JSON error object (Vertex AI).
    let last_data =
        body.rfind("data:").map(|at| at + body[at..].find('\n').unwrap_or(0)).unwrap_or(0);
    let trailing = body[last_data..].trim();
    let sse_part = &body[..last_data];
    for chunk in payloads(sse_part) {
        if let Some(reason) = chunk["promptFeedback"]["blockReason"].as_str() {
            error = Some(format!("Content blocked: {reason}"));
            break;
        }
        let candidate = &chunk["candidates"][0];
        for part in candidate["content"]["parts"].as_array().into_iter().flatten() {
            if let Some(call) = part.get("functionCall") {
                calls.push((
                    call["name"].as_str().unwrap_or_default().to_string(),
                    call["args"].to_string(),
                ));
            } else if part["thought"] != true {
                text.push_str(part["text"].as_str().unwrap_or_default());
            } else {
                reasoning.push_str(part["text"].as_str().unwrap_or_default());
            }
        }
        if let Some(reason) =
            candidate["finishReason"].as_str().filter(|r| !matches!(*r, "STOP" | "MAX_TOKENS"))
        {
            error = Some(format!("finishReason {reason}"));
            break;
        }
    }
    if error.is_none() && !trailing.is_empty() {
        let value: Value = serde_json::from_str(trailing).expect("trailing text is JSON");
        error = value["error"]["message"].as_str().map(str::to_string);
    }
    Expected { text, reasoning, calls, error }
}

#[test]
fn recorded_chat_completions_streams_replay() {
    let Some(dir) = fixtures() else { return };
    let mut count = 0;
    let mut targets = files(&dir, "openai", |n| n.starts_with("chat-") && n.ends_with(".sse"));
    for sub in [
        "anthropic-openai-compat",
        "azure",
        "deepseek",
        "groq",
        "huggingface",
        "openrouter",
        "vllm",
    ] {
        targets.extend(files(&dir, sub, |n| n.ends_with(".sse")));
    }
    let mut reasoning = 0;
    for path in targets {
        let body = std::fs::read_to_string(&path).unwrap();
        let expected = openai_expected(&body);
        reasoning += usize::from(!expected.reasoning.is_empty());
        check::<OpenAiDecoder>(&path, expected);
        count += 1;
    }
    assert!(count >= 14, "only {count} chat recordings found");
    assert!(reasoning >= 1, "no chat recording streams reasoning (DeepSeek's does)");
}

/// Responses events: the text deltas, the finished function-call items, the first error.
fn responses_expected(body: &str) -> Expected {
    let mut expected =
        Expected { text: String::new(), reasoning: String::new(), calls: Vec::new(), error: None };
    for event in payloads(body) {
        match event["type"].as_str().unwrap_or_default() {
            "response.output_text.delta" => {
                expected.text.push_str(event["delta"].as_str().unwrap_or_default())
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                expected.reasoning.push_str(event["delta"].as_str().unwrap_or_default())
            }
            "response.output_item.done" if event["item"]["type"] == "function_call" => {
                let item = &event["item"];
                let field = |k: &str| item[k].as_str().unwrap_or_default().to_string();
                expected.calls.push((field("name"), field("arguments")));
            }
            "error" => {
                expected.error = event["error"]["message"].as_str().map(str::to_string);
                break;
            }
            "response.failed" => {
                expected.error = event["response"]["error"]["message"].as_str().map(str::to_string);
                break;
            }
            _ => {}
        }
    }
    expected
}

#[test]
fn recorded_responses_streams_replay() {
    let Some(dir) = fixtures() else { return };
    let targets = files(&dir, "openai", |n| n.starts_with("responses-") && n.ends_with(".sse"));
    assert!(targets.len() >= 3, "only {} Responses recordings found", targets.len());
    for path in targets {
        let body = std::fs::read_to_string(&path).unwrap();
        check::<ResponsesDecoder>(&path, responses_expected(&body));
    }
}

#[test]
fn recorded_anthropic_streams_replay() {
    let Some(dir) = fixtures() else { return };
    let targets = files(&dir, "anthropic", |n| n.ends_with(".sse"));
    assert!(!targets.is_empty());
    let mut thinking = 0;
    for path in targets {
        let body = std::fs::read_to_string(&path).unwrap();
        let expected = anthropic_expected(&body);
        thinking += usize::from(!expected.reasoning.is_empty());
        check::<AnthropicDecoder>(&path, expected);
    }
    assert!(thinking >= 1, "no Anthropic recording streams thinking");
}

#[test]
fn recorded_gemini_streams_replay() {
    let Some(dir) = fixtures() else { return };
    let targets = files(&dir, "gemini", |n| n.ends_with(".sse") || n.ends_with(".txt"));
    assert!(targets.len() >= 5);
    for path in targets {
        let body = std::fs::read_to_string(&path).unwrap();
        check::<GeminiDecoder>(&path, gemini_expected(&body));
    }
}

#[test]
fn recorded_error_bodies_become_one_line_provider_errors() {
    let Some(dir) = fixtures() else { return };
    let mut count = 0;
    for sub in ["openai", "anthropic", "gemini", "groq", "openrouter"] {
        for path in files(&dir, sub, |n| n.starts_with("error-") && n.ends_with(".json")) {
            let body = std::fs::read_to_string(&path).unwrap();
            let meta: Value = serde_json::from_str(
                &std::fs::read_to_string(format!("{}.meta.json", path.display())).unwrap(),
            )
            .unwrap();
            let status = meta["status"].as_u64().expect("status") as u16;
            let value: Value = serde_json::from_str(&body).unwrap();
            let own = value["error"]["message"]
                .as_str()
                .or(value[0]["error"]["message"].as_str())
                .expect("an error message");
            let err = status_error(status, "", &body, None);
            assert!(!err.message.contains('\n'), "{}", path.display());
            let own_line = crate::text::one_line(own);
            let shown: String = own_line.chars().take(200).collect();
            assert!(
                err.message.contains(&shown),
                "{}: {:?} lacks {shown:?}",
                path.display(),
                err.message
            );
            assert!(err.message.starts_with("Provider "), "{}", path.display());
            count += 1;
        }
    }
    assert!(count >= 10, "only {count} error bodies found");
}
