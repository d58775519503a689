//! Changes below a folder that someone else may write (an export
//! destination, a `/tmp`-like sticky folder, a user's home under `sudo`),
//! made relative to an open handle of each folder and never by a path
//! walked again: on Unix every name is opened with `O_NOFOLLOW` and every
//! change is an `*at` call on the folder's descriptor (`openat`, `mkdirat`,
//! `unlinkat`, `renameat2`, `fchmod` on a descriptor opened without
//! following links), through `rustix`. A link planted in place of a folder
//! or file cudnnm works on is then an error or an entry removed as a link,
//! never a way to reach the file it points to.
//!
//! On Windows the same calls work by path: creating a symbolic link there
//! needs a privilege, and the command that would follow one is not run by
//! a more privileged account for another user's folder.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// What an entry of a folder is, seen without following it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A folder.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link (or, on Windows, a junction).
    Link,
    /// Anything else (a FIFO, a socket, a device).
    Other,
}

/// An open folder; every operation is relative to it.
#[derive(Debug)]
pub struct Dir {
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
    path: PathBuf,
}

#[cfg(unix)]
mod imp {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;

    use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};

    use super::*;

    fn dir_flags() -> OFlags {
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
    }

    fn kind_of(t: FileType) -> EntryKind {
        match t {
            FileType::Directory => EntryKind::Dir,
            FileType::RegularFile => EntryKind::File,
            FileType::Symlink => EntryKind::Link,
            _ => EntryKind::Other,
        }
    }

    impl Dir {
        /// Opens the folder `path`, the anchor of what follows: the path is
        /// the caller's to trust (a folder the user named, the home), so a
        /// link in it is followed; every name below it is not.
        pub fn open(path: &Path) -> io::Result<Dir> {
            let fd = rustix::fs::open(
                path,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            Ok(Dir {
                fd,
                path: path.to_path_buf(),
            })
        }

        /// The subfolder `name`, not following a link.
        pub fn open_dir(&self, name: &OsStr) -> io::Result<Dir> {
            let fd = rustix::fs::openat(&self.fd, name, dir_flags(), Mode::empty())?;
            Ok(Dir {
                fd,
                path: self.path.join(name),
            })
        }

        /// Makes the subfolder `name` (new) with `mode` (narrowed by the
        /// umask) and opens it.
        pub fn create_dir(&self, name: &OsStr, mode: u32) -> io::Result<Dir> {
            rustix::fs::mkdirat(&self.fd, name, Mode::from_bits_truncate(mode))?;
            self.open_dir(name)
        }

        /// Creates the new file `name` for writing (never an existing file,
        /// never through a link).
        pub fn create_file(&self, name: &OsStr, mode: u32) -> io::Result<File> {
            let fd: OwnedFd = rustix::fs::openat(
                &self.fd,
                name,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_bits_truncate(mode),
            )?;
            Ok(File::from(fd))
        }

        /// Makes the link `name` → `target`.
        pub fn symlink(&self, target: &Path, name: &OsStr) -> io::Result<()> {
            rustix::fs::symlinkat(target, &self.fd, name)?;
            Ok(())
        }

        /// What `name` is, not following a link; `None` when it is not there.
        pub fn kind(&self, name: &OsStr) -> io::Result<Option<EntryKind>> {
            match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => Ok(Some(kind_of(FileType::from_raw_mode(st.st_mode)))),
                Err(rustix::io::Errno::NOENT) => Ok(None),
                Err(e) => Err(e.into()),
            }
        }

        /// The folder's entries (without `.` and `..`), each with its kind.
        pub fn entries(&self) -> io::Result<Vec<(OsString, EntryKind)>> {
            let mut out = Vec::new();
            for e in rustix::fs::Dir::read_from(&self.fd)? {
                let e = e?;
                let name = e.file_name().to_bytes();
                if name == b"." || name == b".." {
                    continue;
                }
                let name = OsStr::from_bytes(name).to_os_string();
                let kind = match e.file_type() {
                    FileType::Unknown => self.kind(&name)?.unwrap_or(EntryKind::Other),
                    t => kind_of(t),
                };
                out.push((name, kind));
            }
            Ok(out)
        }

        /// Sets the permission bits of this folder itself.
        pub fn set_own_mode(&self, mode: u32) -> io::Result<()> {
            rustix::fs::fchmod(&self.fd, Mode::from_bits_truncate(mode))?;
            Ok(())
        }

        /// This folder's own permission bits.
        pub fn own_mode(&self) -> io::Result<u32> {
            Ok(rustix::fs::fstat(&self.fd)?.st_mode & 0o7777)
        }

        /// The permission bits of `name`, not following a link.
        pub fn mode(&self, name: &OsStr) -> io::Result<u32> {
            Ok(rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)?.st_mode & 0o7777)
        }

        /// Sets the permission bits of the file or folder `name` through a
        /// descriptor opened without following a link: a link is left as
        /// it is (links have no mode of their own), and so is anything
        /// that is neither a file nor a folder.
        pub fn set_mode(&self, name: &OsStr, mode: u32) -> io::Result<()> {
            // An O_PATH descriptor pins the entry without opening a device
            // or waiting on a FIFO; only a file or a folder is then opened
            // for real, through /proc/self/fd (exactly that inode, never a
            // path walked again), since fchmod needs a real descriptor.
            let fd = match rustix::fs::openat(
                &self.fd,
                name,
                OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::LOOP) => return Ok(()),
                Err(e) => return Err(e.into()),
            };
            let st = rustix::fs::fstat(&fd)?;
            match kind_of(FileType::from_raw_mode(st.st_mode)) {
                EntryKind::Dir | EntryKind::File => {}
                // A link (O_PATH|O_NOFOLLOW opens the link itself), a FIFO, a device.
                _ => return Ok(()),
            }
            let real = rustix::fs::open(
                format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd)),
                OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            rustix::fs::fchmod(&real, Mode::from_bits_truncate(mode))?;
            Ok(())
        }

        /// Gives the entry `name` (a link itself, not its target) to
        /// `uid`:`gid`.
        pub fn set_owner(&self, name: &OsStr, uid: u32, gid: u32) -> io::Result<()> {
            let (u, g) = (
                rustix::fs::Uid::from_raw(uid),
                rustix::fs::Gid::from_raw(gid),
            );
            rustix::fs::chownat(&self.fd, name, Some(u), Some(g), AtFlags::SYMLINK_NOFOLLOW)?;
            Ok(())
        }

        /// Removes the file or link `name` (never a folder).
        pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
            rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?;
            Ok(())
        }

        /// Removes the empty folder `name`.
        pub fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
            rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR)?;
            Ok(())
        }

        /// Renames `from` in this folder to `to` in `to_dir`, replacing a
        /// file there (never following a link at either name).
        pub fn rename(&self, from: &OsStr, to_dir: &Dir, to: &OsStr) -> io::Result<()> {
            rustix::fs::renameat(&self.fd, from, &to_dir.fd, to)?;
            Ok(())
        }

        /// Swaps the entries `a` and `b` of this folder in one step
        /// (`renameat2(RENAME_EXCHANGE)`); [`io::ErrorKind::Unsupported`]
        /// where the system or file system cannot.
        pub fn exchange(&self, a: &OsStr, b: &OsStr) -> io::Result<()> {
            #[cfg(any(target_os = "linux", target_os = "android"))]
            {
                match rustix::fs::renameat_with(&self.fd, a, &self.fd, b, RenameFlags::EXCHANGE) {
                    Ok(()) => Ok(()),
                    Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
                        Err(io::ErrorKind::Unsupported.into())
                    }
                    Err(e) => Err(e.into()),
                }
            }
            #[cfg(not(any(target_os = "linux", target_os = "android")))]
            {
                let _ = (a, b, RenameFlags::empty());
                Err(io::ErrorKind::Unsupported.into())
            }
        }

        /// The descriptor, for reading metadata.
        pub fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
            self.fd.as_fd()
        }

        /// Opens the file `name` for reading, not following a link and not
        /// waiting on a FIFO.
        pub fn open_file(&self, name: &OsStr) -> io::Result<File> {
            let fd = rustix::fs::openat(
                &self.fd,
                name,
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            Ok(File::from(fd))
        }

        /// The target of the link `name`.
        pub fn read_link(&self, name: &OsStr) -> io::Result<PathBuf> {
            let t = rustix::fs::readlinkat(&self.fd, name, Vec::new())?;
            Ok(PathBuf::from(OsStr::from_bytes(t.as_bytes())))
        }

        /// Whether this folder belongs to the user this process runs as.
        pub fn owned_by_me(&self) -> io::Result<bool> {
            let st = rustix::fs::fstat(&self.fd)?;
            // SAFETY: geteuid has no preconditions and cannot fail.
            Ok(st.st_uid == unsafe { libc::geteuid() })
        }

        /// When this folder last changed.
        pub fn modified(&self) -> io::Result<std::time::SystemTime> {
            let st = rustix::fs::fstat(&self.fd)?;
            let at = std::time::Duration::new(st.st_mtime.max(0) as u64, st.st_mtime_nsec as u32);
            Ok(std::time::UNIX_EPOCH + at)
        }
    }
}

