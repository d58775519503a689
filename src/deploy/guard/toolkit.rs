//! The guard's changes to toolkits: `use`, `rollback` and the redeploy of
//! `doctor --fix`. Each takes the toolkit's lock
//! ([`inflight::lock_for_change`]: another home's unfinished change there is
//! refused), reads the deployment recorded there, and runs plan → preflight
//! → journaled transaction → prune. The in-flight marker lives exactly as
//! long as the change's journal ([`apply::execute`]).

use std::path::{Path, PathBuf};

use super::Guard;
use crate::command::CommandLine;
use crate::deploy::apply::{self, Outcome};
use crate::deploy::backup::{self, Backup};
use crate::deploy::journal::FaultHook;
use crate::deploy::plan::{self, Plan};
use crate::deploy::status::{self, Drift};
use crate::deploy::{Deployment, Deployments, Mode, ModeRequest, access};
use crate::error::{Error, Kind, Result};
use crate::store::Release;
use crate::toolkit::Toolkit;

/// What a finished transaction did.
#[derive(Debug)]
pub struct Applied {
    /// The transaction that ran (its plan holds the backup id and the labels).
    pub outcome: Outcome,
    /// Old backups of the toolkit removed afterwards.
    pub pruned: Vec<u64>,
}

/// What [`Guard::use_release`] found and did.
#[derive(Debug)]
pub enum Done {
    /// The toolkit holds the release as recorded, by that mode, unchanged:
    /// nothing changed.
    AlreadyActive,
    /// The release was deployed.
    Changed(Box<Applied>),
}

/// What [`Guard::redeploy`] found and did.
#[derive(Debug)]
pub enum Redeployed {
    /// The toolkit matches its record again (someone fixed it meanwhile): nothing changed.
    AlreadyClean,
    /// The release was deployed again.
    Done {
        /// The release.
        release: crate::version::ReleaseId,
        /// The mode it was placed by (the recorded one).
        mode: Mode,
        /// What the change did; its backup holds the drifted files.
        applied: Box<Applied>,
    },
}

