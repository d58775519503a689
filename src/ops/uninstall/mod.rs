//! Uninstall: the decisions behind `cudnnm uninstall SPEC` — which release,
//! what still needs it, what `--force` does about each — and the removal
//! itself through the guard ([`Guard::uninstall`]), returning what happened
//! as an [`Uninstalled`] the CLI renders as text or JSON.
//!
//! A release is refused, unless forced, while anything needs it, and every
//! such blocker is named at once with the command that clears it: deployed
//! in a toolkit (`use` another release there, or `rollback`), the default
//! or the target of a `current/` link (`default` another release), backups
//! that need its files to restore (`backups remove` them, or `--force`
//! keeps those files in them), and for the system store the users'
//! toolkits that link into it. Forced, the backups first hold the files they
//! need (hard links sharing one copy), the release goes, the links and the
//! default that named it go too; the bytes it says it freed are those the
//! disk got back, and where the rest stays is said with the command that
//! gives it back.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::command::CommandLine;
use crate::deploy::backup;
use crate::deploy::{Deployment, Deployments, Folder, Guard, Mode, ReleaseRemoval, StableLink};
use crate::error::{Error, Kind, Result};
use crate::home::Home;
use crate::store::{Release, Store, StoreOrigin};
use crate::toolkit::Toolkit;
use crate::version::{ReleaseId, Spec};

mod blockers;
mod uses;

pub use blockers::plural;
use blockers::{Blockers, deployed_refusal};
use uses::{DefaultRefs, default_refs, system_check};

/// What to uninstall.
#[derive(Clone, Debug)]
pub struct Request {
    /// The release (an id, or a prefix matching one release).
    pub spec: Spec,
    /// Remove it although something needs it (see the module docs).
    pub force: bool,
}

/// Where the uninstall runs.
pub struct Context<'a> {
    /// The guard of the home whose store it changes (the system home for `--system`).
    pub guard: &'a Guard<'a>,
    /// For `--system`: the home the command runs with, when it is another
    /// folder that exists (its deployments, default and backups may use
    /// the release).
    pub user_home: Option<&'a Home>,
    /// The system home's folder, for the command an administrator runs.
    pub system_home: &'a Path,
    /// For `--system`: the toolkits this machine shows or the home records,
    /// scanned for links into the release (empty otherwise).
    pub toolkits: Vec<Toolkit>,
}

impl Context<'_> {
    fn home(&self) -> &Home {
        self.guard.home()
    }

    fn windows(&self) -> bool {
        self.guard.env().is_windows()
    }

    /// `c` as the user runs it against this store.
    fn say(&self, c: CommandLine) -> String {
        self.home()
            .reach(self.guard.env(), c, false)
            .for_host(self.windows())
    }
}

/// A toolkit that still deploys the release after a forced uninstall.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StaysDeployed {
    /// The toolkit root.
    pub toolkit: PathBuf,
    /// How the release was placed there: a symlink deployment's links
    /// dangle; copies and hard links keep working.
    pub mode: Mode,
}

/// What `uninstall --system` checked for users of a system release.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SystemCheck {
    /// What still used it (forced: their links now dangle).
    pub uses: Vec<String>,
    /// How many toolkits were looked at.
    pub toolkits: usize,
    /// The home whose records were checked too.
    pub user_home: Option<PathBuf>,
}

/// A backup made to hold the release's files before it went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KeptFiles {
    /// The backup id.
    pub backup: u64,
    /// Its toolkit.
    pub toolkit: PathBuf,
    /// Files it now holds itself.
    pub files: usize,
    /// Bytes written as new copies (where no hard link could be made).
    pub copied: u64,
}

/// Where bytes of the release stay on disk after it went, and the command
/// that gives them back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "in", rename_all = "kebab-case")]
pub enum StaysIn {
    /// Backups that hold the files they need to restore.
    Backups {
        /// Their ids.
        ids: Vec<u64>,
        /// Bytes removing them would give back now.
        frees: u64,
        /// The command (`cudnnm backups remove 2 4`).
        command: String,
    },
    /// A toolkit that still deploys the release by hard links.
    Toolkit {
        /// Its root.
        toolkit: PathBuf,
        /// The command that switches it (`cudnnm use OTHER --cuda-root …`).
        command: String,
    },
}

