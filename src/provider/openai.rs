//! OpenAI Chat Completions, and every server that speaks it (Ollama, vLLM, llama.cpp,
//! OpenRouter, LiteLLM, LM Studio, Groq, DeepSeek): `POST {base}/chat/completions` with
//! `stream: true`.
//!
//! The decoder assembles tool-call fragments per `index` and emits each call as soon as its
//! arguments are complete: when a later call starts, at `finish_reason`, or at the end.
//! Reasoning deltas (`reasoning_content`, `reasoning`) never become answer text; refusals do.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::{
    append_within, parse_payload, stream_call, CallError, Decoder, Request, Sink, StreamEvent,
    MAX_CALL_ARGUMENTS,
};
use crate::conversation::{Message, Role, ToolCall};
use crate::error::Stop;
use crate::net::http::{body_detail, error_message, Http};
use crate::net::sse::Frame;
use crate::provider::models::{Effort, Usage};

/// Where an OpenAI-style call goes and how it gets in: the same for Chat Completions and
/// Responses.
pub struct Endpoint {
    pub http: Http,
    /// `{base}/chat/completions` or `{base}/responses`.
    pub url: String,
    pub api_key: Option<String>,
    /// How the key is sent: `authorization: Bearer`, or Azure's `api-key` header.
    pub key_header: KeyHeader,
    pub api_model: String,
    /// `prompt_cache_key`, so the calls of one session land on the same cache (the official
    /// API only: other servers may refuse a field they do not know).
    pub cache_key: Option<String>,
}

impl Endpoint {
    /// Posts one call's body and streams its answer through `decoder`.
    pub fn stream<D: super::Decoder>(
        &self,
        mut body: Value,
        decoder: fn() -> D,
        sink: &mut Sink<'_>,
    ) -> Result<(), Stop> {
        if let (Some(key), Some(body)) = (&self.cache_key, body.as_object_mut()) {
            body.insert("prompt_cache_key".into(), json!(key));
        }
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let headers: Vec<_> = self.api_key.iter().map(|key| self.key_header.header(key)).collect();
        stream_call(&self.http, &self.url, &headers, &body, decoder, sink)
    }
}

/// A configured OpenAI-compatible endpoint.
pub struct OpenAi {
    pub endpoint: Endpoint,
    /// Sent as `reasoning_effort` when set.
    pub effort: Option<Effort>,
    /// The output-token limit of every call, and the field it goes in.
    pub limit: OutputLimit,
}

/// The header that carries the API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyHeader {
    Bearer,
    /// Azure OpenAI's `api-key`.
    ApiKey,
}

impl KeyHeader {
    /// The header that carries `key`.
    pub fn header(self, key: &str) -> (&'static str, String) {
        match self {
            KeyHeader::Bearer => ("authorization", format!("Bearer {key}")),
            KeyHeader::ApiKey => ("api-key", key.to_string()),
        }
    }
}

/// The output-token limit of a call, in the field the server reads: the official API's
/// `max_completion_tokens` (its `max_tokens` is deprecated and refused by reasoning models), or
/// the `max_tokens` that compatible servers (llama.cpp, vLLM, Ollama, gateways) take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimit {
    pub tokens: u64,
    pub official: bool,
}

impl OpenAi {
    pub fn stream(&mut self, request: &Request<'_>, sink: &mut Sink<'_>) -> Result<(), Stop> {
        let body = request_body(&self.endpoint.api_model, self.effort, self.limit, request);
        self.endpoint.stream(body, OpenAiDecoder::default, sink)
    }
}

