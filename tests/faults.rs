//! Providers misbehaving: every failure ends with `provider_error`, exit 3, `error` + `run_end`
//! and one line naming the cause; retries happen only before anything was written.

use std::net::TcpListener;
use std::time::Duration;

use crate::mock::{openai, Mock, Reply, Step};
use crate::util::{Output, TestDir};

fn run(dir: &TestDir, base: &str, extra: &[(&str, &str)]) -> Output {
    let mut zero = dir.zero().openai(base, "local-coder").env("ZERO_MAX_RETRIES", "0").args(&[
        "exec",
        "-o",
        "stream-json",
        "hi",
    ]);
    for (k, v) in extra {
        zero = zero.env(k, v);
    }
    zero.run()
}

/// The ending every fault must produce; returns the error message.
#[track_caller]
fn provider_error(out: &Output, cause: &str) -> String {
    out.assert_code(3);
    let events = out.stream();
    let error = &events[events.len() - 2];
    assert_eq!(error["code"], "provider_error", "{out:?}");
    let message = error["message"].as_str().unwrap().to_string();
    assert!(message.contains(cause), "{message:?} does not name {cause:?}{out:?}");
    assert!(!out.stderr.contains("panicked"), "{out:?}");
    message
}

fn json_error(message: &str) -> String {
    format!("{{\"error\":{{\"message\":\"{message}\",\"type\":\"test_error\"}}}}")
}

#[test]
fn http_errors_quote_the_provider() {
    let dir = TestDir::new("http-errors");
    let cases = [
        (401, "Incorrect API key provided", "Provider authentication error (HTTP 401, check your API key): Incorrect API key provided"),
        (403, "Project not allowed", "Provider authentication error (HTTP 403, check your API key): Project not allowed"),
        (404, "The model `local-coder` does not exist", "Provider returned error (HTTP 404): The model `local-coder` does not exist"),
        (413, "Request too large", "Provider returned error (HTTP 413): Request too large"),
        (429, "Rate limit reached", "Provider rate limit error (HTTP 429): Rate limit reached"),
        (500, "The server had an error", "Provider returned error (HTTP 500): The server had an error"),
        (503, "Service unavailable", "Provider returned error (HTTP 503): Service unavailable"),
        (529, "Overloaded", "Provider overloaded (HTTP 529): Overloaded"),
    ];
    for (status, message, expected) in cases {
        let mock =
            Mock::start(vec![Reply::status(status, "application/json", &json_error(message))]);
        let out = run(&dir, &mock.v1(), &[]);
        assert_eq!(provider_error(&out, expected), expected);
    }
}

#[test]
fn an_html_error_page_is_summarised() {
    let dir = TestDir::new("html");
    let page = format!(
        "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>{}</body></html>",
        "<p>noise</p>".repeat(500)
    );
    let mock = Mock::start(vec![Reply::status(502, "text/html", &page)]);
    let message = provider_error(
        &run(&dir, &mock.v1(), &[]),
        "Provider returned error (HTTP 502): an HTML error page (502 Bad Gateway)",
    );
    assert!(message.len() < 200, "{message}");
}

#[test]
fn unreachable_hosts() {
    let dir = TestDir::new("unreachable");
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    provider_error(&run(&dir, &format!("http://127.0.0.1:{port}/v1"), &[]), "connection refused");
    provider_error(&run(&dir, "http://nonexistent.invalid/v1", &[]), "nonexistent.invalid");
}

#[test]
fn bodies_that_are_not_sse() {
    let dir = TestDir::new("not-sse");
    let mock =
        Mock::start(vec![Reply::status(200, "text/plain", "Service is starting, try later")]);
    provider_error(
        &run(&dir, &mock.v1(), &[]),
        "not an event stream: Service is starting, try later",
    );
    let mock = Mock::start(vec![Reply::sse(&["data: {\"choices\": [oops\n\n"])]);
    provider_error(&run(&dir, &mock.v1(), &[]), "invalid OpenAI stream payload");
    let mock = Mock::start(vec![Reply::stream(vec![Step::Send(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\xfe\"}}]}\n\n".to_vec(),
    )])]);
    provider_error(&run(&dir, &mock.v1(), &[]), "not valid UTF-8");
    let huge = format!("data: {}\n\n", "x".repeat(20 * 1024 * 1024));
    let mock = Mock::start(vec![Reply::sse(&[huge])]);
    provider_error(&run(&dir, &mock.v1(), &[]), "exceeds 8 MiB");
}

#[test]
fn streams_that_end_early() {
    let dir = TestDir::new("early");
    // A clean end of the body, but no finish_reason and no [DONE].
    let mock = Mock::start(vec![Reply::sse(&[openai::text("Hello")])]);
    let out = run(&dir, &mock.v1(), &[]);
    provider_error(&out, "Provider stream ended before the model finished");
    assert_eq!(out.text(), "Hello", "what arrived is still shown");
    // The connection drops mid-body after some text: no retry, since text was written.
    let mock = Mock::start(vec![Reply::stream(vec![
        Step::Send(openai::text("partial").into_bytes()),
        Step::Cut,
    ])]);
    let out = run(&dir, &mock.v1(), &[("ZERO_MAX_RETRIES", "2")]);
    provider_error(&out, "Provider stream failed");
    assert_eq!(mock.requests().len(), 1, "no retry after text was written");
    assert!(!out.types().contains(&"warning".to_string()));
}

