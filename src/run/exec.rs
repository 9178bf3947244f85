//! `zero exec`: one run from arguments to exit code, with every error reported in the
//! requested output format once that format is known.
//!
//! A run checks and does things in one order, so that the first problem a user has is the one
//! reported, before anything was read or changed that did not need to be: (1) the output
//! format; (2-4) what the command line alone decides (the run plan: input format, limits,
//! session flags, permissions); (5) the workspace (`-C`); which session `--resume`/`--fork`
//! names; (6) the prompt, stdin included; (7) the configuration, provider and model; (8)
//! `--list-tools`; (9) the session opened or created; (10-11) `run_start`, then warnings; (12)
//! the prompt recorded; (13-14) the agent loop; (15) the session synced; the last lines.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::cli::ExecArgs;
use crate::config::{self, Env, OpenAiApi, ProviderKind, Runtime};
use crate::conversation::{Message, ToolCall};
use crate::error::{Exit, Failure, Stop};
use crate::net::http::Http;
use crate::output::{Emitter, Format, Output, RunInfo};
use crate::protocol::events::{ListedTool, RunDetails, SchemaVersion, Warning, WarningCode};
use crate::protocol::images::{self, Image};
use crate::protocol::input::{self, InputFormat, PromptText};
use crate::provider::models::{self, Model, Usage};
use crate::provider::openai::KeyHeader;
use crate::provider::{self, Provider};
use crate::redact::Redactor;
use crate::run::agent::{Agent, Journal};
use crate::run::instructions::{self, Instructions};
use crate::run::limits::{self, Limits};
use crate::run::plan::{RunPlan, SessionPlan};
use crate::run::structured::{self, OutputSchema};
use crate::session::{self, Kind, NewSession, Session, Store};
use crate::tools::{self, Autonomy, Outcome, PermissionMode, Toolbox, Workspace};

/// What `run` needs from the process, so tests could supply their own.
pub struct Process {
    pub env: Env,
    pub stdout: Box<dyn std::io::Write + Send>,
    pub stderr: Box<dyn std::io::Write + Send>,
}

/// The secrets known before anything runs: values of sensitive environment variables.
fn startup_redactor(env: &Env) -> Redactor {
    Redactor::new(env.secret_values())
}

/// Runs `zero exec` and returns the exit code. `on_start` receives the shared emitter as soon
/// as it exists (for the interrupt and panic handlers).
pub fn run(args: ExecArgs, mut process: Process, on_start: impl FnOnce(&Output)) -> Exit {
    // 1. The output format, before anything else can fail.
    let format = match super::plan::output_format(&args) {
        Ok(format) => format,
        Err(failure) => {
            let _ = writeln!(process.stderr, "[zero] {failure}");
            return failure.exit();
        }
    };
    let redactor = startup_redactor(&process.env);
    // A failpoint for the tests of a thread limit; it does not exist in release builds.
    if cfg!(debug_assertions) && process.env.get("ZERO_DEBUG_NO_THREADS").is_some() {
        crate::sys::threads::refuse_all();
    }
    let emitter =
        Emitter::new(format, crate::clock::new_run_id(), process.stdout, process.stderr, redactor);
    let shared: Output = Output::new(emitter);
    on_start(&shared);
    let env = process.env;
    let result = run_exec(&args, &env, &shared);
    let exit = finish(&shared, result);
    // The last line is out: MCP servers get SIGTERM, then SIGKILL after their grace.
    crate::sys::process::stop_kept_groups();
    exit
}

/// Ends the run: the failure is reported (unless the output is gone) and mapped to its code.
fn finish(shared: &Output, result: Result<Exit, Stop>) -> Exit {
    match result {
        Ok(exit) => exit,
        Err(Stop::OutputClosed) => Exit::Internal,
        Err(Stop::Failed(failure)) => {
            crate::run::ending::record_failure(&failure);
            match shared.failure(&failure) {
                Ok(()) => failure.exit(),
                Err(_) => Exit::Internal,
            }
        }
    }
}

/// Runs `zero exec`; the exit code of a run that ended as it should (0, or a live process's
/// last turn's).
fn run_exec(args: &ExecArgs, env: &Env, shared: &Output) -> Result<Exit, Stop> {
    // The schema version the flag asks for (live mode speaks 2): every later error is written
    // in it.
    match super::plan::schema_version(args)? {
        Some(version) => shared.set_schema(version),
        None if args.live => shared.set_schema(SchemaVersion::V2),
        None => {}
    }
    // 2-4, 7. Everything the command line alone decides, before anything is read or changed.
    let plan = super::plan::resolve(args, env)?;
    execute(&plan, env, shared)
}

