//! `lock`: the release the pin (`.cudnn-version`, here or above) selects
//! on this machine — the newest installed match, else what a bare `install`
//! would pick from the catalog (its toolkits' CUDA or `--cuda`, its GPUs) —
//! written to `.cudnn-version.lock` beside the pin (`pin::lockfile`): the
//! release id and, per platform, where its bytes come from with their
//! SHA-256 (`docs/architecture.md#pins`). For this platform an installed
//! release is locked as the source it was installed from (its receipt: the
//! catalog archive, or the wheel's pip requirement, from the wheel's own
//! METADATA), so that `install --locked` here finds it; one imported from a
//! local file nothing else gives back is refused. Other platforms get the
//! catalog's archives. A release the catalog knows only as a PyPI wheel is
//! locked as its pip requirement and the SHA-256 of the wheel pip downloads
//! here, for this platform, kept in the download cache for the install that
//! follows; entries other platforms recorded for the same release are kept.
//! Also the rule of which installed bytes another machine can fetch again
//! ([`reproducible`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::gpu::GpuGate;
use super::{Event, Session};
use crate::catalog::{self, Catalog, FetchRequest, download, offer, resolve};
use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::hash::Sha256Hex;
use crate::pin::lockfile::{self, LockedSource, ProjectLock};
use crate::pin::{self, SpecSource};
use crate::shape::Shape;
use crate::store::{Release, Store};
use crate::version::{
    CudaVariant, CudnnPackage, Flavour, PipRequirement, Platform, ReleaseId, Spec,
};

/// What `lock` is asked.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The CUDA to resolve the pin for, when the toolkits found do not
    /// say, as given (`--cuda`; parsed once a pin is found).
    pub cuda: Option<String>,
    /// The platforms to lock, as given (`--platform`, repeatable)
    /// [default: every platform the release is published for]. This
    /// machine's platform decides the release when it is among them (or
    /// none is given), else the first.
    pub platforms: Vec<String>,
    /// The package index wheels come from (`--index-url`; else
    /// [`catalog::index::setting::effective`]'s order).
    pub index_url: Option<String>,
}

/// What `lock` wrote (`--json` prints it).
#[derive(Debug, Serialize)]
pub struct Locked {
    /// The lock file.
    pub path: String,
    /// The pin's spec.
    pub pin: String,
    /// The release locked.
    pub release: String,
    /// The platforms the lock has an entry for.
    pub platforms: Vec<String>,
    /// Whether the file changed (else it held this lock already).
    pub changed: bool,
}

/// The platforms asked for, parsed, and the one that decides the pick.
fn platforms_of(req: &Request) -> Result<(Platform, Vec<Platform>)> {
    let asked: Vec<Platform> = req
        .platforms
        .iter()
        .map(|p| p.parse())
        .collect::<Result<_>>()?;
    let host = Platform::host();
    let decides = match (host, asked.first()) {
        (Some(h), _) if asked.is_empty() || asked.contains(&h) => h,
        (_, Some(first)) => *first,
        (_, None) => {
            return Err(Error::new(
                Kind::Usage,
                "cuDNN is not published for this machine's platform",
            )
            .hint("pass --platform"));
        }
    };
    Ok((decides, asked))
}

/// `cudnnm lock` as the user gave it, for hints that repeat it: every
/// `--platform` given and the `--index-url` (credentials left out, as
/// everywhere cudnnm prints a URL); [`Session::printed`] adds what reaches
/// the home.
fn lock_command(req: &Request, asked: &[Platform]) -> CommandLine {
    let c = asked.iter().fold(CommandLine::lock(), |c, p| c.platform(p));
    match &req.index_url {
        Some(url) => c
            .literal("--index-url")
            .word(catalog::index::setting::without_credentials(url)),
        None => c,
    }
}

/// Locks the release the pin selects here; see the module documentation.
///
/// # Errors
/// No pin here or above ([`Kind::NotFound`]); no archive of the release
/// with a known SHA-256 ([`Kind::Integrity`]); an installed release whose
/// bytes no other machine can fetch ([`Kind::Conflict`]); the index
/// failing, or pip (where pip is configured with `no-index`); a platform
/// asked for that the release is not published for ([`Kind::NotFound`]);
/// the lock file not writable.
pub fn lock(session: &Session<'_>, req: &Request) -> Result<Locked> {
    let (spec, lock_path) = pin_here(session)?;
    let lock = decide(session, req, &spec, &lock_path)?;
    let text = lock.to_text();
    let changed = std::fs::read(&lock_path).ok().as_deref() != Some(text.as_bytes());
    if changed {
        fsops::write_atomic(&lock_path, text.as_bytes())?;
    }
    Ok(Locked {
        path: lock_path.display().to_string(),
        pin: spec.to_string(),
        release: lock.release.to_string(),
        platforms: lock.platform.keys().cloned().collect(),
        changed,
    })
}

