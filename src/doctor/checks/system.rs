//! OS, toolkits, `nvcc`, `CUDA_PATH`, driver and GPU.

use super::Cx;
use crate::doctor::FindingId;
use crate::doctor::finding::{Finding, Severity};
use crate::doctor::snapshot::{ToolkitInfo, cudart_to_version};
use crate::doctor::spath;
use crate::quote::{ps_quote, sh_quote};
use crate::version::{CudaVariant, DriverVersion, Version};

pub(super) fn check(cx: &Cx, out: &mut Vec<Finding>) {
    os_bits(cx, out);
    toolkits(cx, out);
    nvcc_vs_cuda_path(cx, out);
    cuda_path(cx, out);
    driver(cx, out);
    gpu(cx, out);
    unfinished(cx, out);
    writable(cx, out);
    network_fs(cx, out);
    config(cx, out);
}

/// `config-invalid`: the home's `config.toml` cannot be read, or sets keys
/// cudnnm does not know.
fn config(cx: &Cx, out: &mut Vec<Finding>) {
    if let Some(e) = &cx.s.config_error {
        let mut lines = e.lines();
        let what = lines.next().unwrap_or_default();
        let mut f = Finding::new(
            FindingId::ConfigInvalid,
            Severity::Error,
            format!("the cudnnm settings cannot be read: {what}"),
        )
        .why("Commands that read the default, the deploy mode, the mirror or the backups to keep (`list`, `use`, `install`, `default`, and `exec`/`env`/`current` where no pin applies) fail until it is fixed.");
        let mut fix = None;
        for l in lines {
            match l.strip_prefix("hint: ") {
                Some(h) => fix = Some(h.to_string()),
                None => f = f.seen(l.trim_start_matches("caused by: ").to_string()),
            }
        }
        out.push(f.fix(fix.unwrap_or_else(|| {
            "Edit the file to fix it, or remove it to go back to the default settings.".into()
        })));
    }
    if !cx.s.config_unknown.is_empty() {
        out.push(
            Finding::new(
                FindingId::ConfigInvalid,
                Severity::Warning,
                format!("the cudnnm settings set {} that cudnnm does not know", cx.s.config_unknown.join(", ")),
            )
            .seen(format!("unknown: {}", cx.s.config_unknown.join(", ")))
            .seen(format!("known: {}", crate::home::CONFIG_KEYS.join(", ")))
            .why("A key cudnnm does not know changes nothing: a misspelt `mdoe = \"copy\"` leaves `use` deploying by links.")
            .fix("Correct or remove those keys in the home's config.toml."),
        );
    }
}

/// `network-file-system`: a folder cudnnm locks or changes is on NFS,
/// Lustre, SMB or another network file system.
fn network_fs(cx: &Cx, out: &mut Vec<Finding>) {
    for n in &cx.s.network_fs {
        out.push(
            Finding::new(
                FindingId::NetworkFileSystem,
                Severity::Warning,
                format!("the cudnnm {} '{}' is on a network file system ({})", n.what, n.path, n.fs_type),
            )
            .seen(format!("'{}' is mounted as {} at '{}'", n.path, n.fs_type, n.mount))
            .why("cudnnm admits one writer at a time with an OS file lock (flock). On NFS mounted with `nolock` or Lustre mounted without `flock` that call fails or does nothing; cudnnm then uses an exclusive lock file (`lock.held`, naming host, PID and start time) instead, which a process of the same host takes over once its holder is dead, but which a crash on another node leaves behind until it is removed. Two nodes changing one home at the same moment are only as safe as the file system's exclusive create.")
            .fix("Keep CUDNNM_HOME on a local disk where you can (the store can still be shared read-only as the system store); on a cluster, let one node install into the system store. If a command waits on a lock file from a node that crashed, remove that `lock.held`."),
        );
    }
}

fn mm(x: &Version) -> (u32, u32) {
    (x.major(), x.minor())
}

