//! `cudnnm current`: which release applies here and why (flag,
//! `CUDNNM_VERSION`, a `.cudnn-version` file, the default), and per toolkit
//! the active release, its mode, when it was deployed, and whether the files
//! still match the record (drift; `cudnnm verify` re-hashes).

use std::path::PathBuf;

use serde::Serialize;

use super::Ctx;
use super::use_::{known_toolkits, recover_if_pending, source_label};
use crate::deploy::plan::{NO_CUDNN, scan_toolkit_names};
use crate::deploy::recover::Recovered;
use crate::deploy::status::{self, Drift};
use crate::deploy::{Deployments, Mode, inflight};
use crate::error::Result;
use crate::pin::{self, SpecSource};
use crate::store::Store;
use crate::toolkit::{Layout, Toolkit};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only this CUDA toolkit root
    #[arg(long, value_name = "PATH")]
    pub cuda_root: Option<std::path::PathBuf>,
    /// The release spec to resolve instead of the pin
    #[arg(long, value_name = "SPEC")]
    pub version: Option<String>,
}

/// The spec that applies here.
#[derive(Serialize)]
struct SpecView {
    spec: String,
    source: SpecSource,
    /// The installed release it resolves to, if any.
    release: Option<String>,
}

/// One toolkit's state.
#[derive(Serialize)]
pub(super) struct ToolkitView {
    pub root: PathBuf,
    pub cuda: String,
    pub layout: Layout,
    pub found_by: String,
    /// The release cudnnm deployed there.
    pub release: Option<String>,
    pub mode: Option<Mode>,
    pub deployed_at: Option<String>,
    /// The backup holding what was there before (a number, as in `backups --json`).
    pub backup: Option<u64>,
    pub drift: Option<Drift>,
    /// For toolkits cudnnm does not manage: the cuDNN version their headers declare.
    pub unmanaged_cudnn: Option<String>,
    /// For toolkits cudnnm does not manage: how many cuDNN files they hold.
    #[serde(skip)]
    unmanaged_files: usize,
    /// Another home's change to the toolkit that is running or unfinished
    /// (its in-flight marker).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unfinished_change: Option<UnfinishedView>,
}

/// Another home's change to a toolkit, from its in-flight marker.
#[derive(Serialize)]
pub(super) struct UnfinishedView {
    /// The home whose journal holds it (empty when the marker belongs to
    /// another user and could not be read).
    pub home: PathBuf,
    /// Its backup id.
    pub backup: u64,
    /// What had been asked (`use 9.27.0.42_cuda12`).
    pub action: String,
    /// Whether a cudnnm process holds the toolkit's lock now (running, not
    /// interrupted).
    pub running: bool,
    /// What to do about it, for people.
    pub hint: String,
}

impl UnfinishedView {
    /// One line for people.
    pub(super) fn line(&self) -> String {
        if self.running {
            format!("  {}; it holds the toolkit lock", self.hint)
        } else {
            format!("  {}", self.hint)
        }
    }
}

impl ToolkitView {
    pub(super) fn new(
        ctx: &Ctx,
        t: &Toolkit,
        deployments: &Deployments,
        store: &Store,
    ) -> ToolkitView {
        let dep = deployments.for_toolkit(&t.root);
        let unfinished_change = inflight::foreign(&ctx.home, &t.root).map(|m| {
            let running = crate::lock::toolkit_busy(&t.root);
            let hint = match (running, m.describe()) {
                (true, Some(d)) => format!("a change from another cudnnm home is running: {d}"),
                (true, None) => "a change from another user's cudnnm home is running".to_string(),
                (false, d) => format!(
                    "unfinished change {}: {}",
                    d.unwrap_or_else(|| "from another user's cudnnm home".to_string()),
                    inflight::finish_advice(&m, &t.root, ctx.env.is_windows())
                ),
            };
            UnfinishedView {
                home: m.home,
                backup: m.backup,
                action: m.action,
                running,
                hint,
            }
        });
        ToolkitView {
            root: t.root.clone(),
            cuda: t.cuda.to_string(),
            layout: t.layout,
            found_by: t.found_by.clone(),
            release: dep.map(|d| d.release.to_string()),
            mode: dep.map(|d| d.mode),
            deployed_at: dep.map(|d| d.deployed_at.clone()),
            backup: dep.and_then(|d| d.backup),
            drift: dep.map(|d| status::check(d, t, store)),
            unmanaged_cudnn: match dep {
                Some(_) => None,
                None => t.header_cudnn_version().map(|v| v.to_string()),
            },
            unmanaged_files: match dep {
                Some(_) => 0,
                None => scan_toolkit_names(t).len(),
            },
            unfinished_change,
        }
    }

