//! Command-line parsing with lexopt: what the user typed, not yet validated against the
//! environment (that is the run plan's job). Every flag is declared once, in `exec`'s and
//! `companions`' tables; the parsers and help texts are made from them.
//!
//! Help and version short-circuit before anything reads the environment. `exec` flag errors
//! are not reported here: they are kept in [`ExecArgs::error`] so that they can be reported in
//! the output format the same command line asked for, wherever `-o` appears.

use std::ffi::OsString;
use std::path::PathBuf;

use lexopt::prelude::*;

mod companions;
pub mod completions;
mod exec;
mod flags;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;

use exec::parse_exec;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub const HELP: &str = "\
zero: a headless coding agent that streams JSON events

Usage: zero exec [OPTIONS] [PROMPT...]   run one task (see zero exec --help)
       zero -p <PROMPT> [OPTIONS]        the same, text output
       zero sessions <COMMAND>           list, show, delete, prune, search
       zero search <QUERY...>            search the stored sessions
       zero config                       the settings in use, and their source
       zero doctor                       check the setup, say how to fix it
       zero mcp list                     the MCP servers and their tools
       zero redact                       redact stdin to stdout
       zero schema [1|2|config]          JSON Schema: stream-json, config file
       zero completions <SHELL>          completion script: bash, zsh, fish
       zero --version | --help

Each command's --help lists its options. Start with: zero exec --help
";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Command {
    /// Print this text on stdout, exit 0.
    Help(String),
    Version,
    Exec(Box<ExecArgs>),
    /// `zero acp`: the Agent Client Protocol over stdio.
    Acp(Box<crate::acp::AcpArgs>),
    Sessions(SessionsArgs),
    Search(SearchArgs),
    /// `zero config [--json]`.
    Config {
        json: bool,
    },
    /// `zero doctor [--json] [--offline]`.
    Doctor {
        json: bool,
        offline: bool,
    },
    /// `zero mcp list [--json] [--mcp-config ...] [--strict-mcp-config] [--auto LEVEL]
    /// [--enabled-tools ...] [--disabled-tools ...]`.
    McpList(McpListArgs),
    /// `zero redact`, with the extra variables to treat as secret.
    Redact(Vec<String>),
    /// `zero schema [VERSION|config]`: the JSON Schema of that stream-json version, or of
    /// the config file, as typed.
    Schema(String),
    /// `zero completions SHELL`.
    Completions(completions::Shell),
    /// A command-line error outside `exec`: print on stderr, exit 2.
    Invalid(String),
}

/// `zero mcp list`: which servers, and the run whose offer it shows (its level and filters,
/// as typed).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct McpListArgs {
    pub json: bool,
    pub configs: Vec<String>,
    pub strict: bool,
    pub auto: Option<String>,
    pub enabled_tools: Vec<String>,
    pub disabled_tools: Vec<String>,
}

/// `--resume` as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    /// Bare `--resume` (or `--resume=`): the latest session.
    Latest,
    /// `--resume=ID`.
    Id(String),
    /// `--resume WORD`: an id if WORD names a session or looks like a generated id, else a
    /// prompt word (it was also added to the prompt words at `index`).
    Candidate { word: String, index: usize },
}

/// The raw `exec` options, as typed; the run plan (`run::plan`) validates them.
#[derive(Debug, Default, PartialEq)]
pub struct ExecArgs {
    pub prompt_words: Vec<String>,
    /// `zero exec --prompt TEXT`: the prompt as a flag, instead of the words.
    pub prompt: Option<String>,
    pub file: Option<PathBuf>,
    /// `--record PATH`: the script of the run's model calls.
    pub record: Option<PathBuf>,
    pub model: Option<String>,
    pub profile: Option<String>,
    pub reasoning_effort: Option<String>,
    pub auto: Option<String>,
    pub enabled_tools: Vec<String>,
    pub disabled_tools: Vec<String>,
    pub list_tools: bool,
    pub max_turns: Option<String>,
    pub max_output_tokens: Option<String>,
    pub cwd: Option<PathBuf>,
    pub input_format: Option<String>,
    pub output_format: Option<String>,
    pub resume: Option<Resume>,
    pub fork: Option<String>,
    pub skip_permissions_unsafe: bool,
    pub provider: Option<String>,
    pub script: Option<PathBuf>,
    pub redact_env: Vec<String>,
    pub shell_env: Option<String>,
    pub shell_env_keep: Vec<String>,
    pub ephemeral: bool,
    pub schema_version: Option<String>,
    pub heartbeat_ms: Option<String>,
    pub images: Vec<PathBuf>,
    pub live: bool,
    pub approvals: Option<String>,
    pub approval_timeout_ms: Option<String>,
    pub system_prompt: Option<String>,
    pub system_prompt_file: Option<PathBuf>,
    pub append_system_prompt: Option<String>,
    pub append_system_prompt_file: Option<PathBuf>,
    pub no_project_instructions: bool,
    pub max_budget_usd: Option<String>,
    pub add_dirs: Vec<PathBuf>,
    pub output_schema: Option<String>,
    pub output_schema_attempts: Option<String>,
    pub sandbox: Option<String>,
    pub sandbox_network: Option<String>,
    pub sandbox_writable: Vec<PathBuf>,
    pub sandbox_caches: Option<String>,
    pub sandbox_required: bool,
    /// `--mcp-config`: files or JSON texts, in order.
    pub mcp_configs: Vec<String>,
    pub strict_mcp_config: bool,
    /// The first command-line error, reported once the output format is known.
    pub error: Option<String>,
}

