//! The in-flight marker: `.cudnnm-inflight.toml` in a toolkit root while a
//! change to it runs, and after a crash until the changing home recovers it.
//!
//! The journal lives in the home that made the change, so another home
//! cannot see it. Without this marker a second home deploying into a
//! toolkit that a crash left half-changed would back up the half-placed
//! files as "originals", and the first home's recovery would later put its
//! originals back beside the second home's files: a mixed toolkit. With it,
//! the second home refuses and names the home that must finish first.
//!
//! The marker names the home, the change's backup id and its action. It is
//! live while that home's `journal/<id>.json` exists; a marker whose journal
//! is gone (a crash between retiring the journal and removing the marker)
//! is stale and simply replaced. Best effort: a toolkit root that cannot be
//! written gets no marker, and the change runs as it did before.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::plan::Plan;
use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::home::Home;
use crate::lock::ToolkitLock;

/// The marker's file name in the toolkit root.
pub const FILE: &str = ".cudnnm-inflight.toml";

/// What the marker records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inflight {
    /// The home folder whose journal holds the change (canonical when it could be resolved).
    pub home: PathBuf,
    /// The change's backup id (= its journal id).
    pub backup: u64,
    /// What had been asked (`use 9.27.0.42_cuda12`).
    pub action: String,
}

impl Inflight {
    /// Whether the change is still unfinished: its journal exists in its
    /// home. A home that cannot be read (another user's) counts as live.
    pub fn is_live(&self) -> bool {
        let plan = Home::new(&self.home)
            .journal_dir()
            .join(format!("{}.json", self.backup));
        match std::fs::symlink_metadata(plan) {
            Ok(_) => true,
            // Only a home this user may not look into keeps it live; a path
            // that cannot exist (a file where a folder should be) does not.
            Err(e) => e.kind() == std::io::ErrorKind::PermissionDenied,
        }
    }

    /// Whether this user cannot look into or write the marker's home
    /// (another user's): the finishing command must then be run as that user.
    fn home_is_private(&self) -> bool {
        std::fs::read_dir(&self.home)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
            || crate::platform::dir_writable(&self.home) == Some(false)
    }

    /// "`use 9.27.0.42_cuda12` (backup 3 of '/home/a/.cudnnm')"; `None` for
    /// a marker that could not be read (its home is unknown).
    pub fn describe(&self) -> Option<String> {
        (!self.home.as_os_str().is_empty()).then(|| {
            format!(
                "`{}` (backup {} of '{}')",
                self.action,
                self.backup,
                self.home.display()
            )
        })
    }

    /// Whether the marker names `home`.
    pub fn is_from(&self, home: &Home) -> bool {
        self.home == fsops::canonical_or_self(home.root())
    }
}

fn path(root: &Path) -> PathBuf {
    root.join(FILE)
}

/// What the toolkit root holds in the marker's place.
#[derive(Debug)]
enum Found {
    /// No marker (or a torn one, which does not parse: nobody's claim).
    None,
    /// A marker.
    Marker(Inflight),
    /// A marker this user may not read: another user's, so it counts as live.
    Unreadable,
}

fn find(root: &Path) -> Found {
    match std::fs::read(path(root)) {
        Ok(bytes) => std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| toml::from_str(t).ok())
            .map_or(Found::None, Found::Marker),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Found::Unreadable,
        Err(_) => Found::None,
    }
}

/// The marker in the toolkit at `root`, if any and readable.
pub fn read(root: &Path) -> Option<Inflight> {
    match find(root) {
        Found::Marker(m) => Some(m),
        _ => None,
    }
}

/// The unfinished change of another home to the toolkit at `root`, if any.
/// A marker this user may not read is reported with an empty home and action.
pub fn foreign(home: &Home, root: &Path) -> Option<Inflight> {
    match find(root) {
        Found::Marker(m) => Some(m).filter(|m| !m.is_from(home) && m.is_live()),
        Found::Unreadable => Some(Inflight {
            home: PathBuf::new(),
            backup: 0,
            action: String::new(),
        }),
        Found::None => None,
    }
}

/// The command that finishes `m`'s change: any command run with its home
/// recovers first (`current` changes nothing else).
pub fn finish_command(m: &Inflight, root: &Path, windows: bool) -> String {
    CommandLine::current()
        .home(&m.home)
        .cuda_root(root)
        .for_host(windows)
}

/// How to finish `m`'s change, for a hint: the command, and whose it is to
/// run when the home is another user's (or the marker could not be read).
pub fn finish_advice(m: &Inflight, root: &Path, windows: bool) -> String {
    if m.home.as_os_str().is_empty() {
        return format!(
            "'{}' belongs to another user and cannot be read here: ask them (or an administrator) to run any cudnnm command with their home; if no change is running or pending, delete that file",
            path(root).display()
        );
    }
    let cmd = finish_command(m, root, windows);
    if m.home_is_private() {
        format!(
            "that home belongs to another user: ask them to run `{cmd}` (or run it as that user, e.g. with sudo)"
        )
    } else {
        format!("finish that change first with `{cmd}`")
    }
}

/// This change's marker in a toolkit root, from before `plan` changes
/// anything until its journal is gone: dropping the claim removes the
/// marker ([`release`]), [`Claim::keep`] leaves it with a journal that the
/// next command finishes.
#[derive(Debug)]
#[must_use = "dropping the claim removes the marker"]
pub(super) struct Claim<'a> {
    home: &'a Home,
    toolkit: PathBuf,
    id: u64,
    kept: bool,
}

