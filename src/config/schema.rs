//! The config file's keys, declared once: the reader checks names against these tables, and
//! `zero schema config` prints them as a JSON Schema (draft 2020-12) for editors. A test reads
//! the reader's source and fails when it reads a key no table describes, or the reverse.

use serde_json::{json, Map, Value};

/// One key of an object in the config file.
pub struct Key {
    pub name: &'static str,
    /// Its JSON Schema, as JSON text, without the description (nested objects: [`Shape`]).
    pub schema: &'static str,
    pub shape: Shape,
    pub description: &'static str,
}

/// What a key's value holds beyond its own schema.
pub enum Shape {
    Plain,
    /// An array of objects with these keys (the first `required` of them required).
    ListOf {
        keys: &'static [Key],
        required: &'static [&'static str],
    },
    /// An object whose values are objects with these keys (the names are checked by the
    /// reader: `propertyNames` is outside what zero's validator supports).
    MapOf {
        keys: &'static [Key],
    },
}

const fn key(name: &'static str, schema: &'static str, description: &'static str) -> Key {
    Key { name, schema, shape: Shape::Plain, description }
}

/// The names of these keys, for the reader's "unknown key" checks.
pub fn names(keys: &[Key]) -> Vec<&'static str> {
    keys.iter().map(|k| k.name).collect()
}

const INT_TOKENS: &str = r#"{"type": "integer", "minimum": 1, "maximum": 10000000}"#;
const OPENAI_API: &str = r#"{"enum": ["chat", "chat-completions", "responses"]}"#;
const STRINGS: &str = r#"{"type": "array", "items": {"type": "string"}}"#;

