//! Providers as they are in the field: output limits on every request, any model name at a
//! gateway or local server in every wire format, and token counts taken from wherever the
//! stream carries them.

use serde_json::{json, Value};

use crate::mock::{anthropic, gemini, openai, Mock, Reply};
use crate::util::{Output, TestDir};

fn ok_mock() -> Mock {
    Mock::start(vec![Reply::sse(&openai::answer(&["ok"], 1, 1))])
}

fn anthropic_mock() -> Mock {
    Mock::start(vec![Reply::sse(&anthropic::turn(
        &[json!({"type": "text", "pieces": ["ok"]})],
        5,
        1,
        "end_turn",
    ))])
}

fn gemini_mock() -> Mock {
    Mock::start(vec![Reply::sse(&[gemini::chunk(
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1}}),
    )])])
}

fn usage_of(out: &Output) -> Value {
    out.assert_code(0);
    out.stream().into_iter().find(|e| e["type"] == "usage").expect("a usage event")
}

#[test]
fn every_request_carries_an_output_limit() {
    let dir = TestDir::new("output-limits");
    let body = |model: &str, args: &[&str]| {
        let mock = ok_mock();
        let out =
            dir.zero().openai(&mock.v1(), model).args(&["exec"]).args(args).args(&["hi"]).run();
        out.assert_code(0);
        (mock.requests()[0].json(), out)
    };
    // An unknown model at a compatible server: the documented default, as `max_tokens`.
    let (sent, _) = body("local-coder", &[]);
    assert_eq!(
        (sent.get("max_tokens"), sent.get("max_completion_tokens")),
        (Some(&json!(4096)), None)
    );
    let (sent, _) = body("local-coder", &["--max-output-tokens", "700"]);
    assert_eq!(sent["max_tokens"], 700);
    // A registry model: its own limit, which nothing exceeds (gpt-4o-mini writes 16,384).
    let (sent, _) = body("gpt-4o-mini", &[]);
    assert_eq!(sent["max_tokens"], 16384);
    let (sent, out) = body("gpt-4o-mini", &["--max-output-tokens", "50000"]);
    assert_eq!(sent["max_tokens"], 16384);
    assert_eq!(
        out.rows(),
        "[zero] WARNING: --max-output-tokens 50000 is above the GPT-4o mini limit of 16384 output tokens; 16384 is sent.\n"
    );
    let out = dir.zero().args(&["exec", "--max-output-tokens", "0", "hi"]).run();
    out.assert_code(2);
    assert_eq!(out.stderr, "[zero] Invalid --max-output-tokens value \"0\". Expected a positive integer up to 10000000.\n");
    // The config file: top level, and per profile (which wins).
    let mock = ok_mock();
    dir.write(
        "config/zero/config.json",
        &json!({"maxOutputTokens": 1234, "activeProvider": "local", "providers": [
            {"name": "local", "provider": "openai-compatible", "baseURL": mock.v1(), "model": "local-coder"}]})
        .to_string(),
    );
    dir.zero().args(&["exec", "hi"]).run().assert_code(0);
    assert_eq!(mock.requests()[0].json()["max_tokens"], 1234);
    let mock = ok_mock();
    dir.write(
        "config/zero/config.json",
        &json!({"maxOutputTokens": 1234, "activeProvider": "local", "providers": [
            {"name": "local", "provider": "openai-compatible", "baseURL": mock.v1(), "model": "local-coder", "maxOutputTokens": 2222}]})
        .to_string(),
    );
    dir.zero().args(&["exec", "hi"]).run().assert_code(0);
    assert_eq!(mock.requests()[0].json()["max_tokens"], 2222);
    dir.write("config/zero/config.json", r#"{"maxOutputTokens": "lots"}"#);
    let out = dir.zero().args(&["exec", "-o", "stream-json", "hi"]).run();
    out.assert_code(3);
    assert!(
        out.stdout.contains("maxOutputTokens must be an integer from 1 to 10000000"),
        "{out:?}"
    );
    std::fs::remove_file(dir.path("config/zero/config.json")).unwrap();
    // Anthropic `max_tokens`: a limit too small for thinking drops the effort, and says so.
    let mock = anthropic_mock();
    let out = dir
        .zero()
        .env("ANTHROPIC_API_KEY", "k-123456")
        .env("ANTHROPIC_BASE_URL", &mock.url())
        .args(&["exec", "-m", "sonnet-4.5", "-r", "high", "--max-output-tokens", "900", "hi"])
        .run();
    out.assert_code(0);
    let sent = mock.requests()[0].json();
    assert_eq!((sent["max_tokens"].as_u64(), sent.get("thinking")), (Some(900), None));
    assert_eq!(
        out.rows(),
        "[zero] WARNING: --reasoning-effort is ignored: Anthropic thinking needs an output limit above 1024 tokens (it is 900).\n"
    );
    // Gemini `maxOutputTokens`.
    let mock = gemini_mock();
    dir.zero()
        .env("GEMINI_API_KEY", "k-123456")
        .env("GEMINI_BASE_URL", &mock.url())
        .args(&["exec", "-m", "gemini-2.5-flash", "--max-output-tokens", "512", "hi"])
        .run()
        .assert_code(0);
    assert_eq!(mock.requests()[0].json()["generationConfig"], json!({"maxOutputTokens": 512}));
}

#[test]
fn the_anthropic_and_gemini_formats_serve_any_model_at_a_gateway() {
    let dir = TestDir::new("any-model");
    let mock = anthropic_mock();
    let out = dir
        .zero()
        .env("ZERO_PROVIDER", "anthropic")
        .env("ANTHROPIC_API_KEY", "k-123456")
        .env("ANTHROPIC_BASE_URL", &mock.url())
        .args(&["exec", "-o", "stream-json", "-m", "qwen-local", "hi"])
        .run();
    let usage = usage_of(&out);
    let start = &out.stream()[0];
    assert_eq!(
        (start["provider"].as_str(), start["model"].as_str()),
        (Some("anthropic"), Some("qwen-local"))
    );
    assert_eq!(mock.requests()[0].json()["model"], "qwen-local");
    assert!(usage.get("costUsd").is_none(), "no price is guessed for an unknown model: {usage}");
    assert_eq!(mock.requests()[0].json()["max_tokens"], 4096);
    let mock = gemini_mock();
    let out = dir
        .zero()
        .env("ZERO_PROVIDER", "google")
        .env("GEMINI_API_KEY", "k-123456")
        .env("GEMINI_BASE_URL", &mock.url())
        .args(&["exec", "-o", "stream-json", "-m", "gemma-local", "hi"])
        .run();
    assert!(usage_of(&out).get("costUsd").is_none());
    assert_eq!(mock.requests()[0].path, "/v1beta/models/gemma-local:streamGenerateContent?alt=sse");
    // A local server may take no key: none is asked for, and no empty header is sent.
    let mock = anthropic_mock();
    let out = dir
        .zero()
        .env("ZERO_PROVIDER", "anthropic")
        .env("ANTHROPIC_BASE_URL", &mock.url())
        .args(&["exec", "-m", "qwen-local", "hi"])
        .run();
    out.assert_code(0);
    assert!(!mock.requests()[0].headers.contains_key("x-api-key"));
    // At the vendor's own host, only registry models (and nothing is sent).
    let out = dir
        .zero()
        .env("ZERO_PROVIDER", "anthropic")
        .env("ANTHROPIC_API_KEY", "k-123456")
        .args(&["exec", "-m", "qwen-local", "hi"])
        .run();
    out.assert_code(3);
    assert!(
        out.stderr.starts_with(
            "[zero] Unknown Zero model \"qwen-local\" for official anthropic provider runtime."
        ),
        "{out:?}"
    );
    // A registry model at a gateway keeps its list price.
    let mock = anthropic_mock();
    let out = dir
        .zero()
        .env("ANTHROPIC_API_KEY", "k-123456")
        .env("ANTHROPIC_BASE_URL", &mock.url())
        .args(&["exec", "-o", "stream-json", "-m", "sonnet-4.5", "hi"])
        .run();
    // claude-sonnet-4.5: $3 in, $15 out per million; 5 in, 1 out.
    assert_eq!(usage_of(&out)["costUsd"], 0.00003);
}

#[test]
fn token_counts_and_costs_come_from_wherever_the_stream_carries_them() {
    let dir = TestDir::new("usage-fields");
    // Anthropic, as llama.cpp's server sends it: the cache read only in message_delta.
    let stream = vec![
        anthropic::event(
            json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 1, "output_tokens": 0}}}),
        ),
        anthropic::event(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        anthropic::event(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}}),
        ),
        anthropic::event(json!({"type": "content_block_stop", "index": 0})),
        anthropic::event(
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"input_tokens": 1, "cache_read_input_tokens": 188, "output_tokens": 9}}),
        ),
        anthropic::event(json!({"type": "message_stop"})),
    ];
    let mock = Mock::start(vec![Reply::sse(&stream)]);
    let out = dir
        .zero()
        .env("ANTHROPIC_API_KEY", "k-123456")
        .env("ANTHROPIC_BASE_URL", &mock.url())
        .args(&["exec", "-o", "stream-json", "-m", "sonnet-4.5", "hi"])
        .run();
    let usage = usage_of(&out);
    assert_eq!(
        (usage["promptTokens"].as_u64(), usage["completionTokens"].as_u64()),
        (Some(189), Some(9))
    );
    // $3 per million fresh, $0.30 cached, $15 out: 1 x 3 + 188 x 0.3 + 9 x 15.
    assert_eq!(usage["costUsd"], 0.0001944);
    // OpenAI's prompt_tokens_details.cached_tokens: part of prompt_tokens, at the cached rate.
    let mut answer = openai::answer(&["ok"], 0, 0);
    answer[2] = format!(
        "data: {}\n\n",
        json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 800}}})
    );
    let mock = Mock::start(vec![Reply::sse(&answer)]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "gpt-4o-mini")
        .args(&["exec", "-o", "stream-json", "hi"])
        .run();
    let usage = usage_of(&out);
    assert_eq!(usage["promptTokens"], 1000);
    // gpt-4o-mini: $0.15 fresh, $0.075 cached, $0.60 out: 200 x 0.15 + 800 x 0.075 + 10 x 0.6.
    assert_eq!(usage["costUsd"], 0.000096);
    // Gemini's cachedContentTokenCount, part of promptTokenCount.
    let mock = Mock::start(vec![Reply::sse(&[gemini::chunk(
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 1000, "cachedContentTokenCount": 600, "candidatesTokenCount": 10}}),
    )])]);
    let out = dir
        .zero()
        .env("GEMINI_API_KEY", "k-123456")
        .env("GEMINI_BASE_URL", &mock.url())
        .args(&["exec", "-o", "stream-json", "-m", "gemini-2.5-flash", "hi"])
        .run();
    let usage = usage_of(&out);
    assert_eq!(usage["promptTokens"], 1000);
    // gemini-2.5-flash: $0.30 fresh, $0.03 cached, $2.50 out: 400 x 0.3 + 600 x 0.03 + 10 x 2.5.
    assert_eq!(usage["costUsd"], 0.000163);
}

