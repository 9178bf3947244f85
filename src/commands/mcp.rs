//! `zero mcp list [--json] [--mcp-config ...] [--strict-mcp-config]`: starts each configured
//! MCP server, prints how its start went (status, protocol version, its tools with their
//! read-only flags), and stops it. Exit 3 when a required server fails, or the configuration
//! is invalid.

use serde_json::json;

use super::{fail, print, print_json};
use crate::cli::McpListArgs;
use crate::config::{self, Env};
use crate::error::{Exit, Failure};
use crate::mcp::{self, Checked};
use crate::redact::Redactor;
use crate::tools::{self, Autonomy};

/// The servers a run here would start, the context to start them in, and the redactor that
/// knows their secrets; or the failure.
pub(super) fn configured(
    configs: &[String],
    strict: bool,
    env: &Env,
) -> Result<(Vec<mcp::config::ServerConfig>, mcp::Context, Redactor), Failure> {
    let cwd = std::env::current_dir()
        .map_err(|err| Failure::Usage(format!("Cannot read the current directory: {err}")))?;
    let user_config = config::load_user_config(env)?;
    let path = config::config_path(env).map(|p| p.display().to_string()).unwrap_or_default();
    let user =
        user_config.as_ref().and_then(|c| c.mcp_servers.as_ref()).map(|v| (v, path.as_str()));
    let lookup = |name: &str| env.get(name).map(str::to_string);
    let servers = mcp::config::resolve(configs, strict, user, &lookup, &cwd)
        .map_err(|err| Failure::Config(err.to_string()))?;
    let mut redactor = Redactor::new(env.secret_values());
    redactor.add_secrets_min(servers.secrets.clone(), 4);
    let context = mcp::Context {
        net: config::net_settings(env)?,
        roots: config::extra_roots(env)?,
        env_remove: env.hidden_from_shell(false, &[], &[]),
        directories: vec![cwd],
    };
    Ok((servers.servers, context, redactor))
}

/// `zero mcp list`.
pub fn list(args: &McpListArgs, env: &Env) -> Exit {
    let plain = Redactor::new(env.secret_values());
    let (servers, context, redactor) = match configured(&args.configs, args.strict, env) {
        Ok(found) => found,
        Err(failure) => return fail(&plain, &failure.message(), failure.exit()),
    };
    // The run whose offer is shown: its level and filters, read as zero exec reads them.
    let level = tools::parse_autonomy(args.auto.as_deref());
    let enabled = tools::parse_filter(&args.enabled_tools, "enabled");
    let disabled = tools::parse_filter(&args.disabled_tools, "disabled");
    let (level, enabled, disabled) = match (level, enabled, disabled) {
        (Ok(level), Ok(enabled), Ok(disabled)) => (level, enabled, disabled),
        (Err(failure), _, _) | (_, Err(failure), _) | (_, _, Err(failure)) => {
            return fail(&plain, &failure.message(), failure.exit())
        }
    };
    if servers.is_empty() {
        let written = if args.json {
            print_json(&json!({"servers": []}))
        } else {
            print(
                "No MCP servers are configured (--mcp-config, or mcpServers in the config file).\n",
            )
        };
        return written;
    }
    let wanted =
        |name: &str, server: &str| tools::mcp_filtered_in(&enabled, &disabled, name, server);
    let checked = mcp::check(&servers, &context, &wanted, level == Autonomy::High);
    let failed_required = checked.iter().any(|c| c.report.required && c.report.error.is_some());
    let written = if args.json {
        let list: Vec<_> = checked.iter().map(as_json).collect();
        print_json(&redactor.redact_value(json!({ "servers": list })))
    } else {
        print(&redactor.redact_str(&as_text(&checked, level)))
    };
    match (written, failed_required) {
        (Exit::Success, true) => Exit::Setup,
        (written, _) => written,
    }
}

fn as_json(checked: &Checked) -> serde_json::Value {
    let r = &checked.report;
    let mut server = json!({
        "name": r.name,
        "status": if r.error.is_none() { "ready" } else { "failed" },
        "transport": r.transport,
    });
    if let Some(version) = &r.protocol {
        server["protocolVersion"] = json!(version);
    }
    if let Some(error) = &r.error {
        server["error"] = json!(error);
    }
    server["offered"] = json!(r.tools);
    server["tools"] = checked
        .tools
        .iter()
        .map(|t| {
            let mut tool =
                json!({"name": t.name, "readOnly": t.read_only, "offered": t.left_out.is_none()});
            if let Some(why) = &t.left_out {
                tool["leftOut"] = json!(why);
            }
            tool
        })
        .collect();
    server
}

fn as_text(checked: &[Checked], level: Autonomy) -> String {
    let mut text = String::new();
    for Checked { report: r, tools } in checked {
        let required = if r.required { " (required)" } else { "" };
        match &r.error {
            Some(error) => {
                text.push_str(&format!("{}{required}: failed ({}): {error}\n", r.name, r.transport))
            }
            None => text.push_str(&format!(
                "{}{required}: ready ({}, protocol {}), {} of {} tool{} offered at --auto {level}\n",
                r.name,
                r.transport,
                r.protocol.as_deref().unwrap_or("?"),
                r.tools,
                tools.len(),
                if tools.len() == 1 { "" } else { "s" }
            )),
        }
        for tool in tools {
            let flag = if tool.read_only { "read-only" } else { "may change things" };
            let exposed = mcp::exposed_name(&r.name, &tool.name);
            match &tool.left_out {
                None => text.push_str(&format!("  {exposed}  ({flag})\n")),
                Some(why) => text.push_str(&format!("  {exposed}  ({flag}; left out: {why})\n")),
            }
        }
    }
    text
}
