//! Importing cuDNN archives into the store (`docs/architecture.md#importing`): open → recognise
//! the shape by entry names → plan the mapping to the store layout → check
//! every entry → extract into `store/.partial-*` while hashing → read the
//! version from the headers → cross-check the name and the caller → write
//! the receipt → rename into place. Any failure drops the partial folder, so
//! the store is unchanged.

pub mod entry;
pub mod header;
mod identify;
pub mod layout;
pub mod name;
pub mod record;
pub mod source;
mod streamed;
pub mod zipdir;

use std::path::{Path, PathBuf};

use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::progress::Progress;
use crate::store::{self, FileRecord, Receipt, Release, Source, Store};
use crate::version::{CudaVariant, Platform, Version};
pub use identify::library_version;
use identify::{
    DistInfo, detect_platform, first_version_header, identify, platform_from_names,
    sibling_wheel_metadata,
};
use layout::{Plan, PlanError, PlanOptions};
use source::Format;
pub use streamed::{Streaming, begin_streamed, import_streamed};

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
    /// The SHA-256 the publisher of a wheel of this name gives (the
    /// catalog's row from PyPI's file list, the index's, a lock's). A wheel
    /// with exactly these bytes is the one its publisher built, so its
    /// `RECORD` gives every member's SHA-256 for the receipt and the members
    /// are not hashed again as they are written; any other wheel has each
    /// member hashed and checked against its `RECORD`.
    pub published_sha256: Option<Sha256Hex>,
    /// Where the archive came from (a URL, a pip requirement), for the receipt.
    pub from: crate::store::Provenance,
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
    /// Status lines: how a download was unpacked ([`import_streamed`]).
    pub notes: Vec<String>,
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
    /// Which build (full or JIT).
    pub flavour: crate::version::Flavour,
    /// Things the user should know (a forced version disagreement).
    pub warnings: Vec<String>,
    /// A wheel's distribution, from its dist-info (for the receipt).
    pub dist: Option<store::Distribution>,
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
        Some(m) => Some(DistInfo::read(m, |p| zip.read_text(p))?),
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
        metadata.as_ref(),
        platform_hint,
    )?;
    admit(req, &mut id)?;
    if let Some(done) = already_installed(store, &id, req)? {
        return Ok(done);
    }
    let record = wheel_record(path, &zip, &plan)?;
    let partial = store.begin_import()?;
    // Hashing every member is a sixth of a large wheel's import; a published
    // wheel's RECORD already says what it would find.
    let hash_members = record.is_none() || req.published_sha256.is_none();
    let x = zip.extract(&plan, partial.path(), hash_members, progress)?;
    check_sha(path, req, &x.sha256)?;
    let published = req.published_sha256.as_ref() == Some(&x.sha256);
    if let Some(listed) = req.published_sha256.as_ref().filter(|_| !published) {
        id.warnings.push(format!(
            "'{name}' is not the wheel the catalog lists under that name (its SHA-256 is {}…, not {}…): installed as a build of its own, checked against its RECORD",
            x.sha256.short(),
            listed.short()
        ));
    }
    let mut files = member_records(
        path,
        record.as_ref(),
        &plan,
        x.files,
        published,
        partial.path(),
    )?;
    files.extend(x.links);
    finish(
        store,
        req,
        name,
        &plan,
        id,
        partial,
        files,
        x.size,
        Some(x.sha256),
    )
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
        if matches!(e.kind, entry::MemberKind::File { .. })
            && !record::exempt(&e.path)
            && !r.lists(&e.path)
        {
            return Err(refuse(format!(
                "member '{}' is not listed in the wheel's RECORD",
                e.path
            )));
        }
    }
    // And every file RECORD lists is in the wheel: a wheel that lost a
    // library would install as an incomplete release that still verifies.
    let present: std::collections::HashSet<&str> =
        zip.entries().iter().map(|e| e.path.as_str()).collect();
    let mut lost: Vec<&str> = r
        .paths()
        .filter(|p| !p.ends_with('/') && !record::exempt(p) && !present.contains(p))
        .collect();
    lost.sort_unstable();
    if let Some(first) = lost.first() {
        return Err(refuse(format!(
            "'{first}' is listed in the wheel's RECORD but missing from the wheel{}",
            match lost.len() {
                1 => String::new(),
                n => format!(" ({} more missing)", n - 1),
            }
        )));
    }
    Ok(Some(r))
}

