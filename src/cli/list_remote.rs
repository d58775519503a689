//! `cudnnm list --remote`: the catalog for a platform — NVIDIA's archives
//! and PyPI's wheels, each with its size and SHA-256, the JIT builds beside
//! the full ones, yanked releases marked, installed releases marked — and
//! how old the catalog is.

use std::collections::HashSet;

use serde::Serialize;

use super::Ctx;
use super::support::human_size;
use crate::catalog::{self, Catalog, CatalogLayer, PublishedHash, resolve};
use crate::error::{Error, Kind, Result};
use crate::store::Store;
use crate::version::{CudaVariant, Flavour, Platform, ReleaseId, Version};

/// One line of the listing (text and `--json` come from the same rows).
#[derive(Debug, Serialize)]
struct Row {
    /// `8.1.0.77_cuda11.2`, `9.27.0.42_cuda12+jit`.
    id: String,
    version: Version,
    cuda: CudaVariant,
    /// `full` or `jit`.
    flavour: Flavour,
    /// NVIDIA's platform name.
    platform: String,
    /// `archive` (NVIDIA's redist tree) or `pip` (a PyPI wheel, which
    /// `cudnnm install` fetches with pip).
    kind: &'static str,
    /// Archive file name, or the pip requirement.
    name: String,
    /// A wheel's file name.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    /// Download URLs (mirror applied for archives; the index's for wheels).
    urls: Vec<String>,
    size: Option<u64>,
    /// Accepted SHA-256 values and who published each.
    sha256: Vec<PublishedHash>,
    /// Why PyPI yanked the release, when it did (empty: no reason given).
    #[serde(skip_serializing_if = "Option::is_none")]
    yanked: Option<String>,
    installed: bool,
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
        None => match ctx.env.platform() {
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
    // Installed: by release, build and platform (a JIT build never marks
    // the full build's row, whatever folder an older cudnnm put it in).
    let installed: HashSet<(Version, CudaVariant, Flavour, Platform)> = releases
        .iter()
        .map(|r| (r.version().clone(), *r.cuda(), r.flavour(), r.platform()))
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
            flavour: a.flavour,
            platform: a.platform.to_string(),
            kind: "archive",
            name: a.name().to_string(),
            file: None,
            urls: a.urls(mirror.as_deref()),
            size: a.size,
            sha256: a.hashes.clone(),
            yanked: cat.yanked(&a.release_id()).map(str::to_owned),
            installed: installed.contains(&(a.version.clone(), a.cuda, a.flavour, a.platform)),
            origin: Some(a.origin),
            supported_toolkits: cat.supported_toolkits(&a.version, &a.cuda),
            min_compute: cat.min_compute(&a.version, &a.cuda),
        })
        .collect();
    // Releases PyPI publishes for a platform without NVIDIA's archive there:
    // one row per wheel, with the URL, size and SHA-256 the index gives.
    for w in cat.wheels() {
        if !serves(&w.cuda) {
            continue;
        }
        for f in w.files.iter().filter(|f| platforms.contains(&f.platform)) {
            let id = ReleaseId::new(f.version.clone(), w.cuda).with_flavour(w.flavour);
            let has_archive = cat.archives().iter().any(|a| {
                a.version == f.version
                    && a.cuda.major() == w.cuda.major()
                    && a.flavour == w.flavour
                    && a.platform == f.platform
            });
            // One row per release and platform (a `.post1` rebuild beside
            // the first build: the newer one).
            let newer = w.files.iter().any(|g| {
                g.version == f.version
                    && g.platform == f.platform
                    && g.dist_version > f.dist_version
            });
            if has_archive || newer {
                continue;
            }
            rows.push(Row {
                id: id.to_string(),
                version: f.version.clone(),
                cuda: w.cuda,
                flavour: w.flavour,
                platform: f.platform.to_string(),
                kind: "pip",
                name: format!("pip:{}=={}", w.package, f.dist_version),
                file: Some(f.filename.clone()),
                urls: vec![f.url.clone()],
                size: Some(f.size),
                sha256: vec![PublishedHash {
                    sha256: f.sha256.clone(),
                    source: w.source.clone(),
                }],
                yanked: cat.yanked(&id).map(str::to_owned),
                installed: installed.contains(&(f.version.clone(), w.cuda, w.flavour, f.platform)),
                origin: None,
                supported_toolkits: cat.supported_toolkits(&f.version, &w.cuda),
                min_compute: cat.min_compute(&f.version, &w.cuda),
            });
        }
        // A list that names versions only (no files): one row each, as before.
        if w.files.is_empty() {
            for v in &w.versions {
                let has_archive = cat
                    .archives()
                    .iter()
                    .any(|a| &a.version == v && a.cuda.major() == w.cuda.major());
                if has_archive {
                    continue;
                }
                rows.push(Row {
                    id: ReleaseId::new(v.clone(), w.cuda)
                        .with_flavour(w.flavour)
                        .to_string(),
                    version: v.clone(),
                    cuda: w.cuda,
                    flavour: w.flavour,
                    platform: "pypi".into(),
                    kind: "pip",
                    name: format!("pip:{}=={v}", w.package),
                    file: None,
                    urls: Vec::new(),
                    size: None,
                    sha256: Vec::new(),
                    yanked: None,
                    installed: installed.iter().any(|(iv, ic, fl, _)| {
                        iv == v && ic.major() == w.cuda.major() && *fl == w.flavour
                    }),
                    origin: None,
                    supported_toolkits: cat.supported_toolkits(v, &w.cuda),
                    min_compute: cat.min_compute(v, &w.cuda),
                });
            }
        }
    }
    rows.sort_by(|a, b| {
        (&a.version, &a.platform, a.cuda, a.flavour).cmp(&(
            &b.version,
            &b.platform,
            b.cuda,
            b.flavour,
        ))
    });

    if ctx.json {
        ctx.out_json(&rows);
        ctx.status(age_line(&cat));
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
        let check = match r.sha256.first() {
            Some(h) if r.sha256.len() > 1 => {
                format!("{} (+{})", h.sha256.short(), r.sha256.len() - 1)
            }
            Some(h) => h.sha256.short().to_string(),
            None if r.kind == "pip" => "-".into(),
            None => "none".into(),
        };
        let mut status: Vec<String> = Vec::new();
        if r.kind == "pip" {
            status.push(r.name.clone());
        }
        if let Some(why) = &r.yanked {
            status.push(if why.is_empty() {
                "yanked (no reason given)".to_string()
            } else {
                format!("yanked: {why}")
            });
        }
        if r.installed {
            status.push("installed".into());
        }
        let line = format!(
            "{:<w_id$}  {:<w_pl$}  {:>9}  {:<14}  {}",
            r.id,
            r.platform,
            size,
            check,
            status.join("  ")
        );
        ctx.out(line.trim_end());
    }
    let archives = rows.iter().filter(|r| r.kind == "archive").count();
    let unverified = rows
        .iter()
        .filter(|r| r.kind == "archive" && r.sha256.is_empty())
        .count();
    let n_installed = rows.iter().filter(|r| r.installed).count();
    let n_yanked = rows.iter().filter(|r| r.yanked.is_some()).count();
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
    let yanked = if n_yanked > 0 {
        format!(", {n_yanked} yanked (installed only when named exactly)")
    } else {
        String::new()
    };
    ctx.status(format!(
        "{archives} archives{unverified}, {} PyPI wheels{yanked}, {n_installed} installed; {source}",
        rows.len() - archives
    ));
    ctx.status(age_line(&cat));
    Ok(0)
}

