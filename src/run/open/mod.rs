//! Opening a conversation: from a resolved plan to a ready [`Engine`], in the order that makes
//! the first problem a user has the one reported, before anything was read or changed that
//! did not need to be. (7) The configuration, the provider runtime and the turn limit; the
//! images; the toolbox, the repository (from what no command can have planted) and bash's
//! sandbox; the output schema, the system prompt and the project instructions. (8)
//! `--list-tools` ends here. (9) The budget, the provider, the session created, resumed or
//! forked with its earlier conversation. (10-11) `run_start`, the warnings, then the MCP
//! servers, all at once. Every front-end opens its conversations here.

mod session;
mod toolbox;

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::config::{self, Env, OpenAiApi, ProviderKind, Runtime};
use crate::conversation::Message;
use crate::error::{Failure, Stop};
use crate::net::http::Http;
use crate::output::{Format, Output, RunInfo};
use crate::protocol::events::{RunDetails, Warning, WarningCode};
use crate::protocol::images;
use crate::protocol::input::InputFormat;
use crate::provider::models;
use crate::provider::openai::KeyHeader;
use crate::provider::{self, Provider};
use crate::run::engine::{session_lock, Engine, Parts, Prompt, Rules};
use crate::run::instructions::{self, Instructions};
use crate::run::limits;
use crate::run::plan::{RunPlan, SessionPlan};
use crate::run::structured::{self, OutputSchema};
use crate::session::{SessionError, Store};
use crate::tools::{self, PermissionMode, Toolbox};
pub use session::Selection;

/// What a front-end opens a conversation from.
pub struct Opening<'a> {
    pub plan: &'a RunPlan,
    pub env: &'a Env,
    pub out: &'a Output,
    /// Where zero was started: paths on the command line mean what they say there.
    pub started_in: &'a Path,
    /// The workspace.
    pub cwd: &'a Path,
    pub store: Result<Store, SessionError>,
    /// The session the conversation continues, or a new one.
    pub selection: Selection,
    /// A client's editor the file tools go through (`zero acp`); with one, the calls that
    /// change files say how.
    pub editor: Option<Arc<dyn tools::editor::Editor>>,
}

/// What opening gave.
pub enum Opened {
    Engine(Box<Engine>),
    /// `--list-tools`: the list is written, and nothing runs.
    Listed,
}

/// Opens the conversation of a plan. The first prompt, when there is one already, gets its
/// images and titles a new session.
pub fn open(opening: Opening<'_>, prompt: &mut Option<Prompt>) -> Result<Opened, Stop> {
    let mut equipped = equip(&opening, prompt.as_mut())?;
    // 8. --list-tools: every tool, whether it is offered, and the schema the model gets.
    let Some(runtime) = equipped.runtime.take().filter(|_| !opening.plan.list_tools) else {
        list_tools(&opening, equipped)?;
        return Ok(Opened::Listed);
    };
    let title = prompt.as_ref().map_or("", |p| p.text.as_str());
    let engine = start_engine(opening, equipped, runtime, title)?;
    Ok(Opened::Engine(Box::new(engine)))
}

/// Step 7's results: what the configuration and the workspace give before any provider.
struct Equipped {
    /// `None` when `--list-tools` runs without a provider configured.
    runtime: Option<Runtime>,
    max_turns: u32,
    warnings: Vec<Warning>,
    settings: config::RunSettings,
    mcp_servers: crate::mcp::config::Servers,
    toolbox: Toolbox,
    output_schema: Option<OutputSchema>,
    system: String,
    /// The project instructions, a message of their own after the system prompt.
    told: Option<String>,
    info: RunInfo,
}

/// Step 7: configuration, images, secrets, toolbox, repository, sandbox, schema, prompts.
fn equip(opening: &Opening<'_>, prompt: Option<&mut Prompt>) -> Result<Equipped, Stop> {
    let Opening { plan, env, out, started_in, cwd, .. } = *opening;
    let Setup { runtime, max_turns, mut warnings, settings, mcp_servers, sandbox } =
        setup(plan, env, started_in, out)?;
    if let Some(p) = prompt {
        attach_images(plan, started_in, p, out, &mut warnings)?;
    }
    register_secrets(plan, runtime.as_ref(), out);
    for secret in &mcp_servers.secrets {
        out.add_secret_min(secret, 4);
    }
    let toolbox = toolbox::toolbox(plan, env, cwd, &settings.add_dirs.value, &mut warnings)?;
    let toolbox = match &opening.editor {
        Some(editor) => toolbox.with_editor(editor.clone()),
        None => toolbox,
    };
    let places = toolbox::sandbox_places(env);
    // The repository, from what no command can have planted: where instructions are read
    // from, and which git directories bash may write.
    let plantable =
        tools::sandbox::plantable(&sandbox, &places, &toolbox.workspace().added_roots());
    let repository = tools::repository::find(toolbox.workspace().root(), &plantable);
    let sandbox = toolbox::bash_sandbox(plan, env, &toolbox, &sandbox, &repository, &mut warnings)?;
    let toolbox = toolbox.sandboxed(sandbox);
    let output_schema = plan
        .output_schema
        .as_ref()
        .map(|source| OutputSchema::load(source, started_in, plan.output_schema_attempts))
        .transpose()?;
    let added_roots = toolbox.workspace().added_roots();
    let mut system = instructions::system_prompt(&plan.system_prompt, started_in, &added_roots)?;
    if output_schema.is_some() {
        system = format!("{}\n\n{}", system.trim_end(), structured::INSTRUCTION);
    }
    let told = if settings.project_instructions.value && !plan.list_tools {
        instructions::read(cwd, &repository.root, env)
    } else {
        Instructions::default()
    };
    warnings.extend(told.warnings.iter().cloned());
    let mut info = run_info(runtime.as_ref(), cwd, plan, None);
    info.sandbox = Some(toolbox.sandbox().describe());
    info.instructions = told.files.clone();
    info.add_dirs = added_roots.iter().map(|d| d.display().to_string()).collect();
    let told = told.message;
    Ok(Equipped {
        runtime,
        max_turns,
        warnings,
        settings,
        mcp_servers,
        toolbox,
        output_schema,
        system,
        told,
        info,
    })
}

