//! What cuDNN's file names say: which library, which major, which kind of
//! file, and which files make a complete set for a major; and the runtime
//! libraries a cuDNN loads beside it.
//!
//! Vocabulary at the bottom of the crate: the toolkit scan, the deploy plan,
//! `verify` and `doctor` all read file names through this one module.
//!
//! Facts from `docs/releases.md`: `#library-names` (library names per major),
//! `#archive-families` (archive listings) and `#version-headers` (where the
//! version macros live).

use serde::{Deserialize, Serialize};

use crate::version::Version;

/// The kind of a cuDNN file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileKind {
    /// A header (`cudnn.h`, `cudnn_version.h`, `cudnn_ops_v9.h`).
    Header,
    /// A library the loader loads: Linux `libcudnn*.so*`, Windows `cudnn*64_M.dll`.
    Shared,
    /// A static library (`libcudnn_static.a`, `libcudnn_ops_static_v9.a`).
    Static,
    /// A Windows import library (`cudnn.lib`, `cudnn64_8.lib`), what MSVC links against.
    ImportLib,
}

/// What a cuDNN file name says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameInfo {
    /// The kind of file.
    pub kind: FileKind,
    /// The library stem without platform decoration: `cudnn`, `cudnn_ops`,
    /// `cudnn_ops_infer`, `cudnn_engines_runtime_compiled`.
    pub stem: String,
    /// The cuDNN major the name encodes, when it does (`8` of `cudnn64_8.dll`,
    /// `9` of `libcudnn.so.9`, `8` of `cudnn_version_v8.h`).
    pub major: Option<u32>,
    /// The full version in a Linux real name (`8.9.7` of `libcudnn.so.8.9.7`).
    pub full_version: Option<Version>,
    /// A Windows name (`.dll`, `.lib`).
    pub windows: bool,
    /// Linux: the unversioned development link (`libcudnn.so`), which only the
    /// linker (`-lcudnn`) uses.
    pub dev_link: bool,
}

impl NameInfo {
    /// The name the loader asks for: the soname `libcudnn_ops.so.9` or the
    /// DLL name `cudnn_ops64_9.dll`. `None` for headers, static and import
    /// libraries, and dev links.
    pub fn loader_name(&self) -> Option<String> {
        if self.kind != FileKind::Shared || self.dev_link {
            return None;
        }
        let m = self.major?;
        Some(if self.windows {
            format!("{}64_{m}.dll", self.stem)
        } else {
            format!("lib{}.so.{m}", self.stem)
        })
    }

    /// True for the main library (`libcudnn.so.M`, `cudnn64_M.dll`), which
    /// exports `cudnnGetVersion()`.
    pub fn is_main(&self) -> bool {
        self.stem == "cudnn"
    }
}

/// True when `name` looks like a cuDNN file at all (`cudnn*` or `libcudnn*`,
/// any case on Windows).
pub fn is_cudnn_name(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.starts_with("cudnn") || l.starts_with("libcudnn")
}

/// True for the headers of cudnn-frontend, NVIDIA's header-only C++ library
/// that people put beside cuDNN's headers (`cudnn_frontend.h`,
/// `cudnn_frontend_*.h`, `cudnn_backend_base.h`, the folder
/// `cudnn_frontend/`): not cuDNN's files, whatever their prefix.
pub fn is_frontend_name(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.starts_with("cudnn_frontend") || l == "cudnn_backend_base.h"
}

/// True for a file of a cuDNN set, whoever put it there: a name
/// [`classify`] reads (a header, shared, static or import library named
/// `cudnn*`/`libcudnn*`) that is not cudnn-frontend's
/// ([`is_frontend_name`]). Samples, notes and other files that merely start
/// with `cudnn` are not.
pub fn is_cudnn_file(name: &str) -> bool {
    !is_frontend_name(name) && classify(name).is_some()
}

