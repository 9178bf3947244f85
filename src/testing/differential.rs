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
