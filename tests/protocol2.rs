//! Stream-json schema 2 end to end: how the version is chosen, the envelope's
//! count of lines, heartbeats, reasoning from each provider, permission events, and images in
//! each provider's request format. Every run here is also checked line by line against
//! `zero schema 2` and the strict mirror in schema2.rs (util.rs does that for every run).

use std::io::{BufRead, BufReader, Read};

use serde_json::{json, Value};

use crate::mock::{anthropic, gemini, openai, Mock, Reply};
use crate::util::{Output, TestDir};

/// A run of the scripted provider with these extra arguments.
fn scripted(dir: &TestDir, script: Value, args: &[&str]) -> crate::util::Zero {
    let path = dir.script(&script).display().to_string();
    dir.zero().args(&["exec", "--provider", "scripted", "--script", &path]).args(args)
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// The `reasoning` deltas of a run, joined.
fn reasoning(events: &[Value]) -> String {
    of_type(events, "reasoning").iter().map(|e| e["delta"].as_str().unwrap()).collect()
}

/// The official OpenAI API (the Responses API for reasoning models) at a mock.
fn official(dir: &TestDir, mock: &Mock) -> crate::util::Zero {
    dir.zero().official_openai_at(&mock.v1())
}

fn anthropic_at(dir: &TestDir, mock: &Mock) -> crate::util::Zero {
    dir.zero().anthropic_at(&mock.url())
}

fn gemini_at(dir: &TestDir, mock: &Mock) -> crate::util::Zero {
    dir.zero().gemini_at(&mock.url())
}

/// `zero exec` with stream-json schema 2 output.
const EXEC_2: [&str; 5] = ["exec", "-o", "stream-json", "--schema-version", "2"];

const ANSWER: &str = r#"{"turns": [{"text": "done"}]}"#;

fn answer() -> Value {
    serde_json::from_str(ANSWER).unwrap()
}

fn line(version: u8, content: &str) -> String {
    format!("{{\"schemaVersion\":{version},\"type\":\"prompt\",\"content\":\"{content}\"}}\n")
}

#[test]
fn the_flag_or_the_first_input_line_chooses_the_version() {
    let dir = TestDir::new("negotiate");
    // The flag.
    let out = scripted(&dir, answer(), &["-o", "stream-json", "--schema-version", "2", "hi"]).run();
    out.assert_code(0);
    let events = out.stream();
    assert!(events.iter().all(|e| e["schemaVersion"] == 2));
    assert_eq!(events[0]["heartbeatMs"], 10000);
    // Without it, the first stream-json input line.
    let stream_in = ["-i", "stream-json", "-o", "stream-json"];
    let out = scripted(&dir, answer(), &stream_in).stdin(line(2, "a") + &line(2, "b")).run();
    out.assert_code(0);
    assert!(out.stream().iter().all(|e| e["schemaVersion"] == 2));
    let out = scripted(&dir, answer(), &stream_in).stdin(line(1, "a")).run();
    out.assert_code(0);
    assert!(out.stream().iter().all(|e| e["schemaVersion"] == 1 && e.get("seq").is_none()));
    // Without either, schema 1.
    let out = scripted(&dir, answer(), &["-o", "stream-json", "hi"]).run();
    assert!(out.stream().iter().all(|e| e["schemaVersion"] == 1));
}

#[test]
fn versions_zero_does_not_speak_and_mixed_lines_are_usage_errors() {
    let dir = TestDir::new("negotiate-bad");
    let error_of = |out: &Output| {
        out.assert_code(2);
        let events = out.stream();
        assert_eq!(out.types(), ["error", "run_end"]);
        (
            events[0]["schemaVersion"].as_u64().unwrap(),
            events[0]["message"].as_str().unwrap().to_string(),
        )
    };
    // A bad flag is written in schema 1, since no version is known.
    let out = scripted(&dir, answer(), &["-o", "stream-json", "--schema-version", "3", "hi"]).run();
    assert_eq!(
        error_of(&out),
        (1, "Unsupported schema version \"3\" (--schema-version). Supported: 1, 2.".to_string())
    );
    // An unsupported first line, too.
    let stream_in = ["-i", "stream-json", "-o", "stream-json"];
    let out = scripted(&dir, answer(), &stream_in).stdin(line(3, "a")).run();
    assert_eq!(
        error_of(&out),
        (1, "Invalid stream-json input at line 1: schemaVersion: unsupported version 3; supported: 1, 2".to_string())
    );
    // A later line must carry the first line's version; the error is in that version.
    let out = scripted(&dir, answer(), &stream_in).stdin(line(2, "a") + &line(1, "b")).run();
    assert_eq!(
        error_of(&out),
        (2, "Invalid stream-json input at line 2: schemaVersion: expected 2, got 1".to_string())
    );
    // The flag wins over the lines, and its version writes the error.
    let flagged = ["-i", "stream-json", "-o", "stream-json", "--schema-version", "2"];
    let out = scripted(&dir, answer(), &flagged).stdin(line(1, "a")).run();
    assert_eq!(
        error_of(&out),
        (2, "Invalid stream-json input at line 1: schemaVersion: expected 2, got 1".to_string())
    );
    // Under the flag, a line in a version zero does not speak says so, and lists the ones it does.
    let out = scripted(&dir, answer(), &flagged).stdin(line(3, "a")).run();
    assert_eq!(
        error_of(&out),
        (2, "Invalid stream-json input at line 1: schemaVersion: expected 2, got 3, a version zero does not speak (supported: 1, 2)".to_string())
    );
    // A bad flag value for heartbeats names the flag.
    let out = scripted(
        &dir,
        answer(),
        &["-o", "stream-json", "--schema-version", "2", "--heartbeat-ms", "soon", "hi"],
    )
    .run();
    assert_eq!(
        error_of(&out),
        (2, "Invalid --heartbeat-ms value \"soon\". Expected milliseconds from 0 to 3600000 (0 turns heartbeats off).".to_string())
    );
    // permission_response belongs to live mode.
    let response = "{\"schemaVersion\":2,\"type\":\"permission_response\",\"requestId\":\"r1\",\"decision\":\"allow\"}\n";
    let out = scripted(&dir, answer(), &stream_in).stdin(line(2, "a") + response).run();
    assert_eq!(
        error_of(&out),
        (2, "Invalid stream-json input at line 2: type: \"permission_response\" is read only in live mode, which this run is not".to_string())
    );
}

#[test]
fn seq_counts_every_line_from_one_and_event_count_is_their_number() {
    let dir = TestDir::new("seq");
    dir.write("work/a.txt", "one\n");
    let script = json!({"turns": [
        {"toolCalls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a.txt"}}], "usage": {"promptTokens": 10, "completionTokens": 2}},
        {"text": ["it says ", "one"], "usage": {"promptTokens": 20, "completionTokens": 3}}
    ]});
    let out = scripted(&dir, script, &["-o", "stream-json", "--schema-version", "2", "read"]).run();
    out.assert_code(0);
    let events = out.stream();
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
    assert_eq!(events.last().unwrap()["eventCount"], events.len());
    assert_eq!(out.stdout.lines().count(), events.len());
    // The usage lines number the calls and sum them.
    let usage = of_type(&events, "usage");
    assert_eq!((usage[0]["call"].as_u64(), usage[1]["call"].as_u64()), (Some(1), Some(2)));
    assert_eq!(
        usage[1]["cumulative"],
        json!({"promptTokens": 30, "completionTokens": 5, "totalTokens": 35})
    );
    let result = of_type(&events, "tool_result")[0];
    assert_eq!((&result["name"], &result["status"]), (&json!("read_file"), &json!("ok")));
    assert!(result["durationMs"].is_u64() && result.get("exitCode").is_none());
    // The turn limit is `incomplete`, as Zero's schema 2 has it.
    let looping =
        json!({"turns": [{"toolCalls": [{"name": "glob", "arguments": {"pattern": "*"}}]}]});
    let out = scripted(
        &dir,
        looping,
        &["-o", "stream-json", "--schema-version", "2", "--max-turns", "1", "go"],
    )
    .run();
    out.assert_code(4);
    let events = out.stream();
    let n = events.len();
    assert_eq!(
        (&events[n - 2]["code"], &events[n - 1]["status"]),
        (&json!("incomplete"), &json!("incomplete"))
    );
    assert_eq!(events[n - 1]["eventCount"], n);
}

