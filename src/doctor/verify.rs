//! `verify`: re-hashes every store release against its receipt and every
//! deployment against what was placed, reporting modified, missing and extra
//! files per release and per toolkit; loads each deployed main library where
//! this platform can and compares `cudnnGetVersion()` with the receipt.
//!
//! A deployed file a rollback restored from a backup (the user's change to
//! a file of the release, kept when switching away and brought back) is
//! checked against the deployment record, which holds its content, and
//! listed as `restored`: it is not the release's copy, as `current` says
//! too, but it is what the record says is there. Each record that needs
//! attention carries `help` naming only commands that can work (releases
//! the catalog lists, the deployment's own release and mode).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use serde::Serialize;

use super::checks::{Tables, offers_for};
use super::finding::quote_arg;
use super::gather::Querier;
use super::names::{self, FileKind};
use crate::catalog::Catalog;
use crate::deploy::status::restored_from_backup;
use crate::deploy::{Deployment, Deployments};
use crate::error::Result;
use crate::hash;
use crate::home::Home;
use crate::store::{RECEIPT_FILE, Release, Source, Store};
use crate::version::{CudaVariant, Platform, Spec, Version, release_id};

/// Commands verify prints are for this machine's shell.
const HOST_WINDOWS: bool = cfg!(windows);

/// The whole result.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct VerifyReport {
    /// No mismatch anywhere.
    pub healthy: bool,
    /// One entry per store release.
    pub releases: Vec<Check>,
    /// One entry per deployment.
    pub deployments: Vec<Check>,
}

/// The result for one release or one deployment.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Check {
    /// The release id.
    pub release: String,
    /// The release folder, or the toolkit root for a deployment.
    pub path: String,
    /// Files checked.
    pub files: usize,
    /// Files whose content or link target changed, with what changed.
    pub modified: Vec<String>,
    /// Files that are gone.
    pub missing: Vec<String>,
    /// Files that should not be there.
    pub extra: Vec<String>,
    /// Deployed files that match the record but are not the release's own
    /// copy: a rollback restored them from a backup (the user's change).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub restored: Vec<String>,
    /// What to do about what was found.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub help: Vec<String>,
    /// The deployed main library's own answer, when it was loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<LibraryCheck>,
    /// A problem that stopped the check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Check {
    /// True when nothing is wrong.
    pub fn ok(&self) -> bool {
        self.modified.is_empty()
            && self.missing.is_empty()
            && self.extra.is_empty()
            && self.error.is_none()
            && self.library.as_ref().is_none_or(|l| l.ok)
    }
}

/// `cudnnGetVersion()` of a deployed library against the receipt.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LibraryCheck {
    /// The library loaded.
    pub path: String,
    /// The receipt's `header_version`.
    pub expected: String,
    /// What the library reported.
    pub reported: Option<String>,
    /// Why it could not be loaded.
    pub error: Option<String>,
    /// They agree.
    pub ok: bool,
}

/// Verifies the store and the deployments of `home`.
///
/// # Errors
/// When the store or `deployments.toml` cannot be read at all.
pub fn verify(home: &Home, catalog: &Catalog, query: Option<Querier>) -> Result<VerifyReport> {
    let (releases, broken) = Store::new(home).scan()?;
    let deployments = Deployments::load(home)?;
    let tables = Tables {
        offers: offers_for(catalog, Platform::host()),
        ..Default::default()
    };
    let mut rel: Vec<Check> = releases
        .iter()
        .map(|r| {
            let mut c = check_release(r);
            if !c.ok() {
                c.help.push(release_help(&tables, r, &deployments));
            }
            c
        })
        .collect();
    // A release folder whose receipt is gone or unreadable cannot be verified: that is a failure.
    rel.extend(broken.iter().map(|b| {
        let id = broken_release_id(&b.dir);
        Check {
            release: id.clone().unwrap_or_else(|| {
                b.dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            }),
            path: b.dir.display().to_string(),
            error: Some(b.error.to_string()),
            help: vec![format!(
                "{}, or delete '{}' if you no longer need it",
                reinstall_help(&tables, id.as_deref().unwrap_or("it"), None),
                b.dir.display()
            )],
            ..Default::default()
        }
    }));
    let dep: Vec<Check> = deployments
        .entries
        .iter()
        .map(|d| {
            let r = releases.iter().find(|r| r.release_id() == d.release);
            let mut c = check_deployment(d, r, query);
            // A link deployment of a changed store release: the change is
            // the store's, and `use` would link the same files again.
            let store_changed = !c.ok()
                && d.mode != crate::deploy::Mode::Copy
                && rel.iter().any(|x| x.release == d.release.to_string() && !x.ok());
            c.help = if store_changed {
                vec![format!(
                    "these files are the store's own ({} deployment): release {} itself changed, and deploying it again links the same files — repair it as its store entry says",
                    d.mode, d.release
                )]
            } else {
                deployment_help(&tables, d, r.is_some(), &c)
            };
            c
        })
        .collect();
    let healthy = rel.iter().chain(&dep).all(Check::ok);
    Ok(VerifyReport {
        healthy,
        releases: rel,
        deployments: dep,
    })
}

