//! zero under hostile input and in real environments: secrets that reach no file in any
//! spelling, session locks a dead process cannot hold, processes that cannot outlive their
//! call, memory that stays bounded, endings that stay well-formed, a terminal that cannot be
//! driven, and a shell that does not get the keys.

use std::io::{BufReader, Read, Write};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::mock::{openai, Mock, Reply, Step};
use crate::redaction::{API_KEY, SHAPED};
use crate::util::{assert_no_piece_of, gone_within, mkfifo, read, read_until, Output, TestDir};

/// A run of the scripted provider with `args`, tools allowed.
fn scripted(dir: &TestDir, script: &Value, args: &[&str]) -> Output {
    let path = dir.script(script);
    dir.zero()
        .args(&["exec", "--skip-permissions-unsafe", "--provider", "scripted", "--script"])
        .args(&[path.to_str().unwrap()])
        .args(args)
        .run()
}

/// A first turn calling `calls`, then an answer.
fn calls_then_done(calls: Value) -> Value {
    json!({"turns": [{"toolCalls": calls}, {"text": "done"}]})
}

fn tool_results(out: &Output) -> Vec<Value> {
    out.stream().into_iter().filter(|e| e["type"] == "tool_result").collect()
}

/// Everything a session left on disk.
fn session_files(dir: &TestDir, id: &str) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir.sessions().join(id)).unwrap() {
        all.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default());
    }
    all
}

/// `secret` with its first character written as a JSON `\u` escape.
fn escaped(secret: &str) -> String {
    let first = secret.chars().next().unwrap();
    format!("\\u{:04x}{}", first as u32, &secret[first.len_utf8()..])
}

// --- Redaction -------------------------------------------------------------------------------

#[test]
fn a_key_is_recognised_whatever_byte_precedes_it() {
    let dir = TestDir::new("shape-anywhere");
    // `\n` and `\t` written as text inside JSON, an ANSI colour, `%20`, `_`, a letter.
    let befores = ["\\n", "\\t", "\u{1b}[31m", "%20", "_", "x"];
    let lines: String =
        befores.iter().map(|b| format!("{{\"v\":\"line{b}{SHAPED}\"}}\n")).collect();
    let out = dir.zero().args(&["redact"]).stdin(lines.clone()).run();
    out.assert_code(0);
    assert_no_piece_of(&out.stdout, SHAPED, "zero redact");
    assert_eq!(out.stdout.matches("[REDACTED]\"}").count(), befores.len(), "{out:?}");
    // The same through read_file of a JSON file and coloured bash output.
    dir.write("work/data.json", &lines);
    let colour = format!("printf '\\033[31m%s\\033[0m\\n' {SHAPED}");
    let out = scripted(
        &dir,
        &calls_then_done(json!([
            {"name": "read_file", "arguments": {"path": "data.json"}},
            {"name": "bash", "arguments": {"command": colour}},
        ])),
        &["-o", "stream-json", "look"],
    );
    out.assert_code(0);
    assert_no_piece_of(&out.stdout, SHAPED, "stream-json");
    let results = tool_results(&out);
    assert_eq!(results[0]["output"].as_str().unwrap().matches("[REDACTED]").count(), 6);
    assert!(results[1]["output"].as_str().unwrap().contains("\u{1b}[31m[REDACTED]"));
}

#[test]
fn tool_call_arguments_are_redacted_decoded_in_every_output_and_file() {
    let dir = TestDir::new("args-decoded");
    let token = "tok-AAAA-1111-bbbb-2222";
    let named = "plain-value-4242-named";
    // The model writes its arguments as JSON text: a key on its own line (`\n`), and keys
    // spelled with `\u` escapes, which decode to the exact secrets.
    let content = format!(
        "line one\\n{SHAPED}\\n{}\\n{}\\n{}\\n",
        escaped(SHAPED),
        escaped(token),
        escaped(named)
    );
    let arguments = format!("{{\"path\":\"notes.txt\",\"content\":\"{content}\"}}");
    let script = calls_then_done(json!([{"name": "write_file", "arguments": arguments}]));
    let path = dir.script(&script);
    let mut written = String::new();
    let mut ids = Vec::new();
    for format in ["json", "stream-json", "text"] {
        let out = dir
            .zero()
            .env("DEPLOY_SERVICE_TOKEN", token)
            .env("PLAIN_SETTING", named)
            .args(&["exec", "-o", format, "--redact-env", "PLAIN_SETTING", "--script"])
            .args(&[path.to_str().unwrap(), "write it"])
            .run();
        out.assert_code(0);
        written.push_str(&out.stdout);
        written.push_str(&out.stderr);
        if format == "stream-json" {
            ids.push(out.stream()[0]["sessionId"].as_str().unwrap().to_string());
        }
    }
    let id = &ids[0];
    for show in [&["sessions", "show", id.as_str()][..], &["sessions", "show", id, "--json"]] {
        let out = dir.zero().args(show).run();
        out.assert_code(0);
        written.push_str(&out.stdout);
    }
    written.push_str(&session_files(&dir, id));
    for secret in [SHAPED, token, named] {
        assert_no_piece_of(&written, secret, "outputs and session files");
    }
    assert!(written.contains("[REDACTED]"));
}

