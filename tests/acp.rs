//! `zero acp` end to end, driven line by line as an editor drives it: sessions, prompt turns
//! with their updates, permissions answered both ways, cancellation, sessions loaded and
//! resumed across `zero exec`, and a hostile client. The official SDKs drive it in
//! `acp_sdks.rs`.

use std::io::Write;
use std::process::{Child, ChildStdin};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{json, Value};

use crate::mock::{openai, Mock, Reply};
use crate::util::TestDir;

/// How long a test waits for one line before it fails.
const LINE_WAIT: Duration = Duration::from_secs(20);

/// A running `zero acp`.
pub struct Acp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every message read, in order.
    pub seen: Vec<Value>,
    next_id: u64,
    /// Every line each side wrote (`client ...`, `agent ...`), for the schema check.
    wire: String,
}

impl Acp {
    pub fn start(zero: crate::util::Zero) -> Acp {
        let mut child = zero.stdin(Vec::new()).spawn();
        let stdin = child.stdin.take();
        let lines = crate::util::stdout_lines(&mut child);
        Acp { child, stdin, lines, seen: Vec::new(), next_id: 0, wire: String::new() }
    }

    pub fn send(&mut self, message: &Value) {
        self.write(format!("{message}\n").as_bytes());
    }

    pub fn write(&mut self, bytes: &[u8]) {
        // A line that is no JSON is nothing to check against (and may be 20 MiB).
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty() && l.len() < 4096) {
            self.wire.push_str(&format!("client {}\n", String::from_utf8_lossy(line)));
        }
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends request `method` and returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message zero writes.
    pub fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(LINE_WAIT)
            .unwrap_or_else(|_| panic!("no line within {LINE_WAIT:?}; seen {:#?}", self.seen));
        let message: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        self.wire.push_str(&format!("agent {line}\n"));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        self.seen.push(message.clone());
        message
    }

    /// Reads until the response to `id`; the updates before it are returned too.
    pub fn response(&mut self, id: u64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let message = self.next();
            if message["id"] == id && message.get("method").is_none() {
                return (message, before);
            }
            before.push(message);
        }
    }

    /// Sends request `method` and returns its result (failing on an error).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        let (response, _) = self.response(id);
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// Reads until a tool call of the running turn is `in_progress`.
    pub fn until_running(&mut self) {
        while self.next()["params"]["update"]["status"] != "in_progress" {}
    }

    /// Reads until a message with `method`.
    pub fn until_method(&mut self, method: &str) -> Value {
        loop {
            let message = self.next();
            if message["method"] == method {
                return message;
            }
        }
    }

    pub fn initialize(&mut self) -> Value {
        self.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}))
    }

    /// A new session in `cwd`; its id.
    pub fn new_session(&mut self, cwd: &std::path::Path) -> String {
        let result = self.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
        result["sessionId"].as_str().unwrap().to_string()
    }

    pub fn prompt(&mut self, session: &str, text: &str) -> u64 {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// Answers permission request `request` with option `option`.
    pub fn choose(&mut self, request: &Value, option: &str) {
        let answer = json!({"outcome": {"outcome": "selected", "optionId": option}});
        self.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": answer}));
    }

    /// Closes stdin; zero goes on answering what came before.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Closes stdin and waits for the exit code; every message zero wrote is then checked
    /// against the protocol's schema, where the SDKs are installed (see `acp_sdks`).
    pub fn finish(mut self) -> i32 {
        self.stdin = None;
        let status = self.child.wait().unwrap();
        for line in self.lines.try_iter() {
            self.wire.push_str(&format!("agent {line}\n"));
        }
        crate::acp_sdks::check_wire(&self.wire);
        status.code().unwrap_or(-1)
    }
}

/// The `update`s of session/update notifications, without their session id.
pub fn updates(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| m["params"]["update"].clone())
        .collect()
}

fn scripted(dir: &TestDir, script: Value) -> crate::util::Zero {
    let path = dir.script(&script);
    dir.zero().args(&["acp", "--provider", "scripted", "--script", path.to_str().unwrap()])
}

#[test]
fn a_prompt_turn_shows_its_tool_call_its_text_and_ends_with_end_turn() {
    let dir = TestDir::new("acp-turn");
    dir.write("work/a.txt", "hello\n");
    let script = json!({"turns": [
        {"reasoning": "Let me look.", "toolCalls": [{"id": "r1", "name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "It says hello."}
    ]});
    let mut acp = Acp::start(scripted(&dir, script));
    // Whatever version the client asks, zero answers the one it speaks.
    let init = acp.call("initialize", json!({"protocolVersion": 99, "clientCapabilities": {}}));
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentInfo"]["name"], "zero");
    assert_eq!(
        init["agentCapabilities"]["promptCapabilities"],
        json!({"image": true, "audio": false, "embeddedContext": true})
    );
    let work = dir.work();
    let created = acp.call("session/new", json!({"cwd": work, "mcpServers": []}));
    let session = created["sessionId"].as_str().unwrap().to_string();
    assert_eq!(created["modes"]["currentModeId"], "read-only");
    let ids: Vec<&str> = created["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["read-only", "edit", "full"]);
    let id = acp.prompt(&session, "What does a.txt say?");
    let (response, before) = acp.response(id);
    assert_eq!(response["result"], json!({"stopReason": "end_turn"}));
    assert!(before.iter().all(|m| m["params"]["sessionId"] == session.as_str()));
    let path = work.join("a.txt");
    let output = "File: a.txt (1 lines)\n\n1 | hello\n";
    assert_eq!(
        updates(&before),
        [
            json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Let me look."}}),
            json!({"sessionUpdate": "tool_call", "toolCallId": "r1", "title": "Read a.txt", "kind": "read", "status": "pending", "locations": [{"path": path}], "rawInput": {"path": "a.txt"}}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "r1", "status": "in_progress"}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "r1", "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": output}}], "rawOutput": {"output": output, "truncated": false}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "It says hello."}}),
        ]
    );
    // The session is zero's own: `zero sessions show` reads it, `zero exec --resume` goes on.
    let shown = dir.zero().args(&["sessions", "show", &session, "--json"]).run();
    shown.assert_code(0);
    assert!(shown.stdout.contains("What does a.txt say?"), "{}", shown.stdout);
    assert_eq!(acp.finish(), 0);
    let more = dir.script(&json!({"turns": [{"text": "Still hello."}]}));
    let resumed = dir
        .zero()
        .args(&[
            "exec",
            "-o",
            "stream-json",
            "--provider",
            "scripted",
            "--script",
            more.to_str().unwrap(),
            "--resume",
            &session,
            "And now?",
        ])
        .run();
    resumed.assert_code(0);
    assert_eq!(resumed.stream()[0]["sessionId"], session.as_str());
    let shown = dir.zero().args(&["sessions", "show", &session]).run();
    let (first, then) = (
        shown.stdout.find("What does a.txt say?").unwrap(),
        shown.stdout.find("And now?").unwrap(),
    );
    assert!(first < then, "{}", shown.stdout);
}

