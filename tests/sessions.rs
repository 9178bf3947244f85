//! Sessions end to end: every run recorded, resumed and forked with the real conversation,
//! and still usable after a run is killed.

use std::io::Write;
use std::process::Command;

use serde_json::{json, Value};

use crate::mock::{openai, Mock, Reply};
use crate::util::{read, TestDir};

/// A first run: read a file, then answer. Returns the session id.
fn first_run(dir: &TestDir) -> String {
    dir.write("work/todo.txt", "ship it\n");
    let mock = Mock::start(vec![
        Reply::sse(&openai::tool_turn("call_1", "read_file", r#"{"path":"todo.txt"}"#)),
        Reply::sse(&openai::answer(&["The todo says ship it."], 50, 8)),
    ]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "What is in todo.txt?"])
        .run();
    out.assert_code(0);
    out.stream()[0]["sessionId"].as_str().unwrap().to_string()
}

/// A run with `args` against a mock answering `answer`; returns the run and the messages the
/// model received.
fn continue_with(dir: &TestDir, args: &[&str], answer: &str) -> (crate::util::Output, Vec<Value>) {
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&[answer], 1, 1))]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json"])
        .args(args)
        .run();
    let messages = mock
        .requests()
        .first()
        .map_or_else(Vec::new, |r| r.json()["messages"].as_array().unwrap().clone());
    (out, messages)
}

/// The persisted event types of `first_run`: prompt, tool call, tool result, answer.
const FIRST_RUN_KINDS: [&str; 7] = [
    "message",
    "tool_call",
    "provider_usage",
    "message",
    "tool_result",
    "provider_usage",
    "message",
];

fn event_kinds(dir: &TestDir, id: &str) -> Vec<String> {
    events(dir, id).iter().map(|e| e["type"].as_str().unwrap_or("?").to_string()).collect()
}

fn metadata(dir: &TestDir, id: &str) -> Value {
    serde_json::from_str(&read(&dir.sessions().join(id).join("metadata.json"))).unwrap()
}

fn events(dir: &TestDir, id: &str) -> Vec<Value> {
    read(&dir.sessions().join(id).join("events.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The earlier conversation, as the model must receive it on resume (after the system prompt).
fn earlier_conversation() -> Value {
    json!([
        {"role": "user", "content": "What is in todo.txt?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"todo.txt\"}"}}]},
        {"role": "tool", "content": "File: todo.txt (1 lines)\n\n1 | ship it\n", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "The todo says ship it."},
    ])
}

#[test]
fn resume_sends_the_earlier_conversation_as_messages() {
    let dir = TestDir::new("resume");
    let id = first_run(&dir);
    assert_eq!(event_kinds(&dir, &id), FIRST_RUN_KINDS);
    let (out, messages) = continue_with(&dir, &["--resume", "Now ship it"], "Done.");
    out.assert_code(0);
    assert_eq!(out.stream()[0]["sessionId"], id.as_str(), "appended to the same session");
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(Value::Array(messages[1..5].to_vec()), earlier_conversation());
    assert_eq!(messages[5], json!({"role": "user", "content": "Now ship it"}));
    assert_eq!(messages.len(), 6);
    let meta = metadata(&dir, &id);
    assert_eq!(meta["eventCount"], 10);
    // `--resume=ID` and `--resume ID` name it explicitly.
    let named = format!("--resume={id}");
    for args in [&[named.as_str(), "again"][..], &["--resume", &id, "again"]] {
        let (out, messages) = continue_with(&dir, args, "ok");
        out.assert_code(0);
        assert_eq!(out.stream()[0]["sessionId"], id.as_str());
        assert_eq!(messages.last().unwrap(), &json!({"role": "user", "content": "again"}));
    }
}

#[test]
fn a_resume_word_that_is_no_session_stays_in_the_prompt() {
    let dir = TestDir::new("resume-word");
    let id = first_run(&dir);
    let (out, messages) = continue_with(&dir, &["--resume", "fix", "it"], "ok");
    out.assert_code(0);
    assert_eq!(out.stream()[0]["sessionId"], id.as_str(), "the latest session");
    assert_eq!(messages.last().unwrap(), &json!({"role": "user", "content": "fix it"}));
    let (out, messages) =
        continue_with(&dir, &["--resume", "zero_20990101000000_missing1", "x"], "ok");
    out.assert_code(2);
    assert!(messages.is_empty(), "no provider call for a missing session");
    let error = &out.stream()[0];
    assert_eq!(error["code"], "usage_error");
    assert_eq!(error["message"], "Zero session not found: zero_20990101000000_missing1");
}

