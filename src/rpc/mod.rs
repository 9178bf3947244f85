//! JSON-RPC 2.0 as a server speaks it over stdio, one message per line: what zero reads from a
//! client (requests, notifications, and the responses to zero's own requests), each checked by
//! hand, and the lines zero writes back. The front-ends that other programs drive (`zero acp`,
//! `zero mcp serve`) share it; the MCP client keeps its own view of the same wire
//! (`mcp::wire`), where zero is the one asking.
//!
//! A line that is not JSON, or not a JSON-RPC message, gets the error response the
//! specification gives it (`-32700`, `-32600`) and the conversation goes on; a line past the
//! limit is dropped as it is read ([`lines`]), so memory stays bounded whatever a client sends.

pub mod lines;

use serde_json::{json, Map, Value};

/// The JSON-RPC error codes zero answers with.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// A request's id: a number or a string (a null id is only for errors about unreadable
/// messages).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    Number(i64),
    Text(String),
}

impl Id {
    pub fn to_value(&self) -> Value {
        match self {
            Id::Number(n) => json!(n),
            Id::Text(s) => json!(s),
        }
    }

    pub fn of(value: &Value) -> Option<Id> {
        match value {
            Value::Number(n) => n.as_i64().map(Id::Number),
            Value::String(s) => Some(Id::Text(s.clone())),
            _ => None,
        }
    }
}

/// An error a peer answered with, or one zero answers with.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into(), data: None }
    }

    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(code::INVALID_PARAMS, message)
    }

    pub fn method_not_found(method: &str) -> RpcError {
        RpcError::new(code::METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    fn to_value(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }
}

/// One message a client sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request zero must answer.
    Request { id: Id, method: String, params: Value },
    /// A notification: never answered.
    Notification { method: String, params: Value },
    /// The answer to one of zero's own requests.
    Response { id: Id, outcome: Result<Value, RpcError> },
}

/// A line that is no message: the error response it gets (its id when one could be read,
/// else null).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    pub id: Option<Id>,
    pub error: RpcError,
    /// It gets an error response. A line that meant to be a response (no `method`, a `result`
    /// or an `error`) is never answered, as JSON-RPC says: two peers would answer each other's
    /// errors for ever, and an answer could settle a request of the client's.
    pub answer: bool,
}

impl Rejected {
    fn new(id: Option<Id>, code: i64, message: impl Into<String>) -> Rejected {
        Rejected { id, error: RpcError::new(code, message), answer: true }
    }

    /// The error response to write for it.
    pub fn response(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id.as_ref().map_or(Value::Null, Id::to_value),
            "error": self.error.to_value(),
        })
    }
}

/// Reads one line as a message, checking every member JSON-RPC 2.0 defines.
pub fn parse(line: &[u8]) -> Result<Message, Rejected> {
    let value: Value = serde_json::from_slice(line)
        .map_err(|err| Rejected::new(None, code::PARSE_ERROR, format!("Parse error: {err}")))?;
    let meant_as_response = value.as_object().is_some_and(|m| {
        !m.contains_key("method") && (m.contains_key("result") || m.contains_key("error"))
    });
    message(value).map_err(|rejected| Rejected { answer: !meant_as_response, ..rejected })
}

/// A parsed line as a message.
fn message(value: Value) -> Result<Message, Rejected> {
    let Value::Object(map) = value else {
        let what = if value.is_array() { "a batch (not supported)" } else { "not an object" };
        return Err(Rejected::new(None, code::INVALID_REQUEST, format!("Invalid request: {what}")));
    };
    let id = match map.get("id") {
        None => None,
        Some(value) => match Id::of(value) {
            Some(id) => Some(id),
            None => {
                return Err(Rejected::new(
                    None,
                    code::INVALID_REQUEST,
                    "Invalid request: \"id\" must be a string or an integer",
                ))
            }
        },
    };
    if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Rejected::new(
            id,
            code::INVALID_REQUEST,
            "Invalid request: \"jsonrpc\" must be \"2.0\"",
        ));
    }
    match (map.get("method"), id) {
        (Some(Value::String(method)), id) => {
            let params =
                params(&map).map_err(|e| Rejected { id: id.clone(), error: e, answer: true })?;
            Ok(match id {
                Some(id) => Message::Request { id, method: method.clone(), params },
                None => Message::Notification { method: method.clone(), params },
            })
        }
        (Some(_), id) => Err(Rejected::new(
            id,
            code::INVALID_REQUEST,
            "Invalid request: \"method\" must be a string",
        )),
        (None, Some(id)) => response(&map, id),
        (None, None) => Err(Rejected::new(
            None,
            code::INVALID_REQUEST,
            "Invalid request: neither a method nor an id",
        )),
    }
}

/// `params`: an object or an array; absent is an empty object.
fn params(map: &Map<String, Value>) -> Result<Value, RpcError> {
    match map.get("params") {
        None => Ok(json!({})),
        Some(value @ (Value::Object(_) | Value::Array(_))) => Ok(value.clone()),
        Some(_) => Err(RpcError::new(
            code::INVALID_REQUEST,
            "Invalid request: \"params\" must be an object or an array",
        )),
    }
}