/// The lock `lock` writes for `spec`.
fn decide(
    session: &Session<'_>,
    req: &Request,
    spec: &Spec,
    lock_path: &std::path::Path,
) -> Result<ProjectLock> {
    let cuda: Option<CudaVariant> = req.cuda.as_deref().map(str::parse).transpose()?;
    let (platform, asked) = platforms_of(req)?;
    // What a hint says to run again: this lock, as given.
    let again = match &req.cuda {
        Some(c) => lock_command(req, &asked).cuda(c),
        None => lock_command(req, &asked),
    };
    let mut cat = Catalog::load(session.home)?;
    for w in cat.warnings() {
        session.report.event(&Event::Warning(w));
    }
    let gate = GpuGate::read(session);
    // The CUDA build for the toolkit `use` would deploy into, as `install` picks it.
    let toolkits = super::toolkits::for_pick(session, spec, cuda.as_ref(), platform).toolkits;
    let old = read_old(session, lock_path)?;
    let setting =
        catalog::index::setting::effective(req.index_url.as_deref(), session.env, session.home)?;
    // What the project runs here: the newest installed release the pin
    // selects (as `exec`, `env` and `current` do), so the lock and this
    // machine agree; else what a bare `install` would pick.
    let installed = Store::new(session.home).newest_matching_where(spec, |r| {
        cuda.as_ref()
            .is_none_or(|c| resolve::cuda_serves(c, r.cuda()))
            && r.platform() == platform
    })?;
    let mut archive_too = false;
    // The index's file list of the wheel picked, read once.
    let mut listing: Option<catalog::index::Listing> = None;
    let (release, wheel) = match &installed {
        Some(r) => {
            let id = r.release_id();
            session
                .report
                .event(&Event::LockingInstalled { release: &id, spec });
            (id, None)
        }
        None => {
            let req = FetchRequest {
                spec: spec.clone(),
                cuda,
                platform,
                mirror: None,
                sha256: None,
                allow_unverified: false,
                asked_by: catalog::AskedBy::Lock(session.home.reach(
                    session.env,
                    lock_command(req, &asked),
                    false,
                )),
            };
            // As `install` picks: an index named for cudnnm serves the wheel
            // of a release NVIDIA also ships as an archive (whose entries
            // stay where that index lacks the wheel), and a version that
            // index yanked is passed over. (An index that cannot be read is
            // said where its wheels are locked.)
            let gpu = gate.oldest().map(|g| &g.compute);
            let picked = crate::ops::install::pick_through_index(
                session, &mut cat, &req, &toolkits, gpu, &setting,
            )?;
            archive_too = picked.archive_too;
            listing = picked.listing.and_then(Result::ok);
            let pick = picked.pick;
            match pick {
                resolve::Pick::Archive { archive, .. } => (archive.release_id(), None),
                resolve::Pick::Wheel(w) => (w.release_id(), Some(w)),
            }
        }
    };
    let same_release = old.as_ref().filter(|o| o.release == release);
    let mut entries = catalog_entries(
        session,
        &cat,
        &release,
        platform,
        // The build installed here (an older cudnnm's JIT build keeps the plain id).
        installed.as_ref().map(Release::flavour),
        same_release,
    );
    if let Some(r) = &installed {
        // This platform: the bytes installed here, from the source they came from.
        entries.insert(
            platform.as_str().to_string(),
            installed_source(session, &cat, r, &again)?,
        );
    }
    // The wheel's package: the catalog's pick, or the one the installed wheel came from.
    let package = match (&wheel, entries.get(platform.as_str())) {
        (Some(w), _) => Some(w.pip_requirement()?.package()),
        (None, Some(LockedSource::Pip { pip, .. })) => Some(pip.package()),
        _ => None,
    };
    if let Some(package) = package {
        match setting {
            catalog::index::Setting::Index(index) => {
                let required = wheel.is_some() && !archive_too;
                // The index is the truth for wheels: an older lock's wheel
                // entry gives way to what it serves now, and where the index
                // is named for cudnnm and the pick is its wheel, so does
                // NVIDIA's archive — all but this platform's installed bytes.
                let named = index.named_for_cudnnm() && wheel.is_some();
                let mine = installed.is_some().then_some(platform);
                let replaceable = |p: Platform, e: &LockedSource| {
                    Some(p) != mine && (matches!(e, LockedSource::Pip { .. }) || named)
                };
                index_entries(
                    session,
                    &index,
                    package,
                    &release,
                    &asked,
                    IndexRule {
                        known: listing.take(),
                        required,
                        exact: spec.names_exactly(&release.version),
                        here: platform,
                        replaceable: &replaceable,
                    },
                    &mut entries,
                )?;
            }
            catalog::index::Setting::PipNoIndex(_) => {
                if installed.is_none() && !entries.contains_key(platform.as_str()) {
                    // No archive for this platform: a wheel, as pip gives it.
                    if let Some(s) = same_release.and_then(|o| o.platform.get(platform.as_str()))
                        && matches!(s, LockedSource::Pip { .. })
                    {
                        entries.insert(platform.as_str().to_string(), s.clone());
                    }
                    if let Some(w) = &wheel {
                        let entry = wheel_entry(session, w, &release, platform, same_release)?;
                        entries.insert(platform.as_str().to_string(), entry);
                    }
                }
            }
        }
    }
    if !asked.is_empty() {
        if let Some(missing) = asked.iter().find(|p| !entries.contains_key(p.as_str())) {
            return Err(Error::new(
                Kind::NotFound,
                format!("cuDNN {release} has no archive or wheel with a known SHA-256 for {missing}; nothing to lock for it"),
            )
            .cause(format!(
                "it has {}",
                if entries.is_empty() { "none".to_string() } else { entries.keys().cloned().collect::<Vec<_>>().join(", ") }
            ))
            .hint("lock the platforms it is published for (drop that --platform), or pin another release"));
        }
        entries.retain(|k, _| asked.iter().any(|p| p.as_str() == k));
    }
    if entries.is_empty() {
        return Err(Error::new(
            Kind::Integrity,
            format!("no archive of {release} has a known SHA-256; nothing to lock"),
        )
        .hint("a lock holds only hashes a source published; `cudnnm manifest refresh` reads NVIDIA's newest index"));
    }
    Ok(ProjectLock {
        pin: spec.clone(),
        release,
        platform: entries,
    })
}

