//! `zero doctor [--json] [--offline]`: the setup checked one step at a time, as a run would
//! meet it (config file, provider settings, model, adapter, connectivity, key), each failure with
//! its fix. Zero's shape: `{generatedAt, ok, checks[{id, label, status, message}]}`,
//! status `pass`, `warn` or `fail`. Exit 0 when nothing fails, 3 when something does.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::config::inspect;
use super::{print, print_json};
use crate::clock::Utc;
use crate::config::{self, Env, ProviderKind, Runtime};
use crate::error::Exit;
use crate::net::http::{Http, NetSettings};

/// The connectivity probe gives up after this long, whatever the network does.
const PROBE_CONNECT: Duration = Duration::from_secs(3);
const PROBE_TOTAL: Duration = Duration::from_secs(6);

/// How one check went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Pass,
    Warn,
    Fail,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

#[derive(Serialize)]
struct Check {
    id: Cow<'static, str>,
    label: Cow<'static, str>,
    status: Status,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

fn pass(
    id: impl Into<Cow<'static, str>>,
    label: impl Into<Cow<'static, str>>,
    message: String,
) -> Check {
    Check { id: id.into(), label: label.into(), status: Status::Pass, message, fix: None }
}

fn warn(
    id: impl Into<Cow<'static, str>>,
    label: impl Into<Cow<'static, str>>,
    message: String,
) -> Check {
    Check { id: id.into(), label: label.into(), status: Status::Warn, message, fix: None }
}

fn fail(
    id: impl Into<Cow<'static, str>>,
    label: impl Into<Cow<'static, str>>,
    message: String,
    fix: String,
) -> Check {
    Check { id: id.into(), label: label.into(), status: Status::Fail, message, fix: Some(fix) }
}

/// `zero doctor`.
pub fn doctor(json: bool, offline: bool, env: &Env) -> Exit {
    let inspection = inspect(env);
    let path = config::config_path(env).map_or("-".to_string(), |p| p.display().to_string());
    // 1. The config file.
    let (file, loaded) = config_file(&inspection.user_config, &path);
    let mut checks = vec![file];
    // 2-3. Provider settings, then the model and runtime they give.
    let settings_ok = match &inspection.user_config {
        Ok(_) => {
            let settings = provider_settings(env, loaded, &path);
            let ok = settings.status == Status::Pass;
            checks.push(settings);
            ok
        }
        Err(_) => {
            checks.push(skipped(
                "provider.config",
                "Provider config",
                "the config file is invalid",
            ));
            false
        }
    };
    let (model, runtime) = model(&inspection.runtime, settings_ok);
    checks.push(model);
    // 4. The adapter, 5. the endpoint, 6. the key.
    checks.extend(endpoint(runtime, offline));
    // 7. Each MCP server: started, listed and stopped (skipped offline: none is started).
    checks.extend(mcp_servers(env, offline));
    // 8. What bash's sandbox can enforce on this kernel.
    checks.push(sandbox());
    let ok = checks.iter().all(|c| c.status != Status::Fail);
    let redactor = &inspection.redactor;
    for check in &mut checks {
        check.message = redactor.redact_str(&check.message);
        check.fix = check.fix.as_deref().map(|f| redactor.redact_str(f));
    }
    let report = Report { generated_at: Utc::now().iso(), ok, checks };
    let written = if json { print_json(&report) } else { print(&format_text(&report)) };
    match (written, ok) {
        (Exit::Success, true) => Exit::Success,
        (Exit::Success, false) => Exit::Setup,
        (failed, _) => failed,
    }
}

/// Check 8: the kernel's Landlock ABI and seccomp, which bash's sandbox is made of.
fn sandbox() -> Check {
    let (id, label) = ("sandbox", "Sandbox");
    let support = crate::sys::sandbox::support();
    let seccomp = if support.seccomp { "seccomp filters available" } else { "no seccomp filters" };
    match support.landlock {
        Some(abi) if abi >= 3 && support.seccomp => {
            pass(id, label, format!("Landlock ABI {abi}, {seccomp}: bash's commands are confined."))
        }
        Some(abi) => warn(
            id,
            label,
            format!("Landlock ABI {abi}, {seccomp}: part of the sandbox is not enforced (see the warning a run gives)."),
        ),
        None => warn(
            id,
            label,
            format!("No Landlock on this kernel ({seccomp}): bash's commands run unconfined; --sandbox-required makes such a run fail."),
        ),
    }
}

/// Check 7: one `mcp.<name>` check per configured MCP server. A required server that fails is
/// a failure, an optional one a warning (the run goes on without it).
fn mcp_servers(env: &Env, offline: bool) -> Vec<Check> {
    let (servers, context, redactor) = match super::mcp::configured(&[], false, env) {
        Ok(found) => found,
        // An invalid mcpServers is the config file's check's business.
        Err(failure) => {
            let message = format!("mcpServers: {}", failure.message());
            let fix = "Fix mcpServers in the config file (zero config shows it).".to_string();
            return vec![fail("mcp", "MCP servers", message, fix)];
        }
    };
    if offline {
        return servers
            .iter()
            .map(|s| {
                skipped(
                    format!("mcp.{}", s.name),
                    format!("MCP server {}", s.name),
                    "--offline starts no server",
                )
            })
            .collect();
    }
    crate::mcp::check(&servers, &context, &|_, _| true, false)
        .into_iter()
        .map(|checked| {
            let r = checked.report;
            let (id, label) = (format!("mcp.{}", r.name), format!("MCP server {}", r.name));
            let message = match &r.error {
                None => format!(
                    "Ready over {} (protocol {}), {} tools.",
                    r.transport,
                    r.protocol.as_deref().unwrap_or("?"),
                    checked.tools.len()
                ),
                Some(error) => redactor.redact_str(&format!("Failed to start: {error}")),
            };
            match (&r.error, r.required) {
                (None, _) => pass(id, label, message),
                (Some(_), false) => warn(id, label, message),
                (Some(_), true) => fail(id, label, message, "The server is required: runs fail until it starts (zero mcp list shows it alone).".to_string()),
            }
        })
        .collect()
}

/// Check 1: the user config file, and its contents when it can be used.
fn config_file<'c>(
    user_config: &'c Result<Option<config::UserConfig>, crate::error::Failure>,
    path: &str,
) -> (Check, Option<&'c config::UserConfig>) {
    let (id, label) = ("config.files", "Config files");
    match user_config {
        Ok(Some(user)) if !user.warnings.is_empty() => {
            let prefix = format!("Config {path}: ");
            let each: Vec<&str> =
                user.warnings.iter().map(|w| w.strip_prefix(&prefix).unwrap_or(w)).collect();
            (warn(id, label, format!("{path}: {}.", each.join("; "))), Some(user))
        }
        Ok(Some(user)) => (pass(id, label, format!("{path} is valid.")), Some(user)),
        Ok(None) => (pass(id, label, format!("No config file at {path} (none is needed).")), None),
        Err(failure) => {
            let fix = format!("Correct {path} where the message says, or move it away.");
            (fail(id, label, failure.message(), fix), None)
        }
    }
}

