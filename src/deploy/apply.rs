//! Running a [`Plan`] (`docs/architecture.md#deploying`): journal, move the current
//! files into the backup, place the target's files, verify, record, retire
//! the journal. Any failure before the journal is retired is undone in
//! reverse in this process; a crash is finished or undone by the next
//! command ([`super::recover`]) with the same [`undo`] and [`commit`].

use std::path::{Path, PathBuf};

use super::inflight;
use super::journal::{self, FaultHook, Journal};
use super::plan::{Action, Place, PlaceKind, Plan};
use super::{Deployment, Deployments};
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::hash;
use crate::home::Home;
use crate::platform;
use crate::progress::Progress;
use crate::record::{self, Entry};

/// What a finished change did.
#[derive(Debug)]
pub struct Outcome {
    /// The plan that ran.
    pub plan: Plan,
    /// The deployment now recorded for the toolkit (none after restoring
    /// files cudnnm did not deploy).
    pub deployment: Option<Deployment>,
}

/// Runs `plan` as one transaction. On failure, or on Ctrl-C / SIGTERM
/// (checked at every journal step; see [`crate::interrupt`]), everything is
/// undone before returning (the error then says nothing changed); if even the undo fails,
/// the journal stays for the next command and the error says where the
/// original files are.
///
/// The in-flight marker is written first and lives exactly as long as the
/// journal: it goes when the journal is retired or was never written, and
/// stays with a journal left for the next command ([`inflight::Claim`]).
/// Call through [`super::Change`], which holds the toolkit lock.
///
/// `progress` sees the bytes of the long steps: files copied into the
/// toolkit (`--mode copy`, a rollback's copies), and files moved into the
/// backup when it is on another volume (a move that copies).
///
/// # Errors
/// The first failure (I/O, a placed file that does not verify, a full disk).
pub fn execute(
    home: &Home,
    plan: Plan,
    fault: FaultHook,
    progress: &dyn Progress,
) -> Result<Outcome> {
    let marker = inflight::Claim::new(home, &plan);
    // From here Ctrl-C / SIGTERM stop the change at the next step and undo it.
    crate::interrupt::doing(crate::interrupt::Activity::Change);
    let mut journal = Journal::begin(home, &plan, fault)?;
    let mut placing = false;
    let result = forward(home, &plan, &mut journal, &mut placing, progress);
    progress.finish();
    let result = match result {
        Ok(deployment) => Ok(deployment),
        Err(e) => match undo(home, &plan, placing) {
            // Undone: the toolkit is as it was; the journal goes as after a success.
            Ok(()) if e.kind() == Kind::Interrupted => {
                // Its message already says the toolkit is as it was.
                Err(e)
            }
            Ok(()) => Err(e.cause(format!(
                "nothing changed: the earlier files are back in '{}'",
                plan.toolkit.display()
            ))),
            Err(u) => {
                // The journal and the marker stay: the next command finishes the undo.
                marker.keep();
                return Err(not_undone(&plan, &e, &u));
            }
        },
    };
    if let Err(e) = journal.retire() {
        marker.keep();
        return Err(e);
    }
    drop(marker);
    result.map(|deployment| Outcome { plan, deployment })
}

/// The error of a change that failed with `e` and whose undo failed with `u`.
fn not_undone(plan: &Plan, e: &Error, u: &Error) -> Error {
    Error::new(
        e.kind(),
        format!(
            "could not {} in '{}', nor undo it",
            plan.action,
            plan.toolkit.display()
        ),
    )
    .cause(e.message())
    .cause(u.message())
    .hint(format!(
        "{}; fix the cause, then run any cudnnm command (e.g. `cudnnm current`) to finish the undo",
        originals_hint(plan)
    ))
}