/// Runs a plan, in the module's order: the workspace, the session selection, the prompt, the
/// configuration and provider, then the session, `run_start` and the agent loop.
fn execute(plan: &RunPlan, env: &Env, shared: &Output) -> Result<Exit, Stop> {
    // Paths on the command line mean what they say where zero was started, not below `-C`.
    let started_in = std::env::current_dir()
        .map_err(|err| Failure::Usage(format!("Cannot read the current directory: {err}")))?;
    // 5. The workspace.
    let cwd = change_directory(plan.cwd.as_deref())?;
    // Which session to continue is decided before the prompt, since `--resume WORD` may
    // turn out to be a prompt word. Nothing is opened yet.
    let store = Store::locate(env);
    let redactor_now = shared.redactor();
    let workspace_sessions = WorkspaceSessions { cwd: &cwd, redactor: &redactor_now };
    let (selection, prompt_words) = select_session(plan, store.as_ref().ok(), &workspace_sessions)?;
    // 6. The prompt (stdin is consumed here, before provider setup).
    let mut prompt = the_prompt(plan, &prompt_words, &started_in, shared)?;
    // 7. The configuration and the provider runtime (which --list-tools can do without).
    let Setup { runtime, max_turns, mut warnings, settings, mcp_servers, sandbox } =
        setup(plan, env, &started_in, shared)?;
    if let Some(p) = prompt.as_mut() {
        attach_images(plan, &started_in, p, shared, &mut warnings)?;
    }
    register_secrets(plan, runtime.as_ref(), shared);
    for secret in &mcp_servers.secrets {
        shared.add_secret_min(secret, 4);
    }
    let toolbox = toolbox(plan, env, &cwd, &settings.add_dirs.value, &mut warnings)?;
    let places = sandbox_places(env);
    // The repository, from what no command can have planted: where instructions are read
    // from, and which git directories bash may write.
    let plantable =
        tools::sandbox::plantable(&sandbox, &places, &toolbox.workspace().added_roots());
    let repository = tools::repository::find(toolbox.workspace().root(), &plantable);
    let sandbox = bash_sandbox(plan, env, &toolbox, &sandbox, &repository, &mut warnings)?;
    let mut toolbox = toolbox.sandboxed(sandbox);
    let output_schema = plan
        .output_schema
        .as_ref()
        .map(|source| OutputSchema::load(source, &started_in, plan.output_schema_attempts))
        .transpose()?;
    let added_roots = toolbox.workspace().added_roots();
    let mut system = instructions::system_prompt(&plan.system_prompt, &started_in, &added_roots)?;
    if output_schema.is_some() {
        system = format!("{}\n\n{}", system.trim_end(), structured::INSTRUCTION);
    }
    let told = if settings.project_instructions.value && !plan.list_tools {
        instructions::read(&cwd, &repository.root, env)
    } else {
        Instructions::default()
    };
    warnings.extend(told.warnings.iter().cloned());
    let mut info = run_info(runtime.as_ref(), &cwd, plan, None);
    info.sandbox = Some(toolbox.sandbox().describe());
    info.instructions = told.files.clone();
    info.add_dirs = added_roots.iter().map(|d| d.display().to_string()).collect();
    // 8. --list-tools: every tool, whether it is offered, and the schema the model gets.
    let (Some(runtime), false) = (runtime, plan.list_tools) else {
        warnings.extend(start_mcp(&mcp_servers, &mut toolbox, env, shared, false)?);
        let rows = tool_rows(&toolbox, output_schema.as_ref());
        shared.tool_list(plan.mode, &rows, &info, &warnings)?;
        return Ok(Exit::Success);
    };
    let prompt = prompt.unwrap_or_default();
    let max_usd = budget(&settings.max_budget_usd, &runtime, &mut warnings)?;
    let mut provider = build_provider(&runtime, settings.prompt_cache.value)?;
    // 9. The session: created, resumed or forked, with the earlier conversation. It is read
    // within half the model's context: a session of any size resumes in about the memory of
    // what is sent.
    let window = runtime
        .model
        .map(|m| m.context_window)
        .or(settings.context_window)
        .unwrap_or(limits::DEFAULT_WINDOW);
    let budget = window.min(1_000_000) / 2;
    let opened = OpenSession { store, selection, budget };
    let (session, history) =
        opened.open(plan, &runtime, &cwd, &prompt.text, shared, &mut warnings)?;
    let session = session.map(|s| Arc::new(Mutex::new(s)));
    crate::run::ending::set_active_session(session.clone());
    let info =
        RunInfo { session_id: session.as_ref().map(|s| session_lock(s).id().to_string()), ..info };
    if let Some(s) = &session {
        session_lock(s).set_output_schema(output_schema.as_ref().map(|o| o.digest.clone()));
    }
    if settings.prompt_cache.value && runtime.kind == ProviderKind::OpenAi {
        provider.set_cache_key(info.session_id.clone());
    }
    // 10-11. run_start first, then the warnings; then the MCP servers start, all at once.
    start(plan, env, shared, &info, &warnings, toolbox.sandbox())?;
    for warning in start_mcp(&mcp_servers, &mut toolbox, env, shared, true)? {
        shared.warning(&warning)?;
    }
    // 13. The agent loop, with the earlier conversation trimmed to the model's context. The
    // project instructions follow the system prompt as a message of their own, read afresh
    // on every run (a session does not keep them).
    let mut messages = vec![Message::system(system)];
    messages.extend(told.message.map(Message::user));
    let mut limits = Limits::new(messages.len(), window, max_usd);
    messages.extend(session::trim_to_budget(history, budget));
    let mut journal =
        SessionJournal { session: session.clone(), out: shared.clone(), model: runtime.model };
    if plan.live {
        return crate::run::live::run(crate::run::live::Live {
            out: shared,
            provider: &mut provider,
            tools: &mut toolbox,
            journal: &mut journal,
            new_session: matches!(plan.session, SessionPlan::New) && !plan.ephemeral,
            session,
            max_turns,
            model: runtime.model,
            permission_mode: plan.mode,
            autonomy: plan.autonomy,
            approvals: plan.approvals,
            messages,
            budget,
            limits: &mut limits,
            structured: output_schema.as_ref(),
        });
    }
    // 12. The user's prompt is the session's next event.
    let Prompt { text, images } = prompt;
    if let Some(s) = &session {
        session_lock(s).record(Kind::Message, session::user_payload(&text, &images, "exec"));
    }
    messages.push(Message { images, ..Message::user(text) });
    let answer = Agent {
        provider: &mut provider,
        tools: &mut toolbox,
        out: shared,
        journal: &mut journal,
        max_turns,
        model: runtime.model,
        permission_mode: plan.mode,
        autonomy: plan.autonomy,
        approvals: None,
        limits: &mut limits,
        structured: output_schema.as_ref(),
    }
    .run(&mut messages)?;
    // 15. Completion: the session is on disk before the last line is written.
    if let Some(s) = &session {
        session_lock(s).sync();
    }
    shared.success(&answer)?;
    Ok(Exit::Success)
}