/// Step 8: the MCP servers start (quietly) so that their tools are listed too.
fn list_tools(opening: &Opening<'_>, equipped: Equipped) -> Result<(), Stop> {
    let Equipped { mut toolbox, mut warnings, mcp_servers, output_schema, info, .. } = equipped;
    let (env, out) = (opening.env, opening.out);
    warnings.extend(toolbox::start_mcp(&mcp_servers, &mut toolbox, env, out, false)?);
    let rows = toolbox::tool_rows(&toolbox, output_schema.as_ref());
    out.tool_list(opening.plan.mode, &rows, &info, &warnings)?;
    Ok(())
}

/// Steps 9-11: the budget, the provider and the session, then `run_start`, the warnings and
/// the MCP servers.
fn start_engine(
    opening: Opening<'_>,
    equipped: Equipped,
    runtime: Runtime,
    title: &str,
) -> Result<Engine, Stop> {
    let Opening { plan, env, out, cwd, store, selection, .. } = opening;
    let Equipped { max_turns, mut warnings, settings, mcp_servers, mut toolbox, .. } = equipped;
    let max_usd = budget(&settings.max_budget_usd, &runtime, &mut warnings)?;
    let mut provider = build_provider(&runtime, settings.prompt_cache.value)?;
    let recorder = plan.record.as_deref().map(crate::run::record::Recorder::open).transpose()?;
    // The session is read within half the model's context: a session of any size resumes in
    // about the memory of what is sent.
    let window = runtime
        .model
        .map(|m| m.context_window)
        .or(settings.context_window)
        .unwrap_or(limits::DEFAULT_WINDOW);
    let history_budget = window.min(1_000_000) / 2;
    let opened = session::OpenSession { store, selection, budget: history_budget };
    let (session, history) = opened.open(plan, &runtime, cwd, title, out, &mut warnings)?;
    let session = session.map(|s| Arc::new(Mutex::new(s)));
    crate::run::ending::set_active_session(session.clone());
    let session_id = session.as_ref().map(|s| session_lock(s).id().to_string());
    let info = RunInfo { session_id, ..equipped.info };
    if let Some(s) = &session {
        let digest = equipped.output_schema.as_ref().map(|o| o.digest.clone());
        session_lock(s).set_output_schema(digest);
    }
    if settings.prompt_cache.value && runtime.kind == ProviderKind::OpenAi {
        provider.set_cache_key(info.session_id.clone());
    }
    // 10-11. run_start first, then the warnings; then the MCP servers start, all at once.
    start(plan, env, out, &info, &warnings, toolbox.sandbox())?;
    for warning in toolbox::start_mcp(&mcp_servers, &mut toolbox, env, out, true)? {
        out.warning(&warning)?;
    }
    // The project instructions follow the system prompt as a message of their own, read
    // afresh on every run (a session does not keep them).
    let mut head = vec![Message::system(equipped.system)];
    head.extend(equipped.told.map(Message::user));
    let rules = Rules {
        max_turns,
        model: runtime.model,
        permission_mode: plan.mode,
        autonomy: plan.autonomy,
        structured: equipped.output_schema,
        history_budget,
    };
    Ok(Engine::new(Parts {
        provider,
        recorder,
        tools: toolbox,
        out: out.clone(),
        session,
        // A session opened before its first prompt (live mode, an editor's session/new):
        // that prompt titles it.
        untitled: title.is_empty() && matches!(plan.session, SessionPlan::New) && !plan.ephemeral,
        rules,
        head,
        history,
        window,
        max_usd,
    }))
}

/// Another model for an open conversation (an editor's config option): the provider resolved
/// again from `choice` (its script path absolute), its key redacted like the first one's.
pub fn switch_model(
    choice: &config::Choice,
    env: &Env,
    out: &Output,
    session_id: Option<String>,
) -> Result<(Provider, Runtime), Failure> {
    let user_config = config::load_user_config(env)?;
    let runtime = config::resolve(env, user_config.as_ref(), choice)?;
    let settings =
        config::run_settings(&config::SettingFlags::default(), env, user_config.as_ref())?;
    if let Some(key) = &runtime.api_key {
        out.add_secret_min(key, 4);
    }
    let mut provider = build_provider(&runtime, settings.prompt_cache.value)?;
    if settings.prompt_cache.value && runtime.kind == ProviderKind::OpenAi {
        provider.set_cache_key(session_id);
    }
    Ok((provider, runtime))
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
    settings.add_dirs.value = toolbox::existing_dirs(&settings.add_dirs, env)?;
    let mut choice = plan.choice.clone();
    choice.script = choice.script.map(|s| started_in.join(s));
    let runtime = match config::resolve(env, user_config.as_ref(), &choice) {
        Ok(runtime) => Some(runtime),
        // A provider that cannot be set up; a bad flag is still an error.
        Err(Failure::Provider(_)) if plan.list_tools => None,
        Err(failure) => return Err(failure),
    };
    let max_turns = config::max_turns(plan.max_turns, env, user_config.as_ref())?;
    let mcp_servers = toolbox::mcp_servers(plan, env, user_config.as_ref(), started_in)?;
    let sandbox = toolbox::sandbox_request(plan, user_config.as_ref(), started_in)?;
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
