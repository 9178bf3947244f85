//! Command-line parsing with lexopt: what the user typed, not yet validated against the
//! environment (that is `exec`'s job, in the order of SPEC B 1.3).
//!
//! Help and version short-circuit before anything reads the environment. Flag errors are not
//! reported here: they are kept in [`ExecArgs::error`] so that `exec` can report them in the
//! output format the same command line asked for (A3), wherever `-o` appears.
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::path::PathBuf;

use lexopt::prelude::*;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub const HELP: &str = "\
zero: a headless coding agent that streams JSON events

Usage: zero exec [OPTIONS] [PROMPT...]   run one task (see zero exec --help)
       zero -p <PROMPT> [OPTIONS]        the same, text output
       zero sessions <COMMAND>           list, show, delete, prune, search
       zero search <QUERY...>            search the stored sessions
       zero config [--json]              the settings in use, and their source
       zero doctor [--json] [--offline]  check the setup, say how to fix it
       zero redact [--redact-env NAME]   redact stdin to stdout
       zero schema [VERSION]             the JSON Schema of stream-json (1, 2)
       zero --version | --help

Start with: zero exec --help
";

pub const EXEC_HELP: &str = "\
Usage: zero exec [OPTIONS] [PROMPT...]

Runs one task: sends the prompt to the model, runs the tools it calls, and
writes the answer (text) or a stream of JSON events (json, stream-json).

