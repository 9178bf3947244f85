//! `zero acp` driven by the official SDKs, as an editor built on them drives it: the
//! TypeScript SDK (`@agentclientprotocol/sdk`, from npm) and the Python SDK
//! (`agent-client-protocol`, from PyPI), each through initialize, authenticate, session/new,
//! prompts with tool calls, a permission request allowed and one rejected, a diff, a
//! cancellation during a permission request, set_mode, session/list, session/load and
//! set_config_option; with zero on the scripted provider and on the loopback mock. Every
//! message zero wrote is then checked against the protocol's JSON Schema, as the TypeScript
//! SDK ships it. `.ci/run` installs both SDKs and names them in `ZERO_ACP_TS_SDK` (the
//! package's directory) and `ZERO_ACP_PYTHON` (a Python with the SDK and `jsonschema`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::mock::{openai, Mock, Reply};
use crate::util::{skip, Skip, TestDir, ZERO};

/// The clients and the schema checker, beside this file.
fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/acp").join(name)
}

/// The installed SDKs, or `None` (and the skip said).
fn sdks(test: &str) -> Option<(PathBuf, PathBuf)> {
    let ts = std::env::var_os("ZERO_ACP_TS_SDK").map(PathBuf::from);
    let python = std::env::var_os("ZERO_ACP_PYTHON").map(PathBuf::from);
    match (ts, python) {
        (Some(ts), Some(python)) if ts.join("schema/v1/schema.json").is_file() => {
            Some((ts, python))
        }
        _ => {
            skip(
                test,
                Skip::Missing,
                "ZERO_ACP_TS_SDK and ZERO_ACP_PYTHON are not set (.ci/run installs @agentclientprotocol/sdk and agent-client-protocol)",
            );
            None
        }
    }
}

/// Checks a wire log (`client <json>` and `agent <json>` lines) against the schema, when the
/// SDKs are installed.
pub fn check_wire(wire: &str) {
    let (Some(ts), Some(python)) =
        (std::env::var_os("ZERO_ACP_TS_SDK"), std::env::var_os("ZERO_ACP_PYTHON"))
    else {
        return;
    };
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let path = std::env::temp_dir().join(format!("zero-acp-wire-{}-{n}.log", std::process::id()));
    std::fs::write(&path, wire).unwrap();
    let checked = Command::new(python)
        .arg(data("check_wire.py"))
        .arg(Path::new(&ts).join("schema/v1/schema.json"))
        .arg(&path)
        .output()
        .expect("the schema check runs");
    let _ = std::fs::remove_file(&path);
    let said = String::from_utf8_lossy(&checked.stdout);
    assert!(checked.status.success(), "messages that do not match the schema:\n{said}");
}

/// What the provider plays: two writes, each followed by a word, then a command.
fn script() -> Value {
    let write = |id: &str, file: &str| json!({"toolCalls": [{"id": id, "name": "write_file", "arguments": {"path": file, "content": format!("{file}\n")}}]});
    json!({"turns": [
        write("w1", "a.txt"), {"text": "Wrote a.txt."},
        write("w2", "b.txt"), {"text": "b.txt was refused."},
        {"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 30"}}]},
        {"text": "never"}
    ]})
}

