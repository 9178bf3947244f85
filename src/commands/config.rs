//! `zero config [--json]`: the configuration a run here would use, and the layer each value
//! comes from (`defaults`, the `user` file, `env`, the `provider-command`), in Zero's
//! shape (`ok`, `effective`, `layers`, `provider{configured, source, model, apiKey}`, `issues`).
//! Secrets are redacted. Exit 0 when a run could start, 3 when it could not.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::{print, print_json, Object};
use crate::clock::Utc;
use crate::config::{self, Choice, Env, Origin, ProviderKind, Runtime, UserConfig};
use crate::error::Exit;
use crate::error::Failure;
use crate::redact::Redactor;

/// The turn limit when nothing sets one.
const DEFAULT_MAX_TURNS: u32 = 12;

/// What `zero config` found: the report, and the redactor that knows every key in it.
pub(super) struct Inspection {
    /// Redacted.
    pub report: Object,
    pub redactor: Redactor,
    pub user_config: Result<Option<UserConfig>, Failure>,
    pub runtime: Result<Runtime, Failure>,
}

/// `zero config`.
pub fn config(json: bool, env: &Env) -> Exit {
    let inspection = inspect(env);
    let report = &inspection.report;
    let ok = report.0.iter().any(|(k, v)| *k == "ok" && *v == Value::Bool(true));
    let written = if json {
        print_json(report)
    } else {
        let value: Map<String, Value> =
            report.0.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        print(&inspection.redactor.redact_str(&format_text(&Value::Object(value))))
    };
    match (written, ok) {
        (Exit::Success, true) => Exit::Success,
        (Exit::Success, false) => Exit::Setup,
        (failed, _) => failed,
    }
}

/// Reads the configuration as a run would (the provider command included) and describes it.
pub(super) fn inspect(env: &Env) -> Inspection {
    let mut redactor = Redactor::new(env.secret_values());
    let mut found = Findings::default();
    found.layers.push(json!({
        "source": "defaults",
        "status": "loaded",
        "present": true,
        "config": {"maxTurns": DEFAULT_MAX_TURNS},
    }));
    let path = config::config_path(env).map(|p| p.display().to_string());
    let user_config = config::load_user_config(env);
    found.file_layer(&user_config, &path, &mut redactor);
    let loaded = user_config.as_ref().ok().and_then(Option::as_ref);
    found.env_layer(env, loaded);
    let runtime = match &user_config {
        Ok(_) => config::resolve(env, loaded, &Choice::default()),
        Err(failure) => Err(failure.clone()),
    };
    let mut effective = found.effective(env, loaded);
    effective["mcpServers"] = mcp_servers(env, loaded, &path, &mut redactor, &mut found);
    let provider = match &runtime {
        Ok(runtime) => {
            redactor.add_secrets_min(runtime.api_key.clone(), 4);
            provider_report(runtime, env, loaded)
        }
        Err(failure) => {
            if user_config.is_ok() {
                found.issue("provider.config", "error", "provider", &failure.message(), &None);
            }
            json!({"configured": false, "source": "none"})
        }
    };
    let ok = !found.issues.iter().any(|i| i["severity"] == "error");
    let r = |value: Value| redactor.redact_value(value);
    let report = Object(vec![
        ("generatedAt", json!(Utc::now().iso())),
        ("ok", json!(ok)),
        ("effective", r(effective)),
        ("layers", r(json!(found.layers))),
        ("provider", r(provider)),
        ("issues", r(json!(found.issues))),
    ]);
    Inspection { report, redactor, user_config, runtime }
}

/// The layers a configuration comes from, and the issues found in them.
#[derive(Default)]
struct Findings {
    layers: Vec<Value>,
    issues: Vec<Value>,
}

impl Findings {
    fn issue(
        &mut self,
        id: &str,
        severity: &str,
        source: &str,
        message: &str,
        path: &Option<String>,
    ) {
        self.issues.push(issue(id, severity, source, message, path));
    }

