//! Importing cuDNN archives into the store (`docs/architecture.md#importing`): open → recognise
//! the shape by entry names → plan the mapping to the store layout → check
//! every entry → extract into `store/.partial-*` while hashing → read the
//! version from the headers → cross-check the name and the caller → write
//! the receipt → rename into place. Any failure drops the partial folder, so
//! the store is unchanged.

pub mod entry;
pub mod header;
pub mod layout;
pub mod name;
pub mod record;
pub mod source;
pub mod zipdir;

use std::path::{Path, PathBuf};

use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::progress::Progress;
use crate::store::{self, FileRecord, Receipt, Release, Source, Store};
use crate::version::{CudaVariant, Platform, Version};
use layout::{Plan, PlanError, PlanOptions};
use source::Format;

/// What to import and what the caller already knows about it.
#[derive(Clone, Debug, Default)]
pub struct ImportRequest {
    /// The archive file or folder.
    pub source: PathBuf,
    /// The archive's original name when `source` is a cache path (downloads,
    /// pip); default: the file name of `source`.
    pub name: Option<String>,
    /// `--cuda`: the CUDA variant, when the name does not say.
    pub cuda: Option<CudaVariant>,
    /// `--sha256`: the digest the archive must have.
    pub expected_sha256: Option<Sha256Hex>,
    /// Where the archive came from (URL or `pip:` requirement), for the receipt.
    pub url: Option<String>,
    /// `--force`: reinstall, and accept a name/header version disagreement.
    pub force: bool,
    /// Releases deployed in toolkits (release id → toolkit roots), from
    /// `deployments.toml`: reinstalling one would change files under them.
    pub deployed: std::collections::BTreeMap<String, Vec<String>>,
    /// Asked once the release is identified, before anything is written to
    /// the store: an error refuses the import (the store stays as it was), a
    /// message becomes a warning (`install` refuses a release this machine's
    /// GPUs cannot run).
    pub admit: Option<Admit>,
}

/// A check on the identified release (its version and CUDA variant): an
/// error refuses the import, `Ok(Some(msg))` admits it with a warning.
#[derive(Clone)]
pub struct Admit(pub std::sync::Arc<AdmitFn>);

/// The function inside [`Admit`].
pub type AdmitFn = dyn Fn(&Version, &CudaVariant) -> Result<Option<String>> + Send + Sync;

impl std::fmt::Debug for Admit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Admit(..)")
    }
}

/// Runs `req.admit` on `id`, adding its warning to the identity's.
fn admit(req: &ImportRequest, id: &mut Identity) -> Result<()> {
    if let Some(Admit(f)) = &req.admit
        && let Some(w) = f(&id.version, &id.cuda)?
    {
        id.warnings.push(w);
    }
    Ok(())
}

/// What an import did, and anything the user should be warned about.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The result.
    pub outcome: Outcome,
    /// Warnings (e.g. a version disagreement accepted with `--force`).
    pub warnings: Vec<String>,
}

/// The result of an import.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// A new release is in the store.
    Installed(Release),
    /// `--force` replaced an installed release.
    Reinstalled(Release),
    /// The release was already installed; nothing changed.
    AlreadyInstalled(Release),
}

impl Outcome {
    /// The release concerned.
    pub fn release(&self) -> &Release {
        match self {
            Outcome::Installed(r) | Outcome::Reinstalled(r) | Outcome::AlreadyInstalled(r) => r,
        }
    }
}

/// What the headers, libraries and names together say the release is.
#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    /// The full version (build number from the name or METADATA when it agrees).
    pub version: Version,
    /// From the headers.
    pub header_version: Version,
    /// The CUDA variant.
    pub cuda: CudaVariant,
    /// The platform, from the library files.
    pub platform: Platform,
    /// Things the user should know (a forced version disagreement).
    pub warnings: Vec<String>,
}

