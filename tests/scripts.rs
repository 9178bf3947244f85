//! The scripts: a tarball is installed only when its checksum matches, the installer says when
//! its directory is not on PATH, the release ships the licence, and the live-mode client runs
//! its conversation.

use std::process::Command;

use crate::util::{read, TestDir};

fn sh(dir: &TestDir, script: &str) -> std::process::Output {
    Command::new("sh").arg("-c").arg(script).current_dir(dir.path("work")).output().unwrap()
}

#[test]
fn install_verifies_the_checksum() {
    let dir = TestDir::new("install");
    let install = format!("{}/scripts/install.sh", env!("CARGO_MANIFEST_DIR"));
    dir.write("work/zero-9.9.9-test/zero", "#!/bin/sh\necho zero 9.9.9\n");
    let made = sh(&dir, "chmod +x zero-9.9.9-test/zero && tar -czf zero-9.9.9-test.tar.gz zero-9.9.9-test && sha256sum zero-9.9.9-test.tar.gz > SHA256SUMS");
    assert!(made.status.success(), "{made:?}");
    let good = sh(&dir, &format!("PREFIX=$PWD/prefix sh {install} $PWD/zero-9.9.9-test.tar.gz"));
    assert!(good.status.success(), "{good:?}");
    assert!(String::from_utf8_lossy(&good.stdout).contains("(zero 9.9.9)"));
    let prefix_bin = dir.path("work/prefix/bin");
    assert_eq!(
        String::from_utf8_lossy(&good.stderr),
        format!("install: warning: {b} is not on PATH; add it (export PATH=\"{b}:$PATH\") or run {b}/zero\n", b = prefix_bin.display())
    );
    // On PATH: no warning.
    let again = sh(&dir, &format!("PATH=$PWD/prefix/bin:$PATH PREFIX=$PWD/prefix sh {install} $PWD/zero-9.9.9-test.tar.gz"));
    assert!(again.status.success(), "{again:?}");
    assert_eq!(String::from_utf8_lossy(&again.stderr), "");
    assert_eq!(read(&dir.path("work/prefix/bin/zero")), "#!/bin/sh\necho zero 9.9.9\n");
    // One byte more, and the tarball is refused with nothing installed.
    let bad = sh(&dir, &format!("printf x >> zero-9.9.9-test.tar.gz && PREFIX=$PWD/other sh {install} $PWD/zero-9.9.9-test.tar.gz"));
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("checksum mismatch"), "{bad:?}");
    assert!(!dir.path("work/other").exists());
    let unlisted = sh(&dir, &format!("cp zero-9.9.9-test.tar.gz renamed.tar.gz && PREFIX=$PWD/other sh {install} $PWD/renamed.tar.gz"));
    assert_eq!(unlisted.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unlisted.stderr).contains("not listed in SHA256SUMS"));
}

#[test]
fn the_release_tarball_carries_the_mit_licence_cargo_toml_declares() {
    let root = env!("CARGO_MANIFEST_DIR");
    let release = read(std::path::Path::new(&format!("{root}/scripts/release.sh")));
    assert!(release.contains(r#"cp "$binary" README.md LICENSE "$stage/$name/""#));
    let licence = read(std::path::Path::new(&format!("{root}/LICENSE")));
    assert!(licence.starts_with("MIT License\n"));
    let manifest = read(std::path::Path::new(&format!("{root}/Cargo.toml")));
    assert!(manifest.contains("license = \"MIT\""));
}

#[test]
fn the_live_client_runs_two_turns_with_one_approval() {
    let root = env!("CARGO_MANIFEST_DIR");
    let run = Command::new("python3")
        .arg(format!("{root}/scripts/live_client.py"))
        .args(["--zero", env!("CARGO_BIN_EXE_zero")])
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .output();
    let Ok(run) = run else {
        crate::util::skip("live client", crate::util::Skip::Missing, "python3 is not installed");
        return;
    };
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "> Write a note that says to remember the milk.\n\
         [approval] write_file (write) -> allow\n\
         [tool] write_file ok\n\
         < I wrote notes.txt.\n\
         > What does the note say?\n\
         [tool] read_file ok\n\
         < It says: remember the milk.\n\
         [end] success, exit 0, 19 lines\n\
         notes.txt: remember the milk\n"
    );
}

/// The release directory `dist`, served as GitHub serves a release: `/<tag>/<file>`; under
/// `/tampered`, the same files with a byte added to the tarball.
pub fn serve_release(dist: &std::ffi::OsStr) -> crate::mock::Mock {
    use crate::mock::{Mock, Reply, Step};
    let tag = format!("/v{}/", env!("CARGO_PKG_VERSION"));
    let mut files = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(dist).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        files.insert(format!("{tag}{name}"), std::fs::read(&path).unwrap());
    }
    Mock::responding(Box::new(move |request| {
        let path = request.path.strip_prefix("/tampered").unwrap_or(&request.path);
        match files.get(path) {
            Some(bytes) => {
                let mut bytes = bytes.clone();
                if path != request.path && path.ends_with(".tar.gz") {
                    bytes.push(0);
                }
                Reply::Stream {
                    status: 200,
                    headers: vec![("content-type".into(), "application/octet-stream".into())],
                    steps: vec![Step::Send(bytes)],
                }
            }
            None => Reply::status(404, "text/plain", "Not Found"),
        }
    }))
}

/// The outputs a step wrote to `$GITHUB_OUTPUT` (`name<<MARK`, lines, `MARK`).
fn step_outputs(text: &str) -> std::collections::BTreeMap<String, String> {
    let mut outputs = std::collections::BTreeMap::new();
    let mut lines = text.lines();
    while let Some(head) = lines.next() {
        let (name, mark) = head.split_once("<<").unwrap();
        let value: Vec<&str> = lines.by_ref().take_while(|l| *l != mark).collect();
        outputs.insert(name.to_string(), value.join("\n"));
    }
    outputs
}