/// `os-not-64bit` (`docs/breakages.md#os-not-64-bit`): cuDNN ships only 64-bit
/// builds (x86_64, sbsa, aarch64, ppc64le Linux; x86_64 Windows).
fn os_bits(cx: &Cx, out: &mut Vec<Finding>) {
    let os = &cx.s.os;
    if os.bits == 0 || os.bits == 64 {
        return;
    }
    out.push(
        Finding::new(
            FindingId::OsNot64Bit,
            Severity::Error,
            format!("this is a {}-bit operating system; cuDNN exists only for 64-bit systems", os.bits),
        )
        .seen(format!(
            "OS: {} {} ({}-bit)",
            os.name.as_deref().unwrap_or(&os.family),
            os.arch,
            os.bits
        ))
        .why("NVIDIA publishes cuDNN only for 64-bit systems (Windows x86_64; Linux x86_64, sbsa, aarch64, ppc64le). A 32-bit process cannot load a 64-bit library: Windows reports error 193 \"is not a valid Win32 application\", Linux \"wrong ELF class: ELFCLASS64\".")
        .fix("Install a 64-bit edition of the operating system (and a 64-bit Python)."),
    );
}

/// `no-cuda-toolkit` (`docs/breakages.md#no-cuda-toolkit`).
fn toolkits(cx: &Cx, out: &mut Vec<Finding>) {
    let s = cx.s;
    if !s.toolkits.is_empty() {
        return;
    }
    let pip_cuda = s
        .frameworks
        .iter()
        .any(|f| f.is_cudnn_wheel() || f.name == "torch" || f.name.starts_with("tensorflow"));
    // A conda environment's cuDNN comes with its CUDA libraries (the cuDNN
    // packages depend on the CUDA runtime ones).
    let conda_cuda = s
        .files
        .iter()
        .any(|f| f.origin == crate::doctor::snapshot::InstallKind::Conda);
    let sev = if pip_cuda || conda_cuda {
        Severity::Info
    } else {
        Severity::Error
    };
    let mut f = Finding::new(FindingId::NoCudaToolkit, sev, "no CUDA toolkit found")
        .seen("searched: --cuda-root, CUDA_PATH, CUDA_PATH_V*, CUDA_HOME, nvcc on PATH, the default install folders")
        .why("cuDNN is a CUDA library: it needs the CUDA runtime and cuBLAS/cuBLASLt (cuDNN 9 also NVRTC) at run time, and compiling against it needs the toolkit's headers. `cudnnm use` deploys into a toolkit.");
    if pip_cuda {
        f = f.seen("Python packages that bring their own CUDA libraries from pip are installed; programs outside that environment find no CUDA");
    }
    if conda_cuda {
        f = f.seen("a conda environment brings cuDNN and the CUDA libraries it needs; programs outside it find no CUDA");
    }
    out.push(
        f.fix("Install the CUDA toolkit your framework needs (https://developer.nvidia.com/cuda-toolkit-archive), or point cudnnm at one installed elsewhere with --cuda-root.")
            .command("cudnnm doctor --cuda-root <toolkit folder>"),
    );
}

/// The toolkit root of a value such as `CUDA_PATH`, and its version.
fn toolkit_at<'a>(cx: &'a Cx, root: &str) -> Option<&'a ToolkitInfo> {
    cx.s.toolkits
        .iter()
        .find(|t| cx.s.same_place(&t.root, root))
}

/// The variable that names the toolkit root on this OS, and its value.
fn root_var<'a>(cx: &'a Cx) -> Option<(&'static str, &'a str)> {
    ["CUDA_PATH", "CUDA_HOME"]
        .into_iter()
        .find_map(|n| cx.s.var(n).map(|v| (n, v)))
}

