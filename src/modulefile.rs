//! Modulefiles for the engines HPC sites use to hand library versions to
//! users and jobs: Lmod (Lua modulefiles) and Environment Modules (Tcl
//! modulefiles). One modulefile per release, named
//! `cudnn/<version>-cuda<variant>` (`cudnn/9.27.0.42-cuda12`), setting what
//! `cudnnm exec` sets plus `CMAKE_PREFIX_PATH`.
//!
//! Formats: Lmod's Lua functions (`whatis`, `help`, `family`, `prereq`,
//! `prepend_path`, `setenv`), <https://lmod.readthedocs.io/en/latest/050_lua_modulefiles.html>;
//! Environment Modules' Tcl commands (`module-whatis`, `ModulesHelp`,
//! `conflict`, `prereq`, `prepend-path`, `setenv`, the `.version` file),
//! <https://modules.readthedocs.io/en/latest/modulefile.html>.
//!
//! Every file written carries [`MARKER`] in its first lines, so that a later
//! export removes only files it wrote itself ([`is_ours`]).
//!
//! This module renders text and plans which files to write or remove
//! ([`plan`]); [`read_existing`] and [`apply`] read and change `DIR/cudnn/`
//! through its folder handle, never through a link: a modulepath is often
//! a shared folder, and the export may run as root.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::env;
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::version::{CudaVariant, ReleaseId};

/// The text that marks a file as written by `cudnnm export`.
pub const MARKER: &str = "written by cudnnm export; cudnnm rewrites or removes this file";

/// The module family and conflict name: two cuDNN modules never stack.
pub const FAMILY: &str = "cudnn";

/// The module engine a modulefile is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Lmod: `cudnn/<name>.lua`, default by a `default` symlink.
    Lmod,
    /// Environment Modules: `cudnn/<name>` (Tcl), default by `.version`.
    Tcl,
}

impl Engine {
    /// The file name of the module `name` (`9.27.0.42-cuda12.lua` / `9.27.0.42-cuda12`).
    pub fn file_name(self, name: &str) -> String {
        match self {
            Engine::Lmod => format!("{name}.lua"),
            Engine::Tcl => name.to_string(),
        }
    }

    /// The file naming the default version (`default` / `.version`).
    pub fn default_file(self) -> &'static str {
        match self {
            Engine::Lmod => "default",
            Engine::Tcl => ".version",
        }
    }
}

/// The module version of release `id`: `<version>-cuda<variant>`
/// (`9.27.0.42-cuda12`), `-jit` after it for NVIDIA's JIT build
/// (`9.27.0.42-cuda12-jit`): the two builds are two modules.
pub fn module_version_of(id: &ReleaseId) -> String {
    let jit = if id.flavour.is_full() { "" } else { "-jit" };
    format!("{}-cuda{}{jit}", id.version, id.cuda)
}

/// What a modulefile needs to know about one release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleRelease {
    /// The release.
    pub id: ReleaseId,
    /// The release folder.
    pub dir: PathBuf,
    /// Whether the release is a Windows build (its loader folder is `bin`).
    pub windows: bool,
    /// The archive or folder it was imported from.
    pub source: String,
    /// The archive's SHA-256, when it was an archive.
    pub sha256: Option<Sha256Hex>,
}

impl ModuleRelease {
    /// The module version ([`module_version_of`] its id).
    pub fn module_version(&self) -> String {
        module_version_of(&self.id)
    }

    /// `sub` below the release folder, joined by the rules of the release's
    /// platform (so that the text is the same on every host).
    fn under(&self, sub: &str) -> PathBuf {
        let sep = if self.windows { '\\' } else { '/' };
        let dir = self.dir.to_string_lossy();
        PathBuf::from(format!("{}{sep}{sub}", dir.trim_end_matches(sep)))
    }

    fn include_dir(&self) -> PathBuf {
        self.under("include")
    }

    fn lib_dir(&self) -> PathBuf {
        self.under("lib")
    }

    fn loader(&self) -> (&'static str, PathBuf) {
        if self.windows {
            (env::PATH, self.under("bin"))
        } else {
            (env::LD_LIBRARY_PATH, self.lib_dir())
        }
    }

