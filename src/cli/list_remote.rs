//! `cudnnm list --remote`: the catalog for a platform, installed releases marked.

use std::collections::HashSet;

use serde::Serialize;

use super::Ctx;
use super::support::human_size;
use crate::catalog::{self, Catalog, CatalogLayer, PublishedHash, resolve};
use crate::error::{Error, Kind, Result};
use crate::store::Store;
use crate::version::{self, CudaVariant, Platform, Version};

/// One line of the listing (text and `--json` come from the same rows).
#[derive(Debug, Serialize)]
struct Row {
    /// `8.1.0.77_cuda11.2`.
    id: String,
    version: Version,
    cuda: CudaVariant,
    /// NVIDIA's platform name, or `pypi` for a release published only as wheels.
    platform: String,
    /// `archive` or `pip`.
    kind: &'static str,
    /// Archive file name, or the pip requirement.
    name: String,
    /// Download URLs (mirror applied), empty for pip rows.
    urls: Vec<String>,
    size: Option<u64>,
    /// Accepted SHA-256 values and who published each.
    sha256: Vec<PublishedHash>,
    installed: bool,
    /// For a pip row that is not installed: the installed release of the
    /// same id that came from another package (`pip:nvidia-cudnn-jit-cu12==9.12.0.46`).
    #[serde(skip_serializing_if = "Option::is_none")]
    installed_from_other_package: Option<String>,
    /// `embedded` or `user`.
    origin: Option<CatalogLayer>,
    /// Toolkits NVIDIA's support matrix lists for this build, when known.
    supported_toolkits: Option<Vec<Version>>,
    /// Minimum GPU compute capability, when known.
    min_compute: Option<Version>,
}

