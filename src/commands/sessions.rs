//! `zero sessions list|show|delete|prune` over the session store (`zero sessions search` is
//! `zero search`).

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use super::{fail, leaves, note, print, redact_argument_text, store_exit, store_message};
use crate::cli::SessionsArgs;
use crate::clock::Utc;
use crate::config::Env;
use crate::error::Exit;
use crate::output::terminal_safe;
use crate::redact::Redactor;
use crate::session::{Kind, Metadata, Store};
use crate::text::{cut_chars, one_line};
use std::io::Write as _;

/// What a `show` row says about an event is cut at this many characters.
const ROW_SUMMARY_CHARS: usize = 160;
/// `--older-than` above this many days (about 270 years) is surely a typo.
const MAX_PRUNE_DAYS: u64 = 100_000;

/// `zero sessions list|show|delete|prune` (`sessions search` is `zero search`).
pub fn sessions(args: &SessionsArgs, env: &Env) -> Exit {
    let redactor = Redactor::new(env.secret_values());
    let store = match Store::locate(env) {
        Ok(store) => store,
        Err(err) => return fail(&redactor, store_message(&err), Exit::Internal),
    };
    match args {
        SessionsArgs::List { json, all } => list(&store, &redactor, *json, *all),
        SessionsArgs::Show { id, json } => show(&store, &redactor, id, *json),
        SessionsArgs::Delete { ids } => delete(&store, &redactor, ids),
        SessionsArgs::Prune { older_than, dry_run } => {
            prune(&store, &redactor, older_than, *dry_run)
        }
    }
}

/// This directory's sessions, or every one with `--all`.
fn list(store: &Store, redactor: &Redactor, json: bool, all: bool) -> Exit {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd.display().to_string(),
        Err(err) => {
            return fail(
                redactor,
                &format!("Cannot read the current directory: {err}"),
                Exit::Internal,
            )
        }
    };
    let listed = if all { store.list() } else { store.list_for(&cwd, redactor) };
    let list = match listed {
        Ok(list) => list,
        Err(err) => return fail(redactor, store_message(&err), store_exit(&err)),
    };
    if json {
        let value = redactor.redact_value(json!({"sessions": list}));
        return print(&format!("{value}\n"));
    }
    let mut text = String::new();
    if list.is_empty() {
        let everywhere = if all { 0 } else { store.list().map_or(0, |l| l.len()) };
        if everywhere > 0 {
            let _ = writeln!(
                text,
                "No sessions for {cwd} ({everywhere} elsewhere: zero sessions list --all)."
            );
        } else {
            let _ = writeln!(text, "No sessions yet ({}).", store.root().display());
        }
    }
    for m in &list {
        let title = terminal_safe(m.title.as_deref().unwrap_or(""), true).into_owned();
        let _ = write!(
            text,
            "{}  {}  {:>4} events  {title}",
            m.session_id, m.updated_at, m.event_count
        );
        if all {
            let _ = write!(text, "  ({})", m.cwd.as_deref().unwrap_or("-"));
        }
        text.push('\n');
    }
    print(&redactor.redact_str(&text))
}

/// One session: metadata, then one row per event (or one JSON document), written as the
/// events are read, so a session of any size shows in bounded memory.
fn show(store: &Store, redactor: &Redactor, id: &str, json: bool) -> Exit {
    let found = store.metadata(id).and_then(|meta| Ok((meta, store.reader(id)?)));
    let (meta, mut reader) = match found {
        Ok(found) => found,
        Err(err) => return fail(redactor, store_message(&err), store_exit(&err)),
    };
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, crate::sys::stdio::stdout());
    let written = if json {
        show_json(&meta, &mut reader, redactor, &mut out)
    } else {
        show_rows(&meta, &mut reader, redactor, &mut out)
    };
    let code = match written.and_then(|()| out.flush().map_err(|_| Shown::Output)) {
        Ok(()) => Exit::Success,
        Err(Shown::Output) => Exit::Internal,
        Err(Shown::Store(err)) => fail(redactor, store_message(&err), store_exit(&err)),
    };
    // What was skipped is said after the output, whose shape stays as it is.
    for warning in reader.warnings() {
        note(redactor, &format!("WARNING: {warning}"));
    }
    code
}

/// Why `show` stopped.
enum Shown {
    /// Standard output is gone.
    Output,
    Store(crate::session::SessionError),
}

/// The document `{"events": [...], "metadata": {...}}`, one event at a time (its keys in the
/// order a JSON value sorts them, as the whole document had them).
fn show_json(
    meta: &Metadata,
    reader: &mut crate::session::EventReader<Box<dyn std::io::BufRead>>,
    redactor: &Redactor,
    out: &mut impl std::io::Write,
) -> Result<(), Shown> {
    let write = |out: &mut dyn std::io::Write, bytes: &[u8]| {
        out.write_all(bytes).map_err(|_| Shown::Output)
    };
    write(out, b"{\"events\":[")?;
    let mut first = true;
    while let Some(mut event) = reader.next_event().map_err(Shown::Store)? {
        // Sessions written by an older zero may hold argument text with JSON escapes.
        redact_argument_text(&mut event, redactor);
        // Taken, not copied: the stored event is let go as its redacted form is made.
        let value = redactor.redact_value(serde_json::to_value(event).unwrap_or_default());
        if !first {
            write(out, b",")?;
        }
        first = false;
        serde_json::to_writer(&mut *out, &value).map_err(|_| Shown::Output)?;
    }
    write(out, b"],\"metadata\":")?;
    let meta = redactor.redact_value(serde_json::to_value(meta).unwrap_or_default());
    serde_json::to_writer(&mut *out, &meta).map_err(|_| Shown::Output)?;
    write(out, b"}\n")
}

