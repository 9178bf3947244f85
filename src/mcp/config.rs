//! MCP server configuration, in Claude Code's shape so users can reuse their files:
//! `{"mcpServers": {"<name>": <server>}}` from `--mcp-config` (a file or the JSON itself) and the
//! user config file. A stdio server is `{"command", "args", "env", "cwd"}`, a streamable HTTP one
//! `{"type": "http", "url", "headers"}`; either takes `required`, `trust`, `startupTimeoutMs`,
//! `toolTimeoutMs`, `enabledTools` and `disabledTools`. `${VAR}` expands from zero's environment
//! in `command`, `args`, `env`, `url` and `headers`, and every expanded value becomes a secret.
//! No project file is read: a cloned repository must not start processes.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

/// How zero talks to a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio { command: String, args: Vec<String>, env: Vec<(String, String)>, cwd: Option<PathBuf> },
    Http { url: String, headers: Vec<(String, String)> },
}

impl Transport {
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    /// A failed start fails the run (else it is a warning).
    pub required: bool,
    /// Its tools run without asking, whatever their annotations say.
    pub trust: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// Only these of the server's tools (`None`: all).
    pub enabled_tools: Option<Vec<String>>,
    pub disabled_tools: Vec<String>,
}

/// The servers of a run and the secrets their expansions produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Servers {
    pub servers: Vec<ServerConfig>,
    pub secrets: Vec<String>,
}

use crate::config::schema::{Key, Shape};

const fn key(name: &'static str, schema: &'static str, description: &'static str) -> Key {
    Key { name, schema, shape: Shape::Plain, description }
}

/// A server's keys, declared once: the reader refuses others, and `zero schema config`
/// describes `mcpServers` with them.
pub const SERVER: &[Key] = &[
    key(
        "type",
        r#"{"enum": ["stdio", "http", "streamable-http"]}"#,
        "stdio (the default without url) or http (the default with url).",
    ),
    key(
        "command",
        r#"{"type": "string", "minLength": 1}"#,
        "stdio: the program to start; ${VAR} and ${VAR:-default} expand.",
    ),
    key(
        "args",
        r#"{"type": "array", "items": {"type": "string"}}"#,
        "stdio: its arguments; ${VAR} expands.",
    ),
    key(
        "env",
        r#"{"type": "object", "additionalProperties": {"type": "string"}}"#,
        "stdio: variables added to its environment; ${VAR} expands.",
    ),
    key("cwd", r#"{"type": "string", "minLength": 1}"#, "stdio: the directory it starts in."),
    key(
        "url",
        r#"{"type": "string", "pattern": "^https?://"}"#,
        "http: the server's streamable HTTP endpoint; ${VAR} expands.",
    ),
    key(
        "headers",
        r#"{"type": "object", "additionalProperties": {"type": "string"}}"#,
        "http: headers sent with each request (Authorization...); ${VAR} expands.",
    ),
    key(
        "required",
        r#"{"type": "boolean", "default": false}"#,
        "A failed start fails the run (else it is a warning).",
    ),
    key(
        "trust",
        r#"{"type": "boolean", "default": false}"#,
        "Its tools run without asking, whatever their annotations say.",
    ),
    key(
        "startupTimeoutMs",
        r#"{"type": "integer", "minimum": 1, "maximum": 86400000, "default": 10000}"#,
        "How long it may take to start and list its tools.",
    ),
    key(
        "toolTimeoutMs",
        r#"{"type": "integer", "minimum": 1, "maximum": 86400000, "default": 60000}"#,
        "How long one tool call may take.",
    ),
    key(
        "enabledTools",
        r#"{"type": "array", "items": {"type": "string"}}"#,
        "Only these of its tools are offered.",
    ),
    key(
        "disabledTools",
        r#"{"type": "array", "items": {"type": "string"}}"#,
        "These of its tools are never offered.",
    ),
];

/// The longest timeout a server may ask for: a day.
const MAX_TIMEOUT_MS: u64 = 86_400_000;

/// A server name: `[A-Za-z0-9_-]{1,32}`, without `__`, which separates the server from the
/// tool in `mcp__<server>__<tool>` (so `mcp__a__b` names one server's tools, not also the
/// tools of a server `a__b`).
pub fn valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !name.contains("__")
}

