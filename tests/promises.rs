//! The CLI keeps its word: error codes and `recoverable` as documented, output a script can
//! capture, prompts and paths where users expect them, sessions scoped to their workspace,
//! and no option accepted in silence.

use serde_json::Value;

use crate::mock::{Mock, Reply};
use crate::util::{Output, TestDir};

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

// --- Error codes and `recoverable` (A2) -------------------------------------------------------

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
        "Unknown provider \"bogus\". Expected openai, anthropic, google, openai-compatible or scripted.";
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