impl<'a> Claim<'a> {
    /// Writes the marker of `plan` ([`claim`]).
    pub(super) fn new(home: &'a Home, plan: &Plan) -> Claim<'a> {
        claim(home, plan);
        Claim {
            home,
            toolkit: plan.toolkit.clone(),
            id: plan.id,
            kept: false,
        }
    }

    /// Leaves the marker in place: the change's journal stays too.
    pub(super) fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if !self.kept {
            release(self.home, &self.toolkit, self.id);
        }
    }
}

/// Before `plan` changes anything, under the lock [`lock_for_change`] took
/// (which refused another home's unfinished change): writes this change's
/// marker over any stale one. Failing to write it is not an error (see the
/// module docs).
pub(super) fn claim(home: &Home, plan: &Plan) {
    let mine = Inflight {
        home: fsops::canonical_or_self(home.root()),
        backup: plan.id,
        action: plan.action.to_string(),
    };
    if let Ok(text) = toml::to_string(&mine) {
        let body = format!(
            "# cudnnm: a change to this CUDA toolkit is running, or was interrupted.\n\
             # The next cudnnm command run with this home finishes or undoes it.\n{}\n",
            text.trim_end()
        );
        let p = path(&plan.toolkit);
        // Not synced (a flush would cost every switch): when the toolkit
        // and the home share an ext4 file system, the journal's synced plan
        // that follows commits it too; elsewhere a power cut may lose it,
        // which loses only the guard. A marker torn by a crash does not
        // parse, counts as absent, and is replaced.
        // Readable by every user whatever the umask: another user's cudnnm
        // must see it.
        // A marker left here is stale or torn ([`lock_for_change`] refused
        // a live one and anything that is not a plain file): replace it,
        // creating the new one exclusively, so a link put in its place is
        // never written through.
        let _ = fsops::remove_file(&p);
        if fsops::write_new(&p, body.as_bytes()).is_ok() {
            let _ = crate::platform::make_world_readable(&p);
        }
    }
}

/// Takes the toolkit lock of `root` for a change (`use`, `rollback`, a
/// `doctor --fix` redeploy), then refuses when another home's change to it
/// is running or unfinished: the one gate every change passes, before it
/// plans or checks access, so the refusal, not a permission error, is what a
/// user meets first. `on_wait` as for [`ToolkitLock::acquire`].
///
/// # Errors
/// As [`ToolkitLock::acquire`]; [`Kind::Conflict`] naming the other home
/// and how to finish its change.
pub(super) fn lock_for_change(
    home: &Home,
    root: &Path,
    windows: bool,
    on_wait: impl FnOnce(),
) -> Result<ToolkitLock> {
    let lock = ToolkitLock::acquire(root, on_wait)?;
    let p = path(root);
    if std::fs::symlink_metadata(&p).is_ok_and(|m| !m.is_file()) {
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "'{}' is not cudnnm's marker file (a folder or a link is in its place)",
                p.display()
            ),
        )
        .cause("cudnnm writes that file while it changes the toolkit, so that other homes wait; nothing changed")
        .hint(format!("move '{}' out of the toolkit, then run this again", p.display())));
    }
    if let Some(m) = foreign(home, root) {
        let what = match m.describe() {
            Some(d) => format!("another cudnnm home: {d}"),
            None => "another user's cudnnm home".to_string(),
        };
        return Err(Error::new(
            Kind::Conflict,
            format!("'{}' has an unfinished change from {what}", root.display()),
        )
        .cause("changing it now would mix that change's files with this one's; nothing changed")
        .hint(format!(
            "{}, then run this again",
            finish_advice(&m, root, windows)
        )));
    }
    Ok(lock)
}

/// After the journal of change `id` to the toolkit at `root` is retired,
/// under the toolkit lock: removes the marker when it is this change's, or
/// torn (unparseable: nobody else can be writing one while the lock is
/// held). Another change's marker is left alone.
pub(super) fn release(home: &Home, root: &Path, id: u64) {
    let p = path(root);
    let Ok(bytes) = std::fs::read(&p) else {
        return;
    };
    let parsed = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|t| toml::from_str::<Inflight>(t).ok());
    let ours = match parsed {
        Some(m) => m.is_from(home) && m.backup == id,
        None => true,
    };
    if ours {
        let _ = fsops::remove_file(&p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_is_live_only_while_its_journal_can_exist() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        fsops::create_dir_all(&home.join("journal")).unwrap();
        let m = |home: PathBuf| Inflight {
            home,
            backup: 3,
            action: "use 9.27.0.42_cuda12".into(),
        };
        assert!(!m(home.clone()).is_live(), "no journal: stale");
        fsops::write_atomic(&home.join("journal/3.json"), b"{}").unwrap();
        assert!(m(home.clone()).is_live());
        // A home path that cannot exist (a file where a folder should be,
        // ENOTDIR) is stale, not "cannot tell": it must not block forever.
        let file = d.path().join("a-file");
        fsops::write_atomic(&file, b"").unwrap();
        assert!(!m(file.join("x")).is_live());
        assert!(!m(d.path().join("deleted-home")).is_live());
    }
}
