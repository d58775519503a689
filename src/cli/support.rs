//! What several commands share, so that command files never import each
//! other: recovery before a command, the toolkits worth showing and each
//! one's state, the views `list` and `install` print, the elevation hint,
//! status lines about backups, and text formatting (sizes, tables).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Ctx;
use crate::command::CommandLine;
use crate::deploy::status::{self, Drift};
use crate::deploy::{
    Deployments, Guard, Mode, NO_CUDNN, Recovered, backup, inflight, scan_toolkit_names,
};
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::ops::frameworks::{Choice, Conflict, PassedOver, Resolution, Skipped};
use crate::pin::SpecSource;
use crate::store::{Release, Store};
use crate::toolkit::{self, Layout, Toolkit};
use crate::version::{CudaVariant, Version};

/// Where a spec came from, for people.
pub fn source_label(s: &SpecSource) -> String {
    match s {
        SpecSource::Flag => "from --version".into(),
        SpecSource::EnvVar => format!("from {}", crate::env::CUDNNM_VERSION),
        SpecSource::PinFile { path, line } => {
            format!("from '{}' line {line}", path.display())
        }
        SpecSource::Default { path } => format!("the default in '{}'", path.display()),
    }
}

/// Takes the home lock and starts the guard every change goes through:
/// what a crash left is finished or undone first, each said.
pub fn guard(ctx: &Ctx) -> Result<Guard<'_>> {
    Guard::begin(ctx.lock()?, &ctx.home, &ctx.env, ctx)
}

/// For read-only commands: when a journal exists, wait for the lock (the
/// change may still be running) and recover; otherwise touch nothing.
pub fn recover_if_pending(ctx: &Ctx) -> Result<Vec<Recovered>> {
    if !crate::deploy::recovery_pending(&ctx.home) {
        return Ok(Vec::new());
    }
    Ok(guard(ctx)?.recovered().to_vec())
}

/// How to run `command` with the rights the toolkit needs, or to activate
/// `release` per process instead (see [`crate::deploy::elevate_hint`]).
pub fn elevate_hint(ctx: &Ctx, command: CommandLine, root: &Path, release: Option<&str>) -> String {
    crate::deploy::elevate_hint(&ctx.env, &ctx.home, command, root, release)
}

/// `command` for the system store, as a person runs it (as root or from
/// an Administrator terminal when `elevated`; the caller adds `sudo`):
/// `--system`, and the system home spelled out where the command would not
/// find it ([`crate::home::Home::reach`]).
pub fn on_system(ctx: &Ctx, command: CommandLine, elevated: bool) -> CommandLine {
    crate::home::Home::system(ctx.system_home.clone()).reach(&ctx.env, command, elevated)
}

/// What the catalog (the user's `catalog.toml` over the embedded one, or
/// the embedded one when that cannot be read) can install on this machine:
/// the offers every install hint chooses from
/// ([`crate::catalog::offer::advise`]).
pub fn machine_offers(ctx: &Ctx) -> Vec<crate::catalog::offer::Offer> {
    let catalog = crate::catalog::Catalog::load(&ctx.home)
        .unwrap_or_else(|_| crate::catalog::Catalog::embedded());
    crate::catalog::offer::offers_for(&catalog, ctx.env.platform())
}

/// The `help:` words for installing `spec`, which no store holds, by the
/// one rule ([`crate::catalog::offer::advise_on`]), each command for this
/// home and the user's shell; with the command itself when the catalog has
/// the release and it runs on the GPUs in use. The GPUs are asked only
/// when there is a command to check: this is a failure's hint, never the
/// path `env`, `exec` and the shell hooks take.
/// An installed release the hint names is said as `how` takes it (`cudnnm
/// default V` for `default`, `cudnnm pin V` for `pin`; [`CommandLine::use_as`]).
pub fn install_advice(
    ctx: &Ctx,
    spec: &crate::version::Spec,
    how: fn(String) -> CommandLine,
) -> (String, Option<String>) {
    let offers = machine_offers(ctx);
    let mut advice = crate::catalog::offer::advise(&offers, spec, None);
    let gate;
    if matches!(advice, crate::catalog::offer::Advice::Install(_)) {
        gate = GpuGate::read(ctx);
        advice = gate.with_fit(|fit| crate::catalog::offer::advise_on(&offers, spec, None, fit));
    }
    let render = |c: CommandLine| printed(ctx, c.use_as(how));
    (advice.hint(&render), advice.command().map(render))
}

/// A command as a hint prints it: for this home ([`for_this_store`]) and
/// the user's shell.
pub fn printed(ctx: &Ctx, c: CommandLine) -> String {
    for_this_store(ctx, c).for_host(ctx.env.is_windows())
}

/// A hint's command for the store this command works on, run by the same
/// person here ([`crate::home::Home::reach`]): with `--system` for the
/// system home; with `--home` / `--system-home` where they came from flags.
pub fn for_this_store(ctx: &Ctx, command: CommandLine) -> CommandLine {
    ctx.home.reach(&ctx.env, command, false)
}

/// Refuses, before anything is changed, a command that would write the
/// system home at `system` when this user may not: [`Kind::Permission`]
/// (exit 5) with the command to run as root or as Administrator. The
/// nearest existing folder of `system/store` decides (unknown on Windows,
/// where ACLs decide and a refused write fails with the same kind).
pub fn check_system_writable(
    system: &Path,
    env: &crate::env::Env,
    command: CommandLine,
) -> Result<()> {
    let store = system.join("store");
    let mut probe = store.as_path();
    while !probe.exists() {
        match probe.parent() {
            Some(p) => probe = p,
            None => return Ok(()),
        }
    }
    if crate::platform::dir_writable(probe) != Some(false) {
        return Ok(());
    }
    let windows = env.is_windows();
    let command = crate::home::Home::system(system).reach(env, command, true);
    let how = if windows {
        format!(
            "run it from an Administrator terminal: `{}`",
            command.for_host(true)
        )
    } else {
        format!("run it as root: `{}`", command.sudo().for_host(false))
    };
    Err(Error::new(
        crate::error::Kind::Permission,
        format!(
            "cannot write the system store '{}' ('{}' is not writable for this user)",
            store.display(),
            probe.display()
        ),
    )
    .hint(format!(
        "{how}; or ask whoever administers this machine (releases a user installs without --system go to their own home)"
    )))
}

