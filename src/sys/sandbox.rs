//! The bash tool's sandbox, from raw system calls: Landlock (`landlock_create_ruleset`,
//! `landlock_add_rule`, `landlock_restrict_self`) confines where a command may write, and a
//! seccomp filter refuses network sockets. The rules are built once, in the parent, before any
//! fork (a ruleset descriptor and a BPF program in memory the child shares); between fork and
//! exec the child only calls `prctl(PR_SET_NO_NEW_PRIVS)`, `landlock_restrict_self` and
//! `prctl(PR_SET_SECCOMP)`, which allocate nothing. The restriction is inherited by everything
//! the command starts and cannot be lifted.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const SYS_LANDLOCK_CREATE_RULESET: i64 = 444;
const SYS_LANDLOCK_ADD_RULE: i64 = 445;
const SYS_LANDLOCK_RESTRICT_SELF: i64 = 446;
const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
const LANDLOCK_RULE_PATH_BENEATH: i32 = 1;

// Filesystem rights, with the ABI that introduced each.
const FS_EXECUTE: u64 = 1 << 0;
const FS_WRITE_FILE: u64 = 1 << 1;
const FS_READ_FILE: u64 = 1 << 2;
const FS_READ_DIR: u64 = 1 << 3;
/// ABI 1: the thirteen rights from EXECUTE to MAKE_SYM.
const FS_ABI1: u64 = (1 << 13) - 1;
/// Making character and block devices: never allowed, even in writable directories (root
/// could make a node for a disk there and write the disk through it).
const FS_MAKE_DEVICES: u64 = (1 << 6) | (1 << 11);
const FS_REFER: u64 = 1 << 13; // ABI 2
const FS_TRUNCATE: u64 = 1 << 14; // ABI 3
const FS_IOCTL_DEV: u64 = 1 << 15; // ABI 5
                                   // Network rights (ABI 4).
const NET_BIND_TCP: u64 = 1 << 0;
const NET_CONNECT_TCP: u64 = 1 << 1;

const PR_SET_NO_NEW_PRIVS: i32 = 38;
/// `close_range` (Linux 5.11; on an older kernel it fails and nothing changes).
const SYS_CLOSE_RANGE: i64 = 436;
const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;
const PR_SET_SECCOMP: i32 = 22;
const PR_GET_SECCOMP: i32 = 21;
const SECCOMP_MODE_FILTER: u64 = 2;
const O_PATH: i32 = 0o10000000;
const O_CLOEXEC: i32 = 0o2000000;

extern "C" {
    fn syscall(number: i64, ...) -> i64;
    fn prctl(option: i32, ...) -> i32;
    fn open(path: *const std::ffi::c_char, flags: i32, ...) -> i32;
}

/// What this kernel offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version, when Landlock is there and enabled.
    pub landlock: Option<u32>,
    /// seccomp filters can be installed.
    pub seccomp: bool,
}

/// Asks the kernel once.
pub fn support() -> Support {
    static FOUND: OnceLock<Support> = OnceLock::new();
    *FOUND.get_or_init(|| {
        // SAFETY: with a null attribute and size 0, the VERSION flag only returns a number.
        let abi = unsafe {
            syscall(SYS_LANDLOCK_CREATE_RULESET, 0usize, 0usize, LANDLOCK_CREATE_RULESET_VERSION)
        };
        // SAFETY: PR_GET_SECCOMP takes no pointer; it fails with EINVAL without seccomp.
        let seccomp = unsafe { prctl(PR_GET_SECCOMP, 0u64, 0u64, 0u64, 0u64) } >= 0;
        Support { landlock: (abi > 0).then_some(abi as u32), seccomp }
    })
}

/// The filesystem rights an ABI knows.
fn fs_rights(abi: u32) -> u64 {
    let mut rights = FS_ABI1;
    if abi >= 2 {
        rights |= FS_REFER;
    }
    if abi >= 3 {
        rights |= FS_TRUNCATE;
    }
    if abi >= 5 {
        rights |= FS_IOCTL_DEV;
    }
    rights
}