    /// The user file's layer: loaded (its keys of profiles become secrets) or invalid.
    fn file_layer(
        &mut self,
        user_config: &Result<Option<UserConfig>, Failure>,
        path: &Option<String>,
        redactor: &mut Redactor,
    ) {
        match user_config {
            Ok(Some(user)) => {
                for profile in &user.providers {
                    redactor.add_secrets_min(profile.api_key.clone(), 4);
                }
                self.layers.push(json!({
                    "source": "user",
                    "status": "loaded",
                    "present": true,
                    "path": path,
                    "config": user_layer(user),
                }));
                for warning in &user.warnings {
                    self.issue("config.user.unknownKey", "warning", "user", warning, path);
                }
            }
            Ok(None) => {}
            Err(failure) => {
                self.layers.push(json!({
                    "source": "user",
                    "status": "invalid",
                    "present": true,
                    "path": path,
                    "config": {},
                    "errors": [failure.message()],
                }));
                self.issue("config.user.invalid", "error", "user", &failure.message(), path);
            }
        }
    }

    /// The variables that configure zero, as the `env` layer, with those an active profile
    /// overrides named.
    fn env_layer(&mut self, env: &Env, loaded: Option<&UserConfig>) {
        let set: Map<String, Value> = config::PROVIDER_VARS
            .iter()
            .chain(config::SETTING_VARS)
            .filter_map(|name| Some((name.to_string(), Value::String(env.get(name)?.to_string()))))
            .collect();
        let overridden = config::overridden_vars(env, loaded);
        if !set.is_empty() {
            let mut layer =
                json!({"source": "env", "status": "loaded", "present": true, "config": set});
            if !overridden.is_empty() {
                let names: Vec<&str> = overridden.iter().map(|(n, _)| *n).collect();
                layer["overridden"] = json!(names);
            }
            self.layers.push(layer);
        }
        for (name, profile) in &overridden {
            let id = format!("config.env.{name}.overridden");
            self.issue(&id, "warning", "env", &config::overridden(name, profile), &None);
        }
    }

    /// The settings in effect: the turn limit and where it comes from, the profiles.
    fn effective(&mut self, env: &Env, loaded: Option<&UserConfig>) -> Value {
        let max_turns = config::max_turns(None, env, loaded);
        let turns_from = if env.get("ZERO_MAX_TURNS").is_some() {
            "env:ZERO_MAX_TURNS"
        } else if loaded.and_then(|c| c.max_turns).is_some() {
            "user"
        } else {
            "defaults"
        };
        let mut effective = json!({
            "maxTurnsSource": turns_from,
            "providers": loaded.map_or(0, |c| c.providers.len()),
        });
        match max_turns {
            Ok(turns) => effective["maxTurns"] = json!(turns),
            Err(failure) => {
                let id = "config.env.ZERO_MAX_TURNS.invalid";
                self.issue(id, "error", "env", &failure.message(), &None);
            }
        }
        if let Some(active) = loaded.and_then(|c| c.active_provider.as_ref()) {
            effective["activeProvider"] = json!(active);
        }
        match config::run_settings(&config::SettingFlags::default(), env, loaded) {
            Ok(s) => {
                let dirs: Vec<String> =
                    s.add_dirs.value.iter().map(|d| d.display().to_string()).collect();
                for (key, value, source) in [
                    (
                        "projectInstructions",
                        json!(s.project_instructions.value),
                        s.project_instructions.source,
                    ),
                    ("promptCache", json!(s.prompt_cache.value), s.prompt_cache.source),
                    ("maxBudgetUsd", json!(s.max_budget_usd.value), s.max_budget_usd.source),
                    ("addDirs", json!(dirs), s.add_dirs.source),
                ] {
                    effective[key] = value;
                    effective[format!("{key}Source")] = json!(source);
                }
            }
            Err(failure) => {
                let id = "config.settings.invalid";
                self.issue(id, "error", "env", &failure.message(), &None);
            }
        }
        effective
    }
}

