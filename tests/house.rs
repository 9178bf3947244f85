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
