//! `--output-schema` end to end: the `structured_output` tool each wire format is sent, an
//! answer that ends the run (in every output), invalid answers and reminders, the attempts
//! limit, calls after the answer, and every way a schema can be refused.

use serde_json::{json, Value};

use crate::mock::{anthropic, gemini, openai, Mock, Reply};
use crate::util::TestDir;

const VERDICT: &str = r#"{"type": "object", "properties": {"verdict": {"enum": ["approve", "reject"]}, "findings": {"type": "array", "items": {"type": "string"}}}, "required": ["verdict", "findings"], "additionalProperties": false}"#;

const LIST: &str = r##"{"type": "array", "items": {"$ref": "#/$defs/n"}, "$defs": {"n": {"type": "integer", "minimum": 0}}}"##;

const EXEC_2: [&str; 5] = ["exec", "-o", "stream-json", "--schema-version", "2"];
const SCHEMA_2: [&str; 4] = ["-o", "stream-json", "--schema-version", "2"];

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

/// `zero exec --script` playing `turns`, with `args` after it.
fn scripted(dir: &TestDir, turns: Value, args: &[&str]) -> crate::util::Zero {
    let script = dir.script(&json!({"turns": turns})).display().to_string();
    dir.zero().args(&["exec", "--script", &script]).args(args)
}

/// The `structured_output` entry of a request's tool list (its name at `name_at`).
fn structured_tool(tools: &Value, name_at: &str) -> Value {
    let list = tools.as_array().expect("a tool list");
    list.iter()
        .find(|t| t.pointer(name_at) == Some(&json!("structured_output")))
        .cloned()
        .expect("structured_output is offered")
}

/// The events of a run without `runId` and `seq`, for exact comparison.
fn bare(events: Vec<Value>) -> Vec<Value> {
    events
        .into_iter()
        .map(|mut e| {
            let map = e.as_object_mut().unwrap();
            map.remove("runId");
            map.remove("seq");
            map.remove("durationMs");
            e
        })
        .collect()
}

