//! The regex engine and the glob matcher against the results Python gives for the same
//! patterns and texts: tests/data/engines.jsonl, written by scripts/differential_corpus.py
//! (Python's `re` for the regexes, a reference over Python's `re` and `fnmatch` for the
//! globs). The data file is committed, so this test needs nothing but the repository.

use serde_json::Value;

use crate::search::glob::Glob;
use crate::search::regex::Regex;

const CORPUS: &str = include_str!("../../tests/data/engines.jsonl");

#[test]
fn regex_and_glob_agree_with_python_on_the_corpus() {
    let (mut regex_cases, mut glob_cases) = (0, 0);
    let mut disagreements = Vec::new();
    for (number, line) in CORPUS.lines().enumerate() {
        let entry: Value = serde_json::from_str(line).expect("the corpus is JSON lines");
        let pattern = entry["pattern"].as_str().expect("a pattern");
        let cases = entry["cases"].as_array().expect("cases");
        match entry["engine"].as_str() {
            Some("regex") => {
                let fold = entry["ignore_case"].as_bool().unwrap_or(false);
                let regex = match Regex::new(pattern, fold) {
                    Ok(regex) => regex,
                    Err(err) => {
                        disagreements
                            .push(format!("line {}: {pattern:?} refused: {err}", number + 1));
                        continue;
                    }
                };
                let vm = regex.clone().without_dfa();
                for case in cases {
                    let (text, want) = (case[0].as_str().unwrap_or(""), case[1].as_bool());
                    regex_cases += 1;
                    let got = regex.is_match(text);
                    let by_vm = vm.is_match(text);
                    // The buffer search (prefilter, then the program) must agree; a buffer
                    // with no bytes has no lines.
                    let mut in_buffer = false;
                    regex.matching_lines(text.as_bytes(), usize::MAX, |_, _| {
                        in_buffer = true;
                        false
                    });
                    if Some(got) != want || by_vm != got || (!text.is_empty() && in_buffer != got) {
                        disagreements.push(format!(
                            "line {}: {pattern:?} (ignore case {fold}) on {text:?}: zero {got} (VM {by_vm}, buffer {in_buffer})",
                            number + 1
                        ));
                    }
                }
            }
            Some("glob") => {
                let glob = match Glob::new(pattern) {
                    Ok(glob) => glob,
                    Err(err) => {
                        disagreements
                            .push(format!("line {}: {pattern:?} refused: {err}", number + 1));
                        continue;
                    }
                };
                for case in cases {
                    let (path, want) = (case[0].as_str().unwrap_or(""), case[1].as_bool());
                    glob_cases += 1;
                    if Some(glob.matches(path)) != want {
                        disagreements.push(format!(
                            "line {}: glob {pattern:?} on {path:?}: zero {}",
                            number + 1,
                            glob.matches(path)
                        ));
                    }
                }
            }
            other => panic!("line {}: unknown engine {other:?}", number + 1),
        }
    }
    assert!(
        regex_cases > 5000 && glob_cases > 5000,
        "{regex_cases} regex, {glob_cases} glob cases"
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements, the first: {:#?}",
        disagreements.len(),
        &disagreements[..disagreements.len().min(15)]
    );
}

/// A file of `n` lines drawn from a vocabulary wide enough that a hunk's context is rarely
/// found twice, without trailing blanks (where zero forgives whitespace and git does not).
fn numbered_lines(rng: &mut crate::testing::kit::Rng, n: usize) -> Vec<String> {
    (0..n).map(|_| format!("line {}", rng.below(60))).collect()
}

/// A text from lines, with or without its last newline.
fn joined(lines: &[String], final_newline: bool) -> String {
    let mut text = lines.join("\n");
    if final_newline && !lines.is_empty() {
        text.push('\n');
    }
    text
}

/// Random edits: lines replaced, removed and inserted.
fn edited(rng: &mut crate::testing::kit::Rng, lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for line in lines {
        match rng.below(8) {
            0 => {}
            1 => out.push(format!("changed {}", rng.below(1000))),
            2 => {
                out.push(format!("added {}", rng.below(1000)));
                out.push(line.clone());
            }
            _ => out.push(line.clone()),
        }
    }
    if rng.chance(4) {
        out.push(format!("appended {}", rng.below(1000)));
    }
    out
}

/// `git`, run in `dir`; `None` when it cannot start.
fn git(dir: &std::path::Path, args: &[&str]) -> Option<std::process::Output> {
    crate::sys::process::serialized(|| {
        std::process::Command::new("git").args(args).current_dir(dir).output().ok()
    })
}

/// What `git apply` makes of `target` with `patch` (`None`: it refuses).
fn git_apply(dir: &std::path::Path, target: &str, patch: &str) -> Option<String> {
    let work = dir.join("apply");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("f"), target).unwrap();
    std::fs::write(dir.join("p.diff"), patch).unwrap();
    let p = dir.join("p.diff");
    let out = crate::sys::process::serialized(|| {
        std::process::Command::new("git")
            .args(["apply", "--unidiff-zero", p.to_str().unwrap()])
            .current_dir(&work)
            .output()
    })
    .unwrap_or_else(|err| panic!("git apply: {err}"));
    out.status.success().then(|| std::fs::read_to_string(work.join("f")).unwrap())
}