/// What is wrong with an MCP configuration, by kind; the message names the source and field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpConfigError {
    /// A `--mcp-config` file cannot be read (missing, not a regular file, too large, not UTF-8).
    Unreadable(String),
    /// It is not JSON.
    NotJson(String),
    /// A server's field is not what it may be.
    Invalid(String),
}

crate::error::message_error!(McpConfigError: Unreadable, NotJson, Invalid);

impl McpConfigError {
    /// The same error, its message prefixed with where it was found.
    fn within(self, at: &str) -> McpConfigError {
        let prefix = |message: String| format!("{at}: {message}");
        match self {
            McpConfigError::Unreadable(m) => McpConfigError::Unreadable(prefix(m)),
            McpConfigError::NotJson(m) => McpConfigError::NotJson(prefix(m)),
            McpConfigError::Invalid(m) => McpConfigError::Invalid(prefix(m)),
        }
    }
}

/// A field's check says what is wrong with it in words: those are `Invalid`.
impl From<String> for McpConfigError {
    fn from(message: String) -> McpConfigError {
        McpConfigError::Invalid(message)
    }
}

impl From<&str> for McpConfigError {
    fn from(message: &str) -> McpConfigError {
        McpConfigError::Invalid(message.to_string())
    }
}

/// Zero's environment, as the expansions read it.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Expands `${VAR}` and `${VAR:-default}` from the environment; an unset or empty variable
/// without a default is an error naming it. `$` not followed by `{` stays as it is. A default
/// is written in the configuration, so it is not a secret; an expanded variable's value is.
fn expand(
    text: &str,
    env: Lookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<String, McpConfigError> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("\"${{\" without a closing \"}}\" in {text:?}"))?;
        // `${VAR:-default}`: the default when VAR is unset or empty, as Claude Code reads it.
        let (name, default) = match after[..end].split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (&after[..end], None),
        };
        let value = match (env(name).filter(|v| !v.is_empty()), default) {
            (Some(value), _) => {
                secrets.push(value.clone());
                value
            }
            (None, Some(default)) => default.to_string(),
            (None, None) => {
                return Err(McpConfigError::Invalid(format!(
                    "the variable {name} is not set (or is empty)"
                )))
            }
        };
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The servers of a run: the user config file's `mcpServers` (`user`: its value and the file's
/// path; left out with `--strict-mcp-config`), then each `--mcp-config` in order, a later
/// source replacing a server of the same name. A flag's value starting with `{` is the JSON
/// itself; otherwise it is a file, relative to the directory zero was started in.
pub fn resolve(
    flags: &[String],
    strict: bool,
    user: Option<(&Value, &str)>,
    env: Lookup<'_>,
    started_in: &std::path::Path,
) -> Result<Servers, McpConfigError> {
    let mut servers = Servers::default();
    if let (Some((value, path)), false) = (user, strict) {
        let wrapped = serde_json::json!({ "mcpServers": value });
        add_servers(&mut servers, &wrapped, &format!("Config {path}"), env)?;
    }
    for flag in flags {
        let text = flag.trim_start();
        let (origin, text) = if text.starts_with('{') {
            ("--mcp-config".to_string(), text.to_string())
        } else {
            let path = started_in.join(flag);
            let origin = format!("--mcp-config {}", path.display());
            (origin.clone(), read_file(&path).map_err(|why| why.within(&origin))?)
        };
        let value: Value = serde_json::from_str(&text)
            .map_err(|err| McpConfigError::NotJson(format!("{origin}: not JSON: {err}")))?;
        add_servers(&mut servers, &value, &origin, env)?;
    }
    Ok(servers)
}

/// A configuration file: regular, at most 1 MiB, UTF-8.
fn read_file(path: &std::path::Path) -> Result<String, McpConfigError> {
    crate::config::read_flag_file(path).map_err(|e| McpConfigError::Unreadable(e.to_string()))
}

