//! `zero schema [VERSION]`: the JSON Schema (draft 2020-12) of the stream-json events zero
//! writes and reads, strict: every event object forbids unknown fields, and each event's
//! `type` is a `const`. A client can validate a stream against exactly what this binary
//! speaks. The e2e suite validates every stream-json run it makes against this output.

use serde_json::{json, Map, Value};

use crate::protocol::events::SchemaVersion::{V1, V2};
use crate::protocol::events::{
    Action, Autonomy, DecidedBy, ErrorCode, PermissionMode, Phase, RiskLevel, RunStatus,
    SchemaVersion, SideEffect, Status, WarningCode,
};

/// The JSON Schema of `version`.
pub fn document(version: SchemaVersion) -> Value {
    let (outputs, inputs) = match version {
        SchemaVersion::V1 => (outputs_1(), inputs_1()),
        SchemaVersion::V2 => (outputs_2(), inputs_2()),
    };
    assemble(version.number(), outputs, inputs)
}

/// One event: the envelope's fields, then its own; all required but `optional`.
fn event(
    version: SchemaVersion,
    kind: &str,
    output: bool,
    fields: &[(&str, Value)],
    optional: &[&str],
) -> Value {
    let mut properties = Map::new();
    properties.insert("schemaVersion".into(), json!({"const": version.number()}));
    properties.insert("type".into(), json!({"const": kind}));
    let mut required = vec!["schemaVersion".to_string(), "type".to_string()];
    if output {
        properties.insert("runId".into(), json!({"type": "string", "minLength": 1}));
        required.push("runId".into());
        if version == SchemaVersion::V2 {
            properties.insert(
                "seq".into(),
                json!({"description": "1 for the first line of the process, +1 for each line after", "type": "integer", "minimum": 1}),
            );
            required.push("seq".into());
        }
    }
    strict(properties, required, fields, optional)
}

