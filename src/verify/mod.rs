//! `verify`: re-hashes every store release against its receipt and every
//! deployment against what was placed, reporting modified, missing and extra
//! files per release and per toolkit; loads each deployed main library where
//! this platform can and compares `cudnnGetVersion()` with the receipt.
//!
//! A deployed file a rollback restored from a backup (the user's change to
//! a file of the release, kept when switching away and brought back) is
//! checked against the deployment record, which holds its content, and
//! listed as `restored`: it is not the release's copy, as `current` says
//! too, but it is what the record says is there. Each record that needs
//! attention carries `help` naming only commands that can work (releases
//! the catalog lists, the deployment's own release and mode).
//!
//! A command of its own over the store and the deployments, below `doctor`
//! (which reads its advice, [`repair_commands`]): `check.rs` compares files
//! with records, `help.rs` says what to do, `text.rs` prints the report.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::catalog::Catalog;
use crate::catalog::offer::offers_for;
use crate::deploy::Deployments;
use crate::error::Result;
use crate::home::Home;
use crate::libcudnn::LibraryVersion;
use crate::platform::HOST_WINDOWS;
use crate::progress::Progress;
use crate::store::Store;
use crate::version::{Platform, ReleaseId};

mod check;
mod help;
mod text;

use check::{check_deployment, check_release};
pub use help::repair_commands;
use help::{
    deployment_help, now_holds_help, orphaned_help, reinstall_help, release_help, toolkit_gone_help,
};
pub use text::text;

/// Loads a batch of libraries and asks each for its version; one answer
/// per path, in order (`Err` says why one did not load). The CLI passes a
/// loader that runs each load in a child process.
pub type LoadVersions<'a> =
    &'a (dyn Fn(&[PathBuf]) -> Vec<std::result::Result<LibraryVersion, String>> + Sync);

/// The whole result.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct VerifyReport {
    /// No mismatch anywhere.
    pub healthy: bool,
    /// One entry per store release.
    pub releases: Vec<Check>,
    /// One entry per deployment.
    pub deployments: Vec<Check>,
}

/// The result for one release or one deployment.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Check {
    /// The release id; `None` for a store folder whose name is no release
    /// id (`cuda-x/9.1.0.70` with an unreadable receipt), named by `path`.
    pub release: Option<ReleaseId>,
    /// The release folder, or the toolkit root for a deployment.
    pub path: String,
    /// Files checked.
    pub files: usize,
    /// Files whose content or link target changed, with what changed.
    pub modified: Vec<String>,
    /// Files that are gone.
    pub missing: Vec<String>,
    /// Files that should not be there.
    pub extra: Vec<String>,
    /// Deployed files that match the record but are not the release's own
    /// copy: a rollback restored them from a backup (the user's change).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub restored: Vec<String>,
    /// What to do about what was found.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub help: Vec<String>,
    /// The deployed main library's own answer, when it was loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<LibraryCheck>,
    /// A problem that stopped the check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// For a deployment: the one other cuDNN the toolkit now consistently
    /// holds ([`crate::deploy::status::held_instead`]): another cudnnm home,
    /// or the user, deployed it since. This home's record is out of date;
    /// that is not this home's error, so the check passes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub now_holds: Option<String>,
    /// For a deployment: the toolkit folder no longer exists (deleted or
    /// moved). Nothing cudnnm owns is damaged, so the check passes; `help`
    /// says how to forget it (`cudnnm toolkits forget`) and which backups
    /// of it stay.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub toolkit_gone: bool,
    /// For a deployment: its release is not in the store any more
    /// (uninstalled), but it placed copies or hard links, which hold their
    /// own bytes, and every one still matches the hash recorded when it
    /// was placed. The toolkit works; nothing is damaged, so the check
    /// passes, and `help` says how to reinstall the release or switch.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub orphaned: bool,
}

