//! NVIDIA's `redistrib_<label>.json` index (docs/releases.md#redist-index), read by
//! `cudnnm manifest refresh`.
//!
//! Two shapes exist. Shape A (`redistrib_8.9.7.29.json`, 8.5.0.96, 8.9.2.26)
//! puts one archive object under each platform key and names the CUDA variant
//! only in the file name (`…_cuda12-archive.tar.xz`). Shape B (every 9.x and
//! the republished 8.x) puts a `cudaNN` map under each platform and lists the
//! variants in `cuda_variant`. `size` is a JSON string in both. Only the
//! `cudnn` component is read (`cudnn_samples`, `cudnn_jit` are not releases
//! cudnnm installs). Paths are stored relative to NVIDIA's base URL
//! (`cudnn/redist/` + `relative_path`), so the mirror rule applies to them.

use serde_json::{Map, Value};

use super::{Archive, CatalogLayer, PublishedHash};
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::version::{CudaVariant, Platform, Version};

/// Where NVIDIA's redist tree sits under the base URL.
pub const REDIST_DIR: &str = "cudnn/redist/";

/// What one `redistrib_*.json` file yielded.
#[derive(Debug)]
pub struct RedistIndex {
    /// `release_label` (`9.1.0`), or the component version when absent.
    pub label: String,
    /// The `cudnn` component's version (`9.1.0.70`).
    pub version: Version,
    /// `release_date`, when present.
    pub release_date: Option<String>,
    /// One entry per platform and CUDA variant.
    pub archives: Vec<Archive>,
}

/// Component keys that are not platforms.
const COMPONENT_FIELDS: &[&str] = &["name", "license", "license_path", "version", "cuda_variant"];

/// Parses one `redistrib_*.json`. `from` names where it was read (a URL or
/// path) for the archives' `source` and for messages. Malformed archive
/// entries are skipped with a warning.
///
/// # Errors
/// [`Kind::Integrity`] when the text is not JSON or has no `cudnn` component
/// with a version.
pub fn parse(text: &str, from: &str, warnings: &mut Vec<String>) -> Result<RedistIndex> {
    let bad = |why: String| {
        Error::new(
            Kind::Integrity,
            format!("'{from}' is not an NVIDIA redistrib_*.json index"),
        )
        .cause(why)
        .hint("pass a redistrib_<version>.json file or URL, e.g. https://developer.download.nvidia.com/compute/cudnn/redist/redistrib_9.1.0.json")
    };
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
    let file = from.rsplit(['/', '\\']).next().unwrap_or(from);
    let source = match &release_date {
        Some(d) => format!("NVIDIA {file} (release_date {d}), read from {from}"),
        None => format!("NVIDIA {file}, read from {from}"),
    };

    let mut archives = Vec::new();
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
        let Some(obj) = value.as_object() else {
            warnings.push(format!("{from}: `cudnn.{key}` is not an object; skipped"));
            continue;
        };
        if obj.contains_key("relative_path") {
            // Shape A: the variant is in the file name.
            match entry(obj, &version, platform, None, &source) {
                Ok(a) => archives.push(a),
                Err(e) => warnings.push(format!("{from}: skipped `cudnn.{key}`: {e}")),
            }
        } else {
            // Shape B: `cudaNN` → archive.
            for (vkey, v) in obj {
                let what = format!("`cudnn.{key}.{vkey}`");
                let Some(cuda) = CudaVariant::from_name_part(vkey) else {
                    warnings.push(format!(
                        "{from}: skipped {what}: `{vkey}` is not a CUDA variant"
                    ));
                    continue;
                };
                match v.as_object() {
                    Some(o) => match entry(o, &version, platform, Some(cuda), &source) {
                        Ok(a) => archives.push(a),
                        Err(e) => warnings.push(format!("{from}: skipped {what}: {e}")),
                    },
                    None => warnings.push(format!("{from}: skipped {what}: not an object")),
                }
            }
        }
    }
    Ok(RedistIndex {
        label,
        version,
        release_date,
        archives,
    })
}

