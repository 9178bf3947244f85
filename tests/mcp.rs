//! MCP servers end to end: the real binary against the test suite's own servers
//! (`mcp_server`), over stdio and streamable HTTP. Each test checks what a wrapper sees (the
//! events, exit code, messages) and what the server saw (its log), and that no server process
//! outlives zero.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::mcp_server::{stdio_entry, Http, HttpTricks};
use crate::util::{gone_within, Output, TestDir};

const EXEC_2: [&str; 5] = ["exec", "-o", "stream-json", "--schema-version", "2"];

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

/// A run of `turns` with these servers and extra arguments, in schema 2.
fn run(dir: &TestDir, turns: Value, servers: Value, args: &[&str]) -> Output {
    let script = dir.script(&json!({"turns": turns})).display().to_string();
    let config = json!({"mcpServers": servers}).to_string();
    dir.zero()
        .args(&EXEC_2)
        .args(&["--script", &script, "--mcp-config", &config])
        .args(args)
        .args(&["go"])
        .run()
}

/// The lines the stdio server read (after its pid line), as JSON.
fn server_log(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The pid the stdio server wrote first in its log.
fn server_pid(path: &Path) -> u32 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().next().unwrap().trim_start_matches("pid ").parse().unwrap()
}

#[track_caller]
fn assert_gone(log: &Path) {
    let pid = server_pid(log);
    assert!(gone_within(pid, Duration::from_secs(5)), "the server {pid} outlived zero");
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn results(events: &[Value]) -> Vec<(String, String, String)> {
    of_type(events, "tool_result")
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (s("id"), s("status"), s("output"))
        })
        .collect()
}