#[test]
fn a_session_stored_by_an_older_zero_is_shown_redacted() {
    // Older versions stored argument text as the model wrote it, escapes and all.
    let dir = TestDir::new("old-session");
    let id = "zero_20261101000000_old00000";
    let arguments = format!("{{\"content\":\"{}\"}}", escaped(SHAPED));
    let event = json!({"id": format!("{id}:1"), "sessionId": id, "sequence": 1, "type": "message",
        "createdAt": "2026-11-01T00:00:00.000Z", "payload": {"role": "assistant", "content": "",
        "toolCalls": [{"id": "c1", "name": "write_file", "arguments": arguments}]}});
    let meta = json!({"sessionId": id, "createdAt": "2026-11-01T00:00:00.000Z",
        "updatedAt": "2026-11-01T00:00:00.000Z", "eventCount": 1});
    dir.write(&format!("data/zero/sessions/{id}/events.jsonl"), &format!("{event}\n"));
    dir.write(&format!("data/zero/sessions/{id}/metadata.json"), &meta.to_string());
    for args in [&["sessions", "show", id][..], &["sessions", "show", id, "--json"]] {
        let out = dir.zero().args(args).run();
        out.assert_code(0);
        assert_no_piece_of(&out.stdout, SHAPED, "zero sessions show");
    }
    let out = dir.zero().args(&["sessions", "show", id, "--json"]).run();
    let shown: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let arguments = shown["events"][0]["payload"]["toolCalls"][0]["arguments"].as_str().unwrap();
    assert_eq!(arguments, r#"{"content":"[REDACTED]"}"#);
}

#[test]
fn the_exact_api_key_escaped_in_arguments_is_redacted() {
    let dir = TestDir::new("args-api-key");
    let arguments = format!("{{\"path\":\"k.txt\",\"content\":\"{}\"}}", escaped(API_KEY));
    for format in ["json", "stream-json"] {
        let mock = Mock::start(vec![
            Reply::sse(&openai::tool_turn("c1", "write_file", &arguments)),
            Reply::sse(&openai::answer(&["ok"], 1, 1)),
        ]);
        let out = dir
            .zero()
            .openai_keyed(&mock.v1(), API_KEY, "local-coder")
            .args(&["exec", "-o", format, "hi"])
            .run();
        out.assert_code(0);
        assert_no_piece_of(&out.stdout, API_KEY, format);
    }
    let mut stored = String::new();
    for entry in std::fs::read_dir(dir.sessions()).unwrap() {
        let id = entry.unwrap().file_name().to_string_lossy().into_owned();
        stored.push_str(&session_files(&dir, &id));
    }
    assert_no_piece_of(&stored, API_KEY, "the session files");
}

#[test]
fn a_long_tool_call_id_is_redacted_before_it_is_cut() {
    let dir = TestDir::new("long-id");
    let id = format!("call-{}-{SHAPED}", "a".repeat(100));
    let out = scripted(
        &dir,
        &calls_then_done(json!([{"id": id, "name": "glob", "arguments": {"pattern": "*"}}])),
        &["-o", "stream-json", "go"],
    );
    out.assert_code(0);
    assert_no_piece_of(&out.stdout, SHAPED, "stream-json");
    let events = out.stream();
    let call = events.iter().find(|e| e["type"] == "tool_call").unwrap();
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(call["id"], result["id"], "the call and its result still pair up");
}

#[test]
fn a_short_api_key_echoed_in_an_error_is_redacted() {
    for format in ["stream-json", "json", "text"] {
        let dir = TestDir::new("short-key");
        let body = r#"{"error":{"message":"Incorrect API key provided: sk-1234. Check it."}}"#;
        let mock = Mock::start(vec![Reply::status(401, "application/json", body)]);
        let out = dir
            .zero()
            .openai_keyed(&mock.v1(), "sk-1234", "local-coder")
            .args(&["exec", "-o", format, "hi"])
            .run();
        out.assert_code(3);
        let all = format!("{}{}", out.stdout, out.stderr);
        assert!(!all.contains("sk-1234"), "{out:?}");
        assert!(all.contains("Incorrect API key provided: [REDACTED]."), "{out:?}");
    }
}

// --- Session locks ---------------------------------------------------------------------------

/// A finished first session; returns its id.
fn a_session(dir: &TestDir) -> String {
    let out = scripted(dir, &json!({"turns": [{"text": "first"}]}), &["-o", "stream-json", "one"]);
    out.assert_code(0);
    out.stream()[0]["sessionId"].as_str().unwrap().to_string()
}

fn resume(dir: &TestDir, id: &str, text: &str) -> crate::util::Zero {
    resume_playing(dir, id, text, &json!({"turns": [{"text": text}]}))
}

fn resume_playing(dir: &TestDir, id: &str, name: &str, script: &Value) -> crate::util::Zero {
    let path = dir.write(&format!("resume-{name}.json"), &script.to_string());
    dir.zero()
        .args(&["exec", "-o", "stream-json", "--resume", id, "--script"])
        .args(&[path.to_str().unwrap(), "again"])
}

fn sequences(dir: &TestDir, id: &str) -> Vec<u64> {
    read(&dir.sessions().join(id).join("events.jsonl"))
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["sequence"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_lock_file_naming_a_live_pid_does_not_block_a_resume() {
    // As after a run in a container where zero was PID 1: the pid in the file is alive.
    let dir = TestDir::new("lock-pid1");
    let id = a_session(&dir);
    std::fs::write(dir.sessions().join(&id).join("lock"), "1\n").unwrap();
    let out = resume(&dir, &id, "second").run();
    out.assert_code(0);
    assert_eq!(out.text(), "second");
}

#[test]
fn a_lock_that_cannot_be_taken_fails_at_once_with_a_usage_error() {
    let dir = TestDir::new("lock-dir");
    let id = a_session(&dir);
    let lock = dir.sessions().join(&id).join("lock");
    let _ = std::fs::remove_file(&lock);
    std::fs::create_dir(&lock).unwrap();
    let out = resume(&dir, &id, "second").run();
    out.assert_code(2);
    let error = &out.stream()[0];
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&id) && message.contains("cannot be locked"), "{out:?}");
}

#[test]
fn concurrent_resumes_wait_fail_with_the_session_named_and_never_share_a_sequence() {
    let dir = TestDir::new("lock-concurrent");
    let id = a_session(&dir);
    // The first resume holds the session while its bash call waits for the test.
    let gate = dir.path("work/gate");
    mkfifo(&gate);
    let hold = dir.script(&json!({"turns": [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "cat gate"}}]},
        {"text": "held"}
    ]}));
    let mut holder = dir
        .zero()
        .args(&["exec", "-o", "stream-json", "--skip-permissions-unsafe", "--resume", &id])
        .args(&["--script", hold.to_str().unwrap(), "hold"])
        .spawn();
    let mut holder_out = BufReader::new(holder.stdout.take().unwrap());
    // The tool call is written once the session is open and locked.
    read_until(&mut holder_out, "\"tool_call\"");
    let waiters: Vec<_> = (0..3)
        .map(|i| {
            let run = resume(&dir, &id, &format!("waiter{i}"));
            std::thread::spawn(move || run.run())
        })
        .collect();
    for waiter in waiters {
        let out = waiter.join().unwrap();
        out.assert_code(2);
        let message = out.stream()[0]["message"].as_str().unwrap().to_string();
        assert!(message.contains(&format!("Zero session {id} is in use")), "{out:?}");
    }
    std::fs::OpenOptions::new().write(true).open(&gate).unwrap().write_all(b"go\n").unwrap();
    let mut rest = String::new();
    holder_out.read_to_string(&mut rest).unwrap();
    assert_eq!(holder.wait().unwrap().code(), Some(0), "{rest}");
    resume(&dir, &id, "after").run().assert_code(0);
    let seq = sequences(&dir, &id);
    assert_eq!(seq, (1..=seq.len() as u64).collect::<Vec<_>>(), "sequences are 1..n, once each");
}

