//! The command-line surface: help, version, and the checks that happen before any provider.

use crate::util::TestDir;

#[test]
fn version_and_help_exit_zero_and_describe_every_flag() {
    let dir = TestDir::new("help");
    for args in [&["--version"][..], &["-V"]] {
        let out = dir.zero().args(args).run();
        out.assert_code(0);
        assert_eq!(out.stdout, "0.1.0\n");
        assert_eq!(out.stderr, "");
    }
    let root = dir.zero().args(&["--help"]).run();
    root.assert_code(0);
    assert!(root.stdout.contains("zero exec") && root.stdout.contains("zero -p"));
    let exec = dir.zero().args(&["exec", "--help"]).run();
    exec.assert_code(0);
    assert_eq!(exec.stderr, "");
    assert!(exec.stdout.starts_with("Usage: zero exec"));
    for flag in [
        "--file",
        "--model",
        "--profile",
        "--reasoning-effort",
        "--auto",
        "--enabled-tools",
        "--disabled-tools",
        "--list-tools",
        "--cwd",
        "--input-format",
        "--output-format",
        "--resume",
        "--fork",
        "--skip-permissions-unsafe",
        "--max-turns",
        "--provider",
        "--script",
        "--redact-env",
        "stream-json",
    ] {
        assert!(exec.stdout.contains(flag), "exec --help lacks {flag}");
    }
}

#[test]
fn format_errors_go_to_stderr_before_anything_else() {
    let dir = TestDir::new("formats");
    let out = dir.zero().args(&["exec", "-o", "xml", "hi"]).run();
    out.assert_code(2);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("Invalid output format \"xml\"") && out.stderr.contains("stream-json"),
        "{out:?}"
    );
    let out = dir.zero().args(&["exec", "-i", "yaml", "hi"]).run();
    out.assert_code(2);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("Invalid input format \"yaml\""), "{out:?}");
}

#[test]
fn usage_errors_come_before_provider_setup() {
    let dir = TestDir::new("usage");
    let out = dir.zero().args(&["exec"]).run();
    out.assert_code(2);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("Prompt required"), "{out:?}");
    let out = dir.zero().args(&["exec", "--auto", "chaos", "hi"]).run();
    out.assert_code(2);
    assert!(out.stderr.contains("Invalid autonomy level"), "{out:?}");
    let out = dir.zero().args(&["exec", "--enabled-tools", "missing_tool", "hi"]).run();
    out.assert_code(2);
    assert!(out.stderr.contains("Unknown tool: missing_tool"), "{out:?}");
    for key in [None, Some("sk-test-123456789")] {
        let mut run = dir.zero().args(&["exec", "--resume", "abc", "--fork", "def", "hi"]);
        if let Some(key) = key {
            run = run.env("OPENAI_API_KEY", key);
        }
        let out = run.run();
        out.assert_code(2);
        assert!(out.stderr.contains("Use either --resume or --fork, not both"), "{out:?}");
        assert!(!out.stderr.contains("No LLM provider configured"));
    }
}

#[test]
fn session_selection_errors_are_usage_errors() {
    let dir = TestDir::new("select");
    let out = dir.zero().args(&["exec", "hello", "--resume"]).env("OPENAI_API_KEY", "k").run();
    out.assert_code(2);
    assert!(
        out.stderr.contains("[zero] No Zero sessions available to resume: this workspace ("),
        "{out:?}"
    );
    let out =
        dir.zero().args(&["exec", "--fork", "missing", "hello"]).env("OPENAI_API_KEY", "k").run();
    out.assert_code(2);
    assert!(out.stderr.contains("Zero session not found: missing"), "{out:?}");
    let out = dir.zero().args(&["exec", "--resume=../evil", "hello"]).run();
    out.assert_code(2);
    assert!(out.stderr.contains("Invalid Zero session id: ../evil"), "{out:?}");
}

