//! Where hooks come from, and how they are checked: the user config file's top-level `hooks`
//! (what Claude Code's `settings.json` holds under its `hooks` key), then each `--hooks` value
//! (a settings object, `{"hooks": {...}}`: the JSON itself when it starts with `{`, else a file
//! beside where zero started). No file of the workspace is read: a cloned repository must not
//! start processes.
//!
//! A hooks object is `{"<Event>": [{"matcher": "<regex>", "hooks": [{"type": "command",
//! "command": "...", "timeout": 60}]}]}`. What is wrong in it is an error naming the source,
//! the event and the field; an event zero does not have, or a hook type it does not run, is a
//! warning naming it, and that entry is left out.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::search::regex::Regex;

/// A hook's deadline when it names none.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest deadline a hook may ask for.
const MAX_TIMEOUT_SECS: f64 = 3600.0;

/// The events zero runs hooks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    PostToolUseFailure,
    Stop,
    SessionEnd,
}

impl Event {
    pub const ALL: [Event; 8] = [
        Event::SessionStart,
        Event::UserPromptSubmit,
        Event::PreToolUse,
        Event::PermissionRequest,
        Event::PostToolUse,
        Event::PostToolUseFailure,
        Event::Stop,
        Event::SessionEnd,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PreToolUse => "PreToolUse",
            Event::PermissionRequest => "PermissionRequest",
            Event::PostToolUse => "PostToolUse",
            Event::PostToolUseFailure => "PostToolUseFailure",
            Event::Stop => "Stop",
            Event::SessionEnd => "SessionEnd",
        }
    }

    fn parse(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether a matcher chooses which calls this event's hooks see.
    pub fn about_a_tool(self) -> bool {
        matches!(
            self,
            Event::PreToolUse
                | Event::PermissionRequest
                | Event::PostToolUse
                | Event::PostToolUseFailure
        )
    }
}

/// Which tools a group's hooks see: all (`*`, empty or none), or those whose name, zero's or
/// Claude Code's, the pattern matches whole.
#[derive(Debug, Clone)]
pub struct Matcher {
    text: String,
    regex: Option<Regex>,
}

impl Matcher {
    fn new(text: &str) -> Result<Matcher, crate::search::regex::RegexError> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher { text: text.to_string(), regex: None });
        }
        let whole = format!("^(?:{text})$");
        let regex = Regex::new(&whole, false)?;
        Ok(Matcher { text: text.to_string(), regex: Some(regex) })
    }

    /// As written (for the stream's `hook` event).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether it matches a call of zero's tool `tool`.
    pub fn matches(&self, tool: &str) -> bool {
        match &self.regex {
            None => true,
            Some(regex) => super::names::matched_names(tool).iter().any(|n| regex.is_match(n)),
        }
    }
}

/// One command to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub command: String,
    pub timeout: Duration,
}

/// One entry of an event's list: a matcher and its commands, and where it was written.
#[derive(Debug, Clone)]
pub struct Group {
    pub event: Event,
    pub matcher: Matcher,
    pub commands: Vec<Command>,
    /// `config <path>` or `--hooks <value>`.
    pub source: String,
}

/// Every hook of a run, in order (the config file's, then each flag's), and what was left out.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    pub groups: Vec<Group>,
    pub warnings: Vec<String>,
}

impl Hooks {
    /// The commands that run at `event` for a call of `tool` (none for the other events),
    /// each once however many groups name it.
    pub fn commands(&self, event: Event, tool: Option<&str>) -> Vec<(&Group, &Command)> {
        let mut found: Vec<(&Group, &Command)> = Vec::new();
        for group in self.groups.iter().filter(|g| g.event == event) {
            if let (true, Some(tool)) = (event.about_a_tool(), tool) {
                if !group.matcher.matches(tool) {
                    continue;
                }
            }
            for command in &group.commands {
                if !found.iter().any(|(_, c)| c.command == command.command) {
                    found.push((group, command));
                }
            }
        }
        found
    }
}

/// What is wrong with a source of hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HooksError {
    /// A `--hooks` file that cannot be read.
    Unreadable { source: String, why: String },
    /// Not JSON.
    NotJson { source: String, why: String },
    /// A value of the wrong shape: where (the event and field), and what it should be.
    Invalid { source: String, at: String, why: String },
}

impl std::fmt::Display for HooksError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HooksError::Unreadable { source, why } => write!(f, "{source}: cannot be read: {why}"),
            HooksError::NotJson { source, why } => write!(f, "{source}: not JSON: {why}"),
            HooksError::Invalid { source, at, why } => write!(f, "{source}: {at} {why}"),
        }
    }
}