/// The index's wheels of `release` from `project`'s file list, one entry
/// per platform (those `asked`, else every one it has a wheel for) that
/// `entries` does not have yet or holds `replaceable`: nothing is downloaded. `required`: the
/// release is a wheel only, so an index that cannot answer fails the
/// lock; else (other platforms of an installed wheel) it is a warning.
///
/// # Errors
/// As [`catalog::index::read`] and [`catalog::index::Listing::wheel`], when `required`.
fn index_entries(
    session: &Session<'_>,
    index: &catalog::index::Index,
    package: CudnnPackage,
    release: &ReleaseId,
    asked: &[Platform],
    rule: IndexRule<'_>,
    entries: &mut BTreeMap<String, LockedSource>,
) -> Result<()> {
    let IndexRule {
        known,
        required,
        exact,
        here,
        replaceable,
    } = rule;
    let read = match known.filter(|l| l.project == package.as_str()) {
        Some(l) => Ok(l),
        None => catalog::index::read(session.env, index, package.as_str()),
    };
    let listing = match read {
        Ok(l) => l,
        Err(e) if !required => {
            let w = format!(
                "{}; other platforms than this one's are left out of the lock",
                e.message()
            );
            session.report.event(&Event::Warning(&w));
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let version = &release.version;
    let platforms: Vec<Platform> = if asked.is_empty() {
        listing.platforms(version)
    } else {
        asked.to_vec()
    };
    let mut locked = Vec::new();
    for p in platforms {
        if entries.get(p.as_str()).is_some_and(|e| !replaceable(p, e)) {
            continue;
        }
        let file = match listing.wheel(version, p, exact) {
            Ok(f) => f,
            // A platform asked for that the index lacks: said after, with the others.
            Err(e) if e.kind() == Kind::NotFound => continue,
            // Every platform the index has, none asked for: one whose wheels
            // are all yanked (or unhashed) is left out, not the whole lock.
            Err(e) if asked.is_empty() && p != here && e.kind() == Kind::Integrity => {
                let w = format!("{}; {p} is left out of the lock", e.message());
                session.report.event(&Event::Warning(&w));
                continue;
            }
            Err(e) => return Err(e),
        };
        if file.yanked {
            let w = format!(
                "the package index {} marks {} yanked; locking it because the pin names {version} exactly",
                index.shown(),
                file.filename
            );
            session.report.event(&Event::Warning(&w));
        }
        let sha256 = file
            .sha256
            .clone()
            .expect("Listing::wheel gives a hashed file");
        entries.insert(
            p.as_str().to_string(),
            LockedSource::Pip {
                pip: PipRequirement::new(package, version.clone()),
                wheel: file.filename.clone(),
                sha256,
                size: file.size,
                // For people, and only as the lock parser takes it back.
                url: Some(catalog::index::setting::without_credentials(&file.url))
                    .filter(|u| lockfile::is_wheel_url(u, &file.filename)),
            },
        );
        locked.push(p);
    }
    if required && locked.is_empty() && !asked.is_empty() {
        // Every platform asked for was missing: the first one's error.
        listing.wheel(version, asked[0], exact)?;
    }
    if !locked.is_empty() {
        session.report.event(&Event::LockingFromIndex {
            release,
            index: &index.shown(),
            platforms: &locked,
        });
    }
    Ok(())
}

/// How [`index_entries`] treats the index: whether it must answer (the
/// release is a wheel only), and which entries already made it replaces.
struct IndexRule<'a> {
    /// The index's file list, when the pick already read it.
    known: Option<catalog::index::Listing>,
    required: bool,
    /// The pin names the version exactly: a yanked wheel may be locked (PEP 592).
    exact: bool,
    /// The platform the pick was made for: its wheel is never left out.
    here: Platform,
    replaceable: &'a dyn Fn(Platform, &LockedSource) -> bool,
}

/// What `lock --check` found (`--json` prints it).
#[derive(Debug, Serialize)]
pub struct Checked {
    /// The lock file.
    pub path: String,
    /// The pin's spec.
    pub pin: String,
    /// The release the lock names.
    pub release: String,
    /// The platforms it has an entry for, each checked.
    pub platforms: Vec<String>,
}

/// `lock --check`: the lock beside the pin exists, was written for the pin
/// as it is now, and names bytes their sources still serve — a catalog
/// archive's hash the catalog still publishes, a wheel the package index
/// in effect still lists under that name with that SHA-256 (its file list
/// only: nothing is downloaded). With `--platform`, those platforms must
/// have an entry. Changes nothing.
///
/// # Errors
/// No pin ([`Kind::NotFound`]); [`Kind::Integrity`] (exit 4) for a lock
/// that is missing, unreadable, stale against the pin, without an entry
/// asked for, or naming bytes no longer served; the index failing.
pub fn check(session: &Session<'_>, req: &Request) -> Result<Checked> {
    let (spec, path) = pin_here(session)?;
    let fix = "run `cudnnm lock` and commit the lock it writes";
    let lock = match ProjectLock::read(&path) {
        Ok(Some(l)) => l,
        Ok(None) => {
            return Err(Error::new(
                Kind::Integrity,
                format!("lock --check: there is no lock file '{}'", path.display()),
            )
            .hint(fix));
        }
        Err(e) => return Err(e.with_kind(Kind::Integrity).hint(fix)),
    };
    if !lock.satisfies(&spec) || lock.pin != spec {
        return Err(Error::new(
            Kind::Integrity,
            format!(
                "lock --check: the lock '{}' is stale: it was written for the pin {} and names {}; the pin is now {spec}",
                path.display(),
                lock.pin,
                lock.release
            ),
        )
        .hint(fix));
    }
    let asked: Vec<Platform> = req
        .platforms
        .iter()
        .map(|p| p.parse())
        .collect::<Result<_>>()?;
    if let Some(p) = asked.iter().find(|p| lock.source(**p).is_none()) {
        return Err(Error::new(
            Kind::Integrity,
            format!(
                "lock --check: the lock '{}' has no entry for {p}",
                path.display()
            ),
        )
        .hint(format!("run `cudnnm lock --platform {p}` (and the other platforms you need) and commit the lock")));
    }
    let cat = Catalog::load(session.home)?;
    let mut listings: BTreeMap<String, catalog::index::Listing> = BTreeMap::new();
    let mut setting = None;
    for (name, src) in &lock.platform {
        let not_served = |what: String| {
            Error::new(
                Kind::Integrity,
                format!(
                    "lock --check: the lock '{}' names bytes for {name} that {what}",
                    path.display()
                ),
            )
            .hint("find out why the source changed; if the new file is genuine, run `cudnnm lock` and commit the lock")
        };
        match src {
            LockedSource::Catalog { sha256, .. } => {
                let published = cat.archives().iter().any(|a| {
                    a.version == lock.release.version
                        && a.cuda == lock.release.cuda
                        && a.hashes.iter().any(|h| &h.sha256 == sha256)
                });
                if !published {
                    return Err(not_served(format!(
                        "the catalog no longer publishes (SHA-256 {sha256})"
                    )));
                }
            }
            LockedSource::Pip {
                pip, wheel, sha256, ..
            } => {
                let setting = match &setting {
                    Some(s) => s,
                    None => setting.insert(catalog::index::setting::effective(
                        req.index_url.as_deref(),
                        session.env,
                        session.home,
                    )?),
                };
                let catalog::index::Setting::Index(index) = setting else {
                    let note = format!(
                        "{name}: {wheel} is fetched by pip (configured with no-index); its bytes are checked when installed"
                    );
                    session.report.event(&Event::Note(&note));
                    continue;
                };
                let project = pip.package().as_str().to_string();
                if !listings.contains_key(&project) {
                    let l = match catalog::index::read(session.env, index, &project) {
                        Ok(l) => l,
                        // An index without the project no longer serves its bytes either.
                        Err(e) if e.kind() == Kind::NotFound => {
                            return Err(not_served(format!(
                                "the package index {} no longer serves ({wheel}: it has no project {project})",
                                index.shown()
                            ))
                            .cause(e.message()));
                        }
                        Err(e) => return Err(e),
                    };
                    listings.insert(project.clone(), l);
                }
                match listings[&project].serves(wheel, sha256) {
                    None => {
                        return Err(not_served(format!(
                            "the package index {} no longer serves ({wheel} with SHA-256 {sha256})",
                            index.shown()
                        )));
                    }
                    // Still the locked bytes (a lock may name a yanked file,
                    // PEP 592), but its publisher withdrew it: said.
                    Some(f) if f.yanked => {
                        session.report.event(&Event::Warning(&yanked_since(
                            &index.shown(),
                            name,
                            wheel,
                        )));
                    }
                    Some(_) => {}
                }
            }
        }
    }
    Ok(Checked {
        path: path.display().to_string(),
        pin: spec.to_string(),
        release: lock.release.to_string(),
        platforms: lock.platform.keys().cloned().collect(),
    })
}

/// The warning for a locked wheel its index has yanked since it was locked.
pub(crate) fn yanked_since(index: &str, platform: &str, wheel: &str) -> String {
    format!(
        "the package index {index} now marks the locked {wheel} ({platform}) yanked: its publisher withdrew it; the lock still installs it — pin another release and run `cudnnm lock` if that is the fix"
    )
}

/// The pin here or above and the lock file beside it.
fn pin_here(session: &Session<'_>) -> Result<(Spec, PathBuf)> {
    let cwd = session.env.cwd();
    let found = pin::find_pin(cwd)?.ok_or_else(|| {
        Error::new(
            Kind::NotFound,
            format!(
                "no {} in '{}' or above to lock",
                pin::PIN_FILE,
                cwd.display()
            ),
        )
        .hint("pin a release first with `cudnnm pin SPEC` (the lock is written beside the pin)")
    })?;
    match &found.source {
        SpecSource::PinFile { path, .. } => Ok((found.spec.clone(), lockfile::lock_path(path))),
        other => Err(Error::new(
            Kind::Usage,
            format!("the spec here comes from {other}, not from a pin file"),
        )
        .hint("pin a release with `cudnnm pin SPEC`; the lock is written beside the pin")),
    }
}

/// The lock file as it is: a lock that no longer parses (edited by hand, a
/// merge conflict) is what `lock` is for — written anew, saying so
/// ([`Event::LockUnreadable`]), never a dead end.
fn read_old(session: &Session<'_>, path: &std::path::Path) -> Result<Option<ProjectLock>> {
    match ProjectLock::read(path) {
        Err(e) if e.kind() == Kind::Integrity => {
            session.report.event(&Event::LockUnreadable {
                lock: path,
                why: e
                    .causes()
                    .first()
                    .map(String::as_str)
                    .unwrap_or("malformed"),
            });
            Ok(None)
        }
        other => other,
    }
}

/// The catalog's archives of `release` (for `platform` only when the
/// release is not installed here; `installed` is the build installed here,
/// whose flavour the archives must be), and what machines of other
/// platforms recorded for the same release in the lock (`same_release`): a
/// wheel, or the published hash of the archive they installed. An archive
/// with no published hash is left out ([`Event::UnhashedArchive`]).
fn catalog_entries(
    session: &Session<'_>,
    cat: &Catalog,
    release: &ReleaseId,
    platform: Platform,
    installed: Option<Flavour>,
    same_release: Option<&ProjectLock>,
) -> BTreeMap<String, LockedSource> {
    let mut entries = BTreeMap::new();
    let build = installed.unwrap_or(release.flavour);
    for a in cat
        .archives()
        .iter()
        .filter(|a| a.version == release.version && a.cuda == release.cuda && a.flavour == build)
    {
        if a.platform == platform && installed.is_some() {
            continue;
        }
        let recorded = same_release
            .and_then(|o| o.platform.get(a.platform.as_str()))
            .map(LockedSource::sha256);
        let Some(sha) = a
            .hashes
            .iter()
            .map(|h| &h.sha256)
            .find(|h| recorded == Some(*h))
            .or(a.hashes.first().map(|h| &h.sha256))
        else {
            session.report.event(&Event::UnhashedArchive {
                name: a.name(),
                platform: a.platform,
            });
            continue;
        };
        entries.insert(a.platform.as_str().to_string(), catalog_entry(a, sha));
    }
    if let Some(o) = same_release {
        for (k, s) in &o.platform {
            if k != platform.as_str()
                && (matches!(s, LockedSource::Pip { .. }) || !entries.contains_key(k))
            {
                entries.insert(k.clone(), s.clone());
            }
        }
    }
    entries
}

/// A release the catalog has only as a PyPI wheel: its lock entry for
/// `platform` is the requirement and the SHA-256 of the wheel pip fetches
/// (the one the lock recorded when it still names this requirement).
fn wheel_entry(
    session: &Session<'_>,
    w: &resolve::WheelPick,
    release: &ReleaseId,
    platform: Platform,
    same_release: Option<&ProjectLock>,
) -> Result<LockedSource> {
    let requirement = w.pip_requirement()?;
    session
        .report
        .event(&Event::LockingWheel { release, platform });
    let recorded = same_release
        .and_then(|o| o.platform.get(platform.as_str()))
        .and_then(|s| match s {
            LockedSource::Pip { pip, sha256, .. } if *pip == requirement => Some(sha256),
            _ => None,
        });
    let (wheel, sha256) = pip_wheel(session, &requirement, release, platform, recorded)?;
    Ok(LockedSource::Pip {
        pip: requirement,
        wheel,
        sha256,
        size: None,
        url: None,
    })
}

/// A catalog archive's lock entry, with `sha` (one of its published hashes).
fn catalog_entry(a: &catalog::Archive, sha: &Sha256Hex) -> LockedSource {
    LockedSource::Catalog {
        url: a.urls(None).swap_remove(0),
        path: (!catalog::is_absolute_url(&a.path)).then(|| a.path.clone()),
        sha256: sha.clone(),
        size: a.size,
    }
}

/// The wheel `requirement` names for `platform`, and its SHA-256: the one
/// in the download cache when an earlier `lock` kept it (the one of the
/// SHA-256 `recorded` in the lock first), else fetched with the user's pip
/// and kept there (`catalog::download::keep`), so that `cache` and `du`
/// count it and the `install` that follows uses it instead of fetching it
/// again.
///
/// # Errors
/// pip failing ([`catalog::pip::download`]), or the cache not writable.
fn pip_wheel(
    session: &Session<'_>,
    requirement: &PipRequirement,
    release: &ReleaseId,
    platform: Platform,
    recorded: Option<&Sha256Hex>,
) -> Result<(String, Sha256Hex)> {
    let url = format!("pip:{requirement}");
    let home = session.home;
    let mut found = None;
    if let Some(h) = recorded {
        found = download::find_kept(home, &url, platform, Some(h))?;
    }
    if found.is_none() {
        found = download::find_kept(home, &url, platform, None)?;
    }
    if let Some((got, rec)) = found {
        session
            .report
            .event(&Event::LockWheelCached { name: &rec.name });
        return Ok((rec.name, got.sha256));
    }
    session
        .report
        .event(&Event::LockFetchingWheel { requirement });
    let tmp = catalog::pip::download_folder(home)?;
    let python = catalog::pip::python(session.env);
    let file = catalog::pip::download(
        &python,
        requirement,
        tmp.path(),
        session.report.pip_output(),
        None,
    )?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let identity = download::Identity {
        version: &release.version,
        cuda: &release.cuda,
        platform,
        flavour: release.flavour,
    };
    let (_, sha, size) = download::keep(home, &file, &name, &url, identity)?;
    session
        .report
        .event(&Event::LockWheelKept { name: &name, size });
    Ok((name, sha))
}

/// The lock entry for the platform the installed release `r` is built
/// for: the source its receipt records, so that `install --locked` finds
/// exactly these bytes — the catalog archive with its SHA-256 (downloaded,
/// or a local file with a published hash), or the wheel's exact pip
/// requirement and SHA-256 ([`crate::store::Source::exact_pip_requirement`]).
///
/// # Errors
/// [`Kind::Conflict`] for a release imported from a local archive or folder
/// that no catalog archive or pip requirement gives back: locking other
/// bytes would not describe what is installed.
fn installed_source(
    session: &Session<'_>,
    cat: &Catalog,
    r: &Release,
    again: &CommandLine,
) -> Result<LockedSource> {
    let s = &r.receipt.source;
    let id = r.release_id();
    if let Some(sha) = &s.sha256
        && let Some(a) = cat.archives().iter().find(|a| {
            a.version == id.version
                && a.cuda == id.cuda
                && a.platform == r.platform()
                && a.hashes.iter().any(|h| &h.sha256 == sha)
        })
    {
        return Ok(catalog_entry(a, sha));
    }
    let is_wheel = s.kind == Shape::Wheel || s.dist.is_some();
    if let Some(sha) = &s.sha256 {
        if is_wheel {
            return wheel_source(session, cat, r, sha, again);
        }
        let (_, is_file) = s.reinstall_arg(&r.id());
        if let Some(url) = s
            .from
            .url()
            .filter(|u| !is_file && catalog::is_absolute_url(u))
        {
            return Ok(LockedSource::Catalog {
                url: url.to_string(),
                path: url
                    .strip_prefix(catalog::NVIDIA_BASE_URL)
                    .map(str::to_string),
                sha256: sha.clone(),
                size: (s.size > 0).then_some(s.size),
            });
        }
    }
    Err(not_fetchable(session, cat, r, is_wheel, again))
}

/// The lock entry of an installed wheel: its exact requirement, from what
/// the wheel is (its METADATA, recorded at install), never from a name the
/// file was given; refused when PyPI publishes other bytes for it, or when
/// the receipt does not say which requirement gives it back.
fn wheel_source(
    session: &Session<'_>,
    cat: &Catalog,
    r: &Release,
    sha: &Sha256Hex,
    again: &CommandLine,
) -> Result<LockedSource> {
    let s = &r.receipt.source;
    let id = r.release_id();
    let render = |c: CommandLine| session.printed(c);
    let (Some(pip), Some(wheel)) = (
        s.exact_pip_requirement(&id.version),
        s.wheel_file_name(&id.version),
    ) else {
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "cuDNN {} is installed here from the wheel file '{}', whose name does not say which pip requirement gives it back (its receipt, from an older cudnnm, does not record the wheel's METADATA); a lock of a guessed requirement could name other bytes",
                r.id(),
                s.name
            ),
        )
        .hint(format!(
            "reinstall it from PyPI by name with {}, then run `{}` again",
            pip_reinstall(r, cat, &render),
            render(again.clone())
        )));
    };
    let published = cat.wheel_hashes(pip.package().as_str(), &id.version, r.platform());
    if !published.is_empty() && !published.contains(&sha) {
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "cuDNN {} is installed here from '{}' with SHA-256 {sha}, but the wheel PyPI publishes for {pip} on {} has SHA-256 {}; a lock of the installed bytes names a file pip never fetches",
                r.id(),
                s.name,
                r.platform(),
                published
                    .iter()
                    .map(|h| h.as_str())
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        )
        .hint(format!(
            "reinstall it from the PyPI requirement with `{}`, then run `{}` again",
            render(CommandLine::install(format!("pip:{pip}")).force()),
            render(again.clone())
        )));
    }
    if published.is_empty() && !fetched_by_pip(s) {
        session.report.event(&Event::LocalWheelLocked {
            platform: r.platform(),
            sha,
            file: &s.name,
            requirement: &pip,
        });
    }
    Ok(LockedSource::Pip {
        pip,
        wheel,
        sha256: sha.clone(),
        size: None,
        url: None,
    })
}

