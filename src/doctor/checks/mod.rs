//! The checks: pure functions from a [`Snapshot`] and the reference
//! [`Tables`] to [`Finding`]s. Nothing here touches the machine, so every
//! Windows case is a Linux test with a Windows snapshot as data.
//!
//! - `system.rs`: OS, toolkits, `nvcc`, `CUDA_PATH`, driver, GPU.
//! - `files/`: the files of each installation (complete set, folders,
//!   soname chains, header against library, CUDA fit, architecture).
//! - `loading/`: what the loader finds (copies in search order, mixing,
//!   `PATH` mistakes, dependencies, zlib).
//! - `windows.rs`: Visual C++ runtime, UCRT, registry `PATH`.
//! - `frameworks.rs`: what frameworks and pins expect against what loads.
//! - `processes.rs`: what each framework's process maps, played through.
//! - `watched.rs`: a watched program's mapped files against the prediction.
//! - `stale.rs`: caches, variables, modules, links and locks that point at
//!   what is gone.

mod files;
mod frameworks;
mod headers;
mod loading;
pub(crate) mod processes;
mod stale;
mod system;
pub(crate) mod watched;
mod windows;

use std::collections::BTreeSet;

use super::finding::Finding;
use super::loader::{self, Hit};
use super::snapshot::{CudnnFile, Snapshot};
use super::spath;
use crate::catalog::offer::best_offer;
pub use crate::catalog::offer::{Offer, offers_for};
use crate::catalog::{Catalog, FrameworkBuild};
use crate::command::CommandLine;
use crate::names::{self, FileKind};
use crate::version::{DriverVersion, Platform, Spec, Version};

/// The minimum driver for one CUDA toolkit version on one OS (NVIDIA CUDA
/// release notes, Table 3; `docs/releases.md#driver-floors`; `manifest.toml` via
/// the catalog).
#[derive(Clone, Debug, PartialEq)]
pub struct DriverFloor {
    /// The CUDA toolkit version (`12.4`, `12.4.1`, `11.2.0`).
    pub cuda: Version,
    /// True for the Windows column.
    pub windows: bool,
    /// The minimum driver version.
    pub min: DriverVersion,
}

/// Reference data the checks compare against: driver floors, framework
/// builds and the releases that can be installed. Filled from the catalog
/// (`manifest.toml`); tests pass rows of their own.
#[derive(Clone, Debug, Default)]
pub struct Tables {
    /// Minimum drivers per CUDA version.
    pub drivers: Vec<DriverFloor>,
    /// Which cuDNN and CUDA each framework release was built with.
    pub frameworks: Vec<FrameworkBuild>,
    /// Releases the catalog knows for the snapshot's platform, so that a
    /// suggested `cudnnm install` names only one that exists.
    pub offers: Vec<Offer>,
    /// The support matrix's rows that give a minimum GPU compute capability
    /// (docs/releases.md, "Minimum compute capability per CUDA variant").
    pub compute: Vec<crate::catalog::SupportRow>,
    /// What the newest GPU architectures need (docs/releases.md#gpu-ceilings).
    pub gpus: Vec<crate::catalog::GpuRow>,
    /// Known-bad releases: `advisories.toml` and the catalog's yanked
    /// wheels ([`crate::catalog::advisory::with_yanks`]).
    pub advisories: Vec<crate::catalog::advisory::Advisory>,
}

impl Tables {
    /// The tables from the catalog, for the toolkits in `s`.
    pub fn from_catalog(catalog: &Catalog, s: &Snapshot) -> Tables {
        let windows = s.windows();
        let mut drivers = Vec::new();
        for t in &s.toolkits {
            let Some(cuda) = &t.cuda else { continue };
            let mm = Version::from_parts(&[cuda.major(), cuda.minor()]);
            for v in [cuda.clone(), mm] {
                if let Some(min) = catalog.min_driver(&v, windows)
                    && !drivers.iter().any(|d: &DriverFloor| d.cuda == v)
                {
                    drivers.push(DriverFloor {
                        cuda: v,
                        windows,
                        min,
                    });
                }
            }
        }
        Tables {
            drivers,
            frameworks: catalog.frameworks().to_vec(),
            offers: offers_for(catalog, snapshot_platform(s)),
            compute: compute_rows(catalog),
            gpus: catalog.gpus().to_vec(),
            advisories: crate::catalog::advisory::with_yanks(catalog),
        }
    }

