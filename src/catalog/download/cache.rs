//! What the archive cache `downloads/` holds, and cleaning it
//! (`cudnnm cache`, `cudnnm cache clean`): archives named by SHA-256 with
//! their sidecars, partial downloads (`.partial-<key>`, resumable) and their
//! per-archive locks (`.lock-<key>`). Everything there is cudnnm's own; a
//! partial file whose download is still running (its `.lock-<key>` is held)
//! is left alone, and so is an archive an install holds between its download
//! and its import (its `.use-<sha256>`, [`super::ArchiveHold`]).

use std::fs::{self, File, TryLockError};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{CacheRecord, read_record, sidecar};
use crate::error::Result;
use crate::fsops;
use crate::hash::Sha256Hex;

/// One thing in `downloads/`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CacheEntry {
    /// The file (`downloads/<sha256>`, `downloads/.partial-<key>`).
    pub path: PathBuf,
    /// Its size in bytes (with its sidecar, for an archive).
    pub bytes: u64,
    /// What it is.
    #[serde(flatten)]
    pub kind: CacheKind,
}

/// The kinds of [`CacheEntry`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CacheKind {
    /// A finished, verified archive.
    Archive {
        /// The archive's file name as downloaded (from its sidecar).
        name: Option<String>,
        /// The release it belongs to (`9.12.0.46_cuda12`), from its sidecar.
        release: Option<String>,
        /// Its platform (`linux-x86_64`).
        platform: Option<String>,
        /// An install holds it now: downloaded, about to be imported.
        in_use: bool,
    },
    /// Bytes of a download that has not finished: resumable by the next
    /// install of the same archive.
    Partial {
        /// A download is writing it now (its lock is held).
        in_flight: bool,
    },
}

/// The archive cache folder's entries, archives first (by name), then partials.
pub fn entries(dir: &Path) -> Vec<CacheEntry> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(meta) = e.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        if let Some(key) = name.strip_prefix(".partial-") {
            out.push(CacheEntry {
                path: e.path(),
                bytes: meta.len(),
                kind: CacheKind::Partial {
                    in_flight: lock_held(&dir.join(format!(".lock-{key}"))),
                },
            });
        } else if let Ok(sha) = Sha256Hex::parse(&name) {
            let side = sidecar(dir, &sha);
            let rec: Option<CacheRecord> = read_record(&side);
            let side_bytes = fs::metadata(&side).map(|m| m.len()).unwrap_or(0);
            out.push(CacheEntry {
                path: e.path(),
                bytes: meta.len() + side_bytes,
                kind: CacheKind::Archive {
                    name: rec.as_ref().map(|r| r.name.clone()),
                    release: rec.as_ref().map(|r| {
                        crate::version::ReleaseId::new(r.version.clone(), r.cuda)
                            .with_flavour(r.flavour)
                            .to_string()
                    }),
                    platform: rec.as_ref().map(|r| r.platform.to_string()),
                    in_use: lock_held(&super::use_path(dir, &sha)),
                },
            });
        }
    }
    out.sort_by(|a, b| {
        let partial = |e: &CacheEntry| matches!(e.kind, CacheKind::Partial { .. });
        partial(a).cmp(&partial(b)).then(a.path.cmp(&b.path))
    });
    out
}

/// Whether another process holds the lock file at `path` (a download of
/// that archive is running).
fn lock_held(path: &Path) -> bool {
    crate::fsops::open_to_try_lock(path)
        .is_ok_and(|f| matches!(f.try_lock(), Err(TryLockError::WouldBlock)))
}

/// What [`clean`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Cleaned {
    /// What was removed.
    pub removed: Vec<CacheEntry>,
    /// Partial files left because their download is running.
    pub in_flight: Vec<CacheEntry>,
    /// Archives left because an install holds them (downloaded, not imported yet).
    pub in_use: Vec<CacheEntry>,
}

impl Cleaned {
    /// Bytes removed.
    pub fn bytes(&self) -> u64 {
        self.removed.iter().map(|e| e.bytes).sum()
    }
}

/// Removes every archive (with its sidecar) and every partial download
/// whose download is not running, with their lock files, from the cache
/// folder `dir`. Call under the home lock, so no import is reading an
/// archive meanwhile. A running download holds its archive's lock, and its
/// partial file is left alone; an install between its download and its
/// import holds the archive ([`super::ArchiveHold`], `.use-<sha256>`), and
/// the archive is left alone. An archive is removed with that lock held
/// here, so an install that comes for it meanwhile waits, then downloads it
/// again.
///
/// # Errors
/// When a file cannot be removed (those before it are gone).
pub fn clean(dir: &Path) -> Result<Cleaned> {
    let mut done = Cleaned::default();
    for e in entries(dir) {
        match &e.kind {
            CacheKind::Partial { in_flight: true } => done.in_flight.push(e),
            CacheKind::Partial { in_flight: false } => {
                let name = e.path.file_name().unwrap_or_default().to_string_lossy();
                let key = name.trim_start_matches(".partial-").to_string();
                fsops::remove_file(&e.path)?;
                fsops::remove_file(&super::lock_path(dir, &key))?;
                done.removed.push(e);
            }
            CacheKind::Archive { .. } => {
                let name = e.path.file_name().unwrap_or_default().to_string_lossy();
                let Ok(sha) = Sha256Hex::parse(&name) else {
                    continue;
                };
                let lock = super::use_path(dir, &sha);
                let Some(_held) = claim(&lock)? else {
                    done.in_use.push(e);
                    continue;
                };
                fsops::remove_file(&e.path)?;
                fsops::remove_file(&sidecar(dir, &sha))?;
                fsops::remove_file(&lock)?;
                done.removed.push(e);
            }
        }
    }
    Ok(done)
}