/// `nvcc-cuda-path-mismatch` (`docs/breakages.md#no-cuda-toolkit`).
fn nvcc_vs_cuda_path(cx: &Cx, out: &mut Vec<Finding>) {
    let Some(nvcc) = &cx.s.nvcc else { return };
    let Some((var, root)) = root_var(cx) else {
        return;
    };
    let nvcc_root = spath::parent(&nvcc.path, cx.w).and_then(|b| spath::parent(&b, cx.w));
    let nvcc_version = nvcc.release.clone().or_else(|| {
        nvcc_root
            .as_deref()
            .and_then(|r| toolkit_at(cx, r)?.cuda.clone())
    });
    let var_version = toolkit_at(cx, root).and_then(|t| t.cuda.clone());
    let (Some(a), Some(b)) = (nvcc_version, var_version) else {
        return;
    };
    if mm(&a) == mm(&b) {
        return;
    }
    let set = if cx.w {
        format!(
            "[Environment]::SetEnvironmentVariable('CUDA_PATH', {}, 'User')",
            ps_quote(nvcc_root.as_deref().unwrap_or_default())
        )
    } else {
        format!(
            "export {var}={}",
            sh_quote(nvcc_root.as_deref().unwrap_or_default())
        )
    };
    out.push(
        Finding::new(
            FindingId::NvccCudaPathMismatch,
            Severity::Warning,
            format!("nvcc on PATH is CUDA {}.{}, but {var} points at CUDA {}.{}", a.major(), a.minor(), b.major(), b.minor()),
        )
        .seen(format!("nvcc: {} (release {}.{})", nvcc.path, a.major(), a.minor()))
        .seen(format!("{var}={root} (CUDA {}.{})", b.major(), b.minor()))
        .why(format!("Builds take the compiler from PATH and headers, libraries and cuDNN from {var}: objects compiled by one toolkit are linked against the other's runtime (\"undefined reference\", \"CUDA driver version is insufficient for CUDA runtime version\"), and a cuDNN that fits one toolkit may not fit the other."))
        .fix(format!("Make both name the same toolkit: point {var} at nvcc's toolkit, or put the other toolkit's bin first on PATH."))
        .command(set),
    );
}