/// What an uninstall did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Uninstalled {
    /// The release removed.
    pub release: ReleaseId,
    /// Its store folder (gone now).
    pub dir: PathBuf,
    /// The release's receipt could not be read (its folder went whole).
    pub receipt_unreadable: bool,
    /// Toolkits that still deploy it (forced).
    pub stays_deployed: Vec<StaysDeployed>,
    /// For `--system`: what was checked for users.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemCheck>,
    /// Backups that now hold its files they need.
    pub kept: Vec<KeptFiles>,
    /// Bytes the disk got back.
    pub freed: u64,
    /// Bytes of its files that stay on disk, shared with what still needs them.
    pub shared: u64,
    /// Where those stay, each with the command that gives them back.
    pub stays_in: Vec<StaysIn>,
    /// The `current/` links and records removed.
    pub links_removed: Vec<PathBuf>,
    /// The default cleared (as `config.toml` spelled it).
    pub default_cleared: Option<String>,
}

/// Uninstalls what `req` names (see the module docs).
///
/// # Errors
/// [`Kind::NotFound`] when nothing installed matches (the nearest named);
/// [`Kind::Usage`] when several do; [`Kind::Permission`] for a system
/// release from a user's home; [`Kind::Conflict`] naming every blocker
/// with the command that clears it (nothing removed); as
/// [`Guard::uninstall`].
pub fn uninstall(cx: &Context<'_>, req: &Request) -> Result<Uninstalled> {
    let store = Store::new(cx.home());
    let matches = store.matching(&req.spec)?;
    let release = match matches.as_slice() {
        [] => return uninstall_broken(cx, &store, req),
        [one] => one,
        many => return Err(ambiguous(cx, &req.spec, many.iter().map(Release::id), "")),
    };
    refuse_system_release(cx, &store, release)?;
    let id = release.release_id();
    let deployments = Deployments::load(cx.home())?;
    let system = cx
        .home()
        .is_system()
        .then(|| system_check(cx, release))
        .transpose()?;
    let using: Vec<Deployment> = deployments
        .toolkits_using(&id)
        .into_iter()
        .cloned()
        .collect();
    let refs = default_refs(cx.home(), &store, release)?;
    let referring = backup::referring_to(cx.home(), &release.dir)?;
    // A default the first install set, not one the user chose, is cleared
    // with the release (as fnm drops its alias) rather than refusing.
    let chosen = cx.home().config()?.default_is_first_install != Some(true);
    let no_refs = DefaultRefs::default();
    if !req.force {
        let blockers = Blockers {
            id: &id,
            system: system.as_ref().map_or(&[][..], |s| &s.uses),
            using: &using,
            refs: if chosen { &refs } else { &no_refs },
            referring: &referring,
        };
        blockers.refuse(cx, &store)?;
    }
    let links = refs
        .links
        .iter()
        .filter_map(|l| StableLink::read(l))
        .collect();
    let removal = ReleaseRemoval {
        release: id.clone(),
        folder: Folder::Release(release),
        keep_in: referring,
        links,
        default: refs.default.clone(),
    };
    let done = cx.guard.uninstall(&removal)?;
    let kept: Vec<KeptFiles> = removal
        .keep_in
        .iter()
        .zip(&done.kept)
        .map(|(r, m)| KeptFiles {
            backup: m.id,
            toolkit: r.backup.record.toolkit.clone(),
            files: m.files,
            copied: m.copied,
        })
        .collect();
    let stays_in = stays_in(cx, &kept, &using, done.shared);
    Ok(Uninstalled {
        release: id,
        dir: release.dir.clone(),
        receipt_unreadable: false,
        stays_deployed: using.iter().map(stays).collect(),
        system,
        kept,
        freed: done.freed,
        shared: done.shared,
        stays_in,
        links_removed: done.links_removed,
        default_cleared: done.default_cleared,
    })
}

fn stays(d: &Deployment) -> StaysDeployed {
    StaysDeployed {
        toolkit: d.toolkit.clone(),
        mode: d.mode,
    }
}