/// Imports `req.source` into `store`. The caller holds the home lock.
///
/// # Errors
/// Each bad input gets one line naming the file and the reason, with a hint
/// ([`Kind::Integrity`] for archive content and hash problems, [`Kind::Usage`]
/// when `--cuda` is needed, I/O kinds for unreadable input or a full or
/// read-only home). The store is unchanged on every error.
pub fn import(store: &Store, req: &ImportRequest, progress: &dyn Progress) -> Result<Imported> {
    let path = &req.source;
    let name = req
        .name
        .clone()
        .or_else(|| path.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let format = source::sniff(path)?;
    let opts = PlanOptions { cuda: req.cuda };
    match format {
        Format::Zip => import_zip(store, req, &name, &opts, progress),
        Format::Dir => import_dir(store, req, &name, &opts, progress),
        Format::TarGz | Format::TarXz | Format::Tar => {
            import_tar(store, req, &name, format, &opts, progress)
        }
    }
}

fn import_zip(
    store: &Store,
    req: &ImportRequest,
    name: &str,
    opts: &PlanOptions,
    progress: &dyn Progress,
) -> Result<Imported> {
    let path = &req.source;
    let zip = source::ZipSource::open(path)?;
    let plan = plan_or_explain(path, zip.entries(), opts, false, |p| zip.read_text(p))?;
    let header_text = first_version_header(path, &plan, |p| zip.read_text(p))?;
    let metadata = match &plan.metadata {
        Some(m) => Some(zip.read_text(m)?),
        None => None,
    };
    // The platform needs library bytes; a zip's DLL/ELF names decide it up front.
    let platform_hint = platform_from_names(&plan);
    let mut id = identify(
        path,
        name,
        req,
        &plan,
        &header_text,
        metadata.as_deref(),
        platform_hint,
    )?;
    admit(req, &mut id)?;
    if let Some(done) = already_installed(store, &id, req)? {
        return Ok(done);
    }
    let record = wheel_record(path, &zip, &plan)?;
    let partial = store.begin_import()?;
    let (files, size, sha) = zip.extract(&plan, partial.path(), progress)?;
    check_sha(path, req, &sha)?;
    if let Some(r) = &record {
        check_wheel_members(path, r, &plan, &files)?;
    }
    finish(store, req, name, &plan, id, partial, files, size, Some(sha))
}

/// A wheel's `RECORD` (for a zip whose plan found a wheel's METADATA),
/// after checking that it lists every member of the zip.
///
/// # Errors
/// [`Kind::Integrity`] when the wheel has no `RECORD`, or a member is not in it.
fn wheel_record(
    path: &Path,
    zip: &source::ZipSource,
    plan: &Plan,
) -> Result<Option<record::Record>> {
    // The cuDNN wheel's own dist-info, else any top-level one the zip has.
    let at = match &plan.metadata {
        Some(meta) => meta.strip_suffix("METADATA").unwrap_or(meta).to_string() + "RECORD",
        None => match zip.entries().iter().find(|e| {
            e.path
                .strip_suffix(".dist-info/RECORD")
                .is_some_and(|d| !d.contains('/'))
        }) {
            Some(e) => e.path.clone(),
            None => return Ok(None),
        },
    };
    let refuse = |why: String| {
        source::bad(path, why).hint(
            "a wheel lists every member with its SHA-256 in RECORD; this one was altered or built wrong — download it again (`pip download`)",
        )
    };
    if !zip.entries().iter().any(|e| e.path == at) {
        return Err(refuse(format!("the wheel has no '{at}'")));
    }
    let r = record::Record::parse(&zip.read_text(&at)?);
    for e in zip.entries() {
        if matches!(e.kind, entry::EntryKind::File { .. })
            && !record::exempt(&e.path)
            && !r.lists(&e.path)
        {
            return Err(refuse(format!(
                "member '{}' is not listed in the wheel's RECORD",
                e.path
            )));
        }
    }
    Ok(Some(r))
}

/// Checks every extracted member of a wheel against its `RECORD`.
///
/// # Errors
/// [`Kind::Integrity`] naming the first member whose size or SHA-256 differs.
fn check_wheel_members(
    path: &Path,
    r: &record::Record,
    plan: &Plan,
    files: &[FileRecord],
) -> Result<()> {
    let src_of: std::collections::HashMap<&str, &str> = plan
        .items
        .iter()
        .map(|i| (i.dest.as_str(), i.src.as_str()))
        .collect();
    for f in files {
        let (Some(sha), Some(src)) = (f.entry.sha256(), src_of.get(f.path.as_str())) else {
            continue;
        };
        if let Err(m) = r.check(src, f.entry.size(), sha) {
            let why = match m {
                record::Mismatch::Missing => "has no SHA-256 in the wheel's RECORD",
                record::Mismatch::Differs => "does not match its SHA-256 in the wheel's RECORD",
            };
            return Err(source::bad(path, format!("member '{src}' {why}")).hint(
                "the wheel was altered after it was built; download it again (`pip download`) and compare",
            ));
        }
    }
    Ok(())
}

fn import_tar(
    store: &Store,
    req: &ImportRequest,
    name: &str,
    format: Format,
    opts: &PlanOptions,
    progress: &dyn Progress,
) -> Result<Imported> {
    let path = &req.source;
    let partial = store.begin_import()?;
    let raw = partial.path().join(".raw");
    let tar = source::read_tar(path, format, &raw, progress)?;
    check_sha(path, req, &tar.sha256)?;
    let read = |p: &str| source::read_text_file(&raw.join(p));
    let plan = plan_or_explain(path, &tar.entries, opts, false, read)?;
    let header_text = first_version_header(path, &plan, read)?;
    let mut id = identify(
        path,
        name,
        req,
        &plan,
        &header_text,
        None,
        platform_from_names(&plan),
    )?;
    admit(req, &mut id)?;
    if let Some(done) = already_installed(store, &id, req)? {
        return Ok(done);
    }
    let files = source::apply_tar_plan(&plan, &raw, partial.path(), &tar.hashes)?;
    finish(
        store,
        req,
        name,
        &plan,
        id,
        partial,
        files,
        tar.size,
        Some(tar.sha256),
    )
}

fn import_dir(
    store: &Store,
    req: &ImportRequest,
    name: &str,
    opts: &PlanOptions,
    progress: &dyn Progress,
) -> Result<Imported> {
    let root = &req.source;
    if req.expected_sha256.is_some() {
        return Err(Error::new(
            Kind::Usage,
            format!(
                "--sha256 applies to archive files; '{}' is a folder",
                root.display()
            ),
        )
        .hint("drop --sha256, or import the archive file itself"));
    }
    let entries = source::list_dir(root)?;
    let read = |p: &str| source::read_text_file(&root.join(p));
    let plan = plan_or_explain(root, &entries, opts, true, read)?;
    let header_text = first_version_header(root, &plan, read)?;
    let metadata = match &plan.metadata {
        Some(m) => Some(read(m)?),
        // `site-packages/nvidia/cudnn`: the wheel's METADATA sits beside `nvidia/`.
        None => sibling_wheel_metadata(root),
    };
    // A folder's own name may say little (`v9.7`, `cuda`); its release root's name may say more.
    let root_name = plan.root.rsplit('/').next().unwrap_or("");
    let name = if name::parse(name) == name::NameInfo::default() && !root_name.is_empty() {
        root_name
    } else {
        name
    };
    let mut id = identify(
        root,
        name,
        req,
        &plan,
        &header_text,
        metadata.as_deref(),
        platform_from_names(&plan),
    )?;
    admit(req, &mut id)?;
    if let Some(done) = already_installed(store, &id, req)? {
        return Ok(done);
    }
    let partial = store.begin_import()?;
    let files = source::copy_dir(&plan, root, partial.path(), progress)?;
    finish(store, req, name, &plan, id, partial, files, 0, None)
}

#[allow(clippy::too_many_arguments)]
fn finish(
    store: &Store,
    req: &ImportRequest,
    name: &str,
    plan: &Plan,
    id: Identity,
    partial: store::PartialRelease,
    mut files: Vec<FileRecord>,
    size: u64,
    sha256: Option<Sha256Hex>,
) -> Result<Imported> {
    // The architecture is read from the extracted libraries themselves.
    let platform = detect_platform(partial.path(), plan, id.platform)?;
    let id = Identity { platform, ..id };
    files.extend(add_dev_links(partial.path(), &files, platform)?);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let receipt = Receipt {
        schema: store::RECEIPT_SCHEMA,
        version: id.version.clone(),
        cuda: id.cuda,
        platform: id.platform,
        header_version: id.header_version.clone(),
        installed_at: store::now_rfc3339(),
        source: Source {
            kind: plan.shape,
            name: name.into(),
            sha256,
            size,
            url: req.url.clone(),
        },
        files,
    };
    let existed = store.get(&id.version, &id.cuda)?.is_some();
    let release = store.commit(partial, receipt, req.force)?;
    let outcome = if existed {
        Outcome::Reinstalled(release)
    } else {
        Outcome::Installed(release)
    };
    Ok(Imported {
        outcome,
        warnings: id.warnings,
    })
}

fn check_sha(path: &Path, req: &ImportRequest, got: &Sha256Hex) -> Result<()> {
    match &req.expected_sha256 {
        Some(want) if want != got => Err(Error::new(
            Kind::Integrity,
            format!("cannot import '{}': its SHA-256 is {got}, not the expected {want}", path.display()),
        )
        .hint("the file is damaged or not the one you meant; download it again (nothing was installed)")),
        _ => Ok(()),
    }
}

fn plan_or_explain(
    path: &Path,
    entries: &[entry::Entry],
    opts: &PlanOptions,
    folder: bool,
    read: impl Fn(&str) -> Result<String>,
) -> Result<Plan> {
    let hostile = if folder {
        "copy the real files into the folder (links must stay inside it), or import the archive it came from"
    } else {
        "this archive is malformed or hostile; download it again from NVIDIA"
    };
    layout::plan(entries, opts).map_err(|e| match e {
        PlanError::NoHeader => source::bad(path, "holds no cuDNN header (cudnn.h or cudnn_version.h), so it is not a cuDNN archive")
            .hint("give the cuDNN archive itself (e.g. cudnn-11.2-windows-x64-v8.1.0.77.zip), not another package"),
        PlanError::NoLibrary => source::bad(path, "has cuDNN headers but no cuDNN library (cudnn*.dll, libcudnn*.so*, cudnn.lib)")
            .hint("this looks like a headers-only or partial copy; import the full archive"),
        PlanError::SeveralTrees(roots) => several_trees(path, &roots, entries, read),
        PlanError::ChooseCuda(all) => Error::new(
            Kind::Usage,
            format!("'{}' holds builds for several CUDA versions: {}", path.display(), all.join(", ")),
        )
        .hint(format!("choose one with --cuda, e.g. `{}`", CommandLine::install_path(path).cuda(all.last().expect("several")).for_host(crate::platform::HOST_WINDOWS))),
        PlanError::NoSuchCuda(want, all) => Error::new(
            Kind::NotFound,
            format!("'{}' has no build for CUDA {want}; it has {}", path.display(), all.join(", ")),
        )
        .hint("pass one of those to --cuda"),
        PlanError::LinkOutside { path: p, target } => source::bad(path, format!("link '{p}' -> '{target}' points outside the release"))
            .hint(hostile),
        PlanError::LinkChainBroken { path: p, target } => source::bad(path, format!("link '{p}' -> '{target}' loops or never reaches a file of the release"))
            .hint(hostile),
        PlanError::HardlinkOutside { path: p, target } => source::bad(path, format!("hard link '{p}' -> '{target}' points outside the release"))
            .hint(hostile),
        PlanError::Collision(a, b, dest) => source::bad(path, format!("'{a}' and '{b}' would both become '{dest}'"))
            .hint("the archive mixes two layouts; import the folder holding one complete set"),
    })
}

/// Explains an archive holding several cuDNN trees: two versions, or two copies.
fn several_trees(
    path: &Path,
    roots: &[String],
    entries: &[entry::Entry],
    read: impl Fn(&str) -> Result<String>,
) -> Error {
    let mut found = Vec::new();
    for r in roots {
        let prefix = if r.is_empty() {
            String::new()
        } else {
            format!("{r}/")
        };
        let v = header::VERSION_HEADERS.iter().find_map(|h| {
            let candidates = [format!("{prefix}include/{h}"), format!("{prefix}{h}")];
            candidates.iter().find_map(|c| {
                entries
                    .iter()
                    .any(|e| &e.path == c)
                    .then(|| read(c).ok().and_then(|t| header::parse_version(&t)))
                    .flatten()
            })
        });
        let shown = if r.is_empty() {
            "the top folder".to_string()
        } else {
            format!("'{r}/'")
        };
        found.push((v, shown));
    }
    let versions: std::collections::BTreeSet<_> =
        found.iter().filter_map(|(v, _)| v.clone()).collect();
    let list = found
        .iter()
        .map(|(v, r)| {
            format!(
                "{} under {r}",
                v.as_ref()
                    .map_or("an unknown version".into(), |v| format!("cuDNN {v}"))
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let what = if versions.len() > 1 {
        "two different cuDNN versions"
    } else {
        "more than one cuDNN tree"
    };
    source::bad(path, format!("holds {what}: {list}"))
        .hint("unpack it and import the one folder you want with `cudnnm install FOLDER`")
}

fn first_version_header(
    path: &Path,
    plan: &Plan,
    read: impl Fn(&str) -> Result<String>,
) -> Result<(String, Version)> {
    for h in &plan.version_headers {
        if let Some(v) = header::parse_version(&read(h)?) {
            return Ok((h.clone(), v));
        }
    }
    Err(source::bad(path, "its headers define no CUDNN_MAJOR/CUDNN_MINOR/CUDNN_PATCHLEVEL, so its version is unknown")
        .hint("cudnn_version.h (cuDNN 8+) or cudnn.h (7 and before) must carry the version macros; the archive may be damaged"))
}

/// The platform the library names imply: DLLs → Windows; `.so` → Linux (the
/// architecture is read from the ELF header after extraction).
fn platform_from_names(plan: &Plan) -> Option<Platform> {
    let dll = plan
        .libraries()
        .any(|i| i.dest.to_ascii_lowercase().ends_with(".dll"));
    let so = plan.libraries().any(|i| i.dest.contains(".so"));
    match (dll, so) {
        (true, false) => Some(Platform::WindowsX86_64),
        (false, true) => Some(Platform::LinuxX86_64),
        _ => None,
    }
}

/// Decides version, CUDA variant and platform from the headers, libraries,
/// name and request; refuses disagreements (unless `--force` for versions).
fn identify(
    path: &Path,
    name: &str,
    req: &ImportRequest,
    plan: &Plan,
    header: &(String, Version),
    metadata: Option<&str>,
    platform: Option<Platform>,
) -> Result<Identity> {
    let (header_path, hv) = header;
    // Every library's major must be the header's; full-versioned sonames must match exactly.
    for it in plan.libraries() {
        let file = it.dest.rsplit('/').next().unwrap_or(&it.dest);
        if let Some(lv) = library_version(file)
            && !(lv.parts().len() >= 3 && lv.triple() == *hv
                || lv.parts().len() < 3 && lv.major() == hv.major())
        {
            return Err(source::bad(
                path,
                format!("holds two different cuDNN versions: {header_path} says {hv}, but '{file}' is cuDNN {lv}"),
            )
            .hint("the archive mixes files of two releases; import a clean copy of one release"));
        }
    }
    let mut warnings = Vec::new();
    let info = name::parse(name);
    // A wheel's METADATA says what it is; its file name can be anything.
    let meta = metadata.map(wheel_metadata);
    if let Some(m) = &meta {
        let disagree = |what: &str, named: String, meta: String| {
            source::bad(path, format!("its name says {what} {named} but its wheel METADATA says {meta}"))
                .hint("the file was renamed or mixed up; use the wheel as pip downloaded it (`--force` trusts the METADATA)")
        };
        if let (Some(n), Some(v)) = (&info.version, &m.version)
            && !(n.is_prefix_of(v) || v.is_prefix_of(n))
        {
            if !req.force {
                return Err(disagree("cuDNN", n.to_string(), v.to_string()));
            }
            warnings.push(format!(
                "its name says cuDNN {n} but its METADATA says {v}; imported as {v} (--force)"
            ));
        }
        if let (Some(n), Some(c)) = (&info.cuda, &m.cuda)
            && !(n.major() == c.major()
                && (n.minor().is_none() || c.minor().is_none() || n.minor() == c.minor()))
        {
            if !req.force {
                return Err(disagree("CUDA", n.to_string(), c.to_string()));
            }
            warnings.push(format!(
                "its name says CUDA {n} but its METADATA says {c}; imported for CUDA {c} (--force)"
            ));
        }
    }
    let named = match &meta {
        Some(m) => m.version.clone().or(info.version.clone()),
        None => info.version.clone(),
    };
    let version = match named {
        None => hv.clone(),
        Some(n) if n.is_prefix_of(hv) => hv.clone(),
        Some(n) if hv.is_prefix_of(&n) => n,
        Some(n) if req.force => {
            warnings.push(format!(
                "its name says cuDNN {n} but its headers say {hv}; imported as {hv} (--force)"
            ));
            hv.clone()
        }
        Some(n) => {
            return Err(source::bad(
                path,
                format!("its name says cuDNN {n} but its headers say {hv}"),
            )
            .hint(format!(
                "check that you have the archive you meant; `--force` imports it as {hv}"
            )));
        }
    };
    let named_cuda = meta
        .as_ref()
        .and_then(|m| m.cuda)
        .or(info.cuda)
        .or_else(|| {
            plan.installer_cuda
                .as_deref()
                .and_then(CudaVariant::from_name_part)
                .map(|c| {
                    // NVIDIA's installer folders are per CUDA major from 11 on (`12.8` serves all of 12.x).
                    if c.major() >= 11 {
                        CudaVariant::new(c.major(), None)
                    } else {
                        c
                    }
                })
        });
    let cuda = match (req.cuda, named_cuda) {
        (Some(given), Some(named)) => {
            let agrees = given.major() == named.major()
                && (given.minor().is_none()
                    || named.minor().is_none()
                    || given.minor() == named.minor());
            if !agrees {
                return Err(Error::new(
                    Kind::Usage,
                    format!(
                        "'{}' is built for CUDA {named}, but --cuda {given} was given",
                        path.display()
                    ),
                )
                .hint(format!("drop --cuda, or pass --cuda {named}")));
            }
            named
        }
        (Some(c), None) | (None, Some(c)) => c,
        (None, None) => {
            return Err(Error::new(
                Kind::Usage,
                format!(
                    "cannot tell which CUDA '{}' is built for: its name does not say",
                    path.display()
                ),
            )
            .hint(format!(
                "pass --cuda, e.g. `{}` (or 11.2, 10.2 … as NVIDIA's download page names it)",
                CommandLine::install_path(path)
                    .cuda(12)
                    .for_host(crate::platform::HOST_WINDOWS)
            )));
        }
    };
    let platform = match platform {
        Some(p) => p,
        None => {
            return Err(source::bad(
                path,
                "holds both Windows DLLs and Linux libraries, or neither",
            )
            .hint("import one platform's archive at a time"));
        }
    };
    Ok(Identity {
        version,
        header_version: hv.clone(),
        cuda,
        platform,
        warnings,
    })
}

/// What a wheel's METADATA says: `Version:` and the CUDA of `Name:`
/// (`nvidia-cudnn-cu12`, `nvidia-cudnn-jit-cu12` → 12).
struct WheelMetadata {
    version: Option<Version>,
    cuda: Option<CudaVariant>,
}

fn wheel_metadata(text: &str) -> WheelMetadata {
    let field = |key: &str| {
        text.lines()
            .take_while(|l| !l.trim().is_empty())
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
    };
    WheelMetadata {
        version: field("Version:").and_then(|v| v.parse().ok()),
        cuda: field("Name:").and_then(|n| {
            let n = n.to_ascii_lowercase().replace('_', "-");
            n.rsplit('-').next().and_then(CudaVariant::from_name_part)
        }),
    }
}

/// The METADATA of the cuDNN wheel a `site-packages/nvidia/cudnn[_jit]`
/// folder came from: `site-packages/nvidia_cudnn[_jit]_cuNN-*.dist-info/METADATA`.
fn sibling_wheel_metadata(root: &Path) -> Option<String> {
    let leaf = root.file_name()?.to_str()?.to_ascii_lowercase();
    let nvidia = root.parent()?;
    if !nvidia.file_name()?.eq_ignore_ascii_case("nvidia") {
        return None;
    }
    let prefix = format!("nvidia_{leaf}_cu");
    let found: Vec<PathBuf> = std::fs::read_dir(nvidia.parent()?)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                let n = n.to_ascii_lowercase();
                n.starts_with(&prefix) && n.ends_with(".dist-info")
            })
        })
        .collect();
    match found.as_slice() {
        [one] => source::read_text_file(&one.join("METADATA")).ok(),
        _ => None,
    }
}