/// The config file's MCP servers as a run would start them (their `${VAR}` values become
/// secrets, so they are shown redacted), or an issue when they are invalid.
fn mcp_servers(
    env: &Env,
    loaded: Option<&UserConfig>,
    path: &Option<String>,
    redactor: &mut Redactor,
    found: &mut Findings,
) -> Value {
    let Some(value) = loaded.and_then(|c| c.mcp_servers.as_ref()) else { return json!([]) };
    let shown_path = path.clone().unwrap_or_default();
    let cwd = std::env::current_dir().unwrap_or_default();
    let lookup = |name: &str| env.get(name).map(str::to_string);
    match crate::mcp::config::resolve(&[], false, Some((value, &shown_path)), &lookup, &cwd) {
        Ok(servers) => {
            redactor.add_secrets_min(servers.secrets, 4);
            servers
                .servers
                .iter()
                .map(|s| {
                    let target = match &s.transport {
                        crate::mcp::config::Transport::Stdio { command, args, .. } => {
                            std::iter::once(command.clone()).chain(args.iter().cloned()).collect::<Vec<_>>().join(" ")
                        }
                        crate::mcp::config::Transport::Http { url, .. } => url.clone(),
                    };
                    json!({"name": s.name, "transport": s.transport.name(), "target": target, "required": s.required, "trust": s.trust})
                })
                .collect()
        }
        Err(message) => {
            found.issue("config.mcpServers.invalid", "error", "user", &message.to_string(), path);
            json!([])
        }
    }
}

fn issue(id: &str, severity: &str, source: &str, message: &str, path: &Option<String>) -> Value {
    let mut value = json!({"id": id, "severity": severity, "source": source, "message": message});
    if let Some(path) = path {
        value["path"] = json!(path);
    }
    value
}

/// The user file as read (keys are redacted later, with the rest of the report).
fn user_layer(user: &UserConfig) -> Value {
    let providers: Vec<Value> = user
        .providers
        .iter()
        .map(|p| {
            let mut entry = json!({"name": p.name, "model": p.model});
            if let Some(kind) = p.provider {
                entry["provider"] = json!(kind.name());
            }
            if let Some(url) = &p.base_url {
                entry["baseURL"] = json!(url);
            }
            if let Some(key) = &p.api_key {
                entry["apiKey"] = json!(key);
            }
            entry
        })
        .collect();
    let mut layer = json!({"providers": providers});
    if let Some(active) = &user.active_provider {
        layer["activeProvider"] = json!(active);
    }
    if let Some(turns) = user.max_turns {
        layer["maxTurns"] = json!(turns);
    }
    let settings = [
        ("projectInstructions", user.project_instructions.map(|b| json!(b))),
        ("promptCache", user.prompt_cache.map(|b| json!(b))),
        ("maxBudgetUsd", user.max_budget_usd.map(|d| json!(d))),
        ("contextWindow", user.context_window.map(|n| json!(n))),
    ];
    for (key, value) in settings {
        if let Some(value) = value {
            layer[key] = value;
        }
    }
    if !user.add_dirs.is_empty() {
        layer["addDirs"] = json!(user.add_dirs);
    }
    layer
}

/// The provider a run would use, and where its model, endpoint and key come from: a layer
/// (`defaults`, `user`, `provider-command`), or `env:<VARIABLE>`.
fn provider_report(runtime: &Runtime, env: &Env, user: Option<&UserConfig>) -> Value {
    let (key_vars, base_var) = runtime.kind.env_names();
    let from_env = |var: &str| format!("env:{var}");
    let (model_from, base_from, key_from) = match &runtime.origin {
        None => ("cli".to_string(), "-".to_string(), "-".to_string()),
        Some(Origin::Command) => {
            let layer = "provider-command".to_string();
            (layer.clone(), layer.clone(), layer)
        }
        Some(Origin::Profile(name)) => {
            let profile = user.and_then(|c| c.providers.iter().find(|p| &p.name == name));
            let base = profile.and_then(|p| p.base_url.as_ref()).map_or("defaults", |_| "user");
            // A profile without a model uses its provider's default model.
            let model = profile.and_then(|p| p.model.as_ref()).map_or("defaults", |_| "user");
            (model.to_string(), base.to_string(), "user".to_string())
        }
        Some(Origin::Environment) => (
            ["OPENAI_MODEL", "AZURE_OPENAI_DEPLOYMENT"]
                .iter()
                .find(|v| env.get(v).is_some())
                .map_or("defaults".to_string(), |v| from_env(v)),
            match env.get(base_var) {
                Some(_) if runtime.kind != ProviderKind::OpenAi => from_env(base_var),
                _ => "defaults".to_string(),
            },
            key_vars.iter().find(|v| env.get(v).is_some()).map_or("-".to_string(), |v| from_env(v)),
        ),
    };
    let source = runtime.origin.as_ref().map_or("scripted", Origin::name);
    let mut report = json!({
        "configured": true,
        "source": source,
        "provider": runtime.kind.name(),
        "model": runtime.model_id,
        "modelSource": model_from,
        "apiModel": runtime.api_model,
        "baseURL": runtime.base_url,
        "baseURLSource": base_from,
    });
    if let Some(Origin::Profile(name)) = &runtime.origin {
        report["profileName"] = json!(name);
    }
    if runtime.origin == Some(Origin::Command) {
        report["commandConfigured"] = json!(true);
    }
    if let Some(key) = &runtime.api_key {
        report["apiKey"] = json!(key);
        report["apiKeySource"] = json!(key_from);
    }
    report
}

