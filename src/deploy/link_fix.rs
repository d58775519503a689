//! The soname links `doctor --fix` makes in a folder of cuDNN libraries,
//! and `doctor --undo-fix` takes back, journaled as an op ([`LinkFix`]) so a
//! crash never leaves a library name missing: a copy that should be a link
//! is moved into the fix's folder (`moved`), the link is made (`linked`,
//! the point of no return), then the fix's record (`fix.toml`, whose text
//! the doctor gives: this module does not read it) is written. Taking one
//! back runs the other way: the link goes (`unlinked`, the point of no
//! return), the copy comes back, the record is rewritten.
//!
//! Recovery completes a fix whose link is in place (writing the record)
//! and undoes one whose link is not (the copy moved back); it completes a
//! take-back whose link is gone and leaves one whose link is still there.
//! It runs under the lock of the toolkit holding the folder, as the fix does.
//!
//! Only the guard runs it ([`crate::deploy::Guard::make_soname_link`],
//! [`crate::deploy::Guard::take_back_soname_link`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::journal::{FaultHook, Journal, Op, Pending};
use super::recover::{Recovered, Resolution};
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::hash::Sha256Hex;
use crate::home::Home;

/// Log line (making): the copy is in the fix's folder.
const MOVED: &str = "moved";
/// Log line (making): the link is made; from here it completes.
const LINKED: &str = "linked";
/// Log line (taking back): the link is gone; from here it completes.
const UNLINKED: &str = "unlinked";

/// A regular file a link replaces, kept in the fix's folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// Where it is kept (`doctor-fix/<id>/<name>`).
    pub path: PathBuf,
    /// Its SHA-256, checked when it moves.
    pub sha256: Sha256Hex,
}

/// A file written when the change completes: the fix's record, whose text
/// the caller gives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordFile {
    /// The file (`doctor-fix/<id>/fix.toml`).
    pub path: PathBuf,
    /// Its whole text after the change.
    pub text: String,
}

/// One soname link to make or take back (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SonameLink {
    /// The link (`…/lib64/libcudnn.so.8`).
    pub path: PathBuf,
    /// Its target as written: a name in the same folder (`libcudnn.so.8.9.7`).
    pub target: String,
    /// The regular file the link replaces (kept in the fix's folder), if any.
    pub kept: Option<Kept>,
    /// The record to write once the change is made.
    pub record: Option<RecordFile>,
}

/// The journaled change (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkFix {
    /// The link and what goes with it.
    pub link: SonameLink,
    /// True when taking it back (`--undo-fix`).
    pub take_back: bool,
    /// The toolkit holding the folder, whose lock the change holds.
    pub toolkit: Option<PathBuf>,
}

impl LinkFix {
    fn action(&self) -> String {
        format!(
            "doctor --{}: {} -> {}",
            if self.take_back { "undo-fix" } else { "fix" },
            self.link.path.display(),
            self.link.target
        )
    }

    /// Whether the link is in place (a link with exactly the planned target).
    fn linked(&self) -> bool {
        std::fs::symlink_metadata(&self.link.path).is_ok_and(|m| m.file_type().is_symlink())
            && std::fs::read_link(&self.link.path).is_ok_and(|t| t == Path::new(&self.link.target))
    }
}

/// Makes (or with `take_back`, takes back) the link `f` describes as one
/// journaled change. Call under the guard and the toolkit's lock.
///
/// # Errors
/// When the copy cannot be moved or the link made (undone: the folder is as
/// it was); [`Kind::Interrupted`] on Ctrl-C before the link is made (undone).
pub(super) fn execute(home: &Home, f: &LinkFix, fault: FaultHook) -> Result<()> {
    crate::interrupt::doing(crate::interrupt::Activity::Change);
    let mut j = Journal::begin_op(home, &Op::LinkFix(f.clone()), fault)?;
    let r = if f.take_back {
        take_back(f, &mut j)
    } else {
        make(f, &mut j)
    };
    if let Err(e) = r {
        if !f.take_back {
            undo_make(f)?;
        }
        j.retire()?;
        return Err(e);
    }
    write_record(f)?;
    j.retire()
}

fn make(f: &LinkFix, j: &mut Journal) -> Result<()> {
    let l = &f.link;
    if let Some(k) = &l.kept {
        fsops::create_dir_all(fsops::parent_of(&k.path))?;
        fsops::move_file(&l.path, &k.path, Some(&k.sha256))?;
        j.step(MOVED).map_err(stopped)?;
    }
    // Fails rather than replaces if something appeared at the link meanwhile.
    fsops::symlink(Path::new(&l.target), &l.path)?;
    j.step_committed(LINKED)
}

fn take_back(f: &LinkFix, j: &mut Journal) -> Result<()> {
    let l = &f.link;
    fsops::remove_link(&l.path)?;
    j.step_committed(UNLINKED)?;
    restore_kept(l)
}

/// Puts the kept copy back where the link was, when it is not there yet.
fn restore_kept(l: &SonameLink) -> Result<()> {
    if let Some(k) = &l.kept
        && std::fs::symlink_metadata(&l.path).is_err()
        && std::fs::symlink_metadata(&k.path).is_ok()
    {
        fsops::move_file(&k.path, &l.path, Some(&k.sha256))?;
    }
    Ok(())
}

/// Undoes making the link: removes it if it was made, puts the copy back.
fn undo_make(f: &LinkFix) -> Result<()> {
    if f.linked() {
        fsops::remove_link(&f.link.path)?;
    }
    restore_kept(&f.link)
}

fn write_record(f: &LinkFix) -> Result<()> {
    match &f.link.record {
        Some(r) => fsops::write_atomic(&r.path, r.text.as_bytes()),
        None => Ok(()),
    }
}

/// The error of a fix stopped by Ctrl-C before its link was made.
fn stopped(e: Error) -> Error {
    if e.kind() != Kind::Interrupted {
        return e;
    }
    Error::new(Kind::Interrupted, "interrupted; the folder is as it was")
        .hint("run the command again to apply the fix")
}

/// Completes or undoes a link fix a crash interrupted (see the module docs).
///
/// # Errors
/// When the copy cannot be moved back or the record written.
pub(super) fn recover(f: &LinkFix, p: &Pending) -> Result<Recovered> {
    let path = f.link.path.display();
    let completed = if f.take_back {
        p.has(UNLINKED) || !f.linked()
    } else {
        p.has(LINKED) || f.linked()
    };
    let holds = match (f.take_back, completed) {
        (false, true) | (true, false) => format!("'{path}' is a link to {}", f.link.target),
        (false, false) | (true, true) => format!("'{path}' is as it was before the fix"),
    };
    if completed {
        if f.take_back {
            restore_kept(&f.link)?;
        }
        write_record(f)?;
    } else if !f.take_back {
        undo_make(f)?;
    }
    let resolution = if completed {
        Resolution::Completed
    } else {
        Resolution::Undone
    };
    let mut r = Recovered::op(f.action(), resolution, holds);
    r.toolkit = f.toolkit.clone();
    Ok(r)
}
