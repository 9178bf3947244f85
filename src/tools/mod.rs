//! The nine tools, what the model is told about them, and the envelope every call goes
//! through: argument parsing, filters, permission, validation, execution.
//!
//! Filters and permissions are enforced when a call runs, not only when tools are advertised:
//! a model that calls a tool it was not offered gets an error result, and nothing runs.

pub mod editor;
mod files;
pub(crate) mod patch;
mod plan;
pub mod repository;
pub mod sandbox;
mod search;
mod shell;
mod tool;
pub mod workspace;

use std::ffi::OsString;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::conversation::{ToolCall, ToolSpec};
use crate::error::Failure;
pub use tool::{Level, Tool};
pub use workspace::Workspace;

pub use crate::protocol::events::{Autonomy, Permission, PermissionMode, SideEffect};

/// `--auto` levels.
pub fn parse_autonomy(value: Option<&str>) -> Result<Autonomy, Failure> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("") | Some("low") => Ok(Autonomy::Low),
        Some("medium") => Ok(Autonomy::Medium),
        Some("high") => Ok(Autonomy::High),
        Some(_) => Err(Failure::Usage(format!(
            "Invalid autonomy level \"{}\". Expected low, medium, or high.",
            value.unwrap_or_default().trim()
        ))),
    }
}

/// One tool's metadata.
#[derive(Debug)]
pub struct ToolDef {
    pub name: &'static str,
    pub side_effect: SideEffect,
    pub permission: Permission,
    pub reason: &'static str,
    pub description: &'static str,
    schema: fn() -> Value,
}

/// The registry, in registration order.
pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "read_file",
        side_effect: SideEffect::Read,
        permission: Permission::Allow,
        reason: "Reads file contents without modifying files.",
        description: "Read a text file from the workspace. Lines are numbered. Use start_line, end_line and max_lines to read part of a large file (at most 2000 lines and 256 KiB are returned unless you ask for a range).",
        schema: files::read_schema,
    },
    ToolDef {
        name: "write_file",
        side_effect: SideEffect::Write,
        permission: Permission::Prompt,
        reason: "Creates or overwrites files.",
        description: "Create a file in the workspace with the given content (parent directories are created). Refuses to replace an existing file unless overwrite is true.",
        schema: files::write_schema,
    },
    ToolDef {
        name: "edit_file",
        side_effect: SideEffect::Write,
        permission: Permission::Prompt,
        reason: "Edits files in place.",
        description: "Replace an exact string in a file. old_string must match the file byte for byte and be unique, unless replace_all is true. Read the file first.",
        schema: files::edit_schema,
    },
    ToolDef {
        name: "bash",
        side_effect: SideEffect::Shell,
        permission: Permission::Prompt,
        reason: "Shell commands can read, write, or execute programs.",
        description: "Run a shell command with /bin/sh in the workspace (stdin is empty). Returns stdout, stderr and the exit code. The command is killed, with everything it started, after timeout_ms (default 120000).",
        schema: shell::schema,
    },
    ToolDef {
        name: "update_plan",
        side_effect: SideEffect::Read,
        permission: Permission::Allow,
        reason: "Updates in-memory planning state only.",
        description: "Replace the task plan: a list of steps with id, content and status (pending, in_progress, completed, failed). Keep it current for multi-step work.",
        schema: plan::schema,
    },
    ToolDef {
        name: "list_directory",
        side_effect: SideEffect::Read,
        permission: Permission::Allow,
        reason: "Lists directory entries without modifying files.",
        description: "List a directory of the workspace, sorted, optionally recursively (max_depth 1 to 5). Hidden entries are shown; .git, node_modules and whatever .gitignore, .ignore and .git/info/exclude leave out are skipped unless include_ignored is true.",
        schema: search::list_schema,
    },
    ToolDef {
        name: "grep",
        side_effect: SideEffect::Read,
        permission: Permission::Allow,
        reason: "Searches file paths and matching lines without modifying files.",
        description: "Search file contents in the workspace with a regular expression (literals, ., [classes], \\d \\w \\s \\b, ^ $, |, groups, * + ? {m,n}). Skips hidden and binary files, node_modules, and whatever .gitignore, .ignore and .git/info/exclude leave out (include_ignored: true searches those too). output_mode: content (file:line: text), files_with_matches, or count.",
        schema: search::grep_schema,
    },
    ToolDef {
        name: "glob",
        side_effect: SideEffect::Read,
        permission: Permission::Allow,
        reason: "Finds matching paths without reading contents or modifying files.",
        description: "Find files in the workspace by glob pattern: * ? [abc] {a,b} and ** for any number of directories. Results are sorted paths relative to cwd. Hidden entries, node_modules and whatever .gitignore, .ignore and .git/info/exclude leave out are skipped unless include_ignored is true.",
        schema: search::glob_schema,
    },
    ToolDef {
        name: "apply_patch",
        side_effect: SideEffect::Write,
        permission: Permission::Prompt,
        reason: "Applies patch hunks that can create, edit, or delete files.",
        description: "Apply a unified diff (--- a/path, +++ b/path, @@ hunks; /dev/null to create or delete) to the workspace. Several files per patch. Nothing is written unless every hunk applies.",
        schema: patch::schema,
    },
];

