//! Providers: the conversation types sent to a model, the events that come back, and the
//! loop that streams one call through a decoder with retries.
//!
//! Each wire format has a request builder and a pure decoder (frames in, events out) in its own
//! file; the decoders are what the replay tests feed recorded streams through.

pub mod anthropic;
pub mod gemini;
pub mod models;
pub mod openai;
pub mod responses;
pub mod scripted;

#[cfg(test)]
mod replay_tests;

use std::io::BufReader;

use serde_json::Value;

use crate::conversation::{Message, ToolCall, ToolSpec};
use crate::error::{Failure, Stop};
use crate::net::http::{CallError, Http, Retry};
use crate::net::sse::{Frame, SseReader};
use crate::protocol::events::{Warning, WarningCode};
use crate::provider::models::Usage;

/// How every provider's message begins when the provider stopped an answer itself (a refusal,
/// a content filter): an editor is told the turn ended as a refusal.
pub const STOPPED_ANSWER: &str = "Provider stopped the answer:";

/// What one call sends.
pub struct Request<'a> {
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
}

/// What a provider reports while it streams.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// Answer text, in order.
    Text(String),
    /// The last piece of a call's answer text, from a provider that knows it is the last (the
    /// scripted one): it is written together with whatever the redactor still held.
    LastText(String),
    /// Reasoning or thinking text: never part of the answer.
    Reasoning(String),
    /// A call whose arguments are complete.
    ToolCall(ToolCall),
    /// Token counts of this call.
    Usage(Usage),
    /// Something the user should know that does not end the call (a retry, a cut-off answer).
    Warning(Warning),
    /// Provider-native content to keep on the assistant message (see [`Message::native`]).
    Native(Value),
}

impl StreamEvent {
    /// The warning of an answer cut off by the output token limit.
    pub fn cut_short() -> StreamEvent {
        StreamEvent::Warning(Warning::new(
            WarningCode::OutputLimit,
            "The model stopped at its output token limit; the answer may be cut short.",
        ))
    }

    /// Whether this event is output of the call (after which a retry would repeat output).
    fn is_output(&self) -> bool {
        matches!(
            self,
            StreamEvent::Text(_)
                | StreamEvent::LastText(_)
                | StreamEvent::Reasoning(_)
                | StreamEvent::ToolCall(_)
        )
    }
}

/// Answer text of one model call at most: a model (or server) that writes more is broken or
/// hostile, and the run ends with a `provider_error` instead of holding it all in memory.
pub const MAX_TURN_TEXT: usize = 4 * 1024 * 1024;
/// Reasoning text of one model call at most (kept for providers that need it sent back).
pub const MAX_TURN_REASONING: usize = 4 * 1024 * 1024;
/// The arguments of one tool call at most.
pub const MAX_CALL_ARGUMENTS: usize = 4 * 1024 * 1024;

/// The error for a stream that went past one of the limits above.
pub(crate) fn over_limit(what: &str, limit: usize) -> CallError {
    CallError::fatal(format!(
        "Provider stream exceeded zero's limit: {what} over {} MiB in one model call",
        limit / (1024 * 1024)
    ))
}

/// A call's arguments as the JSON object Anthropic and Gemini take back: none is `{}`; text
/// that is not JSON (the model wrote it broken, and the tool already said so) is sent as
/// `{"_raw": text}`; JSON that is not an object cannot be sent.
pub(crate) fn arguments_object(
    call: &crate::conversation::ToolCall,
    provider: &str,
) -> Result<serde_json::Value, CallError> {
    if call.arguments.trim().is_empty() {
        return Ok(serde_json::json!({}));
    }
    match serde_json::from_str::<serde_json::Value>(&call.arguments) {
        Ok(value @ serde_json::Value::Object(_)) => Ok(value),
        Ok(_) => Err(CallError::fatal(format!(
            "Zero {provider} provider requires tool arguments for {} to be a JSON object",
            call.name
        ))),
        Err(_) => Ok(serde_json::json!({"_raw": call.arguments})),
    }
}

/// Appends a streamed piece to text a decoder is assembling, within `limit`.
pub(crate) fn append_within(
    held: &mut String,
    piece: &str,
    limit: usize,
    what: &str,
) -> Result<(), CallError> {
    if held.len() + piece.len() > limit {
        return Err(over_limit(what, limit));
    }
    held.push_str(piece);
    Ok(())
}

/// What one model call has streamed so far, checked against the limits.
#[derive(Default)]
struct Sizes {
    text: usize,
    reasoning: usize,
}

impl Sizes {
    fn check(&mut self, event: &StreamEvent) -> Result<(), CallError> {
        match event {
            StreamEvent::Text(t) | StreamEvent::LastText(t) => {
                self.text += t.len();
                if self.text > MAX_TURN_TEXT {
                    return Err(over_limit("answer text", MAX_TURN_TEXT));
                }
            }
            StreamEvent::Reasoning(t) => {
                self.reasoning += t.len();
                if self.reasoning > MAX_TURN_REASONING {
                    return Err(over_limit("reasoning text", MAX_TURN_REASONING));
                }
            }
            StreamEvent::ToolCall(call) if call.arguments.len() > MAX_CALL_ARGUMENTS => {
                return Err(over_limit("a tool call's arguments", MAX_CALL_ARGUMENTS));
            }
            _ => {}
        }
        Ok(())
    }
}

