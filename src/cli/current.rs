//! `cudnnm current`: which release applies here and why (flag,
//! `CUDNNM_VERSION`, a `.cudnn-version` file, the default), and per toolkit
//! the active release, its mode, when it was deployed, and whether the files
//! still match the record (drift; `cudnnm verify` re-hashes).

use serde::Serialize;

use super::Ctx;
use super::support::{
    ToolkitView, known_toolkits, recorded_toolkits, recover_if_pending, report_toolkit_choice,
    source_label,
};
use crate::command::CommandLine;
use crate::deploy::Deployments;
use crate::deploy::Recovered;
use crate::error::Result;
use crate::pin::lockfile::{self, ProjectLock};
use crate::pin::{self, SpecSource};
use crate::store::Store;
use crate::toolkit::Toolkit;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only this CUDA toolkit root
    #[arg(long, value_name = "PATH", conflicts_with = "cuda")]
    pub cuda_root: Option<std::path::PathBuf>,
    /// Only the toolkit of this CUDA version (X.Y, or a major such as 12
    /// when one 12.x toolkit is found or known)
    #[arg(long, value_name = "X.Y")]
    pub cuda: Option<String>,
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
    /// Which build that release is (`full`, `jit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    flavour: Option<crate::version::Flavour>,
    /// The release as the text shows it (`9.12.0.46_cuda12 (JIT build)`).
    #[serde(skip)]
    label: Option<String>,
    /// Why that release: `the newest installed release with >=9.1 and <9.11`.
    why: String,
    /// The lock file beside the pin, when there is one, and the release it names.
    lock: Option<LockView>,
}

#[derive(Serialize)]
struct LockView {
    path: std::path::PathBuf,
    release: String,
    /// Whether the locked release still satisfies the pin.
    satisfies_pin: bool,
    /// Whether it is the release the pin selects here (the newest installed
    /// match, which `exec`, `env` and `use` take).
    selected_here: bool,
    /// Whether it is installed.
    installed: bool,
}

#[derive(Serialize)]
struct CurrentView {
    spec: Option<SpecView>,
    toolkits: Vec<ToolkitView>,
    recovered: Vec<Recovered>,
}

/// What `current` adds after the locked release: nothing when it is the
/// release the pin selects here; else why not, and the command that
/// brings the two together.
fn lock_note(ctx: &Ctx, l: &LockView, selected: Option<&str>) -> String {
    let render = |c: CommandLine| {
        ctx.home
            .reach(&ctx.env, c, false)
            .for_host(ctx.env.is_windows())
    };
    if !l.satisfies_pin {
        return format!(
            " (no longer satisfies the pin: run `{}`)",
            render(CommandLine::lock())
        );
    }
    match (selected, l.installed) {
        (_, _) if l.selected_here => String::new(),
        (None, _) => format!(
            " (not installed: `{}` installs it)",
            render(CommandLine::install_here())
        ),
        (Some(sel), false) => format!(
            " (not installed; the pin selects {sel} here: `{}` installs the locked release, `{}` locks {sel})",
            render(CommandLine::install_here()),
            render(CommandLine::lock())
        ),
        (Some(sel), true) => format!(
            " (not what the pin selects here: {sel}, the newest installed match, is what exec, env and use take; `{}` locks {sel}, or `{}` pins the locked release)",
            render(CommandLine::lock()),
            render(CommandLine::pin(l.release.clone()))
        ),
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let recovered = recover_if_pending(ctx)?;
    let store = Store::new(&ctx.home);
    let spec = match pin::resolve_spec(args.version.as_deref(), &ctx.env, &ctx.home)? {
        None => None,
        Some(r) => {
            let resolved = store.resolve(&r.spec).ok();
            let release = resolved.as_ref().map(|rel| rel.id());
            let (flavour, label) = match &resolved {
                Some(rel) => (Some(rel.flavour()), Some(rel.label())),
                None => (None, None),
            };
            let why = match &release {
                Some(_) => r.spec.describe("installed"),
                None => format!(
                    "no installed release matches; it would be {}",
                    r.spec.describe("catalog")
                ),
            };
            let lock = match &r.source {
                SpecSource::PinFile { path, .. } => {
                    let path = lockfile::lock_path(path);
                    ProjectLock::read(&path)?.map(|l| LockView {
                        selected_here: release.as_deref() == Some(l.release.to_string().as_str()),
                        installed: store.get_id(&l.release).ok().flatten().is_some(),
                        release: l.release.to_string(),
                        satisfies_pin: l.satisfies(&r.spec),
                        path,
                    })
                }
                _ => None,
            };
            Some(SpecView {
                release,
                flavour,
                label,
                why,
                spec: r.spec.to_string(),
                source: r.source,
                lock,
            })
        }
    };
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
        None => match &args.cuda {
            Some(c) => {
                let known = recorded_toolkits(ctx, &deployments);
                let t = crate::toolkit::select(
                    &ctx.env,
                    &crate::toolkit::Selector {
                        cuda: Some(c),
                        known: &known,
                        ..Default::default()
                    },
                )?;
                report_toolkit_choice(ctx, &t);
                vec![t]
            }
            None => known_toolkits(ctx, &deployments),
        },
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
        Some(s) => {
            ctx.out(format!(
                "spec here: {} ({}) → {} ({})",
                s.spec,
                source_label(&s.source),
                s.label.as_deref().unwrap_or("not installed"),
                s.why
            ));
            if let Some(l) = &s.lock {
                ctx.out(format!(
                    "locked: {} in '{}'{}",
                    l.release,
                    l.path.display(),
                    lock_note(ctx, l, s.release.as_deref())
                ));
            }
        }
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