#[test]
fn resumes_started_together_after_a_finished_run_never_share_a_sequence() {
    let dir = TestDir::new("lock-together");
    let id = a_session(&dir);
    // A model slow enough that the runs overlap; each round starts after a finished run, as
    // every resume does.
    let slow = json!({"turns": [{"text": ["a", "b", "c"], "delayMs": 100}]});
    for round in 0..3 {
        let runs: Vec<_> = (0..5)
            .map(|i| {
                let run = resume_playing(&dir, &id, &format!("together{round}-{i}"), &slow);
                std::thread::spawn(move || run.run())
            })
            .collect();
        for run in runs {
            let out = run.join().unwrap();
            match out.code {
                0 => assert_eq!(out.text(), "abc"),
                2 => assert!(out.stderr.is_empty() && out.stdout.contains("is in use"), "{out:?}"),
                _ => panic!("unexpected ending{out:?}"),
            }
        }
    }
    let seq = sequences(&dir, &id);
    assert_eq!(seq, (1..=seq.len() as u64).collect::<Vec<_>>(), "sequences are 1..n, once each");
}

// --- Processes -------------------------------------------------------------------------------

#[test]
fn a_daemon_started_by_bash_does_not_outlive_the_call() {
    let dir = TestDir::new("daemon");
    let command =
        "setsid sh -c 'echo $$ > daemon.pid; exec sleep 60' >/dev/null 2>&1 </dev/null & \
                   while [ ! -s daemon.pid ]; do sleep 0.01; done; echo started";
    let out = scripted(
        &dir,
        &calls_then_done(json!([{"name": "bash", "arguments": {"command": command}}])),
        &["-o", "stream-json", "go"],
    );
    out.assert_code(0);
    assert!(tool_results(&out)[0]["output"].as_str().unwrap().contains("started"));
    let pid: u32 = read(&dir.path("work/daemon.pid")).trim().parse().unwrap();
    assert!(gone_within(pid, Duration::from_secs(5)), "the setsid daemon {pid} survived");
}

