//! `cudnnm list --remote`: the catalog for a platform — archives and
//! wheels with their SHA-256, JIT builds, yanked and installed releases
//! marked ([`crate::ops::remote`]) — as a table or as JSON, and how old the
//! catalog is.

use super::Ctx;
use super::support::human_size;
use crate::catalog::CatalogLayer;
use crate::error::{Error, Kind, Result};
use crate::ops::remote::{self, CatalogAge, Listing, Row, RowKind};
use crate::version::{CudaVariant, Platform};

/// Lists the catalog for `platform` (a name, `all`, or this machine's),
/// releases for CUDA `cuda` and those `spec` matches only when given
/// (`list --remote [SPEC]`).
pub fn run(
    ctx: &Ctx,
    spec: Option<&str>,
    cuda: Option<&str>,
    platform: Option<&str>,
    index_url: Option<&str>,
) -> Result<u8> {
    let session = ctx.ops();
    let platforms = remote::platforms(&session, platform)?;
    let want: Option<CudaVariant> = cuda.map(str::parse).transpose()?;
    let spec: Option<crate::version::Spec> = spec.map(str::parse).transpose()?;
    let mut listing = remote::list(&session, platforms, want, index_url)?;
    if let Some(s) = &spec {
        listing.retain_matching(s);
    }
    if ctx.json {
        ctx.out_json(&listing.rows);
        ctx.status(age_line(listing.age.as_ref()));
        return Ok(0);
    }
    if listing.rows.is_empty() {
        return Err(nothing(&listing, spec.as_ref()));
    }
    let rows = &listing.rows;
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
    for r in rows {
        let size = r.size.map(human_size).unwrap_or_else(|| "-".into());
        let line = format!(
            "{:<w_id$}  {:<w_pl$}  {:>9}  {:<14}  {}",
            r.id,
            r.platform,
            size,
            check(r),
            status(r)
        );
        ctx.out(line.trim_end());
    }
    ctx.status(summary(&listing));
    ctx.status(age_line(listing.age.as_ref()));
    Ok(0)
}

/// The catalog has nothing for the platforms and CUDA asked.
fn nothing(listing: &Listing, spec: Option<&crate::version::Spec>) -> Error {
    let what = match &listing.cuda {
        Some(c) => format!(" for CUDA {c}"),
        None => String::new(),
    };
    let what = match spec {
        Some(s) => format!(" matching {s}{what}"),
        None => what,
    };
    Error::new(
        Kind::NotFound,
        format!(
            "the catalog has no release{what} for {}",
            listing
                .platforms
                .iter()
                .map(Platform::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .hint("try another --cuda or --platform (or --platform all), or `cudnnm manifest refresh`")
}

/// The SHA-256 column: the first published hash, short, and how many more.
fn check(r: &Row) -> String {
    match r.sha256.first() {
        Some(h) if r.sha256.len() > 1 => {
            format!("{} (+{})", h.sha256.short(), r.sha256.len() - 1)
        }
        Some(h) => h.sha256.short().to_string(),
        None if r.kind == RowKind::Pip => "-".into(),
        None => "none".into(),
    }
}

/// The STATUS column: a wheel's requirement, yanked (with PyPI's reason),
/// installed.
fn status(r: &Row) -> String {
    let mut status: Vec<String> = Vec::new();
    if r.kind == RowKind::Pip {
        status.push(r.name.clone());
    }
    if let Some(why) = &r.yanked {
        status.push(if why.is_empty() {
            "yanked (no reason given)".to_string()
        } else {
            format!("yanked: {why}")
        });
    }
    if r.on_index == Some(false) {
        status.push("not on the index".into());
    }
    if r.installed {
        status.push("installed".into());
    }
    status.join("  ")
}

/// The status line after the table: counts, and which catalogs were read.
fn summary(listing: &Listing) -> String {
    let rows = &listing.rows;
    let archives = rows.iter().filter(|r| r.kind == RowKind::Archive).count();
    let unverified = rows
        .iter()
        .filter(|r| r.kind == RowKind::Archive && r.sha256.is_empty())
        .count();
    let n_installed = rows.iter().filter(|r| r.installed).count();
    let n_yanked = rows.iter().filter(|r| r.yanked.is_some()).count();
    let source = match &listing.user_catalog {
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
    let index = match &listing.index {
        Some(i) => {
            let missing = rows.iter().filter(|r| r.on_index == Some(false)).count();
            format!("; wheels as the package index {i} serves them ({missing} not on it)")
        }
        None => String::new(),
    };
    format!(
        "{archives} archives{unverified}, {} PyPI wheels{yanked}, {n_installed} installed; {source}{index}",
        rows.len() - archives
    )
}

/// How old the catalog's data is and how to refresh it: `catalog data of
/// 2026-12-03 (12 days old; embedded in cudnnm); `cudnnm manifest refresh`
/// reads PyPI's and NVIDIA's indexes now`.
fn age_line(age: Option<&CatalogAge>) -> String {
    let refresh = "`cudnnm manifest refresh` reads PyPI's and NVIDIA's indexes now";
    let Some(a) = age else {
        return format!("the catalog does not say how old it is; {refresh}");
    };
    let (day, whose) = (
        &a.day,
        match a.layer {
            CatalogLayer::Embedded => "embedded in cudnnm",
            CatalogLayer::User => "your catalog.toml",
        },
    );
    match a.days_old {
        Some(0) => format!("catalog data of {day} (today; {whose}); {refresh}"),
        Some(1) => format!("catalog data of {day} (1 day old; {whose}); {refresh}"),
        Some(n) => format!("catalog data of {day} ({n} days old; {whose}); {refresh}"),
        None => format!("catalog data of {day} ({whose}); {refresh}"),
    }
}