/// The data of an event frame, or `None` for `[DONE]`; a body that is not an event stream is
/// an error quoting what came back (for formats that never send a bare JSON body).
pub(crate) fn event_data(frame: Frame) -> Result<Option<String>, CallError> {
    let data = match frame {
        Frame::Event { data, .. } => data,
        Frame::Stray(text) => {
            let detail = crate::net::http::body_detail(&text).unwrap_or_default();
            return Err(CallError::fatal(format!(
                "Provider returned a response that is not an event stream: {detail}"
            )));
        }
    };
    Ok((data.trim() != "[DONE]").then_some(data))
}

/// Turns one wire format's frames into events.
pub trait Decoder {
    fn feed(&mut self, frame: Frame, out: &mut Vec<StreamEvent>) -> Result<(), CallError>;
    /// The stream ended without a transport error.
    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), CallError>;
    /// The stream has said its last word (`[DONE]`, `message_stop`, `response.completed`):
    /// nothing more is read, whether or not the server closes the body. A gateway that keeps
    /// the connection open cannot turn a finished answer into a stall.
    fn complete(&self) -> bool;
}

/// Where streamed events go; an error stops the call.
pub type Sink<'a> = dyn FnMut(StreamEvent) -> Result<(), Stop> + 'a;

/// A configured provider.
pub enum Provider {
    OpenAi(openai::OpenAi),
    Responses(responses::Responses),
    Anthropic(anthropic::Anthropic),
    Gemini(gemini::Gemini),
    Scripted(scripted::Scripted),
}

impl Provider {
    /// Streams one model call into `sink`.
    pub fn stream(&mut self, request: &Request<'_>, sink: &mut Sink<'_>) -> Result<(), Stop> {
        match self {
            Provider::OpenAi(p) => p.stream(request, sink),
            Provider::Responses(p) => p.stream(request, sink),
            Provider::Anthropic(p) => p.stream(request, sink),
            Provider::Gemini(p) => p.stream(request, sink),
            Provider::Scripted(p) => p.stream(request, sink),
        }
    }

    /// The official OpenAI API's `prompt_cache_key`: calls with the same key share a cache.
    pub fn set_cache_key(&mut self, key: Option<String>) {
        match self {
            Provider::OpenAi(p) => p.endpoint.cache_key = key,
            Provider::Responses(p) => p.endpoint.cache_key = key,
            Provider::Anthropic(_) | Provider::Gemini(_) | Provider::Scripted(_) => {}
        }
    }
}

/// What went wrong inside one attempt.
enum AttemptError {
    Provider(CallError),
    Sink(Stop),
}

/// One HTTP streaming call: POST, then frames through a fresh decoder into the sink. Failures
/// are retried with backoff while nothing of the call has been emitted.
pub(crate) fn stream_call<D: Decoder>(
    http: &Http,
    url: &str,
    headers: &[(&str, String)],
    body: &[u8],
    new_decoder: impl Fn() -> D,
    sink: &mut Sink<'_>,
) -> Result<(), Stop> {
    let mut attempt = 0u32;
    loop {
        let mut emitted = false;
        let result = attempt_call(http, url, headers, body, new_decoder(), sink, &mut emitted);
        let err = match result {
            Ok(()) => return Ok(()),
            Err(AttemptError::Sink(stop)) => return Err(stop),
            Err(AttemptError::Provider(err)) => err,
        };
        let wait = match err.retry {
            Retry::After(wait) if !emitted && attempt < http.max_retries() => {
                http.backoff(attempt, wait)
            }
            _ => return Err(Failure::from(err).into()),
        };
        attempt += 1;
        let note = format!(
            "{}; retrying in {:.1} s (retry {} of {}).",
            err.message.trim_end_matches('.'),
            wait.as_secs_f64(),
            attempt,
            http.max_retries()
        );
        sink(StreamEvent::Warning(Warning::new(WarningCode::Retry, note)))?;
        std::thread::sleep(wait);
    }
}

fn attempt_call<D: Decoder>(
    http: &Http,
    url: &str,
    headers: &[(&str, String)],
    body: &[u8],
    mut decoder: D,
    sink: &mut Sink<'_>,
    emitted: &mut bool,
) -> Result<(), AttemptError> {
    let reader = http.post_stream(url, headers, body).map_err(AttemptError::Provider)?;
    let mut sse = SseReader::new(BufReader::with_capacity(16 * 1024, reader));
    let mut events = Vec::new();
    let mut sizes = Sizes::default();
    let mut forward = |events: &mut Vec<StreamEvent>, emitted: &mut bool| {
        for event in events.drain(..) {
            sizes.check(&event).map_err(AttemptError::Provider)?;
            *emitted |= event.is_output();
            sink(event).map_err(AttemptError::Sink)?;
        }
        Ok::<(), AttemptError>(())
    };
    loop {
        let frame = match sse.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(err) => {
                // Whatever was decoded before the failure is still shown.
                forward(&mut events, emitted)?;
                return Err(AttemptError::Provider(http.stream_error(err)));
            }
        };
        let fed = decoder.feed(frame, &mut events);
        forward(&mut events, emitted)?;
        fed.map_err(AttemptError::Provider)?;
        if decoder.complete() {
            break;
        }
    }
    let finished = decoder.finish(&mut events);
    forward(&mut events, emitted)?;
    finished.map_err(AttemptError::Provider)
}

/// A JSON payload from a stream, or a decoder error naming the provider.
pub(crate) fn parse_payload(provider: &str, data: &str) -> Result<Value, CallError> {
    serde_json::from_str(data).map_err(|err| {
        CallError::fatal(format!(
            "Provider returned error during streaming: invalid {provider} stream payload ({err}): {}",
            crate::text::summarize(data)
        ))
    })
}