/// `openssl s_server -www` on a free loopback port with a certificate signed by a CA made
/// here; killed when dropped.
struct TlsServer {
    child: std::process::Child,
    port: u16,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A CA (`ca.pem`) and a server certificate for 127.0.0.1 it signed (`srv.pem`, `srv.key`).
fn make_certificates(dir: &TestDir) -> bool {
    let run = |args: &[&str]| {
        std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir.path("tls"))
            .output()
            .is_ok_and(|o| o.status.success())
    };
    std::fs::create_dir_all(dir.path("tls/dir")).unwrap();
    dir.write("tls/ext.cnf", "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n");
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=Zero Test CA",
    ]) && run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "srv.key",
        "-out",
        "srv.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]) && run(&[
        "x509",
        "-req",
        "-in",
        "srv.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "srv.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ])
}

fn tls_server(dir: &TestDir) -> TlsServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = std::process::Command::new("openssl")
        .args(["s_server", "-quiet", "-www", "-cert", "srv.pem", "-key", "srv.key"])
        .arg("-accept")
        .arg(format!("127.0.0.1:{port}"))
        .current_dir(dir.path("tls"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "openssl s_server did not start");
        std::thread::yield_now();
    }
    TlsServer { child, port }
}

fn connectivity(out: &Output) -> Value {
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "provider.connectivity")
        .unwrap()
        .clone()
}

