//! A streamed answer through the whole path: request, SSE, events in all three formats.

use std::io::{BufRead, BufReader};
use std::sync::mpsc::channel;
use std::time::Duration;

use serde_json::{json, Value};

use crate::mock::{openai, Mock, Reply, Step};
use crate::util::{read, TestDir};

fn answer_mock() -> Mock {
    Mock::start(vec![Reply::sse(&openai::answer(&["Hel", "lo, ", "world", "!"], 21, 4))])
}

#[test]
fn a_streamed_answer_is_the_exact_event_sequence() {
    let dir = TestDir::new("sequence");
    let mock = answer_mock();
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "Say hello"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stderr, "");
    let events = out.stream();
    assert_eq!(
        out.types(),
        ["run_start", "text", "text", "text", "text", "usage", "final", "run_end"]
    );
    let deltas: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "text")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, ["Hel", "lo, ", "world", "!"]);
    let start = &events[0];
    assert_eq!(start["provider"], "openai-compatible");
    assert_eq!(
        (start["model"].as_str(), start["apiModel"].as_str()),
        (Some("local-coder"), Some("local-coder"))
    );
    assert_eq!(start["cwd"], dir.work().canonicalize().unwrap().display().to_string());
    assert!(start["sessionId"].as_str().unwrap().starts_with("zero_"));
    assert_eq!(
        events[5],
        json!({"schemaVersion": 1, "type": "usage", "runId": start["runId"], "promptTokens": 21, "completionTokens": 4, "totalTokens": 25})
    );
    assert_eq!(events[6]["text"], "Hello, world!");
    assert_eq!(events[7]["status"], "success");
    assert_eq!(events[7]["exitCode"], 0);

    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(request.headers["authorization"], "Bearer test-key-0123456789");
    let body = request.json();
    assert_eq!(body["model"], "local-coder");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][1], json!({"role": "user", "content": "Say hello"}));
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read_file", "update_plan", "list_directory", "grep", "glob"]);
}

#[test]
fn the_same_run_in_json_and_text() {
    let dir = TestDir::new("formats-run");
    let mock = answer_mock();
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "json", "Say hello"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stderr, "");
    assert_eq!(
        out.types(),
        ["run_start", "text", "text", "text", "text", "usage", "final", "done"]
    );
    let events = out.events();
    assert_eq!(events[0]["output_format"], "json");
    assert_eq!(events[0]["model_label"], "local-coder");
    assert_eq!(
        events[5],
        json!({"type": "usage", "prompt_tokens": 21, "completion_tokens": 4, "total_tokens": 25})
    );
    assert_eq!(events[7], json!({"type": "done", "exit_code": 0}));

    let mock = answer_mock();
    let out = dir.zero().openai(&mock.v1(), "local-coder").args(&["exec", "Say hello"]).run();
    out.assert_code(0);
    assert_eq!(out.stdout, "Hello, world!\n");
    assert_eq!(out.rows(), "");
}

#[test]
fn each_delta_is_written_before_the_next_chunk_is_sent() {
    let dir = TestDir::new("incremental");
    let (go_second, second_gate) = channel();
    let (go_third, third_gate) = channel();
    // No delta ends in a possible secret prefix (such as the "t" of the test key "test-...",
    // or the "e" that could begin a JWT), so the redactor has nothing to hold back and each
    // delta must appear whole.
    let mock = Mock::start(vec![Reply::stream(vec![
        Step::Send(openai::text("one.").into_bytes()),
        Step::Wait(second_gate),
        Step::Send(openai::text(" two.").into_bytes()),
        Step::Wait(third_gate),
        Step::Send(openai::text(" three.").into_bytes()),
        Step::Send(openai::finish("stop").into_bytes()),
        Step::Send(openai::done().into_bytes()),
    ])]);
    let mut child = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "go"])
        .spawn();
    let stdout = child.stdout.take().unwrap();
    let (line_tx, lines) = channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = line_tx.send(line);
        }
    });
    let next_text = || -> Value {
        loop {
            let line = lines
                .recv_timeout(Duration::from_secs(20))
                .expect("a text event before the next chunk");
            let event: Value = serde_json::from_str(&line).unwrap();
            if event["type"] == "text" {
                return event;
            }
        }
    };
    // The mock holds the second chunk back until the first delta has been read from stdout.
    assert_eq!(next_text()["delta"], "one.");
    go_second.send(()).unwrap();
    assert_eq!(next_text()["delta"], " two.");
    go_third.send(()).unwrap();
    assert_eq!(next_text()["delta"], " three.");
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_tool_call_split_over_many_deltas_is_one_event() {
    let dir = TestDir::new("tool-deltas");
    dir.write("work/notes.md", "buy milk\n");
    let mock = Mock::start(vec![
        Reply::sse(&openai::tool_turn(
            "call_42",
            "read_file",
            r#"{"path":"notes.md","max_lines":10}"#,
        )),
        Reply::sse(&openai::answer(&["Milk."], 30, 2)),
    ]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "what do I buy?"])
        .run();
    out.assert_code(0);
    let events = out.stream();
    assert_eq!(
        out.types(),
        ["run_start", "tool_call", "usage", "tool_result", "text", "usage", "final", "run_end"]
    );
    assert_eq!(events[1]["id"], "call_42");
    assert_eq!(events[1]["args"], json!({"path": "notes.md", "max_lines": 10}));
    assert_eq!(events[1]["sideEffect"], "read");
    assert_eq!(events[3]["status"], "ok");
    assert!(events[3]["output"].as_str().unwrap().contains("1 | buy milk"));
    // The second request carries the call and its result back to the model.
    let second = mock.requests()[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        r#"{"path":"notes.md","max_lines":10}"#
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_42");
}