#[test]
fn heartbeats_fill_a_silent_tool_and_never_follow_run_end() {
    let dir = TestDir::new("heartbeat");
    let script = json!({"turns": [
        {"toolCalls": [{"id": "slow", "name": "bash", "arguments": {"command": "sleep 3"}}]},
        {"text": "slept"}
    ]});
    let args = [
        "-o",
        "stream-json",
        "--schema-version",
        "2",
        "--auto",
        "high",
        "--heartbeat-ms",
        "1000",
        "nap",
    ];
    let out = scripted(&dir, script.clone(), &args).run();
    out.assert_code(0);
    let events = out.stream();
    let beats: Vec<&Value> = of_type(&events, "heartbeat");
    assert!(beats.len() >= 2, "{} heartbeats in a 3 s tool{out:?}", beats.len());
    let call = events.iter().position(|e| e["type"] == "tool_call").unwrap();
    let result = events.iter().position(|e| e["type"] == "tool_result").unwrap();
    for beat in &beats {
        assert_eq!((&beat["phase"], &beat["toolCallId"]), (&json!("tool"), &json!("slow")));
        let at = events.iter().position(|e| e == *beat).unwrap();
        assert!(call < at && at < result, "a tool heartbeat outside the tool's run");
    }
    let elapsed: Vec<u64> = beats.iter().map(|b| b["elapsedMs"].as_u64().unwrap()).collect();
    assert!(elapsed.windows(2).all(|w| w[0] < w[1]) && elapsed[0] > 0, "{elapsed:?}");
    assert_eq!(events.last().unwrap()["type"], "run_end");
    assert_eq!(events[0]["heartbeatMs"], 1000);
    // 0 turns them off; schema 1 has none and says the flag is ignored.
    let mut off = args;
    off[7] = "0";
    let out = scripted(&dir, script.clone(), &off).run();
    assert!(of_type(&out.stream(), "heartbeat").is_empty());
    let out = scripted(
        &dir,
        script,
        &["-o", "stream-json", "--auto", "high", "--heartbeat-ms", "1000", "nap"],
    )
    .run();
    let events = out.stream();
    assert!(of_type(&events, "heartbeat").is_empty());
    assert_eq!(
        of_type(&events, "warning").last().unwrap()["message"],
        "--heartbeat-ms is ignored: heartbeats are written only in stream-json schema 2 (--schema-version 2)."
    );
}

