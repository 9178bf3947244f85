//! The agent loop end to end: tools run between turns, permissions hold, limits end runs.

use serde_json::json;

use crate::mock::{openai, Mock, Reply};
use crate::util::{read, TestDir};

fn three_turns() -> Mock {
    Mock::start(vec![
        Reply::sse(&openai::tool_turn("call_read", "read_file", r#"{"path":"src/lib.rs"}"#)),
        Reply::sse(&openai::tool_turn(
            "call_edit",
            "edit_file",
            r#"{"path":"src/lib.rs","old_string":"a - b","new_string":"a + b"}"#,
        )),
        Reply::sse(&openai::answer(&["Fixed ", "add()."], 120, 6)),
    ])
}

#[test]
fn read_then_edit_then_answer() {
    let dir = TestDir::new("three-turns");
    dir.write("work/src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n");
    let mock = three_turns();
    let out = dir
        .zero()
        .openai(&mock.v1(), "gpt-4.1")
        .args(&["exec", "-o", "stream-json", "--skip-permissions-unsafe", "fix add"])
        .run();
    out.assert_code(0);
    let events = out.stream();
    assert_eq!(
        out.types(),
        [
            "run_start",
            "warning",
            "tool_call",
            "usage",
            "tool_result",
            "tool_call",
            "usage",
            "tool_result",
            "text",
            "text",
            "usage",
            "final",
            "run_end"
        ]
    );
    assert_eq!(events[1]["message"], "Unsafe permissions are active for this run.");
    assert_eq!(
        (events[2]["name"].as_str(), events[2]["sideEffect"].as_str()),
        (Some("read_file"), Some("read"))
    );
    assert_eq!(events[4]["status"], "ok");
    assert_eq!(
        events[5]["args"],
        json!({"path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"})
    );
    assert_eq!(events[5]["sideEffect"], "write");
    assert_eq!(events[7]["output"], "Successfully edited src/lib.rs (replaced 1 occurrence).");
    assert_eq!(events[11]["text"], "Fixed add().");
    // A known model behind a gateway: costs are priced from the registry (gpt-4.1: $2/$8).
    assert_eq!(events[3]["costUsd"], 0.00006);
    assert_eq!(
        read(&dir.path("work/src/lib.rs")),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
    );
    // What the model saw: both results, in order, answering their calls.
    let last = mock.requests()[2].json();
    let tools: Vec<_> =
        last["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["tool_call_id"], "call_read");
    assert!(tools[0]["content"].as_str().unwrap().contains("2 |     a - b"));
    assert_eq!(tools[1]["tool_call_id"], "call_edit");
    let advertised = mock.requests()[0].json()["tools"].as_array().unwrap().len();
    assert_eq!(advertised, 9);
}

#[test]
fn without_permission_the_edit_is_refused_and_the_file_untouched() {
    let dir = TestDir::new("refused");
    let original = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
    dir.write("work/src/lib.rs", original);
    let mock = three_turns();
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "fix add"])
        .run();
    out.assert_code(0);
    let events = out.stream();
    assert!(!out.types().contains(&"warning".to_string()));
    let refusal = events.iter().filter(|e| e["type"] == "tool_result").nth(1).unwrap();
    assert_eq!(
        (refusal["id"].as_str(), refusal["status"].as_str()),
        (Some("call_edit"), Some("error"))
    );
    assert!(refusal["output"].as_str().unwrap().starts_with("Error: Permission required for edit_file: Edits files in place. The tool is marked \"prompt\" and was not executed."));
    assert_eq!(read(&dir.path("work/src/lib.rs")), original);
    let advertised: Vec<String> = mock.requests()[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!advertised.contains(&"edit_file".to_string()));
}

#[test]
fn max_turns_with_a_tool_call_is_exit_4() {
    let dir = TestDir::new("max-turns");
    dir.write("work/src/lib.rs", "x\n");
    let mock = three_turns();
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "--max-turns", "1", "go"])
        .run();
    out.assert_code(4);
    let events = out.stream();
    assert_eq!(out.types(), ["run_start", "tool_call", "usage", "tool_result", "error", "run_end"]);
    let error = &events[4];
    assert_eq!(
        (error["code"].as_str(), error["recoverable"].as_bool()),
        (Some("max_turns"), Some(false))
    );
    assert_eq!(events[5]["exitCode"], 4);
    assert_eq!(mock.requests().len(), 1);
    // An empty final answer is not an answer either.
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["   "], 1, 1))]);
    let out = dir.zero().openai(&mock.v1(), "local-coder").args(&["exec", "go"]).run();
    out.assert_code(4);
    assert!(out.stderr.contains("without an answer"), "{out:?}");
}

#[test]
fn tool_filters_hold_at_execution() {
    let dir = TestDir::new("filters");
    dir.write("work/a.txt", "secret plan\n");
    let mock = Mock::start(vec![
        Reply::sse(&openai::tool_turn("c1", "read_file", r#"{"path":"a.txt"}"#)),
        Reply::sse(&openai::answer(&["ok"], 1, 1)),
    ]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "--disabled-tools", "read_file", "read it"])
        .run();
    out.assert_code(0);
    let result = out.stream().into_iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["status"], "error");
    assert!(result["output"].as_str().unwrap().contains("read_file is not enabled for this run"));
    assert!(!out.stdout.contains("secret plan"));
}
