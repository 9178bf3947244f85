//! What the model sees of MCP: tool names (`mcp__<server>__<tool>`, at most 64 characters) and
//! a `tools/call` result turned into text.

use serde_json::Value;

/// The longest tool name providers take.
pub const MAX_NAME: usize = 64;

/// `mcp__<server>__<tool>`, with characters outside `[A-Za-z0-9_-]` as `_`; a longer name
/// is cut and ends with `_` and 8 hex digits of the full name's hash, so two long names that
/// share their start stay apart.
pub fn exposed_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
            .collect()
    };
    let name = format!("mcp__{}__{}", clean(server), clean(tool));
    if name.len() <= MAX_NAME {
        return name;
    }
    let hash = crate::sha256::hex_digest(format!("{server}\0{tool}").as_bytes());
    format!("{}_{}", &name[..MAX_NAME - 9], &hash[..8])
}

/// A `tools/call` result as the tool's output, and whether it is an error (`isError`).
pub fn call_result(result: &Value) -> (String, bool) {
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let blocks = result.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    // Without text, structuredContent says what the result is; but a result of media or
    // resources is told by those blocks, and its structuredContent may mirror their base64.
    let told = blocks.iter().any(|b| {
        matches!(
            b.get("type").and_then(Value::as_str),
            Some("text" | "image" | "audio" | "resource")
        )
    });
    let mut parts: Vec<String> = blocks.iter().map(block).collect();
    if !told {
        if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
            parts.insert(0, structured.to_string());
        }
    }
    let text = parts.join("\n");
    if text.is_empty() {
        return ("(the tool returned no content)".to_string(), is_error);
    }
    (text, is_error)
}

/// One content block.
fn block(block: &Value) -> String {
    let field = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
    match field("type") {
        "text" => field("text").to_string(),
        kind @ ("image" | "audio") => {
            format!(
                "[{kind}: {}, {} bytes]",
                or_unknown(field("mimeType")),
                decoded_len(field("data"))
            )
        }
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let part = |key: &str| resource.get(key).and_then(Value::as_str);
            match part("text") {
                Some(text) => text.to_string(),
                None => format!(
                    "[resource {}, {}, {} bytes]",
                    part("uri").unwrap_or("(no uri)"),
                    or_unknown(part("mimeType").unwrap_or_default()),
                    decoded_len(part("blob").unwrap_or_default())
                ),
            }
        }
        "resource_link" => field("uri").to_string(),
        other => format!("[{} content]", if other.is_empty() { "unknown" } else { other }),
    }
}

fn or_unknown(mime: &str) -> &str {
    if mime.is_empty() {
        "unknown type"
    } else {
        mime
    }
}

/// The size of what base64 text decodes to (whitespace ignored).
fn decoded_len(base64: &str) -> usize {
    let digits = base64.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let padding = base64.trim_end().bytes().rev().take_while(|&b| b == b'=').count().min(2);
    (digits * 3 / 4).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_cleaned_and_long_ones_cut_with_a_hash() {
        assert_eq!(exposed_name("files", "read_file"), "mcp__files__read_file");
        assert_eq!(exposed_name("gh", "issues.list/all"), "mcp__gh__issues_list_all");
        let long = exposed_name("server", &"t".repeat(100));
        let other = exposed_name("server", &format!("{}x", "t".repeat(100)));
        assert_eq!(long.len(), 64);
        assert_ne!(long, other);
        assert!(long.starts_with("mcp__server__ttt"));
        assert!(long[55..].starts_with('_'));
    }

    #[test]
    fn each_content_shape_becomes_text() {
        let result = json!({"content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "AAECAw=="}},
            {"type": "resource_link", "uri": "file:///c.txt", "name": "c"},
            {"type": "text", "text": "last"}
        ], "structuredContent": {"ignored": true}});
        let (text, error) = call_result(&result);
        assert!(!error);
        assert_eq!(
            text,
            "first\n[image: image/png, 5 bytes]\n[audio: audio/wav, 3 bytes]\ninside\n[resource file:///b.bin, application/octet-stream, 4 bytes]\nfile:///c.txt\nlast"
        );
    }

    #[test]
    fn media_is_not_repeated_as_structured_content() {
        let result = json!({"content": [{"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}],
            "structuredContent": {"content": [{"type": "image", "data": "aGVsbG8="}]}});
        assert_eq!(call_result(&result).0, "[image: image/png, 5 bytes]");
        let links = json!({"content": [{"type": "resource_link", "uri": "file:///a"}], "structuredContent": {"n": 1}});
        assert_eq!(call_result(&links).0, "{\"n\":1}\nfile:///a");
    }

    #[test]
    fn structured_content_stands_in_for_missing_text_and_errors_are_errors() {
        let (text, error) = call_result(&json!({"content": [], "structuredContent": {"sum": 3}}));
        assert_eq!((text.as_str(), error), ("{\"sum\":3}", false));
        let (text, error) = call_result(
            &json!({"content": [{"type": "text", "text": "no such file"}], "isError": true}),
        );
        assert_eq!((text.as_str(), error), ("no such file", true));
        assert_eq!(call_result(&json!({})).0, "(the tool returned no content)");
    }
}
