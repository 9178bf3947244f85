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
use std::sync::{Arc, OnceLock};

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
    /// Refuse typing into a terminal (`TIOCSTI`, `TIOCLINUX`) and writing extended
    /// attributes, which Landlock does not mediate.
    pub no_terminal_input_or_xattrs: bool,
}

/// Why the rules could not be built.
#[derive(Debug)]
pub enum SandboxError {
    /// The kernel refused the ruleset.
    Ruleset(std::io::Error),
    /// The kernel refused a rule for this path.
    Rule(PathBuf, std::io::Error),
}

impl std::fmt::Display for SandboxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SandboxError::Ruleset(err) => write!(f, "landlock_create_ruleset: {err}"),
            SandboxError::Rule(path, err) => {
                write!(f, "landlock_add_rule {}: {err}", path.display())
            }
        }
    }
}

impl std::error::Error for SandboxError {}

/// The rules of a policy, ready for any number of children.
pub struct Prepared {
    ruleset: Option<OwnedFd>,
    filter: Option<Box<[SockFilter]>>,
}

/// Builds the rules (in the parent, before any fork). `abi` is the Landlock ABI to use
/// (`None`: no filesystem rules); a path that does not exist is left out.
pub fn prepare(policy: &Policy, abi: Option<u32>) -> Result<Prepared, SandboxError> {
    let ruleset = match abi {
        Some(abi) => Some(ruleset(policy, abi)?),
        None => None,
    };
    let refuse = Refusals {
        network: policy.no_network,
        terminal_input_and_xattrs: policy.no_terminal_input_or_xattrs,
    };
    let filter =
        (refuse.network || refuse.terminal_input_and_xattrs).then(|| filter(&THIS, refuse));
    Ok(Prepared { ruleset, filter })
}

fn ruleset(policy: &Policy, abi: u32) -> Result<OwnedFd, SandboxError> {
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
        return Err(SandboxError::Ruleset(std::io::Error::last_os_error()));
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
fn add_rule(ruleset: &OwnedFd, path: &Path, rights: u64) -> Result<(), SandboxError> {
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
        return Err(SandboxError::Rule(path.to_path_buf(), std::io::Error::last_os_error()));
    }
    Ok(())
}

/// The numbers a seccomp filter needs on one architecture: its audit value (`AUDIT_ARCH_*`)
/// and its system call numbers (`asm/unistd.h`). Plain data, compiled on every target, so
/// each architecture's table is checked by the tests wherever they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arch {
    pub name: &'static str,
    pub audit: u32,
    pub socket: u32,
    pub ioctl: u32,
    pub io_uring_setup: u32,
    /// `setxattr`, `lsetxattr`, `fsetxattr`, `removexattr`, `lremovexattr`, `fremovexattr`,
    /// `setxattrat`, `removexattrat`.
    pub xattr_writes: [u32; 8],
}

pub const X86_64: Arch = Arch {
    name: "x86_64",
    audit: 0xC000_003E,
    socket: 41,
    ioctl: 16,
    io_uring_setup: 425,
    xattr_writes: [188, 189, 190, 197, 198, 199, 463, 466],
};

/// aarch64 and riscv64 share the generic table (`asm-generic/unistd.h`).
pub const AARCH64: Arch = Arch {
    name: "aarch64",
    audit: 0xC000_00B7,
    socket: 198,
    ioctl: 29,
    io_uring_setup: 425,
    xattr_writes: [5, 6, 7, 14, 15, 16, 463, 466],
};

pub const RISCV64: Arch = Arch { name: "riscv64", audit: 0xC000_00F3, ..AARCH64 };

