//! `install [SPEC|PATH|pip:REQ]`: a release imported into the store from a
//! local archive or folder, from the user's own pip (`pip`), or from the
//! catalog (`catalog`, an archive unpacked while it downloads: `stream`).
//! Without an argument, what applies here (the pin, then the default),
//! exactly as `.cudnn-version.lock` beside the pin records it when there is
//! one (`here`). Every path runs the import under the home lock after
//! recovering what a crash left, and refuses, before anything is
//! downloaded, a release the GPUs in use cannot run (unless forced).

use std::path::PathBuf;

use serde::Serialize;

use super::gpu::GpuGate;
use super::list::InstalledRelease;
use super::{Event, Session};
use crate::archive::{self, ImportRequest, Outcome};
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::pin::SpecSource;
use crate::progress::Progress;
use crate::store::{Release, Store};
use crate::version::{CudaVariant, Platform, Spec};

mod catalog;
mod here;
mod index;
pub(crate) use index::{IndexedPick, pick as pick_through_index};
mod pip;
mod stream;

/// What `install` is asked.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// A catalog spec, a local archive or folder, or `pip:REQUIREMENT`;
    /// `None`: what applies here, as locked.
    pub what: Option<String>,
    /// Without `what`: fail unless the lock exists and satisfies the pin.
    pub locked: bool,
    /// The CUDA the release is built for (`--cuda`).
    pub cuda: Option<CudaVariant>,
    /// The expected SHA-256 of the archive.
    pub sha256: Option<Sha256Hex>,
    /// Reinstall; import despite a name/header version disagreement; a
    /// release the GPUs cannot run.
    pub force: bool,
    /// The platform to download for, as given (`--platform`): parsed only
    /// by a catalog install; ignored, with a warning, for the others
    /// [default: this machine's].
    pub platform: Option<String>,
    /// Base URL replacing NVIDIA's download server.
    pub mirror: Option<String>,
    /// The package index wheels come from (`--index-url`; else
    /// [`crate::catalog::index::setting::effective`]'s order).
    pub index_url: Option<String>,
    /// Install a catalog archive that has no published SHA-256 without checking it.
    pub allow_unverified: bool,
    /// The session's home is the system store, which every user must reach.
    pub system: bool,
    /// `--for`: install the release the frameworks of a Python environment
    /// choose ([`super::frameworks::pick`]) instead of `what`.
    pub for_: Option<super::frameworks::For>,
}

/// What an import found the store to hold afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImportStatus {
    /// A new release is in the store.
    Installed,
    /// `--force` replaced an installed release.
    Reinstalled,
    /// The import found the release installed; nothing changed.
    AlreadyInstalled,
}

impl ImportStatus {
    /// `installed`, `reinstalled`, `already-installed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ImportStatus::Installed => "installed",
            ImportStatus::Reinstalled => "reinstalled",
            ImportStatus::AlreadyInstalled => "already-installed",
        }
    }
}

/// Why a release asked for counted as installed without an import.
#[derive(Clone, Debug, PartialEq)]
pub enum AlreadyWhy {
    /// It is the catalog's pick for `spec`.
    CatalogPick {
        /// The spec.
        spec: Spec,
        /// When it came from another PyPI package than the catalog's wheel
        /// (the JIT-only package): that package, the catalog's, and the
        /// requirement that installs the catalog's instead.
        other_package: Option<OtherPackage>,
    },
    /// An exact pip requirement (`pip:nvidia-cudnn-cu12==9.27.0.42`) names it.
    Requirement(String),
    /// It is the newest installed match of the spec that applies here.
    MatchesPin {
        /// The spec.
        spec: Spec,
        /// Where it came from.
        source: SpecSource,
    },
    /// It holds the bytes the lock file records.
    AsLocked(PathBuf),
}

/// An installed release from another PyPI package than the catalog's.
#[derive(Clone, Debug, PartialEq)]
pub struct OtherPackage {
    /// The package it came from (`nvidia-cudnn-jit-cu12`).
    pub installed_from: String,
    /// The catalog's package (`nvidia-cudnn-cu12`).
    pub catalog: String,
    /// The requirement that installs the catalog's (`nvidia-cudnn-cu12==9.27.0.42`).
    pub requirement: String,
}

