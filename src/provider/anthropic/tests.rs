use super::*;
use crate::provider::ToolSpec;

/// Decodes a whole SSE body; the error, if any, ends the list.
pub(crate) fn decode(body: &str) -> (Vec<StreamEvent>, Option<String>) {
    crate::testing::kit::decode_body::<AnthropicDecoder>(body)
}

/// The events of a body that decodes without an error.
fn decoded(body: &str) -> Vec<StreamEvent> {
    crate::testing::kit::decoded_body::<AnthropicDecoder>(body)
}

fn ev(kind: &str, data: Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

fn call(id: &str, name: &str, args: &str) -> StreamEvent {
    StreamEvent::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: args.into() })
}

#[test]
fn request_body_converts_every_role() {
    let read = ToolCall {
        id: "toolu_1".into(),
        name: "read_file".into(),
        arguments: r#"{"path":"a"}"#.into(),
    };
    let messages = vec![
        Message::system("sys one"),
        Message::system("sys two"),
        Message::user("hi"),
        Message::assistant("Looking.", vec![read.clone()]),
        Message::tool_result(&read, "contents"),
        Message::user("thanks"),
    ];
    let tools = vec![ToolSpec {
        name: "read_file".into(),
        description: "read".into(),
        parameters: json!({"type": "object"}),
        full_schema: false,
    }];
    let body = request_body(
        "claude-sonnet-4-5-20250929",
        64000,
        None,
        &Request { messages: &messages, tools: &tools },
    )
    .unwrap();
    assert_eq!(
        body,
        json!({
            "model": "claude-sonnet-4-5-20250929",
            "max_tokens": 64000,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "contents"},
                    {"type": "text", "text": "thanks"},
                ]},
            ],
            "stream": true,
            "system": "sys one\n\nsys two",
            "tools": [{"name": "read_file", "description": "read", "input_schema": {"type": "object"}}],
        })
    );
}

#[test]
fn request_errors_and_thinking() {
    let only_system = vec![Message::system("s")];
    let err =
        request_body("m", 1, None, &Request { messages: &only_system, tools: &[] }).unwrap_err();
    assert_eq!(err.message, "Zero Anthropic provider requires at least one non-system message");
    let mut orphan = Message::user("x");
    orphan.role = Role::Tool;
    let err = request_body("m", 1, None, &Request { messages: &[orphan], tools: &[] }).unwrap_err();
    assert_eq!(err.message, "Zero Anthropic provider requires toolCallId on tool result messages");
    let bad = Message::assistant(
        "",
        vec![ToolCall { id: "t".into(), name: "read_file".into(), arguments: "[1]".into() }],
    );
    let err =
        request_body("m", 1, None, &Request { messages: &[Message::user("x"), bad], tools: &[] })
            .unwrap_err();
    assert_eq!(
        err.message,
        "Zero Anthropic provider requires tool arguments for read_file to be a JSON object"
    );
    let body = request_body(
        "m",
        64000,
        Some(Effort::High),
        &Request { messages: &[Message::user("x")], tools: &[] },
    )
    .unwrap();
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 32000}));
    let small = request_body(
        "m",
        8192,
        Some(Effort::High),
        &Request { messages: &[Message::user("x")], tools: &[] },
    )
    .unwrap();
    assert_eq!(small["thinking"]["budget_tokens"], 4096);
}

#[test]
fn text_stream_with_usage() {
    let body = [
        ev("message_start", json!({"type": "message_start", "message": {"usage": {"input_tokens": 25, "output_tokens": 1}}})),
        ev("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
        ev("ping", json!({"type": "ping"})),
        ev("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}})),
        ev("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " Zero"}})),
        ev("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        ev("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 15}})),
        ev("message_stop", json!({"type": "message_stop"})),
    ]
    .concat();
    assert_eq!(
        decoded(&body),
        vec![
            StreamEvent::Text("Hello".into()),
            StreamEvent::Text(" Zero".into()),
            StreamEvent::Usage(Usage {
                prompt_tokens: 25,
                completion_tokens: 15,
                cached_tokens: 0,
                ..Usage::default()
            }),
        ]
    );
}

