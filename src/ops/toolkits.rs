//! Which toolkits a command works on and what each holds: those found on
//! this machine and those this home knows (deployed to, or holding backups
//! of); the CUDA builds a catalog pick chooses by
//! (`docs/architecture.md#toolkits`); each toolkit's state as `current`
//! and `toolkits` show it; and `toolkits forget`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Event, Session};
use crate::catalog::Catalog;
use crate::command::CommandLine;
use crate::deploy::status::{self, Drift};
use crate::deploy::{Deployments, Mode, backup, inflight, scan_toolkit_names};
use crate::error::{Error, Kind, Result};
use crate::home::Home;
use crate::pin::SpecSource;
use crate::store::Store;
use crate::toolkit::{self, Layout, Toolkit};
use crate::version::{CudaVariant, Platform, Spec};

/// The toolkit roots `home` knows: those `deployments.toml` records, then
/// those only backups name (a toolkit rolled back to no cuDNN has no
/// deployment any more, but its backups), each with what named it.
fn recorded_roots(home: &Home, deployments: &Deployments) -> Vec<(PathBuf, &'static str)> {
    let mut roots: Vec<(PathBuf, &'static str)> = deployments
        .entries
        .iter()
        .map(|d| (d.toolkit.clone(), "deployments.toml"))
        .collect();
    for b in backup::list(home).unwrap_or_default() {
        if !roots.iter().any(|(r, _)| *r == b.record.toolkit) {
            roots.push((b.record.toolkit, "backups"));
        }
    }
    roots
}

/// The toolkits this home has deployed to or holds backups of that are
/// still toolkits (for `--cuda X.Y` and for the choice when nothing names
/// a toolkit: they count as well as those discovered).
pub fn recorded(session: &Session<'_>, deployments: &Deployments) -> Vec<Toolkit> {
    recorded_roots(session.home, deployments)
        .iter()
        .filter_map(|(root, by)| Toolkit::at(root, by, session.env.is_windows()).ok())
        .collect()
}

/// Every toolkit worth showing: those found on this machine, then those
/// `deployments.toml` records elsewhere (sandbox folders, `--cuda-root`)
/// and those only backups name. A recorded deployment whose folder is no
/// toolkit any more is reported ([`Event::RecordedToolkitLost`]).
pub fn known(session: &Session<'_>, deployments: &Deployments) -> Vec<Toolkit> {
    let mut all = toolkit::discover(session.env);
    for (root, by) in recorded_roots(session.home, deployments) {
        if all.iter().any(|t| t.root == root) {
            continue;
        }
        match Toolkit::at(&root, by, session.env.is_windows()) {
            Ok(t) => all.push(t),
            Err(e) => {
                if let Some(d) = deployments.for_toolkit(&root) {
                    session.report.event(&Event::RecordedToolkitLost {
                        release: &d.release,
                        root: &root,
                        gone: toolkit::is_gone(&root),
                        error: &e,
                    });
                }
            }
        }
    }
    all
}

/// The CUDA variants of the installed releases `spec` names, and how to
/// name them in the reason a toolkit is chosen (`cuDNN 9.12 (from
/// '/p/.cudnn-version' line 1)`): the toolkit selector prefers the one a
/// build of them fits.
pub fn wanted_cudas(
    home: &Home,
    spec: &Spec,
    from: Option<&SpecSource>,
) -> (Vec<CudaVariant>, String) {
    let mut cudas: Vec<CudaVariant> = Store::new(home)
        .matching(spec)
        .unwrap_or_default()
        .iter()
        .map(|r| *r.cuda())
        .collect();
    cudas.dedup();
    let label = match from {
        Some(src) => format!("cuDNN {spec} ({})", src.label()),
        None => format!("cuDNN {spec}"),
    };
    (cudas, label)
}

/// The toolkits a catalog pick chooses its CUDA build by
/// ([`for_pick`]), and the one chosen among several CUDA builds.
#[derive(Clone, Debug, Default)]
pub struct ForPick {
    /// The toolkits the catalog's pick must fit (none: nothing to choose by).
    pub toolkits: Vec<Toolkit>,
    /// When the catalog has several CUDA builds of the spec: the toolkit
    /// that chose one (reported as [`Event::BuildChosen`]).
    pub chosen: Option<Toolkit>,
}

/// The toolkits a catalog pick (`install SPEC`, a bare `install`, `lock`)
/// chooses its CUDA build by, as `use` picks a toolkit: none to choose by
/// when `cuda` (`--cuda`) or the spec's suffix names the CUDA; for another
/// platform than this machine's, those found here. Else, among the toolkits
/// found and those this home knows (deployed to, or holding backups of), the
/// one `use` would pick ([`toolkit::select`]): the one the environment names,
/// the only one, or the only one a catalog build of `spec` fits — narrowed
/// to the pin's CUDA when the pin that applies here names one. With several
/// and none of those, all of them: the catalog then asks for `--cuda` when
/// they need different builds. A toolkit that chose among several CUDA
/// builds is reported ([`Event::BuildChosen`]).
pub fn for_pick(
    session: &Session<'_>,
    spec: &Spec,
    cuda: Option<&CudaVariant>,
    platform: Platform,
) -> ForPick {
    if cuda.is_some() || spec.cuda.is_some() {
        return ForPick::default();
    }
    if Some(platform) != session.env.platform() {
        return ForPick {
            toolkits: toolkit::discover(session.env),
            chosen: None,
        };
    }
    let deployments = Deployments::load(session.home).unwrap_or_default();
    let known = recorded(session, &deployments);
    let catalog = session.catalog_or_embedded();
    let builds = catalog_cudas(&catalog, spec, platform);
    let several = builds.len() > 1;
    let (wants, label) = narrow_to_pin(session, builds, spec);
    let chosen = toolkit::select(
        session.env,
        &toolkit::Selector {
            known: &known,
            wants: &wants,
            wants_label: &label,
            ..Default::default()
        },
    );
    match chosen {
        // Said only where it chose among CUDA builds.
        Ok(t) if several => {
            session
                .report
                .event(&Event::BuildChosen { spec, toolkit: &t });
            ForPick {
                toolkits: vec![t.clone()],
                chosen: Some(t),
            }
        }
        Ok(t) => ForPick {
            toolkits: vec![t],
            chosen: None,
        },
        Err(_) => {
            let mut all = toolkit::discover(session.env);
            for k in known {
                if !all.iter().any(|t| t.root == k.root) {
                    all.push(k);
                }
            }
            ForPick {
                toolkits: all,
                chosen: None,
            }
        }
    }
}

/// The CUDA variants of the catalog's archives of `spec` for `platform`,
/// sorted, each once.
fn catalog_cudas(catalog: &Catalog, spec: &Spec, platform: Platform) -> Vec<CudaVariant> {
    let mut wants: Vec<CudaVariant> = catalog
        .archives()
        .iter()
        .filter(|a| a.platform == platform && spec.matches(&a.version, &a.cuda))
        .map(|a| a.cuda)
        .collect();
    wants.sort();
    wants.dedup();
    wants
}

/// The CUDA builds a toolkit must fit to be chosen for `spec` (of
/// `builds`, the catalog's), and how to say so: narrowed to the pin's CUDA
/// when the pin that applies here names one the catalog has.
fn narrow_to_pin(
    session: &Session<'_>,
    builds: Vec<CudaVariant>,
    spec: &Spec,
) -> (Vec<CudaVariant>, String) {
    let label = format!("a build of cuDNN {spec} in the catalog");
    if let Ok(Some(pin)) = crate::pin::resolve_spec(None, session.env, session.home)
        && let Some(pc) = &pin.spec.cuda
    {
        let narrowed: Vec<CudaVariant> = builds
            .iter()
            .copied()
            .filter(|w| crate::catalog::resolve::cuda_serves(pc, w))
            .collect();
        if !narrowed.is_empty() {
            let label = format!(
                "the CUDA {pc} build of cuDNN {spec} the pin {} asks for ({})",
                pin.spec,
                pin.source.label()
            );
            return (narrowed, label);
        }
    }
    (builds, label)
}

/// One toolkit's state, as `current` and `toolkits` show it (and `--json`
/// prints it).
#[derive(Debug, Serialize)]
pub struct ToolkitState {
    /// The toolkit root.
    pub root: PathBuf,
    /// Its CUDA version.
    pub cuda: String,
    /// Its folder layout.
    pub layout: Layout,
    /// How it was found.
    pub found_by: String,
    /// The release cudnnm deployed there.
    pub release: Option<String>,
    /// How it was placed.
    pub mode: Option<Mode>,
    /// When it was deployed (RFC 3339).
    pub deployed_at: Option<String>,
    /// The backup `rollback` restores (a number, as in `backups --json`):
    /// the one holding what was there before the deployment, or, when that
    /// one was removed, the toolkit's newest backup left; none when there
    /// is none.
    pub backup: Option<u64>,
    /// The backup the deployment recorded, when it was removed since.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_removed: Option<u64>,
    /// How the deployed files differ from the record.
    pub drift: Option<Drift>,
    /// The one other cuDNN the toolkit now holds instead of the recorded
    /// release ([`status::replaced`], as `verify` judges it): another
    /// cudnnm home, or the user, deployed it since; the differences in
    /// `drift` are that, not damage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub now_holds: Option<String>,
    /// With `now_holds`: the command that puts this home's release back
    /// (for this home, in the user's shell).
    #[serde(skip)]
    pub put_back: Option<String>,
    /// For toolkits cudnnm does not manage: the cuDNN version their headers declare.
    pub unmanaged_cudnn: Option<String>,
    /// For toolkits cudnnm does not manage: how many cuDNN files they hold.
    #[serde(skip)]
    pub unmanaged_files: usize,
    /// Another home's change to the toolkit that is running or unfinished
    /// (its in-flight marker).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unfinished_change: Option<UnfinishedChange>,
}

/// Another home's change to a toolkit, from its in-flight marker.
#[derive(Debug, Serialize)]
pub struct UnfinishedChange {
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

impl ToolkitState {
    /// The state of toolkit `t` as `deployments` records it and its files
    /// are (`store` holds the releases the records name).
    pub fn read(
        session: &Session<'_>,
        t: &Toolkit,
        deployments: &Deployments,
        store: &Store,
    ) -> ToolkitState {
        let home = session.home;
        let dep = deployments.for_toolkit(&t.root);
        let unfinished_change = unfinished(session, &t.root);
        // The recorded backup while it exists (one stat), else the newest left.
        let recorded = dep.and_then(|d| d.backup);
        let (backup, backup_removed) = match recorded {
            Some(id) if backup::exists(home, id) => (Some(id), None),
            Some(id) => (
                backup::for_toolkit(home, &t.root)
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
            session.printed(
                CommandLine::use_(d.release.to_string())
                    .cuda_root(&t.root)
                    .mode(d.mode),
            )
        });
        ToolkitState {
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
}

/// Another home's change to the toolkit at `root` that is running or
/// unfinished, from its in-flight marker.
fn unfinished(session: &Session<'_>, root: &Path) -> Option<UnfinishedChange> {
    inflight::foreign(session.home, root).map(|m| {
        let running = crate::lock::toolkit_busy(root);
        let hint = match (running, m.describe()) {
            (true, Some(d)) => format!("a change from another cudnnm home is running: {d}"),
            (true, None) => "a change from another user's cudnnm home is running".to_string(),
            (false, d) => format!(
                "unfinished change {}: {}",
                d.unwrap_or_else(|| "from another user's cudnnm home".to_string()),
                inflight::finish_advice(&m, root, session.env.is_windows())
            ),
        };
        UnfinishedChange {
            home: m.home,
            backup: m.backup,
            action: m.action,
            running,
            hint,
        }
    })
}

/// Every toolkit worth showing ([`known`]) and its state (`cudnnm
/// toolkits`), after recovering what a crash left.
///
/// # Errors
/// `deployments.toml` cannot be read, or recovery fails.
pub fn states(session: &Session<'_>) -> Result<Vec<ToolkitState>> {
    session.recover_if_pending()?;
    let deployments = Deployments::load(session.home)?;
    let store = Store::new(session.home);
    Ok(known(session, &deployments)
        .iter()
        .map(|t| ToolkitState::read(session, t, &deployments, &store))
        .collect())
}

/// What `toolkits forget` did.
#[derive(Debug, Serialize)]
pub struct Forgotten {
    /// The toolkit root.
    pub toolkit: PathBuf,
    /// The release recorded there.
    pub release: String,
    /// The backups of it, which stay.
    pub backups: Vec<u64>,
}

/// `toolkits forget ROOT`: only a toolkit whose folder is gone, under the
/// home lock; its deployment record goes, its backups stay. `root` is
/// taken from the working folder when relative.
///
/// # Errors
/// [`Kind::NotFound`] when this home records no deployment there;
/// [`Kind::Conflict`] when the toolkit still exists.
pub fn forget(session: &Session<'_>, root: &Path) -> Result<Forgotten> {
    let root = session.env.cwd().join(root);
    let guard = session.guard()?;
    let deployments = Deployments::load(session.home)?;
    let Some(dep) = deployments.for_toolkit(&root).cloned() else {
        return Err(not_recorded(&deployments, &root));
    };
    let ids: Vec<u64> = backup::for_toolkit(session.home, &root)?
        .iter()
        .map(|b| b.record.id)
        .collect();
    if !toolkit::is_gone(&root) {
        let hint = match ids.first() {
            Some(first) => format!(
                "cudnnm forgets only a toolkit whose folder is gone; to take this home's cuDNN out of it, restore what was there before cudnnm: `{}`",
                session.printed(CommandLine::rollback().to_backup(*first))
            ),
            None => format!(
                "cudnnm forgets only a toolkit whose folder is gone; `{}` shows what it holds",
                session.printed(CommandLine::current().cuda_root(&root))
            ),
        };
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "the toolkit '{}' still exists, with cuDNN {} deployed by this home",
                root.display(),
                dep.release
            ),
        )
        .hint(hint));
    }
    guard.forget_toolkit(&root)?;
    Ok(Forgotten {
        toolkit: root,
        release: dep.release.to_string(),
        backups: ids,
    })
}

/// The refusal of `toolkits forget ROOT` for a root no deployment names.
fn not_recorded(deployments: &Deployments, root: &Path) -> Error {
    let recorded: Vec<String> = deployments
        .entries
        .iter()
        .map(|d| format!("'{}'", d.toolkit.display()))
        .collect();
    Error::new(
        Kind::NotFound,
        format!(
            "this home has no deployment recorded in '{}'",
            root.display()
        ),
    )
    .hint(if recorded.is_empty() {
        "this home records no deployment; nothing to forget".to_string()
    } else {
        format!(
            "name a toolkit root as recorded ({}); `cudnnm toolkits` lists them",
            recorded.join(", ")
        )
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::deploy::Deployment;
    use crate::ops::testing::Fixture;

    /// A Linux CUDA toolkit of `cuda` at `root` (its `version.json`, and `lib64/`).
    fn toolkit_at(root: &Path, cuda: &str) {
        std::fs::create_dir_all(root.join("lib64")).unwrap();
        std::fs::create_dir_all(root.join("include")).unwrap();
        std::fs::write(
            root.join("version.json"),
            format!(r#"{{"cuda": {{"name": "CUDA SDK", "version": "{cuda}"}}}}"#),
        )
        .unwrap();
    }

    fn deployment(root: &Path, release: &str) -> Deployment {
        Deployment {
            toolkit: root.to_path_buf(),
            release: release.parse().unwrap(),
            mode: Mode::Copy,
            deployed_at: "2026-01-01T00:00:00Z".into(),
            backup: None,
            files: Vec::new(),
            source: None,
        }
    }

    #[test]
    fn a_recorded_toolkit_whose_folder_is_gone_is_reported_not_listed() {
        let f = Fixture::new();
        let gone = f.root().join("cuda-gone");
        let here = f.root().join("cuda-12.4");
        toolkit_at(&here, "12.4.1");
        let deployments = Deployments {
            entries: vec![
                deployment(&gone, "9.1.0.70_cuda12"),
                deployment(&here, "9.1.0.70_cuda12"),
            ],
        };
        let all = known(&f.session(), &deployments);
        assert!(
            all.iter()
                .any(|t| t.root == here && t.found_by == "deployments.toml")
        );
        assert!(!all.iter().any(|t| t.root == gone));
        let events = f.events();
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(events[0].starts_with("RecordedToolkitLost"), "{events:?}");
        assert!(events[0].contains("gone: true"), "{events:?}");
        // `recorded` (for the selector) says nothing.
        assert_eq!(recorded(&f.session(), &deployments).len(), 1);
        assert_eq!(f.events().len(), 1);
    }

    #[test]
    fn a_named_cuda_leaves_nothing_for_a_pick_to_choose_by() {
        let f = Fixture::new();
        let spec: Spec = "9".parse().unwrap();
        let cuda: CudaVariant = "12".parse().unwrap();
        let p = for_pick(&f.session(), &spec, Some(&cuda), Platform::LinuxX86_64);
        assert!(p.toolkits.is_empty() && p.chosen.is_none());
        let suffixed: Spec = "9_cuda12".parse().unwrap();
        let p = for_pick(&f.session(), &suffixed, None, Platform::LinuxX86_64);
        assert!(p.toolkits.is_empty() && p.chosen.is_none());
        assert!(f.events().is_empty());
    }

    #[test]
    fn the_only_known_toolkit_chooses_among_several_cuda_builds_and_says_so() {
        let f = Fixture::new();
        let root = f.root().join("cuda-11.8");
        toolkit_at(&root, "11.8.0");
        Deployments {
            entries: vec![deployment(&root, "8.9.7.29_cuda11")],
        }
        .save(&f.home)
        .unwrap();
        // The catalog has cuDNN 9.1.0.70 for CUDA 11 and for CUDA 12.
        let spec: Spec = "9.1.0.70".parse().unwrap();
        let p = for_pick(&f.session(), &spec, None, f.env.platform().unwrap());
        assert_eq!(p.chosen.as_ref().map(|t| &t.root), Some(&root));
        assert_eq!(p.toolkits.len(), 1);
        let events = f.events();
        assert!(
            events.iter().any(|e| e.starts_with("BuildChosen")),
            "{events:?}"
        );
    }

    #[test]
    fn an_unmanaged_toolkit_states_its_cudnn_files() {
        let f = Fixture::new();
        let root = f.root().join("cuda-12.4");
        toolkit_at(&root, "12.4.1");
        std::fs::write(root.join("lib64/libcudnn.so.9"), b"x").unwrap();
        let t = Toolkit::at(&root, "CUDA_PATH", false).unwrap();
        let s = ToolkitState::read(
            &f.session(),
            &t,
            &Deployments::default(),
            &Store::new(&f.home),
        );
        assert_eq!(s.release, None);
        assert_eq!(s.unmanaged_cudnn, None);
        assert_eq!(s.unmanaged_files, 1);
        assert_eq!(s.cuda, "12.4.1");
        let json = serde_json::to_value(&s).unwrap();
        // Fields for people only stay out of the JSON.
        assert!(json.get("unmanaged_files").is_none() && json.get("put_back").is_none());
        assert_eq!(json["found_by"], "CUDA_PATH");
    }

    #[test]
    fn forget_refuses_a_toolkit_that_still_exists_and_drops_a_gone_ones_record() {
        let f = Fixture::new();
        let here = f.root().join("cuda-12.4");
        toolkit_at(&here, "12.4.1");
        let gone = f.root().join("cuda-gone");
        Deployments {
            entries: vec![
                deployment(&here, "9.1.0.70_cuda12"),
                deployment(&gone, "9.1.0.70_cuda12"),
            ],
        }
        .save(&f.home)
        .unwrap();
        let e = forget(&f.session(), &here).unwrap_err();
        assert_eq!(e.kind(), Kind::Conflict);
        let e = forget(&f.session(), &f.root().join("elsewhere")).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert!(e.hint_text().unwrap().contains("cuda-12.4"), "{e:?}");
        let done = forget(&f.session(), &gone).unwrap();
        assert_eq!(done.release, "9.1.0.70_cuda12");
        assert!(done.backups.is_empty());
        let left = Deployments::load(&f.home).unwrap();
        assert_eq!(left.entries.len(), 1);
        assert_eq!(left.entries[0].toolkit, here);
    }
}
