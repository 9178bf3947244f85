//! The run plan: `zero exec`'s parsed arguments and the environment become one validated plan,
//! in a pure function (no file, no stdin, no network), the way ripgrep turns its low-level
//! arguments into high-level ones. Executing the plan is `exec`'s job.
//!
//! Everything that can be checked from the command line alone is checked here, in the order a
//! run checks things (see `run::exec`), so a bad flag is reported before anything is read or
//! changed. What depends on
//! the world is left to the run: whether the `-C` directory and a named session exist, the
//! prompt's content, and the provider, model, profile and effort, which are resolved against
//! the configuration file (`config::resolve`), where their errors are reported.

use std::path::PathBuf;

use crate::cli::{ExecArgs, Resume};
use crate::config::{Choice, Env};
use crate::error::Failure;
use crate::output::Format;
use crate::protocol::events::{SchemaVersion, Warning, WarningCode};
use crate::protocol::input::InputFormat;
use crate::session;
use crate::tools::{self, Autonomy, PermissionMode};

/// What `--resume` / `--fork` ask for, checked for shape; whether the session exists
/// is decided when the run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionPlan {
    New,
    /// Bare `--resume`: the latest session.
    Latest,
    Resume(String),
    /// `--resume WORD`: a session if WORD names one or looks like a generated id, else a
    /// prompt word (it is also at `index` among the prompt words).
    Candidate {
        word: String,
        index: usize,
    },
    Fork(String),
}

/// What the bash tool gets of zero's environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellEnv {
    /// Pass every variable (`--shell-env inherit`).
    pub inherit: bool,
    /// Pass these too although their names look secret (`--shell-env-keep`).
    pub keep: Vec<String>,
}

/// Where one part of the system prompt comes from: the flag's text, or a file (relative to the
/// directory zero was started in), read when the run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptText {
    Text(String),
    File(PathBuf),
}

/// `--system-prompt[-file]` and `--append-system-prompt[-file]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemPromptFlags {
    pub replace: Option<PromptText>,
    pub append: Option<PromptText>,
}

/// A validated `zero exec`.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub input_format: InputFormat,
    pub output_format: Format,
    pub prompt_words: Vec<String>,
    /// `--file` (relative to the directory zero was started in, not `-C`).
    pub prompt_file: Option<PathBuf>,
    /// `--record` (relative to the directory zero was started in, not `-C`).
    pub record: Option<PathBuf>,
    /// The prompt (its file part) is read from stdin: `zero exec -` or `--file -`.
    pub prompt_stdin: bool,
    /// `--list-tools`: print the tools and stop.
    pub list_tools: bool,
    pub max_turns: Option<u32>,
    pub session: SessionPlan,
    pub cwd: Option<PathBuf>,
    pub autonomy: Autonomy,
    pub mode: PermissionMode,
    /// `--skip-permissions-unsafe` was given: the run is called unsafe, sandbox or not.
    pub skip_permissions: bool,
    pub enabled_tools: Vec<String>,
    pub disabled_tools: Vec<String>,
    pub shell_env: ShellEnv,
    /// `--shell-env` was given (to warn when bash does not run).
    pub shell_env_given: bool,
    /// Provider, model, profile, effort and script, as given (resolved at run time).
    pub choice: Choice,
    /// `--redact-env` values to treat as exact secrets.
    pub redact_values: Vec<String>,
    /// `--redact-env` names: `bash` does not get them (unless kept, see `ShellEnv`).
    pub redact_names: Vec<String>,
    /// `--ephemeral`: no session is written (one to resume or fork is still read).
    pub ephemeral: bool,
    /// What the user should hear about once the run has started.
    pub warnings: Vec<Warning>,
    /// `--schema-version`, when given.
    pub schema_version: Option<SchemaVersion>,
    /// `--heartbeat-ms`, when given.
    pub heartbeat_ms: Option<u64>,
    /// `--image` paths, as given.
    pub images: Vec<PathBuf>,
    /// `--live`: many turns over one stdin stream.
    pub live: bool,
    /// `--approvals stdin`: gated calls wait for the client's answer, this long.
    pub approvals: Option<std::time::Duration>,
    pub system_prompt: SystemPromptFlags,
    /// `--no-project-instructions` was given.
    pub no_project_instructions: bool,
    /// `--max-budget-usd`, in dollars.
    pub max_budget_usd: Option<f64>,
    /// `--add-dir`, as given (relative to the directory zero was started in).
    pub add_dirs: Vec<PathBuf>,
    /// `--output-schema`, read when the run starts.
    pub output_schema: Option<crate::run::structured::SchemaSource>,
    /// `--output-schema-attempts`.
    pub output_schema_attempts: u32,
    /// `--mcp-config` values, as given (files are read when the run starts).
    pub mcp_configs: Vec<String>,
    /// `--strict-mcp-config`: no servers from the user config file.
    pub strict_mcp_config: bool,
    /// The `--sandbox*` flags.
    pub sandbox: SandboxFlags,
}