/// The rights a rule on a file (not a directory) may carry.
fn file_rights(abi: u32) -> u64 {
    fs_rights(abi) & (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)
}

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    /// ABI 6: what a sandboxed process may not reach outside its domain.
    scoped: u64,
}

/// ABI 6 scopes: abstract Unix sockets, and signals (a command cannot signal zero, its MCP
/// servers or any other process outside the sandbox).
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// One instruction of a classic BPF program (`struct sock_filter`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct SockFilter {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const SockFilter,
}

/// What a sandboxed command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Directories (and files) written under: everything else is read-only.
    pub writable: Vec<PathBuf>,
    /// Device files and directories that are always writable.
    pub devices: Vec<PathBuf>,
    /// Refuse every socket but Unix ones, and TCP bind and connect.
    pub no_network: bool,
}

/// The rules of a policy, ready for any number of children.
pub struct Prepared {
    ruleset: Option<OwnedFd>,
    filter: Option<Box<[SockFilter]>>,
}

/// Builds the rules (in the parent, before any fork). `abi` is the Landlock ABI to use
/// (`None`: no filesystem rules); a path that does not exist is left out.
pub fn prepare(policy: &Policy, abi: Option<u32>) -> Result<Prepared, String> {
    let ruleset = match abi {
        Some(abi) => Some(ruleset(policy, abi)?),
        None => None,
    };
    let filter = policy.no_network.then(network_filter);
    Ok(Prepared { ruleset, filter })
}

