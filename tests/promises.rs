//! The CLI keeps its word: error codes and `recoverable` as documented, output a script can
//! capture, prompts and paths where users expect them, sessions scoped to their workspace,
//! and no option accepted in silence.

use serde_json::Value;

use crate::mock::{Mock, Reply};
use std::io::Write;

use crate::util::{read, Output, TestDir};

/// The `error` event of a failed stream-json run.
fn error_of(out: &Output) -> Value {
    let events = out.stream();
    let n = events.len();
    assert_eq!(events[n - 1]["type"], "run_end", "{out:?}");
    events[n - 2].clone()
}

fn code_and_recoverable(out: &Output) -> (String, bool) {
    let error = error_of(out);
    (error["code"].as_str().unwrap().to_string(), error["recoverable"].as_bool().unwrap())
}

// --- Error codes and `recoverable` -------------------------------------------------------

#[test]
fn setup_failures_are_provider_errors_and_only_the_config_file_is_a_config_error() {
    let dir = TestDir::new("codes-setup");
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![], "No LLM provider configured"),
        (
            vec![("OPENAI_API_KEY", "k"), ("OPENAI_MODEL", "gpt4.1")],
            "closest known models: gpt-4.1",
        ),
        (vec![("OPENAI_MODEL", "gpt-4.1")], "requires an API key"),
        (
            vec![("ZERO_PROVIDER_COMMAND", "exit 7")],
            "ZERO_PROVIDER_COMMAND failed with exit code 7",
        ),
    ];
    for (env, message) in cases {
        let mut run = dir.zero().args(&["exec", "-o", "stream-json", "hi"]);
        for (k, v) in &env {
            run = run.env(k, v);
        }
        let out = run.run();
        out.assert_code(3);
        assert_eq!(code_and_recoverable(&out), ("provider_error".to_string(), false), "{out:?}");
        assert!(error_of(&out)["message"].as_str().unwrap().contains(message), "{out:?}");
    }
    dir.write("config/zero/config.json", "{ not json");
    let out =
        dir.zero().env("OPENAI_API_KEY", "k").args(&["exec", "-o", "stream-json", "hi"]).run();
    out.assert_code(3);
    assert_eq!(code_and_recoverable(&out), ("config_error".to_string(), false));
}

#[test]
fn recoverable_says_whether_the_same_command_may_succeed_again() {
    let dir = TestDir::new("codes-recoverable");
    // Unreachable: nothing listens on port 1.
    let out = dir
        .zero()
        .openai("http://127.0.0.1:1/v1", "local-coder")
        .env("ZERO_MAX_RETRIES", "0")
        .args(&["exec", "-o", "stream-json", "hi"])
        .run();
    out.assert_code(3);
    assert_eq!(code_and_recoverable(&out), ("provider_error".to_string(), true), "{out:?}");
    // 503 after its retries: may succeed later. 401: will not.
    for (status, recoverable) in [(503, true), (401, false), (400, false)] {
        let mock = Mock::start(vec![Reply::status(status, "application/json", "{}")]);
        let out = dir
            .zero()
            .openai(&mock.v1(), "local-coder")
            .env("ZERO_MAX_RETRIES", "0")
            .args(&["exec", "-o", "stream-json", "hi"])
            .run();
        out.assert_code(3);
        assert_eq!(
            code_and_recoverable(&out),
            ("provider_error".to_string(), recoverable),
            "{status}"
        );
    }
    // A usage error will not go away by itself.
    let out = dir.zero().args(&["exec", "-o", "stream-json", "--auto", "chaos", "hi"]).run();
    out.assert_code(2);
    assert_eq!(code_and_recoverable(&out), ("usage_error".to_string(), false));
}

#[test]
fn zero_turns_is_a_usage_error_and_provider_kinds_read_the_same_everywhere() {
    let dir = TestDir::new("codes-flags");
    let out = dir.zero().args(&["exec", "--max-turns", "0", "hi"]).run();
    out.assert_code(2);
    assert_eq!(
        out.stderr,
        "[zero] Invalid --max-turns value \"0\". Expected a positive integer.\n"
    );
    let out = dir
        .zero()
        .env("ZERO_MAX_TURNS", "0")
        .env("OPENAI_API_KEY", "k")
        .args(&["exec", "hi"])
        .run();
    out.assert_code(2);
    assert_eq!(out.stderr, "[zero] Invalid ZERO_MAX_TURNS \"0\": expected a positive integer\n");
    let expected =
        "Unknown provider \"bogus\". Expected openai, anthropic, google, openai-compatible, azure or scripted.";
    let flag = dir.zero().args(&["exec", "--provider", "bogus", "hi"]).run();
    flag.assert_code(2);
    let env = dir.zero().env("ZERO_PROVIDER", "bogus").args(&["exec", "hi"]).run();
    env.assert_code(3);
    for out in [&flag, &env] {
        assert_eq!(out.stderr, format!("[zero] {expected}\n"), "{out:?}");
    }
}

// --- Output a script can use -------------------------------------------------------------------

#[test]
fn text_mode_stdout_is_the_final_answer_and_stderr_says_what_ran() {
    let dir = TestDir::new("text-answer");
    dir.write("work/notes.txt", "milk\n");
    let script = serde_json::json!({"turns": [
        {"text": ["Let me look", " at the notes.\nThen check."], "toolCalls": [
            {"name": "read_file", "arguments": {"path": "notes.txt"}},
            {"name": "bash", "arguments": {"command": "echo checking; echo 'no such target' >&2; exit 3"}},
            {"name": "read_file", "arguments": {"path": "missing.txt"}},
        ]},
        {"text": ["The notes say ", "milk."]}
    ]});
    let path = dir.script(&script);
    // What a CI job's `ANSWER=$(zero exec ...)` captures.
    let captured = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "ANSWER=$(\"$0\" exec --skip-permissions-unsafe --script {} 'What do the notes say?' 2>/dev/null); printf '%s' \"$ANSWER\"",
            path.display()
        ))
        .arg(crate::util::ZERO)
        .env_clear()
        .envs(dir.zero().env)
        .current_dir(dir.work())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&captured.stdout), "The notes say milk.");
    let out = dir
        .zero()
        .args(&["exec", "--skip-permissions-unsafe", "--script", path.to_str().unwrap(), "go"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, "The notes say milk.\n");
    // The first row names the session this run wrote (the captured run above wrote the other).
    let newest = std::fs::read_dir(dir.sessions())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|id| read(&dir.sessions().join(id).join("events.jsonl")).contains("\"go\""))
        .collect::<Vec<_>>();
    assert_eq!(newest.len(), 1);
    assert!(out.stderr.starts_with(&format!("[zero] session {}\n", newest[0])), "{out:?}");
    assert_eq!(
        out.rows(),
        "[zero] WARNING: Unsafe permissions are active for this run.\n\
         [model] Let me look at the notes.\n\
         [model] Then check.\n\
         [tool] read_file: notes.txt\n\
         [tool] bash: echo checking; echo 'no such target' >&2; exit 3\n\
         [tool] read_file: missing.txt\n\
         [result] ok\n\
         [result] error (exit 3): no such target\n\
         [result] error: Error reading file missing.txt: No such file or directory (os error 2)\n"
    );
}