/// The JSON body of one call.
pub fn request_body(
    api_model: &str,
    effort: Option<Effort>,
    limit: OutputLimit,
    request: &Request<'_>,
) -> Value {
    let messages: Vec<Value> = request.messages.iter().map(message).collect();
    let mut body = Map::new();
    body.insert("model".into(), json!(api_model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(effort) = effort {
        body.insert("reasoning_effort".into(), json!(effort.name()));
    }
    let field = if limit.official { "max_completion_tokens" } else { "max_tokens" };
    body.insert(field.into(), json!(limit.tokens));
    Value::Object(body)
}

fn message(m: &Message) -> Value {
    match m.role {
        Role::System => json!({"role": "system", "content": m.content}),
        Role::User if !m.images.is_empty() => {
            let mut parts = Vec::new();
            if !m.content.is_empty() {
                parts.push(json!({"type": "text", "text": m.content}));
            }
            for image in &m.images {
                parts.push(json!({"type": "image_url", "image_url": {"url": image.data_url()}}));
            }
            json!({"role": "user", "content": parts})
        }
        Role::User => json!({"role": "user", "content": m.content}),
        Role::Tool => json!({
            "role": "tool",
            "content": m.content,
            "tool_call_id": m.tool_call_id.as_deref().unwrap_or_default(),
        }),
        Role::Assistant => {
            let mut out = Map::new();
            out.insert("role".into(), json!("assistant"));
            let content = if m.content.is_empty() { Value::Null } else { json!(m.content) };
            out.insert("content".into(), content);
            if !m.tool_calls.is_empty() {
                let calls = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "type": "function",
                               "function": {"name": c.name, "arguments": c.arguments}})
                    })
                    .collect();
                out.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(out)
        }
    }
}

