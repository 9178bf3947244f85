//! The views of an [`Event`]: its stream-json line (the event inside the protocol's envelope),
//! its legacy `json` line, and its text-mode stderr row.

use std::io::Write;

use serde_json::Value;

use crate::protocol::events::{Event, Legacy, RunStatus, Status};
use crate::text::{cut_chars, one_line};

/// `[result]` rows in text mode are cut at this many characters.
const RESULT_ROW_CHARS: usize = 200;
/// A tool name in a text-mode `[tool]` row is cut at this many characters.
const TOOL_NAME_ROW_CHARS: usize = 100;
/// What a `[tool]` row says about the call is cut at this many characters.
const CALL_SUMMARY_CHARS: usize = 120;

/// `{"schemaVersion":1,"type":...,"runId":...,<the event's fields>}` and a newline, into
/// `line`; with a `seq`, schema 2's `{"schemaVersion":2,"type":...,"runId":...,"seq":N,...}`.
/// `event_json` is scratch space for the event serialised on its own.
pub(super) fn stream_json(
    line: &mut Vec<u8>,
    event_json: &mut Vec<u8>,
    run_id: &str,
    seq: Option<u64>,
    event: &Event<'_>,
) {
    event_json.clear();
    // Writing to a Vec cannot fail, and the event's fields always serialise.
    let _ = serde_json::to_writer(&mut *event_json, event);
    // The tag comes first: `{"type":"<kind>"`, and a kind is a plain word.
    const TAG: usize = b"{\"type\":\"".len();
    let kind_end = event_json[TAG..].iter().position(|&b| b == b'"').map_or(TAG, |n| TAG + n + 1);
    line.clear();
    line.extend_from_slice(if seq.is_some() {
        b"{\"schemaVersion\":2,"
    } else {
        b"{\"schemaVersion\":1,"
    });
    line.extend_from_slice(&event_json[1..kind_end]);
    line.extend_from_slice(b",\"runId\":");
    let _ = serde_json::to_writer(&mut *line, run_id);
    if let Some(seq) = seq {
        line.extend_from_slice(b",\"seq\":");
        // Writing to a Vec cannot fail.
        let _ = write!(line, "{seq}");
    }
    line.extend_from_slice(&event_json[kind_end..]);
    line.push(b'\n');
}

/// A legacy line and a newline, into `line`.
pub(super) fn legacy_line(line: &mut Vec<u8>, legacy: &Legacy<'_>) {
    line.clear();
    let _ = serde_json::to_writer(&mut *line, legacy);
    line.push(b'\n');
}

/// The legacy `json` line of an event, if it has one: a failed run ends with its
/// `error` line, a successful one with `done`.
pub(super) fn legacy<'a>(event: &'a Event<'a>) -> Option<Legacy<'a>> {
    Some(match *event {
        Event::RunStart { session_id, cwd, provider, model, api_model, details, .. } => {
            Legacy::RunStart {
                cwd,
                provider,
                model,
                model_profile: details.model_profile.as_deref(),
                model_label: &details.model_label,
                api_model,
                autonomy: details.autonomy,
                permission_mode: details.permission_mode,
                reasoning_effort: details.reasoning_effort.as_deref(),
                enabled_tools: &details.enabled_tools,
                disabled_tools: &details.disabled_tools,
                output_format: "json",
                session_id,
            }
        }
        Event::Warning { message, .. } => Legacy::Warning { message },
        Event::Text { delta, .. } => Legacy::Text { delta },
        Event::ToolCall { raw_id, name, arguments, .. } => {
            Legacy::ToolCall { id: raw_id, name, arguments }
        }
        Event::ToolResult { raw_id, status, output, truncated, .. } => {
            Legacy::ToolResult { tool_call_id: raw_id, status, result: output, truncated }
        }
        Event::Usage { prompt_tokens, completion_tokens, total_tokens, cost_usd, .. } => {
            Legacy::Usage { prompt_tokens, completion_tokens, total_tokens, cost_usd }
        }
        Event::Final { text, .. } => Legacy::Final { text },
        Event::Error { code, message, .. } => Legacy::Error { code, message },
        Event::RunEnd { status: RunStatus::Success, exit_code, .. } => Legacy::Done { exit_code },
        // Only schema-2 stream-json has these.
        Event::RunEnd { .. }
        | Event::Reasoning { .. }
        | Event::PermissionRequest { .. }
        | Event::PermissionDecision { .. }
        | Event::TurnEnd { .. }
        | Event::McpServer { .. }
        | Event::Heartbeat { .. } => return None,
    })
}

