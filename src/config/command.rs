//! `ZERO_PROVIDER_COMMAND`: a command that prints the provider settings as one JSON object.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::error::Failure;

use super::*;

/// How long `ZERO_PROVIDER_COMMAND` may take, whatever it leaves running.
const PROVIDER_COMMAND_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs `ZERO_PROVIDER_COMMAND`: `/bin/sh -c`, 5 s, one JSON object on stdout.
pub(super) fn provider_command(command: &str) -> Result<Source, Failure> {
    let fail = |m: String| Failure::Provider(m);
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let spec = crate::sys::process::Spec {
        command,
        cwd: &cwd,
        timeout: PROVIDER_COMMAND_TIMEOUT,
        env_remove: &[],
        stdout_cap: 1024 * 1024,
        stderr_cap: 64 * 1024,
        // The user's own command, like an MCP server: not the model's, so not confined.
        sandbox: None,
        tmpdir: None,
    };
    let done = crate::sys::process::run_shell(&spec)
        .map_err(|err| fail(format!("ZERO_PROVIDER_COMMAND failed: cannot run /bin/sh: {err}")))?;
    if done.timed_out {
        return Err(fail("ZERO_PROVIDER_COMMAND timed out after 5 seconds".to_string()));
    }
    let (stdout, stderr) = (done.stdout.kept, done.stderr.kept);
    let Some(status) = done.status else {
        return Err(fail("ZERO_PROVIDER_COMMAND failed: its exit status is unknown".to_string()));
    };
    if !status.success() {
        let detail = crate::text::summarize(&String::from_utf8_lossy(&stderr));
        let code = status.code().map_or("a signal".to_string(), |c| format!("exit code {c}"));
        let detail = if detail.is_empty() { String::new() } else { format!(": {detail}") };
        return Err(fail(format!("ZERO_PROVIDER_COMMAND failed with {code} ({command}){detail}")));
    }
    let invalid = |m: String| fail(format!("ZERO_PROVIDER_COMMAND returned invalid JSON: {m}"));
    let text = String::from_utf8(stdout).map_err(|_| invalid("output is not UTF-8".to_string()))?;
    let value: Value = serde_json::from_str(text.strip_suffix('\n').unwrap_or(&text))
        .map_err(|err| invalid(err.to_string()))?;
    let map = value.as_object().ok_or_else(|| invalid("expected a JSON object".to_string()))?;
    let field = |name: &str| -> Result<Option<String>, Failure> {
        match map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(_) => Err(invalid(format!("{name} must be a string"))),
        }
    };
    let kind = match field("provider")?.or(field("provider_kind")?) {
        None => None,
        Some(v) => Some(
            ProviderKind::parse(&v)
                .filter(|k| *k != ProviderKind::Scripted)
                .ok_or_else(|| fail(unknown_kind(&v)))?,
        ),
    };
    let model = field("model")?.or(field("model_id")?).ok_or_else(|| {
        fail("ZERO_PROVIDER_COMMAND output must include a model or model_id field".to_string())
    })?;
    Ok(Source {
        origin: Origin::Command,
        kind,
        base_url: field("base_url")?,
        api_key: field("api_key")?,
        model: Some(model),
        max_output_tokens: None,
        openai_api: None,
        warnings: Vec::new(),
    })
}
