//! The one guard every change goes through (`docs/architecture.md#deploying`):
//! every change to a toolkit, the store, the backups or the deployments
//! record — `use`, `rollback`, `uninstall`, `backups prune` and `remove`,
//! `toolkits forget`, `install --force`'s replace, and `doctor --fix`'s
//! redeploy and soname links (and `--undo-fix`).
//!
//! [`Guard::begin`] holds the home lock (it takes it from the caller and
//! keeps it until the guard drops, on every path) and first finishes or
//! undoes what a crash left ([`recover::recover_all`], each under the lock
//! of the toolkit it changed: taken, or the guard is not given). Each
//! change then takes the lock of the toolkit it touches (another home's
//! unfinished change there is refused), journals its steps, and is undone
//! on failure or Ctrl-C. The plan, apply, journal and recovery pieces are
//! private to `deploy`: the guard's methods are the only way to run them.
//!
//! Library code reports through [`Reporter`] (uv's shape): only the CLI
//! prints, so `-q` and `--json` hold for every message.

use std::path::Path;

use super::backup::removal::{self, Removed};
use super::journal::{self, FaultHook};
use super::link_fix::{self, LinkFix, SonameLink};
use super::recover::{self, Recovered};
use super::status::Drift;
use super::uninstall::{self, ReleaseRemoval, ReleaseRemoved};
use super::{Deployment, Deployments, inflight};
use crate::env::Env;
use crate::error::Result;
use crate::home::Home;
use crate::lock::{HomeLock, ToolkitLock};
use crate::progress::{NoProgress, Progress};
use crate::store::{Release, Store};
use crate::toolkit::Toolkit;

mod toolkit;

pub use toolkit::{Applied, Done, Redeployed, existing_toolkit_dir};

/// What a change tells the user while it runs. Every method has a silent
/// default, so a reporter implements only what it shows.
pub trait Reporter {
    /// Where long steps (copying files into the toolkit, or into a backup
    /// on another volume) report their bytes; the CLI draws a bar on a
    /// terminal. Silent by default.
    fn progress(&self) -> &dyn Progress {
        &NoProgress
    }

    /// Another cudnnm process (of any home) holds the lock of the toolkit at
    /// `root`; this one waits for it. Called at most once per lock.
    fn on_toolkit_lock_wait(&self, root: &Path) {
        let _ = root;
    }

    /// Recovery finished or undid a change a crash interrupted.
    fn on_recovered(&self, recovered: &Recovered) {
        let _ = recovered;
    }

    /// Recovery moved back into `dir` the release an interrupted
    /// `install --force` had moved aside (its replacement never arrived).
    fn on_release_restored(&self, dir: &Path) {
        let _ = dir;
    }

    /// `release` is recorded in the toolkit at `root` by the mode asked
    /// for, but its files changed (`drift`): it is deployed again.
    fn on_drifted(&self, release: &Release, root: &Path, drift: &Drift) {
        let _ = (release, root, drift);
    }
}

/// A reporter that says nothing (tests; callers with no one to tell).
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Reporter for Silent {}

/// Every change from one home, under its lock. See the module docs.
pub struct Guard<'a> {
    _lock: HomeLock,
    home: &'a Home,
    env: &'a Env,
    reporter: &'a dyn Reporter,
    store: Store,
    recovered: Vec<Recovered>,
}

/// Whether a crash left something for the guard to finish: a journal, or a
/// release an interrupted `install --force` moved aside. Cheap (no parsing,
/// no lock), for read-only commands that start a guard only then.
pub fn recovery_pending(home: &Home) -> bool {
    journal::any_pending(home) || !Store::new(home).replaced().is_empty()
}

