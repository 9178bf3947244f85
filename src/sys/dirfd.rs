//! Filesystem calls relative to an open directory handle (the `openat` family), directory
//! reading, and advisory file locks: the FFI under the workspace confinement of the file tools
//! (`tools::workspace`) and the session locks (`session`).
//!
//! std opens files by path only, so a path that was checked and then opened can be swapped
//! between the two steps (a directory replaced by a symbolic link to somewhere else). Every
//! call here takes one name (never a path) relative to a directory handle already held, and
//! none follows a symbolic link: deciding what a link means is the caller's job. Files are
//! opened non-blocking, so a FIFO cannot stall an open; callers check the file type with
//! `fstat` (std's `File::metadata`) on what they opened.
//!
//! The flag values and the `dirent` layout below are those of 64-bit Linux (glibc and musl
//! agree on them).
#![allow(unsafe_code)]

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64")
)))]
compile_error!("zero supports 64-bit Linux (x86_64, aarch64, riscv64): see src/dirfd.rs");

use std::ffi::{c_char, c_int, c_long, CString, OsStr, OsString};
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

const O_RDONLY: c_int = 0;
const O_WRONLY: c_int = 0o1;
const O_RDWR: c_int = 0o2;
const O_CREAT: c_int = 0o100;
const O_APPEND: c_int = 0o2000;
const O_EXCL: c_int = 0o200;
const O_NOCTTY: c_int = 0o400;
const O_NONBLOCK: c_int = 0o4000;
const O_CLOEXEC: c_int = 0o2000000;
const O_PATH: c_int = 0o10000000;
#[cfg(target_arch = "aarch64")]
const O_DIRECTORY: c_int = 0o40000;
#[cfg(target_arch = "aarch64")]
const O_NOFOLLOW: c_int = 0o100000;
#[cfg(not(target_arch = "aarch64"))]
const O_DIRECTORY: c_int = 0o200000;
#[cfg(not(target_arch = "aarch64"))]
const O_NOFOLLOW: c_int = 0o400000;
const AT_FDCWD: c_int = -100;
const AT_REMOVEDIR: c_int = 0x200;
const LOCK_EX: c_int = 2;
const LOCK_NB: c_int = 4;
/// `errno` values the callers tell apart.
pub const ELOOP: i32 = 40;
pub const ENOTDIR: i32 = 20;
pub const EINVAL: i32 = 22;
const EWOULDBLOCK: i32 = 11;
const EINTR: i32 = 4;
const EPERM: i32 = 1;
const EACCES: i32 = 13;
const EROFS: i32 = 30;
/// `d_type` values of `struct dirent`.
const DT_DIR: u8 = 4;
const DT_REG: u8 = 8;
const DT_LNK: u8 = 10;
const DT_UNKNOWN: u8 = 0;
const SEEK_SET: c_int = 0;
#[cfg(target_arch = "x86_64")]
const SYS_GETDENTS64: c_long = 217;
#[cfg(any(target_arch = "aarch64", target_arch = "riscv64"))]
const SYS_GETDENTS64: c_long = 61;
/// Offsets in `struct dirent` on 64-bit Linux: `d_ino` (8), `d_off` (8), `d_reclen` (2),
/// `d_type` (1), then `d_name`.
const DIRENT_TYPE: usize = 18;
const DIRENT_NAME: usize = 19;

extern "C" {
    fn openat(dirfd: c_int, path: *const c_char, flags: c_int, ...) -> c_int;
    fn mkdirat(dirfd: c_int, path: *const c_char, mode: u32) -> c_int;
    fn unlinkat(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int;
    fn renameat(
        olddirfd: c_int,
        oldpath: *const c_char,
        newdirfd: c_int,
        newpath: *const c_char,
    ) -> c_int;
    fn readlinkat(dirfd: c_int, path: *const c_char, buf: *mut u8, size: usize) -> isize;
    fn syscall(number: c_long, ...) -> c_long;
    fn lseek(fd: c_int, offset: i64, whence: c_int) -> i64;
    fn flock(fd: c_int, operation: c_int) -> c_int;
    fn faccessat(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int;
}

/// What a directory entry is, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device: never opened by the tools.
    Special,
}

impl Kind {
    pub fn of(meta: &Metadata) -> Kind {
        let t = meta.file_type();
        if t.is_symlink() {
            Kind::Symlink
        } else if t.is_dir() {
            Kind::Dir
        } else if t.is_file() {
            Kind::File
        } else {
            Kind::Special
        }
    }
}

/// One entry of a directory listing.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: OsString,
    pub kind: Kind,
}