/// This target's table.
pub const THIS: Arch = if cfg!(target_arch = "x86_64") {
    X86_64
} else if cfg!(target_arch = "aarch64") {
    AARCH64
} else {
    RISCV64
};

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
/// SECCOMP_RET_KILL_PROCESS: the whole process, not only the calling thread.
const RET_KILL: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const EPERM: u32 = 1;
const EACCES: u32 = 13;
/// `EOPNOTSUPP`: what a filesystem without extended attributes answers. Programs expect it
/// (`cp -a` then sets plain modes; EPERM made it fail).
const EOPNOTSUPP: u32 = 95;
const AF_UNIX: u32 = 1;
/// The ioctls that put characters into a terminal's input queue: a command could type into
/// the user's shell, which would run what it typed once zero exits, unconfined.
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;
/// Offsets into `struct seccomp_data`: `nr`, `arch`, then (after the 8-byte instruction
/// pointer) `args[6]`, 8 bytes each; the low half of each comes first (little endian, as on
/// every target zero builds for).
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
const fn data_arg_low(n: u32) -> u32 {
    16 + 8 * n
}

/// What the seccomp filter refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Refusals {
    /// Every socket but a Unix one, and `io_uring_setup` (EACCES).
    network: bool,
    /// `TIOCSTI` and `TIOCLINUX` (EPERM), and writing extended attributes (EOPNOTSUPP).
    terminal_input_and_xattrs: bool,
}

/// The filter: another architecture's calls (x32 on x86_64) kill the process; then each
/// refusal asked for; everything else is allowed. A network refusal is EACCES, so programs
/// fail at once with a clear error instead of hanging.
fn filter(arch: &Arch, refuse: Refusals) -> Box<[SockFilter]> {
    let op = |code, jt, jf, k| SockFilter { code, jt, jf, k };
    let mut program = vec![
        op(BPF_LD_W_ABS, 0, 0, DATA_ARCH),
        op(BPF_JEQ_K, 1, 0, arch.audit),
        op(BPF_RET_K, 0, 0, RET_KILL),
        op(BPF_LD_W_ABS, 0, 0, DATA_NR),
        op(BPF_JGE_K, 0, 1, 0x4000_0000), // the x32 numbers
        op(BPF_RET_K, 0, 0, RET_KILL),
    ];
    let refuse_call = |program: &mut Vec<SockFilter>, nr: u32, errno: u32| {
        program.extend([
            op(BPF_LD_W_ABS, 0, 0, DATA_NR),
            op(BPF_JEQ_K, 0, 1, nr),
            op(BPF_RET_K, 0, 0, RET_ERRNO | errno),
        ]);
    };
    if refuse.network {
        refuse_call(&mut program, arch.io_uring_setup, EACCES);
        program.extend([
            op(BPF_LD_W_ABS, 0, 0, DATA_NR),
            op(BPF_JEQ_K, 0, 3, arch.socket),
            op(BPF_LD_W_ABS, 0, 0, data_arg_low(0)),
            op(BPF_JEQ_K, 1, 0, AF_UNIX),
            op(BPF_RET_K, 0, 0, RET_ERRNO | EACCES),
        ]);
    }
    if refuse.terminal_input_and_xattrs {
        // The kernel reads an ioctl's request as 32 bits: only the low half is compared, so
        // high bits set by the caller do not slip past.
        program.extend([
            op(BPF_LD_W_ABS, 0, 0, DATA_NR),
            op(BPF_JEQ_K, 0, 4, arch.ioctl),
            op(BPF_LD_W_ABS, 0, 0, data_arg_low(1)),
            op(BPF_JEQ_K, 1, 0, TIOCSTI),
            op(BPF_JEQ_K, 0, 1, TIOCLINUX),
            op(BPF_RET_K, 0, 0, RET_ERRNO | EPERM),
        ]);
        for nr in arch.xattr_writes {
            refuse_call(&mut program, nr, EOPNOTSUPP);
        }
    }
    program.push(op(BPF_RET_K, 0, 0, RET_ALLOW));
    program.into_boxed_slice()
}

