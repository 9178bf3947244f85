//! A deterministic fuzzer without dependencies, run as ordinary tests.
//!
//! Each target gets a fixed number of cases generated from a fixed seed (random text from a
//! target-specific dictionary, or mutations of valid samples), so a failure reproduces exactly.
//! `ZERO_FUZZ_SCALE=N` runs N times as many cases (and other seeds) for a longer campaign.
//! Properties: nothing panics; what should be JSON is JSON; redaction is idempotent and gives
//! the same result however its input is split; the SSE reader gives the same frames however the
//! bytes arrive.

use std::io::{BufReader, Read};
use std::time::{Duration, Instant};

use crate::net::sse::{Frame, SseReader};
use crate::provider::{
    anthropic::AnthropicDecoder, gemini::GeminiDecoder, openai::OpenAiDecoder,
    responses::ResponsesDecoder, Decoder,
};
use crate::redact::{Redactor, TextStream};
use crate::testing::kit::Rng;

fn scale() -> usize {
    std::env::var("ZERO_FUZZ_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1)
}

/// Runs `cases × scale` cases; reports the count and the slowest case.
fn campaign(name: &str, cases: usize, mut case: impl FnMut(&mut Rng)) -> usize {
    let total = cases * scale();
    let mut rng = Rng::new(
        name.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b.into())) + scale() as u64,
    );
    let mut slowest = Duration::ZERO;
    for _ in 0..total {
        let started = Instant::now();
        case(&mut rng);
        slowest = slowest.max(started.elapsed());
    }
    eprintln!("fuzz {name}: {total} cases, slowest {slowest:?}");
    total
}

/// Text made of dictionary tokens and random bytes.
fn text(rng: &mut Rng, dict: &[&str], max_tokens: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.below(max_tokens + 1) {
        if rng.chance(6) {
            out.push(rng.next() as u8);
        } else {
            out.extend_from_slice(rng.pick(dict).as_bytes());
        }
    }
    out
}

/// A few random edits of a valid sample.
fn mutate(rng: &mut Rng, sample: &[u8], dict: &[&str]) -> Vec<u8> {
    let mut out = sample.to_vec();
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(out.len() + 1);
        match rng.below(7) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 => out.insert(at, rng.next() as u8),
            2 if at < out.len() => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                out.drain(at..end);
            }
            3 => {
                let token = rng.pick(dict).as_bytes().to_vec();
                out.splice(at..at, token);
            }
            4 if at < out.len() => {
                let end = (at + 1 + rng.below(32)).min(out.len());
                let copy = out[at..end].to_vec();
                out.splice(at..at, copy);
            }
            5 => out.truncate(at),
            _ => {}
        }
    }
    out
}

/// Random cut points of a string, on character boundaries.
fn cuts(rng: &mut Rng, text: &str, max: usize) -> Vec<usize> {
    let bounds: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
    let mut out: Vec<usize> = (0..rng.below(max + 1)).map(|_| *rng.pick(&bounds)).collect();
    out.sort_unstable();
    out
}

/// A reader handing out the bytes in the given sizes.
struct Pieces<'a> {
    bytes: &'a [u8],
    sizes: Vec<usize>,
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want =
            if self.sizes.is_empty() { self.bytes.len() } else { self.sizes.remove(0).max(1) };
        let n = want.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// All frames of a body (or the kind of error that ended it).
fn frames(reader: impl Read) -> Result<Vec<Frame>, String> {
    let mut sse = SseReader::new(BufReader::with_capacity(7, reader));
    let mut out = Vec::new();
    loop {
        match sse.next_frame() {
            Ok(Some(frame)) => out.push(frame),
            Ok(None) => return Ok(out),
            Err(err) => return Err(format!("{err:?}").chars().take(8).collect()),
        }
    }
}

