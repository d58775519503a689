//! Finishing what a crash left (`docs/architecture.md#recovery`): every
//! mutating command, under the home lock and before anything else, looks for
//! journals. A change whose placed files were verified (`verified` in the
//! log) and still check out — copies re-hashed — is completed; anything else
//! is undone in reverse. Either way the toolkit ends fully old or fully new,
//! and the reporter tells the user which. The other journaled changes (an
//! [`journal::Op`]) are completed past their point of no return and undone
//! before it, each by its own module.
//!
//! Each runs under the lock its change took: the home lock (held by the
//! guard that calls this) and, for a change to a toolkit, that toolkit's
//! lock — taken, or the recovery stops with the error; never run without it.

use std::path::PathBuf;

use serde::Serialize;

use super::journal::{self, Op, Pending, Work};
use super::{Reporter, apply, backup, inflight};
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
    /// What had been asked (`use 9.27.0.42_cuda12`, `uninstall 9.12.0.46_cuda12`).
    pub action: String,
    /// The toolkit root, for a change to a toolkit (and a doctor fix in one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toolkit: Option<PathBuf>,
    /// Undone or completed.
    pub resolution: Resolution,
    /// What there is now: what the toolkit holds (`9.12.0.46`, `no cuDNN`,
    /// …) after a change to a toolkit; else the state in words (`cuDNN
    /// 9.12.0.46_cuda12 is installed again`).
    pub holds: String,
    /// A deployment's backup id (kept when completed, removed when undone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup: Option<u64>,
}

impl Recovered {
    /// What recovery did with an op (not a deployment): `holds` says the state now.
    pub(super) fn op(action: String, resolution: Resolution, holds: String) -> Recovered {
        Recovered {
            action,
            toolkit: None,
            resolution,
            holds,
            backup: None,
        }
    }

    /// One line for the user: which change, which toolkit, old or new now.
    pub fn message(&self) -> String {
        let (Some(toolkit), Some(backup)) = (&self.toolkit, self.backup) else {
            let how = match self.resolution {
                Resolution::Undone => "undone",
                Resolution::Completed => "completed",
            };
            return format!(
                "recovered an interrupted `{}`: {how}; {}",
                self.action, self.holds
            );
        };
        match self.resolution {
            Resolution::Undone => format!(
                "recovered an interrupted `{}` in '{}': undone; the toolkit holds its earlier files again ({})",
                self.action,
                toolkit.display(),
                self.holds
            ),
            Resolution::Completed => format!(
                "recovered an interrupted `{}` in '{}': completed; the toolkit holds {} (backup {backup})",
                self.action,
                toolkit.display(),
                self.holds,
            ),
        }
    }
}

/// Finishes or undoes every journal left in the home, telling `reporter`
/// of each as it is done. Call under the home lock (the guard's). Also
/// removes leftovers of interrupted prunes.
///
/// # Errors
/// When a change can be neither completed nor undone (the error names the
/// backup folder holding the originals; the journal stays for a retry), or
/// the lock of the toolkit it changed cannot be taken.
pub fn recover_all(home: &Home, reporter: &dyn Reporter) -> Result<Vec<Recovered>> {
    // First the store: a change below may need the release an interrupted
    // `install --force` had moved aside.
    for dir in crate::store::Store::new(home).recover_replaced()? {
        reporter.on_release_restored(&dir);
    }
    let mut out = Vec::new();
    for p in journal::pending(home)? {
        let r = match &p.work {
            Work::Deploy(plan) => {
                let plan = plan.as_ref().clone();
                recover_deploy(home, reporter, &plan, p)?
            }
            Work::Op(op) => {
                let op = op.clone();
                recover_op(home, reporter, &op, p)?
            }
        };
        reporter.on_recovered(&r);
        out.push(r);
    }
    backup::removal::sweep_trash(home);
    Ok(out)
}

/// The lock of the toolkit at `root` for recovering a change to it. A
/// toolkit that is gone has nothing to lock, and nothing another home
/// could change; any other failure stops the recovery.
fn lock_toolkit(root: &std::path::Path, reporter: &dyn Reporter) -> Result<Option<ToolkitLock>> {
    if !root.is_dir() {
        return Ok(None);
    }
    ToolkitLock::acquire(root, || reporter.on_toolkit_lock_wait(root)).map(Some)
}

/// Completes or undoes a change to a toolkit (see the module docs).
fn recover_deploy(
    home: &Home,
    reporter: &dyn Reporter,
    plan: &super::plan::Plan,
    p: Pending,
) -> Result<Recovered> {
    // Under the toolkit's lock, like the change itself.
    let _toolkit_lock = lock_toolkit(&plan.toolkit, reporter)?;
    let complete = p.has(journal::VERIFIED) && apply::verify(plan, true).is_ok();
    let resolution = if complete {
        apply::commit(home, plan)?;
        apply::trim_backup(plan);
        p.retire()?;
        Resolution::Completed
    } else {
        // `backup.toml` is written, synced, after the moves and before
        // any placement: its presence means placing may have begun.
        let placing = plan.backup_dir.join(backup::BACKUP_FILE).exists();
        apply::undo(home, plan, placing)?;
        p.retire()?;
        Resolution::Undone
    };
    inflight::release(home, &plan.toolkit, plan.id);
    Ok(Recovered {
        action: plan.action.to_string(),
        toolkit: Some(plan.toolkit.clone()),
        resolution,
        holds: match resolution {
            Resolution::Undone => plan.from_label.clone(),
            Resolution::Completed => plan.to_label.clone(),
        },
        backup: Some(plan.id),
    })
}

/// Completes or undoes an op, each by its own module, under the lock of the
/// toolkit it changed (a doctor fix in one).
fn recover_op(home: &Home, reporter: &dyn Reporter, op: &Op, p: Pending) -> Result<Recovered> {
    let r = match op {
        Op::RemoveBackups(r) => backup::removal::recover(home, r, &p)?,
        Op::Uninstall(u) => super::uninstall::recover(home, u, &p)?,
        Op::LinkFix(f) => {
            let _toolkit_lock = match &f.toolkit {
                Some(root) => lock_toolkit(root, reporter)?,
                None => None,
            };
            super::link_fix::recover(f, &p)?
        }
    };
    p.retire()?;
    Ok(r)
}
