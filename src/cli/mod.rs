//! Command-line front end: parse, build the context (paths, environment read
//! once, printer), dispatch to one file per command, map errors to exit codes.
//! Data goes to stdout, status and progress to stderr.

// The one module that prints and exits (denied everywhere else, in lib.rs).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde::Serialize;

use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::home::Home;
use crate::lock::HomeLock;
use crate::progress::{NoProgress, Progress};

mod backups;
mod cache;
mod candidates;
mod completions;
mod current;
mod default;
mod doctor;
mod du;
mod env;
mod exec;
mod export_dir;
mod export_lmod;
mod export_spack;
mod export_tcl;
mod frameworks;
mod help;
mod install;
mod list;
mod list_remote;
mod lock;
mod manifest;
mod pin;
mod rollback;
mod self_;
mod style;
mod support;
mod toolkits;
mod ui;
mod uninstall;
mod use_;
mod verify;
mod which;

/// cudnnm: install, switch, pin and diagnose NVIDIA cuDNN releases.
#[derive(Parser, Debug)]
#[command(name = "cudnnm", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    /// cudnnm home folder (store, backups, config) [default: env CUDNNM_HOME,
    /// else the platform data folder]
    // Environment variables are read by the code that uses them, never by
    // clap's `env`: clap counts a flag set from the environment as given
    // and prints it in the usage line (`Usage: cudnnm pin --home <DIR> <SPEC>`).
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// The system home, whose releases every user sees [default: /opt/cudnnm,
    /// %ProgramData%\cudnnm on Windows; env CUDNNM_SYSTEM_HOME]
    #[arg(long, global = true, value_name = "DIR")]
    pub system_home: Option<PathBuf>,
    /// Print machine-readable JSON on stdout
    #[arg(long, global = true)]
    pub json: bool,
    /// Print only errors and data; no status lines or progress bars
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Colour error:, warning:, help: and doctor severities: auto (on a
    /// terminal, unless NO_COLOR is set), always, never
    #[arg(long, global = true, value_name = "WHEN", value_enum, default_value_t)]
    pub color: style::ColorWhen,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Import a release: a catalog version, a local archive or folder, or pip:REQUIREMENT
    Install(install::Args),
    /// Remove a release from the store
    #[command(visible_aliases = ["rm", "remove"])]
    Uninstall(uninstall::Args),
    /// List installed releases (or the catalog with --remote)
    #[command(visible_alias = "ls")]
    List(list::Args),
    /// List the catalog, installed releases marked (`list --remote`)
    #[command(name = "ls-remote")]
    LsRemote(list::RemoteArgs),
    /// Deploy a release into a CUDA toolkit, backing up what was there
    Use(use_::Args),
    /// Show which release applies here and why, and what each toolkit holds
    Current(current::Args),
    /// Print the path of the main library of the release that applies here
    Which(which::Args),
    /// Undo the last change to a toolkit (or restore a given backup)
    Rollback(rollback::Args),
    /// List backups of toolkit files; remove or prune them
    Backups(backups::Args),
    /// Show the download cache (downloads/), or clean it
    Cache(cache::Args),
    /// Show where the home's disk space goes: store, backups, downloads
    Du(du::Args),
    /// Pin a release for this folder (writes .cudnn-version)
    Pin(pin::Args),
    /// Write .cudnn-version.lock beside the pin: the exact release, per platform its archive and SHA-256
    Lock(lock::Args),
    /// Set or show the default release
    Default(default::Args),
    /// Run a command with a release activated for that process only
    Exec(exec::Args),
    /// Print shell code that activates the release for this shell
    Env(env::Args),
    /// List CUDA toolkits found on this machine
    Toolkits(toolkits::Args),
    /// Find and explain what breaks this machine's cuDNN setup
    Doctor(doctor::Args),
    /// The cuDNN each framework of a Python environment needs, and the release for them all
    Frameworks(frameworks::Args),
    /// Re-hash the store and deployments against their records
    Verify(verify::Args),
    /// Manage the release catalog
    Manifest(manifest::Args),
    /// Print shell completions
    Completions(completions::Args),
    /// Write releases out: Lmod or Tcl modulefiles, Spack, a plain folder (dir)
    #[command(subcommand)]
    Export(Export),
    /// Manage cudnnm itself (`self update`)
    #[command(name = "self")]
    Self_(self_::Args),
    /// Load one cuDNN library and print its version as JSON (internal: the
    /// child process of `doctor` and `verify`, [`crate::libcudnn::PROBE_COMMAND`])
    #[command(hide = true)]
    ProbeLibrary {
        /// The library file
        path: PathBuf,
    },
}

