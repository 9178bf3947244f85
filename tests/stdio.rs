//! Whole lines under any stdio: pipes whose file description is non-blocking (as a Node.js
//! parent leaves them), a reader that reads slowly, and SIGTERM while the reader has paused.
//! The pipes are made here with std and set non-blocking with `fcntl`; how full a pipe is
//! comes from `ioctl(FIONREAD)`.
#![allow(unsafe_code)] // libc calls that std lacks, on the test's own descriptors

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{check_stream, TestDir};

const F_GETFL: i32 = 3;
const F_SETFL: i32 = 4;
const O_NONBLOCK: i32 = 0o4000;
const FIONREAD: u64 = 0x541B;

extern "C" {
    fn fcntl(fd: i32, cmd: i32, ...) -> i32;
    fn ioctl(fd: i32, request: u64, ...) -> i32;
}

/// Sets O_NONBLOCK on the file description behind `fd` (each end of a pipe has its own).
fn set_nonblocking(fd: &impl AsRawFd) {
    let fd = fd.as_raw_fd();
    // SAFETY: plain integer arguments on a descriptor this test owns.
    let flags = unsafe { fcntl(fd, F_GETFL) };
    assert!(flags >= 0);
    // SAFETY: as above.
    assert_eq!(unsafe { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }, 0);
}

/// Bytes waiting in a pipe.
fn waiting(fd: &impl AsRawFd) -> i32 {
    let mut n: i32 = 0;
    // SAFETY: FIONREAD writes one int through the pointer.
    assert_eq!(unsafe { ioctl(fd.as_raw_fd(), FIONREAD, &mut n as *mut i32) }, 0);
    n
}

/// A script whose answer is 4,000 deltas of 100 bytes: far more than a pipe holds.
fn long_answer(dir: &TestDir) -> String {
    let piece = format!("{}\n", "x".repeat(99));
    let text: Vec<String> = (0..4000).map(|_| piece.clone()).collect();
    dir.script(&json!({"turns": [{"text": text}]})).display().to_string()
}

/// Spawns zero with stdout (and stderr) on pipes made here, non-blocking when `nonblocking`.
fn spawn_with_pipe(
    zero: crate::util::Zero,
    nonblocking: bool,
    stdin: Stdio,
) -> (Child, std::io::PipeReader) {
    let (reader, writer) = std::io::pipe().unwrap();
    if nonblocking {
        set_nonblocking(&writer);
    }
    let mut cmd = zero.command();
    cmd.stdin(stdin).stdout(writer).stderr(Stdio::null());
    let child = cmd.spawn().unwrap();
    // The test's copy of the write end is closed with `cmd`, so the end of the stream is seen.
    drop(cmd);
    (child, reader)
}

/// Reads to the end, 4 KiB at a time with a pause between reads: a slow reader.
fn read_slowly(mut reader: impl Read) -> String {
    let mut all = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => all.extend_from_slice(&chunk[..n]),
            Err(err) => panic!("read: {err}"),
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    String::from_utf8(all).unwrap()
}

/// Waits until a thread of `pid` is blocked in `poll` (x86_64's 7, or `ppoll`), which zero
/// is only after a read of a non-blocking stdin found nothing.
fn wait_until_polling(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
        let polling = tasks.flatten().any(|task| {
            let call = std::fs::read_to_string(task.path().join("syscall")).unwrap_or_default();
            matches!(call.split_whitespace().next(), Some("7" | "271" | "73"))
        });
        if polling {
            return;
        }
        assert!(Instant::now() < deadline, "zero never waited for stdin");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn lines(stdout: &str) -> Vec<Value> {
    stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

#[test]
fn a_non_blocking_stdout_read_slowly_gets_every_line_whole() {
    let dir = TestDir::new("nonblocking-stdout");
    let script = long_answer(&dir);
    let args = ["exec", "-o", "stream-json", "--schema-version", "2", "--script", &script, "go"];
    let (mut child, reader) = spawn_with_pipe(dir.zero().args(&args), true, Stdio::null());
    let stdout = read_slowly(reader);
    let code = child.wait().unwrap().code().unwrap_or(-1);
    assert_eq!(code, 0, "{}", &stdout[stdout.len().saturating_sub(500)..]);
    check_stream(&stdout, &args.map(String::from), code).unwrap_or_else(|e| panic!("{e}"));
    let events = lines(&stdout);
    assert_eq!(events.iter().filter(|e| e["type"] == "text").count(), 4000);
    assert_eq!(events.last().unwrap()["type"], "run_end");
}

#[test]
fn a_non_blocking_stdin_is_waited_for_in_live_mode_and_for_a_prompt() {
    let dir = TestDir::new("nonblocking-stdin");
    let script = dir.script(&json!({"turns": [{"text": "one"}, {"text": "two"}]}));
    let script = script.to_str().unwrap();
    // Live mode: zero reads stdin before the client has written anything.
    let (input_reader, mut input) = std::io::pipe().unwrap();
    set_nonblocking(&input_reader);
    let args = ["exec", "-i", "stream-json", "-o", "stream-json", "--live", "--script", script];
    let (mut child, reader) =
        spawn_with_pipe(dir.zero().args(&args), false, Stdio::from(input_reader));
    let mut reader = std::io::BufReader::new(reader);
    crate::util::read_until(&mut reader, "\"run_start\"");
    wait_until_polling(child.id());
    let prompt = json!({"schemaVersion": 2, "type": "prompt", "content": "hi"});
    input.write_all(format!("{prompt}\n").as_bytes()).unwrap();
    crate::util::read_until(&mut reader, "\"turn_end\"");
    drop(input);
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    let code = child.wait().unwrap().code().unwrap_or(-1);
    assert_eq!(code, 0);
    assert!(rest.contains("\"run_end\"") && rest.contains("\"exitCode\":0"), "{rest}");
    // A prompt on a non-blocking stdin (`zero exec -`), written after zero started.
    let (input_reader, mut input) = std::io::pipe().unwrap();
    set_nonblocking(&input_reader);
    let args = ["exec", "-o", "json", "--script", script, "-"];
    let (mut child, reader) =
        spawn_with_pipe(dir.zero().args(&args), false, Stdio::from(input_reader));
    wait_until_polling(child.id());
    input.write_all(b"the prompt\n").unwrap();
    drop(input);
    let mut rest = String::new();
    std::io::BufReader::new(reader).read_to_string(&mut rest).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0), "{rest}");
    assert!(rest.ends_with("{\"type\":\"done\",\"exit_code\":0}\n"), "{rest}");
}

