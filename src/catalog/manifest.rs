//! The catalog file format: `manifest.toml` (embedded) and `catalog.toml`
//! (the user catalog written by `cudnnm manifest refresh`) share one schema.
//!
//! Archives come as `[[archive]]` tables (one per file, typed by hand from
//! the sources their comments name) and as `[[redist]]` tables (one per
//! NVIDIA `redistrib_*.json`, its files as inline rows, written by the
//! generator in `generate`); PyPI wheels as `[[wheel]]` tables (one per
//! package, every file with its URL, size, SHA-256 and yanked state).
//!
//! Reading is lenient on purpose: a catalog is data that outlives the binary
//! that reads it. Unknown keys are reported as warnings and ignored, and a
//! malformed entry is skipped with a warning naming it, so one bad line never
//! makes the rest of the catalog unusable. Only a file that is not TOML at all
//! is lost as a whole (again with a warning, never an error).

use serde::{Deserialize, Serialize};

use super::pypi::{self, WheelName};
use super::redist::{RedistRow, RedistTable};
use super::{
    Archive, CatalogLayer, DriverRow, FrameworkBuild, GpuRow, PublishedHash, SCHEMA, SupportRow,
    WheelFile, WheelList,
};
use crate::hash::Sha256Hex;
use crate::version::{CudaVariant, DriverVersion, Flavour, Package, Platform, Version};

/// Everything one catalog file holds, already validated.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    pub archives: Vec<Archive>,
    pub support: Vec<SupportRow>,
    pub drivers: Vec<DriverRow>,
    pub frameworks: Vec<FrameworkBuild>,
    pub wheels: Vec<WheelList>,
    pub gpus: Vec<GpuRow>,
    /// `[[redist]]` tables (their archives are not in `archives`).
    pub redists: Vec<RedistTable>,
    /// The file's base URL (normalized).
    pub base: String,
    /// `written` of a user catalog: when `manifest refresh` wrote it (RFC 3339).
    pub written: Option<String>,
}

const TOP_KEYS: &[&str] = &[
    "schema",
    "base_url",
    "written",
    "archive",
    "redist",
    "support",
    "gpu",
    "driver",
    "framework",
    "wheel",
];
const ARCHIVE_KEYS: &[&str] = &[
    "version",
    "cuda",
    "platform",
    "flavour",
    "path",
    "alt_paths",
    "source",
    "size",
    "hashes",
];
const REDIST_KEYS: &[&str] = &["label", "version", "release_date", "source", "files"];
const REDIST_FILE_KEYS: &[&str] = &["platform", "cuda", "flavour", "size", "sha256", "path"];
const GPU_KEYS: &[&str] = &[
    "architecture",
    "compute",
    "cudnn",
    "cuda",
    "driver_linux",
    "driver_windows",
    "source",
];
const HASH_KEYS: &[&str] = &["sha256", "source"];
const SUPPORT_KEYS: &[&str] = &["cudnn", "cuda", "toolkits", "min_compute", "source"];
const DRIVER_KEYS: &[&str] = &["cuda", "linux", "windows", "label", "prerelease"];
const FRAMEWORK_KEYS: &[&str] = &[
    "name", "os", "channel", "versions", "cuda", "cudnn", "source",
];
const WHEEL_KEYS: &[&str] = &["package", "cuda", "source", "read", "versions", "files"];
const WHEEL_FILE_KEYS: &[&str] = &["url", "file", "size", "sha256", "yanked", "yanked_reason"];

/// One `[[archive]]` table as written in the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ArchiveToml {
    pub version: Version,
    pub cuda: CudaVariant,
    pub platform: Platform,
    #[serde(default, skip_serializing_if = "Flavour::is_full")]
    pub flavour: Flavour,
    pub path: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alt_paths: Vec<String>,
    #[serde(default)]
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default)]
    pub hashes: Vec<HashToml>,
}

/// One accepted hash of an archive, with who published it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct HashToml {
    pub sha256: Sha256Hex,
    #[serde(default)]
    pub source: String,
}

#[derive(Debug, Deserialize)]
struct SupportToml {
    cudnn: [Version; 2],
    #[serde(default)]
    cuda: Option<CudaVariant>,
    #[serde(default)]
    toolkits: Vec<Version>,
    #[serde(default)]
    min_compute: Option<Version>,
    #[serde(default)]
    source: String,
}

