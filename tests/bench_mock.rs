//! The mock provider as a long-running server for `scripts/bench.sh`.
//!
//! With `ZERO_BENCH_MOCK=<dir>` set, this test serves until killed: it writes its port to
//! `<dir>/port` and appends the arrival time (Unix nanoseconds) of every request to
//! `<dir>/arrivals`. The model name chooses the answer: `bench-1` (one text chunk),
//! `bench-20` (twenty), `bench-10000` (ten thousand deltas), `bench-tool` (a read_file call,
//! then an answer once the result comes back), `bench-flood-text` (48 MiB of answer text) and
//! `bench-flood-args` (40 MiB of one call's arguments). Anthropic requests (`/v1/messages`)
//! get the cost figure's conversation: a `read_file` call of `f<N>.txt` until 19 results came
//! back, then an answer, each billed by a cache that works as Anthropic's (`prompt_cache`).
//! Without the variable it checks those answers.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::mock::{anthropic, openai, Mock, Reply, Request, Step};
use crate::prompt_cache::{Billed, PromptCache};

/// Tool calls in the cost figure's conversation: with the answer, 20 model calls.
const COST_CALLS: usize = 19;

/// The next message of the cost figure's conversation, with what its request is billed.
fn anthropic_answer(request: &Request, cache: &std::sync::Mutex<PromptCache>) -> Reply {
    let body = request.json();
    let results = body.to_string().matches("\"tool_result\"").count();
    let Billed { fresh, read, written } = cache.lock().unwrap().bill(&body);
    let usage = serde_json::json!({"input_tokens": fresh, "cache_read_input_tokens": read, "cache_creation_input_tokens": written, "output_tokens": 1});
    let (block, stop) = if results < COST_CALLS {
        let input = serde_json::json!({"path": format!("f{results}.txt")});
        (
            serde_json::json!({"type": "tool_use", "id": format!("toolu_{results}"), "name": "read_file", "input": input}),
            "tool_use",
        )
    } else {
        (serde_json::json!({"type": "text", "pieces": ["done"]}), "end_turn")
    };
    let mut pieces = anthropic::turn(&[block], 0, 1, stop);
    pieces[0] = anthropic::event(
        serde_json::json!({"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "content": [], "usage": usage}}),
    );
    Reply::sse(&pieces)
}

/// `mib` MiB of answer text, or of one tool call's arguments, in 64 KiB deltas.
fn flood(mib: usize, arguments: bool) -> Reply {
    let piece = "a".repeat(64 * 1024);
    let mut steps = Vec::new();
    if arguments {
        steps.push(Step::Send(openai::call_start(0, "c1", "write_file").into_bytes()));
    }
    for _ in 0..mib * 16 {
        let chunk = if arguments { openai::call_args(0, &piece) } else { openai::text(&piece) };
        steps.push(Step::Send(chunk.into_bytes()));
    }
    steps.push(Step::Send(openai::finish("stop").into_bytes()));
    steps.push(Step::Send(openai::done().into_bytes()));
    Reply::stream(steps)
}

fn answer(request: &Request) -> Reply {
    let body = request.json();
    let model = body["model"].as_str().unwrap_or_default().to_string();
    let has_result =
        body["messages"].as_array().is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    let chunks = match model.as_str() {
        "bench-tool" if !has_result => {
            return Reply::sse(&openai::tool_turn(
                "call_1",
                "read_file",
                r#"{"path":"Cargo.toml","max_lines":5}"#,
            ))
        }
        "bench-flood-text" => return flood(48, false),
        "bench-flood-args" => return flood(40, true),
        "bench-20" => 20,
        "bench-10000" => 10_000,
        _ => 1,
    };
    let words: Vec<String> = (0..chunks).map(|i| format!("word{} ", i % 100)).collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    Reply::sse(&openai::answer(&refs, 100, chunks as u64))
}

#[test]
fn bench_mock_server() {
    let Some(dir) = std::env::var_os("ZERO_BENCH_MOCK") else {
        // A self-check of the answers the benchmark relies on.
        let request = |model: &str, with_result: bool| {
            Request {
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            headers: Default::default(),
            body: serde_json::json!({"model": model, "messages": if with_result { serde_json::json!([{"role": "tool"}]) } else { serde_json::json!([]) }}).to_string().into_bytes(),
        }
        };
        let count = |reply: Reply| match reply {
            Reply::Stream { steps, .. } => steps.len(),
            Reply::Hang => 0,
        };
        assert_eq!(count(answer(&request("bench-1", false))), 1 + 3);
        assert_eq!(count(answer(&request("bench-10000", false))), 10_000 + 3);
        assert_eq!(count(answer(&request("bench-flood-text", false))), 48 * 16 + 2);
        assert!(
            count(answer(&request("bench-tool", false)))
                < count(answer(&request("bench-tool", true))) + 10
        );
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let arrivals = std::sync::Mutex::new(std::fs::File::create(dir.join("arrivals")).unwrap());
    // One cache per run of the cost figure: a run says which with its API key.
    let caches: std::sync::Mutex<
        std::collections::HashMap<String, std::sync::Arc<std::sync::Mutex<PromptCache>>>,
    > = Default::default();
    let mock = Mock::responding(Box::new(move |request| {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
        let _ = writeln!(arrivals.lock().unwrap(), "{now}");
        if request.path == "/v1/messages" {
            let key = request.headers.get("x-api-key").cloned().unwrap_or_default();
            let cache = caches.lock().unwrap().entry(key).or_default().clone();
            return anthropic_answer(request, &cache);
        }
        answer(request)
    }));
    std::fs::write(dir.join("port"), mock.port.to_string()).unwrap();
    loop {
        std::thread::park();
    }
}
