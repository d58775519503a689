//! `cudnnm frameworks [--python PATH] [--for NAME]`: the frameworks of a
//! Python environment, the cuDNN each requires (from its wheel metadata,
//! or the catalog's build row), whether the installed wheels and the release
//! that applies here satisfy them, how each loads cuDNN, and the newest
//! release that satisfies them all here ([`crate::ops::frameworks`]).

use std::path::PathBuf;

use serde::Serialize;

use super::Ctx;
use super::support::advised_line;
use crate::error::Result;
use crate::ops::frameworks::{
    self, Choice, Framework, Frameworks, Gather, Gathered, Loads, NeedSource, choice_lines,
};
use crate::python::FoundBy;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The Python environment: its interpreter or its folder [default: the
    /// active one: VIRTUAL_ENV, CONDA_PREFIX, else python3 on PATH]
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Only this framework (its distribution name: torch, tensorflow,
    /// jax-cuda13-plugin …); `python`: every one
    #[arg(long = "for", value_name = "NAME")]
    pub for_: Option<String>,
}

/// What `frameworks --json` prints.
#[derive(Serialize)]
struct JsonReport<'a> {
    python: Python<'a>,
    frameworks: &'a [Framework],
    cublas: Option<String>,
    applies: Option<String>,
    choice: &'a Choice,
    advised: &'a [frameworks::AdvisedInUse],
}

#[derive(Serialize)]
struct Python<'a> {
    /// The interpreter asked, or the environment folder read.
    path: &'a std::path::Path,
    /// `interpreter` or `layout`.
    found_by: &'static str,
    site_packages: &'a [PathBuf],
    python_version: String,
    sys_platform: &'a str,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    // `--for python` is every framework, as on install, pin, use and exec.
    let which = args
        .for_
        .as_deref()
        .map(str::parse::<Frameworks>)
        .transpose()?;
    let g = frameworks::gather(&Gather {
        env: &ctx.env,
        home: &ctx.home,
        python: args.python.as_deref(),
        only: which.as_ref().and_then(Frameworks::only),
        toolkit: None,
    })?;
    for w in &g.catalog_warnings {
        ctx.warn(w);
    }
    for a in &g.report.advised {
        ctx.warn(advised_line(a));
    }
    let env = &g.environment;
    let (path, how) = match &env.located.found_by {
        FoundBy::Interpreter(p) => (p.as_path(), "interpreter"),
        FoundBy::Layout(p) => (p.as_path(), "layout"),
    };
    ctx.status(format!(
        "Python {} environment: {} ({})",
        env.markers().python_full_version(),
        path.display(),
        if how == "interpreter" {
            "asked its interpreter"
        } else {
            "read from its folder layout"
        }
    ));
    if env.truncated {
        ctx.warn("a site-packages folder holds more entries than cudnnm reads; some distributions may be missing");
    }
    if ctx.json {
        ctx.out_json(&JsonReport {
            python: Python {
                path,
                found_by: how,
                site_packages: &env.located.site_packages,
                python_version: env.markers().python_full_version().to_string(),
                sys_platform: env.markers().sys_platform(),
            },
            frameworks: &g.report.frameworks,
            cublas: g.report.cublas.as_ref().map(ToString::to_string),
            applies: g.applies.as_ref().map(ToString::to_string),
            choice: &g.report.choice,
            advised: &g.report.advised,
        });
        return Ok(0);
    }
    render(ctx, &g);
    Ok(0)
}

fn render(ctx: &Ctx, g: &Gathered) {
    let r = &g.report;
    if r.frameworks.is_empty() {
        ctx.out("no framework that loads cuDNN is installed in this environment");
    }
    for f in &r.frameworks {
        ctx.out(format!("{} {}", f.name, f.version));
        for n in &f.needs {
            let label = match n.from {
                NeedSource::Metadata { .. } => "requires",
                NeedSource::BuildRow { .. } => "needs",
            };
            ctx.out(format!("  {label:<10} {}", n.requirement));
        }
        if let Some((cuda, cudnn)) = &f.built_with {
            ctx.out(format!(
                "  built      with CUDA {cuda} and cuDNN {cudnn} (catalog)"
            ));
        }
        if f.needs.is_empty() {
            ctx.out(
                "  needs      (its metadata names no cuDNN here, and the catalog has no build row)",
            );
        }
        for w in &f.wheels {
            ctx.out(format!(
                "  installed  {} {}{}",
                w.package,
                w.version,
                if w.satisfies {
                    ""
                } else {
                    " (does not satisfy it)"
                }
            ));
        }
        ctx.out(format!(
            "  loads      {}",
            match &f.loads {
                Loads::Wheel { package, version } =>
                    format!("{package} {version} from this environment (preloaded by path)"),
                Loads::Bundled => "the cuDNN inside its own wheel".to_string(),
                Loads::LoaderPath =>
                    "libcudnn by name from the loader path (cudnnm exec / env, or a deployed toolkit)"
                        .to_string(),
            }
        ));
        if let (Some(ok), Some(id)) = (f.applies_ok, &g.applies) {
            ctx.out(format!(
                "  here       {id} (the release that applies here) {}",
                if ok {
                    "satisfies it"
                } else {
                    "does NOT satisfy it"
                }
            ));
        }
    }
    ctx.out("");
    for line in choice_lines(&r.choice, ctx.env.is_windows()) {
        ctx.out(line);
    }
}