/// Looks a tool up by name.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

/// Parses `--enabled-tools` / `--disabled-tools` values.
pub fn parse_filter(raw: &[String], which: &str) -> Result<Vec<String>, Failure> {
    let mut out: Vec<String> = Vec::new();
    for value in raw {
        for name in value.split(|c: char| c == ',' || c.is_whitespace()).filter(|n| !n.is_empty()) {
            if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                return Err(Failure::Usage(format!("Invalid {which} tool \"{name}\".")));
            }
            // MCP tools (`mcp__<server>__<tool>`, or `mcp__<server>` for all of a server's)
            // are known only once their servers have started.
            if find(name).is_none() && !name.starts_with(crate::mcp::PREFIX) {
                return Err(Failure::Usage(format!("Unknown tool: {name}")));
            }
            if !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        }
    }
    Ok(out)
}

/// Whether an MCP tool passes `--enabled-tools` / `--disabled-tools`, which name it in full
/// or all of its server's tools as `mcp__<server>`.
pub fn mcp_filtered_in(enabled: &[String], disabled: &[String], name: &str, server: &str) -> bool {
    let names = |list: &[String]| {
        list.iter()
            .any(|e| e == name || e.strip_prefix(crate::mcp::PREFIX).is_some_and(|s| s == server))
    };
    (enabled.is_empty() || names(enabled)) && !names(disabled)
}

/// Checks that no tool is both enabled and disabled.
pub fn check_overlap(enabled: &[String], disabled: &[String]) -> Result<(), Failure> {
    let both: Vec<&str> =
        enabled.iter().filter(|n| disabled.contains(n)).map(String::as_str).collect();
    if both.is_empty() {
        Ok(())
    } else {
        Err(Failure::Usage(format!(
            "Tool cannot be both enabled and disabled: {}",
            both.join(", ")
        )))
    }
}

/// How one call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub ok: bool,
    pub output: String,
    /// A command's exit code (bash).
    pub exit_code: Option<i32>,
    /// The files the call wrote, created or deleted, workspace-relative (the file tools; a
    /// command's changes are not known).
    pub changed_files: Vec<String>,
    /// The call did not run: its permission was denied or its approval cancelled.
    pub refused: Option<Refusal>,
    /// How each file changed, when the workspace shows diffs (a client asked for them).
    pub diffs: Vec<editor::FileDiff>,
    /// The client's terminal the command ran in (`zero acp --client-terminal`).
    pub terminal: Option<String>,
}

/// Why a call that needs permission did not run (`tool_result.meta.permission`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Denied,
    /// An interrupt cancelled the wait for its approval.
    Cancelled,
}