#[derive(Debug, Deserialize)]
struct DriverToml {
    cuda: Version,
    linux: DriverVersion,
    #[serde(default)]
    windows: Option<DriverVersion>,
    #[serde(default)]
    label: String,
    #[serde(default)]
    prerelease: bool,
}

#[derive(Debug, Deserialize)]
struct FrameworkToml {
    name: String,
    #[serde(default)]
    os: Option<String>,
    #[serde(default)]
    #[allow(dead_code)] // documented in the file; not part of FrameworkBuild
    channel: Option<String>,
    versions: [Version; 2],
    cuda: Version,
    cudnn: Version,
    #[serde(default)]
    #[allow(dead_code)] // documented in the file: where the row can be checked
    source: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WheelToml {
    package: String,
    #[serde(default)]
    cuda: Option<CudaVariant>,
    #[serde(default)]
    source: String,
    #[serde(default)]
    read: Option<String>,
    #[serde(default)]
    versions: Vec<Version>,
    #[serde(default)]
    files: Vec<toml::Value>,
}

/// One `files` element of a `[[wheel]]` table: a wheel file the index
/// lists. Its name (the URL's last part, or `file`) says the version and
/// the platform tag.
#[derive(Debug, Deserialize)]
struct WheelFileToml {
    url: String,
    #[serde(default)]
    file: Option<String>,
    size: u64,
    sha256: Sha256Hex,
    #[serde(default)]
    yanked: bool,
    #[serde(default)]
    yanked_reason: Option<String>,
}

/// One `[[redist]]` table: NVIDIA's `redistrib_<label>.json`, its files as rows.
#[derive(Debug, Deserialize)]
struct RedistToml {
    #[serde(default)]
    label: String,
    version: Version,
    #[serde(default)]
    release_date: Option<String>,
    #[serde(default)]
    source: String,
    #[serde(default)]
    files: Vec<toml::Value>,
}

/// One row of a `[[redist]]` table: `relative_path` below NVIDIA's
/// `cudnn/redist/`, as the JSON gives it.
#[derive(Debug, Deserialize)]
struct RedistFileToml {
    platform: Platform,
    cuda: CudaVariant,
    #[serde(default)]
    flavour: Flavour,
    #[serde(default)]
    size: Option<u64>,
    sha256: Sha256Hex,
    path: String,
}

/// One `[[gpu]]` row: what an architecture needs (docs/releases.md#gpu-ceilings).
#[derive(Debug, Deserialize)]
struct GpuToml {
    architecture: String,
    compute: [Version; 2],
    cudnn: Version,
    cuda: Version,
    #[serde(default)]
    driver_linux: Option<DriverVersion>,
    #[serde(default)]
    driver_windows: Option<DriverVersion>,
    #[serde(default)]
    source: String,
}

/// Parses one catalog file. `label` names it in warnings (`manifest.toml`,
/// the user catalog's path); `origin` is recorded on every archive.
/// Problems become `warnings`; this never fails.
pub(crate) fn parse(
    text: &str,
    label: &str,
    origin: CatalogLayer,
    warnings: &mut Vec<String>,
) -> Parsed {
    let mut out = Parsed::default();
    let table: toml::Table = match toml::from_str(text) {
        Ok(t) => t,
        Err(e) => {
            warnings.push(format!(
                "{label} is not valid TOML and was ignored: {}",
                e.message().trim()
            ));
            return out;
        }
    };
    match table.get("schema").map(|v| v.as_integer()) {
        None => warnings.push(format!(
            "{label} has no `schema` field; reading it as schema {SCHEMA}"
        )),
        Some(Some(n)) if n == i64::from(SCHEMA) => {}
        Some(Some(n)) if n > i64::from(SCHEMA) => warnings.push(format!(
            "{label} uses catalog schema {n}, newer than this cudnnm's {SCHEMA}; reading what this build understands"
        )),
        Some(other) => warnings.push(format!(
            "{label} has an unexpected `schema` value {other:?}; reading it as schema {SCHEMA}"
        )),
    }
    let base = match table.get("base_url") {
        None => super::NVIDIA_BASE_URL.to_string(),
        Some(toml::Value::String(s)) => super::normalize_base(s),
        Some(_) => {
            warnings.push(format!(
                "{label}: `base_url` is not a string; using {}",
                super::NVIDIA_BASE_URL
            ));
            super::NVIDIA_BASE_URL.to_string()
        }
    };
    for key in table.keys() {
        if !TOP_KEYS.contains(&key.as_str()) {
            warnings.push(format!("{label}: unknown field `{key}` ignored"));
        }
    }
    out.base = base.clone();
    out.written = table
        .get("written")
        .and_then(|v| v.as_str())
        .map(str::to_owned);

    for (i, item) in entries(&table, "archive", label, warnings) {
        let what = describe(&item, i, "archive");
        warn_unknown(&item, ARCHIVE_KEYS, label, &what, warnings);
        if let Some(toml::Value::Array(hs)) = item.get("hashes") {
            for h in hs {
                warn_unknown(h, HASH_KEYS, label, &what, warnings);
            }
        }
        match item.try_into::<ArchiveToml>() {
            Ok(a) => match archive_from_toml(a, &base, origin) {
                Ok(a) => out.archives.push(a),
                Err(e) => warnings.push(format!("{label}: skipped {what}: {e}")),
            },
            Err(e) => warnings.push(format!("{label}: skipped {what}: {}", e.message().trim())),
        }
    }
    for (i, item) in entries(&table, "redist", label, warnings) {
        let what = format!(
            "redist table {} ({})",
            i + 1,
            item.get("label").and_then(|v| v.as_str()).unwrap_or("?")
        );
        warn_unknown(&item, REDIST_KEYS, label, &what, warnings);
        match item.try_into::<RedistToml>() {
            Ok(r) => out.redists.push(redist_table(r, (label, &what), warnings)),
            Err(e) => warnings.push(format!("{label}: skipped {what}: {}", e.message().trim())),
        }
    }
    for (i, item) in entries(&table, "gpu", label, warnings) {
        let what = format!("gpu row {}", i + 1);
        warn_unknown(&item, GPU_KEYS, label, &what, warnings);
        match item.try_into::<GpuToml>() {
            Ok(g) => out.gpus.push(GpuRow {
                architecture: g.architecture,
                first: g.compute[0].clone(),
                last: g.compute[1].clone(),
                cudnn: g.cudnn,
                cuda: g.cuda,
                driver_linux: g.driver_linux,
                driver_windows: g.driver_windows,
                source: g.source,
            }),
            Err(e) => warnings.push(format!("{label}: skipped {what}: {}", e.message().trim())),
        }
    }
    for (i, item) in entries(&table, "support", label, warnings) {
        let what = format!("support row {}", i + 1);
        warn_unknown(&item, SUPPORT_KEYS, label, &what, warnings);
        match item.try_into::<SupportToml>() {
            Ok(s) => out.support.push(SupportRow {
                first: s.cudnn[0].clone(),
                last: s.cudnn[1].clone(),
                cuda: s.cuda,
                toolkits: s.toolkits,
                min_compute: s.min_compute,
                source: s.source,
            }),
            Err(e) => warnings.push(format!("{label}: skipped {what}: {}", e.message().trim())),
        }
    }
    for (i, item) in entries(&table, "driver", label, warnings) {
        let what = format!("driver row {}", i + 1);
        warn_unknown(&item, DRIVER_KEYS, label, &what, warnings);
        match item.try_into::<DriverToml>() {
            Ok(d) => out.drivers.push(DriverRow {
                cuda: d.cuda,
                linux: d.linux,
                windows: d.windows,
                label: d.label,
                prerelease: d.prerelease,
            }),
            Err(e) => warnings.push(format!("{label}: skipped {what}: {}", e.message().trim())),
        }
    }
    for (i, item) in entries(&table, "framework", label, warnings) {
        let what = format!("framework row {}", i + 1);
        warn_unknown(&item, FRAMEWORK_KEYS, label, &what, warnings);
        match item.try_into::<FrameworkToml>() {
            Ok(f) => out.frameworks.push(FrameworkBuild {
                framework: f.name,
                first: f.versions[0].clone(),
                last: f.versions[1].clone(),
                os: f.os,
                cuda: f.cuda,
                cudnn: f.cudnn,
            }),
            Err(e) => warnings.push(format!("{label}: skipped {what}: {}", e.message().trim())),
        }
    }
    for (i, item) in entries(&table, "wheel", label, warnings) {
        let what = format!(
            "wheel list {} ({})",
            i + 1,
            item.get("package").and_then(|v| v.as_str()).unwrap_or("?")
        );
        warn_unknown(&item, WHEEL_KEYS, label, &what, warnings);
        match item.try_into::<WheelToml>() {
            Ok(w) => match wheel_list(w, (label, &what), warnings) {
                Ok(w) => out.wheels.push(w),
                Err(e) => warnings.push(format!("{label}: skipped {what}: {e}")),
            },
            Err(e) => warnings.push(format!("{label}: skipped {what}: {}", e.message().trim())),
        }
    }
    out
}

/// A `[[wheel]]` table: its package (which names the CUDA major and the
/// flavour), its files, each read back from its file name; a file that is
/// not a release of the package for a platform cudnnm knows, or whose URL
/// is not HTTPS, is skipped with a warning. `at` is (file label, table).
fn wheel_list(
    w: WheelToml,
    at: (&str, &str),
    warnings: &mut Vec<String>,
) -> Result<WheelList, String> {
    let (label, what) = at;
    let package: Package = w
        .package
        .parse()
        .map_err(|e: crate::error::Error| e.message().to_string())?;
    if let Some(c) = w.cuda
        && c != package.cuda_variant()
    {
        return Err(format!(
            "`cuda` {c} disagrees with the package name {package}"
        ));
    }
    let mut files = Vec::with_capacity(w.files.len());
    for (j, item) in w.files.into_iter().enumerate() {
        let fwhat = format!("{what} file {}", j + 1);
        warn_unknown(&item, WHEEL_FILE_KEYS, label, &fwhat, warnings);
        let f = match item.try_into::<WheelFileToml>() {
            Ok(f) => f,
            Err(e) => {
                warnings.push(format!("{label}: skipped {fwhat}: {}", e.message().trim()));
                continue;
            }
        };
        match wheel_file(f, package) {
            Ok(f) => files.push(f),
            Err(e) => warnings.push(format!("{label}: skipped {fwhat}: {e}")),
        }
    }
    let mut versions: Vec<Version> = w.versions;
    versions.extend(files.iter().map(|f| f.version.clone()));
    versions.sort();
    versions.dedup();
    Ok(WheelList {
        package: package.name(),
        cuda: package.cuda_variant(),
        flavour: package.flavour,
        versions,
        source: w.source,
        read: w.read,
        files,
    })
}

/// One wheel file of `package`, its version and platform read from its name.
fn wheel_file(f: WheelFileToml, package: Package) -> Result<WheelFile, String> {
    let filename = match f.file {
        Some(n) => n,
        None => f
            .url
            .split(['?', '#'])
            .next()
            .and_then(|u| u.rsplit('/').next())
            .unwrap_or_default()
            .to_string(),
    };
    let name = WheelName::parse(&filename)
        .ok_or_else(|| format!("'{filename}' is not a wheel's file name"))?;
    if name.project != package.name() {
        return Err(format!("'{filename}' is not a file of {package}"));
    }
    let Some(version) = crate::version::release_of(&name.version) else {
        return Err(format!("'{filename}' is a pre-release"));
    };
    let platform = pypi::platform_of(&name)
        .ok_or_else(|| format!("'{filename}' is for no platform cudnnm installs"))?;
    if !pypi::url_allowed(&f.url) {
        return Err(format!("the URL '{}' is not HTTPS", f.url));
    }
    if f.size == 0 || f.size > pypi::MAX_WHEEL_BYTES {
        return Err(format!("the size {} is not a wheel's", f.size));
    }
    Ok(WheelFile {
        version,
        dist_version: name.version,
        platform,
        tag: name.platform_tag,
        filename,
        url: f.url,
        size: f.size,
        sha256: f.sha256,
        yanked: f.yanked.then(|| f.yanked_reason.unwrap_or_default()),
    })
}

/// A `[[redist]]` table, each row checked; a bad row is skipped with a
/// warning. `at` is (file label, table).
fn redist_table(r: RedistToml, at: (&str, &str), warnings: &mut Vec<String>) -> RedistTable {
    let (label, what) = at;
    let mut files = Vec::new();
    for (j, item) in r.files.into_iter().enumerate() {
        let fwhat = format!("{what} file {}", j + 1);
        warn_unknown(&item, REDIST_FILE_KEYS, label, &fwhat, warnings);
        let f = match item.try_into::<RedistFileToml>() {
            Ok(f) => f,
            Err(e) => {
                warnings.push(format!("{label}: skipped {fwhat}: {}", e.message().trim()));
                continue;
            }
        };
        if let Err(e) = check_path(&format!("{}{}", super::redist::REDIST_DIR, f.path)) {
            warnings.push(format!("{label}: skipped {fwhat}: {e}"));
            continue;
        }
        files.push(RedistRow {
            platform: f.platform,
            cuda: f.cuda,
            flavour: f.flavour,
            size: f.size,
            sha256: f.sha256,
            path: f.path,
        });
    }
    RedistTable {
        label: r.label,
        version: r.version,
        release_date: r.release_date,
        source: r.source,
        files,
    }
}

/// The elements of the array `key` (array of tables or inline array).
fn entries(
    table: &toml::Table,
    key: &str,
    label: &str,
    warnings: &mut Vec<String>,
) -> Vec<(usize, toml::Value)> {
    match table.get(key) {
        None => Vec::new(),
        Some(toml::Value::Array(a)) => a.iter().cloned().enumerate().collect(),
        Some(_) => {
            warnings.push(format!("{label}: `{key}` is not a list; ignored"));
            Vec::new()
        }
    }
}

/// `archive 12 (8.9.7.29 cuda12 linux-x86_64)`, from whatever fields parse.
fn describe(item: &toml::Value, i: usize, kind: &str) -> String {
    let field = |k: &str| item.get(k).and_then(|v| v.as_str()).unwrap_or("?");
    format!(
        "{kind} {} ({} cuda{} {})",
        i + 1,
        field("version"),
        field("cuda"),
        field("platform")
    )
}

fn warn_unknown(
    item: &toml::Value,
    known: &[&str],
    label: &str,
    what: &str,
    warnings: &mut Vec<String>,
) {
    if let Some(t) = item.as_table() {
        for k in t.keys() {
            if !known.contains(&k.as_str()) {
                warnings.push(format!("{label}: {what}: unknown field `{k}` ignored"));
            }
        }
    }
}

/// Checks what serde cannot: a usable path, no duplicate hashes.
fn archive_from_toml(a: ArchiveToml, base: &str, origin: CatalogLayer) -> Result<Archive, String> {
    check_path(&a.path)?;
    for p in &a.alt_paths {
        check_path(p)?;
    }
    let mut hashes: Vec<PublishedHash> = Vec::new();
    for h in a.hashes {
        if !hashes.iter().any(|x| x.sha256 == h.sha256) {
            hashes.push(PublishedHash {
                sha256: h.sha256,
                source: h.source,
            });
        }
    }
    Ok(Archive {
        version: a.version,
        cuda: a.cuda,
        platform: a.platform,
        flavour: a.flavour,
        path: a.path,
        alt_paths: a.alt_paths,
        base: base.to_string(),
        size: a.size,
        hashes,
        source: a.source,
        origin,
    })
}

/// A path is relative to the base URL (no leading `/`, no `..`, ends in a
/// file name), or an absolute `http(s)://` / `file://` URL.
fn check_path(p: &str) -> Result<(), String> {
    if super::is_absolute_url(p) {
        return match p.rsplit('/').next() {
            Some(n) if !n.is_empty() => Ok(()),
            _ => Err(format!("URL '{p}' does not end in a file name")),
        };
    }
    if p.is_empty() || p.starts_with('/') || p.contains('\\') || p.contains("://") {
        return Err(format!(
            "path '{p}' is not relative to the base URL (write it as redist/cudnn/…)"
        ));
    }
    if p.split('/').any(|s| s == ".." || s == "." || s.is_empty()) {
        return Err(format!("path '{p}' has an empty, '.' or '..' component"));
    }
    Ok(())
}

/// The TOML form of an archive, for writing the user catalog.
pub(crate) fn archive_to_toml(a: &Archive) -> ArchiveToml {
    ArchiveToml {
        version: a.version.clone(),
        cuda: a.cuda,
        platform: a.platform,
        flavour: a.flavour,
        path: a.path.clone(),
        alt_paths: a.alt_paths.clone(),
        source: a.source.clone(),
        size: a.size,
        hashes: a
            .hashes
            .iter()
            .map(|h| HashToml {
                sha256: h.sha256.clone(),
                source: h.source.clone(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb";

    fn parse_str(s: &str) -> (Parsed, Vec<String>) {
        let mut w = Vec::new();
        let p = parse(s, "test.toml", CatalogLayer::User, &mut w);
        (p, w)
    }

    #[test]
    fn malformed_entries_are_skipped_and_unknown_fields_warned() {
        let text = format!(
            r#"
schema = 1
colour = "blue"

[[archive]]
version = "8.9.7.29"
cuda = "12"
platform = "linux-x86_64"
path = "cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"
mood = "happy"
hashes = [{{ sha256 = "{GOOD}", source = "NVIDIA", extra = 1 }}]

[[archive]]
version = "8.9.7.29"
cuda = "11"
platform = "linux-x86_64"
path = "x.tar.xz"
hashes = [{{ sha256 = "not-a-hash" }}]

[[archive]]
version = "banana"
cuda = "12"
platform = "linux-x86_64"
path = "y.tar.xz"

[[archive]]
version = "9.1.0.70"
cuda = "12"
platform = "linux-x86_64"
path = "../etc/passwd"
"#
        );
        let (p, w) = parse_str(&text);
        assert_eq!(p.archives.len(), 1, "{w:#?}");
        assert_eq!(p.archives[0].hashes[0].sha256.as_str(), GOOD);
        assert_eq!(p.archives[0].base, super::super::NVIDIA_BASE_URL);
        let all = w.join("\n");
        for needle in [
            "unknown field `colour`",
            "unknown field `mood`",
            "unknown field `extra`",
            "skipped archive 2 (8.9.7.29 cuda11 linux-x86_64)",
            "not a SHA-256",
            "skipped archive 3 (banana",
            "skipped archive 4 (9.1.0.70",
            "'..'",
        ] {
            assert!(all.contains(needle), "warnings lack {needle:?}:\n{all}");
        }
    }

    #[test]
    fn newer_schema_and_broken_toml_warn() {
        let (p, w) = parse_str("schema = 7\n");
        assert!(p.archives.is_empty());
        assert!(w[0].contains("schema 7, newer"), "{w:?}");
        let (_, w) = parse_str("schema = [");
        assert!(w[0].contains("not valid TOML"), "{w:?}");
        let (_, w) = parse_str("archive = []\n");
        assert!(w[0].contains("no `schema`"), "{w:?}");
    }

    #[test]
    fn user_catalog_round_trips() {
        let text = format!(
            "schema = 1\nbase_url = \"http://127.0.0.1:1/c\"\n[[archive]]\nversion = \"9.1.0.70\"\ncuda = \"12\"\nplatform = \"windows-x86_64\"\npath = \"a/b.zip\"\nsize = 5\nsource = \"s\"\nhashes = [{{ sha256 = \"{GOOD}\", source = \"h\" }}]\n"
        );
        let (p, w) = parse_str(&text);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(p.archives[0].base, "http://127.0.0.1:1/c/");
        let parts = super::super::generate::UserParts {
            archives: p.archives.clone(),
            ..Default::default()
        };
        let again = super::super::generate::user_catalog(&parts, &p.archives[0].base, "now");
        let (q, w) = parse_str(&again);
        assert!(w.is_empty(), "{w:?}\n{again}");
        assert_eq!(q.archives.len(), 1);
        assert_eq!(q.archives[0].size, Some(5));
        assert_eq!(q.archives[0].hashes[0].source, "h");
        assert_eq!(q.archives[0].base, "http://127.0.0.1:1/c/");
    }
}