/// The state of a file against a record: link target, or size and hash.
fn compare(
    path: &Path,
    link: Option<&str>,
    size: Option<u64>,
    sha: Option<&hash::Sha256Hex>,
) -> Option<Result<(), String>> {
    let meta = match fs::symlink_metadata(path) {
        Err(_) => return None,
        Ok(m) => m,
    };
    let is_link = meta.file_type().is_symlink();
    Some(match link {
        Some(want) => {
            if !is_link {
                Err(format!("a regular file, expected a link to {want}"))
            } else {
                let got = fs::read_link(path)
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if got == want {
                    Ok(())
                } else {
                    Err(format!("links to {got}, expected {want}"))
                }
            }
        }
        None => {
            if let Some(n) = size
                && !is_link
                && meta.len() != n
            {
                return Some(Err(format!("{} bytes, expected {n}", meta.len())));
            }
            match sha {
                None => Ok(()),
                Some(want) => match hash::sha256_file(path) {
                    Ok((_, got)) if &got == want => Ok(()),
                    Ok((_, got)) => Err(format!(
                        "SHA-256 {}…, expected {}…",
                        got.short(),
                        want.short()
                    )),
                    Err(e) => Err(e.to_string()),
                },
            }
        }
    })
}

fn check_release(r: &Release) -> Check {
    let mut c = Check {
        release: r.id(),
        path: r.dir.to_string_lossy().into_owned(),
        files: r.receipt.files.len(),
        ..Default::default()
    };
    let mut known: BTreeSet<String> = BTreeSet::new();
    known.insert(RECEIPT_FILE.to_string());
    for f in &r.receipt.files {
        known.insert(f.path.clone());
        let size = (!f.entry.is_link()).then_some(f.entry.size());
        match compare(
            &r.dir.join(&f.path),
            f.entry.link_target(),
            size,
            f.entry.sha256(),
        ) {
            None => c.missing.push(f.path.clone()),
            Some(Err(why)) => c.modified.push(format!("{}: {why}", f.path)),
            Some(Ok(())) => {}
        }
    }
    for e in walkdir::WalkDir::new(&r.dir)
        .min_depth(1)
        .into_iter()
        .flatten()
    {
        if e.file_type().is_dir() {
            continue;
        }
        let rel = e
            .path()
            .strip_prefix(&r.dir)
            .unwrap_or(e.path())
            .to_string_lossy()
            .replace('\\', "/");
        if !known.contains(&rel) {
            c.extra.push(rel);
        }
    }
    c
}

/// The release id of a store folder `cuda-<variant>/<version>`, when its names parse.
fn broken_release_id(dir: &Path) -> Option<String> {
    let version: Version = dir.file_name()?.to_str()?.parse().ok()?;
    let cuda: CudaVariant = dir
        .parent()?
        .file_name()?
        .to_str()?
        .strip_prefix("cuda-")?
        .parse()
        .ok()?;
    Some(release_id(&version, &cuda))
}

