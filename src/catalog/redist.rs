//! NVIDIA's `redistrib_<label>.json` index (docs/releases.md#redist-index), read by
//! `cudnnm manifest refresh` and the maintainer's catalog generator.
//!
//! Two shapes exist, and one file may mix them. Shape A
//! (`redistrib_8.9.7.29.json`, 8.5.0.96, 8.9.2.26) puts one archive object
//! under each platform key and names the CUDA variant only in the file name
//! (`…_cuda12-archive.tar.xz`). Shape B (every 9.x and the republished 8.x)
//! puts a `cudaNN` map under each platform; `redistrib_9.27.0.json` has
//! both under `windows-arm64` (a `cuda13` archive and a `_cuda13.4` one).
//! `size` is a JSON string. The `cudnn` component is the full build, the
//! `cudnn_jit` component (from 9.10) the JIT build ([`Flavour`]);
//! `cudnn_samples` is no release. Paths are kept relative to NVIDIA's
//! `cudnn/redist/` (the `[[redist]]` rows of the catalog) and become archive
//! paths below NVIDIA's base URL, so the mirror rule applies to them.
//!
//! The file is hostile input: an entry without a SHA-256, with a size no
//! archive has, or whose path is not a plain relative path under its
//! component refuses the whole file, naming it; an unknown platform (a new
//! architecture) is skipped with a warning.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Archive, CatalogLayer, PublishedHash};
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::version::{CudaVariant, Flavour, Platform, Version};

/// Where NVIDIA's redist tree sits under the base URL.
pub const REDIST_DIR: &str = "cudnn/redist/";

/// The largest archive size believed: 16 GiB (the largest cuDNN redist
/// archive is 1.9 GB, `redistrib_9.27.0.json`).
pub const MAX_ARCHIVE_BYTES: u64 = 16 << 30;

/// One `redistrib_*.json`, as the catalog's `[[redist]]` table records it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RedistTable {
    /// `release_label` (`9.1.0`), or the component version when absent.
    pub label: String,
    /// The `cudnn` component's version (`9.1.0.70`).
    pub version: Version,
    /// `release_date`, when present.
    pub release_date: Option<String>,
    /// The public address the file was read from.
    pub source: String,
    /// One row per component, platform and CUDA variant.
    pub files: Vec<RedistRow>,
}

/// One archive of a [`RedistTable`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RedistRow {
    /// The platform key.
    pub platform: Platform,
    /// The CUDA variant (the `cudaNN` key, or the file name's).
    pub cuda: CudaVariant,
    /// `cudnn` or `cudnn_jit`.
    pub flavour: Flavour,
    /// Size in bytes.
    pub size: Option<u64>,
    /// The published SHA-256.
    pub sha256: Sha256Hex,
    /// `relative_path`: below [`REDIST_DIR`].
    pub path: String,
}

impl RedistTable {
    /// The table's archives, below `base` (NVIDIA's base URL, or the
    /// catalog file's), each hash credited to [`RedistTable::source`].
    pub fn archives(&self, base: &str, origin: CatalogLayer) -> Vec<Archive> {
        self.files
            .iter()
            .map(|f| Archive {
                version: self.version.clone(),
                cuda: f.cuda,
                platform: f.platform,
                flavour: f.flavour,
                path: format!("{REDIST_DIR}{}", f.path),
                alt_paths: Vec::new(),
                base: base.to_string(),
                size: f.size,
                hashes: vec![PublishedHash {
                    sha256: f.sha256.clone(),
                    source: self.source.clone(),
                }],
                source: self.source.clone(),
                origin,
            })
            .collect()
    }
}

/// Component keys that are not platforms.
const COMPONENT_FIELDS: &[&str] = &["name", "license", "license_path", "version", "cuda_variant"];

/// The components read, with the build each carries.
const COMPONENTS: [(&str, Flavour); 2] = [("cudnn", Flavour::Full), ("cudnn_jit", Flavour::Jit)];