/// Check 2: where the provider settings come from, or the fix when nothing provides them.
fn provider_settings(env: &Env, loaded: Option<&config::UserConfig>, path: &str) -> Check {
    let (id, label) = ("provider.config", "Provider config");
    let failure = match config::provider_origin(env, loaded) {
        Ok(origin) => {
            let from = origin.name().replace('-', " ");
            return pass(id, label, format!("Provider settings come from the {from}."));
        }
        Err(failure) => failure,
    };
    let bad_kind = env.get("ZERO_PROVIDER").filter(|v| ProviderKind::parse(v).is_none());
    let fix = if env.get("ZERO_PROVIDER_COMMAND").is_some() {
        "Make ZERO_PROVIDER_COMMAND print one JSON object with a model within 5 seconds, or unset it.".to_string()
    } else if bad_kind.is_some() {
        "Set ZERO_PROVIDER to openai, anthropic, google, openai-compatible, azure or scripted, or unset it.".to_string()
    } else {
        format!("Set OPENAI_API_KEY (or ANTHROPIC_API_KEY, GEMINI_API_KEY), or add a profile and activeProvider to {path}.")
    };
    fail(id, label, failure.message(), fix)
}

/// Check 3: the model and the runtime it resolves to.
fn model(
    runtime: &Result<Runtime, crate::error::Failure>,
    settings_ok: bool,
) -> (Check, Option<&Runtime>) {
    let (id, label) = ("provider.model", "Provider model");
    match (runtime, settings_ok) {
        (Ok(runtime), true) => {
            let message = format!(
                "Model {} (API model {}) runs on {}.",
                runtime.model_id,
                runtime.api_model,
                runtime.kind.name()
            );
            (pass(id, label, message), Some(runtime))
        }
        (Err(failure), true) => {
            let fix = "Change the setting the message names; `zero config` shows where each value comes from.";
            (fail(id, label, failure.message(), fix.to_string()), None)
        }
        _ => (skipped(id, label, "provider settings are missing"), None),
    }
}