/// The top level of `config.json`.
pub const TOP_LEVEL: &[Key] = &[
    key("activeProvider", r#"{"type": "string"}"#, "The name of the providers entry a run uses, unless --provider, -m or ZERO_PROVIDER says otherwise; it must name an entry."),
    Key { name: "providers", schema: r#"{"type": "array"}"#, shape: Shape::ListOf { keys: PROVIDER, required: &["name"] }, description: "Named provider profiles: a provider kind, base URL, key and model each." },
    key("maxTurns", r#"{"type": "integer", "minimum": 1, "maximum": 100, "default": 12}"#, "Model turns before a run gives up (--max-turns)."),
    key("maxOutputTokens", INT_TOKENS, "Output tokens per model call, for every profile that sets none (--max-output-tokens)."),
    key("openaiApi", OPENAI_API, "Which OpenAI API the OpenAI-style providers speak: chat completions or responses."),
    Key { name: "models", schema: r#"{"type": "array"}"#, shape: Shape::ListOf { keys: MODEL, required: &["id", "provider"] }, description: "Models added to the registry, or replacing a built-in one of the same id." },
    key("projectInstructions", r#"{"type": "boolean", "default": true}"#, "Read AGENTS.md files: the user's and the repository's (--no-project-instructions)."),
    key("promptCache", r#"{"type": "boolean", "default": true}"#, "Mark prompt-cache breakpoints (Anthropic) and send cache keys (OpenAI)."),
    key("maxBudgetUsd", r#"{"type": "number", "exclusiveMinimum": 0, "maximum": 1000000}"#, "The most a run may spend, in dollars (--max-budget-usd)."),
    key("addDirs", r#"{"type": "array", "items": {"type": "string", "pattern": "^(/|~/)"}}"#, "Extra roots for the file tools: absolute paths, or under ~/ (--add-dir)."),
    key("contextWindow", r#"{"type": "integer", "minimum": 1000, "maximum": 100000000}"#, "The context window of a model the registry does not know, in tokens."),
    Key { name: "mcpServers", schema: r#"{"type": "object"}"#, shape: Shape::MapOf { keys: crate::mcp::config::SERVER }, description: "MCP servers every run starts, by name (1 to 32 letters, digits, _ or -, without __), as Claude Code's and Cursor's mcpServers." },
    key("sandbox", r#"{"enum": ["off", "read-only", "workspace-write"], "default": "workspace-write"}"#, "Where bash may write (--sandbox)."),
    key("sandboxNetwork", r#"{"enum": ["on", "off"], "default": "on"}"#, "Whether bash's commands may open network sockets (--sandbox-network)."),
    key("planMode", r#"{"type": "boolean"}"#, "Read by Zero's Go version; accepted and not used by this zero."),
    key("debug", r#"{"type": "boolean"}"#, "Read by Zero's Go version; accepted and not used by this zero."),
];

/// An entry of `providers`.
pub const PROVIDER: &[Key] = &[
    key(
        "name",
        r#"{"type": "string", "minLength": 1, "pattern": "\\S"}"#,
        "The profile's name, for activeProvider and -m.",
    ),
    key(
        "provider",
        r#"{"enum": ["openai", "anthropic", "google", "gemini", "openai-compatible", "azure", "azure-openai"]}"#,
        "The provider kind; openai-compatible needs baseURL and model, azure needs baseURL.",
    ),
    key(
        "baseURL",
        r#"{"type": "string", "pattern": "^https?://"}"#,
        "The API's base URL (optional for the official providers).",
    ),
    key(
        "apiKey",
        r#"{"type": "string"}"#,
        "The key; an environment variable holding it is safer (OPENAI_API_KEY, ...).",
    ),
    key(
        "model",
        r#"{"type": "string"}"#,
        "The model a run uses with this profile (default: the provider's).",
    ),
    key("description", r#"{"type": "string"}"#, "Shown by zero config."),
    key("maxOutputTokens", INT_TOKENS, "Output tokens per model call with this profile."),
    key("openaiApi", OPENAI_API, "Which OpenAI API this profile speaks."),
];

const EFFORTS: &str = r#"{"type": "array", "items": {"enum": ["none", "minimal", "low", "medium", "high", "xhigh"]}}"#;

/// An entry of `models`.
pub const MODEL: &[Key] = &[
    key("id", r#"{"type": "string", "minLength": 1, "pattern": "\\S"}"#, "The model's id, as -m takes it (lower case)."),
    key("provider", r#"{"enum": ["openai", "anthropic", "google", "gemini", "openai-compatible", "azure", "azure-openai"]}"#, "The vendor family whose API the model speaks."),
    key("apiModel", r#"{"type": "string", "minLength": 1}"#, "The name sent to the API (default: the id)."),
    key("aliases", STRINGS, "Other names -m takes for it."),
    key("contextWindow", r#"{"type": "integer", "minimum": 1, "maximum": 100000000, "default": 128000}"#, "Its context window, in tokens."),
    key("maxOutputTokens", r#"{"type": "integer", "minimum": 1, "maximum": 100000000, "default": 4096}"#, "Its output limit per call, in tokens."),
    key("reasoningEfforts", EFFORTS, "The reasoning efforts it accepts (-r)."),
    key("prices", r#"{"type": "object", "required": ["input", "output"], "properties": {"input": {"type": "number", "minimum": 0, "maximum": 1000000}, "output": {"type": "number", "minimum": 0, "maximum": 1000000}, "cachedInput": {"type": "number", "minimum": 0, "maximum": 1000000}}, "additionalProperties": false}"#, "Dollars per million tokens: input, output, and cachedInput; without prices no cost is reported and --max-budget-usd cannot be used."),
];

/// The schema of an object with these keys.
fn object(keys: &[Key], required: &[&str]) -> Value {
    let mut properties = Map::new();
    // For editors: zero accepts and ignores it (and any other key starting with `$`).
    properties.insert("$schema".into(), json!({"type": "string"}));
    for key in keys {
        properties.insert(key.name.to_string(), property(key));
    }
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

fn property(key: &Key) -> Value {
    // The tables are this file's constants, checked by a test: a broken one is a bug here.
    let mut schema: Value = serde_json::from_str(key.schema).unwrap_or_else(|_| json!({}));
    match &key.shape {
        Shape::Plain => {}
        Shape::ListOf { keys, required } => schema["items"] = object(keys, required),
        Shape::MapOf { keys } => schema["additionalProperties"] = object(keys, &[]),
    }
    schema["description"] = json!(key.description);
    schema
}

/// `zero schema config`.
pub fn document() -> Value {
    let mut schema = object(TOP_LEVEL, &[]);
    let mut root = Map::new();
    root.insert("$schema".into(), json!("https://json-schema.org/draft/2020-12/schema"));
    root.insert("title".into(), json!("zero's user config file (~/.config/zero/config.json)"));
    if let Value::Object(rest) = schema.take() {
        root.extend(rest);
    }
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonschema::Schema;
    use std::collections::BTreeSet;

    fn schema() -> Schema {
        Schema::compile(document()).unwrap()
    }

    fn valid(schema: &Schema, config: &Value) -> Result<(), String> {
        match schema.validate(config, 5).as_slice() {
            [] => Ok(()),
            problems => Err(format!("{problems:?}")),
        }
    }

    /// The keys a reader's source reads: each lower-case literal passed to a reading helper
    /// (`get("x")`, `text("x", ..)`, `strings(map, "x")`...) or listed in a `for key in [..]`.
    fn keys_read(source: &str) -> BTreeSet<String> {
        let readers = [
            "get(",
            "text(",
            "count(",
            "rate(",
            "flag(",
            "millis(",
            "contains_key(",
            "map, ",
            "switch(map.get(",
        ];
        let mut keys = BTreeSet::new();
        let mut from = 0;
        while let Some(at) = source[from..].find('"').map(|at| from + at) {
            let before = &source[..at];
            let Some(end) = source[at + 1..].find('"').map(|end| at + 1 + end) else { break };
            let literal = &source[at + 1..end];
            let is_key = literal.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && literal.chars().all(|c| c.is_ascii_alphabetic());
            let line = before.rsplit('\n').next().unwrap_or_default();
            let listed = (before.ends_with('[') || before.ends_with(", "))
                && (line.contains("for key in [") || line.contains(".iter().any("));
            if is_key && (readers.iter().any(|r| before.ends_with(r)) || listed) {
                keys.insert(literal.to_string());
            }
            from = end + 1;
        }
        keys
    }

    fn read_source(path: &str) -> String {
        std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    #[test]
    fn the_schema_describes_exactly_the_keys_the_readers_read() {
        let described = |tables: &[&[Key]]| -> BTreeSet<String> {
            tables.iter().flat_map(|t| t.iter().map(|k| k.name.to_string())).collect()
        };
        let mut file = described(&[TOP_LEVEL, PROVIDER, MODEL]);
        // `prices`' members are in its own schema text.
        file.extend(["input", "output", "cachedInput"].map(String::from));
        assert_eq!(keys_read(&read_source("src/config/file.rs")), file);
        let mut mcp = described(&[crate::mcp::config::SERVER]);
        mcp.insert("mcpServers".into());
        assert_eq!(keys_read(&read_source("src/mcp/config.rs")), mcp);
        // Every table entry's schema is JSON, and the document compiles.
        for table in [TOP_LEVEL, PROVIDER, MODEL, crate::mcp::config::SERVER] {
            for key in table {
                assert!(serde_json::from_str::<Value>(key.schema).is_ok(), "{}", key.name);
            }
        }
        schema();
    }

    /// The config files in the README (```json config blocks) and those the tests write.
    fn example_configs() -> Vec<(String, String)> {
        let mut found = Vec::new();
        let readme = read_source("README.md");
        let mut rest = readme.as_str();
        while let Some(at) = rest.find("```json config\n") {
            let body = &rest[at + 15..];
            let end = body.find("```").unwrap();
            found.push(("README".to_string(), body[..end].to_string()));
            rest = &body[end..];
        }
        let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
        for entry in std::fs::read_dir(tests).unwrap() {
            let path = entry.unwrap().path();
            let source = std::fs::read_to_string(&path).unwrap_or_default();
            let mut rest = source.as_str();
            while let Some(at) = rest.find("config/zero/config.json\",") {
                let body = rest[at + 25..].trim_start();
                if let Some(raw) = body.strip_prefix("r#\"") {
                    let end = raw.find("\"#").unwrap();
                    found.push((path.display().to_string(), raw[..end].to_string()));
                } else if let Some(plain) = body.strip_prefix('"') {
                    let end = plain.find("\",").or_else(|| plain.find("\")")).unwrap();
                    let text = plain[..end].replace("\\\"", "\"").replace("\\n", "\n");
                    found.push((path.display().to_string(), text));
                }
                rest = &rest[at + 25..];
            }
        }
        found
    }

    #[test]
    fn every_config_example_zero_accepts_matches_the_schema_and_a_misspelt_key_does_not() {
        let schema = schema();
        let mut checked = 0;
        for (place, text) in example_configs() {
            let Ok(config) = super::super::file::parse_config_bytes(text.as_bytes()) else {
                continue;
            };
            let value: Value = serde_json::from_str(&text).unwrap();
            if config.warnings.is_empty() {
                valid(&schema, &value).unwrap_or_else(|p| panic!("{place}: {text}: {p}"));
                checked += 1;
            } else {
                assert!(valid(&schema, &value).is_err(), "{place}: {text} warns but is valid");
            }
        }
        assert!(checked >= 8, "{checked} examples");
        let misspelt = json!({"maxTurn": 5});
        assert!(valid(&schema, &misspelt).is_err());
        let misspelt = json!({"mcpServers": {"fs": {"command": "x", "arg": []}}});
        assert!(valid(&schema, &misspelt).is_err());
        let with_schema = json!({"$schema": "https://example.invalid/config.json", "maxTurns": 5});
        valid(&schema, &with_schema).unwrap();
        let config = super::super::file::parse_config_bytes(with_schema.to_string().as_bytes());
        assert!(config.unwrap().warnings.is_empty(), "$schema is accepted and ignored");
    }
}