/// One archive object: `relative_path`, `sha256`, `md5`, `size`.
fn entry(
    o: &Map<String, Value>,
    version: &Version,
    platform: Platform,
    cuda: Option<CudaVariant>,
    source: &str,
) -> std::result::Result<Archive, String> {
    let rel = o
        .get("relative_path")
        .and_then(Value::as_str)
        .ok_or("no `relative_path`")?;
    if rel.is_empty() || rel.starts_with('/') || rel.split('/').any(|s| s == ".." || s.is_empty()) {
        return Err(format!("`relative_path` '{rel}' is not a relative path"));
    }
    let name = rel.rsplit('/').next().unwrap_or(rel);
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
        Some(Value::String(s)) => Some(
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("`size` '{s}' is not a byte count"))?,
        ),
        Some(Value::Number(n)) => Some(n.as_u64().ok_or("`size` is not a byte count")?),
        _ => None,
    };
    Ok(Archive {
        version: version.clone(),
        cuda,
        platform,
        path: format!("{REDIST_DIR}{rel}"),
        alt_paths: Vec::new(),
        base: super::NVIDIA_BASE_URL.to_string(),
        size,
        hashes: vec![PublishedHash {
            sha256: sha,
            source: source.to_string(),
        }],
        source: source.to_string(),
        origin: CatalogLayer::User,
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
        "linux-aarch64": { "cuda12": { "relative_path": "cudnn/linux-aarch64/x_cuda12-archive.tar.xz", "sha256": "zz" } }
    },
    "cudnn_samples": {
        "name": "NVIDIA cuDNN samples", "license": "cudnn", "license_path": "cudnn_samples/LICENSE.txt", "version": "9.1.0.70",
        "source": { "relative_path": "cudnn_samples/source/cudnn_samples-source-9.1.0.70-archive.tar.xz", "sha256": "00", "md5": "00", "size": "1666592" }
    }
}"#;

    #[test]
    fn shape_b_reads_every_variant_and_skips_bad_entries() {
        let mut w = Vec::new();
        let r = parse(SAMPLE_B, "/tmp/redistrib_9.1.0.json", &mut w).unwrap();
        assert_eq!(r.label, "9.1.0");
        assert_eq!(r.version.to_string(), "9.1.0.70");
        assert_eq!(r.release_date.as_deref(), Some("2024-04-12"));
        assert_eq!(r.archives.len(), 4, "{w:?}");
        let a = r
            .archives
            .iter()
            .find(|a| a.platform == Platform::WindowsX86_64 && a.cuda.to_string() == "12")
            .unwrap();
        assert_eq!(
            a.path,
            "cudnn/redist/cudnn/windows-x86_64/cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip"
        );
        assert_eq!(a.size, Some(669629858));
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
        assert!(w[0].contains("cudnn.linux-aarch64.cuda12") && w[0].contains("SHA-256"));
    }

    #[test]
    fn shape_a_takes_the_variant_from_the_file_name() {
        let text = r#"{ "release_date": "2023-12-05", "release_label": "8.9.7.29",
          "cudnn": { "version": "8.9.7.29",
            "linux-x86_64": { "relative_path": "cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz",
              "sha256": "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb", "md5": "x", "size": "864984964" },
            "linux-ppc64le": { "relative_path": "cudnn/linux-ppc64le/cudnn-linux-ppc64le-8.9.7.29_cuda12-archive.tar.xz",
              "sha256": "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb", "size": "lots" },
            "linux-riscv": { "relative_path": "a_cuda12-archive.tar.xz", "sha256": "00" } } }"#;
        let mut w = Vec::new();
        let r = parse(text, "redistrib_8.9.7.29.json", &mut w).unwrap();
        assert_eq!(r.archives.len(), 1, "{w:?}");
        assert_eq!(r.archives[0].cuda.to_string(), "12");
        assert_eq!(r.archives[0].size, Some(864984964));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().any(|x| x.contains("`size` 'lots'")));
        assert!(w.iter().any(|x| x.contains("linux-riscv")));
    }

    #[test]
    fn not_an_index() {
        let mut w = Vec::new();
        for text in ["<html>login</html>", "[1,2]", r#"{"cuda_cudart": {}}"#] {
            let e = parse(text, "x.json", &mut w).unwrap_err();
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
