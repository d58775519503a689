//! The store probe: the cudnnm store's releases, which cuDNN files are
//! copies of them (a copy's own evidence of its version), and store folders
//! that are damaged or whose files changed (cheap checks; hashing is
//! `verify`'s).

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use super::{file_name, s};
use crate::doctor::snapshot::{
    ChangedRelease, CudnnFile, DamagedRelease, Snapshot, StoreCopy, StorePartial,
};
use crate::home::Home;
use crate::names::{self, FileKind};
use crate::store::{BrokenRelease, FileRecord, Release, Store};
use crate::version::{CudaVariant, ReleaseId};

/// The store as scanned: releases with a receipt, and folders without one.
#[derive(Default)]
pub(crate) struct Scanned {
    /// Releases whose receipt was read.
    pub(crate) releases: Vec<Release>,
    /// Folders that should hold a release but whose receipt is missing or unreadable.
    pub(crate) damaged: Vec<BrokenRelease>,
}

/// Scans the store of `home`; a store that cannot be read is a note.
pub(crate) fn scan(snap: &mut Snapshot, home: &Home) -> Scanned {
    let store = Store::new(home);
    let (releases, damaged) = store.scan().unwrap_or_else(|e| {
        snap.notes.push(format!("store: {e}"));
        Default::default()
    });
    if !home.busy() {
        snap.store_partials = store
            .partials()
            .into_iter()
            .map(|p| StorePartial {
                dir: s(&p.dir),
                bytes: p.bytes,
            })
            .collect();
    }
    Scanned { releases, damaged }
}

/// Fills [`Snapshot::store_damaged`] and [`Snapshot::store_changed`].
pub(crate) fn probe(snap: &mut Snapshot, store: &Scanned) {
    snap.store_damaged = store.damaged.iter().map(damaged_release).collect();
    snap.store_releases = Some(store.releases.iter().map(|r| r.release_id()).collect());
    snap.store_changed = store.releases.iter().filter_map(changed_release).collect();
}

/// Copies of a main library larger than this are not hashed to find their
/// store release (cuDNN 7's single library is hundreds of MB; its real name
/// carries the version anyway).
const STORE_MATCH_MAX: u64 = 64 << 20;

/// Sets [`CudnnFile::store_copy`]: for a library inside the store (through
/// its links), the release whose folder holds it; for a main library
/// elsewhere, the release with a file of the same name, size and SHA-256 —
/// a copy taken from the store keeps its version however it is named.
/// Only files whose name and size match a receipt's are hashed.
pub(crate) fn mark_copies(files: &mut [CudnnFile], releases: &[Release]) {
    let mut by_name_size: HashMap<(String, u64), Vec<(&Release, &FileRecord)>> = HashMap::new();
    for r in releases {
        for rec in r.receipt.files.iter().filter(|x| !x.entry.is_link()) {
            let name = rec.path.rsplit('/').next().unwrap_or(&rec.path).to_string();
            by_name_size
                .entry((name, rec.entry.size()))
                .or_default()
                .push((r, rec));
        }
    }
    let copy = |r: &Release, rec: &FileRecord, inside: bool| StoreCopy {
        release: r.release_id(),
        version: r.version().clone(),
        file: rec.path.clone(),
        inside,
    };
    let mut hashes: HashMap<String, Option<crate::hash::Sha256Hex>> = HashMap::new();
    for f in files.iter_mut() {
        let Some(n) = names::classify(file_name(&f.path)) else {
            continue;
        };
        if n.kind != FileKind::Shared || f.dangling {
            continue;
        }
        let real = f.real_path.clone().unwrap_or_else(|| f.path.clone());
        let real_p = Path::new(&real);
        if let Some(r) = releases.iter().find(|r| real_p.starts_with(&r.dir)) {
            let rel = crate::deploy::rel_path(&r.dir, real_p);
            if let Some(rec) = r.receipt.files.iter().find(|x| x.path == rel) {
                f.store_copy = Some(copy(r, rec, true));
            }
            continue;
        }
        if !n.is_main() || f.size > STORE_MATCH_MAX {
            continue;
        }
        let key = (file_name(&real).to_string(), f.size);
        let Some(cands) = by_name_size.get(&key) else {
            continue;
        };
        let sha = hashes
            .entry(real.clone())
            .or_insert_with(|| crate::hash::sha256_file(real_p).ok().map(|(_, h)| h))
            .clone();
        let Some(sha) = sha else { continue };
        if let Some((r, rec)) = cands
            .iter()
            .find(|(_, rec)| rec.entry.sha256() == Some(&sha))
        {
            f.store_copy = Some(copy(r, rec, false));
        }
    }
}

/// The snapshot's record of a store folder without a readable receipt.
fn damaged_release(b: &BrokenRelease) -> DamagedRelease {
    let cuda = b
        .dir
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("cuda-"))
        .and_then(|c| c.parse::<CudaVariant>().ok());
    let version = b
        .dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(ReleaseId::parse_dir_name);
    DamagedRelease {
        dir: s(&b.dir),
        release: version
            .zip(cuda)
            .map(|((v, f), c)| ReleaseId::new(v, c).with_flavour(f)),
        error: b.error.to_string(),
        unreadable: b.error.kind() == crate::error::Kind::Permission,
    }
}

/// A store release whose files differ from its receipt by size, link
/// target or presence (hashing is `verify`'s: cheap checks only here).
fn changed_release(r: &Release) -> Option<ChangedRelease> {
    let mut files = Vec::new();
    for f in &r.receipt.files {
        let p = r.dir.join(&f.path);
        let problem = match (fs::symlink_metadata(&p), f.entry.link_target()) {
            (Err(_), _) => Some("missing".to_string()),
            (Ok(m), Some(want)) if !m.file_type().is_symlink() => {
                Some(format!("a regular file, expected a link to {want}"))
            }
            (Ok(_), Some(want)) => {
                let got = fs::read_link(&p).map(|t| s(&t)).unwrap_or_default();
                (got != want).then(|| format!("links to {got}, expected {want}"))
            }
            (Ok(m), None) if m.file_type().is_symlink() => Some("a link, expected a file".into()),
            (Ok(m), None) => {
                let size = f.entry.size();
                (m.len() != size).then(|| format!("{} bytes, expected {size}", m.len()))
            }
        };
        if let Some(pr) = problem {
            files.push(format!("{}: {pr}", f.path));
        }
    }
    if files.is_empty() {
        return None;
    }
    let (reinstall, reinstall_is_file) = r.receipt.source.reinstall_arg(&r.id());
    Some(ChangedRelease {
        release: r.release_id(),
        dir: s(&r.dir),
        files,
        reinstall,
        reinstall_is_file,
    })
}