#[cfg(not(unix))]
mod imp {
    use super::*;

    fn kind_of(t: std::fs::FileType) -> EntryKind {
        if t.is_symlink() {
            EntryKind::Link
        } else if t.is_dir() {
            EntryKind::Dir
        } else if t.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        }
    }

    impl Dir {
        /// Opens the folder `path` (a link in it is followed).
        pub fn open(path: &Path) -> io::Result<Dir> {
            if !std::fs::metadata(path)?.is_dir() {
                return Err(io::Error::other("not a folder"));
            }
            Ok(Dir {
                path: path.to_path_buf(),
            })
        }

        /// The subfolder `name`, not following a link.
        pub fn open_dir(&self, name: &OsStr) -> io::Result<Dir> {
            let path = self.path.join(name);
            let meta = std::fs::symlink_metadata(&path)?;
            if !meta.is_dir() || meta.file_type().is_symlink() {
                return Err(io::Error::other("not a folder"));
            }
            Ok(Dir { path })
        }

        /// Makes the subfolder `name` (new) and opens it.
        pub fn create_dir(&self, name: &OsStr, _mode: u32) -> io::Result<Dir> {
            std::fs::create_dir(self.path.join(name))?;
            self.open_dir(name)
        }

        /// Creates the new file `name` for writing.
        pub fn create_file(&self, name: &OsStr, _mode: u32) -> io::Result<File> {
            File::create_new(self.path.join(name))
        }

        /// Makes the link `name` → `target`.
        pub fn symlink(&self, target: &Path, name: &OsStr) -> io::Result<()> {
            super::super::symlink_file(target, &self.path.join(name))
        }

        /// What `name` is, not following a link; `None` when it is not there.
        pub fn kind(&self, name: &OsStr) -> io::Result<Option<EntryKind>> {
            match std::fs::symlink_metadata(self.path.join(name)) {
                Ok(m) => Ok(Some(kind_of(m.file_type()))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            }
        }

        /// The folder's entries, each with its kind.
        pub fn entries(&self) -> io::Result<Vec<(OsString, EntryKind)>> {
            let mut out = Vec::new();
            for e in std::fs::read_dir(&self.path)? {
                let e = e?;
                out.push((e.file_name(), kind_of(e.file_type()?)));
            }
            Ok(out)
        }

        /// A folder's read-only attribute stops nothing on Windows: unchanged.
        pub fn set_own_mode(&self, _mode: u32) -> io::Result<()> {
            Ok(())
        }

        /// 0o755 (a folder's attribute is not a mode).
        pub fn own_mode(&self) -> io::Result<u32> {
            Ok(0o755)
        }

        /// 0o444 for a read-only file, else 0o644 (0o755 for a folder).
        pub fn mode(&self, name: &OsStr) -> io::Result<u32> {
            let m = std::fs::symlink_metadata(self.path.join(name))?;
            Ok(if m.is_dir() {
                0o755
            } else if m.permissions().readonly() {
                0o444
            } else {
                0o644
            })
        }

        /// Sets the read-only attribute of the file `name` from `mode`'s
        /// owner write bit (a folder or a link is left as it is).
        pub fn set_mode(&self, name: &OsStr, mode: u32) -> io::Result<()> {
            if self.kind(name)? != Some(EntryKind::File) {
                return Ok(());
            }
            set_readonly(&self.path.join(name), mode & 0o200 == 0)
        }

        /// Owners are not changed on Windows.
        pub fn set_owner(&self, _name: &OsStr, _uid: u32, _gid: u32) -> io::Result<()> {
            Ok(())
        }

        /// Removes the file or link `name`.
        pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
            let p = self.path.join(name);
            match std::fs::remove_file(&p) {
                Err(e) if self.kind(name)? == Some(EntryKind::Link) => {
                    // A folder link (a junction) is removed as a folder.
                    std::fs::remove_dir(&p).map_err(|_| e)
                }
                other => other,
            }
        }

        /// Removes the empty folder `name`.
        pub fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
            std::fs::remove_dir(self.path.join(name))
        }

        /// Renames `from` in this folder to `to` in `to_dir`.
        pub fn rename(&self, from: &OsStr, to_dir: &Dir, to: &OsStr) -> io::Result<()> {
            std::fs::rename(self.path.join(from), to_dir.path.join(to))
        }

        /// Not available: [`io::ErrorKind::Unsupported`].
        pub fn exchange(&self, _a: &OsStr, _b: &OsStr) -> io::Result<()> {
            Err(io::ErrorKind::Unsupported.into())
        }

        /// Opens the file `name` for reading (not a link).
        pub fn open_file(&self, name: &OsStr) -> io::Result<File> {
            if self.kind(name)? == Some(EntryKind::Link) {
                return Err(io::Error::other("a link"));
            }
            File::open(self.path.join(name))
        }

        /// The target of the link `name`.
        pub fn read_link(&self, name: &OsStr) -> io::Result<PathBuf> {
            std::fs::read_link(self.path.join(name))
        }

        /// Folders on Windows are judged by their ACL, not an owner: true.
        pub fn owned_by_me(&self) -> io::Result<bool> {
            Ok(true)
        }

        /// When this folder last changed.
        pub fn modified(&self) -> io::Result<std::time::SystemTime> {
            std::fs::metadata(&self.path)?.modified()
        }
    }

    fn set_readonly(p: &Path, ro: bool) -> io::Result<()> {
        let mut perm = std::fs::metadata(p)?.permissions();
        perm.set_readonly(ro);
        std::fs::set_permissions(p, perm)
    }
}