#[test]
fn a_private_ca_is_trusted_through_ssl_cert_file_or_ssl_cert_dir() {
    let dir = TestDir::new("custom-ca");
    if std::process::Command::new("openssl").arg("version").output().is_err()
        || !make_certificates(&dir)
    {
        crate::util::skip("custom CA", crate::util::Skip::Missing, "openssl is not installed");
        return;
    }
    let ca = dir.path("tls/ca.pem");
    std::fs::copy(&ca, dir.path("tls/dir/corp-ca.pem")).unwrap();
    let doctor = |server: &TlsServer, extra: &[(&str, &str)]| {
        let mut run =
            dir.zero().openai(&format!("https://127.0.0.1:{}/v1", server.port), "local-coder");
        for (k, v) in extra {
            run = run.env(k, v);
        }
        run.args(&["doctor", "--json"]).run()
    };
    // The bundled roots alone: refused, with what to do.
    let server = tls_server(&dir);
    let out = doctor(&server, &[]);
    out.assert_code(3);
    let check = connectivity(&out);
    assert_eq!(
        check["message"],
        format!("TLS failure with 127.0.0.1:{}: invalid peer certificate: UnknownIssuer. If a proxy or a private CA signs its certificate, set SSL_CERT_FILE (or SSL_CERT_DIR) to that CA's PEM certificate.", server.port).as_str()
    );
    assert!(check["fix"].as_str().unwrap().starts_with("Set SSL_CERT_FILE (or SSL_CERT_DIR)"));
    // Trusted through either variable.
    for (var, path) in [("SSL_CERT_FILE", ca.clone()), ("SSL_CERT_DIR", dir.path("tls/dir"))] {
        let out = doctor(&server, &[(var, path.to_str().unwrap())]);
        out.assert_code(0);
        let check = connectivity(&out);
        assert_eq!(check["status"], "pass", "{var}: {check}");
        assert!(check["message"].as_str().unwrap().contains("answered HTTP 200"), "{check}");
    }
    // A file without a certificate is named when it is needed.
    let key = dir.path("tls/srv.key");
    let out = doctor(&server, &[("SSL_CERT_FILE", key.to_str().unwrap())]);
    out.assert_code(3);
    assert!(connectivity(&out)["message"].as_str().unwrap().ends_with(&format!(
        "The extra roots cannot be used: SSL_CERT_FILE {}: no PEM certificate in it.",
        key.display()
    )));
    // A path that does not exist is a setup error, before anything is sent.
    let out = dir
        .zero()
        .openai("https://127.0.0.1:1/v1", "local-coder")
        .env("SSL_CERT_FILE", "/nonexistent/ca.pem")
        .args(&["exec", "hi"])
        .run();
    out.assert_code(3);
    assert_eq!(
        out.stderr,
        "[zero] SSL_CERT_FILE /nonexistent/ca.pem: No such file or directory (os error 2)\n"
    );
    // A run: untrusted, one line and no retries; trusted, the TLS handshake passes (this
    // server never answers a POST, so the run then waits for headers and gives up).
    let out = dir
        .zero()
        .openai(&format!("https://127.0.0.1:{}/v1", server.port), "local-coder")
        .args(&["exec", "-o", "stream-json", "hi"])
        .run();
    out.assert_code(3);
    assert_eq!(out.types(), ["run_start", "error", "run_end"], "not retried");
    assert!(out.stream()[1]["message"]
        .as_str()
        .unwrap()
        .starts_with("TLS failure with 127.0.0.1:"));
    let out = dir
        .zero()
        .openai(&format!("https://127.0.0.1:{}/v1", server.port), "local-coder")
        .env("SSL_CERT_FILE", ca.to_str().unwrap())
        .env("ZERO_HEADERS_TIMEOUT_MS", "300")
        .env("ZERO_MAX_RETRIES", "0")
        .args(&["exec", "-o", "stream-json", "hi"])
        .run();
    out.assert_code(3);
    assert!(
        out.stream()[1]["message"].as_str().unwrap().starts_with("Provider did not answer"),
        "{out:?}"
    );
}