/// `cudnnm export …`: one file per target under `src/cli/`.
#[derive(Subcommand, Debug)]
enum Export {
    /// Write one Lmod (Lua) modulefile per release into DIR/cudnn/
    Lmod(support::ModuleArgs),
    /// Write one Environment Modules (Tcl) modulefile per release into DIR/cudnn/
    Tcl(support::ModuleArgs),
    /// Print a Spack packages.yaml block with each release as an external cudnn
    Spack(export_spack::Args),
    /// Write one release as a plain folder plus cudnn.env, for containers
    Dir(export_dir::Args),
}

/// Everything a command needs: home, output settings, and the environment read once.
pub struct Ctx {
    /// The cudnnm home.
    pub home: Home,
    /// The system home's folder (`--system-home`, `CUDNNM_SYSTEM_HOME`, or the platform's).
    pub system_home: PathBuf,
    /// For a command on the system home (`uninstall --system`): the home
    /// it runs with (`--home`, `CUDNNM_HOME`, the platform's), when that is
    /// another folder that exists; its deployments, default and backups may
    /// use system releases. `None` otherwise.
    pub user_home: Option<Home>,
    /// `--json`.
    pub json: bool,
    /// `-q`.
    pub quiet: bool,
    /// The process environment at start-up.
    pub env: Env,
    stderr_tty: bool,
    /// The bars long steps of a change to a toolkit report to ([`Ctx::progress`]).
    bars: Box<dyn Progress>,
    /// The first failed write to stdout (other than a closed pipe).
    out_failed: std::cell::RefCell<Option<std::io::Error>>,
}

impl Ctx {
    /// A status line on stderr (suppressed by `-q`).
    pub fn status(&self, msg: impl std::fmt::Display) {
        if !self.quiet {
            let _ = writeln!(std::io::stderr().lock(), "{msg}");
        }
    }

    /// A warning on stderr (always shown).
    pub fn warn(&self, msg: impl std::fmt::Display) {
        let _ = writeln!(anstream::stderr().lock(), "{} {msg}", style::warning());
    }

    /// Data on stdout. A closed pipe (`cudnnm list | head`) is not an error.
    pub fn out(&self, text: impl std::fmt::Display) {
        if let Err(e) = writeln!(anstream::stdout().lock(), "{text}")
            && e.kind() != std::io::ErrorKind::BrokenPipe
        {
            self.out_failed.borrow_mut().get_or_insert(e);
        }
    }

    /// `value` as pretty JSON on stdout.
    pub fn out_json<T: Serialize + ?Sized>(&self, value: &T) {
        let s = serde_json::to_string_pretty(value).expect("values serialise");
        self.out(s);
    }

    /// A progress reporter: bars on stderr when it is a terminal; when
    /// stderr is a pipe or a file, a line when a step has run a second and
    /// one when it ends ([`ui::Lines`]); nothing with `-q` or `--json`.
    pub fn progress(&self) -> Box<dyn Progress> {
        if self.quiet || self.json {
            Box::new(NoProgress)
        } else if self.stderr_tty {
            Box::new(ui::Bars::new())
        } else {
            Box::new(ui::Lines::new())
        }
    }

    /// Takes the home lock, saying so if another cudnnm holds it
    /// ([`crate::ops::Session::lock`]).
    pub fn lock(&self) -> Result<HomeLock> {
        self.ops().lock()
    }

    /// What operations read: this home, the environment, and this context
    /// to tell what they do.
    pub fn ops(&self) -> crate::ops::Session<'_> {
        crate::ops::Session {
            home: &self.home,
            system_home: &self.system_home,
            env: &self.env,
            report: self,
        }
    }
}

/// What changes to toolkits report, printed as every command prints:
/// status lines on stderr (none with `-q`), warnings always, bars only on a
/// terminal.
impl crate::deploy::Reporter for Ctx {
    fn progress(&self) -> &dyn Progress {
        &*self.bars
    }

    fn on_toolkit_lock_wait(&self, root: &std::path::Path) {
        self.status(crate::lock::toolkit_wait_message(root));
    }

    fn on_recovered(&self, recovered: &crate::deploy::Recovered) {
        self.warn(recovered.message());
    }

