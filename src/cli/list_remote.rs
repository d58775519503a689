//! `cudnnm list --remote`: the catalog for a platform, installed releases
//! marked ([`crate::ops::remote`]), as a table or as JSON.

use super::Ctx;
use super::support::human_size;
use crate::error::{Error, Kind, Result};
use crate::ops::remote::{self, Listing, Row, RowKind};
use crate::version::{CudaVariant, Platform};

/// Lists the catalog for `platform` (a name, `all`, or this machine's),
/// releases for CUDA `cuda` and those `spec` matches only when given
/// (`list --remote [SPEC]`).
pub fn run(
    ctx: &Ctx,
    spec: Option<&str>,
    cuda: Option<&str>,
    platform: Option<&str>,
) -> Result<u8> {
    let platforms = remote::platforms(platform)?;
    let want: Option<CudaVariant> = cuda.map(str::parse).transpose()?;
    let spec: Option<crate::version::Spec> = spec.map(str::parse).transpose()?;
    let mut listing = remote::list(&ctx.ops(), platforms, want)?;
    if let Some(s) = &spec {
        listing.retain_matching(s);
    }
    if ctx.json {
        ctx.out_json(&listing.rows);
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
    match (r.kind, r.sha256.first()) {
        (RowKind::Pip, _) => "-".into(),
        (_, Some(h)) if r.sha256.len() > 1 => {
            format!("{} (+{})", h.sha256.short(), r.sha256.len() - 1)
        }
        (_, Some(h)) => h.sha256.short().to_string(),
        (_, None) => "none".into(),
    }
}

/// The STATUS column: installed, and for a pip row its requirement (and
/// the other package the release came from, when it did).
fn status(r: &Row) -> String {
    match (r.kind, r.installed) {
        (RowKind::Pip, true) => format!("{}  installed", r.name),
        (RowKind::Pip, false) => match &r.installed_from_other_package {
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
        (RowKind::Archive, true) => "installed".into(),
        (RowKind::Archive, false) => String::new(),
    }
}

/// The status line after the table: counts, and which catalogs were read.
fn summary(listing: &Listing) -> String {
    let rows = &listing.rows;
    let archives = rows.iter().filter(|r| r.kind == RowKind::Archive).count();
    let unverified = rows
        .iter()
        .filter(|r| r.kind == RowKind::Archive && r.sha256.is_empty())
        .count();
    // Releases installed, whichever package or archive they came from.
    let n_installed = rows
        .iter()
        .filter(|r| r.installed || r.installed_from_other_package.is_some())
        .count();
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
    format!(
        "{archives} archives{unverified}, {} releases only on PyPI, {n_installed} installed; {source}",
        rows.len() - archives
    )
}
