//! `zero schema [VERSION]`: the JSON Schema (draft 2020-12) of the stream-json events zero
//! writes and reads, strict: every event object forbids unknown fields, and each event's
//! `type` is a `const`. A client can validate a stream against exactly what this binary
//! speaks. The e2e suite validates every stream-json run it makes against this output.

use serde_json::{json, Map, Value};

/// The schema versions zero speaks.
pub const SUPPORTED: &[u8] = &[1];

/// The JSON Schema of `version`, or `None` when zero does not speak it.
pub fn document(version: u8) -> Option<Value> {
    (version == 1).then(version_1)
}

/// One event: the envelope's fields, then its own; all required but `optional`.
fn event(kind: &str, output: bool, fields: &[(&str, Value)], optional: &[&str]) -> Value {
    let mut properties = Map::new();
    properties.insert("schemaVersion".into(), json!({"const": 1}));
    properties.insert("type".into(), json!({"const": kind}));
    let mut required = vec!["schemaVersion".to_string(), "type".to_string()];
    if output {
        properties.insert("runId".into(), json!({"type": "string", "minLength": 1}));
        required.push("runId".into());
    }
    for (name, schema) in fields {
        properties.insert(name.to_string(), schema.clone());
        if !optional.contains(name) {
            required.push(name.to_string());
        }
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn version_1() -> Value {
    let text = || json!({"type": "string"});
    let name = || json!({"type": "string", "minLength": 1});
    let count = || json!({"type": "integer", "minimum": 0});
    let outputs = [
        (
            "run_start",
            event(
                "run_start",
                true,
                &[
                    ("sessionId", name()),
                    ("cwd", name()),
                    ("provider", name()),
                    ("model", name()),
                    ("apiModel", name()),
                ],
                &["sessionId"],
            ),
        ),
        ("warning", event("warning", true, &[("message", name())], &[])),
        ("text", event("text", true, &[("delta", text())], &[])),
        (
            "tool_call",
            event(
                "tool_call",
                true,
                &[
                    ("id", name()),
                    ("name", name()),
                    (
                        "args",
                        json!({
                            "description": "the arguments as a JSON object, or the model's text when it was not JSON",
                            "type": ["object", "string"],
                        }),
                    ),
                    ("sideEffect", json!({"enum": ["read", "write", "shell", "unknown"]})),
                ],
                &[],
            ),
        ),
        (
            "tool_result",
            event(
                "tool_result",
                true,
                &[
                    ("id", name()),
                    ("status", json!({"enum": ["ok", "error"]})),
                    ("output", json!({"type": "string", "description": "at most 32 KiB"})),
                    ("truncated", json!({"type": "boolean"})),
                ],
                &[],
            ),
        ),
        (
            "usage",
            event(
                "usage",
                true,
                &[
                    ("promptTokens", count()),
                    ("completionTokens", count()),
                    ("totalTokens", count()),
                    ("costUsd", json!({"type": "number", "minimum": 0})),
                ],
                &["costUsd"],
            ),
        ),
        ("final", event("final", true, &[("text", text())], &[])),
        (
            "error",
            event(
                "error",
                true,
                &[
                    (
                        "code",
                        json!({"enum": ["usage_error", "config_error", "provider_error", "max_turns", "interrupted", "crash"]}),
                    ),
                    ("message", name()),
                    ("recoverable", json!({"type": "boolean"})),
                ],
                &[],
            ),
        ),
        (
            "run_end",
            event(
                "run_end",
                true,
                &[
                    ("status", json!({"enum": ["success", "error"]})),
                    ("exitCode", json!({"enum": [0, 1, 2, 3, 4, 130]})),
                ],
                &[],
            ),
        ),
    ];
    let inputs = [
        ("prompt", event("prompt", false, &[("content", text())], &[])),
        (
            "message",
            event(
                "message",
                false,
                &[("role", json!({"const": "user"})), ("content", text())],
                &[],
            ),
        ),
    ];
    let mut defs = Map::new();
    let refs = |list: &[(&str, Value)], prefix: &str| -> Vec<Value> {
        list.iter().map(|(k, _)| json!({"$ref": format!("#/$defs/{prefix}{k}")})).collect()
    };
    let (output_refs, input_refs) = (refs(&outputs, ""), refs(&inputs, "input_"));
    for (kind, schema) in outputs {
        defs.insert(kind.to_string(), schema);
    }
    for (kind, schema) in inputs {
        defs.insert(format!("input_{kind}"), schema);
    }
    defs.insert(
        "output".into(),
        json!({"description": "one line zero writes", "oneOf": output_refs}),
    );
    defs.insert("input".into(), json!({"description": "one line zero reads", "oneOf": input_refs}));
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "zero stream-json, schema version 1",
        "description": "One JSON object per line. Output lines match #/$defs/output, input lines #/$defs/input.",
        "oneOf": [{"$ref": "#/$defs/output"}, {"$ref": "#/$defs/input"}],
        "$defs": defs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_strict_and_named_by_a_const_type() {
        let doc = document(1).unwrap();
        let defs = doc["$defs"].as_object().unwrap();
        assert_eq!(defs.len(), 13, "9 output events, 2 input events, 2 unions");
        for (name, def) in defs {
            if name == "output" || name == "input" {
                continue;
            }
            assert_eq!(def["additionalProperties"], false, "{name}");
            let kind = name.strip_prefix("input_").unwrap_or(name);
            assert_eq!(def["properties"]["type"]["const"], kind);
            assert_eq!(def["properties"]["schemaVersion"]["const"], 1);
        }
        assert!(document(2).is_none() && document(0).is_none());
    }
}
