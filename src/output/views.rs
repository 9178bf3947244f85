//! The views of an [`Event`]: its stream-json line (the event inside the protocol's envelope),
//! its legacy `json` line, and its text-mode stderr row.

use crate::events::{Event, Legacy, RunStatus};
use crate::text::{cut_chars, one_line};

/// `[result]` rows in text mode are cut at this many characters.
const RESULT_ROW_CHARS: usize = 200;
/// A tool name in a text-mode `[tool]` row is cut at this many characters.
const TOOL_NAME_ROW_CHARS: usize = 100;

/// `{"schemaVersion":1,"type":...,"runId":...,<the event's fields>}` and a newline, into
/// `line`; `event_json` is scratch space for the event serialised on its own.
pub(super) fn stream_json(
    line: &mut Vec<u8>,
    event_json: &mut Vec<u8>,
    run_id: &str,
    event: &Event<'_>,
) {
    event_json.clear();
    // Writing to a Vec cannot fail, and the event's fields always serialise.
    let _ = serde_json::to_writer(&mut *event_json, event);
    // The tag comes first: `{"type":"<kind>"`, and a kind is a plain word.
    const TAG: usize = b"{\"type\":\"".len();
    let kind_end = event_json[TAG..].iter().position(|&b| b == b'"').map_or(TAG, |n| TAG + n + 1);
    line.clear();
    line.extend_from_slice(b"{\"schemaVersion\":1,");
    line.extend_from_slice(&event_json[1..kind_end]);
    line.extend_from_slice(b",\"runId\":");
    let _ = serde_json::to_writer(&mut *line, run_id);
    line.extend_from_slice(&event_json[kind_end..]);
    line.push(b'\n');
}

/// A legacy line and a newline, into `line`.
pub(super) fn legacy_line(line: &mut Vec<u8>, legacy: &Legacy<'_>) {
    line.clear();
    let _ = serde_json::to_writer(&mut *line, legacy);
    line.push(b'\n');
}

/// The legacy `json` line of an event (B 1.5), if it has one: a failed run ends with its
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
                autonomy: &details.autonomy,
                permission_mode: &details.permission_mode,
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
        Event::RunEnd { status: RunStatus::Error, .. } => return None,
    })
}

/// The text-mode stderr row of an event, if it has one (answer text goes to stdout).
pub(super) fn text_row(event: &Event<'_>) -> Option<String> {
    Some(match event {
        Event::Warning { message, .. } => format!("[zero] WARNING: {message}"),
        Event::ToolCall { name, .. } => format!("[tool] {}", cut_chars(name, TOOL_NAME_ROW_CHARS)),
        Event::ToolResult { output, .. } => {
            format!("[result] {}", cut_chars(&one_line(output), RESULT_ROW_CHARS))
        }
        Event::Error { message, .. } => format!("[zero] {message}"),
        Event::RunStart { .. }
        | Event::Text { .. }
        | Event::Usage { .. }
        | Event::Final { .. }
        | Event::RunEnd { .. } => return None,
    })
}
