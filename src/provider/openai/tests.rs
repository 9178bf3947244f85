use super::*;
use crate::net::sse::SseReader;
use crate::provider::ToolSpec;

/// Decodes a whole SSE body; the error, if any, ends the list.
pub(crate) fn decode(body: &str) -> (Vec<StreamEvent>, Option<String>) {
    crate::testing::kit::decode_body::<OpenAiDecoder>(body)
}

/// The events of a body that decodes without an error.
fn decoded(body: &str) -> Vec<StreamEvent> {
    crate::testing::kit::decoded_body::<OpenAiDecoder>(body)
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    )
}

fn call(id: &str, name: &str, args: &str) -> StreamEvent {
    StreamEvent::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: args.into() })
}

#[test]
fn text_then_usage_then_done() {
    let body = [
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"content": "Hel"}), None),
        chunk(json!({"content": "lo"}), None),
        chunk(json!({}), Some("stop")),
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n".to_string(),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    assert_eq!(
        decoded(&body),
        vec![
            StreamEvent::Text("Hel".into()),
            StreamEvent::Text("lo".into()),
            StreamEvent::Usage(Usage {
                prompt_tokens: 9,
                completion_tokens: 2,
                cached_tokens: 4,
                cache_write_tokens: 0,
                cache_read_reported: true,
                cache_write_reported: false,
            }),
        ]
    );
}

#[test]
fn a_tool_call_split_over_many_deltas_is_one_call() {
    let mut body = chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}),
        None,
    );
    for piece in ["{\"", "path", "\":\"", "src/", "main", ".rs", "\"}"] {
        body.push_str(&chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            None,
        ));
    }
    body.push_str(&chunk(json!({}), Some("tool_calls")));
    body.push_str("data: [DONE]\n\n");
    let (events, error) = decode(&body);
    assert_eq!(error, None);
    assert_eq!(events, vec![call("call_1", "read_file", r#"{"path":"src/main.rs"}"#)]);
}

fn frame(body: &str) -> Frame {
    SseReader::new(body.as_bytes()).next_frame().unwrap().unwrap()
}

#[test]
fn a_call_is_emitted_as_soon_as_the_next_one_starts() {
    let mut decoder = OpenAiDecoder::default();
    let mut out = Vec::new();
    let first = chunk(
        json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "grep", "arguments": "{\"pattern\":\"x\"}"}}]}),
        None,
    );
    decoder.feed(frame(&first), &mut out).unwrap();
    assert!(out.is_empty(), "the first call may still grow");
    let second = chunk(
        json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "glob", "arguments": "{}"}}]}),
        None,
    );
    decoder.feed(frame(&second), &mut out).unwrap();
    assert_eq!(out, vec![call("a", "grep", r#"{"pattern":"x"}"#)]);
    decoder.feed(frame(&chunk(json!({}), Some("tool_calls"))), &mut out).unwrap();
    assert_eq!(out[1], call("b", "glob", "{}"));
}

#[test]
fn argument_fragments_before_the_id_are_kept() {
    let body = [
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]}), None),
        chunk(json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "read_file", "arguments": "\"src/index.ts\"}"}}]}), None),
        chunk(json!({}), Some("tool_calls")),
    ]
    .concat();
    let (events, error) = decode(&body);
    assert_eq!(error, None);
    assert_eq!(events, vec![call("call_1", "read_file", r#"{"path":"src/index.ts"}"#)]);
}

#[test]
fn reasoning_is_not_text_and_refusals_are() {
    let body = [
        chunk(json!({"reasoning_content": "think", "content": null}), None),
        chunk(json!({"reasoning": "more"}), None),
        chunk(json!({"refusal": "I can't help with that."}), None),
        chunk(json!({}), Some("stop")),
    ]
    .concat();
    let (events, _) = decode(&body);
    assert_eq!(
        events,
        vec![
            StreamEvent::Reasoning("think".into()),
            StreamEvent::Reasoning("more".into()),
            StreamEvent::Text("I can't help with that.".into()),
        ]
    );
}

#[test]
fn errors_inside_the_stream_end_the_call() {
    let (_, error) =
        decode("data: {\"error\":{\"message\":\"Token limit reached\",\"code\":400}}\n\n");
    assert_eq!(
        error.as_deref(),
        Some("Provider returned error during streaming: Token limit reached")
    );
    let (_, error) =
        decode("event: error\ndata: {\"error\":{\"message\":\"tool_use_failed\"}}\n\n");
    assert_eq!(error.as_deref(), Some("Provider returned error during streaming: tool_use_failed"));
    let (_, error) = decode(&chunk(json!({"content": "x"}), Some("content_filter")));
    assert!(error.unwrap().contains("content filter"));
    let (events, error) = decode(
        &[chunk(json!({"content": "x"}), Some("length")), "data: [DONE]\n\n".into()].concat(),
    );
    assert_eq!(error, None);
    assert!(
        matches!(events.last(), Some(StreamEvent::Warning(w)) if w.message.contains("token limit"))
    );
}

#[test]
fn a_stream_that_stops_early_is_an_error() {
    let (events, error) = decode(&chunk(json!({"content": "Hello"}), None));
    assert_eq!(events, vec![StreamEvent::Text("Hello".into())]);
    assert_eq!(
        error.as_deref(),
        Some("Provider stream ended before the model finished (no finish_reason or [DONE])")
    );
}

#[test]
fn bodies_that_are_not_event_streams() {
    let (_, error) = decode("<html><head><title>502 Bad Gateway</title></head></html>");
    assert_eq!(
        error.as_deref(),
        Some("Provider returned a response that is not an event stream: an HTML error page (502 Bad Gateway)")
    );
    // A server that ignored `stream: true` still answered.
    let (events, error) = decode(
        r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}"#,
    );
    assert_eq!(error, None);
    assert_eq!(events[0], StreamEvent::Text("Hi".into()));
}

#[test]
fn request_body_has_usage_tools_and_effort() {
    let messages = vec![
        Message::system("sys"),
        Message::user("hi"),
        Message::assistant(
            "",
            vec![ToolCall { id: "c1".into(), name: "grep".into(), arguments: "{}".into() }],
        ),
        Message::tool_result(
            &ToolCall { id: "c1".into(), name: "grep".into(), arguments: "{}".into() },
            "none",
        ),
    ];
    let tools = vec![ToolSpec {
        name: "grep".into(),
        description: "search".into(),
        parameters: json!({"type": "object"}),
        full_schema: false,
    }];
    let official = OutputLimit { tokens: 128_000, official: true };
    let body = request_body(
        "gpt-5",
        Some(Effort::High),
        official,
        &Request { messages: &messages, tools: &tools },
    );
    assert_eq!(
        body,
        json!({
            "model": "gpt-5",
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]},
                {"role": "tool", "content": "none", "tool_call_id": "c1"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [{"type": "function", "function": {"name": "grep", "description": "search", "parameters": {"type": "object"}}}],
            "reasoning_effort": "high",
            "max_completion_tokens": 128000,
        })
    );
    let compatible = OutputLimit { tokens: 4096, official: false };
    let bare =
        request_body("m", None, compatible, &Request { messages: &messages[1..2], tools: &[] });
    assert!(bare.get("tools").is_none() && bare.get("reasoning_effort").is_none());
    assert_eq!(
        (bare.get("max_tokens"), bare.get("max_completion_tokens")),
        (Some(&json!(4096)), None)
    );
}
