//! The small commands beside `zero exec`, one file each: `zero sessions` (list, show, delete,
//! prune), `zero search`, `zero config`, `zero doctor`, `zero schema`, and `zero redact` (here). Everything
//! they print passes the redactor; errors are one `[zero] ...` line on stderr with the exit
//! code of its kind (1 for the store's I/O, 2 for usage, 3 for a setup that does not work).

mod config;
mod doctor;
mod session_search;
mod sessions;

pub use config::config;
pub use doctor::doctor;
pub use session_search::search;
pub use sessions::sessions;

use crate::config::Env;
use crate::protocol::events::SchemaVersion;
use crate::redact::{self, Redactor};
use crate::session::SessionError;

/// Writes `[zero] <message>` (redacted) on stderr and returns `code`.
fn fail(redactor: &Redactor, message: &str, code: u8) -> u8 {
    crate::sys::stdio::eprint_line(&format!("[zero] {}", redactor.redact_str(message)));
    code
}

/// The exit code of a session store error: a missing or bad session is usage, the rest I/O.
fn store_code(err: &SessionError) -> u8 {
    match err {
        SessionError::Usage(_) => 2,
        SessionError::Io(_) => 1,
    }
}

fn store_message(err: &SessionError) -> &str {
    let (SessionError::Usage(m) | SessionError::Io(m)) = err;
    m
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
fn print_json(document: &impl serde::Serialize) -> u8 {
    match serde_json::to_string_pretty(document) {
        Ok(text) => print(&format!("{text}\n")),
        Err(_) => 1,
    }
}

/// Writes the whole text on stdout: 0, or 1 when stdout is gone.
fn print(text: &str) -> u8 {
    match crate::sys::stdio::print(text.as_bytes()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// `zero redact`: stdin to stdout through the redactor, with the environment's secrets.
pub fn redact(names: &[String], env: &Env) -> u8 {
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
        Ok(()) => 0,
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => 1,
        Err(err) => {
            crate::sys::stdio::eprint_line(&format!("[zero] redact failed: {err}"));
            1
        }
    }
}

/// `zero schema [VERSION]`: the JSON Schema of that version on stdout, or a usage error that
/// lists the versions zero speaks.
pub fn print_schema(typed: &str) -> u8 {
    let version = typed.parse::<u64>().ok().and_then(SchemaVersion::from_number);
    match version.map(crate::protocol::schema::document) {
        Some(document) => {
            let text = serde_json::to_string_pretty(&document).unwrap_or_default();
            match crate::sys::stdio::print(format!("{text}\n").as_bytes()) {
                Ok(()) => 0,
                Err(_) => 1,
            }
        }
        None => {
            crate::sys::stdio::eprint_line(&format!(
                "[zero] zero schema: unsupported schema version {typed:?}; supported: {}",
                SchemaVersion::supported()
            ));
            2
        }
    }
}