const SSE_DICT: &[&str] = &[
    "data: ",
    "data:",
    "event: error\n",
    "event: message_start\n",
    "id: 1\n",
    "retry: 5\n",
    ": ping\n",
    "\n",
    "\r\n",
    "\r",
    "\n\n",
    "\r\n\r\n",
    "[DONE]",
    "{\"a\":1}",
    "{",
    "}",
    " ",
    "x",
    "é",
    "\u{0}",
];

#[test]
fn fuzz_sse_reader_is_split_invariant() {
    campaign("sse", 25_000, |rng| {
        let body = text(rng, SSE_DICT, 24);
        let whole = frames(&body[..]);
        let mut sizes = Vec::new();
        let mut left = body.len();
        while left > 0 {
            let n = 1 + rng.below(left.min(9));
            sizes.push(n);
            left -= n;
        }
        let split = frames(Pieces { bytes: &body, sizes });
        assert_eq!(split, whole, "split changed the frames of {body:?}");
        let bytewise = frames(Pieces { bytes: &body, sizes: vec![1; body.len()] });
        assert_eq!(bytewise, whole, "one byte at a time changed the frames of {body:?}");
    });
}

/// Valid streams for each decoder, to mutate.
const OPENAI_SAMPLES: &[&str] = &[
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"grep\",\"arguments\":\"{\\\"pat\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"tern\\\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
    "data: {\"error\":{\"message\":\"boom\"}}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\",\"refusal\":\"no\"}}]}\n\n",
];
const ANTHROPIC_SAMPLES: &[&str] = &[
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"glob\",\"input\":{}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":2}}\n\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"s\"}}\n\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"o\"}}\n\n",
];
const GEMINI_SAMPLES: &[&str] = &[
    "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"},{\"functionCall\":{\"name\":\"glob\",\"args\":{}}}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":1}}\r\n\r\n",
    "data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}\n\n",
    "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"t\",\"thought\":true}]}}],\"functionCalls\":[{\"name\":\"x\",\"args\":[]}]}\n\n{\"error\":{\"message\":\"late\"}}",
];
const RESPONSES_SAMPLES: &[&str] = &[
    "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"glob\",\"arguments\":\"\"}}\n\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"delta\":\"{}\"}\n\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"glob\",\"arguments\":\"{}\"}}\n\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
    "data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hi\"}\n\ndata: {\"type\":\"response.output_item.done\",\"output_index\":1,\"item\":{\"type\":\"reasoning\",\"id\":\"r\",\"encrypted_content\":\"e\"}}\n\ndata: {\"type\":\"response.incomplete\",\"response\":{\"incomplete_details\":{\"reason\":\"max_output_tokens\"}}}\n\n",
    "data: {\"type\":\"error\",\"error\":{\"code\":\"server_error\",\"message\":\"m\"}}\n\n",
];
const JSON_DICT: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "null",
    "true",
    "1",
    "-1",
    "1e999",
    "\"index\":",
    "\"choices\":",
    "\"delta\":",
    "\"type\":",
    "\"error\":",
    "\"usage\":",
    "\"parts\":",
    "\\u0000",
    "data: ",
    "\n\n",
];

fn decode<D: Decoder + Default>(body: &[u8]) {
    let mut sse = SseReader::new(body);
    let mut decoder = D::default();
    let mut out = Vec::new();
    while let Ok(Some(frame)) = sse.next_frame() {
        if decoder.feed(frame, &mut out).is_err() {
            return;
        }
    }
    let _ = decoder.finish(&mut out);
    for event in out {
        if let crate::provider::StreamEvent::ToolCall(call) = event {
            assert!(!call.name.is_empty() && !call.id.is_empty(), "a call without name or id");
        }
    }
}

#[test]
fn fuzz_provider_decoders() {
    campaign("openai decoder", 20_000, |rng| {
        decode::<OpenAiDecoder>(&sample(rng, OPENAI_SAMPLES, JSON_DICT))
    });
    campaign("anthropic decoder", 20_000, |rng| {
        decode::<AnthropicDecoder>(&sample(rng, ANTHROPIC_SAMPLES, JSON_DICT))
    });
    campaign("gemini decoder", 20_000, |rng| {
        decode::<GeminiDecoder>(&sample(rng, GEMINI_SAMPLES, JSON_DICT))
    });
    campaign("responses decoder", 20_000, |rng| {
        decode::<ResponsesDecoder>(&sample(rng, RESPONSES_SAMPLES, JSON_DICT))
    });
}

