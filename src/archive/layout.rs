//! Recognising an archive's shape from its entry names and planning the
//! mapping into the store's normalized layout (`bin/`, `include/`, `lib/`,
//! license files at the top). Pure: entries in, plan out.
//!
//! Shapes (`docs/releases.md#archive-families`): old Windows zip `cuda/{bin,include,lib/x64}`; old
//! Linux tgz `cuda/{include,lib64}` (ppc64le: `cuda/targets/<arch>/…`); redist
//! `<name>-archive/{bin[/x64],include,lib[/x64]}`; wheel
//! `nvidia/cudnn[_jit]/{include,lib,bin}`; NVIDIA's cuDNN 9 Windows installer
//! folder `{bin,include,lib}/<CUDA M.m>/…`; the v2 flat tgz. Folders drift
//! between releases (import libraries in `lib\` for 8.3–8.4 and `lib\x64\`
//! from 8.8; DLLs in `bin\x64\` from 9.18), so the plan maps by role, not by
//! one fixed path.

use std::collections::{BTreeMap, BTreeSet};

use super::entry::{self, Member, MemberKind};
use crate::version::CudaVariant;

pub use crate::shape::Shape;

/// What a planned item becomes in the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemKind {
    /// A regular file (declared size).
    File {
        /// Bytes.
        size: u64,
    },
    /// A symbolic link, with its target rewritten relative to its new folder.
    Symlink(String),
    /// A copy of another planned item (a tar hard link), by destination path.
    CopyOf(String),
}

/// One entry kept: source path in the archive, destination in the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// Path in the archive.
    pub src: String,
    /// Path in the release folder (`lib/libcudnn.so.9`).
    pub dest: String,
    /// Kind.
    pub kind: ItemKind,
}

/// Options that the entry names cannot decide.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    /// For installer folders with several CUDA subfolders: which one (`--cuda`).
    pub cuda: Option<CudaVariant>,
}

/// The plan for one archive.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Recognised shape.
    pub shape: Shape,
    /// The release root inside the archive (`cuda`, `x-archive`, `nvidia/cudnn`, or empty).
    pub root: String,
    /// Kept entries, in archive order.
    pub items: Vec<Item>,
    /// Candidate version headers (archive paths), best first.
    pub version_headers: Vec<String>,
    /// A wheel's `*.dist-info/METADATA`, when present.
    pub metadata: Option<String>,
    /// The installer folder's chosen CUDA subfolder (`12.8`).
    pub installer_cuda: Option<String>,
}

impl Plan {
    /// Destination paths of library files (`.dll`, `.so*`, `.lib`, `.a`, `.dylib`).
    pub fn libraries(&self) -> impl Iterator<Item = &Item> {
        self.items.iter().filter(|i| is_library(file_name(&i.dest)))
    }
}

/// Why an archive cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// No `cudnn*.h` header anywhere.
    NoHeader,
    /// Headers but no cuDNN library.
    NoLibrary,
    /// More than one cuDNN tree (the roots found).
    SeveralTrees(Vec<String>),
    /// An installer folder with several CUDA subfolders and no choice made.
    ChooseCuda(Vec<String>),
    /// `--cuda` names no subfolder of the installer folder.
    NoSuchCuda(String, Vec<String>),
    /// A link that leaves the release, is absolute, or dangles.
    LinkOutside {
        /// The link entry.
        path: String,
        /// Its target.
        target: String,
    },
    /// A link whose chain loops or never reaches a file of the release.
    LinkChainBroken {
        /// The link entry.
        path: String,
        /// Its target.
        target: String,
    },
    /// A hard link to something that is not an earlier file of the release.
    HardlinkOutside {
        /// The link entry.
        path: String,
        /// Its target.
        target: String,
    },
    /// Two entries map to the same store path.
    Collision(String, String, String),
}

fn file_name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// True for cuDNN header names (`cudnn.h`, `cudnn_ops_infer.h`, `cudnn_v8.h`).
pub fn is_cudnn_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("cudnn") && n.ends_with(".h")
}