#[test]
fn a_timeout_holds_when_a_daemon_keeps_the_output_pipe() {
    let dir = TestDir::new("daemon-pipe");
    let command = "setsid sleep 30 & sleep 30";
    let out = scripted(
        &dir,
        &calls_then_done(
            json!([{"name": "bash", "arguments": {"command": command, "timeout_ms": 1000}}]),
        ),
        &["-o", "stream-json", "go"],
    );
    out.assert_code(0);
    assert!(tool_results(&out)[0]["output"]
        .as_str()
        .unwrap()
        .starts_with("Error: Command timed out after 1000 ms"));
    // A deadline, not a speed: before the fix the call waited for the daemon's 30 s.
    assert!(out.elapsed < Duration::from_secs(15), "took {:?}", out.elapsed);
}

#[test]
fn a_provider_command_that_leaves_a_daemon_does_not_hold_the_run() {
    let dir = TestDir::new("command-daemon");
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["hello"], 1, 1))]);
    let command = format!(
        "setsid sleep 30 & echo '{{\"provider\":\"openai-compatible\",\"base_url\":\"{}\",\"model\":\"m\"}}'",
        mock.v1()
    );
    let out = dir.zero().env("ZERO_PROVIDER_COMMAND", &command).args(&["exec", "hi"]).run();
    out.assert_code(0);
    assert_eq!(out.stdout, "hello\n");
    assert!(out.elapsed < Duration::from_secs(15), "took {:?}", out.elapsed);
}

/// Sends a signal (`-HUP`, `-INT`) to a process.
fn signal(pid: u32, signal: &str) {
    assert!(Command::new("kill").args([signal, &pid.to_string()]).status().unwrap().success());
}

#[test]
fn sighup_ends_the_run_like_sigterm() {
    let dir = TestDir::new("sighup");
    let gate = dir.path("work/gate");
    mkfifo(&gate);
    let script = dir.script(&calls_then_done(json!([
        {"name": "bash", "arguments": {"command": "sleep 60 & echo $! > child.pid; cat gate"}}
    ])));
    let mut child = dir
        .zero()
        .args(&["exec", "-o", "stream-json", "--skip-permissions-unsafe", "--script"])
        .args(&[script.to_str().unwrap(), "go"])
        .spawn();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut stdout, "\"tool_call\"");
    let pid_file = dir.path("work/child.pid");
    let started = std::time::Instant::now();
    while !pid_file.exists() || read(&pid_file).trim().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(10), "the command never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let sleeper: u32 = read(&pid_file).trim().parse().unwrap();
    signal(child.id(), "-HUP");
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let ending: Vec<Value> = rest.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let n = ending.len();
    assert_eq!(ending[n - 2]["code"], "interrupted", "{rest}");
    assert_eq!(
        (ending[n - 1]["type"].as_str(), ending[n - 1]["exitCode"].as_u64()),
        (Some("run_end"), Some(130))
    );
    assert!(gone_within(sleeper, Duration::from_secs(5)), "the tool's child survived SIGHUP");
}

#[test]
fn text_mode_writes_nothing_after_the_interrupted_row() {
    let dir = TestDir::new("text-interrupt");
    let gate = dir.path("work/gate");
    mkfifo(&gate);
    let script = dir.script(&calls_then_done(json!([
        {"name": "bash", "arguments": {"command": "cat gate"}}
    ])));
    let mut child = dir
        .zero()
        .args(&["exec", "--skip-permissions-unsafe", "--script"])
        .args(&[script.to_str().unwrap(), "go"])
        .spawn();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    read_until(&mut stderr, "[tool] bash");
    // The bash call is running (its reader is blocked on the gate) once the row is written;
    // the signal may still arrive before `cat` opened the gate, which changes nothing here.
    signal(child.id(), "-INT");
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_eq!(rest, "[zero] Interrupted.\n");
}