/// The records of the file members `written` under `dest`; a wheel's
/// (`record`, its `RECORD`) each checked against it.
///
/// When the wheel is the `published` one (its SHA-256 is its publisher's),
/// `RECORD` is its publisher's too and gives each member's SHA-256: the zip's
/// CRC-32, checked as each member was inflated, shows the bytes written are
/// the archive's. Otherwise each member's SHA-256 (hashed as it was
/// written, else read back from `dest`) must be the one `RECORD` lists.
///
/// # Errors
/// [`Kind::Integrity`] naming the first member whose size or SHA-256 differs
/// from `RECORD`, or that it does not list with a SHA-256; I/O errors reading
/// a member back.
fn member_records(
    path: &Path,
    record: Option<&record::Record>,
    plan: &Plan,
    written: Vec<source::Written>,
    published: bool,
    dest: &Path,
) -> Result<Vec<FileRecord>> {
    let src_of: std::collections::HashMap<&str, &str> = plan
        .items
        .iter()
        .map(|i| (i.dest.as_str(), i.src.as_str()))
        .collect();
    let mut out = Vec::with_capacity(written.len());
    for w in written {
        let src = src_of.get(w.path.as_str()).copied().unwrap_or(&w.path);
        let sha = match (record, w.sha256) {
            (Some(r), _) if published => r.listed_sha256(src, w.size),
            (r, sha) => {
                let sha = match sha {
                    Some(sha) => sha,
                    None => crate::hash::sha256_file(&dest.join(&w.path))?.1,
                };
                match r {
                    Some(r) => r.check(src, w.size, &sha).map(|()| sha),
                    None => Ok(sha),
                }
            }
        }
        .map_err(|m| not_as_recorded(path, src, w.size, m))?;
        out.push(FileRecord::file(w.path, w.size, sha));
    }
    Ok(out)
}

/// A wheel member `src` of `size` bytes that `RECORD` does not vouch for.
fn not_as_recorded(path: &Path, src: &str, size: u64, m: record::Mismatch) -> Error {
    let altered =
        "the wheel was altered after it was built; download it again (`pip download`) and compare";
    let (why, hint) = match m {
        record::Mismatch::Missing => ("has no SHA-256 in the wheel's RECORD".to_string(), altered.to_string()),
        record::Mismatch::Differs => ("does not match its SHA-256 in the wheel's RECORD".into(), altered.into()),
        record::Mismatch::Size(listed) => (
            format!("holds {size} bytes, not the {listed} the wheel's RECORD lists"),
            altered.into(),
        ),
        record::Mismatch::Twice => (
            "is listed twice in the wheel's RECORD, with different hashes or sizes".into(),
            "this RECORD is malformed, so no member can be checked; download the wheel again, or rebuild it".into(),
        ),
        record::Mismatch::Algorithm(a) => (
            format!("is listed in the wheel's RECORD with a {a} hash; cudnnm checks SHA-256, which NVIDIA's wheels and those pip and `python -m build` make list"),
            "rebuild the wheel with SHA-256 in its RECORD (the default of the `wheel` and `build` tools), or import its unpacked folder".into(),
        ),
    };
    source::bad(path, format!("member '{src}' {why}")).hint(hint)
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
    let raw = partial.path().join(RAW);
    let tar = source::read_tar(path, format, &raw, progress)?;
    let unpacked = Extracted {
        entries: &tar.entries,
        hashes: &tar.hashes,
        size: tar.size,
        sha256: tar.sha256.clone(),
        zip: None,
    };
    import_unpacked(store, req, name, opts, partial, unpacked)
}

/// The folder inside a partial release where a streamed archive's members
/// are written before the plan moves them into place.
const RAW: &str = ".raw";

/// An archive whose members were written under the partial folder's
/// [`RAW`] folder as it streamed (a tar, or a zip read from its local
/// headers), waiting to be planned.
struct Extracted<'a> {
    /// The entries (a zip's from its central directory).
    entries: &'a [entry::Member],
    /// Size and SHA-256 (when hashed) of each regular file written, by entry path.
    hashes: &'a source::MemberHashes,
    /// The archive's size and SHA-256.
    size: u64,
    sha256: Sha256Hex,
    /// A zip's central directory (for a wheel's `RECORD` and METADATA).
    zip: Option<&'a source::ZipSource>,
}