#[test]
fn permission_requests_are_answered_both_ways_and_always_holds_for_the_session() {
    let dir = TestDir::new("acp-permissions");
    let write = |id: &str, file: &str| json!({"toolCalls": [{"id": id, "name": "write_file", "arguments": {"path": file, "content": id}}]});
    let script = json!({"turns": [
        write("w1", "once.txt"), {"text": "one"},
        write("w2", "refused.txt"), {"text": "two"},
        write("w3", "always.txt"), write("w4", "again.txt"), {"text": "three"},
    ]});
    let mut acp = Acp::start(scripted(&dir, script));
    acp.initialize();
    let session = acp.new_session(&dir.work());
    // Allowed once.
    let id = acp.prompt(&session, "write once");
    let asked = acp.until_method("session/request_permission");
    assert_eq!(asked["params"]["sessionId"], session.as_str());
    assert_eq!(asked["params"]["toolCall"]["toolCallId"], "w1");
    acp.choose(&asked, "allow_once");
    assert_eq!(acp.response(id).0["result"]["stopReason"], "end_turn");
    assert_eq!(std::fs::read_to_string(dir.work().join("once.txt")).unwrap(), "w1");
    // Rejected: the call fails and the model is told.
    let id = acp.prompt(&session, "write refused");
    let asked = acp.until_method("session/request_permission");
    acp.choose(&asked, "reject_once");
    let (response, before) = acp.response(id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let failed = updates(&before).into_iter().find(|u| u["status"] == "failed").unwrap();
    assert_eq!(failed["toolCallId"], "w2");
    assert_eq!(
        failed["content"][0]["content"]["text"],
        "Error: Permission denied for write_file: Rejected by the client."
    );
    assert!(!dir.work().join("refused.txt").exists());
    // Allowed always: the next write of the session is not asked about.
    let id = acp.prompt(&session, "write two more");
    let asked = acp.until_method("session/request_permission");
    acp.choose(&asked, "allow_always");
    let (response, before) = acp.response(id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(before.iter().all(|m| m["method"] != "session/request_permission"), "{before:#?}");
    assert!(dir.work().join("again.txt").exists());
    assert_eq!(acp.finish(), 0);
}

#[test]
fn session_cancel_stops_a_running_command_and_the_session_goes_on() {
    let dir = TestDir::new("acp-cancel");
    let script = json!({"turns": [
        {"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 30"}}]},
        {"text": "back"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script).args(&["--auto", "high"]));
    acp.initialize();
    let session = acp.new_session(&dir.work());
    let id = acp.prompt(&session, "sleep");
    acp.until_running();
    acp.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let (response, before) = acp.response(id);
    assert_eq!(response["result"], json!({"stopReason": "cancelled"}));
    let last = updates(&before).pop().unwrap();
    assert_eq!(
        (last["toolCallId"].as_str(), last["status"].as_str()),
        (Some("b1"), Some("failed"))
    );
    // The session is still usable.
    let id = acp.prompt(&session, "again");
    let (response, before) = acp.response(id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(updates(&before).last().unwrap()["content"]["text"], "back");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn an_exec_session_loads_over_acp_and_an_acp_session_resumes_in_exec() {
    let dir = TestDir::new("acp-load");
    dir.write("work/a.txt", "hello\n");
    let script = dir.script(&json!({"turns": [
        {"toolCalls": [{"id": "r1", "name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "It says hello."}
    ]}));
    let exec = dir
        .zero()
        .args(&[
            "exec",
            "-o",
            "stream-json",
            "--provider",
            "scripted",
            "--script",
            script.to_str().unwrap(),
            "read a.txt",
        ])
        .run();
    exec.assert_code(0);
    let session = exec.stream()[0]["sessionId"].as_str().unwrap().to_string();
    let resumed = dir.write(
        "resume.json",
        &json!({"turns": [{"text": "resumed in acp"}, {"text": "and in exec"}]}).to_string(),
    );
    let zero =
        dir.zero().args(&["acp", "--provider", "scripted", "--script", resumed.to_str().unwrap()]);
    let mut acp = Acp::start(zero);
    acp.initialize();
    let id = acp.request(
        "session/load",
        json!({"sessionId": session, "cwd": dir.work(), "mcpServers": []}),
    );
    let (response, before) = acp.response(id);
    assert_eq!(response["result"]["modes"]["currentModeId"], "read-only");
    let kinds: Vec<String> = updates(&before)
        .iter()
        .map(|u| {
            format!(
                "{} {}",
                u["sessionUpdate"].as_str().unwrap(),
                u["status"].as_str().or(u["content"]["text"].as_str()).unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk read a.txt",
            "tool_call pending",
            "tool_call_update completed",
            "agent_message_chunk It says hello."
        ]
    );
    let id = acp.prompt(&session, "go on");
    assert_eq!(acp.response(id).0["result"]["stopReason"], "end_turn");
    let listed = acp.call("session/list", json!({"cwd": dir.work()}));
    assert_eq!(listed["sessions"][0]["sessionId"], session.as_str());
    assert_eq!(acp.finish(), 0);
    // Back in exec, the conversation has both turns.
    let again = dir
        .zero()
        .args(&[
            "exec",
            "-o",
            "stream-json",
            "--provider",
            "scripted",
            "--script",
            resumed.to_str().unwrap(),
            "--resume",
            &session,
            "and now?",
        ])
        .run();
    again.assert_code(0);
    let shown = dir.zero().args(&["sessions", "show", &session]).run();
    let text = shown.stdout.clone();
    let order = ["read a.txt", "It says hello.", "go on", "resumed in acp", "and now?"];
    let mut at = 0;
    for piece in order {
        let found =
            text[at..].find(piece).unwrap_or_else(|| panic!("{piece} not after {at} in {text}"));
        at += found;
    }
}

#[test]
fn modes_and_config_options_change_what_the_next_turn_may_do() {
    let dir = TestDir::new("acp-modes");
    let script = json!({"turns": [
        {"toolCalls": [{"id": "w1", "name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}]},
        {"text": "done"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script).args(&["-m", "gpt-5"]));
    acp.initialize();
    let created = acp.call("session/new", json!({"cwd": dir.work(), "mcpServers": []}));
    let session = created["sessionId"].as_str().unwrap().to_string();
    let options = created["configOptions"].as_array().unwrap();
    assert_eq!(options[0]["id"], "model");
    assert_eq!(options[0]["currentValue"], "gpt-5");
    assert_eq!(options[1]["id"], "reasoning");
    let id = acp.request("session/set_mode", json!({"sessionId": session, "modeId": "edit"}));
    let (response, before) = acp.response(id);
    assert_eq!(response["result"], json!({}));
    assert_eq!(
        updates(&before),
        [json!({"sessionUpdate": "current_mode_update", "currentModeId": "edit"})]
    );
    // In edit mode a write runs without asking.
    let id = acp.prompt(&session, "write");
    let (response, before) = acp.response(id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(before.iter().all(|m| m["method"] != "session/request_permission"));
    assert!(dir.work().join("x.txt").exists());
    let changed = acp.call(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "reasoning", "value": "high"}),
    );
    assert_eq!(changed["configOptions"][1]["currentValue"], "high");
    let id = acp.request("session/set_mode", json!({"sessionId": session, "modeId": "yolo"}));
    assert_eq!(acp.response(id).0["error"]["code"], -32602);
    assert_eq!(acp.finish(), 0);
}

#[test]
fn the_loopback_provider_answers_a_prompt_and_its_usage_is_shown() {
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["Par", "is."], 120, 4))]);
    let dir = TestDir::new("acp-mock");
    let zero = dir.zero().openai(&mock.v1(), "gpt-4.1").args(&["acp"]);
    let mut acp = Acp::start(zero);
    acp.initialize();
    let authenticated = acp.call("authenticate", json!({"methodId": "zero-provider"}));
    assert_eq!(authenticated, json!({}));
    let session = acp.new_session(&dir.work());
    let id = acp.prompt(&session, "Capital of France?");
    let (response, before) = acp.response(id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let updates = updates(&before);
    let text: String = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Paris.");
    let usage = updates.iter().find(|u| u["sessionUpdate"] == "usage_update").unwrap();
    assert_eq!(usage["used"], 124);
    assert_eq!(usage["size"], 1_047_576);
    assert_eq!(usage["cost"]["currency"], "USD");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn authenticate_fails_as_exec_would_without_a_provider() {
    let dir = TestDir::new("acp-auth");
    let mut acp = Acp::start(dir.zero().args(&["acp"]));
    acp.initialize();
    let id = acp.request("authenticate", json!({"methodId": "zero-provider"}));
    let (response, _) = acp.response(id);
    assert_eq!(response["error"]["code"], -32000);
    let exec = dir.zero().args(&["exec", "hi"]).run();
    let message = response["error"]["message"].as_str().unwrap();
    assert!(exec.stderr.contains(message), "{} vs {}", exec.stderr, response);
    assert_eq!(acp.finish(), 0);
}

#[test]
fn flags_that_mean_nothing_to_an_editor_are_a_usage_error_naming_them() {
    let dir = TestDir::new("acp-flags");
    let out = dir.zero().args(&["acp", "-o", "json", "--live"]).run();
    out.assert_code(2);
    assert!(out.stdout.is_empty());
    assert_eq!(
        out.stderr.trim(),
        "[zero] zero acp does not take -o/--output-format, --live: the editor sends the prompts, and each session's output is ACP (see zero acp --help)"
    );
}

#[test]
fn a_hostile_client_gets_its_errors_and_nothing_is_torn() {
    let dir = TestDir::new("acp-hostile");
    let script = json!({"turns": [
        {"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 30"}}]},
        {"text": "never"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script).args(&["--auto", "high"]));
    // Before initialize.
    let id = acp.request("session/list", json!({}));
    assert_eq!(acp.response(id).0["error"]["code"], -32600);
    acp.initialize();
    let id = acp.request("initialize", json!({"protocolVersion": 1}));
    assert_eq!(acp.response(id).0["error"]["code"], -32600);
    acp.write(b"{not json\n");
    assert_eq!(acp.next()["error"]["code"], -32700);
    acp.write(b"{\"id\":7,\"method\":\"session/list\"}\n");
    let missing = acp.next();
    assert_eq!(
        (missing["id"].as_i64(), missing["error"]["code"].as_i64()),
        (Some(7), Some(-32600))
    );
    let id = acp.request("session/fly", json!({}));
    assert_eq!(acp.response(id).0["error"]["code"], -32601);
    let id = acp.request("session/new", json!({"cwd": "relative", "mcpServers": []}));
    assert_eq!(acp.response(id).0["error"]["code"], -32602);
    // A 20 MiB line is discarded as it is read.
    let mut long = vec![b'x'; 20 << 20];
    long.push(b'\n');
    acp.write(&long);
    let refused = acp.next();
    assert_eq!(refused["error"]["code"], -32600);
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("longer than the limit of 16 MiB"));
    // A line meant as a response is never answered, whatever is wrong with it.
    acp.send(
        &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}}),
    );
    acp.send(&json!({"jsonrpc": "2.0", "id": 42, "result": {}, "error": null}));
    acp.send(&json!({"jsonrpc": "2.0", "id": 43, "result": {}, "error": {"code": 1}}));
    let id = acp.request("session/list", json!({}));
    assert_eq!(acp.next()["id"], id);
    // Notifications and answers nobody asked for are ignored.
    acp.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "nobody"}}),
    );
    acp.send(&json!({"jsonrpc": "2.0", "id": "zero-99", "result": {}}));
    let session = acp.new_session(&dir.work());
    let turn = acp.prompt(&session, "sleep");
    acp.until_running();
    // A flood of prompts while the turn runs: each is refused at once.
    let mut flood = String::new();
    for n in 0..10_000 {
        let prompt = json!({"jsonrpc": "2.0", "id": 1000 + n, "method": "session/prompt", "params": {"sessionId": session, "prompt": [{"type": "text", "text": "more"}]}});
        flood.push_str(&format!("{prompt}\n"));
    }
    acp.write(flood.as_bytes());
    for _ in 0..10_000 {
        let m = acp.next();
        assert_eq!(m["error"]["code"], -32600, "{m}");
    }
    // stdin closes mid-turn: the turn stops, the process ends cleanly.
    let code = acp.finish();
    assert_eq!(code, 0);
    let _ = turn;
    let events =
        std::fs::read_to_string(dir.sessions().join(&session).join("events.jsonl")).unwrap();
    for line in events.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("torn line ({e}): {line}"));
    }
    assert!(events.ends_with('\n'));
}