/// The header, then one row per event.
fn show_rows(
    meta: &Metadata,
    reader: &mut crate::session::EventReader<Box<dyn std::io::BufRead>>,
    redactor: &Redactor,
    out: &mut impl std::io::Write,
) -> Result<(), Shown> {
    out.write_all(redactor.redact_str(&header(meta)).as_bytes()).map_err(|_| Shown::Output)?;
    while let Some(mut event) = reader.next_event().map_err(Shown::Store)? {
        redact_argument_text(&mut event, redactor);
        let summary = event.payload.as_ref().map(|p| summary(&event.kind, p)).unwrap_or_default();
        let summary = cut_chars(&one_line(&terminal_safe(&summary, true)), ROW_SUMMARY_CHARS);
        let row = format!(
            "{}  #{:<4} {:<15} {summary}\n",
            row_time(&event.created_at),
            event.sequence,
            terminal_safe(event.kind.name(), true),
        );
        out.write_all(redactor.redact_str(&row).as_bytes()).map_err(|_| Shown::Output)?;
    }
    Ok(())
}

fn header(meta: &Metadata) -> String {
    let field = |v: &Option<String>| terminal_safe(v.as_deref().unwrap_or("-"), true).into_owned();
    let mut text = format!(
        "Session {}\nTitle:   {}\nCwd:     {}\nModel:   {} ({})\nCreated: {}\nUpdated: {}\nEvents:  {}\n",
        meta.session_id,
        field(&meta.title),
        field(&meta.cwd),
        field(&meta.model_id),
        field(&meta.provider),
        meta.created_at,
        meta.updated_at,
        meta.event_count
    );
    if let Some(parent) = &meta.parent_session_id {
        let _ = writeln!(text, "Forked from: {parent}");
    }
    text.push('\n');
    text
}

/// `2026-12-01T10:00:03.123Z` as `2026-12-01 10:00:03`; anything else as stored.
fn row_time(created_at: &str) -> String {
    match created_at.get(..19) {
        Some(head) if created_at.as_bytes().get(10) == Some(&b'T') => head.replacen('T', " ", 1),
        _ => terminal_safe(created_at, true).into_owned(),
    }
}

/// What one event says, in a few words: who wrote a message and its start, the tool and what
/// it was called on, a result's status, token counts.
fn summary(kind: &Kind, payload: &Value) -> String {
    let text = |key: &str| payload.get(key).and_then(Value::as_str).unwrap_or_default();
    match kind {
        Kind::Message => {
            let mut line = format!("{}: {}", text("role"), text("content"));
            if let Some(calls) = payload.get("toolCalls").and_then(Value::as_array) {
                let names: Vec<&str> =
                    calls.iter().filter_map(|c| c.get("name").and_then(Value::as_str)).collect();
                let _ = write!(line, " [calls {}]", names.join(", "));
            }
            one_line(&line)
        }
        Kind::ToolCall => {
            let args = payload.get("args").cloned().unwrap_or(Value::Null);
            match crate::output::call_summary(text("name"), &args) {
                Some(what) => format!("{}: {what}", text("name")),
                None => text("name").to_string(),
            }
        }
        Kind::ToolResult => {
            let output = one_line(text("output"));
            format!("{} {}", text("status"), output).trim_end().to_string()
        }
        Kind::ProviderUsage => {
            let count = |key: &str| payload.get(key).and_then(Value::as_u64).unwrap_or(0);
            let mut line = format!(
                "{} tokens ({} in, {} out)",
                count("totalTokens"),
                count("promptTokens"),
                count("completionTokens")
            );
            if let Some(cost) = payload.get("costUsd").and_then(Value::as_f64) {
                let _ = write!(line, ", ${cost:.6}");
            }
            line
        }
        Kind::Error => format!("{}: {}", text("code"), text("message")),
        Kind::PermissionRequest => {
            format!("{} ({}) asked as {}", text("name"), text("sideEffect"), text("requestId"))
        }
        Kind::PermissionDecision => {
            let session = if payload.get("forSession") == Some(&Value::Bool(true)) {
                ", for the session"
            } else {
                ""
            };
            one_line(&format!(
                "{} {} by {}{session}: {}",
                text("name"),
                text("action"),
                text("decidedBy"),
                text("reason")
            ))
        }
        Kind::TurnEnd => format!(
            "turn {} {}",
            payload.get("turn").and_then(Value::as_u64).unwrap_or(0),
            text("status")
        ),
        Kind::SessionFork => format!(
            "forked from {} ({} events copied)",
            text("parentSessionId"),
            payload.get("copiedEventCount").and_then(Value::as_u64).unwrap_or(0)
        ),
        Kind::Other(_) => leaves(payload),
    }
}

