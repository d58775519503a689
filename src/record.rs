//! Typed records shared by the store, deployments, backups and journals:
//! what a path holds ([`Entry`]: a file with its size and SHA-256, or a link
//! with its target), and how a record is encoded ([`to_toml`]). State files
//! are read and written one way by `fsops` (`load_toml`, `save_toml`).
//!
//! On disk an entry is the three keys every release of cudnnm wrote —
//! `size`, `sha256`, `link` — so receipts, `deployments.toml`,
//! `backup.toml` files and journals written before this type read the same
//! (and older releases read what this one writes).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hash::Sha256Hex;

/// The bytes of a regular file: size and SHA-256.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Content {
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the bytes.
    pub sha256: Sha256Hex,
}

/// Nanoseconds since the Unix epoch of a file's modification time, if known.
pub fn mtime_ns(meta: &std::fs::Metadata) -> Option<i64> {
    let t = meta.modified().ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_nanos()).ok()
}

/// What [`Content::look`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Look {
    /// The file holds the recorded bytes: by its size and recorded
    /// modification time, or (`hashed`) by its SHA-256, read because the
    /// time differed or was not recorded. `mtime_ns` is the file's time now,
    /// to record so the next look reads nothing.
    Same {
        /// Whether the bytes were read.
        hashed: bool,
        /// The file's modification time now.
        mtime_ns: Option<i64>,
    },
    /// It holds other bytes, or is not a regular file: why, in words.
    Changed(String),
    /// Its size is the recorded one, no time was recorded and reading it
    /// was not asked for: not known.
    Unchecked,
}

impl Look {
    /// True unless the file is known to hold other bytes.
    pub fn is_same_or_unchecked(&self) -> bool {
        !matches!(self, Look::Changed(_))
    }
}

impl Content {
    /// Whether the file at `path` (links followed) holds these bytes, read
    /// cheaply as git's index does: a size that differs says no; the
    /// modification time `recorded_mtime` (when it was last found holding
    /// them) says yes without reading a byte; otherwise its SHA-256 decides
    /// — when a time was recorded and differs (a same-size edit, or a
    /// touch), or when `hash_unknown` asks for it where none was recorded
    /// (records from before the time was kept).
    pub fn look(&self, path: &Path, recorded_mtime: Option<i64>, hash_unknown: bool) -> Look {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) => return Look::Changed(format!("cannot be read ({e})")),
        };
        if !meta.is_file() {
            return Look::Changed("is not a regular file".into());
        }
        if meta.len() != self.size {
            return Look::Changed(format!(
                "holds {} bytes, not the {} recorded",
                meta.len(),
                self.size
            ));
        }
        let now = mtime_ns(&meta);
        if recorded_mtime.is_some() && now == recorded_mtime {
            return Look::Same {
                hashed: false,
                mtime_ns: now,
            };
        }
        if recorded_mtime.is_none() && !hash_unknown {
            return Look::Unchecked;
        }
        match crate::hash::sha256_file(path) {
            Ok((_, sha)) if sha == self.sha256 => Look::Same {
                hashed: true,
                mtime_ns: now,
            },
            Ok((_, sha)) => Look::Changed(format!(
                "was changed (same size, SHA-256 {}… instead of the recorded {}…)",
                sha.short(),
                self.sha256.short()
            )),
            Err(e) => Look::Changed(format!("cannot be read ({})", e.message())),
        }
    }
}

/// What a path in a release, a toolkit or a backup is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawEntry", into = "RawEntry")]
pub enum Entry {
    /// A regular file.
    File(Content),
    /// A symbolic link, by its target as stored (never dereferenced).
    Link {
        /// The link target (`libcudnn.so.9`, or an absolute store path).
        target: String,
        /// The file the link leads to, when recorded: a symlink deployment's
        /// link into the store records the store file's content, checked
        /// through the link. `None` for a release's own chain link and for
        /// a link found in a toolkit.
        leads_to: Option<Content>,
    },
}

impl Entry {
    /// A regular file of `size` bytes with `sha256`.
    pub fn file(size: u64, sha256: Sha256Hex) -> Entry {
        Entry::File(Content { size, sha256 })
    }

    /// A symbolic link to `target`, its destination's content not recorded.
    pub fn link(target: impl Into<String>) -> Entry {
        Entry::Link {
            target: target.into(),
            leads_to: None,
        }
    }

    /// True for a link.
    pub fn is_link(&self) -> bool {
        matches!(self, Entry::Link { .. })
    }

    /// The link target, `None` for a file.
    pub fn link_target(&self) -> Option<&str> {
        match self {
            Entry::Link { target, .. } => Some(target),
            Entry::File(_) => None,
        }
    }

    /// The content: the file's, or the recorded content a link leads to.
    pub fn content(&self) -> Option<&Content> {
        match self {
            Entry::File(c) => Some(c),
            Entry::Link { leads_to, .. } => leads_to.as_ref(),
        }
    }

