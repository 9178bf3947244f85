//! What the model is told and what it costs: `AGENTS.md` project instructions, the system
//! prompt flags, prompt caching, fitting a request to the context window, the spending cap and
//! extra directories, each asserted on what reached the mock provider.

use serde_json::{json, Value};

use crate::mock::{anthropic, openai, Mock, Reply};
use crate::util::{TestDir, Zero};

const EXEC_2: [&str; 5] = ["exec", "-o", "stream-json", "--schema-version", "2"];

/// The messages of a chat-completions request, as (role, content) pairs.
fn chat_messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let content = match &m["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (m["role"].as_str().unwrap().to_string(), content)
        })
        .collect()
}

/// A tool call of `name` with `args`, reporting `prompt` prompt tokens.
fn call_turn(id: &str, name: &str, args: &str, prompt: u64) -> Reply {
    Reply::sse(&[
        openai::call_start(0, id, name),
        openai::call_args(0, args),
        openai::finish("tool_calls"),
        openai::usage(prompt, 5),
        openai::done(),
    ])
}

fn compatible(dir: &TestDir, mock: &Mock) -> Zero {
    dir.zero().openai(&mock.v1(), "local-model")
}

/// A repository at `work/` (it holds `.git`) with instructions at three levels, and the
/// user's own under `~/.config/zero`.
fn instructed(name: &str) -> TestDir {
    let dir = TestDir::new(name);
    std::fs::create_dir_all(dir.path("work/.git")).unwrap();
    dir.write("work/AGENTS.md", "Root: run cargo test.\n");
    dir.write("work/app/AGENTS.md", "App: no unwrap.\n");
    dir.write("work/app/core/AGENTS.md", "Core: keep it small.\n");
    dir.write("home/.config/zero/AGENTS.md", "Mine: answer in English.\n");
    dir
}

const INSTRUCTIONS: &str = "Instructions from AGENTS.md files (yours first, then the repository's from its root down; later files are nearer the working directory and take precedence):\n\n--- ~/.config/zero/AGENTS.md ---\nMine: answer in English.\n\n--- AGENTS.md ---\nRoot: run cargo test.\n\n--- app/AGENTS.md ---\nApp: no unwrap.\n\n--- app/core/AGENTS.md ---\nCore: keep it small.\n";

#[test]
fn agents_files_from_the_user_and_the_repository_go_as_their_own_message_root_first() {
    let dir = instructed("agents-order");
    let home_config = dir.path("home/.config").display().to_string();
    let mock = Mock::start(vec![
        Reply::sse(&openai::answer(&["ok"], 10, 2)),
        Reply::sse(&openai::answer(&["again"], 10, 2)),
        Reply::sse(&openai::answer(&["plain"], 10, 2)),
    ]);
    let out = compatible(&dir, &mock)
        .env("XDG_CONFIG_HOME", &home_config)
        .args(&EXEC_2)
        .args(&["-C", "app/core", "hello"])
        .run();
    out.assert_code(0);
    let events = out.events();
    assert_eq!(
        events[0]["instructions"],
        json!(["~/.config/zero/AGENTS.md", "AGENTS.md", "app/AGENTS.md", "app/core/AGENTS.md"])
    );
    let sent = chat_messages(&mock.requests()[0].json());
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0].0, "system");
    assert!(sent[0].1.starts_with("You are Zero"));
    assert_eq!(sent[1], ("user".to_string(), INSTRUCTIONS.to_string()));
    assert_eq!(sent[2], ("user".to_string(), "hello".to_string()));
    // A resumed session gets today's instructions, not a copy of the first run's.
    dir.write("work/app/AGENTS.md", "App: unwrap is fine in tests.\n");
    let session = events[0]["sessionId"].as_str().unwrap().to_string();
    compatible(&dir, &mock)
        .env("XDG_CONFIG_HOME", &home_config)
        .args(&["exec", "-C", "app/core", "--resume", &session, "more"])
        .run()
        .assert_code(0);
    let sent = chat_messages(&mock.requests()[1].json());
    let roles: Vec<&str> = sent.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["system", "user", "user", "assistant", "user"]);
    assert_eq!(sent[1].1, INSTRUCTIONS.replace("App: no unwrap.", "App: unwrap is fine in tests."));
    assert_eq!(sent[2].1, "hello");
    // Turned off: the request is the system prompt and the prompt; schema 1 says nothing.
    let out = compatible(&dir, &mock)
        .env("XDG_CONFIG_HOME", &home_config)
        .args(&["exec", "-o", "stream-json", "-C", "app/core", "--no-project-instructions", "hi"])
        .run();
    out.assert_code(0);
    assert!(out.events()[0].get("instructions").is_none());
    let roles: Vec<String> =
        chat_messages(&mock.requests()[2].json()).into_iter().map(|(r, _)| r).collect();
    assert_eq!(roles, ["system", "user"]);
}

