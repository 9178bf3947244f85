//! The README as a newcomer meets it: a front page of at most 150 lines with the contents and
//! twelve common tasks, the manual's sections in the order a user meets them, each opening
//! with a paragraph, every anchor and relative link resolving, and every command of a `sh`
//! block run here, run by `.ci/run`, or marked as needing a real provider.

use std::path::Path;
use std::process::Command;

use crate::util::{read, TestDir};

fn readme() -> String {
    read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
}

/// The README's lines, each with whether it is inside a fenced block.
fn lines_outside_fences(text: &str) -> Vec<(&str, bool)> {
    let mut fenced = false;
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return (line, true);
            }
            (line, fenced)
        })
        .collect()
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces
/// to `-`; a repeated heading gets `-1`, `-2`...
fn anchors(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut counts = std::collections::HashMap::new();
    for (line, fenced) in lines_outside_fences(text) {
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else {
            continue;
        };
        if fenced || !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let count = counts.entry(slug.clone()).or_insert(0);
        seen.push(if *count == 0 { slug } else { format!("{slug}-{count}") });
        *count += 1;
    }
    seen
}

/// Every link target in the text outside fenced blocks: `](target)`.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (line, fenced) in lines_outside_fences(text) {
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            found.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_anchor_and_relative_link_of_the_readme_resolves() {
    let text = readme();
    let anchors = anchors(&text);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    let all = links(&text);
    for target in &all {
        if target.starts_with("http://") || target.starts_with("https://") {
            continue;
        }
        let (path, anchor) = target.split_once('#').unwrap_or((target.as_str(), ""));
        let resolves = match path {
            "" => anchors.iter().any(|a| a == anchor),
            path => root.join(path).exists(),
        };
        if !resolves {
            broken.push(target);
        }
    }
    assert!(all.len() > 40, "{} links", all.len());
    assert!(broken.is_empty(), "links that lead nowhere: {broken:?}");
}

/// The manual's sections, in the order a user meets them.
const SECTIONS: &[&str] = &[
    "Zero in CI",
    "CLI reference",
    "Providers",
    "Output and protocol",
    "Driving zero from an editor",
    "Tools and permissions",
    "MCP servers",
    "Sandbox",
    "Context and cost",
    "Structured answers",
    "Sessions",
    "Security",
    "Troubleshooting",
    "Performance",
    "Architecture",
    "Development",
];

#[test]
fn the_front_page_has_the_contents_and_twelve_tasks_and_the_manual_its_order() {
    let text = readme();
    let lines = lines_outside_fences(&text);
    let first_manual = lines.iter().position(|(l, f)| !f && *l == "## Zero in CI").unwrap();
    assert!(first_manual <= 150, "the front page is {first_manual} lines");
    let front = text.lines().take(first_manual).collect::<Vec<_>>().join("\n");
    for section in SECTIONS {
        let anchor = anchors(&format!("## {section}"))[0].clone();
        assert!(front.contains(&format!("[{section}](#{anchor})")), "the contents name {section}");
    }
    let tasks = front.split("## Common tasks").nth(1).unwrap();
    let rows: Vec<&str> =
        tasks.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| Task")).collect();
    assert_eq!(rows.len(), 12, "{rows:?}");
    for row in rows {
        assert!(row.contains("| `zero ") || row.contains("zero exec"), "a command: {row}");
        assert!(row.contains("](#"), "a link: {row}");
    }
    // The manual: these sections, in this order, each opening with a paragraph.
    let headings: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .filter(|(_, (l, f))| !f && l.starts_with("## "))
        .map(|(i, (l, _))| (i, &l[3..]))
        .collect();
    let manual: Vec<&str> =
        headings.iter().map(|(_, h)| *h).skip_while(|h| *h != SECTIONS[0]).collect();
    assert_eq!(manual, SECTIONS);
    for (at, heading) in headings.iter().filter(|(_, h)| SECTIONS.contains(h)) {
        let first = text.lines().skip(at + 1).find(|l| !l.trim().is_empty()).unwrap();
        let prose = first
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '`' || c == '[' || c == '*');
        assert!(prose && !first.starts_with("**A "), "{heading} opens with: {first}");
    }
}