// --- Memory ----------------------------------------------------------------------------------

/// The address space a run may use in these tests (the old code needed 250 to 400 MiB).
const MEMORY_MIB: u64 = 160;

#[test]
fn read_file_of_a_100_mib_line_runs_in_little_memory() {
    let dir = TestDir::new("huge-line");
    std::fs::write(dir.path("work/big.txt"), vec![b'a'; 100 * 1024 * 1024]).unwrap();
    let path = dir
        .script(&calls_then_done(json!([{"name": "read_file", "arguments": {"path": "big.txt"}}])));
    let out = dir
        .zero()
        .memory_limit_mib(MEMORY_MIB)
        .args(&["exec", "-o", "stream-json", "--script", path.to_str().unwrap(), "read"])
        .run();
    out.assert_code(0);
    let output = tool_results(&out)[0]["output"].as_str().unwrap().to_string();
    assert!(output.starts_with("File: big.txt (1 lines)\n\n1 | aaaa"), "{}", &output[..60]);
}

/// A mock answer streaming `total` bytes of text (or tool arguments) in 64 KiB chunks.
fn flood(total: usize, arguments: bool) -> Reply {
    let piece = "a".repeat(64 * 1024);
    let mut steps = Vec::new();
    if arguments {
        steps.push(Step::Send(openai::call_start(0, "c1", "write_file").into_bytes()));
        steps.push(Step::Send(openai::call_args(0, "{\"path\":\"x\",\"content\":\"").into_bytes()));
    }
    for _ in 0..total / piece.len() {
        let chunk = if arguments { openai::call_args(0, &piece) } else { openai::text(&piece) };
        steps.push(Step::Send(chunk.into_bytes()));
    }
    steps.push(Step::Send(openai::finish("stop").into_bytes()));
    steps.push(Step::Send(openai::done().into_bytes()));
    Reply::stream(steps)
}

#[test]
fn a_huge_answer_or_huge_arguments_end_with_a_provider_error_naming_the_limit() {
    for (arguments, what) in
        [(false, "answer text over 4 MiB"), (true, "a tool call's arguments over 4 MiB")]
    {
        let dir = TestDir::new("flood");
        let mock = Mock::start(vec![flood(48 * 1024 * 1024, arguments)]);
        let out = dir
            .zero()
            .memory_limit_mib(MEMORY_MIB)
            .openai(&mock.v1(), "local-coder")
            .args(&["exec", "-o", "stream-json", "hi"])
            .run();
        out.assert_code(3);
        let events = out.stream();
        let error = &events[events.len() - 2];
        assert_eq!(error["code"], "provider_error");
        assert!(error["message"].as_str().unwrap().contains(what), "{}", error["message"]);
    }
}

// --- Endings ---------------------------------------------------------------------------------

#[test]
fn retry_after_values_of_any_kind_never_crash_the_run() {
    for value in ["1e20", "-5", "NaN", "Wed, 21 Oct 2015 07:28:00 GMT", "soon"] {
        let dir = TestDir::new("retry-after");
        let mock = Mock::start(vec![Reply::status(
            429,
            "application/json",
            r#"{"error":{"message":"slow down"}}"#,
        )
        .with_header("retry-after", value)]);
        let out = dir
            .zero()
            .openai(&mock.v1(), "local-coder")
            .env("ZERO_MAX_RETRIES", "0")
            .args(&["exec", "-o", "stream-json", "hi"])
            .run();
        out.assert_code(3);
        let events = out.stream();
        assert_eq!(events[events.len() - 2]["code"], "provider_error", "retry-after: {value}");
    }
    // A value in the past (or negative) is "now": the retry happens and succeeds.
    let dir = TestDir::new("retry-after-past");
    let mock = Mock::start(vec![
        Reply::status(429, "application/json", "{}").with_header("retry-after", "-5"),
        Reply::sse(&openai::answer(&["fine"], 1, 1)),
    ]);
    let out = dir.zero().openai(&mock.v1(), "local-coder").args(&["exec", "hi"]).run();
    out.assert_code(0);
    assert_eq!(out.stdout, "fine\n");
}