#[test]
fn a_valid_answer_ends_the_run_in_every_output() {
    let dir = TestDir::new("so-valid");
    let turns = json!([{"toolCalls": [call("a", "structured_output", json!({"verdict": "approve", "findings": []}))]}, {"error": "never called"}]);
    let answer = r#"{"findings":[],"verdict":"approve"}"#;
    // Text: the compact JSON, one line, on stdout.
    let out = dir.zero();
    let script = dir.script(&json!({"turns": turns}));
    let script = script.display().to_string();
    let out = out
        .args(&["exec", "--ephemeral", "--script", &script, "--output-schema", VERDICT, "review"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, format!("{answer}\n"));
    // Schema 1: final.text only; the tool's side effect is read.
    let out = dir
        .zero()
        .args(&[
            "exec",
            "--ephemeral",
            "-o",
            "stream-json",
            "--script",
            &script,
            "--output-schema",
            VERDICT,
            "review",
        ])
        .run();
    out.assert_code(0);
    let events = bare(out.events());
    assert_eq!(
        &events[1..],
        [
            json!({"schemaVersion": 1, "type": "tool_call", "id": "a", "name": "structured_output", "args": {"verdict": "approve", "findings": []}, "sideEffect": "read"}),
            json!({"schemaVersion": 1, "type": "tool_result", "id": "a", "status": "ok", "output": "Accepted.", "truncated": false}),
            json!({"schemaVersion": 1, "type": "final", "text": answer}),
            json!({"schemaVersion": 1, "type": "run_end", "status": "success", "exitCode": 0}),
        ]
    );
    // Schema 2: final.structured too, and the side effect none.
    let out = dir
        .zero()
        .args(&EXEC_2)
        .args(&["--ephemeral", "--script", &script, "--output-schema", VERDICT, "review"])
        .run();
    out.assert_code(0);
    let events = bare(out.events());
    assert_eq!(events[1]["sideEffect"], "none");
    assert_eq!(
        &events[3..],
        [
            json!({"schemaVersion": 2, "type": "final", "text": answer, "structured": {"verdict": "approve", "findings": []}}),
            json!({"schemaVersion": 2, "type": "run_end", "status": "success", "exitCode": 0, "eventCount": 5}),
        ]
    );
    // -o json: the final line carries it.
    let out = dir
        .zero()
        .args(&[
            "exec",
            "--ephemeral",
            "-o",
            "json",
            "--script",
            &script,
            "--output-schema",
            VERDICT,
            "review",
        ])
        .run();
    let last_final = out.events().into_iter().find(|e| e["type"] == "final").unwrap();
    assert_eq!(last_final["text"], answer);
}

#[test]
fn a_null_answer_leaves_structured_out_and_a_wrapped_answer_is_the_value() {
    let dir = TestDir::new("so-null");
    let out = scripted(
        &dir,
        json!([{"toolCalls": [call("a", "structured_output", json!({"value": null}))]}]),
        &SCHEMA_2,
    )
    .args(&["--output-schema", r#"{"type": "null"}"#, "x"])
    .run();
    out.assert_code(0);
    let last_final = out.events().into_iter().find(|e| e["type"] == "final").unwrap();
    assert_eq!(last_final["text"], "null");
    assert!(last_final.get("structured").is_none());
    let out = scripted(
        &dir,
        json!([{"toolCalls": [call("a", "structured_output", json!({"value": [3, 1]}))]}]),
        &SCHEMA_2,
    )
    .args(&["--output-schema", LIST, "x"])
    .run();
    out.assert_code(0);
    let last_final = out.events().into_iter().find(|e| e["type"] == "final").unwrap();
    assert_eq!(
        (last_final["text"].clone(), last_final["structured"].clone()),
        (json!("[3,1]"), json!([3, 1]))
    );
}

#[test]
fn invalid_answers_go_back_as_problems_and_text_turns_get_a_reminder() {
    let dir = TestDir::new("so-retry");
    let mock = Mock::start(vec![
        Reply::sse(&openai::answer(&["It looks fine."], 10, 2)),
        Reply::sse(&openai::tool_turn("c1", "structured_output", r#"{"value": [1, -2, "x"]}"#)),
        Reply::sse(&openai::tool_turn("c2", "structured_output", r#"{"value": [1, 2]}"#)),
    ]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-model")
        .args(&EXEC_2)
        .args(&["--output-schema", LIST, "count"])
        .run();
    out.assert_code(0);
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    // The tool as sent: the wrapped schema, its reference moved under /properties/value.
    let tools = requests[0].json()["tools"].clone();
    let tool = structured_tool(&tools, "/function/name");
    assert_eq!(
        tool["function"]["parameters"],
        json!({"type": "object", "properties": {"value": {"type": "array", "items": {"$ref": "#/properties/value/$defs/n"}, "$defs": {"n": {"type": "integer", "minimum": 0}}}}, "required": ["value"], "additionalProperties": false})
    );
    let system = requests[0].json()["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(system.ends_with("When the task is done, give the final answer by calling the structured_output tool with the answer as its arguments, matching its schema exactly. Do not write the answer as text."));
    // The reminder after the text-only turn.
    let second = requests[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "user", "content": "You have not given the answer. Call the structured_output tool now, with the answer as its arguments, matching its schema."})
    );
    // The problems of the invalid answer, pointers into the answer as meant (not /value/...).
    let third = requests[2].json();
    let result = third["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(result["role"], "tool");
    assert_eq!(
        result["content"],
        "/1: must be at least 0\n/2: must be of type integer, not a string"
    );
    let last_final = out.events().into_iter().find(|e| e["type"] == "final").unwrap();
    assert_eq!(last_final["structured"], json!([1, 2]));
}

#[test]
fn the_attempts_limit_ends_the_run_with_the_last_problem_in_both_schemas() {
    let dir = TestDir::new("so-attempts");
    let bad = || call("b", "structured_output", json!({"verdict": "maybe", "findings": []}));
    let turns = json!([{"text": "thinking"}, {"toolCalls": [bad()]}, {"toolCalls": [bad()]}, {"error": "never"}]);
    for (schema, code) in [("1", "max_turns"), ("2", "output_schema")] {
        let out = scripted(&dir, turns.clone(), &["-o", "stream-json", "--schema-version", schema])
            .args(&["--output-schema", VERDICT, "x"])
            .run();
        out.assert_code(4);
        let events = out.events();
        let error = events.iter().find(|e| e["type"] == "error").unwrap();
        assert_eq!(error["code"], code);
        assert_eq!(
            error["message"],
            "The answer did not match the output schema after 3 attempts: /verdict: must be one of [\"approve\",\"reject\"]"
        );
        if schema == "2" {
            assert_eq!(events.last().unwrap()["status"], "incomplete");
        }
    }
    // A text-only last attempt: no reminder, the run ends saying so.
    let out = scripted(
        &dir,
        json!([{"toolCalls": [bad()]}, {"text": "done"}, {"error": "never"}]),
        &["-o", "json"],
    )
    .args(&["--output-schema", VERDICT, "--output-schema-attempts", "2", "x"])
    .run();
    out.assert_code(4);
    let error = out.events().into_iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(
        error["message"],
        "The answer did not match the output schema after 2 attempts: no structured_output call"
    );
}

#[test]
fn calls_after_the_answer_are_not_run_and_calls_before_it_are() {
    let dir = TestDir::new("so-after");
    dir.write("work/a.txt", "alpha\n");
    let out = scripted(
        &dir,
        json!([{"toolCalls": [
            call("r", "read_file", json!({"path": "a.txt"})),
            call("s", "structured_output", json!({"verdict": "reject", "findings": ["a"]})),
            call("w", "write_file", json!({"path": "b.txt", "content": "x"}))
        ]}]),
        &SCHEMA_2,
    )
    .args(&["--auto", "medium", "--output-schema", VERDICT, "x"])
    .run();
    out.assert_code(0);
    let results: Vec<(Value, Value, Value)> = out
        .events()
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| (e["id"].clone(), e["status"].clone(), e["output"].clone()))
        .collect();
    assert_eq!(results[1], (json!("s"), json!("ok"), json!("Accepted.")));
    assert_eq!(
        results[2],
        (json!("w"), json!("error"), json!("not run: the answer was already given"))
    );
    assert_eq!(results[0].1, "ok");
    assert!(!dir.work().join("b.txt").exists());
}

#[test]
fn each_wire_format_gets_the_tool_in_its_own_shape_and_one_call_answers() {
    let dir = TestDir::new("so-wire");
    let args = json!({"verdict": "approve", "findings": ["ok"]});
    let structured = json!({"verdict": "approve", "findings": ["ok"]});
    let final_of = |out: &crate::util::Output| {
        out.events().into_iter().find(|e| e["type"] == "final").unwrap()["structured"].clone()
    };
    // Anthropic: input_schema is the object schema as it is.
    let mock = Mock::start(vec![Reply::sse(&anthropic::turn(
        &[json!({"type": "tool_use", "id": "toolu_1", "name": "structured_output", "input": args})],
        10,
        5,
        "tool_use",
    ))]);
    let out = dir
        .zero()
        .anthropic_at(&mock.url())
        .args(&EXEC_2)
        .args(&["-m", "haiku-4.5", "--output-schema", VERDICT, "x"])
        .run();
    out.assert_code(0);
    assert_eq!(final_of(&out), structured);
    let body = mock.requests()[0].json();
    let tool = structured_tool(&body["tools"], "/name");
    assert_eq!(tool["input_schema"], serde_json::from_str::<Value>(VERDICT).unwrap());
    assert_eq!(mock.requests().len(), 1);
    // Gemini: parametersJsonSchema, the schema whole (here a wrapped one, answered three
    // times without the wrapper: the attempts run out).
    let gemini_call = || {
        Reply::sse(&[gemini::chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "structured_output", "args": args}}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2}}),
        )])
    };
    let mock = Mock::start(vec![gemini_call(), gemini_call(), gemini_call()]);
    let out = dir
        .zero()
        .gemini_at(&mock.url())
        .args(&EXEC_2)
        .args(&["-m", "gemini-2.5-flash", "--output-schema", LIST, "x"])
        .run();
    out.assert_code(4);
    assert_eq!(mock.requests().len(), 3);
    let body = mock.requests()[0].json();
    let declarations = body["tools"][0]["functionDeclarations"].as_array().unwrap().clone();
    let tool = declarations.iter().find(|t| t["name"] == "structured_output").unwrap().clone();
    assert!(tool.get("parameters").is_none());
    assert_eq!(
        tool["parametersJsonSchema"]["properties"]["value"]["items"]["$ref"],
        "#/properties/value/$defs/n"
    );
    let mock = Mock::start(vec![gemini_call()]);
    let out = dir
        .zero()
        .gemini_at(&mock.url())
        .args(&EXEC_2)
        .args(&["-m", "gemini-2.5-flash", "--output-schema", VERDICT, "x"])
        .run();
    out.assert_code(0);
    assert_eq!(final_of(&out), structured);
    // Responses: strict false.
    let event =
        |value: Value| format!("event: {}\ndata: {value}\n\n", value["type"].as_str().unwrap());
    let arguments = args.to_string();
    let mock = Mock::start(vec![Reply::sse(&[
        event(
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "structured_output", "arguments": ""}}),
        ),
        event(
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": arguments}),
        ),
        event(
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "structured_output", "arguments": arguments}}),
        ),
        event(
            json!({"type": "response.completed", "response": {"status": "completed", "usage": {"input_tokens": 5, "output_tokens": 3}}}),
        ),
    ])]);
    let out = dir
        .zero()
        .official_openai_at(&mock.v1())
        .env("ZERO_OPENAI_API", "responses")
        .args(&EXEC_2)
        .args(&["-m", "gpt-5", "--output-schema", VERDICT, "x"])
        .run();
    out.assert_code(0);
    assert_eq!(final_of(&out), structured);
    let body = mock.requests()[0].json();
    let tool = structured_tool(&body["tools"], "/name");
    assert_eq!(tool["strict"], false);
    assert_eq!(tool["parameters"], serde_json::from_str::<Value>(VERDICT).unwrap());
    // Chat completions: the object schema as it is.
    let mock = Mock::start(vec![Reply::sse(&openai::tool_turn(
        "c1",
        "structured_output",
        &args.to_string(),
    ))]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-model")
        .args(&EXEC_2)
        .args(&["--output-schema", VERDICT, "x"])
        .run();
    out.assert_code(0);
    assert_eq!(final_of(&out), structured);
    let body = mock.requests()[0].json();
    let tool = structured_tool(&body["tools"], "/function/name");
    assert_eq!(tool["function"]["parameters"], serde_json::from_str::<Value>(VERDICT).unwrap());
}

