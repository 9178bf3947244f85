use super::*;
use crate::testing::kit::TempDir;
use std::path::PathBuf;

/// A workspace directory (`ws/`) with a file beside it, outside the workspace.
struct Scratch {
    dir: TempDir,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = TempDir::new(name);
        std::fs::create_dir_all(dir.join("ws")).unwrap();
        dir.write("outside.txt", "outside secret\n");
        Scratch { dir }
    }

    fn ws(&self) -> PathBuf {
        self.dir.join("ws")
    }

    fn write(&self, rel: &str, content: &str) {
        self.dir.write(&format!("ws/{rel}"), content);
    }

    fn read(&self, rel: &str) -> String {
        self.dir.read(&format!("ws/{rel}"))
    }

    fn toolbox(&self, mode: PermissionMode) -> Toolbox {
        Toolbox::new(Workspace::new(&self.ws()).unwrap(), mode, vec![], vec![])
    }
}

fn run(tb: &mut Toolbox, name: &str, args: serde_json::Value) -> Outcome {
    tb.run(&ToolCall { id: "c".into(), name: name.into(), arguments: args.to_string() })
}

#[test]
fn read_file_numbers_ranges_and_caps() {
    let s = Scratch::new("read");
    s.write("a.txt", "one\ntwo\nthree\nfour\n");
    let mut tb = s.toolbox(PermissionMode::Auto);
    let out = run(&mut tb, "read_file", json!({"path": "a.txt"}));
    assert_eq!(
        out,
        Outcome::ok("File: a.txt (4 lines)\n\n1 | one\n2 | two\n3 | three\n4 | four\n")
    );
    let out = run(&mut tb, "read_file", json!({"path": "a.txt", "start_line": 2, "end_line": 3}));
    assert_eq!(out.output, "File: a.txt (lines 2-3 of 4)\n\n2 | two\n3 | three\n");
    let out = run(&mut tb, "read_file", json!({"path": "a.txt", "max_lines": 1}));
    assert_eq!(out.output, "File: a.txt (lines 1-1 of 4)\n\n1 | one\n");
    let out = run(&mut tb, "read_file", json!({"path": "a.txt", "start_line": 99}));
    assert!(
        !out.ok && out.output.contains("start_line 99") && out.output.contains("has 4 lines"),
        "{out:?}"
    );
    let out = run(&mut tb, "read_file", json!({"path": "a.txt", "start_line": 3, "end_line": 2}));
    assert_eq!(
        out,
        Outcome::error(
            "Error: Invalid arguments for read_file: end_line: 2 is before start_line 3"
        )
    );
    let out = run(&mut tb, "read_file", json!({"path": "missing.txt"}));
    assert!(!out.ok && out.output.starts_with("Error reading file missing.txt"), "{out:?}");
    s.write("long.txt", &"x\n".repeat(2500));
    let out = run(&mut tb, "read_file", json!({"path": "long.txt"}));
    assert!(
        out.output.contains("2000 | x\n... (output capped"),
        "{}",
        &out.output[out.output.len() - 200..]
    );
    assert!(!out.output.contains("2001 |"));
    let out = run(&mut tb, "read_file", json!({"path": "long.txt", "start_line": 2490}));
    assert!(out.output.contains("2500 | x") && !out.output.contains("capped"));
}

#[test]
fn read_file_refuses_binary_files() {
    let s = Scratch::new("binary");
    std::fs::write(s.ws().join("img.png"), [0x89, b'P', b'N', b'G', 0, 0, 1, 2]).unwrap();
    let out = run(&mut s.toolbox(PermissionMode::Auto), "read_file", json!({"path": "img.png"}));
    assert_eq!(out, Outcome::error("Error reading file img.png: it is a binary file (8 bytes); read_file only returns text"));
}