/// The refusal to lock an installed release imported from a local archive
/// or folder that no catalog archive or pip requirement gives back, with
/// how to install it from a source another machine can fetch.
fn not_fetchable(
    session: &Session<'_>,
    cat: &Catalog,
    r: &Release,
    is_wheel: bool,
    again: &CommandLine,
) -> Error {
    let s = &r.receipt.source;
    let render = |c: CommandLine| session.printed(c);
    let what = if s.sha256.is_some() {
        "the local archive"
    } else {
        "the local folder"
    };
    // A wheel's files (a wheel's dist-info, or the JIT package's layout):
    // the package they came from, never the catalog's other package.
    let reinstall = if is_wheel || package_of(r).is_some() {
        format!(
            "install it from PyPI with {} and run `{}` again, or ",
            pip_reinstall(r, cat, &render),
            render(again.clone())
        )
    } else {
        let offers = offer::offers_from(cat, r.platform(), session.env.platform());
        match r
            .id()
            .parse::<Spec>()
            .ok()
            .and_then(|exact| offer::advise(&offers, &exact, None).command())
        {
            Some(c) => format!(
                "install it from there with `{}` and run `{}` again, or ",
                render(c.force()),
                render(again.clone())
            ),
            None => String::new(),
        }
    };
    Error::new(
        Kind::Conflict,
        format!(
            "cuDNN {} is installed here from {what} '{}', which no catalog archive or pip requirement gives back; a lock of other bytes would not describe it",
            r.id(),
            s.name
        ),
    )
    .hint(format!(
        "a lock records bytes another machine can fetch: {reinstall}lock without it (`{}`, then `{}` locks the catalog's pick)",
        render(CommandLine::uninstall(r.id())),
        render(again.clone())
    ))
}

