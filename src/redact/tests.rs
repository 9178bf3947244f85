use super::*;
use crate::testing::kit::Rng;
use serde_json::json;

fn plain() -> Redactor {
    Redactor::default()
}

fn stream_in_pieces(redactor: &Redactor, text: &str, cuts: &[usize]) -> String {
    let mut stream = TextStream::default();
    let mut out = String::new();
    let mut at = 0;
    for &cut in cuts {
        stream.push(redactor, &text[at..cut], &mut out);
        at = cut;
    }
    stream.push(redactor, &text[at..], &mut out);
    stream.finish(redactor, &mut out);
    out
}

// --- Objects, arrays and text, as the README's Security section describes ------------------

#[test]
fn object_redaction_replaces_sensitive_keys_whatever_the_value() {
    let input = json!({
        "authorization": "Bearer abc",
        "x-api-key": 12345,
        "cookie": ["a=b"],
        "environment_secret": {"nested": true},
        "session_ingress_token": "t",
        "access_token": null,
        "model": "gpt-4.1",
        "tokenBudget": 4000,
        "accept": "application/json",
        "prompt": "explain what a token is",
    });
    let out = plain().redact_value(input);
    assert_eq!(
        out,
        json!({
            "authorization": "[REDACTED]",
            "x-api-key": "[REDACTED]",
            "cookie": "[REDACTED]",
            "environment_secret": "[REDACTED]",
            "session_ingress_token": "[REDACTED]",
            "access_token": "[REDACTED]",
            "model": "gpt-4.1",
            "tokenBudget": 4000,
            "accept": "application/json",
            "prompt": "explain what a token is",
        })
    );
}

#[test]
fn text_rules_zero_shares() {
    let key = "sk-proj-abcdefghijklmnopqrstuvwxyz012345";
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    let r = plain();
    assert_eq!(r.redact_str(&format!("OPENAI_API_KEY={key}")), "OPENAI_API_KEY=[REDACTED]");
    assert_eq!(
        r.redact_str(&format!("Authorization: Bearer {jwt}")),
        "Authorization: Bearer [REDACTED]"
    );
    assert_eq!(
        r.redact_str(&format!("https://zero:{key}@example.com/v1?api_key={key}&q=safe")),
        "https://zero:[REDACTED]@example.com/v1?api_key=[REDACTED]&q=safe"
    );
    let pem = "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----\nafter";
    assert_eq!(r.redact_str(pem), "before\n[REDACTED]\nafter");
}

#[test]
fn caller_exact_secret_values_are_redacted() {
    let r = Redactor::new(["correct-horse-battery".to_string()]);
    assert_eq!(
        r.redact_value(json!({"note": "pw is correct-horse-battery!", "n": 1})),
        json!({"note": "pw is [REDACTED]!", "n": 1})
    );
    // In a member's name, and as a number.
    let r = Redactor::new(["s3cr3tvalue123".to_string(), "98765432109876".to_string()]);
    assert_eq!(
        r.redact_value(json!({"s3cr3tvalue123": 1, "n": 98765432109876_u64, "m": 42})),
        json!({"[REDACTED]": 1, "n": "[REDACTED]", "m": 42})
    );
}

#[test]
fn short_or_marker_like_values_are_not_registered() {
    let r = Redactor::new(["short".to_string(), "REDACTED".to_string(), "  ".to_string()]);
    assert_eq!(r.redact_str("short REDACTED"), "short REDACTED");
}

// --- Corpus ----------------------------------------------------------------------------------

#[path = "../../tests/corpus.rs"]
mod corpus;
use corpus::shaped_secrets;

/// Contexts a secret shows up in; `{}` is the secret.
const CONTEXTS: &[&str] = &[
    "{}",
    "key: {}\n",
    "{\"data\": {\"value\": \"{}\"}}",
    "export SOME_VALUE={}\n",
    "$ curl -s https://api.example.com/v1 -d '{}'\n",
    "2026-12-01T00:00:00Z INFO request sent with {} (retry 1)",
    "```bash\necho {}\n```",
    "- item: [{}]\n",
    "see <{}>.",
];

#[test]
fn corpus_every_shape_in_every_context_is_replaced_and_the_rest_kept() {
    let r = plain();
    let mut cases = 0;
    for secret in shaped_secrets() {
        for context in CONTEXTS {
            let text = context.replace("{}", &secret);
            let expected = context.replace("{}", REDACTED);
            assert_eq!(r.redact_str(&text), expected, "secret {secret:?} in {context:?}");
            cases += 1;
        }
    }
    assert!(cases >= 60, "{cases} cases");
}