/// A mutation of one of the samples.
fn sample(rng: &mut Rng, samples: &[&str], dict: &[&str]) -> Vec<u8> {
    let chosen = samples[rng.below(samples.len())].as_bytes();
    mutate(rng, chosen, dict)
}

const REDACT_DICT: &[&str] = &[
    "a",
    "Z",
    "9",
    "_",
    "-",
    ".",
    " ",
    "\n",
    "\t",
    "=",
    ":",
    "/",
    "@",
    "?",
    "&",
    "\"",
    "'",
    "\\",
    "#",
    "sk-",
    "proj-",
    "ghp_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "eyJ",
    "xoxb-",
    "AIza",
    "glpat-",
    "npm_",
    "password",
    "token",
    "api_key",
    "apiKey",
    "Authorization",
    "Bearer ",
    "Basic ",
    "cookie",
    "x-api-key",
    "https://",
    "postgres://",
    "-----BEGIN ",
    "PRIVATE KEY-----",
    "-----END ",
    "AAAAAAAAAAAAAAAA",
    "0123456789abcdef",
    "[REDACTED]",
    "é",
    "中",
    "🙂",
    "secret-value-99",
];

#[test]
fn fuzz_redaction_is_idempotent_and_split_invariant() {
    let redactor = Redactor::new(["secret-value-99".to_string()]);
    campaign("redaction", 40_000, |rng| {
        let input = String::from_utf8_lossy(&text(rng, REDACT_DICT, 30)).into_owned();
        let once = redactor.redact_str(&input);
        assert_eq!(redactor.redact_str(&once), once, "not idempotent on {input:?}");
        assert!(!once.contains("secret-value-99"), "exact secret kept in {input:?}");
        let mut stream = TextStream::default();
        let mut out = String::new();
        let mut at = 0;
        for cut in cuts(rng, &input, 6) {
            stream.push(&redactor, &input[at..cut], &mut out);
            at = cut;
        }
        stream.push(&redactor, &input[at..], &mut out);
        stream.finish(&redactor, &mut out);
        assert_eq!(out, once, "split changed the result for {input:?}");
    });
}

#[test]
fn fuzz_stream_json_input_validator() {
    let samples: &[&str] = &[
        "{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"hi\"}\n",
        "{\"schemaVersion\":1,\"type\":\"message\",\"role\":\"user\",\"content\":\"a\"}\r\n\n{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"b\"}",
    ];
    campaign("stream-json input", 25_000, |rng| {
        let input = sample(rng, samples, JSON_DICT);
        match crate::protocol::input::read_events(&input[..], &mut None) {
            Ok(prompt) => assert!(!prompt.text.trim().is_empty() || !prompt.images.is_empty()),
            Err(err) => {
                let message = err.to_string();
                let message = message.to_string();
                assert!(!message.contains('\n'), "multi-line error {message:?}");
                assert!(
                    message.starts_with("Invalid stream-json input at line ")
                        || message.starts_with("Stream-json input "),
                    "{message:?}"
                );
            }
        }
    });
}

const REGEX_DICT: &[&str] = &[
    "a", "b", "(", ")", "|", "*", "+", "?", "{2}", "{1,3}", "{", "}", "[", "]", "^", "$", ".",
    "\\d", "\\w", "\\s", "\\b", "\\", "-", "(?:", "(?i)", "é", "[a-z]", "[^0-9]", "x*?",
];

