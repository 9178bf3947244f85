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

/// Each product function's length in lines, from its `fn` line to the brace that closes it
/// at the same indent (tests and the `testing/` kit aside): `(file, line, name, lines)`.
fn function_lengths() -> Vec<(String, usize, String, usize)> {
    let mut out = Vec::new();
    for (path, text) in sources() {
        let shown = path.display().to_string();
        if shown.ends_with("tests.rs") || shown.contains("/testing/") {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        // Unit tests sit at the end of a file.
        let end = lines.iter().position(|l| *l == "#[cfg(test)]").unwrap_or(lines.len());
        let mut i = 0;
        while i < end {
            let line = lines[i];
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            let words: Vec<&str> = trimmed.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "fn");
            let is_fn = at.is_some_and(|a| {
                words[..a].iter().all(|w| {
                    matches!(*w, "pub" | "const" | "unsafe" | "extern" | "\"C\"")
                        || w.starts_with("pub(")
                })
            });
            if !is_fn || line.trim_end().ends_with(';') {
                i += 1;
                continue;
            }
            let name = words[at.unwrap() + 1].split(['(', '<']).next().unwrap_or("").to_string();
            let mut open = i;
            while open < end && !lines[open].contains('{') {
                open += 1;
            }
            if lines[open].trim_end().ends_with('}') {
                i = open + 1;
                continue;
            }
            let close = format!("{}}}", " ".repeat(indent));
            let mut k = open + 1;
            while k < end && lines[k] != close {
                k += 1;
            }
            out.push((shown.clone(), i + 1, name, k - i + 1));
            i = open + 1;
        }
    }
    out
}

/// Tables written as code: the schema-2 output definitions.
const TABLES: &[&str] = &["outputs_2"];

#[test]
fn no_product_function_is_longer_than_80_lines_and_exec_is_a_thin_front_end() {
    let lengths = function_lengths();
    assert!(lengths.len() > 500, "the walk found the functions ({})", lengths.len());
    let long: Vec<String> = lengths
        .iter()
        .filter(|(file, _, name, n)| {
            let limit = if file.ends_with("src/run/exec.rs") { 60 } else { 80 };
            *n > limit && !TABLES.contains(&name.as_str())
        })
        .map(|(file, line, name, n)| format!("{file}:{line} {name}: {n} lines"))
        .collect();
    assert!(long.is_empty(), "functions over the limit:\n{}", long.join("\n"));
    let exec =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/run/exec.rs"))
            .unwrap();
    assert!(exec.lines().count() <= 450, "run/exec.rs has {} lines", exec.lines().count());
}

#[test]
fn live_mode_drives_the_engine_and_keeps_no_copy_of_its_fields() {
    let live =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/run/live.rs"))
            .unwrap();
    for field in ["provider:", "tools:", "journal:", "limits:", "messages:", "max_turns:"] {
        assert!(!live.contains(&format!("pub {field}")), "live.rs holds a field {field}");
    }
    assert!(live.contains("engine.turn("), "live mode runs its turns through the engine");
}

#[test]
fn product_functions_return_typed_errors_not_strings() {
    let mut found = Vec::new();
    for (path, text) in sources() {
        let shown = path.display().to_string();
        if shown.ends_with("tests.rs") || shown.contains("/testing/") {
            continue;
        }
        // Unit tests sit at the end of a file.
        let product = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
        for (n, line) in product.lines().enumerate() {
            let squeezed: String = line.split_whitespace().collect();
            if squeezed.contains("Result<") && squeezed.contains(",String>") {
                found.push(format!("{shown}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "results with string errors:\n{}", found.join("\n"));
    let cargo =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    for lint in ["unwrap_used", "expect_used", "print_stdout", "print_stderr"] {
        assert!(cargo.contains(&format!("{lint} = \"deny\"")), "Cargo.toml does not deny {lint}");
    }
}