/// An object with exactly these fields, all required but `optional`.
fn strict(
    mut properties: Map<String, Value>,
    mut required: Vec<String>,
    fields: &[(&str, Value)],
    optional: &[&str],
) -> Value {
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

fn text() -> Value {
    json!({"type": "string"})
}

fn name() -> Value {
    json!({"type": "string", "minLength": 1})
}

fn count() -> Value {
    json!({"type": "integer", "minimum": 0})
}

fn cost() -> Value {
    json!({"type": "number", "minimum": 0})
}

fn exit_code() -> Value {
    json!({"enum": crate::error::Exit::ALL.map(crate::error::Exit::code)})
}

type Events = Vec<(&'static str, Value)>;

/// `run_start`'s fields in both versions.
fn run_start() -> Vec<(&'static str, Value)> {
    vec![
        ("sessionId", name()),
        ("cwd", name()),
        ("provider", name()),
        ("model", name()),
        ("apiModel", name()),
    ]
}

/// The token counts (and cost) of `usage`, and of schema 2's `usage.cumulative`.
fn tokens() -> Vec<(&'static str, Value)> {
    vec![
        ("promptTokens", count()),
        ("completionTokens", count()),
        ("totalTokens", count()),
        ("costUsd", cost()),
    ]
}

/// `error`: the same codes in both versions, but the turn limit is `max_turns` in schema 1
/// and `incomplete` in schema 2, and only schema 2 tells a reached budget apart.
fn error_event(version: SchemaVersion) -> Value {
    let mut codes = vec![ErrorCode::Usage, ErrorCode::Config, ErrorCode::Provider];
    if version == SchemaVersion::V1 {
        codes.push(ErrorCode::MaxTurns);
    } else {
        codes.extend([
            ErrorCode::Incomplete,
            ErrorCode::BudgetExceeded,
            ErrorCode::OutputSchema,
            ErrorCode::Mcp,
        ]);
    }
    codes.extend([ErrorCode::Interrupted, ErrorCode::Crash]);
    event(
        version,
        "error",
        true,
        &[
            ("code", json!({"enum": codes})),
            ("message", name()),
            ("recoverable", json!({"type": "boolean"})),
        ],
        &[],
    )
}

fn outputs_1() -> Events {
    let e =
        |kind, fields: &[(&str, Value)], optional: &[&str]| event(V1, kind, true, fields, optional);
    vec![
        ("run_start", e("run_start", &run_start(), &["sessionId"])),
        ("warning", e("warning", &[("message", name())], &[])),
        ("text", e("text", &[("delta", text())], &[])),
        (
            "tool_call",
            e(
                "tool_call",
                &[
                    ("id", name()),
                    ("name", name()),
                    (
                        "args",
                        json!({
                            "description": "the model's arguments as the JSON value they parse to (an object, or any other JSON value the model wrote), or the model's text as a string when it was not JSON",
                        }),
                    ),
                    ("sideEffect", json!({"enum": SideEffect::ALL})),
                ],
                &[],
            ),
        ),
        (
            "tool_result",
            e(
                "tool_result",
                &[
                    ("id", name()),
                    ("status", json!({"enum": Status::ALL})),
                    ("output", json!({"type": "string", "description": "at most 32 KiB"})),
                    ("truncated", json!({"type": "boolean"})),
                ],
                &[],
            ),
        ),
        ("usage", e("usage", &tokens(), &["costUsd"])),
        ("final", e("final", &[("text", text())], &[])),
        ("error", error_event(V1)),
        (
            "run_end",
            e(
                "run_end",
                &[("status", json!({"enum": RunStatus::ALL[..2]})), ("exitCode", exit_code())],
                &[],
            ),
        ),
    ]
}

fn inputs_1() -> Events {
    vec![
        ("prompt", event(V1, "prompt", false, &[("content", text())], &[])),
        (
            "message",
            event(
                V1,
                "message",
                false,
                &[("role", json!({"const": "user"})), ("content", text())],
                &[],
            ),
        ),
    ]
}

fn outputs_2() -> Events {
    let e =
        |kind, fields: &[(&str, Value)], optional: &[&str]| event(V2, kind, true, fields, optional);
    // Zero's schema 2 also names the side effects `network` and `none`, which zero's own tools
    // never have: a client written for Zero accepts every line zero writes.
    let side_effect = || {
        let mut names: Vec<Value> = SideEffect::ALL.iter().map(|s| json!(s)).collect();
        names.insert(3, json!("network"));
        names.insert(4, json!("none"));
        json!({"enum": names})
    };
    let status = || json!({"enum": RunStatus::ALL});
    let permission_mode = || json!({"enum": PermissionMode::ALL});
    let autonomy = || json!({"enum": Autonomy::ALL});
    let cumulative = strict(Map::new(), Vec::new(), &tokens(), &["costUsd"]);
    let mut usage = tokens();
    usage.push((
        "call",
        json!({"description": "the model call's number within the process, from 1", "type": "integer", "minimum": 1}),
    ));
    usage.push(("cumulative", cumulative));
    let cache = |what: &str| json!({"description": format!("prompt tokens {what} the provider's cache (part of promptTokens), when it reported them"), "type": "integer", "minimum": 0});
    usage.push(("cacheReadTokens", cache("read from")));
    usage.push(("cacheWriteTokens", cache("written to")));
    let gate = |extra: &[(&'static str, Value)]| {
        let mut fields = vec![
            ("id", name()),
            ("name", name()),
            ("permissionMode", permission_mode()),
            ("autonomy", autonomy()),
            ("sideEffect", side_effect()),
            ("sessionId", name()),
            (
                "risk",
                strict(
                    Map::new(),
                    Vec::new(),
                    &[(
                        "level",
                        json!({"enum": RiskLevel::ALL, "description": "read: low; write, network: medium; shell, unknown: high"}),
                    )],
                    &[],
                ),
            ),
        ];
        fields.extend(extra.iter().cloned());
        fields
    };
    vec![
        (
            "run_start",
            e(
                "run_start",
                &[
                    run_start(),
                    vec![
                        ("permissionMode", permission_mode()),
                        ("autonomy", autonomy()),
                        (
                            "heartbeatMs",
                            json!({"description": "0: no heartbeats", "type": "integer", "minimum": 0}),
                        ),
                        (
                            "instructions",
                            json!({"description": "the AGENTS.md files read, relative to the repository root (the user's own with ~); present when any were", "type": "array", "items": {"type": "string"}, "minItems": 1}),
                        ),
                        (
                            "addDirs",
                            json!({"description": "the extra roots of --add-dir, absolute; present when any were given", "type": "array", "items": {"type": "string"}, "minItems": 1}),
                        ),
                        (
                            "sandbox",
                            json!({"description": "where bash's commands run: the mode, the network, and what this kernel enforces of it (none: nothing)", "type": "object", "additionalProperties": false, "required": ["mode", "network", "enforcement"], "properties": {
                                "mode": {"enum": ["off", "read-only", "workspace-write"]},
                                "network": {"enum": ["on", "off"]},
                                "enforcement": {"description": "none, or landlock-v<N>: the Landlock ABI enforcing it", "type": "string"}
                            }}),
                        ),
                    ],
                ]
                .concat(),
                &["sessionId", "instructions", "addDirs"],
            ),
        ),
        (
            "warning",
            e("warning", &[("message", name()), ("code", json!({"enum": WarningCode::ALL}))], &[]),
        ),
        ("text", e("text", &[("delta", text())], &[])),
        (
            "reasoning",
            e(
                "reasoning",
                &[(
                    "delta",
                    json!({"description": "model reasoning, never part of text or final", "type": "string"}),
                )],
                &[],
            ),
        ),
        (
            "tool_call",
            e(
                "tool_call",
                &[
                    ("id", name()),
                    ("name", name()),
                    (
                        "args",
                        json!({"description": "left out when the model's arguments are not a JSON object", "type": "object"}),
                    ),
                    ("sideEffect", side_effect()),
                ],
                &["args"],
            ),
        ),
        (
            "permission_request",
            e(
                "permission_request",
                &gate(&[
                    ("action", json!({"const": "prompt"})),
                    ("permission", json!({"const": "prompt"})),
                    ("permissionGranted", json!({"const": false})),
                    ("reason", name()),
                    ("requestId", name()),
                    ("timeoutMs", count()),
                ]),
                &["requestId", "timeoutMs", "sessionId"],
            ),
        ),
        (
            "permission_decision",
            e(
                "permission_decision",
                &gate(&[
                    ("action", json!({"enum": Action::ALL})),
                    ("permission", name()),
                    ("permissionGranted", json!({"type": "boolean"})),
                    ("decisionReason", name()),
                    (
                        "decidedBy",
                        json!({"enum": DecidedBy::ALL}),
                    ),
                ]),
                &["sessionId"],
            ),
        ),
        (
            "tool_result",
            e(
                "tool_result",
                &[
                    ("id", name()),
                    ("name", name()),
                    ("status", json!({"enum": Status::ALL})),
                    ("output", json!({"type": "string", "description": "at most 32 KiB"})),
                    ("truncated", json!({"type": "boolean"})),
                    (
                        "redacted",
                        json!({"description": "redaction changed the output", "type": "boolean"}),
                    ),
                    (
                        "changedFiles",
                        json!({"description": "workspace-relative paths", "type": "array", "items": name()}),
                    ),
                    (
                        "meta",
                        // Open, as the protocol says: an object of strings, so a client that
                        // validates keeps working when a member is added.
                        json!({"description": "an object of strings: members may be added", "type": "object", "additionalProperties": {"type": "string"}, "properties": {
                            "permission": {"description": "the call was not run for want of permission: denied (or cancelled, when an interrupt cancelled its approval)", "enum": ["denied", "cancelled"]},
                            "mcp": {"description": "the call was of an MCP server's tool", "type": "object", "additionalProperties": false, "required": ["server", "tool"], "properties": {"server": name(), "tool": name()}}
                        }}),
                    ),
                    (
                        "exitCode",
                        json!({"description": "bash: the command's exit code", "type": "integer"}),
                    ),
                    ("durationMs", count()),
                ],
                &["redacted", "changedFiles", "meta", "exitCode"],
            ),
        ),
        ("usage", e("usage", &usage, &["costUsd", "cacheReadTokens", "cacheWriteTokens"])),
        (
            "mcp_server",
            e(
                "mcp_server",
                &[
                    ("name", name()),
                    ("status", json!({"enum": ["ready", "failed"]})),
                    ("transport", json!({"enum": ["stdio", "http"]})),
                    ("tools", json!({"description": "the tools offered to the model", "type": "integer", "minimum": 0})),
                    ("protocolVersion", json!({"description": "when ready: the MCP version agreed", "type": "string"})),
                    ("error", json!({"description": "when failed: why, with the last line of the server's stderr", "type": "string"})),
                ],
                &["protocolVersion", "error"],
            ),
        ),
        (
            "heartbeat",
            e(
                "heartbeat",
                &[
                    ("phase", json!({"enum": Phase::ALL})),
                    (
                        "elapsedMs",
                        json!({"description": "since the phase began", "type": "integer", "minimum": 0}),
                    ),
                    ("toolCallId", name()),
                ],
                &["toolCallId"],
            ),
        ),
        (
            "final",
            e(
                "final",
                &[
                    ("text", text()),
                    (
                        "structured",
                        json!({"description": "with --output-schema: the answer, which text holds as compact JSON; left out when it is null"}),
                    ),
                ],
                &["structured"],
            ),
        ),
        ("error", error_event(V2)),
        (
            "turn_end",
            e(
                "turn_end",
                &[
                    (
                        "turn",
                        json!({"description": "live mode: the user turn of this process, from 1", "type": "integer", "minimum": 1}),
                    ),
                    ("status", status()),
                ],
                &[],
            ),
        ),
        (
            "run_end",
            e(
                "run_end",
                &[
                    ("status", status()),
                    ("exitCode", exit_code()),
                    (
                        "eventCount",
                        json!({"description": "the lines of this process, this one included", "type": "integer", "minimum": 1}),
                    ),
                ],
                &[],
            ),
        ),
    ]
}

fn inputs_2() -> Events {
    let image = strict(
        Map::new(),
        Vec::new(),
        &[
            ("mediaType", json!({"enum": crate::protocol::images::MEDIA_TYPES})),
            (
                "data",
                json!({"description": "base64, at most 10 MiB decoded", "type": "string", "minLength": 1}),
            ),
        ],
        &[],
    );
    vec![
        ("prompt", event(V2, "prompt", false, &[("content", name())], &[])),
        (
            "message",
            event(
                V2,
                "message",
                false,
                &[
                    ("role", json!({"const": "user"})),
                    (
                        "content",
                        json!({"description": "may be empty when images are given", "type": "string"}),
                    ),
                    ("images", json!({"type": "array", "items": image})),
                ],
                &["images"],
            ),
        ),
        (
            "permission_response",
            event(
                V2,
                "permission_response",
                false,
                &[
                    ("requestId", name()),
                    ("decision", json!({"enum": ["allow", "deny", "allow_session"]})),
                    ("reason", text()),
                ],
                &["reason"],
            ),
        ),
    ]
}

/// The document: `$defs` for each event, and the output and input unions.
fn assemble(version: u8, outputs: Events, inputs: Events) -> Value {
    let mut defs = Map::new();
    let refs = |list: &Events, prefix: &str| -> Vec<Value> {
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
        "title": format!("zero stream-json, schema version {version}"),
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
        for (version, events) in [(SchemaVersion::V1, 13), (SchemaVersion::V2, 20)] {
            let doc = document(version);
            let version = version.number();
            let defs = doc["$defs"].as_object().unwrap();
            assert_eq!(defs.len(), events, "schema {version}: events and 2 unions");
            for (name, def) in defs {
                if name == "output" || name == "input" {
                    continue;
                }
                assert_eq!(def["additionalProperties"], false, "{name}");
                let kind = name.strip_prefix("input_").unwrap_or(name);
                assert_eq!(def["properties"]["type"]["const"], kind);
                assert_eq!(def["properties"]["schemaVersion"]["const"], version);
                let output = !name.starts_with("input_");
                assert_eq!(def["properties"]["seq"].is_object(), output && version == 2, "{name}");
            }
        }
        let two = document(SchemaVersion::V2);
        assert_eq!(
            two["$defs"]["usage"]["properties"]["cumulative"]["additionalProperties"],
            false
        );
        let image = &two["$defs"]["input_message"]["properties"]["images"]["items"];
        assert_eq!(image["additionalProperties"], false);
        assert!(SchemaVersion::from_number(3).is_none() && SchemaVersion::from_number(0).is_none());
    }
}