/// What the command line says about bash's sandbox (the config file may say the rest).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxFlags {
    pub mode: Option<crate::tools::sandbox::Mode>,
    pub network: Option<bool>,
    /// As given (relative to the directory zero was started in).
    pub writable: Vec<PathBuf>,
    pub caches: bool,
    pub required: bool,
}

/// `on` or `off`, for the flag named.
fn on_off(value: &str, flag: &str) -> Result<bool, Failure> {
    match value.trim() {
        "on" => Ok(true),
        "off" => Ok(false),
        other => {
            Err(Failure::Usage(format!("Invalid {flag} value \"{other}\". Expected on or off.")))
        }
    }
}

fn sandbox_flags(args: &ExecArgs) -> Result<SandboxFlags, Failure> {
    let mode = args
        .sandbox
        .as_deref()
        .map(|m| {
            crate::tools::sandbox::Mode::parse(m).ok_or_else(|| {
                Failure::Usage(format!(
                    "Invalid --sandbox value \"{}\". Expected off, read-only or workspace-write.",
                    m.trim()
                ))
            })
        })
        .transpose()?;
    let network =
        args.sandbox_network.as_deref().map(|v| on_off(v, "--sandbox-network")).transpose()?;
    let caches =
        args.sandbox_caches.as_deref().map(|v| on_off(v, "--sandbox-caches")).transpose()?;
    if args.sandbox_writable.iter().any(|d| d.as_os_str().is_empty()) {
        return Err(Failure::Usage(
            "--sandbox-writable needs a directory; it was given an empty one.".to_string(),
        ));
    }
    Ok(SandboxFlags {
        mode,
        network,
        writable: args.sandbox_writable.clone(),
        caches: caches.unwrap_or(true),
        required: args.sandbox_required,
    })
}

/// `--approval-timeout-ms` when not given.
pub const DEFAULT_APPROVAL_TIMEOUT_MS: u64 = 60_000;
/// The longest `--approval-timeout-ms`: a day.
const MAX_APPROVAL_TIMEOUT_MS: u64 = 86_400_000;