impl Refusal {
    pub fn name(self) -> &'static str {
        match self {
            Refusal::Denied => "denied",
            Refusal::Cancelled => "cancelled",
        }
    }
}

impl Outcome {
    pub fn ok(output: impl Into<String>) -> Outcome {
        Outcome {
            ok: true,
            output: output.into(),
            exit_code: None,
            changed_files: Vec::new(),
            refused: None,
            diffs: Vec::new(),
            terminal: None,
        }
    }

    pub fn error(output: impl Into<String>) -> Outcome {
        Outcome { ok: false, ..Outcome::ok(output) }
    }

    /// The same outcome, with how its files changed.
    pub fn showing(mut self, diffs: Vec<editor::FileDiff>) -> Outcome {
        self.diffs = diffs;
        self
    }

    /// The same outcome, naming the files it changed.
    pub fn changing<S: Into<String>>(mut self, files: impl IntoIterator<Item = S>) -> Outcome {
        self.changed_files = files.into_iter().map(Into::into).collect();
        self
    }
}

/// Why a call needs approval that this run's autonomy level does not give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gated {
    pub side_effect: SideEffect,
    /// Why approval is needed, for `permission_request.reason`.
    pub reason: String,
    /// What the model is told when the call is denied; it names how to allow it.
    pub denial: String,
}

/// A plan step (update_plan).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanItem {
    pub id: String,
    pub content: String,
    pub status: String,
    pub notes: Option<String>,
}

/// The tools of one run: what is offered and allowed, and their state.
pub struct Toolbox {
    workspace: Workspace,
    enabled: Vec<String>,
    disabled: Vec<String>,
    plan: Vec<PlanItem>,
    /// Environment variables the bash tool does not pass on.
    hidden_env: Vec<OsString>,
    /// What the autonomy level runs without asking.
    level: Level,
    /// A client answers for the tools that need approval, so they are offered.
    asking: bool,
    /// The run's MCP servers and the tools they offer.
    servers: crate::mcp::Mcp,
    /// Whether an interrupt stopped the current turn (live mode), for calls that wait.
    interrupted: fn() -> bool,
    /// Where `bash` runs.
    sandbox: sandbox::Sandbox,
}

/// Why a call of a tool that needs permission runs without asking: the level, or its server's
/// trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    pub side_effect: SideEffect,
    /// The policy's reason, when it is not the autonomy level (a trusted server).
    pub reason: Option<String>,
}

impl Toolbox {
    pub fn new(
        workspace: Workspace,
        mode: PermissionMode,
        enabled: Vec<String>,
        disabled: Vec<String>,
    ) -> Toolbox {
        Toolbox {
            workspace,
            enabled,
            disabled,
            plan: Vec::new(),
            hidden_env: Vec::new(),
            level: Level { mode, writes: false },
            asking: false,
            servers: crate::mcp::Mcp::default(),
            interrupted: || false,
            sandbox: sandbox::Sandbox::off(),
        }
    }

    /// The file tools go through a client's editor, and say how each file changed.
    pub fn with_editor(mut self, editor: Arc<dyn editor::Editor>) -> Toolbox {
        self.workspace = self.workspace.with_editor(Some(editor));
        self
    }

    /// What the tools may do without asking from now on (an editor's mode switch).
    pub fn set_level(&mut self, mode: PermissionMode, writes: bool) {
        self.level = Level { mode, writes };
    }

    /// Runs `bash` in this sandbox.
    pub fn sandboxed(mut self, sandbox: sandbox::Sandbox) -> Toolbox {
        self.sandbox = sandbox;
        self
    }

    pub fn sandbox(&self) -> &sandbox::Sandbox {
        &self.sandbox
    }