/// Plans, identifies and commits an archive unpacked under
/// `partial/`[`RAW`]: the checks of every import, then the plan applied by
/// renames inside the partial folder.
fn import_unpacked(
    store: &Store,
    req: &ImportRequest,
    name: &str,
    opts: &PlanOptions,
    partial: store::PartialRelease,
    u: Extracted<'_>,
) -> Result<Imported> {
    let path = &req.source;
    let raw = partial.path().join(RAW);
    check_sha(path, req, &u.sha256)?;
    let read = |p: &str| source::read_text_file(&raw.join(p));
    let plan = plan_or_explain(path, u.entries, opts, false, read)?;
    let header_text = first_version_header(path, &plan, read)?;
    let metadata = match (&plan.metadata, u.zip) {
        (Some(m), Some(_)) => Some(DistInfo::read(m, read)?),
        _ => None,
    };
    let mut id = identify(
        path,
        name,
        req,
        &plan,
        &header_text,
        metadata.as_ref(),
        platform_from_names(&plan),
    )?;
    admit(req, &mut id)?;
    if let Some(done) = already_installed(store, &id, req)? {
        return Ok(done);
    }
    let record = match u.zip {
        Some(zip) => wheel_record(path, zip, &plan)?,
        None => None,
    };
    let (written, links) = source::apply_tar_plan(&plan, &raw, partial.path(), u.hashes)?;
    let published = req.published_sha256.as_ref() == Some(&u.sha256);
    let mut files = member_records(
        path,
        record.as_ref(),
        &plan,
        written,
        published,
        partial.path(),
    )?;
    files.extend(links);
    finish(
        store,
        req,
        name,
        &plan,
        id,
        partial,
        files,
        u.size,
        Some(u.sha256),
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
        Some(m) => Some(DistInfo::read(m, read)?),
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
        metadata.as_ref(),
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
        flavour: (!id.flavour.is_full()).then_some(id.flavour),
        header_version: id.header_version.clone(),
        installed_at: store::now_rfc3339(),
        source: Source {
            kind: plan.shape,
            name: name.into(),
            sha256,
            size,
            from: req.from.clone(),
            dist: id.dist.clone(),
        },
        files,
    };
    // A folder whose receipt cannot be read counts as a release replaced.
    let before = store.get_in_folder(&receipt.release_id());
    let existed = !matches!(before, Ok(None));
    let mut notes = Vec::new();
    if let Ok(Some(existing)) = &before
        && let Some(toolkits) = req.deployed.get(&existing.id()).filter(|t| !t.is_empty())
    {
        if !same_files(&existing.receipt.files, &receipt.files) {
            return Err(deployed_conflict(&existing.id(), toolkits));
        }
        notes.push(format!(
            "repaired in place: the imported files are the ones its receipt records (deployed in {})",
            toolkits.join(", ")
        ));
    }
    let release = store.commit(partial, receipt, req.force)?;
    let outcome = if existed {
        Outcome::Reinstalled(release)
    } else {
        Outcome::Installed(release)
    };
    Ok(Imported {
        outcome,
        warnings: id.warnings,
        notes,
    })
}

/// True when two receipts' files are the same paths with the same content
/// or link targets (import times aside).
fn same_files(a: &[FileRecord], b: &[FileRecord]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.path == y.path && x.entry == y.entry)
}

/// Reinstalling deployed release `id` from bytes that are not its receipt's
/// would change what the toolkits `toolkits` link to without a backup.
fn deployed_conflict(id: &str, toolkits: &[String]) -> Error {
    Error::new(
        Kind::Conflict,
        format!(
            "cuDNN {id} is deployed in {}; these files are not the ones its receipt records, and reinstalling them would change the files deployed there",
            toolkits.join(", ")
        ),
    )
    .hint(format!(
        "switch that toolkit to another release first (`{}`), reinstall, then `{}` again",
        CommandLine::use_("OTHER")
            .cuda_root(&toolkits[0])
            .for_host(crate::platform::HOST_WINDOWS),
        CommandLine::use_(id).for_host(crate::platform::HOST_WINDOWS)
    ))
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
    entries: &[entry::Member],
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
    entries: &[entry::Member],
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
        let placed = crate::fsops::symlink_or_copy(file, &link)
            .map_err(|e| Error::io("create the link", &link, e))?;
        out.push(source::placed_record(&dev, file, placed, &link)?);
    }
    Ok(out)
}

fn already_installed(
    store: &Store,
    id: &Identity,
    req: &ImportRequest,
) -> Result<Option<Imported>> {
    let existing = match store.get_build(&id.version, &id.cuda, id.flavour) {
        Ok(Some(existing)) => existing,
        // The other build in this build's folder (an older cudnnm's JIT
        // build where the full one goes): never replaced, even with --force.
        Ok(None) if id.flavour.is_full() => match store.get(&id.version, &id.cuda) {
            Ok(Some(other)) if other.flavour() != id.flavour => {
                return Err(store::other_build_there(&other, id.flavour));
            }
            _ => return Ok(None),
        },
        Ok(None) => return Ok(None),
        // A release whose receipt cannot be read: `--force` replaces it
        // (the journaled swap in `Store::commit`) unless it is deployed.
        Err(e) if req.force => {
            let rid = crate::version::ReleaseId::new(id.version.clone(), id.cuda)
                .with_flavour(id.flavour)
                .to_string();
            if let Some(toolkits) = req.deployed.get(&rid).filter(|t| !t.is_empty()) {
                return Err(e.context(format!(
                    "cuDNN {rid} is deployed in {}; switch that toolkit away first",
                    toolkits.join(", ")
                )));
            }
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    if req.force {
        // A deployed release is imported again only as a repair: `finish`
        // commits it when its files are the receipt's (the deployed links
        // then lead to the original bytes again), and refuses other bytes.
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
        notes: Vec::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::identify::wheel_metadata;
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
