//! The output events of a run, as types: the stream-json protocol's events (schemas 1 and 2,
//! whose JSON Schemas `zero schema N` prints) with the names they have on the wire, and the legacy
//! `json` format's lines. No logic lives here: `output` builds an [`Event`] once and renders every
//! format from that one value (stream-json is its serialisation inside the envelope, the legacy
//! lines and the text rows are views).
//!
//! Every string in an event is already redacted when the event is built. A field that only a
//! view needs is skipped in serialisation. A field that only schema 2 has is an `Option` that
//! the emitter leaves `None` in schema 1, so a schema-1 line stays exactly what it was; the
//! event kinds that only schema 2 has are never built in schema 1.

use serde::Serialize;

pub use crate::error::{ErrorCode, Exit, RunStatus};
use serde_json::Value;

/// A stream-json schema version zero speaks (`--schema-version`): 1, the default, and 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchemaVersion {
    V1,
    V2,
}

impl SchemaVersion {
    /// Every version zero speaks, oldest first.
    pub const ALL: &[SchemaVersion] = &[SchemaVersion::V1, SchemaVersion::V2];

    /// The number on the wire (`schemaVersion`).
    pub fn number(self) -> u8 {
        match self {
            SchemaVersion::V1 => 1,
            SchemaVersion::V2 => 2,
        }
    }

    /// The version numbered `n`, if zero speaks it.
    pub fn from_number(n: u64) -> Option<SchemaVersion> {
        SchemaVersion::ALL.iter().copied().find(|v| u64::from(v.number()) == n)
    }

    /// `1, 2`: the versions zero speaks, for messages.
    pub fn supported() -> String {
        let numbers: Vec<String> =
            SchemaVersion::ALL.iter().map(|v| v.number().to_string()).collect();
        numbers.join(", ")
    }
}

