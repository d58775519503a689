//! Typed records shared by the store, deployments, backups and journals:
//! what a path holds ([`Entry`]: a file with its size and SHA-256, or a link
//! with its target), and how a record is encoded ([`to_toml`]). State files
//! are read and written one way by `fsops` (`load_toml`, `save_toml`).
//!
//! On disk an entry is the three keys every release of cudnnm wrote —
//! `size`, `sha256`, `link` — so receipts, `deployments.toml`,
//! `backup.toml` files and journals written before this type read the same
//! (and older releases read what this one writes).

use serde::{Deserialize, Serialize};

use crate::digest::Sha256Hex;
use crate::error::{Error, Result};

/// The bytes of a regular file: size and SHA-256. Whether a file on disk
/// holds them is [`Content::look`]'s to say (in the `hash` module, which reads files).
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

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Named {
        path: String,
        #[serde(flatten)]
        entry: Entry,
    }

    #[test]
    fn entries_read_and_write_the_keys_cudnnm_always_wrote() {
        let sha = Sha256Hex::from_bytes(&[0xab; 32]);
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