/// How old the catalog's data is and how to refresh it: `catalog data of
/// 2026-12-03 (12 days old; embedded in cudnnm); `cudnnm manifest refresh`
/// reads PyPI and NVIDIA's index now`.
fn age_line(cat: &Catalog) -> String {
    let refresh = "`cudnnm manifest refresh` reads PyPI's and NVIDIA's indexes now";
    let Some((when, layer)) = cat.data_date() else {
        return format!("the catalog does not say how old it is; {refresh}");
    };
    let day = when.get(..10).unwrap_or(&when).to_string();
    let whose = match layer {
        CatalogLayer::Embedded => "embedded in cudnnm",
        CatalogLayer::User => "your catalog.toml",
    };
    let age = humantime::parse_rfc3339(&format!("{day}T00:00:00Z"))
        .ok()
        .and_then(|t| std::time::SystemTime::now().duration_since(t).ok())
        .map(|d| d.as_secs() / 86_400);
    match age {
        Some(0) => format!("catalog data of {day} (today; {whose}); {refresh}"),
        Some(1) => format!("catalog data of {day} (1 day old; {whose}); {refresh}"),
        Some(n) => format!("catalog data of {day} ({n} days old; {whose}); {refresh}"),
        None => format!("catalog data of {day} ({whose}); {refresh}"),
    }
}