#[test]
fn fork_continues_a_copy_and_leaves_the_parent_untouched() {
    let dir = TestDir::new("fork");
    let parent = first_run(&dir);
    let before_meta = metadata(&dir, &parent);
    let before_events = read(&dir.sessions().join(&parent).join("events.jsonl"));
    let (out, messages) =
        continue_with(&dir, &["--fork", &parent, "Try another way"], "Forked answer.");
    out.assert_code(0);
    let fork = out.stream()[0]["sessionId"].as_str().unwrap().to_string();
    assert_ne!(fork, parent);
    assert_eq!(metadata(&dir, &parent), before_meta);
    assert_eq!(read(&dir.sessions().join(&parent).join("events.jsonl")), before_events);
    let meta = metadata(&dir, &fork);
    assert_eq!(meta["parentSessionId"], parent.as_str());
    assert_eq!(meta["title"], "Try another way");
    let kinds = event_kinds(&dir, &fork);
    assert_eq!(kinds[..7], FIRST_RUN_KINDS, "the parent's events are copied first");
    assert_eq!(kinds[7..], ["session_fork", "message", "provider_usage", "message"]);
    assert_eq!(Value::Array(messages[1..5].to_vec()), earlier_conversation());
}

#[test]
fn a_killed_run_leaves_a_session_that_resumes() {
    let dir = TestDir::new("killed");
    let id = first_run(&dir);
    let mock = Mock::start(vec![Reply::Hang]);
    let mut child = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "--resume", "then hang"])
        .spawn();
    mock.wait_request();
    assert!(dir.sessions().join(&id).join("lock").exists(), "the running resume holds the lock");
    // While it runs, a second writer waits, then gives up with a usage error.
    let blocked = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", &format!("--resume={id}"), "concurrent"])
        .run();
    blocked.assert_code(2);
    assert!(blocked.stderr.contains("is in use by another zero run"), "{blocked:?}");
    assert!(Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    child.wait().unwrap();
    // The dead run's lock is taken over; its prompt is part of the history.
    let (out, messages) = continue_with(&dir, &["--resume", "continue"], "back");
    out.assert_code(0);
    let users: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["What is in todo.txt?", "then hang", "continue"]);
}

#[test]
fn a_truncated_last_line_resumes_with_a_warning() {
    let dir = TestDir::new("torn");
    let id = first_run(&dir);
    let path = dir.sessions().join(&id).join("events.jsonl");
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(b"{\"id\":\"cut\",\"sessionId\":\"x\",\"sequ").unwrap();
    drop(file);
    let (out, messages) = continue_with(&dir, &["--resume", "go on"], "fine");
    out.assert_code(0);
    let events = out.stream();
    assert_eq!(events[1]["type"], "warning");
    assert_eq!(
        events[1]["message"],
        format!("Zero session {id}: cut off a truncated last event at line 8 (the run that wrote it was stopped mid-write)"),
        "{out:?}"
    );
    assert_eq!(messages.len(), 6, "system, the earlier four, the new prompt");
    // The resume cut the torn bytes and appended on a line of its own: every later resume,
    // show and search reads the whole session, with no warning.
    assert!(self::events(&dir, &id).len() > 7);
    let (out, messages) = continue_with(&dir, &["--resume", "and again"], "still fine");
    out.assert_code(0);
    assert!(out.stream().iter().all(|e| e["type"] != "warning"), "{out:?}");
    assert_eq!(messages.len(), 8, "system, the earlier six, the new prompt");
    let out = dir.zero().args(&["sessions", "show", &id, "--json"]).run();
    out.assert_code(0);
    assert_eq!(out.stderr, "");
    let out = dir.zero().args(&["search", "still fine", "--json"]).run();
    out.assert_code(0);
    let found: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(found["totalHits"], 1, "{out:?}");
}

