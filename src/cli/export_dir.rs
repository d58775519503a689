//! `cudnnm export dir DEST SPEC [--prefix PATH]`: one release written out as
//! a plain folder (`include/`, `lib/` with its soname chain of links, `bin/`
//! for Windows builds, and the receipt) plus `cudnn.env` (`cudnn.env.cmd`
//! for a Windows build), shell lines that put it in front of the path lists
//! ([`crate::export_tree::env_file`]). Made for `COPY --from=` into a
//! container image or a read-only volume: the folder needs neither cudnnm
//! nor its store. Built beside DEST and renamed into place, so a failure
//! leaves no half folder. Re-running it into its own earlier output replaces
//! that output (marked by `.cudnnm-export.toml`, checked to hold only what
//! cudnnm wrote); any other non-empty DEST is refused.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Ctx;
use super::support::{machine_offers, printed};
use crate::catalog::offer::{Advice, advise, not_installed_hint};
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::export_tree;
use crate::fsops;
use crate::home::Home;
use crate::record;
use crate::store::{FileRecord, Store};
use crate::version::Spec;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The folder to create (new, empty, or an earlier export of cudnnm's, which it replaces)
    pub dest: PathBuf,
    /// The release (9.27.0.42_cuda12, 9.27, …)
    pub spec: String,
    /// Where the folder will be seen by its users (in the image:
    /// /opt/cudnn) [default: DEST]
    #[arg(long, value_name = "PATH")]
    pub prefix: Option<String>,
    /// Take the release from the system store only
    #[arg(long)]
    pub system: bool,
}

#[derive(Serialize)]
struct Report {
    release: String,
    dest: String,
    files: usize,
    env_file: String,
    /// The release of the earlier export this one replaced.
    replaced: Option<String>,
    env: Vec<export_tree::EnvVar>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let spec: Spec = args.spec.parse()?;
    let store = if args.system {
        Store::new(&Home::system(ctx.system_home.clone()))
    } else {
        Store::new(&ctx.home)
    };
    let release = store.resolve(&spec).map_err(|e| {
        // What the catalog has for this machine, by the rule every install hint follows.
        let windows = ctx.env.is_windows();
        let offers = machine_offers(ctx);
        let advice = advise(&offers, &spec, None);
        let words = match (args.system, advice) {
            // The system store's releases come from the administrator.
            (true, Advice::Install(o)) => format!(
                "an administrator installs it there: `{}`",
                super::support::on_system(ctx, o.install(), true)
                    .sudo()
                    .for_host(windows)
            ),
            (true, a) => a.hint(&|c| {
                super::support::on_system(ctx, c, true)
                    .sudo()
                    .for_host(windows)
            }),
            (false, a) => a.hint(&|c| printed(ctx, c)),
        };
        e.hint(not_installed_hint(&store.nearest(&spec), &words))
    })?;
    let dest = ctx.env.cwd().join(&args.dest);
    // A copy inside a cudnnm home would be taken for a release of its store.
    let resolved = match dest.file_name() {
        Some(name) => fsops::canonical_or_self(fsops::parent_of(&dest)).join(name),
        None => fsops::canonical_or_self(&dest),
    };
    for home in [ctx.home.root(), ctx.system_home.as_path()] {
        if resolved.starts_with(fsops::canonical_or_self(home)) {
            return Err(Error::new(
                Kind::Usage,
                format!(
                    "'{}' is inside the cudnnm home '{}'",
                    dest.display(),
                    home.display()
                ),
            )
            .hint("export to a folder outside the home (cudnnm manages everything in it)"));
        }
    }
    // An earlier export of ours may be replaced; anything else is refused.
    let empty_dir = std::fs::read_dir(&dest).is_ok_and(|mut d| d.next().is_none());
    let earlier = if dest.exists() && !empty_dir {
        Some(export_tree::check_earlier(&dest)?)
    } else {
        None
    };
    let windows = release.platform().is_windows();
    let prefix = args
        .prefix
        .clone()
        .unwrap_or_else(|| dest.display().to_string());
    let env = export_tree::variables(&prefix, windows);

    let parent = fsops::parent_of(&dest);
    fsops::create_dir_all(parent)?;
    let tmp = tempfile::Builder::new()
        .prefix(".cudnnm-export-")
        .tempdir_in(parent)
        .with_path("create a folder in", parent)?;
    let mut written: Vec<FileRecord> = Vec::new();
    for f in &release.receipt.files {
        let to = tmp.path().join(&f.path);
        fsops::create_dir_all(fsops::parent_of(&to))?;
        match f.entry.link_target() {
            Some(target) => {
                fsops::symlink(Path::new(target), &to)?;
                written.push(FileRecord::link(&f.path, target));
            }
            None => {
                let (size, sha) = fsops::copy_file_hashed(&release.dir.join(&f.path), &to)?;
                written.push(FileRecord::file(&f.path, size, sha));
            }
        }
    }
    let (size, sha) = fsops::copy_file_hashed(
        &release.dir.join(crate::store::RECEIPT_FILE),
        &tmp.path().join(crate::store::RECEIPT_FILE),
    )?;
    written.push(FileRecord::file(crate::store::RECEIPT_FILE, size, sha));
    let title = format!(
        "cuDNN {} for CUDA {} ({}), exported by cudnnm; the variables that make it visible",
        release.version(),
        release.cuda(),
        release.platform()
    );
    let (env_name, text) = export_tree::env_file(&title, &env, windows)?;
    fsops::write_atomic(&tmp.path().join(env_name), text.as_bytes())?;
    written.push(FileRecord::file(
        env_name,
        text.len() as u64,
        crate::hash::sha256_bytes(text.as_bytes()),
    ));
    record::save(
        &tmp.path().join(export_tree::MARKER_FILE),
        &export_tree::Marker::new(release.id(), written),
        "export marker",
    )?;
    fsops::make_tree_shared(tmp.path())?;
    if empty_dir {
        fsops::remove_dir_if_empty(&dest);
    }
    let built = tmp.keep();
    // The earlier export moves aside, the new one takes its place, then the
    // earlier one (only bytes cudnnm wrote, checked above) is removed.
    let old = fsops::sibling(&dest, "cudnnm-export-old");
    if earlier.is_some()
        && let Err(e) = fsops::rename(&dest, &old)
    {
        let _ = fsops::remove_dir_all(&built);
        return Err(e);
    }
    if let Err(e) = fsops::rename(&built, &dest) {
        let _ = fsops::remove_dir_all(&built);
        if earlier.is_some() {
            let _ = fsops::rename(&old, &dest);
        }
        return Err(e);
    }
    if earlier.is_some() {
        fsops::remove_dir_all(&old)?;
    }
    let report = Report {
        release: release.id(),
        dest: dest.display().to_string(),
        files: release.receipt.files.len(),
        env_file: dest.join(env_name).display().to_string(),
        replaced: earlier.map(|e| e.release),
        env,
    };
    if ctx.json {
        ctx.out_json(&report);
    } else {
        ctx.status(format!(
            "exported cuDNN {} ({} files) to '{}'{}; the variables to set are in '{}'",
            report.release,
            report.files,
            report.dest,
            report
                .replaced
                .as_ref()
                .map(|r| format!(" (replacing the earlier export of {r})"))
                .unwrap_or_default(),
            report.env_file
        ));
    }
    Ok(0)
}
