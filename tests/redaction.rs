//! Secrets never reach stdout or stderr, however the model splits them across deltas.

use crate::mock::{openai, Mock, Reply};
use crate::util::{Output, TestDir};

/// The API key in use: it has no token shape, so only the exact-value rule can catch it.
pub const API_KEY: &str = "zq-live-4f9a81c2d7e6b5a3f0c9e8d7b6a5";
/// A shaped key that is not registered anywhere: only the shape rule can catch it.
pub const SHAPED: &str = "sk-proj-Zx81mQ2wLk9vBn4cRt7yUi0oPa3sDf6g";

/// An answer that spells `key` many times, each occurrence cut differently: at every single
/// offset, at every pair of offsets, and into 20 pieces at several places. Returns the deltas
/// and the answer as it must read after redaction.
fn split_answer(key: &str) -> (Vec<String>, String) {
    let n = key.len();
    let mut deltas = Vec::new();
    let mut redacted = String::new();
    let mut occurrence = |label: String, cuts: &[usize], deltas: &mut Vec<String>| {
        deltas.push(format!("{label}: "));
        let mut at = 0;
        for &cut in cuts.iter().chain(std::iter::once(&n)) {
            deltas.push(key[at..cut].to_string());
            at = cut;
        }
        deltas.push(".\n".to_string());
        redacted.push_str(&format!("{label}: [REDACTED].\n"));
    };
    for a in 1..n {
        occurrence(format!("two {a}"), &[a], &mut deltas);
    }
    for a in 1..n {
        for b in a + 1..n {
            occurrence(format!("three {a} {b}"), &[a, b], &mut deltas);
        }
    }
    for shift in 0..n - 19 {
        let cuts: Vec<usize> = (1..20).map(|i| (i + shift).min(n - 1)).collect();
        let mut cuts = cuts;
        cuts.dedup();
        occurrence(format!("twenty {shift}"), &cuts, &mut deltas);
    }
    (deltas, redacted)
}

fn answer_reply(deltas: &[String]) -> Reply {
    let mut chunks: Vec<String> = deltas.iter().map(|d| openai::text(d)).collect();
    chunks.push(openai::finish("stop"));
    chunks.push(openai::done());
    Reply::sse(&chunks)
}

#[track_caller]
fn assert_no_piece_of(out: &Output, key: &str) {
    crate::util::assert_no_piece_of(&format!("{}{}", out.stdout, out.stderr), key, "the output");
}

#[test]
fn a_key_split_at_every_offset_never_shows_in_any_format() {
    for key in [API_KEY, SHAPED] {
        let (deltas, redacted) = split_answer(key);
        for format in ["stream-json", "json", "text"] {
            let dir = TestDir::new("split-key");
            let mock = Mock::start(vec![answer_reply(&deltas)]);
            let out = dir
                .zero()
                .openai_keyed(&mock.v1(), API_KEY, "local-coder")
                .args(&["exec", "-o", format, "spell it"])
                .run();
            out.assert_code(0);
            assert_no_piece_of(&out, key);
            match format {
                "text" => assert_eq!(out.stdout, redacted, "{format}"),
                _ => {
                    assert_eq!(
                        out.text(),
                        redacted,
                        "{format}: the deltas are the redacted answer"
                    );
                    let events = out.events();
                    assert_eq!(
                        events[events.len() - 2]["text"],
                        redacted.as_str(),
                        "{format}: final"
                    );
                }
            }
            if format == "stream-json" {
                out.stream();
            }
        }
    }
}

#[test]
fn a_provider_error_echoing_the_key_is_redacted() {
    for format in ["stream-json", "json", "text"] {
        let dir = TestDir::new("error-echo");
        let body = format!("{{\"error\":{{\"message\":\"Incorrect API key provided: {API_KEY}. You can find your key at https://u:{API_KEY}@example.com\"}}}}");
        let mock = Mock::start(vec![Reply::status(401, "application/json", &body)]);
        let out = dir
            .zero()
            .openai_keyed(&mock.v1(), API_KEY, "local-coder")
            .args(&["exec", "-o", format, "hi"])
            .run();
        out.assert_code(3);
        assert_no_piece_of(&out, API_KEY);
        let all = format!("{}{}", out.stdout, out.stderr);
        assert!(all.contains("Incorrect API key provided: [REDACTED]."), "{out:?}");
    }
}