    /// Path lists to prepend to, in order.
    fn prepends(&self) -> Vec<(&'static str, PathBuf)> {
        let (loader, dir) = self.loader();
        vec![
            (loader, dir),
            (env::CPATH, self.include_dir()),
            (env::LIBRARY_PATH, self.lib_dir()),
            ("CMAKE_PREFIX_PATH", self.dir.clone()),
        ]
    }

    /// Scalars to set, in order.
    fn sets(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            (env::CUDNN_PATH, self.dir.clone()),
            (env::CUDNN_INCLUDE_DIR, self.include_dir()),
            (env::CUDNN_LIBRARY_DIR, self.lib_dir()),
        ]
    }

    fn help_lines(&self) -> Vec<String> {
        let mut v = vec![
            format!(
                "NVIDIA cuDNN {} for CUDA {}.",
                self.id.version, self.id.cuda
            ),
            format!("Installed by cudnnm in {}", self.dir.display()),
            format!("Source: {}", self.source),
        ];
        if let Some(h) = &self.sha256 {
            v.push(format!("SHA-256: {h}"));
        }
        v
    }
}

/// A site's CUDA module name template, `--cuda-module cuda/{major}.{minor}`:
/// `{major}`, `{minor}` and `{variant}` (`12`, `11.2`) are replaced by the
/// release's CUDA variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaModule(String);

impl CudaModule {
    /// Checks the template: known placeholders only, something outside them.
    ///
    /// # Errors
    /// [`Kind::Usage`] for an unknown `{placeholder}` or an empty template.
    pub fn parse(template: &str) -> Result<CudaModule> {
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let close = rest[open..].find('}').map(|c| open + c).ok_or_else(|| {
                Error::new(Kind::Usage, format!("'{template}' has an unclosed '{{'"))
                    .hint("write placeholders as {major}, {minor} or {variant}, e.g. cuda/{major}.{minor}")
            })?;
            let name = &rest[open + 1..close];
            if !["major", "minor", "variant"].contains(&name) {
                return Err(Error::new(
                    Kind::Usage,
                    format!("'{template}' uses an unknown placeholder {{{name}}}"),
                )
                .hint("the placeholders are {major}, {minor} and {variant}, e.g. cuda/{major}.{minor}"));
            }
            rest = &rest[close + 1..];
        }
        if template.trim().is_empty() {
            return Err(Error::new(Kind::Usage, "the CUDA module template is empty")
                .hint("give the site's CUDA module name, e.g. cuda/{major}.{minor}"));
        }
        Ok(CudaModule(template.to_string()))
    }

    /// The module name for `cuda`.
    ///
    /// # Errors
    /// [`Kind::Usage`] when the template needs `{minor}` and the release's
    /// CUDA variant has none (`12`).
    pub fn render(&self, cuda: &CudaVariant) -> Result<String> {
        if self.0.contains("{minor}") && cuda.minor().is_none() {
            return Err(Error::new(
                Kind::Usage,
                format!(
                    "releases for CUDA {cuda} name no minor version, which '{}' needs",
                    self.0
                ),
            )
            .hint("use {major} or {variant} in --cuda-module (e.g. cuda/{major}), which fit every release"));
        }
        Ok(self
            .0
            .replace("{major}", &cuda.major().to_string())
            .replace(
                "{minor}",
                &cuda.minor().map(|m| m.to_string()).unwrap_or_default(),
            )
            .replace("{variant}", &cuda.to_string()))
    }
}

