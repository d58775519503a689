//! `install VERSION`: pick the catalog's archive, download it into the cache
//! (or find it there) and check it against the SHA-256 values its sources
//! published, the user's `--sha256`, or nothing when unverified is allowed.

use super::{Archive, Catalog, download, effective_mirror, resolve};
use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::home::Home;
use crate::progress::Progress;
use crate::version::Version;

/// What `cudnnm install SPEC` asks the catalog for.
#[derive(Clone, Debug)]
pub struct FetchRequest {
    /// The requested release (`8.1.0.77`, `9.1`, `8.9.7.29_cuda12`).
    pub spec: crate::version::Spec,
    /// `--cuda`: the CUDA variant wanted, when given.
    pub cuda: Option<crate::version::CudaVariant>,
    /// The platform to download for (`--platform`, default the host).
    pub platform: crate::version::Platform,
    /// `--mirror` / `CUDNNM_MIRROR` / `mirror` in config: replaces NVIDIA's base URL.
    pub mirror: Option<String>,
    /// `--sha256`: the hash the user expects (needed for archives without a published hash).
    pub sha256: Option<crate::hash::Sha256Hex>,
    /// `--allow-unverified`: accept an archive with no published hash.
    pub allow_unverified: bool,
    /// The command asking, for the examples its errors give.
    pub asked_by: AskedBy,
}

/// Which command picks a release: its errors' examples repeat that command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AskedBy {
    /// `cudnnm install SPEC`.
    #[default]
    Install,
    /// `cudnnm lock` (the spec is the pin's), as the user would run it again:
    /// what reaches their home and every `--platform` they gave; an example
    /// adds only `--cuda`.
    Lock(crate::command::CommandLine),
}

impl AskedBy {
    /// The command an error's example extends (with `--cuda`): `install
    /// SPEC`, with `--platform` when the request is not for this machine;
    /// or the lock command as given.
    pub fn example(&self, req: &FetchRequest) -> crate::command::CommandLine {
        match self {
            AskedBy::Install => {
                let c = crate::command::CommandLine::install(req.spec.to_string());
                if crate::version::Platform::host() == Some(req.platform) {
                    c
                } else {
                    c.platform(req.platform)
                }
            }
            AskedBy::Lock(c) => c.clone(),
        }
    }
}

/// A downloaded (or cached) archive, verified, ready for import.
#[derive(Debug)]
pub struct Fetched {
    /// The archive in `downloads/` (named by its SHA-256, no extension).
    pub path: std::path::PathBuf,
    /// Its original file name (`cudnn-11.2-windows-x64-v8.1.0.77.zip`), which the importer reads.
    pub name: String,
    /// Its SHA-256 (verified against the catalog or `--sha256`, or computed when unverified).
    pub sha256: crate::hash::Sha256Hex,
    /// The URL it came from (for a cache hit: the URL it was first downloaded from).
    pub url: String,
    /// The catalog's CUDA variant for it.
    pub cuda: crate::version::CudaVariant,
    /// The catalog's release version.
    pub version: Version,
    /// True when the archive came from the cache without a download.
    pub cached: bool,
    /// Lines the CLI must show the user: what was not verified, catalog problems.
    pub warnings: Vec<String>,
    /// Status lines: why a newer release was passed over for this machine's GPU.
    pub notes: Vec<String>,
    /// The archive held in the cache ([`download::ArchiveHold`]): keep it
    /// until the import has read the archive, so `cache clean` leaves it.
    pub hold: download::ArchiveHold,
}

/// Resolves `req` against the catalog and downloads the archive into the
/// cache (`downloads/`, by hash), verifying SHA-256 while streaming; a cached
/// archive is not downloaded again. The mirror is `req.mirror`, else
/// `CUDNNM_MIRROR` in `env`, else `mirror` in `config.toml`.
///
/// # Errors
/// Unknown version ([`Kind::NotFound`], naming the nearest known ones), several
/// CUDA variants and none chosen ([`Kind::Usage`]), no published hash without
/// `--sha256`/`--allow-unverified` and hash mismatch ([`Kind::Integrity`]),
/// HTTP and network failures ([`Kind::Network`], with hints).
pub fn fetch(
    home: &Home,
    env: &crate::env::Env,
    req: &FetchRequest,
    progress: &dyn crate::progress::Progress,
) -> Result<Fetched> {
    let toolkits = crate::toolkit::discover(env);
    let fit = MachineFit {
        toolkits: &toolkits,
        gpu: None,
        check: &|_, _| Ok(None),
    };
    fetch_for(home, env, req, progress, &fit, &download::NoTap)
}

/// A release check run on the catalog's pick before anything is downloaded:
/// an error refuses, `Ok(Some(msg))` goes on with a warning.
pub type Check<'a> = &'a dyn Fn(&Version, &crate::version::CudaVariant) -> Result<Option<String>>;

/// What a catalog pick must fit on this machine ([`fetch_for`]).
#[derive(Clone, Copy)]
pub struct MachineFit<'a> {
    /// The toolkits to choose a CUDA build by (found, or known to the home).
    pub toolkits: &'a [crate::toolkit::Toolkit],
    /// The oldest GPU in use, whose compute capability a prefix must run on.
    pub gpu: Option<&'a crate::gpu::Gpu>,
    /// Accepts or refuses the pick before the download.
    pub check: Check<'a>,
}