impl<'a> Guard<'a> {
    /// Starts changing things from `home`, holding its `lock` until the
    /// guard drops: finishes or undoes every change a crash left (each
    /// reported), and removes what interrupted prunes left.
    ///
    /// # Errors
    /// As [`recover::recover_all`]: a change that can be neither completed
    /// nor undone, or the lock of a toolkit it changed that cannot be
    /// taken. No guard is given then, and nothing else changes.
    pub fn begin(
        lock: HomeLock,
        home: &'a Home,
        env: &'a Env,
        reporter: &'a dyn Reporter,
    ) -> Result<Guard<'a>> {
        let recovered = recover::recover_all(home, reporter)?;
        Ok(Guard {
            _lock: lock,
            home,
            env,
            reporter,
            store: Store::new(home),
            recovered,
        })
    }

    /// The home.
    pub fn home(&self) -> &'a Home {
        self.home
    }

    /// The environment the changes run in.
    pub fn env(&self) -> &'a Env {
        self.env
    }

    /// The interrupted changes [`Guard::begin`] finished or undid.
    pub fn recovered(&self) -> &[Recovered] {
        &self.recovered
    }

    /// The store for an import under this guard (`install`, whose
    /// `--force` replaces a release by renames the guard's recovery
    /// finishes, [`Store::recover_replaced`]), with the test-only hooks
    /// of debug builds: `CUDNNM_FAULT_AFTER_STEP` (1: the old release
    /// moved aside; 2: the new one in place; 3: the old one deleted) and
    /// the pause before commit (`CUDNNM_TEST_PAUSE_AFTER_STEP=0`).
    pub fn store_for_import(&self) -> Store {
        let hook = self.fault();
        Store::new(self.home)
            .with_fault_after_step(hook.after_step)
            .with_pause_file(hook.pause_file.filter(|_| hook.pause_after_step == Some(0)))
    }

    /// Prunes the backups of the toolkit at `root` as every change does
    /// after it: keeps the newest `keep` (at least one), the first, and
    /// every backup holding files of the user's own; the others are removed
    /// as one journaled change. A backup that cannot be removed now (a file
    /// in it held by a program, on Windows) is kept for a later prune.
    ///
    /// # Errors
    /// When the backups cannot be listed or the journal written.
    pub fn prune_backups(&self, root: &Path, keep: u32) -> Result<Vec<Removed>> {
        let r = removal::prune(self.home, root, keep)?;
        removal::execute(self.home, &r, self.fault())
    }

    /// Removes the backups `ids` the user named, all or none: each must
    /// exist, and without `force` none may be a toolkit's first backup or
    /// keep files of the user's own ([`super::backup::Refusal`]).
    ///
    /// # Errors
    /// [`crate::error::Kind::NotFound`] naming every id that is no backup;
    /// [`crate::error::Kind::Conflict`] listing every refusal; a backup
    /// that cannot be removed (the others are put back). Nothing is removed
    /// on any error.
    pub fn remove_backups(&self, ids: &[u64], force: bool) -> Result<Vec<Removed>> {
        let r = removal::named(self.home, ids, force)?;
        removal::execute(self.home, &r, self.fault())
    }

    /// Removes a release from the store as the uninstall operation decided
    /// ([`ReleaseRemoval`]): the backups that need its files hold them
    /// first, then the release goes, then the links and default that named
    /// it — one journaled change ([`uninstall`]). The bytes of the backups'
    /// files are reported to the reporter's progress.
    ///
    /// # Errors
    /// As [`uninstall::execute`]: nothing is removed unless the release is gone.
    pub fn uninstall(&self, removal: &ReleaseRemoval<'_>) -> Result<ReleaseRemoved> {
        uninstall::execute(
            self.home,
            &self.store,
            removal,
            self.reporter.progress(),
            self.fault(),
        )
    }

    /// Makes the soname link `link` (moving the copy it replaces into the
    /// fix's folder first) as one journaled change, under the lock of the
    /// toolkit holding the folder: `doctor --fix`.
    ///
    /// # Errors
    /// When the copy cannot be moved or the link made (the folder is as it
    /// was); another home's unfinished change to that toolkit.
    pub fn make_soname_link(&self, link: SonameLink) -> Result<()> {
        self.link_fix(link, false)
    }

    /// Takes back a soname link [`Guard::make_soname_link`] made (the
    /// copy it replaced comes back): `doctor --undo-fix`.
    ///
    /// # Errors
    /// As [`Guard::make_soname_link`].
    pub fn take_back_soname_link(&self, link: SonameLink) -> Result<()> {
        self.link_fix(link, true)
    }

    fn link_fix(&self, link: SonameLink, take_back: bool) -> Result<()> {
        let toolkit = self.toolkit_holding(&link.path);
        let _toolkit_lock = toolkit
            .as_deref()
            .map(|root| self.lock_toolkit(root))
            .transpose()?;
        let fix = LinkFix {
            link,
            take_back,
            toolkit,
        };
        link_fix::execute(self.home, &fix, self.fault())
    }

    /// The root of the CUDA toolkit a library folder's file `path` is in
    /// (`lib64/`, `lib/x64/`, `targets/<arch>/lib/`), if any.
    fn toolkit_holding(&self, path: &Path) -> Option<std::path::PathBuf> {
        path.ancestors()
            .skip(2)
            .take(3)
            .find_map(|a| Toolkit::at(a, "doctor --fix", self.env.is_windows()).ok())
            .map(|t| t.root)
    }

    /// Drops the deployment record of the toolkit at `root` (`toolkits
    /// forget`, for a toolkit whose folder is gone); its backups stay.
    /// Returns the record dropped.
    ///
    /// # Errors
    /// When `deployments.toml` cannot be read or written.
    pub fn forget_toolkit(&self, root: &Path) -> Result<Option<Deployment>> {
        let mut all = Deployments::load(self.home)?;
        let dep = all.for_toolkit(root).cloned();
        if dep.is_some() {
            all.set(root, None);
            all.save(self.home)?;
        }
        Ok(dep)
    }

    /// The toolkit lock of `root`, taken after the home lock: another
    /// home's change to this toolkit finishes first.
    fn lock_toolkit(&self, root: &Path) -> Result<ToolkitLock> {
        inflight::lock_for_change(self.home, root, self.env.is_windows(), || {
            self.reporter.on_toolkit_lock_wait(root)
        })
    }

    /// The test-only hooks (debug builds).
    fn fault(&self) -> FaultHook {
        FaultHook::from_env(self.env)
    }
}