#[test]
fn a_schema_that_cannot_be_used_is_a_usage_error_before_any_call() {
    let dir = TestDir::new("so-errors");
    dir.write("work/big.json", &format!("{{\"description\": \"{}\"}}", "x".repeat(1024 * 1024)));
    std::fs::create_dir_all(dir.path("work/folder")).unwrap();
    dir.write("work/bad.json", r#"{"type": "object", "properties": {"a": {"if": {}}}}"#);
    let work = dir.work().display().to_string();
    let mock = Mock::start(vec![]);
    let cases: Vec<(&str, String)> = vec![
        ("bad.json", format!("--output-schema {work}/bad.json: keyword \"if\" is not supported (at /properties/a/if)")),
        (r##"{"$ref": "#/$defs/nope"}"##, "--output-schema: $ref \"#/$defs/nope\" does not resolve (only \"#\" and \"#/...\" pointers into this schema are supported) (at /$ref)".to_string()),
        ("{not json", "--output-schema is not valid JSON: line 1, column 2: key must be a string at line 1 column 2".to_string()),
        ("big.json", format!("Cannot read --output-schema {work}/big.json: it is larger than 1 MiB")),
        ("folder", format!("Cannot read --output-schema {work}/folder: it is not a regular file")),
        ("missing.json", format!("Cannot read --output-schema {work}/missing.json: it does not exist")),
    ];
    for (value, message) in cases {
        let out = dir
            .zero()
            .openai(&mock.v1(), "m")
            .args(&["exec", "-o", "json", "--output-schema", value, "x"])
            .run();
        out.assert_code(2);
        let error = out.events().into_iter().find(|e| e["type"] == "error").unwrap();
        assert_eq!(error["message"], message.as_str(), "{value}");
    }
    for (flags, message) in [
        (
            &["--output-schema", VERDICT, "--disabled-tools", "grep,structured_output"][..],
            "structured_output cannot be disabled: --output-schema gives its answer through it.",
        ),
        (
            &["--output-schema", VERDICT, "--output-schema-attempts", "11"][..],
            "Invalid --output-schema-attempts value \"11\". Expected an integer from 1 to 10.",
        ),
    ] {
        let out = dir
            .zero()
            .openai(&mock.v1(), "m")
            .args(&["exec", "-o", "json"])
            .args(flags)
            .args(&["x"])
            .run();
        out.assert_code(2);
        let error = out.events().into_iter().find(|e| e["type"] == "error").unwrap();
        assert_eq!(error["message"], message);
    }
    assert!(mock.requests().is_empty());
}

#[test]
fn list_tools_shows_structured_output_only_with_the_flag() {
    let dir = TestDir::new("so-list");
    let listed = |extra: &[&str]| {
        let out = dir
            .zero()
            .args(&[
                "exec",
                "--list-tools",
                "-o",
                "json",
                "--enabled-tools",
                "grep,structured_output",
            ])
            .args(extra)
            .run();
        out.events()[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "structured_output")
            .cloned()
    };
    let tool = listed(&["--output-schema", VERDICT]).unwrap();
    assert_eq!(
        (tool["side_effect"].clone(), tool["enabled"].clone()),
        (json!("none"), json!(true))
    );
    assert_eq!(tool["parameters"], serde_json::from_str::<Value>(VERDICT).unwrap());
    let out = dir.zero().args(&["exec", "--list-tools", "-o", "json"]).run();
    assert!(out.events()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["name"] != "structured_output"));
    let text = dir.zero().args(&["exec", "--list-tools", "--output-schema", LIST]).run();
    assert!(
        text.stdout.contains("structured_output") || text.stderr.contains("structured_output"),
        "{text:?}"
    );
}

#[test]
fn the_session_keeps_the_schema_digest_and_a_resume_without_the_flag_is_a_normal_run() {
    let dir = TestDir::new("so-session");
    let out = scripted(&dir, json!([{"toolCalls": [call("a", "structured_output", json!({"verdict": "approve", "findings": []}))]}]), &SCHEMA_2)
        .args(&["--output-schema", VERDICT, "x"])
        .run();
    out.assert_code(0);
    let session = out.events()[0]["sessionId"].as_str().unwrap().to_string();
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.sessions().join(&session).join("metadata.json")).unwrap(),
    )
    .unwrap();
    let digest = std::process::Command::new("sha256sum")
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(VERDICT.as_bytes())?;
            child.wait_with_output()
        });
    let digest = String::from_utf8(digest.unwrap().stdout).unwrap();
    assert_eq!(meta["outputSchemaSha256"], digest.split(' ').next().unwrap());
    let sessions = crate::util::read_sessions(&dir);
    assert!(sessions.contains("\"name\":\"structured_output\""), "the answer's call is kept");
    let out =
        scripted(&dir, json!([{"text": "plain answer"}]), &["--resume", &session, "again"]).run();
    out.assert_code(0);
    assert_eq!(out.stdout, "plain answer\n");
    // That run had no schema: the metadata no longer names one.
    let path = dir.sessions().join(&session).join("metadata.json");
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(meta.get("outputSchemaSha256").is_none());
}

