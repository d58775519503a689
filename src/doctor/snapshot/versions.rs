//! What version a cuDNN copy is, from its own evidence: the loaded
//! library's answer (when it loaded with its own sub-libraries), its DLL
//! file version, its real name, the store receipt of the release it is a
//! copy of, the headers of its installation.

use super::{CudnnFile, Snapshot};
use crate::doctor::spath;
use crate::names;
use crate::version::Version;

/// A version and where it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Known {
    /// The version.
    pub version: Version,
    /// Where it came from: `loaded library`, `file version`, `file name`,
    /// `header`, `major from the file name`.
    pub source: &'static str,
}

impl Snapshot {
    /// The version a library file says it is, without looking at headers:
    /// the loaded library's answer when it loaded with its own sub-libraries,
    /// then its own evidence ([`Snapshot::own_library_version`]).
    pub fn library_version(&self, f: &CudnnFile) -> Option<Known> {
        let loaded = f
            .library_version
            .as_ref()
            .or(self.resolve(f).library_version.as_ref());
        // cuDNN 9's main library answers with the graph library beside it;
        // the release it asks the loader for is its own.
        if let Some(asked) = self.asked_release(f)
            && loaded.is_none_or(|l| l.triple() != asked.triple())
        {
            return self.own_library_version(f);
        }
        if let Some(v) = loaded
            && self.foreign_modules(f).is_empty()
        {
            return Some(Known {
                version: v.clone(),
                source: "loaded library",
            });
        }
        self.own_library_version(f)
    }

    /// The version a library file's own evidence gives, never what loading it
    /// answered (cuDNN 9's main library answers with whichever graph library
    /// it found): the DLL file version, the real name (`libcudnn.so.8.9.7`,
    /// following links), the store receipt of the release it is a copy of.
    pub fn own_library_version(&self, f: &CudnnFile) -> Option<Known> {
        self.own_version_depth(f, 0)
    }

    /// The release of cuDNN 9's main library `f` by the graph library it
    /// asked the loader for first (`libcudnn_graph.so.9.27.0` → 9.27.0), when
    /// it was loaded with the loader's trace ([`CudnnFile::asked_for`]).
    pub fn asked_release(&self, f: &CudnnFile) -> Option<Version> {
        let asked = if f.asked_for.is_empty() {
            &self.resolve(f).asked_for
        } else {
            &f.asked_for
        };
        asked
            .iter()
            .filter_map(|n| names::classify(n))
            .find(|n| n.stem == "cudnn_graph" && n.full_version.is_some())
            .and_then(|n| n.full_version)
    }

    /// The cuDNN files the process that loaded `f` took from another folder
    /// than `f`'s own (its real path's): sub-libraries from another copy.
    pub fn foreign_modules(&self, f: &CudnnFile) -> Vec<String> {
        let w = self.windows();
        let real = self.resolve(f);
        let real_path = real.real_path.as_deref().unwrap_or(&real.path);
        let Some(own) = spath::parent(real_path, w) else {
            return Vec::new();
        };
        let modules = if f.loaded_modules.is_empty() {
            &real.loaded_modules
        } else {
            &f.loaded_modules
        };
        modules
            .iter()
            .filter(|m| spath::parent(m, w).is_some_and(|d| !spath::same(&d, &own, w)))
            .cloned()
            .collect()
    }

    fn own_version_depth(&self, f: &CudnnFile, depth: u32) -> Option<Known> {
        if let Some(v) = &f.file_version {
            return Some(Known {
                version: v.clone(),
                source: "file version",
            });
        }
        let w = self.windows();
        if let Some(v) = names::classify(spath::file_name(&f.path, w)).and_then(|n| n.full_version)
        {
            return Some(Known {
                version: v,
                source: "file name",
            });
        }
        if let Some(c) = &f.store_copy {
            return Some(Known {
                version: c.version.clone(),
                source: "store receipt",
            });
        }
        if let Some(v) = &f.embedded_version {
            return Some(Known {
                version: v.clone(),
                source: "release marker in the file",
            });
        }
        if let Some(v) = self.asked_release(f) {
            return Some(Known {
                version: v,
                source: "graph library it asks for",
            });
        }
        if depth < 8 {
            let target = f
                .real_path
                .as_deref()
                .filter(|r| !spath::same(r, &f.path, w))
                .map(str::to_owned)
                .or_else(|| {
                    let t = f.link_target.as_deref()?;
                    let dir = spath::parent(&f.path, w)?;
                    Some(if t.starts_with('/') || t.contains(':') {
                        t.to_string()
                    } else {
                        spath::join(&dir, t, w)
                    })
                });
            if let Some(t) = target
                && let Some(tf) = self.file(&t)
            {
                return self.own_version_depth(tf, depth + 1);
            }
        }
        None
    }

    /// The version the headers of `root` declare (`cudnn_version.h` first,
    /// then the `_vM` copy, then `cudnn.h`).
    pub fn header_version(&self, root: &str) -> Option<Known> {
        let w = self.windows();
        let mut best: Option<(u8, Version)> = None;
        for f in self.files_in_root(root) {
            let Some(v) = &f.header_version else { continue };
            let name = spath::file_name(&f.path, w).to_ascii_lowercase();
            let rank = if name == "cudnn_version.h" {
                0
            } else if name.starts_with("cudnn_version") {
                1
            } else {
                2
            };
            if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                best = Some((rank, v.clone()));
            }
        }
        best.map(|(_, version)| Known {
            version,
            source: "header",
        })
    }

    /// The best-known version of a library: [`Snapshot::library_version`],
    /// else its root's header when the majors agree, else the major from the name.
    pub fn version_of(&self, f: &CudnnFile) -> Option<Known> {
        if let Some(k) = self.library_version(f) {
            return Some(k);
        }
        let major =
            names::classify(spath::file_name(&f.path, self.windows())).and_then(|n| n.major);
        if let Some(h) = self.header_version(&f.root)
            && major.is_none_or(|m| m == h.version.major())
        {
            return Some(h);
        }
        major.map(|m| Known {
            version: Version::from_parts(&[m]),
            source: "major from the file name",
        })
    }
}

/// A CUDA version from a `cudnnGetCudartVersion()` / `CUDART_VERSION`
/// integer: `12090` → `12.9`, `11020` → `11.2`, `10020` → `10.2`.
pub fn cudart_to_version(n: u64) -> Version {
    Version::from_parts(&[(n / 1000) as u32, ((n % 1000) / 10) as u32])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::snapshot::OsInfo;
    #[test]
    fn versions_through_links_and_headers() {
        let mut s = Snapshot {
            os: OsInfo {
                family: "linux".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        s.files.push(CudnnFile {
            path: "/r/lib/libcudnn.so.8".into(),
            root: "/r".into(),
            link_target: Some("libcudnn.so.8.9.7".into()),
            ..Default::default()
        });
        s.files.push(CudnnFile {
            path: "/r/lib/libcudnn.so.8.9.7".into(),
            root: "/r".into(),
            ..Default::default()
        });
        s.files.push(CudnnFile {
            path: "/r/include/cudnn_version.h".into(),
            root: "/r".into(),
            header_version: Some("8.9.2".parse().unwrap()),
            ..Default::default()
        });
        let k = s.library_version(&s.files[0]).unwrap();
        assert_eq!(
            (k.version.to_string().as_str(), k.source),
            ("8.9.7", "file name")
        );
        assert_eq!(s.header_version("/r").unwrap().version.to_string(), "8.9.2");
        assert_eq!(cudart_to_version(12090).to_string(), "12.9");
        assert_eq!(cudart_to_version(10020).to_string(), "10.2");
    }
}
