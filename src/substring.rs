//! Byte and substring search over whole file buffers, eight bytes at a time (no SIMD
//! intrinsics, no unsafe): what grep's prefilter runs on every byte it reads.
//!
//! A needle is found by its rarest byte (by a frequency table of source text), located with a
//! word-at-a-time scan, then the whole needle compared in place.
#![forbid(unsafe_code)]

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `word` is zero.
#[inline]
fn has_zero(word: u64) -> bool {
    word.wrapping_sub(LO) & !word & HI != 0
}

#[inline]
fn word_at(haystack: &[u8], i: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&haystack[i..i + 8]);
    u64::from_le_bytes(bytes)
}

/// The first `needle` byte at or after `from`.
pub fn memchr(needle: u8, haystack: &[u8], from: usize) -> Option<usize> {
    let repeated = LO.wrapping_mul(needle as u64);
    let mut i = from;
    while i + 8 <= haystack.len() {
        if has_zero(word_at(haystack, i) ^ repeated) {
            break;
        }
        i += 8;
    }
    haystack.get(i..)?.iter().position(|&b| b == needle).map(|p| i + p)
}

/// The first byte at or after `from` that is `a` or `b`.
pub fn memchr2(a: u8, b: u8, haystack: &[u8], from: usize) -> Option<usize> {
    let (ra, rb) = (LO.wrapping_mul(a as u64), LO.wrapping_mul(b as u64));
    let mut i = from;
    while i + 8 <= haystack.len() {
        let word = word_at(haystack, i);
        if has_zero(word ^ ra) || has_zero(word ^ rb) {
            break;
        }
        i += 8;
    }
    haystack.get(i..)?.iter().position(|&c| c == a || c == b).map(|p| i + p)
}

/// The last `needle` byte before `end`.
pub fn memrchr(needle: u8, haystack: &[u8], end: usize) -> Option<usize> {
    haystack[..end].iter().rposition(|&b| b == needle)
}

/// How many `needle` bytes `haystack[from..to]` holds.
pub fn count(needle: u8, haystack: &[u8], from: usize, to: usize) -> usize {
    haystack[from..to].iter().filter(|&&b| b == needle).count()
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
    /// The offset of the rarest byte within the needle.
    rare: usize,
}

impl Finder {
    /// A finder for `needle` (lower-cased already when `fold`).
    pub fn new(needle: &[u8], fold: bool) -> Finder {
        let rare = (0..needle.len()).min_by_key(|&i| commonness(needle[i])).unwrap_or(0);
        Finder { needle: needle.to_vec(), fold, rare }
    }

    pub fn len(&self) -> usize {
        self.needle.len()
    }

    /// The first occurrence at or after `from`.
    pub fn find(&self, haystack: &[u8], from: usize) -> Option<usize> {
        let n = self.needle.len();
        if n == 0 {
            return (from <= haystack.len()).then_some(from);
        }
        let rare = self.needle[self.rare];
        let (lower, upper) = (rare.to_ascii_lowercase(), rare.to_ascii_uppercase());
        let folds = self.fold && lower != upper;
        let mut at = from + self.rare;
        loop {
            let hit = if folds {
                memchr2(lower, upper, haystack, at)?
            } else {
                memchr(rare, haystack, at)?
            };
            let start = hit - self.rare;
            if start + n > haystack.len() {
                return None;
            }
            let window = &haystack[start..start + n];
            let equal = if self.fold {
                window.eq_ignore_ascii_case(&self.needle)
            } else {
                window == self.needle.as_slice()
            };
            if equal {
                return Some(start);
            }
            at = hit + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The obvious search, to compare with.
    fn naive(needle: &[u8], haystack: &[u8], from: usize, fold: bool) -> Option<usize> {
        (from..=haystack.len().saturating_sub(needle.len()))
            .find(|&i| {
                let w = &haystack[i..i + needle.len()];
                if fold {
                    w.eq_ignore_ascii_case(needle)
                } else {
                    w == needle
                }
            })
            .filter(|&i| i + needle.len() <= haystack.len())
    }

    #[test]
    fn finds_what_the_obvious_search_finds() {
        let haystack =
            b"fn main() { let Error = x; } // ERROR error Errorr\nunsafe unwrap un\n".repeat(3);
        for needle in [&b"Error"[..], b"fn", b"un", b"unwrap", b"}\n", b"x", b"zzz", b"r\nu"] {
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
    fn byte_scans_agree_with_iterators_at_every_alignment() {
        let haystack: Vec<u8> = (0..200u32).map(|i| (i * 7 % 13) as u8 + b'a').collect();
        for from in 0..haystack.len() {
            for b in [b'a', b'c', b'm', b'z'] {
                let want = haystack[from..].iter().position(|&x| x == b).map(|p| p + from);
                assert_eq!(memchr(b, &haystack, from), want);
                let want2 =
                    haystack[from..].iter().position(|&x| x == b || x == b'd').map(|p| p + from);
                assert_eq!(memchr2(b, b'd', &haystack, from), want2);
            }
        }
        assert_eq!(memrchr(b'a', b"abca", 3), Some(0));
        assert_eq!(count(b'\n', b"a\nb\n\nc", 0, 6), 3);
    }
}