#[test]
fn azure_openai_has_its_own_header_url_and_deployments() {
    let dir = TestDir::new("azure");
    // The v1 route, with the endpoint pasted as the portal shows it.
    let mock = ok_mock();
    let out = dir
        .zero()
        .env("AZURE_OPENAI_ENDPOINT", &format!("{}/openai/v1/", mock.url()))
        .env("AZURE_OPENAI_API_KEY", "azure-key-123456")
        .args(&["exec", "-o", "stream-json", "-m", "my-deployment", "hi"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stream()[0]["provider"], "azure");
    let request = &mock.requests()[0];
    assert_eq!(request.path, "/openai/v1/chat/completions");
    assert_eq!(request.headers.get("api-key").map(String::as_str), Some("azure-key-123456"));
    assert!(!request.headers.contains_key("authorization"));
    let body = request.json();
    assert_eq!(
        (body["model"].as_str(), body["max_completion_tokens"].as_u64()),
        (Some("my-deployment"), Some(4096))
    );
    assert!(body.get("max_tokens").is_none());
    // The deployments route with an api-version, a deployment named after a registry model
    // (so its price is known), chosen with ZERO_PROVIDER beside an OpenAI key.
    let mock = ok_mock();
    let out = dir
        .zero()
        .env("ZERO_PROVIDER", "azure")
        .env("OPENAI_API_KEY", "sk-not-this-one-123456")
        .env("AZURE_OPENAI_ENDPOINT", &mock.url())
        .env("AZURE_OPENAI_API_KEY", "azure-key-123456")
        .env("AZURE_OPENAI_API_VERSION", "2024-10-21")
        .env("AZURE_OPENAI_DEPLOYMENT", "gpt-4o-mini")
        .args(&["exec", "-o", "stream-json", "hi"])
        .run();
    let usage = usage_of(&out);
    assert!(usage.get("costUsd").is_some(), "{usage}");
    let request = &mock.requests()[0];
    assert_eq!(
        request.path,
        "/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(request.json()["max_completion_tokens"], 16384);
    // A config profile.
    let mock = ok_mock();
    dir.write(
        "config/zero/config.json",
        &json!({"activeProvider": "az", "providers": [{"name": "az", "provider": "azure", "baseURL": mock.url(), "apiKey": "azure-key-654321", "model": "team-gpt"}]}).to_string(),
    );
    dir.zero().args(&["exec", "hi"]).run().assert_code(0);
    let request = &mock.requests()[0];
    assert_eq!(
        (request.path.as_str(), request.headers["api-key"].as_str()),
        ("/openai/v1/chat/completions", "azure-key-654321")
    );
    std::fs::remove_file(dir.path("config/zero/config.json")).unwrap();
    // What is missing is named.
    let cases: [(&[(&str, &str)], &str); 3] = [
        (&[("ZERO_PROVIDER", "azure"), ("AZURE_OPENAI_API_KEY", "k-123456")], "[zero] Zero azure provider needs a deployment name: -m <deployment> (or AZURE_OPENAI_DEPLOYMENT)\n"),
        (&[("ZERO_PROVIDER", "azure"), ("AZURE_OPENAI_DEPLOYMENT", "d")], "[zero] Zero azure provider requires AZURE_OPENAI_ENDPOINT (https://<resource>.openai.azure.com)\n"),
        (&[("AZURE_OPENAI_ENDPOINT", "https://r.openai.azure.com"), ("AZURE_OPENAI_DEPLOYMENT", "d")], "[zero] Zero azure provider requires an API key (set AZURE_OPENAI_API_KEY)\n"),
    ];
    for (env, expected) in cases {
        let mut run = dir.zero().args(&["exec", "hi"]);
        for (k, v) in env {
            run = run.env(k, v);
        }
        let out = run.run();
        out.assert_code(3);
        assert_eq!(out.stderr, expected);
    }
}

/// One Responses SSE event, named by its `type`.
fn responses_event(data: Value) -> String {
    format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap())
}

fn responses_completed(input: u64, cached: u64, output: u64) -> String {
    responses_event(
        json!({"type": "response.completed", "response": {"status": "completed", "usage": {
        "input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 2}}}}),
    )
}

/// A turn that reasons (summary and encrypted item) and calls read_file.
fn responses_tool_turn() -> Vec<String> {
    vec![
        responses_event(json!({"type": "response.created", "response": {"status": "in_progress"}})),
        responses_event(
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        ),
        responses_event(
            json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "I should read the file."}),
        ),
        responses_event(
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "I should read the file."}], "encrypted_content": "enc-opaque-1", "status": "completed"}}),
        ),
        responses_event(
            json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "read_file", "arguments": ""}}),
        ),
        responses_event(
            json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{\"path\":"}),
        ),
        responses_event(
            json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "\"a.txt\"}"}),
        ),
        responses_event(
            json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}),
        ),
        responses_completed(500, 100, 40),
    ]
}

