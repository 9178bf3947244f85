//! The companion commands (`sessions`, `search`, `config`, `doctor`, `redact`, `schema`): their
//! flags, each declared once, the parser made from them, and their help texts.

use std::ffi::OsString;

use lexopt::prelude::*;

use super::flags::{self, Applied, Flag, Slot};
use super::{Command, Owned, SearchArgs, SessionsArgs};

/// Everything a companion command's flags can set; each command reads its own.
#[derive(Debug, Default)]
pub struct Options {
    json: bool,
    all: bool,
    dry_run: bool,
    offline: bool,
    older_than: Option<String>,
    limit: Option<String>,
    context: Option<String>,
    session: Option<String>,
    event_type: Option<String>,
    redact_env: Vec<String>,
    mcp_configs: Vec<String>,
    strict_mcp_config: bool,
    auto: Option<String>,
    enabled_tools: Vec<String>,
    disabled_tools: Vec<String>,
}

const JSON: Flag<Options> =
    Flag::new("json", None, "", "one JSON document, for programs", Slot::Switch(|o| &mut o.json));
const ALL: Flag<Options> = Flag::new(
    "all",
    None,
    "",
    "every directory's sessions, not only this one's",
    Slot::Switch(|o| &mut o.all),
);
const OLDER_THAN: Flag<Options> = Flag::new(
    "older-than",
    None,
    " <DAYS>",
    "the sessions not updated for DAYS days",
    Slot::Text(|o| &mut o.older_than),
);
const DRY_RUN: Flag<Options> = Flag::new(
    "dry-run",
    None,
    "",
    "say what would be removed, remove nothing",
    Slot::Switch(|o| &mut o.dry_run),
);
const OFFLINE: Flag<Options> = Flag::new(
    "offline",
    None,
    "",
    "skip the checks that use the network",
    Slot::Switch(|o| &mut o.offline),
);
const LIMIT: Flag<Options> =
    Flag::new("limit", None, " <N>", "at most N hits (default: 20)", Slot::Text(|o| &mut o.limit));
const CONTEXT: Flag<Options> = Flag::new(
    "context",
    None,
    " <N>",
    "characters shown around a hit (default: 80)",
    Slot::Text(|o| &mut o.context),
);
const SESSION: Flag<Options> =
    Flag::new("session", None, " <ID>", "only this session", Slot::Text(|o| &mut o.session));
const TYPE: Flag<Options> = Flag::new(
    "type",
    None,
    " <EVENT_TYPE>",
    "only events of this type (message, tool_call..)",
    Slot::Text(|o| &mut o.event_type),
);
const REDACT_ENV: Flag<Options> = Flag::new(
    "redact-env",
    None,
    " <NAME>",
    "also redact the value of env variable NAME\n(repeatable)",
    Slot::Texts(|o| &mut o.redact_env),
);

const MCP_CONFIG: Flag<Options> = Flag::new(
    "mcp-config",
    None,
    " <PATH|JSON>",
    "MCP servers: a file or JSON text holding\n{\"mcpServers\": {...}} (repeatable)",
    Slot::Texts(|o| &mut o.mcp_configs),
);
const STRICT_MCP_CONFIG: Flag<Options> = Flag::new(
    "strict-mcp-config",
    None,
    "",
    "only the --mcp-config servers, none from\nthe user config file",
    Slot::Switch(|o| &mut o.strict_mcp_config),
);

const AUTO: Flag<Options> = Flag::<Options>::new(
    "auto",
    None,
    " <LEVEL>",
    "low (default), medium or high: the level whose\noffer is shown",
    Slot::Text(|o| &mut o.auto),
)
.one_of(&["low", "medium", "high"]);
const ENABLED_TOOLS: Flag<Options> = Flag::new(
    "enabled-tools",
    None,
    " <NAMES>",
    "only these tools (mcp__<server>__<tool>,\nmcp__<server>), as zero exec takes them",
    Slot::Texts(|o| &mut o.enabled_tools),
);
const DISABLED_TOOLS: Flag<Options> = Flag::new(
    "disabled-tools",
    None,
    " <NAMES>",
    "not these tools, as zero exec takes them",
    Slot::Texts(|o| &mut o.disabled_tools),
);

