//! `cudnnm export dir DEST SPEC [--prefix PATH]`: one release written out as
//! a plain folder (`include/`, `lib/` with its soname chain of links, `bin/`
//! for Windows builds, and the receipt) plus `cudnn.env`, the variables that
//! make it visible, in the `NAME=VALUE` lines `docker run --env-file` reads.
//! Made for `COPY --from=` into a container image or a read-only volume: the
//! folder needs neither cudnnm nor its store. Built beside DEST and renamed
//! into place, so a failure leaves no half folder.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Ctx;
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::home::Home;
use crate::store::Store;
use crate::version::Spec;

/// The env file's name inside DEST.
const ENV_FILE: &str = "cudnn.env";

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The folder to create (must not exist, or be empty)
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
    env: Vec<(String, String)>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let spec: Spec = args.spec.parse()?;
    let store = if args.system {
        Store::new(&Home::system(ctx.system_home.clone()))
    } else {
        Store::new(&ctx.home)
    };
    let release = store.resolve(&spec)?;
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
    let empty_dir = std::fs::read_dir(&dest).is_ok_and(|mut d| d.next().is_none());
    if dest.exists() && !empty_dir {
        return Err(Error::new(
            Kind::Conflict,
            format!("'{}' exists and is not empty", dest.display()),
        )
        .hint("give a new folder (cudnnm export dir never writes into one that holds files)"));
    }
    let windows = release.platform().is_windows();
    let sep = if windows { '\\' } else { '/' };
    let prefix = args
        .prefix
        .clone()
        .unwrap_or_else(|| dest.display().to_string());
    let prefix = prefix.trim_end_matches(sep).to_string();
    let under = |d: &str| format!("{prefix}{sep}{d}");
    let mut env: Vec<(String, String)> = vec![
        (crate::env::CUDNN_PATH.into(), prefix.clone()),
        (crate::env::CUDNN_INCLUDE_DIR.into(), under("include")),
        (crate::env::CUDNN_LIBRARY_DIR.into(), under("lib")),
    ];
    if windows {
        env.push((crate::env::PATH.into(), under("bin")));
        env.push((crate::env::INCLUDE.into(), under("include")));
        env.push((crate::env::LIB.into(), under("lib")));
    } else {
        env.push((crate::env::LD_LIBRARY_PATH.into(), under("lib")));
        env.push((crate::env::CPATH.into(), under("include")));
        env.push((crate::env::LIBRARY_PATH.into(), under("lib")));
    }

    let parent = fsops::parent_of(&dest);
    fsops::create_dir_all(parent)?;
    let tmp = tempfile::Builder::new()
        .prefix(".cudnnm-export-")
        .tempdir_in(parent)
        .with_path("create a folder in", parent)?;
    for f in &release.receipt.files {
        let to = tmp.path().join(&f.path);
        fsops::create_dir_all(fsops::parent_of(&to))?;
        match f.entry.link_target() {
            Some(target) => fsops::symlink(Path::new(target), &to)?,
            None => {
                fsops::copy_file(&release.dir.join(&f.path), &to)?;
            }
        }
    }
    fsops::copy_file(
        &release.dir.join(crate::store::RECEIPT_FILE),
        &tmp.path().join(crate::store::RECEIPT_FILE),
    )?;
    let mut text = format!(
        "# cuDNN {} for CUDA {} ({}), exported by cudnnm; the variables that make it visible\n",
        release.version(),
        release.cuda(),
        release.platform()
    );
    for (k, v) in &env {
        text.push_str(&format!("{k}={v}\n"));
    }
    fsops::write_atomic(&tmp.path().join(ENV_FILE), text.as_bytes())?;
    fsops::make_tree_shared(tmp.path())?;
    if empty_dir {
        fsops::remove_dir_if_empty(&dest);
    }
    let built = tmp.keep();
    if let Err(e) = fsops::rename(&built, &dest) {
        let _ = fsops::remove_dir_all(&built);
        return Err(e);
    }
    let report = Report {
        release: release.id(),
        dest: dest.display().to_string(),
        files: release.receipt.files.len(),
        env_file: dest.join(ENV_FILE).display().to_string(),
        env,
    };
    if ctx.json {
        ctx.out_json(&report);
    } else {
        ctx.status(format!(
            "exported cuDNN {} ({} files) to '{}'; the variables to set are in '{}'",
            report.release, report.files, report.dest, report.env_file
        ));
    }
    Ok(0)
}