#[test]
fn heartbeats_cover_a_silent_provider_and_an_interrupt_ends_the_stream_in_schema_2() {
    let dir = TestDir::new("heartbeat-model");
    let mock = Mock::start(vec![Reply::Hang]);
    let mut child = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&[
            "exec",
            "-o",
            "stream-json",
            "--schema-version",
            "2",
            "--heartbeat-ms",
            "200",
            "hi",
        ])
        .spawn();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    // Two heartbeats while the provider says nothing; the reads end at the run's end at worst.
    while lines.iter().filter(|l: &&String| l.contains("\"heartbeat\"")).count() < 2 {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the run ended first: {lines:?}");
        lines.push(line);
    }
    let kill = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    assert!(kill.unwrap().success());
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    lines.extend(rest.lines().map(|l| format!("{l}\n")));
    let events: Vec<Value> = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    crate::util::check_stream(&lines.concat(), &[], 130).unwrap_or_else(|e| panic!("{e}"));
    let beats = of_type(&events, "heartbeat");
    assert!(beats.iter().all(|b| b["phase"] == "model" && b.get("toolCallId").is_none()));
    let n = events.len();
    assert_eq!(
        (&events[n - 2]["code"], &events[n - 2]["recoverable"]),
        (&json!("interrupted"), &json!(true))
    );
    assert_eq!(
        (&events[n - 1]["status"], &events[n - 1]["exitCode"]),
        (&json!("interrupted"), &json!(130))
    );
}