/// `cuda-path-invalid`, `cuda-path-other-version`, `cuda-path-missing`
/// (`docs/breakages.md#cuda-path-wrong`).
fn cuda_path(cx: &Cx, out: &mut Vec<Finding>) {
    let s = cx.s;
    // CUDA_PATH_VX_Y naming another version.
    for (name, value) in &s.env {
        let up = name.to_ascii_uppercase();
        let Some(rest) = up.strip_prefix("CUDA_PATH_V") else {
            continue;
        };
        let Some((ma, mi)) = rest.split_once('_') else {
            continue;
        };
        let (Ok(ma), Ok(mi)) = (ma.parse::<u32>(), mi.parse::<u32>()) else {
            continue;
        };
        match toolkit_at(cx, value).and_then(|t| t.cuda.clone()) {
            Some(c) if mm(&c) != (ma, mi) => out.push(
                Finding::new(
                    FindingId::CudaPathOtherVersion,
                    Severity::Error,
                    format!("{name} points at a CUDA {}.{} toolkit", c.major(), c.minor()),
                )
                .seen(format!("{name}={value} (CUDA {})", c))
                .why(format!("Build scripts pick the toolkit for CUDA {ma}.{mi} through {name} (CMake, MSBuild's CUDA targets, PyTorch's Windows scripts) and would build against CUDA {}.{} instead.", c.major(), c.minor()))
                .fix(format!("Point {name} at the CUDA {ma}.{mi} toolkit (reinstalling that toolkit sets it), or remove the variable if that toolkit is gone.")),
            ),
            None if toolkit_at(cx, value).is_none() => out.push(
                Finding::new(
                    FindingId::CudaPathInvalid,
                    Severity::Error,
                    format!("{name} points at a folder that is not a CUDA toolkit"),
                )
                .seen(format!("{name}={value}"))
                .why("No version.json, version.txt or include/cuda.h there: the toolkit was moved or uninstalled, and build scripts that read the variable fail (\"Could not find CUDA\", \"nvcc not found\").")
                .fix(format!("Reinstall CUDA {ma}.{mi} or remove the variable.")),
            ),
            _ => {}
        }
    }
    match root_var(cx) {
        Some((var, root)) => match toolkit_at(cx, root) {
            None => out.push(
                Finding::new(FindingId::CudaPathInvalid, Severity::Error, format!("{var} points at a folder that is not a CUDA toolkit"))
                    .seen(format!("{var}={root}"))
                    .why("No version.json, version.txt or include/cuda.h there: build scripts and frameworks that read it (CMake FindCUDAToolkit, onnxruntime, TensorFlow's configure) fail to find CUDA.")
                    .fix(format!("Point {var} at an installed toolkit, or remove it."))
                    .commands_for_toolkits(cx, var),
            ),
            Some(t) => {
                // cuDNN lives in another toolkit than the one the variable names.
                let has = |t: &ToolkitInfo| cx.s.files.iter().any(|f| cx.s.within(&f.path, &t.root));
                if !has(t)
                    && let Some(other) = s.toolkits.iter().find(|o| !cx.s.same_place(&o.root, &t.root) && has(o))
                {
                    let ver = |t: &ToolkitInfo| t.cuda.as_ref().map(|c| format!("CUDA {c}")).unwrap_or_else(|| "a toolkit".into());
                    let f =
                        Finding::new(
                            FindingId::CudaPathOtherVersion,
                            Severity::Warning,
                            format!("{var} points at {} with no cuDNN; cuDNN is in {}", ver(t), ver(other)),
                        )
                        .seen(format!("{var}={root} ({})", ver(t)))
                        .seen(format!("cuDNN found in {} ({})", other.root, ver(other)))
                        .why(format!("Builds and frameworks that locate CUDA through {var} (CMake FindCUDAToolkit, onnxruntime, TensorFlow's configure) find no cuDNN there: \"Could not find cuDNN\" / \"cudnn.h: No such file or directory\"."))
                        .fix(format!("Point {var} at {}, or deploy cuDNN into the toolkit it names.", other.root));
                    // The newest installed release that fits the named toolkit; else the catalog's.
                    let fits = |id: &crate::version::ReleaseId| t.cuda.as_ref().is_none_or(|c| id.cuda.fits(c.major(), c.minor()));
                    let cmds = match cx.newest_installed(fits) {
                        Some(id) => vec![crate::command::CommandLine::use_(id.to_string()).cuda_root(&t.root).for_host(cx.w)],
                        None => cx.install_and_use(&crate::version::Spec::latest(), None, Some(t)).map(|(_, c)| c).unwrap_or_default(),
                    };
                    out.push(cmds.into_iter().fold(f, Finding::command));
                }
            }
        },
        None if cx.w && !s.toolkits.is_empty() => {
            let t = cx.toolkit_in_use().unwrap_or(&s.toolkits[0]);
            out.push(
                Finding::new(FindingId::CudaPathMissing, Severity::Warning, "CUDA_PATH is not set")
                    .seen(format!("toolkits found: {}", s.toolkits.iter().map(|t| t.root.as_str()).collect::<Vec<_>>().join(", ")))
                    .why("NVIDIA's installer sets CUDA_PATH (and CUDA_PATH_VX_Y); CMake, MSBuild's CUDA targets, onnxruntime and TensorFlow's build read it and fail without it (\"CUDA_PATH is not set\", \"Could not find CUDA\").")
                    .fix("Set CUDA_PATH to the toolkit you use, then open a new terminal.")
                    .command(format!("[Environment]::SetEnvironmentVariable('CUDA_PATH', {}, 'User')", ps_quote(&t.root))),
            );
        }
        None => {}
    }
}

