//! Stage one of redaction: exact secret values.
//!
//! The values are compiled into one Aho-Corasick automaton (a DFA over byte classes), so the
//! text is read once whatever the number of secrets. Every byte covered by any occurrence of any
//! secret is replaced, and each maximal covered run becomes one marker: a stronger form of the
//! "longest first" replacement of Zero's that also covers overlapping secrets.
//!
//! The same automaton serves streams: after each piece, only the longest suffix that is still a
//! prefix of some secret (the automaton state's depth) is held back.
//!
//! Stage one writes a stand-in character for each character it covers, not the marker: stage
//! two then sees where a secret was and how long it was, so a secret that is part of a
//! token-shaped key (`sk-proj-<secret>AbCd…`) makes the whole key redacted, not just the
//! secret. [`collapse_stand_ins`] turns each run of stand-ins left after stage two into one
//! marker.

use super::REDACTED;

/// What stage one writes for each character of a secret (a private-use character, which a
/// text that contains it sees redacted).
pub(crate) const SECRET_STAND_IN_CHAR: char = '\u{E000}';
pub(crate) const SECRET_STAND_IN: &str = "\u{E000}";
/// Stand-ins written for one covered run at most: enough for any key's length.
const MAX_STAND_INS: usize = 256;

/// Replaces each run of stand-ins in `out[from..]` with one marker; `in_run` carries a run
/// across the pieces of a stream.
pub(crate) fn collapse_stand_ins(out: &mut String, from: usize, in_run: &mut bool) {
    let piece = &out[from..];
    if !piece.contains(SECRET_STAND_IN_CHAR) {
        if !piece.is_empty() {
            *in_run = false;
        }
        return;
    }
    let mut collapsed = String::with_capacity(piece.len());
    for c in piece.chars() {
        if c == SECRET_STAND_IN_CHAR {
            if !*in_run {
                collapsed.push_str(REDACTED);
                *in_run = true;
            }
        } else {
            collapsed.push(c);
            *in_run = false;
        }
    }
    out.truncate(from);
    out.push_str(&collapsed);
}

/// A compiled set of secret values.
#[derive(Debug, Clone, Default)]
pub(crate) struct SecretSet {
    /// Byte to class; class 0 is every byte that occurs in no secret.
    classes: Vec<u8>,
    class_count: usize,
    /// `state * class_count + class` to the next state.
    next: Vec<u32>,
    /// Length of the string each state stands for.
    depth: Vec<u32>,
    /// Length of the longest secret that ends in this state (0 for none).
    found: Vec<u32>,
}

impl SecretSet {
    /// Compiles the given values. Empty values are ignored.
    pub(crate) fn new(values: &[String]) -> SecretSet {
        let values: Vec<&[u8]> =
            values.iter().map(|v| v.as_bytes()).filter(|v| !v.is_empty()).collect();
        if values.is_empty() {
            return SecretSet::default();
        }
        let mut classes = vec![0u8; 256];
        let mut class_count = 1usize;
        for value in &values {
            for &b in value.iter() {
                if classes[b as usize] == 0 && class_count < 256 {
                    classes[b as usize] = class_count as u8;
                    class_count += 1;
                }
            }
        }
        // The trie first, with u32::MAX for "no edge".
        const NONE: u32 = u32::MAX;
        let mut next = vec![NONE; class_count];
        let mut depth = vec![0u32];
        let mut found = vec![0u32];
        for value in &values {
            let mut state = 0usize;
            for &b in value.iter() {
                let slot = state * class_count + classes[b as usize] as usize;
                if next[slot] == NONE {
                    let new = depth.len();
                    next[slot] = new as u32;
                    next.extend(std::iter::repeat_n(NONE, class_count));
                    depth.push(depth[state] + 1);
                    found.push(0);
                }
                state = next[slot] as usize;
            }
            found[state] = value.len() as u32;
        }
        // Breadth-first: failure links turn the trie into a complete DFA.
        let mut fail = vec![0u32; depth.len()];
        let mut queue = std::collections::VecDeque::new();
        for edge in next.iter_mut().take(class_count) {
            if *edge == NONE {
                *edge = 0;
            } else {
                fail[*edge as usize] = 0;
                queue.push_back(*edge as usize);
            }
        }
        while let Some(state) = queue.pop_front() {
            let f = fail[state] as usize;
            if found[state] == 0 {
                found[state] = found[f];
            }
            for class in 0..class_count {
                let slot = state * class_count + class;
                let target = next[slot];
                let via_fail = next[f * class_count + class];
                if target == NONE {
                    next[slot] = via_fail;
                } else {
                    fail[target as usize] = via_fail;
                    queue.push_back(target as usize);
                }
            }
        }
        SecretSet { classes, class_count, next, depth, found }
    }

    /// Whether there is nothing to look for.
    pub(crate) fn is_empty(&self) -> bool {
        self.next.is_empty()
    }

    fn step(&self, state: u32, byte: u8) -> u32 {
        self.next[state as usize * self.class_count + self.classes[byte as usize] as usize]
    }
}

