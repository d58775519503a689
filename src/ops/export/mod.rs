//! `export`: releases written out for other tools — Lmod or Tcl
//! modulefiles (planned by [`crate::modulefile::plan`], written here
//! through `fsops`), a Spack `packages.yaml` block, and one release as a
//! plain folder (`dir`).

use std::path::PathBuf;

use serde::Serialize;

use super::Session;
use crate::error::Result;
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
}

/// `export lmod` / `export tcl`: plans with [`modulefile::plan`] from the
/// chosen store and what `DIR/cudnn/` holds, then applies it
/// ([`modulefile::apply`]: through the folder's handle, never through a
/// link; `DIR` 0755, modulefiles 0644 on Unix; on Windows the folder's ACL
/// decides).
///
/// # Errors
/// A bad template, a store that cannot be read, or a file that cannot be
/// written.
pub fn modules(session: &Session<'_>, req: &ModulesRequest) -> Result<ModulesExported> {
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
