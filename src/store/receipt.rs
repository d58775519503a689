//! The receipt (`receipt.toml`) each store release carries: where the
//! release came from and every file's size and SHA-256 or link target.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::record::Entry;
use crate::shape::Shape;
use crate::version::{CudaVariant, Flavour, Package, PipRequirement, Platform, ReleaseId, Version};

/// Receipt schema version written by this build.
pub const RECEIPT_SCHEMA: u32 = 1;

/// The receipt file name inside a release folder.
pub const RECEIPT_FILE: &str = "receipt.toml";

/// `receipt.toml`: what was imported and every file it holds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Receipt {
    /// Receipt schema version ([`RECEIPT_SCHEMA`]).
    pub schema: u32,
    /// The full release version (`8.1.0.77`, or `7.1.3` when no build number is known).
    pub version: Version,
    /// The CUDA variant the build targets.
    pub cuda: CudaVariant,
    /// The platform of the binaries.
    pub platform: Platform,
    /// `jit` for a JIT build imported from cudnnm with flavours, which puts
    /// it in the `<version>+jit` folder; absent for a full build, and in
    /// receipts written before flavours (a JIT build then sits in the plain
    /// folder, and [`Receipt::build_flavour`] reads what it is).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub flavour: Option<Flavour>,
    /// `major.minor.patch` as read from `cudnn_version.h` (or `cudnn.h` before cuDNN 8).
    pub header_version: Version,
    /// When the import finished, RFC 3339 UTC.
    pub installed_at: String,
    /// Where the release came from.
    pub source: Source,
    /// Every file of the release, relative to the release folder, `/`-separated, sorted.
    #[serde(rename = "file", default)]
    pub files: Vec<FileRecord>,
}

/// The origin of an imported release.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Source {
    /// The archive shape (written `windows-zip`, `linux-tgz`, `redist`,
    /// `wheel`, `installer-folder`, `folder`, `flat`).
    pub kind: Shape,
    /// The archive or folder name as given (`cudnn-11.2-windows-x64-v8.1.0.77.zip`).
    pub name: String,
    /// SHA-256 of the archive file; absent for folders.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sha256: Option<Sha256Hex>,
    /// Archive size in bytes (0 for folders).
    #[serde(default)]
    pub size: u64,
    /// Where the bytes came from besides their name: a local file or
    /// folder, a download URL, or a pip requirement. Written as the
    /// receipt's `url` field (absent for a local file, the URL, or
    /// `pip:REQUIREMENT`), as every receipt since the first.
    #[serde(
        rename = "url",
        default,
        skip_serializing_if = "Provenance::is_local",
        with = "provenance_text"
    )]
    pub from: Provenance,
    /// The Python distribution a wheel (or a folder holding a wheel's
    /// files with its `*.dist-info`) is, as its own metadata says: what a
    /// lock's pip requirement is made of, whatever the file was named.
    /// `None` for other archives and in receipts written before this field.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub dist: Option<Distribution>,
}

/// Where an imported release's bytes came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Provenance {
    /// A local archive or folder the user named.
    #[default]
    Local,
    /// Downloaded from this URL (the catalog's, a mirror's, a lock's).
    Url(String),
    /// Fetched by pip for this requirement.
    Pip(PipRequirement),
    /// Fetched by pip for a requirement an older cudnnm accepted that is
    /// not `NAME==VERSION` of a cuDNN package (`nvidia-cudnn-cu12>=9`):
    /// kept as recorded, shown, never handed to pip again.
    OlderPip(String),
}

impl Provenance {
    /// True for a local file or folder.
    pub fn is_local(&self) -> bool {
        *self == Provenance::Local
    }

    /// The download URL, for a downloaded archive.
    pub fn url(&self) -> Option<&str> {
        match self {
            Provenance::Url(u) => Some(u),
            _ => None,
        }
    }

    /// Whether pip fetched the bytes.
    pub fn is_pip(&self) -> bool {
        matches!(self, Provenance::Pip(_) | Provenance::OlderPip(_))
    }
}

impl std::fmt::Display for Provenance {
    /// As the receipt writes it: the URL, `pip:REQUIREMENT`, or `local`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Provenance::Local => f.write_str("local"),
            Provenance::Url(u) => f.write_str(u),
            Provenance::Pip(r) => write!(f, "pip:{r}"),
            Provenance::OlderPip(r) => write!(f, "pip:{r}"),
        }
    }
}