#[test]
fn in_live_mode_every_turn_ends_with_a_structured_answer() {
    let dir = TestDir::new("so-live");
    let answer = |verdict: &str| json!({"toolCalls": [call("a", "structured_output", json!({"verdict": verdict, "findings": []}))]});
    let prompt =
        |text: &str| json!({"schemaVersion": 2, "type": "prompt", "content": text}).to_string();
    let out = scripted(
        &dir,
        json!([answer("approve"), {"text": "no call"}, answer("reject")]),
        &["-i", "stream-json", "-o", "stream-json", "--live"],
    )
    .args(&["--output-schema", VERDICT])
    .stdin(format!("{}\n{}\n", prompt("one"), prompt("two")))
    .run();
    out.assert_code(0);
    let finals: Vec<Value> = out
        .events()
        .into_iter()
        .filter(|e| e["type"] == "final")
        .map(|e| e["structured"].clone())
        .collect();
    assert_eq!(
        finals,
        [
            json!({"verdict": "approve", "findings": []}),
            json!({"verdict": "reject", "findings": []})
        ]
    );
}

#[test]
fn enabled_tools_structured_output_alone_offers_only_the_answer() {
    let dir = TestDir::new("so-only");
    let mock = Mock::start(vec![Reply::sse(&openai::tool_turn(
        "c1",
        "structured_output",
        r#"{"value": [1]}"#,
    ))]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-model")
        .args(&["exec", "--output-schema", LIST, "--enabled-tools", "structured_output", "x"])
        .run();
    out.assert_code(0);
    let tools: Vec<Value> = mock.requests()[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].clone())
        .collect();
    assert_eq!(tools, [json!("structured_output")]);
}