/// The lock file at `path` locked exclusively by this process, when no
/// other process holds it; `None` when one does.
///
/// # Errors
/// When the file cannot be opened, created or locked.
fn claim(path: &Path) -> Result<Option<File>> {
    loop {
        let (f, _) = fsops::open_append(path)?;
        match f.try_lock() {
            // A holder that let go removed it meanwhile: the name's file counts.
            Ok(()) if !super::still_named(path, &f) => continue,
            Ok(()) => return Ok(Some(f)),
            Err(TryLockError::WouldBlock) => return Ok(None),
            Err(TryLockError::Error(e)) => return Err(crate::error::Error::io("lock", path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_removes_archives_and_dead_partials_but_not_a_running_download() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        let sha = crate::hash::sha256_bytes(b"archive");
        fsops::write_atomic(&dir.join(sha.as_str()), b"archive").unwrap();
        let rec = CacheRecord {
            name: "cudnn-linux-x86_64-9.12.0.46_cuda12-archive.tar.xz".into(),
            sha256: sha.clone(),
            size: 7,
            url: "https://example.invalid/x".into(),
            version: "9.12.0.46".parse().unwrap(),
            cuda: "12".parse().unwrap(),
            platform: "linux-x86_64".parse().unwrap(),
            flavour: crate::version::Flavour::Full,
            verified: true,
            fetched_at: "2026-01-01T00:00:00Z".into(),
        };
        let side = toml::to_string_pretty(&rec).unwrap();
        // The full build's sidecar reads as those written before flavours.
        assert!(!side.contains("flavour"), "{side}");
        fsops::write_atomic(&sidecar(dir, &sha), side.as_bytes()).unwrap();
        fsops::write_atomic(&dir.join(".partial-dead"), b"12345").unwrap();
        fsops::write_atomic(&dir.join(".lock-dead"), b"").unwrap();
        fsops::write_atomic(&dir.join(".partial-live"), b"123").unwrap();
        let (live, _) = fsops::open_append(&dir.join(".lock-live")).unwrap();
        live.lock().unwrap();
        // An archive an install holds for its import.
        let held = crate::hash::sha256_bytes(b"held");
        fsops::write_atomic(&dir.join(held.as_str()), b"held").unwrap();
        let (hold, _) = fsops::open_append(&super::super::use_path(dir, &held)).unwrap();
        hold.lock_shared().unwrap();
        let all = entries(dir);
        assert_eq!(all.len(), 4);
        let first = all
            .iter()
            .position(|e| e.path == dir.join(sha.as_str()))
            .unwrap();
        assert_eq!(all[first].bytes, 7 + side.len() as u64);
        assert!(
            all.iter()
                .any(|e| matches!(e.kind, CacheKind::Archive { in_use: true, .. }))
        );
        assert_eq!(
            all[first].kind,
            CacheKind::Archive {
                name: Some(rec.name.clone()),
                release: Some("9.12.0.46_cuda12".into()),
                platform: Some("linux-x86_64".into()),
                in_use: false,
            }
        );
        assert!(
            all.iter()
                .any(|e| e.kind == CacheKind::Partial { in_flight: true })
        );
        let done = clean(dir).unwrap();
        assert_eq!(done.bytes(), 7 + side.len() as u64 + 5);
        assert_eq!(done.in_flight.len(), 1);
        assert_eq!(done.in_use.len(), 1);
        assert_eq!(done.in_use[0].path, dir.join(held.as_str()));
        let left: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let mut left = left;
        left.sort();
        let use_file = format!(".use-{held}");
        assert_eq!(
            left,
            vec![".lock-live", ".partial-live", &use_file, held.as_str()]
        );
        // Let go: the next clean removes it (and its lock file).
        drop(hold);
        let done = clean(dir).unwrap();
        assert_eq!(done.removed.len(), 1, "{done:?}");
        assert!(!dir.join(held.as_str()).exists() && !dir.join(&use_file).exists());
    }

    #[test]
    fn a_jit_builds_download_is_listed_with_its_flavour() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        let sha = crate::hash::sha256_bytes(b"wheel");
        fsops::write_atomic(&dir.join(sha.as_str()), b"wheel").unwrap();
        let side = format!(
            "name = \"nvidia_cudnn_jit_cu12-9.12.0.46-py3-none-manylinux_2_27_x86_64.whl\"\n\
             sha256 = \"{}\"\nsize = 5\nurl = \"https://example.invalid/w\"\n\
             version = \"9.12.0.46\"\ncuda = \"12\"\nplatform = \"linux-x86_64\"\n\
             flavour = \"jit\"\nverified = true\nfetched_at = \"2026-01-01T00:00:00Z\"\n",
            sha.as_str()
        );
        fsops::write_atomic(&sidecar(dir, &sha), side.as_bytes()).unwrap();
        let all = entries(dir);
        assert!(
            matches!(&all[0].kind, CacheKind::Archive { release: Some(r), .. } if r == "9.12.0.46_cuda12+jit"),
            "{:?}",
            all[0].kind
        );
    }
}
