//! `cudnnm doctor`: gather a snapshot of this machine (or read one), run the
//! checks, print text or `--json`, write `--report`, apply `--fix`.
//! Exit 0 when no error is found, 7 (unhealthy) otherwise.

use std::path::{Path, PathBuf};

use super::Ctx;
use crate::catalog::Catalog;
use crate::deploy::{Guard, Reporter};
use crate::doctor::{self, Snapshot, Tables, fix, gather, render};
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::libcudnn;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Write a record of the environment and the findings to FILE
    /// (`.json`: machine-readable with the full snapshot; otherwise text);
    /// FILE must name a file in an existing folder
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Apply the safe, reversible fixes and say what was done
    #[arg(long)]
    pub fix: bool,
    /// Undo the fixes recorded under ID (printed by --fix)
    #[arg(long, value_name = "ID", conflicts_with = "fix")]
    pub undo_fix: Option<String>,
    /// Examine this CUDA toolkit root too (repeatable)
    #[arg(long, value_name = "PATH")]
    pub cuda_root: Vec<PathBuf>,
    /// Diagnose a snapshot saved by `--report FILE.json` (from this or another machine)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["fix", "cuda_root"])]
    pub snapshot: Option<PathBuf>,
    /// Do not load libraries to ask their version (versions from headers and file names)
    #[arg(long)]
    pub no_load: bool,
    /// Look at a running process: the cuDNN files it maps now, against what
    /// doctor predicts (judged with that process's environment)
    #[arg(long, value_name = "PID", conflicts_with_all = ["snapshot", "fix", "command"])]
    pub pid: Option<u32>,
    /// Run this program (after `--`) and report the cuDNN files it really
    /// mapped, against what doctor predicts; its output goes to stderr
    #[arg(last = true, value_name = "CMD", conflicts_with_all = ["snapshot", "fix"])]
    pub command: Vec<std::ffi::OsString>,
}

/// Runs the command; returns the exit code (0 healthy, 7 problems found).
/// What `--fix` shows of a change it makes: waits and recoveries as every
/// command does; a redeploy's own line (`fix applied […]`) says the rest.
struct FixReporter<'a>(&'a Ctx);

impl Reporter for FixReporter<'_> {
    fn on_toolkit_lock_wait(&self, root: &std::path::Path) {
        self.0.on_toolkit_lock_wait(root);
    }

    fn on_recovered(&self, recovered: &crate::deploy::Recovered) {
        self.0.on_recovered(recovered);
    }

    fn on_release_restored(&self, dir: &std::path::Path) {
        self.0.on_release_restored(dir);
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    if let Some(id) = &args.undo_fix {
        return undo_fix(ctx, id);
    }
    // Refuse a report path that cannot be written before the slow gathering.
    let report = args
        .report
        .as_deref()
        .map(|p| report_path(ctx, p))
        .transpose()?;
    let mut snap = match &args.snapshot {
        Some(p) => read_snapshot(p)?,
        None => take(ctx, &args),
    };
    let catalog = Catalog::load(&ctx.home).unwrap_or_else(|e| {
        ctx.warn(format!("catalog: {e}; driver and framework tables skipped"));
        Catalog::default()
    });
    let mut findings = doctor::diagnose(&snap, &Tables::from_catalog(&catalog, &snap));
    if args.fix {
        (snap, findings) = fix_and_diagnose(ctx, &args, &catalog, snap, findings)?;
    }
    if args.snapshot.is_none() {
        keep_global_flags(ctx, &mut findings);
    }
    let mut outcome = render::Outcome::new(&snap, findings);
    // `--fix` changes this machine, not the one a snapshot describes.
    outcome.fixes_elsewhere = args.snapshot.is_some();
    if let Some(path) = &report {
        write_report(ctx, path, &outcome, &snap)?;
    }
    if ctx.json {
        ctx.out_json(&outcome);
    } else {
        let text = render::text(&outcome);
        let painted: Vec<String> = text
            .trim_end()
            .lines()
            .map(super::style::doctor_line)
            .collect();
        ctx.out(painted.join("\n"));
    }
    Ok(if outcome.healthy {
        0
    } else {
        Kind::Unhealthy.exit_code()
    })
}

/// `--undo-fix ID`: undoes that run's fixes through the guard.
fn undo_fix(ctx: &Ctx, id: &str) -> Result<u8> {
    let reporter = FixReporter(ctx);
    let guard = Guard::begin(ctx.lock()?, &ctx.home, &ctx.env, &reporter)?;
    for line in fix::undo(&guard, id)? {
        ctx.status(line);
    }
    ctx.status(format!("undid fix {id}"));
    Ok(0)
}

