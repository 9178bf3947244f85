//! A small JSON Schema (draft 2020-12) validator for the documents `zero schema` prints. It
//! covers the keywords those documents use and refuses any other, so a schema that starts
//! using one this validator does not check fails loudly instead of passing unchecked.

use serde_json::Value;

/// Checks `instance` against `schema`, resolving `$ref`s in `root`; the error names the path.
pub fn validate(root: &Value, schema: &Value, instance: &Value) -> Result<(), String> {
    check(root, schema, instance, "$")
}

fn check(root: &Value, schema: &Value, instance: &Value, at: &str) -> Result<(), String> {
    let Some(keywords) = schema.as_object() else {
        return match schema {
            Value::Bool(true) => Ok(()),
            Value::Bool(false) => Err(format!("{at}: nothing is allowed here")),
            _ => Err(format!("{at}: a schema must be an object or a boolean")),
        };
    };
    for (keyword, value) in keywords {
        match keyword.as_str() {
            // Annotations and the places references point into.
            "$schema" | "$defs" | "title" | "description" => {}
            "$ref" => {
                let target = resolve(root, value.as_str().unwrap_or(""))?;
                check(root, target, instance, at)?;
            }
            "type" => {
                let allowed: Vec<&str> = match value {
                    Value::String(one) => vec![one.as_str()],
                    Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
                    _ => return Err(format!("{at}: bad type keyword")),
                };
                if !allowed.iter().any(|t| has_type(instance, t)) {
                    return Err(format!("{at}: {instance} is not of type {allowed:?}"));
                }
            }
            "const" => {
                if !same(instance, value) {
                    return Err(format!("{at}: {instance} is not {value}"));
                }
            }
            "enum" => {
                let options = value.as_array().ok_or(format!("{at}: bad enum"))?;
                if !options.iter().any(|o| same(instance, o)) {
                    return Err(format!("{at}: {instance} is not one of {value}"));
                }
            }
            "minLength" => {
                if let Some(s) = instance.as_str() {
                    let min = value.as_u64().ok_or(format!("{at}: bad minLength"))?;
                    if (s.chars().count() as u64) < min {
                        return Err(format!("{at}: shorter than {min} characters"));
                    }
                }
            }
            "minItems" => {
                if let Some(list) = instance.as_array() {
                    let min = value.as_u64().ok_or(format!("{at}: bad minItems"))?;
                    if (list.len() as u64) < min {
                        return Err(format!("{at}: fewer than {min} items"));
                    }
                }
            }
            "minimum" => {
                if let Some(n) = instance.as_f64() {
                    let min = value.as_f64().ok_or(format!("{at}: bad minimum"))?;
                    if n < min {
                        return Err(format!("{at}: {n} is below {min}"));
                    }
                }
            }
            "properties" | "required" | "additionalProperties" => {
                if let Some(object) = instance.as_object() {
                    check_object(root, keywords, object, at)?;
                }
            }
            "items" => {
                if let Some(list) = instance.as_array() {
                    for (i, item) in list.iter().enumerate() {
                        check(root, value, item, &format!("{at}[{i}]"))?;
                    }
                }
            }
            "oneOf" => {
                let branches = value.as_array().ok_or(format!("{at}: bad oneOf"))?;
                let errors: Vec<String> =
                    branches.iter().filter_map(|b| check(root, b, instance, at).err()).collect();
                let passed = branches.len() - errors.len();
                if passed != 1 {
                    return Err(if passed == 0 {
                        format!("{at}: matches none of oneOf: {}", closest(&errors))
                    } else {
                        format!("{at}: matches {passed} branches of oneOf")
                    });
                }
            }
            other => return Err(format!("{at}: keyword {other:?} is not supported here")),
        }
    }
    Ok(())
}

/// `properties`, `required` and `additionalProperties` together (they are checked once, on
/// the first of them met).
fn check_object(
    root: &Value,
    keywords: &serde_json::Map<String, Value>,
    object: &serde_json::Map<String, Value>,
    at: &str,
) -> Result<(), String> {
    let empty = serde_json::Map::new();
    let properties = keywords.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    // The `type` const first, so that a oneOf branch for another event says so.
    if let (Some(schema), Some(value)) = (properties.get("type"), object.get("type")) {
        check(root, schema, value, &format!("{at}.type"))?;
    }
    for name in keywords.get("required").and_then(Value::as_array).into_iter().flatten() {
        let name = name.as_str().unwrap_or("");
        if !object.contains_key(name) {
            return Err(format!("{at}: missing {name:?}"));
        }
    }
    for (name, value) in object {
        let path = format!("{at}.{name}");
        match properties.get(name) {
            Some(schema) => check(root, schema, value, &path)?,
            None => {
                if let Some(extra) = keywords.get("additionalProperties") {
                    check(root, extra, value, &path)
                        .map_err(|_| format!("{at}: unknown field {name:?}"))?;
                }
            }
        }
    }
    Ok(())
}

fn resolve<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let pointer = reference.strip_prefix('#').ok_or(format!("only local $refs: {reference}"))?;
    root.pointer(pointer).ok_or(format!("$ref {reference} leads nowhere"))
}