/// True for library file names: `.dll`, `.lib`, `.a`, `.dylib`, `.so`, `.so.N…`.
pub fn is_library(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with(".dll")
        || n.ends_with(".lib")
        || n.ends_with(".a")
        || n.ends_with(".dylib")
        || n.ends_with(".so")
        || n.contains(".so.")
}

/// True for cuDNN library names (`cudnn64_8.dll`, `cudnn.lib`, `libcudnn.so.9`, `libcudnn_static.a`).
pub fn is_cudnn_library(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    (n.starts_with("cudnn") || n.starts_with("libcudnn")) && is_library(&n)
}

fn is_license(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("license")
        || n.starts_with("nvidia_sla")
        || n.starts_with("copying")
        || n.starts_with("eula")
}

/// Plans the import of `entries` (already normalized and checked by
/// [`entry::normalize`]).
///
/// # Errors
/// See [`PlanError`].
pub fn plan(entries: &[Member], opts: &PlanOptions) -> Result<Plan, PlanError> {
    // 1. Where are the cuDNN headers? Each header folder names a root.
    let header_dirs: BTreeSet<&str> = entries
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                MemberKind::File { .. } | MemberKind::Symlink(_) | MemberKind::Hardlink(_)
            )
        })
        .filter(|e| is_cudnn_header(file_name(&e.path)))
        .map(|e| parent(&e.path))
        .collect();
    if header_dirs.is_empty() {
        return Err(PlanError::NoHeader);
    }
    let mut roots: BTreeSet<String> = BTreeSet::new();
    let mut installer_cudas: BTreeSet<String> = BTreeSet::new();
    let mut flat = false;
    for d in &header_dirs {
        let (p, last) = split_last(d);
        if last.eq_ignore_ascii_case("include") {
            roots.insert(p.to_string());
        } else if split_last(p).1.eq_ignore_ascii_case("include") && looks_like_cuda_dir(last) {
            roots.insert(split_last(p).0.to_string());
            installer_cudas.insert(last.to_string());
        } else {
            roots.insert(d.to_string());
            flat = true;
        }
    }
    if roots.len() > 1 {
        return Err(PlanError::SeveralTrees(roots.into_iter().collect()));
    }
    let root = roots.into_iter().next().expect("one root");
    let installer_cuda = if installer_cudas.is_empty() {
        None
    } else {
        let all: Vec<String> = installer_cudas.iter().cloned().collect();
        match &opts.cuda {
            Some(want) => Some(
                all.iter()
                    .find(|c| {
                        CudaVariant::from_name_part(c).is_some_and(|have| {
                            have.major() == want.major()
                                && (want.minor().is_none() || have.minor() == want.minor())
                        })
                    })
                    .cloned()
                    .ok_or_else(|| PlanError::NoSuchCuda(want.to_string(), all.clone()))?,
            ),
            None if all.len() == 1 => Some(all[0].clone()),
            None => return Err(PlanError::ChooseCuda(all)),
        }
    };

    // 2. Map every entry under the root by its role.
    let in_root = |p: &str| -> Option<String> {
        if root.is_empty() {
            Some(p.to_string())
        } else {
            p.strip_prefix(root.as_str())
                .and_then(|r| r.strip_prefix('/'))
                .map(str::to_string)
        }
    };
    // A cuDNN wheel's own METADATA (a site-packages folder holds many dist-infos).
    let metadata = entries
        .iter()
        .find(|e| {
            e.path.ends_with(".dist-info/METADATA")
                && !e.path[..e.path.len() - 9].contains('/')
                && e.path.to_ascii_lowercase().starts_with("nvidia_cudnn")
        })
        .map(|e| e.path.clone());
    let wheel = metadata.is_some() && root.starts_with("nvidia/");
    let mut dest_of: BTreeMap<String, String> = BTreeMap::new(); // src -> dest
    let mut by_dest: BTreeMap<String, String> = BTreeMap::new(); // lowercase dest -> src
    let mut kept: Vec<&Member> = Vec::new();
    for e in entries {
        if matches!(e.kind, MemberKind::Dir) {
            continue;
        }
        let dest = match in_root(&e.path) {
            Some(rel) => map_role(&rel, flat, installer_cuda.as_deref()),
            None if wheel && is_license(file_name(&e.path)) && e.path.contains(".dist-info/") => {
                Some(file_name(&e.path).to_string())
            }
            None => None,
        };
        let Some(dest) = dest else { continue };
        if let Some(prev) = by_dest.insert(dest.to_ascii_lowercase(), e.path.clone()) {
            return Err(PlanError::Collision(prev, e.path.clone(), dest));
        }
        dest_of.insert(e.path.clone(), dest);
        kept.push(e);
    }

    // 3. Links must stay inside the release; rewrite them for their new folder.
    let kinds: BTreeMap<&str, &MemberKind> =
        entries.iter().map(|e| (e.path.as_str(), &e.kind)).collect();
    let mut items = Vec::with_capacity(kept.len());
    for e in kept {
        let dest = dest_of[&e.path].clone();
        let kind = match &e.kind {
            MemberKind::File { size } => ItemKind::File { size: *size },
            MemberKind::Symlink(target) => {
                let outside = || PlanError::LinkOutside {
                    path: e.path.clone(),
                    target: target.clone(),
                };
                let resolved = entry::resolve_link(&e.path, target).ok_or_else(outside)?;
                // The chain must end at a file of the release: no loops, no dangling links.
                if dest_of.contains_key(&resolved)
                    && !chain_ends_at_file(&resolved, &kinds, &dest_of)
                {
                    return Err(PlanError::LinkChainBroken {
                        path: e.path.clone(),
                        target: target.clone(),
                    });
                }
                match (dest_of.get(&resolved), kinds.get(resolved.as_str())) {
                    (
                        Some(tdest),
                        Some(
                            MemberKind::File { .. }
                            | MemberKind::Symlink(_)
                            | MemberKind::Hardlink(_),
                        ),
                    ) => ItemKind::Symlink(entry::relative_path(parent(&dest), tdest)),
                    _ => return Err(outside()),
                }
            }
            MemberKind::Hardlink(target) => {
                let outside = || PlanError::HardlinkOutside {
                    path: e.path.clone(),
                    target: target.clone(),
                };
                let t = entry::normalize(target).map_err(|_| outside())?;
                match (dest_of.get(&t), kinds.get(t.as_str())) {
                    (Some(tdest), Some(MemberKind::File { .. })) => ItemKind::CopyOf(tdest.clone()),
                    _ => return Err(outside()),
                }
            }
            MemberKind::Dir => unreachable!("folders were skipped"),
        };
        items.push(Item {
            src: e.path.clone(),
            dest,
            kind,
        });
    }

    // 4. It must be cuDNN: a header and a library.
    if !items
        .iter()
        .any(|i| i.dest.starts_with("include/") && is_cudnn_header(file_name(&i.dest)))
    {
        return Err(PlanError::NoHeader);
    }
    if !items.iter().any(|i| is_cudnn_library(file_name(&i.dest))) {
        return Err(PlanError::NoLibrary);
    }
    let mut version_headers = Vec::new();
    for h in super::header::VERSION_HEADERS {
        let want = format!("include/{h}");
        if let Some(i) = items.iter().find(|i| i.dest.eq_ignore_ascii_case(&want)) {
            version_headers.push(i.src.clone());
        }
    }

    let shape = if wheel {
        Shape::Wheel
    } else if installer_cuda.is_some() {
        Shape::InstallerFolder
    } else if flat {
        Shape::Flat
    } else if root.ends_with("-archive") {
        Shape::Redist
    } else if file_name(&root) == "cuda"
        && items
            .iter()
            .any(|i| i.src.contains("/lib/x64/") || i.dest.ends_with(".dll"))
    {
        Shape::WindowsZip
    } else if file_name(&root) == "cuda" || root.contains("/targets/") {
        Shape::LinuxTgz
    } else {
        Shape::Folder
    };
    Ok(Plan {
        shape,
        root,
        items,
        version_headers,
        metadata,
        installer_cuda,
    })
}