/// What `cudnnm install … --force` takes to import release `id` again from
/// the source its receipt names — never another package: the `pip:`
/// requirement it came from; for a wheel file, the requirement its name
/// gives (`nvidia_cudnn_jit_cu12-9.27.0.42-….whl` →
/// `pip:nvidia-cudnn-jit-cu12==9.27.0.42`); the release id for an archive
/// the catalog downloaded; else the archive's or folder's name, with `true`
/// (the user gives its path).
pub fn reinstall_arg(id: &str, source: &Source) -> (String, bool) {
    if let Some(u) = source.url.as_deref().filter(|u| u.starts_with("pip:")) {
        return (u.to_string(), false);
    }
    if source.kind == crate::archive::layout::Shape::Wheel
        && let Some(req) = wheel_requirement(&source.name)
    {
        return (req, false);
    }
    if source.url.is_some() {
        return (id.to_string(), false);
    }
    (source.name.clone(), true)
}

/// The `pip:` requirement of a wheel file name (PEP 427:
/// `{distribution}-{version}-…whl`), the distribution spelled as PyPI does.
fn wheel_requirement(name: &str) -> Option<String> {
    let stem = name.strip_suffix(".whl")?;
    let mut parts = stem.split('-');
    let dist = parts.next().filter(|d| !d.is_empty())?;
    let version = parts.next().filter(|v| !v.is_empty())?;
    Some(format!(
        "pip:{}=={version}",
        dist.replace('_', "-").to_ascii_lowercase()
    ))
}

/// The `cudnnm install … --force` command for [`reinstall_arg`]'s answer
/// (a local file's name shown as `PATH/TO/<name>`).
pub fn reinstall_command(arg: &str, is_file: bool, windows: bool) -> String {
    let arg = if is_file {
        format!("PATH/TO/{arg}")
    } else {
        arg.to_string()
    };
    format!("cudnnm install {} --force", quote_arg(&arg, windows))
}

/// The commands that repair store release `id` while it is deployed in
/// `deployed` (toolkit root, mode): `install --force` is refused while a
/// release is deployed, so each toolkit is switched away first (`cudnnm
/// rollback`), the release imported again by `install` (a command from
/// [`reinstall_command`]), then deployed again by its mode.
pub fn repair_commands(
    id: &str,
    install: &str,
    deployed: &[(String, String)],
    windows: bool,
) -> Vec<String> {
    let mut cmds: Vec<String> = deployed
        .iter()
        .map(|(t, _)| format!("cudnnm rollback --cuda-root {}", quote_arg(t, windows)))
        .collect();
    cmds.push(install.to_string());
    cmds.extend(deployed.iter().map(|(t, m)| {
        format!(
            "cudnnm use {id} --cuda-root {} --mode {m}",
            quote_arg(t, windows)
        )
    }));
    cmds
}

/// How to import release `id` again: from the source its receipt names
/// ([`reinstall_arg`]); without a receipt, the catalog's archive or wheel of
/// exactly that release — never a command that cannot find it.
fn reinstall_help(tables: &Tables, id: &str, source: Option<&Source>) -> String {
    if let Some(src) = source {
        let (arg, file) = reinstall_arg(id, src);
        let cmd = reinstall_command(&arg, file, HOST_WINDOWS);
        return if file {
            format!("import {id} again from the file it came from ({arg}): `{cmd}`")
        } else {
            format!("import {id} again: `{cmd}`")
        };
    }
    let spec: Option<Spec> = id.parse().ok().filter(|s: &Spec| s.cuda.is_some());
    if let Some(sp) = &spec
        && let Some(o) = tables.offer(sp, None).filter(|o| o.version == sp.version)
    {
        return format!("import {id} again: `{}`", o.install_command(" --force"));
    }
    format!(
        "import {id} again from the archive or wheel it came from with `cudnnm install --force` and that file; the catalog does not list it"
    )
}

