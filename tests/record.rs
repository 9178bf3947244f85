//! `--record FILE`: a run against a provider writes a script that `--provider scripted`
//! replays into the same events.

use serde_json::Value;

use crate::mock::{openai, Mock, Reply};
use crate::util::TestDir;

/// The stream without what differs from run to run by construction: ids, times, and the
/// provider and model named in `run_start` (the replay's are `scripted`).
fn comparable(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .map(|event| {
            let mut event = event.clone();
            if let Some(map) = event.as_object_mut() {
                for key in
                    ["ts", "runId", "sessionId", "durationMs", "provider", "model", "apiModel"]
                {
                    map.remove(key);
                }
            }
            event
        })
        .collect()
}

#[test]
fn a_recorded_run_replays_offline_into_the_same_events() {
    let dir = TestDir::new("record");
    dir.write("work/notes.txt", "the answer is 42\n");
    let mut turn = vec![openai::text("Let me "), openai::text("read it.")];
    turn.extend(openai::tool_turn("call_a1", "read_file", r#"{"path":"notes.txt"}"#));
    let secret = "test-key-0123456789";
    let mock = Mock::start(vec![
        Reply::sse(&turn),
        Reply::sse(&openai::answer(&["It says ", "42 (key ", secret, ")."], 30, 7)),
    ]);
    let args = ["exec", "-o", "stream-json", "--schema-version", "2", "what do the notes say?"];
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&args)
        .args(&["--record", "../run.json"])
        .run();
    out.assert_code(0);
    let script = crate::util::read(&dir.path("run.json"));
    assert!(!script.contains(secret), "the script is redacted:\n{script}");
    let recorded: Value = serde_json::from_str(&script).unwrap();
    assert_eq!(recorded["turns"][0]["text"], serde_json::json!(["Let me ", "read it."]));
    assert_eq!(recorded["turns"][0]["toolCalls"][0]["arguments"]["path"], "notes.txt");
    assert_eq!(recorded["turns"][1]["usage"]["promptTokens"], 30);
    let replay =
        dir.zero().args(&args).args(&["--provider", "scripted", "--script", "../run.json"]).run();
    replay.assert_code(0);
    assert_eq!(comparable(&replay.stream()), comparable(&out.stream()));
    assert_eq!(
        replay.types(),
        [
            "run_start",
            "text",
            "text",
            "tool_call",
            "usage",
            "tool_result",
            "text",
            "text",
            "text",
            "usage",
            "final",
            "run_end"
        ]
    );
}

#[test]
fn the_record_file_is_never_written_through_a_link() {
    let dir = TestDir::new("record-link");
    dir.write("target.txt", "keep me\n");
    std::os::unix::fs::symlink(dir.path("target.txt"), dir.path("run.json")).unwrap();
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["hi"], 1, 1))]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "--record", "../run.json", "hello"])
        .run();
    out.assert_code(2);
    assert!(out.stderr.contains("--record file ../run.json: it is a symbolic link"), "{out:?}");
    assert_eq!(crate::util::read(&dir.path("target.txt")), "keep me\n");
    assert!(mock.requests().is_empty(), "nothing is asked of the model");
}