#[test]
fn text_mode_never_reads_stdin() {
    let dir = TestDir::new("no-stdin");
    let mock = answer_mock();
    // stdin is a pipe that stays open: reading it would block forever.
    let mut run = dir.zero().openai(&mock.v1(), "local-coder").args(&["exec", "hello"]);
    run.stdin = Some(Vec::new());
    let mut child = run.spawn();
    let _keep_open = child.stdin.take();
    let (done, finished) = channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let output = finished
        .recv_timeout(Duration::from_secs(30))
        .expect("the run finished with stdin open")
        .unwrap();
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Hello, world!\n");
}

#[test]
fn a_full_run_through_a_provider_command_records_a_session() {
    let dir = TestDir::new("command-session");
    let mock = Mock::start(vec![Reply::sse(&[
        openai::text("session recorded"),
        openai::finish("stop"),
        openai::done(),
    ])]);
    let command = format!(
        r#"printf '{{"provider":"openai-compatible","base_url":"{}","model":"x"}}'"#,
        mock.v1()
    );
    let out = dir
        .zero()
        .env("ZERO_PROVIDER_COMMAND", &command)
        .args(&["exec", "--model", "local-coder", "-o", "stream-json", "record me"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stderr, "");
    let events = out.stream();
    let session_id = events[0]["sessionId"].as_str().unwrap().to_string();
    assert_eq!(events[events.len() - 2]["text"], "session recorded");
    let sessions: Vec<_> = std::fs::read_dir(dir.sessions()).unwrap().collect();
    assert_eq!(sessions.len(), 1);
    let meta: Value =
        serde_json::from_str(&read(&dir.sessions().join(&session_id).join("metadata.json")))
            .unwrap();
    assert_eq!(
        (meta["eventCount"].as_u64(), meta["lastEventType"].as_str()),
        (Some(2), Some("message"))
    );
    assert_eq!(meta["title"], "record me");
    let lines: Vec<Value> = read(&dir.sessions().join(&session_id).join("events.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0]["payload"],
        json!({"role": "user", "content": "record me", "source": "exec"})
    );
    assert_eq!(
        lines[1]["payload"],
        json!({"role": "assistant", "content": "session recorded", "source": "exec"})
    );
}

#[test]
fn configuration_errors_in_each_format() {
    let dir = TestDir::new("config-errors");
    let command = r#"printf '{"provider":"openai","model":"no-such-model","api_key":"k"}'"#;
    let out =
        dir.zero().env("ZERO_PROVIDER_COMMAND", command).args(&["exec", "-o", "json", "hi"]).run();
    out.assert_code(3);
    assert_eq!(out.stderr, "");
    let first = &out.events()[0];
    // A provider that cannot be set up is a provider error: config_error is only for a
    // config file that cannot be read.
    assert_eq!(
        (first["type"].as_str(), first["code"].as_str()),
        (Some("error"), Some("provider_error"))
    );
    assert!(first["message"].as_str().unwrap().contains("Unknown Zero model"));
    let out = dir
        .zero()
        .env("ZERO_PROVIDER_COMMAND", command)
        .args(&["exec", "-o", "stream-json", "hi"])
        .run();
    out.assert_code(3);
    assert_eq!(out.stderr, "");
    let events = out.stream();
    assert_eq!(out.types(), ["error", "run_end"]);
    assert_eq!(
        (events[0]["code"].as_str(), events[0]["recoverable"].as_bool()),
        (Some("provider_error"), Some(false))
    );
    assert_eq!(
        (events[1]["status"].as_str(), events[1]["exitCode"].as_u64()),
        (Some("error"), Some(3))
    );
    // stdin is consumed before the provider is set up.
    let line = r#"{"schemaVersion":1,"type":"prompt","content":"hi"}"#;
    let out = dir
        .zero()
        .args(&["exec", "-i", "stream-json", "-o", "stream-json"])
        .stdin(format!("{line}\n"))
        .run();
    out.assert_code(3);
    assert!(
        out.events()[0]["message"].as_str().unwrap().contains("No LLM provider configured"),
        "{out:?}"
    );
    // A failing provider command whose command line holds a key: the key never shows.
    let key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123";
    let out = dir
        .zero()
        .env("ZERO_PROVIDER_COMMAND", &format!("/nonexistent/{key}/provider"))
        .args(&["exec", "-o", "json", "hi"])
        .run();
    out.assert_code(3);
    let message = out.events()[0]["message"].as_str().unwrap().to_string();
    assert!(message.contains("[REDACTED]") && !out.stdout.contains(key), "{out:?}");
}

/// The lines of a run with their run and session ids replaced, as recorded.
fn stable_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line).unwrap();
            let mut text = line.to_string();
            for field in ["runId", "sessionId", "session_id", "cwd"] {
                if let Some(value) = event[field].as_str() {
                    text = text.replace(&serde_json::to_string(value).unwrap(), "\"X\"");
                }
            }
            text
        })
        .collect()
}

