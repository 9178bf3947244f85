//! Each provider end to end: a tool round trip and an answer give the same event shape, the
//! request bodies are what the provider expects, and usage and cost are right.

use serde_json::{json, Value};

use crate::mock::{anthropic, gemini, openai, Mock, Reply};
use crate::util::{Output, TestDir};

const SHAPE: [&str; 9] =
    ["run_start", "tool_call", "usage", "tool_result", "text", "text", "usage", "final", "run_end"];

fn shape_and_costs(out: &Output) -> Vec<Value> {
    out.assert_code(0);
    let events = out.stream();
    assert_eq!(out.types(), SHAPE);
    assert_eq!(events[1]["name"], "read_file");
    assert_eq!(events[1]["args"], json!({"path": "a.txt"}));
    assert_eq!(events[3]["status"], "ok");
    assert_eq!(events[7]["text"], "It says hi.");
    events
}

#[test]
fn openai_round_trip() {
    let dir = TestDir::new("openai-round");
    dir.write("work/a.txt", "hi\n");
    let mock = Mock::start(vec![
        Reply::sse(&openai::tool_turn("call_1", "read_file", r#"{"path":"a.txt"}"#)),
        Reply::sse(&openai::answer(&["It says ", "hi."], 1000, 50)),
    ]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "gpt-4o-mini")
        .args(&["exec", "-o", "stream-json", "read a.txt"])
        .run();
    let events = shape_and_costs(&out);
    // gpt-4o-mini: $0.15 in, $0.60 out per million.
    assert_eq!(
        events[6],
        json!({"schemaVersion": 1, "type": "usage", "runId": events[0]["runId"], "promptTokens": 1000, "completionTokens": 50, "totalTokens": 1050, "costUsd": 0.00018})
    );
}

#[test]
fn anthropic_round_trip() {
    let dir = TestDir::new("anthropic-round");
    dir.write("work/a.txt", "hi\n");
    let mock = Mock::start(vec![
        Reply::sse(&anthropic::turn(
            &[
                json!({"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.txt"}}),
            ],
            300,
            40,
            "tool_use",
        )),
        Reply::sse(&anthropic::turn(
            &[json!({"type": "text", "pieces": ["It says ", "hi."]})],
            400,
            20,
            "end_turn",
        )),
    ]);
    let out = dir
        .zero()
        .anthropic_at(&mock.url())
        .args(&["exec", "-o", "stream-json", "-m", "sonnet-4.5", "-r", "high", "read a.txt"])
        .run();
    let events = shape_and_costs(&out);
    assert_eq!(
        (events[0]["provider"].as_str(), events[0]["apiModel"].as_str()),
        (Some("anthropic"), Some("claude-sonnet-4-5-20250929"))
    );
    // claude-sonnet-4.5: $3 in, $15 out per million.
    assert_eq!(events[6]["costUsd"], 0.0015);
    assert_eq!(
        (events[6]["promptTokens"].as_u64(), events[6]["completionTokens"].as_u64()),
        (Some(400), Some(20))
    );
    let requests = mock.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].headers["x-api-key"], "ant-test-key-123");
    assert_eq!(requests[0].headers["anthropic-version"], "2023-06-01");
    let body = requests[1].json();
    assert_eq!(body["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(body["max_tokens"], 64000);
    assert_eq!(body["stream"], true);
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 32000}));
    // Cache breakpoints: the system block, the end of the previous call's request, and the
    // end of this one.
    let system = body["system"].as_array().unwrap();
    assert_eq!(system.len(), 1);
    assert!(system[0]["text"].as_str().unwrap().starts_with("You are Zero"));
    assert_eq!(system[0]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "read a.txt", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.txt"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "File: a.txt (1 lines)\n\n1 | hi\n", "cache_control": {"type": "ephemeral"}}]},
        ])
    );
    let tools: Vec<&str> =
        body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["read_file", "update_plan", "list_directory", "grep", "glob"]);
    assert!(body["tools"][0]["input_schema"]["properties"]["path"].is_object());
}