/// Step 6: the prompt; none for `--list-tools`, and an empty one in live mode, whose turns
/// are read after `run_start`. Stream-json input lines decide the schema version when the
/// flag did not, also for the error of a bad line.
fn the_prompt(
    plan: &RunPlan,
    words: &[String],
    started_in: &Path,
    shared: &Output,
) -> Result<Option<Prompt>, Failure> {
    if plan.list_tools {
        return Ok(None);
    }
    if plan.live {
        return Ok(Some(Prompt::default()));
    }
    let prompt_file = plan.prompt_file.as_deref().map(|f| started_in.join(f));
    let mut version = plan.schema_version;
    let read = read_prompt(plan, words, prompt_file.as_deref(), &mut version);
    if let Some(version) = version {
        shared.set_schema(version);
    }
    read.map(Some)
}

/// What step 7 resolves: the provider runtime (`None` when `--list-tools` runs without
/// one), the turn limit, and the warnings gathered so far.
struct Setup {
    runtime: Option<Runtime>,
    max_turns: u32,
    warnings: Vec<Warning>,
    /// Project instructions, prompt caching, the budget, extra directories (checked).
    settings: config::RunSettings,
    /// The MCP servers configured for the run (none started yet).
    mcp_servers: crate::mcp::config::Servers,
    /// What bash's sandbox is asked to be.
    sandbox: tools::sandbox::Request,
}