#[test]
fn fuzz_regex_engine() {
    campaign("regex", 25_000, |rng| {
        let pattern = String::from_utf8_lossy(&text(rng, REGEX_DICT, 10)).into_owned();
        let haystack =
            String::from_utf8_lossy(&text(rng, &["a", "b", "ab", " ", "1", "é", "\n", "x"], 40))
                .into_owned();
        if let Ok(regex) = crate::search::regex::Regex::new(&pattern, rng.chance(3)) {
            // The DFA, the VM alone, and the buffer search (prefilter, then the program on
            // the candidate lines) give one answer.
            let vm = regex.clone().without_dfa();
            assert_eq!(
                regex.is_match(&haystack),
                vm.is_match(&haystack),
                "{pattern:?} on {haystack:?}"
            );
            let max_line = if rng.chance(4) { 1 + rng.below(8) } else { usize::MAX };
            let mut found = Vec::new();
            regex.matching_lines(haystack.as_bytes(), max_line, |start, end| {
                found.push((start, end));
                true
            });
            let mut want = Vec::new();
            let mut start = 0;
            for line in haystack.split('\n') {
                let end = start + line.len();
                let cut = &line.as_bytes()[..line.len().min(max_line)];
                // As grep reads CRLF files: a line's final `\r` is not part of it.
                let cut = cut.strip_suffix(b"\r").unwrap_or(cut);
                if start < haystack.len() && vm.is_match(&String::from_utf8_lossy(cut)) {
                    want.push((start, end));
                }
                start = end + 1;
            }
            assert_eq!(found, want, "{pattern:?} on {haystack:?} (lines cut at {max_line})");
        }
        // A literal (escaped) pattern always finds itself.
        let word: String = haystack.chars().filter(|c| c.is_alphanumeric()).take(5).collect();
        if !word.is_empty() {
            let regex =
                crate::search::regex::Regex::new(&word, false).expect("a plain word compiles");
            assert!(regex.is_match(&format!("<{word}>")));
        }
    });
}

/// Pieces of nested patterns: groups, counted repetitions up to the limit, empty groups.
const NESTED_DICT: &[&str] = &[
    "(", ")", "(?:", "(?:)", "a", "[a-z]", "*", "+", "?", "{1000}", "{0,1000}", "{2,}", "|",
    "{999}", "(?:a|b)", "\\d", ".",
];

#[test]
fn fuzz_regex_compile_work_is_bounded_for_nested_patterns() {
    use crate::search::regex::{Regex, MAX_PROGRAM, SPENT};
    campaign("regex compile work", 20_000, |rng| {
        let pattern = String::from_utf8_lossy(&text(rng, NESTED_DICT, 24)).into_owned();
        SPENT.with(|spent| spent.set(0));
        let compiled = Regex::new(&pattern, rng.chance(3));
        // Compiled or refused, the work done is bounded the same: at most the program's limit
        // in steps, however the counts multiply.
        let spent = SPENT.with(|spent| spent.get());
        assert!(spent <= MAX_PROGRAM as u64, "{pattern:?} took {spent} steps");
        if let Ok(regex) = compiled {
            let _ = regex.is_match("aab");
        }
    });
}

#[test]
fn fuzz_glob_expansion_is_bounded_for_nested_patterns() {
    use crate::search::glob::{Glob, MAX_EXPANSION};
    let dict: &[&str] = &["{", "}", ",", "a", "bc", "*", "/", "{a,b}", "{,}", "**", "[ab]"];
    campaign("glob expansion", 20_000, |rng| {
        let pattern = String::from_utf8_lossy(&text(rng, dict, 40)).into_owned();
        if let Ok(glob) = Glob::new(&pattern) {
            assert!(glob.size() <= MAX_EXPANSION, "{pattern:?}: {}", glob.size());
            let _ = glob.matches("a/bc/a");
        }
    });
}

