//! Drift: whether a toolkit still holds what cudnnm recorded there. A quick
//! check for `current`, `toolkits` and the no-op test of `use` — link
//! targets, hard-link identity with the store file, copies' size and
//! modification time — plus any cuDNN file that is there but not recorded.
//! `cudnnm verify` re-hashes everything.

use std::path::PathBuf;

use serde::Serialize;

use super::plan::{release_dir_of, scan_toolkit_names};
use super::{Deployment, Mode, mtime_ns};
use crate::platform;
use crate::store::Store;
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
}

impl Drift {
    /// True when the toolkit matches the record.
    pub fn is_clean(&self) -> bool {
        self.missing.is_empty() && self.changed.is_empty() && self.extra.is_empty()
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
        format!("drift: {}", parts.join(", "))
    }
}

/// Compares `dep` with the files in `toolkit`.
pub fn check(dep: &Deployment, toolkit: &Toolkit, store: &Store) -> Drift {
    let mut d = Drift::default();
    let release_dir = release_dir_of(store, &dep.release);
    for f in &dep.files {
        let Ok(meta) = std::fs::symlink_metadata(&f.path) else {
            d.missing.push(f.path.clone());
            continue;
        };
        let ok = match &f.link {
            Some(t) => {
                meta.file_type().is_symlink()
                    && std::fs::read_link(&f.path).is_ok_and(|l| l.as_os_str() == t.as_str())
                    && std::fs::metadata(&f.path).is_ok()
            }
            None => match dep.mode {
                Mode::Hardlink => release_dir
                    .as_ref()
                    .is_some_and(|r| platform::same_file(&f.path, &r.join(&f.from))),
                _ => {
                    meta.is_file()
                        && meta.len() == f.size
                        && (f.mtime_ns.is_none() || mtime_ns(&meta) == f.mtime_ns)
                }
            },
        };
        if !ok {
            d.changed.push(f.path.clone());
        }
    }
    for p in scan_toolkit_names(toolkit) {
        if !dep.files.iter().any(|f| f.path == p) {
            d.extra.push(p);
        }
    }
    d
}
