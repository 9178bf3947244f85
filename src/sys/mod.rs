//! The FFI to the kernel that std does not offer, one room per concern, and the only place
//! with unsafe code: signals and process control (`signals`), child processes that cannot
//! outlive their call (`process`), directory handles and locks (`dirfd`), the standard
//! streams (`stdio`), and `poll` over several descriptors (`poll`).

pub mod dirfd;
pub mod poll;
pub mod process;
pub mod signals;
pub mod stdio;
