//! `cudnn-cuda-mismatch`: a cuDNN build that does not fit its toolkit's
//! CUDA, or a loaded copy built for another CUDA than the toolkit in use;
//! with the build that fits, when the catalog has one.

use std::collections::BTreeSet;

use super::deployments::deployed_release;
use crate::doctor::FindingId;
use crate::doctor::checks::{self, Cx};
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::snapshot::{CudnnFile, ToolkitInfo, cudart_to_version};

use crate::version::{CudaVariant, Spec, Version};

/// The CUDA libraries whose file names carry the CUDA version they belong to.
const CUDA_LIBS: [&str; 11] = [
    "cublaslt",
    "cublas",
    "cudart",
    "nvrtc",
    "nvjitlink",
    "cufft",
    "curand",
    "cusolver",
    "cusparse",
    "nvblas",
    "nvrtc-builtins",
];

/// The CUDA version a CUDA library's file name says it belongs to (major,
/// and minor when the name says): `cublasLt64_11.dll` → 11,
/// `cudart64_110.dll` → 11.0, `cudart64_101.dll` → 10.1,
/// `nvrtc64_120_0.dll` → 12.0, `libcublasLt.so.12` → 12,
/// `libcudart.so.11.0` → 11.0. `None` for other names (the driver's
/// `nvcuda.dll`/`libcuda.so.1` belongs to no toolkit).
pub(in crate::doctor::checks) fn cuda_of_library(name: &str) -> Option<(u32, Option<u32>)> {
    let l = name.to_ascii_lowercase();
    if let Some(stem) = l.strip_suffix(".dll") {
        let (base, rest) = stem.split_once("64_")?;
        if !CUDA_LIBS.contains(&base) {
            return None;
        }
        let d = rest.split('_').next()?;
        if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let num = |s: &str| s.parse::<u32>().ok();
        return match d.len() {
            3 => Some((num(&d[..2])?, num(&d[2..]))),
            2 if d.starts_with('1') => Some((num(d)?, None)),
            2 => Some((num(&d[..1])?, num(&d[1..]))),
            _ => None,
        };
    }
    let rest = l.strip_prefix("lib")?;
    let (base, ver) = rest.split_once(".so.")?;
    if !CUDA_LIBS.contains(&base) {
        return None;
    }
    let mut parts = ver.split('.').map(|p| p.parse::<u32>().ok());
    let major = parts.next()??;
    // libcudart.so.12 names the major only; libcublas.so.11 likewise.
    Some((major, parts.next().flatten()))
}

/// The CUDA major the CUDA libraries a cuDNN library imports belong to:
/// its own imports, or for the main library (cuDNN 9's imports none) those
/// of the sub-libraries beside it. With the library named as evidence.
fn imported_cuda(cx: &Cx, f: &CudnnFile) -> Option<(u32, String)> {
    let from = |g: &CudnnFile| {
        g.needed.iter().find_map(|n| {
            cuda_of_library(n).map(|(ma, _)| (ma, format!("{} imports {n}", cx.name(&g.path))))
        })
    };
    let f = cx.s.resolve(f);
    if let Some(x) = from(f) {
        return Some(x);
    }
    let dir = cx.dir(&f.path);
    cx.shared()
        .filter(|(g, _)| cx.s.same_place(&cx.dir(&g.path), &dir))
        .find_map(|(g, _)| from(g))
}

/// The CUDA libraries the cuDNN libraries in `f`'s folder import that the
/// loader does not find, each once, with how many libraries import it.
pub(in crate::doctor::checks) fn missing_cuda_imports(
    cx: &Cx,
    f: &CudnnFile,
) -> Vec<(String, usize)> {
    let dir = cx.dir(&f.path);
    let mut out: Vec<(String, usize)> = Vec::new();
    for (g, _) in cx
        .shared()
        .filter(|(g, _)| cx.s.same_place(&cx.dir(&g.path), &dir))
    {
        for n in g.needed.iter().filter(|n| cuda_of_library(n).is_some()) {
            if !crate::doctor::loader::find_for(cx.s, n, g).is_empty() {
                continue;
            }
            match out.iter_mut().find(|(x, _)| x.eq_ignore_ascii_case(n)) {
                Some((_, c)) => *c += 1,
                None => out.push((n.clone(), 1)),
            }
        }
    }
    out
}