/// An open directory.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
}

/// A single path component as a C string: not empty, not `.` or `..`, no `/` or NUL.
fn component(name: &OsStr) -> io::Result<CString> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes == b"." || bytes == b".." || bytes.contains(&b'/') {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a single path component"));
    }
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a name"))
}

/// A file descriptor returned by a call, or the call's `errno`; EINTR is retried.
fn check_fd(call: impl Fn() -> c_int) -> io::Result<OwnedFd> {
    loop {
        let fd = call();
        if fd >= 0 {
            // SAFETY: the call returned a new descriptor that nothing else owns.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(EINTR) {
            return Err(err);
        }
    }
}

fn check(result: c_int) -> io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Dir {
    /// Opens a directory by path (following links: this is the trusted starting point).
    pub fn open(path: &Path) -> io::Result<Dir> {
        let path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a path"))?;
        // SAFETY: `path` is a valid C string for the duration of the call.
        let fd = check_fd(|| unsafe {
            openat(AT_FDCWD, path.as_ptr(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        })?;
        Ok(Dir { fd })
    }

    fn open_at(&self, name: &OsStr, flags: c_int, mode: u32) -> io::Result<OwnedFd> {
        let name = component(name)?;
        let dir = self.fd.as_raw_fd();
        // SAFETY: `name` is a valid C string and `dir` an open descriptor for the call.
        check_fd(|| unsafe { openat(dir, name.as_ptr(), flags | O_CLOEXEC | O_NOFOLLOW, mode) })
    }

    /// The subdirectory `name`; a symbolic link fails with ELOOP or ENOTDIR.
    pub fn open_dir(&self, name: &OsStr) -> io::Result<Dir> {
        let fd = self.open_at(name, O_RDONLY | O_DIRECTORY, 0)?;
        Ok(Dir { fd })
    }

    /// Whether this process may write `name` (not following a link), as the kernel decides
    /// for an open: its permissions, owner and groups, capabilities, a read-only mount.
    pub fn may_write(&self, name: &OsStr) -> io::Result<bool> {
        const W_OK: c_int = 2;
        const AT_EACCESS: c_int = 0x200;
        const AT_SYMLINK_NOFOLLOW: c_int = 0x100;
        let name = component(name)?;
        // SAFETY: `name` is a valid C string and the descriptor is open for the call.
        let status = unsafe {
            faccessat(self.fd.as_raw_fd(), name.as_ptr(), W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW)
        };
        if status == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(EACCES | EPERM | EROFS) => Ok(false),
            _ => Err(err),
        }
    }

    /// Opens `name` for reading without blocking (a FIFO opens at once) and without
    /// following a link (ELOOP). The caller checks the type of what it got.
    pub fn open_read(&self, name: &OsStr) -> io::Result<File> {
        self.open_at(name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0).map(File::from)
    }

    /// Creates `name`, which must not exist in any form (a link there is EEXIST too).
    pub fn create_new(&self, name: &OsStr, mode: u32) -> io::Result<File> {
        self.open_at(name, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY, mode).map(File::from)
    }

    /// Opens `name` for appending (and reading, for a repair of its end), creating it when
    /// `create`, without following a link (ELOOP) and without blocking on a FIFO (which
    /// fails with ENXIO). The caller checks the type of what it got.
    pub fn open_append(&self, name: &OsStr, create: bool) -> io::Result<File> {
        let flags = O_RDWR | O_APPEND | O_NOCTTY | O_NONBLOCK | if create { O_CREAT } else { 0 };
        self.open_at(name, flags, 0o644).map(File::from)
    }

    /// Flushes the directory's entries to disk.
    pub fn sync(&self) -> io::Result<()> {
        File::from(self.fd.try_clone()?).sync_all()
    }

    /// Opens (creating if needed) a lock file for reading and writing, or only for reading
    /// when it cannot be written: an advisory lock works on either.
    pub fn open_lock(&self, name: &OsStr) -> io::Result<File> {
        self.open_at(name, O_RDWR | O_CREAT | O_NOCTTY | O_NONBLOCK, 0o644)
            .or_else(|_| self.open_at(name, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0))
            .map(File::from)
    }

    /// What `name` is, without following it (`lstat`).
    pub fn metadata(&self, name: &OsStr) -> io::Result<Metadata> {
        File::from(self.open_at(name, O_PATH, 0)?).metadata()
    }

    /// What this directory is.
    pub fn own_metadata(&self) -> io::Result<Metadata> {
        File::from(self.fd.try_clone()?).metadata()
    }

    pub fn mkdir(&self, name: &OsStr, mode: u32) -> io::Result<()> {
        let name = component(name)?;
        // SAFETY: valid C string and descriptor for the duration of the call.
        check(unsafe { mkdirat(self.fd.as_raw_fd(), name.as_ptr(), mode) })
    }

    /// Removes the file (or link, or other non-directory) `name`.
    pub fn unlink(&self, name: &OsStr) -> io::Result<()> {
        let name = component(name)?;
        // SAFETY: valid C string and descriptor for the duration of the call.
        check(unsafe { unlinkat(self.fd.as_raw_fd(), name.as_ptr(), 0) })
    }

    /// Removes the empty directory `name`.
    pub fn rmdir(&self, name: &OsStr) -> io::Result<()> {
        let name = component(name)?;
        // SAFETY: valid C string and descriptor for the duration of the call.
        check(unsafe { unlinkat(self.fd.as_raw_fd(), name.as_ptr(), AT_REMOVEDIR) })
    }

    /// Renames `from` in this directory to `to` in `target` (atomically replacing it).
    pub fn rename(&self, from: &OsStr, target: &Dir, to: &OsStr) -> io::Result<()> {
        let from = component(from)?;
        let to = component(to)?;
        // SAFETY: valid C strings and descriptors for the duration of the call.
        check(unsafe {
            renameat(self.fd.as_raw_fd(), from.as_ptr(), target.fd.as_raw_fd(), to.as_ptr())
        })
    }

    /// The target of the symbolic link `name`; EINVAL when it is not a link.
    pub fn read_link(&self, name: &OsStr) -> io::Result<OsString> {
        let name = component(name)?;
        let mut buf = vec![0u8; 4096];
        // SAFETY: `buf` is writable for `buf.len()` bytes; the name is a valid C string.
        let n =
            unsafe { readlinkat(self.fd.as_raw_fd(), name.as_ptr(), buf.as_mut_ptr(), buf.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n as usize >= buf.len() {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "link target too long"));
        }
        buf.truncate(n as usize);
        Ok(OsString::from_vec(buf))
    }

    /// The entries of this directory (without `.` and `..`), unsorted, at most `limit`.
    /// Read with getdents64 straight from the handle: readdir would want a descriptor of its
    /// own (a dup, an fstat, a close more per directory).
    pub fn entries(&self, limit: usize) -> io::Result<Vec<Entry>> {
        let fd = self.fd.as_raw_fd();
        // A listing starts at the first entry, however often this handle was listed before.
        // SAFETY: `fd` is an open descriptor for the call.
        if unsafe { lseek(fd, 0, SEEK_SET) } < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut buf = vec![0u8; 32 * 1024];
        let mut out = Vec::new();
        while out.len() < limit {
            // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`.
            let n = unsafe { syscall(SYS_GETDENTS64, fd, buf.as_mut_ptr(), buf.len()) };
            if n < 0 {
                let err = io::Error::last_os_error();
                if err.raw_os_error() == Some(EINTR) {
                    continue;
                }
                return Err(err);
            }
            if n == 0 {
                break;
            }
            // Records: inode (8 bytes), offset (8), length (2), type (1), name (NUL-ended).
            let mut at = 0;
            while at < n as usize && out.len() < limit {
                let record = &buf[at..n as usize];
                let Some(len) =
                    record.get(16..18).map(|b| u16::from_ne_bytes([b[0], b[1]]) as usize)
                else {
                    break;
                };
                if len < DIRENT_NAME || len > record.len() {
                    break;
                }
                at += len;
                let body = &record[DIRENT_NAME..len];
                let name = &body[..body.iter().position(|&b| b == 0).unwrap_or(body.len())];
                if name == b"." || name == b".." {
                    continue;
                }
                let name = OsString::from_vec(name.to_vec());
                let kind = match record[DIRENT_TYPE] {
                    DT_DIR => Kind::Dir,
                    DT_REG => Kind::File,
                    DT_LNK => Kind::Symlink,
                    DT_UNKNOWN => match self.metadata(&name) {
                        Ok(meta) => Kind::of(&meta),
                        Err(_) => continue,
                    },
                    _ => Kind::Special,
                };
                out.push(Entry { name, kind });
            }
        }
        Ok(out)
    }
}

/// Opens `path` to be written whole (created if missing, mode 0644 before the umask): never
/// through a symbolic link (ELOOP), and without blocking on a FIFO with no reader. The
/// caller checks that it is a regular file before it truncates.
pub fn open_for_rewrite(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        .open(path)
}

/// Opens a file by path (following links) for reading without blocking, so a FIFO or a device
/// opens at once and can be told apart by its type instead of stalling the caller.
pub fn open_path_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(O_NONBLOCK | O_NOCTTY).open(path)
}