/// Follows links from `path` (at most 40 hops) and says whether the chain
/// ends at a regular file (or hard link) that the release keeps.
fn chain_ends_at_file(
    path: &str,
    kinds: &BTreeMap<&str, &MemberKind>,
    dest_of: &BTreeMap<String, String>,
) -> bool {
    let mut p = path.to_string();
    for _ in 0..40 {
        if !dest_of.contains_key(&p) {
            return false;
        }
        match kinds.get(p.as_str()) {
            Some(MemberKind::File { .. } | MemberKind::Hardlink(_)) => return true,
            Some(MemberKind::Symlink(t)) => match entry::resolve_link(&p, t) {
                Some(next) => p = next,
                None => return false,
            },
            _ => return false,
        }
    }
    false
}

fn parent(p: &str) -> &str {
    p.rfind('/').map(|i| &p[..i]).unwrap_or("")
}

fn split_last(p: &str) -> (&str, &str) {
    match p.rfind('/') {
        Some(i) => (&p[..i], &p[i + 1..]),
        None => ("", p),
    }
}

fn looks_like_cuda_dir(name: &str) -> bool {
    let mut it = name.split('.');
    let ok =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    ok(it.next()) && ok(it.next()) && it.next().is_none()
}

/// Maps a path relative to the release root to its store path by role;
/// `None` for entries the store does not keep (Python package files, docs).
fn map_role(rel: &str, flat: bool, installer_cuda: Option<&str>) -> Option<String> {
    let name = file_name(rel);
    if name == "__init__.py" || rel.contains("__pycache__") {
        return None;
    }
    let parts: Vec<&str> = rel.split('/').collect();
    if flat {
        if parts.len() != 1 {
            return None;
        }
        let n = name.to_ascii_lowercase();
        return Some(if n.ends_with(".h") {
            format!("include/{name}")
        } else if n.ends_with(".dll") {
            format!("bin/{name}")
        } else if is_library(&n) {
            format!("lib/{name}")
        } else if is_license(&n) {
            name.to_string()
        } else {
            return None;
        });
    }
    let lower: Vec<String> = parts.iter().map(|p| p.to_ascii_lowercase()).collect();
    let l: Vec<&str> = lower.iter().map(String::as_str).collect();
    if let Some(c) = installer_cuda {
        return match l.as_slice() {
            ["bin", cu, _] if *cu == c => Some(format!("bin/{}", parts[2])),
            ["include", cu, rest @ ..] if *cu == c && !rest.is_empty() => {
                Some(format!("include/{}", parts[2..].join("/")))
            }
            ["lib", cu, "x64", _] if *cu == c => Some(format!("lib/{}", parts[3])),
            ["lib", cu, _] if *cu == c => Some(format!("lib/{}", parts[2])),
            _ => None,
        };
    }
    match l.as_slice() {
        [_] if is_license(name) => Some(name.to_string()),
        ["bin", _] | ["bin", "x64", _] => Some(format!("bin/{name}")),
        ["include", ..] if parts.len() >= 2 => Some(format!("include/{}", parts[1..].join("/"))),
        ["lib64", _] | ["lib", _] | ["lib", "x64", _] => Some(format!("lib/{name}")),
        // `cuda/targets/ppc64le-linux/{include,lib}` (8.0.2 ppc64le) is handled by
        // the header root; anything else (samples, docs) is not part of the release.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(paths: &[&str]) -> Vec<Member> {
        paths
            .iter()
            .map(|p| Member {
                path: p.to_string(),
                kind: MemberKind::File { size: 1 },
            })
            .collect()
    }

    fn dests(p: &Plan) -> Vec<&str> {
        p.items.iter().map(|i| i.dest.as_str()).collect()
    }

    #[test]
    fn old_windows_zip() {
        let e = files(&[
            "cuda/bin/cudnn64_7.dll",
            "cuda/include/cudnn.h",
            "cuda/lib/x64/cudnn.lib",
            "cuda/NVIDIA_SLA_cuDNN_Support.txt",
        ]);
        let p = plan(&e, &PlanOptions::default()).unwrap();
        assert_eq!(p.shape, Shape::WindowsZip);
        assert_eq!(
            dests(&p),
            [
                "bin/cudnn64_7.dll",
                "include/cudnn.h",
                "lib/cudnn.lib",
                "NVIDIA_SLA_cuDNN_Support.txt"
            ]
        );
        assert_eq!(p.version_headers, ["cuda/include/cudnn.h"]);
    }

    #[test]
    fn linux_tgz_keeps_and_rewrites_chains() {
        let mut e = files(&[
            "cuda/include/cudnn.h",
            "cuda/lib64/libcudnn.so.7.6.5",
            "cuda/lib64/libcudnn_static.a",
        ]);
        e.push(Member {
            path: "cuda/lib64/libcudnn.so.7".into(),
            kind: MemberKind::Symlink("libcudnn.so.7.6.5".into()),
        });
        e.push(Member {
            path: "cuda/lib64/libcudnn.so".into(),
            kind: MemberKind::Symlink("libcudnn.so.7".into()),
        });
        let p = plan(&e, &PlanOptions::default()).unwrap();
        assert_eq!(p.shape, Shape::LinuxTgz);
        let l = p
            .items
            .iter()
            .find(|i| i.dest == "lib/libcudnn.so")
            .unwrap();
        assert_eq!(l.kind, ItemKind::Symlink("libcudnn.so.7".into()));
    }

    #[test]
    fn redist_drift_bin_x64_and_lib_without_x64() {
        let b = "cudnn-windows-x86_64-9.18.0.77_cuda12-archive";
        let e = files(&[
            &format!("{b}/bin/x64/cudnn64_9.dll"),
            &format!("{b}/include/cudnn_version.h"),
            &format!("{b}/include/cudnn.h"),
            &format!("{b}/lib/x64/cudnn.lib"),
            &format!("{b}/LICENSE"),
        ]);
        let p = plan(&e, &PlanOptions::default()).unwrap();
        assert_eq!(p.shape, Shape::Redist);
        assert!(dests(&p).contains(&"bin/cudnn64_9.dll"));
        assert_eq!(p.version_headers[0], format!("{b}/include/cudnn_version.h"));
        let b = "cudnn-windows-x86_64-8.3.2.44_cuda11.5-archive";
        let e = files(&[
            &format!("{b}/bin/cudnn64_8.dll"),
            &format!("{b}/include/cudnn.h"),
            &format!("{b}/lib/cudnn.lib"),
        ]);
        assert!(dests(&plan(&e, &PlanOptions::default()).unwrap()).contains(&"lib/cudnn.lib"));
    }

    #[test]
    fn wheel_skips_python_files_and_keeps_license() {
        let e = files(&[
            "nvidia/__init__.py",
            "nvidia/cudnn/__init__.py",
            "nvidia/cudnn/include/__init__.py",
            "nvidia/cudnn/include/cudnn_version.h",
            "nvidia/cudnn/lib/__init__.py",
            "nvidia/cudnn/lib/libcudnn.so.9",
            "nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA",
            "nvidia_cudnn_cu12-9.1.0.70.dist-info/License.txt",
        ]);
        let p = plan(&e, &PlanOptions::default()).unwrap();
        assert_eq!(p.shape, Shape::Wheel);
        assert_eq!(
            dests(&p),
            [
                "include/cudnn_version.h",
                "lib/libcudnn.so.9",
                "License.txt"
            ]
        );
        assert_eq!(
            p.metadata.as_deref(),
            Some("nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA")
        );
    }

    #[test]
    fn installer_folder_needs_one_cuda() {
        let e = files(&[
            "bin/11.8/cudnn64_9.dll",
            "bin/12.8/cudnn64_9.dll",
            "include/11.8/cudnn.h",
            "include/12.8/cudnn.h",
            "lib/11.8/x64/cudnn.lib",
            "lib/12.8/x64/cudnn.lib",
        ]);
        assert_eq!(
            plan(&e, &PlanOptions::default()).unwrap_err(),
            PlanError::ChooseCuda(vec!["11.8".into(), "12.8".into()])
        );
        let p = plan(
            &e,
            &PlanOptions {
                cuda: Some("12".parse().unwrap()),
            },
        )
        .unwrap();
        assert_eq!(p.shape, Shape::InstallerFolder);
        assert_eq!(p.installer_cuda.as_deref(), Some("12.8"));
        assert_eq!(
            dests(&p),
            ["bin/cudnn64_9.dll", "include/cudnn.h", "lib/cudnn.lib"]
        );
        assert!(matches!(
            plan(
                &e,
                &PlanOptions {
                    cuda: Some("13".parse().unwrap())
                }
            ),
            Err(PlanError::NoSuchCuda(..))
        ));
    }

    #[test]
    fn refusals() {
        assert_eq!(
            plan(
                &files(&["cuda/bin/x.dll", "readme.txt"]),
                &PlanOptions::default()
            )
            .unwrap_err(),
            PlanError::NoHeader
        );
        assert_eq!(
            plan(
                &files(&["cuda/include/cudnn.h", "cuda/x.txt"]),
                &PlanOptions::default()
            )
            .unwrap_err(),
            PlanError::NoLibrary
        );
        let two = files(&[
            "a/include/cudnn.h",
            "a/lib64/libcudnn.so.8",
            "b/include/cudnn.h",
            "b/lib64/libcudnn.so.8",
        ]);
        assert!(matches!(
            plan(&two, &PlanOptions::default()),
            Err(PlanError::SeveralTrees(_))
        ));
        let mut e = files(&["cuda/include/cudnn.h", "cuda/lib64/libcudnn.so.8"]);
        e.push(Member {
            path: "cuda/lib64/libcudnn.so".into(),
            kind: MemberKind::Symlink("../../../etc/passwd".into()),
        });
        assert!(matches!(
            plan(&e, &PlanOptions::default()),
            Err(PlanError::LinkOutside { .. })
        ));
        let mut e = files(&[
            "cuda/include/cudnn.h",
            "cuda/lib64/libcudnn.so.8",
            "other/secret",
        ]);
        e.push(Member {
            path: "cuda/lib64/libcudnn.so".into(),
            kind: MemberKind::Symlink("../../other/secret".into()),
        });
        assert!(
            matches!(
                plan(&e, &PlanOptions::default()),
                Err(PlanError::LinkOutside { .. })
            ),
            "inside the archive but outside the release"
        );
        let mut e = files(&["cuda/include/cudnn.h", "cuda/lib64/libcudnn.so.8"]);
        e.push(Member {
            path: "cuda/lib64/libcudnn.so".into(),
            kind: MemberKind::Hardlink("/etc/shadow".into()),
        });
        assert!(matches!(
            plan(&e, &PlanOptions::default()),
            Err(PlanError::HardlinkOutside { .. })
        ));
        let mut e = files(&["cuda/include/cudnn.h", "cuda/lib64/libcudnn.so.8.1.0"]);
        e.push(Member {
            path: "cuda/lib64/libcudnn_a.so".into(),
            kind: MemberKind::Symlink("libcudnn_b.so".into()),
        });
        e.push(Member {
            path: "cuda/lib64/libcudnn_b.so".into(),
            kind: MemberKind::Symlink("libcudnn_a.so".into()),
        });
        assert!(
            matches!(
                plan(&e, &PlanOptions::default()),
                Err(PlanError::LinkChainBroken { .. })
            ),
            "a link loop never reaches a file"
        );
        let e = files(&[
            "x/include/cudnn.h",
            "x/lib/cudnn.lib",
            "x/lib/x64/cudnn.lib",
        ]);
        assert!(matches!(
            plan(&e, &PlanOptions::default()),
            Err(PlanError::Collision(..))
        ));
    }

    #[test]
    fn flat_v2_layout() {
        let e = files(&[
            "cudnn-6.5-linux-x64-v2/cudnn.h",
            "cudnn-6.5-linux-x64-v2/libcudnn.so.6.5.48",
        ]);
        let p = plan(&e, &PlanOptions::default()).unwrap();
        assert_eq!(p.shape, Shape::Flat);
        assert_eq!(dests(&p), ["include/cudnn.h", "lib/libcudnn.so.6.5.48"]);
    }
}