/// `s` as a Lua string literal.
fn lua_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\{:03}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `s` as one Tcl word: double-quoted, with every character Tcl would
/// substitute escaped.
fn tcl_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' | '$' | '[' | ']' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The modulefile of `release` for `engine`, with the CUDA module
/// `cuda_module` as a prerequisite when given.
pub fn render(engine: Engine, release: &ModuleRelease, cuda_module: Option<&str>) -> String {
    let version = release.module_version();
    let whatis = [
        "Name: cuDNN".to_string(),
        format!("Version: {}", release.id.version),
        format!("CUDA: {}", release.id.cuda),
        format!(
            "Source: {}{}",
            release.source,
            release
                .sha256
                .as_ref()
                .map(|h| format!(" (SHA-256 {h})"))
                .unwrap_or_default()
        ),
        "Description: NVIDIA CUDA Deep Neural Network library".to_string(),
    ];
    let mut out = String::new();
    match engine {
        Engine::Lmod => {
            out.push_str(&format!("-- cudnn/{version}: {MARKER}.\n\n"));
            for w in &whatis {
                out.push_str(&format!("whatis({})\n", lua_str(w)));
            }
            out.push_str(&format!(
                "help({})\n\n",
                lua_str(&(release.help_lines().join("\n") + "\n"))
            ));
            out.push_str(&format!("family({})\n", lua_str(FAMILY)));
            if let Some(m) = cuda_module {
                out.push_str(&format!("prereq({})\n", lua_str(m)));
            }
            out.push('\n');
            for (name, dir) in release.prepends() {
                out.push_str(&format!(
                    "prepend_path({}, {})\n",
                    lua_str(name),
                    lua_str(&dir.to_string_lossy())
                ));
            }
            for (name, dir) in release.sets() {
                out.push_str(&format!(
                    "setenv({}, {})\n",
                    lua_str(name),
                    lua_str(&dir.to_string_lossy())
                ));
            }
        }
        Engine::Tcl => {
            out.push_str(&format!("#%Module1.0\n# cudnn/{version}: {MARKER}.\n\n"));
            out.push_str("proc ModulesHelp { } {\n");
            for l in release.help_lines() {
                out.push_str(&format!("    puts stderr {}\n", tcl_str(&l)));
            }
            out.push_str("}\n");
            for w in &whatis {
                out.push_str(&format!("module-whatis {}\n", tcl_str(w)));
            }
            out.push_str(&format!("\nconflict {FAMILY}\n"));
            if let Some(m) = cuda_module {
                out.push_str(&format!("prereq {}\n", tcl_str(m)));
            }
            out.push('\n');
            for (name, dir) in release.prepends() {
                out.push_str(&format!(
                    "prepend-path {name} {}\n",
                    tcl_str(&dir.to_string_lossy())
                ));
            }
            for (name, dir) in release.sets() {
                out.push_str(&format!(
                    "setenv {name} {}\n",
                    tcl_str(&dir.to_string_lossy())
                ));
            }
        }
    }
    out
}

/// The default-version file naming module version `version`: Tcl's
/// `.version` text; for Lmod the target of the `default` symlink.
pub fn render_default(engine: Engine, version: &str) -> String {
    match engine {
        Engine::Lmod => engine.file_name(version),
        Engine::Tcl => format!(
            "#%Module1.0\n# cudnn default: {MARKER}.\nset ModulesVersion {}\n",
            tcl_str(version)
        ),
    }
}

/// A Spack `packages.yaml` block declaring `releases` as external `cudnn`
/// packages that Spack must not build: one spec per release,
/// `cudnn@<version>-<cuda>` as Spack's own `cudnn` package spells its
/// versions (`9.2.0.82-12`, `8.4.0.27-11.6`), with its folder as `prefix:`.
/// Format: <https://spack.readthedocs.io/en/latest/packages_yaml.html>.
pub fn spack_packages(releases: &[ModuleRelease]) -> String {
    let block = SpackPackages::of(releases);
    let mut out = String::from(
        "# cuDNN releases of cudnnm, for Spack's packages.yaml (written by cudnnm export spack)\npackages:\n  cudnn:\n    buildable: false\n    externals:\n",
    );
    for e in &block.packages.cudnn.externals {
        out.push_str(&format!(
            "    - spec: {}\n      prefix: {}\n",
            e.spec,
            yaml_str(&e.prefix)
        ));
    }
    if releases.is_empty() {
        out.push_str("    []\n");
    }
    out
}

/// The `packages.yaml` block of [`spack_packages`] as data, for
/// `export spack --json` (JSON is YAML too: Spack reads either).
#[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
pub struct SpackPackages {
    /// `packages:`.
    pub packages: SpackPackageSet,
}

/// `packages:` holding the one `cudnn` package.
#[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
pub struct SpackPackageSet {
    /// `cudnn:`.
    pub cudnn: SpackPackage,
}

/// `cudnn:`: not buildable, only the externals.
#[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
pub struct SpackPackage {
    /// Always false: Spack must use these, never build cuDNN.
    pub buildable: bool,
    /// One per release.
    pub externals: Vec<SpackExternal>,
}

/// One external: `cudnn@9.12.0.46-12` at its store folder.
#[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
pub struct SpackExternal {
    /// `cudnn@<version>-<cuda>`.
    pub spec: String,
    /// The release folder.
    pub prefix: String,
}