/// The hooks of a run: the config file's `hooks` (with the file's path), then each `--hooks`
/// value in order.
pub fn gather(
    user: Option<(&Value, &str)>,
    flags: &[String],
    started_in: &Path,
) -> Result<Hooks, HooksError> {
    let mut hooks = Hooks::default();
    if let Some((value, path)) = user {
        add(&mut hooks, value, &format!("config {path}"))?;
    }
    for flag in flags {
        let (source, text) = if flag.trim_start().starts_with('{') {
            ("--hooks".to_string(), flag.clone())
        } else {
            let path = started_in.join(flag);
            let source = format!("--hooks {}", path.display());
            let text = crate::config::read_flag_file(&path).map_err(|e| {
                HooksError::Unreadable { source: source.clone(), why: e.to_string() }
            })?;
            (source, text)
        };
        let settings: Value = serde_json::from_str(&text)
            .map_err(|e| HooksError::NotJson { source: source.clone(), why: e.to_string() })?;
        let invalid = |why: &str| HooksError::Invalid {
            source: source.clone(),
            at: "the value".to_string(),
            why: why.to_string(),
        };
        let object = settings.as_object().ok_or_else(|| invalid("must be a JSON object"))?;
        // A settings object: its `hooks` key, as Claude Code's settings.json holds it.
        let Some(value) = object.get("hooks") else {
            return Err(invalid("has no \"hooks\" key (a settings object: {\"hooks\": {...}})"));
        };
        add(&mut hooks, value, &source)?;
    }
    Ok(hooks)
}

/// Adds one source's hooks object.
fn add(hooks: &mut Hooks, value: &Value, source: &str) -> Result<(), HooksError> {
    let invalid = |at: String, why: &str| HooksError::Invalid {
        source: source.to_string(),
        at,
        why: why.to_string(),
    };
    let Some(events) = value.as_object() else {
        return Err(invalid("hooks".to_string(), "must be an object of events"));
    };
    for (name, entries) in events {
        let Some(event) = Event::parse(name) else {
            hooks.warnings.push(format!(
                "{source}: hooks.{name} is left out: zero has no such event (it has {})",
                Event::ALL.map(Event::name).join(", ")
            ));
            continue;
        };
        let Some(entries) = entries.as_array() else {
            return Err(invalid(format!("hooks.{name}"), "must be an array"));
        };
        for (i, entry) in entries.iter().enumerate() {
            let at = format!("hooks.{name}[{i}]");
            let Some(entry) = entry.as_object() else {
                return Err(invalid(at, "must be an object"));
            };
            if let Some(group) = group(event, entry, &at, source, &mut hooks.warnings)? {
                hooks.groups.push(group);
            }
        }
    }
    Ok(())
}

