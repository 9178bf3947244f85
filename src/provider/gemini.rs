//! Google Gemini: `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`.
//!
//! Function calls arrive whole, in candidate parts or in a top-level `functionCalls` list (the
//! same call in both is reported once). Thought parts are reasoning, never answer text. A
//! blocked prompt and a `SAFETY`-class finish are provider errors that say so. Tool schemas are
//! reduced to the subset Gemini accepts.

use serde_json::{json, Map, Value};

use super::{
    arguments_object, parse_payload, stream_call, CallError, Decoder, Request, Sink, StreamEvent,
};
use crate::conversation::{Message, Role, ToolCall};
use crate::error::Stop;
use crate::net::http::{body_detail, error_message, Http};
use crate::net::sse::Frame;
use crate::provider::models::{Effort, Usage};

pub struct Gemini {
    pub http: Http,
    pub base_url: String,
    pub api_key: String,
    pub api_model: String,
    pub max_tokens: u64,
    pub effort: Option<Effort>,
}

impl Gemini {
    pub fn stream(&mut self, request: &Request<'_>, sink: &mut Sink<'_>) -> Result<(), Stop> {
        let fail = |e: CallError| Stop::from(crate::error::Failure::Provider(e.message));
        let url = stream_url(&self.base_url, &self.api_model).map_err(fail)?;
        let thinking = Thinking::of(&self.api_model, self.effort);
        let body = request_body(self.max_tokens, thinking, request).map_err(fail)?;
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let mut headers = Vec::new();
        if !self.api_key.is_empty() {
            headers.push(("x-goog-api-key", self.api_key.clone()));
        }
        stream_call(&self.http, &url, &headers, &body, GeminiDecoder::default, sink)
    }
}

/// The streaming URL; the model name is trimmed, `models/` removed, and percent-encoded.
pub fn stream_url(base: &str, model: &str) -> Result<String, CallError> {
    let model = model.trim();
    let model = model.strip_prefix("models/").unwrap_or(model);
    if model.is_empty() {
        return Err(CallError::fatal("Zero Gemini provider requires a model"));
    }
    let mut encoded = String::new();
    for b in model.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(format!(
        "{}/v1beta/models/{encoded}:streamGenerateContent?alt=sse",
        base.trim_end_matches('/')
    ))
}

/// How a call asks for thinking: Gemini 2.5 takes a token budget, Gemini 3 a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thinking {
    Off,
    Budget(Effort),
    Level(Effort),
}

impl Thinking {
    pub fn of(api_model: &str, effort: Option<Effort>) -> Thinking {
        match effort {
            None => Thinking::Off,
            Some(effort) if api_model.starts_with("gemini-3") => Thinking::Level(effort),
            Some(effort) => Thinking::Budget(effort),
        }
    }
}

fn thinking_budget(effort: Effort) -> Option<u64> {
    match effort {
        Effort::None => None,
        Effort::Minimal | Effort::Low => Some(1_024),
        Effort::Medium => Some(8_192),
        Effort::High | Effort::XHigh => Some(24_576),
    }
}

/// The JSON body of one call.
pub fn request_body(
    max_tokens: u64,
    thinking: Thinking,
    request: &Request<'_>,
) -> Result<Value, CallError> {
    let (system, contents) = conversation(request)?;
    let mut generation = Map::new();
    generation.insert("maxOutputTokens".into(), json!(max_tokens));
    match thinking {
        Thinking::Off => {}
        Thinking::Budget(effort) => {
            if let Some(budget) = thinking_budget(effort) {
                generation.insert("thinkingConfig".into(), json!({"thinkingBudget": budget}));
            }
        }
        Thinking::Level(effort) => {
            generation.insert("thinkingConfig".into(), json!({"thinkingLevel": effort.name()}));
        }
    }
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    body.insert("generationConfig".into(), Value::Object(generation));
    if !system.is_empty() {
        body.insert("systemInstruction".into(), json!({"parts": system}));
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                // Gemini's `parameters` takes a subset of JSON Schema; an output schema goes
                // whole as `parametersJsonSchema`.
                if t.full_schema {
                    json!({"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters})
                } else {
                    json!({"name": t.name, "description": t.description, "parameters": reduce_schema(&t.parameters)})
                }
            })
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": declarations}]));
    }
    Ok(Value::Object(body))
}