/// [`Provenance`] as the receipt's `url` text, as receipts have always
/// held it: a URL, or `pip:` and the requirement.
mod provenance_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Provenance;

    pub fn serialize<S: Serializer>(p: &Provenance, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(p)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Provenance, D::Error> {
        let text = String::deserialize(d)?;
        Ok(match text.strip_prefix("pip:") {
            Some(req) => match req.parse() {
                Ok(r) => Provenance::Pip(r),
                Err(_) => Provenance::OlderPip(req.to_string()),
            },
            None => Provenance::Url(text),
        })
    }
}

/// A wheel's distribution as its `*.dist-info` records it: `Name:` and
/// `Version:` from `METADATA`, the `Tag:` lines from `WHEEL`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Distribution {
    /// `Name:` as written (`nvidia-cudnn-jit-cu12`).
    pub name: String,
    /// `Version:` as written (`9.12.0.46`).
    pub version: String,
    /// The wheel's tags (`py3-none-manylinux_2_27_x86_64`), one per `Tag:`
    /// line of `WHEEL`; empty when it has none (a folder without `WHEEL`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

impl Distribution {
    /// The project name as PyPI spells it (PEP 503: lower case, each run of
    /// `-`, `_`, `.` one `-`): `nvidia-cudnn-jit-cu12`.
    pub fn project(&self) -> String {
        crate::version::python_name(&self.name, '-')
    }

    /// The exact requirement that gives this wheel back:
    /// `nvidia-cudnn-jit-cu12==9.12.0.46`.
    pub fn requirement(&self) -> String {
        format!("{}=={}", self.project(), self.version)
    }

    /// The wheel's canonical file name (PEP 427:
    /// `{name}-{version}-{python}-{abi}-{platform}.whl`, several tags
    /// compressed into dotted sets), whatever the file installed was called;
    /// `None` without tags.
    pub fn file_name(&self) -> Option<String> {
        let mut sets: [Vec<&str>; 3] = Default::default();
        for t in &self.tags {
            let parts: Vec<&str> = t.splitn(3, '-').collect();
            let [py, abi, plat] = parts.as_slice() else {
                return None;
            };
            for (set, part) in sets.iter_mut().zip([py, abi, plat]) {
                if !set.contains(part) {
                    set.push(part);
                }
            }
        }
        if sets[0].is_empty() {
            return None;
        }
        Some(format!(
            "{}-{}-{}-{}-{}.whl",
            crate::version::python_name(&self.name, '_'),
            self.version.replace('-', "_"),
            sets[0].join("."),
            sets[1].join("."),
            sets[2].join(".")
        ))
    }
}

impl Source {
    /// What `cudnnm install … --force` takes to import release `id` again
    /// from this source — never another package: for a wheel, the exact
    /// requirement of [`Source::exact_pip_requirement`]
    /// (`pip:nvidia-cudnn-jit-cu12==9.27.0.42`); else the `pip:`
    /// requirement it came from; the release id for an archive the catalog
    /// downloaded; else the archive's or folder's name, with `true` (the
    /// user gives its path). The command itself is
    /// [`crate::command::CommandLine::install_from`].
    pub fn reinstall_arg(&self, id: &str) -> (String, bool) {
        let version = id.parse::<ReleaseId>().ok().map(|r| r.version);
        if let Some(req) = version.as_ref().and_then(|v| self.exact_pip_requirement(v)) {
            return (format!("pip:{req}"), false);
        }
        match &self.from {
            Provenance::Pip(r) => (format!("pip:{r}"), false),
            // An older requirement of a cuDNN package (`nvidia-cudnn-cu12>=9`):
            // that package's exact requirement of this release, which
            // `install pip:` accepts.
            Provenance::OlderPip(req) => match older_pip_package(req).zip(version) {
                Some((p, v)) => (format!("pip:{}", PipRequirement::new(p, v)), false),
                None => (id.to_string(), false),
            },
            Provenance::Url(_) => (id.to_string(), false),
            Provenance::Local => (self.name.clone(), true),
        }
    }

    /// The cuDNN package on PyPI this release of `version` came from, when
    /// it came from one: as [`Source::reinstall_arg`] names it (the wheel's
    /// own metadata first, else the requirement pip was given).
    pub fn pip_package(&self, version: &Version) -> Option<crate::version::CudnnPackage> {
        if let Some(r) = self.exact_pip_requirement(version) {
            return Some(r.package());
        }
        match &self.from {
            Provenance::Pip(r) => Some(r.package()),
            Provenance::OlderPip(req) => older_pip_package(req),
            _ => None,
        }
    }