#[test]
fn write_file_creates_refuses_and_overwrites() {
    let s = Scratch::new("write");
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    let out = run(&mut tb, "write_file", json!({"path": "nested/dir/new.txt", "content": "héllo"}));
    assert_eq!(
        out,
        Outcome::ok("Created nested/dir/new.txt (6 bytes).").changing(["nested/dir/new.txt"])
    );
    assert_eq!(s.read("nested/dir/new.txt"), "héllo");
    s.write("empty.txt", "");
    let out = run(&mut tb, "write_file", json!({"path": "empty.txt", "content": "x"}));
    assert_eq!(
        out,
        Outcome::error("Error: empty.txt already exists. Pass overwrite: true to replace it.")
    );
    assert_eq!(s.read("empty.txt"), "");
    let out =
        run(&mut tb, "write_file", json!({"path": "empty.txt", "content": "x", "overwrite": true}));
    assert_eq!(out, Outcome::ok("Overwrote empty.txt (1 bytes).").changing(["empty.txt"]));
}

#[test]
fn edit_file_replaces_literally() {
    let s = Scratch::new("edit");
    s.write("f.rs", "let a = 1;\nlet a = 1;\nlet b = 2;\n");
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    let out = run(
        &mut tb,
        "edit_file",
        json!({"path": "f.rs", "old_string": "let b = 2;", "new_string": "let b = \"$&\";"}),
    );
    assert_eq!(
        out,
        Outcome::ok("Successfully edited f.rs (replaced 1 occurrence).").changing(["f.rs"])
    );
    assert_eq!(s.read("f.rs"), "let a = 1;\nlet a = 1;\nlet b = \"$&\";\n");
    let out = run(
        &mut tb,
        "edit_file",
        json!({"path": "f.rs", "old_string": "let a = 1;", "new_string": "x"}),
    );
    assert_eq!(out.output, "Error: old_string matches 2 locations in f.rs. Either make old_string more specific, or pass replace_all: true to replace every occurrence.");
    assert!(!out.ok);
    let out = run(
        &mut tb,
        "edit_file",
        json!({"path": "f.rs", "old_string": "let a = 1;", "new_string": "let a = 0;", "replace_all": true}),
    );
    assert_eq!(out.output, "Successfully edited f.rs (replaced 2 occurrences).");
    let out =
        run(&mut tb, "edit_file", json!({"path": "f.rs", "old_string": "nope", "new_string": "x"}));
    assert!(
        !out.ok
            && out.output.starts_with("Error: Could not find the exact string to replace in f.rs.")
    );
}