/// The PyPI package release `r`'s files came from, when that is known: the
/// wheel's own METADATA (recorded at install), else the JIT package's
/// layout (cuDNN 9's runtime-compiled engines without the precompiled
/// ones, which only `nvidia-cudnn-jit-cuNN` ships that way).
fn package_of(r: &Release) -> Option<String> {
    if let Some(d) = &r.receipt.source.dist {
        return Some(d.project());
    }
    let has = |part: &str| {
        r.receipt
            .files
            .iter()
            .any(|f| f.path.rsplit('/').next().is_some_and(|n| n.contains(part)))
    };
    (has("cudnn_engines_runtime_compiled") && !has("cudnn_engines_precompiled"))
        .then(|| format!("nvidia-cudnn-jit-cu{}", r.cuda().major()))
}

/// The `install pip:… --force` that gives release `r` back from PyPI, in
/// backquotes: from the package its files came from ([`package_of`]), else
/// both packages cuDNN 9 is published as, saying which is which. `install
/// pip:` takes an exact version: a release known only by its headers
/// (9.12.0) gets the one version the catalog lists for that package with
/// those three numbers, else the command with the build number to fill in
/// from `pip index versions`.
fn pip_reinstall(r: &Release, cat: &Catalog, render: &dyn Fn(CommandLine) -> String) -> String {
    let v = r.version();
    let cmd = |package: &str| {
        let full: Vec<&crate::version::Version> = match v.build() {
            Some(_) => vec![v],
            None => cat
                .wheels()
                .iter()
                .filter(|w| crate::version::python_name(&w.package, '-') == package)
                .flat_map(|w| &w.versions)
                .filter(|x| x.triple() == *v)
                .collect(),
        };
        match full.as_slice() {
            [one] => format!(
                "`{}`",
                render(CommandLine::install(format!("pip:{package}=={one}")).force())
            ),
            _ => format!(
                "`{}` (`pip index versions {package}` lists the build numbers N)",
                render(CommandLine::install(format!("pip:{package}=={v}.N")).force())
            ),
        }
    };
    match package_of(r) {
        Some(p) => cmd(&p),
        None => {
            let major = r.cuda().major();
            format!(
                "{} (the full package) or {} (the JIT-only package) — cudnnm cannot tell which one its files came from",
                cmd(&format!("nvidia-cudnn-cu{major}")),
                cmd(&format!("nvidia-cudnn-jit-cu{major}"))
            )
        }
    }
}

