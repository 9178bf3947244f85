//! Workspace confinement (A9): every path a file tool touches must resolve inside the
//! workspace root, following symlinks, whether it exists yet or not.

use std::path::{Component, Path, PathBuf};

/// The workspace: the working directory after `-C`, canonicalised.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    pub fn new(root: &Path) -> std::io::Result<Workspace> {
        Ok(Workspace { root: root.canonicalize()? })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path the model gave (relative to `base`, or absolute) to a real path inside
    /// the workspace. Symlinks are followed component by component, so neither `..` nor a link
    /// can lead out; components that do not exist yet are taken literally.
    pub fn resolve_from(&self, base: &Path, raw: &str) -> Result<PathBuf, String> {
        if raw.contains('\0') {
            return Err(format!("path {raw:?} contains a NUL byte"));
        }
        let path = Path::new(raw);
        let mut current = if path.is_absolute() { PathBuf::from("/") } else { base.to_path_buf() };
        let mut links = 0;
        for component in path.components() {
            match component {
                Component::Prefix(_) | Component::RootDir => current = PathBuf::from("/"),
                Component::CurDir => {}
                Component::ParentDir => {
                    current.pop();
                }
                Component::Normal(name) => {
                    let next = current.join(name);
                    match std::fs::symlink_metadata(&next) {
                        Ok(meta) if meta.file_type().is_symlink() => {
                            links += 1;
                            if links > 40 {
                                return Err(format!("path {raw:?} has too many symbolic links"));
                            }
                            current = next.canonicalize().map_err(|_| {
                                format!(
                                    "path {raw:?} goes through a broken symbolic link ({})",
                                    next.display()
                                )
                            })?;
                        }
                        _ => current = next,
                    }
                }
            }
        }
        if current.starts_with(&self.root) {
            Ok(current)
        } else {
            Err(format!(
                "path {raw:?} is outside the workspace ({}); file tools only work inside it",
                self.root.display()
            ))
        }
    }

    /// [`Workspace::resolve_from`] the root.
    pub fn resolve(&self, raw: &str) -> Result<PathBuf, String> {
        self.resolve_from(&self.root, raw)
    }

    /// A path inside the workspace, shown relative to the root (`.` for the root itself).
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TempDir;

    fn scratch(name: &str) -> TempDir {
        let dir = TempDir::new(name);
        std::fs::create_dir_all(dir.join("ws/sub")).unwrap();
        dir.write("outside.txt", "secret");
        dir
    }

    #[test]
    fn inside_paths_resolve_and_escapes_are_refused() {
        let dir = scratch("escape");
        let ws = Workspace::new(&dir.join("ws")).unwrap();
        let root = ws.root().to_path_buf();
        assert_eq!(ws.resolve("sub/new.txt").unwrap(), root.join("sub/new.txt"));
        assert_eq!(ws.resolve("./sub/../a.txt").unwrap(), root.join("a.txt"));
        assert_eq!(ws.resolve(&root.join("sub").to_string_lossy()).unwrap(), root.join("sub"));
        assert_eq!(ws.resolve("missing/../../ws/x").unwrap(), root.join("x"));
        for escape in
            ["../outside.txt", "sub/../../outside.txt", "/etc/passwd", "/", "..", "a/../../x"]
        {
            let err = ws.resolve(escape).unwrap_err();
            assert!(err.contains("outside the workspace"), "{escape}: {err}");
        }
        std::os::unix::fs::symlink(dir.join("outside.txt"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(&dir.path, root.join("dirlink")).unwrap();
        assert!(ws.resolve("link").is_err());
        assert!(ws.resolve("dirlink/outside.txt").is_err());
        assert!(ws.resolve("dirlink/ws/sub").is_ok(), "a link that comes back inside is fine");
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).unwrap();
        assert!(ws.resolve("dangling").unwrap_err().contains("broken symbolic link"));
    }
}