    /// The pip requirement (without `pip:`) that gives back exactly this
    /// wheel of release `version`: from the wheel's own metadata
    /// ([`Source::dist`]) when the receipt records it; else the one it was
    /// installed with when that names one version (`==`); else the one its
    /// file name gives when that is a wheel's name (PEP 427,
    /// `nvidia_cudnn_jit_cu12-9.12.0.46-….whl`). Whichever it is, it must
    /// name `version`: a renamed file (`Copy of ….whl`, or another
    /// version's name) gives nothing rather than a requirement for other
    /// bytes. `None` for anything that is not a wheel of one of NVIDIA's
    /// cuDNN packages.
    pub fn exact_pip_requirement(&self, version: &Version) -> Option<PipRequirement> {
        let names = |v: &str| v.trim().parse::<Version>().is_ok_and(|v| &v == version);
        if let Some(d) = &self.dist {
            return names(&d.version)
                .then(|| d.requirement().parse().ok())
                .flatten();
        }
        if self.kind != Shape::Wheel {
            return None;
        }
        let given = match &self.from {
            Provenance::Pip(r) => Some((r.package().to_string(), r.version().to_string())),
            Provenance::OlderPip(req) => req
                .split_once("==")
                .filter(|(p, _)| is_project_name(p.trim()))
                .map(|(p, v)| (crate::version::python_name(p, '-'), v.trim().to_string())),
            _ => None,
        };
        let (project, v) = given.or_else(|| wheel_file_requirement(&self.name))?;
        names(&v)
            .then(|| format!("{project}=={v}").parse().ok())
            .flatten()
    }

    /// The wheel file name a lock records: the canonical one its metadata
    /// gives ([`Distribution::file_name`]), else the installed file's name
    /// when that is a wheel's name naming `version`; `None` otherwise.
    pub fn wheel_file_name(&self, version: &Version) -> Option<String> {
        if let Some(n) = self.dist.as_ref().and_then(Distribution::file_name) {
            return Some(n);
        }
        let (_, v) = wheel_file_requirement(&self.name)?;
        v.parse::<Version>()
            .is_ok_and(|v| &v == version)
            .then(|| self.name.clone())
    }
}

/// The cuDNN package an older pip requirement names (`nvidia-cudnn-cu12>=9`
/// → `nvidia-cudnn-cu12`); `None` for another project.
fn older_pip_package(req: &str) -> Option<crate::version::CudnnPackage> {
    let end = req
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(req.len());
    crate::version::CudnnPackage::from_name(&req[..end])
}

/// Whether `name` is a valid Python project name (PEP 508: letters,
/// digits, `-`, `_`, `.`, starting and ending with a letter or digit).
fn is_project_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// The project (PyPI spelling) and version a wheel file name gives (PEP
/// 427: `{distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl`);
/// `None` for a name that is not a wheel's (`Copy of ….whl`, `x (1).whl`).
fn wheel_file_requirement(name: &str) -> Option<(String, String)> {
    let stem = name.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if !(5..=6).contains(&parts.len())
        || !is_project_name(parts[0])
        || parts[1..].iter().any(|p| {
            p.is_empty()
                || !p
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '!'))
        })
    {
        return None;
    }
    Some((
        crate::version::python_name(parts[0], '-'),
        parts[1].to_string(),
    ))
}

/// One file of a release: a file by size and SHA-256, or a link by its
/// target as stored (`libcudnn.so.9` → `libcudnn.so.9.1.0`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileRecord {
    /// Path relative to the release folder, `/`-separated (`lib/libcudnn.so.9`).
    pub path: String,
    /// What it is.
    #[serde(flatten)]
    pub entry: Entry,
    /// For a file: its modification time in the store (nanoseconds since
    /// the Unix epoch) when it was imported, or when a check last found its
    /// bytes unchanged. With the size it lets `use` and `current` see that
    /// the file is unchanged without reading it, and read it only when the
    /// time differs ([`crate::record::Content::look`]). `None` for links
    /// and in receipts written before this field.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mtime_ns: Option<i64>,
}

impl FileRecord {
    /// A regular file of the release.
    pub fn file(path: impl Into<String>, size: u64, sha256: Sha256Hex) -> FileRecord {
        FileRecord {
            path: path.into(),
            entry: Entry::file(size, sha256),
            mtime_ns: None,
        }
    }

