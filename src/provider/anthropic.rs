//! Anthropic Messages streaming: `POST {base}/v1/messages`.
//!
//! Text deltas become answer text; thinking deltas never do (they are kept, with their
//! signature, to be sent back while a tool loop runs, as the API requires). A tool_use block's
//! input arrives as `input_json_delta` fragments and the call is complete at its
//! `content_block_stop`. A non-empty initial `input` is used only when no fragment follows, so
//! the two are never concatenated into invalid JSON (as Zero once did).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::{
    append_within, arguments_object, event_data, parse_payload, stream_call, CallError, Decoder,
    Request, Sink, StreamEvent, MAX_CALL_ARGUMENTS, MAX_TURN_REASONING,
};
use crate::conversation::{Message, Role, ToolCall};
use crate::error::Stop;
use crate::net::http::{error_message, Http};
use crate::net::sse::Frame;
use crate::provider::models::{Effort, Usage};

pub const API_VERSION: &str = "2023-06-01";

pub struct Anthropic {
    pub http: Http,
    /// `{base}/v1/messages`.
    pub url: String,
    pub api_key: String,
    pub api_model: String,
    pub max_tokens: u64,
    pub effort: Option<Effort>,
    /// Mark cache breakpoints (config `promptCache`).
    pub cache: bool,
}

impl Anthropic {
    pub fn stream(&mut self, request: &Request<'_>, sink: &mut Sink<'_>) -> Result<(), Stop> {
        let mut body = request_body(&self.api_model, self.max_tokens, self.effort, request)
            .map_err(|e| Stop::from(crate::error::Failure::Provider(e.message)))?;
        if self.cache {
            mark_cache_breakpoints(&mut body);
        }
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let mut headers = vec![("anthropic-version", API_VERSION.to_string())];
        // A local server may need no key; an empty header would still be a wrong one.
        if !self.api_key.is_empty() {
            headers.push(("x-api-key", self.api_key.clone()));
        }
        stream_call(&self.http, &self.url, &headers, &body, AnthropicDecoder::default, sink)
    }
}

/// The thinking budget for an effort, kept below `max_tokens` as the API requires (none when
/// the output limit leaves no room for the smallest budget).
fn thinking_budget(effort: Effort, max_tokens: u64) -> Option<u64> {
    if max_tokens <= crate::provider::models::MIN_THINKING_BUDGET {
        return None;
    }
    let budget = match effort {
        Effort::None => return None,
        Effort::Minimal | Effort::Low => 4_096,
        Effort::Medium => 16_384,
        Effort::High | Effort::XHigh => 32_768,
    };
    Some(budget.min(max_tokens / 2).max(crate::provider::models::MIN_THINKING_BUDGET))
}