/// Where one original file of a change is while the change is not undone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OriginalAt {
    /// Back in (or still in) the toolkit.
    Toolkit,
    /// In the change's backup folder, at this path.
    Backup(PathBuf),
    /// An unchanged copy cudnnm placed, trimmed from the backup: the undo
    /// copies it back from this store file, which holds the same bytes.
    Store(PathBuf),
    /// Neither in the toolkit nor in the backup, and no store file holds it.
    Missing,
}

/// Where each original of `plan` is now, by its toolkit-relative path, in
/// the order of the plan's moves.
pub fn originals(plan: &Plan) -> Vec<(String, OriginalAt)> {
    plan.moves
        .iter()
        .map(|m| {
            let at = if exists(&m.to) {
                OriginalAt::Backup(m.to.clone())
            } else if exists(&m.from) && is_state(&m.from, &m.state) {
                OriginalAt::Toolkit
            } else if let Some(src) = &m.store_copy {
                OriginalAt::Store(src.clone())
            } else {
                OriginalAt::Missing
            };
            (m.rel.clone(), at)
        })
        .collect()
}

/// Where the originals of a change that is not undone are, for a hint:
/// those in the backup folder, and each one that comes back from the store
/// named with its store file ([`originals`]).
pub fn originals_hint(plan: &Plan) -> String {
    let all = originals(plan);
    let in_backup = all
        .iter()
        .filter(|(_, a)| matches!(a, OriginalAt::Backup(_)))
        .count();
    let from_store: Vec<String> = all
        .iter()
        .filter_map(|(rel, a)| match a {
            OriginalAt::Store(src) => Some(format!("{rel} from '{}'", src.display())),
            _ => None,
        })
        .collect();
    let missing: Vec<&str> = all
        .iter()
        .filter(|(_, a)| *a == OriginalAt::Missing)
        .map(|(rel, _)| rel.as_str())
        .collect();
    let files = plan.backup_dir.join("files");
    let mut parts = Vec::new();
    if in_backup > 0 || (from_store.is_empty() && missing.is_empty()) {
        parts.push(if from_store.is_empty() && missing.is_empty() {
            format!("the original files are safe in '{}'", files.display())
        } else {
            format!(
                "{in_backup} original file{} {} safe in '{}'",
                if in_backup == 1 { "" } else { "s" },
                if in_backup == 1 { "is" } else { "are" },
                files.display()
            )
        });
    }
    if !from_store.is_empty() {
        parts.push(format!(
            "{} unchanged cop{} of the release's files come{} back from the store: {}",
            from_store.len(),
            if from_store.len() == 1 { "y" } else { "ies" },
            if from_store.len() == 1 { "s" } else { "" },
            from_store.join(", ")
        ));
    }
    if !missing.is_empty() {
        parts.push(format!("not found anywhere: {}", missing.join(", ")));
    }
    parts.join("; ")
}