#[test]
fn the_envelope_checks_arguments_filters_and_permissions() {
    let s = Scratch::new("envelope");
    let mut tb = s.toolbox(PermissionMode::Auto);
    let call = |tb: &mut Toolbox, name: &str, args: &str| {
        tb.run(&ToolCall { id: "c".into(), name: name.into(), arguments: args.into() })
    };
    let out = call(&mut tb, "read_file", "{broken");
    assert!(
        !out.ok && out.output.starts_with("Error: Failed to parse arguments for read_file:"),
        "{out:?}"
    );
    assert_eq!(call(&mut tb, "missing", "{}"), Outcome::error("Error: Unknown tool \"missing\"."));
    let out = call(&mut tb, "bash", r#"{"command":"touch ran"}"#);
    assert!(!out.ok && out.output.starts_with("Error: Permission required for bash: Shell commands can read, write, or execute programs. The tool is marked \"prompt\" and was not executed."), "{out:?}");
    assert!(!s.ws().join("ran").exists());
    let out = call(&mut tb, "read_file", r#"{"path": 5}"#);
    assert_eq!(
        out,
        Outcome::error("Error: Invalid arguments for read_file: path: expected a string")
    );
    let out = call(&mut tb, "read_file", r#"{"path": "a", "start_line": 0}"#);
    assert!(out.output.starts_with(
        "Error: Invalid arguments for read_file: start_line: expected an integer from 1"
    ));
    // Filters are enforced at execution, not only when advertising.
    let mut filtered = Toolbox::new(
        Workspace::new(&s.ws()).unwrap(),
        PermissionMode::Auto,
        vec![],
        vec!["grep".into()],
    );
    let out = call(&mut filtered, "grep", r#"{"pattern":"x"}"#);
    assert!(!out.ok && out.output.contains("not enabled for this run"), "{out:?}");
    // Empty arguments mean `{}`.
    let out = call(&mut tb, "list_directory", "");
    assert!(out.ok, "{out:?}");
}

#[test]
fn what_is_advertised_follows_mode_and_filters() {
    let s = Scratch::new("advertise");
    let names =
        |tb: &Toolbox| tb.offered().iter().map(|t| t.name().to_string()).collect::<Vec<_>>();
    assert_eq!(
        names(&s.toolbox(PermissionMode::Auto)),
        ["read_file", "update_plan", "list_directory", "grep", "glob"]
    );
    assert_eq!(names(&s.toolbox(PermissionMode::Unsafe)).len(), 9);
    let tb = Toolbox::new(
        Workspace::new(&s.ws()).unwrap(),
        PermissionMode::Unsafe,
        vec!["read_file".into(), "bash".into(), "write_file".into()],
        vec!["bash".into()],
    );
    assert_eq!(names(&tb), ["read_file", "write_file"]);
    for spec in s.toolbox(PermissionMode::Unsafe).specs() {
        assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
        assert_eq!(spec.parameters["additionalProperties"], false, "{}", spec.name);
    }
    // Only truly required fields are required.
    let grep = find("grep").unwrap();
    assert_eq!((grep.schema)()["required"], json!(["pattern"]));
    let tb = s.toolbox(PermissionMode::Auto);
    assert_eq!(tb.side_effect_of("update_plan"), SideEffect::Read);
    assert_eq!(tb.side_effect_of("bash"), SideEffect::Shell);
    assert_eq!(tb.side_effect_of("nope"), SideEffect::Unknown);
}

#[test]
fn filters_parse_and_validate() {
    assert_eq!(
        parse_filter(&["read_file, grep  glob,,".into()], "enabled").unwrap(),
        ["read_file", "grep", "glob"]
    );
    assert_eq!(parse_filter(&["grep".into(), "grep".into()], "enabled").unwrap(), ["grep"]);
    assert_eq!(
        parse_filter(&["missing_tool".into()], "enabled").unwrap_err(),
        Failure::Usage("Unknown tool: missing_tool".into())
    );
    assert_eq!(
        parse_filter(&["bad!".into()], "disabled").unwrap_err(),
        Failure::Usage("Invalid disabled tool \"bad!\".".into())
    );
    assert_eq!(
        check_overlap(&["grep".into(), "glob".into()], &["glob".into()]).unwrap_err(),
        Failure::Usage("Tool cannot be both enabled and disabled: glob".into())
    );
    assert_eq!(parse_autonomy(Some(" HIGH ")).unwrap(), Autonomy::High);
    assert!(parse_autonomy(Some("chaos"))
        .unwrap_err()
        .message()
        .starts_with("Invalid autonomy level \"chaos\""));
}

#[test]
fn nothing_outside_the_workspace_is_read_or_written() {
    let s = Scratch::new("escape");
    let outside = s.dir.join("outside.txt");
    std::os::unix::fs::symlink(&outside, s.ws().join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&s.dir.path, s.ws().join("up")).unwrap();
    let abs = outside.to_string_lossy().to_string();
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    let attempts: Vec<(&str, serde_json::Value)> = vec![
        ("read_file", json!({"path": "../outside.txt"})),
        ("read_file", json!({"path": abs})),
        ("read_file", json!({"path": "a/../../outside.txt"})),
        ("read_file", json!({"path": "link.txt"})),
        ("read_file", json!({"path": "up/outside.txt"})),
        ("write_file", json!({"path": "../x.txt", "content": "x"})),
        ("write_file", json!({"path": "up/x.txt", "content": "x"})),
        ("write_file", json!({"path": "link.txt", "content": "x", "overwrite": true})),
        (
            "edit_file",
            json!({"path": "../outside.txt", "old_string": "outside", "new_string": "x"}),
        ),
        (
            "apply_patch",
            json!({"patch": "--- a/../outside.txt\n+++ b/../outside.txt\n@@ -1 +1 @@\n-outside secret\n+x\n"}),
        ),
        ("apply_patch", json!({"patch": "--- /dev/null\n+++ b/../new.txt\n@@ -0,0 +1 @@\n+x\n"})),
        (
            "apply_patch",
            json!({"patch": "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n", "cwd": ".."}),
        ),
        ("glob", json!({"pattern": "../**"})),
        ("glob", json!({"pattern": "*", "cwd": "up"})),
        ("grep", json!({"pattern": "secret", "path": "/"})),
        ("grep", json!({"pattern": "secret", "path": ".."})),
        ("list_directory", json!({"path": ".."})),
        ("list_directory", json!({"path": "/etc"})),
        ("bash", json!({"command": "pwd", "cwd": ".."})),
    ];
    for (tool, args) in &attempts {
        let out = run(&mut tb, tool, args.clone());
        assert!(!out.ok, "{tool} {args} was allowed: {out:?}");
        assert!(!out.output.contains("outside secret"), "{tool} {args} leaked: {out:?}");
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside secret\n");
    assert!(
        !s.dir.join("x.txt").exists()
            && !s.dir.join("new.txt").exists()
            && !s.dir.join("n.txt").exists()
    );
    // Searching inside never follows the link out either.
    let out = run(&mut tb, "grep", json!({"pattern": "secret"}));
    assert_eq!(out, Outcome::ok("No matches found."));
}

#[test]
fn bash_reports_output_and_exit_code() {
    let s = Scratch::new("bash");
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    let out = run(&mut tb, "bash", json!({"command": "echo hi; echo oops >&2; exit 3"}));
    assert_eq!(
        out,
        Outcome {
            exit_code: Some(3),
            ..Outcome::error("stdout:\nhi\nstderr:\noops\nExit code: 3")
        }
    );
    let out = run(&mut tb, "bash", json!({"command": "true"}));
    assert_eq!(
        out,
        Outcome {
            exit_code: Some(0),
            ..Outcome::ok("Command completed with no output.\nExit code: 0")
        }
    );
    let out = run(&mut tb, "bash", json!({"command": "cat; pwd"}));
    assert!(
        out.ok && out.output.contains(&s.ws().canonicalize().unwrap().display().to_string()),
        "stdin is empty: {out:?}"
    );
}

#[test]
fn bash_timeout_kills_the_whole_group() {
    let s = Scratch::new("timeout");
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    let marker = s.ws().join("grandchild.pid");
    let command = format!("sh -c 'echo $$ > {}; sleep 30' & sleep 30", marker.display());
    let started = std::time::Instant::now();
    let out = run(&mut tb, "bash", json!({"command": command, "timeout_ms": 500}));
    assert!(!out.ok && out.output.starts_with("Error: Command timed out after 500 ms"), "{out:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let pid = std::fs::read_to_string(&marker).unwrap().trim().to_string();
    // The grandchild goes (or becomes a zombie being reaped) soon after SIGKILL, not at once.
    let pid: u32 = pid.parse().unwrap();
    let gone = crate::testing::kit::process_gone_within(pid, std::time::Duration::from_secs(5));
    assert!(gone, "grandchild {pid} survived");
}

#[test]
fn bash_caps_huge_output_per_stream() {
    let s = Scratch::new("huge");
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    let out = run(&mut tb, "bash", json!({"command": "head -c 52428800 /dev/zero | tr '\\0' a"}));
    assert!(out.ok);
    assert!(
        out.output.contains("[stdout truncated: 52428800 bytes written, the first 1048576 kept]"),
        "{}",
        &out.output[out.output.len() - 200..]
    );
    assert!(out.output.len() < 1_100_000);
}

#[test]
fn grep_modes_limits_and_errors() {
    let s = Scratch::new("grep");
    s.write("src/a.rs", "fn main() {}\nfn helper() {}\n// TODO later\n");
    s.write("src/b.txt", "nothing to see\nTODO: one\n");
    s.write(".hidden/c.rs", "fn hidden() {}\n");
    std::fs::write(s.ws().join("bin.dat"), b"fn \0binary").unwrap();
    let mut tb = s.toolbox(PermissionMode::Auto);
    let out = run(&mut tb, "grep", json!({"pattern": r"fn \w+\("}));
    assert_eq!(out, Outcome::ok("src/a.rs:1: fn main() {}\nsrc/a.rs:2: fn helper() {}"));
    let out = run(
        &mut tb,
        "grep",
        json!({"pattern": "todo", "-i": true, "output_mode": "files_with_matches"}),
    );
    assert_eq!(out.output, "src/a.rs\nsrc/b.txt");
    let out = run(&mut tb, "grep", json!({"pattern": "TODO", "output_mode": "count"}));
    assert_eq!(out.output, "src/a.rs:1\nsrc/b.txt:1\n2 matches in 2 files");
    let out = run(&mut tb, "grep", json!({"pattern": "fn", "glob": "*.txt"}));
    assert_eq!(out.output, "No matches found.");
    let out = run(&mut tb, "grep", json!({"pattern": "fn", "head_limit": 1, "-n": false}));
    assert_eq!(
        out.output,
        "src/a.rs: fn main() {}\n... (limited to the first 1 results; raise head_limit for more)"
    );
    let out = run(&mut tb, "grep", json!({"pattern": "(unclosed"}));
    assert_eq!(
        out,
        Outcome::error("Error: invalid regex pattern \"(unclosed\": unclosed group at position 1")
    );
}

#[test]
fn grep_is_linear_on_pathological_patterns() {
    let s = Scratch::new("pathological");
    s.write("big.txt", &"a".repeat(100_000));
    let mut tb = s.toolbox(PermissionMode::Auto);
    for pattern in ["(a*)*b", "(a|a)*c"] {
        let out = run(&mut tb, "grep", json!({"pattern": pattern}));
        assert_eq!(out.output, "No matches found.", "{pattern}");
    }
}

#[test]
fn glob_and_list_directory() {
    let s = Scratch::new("glob");
    for f in [
        "src/main.rs",
        "src/tools/a.rs",
        "src/tools/b.txt",
        "README.md",
        ".env",
        "node_modules/x.rs",
    ] {
        s.write(f, "x");
    }
    let mut tb = s.toolbox(PermissionMode::Auto);
    let out = run(&mut tb, "glob", json!({"pattern": "**/*.rs"}));
    assert_eq!(out.output, "src/main.rs\nsrc/tools/a.rs");
    let out = run(&mut tb, "glob", json!({"pattern": "*.{md,txt}", "cwd": "src/tools"}));
    assert_eq!(out.output, "b.txt");
    let out = run(&mut tb, "glob", json!({"pattern": "src/**", "limit": 2}));
    assert_eq!(out.output, "src/main.rs\nsrc/tools/a.rs\n... truncated after 2 matches");
    let out = run(&mut tb, "glob", json!({"pattern": "src/*", "include_dirs": true}));
    assert_eq!(out.output, "src/main.rs\nsrc/tools");
    assert_eq!(
        run(&mut tb, "glob", json!({"pattern": "*.py"})).output,
        "No matches found for *.py"
    );
    let out = run(&mut tb, "list_directory", json!({}));
    assert_eq!(out.output, "Contents of .:\n\n📄 .env\n📄 README.md\n📁 src/");
    let out = run(&mut tb, "list_directory", json!({"path": "src", "recursive": true}));
    assert_eq!(out.output, "Contents of src:\n\n📄 main.rs\n📁 tools/\n  📄 a.rs\n  📄 b.txt");
    std::fs::create_dir_all(s.ws().join("empty")).unwrap();
    assert_eq!(
        run(&mut tb, "list_directory", json!({"path": "empty"})).output,
        "Directory is empty: empty"
    );
}

#[test]
fn update_plan_renders_marks() {
    let s = Scratch::new("plan");
    let mut tb = s.toolbox(PermissionMode::Auto);
    let out = run(
        &mut tb,
        "update_plan",
        json!({"plan": [
            {"id": "1", "content": "Read", "status": "completed"},
            {"id": "2", "content": "Fix", "status": "in_progress", "notes": "careful"},
            {"id": "3", "content": "Test", "status": "pending"},
        ]}),
    );
    assert_eq!(out.output, "Current Plan:\n1. ✓ [completed] Read\n2. ◉ [in_progress] Fix\n     Notes: careful\n3. ○ [pending] Test");
    let out = run(
        &mut tb,
        "update_plan",
        json!({"plan": [{"id": "1", "content": "x", "status": "done"}]}),
    );
    assert_eq!(out.output, "Error: Invalid arguments for update_plan: plan[0].status: expected pending, in_progress, completed or failed");
    assert_eq!(run(&mut tb, "update_plan", json!({"plan": []})).output, "Plan is currently empty.");
}

#[test]
fn apply_patch_is_all_or_nothing() {
    let s = Scratch::new("patch");
    s.write("a.txt", "one\ntwo\nthree\n");
    s.write("b.txt", "alpha\nbeta\n");
    s.write("gone.txt", "bye\n");
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    let failing = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n alpha\n-gamma\n+GAMMA\n";
    let out = run(&mut tb, "apply_patch", json!({"patch": failing}));
    assert!(!out.ok, "{out:?}");
    assert!(out.output.contains("hunk 1 of 1 (@@ -1,2 +1,2 @@) does not apply to b.txt: line 2 should be \"gamma\" but is \"beta\""), "{}", out.output);
    assert_eq!(s.read("a.txt"), "one\ntwo\nthree\n", "nothing was written");
    let good = "--- a/a.txt\n+++ b/a.txt\n@@ -2,2 +2,2 @@\n-two\n+TWO\n three\n--- /dev/null\n+++ b/new/c.txt\n@@ -0,0 +1,2 @@\n+created\n+file\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n";
    let out = run(&mut tb, "apply_patch", json!({"patch": good}));
    assert_eq!(
        out,
        Outcome::ok("Patch applied successfully.\nM a.txt\nA new/c.txt\nD gone.txt").changing([
            "a.txt",
            "new/c.txt",
            "gone.txt"
        ])
    );
    assert_eq!(s.read("a.txt"), "one\nTWO\nthree\n");
    assert_eq!(s.read("new/c.txt"), "created\nfile\n");
    assert!(!s.ws().join("gone.txt").exists());
    // Hunks whose line numbers are off still apply where their context matches.
    let shifted = "--- a/a.txt\n+++ b/a.txt\n@@ -10,1 +10,1 @@\n-three\n+3\n";
    assert!(run(&mut tb, "apply_patch", json!({"patch": shifted})).ok);
    assert_eq!(s.read("a.txt"), "one\nTWO\n3\n");
    let out = run(
        &mut tb,
        "apply_patch",
        json!({"patch": "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n"}),
    );
    assert_eq!(out, Outcome::error("Error applying patch: cannot create a.txt: it already exists"));
    let out = run(
        &mut tb,
        "apply_patch",
        json!({"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n", "cwd": "."}),
    );
    assert!(out.ok);
}

#[test]
fn every_tool_has_complete_metadata() {
    assert_eq!(TOOLS.len(), 9);
    for tool in TOOLS {
        assert!(!tool.reason.is_empty() && tool.reason.ends_with('.'), "{}", tool.name);
        assert!(!tool.description.is_empty(), "{}", tool.name);
        assert!(matches!(tool.side_effect.name(), "read" | "write" | "shell"));
        assert!(matches!(tool.permission.name(), "allow" | "prompt"));
        let schema = (tool.schema)();
        assert_eq!(schema["type"], "object", "{}", tool.name);
        assert!(schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| schema["properties"].get(r.as_str().unwrap()).is_some()));
    }
}

#[test]
fn apply_patch_refuses_a_cwd_outside_the_workspace() {
    let s = Scratch::new("patch-cwd");
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    let out = run(
        &mut tb,
        "apply_patch",
        json!({"patch": "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n", "cwd": ".."}),
    );
    let root = s.ws().canonicalize().unwrap();
    assert_eq!(
        out,
        Outcome::error(format!(
            "Error applying patch: cwd must stay inside the workspace ({})",
            root.display()
        ))
    );
    s.write("sub/keep.txt", "");
    let out = run(
        &mut tb,
        "apply_patch",
        json!({"patch": "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n", "cwd": "sub"}),
    );
    assert_eq!(out, Outcome::ok("Patch applied successfully.\nA n.txt").changing(["sub/n.txt"]));
    assert_eq!(s.read("sub/n.txt"), "x\n");
}

/// Runs a call on another thread and fails the test if it does not end within 10 s (a call
/// that blocks forever would otherwise hang the suite).
fn run_bounded(tb: Toolbox, name: &'static str, args: serde_json::Value) -> (Toolbox, Outcome) {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tb = tb;
        let out = run(&mut tb, name, args);
        let _ = done.send((tb, out));
    });
    finished
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{name} did not return within 10 s"))
}

#[test]
fn writes_stay_inside_while_a_directory_is_swapped_for_a_link() {
    let s = Scratch::new("race");
    let outside = s.dir.join("target");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("victim.txt"), "original\n").unwrap();
    let ws = s.ws();
    std::fs::create_dir_all(ws.join("real")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Another process (a background job the model started) swaps `d` between a directory and
    // a link to the outside directory, as fast as it can, for a bounded number of rounds.
    let swapper = {
        let (ws, stop) = (ws.clone(), stop.clone());
        std::thread::spawn(move || {
            let d = ws.join("d");
            let mut rounds = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && rounds < 1_000_000 {
                let _ = std::fs::rename(ws.join("real"), &d);
                let _ = std::fs::rename(&d, ws.join("real"));
                let _ = std::fs::rename(ws.join("link"), &d);
                let _ = std::fs::rename(&d, ws.join("link"));
                // A directory the tools created while `d` was missing is taken away again.
                if std::fs::symlink_metadata(&d).is_ok_and(|m| m.is_dir()) {
                    let _ = std::fs::remove_dir_all(&d);
                }
                rounds += 1;
            }
            rounds
        })
    };
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    for i in 0..300 {
        let victim = "d/victim.txt";
        run(&mut tb, "write_file", json!({"path": format!("d/new{i}.txt"), "content": "x"}));
        run(
            &mut tb,
            "write_file",
            json!({"path": victim, "content": "owned\n", "overwrite": true}),
        );
        run(
            &mut tb,
            "edit_file",
            json!({"path": victim, "old_string": "original", "new_string": "changed"}),
        );
        let patch = format!("--- /dev/null\n+++ b/d/p{i}.txt\n@@ -0,0 +1 @@\n+x\n");
        run(&mut tb, "apply_patch", json!({"patch": patch}));
        let patch = "--- a/d/victim.txt\n+++ b/d/victim.txt\n@@ -1 +1 @@\n-original\n+patched\n";
        run(&mut tb, "apply_patch", json!({"patch": patch}));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let rounds = swapper.join().unwrap();
    assert!(rounds > 0);
    let names: Vec<String> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["victim.txt"], "files were created outside the workspace");
    assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).unwrap(), "original\n");
}

/// Makes a FIFO with mkfifo(1) (std has no call for it).
fn mkfifo(path: &std::path::Path) {
    let status = crate::sys::process::serialized(|| {
        std::process::Command::new("mkfifo").arg(path).status().expect("run mkfifo")
    });
    assert!(status.success(), "mkfifo {}", path.display());
}

#[test]
fn fifos_and_sockets_are_refused_and_skipped_without_blocking() {
    let s = Scratch::new("fifo");
    mkfifo(&s.ws().join("pipe"));
    let _socket = std::os::unix::net::UnixListener::bind(s.ws().join("sock")).unwrap();
    s.write("a.txt", "needle\n");
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    let calls: Vec<(&'static str, serde_json::Value)> = vec![
        ("read_file", json!({"path": "pipe"})),
        ("read_file", json!({"path": "sock"})),
        ("edit_file", json!({"path": "pipe", "old_string": "a", "new_string": "b"})),
        ("write_file", json!({"path": "pipe", "content": "x", "overwrite": true})),
        ("apply_patch", json!({"patch": "--- a/pipe\n+++ b/pipe\n@@ -1 +1 @@\n-a\n+b\n"})),
        ("grep", json!({"pattern": "needle", "path": "pipe"})),
    ];
    for (name, args) in calls {
        let (back, out) = run_bounded(tb, name, args.clone());
        tb = back;
        assert!(!out.ok, "{name} {args}: {out:?}");
        assert!(out.output.contains("not a regular file"), "{name} {args}: {out:?}");
    }
    // Walks skip them and still find the rest.
    let (back, out) = run_bounded(tb, "grep", json!({"pattern": "needle"}));
    assert_eq!(out, Outcome::ok("a.txt:1: needle"));
    let (back, out) = run_bounded(back, "list_directory", json!({}));
    assert_eq!(out.output, "Contents of .:\n\n📄 a.txt");
    let (_, out) = run_bounded(back, "glob", json!({"pattern": "*"}));
    assert_eq!(out.output, "a.txt");
}

#[test]
fn apply_patch_checks_target_parents_before_changing_anything() {
    let s = Scratch::new("patch-parent");
    s.write("a.txt", "one\n");
    s.write("gone.txt", "bye\n");
    s.write("f", "a file, not a directory\n");
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n--- /dev/null\n+++ b/f/new.txt\n@@ -0,0 +1 @@\n+x\n";
    let out = run(&mut tb, "apply_patch", json!({"patch": patch}));
    assert!(!out.ok && out.output.contains("f is not a directory"), "{out:?}");
    assert_eq!(s.read("a.txt"), "one\n");
    assert_eq!(s.read("gone.txt"), "bye\n");
    assert_eq!(s.read("f"), "a file, not a directory\n");
}

#[test]
fn apply_patch_undoes_everything_when_a_write_fails_midway() {
    let s = Scratch::new("patch-undo");
    s.write("a.txt", "one\n");
    s.write("gone.txt", "bye\n");
    s.write("sub/b.txt", "two\n");
    let mut tb = s.toolbox(PermissionMode::Unsafe);
    // The last file cannot be created: its name is too long for the filesystem, which only
    // shows when it is written (below a directory that the patch creates), after the others
    // were staged. (A read-only directory would not do: the tests may run as root.)
    let long = "n".repeat(300);
    let patch = format!("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n--- /dev/null\n+++ b/new/dir/x.txt\n@@ -0,0 +1 @@\n+x\n--- /dev/null\n+++ b/new/{long}.txt\n@@ -0,0 +1 @@\n+x\n");
    let out = run(&mut tb, "apply_patch", json!({"patch": patch}));
    assert!(!out.ok && out.output.contains("nothing was changed"), "{out:?}");
    assert_eq!(s.read("a.txt"), "one\n");
    assert_eq!(s.read("gone.txt"), "bye\n");
    assert!(!s.ws().join("new").exists(), "created directories are removed again");
    let mut names: Vec<String> = std::fs::read_dir(s.ws())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.txt", "gone.txt", "sub"], "no temporary file is left");
}

#[test]
fn walks_say_what_their_depth_limit_left_out() {
    let s = Scratch::new("deep");
    let deep: String = (0..130).map(|_| "d/").collect();
    s.write(&format!("{deep}needle.txt"), "needle\n");
    s.write("top.txt", "needle\n");
    let mut tb = s.toolbox(PermissionMode::Auto);
    let note = "... (directories more than 128 levels deep were not searched)";
    let out =
        run(&mut tb, "grep", json!({"pattern": "needle", "output_mode": "files_with_matches"}));
    assert_eq!(out.output, format!("top.txt\n{note}"));
    let out = run(&mut tb, "glob", json!({"pattern": "**/needle.txt"}));
    assert_eq!(out.output, format!("No matches found for **/needle.txt\n{note}"));
    // Reached directly, the deep file is read like any other.
    let out = run(&mut tb, "read_file", json!({"path": format!("{deep}needle.txt")}));
    assert!(out.ok, "{out:?}");
}
