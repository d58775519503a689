//! Removing a release from the store (`uninstall`), journaled as an op
//! ([`Uninstall`]) so that a crash never leaves a backup half-changed, a
//! default naming a release that is gone, or a `current/` link dangling.
//!
//! The steps: make every backup that needs the release's files hold them
//! (one at a time, each logged `kept <id>`); remove the release folder
//! (renamed aside in the store, then deleted: its disappearance is the
//! point of no return, logged `removed`); remove the `current/` links and
//! records that pointed at it and clear the default that named it
//! (`unlinked`). Recovery completes an uninstall whose folder is gone and
//! undoes one whose folder is still there — the release stays installed;
//! a backup it was making hold the files is finished, so its record and
//! its files agree (it then holds a hard link to the release's bytes,
//! which costs no space while the release is installed).
//!
//! Only the guard runs it ([`crate::deploy::Guard::uninstall`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::backup::{self, Materialized, Materializer, Referring};
use super::journal::{FaultHook, Journal, Op, Pending};
use super::recover::{Recovered, Resolution};
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::home::Home;
use crate::progress::Progress;
use crate::store::{BrokenRelease, Release, Store};
use crate::version::ReleaseId;

/// Log line: the release folder is gone from the store; from here it completes.
const REMOVED: &str = "removed";
/// Log line: the links and the default that named it are gone.
const UNLINKED: &str = "unlinked";

/// A `current/` link (or `.path` record) to remove with the release, and
/// what it pointed at when the uninstall was planned: it is removed only
/// while it still does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StableLink {
    /// The link, or the `.path` record.
    pub path: PathBuf,
    /// Its target (for a record, the path it holds).
    pub target: PathBuf,
}

impl StableLink {
    /// The link at `path` as it is now (`None` when it is neither a link
    /// nor a `.path` record).
    pub fn read(path: &Path) -> Option<StableLink> {
        let target = if is_path_record(path) {
            PathBuf::from(std::fs::read_to_string(path).ok()?.trim())
        } else {
            std::fs::read_link(path).ok()?
        };
        Some(StableLink {
            path: path.to_path_buf(),
            target,
        })
    }

    /// Removes it when it still points where it did.
    fn remove_if_unchanged(&self) -> Result<bool> {
        if StableLink::read(&self.path).as_ref() != Some(self) {
            return Ok(false);
        }
        if is_path_record(&self.path) {
            fsops::remove_file(&self.path)?;
        } else {
            fsops::remove_link(&self.path)?;
        }
        Ok(true)
    }
}

fn is_path_record(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "path")
}

/// The store folder an uninstall removes.
#[derive(Clone, Copy, Debug)]
pub enum Folder<'a> {
    /// An installed release.
    Release(&'a Release),
    /// A release folder whose receipt cannot be read.
    Broken(&'a BrokenRelease),
}

impl Folder<'_> {
    fn dir(&self) -> &Path {
        match self {
            Folder::Release(r) => &r.dir,
            Folder::Broken(b) => &b.dir,
        }
    }
}

/// What [`crate::deploy::Guard::uninstall`] removes, as the operation
/// decided it (every check made, every refusal passed).
#[derive(Debug)]
pub struct ReleaseRemoval<'a> {
    /// The release (its id) and its folder.
    pub release: ReleaseId,
    /// The folder.
    pub folder: Folder<'a>,
    /// Backups to make hold the release's files first ([`backup::referring_to`]).
    pub keep_in: Vec<Referring>,
    /// `current/` links and records to remove with it.
    pub links: Vec<StableLink>,
    /// The default (as `config.toml` spells it) to clear, when it names the release.
    pub default: Option<String>,
}

/// What the uninstall did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReleaseRemoved {
    /// Each backup that now holds the release's files it needs.
    pub kept: Vec<Materialized>,
    /// Bytes the disk got back: the release's files with no name left
    /// elsewhere ([`crate::disk::Tally::freed`]).
    pub freed: u64,
    /// Bytes of its files that stay on disk, shared (hard links) with
    /// backups or toolkits that still need them.
    pub shared: u64,
    /// The `current/` links and records removed.
    pub links_removed: Vec<PathBuf>,
    /// The default cleared (as `config.toml` spelled it).
    pub default_cleared: Option<String>,
}

/// The journaled uninstall (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Uninstall {
    /// The release.
    pub release: ReleaseId,
    /// Its store folder.
    pub dir: PathBuf,
    /// The backups made to hold its files first, in order.
    pub keep_in: Vec<u64>,
    /// Links and records removed with it.
    pub links: Vec<StableLink>,
    /// The default cleared with it.
    pub default: Option<String>,
}

impl Uninstall {
    fn action(&self) -> String {
        format!("uninstall {}", self.release)
    }
}