impl Dir {
    /// The folder's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the entry `name` and, for a folder, everything in it: each
    /// folder is opened without following a link and made writable by its
    /// owner through its handle before its entries go; a file is made
    /// writable only when its removal is refused for it (Windows), and a
    /// link is removed as a link. Missing is fine.
    pub fn remove_tree(&self, name: &OsStr) -> io::Result<()> {
        match self.kind(name)? {
            None => Ok(()),
            Some(EntryKind::Dir) => {
                let sub = self.open_dir(name)?;
                // Made writable only when it is not (a chmod a-w folder);
                // a folder of another owner stays as it is.
                if let Ok(mode) = sub.own_mode()
                    && mode & 0o700 != 0o700
                {
                    let _ = sub.set_own_mode(mode | 0o700);
                }
                for (entry, _) in sub.entries()? {
                    sub.remove_tree(&entry)?;
                }
                drop(sub);
                self.remove_dir(name)
            }
            // Windows does not delete a read-only file: made writable then
            // (only then: a hard link shares its attribute with a store file).
            Some(EntryKind::File) => match self.remove_file(name) {
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                    self.set_mode(name, 0o644)?;
                    self.remove_file(name)
                }
                other => other,
            },
            Some(_) => self.remove_file(name),
        }
    }

    /// Runs `each` on every entry below this folder (folders after their
    /// contents), each with the folder handle it is in: a walk that never
    /// leaves the tree through a link.
    pub fn walk(
        &self,
        each: &mut dyn FnMut(&Dir, &OsStr, EntryKind) -> io::Result<()>,
    ) -> io::Result<()> {
        for (name, kind) in self.entries()? {
            if kind == EntryKind::Dir {
                self.open_dir(&name)?.walk(each)?;
            }
            each(self, &name, kind)?;
        }
        Ok(())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_tree_is_removed_without_following_its_links() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let victim = outside.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
        let tree = d.path().join("tree");
        std::fs::create_dir_all(tree.join("sub")).unwrap();
        std::fs::write(tree.join("sub/f"), b"x").unwrap();
        std::os::unix::fs::symlink(&victim, tree.join("sub/to-file")).unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("to-dir")).unwrap();
        std::fs::set_permissions(tree.join("sub"), std::fs::Permissions::from_mode(0o555)).unwrap();
        let top = Dir::open(d.path()).unwrap();
        // A mode change through a link changes nothing.
        top.open_dir(OsStr::new("tree"))
            .unwrap()
            .set_mode(OsStr::new("to-dir"), 0o777)
            .unwrap();
        top.remove_tree(OsStr::new("tree")).unwrap();
        assert!(!tree.exists());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            std::fs::metadata(&outside).unwrap().permissions().mode() & 0o7777 & 0o002,
            0
        );
        // A link where a folder is expected is not opened.
        std::os::unix::fs::symlink(&outside, d.path().join("link")).unwrap();
        assert!(top.open_dir(OsStr::new("link")).is_err());
        top.remove_tree(OsStr::new("link")).unwrap();
        assert!(outside.is_dir());
    }
}
