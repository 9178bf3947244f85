//! `zero exec` and the root command (`zero -p`): the flag table, the parser made from it, and
//! `zero exec --help`.

use std::ffi::OsString;

use lexopt::prelude::*;

use super::flags::{self, Applied, Flag, Slot};
use super::{Command, ExecArgs, Owned, Resume, HELP};

/// A heading of `zero exec --help` and the flags under it.
pub struct Section {
    pub heading: &'static str,
    /// Rows shown before the flags (the prompt words).
    pub intro: &'static str,
    pub flags: &'static [Flag<ExecArgs>],
}

/// Every flag of `zero exec`, in the order `--help` shows them.
pub const EXEC_FLAGS: &[Section] = &[
    Section {
        heading: "Input",
        intro: "  [PROMPT...]                  prompt words, joined with spaces (`-` reads\n                               the prompt from stdin)\n",
        flags: &[
            Flag::new("prompt", None, " <TEXT>", "the prompt, instead of the words", Slot::Text(|a| &mut a.prompt)),
            Flag::new("file", Some('f'), " <PATH>", "prompt file (appended after a blank line; -\nfor stdin), or the JSONL input with\n-i stream-json", Slot::Path(|a| &mut a.file)),
            Flag::<ExecArgs>::new("input-format", Some('i'), " <FMT>", "text | stream-json (default: \"text\"); with\nstream-json, JSONL is read from stdin or --file", Slot::Text(|a| &mut a.input_format)).one_of(&["text", "stream-json"]),
        ],
    },
    Section {
        heading: "Output",
        intro: "",
        flags: &[
            Flag::<ExecArgs>::new("output-format", Some('o'), " <FMT>", "text | json | stream-json (default: \"text\")", Slot::Text(|a| &mut a.output_format)).one_of(&["text", "json", "stream-json"]),
            Flag::<ExecArgs>::new("schema-version", None, " <N>", "stream-json schema 1 | 2 (default: the\nversion of the first input line, else 1)", Slot::Text(|a| &mut a.schema_version)).one_of(&["1", "2"]),
            Flag::new("heartbeat-ms", None, " <N>", "schema 2: a heartbeat line after N ms of\nsilence (default: 10000; 0 turns them off)", Slot::Text(|a| &mut a.heartbeat_ms)),
            Flag::new("output-schema", None, " <PATH|JSON>", "answer with JSON matching this JSON Schema\n(a file, or the schema itself when it\nstarts with {)", Slot::Text(|a| &mut a.output_schema)),
            Flag::new("output-schema-attempts", None, " <N>", "failed answers before the run gives up\n(1 to 10, default: 3)", Slot::Text(|a| &mut a.output_schema_attempts)),
            Flag::new("image", None, " <PATH>", "attach a PNG, JPEG, GIF or WebP image to the\nprompt (repeatable)", Slot::Paths(|a| &mut a.images)),
            Flag::new("live", None, "", "many turns over one stdin stream, one per\nprompt line (-i and -o stream-json, schema 2)", Slot::Switch(|a| &mut a.live)),
            Flag::<ExecArgs>::new("approvals", None, " stdin", "live mode: calls that need approval wait for a\npermission_response line", Slot::Text(|a| &mut a.approvals)).one_of(&["stdin"]),
            Flag::new("approval-timeout-ms", None, " <N>", "how long an approval waits (default: 60000)", Slot::Text(|a| &mut a.approval_timeout_ms)),
        ],
    },
    Section {
        heading: "Model",
        intro: "",
        flags: &[
            Flag::new("model", Some('m'), " <MODEL>", "model id, alias or profile name", Slot::Text(|a| &mut a.model)),
            Flag::<ExecArgs>::new("profile", None, " <PROFILE>", "fast | balanced | deep | cheap", Slot::Text(|a| &mut a.profile)).one_of(&["fast", "balanced", "deep", "cheap"]),
            Flag::<ExecArgs>::new("reasoning-effort", Some('r'), " <E>", "none | minimal | low | medium | high | xhigh", Slot::Text(|a| &mut a.reasoning_effort)).one_of(&["none", "minimal", "low", "medium", "high", "xhigh"]),
            Flag::<ExecArgs>::new("provider", None, " <KIND>", "openai | anthropic | google |\nopenai-compatible | azure | scripted", Slot::Text(|a| &mut a.provider)).one_of(&["openai", "anthropic", "google", "openai-compatible", "azure", "scripted"]),
            Flag::new("script", None, " <PATH>", "scripted provider: the JSON script to play", Slot::Path(|a| &mut a.script)),
            Flag::new("record", None, " <PATH>", "also write the run's model calls as a script\nthat --provider scripted --script replays", Slot::Path(|a| &mut a.record)),
            Flag::new("max-turns", None, " <N>", "model turns before giving up (default: 12)", Slot::Text(|a| &mut a.max_turns)),
            Flag::new("max-output-tokens", None, " <N>", "output tokens per model call (default: the\nmodel's limit, 4096 for unknown models)", Slot::Text(|a| &mut a.max_output_tokens)),
            Flag::new("max-budget-usd", None, " <X>", "stop before a model call once the run has\nspent $X (needs a model with prices)", Slot::Text(|a| &mut a.max_budget_usd)),
        ],
    },
    Section {
        heading: "What the model is told",
        intro: "",
        flags: &[
            Flag::new("system-prompt", None, " <TEXT>", "replace zero's system prompt", Slot::Text(|a| &mut a.system_prompt)),
            Flag::new("system-prompt-file", None, " <PATH>", "replace it with a file's text", Slot::Path(|a| &mut a.system_prompt_file)),
            Flag::new("append-system-prompt", None, " <TEXT>", "add TEXT after the system prompt", Slot::Text(|a| &mut a.append_system_prompt)),
            Flag::new("append-system-prompt-file", None, " <PATH>", "add a file's text after it", Slot::Path(|a| &mut a.append_system_prompt_file)),
            Flag::new("no-project-instructions", None, "", "read no AGENTS.md files (the repository's\nand ~/.config/zero/AGENTS.md)", Slot::Switch(|a| &mut a.no_project_instructions)),
        ],
    },
    Section {
        heading: "Tools and permissions",
        intro: "",
        flags: &[
            Flag::<ExecArgs>::new("auto", None, " <LEVEL>", "low | medium | high (default: \"low\"): low\nreads, medium also edits files, high also\nruns bash", Slot::Text(|a| &mut a.auto)).one_of(&["low", "medium", "high"]),
            Flag::new("skip-permissions-unsafe", None, "", "enable every tool, like --auto high", Slot::Switch(|a| &mut a.skip_permissions_unsafe)),
            Flag::new("enabled-tools", None, " <LIST>", "only these tools (comma or space separated)", Slot::Texts(|a| &mut a.enabled_tools)),
            Flag::new("disabled-tools", None, " <LIST>", "never these tools", Slot::Texts(|a| &mut a.disabled_tools)),
            Flag::new("list-tools", None, "", "print the tools the model would see, exit", Slot::Switch(|a| &mut a.list_tools)),
            Flag::<ExecArgs>::new("shell-env", None, " <MODE>", "filtered | inherit (default: \"filtered\"): bash\ngets zero's environment without variables\nwhose names look secret (*_TOKEN, *_API_KEY..)", Slot::Text(|a| &mut a.shell_env)).one_of(&["filtered", "inherit"]),
            Flag::new("shell-env-keep", None, " <NAME>", "pass NAME to bash even so (repeatable)", Slot::Texts(|a| &mut a.shell_env_keep)),
            Flag::<ExecArgs>::new("sandbox", None, " <MODE>", "off | read-only | workspace-write (default):\nwhere bash may write", Slot::Text(|a| &mut a.sandbox)).one_of(&["off", "read-only", "workspace-write"]),
            Flag::<ExecArgs>::new("sandbox-network", None, " <on|off>", "off: bash's commands open no network\nsockets (default: on)", Slot::Text(|a| &mut a.sandbox_network)).one_of(&["on", "off"]),
            Flag::new("sandbox-writable", None, " <DIR>", "bash may write in DIR too (repeatable)", Slot::Paths(|a| &mut a.sandbox_writable)),
            Flag::<ExecArgs>::new("sandbox-caches", None, " <on|off>", "off: the build caches (~/.cargo/registry,\n~/.npm...) are not writable (default: on)", Slot::Text(|a| &mut a.sandbox_caches)).one_of(&["on", "off"]),
            Flag::new("sandbox-required", None, "", "fail (exit 2) when the sandbox cannot be\nenforced here", Slot::Switch(|a| &mut a.sandbox_required)),
            Flag::new("mcp-config", None, " <PATH|JSON>", "MCP servers: a file or JSON text holding\n{\"mcpServers\": {...}} (repeatable)", Slot::Texts(|a| &mut a.mcp_configs)),
            Flag::new("strict-mcp-config", None, "", "only the --mcp-config servers, none from\nthe user config file", Slot::Switch(|a| &mut a.strict_mcp_config)),
        ],
    },
    Section {
        heading: "Sessions",
        intro: "",
        flags: &[
            Flag::new("resume", None, "[=ID]", "continue this workspace's latest session, or\nsession ID (--resume ID works for an\nexisting id)", Slot::Custom(resume_value)),
            Flag::new("fork", None, " <ID>", "continue a copy of session ID", Slot::Text(|a| &mut a.fork)),
            Flag::new("ephemeral", None, "", "write no session for this run", Slot::Switch(|a| &mut a.ephemeral)),
        ],
    },
    Section {
        heading: "Other",
        intro: "",
        flags: &[
            Flag::new("cwd", Some('C'), " <DIR>", "work in DIR (the workspace root)", Slot::Path(|a| &mut a.cwd)),
            Flag::new("add-dir", None, " <DIR>", "let the file tools use DIR too (repeatable)", Slot::Paths(|a| &mut a.add_dirs)),
            Flag::new("redact-env", None, " <NAME>", "also redact the value of env variable NAME\n(repeatable)", Slot::Texts(|a| &mut a.redact_env)),
            flags::help(),
            Flag::new("version", Some('V'), "", "print the version", Slot::Version),
        ],
    },
];

