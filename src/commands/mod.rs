//! The small commands beside `zero exec`, one file each: `zero sessions` (list, show, delete,
//! prune), `zero search`, `zero config`, `zero doctor`, `zero mcp list`, `zero schema`, and
//! `zero redact` (here).
//! Everything they print passes the redactor; errors are one `[zero] ...` line on stderr with the
//! exit code of its kind (1 for the store's I/O, 2 for usage, 3 for a setup that does not work).

mod config;
mod doctor;
mod mcp;
mod session_search;
mod sessions;

pub use config::config;
pub use doctor::doctor;
pub use mcp::list as mcp_list;
pub use session_search::search;
pub use sessions::sessions;

use crate::config::Env;
use crate::error::{Exit, Failure};
use crate::protocol::events::SchemaVersion;
use crate::redact::{self, Redactor};
use crate::session::{Event, SessionError};
use serde_json::Value;

/// Writes `[zero] <message>` (redacted) on stderr.
fn note(redactor: &Redactor, message: &str) {
    crate::sys::stdio::eprint_line(&format!("[zero] {}", redactor.redact_str(message)));
}

/// Writes `[zero] <message>` (redacted) on stderr and returns `exit`.
fn fail(redactor: &Redactor, message: &str, exit: Exit) -> Exit {
    note(redactor, message);
    exit
}

/// How a session store error ends the command: a missing or bad session is usage, the rest I/O.
fn store_exit(err: &SessionError) -> Exit {
    Failure::from(err.clone()).exit()
}

fn store_message(err: &SessionError) -> &str {
    err.message()
}

/// A JSON object whose fields keep the order given (a `serde_json::Value` sorts them), so the
/// documents read in Zero's order.
struct Object(Vec<(&'static str, serde_json::Value)>);

impl serde::Serialize for Object {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// A document as indented JSON and a newline, on stdout.
fn print_json(document: &impl serde::Serialize) -> Exit {
    match serde_json::to_string_pretty(document) {
        Ok(text) => print(&format!("{text}\n")),
        Err(_) => Exit::Internal,
    }
}

/// Writes the whole text on stdout: 0, or 1 when stdout is gone.
fn print(text: &str) -> Exit {
    match crate::sys::stdio::print(text.as_bytes()) {
        Ok(()) => Exit::Success,
        Err(_) => Exit::Internal,
    }
}

/// `zero redact`: stdin to stdout through the redactor, with the environment's secrets.
pub fn redact(names: &[String], env: &Env) -> Exit {
    let mut redactor = Redactor::new(env.secret_values());
    for name in names {
        match env.get(name) {
            Some(value) => redactor.add_secrets_min([value.to_string()], 4),
            None => {
                crate::sys::stdio::eprint_line(&format!(
                    "[zero] WARNING: --redact-env {name}: the variable is not set."
                ));
            }
        }
    }
    match redact::filter(crate::sys::stdio::stdin(), crate::sys::stdio::stdout(), &redactor) {
        Ok(()) => Exit::Success,
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Exit::Internal,
        Err(err) => {
            crate::sys::stdio::eprint_line(&format!("[zero] redact failed: {err}"));
            Exit::Internal
        }
    }
}

/// `zero schema [VERSION]`: the JSON Schema of that version on stdout, or a usage error that
/// lists the versions zero speaks.
pub fn print_schema(typed: &str) -> Exit {
    let version = typed.parse::<u64>().ok().and_then(SchemaVersion::from_number);
    let document = match typed {
        "config" => Some(crate::config::schema::document()),
        _ => version.map(crate::protocol::schema::document),
    };
    match document {
        Some(document) => {
            let text = serde_json::to_string_pretty(&document).unwrap_or_default();
            match crate::sys::stdio::print(format!("{text}\n").as_bytes()) {
                Ok(()) => Exit::Success,
                Err(_) => Exit::Internal,
            }
        }
        None => {
            crate::sys::stdio::eprint_line(&format!(
                "[zero] zero schema: unsupported schema version {typed:?}; supported: {}, or config",
                SchemaVersion::supported()
            ));
            Exit::Usage
        }
    }
}

/// The string, number and boolean leaves of a payload, joined by spaces.
fn leaves(payload: &Value) -> String {
    fn walk(value: &Value, out: &mut String, first: &mut bool) {
        let mut leaf = |text: &str| {
            if !std::mem::take(first) {
                out.push(' ');
            }
            out.push_str(text);
        };
        match value {
            Value::String(s) => leaf(s),
            Value::Number(n) => leaf(&n.to_string()),
            Value::Bool(b) => leaf(if *b { "true" } else { "false" }),
            Value::Array(items) => items.iter().for_each(|v| walk(v, out, first)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out, first)),
            Value::Null => {}
        }
    }
    // Written into one string, not gathered and joined: a 16 MiB leaf is copied once.
    let mut text = String::new();
    walk(payload, &mut text, &mut true);
    text
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
