//! The SSE2 instructions grep's byte scan uses, as safe functions. Rust marks every intrinsic
//! unsafe to call from code that does not name its CPU feature, even when the whole build has
//! it; this module is compiled only when the build has SSE2 (every x86_64 target's baseline),
//! so calling them is sound, and the scan itself needs no unsafe code.
#![cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#![allow(unsafe_code)]

use std::arch::x86_64 as arch;

pub use arch::__m128i as Lanes;

macro_rules! sse2 {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {$(
        #[inline(always)]
        pub fn $name($($arg: $ty),*) -> $out {
            // SAFETY: the build enables SSE2 (the cfg at the top of this module).
            unsafe { arch::$name($($arg),*) }
        }
    )*};
}

sse2! {
    _mm_set1_epi8(byte: i8) -> Lanes;
    _mm_set_epi64x(high: i64, low: i64) -> Lanes;
    _mm_setzero_si128() -> Lanes;
    _mm_cmpeq_epi8(a: Lanes, b: Lanes) -> Lanes;
    _mm_or_si128(a: Lanes, b: Lanes) -> Lanes;
    _mm_and_si128(a: Lanes, b: Lanes) -> Lanes;
    _mm_movemask_epi8(a: Lanes) -> i32;
}