fn has_type(instance: &Value, name: &str) -> bool {
    match name {
        "string" => instance.is_string(),
        "boolean" => instance.is_boolean(),
        "object" => instance.is_object(),
        "array" => instance.is_array(),
        "null" => instance.is_null(),
        "number" => instance.is_number(),
        "integer" => instance.as_f64().is_some_and(|n| n.fract() == 0.0),
        _ => false,
    }
}

/// JSON equality with 1 and 1.0 the same number, as JSON Schema has it.
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The branch error that got furthest (the one that is not about the `type` const).
fn closest(errors: &[String]) -> String {
    errors.iter().find(|e| !e.contains(".type:")).or(errors.first()).cloned().unwrap_or_default()
}

#[test]
fn the_validator_refuses_what_the_schema_forbids() {
    let schema: Value = serde_json::from_str(
        r##"{"$defs": {"e": {"type": "object", "properties": {"type": {"const": "e"},
            "n": {"type": "integer", "minimum": 0}, "s": {"enum": ["a", "b"]},
            "t": {"type": "string", "minLength": 1}}, "required": ["type", "n"],
            "additionalProperties": false}},
          "oneOf": [{"$ref": "#/$defs/e"}]}"##,
    )
    .unwrap();
    let ok = |text: &str| validate(&schema, &schema, &serde_json::from_str(text).unwrap());
    assert_eq!(ok(r#"{"type": "e", "n": 3, "s": "a", "t": "x"}"#), Ok(()));
    for bad in [
        r#"{"type": "f", "n": 3}"#,
        r#"{"type": "e"}"#,
        r#"{"type": "e", "n": -1}"#,
        r#"{"type": "e", "n": 1.5}"#,
        r#"{"type": "e", "n": 1, "s": "c"}"#,
        r#"{"type": "e", "n": 1, "t": ""}"#,
        r#"{"type": "e", "n": 1, "extra": true}"#,
        r#"[]"#,
    ] {
        assert!(ok(bad).is_err(), "accepted {bad}");
    }
    let unknown: Value = serde_json::from_str(r#"{"pattern": "^a"}"#).unwrap();
    assert!(validate(&unknown, &unknown, &Value::from("a")).is_err(), "an unchecked keyword");
}

#[test]
fn zero_schema_prints_a_strict_document_and_refuses_versions_it_does_not_speak() {
    let zero = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_zero")).args(args).output().unwrap()
    };
    let default = zero(&["schema"]);
    let one = zero(&["schema", "1"]);
    assert!(default.status.success() && default.stdout == one.stdout);
    let schema: Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    let output = &schema["$defs"]["output"];
    let line = |text: &str| validate(&schema, output, &serde_json::from_str(text).unwrap());
    let run = r#""schemaVersion":1,"runId":"run_20261201000000_a""#;
    assert_eq!(line(&format!(r#"{{{run},"type":"text","delta":"hi"}}"#)), Ok(()));
    assert_eq!(
        line(&format!(r#"{{{run},"type":"run_end","status":"success","exitCode":0}}"#)),
        Ok(())
    );
    for bad in [
        format!(r#"{{{run},"type":"text","delta":"hi","extra":1}}"#),
        format!(r#"{{{run},"type":"text"}}"#),
        format!(r#"{{{run},"type":"texts","delta":"hi"}}"#),
        format!(r#"{{{run},"type":"run_end","status":"done","exitCode":0}}"#),
        r#"{"schemaVersion":2,"runId":"r","type":"text","delta":"hi"}"#.to_string(),
    ] {
        assert!(line(&bad).is_err(), "accepted {bad}");
    }
    let input = &schema["$defs"]["input"];
    let prompt: Value =
        serde_json::from_str(r#"{"schemaVersion":1,"type":"prompt","content":"x"}"#).unwrap();
    assert_eq!(validate(&schema, input, &prompt), Ok(()));
    for version in ["3", "0", "two"] {
        let out = zero(&["schema", version]);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "[zero] zero schema: unsupported schema version \"{version}\"; supported: 1, 2, or config\n"
            )
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn accepted_input_lines_match_the_printed_input_events() {
    // The run helper checks them (tests/util.rs); this run makes sure there is one to check.
    let dir = crate::util::TestDir::new("schema-input");
    let script = dir.script(&serde_json::json!({"turns": [{"text": "done"}]}));
    let input = "\u{feff}{\"schemaVersion\":1,\"type\":\"message\",\"role\":\"user\",\"content\":\"a\"}\r\n\n{\"schemaVersion\":1,\"type\":\"prompt\",\"content\":\"b\"}\n";
    let script = script.display().to_string();
    let out = dir
        .zero()
        .args(&[
            "exec",
            "-i",
            "stream-json",
            "-o",
            "stream-json",
            "--provider",
            "scripted",
            "--script",
            &script,
        ])
        .stdin(input)
        .run();
    out.assert_code(0);
    assert_eq!(out.stream().last().unwrap()["status"], "success");
}
