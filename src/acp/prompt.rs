//! A `session/prompt`'s content blocks as zero's prompt, and how a turn's end is told back
//! (`stopReason`, or the error of the request).
//!
//! `text` is the prompt's text; `resource` (embedded text) is given with its URI; a
//! `resource_link` to a file in one of the session's roots is read through the workspace's
//! confinement and given like an embedded resource, any other link is named (its `name` and
//! `uri`); `image` is attached as `--image` attaches one. Anything else is refused.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use crate::error::Failure;
use crate::protocol::images;
use crate::rpc::RpcError;
use crate::run::engine::Prompt;
use crate::tools::{workspace, Workspace};

/// A linked file is read up to this many bytes; the rest is left out, and said so.
const MAX_LINKED_BYTES: u64 = 256 * 1024;

/// The prompt of `blocks`, or the invalid-params error naming the first wrong block.
pub fn prompt(blocks: &Value, workspace: &Workspace, cwd: &Path) -> Result<Prompt, RpcError> {
    let Some(blocks) = blocks.as_array() else {
        return Err(RpcError::invalid_params("prompt must be an array of content blocks"));
    };
    let mut parts: Vec<String> = Vec::new();
    let mut found = Vec::new();
    for (n, block) in blocks.iter().enumerate() {
        let at = |why: &str| RpcError::invalid_params(format!("prompt[{n}]: {why}"));
        let text = |key: &str| block.get(key).and_then(Value::as_str);
        match text("type") {
            Some("text") => {
                parts.push(text("text").ok_or_else(|| at("a text block needs text"))?.to_string())
            }
            Some("resource") => {
                let resource = &block["resource"];
                let uri = resource["uri"].as_str().ok_or_else(|| at("a resource needs a uri"))?;
                let Some(body) = resource["text"].as_str() else {
                    return Err(at("only text resources are read (this one has no text)"));
                };
                parts.push(format!("--- {uri} ---\n{body}"));
            }
            Some("resource_link") => {
                let uri = text("uri").ok_or_else(|| at("a resource_link needs a uri"))?;
                let name = text("name").ok_or_else(|| at("a resource_link needs a name"))?;
                parts.push(linked(uri, name, workspace, cwd));
            }
            Some("image") => {
                let (Some(data), Some(media)) = (text("data"), text("mimeType")) else {
                    return Err(at("an image needs data and mimeType"));
                };
                if found.len() == images::MAX_IMAGES {
                    return Err(at(&format!("at most {} images per prompt", images::MAX_IMAGES)));
                }
                // zero's image errors name stream-json's field; ACP calls it mimeType.
                let image = images::from_input(media, data)
                    .map_err(|e| at(&e.to_string().replace("mediaType", "mimeType")))?;
                found.push(image);
            }
            Some(other) => {
                return Err(at(&format!(
                    "content of type {} is not taken (text, resource, resource_link and image are)",
                    crate::text::summarize(other)
                )))
            }
            None => return Err(at("a content block needs a type")),
        }
    }
    if parts.iter().all(|p| p.trim().is_empty()) && found.is_empty() {
        return Err(RpcError::invalid_params("the prompt is empty"));
    }
    Ok(Prompt { text: parts.join("\n\n"), images: found })
}