impl Guard<'_> {
    /// Deploys `release` into `toolkit` by `mode`: every cuDNN file there
    /// goes into a new backup first. When the toolkit already holds the
    /// release as recorded, by that mode, nothing changes; when it is
    /// recorded but its files changed, it is deployed again (reported).
    /// `elevate` is the hint for a refusal for lack of rights
    /// ([`access::elevate_hint`]).
    ///
    /// # Errors
    /// As [`plan::plan_use`], [`access::preflight`] (nothing changed) and
    /// [`apply::execute`] (undone before returning); another home's
    /// unfinished change to the toolkit ([`inflight::lock_for_change`]).
    pub fn use_release(
        &self,
        toolkit: &Toolkit,
        release: &Release,
        mode: Mode,
        elevate: &str,
    ) -> Result<Done> {
        let _toolkit_lock = self.lock_toolkit(&toolkit.root)?;
        let deployments = Deployments::load(self.home)?;
        self.use_locked(toolkit, release, mode, elevate, &deployments)
    }

    /// Puts the files of `source` back into `toolkit`; the files there go
    /// into a new backup first, so the rollback can itself be rolled back.
    ///
    /// # Errors
    /// As [`plan::plan_rollback`], [`access::preflight`] and [`apply::execute`].
    pub fn rollback(&self, toolkit: &Toolkit, source: &Backup, elevate: &str) -> Result<Applied> {
        let _toolkit_lock = self.lock_toolkit(&toolkit.root)?;
        let deployments = Deployments::load(self.home)?;
        let current = deployments.for_toolkit(&toolkit.root);
        self.transact(toolkit, elevate, |id| {
            plan::plan_rollback(
                self.home,
                &self.store,
                toolkit,
                &source.record,
                &source.dir,
                current,
                id,
            )
        })
    }

    /// Deploys release `release` again into the toolkit at `root`, where
    /// `deployments.toml` records it, by the recorded mode, when the
    /// toolkit no longer matches the record — `doctor --fix`'s repair of a
    /// drifted deployment. The drifted files go into a backup like any
    /// change's, so `cudnnm rollback` undoes it. The premise is checked
    /// under the toolkit's lock (doctor saw the toolkit before waiting for
    /// it): the record must still name that release, and the files must
    /// still differ from it.
    ///
    /// # Errors
    /// [`Kind::NotFound`] when no deployment is recorded for `root`, the
    /// toolkit is gone or the release is no longer installed;
    /// [`Kind::Conflict`] when the record names another release now, or the
    /// toolkit's headers declare another cuDNN; as [`Guard::use_release`].
    pub fn redeploy(&self, root: &Path, release: &str) -> Result<Redeployed> {
        let windows = self.env.is_windows();
        let toolkit = Toolkit::at(root, "deployments.toml", windows)?;
        let _toolkit_lock = self.lock_toolkit(&toolkit.root)?;
        let deployments = Deployments::load(self.home)?;
        let use_here = |spec: &str| CommandLine::use_(spec).cuda_root(root).for_host(windows);
        let Some(dep) = deployments.for_toolkit(&toolkit.root) else {
            return Err(Error::new(
                Kind::NotFound,
                format!("no deployment is recorded for '{}'", root.display()),
            )
            .hint(format!(
                "deploy cuDNN {release} there with `{}`",
                use_here(release)
            )));
        };
        if dep.release.to_string() != release {
            return Err(Error::new(
                Kind::Conflict,
                format!(
                    "'{}' now records cuDNN {}, not {release}",
                    root.display(),
                    dep.release
                ),
            )
            .hint("run `cudnnm doctor` again to see the current state"));
        }
        let Some(rel) = self.store.get_id(&dep.release)? else {
            return Err(Error::new(
                Kind::NotFound,
                format!(
                    "cuDNN {} (recorded in '{}') is no longer installed",
                    dep.release,
                    root.display()
                ),
            )
            .hint({
                // From the source the deployment recorded (never another
                // package of the release id); else what the catalog has.
                let again = match &dep.source {
                    Some(src) => {
                        let (arg, is_file) = src.reinstall_arg(&dep.release.to_string());
                        format!(
                            "install it again (`{}`)",
                            CommandLine::install_from(&arg, is_file).for_host(windows)
                        )
                    }
                    None => crate::catalog::offer::install_hint(
                        self.home,
                        &crate::version::Spec::prefix(
                            dep.release.version.clone(),
                            Some(dep.release.cuda),
                        ),
                        crate::version::Platform::host(),
                        None,
                        &|c| c.for_host(windows),
                    ),
                };
                format!(
                    "{again}, or deploy another release with `{}`",
                    use_here("SPEC")
                )
            }));
        };
        // Headers that now declare another cuDNN: another home (or the user)
        // deployed something else; redeploying this home's record would undo
        // it. (A toolkit that matches its record holds the release's own
        // headers, so this never refuses one that needs no change.)
        if let Some(v) = toolkit.header_cudnn_version()
            && v.triple() != rel.version().triple()
        {
            return Err(Error::new(
                Kind::Conflict,
                format!(
                    "'{}' now holds cuDNN {v} (not this home's record of {})",
                    root.display(),
                    dep.release
                ),
            )
            .hint(format!(
                "nothing was changed; if this home's release belongs there, deploy it yourself with `{}`",
                use_here(&dep.release.to_string())
            )));
        }
        let mode = ModeRequest::Exact(dep.mode).resolve(
            &rel.dir,
            &existing_toolkit_dir(&toolkit),
            windows,
        )?;
        let elevate = access::elevate_hint(
            self.env,
            self.home,
            CommandLine::use_(rel.id()).mode(mode),
            &toolkit.root,
            Some(&rel.id()),
        );
        Ok(
            match self.use_locked(&toolkit, &rel, mode, &elevate, &deployments)? {
                Done::AlreadyActive => Redeployed::AlreadyClean,
                Done::Changed(applied) => Redeployed::Done {
                    release: rel.release_id(),
                    mode,
                    applied,
                },
            },
        )
    }

    /// [`Guard::use_release`] under the toolkit lock, with the records read there.
    fn use_locked(
        &self,
        toolkit: &Toolkit,
        release: &Release,
        mode: Mode,
        elevate: &str,
        deployments: &Deployments,
    ) -> Result<Done> {
        // A store file changed since it was installed (edited through a link
        // deployment) is refused before anything is judged or placed.
        plan::check_release(&self.store, release, toolkit)?;
        let current = deployments.for_toolkit(&toolkit.root);
        if let Some(drift) = self.drift_of_same(current, toolkit, release, mode) {
            if drift.is_clean() {
                return Ok(Done::AlreadyActive);
            }
            self.reporter.on_drifted(release, &toolkit.root, &drift);
        }
        let applied = self.transact(toolkit, elevate, |id| {
            plan::plan_use(self.home, &self.store, toolkit, release, mode, current, id)
        })?;
        Ok(Done::Changed(Box::new(applied)))
    }

    /// The drift of the toolkit from its record, when the record names
    /// `release` placed by `mode` (the one test of "already active").
    fn drift_of_same(
        &self,
        current: Option<&Deployment>,
        toolkit: &Toolkit,
        release: &Release,
        mode: Mode,
    ) -> Option<Drift> {
        let d = current.filter(|d| d.release == release.release_id() && d.mode == mode)?;
        Some(status::check(d, toolkit, &self.store))
    }

    /// Plans a change with a new backup id, checks write access to
    /// everything it touches, runs it as one transaction, then prunes the
    /// toolkit's old backups (`keep_backups` in `config.toml`).
    fn transact(
        &self,
        toolkit: &Toolkit,
        elevate: &str,
        make: impl FnOnce(u64) -> Result<Plan>,
    ) -> Result<Applied> {
        let keep = self.home.config()?.backups_to_keep();
        let plan = make(backup::next_id(self.home)?)?;
        access::preflight(&plan, self.home, &*access::checker(self.env), elevate)?;
        backup::reserve_id(self.home, plan.id)?;
        let outcome = apply::execute(
            self.home,
            plan,
            FaultHook::from_env(self.env),
            self.reporter.progress(),
        )?;
        let pruned = self
            .prune_backups(&toolkit.root, keep)?
            .into_iter()
            .map(|r| r.id)
            .collect();
        Ok(Applied { outcome, pruned })
    }
}

/// A toolkit folder that exists, for the same-volume test of a mode: the
/// library folder, else the root.
pub fn existing_toolkit_dir(toolkit: &Toolkit) -> PathBuf {
    let lib = toolkit.lib_dir();
    if lib.is_dir() {
        lib
    } else {
        toolkit.root.clone()
    }
}
