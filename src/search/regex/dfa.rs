//! A lazy DFA for patterns without assertions: the Pike VM's thread sets become states the
//! first time a line needs them, and each state remembers where a character leads, so a
//! character read costs one table lookup instead of a step of every thread. Linear time
//! still: a state is built at most once per (state, character), and the number of states is
//! capped (the VM takes over when they run out).

use std::collections::HashMap;

use super::{Context, Regex, Threads};

/// States built at most before the cache is dropped and the VM matches the line.
const MAX_STATES: usize = 2048;
/// Memory the states may take at most (a state of a large program holds many threads).
const MAX_BYTES: usize = 8 * 1024 * 1024;
/// A transition not built yet.
const UNKNOWN: u32 = u32::MAX;
/// A transition into a set holding the match: the text matches.
const MATCHED: u32 = u32::MAX - 1;

#[derive(Debug, Clone, Default)]
pub(super) struct Dfa {
    /// Each state's program counters, sorted, by state id.
    sets: Vec<Box<[usize]>>,
    ids: HashMap<Box<[usize]>, u32>,
    /// Transitions on ASCII characters: 128 per state.
    ascii: Vec<u32>,
    /// Transitions on the other characters.
    other: HashMap<(u32, char), u32>,
    /// The empty text matches: so does every text.
    matches_empty: Option<bool>,
    /// What the states take, roughly.
    bytes: usize,
    /// The most `bytes` has been (kept when the cache is dropped).
    peak: usize,
}

impl Dfa {
    /// Whether `text` holds a match; `None` when the states ran out (the cache is then
    /// emptied, and the caller matches with the VM).
    pub(super) fn is_match(
        &mut self,
        regex: &Regex,
        threads: &mut Threads,
        stack: &mut Vec<usize>,
        text: &str,
    ) -> Option<bool> {
        if self.sets.is_empty() {
            threads.clear();
            let matched = regex.add(threads, 0, Context::NONE, stack);
            self.matches_empty = Some(matched);
            if !matched {
                self.intern(threads);
            }
        }
        if self.matches_empty == Some(true) {
            return Some(true);
        }
        let mut state = 0u32;
        for c in text.chars() {
            let known = if c.is_ascii() {
                self.ascii[state as usize * 128 + c as usize]
            } else {
                self.other.get(&(state, c)).copied().unwrap_or(UNKNOWN)
            };
            let next =
                if known == UNKNOWN { self.build(regex, threads, stack, state, c)? } else { known };
            if next == MATCHED {
                return Some(true);
            }
            state = next;
        }
        Some(false)
    }

    /// The state after `state` reads `c`: the threads that step over `c`, and a new thread
    /// at the start (the search is unanchored).
    fn build(
        &mut self,
        regex: &Regex,
        threads: &mut Threads,
        stack: &mut Vec<usize>,
        state: u32,
        c: char,
    ) -> Option<u32> {
        if self.bytes >= MAX_BYTES {
            self.drop_cache();
            return None;
        }
        threads.clear();
        let mut matched = false;
        for &pc in self.sets[state as usize].iter() {
            if regex.steps(pc, c) && regex.add(threads, pc + 1, Context::NONE, stack) {
                matched = true;
                break;
            }
        }
        let next = if matched || regex.add(threads, 0, Context::NONE, stack) {
            MATCHED
        } else {
            let full = self.sets.len() >= MAX_STATES || self.bytes >= MAX_BYTES;
            if full && !self.ids.contains_key(&sorted(threads)[..]) {
                self.drop_cache();
                return None;
            }
            self.intern(threads)
        };
        if c.is_ascii() {
            self.ascii[state as usize * 128 + c as usize] = next;
        } else {
            self.other.insert((state, c), next);
            self.bytes += 32;
        }
        Some(next)
    }

    /// What the states take, roughly, and the most they have taken.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> (usize, usize) {
        (self.bytes, self.peak)
    }

    fn drop_cache(&mut self) {
        *self = Dfa { peak: self.peak, ..Dfa::default() };
    }

    /// States built so far.
    #[cfg(test)]
    pub(super) fn states(&self) -> usize {
        self.sets.len()
    }

    /// The id of the state holding these threads, made if it is new.
    fn intern(&mut self, threads: &Threads) -> u32 {
        let key = sorted(threads);
        if let Some(&id) = self.ids.get(&key[..]) {
            return id;
        }
        let id = self.sets.len() as u32;
        // The set twice (list and index), the ASCII row, the index's overhead.
        self.bytes += key.len() * 2 * std::mem::size_of::<usize>() + 128 * 4 + 64;
        self.peak = self.peak.max(self.bytes);
        self.sets.push(key.clone());
        self.ids.insert(key, id);
        self.ascii.extend(std::iter::repeat_n(UNKNOWN, 128));
        id
    }
}

fn sorted(threads: &Threads) -> Box<[usize]> {
    let mut pcs = threads.dense[..threads.len].to_vec();
    pcs.sort_unstable();
    pcs.into_boxed_slice()
}