    /// How a call that waits learns that the turn was interrupted (it is woken through
    /// `sys::signals::interrupt_fd`).
    pub fn interrupted_by(mut self, interrupted: fn() -> bool) -> Toolbox {
        self.interrupted = interrupted;
        self
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// Lets the tools that edit files run (`--auto medium`) although the mode is `auto`.
    pub fn allowing_writes(mut self, writes: bool) -> Toolbox {
        self.level.writes = writes;
        self
    }

    /// The environment variables commands do not get (MCP stdio servers neither).
    pub fn hidden_env(&self) -> &[OsString] {
        &self.hidden_env
    }

    /// Keeps these environment variables from the bash tool's commands.
    pub fn hiding_env(mut self, names: Vec<OsString>) -> Toolbox {
        self.hidden_env = names;
        self
    }

    /// Offers the tools that need approval: a client answers for them (`--approvals stdin`).
    pub fn asking_for_approval(mut self, asking: bool) -> Toolbox {
        self.asking = asking;
        self
    }

    /// Takes the run's MCP servers; their tools pass the run's filters first, then the
    /// per-run limits. Returns the warnings for the tools left out.
    pub fn connect(&mut self, servers: crate::mcp::Mcp) -> Vec<String> {
        self.servers = servers;
        self.offer_servers_tools()
    }

    fn offer_servers_tools(&mut self) -> Vec<String> {
        let (enabled, disabled) = (self.enabled.clone(), self.disabled.clone());
        self.servers.offer(&|name, server| mcp_filtered_in(&enabled, &disabled, name, server))
    }

    /// The run's MCP servers.
    pub fn servers(&self) -> &crate::mcp::Mcp {
        &self.servers
    }

    pub fn servers_mut(&mut self) -> &mut crate::mcp::Mcp {
        &mut self.servers
    }

    /// The MCP filters (the servers' and the flags') that name nothing.
    pub fn unmatched_filters(&self) -> Vec<String> {
        let flags = [
            ("--enabled-tools", self.enabled.as_slice()),
            ("--disabled-tools", self.disabled.as_slice()),
        ];
        self.servers.unmatched_filters(&flags)
    }

    /// Before a model call: the servers' news. When a server's tool list changed or a server
    /// failed, the tools are offered again. Returns the failures, then the offer's warnings
    /// (`None`: nothing changed).
    pub fn refresh(&mut self) -> Option<(Vec<crate::mcp::Failed>, Vec<String>)> {
        let (changed, failed) =
            self.servers.refresh(&self.interrupted, crate::sys::signals::interrupt_fd());
        changed.then(|| (failed, self.offer_servers_tools()))
    }

    /// The tool a name names in this run: zero's own, or an MCP tool offered.
    pub fn find(&self, name: &str) -> Option<Tool<'_>> {
        match find(name) {
            Some(def) => Some(Tool::Builtin(def)),
            None => self.servers.find(name).map(Tool::Mcp),
        }
    }

