use super::*;
use crate::provider::ToolSpec;

/// Decodes a whole SSE body; the error, if any, ends the list.
pub(crate) fn decode(body: &str) -> (Vec<StreamEvent>, Option<String>) {
    crate::testing::kit::decode_body::<GeminiDecoder>(body)
}

/// The events of a body that decodes without an error.
fn decoded(body: &str) -> Vec<StreamEvent> {
    crate::testing::kit::decoded_body::<GeminiDecoder>(body)
}

fn data(value: Value) -> String {
    format!("data: {value}\r\n\r\n")
}

fn call(id: &str, name: &str, args: &str) -> StreamEvent {
    StreamEvent::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: args.into() })
}

#[test]
fn url_and_request_body() {
    assert_eq!(
        stream_url("https://generativelanguage.googleapis.com/", " models/gemini-2.5-flash ").unwrap(),
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        stream_url("http://h", "a b").unwrap(),
        "http://h/v1beta/models/a%20b:streamGenerateContent?alt=sse"
    );
    let read =
        ToolCall { id: "c1".into(), name: "read_file".into(), arguments: r#"{"path":"a"}"#.into() };
    let messages = vec![
        Message::system("sys"),
        Message::user("hi"),
        Message::assistant("", vec![read.clone()]),
        Message::tool_result(&read, "contents"),
        Message::user("and?"),
    ];
    let tools = vec![ToolSpec {
        name: "read_file".into(),
        description: "read".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string", "minLength": 1}}, "required": ["path"], "additionalProperties": false}),
        full_schema: false,
    }];
    let body = request_body(65536, Thinking::Off, &Request { messages: &messages, tools: &tools })
        .unwrap();
    assert_eq!(
        body,
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "read_file", "args": {"path": "a"}}}]},
                {"role": "user", "parts": [
                    {"functionResponse": {"id": "c1", "name": "read_file", "response": {"result": "contents"}}},
                    {"text": "and?"},
                ]},
            ],
            "generationConfig": {"maxOutputTokens": 65536},
            "systemInstruction": {"parts": [{"text": "sys"}]},
            "tools": [{"functionDeclarations": [{"name": "read_file", "description": "read", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]}],
        })
    );
    let one = Request { messages: &messages[1..2], tools: &[] };
    let budget = Thinking::of("gemini-2.5-flash", Some(Effort::Low));
    assert_eq!(
        request_body(8192, budget, &one).unwrap()["generationConfig"],
        json!({"maxOutputTokens": 8192, "thinkingConfig": {"thinkingBudget": 1024}})
    );
    // Gemini 3 takes a thinking level instead of a budget.
    let level = Thinking::of("gemini-3-pro-preview", Some(Effort::High));
    assert_eq!(
        request_body(8192, level, &one).unwrap()["generationConfig"],
        json!({"maxOutputTokens": 8192, "thinkingConfig": {"thinkingLevel": "high"}})
    );
    let err = request_body(1, Thinking::Off, &Request { messages: &messages[..1], tools: &[] })
        .unwrap_err();
    assert_eq!(err.message, "Zero Gemini provider requires at least one non-system message");
}

#[test]
fn text_and_usage_with_thoughts() {
    let body = [
        data(json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello"}]}}], "usageMetadata": {"promptTokenCount": 25}})),
        data(json!({"candidates": [{"content": {"parts": [{"text": "hmm", "thought": true}, {"text": " Zero"}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 25, "candidatesTokenCount": 15, "thoughtsTokenCount": 3}})),
    ]
    .concat();
    assert_eq!(
        decoded(&body),
        vec![
            StreamEvent::Text("Hello".into()),
            StreamEvent::Reasoning("hmm".into()),
            StreamEvent::Text(" Zero".into()),
            StreamEvent::Usage(Usage {
                prompt_tokens: 25,
                completion_tokens: 18,
                cached_tokens: 0,
                ..Usage::default()
            }),
        ]
    );
}

#[test]
fn function_calls_from_parts_and_the_top_level_list_once_each() {
    let body = data(json!({
        "candidates": [{"content": {"parts": [
            {"functionCall": {"name": "read_file", "args": {"path": "a"}}},
            {"functionCall": {"name": "grep", "args": {"pattern": "x"}}},
        ]}, "finishReason": "STOP"}],
        "functionCalls": [{"name": "read_file", "args": {"path": "a"}}, {"name": "glob", "args": {"pattern": "*"}}],
    }));
    assert_eq!(
        decoded(&body),
        vec![
            call("gemini_tool_1", "read_file", r#"{"path":"a"}"#),
            call("gemini_tool_2", "grep", r#"{"pattern":"x"}"#),
            call("gemini_tool_3", "glob", r#"{"pattern":"*"}"#),
        ]
    );
}

#[test]
fn thought_signatures_are_kept_for_replay() {
    let body = data(json!({"candidates": [{"content": {"parts": [
        {"functionCall": {"name": "glob", "args": {}}, "thoughtSignature": "c2ln"},
    ]}, "finishReason": "STOP"}]}));
    let (events, _) = decode(&body);
    assert_eq!(
        events[1],
        StreamEvent::Native(
            json!({"functionCall": {"id": "gemini_tool_1", "name": "glob", "args": {}}, "thoughtSignature": "c2ln"})
        )
    );
}

#[test]
fn blocks_and_errors_are_provider_errors() {
    let (_, error) = decode(&data(
        json!({"promptFeedback": {"blockReason": "SAFETY", "blockReasonMessage": "blocked by policy"}}),
    ));
    assert_eq!(error.as_deref(), Some("Content blocked: blocked by policy (blockReason SAFETY)"));
    let (_, error) = decode(&data(
        json!({"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": "SAFETY"}]}),
    ));
    assert_eq!(
        error.as_deref(),
        Some("Provider stopped the answer: content blocked (finishReason SAFETY)")
    );
    let (_, error) =
        decode(&data(json!({"error": {"code": 500, "message": "internal", "status": "INTERNAL"}})));
    assert_eq!(error.as_deref(), Some("Provider returned error during streaming: internal"));
    let trailing = format!("{}{{\n  \"error\": {{\n    \"code\": 499,\n    \"message\": \"The operation was cancelled.\"\n  }}\n}}\n", data(json!({"candidates": [{"content": {"parts": [{"text": "First "}]}}]})));
    let (events, error) = decode(&trailing);
    assert_eq!(events, vec![StreamEvent::Text("First ".into())]);
    assert_eq!(
        error.as_deref(),
        Some("Provider returned error during streaming: The operation was cancelled.")
    );
    let (_, error) =
        decode(&data(json!({"candidates": [{"content": {"parts": [{"text": "x"}]}}]})));
    assert_eq!(
        error.as_deref(),
        Some("Provider stream ended before the model finished (no finishReason)")
    );
}

#[test]
fn schemas_lose_what_gemini_rejects() {
    let schema = json!({
        "type": "object",
        "$schema": "x",
        "additionalProperties": false,
        "properties": {"plan": {"type": "array", "items": {"type": "object", "additionalProperties": false, "properties": {"id": {"type": "string", "minLength": 1}}}}},
        "required": ["plan"],
    });
    assert_eq!(
        reduce_schema(&schema),
        json!({"type": "object", "properties": {"plan": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}}}, "required": ["plan"]})
    );
}