#[test]
fn a_stdio_server_is_started_listed_called_and_stopped() {
    let dir = TestDir::new("mcp-basic");
    let log = dir.path("server.log");
    let turns = json!([
        {"toolCalls": [
            call("a", "mcp__t__echo", json!({"text": "hello"})),
            call("b", "mcp__t__shapes", json!({})),
            call("c", "mcp__t__fail", json!({})),
            call("d", "mcp__t__structured", json!({})),
            call("e", "mcp__t__echo", json!("[1]")),
            call("f", "mcp__t__roots", json!({}))
        ]},
        {"text": "done"}
    ]);
    let out = run(&dir, turns, json!({"t": stdio_entry("pages", &log)}), &["--add-dir", "../home"]);
    out.assert_code(0);
    let events = out.stream();
    let server = of_type(&events, "mcp_server");
    assert_eq!(server.len(), 1);
    assert_eq!(
        (
            server[0]["name"].as_str(),
            server[0]["status"].as_str(),
            server[0]["transport"].as_str(),
            server[0]["tools"].as_u64(),
            server[0]["protocolVersion"].as_str()
        ),
        // Eight tools, one (touch) withheld at --auto low.
        (Some("t"), Some("ready"), Some("stdio"), Some(7), Some("2025-11-25"))
    );
    let work = dir.work().canonicalize().unwrap();
    let home = dir.path("home").canonicalize().unwrap();
    assert_eq!(
        results(&events),
        [
            ("a".into(), "ok".into(), "echo: hello".into()),
            ("b".into(), "ok".into(), "a text\n[image: image/png, 8 bytes]\n[audio: audio/wav, 4 bytes]\nembedded text\n[resource file:///blob.bin, application/octet-stream, 5 bytes]\nfile:///linked.txt".into()),
            ("c".into(), "error".into(), "it failed on purpose".into()),
            ("d".into(), "ok".into(), "{\"answer\":42}".into()),
            ("e".into(), "error".into(), "Error: Invalid arguments for mcp__t__echo: expected a JSON object".into()),
            ("f".into(), "ok".into(), format!("file://{} file://{}", work.display(), home.display())),
        ]
    );
    let meta = &of_type(&events, "tool_result")[0]["meta"];
    assert_eq!(meta, &json!({"mcp": {"server": "t", "tool": "echo"}}));
    let calls: Vec<&str> =
        of_type(&events, "tool_call").iter().map(|e| e["sideEffect"].as_str().unwrap()).collect();
    assert_eq!(calls, ["read"; 6]);
    // What the server read: the handshake, both pages, the calls (not the one with bad
    // arguments), zero's answers to its ping and sampling requests.
    let seen = server_log(&log);
    let methods: Vec<&str> = seen.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/list",
            "tools/call",
            "tools/call",
            "tools/call",
            "tools/call",
            "tools/call"
        ]
    );
    assert_eq!(seen[0]["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(seen[0]["params"]["clientInfo"]["name"], "zero");
    assert_eq!(seen[0]["params"]["capabilities"], json!({"roots": {"listChanged": false}}));
    assert_eq!(seen[3]["params"], json!({"cursor": "page-2"}));
    let ping = seen.iter().find(|m| m["id"] == "p1").unwrap();
    assert_eq!(ping["result"], json!({}));
    let sampling = seen.iter().find(|m| m["id"] == "p2").unwrap();
    assert_eq!(sampling["error"]["code"], -32601);
    assert_gone(&log);
}

#[test]
fn an_older_protocol_version_is_accepted_and_an_unknown_one_fails_the_server() {
    let dir = TestDir::new("mcp-versions");
    let (old, odd) = (dir.path("old.log"), dir.path("odd.log"));
    let servers = json!({"old": stdio_entry("version=2024-11-05", &old), "odd": stdio_entry("version=1999-01-01", &odd)});
    let out = run(&dir, json!([{"text": "ok"}]), servers, &[]);
    out.assert_code(0);
    let events = out.stream();
    // Servers are taken in name order (a JSON object's members have none).
    let servers = of_type(&events, "mcp_server");
    assert_eq!(
        (servers[0]["name"].as_str(), servers[1]["name"].as_str()),
        (Some("odd"), Some("old"))
    );
    assert_eq!(servers[1]["protocolVersion"], "2024-11-05");
    assert_eq!(servers[0]["status"], "failed");
    assert_eq!(
        servers[0]["error"],
        "offered protocol version 1999-01-01; zero speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"
    );
    let warnings: Vec<&str> =
        of_type(&events, "warning").iter().map(|w| w["code"].as_str().unwrap()).collect();
    assert_eq!(warnings, ["mcp_server_failed"]);
    assert_gone(&old);
    assert_gone(&odd);
}

#[test]
fn a_required_server_that_fails_ends_the_run_in_both_schemas() {
    let dir = TestDir::new("mcp-required");
    let log = dir.path("server.log");
    let mut entry = stdio_entry("garbage", &log);
    entry["required"] = json!(true);
    let out = run(
        &dir,
        json!([{"error": "the model is never called"}]),
        json!({"bad": entry.clone()}),
        &[],
    );
    out.assert_code(3);
    let events = out.stream();
    let error = of_type(&events, "error")[0];
    assert_eq!(error["code"], "mcp_error");
    assert_eq!(
        error["message"],
        "MCP server bad (required) failed to start: sent something that is not JSON-RPC: Server listening on port 3000 (stderr: about to say nonsense)"
    );
    assert_eq!(of_type(&events, "mcp_server")[0]["status"], "failed");
    // Schema 1: the same failure, as provider_error.
    let script = dir.script(&json!({"turns": [{"text": "never"}]})).display().to_string();
    let config = json!({"mcpServers": {"bad": entry}}).to_string();
    let out = dir
        .zero()
        .args(&["exec", "-o", "stream-json", "--script", &script, "--mcp-config", &config, "go"])
        .run();
    out.assert_code(3);
    let events = out.stream();
    assert_eq!(events.last().unwrap()["type"], "run_end");
    let error = of_type(&events, "error")[0];
    assert_eq!(error["code"], "provider_error");
    assert!(error["message"]
        .as_str()
        .unwrap()
        .starts_with("MCP server bad (required) failed to start"));
    assert_gone(&log);
}

#[test]
fn a_server_that_never_answers_misses_its_startup_deadline_and_the_run_goes_on() {
    let dir = TestDir::new("mcp-silent");
    let log = dir.path("server.log");
    let mut entry = stdio_entry("silent", &log);
    entry["startupTimeoutMs"] = json!(300);
    let out = run(&dir, json!([{"text": "answered anyway"}]), json!({"quiet": entry}), &[]);
    out.assert_code(0);
    let events = out.stream();
    let warning = of_type(&events, "warning")[0];
    assert_eq!(warning["code"], "mcp_server_failed");
    assert_eq!(
        warning["message"],
        "MCP server quiet failed to start: did not finish starting within 300 ms (startupTimeoutMs); the run goes on without its tools."
    );
    assert_eq!(out.text(), "answered anyway");
    assert_gone(&log);
}

#[test]
fn five_servers_start_together() {
    let dir = TestDir::new("mcp-concurrent");
    let arrived = dir.path("arrived");
    std::fs::create_dir_all(&arrived).unwrap();
    // Each server answers initialize only once all five are waiting: one started after
    // another's start had ended would never come, and the first would miss its deadline.
    let behaviour = format!("barrier={}:5", arrived.display());
    let mut servers = serde_json::Map::new();
    let logs: Vec<_> = (0..5).map(|i| dir.path(&format!("s{i}.log"))).collect();
    for (i, log) in logs.iter().enumerate() {
        let mut entry = stdio_entry(&behaviour, log);
        entry["startupTimeoutMs"] = json!(10_000);
        servers.insert(format!("s{i}"), entry);
    }
    let out = run(&dir, json!([{"text": "ok"}]), Value::Object(servers), &[]);
    out.assert_code(0);
    let events = out.stream();
    let ready = of_type(&events, "mcp_server").iter().filter(|s| s["status"] == "ready").count();
    assert_eq!(ready, 5, "{out:?}");
    for log in &logs {
        assert_gone(log);
    }
}

#[test]
fn a_call_past_its_timeout_is_cancelled_on_the_server() {
    let dir = TestDir::new("mcp-timeout");
    let log = dir.path("server.log");
    let mut entry = stdio_entry("", &log);
    entry["toolTimeoutMs"] = json!(200);
    let turns =
        json!([{"toolCalls": [call("h", "mcp__slow__hang", json!({}))]}, {"text": "gave up"}]);
    let out = run(&dir, turns, json!({"slow": entry}), &["--heartbeat-ms", "50"]);
    out.assert_code(0);
    let events = out.stream();
    // While the call waits, heartbeats say so.
    let beat = of_type(&events, "heartbeat")[0];
    assert_eq!((&beat["phase"], &beat["toolCallId"]), (&json!("tool"), &json!("h")));
    assert_eq!(
        results(&events),
        [(
            "h".into(),
            "error".into(),
            "Error: timed out after 200 ms (toolTimeoutMs of server slow)".into()
        )]
    );
    let seen = server_log(&log);
    let call_id = seen.iter().find(|m| m["method"] == "tools/call").unwrap()["id"].clone();
    let cancel =
        seen.iter().find(|m| m["method"] == "notifications/cancelled").expect("a cancellation");
    assert_eq!(cancel["params"], json!({"requestId": call_id, "reason": "timed out after 200 ms"}));
    assert_gone(&log);
}

#[test]
fn a_server_that_crashes_mid_call_fails_that_call_and_every_later_one() {
    let dir = TestDir::new("mcp-crash");
    let log = dir.path("server.log");
    let turns = json!([
        {"toolCalls": [call("a", "mcp__c__crash", json!({})), call("b", "mcp__c__echo", json!({"text": "x"}))]},
        {"text": "done"}
    ]);
    let out = run(&dir, turns, json!({"c": stdio_entry("", &log)}), &[]);
    out.assert_code(0);
    let events = out.stream();
    let failed =
        "Error: MCP server c failed: exited (exit status: 3) (stderr: boom: crashed on purpose)";
    assert_eq!(
        results(&events),
        [("a".into(), "error".into(), failed.into()), ("b".into(), "error".into(), failed.into())]
    );
    // Before the next model call, the run says the server is gone and stops offering it.
    let warning = of_type(&events, "warning")[0];
    assert_eq!(warning["code"], "mcp_server_failed");
    assert_eq!(
        warning["message"],
        "MCP server c failed: exited (exit status: 3) (stderr: boom: crashed on purpose); its tools are no longer offered."
    );
    assert_gone(&log);
}

#[test]
fn a_dead_servers_tools_fail_with_its_reason_in_later_turns_and_the_model_is_told() {
    use crate::mock::{openai, Mock, Reply};
    let dir = TestDir::new("mcp-dead");
    let log = dir.path("server.log");
    let mock = Mock::start(vec![
        Reply::sse(&openai::tool_turn("a", "mcp__c__crash", "{}")),
        Reply::sse(&openai::tool_turn("b", "mcp__c__echo", r#"{"text":"x"}"#)),
        Reply::sse(&openai::answer(&["done"], 1, 1)),
    ]);
    let config = json!({"mcpServers": {"c": stdio_entry("", &log)}}).to_string();
    let out = dir
        .zero()
        .openai(&mock.v1(), "local-coder")
        .args(&EXEC_2)
        .args(&["--mcp-config", &config, "go"])
        .run();
    out.assert_code(0);
    let failed =
        "Error: MCP server c failed: exited (exit status: 3) (stderr: boom: crashed on purpose)";
    // The later turn's call is not of an unknown tool: it has its server's reason.
    assert_eq!(
        results(&out.stream()),
        [("a".into(), "error".into(), failed.into()), ("b".into(), "error".into(), failed.into())]
    );
    // The model was told, before its next call, and is told again in every later request.
    let note = "[zero] MCP server c stopped (exited (exit status: 3) (stderr: boom: crashed on purpose)); its tools (mcp__c__...) are no longer available in this run.";
    let requests = mock.requests();
    for request in &requests[1..] {
        let messages = request.json()["messages"].as_array().unwrap().clone();
        assert!(
            messages.iter().any(|m| m["role"] == "user" && m["content"] == note),
            "{messages:#?}"
        );
    }
    let tools = requests[1].json()["tools"].as_array().map(Vec::len).unwrap_or(0);
    let offered_first = requests[0].json()["tools"].as_array().map(Vec::len).unwrap_or(0);
    assert!(tools < offered_first, "the dead server's tools are no longer offered");
    assert_gone(&log);
}

#[test]
fn a_changed_tool_list_is_read_again_before_the_next_model_call() {
    let dir = TestDir::new("mcp-changed");
    let log = dir.path("server.log");
    let turns = json!([
        {"toolCalls": [call("a", "mcp__c__echo", json!({"text": "1"}))]},
        {"toolCalls": [call("b", "mcp__c__added", json!({}))]},
        {"text": "done"}
    ]);
    let out = run(&dir, turns, json!({"c": stdio_entry("changing", &log)}), &[]);
    out.assert_code(0);
    let events = out.stream();
    assert_eq!(results(&events)[1], ("b".into(), "ok".into(), "added works".into()));
    let lists = server_log(&log).iter().filter(|m| m["method"] == "tools/list").count();
    assert_eq!(lists, 2);
    assert_gone(&log);
}

#[test]
fn tools_without_a_read_only_hint_follow_the_permission_rules() {
    let dir = TestDir::new("mcp-permissions");
    let log = dir.path("server.log");
    let turns = json!([{"toolCalls": [call("t", "mcp__w__touch", json!({"path": "made.txt"}))]}, {"text": "done"}]);
    // --auto low: withheld, and a call anyway is denied by policy, naming both ways to allow it.
    let out = run(&dir, turns.clone(), json!({"w": stdio_entry("", &log)}), &[]);
    out.assert_code(0);
    let events = out.stream();
    let decision = of_type(&events, "permission_decision")[0];
    assert_eq!(
        (decision["action"].as_str(), decision["decidedBy"].as_str()),
        (Some("deny"), Some("policy"))
    );
    assert_eq!(
        decision["decisionReason"],
        "Permission required for mcp__w__touch: the MCP tool is not marked read-only and was not executed. The caller can allow it with --auto high, or with \"trust\": true for MCP server w."
    );
    assert_eq!(decision["sideEffect"], "unknown");
    assert!(!dir.work().join("made.txt").exists());
    assert_eq!(
        of_type(&events, "tool_result")[0]["meta"],
        json!({"permission": "denied", "mcp": {"server": "w", "tool": "touch"}})
    );
    // --list-tools says it is withheld and why.
    let config = json!({"mcpServers": {"w": stdio_entry("", &log)}}).to_string();
    let listing =
        dir.zero().args(&["exec", "--list-tools", "-o", "json", "--mcp-config", &config]).run();
    listing.assert_code(0);
    let tools = &listing.events()[0]["tools"];
    let touch = tools.as_array().unwrap().iter().find(|t| t["name"] == "mcp__w__touch").unwrap();
    assert_eq!(touch["enabled"], false);
    assert_eq!(
        touch["withheld"],
        "needs --auto high (or \"trust\": true for server w): it is not marked read-only"
    );
    // --auto high runs it, with the policy's decision first.
    let out = run(&dir, turns.clone(), json!({"w": stdio_entry("", &log)}), &["--auto", "high"]);
    let events = out.stream();
    assert_eq!(
        of_type(&events, "permission_decision")[0]["decisionReason"],
        "allowed by --auto high"
    );
    assert!(dir.work().join("made.txt").exists());
    std::fs::remove_file(dir.work().join("made.txt")).unwrap();
    // A trusted server's tools run at --auto low.
    let mut trusted = stdio_entry("", &log);
    trusted["trust"] = json!(true);
    let out = run(&dir, turns.clone(), json!({"w": trusted}), &[]);
    let events = out.stream();
    assert_eq!(
        of_type(&events, "permission_decision")[0]["decisionReason"],
        "allowed by \"trust\": true for MCP server w"
    );
    assert!(dir.work().join("made.txt").exists());
    assert_gone(&log);
}

#[test]
fn filters_name_a_tool_or_a_whole_server() {
    let dir = TestDir::new("mcp-filters");
    let (a, b) = (dir.path("a.log"), dir.path("b.log"));
    let config =
        json!({"mcpServers": {"a": stdio_entry("", &a), "b": stdio_entry("", &b)}}).to_string();
    let list = |extra: &[&str]| {
        let out = dir
            .zero()
            .args(&["exec", "--list-tools", "-o", "json", "--mcp-config", &config])
            .args(extra)
            .run();
        out.assert_code(0);
        out.events()[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["enabled"] == true)
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(list(&["--enabled-tools", "mcp__a__echo,grep"]), ["grep", "mcp__a__echo"]);
    // Names that match nothing are said to.
    let mut quiet = stdio_entry("", &a);
    quiet["enabledTools"] = json!(["echo", "Echo"]);
    let config_typo = json!({"mcpServers": {"a": quiet}}).to_string();
    let out = dir
        .zero()
        .args(&[
            "exec",
            "--list-tools",
            "-o",
            "json",
            "--mcp-config",
            &config_typo,
            "--disabled-tools",
            "mcp__nope",
        ])
        .run();
    assert_eq!(
        out.warnings(),
        [
            "mcpServers.a.enabledTools: \"Echo\" is not a tool of server a (zero mcp list shows its tools).",
            "--disabled-tools mcp__nope matches no MCP tool or server of this run."
        ]
    );
    let without_b = list(&["--disabled-tools", "mcp__b"]);
    assert!(
        without_b.iter().any(|n| n == "mcp__a__echo")
            && !without_b.iter().any(|n| n.starts_with("mcp__b"))
    );
    assert_gone(&a);
    assert_gone(&b);
}

#[test]
fn bad_configuration_is_a_config_error_before_any_model_call() {
    let dir = TestDir::new("mcp-config-errors");
    let run_with = |config: &str| {
        let script = dir.script(&json!({"turns": [{"error": "never"}]})).display().to_string();
        dir.zero()
            .args(&["exec", "-o", "stream-json", "--script", &script, "--mcp-config", config, "go"])
            .run()
    };
    let out =
        run_with(r#"{"mcpServers": {"s": {"command": "x", "args": ["${NOT_SET_ANYWHERE}"]}}}"#);
    out.assert_code(3);
    assert_eq!(
        out.events()[0]["message"],
        "--mcp-config: mcpServers.s: the variable NOT_SET_ANYWHERE is not set (or is empty)"
    );
    let out = run_with("missing.json");
    out.assert_code(3);
    let message = out.events()[0]["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with("--mcp-config ") && message.ends_with("missing.json: no such file"),
        "{message}"
    );
    let out = run_with(
        r#"{"mcpServers": {"s": {"type": "http", "url": "http://127.0.0.1:1/mcp", "timeout": 5}}}"#,
    );
    out.assert_code(3);
    assert_eq!(out.events()[0]["message"], "--mcp-config: mcpServers.s: unknown field \"timeout\"");
}

#[test]
fn expanded_values_are_redacted_everywhere() {
    let dir = TestDir::new("mcp-secrets");
    let log = dir.path("server.log");
    let secret = "mcp-secret-value-0123456789";
    let mut entry = stdio_entry("", &log);
    entry["env"]["API_TOKEN_FOR_TEST"] = json!("${MY_MCP_VALUE}");
    let turns = json!([{"toolCalls": [call("a", "mcp__s__echo", json!({"text": secret}))]}, {"text": "done"}]);
    let script = dir.script(&json!({"turns": turns})).display().to_string();
    let config = json!({"mcpServers": {"s": entry}}).to_string();
    let out = dir
        .zero()
        .env("MY_MCP_VALUE", secret)
        .args(&EXEC_2)
        .args(&["--script", &script, "--mcp-config", &config, "go"])
        .run();
    out.assert_code(0);
    crate::util::assert_no_piece_of(&out.stdout, secret, "stdout");
    assert_eq!(results(&out.stream())[0].2, "echo: [REDACTED]");
    assert_gone(&log);
}

#[test]
fn streamable_http_keeps_its_session_and_answers_the_servers_requests() {
    let dir = TestDir::new("mcp-http");
    let http = Http::start(HttpTricks::default());
    let turns = json!([{"toolCalls": [call("a", "mcp__web__echo", json!({"text": "over http"}))]}, {"text": "done"}]);
    let servers =
        json!({"web": {"type": "http", "url": http.url(), "headers": {"X-Team": "zero"}}});
    let out = run(&dir, turns, servers, &[]);
    out.assert_code(0);
    let events = out.stream();
    let server = of_type(&events, "mcp_server")[0];
    assert_eq!((server["transport"].as_str(), server["tools"].as_u64()), (Some("http"), Some(7)));
    assert_eq!(results(&events), [("a".into(), "ok".into(), "echo: over http".into())]);
    // The listening stream's GET (refused here with 405) runs beside the rest.
    let seen: Vec<_> = http.seen().into_iter().filter(|r| r.method != "GET").collect();
    let summary: Vec<(String, Option<String>, Option<String>)> = seen
        .iter()
        .map(|r| {
            let what = if r.method == "POST" {
                let body = r.json();
                body["method"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("answer {}", body["id"]))
            } else {
                r.method.clone()
            };
            (
                what,
                r.headers.get("mcp-session-id").cloned(),
                r.headers.get("mcp-protocol-version").cloned(),
            )
        })
        .collect();
    let s = |x: &str| Some(x.to_string());
    assert_eq!(
        summary,
        [
            ("initialize".into(), None, None),
            ("notifications/initialized".into(), s("session-1"), s("2025-11-25")),
            ("tools/list".into(), s("session-1"), s("2025-11-25")),
            ("tools/call".into(), s("session-1"), s("2025-11-25")),
            ("answer \"h1\"".into(), s("session-1"), s("2025-11-25")),
            ("DELETE".into(), s("session-1"), s("2025-11-25")),
        ]
    );
    assert!(seen.iter().all(|r| r.headers.get("x-team").map(String::as_str) == Some("zero")));
    assert_eq!(seen[0].headers["accept"], "application/json, text/event-stream");
}

#[test]
fn streamable_http_initializes_again_when_its_session_is_forgotten() {
    let dir = TestDir::new("mcp-http-404");
    let http =
        Http::start(HttpTricks { json: true, forget_session: true, ..HttpTricks::default() });
    let turns = json!([{"toolCalls": [call("a", "mcp__web__echo", json!({"text": "again"}))]}, {"text": "done"}]);
    let out = run(&dir, turns, json!({"web": {"type": "http", "url": http.url()}}), &[]);
    out.assert_code(0);
    assert_eq!(results(&out.stream()), [("a".into(), "ok".into(), "echo: again".into())]);
    let methods: Vec<String> = http
        .seen()
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.json()["method"].as_str().unwrap_or("answer").to_string())
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
            "initialize",
            "notifications/initialized",
            "tools/call",
            // The new session may offer other tools: they are listed again.
            "tools/list"
        ]
    );
}

#[test]
fn streamable_http_resumes_a_cut_stream_with_last_event_id() {
    let dir = TestDir::new("mcp-http-resume");
    let http = Http::start(HttpTricks { cut_stream: true, ..HttpTricks::default() });
    let turns = json!([{"toolCalls": [call("a", "mcp__web__echo", json!({"text": "x"}))]}, {"text": "done"}]);
    let out = run(&dir, turns, json!({"web": {"type": "http", "url": http.url()}}), &[]);
    out.assert_code(0);
    let events = out.stream();
    let get = http
        .seen()
        .into_iter()
        .find(|r| r.method == "GET" && r.headers.contains_key("last-event-id"))
        .expect("a GET to resume");
    let last = get.headers["last-event-id"].clone();
    assert!(last.starts_with("ev-"), "{last}");
    assert_eq!(results(&events), [("a".into(), "ok".into(), format!("resumed after {last}"))]);
}

#[test]
fn sigint_and_sigterm_during_a_call_end_the_run_and_stop_the_server() {
    for signal in ["-INT", "-TERM"] {
        let dir = TestDir::new("mcp-signal");
        let log = dir.path("server.log");
        let ready = dir.path("ready");
        assert!(std::process::Command::new("mkfifo").arg(&ready).status().unwrap().success());
        let mut entry = stdio_entry("", &log);
        entry["env"]["ZERO_TEST_MCP_READY"] = json!(ready);
        let turns =
            json!([{"toolCalls": [call("h", "mcp__s__hang", json!({}))]}, {"text": "never"}]);
        let script = dir.script(&json!({"turns": turns})).display().to_string();
        let config = json!({"mcpServers": {"s": entry}}).to_string();
        let zero = dir.zero().args(&[
            "exec",
            "-o",
            "stream-json",
            "--script",
            &script,
            "--mcp-config",
            &config,
            "go",
        ]);
        let mut child = zero.spawn();
        // The server says when the call reached it.
        assert_eq!(crate::util::read(&ready), "ready\n");
        let pid = server_pid(&log);
        assert!(std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap()
            .success());
        let status = child.wait().unwrap();
        let mut stdout = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
        assert_eq!(status.code(), Some(130), "{signal}: {stdout}");
        let last: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(last[last.len() - 2]["code"], "interrupted");
        assert!(
            gone_within(pid, Duration::from_secs(5)),
            "{signal}: the server {pid} outlived zero"
        );
    }
}

#[test]
fn bash_cleanup_leaves_the_servers_running() {
    let dir = TestDir::new("mcp-bash");
    let log = dir.path("server.log");
    let turns = json!([
        {"toolCalls": [
            call("a", "mcp__s__echo", json!({"text": "before"})),
            call("b", "bash", json!({"command": "sleep 0.1 & echo ran"})),
            call("c", "mcp__s__echo", json!({"text": "after"}))
        ]},
        {"text": "done"}
    ]);
    let out = run(&dir, turns, json!({"s": stdio_entry("", &log)}), &["--auto", "high"]);
    out.assert_code(0);
    let events = out.stream();
    let outputs: Vec<String> =
        results(&events).into_iter().map(|r| format!("{} {}", r.1, r.2)).collect();
    assert_eq!(outputs, ["ok echo: before", "ok stdout:\nran\nExit code: 0", "ok echo: after"]);
    assert_gone(&log);
}

#[test]
fn a_redirect_to_another_host_is_not_followed() {
    let dir = TestDir::new("mcp-redirect");
    let mock = crate::mock::Mock::responding(Box::new(|_| {
        crate::mock::Reply::status(307, "text/plain", "")
            .with_header("location", "http://198.51.100.7/mcp")
    }));
    let url = format!("{}/mcp", mock.url());
    let out = run(&dir, json!([{"text": "ok"}]), json!({"web": {"type": "http", "url": url}}), &[]);
    out.assert_code(0);
    let events = out.stream();
    assert_eq!(
        of_type(&events, "mcp_server")[0]["error"],
        "initialize failed: redirected to http://198.51.100.7 (another host): not followed"
    );
}

#[test]
fn mcp_list_starts_lists_and_stops_each_server() {
    let dir = TestDir::new("mcp-list");
    let log = dir.path("server.log");
    let mut broken = stdio_entry("garbage", &dir.path("broken.log"));
    let config =
        json!({"mcpServers": {"t": stdio_entry("", &log), "x": broken.clone()}}).to_string();
    let out = dir.zero().args(&["mcp", "list", "--json", "--mcp-config", &config]).run();
    out.assert_code(0);
    let listed: Value = serde_json::from_str(&out.stdout).unwrap();
    let t = &listed["servers"][0];
    assert_eq!(
        (t["name"].as_str(), t["status"].as_str(), t["protocolVersion"].as_str()),
        (Some("t"), Some("ready"), Some("2025-11-25"))
    );
    assert_eq!(t["tools"][0], json!({"name": "echo", "readOnly": true, "offered": true}));
    // The same rules as a run: at --auto low, what is not read-only is left out, and why.
    assert_eq!(
        t["tools"][7],
        json!({"name": "touch", "readOnly": false, "offered": false, "leftOut": "needs --auto high (or \"trust\": true for server t): it is not marked read-only"})
    );
    assert_eq!(t["offered"], 7);
    assert_eq!(listed["servers"][1]["status"], "failed");
    assert!(listed["servers"][1].get("protocolVersion").is_none());
    let text = dir.zero().args(&["mcp", "list", "--mcp-config", &config]).run();
    text.assert_code(0);
    assert!(
        text.stdout.starts_with(
            "t: ready (stdio, protocol 2025-11-25), 7 of 8 tools offered at --auto low\n  mcp__t__echo  (read-only)\n"
        ),
        "{text:?}"
    );
    assert!(text.stdout.contains("  mcp__t__touch  (may change things; left out: needs --auto high (or \"trust\": true for server t): it is not marked read-only)\n"), "{text:?}");
    // The level and the filters of a run, read as zero exec reads them.
    let high = dir
        .zero()
        .args(&["mcp", "list", "--json", "--mcp-config", &config, "--auto", "high"])
        .args(&["--disabled-tools", "mcp__t__fail"])
        .run();
    let listed: Value = serde_json::from_str(&high.stdout).unwrap();
    let t = &listed["servers"][0];
    assert_eq!(t["offered"], 7);
    assert_eq!(t["tools"][7]["offered"], true);
    assert_eq!(t["tools"][2]["leftOut"], "left out by --enabled-tools or --disabled-tools");
    dir.zero().args(&["mcp", "list", "--auto", "highest"]).run().assert_code(2);
    assert!(text.stdout.contains("x: failed (stdio): sent something that is not JSON-RPC: Server listening on port 3000 (stderr: about to say nonsense)\n"), "{text:?}");
    // A required server that fails is exit 3.
    broken["required"] = json!(true);
    let config = json!({"mcpServers": {"x": broken}}).to_string();
    dir.zero().args(&["mcp", "list", "--mcp-config", &config]).run().assert_code(3);
    assert_gone(&log);
}

#[test]
fn mcp_calls_are_recorded_in_the_session_and_a_resumed_run_starts_its_own_servers() {
    let dir = TestDir::new("mcp-session");
    let log = dir.path("server.log");
    let turns = json!([{"toolCalls": [call("a", "mcp__s__echo", json!({"text": "kept"}))]}, {"text": "done"}]);
    let out = run(&dir, turns, json!({"s": stdio_entry("", &log)}), &[]);
    out.assert_code(0);
    let session = out.stream()[0]["sessionId"].as_str().unwrap().to_string();
    let stored = crate::util::read_sessions(&dir);
    assert!(
        stored.contains("\"name\":\"mcp__s__echo\"") && stored.contains("echo: kept"),
        "{stored}"
    );
    let turns = json!([{"toolCalls": [call("b", "mcp__s__echo", json!({"text": "again"}))]}, {"text": "done"}]);
    let script = dir.script(&json!({"turns": turns})).display().to_string();
    let config = json!({"mcpServers": {"s": stdio_entry("", &log)}}).to_string();
    let out = dir
        .zero()
        .args(&EXEC_2)
        .args(&["--script", &script, "--mcp-config", &config, "--resume", &session, "more"])
        .run();
    out.assert_code(0);
    assert_eq!(results(&out.stream()), [("b".into(), "ok".into(), "echo: again".into())]);
    assert_gone(&log);
}

#[test]
fn streamable_http_listens_for_the_servers_own_requests() {
    let dir = TestDir::new("mcp-http-listen");
    let http = Http::start(HttpTricks { listen: true, ..HttpTricks::default() });
    let turns = json!([{"toolCalls": [call("a", "mcp__web__roots", json!({}))]}, {"text": "done"}]);
    let out = run(&dir, turns, json!({"web": {"type": "http", "url": http.url()}}), &[]);
    out.assert_code(0);
    let work = dir.work().canonicalize().unwrap();
    assert_eq!(
        results(&out.stream()),
        [("a".into(), "ok".into(), format!("file://{}", work.display()))]
    );
    let listening = http.seen().into_iter().find(|r| r.method == "GET").unwrap();
    assert_eq!(listening.headers["accept"], "text/event-stream");
    assert_eq!(listening.headers["mcp-session-id"], "session-1");
}

#[test]
fn what_a_server_sent_out_of_its_group_is_stopped_at_the_end_too() {
    let dir = TestDir::new("mcp-escape");
    let log = dir.path("server.log");
    let out = run(&dir, json!([{"text": "ok"}]), json!({"e": stdio_entry("escape", &log)}), &[]);
    out.assert_code(0);
    let escaped: u32 = crate::util::read(&dir.path("server.log.escaped")).trim().parse().unwrap();
    assert!(
        gone_within(escaped, Duration::from_secs(5)),
        "the server's setsid child {escaped} survived"
    );
    assert_gone(&log);
    // Also when the server failed (and was stopped) long before the end.
    let failing = dir.path("failing.log");
    let servers = json!({"e": stdio_entry("escape,garbage", &failing)});
    run(&dir, json!([{"text": "ok"}]), servers, &[]).assert_code(0);
    let escaped: u32 = crate::util::read(&dir.path("failing.log.escaped")).trim().parse().unwrap();
    assert!(
        gone_within(escaped, Duration::from_secs(5)),
        "a failed server's child {escaped} survived"
    );
}

#[test]
fn broken_listings_and_start_problems_are_named() {
    let dir = TestDir::new("mcp-listing");
    let (a, b) = (dir.path("a.log"), dir.path("b.log"));
    let mut nowhere = stdio_entry("", &dir.path("c.log"));
    nowhere["cwd"] = json!("no/such/dir");
    let servers =
        json!({"a": stdio_entry("loopcursor", &a), "b": stdio_entry("tasks", &b), "c": nowhere});
    let out = run(&dir, json!([{"text": "ok"}]), servers, &[]);
    out.assert_code(0);
    let events = out.stream();
    let errors: Vec<&Value> = of_type(&events, "mcp_server").iter().map(|s| &s["error"]).collect();
    let missing = dir.work().join("no/such/dir");
    assert_eq!(
        errors,
        [
            &json!("tools/list gave the cursor \"same\" twice"),
            &Value::Null,
            &json!(format!("cwd {} is not a directory", missing.display())),
        ]
    );
    let left_out: Vec<&str> = of_type(&events, "warning")
        .iter()
        .filter(|w| w["code"] == "mcp_tool_left_out")
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        left_out,
        ["MCP tool \"task_only\" of server b is left out: it runs only as a task (taskSupport: required), which zero does not offer."]
    );
    assert_eq!(of_type(&events, "mcp_server")[1]["tools"], 7, "touch is withheld at --auto low");
    assert_gone(&a);
    assert_gone(&b);
}

#[test]
fn sigint_or_sigterm_during_a_stdio_call_cancels_it_on_the_server_before_stopping_it() {
    for (signal, reason) in [("-INT", "zero was interrupted"), ("-TERM", "zero was interrupted")] {
        let dir = TestDir::new("mcp-signal-cancel");
        let log = dir.path("server.log");
        let ready = dir.path("ready.fifo");
        crate::util::mkfifo(&ready);
        let mut entry = stdio_entry("linger", &log);
        entry["env"]["ZERO_TEST_MCP_READY"] = json!(ready);
        let turns =
            json!([{"toolCalls": [call("h", "mcp__s__hang", json!({}))]}, {"text": "never"}]);
        let script = dir.script(&json!({"turns": turns})).display().to_string();
        let config = json!({"mcpServers": {"s": entry}}).to_string();
        let mut child = dir
            .zero()
            .args(&[
                "exec",
                "-o",
                "stream-json",
                "--script",
                &script,
                "--mcp-config",
                &config,
                "go",
            ])
            .spawn();
        // The server says when the call has reached it.
        let mut arrived = String::new();
        std::io::Read::read_to_string(&mut std::fs::File::open(&ready).unwrap(), &mut arrived)
            .unwrap();
        let killed =
            std::process::Command::new("kill").args([signal, &child.id().to_string()]).status();
        assert!(killed.unwrap().success());
        assert_eq!(child.wait().unwrap().code(), Some(130), "{signal}");
        assert_gone(&log);
        let seen = server_log(&log);
        let call_id = seen.iter().find(|m| m["method"] == "tools/call").unwrap()["id"].clone();
        let cancel = seen
            .iter()
            .find(|m| m["method"] == "notifications/cancelled")
            .unwrap_or_else(|| panic!("{signal}: no cancellation in {seen:#?}"));
        assert_eq!(cancel["params"], json!({"requestId": call_id, "reason": reason}), "{signal}");
    }
}

#[test]
fn a_signal_during_an_http_call_still_ends_the_session() {
    let dir = TestDir::new("mcp-http-signal");
    let http = Http::start(HttpTricks::default());
    let turns = json!([{"toolCalls": [call("h", "mcp__web__hang", json!({}))]}, {"text": "never"}]);
    let script = dir.script(&json!({"turns": turns})).display().to_string();
    let config = json!({"mcpServers": {"web": {"type": "http", "url": http.url()}}}).to_string();
    let mut child = dir
        .zero()
        .args(&["exec", "-o", "stream-json", "--script", &script, "--mcp-config", &config, "go"])
        .spawn();
    // The call has reached the server.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !http.seen().iter().any(|r| r.method == "POST" && r.json()["method"] == "tools/call") {
        assert!(std::time::Instant::now() < deadline, "the call never reached the server");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let seen = http.seen();
    let delete = seen.iter().position(|r| r.method == "DELETE").expect("the session was ended");
    assert_eq!(seen[delete].headers["mcp-session-id"], "session-1");
    // The call was cancelled on the server first, in its session.
    let call_id = seen
        .iter()
        .find(|r| r.method == "POST" && r.json()["method"] == "tools/call")
        .unwrap()
        .json()["id"]
        .clone();
    let cancel = seen
        .iter()
        .position(|r| r.method == "POST" && r.json()["method"] == "notifications/cancelled")
        .expect("a cancellation");
    assert!(cancel < delete);
    assert_eq!(seen[cancel].json()["params"]["requestId"], call_id);
    assert_eq!(seen[cancel].headers["mcp-session-id"], "session-1");
}

#[test]
fn a_servers_words_are_redacted_in_every_listing() {
    let dir = TestDir::new("mcp-list-redact");
    let log = dir.path("server.log");
    let secret = "listing-secret-value-0123456789";
    let mut entry = stdio_entry("describe", &log);
    entry["env"]["SECRET_FOR_DESCRIPTION"] = json!("${LISTED}");
    let config = json!({"mcpServers": {"s": entry}}).to_string();
    for format in ["json", "text", "stream-json"] {
        let out = dir
            .zero()
            .env("LISTED", secret)
            .args(&["exec", "--list-tools", "-o", format, "--mcp-config", &config])
            .run();
        out.assert_code(0);
        crate::util::assert_no_piece_of(&out.stdout, secret, format);
        crate::util::assert_no_piece_of(&out.stderr, secret, format);
    }
    assert_gone(&log);
}

#[test]
fn a_server_that_exits_while_its_child_holds_its_pipes_is_seen_to_exit() {
    let dir = TestDir::new("mcp-held");
    let log = dir.path("server.log");
    let turns = json!([{"toolCalls": [call("a", "mcp__h__exit_held", json!({})), call("b", "mcp__h__echo", json!({"text": "x"}))]}, {"text": "done"}]);
    let mut entry = stdio_entry("held", &log);
    entry["toolTimeoutMs"] = json!(20_000);
    let out = run(&dir, turns, json!({"h": entry}), &[]);
    out.assert_code(0);
    let events = out.stream();
    // The result says the server exited: had its exit not been seen, it would say the call
    // timed out (after 20 s).
    let failed = "Error: MCP server h failed: exited (exit status: 4)";
    assert_eq!(
        results(&events),
        [("a".into(), "error".into(), failed.into()), ("b".into(), "error".into(), failed.into())]
    );
    let held: u32 = crate::util::read(&dir.path("server.log.held")).trim().parse().unwrap();
    assert!(gone_within(held, Duration::from_secs(5)), "the server's child {held} outlived zero");
}

#[test]
fn a_fifo_given_as_mcp_config_is_refused_at_once() {
    let dir = TestDir::new("mcp-fifo");
    let fifo = dir.path("work/servers.json");
    crate::util::mkfifo(&fifo);
    let script = dir.script(&json!({"turns": [{"text": "never"}]})).display().to_string();
    let args =
        ["exec", "-o", "stream-json", "--script", &script, "--mcp-config", "servers.json", "go"];
    let out = dir.zero().args(&args).run();
    out.assert_code(3);
    let message = out.events()[0]["message"].as_str().unwrap().to_string();
    assert!(message.ends_with("servers.json: not a regular file"), "{message}");
}

/// The README's worked example, with the official filesystem server (`.ci/run` installs it
/// from npm and names it in `ZERO_MCP_FILESYSTEM_SERVER`): what `zero mcp list` and a run's
/// `mcp_server` event say is what the README shows.
#[test]
fn the_readme_example_with_the_official_filesystem_server_offers_what_it_says() {
    let Some(server) = std::env::var_os("ZERO_MCP_FILESYSTEM_SERVER") else {
        return crate::util::skip(
            "the official filesystem server",
            crate::util::Skip::Missing,
            "ZERO_MCP_FILESYSTEM_SERVER is not set (.ci/run installs @modelcontextprotocol/server-filesystem)",
        );
    };
    let dir = TestDir::new("mcp-filesystem");
    dir.write("work/notes/a.txt", "hello from docs\n");
    let config =
        json!({"mcpServers": {"files": {"command": server.to_string_lossy(), "args": ["."]}}})
            .to_string();
    let listed = dir.zero().args(&["mcp", "list", "--mcp-config", &config]).run();
    listed.assert_code(0);
    assert!(
        listed.stdout.starts_with(
            "files: ready (stdio, protocol 2025-11-25), 10 of 14 tools offered at --auto low\n"
        ),
        "{}",
        listed.stdout
    );
    let script = dir.script(&json!({"turns": [
        {"toolCalls": [{"id": "c1", "name": "mcp__files__read_text_file", "arguments": {"path": "notes/a.txt"}}]},
        {"text": "It says hello."}
    ]}));
    let out = dir
        .zero()
        .args(&["exec", "--mcp-config", &config, "-o", "stream-json", "--schema-version", "2"])
        .args(&["--script", script.to_str().unwrap(), "Summarise my notes"])
        .run();
    out.assert_code(0);
    let events = out.stream();
    assert_eq!(events[1]["type"], "mcp_server");
    assert_eq!(
        (events[1]["status"].as_str(), events[1]["tools"].as_u64()),
        (Some("ready"), Some(10))
    );
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(
        (result["status"].as_str(), result["output"].as_str()),
        (Some("ok"), Some("hello from docs\n"))
    );
    assert_eq!(result["meta"], json!({"mcp": {"server": "files", "tool": "read_text_file"}}));
}