trait ToolkitCommands {
    fn commands_for_toolkits(self, cx: &Cx, var: &str) -> Self;
}

impl ToolkitCommands for Finding {
    fn commands_for_toolkits(self, cx: &Cx, var: &str) -> Finding {
        match cx.s.toolkits.first() {
            Some(t) if cx.w => self.command(format!(
                "[Environment]::SetEnvironmentVariable('{var}', {}, 'User')",
                ps_quote(&t.root)
            )),
            Some(t) => self.command(format!("export {var}={}", sh_quote(&t.root))),
            None => self,
        }
    }
}

/// The driver that runs every toolkit of a CUDA major through minor-version
/// compatibility (CUDA release notes Table 2;
/// `docs/releases.md#minor-version-compatibility`).
fn minor_compat_floor(cuda_major: u32, windows: bool) -> Option<DriverVersion> {
    let v = |s: &str| s.parse::<DriverVersion>().ok();
    match (cuda_major, windows) {
        (11, false) => v("450.80.02"),
        (11, true) => v("452.39"),
        (12, false) => v("525.60.13"),
        (12, true) => v("527.41"),
        (13, _) => v("580"),
        _ => None,
    }
}

/// `driver-not-found`, `driver-too-old`, `driver-minor-compat-only`
/// (`docs/breakages.md#driver-too-old`).
fn driver(cx: &Cx, out: &mut Vec<Finding>) {
    let s = cx.s;
    let Some(d) = &s.driver else {
        if !s.toolkits.is_empty() || !s.files.is_empty() {
            out.push(
                Finding::new(FindingId::DriverNotFound, Severity::Info, "no NVIDIA driver found (nvidia-smi is not on PATH or failed); driver and GPU checks skipped")
                    .why("Without a driver no CUDA program runs on a GPU (\"CUDA driver version is insufficient\", \"no CUDA-capable device is detected\"), and libraries that link the driver library (libcuda.so.1 / nvcuda.dll, e.g. cuDNN 9's runtime-compiled engines) do not load; on a build machine without a GPU this is expected.")
                    .fix("Install the NVIDIA driver for your GPU (https://www.nvidia.com/drivers)."),
            );
        }
        return;
    };
    let Some(dv) = &d.version else { return };
    for t in &s.toolkits {
        let Some(c) = &t.cuda else { continue };
        let Some(floor) = cx.t.driver_floor(c, cx.w) else {
            continue;
        };
        if dv >= floor {
            continue;
        }
        let compat = minor_compat_floor(c.major(), cx.w).filter(|f| dv >= f);
        let (id, sev) = if compat.is_some() {
            (FindingId::DriverMinorCompatOnly, Severity::Warning)
        } else {
            (FindingId::DriverTooOld, Severity::Error)
        };
        let mut f = Finding::new(
            id,
            sev,
            format!(
                "driver {dv} is older than CUDA {} needs ({floor} or newer)",
                mm_s(c)
            ),
        )
        .seen(format!("driver {dv} ({})", d.tool))
        .seen(format!(
            "toolkit {} (CUDA {c}) needs driver ≥ {floor} ({})",
            t.root,
            if cx.w { "Windows" } else { "Linux" }
        ));
        f = match compat {
            Some(cf) => f.why(format!("Driver {dv} runs CUDA {}.x programs only through minor-version compatibility (≥ {cf}): PTX JIT compilation and features newer than the driver fail with \"the provided PTX was compiled with an unsupported toolchain\" or CUDA_ERROR_UNSUPPORTED_PTX_VERSION.", c.major())),
            None => f.why("CUDA programs fail at their first CUDA call with \"CUDA driver version is insufficient for CUDA runtime version\" (cudaErrorInsufficientDriver). Newer drivers run older CUDA, never the reverse."),
        };
        out.push(f.fix(format!("Install NVIDIA driver {floor} or newer (https://www.nvidia.com/drivers), or use a toolkit no newer than the driver supports.")));
    }
}