#[test]
fn a_denied_call_has_its_permission_events_and_an_allowed_one_its_policy_decision() {
    let dir = TestDir::new("permissions");
    let script = json!({"turns": [
        {"toolCalls": [
            {"id": "sh", "name": "bash", "arguments": {"command": "touch ran"}},
            {"id": "w", "name": "write_file", "arguments": {"path": "notes/new.txt", "content": "x"}}
        ]},
        {"text": "done"}
    ]});
    let out = scripted(
        &dir,
        script.clone(),
        &["-o", "stream-json", "--schema-version", "2", "--auto", "medium", "go"],
    )
    .run();
    out.assert_code(0);
    let events = out.stream();
    assert!(!dir.path("work/ran").exists());
    let mut kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    kinds.dedup_by(|a, b| *a == "text" && *b == "text");
    assert_eq!(
        kinds,
        [
            "run_start",
            "tool_call",
            "tool_call",
            "permission_request",
            "permission_decision",
            "tool_result",
            "permission_decision",
            "tool_result",
            "text",
            "final",
            "run_end"
        ]
    );
    let session = events[0]["sessionId"].as_str().unwrap();
    let strip = |e: &Value| {
        let mut e = e.clone();
        for key in ["schemaVersion", "runId", "seq", "durationMs"] {
            e.as_object_mut().unwrap().remove(key);
        }
        e
    };
    let denial = "Permission required for bash: Shell commands can read, write, or execute programs. The tool is marked \"prompt\" and was not executed. The caller can allow it with --auto high or --skip-permissions-unsafe.";
    assert_eq!(
        strip(&events[3]),
        json!({"type": "permission_request", "id": "sh", "name": "bash", "action": "prompt", "permission": "prompt", "permissionGranted": false, "permissionMode": "auto", "autonomy": "medium", "sideEffect": "shell", "sessionId": session, "risk": {"level": "high"}, "reason": "Shell commands can read, write, or execute programs. The tool is marked \"prompt\": this autonomy level does not run it without approval."})
    );
    assert_eq!(
        strip(&events[4]),
        json!({"type": "permission_decision", "id": "sh", "name": "bash", "action": "deny", "permission": "prompt", "permissionGranted": false, "permissionMode": "auto", "autonomy": "medium", "sideEffect": "shell", "sessionId": session, "risk": {"level": "high"}, "decisionReason": denial, "decidedBy": "policy"})
    );
    assert_eq!(
        strip(&events[5]),
        json!({"type": "tool_result", "id": "sh", "name": "bash", "status": "error", "output": format!("Error: {denial}"), "truncated": false, "meta": {"permission": "denied"}})
    );
    // write_file is allowed at medium: the policy's decision names the flag, no request.
    assert_eq!(
        strip(&events[6]),
        json!({"type": "permission_decision", "id": "w", "name": "write_file", "action": "allow", "permission": "prompt", "permissionGranted": true, "permissionMode": "auto", "autonomy": "medium", "sideEffect": "write", "sessionId": session, "risk": {"level": "medium"}, "decisionReason": "allowed by --auto medium", "decidedBy": "policy"})
    );
    assert_eq!(
        strip(&events[7]),
        json!({"type": "tool_result", "id": "w", "name": "write_file", "status": "ok", "output": "Created notes/new.txt (1 bytes).", "truncated": false, "changedFiles": ["notes/new.txt"]})
    );
    // The flag that allowed the call is named: the level, or the unsafe switch.
    for (flags, reason) in [
        (&["--auto", "high"][..], "allowed by --auto high"),
        (&["--skip-permissions-unsafe"][..], "allowed by --skip-permissions-unsafe"),
    ] {
        let mut args = vec!["-o", "stream-json", "--schema-version", "2"];
        args.extend_from_slice(flags);
        args.push("go");
        let out = scripted(&dir, script.clone(), &args).run();
        out.assert_code(0);
        let decisions: Vec<(String, String, String)> = out
            .stream()
            .iter()
            .filter(|e| e["type"] == "permission_decision")
            .map(|e| {
                let f = |k: &str| e[k].as_str().unwrap().to_string();
                (f("id"), f("decidedBy"), f("decisionReason"))
            })
            .collect();
        let expected = |id: &str| (id.to_string(), "policy".to_string(), reason.to_string());
        assert_eq!(decisions, [expected("sh"), expected("w")], "{out:?}");
    }
    // Schema 1 keeps its shape: the denial is only the result.
    let out = scripted(&dir, script, &["-o", "stream-json", "--auto", "medium", "go"]).run();
    let mut kinds = out.types();
    kinds.dedup_by(|a, b| *a == "text" && *b == "text");
    assert_eq!(
        kinds,
        [
            "run_start",
            "tool_call",
            "tool_call",
            "tool_result",
            "tool_result",
            "text",
            "final",
            "run_end"
        ]
    );
}