/// A "held" label inside `cuDNN A → B`: `(none)` for a toolkit without cuDNN.
pub fn msg_label(label: &str) -> &str {
    if label == NO_CUDNN { "(none)" } else { label }
}

/// Names the files a change moved into backup `id` that look like cuDNN's
/// but that no cuDNN release ships (see [`crate::deploy::moved_not_from_a_release`]).
pub fn report_not_from_a_release(ctx: &Ctx, id: u64, rels: &[String]) {
    if !rels.is_empty() {
        ctx.status(format!(
            "also moved to backup {id}: {} (not part of any cuDNN release), kept until `cudnnm backups remove {id} --force` deletes them",
            rels.join(", ")
        ));
    }
}

/// Warns of each folder an interrupted import left in the store
/// (`store/.partial-*`), with its size and how to free it. Says nothing
/// while another cudnnm holds the home lock: the folder may be its import.
pub fn report_partials(ctx: &Ctx) {
    if ctx.home.busy() {
        return;
    }
    for p in Store::new(&ctx.home).partials() {
        ctx.warn(format!(
            "an interrupted install left '{}' ({}); the next `cudnnm install` removes it, or delete that folder",
            p.dir.display(),
            human_size(p.bytes)
        ));
    }
}

/// Warns of keys in `config.toml` that cudnnm does not know (a misspelt
/// `mdoe = "copy"` changes nothing), naming the file and the known keys.
/// Says nothing when the file is missing or cannot be read (the commands
/// that need it report that).
pub fn warn_unknown_settings(ctx: &Ctx) {
    let Ok(config) = ctx.home.config() else {
        return;
    };
    if config.unknown.is_empty() {
        return;
    }
    let keys: Vec<&str> = config.unknown.keys().map(String::as_str).collect();
    ctx.warn(format!(
        "'{}' sets {} that cudnnm does not know ({}), which change nothing; the settings are {}",
        ctx.home.config_file().display(),
        if keys.len() == 1 { "a key" } else { "keys" },
        keys.join(", "),
        crate::home::CONFIG_KEYS.join(", ")
    ));
}