    /// A link of the release to `target`.
    pub fn link(path: impl Into<String>, target: impl Into<String>) -> FileRecord {
        FileRecord {
            path: path.into(),
            entry: Entry::link(target),
            mtime_ns: None,
        }
    }
}

impl Receipt {
    /// The release as the store keys it, e.g. `8.9.7.29_cuda12`,
    /// `9.27.0.42_cuda12+jit`: its folder. A JIT build an older cudnnm
    /// imported keeps the plain id of the folder it is in (deployments and
    /// locks written then name it so); [`Receipt::build_flavour`] says what it is.
    pub fn release_id(&self) -> ReleaseId {
        ReleaseId::new(self.version.clone(), self.cuda)
            .with_flavour(self.flavour.unwrap_or_default())
    }

    /// Which build the files are: as recorded, else what the wheel's own
    /// metadata says (`nvidia-cudnn-jit-cu12`), else the archive's name
    /// (`cudnn_jit-…`), else its libraries (a cuDNN 9 set with the
    /// runtime-compiled engines and without the precompiled ones is JIT).
    pub fn build_flavour(&self) -> Flavour {
        if let Some(f) = self.flavour {
            return f;
        }
        if let Some(p) = self
            .source
            .dist
            .as_ref()
            .and_then(|d| d.name.parse::<Package>().ok())
        {
            return p.flavour;
        }
        if self.source.name.starts_with("cudnn_jit-") {
            return Flavour::Jit;
        }
        flavour_of_files(self.files.iter().map(|f| f.path.as_str()))
    }

    /// The canonical id as text, `8.9.7.29_cuda12`, for messages and commands.
    pub fn id(&self) -> String {
        self.release_id().to_string()
    }

    /// Sum of file sizes in bytes.
    pub fn total_size(&self) -> u64 {
        self.files.iter().map(|f| f.entry.size()).sum()
    }

    /// Parses a receipt.
    ///
    /// # Errors
    /// When the text is not a valid receipt (names `path`).
    pub fn parse(text: &str, path: &Path) -> Result<Receipt> {
        toml::from_str(text).map_err(|e| receipt_error(path, e.message()))
    }

    /// The receipt as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("receipts always encode")
    }
}

/// The flavour a set of files shows (see [`Receipt::build_flavour`]): JIT
/// when a cuDNN 9+ main library comes with the runtime-compiled engines and
/// without the precompiled ones.
pub fn flavour_of_files<'a>(paths: impl Iterator<Item = &'a str>) -> Flavour {
    let (mut rc, mut pre, mut nine) = (false, false, false);
    for p in paths {
        let name = p.rsplit(['/', '\\']).next().unwrap_or(p);
        let Some(n) = crate::names::classify(name) else {
            continue;
        };
        if n.kind != crate::names::FileKind::Shared || n.major.is_none_or(|m| m < 9) {
            continue;
        }
        nine |= n.is_main();
        rc |= n.stem == "cudnn_engines_runtime_compiled";
        pre |= n.stem == "cudnn_engines_precompiled";
    }
    if nine && rc && !pre {
        Flavour::Jit
    } else {
        Flavour::Full
    }
}

/// A receipt that does not parse.
pub(super) fn receipt_error(path: &Path, message: &str) -> Error {
    Error::new(
        Kind::Integrity,
        format!("could not read the receipt '{}'", path.display()),
    )
    .cause(message)
    .hint(match id_of_dir(fsops_parent(path)) {
        Some(id) => format!(
            "reinstall it from the archive or wheel it came from with `cudnnm install ARCHIVE --force`, or remove it with `cudnnm uninstall {id}`"
        ),
        None => "reinstall it from the archive or wheel it came from with `cudnnm install ARCHIVE --force`, or remove its folder".to_string(),
    })
}

fn fsops_parent(path: &Path) -> &Path {
    path.parent().unwrap_or(path)
}

/// The release id a store folder's name gives (`…/cuda-12/9.12.0.46` →
/// `9.12.0.46_cuda12`, `…/9.12.0.46+jit` → `9.12.0.46_cuda12+jit`), `None`
/// for a folder not named like one.
pub(super) fn id_of_dir(dir: &Path) -> Option<crate::version::ReleaseId> {
    let (version, flavour) = ReleaseId::parse_dir_name(dir.file_name()?.to_str()?)?;
    let cuda = dir.parent()?.file_name()?.to_str()?.strip_prefix("cuda-")?;
    let id: ReleaseId = format!("{version}_cuda{cuda}").parse().ok()?;
    Some(id.with_flavour(flavour))
}