/// Where the shared bytes stay: the backups that now hold the release's
/// files (what removing them frees), and the toolkits deploying it by
/// hard links.
fn stays_in(
    cx: &Context<'_>,
    kept: &[KeptFiles],
    using: &[Deployment],
    shared: u64,
) -> Vec<StaysIn> {
    let mut out = Vec::new();
    if shared == 0 {
        return out;
    }
    if let Some((first, rest)) = kept.split_first() {
        let dirs: Vec<PathBuf> = kept
            .iter()
            .map(|k| cx.home().backups_dir().join(k.backup.to_string()))
            .collect();
        let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
        let command = rest
            .iter()
            .fold(CommandLine::backups_remove(first.backup), |c, k| {
                c.word(k.backup.to_string())
            });
        out.push(StaysIn::Backups {
            ids: kept.iter().map(|k| k.backup).collect(),
            frees: crate::disk::freed_by(&refs),
            command: cx.say(command),
        });
    }
    for d in using.iter().filter(|d| d.mode == Mode::Hardlink) {
        out.push(StaysIn::Toolkit {
            toolkit: d.toolkit.clone(),
            command: cx.say(CommandLine::use_("OTHER").cuda_root(&d.toolkit)),
        });
    }
    out
}

/// `'spec' matches N releases`, with the command naming the first.
fn ambiguous(
    cx: &Context<'_>,
    spec: &Spec,
    ids: impl Iterator<Item = String>,
    what: &str,
) -> Error {
    let ids: Vec<String> = ids.collect();
    Error::new(
        Kind::Usage,
        format!(
            "'{spec}' matches {} {what}releases: {}",
            ids.len(),
            ids.join(", ")
        ),
    )
    .hint(format!(
        "name one exactly, e.g. `{}`",
        cx.say(CommandLine::uninstall(&ids[0]))
    ))
}

/// A release of the system store seen from a user's home: an administrator removes it.
fn refuse_system_release(cx: &Context<'_>, store: &Store, release: &Release) -> Result<()> {
    if cx.home().is_system() || store.origin(release) != StoreOrigin::System {
        return Ok(());
    }
    let id = release.id();
    let as_admin = Home::system(cx.system_home.to_path_buf())
        .reach(cx.guard.env(), CommandLine::uninstall(&id), true)
        .sudo()
        .for_host(cx.windows());
    Err(Error::new(
        Kind::Permission,
        format!(
            "cuDNN {id} is in the system store '{}', which users do not change",
            store
                .system_root()
                .map(|d| d.display().to_string())
                .unwrap_or_default()
        ),
    )
    .hint(format!(
        "an administrator removes it for everyone: `{as_admin}`"
    )))
}

/// `uninstall` of a release whose receipt cannot be read (hidden from
/// `list`, which warns about it): the one store folder `spec` names is
/// removed, refused (unless forced) while this home records it deployed.
///
/// # Errors
/// [`Kind::NotFound`] when no such folder matches either (the nearest
/// installed named); as [`uninstall`].
fn uninstall_broken(cx: &Context<'_>, store: &Store, req: &Request) -> Result<Uninstalled> {
    let (_, broken) = store.scan()?;
    let hits: Vec<(ReleaseId, &crate::store::BrokenRelease)> = broken
        .iter()
        .filter_map(|b| b.release_id().map(|id| (id, b)))
        .filter(|(id, _)| req.spec.matches(&id.version, &id.cuda))
        .collect();
    let (id, b) = match hits.as_slice() {
        [] => return Err(not_installed(store, &req.spec)),
        [one] => one,
        many => {
            let ids = many.iter().map(|(id, _)| id.to_string());
            return Err(ambiguous(cx, &req.spec, ids, "unreadable "));
        }
    };
    let using: Vec<Deployment> = Deployments::load(cx.home())?
        .toolkits_using(id)
        .into_iter()
        .cloned()
        .collect();
    if !using.is_empty() && !req.force {
        return Err(deployed_refusal(
            &id.to_string(),
            " (receipt unreadable)",
            &using,
        ));
    }
    let done = cx.guard.uninstall(&ReleaseRemoval {
        release: id.clone(),
        folder: Folder::Broken(b),
        keep_in: Vec::new(),
        links: Vec::new(),
        default: None,
    })?;
    Ok(Uninstalled {
        release: id.clone(),
        dir: b.dir.clone(),
        receipt_unreadable: true,
        stays_deployed: using.iter().map(stays).collect(),
        system: None,
        kept: Vec::new(),
        freed: done.freed,
        shared: done.shared,
        stays_in: Vec::new(),
        links_removed: Vec::new(),
        default_cleared: None,
    })
}

fn not_installed(store: &Store, spec: &Spec) -> Error {
    let near = store.nearest(spec);
    Error::new(Kind::NotFound, format!("cuDNN {spec} is not installed")).hint(if near.is_empty() {
        "`cudnnm list` shows what is installed".to_string()
    } else {
        format!(
            "the nearest installed: {}; `cudnnm list` shows them all",
            near.join(", ")
        )
    })
}