fn mm_s(c: &Version) -> String {
    format!("{}.{}", c.major(), c.minor())
}

/// A release doctor judges against the GPUs, and why it matters here.
struct InUse {
    version: Version,
    cuda: Option<CudaVariant>,
    label: String,
    roles: Vec<String>,
}

/// The releases that matter on this machine: the ones the loader takes,
/// the ones deployed into toolkits, and the pinned or default one.
fn releases_in_use(cx: &Cx) -> Vec<InUse> {
    let mut out: Vec<InUse> = Vec::new();
    let mut add = |version: Version, cuda: Option<CudaVariant>, role: String| {
        if version.parts().len() < 2 {
            return;
        }
        let label = match &cuda {
            Some(c) => format!("{version} for CUDA {c}"),
            None => version.to_string(),
        };
        // The same release seen twice (a loaded 9.12.0 built with CUDA 12.3
        // and the deployed 9.12.0.46_cuda12) is judged once, by its fuller name.
        let same = |r: &InUse| {
            r.version.triple() == version.triple()
                && match (&r.cuda, &cuda) {
                    (Some(a), Some(b)) => a.major() == b.major(),
                    _ => true,
                }
        };
        match out.iter_mut().find(|r| same(r)) {
            Some(r) => {
                r.roles.push(role);
                if version.parts().len() > r.version.parts().len()
                    || (r.cuda.is_none() && cuda.is_some())
                {
                    let cuda = cuda.or(r.cuda);
                    let label = match &cuda {
                        Some(c) => format!("{version} for CUDA {c}"),
                        None => version.to_string(),
                    };
                    (r.version, r.cuda, r.label) = (version, cuda, label);
                }
            }
            None => out.push(InUse {
                version,
                cuda,
                label,
                roles: vec![role],
            }),
        }
    };
    for major in cx.majors_present() {
        let Some(a) = cx.active(major) else { continue };
        let Some(k) = &a.version else { continue };
        let cuda = a
            .file
            .and_then(|f| cx.s.resolve(f).cudart_version)
            .map(cudart_to_version)
            .and_then(|c| format!("{}.{}", c.major(), c.minor()).parse().ok());
        add(
            k.version.clone(),
            cuda,
            format!("the loader takes {}", cx.describe(&a.hit.path)),
        );
    }
    for d in &cx.s.deployments {
        add(
            d.release.version.clone(),
            Some(d.release.cuda),
            format!("deployed in {}", d.toolkit),
        );
    }
    if let Some(p) = &cx.s.pin
        && let Ok(spec) = p.spec.parse::<crate::version::Spec>()
    {
        // The installed release the pin selects, else the spec as written.
        match installed_match(cx, &spec) {
            Some(id) => add(
                id.version,
                Some(id.cuda),
                format!("pinned as `{}` ({})", p.spec, p.source),
            ),
            None => {
                if let Some(version) = spec.version().cloned() {
                    add(
                        version,
                        spec.cuda,
                        format!("pinned as `{}` ({})", p.spec, p.source),
                    );
                }
            }
        }
    }
    // The default release (`cudnnm default`), when installed.
    if let Some(d) = &cx.s.default_spec
        && let Ok(spec) = d.parse::<crate::version::Spec>()
        && let Some(id) = installed_match(cx, &spec)
    {
        add(id.version, Some(id.cuda), format!("the default (`{d}`)"));
    }
    out
}

/// The newest installed store release `spec` selects, if any.
fn installed_match(cx: &Cx, spec: &crate::version::Spec) -> Option<crate::version::ReleaseId> {
    cx.newest_installed(|id| spec.matches(&id.version, &id.cuda))
}