/// What `install` did.
#[derive(Debug)]
pub enum Installed {
    /// An import ran.
    Imported {
        /// What it found and did.
        status: ImportStatus,
        /// The release in the store.
        release: Box<InstalledRelease>,
        /// How many files it has.
        files: usize,
    },
    /// The release was installed already; nothing ran.
    Already {
        /// Its id.
        release: String,
        /// Its folder.
        dir: PathBuf,
        /// Why it counts.
        why: AlreadyWhy,
    },
}

impl Serialize for Installed {
    /// `{"status": …, "release": …}`: the release as `list --json` prints
    /// it after an import, its id when nothing ran.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(untagged)]
        enum Which<'a> {
            View(&'a InstalledRelease),
            Id(&'a str),
        }
        #[derive(Serialize)]
        struct Json<'a> {
            status: ImportStatus,
            release: Which<'a>,
        }
        match self {
            Installed::Imported {
                status, release, ..
            } => Json {
                status: *status,
                release: Which::View(release),
            },
            Installed::Already { release, .. } => Json {
                status: ImportStatus::AlreadyInstalled,
                release: Which::Id(release),
            },
        }
        .serialize(s)
    }
}

impl Installed {
    /// Nothing ran: `r` counts as installed because of `why`.
    fn already(r: &Release, why: AlreadyWhy) -> Installed {
        Installed::Already {
            release: r.id(),
            dir: r.dir.clone(),
            why,
        }
    }
}

/// Installs what `req` names; see the module documentation. The first
/// release a home holds becomes its default when it has none (as fnm, nvm
/// and rustup do): the returned release then says `default`. The
/// modulefile folders the home remembers are refreshed.
///
/// # Errors
/// A bad argument, a `--for` no release can satisfy, a source that cannot be read or fetched, bytes that are
/// not what was expected ([`Kind::Integrity`]), a release the GPUs cannot
/// run ([`Kind::Conflict`]), or a store that cannot be written.
pub fn install(session: &Session<'_>, req: &Request) -> Result<Installed> {
    let mut done = install_any(session, req)?;
    first_default(session, &mut done);
    if let Installed::Imported {
        status: ImportStatus::Installed | ImportStatus::Reinstalled,
        ..
    } = done
    {
        super::export::refresh(session);
    }
    Ok(done)
}

/// Makes a newly installed release the home's default when the home has
/// none and holds no other release. Not for the system home: what every
/// user gets is the administrator's choice (`default --system`). A default
/// that cannot be recorded is a warning: the release is installed either way.
fn first_default(session: &Session<'_>, done: &mut Installed) {
    let Installed::Imported {
        status: ImportStatus::Installed,
        release,
        ..
    } = done
    else {
        return;
    };
    if session.home.is_system() {
        return;
    }
    let store = Store::new(session.home);
    let others = store
        .releases()
        .map(|all| {
            all.iter()
                .any(|r| r.id() != release.id && r.dir.starts_with(store.root()))
        })
        .unwrap_or(true);
    if others || !matches!(session.home.config(), Ok(c) if c.default.is_none()) {
        return;
    }
    let made = release
        .id
        .parse::<Spec>()
        .and_then(|spec| super::default::set_first(session, &spec));
    match made {
        Ok(_) => release.default = true,
        Err(e) => session.report.event(&Event::Warning(&format!(
            "could not make cuDNN {} the default: {e}",
            release.id
        ))),
    }
}