    /// Every tool of the run, offered or not: zero's own in registration order, then the MCP
    /// tools.
    pub fn all(&self) -> Vec<Tool<'_>> {
        let builtin = TOOLS.iter().map(Tool::Builtin);
        builtin.chain(self.servers.offered().iter().map(Tool::Mcp)).collect()
    }

    /// The tools the model is offered: filters, then the level; with a client to ask
    /// (`--approvals stdin`), the tools that need approval too.
    pub fn offered(&self) -> Vec<Tool<'_>> {
        self.all().into_iter().filter(|t| self.withheld(t).is_none()).collect()
    }

    /// The offered tools as sent to the provider.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.offered().iter().map(Tool::spec).collect()
    }

    /// A call's side effect (`unknown` for a tool this run does not have).
    pub fn side_effect_of(&self, name: &str) -> SideEffect {
        self.find(name).map_or(SideEffect::Unknown, |t| t.side_effect())
    }

    /// An MCP call's server and the server's name for the tool (`tool_result.meta.mcp`).
    pub fn origin(&self, name: &str) -> Option<(&str, &str)> {
        self.find(name).and_then(|t| t.origin())
    }

    /// Passes the filters (enabled list, then disabled list); an MCP tool passed them when it
    /// was offered.
    fn filtered_in(&self, tool: &Tool<'_>) -> bool {
        let name = tool.name();
        matches!(tool, Tool::Mcp(_))
            || ((self.enabled.is_empty() || self.enabled.iter().any(|n| n == name))
                && !self.disabled.iter().any(|n| n == name))
    }

    /// Why a tool is not offered to the model in this run, or `None` when it is.
    pub fn withheld(&self, tool: &Tool<'_>) -> Option<String> {
        if let Tool::Builtin(def) = tool {
            if self.disabled.iter().any(|n| n == def.name) {
                return Some("disabled by --disabled-tools".to_string());
            }
            if !self.filtered_in(tool) {
                return Some("not in --enabled-tools".to_string());
            }
        }
        // With a client to ask, a tool the level does not allow is offered, and asked about.
        tool.needs(self.level).filter(|_| !self.asking)
    }

    /// The tools named in `--enabled-tools` that this run's autonomy level will not run, with
    /// the level each needs.
    pub fn enabled_but_withheld(&self) -> Vec<(&'static str, &'static str)> {
        TOOLS
            .iter()
            .map(Tool::Builtin)
            .filter(|t| self.enabled.iter().any(|n| n == t.name()) && self.filtered_in(t))
            .filter(|_| !self.asking)
            .filter_map(|t| Some((t.name(), t.level_needed(self.level)?)))
            .collect()
    }

    /// A call of a tool that needs permission and that this run's level allows outright (so
    /// the policy decides it): its side effect, and the policy's reason.
    pub fn allowed_by_level(&self, call: &ToolCall) -> Option<Allowed> {
        let tool = self.find(&call.name).filter(|t| self.filtered_in(t))?;
        let reason = tool.allowed_outright(self.level)?;
        Some(Allowed { side_effect: tool.side_effect(), reason })
    }

    /// Whether a call needs approval before it runs: a tool that passes the filters but that
    /// the autonomy level does not allow outright.
    pub fn gate(&self, call: &ToolCall) -> Option<Gated> {
        let tool = self.find(&call.name).filter(|t| self.filtered_in(t))?;
        tool.gated(self.level, &call.name)
    }

    /// The outcome of a call whose permission was denied.
    pub fn denied(gated: &Gated) -> Outcome {
        Outcome { refused: Some(Refusal::Denied), ..Outcome::error(gated.denial.clone()) }
    }

    /// Runs one call through the envelope.
    pub fn run(&mut self, call: &ToolCall) -> Outcome {
        self.run_checked(call, false)
    }

    /// Runs a call the client approved (its autonomy level alone would not run it).
    pub fn run_approved(&mut self, call: &ToolCall) -> Outcome {
        self.run_checked(call, true)
    }

    fn run_checked(&mut self, call: &ToolCall, approved: bool) -> Outcome {
        let name = call.name.as_str();
        let raw = if call.arguments.trim().is_empty() { "{}" } else { call.arguments.as_str() };
        let args: Value = match serde_json::from_str(raw) {
            Ok(value) => value,
            Err(err) => {
                return Outcome::error(format!(
                    "Error: Failed to parse arguments for {name}: {err}"
                ))
            }
        };
        let Some(tool) = self.find(name) else {
            if let Some(why) = self.servers.gone(name) {
                return Outcome::error(why);
            }
            return Outcome::error(format!("Error: Unknown tool \"{name}\"."));
        };
        if !self.filtered_in(&tool) {
            return Outcome::error(format!(
                "Error: {name} is not enabled for this run (--enabled-tools/--disabled-tools). The tool was not executed."
            ));
        }
        if let Some(gated) = self.gate(call).filter(|_| !approved) {
            return Toolbox::denied(&gated);
        }
        let Value::Object(map) = args else {
            return Outcome::error(format!(
                "Error: Invalid arguments for {name}: expected a JSON object"
            ));
        };
        match tool {
            Tool::Mcp(_) => self.run_mcp(name, Value::Object(map)),
            Tool::Builtin(def) => self.run_builtin(def.name, &call.id, &Args { map: &map }),
        }
    }

    /// One of zero's own tools.
    fn run_builtin(&mut self, name: &str, call_id: &str, args: &Args<'_>) -> Outcome {
        let result = match name {
            "read_file" => files::read_file(&self.workspace, args),
            "write_file" => files::write_file(&self.workspace, args),
            "edit_file" => files::edit_file(&self.workspace, args),
            "bash" => shell::bash(
                &self.workspace,
                args,
                &shell::Context {
                    call_id,
                    env_remove: &self.hidden_env,
                    sandbox: &self.sandbox,
                    interrupted: self.interrupted,
                },
            ),
            "update_plan" => plan::update_plan(&mut self.plan, args),
            "list_directory" => search::list_directory(&self.workspace, args),
            "grep" => search::grep(&self.workspace, args),
            "glob" => search::glob(&self.workspace, args),
            "apply_patch" => patch::apply_patch(&self.workspace, args),
            _ => return Outcome::error(format!("Error: Unknown tool \"{name}\".")),
        };
        match result {
            Ok(outcome) => outcome,
            Err(detail) => Outcome::error(format!("Error: Invalid arguments for {name}: {detail}")),
        }
    }

    /// An MCP tool's call: its server answers, or its deadline or an interrupt ends the wait.
    fn run_mcp(&mut self, name: &str, args: Value) -> Outcome {
        let done =
            self.servers.call(name, args, &self.interrupted, crate::sys::signals::interrupt_fd());
        Outcome { ok: !done.error, ..Outcome::ok(done.text) }
    }
}

