//! `cudnnm default [SPEC]`: sets (or shows) the release used where no pin
//! applies. Setting it records the exact release id in `config.toml` and
//! re-points the stable per-user link `$CUDNNM_HOME/current/cuda-<variant>`
//! at it atomically (symlink on Unix; junction on Windows, else a directory
//! symlink, else a recorded path in `current/cuda-<variant>.path`).

use serde::Serialize;

use super::Ctx;
use super::support::for_this_store;
use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::store::{Release, Store};
use crate::version::Spec;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The release to make the default (`none` unsets it); without it, print the default
    pub spec: Option<String>,
    /// Set or show the system home's default (what `export` marks as the
    /// modules' default); needs write access to the system home to set
    #[arg(long)]
    pub system: bool,
}

#[derive(Serialize)]
struct Report {
    default: Option<String>,
    release: Option<String>,
    link: Option<String>,
    link_kind: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    match args.spec.as_deref() {
        None => show(ctx),
        Some("none") => unset(ctx),
        Some(s) => set(ctx, s.parse()?),
    }
}

/// `default none`: no default any more (as `rustup default none`); the
/// stable link `current/cuda-<variant>` that pointed at it goes too, so no
/// program keeps loading a release that is no longer chosen.
fn unset(ctx: &Ctx) -> Result<u8> {
    let _lock = ctx.lock()?;
    let mut config = ctx.home.config()?;
    let Some(before) = config.default.take() else {
        report_none(ctx);
        ctx.status("no default cuDNN release was set; nothing changed");
        return Ok(0);
    };
    let old = before
        .parse::<Spec>()
        .ok()
        .and_then(|s| Store::new(&ctx.home).newest_matching(&s).ok().flatten());
    ctx.home.save_config(&config)?;
    let mut removed = None;
    if let Some(r) = &old {
        let link = ctx.home.current_dir().join(r.cuda().dir_name());
        let record = link.with_file_name(format!("{}.path", r.cuda().dir_name()));
        if std::fs::symlink_metadata(&link).is_ok() {
            fsops::remove_link(&link)?;
            removed = Some(link);
        }
        fsops::remove_file(&record)?;
    }
    report_none(ctx);
    ctx.status(format!("default cuDNN {before} → none"));
    if let Some(l) = removed {
        ctx.status(format!("removed the link '{}'", l.display()));
    }
    Ok(0)
}

fn show(ctx: &Ctx) -> Result<u8> {
    let config = ctx.home.config()?;
    let Some(default) = config.default else {
        report_none(ctx);
        ctx.status(format!(
            "no default cuDNN release is set; set one with `{}`",
            for_this_store(ctx, CommandLine::default_("SPEC")).for_host(ctx.env.is_windows())
        ));
        return Ok(0);
    };
    let release = default
        .parse::<Spec>()
        .ok()
        .and_then(|s| Store::new(&ctx.home).newest_matching(&s).ok().flatten());
    let link = release
        .as_ref()
        .map(|r| ctx.home.current_dir().join(r.cuda().dir_name()));
    if ctx.json {
        ctx.out_json(&Report {
            default: Some(default.clone()),
            release: release.as_ref().map(Release::id),
            link: link.as_ref().map(|l| l.display().to_string()),
            link_kind: None,
        });
    } else {
        ctx.out(&default);
    }
    if release.is_none() {
        let another =
            for_this_store(ctx, CommandLine::default_("SPEC")).for_host(ctx.env.is_windows());
        // What installs it, by the rule every install hint follows.
        let install = match default.parse::<Spec>() {
            Ok(spec) => match super::support::install_advice(ctx, &spec, CommandLine::default_) {
                (_, Some(cmd)) => format!("install it (`{cmd}`)"),
                (words, None) => words,
            },
            Err(_) => "`cudnnm list --remote` lists what the catalog has".to_string(),
        };
        ctx.warn(format!(
            "the default {default} is not installed; {install}, or choose another with `{another}`"
        ));
    }
    Ok(0)
}

fn set(ctx: &Ctx, spec: Spec) -> Result<u8> {
    let store = Store::new(&ctx.home);
    let release = store.newest_matching(&spec)?.ok_or_else(|| {
        Error::new(Kind::NotFound, format!("no installed cuDNN matches {spec}")).hint(
            match super::support::install_advice(ctx, &spec, CommandLine::default_) {
                (_, Some(cmd)) => format!(
                    "install it first with `{cmd}` (see `cudnnm list` for what is installed)"
                ),
                (words, None) => format!("{words} (see `cudnnm list` for what is installed)"),
            },
        )
    })?;
    let _lock = ctx.lock()?;
    let mut config = ctx.home.config()?;
    let before = config.default.clone();
    let link = ctx.home.current_dir().join(release.cuda().dir_name());
    let record = link.with_file_name(format!("{}.path", release.cuda().dir_name()));
    let kind = match fsops::replace_dir_link(&release.dir, &link) {
        Ok(kind) => {
            fsops::remove_file(&record)?;
            Some(kind.to_string())
        }
        Err(e) if e.kind() == Kind::Conflict => return Err(e),
        Err(e) => {
            // No folder link possible here (e.g. junctions under wine, a FAT
            // volume): drop a stale link and record the path instead.
            fsops::remove_link(&link)?;
            fsops::write_atomic(&record, release.dir.to_string_lossy().as_bytes())?;
            ctx.warn(format!(
                "could not link '{}' ({e}); recorded the release folder in '{}' instead",
                link.display(),
                record.display()
            ));
            None
        }
    };
    config.default = Some(release.id());
    ctx.home.save_config(&config)?;
    if ctx.json {
        ctx.out_json(&Report {
            default: config.default.clone(),
            release: Some(release.id()),
            link: Some(link.display().to_string()),
            link_kind: kind.clone(),
        });
    }
    let from = before.map(|b| format!("{b} → ")).unwrap_or_default();
    ctx.status(format!("default cuDNN {from}{}", release.id()));
    match kind {
        Some(k) => ctx.status(format!(
            "'{}' → '{}' ({k})",
            link.display(),
            release.dir.display()
        )),
        None => ctx.status(format!(
            "'{}' records '{}'",
            record.display(),
            release.dir.display()
        )),
    }
    Ok(0)
}

/// The `--json` report of a home with no default (nothing printed without
/// `--json`).
fn report_none(ctx: &Ctx) {
    if ctx.json {
        ctx.out_json(&Report {
            default: None,
            release: None,
            link: None,
            link_kind: None,
        });
    }
}