/// Whether the installed bytes of release `r` are ones another machine can
/// fetch, so that locking them (`cudnnm lock`) is worth suggesting: a
/// catalog archive's published hash; a downloaded archive's URL; a wheel
/// whose hash is the one the catalog says PyPI publishes for its
/// requirement, or, where the catalog tells none, a wheel pip fetched.
pub fn reproducible(cat: &crate::catalog::Catalog, r: &crate::store::Release) -> bool {
    let s = &r.receipt.source;
    let id = r.release_id();
    let Some(sha) = &s.sha256 else {
        return false;
    };
    if cat.archives().iter().any(|a| {
        a.version == id.version
            && a.cuda == id.cuda
            && a.platform == r.platform()
            && a.hashes.iter().any(|h| &h.sha256 == sha)
    }) {
        return true;
    }
    if s.kind == crate::shape::Shape::Wheel || s.dist.is_some() {
        let Some(pip) = s.exact_pip_requirement(&id.version) else {
            return false;
        };
        let published = cat.wheel_hashes(pip.package().as_str(), &id.version, r.platform());
        return if published.is_empty() {
            fetched_by_pip(s)
        } else {
            published.contains(&sha)
        };
    }
    let (_, is_file) = s.reinstall_arg(&r.id());
    !is_file && s.from.url().is_some_and(crate::catalog::is_absolute_url)
}

