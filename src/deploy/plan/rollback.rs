//! The target side of `rollback`: the plan that backs up what a toolkit
//! holds and puts a backup's files back ([`plan_rollback`]) — links as
//! links, hard links to the store where they were, verified copies else.

use std::path::{Path, PathBuf};

use super::current::{backup_record, held_label, moves_for, reinstall_of};
use super::{
    Action, Next, PLAN_SCHEMA, Place, PlaceKind, Plan, check_no_folder_at, check_toolkit_dirs,
    join_rel, missing_dirs, record_describes, scan_toolkit, source_mtime,
};
use crate::command::CommandLine;
use crate::deploy::backup::BackupRecord;
use crate::deploy::{Deployment, Mode, PlacedFile, PlacedFrom};
use crate::error::{Error, Kind, Result};
use crate::home::Home;
use crate::platform;
use crate::record::Entry;
use crate::store::Store;
use crate::toolkit::Toolkit;

/// How the backup says to install again the release it refers to; for a
/// backup written before it recorded that, the two ways there are.
fn reinstall_hint(source: &BackupRecord) -> String {
    source.reinstall.clone().unwrap_or_else(|| {
        let host = |c: CommandLine| c.for_host(crate::platform::HOST_WINDOWS);
        format!(
            "from the archive or pip requirement it came from: `{}` or `{}`",
            host(CommandLine::install("PATH")),
            host(CommandLine::install("pip:REQUIREMENT"))
        )
    })
}