/// A report value for a terminal: control characters shown, `null` as `-`.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => crate::output::terminal_safe(s, true).into_owned(),
        Value::Null => "-".to_string(),
        other => other.to_string(),
    }
}

/// The report for a terminal.
fn format_text(report: &Value) -> String {
    let mut out = format!(
        "Zero config ({})\nOverall: {}\nLayers:\n",
        text(&report["generatedAt"]),
        if report["ok"] == Value::Bool(true) { "pass" } else { "fail" }
    );
    for layer in report["layers"].as_array().into_iter().flatten() {
        let path = layer.get("path").map(|p| format!(" {}", text(p))).unwrap_or_default();
        let _ = writeln!(out, "  [{}] {}{path}", text(&layer["status"]), text(&layer["source"]));
        if let Some(Value::Object(set)) = layer.get("config").filter(|_| layer["source"] == "env") {
            for (name, value) in set {
                let _ = writeln!(out, "    {name}={}", text(value));
            }
        }
    }
    format_provider(&report["provider"], &mut out);
    let effective = &report["effective"];
    format_effective(effective, &mut out);
    let servers = effective["mcpServers"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !servers.is_empty() {
        out.push_str("MCP servers (user):\n");
    }
    for server in servers {
        let mut flags = String::new();
        for flag in ["required", "trust"] {
            if server[flag] == Value::Bool(true) {
                flags.push_str(&format!(", {flag}"));
            }
        }
        let _ = writeln!(
            out,
            "  {}: {} {}{flags}",
            text(&server["name"]),
            text(&server["transport"]),
            text(&server["target"])
        );
    }
    let issues = report["issues"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !issues.is_empty() {
        out.push_str("Issues:\n");
    }
    for issue in issues {
        let _ = writeln!(
            out,
            "  [{}] {} - {}",
            text(&issue["severity"]),
            text(&issue["id"]),
            text(&issue["message"])
        );
    }
    out
}

/// The provider part of the terminal report.
fn format_provider(provider: &Value, out: &mut String) {
    if provider["configured"] == Value::Bool(true) {
        let _ = writeln!(
            out,
            "Provider: {} (source: {})",
            text(&provider["provider"]),
            text(&provider["source"])
        );
        let _ = writeln!(
            out,
            "  model:    {} ({})",
            text(&provider["model"]),
            text(&provider["modelSource"])
        );
        let _ = writeln!(
            out,
            "  baseURL:  {} ({})",
            text(&provider["baseURL"]),
            text(&provider["baseURLSource"])
        );
        if let Some(key) = provider.get("apiKey") {
            let _ =
                writeln!(out, "  API key:  {} ({})", text(key), text(&provider["apiKeySource"]));
        }
    } else {
        out.push_str("Provider: none\n");
    }
}

/// The effective settings part of the terminal report.
fn format_effective(effective: &Value, out: &mut String) {
    let _ = writeln!(
        out,
        "  maxTurns: {} ({})",
        text(&effective["maxTurns"]),
        text(&effective["maxTurnsSource"])
    );
    for key in ["projectInstructions", "promptCache", "maxBudgetUsd", "addDirs"] {
        let shown = match &effective[key] {
            Value::Null => "none".to_string(),
            Value::Array(list) if list.is_empty() => "none".to_string(),
            Value::Array(list) => list.iter().map(text).collect::<Vec<_>>().join(", "),
            other => text(other),
        };
        let source = text(&effective[format!("{key}Source")]);
        let _ = writeln!(out, "  {key}: {shown} ({source})");
    }
}
