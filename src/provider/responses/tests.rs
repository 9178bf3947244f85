use super::*;
use crate::provider::ToolSpec;

/// Decodes a whole SSE body; the error, if any, ends the list.
pub(crate) fn decode(body: &str) -> (Vec<StreamEvent>, Option<String>) {
    crate::testing::kit::decode_body::<ResponsesDecoder>(body)
}

/// The events of a body that decodes without an error.
fn decoded(body: &str) -> Vec<StreamEvent> {
    crate::testing::kit::decoded_body::<ResponsesDecoder>(body)
}

fn ev(data: Value) -> String {
    format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap())
}

fn completed(input: u64, cached: u64, output: u64) -> String {
    ev(json!({"type": "response.completed", "response": {"status": "completed", "usage": {
        "input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 3}}}}))
}

#[test]
fn the_body_sends_the_whole_conversation_with_reasoning_items_first() {
    let call = ToolCall {
        id: "call_1".into(),
        name: "grep".into(),
        arguments: r#"{"pattern":"x"}"#.into(),
    };
    let mut turn = Message::assistant("Searching.", vec![call.clone()]);
    turn.native = vec![
        json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}),
    ];
    let messages = vec![
        Message::system("sys"),
        Message::user("find x"),
        turn,
        Message::tool_result(&call, "a.rs:1: x"),
    ];
    let tools = vec![ToolSpec {
        name: "grep".into(),
        description: "search".into(),
        parameters: json!({"type": "object"}),
        full_schema: false,
    }];
    let settings = Settings {
        api_model: "gpt-5",
        effort: Some(Effort::High),
        reasoning: true,
        max_tokens: 128_000,
    };
    let body = request_body(&settings, &Request { messages: &messages, tools: &tools });
    assert_eq!(
        body,
        json!({
            "model": "gpt-5",
            "instructions": "sys",
            "input": [
                {"role": "user", "content": "find x"},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
                {"role": "assistant", "content": "Searching."},
                {"type": "function_call", "call_id": "call_1", "name": "grep", "arguments": "{\"pattern\":\"x\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "a.rs:1: x"},
            ],
            "tools": [{"type": "function", "name": "grep", "description": "search", "parameters": {"type": "object"}, "strict": false}],
            "stream": true,
            "store": false,
            "max_output_tokens": 128000,
            "reasoning": {"effort": "high"},
            "include": ["reasoning.encrypted_content"],
        })
    );
    let plain = Settings { api_model: "m", effort: None, reasoning: false, max_tokens: 10 };
    let body = request_body(&plain, &Request { messages: &messages[1..2], tools: &[] });
    assert!(
        body.get("reasoning").is_none()
            && body.get("include").is_none()
            && body.get("tools").is_none()
    );
}

#[test]
fn text_reasoning_calls_and_usage_come_out_in_order() {
    let body = [
        ev(json!({"type": "response.created", "response": {"status": "in_progress"}})),
        ev(json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}})),
        ev(json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "Thinking"})),
        ev(json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Thinking"}], "encrypted_content": "gAAA", "status": "completed"}})),
        ev(json!({"type": "response.output_text.delta", "output_index": 1, "delta": "Let me"})),
        ev(json!({"type": "response.output_text.delta", "output_index": 1, "delta": " look."})),
        ev(json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "read_file", "arguments": ""}})),
        ev(json!({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "{\"path\""})),
        ev(json!({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": ":\"a\"}"})),
        ev(json!({"type": "response.output_item.done", "output_index": 2, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "read_file", "arguments": "{\"path\":\"a\"}"}})),
        completed(100, 40, 20),
    ]
    .concat();
    assert_eq!(
        decoded(&body),
        vec![
            StreamEvent::Reasoning("Thinking".into()),
            StreamEvent::Native(
                json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Thinking"}], "encrypted_content": "gAAA"})
            ),
            StreamEvent::Text("Let me".into()),
            StreamEvent::Text(" look.".into()),
            StreamEvent::ToolCall(ToolCall {
                id: "call_9".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\"a\"}".into()
            }),
            StreamEvent::Usage(Usage {
                prompt_tokens: 100,
                completion_tokens: 20,
                cached_tokens: 40,
                cache_write_tokens: 0,
                cache_read_reported: true,
                cache_write_reported: false,
            }),
        ]
    );
}

#[test]
fn limits_failures_and_early_ends() {
    let incomplete = ev(
        json!({"type": "response.incomplete", "response": {"incomplete_details": {"reason": "max_output_tokens"}, "usage": {"input_tokens": 5, "output_tokens": 9}}}),
    );
    let (events, error) = decode(&incomplete);
    assert_eq!(error, None);
    assert!(
        matches!(&events[1], StreamEvent::Warning(w) if w.message.contains("output token limit"))
    );
    let filtered = ev(
        json!({"type": "response.incomplete", "response": {"incomplete_details": {"reason": "content_filter"}}}),
    );
    assert_eq!(
        decode(&filtered).1.as_deref(),
        Some("Provider stopped the answer: content_filter (response.incomplete)")
    );
    let failed = ev(
        json!({"type": "response.failed", "response": {"error": {"code": "server_error", "message": "The server had an error"}}}),
    );
    assert_eq!(
        decode(&failed).1.as_deref(),
        Some("Provider returned error during streaming: The server had an error")
    );
    let early = ev(json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Hi"}));
    assert_eq!(
        decode(&early).1.as_deref(),
        Some("Provider stream ended before the model finished (no response.completed)")
    );
    assert!(decode("{\"error\": {\"message\": \"nope\"}}")
        .1
        .unwrap()
        .contains("not an event stream"));
}

#[test]
fn an_error_event_ends_the_call_with_its_message() {
    // As the API sends it: `error`, then `response.failed` (never read).
    let body = [
        ev(json!({"type": "response.created", "sequence_number": 0, "response": {"status": "in_progress", "usage": null}})),
        ev(json!({"type": "error", "sequence_number": 1, "error": {"type": "insufficient_quota", "code": "insufficient_quota", "message": "You exceeded your current quota.", "param": null}})),
        ev(json!({"type": "response.failed", "sequence_number": 2, "response": {"status": "failed", "error": {"code": "insufficient_quota", "message": "You exceeded your current quota."}}})),
    ]
    .concat();
    let (events, error) = decode(&body);
    assert!(events.is_empty());
    assert_eq!(
        error.as_deref(),
        Some("Provider returned error during streaming: You exceeded your current quota.")
    );
}

#[test]
fn a_call_with_an_empty_call_id_gets_one() {
    // Found by the fuzzer: an empty call_id would make a tool call without an id.
    let body = [
        ev(json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "function_call", "call_id": "", "name": "glob", "arguments": "{}"}})),
        completed(1, 0, 1),
    ]
    .concat();
    let (events, error) = decode(&body);
    assert_eq!(error, None);
    assert_eq!(
        events[0],
        StreamEvent::ToolCall(ToolCall {
            id: "call_1".into(),
            name: "glob".into(),
            arguments: "{}".into()
        })
    );
}