/// The messages as Gemini takes them: the system parts apart, then turns of `user` and
/// `model` parts (a tool result is a user part naming the function it answers).
fn conversation(request: &Request<'_>) -> Result<(Vec<Value>, Vec<Value>), CallError> {
    let mut system: Vec<Value> = Vec::new();
    let mut contents: Vec<(String, Vec<Value>)> = Vec::new();
    let mut call_names: Vec<(&str, &str)> = Vec::new();
    for m in request.messages {
        match m.role {
            Role::System => {
                if !m.content.trim().is_empty() {
                    system.push(json!({"text": m.content}));
                }
            }
            Role::User => {
                if !m.content.is_empty() {
                    push_user(&mut contents, json!({"text": m.content}));
                }
                for image in &m.images {
                    push_user(
                        &mut contents,
                        json!({"inlineData": {"mimeType": image.media_type, "data": image.data}}),
                    );
                }
            }
            Role::Tool => {
                let id = m.tool_call_id.as_deref().ok_or_else(|| {
                    CallError::fatal(
                        "Zero Gemini provider requires toolCallId on tool result messages",
                    )
                })?;
                let name = m
                    .tool_name
                    .as_deref()
                    .or_else(|| call_names.iter().find(|(i, _)| *i == id).map(|(_, n)| *n))
                    .unwrap_or(id);
                push_user(
                    &mut contents,
                    json!({"functionResponse": {"id": id, "name": name, "response": {"result": m.content}}}),
                );
            }
            Role::Assistant => {
                for call in &m.tool_calls {
                    call_names.push((&call.id, &call.name));
                }
                let parts = model_parts(m)?;
                if !parts.is_empty() {
                    contents.push(("model".to_string(), parts));
                }
            }
        }
    }
    if contents.is_empty() {
        return Err(CallError::fatal(
            "Zero Gemini provider requires at least one non-system message",
        ));
    }
    let contents =
        contents.into_iter().map(|(role, parts)| json!({"role": role, "parts": parts})).collect();
    Ok((system, contents))
}

fn push_user(contents: &mut Vec<(String, Vec<Value>)>, part: Value) {
    match contents.last_mut() {
        Some((role, parts)) if role == "user" => parts.push(part),
        _ => contents.push(("user".to_string(), vec![part])),
    }
}

/// An assistant turn as Gemini `model` parts: the parts it sent, when kept (they carry thought
/// signatures), else text and function calls.
fn model_parts(m: &Message) -> Result<Vec<Value>, CallError> {
    if !m.native.is_empty() {
        return Ok(m.native.clone());
    }
    let mut parts = Vec::new();
    if !m.content.is_empty() {
        parts.push(json!({"text": m.content}));
    }
    for call in &m.tool_calls {
        let args = arguments_object(call, "Gemini")?;
        parts.push(json!({"functionCall": {"id": call.id, "name": call.name, "args": args}}));
    }
    Ok(parts)
}