#[test]
fn a_panic_inside_the_emitter_still_ends_the_stream() {
    for format in ["stream-json", "json", "text"] {
        let dir = TestDir::new("emitter-panic");
        let path = dir.script(&json!({"turns": [{"text": "x"}]}));
        let out = dir
            .zero()
            .env("ZERO_DEBUG_PANIC", "emitter")
            .args(&["exec", "-o", format, "--script", path.to_str().unwrap(), "hi"])
            .run();
        out.assert_code(1);
        match format {
            "stream-json" => {
                let kinds = out.types();
                assert_eq!(kinds, ["run_start", "error", "run_end"], "{out:?}");
                assert_eq!(out.stream()[1]["code"], "crash");
            }
            "json" => assert_eq!(out.types().last().unwrap(), "error", "{out:?}"),
            _ => assert!(out.stderr.contains("[zero] Internal error (a bug in zero)"), "{out:?}"),
        }
        assert!(!out.stderr.contains("panicked"), "{out:?}");
    } // Schema 2's fallback ending continues the line count (util.rs checks seq and eventCount).
    let dir = TestDir::new("emitter-panic-2");
    let path = dir.script(&json!({"turns": [{"text": "x"}]}));
    let args = [
        "exec",
        "-o",
        "stream-json",
        "--schema-version",
        "2",
        "--script",
        path.to_str().unwrap(),
        "hi",
    ];
    let out = dir.zero().env("ZERO_DEBUG_PANIC", "emitter").args(&args).run();
    out.assert_code(1);
    let events = out.stream();
    assert_eq!(out.types(), ["run_start", "error", "run_end"], "{out:?}");
    assert_eq!((&events[2]["seq"], &events[2]["eventCount"]), (&json!(3), &json!(3)));
}

// --- The terminal and the shell --------------------------------------------------------------

#[test]
fn text_mode_cannot_be_forged_or_drive_the_terminal() {
    let dir = TestDir::new("forge");
    let script = json!({"turns": [
        {"toolCalls": [
            {"name": "read_file\n[zero] forged row", "arguments": {"path": "x"}},
            {"name": "bash", "arguments": {"command": "printf '\\033]52;c;ZXZpbA==\\007\\033[2Jcleared\\n'"}},
        ]},
        {"text": ["\u{1b}]52;c;ZXZpbA==\u{7}", "\u{1b}[2J answer\r\n", "\u{9b}31m done"]}
    ]});
    let out = scripted(&dir, &script, &["text"]);
    out.assert_code(0);
    for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "a control character reached {stream}: {text:?}"
        );
    }
    assert_eq!(out.stdout, "\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J answer\\r\n\\u{009b}31m done\n");
    for row in out.stderr.lines() {
        assert!(["[tool] ", "[result] ", "[zero] "].iter().any(|p| row.starts_with(p)), "{row:?}");
        assert_ne!(row, "[zero] forged row");
    }
    assert!(out.stderr.contains("[tool] read_file\\n[zero] forged row: x\n"), "{out:?}");
}

#[test]
fn bash_does_not_get_variables_with_secret_names_unless_asked() {
    let dir = TestDir::new("shell-env");
    let script = calls_then_done(json!([{"name": "bash", "arguments": {"command": "env | sort"}}]));
    let run = |extra: &[&str]| {
        let path = dir.script(&script);
        let out = dir
            .zero()
            .env("GITHUB_TOKEN", "ghtok-value-0123456789")
            .env("OPENAI_API_KEY", "openai-value-0123456789")
            .env("MY_SERVICE_PASSWORD", "password-value-0123")
            .env("PLAIN_SETTING", "visible")
            .args(&["exec", "-o", "stream-json", "--skip-permissions-unsafe", "--script"])
            .args(&[path.to_str().unwrap()])
            .args(extra)
            .args(&["env"])
            .run();
        out.assert_code(0);
        let output = tool_results(&out)[0]["output"].as_str().unwrap().to_string();
        let names: Vec<String> =
            ["GITHUB_TOKEN", "OPENAI_API_KEY", "MY_SERVICE_PASSWORD", "PLAIN_SETTING"]
                .iter()
                .filter(|n| output.lines().any(|l| l.starts_with(&format!("{n}="))))
                .map(|n| n.to_string())
                .collect();
        names
    };
    assert_eq!(run(&[]), ["PLAIN_SETTING"]);
    assert_eq!(run(&["--shell-env-keep", "GITHUB_TOKEN"]), ["GITHUB_TOKEN", "PLAIN_SETTING"]);
    assert_eq!(run(&["--shell-env", "inherit"]).len(), 4);
    let out = dir.zero().args(&["exec", "--shell-env", "everything", "x"]).run();
    out.assert_code(2);
    assert!(out.stderr.contains("Invalid --shell-env value \"everything\""), "{out:?}");
}

// --- Smaller items ---------------------------------------------------------------------------