fn forward(
    home: &Home,
    plan: &Plan,
    j: &mut Journal,
    placing: &mut bool,
    progress: &dyn Progress,
) -> Result<Option<Deployment>> {
    for (i, d) in plan.mkdirs.iter().enumerate() {
        fsops::create_dir_all(d)?;
        j.step(&format!("mkdir {i}"))?;
    }
    fsops::create_dir_all(&plan.backup_dir.join("files"))?;
    // The new backup folder's entry in `backups/` is durable before any file
    // moves into it (Unix; a no-op on Windows).
    fsops::sync_dir(fsops::parent_of(&plan.backup_dir));
    for d in plan.backup_dirs() {
        fsops::create_dir_all(&d)?;
    }
    // A move into a backup on another volume copies: that is a long step.
    let copied_moves = !plan.moves.is_empty()
        && !platform::same_volume(&plan.toolkit, fsops::parent_of(&plan.backup_dir));
    if copied_moves {
        let total = plan.moves.iter().map(|m| m.state.size()).sum();
        progress.start(
            &format!("moving the toolkit's cuDNN files into backup {}", plan.id),
            Some(total),
        );
    }
    for (i, m) in plan.moves.iter().enumerate() {
        // Renamed, never deleted, even when the store holds the bytes: a DLL
        // a running program has loaded can be renamed on Windows, not deleted.
        fsops::move_file(&m.from, &m.to, m.state.sha256())?;
        if copied_moves {
            progress.advance(m.state.size());
        }
        j.step(&format!("move {i}"))?;
    }
    if copied_moves {
        progress.finish();
    }
    for d in plan.backup_dirs().iter().chain(plan.toolkit_dirs().iter()) {
        fsops::sync_dir(d);
    }
    j.step(journal::MOVED)?;
    // The records are written (and synced) before the new files are placed:
    // every flush happens before the bulk of a copy, as with `cp`, and while
    // the journal exists they are tentative (undo restores the earlier
    // record). A synced `backup.toml` is also recovery's sign that every
    // original is safe in the backup and placing may have begun.
    let dep = commit(home, plan)?;
    *placing = true;
    j.step(journal::RECORDED)?;
    // Old copies go before the new ones are written, as with `rm` then `cp`:
    // deleting gigabytes while new ones wait to be written back stalls on
    // the file system's journal. Undo can make them again from the store.
    trim_backup(plan);
    let copies: u64 = plan
        .places
        .iter()
        .filter(|p| p.kind == PlaceKind::Copy)
        .map(|p| p.state.size())
        .sum();
    if copies > 0 {
        progress.start(
            &format!("copying cuDNN files into '{}'", plan.toolkit.display()),
            Some(copies),
        );
    }
    for (i, p) in plan.places.iter().enumerate() {
        place(p).map_err(|e| toolkit_full(e, p, plan))?;
        if p.kind == PlaceKind::Copy {
            progress.advance(p.state.size());
        }
        j.step(&format!("place {i}"))?;
    }
    progress.finish();
    verify(plan, false)?;
    // Nothing is flushed after placing: the OS writes it back, as after `cp`.
    // A `verified` lost to a power cut only makes recovery undo the change
    // (whole); a completed one is re-checked first, copies re-hashed.
    j.step(journal::VERIFIED)?;
    Ok(dep)
}

/// Deletes the unchanged copies a change renamed aside (`.cudnnm-old-*`;
/// `backup.toml` records them by store file), and any such file an earlier
/// change left in the same folders. Best effort: a DLL still loaded by a
/// program (Windows) stays until a later change.
pub fn trim_backup(plan: &Plan) {
    for m in plan.moves.iter().filter(|m| m.store_copy.is_some()) {
        let _ = fsops::remove_file(&m.to);
    }
    for d in plan.toolkit_dirs() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(".cudnnm-old-") {
                let _ = fsops::remove_file(&e.path());
            }
        }
    }
}

/// For a full disk while placing `p`: the hint says it is the toolkit's
/// disk that is full (not the home's), and for a `use`, that links take no
/// space there.
fn toolkit_full(e: Error, p: &Place, plan: &Plan) -> Error {
    if !e.is_disk_full() {
        return e;
    }
    let dir = super::access::describe_dir(fsops::parent_of(&p.dest));
    let symlink = if matches!(plan.action, Action::Use(_)) {
        ", or deploy with `--mode symlink` (links into the store take no space there)"
    } else {
        ""
    };
    e.hint(format!(
        "the disk holding the toolkit folder {dir} is full: free some space there{symlink}, then run the command again"
    ))
}

/// Puts one file into the toolkit.
fn place(p: &Place) -> Result<()> {
    match p.kind {
        PlaceKind::Link => fsops::symlink(&p.source, &p.dest),
        PlaceKind::Hardlink => fsops::hard_link(&p.source, &p.dest),
        PlaceKind::Copy => {
            let tmp = p.tmp_path();
            copy_verified(&p.source, &tmp, &p.state, p.mtime_ns, p.check_hash)?;
            if std::fs::symlink_metadata(&p.dest).is_ok() {
                fsops::remove_file(&tmp)?;
                return Err(Error::new(
                    Kind::Conflict,
                    format!("'{}' appeared while cudnnm was placing files", p.dest.display()),
                )
                .hint("another program is writing into the toolkit; let it finish and run the command again"));
            }
            fsops::rename(&tmp, &p.dest)
        }
    }
}

