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
use crate::doctor::finding::quote_arg;
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::home::Home;

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
            Err(e) => e.kind() != std::io::ErrorKind::NotFound,
        }
    }

    /// Whether the marker names `home`.
    pub fn is_from(&self, home: &Home) -> bool {
        self.home == canonical(home.root())
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn path(root: &Path) -> PathBuf {
    root.join(FILE)
}

/// The marker in the toolkit at `root`, if any and readable.
pub fn read(root: &Path) -> Option<Inflight> {
    let text = std::fs::read_to_string(path(root)).ok()?;
    toml::from_str(&text).ok()
}

/// The unfinished change of another home to the toolkit at `root`, if any.
pub fn foreign(home: &Home, root: &Path) -> Option<Inflight> {
    read(root).filter(|m| !m.is_from(home) && m.is_live())
}

/// The command that finishes `m`'s change: any command run with its home
/// recovers first (`current` changes nothing else).
pub fn finish_command(m: &Inflight, root: &Path, windows: bool) -> String {
    format!(
        "cudnnm --home {} current --cuda-root {}",
        quote_arg(&m.home.display().to_string(), windows),
        quote_arg(&root.display().to_string(), windows)
    )
}

/// Before `plan` changes anything: refuses when another home's change to
/// the toolkit is unfinished; otherwise writes this change's marker
/// over any stale one.
///
/// # Errors
/// [`Kind::Conflict`] naming the other home and the command that finishes
/// its change. Failing to write the marker is not an error (see the module docs).
pub fn claim(home: &Home, plan: &Plan, windows: bool) -> Result<()> {
    if let Some(m) = foreign(home, &plan.toolkit) {
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "'{}' has an unfinished change from another cudnnm home: `{}` (backup {} of '{}')",
                plan.toolkit.display(),
                m.action,
                m.backup,
                m.home.display()
            ),
        )
        .cause("changing it now would mix that change's files with this one's; nothing changed")
        .hint(format!(
            "finish that change first with `{}`, then run this again",
            finish_command(&m, &plan.toolkit, windows)
        )));
    }
    let mine = Inflight {
        home: canonical(home.root()),
        backup: plan.id,
        action: plan.action.clone(),
    };
    if let Ok(text) = toml::to_string(&mine) {
        let body = format!(
            "# cudnnm: a change to this CUDA toolkit is running, or was interrupted.\n\
             # The next cudnnm command run with this home finishes or undoes it.\n{text}"
        );
        // Not synced (a flush would cost every switch): when the toolkit
        // and the home share an ext4 file system, the journal's synced plan
        // that follows commits it too; elsewhere a power cut may lose it,
        // which loses only the guard. A marker torn by a crash does not
        // parse, counts as absent, and is replaced.
        let _ = std::fs::write(path(&plan.toolkit), body.as_bytes());
    }
    Ok(())
}

/// After `plan`'s journal is retired, under the toolkit lock: removes the
/// marker when it is this change's, or torn (unparseable: nobody else can be
/// writing one while the lock is held). Another change's marker is left alone.
pub fn release(home: &Home, plan: &Plan) {
    let p = path(&plan.toolkit);
    let Ok(bytes) = std::fs::read(&p) else {
        return;
    };
    let parsed = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|t| toml::from_str::<Inflight>(t).ok());
    let ours = match parsed {
        Some(m) => m.is_from(home) && m.backup == plan.id,
        None => true,
    };
    if ours {
        let _ = fsops::remove_file(&p);
    }
}
