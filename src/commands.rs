//! The small commands beside `zero exec`: `zero sessions list|show` (over the session store)
//! and `zero redact` (stdin through the redactor).
#![forbid(unsafe_code)]

use std::io::Write;

use serde_json::{json, Value};

use crate::cli::SessionsArgs;
use crate::config::Env;
use crate::redact::{self, Redactor};
use crate::session::{Event, SessionError, Store};

/// `zero sessions list|show`.
pub fn sessions(args: &SessionsArgs, env: &Env) -> u8 {
    let redactor = Redactor::new(env.secret_values());
    let mut out = std::io::stdout().lock();
    let fail = |message: String, code: u8| {
        let _ = writeln!(std::io::stderr(), "[zero] {}", redactor.redact_str(&message));
        code
    };
    let store = match Store::locate(env) {
        Ok(store) => store,
        Err(SessionError::Io(m) | SessionError::Usage(m)) => return fail(m, 1),
    };
    let written = match args {
        SessionsArgs::List { json } => {
            let list = match store.list() {
                Ok(list) => list,
                Err(SessionError::Io(m)) => return fail(m, 1),
                Err(SessionError::Usage(m)) => return fail(m, 2),
            };
            if *json {
                let value = redactor.redact_value(&json!({"sessions": list}));
                writeln!(out, "{value}")
            } else if list.is_empty() {
                writeln!(out, "No sessions yet ({}).", store.root().display())
            } else {
                list.iter().try_for_each(|m| {
                    let title = redactor.redact_str(m.title.as_deref().unwrap_or(""));
                    writeln!(
                        out,
                        "{}  {}  {:>4} events  {}",
                        m.session_id, m.updated_at, m.event_count, title
                    )
                })
            }
        }
        SessionsArgs::Show { id, json } => {
            let meta = match store.metadata(id) {
                Ok(meta) => meta,
                Err(SessionError::Io(m)) => return fail(m, 1),
                Err(SessionError::Usage(m)) => return fail(m, 2),
            };
            let (events, warnings) = match store.events(id) {
                Ok(found) => found,
                Err(SessionError::Io(m)) => return fail(m, 1),
                Err(SessionError::Usage(m)) => return fail(m, 2),
            };
            for warning in &warnings {
                let _ = writeln!(std::io::stderr(), "[zero] WARNING: {warning}");
            }
            // Sessions written by an older zero may hold argument text with JSON escapes.
            let mut events = events;
            for event in &mut events {
                redact_argument_text(event, &redactor);
            }
            if *json {
                let value = redactor.redact_value(&json!({"metadata": meta, "events": events}));
                writeln!(out, "{value}")
            } else {
                let mut text = format!(
                    "Session {}\nTitle: {}\nModel: {} ({})\nCreated: {}\nUpdated: {}\nEvents: {}\n",
                    meta.session_id,
                    meta.title.as_deref().unwrap_or("-"),
                    meta.model_id.as_deref().unwrap_or("-"),
                    meta.provider.as_deref().unwrap_or("-"),
                    meta.created_at,
                    meta.updated_at,
                    meta.event_count
                );
                for event in &events {
                    let summary = event.payload.as_ref().map(summarize).unwrap_or_default();
                    text.push_str(&format!("#{} {}: {}\n", event.sequence, event.kind, summary));
                }
                out.write_all(redactor.redact_str(&text).as_bytes())
            }
        }
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// Replaces the argument text of an assistant message's tool calls with its decoded,
/// redacted form (see [`Redactor::redact_json_text`]).
fn redact_argument_text(event: &mut Event, redactor: &Redactor) {
    let calls = event.payload.as_mut().and_then(|p| p.get_mut("toolCalls"));
    for call in calls.and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(Value::String(arguments)) = call.get_mut("arguments") {
            *arguments = redactor.redact_json_text(arguments);
        }
    }
}

/// The string, number and boolean leaves of a payload, one line, at most 200 characters.
fn summarize(payload: &Value) -> String {
    fn leaves(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Number(n) => out.push(n.to_string()),
            Value::Bool(b) => out.push(b.to_string()),
            Value::Array(items) => items.iter().for_each(|v| leaves(v, out)),
            Value::Object(map) => map.values().for_each(|v| leaves(v, out)),
            Value::Null => {}
        }
    }
    let mut parts = Vec::new();
    leaves(payload, &mut parts);
    crate::text::cut_chars(&crate::text::one_line(&parts.join(" ")), 200)
}

/// `zero redact`: stdin to stdout through the redactor, with the environment's secrets.
pub fn redact(names: &[String], env: &Env) -> u8 {
    let mut redactor = Redactor::new(env.secret_values());
    for name in names {
        match env.get(name) {
            Some(value) => redactor.add_secrets_min([value.to_string()], 4),
            None => {
                let _ = writeln!(
                    std::io::stderr(),
                    "[zero] WARNING: --redact-env {name}: the variable is not set."
                );
            }
        }
    }
    match redact::filter(std::io::stdin().lock(), std::io::stdout().lock(), &redactor) {
        Ok(()) => 0,
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => 1,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "[zero] redact failed: {err}");
            1
        }
    }
}
