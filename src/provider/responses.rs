//! The OpenAI Responses API: `POST {base}/responses` with `stream: true` and `store: false`.
//! Used for OpenAI's reasoning models (and wherever `ZERO_OPENAI_API=responses` asks for it:
//! vLLM and llama.cpp serve it too).
//!
//! Nothing is stored at OpenAI, so each call sends the whole conversation: system messages as
//! `instructions`, messages, `function_call` and `function_call_output` items, and the
//! reasoning items of earlier turns as they came back (encrypted, `include:
//! ["reasoning.encrypted_content"]`), so the model keeps its chain of thought across tool calls.
//! Reasoning summaries and reasoning text are reasoning, never answer text.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::{
    append_within, event_data, parse_payload, CallError, Decoder, Request, Sink, StreamEvent,
    MAX_CALL_ARGUMENTS,
};
use crate::conversation::{Message, Role, ToolCall};
use crate::error::Stop;
use crate::net::http::error_message;
use crate::net::sse::Frame;
use crate::provider::models::{Effort, Usage};

use super::openai::Endpoint;

/// A configured Responses endpoint.
pub struct Responses {
    pub endpoint: Endpoint,
    /// Sent as `reasoning.effort` when set.
    pub effort: Option<Effort>,
    /// Whether to ask for encrypted reasoning items (reasoning models only: others refuse).
    pub reasoning: bool,
    /// `max_output_tokens`.
    pub max_tokens: u64,
}

impl Responses {
    pub fn stream(&mut self, request: &Request<'_>, sink: &mut Sink<'_>) -> Result<(), Stop> {
        let settings = Settings {
            api_model: &self.endpoint.api_model,
            effort: self.effort,
            reasoning: self.reasoning,
            max_tokens: self.max_tokens,
        };
        self.endpoint.stream(request_body(&settings, request), ResponsesDecoder::default, sink)
    }
}

/// What a request body depends on besides the conversation.
pub struct Settings<'a> {
    pub api_model: &'a str,
    pub effort: Option<Effort>,
    pub reasoning: bool,
    pub max_tokens: u64,
}

/// The JSON body of one call.
pub fn request_body(settings: &Settings<'_>, request: &Request<'_>) -> Value {
    let instructions: Vec<&str> = request
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    let mut input = Vec::new();
    for m in request.messages.iter().filter(|m| m.role != Role::System) {
        items(m, &mut input);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(settings.api_model));
    if !instructions.is_empty() {
        body.insert("instructions".into(), json!(instructions.join("\n\n")));
    }
    body.insert("input".into(), Value::Array(input));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.parameters, "strict": false})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    body.insert("store".into(), json!(false));
    body.insert("max_output_tokens".into(), json!(settings.max_tokens));
    if let Some(effort) = settings.effort {
        body.insert("reasoning".into(), json!({"effort": effort.name()}));
    }
    if settings.reasoning {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    Value::Object(body)
}

/// The input items of one message.
fn items(m: &Message, out: &mut Vec<Value>) {
    match m.role {
        Role::System => {}
        Role::User if !m.images.is_empty() => {
            let mut parts = Vec::new();
            if !m.content.is_empty() {
                parts.push(json!({"type": "input_text", "text": m.content}));
            }
            for image in &m.images {
                parts.push(json!({"type": "input_image", "image_url": image.data_url()}));
            }
            out.push(json!({"role": "user", "content": parts}));
        }
        Role::User => out.push(json!({"role": "user", "content": m.content})),
        Role::Tool => out.push(json!({
            "type": "function_call_output",
            "call_id": m.tool_call_id.as_deref().unwrap_or_default(),
            "output": m.content,
        })),
        Role::Assistant => {
            // The turn's reasoning items come first, as the model produced them.
            out.extend(m.native.iter().filter(|n| n["type"] == "reasoning").cloned());
            if !m.content.is_empty() {
                out.push(json!({"role": "assistant", "content": m.content}));
            }
            for call in &m.tool_calls {
                out.push(json!({"type": "function_call", "call_id": call.id,
                                "name": call.name, "arguments": call.arguments}));
            }
        }
    }
}

/// A function call being assembled.
#[derive(Debug, Default)]
struct Slot {
    call_id: Option<String>,
    name: Option<String>,
    arguments: String,
}

/// Responses stream events to zero's events.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    /// Open function calls by output index.
    slots: BTreeMap<u64, Slot>,
    ended: bool,
    generated_ids: u32,
}