impl SpackPackages {
    /// The block for `releases`.
    pub fn of(releases: &[ModuleRelease]) -> SpackPackages {
        SpackPackages {
            packages: SpackPackageSet {
                cudnn: SpackPackage {
                    buildable: false,
                    externals: releases
                        .iter()
                        .map(|r| SpackExternal {
                            spec: format!("cudnn@{}-{}", r.id.version, r.id.cuda),
                            prefix: r.dir.to_string_lossy().into_owned(),
                        })
                        .collect(),
                },
            },
        }
    }
}

/// `s` as a YAML double-quoted scalar.
fn yaml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether the text of a file in the `cudnn/` folder was written by cudnnm.
pub fn is_ours(text: &str) -> bool {
    text.lines().take(3).any(|l| l.contains(MARKER))
}

/// One change an export makes in `DIR/cudnn/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Write (or rewrite) a file with this text; `changed` is false when the
    /// file already holds exactly that text.
    Write {
        /// The file.
        path: PathBuf,
        /// Its text.
        text: String,
        /// Whether the file differs now.
        changed: bool,
    },
    /// Point the symlink `path` at `target` (a file name beside it).
    Link {
        /// The link.
        path: PathBuf,
        /// Its target.
        target: String,
        /// Whether the link differs now.
        changed: bool,
    },
    /// Remove a file (or link) cudnnm wrote that no release needs any more.
    Remove {
        /// The file.
        path: PathBuf,
    },
}

/// What is in `DIR/cudnn/` now: file name → its text (`None` for a link,
/// with its target in the second map). Read by the command.
#[derive(Clone, Debug, Default)]
pub struct Existing {
    /// Regular files and their text (unreadable files left out).
    pub files: BTreeMap<String, String>,
    /// Symbolic links and their targets.
    pub links: BTreeMap<String, String>,
}

/// What `dir/cudnn/` holds now (empty when it does not exist), read through
/// its handle: files by their text (a file that is not UTF-8 text, or
/// larger than 1 MiB, is left out), links by their target, nothing
/// followed.
pub fn read_existing(dir: &Path) -> Existing {
    let mut existing = Existing::default();
    let folder = dir.join(FAMILY);
    let Ok(d) = crate::fsops::at::open_dir(&folder) else {
        return existing;
    };
    let Ok(entries) = d.entries() else {
        return existing;
    };
    use crate::fsops::at::EntryKind;
    for (name, kind) in entries {
        let key = name.to_string_lossy().into_owned();
        match kind {
            EntryKind::Link => {
                if let Ok(t) = d.read_link(&name) {
                    existing.links.insert(key, t.to_string_lossy().into_owned());
                }
            }
            EntryKind::File => {
                use std::io::Read;
                let mut text = String::new();
                if let Ok(f) = d.open_file(&name)
                    && f.take(1 << 20).read_to_string(&mut text).is_ok()
                {
                    existing.files.insert(key, text);
                }
            }
            _ => {}
        }
    }
    existing
}

/// What [`apply`] did, by path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Files and links written.
    pub written: Vec<PathBuf>,
    /// Files and links already as planned.
    pub unchanged: Vec<PathBuf>,
    /// Files and links removed.
    pub removed: Vec<PathBuf>,
}

