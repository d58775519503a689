//! `use` as one call (DESIGN.md §5): plan a release against what a toolkit
//! holds now, check write access, run the journaled transaction, prune old
//! backups. `cudnnm use` runs it for the release a user names; `doctor --fix`
//! runs it through [`redeploy`] for the release `deployments.toml` records in
//! a drifted toolkit, by its recorded mode — so the drifted files go into a
//! backup like any change and `cudnnm rollback` undoes the fix.
//!
//! Callers hold the home lock and have recovered any journal a crash left.

use crate::doctor::finding::quote_arg;
use std::path::{Path, PathBuf};

use super::apply::{self, Outcome};
use super::journal::FaultHook;
use super::{Deployment, Deployments, Mode, ModeRequest, access, backup, inflight, plan, status};
use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::home::Home;
use crate::store::{Release, Store};
use crate::toolkit::Toolkit;

/// One `use` to run.
pub struct UseRelease<'a> {
    /// The toolkit to deploy into.
    pub toolkit: &'a Toolkit,
    /// The store release to deploy.
    pub release: &'a Release,
    /// How to place its files.
    pub mode: Mode,
    /// The deployment recorded in that toolkit now, if any.
    pub current: Option<&'a Deployment>,
    /// Backups of the toolkit to keep afterwards (`keep_backups` in `config.toml`).
    pub keep_backups: u32,
    /// The hint for a refusal for lack of rights (see [`access::elevate_hint`]).
    pub elevate: &'a str,
    /// Called once if another cudnnm process (of any home) holds the
    /// toolkit's lock and this one waits.
    pub on_lock_wait: &'a dyn Fn(),
}

/// What a finished `use` did.
#[derive(Debug)]
pub struct Used {
    /// The transaction that ran (its plan holds the backup id and the labels).
    pub outcome: Outcome,
    /// Old backups of the toolkit removed afterwards.
    pub pruned: Vec<u64>,
}

/// Deploys `req.release` into `req.toolkit` as one transaction, under the
/// toolkit's lock ([`crate::lock::ToolkitLock`]): every cuDNN file there goes
/// into a new backup first.
///
/// # Errors
/// As [`plan::plan_use`], [`access::preflight`] (nothing changed) and
/// [`apply::execute`] (undone before returning).
pub fn use_release(home: &Home, env: &Env, store: &Store, req: &UseRelease) -> Result<Used> {
    // Planned and run under the toolkit's lock, taken after the home lock:
    // another home's change to this toolkit finishes first.
    let _toolkit_lock =
        inflight::lock_for_change(home, &req.toolkit.root, env.is_windows(), req.on_lock_wait)?;
    use_release_locked(home, env, store, req)
}

/// [`use_release`] for a caller that holds the toolkit's lock already.
fn use_release_locked(home: &Home, env: &Env, store: &Store, req: &UseRelease) -> Result<Used> {
    let id = backup::next_id(home)?;
    let plan = plan::plan_use(
        home,
        store,
        req.toolkit,
        req.release,
        req.mode,
        req.current,
        id,
    )?;
    access::preflight(&plan, home, &*access::checker(env), req.elevate)?;
    let outcome = apply::execute(home, plan, FaultHook::from_env(env))?;
    let pruned = backup::prune(home, &req.toolkit.root, req.keep_backups)?;
    Ok(Used { outcome, pruned })
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

/// What [`redeploy`] found and did.
#[derive(Debug)]
pub enum Redeployed {
    /// The toolkit matches its record again (someone fixed it meanwhile): nothing changed.
    AlreadyClean,
    /// The release was deployed again.
    Done {
        /// The release id.
        release: String,
        /// The mode it was placed by (the recorded one).
        mode: Mode,
        /// What the change did; its backup holds the drifted files.
        used: Box<Used>,
    },
}

/// Deploys release `release` again into the toolkit at `root`, where
/// `deployments.toml` records it, by the recorded mode, when the toolkit no
/// longer matches the record. The premise is checked first: the record must
/// still name that release, and the files must still differ from it.
///
/// # Errors
/// [`Kind::NotFound`] when no deployment is recorded for `root`, the toolkit
/// is gone or the release is no longer installed; [`Kind::Conflict`] when the
/// record names another release now, or the toolkit's headers declare
/// another cuDNN (checked under the toolkit's lock); anything [`use_release`] returns.
pub fn redeploy(home: &Home, env: &Env, root: &Path, release: &str) -> Result<Redeployed> {
    let toolkit = Toolkit::at(root, "deployments.toml", env.is_windows())?;
    // The premise is checked under the toolkit's lock: doctor saw the
    // toolkit before waiting for it, perhaps mid-way through another home's
    // change that has finished since.
    let _toolkit_lock = inflight::lock_for_change(home, &toolkit.root, env.is_windows(), || {
        eprintln!("{}", crate::lock::toolkit_wait_message(&toolkit.root))
    })?;
    let deployments = Deployments::load(home)?;
    let Some(dep) = deployments.for_toolkit(&toolkit.root) else {
        return Err(Error::new(
            Kind::NotFound,
            format!("no deployment is recorded for '{}'", root.display()),
        )
        .hint(format!(
            "deploy a release there with `cudnnm use SPEC --cuda-root {}`",
            quote_arg(&root.display().to_string(), env.is_windows())
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
    let store = Store::new(home);
    let Some(rel) = store.get_id(&dep.release)? else {
        return Err(Error::new(
            Kind::NotFound,
            format!(
                "cuDNN {} (recorded in '{}') is no longer installed",
                dep.release,
                root.display()
            ),
        )
        .hint(format!(
            "install it again (`cudnnm install {}`), or deploy another release with `cudnnm use SPEC --cuda-root {}`",
            dep.release,
            quote_arg(&root.display().to_string(), env.is_windows())
        )));
    };
    if status::check(dep, &toolkit, &store).is_clean() {
        return Ok(Redeployed::AlreadyClean);
    }
    // Headers that now declare another cuDNN: another home (or the user)
    // deployed something else; redeploying this home's record would undo it.
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
            "nothing was changed; if this home's release belongs there, deploy it yourself with `cudnnm use {} --cuda-root {}`",
            dep.release,
            quote_arg(&root.display().to_string(), env.is_windows())
        )));
    }
    let mode = ModeRequest::Exact(dep.mode).resolve(
        &rel.dir,
        &existing_toolkit_dir(&toolkit),
        env.is_windows(),
    )?;
    let keep = home.config()?.backups_to_keep();
    let elevate = access::elevate_hint(
        env,
        home,
        &format!("use {} --mode {mode}", rel.id()),
        &toolkit.root,
        Some(&rel.id()),
    );
    let used = use_release_locked(
        home,
        env,
        &store,
        &UseRelease {
            toolkit: &toolkit,
            release: &rel,
            mode,
            current: Some(dep),
            keep_backups: keep,
            elevate: &elevate,
            on_lock_wait: &|| eprintln!("{}", crate::lock::toolkit_wait_message(&toolkit.root)),
        },
    )?;
    Ok(Redeployed::Done {
        release: rel.id(),
        mode,
        used: Box::new(used),
    })
}