    fn on_release_restored(&self, dir: &std::path::Path) {
        self.warn(format!(
            "recovered an interrupted `install --force`: the release it was replacing is back in '{}'",
            dir.display()
        ));
    }

    fn on_drifted(
        &self,
        release: &crate::store::Release,
        root: &std::path::Path,
        drift: &crate::deploy::status::Drift,
    ) {
        self.status(format!(
            "cuDNN {} is active in '{}' but the files changed ({}); deploying it again",
            release.version(),
            root.display(),
            drift.summary()
        ));
    }
}

/// Runs the CLI with the process's arguments and environment; returns the exit code.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    // A shell asking for completions (`COMPLETE=bash cudnnm -- …`) gets them and nothing else.
    if candidates::complete_if_asked(&args) {
        return ExitCode::SUCCESS;
    }
    run(args)
}

/// Runs the CLI with `args` (the first is the program name).
pub fn run(args: Vec<OsString>) -> ExitCode {
    let parsed = help::command()
        .color(style::ColorWhen::from_args(&args).clap())
        .try_get_matches_from(args)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                Kind::Usage.exit_code()
            } else {
                0
            });
        }
    };
    cli.color.apply();
    crate::interrupt::on_second_signal(end_at_once);
    let env = Env::from_process();
    let json = cli.json;
    match dispatch(cli, env) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            print_error(&e);
            if json {
                // Machines reading stdout get the error too, as one JSON object.
                let v = serde_json::json!({ "error": {
                    "kind": e.kind().as_str(),
                    "exit_code": e.kind().exit_code(),
                    "message": e.message(),
                    "causes": e.causes(),
                    "hint": e.hint_text(),
                }});
                let _ = writeln!(std::io::stdout().lock(), "{v:#}");
            }
            ExitCode::from(e.kind().exit_code())
        }
    }
}

/// A second Ctrl-C or SIGTERM (`crate::interrupt`): says what is left for
/// the next command and ends the process at once with 130. Besides `main`
/// returning, the one way this program ends.
fn end_at_once(message: &'static str) -> ! {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(message.as_bytes());
    let _ = err.flush();
    std::process::exit(i32::from(Kind::Interrupted.exit_code()))
}

fn dispatch(cli: Cli, env: Env) -> Result<u8> {
    let system = Home::locate_system(cli.system_home.as_deref(), &env);
    // `install --system`, `uninstall --system` and `default --system` work on
    // the system home as a home of its own; every other command reads it
    // after the user's.
    let mut user_home = None;
    let home = match system_command(&cli.command) {
        Some(command) => {
            user_home = Home::locate(cli.home.as_deref(), &env)
                .ok()
                .filter(|h| h.root() != system.as_path() && h.root().is_dir())
                .map(|h| h.with_system(system.clone()));
            if let Some(command) = command {
                crate::ops::check_system_writable(&system, &env, command)?;
            }
            Home::system(system.clone())
        }
        None => Home::locate(cli.home.as_deref(), &env)?.with_system(system.clone()),
    };
    // Test hook (debug builds only): act as on a file system without locks.
    crate::lock::force_toolkit_fallback(
        cfg!(debug_assertions) && env.var(crate::env::CUDNNM_TEST_LOCK_UNSUPPORTED).is_some(),
    );
    let mut ctx = Ctx {
        home,
        system_home: system,
        user_home,
        json: cli.json,
        quiet: cli.quiet,
        env,
        stderr_tty: std::io::stderr().is_terminal(),
        bars: Box::new(NoProgress),
        out_failed: Default::default(),
    };
    ctx.bars = ctx.progress();
    // Not for per-process activation (the shell hook runs it on every `cd`).
    if !matches!(
        cli.command,
        Command::Env(_) | Command::Exec(_) | Command::Completions(_) | Command::ProbeLibrary { .. }
    ) {
        support::warn_unknown_settings(&ctx);
    }
    let result = run_command(&ctx, cli.command).map_err(|e| home_write_hint(&ctx, e));
    // `sudo cudnnm --home ~user/…`: what root created there is the user's.
    crate::fsops::give_home_to_its_owner(ctx.home.root());
    let code = result?;
    match ctx.out_failed.into_inner() {
        Some(e) => Err(Error::msg("could not write to standard output")
            .cause(e)
            .hint("check the file or disk that stdout is redirected to")),
        None => Ok(code),
    }
}

