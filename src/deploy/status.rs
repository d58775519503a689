//! Drift: whether a toolkit still holds what cudnnm recorded there. A quick
//! check for `current`, `toolkits` and the no-op test of `use` — link
//! targets, hard-link identity with the store file, and the bytes placed by
//! size and modification time, read only when the time differs — plus any
//! cuDNN file that is there but not recorded. `cudnnm verify` re-hashes
//! everything.

use std::path::PathBuf;

use serde::Serialize;

use super::plan::scan_toolkit_names;
use super::{Deployment, Mode, PlacedFile, PlacedFrom};
use crate::platform;
use crate::record::{Content, Entry};
use crate::store::{Receipt, Store};
use crate::toolkit::Toolkit;

/// How a toolkit differs from its deployment record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// Recorded files that are gone.
    pub missing: Vec<PathBuf>,
    /// Recorded files that are something else now.
    pub changed: Vec<PathBuf>,
    /// cuDNN files in the toolkit that the record does not list.
    pub extra: Vec<PathBuf>,
    /// Recorded files that match the record but are not the release's own
    /// copy: a rollback restored them from a backup (the user's edit, or a
    /// file the user added).
    pub not_release: Vec<PathBuf>,
}

impl Drift {
    /// True when the toolkit matches the record.
    pub fn is_clean(&self) -> bool {
        self.missing.is_empty()
            && self.changed.is_empty()
            && self.extra.is_empty()
            && self.not_release.is_empty()
    }