/// Step 7: the configuration file, the provider runtime and the turn limit, and the warnings
/// for what the plan asked that has no effect.
fn setup(plan: &RunPlan, env: &Env, started_in: &Path, shared: &Output) -> Result<Setup, Failure> {
    let user_config = config::load_user_config(env)?;
    let flags = config::SettingFlags {
        no_project_instructions: plan.no_project_instructions,
        max_budget_usd: plan.max_budget_usd,
        add_dirs: plan.add_dirs.iter().map(|d| started_in.join(d)).collect(),
    };
    let mut settings = config::run_settings(&flags, env, user_config.as_ref())?;
    settings.add_dirs.value = existing_dirs(&settings.add_dirs, env)?;
    let mut choice = plan.choice.clone();
    choice.script = choice.script.map(|s| started_in.join(s));
    let runtime = match config::resolve(env, user_config.as_ref(), &choice) {
        Ok(runtime) => Some(runtime),
        // A provider that cannot be set up; a bad flag is still an error.
        Err(Failure::Provider(_)) if plan.list_tools => None,
        Err(failure) => return Err(failure),
    };
    let max_turns = config::max_turns(plan.max_turns, env, user_config.as_ref())?;
    let mcp_servers = mcp_servers(plan, env, user_config.as_ref(), started_in)?;
    let sandbox = sandbox_request(plan, user_config.as_ref(), started_in)?;
    let mut warnings: Vec<Warning> = user_config
        .iter()
        .flat_map(|c| c.warnings.iter())
        .map(|w| Warning::new(WarningCode::UnknownConfigKey, w.clone()))
        .collect();
    warnings.extend(runtime.iter().flat_map(|r| r.warnings.iter().cloned()));
    warnings.extend(plan.warnings.iter().cloned());
    // Schema 2's options, and what schema 1 cannot carry.
    let stream_json = plan.output_format == Format::StreamJson;
    if plan.schema_version.is_some() && !stream_json && plan.input_format != InputFormat::StreamJson
    {
        warnings.push(Warning::new(
            WarningCode::IgnoredOption,
            "--schema-version is ignored: it versions stream-json lines, and this run reads and writes none (-o stream-json or -i stream-json).",
        ));
    }
    let out = shared;
    match plan.heartbeat_ms {
        Some(_) if !out.schema2() => warnings.push(Warning::new(
            WarningCode::IgnoredOption,
            "--heartbeat-ms is ignored: heartbeats are written only in stream-json schema 2 (--schema-version 2).",
        )),
        ms => out.set_heartbeat(std::time::Duration::from_millis(
            ms.unwrap_or(crate::output::DEFAULT_HEARTBEAT_MS),
        )),
    }
    Ok(Setup { runtime, max_turns, warnings, settings, mcp_servers, sandbox })
}