/// The `mcpServers` object of one source (`origin` names it in errors); later sources replace
/// a server of the same name.
pub fn add_servers(
    into: &mut Servers,
    value: &Value,
    origin: &str,
    env: Lookup<'_>,
) -> Result<(), McpConfigError> {
    let Some(object) = value.as_object() else {
        return Err(McpConfigError::Invalid(format!(
            "{origin}: expected a JSON object with mcpServers"
        )));
    };
    let servers = match object.get("mcpServers") {
        Some(Value::Object(map)) => map,
        Some(_) => {
            return Err(McpConfigError::Invalid(format!(
                "{origin}: mcpServers must be an object of servers"
            )))
        }
        None => return Err(McpConfigError::Invalid(format!("{origin}: no mcpServers object"))),
    };
    for (name, server) in servers {
        let config = server_config(name, server, env, &mut into.secrets)
            .map_err(|e| e.within(&format!("{origin}: mcpServers.{name}")))?;
        into.servers.retain(|s| s.name != config.name);
        into.servers.push(config);
    }
    Ok(())
}

fn server_config(
    name: &str,
    value: &Value,
    env: Lookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<ServerConfig, McpConfigError> {
    if !valid_name(name) {
        return Err(McpConfigError::Invalid(
            "a server name is 1 to 32 letters, digits, '_' or '-', without \"__\"".to_string(),
        ));
    }
    let map = value.as_object().ok_or("must be an object")?;
    let known = crate::config::schema::names(SERVER);
    if let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(McpConfigError::Invalid(format!(
            "unknown field \"{key}\"{}",
            crate::text::did_you_mean(key, &known)
        )));
    }
    let transport = transport(map, env, secrets)?;
    let flag = |key: &str| match map.get(key) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(McpConfigError::Invalid(format!("{key} must be true or false"))),
    };
    let millis = |key: &str, default: u64| match map.get(key) {
        None => Ok(Duration::from_millis(default)),
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=MAX_TIMEOUT_MS).contains(n))
            .map(Duration::from_millis)
            .ok_or(format!("{key} must be milliseconds from 1 to {MAX_TIMEOUT_MS}")),
    };
    literal_secrets(&transport, secrets);
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        required: flag("required")?,
        trust: flag("trust")?,
        startup_timeout: millis("startupTimeoutMs", 10_000)?,
        tool_timeout: millis("toolTimeoutMs", 60_000)?,
        enabled_tools: map
            .contains_key("enabledTools")
            .then(|| strings(map, "enabledTools"))
            .transpose()?,
        disabled_tools: strings(map, "disabledTools")?,
    })
}

/// A server's transport: a command to start (stdio) or a URL to reach (http).
fn transport(
    map: &serde_json::Map<String, Value>,
    env: Lookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<Transport, McpConfigError> {
    let text = |key: &str| -> Result<Option<&str>, McpConfigError> {
        match map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s)),
            Some(_) => Err(McpConfigError::Invalid(format!("{key} must be a non-empty string"))),
        }
    };
    let kind = text("type")?.unwrap_or(if map.contains_key("url") { "http" } else { "stdio" });
    match kind {
        "stdio" => {
            let command = text("command")?.ok_or("command is required for a stdio server")?;
            let args = strings(map, "args")?
                .iter()
                .map(|a| expand(a, env, secrets))
                .collect::<Result<_, _>>()?;
            let cwd = text("cwd")?.map(PathBuf::from);
            if map.contains_key("url") || map.contains_key("headers") {
                return Err(McpConfigError::Invalid(
                    "url and headers belong to an http server (\"type\": \"http\")".to_string(),
                ));
            }
            Ok(Transport::Stdio {
                command: expand(command, env, secrets)?,
                args,
                env: pairs(map, "env", env, secrets)?,
                cwd,
            })
        }
        "http" | "streamable-http" => {
            let url =
                expand(text("url")?.ok_or("url is required for an http server")?, env, secrets)?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(McpConfigError::Invalid(
                    "url must be an http:// or https:// URL".to_string(),
                ));
            }
            if ["command", "args", "env", "cwd"].iter().any(|k| map.contains_key(*k)) {
                return Err(McpConfigError::Invalid(
                    "command, args, env and cwd belong to a stdio server".to_string(),
                ));
            }
            Ok(Transport::Http { url, headers: pairs(map, "headers", env, secrets)? })
        }
        other => Err(McpConfigError::Invalid(format!(
            "type must be \"stdio\" or \"http\", not \"{other}\""
        ))),
    }
}