/// Lists the catalog for `platform` (a name, `all`, or this machine's),
/// releases for CUDA `cuda` only when given (`list --remote`).
pub fn run(ctx: &Ctx, cuda: Option<&str>, platform: Option<&str>) -> Result<u8> {
    let platforms: Vec<Platform> = match platform {
        Some("all") => Platform::ALL.to_vec(),
        Some(p) => vec![p.parse()?],
        None => match Platform::host() {
            Some(p) => vec![p],
            None => Platform::ALL.to_vec(),
        },
    };
    let want: Option<CudaVariant> = cuda.map(str::parse).transpose()?;
    let cat = Catalog::load(&ctx.home)?;
    for w in cat.warnings() {
        ctx.warn(w);
    }
    let mirror = catalog::effective_mirror(None, &ctx.env, &ctx.home)?;
    let releases = Store::new(&ctx.home).releases()?;
    let installed: HashSet<(Version, CudaVariant, Platform)> = releases
        .iter()
        .map(|r| (r.version().clone(), *r.cuda(), r.platform()))
        .collect();
    // Installed releases with the PyPI package each came from (`None`: not
    // from a wheel): a pip row is installed only by its own package, or by
    // NVIDIA's archive of the release, never by another package's wheel
    // (`nvidia-cudnn-jit-cu12` is not `nvidia-cudnn-cu12`).
    let from_pip: Vec<(Version, CudaVariant, Option<String>)> = releases
        .iter()
        .map(|r| {
            let (arg, _) = r.receipt.source.reinstall_arg(&r.id());
            let package = arg.strip_prefix("pip:").map(|req| {
                req.split("==")
                    .next()
                    .unwrap_or(req)
                    .replace('_', "-")
                    .to_ascii_lowercase()
            });
            (r.version().clone(), *r.cuda(), package)
        })
        .collect();
    let serves = |c: &CudaVariant| want.as_ref().is_none_or(|w| resolve::cuda_serves(w, c));

    let mut rows: Vec<Row> = cat
        .archives()
        .iter()
        .filter(|a| platforms.contains(&a.platform) && serves(&a.cuda))
        .map(|a| Row {
            id: a.id(),
            version: a.version.clone(),
            cuda: a.cuda,
            platform: a.platform.to_string(),
            kind: "archive",
            name: a.name().to_string(),
            urls: a.urls(mirror.as_deref()),
            size: a.size,
            sha256: a.hashes.clone(),
            installed: installed.contains(&(a.version.clone(), a.cuda, a.platform)),
            installed_from_other_package: None,
            origin: Some(a.origin),
            supported_toolkits: cat.supported_toolkits(&a.version, &a.cuda),
            min_compute: cat.min_compute(&a.version, &a.cuda),
        })
        .collect();
    // Releases published only on PyPI (wheels carry Linux and Windows x86_64 builds).
    if platforms
        .iter()
        .any(|p| matches!(p, Platform::LinuxX86_64 | Platform::WindowsX86_64))
    {
        for w in cat.wheels() {
            for v in &w.versions {
                let has_archive = cat
                    .archives()
                    .iter()
                    .any(|a| &a.version == v && a.cuda.major() == w.cuda.major());
                if has_archive || !serves(&w.cuda) {
                    continue;
                }
                let same_release: Vec<&Option<String>> = from_pip
                    .iter()
                    .filter(|(iv, ic, _)| iv == v && ic.major() == w.cuda.major())
                    .map(|(_, _, p)| p)
                    .collect();
                let package = crate::version::python_name(&w.package, '-');
                let is_installed = same_release
                    .iter()
                    .any(|p| p.as_deref().is_none_or(|p| p == package));
                let other = same_release
                    .iter()
                    .find_map(|p| p.as_deref().filter(|p| *p != package))
                    .filter(|_| !is_installed)
                    .map(|p| format!("pip:{p}=={v}"));
                rows.push(Row {
                    id: version::release_id(v, &w.cuda),
                    version: v.clone(),
                    cuda: w.cuda,
                    platform: "pypi".into(),
                    kind: "pip",
                    name: format!("pip:{}=={v}", w.package),
                    urls: Vec::new(),
                    size: None,
                    sha256: Vec::new(),
                    installed: is_installed,
                    installed_from_other_package: other,
                    origin: None,
                    supported_toolkits: cat.supported_toolkits(v, &w.cuda),
                    min_compute: cat.min_compute(v, &w.cuda),
                });
            }
        }
    }
    rows.sort_by(|a, b| (&a.version, &a.platform, a.cuda).cmp(&(&b.version, &b.platform, b.cuda)));

    if ctx.json {
        ctx.out_json(&rows);
        return Ok(0);
    }
    if rows.is_empty() {
        let what = match &want {
            Some(c) => format!(" for CUDA {c}"),
            None => String::new(),
        };
        return Err(Error::new(
            Kind::NotFound,
            format!(
                "the catalog has no release{what} for {}",
                platforms
                    .iter()
                    .map(Platform::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .hint(
            "try another --cuda or --platform (or --platform all), or `cudnnm manifest refresh`",
        ));
    }
    let w_id = rows.iter().map(|r| r.id.len()).max().unwrap_or(7).max(7);
    let w_pl = rows
        .iter()
        .map(|r| r.platform.len())
        .max()
        .unwrap_or(8)
        .max(8);
    ctx.out(format!(
        "{:<w_id$}  {:<w_pl$}  {:>9}  {:<14}  {}",
        "RELEASE", "PLATFORM", "SIZE", "SHA-256", "STATUS"
    ));
    for r in &rows {
        let size = r.size.map(human_size).unwrap_or_else(|| "-".into());
        let check = match (r.kind, r.sha256.first()) {
            ("pip", _) => "-".into(),
            (_, Some(h)) if r.sha256.len() > 1 => {
                format!("{} (+{})", h.sha256.short(), r.sha256.len() - 1)
            }
            (_, Some(h)) => h.sha256.short().to_string(),
            (_, None) => "none".into(),
        };
        let status = match (r.kind, r.installed) {
            ("pip", true) => format!("{}  installed", r.name),
            ("pip", false) => match &r.installed_from_other_package {
                Some(o) => {
                    // `pip:nvidia-cudnn-jit-cu12==9.27.0.42` → the package, however it came.
                    let package = o.trim_start_matches("pip:").split("==").next().unwrap_or(o);
                    format!(
                        "{}  (this release is installed, from another package: {package})",
                        r.name
                    )
                }
                None => r.name.clone(),
            },
            (_, true) => "installed".into(),
            (_, false) => String::new(),
        };
        let line = format!(
            "{:<w_id$}  {:<w_pl$}  {:>9}  {:<14}  {status}",
            r.id, r.platform, size, check
        );
        ctx.out(line.trim_end());
    }
    let archives = rows.iter().filter(|r| r.kind == "archive").count();
    let unverified = rows
        .iter()
        .filter(|r| r.kind == "archive" && r.sha256.is_empty())
        .count();
    // Releases installed, whichever package or archive they came from.
    let n_installed = rows
        .iter()
        .filter(|r| r.installed || r.installed_from_other_package.is_some())
        .count();
    let source = match cat.user_file() {
        Some(p) => format!("embedded catalog + '{}'", p.display()),
        None => "embedded catalog".into(),
    };
    let unverified = if unverified > 0 {
        format!(
            " ({unverified} without a published SHA-256: install with --sha256 HEX or --allow-unverified)"
        )
    } else {
        String::new()
    };
    ctx.status(format!(
        "{archives} archives{unverified}, {} releases only on PyPI, {n_installed} installed; {source}",
        rows.len() - archives
    ));
    Ok(0)
}