#[test]
fn stalls_and_silence_hit_their_timeouts() {
    let dir = TestDir::new("stall");
    let mock = Mock::start(vec![Reply::stream(vec![
        Step::Send(openai::text("slow").into_bytes()),
        Step::Pause(Duration::from_secs(5)),
        Step::Send(openai::finish("stop").into_bytes()),
    ])]);
    let out = run(&dir, &mock.v1(), &[("ZERO_IDLE_TIMEOUT_MS", "400")]);
    provider_error(&out, "Provider stream stalled: no data for 400 ms (ZERO_IDLE_TIMEOUT_MS)");
    assert!(out.elapsed < Duration::from_millis(1400), "ended {:?} after start", out.elapsed);
    let mock = Mock::start(vec![Reply::Hang]);
    let out = run(&dir, &mock.v1(), &[("ZERO_HEADERS_TIMEOUT_MS", "400")]);
    provider_error(&out, "Provider did not answer");
    assert!(out.elapsed < Duration::from_millis(1400), "ended {:?} after start", out.elapsed);
}

#[test]
fn a_mid_stream_error_event() {
    let dir = TestDir::new("midstream");
    let mock = Mock::start(vec![Reply::sse(&[
        openai::text("Working"),
        "event: error\ndata: {\"error\":{\"message\":\"Overloaded, try again\",\"type\":\"overloaded_error\"}}\n\n".to_string(),
    ])]);
    let out = run(&dir, &mock.v1(), &[]);
    provider_error(&out, "Provider returned error during streaming: Overloaded, try again");
    assert_eq!(out.text(), "Working");
}

#[test]
fn transient_failures_are_retried_before_output() {
    let dir = TestDir::new("retry");
    let mock = Mock::start(vec![
        Reply::status(429, "application/json", &json_error("slow down"))
            .with_header("retry-after", "1"),
        Reply::sse(&openai::answer(&["recovered"], 5, 1)),
    ]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "hi"])
        .run();
    out.assert_code(0);
    let events = out.stream();
    assert_eq!(out.types(), ["run_start", "warning", "text", "usage", "final", "run_end"]);
    assert_eq!(
        events[1]["message"],
        "Provider rate limit error (HTTP 429): slow down; retrying in 1.0 s (retry 1 of 2)."
    );
    assert!(
        out.elapsed >= Duration::from_secs(1),
        "retry-after was not honoured: {:?}",
        out.elapsed
    );
    assert_eq!(mock.requests().len(), 2);

    let unavailable = || Reply::status(503, "application/json", &json_error("upstream busy"));
    let mock = Mock::start(vec![
        unavailable(),
        unavailable(),
        unavailable(),
        Reply::sse(&openai::answer(&["late"], 1, 1)),
    ]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&["exec", "-o", "stream-json", "hi"])
        .run();
    provider_error(&out, "Provider returned error (HTTP 503): upstream busy");
    assert_eq!(mock.requests().len(), 3, "two retries, then the failure");
    assert_eq!(out.types().iter().filter(|t| *t == "warning").count(), 2);

    // Text mode announces retries on stderr.
    let mock = Mock::start(vec![unavailable(), Reply::sse(&openai::answer(&["ok"], 1, 1))]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .env("ZERO_MAX_RETRIES", "1")
        .args(&["exec", "hi"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, "ok\n");
    assert!(
        out.rows().starts_with(
            "[zero] WARNING: Provider returned error (HTTP 503): upstream busy; retrying in"
        ),
        "{out:?}"
    );
}

#[test]
fn a_stream_that_said_its_last_word_is_complete_while_the_connection_stays_open() {
    // A gateway that keeps the body open after `[DONE]` (or `message_stop`, or
    // `response.completed`): the answer is complete there; waiting on would be a stall.
    let dir = TestDir::new("stream-complete");
    let held = |pieces: Vec<String>| {
        let (keep, open) = std::sync::mpsc::channel::<()>();
        let mut steps: Vec<Step> = pieces.into_iter().map(|p| Step::Send(p.into_bytes())).collect();
        steps.push(Step::Wait(open));
        (Reply::stream(steps), keep)
    };
    let anthropic = crate::mock::anthropic::turn(
        &[serde_json::json!({"type": "text", "pieces": ["Done."]})],
        10,
        2,
        "end_turn",
    );
    let responses = vec![
        format!(
            "event: response.output_text.delta\ndata: {}\n\n",
            serde_json::json!({"type": "response.output_text.delta", "delta": "Done."})
        ),
        format!(
            "event: response.completed\ndata: {}\n\n",
            serde_json::json!({"type": "response.completed", "response": {"status": "completed", "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}], "usage": {"input_tokens": 5, "output_tokens": 3}}})
        ),
    ];
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("chat", openai::answer(&["Done."], 5, 2)),
        ("anthropic", anthropic),
        ("responses", responses),
    ];
    for (api, pieces) in cases {
        let (reply, keep) = held(pieces);
        let mock = Mock::start(vec![reply]);
        let zero = match api {
            "anthropic" => dir.zero().anthropic_at(&mock.url()).env("ZERO_PROVIDER", "anthropic"),
            "responses" => dir.zero().openai(&mock.v1(), "m").env("ZERO_OPENAI_API", "responses"),
            _ => dir.zero().openai(&mock.v1(), "m"),
        };
        // A stall would be an error after 2 s; the run must not get there.
        let out = zero
            .env("ZERO_IDLE_TIMEOUT_MS", "2000")
            .env("ZERO_MAX_RETRIES", "0")
            .args(&["exec", "-m", if api == "anthropic" { "any-model" } else { "m" }, "hi"])
            .run();
        out.assert_code(0);
        assert_eq!(out.stdout, "Done.\n", "{api}");
        drop(keep);
    }
}