#[test]
fn the_clients_editor_reads_and_writes_the_files_and_changes_show_as_diffs() {
    let dir = TestDir::new("acp-editor");
    dir.write("work/a.txt", "on disk\n");
    let script = json!({"turns": [
        {"toolCalls": [{"id": "r1", "name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"toolCalls": [{"id": "e1", "name": "edit_file", "arguments": {"path": "a.txt", "old_string": "unsaved", "new_string": "saved"}}]},
        {"toolCalls": [{"id": "w1", "name": "write_file", "arguments": {"path": "new/b.txt", "content": "fresh"}}]},
        {"text": "done"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script).args(&["--auto", "medium"]));
    let caps = json!({"fs": {"readTextFile": true, "writeTextFile": true}});
    acp.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": caps}));
    let session = acp.new_session(&dir.work());
    let a = dir.work().join("a.txt");
    let b = dir.work().join("new/b.txt");
    let id = acp.prompt(&session, "edit a");
    let mut written = Vec::new();
    let (response, before) = loop {
        let m = acp.next();
        match m["method"].as_str() {
            Some("fs/read_text_file") => {
                assert_eq!(m["params"], json!({"sessionId": session, "path": a}));
                acp.send(
                    &json!({"jsonrpc": "2.0", "id": m["id"], "result": {"content": "unsaved\n"}}),
                );
            }
            Some("fs/write_text_file") => {
                written.push((m["params"]["path"].clone(), m["params"]["content"].clone()));
                acp.send(&json!({"jsonrpc": "2.0", "id": m["id"], "result": {}}));
            }
            _ if m["id"] == id => break (m, acp.seen.clone()),
            _ => {}
        }
    };
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(written, [(json!(a), json!("saved\n")), (json!(b), json!("fresh"))]);
    // The editor holds the change; the disk is the editor's to write.
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "on disk\n");
    let ups = updates(&before);
    let read = ups.iter().find(|u| u["toolCallId"] == "r1" && u["status"] == "completed").unwrap();
    assert_eq!(read["rawOutput"]["output"], "File: a.txt (1 lines)\n\n1 | unsaved\n");
    let edit = ups.iter().find(|u| u["toolCallId"] == "e1" && u["status"] == "completed").unwrap();
    assert_eq!(
        edit["content"][0],
        json!({"type": "diff", "path": a, "oldText": "unsaved\n", "newText": "saved\n"})
    );
    let created =
        ups.iter().find(|u| u["toolCallId"] == "w1" && u["status"] == "completed").unwrap();
    assert_eq!(
        created["content"][0],
        json!({"type": "diff", "path": b, "oldText": null, "newText": "fresh"})
    );
    assert_eq!(acp.finish(), 0);
}

#[test]
fn session_cancel_drops_a_model_call_that_is_waiting_for_the_provider() {
    let (_open, stalled) = std::sync::mpsc::channel::<()>();
    let mut steps: Vec<crate::mock::Step> =
        vec![crate::mock::Step::Send(openai::text("Thinking").into_bytes())];
    steps.push(crate::mock::Step::Wait(stalled));
    let mock =
        Mock::start(vec![Reply::stream(steps), Reply::sse(&openai::answer(&["Back."], 10, 2))]);
    let dir = TestDir::new("acp-cancel-model");
    let mut acp = Acp::start(dir.zero().openai(&mock.v1(), "gpt-4.1").args(&["acp"]));
    acp.initialize();
    let session = acp.new_session(&dir.work());
    let id = acp.prompt(&session, "think");
    loop {
        if acp.next()["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
    }
    // The provider sends nothing more; the editor's stop button is pressed.
    acp.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let (response, _) = acp.response(id);
    assert_eq!(response["result"], json!({"stopReason": "cancelled"}));
    // The next prompt goes to the provider on a new connection.
    let id = acp.prompt(&session, "again");
    let (response, before) = acp.response(id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(
        updates(&before).iter().find(|u| u["sessionUpdate"] == "agent_message_chunk").unwrap()
            ["content"]["text"],
        "Back."
    );
    assert_eq!(acp.finish(), 0);
}

/// The test MCP server's entry in the form an editor sends it: env as a list of pairs.
fn acp_stdio_server(name: &str, log: &std::path::Path) -> Value {
    let entry = crate::mcp_server::stdio_entry("", log);
    let env: Vec<Value> = entry["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    json!({"name": name, "command": entry["command"], "args": entry["args"], "env": env})
}

#[test]
fn the_editors_mcp_servers_start_with_the_session_and_stop_when_it_closes() {
    let dir = TestDir::new("acp-mcp");
    let log = dir.path("stdio.log");
    let http = crate::mcp_server::Http::start(crate::mcp_server::HttpTricks::default());
    let script = json!({"turns": [
        {"toolCalls": [
            {"id": "m1", "name": "mcp__local__echo", "arguments": {"text": "hi"}},
            {"id": "m2", "name": "mcp__remote__echo", "arguments": {"text": "there"}}
        ]},
        {"text": "both answered"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script));
    acp.initialize();
    let servers = json!([
        acp_stdio_server("local", &log),
        {"type": "http", "name": "remote", "url": http.url(), "headers": [{"name": "X-Test", "value": "yes"}]}
    ]);
    let created = acp.call("session/new", json!({"cwd": dir.work(), "mcpServers": servers}));
    let session = created["sessionId"].as_str().unwrap().to_string();
    let id = acp.prompt(&session, "echo");
    let (response, before) = acp.response(id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let results: Vec<(Value, Value)> = updates(&before)
        .iter()
        .filter(|u| u["status"] == "completed")
        .map(|u| (u["toolCallId"].clone(), u["rawOutput"]["output"].clone()))
        .collect();
    assert_eq!(results, [(json!("m1"), json!("echo: hi")), (json!("m2"), json!("echo: there"))]);
    let titles: Vec<Value> = updates(&before)
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .map(|u| u["title"].clone())
        .collect();
    assert_eq!(titles, [json!("echo (local)"), json!("echo (remote)")]);
    // session/close stops the editor's stdio server.
    let pid: u32 = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("pid ")
        .parse()
        .unwrap();
    assert!(crate::util::alive(pid));
    assert_eq!(acp.call("session/close", json!({"sessionId": session})), json!({}));
    assert!(crate::util::gone_within(pid, Duration::from_secs(5)), "the server still runs");
    let id = acp.prompt(&session, "after close");
    assert_eq!(acp.response(id).0["error"]["code"], -32602);
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_required_mcp_server_that_fails_fails_session_new_naming_it() {
    let dir = TestDir::new("acp-mcp-required");
    let config =
        json!({"mcpServers": {"docs": {"command": "/nonexistent/docs-server", "required": true}}})
            .to_string();
    let mut acp = Acp::start(scripted(&dir, json!({"turns": []})).args(&["--mcp-config", &config]));
    acp.initialize();
    let id = acp.request("session/new", json!({"cwd": dir.work(), "mcpServers": []}));
    let (response, _) = acp.response(id);
    let error = &response["error"];
    assert_eq!(error["code"], -32603, "{response}");
    assert!(error["message"].as_str().unwrap().contains("docs"), "{response}");
    assert_eq!(error["data"]["code"], "mcp_error");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_permission_request_without_an_answer_is_withdrawn_and_the_call_rejected() {
    let dir = TestDir::new("acp-approval-timeout");
    let script = json!({"turns": [
        {"toolCalls": [{"id": "w1", "name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}]},
        {"text": "no answer came"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script).args(&["--approval-timeout-ms", "300"]));
    acp.initialize();
    let session = acp.new_session(&dir.work());
    let id = acp.prompt(&session, "write");
    let asked = acp.until_method("session/request_permission");
    let withdrawn = acp.until_method("$/cancel_request");
    assert_eq!(withdrawn["params"], json!({"requestId": asked["id"]}));
    let (response, before) = acp.response(id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let failed = updates(&before).into_iter().find(|u| u["status"] == "failed").unwrap();
    assert_eq!(
        failed["content"][0]["content"]["text"],
        "Error: Permission denied for write_file: No answer came within 300 ms."
    );
    assert!(!dir.work().join("x.txt").exists());
    // A late answer answers nothing.
    acp.choose(&asked, "allow_once");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn cancel_request_naming_the_prompt_cancels_its_turn() {
    let dir = TestDir::new("acp-cancel-request");
    let script = json!({"turns": [{"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 30"}}]}]});
    let mut acp = Acp::start(scripted(&dir, script).args(&["--auto", "high"]));
    acp.initialize();
    let session = acp.new_session(&dir.work());
    let id = acp.prompt(&session, "sleep");
    acp.until_running();
    acp.send(&json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": id}}));
    assert_eq!(acp.response(id).0["result"], json!({"stopReason": "cancelled"}));
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_signal_stops_the_servers_and_exits_with_its_code() {
    let dir = TestDir::new("acp-signal");
    let log = dir.path("stdio.log");
    let script = json!({"turns": [
        {"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 30"}}]},
        {"toolCalls": [{"id": "w1", "name": "write_file", "arguments": {"path": "after.txt", "content": "x"}}]},
        {"text": "never"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script).args(&["--auto", "high"]));
    acp.initialize();
    let created = acp.call(
        "session/new",
        json!({"cwd": dir.work(), "mcpServers": [acp_stdio_server("local", &log)]}),
    );
    let session = created["sessionId"].as_str().unwrap().to_string();
    let server: u32 = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("pid ")
        .parse()
        .unwrap();
    acp.prompt(&session, "sleep");
    acp.until_running();
    let pid = acp.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = acp.child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(crate::util::gone_within(server, Duration::from_secs(5)), "the MCP server still runs");
    // The interruption is in the session, whole.
    let events =
        std::fs::read_to_string(dir.sessions().join(&session).join("events.jsonl")).unwrap();
    assert!(events.lines().last().unwrap().contains("\"interrupted\""), "{events}");
    assert!(!events.contains("\"turn_end\""), "{events}");
    // No model call followed the signal: the next call's write never happened.
    assert!(!dir.work().join("after.txt").exists());
}

#[test]
fn when_the_input_ends_queued_prompts_answer_cancelled_without_running() {
    let dir = TestDir::new("acp-eof-queue");
    let script = json!({"turns": [
        {"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 30"}}]},
        {"toolCalls": [{"id": "b2", "name": "bash", "arguments": {"command": "touch ran.txt; sleep 30"}}]},
        {"text": "never"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script).args(&["--auto", "high"]));
    acp.initialize();
    let a = acp.new_session(&dir.work());
    let b = acp.new_session(&dir.work());
    let first = acp.prompt(&a, "sleep");
    acp.until_running();
    let second = acp.prompt(&b, "queued");
    acp.close_stdin();
    assert_eq!(acp.response(first).0["result"], json!({"stopReason": "cancelled"}));
    assert_eq!(acp.response(second).0["result"], json!({"stopReason": "cancelled"}));
    assert_eq!(acp.finish(), 0);
    assert!(!dir.work().join("ran.txt").exists());
}

#[test]
fn a_failed_load_of_an_open_session_leaves_it_open() {
    let dir = TestDir::new("acp-load-fail");
    let mut acp = Acp::start(scripted(&dir, json!({"turns": [{"text": "still here"}]})));
    acp.initialize();
    let session = acp.new_session(&dir.work());
    let id = acp.request(
        "session/load",
        json!({"sessionId": session, "cwd": dir.work(), "mcpServers": "bad"}),
    );
    assert_eq!(acp.response(id).0["error"]["code"], -32602);
    let id = acp.prompt(&session, "are you there?");
    assert_eq!(acp.response(id).0["result"]["stopReason"], "end_turn");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_cancelled_command_in_a_silent_clients_terminal_is_withdrawn() {
    let dir = TestDir::new("acp-terminal-cancel");
    let script = json!({"turns": [{"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 30"}}]}]});
    let mut acp = Acp::start(scripted(&dir, script).args(&["--auto", "high", "--client-terminal"]));
    acp.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {"terminal": true}}));
    let session = acp.new_session(&dir.work());
    let id = acp.prompt(&session, "run");
    let created = acp.until_method("terminal/create");
    acp.send(&json!({"jsonrpc": "2.0", "id": created["id"], "result": {"terminalId": "t1"}}));
    let waiting = acp.until_method("terminal/wait_for_exit");
    // The client never answers; the editor's stop button is pressed.
    acp.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let (response, before) = acp.response(id);
    assert_eq!(response["result"], json!({"stopReason": "cancelled"}));
    let withdrawn: Vec<&Value> =
        before.iter().filter(|m| m["method"] == "$/cancel_request").collect();
    assert_eq!(withdrawn[0]["params"], json!({"requestId": waiting["id"]}));
    let asked: Vec<&str> = before
        .iter()
        .filter_map(|m| m["method"].as_str())
        .filter(|m| m.starts_with("terminal/"))
        .collect();
    assert_eq!(asked, ["terminal/kill", "terminal/output", "terminal/release"]);
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_turn_ends_as_the_provider_ended_it_and_an_error_leaves_the_session_usable() {
    let cut = vec![
        openai::text("A long"),
        openai::finish("length"),
        openai::usage(10, 4096),
        openai::done(),
    ];
    let refused = vec![openai::finish("content_filter"), openai::done()];
    let mock = Mock::start(vec![
        Reply::sse(&cut),
        Reply::sse(&refused),
        Reply::status(401, "application/json", r#"{"error": {"message": "bad key"}}"#),
        Reply::sse(&openai::answer(&["Fine again."], 10, 2)),
    ]);
    let dir = TestDir::new("acp-endings");
    let mut acp = Acp::start(dir.zero().openai(&mock.v1(), "gpt-4.1").args(&["acp"]));
    acp.initialize();
    let session = acp.new_session(&dir.work());
    let stop = |acp: &mut Acp, text: &str| {
        let id = acp.prompt(&session, text);
        acp.response(id).0
    };
    assert_eq!(stop(&mut acp, "long")["result"], json!({"stopReason": "max_tokens"}));
    assert_eq!(stop(&mut acp, "bad")["result"], json!({"stopReason": "refusal"}));
    let failed = stop(&mut acp, "down");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(failed["error"]["message"].as_str().unwrap().contains("bad key"), "{failed}");
    assert_eq!(failed["error"]["data"]["code"], "provider_error");
    assert_eq!(stop(&mut acp, "again")["result"], json!({"stopReason": "end_turn"}));
    assert_eq!(acp.finish(), 0);
}

#[test]
fn help_lists_the_flags_acp_takes() {
    let dir = TestDir::new("acp-help");
    let out = dir.zero().args(&["acp", "--help"]).run();
    out.assert_code(0);
    assert!(out.stdout.starts_with("Usage: zero acp [OPTIONS]\n"), "{}", out.stdout);
    for flag in
        ["--model", "--auto", "--sandbox", "--mcp-config", "--approval-timeout-ms", "--add-dir"]
    {
        assert!(out.stdout.contains(flag), "{flag} missing: {}", out.stdout);
    }
    for flag in ["--output-format", "--live", "--resume", "--prompt"] {
        assert!(!out.stdout.contains(flag), "{flag} listed: {}", out.stdout);
    }
}

#[test]
fn with_client_terminal_bash_runs_in_the_editors_terminal_and_the_call_shows_it() {
    let dir = TestDir::new("acp-terminal");
    let script = json!({"turns": [
        {"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo hi > ran.txt; echo hi"}}]},
        {"text": "ran"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script).args(&["--auto", "high", "--client-terminal"]));
    acp.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {"terminal": true}}));
    let session = acp.new_session(&dir.work());
    let id = acp.prompt(&session, "run");
    let mut asked = Vec::new();
    let (response, before) = loop {
        let m = acp.next();
        let method = m["method"].as_str().unwrap_or_default().to_string();
        let result = match method.as_str() {
            "terminal/create" => {
                assert_eq!(m["params"]["command"], "/bin/sh");
                assert_eq!(m["params"]["args"], json!(["-c", "echo hi > ran.txt; echo hi"]));
                assert_eq!(m["params"]["cwd"], json!(dir.work().canonicalize().unwrap()));
                json!({"terminalId": "term-1"})
            }
            "terminal/wait_for_exit" => json!({"exitCode": 0}),
            "terminal/output" => json!({"output": "hi\n", "truncated": false}),
            "terminal/release" => json!({}),
            _ if m["id"] == id => break (m, acp.seen.clone()),
            _ => continue,
        };
        assert_eq!(m["params"]["sessionId"], session.as_str());
        asked.push(method);
        acp.send(&json!({"jsonrpc": "2.0", "id": m["id"], "result": result}));
    };
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(
        asked,
        ["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"]
    );
    // The command ran in the editor's terminal, not here.
    assert!(!dir.work().join("ran.txt").exists());
    let ups = updates(&before);
    assert!(ups.iter().any(|u| u["toolCallId"] == "b1"
        && u["content"] == json!([{"type": "terminal", "terminalId": "term-1"}])));
    let done = ups.iter().find(|u| u["status"] == "completed").unwrap();
    assert_eq!(done["content"][0], json!({"type": "terminal", "terminalId": "term-1"}));
    assert_eq!(done["rawOutput"]["output"], "output:\nhi\nExit code: 0");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn an_accepted_plan_is_shown_as_the_sessions_plan() {
    let dir = TestDir::new("acp-plan");
    let plan = json!({"plan": [
        {"id": "1", "content": "Read the code", "status": "completed"},
        {"id": "2", "content": "Fix the bug", "status": "in_progress"},
        {"id": "3", "content": "Try the old fix", "status": "failed"}
    ]});
    let script = json!({"turns": [
        {"toolCalls": [
            {"id": "p1", "name": "update_plan", "arguments": plan},
            {"id": "l1", "name": "list_directory", "arguments": {}}
        ]},
        {"text": "planned"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script));
    acp.initialize();
    let session = acp.new_session(&dir.work());
    let id = acp.prompt(&session, "plan");
    let (_, before) = acp.response(id);
    let plans: Vec<Value> =
        updates(&before).into_iter().filter(|u| u["sessionUpdate"] == "plan").collect();
    assert_eq!(
        plans,
        [json!({"sessionUpdate": "plan", "entries": [
            {"content": "Read the code", "priority": "medium", "status": "completed"},
            {"content": "Fix the bug", "priority": "medium", "status": "in_progress"},
            {"content": "Try the old fix (failed)", "priority": "medium", "status": "completed"}
        ]})]
    );
    assert_eq!(acp.finish(), 0);
}

#[test]
fn the_readmes_editor_snippets_start_zero_acp() {
    let readme =
        crate::util::read(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    let section = readme.split("### The Agent Client Protocol").nth(1).unwrap();
    let section = section.split("\n### ").next().unwrap();
    let blocks: Vec<(&str, &str)> =
        section.split("```").skip(1).step_by(2).map(|b| b.split_once('\n').unwrap()).collect();
    let kinds: Vec<&str> = blocks.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, ["json", "json", "lua", "elisp"]);
    for (_, json) in blocks.iter().filter(|(k, _)| *k == "json") {
        let value: Value = serde_json::from_str(json).unwrap();
        assert_eq!(value["agent_servers"]["zero"]["command"], "zero");
        assert_eq!(value["agent_servers"]["zero"]["args"], json!(["acp"]));
    }
    assert!(blocks[2].1.contains(r#"commands = { default = { "zero", "acp" } }"#));
    assert!(blocks[2].1.contains(r#"auth_method = "zero-provider""#));
    assert!(
        blocks[3].1.contains(":command \"zero\"")
            && blocks[3].1.contains(":command-params '(\"acp\")")
    );
}

#[test]
fn without_a_provider_session_new_asks_for_authentication() {
    let dir = TestDir::new("acp-no-provider");
    let mut acp = Acp::start(dir.zero().args(&["acp"]));
    acp.initialize();
    let id = acp.request(
        "session/new",
        json!({"cwd": dir.work(), "mcpServers": [], "additionalDirectories": null}),
    );
    let (response, _) = acp.response(id);
    assert_eq!(response["error"]["code"], -32000, "{response}");
    assert_eq!(response["error"]["data"]["code"], "provider_error");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn session_list_pages_fifty_sessions_at_a_time() {
    let dir = TestDir::new("acp-list");
    let script = dir.script(&json!({"turns": [{"text": "ok"}]}));
    for n in 0..51 {
        let out = dir
            .zero()
            .args(&[
                "exec",
                "--provider",
                "scripted",
                "--script",
                script.to_str().unwrap(),
                &format!("run {n}"),
            ])
            .run();
        out.assert_code(0);
    }
    let mut acp = Acp::start(dir.zero().args(&[
        "acp",
        "--provider",
        "scripted",
        "--script",
        script.to_str().unwrap(),
    ]));
    acp.initialize();
    let first = acp.call("session/list", json!({"cwd": dir.work()}));
    assert_eq!(first["sessions"].as_array().unwrap().len(), 50);
    let cursor = first["nextCursor"].as_str().unwrap().to_string();
    let second = acp.call("session/list", json!({"cwd": dir.work(), "cursor": cursor}));
    assert_eq!(second["sessions"].as_array().unwrap().len(), 1);
    assert!(second.get("nextCursor").is_none());
    let elsewhere = acp.call("session/list", json!({"cwd": "/nowhere"}));
    assert_eq!(elsewhere["sessions"], json!([]));
    let far = acp.call("session/list", json!({"cursor": usize::MAX.to_string()}));
    assert_eq!(far, json!({"sessions": []}));
    let id = acp.request("session/list", json!({"cwd": 123}));
    assert_eq!(acp.response(id).0["error"]["code"], -32602);
    assert_eq!(acp.finish(), 0);
}

#[test]
fn secrets_never_reach_the_editor() {
    let dir = TestDir::new("acp-redaction");
    let secret = "ghp_ZeroAcpSecretToken1234567890abcd";
    dir.write("work/creds.txt", &format!("token={secret}\n"));
    let script = json!({"turns": [
        {"reasoning": format!("The token is {secret}."), "toolCalls": [{"id": "r1", "name": "read_file", "arguments": {"path": "creds.txt"}}]},
        {"text": format!("Found {secret} in the file.")}
    ]});
    let mut acp = Acp::start(scripted(&dir, script).env("GITHUB_TOKEN", secret));
    acp.initialize();
    let session = acp.new_session(&dir.work());
    let id = acp.prompt(&session, "find the token");
    let (response, before) = acp.response(id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let written: String = before.iter().map(|m| m.to_string()).collect();
    crate::util::assert_no_piece_of(&written, secret, "zero acp's stdout");
    assert!(written.contains("[REDACTED"), "{written}");
    assert_eq!(acp.finish(), 0);
    let stored =
        std::fs::read_to_string(dir.sessions().join(&session).join("events.jsonl")).unwrap();
    crate::util::assert_no_piece_of(&stored, secret, "the session");
}

#[test]
fn the_editor_writes_what_the_model_wrote_secrets_and_all_and_a_failed_patch_loses_no_file() {
    let dir = TestDir::new("acp-editor-exact");
    let secret = "ghp_ZeroAcpSecretToken1234567890abcd";
    dir.write("work/.env", &format!("TOKEN={secret}\nLEVEL=0\n"));
    dir.write("work/a.txt", "one\n");
    let patch = "--- a/a.txt\n+++ b/moved/a2.txt\n@@ -1 +1 @@\n-one\n+two\n";
    let script = json!({"turns": [
        {"toolCalls": [{"id": "e1", "name": "edit_file", "arguments": {"path": ".env", "old_string": "LEVEL=0", "new_string": "LEVEL=1"}}]},
        {"toolCalls": [{"id": "p1", "name": "apply_patch", "arguments": {"patch": patch}}]},
        {"text": "done"}
    ]});
    let mut acp =
        Acp::start(scripted(&dir, script).env("GITHUB_TOKEN", secret).args(&["--auto", "medium"]));
    let caps = json!({"fs": {"readTextFile": false, "writeTextFile": true}});
    acp.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": caps}));
    let session = acp.new_session(&dir.work());
    let id = acp.prompt(&session, "edit");
    let mut writes = Vec::new();
    let (_, before) = loop {
        let m = acp.next();
        if m["method"] == "fs/write_text_file" {
            writes.push(m["params"]["content"].as_str().unwrap().to_string());
            // The first write (the .env edit) succeeds; the patch's write fails.
            let answer = if writes.len() == 1 {
                json!({"jsonrpc": "2.0", "id": m["id"], "result": {}})
            } else {
                json!({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32603, "message": "disk full"}})
            };
            acp.send(&answer);
        } else if m["id"] == id {
            break (m, acp.seen.clone());
        }
    };
    // The file is written as the model edited it, its secret intact.
    assert_eq!(writes[0], format!("TOKEN={secret}\nLEVEL=1\n"));
    // What zero shows is still redacted.
    let shown: String =
        before.iter().filter(|m| m["method"] == "session/update").map(|m| m.to_string()).collect();
    crate::util::assert_no_piece_of(&shown, secret, "the updates");
    // The renamed file's write failed: its old name is still there.
    assert_eq!(std::fs::read_to_string(dir.work().join("a.txt")).unwrap(), "one\n");
    let failed = updates(&before)
        .into_iter()
        .find(|u| u["toolCallId"] == "p1" && u["status"] == "failed")
        .unwrap();
    let text = failed["content"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("disk full") && text.contains("nothing was changed"), "{text}");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_prompt_too_large_for_the_window_is_refused_and_the_session_goes_on() {
    let dir = TestDir::new("acp-huge-prompt");
    let mut acp = Acp::start(
        scripted(&dir, json!({"turns": [{"text": "small answer"}]})).args(&["-m", "gpt-4.1"]),
    );
    acp.initialize();
    let session = acp.new_session(&dir.work());
    let huge = "x".repeat(5 << 20);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": huge}]}),
    );
    let (response, _) = acp.response(id);
    assert_eq!(
        response["error"]["code"],
        -32602,
        "{}",
        &response.to_string()[..300.min(response.to_string().len())]
    );
    assert!(response["error"]["message"].as_str().unwrap().starts_with("The prompt does not fit"));
    let id = acp.prompt(&session, "small");
    assert_eq!(acp.response(id).0["result"]["stopReason"], "end_turn");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_workspace_named_through_a_link_keeps_the_editors_paths() {
    let dir = TestDir::new("acp-link-cwd");
    dir.write("real/a.txt", "hello\n");
    let link = dir.path("link");
    std::os::unix::fs::symlink(dir.path("real"), &link).unwrap();
    let script = json!({"turns": [
        {"toolCalls": [{"id": "r1", "name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"toolCalls": [{"id": "w1", "name": "write_file", "arguments": {"path": "b.txt", "content": "b"}}]},
        {"text": "done"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script).args(&["--auto", "medium"]));
    let caps = json!({"fs": {"readTextFile": true, "writeTextFile": true}});
    acp.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": caps}));
    let created = acp.call("session/new", json!({"cwd": link, "mcpServers": []}));
    let session = created["sessionId"].as_str().unwrap().to_string();
    let uri = format!("file://{}/a.txt", link.display());
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [
            {"type": "text", "text": "look"}, {"type": "resource_link", "name": "a.txt", "uri": uri}
        ]}),
    );
    let mut paths = Vec::new();
    let (_, before) = loop {
        let m = acp.next();
        match m["method"].as_str() {
            Some("fs/read_text_file") => {
                paths.push(m["params"]["path"].clone());
                acp.send(
                    &json!({"jsonrpc": "2.0", "id": m["id"], "result": {"content": "hello\n"}}),
                );
            }
            Some("fs/write_text_file") => {
                paths.push(m["params"]["path"].clone());
                acp.send(&json!({"jsonrpc": "2.0", "id": m["id"], "result": {}}));
            }
            _ if m["id"] == id => break (m, acp.seen.clone()),
            _ => {}
        }
    };
    assert_eq!(paths, [json!(link.join("a.txt")), json!(link.join("b.txt"))]);
    let ups = updates(&before);
    let diff = ups.iter().find(|u| u["toolCallId"] == "w1" && u["status"] == "completed").unwrap();
    assert_eq!(diff["content"][0]["path"], json!(link.join("b.txt")));
    // The linked file was read: the model was given its text.
    let shown = dir.zero().args(&["sessions", "show", &session]).run();
    assert!(
        shown.stdout.contains("hello") && !shown.stdout.contains("outside the workspace"),
        "{}",
        shown.stdout
    );
    assert_eq!(acp.finish(), 0);
}

#[test]
fn session_cancel_cancels_an_mcp_call_on_its_server() {
    let dir = TestDir::new("acp-cancel-mcp");
    let log = dir.path("stdio.log");
    let ready = dir.path("ready.fifo");
    crate::util::mkfifo(&ready);
    let mut server = acp_stdio_server("s", &log);
    server["env"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "ZERO_TEST_MCP_READY", "value": ready}));
    let script = json!({"turns": [
        {"toolCalls": [{"id": "h1", "name": "mcp__s__hang", "arguments": {}}]},
        {"text": "back"}
    ]});
    let mut acp = Acp::start(scripted(&dir, script));
    acp.initialize();
    let created = acp.call("session/new", json!({"cwd": dir.work(), "mcpServers": [server]}));
    let session = created["sessionId"].as_str().unwrap().to_string();
    let id = acp.prompt(&session, "hang");
    // The server says when the call has reached it.
    let mut arrived = String::new();
    std::io::Read::read_to_string(&mut std::fs::File::open(&ready).unwrap(), &mut arrived).unwrap();
    acp.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let (response, before) = acp.response(id);
    assert_eq!(response["result"], json!({"stopReason": "cancelled"}));
    assert_eq!(updates(&before).last().unwrap()["status"], "failed");
    let seen: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let call = seen.iter().find(|m| m["method"] == "tools/call").unwrap();
    let cancel = seen.iter().find(|m| m["method"] == "notifications/cancelled");
    assert_eq!(cancel.map(|c| &c["params"]["requestId"]), Some(&call["id"]), "{seen:#?}");
    // The session goes on, its server still there.
    let id = acp.prompt(&session, "again");
    assert_eq!(acp.response(id).0["result"]["stopReason"], "end_turn");
    assert_eq!(acp.finish(), 0);
}
