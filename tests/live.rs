//! Live mode end to end: many turns over one stdin stream, tool
//! approvals answered by the client, input lines that are wrong, interrupts, and a live session
//! resumed by a later process. Each test drives the real binary line by line: it writes an
//! input line when the output shows zero is waiting for it.

use std::io::Write;
use std::process::{Child, ChildStdin};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{json, Value};

use crate::mock::{openai, Mock, Reply};
use crate::util::{alive, TestDir};

/// `zero exec` in live mode.
const LIVE: [&str; 6] = ["exec", "-i", "stream-json", "-o", "stream-json", "--live"];

/// How long a test waits for one line before it fails.
const LINE_WAIT: Duration = Duration::from_secs(20);

/// A running live process.
struct LiveRun {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    seen: Vec<Value>,
    args: Vec<String>,
}

impl LiveRun {
    fn start(zero: crate::util::Zero) -> LiveRun {
        let args = zero.args.clone();
        let zero = zero.stdin(Vec::new());
        let mut child = zero.spawn();
        let stdin = child.stdin.take();
        let lines = crate::util::stdout_lines(&mut child);
        LiveRun { child, stdin, lines, seen: Vec::new(), args }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    fn prompt(&mut self, content: &str) {
        self.send(&json!({"schemaVersion": 2, "type": "prompt", "content": content}).to_string());
    }

    fn answer(&mut self, request_id: &str, decision: &str) {
        self.send(
            &json!({"schemaVersion": 2, "type": "permission_response", "requestId": request_id, "decision": decision})
                .to_string(),
        );
    }

    /// Reads lines until one of type `kind`, which is returned.
    fn until(&mut self, kind: &str) -> Value {
        loop {
            let line = self.lines.recv_timeout(LINE_WAIT).unwrap_or_else(|_| {
                panic!("no {kind} line within {LINE_WAIT:?}; seen {:#?}", self.seen)
            });
            let event: Value = serde_json::from_str(&line).unwrap();
            self.seen.push(event.clone());
            if event["type"] == kind {
                return event;
            }
        }
    }

    /// Closes stdin and reads to the end; returns the exit code.
    fn finish(mut self) -> (i32, Vec<Value>) {
        self.stdin = None;
        while let Ok(line) = self.lines.recv_timeout(LINE_WAIT) {
            self.seen.push(serde_json::from_str(&line).unwrap());
        }
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        check(&self.seen, &self.args, code);
        (code, self.seen)
    }
}

/// The whole stream against `zero schema 2` and the strict live mirror, and the exit code
/// against `run_end`.
fn check(events: &[Value], args: &[String], code: i32) {
    let schema = crate::util::printed_schema(2);
    for event in events {
        crate::jsonschema::validate(schema, &schema["$defs"]["output"], event)
            .unwrap_or_else(|e| panic!("{e}: {event}"));
        crate::schema::check_line(&event.to_string()).unwrap_or_else(|e| panic!("{e}: {event}"));
    }
    crate::schema::check_live_sequence(events)
        .unwrap_or_else(|e| panic!("{e} ({args:?}):\n{events:#?}"));
    if let Some(end) = events.last() {
        assert_eq!(end["exitCode"], code, "run_end and the exit code differ ({args:?})");
    }
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// A live run of the scripted provider.
fn scripted(dir: &TestDir, script: Value, extra: &[&str]) -> crate::util::Zero {
    let path = dir.script(&script).display().to_string();
    dir.zero().args(&LIVE).args(&["--provider", "scripted", "--script", &path]).args(extra)
}

fn bash(id: &str, command: &str) -> Value {
    json!({"toolCalls": [{"id": id, "name": "bash", "arguments": {"command": command}}]})
}

#[test]
fn two_turns_share_one_conversation_and_one_session() {
    let dir = TestDir::new("live-turns");
    let mock = Mock::start(vec![
        Reply::sse(&openai::answer(&["Paris."], 10, 2)),
        Reply::sse(&openai::answer(&["About 2 million."], 20, 3)),
    ]);
    let zero = dir.zero().openai(&mock.v1(), "gpt-4o-mini").args(&LIVE);
    let mut live = LiveRun::start(zero);
    // run_start comes before any input.
    let start = live.until("run_start");
    live.prompt("Capital of France?");
    assert_eq!(
        live.until("turn_end"),
        json!({"schemaVersion": 2, "type": "turn_end", "runId": start["runId"], "seq": live.seen.last().unwrap()["seq"], "turn": 1, "status": "success"})
    );
    live.prompt("Its population?");
    live.until("turn_end");
    let (code, events) = live.finish();
    assert_eq!(code, 0);
    let finals: Vec<&str> =
        of_type(&events, "final").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(finals, ["Paris.", "About 2 million."]);
    let end = events.last().unwrap();
    assert_eq!((&end["status"], &end["exitCode"]), (&json!("success"), &json!(0)));
    // The second request carries the first exchange.
    let second = mock.requests()[1].json();
    let said: Vec<(&str, &str)> = second["messages"].as_array().unwrap()[1..]
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        said,
        [("user", "Capital of France?"), ("assistant", "Paris."), ("user", "Its population?")]
    );
    // One session holds both turns, named by the first.
    let id = start["sessionId"].as_str().unwrap();
    let meta = crate::util::read(&dir.sessions().join(id).join("metadata.json"));
    let meta: Value = serde_json::from_str(&meta).unwrap();
    assert_eq!(meta["title"], "Capital of France?");
    let events = crate::util::read(&dir.sessions().join(id).join("events.jsonl"));
    assert_eq!(events.matches("\"type\":\"turn_end\"").count(), 2);
    // A later live process resumes it.
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["Yes."], 30, 1))]);
    let zero = dir.zero().openai(&mock.v1(), "gpt-4o-mini").args(&LIVE).args(&["--resume", id]);
    let mut live = LiveRun::start(zero);
    live.prompt("Sure?");
    assert_eq!(live.until("turn_end")["turn"], 1, "turns count from 1 in each process");
    let (code, events) = live.finish();
    assert_eq!((code, events[0]["sessionId"].as_str()), (0, Some(id)));
    let body = mock.requests()[0].json();
    let roles: Vec<&str> =
        body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user", "assistant", "user"]);
}