#[test]
fn tool_use_with_partial_json_and_interleaved_blocks() {
    let body = [
        ev("message_start", json!({"type": "message_start", "message": {"usage": {"input_tokens": 30}}})),
        ev("content_block_start", json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}})),
        ev("content_block_start", json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t2", "name": "grep", "input": {}}})),
        ev("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}})),
        ev("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\":"}})),
        ev("content_block_delta", json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"pattern\":\"x\"}"}})),
        ev("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"a.rs\"}"}})),
        ev("content_block_stop", json!({"type": "content_block_stop", "index": 2})),
        ev("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
        ev("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 42}})),
        ev("message_stop", json!({"type": "message_stop"})),
    ]
    .concat();
    assert_eq!(
        decoded(&body),
        vec![
            call("t2", "grep", r#"{"pattern":"x"}"#),
            call("t1", "read_file", r#"{"path":"a.rs"}"#),
            StreamEvent::Usage(Usage {
                prompt_tokens: 30,
                completion_tokens: 42,
                cached_tokens: 0,
                ..Usage::default()
            }),
        ]
    );
}

#[test]
fn an_initial_input_is_not_concatenated_with_fragments() {
    let start = |input: Value| {
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "glob", "input": input}}),
        )
    };
    let stop = [
        ev("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        ev("message_stop", json!({"type": "message_stop"})),
    ]
    .concat();
    let (events, _) = decode(&[start(json!({"pattern": "*.rs"})), stop.clone()].concat());
    assert_eq!(events, vec![call("t", "glob", r#"{"pattern":"*.rs"}"#)]);
    let fragment = ev(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"pattern\":\"*.md\"}"}}),
    );
    let (events, _) = decode(&[start(json!({"pattern": "*.rs"})), fragment, stop].concat());
    assert_eq!(events, vec![call("t", "glob", r#"{"pattern":"*.md"}"#)]);
}

#[test]
fn thinking_is_reasoning_and_kept_for_replay() {
    let body = [
        ev("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}})),
        ev("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me think"}})),
        ev("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig=="}})),
        ev("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        ev("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Answer"}})),
        ev("message_stop", json!({"type": "message_stop"})),
    ]
    .concat();
    assert_eq!(
        decoded(&body),
        vec![
            StreamEvent::Reasoning("Let me think".into()),
            StreamEvent::Native(
                json!({"type": "thinking", "thinking": "Let me think", "signature": "sig=="})
            ),
            StreamEvent::Text("Answer".into()),
        ]
    );
    let mut assistant = Message::assistant("Answer", vec![]);
    assistant.native = vec![json!({"type": "thinking", "thinking": "t", "signature": "s"})];
    let body = request_body(
        "m",
        64000,
        None,
        &Request { messages: &[Message::user("q"), assistant], tools: &[] },
    )
    .unwrap();
    assert_eq!(body["messages"][1]["content"][0]["type"], "thinking");
}

#[test]
fn stream_errors_and_early_ends() {
    let (_, error) = decode(&ev(
        "error",
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "server overloaded"}}),
    ));
    assert_eq!(
        error.as_deref(),
        Some("Provider returned error during streaming: server overloaded")
    );
    let (events, error) = decode(&ev(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "cut"}}),
    ));
    assert_eq!(events, vec![StreamEvent::Text("cut".into())]);
    assert_eq!(
        error.as_deref(),
        Some("Provider stream ended before the model finished (no message_stop)")
    );
}

#[test]
fn cache_counts_count_wherever_they_arrive() {
    let usage_of = |start: Value, delta: Value| {
        let body = [
            ev("message_start", json!({"type": "message_start", "message": {"usage": start}})),
            ev("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": delta})),
            ev("message_stop", json!({"type": "message_stop"})),
        ]
        .concat();
        let (events, error) = decode(&body);
        assert_eq!(error, None);
        events.into_iter().find_map(|e| match e {
            StreamEvent::Usage(u) => Some(u),
            _ => None,
        })
    };
    // As llama.cpp's server sends it: the cache read only in message_delta.
    assert_eq!(
        usage_of(
            json!({"input_tokens": 1, "output_tokens": 0}),
            json!({"input_tokens": 1, "cache_read_input_tokens": 188, "output_tokens": 9})
        ),
        Some(Usage {
            prompt_tokens: 189,
            completion_tokens: 9,
            cached_tokens: 188,
            cache_write_tokens: 0,
            cache_read_reported: true,
            cache_write_reported: false,
        })
    );
    // As the API sends it: everything in message_start, output in message_delta.
    assert_eq!(
        usage_of(
            json!({"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 50, "output_tokens": 1}),
            json!({"output_tokens": 30})
        ),
        Some(Usage {
            prompt_tokens: 160,
            completion_tokens: 30,
            cached_tokens: 100,
            cache_write_tokens: 50,
            cache_read_reported: true,
            cache_write_reported: true,
        })
    );
}
