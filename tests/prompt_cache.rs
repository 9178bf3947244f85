//! A provider cache that works as Anthropic documents its prompt caching, for the benchmark's
//! cost figure: a request reads the longest prefix, up to one of its breakpoints, that an
//! earlier request also marked; it writes the prefix up to its last breakpoint beyond that;
//! a prefix under 1,024 tokens is not cached. Tokens are counted as bytes / 4 of the blocks
//! (tools, system, then each message's content) without their `cache_control`.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use serde_json::Value;

/// The smallest cacheable prefix (Claude Sonnet's), in tokens.
const MIN_CACHED: u64 = 1024;

/// What one request is billed for, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Billed {
    pub fresh: u64,
    pub read: u64,
    pub written: u64,
}

/// The prefixes earlier requests marked (by hash), with their sizes.
#[derive(Default)]
pub struct PromptCache {
    marked: HashMap<u64, u64>,
}

/// Every block of a request in order, each with whether it carries a breakpoint.
fn blocks(body: &Value) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut push = |block: &Value, role: &str| {
        let mut block = block.clone();
        let marked = block.as_object_mut().and_then(|b| b.remove("cache_control")).is_some();
        out.push((format!("{role}:{block}"), marked));
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push(tool, "tool");
    }
    match &body["system"] {
        Value::Array(system) => system.iter().for_each(|b| push(b, "system")),
        Value::String(text) => push(&serde_json::json!({"type": "text", "text": text}), "system"),
        _ => {}
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or_default();
        match &message["content"] {
            Value::Array(content) => content.iter().for_each(|b| push(b, role)),
            text => push(&serde_json::json!({"type": "text", "text": text}), role),
        }
    }
    out
}

impl PromptCache {
    pub fn bill(&mut self, body: &Value) -> Billed {
        let mut hasher = DefaultHasher::new();
        let mut bytes = 0u64;
        let mut breakpoints = Vec::new();
        for (block, marked) in blocks(body) {
            block.hash(&mut hasher);
            bytes += block.len() as u64;
            if marked {
                breakpoints.push((hasher.finish(), bytes / 4));
            }
        }
        let total = bytes / 4;
        let read = breakpoints
            .iter()
            .filter(|(hash, _)| self.marked.contains_key(hash))
            .map(|(_, tokens)| *tokens)
            .max()
            .unwrap_or(0);
        let written = match breakpoints.last() {
            Some((_, tokens)) if *tokens > read && *tokens >= MIN_CACHED => tokens - read,
            _ => 0,
        };
        for (hash, tokens) in breakpoints {
            if tokens >= MIN_CACHED {
                self.marked.insert(hash, tokens);
            }
        }
        Billed { fresh: total - read - written, read, written }
    }
}

#[test]
fn a_marked_prefix_is_written_once_and_read_after() {
    let text = |t: &str| serde_json::json!({"type": "text", "text": t});
    let long = "x".repeat(8000);
    let mut first = serde_json::json!({
        "system": [{"type": "text", "text": long, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [text("hi")]}]
    });
    first["messages"][0]["content"][0]["cache_control"] = serde_json::json!({"type": "ephemeral"});
    let mut cache = PromptCache::default();
    let one = cache.bill(&first);
    assert_eq!(one.read, 0);
    assert!(one.written > 2000 && one.fresh == 0, "{one:?}");
    // The same request again reads all of it.
    let again = cache.bill(&first);
    assert_eq!((again.read, again.written, again.fresh), (one.written, 0, 0));
    // Unmarked, nothing is cached.
    let mut plain = first.clone();
    plain["system"] = serde_json::json!(long);
    plain["messages"][0]["content"] = serde_json::json!("hi");
    let mut fresh_cache = PromptCache::default();
    assert_eq!(fresh_cache.bill(&plain).read + fresh_cache.bill(&plain).read, 0);
}