#[test]
fn sse_fields_a_proxy_adds_are_ignored() {
    let dir = TestDir::new("sse-fields");
    let chunks = [
        "x-request-id: abc123\n".to_string(),
        openai::text("hello"),
        "foo: bar\nid: 7\n\n".to_string(),
        openai::finish("stop"),
        openai::done(),
    ];
    let mock = Mock::start(vec![Reply::sse(&chunks)]);
    let out = dir.zero().openai(&mock.v1(), "local-coder").args(&["exec", "hi"]).run();
    out.assert_code(0);
    assert_eq!(out.stdout, "hello\n");
}

#[test]
fn a_config_that_is_not_a_small_regular_file_is_one_config_error() {
    type Make = fn(&Path);
    let cases: [(&str, Make); 3] = [
        ("not a regular file", |p| std::os::unix::fs::symlink("/dev/zero", p).unwrap()),
        ("not a regular file", |p| mkfifo(p)),
        ("larger than 1 MiB", |p| {
            std::fs::write(p, format!("{{{}}}", " ".repeat(2 << 20))).unwrap()
        }),
    ];
    for (expected, make) in cases {
        let dir = TestDir::new("config-special");
        let path = dir.path("config/zero/config.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        make(&path);
        let out =
            dir.zero().env("OPENAI_API_KEY", "k").args(&["exec", "-o", "stream-json", "hi"]).run();
        out.assert_code(3);
        let events = out.stream();
        assert_eq!(out.types(), ["error", "run_end"], "{out:?}");
        assert_eq!(events[0]["code"], "config_error");
        let message = events[0]["message"].as_str().unwrap();
        assert!(message.contains(expected) && message.contains("config.json"), "{message}");
    }
}

// --- Against real programs -------------------------------------------------------------------

/// Runs git in `dir`; `None` when git is not installed.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(dir).output().ok()?;
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn apply_patch_applies_a_diff_git_wrote_as_git_would() {
    let dir = TestDir::new("git-diff");
    let work = dir.work();
    if git(&work, &["init", "-q"]).is_none() {
        crate::util::skip("apply_patch as git", crate::util::Skip::Missing, "git is not installed");
        return;
    }
    for config in [["user.email", "t@example.com"], ["user.name", "t"]] {
        git(&work, &["config", config[0], config[1]]);
    }
    dir.write("work/a.txt", "one\ntwo\nthree\n");
    dir.write("work/gone.txt", "bye\n");
    dir.write("work/src/main.rs", "fn main() {}\n");
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-qm", "base"]);
    // The change, as git records it, then undone.
    dir.write("work/a.txt", "one\nTWO\nthree\nfour\n");
    std::fs::remove_file(dir.path("work/gone.txt")).unwrap();
    dir.write("work/new/dir/x.txt", "hello\n");
    dir.write("work/src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    git(&work, &["add", "-A"]);
    let diff = git(&work, &["diff", "--cached"]).unwrap();
    git(&work, &["reset", "-q", "--hard"]);
    assert_eq!(git(&work, &["status", "--porcelain"]).unwrap(), "");
    let out = scripted(
        &dir,
        &calls_then_done(json!([{"name": "apply_patch", "arguments": {"patch": diff}}])),
        &["-o", "stream-json", "apply"],
    );
    out.assert_code(0);
    assert_eq!(tool_results(&out)[0]["status"], "ok", "{out:?}");
    git(&work, &["add", "-A"]);
    assert_eq!(git(&work, &["diff", "--cached"]).unwrap(), diff);
}

#[test]
fn a_read_only_file_is_refused_by_every_tool_that_writes() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TestDir::new("read-only");
    let notes = dir.write("work/notes.txt", "keep me\n");
    std::fs::set_permissions(&notes, std::fs::Permissions::from_mode(0o444)).unwrap();
    let patch = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-keep me\n+changed\n";
    let out = scripted(
        &dir,
        &calls_then_done(json!([
            {"name": "write_file", "arguments": {"path": "notes.txt", "content": "x", "overwrite": true}},
            {"name": "edit_file", "arguments": {"path": "notes.txt", "old_string": "keep", "new_string": "lose"}},
            {"name": "apply_patch", "arguments": {"patch": patch}},
        ])),
        &["-o", "stream-json", "go"],
    );
    out.assert_code(0);
    let results = tool_results(&out);
    for result in &results {
        assert_eq!(result["status"], "error", "{result}");
        assert!(
            result["output"]
                .as_str()
                .unwrap()
                .contains("notes.txt is read-only (mode 0444); it was left as it is"),
            "{result}"
        );
    }
    assert_eq!(results.len(), 3);
    assert_eq!(crate::util::read(&notes), "keep me\n");
    let mode = std::fs::metadata(&notes).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o444);
}