/// One companion command: its name as typed, the words it takes, what it does, its flags,
/// and the command its flags and words make.
pub struct Companion {
    pub name: &'static str,
    pub words: &'static str,
    /// One line, for `zero sessions --help`.
    pub summary: &'static str,
    pub about: &'static str,
    pub flags: &'static [Flag<Options>],
    /// The words it takes when they are a fixed few, for completion.
    pub choices: &'static [&'static str],
    build: fn(Options, Vec<String>) -> Command,
}

pub const SESSIONS_LIST: Companion = Companion {
    name: "sessions list",
    words: "",
    summary: "this directory's sessions, newest first",
    about: "Lists the sessions started in this directory, newest first.\n",
    flags: &[ALL, JSON, flags::help()],
    choices: &[],
    build: |o, words| {
        no_words("sessions list", words, SessionsArgs::List { json: o.json, all: o.all })
    },
};

pub const SESSIONS_SHOW: Companion = Companion {
    name: "sessions show",
    words: " <ID>",
    summary: "one session's metadata and events",
    about: "Prints one session's metadata and events, one row per event.\n",
    flags: &[JSON, flags::help()],
    choices: &[],
    build: |o, words| match <[String; 1]>::try_from(words) {
        Ok([id]) => Command::Sessions(SessionsArgs::Show { id, json: o.json }),
        Err(words) if words.is_empty() => {
            Command::Invalid("zero sessions show needs a session id".into())
        }
        Err(_) => Command::Invalid("zero sessions show takes one session id".into()),
    },
};

pub const SESSIONS_DELETE: Companion = Companion {
    name: "sessions delete",
    words: " <ID>...",
    summary: "remove sessions",
    about: "Removes the sessions named.\n",
    flags: &[flags::help()],
    choices: &[],
    build: |_, ids| match ids.is_empty() {
        true => Command::Invalid("zero sessions delete needs one or more session ids".into()),
        false => Command::Sessions(SessionsArgs::Delete { ids }),
    },
};

pub const SESSIONS_PRUNE: Companion = Companion {
    name: "sessions prune",
    words: " --older-than <DAYS>",
    summary: "remove sessions not updated for DAYS days",
    about: "Removes every session not updated for DAYS days.\n",
    flags: &[OLDER_THAN, DRY_RUN, flags::help()],
    choices: &[],
    build: |o, words| match o.older_than {
        Some(older_than) => no_words(
            "sessions prune",
            words,
            SessionsArgs::Prune { older_than, dry_run: o.dry_run },
        ),
        None => Command::Invalid("zero sessions prune needs --older-than DAYS".into()),
    },
};

const SEARCH_ABOUT: &str = "\
Finds stored session events whose text holds the query (case-insensitive:
the whole phrase, else every word), newest sessions first. Output is
redacted.
";

pub const SESSIONS_SEARCH: Companion = Companion {
    name: "sessions search",
    words: " <QUERY...>",
    summary: "search the stored sessions (zero search)",
    about: SEARCH_ABOUT,
    flags: &[JSON, LIMIT, CONTEXT, SESSION, TYPE, flags::help()],
    choices: &[],
    // `zero sessions search` is `zero search`.
    build: |o, query| {
        Command::Search(SearchArgs {
            query,
            json: o.json,
            limit: o.limit,
            context: o.context,
            session: o.session,
            event_type: o.event_type,
        })
    },
};

pub const SEARCH: Companion = Companion { name: "search", words: " <QUERY...>", ..SESSIONS_SEARCH };

pub const CONFIG: Companion = Companion {
    name: "config",
    words: "",
    summary: "",
    about: "Prints the configuration zero would use here: the provider, model, key
(redacted), and each layer it comes from (defaults, the user file, the
environment). Exit 0 when it is usable, 3 when it is not.
",
    flags: &[JSON, flags::help()],
    choices: &[],
    build: |o, words| no_words("config", words, Command::Config { json: o.json }),
};

pub const DOCTOR: Companion = Companion {
    name: "doctor",
    words: "",
    summary: "",
    about: "Checks the setup one step at a time (config file, provider, model, adapter,
connectivity, key) and says how to fix what fails. Exit 0 when every check
passes, 3 when one fails.
",
    flags: &[JSON, OFFLINE, flags::help()],
    choices: &[],
    build: |o, words| {
        no_words("doctor", words, Command::Doctor { json: o.json, offline: o.offline })
    },
};

