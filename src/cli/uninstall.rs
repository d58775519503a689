//! `cudnnm uninstall SPEC`: remove one release from the store — refused,
//! unless `--force`, while it is deployed in a toolkit, or while it is the
//! default (`config.toml`) or the target of a stable per-user link
//! (`$CUDNNM_HOME/current/cuda-<variant>`, or its `.path` record), which would
//! then dangle. With `--force` the link or record is removed and the default
//! cleared, and the command says so. Also refused while a backup needs the
//! release's store files to be restored (an unchanged copy it recorded by
//! reference, a link into the release); with `--force` those files are first
//! kept in the backups — hard links sharing one copy on disk however many
//! backups need them — which stay restorable. The bytes it says it freed are
//! those the disk got back: files no backup or toolkit still links to.

use std::path::{Path, PathBuf};

use super::Ctx;
use super::support::{for_this_store, human_size, known_toolkits, on_system};
use crate::command::CommandLine;
use crate::deploy::{Deployment, Deployments, Mode, backup, inflight};
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::home::Home;
use crate::store::{Release, Store, StoreOrigin};
use crate::toolkit::Toolkit;
use crate::version::Spec;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to remove (8.1.0.77, 8.9.7.29_cuda12, or a prefix matching one release)
    pub spec: String,
    /// Remove it even while deployed in a toolkit, or while it is the default
    /// (the default is cleared and its `current/` link removed), or while
    /// backups need its files (they are kept in the backups first, as hard
    /// links sharing one copy)
    #[arg(long)]
    pub force: bool,
    /// Work on the system store (--system-home), which every user of the machine
    /// reads; needs root or Administrator (or write access an admin gave)
    #[arg(long)]
    pub system: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let spec: Spec = args.spec.parse()?;
    let _lock = ctx.lock()?;
    let store = Store::new(&ctx.home);
    let matches = store.matching(&spec)?;
    let release = match matches.as_slice() {
        [] => {
            if let Some(code) = remove_broken(ctx, &store, &spec, args.force)? {
                return Ok(code);
            }
            let near = store.nearest(&spec);
            return Err(
                Error::new(Kind::NotFound, format!("cuDNN {spec} is not installed")).hint(
                    if near.is_empty() {
                        "`cudnnm list` shows what is installed".to_string()
                    } else {
                        format!(
                            "the nearest installed: {}; `cudnnm list` shows them all",
                            near.join(", ")
                        )
                    },
                ),
            );
        }
        [one] => one,
        many => {
            let ids: Vec<String> = many.iter().map(|r| r.id()).collect();
            return Err(Error::new(
                Kind::Usage,
                format!(
                    "'{spec}' matches {} releases: {}",
                    ids.len(),
                    ids.join(", ")
                ),
            )
            .hint(format!(
                "name one exactly, e.g. `{}`",
                for_this_store(ctx, CommandLine::uninstall(&ids[0])).for_host(ctx.env.is_windows())
            )));
        }
    };
    let id = release.id();
    if !ctx.home.is_system() && store.origin(release) == StoreOrigin::System {
        return Err(Error::new(
            Kind::Permission,
            format!(
                "cuDNN {id} is in the system store '{}', which users do not change",
                store
                    .system_root()
                    .map(Path::display)
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            ),
        )
        .hint(format!(
            "an administrator removes it for everyone: `{}`",
            on_system(ctx, CommandLine::uninstall(&id), true)
                .sudo()
                .for_host(ctx.env.is_windows())
        )));
    }
    let deployments = Deployments::load(&ctx.home)?;
    if ctx.home.is_system() {
        // The home this command runs with may itself use the release: its
        // deployments, default and backups are checked as a plain
        // uninstall checks them, and its toolkits scanned for links.
        let (mut seen, user_roots) = match &ctx.user_home {
            Some(h) => user_uses(h, release)?,
            None => (Vec::new(), Vec::new()),
        };
        let (links, looked_at) = system_users(ctx, &deployments, release, &user_roots);
        seen.extend(links);
        if !seen.is_empty() && !args.force {
            return Err(Error::new(
                Kind::Conflict,
                format!("cuDNN {id} is still needed: {}", seen.join("; ")),
            )
            .hint("switch those toolkits first (`cudnnm use OTHER --cuda-root TOOLKIT` or `cudnnm rollback --cuda-root TOOLKIT`) and make another release the default (`cudnnm default OTHER`), or pass --force (their links will dangle until they do)"));
        }
        for s in &seen {
            ctx.warn(format!("{s}; its links into cuDNN {id} will dangle"));
        }
        let this_home = match &ctx.user_home {
            Some(h) => format!(
                ", and home '{}' (its deployments.toml, default and backups)",
                h.root().display()
            ),
            None => String::new(),
        };
        ctx.warn(format!(
            "checked the {} this machine shows or the homes record{this_home} for links into cuDNN {id} and changes in flight; other users' own defaults, pins, backups and toolkits elsewhere are in their homes, which cudnnm cannot see; a user whose default was cuDNN {id} is told so by their next command, with the releases still installed and how to choose one",
            plural(looked_at, "toolkit", "toolkits")
        ));
    }
    let using = deployments.toolkits_using(&release.release_id());
    if !using.is_empty() {
        if !args.force {
            return Err(deployed_refusal(&id, "", &using));
        }
        for d in &using {
            ctx.warn(stays_deployed(&id, d));
        }
    }
    let refs = default_refs(&ctx.home, &store, release)?;
    if !refs.is_empty() && !args.force {
        let others: Vec<String> = store
            .releases()?
            .iter()
            .rev()
            .map(Release::id)
            .filter(|o| *o != id)
            .collect();
        let installed = match others.as_slice() {
            [] => String::new(),
            o => format!("; installed: {}", o.join(", ")),
        };
        return Err(Error::new(
            Kind::Conflict,
            format!("cuDNN {id} is {}", refs.describe()),
        )
        .hint(format!(
            "make another release the default first (`{}`{installed}), or pass --force (the default is then cleared and the link removed)",
            for_this_store(ctx, CommandLine::default_("OTHER")).for_host(ctx.env.is_windows())
        )));
    }
    let referring = backup::referring_to(&ctx.home, &release.dir)?;
    if !referring.is_empty() {
        let bytes: u64 = referring.iter().map(|r| r.bytes).sum();
        if !args.force {
            return Err(Error::new(
                Kind::Conflict,
                format!(
                    "cuDNN {id} holds files that {} need{} to restore: {}",
                    plural(referring.len(), "backup", "backups"),
                    if referring.len() == 1 { "s" } else { "" },
                    describe_referring(&referring)
                ),
            )
            .hint(format!(
                "keep the release, or pass --force: those files ({}) then stay in the backups (one copy on disk, however many backups need it) so they can still be restored, and the rest of the release is removed",
                human_size(backup::needed_bytes(&referring))
            )));
        }
        let progress = ctx.progress();
        progress.start(
            &format!("keeping cuDNN {id}'s files in the backups"),
            Some(bytes),
        );
        let done =
            backup::materialize_all(&referring, &release.dir, &release.release_id(), &*progress);
        progress.finish();
        for (r, m) in referring.iter().zip(done?) {
            ctx.status(format!(
                "kept {} of cuDNN {id} in backup {} (of '{}') so it can still be restored while that backup is kept (later changes prune backups beyond config keep_backups, a toolkit's first one never){}",
                plural(m.files, "file", "files"),
                r.backup.record.id,
                r.backup.record.toolkit.display(),
                if m.copied > 0 {
                    format!(
                        " ({} copied: no hard link could be made)",
                        human_size(m.copied)
                    )
                } else {
                    String::new()
                }
            ));
        }
    }
    // What the disk gets back: files with no name left outside the release
    // (a backup or a hard-link deployment may share them).
    let mut tally = crate::disk::Tally::new();
    tally.add_tree(&release.dir);
    store.remove(release)?;
    let kept = if tally.shared() > 0 {
        format!(
            "; {} of its files stay on disk, shared with backups or toolkits that still need them",
            human_size(tally.shared())
        )
    } else {
        String::new()
    };
    ctx.status(format!(
        "removed cuDNN {id} ({} freed{kept})",
        human_size(tally.freed())
    ));
    for l in &refs.links {
        if is_path_record(l) {
            fsops::remove_file(l)?;
        } else {
            fsops::remove_link(l)?;
        }
        ctx.warn(format!(
            "removed '{}', which pointed at cuDNN {id}",
            l.display()
        ));
    }
    if let Some(was) = &refs.default {
        let mut config = ctx.home.config()?;
        if config.default.as_ref() == Some(was) {
            config.default = None;
            ctx.home.save_config(&config)?;
        }
        ctx.warn(format!(
            "cleared the default cuDNN (was {was}); set another with `{}`",
            for_this_store(ctx, CommandLine::default_("SPEC")).for_host(ctx.env.is_windows())
        ));
    }
    Ok(0)
}