#[test]
fn approvals_are_allowed_denied_timed_out_and_ended_by_end_of_input() {
    let dir = TestDir::new("live-approvals");
    let script = json!({"turns": [
        bash("allowed", "touch allowed"), {"text": "one"},
        bash("denied", "touch denied"), {"text": "two"},
        bash("late", "touch late"), {"text": "three"},
        bash("unanswered", "touch unanswered"), {"text": "four"},
    ]});
    let mut live = LiveRun::start(scripted(
        &dir,
        script,
        &["--approvals", "stdin", "--approval-timeout-ms", "300"],
    ));
    live.prompt("go");
    let request = live.until("permission_request");
    assert_eq!((&request["timeoutMs"], &request["id"]), (&json!(300), &json!("allowed")));
    // `perm_` and 12 random base-36 characters: no client can answer before it asks.
    let id = request["requestId"].as_str().unwrap();
    let random = id.strip_prefix("perm_").unwrap();
    assert!(
        random.len() == 12 && random.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()),
        "{id}"
    );
    live.answer(id, "allow");
    let decision = live.until("permission_decision");
    assert_eq!(
        (&decision["action"], &decision["decidedBy"], &decision["permissionGranted"]),
        (&json!("allow"), &json!("client"), &json!(true))
    );
    let result = live.until("tool_result");
    assert_eq!(result["status"], "ok");
    assert!(dir.path("work/allowed").exists());
    live.until("turn_end");
    // Denied, with the client's reason.
    live.prompt("again");
    let request = live.until("permission_request");
    live.send(&json!({"schemaVersion": 2, "type": "permission_response", "requestId": request["requestId"], "decision": "deny", "reason": "not on my machine"}).to_string());
    let decision = live.until("permission_decision");
    assert_eq!(
        (&decision["action"], &decision["decisionReason"], &decision["decidedBy"]),
        (&json!("deny"), &json!("not on my machine"), &json!("client"))
    );
    let result = live.until("tool_result");
    assert_eq!(
        (&result["status"], &result["meta"]),
        (&json!("error"), &json!({"permission": "denied"}))
    );
    assert_eq!(result["output"], "Error: Permission denied for bash: not on my machine");
    assert!(!dir.path("work/denied").exists());
    live.until("turn_end");
    // No answer within 300 ms: denied by the timeout; the late answer is then unknown.
    live.prompt("and again");
    let request = live.until("permission_request");
    let decision = live.until("permission_decision");
    assert_eq!(
        (&decision["action"], &decision["decidedBy"], &decision["decisionReason"]),
        (&json!("deny"), &json!("timeout"), &json!("No answer came within 300 ms."))
    );
    live.until("turn_end");
    live.answer(request["requestId"].as_str().unwrap(), "allow");
    let stray = live.until("error");
    assert_eq!(
        stray["message"],
        format!("Unexpected permission_response at line 6: requestId {} is not pending, no approval is; the line is ignored.", request["requestId"])
    );
    // The end of input while a request waits: denied by eof, then the process ends.
    live.prompt("last");
    live.until("permission_request");
    let (code, events) = live.finish();
    let decision = of_type(&events, "permission_decision").last().copied().cloned().unwrap();
    assert_eq!((&decision["decidedBy"], &decision["action"]), (&json!("eof"), &json!("deny")));
    assert_eq!(code, 0);
    assert!(!dir.path("work/late").exists() && !dir.path("work/unanswered").exists());
    assert_eq!(of_type(&events, "turn_end").len(), 4);
    // The session keeps every request and decision.
    let id = events[0]["sessionId"].as_str().unwrap();
    let journal = crate::util::read(&dir.sessions().join(id).join("events.jsonl"));
    assert_eq!(journal.matches("\"type\":\"permission_request\"").count(), 4);
    let decided: Vec<&str> = ["client", "client", "timeout", "eof"].to_vec();
    for by in decided {
        assert!(journal.contains(&format!("\"decidedBy\":\"{by}\"")), "{journal}");
    }
}