/// `--live`, `--approvals` and `--approval-timeout-ms`, checked together: live mode reads
/// stream-json from stdin and writes stream-json, in schema 2.
/// `--approval-timeout-ms`: milliseconds, from 1 to a day.
pub fn approval_timeout_ms(value: &str) -> Result<u64, Failure> {
    let t = value.trim();
    let n = (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .then(|| t.parse::<u64>().ok())
        .flatten()
        .filter(|n| (1..=MAX_APPROVAL_TIMEOUT_MS).contains(n));
    n.ok_or_else(|| {
        Failure::Usage(format!(
            "Invalid --approval-timeout-ms value \"{t}\". Expected milliseconds from 1 to {MAX_APPROVAL_TIMEOUT_MS}."
        ))
    })
}

fn live_options(
    args: &ExecArgs,
    input: InputFormat,
    output: Format,
    schema: Option<SchemaVersion>,
    warnings: &mut Vec<Warning>,
) -> Result<Option<std::time::Duration>, Failure> {
    let usage = |m: &str| Err(Failure::Usage(m.to_string()));
    if args.live {
        if input != InputFormat::StreamJson || output != Format::StreamJson {
            return usage("--live needs -i stream-json and -o stream-json: turns arrive as input lines and each is answered with events.");
        }
        // `--resume ID` parses the id as a possible prompt word; live mode has none.
        let resume_word = usize::from(matches!(args.resume, Some(Resume::Candidate { .. })));
        if args.file.is_some() || args.prompt_words.len() > resume_word {
            return usage(
                "--live reads its turns from stdin: it takes no prompt words and no --file.",
            );
        }
        if schema == Some(SchemaVersion::V1) {
            return usage(
                "--live speaks stream-json schema 2; --schema-version 1 cannot be used with it.",
            );
        }
        if args.list_tools {
            return usage("--list-tools cannot be combined with --live.");
        }
        if !args.images.is_empty() {
            return usage(
                "--image cannot be used with --live: send images in the turns' message lines.",
            );
        }
    }
    let approvals = match args.approvals.as_deref().map(|v| v.trim().to_ascii_lowercase()) {
        None => false,
        Some(v) if v == "stdin" => true,
        Some(_) => {
            return Err(Failure::Usage(format!(
                "Invalid --approvals value \"{}\". Expected \"stdin\".",
                args.approvals.as_deref().unwrap_or_default().trim()
            )))
        }
    };
    if approvals && !args.live {
        return usage(
            "--approvals stdin needs --live: the answers are read from the live input stream.",
        );
    }
    let timeout = match args.approval_timeout_ms.as_deref() {
        None => DEFAULT_APPROVAL_TIMEOUT_MS,
        Some(value) => {
            let n = approval_timeout_ms(value)?;
            if !approvals {
                warnings.push(Warning::new(
                    WarningCode::IgnoredOption,
                    "--approval-timeout-ms is ignored: no approvals are asked without --approvals stdin.",
                ));
            }
            n
        }
    };
    Ok(approvals.then(|| std::time::Duration::from_millis(timeout)))
}

/// The longest `--heartbeat-ms`: an hour.
const MAX_HEARTBEAT_MS: u64 = 3_600_000;

/// `--schema-version`: one of the versions zero speaks. Read first, so that every later error
/// is written in the version the flag asks for.
pub fn schema_version(args: &ExecArgs) -> Result<Option<SchemaVersion>, Failure> {
    let Some(value) = args.schema_version.as_deref() else { return Ok(None) };
    let wanted = value.trim().parse::<u64>().ok().and_then(SchemaVersion::from_number);
    wanted.map(Some).ok_or_else(|| {
        Failure::Usage(format!(
            "Unsupported schema version \"{}\" (--schema-version). Supported: {}.",
            value.trim(),
            SchemaVersion::supported()
        ))
    })
}

/// `--heartbeat-ms`: milliseconds of silence before a heartbeat, 0 for none.
fn heartbeat_ms(value: &str) -> Result<u64, Failure> {
    let t = value.trim();
    let n = (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .then(|| t.parse::<u64>().ok())
        .flatten()
        .filter(|n| *n <= MAX_HEARTBEAT_MS);
    n.ok_or_else(|| {
        Failure::Usage(format!(
            "Invalid --heartbeat-ms value \"{t}\". Expected milliseconds from 0 to {MAX_HEARTBEAT_MS} (0 turns heartbeats off)."
        ))
    })
}

/// The plan of a `zero exec`, or its first usage error (input format, limits, session flags,
/// permissions and tools, the prompt's sources, live mode).
pub fn resolve(args: &ExecArgs, env: &Env) -> Result<RunPlan, Failure> {
    if let Some(error) = &args.error {
        return Err(Failure::Usage(format!("{error} (see zero exec --help)")));
    }
    // 2. Input format, and the turn limit.
    let input_format = input_format(args)?;
    let output_format = output_format(args)?;
    let schema_version = schema_version(args)?;
    let heartbeat_ms = args.heartbeat_ms.as_deref().map(heartbeat_ms).transpose()?;
    let max_turns = args.max_turns.as_deref().map(max_turns).transpose()?;
    let max_output_tokens = args.max_output_tokens.as_deref().map(max_output_tokens).transpose()?;
    // 4. Session flags.
    let session = session_plan(args)?;
    // 7. Permissions, tool filters, the shell's environment, secrets to redact.
    let Permissions { autonomy, mode, enabled_tools, disabled_tools } = permissions(args)?;
    let inherit = shell_inherit(args)?;
    let mut warnings = Vec::new();
    let redact_values = named_values(args, env, &mut warnings);
    let prompt = prompt_sources(args)?;
    let approvals = live_options(args, input_format, output_format, schema_version, &mut warnings)?;
    let system_prompt = system_prompt_flags(args)?;
    let max_budget_usd = args.max_budget_usd.as_deref().map(max_budget_usd).transpose()?;
    let output_schema_attempts = schema_attempts(args, &mut warnings)?;
    if args.add_dirs.iter().any(|d| d.as_os_str().is_empty()) {
        return Err(Failure::Usage(
            "--add-dir needs a directory; it was given an empty one.".to_string(),
        ));
    }
    Ok(RunPlan {
        input_format,
        output_format,
        prompt_words: prompt.words,
        prompt_file: prompt.file,
        record: args.record.clone(),
        prompt_stdin: prompt.stdin,
        list_tools: args.list_tools,
        max_turns,
        session,
        cwd: args.cwd.clone(),
        autonomy,
        ephemeral: args.ephemeral,
        mode,
        skip_permissions: args.skip_permissions_unsafe,
        enabled_tools,
        disabled_tools,
        shell_env: ShellEnv { inherit, keep: args.shell_env_keep.clone() },
        shell_env_given: args.shell_env.is_some(),
        choice: Choice {
            provider: args.provider.clone(),
            model: args.model.clone(),
            profile: args.profile.clone(),
            effort: args.reasoning_effort.clone(),
            script: args.script.clone(),
            max_output_tokens,
        },
        redact_values,
        redact_names: args.redact_env.clone(),
        warnings,
        schema_version,
        heartbeat_ms,
        images: args.images.clone(),
        live: args.live,
        approvals,
        system_prompt,
        no_project_instructions: args.no_project_instructions,
        max_budget_usd,
        add_dirs: args.add_dirs.clone(),
        output_schema: args
            .output_schema
            .as_deref()
            .map(crate::run::structured::SchemaSource::parse),
        output_schema_attempts,
        mcp_configs: args.mcp_configs.clone(),
        strict_mcp_config: args.strict_mcp_config,
        sandbox: sandbox_flags(args)?,
    })
}

/// `--auto`, `--skip-permissions-unsafe` and the tool filters, as a plan holds them.
struct Permissions {
    autonomy: Autonomy,
    mode: PermissionMode,
    enabled_tools: Vec<String>,
    disabled_tools: Vec<String>,
}

fn permissions(args: &ExecArgs) -> Result<Permissions, Failure> {
    let autonomy = tools::parse_autonomy(args.auto.as_deref())?;
    let mode = if args.skip_permissions_unsafe || autonomy == Autonomy::High {
        PermissionMode::Unsafe
    } else {
        PermissionMode::Auto
    };
    let Filters { enabled, disabled, names_answer } = structured_filters(args)?;
    let mut enabled_tools = tools::parse_filter(&enabled, "enabled")?;
    if names_answer {
        // `--enabled-tools structured_output`: the answer's tool is on; a built-in tool only
        // when it is named too (an empty list would mean all of them).
        enabled_tools.push(crate::run::structured::TOOL.to_string());
    }
    let disabled_tools = tools::parse_filter(&disabled, "disabled")?;
    tools::check_overlap(&enabled_tools, &disabled_tools)?;
    Ok(Permissions { autonomy, mode, enabled_tools, disabled_tools })
}

/// The tool filters as `parse_filter` takes them: without `structured_output`, which
/// `--output-schema` always offers.
struct Filters {
    enabled: Vec<String>,
    disabled: Vec<String>,
    /// `--enabled-tools` named `structured_output`.
    names_answer: bool,
}

/// The tool filters; naming `structured_output` in `--disabled-tools` is a usage error.
fn structured_filters(args: &ExecArgs) -> Result<Filters, Failure> {
    let tool = crate::run::structured::TOOL;
    let names = |list: &[String]| -> Vec<String> {
        list.iter()
            .flat_map(|v| v.split(|c: char| c == ',' || c.is_whitespace()))
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (enabled, disabled) = (names(&args.enabled_tools), names(&args.disabled_tools));
    if args.output_schema.is_none() {
        let (enabled, disabled) = (args.enabled_tools.clone(), args.disabled_tools.clone());
        return Ok(Filters { enabled, disabled, names_answer: false });
    }
    if disabled.iter().any(|n| n == tool) {
        return Err(Failure::Usage(format!(
            "{tool} cannot be disabled: --output-schema gives its answer through it."
        )));
    }
    let names_answer = enabled.iter().any(|n| n == tool);
    let enabled = enabled.into_iter().filter(|n| n != tool).collect();
    Ok(Filters { enabled, disabled, names_answer })
}

/// `--output-schema-attempts`: 1 to 10, default 3; a warning without `--output-schema`.
fn schema_attempts(args: &ExecArgs, warnings: &mut Vec<Warning>) -> Result<u32, Failure> {
    let Some(value) = args.output_schema_attempts.as_deref() else { return Ok(3) };
    let t = value.trim();
    let n = t
        .parse::<u32>()
        .ok()
        .filter(|n| (1..=10).contains(n) && t.bytes().all(|b| b.is_ascii_digit()));
    let n = n.ok_or_else(|| {
        Failure::Usage(format!(
            "Invalid --output-schema-attempts value \"{t}\". Expected an integer from 1 to 10."
        ))
    })?;
    if args.output_schema.is_none() {
        warnings.push(Warning::new(
            WarningCode::IgnoredOption,
            "--output-schema-attempts is ignored: it counts the answers given for --output-schema.",
        ));
    }
    Ok(n)
}

/// The system prompt flags: of each kind (replace, append) the text or the file, not both.
fn system_prompt_flags(args: &ExecArgs) -> Result<SystemPromptFlags, Failure> {
    let one = |text: &Option<String>, file: &Option<PathBuf>, flag: &str| match (text, file) {
        (Some(_), Some(_)) => {
            Err(Failure::Usage(format!("Use either --{flag} or --{flag}-file, not both.")))
        }
        (Some(text), None) => Ok(Some(PromptText::Text(text.clone()))),
        (None, Some(file)) => Ok(Some(PromptText::File(file.clone()))),
        (None, None) => Ok(None),
    };
    Ok(SystemPromptFlags {
        replace: one(&args.system_prompt, &args.system_prompt_file, "system-prompt")?,
        append: one(
            &args.append_system_prompt,
            &args.append_system_prompt_file,
            "append-system-prompt",
        )?,
    })
}

/// `--max-budget-usd`: dollars, more than nothing.
fn max_budget_usd(value: &str) -> Result<f64, Failure> {
    let t = value.trim();
    let t = t.strip_prefix('$').unwrap_or(t);
    let plain = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    t.parse::<f64>().ok().filter(|f| plain && crate::config::budget_in_range(*f)).ok_or_else(|| {
        Failure::Usage(format!(
            "Invalid --max-budget-usd value \"{}\". Expected dollars greater than 0 and at most 1000000 (e.g. 2 or 0.50).",
            value.trim()
        ))
    })
}

/// `-i`: text, or stream-json lines.
fn input_format(args: &ExecArgs) -> Result<InputFormat, Failure> {
    match args.input_format.as_deref() {
        None => Ok(InputFormat::Text),
        Some(v) => InputFormat::parse(v).ok_or_else(|| {
            Failure::Usage(format!(
                "Invalid input format \"{}\". Expected \"text\" or \"stream-json\".",
                v.trim()
            ))
        }),
    }
}

/// `--shell-env`: whether bash gets every variable (`inherit`) or the filtered set.
fn shell_inherit(args: &ExecArgs) -> Result<bool, Failure> {
    match args.shell_env.as_deref().map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(false),
        Some(v) if v == "filtered" => Ok(false),
        Some(v) if v == "inherit" => Ok(true),
        Some(_) => Err(Failure::Usage(format!(
            "Invalid --shell-env value \"{}\". Expected \"filtered\" or \"inherit\".",
            args.shell_env.as_deref().unwrap_or_default().trim()
        ))),
    }
}

/// The values of the `--redact-env` variables, and a warning for each named variable (of
/// `--redact-env` or `--shell-env-keep`) that is unset or too short to redact.
fn named_values(args: &ExecArgs, env: &Env, warnings: &mut Vec<Warning>) -> Vec<String> {
    let mut values = Vec::new();
    let mut warn =
        |message: String| warnings.push(Warning::new(WarningCode::IgnoredOption, message));
    for name in &args.redact_env {
        match env.get(name) {
            Some(value) if value.len() >= 4 => values.push(value.to_string()),
            Some(_) => warn(format!(
                "--redact-env {name}: values shorter than 4 characters are not redacted."
            )),
            None => warn(format!("--redact-env {name}: the variable is not set.")),
        }
    }
    for name in args.shell_env_keep.iter().filter(|name| env.get(name).is_none()) {
        warn(format!("--shell-env-keep {name}: the variable is not set."));
    }
    values
}

/// Where the prompt comes from: its words (or `--prompt`), a file, and whether stdin adds
/// to them.
struct PromptSources {
    words: Vec<String>,
    file: Option<PathBuf>,
    stdin: bool,
}

/// A `-` word, wherever it stands, or `--file -`, reads the prompt's rest from stdin (after
/// the other words and a blank line); stdin can be read once. `--prompt` replaces the words.
fn prompt_sources(args: &ExecArgs) -> Result<PromptSources, Failure> {
    let dashes = args.prompt_words.iter().filter(|w| *w == "-").count();
    let dash_file = args.file.as_deref() == Some(std::path::Path::new("-"));
    if dashes > 1 || (dashes > 0 && dash_file) {
        return Err(Failure::Usage(
            "stdin can be read once: give one `-` word or `--file -`, not more.".to_string(),
        ));
    }
    let mut words: Vec<String> = args.prompt_words.iter().filter(|w| *w != "-").cloned().collect();
    if let Some(prompt) = &args.prompt {
        // `--resume WORD` also put WORD among the words, as a possible prompt word.
        let resume_word = usize::from(matches!(args.resume, Some(Resume::Candidate { .. })));
        if args.prompt_words.len() - dashes > resume_word {
            return Err(Failure::Usage(
                "Give the prompt either as words or with --prompt, not both.".to_string(),
            ));
        }
        if args.live {
            return Err(Failure::Usage(
                "--live reads its turns from stdin: it takes no --prompt.".to_string(),
            ));
        }
        // The resume word, if any, is then a session id (see `session_plan`); a `-` still
        // appends stdin.
        words = vec![prompt.clone()];
    }
    let file = if dash_file { None } else { args.file.clone() };
    Ok(PromptSources { words, file, stdin: dashes > 0 || dash_file })
}

/// `-o`: decided before anything else can fail, since every later error is written in it.
pub fn output_format(args: &ExecArgs) -> Result<Format, Failure> {
    match args.output_format.as_deref() {
        None => Ok(Format::Text),
        Some(value) => Format::parse(value).ok_or_else(|| {
            Failure::Usage(format!(
                "Invalid output format \"{}\". Expected \"text\", \"json\", or \"stream-json\".",
                value.trim()
            ))
        }),
    }
}

/// `--max-output-tokens`: a positive integer (a known model's limit caps it later).
fn max_output_tokens(value: &str) -> Result<u64, Failure> {
    let t = value.trim();
    let valid = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    t.parse::<u64>().ok().filter(|n| valid && (1..=MAX_OUTPUT_TOKENS).contains(n)).ok_or_else(|| {
        Failure::Usage(format!(
            "Invalid --max-output-tokens value \"{t}\". Expected a positive integer up to {MAX_OUTPUT_TOKENS}."
        ))
    })
}

/// No model writes more than this per call; a larger value is surely a typo.
const MAX_OUTPUT_TOKENS: u64 = 10_000_000;

/// `--max-turns`: a positive integer (a run of zero turns could not answer).
fn max_turns(value: &str) -> Result<u32, Failure> {
    let t = value.trim();
    let valid = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    t.parse::<u32>().ok().filter(|n| valid && *n > 0).ok_or_else(|| {
        Failure::Usage(format!("Invalid --max-turns value \"{t}\". Expected a positive integer."))
    })
}

/// `--resume` and `--fork`: at most one, with ids of the right shape.
fn session_plan(args: &ExecArgs) -> Result<SessionPlan, Failure> {
    let id = |id: &str| -> Result<String, Failure> {
        let id = id.trim();
        if session::valid_id(id) {
            Ok(id.to_string())
        } else {
            Err(Failure::Usage(format!("Invalid Zero session id: {id}")))
        }
    };
    Ok(match (&args.resume, &args.fork) {
        (Some(_), Some(_)) => {
            return Err(Failure::Usage("Use either --resume or --fork, not both.".to_string()))
        }
        // `--list-tools` starts no session.
        _ if args.list_tools => SessionPlan::New,
        (None, None) => SessionPlan::New,
        (None, Some(fork)) => SessionPlan::Fork(id(fork)?),
        (Some(Resume::Latest), None) => SessionPlan::Latest,
        (Some(Resume::Id(resume)), None) => SessionPlan::Resume(id(resume)?),
        // Live mode and `--prompt` take no prompt words: the word is the session to resume.
        (Some(Resume::Candidate { word, .. }), None) if args.live || args.prompt.is_some() => {
            SessionPlan::Resume(id(word)?)
        }
        (Some(Resume::Candidate { word, index }), None) => {
            // Its place among the words once the `-` words are taken out.
            let dashes = args.prompt_words[..*index].iter().filter(|w| *w == "-").count();
            SessionPlan::Candidate { word: word.clone(), index: index - dashes }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{parse, Command};

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    fn plan_with(args: &[&str], env: &Env) -> Result<RunPlan, Failure> {
        let mut all = vec!["exec"];
        all.extend_from_slice(args);
        match parse(all.iter().map(std::ffi::OsString::from).collect()) {
            Command::Exec(parsed) => resolve(&parsed, env),
            other => panic!("expected exec, got {other:?}"),
        }
    }

    fn plan(args: &[&str]) -> RunPlan {
        plan_with(args, &env(&[])).unwrap_or_else(|f| panic!("{args:?}: {f:?}"))
    }

    fn usage_error(args: &[&str]) -> String {
        match plan_with(args, &env(&[])) {
            Err(Failure::Usage(message)) => message,
            other => panic!("{args:?}: expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn defaults() {
        let p = plan(&["hi"]);
        assert_eq!(p.input_format, InputFormat::Text);
        assert_eq!(p.prompt_words, ["hi"]);
        assert_eq!((p.prompt_file, p.list_tools, p.max_turns), (None, false, None));
        assert!(!p.prompt_stdin);
        assert_eq!((p.session, p.cwd), (SessionPlan::New, None));
        assert_eq!((p.autonomy, p.mode), (Autonomy::Low, PermissionMode::Auto));
        assert!(p.enabled_tools.is_empty() && p.disabled_tools.is_empty());
        assert_eq!(p.shell_env, ShellEnv::default());
        assert!(p.redact_values.is_empty() && p.warnings.is_empty());
    }

    #[test]
    fn every_value_the_completions_offer_is_one_zero_accepts() {
        use crate::provider::models::{Effort, Profile};
        for (flag, choices) in crate::cli::exec_choices() {
            let named = format!("--{flag}");
            // The model's settings are checked once the provider is known, by their parsers.
            let parser: Option<fn(&str) -> bool> = match flag {
                "profile" => Some(|v| Profile::parse(v).is_some()),
                "reasoning-effort" => Some(|v| Effort::parse(v).is_some()),
                "provider" => Some(|v| crate::config::ProviderKind::parse(v).is_some()),
                _ => None,
            };
            for choice in choices {
                let accepted = match parser {
                    Some(parses) => parses(choice),
                    None => {
                        let args =
                            ["-i", "stream-json", "-o", "stream-json", "--live", &named, choice];
                        match plan_with(&args, &env(&[])) {
                            Err(Failure::Usage(message) | Failure::Config(message)) => {
                                !message.contains(&format!("\"{choice}\""))
                            }
                            _ => true,
                        }
                    }
                };
                assert!(accepted, "{named} {choice}");
            }
            let refused = match parser {
                Some(parses) => !parses("bogus"),
                None => matches!(
                    plan_with(&[&named, "bogus", "x"], &env(&[])),
                    Err(Failure::Usage(message) | Failure::Config(message))
                        if message.contains("\"bogus\"")
                ),
            };
            assert!(refused, "{named} bogus");
        }
    }

    #[test]
    fn each_flag_lands_in_the_plan() {
        assert_eq!(plan(&["-i", "stream-json"]).input_format, InputFormat::StreamJson);
        assert_eq!(plan(&["-f", "p.txt"]).prompt_file, Some(PathBuf::from("p.txt")));
        let p = plan(&["-"]);
        assert!(p.prompt_stdin && p.prompt_words.is_empty());
        let p = plan(&["-f", "-", "fix", "it"]);
        assert!(p.prompt_stdin && p.prompt_file.is_none());
        assert_eq!(p.prompt_words, ["fix", "it"]);
        assert!(plan(&["--list-tools"]).list_tools);
        assert_eq!(plan(&["--max-turns", " 7 ", "x"]).max_turns, Some(7));
        assert_eq!(plan(&["-C", "/repo", "x"]).cwd, Some(PathBuf::from("/repo")));
        assert_eq!(plan(&["--auto", "medium", "x"]).autonomy, Autonomy::Medium);
        assert_eq!(plan(&["--auto", "high", "x"]).mode, PermissionMode::Unsafe);
        assert_eq!(plan(&["--skip-permissions-unsafe", "x"]).mode, PermissionMode::Unsafe);
        assert_eq!(plan(&["--enabled-tools", "grep,glob", "x"]).enabled_tools, ["grep", "glob"]);
        assert_eq!(plan(&["--disabled-tools", "bash", "x"]).disabled_tools, ["bash"]);
        assert!(plan(&["--shell-env", "inherit", "x"]).shell_env.inherit);
        assert_eq!(plan(&["--shell-env-keep", "A", "x"]).shell_env.keep, ["A"]);
        let p = plan(&["-m", "m", "--profile", "fast", "-r", "high", "--provider", "openai", "x"]);
        assert_eq!(p.choice.model.as_deref(), Some("m"));
        assert_eq!(p.choice.profile.as_deref(), Some("fast"));
        assert_eq!(p.choice.effort.as_deref(), Some("high"));
        assert_eq!(p.choice.provider.as_deref(), Some("openai"));
        assert_eq!(plan(&["--script", "s.json", "x"]).choice.script, Some(PathBuf::from("s.json")));
    }

    #[test]
    fn session_flags_become_a_session_plan() {
        let id = "zero_20261201000000_abcd1234";
        assert_eq!(plan(&["--resume", "--", "x"]).session, SessionPlan::Latest);
        assert_eq!(plan(&[&format!("--resume={id}"), "x"]).session, SessionPlan::Resume(id.into()));
        assert_eq!(
            plan(&["--resume", "fix", "it"]).session,
            SessionPlan::Candidate { word: "fix".into(), index: 0 }
        );
        assert_eq!(plan(&["--fork", id, "x"]).session, SessionPlan::Fork(id.into()));
        assert_eq!(plan(&["--list-tools", "--resume"]).session, SessionPlan::New);
    }

    #[test]
    fn redact_env_and_shell_env_keep_read_the_environment() {
        let e = env(&[("LONG", "value-1234"), ("SHORT", "abc")]);
        let p = plan_with(
            &["--redact-env", "LONG", "--redact-env", "SHORT", "--redact-env", "NONE", "x"],
            &e,
        )
        .unwrap();
        assert_eq!(p.redact_values, ["value-1234"]);
        let messages: Vec<&str> = p.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "--redact-env SHORT: values shorter than 4 characters are not redacted.",
                "--redact-env NONE: the variable is not set."
            ]
        );
        assert!(p.warnings.iter().all(|w| w.code == WarningCode::IgnoredOption));
        let p =
            plan_with(&["--shell-env-keep", "NONE", "--shell-env-keep", "LONG", "x"], &e).unwrap();
        assert_eq!(
            p.warnings,
            [Warning::new(
                WarningCode::IgnoredOption,
                "--shell-env-keep NONE: the variable is not set."
            )]
        );
    }

    #[test]
    fn each_error_is_a_usage_error_naming_the_value() {
        let cases: &[(&[&str], &str)] = &[
            (&["--bogus", "x"], "invalid option '--bogus' (see zero exec --help)"),
            (
                &["-i", "yaml"],
                "Invalid input format \"yaml\". Expected \"text\" or \"stream-json\".",
            ),
            (
                &["--max-turns", "-1", "x"],
                "Invalid --max-turns value \"-1\". Expected a positive integer.",
            ),
            (
                &["--max-turns", "0", "x"],
                "Invalid --max-turns value \"0\". Expected a positive integer.",
            ),
            (
                &["--max-turns", "9999999999", "x"],
                "Invalid --max-turns value \"9999999999\". Expected a positive integer.",
            ),
            (&["--resume=x", "--fork", "y", "z"], "Use either --resume or --fork, not both."),
            (&["--resume=bad id", "x"], "Invalid Zero session id: bad id"),
            (&["--fork", "-bad", "x"], "Invalid Zero session id: -bad"),
            (
                &["-f", "-", "-"],
                "stdin can be read once: give one `-` word or `--file -`, not more.",
            ),
            (
                &["--auto", "chaos", "x"],
                "Invalid autonomy level \"chaos\". Expected low, medium, or high.",
            ),
            (&["--enabled-tools", "nope", "x"], "Unknown tool: nope"),
            (&["--disabled-tools", "bad!", "x"], "Invalid disabled tool \"bad!\"."),
            (
                &["--enabled-tools", "grep", "--disabled-tools", "grep", "x"],
                "Tool cannot be both enabled and disabled: grep",
            ),
            (
                &["--shell-env", "all", "x"],
                "Invalid --shell-env value \"all\". Expected \"filtered\" or \"inherit\".",
            ),
        ];
        for (args, message) in cases {
            assert_eq!(usage_error(args), *message, "{args:?}");
        }
    }

    #[test]
    fn errors_come_in_b_1_3_order() {
        // The input format before the turn limit, the turn limit before sessions, sessions
        // before permissions.
        assert!(usage_error(&["-i", "x", "--max-turns", "y"]).starts_with("Invalid input format"));
        assert!(usage_error(&["--max-turns", "y", "--resume=a", "--fork", "b"])
            .starts_with("Invalid --max-turns"));
        assert!(
            usage_error(&["--resume=a", "--fork", "b", "--auto", "z"]).starts_with("Use either")
        );
        assert!(usage_error(&["--auto", "z", "--enabled-tools", "nope"])
            .starts_with("Invalid autonomy"));
    }
}