/// What an administrator's cudnnm can know about users of a system
/// release: toolkits on this machine (found, or recorded in the system
/// home) whose cuDNN files link into the release, and changes in flight
/// there (the in-flight marker) that name it.
/// What cudnnm can know of the users of a system release: the toolkits on
/// this machine whose cuDNN files link into it and the changes in flight
/// there (their in-flight markers), with how many toolkits it looked at.
fn system_users(
    ctx: &Ctx,
    deployments: &Deployments,
    release: &Release,
    more_roots: &[PathBuf],
) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let dir = fsops::canonical_or_self(&release.dir);
    let mut toolkits = known_toolkits(ctx, deployments);
    for root in more_roots {
        if toolkits.iter().any(|t| same_dir(&t.root, root)) {
            continue;
        }
        if let Ok(t) = Toolkit::at(root, "this home's records", ctx.env.is_windows()) {
            toolkits.push(t);
        }
    }
    for t in &toolkits {
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
    }
    (out, toolkits.len())
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
fn links_into(d: &crate::deploy::Deployment, release_dir: &Path, canonical: &Path) -> bool {
    d.files.iter().any(|f| {
        let via_link = std::fs::symlink_metadata(&f.path)
            .is_ok_and(|m| crate::platform::is_link(&m, &f.path))
            && fsops::canonical(&f.path).is_some_and(|c| c.starts_with(canonical));
        via_link
            || f.from.release_path().is_some_and(|rel| {
                d.mode == crate::deploy::Mode::Hardlink
                    && crate::platform::same_file(&f.path, &release_dir.join(rel))
            })
    })
}