/// The cuDNN version a library file name carries: `libcudnn.so.8.1.0` → 8.1.0,
/// `libcudnn_ops.so.9` → 9, `cudnn64_8.dll` / `cudnn_ops64_9.lib` → 8 / 9.
/// `None` for names without one (`libcudnn.so`, `cudnn.lib`, `libcudnn_static.a`).
pub fn library_version(file: &str) -> Option<Version> {
    let lower = file.to_ascii_lowercase();
    if let Some(i) = lower.find(".so.") {
        return lower[i + 4..].parse().ok();
    }
    let stem = lower
        .strip_suffix(".dll")
        .or_else(|| lower.strip_suffix(".lib"))?;
    let (_, m) = stem.rsplit_once("64_")?;
    m.parse::<u32>().ok().map(|m| Version::from_parts(&[m]))
}

/// The platform of the extracted libraries: Windows for DLLs; for ELF files
/// the machine in the header (x86_64, aarch64 → sbsa unless the name says
/// Jetson, ppc64le). A file that is not ELF keeps the name-based guess.
fn detect_platform(dir: &Path, plan: &Plan, guess: Platform) -> Result<Platform> {
    if guess.is_windows() {
        return Ok(guess);
    }
    for it in plan.libraries() {
        if !matches!(it.kind, layout::ItemKind::File { .. }) || !it.dest.contains(".so") {
            continue;
        }
        let mut head = [0u8; 20];
        let Ok(mut f) = std::fs::File::open(dir.join(&it.dest)) else {
            continue;
        };
        if std::io::Read::read_exact(&mut f, &mut head).is_err() || &head[..4] != b"\x7fELF" {
            continue;
        }
        let machine = if head[5] == 1 {
            u16::from_le_bytes([head[18], head[19]])
        } else {
            u16::from_be_bytes([head[18], head[19]])
        };
        return Ok(match machine {
            62 => Platform::LinuxX86_64,
            183 if guess == Platform::LinuxAarch64 => Platform::LinuxAarch64,
            183 => Platform::LinuxSbsa,
            21 => Platform::LinuxPpc64le,
            other => {
                return Err(Error::new(
                    Kind::Integrity,
                    format!(
                        "'{}' is built for ELF machine {other}, which cuDNN does not ship for",
                        it.dest
                    ),
                )
                .hint("the library is damaged or not a cuDNN build; download the archive again and check its SHA-256"));
            }
        });
    }
    Ok(guess)
}