/// The root command's own flag: `zero -p PROMPT` (also `--prompt` there) is a prompt word.
pub(super) static ROOT_PROMPT: Flag<ExecArgs> =
    Flag::new("prompt", Some('p'), " <PROMPT>", "the prompt", Slot::Texts(|a| &mut a.prompt_words));

/// Every flag of `zero exec`, in help order.
pub fn exec_flags() -> Vec<&'static Flag<ExecArgs>> {
    EXEC_FLAGS.iter().flat_map(|s| s.flags).collect()
}

const EXEC_USAGE: &str = "\
Usage: zero exec [OPTIONS] [PROMPT...]

Runs one task: sends the prompt to the model, runs the tools it calls, and
writes the answer (text) or a stream of JSON events (json, stream-json).
";

/// "Exit codes: 0 success, ...", from the one list of them, wrapped as the help's lines.
fn exit_codes() -> String {
    let words: Vec<String> = crate::error::Exit::ALL
        .iter()
        .enumerate()
        .map(|(i, exit)| {
            let end = if i + 1 == crate::error::Exit::ALL.len() { "." } else { "," };
            format!("{} {}{end}", exit.code(), exit.meaning())
        })
        .collect();
    wrap("Exit codes:", &words, 68)
}

/// `head` and the words after it, in lines of at most `width` columns.
fn wrap(head: &str, words: &[String], width: usize) -> String {
    let mut text = String::new();
    let mut line = String::from(head);
    for word in words {
        if line.len() + 1 + word.len() > width {
            text.push_str(&line);
            text.push('\n');
            line.clear();
        } else {
            line.push(' ');
        }
        line.push_str(word);
    }
    text.push_str(&line);
    text.push('\n');
    text
}

