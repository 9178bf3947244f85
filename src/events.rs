//! The output events of a run, as types: the stream-json protocol's events (schema 1, B 9) with
//! the names they have on the wire, and the legacy `json` format's lines. No logic lives here:
//! `output` builds an [`Event`] once and renders every format from that one value (stream-json
//! is its serialisation inside the envelope, the legacy lines and the text rows are views).
//!
//! Every string in an event is already redacted when the event is built. A field that only a
//! view needs is skipped in serialisation.
#![forbid(unsafe_code)]

use serde::Serialize;
use serde_json::Value;

/// One stream-json event. The envelope (`schemaVersion`, `runId`) is added around it.
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
        /// What only the legacy `run_start` line says.
        #[serde(skip)]
        details: &'a RunDetails,
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
        /// The arguments as JSON (the model's text as a string when it was not JSON).
        args: &'a Value,
        side_effect: &'a str,
        /// The arguments as JSON text, for the legacy line.
        #[serde(skip)]
        arguments: &'a str,
        /// The id before it was fitted to the protocol's rule, for the legacy line.
        #[serde(skip)]
        raw_id: &'a str,
    },
    ToolResult {
        id: &'a str,
        status: Status,
        /// At most 32 KiB.
        output: &'a str,
        truncated: bool,
        #[serde(skip)]
        raw_id: &'a str,
        /// The exit code of a command (bash), for the text row.
        #[serde(skip)]
        exit_code: Option<i32>,
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
    Error {
        code: &'a str,
        message: &'a str,
        recoverable: bool,
    },
    RunEnd {
        status: RunStatus,
        exit_code: u8,
    },
}

/// `tool_result.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Error,
}

/// `run_end.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Success,
    Error,
}

/// What the legacy `run_start` line adds to the stream-json one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunDetails {
    pub model_label: String,
    pub model_profile: Option<String>,
    pub autonomy: String,
    pub permission_mode: String,
    pub reasoning_effort: Option<String>,
    pub enabled_tools: Vec<String>,
    pub disabled_tools: Vec<String>,
}

/// One line of the legacy `json` format (B 1.5): snake_case, no envelope, a view of an
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
        autonomy: &'a str,
        permission_mode: &'a str,
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
        exit_code: u8,
    },
    Error {
        code: &'a str,
        message: &'a str,
    },
    ToolList {
        permission_mode: &'a str,
        tools: &'a [ListedTool<'a>],
    },
}

/// A tool as `--list-tools` shows it (fields in the legacy line's order).
#[derive(Debug, Clone, Serialize)]
pub struct ListedTool<'a> {
    pub name: &'a str,
    pub permission: &'a str,
    pub reason: &'a str,
    pub side_effect: &'a str,
    pub description: &'a str,
    /// Offered to the model in this run.
    pub enabled: bool,
    /// Why it is not (a filter, or the autonomy level it needs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
    /// The parameter schema, exactly as sent to the model.
    pub parameters: serde_json::Value,
}