pub const MCP_LIST: Companion = Companion {
    name: "mcp list",
    words: "",
    summary: "",
    about: "Starts each configured MCP server (the config file's mcpServers and each
--mcp-config, as zero exec would), prints its status, protocol version and
tools (each with whether it is marked read-only, and why a run with these
flags would leave it out: a filter, a name taken twice, the limits, or the
level), and stops it. Exit 0 when every required server started, 3 when one
failed or the configuration is invalid.
",
    flags: &[
        JSON,
        MCP_CONFIG,
        STRICT_MCP_CONFIG,
        AUTO,
        ENABLED_TOOLS,
        DISABLED_TOOLS,
        flags::help(),
    ],
    choices: &[],
    build: |o, words| {
        no_words(
            "mcp list",
            words,
            Command::McpList(super::McpListArgs {
                json: o.json,
                configs: o.mcp_configs,
                strict: o.strict_mcp_config,
                auto: o.auto,
                enabled_tools: o.enabled_tools,
                disabled_tools: o.disabled_tools,
            }),
        )
    },
};

pub const REDACT: Companion = Companion {
    name: "redact",
    words: "",
    summary: "",
    about: "Copies stdin to stdout with secrets replaced by [REDACTED], using the same
rules as every line zero writes: token shapes, sensitive keys and headers,
URL passwords, private keys, and the values of environment variables with
sensitive names (and of each --redact-env NAME).
",
    flags: &[REDACT_ENV, flags::help()],
    choices: &[],
    build: |o, words| no_words("redact", words, Command::Redact(o.redact_env)),
};

pub const SCHEMA: Companion = Companion {
    name: "schema",
    words: " [VERSION|config]",
    summary: "",
    about: "Prints a JSON Schema (draft 2020-12): of stream-json schema VERSION
(default 1), every event zero writes and reads, with unknown fields
forbidden (versions this zero speaks: 1, 2); or, with `config`, of the user
config file (~/.config/zero/config.json), for editors to check it.
",
    flags: &[flags::help()],
    choices: &["1", "2", "config"],
    build: |_, words| match <[String; 1]>::try_from(words) {
        Ok([version]) => Command::Schema(version),
        Err(words) if words.is_empty() => Command::Schema("1".into()),
        Err(_) => Command::Invalid(
            "zero schema takes one version at most (see zero schema --help)".into(),
        ),
    },
};

pub const COMPLETIONS: Companion = Companion {
    name: "completions",
    words: " <SHELL>",
    summary: "",
    about: "Prints the completion script for SHELL (bash, zsh or fish): commands, flags,
the values of flags that take one of a few words, and paths.
  bash: source <(zero completions bash), or save it as
        ~/.local/share/bash-completion/completions/zero
  zsh:  save it as _zero in a directory of $fpath
  fish: save it as ~/.config/fish/completions/zero.fish
",
    flags: &[flags::help()],
    choices: super::completions::Shell::NAMES,
    build: |_, words| match <[String; 1]>::try_from(words) {
        Ok([name]) => match super::completions::Shell::parse(&name) {
            Some(shell) => Command::Completions(shell),
            None => Command::Invalid(format!(
                "zero completions: unknown shell \"{name}\"; expected bash, zsh or fish"
            )),
        },
        Err(_) => Command::Invalid("zero completions needs one shell: bash, zsh or fish".into()),
    },
};

/// A command that takes no words, or the error naming those given.
fn no_words(name: &str, words: Vec<String>, command: impl Into<Command>) -> Command {
    if words.is_empty() {
        command.into()
    } else {
        Command::Invalid(format!("zero {name} takes no arguments (got \"{}\")", words.join(" ")))
    }
}

impl From<SessionsArgs> for Command {
    fn from(args: SessionsArgs) -> Command {
        Command::Sessions(args)
    }
}

/// The `zero sessions` commands, in the order their overview lists them.
pub const SESSIONS: [&Companion; 5] =
    [&SESSIONS_LIST, &SESSIONS_SHOW, &SESSIONS_DELETE, &SESSIONS_PRUNE, &SESSIONS_SEARCH];