/// `--fix`: applies the safe fixes through the guard, says what became of
/// each, and when one was applied diagnoses the machine again; a finding a
/// fix reported on is not offered again ([`fix::hold_back`]).
fn fix_and_diagnose(
    ctx: &Ctx,
    args: &Args,
    catalog: &Catalog,
    snap: Snapshot,
    findings: Vec<doctor::Finding>,
) -> Result<(Snapshot, Vec<doctor::Finding>)> {
    let reporter = FixReporter(ctx);
    let change = Guard::begin(ctx.lock()?, &ctx.home, &ctx.env, &reporter)?;
    let roots: Vec<PathBuf> = args.cuda_root.iter().map(|p| absolute(ctx, p)).collect();
    let (reports, id) = fix::apply(&change, &findings, &roots)?;
    if reports.is_empty() {
        ctx.status("doctor --fix: nothing to fix automatically");
    }
    for r in &reports {
        ctx.status(format!("fix {} [{}]: {}", r.status, r.finding, r.message));
    }
    if let Some(id) = &id {
        ctx.status(format!("undo with `cudnnm doctor --undo-fix {id}`"));
    }
    let (snap, mut findings) = if reports.iter().any(|r| r.status == fix::FixStatus::Applied) {
        let snap = take(ctx, args);
        let findings = doctor::diagnose(&snap, &Tables::from_catalog(catalog, &snap));
        (snap, findings)
    } else {
        (snap, findings)
    };
    fix::hold_back(&reports, &mut findings);
    Ok((snap, findings))
}

/// `--report FILE`: the outcome as JSON with the full snapshot
/// (`FILE.json`), else as text; the path is checked again first.
fn write_report(ctx: &Ctx, path: &Path, outcome: &render::Outcome, snap: &Snapshot) -> Result<()> {
    let json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let bytes = if json {
        let r = render::Report {
            report: "cudnnm doctor",
            outcome,
            snapshot: snap,
        };
        serde_json::to_vec_pretty(&r)
            .map_err(|e| Error::msg(format!("could not encode the report: {e}")))?
    } else {
        render::report_text(outcome, snap).into_bytes()
    };
    // Checked again: the folder may have changed while gathering.
    let path = report_path(ctx, path)?;
    crate::fsops::write_atomic(&path, &bytes)?;
    ctx.status(format!("report written to {}", path.display()));
    Ok(())
}

/// The absolute path `--report` writes to. Refused when it names a folder
/// (one that exists, or a path ending in a separator) or when its folder
/// does not exist: doctor writes one file and creates no folders.
///
/// # Errors
/// [`Kind::Usage`] naming the path (or its missing folder), with what to pass instead.
fn report_path(ctx: &Ctx, given: &Path) -> Result<PathBuf> {
    let path = if given.is_absolute() {
        given.to_path_buf()
    } else {
        ctx.env.cwd().join(given)
    };
    let text = given.to_string_lossy();
    let trailing = text.ends_with('/') || (ctx.env.is_windows() && text.ends_with('\\'));
    if path.is_dir() || trailing {
        return Err(Error::new(
            Kind::Usage,
            format!(
                "could not write the report to '{}': it names a folder",
                path.display()
            ),
        )
        .hint(format!(
            "name a file in it: `--report {}` (JSON with the full snapshot), or a .txt name for text",
            path.join("cudnnm-doctor.json").display()
        )));
    }
    let dir = path.parent().unwrap_or(&path);
    if !dir.is_dir() {
        return Err(Error::new(
            Kind::Usage,
            format!(
                "could not write the report to '{}': the folder '{}' does not exist",
                path.display(),
                dir.display()
            ),
        )
        .hint("create the folder first, or name a file in a folder that exists (doctor creates no folders)"));
    }
    Ok(path)
}

/// `p` made absolute against the working folder, `..` resolved by name.
fn absolute(ctx: &Ctx, p: &Path) -> PathBuf {
    crate::fsops::lexical_absolute(ctx.env.cwd(), p)
}