/// apply_patch against `git apply`, on patches `git diff` wrote for random edits: applied to
/// the file they were made from, both give the edited file; applied to a file moved or
/// changed since, zero never applies what git refuses, and where both apply they agree.
#[test]
fn apply_patch_agrees_with_git_apply_on_generated_patches() {
    use crate::testing::kit::{skip, Rng, Skip, TempDir};
    let dir = TempDir::new("git-apply");
    if git(&dir.path, &["--version"]).is_none() {
        return skip("apply_patch against git apply", Skip::Missing, "git is not installed");
    }
    let mut rng = Rng::new(0x9a7c4);
    let (mut exact, mut moved, mut refused_by_both) = (0, 0, 0);
    let mut disagreements = Vec::new();
    for case in 0..150 {
        let n = 1 + rng.below(30);
        let old = numbered_lines(&mut rng, n);
        let new = edited(&mut rng, &old);
        let (old_nl, new_nl) = (!rng.chance(6), !rng.chance(6));
        let (before, after) = (joined(&old, old_nl), joined(&new, new_nl));
        std::fs::create_dir_all(dir.join("old")).unwrap();
        std::fs::create_dir_all(dir.join("new")).unwrap();
        std::fs::write(dir.join("old/f"), &before).unwrap();
        std::fs::write(dir.join("new/f"), &after).unwrap();
        // -U0 too: hunks without context, pure additions (`-N,0`) among them.
        let context = format!("-U{}", rng.below(4));
        let args = ["diff", "--no-index", &context, "old/f", "new/f"];
        // Serialized with the bash tool's tests: a call's cleanup reaps the orphans it finds.
        let diff = crate::sys::process::serialized(|| {
            std::process::Command::new("git").args(args).current_dir(&dir.path).output()
        })
        .unwrap_or_else(|err| panic!("git diff: {err}"));
        let patch = String::from_utf8(diff.stdout)
            .unwrap()
            .replace("a/old/f", "a/f")
            .replace("b/new/f", "b/f");
        if patch.is_empty() {
            continue;
        }
        let ours = crate::tools::patch::apply_text(&before, &patch).ok();
        let theirs = git_apply(&dir.path, &before, &patch);
        exact += 1;
        if ours.as_deref() != Some(after.as_str()) || theirs.as_deref() != Some(after.as_str()) {
            disagreements
                .push(format!("case {case} exact: zero {ours:?}, git {theirs:?}\n{patch}"));
        }
        // The file has moved on: lines added at the top, or a line changed.
        let mut target = old.clone();
        match rng.below(3) {
            0 => {
                let n = 1 + rng.below(4);
                let added = numbered_lines(&mut rng, n);
                target.splice(0..0, added);
            }
            1 => {
                let at = rng.below(target.len());
                target[at] = format!("since {}", rng.below(1000));
            }
            _ => target.push(format!("since {}", rng.below(1000))),
        }
        let target = joined(&target, old_nl);
        let ours = crate::tools::patch::apply_text(&target, &patch).ok();
        let theirs = git_apply(&dir.path, &target, &patch);
        moved += 1;
        match (&ours, &theirs) {
            (Some(a), Some(b)) if a != b => disagreements
                .push(format!("case {case} moved: zero {a:?}, git {b:?}\n{patch}\n{target:?}")),
            (Some(a), None) => disagreements.push(format!(
                "case {case} moved: zero applied {a:?}, git refused\n{patch}\n{target:?}"
            )),
            (None, None) => refused_by_both += 1,
            _ => {}
        }
    }
    assert!(exact > 100 && moved > 100, "{exact} exact, {moved} moved cases");
    assert!(refused_by_both > 0, "some moved cases conflict");
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n----\n")
    );
}