#[test]
fn bash_results_carry_the_exit_code_and_redaction_is_flagged() {
    let dir = TestDir::new("result-fields");
    let script = json!({"turns": [
        {"toolCalls": [{"id": "c", "name": "bash", "arguments": {"command": "echo key=$ZERO_E2E_SECRET; exit 3"}}]},
        {"text": "done"}
    ]});
    let secret = "sk-proj-e2eSecretValue0123456789abcdef";
    let out = scripted(
        &dir,
        script,
        &[
            "-o",
            "stream-json",
            "--schema-version",
            "2",
            "--auto",
            "high",
            "--shell-env",
            "inherit",
            "--redact-env",
            "ZERO_E2E_SECRET",
            "go",
        ],
    )
    .env("ZERO_E2E_SECRET", secret)
    .run();
    out.assert_code(0);
    let events = out.stream();
    let result = of_type(&events, "tool_result")[0];
    assert_eq!(
        (&result["exitCode"], &result["redacted"], &result["status"]),
        (&json!(3), &json!(true), &json!("error"))
    );
    assert!(!out.stdout.contains(secret));
}

#[test]
fn reasoning_comes_from_every_provider_and_never_into_the_answer() {
    let dir = TestDir::new("reasoning");
    let two = ["exec", "-o", "stream-json", "--schema-version", "2", "think"];
    let check = |out: &Output, expected: &str| {
        out.assert_code(0);
        let events = out.stream();
        assert_eq!(reasoning(&events), expected, "{out:?}");
        let last_reasoning = events.iter().rposition(|e| e["type"] == "reasoning").unwrap();
        let first_text = events.iter().position(|e| e["type"] == "text").unwrap();
        assert!(last_reasoning < first_text, "reasoning streamed first");
        assert_eq!(of_type(&events, "final")[0]["text"], "Answer.");
    };
    // OpenAI-compatible servers: `reasoning_content` (DeepSeek, vLLM) and `reasoning`
    // (OpenRouter, Ollama).
    for key in ["reasoning_content", "reasoning"] {
        let mock = Mock::start(vec![Reply::sse(&[
            openai::chunk(
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", key: "Weigh "}}]}),
            ),
            openai::chunk(json!({"choices": [{"index": 0, "delta": {key: "it."}}]})),
            openai::text("Answer."),
            openai::finish("stop"),
            openai::done(),
        ])]);
        let out = dir.zero().openai(&mock.v1(), "deepseek-reasoner-local").args(&two).run();
        check(&out, "Weigh it.");
    }
    // The Responses API: reasoning summaries.
    let event =
        |data: Value| format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap());
    let mock = Mock::start(vec![Reply::sse(&[
        event(
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        ),
        event(
            json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "Weigh "}),
        ),
        event(
            json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "it."}),
        ),
        event(
            json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": "m", "role": "assistant", "content": []}}),
        ),
        event(json!({"type": "response.output_text.delta", "output_index": 1, "delta": "Answer."})),
        event(
            json!({"type": "response.completed", "response": {"status": "completed", "usage": {"input_tokens": 5, "output_tokens": 3}}}),
        ),
    ])]);
    let out = official(&dir, &mock).args(&EXEC_2).args(&["-m", "gpt-5", "think"]).run();
    check(&out, "Weigh it.");
    // Anthropic: thinking blocks.
    let a = anthropic::event;
    let mock = Mock::start(vec![Reply::sse(&[
        a(
            json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}}),
        ),
        a(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        a(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Weigh "}}),
        ),
        a(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "it."}}),
        ),
        a(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig-1"}}),
        ),
        a(json!({"type": "content_block_stop", "index": 0})),
        a(
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        ),
        a(
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Answer."}}),
        ),
        a(json!({"type": "content_block_stop", "index": 1})),
        a(
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
        ),
        a(json!({"type": "message_stop"})),
    ])]);
    let out = anthropic_at(&dir, &mock)
        .args(&EXEC_2)
        .args(&["-m", "sonnet-4.5", "-r", "high", "think"])
        .run();
    check(&out, "Weigh it.");
    // Gemini: thought parts.
    let mock = Mock::start(vec![Reply::sse(&[
        gemini::chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Weigh ", "thought": true}]}}]}),
        ),
        gemini::chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "it.", "thought": true}]}}]}),
        ),
        gemini::chunk(
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Answer."}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2}}),
        ),
    ])]);
    let out = gemini_at(&dir, &mock).args(&EXEC_2).args(&["-m", "gemini-2.5-flash", "think"]).run();
    check(&out, "Weigh it.");
    // Schema 1 never shows reasoning.
    let mock = Mock::start(vec![Reply::sse(&[
        openai::chunk(
            json!({"choices": [{"index": 0, "delta": {"reasoning_content": "Weigh it."}}]}),
        ),
        openai::text("Answer."),
        openai::finish("stop"),
        openai::done(),
    ])]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "deepseek-reasoner-local")
        .args(&["exec", "-o", "stream-json", "think"])
        .run();
    out.assert_code(0);
    assert_eq!(out.types(), ["run_start", "text", "final", "run_end"]);
}

