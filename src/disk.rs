//! Disk space as the file system counts it: a file with several hard links
//! (a backup sharing a store file's bytes, a hard-link deployment) holds its
//! bytes once, and deleting some of its names frees them only when no name
//! is left. A [`Tally`] adds up trees of files that way: [`Tally::bytes`]
//! counts each file once, [`Tally::freed`] only files whose every link was
//! added, i.e. what deleting everything added would give back.
//!
//! Sizes are file lengths in bytes (what `ls -l` and `du --apparent-size`
//! show). Links (symbolic) hold no bytes and are not followed. A file is
//! known by [`crate::platform::file_identity`] (Unix device and inode,
//! Windows volume serial number and file index); where the platform gives
//! none (a file that cannot be opened), each name counts as a file of its own.

use std::collections::{BTreeSet, HashMap};
use std::fs::Metadata;
use std::path::{Path, PathBuf};

use crate::platform::{self, FileIdentity};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    File { volume: u64, index: u64 },
    Name(PathBuf),
}

#[derive(Clone, Debug)]
struct Counted {
    size: u64,
    links: u64,
    names: BTreeSet<PathBuf>,
}

impl Counted {
    fn all_names_seen(&self) -> bool {
        self.names.len() as u64 >= self.links
    }
}

/// Regular files added so far, each counted once. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    files: HashMap<Key, Counted>,
}

impl Tally {
    /// An empty tally.
    pub fn new() -> Tally {
        Tally::default()
    }

    /// Adds every regular file under `path` (or `path` itself when it is a
    /// file); a missing or unreadable path adds nothing. Returns the bytes of
    /// the files that were not in the tally yet.
    pub fn add_tree(&mut self, path: &Path) -> u64 {
        let mut new = 0;
        for e in walkdir::WalkDir::new(path).into_iter().flatten() {
            if e.file_type().is_file()
                && let Ok(meta) = e.metadata()
            {
                new += self.add_file(e.path(), &meta);
            }
        }
        new
    }

    /// Adds one regular file, `meta` from `symlink_metadata`. The same name
    /// added twice counts once. Returns its size when the file was not in
    /// the tally yet (under any name), else 0.
    pub fn add_file(&mut self, path: &Path, meta: &Metadata) -> u64 {
        if !meta.is_file() {
            return 0;
        }
        let (key, links) = match platform::file_identity(path, meta) {
            Some(FileIdentity {
                volume,
                index,
                links,
            }) => (Key::File { volume, index }, links.max(1)),
            None => (Key::Name(path.to_path_buf()), 1),
        };
        let new = !self.files.contains_key(&key);
        self.files
            .entry(key)
            .or_insert_with(|| Counted {
                size: meta.len(),
                links,
                names: BTreeSet::new(),
            })
            .names
            .insert(path.to_path_buf());
        if new { meta.len() } else { 0 }
    }

    /// Adds everything `other` added (a file in both counts once).
    pub fn merge(&mut self, other: &Tally) {
        for (k, o) in &other.files {
            self.files
                .entry(k.clone())
                .or_insert_with(|| Counted {
                    names: BTreeSet::new(),
                    ..o.clone()
                })
                .names
                .extend(o.names.iter().cloned());
        }
    }

    /// Bytes of the files added, each file once however many of its names were added.
    pub fn bytes(&self) -> u64 {
        self.files.values().map(|c| c.size).sum()
    }

    /// Bytes of the files all of whose names were added: what deleting
    /// everything added frees.
    pub fn freed(&self) -> u64 {
        self.files
            .values()
            .filter(|c| c.all_names_seen())
            .map(|c| c.size)
            .sum()
    }

    /// Bytes of the files that also have names elsewhere: [`Tally::bytes`]
    /// less [`Tally::freed`].
    pub fn shared(&self) -> u64 {
        self.bytes() - self.freed()
    }

    /// How many files (not names) were added.
    pub fn files(&self) -> usize {
        self.files.len()
    }
}

/// What deleting the trees `paths` would free ([`Tally::freed`]).
pub fn freed_by(paths: &[&Path]) -> u64 {
    let mut t = Tally::new();
    for p in paths {
        t.add_tree(p);
    }
    t.freed()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods)] // fixtures
    use super::*;

    #[test]
    fn hard_linked_bytes_count_once_and_free_only_with_their_last_name() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("lib"), vec![7u8; 1000]).unwrap();
        std::fs::hard_link(a.join("lib"), b.join("lib")).unwrap();
        std::fs::write(b.join("own"), vec![1u8; 30]).unwrap();
        // A symbolic link holds no bytes (Windows: needs a right wine and
        // most users lack; links are not counted there either way).
        #[cfg(unix)]
        std::os::unix::fs::symlink("lib", b.join("link")).unwrap();
        let mut both = Tally::new();
        both.add_tree(d.path());
        assert_eq!((both.bytes(), both.freed(), both.files()), (1030, 1030, 2));
        let mut only_b = Tally::new();
        only_b.add_tree(&b);
        assert_eq!(
            (only_b.bytes(), only_b.freed(), only_b.shared()),
            (1030, 30, 1000)
        );
        assert_eq!(freed_by(&[&a]), 0);
        assert_eq!(freed_by(&[&a, &b]), 1030);
        let mut only_a = Tally::new();
        only_a.add_tree(&a);
        only_a.merge(&only_b);
        assert_eq!((only_a.bytes(), only_a.freed()), (1030, 1030));
        // The same name twice is one name.
        let mut twice = Tally::new();
        twice.add_tree(&a);
        twice.add_tree(&a);
        assert_eq!(twice.freed(), 0);
        assert_eq!(freed_by(&[&d.path().join("missing")]), 0);
    }

    #[test]
    fn a_files_identity_is_shared_by_its_hard_links_only() {
        let d = tempfile::tempdir().unwrap();
        let (a, b, c) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
        std::fs::write(&a, b"same bytes").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        std::fs::write(&c, b"same bytes").unwrap();
        let id = |p: &Path| platform::file_identity(p, &std::fs::symlink_metadata(p).unwrap());
        let (ia, ib, ic) = (id(&a).unwrap(), id(&b).unwrap(), id(&c).unwrap());
        assert_eq!((ia.volume, ia.index), (ib.volume, ib.index));
        assert_eq!((ia.links, ic.links), (2, 1));
        assert_ne!((ia.volume, ia.index), (ic.volume, ic.index));
        assert!(platform::same_file(&a, &b) && !platform::same_file(&a, &c));
    }
}