#[test]
fn fuzz_glob_matcher() {
    let dict: &[&str] = &[
        "a", "b", "*", "**", "?", "/", "[ab]", "[!a]", "{a,b}", "{", "}", ",", ".", "\\", "[", "]",
    ];
    campaign("glob", 25_000, |rng| {
        let pattern = String::from_utf8_lossy(&text(rng, dict, 10)).into_owned();
        let path =
            String::from_utf8_lossy(&text(rng, &["a", "b", "/", ".", "ab", "c"], 12)).into_owned();
        if let Ok(glob) = crate::search::glob::Glob::new(&pattern) {
            let _ = glob.matches(&path);
            let _ = glob.base();
        }
        let plain: String = (0..1 + rng.below(4))
            .map(|_| *rng.pick(&["a", "bc", "d9", "e_f"]))
            .collect::<Vec<_>>()
            .join("/");
        {
            assert!(
                crate::search::glob::Glob::new(&plain).unwrap().matches(&plain),
                "{plain} does not match itself"
            );
        }
    });
}

#[test]
fn fuzz_unified_diff_parser_and_applier() {
    let samples: &[&str] = &[
        "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
        "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n",
        "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2 +2,2 @@\n-two\n+2\n+2b\n@@ -3 +4 @@\n-three\n+3\n",
    ];
    let dict: &[&str] = &[
        "\n",
        " ",
        "-",
        "+",
        "@@ ",
        " @@",
        "-1,2",
        "+1",
        "---",
        "+++",
        "\\ No newline",
        "/dev/null",
        "a/",
        "0",
    ];
    campaign("unified diff", 25_000, |rng| {
        let patch = String::from_utf8_lossy(&sample(rng, samples, dict)).into_owned();
        let content =
            String::from_utf8_lossy(&text(rng, &["one\n", "two\n", "three\n", "x", "\n"], 6))
                .into_owned();
        let _ = crate::tools::patch::apply_text(&content, &patch);
    });
}

#[test]
fn fuzz_session_event_reader() {
    let line = "{\"id\":\"s:1\",\"sessionId\":\"s\",\"sequence\":1,\"type\":\"message\",\"createdAt\":\"t\",\"payload\":{\"role\":\"user\",\"content\":\"hi\"}}\n";
    let sample = format!("{line}{}", line.replace(":1", ":2"));
    campaign("session events", 20_000, |rng| {
        let bytes = mutate(rng, sample.as_bytes(), JSON_DICT);
        let (events, _) = crate::session::parse_events("s", &bytes);
        let _ = crate::session::conversation(&events);
        // Read one line at a time too, with a budget that drops exchanges as it goes.
        let mut history = crate::session::History::new(rng.below(200) as u64);
        for event in &events {
            history.push(event);
        }
        let _ = history.finish();
    });
}

#[test]
fn fuzz_emitter_lines_are_always_json() {
    use crate::protocol::events::SchemaVersion::{V1, V2};
    campaign("emitter", 10_000, |rng| {
        // Both schema versions: schema 2 adds reasoning, permission events and seq.
        let two = rng.chance(2);
        let version = if two { V2 } else { V1 };
        let (mut e, sink) = crate::testing::kit::stream_emitter("run_1", version);
        for _ in 0..rng.below(8) {
            let piece = String::from_utf8_lossy(&text(rng, REDACT_DICT, 8)).into_owned();
            let id = String::from_utf8_lossy(&text(rng, &["c", "1", "_", " ", "-", "é", "/"], 5))
                .into_owned();
            let gate = crate::output::Gate {
                id: &id,
                name: "bash",
                permission_mode: crate::protocol::events::PermissionMode::Auto,
                autonomy: crate::protocol::events::Autonomy::Low,
                side_effect: crate::protocol::events::SideEffect::Shell,
                reason: &piece,
            };
            let decision = crate::output::Decision {
                action: crate::protocol::events::Action::Deny,
                reason: &piece,
                decided_by: crate::protocol::events::DecidedBy::Policy,
            };
            let _ = match rng.below(7) {
                0 => e.text(&piece),
                1 => e.tool_call(&id, "bash", &piece, crate::protocol::events::SideEffect::Shell),
                2 => e.result(&id, rng.chance(2), &piece, None),
                3 => e.reasoning(&piece),
                4 => e.permission_request(&gate, Some((&id, 5))),
                5 => e.permission_decision(&gate, &decision),
                _ => e.warn(&piece),
            };
        }
        let _ = e.success(&crate::conversation::Answer::text("done"));
        let out = sink.text();
        for (n, line) in out.lines().enumerate() {
            let event: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"));
            if two {
                assert_eq!(event["seq"], n + 1, "a gap in seq: {out}");
            }
            if let Some(id) = event.get("id").and_then(|v| v.as_str()) {
                assert_eq!(
                    crate::output::wire_id(id),
                    id,
                    "an id outside the protocol rule: {line}"
                );
            }
        }
    });
}