#[test]
fn corpus_every_shape_is_found_whatever_byte_precedes_it() {
    // JSON text with `\n` and `\t` escapes (a key on its own line of a file's content), ANSI
    // colours in command output, URL-encoded spaces, identifiers, other letters and digits.
    let befores = ["\\n", "\\t", "\\r", "\u{1b}[31m", "\u{1b}[0;1m", "%20", "_", "x", "0", "."];
    let r = plain();
    let mut cases = 0;
    for secret in shaped_secrets() {
        for before in befores {
            let text = format!("{{\"content\":\"line{before}{secret}\\nnext\"}}");
            let expected = format!("{{\"content\":\"line{before}{REDACTED}\\nnext\"}}");
            assert_eq!(r.redact_str(&text), expected, "{secret:?} after {before:?}");
            cases += 1;
        }
    }
    assert!(cases >= 300, "{cases} cases");
}

#[test]
fn corpus_keyed_secrets_in_files_dumps_urls_and_yaml() {
    let cases: &[(&str, &str)] = &[
        // env files and shell history
        ("DB_PASSWORD=hunter2hunter2\n", "DB_PASSWORD=[REDACTED]\n"),
        ("export GITLAB_CI_TOKEN='abc def ghi'\n", "export GITLAB_CI_TOKEN='[REDACTED]'\n"),
        ("PASSWORD=\"correct horse battery\" make\n", "PASSWORD=\"[REDACTED]\" make\n"),
        ("$ mysql --password=s3cr3t! -u root", "$ mysql --password=[REDACTED] -u root"),
        ("stripe_secret = whsec_123 # note", "stripe_secret = [REDACTED] # note"),
        ("spring.datasource.password=pa55word", "spring.datasource.password=[REDACTED]"),
        // JSON and Python reprs
        ("{\"password\": \"p@ss \\\"quoted\\\" w\"}", "{\"password\": \"[REDACTED]\"}"),
        ("{\"model\":\"x\",\"apiKey\":\"abc123\"}", "{\"model\":\"x\",\"apiKey\":\"[REDACTED]\"}"),
        ("{'client_secret': 'shh-value'}", "{'client_secret': '[REDACTED]'}"),
        (
            "\"body\": \"{\\\"api_key\\\": \\\"k-123456\\\"}\"",
            "\"body\": \"{\\\"api_key\\\": \\\"[REDACTED]\\\"}\"",
        ),
        // HTTP request dumps
        (
            "GET /v1 HTTP/1.1\r\nHost: api\r\nAuthorization: Basic dXNlcjpwYXNz\r\nAccept: */*\r\n",
            "GET /v1 HTTP/1.1\r\nHost: api\r\nAuthorization: Basic [REDACTED]\r\nAccept: */*\r\n",
        ),
        ("proxy-authorization: Bearer abc.def", "proxy-authorization: Bearer [REDACTED]"),
        ("Authorization: opaque-credential-1\n", "Authorization: [REDACTED]\n"),
        ("x-api-key: abc 123\nnext", "x-api-key: [REDACTED]\nnext"),
        ("Cookie: session=abc; theme=dark\r\n", "Cookie: [REDACTED]\r\n"),
        ("set-cookie: id=1; HttpOnly", "set-cookie: [REDACTED]"),
        ("curl -H \"api-key: 1234\" url", "curl -H \"api-key: [REDACTED]"),
        // URLs
        ("postgres://app:s3cret@db:5432/prod", "postgres://app:[REDACTED]@db:5432/prod"),
        ("mongodb+srv://u:p%40ss@cluster0/x", "mongodb+srv://u:[REDACTED]@cluster0/x"),
        ("https://h/cb?code=1&access_token=xyz#frag", "https://h/cb?code=1&access_token=[REDACTED]"),
        ("wss://x/y?token=abc&v=2", "wss://x/y?token=[REDACTED]&v=2"),
        // YAML
        ("db:\n  password: hunter2\n  host: x\n", "db:\n  password: [REDACTED]\n  host: x\n"),
        ("- token: \"abc\"\n", "- token: \"[REDACTED]\"\n"),
        ("api_key: abc\n", "api_key: [REDACTED]\n"),
        // YAML shown by the tools: read_file's numbered lines, grep's path:line prefix
        ("File: c.yml\n\n 9 | db:\n10 |   password: hunter2\n", "File: c.yml\n\n 9 | db:\n10 |   password: [REDACTED]\n"),
        ("conf/app.yml:3: token: abc123\n", "conf/app.yml:3: token: [REDACTED]\n"),
        // logs
        ("level=info token=abc123 user=bob", "level=info token=[REDACTED] user=bob"),
        ("INFO auth ok credentials=u:p; next", "INFO auth ok credentials=[REDACTED] next"),
        // private keys
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
            "[REDACTED]",
        ),
        ("x -----BEGIN PRIVATE KEY-----\nMIIEv truncated", "x [REDACTED]"),
    ];
    let r = plain();
    for (input, expected) in cases {
        assert_eq!(&r.redact_str(input), expected, "input {input:?}");
    }
}