/// Copies `src` to `tmp`, checking the size against `state` (and with
/// `check_hash` the SHA-256, hashed alongside the copy), and gives the copy
/// `mtime_ns`.
fn copy_verified(
    src: &Path,
    tmp: &Path,
    state: &Entry,
    mtime_ns: Option<i64>,
    check_hash: bool,
) -> Result<()> {
    let ok = if check_hash {
        let (n, sha) = fsops::copy_file_checked(src, tmp)?;
        Some(&sha) == state.sha256() && n == state.size()
    } else {
        fsops::copy_file(src, tmp)? == state.size()
    };
    if !ok {
        fsops::remove_file(tmp)?;
        return Err(Error::new(
            Kind::Integrity,
            format!("'{}' does not match its recorded size and SHA-256", src.display()),
        )
        .hint("`cudnnm verify` checks the store; reinstall the release with `cudnnm install --force …`"));
    }
    if let Some(t) = mtime_ns {
        fsops::set_mtime(tmp, t)?;
    }
    Ok(())
}

/// Checks one placed file: a link with the planned target that resolves (and
/// to a file of the recorded size when it points into the store); a hard link
/// that is the same file as its source; a copy of the recorded size (and,
/// when `thorough`, the recorded SHA-256).
pub fn check_placed(p: &Place, thorough: bool) -> std::result::Result<(), String> {
    let d = p.dest.display();
    let meta = std::fs::symlink_metadata(&p.dest).map_err(|_| format!("'{d}' is missing"))?;
    match p.kind {
        PlaceKind::Link => {
            if !meta.file_type().is_symlink() {
                return Err(format!("'{d}' is not a link"));
            }
            let t = std::fs::read_link(&p.dest).map_err(|e| format!("'{d}': {e}"))?;
            if t != p.source {
                return Err(format!(
                    "'{d}' points to '{}', not '{}'",
                    t.display(),
                    p.source.display()
                ));
            }
            let m = std::fs::metadata(&p.dest).map_err(|_| format!("'{d}' is a broken link"))?;
            if let Some(c) = p.state.content()
                && m.len() != c.size
            {
                return Err(format!("'{d}' leads to {} bytes, not {}", m.len(), c.size));
            }
        }
        PlaceKind::Hardlink => {
            if !platform::same_file(&p.dest, &p.source) {
                return Err(format!(
                    "'{d}' is not a hard link to '{}'",
                    p.source.display()
                ));
            }
        }
        PlaceKind::Copy => {
            if !meta.is_file() || meta.len() != p.state.size() {
                return Err(format!("'{d}' is not a file of {} bytes", p.state.size()));
            }
            if thorough {
                let (_, sha) = hash::sha256_file(&p.dest).map_err(|e| e.to_string())?;
                if Some(&sha) != p.state.sha256() {
                    return Err(format!("'{d}' does not match its SHA-256"));
                }
            }
        }
    }
    Ok(())
}

/// Verifies every placed file (step 6).
///
/// # Errors
/// [`Kind::Integrity`] listing the files that do not check out.
pub fn verify(plan: &Plan, thorough: bool) -> Result<()> {
    let bad: Vec<String> = plan
        .places
        .iter()
        .filter_map(|p| check_placed(p, thorough).err())
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    let mut e = Error::new(
        Kind::Integrity,
        format!(
            "{} placed file(s) in '{}' did not check out",
            bad.len(),
            plan.toolkit.display()
        ),
    );
    for b in bad.iter().take(5) {
        e = e.cause(b);
    }
    Err(e.hint("`cudnnm verify` checks the store; run the command again"))
}

