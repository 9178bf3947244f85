//! How a process ends, and the one place where that becomes an exit code and an `error.code`
//! string.
//!
//! Each module has its own error type at its boundary (`input::InputError`,
//! `session::SessionError`, `http::CallError`, `scripted::ScriptError`, `images::ImageError`,
//! ...), an enum of its kinds; each converts into a [`Failure`] of its kind, and only
//! [`Failure::exit`] and [`Exit`] say which exit code a kind gets, so the mapping cannot drift
//! between call sites.

use std::fmt;

use serde::Serialize;

/// `Display` and `std::error::Error` for a module's error whose kinds each hold their message:
/// an enum whose variants (named after the type) each hold one.
macro_rules! message_error {
    ($name:ident: $($variant:ident),+) => {
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let ($($name::$variant(message))|+) = self;
                f.write_str(message)
            }
        }
        impl std::error::Error for $name {}
    };
}
pub(crate) use message_error;

/// How the process exits. The README's exit code table says the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    Success,
    /// A bug, or a closed stdout or stderr.
    Internal,
    /// Flags, prompt or input, session selection.
    Usage,
    /// The provider or the configuration.
    Setup,
    /// No answer within the turn limit.
    Incomplete,
    /// SIGINT, SIGTERM or SIGHUP.
    Interrupted,
}

impl Exit {
    pub const ALL: [Exit; 6] = [
        Exit::Success,
        Exit::Internal,
        Exit::Usage,
        Exit::Setup,
        Exit::Incomplete,
        Exit::Interrupted,
    ];

    /// What the code means, as `zero exec --help` says it.
    pub fn meaning(self) -> &'static str {
        match self {
            Exit::Success => "success",
            Exit::Internal => "internal error or closed output",
            Exit::Usage => "usage",
            Exit::Setup => "provider or configuration",
            Exit::Incomplete => "no answer (the turn limit, --max-budget-usd, --output-schema)",
            Exit::Interrupted => "interrupted",
        }
    }

    pub const fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Internal => 1,
            Exit::Usage => 2,
            Exit::Setup => 3,
            Exit::Incomplete => 4,
            Exit::Interrupted => 130,
        }
    }
}

impl Serialize for Exit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.code())
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code())
    }
}

/// `run_end.status`. Schema 1 knows only the first two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Success,
    Error,
    Incomplete,
    Interrupted,
}

impl RunStatus {
    /// Every value, in the order `zero schema` lists them.
    pub const ALL: [RunStatus; 4] =
        [RunStatus::Success, RunStatus::Error, RunStatus::Incomplete, RunStatus::Interrupted];
}

/// `error.code`, in both versions (an incomplete run is `max_turns` in schema 1 and
/// `incomplete` in schema 2). Written as [`ErrorCode::name`] says (`usage_error`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    Usage,
    Config,
    Provider,
    MaxTurns,
    Incomplete,
    /// Schema 2: the spending cap was reached (schema 1 says `max_turns`).
    BudgetExceeded,
    /// Schema 2: no answer matched `--output-schema` (schema 1 says `max_turns`).
    OutputSchema,
    /// Schema 2: a required MCP server failed (schema 1 says `provider_error`).
    Mcp,
    Interrupted,
    Crash,
}

impl Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl ErrorCode {
    /// The code as it is written.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::Usage => "usage_error",
            ErrorCode::Config => "config_error",
            ErrorCode::Provider => "provider_error",
            ErrorCode::MaxTurns => "max_turns",
            ErrorCode::Incomplete => "incomplete",
            ErrorCode::BudgetExceeded => "budget_exceeded",
            ErrorCode::OutputSchema => "output_schema",
            ErrorCode::Mcp => "mcp_error",
            ErrorCode::Interrupted => "interrupted",
            ErrorCode::Crash => "crash",
        }
    }
}

/// A failure that ends a run with an `error` event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Flags, prompt or stream-json input, tool filters, profile or effort, session selection.
    Usage(String),
    /// The user config file cannot be read or parsed.
    Config(String),
    /// The provider cannot be set up (no provider, no key, unknown model, a failing provider
    /// command) or refused the call (authentication, a bad request, a blocked answer).
    Provider(String),
    /// The provider could not be reached or did not answer in time (network failures, 429 and
    /// 5xx after retries, timeouts): the same command may succeed later.
    Unavailable(String),
    /// The turn limit was reached, or the model ended without an answer.
    MaxTurns(String),
    /// `--max-budget-usd` was reached before a model call.
    BudgetExceeded(String),
    /// The model gave no answer matching `--output-schema` within its attempts.
    OutputSchema(String),
    /// A required MCP server failed to start.
    Mcp(String),
    /// SIGINT or SIGTERM.
    Interrupted,
    /// A bug: a panic, or something that should not have been possible.
    Crash(String),
}

