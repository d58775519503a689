//! Comparing what is on disk with the records: a store release against its
//! receipt, a deployment against what was placed (and the library's own
//! answer against the receipt).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use super::{Check, LibraryCheck, LoadVersions};
use crate::deploy::Deployment;
use crate::deploy::status::restored_from_backup;
use crate::hash;
use crate::names::{self, FileKind};
use crate::progress::Progress;
use crate::store::{RECEIPT_FILE, Release};
use crate::version::{Platform, Version};

/// The state of a file against a record: link target, or size and hash.
fn compare(
    path: &Path,
    link: Option<&str>,
    size: Option<u64>,
    sha: Option<&hash::Sha256Hex>,
    progress: &dyn Progress,
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
                Some(want) => {
                    match hash::sha256_file(path).inspect(|(n, _)| progress.advance(*n)) {
                        Ok((_, got)) if &got == want => Ok(()),
                        Ok((_, got)) => Err(format!(
                            "SHA-256 {}…, expected {}…",
                            got.short(),
                            want.short()
                        )),
                        Err(e) => Err(e.to_string()),
                    }
                }
            }
        }
    })
}

pub(super) fn check_release(r: &Release, progress: &dyn Progress) -> Check {
    let mut c = Check {
        release: Some(r.release_id()),
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
            progress,
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

pub(super) fn check_deployment(
    d: &Deployment,
    release: Option<&Release>,
    query: Option<LoadVersions>,
    progress: &dyn Progress,
) -> Check {
    let mut c = Check {
        release: Some(d.release.clone()),
        path: d.toolkit.to_string_lossy().into_owned(),
        files: d.files.len(),
        ..Default::default()
    };
    let receipt = release.map(|r| &r.receipt);
    for p in &d.files {
        // A file a rollback restored: the record holds its content.
        if let Some(why) = restored_from_backup(p, receipt) {
            let size = (!p.entry.is_link()).then_some(p.entry.size());
            match compare(
                &p.path,
                p.entry.link_target(),
                size,
                p.entry.sha256(),
                progress,
            ) {
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
        match compare(
            &p.path,
            p.entry.link_target(),
            size,
            p.entry.sha256(),
            progress,
        ) {
            None => c.missing.push(p.path.to_string_lossy().into_owned()),
            Some(Err(why)) => c.modified.push(format!("{}: {why}", p.path.display())),
            Some(Ok(())) => {}
        }
    }
    // Where `use` looks; a root that no longer reads as a toolkit has its
    // placed files reported missing already.
    if let Ok(t) = crate::toolkit::Toolkit::at(
        &d.toolkit,
        "deployments.toml",
        crate::platform::HOST_WINDOWS,
    ) {
        c.extra = crate::deploy::status::extra_files(d, &t)
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
    }
    if release.is_none() {
        // Copies and hard links hold their own bytes: with every one as
        // recorded the toolkit works without the store release. Links into
        // the store dangle, and a changed file cannot be told from damage.
        let whole = c.modified.is_empty() && c.missing.is_empty() && c.extra.is_empty();
        if d.mode != crate::deploy::Mode::Symlink && whole {
            c.orphaned = true;
        } else {
            c.error = Some(format!(
                "release {} is not in the store any more",
                d.release
            ));
        }
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
            Some(Ok(v)) => {
                let got: Version = v.version();
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