/// Applies `steps` (from [`plan`] for `dir`) through the handle of
/// `dir/cudnn/`: `dir` and its missing parents are made 0755 whatever the
/// umask, `cudnn/` is made 0755, modulefiles are written atomically with
/// mode 0644 (readable by every user, still replaceable by the next
/// export), links replaced, removals made — none through a link.
///
/// # Errors
/// When a folder cannot be made or a file written or removed; a step
/// outside `dir/cudnn/` ([`Kind::Failure`], a planning bug).
pub fn apply(dir: &Path, steps: &[Step]) -> Result<Applied> {
    use crate::fsops::at;
    let top = at::create_dirs_shared(dir)?;
    let folder = at::dir_in(&top, std::ffi::OsStr::new(FAMILY), 0o755)?;
    folder
        .set_own_mode(0o755)
        .map_err(|e| Error::io("change permissions of", folder.path(), e))?;
    let mut done = Applied::default();
    let name_of = |p: &Path| -> Result<std::ffi::OsString> {
        match (p.parent(), p.file_name()) {
            (Some(parent), Some(n)) if parent == folder.path() => Ok(n.to_os_string()),
            _ => Err(Error::msg(format!(
                "'{}' is not in '{}'",
                p.display(),
                folder.path().display()
            ))),
        }
    };
    for step in steps {
        match step {
            Step::Write {
                path,
                text,
                changed,
            } => {
                if *changed {
                    at::write_atomic_in(&folder, &name_of(path)?, text.as_bytes(), 0o644)?;
                    done.written.push(path.clone());
                } else {
                    done.unchanged.push(path.clone());
                }
            }
            Step::Link {
                path,
                target,
                changed,
            } => {
                if *changed {
                    at::replace_link_in(&folder, &name_of(path)?, Path::new(target))?;
                    done.written.push(path.clone());
                } else {
                    done.unchanged.push(path.clone());
                }
            }
            Step::Remove { path } => {
                at::remove_in(&folder, &name_of(path)?)?;
                done.removed.push(path.clone());
            }
        }
    }
    Ok(done)
}

/// Plans an export of `releases` into `dir` (the modulepath folder; files
/// go to `dir/cudnn/`) given what is there: modulefiles to write, the
/// default file for module version `default` (removed when `None`), and
/// cudnnm's own files that no release needs any more to remove. Files
/// cudnnm did not write are never touched, nor planned over.
///
/// # Errors
/// [`Kind::Conflict`] when a file cudnnm did not write sits where a
/// modulefile or the default file goes.
pub fn plan(
    engine: Engine,
    dir: &Path,
    releases: &[ModuleRelease],
    cuda_module: Option<&CudaModule>,
    default: Option<&str>,
    existing: &Existing,
) -> Result<Vec<Step>> {
    let folder = dir.join(FAMILY);
    let mut steps = Vec::new();
    let mut wanted: Vec<String> = Vec::new();
    for r in releases {
        let name = engine.file_name(&r.module_version());
        let prereq = cuda_module.map(|m| m.render(&r.id.cuda)).transpose()?;
        let text = render(engine, r, prereq.as_deref());
        let path = folder.join(&name);
        let changed = match existing.files.get(&name) {
            Some(old) if old == &text => false,
            Some(old) if !is_ours(old) => return Err(foreign(&path)),
            _ if existing.links.contains_key(&name) => return Err(foreign(&path)),
            _ => true,
        };
        steps.push(Step::Write {
            path,
            text,
            changed,
        });
        wanted.push(name);
    }
    let default_name = engine.default_file().to_string();
    let path = folder.join(&default_name);
    match (engine, default) {
        (_, Some(v)) if !releases.iter().any(|r| r.module_version() == v) => {
            return Err(Error::new(
                Kind::NotFound,
                format!("the default cuDNN {v} is not among the exported releases"),
            )
            .hint("install it into the store being exported, or set another default"));
        }
        (Engine::Lmod, Some(v)) => {
            let target = render_default(engine, v);
            let changed = match (
                existing.links.get(&default_name),
                existing.files.get(&default_name),
            ) {
                (Some(t), _) => *t != target,
                (None, Some(_)) => return Err(foreign(&path)),
                (None, None) => true,
            };
            if existing
                .links
                .get(&default_name)
                .is_some_and(|t| !is_our_link(t, existing))
            {
                return Err(foreign(&path));
            }
            steps.push(Step::Link {
                path,
                target,
                changed,
            });
            wanted.push(default_name.clone());
        }
        (Engine::Tcl, Some(v)) => {
            let text = render_default(engine, v);
            let changed = match existing.files.get(&default_name) {
                Some(old) if old == &text => false,
                Some(old) if !is_ours(old) => return Err(foreign(&path)),
                _ => true,
            };
            steps.push(Step::Write {
                path,
                text,
                changed,
            });
            wanted.push(default_name.clone());
        }
        (_, None) => {}
    }
    for (name, text) in &existing.files {
        if !wanted.contains(name) && is_ours(text) {
            steps.push(Step::Remove {
                path: folder.join(name),
            });
        }
    }
    for (name, target) in &existing.links {
        if !wanted.contains(name) && is_our_link(target, existing) {
            steps.push(Step::Remove {
                path: folder.join(name),
            });
        }
    }
    Ok(steps)
}