/// Writes `backup.toml` and the toolkit's entry in `deployments.toml` as one
/// synced batch. Idempotent, so recovery can run it again; tentative while
/// the journal exists ([`undo`] puts the earlier entry back).
///
/// # Errors
/// When either file cannot be written.
pub fn commit(home: &Home, plan: &Plan) -> Result<Option<Deployment>> {
    let dep = plan.deployment(&crate::store::now_rfc3339());
    let mut all = Deployments::load(home)?;
    all.set(&plan.toolkit, dep.clone());
    let backup_toml = plan.backup.to_toml()?;
    let deployments_toml = record::to_toml(&all, "deployments")?;
    fsops::write_atomic_all(&[
        (
            &plan.backup_dir.join(super::backup::BACKUP_FILE),
            backup_toml.as_bytes(),
        ),
        (&home.deployments_file(), deployments_toml.as_bytes()),
    ])?;
    Ok(dep)
}

/// Whether the file at `path` is `state`: a link with that target, or a file
/// with that size and SHA-256.
fn is_state(path: &Path, state: &Entry) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    match state {
        Entry::Link { target, .. } => {
            meta.file_type().is_symlink()
                && std::fs::read_link(path).is_ok_and(|l| l == Path::new(target))
        }
        Entry::File(c) => {
            meta.is_file()
                && meta.len() == c.size
                && hash::sha256_file(path).is_ok_and(|(_, h)| h == c.sha256)
        }
    }
}

/// Whether the file at a planned destination is the one the plan placed
/// (without following links: a chain link is ours even once its target is gone).
fn is_ours(p: &Place) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(&p.dest) else {
        return false;
    };
    match p.kind {
        PlaceKind::Link => {
            meta.file_type().is_symlink()
                && std::fs::read_link(&p.dest).is_ok_and(|t| t == p.source)
        }
        PlaceKind::Hardlink => platform::same_file(&p.dest, &p.source),
        PlaceKind::Copy => meta.is_file() && meta.len() == p.state.size(),
    }
}