/// `zero exec --help`: the flag table, then the environment variables zero reads (from the one
/// list of them, `config::read_vars`), wrapped to 79 columns.
pub fn exec_help() -> String {
    let mut help = String::from(EXEC_USAGE);
    for section in EXEC_FLAGS {
        help.push('\n');
        help.push_str(section.heading);
        help.push_str(":\n");
        help.push_str(section.intro);
        for flag in section.flags {
            help.push_str(&flag.help_row());
        }
    }
    help.push('\n');
    help.push_str(&environment_paragraph());
    help.push_str(&exit_codes());
    help
}

fn environment_paragraph() -> String {
    let names: Vec<&str> = crate::config::read_vars().collect();
    let words: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, name)| if i + 1 == names.len() { format!("{name}.") } else { format!("{name},") })
        .collect();
    let mut paragraph = wrap("Environment:", &words, 79);
    paragraph.push_str(
        "Variables whose names say they hold secrets are withheld from bash, and\ntheir values redacted. Config: $XDG_CONFIG_HOME/zero/config.json.\n\n",
    );
    paragraph
}

/// The exec flags `zero acp` takes: they set every session's defaults.
pub const ACP_FLAGS: &[&str] = &[
    "model",
    "profile",
    "reasoning-effort",
    "provider",
    "script",
    "max-turns",
    "max-output-tokens",
    "max-budget-usd",
    "system-prompt",
    "system-prompt-file",
    "append-system-prompt",
    "append-system-prompt-file",
    "no-project-instructions",
    "auto",
    "skip-permissions-unsafe",
    "enabled-tools",
    "disabled-tools",
    "shell-env",
    "shell-env-keep",
    "sandbox",
    "sandbox-network",
    "sandbox-writable",
    "sandbox-caches",
    "sandbox-required",
    "mcp-config",
    "strict-mcp-config",
    "approval-timeout-ms",
    "add-dir",
    "redact-env",
];