fn responses_answer(text: &str) -> Vec<String> {
    vec![
        responses_event(
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        ),
        responses_event(
            json!({"type": "response.output_text.delta", "output_index": 0, "delta": text}),
        ),
        responses_completed(700, 0, 10),
    ]
}

#[test]
fn openai_reasoning_models_speak_the_responses_api_and_keep_their_reasoning() {
    let dir = TestDir::new("responses");
    dir.write("work/a.txt", "hi\n");
    let mock = Mock::start(vec![
        Reply::sse(&responses_tool_turn()),
        Reply::sse(&responses_answer("It says hi.")),
    ]);
    let official = |mock: &Mock| {
        dir.zero()
            .env("OPENAI_API_KEY", "sk-test-official-123456")
            .env("ZERO_DEBUG_OPENAI_URL", &mock.v1())
    };
    let out = official(&mock)
        .args(&["exec", "-o", "stream-json", "-m", "gpt-5", "-r", "high", "read a.txt"])
        .run();
    out.assert_code(0);
    let events = out.stream();
    assert_eq!(
        out.types(),
        ["run_start", "tool_call", "usage", "tool_result", "text", "usage", "final", "run_end"]
    );
    assert_eq!(events[6]["text"], "It says hi.", "the reasoning summary is not text");
    // gpt-5: $1.25 fresh, $0.125 cached, $10 out: 400 x 1.25 + 100 x 0.125 + 40 x 10.
    assert_eq!(events[2]["costUsd"], 0.0009125);
    let requests = mock.requests();
    assert_eq!(requests[0].path, "/v1/responses");
    assert_eq!(requests[0].headers["authorization"], "Bearer sk-test-official-123456");
    let first = requests[0].json();
    assert_eq!(
        (&first["model"], &first["store"], &first["stream"], &first["max_output_tokens"]),
        (&json!("gpt-5"), &json!(false), &json!(true), &json!(128000))
    );
    assert_eq!(
        (&first["reasoning"], &first["include"]),
        (&json!({"effort": "high"}), &json!(["reasoning.encrypted_content"]))
    );
    assert!(first["instructions"].as_str().unwrap().starts_with("You are Zero"));
    assert_eq!(first["input"], json!([{"role": "user", "content": "read a.txt"}]));
    assert_eq!(first["tools"][0]["type"], "function");
    // The second turn carries the first one's reasoning item back, then the call and result.
    assert_eq!(
        requests[1].json()["input"],
        json!([
            {"role": "user", "content": "read a.txt"},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "I should read the file."}], "encrypted_content": "enc-opaque-1"},
            {"type": "function_call", "call_id": "call_a", "name": "read_file", "arguments": "{\"path\":\"a.txt\"}"},
            {"type": "function_call_output", "call_id": "call_a", "output": "File: a.txt (1 lines)\n\n1 | hi\n"},
        ])
    );
    // The session keeps the reasoning item: a resumed run sends it again.
    let session = events[0]["sessionId"].as_str().unwrap().to_string();
    let mock = Mock::start(vec![Reply::sse(&responses_answer("Still hi."))]);
    official(&mock)
        .args(&["exec", "-m", "gpt-5", "--resume", &session, "and now?"])
        .run()
        .assert_code(0);
    let input = mock.requests()[0].json()["input"].clone();
    assert_eq!(input[1]["encrypted_content"], "enc-opaque-1", "{input}");
    // gpt-4.1 (no reasoning) stays on Chat Completions, with the official limit field.
    let mock = ok_mock();
    official(&mock).args(&["exec", "-m", "gpt-4.1", "hi"]).run().assert_code(0);
    assert_eq!(mock.requests()[0].path, "/v1/chat/completions");
    assert!(mock.requests()[0].json().get("max_completion_tokens").is_some());
    // ZERO_OPENAI_API overrides either way: chat for gpt-5, responses at a compatible server.
    let mock = ok_mock();
    official(&mock)
        .env("ZERO_OPENAI_API", "chat")
        .args(&["exec", "-m", "gpt-5", "hi"])
        .run()
        .assert_code(0);
    assert_eq!(mock.requests()[0].path, "/v1/chat/completions");
    let mock = Mock::start(vec![Reply::sse(&responses_answer("ok"))]);
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .env("ZERO_OPENAI_API", "responses")
        .args(&["exec", "hi"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, "ok\n");
    let body = mock.requests()[0].json();
    assert_eq!(mock.requests()[0].path, "/v1/responses");
    assert!(body.get("include").is_none() && body.get("reasoning").is_none(), "{body}");
    // The config key does the same.
    let mock = Mock::start(vec![Reply::sse(&responses_answer("ok"))]);
    dir.write(
        "config/zero/config.json",
        &json!({"activeProvider": "vllm", "providers": [{"name": "vllm", "provider": "openai-compatible", "baseURL": mock.v1(), "model": "served", "openaiApi": "responses"}]}).to_string(),
    );
    dir.zero().args(&["exec", "hi"]).run().assert_code(0);
    assert_eq!(mock.requests()[0].path, "/v1/responses");
    std::fs::remove_file(dir.path("config/zero/config.json")).unwrap();
    let out = dir
        .zero()
        .openai("http://127.0.0.1:1/v1", "m")
        .env("ZERO_OPENAI_API", "graphql")
        .args(&["exec", "hi"])
        .run();
    out.assert_code(3);
    assert_eq!(
        out.stderr,
        "[zero] Invalid ZERO_OPENAI_API \"graphql\": expected \"chat\" or \"responses\"\n"
    );
}