impl Decoder for ResponsesDecoder {
    fn feed(&mut self, frame: Frame, out: &mut Vec<StreamEvent>) -> Result<(), CallError> {
        let Some(data) = event_data(frame)? else { return Ok(()) };
        let event = parse_payload("OpenAI Responses", &data)?;
        let index = event.get("output_index").and_then(Value::as_u64).unwrap_or(0);
        let text = |key: &str| event.get(key).and_then(Value::as_str).unwrap_or_default();
        match text("type") {
            "response.output_text.delta" | "response.refusal.delta"
                if !text("delta").is_empty() =>
            {
                out.push(StreamEvent::Text(text("delta").to_string()));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta"
                if !text("delta").is_empty() =>
            {
                out.push(StreamEvent::Reasoning(text("delta").to_string()));
            }
            "response.output_item.added" => {
                let item = event.get("item").unwrap_or(&Value::Null);
                if item["type"] == "function_call" {
                    let slot = self.slots.entry(index).or_default();
                    slot.call_id = item["call_id"].as_str().map(str::to_string);
                    slot.name = item["name"].as_str().map(str::to_string);
                }
            }
            "response.function_call_arguments.delta" => {
                let slot = self.slots.entry(index).or_default();
                let what = "a tool call's arguments";
                append_within(&mut slot.arguments, text("delta"), MAX_CALL_ARGUMENTS, what)?;
            }
            "response.output_item.done" => {
                let item = event.get("item").unwrap_or(&Value::Null);
                match item["type"].as_str() {
                    Some("function_call") => self.complete(index, item, out),
                    Some("reasoning") => out.push(StreamEvent::Native(reasoning_item(item))),
                    _ => {}
                }
            }
            "response.completed" => {
                self.ended = true;
                self.usage(&event, out);
            }
            "response.incomplete" => {
                self.ended = true;
                self.usage(&event, out);
                let reason = event.pointer("/response/incomplete_details/reason");
                match reason.and_then(Value::as_str) {
                    Some("max_output_tokens") | None => out.push(StreamEvent::cut_short()),
                    Some(other) => {
                        return Err(CallError::fatal(format!(
                            "Provider stopped the answer: {other} (response.incomplete)"
                        )))
                    }
                }
            }
            "response.failed" | "error" => return Err(failure(&event, &data)),
            _ => {}
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        self.ended
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), CallError> {
        let open: Vec<u64> = self.slots.keys().copied().collect();
        for index in open {
            self.complete(index, &Value::Null, out);
        }
        if !self.ended {
            return Err(CallError::transient(
                "Provider stream ended before the model finished (no response.completed)",
                None,
            ));
        }
        Ok(())
    }
}

impl ResponsesDecoder {
    /// Emits a call: the item's own name and arguments when it has them (they are final),
    /// else what the deltas assembled.
    fn complete(&mut self, index: u64, item: &Value, out: &mut Vec<StreamEvent>) {
        let slot = self.slots.remove(&index).unwrap_or_default();
        let name = item["name"].as_str().map(str::to_string).or(slot.name);
        // A call without a name cannot be run.
        let Some(name) = name.filter(|n| !n.is_empty()) else { return };
        let given = |id: Option<String>| id.filter(|id| !id.is_empty());
        let id = given(item["call_id"].as_str().map(str::to_string))
            .or_else(|| given(slot.call_id))
            .unwrap_or_else(|| {
                self.generated_ids += 1;
                format!("call_{}", self.generated_ids)
            });
        let arguments = item["arguments"].as_str().map(str::to_string).unwrap_or(slot.arguments);
        let arguments = if arguments.trim().is_empty() { "{}".to_string() } else { arguments };
        out.push(StreamEvent::ToolCall(ToolCall { id, name, arguments }));
    }

    /// `response.usage`: input tokens include the cached ones; output tokens include
    /// reasoning.
    fn usage(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let Some(usage) = event.pointer("/response/usage").filter(|u| u.is_object()) else {
            return;
        };
        let n = |path: &str| usage.pointer(path).and_then(Value::as_u64);
        let cached = n("/input_tokens_details/cached_tokens");
        out.push(StreamEvent::Usage(Usage {
            prompt_tokens: n("/input_tokens").unwrap_or(0),
            completion_tokens: n("/output_tokens").unwrap_or(0),
            cached_tokens: cached.unwrap_or(0),
            cache_write_tokens: 0,
            cache_read_reported: cached.is_some(),
            cache_write_reported: false,
        }));
    }
}

/// A reasoning item as it is sent back: its id, summary and encrypted content, nothing of
/// the output's bookkeeping (status).
fn reasoning_item(item: &Value) -> Value {
    let mut kept = Map::new();
    kept.insert("type".into(), json!("reasoning"));
    for key in ["id", "summary", "encrypted_content"] {
        if let Some(value) = item.get(key).filter(|v| !v.is_null()) {
            kept.insert(key.into(), value.clone());
        }
    }
    if !kept.contains_key("summary") {
        kept.insert("summary".into(), json!([]));
    }
    Value::Object(kept)
}

/// `error` and `response.failed`: the provider's message; rate limits and server errors may
/// pass if tried again.
fn failure(event: &Value, data: &str) -> CallError {
    let error =
        event.get("error").filter(|e| e.is_object()).or_else(|| event.pointer("/response/error"));
    let code = error.and_then(|e| e.get("code")).and_then(Value::as_str).unwrap_or_default();
    let detail = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .map(crate::text::summarize)
        .or_else(|| error_message(event))
        .unwrap_or_else(|| crate::text::summarize(data));
    let message = format!("Provider returned error during streaming: {detail}");
    match code {
        "rate_limit_exceeded" | "server_error" | "server_is_overloaded" => {
            CallError::transient(message, None)
        }
        _ => CallError::fatal(message),
    }
}

#[cfg(test)]
mod tests;