/// A response: exactly one of `result` and `error`.
fn response(map: &Map<String, Value>, id: Id) -> Result<Message, Rejected> {
    let outcome = match (map.get("result"), map.get("error")) {
        // Some libraries write `"error": null` beside a result.
        (Some(result), None | Some(Value::Null)) => Ok(result.clone()),
        (None, Some(Value::Object(error))) => {
            let code = error.get("code").and_then(Value::as_i64);
            let message = error.get("message").and_then(Value::as_str);
            match (code, message) {
                (Some(code), Some(message)) => Err(RpcError {
                    code,
                    message: message.to_string(),
                    data: error.get("data").cloned(),
                }),
                _ => {
                    return Err(Rejected::new(
                        Some(id),
                        code::INVALID_REQUEST,
                        "Invalid response: \"error\" needs an integer \"code\" and a string \"message\"",
                    ))
                }
            }
        }
        _ => {
            return Err(Rejected::new(
                Some(id),
                code::INVALID_REQUEST,
                "Invalid response: it needs exactly one of \"result\" and \"error\"",
            ))
        }
    };
    Ok(Message::Response { id, outcome })
}

/// The success response to request `id`.
pub fn result(id: &Id, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result})
}

/// The error response to request `id`.
pub fn error(id: &Id, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_value(), "error": error.to_value()})
}

/// A notification zero sends.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A request zero sends to its client.
pub fn request(id: &Id, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_value(), "method": method, "params": params})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(line: &str) -> (Option<Id>, i64) {
        match parse(line.as_bytes()) {
            Err(r) => (r.id, r.error.code),
            Ok(m) => panic!("{line}: accepted as {m:?}"),
        }
    }

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        assert_eq!(
            parse(
                br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#
            ),
            Ok(Message::Request {
                id: Id::Number(1),
                method: "initialize".into(),
                params: json!({"protocolVersion": 1})
            })
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#),
            Ok(Message::Notification {
                method: "session/cancel".into(),
                params: json!({"sessionId": "s"})
            })
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":"a","method":"x"}"#),
            Ok(Message::Request {
                id: Id::Text("a".into()),
                method: "x".into(),
                params: json!({})
            })
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":7,"result":{"outcome":{"outcome":"cancelled"}}}"#),
            Ok(Message::Response {
                id: Id::Number(7),
                outcome: Ok(json!({"outcome": {"outcome": "cancelled"}}))
            })
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"no"}}"#),
            Ok(Message::Response { id: Id::Number(7), outcome: Err(RpcError::new(-32000, "no")) })
        );
    }

    #[test]
    fn what_is_not_a_message_gets_the_specifications_error() {
        assert_eq!(rejected("{not json"), (None, code::PARSE_ERROR));
        assert_eq!(rejected("[1, 2]"), (None, code::INVALID_REQUEST));
        assert_eq!(rejected("42"), (None, code::INVALID_REQUEST));
        assert_eq!(
            rejected(r#"{"id":3,"method":"x"}"#),
            (Some(Id::Number(3)), code::INVALID_REQUEST)
        );
        assert_eq!(
            rejected(r#"{"jsonrpc":"1.0","id":3,"method":"x"}"#),
            (Some(Id::Number(3)), code::INVALID_REQUEST)
        );
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#),
            (None, code::INVALID_REQUEST)
        );
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#),
            (None, code::INVALID_REQUEST)
        );
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":3,"method":7}"#),
            (Some(Id::Number(3)), code::INVALID_REQUEST)
        );
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":3,"method":"x","params":"p"}"#),
            (Some(Id::Number(3)), code::INVALID_REQUEST)
        );
        assert_eq!(rejected(r#"{"jsonrpc":"2.0"}"#), (None, code::INVALID_REQUEST));
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":3}"#),
            (Some(Id::Number(3)), code::INVALID_REQUEST)
        );
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":3,"result":1,"error":{}}"#),
            (Some(Id::Number(3)), code::INVALID_REQUEST)
        );
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":3,"error":{"code":"x"}}"#),
            (Some(Id::Number(3)), code::INVALID_REQUEST)
        );
        let response = parse(b"{oops").unwrap_err().response();
        assert_eq!(response["id"], Value::Null);
        assert_eq!(response["error"]["code"], code::PARSE_ERROR);
    }

    #[test]
    fn a_line_meant_as_a_response_is_never_answered() {
        for line in [
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":1,"error":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":"x"}}"#,
            r#"{"id":3,"result":1}"#,
        ] {
            assert!(!parse(line.as_bytes()).unwrap_err().answer, "{line}");
        }
        assert!(parse(br#"{"id":3,"method":"x"}"#).unwrap_err().answer);
        // `"error": null` beside a result is a result.
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":42,"result":{},"error":null}"#),
            Ok(Message::Response { id: Id::Number(42), outcome: Ok(json!({})) })
        );
    }

    #[test]
    fn the_lines_zero_writes_are_json_rpc() {
        let id = Id::Text("r1".into());
        assert_eq!(result(&id, json!({})), json!({"jsonrpc": "2.0", "id": "r1", "result": {}}));
        assert_eq!(
            error(&Id::Number(2), &RpcError::method_not_found("nope")),
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found: nope"}})
        );
        assert_eq!(
            notification("session/update", json!({"sessionId": "s"})),
            json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}})
        );
    }
}