/// Stage one applied to a stream: bytes not yet released and the covered intervals among them.
#[derive(Debug, Clone, Default)]
pub(crate) struct SecretStream {
    state: u32,
    held: Vec<u8>,
    /// Covered byte ranges of `held`, sorted and disjoint.
    covered: Vec<(usize, usize)>,
}

impl SecretStream {
    /// Feeds a piece; appends to `out` everything that can no longer be part of a secret.
    pub(crate) fn push(&mut self, set: &SecretSet, piece: &str, out: &mut String) {
        if set.is_empty() {
            out.push_str(piece);
            return;
        }
        let base = self.held.len();
        self.held.extend_from_slice(piece.as_bytes());
        for (offset, &byte) in piece.as_bytes().iter().enumerate() {
            self.state = set.step(self.state, byte);
            let len = set.found[self.state as usize] as usize;
            if len > 0 {
                let end = base + offset + 1;
                self.cover(end - len, end);
            }
        }
        let safe = self.held.len() - set.depth[self.state as usize] as usize;
        self.release(safe, out);
    }

    /// Ends the stream: everything held is released.
    pub(crate) fn finish(&mut self, out: &mut String) {
        self.release(self.held.len(), out);
        self.state = 0;
    }

    fn cover(&mut self, mut start: usize, mut end: usize) {
        while let Some(&(s, e)) = self.covered.last() {
            if e < start {
                break;
            }
            start = start.min(s);
            end = end.max(e);
            self.covered.pop();
        }
        self.covered.push((start, end));
    }

    fn release(&mut self, upto: usize, out: &mut String) {
        if upto == 0 {
            return;
        }
        let mut at = 0;
        let mut keep = 0;
        for &(start, end) in &self.covered {
            if start >= upto {
                break;
            }
            if start > at {
                push_bytes(out, &self.held[at..start]);
            }
            let from = start.max(at);
            let end_here = end.min(upto);
            let chars = String::from_utf8_lossy(&self.held[from..end_here]).chars().count();
            for _ in 0..chars.clamp(1, MAX_STAND_INS) {
                out.push(SECRET_STAND_IN_CHAR);
            }
            at = end_here;
            if end > upto {
                break;
            }
            keep += 1;
        }
        if at < upto {
            push_bytes(out, &self.held[at..upto]);
        }
        self.covered.drain(..keep);
        for range in &mut self.covered {
            range.0 = range.0.saturating_sub(upto);
            range.1 -= upto;
        }
        self.held.drain(..upto);
    }
}

/// Released ranges start and end on character boundaries (secrets and the text are UTF-8), so
/// the lossy conversion never replaces anything; it only avoids an `unwrap`.
fn push_bytes(out: &mut String, bytes: &[u8]) {
    out.push_str(&String::from_utf8_lossy(bytes));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(secrets: &[&str], text: &str) -> String {
        let set = SecretSet::new(&secrets.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let mut stream = SecretStream::default();
        let mut out = String::new();
        stream.push(&set, text, &mut out);
        stream.finish(&mut out);
        collapse_stand_ins(&mut out, 0, &mut false);
        out
    }

    #[test]
    fn replaces_every_occurrence() {
        assert_eq!(redact(&["hunter22"], "a hunter22 b hunter22"), "a [REDACTED] b [REDACTED]");
    }

    #[test]
    fn overlapping_and_adjacent_secrets_become_one_marker() {
        assert_eq!(redact(&["abcd", "cdef"], "xabcdefx"), "x[REDACTED]x");
        assert_eq!(redact(&["abcd"], "abcdabcd!"), "[REDACTED]!");
        assert_eq!(redact(&["abcdef", "cd"], "abcdef"), "[REDACTED]");
    }

    #[test]
    fn a_secret_split_at_every_offset_is_still_found() {
        let secret = "sk-live-0123456789";
        let text = format!("key {secret} end");
        let set = SecretSet::new(&[secret.to_string()]);
        for cut in 0..=text.len() {
            let mut stream = SecretStream::default();
            let mut out = String::new();
            stream.push(&set, &text[..cut], &mut out);
            stream.push(&set, &text[cut..], &mut out);
            stream.finish(&mut out);
            collapse_stand_ins(&mut out, 0, &mut false);
            assert_eq!(out, "key [REDACTED] end", "cut at {cut}");
        }
    }

    #[test]
    fn holds_back_only_a_possible_prefix() {
        let set = SecretSet::new(&["secret-value".to_string()]);
        let mut stream = SecretStream::default();
        let mut out = String::new();
        stream.push(&set, "hello sec", &mut out);
        assert_eq!(out, "hello ");
        stream.push(&set, "ond", &mut out);
        assert_eq!(out, "hello second");
    }

    #[test]
    fn multibyte_text_survives() {
        assert_eq!(redact(&["pässwörd"], "é pässwörd ü"), "é [REDACTED] ü");
    }

    #[test]
    fn linear_on_repetitive_input() {
        let secret = format!("{}b", "a".repeat(64));
        let text = "a".repeat(2_000_000);
        assert_eq!(redact(&[&secret], &text).len(), text.len());
    }
}
