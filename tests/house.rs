//! The shape of the source the README promises: errors at module boundaries are enums of
//! their kinds, not strings. Read from `src/` as a reader would, with no build of its own.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/`.
fn sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out.sort();
    out
}

#[test]
fn errors_at_module_boundaries_are_enums_of_their_kinds_not_strings() {
    let mut found = Vec::new();
    for (path, text) in sources() {
        for (n, line) in text.lines().enumerate() {
            // `pub struct InputError(pub String)` and its private twin.
            let newtype = line.contains("struct ")
                && line.contains("Error(")
                && (line.contains("(pub String)") || line.contains("(String)"));
            if newtype {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "string newtypes of errors:\n{}", found.join("\n"));
    // No name of a `config::ConfigError`, which does not exist.
    for file in ["src/error.rs", "src/protocol/schema.rs"] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        assert!(!text.contains("ConfigError"), "{file} names a ConfigError");
    }
}

/// The README's section that starts at `## <title>`, to the next `## `.
pub fn readme_section(title: &str) -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find(&format!("\n## {title}\n"))
        .unwrap_or_else(|| panic!("the README has no section {title}"));
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].to_string()
}

#[test]
fn the_architecture_section_names_every_folder_and_top_level_file_of_src() {
    let section = readme_section("Architecture");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let shown = if entry.path().is_dir() { format!("`{name}/`") } else { format!("`{name}`") };
        if !section.contains(&shown) {
            missing.push(shown);
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "the Architecture section does not name {missing:?}");
}

/// The README's `-o json` table: each line's type, its fields, and which are optional.
fn json_table() -> Vec<(String, Vec<(String, bool)>)> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme.find("| `-o json` line | Fields |").expect("the -o json table");
    let mut rows = Vec::new();
    for line in readme[start..].lines().skip(2) {
        let Some(row) = line.strip_prefix("| `") else { break };
        let (kind, fields) = row.split_once("` | ").unwrap();
        // Each field is the first backquoted word of a comma-separated item.
        let fields = fields
            .trim_end_matches(" |")
            .split(", ")
            .filter_map(|item| {
                let name = item.strip_prefix('`')?.split('`').next()?;
                Some((name.to_string(), item.contains("`?")))
            })
            .collect();
        rows.push((kind.to_string(), fields));
    }
    rows
}

#[test]
fn the_readme_says_exactly_what_json_output_writes() {
    let table = json_table();
    let dir = crate::util::TestDir::new("house-json");
    dir.write("work/a.txt", "a\n");
    let script = dir.script(&serde_json::json!({"turns": [
        {"text": "Looking.", "toolCalls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a.txt"}}],
         "usage": {"promptTokens": 10, "completionTokens": 2}},
        {"text": "Done."}
    ]}));
    let script = script.to_str().unwrap();
    let runs = [
        dir.zero().args(&["exec", "-o", "json", "--script", script, "-r", "high", "go"]).run(),
        dir.zero().args(&["exec", "-o", "json", "--script", "/nonexistent", "go"]).run(),
        dir.zero().args(&["exec", "-o", "json", "--list-tools"]).run(),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for out in &runs {
        for line in out.stdout.lines() {
            let event: serde_json::Value = serde_json::from_str(line).unwrap();
            let kind = event["type"].as_str().unwrap().to_string();
            let (_, fields) = table
                .iter()
                .find(|(k, _)| *k == kind)
                .unwrap_or_else(|| panic!("the README's table has no {kind} line"));
            let keys: Vec<&String> =
                event.as_object().unwrap().keys().filter(|k| *k != "type").collect();
            for key in &keys {
                assert!(fields.iter().any(|(f, _)| f == *key), "{kind}.{key} is not in the table");
            }
            for (field, optional) in fields {
                assert!(*optional || keys.contains(&field), "{kind} has no {field}: {line}");
            }
            seen.insert(kind);
        }
    }
    let listed: std::collections::BTreeSet<String> = table.into_iter().map(|(k, _)| k).collect();
    assert_eq!(seen, listed, "every line of the table was written by one of the runs");
}

/// The sources of one folder of `src/`, joined.
fn folder(name: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(name);
    sources().into_iter().filter(|(p, _)| p.starts_with(&dir)).map(|(_, t)| t).collect()
}

#[test]
fn providers_and_the_mcp_client_share_the_network_room_and_not_each_other() {
    let (provider, mcp) = (folder("provider"), folder("mcp"));
    assert!(!provider.contains("crate::mcp"), "provider/ imports mcp/");
    assert!(!mcp.contains("crate::provider"), "mcp/ imports provider/");
    assert!(provider.contains("crate::net::") && mcp.contains("crate::net::"));
}

#[test]
fn nothing_outside_output_locks_the_emitter() {
    let output = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/output");
    let mut found = Vec::new();
    for (path, text) in sources().into_iter().filter(|(p, _)| !p.starts_with(&output)) {
        for (n, line) in text.lines().enumerate() {
            let locks_it =
                ["lock(shared", "lock(out", "lock(&self.out", "lock(self.out", "output::lock"]
                    .iter()
                    .any(|pattern| line.contains(pattern));
            if locks_it {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "emitter locks outside output/:\n{}", found.join("\n"));
}