/// A tool call being assembled.
#[derive(Debug, Default)]
struct Slot {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

/// Chat Completions chunks to events.
#[derive(Debug, Default)]
pub struct OpenAiDecoder {
    slots: BTreeMap<u64, Slot>,
    /// The index that received the latest fragment.
    open: Option<u64>,
    usage: Option<Usage>,
    finished: bool,
    done: bool,
    generated_ids: u32,
}

impl Decoder for OpenAiDecoder {
    fn feed(&mut self, frame: Frame, out: &mut Vec<StreamEvent>) -> Result<(), CallError> {
        let (name, data) = match frame {
            Frame::Event { name, data } => (name, data),
            Frame::Stray(text) => return self.stray(&text, out),
        };
        if data.trim() == "[DONE]" {
            self.done = true;
            self.complete_all(out);
            return Ok(());
        }
        let chunk = parse_payload("OpenAI", &data)?;
        if name.as_deref() == Some("error") || chunk.get("error").is_some_and(|e| !e.is_null()) {
            let detail = error_message(&chunk).unwrap_or_else(|| crate::text::summarize(&data));
            return Err(CallError::fatal(format!(
                "Provider returned error during streaming: {detail}"
            )));
        }
        if let Some(usage) = chunk
            .get("usage")
            .filter(|u| u.is_object())
            .or_else(|| chunk.pointer("/x_groq/usage"))
            .and_then(parse_usage)
        {
            self.usage = Some(usage);
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        // zero asks for one choice; a server that sends several is read for choice 0 only.
        let choice = choices.and_then(|c| {
            c.iter().find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        });
        if let Some(choice) = choice {
            self.choice(choice, out)?;
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        self.done
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), CallError> {
        self.complete_all(out);
        if !self.done && !self.finished {
            return Err(CallError::transient(
                "Provider stream ended before the model finished (no finish_reason or [DONE])",
                None,
            ));
        }
        if let Some(usage) = self.usage.take() {
            out.push(StreamEvent::Usage(usage));
        }
        Ok(())
    }
}

impl OpenAiDecoder {
    fn choice(&mut self, choice: &Value, out: &mut Vec<StreamEvent>) -> Result<(), CallError> {
        let delta = choice.get("delta").or_else(|| choice.get("message"));
        if let Some(delta) = delta {
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta.get(key).and_then(Value::as_str).filter(|t| !t.is_empty())
                {
                    out.push(StreamEvent::Reasoning(text.to_string()));
                }
            }
            for key in ["content", "refusal"] {
                if let Some(text) = delta.get(key).and_then(Value::as_str).filter(|t| !t.is_empty())
                {
                    out.push(StreamEvent::Text(text.to_string()));
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (position, call) in calls.iter().enumerate() {
                    self.fragment(call, position as u64, out)?;
                }
            }
        }
        match choice.get("finish_reason").and_then(Value::as_str) {
            None => {}
            Some(reason) => {
                self.finished = true;
                self.complete_all(out);
                match reason {
                    "content_filter" => {
                        return Err(CallError::fatal(
                            "Provider stopped the answer: content filter (finish_reason content_filter)",
                        ))
                    }
                    "length" => out.push(StreamEvent::cut_short()),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    fn fragment(
        &mut self,
        call: &Value,
        position: u64,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), CallError> {
        let index = call.get("index").and_then(Value::as_u64).unwrap_or(position);
        if let Some(open) = self.open.filter(|&open| open != index) {
            // A later call started: the earlier one's arguments are complete.
            self.complete(open, out);
        }
        self.open = Some(index);
        let id = call.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
        if let (Some(id), Some(slot)) = (id, self.slots.get(&index)) {
            if slot.id.as_deref().is_some_and(|old| old != id) {
                // Same index, new id: a new call reuses the slot.
                self.complete(index, out);
                self.open = Some(index);
            }
        }
        let slot = self.slots.entry(index).or_default();
        if let Some(id) = id {
            slot.id = Some(id.to_string());
        }
        let function = call.get("function");
        if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str) {
            if !name.is_empty() && slot.name.is_none() {
                slot.name = Some(name.to_string());
            }
        }
        let what = "a tool call's arguments";
        match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(fragment)) => {
                append_within(&mut slot.arguments, fragment, MAX_CALL_ARGUMENTS, what)
            }
            // Some servers send the arguments as an object rather than JSON text.
            Some(value @ Value::Object(_)) => {
                append_within(&mut slot.arguments, &value.to_string(), MAX_CALL_ARGUMENTS, what)
            }
            _ => Ok(()),
        }
    }

    fn complete(&mut self, index: u64, out: &mut Vec<StreamEvent>) {
        if self.open == Some(index) {
            self.open = None;
        }
        let Some(slot) = self.slots.remove(&index) else { return };
        // A call without a name cannot be run; Zero drops it too.
        let Some(name) = slot.name else { return };
        let id = slot.id.unwrap_or_else(|| {
            self.generated_ids += 1;
            format!("call_{}", self.generated_ids)
        });
        let arguments =
            if slot.arguments.trim().is_empty() { "{}".to_string() } else { slot.arguments };
        out.push(StreamEvent::ToolCall(ToolCall { id, name, arguments }));
    }

    fn complete_all(&mut self, out: &mut Vec<StreamEvent>) {
        let indices: Vec<u64> = self.slots.keys().copied().collect();
        for index in indices {
            self.complete(index, out);
        }
    }

    /// A body that is not an event stream: a non-streamed completion (some servers ignore
    /// `stream: true`) is still an answer; anything else is an error naming what came back.
    fn stray(&mut self, text: &str, out: &mut Vec<StreamEvent>) -> Result<(), CallError> {
        if let Ok(value) = serde_json::from_str::<Value>(text.trim()) {
            if value.get("choices").is_some() && value.get("error").is_none() {
                return self.feed(Frame::Event { name: None, data: value.to_string() }, out);
            }
        }
        let detail = body_detail(text).unwrap_or_default();
        Err(CallError::fatal(format!(
            "Provider returned a response that is not an event stream: {detail}"
        )))
    }
}

/// `{prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens}`.
fn parse_usage(usage: &Value) -> Option<Usage> {
    let number = |path: &str| usage.pointer(path).and_then(Value::as_u64);
    let prompt = number("/prompt_tokens");
    let completion = number("/completion_tokens");
    if prompt.is_none() && completion.is_none() {
        return None;
    }
    let cached = number("/prompt_tokens_details/cached_tokens")
        .or_else(|| number("/prompt_cache_hit_tokens"));
    Some(Usage {
        prompt_tokens: prompt.unwrap_or(0),
        completion_tokens: completion.unwrap_or(0),
        cached_tokens: cached.unwrap_or(0),
        cache_write_tokens: 0,
        cache_read_reported: cached.is_some(),
        cache_write_reported: false,
    })
}

#[cfg(test)]
mod tests;