impl Check {
    /// The release id as text; for a store folder that names none, the
    /// folder's own name.
    pub fn name(&self) -> String {
        match &self.release {
            Some(id) => id.to_string(),
            None => Path::new(&self.path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }

    /// True when nothing is wrong.
    pub fn ok(&self) -> bool {
        if self.toolkit_gone {
            return true;
        }
        if self.now_holds.is_some() {
            return self.error.is_none();
        }
        self.modified.is_empty()
            && self.missing.is_empty()
            && self.extra.is_empty()
            && self.error.is_none()
            && self.library.as_ref().is_none_or(|l| l.ok)
    }
}

/// `cudnnGetVersion()` of a deployed library against the receipt.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LibraryCheck {
    /// The library loaded.
    pub path: String,
    /// The receipt's `header_version`.
    pub expected: String,
    /// What the library reported.
    pub reported: Option<String>,
    /// Why it could not be loaded.
    pub error: Option<String>,
    /// They agree.
    pub ok: bool,
}

/// Verifies the store and the deployments of `home`. `progress` sees the
/// bytes of every file as it is re-hashed (one phase, its total the bytes
/// of every file the records list).
///
/// # Errors
/// When the store or `deployments.toml` cannot be read at all.
pub fn verify(
    home: &Home,
    catalog: &Catalog,
    query: Option<LoadVersions>,
    progress: &dyn Progress,
) -> Result<VerifyReport> {
    let (releases, broken) = Store::new(home).scan()?;
    let deployments = Deployments::load(home)?;
    let total: u64 = releases
        .iter()
        .flat_map(|r| r.receipt.files.iter().map(|f| &f.entry))
        .chain(
            deployments
                .entries
                .iter()
                .flat_map(|d| d.files.iter().map(|p| &p.entry)),
        )
        .filter(|e| !e.is_link() && e.sha256().is_some())
        .map(|e| e.size())
        .sum();
    progress.start("re-hashing the store and the deployments", Some(total));
    let backups = crate::deploy::backup::list(home).unwrap_or_default();
    let report = verify_with(
        catalog,
        query,
        progress,
        releases,
        broken,
        deployments,
        &backups,
    );
    progress.finish();
    Ok(report)
}

/// [`verify`] once the records are read.
fn verify_with(
    catalog: &Catalog,
    query: Option<LoadVersions>,
    progress: &dyn Progress,
    releases: Vec<crate::store::Release>,
    broken: Vec<crate::store::BrokenRelease>,
    deployments: Deployments,
    backups: &[crate::deploy::backup::Backup],
) -> VerifyReport {
    let offers = offers_for(catalog, Platform::host());
    let mut rel: Vec<Check> = releases
        .iter()
        .map(|r| {
            let mut c = check_release(r, progress);
            if !c.ok() {
                c.help.push(release_help(&offers, r, &deployments));
            }
            c
        })
        .collect();
    // A release folder whose receipt is gone or unreadable cannot be verified: that is a failure.
    rel.extend(broken.iter().map(|b| {
        let id = b.release_id();
        Check {
            release: id.clone(),
            path: b.dir.display().to_string(),
            error: Some(b.error.to_string()),
            help: vec![format!(
                "{}, or delete '{}' if you no longer need it",
                reinstall_help(
                    &offers,
                    &id.as_ref()
                        .map_or_else(|| "it".to_string(), ToString::to_string),
                    None
                ),
                b.dir.display()
            )],
            ..Default::default()
        }
    }));
    let dep: Vec<Check> = deployments
        .entries
        .iter()
        .map(|d| {
            // A toolkit folder that is gone holds nothing to check: said, not a failure.
            if crate::toolkit::is_gone(&d.toolkit) {
                let ids: Vec<u64> = backups
                    .iter()
                    .filter(|b| b.record.toolkit == d.toolkit)
                    .map(|b| b.record.id)
                    .collect();
                return Check {
                    release: Some(d.release.clone()),
                    path: d.toolkit.to_string_lossy().into_owned(),
                    files: d.files.len(),
                    toolkit_gone: true,
                    help: vec![toolkit_gone_help(d, &ids)],
                    ..Default::default()
                };
            }
            let r = releases.iter().find(|r| r.release_id() == d.release);
            let mut c = check_deployment(d, r, query, progress);
            // A link deployment of a changed store release: the change is
            // the store's, and `use` would link the same files again.
            let store_changed = !c.ok()
                && d.mode != crate::deploy::Mode::Copy
                && rel.iter().any(|x| x.release.as_ref() == Some(&d.release) && !x.ok());
            // Another home (or the user) put another release there since:
            // the toolkit is consistent, this home's record is stale.
            let holds = (!c.ok())
                .then(|| crate::toolkit::Toolkit::at(&d.toolkit, "deployments.toml", HOST_WINDOWS).ok())
                .flatten()
                .and_then(|t| crate::deploy::status::replaced(d, &t));
            if let Some(v) = holds {
                c.now_holds = Some(v.to_string());
                c.help = vec![now_holds_help(d, &v)];
                return c;
            }
            if c.orphaned {
                c.help = vec![orphaned_help(&offers, d, &releases)];
                return c;
            }
            c.help = if store_changed {
                vec![format!(
                    "these files are the store's own ({} deployment): release {} itself changed, and deploying it again links the same files — repair it as its store entry says",
                    d.mode, d.release
                )]
            } else {
                deployment_help(&offers, d, r.is_some(), &c)
            };
            c
        })
        .collect();
    let healthy = rel.iter().chain(&dep).all(Check::ok);
    VerifyReport {
        healthy,
        releases: rel,
        deployments: dep,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A check names its release by the typed id, written as the id text
    /// in JSON; a store folder that names no release is named by its folder
    /// and has no id (`null`), never a folder name passed off as an id.
    #[test]
    fn a_check_is_named_by_its_release_id_or_its_folder() {
        let c = Check {
            release: Some("9.1.0.70_cuda12".parse().unwrap()),
            path: "/h/store/cuda-12/9.1.0.70".into(),
            ..Default::default()
        };
        assert_eq!(c.name(), "9.1.0.70_cuda12");
        assert_eq!(
            serde_json::to_value(&c).unwrap()["release"],
            "9.1.0.70_cuda12"
        );
        let c = Check {
            release: None,
            path: "/h/store/cuda-x/9.1.0.70".into(),
            ..Default::default()
        };
        assert_eq!(c.name(), "9.1.0.70");
        assert!(serde_json::to_value(&c).unwrap()["release"].is_null());
    }
}