#[test]
fn a_session_damaged_in_the_middle_resumes_shows_and_searches_losing_only_that_line() {
    let dir = TestDir::new("damaged");
    let id = first_run(&dir);
    // An older zero appended onto a torn line: line 8 is two events glued into one.
    let path = dir.sessions().join(&id).join("events.jsonl");
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(b"{\"id\":\"cut\",\"sessionId\":\"x\",\"sequ").unwrap();
    let glued = format!("{{\"id\":\"{id}:8\",\"sessionId\":\"{id}\",\"sequence\":8,\"type\":\"message\",\"createdAt\":\"2026-12-01T10:00:00.000Z\",\"payload\":{{\"role\":\"user\",\"content\":\"lost\"}}}}\n");
    file.write_all(glued.as_bytes()).unwrap();
    let later = glued
        .replace(":8\"", ":9\"")
        .replace("\"sequence\":8", "\"sequence\":9")
        .replace("lost", "kept");
    file.write_all(later.as_bytes()).unwrap();
    drop(file);
    let warning = format!("Zero session {id}: skipped line 8 of events.jsonl: it is not a valid event (only that line is lost)");
    let (out, messages) = continue_with(&dir, &["--resume", "go on"], "fine");
    out.assert_code(0);
    let events = out.stream();
    assert_eq!((&events[1]["type"], &events[1]["message"]), (&json!("warning"), &json!(warning)));
    let users: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["What is in todo.txt?", "kept", "go on"]);
    for args in [&["sessions", "show", &id][..], &["sessions", "show", &id, "--json"]] {
        let out = dir.zero().args(args).run();
        out.assert_code(0);
        assert_eq!(out.stderr, format!("[zero] WARNING: {warning}\n"), "{args:?}");
        assert!(out.stdout.contains("kept") && out.stdout.contains("go on"));
    }
    let out = dir.zero().args(&["search", "kept", "--json"]).run();
    out.assert_code(0);
    assert_eq!(out.stderr, format!("[zero] WARNING: {warning}\n"));
    let found: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(found["totalHits"], 1);
}

#[test]
fn a_session_that_cannot_be_written_is_refused_before_any_model_call() {
    let dir = TestDir::new("readonly-session");
    let id = first_run(&dir);
    let path = dir.sessions().join(&id).join("events.jsonl");
    let mode = |path: &std::path::Path, mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    mode(&path, 0o444);
    let session_dir = dir.sessions().join(&id);
    for (what, undo) in [(&path, 0o644), (&session_dir, 0o755)] {
        if what == &session_dir {
            mode(&session_dir, 0o555);
        }
        let mock = Mock::start(vec![Reply::sse(&openai::answer(&["never"], 1, 1))]);
        let out = dir
            .zero()
            .openai(&mock.v1(), "local-coder")
            .args(&["exec", &format!("--resume={id}"), "more"])
            .with_file_modes_binding()
            .run();
        mode(what, undo);
        out.assert_code(2);
        assert!(
            out.stderr.starts_with(&format!("[zero] Zero session {id} cannot be written: ")),
            "{out:?}"
        );
        assert!(mock.requests().is_empty(), "a model call was made");
    }
}

