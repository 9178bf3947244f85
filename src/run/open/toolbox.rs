//! The tools of a conversation: the toolbox and its warnings, bash's sandbox on this kernel,
//! and the MCP servers started and their tools offered.

use std::path::{Path, PathBuf};

use crate::config::{self, Env};
use crate::error::{Failure, Stop};
use crate::output::Output;
use crate::protocol::events::{ListedTool, Warning, WarningCode};
use crate::run::plan::RunPlan;
use crate::run::structured::{self, OutputSchema};
use crate::tools::{self, Autonomy, Toolbox, Workspace};

/// Bash's sandbox as the flags, then the config file, then the defaults say
/// (`workspace-write`, network on, caches writable).
pub(super) fn sandbox_request(
    plan: &RunPlan,
    user_config: Option<&config::UserConfig>,
    started_in: &Path,
) -> Result<tools::sandbox::Request, Failure> {
    let flags = &plan.sandbox;
    let mut writable = Vec::new();
    for dir in &flags.writable {
        let path = started_in.join(dir);
        match std::fs::canonicalize(&path) {
            Ok(path) if path.is_dir() => writable.push(path),
            _ => {
                return Err(Failure::Usage(format!(
                    "--sandbox-writable {}: not a directory",
                    path.display()
                )))
            }
        }
    }
    Ok(tools::sandbox::Request {
        mode: flags
            .mode
            .or(user_config.and_then(|c| c.sandbox))
            .unwrap_or(tools::sandbox::Mode::WorkspaceWrite),
        network: flags.network.or(user_config.and_then(|c| c.sandbox_network)).unwrap_or(true),
        writable,
        caches: flags.caches,
    })
}

/// What this kernel enforces; in debug builds `ZERO_DEBUG_SANDBOX` (`none`, `no-landlock`,
/// `no-seccomp`) pretends it lacks some of it, for the tests.
fn sandbox_support(env: &Env) -> crate::sys::sandbox::Support {
    let mut support = crate::sys::sandbox::support();
    if cfg!(debug_assertions) {
        match env.get("ZERO_DEBUG_SANDBOX") {
            Some("none") => {
                support = crate::sys::sandbox::Support { landlock: None, seccomp: false }
            }
            Some("no-landlock") => support.landlock = None,
            Some("no-seccomp") => support.seccomp = false,
            Some(abi) if abi.starts_with("abi-") => {
                let wanted = abi[4..].parse::<u32>().ok();
                support.landlock = support
                    .landlock
                    .zip(wanted)
                    .map(|(have, want)| have.min(want))
                    .filter(|abi| *abi > 0);
            }
            _ => {}
        }
    }
    support
}

/// The MCP servers of the run: the user file's `mcpServers` (unless `--strict-mcp-config`),
/// then each `--mcp-config`. Any error in them is a configuration error.
pub(super) fn mcp_servers(
    plan: &RunPlan,
    env: &Env,
    user_config: Option<&config::UserConfig>,
    started_in: &Path,
) -> Result<crate::mcp::config::Servers, Failure> {
    let path = config::config_path(env).map(|p| p.display().to_string()).unwrap_or_default();
    let user = user_config.and_then(|c| c.mcp_servers.as_ref()).map(|v| (v, path.as_str()));
    let lookup = |name: &str| env.get(name).map(str::to_string);
    crate::mcp::config::resolve(
        &plan.mcp_configs,
        plan.strict_mcp_config,
        user,
        &lookup,
        started_in,
    )
    .map_err(|err| Failure::Config(err.to_string()))
}