/// One stream-json event. The envelope (`schemaVersion`, `runId`, and `seq` in schema 2) is
/// added around it.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Event<'a> {
    RunStart {
        #[serde(skip_serializing_if = "Option::is_none")]
        session_id: Option<&'a str>,
        cwd: &'a str,
        provider: &'a str,
        model: &'a str,
        api_model: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        permission_mode: Option<PermissionMode>,
        #[serde(skip_serializing_if = "Option::is_none")]
        autonomy: Option<Autonomy>,
        #[serde(skip_serializing_if = "Option::is_none")]
        heartbeat_ms: Option<u64>,
        /// Schema 2: the `AGENTS.md` files read, when any were.
        #[serde(skip_serializing_if = "Option::is_none")]
        instructions: Option<&'a [String]>,
        /// Schema 2: the extra roots of `--add-dir`, when any were given.
        #[serde(skip_serializing_if = "Option::is_none")]
        add_dirs: Option<&'a [String]>,
        /// Schema 2: bash's sandbox (`mode`, `network`, `enforcement`).
        #[serde(skip_serializing_if = "Option::is_none")]
        sandbox: Option<&'a Value>,
        /// What only the legacy `run_start` line says.
        #[serde(skip)]
        details: &'a RunDetails,
    },
    Warning {
        message: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<WarningCode>,
    },
    /// Schema 2: how one MCP server's start ended.
    McpServer {
        name: &'a str,
        status: &'static str,
        transport: &'static str,
        tools: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        protocol_version: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
    },
    Text {
        delta: &'a str,
    },
    Reasoning {
        delta: &'a str,
    },
    ToolCall {
        id: &'a str,
        name: &'a str,
        /// The arguments as JSON (in schema 1 the model's text as a string when it was not
        /// JSON; in schema 2 left out unless they are an object).
        #[serde(skip_serializing_if = "Option::is_none")]
        args: Option<&'a Value>,
        side_effect: SideEffect,
        /// The arguments as JSON text, for the legacy line.
        #[serde(skip)]
        arguments: &'a str,
        /// The id before it was fitted to the protocol's rule, for the legacy line.
        #[serde(skip)]
        raw_id: &'a str,
    },
    PermissionRequest {
        id: &'a str,
        name: &'a str,
        /// What is done about the call: the client is asked (`prompt`).
        action: Permission,
        permission: Permission,
        permission_granted: bool,
        permission_mode: PermissionMode,
        autonomy: Autonomy,
        side_effect: SideEffect,
        #[serde(skip_serializing_if = "Option::is_none")]
        session_id: Option<&'a str>,
        risk: Risk,
        reason: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        request_id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    PermissionDecision {
        id: &'a str,
        name: &'a str,
        action: Action,
        permission: Permission,
        permission_granted: bool,
        permission_mode: PermissionMode,
        autonomy: Autonomy,
        side_effect: SideEffect,
        #[serde(skip_serializing_if = "Option::is_none")]
        session_id: Option<&'a str>,
        risk: Risk,
        decision_reason: &'a str,
        decided_by: DecidedBy,
    },
    ToolResult {
        id: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<&'a str>,
        status: Status,
        /// At most 32 KiB.
        output: &'a str,
        truncated: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        redacted: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        changed_files: Option<&'a [String]>,
        #[serde(skip_serializing_if = "Option::is_none")]
        meta: Option<&'a serde_json::Map<String, Value>>,
        /// The exit code of a command (bash), on the wire in schema 2.
        #[serde(skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        #[serde(skip)]
        raw_id: &'a str,
        /// The exit code of a command (bash), for the text row.
        #[serde(skip)]
        command_exit: Option<i32>,
    },
    Usage {
        prompt_tokens: u64,
        completion_tokens: u64,
        total_tokens: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// Schema 2, when the provider reported them: prompt tokens read from and written to
        /// its cache (part of `prompt_tokens`).
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_read_tokens: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_write_tokens: Option<u64>,
        /// The model call's number within the process, from 1.
        #[serde(skip_serializing_if = "Option::is_none")]
        call: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cumulative: Option<Totals>,
    },
    Heartbeat {
        phase: Phase,
        elapsed_ms: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<&'a str>,
    },
    Final {
        text: &'a str,
        /// Schema 2, with `--output-schema`: the answer itself (left out when it is `null`).
        #[serde(skip_serializing_if = "Option::is_none")]
        structured: Option<&'a Value>,
    },
    Error {
        code: ErrorCode,
        message: &'a str,
        recoverable: bool,
    },
    /// Live mode: the end of one user turn.
    TurnEnd {
        turn: u64,
        status: RunStatus,
    },
    RunEnd {
        status: RunStatus,
        exit_code: Exit,
        /// The lines of the process including this one (schema 2).
        #[serde(skip_serializing_if = "Option::is_none")]
        event_count: Option<u64>,
    },
}

/// `usage.cumulative`: the token counts (and cost) of every model call of the process so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// Present while every call so far had a known price: a sum that leaves calls out would
    /// understate the cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// What a tool call can affect (`tool_call.sideEffect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SideEffect {
    Read,
    Write,
    Shell,
    /// A tool zero does not know.
    Unknown,
    /// No effect outside the run (`structured_output`); schema 1, which has no `none`, says
    /// `read`.
    None,
}

impl SideEffect {
    /// Every value schema 1 writes, in the order `zero schema` lists them (schema 2 adds
    /// `network` and `none`).
    pub const ALL: [SideEffect; 4] =
        [SideEffect::Read, SideEffect::Write, SideEffect::Shell, SideEffect::Unknown];
}

impl SideEffect {
    pub fn name(self) -> &'static str {
        match self {
            SideEffect::Read => "read",
            SideEffect::Write => "write",
            SideEffect::Shell => "shell",
            SideEffect::Unknown => "unknown",
            SideEffect::None => "none",
        }
    }
}

/// Whether a tool runs without the caller's say-so (`--list-tools`'s `permission`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    Allow,
    Prompt,
}

impl Permission {
    pub fn name(self) -> &'static str {
        match self {
            Permission::Allow => "allow",
            Permission::Prompt => "prompt",
        }
    }
}

/// What the process is waiting for (`heartbeat.phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Model,
    Tool,
    Approval,
}