    /// Whether a GPU of compute capability `cc` is newer than a build of
    /// `version` for `cuda` (unknown: the release alone is judged) supports
    /// ([`crate::catalog::too_new_in`]).
    pub fn too_new(
        &self,
        version: &Version,
        cuda: Option<&crate::version::CudaVariant>,
        cc: &Version,
    ) -> Option<crate::catalog::TooNew> {
        crate::catalog::too_new_in(&self.gpus, version, cuda, cc, None)
    }

    /// The lowest GPU compute capability a build of cuDNN `version` for
    /// CUDA `cuda` supports. Where the build is not known exactly (no CUDA,
    /// or a major-only `10`), the lowest over the builds it may be (never a
    /// false alarm). `None` where the support matrix gives no minimum.
    pub fn min_compute(
        &self,
        version: &Version,
        cuda: Option<&crate::version::CudaVariant>,
    ) -> Option<Version> {
        let v = version.triple();
        self.compute
            .iter()
            .filter(|r| r.first.triple() <= v && v <= r.last.triple())
            .filter(|r| match (&r.cuda, cuda) {
                (Some(rc), Some(c)) => {
                    rc.major() == c.major()
                        && (rc.minor().is_none() || c.minor().is_none() || rc.minor() == c.minor())
                }
                _ => true,
            })
            .filter_map(|r| r.min_compute.clone())
            .min()
    }

    /// The newest installable release that matches `spec` and, when
    /// `toolkit` is given, fits a toolkit of that CUDA version
    /// ([`best_offer`]).
    pub fn offer(&self, spec: &Spec, toolkit: Option<&Version>) -> Option<&Offer> {
        best_offer(&self.offers, spec, toolkit)
    }

    /// The driver a toolkit of CUDA `cuda` needs: the row for exactly that
    /// version, else the lowest floor among the rows of its `major.minor` (GA).
    pub fn driver_floor(&self, cuda: &Version, windows: bool) -> Option<&DriverVersion> {
        let rows = self.drivers.iter().filter(|d| d.windows == windows);
        if let Some(d) = rows.clone().find(|d| d.cuda == *cuda) {
            return Some(&d.min);
        }
        rows.filter(|d| d.cuda.major() == cuda.major() && d.cuda.minor() == cuda.minor())
            .map(|d| &d.min)
            .min()
    }
}

/// The catalog's support rows that carry a minimum compute capability.
pub fn compute_rows(catalog: &Catalog) -> Vec<crate::catalog::SupportRow> {
    catalog
        .support()
        .iter()
        .filter(|r| r.min_compute.is_some())
        .cloned()
        .collect()
}

/// What to say when the catalog has no release that fits: where to look,
/// and how to import what is found.
pub(crate) fn look_for(what: &str) -> String {
    format!(
        "The catalog lists no {what}; look for one in NVIDIA's cuDNN archive (https://developer.nvidia.com/rdp/cudnn-archive) or on PyPI (nvidia-cudnn-cu11, nvidia-cudnn-cu12), then import the file with `cudnnm install PATH` (`cudnnm list --remote` shows what the catalog has)."
    )
}

/// The cuDNN platform of the snapshot's machine (`linux-x86_64`, `linux-sbsa`,
/// `windows-x86_64`), when it is one NVIDIA builds for.
fn snapshot_platform(s: &Snapshot) -> Option<Platform> {
    match (s.os.family.as_str(), s.os.arch.as_str()) {
        ("windows", "x86_64") => Some(Platform::WindowsX86_64),
        ("linux", "x86_64") => Some(Platform::LinuxX86_64),
        ("linux", "aarch64") => Some(Platform::LinuxSbsa),
        ("linux", "ppc64le") => Some(Platform::LinuxPpc64le),
        _ => None,
    }
}