/// Parses one `redistrib_*.json`. `from` names where it was read (a URL or
/// path) for the rows' `source` and for messages; `source`, when given, is
/// the public address recorded instead (the maintainer's fixtures name the
/// repository they were copied from). Unknown platforms are skipped with a
/// warning.
///
/// # Errors
/// [`Kind::Integrity`] naming `from` when the text is not JSON, has no
/// `cudnn` component with a version, or holds an entry without a SHA-256,
/// with an absurd size or a path that is not its component's.
pub fn parse(
    text: &str,
    from: &str,
    source: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<RedistTable> {
    let bad = |why: String| {
        Error::new(
            Kind::Integrity,
            format!("'{from}' is not an NVIDIA redistrib_*.json index"),
        )
        .cause(why)
        .hint("pass a redistrib_<version>.json file or URL, e.g. https://developer.download.nvidia.com/compute/cudnn/redist/redistrib_9.1.0.json; nothing was changed")
    };
    if text.trim_start().starts_with('<') {
        return Err(bad("it is HTML, not JSON (a login or error page?)".into()));
    }
    let root: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let root = root
        .as_object()
        .ok_or_else(|| bad("the top level is not an object".into()))?;
    let comp = root
        .get("cudnn")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("it has no `cudnn` component".into()))?;
    let version: Version = comp
        .get("version")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("the `cudnn` component has no `version`".into()))?
        .parse()
        .map_err(|e: Error| bad(e.message().to_string()))?;
    let label = root
        .get("release_label")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| version.to_string());
    let release_date = root
        .get("release_date")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let source = match source {
        Some(s) => s.to_string(),
        None => {
            let file = from.rsplit(['/', '\\']).next().unwrap_or(from);
            match &release_date {
                Some(d) => format!("NVIDIA {file} (release_date {d}), read from {from}"),
                None => format!("NVIDIA {file}, read from {from}"),
            }
        }
    };

    let mut files = Vec::new();
    for (name, flavour) in COMPONENTS {
        let Some(comp) = root.get(name) else { continue };
        let comp = comp
            .as_object()
            .ok_or_else(|| bad(format!("`{name}` is not an object")))?;
        if flavour == Flavour::Jit {
            let v = comp.get("version").and_then(Value::as_str).unwrap_or("");
            if v != version.to_string() {
                return Err(bad(format!(
                    "`{name}` is version '{v}', `cudnn` is {version}"
                )));
            }
        }
        for (key, value) in comp {
            if COMPONENT_FIELDS.contains(&key.as_str()) {
                continue;
            }
            let platform: Platform = match key.parse() {
                Ok(p) => p,
                Err(_) => {
                    warnings.push(format!(
                        "{from}: platform `{key}` is not one cudnnm knows; skipped"
                    ));
                    continue;
                }
            };
            let obj = value
                .as_object()
                .ok_or_else(|| bad(format!("`{name}.{key}` is not an object")))?;
            let at = Place {
                component: name,
                flavour,
                platform,
                version: &version,
            };
            if obj.contains_key("relative_path") {
                // Shape A: the variant is in the file name.
                files.push(entry(obj, &at, None).map_err(|e| bad(format!("`{name}.{key}`: {e}")))?);
            }
            for (vkey, v) in obj {
                let Some(digits) = vkey.strip_prefix("cuda") else {
                    continue;
                };
                let what = format!("`{name}.{key}.{vkey}`");
                let cuda = CudaVariant::from_name_part(vkey)
                    .filter(|_| !digits.is_empty())
                    .ok_or_else(|| bad(format!("{what}: `{vkey}` is not a CUDA variant")))?;
                let o = v
                    .as_object()
                    .ok_or_else(|| bad(format!("{what} is not an object")))?;
                files.push(entry(o, &at, Some(cuda)).map_err(|e| bad(format!("{what}: {e}")))?);
            }
        }
    }
    if !files.iter().any(|f| f.flavour == Flavour::Full)
        && !comp.keys().all(|k| COMPONENT_FIELDS.contains(&k.as_str()))
    {
        warnings.push(format!("{from}: no archive of a platform cudnnm knows"));
    }
    Ok(RedistTable {
        label,
        version,
        release_date,
        source,
        files,
    })
}

/// Where an archive object sits in the file.
struct Place<'a> {
    component: &'a str,
    flavour: Flavour,
    platform: Platform,
    version: &'a Version,
}