/// For a command that works on the system home (`install --system`,
/// `uninstall --system`, `default --system`): `Some`, holding the command
/// line to show an administrator when it writes there; `None` for commands
/// that work on the user's home.
fn system_command(command: &Command) -> Option<Option<crate::command::CommandLine>> {
    use crate::command::CommandLine;
    // The flags that change what the command does go along: an
    // administrator runs it as the user meant it.
    let force = |c: CommandLine, f: bool| if f { c.force() } else { c };
    let c = match command {
        Command::Install(a) if a.system => {
            let mut c = match &a.what {
                Some(w) => CommandLine::install(w.clone()),
                None => CommandLine::install_here(),
            };
            if let Some(v) = &a.cuda {
                c = c.cuda(v);
            }
            force(c, a.force)
        }
        Command::Uninstall(a) if a.system => force(CommandLine::uninstall(a.spec.clone()), a.force),
        Command::Default(a) if a.system => match &a.spec {
            Some(spec) => CommandLine::default_(spec.clone()),
            None => return Some(None),
        },
        _ => return None,
    };
    // `check_system_writable` adds `--system` and the system home.
    Some(Some(c))
}

fn run_command(ctx: &Ctx, command: Command) -> Result<u8> {
    match command {
        Command::Install(a) => install::run(ctx, a),
        Command::Frameworks(a) => frameworks::run(ctx, a),
        Command::Uninstall(a) => uninstall::run(ctx, a),
        Command::Lock(a) => lock::run(ctx, a),
        // `list --remote` is its own file; neither imports the other.
        Command::List(a) if a.remote => list_remote::run(
            ctx,
            a.spec.as_deref(),
            a.cuda.as_deref(),
            a.platform.as_deref(),
            a.index_url.as_deref(),
        ),
        Command::List(a) => list::run(ctx, a),
        Command::LsRemote(a) => list_remote::run(
            ctx,
            a.spec.as_deref(),
            a.cuda.as_deref(),
            a.platform.as_deref(),
            a.index_url.as_deref(),
        ),
        Command::Which(a) => which::run(ctx, a),
        Command::Use(a) => use_::run(ctx, a),
        Command::Current(a) => current::run(ctx, a),
        Command::Rollback(a) => rollback::run(ctx, a),
        Command::Backups(a) => backups::run(ctx, a),
        Command::Cache(a) => cache::run(ctx, a),
        Command::Du(a) => du::run(ctx, a),
        Command::Pin(a) => pin::run(ctx, a),
        Command::Default(a) => default::run(ctx, a),
        Command::Exec(a) => exec::run(ctx, a),
        Command::Env(a) => env::run(ctx, a),
        Command::Toolkits(a) => toolkits::run(ctx, a),
        Command::Doctor(a) => doctor::run(ctx, a),
        Command::Verify(a) => verify::run(ctx, a),
        Command::Manifest(a) => manifest::run(ctx, a),
        Command::Completions(a) => completions::run(ctx, a),
        Command::Export(Export::Lmod(a)) => export_lmod::run(ctx, a),
        Command::Export(Export::Tcl(a)) => export_tcl::run(ctx, a),
        Command::Export(Export::Spack(a)) => export_spack::run(ctx, a),
        Command::Export(Export::Dir(a)) => export_dir::run(ctx, a),
        Command::Self_(a) => self_::run(ctx, a),
        Command::ProbeLibrary { path } => {
            ctx.out(crate::libcudnn::probe_answer(&path));
            Ok(0)
        }
    }
}

/// A folder of the home that cannot be written: the user can also point
/// the home elsewhere (a path outside it, such as a project folder, keeps
/// the general hint — the home has nothing to do with it).
fn home_write_hint(ctx: &Ctx, e: Error) -> Error {
    match e.unwritable_path() {
        Some(p) if p.starts_with(ctx.home.root()) => {
            let hint = format!(
                "check that you may write to '{}' (run elevated), or point CUDNNM_HOME / --home at a folder you may write to",
                p.display()
            );
            e.hint(hint)
        }
        _ => e,
    }
}

/// Prints `error: …`, `caused by: …` lines and `help: …` to stderr.
fn print_error(e: &Error) {
    let mut err = anstream::stderr().lock();
    let _ = writeln!(err, "{} {}", style::error(), e.message());
    for c in e.causes() {
        let _ = writeln!(err, "caused by: {c}");
    }
    if let Some(h) = e.hint_text() {
        let _ = writeln!(err, "{} {h}", style::help());
    }
}