/// [`install`] without the first default.
fn install_any(session: &Session<'_>, req: &Request) -> Result<Installed> {
    let chosen;
    let req = match &req.for_ {
        Some(f) => {
            let pick = super::frameworks::pick(session, f, None)?;
            chosen = Request {
                what: Some(pick.install_arg()),
                for_: None,
                ..req.clone()
            };
            &chosen
        }
        None => req,
    };
    if req.system {
        // Every user must be able to reach the system store.
        session.home.ensure()?;
        crate::fsops::make_shared(session.home.root())?;
    }
    // The GPUs are read once, here (never by `env`, `exec` or the hooks).
    let gate = std::sync::Arc::new(GpuGate::read(session));
    let admit = {
        let (gate, force) = (gate.clone(), req.force);
        archive::Admit(std::sync::Arc::new(move |v, c| {
            gate.check(v, c, force, "install")
        }))
    };
    let base = ImportRequest {
        cuda: req.cuda,
        expected_sha256: req.sha256.clone(),
        force: req.force,
        admit: Some(admit),
        ..Default::default()
    };
    let Some(what) = req.what.as_deref() else {
        return here::install_here(session, req, base, &gate);
    };
    let path = session.env.cwd().join(what);
    let exists = std::fs::symlink_metadata(&path).is_ok();
    if what.starts_with("pip:") || exists {
        for (given, flag) in [
            (req.platform.is_some(), "--platform"),
            (req.allow_unverified, "--allow-unverified"),
        ] {
            if given {
                session.report.event(&Event::IgnoredForLocal { flag, what });
            }
        }
    }
    if let Some(requirement) = what.strip_prefix("pip:") {
        // Only NAME==VERSION of a cuDNN package, refused before pip runs.
        return pip::install_pip(session, &requirement.parse()?, base, &gate);
    }
    if exists {
        refuse_folder_of_wheels(&path, session.env.is_windows())?;
        let published_sha256 = published_wheel(session, &path);
        return import_file(
            session,
            ImportRequest {
                source: path,
                published_sha256,
                ..base
            },
        );
    }
    if looks_like_path(what) {
        return Err(Error::new(
            Kind::NotFound,
            format!("no such file or folder '{}'", path.display()),
        )
        .hint("check the path; to install from the catalog give a version such as 8.1.0.77"));
    }
    let spec: Spec = what.parse().map_err(|e: Error| {
        Error::new(Kind::Usage, format!("'{what}' is neither a file nor a cuDNN version spec"))
            .cause(e.message().to_string())
            .hint("give a spec (8.1.0.77, 9.10.x, >=9.1,<9.11, latest, latest_cuda12), an archive path (./cudnn-….zip), or pip:nvidia-cudnn-cu12==9.1.0.70")
    })?;
    catalog::install_catalog(session, req, spec, base, &gate)
}

/// Test hook (debug builds only): with `CUDNNM_TEST_PAUSE_AFTER_DOWNLOAD`
/// set, waits between the download and the import, before the home lock is
/// taken, while the file `CUDNNM_TEST_PAUSE_FILE` exists.
fn pause_after_download(session: &Session<'_>) {
    if cfg!(debug_assertions)
        && session
            .env
            .var(crate::env::CUDNNM_TEST_PAUSE_AFTER_DOWNLOAD)
            .is_some()
        && let Some(f) = session.env.var(crate::env::CUDNNM_TEST_PAUSE_FILE)
    {
        crate::interrupt::test_pause(std::path::Path::new(&f));
    }
}

/// `--platform`, else the host's.
fn platform_of(req: &Request) -> Result<Platform> {
    match &req.platform {
        Some(p) => p.parse(),
        None => Platform::host().ok_or_else(|| {
            Error::new(
                Kind::Usage,
                "cuDNN is not published for this machine's platform",
            )
            .hint("pass --platform")
        }),
    }
}

/// A folder holding wheels is not a release: name them and how one installs.
///
/// # Errors
/// [`Kind::Usage`] when `path` is a folder with `.whl` files at its top and
/// no `include` folder (what an unpacked release has).
fn refuse_folder_of_wheels(path: &std::path::Path, windows: bool) -> Result<()> {
    let Ok(rd) = std::fs::read_dir(path) else {
        return Ok(());
    };
    if path.join("include").is_dir() {
        return Ok(());
    }
    let mut wheels: Vec<String> = rd
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| n.ends_with(".whl"))
        .collect();
    if wheels.is_empty() {
        return Ok(());
    }
    wheels.sort();
    let n = wheels.len();
    let example = crate::command::CommandLine::install_path(path.join(&wheels[n - 1]));
    Err(Error::new(
        Kind::Usage,
        format!(
            "'{}' holds {} wheel{}, not one cuDNN release",
            path.display(),
            n,
            if n == 1 { "" } else { "s" }
        ),
    )
    .cause(format!(
        "wheels: {}{}",
        wheels
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join(", "),
        if n > 10 {
            format!(" and {} more", n - 10)
        } else {
            String::new()
        }
    ))
    .hint(format!(
        "install one wheel at a time, e.g. `{}`",
        example.for_host(windows)
    )))
}

