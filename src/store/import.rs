//! Imports into the store: a release is built in a `store/.partial-*`
//! folder and committed by renaming it into place (replacing an installed
//! one by moving that aside first), so the store holds a release whole or
//! not at all; and what an interrupted import left (partial folders, a
//! release moved aside), found and finished under the home lock.

use std::fs;
use std::path::{Path, PathBuf};

use super::{RECEIPT_FILE, Receipt, Release, Store};
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::record;

/// A folder an import left in the store (`store/.partial-*`): killed, or
/// still running when the home lock is held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialLeft {
    /// The folder.
    pub dir: PathBuf,
    /// Bytes of the files in it.
    pub bytes: u64,
}

/// The name prefix a release replaced by `install --force` has beside its
/// successor while the swap is under way: `cuda-12/.replaced-9.1.0.70`.
pub const REPLACED_PREFIX: &str = ".replaced-";

impl Store {
    /// The same store with the test-only pause before commit (see
    /// `CUDNNM_TEST_PAUSE_AFTER_STEP=0` and `CUDNNM_TEST_PAUSE_FILE`).
    pub fn with_pause_file(mut self, file: Option<PathBuf>) -> Store {
        self.pause_file = file;
        self
    }

    fn pause_point(&self) {
        if let Some(f) = &self.pause_file {
            crate::interrupt::test_pause(f);
        }
    }