/// The fenced `sh` blocks, each with its info string (`sh`, `sh provider`, `sh ci`...).
fn sh_blocks(text: &str) -> Vec<(String, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &mut current {
            None if trimmed.starts_with("```sh") => {
                current = Some((trimmed[3..].to_string(), Vec::new()))
            }
            Some(_) if trimmed.starts_with("```") => blocks.extend(current.take()),
            Some((_, lines)) => lines.push(line.to_string()),
            None => {}
        }
    }
    blocks
}

/// The commands of a block: its lines without comments, joined where a line ends in `\`.
fn commands(lines: &[String]) -> Vec<String> {
    let mut commands: Vec<String> = Vec::new();
    let mut open = false;
    for line in lines {
        let line = match line.find("  #") {
            Some(at) => line[..at].trim_end(),
            None => line.trim_end(),
        };
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        match (open, commands.last_mut()) {
            (true, Some(last)) => last.push_str(line),
            _ => commands.push(line.to_string()),
        }
        open = line.ends_with('\\');
    }
    commands
}

/// Runs a block's commands with bash, `zero` being the binary under test.
fn run_block(dir: &TestDir, lines: &[String], env: &[(&str, String)]) -> std::process::Output {
    let bin = dir.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("zero");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_zero"), &link).unwrap();
    }
    let script = commands(lines).join("\n").replace("cargo run -- ", "zero ");
    let mut command = Command::new("bash");
    command
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_clear()
        .env("PATH", format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()))
        .env("HOME", dir.path("home"))
        .env("XDG_DATA_HOME", dir.path("data"))
        .env("XDG_CONFIG_HOME", dir.path("home/.config"));
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{script}\n{}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn every_sh_command_of_the_readme_runs_or_is_marked() {
    let text = readme();
    let ci = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run"));
    let scripts_tests = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts.rs"));
    let dir = TestDir::new("readme-sh");
    let mut ran = 0;
    for (info, lines) in sh_blocks(&text) {
        match info.as_str() {
            // Needs a real provider (a key, a model): shown, not run.
            "sh provider" => assert!(!commands(&lines).is_empty(), "an empty block"),
            // What .ci/run runs, or a script the tests run.
            "sh ci" => {
                for command in commands(&lines) {
                    let words: Vec<&str> =
                        command.split_whitespace().filter(|w| !w.contains('=')).collect();
                    let program = words[0];
                    let in_ci = ci.lines().any(|l| words.iter().all(|w| l.contains(w)));
                    let tested = program.starts_with("scripts/")
                        && scripts_tests.contains(&format!("/{program}"));
                    assert!(in_ci || tested, "neither .ci/run nor a test runs: {command}");
                }
            }
            // The install from a release: against the release .ci/run builds, from loopback.
            "sh release" => {
                let Some(dist) = std::env::var_os("ZERO_RELEASE_DIR") else {
                    crate::util::skip(
                        "the README's install",
                        crate::util::Skip::Missing,
                        "ZERO_RELEASE_DIR is not set",
                    );
                    continue;
                };
                let served = crate::scripts::serve_release(&dist);
                let lines: Vec<String> = lines
                    .iter()
                    .map(|l| match l.starts_with("RELEASES=") {
                        true => format!("RELEASES={}", served.url()),
                        false => l.clone(),
                    })
                    .collect();
                let work = dir.path("install");
                std::fs::create_dir_all(&work).unwrap();
                let lines: Vec<String> =
                    std::iter::once(format!("cd {}", work.display())).chain(lines).collect();
                run_block(&dir, &lines, &[]);
                let installed = Command::new(dir.path("home/.local/bin/zero"))
                    .arg("--version")
                    .output()
                    .unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&installed.stdout),
                    format!("{}\n", env!("CARGO_PKG_VERSION"))
                );
                ran += 1;
            }
            "sh" => {
                let out = run_block(&dir, &lines, &[]);
                assert!(
                    !out.stdout.is_empty() || lines.iter().any(|l| l.contains('>')),
                    "{lines:?}"
                );
                ran += 1;
            }
            other => panic!("a ```{other} block: mark it sh, sh provider, sh ci or sh release"),
        }
    }
    assert!(ran >= 3, "{ran} blocks run");
    // What the blocks made is what they say.
    assert!(read(&dir.path("home/.config/zero/config.schema.json")).contains("\"maxTurns\""));
    assert!(read(&dir.path("home/.local/share/bash-completion/completions/zero"))
        .contains("complete -F _zero zero"));
}
