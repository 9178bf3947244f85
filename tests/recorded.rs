//! Schema 1 stays what it is: runs that write every schema-1 event, compared byte for byte
//! (after the ids, paths and times that change from run to run are replaced) with the output
//! recorded in tests/data/schema1-runs.txt. `ZERO_RECORD_SCHEMA1=1 cargo test --test e2e
//! recorded` writes the file again, for a change to schema 1 that is meant.

use serde_json::json;

use crate::util::TestDir;

const RECORDED: &str = include_str!("data/schema1-runs.txt");

/// The runs: a tool round trip with text, usage and a failing call; the same at a turn
/// limit; the same with the unsafe-mode warning (bash unconfined), and with the warning of
/// bash in its sandbox (which needs Landlock: on a kernel without it, that run's warning is
/// the unsafe one).
fn runs() -> String {
    let dir = TestDir::new("recorded");
    dir.write("work/notes.txt", "alpha\nbeta\n");
    let script = dir.script(&json!({"turns": [
        {"text": ["Reading ", "the notes."],
         "toolCalls": [
            {"id": "call_1", "name": "read_file", "arguments": {"path": "notes.txt"}},
            {"id": "call_2", "name": "read_file", "arguments": {"path": "missing.txt"}}
         ],
         "usage": {"promptTokens": 100, "completionTokens": 10}},
        {"text": ["They say ", "alpha and beta."], "usage": {"promptTokens": 150, "completionTokens": 5}}
    ]}));
    let mut all = String::new();
    let work = dir.work().display().to_string();
    for args in [
        vec!["exec", "-o", "stream-json", "--provider", "scripted", "--script"],
        vec!["exec", "-o", "stream-json", "--max-turns", "1", "--provider", "scripted", "--script"],
        vec![
            "exec",
            "-o",
            "stream-json",
            "--auto",
            "high",
            "--sandbox",
            "off",
            "--provider",
            "scripted",
            "--script",
        ],
        vec![
            "exec",
            "-o",
            "stream-json",
            "--auto",
            "high",
            "--sandbox-caches",
            "off",
            "--provider",
            "scripted",
            "--script",
        ],
    ] {
        let mut args: Vec<String> = args.into_iter().map(String::from).collect();
        args.push(script.display().to_string());
        args.push("Summarise notes.txt".into());
        let out = dir.zero().args(&args.iter().map(String::as_str).collect::<Vec<_>>()).run();
        all.push_str(&format!("$ zero {}\n", args[..args.len() - 2].join(" ")));
        all.push_str(&normalise(&out.stdout, &work));
        all.push_str(&format!("exit {}\n", out.code));
    }
    all
}

/// Run and session ids, and the workspace path, as placeholders; everything else (key
/// order, number forms, escapes) as zero wrote it.
fn normalise(stdout: &str, work: &str) -> String {
    let mut out = String::new();
    for line in stdout.lines() {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        let mut text = line.replace(work, "WORK");
        for (field, placeholder) in [("runId", "RUN"), ("sessionId", "SESSION")] {
            if let Some(value) = event[field].as_str() {
                text = text.replace(&format!("\"{value}\""), &format!("\"{placeholder}\""));
            }
        }
        out.push_str(&text);
        out.push('\n');
    }
    out
}

#[test]
fn schema_1_output_is_byte_for_byte_the_recorded_runs() {
    let got = runs();
    if std::env::var_os("ZERO_RECORD_SCHEMA1").is_some() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/schema1-runs.txt"), &got)
            .unwrap();
        return;
    }
    assert!(got == RECORDED, "schema 1 output changed:\n--- recorded\n{RECORDED}\n--- now\n{got}");
}