/// Whether a link in `cudnn/` is cudnnm's: it points at a file beside it
/// that cudnnm wrote (or that is gone, and was named as cudnnm names them).
fn is_our_link(target: &str, existing: &Existing) -> bool {
    if target.contains('/') {
        return false;
    }
    match existing.files.get(target) {
        Some(text) => is_ours(text),
        None => target.ends_with(".lua") && target.contains("-cuda"),
    }
}

fn foreign(path: &Path) -> Error {
    Error::new(
        Kind::Conflict,
        format!("'{}' exists and was not written by cudnnm", path.display()),
    )
    .hint("move it away (cudnnm never overwrites files it did not write), or export into another folder")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(version: &str, cuda: &str) -> ModuleRelease {
        ModuleRelease {
            id: ReleaseId::new(version.parse().unwrap(), cuda.parse().unwrap()),
            dir: PathBuf::from(format!("/opt/cudnnm/store/cuda-{cuda}/{version}")),
            windows: false,
            source: "nvidia_cudnn_jit_cu12-9.27.0.42.whl".into(),
            sha256: None,
        }
    }

    #[test]
    fn lmod_and_tcl_files_set_what_exec_sets() {
        let r = rel("9.27.0.42", "12");
        let lua = render(Engine::Lmod, &r, Some("cuda/12"));
        assert!(lua.starts_with("-- cudnn/9.27.0.42-cuda12: written by cudnnm export"));
        for line in [
            "family(\"cudnn\")",
            "prereq(\"cuda/12\")",
            "whatis(\"Version: 9.27.0.42\")",
            "prepend_path(\"LD_LIBRARY_PATH\", \"/opt/cudnnm/store/cuda-12/9.27.0.42/lib\")",
            "prepend_path(\"CPATH\", \"/opt/cudnnm/store/cuda-12/9.27.0.42/include\")",
            "prepend_path(\"LIBRARY_PATH\", \"/opt/cudnnm/store/cuda-12/9.27.0.42/lib\")",
            "prepend_path(\"CMAKE_PREFIX_PATH\", \"/opt/cudnnm/store/cuda-12/9.27.0.42\")",
            "setenv(\"CUDNN_PATH\", \"/opt/cudnnm/store/cuda-12/9.27.0.42\")",
            "setenv(\"CUDNN_INCLUDE_DIR\", \"/opt/cudnnm/store/cuda-12/9.27.0.42/include\")",
            "setenv(\"CUDNN_LIBRARY_DIR\", \"/opt/cudnnm/store/cuda-12/9.27.0.42/lib\")",
        ] {
            assert!(lua.lines().any(|l| l == line), "{line} missing in\n{lua}");
        }
        let tcl = render(Engine::Tcl, &r, None);
        assert!(tcl.starts_with("#%Module1.0\n# cudnn/9.27.0.42-cuda12: written by"));
        for line in [
            "conflict cudnn",
            "prepend-path LD_LIBRARY_PATH \"/opt/cudnnm/store/cuda-12/9.27.0.42/lib\"",
            "setenv CUDNN_PATH \"/opt/cudnnm/store/cuda-12/9.27.0.42\"",
            "module-whatis \"CUDA: 12\"",
        ] {
            assert!(tcl.lines().any(|l| l == line), "{line} missing in\n{tcl}");
        }
        assert!(!tcl.contains("prereq"));
        assert!(is_ours(&lua) && is_ours(&tcl));
        assert!(!is_ours("#%Module1.0\nsetenv X 1\n"));
    }

    #[test]
    fn odd_paths_are_quoted_for_each_language() {
        assert_eq!(lua_str("a\"b\\c\n\t"), "\"a\\\"b\\\\c\\n\\009\"");
        assert_eq!(tcl_str("/p/$x [y] {z}"), "\"/p/\\$x \\[y\\] \\{z\\}\"");
    }

    #[test]
    fn cuda_module_templates() {
        let m = CudaModule::parse("cuda/{major}.{minor}").unwrap();
        assert_eq!(m.render(&"11.2".parse().unwrap()).unwrap(), "cuda/11.2");
        assert_eq!(
            m.render(&"12".parse().unwrap()).unwrap_err().kind(),
            Kind::Usage
        );
        let v = CudaModule::parse("CUDA/{variant}").unwrap();
        assert_eq!(v.render(&"12".parse().unwrap()).unwrap(), "CUDA/12");
        assert_eq!(
            CudaModule::parse("cuda/{patch}").unwrap_err().kind(),
            Kind::Usage
        );
        assert_eq!(
            CudaModule::parse("cuda/{major").unwrap_err().kind(),
            Kind::Usage
        );
    }

    #[test]
    fn plans_write_only_changes_and_remove_only_own_stale_files() {
        let dir = Path::new("/m");
        let a = rel("9.27.0.42", "12");
        let b = rel("9.12.0.46", "12");
        let first = plan(
            Engine::Lmod,
            dir,
            &[a.clone(), b.clone()],
            None,
            Some("9.27.0.42-cuda12"),
            &Existing::default(),
        )
        .unwrap();
        assert_eq!(first.len(), 3);
        // As written: nothing changes.
        let mut now = Existing::default();
        for s in &first {
            match s {
                Step::Write { path, text, .. } => {
                    now.files.insert(
                        path.file_name().unwrap().to_string_lossy().into(),
                        text.clone(),
                    );
                }
                Step::Link { path, target, .. } => {
                    now.links.insert(
                        path.file_name().unwrap().to_string_lossy().into(),
                        target.clone(),
                    );
                }
                Step::Remove { .. } => unreachable!(),
            }
        }
        now.files
            .insert("mine.lua".into(), "whatis(\"site\")\n".into());
        let again = plan(
            Engine::Lmod,
            dir,
            &[a.clone(), b.clone()],
            None,
            Some("9.27.0.42-cuda12"),
            &now,
        )
        .unwrap();
        assert!(
            again.iter().all(|s| matches!(
                s,
                Step::Write { changed: false, .. } | Step::Link { changed: false, .. }
            )),
            "{again:?}"
        );
        // b is gone, and no default: its file and the link go, the site's file stays.
        let later = plan(Engine::Lmod, dir, &[a], None, None, &now).unwrap();
        let removed: Vec<&Path> = later
            .iter()
            .filter_map(|s| match s {
                Step::Remove { path } => Some(path.as_path()),
                _ => None,
            })
            .collect();
        assert_eq!(
            removed,
            vec![
                Path::new("/m/cudnn/9.12.0.46-cuda12.lua"),
                Path::new("/m/cudnn/default")
            ]
        );
        // A site file where a modulefile goes is refused.
        let mut site = Existing::default();
        site.files
            .insert("9.12.0.46-cuda12.lua".into(), "-- the site's own\n".into());
        assert_eq!(
            plan(Engine::Lmod, dir, &[b], None, None, &site)
                .unwrap_err()
                .kind(),
            Kind::Conflict
        );
    }

    #[test]
    fn spack_block_names_each_release_and_its_prefix() {
        let y = spack_packages(&[rel("9.12.0.46", "12"), rel("8.4.0.27", "11.6")]);
        assert_eq!(
            y.lines().skip(1).collect::<Vec<_>>(),
            [
                "packages:",
                "  cudnn:",
                "    buildable: false",
                "    externals:",
                "    - spec: cudnn@9.12.0.46-12",
                "      prefix: \"/opt/cudnnm/store/cuda-12/9.12.0.46\"",
                "    - spec: cudnn@8.4.0.27-11.6",
                "      prefix: \"/opt/cudnnm/store/cuda-11.6/8.4.0.27\"",
            ]
        );
        // The JSON form is the same block.
        let j = serde_json::to_value(SpackPackages::of(&[rel("9.12.0.46", "12")])).unwrap();
        assert_eq!(
            j,
            serde_json::json!({"packages": {"cudnn": {"buildable": false, "externals": [
                {"spec": "cudnn@9.12.0.46-12", "prefix": "/opt/cudnnm/store/cuda-12/9.12.0.46"}
            ]}}})
        );
    }

    #[test]
    fn tcl_default_is_a_version_file() {
        let t = render_default(Engine::Tcl, "9.27.0.42-cuda12");
        assert!(t.starts_with("#%Module1.0\n"));
        assert!(t.contains("set ModulesVersion \"9.27.0.42-cuda12\""));
        assert!(is_ours(&t));
        assert_eq!(
            render_default(Engine::Lmod, "9.27.0.42-cuda12"),
            "9.27.0.42-cuda12.lua"
        );
    }
}
