//! JSON-RPC 2.0 as MCP uses it: requests with numeric ids (zero's own), notifications, and
//! what a server sends back, sorted into responses, requests and notifications.

use serde_json::{json, Value};

/// Why talking to an MCP server failed, by kind; the message says it in the server's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkError {
    /// zero could not set the link up: the command does not start, no socket or thread.
    Setup(String),
    /// The HTTP endpoint answered with an error status, or could not be reached.
    Http(String),
    /// What the server sent breaks the protocol: not JSON-RPC, not an event, too large.
    Protocol(String),
    /// The server did not take or give a message in time.
    Timeout(String),
    /// An interrupt stopped the exchange half-way.
    Interrupted(String),
    /// The link is gone: the server exited or closed it, or an earlier failure ended it.
    Closed(String),
    /// The server answered the request with a JSON-RPC error.
    Answered(String),
}

/// A request that got no response: its time ran out, or the server was not reached.
impl From<crate::net::http::RequestError> for LinkError {
    fn from(err: crate::net::http::RequestError) -> LinkError {
        match err {
            crate::net::http::RequestError::Timeout(m) => LinkError::Timeout(m),
            other => LinkError::Http(other.to_string()),
        }
    }
}

crate::error::message_error!(
    LinkError: Setup,
    Http,
    Protocol,
    Timeout,
    Interrupted,
    Closed,
    Answered
);

/// The longest message zero reads from a server (a line on stdio, a body or event over HTTP).
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// Messages in one batch (MCP no longer has batches; an older server may send a few).
const MAX_BATCH: usize = 32;

/// The error code of a method zero does not offer (sampling, elicitation, ...).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The code zero gives a request whose transport failed (an HTTP error, a broken stream).
pub const TRANSPORT_FAILED: i64 = -32000;

/// One message from a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to zero's request `id`: its result, or the error's message.
    Response {
        id: u64,
        result: Result<Value, LinkError>,
    },
    /// A request zero must answer.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
}

pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A notification; `Value::Null` params are left out, as a strict server wants.
pub fn notification(method: &str, params: Value) -> Value {
    if params.is_null() {
        return json!({"jsonrpc": "2.0", "method": method});
    }
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

pub fn reply(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn reply_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The JSON-RPC error response zero makes itself when a request's transport failed, so the
/// waiting side sees one kind of answer.
pub fn transport_failure(id: u64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": TRANSPORT_FAILED, "message": message}})
}

/// Sorts one message (a batch is its messages); anything that is not JSON-RPC is an error
/// quoting its start.
pub fn parse(text: &str) -> Result<Vec<Incoming>, LinkError> {
    let value: Value = serde_json::from_str(text).map_err(|_| not_json_rpc(text))?;
    match value {
        Value::Array(items) if items.len() > MAX_BATCH => Err(LinkError::Protocol(format!(
            "sent a batch of {} messages (at most {MAX_BATCH} are read)",
            items.len()
        ))),
        Value::Array(items) if !items.is_empty() => {
            items.into_iter().map(|item| sort(item, text)).collect()
        }
        value => Ok(vec![sort(value, text)?]),
    }
}

fn not_json_rpc(text: &str) -> LinkError {
    let line = crate::text::one_line(text);
    let (start, cut) = crate::text::cap_utf8(&line, 80);
    LinkError::Protocol(format!(
        "sent something that is not JSON-RPC: {start}{}",
        if cut { "..." } else { "" }
    ))
}

fn sort(value: Value, text: &str) -> Result<Incoming, LinkError> {
    let Value::Object(mut map) = value else { return Err(not_json_rpc(text)) };
    let method = map.get("method").and_then(Value::as_str).map(str::to_string);
    let params = map.remove("params").unwrap_or(Value::Null);
    match (method, map.remove("id")) {
        (Some(method), Some(id)) if !id.is_null() => Ok(Incoming::Request { id, method, params }),
        (Some(method), _) => Ok(Incoming::Notification { method, params }),
        // An error the server could not tie to a request (it could not read one): nothing
        // waits for it.
        (None, Some(Value::Null)) if map.contains_key("error") => Ok(Incoming::Notification {
            method: String::new(),
            params: map.remove("error").unwrap_or_default(),
        }),
        (None, Some(id)) => {
            // Zero's ids are numbers; a server that echoes them as strings is forgiven.
            let id = id
                .as_u64()
                .or_else(|| id.as_str().and_then(|s| s.parse().ok()))
                .ok_or_else(|| not_json_rpc(text))?;
            let result = match (map.remove("result"), map.remove("error")) {
                (Some(result), None) => Ok(result),
                (_, Some(error)) => Err(LinkError::Answered(error_text(&error))),
                (None, None) => return Err(not_json_rpc(text)),
            };
            Ok(Incoming::Response { id, result })
        }
        (None, None) => Err(not_json_rpc(text)),
    }
}

/// An error object as one line: its message and code.
fn error_text(error: &Value) -> String {
    let message = error.get("message").and_then(Value::as_str).unwrap_or("error without a message");
    match error.get("code").and_then(Value::as_i64) {
        Some(TRANSPORT_FAILED) | None => crate::text::one_line(message),
        Some(code) => format!("{} (JSON-RPC error {code})", crate::text::one_line(message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_sorted_by_their_shape() {
        let got = parse(r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#).unwrap();
        assert_eq!(got, [Incoming::Response { id: 3, result: Ok(json!({"tools": []})) }]);
        let got = parse(r#"{"jsonrpc":"2.0","id":"4","error":{"code":-32602,"message":"bad"}}"#);
        assert_eq!(
            got.unwrap(),
            [Incoming::Response {
                id: 4,
                result: Err(LinkError::Answered("bad (JSON-RPC error -32602)".into()))
            }]
        );
        let got = parse(r#"[{"jsonrpc":"2.0","id":"x1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}]"#).unwrap();
        assert_eq!(got.len(), 2);
        assert!(
            matches!(&got[0], Incoming::Request { id, method, .. } if id == "x1" && method == "ping")
        );
        assert!(
            matches!(&got[1], Incoming::Notification { method, .. } if method == "notifications/tools/list_changed")
        );
    }

    #[test]
    fn anything_else_is_named_as_not_json_rpc() {
        assert_eq!(
            parse("Server listening on port 3000").unwrap_err(),
            LinkError::Protocol(
                "sent something that is not JSON-RPC: Server listening on port 3000".into()
            )
        );
        assert!(parse(r#"{"jsonrpc":"2.0","id":{"a":1},"result":1}"#).is_err());
        assert!(parse(r#"{"jsonrpc":"2.0","id":1}"#).is_err());
        assert!(parse("[1]").is_err());
        assert!(parse(&"x".repeat(500)).unwrap_err().to_string().ends_with("x..."));
    }
}