/// Header stems cuDNN releases ship, each also as a `_vM.h` copy from 8 on
/// (`docs/releases.md#archive-families`): 7 and before `cudnn.h`; 8 the `_infer`/`_train`
/// split; 9 `adv`, `cnn`, `graph`, `ops`, and from 9.2x `gnn_ops`,
/// `subquadratic_ops`.
const RELEASE_HEADER_STEMS: [&str; 15] = [
    "cudnn",
    "cudnn_version",
    "cudnn_backend",
    "cudnn_adv_infer",
    "cudnn_adv_train",
    "cudnn_cnn_infer",
    "cudnn_cnn_train",
    "cudnn_ops_infer",
    "cudnn_ops_train",
    "cudnn_adv",
    "cudnn_cnn",
    "cudnn_graph",
    "cudnn_ops",
    "cudnn_gnn_ops",
    "cudnn_subquadratic_ops",
];

/// True when some cuDNN release ships a file of this name: a header of
/// [`RELEASE_HEADER_STEMS`], or a library (shared, static, import) of the
/// main library or a sub-library of cuDNN 8 or 9 (`docs/releases.md#archive-families`,
/// `#library-names`; the
/// static `cudnn_engines_tensor_ir` of newer 9.x). A cuDNN-looking name that
/// no release ships (`cudnn_foo.h`) is a leftover or someone's own file.
pub fn is_release_name(name: &str) -> bool {
    let Some(n) = classify(name) else {
        return false;
    };
    if is_frontend_name(name) {
        return false;
    }
    let stem = n.stem.as_str();
    match n.kind {
        FileKind::Header => RELEASE_HEADER_STEMS.contains(&stem),
        FileKind::Shared | FileKind::Static | FileKind::ImportLib => {
            stem == "cudnn" || sublib_stems(8).contains(&stem) || sublib_stems(9).contains(&stem)
        }
    }
}

/// Reads a cuDNN file name; `None` when it is not one (or is a cuDNN name of
/// no interest, such as a Python `__init__.py`).
pub fn classify(name: &str) -> Option<NameInfo> {
    let l = name.to_ascii_lowercase();
    if !is_cudnn_name(&l) {
        return None;
    }
    let info = |kind, stem: &str, major, full_version, windows, dev_link| NameInfo {
        kind,
        stem: stem.to_string(),
        major,
        full_version,
        windows,
        dev_link,
    };
    if let Some(base) = l.strip_suffix(".h") {
        // cudnn_version_v8.h, cudnn_v7.h, cudnn_ops.h
        let (stem, major) = match base.rfind("_v") {
            Some(i) if base[i + 2..].bytes().all(|b| b.is_ascii_digit()) && i + 2 < base.len() => {
                (&base[..i], base[i + 2..].parse().ok())
            }
            _ => (base, None),
        };
        return Some(info(FileKind::Header, stem, major, None, false, false));
    }
    if let Some(base) = l.strip_suffix(".dll") {
        // cudnn64_8.dll, cudnn_ops_infer64_8.dll
        let (stem, major) = split_win_major(base)?;
        return Some(info(FileKind::Shared, stem, Some(major), None, true, false));
    }
    if let Some(base) = l.strip_suffix(".lib") {
        return Some(match split_win_major(base) {
            Some((stem, major)) => info(FileKind::ImportLib, stem, Some(major), None, true, false),
            None => info(FileKind::ImportLib, base, None, None, true, false),
        });
    }
    if let Some(base) = l.strip_suffix(".a") {
        // libcudnn_static.a, libcudnn_ops_static_v9.a, libcudnn_static_v7.a
        let base = base.strip_prefix("lib")?;
        let (base, major) = match base.rfind("_v") {
            Some(i) if i + 2 < base.len() && base[i + 2..].bytes().all(|b| b.is_ascii_digit()) => {
                (&base[..i], base[i + 2..].parse().ok())
            }
            _ => (base, None),
        };
        let stem = base.strip_suffix("_static").unwrap_or(base);
        return Some(info(FileKind::Static, stem, major, None, false, false));
    }
    // libcudnn.so, libcudnn.so.8, libcudnn.so.8.9.7, libcudnn_ops.so.9
    let i = l.find(".so")?;
    let stem = l[..i].strip_prefix("lib")?;
    let rest = &l[i + 3..];
    if rest.is_empty() {
        return Some(info(FileKind::Shared, stem, None, None, false, true));
    }
    let nums = rest.strip_prefix('.')?;
    let v: Version = nums.parse().ok()?;
    let full = (v.parts().len() >= 2).then(|| v.clone());
    Some(info(
        FileKind::Shared,
        stem,
        Some(v.major()),
        full,
        false,
        false,
    ))
}