#[test]
fn version_is_the_bare_version() {
    let dir = TestDir::new("version");
    for flag in ["--version", "-V"] {
        let out = dir.zero().args(&[flag]).run();
        out.assert_code(0);
        assert_eq!(out.stdout, format!("{}\n", env!("CARGO_PKG_VERSION")));
    }
}

// --- Prompts and paths ------------------------------------------------------------------------

/// The last user message the model received.
fn asked(mock: &Mock) -> String {
    let body = mock.requests()[0].json();
    let messages = body["messages"].as_array().unwrap().clone();
    messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_dash_reads_the_prompt_from_stdin_and_nothing_else_does() {
    let dir = TestDir::new("stdin-prompt");
    let answer = || Mock::start(vec![Reply::sse(&crate::mock::openai::answer(&["ok"], 1, 1))]);
    let mock = answer();
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-"])
        .stdin("What is this?\n")
        .run();
    out.assert_code(0);
    assert_eq!(asked(&mock), "What is this?");
    let mock = answer();
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-f", "-", "Review", "this:"])
        .stdin("diff --git a/x b/x\n")
        .run();
    out.assert_code(0);
    assert_eq!(asked(&mock), "Review this:\n\ndiff --git a/x b/x");
    // A `-` among the words is stdin too, wherever it stands: the words, a blank line, stdin.
    for args in [&["exec", "Review", "this:", "-"][..], &["exec", "Review", "-", "this:"]] {
        let mock = answer();
        let out = dir.zero().openai(&mock.v1(), "local-coder").args(args).stdin("BODY\n").run();
        out.assert_code(0);
        assert_eq!(asked(&mock), "Review this:\n\nBODY", "{args:?}");
    }
    // stdin is read once: two `-` words, or `-` with `-f -`, are refused before anything runs.
    for args in [&["exec", "a", "-", "-"][..], &["exec", "-", "-f", "-", "b"]] {
        let out = dir.zero().openai("http://127.0.0.1:1/v1", "m").args(args).stdin("x").run();
        out.assert_code(2);
        assert_eq!(
            out.stderr,
            "[zero] stdin can be read once: give one `-` word or `--file -`, not more.\n"
        );
    }
    // A pipe is not read unless asked for.
    let out = dir.zero().openai("http://127.0.0.1:1/v1", "m").args(&["exec"]).stdin("p\n").run();
    out.assert_code(2);
    assert_eq!(
        out.stderr,
        "[zero] Prompt required. Use `zero exec \"prompt\"`, `zero exec --file prompt.txt`, or `zero exec -` to read it from stdin.\n"
    );
}

#[test]
fn command_line_paths_resolve_where_zero_was_started_not_below_cwd() {
    let dir = TestDir::new("paths");
    std::fs::create_dir_all(dir.path("work/sub")).unwrap();
    dir.write("work/prompt.txt", "from the prompt file\n");
    dir.write("work/s.json", r#"{"turns": [{"text": "done"}]}"#);
    let out = dir
        .zero()
        .args(&["exec", "-o", "stream-json", "-C", "sub", "-f", "prompt.txt", "--script", "s.json"])
        .run();
    out.assert_code(0);
    let events = out.stream();
    assert!(events[0]["cwd"].as_str().unwrap().ends_with("/work/sub"), "{out:?}");
    let session = dir.sessions().join(events[0]["sessionId"].as_str().unwrap());
    assert!(crate::util::read(&session.join("events.jsonl")).contains("from the prompt file"));
    // Messages name the path that was looked for.
    let out = dir.zero().args(&["exec", "-C", "sub", "--script", "missing.json", "x"]).run();
    out.assert_code(2);
    let expected = dir.path("work/missing.json");
    assert_eq!(out.stderr, format!("[zero] Script file not found: {}\n", expected.display()));
}

// --- Resume that stays in its repository --------------------------------------------------------

/// A run through the mock in `dir/work/<sub>`, returning its session id.
fn run_in(dir: &TestDir, sub: &str, mock: &Mock, extra: &[&str], prompt: &str) -> Output {
    std::fs::create_dir_all(dir.path(&format!("work/{sub}"))).unwrap();
    dir.zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "-C", sub])
        .args(extra)
        .args(&[prompt])
        .run()
}

fn answer_mock(n: usize) -> Mock {
    Mock::start((0..n).map(|_| Reply::sse(&crate::mock::openai::answer(&["ok"], 1, 1))).collect())
}

/// The user messages the model received in the first request to `mock`.
fn user_messages(mock: &Mock) -> Vec<String> {
    let body = mock.requests()[0].json();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn bare_resume_continues_this_workspace_and_never_another() {
    let dir = TestDir::new("resume-scope");
    let first = answer_mock(1);
    let out = run_in(&dir, "alpha", &first, &[], "alpha secret plans");
    out.assert_code(0);
    let alpha = out.stream()[0]["sessionId"].as_str().unwrap().to_string();
    // Another repository: nothing of alpha's is sent.
    let beta = dir.path("work/beta");
    std::fs::create_dir_all(&beta).unwrap();
    let mock = answer_mock(1);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-C", "beta", "--resume", "continue"])
        .run();
    out.assert_code(2);
    assert_eq!(
        out.stderr,
        format!("[zero] No Zero sessions available to resume: this workspace ({}) has none. `zero sessions list --all` shows every session; `--resume ID` continues one.\n", beta.display())
    );
    assert!(mock.requests().is_empty(), "nothing reached the model");
    // In alpha, bare --resume continues alpha's session with its conversation.
    let mock = answer_mock(1);
    let out = run_in(&dir, "alpha", &mock, &["--resume"], "and then?");
    out.assert_code(0);
    assert_eq!(out.stream()[0]["sessionId"], alpha.as_str());
    assert_eq!(user_messages(&mock), ["alpha secret plans", "and then?"]);
    // An explicit id resumes from anywhere.
    let mock = answer_mock(1);
    let out = run_in(&dir, "beta", &mock, &["--resume", &alpha], "from beta");
    out.assert_code(0);
    assert_eq!(out.stream()[0]["sessionId"], alpha.as_str());
    // `sessions list` shows this directory's sessions; --all every one, with its directory.
    let mut list = dir.zero().args(&["sessions", "list"]);
    list.cwd = beta.clone();
    let out = list.run();
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        format!("No sessions for {} (1 elsewhere: zero sessions list --all).\n", beta.display())
    );
    let mut list = dir.zero().args(&["sessions", "list", "--all"]);
    list.cwd = beta;
    let out = list.run();
    assert!(out.stdout.starts_with(&alpha), "{out:?}");
    assert!(
        out.stdout.trim_end().ends_with(&format!("({})", dir.path("work/alpha").display())),
        "{out:?}"
    );
    let mut list = dir.zero().args(&["sessions", "list", "--json"]);
    list.cwd = dir.path("work/alpha");
    let listed: Value = serde_json::from_str(&list.run().stdout).unwrap();
    assert_eq!(listed["sessions"][0]["sessionId"], alpha.as_str());
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1);
}

// --- Sessions the user controls ---------------------------------------------------------------

