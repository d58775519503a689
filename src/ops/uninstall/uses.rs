//! What uses a release: the default and the `current/` links that name it,
//! and for `uninstall --system` the users' toolkits that link into it and
//! the home the command runs with.

use std::path::{Path, PathBuf};

use super::blockers::{describe_referring, plural};
use super::{Context, SystemCheck};
use crate::deploy::backup;
use crate::deploy::{Deployment, Deployments, Mode, inflight};
use crate::error::Result;
use crate::fsops;
use crate::home::Home;
use crate::store::{Release, Store};
use crate::toolkit::Toolkit;
use crate::version::Spec;

/// What makes a release the default: `config.toml`'s default naming it, and
/// the stable links (or `.path` records) in `current/` that point at it.
#[derive(Debug, Default)]
pub(super) struct DefaultRefs {
    /// The default as written in `config.toml`, when it names this release.
    pub(super) default: Option<String>,
    /// `current/cuda-<variant>` links and `current/cuda-<variant>.path` records pointing at it.
    pub(super) links: Vec<PathBuf>,
}

impl DefaultRefs {
    pub(super) fn is_empty(&self) -> bool {
        self.default.is_none() && self.links.is_empty()
    }

    /// `the default (config.toml), and what '…/current/cuda-12' points at`.
    pub(super) fn describe(&self) -> String {
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
pub(super) fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// What makes `release` the default (see [`DefaultRefs`]). The default
/// names it when it is its id, or a spec (older configs) that no other
/// installed release matches — a prefix that another release also matches
/// stays a valid default.
pub(super) fn default_refs(home: &Home, store: &Store, release: &Release) -> Result<DefaultRefs> {
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
pub(super) fn system_check(cx: &Context<'_>, release: &Release) -> Result<SystemCheck> {
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