/// The names of the threads of process `pid`.
fn threads_of(pid: u32) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .map(|t| {
            std::fs::read_to_string(t.path().join("comm")).unwrap_or_default().trim().to_string()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn a_bash_call_starts_no_thread() {
    let dir = TestDir::new("no-threads");
    let fifo = dir.path("release");
    crate::util::mkfifo(&fifo);
    // The command says it has started, then waits until the test lets it go.
    let command = format!("echo started > started; cat {} > /dev/null; echo done", fifo.display());
    let script =
        dir.script(&calls_then_done(json!([{"name": "bash", "arguments": {"command": command}}])));
    let child = dir
        .zero()
        .args(&[
            "exec",
            "-o",
            "stream-json",
            "--auto",
            "high",
            "--script",
            script.to_str().unwrap(),
            "go",
        ])
        .spawn();
    let started = dir.path("work/started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !started.exists() {
        assert!(std::time::Instant::now() < deadline, "the command never started");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // During the call: the main thread and the signal watcher, nothing for the shell.
    let during = threads_of(child.id());
    std::fs::write(&fifo, "go\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(during, ["zero", "zero-signals"], "threads during a bash call");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("done"), "{stdout}");
}

#[test]
fn another_users_file_is_refused_though_its_directory_is_writable() {
    let dir = TestDir::new("others-file");
    let notes = dir.write("work/notes.txt", "theirs\n");
    // Only root can give a file away; any other user already meets this case the same way.
    if std::os::unix::fs::chown(&notes, Some(65534), Some(65534)).is_err() {
        crate::util::skip("another user's file", crate::util::Skip::Machine, "chown needs root");
        return;
    }
    let path = dir.script(&calls_then_done(json!([
        {"name": "write_file", "arguments": {"path": "notes.txt", "content": "mine", "overwrite": true}},
        {"name": "edit_file", "arguments": {"path": "notes.txt", "old_string": "theirs", "new_string": "mine"}},
    ])));
    let out = dir
        .zero()
        .args(&["exec", "--skip-permissions-unsafe", "--provider", "scripted", "--script"])
        .args(&[path.to_str().unwrap(), "-o", "stream-json", "go"])
        .with_file_modes_binding()
        .run();
    out.assert_code(0);
    let results = tool_results(&out);
    assert_eq!(results.len(), 2);
    for result in &results {
        assert_eq!(
            (&result["status"], &result["output"]),
            (
                &json!("error"),
                &json!("Error: notes.txt is read-only for this user (mode 0644, owner uid 65534); it was left as it is.")
            )
        );
    }
    use std::os::unix::fs::MetadataExt;
    assert_eq!(crate::util::read(&notes), "theirs\n");
    assert_eq!(std::fs::metadata(&notes).unwrap().uid(), 65534);
}

#[test]
fn a_thread_that_cannot_start_is_reported_and_the_run_goes_on() {
    let dir = TestDir::new("no-thread-allowed");
    let script = dir.script(&json!({"turns": [{"text": "ok"}]}));
    let script = script.to_str().unwrap();
    let run = |extra: &[&str], stdin: &str| {
        dir.zero()
            .env("ZERO_DEBUG_NO_THREADS", "1")
            .args(&["exec", "--ephemeral", "--provider", "scripted", "--script", script])
            .args(&["-o", "stream-json"])
            .args(extra)
            .stdin(stdin)
            .run()
    };
    let why = "could not start (Resource temporarily unavailable (ZERO_DEBUG_NO_THREADS))";
    let out = run(&["--schema-version", "2", "--heartbeat-ms", "100", "hi"], "");
    out.assert_code(0);
    let events = out.events();
    let warnings: Vec<(&Value, &Value)> = events
        .iter()
        .filter(|e| e["type"] == "warning")
        .map(|e| (&e["code"], &e["message"]))
        .collect();
    assert_eq!(
        warnings,
        [
            (&json!("thread_unavailable"), &json!(format!("An interrupt ends this run at once, without its last lines: the signal watcher {why}."))),
            (&json!("thread_unavailable"), &json!(format!("No heartbeats in this run: the heartbeat thread {why}."))),
        ]
    );
    assert_eq!(events.last().unwrap()["type"], "run_end");
    // Live mode cannot read its input without its thread: it says so and ends.
    let prompt = r#"{"schemaVersion":2,"type":"prompt","content":"hi"}"#;
    let out = run(&["-i", "stream-json", "--live"], prompt);
    out.assert_code(1);
    let events = out.events();
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(
        (&error["code"], &error["message"]),
        (&json!("crash"), &json!(format!("Cannot read stdin: the live input thread {why}")))
    );
}