/// The JSON body of one call.
pub fn request_body(
    api_model: &str,
    max_tokens: u64,
    effort: Option<Effort>,
    request: &Request<'_>,
) -> Result<Value, CallError> {
    let mut system: Vec<&str> = Vec::new();
    let mut messages: Vec<(String, Vec<Value>)> = Vec::new();
    for m in request.messages {
        match m.role {
            Role::System => {
                if !m.content.trim().is_empty() {
                    system.push(&m.content);
                }
            }
            Role::User => {
                // Images first, as Anthropic advises, then the text about them.
                for image in &m.images {
                    push_user(
                        &mut messages,
                        json!({"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}}),
                    );
                }
                if !m.content.is_empty() {
                    push_user(&mut messages, json!({"type": "text", "text": m.content}));
                }
            }
            Role::Tool => {
                let id = m.tool_call_id.as_deref().ok_or_else(|| {
                    CallError::fatal(
                        "Zero Anthropic provider requires toolCallId on tool result messages",
                    )
                })?;
                push_user(
                    &mut messages,
                    json!({"type": "tool_result", "tool_use_id": id, "content": m.content}),
                );
            }
            Role::Assistant => messages.push(("assistant".to_string(), assistant_blocks(m)?)),
        }
    }
    if messages.is_empty() {
        return Err(CallError::fatal(
            "Zero Anthropic provider requires at least one non-system message",
        ));
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, blocks)| {
            // A lone text block goes as a plain string.
            let content = match blocks.as_slice() {
                [block] if block["type"] == "text" => block["text"].clone(),
                _ => Value::Array(blocks),
            };
            json!({"role": role, "content": content})
        })
        .collect();
    let mut body = Map::new();
    body.insert("model".into(), json!(api_model));
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(budget) = effort.and_then(|e| thinking_budget(e, max_tokens)) {
        body.insert("thinking".into(), json!({"type": "enabled", "budget_tokens": budget}));
    }
    Ok(Value::Object(body))
}

/// The breakpoint Anthropic caches a prefix up to.
fn breakpoint() -> Value {
    json!({"type": "ephemeral"})
}

/// Marks where Anthropic may cache the request's prefix (the API caches only marked
/// prefixes, at most 4 marks): the last system block, so the tools and the system prompt are
/// one cached prefix; the end of the newest message, which the next call reads back; and the
/// end of the message that ended the previous call (the user message before the newest
/// assistant turn), so this call reads what that one wrote however many blocks came since.
pub fn mark_cache_breakpoints(body: &mut Value) {
    let Some(body) = body.as_object_mut() else { return };
    match body.get_mut("system") {
        Some(system @ Value::String(_)) => {
            let text = system.take();
            *system = json!([{"type": "text", "text": text, "cache_control": breakpoint()}]);
        }
        _ => {
            // No system prompt: the tools alone are the prefix.
            let last_tool =
                body.get_mut("tools").and_then(Value::as_array_mut).and_then(|t| t.last_mut());
            if let Some(Value::Object(tool)) = last_tool {
                tool.insert("cache_control".into(), breakpoint());
            }
        }
    }
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else { return };
    let newest = messages.len().checked_sub(1);
    let last_assistant = messages.iter().rposition(|m| m["role"] == "assistant");
    let previous_end = last_assistant.and_then(|a| a.checked_sub(1));
    for index in [previous_end, newest].into_iter().flatten() {
        let content = &mut messages[index]["content"];
        if let Value::String(text) = content {
            *content = json!([{"type": "text", "text": text}]);
        }
        if let Some(Value::Object(block)) = content.as_array_mut().and_then(|b| b.last_mut()) {
            block.insert("cache_control".into(), breakpoint());
        }
    }
}

/// User-side items merge into one user message with a block list.
fn push_user(messages: &mut Vec<(String, Vec<Value>)>, block: Value) {
    match messages.last_mut() {
        Some((role, blocks)) if role == "user" => blocks.push(block),
        _ => messages.push(("user".to_string(), vec![block])),
    }
}

fn assistant_blocks(m: &Message) -> Result<Vec<Value>, CallError> {
    let mut blocks: Vec<Value> = m.native.clone();
    if !m.content.is_empty() {
        blocks.push(json!({"type": "text", "text": m.content}));
    }
    for call in &m.tool_calls {
        let input = arguments_object(call, "Anthropic")?;
        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    Ok(blocks)
}

/// A content block being streamed.
#[derive(Debug)]
enum Block {
    Tool { id: String, name: String, initial: String, fragments: String, fragmented: bool },
    Thinking { text: String, signature: String },
}

/// Messages stream events to zero's events.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    blocks: BTreeMap<u64, Block>,
    usage: Option<TokenCounts>,
    stopped: bool,
}

/// The token counts of one message as they arrive: `message_start` and `message_delta` may
/// each carry any of them (the API sends cumulative values; gateways and local servers send
/// the cache counts in either), and the latest value of each wins.
#[derive(Debug, Default, Clone, Copy)]
struct TokenCounts {
    input: u64,
    cache_read: u64,
    cache_creation: u64,
    output: u64,
    /// Each cache count was sent.
    cache_read_reported: bool,
    cache_write_reported: bool,
}

impl TokenCounts {
    fn update(&mut self, usage: &Value) {
        let slots = [
            ("input_tokens", &mut self.input),
            ("cache_read_input_tokens", &mut self.cache_read),
            ("cache_creation_input_tokens", &mut self.cache_creation),
            ("output_tokens", &mut self.output),
        ];
        for (key, slot) in slots {
            if let Some(n) = usage.get(key).and_then(Value::as_u64) {
                *slot = n;
            }
        }
        let sent = |key: &str| usage.get(key).is_some_and(Value::is_u64);
        self.cache_read_reported |= sent("cache_read_input_tokens");
        self.cache_write_reported |= sent("cache_creation_input_tokens");
    }

    /// Every input token is a prompt token: fresh, read from the cache, or written to it.
    fn usage(self) -> Usage {
        Usage {
            prompt_tokens: self.input + self.cache_read + self.cache_creation,
            completion_tokens: self.output,
            cached_tokens: self.cache_read,
            cache_write_tokens: self.cache_creation,
            cache_read_reported: self.cache_read_reported,
            cache_write_reported: self.cache_write_reported,
        }
    }
}

/// An `error` event in the stream: overloaded, API and rate-limit errors may pass if the call
/// is tried again.
fn stream_error(event: &Value) -> CallError {
    let detail = error_message(event).unwrap_or_else(|| {
        event
            .pointer("/error/type")
            .and_then(Value::as_str)
            .unwrap_or("Anthropic stream error")
            .to_string()
    });
    let kind = event.pointer("/error/type").and_then(Value::as_str).unwrap_or_default();
    let message = format!("Provider returned error during streaming: {detail}");
    if matches!(kind, "overloaded_error" | "api_error" | "rate_limit_error") {
        CallError::transient(message, None)
    } else {
        CallError::fatal(message)
    }
}

impl Decoder for AnthropicDecoder {
    fn feed(&mut self, frame: Frame, out: &mut Vec<StreamEvent>) -> Result<(), CallError> {
        let Some(data) = event_data(frame)? else { return Ok(()) };
        let event = parse_payload("Anthropic", &data)?;
        let index = event.get("index").and_then(Value::as_u64);
        match event.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message_start" => {
                if let Some(usage) = event.pointer("/message/usage") {
                    self.usage.get_or_insert_with(TokenCounts::default).update(usage);
                }
            }
            "content_block_start" => {
                let block = event.get("content_block").cloned().unwrap_or(Value::Null);
                if let Some(index) = index {
                    self.block_start(index, block, out);
                }
            }
            "content_block_delta" => {
                let delta = event.get("delta").cloned().unwrap_or(Value::Null);
                self.block_delta(index, &delta, out)?;
            }
            "content_block_stop" => {
                if let Some(block) = index.and_then(|i| self.blocks.remove(&i)) {
                    finish_block(block, out);
                }
            }
            "message_delta" => {
                if let Some(usage) = event.get("usage") {
                    self.usage.get_or_insert_with(TokenCounts::default).update(usage);
                }
                match event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    Some("max_tokens") => out.push(StreamEvent::cut_short()),
                    Some("refusal") => {
                        return Err(CallError::fatal(
                            "Provider stopped the answer: refusal (stop_reason refusal)",
                        ))
                    }
                    _ => {}
                }
            }
            "message_stop" => {
                self.stopped = true;
                self.close(out);
            }
            "error" => return Err(stream_error(&event)),
            _ => {}
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        self.stopped
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), CallError> {
        if !self.stopped {
            self.close(out);
            return Err(CallError::transient(
                "Provider stream ended before the model finished (no message_stop)",
                None,
            ));
        }
        Ok(())
    }
}