/// The 16 bytes of a PNG's signature and header chunk: enough for zero to know it is a PNG.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUg==";

#[test]
fn images_reach_each_provider_in_its_own_format() {
    let dir = TestDir::new("images");
    std::fs::write(dir.path("shot.png"), PNG).unwrap();
    let shot = dir.path("shot.png").display().to_string();
    let data_url = format!("data:image/png;base64,{PNG_BASE64}");
    let args = |extra: &[&str]| {
        let mut a = vec!["exec", "-o", "stream-json", "--schema-version", "2", "--image", &shot];
        a.extend_from_slice(extra);
        a.push("what is this?");
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |zero: crate::util::Zero, extra: &[&str]| {
        let a = args(extra);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = zero.args(&refs).run();
        out.assert_code(0);
        out
    };
    // OpenAI chat completions.
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["A chart."], 10, 2))]);
    run(dir.zero().openai(&mock.v1(), "gpt-4o-mini"), &[]);
    assert_eq!(
        mock.requests()[0].json()["messages"][1],
        json!({"role": "user", "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": data_url}}
        ]})
    );
    // The Responses API.
    let mock = Mock::start(vec![Reply::sse(&[
        format!(
            "event: response.output_text.delta\ndata: {}\n\n",
            json!({"type": "response.output_text.delta", "output_index": 0, "delta": "A chart."})
        ),
        format!(
            "event: response.completed\ndata: {}\n\n",
            json!({"type": "response.completed", "response": {"status": "completed", "usage": {"input_tokens": 5, "output_tokens": 3}}})
        ),
    ])]);
    run(official(&dir, &mock), &["-m", "gpt-5"]);
    assert_eq!(
        mock.requests()[0].json()["input"],
        json!([{"role": "user", "content": [
            {"type": "input_text", "text": "what is this?"},
            {"type": "input_image", "image_url": data_url}
        ]}])
    );
    // Anthropic: base64 source blocks, before the text.
    let mock = Mock::start(vec![Reply::sse(&anthropic::turn(
        &[json!({"type": "text", "pieces": ["A chart."]})],
        5,
        2,
        "end_turn",
    ))]);
    run(anthropic_at(&dir, &mock), &["-m", "haiku-4.5"]);
    assert_eq!(
        mock.requests()[0].json()["messages"],
        json!([{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_BASE64}},
            {"type": "text", "text": "what is this?", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
    // Gemini: inline data parts.
    let mock = Mock::start(vec![Reply::sse(&[gemini::chunk(
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "A chart."}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2}}),
    )])]);
    run(gemini_at(&dir, &mock), &["-m", "gemini-2.5-flash"]);
    assert_eq!(
        mock.requests()[0].json()["contents"],
        json!([{"role": "user", "parts": [
            {"text": "what is this?"},
            {"inlineData": {"mimeType": "image/png", "data": PNG_BASE64}}
        ]}])
    );
    // Text output sends images too; more than 16 is a usage error before any call.
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["A chart."], 10, 2))]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "gpt-4o-mini")
        .args(&["exec", "--image", &shot, "what?"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, "A chart.\n");
    assert_eq!(
        mock.requests()[0].json()["messages"][1]["content"][1]["image_url"]["url"],
        data_url
    );
    let mut many = vec!["exec"];
    for _ in 0..17 {
        many.extend(["--image", shot.as_str()]);
    }
    many.push("what?");
    let out = dir.zero().openai(&mock.v1(), "gpt-4o-mini").args(&many).run();
    out.assert_code(2);
    assert_eq!(out.stderr, "[zero] At most 16 images can be attached to one prompt.\n");
    // The session records that an image was there, not its bytes.
    let sessions = crate::util::read_sessions(&dir);
    assert!(
        sessions.contains("\"images\":[{\"bytes\":16,\"mediaType\":\"image/png\"}]"),
        "{sessions}"
    );
    assert!(!sessions.contains(PNG_BASE64));
    // Resumed, the model is told an image was there.
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["ok"], 1, 1))]);
    let out =
        dir.zero().openai(&mock.v1(), "gpt-4o-mini").args(&["exec", "--resume", "and now?"]).run();
    out.assert_code(0);
    assert_eq!(
        mock.requests()[0].json()["messages"][1],
        json!({"role": "user", "content": "what?\n\n[An image was attached here (image/png, 16 bytes); the session does not keep image data.]"})
    );
}

