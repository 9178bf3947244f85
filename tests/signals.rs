//! Interrupts, a closed stdout and panics: the run always ends well-formed (or quietly, when
//! nobody is listening), and nothing it started survives.

use std::io::{BufRead, BufReader, Read};
use std::process::Command;
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::mock::{openai, Mock, Reply, Step};
use crate::util::{alive, read, TestDir};

fn interrupt(pid: u32) {
    assert!(Command::new("kill").args(["-INT", &pid.to_string()]).status().unwrap().success());
}

/// Waits (bounded) for the child to exit and returns (exit code, time since `since`).
fn wait(mut child: std::process::Child, since: Instant) -> (Option<i32>, Duration, String, String) {
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (done, finished) = channel();
    std::thread::spawn(move || {
        let status = child.wait().unwrap();
        let _ = done.send((status.code(), Instant::now()));
    });
    let (code, at) =
        finished.recv_timeout(Duration::from_secs(20)).expect("zero exited after the signal");
    let mut out = String::new();
    let mut err = String::new();
    stdout.read_to_string(&mut out).unwrap();
    stderr.read_to_string(&mut err).unwrap();
    (code, at.duration_since(since), out, err)
}

fn assert_interrupted_ending(out: &str) -> Value {
    let args = ["exec".to_string(), "-o".to_string(), "stream-json".to_string()];
    crate::util::check_stream(out, &args, 130).unwrap_or_else(|e| panic!("{e}\n{out}"));
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let n = lines.len();
    assert!(n >= 3, "{out}");
    assert_eq!(lines[0]["type"], "run_start");
    assert_eq!(
        (lines[n - 2]["type"].as_str(), lines[n - 2]["code"].as_str()),
        (Some("error"), Some("interrupted"))
    );
    assert_eq!(lines[n - 2]["recoverable"], true);
    assert_eq!(
        (lines[n - 1]["type"].as_str(), lines[n - 1]["status"].as_str()),
        (Some("run_end"), Some("error"))
    );
    assert_eq!(lines[n - 1]["exitCode"], 130);
    lines[0].clone()
}

fn session_events(dir: &TestDir, start: &Value) -> String {
    read(&dir.sessions().join(start["sessionId"].as_str().unwrap()).join("events.jsonl"))
}

#[test]
fn sigint_while_the_provider_never_answers() {
    let dir = TestDir::new("sigint-provider");
    let mock = Mock::start(vec![Reply::Hang]);
    let child = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "hi"])
        .spawn();
    mock.wait_request();
    let sent = Instant::now();
    interrupt(child.id());
    let (code, took, out, err) = wait(child, sent);
    assert_eq!(code, Some(130), "{out}{err}");
    assert!(took < Duration::from_millis(200), "took {took:?}");
    let start = assert_interrupted_ending(&out);
    assert!(session_events(&dir, &start).contains("\"code\":\"interrupted\""));
    assert_eq!(err, "");
}

#[test]
fn sigint_during_bash_kills_the_command_and_its_children() {
    let dir = TestDir::new("sigint-bash");
    let fifo = dir.path("work/ready");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let command = format!("sleep 60 & echo $! > {}; wait", fifo.display());
    let script = dir.write(
        "script.json",
        &serde_json::json!({"turns": [{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "never"}]}).to_string(),
    );
    let child = dir
        .zero()
        .args(&[
            "exec",
            "-o",
            "stream-json",
            "--skip-permissions-unsafe",
            "--provider",
            "scripted",
            "--script",
            script.to_str().unwrap(),
            "sleep",
        ])
        .spawn();
    // The command writes its child's pid into the fifo once it is running.
    let grandchild: u32 = read(&fifo).trim().parse().unwrap();
    assert!(alive(grandchild));
    let sent = Instant::now();
    interrupt(child.id());
    let (code, took, out, _) = wait(child, sent);
    assert_eq!(code, Some(130), "{out}");
    assert!(took < Duration::from_millis(200), "took {took:?}");
    let start = assert_interrupted_ending(&out);
    assert!(!alive(grandchild), "the command's child {grandchild} survived");
    assert!(session_events(&dir, &start).contains("\"code\":\"interrupted\""));
}

#[test]
fn a_closed_stdout_ends_the_run_quietly() {
    let dir = TestDir::new("broken-pipe");
    let (go, gate) = channel();
    let mut steps = vec![Step::Wait(gate)];
    for i in 0..50 {
        steps.push(Step::Send(openai::text(&format!("chunk {i} ")).into_bytes()));
    }
    steps.push(Step::Send(openai::finish("stop").into_bytes()));
    let mock = Mock::start(vec![Reply::stream(steps)]);
    let mut child = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "hi"])
        .spawn();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains("\"run_start\""));
    drop(stdout);
    go.send(()).unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    assert_eq!(stderr, "", "nothing about panics or pipes");
}

#[test]
fn a_panic_still_ends_the_stream() {
    let dir = TestDir::new("panic");
    let script = dir.write("s.json", r#"{"turns": [{"text": "x"}]}"#);
    let out = dir
        .zero()
        .env("ZERO_DEBUG_PANIC", "1")
        .args(&[
            "exec",
            "-o",
            "stream-json",
            "--provider",
            "scripted",
            "--script",
            script.to_str().unwrap(),
            "hi",
        ])
        .run();
    out.assert_code(1);
    let events = out.stream();
    let error = &events[events.len() - 2];
    assert_eq!(
        (error["code"].as_str(), error["recoverable"].as_bool()),
        (Some("crash"), Some(false))
    );
    assert!(error["message"].as_str().unwrap().contains("ZERO_DEBUG_PANIC"));
    assert!(!out.stdout.contains("backtrace") && !out.stdout.contains("panicked"));
    assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
}
