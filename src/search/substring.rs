//! Byte and substring search over whole file buffers: what grep's prefilter runs on every
//! byte it reads. Bytes are looked for sixteen at a time with SSE2 on x86_64 (part of its
//! baseline) and eight at a time in a `u64` elsewhere.
//!
//! A needle is found by its rarest byte (by a frequency table of source text); where that
//! byte is, the next rarest is checked at its offset before the whole needle is compared.

const LO: u64 = 0x0101_0101_0101_0101;

#[inline]
fn word_at(haystack: &[u8], i: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&haystack[i..i + 8]);
    u64::from_le_bytes(bytes)
}

/// The lanes of `word` whose byte is zero, as their high bits (exact: no borrow between
/// lanes, so a lane set is a lane that is zero).
#[inline]
fn zero_lanes(word: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((word & LOW7).wrapping_add(LOW7)) | word | LOW7)
}

/// The first position at or after `from` holding `a` or `b` that `accept` takes.
#[inline]
fn find_either(
    a: u8,
    b: u8,
    haystack: &[u8],
    from: usize,
    accept: impl FnMut(usize) -> bool,
) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        find_either_sse2(a, b, haystack, from, accept)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        find_either_words(a, b, haystack, from, accept)
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn find_either_sse2(
    a: u8,
    b: u8,
    haystack: &[u8],
    from: usize,
    mut accept: impl FnMut(usize) -> bool,
) -> Option<usize> {
    use crate::sys::sse2::{
        _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_set_epi64x,
    };
    let (va, vb) = (_mm_set1_epi8(a as i8), _mm_set1_epi8(b as i8));
    let mut i = from;
    while i + 16 <= haystack.len() {
        let block = _mm_set_epi64x(word_at(haystack, i + 8) as i64, word_at(haystack, i) as i64);
        let hits = _mm_or_si128(_mm_cmpeq_epi8(block, va), _mm_cmpeq_epi8(block, vb));
        let mut lanes = _mm_movemask_epi8(hits) as u32;
        while lanes != 0 {
            let at = i + lanes.trailing_zeros() as usize;
            if accept(at) {
                return Some(at);
            }
            lanes &= lanes - 1;
        }
        i += 16;
    }
    (i..haystack.len()).find(|&at| (haystack[at] == a || haystack[at] == b) && accept(at))
}

#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn find_either_words(
    a: u8,
    b: u8,
    haystack: &[u8],
    from: usize,
    mut accept: impl FnMut(usize) -> bool,
) -> Option<usize> {
    let (ra, rb) = (LO.wrapping_mul(a as u64), LO.wrapping_mul(b as u64));
    let mut i = from;
    while i + 8 <= haystack.len() {
        let word = word_at(haystack, i);
        let mut lanes = zero_lanes(word ^ ra) | zero_lanes(word ^ rb);
        while lanes != 0 {
            let at = i + (lanes.trailing_zeros() / 8) as usize;
            if accept(at) {
                return Some(at);
            }
            lanes &= lanes - 1;
        }
        i += 8;
    }
    (i..haystack.len()).find(|&at| (haystack[at] == a || haystack[at] == b) && accept(at))
}

/// Two bytes side by side that a needle holds at `offset` (compared with `mask` OR-ed in:
/// `0x20` for a letter matched in either case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pair {
    offset: usize,
    bytes: [u8; 2],
    masks: [u8; 2],
}

impl Pair {
    #[inline]
    fn at(&self, haystack: &[u8], i: usize) -> bool {
        haystack[i] | self.masks[0] == self.bytes[0]
            && haystack[i + 1] | self.masks[1] == self.bytes[1]
    }
}

/// Pairs [`find_pairs`] looks for at once, at most.
const MAX_PAIRS: usize = 8;