#[test]
fn gemini_round_trip() {
    let dir = TestDir::new("gemini-round");
    dir.write("work/a.txt", "hi\n");
    let mock = Mock::start(vec![
        Reply::sse(&[gemini::chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 200, "candidatesTokenCount": 10}}),
        )]),
        Reply::sse(&[
            gemini::chunk(
                json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "It says "}]}}], "usageMetadata": {"promptTokenCount": 300}}),
            ),
            gemini::chunk(
                json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "hi."}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 300, "candidatesTokenCount": 20, "thoughtsTokenCount": 4}}),
            ),
        ]),
    ]);
    let out = dir
        .zero()
        .gemini_at(&mock.url())
        .args(&["exec", "-o", "stream-json", "-m", "gemini-2.5-flash", "read a.txt"])
        .run();
    let events = shape_and_costs(&out);
    assert_eq!(events[1]["id"], "gemini_tool_1");
    // gemini-2.5-flash: $0.30 in, $2.50 out per million; thoughts count as output.
    assert_eq!(
        (events[6]["promptTokens"].as_u64(), events[6]["completionTokens"].as_u64()),
        (Some(300), Some(24))
    );
    assert_eq!(events[6]["costUsd"], 0.00015);
    let requests = mock.requests();
    assert_eq!(requests[0].path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    assert_eq!(requests[0].headers["x-goog-api-key"], "gem-test-key-123");
    let body = requests[1].json();
    assert_eq!(body["generationConfig"], json!({"maxOutputTokens": 65536}));
    assert!(body["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("You are Zero"));
    assert_eq!(
        body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "read a.txt"}]},
            {"role": "model", "parts": [{"functionCall": {"id": "gemini_tool_1", "name": "read_file", "args": {"path": "a.txt"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "gemini_tool_1", "name": "read_file", "response": {"result": "File: a.txt (1 lines)\n\n1 | hi\n"}}}]},
        ])
    );
    let declarations = &body["tools"][0]["functionDeclarations"];
    assert_eq!(declarations.as_array().unwrap().len(), 5);
    assert!(!body["tools"].to_string().contains("additionalProperties"));
}

#[test]
fn reasoning_effort_reaches_openai_reasoning_models() {
    let dir = TestDir::new("effort");
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["ok"], 1, 1))]);
    let out = dir.zero().openai(&mock.v1(), "gpt-5").args(&["exec", "-r", "minimal", "hi"]).run();
    out.assert_code(0);
    assert_eq!(mock.requests()[0].json()["reasoning_effort"], "minimal");
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["ok"], 1, 1))]);
    let out = dir.zero().openai(&mock.v1(), "gpt-4.1").args(&["exec", "-r", "high", "hi"]).run();
    out.assert_code(0);
    assert!(mock.requests()[0].json().get("reasoning_effort").is_none());
    assert_eq!(out.rows(), "[zero] WARNING: GPT-4.1 does not take a reasoning effort; --reasoning-effort high is ignored.\n");
}

#[test]
fn anthropic_overloaded_mid_stream_and_errors() {
    let dir = TestDir::new("anthropic-errors");
    let mut stream =
        anthropic::turn(&[json!({"type": "text", "pieces": ["Start"]})], 1, 1, "end_turn");
    stream.truncate(3);
    stream.push("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n".to_string());
    let mock = Mock::start(vec![Reply::sse(&stream)]);
    let out = dir
        .zero()
        .env("ANTHROPIC_API_KEY", "k-123")
        .env("ANTHROPIC_BASE_URL", &mock.url())
        .args(&["exec", "-o", "stream-json", "-m", "haiku-4.5", "hi"])
        .run();
    out.assert_code(3);
    let events = out.stream();
    assert_eq!(
        events[events.len() - 2]["message"],
        "Provider returned error during streaming: Overloaded"
    );
    assert_eq!(out.text(), "Start");
    assert_eq!(mock.requests().len(), 1, "text was written: no retry");
    let body =
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let mock = Mock::start(vec![Reply::status(401, "application/json", body)]);
    let out = dir
        .zero()
        .env("ANTHROPIC_API_KEY", "k-123")
        .env("ANTHROPIC_BASE_URL", &mock.url())
        .args(&["exec", "-m", "haiku-4.5", "hi"])
        .run();
    out.assert_code(3);
    assert_eq!(
        out.rows(),
        "[zero] Provider authentication error (HTTP 401, check your API key): invalid x-api-key\n"
    );
}