#[test]
fn message_lines_carry_images_and_bad_ones_are_named() {
    let dir = TestDir::new("image-lines");
    let message = |images: Value, content: &str| {
        format!(
            "{}\n",
            json!({"schemaVersion": 2, "type": "message", "role": "user", "content": content, "images": images})
        )
    };
    let stream = ["exec", "-i", "stream-json", "-o", "stream-json"];
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["A chart."], 10, 2))]);
    let image = json!([{"mediaType": "image/png", "data": PNG_BASE64}]);
    let out =
        dir.zero().openai(&mock.v1(), "gpt-4o-mini").args(&stream).stdin(message(image, "")).run();
    out.assert_code(0);
    assert_eq!(
        mock.requests()[0].json()["messages"][1],
        json!({"role": "user", "content": [{"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_BASE64}")}}]})
    );
    let cases = [
        (json!([{"mediaType": "image/svg+xml", "data": PNG_BASE64}]), "images[0].mediaType: expected one of image/png, image/jpeg, image/gif, image/webp, got \"image/svg+xml\""),
        (json!([{"mediaType": "image/jpeg", "data": PNG_BASE64}]), "images[0].data: the image is image/png, not image/jpeg"),
        (json!([{"mediaType": "image/png", "data": "%%%"}]), "images[0].data: not valid base64"),
        (json!([{"mediaType": "image/png"}]), "images[0].data: required"),
        (json!([{"mediaType": "image/png", "data": PNG_BASE64, "url": "x"}]), "images[0].url: unknown field for an image"),
        (json!("a.png"), "images: expected an array, got the string \"a.png\""),
    ];
    for (images, detail) in cases {
        let out = dir
            .zero()
            .openai(&mock.v1(), "gpt-4o-mini")
            .args(&stream)
            .stdin(message(images, "look"))
            .run();
        out.assert_code(2);
        let events = out.stream();
        assert_eq!(events[0]["message"], format!("Invalid stream-json input at line 1: {detail}"));
        assert_eq!(events[0]["schemaVersion"], 2);
    }
    // Schema 1 has no images: the field is unknown there.
    let v1 = format!(
        "{}\n",
        json!({"schemaVersion": 1, "type": "message", "role": "user", "content": "look", "images": []})
    );
    let out = dir.zero().openai(&mock.v1(), "gpt-4o-mini").args(&stream).stdin(v1).run();
    out.assert_code(2);
    assert_eq!(
        out.stream()[0]["message"],
        "Invalid stream-json input at line 1: images: unknown field for a \"message\" event"
    );
    // --image with schema-1 output is left out, with a warning.
    std::fs::write(dir.path("shot.png"), PNG).unwrap();
    let shot = dir.path("shot.png").display().to_string();
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["ok"], 1, 1))]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "gpt-4o-mini")
        .args(&["exec", "-o", "stream-json", "--image", &shot, "look"])
        .run();
    out.assert_code(0);
    assert_eq!(
        mock.requests()[0].json()["messages"][1],
        json!({"role": "user", "content": "look"})
    );
    assert_eq!(
        of_type(&out.stream(), "warning")[0]["message"],
        "--image is ignored: stream-json schema 1 has no images (--schema-version 2 sends them)."
    );
    // A file that is not an image is a usage error naming it.
    let out = dir
        .zero()
        .openai(&mock.v1(), "gpt-4o-mini")
        .args(&["exec", "--image", "missing.png", "look"])
        .run();
    out.assert_code(2);
    assert!(out.stderr.contains("[zero] Image not found: "), "{out:?}");
}