/// Whether the file at `dest` is an original an earlier, interrupted undo
/// of `plan` already moved back from the backup: a move from `dest` whose
/// backup copy is gone. Such a file can look exactly like what the plan
/// placed (the same relative link `libcudnn.so → libcudnn.so.9` in both
/// releases, a copy of the same size) and must not be removed as placed.
/// (Placing starts only after every move, so during placing each backup
/// copy exists; an unchanged copy trimmed from the backup is recopied from
/// the store instead, and is not counted here.)
fn moved_back(plan: &Plan, dest: &Path) -> bool {
    plan.moves
        .iter()
        .any(|m| m.from == dest && m.store_copy.is_none() && !exists(&m.to))
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Undoes `plan` in reverse, whatever part of it ran: removes what was
/// placed (only files that are what the plan placed, and only when
/// `placing_started`: before the records are written nothing was placed,
/// and a file at a planned path is still an original), removes folders it made,
/// moves every original back from the backup (an unchanged copy renamed
/// aside and already deleted is copied back from the store with its
/// modification time), puts the earlier `deployments.toml` entry back, then
/// deletes the backup folder. Each step checks the disk, so undoing twice
/// is harmless.
///
/// # Errors
/// When an original cannot be put back; the backup folder is then kept.
pub fn undo(home: &Home, plan: &Plan, placing_started: bool) -> Result<()> {
    let mut problems: Vec<String> = Vec::new();
    if placing_started {
        for p in plan.places.iter().rev() {
            let _ = fsops::remove_file(&p.tmp_path());
            if !is_ours(p) || moved_back(plan, &p.dest) {
                continue;
            }
            let r = match p.kind {
                PlaceKind::Link => fsops::remove_link(&p.dest),
                _ => fsops::remove_file(&p.dest),
            };
            if let Err(e) = r {
                problems.push(e.to_string());
            }
        }
    }
    for d in plan.mkdirs.iter().rev() {
        fsops::remove_dir_if_empty(d);
    }
    for m in plan.moves.iter().rev() {
        if let Some(src) = &m.store_copy
            && !exists(&m.to)
        {
            // A copy already trimmed: make it again from the store, same
            // bytes and modification time.
            if !exists(&m.from) {
                let name = m
                    .from
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let tmp = fsops::parent_of(&m.from).join(format!(".cudnnm-tmp-{name}"));
                let r = copy_verified(src, &tmp, &m.state, m.mtime_ns, false)
                    .and_then(|()| fsops::rename(&tmp, &m.from));
                if let Err(e) = r {
                    let _ = fsops::remove_file(&tmp);
                    problems.push(e.to_string());
                }
            }
            continue;
        }
        match (exists(&m.from), exists(&m.to)) {
            (false, true) => {
                if let Err(e) = fsops::move_file(&m.to, &m.from, m.state.sha256()) {
                    problems.push(e.to_string());
                }
            }
            (true, true) => {
                if is_state(&m.from, &m.state) {
                    // A cross-volume move copied part of it; the original is whole.
                    if let Err(e) = fsops::remove_file(&m.to) {
                        problems.push(e.to_string());
                    }
                } else {
                    problems.push(format!(
                        "'{}' is occupied by a file cudnnm did not place; the original is kept in '{}'",
                        m.from.display(),
                        m.to.display()
                    ));
                }
            }
            (true, false) => {}
            (false, false) => problems.push(format!(
                "'{}' is neither in the toolkit nor in the backup",
                m.from.display()
            )),
        }
    }
    for d in plan.toolkit_dirs() {
        fsops::sync_dir(&d);
    }
    if problems.is_empty() {
        // The records may already name the change: put the earlier entry back.
        let mut all = Deployments::load(home)?;
        let earlier = plan.previous.as_ref().or(plan.backup.deployment.as_ref());
        if all.for_toolkit(&plan.toolkit) != earlier {
            all.set(&plan.toolkit, earlier.cloned());
            all.save(home)?;
        }
    }
    if !problems.is_empty() {
        let mut e = Error::msg(format!(
            "could not undo the unfinished `{}` in '{}'",
            plan.action,
            plan.toolkit.display()
        ));
        for p in problems {
            e = e.cause(p);
        }
        return Err(e.hint(format!(
            "{}; fix the cause, then run any cudnnm command to retry",
            originals_hint(plan)
        )));
    }
    fsops::remove_dir_all(&plan.backup_dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::backup::BackupRecord;
    #[cfg(unix)]
    use crate::deploy::plan::Place;
    use crate::deploy::plan::{Move, PLAN_SCHEMA};
    use crate::deploy::{Mode, PlacedFile, PlacedFrom};
    use crate::toolkit::Layout;

    /// Found by scripts/stress.sh: a kill during the undo itself, after it
    /// moved an original back, left an original that looks like the placed
    /// file (the same relative link in both releases); the next undo removed
    /// it as placed and then found it "neither in the toolkit nor in the
    /// backup", for good.
    // Relative symlinks are the case (a link both releases ship); Windows
    // deployments place no links.
    #[cfg(unix)]
    #[test]
    fn an_undo_resumed_after_a_kill_keeps_the_originals_it_moved_back() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let tk = d.path().join("tk");
        fsops::create_dir_all(&tk.join("lib64")).unwrap();
        let dest = tk.join("lib64/libcudnn.so");
        let to = home.backups_dir().join("5/files/lib64/libcudnn.so");
        let copy_dest = tk.join("lib64/notes.h");
        let copy_to = home.backups_dir().join("5/files/lib64/notes.h");
        fsops::create_dir_all(fsops::parent_of(&to)).unwrap();
        let link = |target: &str| Entry::link(target);
        let plan = Plan {
            schema: PLAN_SCHEMA,
            id: 5,
            action: Action::Use("9.27.0.42_cuda12".parse().unwrap()),
            toolkit: tk.clone(),
            layout: Layout::Linux,
            backup_dir: home.backups_dir().join("5"),
            mkdirs: vec![],
            moves: vec![
                Move {
                    from: dest.clone(),
                    to: to.clone(),
                    rel: "lib64/libcudnn.so".into(),
                    state: link("libcudnn.so.9"),
                    store_copy: None,
                    mtime_ns: None,
                },
                Move {
                    from: copy_dest.clone(),
                    to: copy_to.clone(),
                    rel: "lib64/notes.h".into(),
                    state: Entry::file(4, hash::sha256_bytes(b"mine")),
                    store_copy: None,
                    mtime_ns: None,
                },
            ],
            places: vec![
                Place {
                    dest: dest.clone(),
                    rel: "lib64/libcudnn.so".into(),
                    kind: PlaceKind::Link,
                    source: PathBuf::from("libcudnn.so.9"),
                    state: link("libcudnn.so.9"),
                    from: PlacedFrom::Release("lib/libcudnn.so".into()),
                    mtime_ns: None,
                    check_hash: false,
                },
                Place {
                    dest: copy_dest.clone(),
                    rel: "lib64/notes.h".into(),
                    kind: PlaceKind::Copy,
                    source: d.path().join("store/notes.h"),
                    state: Entry::file(4, hash::sha256_bytes(b"rels")),
                    from: PlacedFrom::Release("include/notes.h".into()),
                    mtime_ns: None,
                    check_hash: true,
                },
            ],
            backup: BackupRecord {
                id: 5,
                toolkit: tk.clone(),
                layout: Layout::Linux,
                cuda: "12.4".into(),
                created_at: String::new(),
                reason: String::new(),
                held: "9.12.0.46".into(),
                deployment: None,
                reinstall: None,
                files: vec![],
            },
            next: None,
            previous: None,
            from_label: String::new(),
            to_label: String::new(),
        };
        // The first undo removed what was placed and moved both originals
        // back (the user's 4-byte file, the same size as the placed copy),
        // then was killed before retiring the journal.
        fsops::symlink(Path::new("libcudnn.so.9"), &dest).unwrap();
        fsops::write_atomic(&copy_dest, b"mine").unwrap();
        undo(&home, &plan, true).unwrap();
        assert_eq!(
            std::fs::read_link(&dest).unwrap(),
            Path::new("libcudnn.so.9")
        );
        assert_eq!(std::fs::read(&copy_dest).unwrap(), b"mine");
        assert!(!plan.backup_dir.exists());
    }

    #[test]
    fn undo_recopies_a_trimmed_copy_from_the_store_and_restores_the_record() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let tk = d.path().join("tk");
        fsops::create_dir_all(&tk.join("lib64")).unwrap();
        let store_file = d.path().join("store/lib/libcudnn.so.9");
        fsops::create_dir_all(fsops::parent_of(&store_file)).unwrap();
        fsops::write_atomic(&store_file, b"library bytes").unwrap();
        let dest = tk.join("lib64/libcudnn.so.9");
        let previous = Deployment {
            toolkit: tk.clone(),
            release: "9.1.0.70_cuda12".parse().unwrap(),
            mode: Mode::Copy,
            deployed_at: "2026-01-01T00:00:00Z".into(),
            backup: Some(1),
            source: None,
            files: vec![PlacedFile {
                path: dest.clone(),
                from: PlacedFrom::Release("lib/libcudnn.so.9".into()),
                entry: Entry::file(13, hash::sha256_bytes(b"library bytes")),
                mtime_ns: Some(1_700_000_000_000_000_000),
            }],
        };
        // The records already name the new release; the toolkit file and its
        // backup copy are both gone (a power cut after the trim).
        let mut all = Deployments::default();
        all.set(
            &tk,
            Some(Deployment {
                release: "9.2.0.1_cuda12".parse().unwrap(),
                ..previous.clone()
            }),
        );
        all.save(&home).unwrap();
        let plan = Plan {
            schema: PLAN_SCHEMA,
            id: 2,
            action: Action::Use("9.2.0.1_cuda12".parse().unwrap()),
            toolkit: tk.clone(),
            layout: Layout::Linux,
            backup_dir: home.backups_dir().join("2"),
            mkdirs: vec![],
            moves: vec![Move {
                from: dest.clone(),
                to: home.backups_dir().join("2/files/lib64/libcudnn.so.9"),
                rel: "lib64/libcudnn.so.9".into(),
                state: Entry::file(13, hash::sha256_bytes(b"library bytes")),
                store_copy: Some(store_file.clone()),
                mtime_ns: Some(1_700_000_000_000_000_000),
            }],
            places: vec![],
            backup: BackupRecord {
                id: 2,
                toolkit: tk.clone(),
                layout: Layout::Linux,
                cuda: "12.4".into(),
                created_at: String::new(),
                reason: String::new(),
                held: "9.1.0.70".into(),
                deployment: Some(previous.clone()),
                reinstall: None,
                files: vec![],
            },
            next: None,
            previous: None,
            from_label: String::new(),
            to_label: String::new(),
        };
        undo(&home, &plan, true).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"library bytes");
        let m = std::fs::metadata(&dest).unwrap();
        assert_eq!(crate::deploy::mtime_ns(&m), Some(1_700_000_000_000_000_000));
        assert_eq!(
            Deployments::load(&home).unwrap().for_toolkit(&tk),
            Some(&previous)
        );
        assert!(!plan.backup_dir.exists());
        // Undoing again is harmless.
        undo(&home, &plan, true).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"library bytes");

        // An undo that cannot finish (here the toolkit folder is gone, as a
        // full disk would stop the copy): the hint names where each original
        // really is — one in the backup, one coming back from the store.
        let mut plan2 = plan.clone();
        let header_to = home.backups_dir().join("2/files/include/cudnn.h");
        fsops::create_dir_all(fsops::parent_of(&header_to)).unwrap();
        fsops::write_atomic(&header_to, b"user header").unwrap();
        plan2.moves.push(Move {
            from: tk.join("include/cudnn.h"),
            to: header_to.clone(),
            rel: "include/cudnn.h".into(),
            state: Entry::file(11, hash::sha256_bytes(b"user header")),
            store_copy: None,
            mtime_ns: None,
        });
        fsops::remove_dir_all(&tk).unwrap();
        fsops::create_dir_all(&tk).unwrap();
        // `lib64` is a file now: neither original can be put back.
        fsops::write_atomic(&tk.join("lib64"), b"x").unwrap();
        fsops::write_atomic(&tk.join("include"), b"x").unwrap();
        let e = undo(&home, &plan2, false).unwrap_err();
        let hint = e.hint_text().unwrap();
        assert_eq!(
            hint,
            format!(
                "1 original file is safe in '{}'; 1 unchanged copy of the release's files comes back from the store: lib64/libcudnn.so.9 from '{}'; fix the cause, then run any cudnnm command to retry",
                home.backups_dir().join("2").join("files").display(),
                store_file.display()
            )
        );
        assert_eq!(
            originals(&plan2),
            vec![
                (
                    "lib64/libcudnn.so.9".to_string(),
                    OriginalAt::Store(store_file.clone())
                ),
                (
                    "include/cudnn.h".to_string(),
                    OriginalAt::Backup(header_to.clone())
                ),
            ]
        );
        assert_eq!(std::fs::read(&header_to).unwrap(), b"user header");
    }
}
