//! How a tool call looks in an editor: a title a person can read (`Read src/main.rs`,
//! `Run cargo test`), the ACP kind that picks its icon, and the file locations a client
//! follows along. Made from the call's name and arguments only, so the same call always looks
//! the same, live or replayed from a session.

use std::path::Path;

use serde_json::{json, Value};

use crate::tools::SideEffect;

/// Titles are cut to this many characters (a long command is one line in a list).
const MAX_TITLE_CHARS: usize = 80;

/// The ACP `ToolKind` of a call.
pub fn kind(name: &str, side_effect: SideEffect) -> &'static str {
    match name {
        "read_file" | "list_directory" => "read",
        "write_file" | "edit_file" | "apply_patch" => "edit",
        "grep" | "glob" => "search",
        "bash" => "execute",
        "update_plan" => "think",
        "web_fetch" => "fetch",
        _ if side_effect == SideEffect::Read => "read",
        _ => "other",
    }
}

fn text<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

/// The first line of `text`, at most [`MAX_TITLE_CHARS`] characters, with `…` when cut.
fn one_line(text: &str) -> String {
    let first = text.trim().lines().next().unwrap_or_default();
    let cut = first.chars().count() > MAX_TITLE_CHARS || text.trim().lines().nth(1).is_some();
    let mut line: String = first.chars().take(MAX_TITLE_CHARS).collect();
    if cut {
        line.push('…');
    }
    line
}

/// The title of a call: what it does, in a few words.
pub fn title(name: &str, args: &Value) -> String {
    let path = text(args, "path");
    let title = match name {
        "read_file" => format!("Read {}", path.unwrap_or("a file")),
        "write_file" => format!("Write {}", path.unwrap_or("a file")),
        "edit_file" => format!("Edit {}", path.unwrap_or("a file")),
        "apply_patch" => "Apply a patch".to_string(),
        "list_directory" => format!("List {}", path.unwrap_or(".")),
        "grep" => match text(args, "pattern") {
            Some(pattern) => format!("Search for {pattern}"),
            None => "Search".to_string(),
        },
        "glob" => match text(args, "pattern") {
            Some(pattern) => format!("Find {pattern}"),
            None => "Find files".to_string(),
        },
        "bash" => match text(args, "command") {
            Some(command) => format!("Run {command}"),
            None => "Run a command".to_string(),
        },
        "update_plan" => "Update the plan".to_string(),
        // `mcp__<server>__<tool>`: a server's name holds no `__`.
        _ => match name.strip_prefix(crate::mcp::PREFIX).and_then(|rest| rest.split_once("__")) {
            Some((server, tool)) => format!("{tool} ({server})"),
            None => name.to_string(),
        },
    };
    one_line(&title)
}

/// The files a call reads or changes, absolute (relative paths against `cwd`), with the
/// line it starts at when it names one.
pub fn locations(name: &str, args: &Value, cwd: &Path) -> Vec<Value> {
    let file_tools = ["read_file", "write_file", "edit_file", "list_directory", "grep", "glob"];
    let Some(path) = text(args, "path").filter(|_| file_tools.contains(&name)) else {
        return Vec::new();
    };
    let absolute = cwd.join(path);
    let mut location = json!({"path": absolute.to_string_lossy()});
    let line = args.get("start_line").and_then(Value::as_u64);
    if let Some(line) = line.filter(|_| name == "read_file") {
        location["line"] = json!(line.max(1));
    }
    vec![location]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_say_what_a_call_does_in_one_line() {
        assert_eq!(title("read_file", &json!({"path": "src/main.rs"})), "Read src/main.rs");
        assert_eq!(title("bash", &json!({"command": "cargo test"})), "Run cargo test");
        assert_eq!(title("bash", &json!({"command": "set -e\ncargo test"})), "Run set -e…");
        assert_eq!(title("grep", &json!({"pattern": "fn main"})), "Search for fn main");
        assert_eq!(title("edit_file", &json!({})), "Edit a file");
        assert_eq!(title("mcp__docs__search_docs", &json!({"q": "x"})), "search_docs (docs)");
        let long = "x".repeat(200);
        let cut = title("bash", &json!({ "command": long }));
        assert_eq!(cut.chars().count(), MAX_TITLE_CHARS + 1);
        assert!(cut.starts_with("Run xxx") && cut.ends_with('…'));
    }

    #[test]
    fn kinds_follow_what_the_tool_does() {
        assert_eq!(kind("read_file", SideEffect::Read), "read");
        assert_eq!(kind("apply_patch", SideEffect::Write), "edit");
        assert_eq!(kind("bash", SideEffect::Shell), "execute");
        assert_eq!(kind("glob", SideEffect::Read), "search");
        assert_eq!(kind("mcp__db__query", SideEffect::Read), "read");
        assert_eq!(kind("mcp__db__drop", SideEffect::Write), "other");
    }

    #[test]
    fn locations_are_absolute_with_the_line_a_read_starts_at() {
        let cwd = Path::new("/repo");
        assert_eq!(
            locations("read_file", &json!({"path": "src/a.rs", "start_line": 40}), cwd),
            [json!({"path": "/repo/src/a.rs", "line": 40})]
        );
        assert_eq!(
            locations("edit_file", &json!({"path": "/abs/b.rs"}), cwd),
            [json!({"path": "/abs/b.rs"})]
        );
        assert!(locations("bash", &json!({"command": "ls"}), cwd).is_empty());
    }
}