#[test]
fn warnings_carry_their_codes_and_a_retry_pause_has_heartbeats() {
    let dir = TestDir::new("warning-codes");
    let args = ["-o", "stream-json", "--schema-version", "2", "--skip-permissions-unsafe"];
    let out =
        scripted(&dir, answer(), &args).args(&["-r", "high", "--redact-env", "NOPE", "hi"]).run();
    out.assert_code(0);
    let codes: Vec<(String, String)> = of_type(&out.stream(), "warning")
        .iter()
        .map(|w| (w["code"].as_str().unwrap().into(), w["message"].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        codes,
        [
            ("unsafe_mode".into(), "Unsafe permissions are active for this run.".into()),
            ("ignored_option".into(), "The scripted provider takes no reasoning effort; --reasoning-effort high is ignored.".into()),
            ("ignored_option".into(), "--redact-env NOPE: the variable is not set.".into()),
        ]
    );
    // A 429 with retry-after: 1 is a retry warning, and the pause before the retry is the
    // model's phase: heartbeats fill it.
    let mock = Mock::start(vec![
        Reply::status(429, "application/json", r#"{"error":{"message":"slow down"}}"#)
            .with_header("retry-after", "1"),
        Reply::sse(&openai::answer(&["recovered"], 5, 1)),
    ]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&EXEC_2)
        .args(&["--heartbeat-ms", "200", "hi"])
        .run();
    out.assert_code(0);
    let events = out.stream();
    let warning = of_type(&events, "warning")[0];
    assert_eq!(warning["code"], "retry");
    let at = |kind: &str| events.iter().position(|e| e["type"] == kind).unwrap();
    let beats: Vec<&Value> =
        events[at("warning")..at("text")].iter().filter(|e| e["type"] == "heartbeat").collect();
    assert!(beats.len() >= 2, "{out:?}");
    assert!(beats.iter().all(|b| b["phase"] == "model"));
}

#[test]
fn auto_high_in_the_sandbox_says_what_confines_bash_and_unsafe_is_kept_for_unconfined_runs() {
    let dir = TestDir::new("permission-warning");
    let two = ["-o", "stream-json", "--schema-version", "2", "hi"];
    let first = |args: &[&str], env: Option<(&str, &str)>| {
        let mut zero = scripted(&dir, answer(), args).args(&two);
        if let Some((k, v)) = env {
            zero = zero.env(k, v);
        }
        let out = zero.run();
        out.assert_code(0);
        let events = out.stream();
        let warning = of_type(&events, "warning")
            .into_iter()
            .find(|w| w["code"] == "bash_sandboxed" || w["code"] == "unsafe_mode")
            .map(|w| {
                (
                    w["code"].as_str().unwrap().to_string(),
                    w["message"].as_str().unwrap().to_string(),
                )
            });
        (events[0]["permissionMode"].as_str().unwrap().to_string(), warning)
    };
    let unsafe_mode =
        Some(("unsafe_mode".into(), "Unsafe permissions are active for this run.".into()));
    // Enforced: what confines bash, though permissionMode stays what Zero's clients expect.
    assert_eq!(
        first(&["--auto", "high", "--sandbox-network", "off"], None),
        (
            "unsafe".to_string(),
            Some(("bash_sandboxed".into(), "bash runs in its sandbox (--sandbox workspace-write): commands write only in the workspace, its --add-dir directories, the temp directories and the build caches; network off.".into()))
        )
    );
    assert_eq!(
        first(&["--auto", "high", "--sandbox", "read-only", "--sandbox-caches", "off"], None).1,
        Some(("bash_sandboxed".into(), "bash runs in its sandbox (--sandbox read-only): commands write only in the temp directories; network on.".into()))
    );
    // Unconfined, or said unsafe: unsafe.
    assert_eq!(
        first(&["--auto", "high", "--sandbox", "off"], None),
        ("unsafe".into(), unsafe_mode.clone())
    );
    assert_eq!(first(&["--skip-permissions-unsafe"], None).1, unsafe_mode);
    assert_eq!(
        first(&["--auto", "high"], Some(("ZERO_DEBUG_SANDBOX", "no-landlock"))).1,
        unsafe_mode
    );
    // Below high, neither.
    assert_eq!(first(&["--auto", "medium"], None), ("auto".into(), None));
}