/// The first position `i` at or after `from` where one of `pairs` (at most [`MAX_PAIRS`])
/// sits, at `i` and `i + 1`, that `accept` takes: one pass over the haystack whatever their
/// number. Two bytes rule out far more places than one, so few are left to check.
#[inline]
fn find_pairs(
    pairs: &[Pair],
    haystack: &[u8],
    from: usize,
    accept: impl FnMut(usize) -> bool,
) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        find_pairs_sse2(pairs, haystack, from, accept)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        find_pairs_scalar(pairs, haystack, from, haystack.len(), accept)
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn find_pairs_sse2(
    pairs: &[Pair],
    haystack: &[u8],
    from: usize,
    mut accept: impl FnMut(usize) -> bool,
) -> Option<usize> {
    use crate::sys::sse2::{
        _mm_and_si128, _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_set_epi64x, _mm_setzero_si128, Lanes,
    };
    let n = pairs.len().min(MAX_PAIRS);
    let zero = _mm_setzero_si128();
    // Per pair: the two bytes and their masks, as vectors.
    let mut wanted: [[Lanes; 4]; MAX_PAIRS] = [[zero; 4]; MAX_PAIRS];
    for (slot, pair) in wanted.iter_mut().zip(&pairs[..n]) {
        *slot = [
            _mm_set1_epi8(pair.bytes[0] as i8),
            _mm_set1_epi8(pair.bytes[1] as i8),
            _mm_set1_epi8(pair.masks[0] as i8),
            _mm_set1_epi8(pair.masks[1] as i8),
        ];
    }
    let load =
        |at: usize| _mm_set_epi64x(word_at(haystack, at + 8) as i64, word_at(haystack, at) as i64);
    let mut i = from;
    while i + 17 <= haystack.len() {
        let (first, second) = (load(i), load(i + 1));
        let mut hits = zero;
        for [b0, b1, m0, m1] in &wanted[..n] {
            let one = _mm_cmpeq_epi8(_mm_or_si128(first, *m0), *b0);
            let two = _mm_cmpeq_epi8(_mm_or_si128(second, *m1), *b1);
            hits = _mm_or_si128(hits, _mm_and_si128(one, two));
        }
        let mut lanes = _mm_movemask_epi8(hits) as u32;
        while lanes != 0 {
            let at = i + lanes.trailing_zeros() as usize;
            if accept(at) {
                return Some(at);
            }
            lanes &= lanes - 1;
        }
        i += 16;
    }
    find_pairs_scalar(&pairs[..n], haystack, i, haystack.len(), accept)
}

/// [`find_pairs`] a byte at a time (the tail of a buffer, and targets without SSE2).
fn find_pairs_scalar(
    pairs: &[Pair],
    haystack: &[u8],
    from: usize,
    end: usize,
    mut accept: impl FnMut(usize) -> bool,
) -> Option<usize> {
    (from..end.saturating_sub(1)).find(|&at| pairs.iter().any(|p| p.at(haystack, at)) && accept(at))
}

/// The first `needle` byte at or after `from`.
pub fn memchr(needle: u8, haystack: &[u8], from: usize) -> Option<usize> {
    find_either(needle, needle, haystack, from, |_| true)
}

/// The last `needle` byte before `end`.
pub fn memrchr(needle: u8, haystack: &[u8], end: usize) -> Option<usize> {
    let repeated = LO.wrapping_mul(needle as u64);
    let mut i = end;
    while i >= 8 {
        let lanes = zero_lanes(word_at(haystack, i - 8) ^ repeated);
        if lanes != 0 {
            return Some(i - 8 + 7 - (lanes.leading_zeros() / 8) as usize);
        }
        i -= 8;
    }
    haystack[..i].iter().rposition(|&b| b == needle)
}

/// How many `needle` bytes `haystack[from..to]` holds.
pub fn count(needle: u8, haystack: &[u8], from: usize, to: usize) -> usize {
    let part = &haystack[from..to];
    let repeated = LO.wrapping_mul(needle as u64);
    let mut words = part.chunks_exact(8);
    let mut total = 0;
    for chunk in &mut words {
        total += zero_lanes(word_at(chunk, 0) ^ repeated).count_ones() as usize;
    }
    total + words.remainder().iter().filter(|&&b| b == needle).count()
}