/// The action's step, run as the runner runs it, with a release served from loopback.
fn run_action(dir: &TestDir, release_url: &str, inputs: &[(&str, &str)]) -> std::process::Output {
    let root = env!("CARGO_MANIFEST_DIR");
    let runner = dir.path("runner");
    std::fs::create_dir_all(&runner).unwrap();
    let _ = std::fs::remove_file(runner.join("output"));
    let mut command = Command::new("bash");
    command
        .arg(format!("{root}/scripts/action/run.sh"))
        .current_dir(dir.path("work"))
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", dir.path("home"))
        .env("XDG_DATA_HOME", dir.path("data"))
        .env("XDG_CONFIG_HOME", dir.path("config"))
        .env("RUNNER_TEMP", &runner)
        .env("GITHUB_OUTPUT", runner.join("output"))
        .env("GITHUB_STEP_SUMMARY", runner.join("summary"))
        .env("ZERO_INPUT_VERSION", format!("v{}", env!("CARGO_PKG_VERSION")))
        .env("ZERO_INPUT_RELEASE_URL", release_url);
    for (name, value) in inputs {
        command.env(name, value);
    }
    command.output().unwrap()
}

#[test]
fn the_action_installs_the_checked_release_runs_zero_and_sets_its_outputs() {
    let Some(dist) = std::env::var_os("ZERO_RELEASE_DIR") else {
        return crate::util::skip(
            "the action against a release",
            crate::util::Skip::Missing,
            "ZERO_RELEASE_DIR is not set (.ci/run builds the release with scripts/release.sh)",
        );
    };
    let served = serve_release(&dist);
    let dir = TestDir::new("action");
    dir.write("work/README.md", "# demo\n");
    let script = dir.write(
        "script.json",
        r#"{"turns": [
            {"toolCalls": [{"name": "read_file", "arguments": {"path": "README.md"}}], "usage": {"promptTokens": 1000, "completionTokens": 10}},
            {"text": ["The README is a title."], "usage": {"promptTokens": 1100, "completionTokens": 8}}
        ]}"#,
    );
    let args = format!("--script {}", script.display());
    let inputs = [
        ("ZERO_INPUT_PROMPT", "what is in the README?"),
        ("ZERO_INPUT_PROVIDER", "scripted"),
        ("ZERO_INPUT_MODEL", "gpt-4.1"),
        ("ZERO_INPUT_ARGS", args.as_str()),
    ];
    let out = run_action(&dir, &served.url(), &inputs);
    assert!(out.status.success(), "{out:?}");
    let outputs = step_outputs(&read(&dir.path("runner/output")));
    assert_eq!(outputs["final"], "The README is a title.");
    assert_eq!(outputs["exit-code"], "0");
    assert_eq!(outputs["structured"], "");
    assert!(outputs["session-id"].starts_with("zero_"), "{outputs:?}");
    // gpt-4.1: $2 per million input tokens, $8 per million output tokens.
    assert_eq!(outputs["cost-usd"], "0.004344");
    let events = read(std::path::Path::new(&outputs["events-file"]));
    let types: Vec<String> = events
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        types,
        ["run_start", "tool_call", "usage", "tool_result", "text", "usage", "final", "run_end"]
    );
    let summary = read(&dir.path("runner/summary"));
    assert_eq!(
        summary,
        format!("### zero\n\nThe README is a title.\n\n| Tool | Result |\n| --- | --- |\n| `read_file` | ok |\n\nCost: $0.004344\nSession: `{}`\n", outputs["session-id"])
    );

    // A JSON verdict: the structured output.
    dir.write(
        "script.json",
        r#"{"turns": [{"toolCalls": [{"name": "structured_output", "arguments": {"verdict": "approve", "issues": []}}]}]}"#,
    );
    let schema = r#"{"type": "object", "required": ["verdict"], "properties": {"verdict": {"enum": ["approve", "request-changes"]}, "issues": {"type": "array"}}}"#;
    let mut with_schema = inputs.to_vec();
    with_schema.push(("ZERO_INPUT_OUTPUT_SCHEMA", schema));
    let out = run_action(&dir, &served.url(), &with_schema);
    assert!(out.status.success(), "{out:?}");
    let outputs = step_outputs(&read(&dir.path("runner/output")));
    let verdict: serde_json::Value = serde_json::from_str(&outputs["structured"]).unwrap();
    assert_eq!(verdict, serde_json::json!({"verdict": "approve", "issues": []}));

    // A failed run: the step fails with zero's exit code, and says why.
    dir.write("script.json", r#"{"turns": [{"error": "the model is down"}]}"#);
    let out = run_action(&dir, &served.url(), &inputs);
    let outputs = step_outputs(&read(&dir.path("runner/output")));
    assert_eq!(out.status.code().map(|c| c.to_string()), Some(outputs["exit-code"].clone()));
    assert_ne!(outputs["exit-code"], "0");
    assert!(read(&dir.path("runner/summary")).contains("**Failed (exit "), "{out:?}");

    // A tampered release is refused before anything runs, and so is a missing one.
    for place in ["tampered", "elsewhere"] {
        let _ = std::fs::remove_dir_all(dir.path("runner/zero-action"));
        let out = run_action(&dir, &format!("{}/{place}", served.url()), &inputs);
        assert_eq!(out.status.code(), Some(1), "{place}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("::error title=zero action::could not install"), "{out:?}");
        assert_eq!(place == "tampered", stderr.contains("checksum mismatch"), "{stderr}");
        assert!(!dir.path("runner/zero-action/bin/zero").exists());
    }
}
