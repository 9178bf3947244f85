//! MCP servers for the tests, std only.
//!
//! The stdio server is this test binary: zero starts it (through `sh`, which moves the test
//! harness's own stdout to stderr and gives the server the real stdout as descriptor 3) with
//! `ZERO_TEST_MCP` naming its behaviour, a comma-separated list:
//! `version=<v>` (the protocol version it answers), `pages` (its tools in two `tools/list`
//! pages), `start_ms=<n>` (a slow start), `garbage` (a non-JSON-RPC line instead of the
//! answer to `initialize`), `silent` (never answers), `changing` (after the first call it
//! says its list changed and offers `added` too), `loopcursor` (every `tools/list` page names
//! the same next cursor), `tasks` (it also lists `task_only`, which needs task support),
//! `describe` (it lists one tool whose description and schema hold the value of its
//! `SECRET_FOR_DESCRIPTION`), `barrier=<dir>:<n>` (it answers `initialize` only once n servers have come that far, each
//! leaving a file in dir), `escape` (at `initialize` it starts `setsid sleep 60`, out of its process group, and writes
//! that pid to the log's path with `.escaped` added), `linger` (SIGTERM is ignored, so it reads what zero
//! sends while stopping it). `ZERO_TEST_MCP_LOG` names a file where it
//! appends every line it reads and, first, its pid; `ZERO_TEST_MCP_READY` a fifo it writes to
//! when a `hang` call arrives.
//!
//! Its tools: `echo` (read-only, the text back), `shapes` (read-only, one block of each
//! kind), `fail` (read-only, `isError`), `hang` (read-only, never answers), `crash` (exits
//! with a message on stderr), `roots` (read-only, asks zero for `roots/list`), `structured`
//! (read-only, only `structuredContent`), `touch` (not read-only: creates the file `path`),
//! and, listed with `held`, `exit_held` (exits with 4 while a `sleep` it started holds its pipes, its
//! pid written to the log's path with `.held` added).
//!
//! The HTTP server ([`Http`]) serves the same tools over streamable HTTP from the test
//! process, with a session id, and can forget the session or cut a stream to test recovery.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::mock::{Mock, Reply, Request, Step};

/// The tools, in the order the server lists them.
pub fn tools(changed: bool) -> Vec<Value> {
    let ro = json!({"readOnlyHint": true});
    let object = |props: Value| json!({"type": "object", "properties": props});
    let mut list = vec![
        json!({"name": "echo", "description": "Echo the text.", "inputSchema": object(json!({"text": {"type": "string"}})), "annotations": ro}),
        json!({"name": "shapes", "description": "One block of each kind.", "inputSchema": object(json!({})), "annotations": ro}),
        json!({"name": "fail", "description": "Always an error.", "inputSchema": object(json!({})), "annotations": ro}),
        json!({"name": "hang", "description": "Never answers.", "inputSchema": object(json!({})), "annotations": ro}),
        json!({"name": "crash", "description": "Exits.", "inputSchema": object(json!({})), "annotations": ro}),
        json!({"name": "roots", "description": "The client's roots.", "inputSchema": object(json!({})), "annotations": ro}),
        json!({"name": "structured", "description": "Structured only.", "inputSchema": object(json!({})), "annotations": ro}),
        json!({"name": "touch", "description": "Creates a file.", "inputSchema": object(json!({"path": {"type": "string"}}))}),
    ];
    if changed {
        list.push(json!({"name": "added", "description": "Came later.", "inputSchema": object(json!({})), "annotations": ro}));
    }
    list
}

/// The result of a call that answers at once (`None`: the tool does something else).
pub fn call_result(tool: &str, args: &Value) -> Option<Value> {
    let text = |t: &str| json!({"content": [{"type": "text", "text": t}]});
    Some(match tool {
        "echo" => text(&format!("echo: {}", args["text"].as_str().unwrap_or_default())),
        "shapes" => json!({"content": [
            {"type": "text", "text": "a text"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "embedded text"}},
            {"type": "resource", "resource": {"uri": "file:///blob.bin", "mimeType": "application/octet-stream", "blob": "AAECAwQ="}},
            {"type": "resource_link", "uri": "file:///linked.txt", "name": "linked"}
        ]}),
        "fail" => {
            json!({"content": [{"type": "text", "text": "it failed on purpose"}], "isError": true})
        }
        "structured" => json!({"content": [], "structuredContent": {"answer": 42}}),
        "added" => text("added works"),
        "touch" => {
            let path = args["path"].as_str().unwrap_or("touched.txt");
            std::fs::write(path, "touched\n").unwrap();
            text(&format!("created {path}"))
        }
        _ => return None,
    })
}

