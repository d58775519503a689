//! `cudnnm install SPEC|PATH|pip:REQ`: import a release into the store from a
//! local archive or folder, from the user's own pip, or from the catalog.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::Ctx;
use super::support::{GpuGate, ReleaseView, recover_and_report};
use crate::archive::{self, ImportRequest, Outcome};
use crate::catalog;
use crate::env;
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::hash::Sha256Hex;
use crate::store::Store;
use crate::version::{CudaVariant, Platform, Spec, Version};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A catalog version (8.1.0.77, 9.1), a local archive or folder, or pip:REQUIREMENT
    #[arg(value_name = "SPEC|PATH|pip:REQ")]
    pub what: String,
    /// The CUDA the release is built for, when its name does not say (11.2, 12)
    #[arg(long, value_name = "V")]
    pub cuda: Option<String>,
    /// The expected SHA-256 of the archive
    #[arg(long, value_name = "HEX")]
    pub sha256: Option<String>,
    /// Reinstall, or import despite a name/header version disagreement
    #[arg(long)]
    pub force: bool,
    /// Platform to download for (catalog installs) [default: this machine's]
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
    /// Base URL replacing NVIDIA's download server
    #[arg(long, value_name = "URL", env = "CUDNNM_MIRROR")]
    pub mirror: Option<String>,
    /// Install a catalog archive that has no published SHA-256 without checking it
    #[arg(long)]
    pub allow_unverified: bool,
    /// Work on the system store (--system-home), which every user of the machine
    /// reads; needs root or Administrator (or write access an admin gave)
    #[arg(long)]
    pub system: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    if args.system {
        // Every user must be able to reach the system store.
        ctx.home.ensure()?;
        crate::fsops::make_shared(ctx.home.root())?;
    }
    let cuda: Option<CudaVariant> = args.cuda.as_deref().map(str::parse).transpose()?;
    let sha256 = args.sha256.as_deref().map(Sha256Hex::parse).transpose()?;
    // The GPUs are read once, here (never by `env`, `exec` or the hooks).
    let gate = std::sync::Arc::new(GpuGate::read(ctx));
    let admit = {
        let (gate, force) = (gate.clone(), args.force);
        archive::Admit(std::sync::Arc::new(move |v, c| {
            gate.check(v, c, force, "install")
        }))
    };
    let base = ImportRequest {
        cuda,
        expected_sha256: sha256.clone(),
        force: args.force,
        admit: Some(admit),
        ..Default::default()
    };
    let local = args.what.starts_with("pip:")
        || std::fs::symlink_metadata(ctx.env.cwd().join(&args.what)).is_ok();
    if local {
        for (given, flag) in [
            (args.platform.is_some(), "--platform"),
            (args.allow_unverified, "--allow-unverified"),
        ] {
            if given {
                ctx.warn(format!(
                    "{flag} applies to catalog installs; ignored for '{}'",
                    args.what
                ));
            }
        }
    }
    if let Some(requirement) = args.what.strip_prefix("pip:") {
        return install_pip(ctx, requirement.trim(), base);
    }
    let path = ctx.env.cwd().join(&args.what);
    if std::fs::symlink_metadata(&path).is_ok() {
        return import_and_report(
            ctx,
            ImportRequest {
                source: path,
                ..base
            },
        );
    }
    if looks_like_path(&args.what) {
        return Err(Error::new(
            Kind::NotFound,
            format!("no such file or folder '{}'", path.display()),
        )
        .hint("check the path; to install from the catalog give a version such as 8.1.0.77"));
    }
    let latest = args.what.trim().eq_ignore_ascii_case("latest");
    let spec: Spec = if latest {
        // `latest`: the newest major the catalog has; the GPU then picks within it.
        let newest = catalog::Catalog::load(&ctx.home)?
            .archives()
            .iter()
            .map(|a| a.version.major())
            .max()
            .unwrap_or(9);
        newest.to_string().parse()?
    } else {
        args.what.parse().map_err(|_| {
        Error::new(Kind::Usage, format!("'{}' is neither a file nor a cuDNN version", args.what))
            .hint("give a version (8.1.0.77, 9.1, latest), an archive path (./cudnn-….zip), or pip:nvidia-cudnn-cu12==9.1.0.70")
        })?
    };
    let platform = match &args.platform {
        Some(p) => p.parse()?,
        None => Platform::host().ok_or_else(|| {
            Error::new(
                Kind::Usage,
                "cuDNN is not published for this machine's platform",
            )
            .hint("pass --platform")
        })?,
    };
    let mirror = args.mirror.clone().or(ctx.home.config()?.mirror);
    let req = catalog::FetchRequest {
        spec,
        cuda,
        platform,
        mirror,
        sha256,
        allow_unverified: args.allow_unverified,
    };
    let progress = ctx.progress();
    let fetched = catalog::fetch_for(
        &ctx.home,
        &ctx.env,
        &req,
        &*progress,
        gate.oldest(),
        &|v, c| gate.check(v, c, args.force, "install"),
    )?;
    for w in &fetched.warnings {
        ctx.warn(w);
    }
    for n in &fetched.notes {
        ctx.status(n);
    }
    ctx.status(if fetched.cached {
        format!("using {} from the download cache", fetched.name)
    } else {
        format!("downloaded {} from {}", fetched.name, fetched.url)
    });
    import_and_report(
        ctx,
        ImportRequest {
            source: fetched.path,
            name: Some(fetched.name),
            cuda: Some(fetched.cuda),
            expected_sha256: Some(fetched.sha256),
            url: Some(fetched.url),
            force: args.force,
            ..Default::default()
        },
    )
}