impl Prepared {
    /// Makes `command`'s child confine itself between fork and exec. The child's hook owns a
    /// reference to these rules, so the ruleset descriptor and the filter it points into live
    /// as long as the command can spawn: no caller can free them first.
    pub fn apply_to(prepared: &Arc<Prepared>, command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let rules = Arc::clone(prepared);
        // SAFETY: between fork and exec only prctl and syscall are called, with integers and
        // pointers into `rules`, which the hook owns (the child has a copy of its memory);
        // reading through the Arc allocates nothing.
        unsafe {
            command.pre_exec(move || {
                let ruleset = rules.ruleset.as_ref().map_or(-1, AsRawFd::as_raw_fd);
                if prctl(PR_SET_NO_NEW_PRIVS, 1u64, 0u64, 0u64, 0u64) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if ruleset >= 0 && syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0u32) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Descriptors zero inherited (a socket, a file opened for writing) would let
                // the command around the rules: every one from 3 up closes at exec.
                syscall(SYS_CLOSE_RANGE, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC);
                if let Some(filter) = rules.filter.as_deref() {
                    let program = SockFprog { len: filter.len() as u16, filter: filter.as_ptr() };
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
    }

    /// What the kernel would decide for one call: the filter run on a `seccomp_data`.
    fn verdict(program: &[SockFilter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, arg) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&arg.to_le_bytes());
        }
        let (mut acc, mut pc) = (0u32, 0usize);
        loop {
            let op = program[pc];
            pc += 1;
            match op.code {
                BPF_LD_W_ABS => {
                    let at = op.k as usize;
                    acc = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
                }
                BPF_JEQ_K => pc += usize::from(if acc == op.k { op.jt } else { op.jf }),
                BPF_JGE_K => pc += usize::from(if acc >= op.k { op.jt } else { op.jf }),
                BPF_RET_K => return op.k,
                other => panic!("unknown instruction {other:#x}"),
            }
            assert!(pc < program.len(), "a jump left the program");
        }
    }

    #[test]
    fn the_filter_refuses_what_it_says_on_every_architecture() {
        let denied = |errno| RET_ERRNO | errno;
        for arch in [X86_64, AARCH64, RISCV64] {
            let both = filter(&arch, Refusals { network: true, terminal_input_and_xattrs: true });
            let call = |nr, args| verdict(&both, arch.audit, nr, args);
            let none = [0u64; 6];
            let with = |a0: u64, a1: u64| [a0, a1, 0, 0, 0, 0];
            assert_eq!(call(arch.socket, with(2, 1)), denied(EACCES), "{}", arch.name);
            assert_eq!(call(arch.socket, with(1, 1)), RET_ALLOW, "{}: AF_UNIX", arch.name);
            assert_eq!(call(arch.io_uring_setup, none), denied(EACCES));
            assert_eq!(call(arch.ioctl, with(0, 0x5412)), denied(EPERM), "{}: TIOCSTI", arch.name);
            assert_eq!(call(arch.ioctl, with(0, 0x541C)), denied(EPERM), "TIOCLINUX");
            // The kernel reads the request's low 32 bits: high bits do not slip past.
            assert_eq!(call(arch.ioctl, with(0, 0xffff_ffff_0000_5412)), denied(EPERM));
            // Reading a terminal's size (TIOCGWINSZ) and every other ioctl stay allowed.
            assert_eq!(call(arch.ioctl, with(0, 0x5413)), RET_ALLOW);
            for nr in arch.xattr_writes {
                assert_eq!(call(nr, none), denied(EOPNOTSUPP), "{}: {nr}", arch.name);
            }
            assert_eq!(call(arch.ioctl + 1000, none), RET_ALLOW);
            // Another architecture's calls, and x32's numbers, kill the process.
            assert_eq!(verdict(&both, arch.audit ^ 1, arch.socket, none), RET_KILL);
            assert_eq!(call(0x4000_0000 | arch.socket, none), RET_KILL);
            // Each refusal alone.
            let network =
                filter(&arch, Refusals { network: true, terminal_input_and_xattrs: false });
            assert_eq!(verdict(&network, arch.audit, arch.ioctl, with(0, 0x5412)), RET_ALLOW);
            assert_eq!(verdict(&network, arch.audit, arch.socket, with(10, 1)), denied(EACCES));
            let terminal =
                filter(&arch, Refusals { network: false, terminal_input_and_xattrs: true });
            assert_eq!(verdict(&terminal, arch.audit, arch.socket, with(2, 1)), RET_ALLOW);
            assert_eq!(verdict(&terminal, arch.audit, arch.ioctl, with(0, 0x5412)), denied(EPERM));
        }
    }

    /// `#define __NR_<name> <number>` lines of a header, when the machine has it.
    fn numbers_in(header: &str) -> Option<std::collections::HashMap<String, u32>> {
        let text = std::fs::read_to_string(header).ok()?;
        Some(
            text.lines()
                .filter_map(|l| {
                    let rest = l.strip_prefix("#define __NR_")?;
                    let (name, value) = rest.split_once(char::is_whitespace)?;
                    Some((name.to_string(), value.trim().parse().ok()?))
                })
                .collect(),
        )
    }

    #[test]
    fn each_architectures_numbers_are_the_kernels() {
        if !std::path::Path::new("/usr/include/asm-generic/unistd.h").exists() {
            return crate::testing::kit::skip(
                "syscall numbers against the kernel's",
                crate::testing::kit::Skip::Missing,
                "the kernel headers (linux-libc-dev) are not installed",
            );
        }
        let names = [
            "setxattr",
            "lsetxattr",
            "fsetxattr",
            "removexattr",
            "lremovexattr",
            "fremovexattr",
            "setxattrat",
            "removexattrat",
        ];
        let tables = [
            (X86_64, "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
            (AARCH64, "/usr/include/asm-generic/unistd.h"),
            (RISCV64, "/usr/include/asm-generic/unistd.h"),
        ];
        let mut checked = 0;
        for (arch, header) in tables {
            let Some(kernel) = numbers_in(header) else { continue };
            let mut expect = |name: &str, ours: u32| {
                // Headers older than the call (setxattrat is Linux 6.13) do not name it.
                if let Some(&theirs) = kernel.get(name) {
                    assert_eq!(ours, theirs, "{}: {name}", arch.name);
                    checked += 1;
                }
            };
            expect("socket", arch.socket);
            expect("ioctl", arch.ioctl);
            expect("io_uring_setup", arch.io_uring_setup);
            expect("landlock_create_ruleset", SYS_LANDLOCK_CREATE_RULESET as u32);
            expect("landlock_add_rule", SYS_LANDLOCK_ADD_RULE as u32);
            expect("landlock_restrict_self", SYS_LANDLOCK_RESTRICT_SELF as u32);
            expect("close_range", SYS_CLOSE_RANGE as u32);
            for (name, nr) in names.iter().zip(arch.xattr_writes) {
                expect(name, nr);
            }
        }
        // The audit values: EM_<machine> with the 64-bit and little-endian bits.
        if let Ok(elf) = std::fs::read_to_string("/usr/include/linux/elf-em.h") {
            let machine = |name: &str| -> Option<u32> {
                let line = elf.lines().find(|l| l.split_whitespace().nth(1) == Some(name))?;
                line.split_whitespace().nth(2)?.parse().ok()
            };
            for (arch, em) in
                [(X86_64, "EM_X86_64"), (AARCH64, "EM_AARCH64"), (RISCV64, "EM_RISCV")]
            {
                if let Some(number) = machine(em) {
                    assert_eq!(arch.audit, number | 0x8000_0000 | 0x4000_0000, "{}", arch.name);
                    checked += 1;
                }
            }
        }
        assert!(checked >= 30, "{checked}");
    }
}
