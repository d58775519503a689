//! A Python environment as cuDNN sees it: the distributions installed in its
//! `site-packages` (from their `*.dist-info/METADATA`) and which of their
//! requirements apply on this machine — PEP 508 markers evaluated for the
//! environment's interpreter, with the extras that are in use.
//!
//! pip records no extras an installation was made with, so an extra counts
//! as in use when another installed distribution requires it
//! (`jax[cuda13]` → `jax-cuda13-plugin[with-cuda]`), or when every
//! requirement it adds here is installed (what `pip install
//! tensorflow[and-cuda]` leaves). The files of an environment are hostile
//! input like a project's: reads are bounded ([`metadata`]) and the folder
//! scan stops at [`MAX_ENTRIES`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pep508_rs::{ExtraName, MarkerEnvironment, PackageName, Requirement};

pub mod locate;
pub mod metadata;

pub use locate::{FoundBy, Located, locate};
pub use metadata::{Distribution, Unreadable};

/// The most entries of one `site-packages` folder looked at.
pub const MAX_ENTRIES: usize = 100_000;

/// The installed distributions of one environment.
#[derive(Clone, Debug)]
pub struct Environment {
    /// Where it is and how it was found.
    pub located: Located,
    /// Installed distributions, the first of each name (in `site-packages` order).
    pub distributions: Vec<Distribution>,
    /// `.dist-info` folders that named no distribution, and why.
    pub unreadable: Vec<(PathBuf, Unreadable)>,
    /// Whether a folder held more than [`MAX_ENTRIES`] entries (the rest were not read).
    pub truncated: bool,
}

impl Environment {
    /// Reads the distributions in the `site-packages` folders of `located`.
    pub fn read(located: Located) -> Environment {
        let mut distributions: Vec<Distribution> = Vec::new();
        let mut unreadable = Vec::new();
        let mut truncated = false;
        for site in &located.site_packages {
            let Ok(rd) = std::fs::read_dir(site) else {
                continue;
            };
            let mut infos: Vec<PathBuf> = Vec::new();
            for (i, e) in rd.flatten().enumerate() {
                if i >= MAX_ENTRIES {
                    truncated = true;
                    break;
                }
                let name = e.file_name();
                let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                if is_dir && name.to_string_lossy().ends_with(".dist-info") {
                    infos.push(e.path());
                }
            }
            infos.sort();
            for info in infos {
                match metadata::read(&info) {
                    Ok(d) if !distributions.iter().any(|x| x.name == d.name) => {
                        distributions.push(d)
                    }
                    Ok(_) => {}
                    Err(why) => unreadable.push((info, why)),
                }
            }
        }
        distributions.sort_by(|a, b| a.name.cmp(&b.name));
        Environment {
            located,
            distributions,
            unreadable,
            truncated,
        }
    }

    /// The marker values of its interpreter.
    pub fn markers(&self) -> &MarkerEnvironment {
        &self.located.markers
    }

    /// The installed distribution called `name`.
    pub fn get(&self, name: &PackageName) -> Option<&Distribution> {
        self.distributions.iter().find(|d| &d.name == name)
    }