/// One entry: its matcher and commands; `None` when it has no command zero runs.
fn group(
    event: Event,
    entry: &Map<String, Value>,
    at: &str,
    source: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<Group>, HooksError> {
    let invalid = |field: &str, why: String| HooksError::Invalid {
        source: source.to_string(),
        at: format!("{at}.{field}"),
        why,
    };
    let matcher = match entry.get("matcher") {
        None | Some(Value::Null) => "",
        Some(Value::String(text)) => text,
        Some(_) => return Err(invalid("matcher", "must be a string".to_string())),
    };
    let matcher = Matcher::new(matcher)
        .map_err(|why| invalid("matcher", format!("is not a regex: {why}")))?;
    let Some(list) = entry.get("hooks").and_then(Value::as_array) else {
        return Err(invalid("hooks", "must be an array of hooks".to_string()));
    };
    let mut commands = Vec::new();
    for (j, hook) in list.iter().enumerate() {
        let field = |name: &str| format!("hooks[{j}].{name}");
        match hook.get("type").and_then(Value::as_str) {
            Some("command") => {}
            Some(other) => {
                warnings.push(format!(
                    "{source}: {at}.hooks[{j}] is left out: zero runs hooks of type \"command\", not \"{}\"",
                    crate::text::summarize(other)
                ));
                continue;
            }
            None => return Err(invalid(&field("type"), "must be \"command\"".to_string())),
        }
        let command = match hook.get("command").and_then(Value::as_str) {
            Some(command) if !command.trim().is_empty() => command.to_string(),
            _ => return Err(invalid(&field("command"), "must be a command line".to_string())),
        };
        let timeout = match hook.get("timeout") {
            None | Some(Value::Null) => DEFAULT_TIMEOUT,
            Some(value) => match value.as_f64().filter(|s| *s > 0.0 && *s <= MAX_TIMEOUT_SECS) {
                Some(secs) => Duration::from_secs_f64(secs),
                None => {
                    return Err(invalid(
                        &field("timeout"),
                        "must be seconds, more than 0 and at most 3600".to_string(),
                    ))
                }
            },
        };
        commands.push(Command { command, timeout });
    }
    if commands.is_empty() {
        return Ok(None);
    }
    Ok(Some(Group { event, matcher, commands, source: source.to_string() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kit::TempDir;
    use serde_json::json;

    fn from(value: Value) -> Result<Hooks, HooksError> {
        gather(Some((&value, "/cfg/config.json")), &[], Path::new("/"))
    }

    #[test]
    fn claude_codes_shape_is_read_from_the_config_and_each_flag_in_order() {
        let dir = TempDir::new("hooks-config");
        dir.write(
            "team.json",
            r#"{"hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}]}}"#,
        );
        let config = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.py", "timeout": 5}]}]});
        let inline = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "tests-pass.sh"}]}]}}"#;
        let hooks = gather(
            Some((&config, "/cfg/config.json")),
            &["team.json".to_string(), inline.to_string()],
            &dir.path,
        )
        .unwrap();
        let seen: Vec<(Event, &str, &str)> = hooks
            .groups
            .iter()
            .map(|g| (g.event, g.commands[0].command.as_str(), g.source.as_str()))
            .collect();
        assert_eq!(seen[0], (Event::PreToolUse, "guard.py", "config /cfg/config.json"));
        assert_eq!((seen[1].0, seen[1].1), (Event::PostToolUse, "fmt.sh"));
        assert!(seen[1].2.starts_with("--hooks /") && seen[1].2.ends_with("team.json"));
        assert_eq!(seen[2], (Event::Stop, "tests-pass.sh", "--hooks"));
        assert_eq!(hooks.groups[0].commands[0].timeout, Duration::from_secs(5));
        assert_eq!(hooks.groups[1].commands[0].timeout, DEFAULT_TIMEOUT);
    }

    #[test]
    fn matchers_take_zeros_names_and_claude_codes_whole() {
        let hooks = from(json!({
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]},
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "b"}]},
                {"matcher": "*", "hooks": [{"type": "command", "command": "c"}]},
                {"matcher": "mcp__db__.*", "hooks": [{"type": "command", "command": "d"}, {"type": "command", "command": "a"}]}
            ],
            "Stop": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "e"}]}]
        }))
        .unwrap();
        let run = |tool: &str| -> Vec<String> {
            hooks
                .commands(Event::PreToolUse, Some(tool))
                .iter()
                .map(|(_, c)| c.command.clone())
                .collect()
        };
        assert_eq!(run("bash"), ["a", "c"]);
        assert_eq!(run("apply_patch"), ["b", "c"]);
        assert_eq!(run("edit_file"), ["b", "c"]);
        assert_eq!(run("read_file"), ["c"]);
        // Whole names: "Edit" is not "MultiEdit"'s matcher for read_file, nor "Bash" a prefix.
        assert_eq!(run("mcp__db__query"), ["c", "d", "a"]);
        // The matcher chooses calls only: a Stop hook always runs.
        assert_eq!(hooks.commands(Event::Stop, None).len(), 1);
    }

    #[test]
    fn what_is_wrong_is_named_and_what_zero_does_not_have_is_left_out_with_a_warning() {
        let hooks = from(json!({
            "PreCompact": [{"hooks": [{"type": "command", "command": "x"}]}],
            "PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "judge"}, {"type": "command", "command": "y"}]}]
        }))
        .unwrap();
        assert_eq!(hooks.groups.len(), 1);
        assert_eq!(hooks.warnings.len(), 2);
        assert!(
            hooks.warnings[0].starts_with(
                "config /cfg/config.json: hooks.PreCompact is left out: zero has no such event"
            ),
            "{:?}",
            hooks.warnings
        );
        assert!(hooks.warnings[1].contains("hooks.PreToolUse[0].hooks[0] is left out: zero runs hooks of type \"command\", not \"prompt\""));
        let error = |value: Value| from(value).unwrap_err().to_string();
        assert_eq!(
            error(json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]})),
            "config /cfg/config.json: hooks.PreToolUse[0].hooks[0].timeout must be seconds, more than 0 and at most 3600"
        );
        assert_eq!(
            error(json!({"PreToolUse": [{"matcher": "(", "hooks": []}]}))
                .split(" is not a regex")
                .next()
                .unwrap(),
            "config /cfg/config.json: hooks.PreToolUse[0].matcher"
        );
        assert_eq!(
            error(json!({"Stop": {}})),
            "config /cfg/config.json: hooks.Stop must be an array"
        );
        assert_eq!(
            error(json!({"Stop": [{"hooks": [{"type": "command"}]}]})),
            "config /cfg/config.json: hooks.Stop[0].hooks[0].command must be a command line"
        );
        let flag =
            gather(None, &[r#"{"PreToolUse": []}"#.to_string()], Path::new("/")).unwrap_err();
        assert_eq!(
            flag.to_string(),
            "--hooks: the value has no \"hooks\" key (a settings object: {\"hooks\": {...}})"
        );
        let missing = gather(None, &["nope.json".to_string()], Path::new("/tmp")).unwrap_err();
        assert_eq!(missing.to_string(), "--hooks /tmp/nope.json: cannot be read: no such file");
    }
}