impl Phase {
    /// Every value, in the order `zero schema` lists them.
    pub const ALL: [Phase; 3] = [Phase::Model, Phase::Tool, Phase::Approval];
}

/// `--auto`: what runs without asking. Low reads; medium also edits files in the workspace;
/// high also runs commands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Autonomy {
    #[default]
    Low,
    Medium,
    High,
}

impl Autonomy {
    /// Every value, in the order `zero schema` lists them.
    pub const ALL: [Autonomy; 3] = [Autonomy::Low, Autonomy::Medium, Autonomy::High];
}

impl Autonomy {
    pub fn name(self) -> &'static str {
        match self {
            Autonomy::Low => "low",
            Autonomy::Medium => "medium",
            Autonomy::High => "high",
        }
    }
}

/// The run's permission mode: `auto` runs what the autonomy level allows, `unsafe` runs every
/// tool (`--auto high`, `--skip-permissions-unsafe`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionMode {
    #[default]
    Auto,
    Unsafe,
}

impl PermissionMode {
    /// Every value, in the order `zero schema` lists them.
    pub const ALL: [PermissionMode; 2] = [PermissionMode::Auto, PermissionMode::Unsafe];
}

impl PermissionMode {
    pub fn name(self) -> &'static str {
        match self {
            PermissionMode::Auto => "auto",
            PermissionMode::Unsafe => "unsafe",
        }
    }
}

/// Text output names each of these the way the wire does.
macro_rules! display_by_name {
    ($($kind:ty),*) => {$(
        impl std::fmt::Display for $kind {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.name())
            }
        }
    )*};
}

display_by_name!(SideEffect, Permission, Autonomy, PermissionMode);

/// `permission_decision.action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Allow,
    Deny,
    /// The approval was cancelled (an interrupt): the call did not run.
    Cancel,
}

impl Action {
    /// Every value, in the order `zero schema` lists them.
    pub const ALL: [Action; 3] = [Action::Allow, Action::Deny, Action::Cancel];
}

/// `permission_decision.decidedBy`: who decided a call that needs permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// No one was asked: the autonomy level (or `--skip-permissions-unsafe`) decided.
    Policy,
    /// The client answered the request.
    Client,
    /// An earlier `allow_session` answer covers the call.
    Session,
    /// No answer came in time.
    Timeout,
    /// The input ended before an answer came.
    Eof,
    /// An interrupt (SIGINT) cancelled the wait.
    Interrupt,
}

impl DecidedBy {
    /// Every value, in the order `zero schema` lists them.
    pub const ALL: [DecidedBy; 6] = [
        DecidedBy::Policy,
        DecidedBy::Client,
        DecidedBy::Session,
        DecidedBy::Timeout,
        DecidedBy::Eof,
        DecidedBy::Interrupt,
    ];
}

/// `risk` of the permission events: how much a call can affect, from its side effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Risk {
    pub level: RiskLevel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    Low,
    Medium,
    High,
}

impl RiskLevel {
    /// Every value, in the order `zero schema` lists them.
    pub const ALL: [RiskLevel; 3] = [RiskLevel::Low, RiskLevel::Medium, RiskLevel::High];
}

impl Risk {
    /// read: low; write: medium; shell and anything unknown: high.
    pub fn of(side_effect: SideEffect) -> Risk {
        let level = match side_effect {
            SideEffect::Read | SideEffect::None => RiskLevel::Low,
            SideEffect::Write => RiskLevel::Medium,
            SideEffect::Shell | SideEffect::Unknown => RiskLevel::High,
        };
        Risk { level }
    }
}

/// `tool_result.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Error,
}

impl Status {
    /// Every value, in the order `zero schema` lists them.
    pub const ALL: [Status; 2] = [Status::Ok, Status::Error];
}

/// A warning and its stable code (schema 2's `warning.code`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub code: WarningCode,
    pub message: String,
}

impl Warning {
    pub fn new(code: WarningCode, message: impl Into<String>) -> Warning {
        Warning { code, message: message.into() }
    }
}