/// Whether an argument that names no file was meant as a path (a
/// separator, an archive's extension) rather than a spec.
fn looks_like_path(s: &str) -> bool {
    s.contains('/')
        || s.contains('\\')
        || [".zip", ".whl", ".tgz", ".tar.gz", ".tar.xz", ".tar"]
            .iter()
            .any(|e| s.ends_with(e))
}

/// Imports the archive or folder `req.source` ([`archive::import`]).
/// The SHA-256 PyPI publishes for a wheel of `path`'s file name, as the
/// catalog records it (`manifest.toml`'s `[[wheel]]` rows, read from PyPI's
/// file lists); `None` for other files, or when no catalog can be read.
fn published_wheel(session: &Session<'_>, path: &std::path::Path) -> Option<Sha256Hex> {
    let name = path.file_name()?.to_str()?;
    if !name.ends_with(".whl") {
        return None;
    }
    let catalog = crate::catalog::Catalog::load(session.home).ok()?;
    catalog.wheel_named(name).map(|f| f.sha256.clone())
}

fn import_file(session: &Session<'_>, req: ImportRequest) -> Result<Installed> {
    import_with(session, req, |store, req, progress| {
        archive::import(store, req, progress)
    })
}

/// Runs `import` under the guard (the home lock, after what a crash left
/// is finished or undone) on the store with its test hooks, telling the import which releases are
/// deployed; reports its warnings and notes.
fn import_with(
    session: &Session<'_>,
    mut req: ImportRequest,
    import: impl FnOnce(&Store, &ImportRequest, &dyn Progress) -> Result<archive::Imported>,
) -> Result<Installed> {
    let guard = session.guard()?;
    let store = guard.store_for_import();
    for d in crate::deploy::Deployments::load(session.home)?.entries {
        req.deployed
            .entry(d.release.to_string())
            .or_default()
            .push(d.toolkit.display().to_string());
    }
    let imported = import(&store, &req, session.report.progress())?;
    for w in &imported.warnings {
        session.report.event(&Event::Warning(w));
    }
    if let Outcome::Installed(r) | Outcome::Reinstalled(r) = &imported.outcome {
        super::frameworks::report_advisories(session, r.version(), r.cuda());
    }
    for n in &imported.notes {
        session.report.event(&Event::Note(n));
    }
    let status = match &imported.outcome {
        Outcome::Installed(_) => ImportStatus::Installed,
        Outcome::Reinstalled(_) => ImportStatus::Reinstalled,
        Outcome::AlreadyInstalled(_) => ImportStatus::AlreadyInstalled,
    };
    let r = imported.outcome.release();
    Ok(Installed::Imported {
        status,
        release: Box::new(InstalledRelease::new(r, &store, Vec::new(), false, false)),
        files: r.receipt.files.len(),
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::hash::Sha256Hex;
    use crate::ops::testing::{Fixture, folder};
    use crate::pin::lockfile::{self, LockedSource, ProjectLock};
    use crate::shape::Shape;
    use crate::store::Source;

    fn ask(what: Option<&str>) -> Request {
        Request {
            what: what.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn a_missing_path_and_a_word_that_is_no_spec_are_told_apart() {
        let f = Fixture::new();
        let e = install(&f.session(), &ask(Some("./cudnn-9.zip"))).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert!(e.message().starts_with("no such file or folder"), "{e}");
        let e = install(&f.session(), &ask(Some("newest-please"))).unwrap_err();
        assert_eq!(e.kind(), Kind::Usage);
        assert!(
            e.message()
                .contains("neither a file nor a cuDNN version spec"),
            "{e}"
        );
    }

    #[test]
    fn catalog_flags_given_with_a_local_folder_are_ignored_with_a_warning() {
        let f = Fixture::new();
        std::fs::create_dir(f.root().join("not-cudnn")).unwrap();
        let req = Request {
            platform: Some("no-such-platform".into()),
            allow_unverified: true,
            ..ask(Some("not-cudnn"))
        };
        // The folder is no release: the import refuses it, never the flag.
        let e = install(&f.session(), &req).unwrap_err();
        assert_ne!(e.message(), "no-such-platform");
        let events = f.events();
        assert!(
            events[0].contains("IgnoredForLocal { flag: \"--platform\""),
            "{events:?}"
        );
        assert!(events[1].contains("--allow-unverified"), "{events:?}");
    }

    #[test]
    fn an_exact_requirement_of_an_installed_release_runs_no_pip() {
        let f = Fixture::new();
        f.release("9.27.0.42", "12", folder("a"));
        let done = install(&f.session(), &ask(Some("pip:nvidia-cudnn-cu12==9.27.0.42"))).unwrap();
        let Installed::Already { release, why, .. } = &done else {
            panic!("{done:?}")
        };
        assert_eq!(release, "9.27.0.42_cuda12");
        assert_eq!(
            why,
            &AlreadyWhy::Requirement("pip:nvidia-cudnn-cu12==9.27.0.42".into())
        );
        assert_eq!(
            serde_json::to_value(&done).unwrap(),
            serde_json::json!({"status": "already-installed", "release": "9.27.0.42_cuda12"})
        );
    }

    #[test]
    fn a_bare_install_of_an_installed_pin_is_a_no_op_naming_the_pin() {
        let f = Fixture::new();
        let e = install(&f.session(), &ask(None)).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        f.release("9.1.0.70", "12", folder("a"));
        std::fs::write(f.root().join(crate::pin::PIN_FILE), "9.1\n").unwrap();
        let Installed::Already { why, .. } = install(&f.session(), &ask(None)).unwrap() else {
            panic!("not a no-op")
        };
        assert!(matches!(why, AlreadyWhy::MatchesPin { .. }), "{why:?}");
        // --locked wants a lock beside the pin.
        let locked = Request {
            locked: true,
            ..ask(None)
        };
        let e = install(&f.session(), &locked).unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity);
        assert!(
            e.message()
                .starts_with("install --locked: there is no lock file"),
            "{e}"
        );
    }

    /// A lock beside the pin naming 9.1.0.70_cuda12 for this platform with `sha`.
    fn lock_with(f: &Fixture, sha: &Sha256Hex) {
        std::fs::write(f.root().join(crate::pin::PIN_FILE), "9.1\n").unwrap();
        let lock = ProjectLock {
            pin: "9.1".parse().unwrap(),
            release: "9.1.0.70_cuda12".parse().unwrap(),
            platform: [(
                Platform::host().unwrap().as_str().to_string(),
                LockedSource::Catalog {
                    url: "https://example.invalid/cudnn.tar.xz".into(),
                    path: None,
                    sha256: sha.clone(),
                    size: None,
                },
            )]
            .into(),
        };
        let path = lockfile::lock_path(&f.root().join(crate::pin::PIN_FILE));
        std::fs::write(path, lock.to_text()).unwrap();
    }

    fn archive(sha: &Sha256Hex) -> Source {
        Source {
            kind: Shape::Redist,
            name: "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz".into(),
            sha256: Some(sha.clone()),
            size: 1,
            from: crate::store::Provenance::Local,
            dist: None,
        }
    }

    #[test]
    fn a_locked_release_installed_from_other_bytes_is_refused() {
        let f = Fixture::new();
        let locked = Sha256Hex::parse(&"a".repeat(64)).unwrap();
        let other = Sha256Hex::parse(&"b".repeat(64)).unwrap();
        f.release("9.1.0.70", "12", archive(&other));
        lock_with(&f, &locked);
        let e = install(&f.session(), &ask(None)).unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity);
        assert!(
            e.message().contains(&format!(
                "is installed from an archive with SHA-256 {other}"
            )),
            "{e}"
        );
        // Nothing is installed: no "installing" line before the refusal.
        let events = f.events();
        assert!(
            !events.iter().any(|e| e.starts_with("InstallingLocked")),
            "{events:?}"
        );
    }

    #[test]
    fn a_locked_release_installed_from_the_locked_bytes_is_a_no_op() {
        let f = Fixture::new();
        let locked = Sha256Hex::parse(&"a".repeat(64)).unwrap();
        f.release("9.1.0.70", "12", archive(&locked));
        lock_with(&f, &locked);
        let Installed::Already { why, .. } = install(&f.session(), &ask(None)).unwrap() else {
            panic!("not a no-op")
        };
        assert!(matches!(why, AlreadyWhy::AsLocked(_)), "{why:?}");
        // Nothing to do: no "installing … as locked" line first.
        assert_eq!(f.events(), Vec::<String>::new());
    }
}