#[test]
fn every_held_byte_of_a_call_comes_before_its_usage() {
    let dir = TestDir::new("held-before-usage");
    // `gh` could still grow into a GitHub token: the redactor holds it until the call ends.
    let script = dir.script(&json!({"turns": [
        {"text": ["abc def", "gh"], "usage": {"promptTokens": 1, "completionTokens": 1}}
    ]}));
    for version in ["1", "2"] {
        let out = dir
            .zero()
            .args(&["exec", "-o", "stream-json", "--schema-version", version, "--script"])
            .args(&[script.to_str().unwrap(), "hi"])
            .run();
        out.assert_code(0);
        let events = out.events();
        let shown: Vec<(String, String)> = events
            .iter()
            .filter(|e| matches!(e["type"].as_str(), Some("text" | "usage" | "final")))
            .map(|e| {
                let what = e["delta"].as_str().or(e["text"].as_str()).unwrap_or("");
                (e["type"].as_str().unwrap().to_string(), what.to_string())
            })
            .collect();
        let expected = [("text", "abc def"), ("text", "gh"), ("usage", ""), ("final", "abc defgh")];
        let expected: Vec<(String, String)> =
            expected.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(shown, expected, "schema {version}{out:?}");
    }
    // Through SSE the held `gh` is released as its own delta, still before the usage.
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["abc def", "gh"], 1, 1))]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "--schema-version", "2", "hi"])
        .run();
    out.assert_code(0);
    let kinds: Vec<String> = out.types().into_iter().filter(|k| k != "heartbeat").collect();
    assert_eq!(kinds, ["run_start", "text", "text", "usage", "final", "run_end"], "{out:?}");
    assert_eq!(out.text(), "abc defgh");
}

#[test]
fn a_delta_with_escapes_before_usage_is_written_as_recorded_before_the_regression() {
    let dir = TestDir::new("recorded-escapes");
    let script = dir.script(&json!({"turns": [
        {"text": ["tab\tand \"quotes\" and \\backslash"], "usage": {"promptTokens": 3, "completionTokens": 2}}
    ]}));
    let run = |format: &str| {
        let out = dir
            .zero()
            .args(&["exec", "-o", format, "--ephemeral", "--script", script.to_str().unwrap()])
            .args(&["hi"])
            .run();
        out.assert_code(0);
        stable_lines(&out.stdout)
    };
    let stream = run("stream-json");
    assert_eq!(
        stream[1..],
        [
            r#"{"schemaVersion":1,"type":"text","runId":"X","delta":"tab\tand \"quotes\" and \\backslash"}"#,
            r#"{"schemaVersion":1,"type":"usage","runId":"X","promptTokens":3,"completionTokens":2,"totalTokens":5}"#,
            r#"{"schemaVersion":1,"type":"final","runId":"X","text":"tab\tand \"quotes\" and \\backslash"}"#,
            r#"{"schemaVersion":1,"type":"run_end","runId":"X","status":"success","exitCode":0}"#,
        ]
    );
    let legacy = run("json");
    assert_eq!(
        legacy[1..],
        [
            r#"{"type":"text","delta":"tab\tand \"quotes\" and \\backslash"}"#,
            r#"{"type":"usage","prompt_tokens":3,"completion_tokens":2,"total_tokens":5}"#,
            r#"{"type":"final","text":"tab\tand \"quotes\" and \\backslash"}"#,
            r#"{"type":"done","exit_code":0}"#,
        ]
    );
}

#[test]
fn schema_1_tool_call_args_are_the_json_value_the_model_wrote_of_any_type() {
    let dir = TestDir::new("args-any-json");
    let written = ["[1, 2]", "true", "3", "\"text\"", "null", "{not json"];
    let calls: Vec<Value> = written
        .iter()
        .enumerate()
        .map(|(i, a)| json!({"id": format!("c{i}"), "name": "read_file", "arguments": a}))
        .collect();
    let script = dir.script(&json!({"turns": [{"toolCalls": calls}, {"text": "done"}]}));
    let out = dir
        .zero()
        .args(&["exec", "-o", "stream-json", "--script", script.to_str().unwrap(), "hi"])
        .run();
    out.assert_code(0);
    let args: Vec<Value> = out
        .events()
        .iter()
        .filter(|e| e["type"] == "tool_call")
        .map(|e| e["args"].clone())
        .collect();
    assert_eq!(
        args,
        [json!([1, 2]), json!(true), json!(3), json!("text"), json!(null), json!("{not json")],
        "{out:?}"
    );
}