#[test]
fn ephemeral_runs_write_no_session_but_may_read_one() {
    let dir = TestDir::new("ephemeral");
    let mock = answer_mock(1);
    let out = run_in(&dir, ".", &mock, &["--ephemeral"], "leave no trace");
    out.assert_code(0);
    assert!(out.stream()[0].get("sessionId").is_none(), "{out:?}");
    assert!(!dir.sessions().exists(), "no session directory at all");
    let mock = answer_mock(1);
    let id = run_in(&dir, ".", &mock, &[], "remember this").stream()[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let events = dir.sessions().join(&id).join("events.jsonl");
    let before = read(&events);
    let mock = answer_mock(1);
    let out = run_in(&dir, ".", &mock, &["--ephemeral", "--resume", &id], "peek");
    out.assert_code(0);
    assert_eq!(user_messages(&mock), ["remember this", "peek"]);
    assert_eq!(read(&events), before, "the resumed session is unchanged");
    assert_eq!(std::fs::read_dir(dir.sessions()).unwrap().count(), 1);
}

/// A session as an older run left it, last updated `updated`.
fn stored_session(dir: &TestDir, id: &str, updated: &str, text: &str) {
    let event = serde_json::json!({"id": format!("{id}:1"), "sessionId": id, "sequence": 1,
        "type": "message", "createdAt": updated,
        "payload": {"role": "user", "content": text, "source": "exec"}});
    let meta = serde_json::json!({"sessionId": id, "title": text, "cwd": "/somewhere",
        "modelId": "gpt-4.1", "provider": "openai", "createdAt": updated, "updatedAt": updated,
        "eventCount": 1, "lastEventType": "message"});
    dir.write(&format!("data/zero/sessions/{id}/events.jsonl"), &format!("{event}\n"));
    dir.write(&format!("data/zero/sessions/{id}/metadata.json"), &meta.to_string());
}

#[test]
fn sessions_delete_and_prune_remove_what_they_say_and_refuse_a_session_in_use() {
    let dir = TestDir::new("sessions-delete");
    stored_session(&dir, "old_one", "2020-01-01T00:00:00.000Z", "old");
    stored_session(&dir, "old_two", "2020-02-01T00:00:00.000Z", "older");
    stored_session(&dir, "recent", "2999-01-01T00:00:00.000Z", "new");
    let out = dir.zero().args(&["sessions", "prune", "--older-than", "30", "--dry-run"]).run();
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        "Would delete old_two  2020-02-01T00:00:00.000Z\nWould delete old_one  2020-01-01T00:00:00.000Z\n2 session(s) not updated for 30 day(s) would be deleted.\n"
    );
    assert!(dir.sessions().join("old_one").exists(), "a dry run deletes nothing");
    let out = dir.zero().args(&["sessions", "prune", "--older-than", "30"]).run();
    out.assert_code(0);
    assert!(out.stdout.ends_with("2 session(s) not updated for 30 day(s) deleted.\n"), "{out:?}");
    let left: Vec<String> = std::fs::read_dir(dir.sessions())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["recent"]);
    let out = dir.zero().args(&["sessions", "prune", "--older-than", "soon"]).run();
    out.assert_code(2);
    assert_eq!(
        out.stderr,
        "[zero] Invalid --older-than value \"soon\": expected a whole number of days (0 to 100000)\n"
    );
    let out = dir.zero().args(&["sessions", "delete", "nope", "recent"]).run();
    out.assert_code(2);
    assert_eq!(out.stdout, "Deleted session recent\n");
    assert_eq!(out.stderr, "[zero] Zero session not found: nope\n");
    assert!(!dir.sessions().join("recent").exists());
    // A session a run holds is not deleted under it.
    let gate = dir.path("work/gate");
    crate::util::mkfifo(&gate);
    let hold = dir.script(&serde_json::json!({"turns": [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "cat gate"}}]},
        {"text": "held"}
    ]}));
    let mut holder = dir
        .zero()
        .args(&["exec", "-o", "stream-json", "--skip-permissions-unsafe"])
        .args(&["--script", hold.to_str().unwrap(), "hold"])
        .spawn();
    let mut holder_out = std::io::BufReader::new(holder.stdout.take().unwrap());
    crate::util::read_until(&mut holder_out, "\"tool_call\"");
    let id = std::fs::read_dir(dir.sessions()).unwrap().next().unwrap().unwrap().file_name();
    let id = id.to_string_lossy().into_owned();
    let out = dir.zero().args(&["sessions", "delete", &id]).run();
    out.assert_code(2);
    assert!(out.stderr.starts_with(&format!("[zero] Zero session {id} is in use")), "{out:?}");
    std::fs::OpenOptions::new().write(true).open(&gate).unwrap().write_all(b"go\n").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut holder_out, &mut rest).unwrap();
    assert_eq!(holder.wait().unwrap().code(), Some(0), "{rest}");
    dir.zero().args(&["sessions", "delete", &id]).run().assert_code(0);
    assert_eq!(std::fs::read_dir(dir.sessions()).unwrap().count(), 0);
    // A session entry linked elsewhere: the link goes, what it points to stays untouched.
    stored_session(&dir, "elsewhere", "2020-01-01T00:00:00.000Z", "linked");
    let outside = dir.path("outside");
    std::fs::rename(dir.sessions().join("elsewhere"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, dir.sessions().join("elsewhere")).unwrap();
    let out = dir.zero().args(&["sessions", "delete", "elsewhere"]).run();
    out.assert_code(0);
    assert!(!dir.sessions().join("elsewhere").exists());
    let mut kept: Vec<String> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(kept, ["events.jsonl", "metadata.json"], "nothing written or removed there");
    let out = dir.zero().args(&["sessions", "delete", "../outside"]).run();
    out.assert_code(2);
    assert_eq!(out.stderr, "[zero] Invalid Zero session id: ../outside\n");
}