/// `zero sessions delete ID...`: each id in turn; exit 2 if any could not be deleted.
fn delete(store: &Store, redactor: &Redactor, ids: &[String]) -> Exit {
    let mut code = Exit::Success;
    let mut text = String::new();
    for id in ids {
        match store.delete(id) {
            Ok(()) => {
                let _ = writeln!(text, "Deleted session {id}");
            }
            Err(err) => code = code.max(fail(redactor, store_message(&err), store_exit(&err))),
        }
    }
    match print(&redactor.redact_str(&text)) {
        Exit::Success => code,
        failed => failed,
    }
}

/// `zero sessions prune --older-than DAYS [--dry-run]`: every session (of any directory) not
/// updated for DAYS days. Sessions in use are skipped.
fn prune(store: &Store, redactor: &Redactor, older_than: &str, dry_run: bool) -> Exit {
    let days = match older_than.trim().parse::<u64>() {
        Ok(days) if days <= MAX_PRUNE_DAYS => days,
        _ => {
            return fail(
                redactor,
                &format!(
                    "Invalid --older-than value \"{}\": expected a whole number of days (0 to {MAX_PRUNE_DAYS})",
                    older_than.trim()
                ),
                Exit::Usage,
            )
        }
    };
    let cutoff = SystemTime::now()
        .checked_sub(Duration::from_secs(days * 86_400))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let cutoff = Utc::at(cutoff).iso();
    let list = match store.list() {
        Ok(list) => list,
        Err(err) => return fail(redactor, store_message(&err), store_exit(&err)),
    };
    let mut text = String::new();
    let (mut pruned, mut skipped, mut code) = (0, 0, Exit::Success);
    for meta in list.iter().filter(|m| m.updated_at < cutoff) {
        let id = &meta.session_id;
        if dry_run {
            let _ = writeln!(text, "Would delete {id}  {}", meta.updated_at);
            pruned += 1;
            continue;
        }
        match store.delete(id) {
            Ok(()) => {
                let _ = writeln!(text, "Deleted {id}  {}", meta.updated_at);
                pruned += 1;
            }
            Err(
                err @ (crate::session::SessionError::Usage(_)
                | crate::session::SessionError::Refused(_)),
            ) => {
                note(redactor, &format!("Skipped: {}", store_message(&err)));
                skipped += 1;
            }
            Err(err) => code = fail(redactor, store_message(&err), Exit::Internal),
        }
    }
    let verb = if dry_run { "would be deleted" } else { "deleted" };
    let _ = write!(text, "{pruned} session(s) not updated for {days} day(s) {verb}");
    if skipped > 0 {
        let _ = write!(text, ", {skipped} skipped");
    }
    text.push_str(".\n");
    match print(&redactor.redact_str(&text)) {
        Exit::Success => code,
        failed => failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_summarise_each_kind_of_event() {
        let s = |kind: &str, payload: Value| summary(&Kind::parse(kind), &payload);
        assert_eq!(s("message", json!({"role": "user", "content": "fix it"})), "user: fix it");
        assert_eq!(
            s(
                "message",
                json!({"role": "assistant", "content": "", "toolCalls": [{"name": "bash"}]})
            ),
            "assistant: [calls bash]"
        );
        assert_eq!(
            s("tool_call", json!({"name": "bash", "args": {"command": "cargo test"}})),
            "bash: cargo test"
        );
        assert_eq!(s("tool_result", json!({"status": "ok", "output": "a\nb"})), "ok a b");
        assert_eq!(
            s(
                "provider_usage",
                json!({"promptTokens": 10, "completionTokens": 2, "totalTokens": 12})
            ),
            "12 tokens (10 in, 2 out)"
        );
        assert_eq!(
            s("error", json!({"code": "provider_error", "message": "down"})),
            "provider_error: down"
        );
        assert_eq!(
            s(
                "permission_request",
                json!({"name": "bash", "sideEffect": "shell", "requestId": "perm_1"})
            ),
            "bash (shell) asked as perm_1"
        );
        assert_eq!(
            s(
                "permission_decision",
                json!({"name": "bash", "action": "allow", "decidedBy": "client", "reason": "ok", "forSession": true})
            ),
            "bash allow by client, for the session: ok"
        );
        assert_eq!(
            s("turn_end", json!({"turn": 2, "status": "interrupted"})),
            "turn 2 interrupted"
        );
        assert_eq!(s("other", json!({"a": ["x", 1, true, null]})), "x 1 true");
    }

    #[test]
    fn row_times_drop_the_t_and_milliseconds() {
        assert_eq!(row_time("2026-12-01T10:00:03.123Z"), "2026-12-01 10:00:03");
        assert_eq!(row_time("yesterday"), "yesterday");
    }
}