/// Bash's sandbox as the flags, then the config file, then the defaults say
/// (`workspace-write`, network on, caches writable).
fn sandbox_request(
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
fn mcp_servers(
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
    .map_err(Failure::Config)
}

/// Starts the run's MCP servers, all at once, and gives their tools to the toolbox. Schema 2
/// gets one `mcp_server` event per server; a failed optional server is a warning, a failed
/// required one ends the run (`mcp_error`) at once.
fn start_mcp(
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
fn existing_dirs(dirs: &config::Setting<Vec<PathBuf>>, env: &Env) -> Result<Vec<PathBuf>, Failure> {
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

/// The spending cap of the run. A budget is spent in dollars, so the model must have prices:
/// without them `--max-budget-usd` is a usage error, and the config file's `maxBudgetUsd` (which
/// applies to every model) is left out with a warning.
fn budget(
    max_usd: &config::Setting<Option<f64>>,
    runtime: &Runtime,
    warnings: &mut Vec<Warning>,
) -> Result<Option<f64>, Failure> {
    let Some(max) = max_usd.value else { return Ok(None) };
    let priced = runtime.model.is_some_and(|m| !matches!(m.prices, models::Prices::Unknown));
    if priced {
        return Ok(Some(max));
    }
    let how = match (runtime.kind, runtime.model) {
        (ProviderKind::Scripted, None) => {
            "the scripted provider has a model only with -m (one with prices, such as -m gpt-4.1)".to_string()
        }
        _ => format!(
            "give it prices in the config file's models (an entry with id \"{}\", provider and prices: {{\"input\": ..., \"output\": ...}} in dollars per million tokens)",
            runtime.model_id
        ),
    };
    let why = format!("model \"{}\" has no prices: {how}", runtime.model_id);
    if max_usd.source == "cli" {
        return Err(Failure::Usage(format!(
            "--max-budget-usd needs the model's prices, and {why}."
        )));
    }
    warnings.push(Warning::new(
        WarningCode::IgnoredOption,
        format!("maxBudgetUsd (config) is ignored in this run: {why}."),
    ));
    Ok(None)
}

/// `--image`: each file, checked, attached to the prompt (schema-1 stream-json has no images).
fn attach_images(
    plan: &RunPlan,
    started_in: &Path,
    prompt: &mut Prompt,
    shared: &Output,
    warnings: &mut Vec<Warning>,
) -> Result<(), Failure> {
    for path in &plan.images {
        if prompt.images.len() == images::MAX_IMAGES {
            return Err(Failure::Usage(format!(
                "At most {} images can be attached to one prompt.",
                images::MAX_IMAGES
            )));
        }
        prompt.images.push(images::from_file(&started_in.join(path))?);
    }
    let schema1_stream = plan.output_format == Format::StreamJson && !shared.schema2();
    if schema1_stream && !prompt.images.is_empty() {
        warnings.push(Warning::new(
            WarningCode::IgnoredOption,
            "--image is ignored: stream-json schema 1 has no images (--schema-version 2 sends them).",
        ));
        prompt.images.clear();
    }
    Ok(())
}

/// The key in use is a secret whatever its length (local gateways use keys like `sk-1234`),
/// and so is each `--redact-env` value; at least 4 characters, so that a one-letter value
/// cannot blank out text.
fn register_secrets(plan: &RunPlan, runtime: Option<&Runtime>, shared: &Output) {
    let out = shared;
    if let Some(key) = runtime.and_then(|r| r.api_key.as_ref()) {
        out.add_secret_min(key, 4);
    }
    for value in &plan.redact_values {
        out.add_secret_min(value, 4);
    }
}

/// The tools of this run, and the warnings for the tool flags that have no effect in it.
fn toolbox(
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
fn bash_sandbox(
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
fn sandbox_places(env: &Env) -> tools::sandbox::Places<'_> {
    tools::sandbox::Places {
        tmpdir: env.get("TMPDIR"),
        home: env.get("HOME"),
        xdg_cache: env.get("XDG_CACHE_HOME"),
    }
}

/// Step 8's rows: every tool, whether it is offered, and the schema the model gets; with
/// `--output-schema`, `structured_output` too.
fn tool_rows<'a>(
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

/// Step 9's inputs: the store, the session chosen, and how much of it to read.
struct OpenSession {
    store: Result<Store, session::SessionError>,
    selection: Selection,
    budget: u64,
}

impl OpenSession {
    /// The session (none for `--ephemeral`, or a new one that cannot be created), and the
    /// earlier conversation it holds.
    fn open(
        self,
        plan: &RunPlan,
        runtime: &Runtime,
        cwd: &Path,
        prompt: &str,
        shared: &Output,
        warnings: &mut Vec<Warning>,
    ) -> Result<(Option<Session>, Vec<Message>), Failure> {
        if plan.ephemeral {
            return Ok((None, read_history(self.store, self.selection, self.budget, warnings)?));
        }
        let redactor = shared.redactor();
        let new = NewSession {
            // Redacted before it is cut, so no part of a secret survives the cut.
            title: session::title_of(&redactor.redact_str(prompt)),
            cwd: cwd.display().to_string(),
            model_id: runtime.model_id.clone(),
            provider: runtime.kind.name().to_string(),
        };
        open_session(self.store, self.selection, &new, &redactor, self.budget, warnings)
    }
}

/// The warning of a run whose level lets every tool run: what confines bash, or, where nothing
/// does (or `--skip-permissions-unsafe` says so), that the run is unsafe.
fn permission_warning(plan: &RunPlan, sandbox: &tools::sandbox::Sandbox) -> Option<Warning> {
    if plan.mode != PermissionMode::Unsafe {
        return None;
    }
    match sandbox.confinement().filter(|_| !plan.skip_permissions) {
        Some(confined) => Some(Warning::new(WarningCode::BashSandboxed, confined)),
        None => Some(Warning::new(
            WarningCode::UnsafeMode,
            "Unsafe permissions are active for this run.",
        )),
    }
}

/// Steps 10-11: `run_start`, the permission warning, the others, then heartbeats.
fn start(
    plan: &RunPlan,
    env: &Env,
    shared: &Output,
    info: &RunInfo,
    warnings: &[Warning],
    sandbox: &tools::sandbox::Sandbox,
) -> Result<(), Stop> {
    {
        let out = shared;
        out.run_start(info)?;
        if let Some(warning) = permission_warning(plan, sandbox) {
            out.warning(&warning)?;
        }
        for warning in warnings.iter().chain(&crate::run::ending::signals_missing()) {
            out.warning(warning)?;
        }
    }
    shared.start_heartbeats()?;
    // Failpoints for the panic-handling tests (a panic here, or inside the emitter while it
    // holds its lock); they do not exist in release builds.
    if cfg!(debug_assertions) {
        match env.get("ZERO_DEBUG_PANIC") {
            Some("emitter") => shared.panic_on_next_text(),
            Some(_) => panic!("ZERO_DEBUG_PANIC is set"),
            None => {}
        }
    }
    Ok(())
}

fn session_lock(session: &Arc<Mutex<Session>>) -> std::sync::MutexGuard<'_, Session> {
    session.lock().unwrap_or_else(|p| p.into_inner())
}

/// The user's prompt: its text and the images attached to it.
#[derive(Default)]
struct Prompt {
    text: String,
    images: Vec<Image>,
}

/// Which session the run continues.
enum Selection {
    New,
    Resume(String),
    Fork(String),
}

/// The workspace whose newest session a bare `--resume` continues.
struct WorkspaceSessions<'a> {
    cwd: &'a Path,
    /// Stored `cwd`s are redacted: the workspace is compared in the same form.
    redactor: &'a Redactor,
}

/// Decides `--resume` / `--fork` against the store and returns the prompt words without
/// a resume id. A bare `--resume` stays in this workspace: continuing another repository's
/// conversation would send that project's context to the model.
fn select_session(
    plan: &RunPlan,
    store: Option<&Store>,
    workspace: &WorkspaceSessions,
) -> Result<(Selection, Vec<String>), Failure> {
    let mut words = plan.prompt_words.clone();
    let need_store = || {
        store.ok_or_else(|| {
            Failure::Usage(
                "Sessions are unavailable: neither XDG_DATA_HOME nor HOME is set.".to_string(),
            )
        })
    };
    let existing = |id: &str| -> Result<String, Failure> {
        let id = id.trim();
        if !session::valid_id(id) {
            return Err(Failure::Usage(format!("Invalid Zero session id: {id}")));
        }
        if !need_store()?.exists(id) {
            return Err(Failure::Usage(format!("Zero session not found: {id}")));
        }
        Ok(id.to_string())
    };
    let latest = || -> Result<String, Failure> {
        let cwd = workspace.cwd.display().to_string();
        let list = need_store()?.list_for(&cwd, workspace.redactor).map_err(Failure::from)?;
        list.first().map(|m| m.session_id.clone()).ok_or_else(|| {
            Failure::Usage(format!(
                "No Zero sessions available to resume: this workspace ({cwd}) has none. `zero sessions list --all` shows every session; `--resume ID` continues one."
            ))
        })
    };
    let selection = match &plan.session {
        SessionPlan::New => Selection::New,
        SessionPlan::Fork(id) => Selection::Fork(existing(id)?),
        SessionPlan::Latest => Selection::Resume(latest()?),
        SessionPlan::Resume(id) => Selection::Resume(existing(id)?),
        SessionPlan::Candidate { word, index } => {
            let named = store.is_some_and(|s| s.exists(word));
            if named || session::looks_generated(word) {
                if *index < words.len() {
                    words.remove(*index);
                }
                Selection::Resume(existing(word)?)
            } else {
                Selection::Resume(latest()?)
            }
        }
    };
    Ok((selection, words))
}

/// Opens the selected session and returns it with its conversation so far. A new session
/// that cannot be created is a warning, not a failure: the run itself can still succeed.
fn open_session(
    store: Result<Store, session::SessionError>,
    selection: Selection,
    new: &NewSession,
    redactor: &Redactor,
    budget: u64,
    warnings: &mut Vec<Warning>,
) -> Result<(Option<Session>, Vec<Message>), Failure> {
    let store = match (store, &selection) {
        (Ok(store), _) => store,
        (Err(err), Selection::New) => {
            warnings.push(Warning::new(
                WarningCode::SessionUnavailable,
                format!("This run is not recorded as a session: {}", err.message()),
            ));
            return Ok((None, Vec::new()));
        }
        (Err(err), _) => return Err(err.into()),
    };
    match selection {
        Selection::New => match store.create(new, redactor) {
            Ok(s) => Ok((Some(s), Vec::new())),
            Err(err) => {
                warnings.push(Warning::new(
                    WarningCode::SessionUnavailable,
                    format!("This run is not recorded as a session: {}", err.message()),
                ));
                Ok((None, Vec::new()))
            }
        },
        Selection::Resume(id) => {
            let (session, repaired) = store.open(&id, redactor)?;
            let (history, found) = store.history(&id, budget)?;
            warnings.extend(repaired.into_iter().chain(found).map(torn));
            Ok((Some(session), history))
        }
        Selection::Fork(parent) => {
            let (session, history, found) = store.fork(&parent, new, redactor, budget)?;
            warnings.extend(found.into_iter().map(torn));
            Ok((Some(session), history))
        }
    }
}

/// `--ephemeral`: the conversation of the session to resume or fork, read without opening it
/// (no lock, nothing written).
fn read_history(
    store: Result<Store, session::SessionError>,
    selection: Selection,
    budget: u64,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Message>, Failure> {
    let (Selection::Resume(id) | Selection::Fork(id)) = selection else { return Ok(Vec::new()) };
    let (history, found) = store?.history(&id, budget)?;
    warnings.extend(found.into_iter().map(torn));
    Ok(history)
}

/// The warning of a session whose last event was cut off.
fn torn(message: String) -> Warning {
    Warning::new(WarningCode::TornSession, message)
}

/// Records the run in its session as it happens.
struct SessionJournal {
    session: Option<Arc<Mutex<Session>>>,
    out: Output,
    model: Option<&'static Model>,
}

impl SessionJournal {
    fn record(&mut self, kind: Kind, payload: serde_json::Value) {
        let Some(session) = &self.session else { return };
        let failure = {
            let mut s = session_lock(session);
            s.record(kind, payload);
            s.take_failure()
        };
        if let Some(message) = failure {
            // The run goes on; the wrapper learns that history is incomplete.
            let _ = self.out.warning(&Warning::new(
                WarningCode::SessionUnavailable,
                format!("Session recording stopped: {message}"),
            ));
        }
    }

    /// A payload built with the session's redactor.
    fn with_redactor(
        &self,
        build: impl FnOnce(&Redactor) -> serde_json::Value,
    ) -> Option<serde_json::Value> {
        let session = self.session.as_ref()?;
        let s = session_lock(session);
        Some(build(s.redactor()))
    }
}

impl Journal for SessionJournal {
    fn tool_call(&mut self, call: &ToolCall, side_effect: tools::SideEffect) {
        if let Some(payload) =
            self.with_redactor(|r| session::tool_call_payload(call, side_effect, r))
        {
            self.record(Kind::ToolCall, payload);
        }
    }

    fn assistant(&mut self, text: &str, calls: &[ToolCall], native: &[serde_json::Value]) {
        if let Some(payload) =
            self.with_redactor(|r| session::assistant_payload(text, calls, native, r))
        {
            self.record(Kind::Message, payload);
        }
    }

    fn tool_result(&mut self, call: &ToolCall, outcome: &Outcome) {
        if let Some(payload) = self.with_redactor(|r| {
            session::tool_result_payload(&call.id, outcome.ok, &outcome.output, r)
        }) {
            self.record(Kind::ToolResult, payload);
        }
    }

    fn usage(&mut self, usage: &Usage) {
        let cost = self.model.and_then(|m| models::cost(m, usage));
        self.record(Kind::ProviderUsage, session::usage_payload(usage, cost));
    }

    fn note(&mut self, kind: Kind, payload: serde_json::Value) {
        self.record(kind, payload);
    }
}

/// `-C`: the directory must exist; it becomes the process's and the workspace's directory.
fn change_directory(dir: Option<&Path>) -> Result<PathBuf, Failure> {
    let current = std::env::current_dir()
        .map_err(|err| Failure::Usage(format!("Cannot read the current directory: {err}")))?;
    let Some(dir) = dir else { return Ok(current) };
    let target = current.join(dir);
    match std::fs::metadata(&target) {
        Err(_) => Err(Failure::Usage(format!("Working directory not found: {}", target.display()))),
        Ok(meta) if !meta.is_dir() => Err(Failure::Usage(format!(
            "Working directory is not a directory: {}",
            target.display()
        ))),
        Ok(_) => {
            std::env::set_current_dir(&target).map_err(|err| {
                Failure::Usage(format!(
                    "Cannot enter working directory {}: {err}",
                    target.display()
                ))
            })?;
            Ok(std::env::current_dir().unwrap_or(target))
        }
    }
}

/// Reads the prompt: words, `--file` (already made absolute), or stdin when asked; stream-json
/// input reads stdin when it is not a terminal and no file is given.
fn read_prompt(
    plan: &RunPlan,
    words: &[String],
    file: Option<&Path>,
    version: &mut Option<SchemaVersion>,
) -> Result<Prompt, Failure> {
    let mut stdin = crate::sys::stdio::stdin();
    let prompt = match plan.input_format {
        InputFormat::Text => {
            let more = if plan.prompt_stdin {
                Some(PromptText::Stdin(&mut stdin))
            } else {
                file.map(PromptText::File)
            };
            Prompt { text: input::text_prompt(words, more)?, images: Vec::new() }
        }
        InputFormat::StreamJson => {
            let asked = plan.prompt_stdin || (file.is_none() && !std::io::stdin().is_terminal());
            let source: Option<&mut dyn std::io::Read> =
                if asked { Some(&mut stdin) } else { None };
            let read = input::stream_json_prompt(words, file, source, version)?;
            Prompt { text: read.text, images: read.images }
        }
    };
    Ok(prompt)
}

/// What `run_start` says. Without a runtime (`--list-tools` with no provider configured) the
/// provider and model are `none`.
fn run_info(
    runtime: Option<&Runtime>,
    cwd: &Path,
    plan: &RunPlan,
    session_id: Option<String>,
) -> RunInfo {
    let text = |pick: fn(&Runtime) -> String| runtime.map_or("none".to_string(), pick);
    RunInfo {
        session_id,
        cwd: cwd.display().to_string(),
        provider: text(|r| r.kind.name().to_string()),
        model: text(|r| r.model_id.clone()),
        api_model: text(|r| r.api_model.clone()),
        details: RunDetails {
            model_label: text(|r| r.model_label.clone()),
            model_profile: runtime.and_then(|r| r.profile).map(|p| p.name().to_string()),
            autonomy: plan.autonomy,
            permission_mode: plan.mode,
            reasoning_effort: runtime.and_then(|r| r.effort).map(|e| e.name().to_string()),
            enabled_tools: plan.enabled_tools.clone(),
            disabled_tools: plan.disabled_tools.clone(),
        },
        instructions: Vec::new(),
        add_dirs: Vec::new(),
        sandbox: None,
    }
}

/// The provider for a resolved runtime.
fn build_provider(runtime: &Runtime, cache: bool) -> Result<Provider, Failure> {
    let http = || Http::new(runtime.net.clone(), &runtime.roots, &runtime.base_url);
    let key_header =
        if runtime.kind == ProviderKind::Azure { KeyHeader::ApiKey } else { KeyHeader::Bearer };
    let endpoint = || provider::openai::Endpoint {
        http: http(),
        url: runtime.request_url(),
        api_key: runtime.api_key.clone(),
        key_header,
        api_model: runtime.api_model.clone(),
        cache_key: None,
    };
    Ok(match runtime.kind {
        ProviderKind::Scripted => {
            let path = runtime.script.clone().unwrap_or_default();
            let scripted = provider::scripted::Scripted::load(&path)?;
            Provider::Scripted(scripted)
        }
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible | ProviderKind::Azure
            if runtime.openai_api == OpenAiApi::Responses =>
        {
            Provider::Responses(provider::responses::Responses {
                endpoint: endpoint(),
                effort: runtime.send_effort,
                reasoning: runtime.send_effort.is_some()
                    || runtime.model.is_some_and(|m| !m.efforts.is_empty()),
                max_tokens: runtime.max_tokens,
            })
        }
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible | ProviderKind::Azure => {
            Provider::OpenAi(provider::openai::OpenAi {
                endpoint: endpoint(),
                effort: runtime.send_effort,
                // Azure takes `max_completion_tokens` as the official API does.
                limit: provider::openai::OutputLimit {
                    tokens: runtime.max_tokens,
                    official: runtime.kind != ProviderKind::OpenAiCompatible,
                },
            })
        }
        ProviderKind::Anthropic => Provider::Anthropic(provider::anthropic::Anthropic {
            http: http(),
            url: runtime.request_url(),
            api_key: runtime.api_key.clone().unwrap_or_default(),
            api_model: runtime.api_model.clone(),
            max_tokens: runtime.max_tokens,
            effort: runtime.send_effort,
            cache,
        }),
        ProviderKind::Google => Provider::Gemini(provider::gemini::Gemini {
            http: http(),
            base_url: runtime.base_url.clone(),
            api_key: runtime.api_key.clone().unwrap_or_default(),
            api_model: runtime.api_model.clone(),
            max_tokens: runtime.max_tokens,
            effort: runtime.send_effort,
        }),
    })
}