/// Secrets written into the configuration itself, not through `${VAR}` (a copied config often
/// holds them): values of variables and headers whose names say they are secret, the
/// credential of an `Authorization` header, and a URL's password.
fn literal_secrets(transport: &Transport, secrets: &mut Vec<String>) {
    let named = match transport {
        Transport::Stdio { env, .. } => env,
        Transport::Http { headers, .. } => headers,
    };
    for (name, value) in named {
        let header = matches!(transport, Transport::Http { .. });
        let secret_name = crate::redact::is_secret_env_name(name)
            || (header && crate::redact::is_sensitive_key(name));
        if secret_name {
            secrets.push(value.clone());
            // `Bearer <token>`: the token alone is a secret too.
            if let Some((_, credential)) = value.trim().rsplit_once(' ') {
                secrets.push(credential.to_string());
            }
        }
    }
    if let Transport::Http { url, .. } = transport {
        let authority =
            url.split_once("://").map_or("", |(_, rest)| rest.split('/').next().unwrap_or(""));
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            if let Some((_, password)) = userinfo.split_once(':') {
                secrets.push(password.to_string());
            }
        }
    }
}

/// A list of strings (none when absent).
fn strings(map: &Map<String, Value>, key: &str) -> Result<Vec<String>, McpConfigError> {
    match map.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    McpConfigError::Invalid(format!("{key} must be an array of strings"))
                })
            })
            .collect(),
        Some(_) => Err(McpConfigError::Invalid(format!("{key} must be an array of strings"))),
    }
}

