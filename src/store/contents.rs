//! A release's bytes against its receipt, read as git reads its index: by
//! size and modification time, hashing only a file whose time differs.

use std::path::PathBuf;

use super::release::load_dir;
use super::{RECEIPT_FILE, Release, Store};
use crate::error::Result;
use crate::fsops;
use crate::record;

impl Store {
    /// Checks that the regular files of `release` whose receipt paths pass
    /// `which` still hold the bytes the receipt records, cheaply
    /// ([`Store::changed_contents`]).
    ///
    /// # Errors
    /// [`Kind::Integrity`] ([`Release::damaged`]) naming the first file that
    /// changed (and how many others did).
    pub fn check_contents(&self, release: &Release, which: impl Fn(&str) -> bool) -> Result<()> {
        let changed = self.changed_contents(release, which);
        if let Some((path, why)) = changed.first() {
            let e = release.damaged(path, why);
            return Err(match changed.len() {
                1 => e,
                n => e.cause(format!(
                    "{} other file{} changed too",
                    n - 1,
                    if n == 2 { "" } else { "s" }
                )),
            });
        }
        Ok(())
    }

    /// The regular files of `release` whose receipt paths pass `which` and
    /// no longer hold the bytes the receipt records, each with why in
    /// words, in receipt order; empty when all hold them. Read cheaply
    /// ([`record::Content::look`]): by size and modification time, reading
    /// a file (SHA-256) only when its time differs from the receipt's or
    /// was never recorded. The receipt is read from disk, so what an
    /// earlier check recorded counts. The times of files found unchanged by
    /// reading them are recorded in the receipt (in this home's own store;
    /// a failure to write is not an error), so the next check reads
    /// nothing: as git refreshes its index.
    pub fn changed_contents(
        &self,
        release: &Release,
        which: impl Fn(&str) -> bool,
    ) -> Vec<(PathBuf, String)> {
        let mut receipt = match load_dir(&release.dir) {
            Ok(Some(r)) => r.receipt,
            _ => release.receipt.clone(),
        };
        let mut changed: Vec<(PathBuf, String)> = Vec::new();
        let mut fresh = false;
        for f in receipt.files.iter_mut().filter(|f| which(&f.path)) {
            let record::Entry::File(content) = &f.entry else {
                continue;
            };
            let path = release.dir.join(&f.path);
            match content.look(&path, f.mtime_ns, true) {
                record::Look::Changed(why) => changed.push((path, why)),
                record::Look::Same { mtime_ns, .. } if mtime_ns != f.mtime_ns => {
                    f.mtime_ns = mtime_ns;
                    fresh = true;
                }
                _ => {}
            }
        }
        if fresh && release.dir.starts_with(&self.root) {
            let _ = fsops::write_atomic(
                &release.dir.join(RECEIPT_FILE),
                receipt.to_toml().as_bytes(),
            );
        }
        changed
    }
}