/// [`fetch`] choosing among CUDA builds by `toolkits` (the ones the caller
/// picked: found on the machine or known to the home), on a machine whose
/// oldest GPU in use is `gpu`: a version prefix picks the newest release
/// that runs on it ([`resolve::select_for_gpu`]), saying in
/// [`Fetched::notes`] which newer one it passed over and why; then `check`
/// accepts or refuses the pick before the download. `tap` watches the
/// download's bytes arrive ([`download::download_tapped`]).
///
/// # Errors
/// As [`fetch`], and whatever `check` returns.
pub fn fetch_for(
    home: &Home,
    env: &crate::env::Env,
    req: &FetchRequest,
    progress: &dyn crate::progress::Progress,
    fit: &MachineFit<'_>,
    tap: &dyn download::Tap,
) -> Result<Fetched> {
    let MachineFit {
        toolkits,
        gpu,
        check,
    } = *fit;
    let catalog = Catalog::load(home)?;
    let (archive, passed_over) =
        resolve::select_for_gpu(&catalog, req, toolkits, gpu.map(|g| &g.compute))?;
    let mut warnings: Vec<String> = catalog.warnings().to_vec();
    if let Some(w) = check(&archive.version, &archive.cuda)? {
        warnings.push(w);
    }
    let mut notes = Vec::new();
    if let (Some(newer), Some(g)) = (&passed_over, gpu) {
        notes.push(passed_over_note(
            &catalog,
            &req.spec,
            (&archive.version, &archive.cuda),
            (&newer.version, &newer.cuda),
            g,
        ));
    }
    let mirror = effective_mirror(req.mirror.as_deref(), env, home)?;
    let mut fetched = fetch_archive(home, env, &archive, req, mirror.as_deref(), progress, tap)?;
    warnings.append(&mut fetched.warnings);
    fetched.warnings = warnings;
    fetched.notes = notes;
    Ok(fetched)
}

/// Why a prefix picked `picked` (version, CUDA) rather than the newer
/// `newer`: the GPU `gpu` cannot run it (the support matrix's minimum
/// compute capability, from the catalog). One line for the user.
pub fn passed_over_note(
    catalog: &Catalog,
    spec: &crate::version::Spec,
    picked: (&Version, &crate::version::CudaVariant),
    newer: (&Version, &crate::version::CudaVariant),
    gpu: &crate::gpu::Gpu,
) -> String {
    let needs = catalog.min_compute(newer.0, newer.1).map_or_else(
        || "a newer GPU".to_string(),
        |m| format!("compute capability {m} or newer"),
    );
    format!(
        "picked cuDNN {} for CUDA {}, the newest '{spec}' release that runs on {} (compute capability {}); cuDNN {} for CUDA {} needs {needs}",
        picked.0, picked.1, gpu.name, gpu.compute, newer.0, newer.1
    )
}

/// Downloads one catalog archive (or finds it in the cache) and checks it
/// against its published hashes, `req.sha256`, or nothing when
/// `req.allow_unverified`; `tap` watches the bytes arrive.
///
/// # Errors
/// As [`fetch`].
pub fn fetch_archive(
    home: &Home,
    env: &Env,
    archive: &Archive,
    req: &FetchRequest,
    mirror: Option<&str>,
    progress: &dyn Progress,
    tap: &dyn download::Tap,
) -> Result<Fetched> {
    let mut warnings = Vec::new();
    let expect: Vec<Sha256Hex> = match &req.sha256 {
        Some(h) => {
            if archive.is_verifiable() && !archive.hashes.iter().any(|p| &p.sha256 == h) {
                warnings.push(format!(
                    "--sha256 {} is not a hash any source published for {}; accepting only your value",
                    h.short(),
                    archive.name()
                ));
            }
            vec![h.clone()]
        }
        None if archive.is_verifiable() => {
            archive.hashes.iter().map(|p| p.sha256.clone()).collect()
        }
        None if req.allow_unverified => {
            warnings.push(format!(
                "NOT VERIFIED: no source published a SHA-256 for {} ({} for {}); --allow-unverified skipped the integrity check, so cudnnm cannot tell a damaged or substituted file from the genuine one",
                archive.name(),
                archive.id(),
                archive.platform
            ));
            Vec::new()
        }
        None => {
            return Err(Error::new(
                Kind::Integrity,
                format!(
                    "no published SHA-256 for {} (cuDNN {} for CUDA {}, {}); refusing to install it unverified",
                    archive.name(),
                    archive.version,
                    archive.cuda,
                    archive.platform
                ),
            )
            .hint(format!(
                "pass `--sha256 HEX` with a hash you trust for that file, or `--allow-unverified` to install it without a check (URL: {})",
                archive.urls(mirror).join(" or ")
            )));
        }
    };
    let urls = archive.locations(mirror);
    let job = download::Job {
        urls: &urls,
        name: archive.name(),
        size: archive.size,
        expect: &expect,
        identity: download::Identity {
            version: &archive.version,
            cuda: &archive.cuda,
            platform: archive.platform,
            flavour: archive.flavour,
        },
    };
    let got = download::download_tapped(home, env, &job, progress, tap)?;
    if expect.is_empty() {
        warnings.push(format!(
            "the unverified archive {} has SHA-256 {}; record it to check future installs (`--sha256 {}`)",
            archive.name(),
            got.sha256,
            got.sha256
        ));
    }
    Ok(Fetched {
        path: got.path,
        name: archive.name().to_string(),
        sha256: got.sha256,
        url: got.url,
        cuda: archive.cuda,
        version: archive.version.clone(),
        cached: got.cached,
        warnings,
        notes: Vec::new(),
        hold: got.hold,
    })
}