#[test]
fn search_finds_events_in_zeros_shape_redacted() {
    let dir = TestDir::new("search");
    stored_session(&dir, "s_first", "2026-01-01T00:00:00.000Z", "Fix the flaky  Login test");
    stored_session(&dir, "s_second", "2026-02-01T00:00:00.000Z", "login page copy, then test it");
    // Written by an older zero, unredacted: the search must not print it.
    stored_session(
        &dir,
        "s_leaky",
        "2026-03-01T00:00:00.000Z",
        "deploy with key sk-proj-abcdefghijklmnopqrstuvwxyz123456",
    );
    let out = dir.zero().args(&["search", "--json", "LOGIN", "test"]).run();
    out.assert_code(0);
    let result: Value = serde_json::from_str(&out.stdout).unwrap();
    let keys: Vec<&String> = result.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 6);
    assert!(out.stdout.starts_with("{\n  \"query\": \"LOGIN test\",\n  \"normalizedQuery\": \"login test\",\n  \"rootDir\": "), "{}", out.stdout);
    assert_eq!(result["searchedSessions"], 3);
    assert_eq!(result["totalHits"], 2);
    let hits = result["hits"].as_array().unwrap();
    // Newest session first; the second holds both words but not the phrase.
    assert_eq!(hits[0]["session"]["sessionId"], "s_second");
    assert_eq!(
        hits[0]["event"],
        serde_json::json!({"id": "s_second:1", "sequence": 1, "type": "message", "createdAt": "2026-02-01T00:00:00.000Z"})
    );
    assert_eq!(hits[0]["match"], serde_json::json!({"start": 0, "end": 26}));
    assert_eq!(hits[1]["session"]["sessionId"], "s_first");
    assert_eq!(hits[1]["context"], "Fix the flaky  Login test user exec");
    assert_eq!(hits[1]["match"], serde_json::json!({"start": 15, "end": 25}));
    let out = dir.zero().args(&["search", "login", "test", "--limit", "1"]).run();
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        "Found 1 local session event for \"login test\":\n1. s_second #1 message - login page copy, then test it\n   login page copy, then test it user exec\n   cwd: /somewhere | model: gpt-4.1 | provider: openai | updated: 2026-02-01T00:00:00.000Z\n"
    );
    let out = dir.zero().args(&["sessions", "search", "deploy", "--context", "5"]).run();
    out.assert_code(0);
    assert!(!out.stdout.contains("sk-proj-"), "{out:?}");
    assert!(out.stdout.contains("deploy with"), "{out:?}");
    // Secrets under sensitive keys, in headers and in a stored cwd's query, as another Zero
    // version may have stored them.
    let id = "s_headers";
    let event = serde_json::json!({"id": format!("{id}:1"), "sessionId": id, "sequence": 1,
        "type": "tool_result", "createdAt": "2026-04-01T00:00:00.000Z",
        "payload": {"result": "diagnostic json includes OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz1234567890",
            "authorization": "Bearer local-authorization-secret",
            "headers": {"cookie": "zero_session=local-cookie-secret"}}});
    let meta = serde_json::json!({"sessionId": id, "title": "JSON Secret sk-proj-abcdefghijklmnopqrstuvwxyz1234567890",
        "cwd": "/repo/zero?token=local-cwd-secret", "createdAt": "2026-04-01T00:00:00.000Z",
        "updatedAt": "2026-04-01T00:00:00.000Z", "eventCount": 1});
    dir.write(&format!("data/zero/sessions/{id}/events.jsonl"), &format!("{event}\n"));
    dir.write(&format!("data/zero/sessions/{id}/metadata.json"), &meta.to_string());
    for json in [true, false] {
        let mut args = vec!["search", "--context", "240", "diagnostic", "json"];
        if json {
            args.push("--json");
        }
        let out = dir.zero().args(&args).run();
        out.assert_code(0);
        assert!(out.stdout.contains("[REDACTED]"), "{out:?}");
        for secret in [
            "sk-proj-abcdefghij",
            "local-cwd-secret",
            "local-authorization-secret",
            "local-cookie-secret",
        ] {
            assert!(!out.stdout.contains(secret), "{secret} in {out:?}");
        }
    }
    std::fs::remove_dir_all(dir.sessions().join(id)).unwrap();
    let out = dir.zero().args(&["search", "nothing here"]).run();
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        "No local session events matched \"nothing here\". Searched 3 sessions.\n"
    );
    let out = dir.zero().args(&["search", "x", "--type", "tool_result"]).run();
    assert_eq!(out.stdout, "No local session events matched \"x\". Searched 3 sessions.\n");
    let out = dir.zero().args(&["search", "x", "--limit", "many"]).run();
    out.assert_code(2);
    assert_eq!(
        out.stderr,
        "[zero] Invalid --limit value \"many\". Expected a non-negative integer.\n"
    );
}

// --- Inspection commands -------------------------------------------------------------------------

const SAMPLE_KEY: &str = "sk-proj-abcdefghijklmnopqrstuvwxyz1234567890";

