//! `--output-schema`: a final answer that matches a JSON Schema, the same on every provider.
//! The model is offered a tool, `structured_output`, whose parameters are the schema (wrapped in
//! an object when it is not one), and told to finish by calling it. Valid arguments are the
//! answer; invalid ones go back to the model as the problems found. Provider-native strict
//! modes are not used: they refuse ordinary schemas, and Gemini's JSON mode refuses tools.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::conversation::ToolSpec;
use crate::error::Failure;
use crate::jsonschema::{Problem, Schema};

/// The tool's name.
pub const TOOL: &str = "structured_output";

pub const DESCRIPTION: &str = "Give the final answer of the task. Call this once, when the task is done, with the answer as the arguments; they must match the parameters' schema. Do not answer in text.";

/// What the system prompt adds.
pub const INSTRUCTION: &str = "When the task is done, give the final answer by calling the structured_output tool with the answer as its arguments, matching its schema exactly. Do not write the answer as text.";

/// The message a turn without the call gets.
pub const REMINDER: &str = "You have not given the answer. Call the structured_output tool now, with the answer as its arguments, matching its schema.";

/// A schema file is read up to this size.
const MAX_SCHEMA_FILE: u64 = 1024 * 1024;
/// The problems sent back for one call at most.
const MAX_PROBLEMS: usize = 10;

/// Where the schema comes from: the flag's JSON, or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaSource {
    Inline(String),
    File(PathBuf),
}

impl SchemaSource {
    /// `--output-schema`'s value: JSON when it starts with `{`, else a path.
    pub fn parse(value: &str) -> SchemaSource {
        if value.trim_start().starts_with('{') {
            SchemaSource::Inline(value.to_string())
        } else {
            SchemaSource::File(PathBuf::from(value))
        }
    }
}

/// A checked output schema and how it is offered.
#[derive(Debug, Clone)]
pub struct OutputSchema {
    schema: Schema,
    /// The schema is not an object's: the tool takes `{"value": ...}`.
    wrapped: bool,
    parameters: Value,
    /// sha256 of the schema's bytes as given.
    pub digest: String,
    /// Failed attempts (invalid calls and reminders) before the run fails.
    pub attempts: u32,
}

/// How an answer was judged.
pub enum Judged {
    Answer(Value),
    /// The problems, one per line, and the first of them.
    Invalid {
        problems: String,
        first: String,
    },
}

impl OutputSchema {
    /// Reads and checks the schema; every problem is a usage error.
    pub fn load(
        source: &SchemaSource,
        started_in: &Path,
        attempts: u32,
    ) -> Result<OutputSchema, Failure> {
        let usage = |m: String| Failure::Usage(m);
        let (bytes, named) = match source {
            SchemaSource::Inline(text) => {
                (text.clone().into_bytes(), "--output-schema".to_string())
            }
            SchemaSource::File(path) => {
                let path = started_in.join(path);
                let named = format!("--output-schema {}", path.display());
                let bytes = crate::sys::dirfd::read_small_file(&path, MAX_SCHEMA_FILE)
                    .map_err(|e| usage(format!("Cannot read {named}: {e}")))?;
                (bytes, named)
            }
        };
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            usage(format!(
                "{named} is not valid JSON: line {}, column {}: {e}",
                e.line(),
                e.column()
            ))
        })?;
        let schema = Schema::compile(value).map_err(|e| usage(format!("{named}: {e}")))?;
        // Only a plain object schema is offered as it is: the providers refuse a tool whose
        // parameters are not an object, or combine schemas at their top.
        let root = schema.value();
        let combined = ["anyOf", "oneOf", "allOf", "not", "enum", "const", "$ref"]
            .iter()
            .any(|k| root.get(k).is_some());
        let wrapped = root.get("type") != Some(&json!("object")) || combined;
        let parameters = if wrapped {
            let mut inner = schema.value().clone();
            retarget_refs(&mut inner);
            json!({"type": "object", "properties": {"value": inner}, "required": ["value"], "additionalProperties": false})
        } else {
            schema.value().clone()
        };
        Ok(OutputSchema {
            schema,
            wrapped,
            parameters,
            digest: crate::sha256::hex_digest(&bytes),
            attempts,
        })
    }

    /// The tool offered to the model.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: TOOL.into(),
            description: DESCRIPTION.into(),
            parameters: self.parameters.clone(),
            full_schema: true,
        }
    }

    /// The parameters as `--list-tools` shows them.
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// The answer in a call's arguments, or the problems found, with pointers into the answer
    /// as the model meant it (`/0`, not `/value/0`, when the schema is wrapped).
    pub fn judge(&self, arguments: &str) -> Judged {
        let invalid = |problems: Vec<Problem>| {
            let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
            Judged::Invalid {
                first: lines.first().cloned().unwrap_or_default(),
                problems: lines.join("\n"),
            }
        };
        let one = |message: String| invalid(vec![Problem { pointer: String::new(), message }]);
        let value: Value = match serde_json::from_str(arguments) {
            Ok(value) => value,
            Err(e) => return one(format!("the arguments are not valid JSON: {e}")),
        };
        let answer = if self.wrapped {
            match value {
                Value::Object(mut map) if map.len() == 1 && map.contains_key("value") => {
                    map.remove("value").unwrap_or(Value::Null)
                }
                _ => return one("give the answer as {\"value\": <the answer>}".to_string()),
            }
        } else {
            value
        };
        let problems = self.schema.validate(&answer, MAX_PROBLEMS);
        if problems.is_empty() {
            Judged::Answer(answer)
        } else {
            invalid(problems)
        }
    }
}

