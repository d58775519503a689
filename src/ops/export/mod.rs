//! `export`: releases written out for other tools — Lmod or Tcl
//! modulefiles (planned by [`crate::modulefile::plan`], written here
//! through `fsops`), a Spack `packages.yaml` block, and one release as a
//! plain folder (`dir`). A home remembers the modulefile folders written
//! from its store (`exports.toml`) and [`refresh`] rewrites them whenever
//! that store or its default changes, so no module outlives its release.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Event, Session};
use crate::command::CommandLine;
use crate::error::{Error, Result};
use crate::fsops;
use crate::home::Home;
use crate::modulefile::{self, CudaModule, Engine, ModuleRelease};
use crate::store::{Release, Store};

pub mod dir;

/// The home whose store an export reads (the system home with `system`,
/// else the user's own store alone), its releases, and each as a
/// [`ModuleRelease`].
///
/// # Errors
/// The store cannot be read.
pub fn releases(
    session: &Session<'_>,
    system: bool,
) -> Result<(Home, Vec<Release>, Vec<ModuleRelease>)> {
    let home = if system {
        Home::system(session.system_home)
    } else {
        Home::new(session.home.root())
    };
    let releases = Store::new(&home).releases()?;
    let modules = releases
        .iter()
        .map(|r| ModuleRelease {
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

/// What `export lmod` / `export tcl` is asked.
#[derive(Clone, Debug)]
pub struct ModulesRequest {
    /// Lmod or Tcl.
    pub engine: Engine,
    /// The modulepath folder (from the working folder when relative);
    /// modulefiles go to `DIR/cudnn/`.
    pub dir: PathBuf,
    /// The system store's releases (and default) instead of the user's own.
    pub system: bool,
    /// The site's CUDA module template (`cuda/{major}.{minor}`).
    pub cuda_module: Option<String>,
}

/// What an export of modulefiles did (`--json` prints it).
#[derive(Debug, Serialize)]
pub struct ModulesExported {
    /// The folder of the modulefiles (`DIR/cudnn`).
    pub dir: String,
    /// Files written or links made.
    pub written: Vec<String>,
    /// Files and links that already held what they should.
    pub unchanged: Vec<String>,
    /// Files an earlier export wrote for releases that are gone.
    pub removed: Vec<String>,
    /// The default module (`9.12.0.46-cuda12`).
    pub default: Option<String>,
    /// The modulepath folder (`DIR`), for `module use`.
    #[serde(skip)]
    pub modulepath: PathBuf,
    /// How many releases have a modulefile.
    #[serde(skip)]
    pub modules: usize,
    /// Whether the home whose store was exported remembers the folder, to
    /// refresh it on each change; else why not.
    #[serde(skip)]
    pub remembered: std::result::Result<(), String>,
}

/// A modulefile export a home remembers: what [`refresh`] runs again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remembered {
    /// Lmod or Tcl.
    pub engine: Engine,
    /// The modulepath folder (absolute).
    pub dir: PathBuf,
    /// The site's CUDA module template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_module: Option<String>,
}

impl Remembered {
    /// The command that refreshes it by hand (with `--system` when `system`).
    pub fn command(&self, system: bool) -> CommandLine {
        let mut c = CommandLine::export_modules(self.engine.as_str(), &self.dir);
        if let Some(t) = &self.cuda_module {
            c = c.literal("--cuda-module").word(t.clone());
        }
        if system { c.literal("--system") } else { c }
    }
}

/// `exports.toml`: the modulefile folders written from a home's store.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Exports {
    #[serde(default)]
    modules: Vec<Remembered>,
}

/// The file where `home` remembers its exports.
fn exports_file(home: &Home) -> PathBuf {
    home.root().join("exports.toml")
}

/// The exports `home` remembers; none when the file is missing or
/// unreadable. Read bounded, as every state file ([`fsops::load_toml`]).
pub fn remembered(home: &Home) -> Vec<Remembered> {
    fsops::load_toml_or_default::<Exports>(&exports_file(home), |p, m| {
        Error::msg(format!("could not parse '{}': {m}", p.display()))
    })
    .map(|e| e.modules)
    .unwrap_or_default()
}

/// Adds (or replaces, by folder) `export` in what `home` remembers.
fn remember(home: &Home, export: Remembered) -> Result<()> {
    let mut all = Exports {
        modules: remembered(home),
    };
    all.modules.retain(|m| m.dir != export.dir);
    all.modules.push(export);
    home.ensure()?;
    fsops::save_toml(&exports_file(home), &all, "exports")
}

/// Rewrites every modulefile folder the session's home remembers, after a
/// change to its store or default; one event per folder: refreshed (when
/// anything changed), or not, with the command that refreshes it. A folder
/// whose `cudnn/` is gone is forgotten: the user removed it. Each folder is
/// read and written as `export` does ([`modulefile::read_existing`],
/// [`modulefile::apply`]: through its handle, never through a link).
pub fn refresh(session: &Session<'_>) {
    let system = session.home.is_system();
    let mut kept = Vec::new();
    let all = remembered(session.home);
    let before = all.len();
    for r in all {
        if !r.dir.join(modulefile::FAMILY).is_dir() {
            continue;
        }
        let req = ModulesRequest {
            engine: r.engine,
            dir: r.dir.clone(),
            system,
            cuda_module: r.cuda_module.clone(),
        };
        match write_modules(session, &req) {
            Ok(done) => {
                if !done.written.is_empty() || !done.removed.is_empty() {
                    session.report.event(&Event::ModulesRefreshed {
                        dir: &r.dir,
                        written: done.written.len(),
                        removed: done.removed.len(),
                    });
                }
            }
            Err(error) => session.report.event(&Event::ModulesStale {
                dir: &r.dir,
                error: &error,
                // The home's own flags (`--system`) are added where it is printed.
                command: r.command(false),
            }),
        }
        kept.push(r);
    }
    if kept.len() != before {
        let _ = fsops::save_toml(
            &exports_file(session.home),
            &Exports { modules: kept },
            "exports",
        );
    }
}

/// `export lmod` / `export tcl`: plans with [`modulefile::plan`] from the
/// chosen store and what `DIR/cudnn/` holds, then applies it
/// ([`modulefile::apply`]: through the folder's handle, never through a
/// link; `DIR` 0755, modulefiles 0644 on Unix; on Windows the folder's ACL
/// decides). The exported home then remembers `DIR` in `exports.toml`, for
/// [`refresh`] (a failure to remember is reported in `remembered`, not an
/// error: the modulefiles stand).
///
/// # Errors
/// A bad template, a store that cannot be read, or a file that cannot be
/// written.
pub fn modules(session: &Session<'_>, req: &ModulesRequest) -> Result<ModulesExported> {
    let mut done = write_modules(session, req)?;
    let home = if req.system {
        Home::system(session.system_home)
    } else {
        Home::new(session.home.root())
    };
    done.remembered = remember(
        &home,
        Remembered {
            engine: req.engine,
            dir: done.modulepath.clone(),
            cuda_module: req.cuda_module.clone(),
        },
    )
    .map_err(|e| e.to_string());
    Ok(done)
}

/// [`modules`] without remembering the folder.
fn write_modules(session: &Session<'_>, req: &ModulesRequest) -> Result<ModulesExported> {
    let cuda_module = req
        .cuda_module
        .as_deref()
        .map(CudaModule::parse)
        .transpose()?;
    let (home, releases, modules) = releases(session, req.system)?;
    let default = home
        .config()?
        .default
        .and_then(|d| d.parse::<crate::version::Spec>().ok())
        .and_then(|spec| crate::pin::select(&spec, &releases))
        .map(|r| modulefile::module_version_of(&r.release_id().with_flavour(r.flavour())));
    let dir = session.env.cwd().join(&req.dir);
    let folder = dir.join(modulefile::FAMILY);
    let steps = modulefile::plan(
        req.engine,
        &dir,
        &modules,
        cuda_module.as_ref(),
        default.as_deref(),
        // Read and changed through the folder's handle, never through a link.
        &modulefile::read_existing(&dir),
    )?;
    let applied = modulefile::apply(&dir, &steps)?;
    let shown =
        |v: Vec<PathBuf>| -> Vec<String> { v.iter().map(|p| p.display().to_string()).collect() };
    Ok(ModulesExported {
        dir: folder.display().to_string(),
        written: shown(applied.written),
        unchanged: shown(applied.unchanged),
        removed: shown(applied.removed),
        default,
        modulepath: dir,
        modules: modules.len(),
        remembered: Ok(()),
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::ops::testing::{Fixture, folder};

    #[test]
    fn modulefiles_are_written_once_kept_then_removed_with_their_release() {
        let f = Fixture::new();
        let r = f.release("9.1.0.70", "12", folder("a"));
        f.release("8.9.7.29", "12", folder("b"));
        let req = ModulesRequest {
            engine: Engine::Lmod,
            dir: "modules".into(),
            system: false,
            cuda_module: Some("cuda/{major}".into()),
        };
        let first = modules(&f.session(), &req).unwrap();
        assert_eq!(first.modules, 2);
        assert_eq!(first.written.len(), 2, "{first:?}");
        assert!(first.unchanged.is_empty() && first.removed.is_empty());
        assert_eq!(first.modulepath, f.root().join("modules"));
        let lua = f
            .root()
            .join("modules")
            .join("cudnn")
            .join("9.1.0.70-cuda12.lua");
        let text = std::fs::read_to_string(&lua).unwrap();
        // It names the release's own folders, as the modulefile language
        // quotes them (a Linux release's are joined with `/` on any host).
        let lib = format!("{}/lib", r.dir.display()).replace('\\', "\\\\");
        assert!(text.contains(&lib), "{lib} in {text}");

        let again = modules(&f.session(), &req).unwrap();
        assert!(again.written.is_empty(), "{again:?}");
        assert_eq!(again.unchanged.len(), 2);

        std::fs::remove_dir_all(&r.dir).unwrap();
        let after = modules(&f.session(), &req).unwrap();
        assert_eq!(after.removed, vec![lua.display().to_string()]);
        assert!(!lua.exists());
    }

    #[test]
    fn a_bad_cuda_module_template_writes_nothing() {
        let f = Fixture::new();
        f.release("9.1.0.70", "12", folder("a"));
        let req = ModulesRequest {
            engine: Engine::Tcl,
            dir: "modules".into(),
            system: false,
            cuda_module: Some("cuda/{nope}".into()),
        };
        assert!(modules(&f.session(), &req).is_err());
        assert!(!f.root().join("modules").exists());
    }
}