#[test]
fn the_config_adds_models_and_overrides_the_registry() {
    let dir = TestDir::new("user-models");
    let config = |models: Value| {
        dir.write("config/zero/config.json", &json!({"models": models}).to_string());
    };
    config(json!([
        {"id": "team-llama", "provider": "openai", "apiModel": "meta-llama/Llama-3.3-70B", "aliases": ["llama"],
         "contextWindow": 131072, "maxOutputTokens": 8000, "reasoningEfforts": [],
         "prices": {"input": 0.6, "cachedInput": 0.1, "output": 0.8}},
        {"id": "gpt-4o-mini", "provider": "openai", "maxOutputTokens": 16384, "prices": {"input": 1, "output": 2}},
        {"id": "bare-model", "provider": "anthropic"}
    ]));
    let run = |model: &str, extra: &[&str]| {
        let mock = Mock::start(vec![Reply::sse(&openai::answer(&["ok"], 1000, 100))]);
        let out = dir
            .zero()
            .openai(&mock.v1(), model)
            .args(&["exec", "-o", "stream-json"])
            .args(extra)
            .args(&["hi"])
            .run();
        (mock.requests()[0].json(), out)
    };
    let (body, out) = run("llama", &[]);
    assert_eq!(
        (body["model"].as_str(), body["max_tokens"].as_u64()),
        (Some("meta-llama/Llama-3.3-70B"), Some(8000))
    );
    assert_eq!(out.stream()[0]["model"], "team-llama");
    // 1000 in at $0.60, 100 out at $0.80 per million.
    assert_eq!(usage_of(&out)["costUsd"], 0.00068);
    let (body, out) = run("team-llama", &["--max-output-tokens", "9000"]);
    assert_eq!(body["max_tokens"], 8000);
    assert_eq!(out.stream()[1]["message"], "--max-output-tokens 9000 is above the team-llama limit of 8000 output tokens; 8000 is sent.");
    // The built-in gpt-4o-mini, repriced: 1000 at $1, 100 at $2.
    let (_, out) = run("gpt-4o-mini", &[]);
    assert_eq!(usage_of(&out)["costUsd"], 0.0012);
    // No prices: no cost.
    let mock = anthropic_mock();
    let out = dir
        .zero()
        .env("ANTHROPIC_API_KEY", "k-123456")
        .env("ANTHROPIC_BASE_URL", &mock.url())
        .args(&["exec", "-o", "stream-json", "-m", "bare-model", "hi"])
        .run();
    assert!(usage_of(&out).get("costUsd").is_none());
    assert_eq!(mock.requests()[0].json()["max_tokens"], 4096);
    // Errors name the entry; unknown keys are warnings.
    for (models, message) in [
        (json!([{"id": "x"}]), "models[0].provider must be openai, anthropic or google"),
        (json!([{"id": "x", "provider": "openai", "prices": {"input": -1, "output": 1}}]), "models[0].prices.input must be a number of dollars per million tokens"),
        (json!([{"id": "x", "provider": "openai"}, {"id": "X", "provider": "openai"}]), "models[1].id \"x\" is defined twice"),
        (json!([{"id": "x", "provider": "openai", "reasoningEfforts": ["max"]}]), "models[0].reasoningEfforts must be an array of none, minimal, low, medium, high, xhigh"),
    ] {
        config(models);
        let out = dir.zero().openai("http://127.0.0.1:1/v1", "x").args(&["exec", "-o", "stream-json", "hi"]).run();
        out.assert_code(3);
        let error = out.stream()[0].clone();
        assert_eq!(error["code"], "config_error");
        assert!(error["message"].as_str().unwrap().ends_with(message), "{error}");
    }
    config(json!([{"id": "x", "provider": "openai", "price": {}}]));
    let mock = ok_mock();
    let out = dir.zero().openai(&mock.v1(), "x").args(&["exec", "hi"]).run();
    out.assert_code(0);
    assert!(
        out.rows()
            .contains("unknown key models[0].\"price\" is ignored (did you mean \"prices\"?)"),
        "{out:?}"
    );
}