/// Adds the unversioned development link (`libcudnn.so -> libcudnn.so.9`)
/// for every `libX.so.M` that lacks one: wheels carry only `.so.M` files
/// (`docs/releases.md#pip-wheels`), and linkers look for `libX.so`.
fn add_dev_links(dir: &Path, files: &[FileRecord], platform: Platform) -> Result<Vec<FileRecord>> {
    if platform.is_windows() {
        return Ok(Vec::new());
    }
    let have: std::collections::BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let mut out = Vec::new();
    for f in files {
        let Some(file) = f.path.strip_prefix("lib/") else {
            continue;
        };
        let Some((stem, ver)) = file.split_once(".so.") else {
            continue;
        };
        if ver.contains('.') || !stem.starts_with("libcudnn") {
            continue;
        }
        let dev = format!("lib/{stem}.so");
        if have.contains(dev.as_str()) || out.iter().any(|r: &FileRecord| r.path == dev) {
            continue;
        }
        let link = dir.join(&dev);
        crate::fsops::symlink_or_copy(file, &link)
            .map_err(|e| Error::io("create the link", &link, e))?;
        out.push(FileRecord::link(dev, file.to_string()));
    }
    Ok(out)
}

fn already_installed(
    store: &Store,
    id: &Identity,
    req: &ImportRequest,
) -> Result<Option<Imported>> {
    let Some(existing) = store.get(&id.version, &id.cuda)? else {
        return Ok(None);
    };
    if req.force {
        if let Some(toolkits) = req.deployed.get(&existing.id()).filter(|t| !t.is_empty()) {
            return Err(Error::new(
                Kind::Conflict,
                format!(
                    "cuDNN {} is deployed in {}; reinstalling it would change the files deployed there",
                    existing.id(),
                    toolkits.join(", ")
                ),
            )
            .hint(format!(
                "switch that toolkit away first (`cudnnm rollback` or `{}`), reinstall, then `{}` again",
                CommandLine::use_("OTHER")
                    .cuda_root(&toolkits[0])
                    .for_host(crate::platform::HOST_WINDOWS),
                CommandLine::use_(existing.id()).for_host(crate::platform::HOST_WINDOWS)
            )));
        }
        return Ok(None);
    }
    if existing.platform() != id.platform {
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "cuDNN {} for CUDA {} is already installed for {}; this archive is for {}",
                id.version,
                id.cuda,
                existing.platform(),
                id.platform
            ),
        )
        .hint("use a separate --home for another platform's releases, or --force to replace it"));
    }
    Ok(Some(Imported {
        outcome: Outcome::AlreadyInstalled(existing),
        warnings: id.warnings.clone(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_versions_from_names() {
        let v = |s: &str| library_version(s).map(|v| v.to_string());
        assert_eq!(v("libcudnn.so.8.1.0"), Some("8.1.0".into()));
        assert_eq!(v("libcudnn_ops.so.9"), Some("9".into()));
        assert_eq!(v("cudnn64_7.dll"), Some("7".into()));
        assert_eq!(v("cudnn_cnn_infer64_8.lib"), Some("8".into()));
        assert_eq!(v("cudnn.lib"), None);
        assert_eq!(v("libcudnn.so"), None);
        assert_eq!(v("libcudnn_static_v8.a"), None);
    }

    #[test]
    fn metadata_versions() {
        let metadata_version = |t: &str| wheel_metadata(t).version;
        let m = wheel_metadata(
            "Metadata-Version: 2.4\nName: nvidia-cudnn-jit-cu12\nVersion: 9.12.0.46\n\nName: not-a-header\n",
        );
        assert_eq!(m.cuda.unwrap().to_string(), "12");
        assert_eq!(
            wheel_metadata("Name: nvidia_cudnn_cu11\n")
                .cuda
                .unwrap()
                .to_string(),
            "11"
        );
        assert_eq!(
            metadata_version("Name: x\nVersion: 9.12.0.46\n")
                .unwrap()
                .to_string(),
            "9.12.0.46"
        );
        assert_eq!(metadata_version("Name: x\n"), None);
    }
}