/// `gpu-too-old` and `gpu-too-new`: a release the loader takes, deployed
/// into a toolkit, pinned or the default (when installed), does not support
/// a GPU: the GPU is below the support matrix's minimum for the release and
/// CUDA build, or newer than the release (or its CUDA build) knows
/// (docs/releases.md#gpu-ceilings). Both from the catalog.
fn gpu(cx: &Cx, out: &mut Vec<Finding>) {
    let Some(d) = &cx.s.driver else { return };
    for r in releases_in_use(cx) {
        let need = cx.t.min_compute(&r.version, r.cuda.as_ref());
        // Judged by the GPUs a CUDA program would use (`CUDA_VISIBLE_DEVICES`).
        for g in d.gpus.iter().filter(|g| !g.hidden) {
            let Some(cc) = &g.compute_capability else {
                continue;
            };
            let (id, why) = if let Some(need) = need.as_ref().filter(|n| cc < *n) {
                (
                    FindingId::GpuTooOld,
                    format!(
                        "cuDNN {} supports compute capability {need} and newer (NVIDIA's cuDNN support matrix: CUDA 12 builds of 9.11 and later, and every CUDA 13 build, start at Turing, 7.5); on this GPU its calls fail with CUDNN_STATUS_ARCH_MISMATCH or \"no kernel image is available for execution on the device\".",
                        r.label
                    ),
                )
            } else if let Some(t) = cx.t.too_new(&r.version, r.cuda.as_ref(), cc) {
                (
                    FindingId::GpuTooNew,
                    format!(
                        "{}: cuDNN {} predates this GPU (NVIDIA's cuDNN support matrix, docs/releases.md#gpu-ceilings); its calls fail with \"no kernel image is available for execution on the device\" or CUDNN_STATUS_ARCH_MISMATCH.",
                        t.needs(cx.w),
                        r.label
                    ),
                )
            } else {
                continue;
            };
            let mut f = Finding::new(
                id,
                Severity::Error,
                format!(
                    "{} (compute capability {cc}) cannot run cuDNN {}",
                    g.name, r.label
                ),
            )
            .seen(format!("GPU: {} (compute capability {cc})", g.name));
            for role in &r.roles {
                f = f.seen(format!("cuDNN {}: {role}", r.label));
            }
            f = f.why(why);
            f = match newest_that_runs(cx, cc, r.cuda.as_ref()) {
                Some(o) => {
                    let f = f.fix(format!(
                        "Use cuDNN {}, the newest release that runs on this GPU ({}), in place of {} (or run on {} GPU).",
                        o.id(),
                        match &o.offer {
                            None => "installed",
                            Some(_) => "in the catalog",
                        },
                        r.label,
                        if id == FindingId::GpuTooOld { "a newer" } else { "an older" }
                    ));
                    let f = match &o.offer {
                        Some(offer) => f.command(cx.install_cmd(offer).for_host(cx.w)),
                        None => f,
                    };
                    f.command(match cx.toolkit_in_use() {
                        Some(t) => crate::command::CommandLine::use_(o.id())
                            .cuda_root(&t.root)
                            .for_host(cx.w),
                        None => crate::command::CommandLine::exec(o.id(), "<your program>")
                            .for_host(cx.w),
                    })
                }
                None => {
                    f.fix("Use a cuDNN release that supports this GPU (and the CUDA it needs).")
                }
            };
            out.push(f);
        }
    }
}

/// The newest release that runs on a GPU of compute capability `cc`, by
/// the one rule `install` and `use` follow too
/// ([`crate::catalog::offer::newest_that_runs`]): among the store's releases
/// and the catalog's, a build for `cuda`'s major preferred.
pub(in crate::doctor::checks) fn newest_that_runs(
    cx: &Cx,
    cc: &Version,
    cuda: Option<&CudaVariant>,
) -> Option<crate::catalog::offer::Runnable> {
    let installed: Vec<(Version, CudaVariant)> =
        cx.installed().map(|id| (id.version, id.cuda)).collect();
    crate::catalog::offer::newest_that_runs(&cx.t.offers, &installed, cuda, &|v, c| {
        cx.t.min_compute(v, Some(c)).is_some_and(|n| n <= *cc)
            && cx.t.too_new(v, Some(c), cc).is_none()
    })
    .newest
}

