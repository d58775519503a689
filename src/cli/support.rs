//! What several commands share, so that command files never import each
//! other: recovery before a command, the toolkits worth showing and each
//! one's state, the views `list` and `install` print, the elevation hint,
//! status lines about backups, and text formatting (sizes, tables).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Ctx;
use crate::command::CommandLine;
use crate::deploy::plan::{NO_CUDNN, scan_toolkit_names};
use crate::deploy::recover::{self, Recovered};
use crate::deploy::status::{self, Drift};
use crate::deploy::{Deployments, Mode, access, inflight, journal, plan};
use crate::error::Result;
use crate::pin::SpecSource;
use crate::store::{Release, Store};
use crate::toolkit::{self, Layout, Toolkit};

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

/// Finishes or undoes changes a crash left, saying which. Call under the lock.
pub fn recover_and_report(ctx: &Ctx) -> Result<Vec<Recovered>> {
    recover::recover_all(&ctx.home, ctx)
}

/// For read-only commands: when a journal exists, wait for the lock (the
/// change may still be running) and recover; otherwise touch nothing.
pub fn recover_if_pending(ctx: &Ctx) -> Result<Vec<Recovered>> {
    if !journal::any_pending(&ctx.home) && Store::new(&ctx.home).replaced().is_empty() {
        return Ok(Vec::new());
    }
    let _lock = ctx.lock()?;
    recover_and_report(ctx)
}

/// How to run `command` with the rights the toolkit needs, or to activate
/// `release` per process instead (see [`access::elevate_hint`]).
pub fn elevate_hint(ctx: &Ctx, command: CommandLine, root: &Path, release: Option<&str>) -> String {
    access::elevate_hint(&ctx.env, &ctx.home, command, root, release)
}

/// A "held" label inside `cuDNN A → B`: `(none)` for a toolkit without cuDNN.
pub fn msg_label(label: &str) -> &str {
    if label == plan::NO_CUDNN {
        "(none)"
    } else {
        label
    }
}

/// Names the files a change moved into backup `id` that look like cuDNN's
/// but that no cuDNN release ships (see [`plan::moved_not_from_a_release`]).
pub fn report_not_from_a_release(ctx: &Ctx, id: u64, rels: &[String]) {
    if !rels.is_empty() {
        ctx.status(format!(
            "also moved to backup {id}: {} (not part of any cuDNN release), kept until `cudnnm backups --remove {id}`",
            rels.join(", ")
        ));
    }
}

/// Warns of each folder an interrupted import left in the store
/// (`store/.partial-*`), with its size and how to free it. Says nothing
/// while another cudnnm holds the home lock: the folder may be its import.
pub fn report_partials(ctx: &Ctx) {
    if crate::lock::home_busy(&ctx.home) {
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

/// The toolkits `deployments.toml` records that are still toolkits (for
/// `--cuda X.Y`, which picks among them as well as those discovered).
pub fn recorded_toolkits(ctx: &Ctx, deployments: &Deployments) -> Vec<Toolkit> {
    deployments
        .entries
        .iter()
        .filter_map(|d| Toolkit::at(&d.toolkit, "deployments.toml", ctx.env.is_windows()).ok())
        .collect()
}

/// Every toolkit worth showing: those found on this machine, then those
/// `deployments.toml` records elsewhere (sandbox folders, `--cuda-root`).
pub fn known_toolkits(ctx: &Ctx, deployments: &Deployments) -> Vec<Toolkit> {
    let mut all = toolkit::discover(&ctx.env);
    for d in &deployments.entries {
        if all.iter().any(|t| t.root == d.toolkit) {
            continue;
        }
        match Toolkit::at(&d.toolkit, "deployments.toml", ctx.env.is_windows()) {
            Ok(t) => all.push(t),
            Err(e) => ctx.warn(format!(
                "cuDNN {} is recorded in '{}', which is no longer a toolkit: {e}",
                d.release,
                d.toolkit.display()
            )),
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
    pub fn state(&self) -> String {
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

/// One installed release as `list --json` and `install --json` print it.
#[derive(Serialize)]
pub struct ReleaseView<'a> {
    pub id: String,
    pub version: String,
    pub cuda: String,
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
}

impl<'a> ReleaseView<'a> {
    pub fn new(
        r: &'a Release,
        deployed_in: &[String],
        default: bool,
        pinned: bool,
    ) -> ReleaseView<'a> {
        ReleaseView {
            id: r.id(),
            version: r.version().to_string(),
            cuda: r.cuda().to_string(),
            platform: r.platform().to_string(),
            header_version: r.receipt.header_version.to_string(),
            size: r.receipt.total_size(),
            path: r.dir.display().to_string(),
            installed_at: &r.receipt.installed_at,
            source: &r.receipt.source,
            deployed_in: deployed_in.to_vec(),
            default,
            pinned,
        }
    }
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