#[test]
fn allow_session_covers_later_calls_and_queued_prompts_run_next() {
    let dir = TestDir::new("live-session-grant");
    let script = json!({"turns": [
        bash("a", "echo one >> log"), bash("b", "echo two >> log"), {"text": "first"},
        {"text": "second"},
    ]});
    let args = ["--approvals", "stdin", "--heartbeat-ms", "100"];
    let mut live = LiveRun::start(scripted(&dir, script, &args));
    live.prompt("go");
    let request = live.until("permission_request");
    // While zero waits for the answer, heartbeats say so.
    let beat = live.until("heartbeat");
    assert_eq!((&beat["phase"], &beat["toolCallId"]), (&json!("approval"), &json!("a")));
    // A prompt sent while the approval waits is kept for the next turn; an answer to another
    // request is named and ignored.
    live.prompt("queued");
    live.answer("perm_7", "allow");
    assert_eq!(
        live.until("error")["message"],
        format!("Unexpected permission_response at line 3: requestId \"perm_7\" is not pending (the pending request is {}); the line is ignored.", request["requestId"])
    );
    // A flood of prompts meanwhile: 32 are kept (one is already), the rest refused by line.
    for i in 0..32 {
        live.prompt(&format!("flood {i}"));
    }
    let refused = live.until("error");
    assert_eq!(
        refused["message"],
        "The turn at line 35 is not kept: 32 turns already wait for this approval; the line is ignored."
    );
    live.answer(request["requestId"].as_str().unwrap(), "allow_session");
    live.until("turn_end");
    let second = live.until("turn_end");
    assert_eq!((&second["turn"], &second["status"]), (&json!(2), &json!("success")));
    let (code, events) = live.finish();
    // The 31 flood turns that were kept ran after it, on a script with nothing left to play:
    // each is a provider error, and the last one's exit code is the process's.
    let ends = of_type(&events, "turn_end");
    assert_eq!((ends.len(), &ends[32]["status"]), (33, &json!("error")));
    assert_eq!(code, 3);
    assert_eq!(crate::util::read(&dir.path("work/log")), "one\ntwo\n");
    // The second call has no request: the session grant decided it.
    assert_eq!(of_type(&events, "permission_request").len(), 1);
    let decisions = of_type(&events, "permission_decision");
    assert_eq!((&decisions[1]["id"], &decisions[1]["decidedBy"]), (&json!("b"), &json!("session")));
    let finals: Vec<&Value> = of_type(&events, "final").iter().map(|e| &e["text"]).collect();
    assert_eq!(finals, [&json!("first"), &json!("second")]);
}