/// What to do about a store release whose files changed: import it again
/// from its source, switching the toolkits it is deployed in away first
/// (`install --force` is refused while it is deployed) and back after.
fn release_help(tables: &Tables, r: &Release, deployments: &Deployments) -> String {
    let id = r.id();
    let deployed: Vec<(String, String)> = deployments
        .entries
        .iter()
        .filter(|d| d.release == r.release_id())
        .map(|d| (d.toolkit.display().to_string(), d.mode.to_string()))
        .collect();
    if deployed.is_empty() {
        return reinstall_help(tables, &id, Some(&r.receipt.source));
    }
    let (arg, file) = reinstall_arg(&id, &r.receipt.source);
    let cmds = repair_commands(
        &id,
        &reinstall_command(&arg, file, HOST_WINDOWS),
        &deployed,
        HOST_WINDOWS,
    );
    format!(
        "{id} is deployed, and `install --force` is refused while it is: switch each toolkit away, import it again from its source, deploy it again: {}",
        cmds.iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", then ")
    )
}

/// What to do about a deployment: redeploy it by its recorded mode when its
/// files changed; keep or drop the files a rollback restored.
fn deployment_help(tables: &Tables, d: &Deployment, installed: bool, c: &Check) -> Vec<String> {
    let root = d.toolkit.display();
    let use_cmd = format!(
        "cudnnm use {} --cuda-root {} --mode {}",
        d.release,
        quote_arg(&root.to_string(), HOST_WINDOWS),
        d.mode
    );
    let mut help = Vec::new();
    let files_changed = !c.modified.is_empty() || !c.missing.is_empty() || !c.extra.is_empty();
    // A library that reports another version was changed; one whose files
    // all match but that does not load lacks something else: deploying it
    // again would place the same bytes.
    let misreports = c
        .library
        .as_ref()
        .is_some_and(|l| !l.ok && l.reported.is_some());
    let unloadable = c
        .library
        .as_ref()
        .filter(|l| l.reported.is_none() && l.error.is_some());
    let changed = files_changed || misreports;
    if let Some(l) = unloadable.filter(|_| !changed && installed) {
        help.push(format!(
            "the files in {root} are exactly what cudnnm placed, but {} does not load here: a library it needs is missing (the CUDA runtime, cuBLAS, zlibwapi.dll for cuDNN 8.3–8.9 on Windows, the Visual C++ runtime) or it is built for another system; `cudnnm doctor --cuda-root {}` names what is missing",
            l.path,
            quote_arg(&root.to_string(), HOST_WINDOWS)
        ));
    }
    if !installed {
        help.push(format!(
            "{} is not in the store any more: {}, then `{use_cmd}` deploys it again",
            d.release,
            reinstall_help(tables, &d.release.to_string(), d.source.as_ref())
        ));
    } else if changed {
        help.push(format!(
            "`{use_cmd}` deploys {} again; what is there now goes into a backup (`cudnnm rollback` brings it back)",
            d.release
        ));
    }
    if !c.restored.is_empty() {
        let n = c.restored.len();
        help.push(format!(
            "{n} file{} in {root} {} not {}'s copy but yours: a change made before switching away, which `cudnnm rollback` restored from its backup. To keep {}, nothing needs doing (a later `cudnnm use` backs {} up first). To go back to the release's copy, run `{use_cmd}`; the changed file{} then go{} into a backup, and `cudnnm rollback` restores {} again",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" },
            d.release,
            if n == 1 { "it" } else { "them" },
            if n == 1 { "it" } else { "them" },
            if n == 1 { "" } else { "s" },
            if n == 1 { "es" } else { "" },
            if n == 1 { "it" } else { "them" },
        ));
    }
    help
}

