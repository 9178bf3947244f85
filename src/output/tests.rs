use super::*;
use crate::protocol::events::{
    Autonomy, ListedTool, Permission, PermissionMode, RunDetails, SideEffect,
};
use crate::testing::kit::SharedBuf as Buffer;
use serde_json::json;

/// A writer that is closed.
struct Closed;

impl Write for Closed {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn emitter(format: Format, redactor: Redactor) -> (Emitter, Buffer, Buffer) {
    let out = Buffer::default();
    let err = Buffer::default();
    let e = Emitter::new(
        format,
        "run_1".into(),
        Box::new(out.clone()),
        Box::new(err.clone()),
        redactor,
    );
    (e, out, err)
}

fn info() -> RunInfo {
    RunInfo {
        session_id: Some("zero_20261201000000_abcd1234".into()),
        cwd: "/repo".into(),
        provider: "openai".into(),
        model: "gpt-4.1".into(),
        api_model: "gpt-4.1".into(),
        details: RunDetails {
            model_label: "GPT-4.1".into(),
            autonomy: Autonomy::Low,
            permission_mode: PermissionMode::Auto,
            ..RunDetails::default()
        },
        instructions: Vec::new(),
        add_dirs: Vec::new(),
        sandbox: Some(
            serde_json::json!({"mode": "workspace-write", "network": "on", "enforcement": "none"}),
        ),
    }
}

fn usage() -> Usage {
    Usage { prompt_tokens: 12, completion_tokens: 8, ..Usage::default() }
}

#[test]
fn stream_json_lines_are_exact() {
    let (mut e, out, err) = emitter(Format::StreamJson, Redactor::default());
    e.run_start(&info()).unwrap();
    e.text("Hel").unwrap();
    e.text("lo").unwrap();
    e.tool_call("call_1", "read_file", r#"{"path":"README.md"}"#, SideEffect::Read).unwrap();
    e.usage(&usage(), Some(0.000088)).unwrap();
    e.result("call_1", true, "ok", None).unwrap();
    e.success(&crate::conversation::Answer::text("Hello")).unwrap();
    let expected = [
        r#"{"schemaVersion":1,"type":"run_start","runId":"run_1","sessionId":"zero_20261201000000_abcd1234","cwd":"/repo","provider":"openai","model":"gpt-4.1","apiModel":"gpt-4.1"}"#,
        r#"{"schemaVersion":1,"type":"text","runId":"run_1","delta":"Hel"}"#,
        r#"{"schemaVersion":1,"type":"text","runId":"run_1","delta":"lo"}"#,
        r#"{"schemaVersion":1,"type":"tool_call","runId":"run_1","id":"call_1","name":"read_file","args":{"path":"README.md"},"sideEffect":"read"}"#,
        r#"{"schemaVersion":1,"type":"usage","runId":"run_1","promptTokens":12,"completionTokens":8,"totalTokens":20,"costUsd":0.000088}"#,
        r#"{"schemaVersion":1,"type":"tool_result","runId":"run_1","id":"call_1","status":"ok","output":"ok","truncated":false}"#,
        r#"{"schemaVersion":1,"type":"final","runId":"run_1","text":"Hello"}"#,
        r#"{"schemaVersion":1,"type":"run_end","runId":"run_1","status":"success","exitCode":0}"#,
    ];
    assert_eq!(out.text().lines().collect::<Vec<_>>(), expected);
    assert_eq!(err.text(), "");
}

#[test]
fn schema_2_lines_are_exact() {
    let (mut e, out, _) = emitter(Format::StreamJson, Redactor::default());
    e.set_schema(crate::protocol::events::SchemaVersion::V2);
    e.set_heartbeat(Duration::from_millis(500));
    e.run_start(&info()).unwrap();
    e.reasoning("Weigh").unwrap();
    e.reasoning(" it").unwrap();
    e.text("Hi").unwrap();
    e.tool_call("c1", "write_file", "not json", SideEffect::Write).unwrap();
    e.usage(&usage(), Some(0.5)).unwrap();
    e.usage(&usage(), None).unwrap();
    e.tool_result(&Finished {
        id: "c1",
        name: "write_file",
        ok: true,
        output: "Created a.txt",
        exit_code: Some(0),
        changed_files: &["a.txt".to_string()],
        refused: None,
        duration: Duration::from_millis(12),
        mcp: None,
        diffs: &[],
        terminal: None,
    })
    .unwrap();
    e.failure(&Failure::MaxTurns("Reached the limit.".into())).unwrap();
    // The stream redactor holds the tail of a word until the next delta shows it is no secret.
    let expected = [
        r#"{"schemaVersion":2,"type":"run_start","runId":"run_1","seq":1,"sessionId":"zero_20261201000000_abcd1234","cwd":"/repo","provider":"openai","model":"gpt-4.1","apiModel":"gpt-4.1","permissionMode":"auto","autonomy":"low","heartbeatMs":500,"sandbox":{"enforcement":"none","mode":"workspace-write","network":"on"}}"#,
        r#"{"schemaVersion":2,"type":"reasoning","runId":"run_1","seq":2,"delta":"Wei"}"#,
        r#"{"schemaVersion":2,"type":"reasoning","runId":"run_1","seq":3,"delta":"gh it"}"#,
        r#"{"schemaVersion":2,"type":"text","runId":"run_1","seq":4,"delta":"Hi"}"#,
        r#"{"schemaVersion":2,"type":"tool_call","runId":"run_1","seq":5,"id":"c1","name":"write_file","sideEffect":"write"}"#,
        r#"{"schemaVersion":2,"type":"usage","runId":"run_1","seq":6,"promptTokens":12,"completionTokens":8,"totalTokens":20,"costUsd":0.5,"call":1,"cumulative":{"promptTokens":12,"completionTokens":8,"totalTokens":20,"costUsd":0.5}}"#,
        // A call without a price: the sum would understate, so the cumulative cost goes.
        r#"{"schemaVersion":2,"type":"usage","runId":"run_1","seq":7,"promptTokens":12,"completionTokens":8,"totalTokens":20,"call":2,"cumulative":{"promptTokens":24,"completionTokens":16,"totalTokens":40}}"#,
        r#"{"schemaVersion":2,"type":"tool_result","runId":"run_1","seq":8,"id":"c1","name":"write_file","status":"ok","output":"Created a.txt","truncated":false,"changedFiles":["a.txt"],"exitCode":0,"durationMs":12}"#,
        r#"{"schemaVersion":2,"type":"error","runId":"run_1","seq":9,"code":"incomplete","message":"Reached the limit.","recoverable":false}"#,
        r#"{"schemaVersion":2,"type":"run_end","runId":"run_1","seq":10,"status":"incomplete","exitCode":4,"eventCount":10}"#,
    ];
    assert_eq!(out.text().lines().collect::<Vec<_>>(), expected);
}

#[test]
fn reasoning_is_redacted_as_a_stream_and_left_out_of_schema_1() {
    let (mut e, out, _) = emitter(Format::StreamJson, Redactor::default());
    e.set_schema(crate::protocol::events::SchemaVersion::V2);
    for piece in ["the key is sk-ant-", "api03-ZZZZ0123", "456789abcdefghij, done"] {
        e.reasoning(piece).unwrap();
    }
    e.success(&crate::conversation::Answer::text("ok")).unwrap();
    let text = out.text();
    assert!(!text.contains("ZZZZ0123"), "{text}");
    let reasoning: String = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "reasoning")
        .map(|v| v["delta"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(reasoning, "the key is [REDACTED], done");
    for format in [Format::StreamJson, Format::Json, Format::Text] {
        let (mut e, out, err) = emitter(format, Redactor::default());
        e.reasoning("private thoughts").unwrap();
        e.success(&crate::conversation::Answer::text("ok")).unwrap();
        assert!(!out.text().contains("private") && !err.text().contains("private"));
    }
}

#[test]
fn heartbeats_need_schema_2_a_phase_and_silence() {
    let (mut e, out, _) = emitter(Format::StreamJson, Redactor::default());
    e.set_heartbeat(Duration::from_millis(100));
    assert_eq!(e.beat(Instant::now() + Duration::from_secs(1)), None, "schema 1 has none");
    e.set_schema(crate::protocol::events::SchemaVersion::V2);
    let start = Instant::now();
    e.run_start(&info()).unwrap();
    // Silent, but waiting for nothing: no heartbeat.
    assert!(e.beat(start + Duration::from_secs(1)).is_some());
    assert_eq!(out.text().lines().count(), 1);
    e.set_phase(Some(Phase::Tool), Some("call 1"));
    let later = Instant::now() + Duration::from_millis(250);
    assert_eq!(e.beat(later), Some(Duration::from_millis(100)));
    let lines: Vec<Value> = out.text().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!((&lines[1]["phase"], &lines[1]["toolCallId"]), (&json!("tool"), &json!("call_1")));
    assert!(lines[1]["elapsedMs"].as_u64().unwrap() >= 250);
    // A heartbeat is itself output: the next is one interval later, and none after the end.
    assert!(e.beat(Instant::now()).unwrap() > Duration::from_millis(50));
    e.success(&crate::conversation::Answer::text("ok")).unwrap();
    assert_eq!(e.beat(Instant::now() + Duration::from_secs(5)), None);
    assert_eq!(out.text().lines().last().map(|l| l.contains("run_end")), Some(true));
}

#[test]
fn legacy_json_lines_follow_b_1_5() {
    let (mut e, out, _) = emitter(Format::Json, Redactor::default());
    let mut i = info();
    i.details.reasoning_effort = Some("high".into());
    e.run_start(&i).unwrap();
    e.text("Hi").unwrap();
    e.tool_call("c1", "grep", r#"{"pattern":"x"}"#, SideEffect::Read).unwrap();
    e.result("c1", false, "Error: bad", None).unwrap();
    e.usage(&usage(), None).unwrap();
    e.success(&crate::conversation::Answer::text("Hi")).unwrap();
    let lines: Vec<serde_json::Value> =
        out.text().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(
        lines,
        vec![
            serde_json::json!({"type":"run_start","cwd":"/repo","provider":"openai","model":"gpt-4.1","model_label":"GPT-4.1","api_model":"gpt-4.1","autonomy":"low","permission_mode":"auto","reasoning_effort":"high","output_format":"json","session_id":"zero_20261201000000_abcd1234"}),
            serde_json::json!({"type":"text","delta":"Hi"}),
            serde_json::json!({"type":"tool_call","id":"c1","name":"grep","arguments":"{\"pattern\":\"x\"}"}),
            serde_json::json!({"type":"tool_result","tool_call_id":"c1","status":"error","result":"Error: bad","truncated":false}),
            serde_json::json!({"type":"usage","prompt_tokens":12,"completion_tokens":8,"total_tokens":20}),
            serde_json::json!({"type":"final","text":"Hi"}),
            serde_json::json!({"type":"done","exit_code":0}),
        ]
    );
}

#[test]
fn text_mode_final_answer_on_stdout_narration_and_rows_on_stderr() {
    let (mut e, out, err) = emitter(Format::Text, Redactor::default());
    e.run_start(&info()).unwrap();
    e.text("Looking.\nAt the file.").unwrap();
    e.tool_call("c1", "read_file", r#"{"path":"a"}"#, SideEffect::Read).unwrap();
    e.tool_call("c2", "bash", r#"{"command":"make test\nmake lint"}"#, SideEffect::Shell).unwrap();
    e.end_turn().unwrap();
    e.result("c1", true, "File: a\n\n1 | x", None).unwrap();
    e.result("c2", false, "stdout:\nok\nstderr:\nmake: *** [test] Error 2\nExit code: 2", Some(2))
        .unwrap();
    e.result("c3", false, "Error reading file b: No such file\nmore", None).unwrap();
    e.warn("careful").unwrap();
    e.text("Done").unwrap();
    e.end_turn().unwrap();
    e.success(&crate::conversation::Answer::text("Done")).unwrap();
    assert_eq!(out.text(), "Done\n");
    assert_eq!(
        err.text(),
        "[zero] session zero_20261201000000_abcd1234\n[model] Looking.\n[model] At the file.\n\
         [tool] read_file: a\n[tool] bash: make test make lint\n[result] ok\n\
         [result] error (exit 2): make: *** [test] Error 2\n\
         [result] error: Error reading file b: No such file\n[zero] WARNING: careful\n"
    );
}

#[test]
fn text_mode_writes_the_final_answer_when_nothing_streamed() {
    let (mut e, out, _) = emitter(Format::Text, Redactor::default());
    e.success(&crate::conversation::Answer::text("answer")).unwrap();
    assert_eq!(out.text(), "answer\n");
}

#[test]
fn failures_in_every_format() {
    let failure = Failure::Provider("Provider returned error (HTTP 500): boom".into());
    let (mut e, out, err) = emitter(Format::StreamJson, Redactor::default());
    e.failure(&failure).unwrap();
    assert_eq!(
        out.text(),
        "{\"schemaVersion\":1,\"type\":\"error\",\"runId\":\"run_1\",\"code\":\"provider_error\",\"message\":\"Provider returned error (HTTP 500): boom\",\"recoverable\":false}\n{\"schemaVersion\":1,\"type\":\"run_end\",\"runId\":\"run_1\",\"status\":\"error\",\"exitCode\":3}\n"
    );
    assert_eq!(err.text(), "");
    // Once ended, nothing more is written.
    e.text("late").unwrap();
    e.failure(&Failure::Interrupted).unwrap();
    assert_eq!(out.text().lines().count(), 2);

    let (mut e, out, _) = emitter(Format::Json, Redactor::default());
    e.failure(&Failure::Usage("Prompt required.".into())).unwrap();
    assert_eq!(
        out.text(),
        "{\"type\":\"error\",\"code\":\"usage_error\",\"message\":\"Prompt required.\"}\n"
    );

    // A turn that never finished gave no answer: stdout stays empty.
    let (mut e, out, err) = emitter(Format::Text, Redactor::default());
    e.text("partial").unwrap();
    e.failure(&Failure::MaxTurns("Reached the limit.".into())).unwrap();
    assert_eq!(out.text(), "");
    assert_eq!(err.text(), "[model] partial\n[zero] Reached the limit.\n");
}

#[test]
fn every_string_is_redacted_and_the_key_in_use_too() {
    let key = "sk-proj-abcdefghijklmnopqrstuvwxyz012345";
    let (mut e, out, err) =
        emitter(Format::StreamJson, Redactor::new(["my-configured-key-1".to_string()]));
    e.warn(&format!("echo {key}")).unwrap();
    e.tool_call(
        "c1",
        "bash",
        r#"{"command":"curl -H 'x-api-key: zzz'","token":"abc"}"#,
        SideEffect::Shell,
    )
    .unwrap();
    e.result("c1", true, "key=my-configured-key-1", None).unwrap();
    e.failure(&Failure::Provider(format!(
        "Provider authentication error (HTTP 401): bad key {key}"
    )))
    .unwrap();
    let text = out.text();
    assert!(
        !text.contains(key)
            && !text.contains("my-configured-key-1")
            && !text.contains("zzz")
            && !text.contains("\"abc\""),
        "{text}"
    );
    assert!(
        text.contains(
            r#""args":{"command":"curl -H 'x-api-key: [REDACTED]","token":"[REDACTED]"}"#
        ),
        "{text}"
    );
    assert_eq!(err.text(), "");
    let (mut e, _, err) = emitter(Format::Text, Redactor::default());
    e.failure(&Failure::Config(format!("ZERO_PROVIDER_COMMAND failed ({key})"))).unwrap();
    assert_eq!(err.text(), "[zero] ZERO_PROVIDER_COMMAND failed ([REDACTED])\n");
}

#[test]
fn a_secret_split_across_deltas_never_appears() {
    let key = "sk-ant-api03-ZZZZ0123456789abcdefghij";
    for format in [Format::StreamJson, Format::Json, Format::Text] {
        for cut in 1..key.len() {
            let (mut e, out, _) = emitter(format, Redactor::default());
            e.text("key: ").unwrap();
            e.text(&key[..cut]).unwrap();
            e.text(&key[cut..]).unwrap();
            e.text(" done").unwrap();
            e.success(&crate::conversation::Answer::text(format!("key: {key} done"))).unwrap();
            let text = out.text();
            assert!(
                !text.contains("sk-ant") && !text.contains("ZZZZ"),
                "{format:?} cut {cut}: {text}"
            );
            let streamed: String = match format {
                Format::Text => text.trim_end().to_string(),
                _ => text
                    .lines()
                    .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                    .filter_map(|v| v["delta"].as_str().map(str::to_string))
                    .collect(),
            };
            assert_eq!(streamed, "key: [REDACTED] done", "{format:?} cut {cut}");
        }
    }
}

#[test]
fn tool_output_is_capped_on_a_character_boundary() {
    let (mut e, out, _) = emitter(Format::StreamJson, Redactor::default());
    let big = "é".repeat(TOOL_OUTPUT_EVENT_CAP);
    e.result("c1", true, &big, None).unwrap();
    let line: serde_json::Value = serde_json::from_str(out.text().trim()).unwrap();
    let output = line["output"].as_str().unwrap();
    assert!(output.len() <= TOOL_OUTPUT_EVENT_CAP && output.len() >= TOOL_OUTPUT_EVENT_CAP - 1);
    assert_eq!(line["truncated"], true);
}

#[test]
fn a_secret_across_the_output_cap_is_redacted_before_the_cut() {
    let key = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let output = format!("{} {key}", "x".repeat(TOOL_OUTPUT_EVENT_CAP - 10));
    let (mut e, out, _) = emitter(Format::StreamJson, Redactor::default());
    e.result("c1", true, &output, None).unwrap();
    assert!(!out.text().contains("ghp_"), "a prefix of the key survived the cut");
}

#[test]
fn a_closed_stdout_is_reported_once_as_output_closed() {
    let mut e = Emitter::new(
        Format::StreamJson,
        "run_1".into(),
        Box::new(Closed),
        Box::new(Closed),
        Redactor::default(),
    );
    assert_eq!(e.run_start(&info()), Err(OutputClosed));
    // stderr failures are ignored.
    let mut t = Emitter::new(
        Format::Text,
        "run_1".into(),
        Box::new(Buffer::default()),
        Box::new(Closed),
        Redactor::default(),
    );
    assert_eq!(t.warn("x"), Ok(()));
}

#[test]
fn ids_outside_the_protocol_rule_are_mapped_consistently() {
    assert_eq!(wire_id("call_1"), "call_1");
    assert_eq!(wire_id("call 1/x"), "call_1_x");
    assert_eq!(wire_id("_x"), "id_x");
    assert_eq!(wire_id(""), "id");
    let long = "a".repeat(300);
    assert_eq!(wire_id(&long).len(), 128);
    assert_ne!(wire_id(&long), wire_id(&"a".repeat(299)));
}

#[test]
fn list_tools_in_every_format() {
    let tool = |name, side_effect, withheld: Option<&str>| ListedTool {
        name,
        side_effect,
        permission: Permission::Allow,
        reason: "Reads.",
        description: "Read a file.",
        enabled: withheld.is_none(),
        withheld: withheld.map(str::to_string),
        parameters: serde_json::json!({"type": "object"}),
        sandbox: None,
    };
    let rows = vec![
        tool("read_file", SideEffect::Read, None),
        tool("bash", SideEffect::Shell, Some("needs --auto high")),
    ];
    let (mut e, out, err) = emitter(Format::Text, Redactor::default());
    e.tool_list(
        PermissionMode::Auto,
        &rows,
        &info(),
        &[Warning::new(crate::protocol::events::WarningCode::IgnoredOption, "heads up")],
    )
    .unwrap();
    assert_eq!(
        out.text(),
        "Tools visible to model (auto):\n  read_file      read             allow - Reads.\nNot offered at this autonomy level:\n  bash           shell            needs --auto high\n"
    );
    assert_eq!(err.text(), "[zero] WARNING: heads up\n");
    let (mut e, out, _) = emitter(Format::StreamJson, Redactor::default());
    let mut i = info();
    i.session_id = None;
    e.tool_list(
        PermissionMode::Auto,
        &rows,
        &i,
        &[Warning::new(crate::protocol::events::WarningCode::IgnoredOption, "heads up")],
    )
    .unwrap();
    let kinds: Vec<String> = out
        .text()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(kinds, ["run_start", "warning", "final", "run_end"]);
    assert!(!out.text().contains("sessionId"));
    let (mut e, out, _) = emitter(Format::Json, Redactor::default());
    e.tool_list(PermissionMode::Auto, &rows, &info(), &[]).unwrap();
    assert!(out
        .text()
        .starts_with("{\"type\":\"tool_list\",\"permission_mode\":\"auto\",\"tools\":[{"));
    assert!(out.text().ends_with("{\"type\":\"done\",\"exit_code\":0}\n"));
}