#[test]
fn config_prints_the_settings_in_use_and_the_layer_of_each() {
    let dir = TestDir::new("config-cmd");
    let out = dir
        .zero()
        .env("OPENAI_API_KEY", SAMPLE_KEY)
        .env("OPENAI_MODEL", "gpt-4.1")
        .args(&["config", "--json"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stderr, "");
    assert!(!out.stdout.contains(SAMPLE_KEY) && out.stdout.contains("[REDACTED]"));
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["ok"], true);
    let provider = &report["provider"];
    assert_eq!(
        (&provider["configured"], &provider["source"], &provider["model"], &provider["apiKey"]),
        (
            &Value::Bool(true),
            &Value::from("environment"),
            &Value::from("gpt-4.1"),
            &Value::from("[REDACTED]")
        )
    );
    assert_eq!(
        (&provider["modelSource"], &provider["apiKeySource"]),
        (&Value::from("env:OPENAI_MODEL"), &Value::from("env:OPENAI_API_KEY"))
    );
    let layers: Vec<&str> = report["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["source"].as_str().unwrap())
        .collect();
    assert_eq!(layers, ["defaults", "env"]);
    // A profile from the user file, without baseURL (official providers need none).
    dir.write(
        "config/zero/config.json",
        r#"{"activeProvider": "work", "maxTurns": 7, "providers": [{"name": "work", "provider": "anthropic", "model": "claude-sonnet-4.5", "apiKey": "cfg-key-123456"}]}"#,
    );
    let out = dir.zero().args(&["config"]).run();
    out.assert_code(0);
    let config_path = dir.path("config/zero/config.json");
    assert!(!out.stdout.contains("cfg-key-123456"), "{out:?}");
    let body = out.stdout.split_once('\n').unwrap().1;
    assert_eq!(
        body,
        format!("Overall: pass\nLayers:\n  [loaded] defaults\n  [loaded] user {}\nProvider: anthropic (source: profile)\n  model:    claude-sonnet-4.5 (user)\n  baseURL:  https://api.anthropic.com (defaults)\n  API key:  [REDACTED] (user)\n  maxTurns: 7 (user)\n  projectInstructions: true (defaults)\n  promptCache: true (defaults)\n  maxBudgetUsd: none (defaults)\n  addDirs: none (defaults)\n", config_path.display())
    );
    // A profile without a model: its provider's default, which comes from the defaults.
    dir.write(
        "config/zero/config.json",
        r#"{"providers": [{"name": "work", "provider": "anthropic", "apiKey": "cfg-key-123456"}]}"#,
    );
    let out = dir.zero().args(&["config"]).run();
    out.assert_code(0);
    assert!(out.stdout.contains("\n  model:    claude-sonnet-4.5 (defaults)\n"), "{out:?}");
    // A file that cannot be used: exit 3, the layer and the issue say why.
    dir.write(
        "config/zero/config.json",
        r#"{"providers": [{"name": "broken", "baseURL": "not a url", "model": "m"}]}"#,
    );
    let out = dir.zero().args(&["config", "--json"]).run();
    out.assert_code(3);
    assert_eq!(out.stderr, "");
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    let user = report["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["source"] == "user")
        .unwrap()
        .clone();
    assert_eq!(
        (&user["status"], &user["path"]),
        (&Value::from("invalid"), &Value::from(config_path.display().to_string()))
    );
    assert_eq!(report["issues"][0]["id"], "config.user.invalid");
    assert!(report["issues"][0]["message"]
        .as_str()
        .unwrap()
        .ends_with("providers[0].baseURL must be an http(s) URL"));
}

fn check_row(report: &Value, id: &str) -> (String, String) {
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap();
    (check["status"].as_str().unwrap().to_string(), check["message"].as_str().unwrap().to_string())
}

#[test]
fn doctor_checks_each_step_and_says_how_to_fix_what_fails() {
    let dir = TestDir::new("doctor");
    let ids = [
        "config.files",
        "provider.config",
        "provider.model",
        "provider.adapter",
        "provider.connectivity",
        "provider.auth",
        "sandbox",
    ];
    // Everything in order: the endpoint answers (any status is an answer), and the models
    // list takes the key.
    let mock = Mock::start(vec![
        Reply::status(404, "text/plain", "not here"),
        Reply::status(200, "application/json", r#"{"data": []}"#),
    ]);
    let out = dir
        .zero()
        .openai_keyed(&mock.v1(), SAMPLE_KEY, "gpt-4.1")
        .args(&["doctor", "--json"])
        .run();
    out.assert_code(0);
    assert!(!out.stdout.contains(SAMPLE_KEY));
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let got: Vec<&str> =
        report["checks"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(got, ids);
    assert_eq!(report["ok"], true);
    let (status, message) = check_row(&report, "provider.connectivity");
    assert_eq!(status, "pass");
    assert!(message.starts_with(&format!("{} answered HTTP 404 in ", mock.v1())), "{message}");
    assert_eq!(mock.requests()[0].path, "/v1");
    let (status, message) = check_row(&report, "provider.auth");
    assert_eq!(
        (status.as_str(), message),
        ("pass", format!("GET {}/models with the key answered HTTP 200.", mock.v1()))
    );
    let asked = &mock.requests()[1];
    assert_eq!(
        (asked.method.as_str(), asked.path.as_str(), asked.headers.get("authorization")),
        ("GET", "/v1/models", Some(&format!("Bearer {SAMPLE_KEY}")))
    );
    // A key the provider refuses fails, with its message (redacted) and the fix; a server
    // with no models list is a warning.
    let refused =
        format!(r#"{{"error": {{"message": "Incorrect API key provided: {SAMPLE_KEY}"}}}}"#);
    for (reply, code, status, message) in [
        (
            Reply::status(401, "application/json", &refused),
            3,
            "fail",
            "openai-compatible refused the key (HTTP 401): Incorrect API key provided: [REDACTED]",
        ),
        (Reply::status(404, "text/plain", "no"), 0, "warn", ""),
    ] {
        let mock = Mock::start(vec![Reply::status(200, "text/plain", "up"), reply]);
        let out = dir
            .zero()
            .openai_keyed(&mock.v1(), SAMPLE_KEY, "gpt-4.1")
            .args(&["doctor", "--json"])
            .run();
        out.assert_code(code);
        assert!(!out.stdout.contains(SAMPLE_KEY));
        let report: Value = serde_json::from_str(&out.stdout).unwrap();
        let (got, said) = check_row(&report, "provider.auth");
        assert_eq!(got, status, "{said}");
        if status == "fail" {
            assert_eq!(said, message);
            let fix = report["checks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["id"] == "provider.auth")
                .unwrap()["fix"]
                .clone();
            assert_eq!(fix, "Set OPENAI_API_KEY to a valid key of this provider (not expired or revoked); `zero config` shows where the key comes from.");
        } else {
            assert!(said.ends_with("answered HTTP 404: this server lists no models there, so the key could not be checked."), "{said}");
        }
    }
    // A provider name that does not exist: the fix says which ones do.
    let out = dir.zero().env("ZERO_PROVIDER", "bogus").args(&["doctor", "--json"]).run();
    out.assert_code(3);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let check = report["checks"].as_array().unwrap().iter().find(|c| c["id"] == "provider.config");
    assert_eq!(
        check.map(|c| (&c["status"], &c["fix"])),
        Some((
            &Value::from("fail"),
            &Value::from("Set ZERO_PROVIDER to openai, anthropic, google, openai-compatible, azure or scripted, or unset it.")
        ))
    );
    // Every wire format asks its own models list, with its own key header.
    let anthropic = Mock::start(vec![
        Reply::status(200, "text/plain", "up"),
        Reply::status(200, "application/json", "{}"),
    ]);
    let out = dir
        .zero()
        .env("ANTHROPIC_API_KEY", "ant-key-123456")
        .env("ANTHROPIC_BASE_URL", &anthropic.url())
        .env("ZERO_PROVIDER", "anthropic")
        .args(&["doctor", "--json"])
        .run();
    out.assert_code(0);
    let asked = &anthropic.requests()[1];
    assert_eq!(
        (asked.path.as_str(), asked.headers.get("x-api-key").map(String::as_str)),
        ("/v1/models", Some("ant-key-123456"))
    );
    let gemini = Mock::start(vec![
        Reply::status(200, "text/plain", "up"),
        Reply::status(200, "application/json", "{}"),
    ]);
    let out = dir
        .zero()
        .env("GEMINI_API_KEY", "gem-key-123456")
        .env("GEMINI_BASE_URL", &gemini.url())
        .env("ZERO_PROVIDER", "google")
        .args(&["doctor", "--json"])
        .run();
    out.assert_code(0);
    let asked = &gemini.requests()[1];
    assert_eq!(
        (asked.path.as_str(), asked.headers.get("x-goog-api-key").map(String::as_str)),
        ("/v1beta/models", Some("gem-key-123456"))
    );
    // A key that would travel in the clear to another host is named, however the URL hides
    // the host.
    for url in ["http://localhost:1@attacker.example/v1", "http://127.0.0.1.attacker.example/v1"] {
        let out = dir.zero().openai(url, "gpt-4.1").args(&["doctor", "--json", "--offline"]).run();
        let report: Value = serde_json::from_str(&out.stdout).unwrap();
        let (status, message) = check_row(&report, "provider.adapter");
        assert_eq!(status, "warn", "{url}: {message}");
        assert!(
            message.contains("attacker.example, so the API key travels unencrypted"),
            "{message}"
        );
    }
    // --offline does not touch the network.
    let out = dir
        .zero()
        .openai("http://127.0.0.1:1/v1", "gpt-4.1")
        .args(&["doctor", "--json", "--offline"])
        .run();
    out.assert_code(0);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        check_row(&report, "provider.connectivity"),
        ("warn".into(), "Skipped (--offline).".into())
    );
    assert_eq!(check_row(&report, "provider.auth"), ("warn".into(), "Skipped (--offline).".into()));
    // Nothing listens: a failure, with its fix, exit 3.
    let out = dir.zero().openai("http://127.0.0.1:1/v1", "gpt-4.1").args(&["doctor"]).run();
    out.assert_code(3);
    assert!(out.stdout.contains("\n[fail] provider.connectivity - Provider unreachable: 127.0.0.1:1: connection refused\n  fix: Check the network, a proxy, and the base URL; `zero doctor --offline` skips this check.\n"), "{out:?}");
    // No provider at all.
    let out = dir.zero().args(&["doctor", "--offline"]).run();
    out.assert_code(3);
    let rows: Vec<&str> = out.stdout.lines().skip(1).collect();
    assert_eq!(rows[0], "Overall: fail");
    assert!(rows[2].starts_with("[fail] provider.config - No LLM provider configured."), "{out:?}");
    assert!(rows[3].starts_with("  fix: Set OPENAI_API_KEY"), "{out:?}");
    assert_eq!(rows[4], "[warn] provider.model - Skipped: provider settings are missing.");
}

// --- No silent ignores -------------------------------------------------------------------------

#[test]
fn options_without_effect_are_warned_about_by_name() {
    let dir = TestDir::new("ignored-options");
    let mock = answer_mock(1);
    let out = dir
        .zero()
        .openai(&mock.v1(), "gpt-4.1")
        .args(&["exec", "-r", "high", "--profile", "deep", "-m", "gpt-4.1"])
        .args(&["--enabled-tools", "read_file,bash", "hi"])
        .run();
    out.assert_code(0);
    assert_eq!(
        out.rows(),
        "[zero] WARNING: --profile deep is ignored: --model gpt-4.1 names the model.\n\
         [zero] WARNING: GPT-4.1 does not take a reasoning effort; --reasoning-effort high is ignored.\n\
         [zero] WARNING: --enabled-tools bash: --auto low does not let it run (it needs --auto high); it is not offered to the model.\n"
    );
    let body = mock.requests()[0].json();
    assert_eq!(body["model"], "gpt-4.1", "-m won over --profile");
    assert!(body.get("reasoning_effort").is_none());
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read_file"]);
    let script = dir.script(&serde_json::json!({"turns": [{"text": "ok"}]}));
    let out = dir
        .zero()
        .args(&[
            "exec",
            "--script",
            script.to_str().unwrap(),
            "-r",
            "low",
            "--profile",
            "fast",
            "hi",
        ])
        .run();
    out.assert_code(0);
    assert_eq!(
        out.rows(),
        "[zero] WARNING: --profile fast is ignored: the scripted provider plays its script.\n\
         [zero] WARNING: The scripted provider takes no reasoning effort; --reasoning-effort low is ignored.\n"
    );
    // Options that mean nothing here: a schema version without stream-json, bash's
    // environment when bash does not run, an output limit on a script.
    let out = dir
        .zero()
        .env("SOME_VAR", "x")
        .args(&["exec", "-o", "json", "--schema-version", "2", "--shell-env", "inherit"])
        .args(&["--shell-env-keep", "SOME_VAR", "--max-output-tokens", "100"])
        .args(&["--script", script.to_str().unwrap(), "hi"])
        .run();
    out.assert_code(0);
    let warnings: Vec<String> = out
        .events()
        .iter()
        .filter(|e| e["type"] == "warning")
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        warnings,
        [
            "--max-output-tokens 100 is ignored: the scripted provider plays its script.",
            "--schema-version is ignored: it versions stream-json lines, and this run reads and writes none (-o stream-json or -i stream-json).",
            "--shell-env is ignored: bash does not run in this run, as it needs --auto high (or --skip-permissions-unsafe).",
            "--shell-env-keep is ignored: bash does not run in this run, as it needs --auto high (or --skip-permissions-unsafe).",
        ]
    );
    // bash's sandbox flags mean as little where bash does not run, --sandbox-required too
    // (whatever this kernel enforces).
    let out = dir
        .zero()
        .env("ZERO_DEBUG_SANDBOX", "none")
        .args(&["exec", "-o", "json", "--sandbox", "read-only", "--sandbox-writable", "."])
        .args(&["--sandbox-caches", "off", "--sandbox-network", "off", "--sandbox-required"])
        .args(&["--script", script.to_str().unwrap(), "hi"])
        .run();
    out.assert_code(0);
    let warnings: Vec<String> = out
        .events()
        .iter()
        .filter(|e| e["type"] == "warning")
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    let not_run = "is ignored: bash does not run in this run, as it needs --auto high (or --skip-permissions-unsafe).";
    let mut expected: Vec<String> = [
        "--sandbox",
        "--sandbox-network",
        "--sandbox-writable",
        "--sandbox-caches",
        "--sandbox-required",
    ]
    .iter()
    .map(|flag| format!("{flag} {not_run}"))
    .collect();
    expected.push("The bash sandbox is not fully enforced: writes are not confined (--sandbox read-only): this kernel has no Landlock; network sockets (--sandbox-network off), typing into a terminal (TIOCSTI), setting extended attributes are not refused: this kernel has no seccomp filters.".to_string());
    assert_eq!(warnings, expected);
    // Variables an active config profile overrides: named, with the profile, in the run
    // and in `zero config`.
    dir.write(
        "config/zero/config.json",
        r#"{"providers": [{"name": "team", "provider": "openai-compatible", "baseURL": "http://127.0.0.1:1/v1", "model": "m"}]}"#,
    );
    let out = dir
        .zero()
        .env("OPENAI_MODEL", "gpt-4o")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:2/v1")
        .env("ZERO_MAX_RETRIES", "0")
        .args(&["exec", "-o", "stream-json", "hi"])
        .run();
    out.assert_code(3);
    let expect = |name: &str| {
        format!("{name} is ignored: the config profile \"team\" is in use and sets the provider, model and base URL.")
    };
    let warned: Vec<Value> = out
        .stream()
        .into_iter()
        .filter(|e| e["type"] == "warning")
        .map(|e| e["message"].clone())
        .collect();
    assert_eq!(
        warned,
        [Value::from(expect("OPENAI_MODEL")), Value::from(expect("OPENAI_BASE_URL"))]
    );
    let out = dir.zero().env("OPENAI_MODEL", "gpt-4o").args(&["config", "--json"]).run();
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let env_layer =
        report["layers"].as_array().unwrap().iter().find(|l| l["source"] == "env").unwrap();
    assert_eq!(env_layer["overridden"], serde_json::json!(["OPENAI_MODEL"]));
    assert!(
        report["issues"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["id"] == "config.env.OPENAI_MODEL.overridden"
                && i["message"] == expect("OPENAI_MODEL")),
        "{report}"
    );
}

#[test]
fn autonomy_levels_mean_read_then_edit_then_run() {
    let dir = TestDir::new("autonomy");
    let script = dir.script(&serde_json::json!({"turns": [
        {"toolCalls": [
            {"name": "write_file", "arguments": {"path": "note.txt", "content": "hi\n"}},
            {"name": "bash", "arguments": {"command": "touch ran"}},
        ]},
        {"text": "done"}
    ]}));
    let results = |level: &str| {
        let out = dir
            .zero()
            .args(&[
                "exec",
                "-o",
                "stream-json",
                "--auto",
                level,
                "--script",
                script.to_str().unwrap(),
                "go",
            ])
            .run();
        out.assert_code(0);
        let written = dir.path("work/note.txt").exists();
        let ran = dir.path("work/ran").exists();
        let _ = std::fs::remove_file(dir.path("work/note.txt"));
        let _ = std::fs::remove_file(dir.path("work/ran"));
        let errors: Vec<String> = out
            .stream()
            .iter()
            .filter(|e| e["type"] == "tool_result" && e["status"] == "error")
            .map(|e| e["output"].as_str().unwrap().to_string())
            .collect();
        (written, ran, errors)
    };
    let (written, ran, errors) = results("low");
    assert!(!written && !ran);
    assert!(
        errors[0].contains("can allow it with --auto medium or --skip-permissions-unsafe"),
        "{errors:?}"
    );
    let (written, ran, errors) = results("medium");
    assert!(written && !ran, "medium edits files but runs nothing");
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("Error: Permission required for bash:")
            && errors[0].contains("--auto high"),
        "{errors:?}"
    );
    let (written, ran, errors) = results("high");
    assert!(written && ran && errors.is_empty(), "{errors:?}");
}

#[test]
fn the_config_file_is_checked_and_unknown_keys_are_one_line_warnings() {
    let dir = TestDir::new("config-file-rules");
    let path = dir.write("config/zero/config.json", r#"{"activeProvider": "wrok", "providers": [{"name": "work", "model": "gpt-4.1", "apiKey": "k-123456"}]}"#);
    let out = dir.zero().args(&["exec", "-o", "stream-json", "hi"]).run();
    out.assert_code(3);
    assert_eq!(code_and_recoverable(&out), ("config_error".to_string(), false));
    assert_eq!(
        error_of(&out)["message"],
        format!(
            "Invalid config {}: activeProvider \"wrok\" names no entry of providers (known: work)",
            path.display()
        )
        .as_str()
    );
    dir.write("config/zero/config.json", r#"{"maxTurn": 3, "theme": "dark", "providers": []}"#);
    let script = dir.script(&serde_json::json!({"turns": [{"text": "ok"}]}));
    let out = dir.zero().args(&["exec", "--script", script.to_str().unwrap(), "hi"]).run();
    out.assert_code(0);
    assert_eq!(
        out.rows(),
        format!("[zero] WARNING: Config {p}: unknown key \"maxTurn\" is ignored (did you mean \"maxTurns\"?)\n[zero] WARNING: Config {p}: unknown key \"theme\" is ignored\n", p = path.display())
    );
}

#[test]
fn unknown_flags_and_commands_suggest_the_closest() {
    let dir = TestDir::new("suggest");
    let out = dir.zero().args(&["exec", "--modle", "gpt-4.1", "hi"]).run();
    out.assert_code(2);
    assert_eq!(
        out.stderr,
        "[zero] invalid option '--modle' (did you mean \"--model\"?) (see zero exec --help)\n"
    );
    let out = dir.zero().args(&["sesions", "list"]).run();
    out.assert_code(2);
    assert_eq!(out.stderr, "[zero] unknown command \"sesions\" (did you mean \"sessions\"?); commands: exec, acp, sessions, search, config, doctor, mcp, redact, schema, completions (see zero --help)\n");
    let out = dir.zero().args(&["sessions", "lsit"]).run();
    out.assert_code(2);
    assert_eq!(out.stderr, "[zero] unknown sessions command \"lsit\" (did you mean \"list\"?); expected list, show, delete, prune or search\n");
    let out = dir.zero().args(&["doctor", "--ofline"]).run();
    out.assert_code(2);
    assert_eq!(
        out.stderr,
        "[zero] invalid option '--ofline' for zero doctor (did you mean \"--offline\"?)\n"
    );
}

#[test]
fn list_tools_needs_no_provider_and_shows_the_schema_the_model_gets() {
    let dir = TestDir::new("list-tools-json");
    let out = dir.zero().args(&["exec", "--list-tools", "-o", "json"]).run();
    out.assert_code(0);
    assert_eq!(out.stderr, "");
    let lines: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1], serde_json::json!({"type": "done", "exit_code": 0}));
    let tools = lines[0]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 9);
    let bash = tools.iter().find(|t| t["name"] == "bash").unwrap();
    assert_eq!(
        (&bash["enabled"], &bash["withheld"], &bash["side_effect"]),
        (
            &Value::Bool(false),
            &Value::from("needs --auto high (or --skip-permissions-unsafe)"),
            &Value::from("shell")
        )
    );
    // The schemas are exactly those a run sends to the model.
    let mock = answer_mock(1);
    dir.zero().openai(&mock.v1(), "local-coder").args(&["exec", "hi"]).run().assert_code(0);
    let sent = mock.requests()[0].json()["tools"].clone();
    for offered in sent.as_array().unwrap() {
        let function = &offered["function"];
        let listed = tools.iter().find(|t| t["name"] == function["name"]).unwrap();
        assert_eq!(listed["enabled"], true);
        assert_eq!(listed["parameters"], function["parameters"]);
        assert_eq!(listed["description"], function["description"]);
    }
    assert_eq!(
        sent.as_array().unwrap().len(),
        tools.iter().filter(|t| t["enabled"] == true).count()
    );
    // Without a provider, a bad flag is still a usage error.
    let out = dir.zero().args(&["exec", "--list-tools", "--provider", "bogus"]).run();
    out.assert_code(2);
}

// --- README claims ---------------------------------------------------------------------------

#[test]
fn usage_is_one_event_per_provider_call_that_reports_it_and_none_otherwise() {
    use crate::mock::openai;
    let dir = TestDir::new("usage-claim");
    dir.write("work/a.txt", "a\n");
    // The first call reports its tokens, the second (a server without usage support) does not.
    let mut silent = vec![openai::text("done"), openai::finish("stop"), openai::done()];
    let mut first = openai::tool_turn("c1", "read_file", r#"{"path":"a.txt"}"#);
    first.insert(first.len() - 1, openai::usage(7, 3));
    let mock = Mock::start(vec![Reply::sse(&first), Reply::sse(&std::mem::take(&mut silent))]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "go"])
        .run();
    out.assert_code(0);
    let usage: Vec<Value> = out.stream().into_iter().filter(|e| e["type"] == "usage").collect();
    assert_eq!(usage.len(), 1, "{out:?}");
    assert_eq!(
        (&usage[0]["promptTokens"], &usage[0]["completionTokens"]),
        (&Value::from(7), &Value::from(3))
    );
}

#[test]
fn scripts_may_be_a_bare_array_and_must_be_regular_files() {
    let dir = TestDir::new("script-format");
    dir.write("work/turns.json", r#"[{"text": "from an array"}]"#);
    let out = dir.zero().args(&["exec", "--script", "turns.json", "hi"]).run();
    out.assert_code(0);
    assert_eq!(out.stdout, "from an array\n");
    let fifo = dir.path("work/fifo.json");
    crate::util::mkfifo(&fifo);
    let out = dir.zero().args(&["exec", "--script", "fifo.json", "hi"]).run();
    out.assert_code(3);
    assert_eq!(
        out.stderr,
        format!("[zero] Cannot read script {}: it is not a regular file\n", fifo.display())
    );
}

#[test]
fn list_directory_leaves_out_git_node_modules_and_ignored_entries_only() {
    let dir = TestDir::new("list-skip");
    let names = [
        ".git",
        "node_modules",
        "dist",
        "build",
        ".next",
        "coverage",
        "tmp",
        "src",
        "target",
        ".github",
    ];
    for name in names {
        dir.write(&format!("work/{name}/inside.txt"), "x\n");
    }
    dir.write("work/.ignore", "target/\n");
    let script = dir.script(&serde_json::json!({"turns": [
        {"toolCalls": [{"name": "list_directory", "arguments": {"path": "."}}]},
        {"text": "listed"}
    ]}));
    let out = dir
        .zero()
        .args(&["exec", "-o", "stream-json", "--script", script.to_str().unwrap(), "ls"])
        .run();
    out.assert_code(0);
    let result = out.stream().into_iter().find(|e| e["type"] == "tool_result").unwrap();
    let listing = result["output"].as_str().unwrap();
    let names: Vec<&str> = listing
        .lines()
        .skip(2)
        .map(|l| l.trim_start_matches(|c: char| !c.is_ascii()).trim().trim_end_matches('/'))
        .collect();
    assert_eq!(
        names,
        [".github", ".ignore", ".next", "build", "coverage", "dist", "src", "tmp"],
        "{listing}"
    );
}

#[test]
fn provider_calls_go_through_the_proxy_of_the_environment_unless_no_proxy_or_loopback() {
    let dir = TestDir::new("proxy-claim");
    // The "proxy" refuses the tunnel: all this test needs is to see it asked.
    let proxy = Mock::start(vec![Reply::status(403, "text/plain", "no")]);
    let target = "http://llm.provider.test/v1";
    let out = dir
        .zero()
        .openai(target, "local-coder")
        .env("HTTP_PROXY", &proxy.url())
        .env("ZERO_MAX_RETRIES", "0")
        .args(&["exec", "hi"])
        .run();
    out.assert_code(3);
    let asked = proxy.requests();
    assert_eq!(asked.len(), 1, "{out:?}");
    assert_eq!(
        (asked[0].method.as_str(), asked[0].path.as_str()),
        ("CONNECT", "llm.provider.test:80")
    );
    // NO_PROXY names the host (or a domain above it): no proxy is asked.
    for no_proxy in ["llm.provider.test", ".provider.test", "provider.test:80", "*"] {
        let bypass = Mock::start(vec![]);
        let out = dir
            .zero()
            .openai(target, "local-coder")
            .env("HTTP_PROXY", &bypass.url())
            .env("NO_PROXY", no_proxy)
            .env("ZERO_MAX_RETRIES", "0")
            .args(&["exec", "hi"])
            .run();
        out.assert_code(3);
        assert!(bypass.requests().is_empty(), "NO_PROXY={no_proxy}");
    }
    // A loopback server (a local Ollama, say) is reached directly, whatever the proxy.
    let local = Mock::start(vec![Reply::sse(&crate::mock::openai::answer(&["local"], 1, 1))]);
    let unused = Mock::start(vec![]);
    for variable in ["HTTP_PROXY", "http_proxy", "ALL_PROXY"] {
        let out = dir
            .zero()
            .openai(&local.v1(), "local-coder")
            .env(variable, &unused.url())
            .args(&["exec", "--ephemeral", "hi"])
            .run();
        if variable == "HTTP_PROXY" {
            out.assert_code(0);
            assert_eq!(out.stdout, "local\n");
        }
        assert!(unused.requests().is_empty(), "{variable}: the proxy was asked");
    }
}

/// The README's ```json blocks, in order.
fn readme_json_blocks() -> Vec<String> {
    let readme = read(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    let readme = readme.replace("```json config\n", "```json\n");
    readme.split("```json\n").skip(1).map(|b| b.split("```").next().unwrap().to_string()).collect()
}

#[test]
fn the_readme_config_and_script_examples_work_as_written() {
    let dir = TestDir::new("readme-examples");
    let blocks = readme_json_blocks();
    let config = blocks.iter().find(|b| b.contains("\"activeProvider\"")).unwrap();
    dir.write("config/zero/config.json", &config.replace('…', "k-abcdef"));
    let out = dir.zero().args(&["config", "--json"]).run();
    out.assert_code(0);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["provider"]["model"], "claude-sonnet-4.5");
    assert_eq!(report["issues"], serde_json::json!([]));
    // The registry extension example: a model the config adds, called by its alias.
    let models = blocks.iter().find(|b| b.contains("\"models\"")).unwrap();
    dir.write("config/zero/config.json", models);
    let mock = Mock::start(vec![Reply::sse(&crate::mock::openai::answer(&["ok"], 1000, 100))]);
    let out =
        dir.zero().openai(&mock.v1(), "llama").args(&["exec", "-o", "stream-json", "hi"]).run();
    out.assert_code(0);
    assert_eq!(mock.requests()[0].json()["model"], "meta-llama/Llama-3.3-70B");
    assert!(out.stream().iter().any(|e| e["type"] == "usage" && e["costUsd"].is_number()));
    std::fs::remove_file(dir.path("config/zero/config.json")).unwrap();
    let script = blocks.iter().find(|b| b.contains("\"turns\"")).unwrap();
    dir.write("work/README.md", "# readme\n");
    dir.write("work/example.json", script);
    let out =
        dir.zero().args(&["exec", "-o", "stream-json", "--script", "example.json", "go"]).run();
    // The third turn is never played: the second ends the run with its answer.
    out.assert_code(0);
    assert_eq!(
        out.types(),
        [
            "run_start",
            "text",
            "text",
            "tool_call",
            "usage",
            "tool_result",
            "text",
            "final",
            "run_end"
        ]
    );
}

#[test]
fn a_long_command_is_one_row_cut_with_an_ellipsis() {
    let dir = TestDir::new("long-row");
    let command = format!("echo {}\necho second line", "x".repeat(300));
    let script = dir.script(&serde_json::json!({"turns": [
        {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
        {"text": "done"}
    ]}));
    let out = dir
        .zero()
        .args(&["exec", "--auto", "high", "--script", script.to_str().unwrap(), "go"])
        .run();
    out.assert_code(0);
    let shown: String = format!("echo {}", "x".repeat(300)).chars().take(120).collect();
    assert_eq!(
        out.rows(),
        format!("[zero] WARNING: bash runs in its sandbox (--sandbox workspace-write): commands write only in the workspace, its --add-dir directories, the temp directories and the build caches; network on.\n[tool] bash: {shown}...\n[result] ok\n")
    );
}

#[test]
fn prompts_and_scripts_have_a_size_limit() {
    let dir = TestDir::new("input-limits");
    let big = "x".repeat(16 * 1024 * 1024 + 1);
    let out = dir
        .zero()
        .openai("http://127.0.0.1:1/v1", "m")
        .args(&["exec", "-"])
        .stdin(big.clone())
        .run();
    out.assert_code(2);
    assert_eq!(out.stderr, "[zero] The prompt on stdin is larger than 16 MiB\n");
    let file = dir.write("work/big.txt", &big);
    let out =
        dir.zero().openai("http://127.0.0.1:1/v1", "m").args(&["exec", "-f", "big.txt"]).run();
    out.assert_code(2);
    assert_eq!(
        out.stderr,
        format!("[zero] Prompt file is larger than 16 MiB: {}\n", file.display())
    );
    let script = dir.write("work/big.json", &format!("{{\"turns\": [{{\"text\": \"{big}\"}}]}}"));
    let out = dir.zero().args(&["exec", "--script", "big.json", "hi"]).run();
    out.assert_code(3);
    assert_eq!(
        out.stderr,
        format!("[zero] Cannot read script {}: it is larger than 16 MiB\n", script.display())
    );
}