#[test]
fn sigterm_while_the_reader_has_paused_ends_with_whole_lines_and_run_end() {
    let dir = TestDir::new("sigterm-paused-reader");
    let script = long_answer(&dir);
    for nonblocking in [false, true] {
        let args =
            ["exec", "-o", "stream-json", "--schema-version", "2", "--script", &script, "go"];
        let (mut child, reader) =
            spawn_with_pipe(dir.zero().args(&args), nonblocking, Stdio::null());
        // The reader has paused: zero is blocked once the pipe is full.
        let deadline = Instant::now() + Duration::from_secs(20);
        while waiting(&reader) < 60_000 {
            assert!(Instant::now() < deadline, "the pipe never filled");
            std::thread::sleep(Duration::from_millis(5));
        }
        let pid = child.id().to_string();
        assert!(std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        // The reader stays away for a second, then reads everything.
        std::thread::sleep(Duration::from_secs(1));
        let started = Instant::now();
        let mut stdout = String::new();
        std::io::BufReader::new(reader).read_to_string(&mut stdout).unwrap();
        let code = child.wait().unwrap().code().unwrap_or(-1);
        assert_eq!(code, 130);
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(stdout.ends_with('\n'), "a torn last line: {:?}", &stdout[stdout.len() - 200..]);
        check_stream(&stdout, &args.map(String::from), code).unwrap_or_else(|e| panic!("{e}"));
        let events = lines(&stdout);
        let n = events.len();
        assert_eq!(
            (&events[n - 2]["type"], &events[n - 2]["code"], &events[n - 1]["status"]),
            (&json!("error"), &json!("interrupted"), &json!("interrupted")),
            "non-blocking: {nonblocking}"
        );
    }
}

#[test]
fn a_second_signal_while_the_ending_waits_for_a_paused_reader_exits_at_once_in_live_mode() {
    let dir = TestDir::new("second-signal-live");
    let script = long_answer(&dir);
    let args = ["exec", "-i", "stream-json", "-o", "stream-json", "--live", "--script", &script];
    let (input_reader, mut input) = std::io::pipe().unwrap();
    let (mut child, reader) =
        spawn_with_pipe(dir.zero().args(&args), false, Stdio::from(input_reader));
    let prompt = json!({"schemaVersion": 2, "type": "prompt", "content": "go"});
    input.write_all(format!("{prompt}\n").as_bytes()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while waiting(&reader) < 60_000 {
        assert!(Instant::now() < deadline, "the pipe never filled");
        std::thread::sleep(Duration::from_millis(5));
    }
    let pid = child.id().to_string();
    let term = || std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(term().success());
    // The first signal's ending waits (up to 5 s) for the paused reader; a second one ends
    // the process without waiting. The reader never comes back.
    assert!(term().success());
    let waited = Instant::now() + Duration::from_secs(3);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < waited, "the second signal did not end the process");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130));
    drop(reader);
}

#[test]
fn the_companion_commands_write_whole_output_to_a_non_blocking_stdout() {
    let dir = TestDir::new("nonblocking-commands");
    let expected = crate::util::printed_schema(2).clone();
    for args in [&["schema", "2"][..], &["exec", "--help"]] {
        // The pipe is nearly full before zero writes: its first write finds no room.
        let (reader, mut writer) = std::io::pipe().unwrap();
        set_nonblocking(&writer);
        let filler = vec![b'#'; 64 * 1024 - 100];
        writer.write_all(&filler).unwrap();
        let mut cmd = dir.zero().args(args).command();
        cmd.stdin(Stdio::null()).stdout(writer).stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        drop(cmd);
        let stdout = read_slowly(reader);
        assert_eq!(child.wait().unwrap().code(), Some(0), "{args:?}");
        let stdout = stdout.strip_prefix(&String::from_utf8(filler).unwrap()).unwrap();
        if args[0] == "schema" {
            assert_eq!(serde_json::from_str::<Value>(stdout).unwrap(), expected);
        } else {
            assert!(
                stdout.starts_with("Usage: zero exec") && stdout.ends_with("130 interrupted.\n")
            );
        }
    }
}