fn split_win_major(base: &str) -> Option<(&str, u32)> {
    let i = base.rfind("64_")?;
    let m: u32 = base[i + 3..].parse().ok()?;
    Some((&base[..i], m))
}

/// Sub-libraries cuDNN 9 gained after 9.0, with the first release that
/// ships each as a shared library, read from the real wheels on PyPI
/// (`nvidia-cudnn-cu12` 9.20.0.48 has neither, 9.21.0.82 the first, 9.22.0.52
/// both; docs/releases.md#library-names).
pub const LATER_SUBLIBS: [(&str, [u32; 3]); 2] = [
    ("cudnn_engines_tensor_ir", [9, 21, 0]),
    ("cudnn_ext", [9, 22, 0]),
];

/// Whether a release of `version` ships the sub-library `stem` of its
/// major: every one of [`sublib_stems`] except those of
/// [`LATER_SUBLIBS`] before the release that added them.
pub fn ships(stem: &str, version: &Version) -> bool {
    match LATER_SUBLIBS.iter().find(|(s, _)| *s == stem) {
        Some((_, first)) => {
            let v = version.triple();
            [v.major(), v.minor(), v.patch()] >= *first
        }
        None => sublib_stems(version.major()).contains(&stem),
    }
}

/// Sub-library stems per major: none before 8; six for 8; nine for 9 (the
/// seven of 9.0 and [`LATER_SUBLIBS`]) (`docs/releases.md#library-names`).
pub fn sublib_stems(major: u32) -> &'static [&'static str] {
    match major {
        0..=7 => &[],
        8 => &[
            "cudnn_ops_infer",
            "cudnn_ops_train",
            "cudnn_cnn_infer",
            "cudnn_cnn_train",
            "cudnn_adv_infer",
            "cudnn_adv_train",
        ],
        _ => &[
            "cudnn_adv",
            "cudnn_cnn",
            "cudnn_engines_precompiled",
            "cudnn_engines_runtime_compiled",
            "cudnn_engines_tensor_ir",
            "cudnn_ext",
            "cudnn_graph",
            "cudnn_heuristic",
            "cudnn_ops",
        ],
    }
}

/// Library stems a working set of `major` must have, as groups of which at
/// least one member must be present. cuDNN 8's main library loads all six
/// sub-libraries by name (cupy PR #5103, "Could not load library
/// cudnn_cnn_infer64_8.dll"); cuDNN 9 needs `cudnn_graph` and an engine
/// library — the JIT wheels ship only `cudnn`, `cudnn_graph` and
/// `cudnn_engines_runtime_compiled` (`docs/releases.md#pip-wheels`), so the other
/// sub-libraries are optional.
pub fn required_groups(major: u32) -> Vec<Vec<&'static str>> {
    match major {
        0..=7 => vec![vec!["cudnn"]],
        8 => std::iter::once(vec!["cudnn"])
            .chain(sublib_stems(8).iter().map(|s| vec![*s]))
            .collect(),
        _ => vec![
            vec!["cudnn"],
            vec!["cudnn_graph"],
            vec![
                "cudnn_engines_precompiled",
                "cudnn_engines_runtime_compiled",
            ],
        ],
    }
}

/// The Windows DLL name of `stem` for `major` (`cudnn_ops64_9.dll`).
pub fn dll_name(stem: &str, major: u32) -> String {
    format!("{stem}64_{major}.dll")
}

