//! `verify`: re-hashes every store release against its receipt and every
//! deployment against what was placed, reporting modified, missing and extra
//! files per release and per toolkit; loads each deployed main library where
//! this platform can and compares `cudnnGetVersion()` with the receipt.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::gather::Querier;
use super::names::{self, FileKind};
use crate::deploy::{Deployment, Deployments};
use crate::error::Result;
use crate::hash;
use crate::home::Home;
use crate::store::{RECEIPT_FILE, Release, Store};
use crate::version::{Platform, Version};

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
pub fn verify(home: &Home, query: Option<Querier>) -> Result<VerifyReport> {
    let (releases, broken) = Store::new(home).scan()?;
    let deployments = Deployments::load(home)?;
    let mut rel: Vec<Check> = releases.iter().map(check_release).collect();
    // A release folder whose receipt is gone or unreadable cannot be verified: that is a failure.
    rel.extend(broken.iter().map(|b| {
        Check {
            release: b
                .dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            path: b.dir.display().to_string(),
            error: Some(b.error.to_string()),
            ..Default::default()
        }
    }));
    let dep: Vec<Check> = deployments
        .entries
        .iter()
        .map(|d| check_deployment(d, releases.iter().find(|r| r.id() == d.release), query))
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
        let size = f.link.is_none().then_some(f.size);
        match compare(
            &r.dir.join(&f.path),
            f.link.as_deref(),
            size,
            f.sha256.as_ref(),
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

/// The folders of a toolkit where cuDNN files go (both layouts; missing ones are skipped).
fn toolkit_dirs(root: &Path) -> Vec<PathBuf> {
    ["bin", "bin/x64", "include", "lib", "lib/x64", "lib64"]
        .iter()
        .map(|s| root.join(s))
        .filter(|d| d.is_dir())
        .collect()
}

fn check_deployment(d: &Deployment, release: Option<&Release>, query: Option<Querier>) -> Check {
    let mut c = Check {
        release: d.release.clone(),
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
    let mut placed: BTreeSet<PathBuf> = BTreeSet::new();
    for p in &d.files {
        placed.insert(p.path.clone());
        let size = match (&p.link, release) {
            (None, Some(r)) => r
                .receipt
                .files
                .iter()
                .find(|f| f.path == p.from)
                .map(|f| f.size),
            _ => None,
        };
        match compare(&p.path, p.link.as_deref(), size, p.sha256.as_ref()) {
            None => c.missing.push(p.path.to_string_lossy().into_owned()),
            Some(Err(why)) => c.modified.push(format!("{}: {why}", p.path.display())),
            Some(Ok(())) => {}
        }
    }
    let mut seen = BTreeSet::new();
    for dir in toolkit_dirs(&d.toolkit) {
        let key = fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        if !seen.insert(key) {
            continue;
        }
        let Ok(rd) = fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if names::classify(&name).is_some() && !e.path().is_dir() && !placed.contains(&e.path())
            {
                c.extra.push(e.path().to_string_lossy().into_owned());
            }
        }
    }
    c.extra.sort();
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
            let _ = write!(o, "  ok        {head} ({} files)", c.files);
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
            "{bad} of {} records do not match; `cudnnm install --force SPEC` re-imports a release, `cudnnm use SPEC` redeploys one.",
            r.releases.len() + r.deployments.len()
        );
    }
    o
}