/// The text-mode stderr row of an event, if it has one (the answer goes to stdout, narration
/// is written by the emitter).
pub(super) fn text_row(event: &Event<'_>) -> Option<String> {
    Some(match event {
        Event::RunStart { session_id: Some(id), .. } => format!("[zero] session {id}"),
        Event::Warning { message, .. } => format!("[zero] WARNING: {message}"),
        Event::ToolCall { name, args, .. } => {
            let name = cut_chars(name, TOOL_NAME_ROW_CHARS);
            match args.and_then(|args| call_summary(&name, args)) {
                Some(summary) => format!("[tool] {name}: {summary}"),
                None => format!("[tool] {name}"),
            }
        }
        Event::ToolResult { status: Status::Ok, .. } => "[result] ok".to_string(),
        Event::ToolResult { output, command_exit, .. } => {
            let summary = error_summary(output, command_exit.is_some());
            match command_exit {
                Some(code) => format!("[result] error (exit {code}): {summary}"),
                None => format!("[result] error: {summary}"),
            }
        }
        Event::Error { message, .. } => format!("[zero] {message}"),
        Event::RunStart { .. }
        | Event::McpServer { .. }
        | Event::Text { .. }
        | Event::Usage { .. }
        | Event::Final { .. }
        | Event::Reasoning { .. }
        | Event::PermissionRequest { .. }
        | Event::PermissionDecision { .. }
        | Event::Heartbeat { .. }
        | Event::TurnEnd { .. }
        | Event::RunEnd { .. } => return None,
    })
}

/// What a tool call is about, in one line: the command, the path, the pattern.
pub fn call_summary(name: &str, args: &Value) -> Option<String> {
    let field = |key: &str| args.get(key).and_then(Value::as_str);
    let text = match name {
        "apply_patch" => {
            let patch = field("patch")?;
            let files: Vec<&str> = patch
                .lines()
                .filter_map(|l| l.strip_prefix("+++ ").or_else(|| l.strip_prefix("--- ")))
                .map(|p| p.split('\t').next().unwrap_or(p).trim())
                .filter(|p| *p != "/dev/null")
                .map(|p| p.strip_prefix("a/").or_else(|| p.strip_prefix("b/")).unwrap_or(p))
                .collect();
            let mut unique: Vec<&str> = Vec::new();
            for file in files {
                if !unique.contains(&file) {
                    unique.push(file);
                }
            }
            unique.join(", ")
        }
        "update_plan" => format!("{} steps", args.get("plan")?.as_array()?.len()),
        "grep" => match (field("pattern")?, field("path")) {
            (pattern, Some(path)) => format!("{pattern} in {path}"),
            (pattern, None) => pattern.to_string(),
        },
        _ => ["command", "path", "pattern"].iter().find_map(|k| field(k))?.to_string(),
    };
    (!text.trim().is_empty()).then(|| cut_chars(&one_line(&text), CALL_SUMMARY_CHARS))
}

/// The line of a failed tool's output that says why: for a command, the last line it wrote
/// (the framing lines of the bash tool left out); otherwise the first line.
fn error_summary(output: &str, command: bool) -> String {
    let framing = |l: &&str| {
        matches!(*l, "stdout:" | "stderr:" | "Command completed with no output.")
            || l.starts_with("Exit code: ")
            || l.starts_with("Killed by signal ")
            || l.starts_with("[stdout truncated")
            || l.starts_with("[stderr truncated")
    };
    let mut lines = output.lines().map(str::trim).filter(|l| !l.is_empty()).filter(|l| !framing(l));
    let line = if command { lines.next_back() } else { lines.next() };
    cut_chars(&one_line(line.unwrap_or_default()), RESULT_ROW_CHARS)
}