/// Arguments that do not fit the tool's schema, naming the field (`plan[2].status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ArgError {
    Required(String),
    Empty(String),
    /// The field holds another type or value than the schema says: what it expects.
    Expected {
        field: String,
        what: String,
    },
    /// The field's value contradicts another's.
    Inconsistent {
        field: String,
        why: String,
    },
}

impl ArgError {
    pub fn expected(field: impl Into<String>, what: impl Into<String>) -> ArgError {
        ArgError::Expected { field: field.into(), what: what.into() }
    }
}

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgError::Required(field) => write!(f, "{field}: required"),
            ArgError::Empty(field) => write!(f, "{field}: must not be empty"),
            ArgError::Expected { field, what } => write!(f, "{field}: expected {what}"),
            ArgError::Inconsistent { field, why } => write!(f, "{field}: {why}"),
        }
    }
}

impl std::error::Error for ArgError {}

/// Typed access to a call's arguments, with schema errors naming the field. Unknown fields are
/// ignored, as Zero does.
pub(crate) struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl Args<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn string(&self, key: &str) -> Result<Option<&str>, ArgError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(ArgError::expected(key, "a string")),
        }
    }

    pub fn required(&self, key: &str, non_empty: bool) -> Result<&str, ArgError> {
        match self.string(key)? {
            None => Err(ArgError::Required(key.to_string())),
            Some("") if non_empty => Err(ArgError::Empty(key.to_string())),
            Some(s) => Ok(s),
        }
    }

    pub fn flag(&self, key: &str, default: bool) -> Result<bool, ArgError> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(ArgError::expected(key, "true or false")),
        }
    }

    pub fn integer(&self, key: &str, min: u64, max: u64) -> Result<Option<u64>, ArgError> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => match value.as_u64().or_else(|| {
                value.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64)
            }) {
                Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
                _ => Err(ArgError::expected(key, format!("an integer from {min} to {max}"))),
            },
        }
    }

    pub fn value(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }
}

/// An object schema: `additionalProperties: false`, only truly required fields required.
fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// Whether the start of a file looks binary: a NUL byte, or bytes that are not UTF-8.
fn looks_binary(sample: &[u8]) -> bool {
    if sample.contains(&0) {
        return true;
    }
    match std::str::from_utf8(sample) {
        Ok(_) => false,
        // A character cut by the end of the sample is fine.
        Err(err) => err.error_len().is_some(),
    }
}

#[cfg(test)]
mod tests;