/// The answer to `initialize`.
fn initialized(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {"tools": {"listChanged": true}}, "serverInfo": {"name": "zero-test", "version": "1"}})
}

/// `tools/list`: the whole list, or two pages when `pages`.
fn listed(params: &Value, pages: bool, changed: bool) -> Value {
    let all = tools(changed);
    if !pages {
        return json!({"tools": all});
    }
    match params.get("cursor").and_then(Value::as_str) {
        None => json!({"tools": all[..3], "nextCursor": "page-2"}),
        Some(_) => json!({"tools": all[3..]}),
    }
}

/// Serves stdio MCP when `ZERO_TEST_MCP` is set (see the module's documentation); otherwise
/// checks the pages add up to the list.
#[test]
fn serve_stdio() {
    let Ok(behaviour) = std::env::var("ZERO_TEST_MCP") else {
        let first = listed(&json!({}), true, false);
        let second = listed(&json!({"cursor": "page-2"}), true, false);
        let count =
            first["tools"].as_array().unwrap().len() + second["tools"].as_array().unwrap().len();
        assert_eq!(count, tools(false).len());
        assert_eq!(listed(&json!({}), false, true)["tools"].as_array().unwrap().len(), 9);
        return;
    };
    let has = |flag: &str| behaviour.split(',').any(|f| f == flag);
    let value = |key: &str| {
        behaviour.split(',').find_map(|f| f.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
    };
    let mut log = std::env::var("ZERO_TEST_MCP_LOG")
        .ok()
        .map(|path| std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap());
    if let Some(log) = log.as_mut() {
        writeln!(log, "pid {}", std::process::id()).unwrap();
    }
    if let Some(ms) = value("start_ms") {
        std::thread::sleep(std::time::Duration::from_millis(ms.parse().unwrap()));
    }
    // `barrier=<dir>:<n>`: at `initialize`, wait (up to 20 s) until n servers have arrived.
    let barrier = value("barrier").map(|b| {
        let (dir, n) = b.rsplit_once(':').unwrap();
        (std::path::PathBuf::from(dir), n.parse::<usize>().unwrap())
    });
    let version = value("version").unwrap_or("2025-11-25").to_string();
    let mut out = std::fs::OpenOptions::new().write(true).open("/dev/fd/3").unwrap();
    // A string is written as it is (not JSON-RPC), anything else as its JSON.
    // One write per message, as a server that buffers its output makes it.
    let mut send = |message: Value| {
        let line = match message.as_str() {
            Some(text) => format!("{text}\n"),
            None => format!("{message}\n"),
        };
        out.write_all(line.as_bytes()).unwrap();
        out.flush().unwrap();
    };
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut changed = false;
    let mut roots_call: Option<Value> = None;
    while let Some(Ok(line)) = lines.next() {
        if let Some(log) = log.as_mut() {
            writeln!(log, "{line}").unwrap();
        }
        let message: Value = serde_json::from_str(&line).unwrap();
        let method = message["method"].as_str().unwrap_or_default().to_string();
        let id = message["id"].clone();
        // The answer to the server's own roots/list request.
        if method.is_empty() {
            if let Some(call_id) = roots_call.take() {
                let uris: Vec<String> = message["result"]["roots"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["uri"].as_str().unwrap().to_string())
                    .collect();
                send(
                    json!({"jsonrpc": "2.0", "id": call_id, "result": {"content": [{"type": "text", "text": uris.join(" ")}]}}),
                );
            }
            continue;
        }
        if has("silent") {
            continue;
        }
        if method == "initialize" && has("escape") {
            // Never waited for: it is meant to outlive this server, and zero must end it.
            #[allow(clippy::zombie_processes)]
            let child = std::process::Command::new("setsid").args(["sleep", "60"]).spawn().unwrap();
            let log = std::env::var("ZERO_TEST_MCP_LOG").unwrap();
            std::fs::write(format!("{log}.escaped"), child.id().to_string()).unwrap();
        }
        let reply = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        match method.as_str() {
            "initialize" if has("garbage") => {
                eprintln!("about to say nonsense");
                send(json!("Server listening on port 3000"));
            }
            "initialize" => {
                if let Some((dir, n)) = &barrier {
                    std::fs::write(dir.join(std::process::id().to_string()), "").unwrap();
                    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
                    while std::fs::read_dir(dir).unwrap().count() < *n
                        && std::time::Instant::now() < deadline
                    {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                }
                send(reply(initialized(&version)))
            }
            "tools/list" if has("loopcursor") => {
                send(reply(json!({"tools": tools(false)[..1], "nextCursor": "same"})))
            }
            "tools/list" if has("describe") => {
                // A description holding the value of a variable zero gave it.
                let secret = std::env::var("SECRET_FOR_DESCRIPTION").unwrap_or_default();
                let tool = json!({"name": "told", "description": format!("uses {secret}"), "inputSchema": {"type": "object", "properties": {"key": {"type": "string", "default": secret}}}, "annotations": {"readOnlyHint": true}});
                send(reply(json!({"tools": [tool]})))
            }
            "tools/list" if has("held") => {
                let mut list = tools(false);
                list.push(json!({"name": "exit_held", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}));
                send(reply(json!({"tools": list})))
            }
            "tools/list" if has("tasks") => {
                let mut list = tools(false);
                list.push(json!({"name": "task_only", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}));
                send(reply(json!({"tools": list})))
            }
            "tools/list" => send(reply(listed(&message["params"], has("pages"), changed))),
            "tools/call" => {
                let tool = message["params"]["name"].as_str().unwrap_or_default();
                let args = &message["params"]["arguments"];
                match tool {
                    // `ZERO_TEST_MCP_READY` names a fifo the test waits on: the call arrived.
                    "hang" => {
                        if let Ok(fifo) = std::env::var("ZERO_TEST_MCP_READY") {
                            std::fs::write(fifo, "ready\n").unwrap();
                        }
                    }
                    // Exits while a child of its own keeps its stdout and stderr open.
                    "exit_held" => {
                        #[allow(clippy::zombie_processes)]
                        let child = std::process::Command::new("sleep").arg("60").spawn().unwrap();
                        let log = std::env::var("ZERO_TEST_MCP_LOG").unwrap();
                        std::fs::write(format!("{log}.held"), child.id().to_string()).unwrap();
                        std::process::exit(4);
                    }
                    "crash" => {
                        eprintln!("boom: crashed on purpose");
                        std::process::exit(3);
                    }
                    "roots" => {
                        roots_call = Some(id.clone());
                        send(json!({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}));
                    }
                    _ => {
                        let result = call_result(tool, args).unwrap_or_else(|| {
                            json!({"content": [{"type": "text", "text": "unknown tool"}], "isError": true})
                        });
                        // Requests zero must answer come before the result.
                        send(json!({"jsonrpc": "2.0", "id": "p1", "method": "ping"}));
                        send(
                            json!({"jsonrpc": "2.0", "id": "p2", "method": "sampling/createMessage", "params": {}}),
                        );
                        send(
                            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "log"}}),
                        );
                        send(reply(result));
                        if has("changing") && !changed {
                            changed = true;
                            send(
                                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
    }
    std::process::exit(0);
}

/// The `mcpServers` entry that starts the stdio server with `behaviour`, logging to `log`.
pub fn stdio_entry(behaviour: &str, log: &std::path::Path) -> Value {
    let exe = std::env::current_exe().unwrap();
    // `linger`: SIGTERM is ignored (the disposition survives exec), so the server reads what
    // zero sends it while it stops, until SIGKILL.
    let trap = if behaviour.split(',').any(|b| b == "linger") { "trap '' TERM; " } else { "" };
    json!({
        "command": "/bin/sh",
        "args": ["-c", format!("{trap}exec \"$0\" mcp_server::serve_stdio --exact --nocapture --quiet 3>&1 1>/dev/null"), exe],
        "env": {"ZERO_TEST_MCP": behaviour, "ZERO_TEST_MCP_LOG": log}
    })
}

/// What the HTTP server does beyond the plain protocol.
#[derive(Default, Clone)]
pub struct HttpTricks {
    /// Answer requests with JSON bodies instead of event streams.
    pub json: bool,
    /// The first `tools/call` finds the session forgotten (404).
    pub forget_session: bool,
    /// The first `tools/call` stream is cut after a priming event, to be resumed.
    pub cut_stream: bool,
    /// A GET without `Last-Event-ID` opens the listening stream, which carries a `roots/list`
    /// request; a `roots` call waits for zero's answer to it (otherwise such a GET is 405).
    pub listen: bool,
}

/// A streamable HTTP MCP server in the test process.
pub struct Http {
    pub mock: Mock,
    /// Every request, as method, headers and body.
    pub seen: Arc<Mutex<Vec<Request>>>,
}

impl Http {
    pub fn start(tricks: HttpTricks) -> Http {
        let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
        let state = Mutex::new((0u32, false, false)); // sessions made, forgot, cut
                                                      // zero's answer to the roots/list request of the listening stream, for a `roots` call;
                                                      // and the senders that hold listening streams open until the mock goes.
        let (roots_tx, roots_rx) = std::sync::mpsc::channel::<String>();
        let roots_rx = Mutex::new(roots_rx);
        let holds = Mutex::new(Vec::new());
        let log = seen.clone();
        let mock = Mock::responding(Box::new(move |request: &Request| {
            log.lock().unwrap().push(request.clone());
            let mut state = state.lock().unwrap();
            let session = request.headers.get("mcp-session-id").cloned();
            let current = format!("session-{}", state.0);
            if request.method == "DELETE" {
                return Reply::status(200, "application/json", "");
            }
            if request.method == "GET" && !request.headers.contains_key("last-event-id") {
                if !tricks.listen {
                    return Reply::status(405, "text/plain", "");
                }
                let (hold, wait) = std::sync::mpsc::channel();
                holds.lock().unwrap().push(hold);
                let ask = json!({"jsonrpc": "2.0", "id": "g1", "method": "roots/list"});
                return Reply::stream(vec![
                    Step::Send(format!("id: l1\ndata: {ask}\n\n").into_bytes()),
                    Step::Wait(wait),
                ]);
            }
            if request.method == "GET" {
                // The resumed stream: the response the cut one did not deliver.
                let last = request.headers.get("last-event-id").cloned().unwrap_or_default();
                let id: u64 = last.trim_start_matches("ev-").parse().unwrap_or(0);
                let result = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": format!("resumed after {last}")}]}});
                return Reply::sse(&[format!("id: ev-{id}-2\ndata: {result}\n\n")]);
            }
            let message = request.json();
            let method = message["method"].as_str().unwrap_or_default();
            let id = message["id"].clone();
            if method == "initialize" {
                state.0 += 1;
                let result =
                    json!({"jsonrpc": "2.0", "id": id, "result": initialized("2025-11-25")});
                return answer(&tricks, &result, None)
                    .with_header("mcp-session-id", &format!("session-{}", state.0));
            }
            if session.as_deref() != Some(current.as_str()) {
                return Reply::status(404, "application/json", "{\"error\":\"no such session\"}");
            }
            match method {
                "notifications/initialized" | "notifications/cancelled" => {
                    Reply::status(202, "application/json", "")
                }
                "tools/list" => answer(
                    &tricks,
                    &json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools(false)}}),
                    None,
                ),
                "tools/call" => {
                    if tricks.forget_session && !state.1 {
                        state.1 = true;
                        state.0 += 1;
                        return Reply::status(
                            404,
                            "application/json",
                            "{\"error\":\"session expired\"}",
                        );
                    }
                    if tricks.cut_stream && !state.2 {
                        state.2 = true;
                        let n = id.as_u64().unwrap();
                        return Reply::stream(vec![
                            Step::Send(format!("id: ev-{n}\nretry: 50\ndata:\n\n").into_bytes()),
                            Step::Cut,
                        ]);
                    }
                    let tool = message["params"]["name"].as_str().unwrap_or_default();
                    if tool == "hang" {
                        return Reply::Hang;
                    }
                    if tool == "roots" {
                        drop(state);
                        let uris = roots_rx
                            .lock()
                            .unwrap()
                            .recv_timeout(std::time::Duration::from_secs(20));
                        let text = uris.unwrap_or_else(|_| "no answer to roots/list".into());
                        let result = json!({"content": [{"type": "text", "text": text}]});
                        return answer(
                            &tricks,
                            &json!({"jsonrpc": "2.0", "id": id, "result": result}),
                            None,
                        );
                    }
                    let result = call_result(tool, &message["params"]["arguments"]).unwrap();
                    let ping = json!({"jsonrpc": "2.0", "id": "h1", "method": "ping"});
                    answer(
                        &tricks,
                        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
                        Some(ping),
                    )
                }
                // Zero's answers to the server's requests.
                _ if message.get("result").is_some() || message.get("error").is_some() => {
                    if message["id"] == "g1" {
                        let roots =
                            message["result"]["roots"].as_array().cloned().unwrap_or_default();
                        let uris: Vec<&str> =
                            roots.iter().filter_map(|r| r["uri"].as_str()).collect();
                        let _ = roots_tx.send(uris.join(" "));
                    }
                    Reply::status(202, "application/json", "")
                }
                _ => answer(
                    &tricks,
                    &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
                    None,
                ),
            }
        }));
        Http { mock, seen }
    }

    pub fn url(&self) -> String {
        format!("{}/mcp", self.mock.url())
    }

    pub fn seen(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

/// A JSON body, or an event stream (with a request of the server's first, when given).
fn answer(tricks: &HttpTricks, message: &Value, before: Option<Value>) -> Reply {
    if tricks.json {
        return Reply::status(200, "application/json", &message.to_string());
    }
    let mut events: Vec<String> = before.iter().map(|m| format!("data: {m}\n\n")).collect();
    events.push(format!("event: message\ndata: {message}\n\n"));
    Reply::sse(&events)
}
