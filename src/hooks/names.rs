//! zero's tools as hooks written for Claude Code know them. A guard that decides on
//! `tool_name == "Bash"` must fire for zero's `bash`: a guard that silently never fires is
//! worse than none. So a hook is given Claude Code's name where the tool has a twin (and
//! zero's own in `zero_tool_name`), its input carries Claude Code's key names beside zero's,
//! and a matcher matches either name.

use serde_json::Value;

/// Claude Code's name for one of zero's tools, where it has a twin.
pub fn claude_name(zero: &str) -> Option<&'static str> {
    Some(match zero {
        "bash" => "Bash",
        "read_file" => "Read",
        "write_file" => "Write",
        "edit_file" => "Edit",
        "grep" => "Grep",
        "glob" => "Glob",
        "list_directory" => "LS",
        _ => return None,
    })
}

/// The `tool_name` a hook is given: Claude Code's where there is a twin, else zero's (MCP
/// tools keep `mcp__<server>__<tool>`).
pub fn tool_name(zero: &str) -> &str {
    claude_name(zero).unwrap_or(zero)
}

/// The names a matcher may use for a tool: zero's, and Claude Code's for the same work.
/// `apply_patch` has no twin, but it edits and writes files: `Edit|Write` must match it.
pub fn matched_names(zero: &str) -> Vec<&str> {
    let claude: &[&'static str] = match zero {
        "edit_file" => &["Edit", "MultiEdit"],
        "apply_patch" => &["Edit", "MultiEdit", "Write"],
        other => match claude_name(other) {
            Some(name) => return vec![other, name],
            None => &[],
        },
    };
    std::iter::once(zero).chain(claude.iter().copied()).collect()
}

/// A call's arguments as a hook reads them: zero's keys, and Claude Code's where they differ
/// (`file_path` beside `path` for the file tools). `command`, `content`, `old_string` and
/// `new_string` are already the same.
pub fn tool_input(zero: &str, args: &Value) -> Value {
    let mut input = args.clone();
    let file_tool = matches!(zero, "read_file" | "write_file" | "edit_file");
    if let (true, Some(map)) = (file_tool, input.as_object_mut()) {
        if let Some(path) = map.get("path").cloned() {
            map.entry("file_path").or_insert(path);
        }
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_codes_names_and_keys_are_given_beside_zeros() {
        assert_eq!(tool_name("bash"), "Bash");
        assert_eq!(tool_name("list_directory"), "LS");
        assert_eq!(tool_name("apply_patch"), "apply_patch");
        assert_eq!(tool_name("mcp__db__query"), "mcp__db__query");
        assert_eq!(matched_names("write_file"), ["write_file", "Write"]);
        assert_eq!(matched_names("apply_patch"), ["apply_patch", "Edit", "MultiEdit", "Write"]);
        assert_eq!(matched_names("mcp__db__query"), ["mcp__db__query"]);
        assert_eq!(
            tool_input("edit_file", &json!({"path": "a.rs", "old_string": "x", "new_string": "y"})),
            json!({"path": "a.rs", "file_path": "a.rs", "old_string": "x", "new_string": "y"})
        );
        assert_eq!(tool_input("bash", &json!({"command": "ls"})), json!({"command": "ls"}));
    }
}