#[test]
fn the_config_turns_instructions_off_and_schema_1_never_lists_them() {
    let dir = instructed("agents-config");
    let mock = Mock::start(vec![
        Reply::sse(&openai::answer(&["ok"], 10, 2)),
        Reply::sse(&openai::answer(&["ok"], 10, 2)),
    ]);
    let out = compatible(&dir, &mock).args(&["exec", "-o", "stream-json", "hello"]).run();
    out.assert_code(0);
    assert!(out.events()[0].get("instructions").is_none(), "schema 1 is unchanged");
    assert_eq!(
        chat_messages(&mock.requests()[0].json())[1].1,
        "Instructions from AGENTS.md files (yours first, then the repository's from its root down; later files are nearer the working directory and take precedence):\n\n--- AGENTS.md ---\nRoot: run cargo test.\n"
    );
    dir.write("config/zero/config.json", r#"{"projectInstructions": false}"#);
    let out = compatible(&dir, &mock).args(&EXEC_2).args(&["hello"]).run();
    out.assert_code(0);
    assert!(out.events()[0].get("instructions").is_none());
    assert_eq!(chat_messages(&mock.requests()[1].json()).len(), 2);
}

#[test]
fn instructions_are_cut_to_their_limits_and_links_out_and_fifos_are_skipped() {
    let dir = TestDir::new("agents-limits");
    std::fs::create_dir_all(dir.path("work/.git")).unwrap();
    // 40 KiB at the root: cut at 32 KiB, at a line end.
    let line = format!("{}\n", "r".repeat(63));
    dir.write("work/AGENTS.md", &line.repeat(640));
    // A link leading out of the repository, and a FIFO: both skipped.
    dir.write("outside.md", "secret rules\n");
    std::fs::create_dir_all(dir.path("work/a")).unwrap();
    std::os::unix::fs::symlink(dir.path("outside.md"), dir.path("work/a/AGENTS.md")).unwrap();
    std::fs::create_dir_all(dir.path("work/a/b")).unwrap();
    crate::util::mkfifo(&dir.path("work/a/b/AGENTS.md"));
    // 30 KiB nearest the workspace, kept whole; the user's 10 KiB gets what is left.
    std::fs::create_dir_all(dir.path("work/a/b/c")).unwrap();
    let near = format!("{}\n", "n".repeat(63));
    dir.write("work/a/b/c/AGENTS.md", &near.repeat(480));
    let mine = format!("{}\n", "u".repeat(63));
    dir.write("config/zero/AGENTS.md", &mine.repeat(160));
    let mock = Mock::start(vec![Reply::sse(&openai::answer(&["ok"], 10, 2))]);
    let out = compatible(&dir, &mock).args(&EXEC_2).args(&["-C", "a/b/c", "hi"]).run();
    out.assert_code(0);
    let events = out.events();
    let user_file = dir.path("config/zero/AGENTS.md").display().to_string();
    assert_eq!(events[0]["instructions"], json!([user_file, "AGENTS.md", "a/b/c/AGENTS.md"]));
    assert_eq!(
        out.warnings(),
        [
            "Project instructions a/AGENTS.md are skipped: it is a link leading outside the repository.",
            "Project instructions a/b/AGENTS.md are skipped: it is not a regular file.",
        ]
    );
    let message = &chat_messages(&mock.requests()[0].json())[1].1;
    assert!(!message.contains("secret rules"));
    // The root file: 512 lines of 64 bytes (32 KiB), then the note.
    let root = message.split("--- AGENTS.md ---\n").nth(1).unwrap();
    let root = root.split("\n--- a/b/c/AGENTS.md ---").next().unwrap();
    assert_eq!(
        root,
        format!(
            "{}[... the last 8192 bytes of AGENTS.md were left out: each file is cut at 32 KiB ...]\n",
            line.repeat(512)
        )
    );
    assert!(message.ends_with(&format!("--- a/b/c/AGENTS.md ---\n{}", near.repeat(480))));
    // 64 KiB in all: 30 KiB near, about 32 KiB at the root, the user's file cut to the rest.
    let user = message.split(&format!("--- {user_file} ---\n")).nth(1).unwrap();
    let user = user.split("\n--- AGENTS.md ---").next().unwrap();
    let (user_kept, note) = user.split_once("[... the last ").unwrap();
    assert_eq!(
        note,
        format!(
            "{} bytes of {user_file} were left out: all instructions together are cut at 64 KiB ...]\n",
            160 * 64 - user_kept.len()
        )
    );
    assert!(user_kept.len() < 3000 && user_kept.ends_with('\n'), "{} bytes kept", user_kept.len());
    assert!(message.len() <= 64 * 1024, "the message is {} bytes", message.len());
}

#[test]
fn the_system_prompt_flags_replace_and_extend_and_instructions_still_follow() {
    let dir = instructed("prompt-flags");
    dir.write("extra.md", "Always cite files.\n");
    dir.write("work/mine.md", "You are a reviewer.");
    let mock = Mock::start(vec![
        Reply::sse(&openai::answer(&["ok"], 10, 2)),
        Reply::sse(&openai::answer(&["ok"], 10, 2)),
    ]);
    compatible(&dir, &mock)
        .args(&[
            "exec",
            "--system-prompt",
            "Be terse.",
            "--append-system-prompt-file",
            "../extra.md",
            "hi",
        ])
        .run()
        .assert_code(0);
    let sent = chat_messages(&mock.requests()[0].json());
    assert_eq!(sent[0], ("system".to_string(), "Be terse.\n\nAlways cite files.".to_string()));
    assert!(sent[1].1.starts_with("Instructions from AGENTS.md files"));
    assert_eq!(sent[2].1, "hi");
    // A file resolves against the directory zero was started in, not -C.
    std::fs::create_dir_all(dir.path("work/app")).unwrap();
    compatible(&dir, &mock)
        .args(&[
            "exec",
            "-C",
            "app",
            "--system-prompt-file",
            "mine.md",
            "--append-system-prompt",
            "Be kind.",
            "hi",
        ])
        .run()
        .assert_code(0);
    let sent = chat_messages(&mock.requests()[1].json());
    assert_eq!(sent[0].1, "You are a reviewer.\n\nBe kind.");
}

#[test]
fn bad_system_prompt_flags_are_usage_errors_before_any_call() {
    let dir = TestDir::new("prompt-flag-errors");
    dir.write("work/big.md", &"x".repeat(1024 * 1024 + 1));
    std::fs::create_dir_all(dir.path("work/folder")).unwrap();
    let work = dir.work().display().to_string();
    let cases: [(&[&str], String); 5] = [
        (
            &["--system-prompt", "a", "--system-prompt-file", "f"],
            "Use either --system-prompt or --system-prompt-file, not both.".to_string(),
        ),
        (
            &["--append-system-prompt", "a", "--append-system-prompt-file", "f"],
            "Use either --append-system-prompt or --append-system-prompt-file, not both."
                .to_string(),
        ),
        (
            &["--system-prompt-file", "missing.md"],
            format!("Cannot read --system-prompt-file {work}/missing.md: it does not exist"),
        ),
        (
            &["--append-system-prompt-file", "folder"],
            format!(
                "Cannot read --append-system-prompt-file {work}/folder: it is not a regular file"
            ),
        ),
        (
            &["--system-prompt-file", "big.md"],
            format!("Cannot read --system-prompt-file {work}/big.md: it is larger than 1 MiB"),
        ),
    ];
    let mock = Mock::start(vec![]);
    for (flags, message) in cases {
        let out =
            compatible(&dir, &mock).args(&["exec", "-o", "json"]).args(flags).args(&["hi"]).run();
        out.assert_code(2);
        let events = out.events();
        let error = events.iter().find(|e| e["type"] == "error").unwrap();
        assert_eq!(error["message"], message.as_str(), "{flags:?}");
    }
    assert!(mock.requests().is_empty());
}

/// An Anthropic tool turn reading `path`, with cache counts in its usage.
fn anthropic_call(id: &str, path: &str, read: u64, written: u64) -> Reply {
    let mut pieces = anthropic::turn(
        &[json!({"type": "tool_use", "id": id, "name": "read_file", "input": {"path": path}})],
        50,
        10,
        "tool_use",
    );
    pieces[0] = anthropic::event(
        json!({"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 50, "cache_read_input_tokens": read, "cache_creation_input_tokens": written, "output_tokens": 1}}}),
    );
    Reply::sse(&pieces)
}

/// Where a request carries `cache_control`: `system`, or `m<index>` for a message's last block.
fn breakpoints(body: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if let Some(system) = body["system"].as_array() {
        for block in system {
            if block.get("cache_control").is_some() {
                found.push("system".to_string());
            }
        }
    }
    for (i, m) in body["messages"].as_array().unwrap().iter().enumerate() {
        let Some(blocks) = m["content"].as_array() else { continue };
        for (j, block) in blocks.iter().enumerate() {
            if block.get("cache_control").is_some() {
                assert_eq!(j, blocks.len() - 1, "a mark is on the last block of its message");
                found.push(format!("m{i}"));
            }
        }
    }
    assert_eq!(
        body.to_string().matches("cache_control").count(),
        found.len(),
        "every mark is where it is expected"
    );
    found
}

#[test]
fn anthropic_requests_mark_the_system_prompt_the_previous_end_and_the_newest_message() {
    let dir = TestDir::new("cache-marks");
    dir.write("work/a.txt", "alpha\n");
    let replies = || {
        let mut replies: Vec<Reply> =
            (0..4).map(|i| anthropic_call(&format!("t{i}"), "a.txt", 100 * i, 40)).collect();
        replies.push(Reply::sse(&anthropic::turn(
            &[json!({"type": "text", "pieces": ["done"]})],
            50,
            3,
            "end_turn",
        )));
        replies
    };
    let mock = Mock::start(replies());
    let out = dir
        .zero()
        .anthropic_at(&mock.url())
        .args(&EXEC_2)
        .args(&["-m", "haiku-4.5", "read a.txt four times"])
        .run();
    out.assert_code(0);
    let requests = mock.requests();
    assert_eq!(requests.len(), 5);
    for (i, request) in requests.iter().enumerate() {
        let body = request.json();
        let newest = body["messages"].as_array().unwrap().len() - 1;
        let mut expected = vec!["system".to_string()];
        if i > 0 {
            expected.push(format!("m{}", newest - 2));
        }
        expected.push(format!("m{newest}"));
        assert_eq!(breakpoints(&body), expected, "call {}", i + 1);
        assert!(expected.len() <= 4);
    }
    // The cache counts, in schema 2's usage (part of promptTokens).
    let usage: Vec<(Value, Value, Value)> = out
        .events()
        .iter()
        .filter(|e| e["type"] == "usage")
        .map(|e| {
            (e["promptTokens"].clone(), e["cacheReadTokens"].clone(), e["cacheWriteTokens"].clone())
        })
        .collect();
    assert_eq!(usage[1], (json!(190), json!(100), json!(40)));
    assert_eq!(usage[4], (json!(50), Value::Null, Value::Null), "not reported, not written");
    // Schema 1 has no cache fields.
    let mock = Mock::start(replies());
    let out = dir
        .zero()
        .anthropic_at(&mock.url())
        .args(&["exec", "-o", "stream-json", "-m", "haiku-4.5", "go"])
        .run();
    out.assert_code(0);
    assert!(out.events().iter().all(|e| e.get("cacheReadTokens").is_none()));
    // Off, by the variable or the config: no marks, the system prompt a plain string.
    for (var, config) in [(Some("off"), None), (None, Some(r#"{"promptCache": false}"#))] {
        let mock = Mock::start(replies());
        if let Some(config) = config {
            dir.write("config/zero/config.json", config);
        }
        let mut zero = dir.zero().anthropic_at(&mock.url());
        if let Some(value) = var {
            zero = zero.env("ZERO_PROMPT_CACHE", value);
        }
        zero.args(&["exec", "-m", "haiku-4.5", "go"]).run().assert_code(0);
        for request in mock.requests() {
            let body = request.json();
            assert!(!body.to_string().contains("cache_control"));
            assert!(body["system"].is_string());
        }
    }
}

#[test]
fn only_the_official_openai_api_gets_the_session_as_prompt_cache_key() {
    let dir = TestDir::new("cache-key");
    let answer = || Reply::sse(&openai::answer(&["ok"], 10, 2));
    let official = |mock: &Mock| dir.zero().official_openai_at(&mock.v1());
    let mock = Mock::start(vec![answer()]);
    let out = official(&mock).args(&EXEC_2).args(&["-m", "gpt-4.1", "hi"]).run();
    out.assert_code(0);
    let session = out.events()[0]["sessionId"].clone();
    assert!(session.is_string());
    assert_eq!(mock.requests()[0].json()["prompt_cache_key"], session);
    // Responses too.
    let mock = Mock::start(vec![Reply::sse(&[format!(
        "event: response.completed\ndata: {}\n\n",
        json!({"type": "response.completed", "response": {"status": "completed", "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}], "usage": {"input_tokens": 5, "output_tokens": 3}}})
    )])]);
    let out = official(&mock)
        .env("ZERO_OPENAI_API", "responses")
        .args(&EXEC_2)
        .args(&["-m", "gpt-5", "hi"])
        .run();
    let key = mock.requests()[0].json()["prompt_cache_key"].clone();
    assert_eq!(key, out.events()[0]["sessionId"]);
    // Turned off, or another host: no field.
    let mock = Mock::start(vec![answer()]);
    official(&mock)
        .env("ZERO_PROMPT_CACHE", "off")
        .args(&["exec", "-m", "gpt-4.1", "hi"])
        .run()
        .assert_code(0);
    assert!(mock.requests()[0].json().get("prompt_cache_key").is_none());
    let mock = Mock::start(vec![answer()]);
    compatible(&dir, &mock).args(&["exec", "hi"]).run().assert_code(0);
    assert!(mock.requests()[0].json().get("prompt_cache_key").is_none());
}

/// A config with a small context window for the compatible model, and prices for it.
fn windowed(dir: &TestDir, window: u64) {
    dir.write(
        "config/zero/config.json",
        &json!({"contextWindow": window, "models": [{"id": "priced", "provider": "openai", "prices": {"input": 1000.0, "output": 0.0}}]})
            .to_string(),
    );
}

#[test]
fn old_tool_results_are_elided_above_three_quarters_of_the_window() {
    let dir = TestDir::new("trim-elide");
    windowed(&dir, 6000);
    for name in ["a.txt", "b.txt", "c.txt"] {
        let body: String =
            (0..100).map(|i| format!("{name} line {i:03} {}\n", "x".repeat(64))).collect();
        dir.write(&format!("work/{name}"), &body);
    }
    // The third call reports 2,700 prompt tokens; the fourth adds a call and an 8.6 KB result
    // (about 2,180 tokens): above 4,500 (75 % of 6,000), so the oldest result, the only one
    // outside the two newest calls, is elided.
    let mock = Mock::start(vec![
        call_turn("c1", "read_file", r#"{"path":"a.txt"}"#, 400),
        call_turn("c2", "read_file", r#"{"path":"b.txt"}"#, 2600),
        call_turn("c3", "read_file", r#"{"path":"c.txt"}"#, 2700),
        Reply::sse(&openai::answer(&["done"], 10, 2)),
    ]);
    let out = compatible(&dir, &mock)
        .args(&EXEC_2)
        .args(&["--system-prompt", "S", "--enabled-tools", "read_file", "read them"])
        .run();
    out.assert_code(0);
    let events = out.events();
    let warnings: Vec<(Value, Value)> = events
        .iter()
        .filter(|e| e["type"] == "warning")
        .map(|e| (e["code"].clone(), e["message"].clone()))
        .collect();
    assert_eq!(
        warnings,
        [(json!("context_trimmed"), json!("Context trimmed: 1 tool results elided, 0 exchanges dropped (estimate 4878 -> 3255 tokens of 6000)"))]
    );
    // The warning comes right before the call it trimmed (the fourth: its text).
    let at = events.iter().position(|e| e["type"] == "warning").unwrap();
    assert_eq!(events[at - 1]["id"], "c3");
    assert_eq!(events[at + 1]["type"], "text");
    let requests = mock.requests();
    let third = chat_messages(&requests[2].json());
    let fourth = chat_messages(&requests[3].json());
    assert_eq!(third[3], chat_messages(&requests[1].json())[3], "the third call was not trimmed");
    let elided = &fourth[3].1;
    assert!(elided.starts_with("File: a.txt (100 lines)"));
    assert!(
        elided.contains("bytes of this old tool result were left out to fit the context window")
    );
    assert!(elided.ends_with(&format!("100 | a.txt line 099 {}\n", "x".repeat(64))));
    assert!(elided.len() < 2200, "{} bytes", elided.len());
    assert_eq!(fourth[5], third[5], "the newest two calls' results are whole");
    assert!(fourth[7].1.contains("c.txt line 050"));
    // The session keeps the whole result.
    let sessions = crate::util::read_sessions(&dir);
    assert!(sessions.contains("a.txt line 050"), "the session holds every line");
}

#[test]
fn whole_exchanges_are_dropped_when_eliding_is_not_enough() {
    let dir = TestDir::new("trim-drop");
    windowed(&dir, 4000);
    dir.write("work/a.txt", "small file\n");
    let mock = Mock::start(vec![
        call_turn("c1", "read_file", r#"{"path":"a.txt"}"#, 1000),
        call_turn("c2", "read_file", r#"{"path":"a.txt"}"#, 2990),
        call_turn("c3", "read_file", r#"{"path":"a.txt"}"#, 3000),
        Reply::sse(&openai::answer(&["done"], 10, 2)),
    ]);
    let out = compatible(&dir, &mock)
        .args(&EXEC_2)
        .args(&["--system-prompt", "S", "--enabled-tools", "read_file", "read it"])
        .run();
    out.assert_code(0);
    let warning = out.events().into_iter().find(|e| e["type"] == "warning").unwrap();
    assert_eq!(warning["message"], "Context trimmed: 0 tool results elided, 1 exchanges dropped (estimate 3031 -> 3000 tokens of 4000)");
    // The third call (3,021 tokens, above 3,000) has nothing older than its two newest calls
    // to trim; the fourth (3,031) leaves out the oldest exchange.
    let requests = mock.requests();
    assert_eq!(requests[2].json()["messages"].as_array().unwrap().len(), 6);
    let body = requests[3].json();
    let roles: Vec<String> = chat_messages(&body).into_iter().map(|(r, _)| r).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant", "tool"]);
    // The oldest exchange (c1 and its result) was left out; the prompt stays.
    assert_eq!(body["messages"][1]["content"], "read it");
    assert_eq!(body["messages"][2]["tool_calls"][0]["id"], "c2");
    assert_eq!(body["messages"][3]["tool_call_id"], "c2");
}

#[test]
fn a_message_larger_than_the_window_is_a_provider_error_before_any_call() {
    let dir = TestDir::new("trim-too-large");
    windowed(&dir, 1000);
    let mock = Mock::start(vec![]);
    let prompt = "p".repeat(20_000);
    let out = compatible(&dir, &mock)
        .args(&["exec", "-o", "json", "--system-prompt", "S", &prompt])
        .run();
    out.assert_code(3);
    let error = out.events().into_iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(error["code"], "provider_error");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("a user message of 20016 bytes"), "{message}");
    assert!(message.contains("context window of 1000 tokens"), "{message}");
    assert!(mock.requests().is_empty());
}

#[test]
fn the_budget_stops_before_the_next_call_in_both_schemas() {
    let dir = TestDir::new("budget");
    windowed(&dir, 128_000);
    dir.write("work/a.txt", "a\n");
    // $1,000 per million prompt tokens: 1,000 tokens cost $1.
    let replies = || {
        vec![
            call_turn("c1", "read_file", r#"{"path":"a.txt"}"#, 1000),
            call_turn("c2", "read_file", r#"{"path":"a.txt"}"#, 1000),
            Reply::sse(&openai::answer(&["never"], 10, 2)),
        ]
    };
    for (schema, code) in [("1", "max_turns"), ("2", "budget_exceeded")] {
        let mock = Mock::start(replies());
        let out = dir
            .zero()
            .openai(&mock.v1(), "priced")
            .args(&[
                "exec",
                "-o",
                "stream-json",
                "--schema-version",
                schema,
                "--max-budget-usd",
                "1.5",
                "go",
            ])
            .run();
        out.assert_code(4);
        assert_eq!(mock.requests().len(), 2, "the third call is never made");
        let events = out.events();
        let error = events.iter().find(|e| e["type"] == "error").unwrap();
        assert_eq!(error["code"], code);
        assert_eq!(error["message"], "Budget of $1.50 reached ($2 spent over 2 calls)");
        if schema == "2" {
            assert_eq!(events.last().unwrap()["status"], "incomplete");
        }
    }
    // The config's cap works the same.
    let mock = Mock::start(replies());
    let config = dir.path("config/zero/config.json");
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    value["maxBudgetUsd"] = json!(0.5);
    std::fs::write(&config, value.to_string()).unwrap();
    let out = dir.zero().openai(&mock.v1(), "priced").args(&["exec", "go"]).run();
    out.assert_code(4);
    assert_eq!(mock.requests().len(), 1);
}

#[test]
fn a_budget_without_prices_is_a_usage_error_naming_the_model() {
    let dir = TestDir::new("budget-no-prices");
    let script = dir.script(&json!({"turns": [{"text": "hi"}]}));
    let out = dir
        .zero()
        .args(&[
            "exec",
            "-o",
            "json",
            "--provider",
            "scripted",
            "--script",
            &script.display().to_string(),
            "--max-budget-usd",
            "2",
            "go",
        ])
        .run();
    out.assert_code(2);
    let error = out.events().into_iter().find(|e| e["type"] == "error").unwrap();
    let message = error["message"].as_str().unwrap();
    assert_eq!(message, "--max-budget-usd needs the model's prices, and model \"scripted\" has no prices: the scripted provider has a model only with -m (one with prices, such as -m gpt-4.1).");
    // The config's cap applies to every model: one without prices runs, with a warning.
    dir.write("config/zero/config.json", r#"{"maxBudgetUsd": 5}"#);
    let out = dir
        .zero()
        .args(&[
            "exec",
            "-o",
            "stream-json",
            "--schema-version",
            "2",
            "--script",
            &script.display().to_string(),
            "go",
        ])
        .run();
    out.assert_code(0);
    let warning = out.events().into_iter().find(|e| e["type"] == "warning").unwrap();
    assert_eq!(warning["message"], "maxBudgetUsd (config) is ignored in this run: model \"scripted\" has no prices: the scripted provider has a model only with -m (one with prices, such as -m gpt-4.1).");
    // With -m the scripted provider has a priced model, and the budget counts.
    let priced = dir
        .zero()
        .args(&[
            "exec",
            "--script",
            &script.display().to_string(),
            "-m",
            "gpt-4.1",
            "--max-budget-usd",
            "2",
            "go",
        ])
        .run();
    priced.assert_code(0);
    for bad in ["0", "-1", "abc", "1e3", "$$2", "nan"] {
        let out = dir.zero().args(&["exec", "-o", "json", "--max-budget-usd", bad, "go"]).run();
        out.assert_code(2);
    }
}

#[test]
fn add_dir_reads_and_writes_in_both_roots_and_refuses_escapes_through_links() {
    let dir = TestDir::new("add-dir");
    dir.write("work/here.txt", "in the workspace\n");
    dir.write("library/lib.txt", "shared library\n");
    dir.write("secret/key.txt", "do not read\n");
    std::os::unix::fs::symlink(dir.path("secret"), dir.path("library/escape")).unwrap();
    // A link from one root into another is followed, as a path into it is.
    std::os::unix::fs::symlink(dir.path("library"), dir.path("work/to-library")).unwrap();
    let shared = dir.path("library").canonicalize().unwrap().display().to_string();
    let at = |rel: &str| format!("{shared}/{rel}");
    let call =
        |id: &str, name: &str, args: Value| json!({"id": id, "name": name, "arguments": args});
    let script = dir.script(&json!({"turns": [
        {"toolCalls": [
            call("r1", "read_file", json!({"path": at("lib.txt")})),
            call("w1", "write_file", json!({"path": at("new/out.txt"), "content": "written\n"})),
            call("w2", "write_file", json!({"path": "local.txt", "content": "local\n"})),
            call("g1", "grep", json!({"pattern": "library", "path": shared})),
            call("g2", "glob", json!({"pattern": "**/*.txt", "cwd": shared})),
            call("l1", "list_directory", json!({"path": shared})),
            call("x1", "read_file", json!({"path": at("escape/key.txt")})),
            call("x2", "read_file", json!({"path": "../secret/key.txt"})),
            call("a1", "read_file", json!({"path": "../library/lib.txt"})),
            call("a2", "read_file", json!({"path": "to-library/lib.txt"}))
        ]},
        {"text": "done"}
    ]}));
    // Run from the test's root: a relative --add-dir means what it says there, not below -C.
    let mut zero = dir.zero();
    zero.cwd = dir.root.clone();
    let out = zero
        .args(&EXEC_2)
        .args(&[
            "-C",
            "work",
            "--add-dir",
            "library",
            "--auto",
            "medium",
            "--provider",
            "scripted",
            "--script",
            &script.display().to_string(),
            "go",
        ])
        .run();
    out.assert_code(0);
    let events = out.events();
    assert_eq!(events[0]["addDirs"], json!([shared]));
    let result = |id: &str| {
        events.iter().find(|e| e["type"] == "tool_result" && e["id"] == id).unwrap().clone()
    };
    assert_eq!(result("r1")["status"], "ok");
    assert!(result("r1")["output"].as_str().unwrap().contains("1 | shared library"));
    assert_eq!(result("w1")["changedFiles"], json!([at("new/out.txt")]));
    assert_eq!(std::fs::read_to_string(dir.path("library/new/out.txt")).unwrap(), "written\n");
    assert_eq!(std::fs::read_to_string(dir.path("work/local.txt")).unwrap(), "local\n");
    assert!(result("g1")["output"].as_str().unwrap().contains(&at("lib.txt")));
    let globbed = result("g2")["output"].as_str().unwrap().to_string();
    assert!(globbed.contains("lib.txt") && globbed.contains("new/out.txt"), "{globbed}");
    assert!(result("l1")["output"].as_str().unwrap().contains("lib.txt"));
    for across in ["a1", "a2"] {
        assert!(
            result(across)["output"].as_str().unwrap().contains("1 | shared library"),
            "{across}"
        );
    }
    for escape in ["x1", "x2"] {
        let refused = result(escape);
        assert_eq!(refused["status"], "error", "{escape}");
        let output = refused["output"].as_str().unwrap();
        assert!(output.contains("is outside the workspace"), "{output}");
        assert!(output.contains(&format!("the added directories ({shared})")), "{output}");
        assert!(!output.contains("do not read"));
    }
}

#[test]
fn add_dir_must_name_an_existing_directory() {
    let dir = TestDir::new("add-dir-errors");
    dir.write("work/file.txt", "x");
    let work = dir.work().display().to_string();
    for (arg, why) in
        [("missing", "the directory does not exist"), ("file.txt", "it is not a directory")]
    {
        let out = dir.zero().args(&["exec", "-o", "json", "--add-dir", arg, "go"]).run();
        out.assert_code(2);
        let error = out.events().into_iter().find(|e| e["type"] == "error").unwrap();
        assert_eq!(error["message"], format!("--add-dir {work}/{arg}: {why}"));
    }
    let out = dir.zero().args(&["exec", "-o", "json", "--add-dir=", "go"]).run();
    out.assert_code(2);
    // The config's addDirs: a configuration error naming the file.
    let config = dir.write("config/zero/config.json", r#"{"addDirs": ["/nonexistent-zero-dir"]}"#);
    let out = dir.zero().args(&["exec", "-o", "json", "go"]).run();
    out.assert_code(3);
    let error = out.events().into_iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(error["code"], "config_error");
    assert_eq!(
        error["message"],
        format!(
            "Config {}: addDirs /nonexistent-zero-dir: the directory does not exist",
            config.display()
        )
    );
}

#[test]
fn zero_config_shows_each_setting_with_its_source() {
    let dir = TestDir::new("settings-config");
    dir.write(
        "config/zero/config.json",
        r#"{"projectInstructions": false, "maxBudgetUsd": 2.5, "addDirs": ["~/docs", "/srv/shared"]}"#,
    );
    let out = dir.zero().env("ZERO_PROMPT_CACHE", "off").args(&["config", "--json"]).run();
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let home = dir.path("home").display().to_string();
    let effective = &report["effective"];
    let shown: Vec<(Value, Value)> =
        ["projectInstructions", "promptCache", "maxBudgetUsd", "addDirs"]
            .iter()
            .map(|k| (effective[*k].clone(), effective[format!("{k}Source")].clone()))
            .collect();
    assert_eq!(
        shown,
        [
            (json!(false), json!("user")),
            (json!(false), json!("env:ZERO_PROMPT_CACHE")),
            (json!(2.5), json!("user")),
            (json!([format!("{home}/docs"), "/srv/shared"]), json!("user")),
        ]
    );
    let out = dir.zero().args(&["config"]).run();
    assert!(out.stdout.contains("\n  projectInstructions: false (user)\n  promptCache: true (defaults)\n  maxBudgetUsd: 2.5 (user)\n"), "{}", out.stdout);
    assert!(out.stdout.contains(&format!("\n  addDirs: {home}/docs, /srv/shared (user)\n")));
}

#[test]
fn in_live_mode_the_budget_is_for_the_process() {
    let dir = TestDir::new("budget-live");
    windowed(&dir, 128_000);
    let mock = Mock::start(vec![
        Reply::sse(&openai::answer(&["first"], 2000, 2)),
        Reply::sse(&openai::answer(&["never"], 10, 2)),
    ]);
    let prompt =
        |text: &str| json!({"schemaVersion": 2, "type": "prompt", "content": text}).to_string();
    let out = dir
        .zero()
        .openai(&mock.v1(), "priced")
        .args(&[
            "exec",
            "-i",
            "stream-json",
            "-o",
            "stream-json",
            "--live",
            "--max-budget-usd",
            "1.5",
        ])
        .stdin(format!("{}\n{}\n", prompt("one"), prompt("two")))
        .run();
    out.assert_code(4);
    assert_eq!(mock.requests().len(), 1, "the second turn makes no call");
    let events = out.events();
    let ends: Vec<(Value, Value)> = events
        .iter()
        .filter(|e| e["type"] == "turn_end")
        .map(|e| (e["turn"].clone(), e["status"].clone()))
        .collect();
    assert_eq!(ends, [(json!(1), json!("success")), (json!(2), json!("incomplete"))]);
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(error["code"], "budget_exceeded");
    assert_eq!(error["message"], "Budget of $1.50 reached ($2 spent over 1 call)");
}