#[test]
fn environment_secrets_and_redact_env_values_are_exact_secrets() {
    let dir = TestDir::new("env-secrets");
    let answer = "deploy token is tok-AAAA-1111-bbbb and the label is plain-value-42, short abc";
    let mock = Mock::start(vec![answer_reply(&[answer.to_string()])]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .env("DEPLOY_SERVICE_TOKEN", "tok-AAAA-1111-bbbb")
        .env("PLAIN_SETTING", "plain-value-42")
        .env("SHORT_SECRET", "abc")
        .args(&["exec", "--redact-env", "PLAIN_SETTING", "what are they?"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, "deploy token is [REDACTED] and the label is [REDACTED], short abc\n");
}

#[test]
fn tool_output_and_arguments_are_redacted_too() {
    let dir = TestDir::new("tool-secrets");
    dir.write("work/.env", &format!("OPENAI_API_KEY={SHAPED}\nDEBUG=1\n"));
    let mock = Mock::start(vec![
        Reply::sse(&openai::tool_turn("c1", "read_file", r#"{"path":".env"}"#)),
        Reply::sse(&openai::tool_turn(
            "c2",
            "grep",
            &format!("{{\"pattern\":\"{SHAPED}\",\"password\":\"hunter2hunter2\"}}"),
        )),
        Reply::sse(&openai::answer(&["done"], 1, 1)),
    ]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "show env"])
        .run();
    out.assert_code(0);
    assert_no_piece_of(&out, SHAPED);
    assert!(!out.stdout.contains("hunter2"));
    let events = out.stream();
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(
        result["output"],
        "File: .env (2 lines)\n\n1 | OPENAI_API_KEY=[REDACTED]\n2 | DEBUG=1\n"
    );
    let call = events.iter().filter(|e| e["type"] == "tool_call").nth(1).unwrap();
    assert_eq!(
        call["args"],
        serde_json::json!({"pattern": "[REDACTED]", "password": "[REDACTED]"})
    );
    // The session on disk holds no secret either.
    let session = dir.sessions().join(events[0]["sessionId"].as_str().unwrap());
    let stored = format!(
        "{}{}",
        crate::util::read(&session.join("events.jsonl")),
        crate::util::read(&session.join("metadata.json"))
    );
    assert!(!stored.contains("Zx81mQ2w") && !stored.contains("hunter2"), "{stored}");
}

#[test]
fn no_corpus_secret_reaches_a_session_file() {
    let dir = TestDir::new("session-corpus");
    let secrets = crate::corpus::shaped_secrets();
    let keyed = "DB_PASSWORD=hunter2hunter2\npassword: yamlsecret99\n{\"apiKey\": \"jsonsecret99\"}\npostgres://app:urlsecret99@db/x\n";
    let listing: String = secrets.iter().map(|s| format!("key {s}\n")).collect();
    dir.write("work/secrets.txt", &format!("{listing}{keyed}"));
    let mock = Mock::start(vec![
        Reply::sse(&openai::tool_turn("c1", "read_file", r#"{"path":"secrets.txt"}"#)),
        answer_reply(&[listing.clone(), keyed.to_string()]),
    ]);
    let prompt = format!("Check these:\n{listing}{keyed}");
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", &prompt])
        .run();
    out.assert_code(0);
    let session = dir.sessions().join(out.stream()[0]["sessionId"].as_str().unwrap());
    let mut stored = String::new();
    for entry in std::fs::read_dir(&session).unwrap() {
        stored.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default());
    }
    assert!(stored.contains("[REDACTED]"));
    for secret in secrets.iter().map(String::as_str).chain([
        "hunter2hunter2",
        "yamlsecret99",
        "jsonsecret99",
        "urlsecret99",
    ]) {
        assert!(!stored.contains(secret), "{secret} was stored");
        assert!(!out.stdout.contains(secret), "{secret} was written");
    }
}

#[test]
fn a_declared_secret_inside_a_key_takes_the_whole_key_with_it() {
    let dir = TestDir::new("secret-in-key");
    let key = "sk-proj-acmeAbCdEfGhIjKlMnOpQrStUvWx";
    let script =
        dir.script(&serde_json::json!({"turns": [{"text": format!("the key is {key} ok")}]}));
    let out = dir
        .zero()
        .env("ACME_ORG", "acme")
        .args(&["exec", "--redact-env", "ACME_ORG", "--script", script.to_str().unwrap(), "hi"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, "the key is [REDACTED] ok\n");
    let token = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123";
    let out = dir
        .zero()
        .env("MY_API_KEY", "QRSTUVWX")
        .args(&["redact"])
        .stdin(format!("{token}\n"))
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, "[REDACTED]\n");
}

#[test]
fn bash_gets_no_declared_secret_and_no_variable_named_like_one() {
    let dir = TestDir::new("shell-withholds");
    // Each variable holds a value of its own; bash prints what it can see of each.
    let names = [
        "DBPW",
        "RAILS_MASTER_KEY",
        "SECRET_KEY_BASE",
        "DB_PASS",
        "OPENAI_KEY",
        "ENCRYPTION_KEY",
        "SENTRY_DSN",
        "MYSQL_PWD",
        "SLACK_WEBHOOK_URL",
    ];
    let command: String =
        names.iter().map(|n| format!("echo {n} is ${{{n}:-unset}}; ")).collect::<String>()
            + "echo PATH is ${PATH:+set}";
    let script = dir.script(&serde_json::json!({"turns": [
        {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
        {"text": "done"}
    ]}));
    let run = |extra: &[&str]| {
        let mut zero = dir.zero();
        for (i, n) in names.iter().enumerate() {
            zero = zero.env(n, &format!("value-{i}-Zq8x"));
        }
        zero.args(&["exec", "-o", "stream-json", "--auto", "high", "--redact-env", "DBPW"])
            .args(extra)
            .args(&["--script", script.to_str().unwrap(), "go"])
            .run()
    };
    let out = run(&[]);
    out.assert_code(0);
    let result = out.events().into_iter().find(|e| e["type"] == "tool_result").unwrap();
    let output = result["output"].as_str().unwrap();
    for n in names {
        assert!(output.contains(&format!("{n} is unset")), "{n} reached bash: {output}");
    }
    assert!(output.contains("PATH is set"));
    // Kept by name, it is passed on (and its value is still redacted in what zero writes).
    let out = run(&["--shell-env-keep", "DBPW"]);
    let result = out.events().into_iter().find(|e| e["type"] == "tool_result").unwrap();
    let output = result["output"].as_str().unwrap();
    assert!(
        output.contains("DBPW is [REDACTED]") && output.contains("SENTRY_DSN is unset"),
        "{output}"
    );
    assert!(!output.contains("value-0-Zq8x"));
}

#[test]
fn percent_encoded_keys_and_declared_values_are_redacted() {
    let dir = TestDir::new("percent-encoded");
    // A gateway's error quotes the request URL, with a shaped key and the user's declared
    // value percent-encoded in its query.
    let encoded_key = SHAPED.replace('-', "%2D");
    let body = format!("{{\"error\":{{\"message\":\"Rejected https://gw.example/v1?key={encoded_key}&org=a%20c%2Fme%21&form=a+c%2Fme%21\"}}}}");
    let mock = Mock::start(vec![Reply::status(400, "application/json", &body)]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .env("ORG_NAME", "a c/me!")
        .args(&["exec", "-o", "stream-json", "--redact-env", "ORG_NAME", "hi"])
        .run();
    out.assert_code(3);
    for shown in [&out.stdout, &out.stderr, &crate::util::read_sessions(&dir)] {
        crate::util::assert_no_piece_of(shown, SHAPED, "the output");
        crate::util::assert_no_piece_of(shown, &encoded_key, "the output");
        for form in ["a%20c%2Fme", "a c/me", "a+c/me", "a+c%2Fme"] {
            assert!(!shown.contains(form), "{form}: {shown}");
        }
    }
    let error = out.events().into_iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(
        error["message"],
        "Provider returned error (HTTP 400): Rejected https://gw.example/v1?key=[REDACTED]&org=[REDACTED]&form=[REDACTED]"
    );
    // The encoded forms of a declared value are secrets in any text.
    let out = dir
        .zero()
        .env("ORG_NAME", "a c/me!")
        .args(&["redact", "--redact-env", "ORG_NAME"])
        .stdin(
            "q=a%20c%2Fme%21 f=a+c%2Fme%21 all=%61%20%63%2F%6D%65%21 uri=a%20c/me! plus=a+c/me!\n",
        )
        .run();
    assert_eq!(
        out.stdout,
        "q=[REDACTED] f=[REDACTED] all=[REDACTED] uri=[REDACTED] plus=[REDACTED]\n"
    );
}

#[test]
fn a_variable_that_names_a_file_holds_a_path_not_a_secret() {
    // Docker's secrets convention: the file holds the password, the variable its path. The
    // path is shown, and bash gets it; the password variable itself stays a secret.
    let dir = TestDir::new("redact-file-names");
    let text = "PASSWD_FILE=/etc/passwd\nDB_PASSWORD_FILE=/run/secrets/db-password\n{\"password_file\": \"/run/x\"}\nDB_PASSWORD=hunter2-hunter2\n";
    let out = dir
        .zero()
        .env("PASSWD_FILE", "/etc/passwd")
        .env("DB_PASSWORD_FILE", "/run/secrets/db-password")
        .env("DB_PASSWORD", "hunter2-hunter2")
        .args(&["redact"])
        .stdin(text)
        .run();
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        "PASSWD_FILE=/etc/passwd\nDB_PASSWORD_FILE=/run/secrets/db-password\n{\"password_file\": \"/run/x\"}\nDB_PASSWORD=[REDACTED]\n"
    );
}