/// The same conversation from the loopback OpenAI-compatible mock.
fn mock() -> Mock {
    Mock::start(vec![
        Reply::sse(&openai::tool_turn(
            "w1",
            "write_file",
            r#"{"path":"a.txt","content":"a.txt\n"}"#,
        )),
        Reply::sse(&openai::answer(&["Wrote ", "a.txt."], 50, 5)),
        Reply::sse(&openai::tool_turn(
            "w2",
            "write_file",
            r#"{"path":"b.txt","content":"b.txt\n"}"#,
        )),
        Reply::sse(&openai::answer(&["b.txt was refused."], 60, 5)),
        Reply::sse(&openai::tool_turn("b1", "bash", r#"{"command":"sleep 30"}"#)),
        Reply::sse(&openai::answer(&["never"], 70, 1)),
    ])
}

/// Runs one SDK's client against zero with `zero`'s environment and arguments; its report,
/// after the wire it logged has been checked against the schema.
fn drive(sdk: &str, sdks: &(PathBuf, PathBuf), dir: &TestDir, zero: crate::util::Zero) -> Value {
    let (ts, python) = sdks;
    let wire = dir.path("wire.log");
    let work = dir.work();
    let mut client = if sdk == "typescript" {
        let mut node = Command::new("node");
        node.arg(data("client.mjs")).arg(ts).arg(&wire);
        node
    } else {
        let mut py = Command::new(python);
        py.arg(data("client.py")).arg(&wire);
        py
    };
    client.arg(&work).arg(ZERO).args(&zero.args[1..]);
    client.env_clear().envs(&zero.env).env("ZERO_TEST_OTHER_MODEL", "gpt-4.1-mini");
    let out = client.current_dir(&work).output().expect("the SDK client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{sdk} client failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let checked = Command::new(python)
        .arg(data("check_wire.py"))
        .arg(ts.join("schema/v1/schema.json"))
        .arg(&wire)
        .output()
        .expect("the schema check runs");
    let said = String::from_utf8_lossy(&checked.stdout);
    assert!(checked.status.success(), "{sdk}: messages that do not match the schema:\n{said}");
    let count: u64 =
        said.trim().trim_start_matches("checked ").trim_end_matches(" messages").parse().unwrap();
    assert!(count >= 30, "{sdk}: only {count} messages checked");
    report
}

/// An update as a step of a turn: its kind and status.
fn step(update: &Value) -> String {
    let status = update["status"].as_str().unwrap_or("");
    format!("{} {status}", update["sessionUpdate"].as_str().unwrap())
}

/// What an editor sees, the same for either SDK and either provider.
fn assert_the_scenario(sdk: &str, report: &Value, dir: &TestDir) {
    assert_eq!(report["exitCode"], 0, "{sdk}");
    assert_eq!(report["initialize"]["protocolVersion"], 1);
    assert_eq!(report["initialize"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(report["authenticate"], json!({}));
    let session = report["sessionId"].as_str().unwrap();
    assert_eq!(report["newSession"]["modes"]["currentModeId"], "read-only");
    let stops: Vec<&str> = report["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["stopReason"].as_str().unwrap())
        .collect();
    assert_eq!(stops, ["end_turn", "end_turn", "cancelled"], "{sdk}");
    // The text may come in several chunks (the mock streams it so): one step here.
    let steps = |n: usize| -> Vec<String> {
        let mut steps: Vec<String> = report["prompts"][n]["updates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["sessionUpdate"] != "usage_update")
            .map(step)
            .collect();
        steps.dedup();
        steps
    };
    assert_eq!(
        steps(0),
        [
            "tool_call pending",
            "tool_call_update in_progress",
            "tool_call_update completed",
            "agent_message_chunk "
        ]
    );
    assert_eq!(steps(1), ["tool_call pending", "tool_call_update failed", "agent_message_chunk "]);
    assert_eq!(steps(2), ["tool_call pending", "tool_call_update failed"]);
    // The allowed write is shown as a diff; the file is there, the refused one is not.
    let a = dir.work().join("a.txt");
    let update = |n: usize, status: &str| {
        report["prompts"][n]["updates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["status"] == status)
            .cloned()
            .unwrap()
    };
    let completed = update(0, "completed");
    let diff = &completed["content"][0];
    assert_eq!(
        (&diff["type"], &diff["path"], &diff["newText"]),
        (&json!("diff"), &json!(a), &json!("a.txt\n"))
    );
    // A new file has no old text (the Python SDK leaves the null out).
    assert!(diff["oldText"].is_null(), "{diff}");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "a.txt\n");
    assert!(!dir.work().join("b.txt").exists());
    let refused = update(1, "failed");
    assert_eq!(
        refused["content"][0]["content"]["text"],
        "Error: Permission denied for write_file: Rejected by the client."
    );
    let asked: Vec<&str> = report["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(asked, ["w1", "w2", "b1"]);
    assert_eq!(
        report["permissions"][0]["options"],
        json!(["allow_once", "allow_always", "reject_once", "reject_always"])
    );
    assert_eq!(
        report["modeUpdates"],
        json!([{"sessionUpdate": "current_mode_update", "currentModeId": "edit"}])
    );
    assert_eq!(report["list"]["sessions"][0]["sessionId"], session);
    assert_eq!(report["list"]["sessions"][0]["title"], "write a.txt");
    // Loaded again, the conversation is replayed: three prompts, three calls, two answers.
    let loaded: Vec<String> = report["loaded"].as_array().unwrap().iter().map(step).collect();
    assert_eq!(
        loaded,
        [
            "user_message_chunk ",
            "tool_call pending",
            "tool_call_update completed",
            "agent_message_chunk ",
            "user_message_chunk ",
            "tool_call pending",
            "tool_call_update failed",
            "agent_message_chunk ",
            "user_message_chunk ",
            "tool_call pending",
            "tool_call_update failed",
        ],
        "{sdk}"
    );
    // The mode chosen before the load is kept.
    assert_eq!(report["load"]["modes"]["currentModeId"], "edit");
    assert_eq!(report["setConfigOption"]["configOptions"][0]["currentValue"], "gpt-4.1-mini");
    // The session is zero's own.
    let shown = dir.zero().args(&["sessions", "show", session]).run();
    assert_eq!(shown.code, 0, "{sdk}: {}", shown.stderr);
    assert!(shown.stdout.contains("b.txt was refused."), "{}", shown.stdout);
}

fn on_both_providers(sdk: &str) {
    let test = format!("zero acp driven by the {sdk} SDK");
    let Some(sdks) = sdks(&test) else { return };
    let dir = TestDir::new(&format!("acp-{sdk}-scripted"));
    let script = dir.script(&script());
    let zero = dir.zero().args(&[
        "acp",
        "--provider",
        "scripted",
        "--script",
        script.to_str().unwrap(),
        "-m",
        "gpt-4.1",
    ]);
    let report = drive(sdk, &sdks, &dir, zero);
    assert_the_scenario(sdk, &report, &dir);
    let mock = mock();
    let dir = TestDir::new(&format!("acp-{sdk}-mock"));
    let zero = dir.zero().openai(&mock.v1(), "gpt-4.1").args(&["acp"]);
    let report = drive(sdk, &sdks, &dir, zero);
    assert_the_scenario(sdk, &report, &dir);
    let usage = report["prompts"][0]["updates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["sessionUpdate"] == "usage_update")
        .cloned();
    assert_eq!(usage.map(|u| u["size"].clone()), Some(json!(1_047_576)));
}

#[test]
fn the_typescript_sdk_drives_zero_acp() {
    on_both_providers("typescript");
}

#[test]
fn the_python_sdk_drives_zero_acp() {
    on_both_providers("python");
}
