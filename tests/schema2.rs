//! The stream-json schema 2 output as strict test-side types, written from the
//! document: any unknown field, missing field or wrong type fails, and so does any break of
//! its ordering rules (`seq` from 1 without gaps, `eventCount`, the permission events around a
//! gated call, the statuses and exit codes of `run_end`).

use serde::Deserialize;
use serde_json::{json, Value};

use crate::schema::{valid_id, valid_run_id};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Envelope<T> {
    schema_version: u8,
    run_id: String,
    seq: u64,
    #[serde(flatten)]
    event: T,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
#[allow(dead_code)]
enum Event {
    RunStart {
        session_id: Option<String>,
        cwd: String,
        provider: String,
        model: String,
        api_model: String,
        permission_mode: PermissionMode,
        autonomy: Autonomy,
        heartbeat_ms: u64,
        /// Present only with at least one file.
        instructions: Option<NonEmpty>,
        add_dirs: Option<NonEmpty>,
        sandbox: Sandbox,
    },
    Text {
        delta: String,
    },
    Reasoning {
        delta: String,
    },
    ToolCall {
        id: String,
        name: String,
        args: Option<serde_json::Map<String, Value>>,
        side_effect: SideEffect,
    },
    PermissionRequest {
        id: String,
        name: String,
        action: String,
        permission: String,
        permission_granted: bool,
        permission_mode: PermissionMode,
        autonomy: Autonomy,
        side_effect: SideEffect,
        session_id: Option<String>,
        risk: Risk,
        reason: String,
        request_id: Option<String>,
        timeout_ms: Option<u64>,
    },
    PermissionDecision {
        id: String,
        name: String,
        action: Action,
        permission: String,
        permission_granted: bool,
        permission_mode: PermissionMode,
        autonomy: Autonomy,
        side_effect: SideEffect,
        session_id: Option<String>,
        risk: Risk,
        decision_reason: String,
        decided_by: DecidedBy,
    },
    ToolResult {
        id: String,
        name: String,
        status: Status,
        output: String,
        truncated: bool,
        redacted: Option<bool>,
        changed_files: Option<Vec<String>>,
        meta: Option<Meta>,
        exit_code: Option<i64>,
        duration_ms: u64,
    },
    Usage {
        prompt_tokens: u64,
        completion_tokens: u64,
        total_tokens: u64,
        cost_usd: Option<f64>,
        cache_read_tokens: Option<u64>,
        cache_write_tokens: Option<u64>,
        call: u64,
        cumulative: Totals,
    },
    Warning {
        message: String,
        code: WarningCode,
    },
    McpServer {
        name: String,
        status: McpStatus,
        transport: McpTransport,
        tools: u64,
        protocol_version: Option<String>,
        error: Option<String>,
    },
    Heartbeat {
        phase: Phase,
        elapsed_ms: u64,
        tool_call_id: Option<String>,
    },
    Final {
        text: String,
        /// `--output-schema`'s answer: never `null` (left out instead).
        structured: Option<Value>,
    },
    Error {
        code: ErrorCode,
        message: String,
        recoverable: bool,
    },
    TurnEnd {
        turn: u64,
        status: EndStatus,
    },
    RunEnd {
        status: EndStatus,
        exit_code: u8,
        event_count: u64,
    },
}

/// serde's `deny_unknown_fields` does not combine with `flatten`: the event's own fields are
/// checked here against the list of each type instead.
fn fields_of(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "run_start" => &[
            "sessionId",
            "cwd",
            "provider",
            "model",
            "apiModel",
            "permissionMode",
            "autonomy",
            "heartbeatMs",
            "instructions",
            "addDirs",
            "sandbox",
        ],
        "text" | "reasoning" => &["delta"],
        "tool_call" => &["id", "name", "args", "sideEffect"],
        "permission_request" => &[
            "id",
            "name",
            "action",
            "permission",
            "permissionGranted",
            "permissionMode",
            "autonomy",
            "sideEffect",
            "sessionId",
            "risk",
            "reason",
            "requestId",
            "timeoutMs",
        ],
        "permission_decision" => &[
            "id",
            "name",
            "action",
            "permission",
            "permissionGranted",
            "permissionMode",
            "autonomy",
            "sideEffect",
            "sessionId",
            "risk",
            "decisionReason",
            "decidedBy",
        ],
        "tool_result" => &[
            "id",
            "name",
            "status",
            "output",
            "truncated",
            "redacted",
            "changedFiles",
            "meta",
            "exitCode",
            "durationMs",
        ],
        "usage" => &[
            "promptTokens",
            "completionTokens",
            "totalTokens",
            "costUsd",
            "cacheReadTokens",
            "cacheWriteTokens",
            "call",
            "cumulative",
        ],
        "warning" => &["message", "code"],
        "mcp_server" => &["name", "status", "transport", "tools", "protocolVersion", "error"],
        "heartbeat" => &["phase", "elapsedMs", "toolCallId"],
        "final" => &["text", "structured"],
        "error" => &["code", "message", "recoverable"],
        "turn_end" => &["turn", "status"],
        "run_end" => &["status", "exitCode", "eventCount"],
        _ => return None,
    })
}