    /// The content's size; 0 for a link whose destination is not recorded.
    pub fn size(&self) -> u64 {
        self.content().map_or(0, |c| c.size)
    }

    /// The content's SHA-256, when known (see [`Entry::content`]).
    pub fn sha256(&self) -> Option<&Sha256Hex> {
        self.content().map(|c| &c.sha256)
    }
}

/// The on-disk form of an [`Entry`]: the keys cudnnm has always written.
#[derive(Serialize, Deserialize)]
struct RawEntry {
    #[serde(default)]
    size: u64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    sha256: Option<Sha256Hex>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    link: Option<String>,
}

impl TryFrom<RawEntry> for Entry {
    type Error = String;

    fn try_from(r: RawEntry) -> std::result::Result<Entry, String> {
        let content = r.sha256.map(|sha256| Content {
            size: r.size,
            sha256,
        });
        match (r.link, content) {
            (Some(target), leads_to) => Ok(Entry::Link { target, leads_to }),
            (None, Some(c)) => Ok(Entry::File(c)),
            (None, None) => Err("a file is recorded without its SHA-256".into()),
        }
    }
}

impl From<Entry> for RawEntry {
    fn from(e: Entry) -> RawEntry {
        match e {
            Entry::File(c) => RawEntry {
                size: c.size,
                sha256: Some(c.sha256),
                link: None,
            },
            Entry::Link { target, leads_to } => RawEntry {
                size: leads_to.as_ref().map_or(0, |c| c.size),
                sha256: leads_to.map(|c| c.sha256),
                link: Some(target),
            },
        }
    }
}

/// `value` as TOML; `what` names it in the (unexpected) encoding error.
///
/// # Errors
/// When the value cannot be encoded as TOML.
pub fn to_toml<T: Serialize>(value: &T, what: &str) -> Result<String> {
    toml::to_string_pretty(value).map_err(|e| Error::msg(format!("could not encode {what}: {e}")))
}

/// Serde for an id written as text (`backup = "3"` in `deployments.toml`):
/// read from text or a number, written as text as cudnnm always wrote it.
pub mod id_text {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `Some(3)` as `"3"`.
    ///
    /// # Errors
    /// As the serializer's.
    pub fn serialize<S: Serializer>(id: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match id {
            Some(id) => s.collect_str(id),
            None => s.serialize_none(),
        }
    }

    /// Reads `"3"` (or `3`).
    ///
    /// # Errors
    /// When the value is neither a number nor text holding one.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u64),
            Text(String),
        }
        match Option::<Raw>::deserialize(d)? {
            None => Ok(None),
            Some(Raw::Number(n)) => Ok(Some(n)),
            Some(Raw::Text(t)) => t
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| serde::de::Error::custom(format!("'{t}' is not an id"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::sha256_bytes;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Named {
        path: String,
        #[serde(flatten)]
        entry: Entry,
    }

    #[test]
    fn entries_read_and_write_the_keys_cudnnm_always_wrote() {
        let sha = sha256_bytes(b"abc");
        let file: Named =
            toml::from_str(&format!("path = \"a\"\nsize = 3\nsha256 = \"{sha}\"\n")).unwrap();
        assert_eq!(file.entry, Entry::file(3, sha.clone()));
        let chain: Named =
            toml::from_str("path = \"b\"\nsize = 0\nlink = \"libcudnn.so.9\"\n").unwrap();
        assert_eq!(chain.entry, Entry::link("libcudnn.so.9"));
        assert_eq!(chain.entry.size(), 0);
        // A symlink deployment's link into the store, with what it leads to.
        let into_store: Named = toml::from_str(&format!(
            "path = \"c\"\nsize = 3\nsha256 = \"{sha}\"\nlink = \"/s/lib/x\"\n"
        ))
        .unwrap();
        assert_eq!(into_store.entry.link_target(), Some("/s/lib/x"));
        assert_eq!(into_store.entry.sha256(), Some(&sha));
        assert_eq!(into_store.entry.size(), 3);
        for n in [&file, &chain, &into_store] {
            let text = toml::to_string(n).unwrap();
            assert_eq!(&toml::from_str::<Named>(&text).unwrap(), n, "{text}");
            let json = serde_json::to_string(&n.entry).unwrap();
            assert_eq!(serde_json::from_str::<Entry>(&json).unwrap(), n.entry);
        }
        assert_eq!(
            toml::to_string(&chain).unwrap(),
            "path = \"b\"\nsize = 0\nlink = \"libcudnn.so.9\"\n"
        );
        // Neither a hash nor a link: not a record cudnnm writes.
        let e = toml::from_str::<Named>("path = \"d\"\nsize = 3\n").unwrap_err();
        assert!(e.message().contains("without its SHA-256"), "{e}");
    }
}
