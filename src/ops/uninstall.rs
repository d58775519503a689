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
use crate::deploy::backup::{self, Referring};
use crate::deploy::{
    Deployment, Deployments, Folder, Guard, Mode, ReleaseRemoval, StableLink, inflight,
};
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::home::Home;
use crate::store::{Release, Store, StoreOrigin, human_size};
use crate::toolkit::Toolkit;
use crate::version::{ReleaseId, Spec};

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
    if !req.force {
        let blockers = Blockers {
            id: &id,
            system: system.as_ref().map_or(&[][..], |s| &s.uses),
            using: &using,
            refs: &refs,
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

/// Everything that still needs a release, for one refusal.
struct Blockers<'a> {
    id: &'a ReleaseId,
    /// `--system`: users' toolkits and this home's uses.
    system: &'a [String],
    using: &'a [Deployment],
    refs: &'a DefaultRefs,
    referring: &'a [Referring],
}

/// One blocker: what needs the release, the command that clears it, and
/// what `--force` does about it.
struct Blocker {
    /// The refusal's message when it is the only blocker.
    alone: String,
    /// The hint when it is the only blocker.
    alone_hint: String,
    /// Its line among several: what needs it, and the command that clears it.
    line: String,
    /// What `--force` does about it.
    forced: String,
}

impl Blockers<'_> {
    /// Refuses with every blocker at once (one alone keeps its own words).
    fn refuse(&self, cx: &Context<'_>, store: &Store) -> Result<()> {
        let all = self.each(cx, store)?;
        let id = self.id;
        match all.as_slice() {
            [] => Ok(()),
            [one] => {
                Err(Error::new(Kind::Conflict, one.alone.clone()).hint(one.alone_hint.clone()))
            }
            many => {
                let mut e = Error::new(
                    Kind::Conflict,
                    format!(
                        "cuDNN {id} is still needed in {} ways; nothing was removed",
                        many.len()
                    ),
                );
                for b in many {
                    e = e.cause(&b.line);
                }
                let forced: Vec<&str> = many.iter().map(|b| b.forced.as_str()).collect();
                Err(e.hint(format!(
                    "clear each as shown, then run `{}` again; or pass --force: {}",
                    cx.say(CommandLine::uninstall(id.to_string())),
                    forced.join("; ")
                )))
            }
        }
    }

    fn each(&self, cx: &Context<'_>, store: &Store) -> Result<Vec<Blocker>> {
        let id = self.id.to_string();
        let mut out = Vec::new();
        if !self.system.is_empty() {
            out.push(system_blocker(&id, self.system));
        }
        if !self.using.is_empty() {
            out.push(deployed_blocker(cx, &id, self.using));
        }
        if !self.refs.is_empty() {
            out.push(default_blocker(cx, store, &id, self.refs)?);
        }
        if !self.referring.is_empty() {
            out.push(backups_blocker(cx, &id, self.referring));
        }
        Ok(out)
    }
}

fn system_blocker(id: &str, uses: &[String]) -> Blocker {
    Blocker {
        alone: format!("cuDNN {id} is still needed: {}", uses.join("; ")),
        alone_hint: "switch those toolkits first (`cudnnm use OTHER --cuda-root TOOLKIT` or `cudnnm rollback --cuda-root TOOLKIT`) and make another release the default (`cudnnm default OTHER`), or pass --force (their links will dangle until they do)".into(),
        line: format!(
            "{} — switch each (`cudnnm use OTHER --cuda-root TOOLKIT` or `cudnnm rollback --cuda-root TOOLKIT`) and choose another default (`cudnnm default OTHER`)",
            uses.join("; ")
        ),
        forced: "their links dangle until they switch".into(),
    }
}

fn deployed_blocker(cx: &Context<'_>, id: &str, using: &[Deployment]) -> Blocker {
    let e = deployed_refusal(id, "", using);
    let clear: Vec<String> = using
        .iter()
        .map(|d| {
            format!(
                "`{}` or `{}`",
                cx.say(CommandLine::use_("OTHER").cuda_root(&d.toolkit)),
                cx.say(CommandLine::rollback().cuda_root(&d.toolkit))
            )
        })
        .collect();
    Blocker {
        alone: e.message().to_string(),
        alone_hint: e.hint_text().unwrap_or_default().to_string(),
        line: format!(
            "{} — switch it: {} (the backup that switch takes then needs this release's files too)",
            e.message(),
            clear.join("; ")
        ),
        forced: deployed_effect(using).to_string(),
    }
}

fn default_blocker(
    cx: &Context<'_>,
    store: &Store,
    id: &str,
    refs: &DefaultRefs,
) -> Result<Blocker> {
    let others: Vec<String> = store
        .releases()?
        .iter()
        .rev()
        .map(Release::id)
        .filter(|o| o != id)
        .collect();
    let installed = match others.as_slice() {
        [] => String::new(),
        o => format!("; installed: {}", o.join(", ")),
    };
    let choose = cx.say(CommandLine::default_("OTHER"));
    Ok(Blocker {
        alone: format!("cuDNN {id} is {}", refs.describe()),
        alone_hint: format!(
            "make another release the default first (`{choose}`{installed}), or pass --force (the default is then cleared and the link removed)"
        ),
        line: format!(
            "it is {} — make another release the default: `{choose}`{installed}",
            refs.describe()
        ),
        forced: "the default is cleared and the link removed".into(),
    })
}

