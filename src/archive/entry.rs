//! Archive entries as plain data, and the per-entry safety rules every
//! source (zip, tar, folder) applies before anything is written.

use std::fmt;

/// What an archive member is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemberKind {
    /// A regular file of `size` bytes (as declared by the archive).
    File {
        /// Declared size in bytes.
        size: u64,
    },
    /// A folder.
    Dir,
    /// A symbolic link with its target as stored.
    Symlink(String),
    /// A tar hard link to an earlier entry (path from the archive root).
    Hardlink(String),
}

/// One archive member (a zip or tar entry, or a file of a folder source):
/// a normalized relative path (`/`-separated, no `.`/`..`, no
/// leading `/`) and its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Normalized relative path.
    pub path: String,
    /// Its kind.
    pub kind: MemberKind,
}

/// Most entries accepted in one archive. No cuDNN release holds more than a
/// few hundred files; a count past this is refused before anything is
/// written, so memory stays bounded.
pub const MAX_ENTRIES: usize = 20_000;

/// How one entry clashes with the entries before it (see [`Tree`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Clash {
    /// The same path as an earlier file or link (the later would win).
    Duplicate,
    /// A file or link at a path that is also a folder (an entry
    /// `lib/x.so.9` and `lib/x.so.9/` or `lib/x.so.9/y`): one shadows the other.
    FileAndFolder(String),
    /// More than [`MAX_ENTRIES`] entries.
    TooMany,
}

impl fmt::Display for Clash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Clash::Duplicate => f.write_str("appears twice in the archive"),
            Clash::FileAndFolder(p) => write!(
                f,
                "clashes with another entry: '{p}' is both a file and a folder"
            ),
            Clash::TooMany => write!(
                f,
                "is past the {MAX_ENTRIES}th entry; no cuDNN archive holds that many"
            ),
        }
    }
}

/// The paths an archive's entries claim, checked one entry at a time (tar
/// streams): each path is a file (or link) or a folder, never both, and
/// never claimed twice by a file. Memory grows with the entries, which
/// [`MAX_ENTRIES`] bounds.
#[derive(Debug, Default)]
pub struct Tree {
    files: std::collections::HashSet<String>,
    dirs: std::collections::HashSet<String>,
    count: usize,
}

impl Tree {
    /// Adds entry `e`.
    ///
    /// # Errors
    /// The [`Clash`] it makes with the entries added before it.
    pub fn add(&mut self, e: &Member) -> Result<(), Clash> {
        self.count += 1;
        if self.count > MAX_ENTRIES {
            return Err(Clash::TooMany);
        }
        let is_dir = e.kind == MemberKind::Dir;
        let path = e.path.as_str();
        if self.files.contains(path) {
            return Err(if is_dir {
                Clash::FileAndFolder(path.to_string())
            } else {
                Clash::Duplicate
            });
        }
        if !is_dir && self.dirs.contains(path) {
            return Err(Clash::FileAndFolder(path.to_string()));
        }
        let mut end = 0;
        while let Some(i) = path[end..].find('/') {
            let a = &path[..end + i];
            if self.files.contains(a) {
                return Err(Clash::FileAndFolder(a.to_string()));
            }
            self.dirs.insert(a.to_string());
            end += i + 1;
        }
        if is_dir {
            self.dirs.insert(path.to_string());
        } else {
            self.files.insert(path.to_string());
        }
        Ok(())
    }
}

/// Why an entry is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unsafe {
    /// An absolute path (`/etc/x`, `C:\x`, `\\server\x`).
    Absolute,
    /// A `..` component.
    ParentDir,
    /// An empty name or a NUL byte.
    Empty,
    /// Not valid UTF-8.
    NotUtf8,
    /// A component Windows cannot hold as a file name (the name given):
    /// a reserved device name (`NUL.dll`, `CON`, `COM1`), one of `<>:"|?*`
    /// or a control character (`x.dll:ads` would write an NTFS stream into
    /// `x.dll`), or a trailing dot or space (Windows drops it, so two
    /// entries collide). No cuDNN release ships one; refused on every host
    /// so that a release imports the same everywhere.
    NotPortable(String),
    /// A name component longer than file systems hold (its length in bytes).
    TooLong(usize),
}

/// Longest name component accepted, in bytes: what ext4, XFS, APFS and
/// NTFS hold (255 bytes, or 255 UTF-16 units on NTFS). cuDNN's own names
/// are far shorter.
pub const MAX_COMPONENT_BYTES: usize = 255;

impl fmt::Display for Unsafe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unsafe::Absolute => "has an absolute path",
            Unsafe::ParentDir => "has a '..' component that leaves the archive",
            Unsafe::Empty => "has an empty or NUL-containing name",
            Unsafe::NotUtf8 => "has a name that is not UTF-8",
            Unsafe::TooLong(n) => {
                return write!(
                    f,
                    "has a name part of {n} bytes, too long for the file system (at most {MAX_COMPONENT_BYTES})"
                );
            }
            Unsafe::NotPortable(c) => {
                return write!(
                    f,
                    "has a name Windows cannot hold as a file ('{c}': a reserved device name, one of <>:\"|?*, or a trailing dot or space)"
                );
            }
        })
    }
}