/// Says which old backups were pruned.
pub fn report_pruned(ctx: &Ctx, pruned: &[u64]) {
    if !pruned.is_empty() {
        ctx.status(format!(
            "removed old backup{} {} (config keep_backups)",
            if pruned.len() == 1 { "" } else { "s" },
            pruned
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}

/// The toolkit roots this home knows: those `deployments.toml` records,
/// then those only backups name (a toolkit rolled back to no cuDNN has no
/// deployment any more, but its backups), each with what named it.
fn recorded_roots(ctx: &Ctx, deployments: &Deployments) -> Vec<(PathBuf, &'static str)> {
    let mut roots: Vec<(PathBuf, &'static str)> = deployments
        .entries
        .iter()
        .map(|d| (d.toolkit.clone(), "deployments.toml"))
        .collect();
    for b in crate::deploy::backup::list(&ctx.home).unwrap_or_default() {
        if !roots.iter().any(|(r, _)| *r == b.record.toolkit) {
            roots.push((b.record.toolkit, "backups"));
        }
    }
    roots
}

/// The toolkits this home has deployed to or holds backups of that are
/// still toolkits (for `--cuda X.Y` and for the choice when nothing names
/// a toolkit: they count as well as those discovered).
pub fn recorded_toolkits(ctx: &Ctx, deployments: &Deployments) -> Vec<Toolkit> {
    recorded_roots(ctx, deployments)
        .iter()
        .filter_map(|(root, by)| Toolkit::at(root, by, ctx.env.is_windows()).ok())
        .collect()
}

/// The CUDA variants of the installed releases `spec` names, and how to
/// name them in the reason a toolkit is chosen (`cuDNN 9.12 (from
/// '/p/.cudnn-version' line 1)`): the toolkit selector prefers the one a
/// build of them fits.
pub fn wanted_cudas(
    ctx: &Ctx,
    spec: &crate::version::Spec,
    from: Option<&SpecSource>,
) -> (Vec<CudaVariant>, String) {
    let mut cudas: Vec<CudaVariant> = Store::new(&ctx.home)
        .matching(spec)
        .unwrap_or_default()
        .iter()
        .map(|r| *r.cuda())
        .collect();
    cudas.dedup();
    let label = match from {
        Some(src) => format!("cuDNN {spec} ({})", source_label(src)),
        None => format!("cuDNN {spec}"),
    };
    (cudas, label)
}

/// The toolkits a catalog pick (`install SPEC`, a bare `install`, `lock`)
/// chooses its CUDA build by, as `use` picks a toolkit: none to choose by
/// when `--cuda` (`cuda`) or the spec's suffix names the CUDA; for another
/// platform than this machine's, those found here. Else, among the toolkits
/// found and those this home knows (deployed to, or holding backups of), the
/// one `use` would pick ([`toolkit::select`]): the one the environment names,
/// the only one, or the only one a catalog build of `spec` fits — narrowed
/// to the pin's CUDA when the pin that applies here names one. With several
/// and none of those, all of them: the catalog then asks for `--cuda` when
/// they need different builds. Returns the toolkits and, when the catalog
/// has several CUDA builds of `spec` to choose from, the one chosen.
pub fn toolkits_for_pick(
    ctx: &Ctx,
    spec: &crate::version::Spec,
    cuda: Option<&CudaVariant>,
    platform: crate::version::Platform,
) -> (Vec<Toolkit>, Option<Toolkit>) {
    if cuda.is_some() || spec.cuda.is_some() {
        return (Vec::new(), None);
    }
    if Some(platform) != ctx.env.platform() {
        return (toolkit::discover(&ctx.env), None);
    }
    let deployments = Deployments::load(&ctx.home).unwrap_or_default();
    let known = recorded_toolkits(ctx, &deployments);
    let catalog = crate::catalog::Catalog::load(&ctx.home)
        .unwrap_or_else(|_| crate::catalog::Catalog::embedded());
    let mut wants: Vec<CudaVariant> = catalog
        .archives()
        .iter()
        .filter(|a| a.platform == platform && spec.matches(&a.version, &a.cuda))
        .map(|a| a.cuda)
        .collect();
    wants.sort();
    wants.dedup();
    let several = wants.len() > 1;
    let mut label = format!("a build of cuDNN {spec} in the catalog");
    if let Ok(Some(pin)) = crate::pin::resolve_spec(None, &ctx.env, &ctx.home)
        && let Some(pc) = &pin.spec.cuda
    {
        let narrowed: Vec<CudaVariant> = wants
            .iter()
            .copied()
            .filter(|w| crate::catalog::resolve::cuda_serves(pc, w))
            .collect();
        if !narrowed.is_empty() {
            wants = narrowed;
            label = format!(
                "the CUDA {pc} build of cuDNN {spec} the pin {} asks for ({})",
                pin.spec,
                source_label(&pin.source)
            );
        }
    }
    let chosen = toolkit::select(
        &ctx.env,
        &toolkit::Selector {
            known: &known,
            wants: &wants,
            wants_label: &label,
            ..Default::default()
        },
    );
    match chosen {
        // Said only where it chose among CUDA builds.
        Ok(t) if several => (vec![t.clone()], Some(t)),
        Ok(t) => (vec![t], None),
        Err(_) => {
            let mut all = toolkit::discover(&ctx.env);
            for k in known {
                if !all.iter().any(|t| t.root == k.root) {
                    all.push(k);
                }
            }
            (all, None)
        }
    }
}

/// One line saying which toolkit a command works on and why, as `current`
/// says why a release applies: nothing for `--cuda-root`, which named it.
pub fn report_toolkit_choice(ctx: &Ctx, t: &Toolkit) {
    if t.found_by != "--cuda-root" {
        ctx.status(format!(
            "toolkit '{}' (CUDA {}): {}",
            t.root.display(),
            t.cuda,
            toolkit_reason(t)
        ));
    }
}

/// Why a toolkit was chosen, as a clause: the selector's reasons read as
/// sentences ("the only …"); a bare source (`CUDA_PATH`,
/// `deployments.toml`) gets "found by".
fn toolkit_reason(t: &Toolkit) -> String {
    if t.found_by.starts_with("the ") {
        t.found_by.clone()
    } else {
        format!("found by {}", t.found_by)
    }
}

/// The line a catalog pick says when a toolkit chose its CUDA build
/// ([`toolkits_for_pick`]): which toolkit, and why that one.
pub fn report_build_choice(ctx: &Ctx, spec: &crate::version::Spec, t: &Toolkit) {
    ctx.status(format!(
        "choosing the build of cuDNN {spec} for the toolkit '{}' (CUDA {}): {}",
        t.root.display(),
        t.cuda,
        toolkit_reason(t)
    ));
}

/// Every toolkit worth showing: those found on this machine, then those
/// `deployments.toml` records elsewhere (sandbox folders, `--cuda-root`)
/// and those only backups name.
pub fn known_toolkits(ctx: &Ctx, deployments: &Deployments) -> Vec<Toolkit> {
    let mut all = toolkit::discover(&ctx.env);
    for (root, by) in recorded_roots(ctx, deployments) {
        if all.iter().any(|t| t.root == root) {
            continue;
        }
        match Toolkit::at(&root, by, ctx.env.is_windows()) {
            Ok(t) => all.push(t),
            Err(e) => {
                if let Some(d) = deployments.for_toolkit(&root) {
                    let gone = toolkit::is_gone(&root);
                    ctx.warn(if gone {
                        format!(
                            "cuDNN {} is recorded in '{}', whose folder is gone; `{}` forgets it (its backups stay)",
                            d.release,
                            root.display(),
                            CommandLine::forget_toolkit(&root).for_host(ctx.env.is_windows())
                        )
                    } else {
                        format!(
                            "cuDNN {} is recorded in '{}', which is no longer a toolkit: {e}",
                            d.release,
                            root.display()
                        )
                    })
                }
            }
        }
    }
    all
}

/// Warns when a release was built for another platform than this machine
/// (a Windows zip imported on Linux): its libraries cannot load here.
pub fn warn_foreign(ctx: &Ctx, release: &crate::store::Release) {
    if let Some(host) = crate::version::Platform::host()
        && release.platform() != host
    {
        ctx.warn(format!(
            "cuDNN {} is built for {}, not for this {} machine; its libraries will not load here",
            release.id(),
            release.platform(),
            host
        ));
    }
}

/// One toolkit's state.
#[derive(Serialize)]
pub struct ToolkitView {
    pub root: PathBuf,
    pub cuda: String,
    pub layout: Layout,
    pub found_by: String,
    /// The release cudnnm deployed there.
    pub release: Option<String>,
    pub mode: Option<Mode>,
    pub deployed_at: Option<String>,
    /// The backup `rollback` restores (a number, as in `backups --json`):
    /// the one holding what was there before the deployment, or, when that
    /// one was removed, the toolkit's newest backup left; none when there
    /// is none.
    pub backup: Option<u64>,
    /// The backup the deployment recorded, when it was removed since.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_removed: Option<u64>,
    pub drift: Option<Drift>,
    /// The one other cuDNN the toolkit now holds instead of the recorded
    /// release ([`status::replaced`], as `verify` judges it): another
    /// cudnnm home, or the user, deployed it since; the differences in
    /// `drift` are that, not damage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub now_holds: Option<String>,
    /// With `now_holds`: the command that puts this home's release back.
    #[serde(skip)]
    put_back: Option<String>,
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
pub struct UnfinishedView {
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
    pub fn line(&self) -> String {
        if self.running {
            format!("  {}; it holds the toolkit lock", self.hint)
        } else {
            format!("  {}", self.hint)
        }
    }
}

impl ToolkitView {
    pub fn new(ctx: &Ctx, t: &Toolkit, deployments: &Deployments, store: &Store) -> ToolkitView {
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
        // The recorded backup while it exists (one stat), else the newest left.
        let recorded = dep.and_then(|d| d.backup);
        let (backup, backup_removed) = match recorded {
            Some(id) if backup::exists(&ctx.home, id) => (Some(id), None),
            Some(id) => (
                backup::for_toolkit(&ctx.home, &t.root)
                    .ok()
                    .and_then(|v| v.last().map(|b| b.record.id)),
                Some(id),
            ),
            None => (None, None),
        };
        let drift = dep.map(|d| status::check(d, t, store));
        let replaced = dep
            .zip(drift.as_ref())
            .filter(|(_, dr)| !dr.is_clean())
            .and_then(|(d, _)| Some((d, status::replaced(d, t)?)));
        let now_holds = replaced.as_ref().map(|(_, v)| v.to_string());
        let put_back = replaced.map(|(d, _)| {
            let cmd = CommandLine::use_(d.release.to_string())
                .cuda_root(&t.root)
                .mode(d.mode);
            ctx.home
                .reach(&ctx.env, cmd, false)
                .for_host(ctx.env.is_windows())
        });
        ToolkitView {
            root: t.root.clone(),
            cuda: t.cuda.to_string(),
            layout: t.layout,
            found_by: t.found_by.clone(),
            release: dep.map(|d| d.release.to_string()),
            mode: dep.map(|d| d.mode),
            deployed_at: dep.map(|d| d.deployed_at.clone()),
            backup,
            backup_removed,
            drift,
            now_holds,
            put_back,
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
    pub fn state(&self) -> String {
        match (&self.release, self.mode, &self.drift) {
            (Some(r), Some(m), Some(d)) => format!(
                "{r}, {m}, deployed {}, {}{}",
                self.deployed_at.as_deref().unwrap_or("?"),
                match &self.now_holds {
                    // The words `verify` uses for the same judgement.
                    Some(v) => format!(
                        "replaced: the toolkit now holds cuDNN {v} (deployed since by another cudnnm home, or by you); this home's record is out of date, not an error of this home{}",
                        self.put_back
                            .as_ref()
                            .map(|c| format!(" (`{c}` puts {r} back)"))
                            .unwrap_or_default()
                    ),
                    None => d.summary(),
                },
                match (self.backup_removed, self.backup) {
                    (None, Some(b)) => format!(" (backup {b})"),
                    (Some(r), Some(b)) => {
                        format!(" (backup {r} was removed; `rollback` restores backup {b})")
                    }
                    (Some(r), None) => format!(" (backup {r} was removed; no backup is left)"),
                    (None, None) => String::new(),
                }
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

/// One installed release as `list --json` and `install --json` print it.
#[derive(Serialize)]
pub struct ReleaseView<'a> {
    #[serde(skip)]
    release: &'a Release,
    pub id: String,
    pub version: String,
    pub cuda: String,
    /// `full` or `jit`: which build its files are.
    pub flavour: crate::version::Flavour,
    pub platform: String,
    pub header_version: String,
    /// Bytes of all files.
    pub size: u64,
    pub path: String,
    pub installed_at: &'a str,
    pub source: &'a crate::store::Source,
    /// Toolkit roots where this release is deployed.
    pub deployed_in: Vec<String>,
    pub default: bool,
    pub pinned: bool,
    /// Which store holds it: `user` or `system`.
    pub origin: crate::store::StoreOrigin,
}

impl<'a> ReleaseView<'a> {
    pub fn new(
        r: &'a Release,
        deployed_in: &[String],
        default: bool,
        pinned: bool,
    ) -> ReleaseView<'a> {
        ReleaseView {
            release: r,
            id: r.id(),
            version: r.version().to_string(),
            cuda: r.cuda().to_string(),
            flavour: r.flavour(),
            platform: r.platform().to_string(),
            header_version: r.receipt.header_version.to_string(),
            size: r.receipt.total_size(),
            path: r.dir.display().to_string(),
            installed_at: &r.receipt.installed_at,
            source: &r.receipt.source,
            deployed_in: deployed_in.to_vec(),
            default,
            pinned,
            origin: crate::store::StoreOrigin::User,
        }
    }

    /// The same view, naming the store that holds the release.
    pub fn in_store(mut self, store: &Store) -> ReleaseView<'a> {
        self.origin = store.origin(self.release);
        self
    }
}

/// The arguments of `export lmod` and `export tcl`.
#[derive(clap::Args, Debug)]
pub struct ModuleArgs {
    /// The modulepath folder; modulefiles go to DIR/cudnn/
    pub dir: PathBuf,
    /// Export the system store's releases (and default) instead of your own
    #[arg(long)]
    pub system: bool,
    /// The site's CUDA module, loaded before cuDNN's: a template with
    /// {major}, {minor}, {variant} (e.g. cuda/{major}.{minor})
    #[arg(long, value_name = "TEMPLATE")]
    pub cuda_module: Option<String>,
}

/// One export's outcome, as `--json` prints it.
#[derive(Serialize)]
struct ExportReport {
    dir: String,
    written: Vec<String>,
    unchanged: Vec<String>,
    removed: Vec<String>,
    default: Option<String>,
}

/// The home whose store an export reads (the system home with `system`,
/// else the user's own store alone), its releases, and each as a
/// [`crate::modulefile::ModuleRelease`].
pub fn export_releases(
    ctx: &Ctx,
    system: bool,
) -> Result<(
    crate::home::Home,
    Vec<Release>,
    Vec<crate::modulefile::ModuleRelease>,
)> {
    use crate::home::Home;
    let home = if system {
        Home::system(ctx.system_home.clone())
    } else {
        Home::new(ctx.home.root())
    };
    let releases = Store::new(&home).releases()?;
    let modules = releases
        .iter()
        .map(|r| crate::modulefile::ModuleRelease {
            // The build its files are, whatever folder holds it.
            id: r.release_id().with_flavour(r.flavour()),
            dir: r.dir.clone(),
            windows: r.platform().is_windows(),
            source: r.receipt.source.name.clone(),
            sha256: r.receipt.source.sha256.clone(),
        })
        .collect();
    Ok((home, releases, modules))
}

/// `export lmod` / `export tcl`: plans with [`crate::modulefile::plan`]
/// from the chosen store and what `DIR/cudnn/` holds, then writes, links
/// and removes through `fsops`. Modulefiles are made readable by every user
/// (mode 0644 on Unix; on Windows the folder's ACL decides).
pub fn export_modules(
    ctx: &Ctx,
    engine: crate::modulefile::Engine,
    args: ModuleArgs,
) -> Result<u8> {
    use crate::modulefile::{self, CudaModule, Existing, Step};
    let cuda_module = args
        .cuda_module
        .as_deref()
        .map(CudaModule::parse)
        .transpose()?;
    let (home, releases, modules) = export_releases(ctx, args.system)?;
    let default = home
        .config()?
        .default
        .and_then(|d| d.parse::<crate::version::Spec>().ok())
        .and_then(|spec| crate::pin::select(&spec, &releases))
        .map(|r| modulefile::module_version_of(&r.release_id().with_flavour(r.flavour())));
    let dir = ctx.env.cwd().join(&args.dir);
    let folder = dir.join(modulefile::FAMILY);
    let mut existing = Existing::default();
    if let Ok(rd) = std::fs::read_dir(&folder) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Ok(target) = std::fs::read_link(e.path()) {
                existing
                    .links
                    .insert(name, target.to_string_lossy().into_owned());
            } else if e.path().is_file()
                && let Ok(text) = std::fs::read_to_string(e.path())
            {
                existing.files.insert(name, text);
            }
        }
    }
    let steps = modulefile::plan(
        engine,
        &dir,
        &modules,
        cuda_module.as_ref(),
        default.as_deref(),
        &existing,
    )?;
    fsops::create_dir_all(&folder)?;
    fsops::make_shared(&folder)?;
    let mut report = ExportReport {
        dir: folder.display().to_string(),
        written: Vec::new(),
        unchanged: Vec::new(),
        removed: Vec::new(),
        default: default.clone(),
    };
    for step in &steps {
        match step {
            Step::Write {
                path,
                text,
                changed,
            } => {
                if *changed {
                    fsops::write_atomic(path, text.as_bytes())?;
                    // Readable by every user (written 0600 first), still replaceable by the next export.
                    crate::platform::make_world_readable(path)
                        .map_err(|e| Error::io("change permissions of", path, e))?;
                    report.written.push(path.display().to_string());
                } else {
                    report.unchanged.push(path.display().to_string());
                }
            }
            Step::Link {
                path,
                target,
                changed,
            } => {
                if *changed {
                    fsops::replace_link(Path::new(target), path, false)?;
                    report.written.push(path.display().to_string());
                } else {
                    report.unchanged.push(path.display().to_string());
                }
            }
            Step::Remove { path } => {
                if std::fs::read_link(path).is_ok() {
                    fsops::remove_link(path)?;
                } else {
                    fsops::remove_file(path)?;
                }
                report.removed.push(path.display().to_string());
            }
        }
    }
    if ctx.json {
        ctx.out_json(&report);
    } else {
        for p in &report.written {
            ctx.out(format!("wrote {p}"));
        }
        for p in &report.removed {
            ctx.out(format!("removed {p}"));
        }
        ctx.status(format!(
            "{} cuDNN modulefiles in '{}' ({} written, {} unchanged, {} removed){}; use them with `module use {}`",
            modules.len(),
            folder.display(),
            report.written.len(),
            report.unchanged.len(),
            report.removed.len(),
            default
                .map(|d| format!(", default {d}"))
                .unwrap_or_default(),
            dir.display()
        ));
    }
    Ok(0)
}

pub use crate::store::human_size;

/// A text table: every column as wide as its widest cell (ids of any
/// length, long labels), the columns `right` marks right-aligned (numbers),
/// the last column unpadded.
pub fn table<const N: usize>(
    header: &[String; N],
    rows: &[[String; N]],
    right: [bool; N],
) -> Vec<String> {
    let mut width = [0usize; N];
    for r in std::iter::once(header).chain(rows) {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    std::iter::once(header)
        .chain(rows)
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, c)| match (i, right[i]) {
                    (i, _) if i + 1 == N => c.clone(),
                    (_, true) => format!("{c:>w$}", w = width[i]),
                    (_, false) => format!("{c:<w$}", w = width[i]),
                })
                .collect();
            cells.join("  ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_aligns_every_column_for_long_ids_and_labels() {
        let header = ["ID", "WHEN", "FILES", "SIZE", "HELD", "WHY", "TOOLKIT"].map(String::from);
        let row = |id: &str, held: &str| {
            [
                id,
                "2026-01-01T00:00:00Z",
                "3",
                "12 B",
                held,
                "before use x",
                "/tk",
            ]
            .map(String::from)
        };
        let lines = super::table(
            &header,
            &[
                row("9", "7.6.5 (not from cudnnm) (first)"),
                row("10", "no cuDNN"),
                row("12345", "9.1.0.70"),
            ],
            [true, false, true, true, false, false, false],
        );
        // Every line's WHEN and TOOLKIT columns start at the same place.
        let at = |l: &str, what: &str| l.find(what).unwrap();
        assert_eq!(at(&lines[0], "WHEN"), 7);
        for l in &lines[1..] {
            assert_eq!(at(l, "2026"), 7, "{lines:#?}");
            assert_eq!(at(l, "/tk"), at(&lines[0], "TOOLKIT"), "{lines:#?}");
        }
        assert!(lines[2].starts_with("   10  "), "{lines:#?}");
        assert!(lines[3].starts_with("12345  "), "{lines:#?}");
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(super::human_size(12), "12 B");
        assert_eq!(super::human_size(1536), "1.5 KiB");
        assert_eq!(super::human_size(1_268_000_000), "1.2 GiB");
    }
}

/// Whether a release can run on the GPUs a CUDA program started here would
/// use (`install` and `use`; never `env`, `exec` or the shell hooks). Built
/// once per command: it runs `nvidia-smi` once. With no GPU visible every
/// release passes and nothing is said.
#[derive(Clone, Debug)]
pub struct GpuGate {
    /// The GPUs CUDA would use (after `CUDA_VISIBLE_DEVICES`).
    pub gpus: Vec<crate::gpu::Gpu>,
    catalog: crate::catalog::Catalog,
    /// Installed releases: (version, CUDA variant), to suggest one that runs.
    installed: Vec<(Version, CudaVariant)>,
    windows: bool,
}

/// A release the oldest GPU in use cannot run.
#[derive(Clone, Debug, PartialEq)]
pub struct TooOld {
    /// That GPU.
    pub gpu: crate::gpu::Gpu,
    /// The lowest compute capability the release supports.
    pub needs: Version,
}

impl GpuGate {
    /// Reads the GPUs (through `nvidia-smi`), the catalog and the installed releases.
    pub fn read(ctx: &Ctx) -> GpuGate {
        let gpus = crate::gpu::visible(&ctx.env, &crate::gpu::Processes);
        GpuGate::new(ctx, gpus)
    }

    /// A gate for `gpus` as given.
    pub fn new(ctx: &Ctx, gpus: Vec<crate::gpu::Gpu>) -> GpuGate {
        if gpus.is_empty() {
            return GpuGate {
                gpus,
                catalog: crate::catalog::Catalog::default(),
                installed: Vec::new(),
                windows: ctx.env.is_windows(),
            };
        }
        let catalog = crate::catalog::Catalog::load(&ctx.home)
            .unwrap_or_else(|_| crate::catalog::Catalog::embedded());
        let installed = Store::new(&ctx.home)
            .releases()
            .unwrap_or_default()
            .iter()
            .map(|r| (r.version().clone(), *r.cuda()))
            .collect();
        GpuGate {
            gpus,
            catalog,
            installed,
            windows: ctx.env.is_windows(),
        }
    }

    /// The oldest GPU in use (lowest compute capability), if any is visible.
    pub fn oldest(&self) -> Option<&crate::gpu::Gpu> {
        crate::gpu::oldest(&self.gpus)
    }

    /// The newest GPU in use (highest compute capability): the one a
    /// release must be new enough for (docs/releases.md#gpu-ceilings).
    pub fn newest(&self) -> Option<&crate::gpu::Gpu> {
        self.gpus.iter().max_by(|a, b| a.compute.cmp(&b.compute))
    }

    /// `Some` when the newest GPU in use is newer than `version` built for
    /// `cuda` supports (in a toolkit of CUDA `toolkit`, when known).
    pub fn too_new(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        toolkit: Option<&Version>,
    ) -> Option<(crate::gpu::Gpu, crate::catalog::TooNew)> {
        let gpu = self.newest()?;
        let t = self.catalog.too_new(version, cuda, &gpu.compute, toolkit)?;
        Some((gpu.clone(), t))
    }

    /// Whether every GPU in use runs `version` built for `cuda`: none too
    /// old for it ([`GpuGate::too_old`]), none too new ([`GpuGate::too_new`]).
    pub fn runs(&self, version: &Version, cuda: &CudaVariant) -> bool {
        self.too_old(version, cuda).is_none() && self.too_new(version, cuda, None).is_none()
    }

    /// `Some` when the oldest GPU in use is below the minimum NVIDIA's
    /// support matrix gives for `version` built for `cuda`.
    pub fn too_old(&self, version: &Version, cuda: &CudaVariant) -> Option<TooOld> {
        let gpu = self.oldest()?;
        let needs = self.catalog.min_compute(version, cuda)?;
        (gpu.compute < needs).then(|| TooOld {
            gpu: gpu.clone(),
            needs,
        })
    }

    /// The newest release that runs on the oldest GPU, installed or in the
    /// catalog (a build for `prefer`'s CUDA major first), and the newest
    /// installed one when that is older: the one answer `install`, `use`,
    /// `default`, `pin` and `doctor` give
    /// ([`crate::catalog::offer::newest_that_runs`]).
    pub fn newest_that_runs(&self, prefer: &CudaVariant) -> crate::catalog::offer::NewestThatRuns {
        let Some(gpu) = self.oldest() else {
            return Default::default();
        };
        let offers =
            crate::catalog::offer::offers_for(&self.catalog, crate::version::Platform::host());
        crate::catalog::offer::newest_that_runs(&offers, &self.installed, Some(prefer), &|v, c| {
            self.catalog
                .min_compute(v, c)
                .is_some_and(|m| m <= gpu.compute)
                && self.too_new(v, c, None).is_none()
        })
    }

    /// What install hints must fit here ([`crate::catalog::offer::advise_on`]):
    /// `None` without a visible GPU.
    pub fn with_fit<T>(
        &self,
        f: impl FnOnce(Option<&crate::catalog::offer::GpuFit<'_>>) -> T,
    ) -> T {
        let Some(gpu) = self.oldest() else {
            return f(None);
        };
        let min = |v: &Version, c: &CudaVariant| self.catalog.min_compute(v, c);
        let too_new = |v: &Version, c: &CudaVariant| self.too_new(v, c, None).is_some();
        f(Some(&crate::catalog::offer::GpuFit {
            gpu,
            min_compute: &min,
            too_new: &too_new,
            installed: &self.installed,
        }))
    }

    /// Refuses (exit 8) a release the oldest GPU in use cannot run, naming the
    /// GPU, its compute capability, the release's minimum and the newest
    /// release that does run there; with `force` returns a warning instead.
    /// `doing` is the verb for the messages (`install`, `deploy`).
    ///
    /// # Errors
    /// [`crate::error::Kind::Conflict`] when the GPU is too old and `force` is not set.
    pub fn check(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        force: bool,
        doing: &str,
    ) -> Result<Option<String>> {
        self.check_in(version, cuda, None, force, doing)
    }

    /// [`GpuGate::check`], and for a build deployed into a toolkit of CUDA
    /// `toolkit`, that toolkit: the newest GPUs need a minimum cuDNN, a build
    /// for a minimum CUDA and a toolkit of that CUDA
    /// (docs/releases.md#gpu-ceilings).
    ///
    /// # Errors
    /// [`crate::error::Kind::Conflict`] when a GPU in use cannot run it and `force` is not set.
    pub fn check_in(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        toolkit: Option<&Version>,
        force: bool,
        doing: &str,
    ) -> Result<Option<String>> {
        let Some(t) = self.too_old(version, cuda) else {
            return self.check_ceiling(version, cuda, toolkit, force, doing);
        };
        let g = &t.gpu;
        let what = format!(
            "{} (GPU {}, compute capability {})",
            g.name, g.index, g.compute
        );
        if force {
            return Ok(Some(format!(
                "cuDNN {version} for CUDA {cuda} needs compute capability {} or newer and will not run on {what}; {doing}ing it anyway (--force)",
                t.needs
            )));
        }
        let render = |c: CommandLine| c.for_host(self.windows);
        let suggestion = match self.newest_that_runs(cuda).words(&render) {
            Some(w) => format!("{w}; or pass --force to {doing} this one anyway"),
            None => format!(
                "no known release runs on this GPU; pass --force to {doing} this one anyway"
            ),
        };
        Err(crate::error::Error::new(
            crate::error::Kind::Conflict,
            format!(
                "cuDNN {version} for CUDA {cuda} cannot run on {what}: it needs compute capability {} or newer",
                t.needs
            ),
        )
        .cause("NVIDIA's cuDNN support matrix for this release and CUDA lists no older GPUs; on them cuDNN calls fail with CUDNN_STATUS_ARCH_MISMATCH or \"no kernel image is available for execution on the device\"")
        .hint(suggestion))
    }
}

impl GpuGate {
    /// The ceiling half of [`GpuGate::check_in`]: the same refusal (exit 8)
    /// for a GPU newer than the build supports.
    fn check_ceiling(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        toolkit: Option<&Version>,
        force: bool,
        doing: &str,
    ) -> Result<Option<String>> {
        let Some((g, t)) = self.too_new(version, cuda, toolkit) else {
            return Ok(None);
        };
        let what = format!(
            "{} (GPU {}, compute capability {})",
            g.name, g.index, g.compute
        );
        let needs = t.needs(self.windows);
        if force {
            return Ok(Some(format!(
                "cuDNN {version} for CUDA {cuda} will not run on {what}: {needs}; {doing}ing it anyway (--force)"
            )));
        }
        let render = |c: CommandLine| c.for_host(self.windows);
        let suggestion = match self.newest_that_runs(cuda).words(&render) {
            Some(w) => format!("{w}; or pass --force to {doing} this one anyway"),
            None => format!(
                "no known release runs on this GPU; pass --force to {doing} this one anyway"
            ),
        };
        let subject = match &t.lacks {
            crate::catalog::Lacks::Toolkit(tk) => {
                format!("cuDNN {version} for CUDA {cuda} in a CUDA {tk} toolkit")
            }
            _ => format!("cuDNN {version} for CUDA {cuda}"),
        };
        Err(crate::error::Error::new(
            crate::error::Kind::Conflict,
            format!("{subject} cannot run on {what}: {needs}"),
        )
        .cause(format!(
            "NVIDIA's cuDNN support matrix lists {} GPUs (compute capability {} to {}) only from cuDNN {} with CUDA {}; older builds fail there with \"no kernel image is available for execution on the device\" or CUDNN_STATUS_ARCH_MISMATCH",
            t.row.architecture, t.row.first, t.row.last, t.row.cudnn, t.row.cuda
        ))
        .hint(suggestion))
    }
}

/// Whether the installed bytes of release `r` are ones another machine can
/// fetch, so that locking them (`cudnnm lock`) is worth suggesting: a
/// catalog archive's published hash; a downloaded archive's URL; a wheel
/// whose hash is the one the catalog says PyPI publishes for its
/// requirement, or, where the catalog tells none, a wheel pip fetched.
pub(crate) fn reproducible(cat: &crate::catalog::Catalog, r: &crate::store::Release) -> bool {
    let s = &r.receipt.source;
    let id = r.release_id();
    let Some(sha) = &s.sha256 else {
        return false;
    };
    if cat.archives().iter().any(|a| {
        a.version == id.version
            && a.cuda == id.cuda
            && a.platform == r.platform()
            && a.hashes.iter().any(|h| &h.sha256 == sha)
    }) {
        return true;
    }
    if s.kind == crate::shape::Shape::Wheel || s.dist.is_some() {
        let Some(pip) = s.exact_pip_requirement(&id.version) else {
            return false;
        };
        let published = cat.wheel_hashes(project_of(&pip), &id.version, r.platform());
        return if published.is_empty() {
            fetched_by_pip(s)
        } else {
            published.contains(&sha)
        };
    }
    let (_, is_file) = s.reinstall_arg(&r.id());
    !is_file
        && s.url
            .as_deref()
            .is_some_and(crate::catalog::is_absolute_url)
}

/// Whether pip fetched the installed wheel (`install pip:REQ`), rather
/// than the user giving a local file.
pub(crate) fn fetched_by_pip(s: &crate::store::Source) -> bool {
    s.url.as_deref().is_some_and(|u| u.starts_with("pip:"))
}

/// The project of an exact requirement (`nvidia-cudnn-jit-cu12==9.12.0.46`).
pub(crate) fn project_of(requirement: &str) -> &str {
    requirement
        .split_once("==")
        .map_or(requirement, |(p, _)| p.trim())
}

// ── Frameworks: `--for python` on install, pin, use and exec, and `cudnnm frameworks` ──

/// `--for` and `--python` of `install`, `pin`, `use` and `exec`: the release
/// chosen for the frameworks of a Python environment ([`crate::ops::frameworks`]).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ForArgs {
    /// Choose the newest release that satisfies the frameworks of a Python
    /// environment: `python` (every framework there) or one (`torch`)
    #[arg(long = "for", value_name = "python|NAME")]
    pub for_: Option<String>,
    /// The Python environment for --for: its interpreter or folder [default:
    /// the active one]
    #[arg(long, value_name = "PATH", requires = "for_")]
    pub python: Option<std::path::PathBuf>,
}

/// The release `--for` chose, and the PyPI package when the catalog has it only as a wheel.
#[derive(Clone, Debug)]
pub struct ForPick {
    /// The release.
    pub id: crate::version::ReleaseId,
    /// `nvidia-cudnn-cu13` for a release the catalog has only on PyPI.
    pub wheel: Option<String>,
}

impl ForPick {
    /// What `install` takes for it: the release id, or `pip:PACKAGE==VERSION`.
    pub fn install_arg(&self) -> String {
        match &self.wheel {
            Some(p) => format!("pip:{p}=={}", self.id.version),
            None => self.id.to_string(),
        }
    }
}

/// The release `f` chooses (`None` without `--for`), said on stderr with the
/// frameworks it satisfies; `toolkit` limits it to builds that fit a toolkit
/// of that CUDA (`use`).
///
/// # Errors
/// No Python environment found; [`Kind::Conflict`] when two frameworks'
/// requirements conflict (both named, and what resolves it) or no release
/// satisfying them can be chosen here.
pub fn release_for(ctx: &Ctx, f: &ForArgs, toolkit: Option<Version>) -> Result<Option<ForPick>> {
    use crate::ops::frameworks::{Choice, Gather, gather};
    let Some(what) = f.for_.as_deref() else {
        return Ok(None);
    };
    let only = (!what.eq_ignore_ascii_case("python"))
        .then(|| framework_name(what))
        .transpose()?;
    let g = gather(&Gather {
        env: &ctx.env,
        home: &ctx.home,
        python: f.python.as_deref(),
        only: only.as_ref(),
        toolkit,
    })?;
    for a in &g.report.advised {
        ctx.warn(advised_line(a));
    }
    let names: Vec<String> = g
        .report
        .frameworks
        .iter()
        .filter(|x| !x.needs.is_empty())
        .map(|x| format!("{} {}", x.name, x.version))
        .collect();
    let lines = choice_lines(&g.report.choice, ctx.env.is_windows());
    match &g.report.choice {
        Choice::Release { release, wheel, .. } => {
            ctx.status(format!(
                "cuDNN {release}: the newest release satisfying {}",
                names.join(", ")
            ));
            Ok(Some(ForPick {
                id: release.clone(),
                wheel: wheel.clone(),
            }))
        }
        Choice::NoNeeds => Err(Error::new(
            Kind::NotFound,
            match &only {
                Some(n) => format!("no installed framework named {n} names a cuDNN it needs in that Python environment"),
                None => "no framework in that Python environment names a cuDNN it needs".to_string(),
            },
        )
        .hint("`cudnnm frameworks` lists what cudnnm sees there; name a release instead of --for")),
        _ => Err(Error::new(
            Kind::Conflict,
            format!("no cuDNN release can be chosen for {}", names.join(", ")),
        )
        .cause(lines.join("\n"))
        .hint("`cudnnm frameworks` shows each requirement; name a release instead of --for, or change the environment as said above")),
    }
}

/// Warns when an advisory covers release `version` for `cuda` (`install`,
/// `use`). A yank is said by the catalog's pick instead (its reason, from
/// the catalog), so only the embedded advisories are read here.
pub fn warn_advised(ctx: &Ctx, version: &Version, cuda: &CudaVariant) {
    let all = crate::catalog::advisory::embedded();
    for a in crate::catalog::advisory::covering(&all, version, cuda, None, None) {
        ctx.warn(format!(
            "cuDNN {} is covered by advisory {}: {} ({})",
            crate::version::release_id(version, cuda),
            a.id,
            a.summary,
            a.source
        ));
    }
}

/// The warning for a release in use that an advisory covers.
pub fn advised_line(a: &crate::ops::frameworks::AdvisedInUse) -> String {
    let what = match &a.wheel {
        Some(w) => format!("the {w} wheel installed here ({})", a.release),
        None => format!("cuDNN {}, the release that applies here,", a.release),
    };
    format!(
        "{what} is covered by advisory {}: {} ({})",
        a.id, a.summary, a.source
    )
}

/// A `--for` value as a distribution name.
///
/// # Errors
/// [`Kind::Usage`] for a name PEP 508 does not allow.
pub fn framework_name(s: &str) -> Result<pep508_rs::PackageName> {
    s.parse().map_err(|_| {
        Error::new(
            Kind::Usage,
            format!("'{s}' is not a Python distribution name"),
        )
        .hint("name a framework as pip does: torch, tensorflow, jax-cuda13-plugin, onnxruntime-gpu")
    })
}

/// The choice in words, one line each: the release and its commands, or the
/// conflict with both requirements and what would resolve it.
pub fn choice_lines(c: &Choice, windows: bool) -> Vec<String> {
    let host = |c: CommandLine| c.for_host(windows);
    match c {
        Choice::NoNeeds => vec!["no framework here names a cuDNN it needs".to_string()],
        Choice::Release {
            release,
            passed_over,
            ..
        } => {
            let mut out = vec![format!(
                "cuDNN {release} satisfies every framework here: `{}`, then `{}`",
                host(CommandLine::install(release.to_string())),
                host(CommandLine::pin(release.to_string()))
            )];
            out.extend(passed_over.iter().map(|s| format!("  passed over {}", skipped(s))));
            out
        }
        Choice::Conflict(k) => conflict_lines(k),
        Choice::NoneRuns { passed_over } => {
            let mut out =
                vec!["releases satisfy every framework here, but none can be chosen:".to_string()];
            out.extend(passed_over.iter().map(|s| format!("  {}", skipped(s))));
            out
        }
        Choice::NoneKnown => vec![
            "the catalog has no release that satisfies every framework here (`cudnnm manifest refresh` updates it)".to_string(),
        ],
    }
}

fn conflict_lines(k: &Conflict) -> Vec<String> {
    let mut out = vec![
        "no cuDNN satisfies both:".to_string(),
        format!("  {}", k.first.describe()),
        format!("  {}", k.second.describe()),
    ];
    if k.first.cuda != k.second.cuda {
        out.push(format!(
            "  cuDNN builds for CUDA {} and CUDA {} install the same files (nvidia/cudnn/lib) and a process loads one libcudnn",
            k.first.cuda, k.second.cuda
        ));
    }
    out.push("resolve it with one of:".to_string());
    for r in &k.resolutions {
        out.push(match r {
            Resolution::OtherBuild {
                framework,
                version,
                cuda,
                cudnn,
            } => format!(
                "  {framework} {version} has a build for CUDA {cuda} (with cuDNN {cudnn}): install that build instead"
            ),
            Resolution::SeparateEnvironments { frameworks } => format!(
                "  {} and {} in separate environments, each run in its own process",
                frameworks[0], frameworks[1]
            ),
        });
    }
    out
}

fn skipped(s: &Skipped) -> String {
    let why = match &s.why {
        PassedOver::Advisory { id, summary } => format!("advisory {id}: {summary}"),
        PassedOver::Gpu { needs, has } => {
            format!("needs compute capability {needs}; the oldest GPU in use has {has}")
        }
        PassedOver::Driver { needs, has } => {
            format!("needs driver {needs} or newer; this one is {has}")
        }
        PassedOver::Toolkit { cuda } => format!("not built for the CUDA {cuda} toolkit"),
    };
    format!("{} ({why})", s.release)
}