fn backups_blocker(cx: &Context<'_>, id: &str, referring: &[Referring]) -> Blocker {
    let n = referring.len();
    let needs = format!(
        "{} need{} to restore: {}",
        plural(n, "backup", "backups"),
        if n == 1 { "s" } else { "" },
        describe_referring(referring)
    );
    let (first, rest) = referring.split_first().expect("not empty");
    let remove = cx.say(rest.iter().fold(
        CommandLine::backups_remove(first.backup.record.id),
        |c, r| c.word(r.backup.record.id.to_string()),
    ));
    let stay = human_size(backup::needed_bytes(referring));
    Blocker {
        alone: format!("cuDNN {id} holds files that {needs}"),
        alone_hint: format!(
            "keep the release, or pass --force: those files ({stay}) then stay in the backups (one copy on disk, however many backups need it) so they can still be restored, and the rest of the release is removed; or remove those backups first (`{remove}`) and the whole release is freed"
        ),
        line: format!("it holds files that {needs} — remove them first to free it all: `{remove}`"),
        forced: format!("those files ({stay}) stay in the backups, one copy"),
    }
}

/// The refusal to remove release `id` (`what` qualifies it) while `using`
/// deploy it, saying what `--force` would leave in each toolkit.
fn deployed_refusal(id: &str, what: &str, using: &[Deployment]) -> Error {
    let roots: Vec<String> = using
        .iter()
        .map(|d| format!("{} ({})", d.toolkit.display(), d.mode))
        .collect();
    Error::new(
        Kind::Conflict,
        format!("cuDNN {id}{what} is deployed in {}", roots.join(", ")),
    )
    .hint(format!(
        "switch that toolkit first (`cudnnm use OTHER` or `cudnnm rollback`), or pass --force ({})",
        deployed_effect(using)
    ))
}

/// What `--force` leaves in the toolkits `using` deploy the release.
fn deployed_effect(using: &[Deployment]) -> &'static str {
    let links = using.iter().any(|d| d.mode == Mode::Symlink);
    let files = using.iter().any(|d| d.mode != Mode::Symlink);
    match (links, files) {
        (true, false) => "its links there will dangle",
        (false, _) => "the copies and hard links there stay and keep working",
        (true, true) => {
            "a symlink deployment's links will dangle; copies and hard links stay and keep working"
        }
    }
}

