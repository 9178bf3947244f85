//! The FFI to the kernel that std does not offer, one room per concern, and the only place
//! with unsafe code: signals and process control (`signals`), child processes that cannot
//! outlive their call (`process`), directory handles and locks (`dirfd`), and the standard
//! streams waited on with `poll` (`stdio`).

pub mod dirfd;
pub mod process;
pub mod signals;
pub mod stdio;
