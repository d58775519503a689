//! Removing a release from the store: renamed aside, then deleted, so a
//! crash never leaves a half-deleted release that still has a receipt.

use std::path::Path;

use super::{BrokenRelease, Release, Store};
use crate::error::{Error, Kind, Result};
use crate::fsops;

impl Store {
    /// Removes a release folder from the store (rename aside, then delete, so
    /// a crash never leaves a half-deleted release that still has a receipt).
    ///
    /// # Errors
    /// [`Kind::Permission`] for a release outside this home's own store
    /// (a system release seen from a user's home); I/O errors.
    pub fn remove(&self, release: &Release) -> Result<()> {
        if !release.dir.starts_with(&self.root) {
            return Err(Error::new(
                Kind::Permission,
                format!(
                    "cuDNN {} is in the system store '{}', not in yours",
                    release.id(),
                    fsops::parent_of(fsops::parent_of(&release.dir)).display()
                ),
            )
            .hint(format!(
                "an administrator removes it with `cudnnm uninstall {} --system`",
                release.id()
            )));
        }
        self.remove_dir(&release.dir)
    }

    /// Removes a store folder whose receipt cannot be read (`uninstall`
    /// of a [`BrokenRelease`]), as [`Store::remove`] does: only a
    /// `cuda-<variant>/<version>` folder directly in this home's store.
    ///
    /// # Errors
    /// [`Kind::Permission`] for a folder elsewhere (the system store seen
    /// from a user's home); I/O errors.
    pub fn remove_broken(&self, broken: &BrokenRelease) -> Result<()> {
        let in_store = broken.dir.parent().and_then(Path::parent) == Some(self.root.as_path())
            && broken.release_id().is_some();
        if !in_store {
            return Err(Error::new(
                Kind::Permission,
                format!(
                    "'{}' is not a release folder of the store '{}'",
                    broken.dir.display(),
                    self.root.display()
                ),
            )
            .hint(
                "an administrator removes a system release with `cudnnm uninstall ID --system`",
            ));
        }
        self.remove_dir(&broken.dir)
    }

    /// Renames `dir` aside in the store, then deletes it.
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        let release_dir = dir;
        let t = self.root.join(
            fsops::sibling(release_dir, "trash")
                .file_name()
                .expect("sibling has a name"),
        );
        fsops::rename(release_dir, &t)?;
        fsops::remove_dir_all(&t)?;
        let parent = fsops::parent_of(release_dir);
        fsops::remove_dir_if_empty(parent); // the cuda-<v> folder
        Ok(())
    }
}