/// The Linux soname of `stem` for `major` (`libcudnn_ops.so.9`).
pub fn soname(stem: &str, major: u32) -> String {
    format!("lib{stem}.so.{major}")
}

/// True for a header that holds the version macros: `cudnn_version.h` and
/// its `_vM` copy (8+), `cudnn.h` / `cudnn_vM.h` (7 and before; distro
/// packages, `docs/system.md#distro-packages`; `docs/releases.md#version-headers`).
pub fn is_version_header(name: &str) -> bool {
    match classify(name) {
        Some(i) if i.kind == FileKind::Header => i.stem == "cudnn_version" || i.stem == "cudnn",
        _ => false,
    }
}

/// The Visual C++ runtime DLLs that x64 programs built with MSVC 2015–2022
/// load (`docs/system.md#windows-runtime`; `_1` variants:
/// <https://github.com/tensorflow/tensorflow/issues/36407>).
pub const VC_RUNTIME_DLLS: [&str; 4] = [
    "vcruntime140.dll",
    "vcruntime140_1.dll",
    "msvcp140.dll",
    "msvcp140_1.dll",
];

/// The Universal C Runtime forwarder a program built with MSVC 2015+ needs;
/// missing on Windows 7/8.1 without KB2999226 (`docs/system.md#windows-runtime`).
pub const UCRT_DLL: &str = "api-ms-win-crt-runtime-l1-1-0.dll";

/// The zlib build cuDNN 8.3–9.1 on Windows loads (`docs/system.md#zlib-on-windows`).
pub const ZLIBWAPI_DLL: &str = "zlibwapi.dll";