/// Checks 4-6: the adapter, the endpoint and the key (the last two need the network).
fn endpoint(runtime: Option<&Runtime>, offline: bool) -> Vec<Check> {
    let Some(runtime) = runtime else {
        let why = "no model resolved";
        return vec![
            skipped("provider.adapter", "Provider adapter", why),
            skipped("provider.connectivity", "Provider connectivity", why),
            skipped("provider.auth", "Provider key", why),
        ];
    };
    if offline {
        let off = |id, label| warn(id, label, "Skipped (--offline).".into());
        return vec![
            adapter(runtime),
            off("provider.connectivity", "Provider connectivity"),
            off("provider.auth", "Provider key"),
        ];
    }
    let reached = connectivity(runtime);
    let key = if reached.status == Status::Pass {
        auth(runtime)
    } else {
        skipped("provider.auth", "Provider key", "the provider could not be reached")
    };
    vec![adapter(runtime), reached, key]
}

fn skipped(
    id: impl Into<Cow<'static, str>>,
    label: impl Into<Cow<'static, str>>,
    why: &str,
) -> Check {
    warn(id, label, format!("Skipped: {why}."))
}

/// Which API the run would speak, and whether the key would travel in the clear.
fn adapter(runtime: &Runtime) -> Check {
    let base = &runtime.base_url;
    let responses = runtime.openai_api == crate::config::OpenAiApi::Responses;
    let format = match runtime.kind {
        ProviderKind::Anthropic => "Anthropic Messages API",
        ProviderKind::Google => "Gemini streamGenerateContent",
        ProviderKind::Azure if responses => "Azure OpenAI Responses API",
        ProviderKind::Azure => "Azure OpenAI Chat Completions",
        _ if responses => "OpenAI Responses API",
        _ => "OpenAI Chat Completions",
    };
    let api = format!("{format} at {}", runtime.request_url());
    // Decided on a parse: `http://localhost:1@attacker.example` is attacker.example.
    let plain_elsewhere = crate::net::url::Url::parse(base)
        .ok()
        .filter(|url| !url.https && !url.is_loopback())
        .map(|url| url.host);
    match plain_elsewhere {
        Some(h) if runtime.api_key.is_some() => Check {
            fix: Some("Use an https:// base URL.".to_string()),
            ..warn(
                "provider.adapter",
                "Provider adapter",
                format!("{api}: plain http to {h}, so the API key travels unencrypted."),
            )
        },
        _ => pass("provider.adapter", "Provider adapter", format!("{api}.")),
    }
}

/// One GET of the base URL with short deadlines: any HTTP answer means the endpoint is there.
fn connectivity(runtime: &Runtime) -> Check {
    let settings = probe_settings(runtime);
    let started = Instant::now();
    match Http::new(settings, &runtime.roots, &runtime.base_url).probe(&runtime.base_url) {
        Ok(status) => pass(
            "provider.connectivity",
            "Provider connectivity",
            format!(
                "{} answered HTTP {status} in {} ms.",
                runtime.base_url,
                started.elapsed().as_millis()
            ),
        ),
        Err(err) => {
            let fix = if err.message.starts_with("TLS failure") {
                "Set SSL_CERT_FILE (or SSL_CERT_DIR) to the PEM certificate of the CA that signs the server's certificate (a TLS-inspecting proxy's, or your private CA)."
            } else {
                "Check the network, a proxy, and the base URL; `zero doctor --offline` skips this check."
            };
            fail("provider.connectivity", "Provider connectivity", err.message, fix.to_string())
        }
    }
}

