//! zero's events as ACP `session/update`s: what an editor shows while a turn runs. Text and
//! reasoning are message and thought chunks; a tool call is a `tool_call` (pending), moved to
//! `in_progress` when it starts to run ([`started`]) and to `completed` or `failed` by its
//! result; each model call's usage is a `usage_update`. The rest of zero's events (the run's
//! start and end, permission events, the answer) are said otherwise in ACP: by the prompt's
//! response and `session/request_permission`.

use std::path::Path;

use serde_json::{json, Value};

use super::tool_calls;
use crate::error::Failure;
use crate::output::Output;
use crate::protocol::events::{Event, SideEffect, Status};
use crate::session::{self, Kind, Store};

/// The `update` members an event gives (none for most).
pub fn updates(event: &Event<'_>, cwd: &Path, window: u64) -> Option<Value> {
    match event {
        Event::Text { delta } => Some(chunk("agent_message_chunk", delta)),
        Event::Reasoning { delta } => Some(chunk("agent_thought_chunk", delta)),
        Event::ToolCall { id, name, args, side_effect, .. } => {
            let input = args.cloned().unwrap_or_else(|| json!({}));
            Some(json!({
                "sessionUpdate": "tool_call",
                "toolCallId": id,
                "title": tool_calls::title(name, &input),
                "kind": tool_calls::kind(name, *side_effect),
                "status": "pending",
                "locations": tool_calls::locations(name, &input, cwd),
                "rawInput": input,
            }))
        }
        Event::ToolResult { id, status, output, truncated, exit_code, .. } => {
            let mut raw = json!({"output": output, "truncated": truncated});
            if let Some(code) = exit_code {
                raw["exitCode"] = json!(code);
            }
            Some(json!({
                "sessionUpdate": "tool_call_update",
                "toolCallId": id,
                "status": if *status == Status::Ok { "completed" } else { "failed" },
                "content": [{"type": "content", "content": {"type": "text", "text": output}}],
                "rawOutput": raw,
            }))
        }
        Event::Usage { prompt_tokens, completion_tokens, cumulative, .. } => {
            // What the context holds after this call: its prompt and its answer.
            let mut update = json!({
                "sessionUpdate": "usage_update",
                "used": prompt_tokens + completion_tokens,
                "size": window,
            });
            if let Some(cost) = cumulative.as_ref().and_then(|c| c.cost_usd) {
                update["cost"] = json!({"amount": cost, "currency": "USD"});
            }
            Some(update)
        }
        _ => None,
    }
}

/// The `plan` update of an accepted `update_plan` call's arguments. A step zero calls failed
/// is shown as completed (ACP has no such status), its content saying so.
pub fn plan(args: &Value) -> Option<Value> {
    let entries: Vec<Value> = args
        .get("plan")?
        .as_array()?
        .iter()
        .map(|step| {
            let content = step["content"].as_str().unwrap_or_default();
            let (status, content) = match step["status"].as_str() {
                Some("failed") => ("completed", format!("{content} (failed)")),
                Some(status @ ("pending" | "in_progress" | "completed")) => {
                    (status, content.to_string())
                }
                _ => ("pending", content.to_string()),
            };
            json!({"content": content, "priority": "medium", "status": status})
        })
        .collect();
    Some(json!({"sessionUpdate": "plan", "entries": entries}))
}

/// A changed file as tool call content: its path, the text before (none: created) and after.
pub fn diff(path: &str, old: Option<&str>, new: &str) -> Value {
    json!({"type": "diff", "path": path, "oldText": old, "newText": new})
}

/// A `tool_call_update` with `diffs` before its other content.
pub fn with_diffs(mut update: Value, mut diffs: Vec<Value>) -> Value {
    if let Some(content) = update.get_mut("content").and_then(Value::as_array_mut) {
        diffs.append(content);
        *content = diffs;
    }
    update
}