/// The subset of JSON Schema that Gemini's function declarations accept: no
/// `additionalProperties`, no string length limits, no `$schema`.
pub fn reduce_schema(schema: &Value) -> Value {
    const KEEP: &[&str] = &[
        "type",
        "description",
        "enum",
        "properties",
        "required",
        "items",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "nullable",
        "format",
        "anyOf",
    ];
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                if !KEEP.contains(&key.as_str()) {
                    continue;
                }
                let value = match key.as_str() {
                    "properties" => match value {
                        Value::Object(props) => Value::Object(
                            props.iter().map(|(k, v)| (k.clone(), reduce_schema(v))).collect(),
                        ),
                        other => other.clone(),
                    },
                    "items" => reduce_schema(value),
                    "anyOf" => match value {
                        Value::Array(list) => {
                            Value::Array(list.iter().map(reduce_schema).collect())
                        }
                        other => other.clone(),
                    },
                    _ => value.clone(),
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// A chunk that ends the call: an error, or a prompt the provider blocked.
fn refused(chunk: &Value) -> Result<(), CallError> {
    if chunk.get("error").is_some_and(|e| !e.is_null()) {
        let detail = error_message(chunk)
            .or_else(|| chunk.pointer("/error/status").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(|| "Gemini stream error".to_string());
        return Err(CallError::fatal(format!(
            "Provider returned error during streaming: {detail}"
        )));
    }
    if let Some(feedback) = chunk.get("promptFeedback") {
        if let Some(reason) = feedback.get("blockReason").and_then(Value::as_str) {
            let why = feedback.get("blockReasonMessage").and_then(Value::as_str).unwrap_or(reason);
            return Err(CallError::fatal(format!("Content blocked: {why} (blockReason {reason})")));
        }
    }
    Ok(())
}

/// streamGenerateContent chunks to events.
#[derive(Debug, Default)]
pub struct GeminiDecoder {
    usage: Option<Usage>,
    finished: bool,
    generated: u32,
    /// Model parts seen, kept when any carries a thought signature.
    parts: Vec<Value>,
    signed: bool,
    /// A compatible server's `[DONE]` came: nothing more is read.
    done: bool,
}

impl Decoder for GeminiDecoder {
    fn feed(&mut self, frame: Frame, out: &mut Vec<StreamEvent>) -> Result<(), CallError> {
        let data = match frame {
            Frame::Event { data, .. } => data,
            Frame::Stray(text) => {
                let detail = body_detail(&text).unwrap_or_default();
                let what = if self.parts.is_empty() && !self.finished {
                    "Provider returned a response that is not an event stream"
                } else {
                    "Provider returned error during streaming"
                };
                return Err(CallError::fatal(format!("{what}: {detail}")));
            }
        };
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk = parse_payload("Gemini", &data)?;
        refused(&chunk)?;
        if let Some(meta) = chunk.get("usageMetadata") {
            let n = |k: &str| meta.get(k).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Some(Usage {
                prompt_tokens: n("promptTokenCount"),
                completion_tokens: n("candidatesTokenCount") + n("thoughtsTokenCount"),
                cached_tokens: n("cachedContentTokenCount"),
                cache_write_tokens: 0,
                cache_read_reported: meta.get("cachedContentTokenCount").is_some_and(Value::is_u64),
                cache_write_reported: false,
            });
        }
        let mut seen_calls: Vec<(String, String)> = Vec::new();
        let candidate = chunk.get("candidates").and_then(Value::as_array).and_then(|c| c.first());
        if let Some(parts) =
            candidate.and_then(|c| c.pointer("/content/parts")).and_then(Value::as_array)
        {
            for part in parts {
                self.part(part, out, &mut seen_calls);
            }
        }
        if let Some(calls) = chunk.get("functionCalls").and_then(Value::as_array) {
            for call in calls {
                self.call(call, None, out, &mut seen_calls);
            }
        }
        if let Some(reason) = candidate.and_then(|c| c.get("finishReason")).and_then(Value::as_str)
        {
            self.finished = true;
            match reason {
                "STOP" | "FINISH_REASON_UNSPECIFIED" => {}
                "MAX_TOKENS" => out.push(StreamEvent::cut_short()),
                "MALFORMED_FUNCTION_CALL" => {
                    return Err(CallError::transient(
                        "Provider returned error during streaming: the model produced a malformed function call (finishReason MALFORMED_FUNCTION_CALL)",
                        None,
                    ))
                }
                other => {
                    return Err(CallError::fatal(format!(
                        "Provider stopped the answer: content blocked (finishReason {other})"
                    )))
                }
            }
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        self.done
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), CallError> {
        if self.signed {
            for part in self.parts.drain(..) {
                out.push(StreamEvent::Native(part));
            }
        }
        if let Some(usage) = self.usage.take() {
            out.push(StreamEvent::Usage(usage));
        }
        if !self.finished {
            return Err(CallError::transient(
                "Provider stream ended before the model finished (no finishReason)",
                None,
            ));
        }
        Ok(())
    }
}

impl GeminiDecoder {
    fn part(&mut self, part: &Value, out: &mut Vec<StreamEvent>, seen: &mut Vec<(String, String)>) {
        self.signed |= part.get("thoughtSignature").is_some();
        if let Some(call) = part.get("functionCall") {
            let kept = self.call(call, part.get("thoughtSignature"), out, seen);
            if let Some(kept) = kept {
                self.parts.push(kept);
            }
            return;
        }
        let Some(text) = part.get("text").and_then(Value::as_str) else { return };
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            if !text.is_empty() {
                out.push(StreamEvent::Reasoning(text.to_string()));
            }
            self.parts.push(part.clone());
            return;
        }
        if !text.is_empty() {
            out.push(StreamEvent::Text(text.to_string()));
        }
        // Consecutive text is merged so replayed parts stay few.
        match self.parts.last_mut() {
            Some(Value::Object(last))
                if last.len() == 1 && last.get("text").is_some_and(Value::is_string) =>
            {
                if let Some(Value::String(prev)) = last.get_mut("text") {
                    prev.push_str(text);
                }
            }
            _ => self.parts.push(part.clone()),
        }
    }

    /// Emits one function call unless this payload already had it; returns the part to keep.
    fn call(
        &mut self,
        call: &Value,
        signature: Option<&Value>,
        out: &mut Vec<StreamEvent>,
        seen: &mut Vec<(String, String)>,
    ) -> Option<Value> {
        let name = call.get("name").and_then(Value::as_str).filter(|n| !n.is_empty())?;
        let args = call.get("args").or_else(|| call.get("arguments")).cloned().unwrap_or(json!({}));
        let arguments = match &args {
            Value::Object(_) => args.to_string(),
            Value::Null => "{}".to_string(),
            other => other.to_string(),
        };
        let key = (name.to_string(), arguments.clone());
        if seen.contains(&key) {
            return None;
        }
        seen.push(key);
        let id = match call.get("id").and_then(Value::as_str).filter(|i| !i.is_empty()) {
            Some(id) => id.to_string(),
            None => {
                self.generated += 1;
                format!("gemini_tool_{}", self.generated)
            }
        };
        out.push(StreamEvent::ToolCall(ToolCall {
            id: id.clone(),
            name: name.to_string(),
            arguments,
        }));
        let mut part = json!({"functionCall": {"id": id, "name": name, "args": args}});
        if let Some(signature) = signature {
            part["thoughtSignature"] = signature.clone();
        }
        Some(part)
    }
}

#[cfg(test)]
mod tests;