#[test]
fn sessions_list_and_show() {
    let dir = TestDir::new("sessions-cmd");
    let id = first_run(&dir);
    let out = dir.zero().args(&["sessions", "list"]).run();
    out.assert_code(0);
    assert!(out.stdout.starts_with(&id) && out.stdout.contains("What is in todo.txt?"), "{out:?}");
    let out = dir.zero().args(&["sessions", "list", "--json"]).run();
    out.assert_code(0);
    let list: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(list["sessions"][0]["sessionId"], id.as_str());
    let out = dir.zero().args(&["sessions", "show", &id, "--json"]).run();
    out.assert_code(0);
    let shown: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(shown["events"].as_array().unwrap().len(), 7);
    let out = dir.zero().args(&["sessions", "show", &id]).run();
    out.assert_code(0);
    let (header, rows) = out.stdout.split_once("\n\n").expect("a header, a blank line, rows");
    assert!(header.starts_with(&format!("Session {id}\nTitle:   What is in todo.txt?\n")));
    // One row per event: the time (to the second), the sequence, the type, a summary.
    let rows: Vec<&str> = rows
        .lines()
        .map(|row| {
            let (time, rest) = row.split_at(19);
            assert!(time.starts_with("20") && time.as_bytes()[10] == b' ', "{row}");
            rest
        })
        .collect();
    assert_eq!(
        rows,
        [
            "  #1    message         user: What is in todo.txt?",
            "  #2    tool_call       read_file: todo.txt",
            "  #3    provider_usage  15 tokens (10 in, 5 out)",
            "  #4    message         assistant: [calls read_file]",
            "  #5    tool_result     ok File: todo.txt (1 lines) 1 | ship it",
            "  #6    provider_usage  58 tokens (50 in, 8 out)",
            "  #7    message         assistant: The todo says ship it.",
        ]
    );
    let out = dir.zero().args(&["sessions", "show", "nope"]).run();
    out.assert_code(2);
    assert_eq!(out.stderr, "[zero] Zero session not found: nope\n");
}

#[test]
fn a_session_file_that_is_a_link_or_a_fifo_is_refused_and_nothing_is_written() {
    let dir = TestDir::new("session-links");
    let id = first_run(&dir);
    let session = dir.sessions().join(&id);
    let victim = dir.write("victim.txt", "precious\n");
    let events_file = session.join("events.jsonl");
    std::fs::rename(&events_file, dir.path("events.saved")).unwrap();
    std::os::unix::fs::symlink(&victim, &events_file).unwrap();
    let named =
        format!("Zero session {id} is refused: {} is a symbolic link", events_file.display());
    let refused = |out: &crate::util::Output| {
        out.assert_code(2);
        assert!(out.stdout.contains(&named) || out.stderr.contains(&named), "{out:?}");
    };
    let never = dir.script(&json!({"turns": [{"error": "no model call may be made"}]}));
    let script = never.to_str().unwrap();
    let exec = |args: &[&str]| {
        dir.zero().args(&["exec", "-o", "stream-json", "--script", script]).args(args).run()
    };
    refused(&exec(&["--resume", &id, "more"]));
    refused(&exec(&["--fork", &id, "more"]));
    refused(&exec(&["--resume", &id, "--ephemeral", "more"]));
    refused(&dir.zero().args(&["sessions", "show", &id]).run());
    refused(&dir.zero().args(&["sessions", "show", &id, "--json"]).run());
    refused(&dir.zero().args(&["search", "--session", &id, "todo"]).run());
    let everywhere = dir.zero().args(&["search", "todo"]).run();
    refused(&everywhere);
    assert_eq!(read(&victim), "precious\n", "nothing is written through the link");
    // A FIFO is refused at once, never waited on.
    std::fs::remove_file(&events_file).unwrap();
    let made = Command::new("mkfifo").arg(&events_file).status().unwrap();
    assert!(made.success());
    let out = exec(&["--resume", &id, "more"]);
    out.assert_code(2);
    assert!(out.stdout.contains("events.jsonl is not a regular file"), "{out:?}");
    // metadata.json and the session directory as links are refused too.
    std::fs::remove_file(&events_file).unwrap();
    std::fs::rename(dir.path("events.saved"), &events_file).unwrap();
    let meta = session.join("metadata.json");
    std::fs::rename(&meta, dir.path("metadata.saved")).unwrap();
    std::os::unix::fs::symlink(dir.path("metadata.saved"), &meta).unwrap();
    let out = exec(&["--resume", &id, "more"]);
    out.assert_code(2);
    assert!(out.stdout.contains("metadata.json is a symbolic link"), "{out:?}");
    std::fs::remove_file(&meta).unwrap();
    std::fs::rename(dir.path("metadata.saved"), &meta).unwrap();
    let moved = dir.path("moved-session");
    std::fs::rename(&session, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &session).unwrap();
    let out = exec(&["--resume", &id, "more"]);
    out.assert_code(2);
    assert!(out.stdout.contains("is a symbolic link or not a directory"), "{out:?}");
    let before: Vec<_> =
        std::fs::read_dir(&moved).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(before.len(), 3, "events, metadata and lock, nothing more: {before:?}");
}