fn check_deployment(d: &Deployment, release: Option<&Release>, query: Option<Querier>) -> Check {
    let mut c = Check {
        release: d.release.to_string(),
        path: d.toolkit.to_string_lossy().into_owned(),
        files: d.files.len(),
        ..Default::default()
    };
    if release.is_none() {
        c.error = Some(format!(
            "release {} is not in the store any more",
            d.release
        ));
    }
    let receipt = release.map(|r| &r.receipt);
    for p in &d.files {
        // A file a rollback restored: the record holds its content.
        if let Some(why) = restored_from_backup(p, receipt) {
            let size = (!p.entry.is_link()).then_some(p.entry.size());
            match compare(&p.path, p.entry.link_target(), size, p.entry.sha256()) {
                None => c.missing.push(p.path.to_string_lossy().into_owned()),
                Some(Err(e)) => c.modified.push(format!(
                    "{}: {e} (the record of the file {why})",
                    p.path.display()
                )),
                Some(Ok(())) => {
                    let name = p.path.file_name().map(|n| n.to_string_lossy().into_owned());
                    let release_copy = receipt.and_then(|r| {
                        r.files.iter().find(|f| {
                            Some(f.path.rsplit('/').next().unwrap_or(&f.path)) == name.as_deref()
                        })
                    });
                    let detail = match (release_copy, p.entry.is_link()) {
                        (Some(f), false) if !f.entry.is_link() => format!(
                            "{} bytes, the release's {} is {} bytes",
                            p.entry.size(),
                            f.path,
                            f.entry.size()
                        ),
                        (Some(f), _) => format!("not the release's {}", f.path),
                        (None, _) => "not a file of the release".into(),
                    };
                    c.restored
                        .push(format!("{}: {why}; {detail}", p.path.display()));
                }
            }
            continue;
        }
        let size = match (p.entry.is_link(), release, p.from.release_path()) {
            (false, Some(r), Some(from)) => r
                .receipt
                .files
                .iter()
                .find(|f| f.path == from)
                .map(|f| f.entry.size()),
            _ => None,
        };
        match compare(&p.path, p.entry.link_target(), size, p.entry.sha256()) {
            None => c.missing.push(p.path.to_string_lossy().into_owned()),
            Some(Err(why)) => c.modified.push(format!("{}: {why}", p.path.display())),
            Some(Ok(())) => {}
        }
    }
    // Where `use` looks; a root that no longer reads as a toolkit has its
    // placed files reported missing already.
    if let Ok(t) = crate::toolkit::Toolkit::at(&d.toolkit, "deployments.toml", cfg!(windows)) {
        c.extra = crate::deploy::status::extra_files(d, &t)
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
    }
    // Load the deployed main library where this platform can.
    if let (Some(q), Some(r)) = (query, release)
        && Platform::host() == Some(r.platform())
        && let Some(p) = d.files.iter().find(|p| {
            p.path
                .file_name()
                .and_then(|n| names::classify(&n.to_string_lossy()))
                .is_some_and(|n| {
                    n.kind == FileKind::Shared
                        && n.is_main()
                        && !n.dev_link
                        && n.full_version.is_none()
                })
        })
        && p.path.exists()
    {
        let expected = r.receipt.header_version.triple();
        let result = q(std::slice::from_ref(&p.path)).into_iter().next();
        c.library = Some(match result {
            Some(Ok(l)) => {
                let got: Version = l.version.version();
                LibraryCheck {
                    path: p.path.to_string_lossy().into_owned(),
                    expected: expected.to_string(),
                    ok: got.triple() == expected,
                    reported: Some(got.to_string()),
                    error: None,
                }
            }
            Some(Err(e)) => LibraryCheck {
                path: p.path.to_string_lossy().into_owned(),
                expected: expected.to_string(),
                reported: None,
                error: Some(e),
                ok: false,
            },
            None => LibraryCheck {
                path: p.path.to_string_lossy().into_owned(),
                expected: expected.to_string(),
                reported: None,
                error: Some("no answer".into()),
                ok: false,
            },
        });
    }
    c
}