/// Starts the run's MCP servers, all at once, and gives their tools to the toolbox. Schema 2
/// gets one `mcp_server` event per server; a failed optional server is a warning, a failed
/// required one ends the run (`mcp_error`) at once.
pub(super) fn start_mcp(
    servers: &crate::mcp::config::Servers,
    toolbox: &mut Toolbox,
    env: &Env,
    shared: &Output,
    announce: bool,
) -> Result<Vec<Warning>, Stop> {
    let mut warnings = Vec::new();
    if servers.servers.is_empty() {
        return Ok(warnings);
    }
    let mut directories = vec![toolbox.workspace().root().to_path_buf()];
    directories.extend(toolbox.workspace().added_roots());
    let context = crate::mcp::Context {
        net: config::net_settings(env)?,
        roots: config::extra_roots(env)?,
        env_remove: toolbox.hidden_env().to_vec(),
        directories,
    };
    let mut required_failed: Option<crate::mcp::Report> = None;
    // Heartbeats say zero is waiting on tools (a slow `npx` start is not a hang).
    shared.set_phase(Some(crate::output::Phase::Tool), None);
    let mcp = crate::mcp::Mcp::start(&servers.servers, &context, &mut |server| {
        let failed = server.failure().is_some() && server.config.required;
        if failed {
            required_failed = Some(crate::mcp::Report {
                name: server.name().to_string(),
                transport: server.config.transport.name(),
                required: true,
                error: server.failure().map(str::to_string),
                protocol: None,
                tools: 0,
            });
        }
        failed
    });
    shared.set_phase(None, None);
    if let Some(report) = required_failed {
        if announce {
            shared.mcp_server(&report)?;
        }
        drop(mcp);
        crate::sys::process::stop_kept_groups();
        return Err(Failure::Mcp(format!(
            "MCP server {} (required) failed to start: {}",
            report.name,
            report.error.unwrap_or_default()
        ))
        .into());
    }
    let left_out = toolbox.connect(mcp);
    // Their start's failures are the warnings below, not news for the first model call.
    let _ = toolbox.servers_mut().newly_failed();
    for (index, mut report) in toolbox.servers().reports().into_iter().enumerate() {
        // The tools offered to the model: those the level withholds are not.
        let mcp = toolbox.servers();
        report.tools = mcp
            .offered()
            .iter()
            .filter(|o| o.server == index && toolbox.withheld(&tools::Tool::Mcp(o)).is_none())
            .count();
        if announce {
            shared.mcp_server(&report)?;
        }
        if let Some(error) = &report.error {
            warnings.push(Warning::new(
                WarningCode::McpServerFailed,
                format!(
                    "MCP server {} failed to start: {error}; the run goes on without its tools.",
                    report.name
                ),
            ));
        }
    }
    warnings.extend(left_out.into_iter().map(|w| Warning::new(WarningCode::McpToolLeftOut, w)));
    let unmatched = toolbox.unmatched_filters();
    warnings.extend(unmatched.into_iter().map(|w| Warning::new(WarningCode::IgnoredOption, w)));
    Ok(warnings)
}

/// The extra roots, each an existing directory, canonicalised. A bad `--add-dir` is a usage
/// error; a bad `addDirs` entry a configuration error naming the file.
pub(super) fn existing_dirs(
    dirs: &config::Setting<Vec<PathBuf>>,
    env: &Env,
) -> Result<Vec<PathBuf>, Failure> {
    let fail = |dir: &Path, why: String| {
        if dirs.source == "cli" {
            return Failure::Usage(format!("--add-dir {}: {why}", dir.display()));
        }
        let file = config::config_path(env).map(|p| p.display().to_string()).unwrap_or_default();
        Failure::Config(format!("Config {file}: addDirs {}: {why}", dir.display()))
    };
    dirs.value
        .iter()
        .map(|dir| match std::fs::metadata(dir) {
            Err(_) => Err(fail(dir, "the directory does not exist".to_string())),
            Ok(meta) if !meta.is_dir() => Err(fail(dir, "it is not a directory".to_string())),
            Ok(_) => dir.canonicalize().map_err(|err| fail(dir, err.to_string())),
        })
        .collect()
}

/// The tools of this run, and the warnings for the tool flags that have no effect in it.
pub(super) fn toolbox(
    plan: &RunPlan,
    env: &Env,
    cwd: &Path,
    add_dirs: &[PathBuf],
    warnings: &mut Vec<Warning>,
) -> Result<Toolbox, Failure> {
    let workspace = Workspace::new(cwd).map_err(|err| {
        Failure::Usage(format!("Working directory not found: {} ({err})", cwd.display()))
    })?;
    let workspace = workspace
        .with_added(add_dirs)
        .map_err(|err| Failure::Usage(format!("Cannot open an --add-dir directory: {err}")))?;
    let hidden =
        env.hidden_from_shell(plan.shell_env.inherit, &plan.shell_env.keep, &plan.redact_names);
    let toolbox =
        Toolbox::new(workspace, plan.mode, plan.enabled_tools.clone(), plan.disabled_tools.clone())
            .hiding_env(hidden)
            .allowing_writes(plan.autonomy != Autonomy::Low)
            .asking_for_approval(plan.approvals.is_some())
            .interrupted_by(crate::run::ending::turn_interrupted);
    // What bash would have been given means nothing when bash does not run.
    if let Some(why) =
        tools::find("bash").and_then(|bash| toolbox.withheld(&tools::Tool::Builtin(bash)))
    {
        let sandbox = &plan.sandbox;
        let given = [
            plan.shell_env_given.then_some("--shell-env"),
            (!plan.shell_env.keep.is_empty()).then_some("--shell-env-keep"),
            sandbox.mode.is_some().then_some("--sandbox"),
            sandbox.network.is_some().then_some("--sandbox-network"),
            (!sandbox.writable.is_empty()).then_some("--sandbox-writable"),
            (!sandbox.caches).then_some("--sandbox-caches"),
            sandbox.required.then_some("--sandbox-required"),
        ];
        for flag in given.into_iter().flatten() {
            warnings.push(Warning::new(
                WarningCode::IgnoredOption,
                format!(
                    "{flag} is ignored: bash does not run in this run, as it {}{why}.",
                    if why.starts_with("needs") { "" } else { "is " }
                ),
            ));
        }
    }
    for (name, level) in toolbox.enabled_but_withheld() {
        warnings.push(Warning::new(
            WarningCode::IgnoredOption,
            format!(
                "--enabled-tools {name}: --auto {} does not let it run (it needs {level}); it is not offered to the model.",
                plan.autonomy
            ),
        ));
    }
    Ok(toolbox)
}