/// Plans `rollback`: back up every current cuDNN file of `toolkit`, then put
/// back the files of backup `source` (in folder `source_dir`): links as links
/// with their recorded targets; regular files as hard links to the store
/// when the backup held a hard-link deployment whose store files are still
/// there (identical bytes, same mode), else as verified copies of the
/// backup's files, so the backup stays whole and can be restored again.
///
/// # Errors
/// [`Kind::NotFound`] when the backup holds links into a release that is no
/// longer installed; [`Kind::Integrity`] when a backup file is missing.
pub fn plan_rollback(
    home: &Home,
    store: &Store,
    toolkit: &Toolkit,
    source: &BackupRecord,
    source_dir: &Path,
    current: Option<&Deployment>,
    id: u64,
) -> Result<Plan> {
    check_toolkit_dirs(toolkit)?;
    let found = scan_toolkit(toolkit, current, store)?;
    let previous = current.cloned();
    let current = current.filter(|d| record_describes(&found, d, toolkit));
    let backup_dir = home.backups_dir().join(id.to_string());
    let src_dep = source.deployment.as_ref();
    let store_dir = src_dep.map(|d| store.dir_of(&d.release));
    let mut any_copy = false;
    let mut places = Vec::new();
    for f in &source.files {
        let dest = join_rel(&toolkit.root, &f.path)?;
        let pf = src_dep.and_then(|d| d.files.iter().find(|p| p.path == dest));
        // The release's file only when the backup holds what cudnnm placed;
        // a file the user changed (or added) is recorded as the backup's, so
        // `current`, `verify`, `doctor` and the next `use` see that it is not
        // the release's copy.
        let placed_as_is = |p: &&PlacedFile| match (&p.entry, &f.entry) {
            (Entry::Link { target: a, .. }, Entry::Link { target: b, .. }) => a == b,
            (Entry::File(a), Entry::File(b)) => a.sha256 == b.sha256,
            _ => false,
        };
        let from = pf
            .filter(placed_as_is)
            .map(|p| p.from.clone())
            .unwrap_or_else(|| PlacedFrom::Backup {
                id: source.id,
                path: f.path.clone(),
            });
        let state = f.entry.clone();
        let mut from_backup = false;
        let (kind, src) = match f.entry.link_target() {
            Some(l) => {
                let target = PathBuf::from(l);
                if target.is_absolute() && std::fs::metadata(&target).is_err() {
                    let who = src_dep
                        .map(|d| format!("release {}", d.release))
                        .unwrap_or_else(|| "a folder".into());
                    return Err(Error::new(
                        Kind::NotFound,
                        format!(
                            "backup {} holds a link '{}' into {who}, whose file '{}' is gone",
                            source.id, f.path, l
                        ),
                    )
                    .hint(match src_dep {
                        Some(d) => format!(
                            "reinstall cuDNN {} ({}), then run the rollback again",
                            d.release,
                            reinstall_hint(source)
                        ),
                        None => {
                            "restore that file, or roll back to another backup (`cudnnm backups`)"
                                .into()
                        }
                    }));
                }
                (PlaceKind::Link, target)
            }
            None => {
                let store_src = match (src_dep, &store_dir, pf) {
                    (Some(d), Some(sd), Some(pf))
                        if d.mode == Mode::Hardlink && pf.entry.sha256() == f.entry.sha256() =>
                    {
                        // A hard-link deployment places only release files.
                        match pf.from.release_path() {
                            Some(from) => {
                                let s = join_rel(sd, from)?;
                                let ok = std::fs::metadata(&s)
                                    .is_ok_and(|m| m.len() == f.entry.size())
                                    && platform::same_volume(&s, &toolkit.root);
                                ok.then_some(s)
                            }
                            None => None,
                        }
                    }
                    _ => None,
                };
                match (store_src, &f.store) {
                    (Some(s), _) => (PlaceKind::Hardlink, s),
                    (None, Some(s)) => {
                        // An unchanged copy: the store holds its bytes.
                        if std::fs::metadata(s).map(|m| m.len()).ok() != Some(f.entry.size()) {
                            let who = src_dep.map(|d| d.release.to_string()).unwrap_or_default();
                            return Err(Error::new(
                                Kind::NotFound,
                                format!(
                                    "backup {} refers to '{}' of release {who}, which is no longer installed",
                                    source.id,
                                    s.display()
                                ),
                            )
                            .hint(format!(
                                "reinstall cuDNN {who} ({}), then run the rollback again",
                                reinstall_hint(source)
                            )));
                        }
                        any_copy = true;
                        (PlaceKind::Copy, s.clone())
                    }
                    (None, None) => {
                        let b = join_rel(&source_dir.join("files"), &f.path)?;
                        if std::fs::symlink_metadata(&b).is_err() {
                            return Err(Error::new(
                                Kind::Integrity,
                                format!(
                                    "backup {} is incomplete: '{}' is missing",
                                    source.id,
                                    b.display()
                                ),
                            )
                            .hint("roll back to another backup (`cudnnm backups` lists them)"));
                        }
                        any_copy = true;
                        from_backup = true;
                        (PlaceKind::Copy, b)
                    }
                }
            }
        };
        // The time of the bytes placed (see `PlacedFile::mtime_ns`): a copy's,
        // a hard link's store file, the store file a link into the store
        // leads to; none for a chain link.
        let mtime = match (kind, state.content()) {
            (PlaceKind::Copy, _) => f.mtime_ns.or_else(|| source_mtime(&src)),
            (PlaceKind::Link, None) => None,
            _ => source_mtime(&src),
        };
        places.push(Place {
            rel: f.path.clone(),
            dest,
            kind,
            source: src,
            state,
            from,
            mtime_ns: mtime,
            check_hash: from_backup,
        });
    }
    check_no_folder_at(&places)?;
    let mkdirs = missing_dirs(
        &toolkit.root,
        places
            .iter()
            .map(|p| crate::fsops::parent_of(&p.dest).to_path_buf()),
    );
    let next = src_dep.map(|d| Next {
        release: d.release.clone(),
        mode: if d.mode == Mode::Hardlink && any_copy {
            Mode::Copy
        } else {
            d.mode
        },
        source: d.source.clone(),
    });
    let action = Action::Rollback(source.id);
    let held = held_label(&found, current, toolkit);
    Ok(Plan {
        schema: PLAN_SCHEMA,
        id,
        action: action.clone(),
        toolkit: toolkit.root.clone(),
        layout: toolkit.layout,
        moves: moves_for(&found, &backup_dir, id)?,
        backup: backup_record(
            id,
            toolkit,
            format!("before {action}"),
            held.clone(),
            current,
            &found,
            reinstall_of(store, previous.as_ref()),
        ),
        backup_dir,
        mkdirs,
        places,
        next,
        previous,
        from_label: held,
        to_label: source.held.clone(),
    })
}