const ACP_USAGE: &str = "\
Usage: zero acp [OPTIONS]

Serves the Agent Client Protocol (version 1) on stdin and stdout, for editors
(Zed, JetBrains, Neovim, Emacs...): JSON-RPC, one message per line. Each
session the editor opens is a zero session in the workspace it names; the
options set every session's defaults. Calls the mode does not allow are asked
about with session/request_permission (--approval-timeout-ms, default 1 hour).
Diagnostics go to stderr. The process ends when stdin does.
";

/// The flag only `zero acp` takes (parsed before the exec flags it shares).
const ACP_OWN_FLAGS: &str = concat!(
    "      --client-terminal        bash runs in the client's terminal\n",
    "                               (terminal/create), under the client's rules,\n",
    "                               not zero's sandbox\n",
);

/// `zero acp --help`: the exec flags it takes, under their headings.
pub fn acp_help() -> String {
    let mut help = String::from(ACP_USAGE);
    for section in EXEC_FLAGS {
        let flags: Vec<_> = section.flags.iter().filter(|f| ACP_FLAGS.contains(&f.long)).collect();
        if flags.is_empty() {
            continue;
        }
        help.push('\n');
        help.push_str(section.heading);
        help.push_str(":\n");
        for flag in flags {
            help.push_str(&flag.help_row());
        }
    }
    help.push_str(ACP_OWN_FLAGS);
    help.push_str(&flags::help::<ExecArgs>().help_row());
    help
}