#[test]
fn an_answer_is_redacted_in_its_names_and_numbers_too() {
    let dir = TestDir::new("so-redact");
    let answer = json!({"s3cr3tvalue123": 1, "pin": 98765432109876_u64});
    let out =
        scripted(&dir, json!([{"toolCalls": [call("a", "structured_output", answer)]}]), &SCHEMA_2)
            .env("MYTOK", "s3cr3tvalue123")
            .env("MYPIN", "98765432109876")
            .args(&[
                "--redact-env",
                "MYTOK",
                "--redact-env",
                "MYPIN",
                "--output-schema",
                r#"{"type": "object"}"#,
                "x",
            ])
            .run();
    out.assert_code(0);
    assert!(
        !out.stdout.contains("s3cr3tvalue123") && !out.stdout.contains("98765432109876"),
        "{}",
        out.stdout
    );
    let last_final = out.events().into_iter().find(|e| e["type"] == "final").unwrap();
    assert_eq!(last_final["structured"], json!({"[REDACTED]": 1, "pin": "[REDACTED]"}));
    assert!(!crate::util::read_sessions(&dir).contains("s3cr3tvalue123"));
}

/// Invalid, then text only, then valid, on one wire format: the problems and the reminder
/// reach the model in that format's own shape, and the wrapped schema is what it is offered.
#[test]
fn anthropic_and_gemini_carry_problems_and_reminders_too() {
    let dir = TestDir::new("so-formats");
    let text_turn_anthropic = || {
        Reply::sse(&anthropic::turn(
            &[json!({"type": "text", "pieces": ["thinking"]})],
            5,
            2,
            "end_turn",
        ))
    };
    let call_anthropic = |input: Value| {
        Reply::sse(&anthropic::turn(
            &[
                json!({"type": "tool_use", "id": "toolu_1", "name": "structured_output", "input": input}),
            ],
            5,
            2,
            "tool_use",
        ))
    };
    let mock = Mock::start(vec![
        call_anthropic(json!({"value": [-1]})),
        text_turn_anthropic(),
        call_anthropic(json!({"value": [4]})),
    ]);
    let out = dir
        .zero()
        .anthropic_at(&mock.url())
        .args(&EXEC_2)
        .args(&["-m", "haiku-4.5", "--output-schema", LIST, "x"])
        .run();
    out.assert_code(0);
    let requests = mock.requests();
    let tool = structured_tool(&requests[0].json()["tools"], "/name");
    assert_eq!(tool["input_schema"]["required"], json!(["value"]));
    let second = requests[1].json();
    let result = second["messages"].as_array().unwrap().last().unwrap()["content"][0].clone();
    assert_eq!(
        (result["type"].clone(), result["content"].clone()),
        (json!("tool_result"), json!("/0: must be at least 0"))
    );
    let third = requests[2].json();
    let reminder = third["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(reminder["role"], "user");
    assert!(reminder.to_string().contains("You have not given the answer."));
    // Gemini.
    let gemini_turn = |part: Value| {
        Reply::sse(&[gemini::chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2}}),
        )])
    };
    let mock = Mock::start(vec![
        gemini_turn(
            json!({"functionCall": {"name": "structured_output", "args": {"value": [-1]}}}),
        ),
        gemini_turn(json!({"text": "thinking"})),
        gemini_turn(json!({"functionCall": {"name": "structured_output", "args": {"value": [4]}}})),
    ]);
    let out = dir
        .zero()
        .gemini_at(&mock.url())
        .args(&EXEC_2)
        .args(&["-m", "gemini-2.5-flash", "--output-schema", LIST, "x"])
        .run();
    out.assert_code(0);
    let requests = mock.requests();
    let second = requests[1].json().to_string();
    assert!(second.contains("/0: must be at least 0"), "{second}");
    assert!(requests[2].json().to_string().contains("You have not given the answer."));
    let last_final = out.events().into_iter().find(|e| e["type"] == "final").unwrap();
    assert_eq!(last_final["structured"], json!([4]));
}

#[test]
fn in_text_mode_a_turn_that_is_not_the_answer_is_narration() {
    let dir = TestDir::new("so-narrate");
    let out = scripted(
        &dir,
        json!([{"text": "first thought."}, {"text": "second thought."}, {"toolCalls": [call("a", "structured_output", json!({"value": [1]}))]}]),
        &["--output-schema", LIST, "x"],
    )
    .run();
    out.assert_code(0);
    assert_eq!(out.stdout, "[1]\n");
    assert!(
        out.stderr.contains("[model] first thought.\n[model] second thought.\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn without_the_flag_structured_output_is_a_tool_zero_does_not_know() {
    let dir = TestDir::new("so-unknown");
    let out = scripted(
        &dir,
        json!([{"toolCalls": [call("a", "structured_output", json!({"value": 1}))]}, {"text": "done"}]),
        &SCHEMA_2,
    )
    .args(&["x"])
    .run();
    out.assert_code(0);
    let events = out.events();
    let tool_call = events.iter().find(|e| e["type"] == "tool_call").unwrap();
    assert_eq!(tool_call["sideEffect"], "unknown");
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["status"], "error");
    assert_eq!(events.iter().find(|e| e["type"] == "final").unwrap()["text"], "done");
}