/// The cheapest authenticated request of each wire format: its models list, with the key sent
/// as a run sends it. `None` for the scripted provider.
fn models_request(runtime: &Runtime) -> Option<(String, Vec<(&'static str, String)>)> {
    let base = &runtime.base_url;
    let key = runtime.api_key.clone();
    let mut headers = Vec::new();
    let url = match runtime.kind {
        ProviderKind::Scripted => return None,
        ProviderKind::Anthropic => {
            headers
                .push(("anthropic-version", crate::provider::anthropic::API_VERSION.to_string()));
            headers.extend(key.map(|k| ("x-api-key", k)));
            format!("{base}/v1/models")
        }
        ProviderKind::Google => {
            headers.extend(key.map(|k| ("x-goog-api-key", k)));
            format!("{base}/v1beta/models")
        }
        ProviderKind::Azure => {
            headers.extend(key.map(|k| ("api-key", k)));
            match &runtime.api_version {
                None => format!("{base}/openai/v1/models"),
                Some(v) => format!("{base}/openai/models?api-version={v}"),
            }
        }
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => {
            headers.extend(key.map(|k| ("authorization", format!("Bearer {k}"))));
            format!("{base}/models")
        }
    };
    Some((url, headers))
}

/// One authenticated request (the models list): a key the provider refuses fails here, where
/// connectivity, which sends none, passes.
fn auth(runtime: &Runtime) -> Check {
    let (id, label) = ("provider.auth", "Provider key");
    let Some((url, headers)) = models_request(runtime) else {
        return pass(id, label, "The scripted provider needs no key.".to_string());
    };
    let settings = probe_settings(runtime);
    let sent = if runtime.api_key.is_some() { "the key" } else { "no key" };
    match Http::new(settings, &runtime.roots, &url).get(&url, &headers) {
        Ok((status, _)) if status < 300 => {
            pass(id, label, format!("GET {url} with {sent} answered HTTP {status}."))
        }
        Ok((status @ (401 | 403), said)) => {
            let var = runtime.kind.env_names().0.first().copied().unwrap_or("the API key");
            let fix = match &runtime.origin {
                Some(config::Origin::Profile(name)) => format!("Correct the apiKey of config profile \"{name}\" (a key of this provider, not expired or revoked)."),
                Some(config::Origin::Command) => "Make ZERO_PROVIDER_COMMAND print a valid api_key for this provider.".to_string(),
                _ => format!("Set {var} to a valid key of this provider (not expired or revoked); `zero config` shows where the key comes from."),
            };
            fail(id, label, format!("{} refused {sent} (HTTP {status}): {said}", runtime.kind.name()), fix)
        }
        Ok((404, _)) => warn(
            id,
            label,
            format!("{url} answered HTTP 404: this server lists no models there, so the key could not be checked."),
        ),
        Ok((status, said)) => warn(
            id,
            label,
            format!("GET {url} answered HTTP {status}: {said}; the key could not be checked."),
        ),
        Err(err) => warn(id, label, format!("The key could not be checked: {}", err.message)),
    }
}

/// Short deadlines and no retries, with the run's proxies.
fn probe_settings(runtime: &Runtime) -> NetSettings {
    NetSettings {
        connect: PROBE_CONNECT,
        headers: PROBE_TOTAL,
        idle: PROBE_TOTAL,
        total: PROBE_TOTAL,
        max_retries: 0,
        proxies: runtime.net.proxies.clone(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    generated_at: String,
    ok: bool,
    checks: Vec<Check>,
}

/// The report for a terminal: one row per check, its fix below it.
fn format_text(report: &Report) -> String {
    let text = |v: &str| crate::output::terminal_safe(v, true).into_owned();
    let mut out = format!(
        "Zero doctor ({})\nOverall: {}\n",
        report.generated_at,
        if report.ok { "pass" } else { "fail" }
    );
    for check in &report.checks {
        let _ = writeln!(out, "[{}] {} - {}", check.status.name(), check.id, text(&check.message));
        if let Some(fix) = &check.fix {
            let _ = writeln!(out, "  fix: {}", text(fix));
        }
    }
    out
}