#[test]
fn gemini_safety_blocks_are_provider_errors() {
    let dir = TestDir::new("gemini-safety");
    let mock = Mock::start(vec![Reply::sse(&[gemini::chunk(
        json!({"promptFeedback": {"blockReason": "SAFETY"}}),
    )])]);
    let out = dir
        .zero()
        .env("GEMINI_API_KEY", "g-123")
        .env("GEMINI_BASE_URL", &mock.url())
        .args(&["exec", "-m", "gemini-flash", "hi"])
        .run();
    out.assert_code(3);
    assert_eq!(out.rows(), "[zero] Content blocked: SAFETY (blockReason SAFETY)\n");
}

#[test]
fn text_a_provider_streams_after_a_tool_call_comes_before_it_and_keys_across_it_are_whole() {
    let key_tail = "-proj-Ab3dEfGh1jKlMnOpQrStUvWxYz0123456789abcd";
    let anthropic_turn = anthropic::turn(
        &[
            json!({"type": "text", "pieces": ["Reading it; the key is sk"]}),
            json!({"type": "tool_use", "id": "tu1", "name": "read_file", "input": {"path": "a.txt"}}),
            json!({"type": "text", "pieces": [key_tail, " ok"]}),
        ],
        10,
        5,
        "tool_use",
    );
    let gemini_turn = [
        gemini::chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Reading it; the key is sk"}, {"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}}]}}]}),
        ),
        gemini::chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": key_tail}, {"text": " ok"}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}}),
        ),
    ];
    let gemini_done = [gemini::chunk(
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "done"}]}, "finishReason": "STOP"}]}),
    )];
    for family in ["anthropic", "google"] {
        let dir = TestDir::new("text-after-call");
        dir.write("work/a.txt", "hi\n");
        let (first, then, zero) = match family {
            "anthropic" => (
                Reply::sse(&anthropic_turn),
                Reply::sse(&anthropic::turn(
                    &[json!({"type": "text", "pieces": ["done"]})],
                    1,
                    1,
                    "end_turn",
                )),
                dir.zero().env("ANTHROPIC_API_KEY", "ant-test-key-123"),
            ),
            _ => (
                Reply::sse(&gemini_turn),
                Reply::sse(&gemini_done),
                dir.zero().env("GEMINI_API_KEY", "gem-test-key-123"),
            ),
        };
        let mock = Mock::start(vec![first, then]);
        let base = if family == "anthropic" { "ANTHROPIC_BASE_URL" } else { "GEMINI_BASE_URL" };
        let model = if family == "anthropic" { "sonnet-4.5" } else { "gemini-2.5-flash" };
        let out = zero
            .env(base, &mock.url())
            .args(&["exec", "-o", "stream-json", "--schema-version", "2", "-m", model, "go"])
            .run();
        out.assert_code(0);
        let kinds: Vec<String> = out.types().into_iter().filter(|k| k != "heartbeat").collect();
        let first_call: Vec<&str> =
            kinds.iter().map(String::as_str).take_while(|k| *k != "tool_result").collect();
        let texts = first_call.iter().filter(|k| **k == "text").count();
        assert!(first_call[1..1 + texts].iter().all(|k| *k == "text"), "{family}: {kinds:?}");
        assert_eq!(&first_call[1 + texts..], ["tool_call", "usage"], "{family}: {kinds:?}");
        crate::util::assert_no_piece_of(&out.stdout, &format!("sk{key_tail}"), family);
        assert!(
            out.text().starts_with("Reading it; the key is [REDACTED] ok"),
            "{family}: {}",
            out.text()
        );
    }
}