/// `1 backup`, `2 backups`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `backup 2 of '/tk' (3 files), backup 5 of '/tk' (1 file)`.
fn describe_referring(refs: &[Referring]) -> String {
    refs.iter()
        .map(|r| {
            format!(
                "backup {} of '{}' ({})",
                r.backup.record.id,
                r.backup.record.toolkit.display(),
                plural(r.files.len(), "file", "files")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What makes a release the default: `config.toml`'s default naming it, and
/// the stable links (or `.path` records) in `current/` that point at it.
#[derive(Debug, Default)]
struct DefaultRefs {
    /// The default as written in `config.toml`, when it names this release.
    default: Option<String>,
    /// `current/cuda-<variant>` links and `current/cuda-<variant>.path` records pointing at it.
    links: Vec<PathBuf>,
}

impl DefaultRefs {
    fn is_empty(&self) -> bool {
        self.default.is_none() && self.links.is_empty()
    }

    /// `the default (config.toml), and what '…/current/cuda-12' points at`.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(d) = &self.default {
            parts.push(format!("the default (config.toml: default = \"{d}\")"));
        }
        if !self.links.is_empty() {
            let names: Vec<String> = self
                .links
                .iter()
                .map(|l| format!("'{}'", l.display()))
                .collect();
            parts.push(format!(
                "what {} point{} at",
                names.join(", "),
                if names.len() == 1 { "s" } else { "" }
            ));
        }
        parts.join(", and ")
    }
}

fn is_path_record(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "path")
}

/// Whether `a` and `b` name the same folder (resolving links), or are equal.
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// What makes `release` the default (see [`DefaultRefs`]). The default
/// names it when it is its id, or a spec (older configs) that no other
/// installed release matches — a prefix that another release also matches
/// stays a valid default.
fn default_refs(home: &Home, store: &Store, release: &Release) -> Result<DefaultRefs> {
    let mut refs = DefaultRefs::default();
    if let Some(d) = home.config()?.default {
        // What the default resolves to in `store`: a home's own copy of the
        // release hides the system's, so a default naming its id uses the
        // system copy only when the home has none of its own.
        let names_it = match d.parse::<Spec>().map(|spec| store.matching(&spec)) {
            Ok(Ok(m)) => !m.is_empty() && m.iter().all(|r| r.dir == release.dir),
            _ => d == release.id(),
        };
        if names_it {
            refs.default = Some(d);
        }
    }
    let Ok(rd) = std::fs::read_dir(home.current_dir()) else {
        return Ok(refs);
    };
    let mut links: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    links.sort();
    for p in links {
        let points_here = if is_path_record(&p) {
            std::fs::read_to_string(&p).is_ok_and(|t| same_dir(Path::new(t.trim()), &release.dir))
        } else {
            std::fs::symlink_metadata(&p).is_ok_and(|m| crate::platform::is_link(&m, &p))
                && same_dir(&p, &release.dir)
        };
        if points_here {
            refs.links.push(p);
        }
    }
    Ok(refs)
}

/// `uninstall --system`: what cudnnm can know of the users of a system
/// release — the home this command runs with (its deployments, default and
/// backups), the toolkits on this machine whose cuDNN files link into it,
/// and the changes in flight there that name it.
///
/// # Errors
/// When that home's records cannot be read.
fn system_check(cx: &Context<'_>, release: &Release) -> Result<SystemCheck> {
    let (mut uses, user_roots) = match cx.user_home {
        Some(h) => user_uses(h, release)?,
        None => (Vec::new(), Vec::new()),
    };
    let mut toolkits = cx.toolkits.clone();
    for root in &user_roots {
        if toolkits.iter().any(|t| same_dir(&t.root, root)) {
            continue;
        }
        if let Ok(t) = Toolkit::at(root, "this home's records", cx.windows()) {
            toolkits.push(t);
        }
    }
    uses.extend(toolkits.iter().flat_map(|t| toolkit_uses(t, release)));
    Ok(SystemCheck {
        uses,
        toolkits: toolkits.len(),
        user_home: cx.user_home.map(|h| h.root().to_path_buf()),
    })
}

/// How toolkit `t` uses the system release: files linking into it, and a
/// change in flight there that names it.
fn toolkit_uses(t: &Toolkit, release: &Release) -> Vec<String> {
    let dir = fsops::canonical_or_self(&release.dir);
    let mut out = Vec::new();
    let mut links = 0;
    for d in [t.include_dir(), t.lib_dir(), t.root.join("bin")] {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if std::fs::read_link(&p).is_ok()
                && fsops::canonical(&p).is_some_and(|c| c.starts_with(&dir))
            {
                links += 1;
            }
        }
    }
    if links > 0 {
        out.push(format!(
            "toolkit '{}' holds {} linking into it",
            t.root.display(),
            plural(links, "file", "files")
        ));
    }
    if let Some(m) = inflight::read(&t.root)
        && m.action.contains(&release.id())
    {
        out.push(format!(
            "a change in flight in '{}' ({}, home '{}') uses it",
            t.root.display(),
            m.action,
            m.home.display()
        ));
    }
    out
}

/// How `home` (the one `uninstall --system` runs with) uses the system
/// release: its deployments, its default and `current/` links, and its
/// backups that need the release's files, as one line each; and the
/// toolkits it records (deployments and backups), to scan for links.
///
/// # Errors
/// When its `deployments.toml`, `config.toml` or backups cannot be read.
fn user_uses(home: &Home, release: &Release) -> Result<(Vec<String>, Vec<PathBuf>)> {
    let mut out = Vec::new();
    let deployments = Deployments::load(home)?;
    let id = release.id();
    // Only deployments of this copy: the home's own copy of the same id
    // (which hides the system one) is not the system's to check.
    let dir = fsops::canonical_or_self(&release.dir);
    for d in deployments
        .toolkits_using(&release.release_id())
        .into_iter()
        .filter(|d| links_into(d, &release.dir, &dir))
    {
        out.push(format!(
            "home '{}' has it deployed in toolkit '{}'",
            home.root().display(),
            d.toolkit.display()
        ));
    }
    let refs = default_refs(home, &Store::new(home), release)?;
    if !refs.is_empty() {
        out.push(format!(
            "in home '{}' cuDNN {id} is {}",
            home.root().display(),
            refs.describe()
        ));
    }
    let referring = backup::referring_to(home, &release.dir)?;
    if !referring.is_empty() {
        out.push(format!(
            "home '{}' has {} that need its files to restore: {}",
            home.root().display(),
            plural(referring.len(), "backup", "backups"),
            describe_referring(&referring)
        ));
    }
    let mut roots: Vec<PathBuf> = deployments
        .entries
        .iter()
        .map(|d| d.toolkit.clone())
        .collect();
    for b in backup::list(home)? {
        if !roots.contains(&b.record.toolkit) {
            roots.push(b.record.toolkit);
        }
    }
    Ok((out, roots))
}

/// Whether deployment `d` placed files that lead into the release folder
/// `release_dir` (`canonical`, that folder with links resolved): a link
/// that resolves into it, or a hard link to one of its files.
fn links_into(d: &Deployment, release_dir: &Path, canonical: &Path) -> bool {
    d.files.iter().any(|f| {
        let via_link = std::fs::symlink_metadata(&f.path)
            .is_ok_and(|m| crate::platform::is_link(&m, &f.path))
            && fsops::canonical(&f.path).is_some_and(|c| c.starts_with(canonical));
        via_link
            || f.from.release_path().is_some_and(|rel| {
                d.mode == Mode::Hardlink
                    && crate::platform::same_file(&f.path, &release_dir.join(rel))
            })
    })
}