    /// `files match`, or `drift: 1 missing, 2 changed, 1 extra`.
    pub fn summary(&self) -> String {
        if self.is_clean() {
            return "files match".into();
        }
        let mut parts = Vec::new();
        for (n, what) in [
            (self.missing.len(), "missing"),
            (self.changed.len(), "changed"),
            (self.extra.len(), "extra"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        let restored = match self.not_release.len() {
            0 => String::new(),
            n => format!(
                "{n} file{} not the release's copy (restored by rollback)",
                if n == 1 { " is" } else { "s are" }
            ),
        };
        match (parts.is_empty(), restored.is_empty()) {
            (true, _) => format!("files match the record; {restored}"),
            (false, true) => format!("drift: {}", parts.join(", ")),
            (false, false) => format!("drift: {}; {restored}", parts.join(", ")),
        }
    }
}

/// Whether a recorded file is not the release's own copy: a rollback
/// restored it from a backup ([`PlacedFrom::Backup`]), or — in a record written
/// before cudnnm recorded that — its recorded content is not the receipt's.
/// `None` for the release's copy.
pub fn restored_from_backup(p: &PlacedFile, receipt: Option<&Receipt>) -> Option<String> {
    let from = match &p.from {
        PlacedFrom::Backup { id, .. } => {
            return Some(format!("restored by rollback from backup {id}"));
        }
        PlacedFrom::Release(from) => from,
    };
    let rec = receipt?.files.iter().find(|r| &r.path == from);
    match rec {
        None => Some("not a file of the release".into()),
        Some(r) => match (p.entry.sha256(), r.entry.sha256()) {
            (Some(a), Some(b)) if a != b => {
                Some("restored by rollback; its content is not the release's".into())
            }
            _ => None,
        },
    }
}

/// Compares `dep` with the files in `toolkit`. Cheap, as git's index is:
/// link targets, hard-link identity with the store file, and the bytes
/// placed by size and modification time (the deployment's record, else the
/// receipt's), read (SHA-256) only when the time differs — so a same-size
/// edit of a copy, of a hard-linked file or of the store file a link leads
/// to is seen. Records without a time are judged by size alone.
pub fn check(dep: &Deployment, toolkit: &Toolkit, store: &Store) -> Drift {
    let mut d = Drift::default();
    let release_dir = store.dir_of(&dep.release);
    let receipt = store.load(&release_dir).ok().flatten().map(|r| r.receipt);
    // The time the receipt records for the store file `f` came from.
    let receipt_mtime = |f: &PlacedFile| {
        let from = f.from.release_path()?;
        receipt
            .as_ref()?
            .files
            .iter()
            .find(|r| r.path == from)?
            .mtime_ns
    };
    for f in &dep.files {
        let Ok(meta) = std::fs::symlink_metadata(&f.path) else {
            d.missing.push(f.path.clone());
            continue;
        };
        let recorded = f.mtime_ns.or_else(|| receipt_mtime(f));
        // The bytes behind the path (a link followed) are the ones placed.
        let same = |content: &Content| {
            content
                .look(&f.path, recorded, false)
                .is_same_or_unchecked()
        };
        let ok = match &f.entry {
            Entry::Link { target, leads_to } => {
                meta.file_type().is_symlink()
                    && std::fs::read_link(&f.path).is_ok_and(|l| l.as_os_str() == target.as_str())
                    && std::fs::metadata(&f.path).is_ok()
                    && leads_to.as_ref().is_none_or(same)
            }
            Entry::File(content) => match dep.mode {
                // With its release uninstalled a hard link is the only name
                // of its bytes left: judged as a copy is.
                Mode::Hardlink if receipt.is_some() => {
                    f.from
                        .release_path()
                        .is_some_and(|from| platform::same_file(&f.path, &release_dir.join(from)))
                        && same(content)
                }
                _ => meta.is_file() && same(content),
            },
        };
        if !ok {
            d.changed.push(f.path.clone());
        } else if restored_from_backup(f, receipt.as_ref()).is_some() {
            d.not_release.push(f.path.clone());
        }
    }
    d.extra = extra_files(dep, toolkit);
    d
}

/// cuDNN files in `toolkit`'s cuDNN folders ([`Toolkit::cudnn_dirs`]) that
/// `dep` did not place, sorted: what `current`, `verify` and `doctor` call
/// extra, and what a redeploy would move into a backup.
pub fn extra_files(dep: &Deployment, toolkit: &Toolkit) -> Vec<PathBuf> {
    scan_toolkit_names(toolkit)
        .into_iter()
        .filter(|p| !dep.files.iter().any(|f| &f.path == p))
        .collect()
}

/// The one other cuDNN a toolkit now holds in place of the release this
/// home recorded there, from the versions its own files declare (`seen`:
/// the headers' version, and the versions the shared libraries report or
/// their names carry): `Some` when they all agree on one release
/// (`major.minor.patch`) other than `recorded`. Then another cudnnm home,
/// or the user, deployed something else since: the toolkit is consistent
/// and this home's record is out of date, which is not this home's error,
/// and redeploying over it would undo that change. The rule `use`,
/// `verify` and `doctor` share.
pub fn held_instead(
    recorded: &crate::version::Version,
    seen: impl IntoIterator<Item = crate::version::Version>,
) -> Option<crate::version::Version> {
    let seen: std::collections::BTreeSet<_> = seen.into_iter().map(|v| v.triple()).collect();
    let mut it = seen.into_iter();
    match (it.next(), it.next()) {
        (Some(v), None) if v != recorded.triple() => Some(v),
        _ => None,
    }
}

/// This home's judgement of a deployment whose toolkit no longer matches
/// it: `Some` with the one other cuDNN the toolkit now consistently holds
/// ([`toolkit_holds_instead`]) when another cudnnm home, or the user,
/// deployed it since — the record is out of date, not the toolkit damaged;
/// `None` when the difference is drift. `verify` and `current` both judge
/// by this function, so they never disagree about a toolkit.
pub fn replaced(dep: &Deployment, toolkit: &Toolkit) -> Option<crate::version::Version> {
    toolkit_holds_instead(toolkit, &dep.release.version)
}

/// [`held_instead`] for a toolkit on disk: the version its headers declare
/// and the full versions its shared libraries' names carry
/// (`libcudnn_graph.so.9.12.0`, [`crate::names::classify`]).
pub fn toolkit_holds_instead(
    toolkit: &Toolkit,
    recorded: &crate::version::Version,
) -> Option<crate::version::Version> {
    let names = scan_toolkit_names(toolkit).into_iter().filter_map(|p| {
        let name = p.file_name()?.to_string_lossy().into_owned();
        crate::names::classify(&name)
            .filter(|n| n.kind == crate::names::FileKind::Shared && !n.dev_link)
            .and_then(|n| n.full_version)
            .filter(|v| v.parts().len() >= 3)
    });
    held_instead(
        recorded,
        toolkit.header_cudnn_version().into_iter().chain(names),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::sha256_bytes;

    fn placed(from: &str, bytes: &[u8]) -> PlacedFile {
        PlacedFile {
            path: PathBuf::from("/tk/include/cudnn.h"),
            from: PlacedFrom::from(from),
            entry: Entry::file(bytes.len() as u64, sha256_bytes(bytes)),
            mtime_ns: None,
        }
    }

    #[test]
    fn a_file_a_rollback_restored_is_not_the_releases_copy() {
        let receipt: Receipt = toml::from_str(&format!(
            "schema = 1\nversion = \"9.12.0.46\"\ncuda = \"12\"\nplatform = \"linux-x86_64\"\nheader_version = \"9.12.0\"\ninstalled_at = \"x\"\n[source]\nkind = \"wheel\"\nname = \"w\"\n[[file]]\npath = \"include/cudnn.h\"\nsize = 4\nsha256 = \"{}\"\n",
            sha256_bytes(b"orig")
        ))
        .unwrap();
        assert_eq!(
            restored_from_backup(&placed("include/cudnn.h", b"orig"), Some(&receipt)),
            None
        );
        // Labelled by the rollback that restored it.
        assert_eq!(
            restored_from_backup(
                &placed("backup 2: include/cudnn.h", b"edit"),
                Some(&receipt)
            )
            .as_deref(),
            Some("restored by rollback from backup 2")
        );
        // A record written before the label: its content is not the receipt's.
        assert!(
            restored_from_backup(&placed("include/cudnn.h", b"edited"), Some(&receipt)).is_some()
        );
        // Not clean, and said so: `use` of the same release redeploys it.
        let d = Drift {
            not_release: vec![PathBuf::from("/tk/include/cudnn.h")],
            ..Default::default()
        };
        assert!(!d.is_clean());
        assert_eq!(
            d.summary(),
            "files match the record; 1 file is not the release's copy (restored by rollback)"
        );
        assert_eq!(PlacedFrom::from("backup 12: lib64/x").backup_id(), Some(12));
        assert_eq!(PlacedFrom::from("include/cudnn.h").backup_id(), None);
    }
}