/// `uninstall` of a release whose receipt cannot be read (hidden from
/// `list`, which warns about it): the one store folder `spec` names is
/// removed, refused (unless `--force`) while this home records it
/// deployed. `None` when no such folder matches.
///
/// # Errors
/// [`Kind::Conflict`] while deployed; [`Kind::Usage`] when `spec` matches
/// several; [`Kind::Permission`] for one in the system store seen from a
/// user's home; I/O errors.
fn remove_broken(ctx: &Ctx, store: &Store, spec: &Spec, force: bool) -> Result<Option<u8>> {
    let (_, broken) = store.scan()?;
    let hits: Vec<(crate::version::ReleaseId, &crate::store::BrokenRelease)> = broken
        .iter()
        .filter_map(|b| b.release_id().map(|id| (id, b)))
        .filter(|(id, _)| spec.matches(&id.version, &id.cuda))
        .collect();
    let (id, b) = match hits.as_slice() {
        [] => return Ok(None),
        [one] => one,
        many => {
            let ids: Vec<String> = many.iter().map(|(id, _)| id.to_string()).collect();
            return Err(Error::new(
                Kind::Usage,
                format!(
                    "'{spec}' matches {} unreadable releases: {}",
                    ids.len(),
                    ids.join(", ")
                ),
            )
            .hint(format!(
                "name one exactly, e.g. `{}`",
                for_this_store(ctx, CommandLine::uninstall(&ids[0])).for_host(ctx.env.is_windows())
            )));
        }
    };
    let deployments = Deployments::load(&ctx.home)?;
    let using = deployments.toolkits_using(id);
    if !using.is_empty() {
        let id = id.to_string();
        if !force {
            return Err(deployed_refusal(&id, " (receipt unreadable)", &using));
        }
        for d in &using {
            ctx.warn(stays_deployed(&id, d));
        }
    }
    let mut tally = crate::disk::Tally::new();
    tally.add_tree(&b.dir);
    store.remove_broken(b)?;
    ctx.status(format!(
        "removed cuDNN {id} ('{}', whose receipt could not be read; {} freed)",
        b.dir.display(),
        human_size(tally.freed())
    ));
    Ok(Some(0))
}

/// The refusal to remove release `id` (`what` qualifies it) while `using`
/// deploy it, saying what `--force` would leave in each toolkit.
fn deployed_refusal(id: &str, what: &str, using: &[&Deployment]) -> Error {
    let roots: Vec<String> = using
        .iter()
        .map(|d| format!("{} ({})", d.toolkit.display(), d.mode))
        .collect();
    let links = using.iter().any(|d| d.mode == Mode::Symlink);
    let files = using.iter().any(|d| d.mode != Mode::Symlink);
    let effect = match (links, files) {
        (true, false) => "its links there will dangle",
        (false, _) => "the copies and hard links there stay and keep working",
        (true, true) => {
            "a symlink deployment's links will dangle; copies and hard links stay and keep working"
        }
    };
    Error::new(
        Kind::Conflict,
        format!("cuDNN {id}{what} is deployed in {}", roots.join(", ")),
    )
    .hint(format!(
        "switch that toolkit first (`cudnnm use OTHER` or `cudnnm rollback`), or pass --force ({effect})"
    ))
}

/// What `uninstall --force` leaves in `d`'s toolkit, which still deploys
/// release `id`, as its mode makes it: a link into the store dangles; a
/// copy or a hard link holds its own bytes and keeps working, and `verify`
/// then calls the deployment orphaned (whole, no receipt to check against).
fn stays_deployed(id: &str, d: &Deployment) -> String {
    let root = d.toolkit.display();
    match d.mode {
        Mode::Symlink => format!(
            "cuDNN {id} stays deployed in '{root}' (symlink): its links there will dangle until you `use` another release there or install {id} again"
        ),
        Mode::Copy | Mode::Hardlink => format!(
            "cuDNN {id} stays deployed in '{root}' ({}): {} there stay and keep working; `cudnnm verify` calls the deployment orphaned until you install {id} again or `use` another release there",
            d.mode,
            if d.mode == Mode::Copy {
                "its copies"
            } else {
                "its hard-linked files (and their bytes on disk)"
            }
        ),
    }
}

/// `1 backup`, `2 backups`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `backup 2 of '/tk' (3 files), backup 5 of '/tk' (1 file)`.
fn describe_referring(refs: &[backup::Referring]) -> String {
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

    /// `the default (config.toml), and '…/current/cuda-12' points at it`.
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