#[test]
fn corpus_near_misses_stay_unchanged() {
    let cases = [
        "input_tokens: 120, output_tokens: 40",
        "{\"tokenBudget\": 4000, \"max_tokens\": 256}",
        "the key is sk-0123456789 here",
        "sk-short",
        "Please enter your password to continue.",
        "Your password: keep it safe and never share it.",
        "A token is a unit of text; tokens are counted.",
        "base64: SGVsbG8gd29ybGQhIFRoaXMgaXMgbm90IGEgSldU",
        "eyJub3QiOiJhIGp3dCJ9 alone",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "commit 5b01fbb49e0123456789abcdef0123456789abcd",
        "task-management-and-risk-scoring-framework",
        "AKIAIOSFODNN7EXAMPLEX is too long",
        "AKIA1234 is too short",
        "ghp_tooshort",
        "https://example.com/path?q=token&page=2",
        "https://user@example.com/no/password",
        "http://localhost:8080/v1/chat",
        "git@github.com:owner/repo.git",
        "let tokens = count_tokens(text);",
        "if (passwordField.length < 8) return;",
        "The cookie jar is empty.",
        "model=gpt-4.1 temperature=0.2",
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        "--- a/file\n+++ b/file\n@@ -1 +1 @@",
        "xoxb-short",
        "email me at someone@example.com",
        "AIzaShort",
        "password",
        "{\"secret_name\": \"prod-db\"}",
        "s3cr3t is not a keyword here",
        "énorme mot de passe: ceci est du texte",
        // Shape heads inside ordinary words: the body would have to look generated.
        "task-management-and-risk-scoring-framework-2024",
        "desk-organizer-for-small-apartments",
        "mask-0123456789abcdef0123456789abcdef",
        "kiosk_live_terminal_session_manager",
        "risk_test_suite_for_every_single_module",
        "the flask-sqlalchemy-integration-layer",
        "XAKIAABCDEFGHIJKLMNOP is upper case only",
        "heyJude.sometimes.elsewhere",
        "whisk-Together-the-eggs",
        "ghost_protocol_was_released_yesterday",
    ];
    let r = plain();
    for case in cases {
        assert_eq!(r.redact_str(case), case, "near miss changed");
    }
    assert!(cases.len() >= 30);
}

// --- Streams ---------------------------------------------------------------------------------

#[test]
fn a_key_split_at_every_offset_into_two_and_three_pieces_is_redacted() {
    let key = "sk-proj-Zx81mQ2wLk9vBn4cRt7yUi0oPa3sDf6g";
    let r = Redactor::new([key.to_string()]);
    let text = format!("Your key is {key}. Keep it safe.");
    let expected = "Your key is [REDACTED]. Keep it safe.";
    for a in 0..=text.len() {
        assert_eq!(stream_in_pieces(&r, &text, &[a]), expected, "cut at {a}");
        for b in a..=text.len() {
            assert_eq!(stream_in_pieces(&r, &text, &[a, b]), expected, "cuts {a} {b}");
        }
    }
    // Without the exact value the shape rule alone must hold the same line.
    for a in 0..=text.len() {
        assert_eq!(stream_in_pieces(&plain(), &text, &[a]), expected, "shape only, cut at {a}");
    }
}

