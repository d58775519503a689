//! The target side of `use`: where each deployable file of a store release
//! goes in a toolkit ([`release_targets`]), whether the store still holds it
//! whole, and the plan that backs up what the toolkit holds and places the
//! release by a mode ([`plan_use`]).

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::current::{backup_record, held_label, moves_for, reinstall_of};
use super::{
    Action, Next, PLAN_SCHEMA, Place, PlaceKind, Plan, check_no_folder_at, join_rel, missing_dirs,
    rel_path, source_mtime,
};
use super::{check_toolkit_dirs, record_describes, scan_toolkit};
use crate::deploy::{Deployment, Mode, PlacedFrom};
use crate::error::{Error, Kind, Result};
use crate::home::Home;
use crate::record::Entry;
use crate::store::{Release, Store};
use crate::toolkit::{Layout, Toolkit};

/// A file of a release and where it goes in a toolkit.
#[derive(Clone, Debug)]
pub struct Target {
    /// Destination in the toolkit.
    pub dest: PathBuf,
    /// The receipt path (`lib/libcudnn.so.9`).
    pub from: String,
    /// Content (size, hash) or link target, from the receipt.
    pub state: Entry,
}

/// Where each deployable file of `release` goes in `toolkit`: headers
/// (`include/…`) into the include folder, libraries (`lib/…`, any subfolder)
/// into the library folder, DLLs (`bin/…`) into `bin` (Windows layout).
/// Only cuDNN-named files are deployed; licenses and anything else stay in
/// the store (a file cudnnm places must be one the next scan finds again).
///
/// # Errors
/// [`Kind::Conflict`] when the release's platform does not match the
/// toolkit's layout; [`Kind::Integrity`] when two files would land on one
/// name or the receipt lists nothing deployable.
pub fn release_targets(release: &Release, toolkit: &Toolkit) -> Result<Vec<Target>> {
    let windows_release = release.platform().is_windows();
    if windows_release != (toolkit.layout == Layout::Windows) {
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "cuDNN {} is a {} release; the toolkit '{}' has the {} layout",
                release.id(),
                release.platform(),
                toolkit.root.display(),
                toolkit.layout.as_str()
            ),
        )
        .hint("install the release built for the toolkit's platform, or pick another toolkit with --cuda-root"));
    }
    let mut out: Vec<Target> = Vec::new();
    let mut names = BTreeSet::new();
    for f in &release.receipt.files {
        let parts: Vec<&str> = f.path.split('/').collect();
        let (Some(top), Some(name)) = (parts.first(), parts.last()) else {
            continue;
        };
        if parts.len() < 2 || !toolkit.layout.is_cudnn_name(name) {
            continue;
        }
        let dir = match *top {
            "include" => toolkit.include_dir(),
            "lib" => toolkit.lib_dir(),
            "bin" => match toolkit.bin_dir() {
                Some(b) => b,
                None => continue,
            },
            _ => continue,
        };
        let dest = dir.join(name);
        let key = match toolkit.layout {
            Layout::Windows => dest.to_string_lossy().to_ascii_lowercase(),
            Layout::Linux => dest.to_string_lossy().into_owned(),
        };
        if !names.insert(key) {
            return Err(Error::new(
                Kind::Integrity,
                format!(
                    "release {} holds two files named '{name}' for '{}'",
                    release.id(),
                    dir.display()
                ),
            )
            .hint("reinstall the release with `cudnnm install --force …`"));
        }
        // A release's link is its own chain link: placed by its target.
        let state = match &f.entry {
            Entry::Link { target, .. } => Entry::link(target.clone()),
            file => file.clone(),
        };
        out.push(Target {
            dest,
            from: f.path.clone(),
            state,
        });
    }
    if out.is_empty() {
        return Err(Error::new(
            Kind::Integrity,
            format!("release {} has no cuDNN files to deploy", release.id()),
        )
        .hint("reinstall the release with `cudnnm install --force …`"));
    }
    Ok(out)
}

/// Checks that every file of `release` that `use` would place in
/// `toolkit` is whole in the store and holds the bytes its receipt records
/// ([`check_release_files`]): what `use` checks before it judges the
/// toolkit, so a changed store file is refused, never deployed or taken for
/// the release.
///
/// # Errors
/// See [`release_targets`] and [`check_release_files`].
pub fn check_release(store: &Store, release: &Release, toolkit: &Toolkit) -> Result<()> {
    check_release_files(store, release, &release_targets(release, toolkit)?)
}