/// Arguments of `zero sessions`.
#[derive(Debug, PartialEq, Eq)]
pub enum SessionsArgs {
    List {
        json: bool,
        all: bool,
    },
    Show {
        id: String,
        json: bool,
    },
    Delete {
        ids: Vec<String>,
    },
    /// `--older-than` as typed, checked by the command.
    Prune {
        older_than: String,
        dry_run: bool,
    },
}

/// Arguments of `zero search` (numbers as typed, checked by the command).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SearchArgs {
    pub query: Vec<String>,
    pub json: bool,
    pub limit: Option<String>,
    pub context: Option<String>,
    pub session: Option<String>,
    pub event_type: Option<String>,
}

/// Parses the process arguments (without the program name).
pub fn parse(args: Vec<OsString>) -> Command {
    match args.first().and_then(|a| a.to_str()) {
        Some("exec") => parse_exec(args[1..].to_vec(), false),
        Some("acp") => {
            // Its own flag, before the exec flags it shares.
            let mut rest = args[1..].to_vec();
            let before = rest.len();
            rest.retain(|a| a != "--client-terminal");
            let client_terminal = rest.len() != before;
            match parse_exec(rest, false) {
                Command::Help(_) => Command::Help(exec::acp_help()),
                Command::Exec(exec) => {
                    Command::Acp(Box::new(crate::acp::AcpArgs { exec: *exec, client_terminal }))
                }
                other => other,
            }
        }
        Some("sessions") => companions::parse_sessions(args[1..].to_vec()),
        Some("mcp") => match args.get(1).and_then(|a| a.to_str()) {
            Some("list") => companions::parse(args[2..].to_vec(), "mcp list"),
            Some("-h" | "--help") | None => Command::Help(
                "Usage: zero mcp list [OPTIONS]\n\nCommands:\n  list  start the configured MCP servers, print their tools, stop them\n\nzero mcp list --help lists its options.\n".into(),
            ),
            Some(other) => Command::Invalid(format!(
                "unknown mcp command \"{other}\"; expected list (see zero mcp --help)"
            )),
        },
        Some(name @ ("search" | "config" | "doctor" | "redact" | "schema" | "completions")) => {
            companions::parse(args[1..].to_vec(), name)
        }
        Some(word) if !word.starts_with('-') => Command::Invalid(format!(
            "unknown command \"{word}\"{}; commands: {} (see zero --help)",
            crate::text::did_you_mean(word, &command_names()),
            command_names().join(", ")
        )),
        _ => parse_exec(args, true),
    }
}

/// The commands `zero` knows, with what each does: for "did you mean" suggestions and the
/// completion scripts.
const COMMANDS: &[(&str, &str)] = &[
    ("exec", "run one task"),
    ("acp", "serve editors over the Agent Client Protocol"),
    ("sessions", "list, show, delete, prune, search the stored sessions"),
    ("search", "search the stored sessions"),
    ("config", "the settings in use, and their source"),
    ("doctor", "check the setup, say how to fix it"),
    ("mcp", "the MCP servers and their tools"),
    ("redact", "redact stdin to stdout"),
    ("schema", "a JSON Schema: stream-json or the config file"),
    ("completions", "the completion script for bash, zsh or fish"),
];

/// The `exec` flags that take one of a few words, and those words (the plan checks them).
#[cfg(test)]
pub fn exec_choices() -> Vec<(&'static str, &'static [&'static str])> {
    exec::exec_flags()
        .iter()
        .filter(|f| !f.choices.is_empty())
        .map(|f| (f.long, f.choices))
        .collect()
}

fn command_names() -> Vec<&'static str> {
    COMMANDS.iter().map(|(name, _)| *name).collect()
}

/// A parsed argument that no longer borrows the parser.
enum Owned {
    Short(char),
    Long(String),
    Value(OsString),
}

impl From<lexopt::Arg<'_>> for Owned {
    fn from(arg: lexopt::Arg<'_>) -> Owned {
        match arg {
            Short(c) => Owned::Short(c),
            Long(l) => Owned::Long(l.to_string()),
            Value(v) => Owned::Value(v),
        }
    }
}