/// `zero exec ...`, or the root command (`zero -p ...`) when `root` is set. Flag errors are
/// kept in [`ExecArgs::error`] and parsing goes on, to find the output format to report them in.
pub fn parse_exec(args: Vec<OsString>, root: bool) -> Command {
    let mut out = ExecArgs::default();
    let mut parser = lexopt::Parser::from_args(args);
    let mut table = exec_flags();
    // `-p` given where a value belongs is a mistake under `zero exec` too.
    let mut flags_anywhere = table.clone();
    flags_anywhere.push(&ROOT_PROMPT);
    if root {
        table.insert(0, &ROOT_PROMPT);
    }
    let value = |p: &mut lexopt::Parser, shown: &str| flag_value(p, shown, &flags_anywhere);
    let mut saw_prompt_flag = false;
    loop {
        let arg = match parser.next() {
            Ok(Some(arg)) => arg,
            Ok(None) => break,
            Err(err) => {
                out.error.get_or_insert_with(|| describe(err, &table));
                continue;
            }
        };
        let flag = table.iter().find(|f| f.named(&arg));
        let root_prompt = flag.is_some_and(|f| std::ptr::eq(*f, &ROOT_PROMPT));
        saw_prompt_flag |= root_prompt;
        let result = match (flag, Owned::from(arg)) {
            // A flag is named by its long form, but `-p`, whose long form is another flag's
            // in `zero exec`, is named as typed.
            (Some(_), Owned::Short('p')) if root_prompt => {
                ROOT_PROMPT.apply(&mut out, &mut parser, &value, "-p")
            }
            (Some(flag), _) => {
                flag.apply(&mut out, &mut parser, &value, &format!("--{}", flag.long))
            }
            (None, Owned::Value(v)) if !root => v.string().map(|v| {
                out.prompt_words.push(v);
                Applied::Set
            }),
            (None, Owned::Value(v)) => Err(lexopt::Error::UnexpectedArgument(v)),
            (None, Owned::Short(c)) => Err(lexopt::Error::UnexpectedOption(format!("-{c}"))),
            (None, Owned::Long(l)) => Err(lexopt::Error::UnexpectedOption(format!("--{l}"))),
        };
        match result {
            Ok(Applied::Set) => {}
            Ok(Applied::Help) => {
                return Command::Help(if root { HELP.to_string() } else { exec_help() })
            }
            Ok(Applied::Version) => return Command::Version,
            Err(err) => {
                out.error.get_or_insert_with(|| describe(err, &table));
            }
        }
    }
    if root && !saw_prompt_flag && out.error.is_none() {
        return root_command(out);
    }
    Command::Exec(Box::new(out))
}

/// The root command without `-p`: it runs no task.
fn root_command(out: ExecArgs) -> Command {
    let message = if out == ExecArgs::default() {
        "no command given: use `zero exec \"prompt\"` or `zero -p \"prompt\"` (see zero --help)"
    } else {
        "exec options need a prompt: use `zero exec` or `zero -p`"
    };
    Command::Invalid(message.to_string())
}

/// A lexopt error as one line, with the closest option when one was mistyped.
fn describe(err: lexopt::Error, table: &[&Flag<ExecArgs>]) -> String {
    match &err {
        lexopt::Error::UnexpectedOption(option) if option.starts_with("--") => {
            let name = option.split('=').next().unwrap_or(option);
            let known = flags::long_names(table);
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            format!("{err}{}", crate::text::did_you_mean(name, &known))
        }
        _ => err.to_string(),
    }
}

/// The value of option `shown`. A value attached with `=` is taken as it is; a separate word
/// that is itself one of exec's flags (`--model --output-format json`) is a usage error naming
/// both, not a model named `--output-format`.
fn flag_value(
    parser: &mut lexopt::Parser,
    shown: &str,
    table: &[&Flag<ExecArgs>],
) -> Result<OsString, lexopt::Error> {
    if let Some(attached) = parser.optional_value() {
        return Ok(attached);
    }
    let value = parser.value()?;
    let word = value.to_string_lossy();
    if flags::is_flag(table, &word) {
        let flag = word.split('=').next().unwrap_or_default();
        return Err(lexopt::Error::Custom(
            format!("{shown} needs a value, but the next word is the flag {flag} (write {shown}=VALUE for a value that starts with '-')").into(),
        ));
    }
    Ok(value)
}

/// `--resume[=ID]`, or `--resume WORD`, where WORD is decided when the run starts: the session
/// it names, else a prompt word (it is also added to the words, at the index it keeps).
fn resume_value(out: &mut ExecArgs, parser: &mut lexopt::Parser) -> Result<(), lexopt::Error> {
    out.resume = Some(if let Some(value) = parser.optional_value() {
        let value = value.string()?;
        let value = value.trim();
        if value.is_empty() {
            Resume::Latest
        } else {
            Resume::Id(value.to_string())
        }
    } else {
        let Some(mut raw) = parser.try_raw_args() else {
            out.resume = Some(Resume::Latest);
            return Ok(());
        };
        let takes = raw.peek().and_then(|w| w.to_str()).is_some_and(|w| !w.starts_with('-'));
        match raw.next_if(|_| takes) {
            Some(word) => {
                let word = word.string()?;
                out.prompt_words.push(word.clone());
                Resume::Candidate { word, index: out.prompt_words.len() - 1 }
            }
            None => Resume::Latest,
        }
    });
    Ok(())
}