/// `toolkit-change-unfinished`: another home's change to a toolkit is
/// running, or was interrupted and not yet finished or undone; the toolkit
/// may hold a mix of its old and new files until that home recovers it.
fn unfinished(cx: &Cx, out: &mut Vec<Finding>) {
    for t in &cx.s.toolkits {
        let Some(u) = &t.unfinished_change else {
            continue;
        };
        let whose = if u.home.is_empty() {
            "another user's cudnnm home (its marker .cudnnm-inflight.toml cannot be read here)"
                .to_string()
        } else {
            format!(
                "`{}` (backup {} of cudnnm home {})",
                u.action, u.backup, u.home
            )
        };
        if u.own_home && !u.running {
            let f = Finding::new(FindingId::ToolkitChangeUnfinished, Severity::Error, format!("{} is in the middle of an interrupted change from this cudnnm home", t.root))
                .seen(whose)
                .why("A cudnnm change to this toolkit stopped part-way (a crash, a kill or a power cut). Its journal and the original files are in this home; until it is finished or undone the toolkit may hold part of the old cuDNN and part of the new, so its files are not judged as drift.")
                .fix("Run any cudnnm command with this home: it completes the change or puts the original files back.");
            out.push(if u.finish.is_empty() {
                f
            } else {
                f.command(u.finish.clone())
            });
            continue;
        }
        let f = if u.running {
            Finding::new(FindingId::ToolkitChangeUnfinished, Severity::Warning, format!("{} is being changed right now by another cudnnm home", t.root))
                .seen(whose)
                .why("Another cudnnm process holds this toolkit's lock and is switching its cuDNN files; until it finishes, the toolkit holds part of the old cuDNN and part of the new.")
                .fix("Wait for it to finish, then run doctor again.")
        } else {
            let f = Finding::new(FindingId::ToolkitChangeUnfinished, Severity::Error, format!("{} is in the middle of an interrupted change from another cudnnm home", t.root))
                .seen(whose)
                .why("A cudnnm change to this toolkit stopped part-way (a crash, a kill or a power cut). Its journal and the original files are in that other home, which finishes or undoes the change at its next command; until then the toolkit may hold part of the old cuDNN and part of the new, and cudnnm from any other home refuses to change it.")
                .fix("Run any cudnnm command with that home (as its user): it completes the change or puts the original files back.");
            if u.finish.is_empty() {
                f
            } else {
                f.command(u.finish.clone())
            }
        };
        out.push(f);
    }
}

/// `toolkit-not-writable` (`docs/breakages.md#toolkit-not-writable`): changing
/// the toolkit needs elevated rights.
fn writable(cx: &Cx, out: &mut Vec<Finding>) {
    for t in &cx.s.toolkits {
        if t.writable != Some(false) {
            continue;
        }
        out.push(
            Finding::new(FindingId::ToolkitNotWritable, Severity::Info, format!("you cannot change the cuDNN files of {}", t.root))
                .seen(format!("{} and its include/lib folders are not writable by this user", t.root))
                .why("Deploying or switching cuDNN in this toolkit (`cudnnm use`) needs administrator/root rights; cudnnm checks every target first and refuses whole rather than half.")
                .fix("Run `cudnnm use` from an elevated prompt (sudo on Linux), or activate a release per process, which needs no rights.")
                .command("cudnnm exec -- <your program>")
                .command(if cx.w { "cudnnm env --shell powershell" } else { "eval \"$(cudnnm env --shell bash)\"" }),
        );
    }
}

/// Whether a release built for `variant` fits a toolkit of CUDA `cuda`.
pub(super) fn fits(variant: &CudaVariant, cuda: &Version) -> bool {
    variant.fits(cuda.major(), cuda.minor())
}