#[test]
fn fuzz_retry_hints_are_always_within_bounds() {
    let dict: &[&str] = &[
        "0", "1", "9", "5", ".", "e", "E", "-", "+", "20", "300", "NaN", "nan", "inf", "-inf", " ",
        ",", ":", "GMT", "Sun", "Wed", "Nov", "Oct", "1994", "9999", "08:49:37", "é",
    ];
    let max = crate::net::http::MAX_RETRY_AFTER;
    campaign("retry-after", 10_000, |rng| {
        let millis = String::from_utf8_lossy(&text(rng, dict, 6)).into_owned();
        let seconds = String::from_utf8_lossy(&text(rng, dict, 8)).into_owned();
        let millis = rng.chance(2).then_some(millis.as_str());
        let now = rng.next() as i64 >> rng.below(64);
        if let Some(wait) = crate::net::http::retry_hint(millis, Some(&seconds), now) {
            assert!(wait <= max, "{millis:?} {seconds:?} gave {wait:?}");
        }
        let _ = crate::clock::parse_http_date(&seconds);
    });
}

#[test]
fn fuzz_config_file_parser() {
    let samples: &[&str] = &[
        r#"{"activeProvider":"work","maxTurns":20,"providers":[{"name":"work","provider":"anthropic","baseURL":"https://api.anthropic.com","apiKey":"k","model":"sonnet-4.5"}]}"#,
        r#"{"providers":[{"name":"a","baseURL":"http://localhost:1/v1","model":"m","description":"d"}],"planMode":false}"#,
    ];
    campaign("config file", 10_000, |rng| {
        let bytes = sample(rng, samples, JSON_DICT);
        if let Err(message) = crate::config::parse_config_bytes(&bytes) {
            let message = message.to_string();
            assert!(!message.contains('\n'), "multi-line error {message:?}");
        }
    });
}

#[test]
fn fuzz_decoded_arguments_never_keep_a_secret() {
    let secrets = ["secret-value-99", "sk-proj-Zx81mQ2wLk9vBn4cRt7yUi0oPa3sDf6g"];
    let redactor = Redactor::new([secrets[0].to_string()]);
    let pieces: &[&str] =
        &["{\"a\":\"", "\",\"b\":\"", "\"}", "\\n", "\\t", "\\\\", "x", " ", "{", "\""];
    campaign("decoded arguments", 10_000, |rng| {
        let secret = *rng.pick(&secrets);
        // The secret with some characters written as `\u` escapes, somewhere in JSON text
        // (valid or not).
        let spelled: String = secret
            .chars()
            .map(|c| if rng.chance(3) { format!("\\u{:04x}", c as u32) } else { c.to_string() })
            .collect();
        let mut text = String::from_utf8_lossy(&text(rng, pieces, 4)).into_owned();
        text.push_str(&spelled);
        text.push_str(&String::from_utf8_lossy(&self::text(rng, pieces, 4)));
        let out = redactor.redact_json_text(&text);
        assert!(!out.contains(secret), "{secret} kept from {text:?}: {out:?}");
        let decoded = crate::redact::unescape_lenient(&out);
        assert!(!decoded.contains(secret), "{secret} recoverable from {out:?} (input {text:?})");
    });
}