fn looks_like_path(s: &str) -> bool {
    s.contains('/')
        || s.contains('\\')
        || [".zip", ".whl", ".tgz", ".tar.gz", ".tar.xz", ".tar"]
            .iter()
            .any(|e| s.ends_with(e))
}

fn import_and_report(ctx: &Ctx, mut req: ImportRequest) -> Result<u8> {
    let _lock = ctx.lock()?;
    recover_and_report(ctx)?;
    let hook = crate::deploy::journal::FaultHook::from_env(&ctx.env);
    let store = Store::new(&ctx.home)
        .with_fault_after_step(hook.after_step)
        .with_pause_file(hook.pause_file.filter(|_| hook.pause_after_step == Some(0)));
    for d in crate::deploy::Deployments::load(&ctx.home)?.entries {
        req.deployed
            .entry(d.release.to_string())
            .or_default()
            .push(d.toolkit.display().to_string());
    }
    let progress = ctx.progress();
    let imported = archive::import(&store, &req, &*progress)?;
    for w in &imported.warnings {
        ctx.warn(w);
    }
    let r = imported.outcome.release();
    let what = format!(
        "cuDNN {} for CUDA {} ({}) from {}",
        r.version(),
        r.cuda(),
        r.platform(),
        r.receipt.source.name
    );
    let status = match &imported.outcome {
        Outcome::Installed(_) => "installed",
        Outcome::Reinstalled(_) => "reinstalled",
        Outcome::AlreadyInstalled(_) => "already-installed",
    };
    if ctx.json {
        let view = ReleaseView::new(r, &[], false, false).in_store(&store);
        ctx.out_json(&serde_json::json!({ "status": status, "release": view }));
    }
    match &imported.outcome {
        Outcome::AlreadyInstalled(_) => ctx.status(format!(
            "{what} is already installed at '{}' (--force reinstalls)",
            r.dir.display()
        )),
        _ => ctx.status(format!(
            "{status} {what}: {} files, {} in '{}'",
            r.receipt.files.len(),
            indicatif::HumanBytes(r.receipt.total_size()),
            r.dir.display()
        )),
    }
    Ok(0)
}