/// How common a byte is in source code (higher: more common); a needle is searched by its
/// least common byte.
fn commonness(b: u8) -> u8 {
    match b {
        b' ' | b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' => 250,
        b'\n' | b'l' | b'c' | b'd' | b'u' | b'h' | b'p' | b'm' | b'_' | b'.' => 220,
        b'(' | b')' | b'f' | b'g' | b'y' | b'b' | b'w' | b',' | b';' | b'"' | b'=' => 200,
        b'v' | b'k' | b'/' | b':' | b'{' | b'}' | b'-' | b'*' | b'\t' | b'<' | b'>' => 170,
        b'A'..=b'Z' | b'0'..=b'9' | b'x' | b'&' | b'\'' | b'[' | b']' | b'#' | b'!' => 120,
        b'j' | b'q' | b'z' | b'+' | b'|' | b'\\' | b'?' | b'@' | b'$' | b'%' => 80,
        _ => 10,
    }
}

/// A needle prepared for repeated search.
#[derive(Debug, Clone)]
pub struct Finder {
    needle: Vec<u8>,
    /// Match ASCII letters of either case.
    fold: bool,
    /// The offsets of the rarest byte and of the next rarest (the same for a 1-byte needle).
    rare: (usize, usize),
}

impl Finder {
    /// A finder for `needle` (lower-cased already when `fold`).
    pub fn new(needle: &[u8], fold: bool) -> Finder {
        let by_rarity = |i: &usize| commonness(needle[*i]);
        let first = (0..needle.len()).min_by_key(by_rarity).unwrap_or(0);
        let second = (0..needle.len())
            .filter(|&i| i != first && needle[i] != needle[first])
            .min_by_key(by_rarity)
            .unwrap_or(first);
        Finder { needle: needle.to_vec(), fold, rare: (first, second) }
    }

    pub fn len(&self) -> usize {
        self.needle.len()
    }

    /// The first occurrence at or after `from`. The rarest byte is looked for eight bytes at
    /// a time; where it is, the next rarest is checked at its offset before the whole needle
    /// is compared.
    pub fn find(&self, haystack: &[u8], from: usize) -> Option<usize> {
        if self.needle.is_empty() {
            return (from <= haystack.len()).then_some(from);
        }
        let rare = self.needle[self.rare.0];
        if self.fold && rare.is_ascii_lowercase() {
            self.scan::<true>(haystack, from)
        } else {
            self.scan::<false>(haystack, from)
        }
    }

    /// [`Finder::find`]; `FOLD` when the rarest byte is a letter matched in either case.
    fn scan<const FOLD: bool>(&self, haystack: &[u8], from: usize) -> Option<usize> {
        let last_start = haystack.len().checked_sub(self.needle.len())?;
        let (r1, r2) = self.rare;
        let first = self.needle[r1];
        let other = if FOLD { first.to_ascii_uppercase() } else { first };
        let second = self.needle[r2];
        // A start whose rare bytes are in place and whose whole needle is too.
        let candidate = |at: usize| {
            let start = at - r1;
            start <= last_start
                && (haystack[start + r2] == second
                    || (self.fold && haystack[start + r2].to_ascii_lowercase() == second))
                && self.is_at(haystack, start)
        };
        find_either(first, other, haystack, from.checked_add(r1)?, candidate).map(|at| at - r1)
    }

    /// Whether the needle starts at `start`, its rare bytes checked first.
    #[inline]
    fn starts_at(&self, haystack: &[u8], start: usize) -> bool {
        let (_, r2) = self.rare;
        let second = self.needle[r2];
        start + self.needle.len() <= haystack.len()
            && (haystack[start + r2] == second
                || (self.fold && haystack[start + r2].to_ascii_lowercase() == second))
            && self.is_at(haystack, start)
    }

    #[inline]
    fn is_at(&self, haystack: &[u8], start: usize) -> bool {
        let window = &haystack[start..start + self.needle.len()];
        if self.fold {
            window.eq_ignore_ascii_case(&self.needle)
        } else {
            window == self.needle.as_slice()
        }
    }
}

/// Several needles searched for in one pass: each by its rarest two neighbouring bytes, all
/// those pairs looked for at once (so an alternation of six literals reads the buffer once,
/// not six times, and stops at few places that are not a match).
#[derive(Debug, Clone)]
pub struct Finders {
    finders: Vec<Finder>,
    /// The pair each needle is found by, in the same order.
    pairs: Vec<Pair>,
}