    /// `9.12.0.46_cuda12, symlink, deployed …, files match (backup 3)` or
    /// `not managed by cudnnm (headers: cuDNN 8.9.7)`, or `no cuDNN`
    /// ([`NO_CUDNN`], the words every command uses).
    pub(super) fn state(&self) -> String {
        match (&self.release, self.mode, &self.drift) {
            (Some(r), Some(m), Some(d)) => format!(
                "{r}, {m}, deployed {}, {}{}",
                self.deployed_at.as_deref().unwrap_or("?"),
                d.summary(),
                self.backup
                    .map(|b| format!(" (backup {b})"))
                    .unwrap_or_default()
            ),
            // The same words as the backups' and recovery's "held" label.
            _ => match (&self.unmanaged_cudnn, self.unmanaged_files) {
                (Some(v), _) => format!("not managed by cudnnm (headers: cuDNN {v})"),
                (None, 0) => NO_CUDNN.into(),
                (None, n) => format!(
                    "not managed by cudnnm ({n} cuDNN file{}, no version header)",
                    if n == 1 { "" } else { "s" }
                ),
            },
        }
    }
}

#[derive(Serialize)]
struct CurrentView {
    spec: Option<SpecView>,
    toolkits: Vec<ToolkitView>,
    recovered: Vec<Recovered>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let recovered = recover_if_pending(ctx)?;
    let store = Store::new(&ctx.home);
    let spec = pin::resolve_spec(args.version.as_deref(), &ctx.env, &ctx.home)?.map(|r| SpecView {
        release: store.resolve(&r.spec).ok().map(|rel| rel.id()),
        spec: r.spec.to_string(),
        source: r.source,
    });
    let deployments = Deployments::load(&ctx.home)?;
    let toolkits = match &args.cuda_root {
        Some(root) => {
            let root = if root.is_absolute() {
                root.clone()
            } else {
                ctx.env.cwd().join(root)
            };
            vec![Toolkit::at(&root, "--cuda-root", ctx.env.is_windows())?]
        }
        None => known_toolkits(ctx, &deployments),
    };
    let view = CurrentView {
        spec,
        toolkits: toolkits
            .iter()
            .map(|t| ToolkitView::new(ctx, t, &deployments, &store))
            .collect(),
        recovered,
    };
    if ctx.json {
        ctx.out_json(&view);
        return Ok(0);
    }
    match &view.spec {
        Some(s) => ctx.out(format!(
            "spec here: {} ({}) → {}",
            s.spec,
            source_label(&s.source),
            s.release.as_deref().unwrap_or("not installed")
        )),
        None => {
            ctx.out("spec here: none (no --version, CUDNNM_VERSION, .cudnn-version or default)")
        }
    }
    if view.toolkits.is_empty() {
        ctx.out("no CUDA toolkits found (pass --cuda-root PATH)");
    }
    for t in &view.toolkits {
        ctx.out(format!(
            "'{}' (CUDA {}): {}",
            t.root.display(),
            t.cuda,
            t.state()
        ));
        if let Some(u) = &t.unfinished_change {
            ctx.out(u.line());
        }
    }
    Ok(0)
}