/// Gathers this machine, loading libraries in child processes of this binary.
/// With `-- CMD`, the program runs first and what it mapped is kept; with
/// `--pid`, the process's own environment and working folder are the ones
/// judged.
fn take(ctx: &Ctx, args: &Args) -> Snapshot {
    let exe = std::env::current_exe().ok();
    let (env, process) = watched(ctx, args);
    let env = &env;
    let children = |paths: &[PathBuf]| match &exe {
        Some(e) => libcudnn::query_in_children(e, env, paths),
        None => libcudnn::query_in_process(paths),
    };
    let cuda_roots = args.cuda_root.iter().map(|p| absolute(ctx, p)).collect();
    let opts = gather::Options {
        cuda_roots,
        query: (!args.no_load).then_some(&children as libcudnn::Querier),
        run_tools: true,
        process,
    };
    gather::gather(env, &ctx.home, &opts)
}

/// The environment to judge and the program watched, if any.
fn watched(ctx: &Ctx, args: &Args) -> (crate::env::Env, Option<doctor::snapshot::ProcessView>) {
    let w = ctx.env.is_windows();
    if let Some(pid) = args.pid {
        let view = doctor::process::watch(pid);
        return match doctor::process::environment(pid) {
            Some((vars, cwd)) => (crate::env::Env::from_vars(vars, cwd, w), Some(view)),
            None => (ctx.env.clone(), Some(view)),
        };
    }
    let Some((program, rest)) = args.command.split_first() else {
        return (ctx.env.clone(), None);
    };
    let shown = args
        .command
        .iter()
        .map(|a| crate::quote::quote_arg(&a.to_string_lossy(), w))
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = std::process::Command::new(program);
    cmd.args(rest)
        .current_dir(ctx.env.cwd())
        .stdin(std::process::Stdio::null())
        .stdout(crate::platform::stdio_to_stderr());
    ctx.status(format!("running {shown}"));
    (ctx.env.clone(), Some(doctor::process::run(&mut cmd, shown)))
}

/// Reads a snapshot, or the `snapshot` inside a `--report` JSON.
fn read_snapshot(path: &std::path::Path) -> Result<Snapshot> {
    let text = std::fs::read_to_string(path)
        .with_path("read", path)
        .map_err(|e| match e.hint_text() {
            Some(_) => e,
            None => e.hint("give a file written by `cudnnm doctor --report FILE.json` (on this or another machine)"),
        })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Error::new(Kind::Usage, format!("'{}' is not JSON", path.display()))
            .cause(e)
            .hint("give a file written by `cudnnm doctor --report FILE.json`")
    })?;
    let v = v.get("snapshot").cloned().unwrap_or(v);
    serde_json::from_value(v).map_err(|e| {
        Error::new(
            Kind::Usage,
            format!("'{}' is not a cudnnm snapshot", path.display()),
        )
        .cause(e)
        .hint("give a file written by `cudnnm doctor --report FILE.json`")
    })
}

/// Gives every `cudnnm …` command a finding prints the `--home` and
/// `--system-home` this run needed: a home given by flag (not by
/// `CUDNNM_HOME`, which the user's next command inherits) is not the one a
/// bare `cudnnm use …` would find, so the hint would act on another store.
fn keep_global_flags(ctx: &Ctx, findings: &mut [doctor::Finding]) {
    let w = ctx.env.is_windows();
    let mut flags = String::new();
    let default_home = crate::home::Home::locate(None, &ctx.env).ok();
    if default_home.is_none_or(|h| h.root() != ctx.home.root()) {
        flags.push_str(&format!(
            " --home {}",
            crate::quote::quote_arg(&ctx.home.root().to_string_lossy(), w)
        ));
    }
    if crate::home::Home::locate_system(None, &ctx.env) != ctx.system_home {
        flags.push_str(&format!(
            " --system-home {}",
            crate::quote::quote_arg(&ctx.system_home.to_string_lossy(), w)
        ));
    }
    if flags.is_empty() {
        return;
    }
    for f in findings.iter_mut() {
        for c in f.commands.iter_mut() {
            for prefix in ["sudo cudnnm", "cudnnm"] {
                if let Some(rest) = c.strip_prefix(prefix)
                    && (rest.is_empty() || rest.starts_with(' '))
                    && !rest.starts_with(" --home")
                {
                    *c = format!("{prefix}{flags}{rest}");
                    break;
                }
            }
            // A cudnnm command inside another (`eval "$(cudnnm env …)"`).
            if c.contains("$(cudnnm ") && !c.contains("$(cudnnm --home") {
                *c = c.replace("$(cudnnm ", &format!("$(cudnnm{flags} "));
            }
        }
    }
}