/// Runs every check; findings sorted by severity (errors first), stable otherwise.
pub fn run_all(s: &Snapshot, t: &Tables) -> Vec<Finding> {
    let cx = Cx::new(s, t);
    let mut out = Vec::new();
    system::check(&cx, &mut out);
    files::check(&cx, &mut out);
    loading::check(&cx, &mut out);
    stale::check(&cx, &mut out);
    windows::check(&cx, &mut out);
    frameworks::check(&cx, &mut out);
    headers::check(&cx, &mut out);
    watched::check(&cx, &mut out);
    out.sort_by_key(|f| f.severity);
    out
}

/// What the checks share: the snapshot, the tables, and derived facts.
pub(crate) struct Cx<'a> {
    pub s: &'a Snapshot,
    pub t: &'a Tables,
    pub w: bool,
}

/// The copy of a library the loader takes.
pub(crate) struct Active<'a> {
    pub hit: Hit,
    pub file: Option<&'a CudnnFile>,
    pub version: Option<super::snapshot::Known>,
}

impl<'a> Cx<'a> {
    pub(crate) fn new(s: &'a Snapshot, t: &'a Tables) -> Cx<'a> {
        Cx {
            s,
            t,
            w: s.windows(),
        }
    }

    /// The file name of `path` under the snapshot's rules.
    pub fn name(&self, path: &'a str) -> &'a str {
        spath::file_name(path, self.w)
    }

    /// The folder of `path`.
    pub fn dir(&self, path: &str) -> String {
        spath::parent(path, self.w).unwrap_or_default()
    }

    /// Shared libraries of this snapshot's OS (`.dll` on Windows, `.so*` elsewhere).
    pub fn shared(&self) -> impl Iterator<Item = (&'a CudnnFile, names::NameInfo)> + '_ {
        let w = self.w;
        self.s.files.iter().filter_map(move |f| {
            let n = names::classify(spath::file_name(&f.path, w))?;
            (n.kind == FileKind::Shared && n.windows == w).then_some((f, n))
        })
    }

    /// The name the loader looks up for `stem` of `major` on this OS.
    pub fn loader_name(&self, stem: &str, major: u32) -> String {
        if self.w {
            names::dll_name(stem, major)
        } else {
            names::soname(stem, major)
        }
    }

    /// Every loader name (`libcudnn_ops.so.9`, `cudnn64_8.dll`) of a cuDNN
    /// library present in the snapshot.
    pub fn loader_names(&self) -> BTreeSet<(u32, String, String)> {
        self.shared()
            .filter(|(_, n)| !n.dev_link)
            .filter_map(|(_, n)| {
                let m = n.major?;
                Some((m, n.stem.clone(), self.loader_name(&n.stem, m)))
            })
            .collect()
    }

    /// Majors of the cuDNN main library present anywhere.
    pub fn majors_present(&self) -> BTreeSet<u32> {
        self.loader_names()
            .into_iter()
            .filter(|(_, st, _)| st == "cudnn")
            .map(|(m, _, _)| m)
            .collect()
    }

    /// Every copy of `name` in loader order.
    pub fn hits(&self, name: &str) -> Vec<Hit> {
        loader::find(self.s, name)
    }

    /// The copy of the main library of `major` the loader takes, if any.
    pub fn active(&self, major: u32) -> Option<Active<'a>> {
        self.active_of("cudnn", major)
    }

    /// The copy of `stem` of `major` the loader takes, if any.
    pub fn active_of(&self, stem: &str, major: u32) -> Option<Active<'a>> {
        let hit = self
            .hits(&self.loader_name(stem, major))
            .into_iter()
            .next()?;
        let file = self.s.file(&hit.path);
        let version = file.and_then(|f| self.s.version_of(f));
        Some(Active { hit, file, version })
    }

    /// The toolkit a build uses: the one `nvcc` on `PATH` belongs to, else
    /// `CUDA_PATH`/`CUDA_HOME`, else the only one.
    pub fn toolkit_in_use(&self) -> Option<&'a super::snapshot::ToolkitInfo> {
        let s = self.s;
        if let Some(n) = &s.nvcc
            && let Some(root) =
                spath::parent(&n.path, self.w).and_then(|b| spath::parent(&b, self.w))
            && let Some(t) = s.toolkits.iter().find(|t| s.same_place(&t.root, &root))
        {
            return Some(t);
        }
        for var in ["CUDA_PATH", "CUDA_HOME"] {
            if let Some(v) = s.var(var)
                && let Some(t) = s.toolkits.iter().find(|t| s.same_place(&t.root, v))
            {
                return Some(t);
            }
        }
        (s.toolkits.len() == 1).then(|| &s.toolkits[0])
    }

    /// The releases in the cudnnm store, parsed (none when the store was
    /// not read).
    pub fn installed(&self) -> impl Iterator<Item = crate::version::ReleaseId> + 'a {
        self.s.store_releases.iter().flatten().cloned()
    }

    /// The newest installed release that `keep` admits (by version).
    pub fn newest_installed(
        &self,
        keep: impl Fn(&crate::version::ReleaseId) -> bool,
    ) -> Option<crate::version::ReleaseId> {
        self.installed()
            .filter(|id| keep(id))
            .max_by(|a, b| a.version.cmp(&b.version))
    }

    /// `cudnnm install` for offer `o`. A wheel offer names the package the
    /// release really comes from here: when a cuDNN wheel of that version is
    /// installed in a Python environment (`nvidia-cudnn-jit-cu12`), that
    /// package, not the catalog's first name for the version
    /// (`nvidia-cudnn-cu12`, another set of files).
    pub fn install_cmd(&self, o: &Offer) -> crate::command::CommandLine {
        let installed = o.wheel.as_ref().and_then(|_| {
            self.s
                .frameworks
                .iter()
                .find(|f| f.is_cudnn_wheel() && f.numeric_version().is_some_and(|v| v == o.version))
        });
        match installed {
            Some(w) => {
                let mut o = o.clone();
                o.wheel = Some(w.name.clone());
                o.install()
            }
            None => o.install(),
        }
    }

    /// The commands that install and activate the newest release the catalog
    /// has that matches `spec` and whose build fits a toolkit of CUDA `cuda`
    /// (else `toolkit`'s CUDA; any when neither is known): `cudnnm install
    /// ID`, then `cudnnm use ID --cuda-root T` (or, without a toolkit,
    /// `cudnnm exec --version ID -- …`). `None` when the catalog has
    /// none: then say what to look for ([`look_for`]) rather than print a
    /// command that fails.
    pub fn install_and_use(
        &self,
        spec: &Spec,
        cuda: Option<&Version>,
        toolkit: Option<&super::snapshot::ToolkitInfo>,
    ) -> Option<(String, Vec<String>)> {
        let cuda = cuda.or(toolkit.and_then(|t| t.cuda.as_ref()));
        let o = self.t.offer(spec, cuda)?;
        let id = o.id();
        // Without a known toolkit, per-process activation (needs none).
        let activate = match toolkit {
            Some(t) => CommandLine::use_(&id).cuda_root(&t.root).for_host(self.w),
            None => CommandLine::exec(&id, "<your program>").for_host(self.w),
        };
        Some((id, vec![self.install_cmd(o).for_host(self.w), activate]))
    }

    /// The release copy `f` belongs to, when its full version is known, and
    /// the commands that install and activate that release from the catalog
    /// (none when the catalog lacks it). Toolkit-independent: for a copy in
    /// the wrong place or of the wrong machine.
    pub fn release_of(&self, f: &CudnnFile) -> (Option<Version>, Option<(String, Vec<String>)>) {
        let version = self
            .s
            .version_of(f)
            .filter(|k| k.version.parts().len() >= 3)
            .map(|k| k.version);
        let cmds = version.as_ref().and_then(|v| {
            let spec = Spec::prefix(v.clone(), None);
            self.install_and_use(&spec, None, None)
        });
        (version, cmds)
    }

    /// A readable description of a copy: `path — 8.9.7 (loaded library), pip wheel`.
    pub fn describe(&self, path: &str) -> String {
        match self.s.file(path) {
            Some(f) => {
                let known = self.s.version_of(f);
                // A copy that answered with another copy's sub-libraries.
                let mixed = self
                    .s
                    .resolve(f)
                    .library_version
                    .as_ref()
                    .filter(|l| {
                        !self.s.foreign_modules(f).is_empty()
                            && known
                                .as_ref()
                                .is_none_or(|k| k.version.triple() != l.triple())
                    })
                    .map(|l| {
                        format!("; reports {l} when loaded, with another copy's sub-libraries")
                    })
                    .unwrap_or_default();
                let v = match &known {
                    Some(k) => format!("{} ({}{mixed})", k.version, k.source),
                    None if mixed.is_empty() => "version unknown".into(),
                    None => format!("version unknown ({})", &mixed[2..]),
                };
                let origin = match &f.origin_detail {
                    Some(d) => format!("{}: {d}", f.origin.label()),
                    None => f.origin.label().to_string(),
                };
                format!("{path} — cuDNN {v}, {origin}")
            }
            None => path.to_string(),
        }
    }
}

