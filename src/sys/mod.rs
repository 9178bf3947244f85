//! What std does not offer, one room per concern, and the only place with unsafe code (the
//! crate denies it elsewhere): the kernel's signals and process control (`signals`), child
//! processes that cannot outlive their call (`process`), directory handles and locks
//! (`dirfd`), the standard streams (`stdio`), `poll` over several descriptors (`poll`), and
//! the CPU's SSE2 instructions for grep's byte scan (`sse2`), and the few threads zero
//! starts (`threads`).

pub mod dirfd;
pub mod poll;
pub mod process;
pub mod sandbox;
pub mod signals;
pub mod sse2;
pub mod stdio;
pub mod threads;