impl AnthropicDecoder {
    /// A content block begins: a tool call or thinking is kept until it stops; redacted
    /// thinking is passed on as it is, to be sent back.
    fn block_start(&mut self, index: u64, block: Value, out: &mut Vec<StreamEvent>) {
        match block.get("type").and_then(Value::as_str) {
            Some("tool_use") => {
                let text =
                    |k: &str| block.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
                let initial = match block.get("input") {
                    Some(Value::Object(map)) if !map.is_empty() => {
                        Value::Object(map.clone()).to_string()
                    }
                    _ => String::new(),
                };
                let (id, name) = (text("id"), text("name"));
                let fragments = String::new();
                let tool = Block::Tool { id, name, initial, fragments, fragmented: false };
                self.blocks.insert(index, tool);
            }
            Some("thinking") => {
                let text =
                    block.get("thinking").and_then(Value::as_str).unwrap_or_default().to_string();
                self.blocks.insert(index, Block::Thinking { text, signature: String::new() });
            }
            Some("redacted_thinking") => out.push(StreamEvent::Native(block)),
            _ => {}
        }
    }

    /// A piece of a block: text goes out at once, arguments and thinking signatures are kept,
    /// thinking does both.
    fn block_delta(
        &mut self,
        index: Option<u64>,
        delta: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), CallError> {
        let field = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or_default();
        let block = index.and_then(|i| self.blocks.get_mut(&i));
        match (delta.get("type").and_then(Value::as_str), block) {
            (Some("text_delta"), _) if !field("text").is_empty() => {
                out.push(StreamEvent::Text(field("text").to_string()))
            }
            (Some("input_json_delta"), Some(Block::Tool { fragments, fragmented, .. })) => {
                let what = "a tool call's arguments";
                append_within(fragments, field("partial_json"), MAX_CALL_ARGUMENTS, what)?;
                *fragmented |= !field("partial_json").is_empty();
            }
            (Some("thinking_delta"), block) => {
                let piece = field("thinking");
                if let Some(Block::Thinking { text, .. }) = block {
                    append_within(text, piece, MAX_TURN_REASONING, "reasoning text")?;
                }
                if !piece.is_empty() {
                    out.push(StreamEvent::Reasoning(piece.to_string()));
                }
            }
            (Some("signature_delta"), Some(Block::Thinking { signature, .. })) => {
                let what = "a thinking signature";
                append_within(signature, field("signature"), MAX_TURN_REASONING, what)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Completes every open block and reports usage (once).
    fn close(&mut self, out: &mut Vec<StreamEvent>) {
        for (_, block) in std::mem::take(&mut self.blocks) {
            finish_block(block, out);
        }
        if let Some(counts) = self.usage.take() {
            out.push(StreamEvent::Usage(counts.usage()));
        }
    }
}

fn finish_block(block: Block, out: &mut Vec<StreamEvent>) {
    match block {
        // A call without a name cannot be run; it is dropped, as Zero does.
        Block::Tool { name, .. } if name.is_empty() => {}
        Block::Tool { id, name, initial, fragments, fragmented } => {
            let id = if id.is_empty() { format!("toolu_{name}") } else { id };
            let arguments = if fragmented { fragments } else { initial };
            let arguments = if arguments.trim().is_empty() { "{}".to_string() } else { arguments };
            out.push(StreamEvent::ToolCall(ToolCall { id, name, arguments }));
        }
        Block::Thinking { text, signature } => {
            out.push(StreamEvent::Native(
                json!({"type": "thinking", "thinking": text, "signature": signature}),
            ));
        }
    }
}

#[cfg(test)]
mod tests;