#[cfg(test)]
pub(crate) mod testkit;

#[cfg(test)]
mod cases;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_floor_prefers_exact_then_ga() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        let t = Tables {
            drivers: vec![
                DriverFloor {
                    cuda: v("12.4"),
                    windows: false,
                    min: "550.54.14".parse().unwrap(),
                },
                DriverFloor {
                    cuda: v("12.4.1"),
                    windows: false,
                    min: "550.54.15".parse().unwrap(),
                },
                DriverFloor {
                    cuda: v("12.4"),
                    windows: true,
                    min: "551.61".parse().unwrap(),
                },
            ],
            frameworks: vec![],
            offers: vec![],
            compute: vec![],
            gpus: vec![],
            advisories: vec![],
        };
        assert_eq!(
            t.driver_floor(&v("12.4.1"), false).unwrap().to_string(),
            "550.54.15"
        );
        assert_eq!(
            t.driver_floor(&v("12.4.0"), false).unwrap().to_string(),
            "550.54.14"
        );
        assert_eq!(
            t.driver_floor(&v("12.4.1"), true).unwrap().to_string(),
            "551.61"
        );
        assert!(t.driver_floor(&v("11.8"), false).is_none());
    }
}

/// The copy of each cuDNN major a program would load, for summaries.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ActiveCopy {
    /// The cuDNN major.
    pub major: u32,
    /// The file the loader takes.
    pub path: String,
    /// Its version, when known.
    pub version: Option<String>,
    /// Where the version was read (`loaded library`, `header`, …).
    pub version_source: Option<String>,
    /// Where the copy came from (`CUDA toolkit`, `pip wheel`, …).
    pub origin: String,
    /// Why the loader finds it there (`LD_LIBRARY_PATH entry 1`).
    pub via: String,
}

/// The copy of each cuDNN major present that the loader would take.
pub fn active_copies(s: &Snapshot) -> Vec<ActiveCopy> {
    let t = Tables::default();
    let cx = Cx::new(s, &t);
    cx.majors_present()
        .into_iter()
        .filter_map(|m| {
            let a = cx.active(m)?;
            Some(ActiveCopy {
                major: m,
                path: a.hit.path.clone(),
                version: a.version.as_ref().map(|k| k.version.to_string()),
                version_source: a.version.as_ref().map(|k| k.source.to_string()),
                origin: a
                    .file
                    .map(|f| f.origin.label().to_string())
                    .unwrap_or_default(),
                via: a.hit.via.to_string(),
            })
        })
        .collect()
}