/// Whether pip fetched the installed wheel (`install pip:REQ`), rather
/// than the user giving a local file.
pub fn fetched_by_pip(s: &crate::store::Source) -> bool {
    s.from.is_pip()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::ops::testing::{Fixture, folder};
    use crate::store::{Provenance, Source};

    fn sha(c: char) -> Sha256Hex {
        Sha256Hex::parse(&c.to_string().repeat(64)).unwrap()
    }

    #[test]
    fn without_a_pin_there_is_nothing_to_lock() {
        let f = Fixture::new();
        let e = lock(&f.session(), &Request::default()).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert!(e.message().starts_with("no .cudnn-version in"), "{e}");
    }

    #[test]
    fn an_installed_catalog_archive_is_locked_by_its_published_hash() {
        let f = Fixture::new();
        // The catalog's archive of 9.1.0.70 for CUDA 12 on Linux x86-64.
        let published =
            Sha256Hex::parse("fdc6d6f28217b82c400adfdae8f0364fa36c5fb6cb683933e8900a748e70b263")
                .unwrap();
        f.release(
            "9.1.0.70",
            "12",
            Source {
                kind: Shape::Redist,
                name: "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz".into(),
                sha256: Some(published.clone()),
                size: 1,
                from: Provenance::Local,
                dist: None,
            },
        );
        std::fs::write(f.root().join(crate::pin::PIN_FILE), "9.1\n").unwrap();
        let req = Request {
            platforms: vec!["linux-x86_64".into()],
            ..Default::default()
        };
        let done = lock(&f.session(), &req).unwrap();
        assert_eq!(done.release, "9.1.0.70_cuda12");
        assert!(done.changed);
        assert!(
            done.platforms.contains(&"linux-x86_64".to_string()),
            "{done:?}"
        );
        let written = ProjectLock::read(std::path::Path::new(&done.path))
            .unwrap()
            .unwrap();
        assert_eq!(
            written
                .source(Platform::LinuxX86_64)
                .map(LockedSource::sha256),
            Some(&published)
        );
        // Again: nothing changes.
        assert!(!lock(&f.session(), &req).unwrap().changed);
        assert!(f.events().iter().any(|e| e.starts_with("LockingInstalled")));
    }

    #[test]
    fn a_release_from_a_local_folder_is_not_locked() {
        let f = Fixture::new();
        f.release("9.1.0.70", "12", folder("my-cudnn"));
        std::fs::write(f.root().join(crate::pin::PIN_FILE), "9.1\n").unwrap();
        let req = Request {
            platforms: vec!["linux-x86_64".into()],
            ..Default::default()
        };
        let e = lock(&f.session(), &req).unwrap_err();
        assert_eq!(e.kind(), Kind::Conflict);
        assert!(
            e.message().contains("from the local folder 'my-cudnn'"),
            "{e}"
        );
        assert!(!f.root().join(lockfile::LOCK_FILE).exists());
    }

    #[test]
    fn bytes_another_machine_can_fetch_are_reproducible_a_local_file_is_not() {
        let f = Fixture::new();
        let cat = Catalog::embedded();
        // A folder has no hash: nothing to lock.
        assert!(!reproducible(
            &cat,
            &f.release("9.1.0.70", "12", folder("x"))
        ));
        // A downloaded archive: its URL gives the bytes back.
        let url = Source {
            kind: Shape::Redist,
            name: "cudnn-linux-x86_64-9.1.1.17_cuda12-archive.tar.xz".into(),
            sha256: Some(sha('a')),
            size: 10,
            from: Provenance::Url("https://mirror.example/cudnn.tar.xz".into()),
            dist: None,
        };
        assert!(reproducible(
            &cat,
            &f.release("9.1.1.17", "12", url.clone())
        ));
        // The same archive given as a local file, with no published hash.
        let local = Source {
            from: Provenance::Local,
            ..url
        };
        assert!(!reproducible(&cat, &f.release("9.2.0.82", "12", local)));
    }

    #[test]
    fn a_wheel_pip_fetched_is_reproducible_when_no_hash_is_published() {
        let f = Fixture::new();
        let cat = Catalog::embedded();
        let wheel = |pip: Option<&str>| Source {
            kind: Shape::Wheel,
            name: "nvidia_cudnn_cu12-9.3.0.75-py3-none-manylinux2014_x86_64.whl".into(),
            sha256: Some(sha('b')),
            size: 10,
            from: pip.map_or(Provenance::Local, |r| Provenance::Pip(r.parse().unwrap())),
            dist: None,
        };
        assert!(fetched_by_pip(&wheel(Some("nvidia-cudnn-cu12==9.3.0.75"))));
        assert!(!fetched_by_pip(&wheel(None)));
        let by_pip = f.release("9.3.0.75", "12", wheel(Some("nvidia-cudnn-cu12==9.3.0.75")));
        let published = cat.wheel_hashes("nvidia-cudnn-cu12", by_pip.version(), by_pip.platform());
        // Where the catalog tells PyPI's hash, only those bytes count.
        assert_eq!(reproducible(&cat, &by_pip), published.is_empty());
    }
}