#[test]
fn wrong_lines_are_named_and_skipped_and_a_line_that_is_not_json_ends_the_process() {
    let dir = TestDir::new("live-bad-lines");
    let script = json!({"turns": [{"text": "ok"}, {"text": "ok again"}]});
    let mut live = LiveRun::start(scripted(&dir, script, &[]));
    live.send(r#"{"schemaVersion":2,"type":"prompt","content":"x","extra":1}"#);
    let error = live.until("error");
    assert_eq!(
        (&error["code"], &error["message"]),
        (
            &json!("usage_error"),
            &json!(
                "Invalid stream-json input at line 1: extra: unknown field for a \"prompt\" event"
            )
        )
    );
    live.send(r#"{"schemaVersion":1,"type":"prompt","content":"x"}"#);
    assert_eq!(
        live.until("error")["message"],
        "Invalid stream-json input at line 2: schemaVersion: expected 2, got 1"
    );
    live.answer("perm_9", "allow");
    assert_eq!(live.until("error")["message"], "Unexpected permission_response at line 3: requestId \"perm_9\" is not pending, no approval is; the line is ignored.");
    live.prompt("still here?");
    assert_eq!(live.until("turn_end")["status"], "success");
    live.send("this is not json");
    let (code, events) = live.finish();
    assert_eq!(code, 2);
    let n = events.len();
    assert_eq!(
        events[n - 2]["message"],
        "Invalid stream-json input at line 5: expected a JSON object."
    );
    assert_eq!(
        (&events[n - 1]["status"], &events[n - 1]["exitCode"]),
        (&json!("error"), &json!(2))
    );
}

#[test]
fn sigint_interrupts_a_turn_and_a_second_one_ends_the_process() {
    let dir = TestDir::new("live-sigint");
    let script = json!({"turns": [
        bash("slow", "sleep 30 & echo $! > pid; wait"), {"text": "after"}, {"text": "never"},
    ]});
    let mut live = LiveRun::start(scripted(&dir, script, &["--auto", "high"]));
    live.prompt("sleep");
    live.until("tool_call");
    // The command has started once its pid file is there.
    let pid_file = dir.path("work/pid");
    let deadline = std::time::Instant::now() + LINE_WAIT;
    while !pid_file.exists() || crate::util::read(&pid_file).trim().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the command did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let sleeper: u32 = crate::util::read(&pid_file).trim().parse().unwrap();
    let interrupt = |pid: u32| {
        let sent = std::process::Command::new("kill").args(["-INT", &pid.to_string()]).status();
        assert!(sent.unwrap().success());
    };
    interrupt(live.child.id());
    let end = live.until("turn_end");
    assert_eq!(end["status"], "interrupted");
    let error = live.seen.iter().rev().find(|e| e["type"] == "error").cloned().unwrap();
    assert_eq!((&error["code"], &error["recoverable"]), (&json!("interrupted"), &json!(true)));
    assert!(crate::util::gone_within(sleeper, Duration::from_secs(5)), "the tool group survived");
    // The process goes on: the next turn runs.
    live.prompt("next");
    let next = live.until("turn_end");
    assert_eq!((&next["turn"], &next["status"]), (&json!(2), &json!("success")));
    // A SIGINT while waiting for input ends the process (stdin stays open until it has:
    // an end of input at the same moment could end it first, with the last turn's status).
    interrupt(live.child.id());
    live.until("run_end");
    let (code, events) = live.finish();
    assert_eq!(code, 130);
    let n = events.len();
    assert_eq!(
        (&events[n - 2]["code"], &events[n - 1]["status"]),
        (&json!("interrupted"), &json!("interrupted"))
    );
    assert!(!alive(sleeper));
}

#[test]
fn live_mode_is_refused_where_it_cannot_work() {
    let dir = TestDir::new("live-usage");
    let script = dir.script(&json!({"turns": [{"text": "x"}]})).display().to_string();
    let base = ["exec", "--provider", "scripted", "--script", &script];
    let cases: Vec<(Vec<&str>, u64, &str)> = vec![
        (vec!["-o", "stream-json", "--live"], 2, "--live needs -i stream-json and -o stream-json: turns arrive as input lines and each is answered with events."),
        (vec!["-i", "stream-json", "-o", "stream-json", "--live", "--schema-version", "1"], 1, "--live speaks stream-json schema 2; --schema-version 1 cannot be used with it."),
        (vec!["-i", "stream-json", "-o", "stream-json", "--approvals", "stdin"], 1, "--approvals stdin needs --live: the answers are read from the live input stream."),
        (vec!["-i", "stream-json", "-o", "stream-json", "--live", "--approvals", "tty"], 2, "Invalid --approvals value \"tty\". Expected \"stdin\"."),
        (vec!["-i", "stream-json", "-o", "stream-json", "--live", "--image", "a.png"], 2, "--image cannot be used with --live: send images in the turns' message lines."),
    ];
    for (extra, version, message) in cases {
        let mut args = base.to_vec();
        args.extend(extra);
        let out = dir.zero().args(&args).stdin("").run();
        out.assert_code(2);
        let events = out.events();
        assert_eq!(out.types(), ["error", "run_end"], "{out:?}");
        assert_eq!(
            (events[0]["schemaVersion"].as_u64(), events[0]["message"].as_str()),
            (Some(version), Some(message))
        );
    }
    // No input at all: run_start, then the end with success.
    let out = dir
        .zero()
        .args(&base)
        .args(&["-i", "stream-json", "-o", "stream-json", "--live"])
        .stdin("")
        .run();
    out.assert_code(0);
    assert_eq!(out.types(), ["run_start", "run_end"]);
}

#[test]
fn the_readme_exchange_is_what_zero_writes() {
    let readme =
        crate::util::read(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    let block = readme.split("### An example exchange").nth(1).unwrap();
    let block = block.split("```text\n").nth(1).unwrap().split("```").next().unwrap();
    let dir = TestDir::new("live-readme");
    let script = format!("{}/scripts/live_demo.json", env!("CARGO_MANIFEST_DIR"));
    let zero = dir.zero().args(&[
        "exec",
        "--live",
        "--approvals",
        "stdin",
        "-i",
        "stream-json",
        "-o",
        "stream-json",
        "--provider",
        "scripted",
        "--script",
        &script,
        "--ephemeral",
    ]);
    let mut live = LiveRun::start(zero);
    // What differs from run to run.
    let steady = |mut v: Value| {
        for key in ["runId", "cwd", "durationMs", "requestId"] {
            if v.get(key).is_some() {
                v[key] = json!("-");
            }
        }
        // What the sandbox enforces depends on the kernel.
        if v.pointer("/sandbox/enforcement").is_some() {
            v["sandbox"]["enforcement"] = json!("-");
        }
        v
    };
    let mut shown = 0;
    for line in block.lines() {
        if line.starts_with("→ (end of input") {
            live.stdin = None;
        } else if let Some(input) = line.strip_prefix("→ ") {
            // An answer names the request id zero wrote, which is new on every run.
            let mut input: Value = serde_json::from_str(input).unwrap();
            if input.get("requestId").is_some() {
                let asked = live.seen.iter().rev().find(|e| e["type"] == "permission_request");
                input["requestId"] = asked.unwrap()["requestId"].clone();
            }
            live.send(&input.to_string());
        } else if let Some(output) = line.strip_prefix("← ") {
            let expected: Value = serde_json::from_str(output).unwrap();
            let kind = expected["type"].as_str().unwrap();
            let got = live.until(kind);
            assert_eq!(steady(got), steady(expected), "line {} of the README exchange", shown + 1);
            assert_eq!(live.seen.len(), shown + 1, "a line the README does not show came first");
            shown += 1;
        } else {
            panic!("a README exchange line is neither input nor output: {line}");
        }
    }
    let (code, events) = live.finish();
    assert_eq!((code, events.len()), (0, shown));
}

#[test]
fn a_second_sigint_within_two_seconds_or_a_sigterm_ends_the_process() {
    let kill = |signal: &str, pid: u32| {
        let sent = std::process::Command::new("kill").args([signal, &pid.to_string()]).status();
        assert!(sent.unwrap().success());
    };
    for second in [true, false] {
        let dir = TestDir::new("live-second-signal");
        let script = json!({"turns": [bash("slow", "sleep 30"), {"text": "never"}]});
        let mut live = LiveRun::start(scripted(&dir, script, &["--auto", "high"]));
        live.prompt("sleep");
        live.until("tool_call");
        let pid = live.child.id();
        if second {
            // The first is seen to stop the turn (two signals sent at once can merge into one).
            kill("-INT", pid);
            assert_eq!(live.until("error")["code"], "interrupted");
            kill("-INT", pid);
        } else {
            kill("-TERM", pid);
        }
        live.until("run_end");
        let (code, events) = live.finish();
        assert_eq!(code, 130, "second SIGINT: {second}");
        let end = events.last().unwrap();
        assert_eq!((&end["status"], &end["exitCode"]), (&json!("interrupted"), &json!(130)));
        assert!(of_type(&events, "turn_end").len() <= 1);
    }
}

#[test]
fn the_exit_code_is_the_last_turns() {
    let dir = TestDir::new("live-exit");
    let looping = json!({"toolCalls": [{"name": "glob", "arguments": {"pattern": "*"}}]});
    let script = json!({"turns": [{"text": "fine"}, looping]});
    let mut live = LiveRun::start(scripted(&dir, script, &["--max-turns", "1"]));
    live.prompt("one");
    assert_eq!(live.until("turn_end")["status"], "success");
    live.prompt("two");
    assert_eq!(live.until("turn_end")["status"], "incomplete");
    let (code, events) = live.finish();
    assert_eq!((code, &events.last().unwrap()["exitCode"]), (4, &json!(4)));
    // The session keeps why the turn failed.
    let id = events[0]["sessionId"].as_str().unwrap();
    let journal = crate::util::read(&dir.sessions().join(id).join("events.jsonl"));
    assert!(journal.contains("\"code\":\"incomplete\""), "{journal}");
}

#[test]
fn a_long_conversation_keeps_its_newest_exchanges_within_the_context() {
    let dir = TestDir::new("live-budget");
    let mock = Mock::start(vec![
        Reply::sse(&openai::answer(&["one"], 10, 1)),
        Reply::sse(&openai::answer(&["two"], 10, 1)),
        Reply::sse(&openai::answer(&["three"], 10, 1)),
    ]);
    let zero = dir.zero().openai(&mock.v1(), "local-coder").args(&LIVE);
    let mut live = LiveRun::start(zero);
    // An unknown model gets 128,000 tokens of context: half of it, about 256 KB, is history.
    for turn in ["a", "b"] {
        live.prompt(&turn.repeat(150_000));
        live.until("turn_end");
    }
    live.prompt("short");
    live.until("turn_end");
    let (code, _) = live.finish();
    assert_eq!(code, 0);
    let third = mock.requests()[2].json();
    let users: Vec<usize> = third["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().len())
        .collect();
    assert_eq!(users, [150_000, 5], "the oldest exchange is left out, the newest kept");
}

#[test]
fn an_answer_written_before_its_request_approves_nothing() {
    let dir = TestDir::new("live-forged");
    let script = json!({"turns": [bash("forged", "touch forged"), {"text": "done"}]});
    let args = ["--approvals", "stdin", "--approval-timeout-ms", "500"];
    let mut live = LiveRun::start(scripted(&dir, script, &args));
    // A hostile client (or a replayed transcript) answers before zero has asked, guessing the
    // id an old zero would have used.
    live.prompt("go");
    live.answer("perm_1", "allow");
    let request = live.until("permission_request");
    let error = live.until("error");
    assert_eq!(
        error["message"],
        format!("Unexpected permission_response at line 2: requestId \"perm_1\" is not pending (the pending request is {}); the line is ignored.", request["requestId"])
    );
    let decision = live.until("permission_decision");
    assert_eq!((&decision["action"], &decision["decidedBy"]), (&json!("deny"), &json!("timeout")));
    live.until("turn_end");
    let (code, _) = live.finish();
    assert_eq!(code, 0);
    assert!(!dir.path("work/forged").exists(), "a forged approval ran the command");
}

#[test]
fn sigint_during_an_approval_cancels_it_and_every_call_of_the_turn_gets_a_result() {
    let dir = TestDir::new("live-cancel");
    let two_calls = vec![
        openai::call_start(0, "ask", "bash"),
        openai::call_args(0, r#"{"command":"touch ran"}"#),
        openai::call_start(1, "later", "read_file"),
        openai::call_args(1, r#"{"path":"notes.txt"}"#),
        openai::finish("tool_calls"),
        openai::usage(10, 5),
        openai::done(),
    ];
    let mock = Mock::start(vec![
        Reply::sse(&two_calls),
        Reply::sse(&openai::answer(&["Next turn."], 20, 3)),
    ]);
    dir.write("work/notes.txt", "hello\n");
    let zero =
        dir.zero().openai(&mock.v1(), "gpt-4o-mini").args(&LIVE).args(&["--approvals", "stdin"]);
    let mut live = LiveRun::start(zero);
    live.prompt("go");
    live.until("permission_request");
    let pid = live.child.id().to_string();
    let sent = std::process::Command::new("kill").args(["-INT", &pid]).status();
    assert!(sent.unwrap().success());
    let end = live.until("turn_end");
    assert_eq!(end["status"], "interrupted");
    let turn: Vec<&Value> = live
        .seen
        .iter()
        .filter(|e| {
            matches!(e["type"].as_str(), Some("permission_decision" | "tool_result" | "error"))
        })
        .collect();
    assert_eq!(
        (&turn[0]["action"], &turn[0]["decidedBy"], &turn[0]["permissionGranted"]),
        (&json!("cancel"), &json!("interrupt"), &json!(false))
    );
    let results: Vec<(&Value, &Value, &Value, &Value)> =
        turn[1..3].iter().map(|r| (&r["id"], &r["status"], &r["output"], &r["meta"])).collect();
    assert_eq!(
        results,
        [
            (
                &json!("ask"),
                &json!("error"),
                &json!("The call was interrupted."),
                &json!({"permission": "cancelled"})
            ),
            (&json!("later"), &json!("error"), &json!("The call was interrupted."), &Value::Null),
        ]
    );
    assert_eq!(turn[3]["code"], "interrupted");
    assert!(!dir.path("work/ran").exists());
    // The conversation stays valid: the next request answers both calls.
    live.prompt("next");
    let next = live.until("turn_end");
    assert_eq!((&next["turn"], &next["status"]), (&json!(2), &json!("success")));
    let (code, _) = live.finish();
    assert_eq!(code, 0);
    let second = mock.requests()[1].json();
    let answered: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(answered, ["ask", "later"], "{second}");
}

#[test]
fn with_approvals_bash_can_run_so_its_environment_flags_are_not_ignored() {
    let dir = TestDir::new("live-shell-env");
    let script =
        json!({"turns": [bash("env", "printf %s \"$MY_API_KEY\" | wc -c"), {"text": "done"}]});
    let zero = scripted(&dir, script, &["--approvals", "stdin", "--shell-env", "inherit"]);
    let mut live = LiveRun::start(zero.env("MY_API_KEY", "abcdefghijk"));
    live.prompt("go");
    let request = live.until("permission_request");
    live.answer(request["requestId"].as_str().unwrap(), "allow");
    let result = live.until("tool_result");
    // The secret is redacted from the output, but its length shows bash was given it.
    assert_eq!(result["output"], "stdout:\n11\nExit code: 0");
    live.until("turn_end");
    let (code, events) = live.finish();
    assert_eq!(code, 0);
    assert_eq!(of_type(&events, "warning"), Vec::<&Value>::new());
}

#[test]
fn mcp_servers_serve_every_turn_with_approvals_and_interrupts() {
    let dir = TestDir::new("live-mcp");
    let log = dir.path("server.log");
    let ready = dir.path("ready");
    assert!(std::process::Command::new("mkfifo").arg(&ready).status().unwrap().success());
    let mut entry = crate::mcp_server::stdio_entry("", &log);
    entry["env"]["ZERO_TEST_MCP_READY"] = json!(ready);
    let config = json!({"mcpServers": {"s": entry}}).to_string();
    let call = |id: &str, tool: &str, args: Value| json!({"id": id, "name": format!("mcp__s__{tool}"), "arguments": args});
    let script = json!({"turns": [
        {"toolCalls": [call("t1", "touch", json!({"path": "one.txt"})), call("t2", "touch", json!({"path": "two.txt"}))]},
        {"text": "first"},
        {"toolCalls": [call("h", "hang", json!({}))]},
        {"toolCalls": [call("e", "echo", json!({"text": "still here"}))]},
        {"text": "third"},
    ]});
    let args = ["--approvals", "stdin", "--mcp-config", &config];
    let mut live = LiveRun::start(scripted(&dir, script, &args));
    assert_eq!(live.until("mcp_server")["status"], "ready");
    // Turn 1: the tool without a read-only hint is asked about; allow_session covers the next.
    live.prompt("touch");
    let request = live.until("permission_request");
    assert_eq!(
        (&request["name"], &request["sideEffect"]),
        (&json!("mcp__s__touch"), &json!("unknown"))
    );
    live.answer(request["requestId"].as_str().unwrap(), "allow_session");
    assert_eq!(live.until("turn_end")["status"], "success");
    // Turn 2: an interrupt during the call cancels it on the server, and ends only the turn.
    live.prompt("hang");
    assert_eq!(crate::util::read(&ready), "ready\n");
    let sent =
        std::process::Command::new("kill").args(["-INT", &live.child.id().to_string()]).status();
    assert!(sent.unwrap().success());
    assert_eq!(live.until("turn_end")["status"], "interrupted");
    // Turn 3: the same server process answers.
    live.prompt("echo");
    assert_eq!(live.until("turn_end")["status"], "success");
    let (code, events) = live.finish();
    assert_eq!(code, 0);
    let decisions: Vec<(&Value, &Value)> = of_type(&events, "permission_decision")
        .iter()
        .map(|d| (&d["id"], &d["decidedBy"]))
        .collect();
    assert_eq!(decisions, [(&json!("t1"), &json!("client")), (&json!("t2"), &json!("session"))]);
    let results: Vec<(&Value, &Value)> =
        of_type(&events, "tool_result").iter().map(|r| (&r["id"], &r["output"])).collect();
    assert_eq!(results[0], (&json!("t1"), &json!("created one.txt")));
    assert_eq!(results[2].0, &json!("h"));
    assert_eq!(results[3], (&json!("e"), &json!("echo: still here")));
    assert!(dir.path("work/one.txt").exists() && dir.path("work/two.txt").exists());
    let seen: Vec<Value> =
        crate::util::read(&log).lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(
        seen.iter().filter(|m| m["method"] == "initialize").count(),
        1,
        "one server for the process"
    );
    let hang = seen.iter().find(|m| m["params"]["name"] == "hang").unwrap();
    let cancel =
        seen.iter().find(|m| m["method"] == "notifications/cancelled").expect("a cancellation");
    assert_eq!(
        cancel["params"],
        json!({"requestId": hang["id"], "reason": "interrupted by the user"})
    );
    let pid: u32 =
        crate::util::read(&log).lines().next().unwrap().trim_start_matches("pid ").parse().unwrap();
    assert!(crate::util::gone_within(pid, Duration::from_secs(5)), "the server outlived zero");
}

#[test]
fn sigint_during_a_command_gives_its_output_so_far_then_the_interruption() {
    let dir = TestDir::new("live-bash-interrupt");
    // In the workspace: the command writes it from inside bash's sandbox.
    let started = dir.path("work/started.fifo");
    crate::util::mkfifo(&started);
    let command = format!("echo partial; echo oops >&2; echo > {}; sleep 60", started.display());
    let args = serde_json::to_string(&json!({"command": command})).unwrap();
    let mock = Mock::start(vec![
        Reply::sse(&openai::tool_turn("run", "bash", &args)),
        Reply::sse(&openai::answer(&["Next turn."], 20, 3)),
    ]);
    let zero = dir.zero().openai(&mock.v1(), "gpt-4o-mini").args(&LIVE).args(&["--auto", "high"]);
    let mut live = LiveRun::start(zero);
    live.prompt("go");
    // The command has written its first lines and waits.
    let mut said = String::new();
    std::io::Read::read_to_string(&mut std::fs::File::open(&started).unwrap(), &mut said).unwrap();
    let pid = live.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let result = live.until("tool_result");
    assert_eq!(
        (&result["status"], &result["output"]),
        (&json!("error"), &json!("stdout:\npartial\nstderr:\noops\nThe call was interrupted."))
    );
    assert_eq!(live.until("turn_end")["status"], "interrupted");
    // The process ends with its last turn's code.
    let (code, _) = live.finish();
    assert_eq!(code, 130);
}

#[test]
fn a_prompt_too_large_for_the_window_is_refused_and_the_next_turn_runs() {
    let dir = TestDir::new("live-huge-prompt");
    let zero = scripted(&dir, json!({"turns": [{"text": "small answer"}]}), &["-m", "gpt-4.1"]);
    let mut live = LiveRun::start(zero);
    live.until("run_start");
    live.prompt(&"x".repeat(5 << 20));
    let refused = live.until("error");
    assert_eq!(refused["code"], "usage_error");
    assert!(refused["message"].as_str().unwrap().starts_with("The prompt does not fit"));
    live.prompt("small");
    let end = live.until("turn_end");
    assert_eq!((&end["turn"], &end["status"]), (&json!(1), &json!("success")));
    let (code, _) = live.finish();
    assert_eq!(code, 0);
}