#[test]
fn random_splits_give_the_one_shot_result() {
    let mut rng = Rng::new(0x5eed);
    let samples = [
        "export DB_PASSWORD=\"a b c\"\nAuthorization: Bearer eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl\n",
        "{\"password\": \"x\\\"y\", \"model\": \"m\"} https://u:p@h/?token=t&a=b",
        "-----BEGIN EC PRIVATE KEY-----\nabc\n-----END EC PRIVATE KEY----- tail ghp_aaaaaaaaaaaaaaaaaaaaaaaaa",
        "key: sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n  password: hunter2\nx-api-key: k\n",
        "AKIAIOSFODNN7EXAMPLE AKIAIOSFODNN7EXAMPL é ü 中文 token=值",
    ];
    for sample in samples {
        let r = Redactor::new(["hunter2-long-value".to_string()]);
        let whole = r.redact_str(sample);
        let boundaries: Vec<usize> =
            (0..=sample.len()).filter(|&i| sample.is_char_boundary(i)).collect();
        for _ in 0..300 {
            let mut cuts: Vec<usize> =
                (0..rng.below(8)).map(|_| boundaries[rng.below(boundaries.len())]).collect();
            cuts.sort_unstable();
            assert_eq!(stream_in_pieces(&r, sample, &cuts), whole, "cuts {cuts:?} of {sample:?}");
        }
        // One character at a time.
        let all: Vec<usize> = boundaries[1..boundaries.len() - 1].to_vec();
        assert_eq!(stream_in_pieces(&r, sample, &all), whole);
    }
}

#[test]
fn plain_text_is_released_at_once() {
    let r = Redactor::new(["Zq9-secret-value".to_string()]);
    let mut stream = TextStream::default();
    let mut out = String::new();
    for piece in ["Hello", " world", ", this ", "is fine.\n"] {
        let before = out.len();
        stream.push(&r, piece, &mut out);
        assert_eq!(&out[before..], piece, "piece {piece:?} was held back");
    }
}

#[test]
fn a_last_letter_that_could_begin_a_key_waits_for_the_next_piece() {
    // A key may start inside a word (after `\n` written as text, say), so a piece ending in
    // the first letters of a shape keeps them until the next piece decides.
    let r = plain();
    let mut stream = TextStream::default();
    let mut out = String::new();
    stream.push(&r, "this is", &mut out);
    assert_eq!(out, "this i");
    stream.push(&r, " fine, ta", &mut out);
    assert_eq!(out, "this is fine, ta");
    stream.push(&r, "sk", &mut out);
    assert_eq!(out, "this is fine, ta");
    stream.push(&r, "-list", &mut out);
    stream.finish(&r, &mut out);
    assert_eq!(out, "this is fine, task-list");
}

#[test]
fn only_a_possible_secret_prefix_is_held_back() {
    let r = plain();
    let mut stream = TextStream::default();
    let mut out = String::new();
    stream.push(&r, "use sk", &mut out);
    assert_eq!(out, "use ");
    stream.push(&r, "-proj-", &mut out);
    assert_eq!(out, "use ");
    stream.push(&r, "aaaaaaaaaaaaaaaaaaaaaaaa", &mut out);
    assert_eq!(out, "use [REDACTED]");
    stream.push(&r, "aaaa and more.", &mut out);
    assert_eq!(out, "use [REDACTED] and more.");
    stream.push(&r, " sk-x", &mut out);
    stream.finish(&r, &mut out);
    assert_eq!(out, "use [REDACTED] and more. sk-x");
}

#[test]
fn the_filter_redacts_a_stream_in_pieces() {
    /// A reader handing out 3 bytes at a time, cutting characters and secrets.
    struct Slow<'a>(&'a [u8]);
    impl std::io::Read for Slow<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(3).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let r = Redactor::new(["exact-secret-value".to_string()]);
    let input = "é password=hunter2 ü exact-secret-value ghp_abcdefghijklmnopqrstuvwxyz end";
    let mut out = Vec::new();
    filter(Slow(input.as_bytes()), &mut out, &r).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), r.redact_str(input));
    let mut out = Vec::new();
    filter(&b"bad \xff byte"[..], &mut out, &r).unwrap();
    assert_eq!(out, "bad \u{fffd} byte".as_bytes());
}

// --- Properties --------------------------------------------------------------------------------