impl Finders {
    /// `None` when the needles are too many for one pass, or one is shorter than two bytes.
    pub fn new(finders: Vec<Finder>) -> Option<Finders> {
        if finders.len() > MAX_PAIRS {
            return None;
        }
        let mut pairs = Vec::new();
        for finder in &finders {
            let needle = &finder.needle;
            let offset = (0..needle.len().checked_sub(1)?)
                .min_by_key(|&k| commonness(needle[k]) as u16 + commonness(needle[k + 1]) as u16)?;
            let mask = |b: u8| if finder.fold && b.is_ascii_lowercase() { 0x20 } else { 0 };
            let bytes = [needle[offset], needle[offset + 1]];
            pairs.push(Pair { offset, bytes, masks: [mask(bytes[0]), mask(bytes[1])] });
        }
        Some(Finders { finders, pairs })
    }

    /// The start of an occurrence of a needle at or after `from`: of the one whose pair comes
    /// first. No needle holds a newline (grep's literals never do), so no occurrence on an
    /// earlier line is passed over.
    pub fn find(&self, haystack: &[u8], from: usize) -> Option<usize> {
        let mut found = None;
        find_pairs(&self.pairs, haystack, from, |at| {
            for (f, pair) in self.finders.iter().zip(&self.pairs) {
                let Some(start) = at.checked_sub(pair.offset).filter(|&s| s >= from) else {
                    continue;
                };
                if pair.at(haystack, at) && f.starts_at(haystack, start) {
                    found = Some(start);
                    return true;
                }
            }
            false
        })?;
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The obvious search, to compare with.
    fn naive(needle: &[u8], haystack: &[u8], from: usize, fold: bool) -> Option<usize> {
        let last = haystack.len().checked_sub(needle.len())?;
        (from..=last).find(|&i| {
            let w = &haystack[i..i + needle.len()];
            if fold {
                w.eq_ignore_ascii_case(needle)
            } else {
                w == needle
            }
        })
    }

    #[test]
    fn finds_what_the_obvious_search_finds() {
        let haystack =
            b"fn main() { let Error = x; } // ERROR error Errorr\nunsafe unwrap un\n".repeat(3);
        for needle in
            [&b"Error"[..], b"fn", b"un", b"unwrap", b"}\n", b"x", b"zzz", b"r\nu", b"rr", b"eRRor"]
        {
            for fold in [false, true] {
                let folded = if fold { needle.to_ascii_lowercase() } else { needle.to_vec() };
                let finder = Finder::new(&folded, fold);
                for from in 0..haystack.len() {
                    assert_eq!(
                        finder.find(&haystack, from),
                        naive(&folded, &haystack, from, fold),
                        "{:?} from {from} fold {fold}",
                        String::from_utf8_lossy(needle)
                    );
                }
            }
        }
    }

    #[test]
    fn pseudo_random_haystacks_agree_with_the_obvious_search() {
        // Few distinct bytes, so candidates and near-misses are everywhere.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..300 {
            let haystack: Vec<u8> =
                (0..(next() % 90) as usize).map(|_| b"abAB\n"[(next() % 5) as usize]).collect();
            let needle: Vec<u8> =
                (0..1 + (next() % 5) as usize).map(|_| b"ab"[(next() % 2) as usize]).collect();
            for fold in [false, true] {
                let finder = Finder::new(&needle, fold);
                for from in 0..=haystack.len() {
                    assert_eq!(
                        finder.find(&haystack, from),
                        naive(&needle, &haystack, from, fold),
                        "round {round}: {needle:?} in {haystack:?} from {from} fold {fold}"
                    );
                }
            }
        }
    }