/// The documented `warning.code` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningCode {
    /// `--skip-permissions-unsafe`, or `--auto high` where bash runs unconfined: every tool
    /// runs.
    UnsafeMode,
    /// `--auto high` with bash's sandbox enforced: what confines its commands.
    BashSandboxed,
    /// An option, variable or value that has no effect in this run.
    IgnoredOption,
    /// A provider call is tried again.
    Retry,
    /// The model stopped at its output token limit.
    OutputLimit,
    /// A key of the config file this zero does not know.
    UnknownConfigKey,
    /// The run is not (or no longer) recorded as a session.
    SessionUnavailable,
    /// A session line that is not a valid event was skipped or cut off.
    TornSession,
    /// A helper thread could not start (a thread limit): what it does is not done.
    ThreadUnavailable,
    /// Old tool results or exchanges were left out of a request to fit the context window.
    ContextTrimmed,
    /// An optional MCP server failed to start or died: the run goes on without its tools.
    McpServerFailed,
    /// MCP tools were left out: a name taken twice, or past the per-run limits.
    McpToolLeftOut,
    /// Bash's sandbox is not (fully) enforced on this kernel.
    SandboxUnavailable,
}

impl WarningCode {
    /// Every code, for the printed schema.
    pub const ALL: &[WarningCode] = &[
        WarningCode::UnsafeMode,
        WarningCode::BashSandboxed,
        WarningCode::IgnoredOption,
        WarningCode::Retry,
        WarningCode::OutputLimit,
        WarningCode::UnknownConfigKey,
        WarningCode::SessionUnavailable,
        WarningCode::TornSession,
        WarningCode::ThreadUnavailable,
        WarningCode::ContextTrimmed,
        WarningCode::McpServerFailed,
        WarningCode::McpToolLeftOut,
        WarningCode::SandboxUnavailable,
    ];
}

/// What the legacy `run_start` line adds to the stream-json one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunDetails {
    pub model_label: String,
    pub model_profile: Option<String>,
    pub autonomy: Autonomy,
    pub permission_mode: PermissionMode,
    pub reasoning_effort: Option<String>,
    pub enabled_tools: Vec<String>,
    pub disabled_tools: Vec<String>,
}

/// One line of the legacy `json` format: snake_case, no envelope, a view of an
/// [`Event`] (and `tool_list` for `--list-tools`).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Legacy<'a> {
    RunStart {
        cwd: &'a str,
        provider: &'a str,
        model: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        model_profile: Option<&'a str>,
        model_label: &'a str,
        api_model: &'a str,
        autonomy: Autonomy,
        permission_mode: PermissionMode,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_effort: Option<&'a str>,
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        enabled_tools: &'a [String],
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        disabled_tools: &'a [String],
        output_format: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        session_id: Option<&'a str>,
    },
    Warning {
        message: &'a str,
    },
    Text {
        delta: &'a str,
    },
    ToolCall {
        id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    ToolResult {
        tool_call_id: &'a str,
        status: Status,
        result: &'a str,
        truncated: bool,
    },
    Usage {
        prompt_tokens: u64,
        completion_tokens: u64,
        total_tokens: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    Final {
        text: &'a str,
    },
    Done {
        exit_code: Exit,
    },
    Error {
        code: ErrorCode,
        message: &'a str,
    },
    ToolList {
        permission_mode: PermissionMode,
        tools: &'a [ListedTool<'a>],
    },
}

/// A tool as `--list-tools` shows it (fields in the legacy line's order).
#[derive(Debug, Clone, Serialize)]
pub struct ListedTool<'a> {
    pub name: &'a str,
    pub permission: Permission,
    pub reason: &'a str,
    pub side_effect: SideEffect,
    pub description: &'a str,
    /// Offered to the model in this run.
    pub enabled: bool,
    /// Why it is not (a filter, or the autonomy level it needs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
    /// The parameter schema, exactly as sent to the model.
    pub parameters: serde_json::Value,
    /// bash: the sandbox its commands run in (`mode`, `network`, `enforcement`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<serde_json::Value>,
}