/// An object of string values (`env`, `headers`), expanded.
fn pairs(
    map: &Map<String, Value>,
    key: &str,
    env: Lookup<'_>,
    secrets: &mut Vec<String>,
) -> Result<Vec<(String, String)>, McpConfigError> {
    match map.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Object(values)) => values
            .iter()
            .map(|(name, value)| match value {
                Value::String(s) => Ok((name.clone(), expand(s, env, secrets)?)),
                _ => Err(McpConfigError::Invalid(format!("{key}.{name} must be a string"))),
            })
            .collect(),
        Some(_) => Err(McpConfigError::Invalid(format!("{key} must be an object of strings"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret-token".to_string()),
            "HOME" => Some("/home/u".to_string()),
            _ => None,
        }
    }

    fn parse(value: Value) -> Result<Servers, McpConfigError> {
        let mut servers = Servers::default();
        add_servers(&mut servers, &value, "--mcp-config", &env)?;
        Ok(servers)
    }

    #[test]
    fn stdio_and_http_servers_with_their_options_and_expansions() {
        let servers = parse(json!({"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server", "${HOME}/src"], "env": {"API": "${TOKEN}"}, "required": true, "toolTimeoutMs": 5000, "enabledTools": ["read"]},
            "web": {"type": "http", "url": "https://mcp.example/${TOKEN}", "headers": {"Authorization": "Bearer ${TOKEN}"}, "trust": true}
        }}))
        .unwrap();
        assert_eq!(servers.servers.len(), 2);
        let files = &servers.servers[0];
        assert_eq!(
            files.transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server".into(), "/home/u/src".into()],
                env: vec![("API".into(), "s3cret-token".into())],
                cwd: None
            }
        );
        assert!(files.required && !files.trust);
        assert_eq!(
            (files.tool_timeout, files.startup_timeout),
            (Duration::from_millis(5000), Duration::from_secs(10))
        );
        assert_eq!(files.enabled_tools, Some(vec!["read".to_string()]));
        let web = &servers.servers[1];
        assert_eq!(web.transport.name(), "http");
        assert!(web.trust);
        assert!(servers
            .secrets
            .iter()
            .all(|s| ["/home/u", "s3cret-token", "Bearer s3cret-token"].contains(&s.as_str())));
        assert!(servers.secrets.contains(&"s3cret-token".to_string()));
    }

    #[test]
    fn errors_name_the_source_the_server_and_the_field() {
        let err = |v: Value| parse(v).unwrap_err();
        assert_eq!(
            err(json!({"mcpServers": {"a b": {"command": "x"}}})),
            "--mcp-config: mcpServers.a b: a server name is 1 to 32 letters, digits, '_' or '-', without \"__\"".into()
        );
        assert_eq!(
            err(json!({"mcpServers": {"s": {"comand": "x"}}})),
            "--mcp-config: mcpServers.s: unknown field \"comand\" (did you mean \"command\"?)"
                .into()
        );
        assert_eq!(
            err(json!({"mcpServers": {"s": {"args": []}}})),
            "--mcp-config: mcpServers.s: command is required for a stdio server".into()
        );
        assert_eq!(
            err(json!({"mcpServers": {"s": {"command": "${NOPE}"}}})),
            "--mcp-config: mcpServers.s: the variable NOPE is not set (or is empty)".into()
        );
        assert_eq!(
            err(json!({"mcpServers": {"s": {"type": "http", "url": "ftp://x"}}})),
            "--mcp-config: mcpServers.s: url must be an http:// or https:// URL".into()
        );
        assert_eq!(
            err(json!({"mcpServers": {"s": {"command": "x", "toolTimeoutMs": 0}}})),
            "--mcp-config: mcpServers.s: toolTimeoutMs must be milliseconds from 1 to 86400000"
                .into()
        );
        assert_eq!(
            err(json!({"mcpServers": {"s": {"type": "sse", "url": "http://x"}}})),
            "--mcp-config: mcpServers.s: type must be \"stdio\" or \"http\", not \"sse\"".into()
        );
        assert_eq!(err(json!({"servers": {}})), "--mcp-config: no mcpServers object".into());
        assert_eq!(
            err(json!({"mcpServers": {"s": {"command": "x", "env": {"A": 1}}}})),
            "--mcp-config: mcpServers.s: env.A must be a string".into()
        );
    }

    #[test]
    fn secrets_written_into_the_configuration_are_secrets() {
        let servers = parse(json!({"mcpServers": {
            "s": {"command": "x", "env": {"GITHUB_TOKEN": "ghp_literal0123", "LOG_LEVEL": "info"}},
            "w": {"url": "https://me:pa55word@mcp.example/x", "headers": {"Authorization": "Bearer tok-literal-99", "X-Team": "zero"}}
        }}))
        .unwrap();
        let mut secrets = servers.secrets.clone();
        secrets.sort();
        assert_eq!(
            secrets,
            ["Bearer tok-literal-99", "ghp_literal0123", "pa55word", "tok-literal-99"]
        );
        assert!(parse(json!({"mcpServers": {"a__b": {"command": "x"}}})).is_err());
    }

    #[test]
    fn a_default_stands_in_for_an_unset_variable() {
        let servers = parse(
            json!({"mcpServers": {"s": {"command": "${NOPE:-/bin/srv}", "args": ["${HOME:-/x}"]}}}),
        )
        .unwrap();
        assert_eq!(
            servers.servers[0].transport,
            Transport::Stdio {
                command: "/bin/srv".into(),
                args: vec!["/home/u".into()],
                env: vec![],
                cwd: None
            }
        );
        assert_eq!(servers.secrets, ["/home/u"]);
    }

    #[test]
    fn a_later_source_replaces_a_server_of_the_same_name() {
        let mut servers = Servers::default();
        add_servers(
            &mut servers,
            &json!({"mcpServers": {"a": {"command": "one"}, "b": {"command": "b"}}}),
            "config",
            &env,
        )
        .unwrap();
        add_servers(
            &mut servers,
            &json!({"mcpServers": {"a": {"command": "two"}}}),
            "--mcp-config",
            &env,
        )
        .unwrap();
        let names: Vec<(&str, &Transport)> =
            servers.servers.iter().map(|s| (s.name.as_str(), &s.transport)).collect();
        assert_eq!(names.len(), 2);
        assert_eq!(names[1].0, "a");
        assert!(matches!(names[1].1, Transport::Stdio { command, .. } if command == "two"));
    }
}