/// `verify` as text.
pub fn text(r: &VerifyReport) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let line = |o: &mut String, c: &Check, head: String| {
        if c.ok() {
            let _ = write!(o, "  ok        {head} ({} files", c.files);
            if !c.restored.is_empty() {
                let _ = write!(
                    o,
                    "; {} not the release's copy",
                    match c.restored.len() {
                        1 => "1 is".to_string(),
                        n => format!("{n} are"),
                    }
                );
            }
            let _ = write!(o, ")");
            if let Some(l) = &c.library {
                let _ = write!(
                    o,
                    "; {} reports {}",
                    Path::new(&l.path)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    l.reported.as_deref().unwrap_or("?")
                );
            }
            let _ = writeln!(o);
            for m in &c.restored {
                let _ = writeln!(o, "    restored: {m}");
            }
            return;
        }
        let _ = writeln!(o, "  CHANGED   {head}");
        if let Some(e) = &c.error {
            let _ = writeln!(o, "    error:    {e}");
        }
        for m in &c.modified {
            let _ = writeln!(o, "    modified: {m}");
        }
        for m in &c.missing {
            let _ = writeln!(o, "    missing:  {m}");
        }
        for m in &c.extra {
            let _ = writeln!(o, "    extra:    {m}");
        }
        for m in &c.restored {
            let _ = writeln!(o, "    restored: {m}");
        }
        if let Some(l) = c.library.as_ref().filter(|l| !l.ok) {
            match (&l.reported, &l.error) {
                (Some(v), _) => {
                    let _ = writeln!(
                        o,
                        "    library:  {} reports {v}, the receipt says {}",
                        l.path, l.expected
                    );
                }
                (None, Some(e)) => {
                    let _ = writeln!(o, "    library:  {} does not load: {e}", l.path);
                }
                _ => {}
            }
        }
    };
    let _ = writeln!(
        o,
        "store: {} release{}",
        r.releases.len(),
        if r.releases.len() == 1 { "" } else { "s" }
    );
    for c in &r.releases {
        line(&mut o, c, format!("{}  {}", c.release, c.path));
    }
    let _ = writeln!(o, "deployments: {}", r.deployments.len());
    for c in &r.deployments {
        line(&mut o, c, format!("{}  in {}", c.release, c.path));
    }
    let bad = r
        .releases
        .iter()
        .chain(&r.deployments)
        .filter(|c| !c.ok())
        .count();
    if bad == 0 {
        let _ = writeln!(o, "Everything matches its record.");
    } else {
        let _ = writeln!(
            o,
            "{bad} of {} records do not match.",
            r.releases.len() + r.deployments.len()
        );
    }
    for h in r
        .releases
        .iter()
        .chain(&r.deployments)
        .flat_map(|c| &c.help)
    {
        let _ = writeln!(o, "help: {h}.");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(kind: &str, name: &str, url: Option<&str>) -> Source {
        Source {
            kind: kind.parse().unwrap(),
            name: name.into(),
            sha256: None,
            size: 0,
            url: url.map(str::to_string),
        }
    }

    #[test]
    fn reinstall_from_the_receipts_own_source() {
        let id = "9.27.0.42_cuda12";
        let jit = source(
            "wheel",
            "nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux2014_x86_64.whl",
            None,
        );
        assert_eq!(
            reinstall_arg(id, &jit),
            ("pip:nvidia-cudnn-jit-cu12==9.27.0.42".to_string(), false)
        );
        let pip = source(
            "wheel",
            "x.whl",
            Some("pip:nvidia-cudnn-jit-cu12==9.27.0.42"),
        );
        assert_eq!(
            reinstall_arg(id, &pip).0,
            "pip:nvidia-cudnn-jit-cu12==9.27.0.42"
        );
        let dl = source(
            "redist",
            "cudnn-linux-x86_64-9.27.0.42_cuda12-archive.tar.xz",
            Some("https://developer.download.nvidia.com/compute/cudnn/x.tar.xz"),
        );
        assert_eq!(reinstall_arg(id, &dl), (id.to_string(), false));
        let local = source("redist", "cudnn-9.27-custom.tar.xz", None);
        assert_eq!(
            reinstall_arg(id, &local),
            ("cudnn-9.27-custom.tar.xz".to_string(), true)
        );
        assert_eq!(
            reinstall_command("cudnn-9.27-custom.tar.xz", true, false),
            "cudnnm install PATH/TO/cudnn-9.27-custom.tar.xz --force"
        );
        assert_eq!(
            repair_commands(
                id,
                "cudnnm install pip:nvidia-cudnn-jit-cu12==9.27.0.42 --force",
                &[("/opt/cuda 12".into(), "hardlink".into())],
                false
            ),
            vec![
                "cudnnm rollback --cuda-root '/opt/cuda 12'",
                "cudnnm install pip:nvidia-cudnn-jit-cu12==9.27.0.42 --force",
                "cudnnm use 9.27.0.42_cuda12 --cuda-root '/opt/cuda 12' --mode hardlink",
            ]
        );
    }
}