/// The CUDA variant a library was built for: from `cudnnGetCudartVersion()`,
/// else from the CUDA libraries it (or its folder's cuDNN libraries)
/// imports, else from the release id cudnnm deployed (`…_cuda11.2`).
fn build_variant(cx: &Cx, f: &CudnnFile) -> Option<(CudaVariant, String)> {
    if let Some((major, how)) = imported_cuda(cx, f)
        && cx.s.resolve(f).cudart_version.is_none_or(|n| n == 0)
    {
        return Some((
            CudaVariant::new(major, None),
            format!("{how}, a library of CUDA {major}"),
        ));
    }
    let f = cx.s.resolve(f);
    if let Some(n) = f.cudart_version.filter(|n| *n > 0) {
        let c = cudart_to_version(n);
        return Some((
            CudaVariant::new(c.major(), Some(c.minor())),
            format!(
                "built with CUDA runtime {}.{} (cudnnGetCudartVersion)",
                c.major(),
                c.minor()
            ),
        ));
    }
    let t = cx.s.toolkit_of(&f.path)?;
    let r = deployed_release(cx, &t.root)?;
    Some((r.cuda, format!("release {r} deployed by cudnnm")))
}

/// The CUDA versions a cuDNN major was published for (`docs/releases.md#cuda-variants`):
/// 7.x for CUDA 8.0–10.2, 8.x for 10.1–12.x, 9.x for 11–13.
fn published_for(cudnn_major: u32, cuda: &Version) -> Option<bool> {
    let c = (cuda.major(), cuda.minor());
    Some(match cudnn_major {
        7 => ((8, 0)..=(10, 2)).contains(&c),
        8 => (10, 1) <= c && c.0 <= 12,
        9 => (11..=13).contains(&c.0),
        _ => return None,
    })
}

/// The fix for a cuDNN build that does not fit toolkit `t` of CUDA `c`: the
/// same release built for that CUDA, else the newest of its major that
/// fits, from the catalog — or what to look for when it has none.
fn fitting_build(cx: &Cx, f: &CudnnFile, t: &ToolkitInfo, c: &Version) -> (String, Vec<String>) {
    let own = cx.s.version_of(f).map(|k| k.version);
    let cuda = format!("{}.{}", c.major(), c.minor());
    let same = own
        .as_ref()
        .filter(|v| v.parts().len() >= 3)
        .and_then(|v| cx.install_and_use(&Spec::prefix(v.clone(), None), Some(c), Some(t)));
    if let Some((id, cmds)) = same {
        return (
            format!(
                "Deploy the same release built for CUDA {cuda} ({id}) into {}.",
                t.root
            ),
            cmds,
        );
    }
    let major = own.as_ref().map(|v| v.major());
    let newest = major.and_then(|m| {
        cx.install_and_use(
            &Spec::prefix(Version::from_parts(&[m]), None),
            Some(c),
            Some(t),
        )
    });
    match (newest, &own) {
        (Some((id, cmds)), Some(v)) => (
            format!(
                "The catalog has no cuDNN {v} built for CUDA {cuda}; the newest cuDNN {}.x that is: {id}. Deploy it into {}, or use this cuDNN with the toolkit it was built for.",
                v.major(),
                t.root
            ),
            cmds,
        ),
        _ => (
            format!(
                "Deploy a build made for CUDA {cuda} into {}, or use this cuDNN with the toolkit it was built for. {}",
                t.root,
                checks::look_for(&match major {
                    Some(m) => format!("cuDNN {m}.x build for CUDA {cuda}"),
                    None => format!("cuDNN build for CUDA {cuda}"),
                })
            ),
            Vec::new(),
        ),
    }
}

/// Whether a build for `var` runs with a toolkit of CUDA `c`; a variant
/// that names no minor before CUDA 11 (read from a library name such as
/// `cublas64_10.dll`) is judged by its major.
fn variant_fits(var: &CudaVariant, c: &Version) -> bool {
    match var.minor() {
        None => var.major() == c.major(),
        Some(_) => checks::system::fits(var, c),
    }
}