/// Whether `c` is a file name Windows can hold (see [`Unsafe::NotPortable`];
/// Microsoft's "Naming Files, Paths, and Namespaces").
fn portable(c: &str) -> bool {
    const RESERVED: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];
    let stem = c.split('.').next().unwrap_or(c).trim_end();
    let upper = stem.to_ascii_uppercase();
    let device = RESERVED.contains(&upper.as_str())
        || (upper.len() == 4
            && (upper.starts_with("COM") || upper.starts_with("LPT"))
            && upper.as_bytes()[3].is_ascii_digit()
            && upper.as_bytes()[3] != b'0');
    !device
        && !c.ends_with(['.', ' '])
        && !c
            .chars()
            .any(|ch| ch < ' ' || matches!(ch, '<' | '>' | ':' | '"' | '|' | '?' | '*'))
}

/// Normalizes an entry name from an archive: backslashes become `/`, `./`
/// and repeated separators are dropped, a trailing `/` is removed.
///
/// # Errors
/// [`Unsafe`] for absolute paths (Unix, drive letters, UNC), `..`, empty names.
pub fn normalize(raw: &str) -> Result<String, Unsafe> {
    if raw.contains('\0') {
        return Err(Unsafe::Empty);
    }
    let s = raw.replace('\\', "/");
    if s.starts_with('/') || is_drive_path(&s) {
        return Err(Unsafe::Absolute);
    }
    let mut parts = Vec::new();
    for c in s.split('/') {
        match c {
            "" | "." => {}
            ".." => return Err(Unsafe::ParentDir),
            c if !portable(c) => return Err(Unsafe::NotPortable(c.to_string())),
            c if c.len() > MAX_COMPONENT_BYTES => return Err(Unsafe::TooLong(c.len())),
            c => parts.push(c),
        }
    }
    if parts.is_empty() {
        return Err(Unsafe::Empty);
    }
    Ok(parts.join("/"))
}

fn is_drive_path(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Resolves a link `target` relative to the folder of the link at `link_path`
/// (both inside one archive). `None` when it is absolute or climbs above the
/// archive root.
pub fn resolve_link(link_path: &str, target: &str) -> Option<String> {
    let t = target.replace('\\', "/");
    if t.starts_with('/') || is_drive_path(&t) {
        return None;
    }
    let mut parts: Vec<&str> = link_path.split('/').collect();
    parts.pop();
    for c in t.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(parts.join("/"))
}

/// The relative path from folder `from_dir` to `to` (both `/`-separated,
/// relative to the same root): `("lib", "lib/x.so.9") → "x.so.9"`.
pub fn relative_path(from_dir: &str, to: &str) -> String {
    let a: Vec<&str> = from_dir.split('/').filter(|s| !s.is_empty()).collect();
    let b: Vec<&str> = to.split('/').filter(|s| !s.is_empty()).collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out: Vec<&str> = vec![".."; a.len() - common];
    out.extend(&b[common..]);
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_accepts_archive_names() {
        assert_eq!(
            normalize("cuda/bin/cudnn64_7.dll").unwrap(),
            "cuda/bin/cudnn64_7.dll"
        );
        assert_eq!(
            normalize("cuda\\lib\\x64\\cudnn.lib").unwrap(),
            "cuda/lib/x64/cudnn.lib"
        );
        assert_eq!(normalize("./cuda//include/").unwrap(), "cuda/include");
    }

    #[test]
    fn normalize_refuses_escapes() {
        assert_eq!(normalize("/etc/passwd"), Err(Unsafe::Absolute));
        assert_eq!(normalize("C:\\Windows\\x.dll"), Err(Unsafe::Absolute));
        assert_eq!(normalize("\\\\server\\share\\x"), Err(Unsafe::Absolute));
        assert_eq!(normalize("cuda/../../x"), Err(Unsafe::ParentDir));
        assert_eq!(normalize("a/.."), Err(Unsafe::ParentDir));
        assert_eq!(normalize("./"), Err(Unsafe::Empty));
    }

    #[test]
    fn normalize_refuses_names_windows_cannot_hold() {
        for (raw, comp) in [
            ("cuda/bin/cudnn64_8.dll:ads", "cudnn64_8.dll:ads"),
            ("cuda/bin/cudnn64_8.dll::$DATA", "cudnn64_8.dll::$DATA"),
            ("cuda/bin/NUL.dll", "NUL.dll"),
            ("cuda/include/con", "con"),
            ("cuda/lib/x64/COM1.lib", "COM1.lib"),
            ("cuda/lib/x64/lpt9", "lpt9"),
            ("cuda/bin/cudnn64_8.dll.", "cudnn64_8.dll."),
            ("cuda/bin/cudnn64_8.dll ", "cudnn64_8.dll "),
            ("cuda/include/cudnn*.h", "cudnn*.h"),
            ("cuda/include/a\u{1}b.h", "a\u{1}b.h"),
        ] {
            assert_eq!(
                normalize(raw),
                Err(Unsafe::NotPortable(comp.to_string())),
                "{raw}"
            );
        }
        // Names that only look alike are fine.
        for ok in [
            "cuda/bin/COM0.dll",
            "cuda/CONSOLE.txt",
            "cuda/include/nul_x.h",
            "a/.b",
        ] {
            assert!(normalize(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn links_resolve_within_the_archive() {
        assert_eq!(
            resolve_link("cuda/lib64/libcudnn.so", "libcudnn.so.8").unwrap(),
            "cuda/lib64/libcudnn.so.8"
        );
        assert_eq!(resolve_link("a/b/l", "../c").unwrap(), "a/c");
        assert_eq!(resolve_link("a/l", "../../etc/passwd"), None);
        assert_eq!(resolve_link("a/l", "/etc/passwd"), None);
        assert_eq!(relative_path("lib", "lib/libcudnn.so.9"), "libcudnn.so.9");
        assert_eq!(relative_path("include", "lib/x"), "../lib/x");
    }
}