/// Bash's sandbox on this kernel; what it cannot enforce is a `sandbox_unavailable` warning,
/// or with `--sandbox-required` a usage error before any model call.
pub(super) fn bash_sandbox(
    plan: &RunPlan,
    env: &Env,
    toolbox: &Toolbox,
    request: &tools::sandbox::Request,
    repository: &tools::repository::Repository,
    warnings: &mut Vec<Warning>,
) -> Result<tools::sandbox::Sandbox, Failure> {
    let mut roots = vec![toolbox.workspace().root().to_path_buf()];
    roots.extend(toolbox.workspace().added_roots());
    let support = sandbox_support(env);
    let places = sandbox_places(env);
    let bash_runs = tools::find("bash")
        .is_some_and(|bash| toolbox.withheld(&tools::Tool::Builtin(bash)).is_none());
    let (sandbox, unenforced, narrowed) = tools::sandbox::Sandbox::build(
        request,
        support,
        &roots,
        &repository.git_dirs,
        &places,
        bash_runs,
    )
    .map_err(|err| Failure::Usage(format!("The bash sandbox cannot be set up: {err}")))?;
    // What the sandbox leaves out matters only where bash runs.
    if bash_runs {
        warnings.extend(narrowed.into_iter().map(|n| Warning::new(WarningCode::IgnoredOption, n)));
    }
    if let Some(message) = unenforced {
        // Where bash does not run, --sandbox-required has nothing to require (its warning
        // says so).
        if plan.sandbox.required && bash_runs {
            return Err(Failure::Usage(format!(
                "{} (--sandbox-required).",
                message.trim_end_matches('.')
            )));
        }
        warnings.push(Warning::new(WarningCode::SandboxUnavailable, message));
    }
    Ok(sandbox)
}

/// The temp, home and cache directories bash's sandbox reads from the environment.
pub(super) fn sandbox_places(env: &Env) -> tools::sandbox::Places<'_> {
    tools::sandbox::Places {
        tmpdir: env.get("TMPDIR"),
        home: env.get("HOME"),
        xdg_cache: env.get("XDG_CACHE_HOME"),
        zero_dirs: zero_dirs(env),
    }
}

/// zero's config and data directories (`$XDG_CONFIG_HOME/zero`, `$XDG_DATA_HOME/zero`, else
/// under the home directory): what a later run trusts, which bash may never write.
fn zero_dirs(env: &Env) -> Vec<std::path::PathBuf> {
    let config = crate::config::config_path(env).and_then(|p| p.parent().map(|d| d.to_path_buf()));
    let data = env
        .get("XDG_DATA_HOME")
        .map(|d| std::path::Path::new(d).join("zero"))
        .or_else(|| env.get("HOME").map(|h| std::path::Path::new(h).join(".local/share/zero")));
    config.into_iter().chain(data).collect()
}

/// Step 8's rows: every tool, whether it is offered, and the schema the model gets; with
/// `--output-schema`, `structured_output` too.
pub(super) fn tool_rows<'a>(
    toolbox: &'a Toolbox,
    output_schema: Option<&'a OutputSchema>,
) -> Vec<ListedTool<'a>> {
    let structured = output_schema.map(|schema| ListedTool {
        name: structured::TOOL,
        side_effect: tools::SideEffect::None,
        permission: crate::protocol::events::Permission::Allow,
        reason: "gives the final answer; runs at every level",
        description: structured::DESCRIPTION,
        enabled: true,
        withheld: None,
        parameters: schema.parameters().clone(),
        sandbox: None,
    });
    toolbox
        .all()
        .into_iter()
        .map(|tool| {
            let withheld = toolbox.withheld(&tool);
            ListedTool {
                name: tool.name(),
                side_effect: tool.side_effect(),
                permission: tool.permission(),
                reason: tool.reason(),
                description: tool.description(),
                enabled: withheld.is_none(),
                withheld,
                parameters: tool.parameters(),
                sandbox: (tool.name() == "bash" && matches!(tool, tools::Tool::Builtin(_)))
                    .then(|| toolbox.sandbox().describe()),
            }
        })
        .chain(structured)
        .collect()
}