/// Runs the uninstall `r` (see the module docs). Call under the guard.
///
/// # Errors
/// When a backup cannot be made to hold the files (nothing is removed; the
/// backups done so far hold their files), the release folder cannot be
/// removed (nothing is removed), or a link or the config cannot be written
/// (the release is gone; the next command under the guard finishes);
/// [`Kind::Interrupted`] on Ctrl-C before the folder goes.
pub(super) fn execute(
    home: &Home,
    store: &Store,
    r: &ReleaseRemoval<'_>,
    progress: &dyn Progress,
    fault: FaultHook,
) -> Result<ReleaseRemoved> {
    let u = Uninstall {
        release: r.release.clone(),
        dir: r.folder.dir().to_path_buf(),
        keep_in: r.keep_in.iter().map(|k| k.backup.record.id).collect(),
        links: r.links.clone(),
        default: r.default.clone(),
    };
    crate::interrupt::doing(crate::interrupt::Activity::Change);
    let mut j = Journal::begin_op(home, &Op::Uninstall(u.clone()), fault)?;
    let kept = match keep_files(&u, &r.keep_in, progress, &mut j) {
        Ok(kept) => kept,
        Err(e) => {
            j.retire()?;
            return Err(e);
        }
    };
    // What the disk gets back: files with no name left outside the release
    // (a backup or a hard-link deployment may share them).
    let mut tally = crate::disk::Tally::new();
    tally.add_tree(&u.dir);
    let removed = match r.folder {
        Folder::Release(rel) => store.remove(rel),
        Folder::Broken(b) => store.remove_broken(b),
    };
    // Renamed away but not all deleted: it is gone; the rest waits for a sweep.
    if let Err(e) = removed
        && std::fs::symlink_metadata(&u.dir).is_ok()
    {
        j.retire()?;
        return Err(e);
    }
    j.step_committed(REMOVED)?;
    let (links_removed, default_cleared) = unlink(home, &u)?;
    j.step_committed(UNLINKED)?;
    j.retire()?;
    Ok(ReleaseRemoved {
        kept,
        freed: tally.freed(),
        shared: tally.shared(),
        links_removed,
        default_cleared,
    })
}

/// Makes each backup of `refs` hold its files of the release, logging each.
fn keep_files(
    u: &Uninstall,
    refs: &[Referring],
    progress: &dyn Progress,
    j: &mut Journal,
) -> Result<Vec<Materialized>> {
    if refs.is_empty() {
        return Ok(Vec::new());
    }
    let bytes = refs.iter().map(|r| r.bytes).sum();
    progress.start(
        &format!("keeping cuDNN {}'s files in the backups", u.release),
        Some(bytes),
    );
    let mut m = Materializer::new(&u.dir, &u.release, progress, &fsops::hard_link);
    let mut kept = Vec::new();
    let result = refs.iter().try_for_each(|r| {
        kept.push(m.backup(r)?);
        j.step(&format!("kept {}", r.backup.record.id))
            .map_err(|e| interrupted(e, &u.release))
    });
    progress.finish();
    result.map(|()| kept)
}

/// The error of an uninstall stopped by Ctrl-C before its release went.
fn interrupted(e: Error, release: &ReleaseId) -> Error {
    if e.kind() != Kind::Interrupted {
        return e;
    }
    Error::new(
        Kind::Interrupted,
        format!("interrupted; cuDNN {release} is still installed"),
    )
    .hint("the backups done so far hold their own copies of its files; run the command again to remove it")
}

/// Removes the links that still point where they did and clears the
/// default when it still names the release.
fn unlink(home: &Home, u: &Uninstall) -> Result<(Vec<PathBuf>, Option<String>)> {
    let mut removed = Vec::new();
    for l in &u.links {
        if l.remove_if_unchanged()? {
            removed.push(l.path.clone());
        }
    }
    let mut cleared = None;
    if let Some(was) = &u.default {
        let mut config = home.config()?;
        if config.default.as_ref() == Some(was) {
            config.default = None;
            home.save_config(&config)?;
            cleared = Some(was.clone());
        }
    }
    Ok((removed, cleared))
}

/// Completes an uninstall whose release folder is gone (links, default),
/// or undoes one whose folder is still there (the backup it was making
/// hold the files is finished, see the module docs).
///
/// # Errors
/// When a link, the config or that backup cannot be written.
pub(super) fn recover(home: &Home, u: &Uninstall, p: &Pending) -> Result<Recovered> {
    if p.has(REMOVED) || std::fs::symlink_metadata(&u.dir).is_err() {
        unlink(home, u)?;
        return Ok(Recovered::op(
            u.action(),
            Resolution::Completed,
            format!("cuDNN {} is removed from the store", u.release),
        ));
    }
    // The first backup not logged done may be half-way: its record and its
    // files agree again once it is done (nothing else is redone).
    let doing = u.keep_in.iter().find(|id| !p.has(&format!("kept {id}")));
    if let Some(id) = doing {
        let refs = backup::referring_to(home, &u.dir)?;
        if let Some(r) = refs
            .iter()
            .find(|r| r.backup.record.id == *id && Materializer::begun(r))
        {
            let none = crate::progress::NoProgress;
            Materializer::new(&u.dir, &u.release, &none, &fsops::hard_link).backup(r)?;
        }
    }
    Ok(Recovered::op(
        u.action(),
        Resolution::Undone,
        format!("cuDNN {} is still installed", u.release),
    ))
}
