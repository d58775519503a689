//! Finishing what a crash left (`docs/architecture.md#recovery`): every
//! mutating command, under the home lock and before anything else, looks for
//! journals. A change whose placed files were verified (`verified` in the
//! log) and still check out — copies re-hashed — is completed; anything else
//! is undone in reverse. Either way the toolkit ends fully old or fully new,
//! and the reporter tells the user which.

use std::path::PathBuf;

use serde::Serialize;

use super::{Reporter, apply, backup, inflight, journal};
use crate::error::Result;
use crate::home::Home;
use crate::lock::ToolkitLock;

/// What recovery did with one interrupted change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Resolution {
    /// Undone: the toolkit holds what it held before the change.
    Undone,
    /// Completed: the toolkit holds the change's target, recorded.
    Completed,
}

/// One interrupted change and what became of it.
#[derive(Clone, Debug, Serialize)]
pub struct Recovered {
    /// What had been asked (`use 9.27.0.42_cuda12`).
    pub action: String,
    /// The toolkit root.
    pub toolkit: PathBuf,
    /// Undone or completed.
    pub resolution: Resolution,
    /// What the toolkit holds now (`9.12.0.46`, `no cuDNN`, …).
    pub holds: String,
    /// The change's backup id (kept when completed, removed when undone).
    pub backup: u64,
}

impl Recovered {
    /// One line for the user: which change, which toolkit, old or new now.
    pub fn message(&self) -> String {
        match self.resolution {
            Resolution::Undone => format!(
                "recovered an interrupted `{}` in '{}': undone; the toolkit holds its earlier files again ({})",
                self.action,
                self.toolkit.display(),
                self.holds
            ),
            Resolution::Completed => format!(
                "recovered an interrupted `{}` in '{}': completed; the toolkit holds {} (backup {})",
                self.action,
                self.toolkit.display(),
                self.holds,
                self.backup
            ),
        }
    }
}

/// Finishes or undoes every journal left in the home, telling `reporter`
/// of each as it is done. Call under the home lock. Also removes leftovers
/// of interrupted prunes.
///
/// # Errors
/// When a change can be neither completed nor undone (the error names the
/// backup folder holding the originals; the journal stays for a retry).
pub fn recover_all(home: &Home, reporter: &dyn Reporter) -> Result<Vec<Recovered>> {
    // First the store: a change below may need the release an interrupted
    // `install --force` had moved aside.
    for dir in crate::store::Store::new(home).recover_replaced()? {
        reporter.on_release_restored(&dir);
    }
    let mut out = Vec::new();
    for p in journal::pending(home)? {
        let plan = p.plan.clone();
        // Under the toolkit's lock, like the change itself (a toolkit that
        // is gone has nothing to lock, and nothing another home could change).
        let _toolkit_lock = plan.toolkit.is_dir().then(|| {
            ToolkitLock::acquire(&plan.toolkit, || {
                reporter.on_toolkit_lock_wait(&plan.toolkit)
            })
        });
        let complete = p.has(journal::VERIFIED) && apply::verify(&plan, true).is_ok();
        let resolution = if complete {
            apply::commit(home, &plan)?;
            apply::trim_backup(&plan);
            p.retire()?;
            Resolution::Completed
        } else {
            // `backup.toml` is written, synced, after the moves and before
            // any placement: its presence means placing may have begun.
            let placing = plan.backup_dir.join(backup::BACKUP_FILE).exists();
            apply::undo(home, &plan, placing)?;
            p.retire()?;
            Resolution::Undone
        };
        inflight::release(home, &plan.toolkit, plan.id);
        let r = Recovered {
            action: plan.action.to_string(),
            toolkit: plan.toolkit.clone(),
            resolution,
            holds: match resolution {
                Resolution::Undone => plan.from_label.clone(),
                Resolution::Completed => plan.to_label.clone(),
            },
            backup: plan.id,
        };
        reporter.on_recovered(&r);
        out.push(r);
    }
    backup::sweep_trash(home);
    Ok(out)
}