/// One message a server might send, as a line, and what zero must read from it: `Some(kind
/// and id)` for a well-formed message, `None` for one it must refuse.
fn server_message(rng: &mut Rng) -> (String, Option<String>) {
    let id = rng.below(1_000_000) as u64;
    let value = serde_json::json!({"n": rng.below(100), "text": "é \u{1F600} \\ \""});
    match rng.below(8) {
        0 => (
            serde_json::json!({"jsonrpc": "2.0", "id": id, "result": value}).to_string(),
            Some(format!("response {id} ok")),
        ),
        1 => (
            serde_json::json!({"jsonrpc": "2.0", "id": id.to_string(), "error": {"code": -32000, "message": "no"}})
                .to_string(),
            Some(format!("response {id} error")),
        ),
        2 => (
            serde_json::json!({"jsonrpc": "2.0", "id": "r", "method": "roots/list"}).to_string(),
            Some("request roots/list".to_string()),
        ),
        3 => (
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": value})
                .to_string(),
            Some("notification notifications/tools/list_changed".to_string()),
        ),
        4 => (format!("[{}]", serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}})), Some(format!("response {id} ok"))),
        5 => ("not json at all".to_string(), None),
        6 => (serde_json::json!({"jsonrpc": "2.0", "id": id}).to_string(), None),
        _ => (serde_json::json!([1, 2]).to_string(), None),
    }
}

/// How zero read a message, in the words of [`server_message`].
fn read_as(text: &str) -> Option<String> {
    use crate::mcp::wire::{parse, Incoming};
    let messages = parse(text).ok()?;
    let [one] = messages.as_slice() else { return Some(format!("{} messages", messages.len())) };
    Some(match one {
        Incoming::Response { id, result: Ok(_) } => format!("response {id} ok"),
        Incoming::Response { id, result: Err(_) } => format!("response {id} error"),
        Incoming::Request { method, .. } => format!("request {method}"),
        Incoming::Notification { method, .. } => format!("notification {method}"),
    })
}

#[test]
fn fuzz_mcp_json_rpc_reader() {
    use crate::mcp::stdio::split_lines;
    use std::collections::VecDeque;
    campaign("mcp json-rpc reader", 20_000, |rng| {
        // A server's output: messages, blank lines, `\r\n` endings, sometimes random bytes.
        let mut stream = String::new();
        let mut expected = Vec::new();
        for _ in 0..1 + rng.below(6) {
            let (line, read) = server_message(rng);
            stream.push_str(&line);
            stream.push_str(if rng.chance(3) { "\r\n" } else { "\n" });
            if rng.chance(4) {
                stream.push_str("  \n");
            }
            expected.push((line, read));
        }
        // Read whole, then in random pieces: the same lines either way.
        let whole = {
            let (mut partial, mut lines) = (Vec::new(), VecDeque::new());
            assert!(split_lines(&mut partial, stream.as_bytes(), &mut lines));
            assert!(partial.is_empty());
            lines
        };
        let mut partial = Vec::new();
        let mut pieces = VecDeque::new();
        let mut from = 0;
        for cut in cuts(rng, &stream, 8).into_iter().chain([stream.len()]) {
            assert!(split_lines(&mut partial, &stream.as_bytes()[from..cut], &mut pieces));
            from = cut;
        }
        assert_eq!(whole, pieces, "{stream:?}");
        assert_eq!(whole.len(), expected.len(), "{stream:?}");
        for (line, (sent, read)) in whole.iter().zip(&expected) {
            assert_eq!(line, sent);
            assert_eq!(&read_as(line), read, "{line}");
        }
        // Whatever else a server writes is read or refused, never a panic.
        let junk = mutate(rng, stream.as_bytes(), &["{", "}", "\"id\":", "[", "]", "\n", "null"]);
        let (mut partial, mut lines) = (Vec::new(), VecDeque::new());
        split_lines(&mut partial, &junk, &mut lines);
        for line in lines {
            let _ = crate::mcp::wire::parse(&line);
        }
    });
}