/// Checks that every file of `release` a plan links, links to or copies is
/// whole in the store: a file of the recorded size and content, or a link of
/// the release's chain whose target is there. Content is judged cheaply
/// ([`Store::check_contents`]): by modification time, reading a file only
/// when its time differs from the receipt's or was never recorded.
///
/// # Errors
/// [`Kind::Integrity`] naming the damaged file, with how to reinstall the release.
fn check_release_files(store: &Store, release: &Release, targets: &[Target]) -> Result<()> {
    for t in targets {
        let path = join_rel(&release.dir, &t.from)?;
        let problem = match std::fs::symlink_metadata(&path) {
            Err(_) => Some("is missing".to_string()),
            Ok(m) => match t.state.link_target() {
                Some(_) if std::fs::metadata(&path).is_err() => {
                    let to = std::fs::read_link(&path)
                        .map(|l| l.display().to_string())
                        .unwrap_or_default();
                    Some(format!("is a broken link (to '{to}')"))
                }
                Some(_) => None,
                None if m.file_type().is_symlink() || !m.is_file() => {
                    Some("is not a regular file".to_string())
                }
                None if m.len() != t.state.size() => Some(format!(
                    "holds {} bytes, not the {} its receipt records",
                    m.len(),
                    t.state.size()
                )),
                None => None,
            },
        };
        if let Some(why) = problem {
            return Err(release.damaged(&path, &why));
        }
    }
    store.check_contents(release, |p| {
        targets.iter().any(|t| t.from == p && !t.state.is_link())
    })
}

/// Plans `use`: back up every current cuDNN file of `toolkit`, place every
/// deployable file of `release` by `mode`. `current` is the recorded
/// deployment in that toolkit; `id` the new backup's id.
///
/// # Errors
/// See [`release_targets`] and [`scan_toolkit`].
pub fn plan_use(
    home: &Home,
    store: &Store,
    toolkit: &Toolkit,
    release: &Release,
    mode: Mode,
    current: Option<&Deployment>,
    id: u64,
) -> Result<Plan> {
    check_toolkit_dirs(toolkit)?;
    let targets = release_targets(release, toolkit)?;
    check_release_files(store, release, &targets)?;
    let found = scan_toolkit(toolkit, current, store)?;
    let previous = current.cloned();
    // A stale record (another home or the user replaced the files) does not
    // name what the backup holds: the files found do.
    let current = current.filter(|d| record_describes(&found, d, toolkit));
    let backup_dir = home.backups_dir().join(id.to_string());
    let places = targets
        .into_iter()
        .map(|t| {
            let src = join_rel(&release.dir, &t.from)?;
            let src_mtime = source_mtime(&src);
            let (kind, source, state) = match (t.state.link_target(), mode) {
                (Some(l), _) => (PlaceKind::Link, PathBuf::from(l), t.state.clone()),
                // A link into the store, checked against the file it leads to.
                (None, Mode::Symlink) => (
                    PlaceKind::Link,
                    src.clone(),
                    Entry::Link {
                        target: src.to_string_lossy().into_owned(),
                        leads_to: t.state.content().cloned(),
                    },
                ),
                (None, Mode::Hardlink) => (PlaceKind::Hardlink, src, t.state.clone()),
                (None, Mode::Copy) => (PlaceKind::Copy, src, t.state.clone()),
            };
            // The time of the bytes placed: the store file's (a copy gets
            // it too), also for a hard link (the same file) and a link into
            // the store; none for a release's own chain link.
            let mtime = match (kind, state.content()) {
                (PlaceKind::Link, None) => None,
                _ => src_mtime,
            };
            Ok(Place {
                rel: rel_path(&toolkit.root, &t.dest),
                dest: t.dest,
                kind,
                source,
                state,
                from: PlacedFrom::Release(t.from),
                mtime_ns: mtime,
                check_hash: false,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    check_no_folder_at(&places)?;
    let mkdirs = missing_dirs(
        &toolkit.root,
        places
            .iter()
            .map(|p| crate::fsops::parent_of(&p.dest).to_path_buf()),
    );
    let action = Action::Use(release.release_id());
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
        next: Some(Next {
            release: release.release_id(),
            mode,
            source: Some(release.receipt.source.clone()),
        }),
        previous,
        from_label: held,
        to_label: release.version().to_string(),
    })
}