/// `run_start.sandbox`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Sandbox {
    mode: SandboxMode,
    network: OnOff,
    enforcement: Enforcement,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum SandboxMode {
    Off,
    ReadOnly,
    WorkspaceWrite,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum OnOff {
    On,
    Off,
}

/// `none` or `landlock-v<N>`.
#[derive(Debug)]
struct Enforcement;

impl<'de> Deserialize<'de> for Enforcement {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Enforcement, D::Error> {
        let text = String::deserialize(d)?;
        let abi = text.strip_prefix("landlock-v").map(|n| n.parse::<u32>().is_ok_and(|n| n > 0));
        if text == "none" || abi == Some(true) {
            Ok(Enforcement)
        } else {
            Err(serde::de::Error::custom(format!(
                "enforcement {text:?} is neither none nor landlock-v<N>"
            )))
        }
    }
}

/// `tool_result.meta`: why a call did not run, and which MCP server's tool it was.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Meta {
    permission: Option<Refused>,
    mcp: Option<McpOrigin>,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Refused {
    Denied,
    Cancelled,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct McpOrigin {
    server: String,
    tool: String,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum McpStatus {
    Ready,
    Failed,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum McpTransport {
    Stdio,
    Http,
}

/// A list of strings with at least one.
#[derive(Debug)]
#[allow(dead_code)]
struct NonEmpty(Vec<String>);

impl<'de> Deserialize<'de> for NonEmpty {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<NonEmpty, D::Error> {
        let list = Vec::<String>::deserialize(d)?;
        if list.is_empty() {
            return Err(serde::de::Error::custom("an empty list is left out, not written"));
        }
        Ok(NonEmpty(list))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Totals {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    cost_usd: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum PermissionMode {
    Auto,
    Unsafe,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Autonomy {
    Low,
    Medium,
    High,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SideEffect {
    Read,
    Write,
    Shell,
    Network,
    None,
    Unknown,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Action {
    Allow,
    Deny,
    Cancel,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum DecidedBy {
    Policy,
    Client,
    Session,
    Timeout,
    Eof,
    Interrupt,
}

/// `risk` of the permission events.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Risk {
    level: RiskLevel,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
enum RiskLevel {
    Low,
    Medium,
    High,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Status {
    Ok,
    Error,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum WarningCode {
    UnsafeMode,
    BashSandboxed,
    IgnoredOption,
    Retry,
    OutputLimit,
    UnknownConfigKey,
    SessionUnavailable,
    TornSession,
    ThreadUnavailable,
    ContextTrimmed,
    McpServerFailed,
    McpToolLeftOut,
    SandboxUnavailable,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Phase {
    Model,
    Tool,
    Approval,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum ErrorCode {
    UsageError,
    ConfigError,
    ProviderError,
    Incomplete,
    BudgetExceeded,
    OutputSchema,
    McpError,
    Interrupted,
    Crash,
}

#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum EndStatus {
    Success,
    Error,
    Incomplete,
    Interrupted,
}

/// Checks one schema-2 line.
pub fn check_line(line: &str) -> Result<(), String> {
    let value: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let object = value.as_object().ok_or("not an object")?;
    let kind = object.get("type").and_then(Value::as_str).ok_or("no type")?;
    let own = fields_of(kind).ok_or(format!("unknown type {kind}"))?;
    let envelope = ["schemaVersion", "type", "runId", "seq"];
    if let Some(key) =
        object.keys().find(|k| !own.contains(&k.as_str()) && !envelope.contains(&k.as_str()))
    {
        return Err(format!("unknown field {key} on {kind}"));
    }
    let line: Envelope<Event> = serde_json::from_value(value).map_err(|e| e.to_string())?;
    if line.schema_version != 2 {
        return Err(format!("schemaVersion {}", line.schema_version));
    }
    if !valid_run_id(&line.run_id) {
        return Err(format!("bad runId {}", line.run_id));
    }
    if line.seq == 0 {
        return Err("seq 0".into());
    }
    let id_ok = |id: &str| if valid_id(id) { Ok(()) } else { Err(format!("bad id {id}")) };
    let non_empty =
        |what: &str, s: &str| if s.is_empty() { Err(format!("empty {what}")) } else { Ok(()) };
    match &line.event {
        Event::RunStart { session_id, cwd, provider, model, api_model, .. } => {
            if let Some(id) = session_id {
                id_ok(id)?;
            }
            for (what, s) in
                [("cwd", cwd), ("provider", provider), ("model", model), ("apiModel", api_model)]
            {
                non_empty(what, s)?;
            }
        }
        Event::ToolCall { id, name, .. } => {
            id_ok(id)?;
            non_empty("name", name)?;
        }
        Event::PermissionRequest {
            id,
            action,
            permission,
            permission_granted,
            reason,
            request_id,
            timeout_ms,
            ..
        } => {
            id_ok(id)?;
            if action != "prompt" || permission != "prompt" || *permission_granted {
                return Err(
                    "a permission_request is action prompt, permission prompt, not granted".into(),
                );
            }
            non_empty("reason", reason)?;
            if request_id.is_some() != timeout_ms.is_some() {
                return Err("requestId and timeoutMs come together".into());
            }
        }
        Event::PermissionDecision { id, action, permission_granted, decision_reason, .. } => {
            id_ok(id)?;
            if (*action == Action::Allow) != *permission_granted {
                return Err("permissionGranted must say whether the action is allow".into());
            }
            non_empty("decisionReason", decision_reason)?;
        }
        Event::McpServer { name, status, protocol_version, error, .. } => {
            non_empty("name", name)?;
            let ready = *status == McpStatus::Ready;
            if ready != protocol_version.is_some() || ready == error.is_some() {
                return Err(
                    "a ready mcp_server has protocolVersion and no error; a failed one the reverse"
                        .into(),
                );
            }
        }
        Event::ToolResult { id, name, changed_files, .. } => {
            id_ok(id)?;
            non_empty("name", name)?;
            // Relative to the workspace, or absolute inside an --add-dir root.
            for file in changed_files.iter().flatten() {
                if file.is_empty() || file.split('/').any(|part| part == "..") {
                    return Err(format!("changedFiles must be resolved paths: {file:?}"));
                }
            }
        }
        Event::Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens,
            cost_usd,
            cache_read_tokens,
            cache_write_tokens,
            call,
            cumulative,
        } => {
            let cached = cache_read_tokens.unwrap_or(0) + cache_write_tokens.unwrap_or(0);
            if cached > *prompt_tokens {
                return Err("the cache counts are part of promptTokens".into());
            }
            if *call == 0 {
                return Err("usage.call counts from 1".into());
            }
            if prompt_tokens + completion_tokens > *total_tokens {
                return Err("totalTokens below its parts".into());
            }
            if cumulative.total_tokens < *total_tokens {
                return Err("cumulative below this call".into());
            }
            for n in [cost_usd, &cumulative.cost_usd].into_iter().flatten() {
                if !n.is_finite() || *n < 0.0 {
                    return Err(format!("bad cost {n}"));
                }
            }
        }
        Event::Warning { message, .. } => non_empty("message", message)?,
        Event::Heartbeat { tool_call_id: Some(id), .. } => id_ok(id)?,
        Event::Error { message, .. } => {
            non_empty("message", message)?;
            if message.contains('\n') {
                return Err("error message is not one line".into());
            }
        }
        Event::TurnEnd { turn: 0, .. } => return Err("turn counts from 1".into()),
        _ => {}
    }
    Ok(())
}

/// The error codes of a run that ended `incomplete`.
const INCOMPLETE_CODES: [&str; 3] = ["incomplete", "budget_exceeded", "output_schema"];

/// The exit codes each `run_end.status` allows.
fn codes_of(status: &str) -> &'static [u64] {
    match status {
        "success" => &[0],
        "error" => &[1, 2, 3],
        "incomplete" => &[4],
        "interrupted" => &[130],
        _ => &[],
    }
}

/// The ordering rules of schema 2, on top of schema 1's; `live` for a `--live` process.
pub fn check_sequence(events: &[Value], live: bool) -> Result<(), String> {
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap_or("")).collect();
    let Some(last) = events.last() else { return Err("no output".into()) };
    for (i, e) in events.iter().enumerate() {
        if e["seq"].as_u64() != Some(i as u64 + 1) {
            return Err(format!("line {} has seq {}", i + 1, e["seq"]));
        }
        if e["schemaVersion"] != 2 {
            return Err(format!("line {} is not schema 2", i + 1));
        }
    }
    if kinds.last() != Some(&"run_end") || kinds.iter().filter(|k| **k == "run_end").count() != 1 {
        return Err("run_end must be last, once".into());
    }
    if last["eventCount"].as_u64() != Some(events.len() as u64) {
        return Err(format!("eventCount {} but {} lines", last["eventCount"], events.len()));
    }
    let status = last["status"].as_str().unwrap_or("");
    let code = last["exitCode"].as_u64().unwrap_or(999);
    if !codes_of(status).contains(&code) {
        return Err(format!("run_end status {status} with exit code {code}"));
    }
    // What comes right before the end, leaving heartbeats aside.
    let before = kinds[..kinds.len() - 1].iter().rev().find(|k| **k != "heartbeat").copied();
    if live {
        check_turns(events, &kinds)?;
    }
    match status {
        "success" if !live && before != Some("final") => return Err("success without final".into()),
        "error" | "incomplete" | "interrupted" if !live && before != Some("error") => {
            return Err(format!("{status} run_end without error before it"))
        }
        _ => {}
    }
    if status == "incomplete" && !live {
        let error = &events[kinds.iter().rposition(|k| *k == "error").unwrap_or(0)];
        if !INCOMPLETE_CODES.contains(&error["code"].as_str().unwrap_or("")) {
            return Err(format!("an incomplete run ends with error code {INCOMPLETE_CODES:?}"));
        }
    }
    if kinds.contains(&"run_start") && kinds[0] != "run_start" {
        return Err("run_start is not the first line".into());
    }
    if !kinds.contains(&"run_start") && kinds != ["error", "run_end"] {
        return Err(format!("a run without run_start must be exactly error + run_end: {kinds:?}"));
    }
    let run_id = &events[0]["runId"];
    if events.iter().any(|e| &e["runId"] != run_id) {
        return Err("runId changes between lines".into());
    }
    crate::schema::check_call_order(events)?;
    check_permissions(events, &kinds)
}

/// Live mode: turns numbered from 1, each ended by `turn_end` right after its `final` (success)
/// or its `error` (with the matching code); the process ends with the last turn's status, or
/// right after an `error` that ended it (a line that is not JSON, an interrupt).
fn check_turns(events: &[Value], kinds: &[&str]) -> Result<(), String> {
    let previous = |i: usize| (0..i).rev().find(|&j| kinds[j] != "heartbeat");
    let mut turn = 0;
    for (i, e) in events.iter().enumerate().filter(|(_, e)| e["type"] == "turn_end") {
        turn += 1;
        if e["turn"] != turn {
            return Err(format!("turn_end {} where turn {turn} was due", e["turn"]));
        }
        let before = previous(i).map(|j| &events[j]);
        let ok = match (e["status"].as_str(), before) {
            (Some("success"), Some(b)) => b["type"] == "final",
            (Some("incomplete"), Some(b)) => {
                b["type"] == "error" && INCOMPLETE_CODES.contains(&b["code"].as_str().unwrap_or(""))
            }
            (Some("interrupted"), Some(b)) => b["type"] == "error" && b["code"] == "interrupted",
            (Some("error"), Some(b)) => b["type"] == "error",
            _ => false,
        };
        if !ok {
            return Err(format!(
                "turn_end {turn} ({}) does not follow its final or error",
                e["status"]
            ));
        }
    }
    let n = events.len();
    let end = &events[n - 1];
    let before = previous(n - 1).map(|j| &events[j]);
    match before {
        Some(b)
            if b["type"] == "turn_end"
                && end["status"] != "error"
                && end["status"] != b["status"] =>
        {
            return Err("run_end must carry the last turn's status".into())
        }
        Some(b)
            if b["type"] == "run_start" && (end["status"] != "success" || end["exitCode"] != 0) =>
        {
            return Err("a live process without turns ends with success and 0".into())
        }
        _ => {}
    }
    Ok(())
}

/// A gated call is `tool_call`, `permission_request`, `permission_decision`, `tool_result` (no
/// request when a session grant decides); only heartbeats and errors about input lines may
/// come between the permission events and the result.
fn check_permissions(events: &[Value], kinds: &[&str]) -> Result<(), String> {
    let next = |from: usize| {
        (from + 1..events.len()).find(|&j| !matches!(kinds[j], "heartbeat" | "error"))
    };
    for (i, e) in events.iter().enumerate() {
        let id = &e["id"];
        match kinds[i] {
            "permission_request" => {
                if !events[..i].iter().any(|c| c["type"] == "tool_call" && &c["id"] == id) {
                    return Err(format!("permission_request for {id} before its tool_call"));
                }
                match next(i) {
                    Some(j) if kinds[j] == "permission_decision" && &events[j]["id"] == id => {}
                    _ => {
                        return Err(format!(
                            "permission_request for {id} not followed by its decision"
                        ))
                    }
                }
            }
            "permission_decision" => {
                let asked = i > 0
                    && events[..i]
                        .iter()
                        .rev()
                        .find(|c| !matches!(c["type"].as_str(), Some("heartbeat" | "error")))
                        .is_some_and(|c| c["type"] == "permission_request" && &c["id"] == id);
                // No one is asked when a session grant decides, or when the policy allows.
                let unasked = e["decidedBy"] == "session"
                    || (e["decidedBy"] == "policy" && e["action"] == "allow");
                if asked == unasked {
                    return Err(format!("decision for {id}: a request comes before it unless a session grant decides or the policy allows"));
                }
                if (e["action"] == "cancel") != (e["decidedBy"] == "interrupt") {
                    return Err(format!(
                        "decision for {id}: an interrupt, and only an interrupt, cancels"
                    ));
                }
                let risk = match e["sideEffect"].as_str() {
                    Some("read" | "none") => "low",
                    Some("write" | "network") => "medium",
                    _ => "high",
                };
                if e["risk"]["level"] != risk {
                    return Err(format!(
                        "decision for {id}: risk {} for side effect {}",
                        e["risk"], e["sideEffect"]
                    ));
                }
                match next(i) {
                    Some(j) if kinds[j] == "tool_result" && &events[j]["id"] == id => {}
                    // The process ended (a second interrupt) while the allowed call ran.
                    Some(j) if kinds[j] == "run_end" && e["action"] == "allow" => continue,
                    _ => {
                        return Err(format!(
                            "permission_decision for {id} not followed by its tool_result"
                        ))
                    }
                }
                let expected = match e["action"].as_str() {
                    Some("deny") => Value::from("denied"),
                    Some("cancel") => Value::from("cancelled"),
                    _ => Value::Null,
                };
                if events[next(i).unwrap_or(i)]["meta"]["permission"] != expected {
                    return Err(format!("the result of {id} must say meta.permission denied (or cancelled) exactly when it was not allowed"));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[test]
fn the_schema_2_check_rejects_drift() {
    let run = r#""schemaVersion":2,"runId":"run_20261201000000_abc123""#;
    let ok = format!(r#"{{{run},"seq":1,"type":"text","delta":"x"}}"#);
    assert_eq!(check_line(&ok), Ok(()));
    for bad in [
        format!(r#"{{{run},"seq":1,"type":"text","delta":"x","extra":1}}"#),
        format!(r#"{{{run},"type":"text","delta":"x"}}"#),
        format!(r#"{{{run},"seq":0,"type":"text","delta":"x"}}"#),
        format!(r#"{{{run},"seq":1,"type":"thinking","delta":"x"}}"#),
        format!(r#"{{{run},"seq":1,"type":"warning","message":"m"}}"#),
        format!(
            r#"{{{run},"seq":1,"type":"run_end","status":"done","exitCode":0,"eventCount":1}}"#
        ),
        format!(r#"{{{run},"seq":1,"type":"run_end","status":"success","exitCode":0}}"#),
        format!(
            r#"{{{run},"seq":1,"type":"usage","promptTokens":1,"completionTokens":1,"totalTokens":2,"call":1,"cumulative":{{"promptTokens":1,"completionTokens":1,"totalTokens":2,"x":1}}}}"#
        ),
        format!(
            r#"{{{run},"seq":1,"type":"error","code":"max_turns","message":"m","recoverable":false}}"#
        ),
    ] {
        assert!(check_line(&bad).is_err(), "accepted {bad}");
    }
    let line = |seq: u64, rest: &str| -> Value {
        serde_json::from_str(&format!(r#"{{{run},"seq":{seq},{rest}}}"#)).unwrap()
    };
    let end = |seq: u64, count: u64| {
        line(
            seq,
            &format!(r#""type":"run_end","status":"success","exitCode":0,"eventCount":{count}"#),
        )
    };
    let fin = |seq| line(seq, r#""type":"final","text":"a""#);
    assert_eq!(
        check_sequence(&[fin(1), end(2, 2)], false).map_err(|e| e.contains("run_start")),
        Err(true)
    );
    let start = line(
        1,
        r#""type":"run_start","cwd":"/","provider":"p","model":"m","apiModel":"m","permissionMode":"auto","autonomy":"low","heartbeatMs":0"#,
    );
    assert_eq!(check_sequence(&[start.clone(), fin(2), end(3, 3)], false), Ok(()));
    assert!(check_sequence(&[start.clone(), fin(3), end(4, 3)], false).is_err(), "a gap in seq");
    assert!(
        check_sequence(&[start.clone(), fin(2), end(3, 2)], false).is_err(),
        "a wrong eventCount"
    );
    let call = line(2, r#""type":"tool_call","id":"c","name":"bash","sideEffect":"shell""#);
    let result = line(
        4,
        r#""type":"tool_result","id":"c","name":"bash","status":"ok","output":"","truncated":false,"durationMs":1"#,
    );
    let decision = line(
        3,
        r#""type":"permission_decision","id":"c","name":"bash","action":"deny","permission":"prompt","permissionGranted":false,"permissionMode":"auto","autonomy":"low","sideEffect":"shell","decisionReason":"no","decidedBy":"policy""#,
    );
    assert!(
        check_sequence(&[start.clone(), call, decision, result, fin(5), end(6, 6)], false).is_err(),
        "a decision without its request"
    );
}

#[test]
fn the_printed_schema_keeps_tool_result_meta_open_to_string_members() {
    // A client that validates against `zero schema 2` keeps working when zero adds a member
    // to meta, as the protocol promises: an object of strings.
    let schema = crate::util::printed_schema(2);
    let result = |meta: Value| {
        json!({"schemaVersion": 2, "type": "tool_result", "runId": "run_20261201000000_abcdef", "seq": 3,
               "id": "c1", "name": "bash", "status": "error", "output": "no", "truncated": false,
               "durationMs": 0, "meta": meta})
    };
    let valid = |event: &Value| {
        crate::jsonschema::validate(schema, &schema["$defs"]["output"], event).is_ok()
    };
    assert!(valid(&result(json!({"permission": "denied"}))));
    assert!(valid(&result(json!({"permission": "denied", "addedLater": "x"}))));
    assert!(valid(&result(json!({"mcp": {"server": "s", "tool": "t"}, "hook": "named"}))));
    // Its own members keep their shapes, and an added member is a string.
    assert!(!valid(&result(json!({"permission": "maybe"}))));
    assert!(!valid(&result(json!({"addedLater": 1}))));
}
