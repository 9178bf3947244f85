//! The stream-json output schemas as strict test-side types, written from the protocol as the
//! README describes it and not from zero's code: any
//! unknown field, missing field or wrong type fails, and so does any break of the ordering
//! rules.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
#[allow(dead_code)]
enum Event {
    RunStart {
        schema_version: u8,
        run_id: String,
        session_id: Option<String>,
        cwd: String,
        provider: String,
        model: String,
        api_model: Option<String>,
    },
    Text {
        schema_version: u8,
        run_id: String,
        delta: String,
    },
    ToolCall {
        schema_version: u8,
        run_id: String,
        id: String,
        name: String,
        args: Option<Value>,
        side_effect: Option<SideEffect>,
    },
    ToolResult {
        schema_version: u8,
        run_id: String,
        id: String,
        status: Status,
        output: String,
        truncated: bool,
    },
    Usage {
        schema_version: u8,
        run_id: String,
        prompt_tokens: Option<f64>,
        completion_tokens: Option<f64>,
        total_tokens: Option<f64>,
        cost_usd: Option<f64>,
    },
    Final {
        schema_version: u8,
        run_id: String,
        text: String,
    },
    Warning {
        schema_version: u8,
        run_id: String,
        message: String,
    },
    Error {
        schema_version: u8,
        run_id: String,
        code: String,
        message: String,
        recoverable: bool,
    },
    RunEnd {
        schema_version: u8,
        run_id: String,
        status: EndStatus,
        exit_code: u32,
    },
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SideEffect {
    Read,
    Write,
    Shell,
    Network,
    Unknown,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Status {
    Ok,
    Error,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum EndStatus {
    Success,
    Error,
}

/// The id rule: 1-128 characters of `[A-Za-z0-9._:-]`, starting alphanumeric.
pub fn valid_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'))
}

/// `run_<YYYYMMDDHHMMSS>_<up to 6 base36>`.
pub fn valid_run_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('_').collect();
    parts.len() == 3
        && parts[0] == "run"
        && parts[1].len() == 14
        && parts[1].bytes().all(|b| b.is_ascii_digit())
        && (1..=6).contains(&parts[2].len())
        && parts[2].bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
}

/// Checks one line against the schema of its version.
pub fn check_line(line: &str) -> Result<(), String> {
    let value: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    match value["schemaVersion"].as_u64() {
        Some(2) => crate::schema2::check_line(line),
        _ => check_line_1(line),
    }
}

/// Checks one line against schema 1.
fn check_line_1(line: &str) -> Result<(), String> {
    let event: Event = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let (version, run_id) = match &event {
        Event::RunStart { schema_version, run_id, .. }
        | Event::Text { schema_version, run_id, .. }
        | Event::ToolCall { schema_version, run_id, .. }
        | Event::ToolResult { schema_version, run_id, .. }
        | Event::Usage { schema_version, run_id, .. }
        | Event::Final { schema_version, run_id, .. }
        | Event::Warning { schema_version, run_id, .. }
        | Event::Error { schema_version, run_id, .. }
        | Event::RunEnd { schema_version, run_id, .. } => (*schema_version, run_id),
    };
    if version != 1 {
        return Err(format!("schemaVersion {version}"));
    }
    if !valid_run_id(run_id) {
        return Err(format!("bad runId {run_id}"));
    }
    let non_empty =
        |what: &str, s: &str| if s.is_empty() { Err(format!("empty {what}")) } else { Ok(()) };
    match &event {
        Event::RunStart { session_id, cwd, provider, model, api_model, .. } => {
            if let Some(id) = session_id {
                if !valid_id(id) {
                    return Err(format!("bad sessionId {id}"));
                }
            }
            non_empty("cwd", cwd)?;
            non_empty("provider", provider)?;
            non_empty("model", model)?;
            if let Some(m) = api_model {
                non_empty("apiModel", m)?;
            }
        }
        Event::ToolCall { id, name, .. } => {
            if !valid_id(id) {
                return Err(format!("bad tool id {id}"));
            }
            non_empty("name", name)?;
        }
        Event::ToolResult { id, .. } if !valid_id(id) => return Err(format!("bad tool id {id}")),
        Event::Usage { prompt_tokens, completion_tokens, total_tokens, cost_usd, .. } => {
            for n in
                [prompt_tokens, completion_tokens, total_tokens, cost_usd].into_iter().flatten()
            {
                if !n.is_finite() || *n < 0.0 {
                    return Err(format!("negative or non-finite usage {n}"));
                }
            }
        }
        Event::Warning { message, .. } => non_empty("message", message)?,
        Event::Error { code, message, .. } => {
            non_empty("code", code)?;
            non_empty("message", message)?;
            if message.contains('\n') {
                return Err("error message is not one line".into());
            }
        }
        _ => {}
    }
    Ok(())
}

/// The ordering rules of a `--live` process (schema 2 only).
pub fn check_live_sequence(events: &[Value]) -> Result<(), String> {
    match events.first() {
        // `--schema-version 1 --live` is refused in schema 1.
        Some(first) if first["schemaVersion"] == 2 => crate::schema2::check_sequence(events, true),
        _ => check_sequence(events),
    }
}

/// The ordering rules: `run_start` first when present; one terminal `run_end`, last;
/// `error` right before a failing `run_end`, `final` right before a successful one; one run id.
pub fn check_sequence(events: &[Value]) -> Result<(), String> {
    if events.first().is_some_and(|e| e["schemaVersion"] == 2) {
        return crate::schema2::check_sequence(events, false);
    }
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap_or("")).collect();
    let Some(last) = events.last() else { return Err("no output".into()) };
    if kinds.last() != Some(&"run_end") {
        return Err(format!("last line is {:?}, not run_end", kinds.last()));
    }
    if kinds.iter().filter(|k| **k == "run_end").count() != 1 {
        return Err("more than one run_end".into());
    }
    let before = kinds.get(kinds.len().wrapping_sub(2)).copied();
    match last["status"].as_str() {
        Some("success") if before != Some("final") => {
            return Err("success without final before it".into())
        }
        Some("error") if before != Some("error") => {
            return Err("error run_end without error before it".into())
        }
        _ => {}
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
    check_call_order(events)
}

/// Within one model call, every text and reasoning delta comes before that call's tool calls,
/// its usage and the answer: once one of those is written, no delta follows until the call's
/// tools have reported (`tool_result`) or the turn has ended (`turn_end`), where the next call
/// may begin. Both schema versions.
pub fn check_call_order(events: &[Value]) -> Result<(), String> {
    let mut closed_by: Option<&str> = None;
    for (i, e) in events.iter().enumerate() {
        match e["type"].as_str().unwrap_or("") {
            "text" | "reasoning" => {
                if let Some(kind) = closed_by {
                    return Err(format!(
                        "line {}: a {} delta follows its call's {kind}",
                        i + 1,
                        e["type"]
                    ));
                }
            }
            kind @ ("tool_call" | "usage" | "final") => closed_by = Some(kind),
            "tool_result" | "turn_end" => closed_by = None,
            _ => {}
        }
    }
    Ok(())
}

#[test]
fn the_schema_check_rejects_drift() {
    let ok = r#"{"schemaVersion":1,"type":"text","runId":"run_20261201000000_abc123","delta":"x"}"#;
    assert_eq!(check_line(ok), Ok(()));
    for bad in [
        r#"{"schemaVersion":1,"type":"text","runId":"run_20261201000000_abc123","delta":"x","extra":1}"#,
        r#"{"schemaVersion":2,"type":"text","runId":"run_20261201000000_abc123","delta":"x"}"#,
        r#"{"schemaVersion":1,"type":"text","runId":"bad id","delta":"x"}"#,
        r#"{"schemaVersion":1,"type":"thinking","runId":"run_20261201000000_abc123","delta":"x"}"#,
        r#"{"schemaVersion":1,"type":"run_end","runId":"run_20261201000000_abc123","status":"done","exitCode":0}"#,
    ] {
        assert!(check_line(bad).is_err(), "accepted {bad}");
    }
}
