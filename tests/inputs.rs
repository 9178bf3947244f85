//! Bad input of every kind: the documented exit code, one line naming the problem (and the
//! line number where there is one), `error` + `run_end` in stream-json, and never a panic.

use crate::util::TestDir;

/// One bad input.
struct Case {
    name: &'static str,
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    env: Vec<(&'static str, String)>,
    code: i32,
    message: &'static str,
}

fn case(name: &'static str, args: &[&str], code: i32, message: &'static str) -> Case {
    Case {
        name,
        args: args.iter().map(|a| a.to_string()).collect(),
        stdin: None,
        env: Vec::new(),
        code,
        message,
    }
}

fn jsonl(name: &'static str, input: impl Into<Vec<u8>>, message: &'static str) -> Case {
    Case { stdin: Some(input.into()), ..case(name, &["-i", "stream-json"], 2, message) }
}

fn cases(dir: &TestDir) -> Vec<Case> {
    let empty = dir.write("empty.txt", "  \n");
    let empty = empty.to_str().unwrap().to_string();
    let a_dir = dir.path("work").display().to_string();
    let a_file = dir.write("file.txt", "x").display().to_string();
    let bad_script = dir.write("bad.json", "{\"turns\": [{\"txt\": 1}]}").display().to_string();
    let key = ("OPENAI_API_KEY", "test-key-0123456789".to_string());
    let mut all = vec![
        jsonl("malformed json", "{not json}\n", "Invalid stream-json input at line 1: expected a JSON object."),
        jsonl("schemaVersion 0", "{\"schemaVersion\":0,\"type\":\"prompt\",\"content\":\"x\"}\n", "line 1: schemaVersion: unsupported version 0; supported: 1, 2"),
        jsonl("schemaVersion 2 after 1", "{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"x\"}\n{\"schemaVersion\":2,\"type\":\"prompt\",\"content\":\"x\"}\n", "line 2: schemaVersion: expected 1, got 2"),
        jsonl("schemaVersion string", "{\"schemaVersion\":\"1\",\"type\":\"prompt\",\"content\":\"x\"}\n", "line 1: schemaVersion: expected 1 or 2, got the string \"1\""),
        jsonl("unknown field", "{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"x\",\"model\":\"y\"}\n", "line 1: model: unknown field"),
        jsonl("assistant role", "{\"schemaVersion\":1,\"type\":\"message\",\"role\":\"assistant\",\"content\":\"x\"}\n", "line 1: role: expected \"user\""),
        jsonl("empty content", "{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"\"}\n", "line 1: content: must not be empty"),
        jsonl("non-string content", "{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":[1]}\n", "line 1: content: expected a string, got an array"),
        jsonl("only blank lines", "\n \n\t\n", "Stream-json input required"),
        jsonl("invalid utf-8", b"{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"ok\"}\n{\"content\":\"\xff\xfe\"}\n".to_vec(), "line 2: not valid UTF-8"),
        jsonl("nul byte", "{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"a\u{0}\"}\n", "line 1: contains a NUL byte"),
        jsonl("9 MiB line", format!("{{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"{}\"}}\n", "x".repeat(9 * 1024 * 1024)), "line 1: line is longer than 8 MiB"),
        case("unknown flag", &["--bogus", "hi"], 2, "invalid option '--bogus'"),
        case("missing flag value", &["hi", "-m"], 2, "missing argument for option '-m'"),
        case("bad -i", &["-i", "xml", "hi"], 2, "Invalid input format \"xml\""),
        case("bad --max-turns", &["--max-turns", "abc", "hi"], 2, "Invalid --max-turns value \"abc\""),
        case("negative --max-turns", &["--max-turns", "-1", "hi"], 2, "Invalid --max-turns value \"-1\""),
        case("positional with stream-json", &["-i", "stream-json", "hi"], 2, "Stream-json input takes no prompt words or --prompt: pipe JSONL or use --file."),
        case("missing --file", &["--file", "nope.txt"], 2, "Prompt file not found: "),
        case("empty --file", &["--file", &empty], 2, "Prompt file is empty: "),
        case("directory --file", &["--file", &a_dir], 2, "Prompt file is a directory: "),
        case("missing stream-json --file", &["-i", "stream-json", "-f", "nope.jsonl"], 2, "Stream-json input file not found: "),
        case("missing -C", &["-C", "nowhere", "hi"], 2, "Working directory not found: "),
        case("file as -C", &["-C", &a_file, "hi"], 2, "Working directory is not a directory: "),
        case("bad effort", &["-r", "warp", "hi"], 2, "Invalid reasoning effort \"warp\""),
        case("bad profile", &["--profile", "turbo", "hi"], 2, "Unknown model profile: turbo"),
        case("scripted without script", &["--provider", "scripted", "hi"], 2, "--provider scripted needs --script FILE"),
        case("missing script", &["--provider", "scripted", "--script", "none.json", "hi"], 2, "Script file not found: "),
        case("invalid script", &["--provider", "scripted", "--script", &bad_script, "hi"], 3, "Invalid script "),
        case("unknown model", &["-m", "gpt-9", "hi"], 3, "Unknown Zero model \"gpt-9\""),
        case("no provider", &["hi"], 3, "No LLM provider configured"),
        Case { env: vec![("ZERO_PROVIDER", "anthropic".into())], ..case("missing key", &["hi"], 3, "Zero anthropic provider requires an API key (set ANTHROPIC_API_KEY)") },
        Case { env: vec![("ZERO_MAX_RETRIES", "many".into())], ..case("bad env setting", &["hi"], 3, "Invalid ZERO_MAX_RETRIES \"many\"") },
    ];
    for c in &mut all {
        if !matches!(c.name, "no provider" | "missing key") {
            c.env.push(key.clone());
        }
    }
    all
}

#[test]
fn every_bad_input_is_one_clear_line_with_its_exit_code() {
    let dir = TestDir::new("bad-input");
    dir.write("config/zero/config.json", "{}");
    let all = cases(&dir);
    assert!(all.len() >= 25);
    let run = |c: &Case, format: &[&str]| {
        let mut run = dir.zero().args(&["exec"]).args(format);
        run.args.extend(c.args.iter().cloned());
        run.stdin = c.stdin.clone();
        for (k, v) in &c.env {
            run = run.env(k, v);
        }
        run.run()
    };
    for c in all {
        // Text output: one stderr line, nothing on stdout.
        let out = run(&c, &[]);
        assert_eq!(out.code, c.code, "{}: exit code{out:?}", c.name);
        assert_eq!(out.stdout, "", "{}: stdout{out:?}", c.name);
        assert_eq!(out.stderr.lines().count(), 1, "{}: one line{out:?}", c.name);
        assert!(
            out.stderr.starts_with("[zero] ") && out.stderr.contains(c.message),
            "{}: message{out:?}",
            c.name
        );
        // Stream-json output: exactly error + run_end, in the same format as every run.
        let out = run(&c, &["-o", "stream-json"]);
        assert_eq!(out.code, c.code, "{}: exit code{out:?}", c.name);
        let events = out.stream();
        assert_eq!(out.types(), ["error", "run_end"], "{}{out:?}", c.name);
        assert!(events[0]["message"].as_str().unwrap().contains(c.message), "{}{out:?}", c.name);
        assert_eq!(events[1]["exitCode"], c.code, "{}", c.name);
        assert_eq!(out.stderr, "", "{}: stderr{out:?}", c.name);
    }
}

#[test]
fn an_invalid_config_file_is_named_with_its_place() {
    let dir = TestDir::new("bad-config");
    let path = dir.write("config/zero/config.json", "{\n  \"activeProvider\": \"x\",\n  oops\n}");
    let out = dir.zero().env("OPENAI_API_KEY", "k").args(&["exec", "-o", "json", "hi"]).run();
    out.assert_code(3);
    let message = out.events()[0]["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with(&format!("Invalid config {}: line 3, column 3", path.display())),
        "{out:?}"
    );
}