/// The lines that tie a missing CUDA library back to the build mismatch
/// (one cause, one finding: `dependency-unresolved` leaves these out).
fn missing_lines(cx: &Cx, f: &CudnnFile, c: &Version) -> Vec<String> {
    missing_cuda_imports(cx, f)
        .into_iter()
        .map(|(n, count)| {
            format!(
                "{n}, which {count} of its librar{} import{}, is not found: the CUDA {}.{} toolkit has another version's libraries",
                if count == 1 { "y" } else { "ies" },
                if count == 1 { "s" } else { "" },
                c.major(),
                c.minor()
            )
        })
        .collect()
}

/// Sets a fix text and its commands.
trait FixWith {
    fn fix_with(self, fix: (String, Vec<String>)) -> Self;
}

impl FixWith for Finding {
    fn fix_with(self, (text, cmds): (String, Vec<String>)) -> Finding {
        cmds.into_iter().fold(self.fix(text), Finding::command)
    }
}

/// `cudnn-cuda-mismatch` (`docs/breakages.md#build-for-other-cuda`,
/// `docs/breakages.md#cudnn-from-another-cuda`).
pub(super) fn cuda_fit(cx: &Cx, out: &mut Vec<Finding>) {
    let mut reported = BTreeSet::new();
    // (a) Libraries inside a toolkit.
    for (f, n) in cx.shared().filter(|(_, n)| n.is_main() && !n.dev_link) {
        let Some(t) = cx.s.toolkit_of(&f.path) else {
            continue;
        };
        let Some(c) = &t.cuda else { continue };
        let Some(m) = n.major else { continue };
        let ver =
            cx.s.version_of(f)
                .map(|k| k.version.to_string())
                .unwrap_or_else(|| m.to_string());
        let (bad, because) = match build_variant(cx, f) {
            Some((var, how)) => (
                !variant_fits(&var, c),
                format!("{how}: a build for CUDA {var}"),
            ),
            None => match published_for(m, c) {
                Some(false) => (
                    true,
                    format!(
                        "cuDNN {m}.x was never published for CUDA {}.{}",
                        c.major(),
                        c.minor()
                    ),
                ),
                _ => (false, String::new()),
            },
        };
        if !bad || !reported.insert(t.root.clone()) {
            continue;
        }
        out.push(
            Finding::new(FindingId::CudnnCudaMismatch, Severity::Error, format!("cuDNN {ver} in {} does not fit its CUDA {c}", t.root))
                .seen(format!("{} — {because}", f.path))
                .seen(format!("toolkit {} is CUDA {c}", t.root))
                .seen_all(missing_lines(cx, f, c))
                .why("A cuDNN build runs only with the CUDA it was built for: the same major.minor before CUDA 11, the same major from 11 on (minor-version compatibility). Otherwise loading fails on missing CUDA libraries (\"cublas64_11.dll not found\", \"libcublasLt.so.12: cannot open shared object file\") or calls fail with CUDNN_STATUS_ARCH_MISMATCH / CUDNN_STATUS_NOT_SUPPORTED.")
                .fix_with(fitting_build(cx, f, t, c)),
        );
    }
    // (b) The copy loaded comes from another CUDA than the toolkit in use.
    let Some(tk) = cx.toolkit_in_use() else {
        return;
    };
    let Some(c) = &tk.cuda else { return };
    for m in cx.majors_present() {
        let Some(a) = cx.active(m) else { continue };
        let Some(f) = a.file else { continue };
        if cx.s.within(&f.path, &tk.root) {
            continue;
        }
        let Some((var, how)) = build_variant(cx, f) else {
            continue;
        };
        if variant_fits(&var, c) {
            continue;
        }
        out.push(
            Finding::new(FindingId::CudnnCudaMismatch, Severity::Error, format!("the cuDNN {m} that loads is built for CUDA {var}; the toolkit in use is CUDA {c}"))
                .seen(format!("loaded: {} ({how})", cx.describe(&f.path)))
                .seen(format!("toolkit in use: {} (CUDA {c})", tk.root))
                .seen_all(missing_lines(cx, f, c))
                .why("cuDNN was taken from another CUDA install than the one in use (CUDAapi.jl#85): its CUDA libraries do not match, so loading or the first call fails (\"CUDNN_STATUS_NOT_INITIALIZED\", missing libcublasLt/cublas64 of the other version).")
                .fix_with(fitting_build(cx, f, tk, c)),
        );
    }
}