/// A tool call that starts to run.
pub fn started(tool_call_id: &str) -> Value {
    json!({"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, "status": "in_progress"})
}

fn chunk(kind: &str, text: &str) -> Value {
    json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
}

/// The `session/update` notification of session `session_id`.
pub fn notification(session_id: &str, update: Value) -> Value {
    crate::rpc::notification("session/update", json!({"sessionId": session_id, "update": update}))
}

/// `session/load`: the stored conversation as the updates it gave: the user's prompts, the
/// agent's text, and each tool call with its final status and output. What zero added itself
/// (the reminders of `--output-schema`, notices of failed servers) is left out.
pub fn replay(store: &Store, id: &str, cwd: &Path, out: &Output) -> Result<(), Failure> {
    let mut reader = store.reader(id)?;
    while let Some(event) = reader.next_event()? {
        for update in stored(&event, cwd) {
            out.acp_message(&notification(id, update))
                .map_err(|_| Failure::Crash("stdout is closed".to_string()))?;
        }
    }
    Ok(())
}

/// The updates one stored event gives.
fn stored(event: &session::Event, cwd: &Path) -> Vec<Value> {
    let Some(p) = &event.payload else { return Vec::new() };
    let text = |key: &str| p.get(key).and_then(Value::as_str).unwrap_or_default();
    match event.kind {
        Kind::Message => match (text("role"), text("source")) {
            (_, "reminder" | "notice") => Vec::new(),
            ("user", _) => vec![chunk("user_message_chunk", text("content"))],
            ("assistant", _) => {
                let mut said: Vec<Value> =
                    thoughts(p).iter().map(|t| chunk("agent_thought_chunk", t)).collect();
                if !text("content").is_empty() {
                    said.push(chunk("agent_message_chunk", text("content")));
                }
                said
            }
            _ => Vec::new(),
        },
        Kind::ToolCall => {
            let name = text("name");
            let input = p.get("args").cloned().unwrap_or_else(|| json!({}));
            let side_effect = match text("sideEffect") {
                "read" => SideEffect::Read,
                "write" => SideEffect::Write,
                "shell" => SideEffect::Shell,
                "none" => SideEffect::None,
                _ => SideEffect::Unknown,
            };
            vec![json!({
                "sessionUpdate": "tool_call",
                "toolCallId": crate::output::wire_id(text("id")),
                "title": tool_calls::title(name, &input),
                "kind": tool_calls::kind(name, side_effect),
                "status": "pending",
                "locations": tool_calls::locations(name, &input, cwd),
                "rawInput": input,
            })]
        }
        Kind::ToolResult => {
            let output = text("output");
            let truncated = p.get("truncated").and_then(Value::as_bool).unwrap_or(false);
            vec![json!({
                "sessionUpdate": "tool_call_update",
                "toolCallId": crate::output::wire_id(text("id")),
                "status": if text("status") == "ok" { "completed" } else { "failed" },
                "content": [{"type": "content", "content": {"type": "text", "text": output}}],
                "rawOutput": {"output": output, "truncated": truncated},
            })]
        }
        _ => Vec::new(),
    }
}

/// The reasoning an assistant message kept in its provider-native content: Anthropic's
/// thinking blocks, the summaries of Responses reasoning items, Gemini's thought parts.
fn thoughts(payload: &Value) -> Vec<String> {
    let Some(native) = payload.get("native").and_then(Value::as_array) else { return Vec::new() };
    let mut found = Vec::new();
    for item in native {
        match item.get("type").and_then(Value::as_str) {
            Some("thinking") => found.extend(item["thinking"].as_str().map(str::to_string)),
            Some("reasoning") => found.extend(
                item["summary"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s["text"].as_str())
                    .map(str::to_string),
            ),
            _ if item.get("thought") == Some(&Value::Bool(true)) => {
                found.extend(item["text"].as_str().map(str::to_string))
            }
            _ => {}
        }
    }
    found.retain(|t| !t.trim().is_empty());
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::events::Totals;

    #[test]
    fn a_stored_answer_replays_its_kept_reasoning_as_thoughts_first() {
        let event = session::Event {
            id: "s:1".into(),
            session_id: "s".into(),
            sequence: 1,
            kind: Kind::Message,
            created_at: String::new(),
            payload: Some(json!({"role": "assistant", "content": "Done.", "native": [
                {"type": "thinking", "thinking": "Check the file.", "signature": "x"},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Then edit."}]},
                {"thought": true, "text": "Gemini thinks."},
                {"type": "redacted_thinking", "data": "..."}
            ]})),
        };
        let texts: Vec<String> = stored(&event, Path::new("/"))
            .iter()
            .map(|u| {
                format!(
                    "{} {}",
                    u["sessionUpdate"].as_str().unwrap(),
                    u["content"]["text"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            texts,
            [
                "agent_thought_chunk Check the file.",
                "agent_thought_chunk Then edit.",
                "agent_thought_chunk Gemini thinks.",
                "agent_message_chunk Done."
            ]
        );
    }

    #[test]
    fn chunks_tool_calls_results_and_usage_become_updates() {
        let cwd = Path::new("/repo");
        assert_eq!(
            updates(&Event::Text { delta: "Hi" }, cwd, 1000),
            Some(
                json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}})
            )
        );
        let args = json!({"path": "src/main.rs"});
        let call = Event::ToolCall {
            id: "c1",
            name: "read_file",
            args: Some(&args),
            side_effect: SideEffect::Read,
            arguments: "",
            raw_id: "c1",
        };
        assert_eq!(
            updates(&call, cwd, 1000),
            Some(json!({
                "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read src/main.rs",
                "kind": "read", "status": "pending",
                "locations": [{"path": "/repo/src/main.rs"}], "rawInput": {"path": "src/main.rs"}
            }))
        );
        let result = Event::ToolResult {
            id: "c1",
            name: Some("bash"),
            status: Status::Error,
            output: "boom",
            truncated: false,
            redacted: None,
            changed_files: None,
            meta: None,
            exit_code: Some(2),
            duration_ms: None,
            raw_id: "c1",
            command_exit: Some(2),
        };
        let update = updates(&result, cwd, 1000).unwrap();
        assert_eq!(update["status"], "failed");
        assert_eq!(update["content"][0]["content"]["text"], "boom");
        assert_eq!(
            update["rawOutput"],
            json!({"output": "boom", "truncated": false, "exitCode": 2})
        );
        let totals = Totals { cost_usd: Some(0.25), ..Totals::default() };
        let usage = Event::Usage {
            prompt_tokens: 900,
            completion_tokens: 100,
            total_tokens: 1000,
            cost_usd: Some(0.1),
            cache_read_tokens: None,
            cache_write_tokens: None,
            call: Some(2),
            cumulative: Some(totals),
        };
        assert_eq!(
            updates(&usage, cwd, 128_000),
            Some(
                json!({"sessionUpdate": "usage_update", "used": 1000, "size": 128000, "cost": {"amount": 0.25, "currency": "USD"}})
            )
        );
        assert_eq!(updates(&Event::Final { text: "x", structured: None }, cwd, 1), None);
    }
}