    /// Folders interrupted imports left (`store/.partial-*`), with their
    /// sizes. While an import runs (it holds the home lock) its own folder is
    /// one of them; callers that cannot tell check [`crate::home::Home::busy`].
    /// A folder an import streaming a download fills now (its [`BUSY_FILE`]
    /// is locked by that process) is not one of them.
    pub fn partials(&self) -> Vec<PartialLeft> {
        let Ok(rd) = fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut out: Vec<PartialLeft> = rd
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".partial-"))
            .filter(|e| !busy_elsewhere(&e.path()))
            .map(|e| PartialLeft {
                bytes: tree_bytes(&e.path()),
                dir: e.path(),
            })
            .collect();
        out.sort_by(|a, b| a.dir.cmp(&b.dir));
        out
    }

    /// The same store whose replacing [`Store::commit`] aborts the process
    /// right after step `step` (1: the old release moved aside; 2: the new
    /// one in place; 3: the old one deleted), as a kill would; for the
    /// crash tests (`CUDNNM_FAULT_AFTER_STEP`, read by debug builds only).
    pub fn with_fault_after_step(mut self, step: Option<u64>) -> Store {
        self.fault_after_step = step;
        self
    }

    fn fault_point(&self, step: u64) {
        if self.fault_after_step == Some(step) {
            // Die now, as a kill -9 would: no destructor, no undo.
            std::process::abort();
        }
    }

    /// Releases an interrupted `install --force` left moved aside
    /// (`cuda-*/.replaced-<version>`), as `(folder, the release folder it belongs in)`.
    pub fn replaced(&self) -> Vec<(PathBuf, PathBuf)> {
        let mut out = Vec::new();
        let Ok(top) = fs::read_dir(&self.root) else {
            return out;
        };
        for cuda_dir in top.flatten() {
            if !cuda_dir.file_name().to_string_lossy().starts_with("cuda-") {
                continue;
            }
            let Ok(rd) = fs::read_dir(cuda_dir.path()) else {
                continue;
            };
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if let Some(v) = n.strip_prefix(REPLACED_PREFIX) {
                    out.push((e.path(), cuda_dir.path().join(v)));
                }
            }
        }
        out.sort();
        out
    }

    /// Finishes or undoes each replacement an interrupted `install --force`
    /// left: when the new release is in place the old one is deleted;
    /// otherwise the old one is moved back. Either way one release is in the
    /// store. Call under the home lock. Returns the release folders whose
    /// old release came back.
    ///
    /// # Errors
    /// When an old release cannot be moved back (it stays where it is and
    /// the next command tries again).
    pub fn recover_replaced(&self) -> Result<Vec<PathBuf>> {
        let mut restored = Vec::new();
        for (aside, dest) in self.replaced() {
            if fs::symlink_metadata(&dest).is_ok() {
                fsops::remove_dir_all(&aside)?;
            } else {
                fsops::rename(&aside, &dest)?;
                fsops::sync_dir(fsops::parent_of(&dest));
                restored.push(dest);
            }
        }
        Ok(restored)
    }

    /// Starts an import: a fresh `store/.partial-*` folder, removed on drop
    /// unless committed. Also sweeps partial folders left by crashed imports.
    ///
    /// # Errors
    /// When the store folder cannot be created (read-only home, full disk).
    pub fn begin_import(&self) -> Result<PartialRelease> {
        // Ctrl-C now sets a flag the copy loops check: the import stops and
        // its partial folder is removed before the process exits.
        crate::interrupt::doing(crate::interrupt::Activity::Import);
        fsops::create_dir_all(&self.root)?;
        self.recover_replaced()?;
        self.sweep_partials();
        let dir = tempfile::Builder::new()
            .prefix(".partial-")
            .tempdir_in(&self.root)
            .with_path("create a folder in", &self.root)?;
        Ok(PartialRelease {
            dir: Some(dir),
            busy: None,
        })
    }

    /// Starts an import that fills its partial folder while a download runs,
    /// without the home lock: as [`Store::begin_import`] (call it under the
    /// home lock), and the folder's [`BUSY_FILE`] is locked for as long as
    /// the returned [`PartialRelease`] lives, so that the sweep of another
    /// import (and `doctor`) leaves the folder alone after this process has
    /// released the home lock. Commit it under the home lock again.
    ///
    /// `Ok(None)` when the file system cannot lock a file (some network file
    /// systems): the caller then imports after the download instead.
    ///
    /// # Errors
    /// As [`Store::begin_import`].
    pub fn begin_streamed_import(&self) -> Result<Option<PartialRelease>> {
        let mut partial = self.begin_import()?;
        let path = partial.path().join(BUSY_FILE);
        let file = fsops::create_new_file(&path).with_path("create", &path)?;
        if file.try_lock().is_err() {
            return Ok(None);
        }
        partial.busy = Some(file);
        Ok(Some(partial))
    }

    /// Removes `.partial-*` and `.trash-*` folders whose owner is gone. An
    /// import in progress holds the home lock, so callers sweep only under it.
    fn sweep_partials(&self) {
        let Ok(rd) = fs::read_dir(&self.root) else {
            return;
        };
        for e in rd.flatten() {
            let n = e.file_name();
            let n = n.to_string_lossy();
            if (n.starts_with(".partial-") || n.starts_with(".trash-"))
                && !busy_elsewhere(&e.path())
            {
                let _ = fsops::remove_dir_all(&e.path());
            }
        }
    }

    /// Moves a finished partial release into place as `version`/`cuda`,
    /// writing its receipt and making its files read-only. With `replace`,
    /// an existing release there is swapped out and deleted: it is first
    /// renamed to `.replaced-<version>` beside it, then the new one is
    /// renamed into place, then the old one is deleted. A kill between the
    /// two renames leaves the old release aside, and the next command under
    /// the lock ([`Store::recover_replaced`]) moves it back: the store always
    /// holds the old release or the new one.
    ///
    /// # Errors
    /// [`Kind::Conflict`] when a release exists there and `replace` is false;
    /// I/O errors (the partial folder is removed, the store unchanged).
    pub fn commit(
        &self,
        mut partial: PartialRelease,
        receipt: Receipt,
        replace: bool,
    ) -> Result<Release> {
        let dest = self.release_dir_of(&receipt.release_id());
        // Never one build over the other (an older cudnnm's JIT build in
        // the full build's folder): they are different releases.
        if let Ok(Some(there)) = super::release::load_dir(&dest)
            && there.flavour() != receipt.build_flavour()
        {
            return Err(super::other_build_there(&there, receipt.build_flavour()));
        }
        let dir = partial.path().to_path_buf();
        // Under the home lock now: the folder needs its own lock no longer.
        partial.release_busy()?;
        self.pause_point();
        if crate::interrupt::requested() {
            return Err(crate::interrupt::import_error());
        }
        // Each file's time with its size and hash: later checks read only
        // files whose time changed (`check_contents`, `Content::look`).
        let mut receipt = receipt;
        for f in receipt.files.iter_mut().filter(|f| !f.entry.is_link()) {
            f.mtime_ns = fs::metadata(dir.join(&f.path))
                .ok()
                .and_then(|m| record::mtime_ns(&m));
        }
        fsops::write_atomic(&dir.join(RECEIPT_FILE), receipt.to_toml().as_bytes())?;
        for f in &receipt.files {
            if !f.entry.is_link() {
                fsops::set_readonly(&dir.join(&f.path), true)?;
            }
        }
        if self.shared {
            // The system store: every user reads it, nobody but its owner changes it.
            fsops::make_tree_shared(&dir)?;
        }
        fsops::sync_dir(&dir);
        let parent = fsops::parent_of(&dest).to_path_buf();
        fsops::create_dir_all(&parent)?;
        if self.shared {
            fsops::make_shared(&self.root)?;
            fsops::make_shared(&parent)?;
            // The whole system home (store and downloads): on Windows its
            // own DACL, not the one %ProgramData% would let users write under.
            fsops::protect_system_home(fsops::parent_of(&self.root))?;
        }
        let mut aside = None;
        if dest.exists() {
            if !replace {
                return Err(Error::new(
                    Kind::Conflict,
                    format!("'{}' already exists", dest.display()),
                ));
            }
            let name = dest.file_name().unwrap_or_default().to_string_lossy();
            let a = parent.join(format!("{REPLACED_PREFIX}{name}"));
            if fs::symlink_metadata(&a).is_ok() {
                // Left by an earlier replacement whose successor is in place.
                fsops::remove_dir_all(&a)?;
            }
            fsops::rename(&dest, &a)?;
            fsops::sync_dir(&parent);
            aside = Some(a);
            self.fault_point(1);
        }
        if let Err(e) = fsops::rename(&dir, &dest) {
            if let Some(a) = &aside {
                let _ = fsops::rename(a, &dest);
            }
            return Err(e);
        }
        partial.keep();
        fsops::sync_dir(&parent);
        if let Some(a) = aside {
            self.fault_point(2);
            fsops::remove_dir_all(&a)?;
            self.fault_point(3);
        }
        Ok(Release { dir: dest, receipt })
    }
}

