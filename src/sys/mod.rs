//! The FFI to the kernel that std does not offer, one room per concern; the only place with
//! unsafe code.

pub mod stdio;