/// Why [`read_small_file`] read nothing.
#[derive(Debug)]
pub enum SmallFileError {
    NotFound,
    /// A FIFO, socket, device or directory: refused without reading.
    NotRegular,
    /// Larger than the limit (in bytes).
    TooLarge(u64),
    Io(io::Error),
}

impl std::fmt::Display for SmallFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SmallFileError::NotFound => write!(f, "it does not exist"),
            SmallFileError::NotRegular => write!(f, "it is not a regular file"),
            SmallFileError::TooLarge(max) if max % (1024 * 1024) == 0 => {
                write!(f, "it is larger than {} MiB", max / (1024 * 1024))
            }
            SmallFileError::TooLarge(max) => write!(f, "it is larger than {} KiB", max / 1024),
            SmallFileError::Io(err) => write!(f, "{err}"),
        }
    }
}

impl std::error::Error for SmallFileError {}

/// The whole of a regular file of at most `max` bytes, by path (links followed). A file linked
/// to `/dev/zero` or a FIFO is refused at once, not read without end or waited on.
pub fn read_small_file(path: &Path, max: u64) -> Result<Vec<u8>, SmallFileError> {
    use std::io::Read;
    let file = open_path_nonblocking(path).map_err(|err| match err.kind() {
        io::ErrorKind::NotFound => SmallFileError::NotFound,
        _ => SmallFileError::Io(err),
    })?;
    match file.metadata() {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(SmallFileError::NotRegular),
        Err(err) => return Err(SmallFileError::Io(err)),
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(SmallFileError::Io)?;
    if bytes.len() as u64 > max {
        return Err(SmallFileError::TooLarge(max));
    }
    Ok(bytes)
}

/// Takes an exclusive advisory lock on `file` without waiting: `Ok(false)` when another open
/// file holds it. The kernel releases it when the file is closed or the process ends, however
/// it ends.
pub fn try_lock(file: &File) -> io::Result<bool> {
    loop {
        // SAFETY: flock has no memory effects; the descriptor is open for the call.
        if unsafe { flock(file.as_raw_fd(), LOCK_EX | LOCK_NB) } == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(EWOULDBLOCK) => return Ok(false),
            Some(EINTR) => continue,
            _ => return Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kit::TempDir;

    #[test]
    fn names_are_single_components() {
        let dir = TempDir::new("dirfd-names");
        let d = Dir::open(&dir.path).unwrap();
        for bad in ["", ".", "..", "a/b", "/etc"] {
            let err = d.open_dir(OsStr::new(bad)).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{bad:?}");
        }
    }

    #[test]
    fn links_are_never_followed() {
        let dir = TempDir::new("dirfd-links");
        dir.write("real/file.txt", "x");
        std::os::unix::fs::symlink(dir.join("real"), dir.join("dirlink")).unwrap();
        std::os::unix::fs::symlink(dir.join("real/file.txt"), dir.join("filelink")).unwrap();
        let d = Dir::open(&dir.path).unwrap();
        let err = d.open_dir(OsStr::new("dirlink")).unwrap_err();
        assert!(matches!(err.raw_os_error(), Some(ELOOP | ENOTDIR)), "{err}");
        assert_eq!(d.open_read(OsStr::new("filelink")).unwrap_err().raw_os_error(), Some(ELOOP));
        assert_eq!(d.read_link(OsStr::new("dirlink")).unwrap(), dir.join("real").into_os_string());
        assert_eq!(d.read_link(OsStr::new("real")).unwrap_err().raw_os_error(), Some(EINVAL));
        assert_eq!(Kind::of(&d.metadata(OsStr::new("filelink")).unwrap()), Kind::Symlink);
        let err = d.create_new(OsStr::new("filelink"), 0o644).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(dir.read("real/file.txt"), "x");
    }

    #[test]
    fn entries_list_names_and_kinds_every_time() {
        let dir = TempDir::new("dirfd-entries");
        dir.write("a.txt", "");
        std::fs::create_dir(dir.join("sub")).unwrap();
        std::os::unix::fs::symlink("a.txt", dir.join("link")).unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(dir.join("sock")).unwrap();
        let d = Dir::open(&dir.path).unwrap();
        for _ in 0..2 {
            let mut found: Vec<(String, Kind)> = d
                .entries(100)
                .unwrap()
                .into_iter()
                .map(|e| (e.name.to_string_lossy().into_owned(), e.kind))
                .collect();
            found.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(
                found,
                [
                    ("a.txt".to_string(), Kind::File),
                    ("link".to_string(), Kind::Symlink),
                    ("sock".to_string(), Kind::Special),
                    ("sub".to_string(), Kind::Dir)
                ]
            );
        }
        assert_eq!(d.entries(2).unwrap().len(), 2);
    }

    #[test]
    fn a_listing_larger_than_one_read_is_whole_and_can_be_taken_again() {
        // 2,000 long names: about 200 KB of records, several getdents64 reads.
        let dir = TempDir::new("dirfd-many");
        let long = "n".repeat(80);
        for i in 0..2000 {
            dir.write(&format!("{long}-{i}"), "");
        }
        let d = Dir::open(&dir.path).unwrap();
        let first = d.entries(usize::MAX).unwrap();
        assert_eq!(first.len(), 2000);
        assert!(first.iter().all(|e| e.kind == Kind::File && e.name.len() > 80));
        let mut names: Vec<_> = first.iter().map(|e| e.name.clone()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 2000);
        assert_eq!(d.entries(usize::MAX).unwrap().len(), 2000, "a second listing starts over");
        assert_eq!(d.entries(1500).unwrap().len(), 1500);
    }

    #[test]
    fn create_rename_unlink_and_rmdir_stay_in_the_directory() {
        let dir = TempDir::new("dirfd-ops");
        let d = Dir::open(&dir.path).unwrap();
        d.mkdir(OsStr::new("sub"), 0o755).unwrap();
        let sub = d.open_dir(OsStr::new("sub")).unwrap();
        use std::io::Write;
        sub.create_new(OsStr::new("t"), 0o644).unwrap().write_all(b"hi").unwrap();
        sub.rename(OsStr::new("t"), &d, OsStr::new("moved")).unwrap();
        assert_eq!(dir.read("moved"), "hi");
        d.unlink(OsStr::new("moved")).unwrap();
        d.rmdir(OsStr::new("sub")).unwrap();
        assert!(d.entries(10).unwrap().is_empty());
    }

    #[test]
    fn a_second_lock_on_the_same_file_is_refused_until_the_first_is_closed() {
        let dir = TempDir::new("dirfd-lock");
        let d = Dir::open(&dir.path).unwrap();
        let first = d.open_lock(OsStr::new("lock")).unwrap();
        assert!(try_lock(&first).unwrap());
        let second = d.open_lock(OsStr::new("lock")).unwrap();
        assert!(!try_lock(&second).unwrap());
        drop(first);
        assert!(try_lock(&second).unwrap());
    }
}