    #[test]
    fn several_needles_are_found_in_one_pass_as_each_alone_would_find_them() {
        let haystack =
            b"fn main() { unsafe { x.unwrap() } } // FIXME TODO\npanic! expect(\nUNWRAP Unsafe\n"
                .repeat(5);
        let sets: [&[&[u8]]; 3] = [
            &[b"unsafe", b"unwrap", b"FIXME"],
            &[b"unsafe", b"unwrap", b"FIXME", b"TODO", b"panic", b"expect"],
            &[b"}\n", b"//", b"x.", b"zz"],
        ];
        for needles in sets {
            for fold in [false, true] {
                let finders: Vec<Finder> = needles
                    .iter()
                    .map(|n| {
                        Finder::new(&if fold { n.to_ascii_lowercase() } else { n.to_vec() }, fold)
                    })
                    .collect();
                let all = Finders::new(finders.clone()).unwrap();
                let mut from = 0;
                while from <= haystack.len() {
                    let got = all.find(&haystack, from);
                    // Each needle alone: the occurrence a line search would come to first
                    // is the one on the earliest line, and on it the earliest rare byte.
                    let line_of =
                        |at: usize| haystack[..at].iter().filter(|&&b| b == b'\n').count();
                    let alone: Vec<usize> =
                        finders.iter().filter_map(|f| f.find(&haystack, from)).collect();
                    match got {
                        None => assert!(alone.is_empty(), "{needles:?} from {from}"),
                        Some(at) => {
                            let first_line = alone.iter().map(|&a| line_of(a)).min().unwrap();
                            assert!(alone.contains(&at), "{at} is no needle's occurrence");
                            assert_eq!(line_of(at), first_line, "{needles:?} from {from}");
                        }
                    }
                    from += 1;
                }
            }
        }
        // More needles than one pass looks for, or a needle of one byte: no set.
        let many: Vec<Finder> = (b'a'..=b'z').map(|b| Finder::new(&[b, b], false)).collect();
        assert!(Finders::new(many).is_none());
        assert!(Finders::new(vec![Finder::new(b"ab", false), Finder::new(b"c", false)]).is_none());
    }

    #[test]
    fn the_word_scan_used_off_x86_agrees_with_the_one_used_here() {
        let haystack: Vec<u8> = (0..300u32).map(|i| (i * 11 % 17) as u8 + b'a').collect();
        for from in 0..=haystack.len() {
            for (a, b) in [(b'a', b'a'), (b'c', b'q'), (b'z', b'Z')] {
                let mut seen = Vec::new();
                let words = find_either_words(a, b, &haystack, from, |at| {
                    seen.push(at);
                    at % 3 == 0
                });
                let mut seen_here = Vec::new();
                let here = find_either(a, b, &haystack, from, |at| {
                    seen_here.push(at);
                    at % 3 == 0
                });
                assert_eq!((words, &seen), (here, &seen_here), "{a} {b} from {from}");
                let pairs = [
                    Pair { offset: 0, bytes: [a, b], masks: [0, 0] },
                    Pair { offset: 1, bytes: [b'x' | 0x20, b], masks: [0x20, 0] },
                ];
                let mut seen_pairs = Vec::new();
                let simd = find_pairs(&pairs, &haystack, from, |at| {
                    seen_pairs.push(at);
                    at % 3 == 0
                });
                let mut seen_scalar = Vec::new();
                let scalar = find_pairs_scalar(&pairs, &haystack, from, haystack.len(), |at| {
                    seen_scalar.push(at);
                    at % 3 == 0
                });
                assert_eq!((simd, &seen_pairs), (scalar, &seen_scalar), "{a} {b} from {from}");
            }
        }
    }

    #[test]
    fn byte_scans_agree_with_iterators_at_every_alignment() {
        let haystack: Vec<u8> = (0..200u32).map(|i| (i * 7 % 13) as u8 + b'a').collect();
        for from in 0..haystack.len() {
            for b in [b'a', b'c', b'm', b'z'] {
                let want = haystack[from..].iter().position(|&x| x == b).map(|p| p + from);
                assert_eq!(memchr(b, &haystack, from), want);
            }
        }
        for end in 0..=haystack.len() {
            for b in [b'a', b'c', b'm', b'z'] {
                assert_eq!(
                    memrchr(b, &haystack, end),
                    haystack[..end].iter().rposition(|&x| x == b)
                );
            }
            assert_eq!(
                count(b'c', &haystack, end / 3, end),
                haystack[end / 3..end].iter().filter(|&&x| x == b'c').count()
            );
        }
        assert_eq!(memrchr(b'a', b"abca", 3), Some(0));
        assert_eq!(count(b'\n', b"a\nb\n\nc", 0, 6), 3);
    }
}