/// One archive object: `relative_path`, `sha256`, `size` (`md5` unread).
fn entry(
    o: &Map<String, Value>,
    at: &Place<'_>,
    cuda: Option<CudaVariant>,
) -> std::result::Result<RedistRow, String> {
    let rel = o
        .get("relative_path")
        .and_then(Value::as_str)
        .ok_or("no `relative_path`")?;
    let plain = |seg: &str| {
        !seg.is_empty()
            && seg != "."
            && seg != ".."
            && seg
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'+'))
    };
    let segs: Vec<&str> = rel.split('/').collect();
    if segs.len() != 3 || !segs.iter().all(|s| plain(s)) {
        return Err(format!(
            "`relative_path` '{}' is not <component>/<platform>/<file>",
            rel.chars().take(120).collect::<String>()
        ));
    }
    let platform = at.platform.as_str();
    let name = segs[2];
    let prefix = format!("{}-{platform}-{}_", at.component, at.version);
    if segs[0] != at.component || segs[1] != platform || !name.starts_with(&prefix) {
        return Err(format!(
            "`relative_path` '{rel}' is not a {} {platform} archive of {}",
            at.component, at.version
        ));
    }
    let from_name = variant_from_name(name);
    let cuda = match (cuda, from_name) {
        (Some(k), Some(n)) if k != n => {
            return Err(format!(
                "the key says CUDA {k} but the file name '{name}' says CUDA {n}"
            ));
        }
        (Some(k), _) => k,
        (None, Some(n)) => n,
        (None, None) => {
            return Err(format!(
                "no CUDA variant: neither a `cudaNN` key nor `_cudaNN` in '{name}'"
            ));
        }
    };
    let sha = o
        .get("sha256")
        .and_then(Value::as_str)
        .ok_or("no `sha256`")?;
    let sha = Sha256Hex::parse(sha).map_err(|e| e.message().to_string())?;
    let size = match o.get("size") {
        Some(Value::String(s)) => Some(s.trim().parse::<u64>().map_err(|_| {
            format!(
                "`size` '{}' is not a byte count",
                s.chars().take(40).collect::<String>()
            )
        })?),
        Some(Value::Number(n)) => Some(n.as_u64().ok_or("`size` is not a byte count")?),
        None => None,
        Some(_) => return Err("`size` is not a byte count".into()),
    };
    if let Some(n) = size
        && (n == 0 || n > MAX_ARCHIVE_BYTES)
    {
        return Err(format!(
            "`size` {n} is absurd for an archive (1 byte to {MAX_ARCHIVE_BYTES})"
        ));
    }
    Ok(RedistRow {
        platform: at.platform,
        cuda,
        flavour: at.flavour,
        size,
        sha256: sha,
        path: rel.to_string(),
    })
}

/// The CUDA variant in a redist file name: `…_cuda12-archive.tar.xz` → 12,
/// `…_cuda11.5-archive.zip` → 11.5, `…_cuda10-archive…` → 10.2.
pub fn variant_from_name(name: &str) -> Option<CudaVariant> {
    let i = name.rfind("_cuda")?;
    let rest = &name[i + 1..];
    let end = rest.find("-archive").unwrap_or(rest.len());
    CudaVariant::from_name_part(&rest[..end])
}