Input:
  [PROMPT...]                  prompt words, joined with spaces (`-` reads
                               the prompt from stdin)
      --prompt <TEXT>          the prompt, instead of the words
  -f, --file <PATH>            prompt file (appended after a blank line; -
                               for stdin), or the JSONL input with
                               -i stream-json
  -i, --input-format <FMT>     text | stream-json (default: \"text\"); with
                               stream-json, JSONL is read from stdin or --file

Output:
  -o, --output-format <FMT>    text | json | stream-json (default: \"text\")
      --schema-version <N>     stream-json schema 1 | 2 (default: the
                               version of the first input line, else 1)
      --heartbeat-ms <N>       schema 2: a heartbeat line after N ms of
                               silence (default: 10000; 0 turns them off)
      --image <PATH>           attach a PNG, JPEG, GIF or WebP image to the
                               prompt (repeatable)
      --live                   many turns over one stdin stream, one per
                               prompt line (-i and -o stream-json, schema 2)
      --approvals stdin        live mode: calls that need approval wait for a
                               permission_response line
      --approval-timeout-ms <N>  how long an approval waits (default: 60000)

Model:
  -m, --model <MODEL>          model id, alias or profile name
      --profile <PROFILE>      fast | balanced | deep | cheap
  -r, --reasoning-effort <E>   none | minimal | low | medium | high | xhigh
      --provider <KIND>        openai | anthropic | google |
                               openai-compatible | scripted
      --script <PATH>          scripted provider: the JSON script to play
      --max-turns <N>          model turns before giving up (default: 12)
      --max-output-tokens <N>  output tokens per model call (default: the
                               model's limit, 4096 for unknown models)

Tools and permissions:
      --auto <LEVEL>           low | medium | high (default: \"low\"): low
                               reads, medium also edits files, high also
                               runs bash
      --skip-permissions-unsafe  enable every tool, like --auto high
      --enabled-tools <LIST>   only these tools (comma or space separated)
      --disabled-tools <LIST>  never these tools
      --list-tools             print the tools the model would see, exit
      --shell-env <MODE>       filtered | inherit (default: \"filtered\"): bash
                               gets zero's environment without variables
                               whose names look secret (*_TOKEN, *_API_KEY..)
      --shell-env-keep <NAME>  pass NAME to bash even so (repeatable)

Sessions:
      --resume[=ID]            continue this workspace's latest session, or
                               session ID (--resume ID works for an
                               existing id)
      --fork <ID>              continue a copy of session ID
      --ephemeral              write no session for this run

Other:
  -C, --cwd <DIR>              work in DIR (the workspace root)
      --redact-env <NAME>      also redact the value of env variable NAME
                               (repeatable)
  -h, --help                   print this help
  -V, --version                print the version

{ENVIRONMENT}
Exit codes: 0 success, 1 internal error or closed output, 2 usage,
3 provider or configuration, 4 no answer within the turn limit,
130 interrupted.
";

/// `zero exec --help`: [`EXEC_HELP`] with the environment variables zero reads, from the one
/// list of them (`config::read_vars`), wrapped to 79 columns.
pub fn exec_help() -> String {
    let mut paragraph = String::new();
    let mut line = String::from("Environment:");
    let names: Vec<&str> = crate::config::read_vars().collect();
    for (i, name) in names.iter().enumerate() {
        let word = if i + 1 == names.len() { format!("{name}.") } else { format!("{name},") };
        if line.len() + 1 + word.len() > 79 {
            paragraph.push_str(&line);
            paragraph.push('\n');
            line.clear();
        } else {
            line.push(' ');
        }
        line.push_str(&word);
    }
    paragraph.push_str(&line);
    paragraph.push_str(
        "\nVariables whose names say they hold secrets are withheld from bash, and\ntheir values redacted. Config: $XDG_CONFIG_HOME/zero/config.json.\n\n",
    );
    EXEC_HELP.replace("{ENVIRONMENT}\n", &paragraph)
}

pub const REDACT_HELP: &str = "\
Usage: zero redact [--redact-env NAME]...

Copies stdin to stdout with secrets replaced by [REDACTED], using the same
rules as every line zero writes: token shapes, sensitive keys and headers,
URL passwords, private keys, and the values of environment variables with
sensitive names (and of each --redact-env NAME).
";

pub const SESSIONS_HELP: &str = "\
Usage: zero sessions list [--all] [--json]
       zero sessions show <ID> [--json]
       zero sessions delete <ID>...
       zero sessions prune --older-than <DAYS> [--dry-run]
       zero sessions search <QUERY...> [options of zero search]

list shows this directory's sessions (newest first), --all every one; show
prints one session's metadata and events, one row per event; delete removes
sessions; prune removes every session not updated for DAYS days. --json
writes one JSON document for wrappers.
";

pub const SEARCH_HELP: &str = "\
Usage: zero search <QUERY...> [--json] [--limit N] [--context N]
                   [--session ID] [--type EVENT_TYPE]

Finds stored session events whose text holds the query (case-insensitive:
the whole phrase, else every word), newest sessions first. Output is
redacted. --limit: at most N hits (default 20); --context: characters shown
around a hit (default 80).
";

pub const CONFIG_HELP: &str = "\
Usage: zero config [--json]

Prints the configuration zero would use here: the provider, model, key
(redacted), and each layer it comes from (defaults, the user file, the
environment). Exit 0 when it is usable, 3 when it is not.
";

pub const DOCTOR_HELP: &str = "\
Usage: zero doctor [--json] [--offline]

Checks the setup one step at a time (config file, provider, model, adapter,
connectivity) and says how to fix what fails. --offline skips the network
check. Exit 0 when every check passes, 3 when one fails.
";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Command {
    /// Print this text on stdout, exit 0.
    Help(String),
    Version,
    Exec(Box<ExecArgs>),
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
    /// `zero redact`, with the extra variables to treat as secret.
    Redact(Vec<String>),
    /// `zero schema [VERSION]`: the JSON Schema of that stream-json version, as typed.
    Schema(String),
    /// A command-line error outside `exec`: print on stderr, exit 2.
    Invalid(String),
}

/// `--resume` as typed (A11).
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

/// The raw `exec` options, validated later in [`crate::run::exec`].
#[derive(Debug, Default, PartialEq)]
pub struct ExecArgs {
    pub prompt_words: Vec<String>,
    /// `zero exec --prompt TEXT`: the prompt as a flag, instead of the words.
    pub prompt: Option<String>,
    pub file: Option<PathBuf>,
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
    Search(SearchArgs),
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
        Some("sessions") => parse_sessions(args[1..].to_vec()),
        Some("search") => parse_command(args[1..].to_vec(), "search"),
        Some("config") => parse_command(args[1..].to_vec(), "config"),
        Some("doctor") => parse_command(args[1..].to_vec(), "doctor"),
        Some("redact") => parse_redact(args[1..].to_vec()),
        Some("schema") => parse_schema(args[1..].to_vec()),
        Some(word) if !word.starts_with('-') => Command::Invalid(format!(
            "unknown command \"{word}\"{}; commands: {} (see zero --help)",
            crate::text::did_you_mean(word, COMMANDS),
            COMMANDS.join(", ")
        )),
        _ => parse_exec(args, true),
    }
}

/// `zero exec ...`, or the root command (`zero -p ...`) when `root` is set.
fn parse_exec(args: Vec<OsString>, root: bool) -> Command {
    let mut out = ExecArgs::default();
    let mut parser = lexopt::Parser::from_args(args);
    let mut saw_prompt_flag = false;
    loop {
        let arg = match parser.next() {
            Ok(Some(arg)) => Owned::from(arg),
            Ok(None) => break,
            Err(err) => {
                out.error.get_or_insert_with(|| describe(err));
                continue;
            }
        };
        let result = match arg {
            Owned::Short('h') | Owned::Long(_) if is_help(&arg) => {
                return Command::Help(if root { HELP.to_string() } else { exec_help() })
            }
            Owned::Short('V') => return Command::Version,
            Owned::Long(ref l) if l == "version" => return Command::Version,
            Owned::Short('p') if root => {
                saw_prompt_flag = true;
                value(&mut parser, "-p").and_then(|v| v.string()).map(|v| out.prompt_words.push(v))
            }
            Owned::Long(ref l) if root && l == "prompt" => {
                saw_prompt_flag = true;
                value(&mut parser, "--prompt")
                    .and_then(|v| v.string())
                    .map(|v| out.prompt_words.push(v))
            }
            Owned::Value(v) if !root => v.string().map(|v| out.prompt_words.push(v)),
            Owned::Value(v) => Err(lexopt::Error::UnexpectedArgument(v)),
            other => exec_option(other, &mut parser, &mut out),
        };
        if let Err(err) = result {
            out.error.get_or_insert_with(|| describe(err));
        }
    }
    if root && !saw_prompt_flag && out.error.is_none() {
        return if out == ExecArgs::default() {
            Command::Invalid(
                "no command given: use `zero exec \"prompt\"` or `zero -p \"prompt\"` (see zero --help)"
                    .to_string(),
            )
        } else {
            Command::Invalid("exec options need a prompt: use `zero exec` or `zero -p`".to_string())
        };
    }
    Command::Exec(Box::new(out))
}

/// Every long option of `exec`, for "did you mean" suggestions.
const EXEC_OPTIONS: &[&str] = &[
    "--file",
    "--model",
    "--profile",
    "--reasoning-effort",
    "--auto",
    "--enabled-tools",
    "--disabled-tools",
    "--list-tools",
    "--max-turns",
    "--max-output-tokens",
    "--cwd",
    "--input-format",
    "--output-format",
    "--resume",
    "--fork",
    "--skip-permissions-unsafe",
    "--provider",
    "--script",
    "--redact-env",
    "--shell-env",
    "--shell-env-keep",
    "--ephemeral",
    "--schema-version",
    "--heartbeat-ms",
    "--image",
    "--live",
    "--approvals",
    "--approval-timeout-ms",
    "--help",
    "--version",
    "--prompt",
];

/// A lexopt error as one line, with the closest option when one was mistyped.
fn describe(err: lexopt::Error) -> String {
    match &err {
        lexopt::Error::UnexpectedOption(option) if option.starts_with("--") => {
            let name = option.split('=').next().unwrap_or(option);
            format!("{err}{}", crate::text::did_you_mean(name, EXEC_OPTIONS))
        }
        _ => err.to_string(),
    }
}

/// The commands `zero` knows, for "did you mean" suggestions.
const COMMANDS: &[&str] = &["exec", "sessions", "search", "config", "doctor", "redact", "schema"];

/// `-h` or `--help`.
fn is_help(arg: &Owned) -> bool {
    matches!(arg, Owned::Short('h')) || matches!(arg, Owned::Long(l) if l == "help")
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

/// One `exec` option (shared by `zero exec` and `zero -p`).
fn exec_option(
    arg: Owned,
    parser: &mut lexopt::Parser,
    out: &mut ExecArgs,
) -> Result<(), lexopt::Error> {
    let name = match &arg {
        Owned::Short(c) => match c {
            'f' => "file",
            'm' => "model",
            'r' => "reasoning-effort",
            'C' => "cwd",
            'i' => "input-format",
            'o' => "output-format",
            _ => return Err(lexopt::Error::UnexpectedOption(format!("-{c}"))),
        },
        Owned::Long(l) => l.as_str(),
        Owned::Value(v) => return Err(lexopt::Error::UnexpectedArgument(v.clone())),
    };
    let long = format!("--{name}");
    match name {
        "prompt" => out.prompt = Some(value(parser, &long)?.string()?),
        "file" => out.file = Some(value(parser, &long)?.into()),
        "model" => out.model = Some(value(parser, &long)?.string()?),
        "profile" => out.profile = Some(value(parser, &long)?.string()?),
        "reasoning-effort" => out.reasoning_effort = Some(value(parser, &long)?.string()?),
        "auto" => out.auto = Some(value(parser, &long)?.string()?),
        "enabled-tools" => out.enabled_tools.push(value(parser, &long)?.string()?),
        "disabled-tools" => out.disabled_tools.push(value(parser, &long)?.string()?),
        "list-tools" => out.list_tools = true,
        "max-turns" => out.max_turns = Some(value(parser, &long)?.string()?),
        "max-output-tokens" => out.max_output_tokens = Some(value(parser, &long)?.string()?),
        "cwd" => out.cwd = Some(value(parser, &long)?.into()),
        "input-format" => out.input_format = Some(value(parser, &long)?.string()?),
        "output-format" => out.output_format = Some(value(parser, &long)?.string()?),
        "resume" => out.resume = Some(resume_value(parser, out)?),
        "fork" => out.fork = Some(value(parser, &long)?.string()?),
        "skip-permissions-unsafe" => out.skip_permissions_unsafe = true,
        "provider" => out.provider = Some(value(parser, &long)?.string()?),
        "script" => out.script = Some(value(parser, &long)?.into()),
        "redact-env" => out.redact_env.push(value(parser, &long)?.string()?),
        "shell-env" => out.shell_env = Some(value(parser, &long)?.string()?),
        "shell-env-keep" => out.shell_env_keep.push(value(parser, &long)?.string()?),
        "ephemeral" => out.ephemeral = true,
        "schema-version" => out.schema_version = Some(value(parser, &long)?.string()?),
        "heartbeat-ms" => out.heartbeat_ms = Some(value(parser, &long)?.string()?),
        "image" => out.images.push(value(parser, &long)?.into()),
        "live" => out.live = true,
        "approvals" => out.approvals = Some(value(parser, &long)?.string()?),
        "approval-timeout-ms" => out.approval_timeout_ms = Some(value(parser, &long)?.string()?),
        other => return Err(lexopt::Error::UnexpectedOption(format!("--{other}"))),
    }
    Ok(())
}

/// The value of option `name`. A value attached with `=` is taken as it is; a separate word
/// that is itself one of exec's flags (`--model --output-format json`) is a usage error naming
/// both, not a model named `--output-format`.
fn value(parser: &mut lexopt::Parser, shown: &str) -> Result<OsString, lexopt::Error> {
    if let Some(attached) = parser.optional_value() {
        return Ok(attached);
    }
    let value = parser.value()?;
    let word = value.to_string_lossy();
    let flag = word.split('=').next().unwrap_or_default();
    let is_flag = flag == "--"
        || EXEC_OPTIONS.contains(&flag)
        || (flag.len() == 2 && flag.starts_with('-') && "fmrCioVhp".contains(&flag[1..]));
    if is_flag {
        return Err(lexopt::Error::Custom(
            format!("{shown} needs a value, but the next word is the flag {flag} (write {shown}=VALUE for a value that starts with '-')").into(),
        ));
    }
    Ok(value)
}

/// `--resume[=ID]`, or `--resume WORD` where WORD is decided later (A11).
fn resume_value(parser: &mut lexopt::Parser, out: &mut ExecArgs) -> Result<Resume, lexopt::Error> {
    if let Some(value) = parser.optional_value() {
        let value = value.string()?;
        let value = value.trim();
        return Ok(if value.is_empty() { Resume::Latest } else { Resume::Id(value.to_string()) });
    }
    let Some(mut raw) = parser.try_raw_args() else { return Ok(Resume::Latest) };
    let takes = raw.peek().and_then(|w| w.to_str()).is_some_and(|w| !w.starts_with('-'));
    match raw.next_if(|_| takes) {
        Some(word) => {
            let word = word.string()?;
            out.prompt_words.push(word.clone());
            Ok(Resume::Candidate { word, index: out.prompt_words.len() - 1 })
        }
        None => Ok(Resume::Latest),
    }
}

pub const SCHEMA_HELP: &str = "\
Usage: zero schema [VERSION]

Prints the JSON Schema (draft 2020-12) of stream-json schema VERSION (default
1): every event zero writes and reads, with unknown fields forbidden. Versions
this zero speaks: 1, 2.
";

fn parse_schema(args: Vec<OsString>) -> Command {
    let words: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    match words.as_slice() {
        [] => Command::Schema("1".into()),
        [help] if help == "-h" || help == "--help" => Command::Help(SCHEMA_HELP.to_string()),
        [version] => Command::Schema(version.clone()),
        _ => Command::Invalid(
            "zero schema takes one version at most (see zero schema --help)".into(),
        ),
    }
}

fn parse_redact(args: Vec<OsString>) -> Command {
    let mut parser = lexopt::Parser::from_args(args);
    let mut names = Vec::new();
    loop {
        let arg = match parser.next() {
            Ok(Some(arg)) => Owned::from(arg),
            Ok(None) => return Command::Redact(names),
            Err(err) => return Command::Invalid(err.to_string()),
        };
        let result = match arg {
            Owned::Short('h') => return Command::Help(REDACT_HELP.to_string()),
            Owned::Long(l) if l == "help" => return Command::Help(REDACT_HELP.to_string()),
            Owned::Long(l) if l == "redact-env" => parser.value().and_then(|v| v.string()),
            Owned::Short(c) => Err(lexopt::Error::UnexpectedOption(format!("-{c}"))),
            Owned::Long(l) => Err(lexopt::Error::UnexpectedOption(format!("--{l}"))),
            Owned::Value(v) => Err(lexopt::Error::UnexpectedArgument(v)),
        };
        match result {
            Ok(name) => names.push(name),
            Err(err) => return Command::Invalid(err.to_string()),
        }
    }
}

fn parse_sessions(args: Vec<OsString>) -> Command {
    let sub = args.first().and_then(|a| a.to_str()).map(str::to_string);
    match sub.as_deref() {
        Some("-h" | "--help") => Command::Help(SESSIONS_HELP.to_string()),
        Some(sub @ ("list" | "show" | "delete" | "prune" | "search")) => {
            parse_command(args[1..].to_vec(), &format!("sessions {sub}"))
        }
        Some(other) => Command::Invalid(format!(
            "unknown sessions command \"{other}\"{}; expected list, show, delete, prune or search",
            crate::text::did_you_mean(other, &["list", "show", "delete", "prune", "search"])
        )),
        None => Command::Invalid(
            "expected `zero sessions list`, `show <ID>`, `delete <ID>...`, `prune --older-than DAYS` or `search <QUERY>`".into(),
        ),
    }
}

/// The options and words of one of the small commands (`zero sessions <sub>`, `zero search`,
/// `zero config`, `zero doctor`).
fn parse_command(args: Vec<OsString>, command: &str) -> Command {
    let (help, allowed): (&'static str, &[&str]) = match command {
        "sessions list" => (SESSIONS_HELP, &["json", "all"]),
        "sessions show" => (SESSIONS_HELP, &["json"]),
        "sessions delete" => (SESSIONS_HELP, &[]),
        "sessions prune" => (SESSIONS_HELP, &["older-than", "dry-run"]),
        "config" => (CONFIG_HELP, &["json"]),
        "doctor" => (DOCTOR_HELP, &["json", "offline", "connectivity"]),
        // `search` and `sessions search`.
        _ => (SEARCH_HELP, &["json", "limit", "context", "session", "type"]),
    };
    let mut parser = lexopt::Parser::from_args(args);
    let mut words = Vec::new();
    let mut flags: Vec<(String, Option<String>)> = Vec::new();
    loop {
        let arg = match parser.next() {
            Ok(Some(arg)) => Owned::from(arg),
            Ok(None) => break,
            Err(err) => return Command::Invalid(err.to_string()),
        };
        match arg {
            Owned::Short('h') => return Command::Help(help.to_string()),
            Owned::Long(l) if l == "help" => return Command::Help(help.to_string()),
            Owned::Long(l) if allowed.contains(&l.as_str()) => {
                let takes_value =
                    matches!(l.as_str(), "older-than" | "limit" | "context" | "session" | "type");
                let value = if takes_value {
                    match parser.value().and_then(|v| v.string()) {
                        Ok(v) => Some(v),
                        Err(err) => return Command::Invalid(err.to_string()),
                    }
                } else {
                    None
                };
                flags.push((l, value));
            }
            Owned::Long(l) => {
                let known: Vec<String> = allowed.iter().map(|a| format!("--{a}")).collect();
                let known: Vec<&str> = known.iter().map(String::as_str).collect();
                return Command::Invalid(format!(
                    "invalid option '--{l}' for zero {command}{}",
                    crate::text::did_you_mean(&format!("--{l}"), &known)
                ));
            }
            Owned::Short(c) => {
                return Command::Invalid(format!("invalid option '-{c}' for zero {command}"))
            }
            Owned::Value(v) => match v.string() {
                Ok(v) => words.push(v),
                Err(err) => return Command::Invalid(err.to_string()),
            },
        }
    }
    let has = |name: &str| flags.iter().any(|(f, _)| f == name);
    let value =
        |name: &str| flags.iter().rev().find(|(f, _)| f == name).and_then(|(_, v)| v.clone());
    let json = has("json");
    let no_words = |cmd: Command| {
        if words.is_empty() {
            cmd
        } else {
            Command::Invalid(format!(
                "zero {command} takes no arguments (got \"{}\")",
                words.join(" ")
            ))
        }
    };
    match command {
        "sessions list" => {
            no_words(Command::Sessions(SessionsArgs::List { json, all: has("all") }))
        }
        "sessions show" => match words.as_slice() {
            [id] => Command::Sessions(SessionsArgs::Show { id: id.clone(), json }),
            [] => Command::Invalid("zero sessions show needs a session id".into()),
            _ => Command::Invalid("zero sessions show takes one session id".into()),
        },
        "sessions delete" if words.is_empty() => {
            Command::Invalid("zero sessions delete needs one or more session ids".into())
        }
        "sessions delete" => Command::Sessions(SessionsArgs::Delete { ids: words }),
        "sessions prune" => match value("older-than") {
            Some(days) => no_words(Command::Sessions(SessionsArgs::Prune {
                older_than: days,
                dry_run: has("dry-run"),
            })),
            None => Command::Invalid("zero sessions prune needs --older-than DAYS".into()),
        },
        "config" => no_words(Command::Config { json }),
        "doctor" => no_words(Command::Doctor { json, offline: has("offline") }),
        _ => {
            let args = SearchArgs {
                query: words,
                json,
                limit: value("limit"),
                context: value("context"),
                session: value("session"),
                event_type: value("type"),
            };
            if command == "search" {
                Command::Search(args)
            } else {
                Command::Sessions(SessionsArgs::Search(args))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(args: &[&str]) -> ExecArgs {
        let mut all = vec!["exec"];
        all.extend_from_slice(args);
        match parse(all.iter().map(OsString::from).collect()) {
            Command::Exec(args) => *args,
            other => panic!("expected exec, got {other:?}"),
        }
    }

    #[test]
    fn every_spelling_of_a_valued_flag() {
        for spelling in [&["-m", "x"][..], &["-mx"], &["--model", "x"], &["--model=x"], &["-m=x"]] {
            assert_eq!(exec(spelling).model.as_deref(), Some("x"), "{spelling:?}");
        }
        assert_eq!(exec(&["-m", "a", "-m", "b"]).model.as_deref(), Some("b"));
        assert_eq!(exec(&["-o", "json"]).output_format.as_deref(), Some("json"));
        assert_eq!(
            exec(&["--output-format=stream-json"]).output_format.as_deref(),
            Some("stream-json")
        );
        assert_eq!(exec(&["-C", "/tmp"]).cwd, Some(PathBuf::from("/tmp")));
        assert_eq!(exec(&["-f", "p.txt"]).file, Some(PathBuf::from("p.txt")));
    }

    #[test]
    fn prompt_words_and_options_mix_in_any_order() {
        let args = exec(&["fix", "-m", "gpt-4.1", "the", "bug", "--", "-x"]);
        assert_eq!(args.prompt_words, ["fix", "the", "bug", "-x"]);
        assert_eq!(args.model.as_deref(), Some("gpt-4.1"));
    }

    #[test]
    fn list_flags_accumulate() {
        let args = exec(&["--enabled-tools", "read_file,grep", "--enabled-tools=glob"]);
        assert_eq!(args.enabled_tools, ["read_file,grep", "glob"]);
        assert_eq!(exec(&["--redact-env", "A", "--redact-env", "B"]).redact_env, ["A", "B"]);
        let args = exec(&["--shell-env", "inherit", "--shell-env-keep", "A", "--shell-env-keep=B"]);
        assert_eq!(
            (args.shell_env.as_deref(), args.shell_env_keep),
            (Some("inherit"), vec!["A".to_string(), "B".to_string()])
        );
    }

    #[test]
    fn resume_forms_follow_a11() {
        assert_eq!(exec(&["--resume"]).resume, Some(Resume::Latest));
        assert_eq!(exec(&["--resume="]).resume, Some(Resume::Latest));
        assert_eq!(exec(&["--resume=abc"]).resume, Some(Resume::Id("abc".into())));
        let args = exec(&["--resume", "fix", "it"]);
        assert_eq!(args.resume, Some(Resume::Candidate { word: "fix".into(), index: 0 }));
        assert_eq!(args.prompt_words, ["fix", "it"]);
        let args = exec(&["hello", "--resume"]);
        assert_eq!(args.resume, Some(Resume::Latest));
        let args = exec(&["--resume", "--", "hello"]);
        assert_eq!(args.resume, Some(Resume::Latest));
        assert_eq!(args.prompt_words, ["hello"]);
        let args = exec(&["--resume", "-m", "x"]);
        assert_eq!((args.resume, args.model.as_deref()), (Some(Resume::Latest), Some("x")));
    }

    #[test]
    fn errors_are_kept_and_parsing_continues_to_find_the_output_format() {
        let args = exec(&["--bogus", "-o", "stream-json"]);
        assert_eq!(args.error.as_deref(), Some("invalid option '--bogus'"));
        assert_eq!(args.output_format.as_deref(), Some("stream-json"));
        let args = exec(&["-o", "json", "--model"]);
        assert_eq!(args.error.as_deref(), Some("missing argument for option '--model'"));
        let args = exec(&["--list-tools=yes", "-o", "json"]);
        assert!(args.error.as_deref().is_some_and(|e| e.contains("--list-tools")));
        assert_eq!(args.output_format.as_deref(), Some("json"));
    }

    #[test]
    fn root_command_takes_p_and_exec_options() {
        let cmd = parse(["-p", "hi", "-m", "x"].iter().map(OsString::from).collect());
        let Command::Exec(args) = cmd else { panic!("expected exec") };
        assert_eq!(args.prompt_words, ["hi"]);
        assert_eq!(args.model.as_deref(), Some("x"));
        assert!(matches!(parse(vec![]), Command::Invalid(_)));
        assert_eq!(
            parse(vec!["sesions".into()]),
            Command::Invalid("unknown command \"sesions\" (did you mean \"sessions\"?); commands: exec, sessions, search, config, doctor, redact, schema (see zero --help)".into())
        );
        assert!(
            matches!(parse(vec!["hello".into()]), Command::Invalid(m) if m.starts_with("unknown command \"hello\"; "))
        );
        let Command::Exec(args) =
            parse(["exec", "--modle", "x"].iter().map(OsString::from).collect())
        else {
            panic!()
        };
        assert_eq!(
            args.error.as_deref(),
            Some("invalid option '--modle' (did you mean \"--model\"?)")
        );
        assert_eq!(parse(vec!["--version".into()]), Command::Version);
        assert_eq!(parse(vec!["-V".into()]), Command::Version);
        assert_eq!(parse(vec!["--help".into()]), Command::Help(HELP.to_string()));
        assert_eq!(parse(vec!["exec".into(), "-h".into()]), Command::Help(exec_help()));
    }

    #[test]
    fn sessions_subcommands() {
        let p = |a: &[&str]| parse(a.iter().map(OsString::from).collect());
        assert_eq!(
            p(&["sessions", "list"]),
            Command::Sessions(SessionsArgs::List { json: false, all: false })
        );
        assert_eq!(
            p(&["sessions", "list", "--all", "--json"]),
            Command::Sessions(SessionsArgs::List { json: true, all: true })
        );
        assert_eq!(
            p(&["sessions", "delete", "a", "b"]),
            Command::Sessions(SessionsArgs::Delete { ids: vec!["a".into(), "b".into()] })
        );
        assert_eq!(
            p(&["sessions", "prune", "--older-than", "30", "--dry-run"]),
            Command::Sessions(SessionsArgs::Prune { older_than: "30".into(), dry_run: true })
        );
        assert!(matches!(p(&["sessions", "prune"]), Command::Invalid(_)));
        assert_eq!(
            p(&["search", "--limit", "5", "zero", "search", "--json"]),
            Command::Search(SearchArgs {
                query: vec!["zero".into(), "search".into()],
                json: true,
                limit: Some("5".into()),
                ..SearchArgs::default()
            })
        );
        assert!(matches!(
            p(&["sessions", "search", "x"]),
            Command::Sessions(SessionsArgs::Search(_))
        ));
        assert_eq!(p(&["config", "--json"]), Command::Config { json: true });
        assert_eq!(p(&["doctor", "--offline"]), Command::Doctor { json: false, offline: true });
        assert_eq!(
            p(&["sessions", "lsit"]),
            Command::Invalid("unknown sessions command \"lsit\" (did you mean \"list\"?); expected list, show, delete, prune or search".into())
        );
        assert_eq!(
            p(&["sessions", "list", "--jsno"]),
            Command::Invalid(
                "invalid option '--jsno' for zero sessions list (did you mean \"--json\"?)".into()
            )
        );
        assert_eq!(
            p(&["sessions", "show", "abc", "--json"]),
            Command::Sessions(SessionsArgs::Show { id: "abc".into(), json: true })
        );
        assert!(matches!(p(&["sessions"]), Command::Invalid(_)));
        assert_eq!(p(&["redact", "--redact-env", "A"]), Command::Redact(vec!["A".into()]));
        assert!(matches!(p(&["redact", "file.txt"]), Command::Invalid(_)));
    }

    #[test]
    fn the_help_names_the_schema_versions_zero_speaks() {
        let list = crate::protocol::events::SchemaVersion::supported();
        assert!(SCHEMA_HELP.contains(&format!("Versions\nthis zero speaks: {list}.")));
        assert!(HELP.contains(&format!("the JSON Schema of stream-json ({list})")));
    }

    #[test]
    fn exec_help_names_every_variable_zero_reads() {
        let help = exec_help();
        for name in crate::config::read_vars() {
            assert!(
                help.contains(&format!(" {name},"))
                    || help.contains(&format!(" {name}."))
                    || help.contains(&format!("\n{name},")),
                "{name} is not in exec --help"
            );
        }
        assert!(!help.contains("{ENVIRONMENT}"));
    }

    #[test]
    fn help_lines_fit_79_columns() {
        let exec = exec_help();
        for text in [HELP, &exec, SESSIONS_HELP, REDACT_HELP, SEARCH_HELP, CONFIG_HELP, DOCTOR_HELP]
        {
            for line in text.lines() {
                assert!(line.chars().count() <= 79, "too long: {line}");
            }
        }
    }
}