#[test]
fn redaction_is_idempotent_over_the_corpus() {
    let r = Redactor::new(["exact-secret-value".to_string()]);
    let mut texts: Vec<String> = Vec::new();
    for secret in shaped_secrets() {
        for context in CONTEXTS {
            texts.push(context.replace("{}", &secret));
        }
    }
    texts.push("password=\"\" token='' \"secret\": \"\" \\\"jwt\\\": \\\"\\\"".to_string());
    texts.push("Authorization: Bearer [REDACTED] https://a:[REDACTED]@h".to_string());
    // An AWS id glued to a key found inside the word (the fuzzer's find): the marker that
    // replaces the key must not turn the id's end into a word boundary.
    texts.push(format!("?ASIA{}github_pat_0123456789abcdefBearer ", "A".repeat(16)));
    for text in texts {
        let once = r.redact_str(&text);
        assert_eq!(r.redact_str(&once), once, "not idempotent on {text:?}");
    }
}

#[test]
fn adversarial_inputs_finish_in_linear_time() {
    // Each of these would be quadratic for a naive rescanning matcher; the test only checks they
    // finish and keep their size bounded, the benchmark measures the speed.
    let r = Redactor::new(["sk-sk-sk-sk-sk-sk-X".to_string()]);
    let cases = [
        "sk-".repeat(300_000),
        "\"a\":\"".repeat(200_000),
        "-----BEGIN ".repeat(100_000),
        format!("eyJ{}", "a".repeat(1_000_000)),
        "https://".repeat(100_000),
        "a=".repeat(300_000),
        "\\\"".repeat(300_000),
    ];
    for case in cases {
        let out = r.redact_str(&case);
        assert!(
            out.len() <= case.len() + REDACTED.len(),
            "grew from {} to {}",
            case.len(),
            out.len()
        );
    }
}

#[test]
fn shapes_inside_dashed_identifiers_are_found_whatever_came_before() {
    // Found by the long fuzz campaign against an earlier scanner.
    let r = Redactor::new(["secret-value-99".to_string()]);
    let input = "! AKIA-=tokenproj-'proj-\u{fffd}sk-AIzagithub_pat_-----END xoxb-github_pat_ghp_AAAAAAAAAAAAAAAA\u{fffd}eyJeyJé !";
    let once = r.redact_str(input);
    assert_eq!(r.redact_str(&once), once);
    assert!(!once.contains("ghp_AAAA"), "{once}");
}

#[test]
fn a_key_after_a_replaced_token_is_judged_as_a_second_pass_would() {
    // Found by the long fuzz campaign: the look-back once read the token's own characters.
    let r = Redactor::new(["secret-value-99".to_string()]);
    let input =
        "cookie/github_pat_api_key0123456789abcdefghp_x-api-key:中ASIAAAAAAAAAAAAAAAAApassword?";
    let once = r.redact_str(input);
    assert_eq!(r.redact_str(&once), once);
    assert_eq!(once, "cookie/[REDACTED]-api-key:[REDACTED]");
}

// --- Streaming cost (run by scripts/bench.py; it prints and asserts nothing) -----------------

/// Texts of about 30 KB that scripts/bench.py streams in 4-byte deltas: plain prose, and
/// secret-shaped text that the rules must hold back while it grows (a JWT whose segments are
/// 15 KB, a key-shaped word inside a word, a long authorization value).
pub(crate) fn streaming_bench_texts() -> Vec<(&'static str, String)> {
    let prose = "The quick brown fox jumps over the lazy dog, again and again. ".repeat(500);
    let jwt = format!("eyJ{}.{}.{} done", "a".repeat(15_000), "b".repeat(15_000), "c".repeat(40));
    let in_word = format!("{}xsk-{} ", "word".repeat(10), "ab".repeat(250)).repeat(55);
    vec![("plain text", prose), ("JWT-shaped", jwt), ("key shapes inside words", in_word)]
}

#[test]
#[ignore = "a benchmark: scripts/bench.py runs it"]
fn bench_streaming_redaction_in_small_deltas() {
    let redactor = Redactor::new(["an-exact-secret-value".to_string()]);
    for (name, text) in streaming_bench_texts() {
        let cuts: Vec<usize> = (4..text.len()).step_by(4).collect();
        let mut best = f64::MAX;
        for _ in 0..5 {
            let started = std::time::Instant::now();
            let out = stream_in_pieces(&redactor, &text, &cuts);
            best = best.min(started.elapsed().as_secs_f64());
            assert_eq!(out, redactor.redact_str(&text));
        }
        println!("bench-stream {name}\t{}\t{:.4}", text.len(), best * 1000.0);
    }
}