/// Every companion command: the parser finds each here by name, so a command cannot be
/// parsed without being in this list (and in the tests that go through it).
pub const COMPANIONS: [&Companion; 12] = [
    &SESSIONS_LIST,
    &SESSIONS_SHOW,
    &SESSIONS_DELETE,
    &SESSIONS_PRUNE,
    &SESSIONS_SEARCH,
    &SEARCH,
    &CONFIG,
    &DOCTOR,
    &MCP_LIST,
    &REDACT,
    &SCHEMA,
    &COMPLETIONS,
];

impl Companion {
    /// `zero <command> --help`.
    pub fn help(&self) -> String {
        let mut help = format!(
            "Usage: zero {}{} [OPTIONS]\n\n{}\nOptions:\n",
            self.name, self.words, self.about
        );
        for flag in self.flags {
            help.push_str(&flag.help_row());
        }
        help
    }
}

/// `zero sessions --help`: each sessions command on a line.
pub fn sessions_help() -> String {
    let mut help = String::from("Usage: zero sessions <COMMAND> [OPTIONS]\n\nCommands:\n");
    for command in SESSIONS {
        let sub = command.name.trim_start_matches("sessions ");
        let left = format!("  {sub}{}", command.words);
        let width = (left.len() + 2).max(flags::HELP_COLUMN);
        help.push_str(&format!("{left:<width$}{}\n", command.summary));
    }
    help.push_str("\nzero sessions <COMMAND> --help lists the options of one.\n");
    help
}

pub fn parse_sessions(args: Vec<OsString>) -> Command {
    let sub = args.first().and_then(|a| a.to_str()).map(str::to_string);
    let names: Vec<&str> =
        SESSIONS.iter().map(|c| c.name.trim_start_matches("sessions ")).collect();
    match sub.as_deref() {
        Some("-h" | "--help") => Command::Help(sessions_help()),
        Some(sub) if names.contains(&sub) => parse(args[1..].to_vec(), &format!("sessions {sub}")),
        Some(other) => Command::Invalid(format!(
            "unknown sessions command \"{other}\"{}; expected list, show, delete, prune or search",
            crate::text::did_you_mean(other, &names)
        )),
        None => Command::Invalid(
            "expected `zero sessions list`, `show <ID>`, `delete <ID>...`, `prune --older-than DAYS` or `search <QUERY>` (see zero sessions --help)".into(),
        ),
    }
}

/// Parses the flags and words of the companion command `name` into its [`Command`].
pub fn parse(args: Vec<OsString>, name: &str) -> Command {
    let Some(command) = COMPANIONS.iter().find(|c| c.name == name) else {
        return Command::Invalid(format!("unknown command \"{name}\" (see zero --help)"));
    };
    match read(args, command) {
        Ok((options, words)) => (command.build)(options, words),
        Err(stop) => *stop,
    }
}

/// The flags and words of one command, or what to do instead (its help, an error).
fn read(args: Vec<OsString>, command: &Companion) -> Result<(Options, Vec<String>), Box<Command>> {
    let mut parser = lexopt::Parser::from_args(args);
    let mut options = Options::default();
    let mut words = Vec::new();
    let invalid = |err: lexopt::Error| Box::new(Command::Invalid(err.to_string()));
    let value = |p: &mut lexopt::Parser, _: &str| p.value();
    while let Some(arg) = parser.next().map_err(invalid)? {
        let flag = command.flags.iter().find(|f| f.named(&arg));
        match (flag, Owned::from(arg)) {
            (Some(flag), _) => match flag.apply(&mut options, &mut parser, &value, flag.long) {
                Ok(Applied::Set) => {}
                Ok(Applied::Help | Applied::Version) => {
                    return Err(Box::new(Command::Help(command.help())))
                }
                Err(err) => return Err(invalid(err)),
            },
            (None, Owned::Value(v)) => words.push(v.string().map_err(invalid)?),
            (None, Owned::Long(l)) => {
                let table: Vec<&Flag<Options>> = command.flags.iter().collect();
                let known = flags::long_names(&table);
                let known: Vec<&str> = known.iter().map(String::as_str).collect();
                return Err(Box::new(Command::Invalid(format!(
                    "invalid option '--{l}' for zero {}{}",
                    command.name,
                    crate::text::did_you_mean(&format!("--{l}"), &known)
                ))));
            }
            (None, Owned::Short(c)) => {
                return Err(Box::new(Command::Invalid(format!(
                    "invalid option '-{c}' for zero {}",
                    command.name
                ))))
            }
        }
    }
    Ok((options, words))
}