impl Failure {
    /// How the process exits.
    pub fn exit(&self) -> Exit {
        match self {
            Failure::Usage(_) => Exit::Usage,
            Failure::Config(_)
            | Failure::Provider(_)
            | Failure::Unavailable(_)
            | Failure::Mcp(_) => Exit::Setup,
            Failure::MaxTurns(_) | Failure::BudgetExceeded(_) | Failure::OutputSchema(_) => {
                Exit::Incomplete
            }
            Failure::Interrupted => Exit::Interrupted,
            Failure::Crash(_) => Exit::Internal,
        }
    }

    /// The `code` field of the `error` event in schema 1 (and of the legacy `json` lines).
    pub fn code(&self) -> ErrorCode {
        match self {
            Failure::Usage(_) => ErrorCode::Usage,
            Failure::Config(_) => ErrorCode::Config,
            Failure::Provider(_) | Failure::Unavailable(_) | Failure::Mcp(_) => ErrorCode::Provider,
            Failure::MaxTurns(_) | Failure::BudgetExceeded(_) | Failure::OutputSchema(_) => {
                ErrorCode::MaxTurns
            }
            Failure::Interrupted => ErrorCode::Interrupted,
            Failure::Crash(_) => ErrorCode::Crash,
        }
    }

    /// The `code` of the `error` event in schema 2: an incomplete run is `incomplete`, as
    /// Zero's schema 2 has it.
    pub fn code_v2(&self) -> ErrorCode {
        match self {
            Failure::MaxTurns(_) => ErrorCode::Incomplete,
            Failure::BudgetExceeded(_) => ErrorCode::BudgetExceeded,
            Failure::OutputSchema(_) => ErrorCode::OutputSchema,
            Failure::Mcp(_) => ErrorCode::Mcp,
            other => other.code(),
        }
    }

    /// `run_end.status` in schema 2.
    pub fn status_v2(&self) -> RunStatus {
        match self {
            Failure::MaxTurns(_) | Failure::BudgetExceeded(_) | Failure::OutputSchema(_) => {
                RunStatus::Incomplete
            }
            Failure::Interrupted => RunStatus::Interrupted,
            _ => RunStatus::Error,
        }
    }

    /// Whether the same command may succeed if run again: true for network failures,
    /// 429 and 5xx after retries, timeouts and interrupts; false for usage, authentication, an
    /// unknown model, the configuration, the turn limit and bugs.
    pub fn recoverable(&self) -> bool {
        match self {
            Failure::Unavailable(_) | Failure::Interrupted => true,
            Failure::Usage(_)
            | Failure::Config(_)
            | Failure::Provider(_)
            | Failure::MaxTurns(_)
            | Failure::BudgetExceeded(_)
            | Failure::OutputSchema(_)
            | Failure::Mcp(_)
            | Failure::Crash(_) => false,
        }
    }

    /// The one-line message (not yet redacted).
    pub fn message(&self) -> String {
        let text = match self {
            Failure::Usage(m)
            | Failure::Config(m)
            | Failure::Provider(m)
            | Failure::Unavailable(m)
            | Failure::MaxTurns(m)
            | Failure::BudgetExceeded(m)
            | Failure::OutputSchema(m)
            | Failure::Mcp(m)
            | Failure::Crash(m) => m.as_str(),
            Failure::Interrupted => "Interrupted.",
        };
        crate::text::one_line(text)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Failure {}

/// Why a run stopped before its normal end.
#[derive(Debug)]
pub enum Stop {
    /// Report this failure, then end.
    Failed(Failure),
    /// Standard output is gone (the reader closed it): end quietly with exit 1.
    OutputClosed,
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Failed(failure) => failure.fmt(f),
            Stop::OutputClosed => OutputClosed.fmt(f),
        }
    }
}

impl std::error::Error for Stop {}

impl From<Failure> for Stop {
    fn from(failure: Failure) -> Stop {
        Stop::Failed(failure)
    }
}

/// Standard output could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputClosed;

impl fmt::Display for OutputClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("standard output is closed")
    }
}

impl std::error::Error for OutputClosed {}

impl From<OutputClosed> for Stop {
    fn from(_: OutputClosed) -> Stop {
        Stop::OutputClosed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_exit_code_and_error_code() {
        let cases = [
            (Failure::Usage("u".into()), 2, "usage_error", false),
            (Failure::Config("c".into()), 3, "config_error", false),
            (Failure::Provider("p".into()), 3, "provider_error", false),
            (Failure::Unavailable("n".into()), 3, "provider_error", true),
            (Failure::MaxTurns("m".into()), 4, "max_turns", false),
            (Failure::Interrupted, 130, "interrupted", true),
            (Failure::Crash("x".into()), 1, "crash", false),
        ];
        for (failure, exit, code, recoverable) in cases {
            assert_eq!(failure.exit().code(), exit);
            assert_eq!(failure.code().name(), code);
            assert_eq!(failure.recoverable(), recoverable);
        }
    }

    #[test]
    fn messages_are_one_line() {
        let f = Failure::Config("No LLM provider configured.\n\nSet  OPENAI_API_KEY.".into());
        assert_eq!(f.message(), "No LLM provider configured. Set OPENAI_API_KEY.");
    }
}