fn ruleset(policy: &Policy, abi: u32) -> Result<OwnedFd, String> {
    let handled_fs = fs_rights(abi);
    let handled_net =
        if policy.no_network && abi >= 4 { NET_BIND_TCP | NET_CONNECT_TCP } else { 0 };
    let scoped = match (abi >= 6, policy.no_network) {
        (false, _) => 0,
        (true, true) => SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET,
        (true, false) => SCOPE_SIGNAL,
    };
    let attr =
        RulesetAttr { handled_access_fs: handled_fs, handled_access_net: handled_net, scoped };
    // Each ABI reads the fields it knows: the first, the first two (4), all three (6).
    let size = match abi {
        0..=3 => 8,
        4 | 5 => 16,
        _ => std::mem::size_of::<RulesetAttr>(),
    };
    // SAFETY: `attr` is a valid ruleset attribute of `size` bytes (the first field alone for
    // ABIs without networking), alive for the call.
    let fd =
        unsafe { syscall(SYS_LANDLOCK_CREATE_RULESET, &attr as *const RulesetAttr, size, 0u32) };
    if fd < 0 {
        return Err(format!("landlock_create_ruleset: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the kernel just returned this descriptor (close-on-exec), owned by nothing else.
    let ruleset = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    let read = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
    add_rule(&ruleset, Path::new("/"), read)?;
    let writable = handled_fs & !FS_MAKE_DEVICES;
    for dir in &policy.writable {
        let is_dir = dir.is_dir();
        add_rule(&ruleset, dir, if is_dir { writable } else { file_rights(abi) })?;
    }
    for device in &policy.devices {
        let rights = if device.is_dir() { writable } else { file_rights(abi) & !FS_EXECUTE };
        add_rule(&ruleset, device, rights)?;
    }
    Ok(ruleset)
}

/// Allows `rights` beneath `path` (a path that does not exist is skipped).
fn add_rule(ruleset: &OwnedFd, path: &Path, rights: u64) -> Result<(), String> {
    let Ok(name) = CString::new(path.as_os_str().as_bytes()) else { return Ok(()) };
    // SAFETY: `name` is a NUL-terminated path; O_PATH opens without reading anything.
    let fd = unsafe { open(name.as_ptr(), O_PATH | O_CLOEXEC) };
    if fd < 0 {
        return Ok(());
    }
    // SAFETY: the descriptor was just opened and is owned here.
    let parent = unsafe { OwnedFd::from_raw_fd(fd) };
    let attr = PathBeneathAttr { allowed_access: rights, parent_fd: parent.as_raw_fd() };
    // SAFETY: `attr` is a valid path-beneath attribute alive for the call.
    let done = unsafe {
        syscall(
            SYS_LANDLOCK_ADD_RULE,
            ruleset.as_raw_fd(),
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    if done < 0 {
        return Err(format!(
            "landlock_add_rule {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// The audit architecture and the socket and io_uring_setup numbers of this target.
#[cfg(target_arch = "x86_64")]
const ARCH: (u32, u32, u32) = (0xC000_003E, 41, 425);
#[cfg(target_arch = "aarch64")]
const ARCH: (u32, u32, u32) = (0xC000_00B7, 198, 425);
#[cfg(target_arch = "riscv64")]
const ARCH: (u32, u32, u32) = (0xC000_00F3, 198, 425);

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
/// SECCOMP_RET_KILL_PROCESS: the whole process, not only the calling thread.
const RET_KILL: u32 = 0x8000_0000;
const RET_EACCES: u32 = 0x0005_0000 | 13;
const AF_UNIX: u32 = 1;

/// The network filter: `socket()` of any family but `AF_UNIX` fails with EACCES (so programs
/// fail at once with a clear error instead of hanging), as does `io_uring_setup` (whose
/// operations could open sockets); another architecture's calls (x32) are killed.
fn network_filter() -> Box<[SockFilter]> {
    let (arch, socket, io_uring_setup) = ARCH;
    let op = |code, jt, jf, k| SockFilter { code, jt, jf, k };
    vec![
        op(BPF_LD_W_ABS, 0, 0, 4), // seccomp_data.arch
        op(BPF_JEQ_K, 1, 0, arch),
        op(BPF_RET_K, 0, 0, RET_KILL),
        op(BPF_LD_W_ABS, 0, 0, 0),        // seccomp_data.nr
        op(BPF_JGE_K, 0, 1, 0x4000_0000), // the x32 numbers
        op(BPF_RET_K, 0, 0, RET_KILL),
        op(BPF_JEQ_K, 0, 1, io_uring_setup),
        op(BPF_RET_K, 0, 0, RET_EACCES),
        op(BPF_JEQ_K, 1, 0, socket),
        op(BPF_RET_K, 0, 0, RET_ALLOW),
        op(BPF_LD_W_ABS, 0, 0, 16), // seccomp_data.args[0], its low half
        op(BPF_JEQ_K, 0, 1, AF_UNIX),
        op(BPF_RET_K, 0, 0, RET_ALLOW),
        op(BPF_RET_K, 0, 0, RET_EACCES),
    ]
    .into_boxed_slice()
}

impl Prepared {
    /// Makes `command`'s child confine itself between fork and exec.
    pub fn apply_to(&self, command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let ruleset = self.ruleset.as_ref().map_or(-1, AsRawFd::as_raw_fd);
        let filter = self.filter.as_ref().map(|f| (f.as_ptr() as usize, f.len()));
        // SAFETY: between fork and exec only prctl and syscall are called, with integers and
        // pointers into memory the parent allocated before the fork (the child has a copy);
        // nothing allocates.
        unsafe {
            command.pre_exec(move || {
                if prctl(PR_SET_NO_NEW_PRIVS, 1u64, 0u64, 0u64, 0u64) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if ruleset >= 0 && syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0u32) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Descriptors zero inherited (a socket, a file opened for writing) would let
                // the command around the rules: every one from 3 up closes at exec.
                syscall(SYS_CLOSE_RANGE, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC);
                if let Some((at, len)) = filter {
                    let program = SockFprog { len: len as u16, filter: at as *const SockFilter };
                    if prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program as *const SockFprog) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rights_follow_the_abi() {
        assert_eq!(fs_rights(1), 0x1fff);
        assert_eq!(fs_rights(2), 0x3fff);
        assert_eq!(fs_rights(4), 0x7fff);
        assert_eq!(fs_rights(7), 0xffff);
        assert_eq!(
            file_rights(7),
            FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
        );
        assert_eq!(std::mem::size_of::<PathBeneathAttr>(), 12);
        // Every jump of the filter lands inside it.
        let filter = network_filter();
        for (i, op) in filter.iter().enumerate() {
            if op.code == BPF_JEQ_K || op.code == BPF_JGE_K {
                assert!(i + 1 + (op.jt.max(op.jf) as usize) < filter.len(), "{i}");
            }
        }
    }
}
