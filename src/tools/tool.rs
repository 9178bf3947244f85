//! One tool, whatever it is: zero's own (a [`ToolDef`] of the registry), or a tool an MCP
//! server offers; later the `task` and `web_fetch` tools. Each kind states once its name,
//! what the model is told (spec), its side effect, its permission rule and how it is run;
//! the toolbox lists, filters, withholds and dispatches through this enum alone.

use serde_json::Value;

use super::{Gated, Permission, PermissionMode, SideEffect, ToolDef};
use crate::conversation::ToolSpec;
use crate::mcp::Offered;

/// A tool of this run.
#[derive(Debug, Clone, Copy)]
pub enum Tool<'a> {
    Builtin(&'static ToolDef),
    Mcp(&'a Offered),
}

/// What a run's level lets run without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    pub mode: PermissionMode,
    /// `--auto medium`: the tools that edit files in the workspace run too.
    pub writes: bool,
}

impl<'a> Tool<'a> {
    pub fn name(&self) -> &'a str {
        match self {
            Tool::Builtin(def) => def.name,
            Tool::Mcp(offered) => &offered.name,
        }
    }

    pub fn description(&self) -> &'a str {
        match self {
            Tool::Builtin(def) => def.description,
            Tool::Mcp(offered) => &offered.description,
        }
    }

    /// The parameter schema, exactly as sent to the model.
    pub fn parameters(&self) -> Value {
        match self {
            Tool::Builtin(def) => (def.schema)(),
            Tool::Mcp(offered) => offered.schema.clone(),
        }
    }

    /// What the provider is sent. A server's schema is JSON Schema as written, not the
    /// providers' subset.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_string().into(),
            description: self.description().to_string().into(),
            parameters: self.parameters(),
            full_schema: matches!(self, Tool::Mcp(_)),
        }
    }

    /// An MCP tool's side effect is `read` when its server marks it read-only, `unknown`
    /// otherwise.
    pub fn side_effect(&self) -> SideEffect {
        match self {
            Tool::Builtin(def) => def.side_effect,
            Tool::Mcp(offered) if offered.read_only => SideEffect::Read,
            Tool::Mcp(_) => SideEffect::Unknown,
        }
    }

    pub fn permission(&self) -> Permission {
        match self {
            Tool::Builtin(def) => def.permission,
            Tool::Mcp(offered) if offered.read_only || offered.trusted => Permission::Allow,
            Tool::Mcp(_) => Permission::Prompt,
        }
    }

    /// Why it has its permission (`--list-tools`).
    pub fn reason(&self) -> &'a str {
        match self {
            Tool::Builtin(def) => def.reason,
            Tool::Mcp(offered) => match (offered.read_only, offered.trusted) {
                (true, _) => "MCP tool marked read-only (readOnlyHint)",
                (false, true) => "MCP tool of a server with \"trust\": true",
                (false, false) => "MCP tool not marked read-only: runs at --auto high, or with \"trust\": true for its server",
            },
        }
    }

    /// An MCP tool's server and the server's own name for it (`tool_result.meta.mcp`).
    pub fn origin(&self) -> Option<(&'a str, &'a str)> {
        match self {
            Tool::Builtin(_) => None,
            Tool::Mcp(offered) => Some((&offered.server_name, &offered.tool)),
        }
    }

    /// Whether the level runs it without asking: low reads, medium also edits files in the
    /// workspace, high (the `unsafe` mode) runs everything; an MCP tool also when it is
    /// read-only or its server is trusted.
    pub fn permitted(&self, level: Level) -> bool {
        let unsafe_mode = level.mode == PermissionMode::Unsafe;
        match self {
            Tool::Builtin(def) => {
                unsafe_mode
                    || def.permission == Permission::Allow
                    || (level.writes && def.side_effect == SideEffect::Write)
            }
            Tool::Mcp(offered) => offered.read_only || offered.trusted || unsafe_mode,
        }
    }

    /// Why the level does not let it run, when it does not (a tool's own words).
    pub fn needs(&self, level: Level) -> Option<String> {
        if self.permitted(level) {
            return None;
        }
        Some(match self {
            Tool::Builtin(def) if def.side_effect == SideEffect::Write => {
                "needs --auto medium (or --skip-permissions-unsafe)".to_string()
            }
            Tool::Builtin(_) => "needs --auto high (or --skip-permissions-unsafe)".to_string(),
            Tool::Mcp(offered) => format!(
                "needs --auto high (or \"trust\": true for server {}): it is not marked read-only",
                offered.server_name
            ),
        })
    }

    /// The level a built-in tool needs, when this run's is too low for it (for the warnings
    /// of `--enabled-tools`).
    pub fn level_needed(&self, level: Level) -> Option<&'static str> {
        match self {
            _ if self.permitted(level) => None,
            Tool::Builtin(def) if def.side_effect == SideEffect::Write => Some("--auto medium"),
            _ => Some("--auto high"),
        }
    }

    /// Why a call needs an approval this level does not give, and what the model is told
    /// when it is denied.
    pub fn gated(&self, level: Level, call_name: &str) -> Option<Gated> {
        if self.permitted(level) {
            return None;
        }
        Some(match self {
            Tool::Mcp(offered) => {
                let server = &offered.server_name;
                Gated {
                    side_effect: SideEffect::Unknown,
                    reason: format!(
                        "MCP tool {} of server {server} is not marked read-only (readOnlyHint): this autonomy level does not run it without approval.",
                        offered.tool
                    ),
                    denial: format!(
                        "Error: Permission required for {call_name}: the MCP tool is not marked read-only and was not executed. The caller can allow it with --auto high, or with \"trust\": true for MCP server {server}."
                    ),
                }
            }
            Tool::Builtin(def) => {
                let needed = self.level_needed(level).unwrap_or("--auto high");
                Gated {
                    side_effect: def.side_effect,
                    reason: format!(
                        "{} The tool is marked \"{}\": this autonomy level does not run it without approval.",
                        def.reason,
                        def.permission.name()
                    ),
                    denial: format!(
                        "Error: Permission required for {}: {} The tool is marked \"{}\" and was not executed. The caller can allow it with {needed} or --skip-permissions-unsafe.",
                        def.name,
                        def.reason,
                        def.permission.name()
                    ),
                }
            }
        })
    }

    /// When the level allows a call of a tool that needs permission outright (so the policy
    /// decides it, and says so): the policy's reason when it is not the level (a trusted
    /// server). `None` for a tool that needs no permission, or that the level withholds.
    pub fn allowed_outright(&self, level: Level) -> Option<Option<String>> {
        match self {
            Tool::Mcp(offered) if offered.read_only || !self.permitted(level) => None,
            Tool::Mcp(offered) => Some((level.mode != PermissionMode::Unsafe).then(|| {
                format!("allowed by \"trust\": true for MCP server {}", offered.server_name)
            })),
            Tool::Builtin(def) => {
                (def.permission == Permission::Prompt && self.permitted(level)).then_some(None)
            }
        }
    }
}