    /// The `site-packages` folder holding `d`.
    pub fn site_of<'a>(&self, d: &'a Distribution) -> &'a Path {
        d.dist_info.parent().unwrap_or(&d.dist_info)
    }

    /// The extras in use of every distribution (see the module docs), found
    /// by repeating both rules until nothing changes.
    pub fn extras_in_use(&self) -> BTreeMap<PackageName, BTreeSet<ExtraName>> {
        let mut used: BTreeMap<PackageName, BTreeSet<ExtraName>> = BTreeMap::new();
        loop {
            let mut changed = false;
            for d in &self.distributions {
                let mine: Vec<ExtraName> = used
                    .get(&d.name)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default();
                // Extras other distributions require of their dependencies.
                for r in &d.requires {
                    if r.extras.is_empty()
                        || self.get(&r.name).is_none()
                        || !r.marker.evaluate(self.markers(), &mine)
                    {
                        continue;
                    }
                    let set = used.entry(r.name.clone()).or_default();
                    for e in &r.extras {
                        changed |= set.insert(e.clone());
                    }
                }
                // Extras whose every requirement here is installed.
                for e in &d.extras {
                    if mine.contains(e) {
                        continue;
                    }
                    let with = [e.clone()];
                    let added: Vec<&Requirement> = d
                        .requires
                        .iter()
                        .filter(|r| {
                            r.marker.evaluate(self.markers(), &with)
                                && !r.marker.evaluate(self.markers(), &[])
                        })
                        .collect();
                    if !added.is_empty() && added.iter().all(|r| self.get(&r.name).is_some()) {
                        changed |= used.entry(d.name.clone()).or_default().insert(e.clone());
                    }
                }
            }
            if !changed {
                return used;
            }
        }
    }

    /// The requirements of `d` that apply here: markers true for this
    /// interpreter with the extras of `d` in use (`extras`, from
    /// [`Environment::extras_in_use`]).
    pub fn requirements_here<'a>(
        &self,
        d: &'a Distribution,
        extras: &BTreeMap<PackageName, BTreeSet<ExtraName>>,
    ) -> Vec<&'a Requirement> {
        let mine: Vec<ExtraName> = extras
            .get(&d.name)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        d.requires
            .iter()
            .filter(|r| r.marker.evaluate(self.markers(), &mine))
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use pep508_rs::MarkerEnvironmentBuilder;

    fn linux() -> MarkerEnvironment {
        MarkerEnvironment::try_from(MarkerEnvironmentBuilder {
            implementation_name: "cpython",
            implementation_version: "3.12.3",
            os_name: "posix",
            platform_machine: "x86_64",
            platform_python_implementation: "CPython",
            platform_release: "",
            platform_system: "Linux",
            platform_version: "",
            python_full_version: "3.12.3",
            python_version: "3.12",
            sys_platform: "linux",
        })
        .unwrap()
    }

    fn site(files: &[(&str, &str)]) -> (tempfile::TempDir, Environment) {
        let d = tempfile::tempdir().unwrap();
        for (info, text) in files {
            let dir = d.path().join(info);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("METADATA"), text).unwrap();
        }
        let located = Located {
            site_packages: vec![d.path().to_path_buf()],
            markers: linux(),
            found_by: FoundBy::Layout(d.path().to_path_buf()),
        };
        let e = Environment::read(located);
        (d, e)
    }

    fn names(rs: &[&Requirement]) -> Vec<String> {
        rs.iter().map(|r| r.name.to_string()).collect()
    }

    #[test]
    fn an_extra_is_in_use_when_a_dependent_requires_it_or_all_it_adds_is_installed() {
        let (_d, e) = site(&[
            (
                "jax-0.12.0.1.dist-info",
                "Name: jax\nVersion: 0.12.0.1\nProvides-Extra: cuda13\nRequires-Dist: jaxlib==0.12.0.1; extra == \"cuda13\"\nRequires-Dist: jax-cuda13-plugin[with-cuda]==0.12.0.1; extra == \"cuda13\"\nProvides-Extra: cuda12\nRequires-Dist: jax-cuda12-plugin[with-cuda]==0.12.0.1; extra == \"cuda12\"\n",
            ),
            (
                "jaxlib-0.12.0.1.dist-info",
                "Name: jaxlib\nVersion: 0.12.0.1\n",
            ),
            (
                "jax_cuda13_plugin-0.12.0.1.dist-info",
                "Name: jax-cuda13-plugin\nVersion: 0.12.0.1\nProvides-Extra: with-cuda\nRequires-Dist: nvidia-cudnn-cu13<10.0,>=9.12.0.46; sys_platform == \"linux\" and extra == \"with-cuda\"\nRequires-Dist: nvidia-nvvm; extra == \"with-cuda\"\n",
            ),
            (
                "tensorflow-2.21.0.dist-info",
                "Name: tensorflow\nVersion: 2.21.0\nProvides-Extra: and-cuda\nRequires-Dist: nvidia-cudnn-cu12<10.0,>=9.3.0.75; extra == \"and-cuda\"\nRequires-Dist: nvidia-cublas-cu12; extra == \"and-cuda\"\n",
            ),
            (
                "nvidia_cudnn_cu12-9.10.2.21.dist-info",
                "Name: nvidia-cudnn-cu12\nVersion: 9.10.2.21\n",
            ),
        ]);
        let used = e.extras_in_use();
        let jax: PackageName = "jax".parse().unwrap();
        let plugin: PackageName = "jax-cuda13-plugin".parse().unwrap();
        let tf: PackageName = "tensorflow".parse().unwrap();
        // jax[cuda13]: jaxlib and the plugin are installed; cuda12's plugin is not.
        assert_eq!(
            used[&jax].iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            ["cuda13"]
        );
        // The plugin's with-cuda, required by jax[cuda13], though nvidia-nvvm is missing.
        let reqs = e.requirements_here(e.get(&plugin).unwrap(), &used);
        assert_eq!(names(&reqs), ["nvidia-cudnn-cu13", "nvidia-nvvm"]);
        // tensorflow[and-cuda] is not in use: nvidia-cublas-cu12 is missing.
        assert!(!used.contains_key(&tf));
        assert!(e.requirements_here(e.get(&tf).unwrap(), &used).is_empty());
    }

    #[test]
    fn unreadable_dist_info_is_listed_not_fatal() {
        let (_d, e) = site(&[
            ("good-1.0.dist-info", "Name: good\nVersion: 1.0\n"),
            ("bad-1.0.dist-info", "Version: 1.0\n"),
        ]);
        assert_eq!(e.distributions.len(), 1);
        assert_eq!(e.unreadable.len(), 1);
        assert_eq!(e.unreadable[0].1, Unreadable::BadHeaders);
    }
}