/// Fetches a wheel with the user's own pip (their index, proxy and
/// certificates apply) and imports it. `--only-binary=:all:` keeps pip from
/// building (and running) a source package.
fn install_pip(ctx: &Ctx, requirement: &str, base: ImportRequest) -> Result<u8> {
    if requirement.is_empty() || requirement.starts_with('-') {
        return Err(Error::new(Kind::Usage, format!("'pip:{requirement}' does not name a package"))
            .hint("give one requirement, e.g. `cudnnm install pip:nvidia-cudnn-cu12==9.1.0.70` (pip options are not passed through)"));
    }
    let python = ctx.env.var(env::CUDNNM_PYTHON).unwrap_or_else(|| {
        if crate::platform::HOST_WINDOWS {
            "python".into()
        } else {
            "python3".into()
        }
    });
    ctx.home.ensure()?;
    let tmp = tempfile::Builder::new()
        .prefix(".pip-")
        .tempdir_in(ctx.home.root())
        .with_path("create a folder in", ctx.home.root())?;
    ctx.status(format!(
        "fetching {requirement} with `{python} -m pip download`"
    ));
    let mut cmd = Command::new(&python);
    cmd.args([
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--dest",
    ])
    .arg(tmp.path())
    .arg(requirement)
    .stdin(Stdio::null());
    // pip's messages are read (to tell "no such version" from a network
    // failure) and, unless -q, shown as they come; its stdout goes to our
    // stderr so stdout stays clean for --json.
    if ctx.quiet {
        cmd.stdout(Stdio::null());
    } else {
        cmd.stdout(Stdio::from(std::io::stderr()));
    }
    cmd.stderr(Stdio::piped());
    let spawned = cmd.spawn().and_then(|mut child| {
        let mut text = String::new();
        if let Some(err) = child.stderr.take() {
            use std::io::BufRead;
            for line in std::io::BufReader::new(err).lines() {
                let line = line.unwrap_or_default();
                if !ctx.quiet {
                    eprintln!("{line}");
                }
                text.push_str(&line);
                text.push('\n');
            }
        }
        Ok((child.wait()?, text))
    });
    let (status, stderr) = spawned.map_err(|e| {
        Error::new(Kind::NotFound, format!("could not run '{python}' to fetch {requirement}"))
            .cause(e)
            .hint("install Python 3 with pip (Debian/Ubuntu: `apt install python3-pip`), or set CUDNNM_PYTHON to your Python")
    })?;
    if !status.success() {
        if stderr.contains("No module named pip") {
            return Err(Error::new(Kind::NotFound, format!("'{python}' has no pip module"))
                .hint("install pip (`python3 -m ensurepip --upgrade`, or `apt install python3-pip`), or set CUDNNM_PYTHON to a Python that has it"));
        }
        if let Some(e) = no_such_version(requirement, &stderr) {
            return Err(e);
        }
        let tail: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = tail[tail.len().saturating_sub(3)..].join(" / ");
        let mut e = Error::new(
            Kind::Network,
            format!("pip could not download '{requirement}' ({status})"),
        );
        if !tail.is_empty() {
            e = e.cause(tail);
        }
        return Err(e.hint(
            "check the requirement (e.g. nvidia-cudnn-cu12==9.1.0.70, nvidia-cudnn-jit-cu12==9.27.0.42) and your pip index or proxy settings",
        ));
    }
    let wheel = find_wheel(tmp.path(), requirement)?;
    let name = wheel.file_name().map(|n| n.to_string_lossy().into_owned());
    import_and_report(
        ctx,
        ImportRequest {
            source: wheel,
            name,
            url: Some(format!("pip:{requirement}")),
            ..base
        },
    )
}

/// pip's "Could not find a version that satisfies the requirement R (from
/// versions: A, B, …)": the index answered and has no such version
/// ([`Kind::NotFound`], the nearest versions it has in the hint). `None`
/// when pip said something else, or listed no versions after connection
/// warnings (`Retrying …`, `NewConnectionError`): that is the network.
fn no_such_version(requirement: &str, stderr: &str) -> Option<Error> {
    let line = stderr
        .lines()
        .find(|l| l.contains("Could not find a version that satisfies the requirement"))?;
    let versions = line
        .rsplit_once("(from versions:")?
        .1
        .trim_end()
        .trim_end_matches(')')
        .trim();
    let (package, want) = match requirement.split_once("==") {
        Some((p, v)) => (p.trim(), v.trim().parse::<Version>().ok()),
        None => (requirement.trim(), None),
    };
    if versions == "none" {
        let offline = [
            "Retrying",
            "NewConnectionError",
            "ConnectTimeout",
            "ProxyError",
            "SSLError",
            "Max retries",
        ];
        if offline.iter().any(|w| stderr.contains(w)) {
            return None;
        }
        return Some(
            Error::new(Kind::NotFound, format!("pip's index has no version of '{package}'"))
                .cause(line.trim().trim_start_matches("ERROR: ").to_string())
                .hint("check the package name (nvidia-cudnn-cu12, nvidia-cudnn-cu11, nvidia-cudnn-jit-cu12) and your pip index settings"),
        );
    }
    let known: Vec<Version> = versions
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let near: Vec<String> = match &want {
        Some(w) => w.nearest(&known, 3),
        None => known.iter().rev().take(3).collect(),
    }
    .into_iter()
    .map(|v| v.to_string())
    .collect();
    let hint = match near.first() {
        Some(first) => format!(
            "the nearest versions pip's index has: {} (`cudnnm install pip:{package}=={first}`)",
            near.join(", ")
        ),
        None => format!("pip's index lists: {versions}"),
    };
    Some(
        Error::new(
            Kind::NotFound,
            format!("no such version: pip's index has no '{requirement}'"),
        )
        .hint(hint),
    )
}

fn find_wheel(dir: &Path, requirement: &str) -> Result<PathBuf> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_path("list", dir)?
        .flatten()
        .map(|e| e.path())
        .collect();
    let wheels: Vec<&PathBuf> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    match wheels.as_slice() {
        [one] => Ok((*one).clone()),
        _ => Err(Error::new(
            Kind::Integrity,
            format!(
                "pip fetched {} wheel files for '{requirement}', expected one",
                wheels.len()
            ),
        )
        .hint("name one package version, e.g. pip:nvidia-cudnn-cu12==9.1.0.70")),
    }
}