/// A linked resource: a file in a root is read (through the confinement, so a link cannot
/// lead out); anything else is named.
fn linked(uri: &str, name: &str, workspace: &Workspace, cwd: &Path) -> String {
    let named = format!("[Linked resource: {name} <{uri}>]");
    // `file:///x` and `file://localhost/x` name a local file.
    let local =
        uri.strip_prefix("file://").map(|rest| rest.strip_prefix("localhost").unwrap_or(rest));
    let Some(path) = local.filter(|p| p.starts_with('/')).map(percent_decoded) else {
        return named;
    };
    // The editor names files under the workspace as it named it (perhaps through a link).
    let path = super::shown_path(Path::new(&path), cwd, workspace.root());
    let path = path.to_string_lossy();
    let Ok(place) = workspace.locate(&path, true, workspace::Parents::Existing) else {
        return format!("{named} (not read: it is outside the workspace)");
    };
    let (file, meta) = match workspace::open_regular(&place) {
        Ok(opened) => opened,
        Err(err) => return format!("{named} (not read: {err})"),
    };
    let mut bytes = Vec::new();
    if let Err(err) = file.take(MAX_LINKED_BYTES).read_to_end(&mut bytes) {
        return format!("{named} (not read: {err})");
    }
    let body = String::from_utf8_lossy(&bytes);
    let cut = if meta.len() > MAX_LINKED_BYTES {
        format!("\n[... {} more bytes not shown]", meta.len() - MAX_LINKED_BYTES)
    } else {
        String::new()
    };
    format!("--- {uri} ---\n{body}{cut}")
}

/// `%XX` escapes of a URI path decoded (invalid ones kept as they are).
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// How a turn that ended with `failure` is told: a `stopReason`, or the prompt's error.
pub fn stop_reason(failure: &Failure) -> Option<&'static str> {
    match failure {
        Failure::Interrupted => Some("cancelled"),
        Failure::MaxTurns(_) | Failure::BudgetExceeded(_) => Some("max_turn_requests"),
        Failure::Provider(message) if message.starts_with(crate::provider::STOPPED_ANSWER) => {
            Some("refusal")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kit::TempDir;
    use serde_json::json;

    #[test]
    fn blocks_become_the_prompt_and_links_in_the_workspace_are_read() {
        let dir = TempDir::new("acp-prompt");
        dir.write("notes/a b.txt", "inside");
        let ws = Workspace::new(&dir.path).unwrap();
        let link = format!("file://{}/notes/a%20b.txt", dir.path.display());
        let localhost = format!("file://localhost{}/notes/a%20b.txt", dir.path.display());
        let blocks = json!([
            {"type": "text", "text": "Look at"},
            {"type": "resource_link", "name": "a b.txt", "uri": link},
            {"type": "resource_link", "name": "passwd", "uri": "file:///etc/passwd"},
            {"type": "resource_link", "name": "docs", "uri": "https://example.com/x"},
            {"type": "resource_link", "name": "local", "uri": localhost},
            {"type": "resource", "resource": {"uri": "zed://selection", "text": "fn main() {}"}}
        ]);
        let prompt = prompt(&blocks, &ws, &dir.path).unwrap();
        assert_eq!(
            prompt.text,
            format!(
                "Look at\n\n--- {link} ---\ninside\n\n[Linked resource: passwd <file:///etc/passwd>] (not read: it is outside the workspace)\n\n[Linked resource: docs <https://example.com/x>]\n\n--- {localhost} ---\ninside\n\n--- zed://selection ---\nfn main() {{}}"
            )
        );
        let refused = super::prompt(
            &json!([{"type": "audio", "data": "", "mimeType": "audio/wav"}]),
            &ws,
            &dir.path,
        );
        assert_eq!(refused.unwrap_err().code, crate::rpc::code::INVALID_PARAMS);
        assert!(super::prompt(&json!([]), &ws, &dir.path).is_err());
        assert!(super::prompt(&json!("text"), &ws, &dir.path).is_err());
    }

    #[test]
    fn endings_map_to_stop_reasons() {
        assert_eq!(stop_reason(&Failure::Interrupted), Some("cancelled"));
        assert_eq!(stop_reason(&Failure::MaxTurns("x".into())), Some("max_turn_requests"));
        assert_eq!(stop_reason(&Failure::BudgetExceeded("x".into())), Some("max_turn_requests"));
        let refused = format!("{} refusal (stop_reason refusal)", crate::provider::STOPPED_ANSWER);
        assert_eq!(stop_reason(&Failure::Provider(refused)), Some("refusal"));
        assert_eq!(stop_reason(&Failure::Unavailable("down".into())), None);
    }
}