#[test]
fn list_tools_needs_no_prompt() {
    let dir = TestDir::new("list-tools");
    let command = r#"printf '{"provider":"openai-compatible","base_url":"http://127.0.0.1:9/v1","model":"local-coder"}'"#;
    let out = dir
        .zero()
        .args(&["exec", "--list-tools", "--enabled-tools", "read_file,grep"])
        .env("ZERO_PROVIDER_COMMAND", command)
        .run();
    out.assert_code(0);
    assert_eq!(out.stderr, "");
    assert_eq!(
        out.stdout,
        "Tools visible to model (auto):\n  read_file      read             allow - Reads file contents without modifying files.\n  grep           read             allow - Searches file paths and matching lines without modifying files.\n"
    );
    let out = dir
        .zero()
        .args(&["exec", "--list-tools", "--auto", "high", "-o", "stream-json"])
        .env("ZERO_PROVIDER_COMMAND", command)
        .run();
    out.assert_code(0);
    let events = out.stream();
    assert_eq!(out.types(), ["run_start", "final", "run_end"]);
    assert!(events[0].get("sessionId").is_none());
    assert!(events[1]["text"].as_str().unwrap().contains("apply_patch"));
    assert!(!dir.sessions().exists(), "--list-tools creates no session");
}

#[test]
fn the_root_command_takes_p() {
    let dir = TestDir::new("root");
    let out = dir.zero().run();
    out.assert_code(2);
    assert!(out.stderr.contains("no command given"), "{out:?}");
    let script = dir.write("s.json", r#"{"turns": [{"text": "pong"}]}"#);
    let out = dir
        .zero()
        .args(&["-p", "ping", "--provider", "scripted", "--script", script.to_str().unwrap()])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, "pong\n");
}

#[test]
fn exec_takes_the_prompt_as_a_flag_too_but_not_twice() {
    let dir = TestDir::new("prompt-flag");
    let script = dir.write("script.json", r#"{"turns": [{"text": "ok"}]}"#);
    let script = script.to_str().unwrap();
    let out = dir.zero().args(&["exec", "-o", "json", "--script", script, "--prompt", "hi"]).run();
    out.assert_code(0);
    let session = std::fs::read_dir(dir.sessions()).unwrap().next().unwrap().unwrap().path();
    let journal = crate::util::read(&session.join("events.jsonl"));
    assert!(journal.contains("\"content\":\"hi\""), "{journal}");
    let out = dir.zero().args(&["exec", "--script", script, "--prompt", "hi", "there"]).run();
    out.assert_code(2);
    assert_eq!(out.stderr, "[zero] Give the prompt either as words or with --prompt, not both.\n");
    // `-` still appends stdin to it; live mode takes none.
    let out = dir
        .zero()
        .args(&["exec", "-o", "json", "--ephemeral", "--script", script, "--prompt", "hi", "-"])
        .stdin("more")
        .run();
    out.assert_code(0);
    let out = dir
        .zero()
        .args(&["exec", "--live", "-i", "stream-json", "-o", "stream-json", "--prompt", "x"])
        .args(&["--script", script])
        .stdin("")
        .run();
    out.assert_code(2);
    assert_eq!(
        out.events()[0]["message"],
        "--live reads its turns from stdin: it takes no --prompt."
    );
    // `-p` is named as typed when a flag follows it, and `--` is no value.
    let out = dir.zero().args(&["-p", "--prompt", "hi"]).run();
    assert!(
        out.stderr.starts_with("[zero] -p needs a value, but the next word is the flag --prompt"),
        "{out:?}"
    );
    let out = dir.zero().args(&["exec", "-m", "--", "hi"]).run();
    assert!(
        out.stderr.starts_with("[zero] --model needs a value, but the next word is the flag --"),
        "{out:?}"
    );
}

#[test]
fn a_flag_where_a_value_belongs_is_named_with_the_flag_it_follows() {
    let dir = TestDir::new("flag-as-value");
    let out = dir.zero().args(&["exec", "--model", "--output-format", "json", "hello"]).run();
    out.assert_code(2);
    assert_eq!(
        out.stderr,
        "[zero] --model needs a value, but the next word is the flag --output-format (write --model=VALUE for a value that starts with '-') (see zero exec --help)\n"
    );
    // In the format asked for later on the line, too.
    let out =
        dir.zero().args(&["exec", "-m", "-o", "stream-json", "-o", "stream-json", "hello"]).run();
    out.assert_code(2);
    let events = out.events();
    assert_eq!(
        events[0]["message"],
        "--model needs a value, but the next word is the flag -o (write --model=VALUE for a value that starts with '-') (see zero exec --help)"
    );
    // `=` says the value is meant; `-` alone is stdin, not a flag.
    let script = dir.write("script.json", r#"{"turns": [{"text": "ok"}]}"#);
    let out = dir
        .zero()
        .args(&["exec", "--script", script.to_str().unwrap(), "--model=-x", "-f", "-", "hi"])
        .stdin("more")
        .run();
    assert!(!out.stderr.contains("needs a value"), "{out:?}");
}