/// `#...` references of a schema moved under `/properties/value`, where wrapping puts it.
fn retarget_refs(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref") {
                if let Some(rest) = reference.strip_prefix('#') {
                    *reference = format!("#/properties/value{rest}");
                }
            }
            let keys: Vec<String> =
                map.keys().filter(|k| *k != "$ref" && !is_data(k)).cloned().collect();
            for key in keys {
                if let Some(child) = map.get_mut(&key) {
                    retarget_children(&key, child);
                }
            }
        }
        Value::Bool(_) | Value::Null | Value::Number(_) | Value::String(_) | Value::Array(_) => {}
    }
}

/// Keywords whose values are data, not schemas (`const`, `enum`, `default`, `examples`).
fn is_data(keyword: &str) -> bool {
    matches!(keyword, "const" | "enum" | "default" | "examples")
}

fn retarget_children(keyword: &str, value: &mut Value) {
    match keyword {
        "properties" | "$defs" => {
            if let Some(map) = value.as_object_mut() {
                map.values_mut().for_each(retarget_refs);
            }
        }
        "additionalProperties" | "items" | "not" => retarget_refs(value),
        "prefixItems" | "anyOf" | "oneOf" | "allOf" => {
            if let Some(list) = value.as_array_mut() {
                list.iter_mut().for_each(retarget_refs);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(schema: &str) -> OutputSchema {
        OutputSchema::load(&SchemaSource::parse(schema), Path::new("/"), 3).unwrap()
    }

    fn problems(schema: &OutputSchema, arguments: &str) -> String {
        match schema.judge(arguments) {
            Judged::Answer(a) => panic!("accepted {a}"),
            Judged::Invalid { problems, .. } => problems,
        }
    }

    #[test]
    fn an_object_schema_is_the_tool_as_it_is_and_others_are_wrapped() {
        let verdict = load(
            r#"{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}"#,
        );
        assert_eq!(verdict.spec().parameters, verdict.schema.value().clone());
        assert!(
            matches!(verdict.judge(r#"{"ok": true}"#), Judged::Answer(a) if a == json!({"ok": true}))
        );
        assert_eq!(
            problems(&verdict, r#"{"ok": "yes"}"#),
            "/ok: must be of type boolean, not a string"
        );
        assert_eq!(problems(&verdict, "{}"), "/: missing required property \"ok\"");
        let list = load(
            r##"{"type": "array", "items": {"$ref": "#/$defs/n"}, "$defs": {"n": {"type": "integer"}}}"##,
        );
        assert_eq!(
            list.spec().parameters,
            json!({"type": "object", "properties": {"value": {"type": "array", "items": {"$ref": "#/properties/value/$defs/n"}, "$defs": {"n": {"type": "integer"}}}}, "required": ["value"], "additionalProperties": false})
        );
        assert!(
            matches!(list.judge(r#"{"value": [1, 2]}"#), Judged::Answer(a) if a == json!([1, 2]))
        );
        assert_eq!(
            problems(&list, r#"{"value": [1, "x", 3.5]}"#),
            "/1: must be of type integer, not a string\n/2: must be of type integer, not a number"
        );
        assert_eq!(problems(&list, "[1]"), "/: give the answer as {\"value\": <the answer>}");
        assert!(problems(&list, "{not json").starts_with("/: the arguments are not valid JSON: "));
        // A data keyword's `$ref`-looking member is data, left alone.
        let data = load(r##"{"const": {"$ref": "#/x"}}"##);
        assert_eq!(
            data.spec().parameters["properties"]["value"],
            json!({"const": {"$ref": "#/x"}})
        );
    }

    #[test]
    fn an_object_schema_that_combines_at_its_top_is_wrapped() {
        let either = load(
            r#"{"type": "object", "properties": {"a": {"type": "integer"}}, "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}"#,
        );
        assert_eq!(either.spec().parameters["required"], json!(["value"]));
        assert!(
            matches!(either.judge(r#"{"value": {"a": 1}}"#), Judged::Answer(a) if a == json!({"a": 1}))
        );
    }

    #[test]
    fn the_digest_is_of_the_bytes_as_given() {
        let text = r#"{"type":"string"}"#;
        assert_eq!(load(text).digest, crate::sha256::hex_digest(text.as_bytes()));
        assert_ne!(load(r#"{"type": "string"}"#).digest, load(text).digest);
    }
}