#[test]
fn a_long_held_token_is_decided_as_soon_as_a_piece_can_end_it() {
    // 12 KB of a JWT's first segment in 4-byte pieces: held (it may still become a JWT),
    // and looked at again only now and then; the piece that ends it releases it at once.
    let redactor = plain();
    let mut stream = TextStream::default();
    let mut out = String::new();
    stream.push(&redactor, "see eyJ", &mut out);
    for _ in 0..3_000 {
        stream.push(&redactor, "abcd", &mut out);
    }
    assert_eq!(out.len(), 4, "held back: {:?}", &out[..out.len().min(40)]);
    stream.push(&redactor, "ef and so on;", &mut out);
    // Not a JWT after all (one segment): written as it came, without waiting for the end.
    assert_eq!(out.len(), "see eyJ".len() + 12_000 + "ef and so on;".len());
    assert!(out.starts_with("see eyJabcdabcd") && out.ends_with("abcdef and so on;"));
    let mut jwt = TextStream::default();
    let mut redacted = String::new();
    jwt.push(&redactor, "eyJ", &mut redacted);
    for piece in ["a".repeat(12_000), ".".into(), "b".repeat(9), ".".into(), "c".repeat(12_000)] {
        for chunk in piece.as_bytes().chunks(4) {
            jwt.push(&redactor, std::str::from_utf8(chunk).unwrap(), &mut redacted);
        }
    }
    jwt.push(&redactor, " then text", &mut redacted);
    assert_eq!(redacted, "[REDACTED] then text");
}

#[test]
fn long_holds_cut_anywhere_give_what_one_piece_gives() {
    // Long tokens are looked at again only now and then; however they are cut, the output
    // is the one-piece output.
    let redactor = Redactor::new(["an-exact-secret-value".to_string()]);
    let mut rng = Rng::new(15);
    let texts = [
        format!("a eyJ{}.{}.{} b", "x".repeat(3000), "y".repeat(40), "z".repeat(2000)),
        format!("eyJ{}.{} not three segments", "x".repeat(5000), "y".repeat(900)),
        format!("eyJ{}", "q".repeat(17_000)),
        format!("{}xsk-{} tail xsk-{}", "w".repeat(30), "Ab3".repeat(200), "ab".repeat(300)),
        format!(
            "https://user:{}@host/ and Authorization: Bearer {}",
            "p".repeat(600),
            "t".repeat(70)
        ),
        format!(
            "-----BEGIN {}PRIVATE KEY-----\n{}\n-----END PRIVATE KEY----- after",
            "RSA ",
            "k".repeat(4000)
        ),
    ];
    for text in &texts {
        let whole = redactor.redact_str(text);
        for _ in 0..40 {
            let mut cuts: Vec<usize> =
                (0..rng.below(400) + 1).map(|_| rng.below(text.len())).collect();
            cuts.sort();
            assert_eq!(stream_in_pieces(&redactor, text, &cuts), whole, "{}", &text[..30]);
        }
        let fours: Vec<usize> = (4..text.len()).step_by(4).collect();
        assert_eq!(stream_in_pieces(&redactor, text, &fours), whole, "{}", &text[..30]);
    }
}

#[test]
fn a_secret_value_inside_a_key_redacts_the_key_whole() {
    let cases = [
        ("acme", "key sk-proj-acmeAbCdEfGhIjKlMnOpQrStUvWx end", "key [REDACTED] end"),
        ("QRSTUVWX", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123\n", "[REDACTED]\n"),
        // A secret right after a key is glued to it: one marker for both.
        ("tail1234", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxtail1234 x", "[REDACTED] x"),
        // Outside a key a secret is replaced alone, as before.
        ("acme", "acme alone, acmecorp, sk-", "[REDACTED] alone, [REDACTED]corp, sk-"),
    ];
    for (secret, text, expected) in cases {
        let r = Redactor::new(Vec::new());
        let mut r = r;
        r.add_secrets_min([secret.to_string()], 4);
        assert_eq!(r.redact_str(text), expected, "{secret} in {text}");
        // The same in every two pieces.
        for cut in (0..=text.len()).filter(|&c| text.is_char_boundary(c)) {
            let mut stream = TextStream::default();
            let mut out = String::new();
            stream.push(&r, &text[..cut], &mut out);
            stream.push(&r, &text[cut..], &mut out);
            stream.finish(&r, &mut out);
            assert_eq!(out, expected, "{text} cut at {cut}");
        }
    }
}