/// File names of `redistrib_*.json` linked from a directory listing (NVIDIA's
/// server, nginx, Apache, `python3 -m http.server` all write `href="…"`),
/// deduplicated, in order of appearance.
pub fn index_links(html: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("redistrib_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .unwrap_or(tail.len());
        let cand = &tail[..end];
        if cand.ends_with(".json")
            && cand["redistrib_".len()..cand.len() - 5]
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.')
            && !out.iter().any(|o| o == cand)
        {
            out.push(cand.to_string());
        }
        rest = &tail[end.max(1)..];
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `redistrib_9.1.0.json` (NVIDIA's file, as vendored by nixpkgs), with
    /// the Linux and Windows entries only (docs/releases.md#redist-index).
    pub(crate) const SAMPLE_B: &str = r#"{
    "release_date": "2024-04-12",
    "release_label": "9.1.0",
    "release_product": "cudnn",
    "cudnn": {
        "name": "NVIDIA CUDA Deep Neural Network library",
        "license": "cudnn",
        "license_path": "cudnn/LICENSE.txt",
        "version": "9.1.0.70",
        "linux-x86_64": {
            "cuda11": {
                "relative_path": "cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda11-archive.tar.xz",
                "sha256": "8210dc5f0d6a04ce20ebfeb39e41e56e22e77a298b1657f9e3db80c650110310",
                "md5": "a9feda485fa5bf167a37eebd0c2dc07d",
                "size": "860293208"
            },
            "cuda12": {
                "relative_path": "cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz",
                "sha256": "fdc6d6f28217b82c400adfdae8f0364fa36c5fb6cb683933e8900a748e70b263",
                "md5": "105585f6",
                "size": "862715244"
            }
        },
        "cuda_variant": ["11", "12"],
        "windows-x86_64": {
            "cuda11": {
                "relative_path": "cudnn/windows-x86_64/cudnn-windows-x86_64-9.1.0.70_cuda11-archive.zip",
                "sha256": "dbe7a9ac532c03bd6626753a6d97dccee3676917c046c67e00da09d857fde6e7",
                "md5": "47e989b3",
                "size": "669864957"
            },
            "cuda12": {
                "relative_path": "cudnn/windows-x86_64/cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip",
                "sha256": "3083b5bf20b0b2b29305de088e0b2cdbb78b5190655a27e8a7c596e47042eedf",
                "md5": "4d558057",
                "size": "669629858"
            }
        },
        "linux-riscv": { "cuda12": { "relative_path": "cudnn/linux-riscv/x_cuda12-archive.tar.xz", "sha256": "zz" } }
    },
    "cudnn_samples": {
        "name": "NVIDIA cuDNN samples", "license": "cudnn", "license_path": "cudnn_samples/LICENSE.txt", "version": "9.1.0.70",
        "source": { "relative_path": "cudnn_samples/source/cudnn_samples-source-9.1.0.70-archive.tar.xz", "sha256": "00", "md5": "00", "size": "1666592" }
    }
}"#;

    #[test]
    fn shape_b_reads_every_variant_and_skips_unknown_platforms() {
        let mut w = Vec::new();
        let r = parse(SAMPLE_B, "/tmp/redistrib_9.1.0.json", None, &mut w).unwrap();
        assert_eq!(r.label, "9.1.0");
        assert_eq!(r.version.to_string(), "9.1.0.70");
        assert_eq!(r.release_date.as_deref(), Some("2024-04-12"));
        let archives = r.archives(crate::catalog::NVIDIA_BASE_URL, CatalogLayer::User);
        assert_eq!(archives.len(), 4, "{w:?}");
        let a = archives
            .iter()
            .find(|a| a.platform == Platform::WindowsX86_64 && a.cuda.to_string() == "12")
            .unwrap();
        assert_eq!(
            a.path,
            "cudnn/redist/cudnn/windows-x86_64/cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip"
        );
        assert_eq!(a.size, Some(669629858));
        assert_eq!(a.flavour, Flavour::Full);
        assert_eq!(
            a.hashes[0].sha256.as_str(),
            "3083b5bf20b0b2b29305de088e0b2cdbb78b5190655a27e8a7c596e47042eedf"
        );
        assert!(
            a.hashes[0]
                .source
                .contains("redistrib_9.1.0.json (release_date 2024-04-12)")
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("linux-riscv"), "{w:?}");
        // A public copy's address is recorded instead when given.
        let r = parse(
            SAMPLE_B,
            "x.json",
            Some("https://github.com/o/r/blob/c/x.json"),
            &mut w,
        )
        .unwrap();
        assert_eq!(r.source, "https://github.com/o/r/blob/c/x.json");
    }

    /// `redistrib_9.27.0.json` (as nixpkgs copied it): the JIT component,
    /// and under `windows-arm64` both shapes at once.
    #[test]
    fn the_jit_component_and_a_mixed_platform_entry_are_read() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/catalog/redist/redistrib_9.27.0.json"
        ))
        .unwrap();
        let mut w = Vec::new();
        let r = parse(&text, "redistrib_9.27.0.json", None, &mut w).unwrap();
        assert!(w.is_empty(), "{w:?}");
        let key = |f: &RedistRow| {
            (
                f.flavour,
                f.platform.as_str().to_string(),
                f.cuda.to_string(),
            )
        };
        let mut keys: Vec<_> = r.files.iter().map(key).collect();
        keys.sort();
        assert_eq!(keys.len(), 12, "{keys:?}");
        assert!(keys.contains(&(Flavour::Full, "windows-arm64".into(), "13".into())));
        assert!(keys.contains(&(Flavour::Full, "windows-arm64".into(), "13.4".into())));
        assert!(keys.contains(&(Flavour::Jit, "linux-sbsa".into(), "13".into())));
        let jit = r
            .files
            .iter()
            .find(|f| {
                f.flavour == Flavour::Jit
                    && f.platform == Platform::LinuxX86_64
                    && f.cuda.major() == 12
            })
            .unwrap();
        assert_eq!(jit.size, Some(49140424));
        assert_eq!(
            jit.path,
            "cudnn_jit/linux-x86_64/cudnn_jit-linux-x86_64-9.27.0.42_cuda12-archive.tar.xz"
        );
    }

    /// Hostile files are refused whole, naming the file.
    #[test]
    fn a_hostile_index_is_refused_naming_it() {
        let good = SAMPLE_B.replace("\"linux-riscv\": { \"cuda12\": { \"relative_path\": \"cudnn/linux-riscv/x_cuda12-archive.tar.xz\", \"sha256\": \"zz\" } }", "\"x\": 1");
        let mut w = Vec::new();
        assert!(parse(&good, "ok.json", None, &mut w).is_ok(), "{w:?}");
        let sha = "8210dc5f0d6a04ce20ebfeb39e41e56e22e77a298b1657f9e3db80c650110310";
        for (bad, why) in [
            ("<html>login</html>".to_string(), "HTML"),
            (
                good.replace(&format!("\"sha256\": \"{sha}\","), ""),
                "no `sha256`",
            ),
            (good.replace(sha, "zz"), "SHA-256"),
            (
                good.replace("\"860293208\"", "\"99999999999999999\""),
                "absurd",
            ),
            (
                good.replace("\"860293208\"", "\"lots\""),
                "not a byte count",
            ),
            (
                good.replace(
                    "cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda11",
                    "cudnn/linux-x86_64/../../../etc/cudnn-linux-x86_64-9.1.0.70_cuda11",
                ),
                "relative_path",
            ),
            (
                good.replace(
                    "cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda11",
                    "cudnn/linux-x86_64/cudnn-windows-x86_64-9.1.0.70_cuda11",
                ),
                "relative_path",
            ),
        ] {
            let e = parse(
                &bad,
                "https://mirror.example/redistrib_9.1.0.json",
                None,
                &mut w,
            )
            .unwrap_err();
            assert_eq!(e.kind(), Kind::Integrity, "{why}");
            assert!(
                e.message()
                    .contains("https://mirror.example/redistrib_9.1.0.json"),
                "{e}"
            );
            assert!(e.causes().iter().any(|c| c.contains(why)), "{why}: {e:?}");
        }
    }

    #[test]
    fn shape_a_takes_the_variant_from_the_file_name() {
        let text = r#"{ "release_date": "2023-12-05", "release_label": "8.9.7.29",
          "cudnn": { "version": "8.9.7.29",
            "linux-x86_64": { "relative_path": "cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz",
              "sha256": "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb", "md5": "x", "size": "864984964" },
            "linux-riscv": { "relative_path": "a_cuda12-archive.tar.xz", "sha256": "00" } } }"#;
        let mut w = Vec::new();
        let r = parse(text, "redistrib_8.9.7.29.json", None, &mut w).unwrap();
        assert_eq!(r.files.len(), 1, "{w:?}");
        assert_eq!(r.files[0].cuda.to_string(), "12");
        assert_eq!(r.files[0].size, Some(864984964));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w.iter().any(|x| x.contains("linux-riscv")));
    }

    #[test]
    fn not_an_index() {
        let mut w = Vec::new();
        for text in ["<html>login</html>", "[1,2]", r#"{"cuda_cudart": {}}"#] {
            let e = parse(text, "x.json", None, &mut w).unwrap_err();
            assert_eq!(e.kind(), Kind::Integrity);
            assert!(e.message().contains("x.json"));
        }
    }

    #[test]
    fn variants_from_names_and_index_links() {
        let v = |n: &str| variant_from_name(n).map(|c| c.to_string());
        assert_eq!(
            v("cudnn-linux-x86_64-8.6.0.163_cuda10-archive.tar.xz").as_deref(),
            Some("10.2")
        );
        assert_eq!(
            v("cudnn-windows-x86_64-8.3.2.44_cuda11.5-archive.zip").as_deref(),
            Some("11.5")
        );
        assert_eq!(v("cudnn-11.2-windows-x64-v8.1.0.77.zip"), None);
        let html = r#"<a href="redistrib_9.1.0.json">redistrib_9.1.0.json</a>
            <a href='redistrib_8.9.7.29.json'>x</a> <a href="redistrib_latest.json">
            <a href="cudnn/">cudnn/</a> redistrib_9.1.0.json"#;
        assert_eq!(
            index_links(html),
            vec!["redistrib_9.1.0.json", "redistrib_8.9.7.29.json"]
        );
    }
}