/// The file in a partial folder that a streaming import keeps locked while
/// it fills the folder without holding the home lock
/// ([`Store::begin_streamed_import`]); removed before the commit.
pub const BUSY_FILE: &str = ".busy";

/// Whether the partial folder `dir` is being filled by another process now:
/// its [`BUSY_FILE`] exists and another open file holds its lock.
fn busy_elsewhere(dir: &Path) -> bool {
    fs::OpenOptions::new()
        .read(true)
        .open(dir.join(BUSY_FILE))
        .is_ok_and(|f| matches!(f.try_lock(), Err(fs::TryLockError::WouldBlock)))
}

/// A release being built in `store/.partial-*`; deleted on drop unless committed.
#[derive(Debug)]
pub struct PartialRelease {
    dir: Option<tempfile::TempDir>,
    /// The locked [`BUSY_FILE`] of a streaming import.
    busy: Option<fs::File>,
}

impl PartialRelease {
    /// The partial folder.
    pub fn path(&self) -> &Path {
        self.dir.as_ref().expect("partial folder present").path()
    }

    /// Unlocks and removes the [`BUSY_FILE`], if this folder has one.
    fn release_busy(&mut self) -> Result<()> {
        if self.busy.take().is_some() {
            fsops::remove_file(&self.path().join(BUSY_FILE))?;
        }
        Ok(())
    }

    fn keep(mut self) {
        if let Some(d) = self.dir.take() {
            let _ = d.keep();
        }
    }
}

impl Drop for PartialRelease {
    fn drop(&mut self) {
        // Closed first: Windows removes no file another handle holds open.
        self.busy = None;
        if let Some(d) = self.dir.take() {
            // Files may be read-only already; clear them so the folder can go.
            let p = d.path().to_path_buf();
            let _ = d.keep();
            let _ = fsops::remove_dir_all(&p);
        }
    }
}

/// Bytes of the regular files under `dir` (links not followed).
fn tree_bytes(dir: &Path) -> u64 {
    let Ok(rd) = fs::read_dir(dir) else { return 0 };
    rd.flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => tree_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::home::Home;

    #[test]
    fn a_streaming_imports_partial_folder_outlives_sweeps_until_it_is_dropped() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let store = Store::new(&home);
        let streamed = store
            .begin_streamed_import()
            .unwrap()
            .expect("a local disk locks files");
        let dir = streamed.path().to_path_buf();
        assert!(dir.join(BUSY_FILE).is_file());
        // Another import's sweep, and the report of folders left, pass it by.
        let other = store.begin_import().unwrap();
        assert!(dir.is_dir(), "swept while its import runs");
        let left: Vec<PathBuf> = store.partials().into_iter().map(|p| p.dir).collect();
        assert_eq!(left, vec![other.path().to_path_buf()]);
        drop(other);
        // Dropped (the download failed): the folder goes.
        drop(streamed);
        assert!(!dir.exists());
        assert!(store.partials().is_empty());
    }
}