/// Whether a Windows cuDNN of `version` needs `zlibwapi.dll`: 8.3.0 to
/// 8.9.x and 9.0.x to 9.1.x (`docs/system.md#zlib-on-windows`: cupy#6226; conda-forge:
/// "zlib is statically linked into CUDNN since version 9.2").
pub fn needs_zlibwapi(version: &Version) -> bool {
    let (ma, mi) = (version.major(), version.minor());
    (ma == 8 && mi >= 3) || (ma == 9 && mi <= 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_of_name() {
        let n = classify("libcudnn.so.8.9.7").unwrap();
        assert_eq!(
            (n.kind, n.stem.as_str(), n.major),
            (FileKind::Shared, "cudnn", Some(8))
        );
        assert_eq!(n.full_version.clone().unwrap().to_string(), "8.9.7");
        assert_eq!(n.loader_name().unwrap(), "libcudnn.so.8");
        let n = classify("libcudnn_ops.so.9").unwrap();
        assert_eq!(n.loader_name().unwrap(), "libcudnn_ops.so.9");
        assert!(n.full_version.is_none());
        let n = classify("libcudnn.so").unwrap();
        assert!(n.dev_link && n.loader_name().is_none());
        let n = classify("cudnn_cnn_infer64_8.dll").unwrap();
        assert_eq!(
            (n.stem.as_str(), n.major, n.windows),
            ("cudnn_cnn_infer", Some(8), true)
        );
        assert_eq!(n.loader_name().unwrap(), "cudnn_cnn_infer64_8.dll");
        assert_eq!(classify("CUDNN64_7.DLL").unwrap().major, Some(7));
        let n = classify("cudnn_ops_infer64_8.lib").unwrap();
        assert_eq!((n.kind, n.major), (FileKind::ImportLib, Some(8)));
        assert_eq!(classify("cudnn.lib").unwrap().kind, FileKind::ImportLib);
        let n = classify("cudnn_version_v8.h").unwrap();
        assert_eq!(
            (n.kind, n.stem.as_str(), n.major),
            (FileKind::Header, "cudnn_version", Some(8))
        );
        let n = classify("libcudnn_ops_static_v9.a").unwrap();
        assert_eq!(
            (n.kind, n.stem.as_str(), n.major),
            (FileKind::Static, "cudnn_ops", Some(9))
        );
        assert_eq!(classify("libcudnn_static.a").unwrap().stem, "cudnn");
        assert!(classify("zlibwapi.dll").is_none());
        assert!(classify("libcudnn.so.x").is_none());
        assert!(is_version_header("cudnn_version.h"));
        assert!(is_version_header("cudnn_v7.h"));
        assert!(!is_version_header("cudnn_ops.h"));
    }

    #[test]
    fn frontend_and_samples_are_not_cudnn_files_and_unknown_names_are_told_apart() {
        for frontend in [
            "cudnn_frontend.h",
            "cudnn_frontend_Engine.h",
            "cudnn_frontend_utils.h",
            "cudnn_backend_base.h",
            "cudnn_frontend",
        ] {
            assert!(is_frontend_name(frontend), "{frontend}");
            assert!(!is_cudnn_file(frontend), "{frontend}");
            assert!(!is_release_name(frontend), "{frontend}");
        }
        for other in ["cudnn_samples_v9", "cudnn_mnist.cpp", "cudnn-readme.txt"] {
            assert!(!is_cudnn_file(other), "{other}");
        }
        for shipped in [
            "cudnn.h",
            "cudnn_v8.h",
            "cudnn_version_v9.h",
            "cudnn_adv_infer.h",
            "cudnn_backend.h",
            "cudnn_gnn_ops_v9.h",
            "libcudnn.so",
            "libcudnn.so.7.6.5",
            "libcudnn_ops.so.9",
            "libcudnn_cnn_infer.so.8.9.7",
            "libcudnn_static.a",
            "libcudnn_static_v7.a",
            "libcudnn_ops_infer_static_v8.a",
            "libcudnn_engines_tensor_ir_static_v9.a",
            "cudnn64_7.dll",
            "cudnn_engines_precompiled64_9.dll",
            "cudnn.lib",
            "cudnn_adv_train.lib",
            "cudnn_graph64_9.lib",
        ] {
            assert!(is_cudnn_file(shipped), "{shipped}");
            assert!(is_release_name(shipped), "{shipped}");
        }
        for stale in ["cudnn_foo.h", "libcudnn_dangling.so", "cudnn_extra64_9.dll"] {
            assert!(is_cudnn_file(stale), "{stale}");
            assert!(!is_release_name(stale), "{stale}");
        }
    }

    #[test]
    fn zlibwapi_only_for_8_3_to_9_1() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        for yes in ["8.3.0", "8.9.7.29", "9.0.0", "9.1.1.17"] {
            assert!(needs_zlibwapi(&v(yes)), "{yes}");
        }
        for no in ["8.2.4", "7.6.5", "9.2.0", "9.10.2"] {
            assert!(!needs_zlibwapi(&v(no)), "{no}");
        }
    }

    #[test]
    fn the_sub_libraries_of_9_21_and_later_are_known_from_their_release_on() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        for name in [
            "libcudnn_engines_tensor_ir.so.9",
            "libcudnn_ext.so.9",
            "cudnn_engines_tensor_ir64_9.dll",
            "cudnn_ext64_9.dll",
            "libcudnn_engines_tensor_ir_static_v9.a",
        ] {
            assert!(is_release_name(name), "{name}");
        }
        assert!(!ships("cudnn_engines_tensor_ir", &v("9.20.0.48")));
        assert!(ships("cudnn_engines_tensor_ir", &v("9.21.0.82")));
        assert!(!ships("cudnn_ext", &v("9.21.1.3")));
        assert!(ships("cudnn_ext", &v("9.28.1.4")));
        assert!(ships("cudnn_graph", &v("9.0.0")));
        assert!(!ships("cudnn_graph", &v("8.9.7")));
        assert!(ships("cudnn_ops_infer", &v("8.9.7")));
        assert_eq!(sublib_stems(9).len(), 9);
    }

    #[test]
    fn required_sets_per_major() {
        assert_eq!(required_groups(7), vec![vec!["cudnn"]]);
        assert_eq!(required_groups(8).len(), 7);
        assert_eq!(required_groups(9).len(), 3);
    }
}
