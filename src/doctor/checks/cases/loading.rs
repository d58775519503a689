//! Cases for `loading/`: loader path mistakes, copies in search order,
//! sub-library mixing, dependencies, zlib, cuDNN only in Python.

use super::*;

// --- toolkit-bin-not-on-path, path-at-archive-root,
// installer-subfolder-not-on-path (docs/breakages.md) -----------------------

#[test]
fn toolkit_bin_not_on_path() {
    let mut k = Kit::healthy_windows();
    k.s.path.retain(|p| !p.ends_with(r"v11.2\bin"));
    k.s.registry = None;
    let f = k.expect(FindingId::ToolkitNotOnLoaderPath);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.auto_fix, Some(AutoFix::AddToUserPath { dir: bin112() }));
    let mut k = Kit::healthy_linux();
    k.s.ld_library_path.clear();
    let f = k.expect(FindingId::ToolkitNotOnLoaderPath);
    assert!(
        f.commands[0].starts_with("export LD_LIBRARY_PATH=/usr/local/cuda-12.4/lib64"),
        "{f:?}"
    );
    // A second toolkit with cuDNN 9, neither reachable: the first found is
    // the error, the other a warning that says why (both on the loader path
    // would mix their libraries).
    let mut two = Kit::healthy_linux();
    two.s.ld_library_path.clear();
    two.toolkit("/opt/cuda-12.6", "12.6.0");
    two.linux_set(
        "/opt/cuda-12.6/lib64",
        "/opt/cuda-12.6/include",
        "9.1.0",
        true,
    );
    let all = two.all(FindingId::ToolkitNotOnLoaderPath);
    assert_eq!(
        all.iter().map(|f| f.severity).collect::<Vec<_>>(),
        vec![Severity::Error, Severity::Warning],
        "{all:?}"
    );
    assert!(
        all[0].title.starts_with("/usr/local/cuda-12.4/lib64"),
        "{all:?}"
    );
    assert!(
        all[1].seen.iter().any(|s| s.contains(
            "the toolkit in '/usr/local/cuda-12.4' (found first) is the one reported as the error"
        )),
        "{all:?}"
    );
    // Registered with ldconfig instead: fine.
    k.s.ld_cache.push(LdCacheEntry {
        name: "libcudnn.so.9".into(),
        path: format!("{TK12}/lib64/libcudnn.so.9"),
        gone: false,
    });
    k.absent(FindingId::ToolkitNotOnLoaderPath);
}

#[test]
fn path_points_at_the_archive_root() {
    // path-at-archive-root: PATH holds the folder the zip was unpacked into;
    // the DLL is in cuda\bin.
    let mut k = Kit::windows();
    k.toolkit(TK112, "11.2");
    k.windows_set(
        r"C:\tools\cudnn-11.2-windows-x64-v8.1.0.77\cuda\bin",
        r"C:\tools\cudnn-11.2-windows-x64-v8.1.0.77\cuda\include",
        r"C:\tools\cudnn-11.2-windows-x64-v8.1.0.77\cuda\lib\x64",
        "8.1.0.77",
    );
    k.s.path
        .push(r"C:\tools\cudnn-11.2-windows-x64-v8.1.0.77".into());
    let f = k.expect(FindingId::PathPointsAtArchiveRoot);
    assert_eq!(f.severity, Severity::Error);
    assert!(f.title.contains(r"cuda\bin"), "{f:?}");
    k.s.path.pop();
    k.s.path
        .push(r"C:\tools\cudnn-11.2-windows-x64-v8.1.0.77\cuda\bin".into());
    k.absent(FindingId::PathPointsAtArchiveRoot);
}

#[test]
fn installer_puts_bin_on_path_but_dlls_are_in_a_cuda_subfolder() {
    // installer-subfolder-not-on-path: cuDNN 9 installer, DLLs in bin\12.8 and
    // bin\11.8, toolkit CUDA 12.8.
    let mut k = Kit::windows();
    let tk = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8";
    k.toolkit(tk, "12.8");
    let base = r"C:\Program Files\NVIDIA\CUDNN\v9.7";
    for c in ["11.8", "12.8"] {
        k.windows_set(
            &format!(r"{base}\bin\{c}"),
            &format!(r"{base}\include\{c}"),
            &format!(r"{base}\lib\{c}\x64"),
            "9.7.1",
        );
    }
    k.s.path.push(format!(r"{base}\bin"));
    let f = k.expect(FindingId::InstallerSubfolderNotOnPath);
    assert_eq!(
        f.auto_fix,
        Some(AutoFix::AddToUserPath {
            dir: format!(r"{base}\bin\12.8")
        }),
        "{f:?}"
    );
    k.absent(FindingId::PathPointsAtArchiveRoot);
    k.s.path.push(format!(r"{base}\bin\12.8"));
    k.absent(FindingId::InstallerSubfolderNotOnPath);
}

// --- several-copies-reachable, older-copy-first-on-path,
// stale-copy-on-ld-library-path, conda-env-shadows-wheel (docs/breakages.md) ---

#[test]
fn two_copies_on_path_the_first_older() {
    // older-copy-first-on-path: two cudnn64_5.dll on PATH; the first is older.
    let mut k = Kit::windows();
    k.toolkit(r"C:\CUDA\v8.0", "8.0");
    let a = k.file(r"C:\old\cudnn64_5.dll");
    a.file_version = Some(v("5.0.5"));
    let b = k.file(r"C:\new\cudnn64_5.dll");
    b.file_version = Some(v("5.1.10"));
    k.s.path
        .extend([r"C:\old".to_string(), r"C:\new".to_string()]);
    let f = k.expect(FindingId::MultipleCudnnCopies);
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        f.seen[0].starts_with(r"1. C:\old\cudnn64_5.dll") && f.seen[0].ends_with("← loaded"),
        "{f:?}"
    );
    assert!(f.seen[1].contains("5.1.10"), "{f:?}");
    Kit::healthy_windows().absent(FindingId::MultipleCudnnCopies);
}

#[test]
fn ld_library_path_lists_an_old_copy_first() {
    // stale-copy-on-ld-library-path: LD_LIBRARY_PATH holds cuDNN 8.0.3 before
    // the framework's own 8.3.2.
    let mut k = Kit::healthy_linux();
    k.linux_set("/opt/old/lib64", "/opt/old/include", "8.0.3", true);
    k.linux_set(
        "/venv/lib/python3.10/site-packages/nvidia/cudnn/lib",
        "/venv/lib/python3.10/site-packages/nvidia/cudnn/include",
        "8.3.2",
        false,
    );
    k.s.ld_library_path = vec![
        "/opt/old/lib64".into(),
        "/venv/lib/python3.10/site-packages/nvidia/cudnn/lib".into(),
        format!("{TK12}/lib64"),
    ];
    let f = k.expect(FindingId::MultipleCudnnCopies);
    assert!(f.title.contains("/opt/old/lib64/libcudnn.so.8"), "{f:?}");
    assert!(
        f.seen[0].contains("8.0.3") && f.seen[0].contains("LD_LIBRARY_PATH entry 1"),
        "{f:?}"
    );
    assert!(
        f.seen[1].contains("8.3.2") && f.seen[1].contains("pip wheel"),
        "{f:?}"
    );
}

#[test]
fn conda_before_pip_named_with_origins_and_order_fixed() {
    // conda-env-shadows-wheel: a conda env's lib/ (8.1) searched before the pip
    // wheel (8.6) TensorFlow 2.12 wants.
    let mut k = Kit::healthy_linux();
    let conda = "/home/me/miniconda3/envs/tf";
    let wheel = format!("{conda}/lib/python3.10/site-packages/nvidia/cudnn");
    k.linux_set(
        &format!("{conda}/lib"),
        &format!("{conda}/include"),
        "8.1.0",
        true,
    );
    for f in k.s.files.iter_mut().filter(|f| {
        f.path.starts_with(&format!("{conda}/lib/lib"))
            || f.path.starts_with(&format!("{conda}/include"))
    }) {
        f.origin = InstallKind::Conda;
        f.origin_detail = Some(conda.into());
    }
    k.linux_set(
        &format!("{wheel}/lib"),
        &format!("{wheel}/include"),
        "8.6.0",
        false,
    );
    k.s.ld_library_path = vec![format!("{conda}/lib"), format!("{wheel}/lib")];
    k.framework(
        "tensorflow",
        "2.12.0",
        &format!("{conda}/lib/python3.10/site-packages"),
        None,
    );
    k.t.frameworks.push(crate::catalog::FrameworkBuild {
        framework: "tensorflow".into(),
        first: v("2.12.0"),
        last: v("2.13.0"),
        os: Some("linux".into()),
        cuda: v("11.8"),
        cudnn: v("8.6"),
    });
    let f = k.expect(FindingId::MultipleCudnnCopies);
    assert!(f.seen[0].contains("conda package"), "{f:?}");
    assert!(f.seen[1].contains("pip wheel"), "{f:?}");
    assert_eq!(
        f.commands,
        vec![format!(
            "export LD_LIBRARY_PATH={wheel}/lib${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"
        )]
    );
}

#[test]
fn sub_libraries_mix_between_sets() {
    // sub-libraries-mixed: two complete cuDNN 8 sets visible: the wheel folder and a toolkit lib64.
    let mut k = Kit::linux();
    let tk = "/usr/local/cuda-11.8";
    k.toolkit(tk, "11.8");
    k.linux_set(
        &format!("{tk}/lib64"),
        &format!("{tk}/include"),
        "8.7.0",
        true,
    );
    let wheel = "/venv/lib/python3.10/site-packages/nvidia/cudnn";
    k.linux_set(
        &format!("{wheel}/lib"),
        &format!("{wheel}/include"),
        "8.5.0",
        false,
    );
    k.s.ld_library_path = vec![format!("{tk}/lib64")];
    assert_eq!(
        k.expect(FindingId::SubLibrariesMixed).severity,
        Severity::Warning
    );
    // A sub-library missing from the first folder comes from the second: an error.
    k.s.ld_library_path.push(format!("{wheel}/lib"));
    k.remove("/lib64/libcudnn_cnn_infer.so.8")
        .remove("/lib64/libcudnn_cnn_infer.so.8.7.0");
    let all = k.all(FindingId::SubLibrariesMixed);
    assert!(
        all.iter().any(|f| f.severity == Severity::Error),
        "{}",
        k.dump()
    );
    // One folder with two releases' files (a partial copy over an older one:
    // the old link still leads to the old sub-library).
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn_ops.so.9.0.0"));
    k.link(
        &format!("{TK12}/lib64/libcudnn_ops.so.9"),
        "libcudnn_ops.so.9.0.0",
    );
    k.expect(FindingId::SubLibrariesMixed);
    // A leftover versioned file no link leads to is never loaded: no mix.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn_ops.so.9.0.0"));
    k.absent(FindingId::SubLibrariesMixed);
    Kit::healthy_linux().absent(FindingId::SubLibrariesMixed);
}

/// The tester's report: `a` holds only 9.12's `libcudnn.so.9` shim (a copy
/// from the store), `b` 9.27's shim and graph library; `LD_LIBRARY_PATH=a:b`.
/// Loaded, `a`'s shim reports 9.27.0: its graph library comes from `b`.
fn shim_without_its_graph_library() -> Kit {
    let mut k = Kit::linux();
    let a = k.file("/work/a/libcudnn.so.9");
    a.machine = Some("x86_64".into());
    a.soname = Some("libcudnn.so.9".into());
    a.runpath = vec!["$ORIGIN".into()];
    a.library_version = Some(v("9.27.0"));
    a.loaded_modules = vec![
        "/work/a/libcudnn.so.9".into(),
        "/work/b/libcudnn_graph.so.9".into(),
    ];
    a.store_copy = Some(StoreCopy {
        release: id("9.12.0.46_cuda12"),
        version: v("9.12.0.46"),
        file: "lib/libcudnn.so.9".into(),
        inside: false,
    });
    let b = k.file("/work/b/libcudnn.so.9");
    b.machine = Some("x86_64".into());
    b.runpath = vec!["$ORIGIN".into()];
    b.library_version = Some(v("9.27.0"));
    b.loaded_modules = vec![
        "/work/b/libcudnn.so.9".into(),
        "/work/b/libcudnn_graph.so.9".into(),
    ];
    k.file("/work/b/libcudnn_graph.so.9").machine = Some("x86_64".into());
    k.s.ld_library_path = vec!["/work/a".into(), "/work/b".into()];
    k
}

#[test]
fn a_copy_that_loads_another_copys_graph_library_is_mixing_not_a_duplicate() {
    let k = shim_without_its_graph_library();
    let f = k.expect(FindingId::SubLibrariesMixed);
    assert_eq!(f.severity, Severity::Error, "{f:?}");
    assert!(
        f.title
            .starts_with("/work/a/libcudnn.so.9 loads libcudnn_graph.so.9"),
        "{f:?}"
    );
    assert!(f.seen[0].contains("9.12.0.46"), "its own version: {f:?}");
    assert!(
        f.seen[1].starts_with("libcudnn_graph.so.9 comes from /work/b/libcudnn_graph.so.9")
            && f.seen[1].contains("9.27.0"),
        "{f:?}"
    );
    assert!(
        f.seen.iter().any(|l| l.contains("it reports cuDNN 9.27.0")),
        "{f:?}"
    );
    assert_eq!(
        f.commands,
        vec!["cudnnm exec --version 9.12.0.46_cuda12 -- <your program>"]
    );
    // The two copies are not "the same version".
    let c = k.expect(FindingId::MultipleCudnnCopies);
    assert_eq!(c.severity, Severity::Warning);
    assert!(!c.why.contains("same version"), "{c:?}");
    assert!(
        c.seen[0].contains("9.12.0.46 (store receipt; reports 9.27.0 when loaded"),
        "{c:?}"
    );
    assert!(c.seen[1].contains("9.27.0 (loaded library)"), "{c:?}");
    // What a program gets is summarised by the copy's own version.
    let act = crate::doctor::checks::active_copies(&k.s);
    assert_eq!(act[0].version.as_deref(), Some("9.12.0.46"));
    assert_eq!(act[0].version_source.as_deref(), Some("store receipt"));
}

#[test]
fn without_loading_a_missing_sub_library_found_in_another_copy_is_mixing() {
    // --no-load (or a snapshot from elsewhere): no versions, no module list;
    // the folder lacks libcudnn_graph.so.9 and the loader finds b's.
    let mut k = shim_without_its_graph_library();
    for f in &mut k.s.files {
        f.library_version = None;
        f.loaded_modules.clear();
        f.store_copy = None;
    }
    let f = k.expect(FindingId::SubLibrariesMixed);
    assert_eq!(f.severity, Severity::Error, "{f:?}");
    assert!(f.seen[0].contains("its own version is unknown"), "{f:?}");
    assert!(
        f.seen[1].contains("found via LD_LIBRARY_PATH entry 2"),
        "{f:?}"
    );
    let c = k.expect(FindingId::MultipleCudnnCopies);
    assert_eq!(
        c.severity,
        Severity::Warning,
        "unknown versions are never 'the same'"
    );
    assert!(c.why.contains("unknown"), "{c:?}");
    // Two whole sets whose own files agree are the same version (a note).
    let mut k = Kit::linux();
    k.linux_set("/work/a", "/work/a/include", "9.1.0", true);
    k.linux_set("/work/b", "/work/b/include", "9.1.0", true);
    k.s.ld_library_path = vec!["/work/a".into(), "/work/b".into()];
    let c = k.expect(FindingId::MultipleCudnnCopies);
    assert_eq!(c.severity, Severity::Info, "{}", k.dump());
    assert!(
        k.all(FindingId::SubLibrariesMixed)
            .iter()
            .all(|f| f.severity != Severity::Error),
        "{}",
        k.dump()
    );
}

/// cuDNN 9.21+ ships `libcudnn_engines_tensor_ir.so.9` (and 9.22+
/// `libcudnn_ext.so.9`): a folder of 9.28.1 whose tensor_ir library is
/// 9.21.0's is a sub-library mix, naming both releases; a whole 9.28.1 set,
/// and a 9.20 set (which has no tensor_ir library), are not.
#[test]
fn a_tensor_ir_library_of_another_release_is_a_sub_library_mix() {
    let mut k = Kit::linux();
    k.linux_set("/work/t", "/work/t/include", "9.28.1", true);
    k.s.ld_library_path = vec!["/work/t".into()];
    k.absent(FindingId::SubLibrariesMixed);
    assert!(
        k.s.files
            .iter()
            .any(|f| f.path == "/work/t/libcudnn_engines_tensor_ir.so.9"),
        "the 9.28.1 set has the tensor_ir library"
    );
    k.s.files
        .retain(|f| !f.path.starts_with("/work/t/libcudnn_engines_tensor_ir"));
    let real = k.file("/work/t/libcudnn_engines_tensor_ir.so.9.21.0");
    real.machine = Some("x86_64".into());
    real.soname = Some("libcudnn_engines_tensor_ir.so.9".into());
    k.link(
        "/work/t/libcudnn_engines_tensor_ir.so.9",
        "libcudnn_engines_tensor_ir.so.9.21.0",
    )
    .machine = Some("x86_64".into());
    let f = k.expect(FindingId::SubLibrariesMixed);
    assert_eq!(f.severity, Severity::Error, "{f:?}");
    assert!(f.title.contains("2 releases (9.21.0 and 9.28.1)"), "{f:?}");
    assert!(
        f.seen.iter().any(|l| l.starts_with("cuDNN 9.21.0: ")
            && l.contains("libcudnn_engines_tensor_ir.so.9.21.0")),
        "{f:?}"
    );
    // A 9.20 set has no tensor_ir library: nothing is missing, nothing mixed.
    let mut k = Kit::linux();
    k.linux_set("/work/u", "/work/u/include", "9.20.0", true);
    k.s.ld_library_path = vec!["/work/u".into()];
    assert!(
        !k.s.files.iter().any(|f| f.path.contains("tensor_ir")),
        "9.20 ships no tensor_ir"
    );
    k.absent(FindingId::SubLibrariesMixed);
}

// --- dll-load-failed-zlibwapi, dependency-unresolved (docs/breakages.md) ---

fn windows_with(version: &str) -> Kit {
    let mut k = Kit::windows();
    let tk = r"C:\CUDA\v12.2";
    k.toolkit(tk, "12.2");
    k.windows_set(
        &format!(r"{tk}\bin"),
        &format!(r"{tk}\include"),
        &format!(r"{tk}\lib\x64"),
        version,
    );
    k.s.path.insert(0, format!(r"{tk}\bin"));
    k.s.env.insert("CUDA_PATH".into(), tk.into());
    k
}

#[test]
fn zlibwapi_needed_only_by_8_3_to_9_1() {
    for ver in ["8.3.2.44", "8.9.7.29", "9.1.0.70"] {
        let k = windows_with(ver);
        let f = k.expect(FindingId::ZlibwapiMissing);
        assert!(f.why.contains("Could not locate zlibwapi.dll"), "{f:?}");
        let mut k = windows_with(ver);
        k.name_in(r"C:\CUDA\v12.2\bin", "zlibwapi.dll");
        k.absent(FindingId::ZlibwapiMissing);
    }
    for ver in ["8.2.4.15", "9.2.0.82", "7.6.5.32"] {
        windows_with(ver).absent(FindingId::ZlibwapiMissing);
    }
}

#[test]
fn present_dll_with_an_unresolved_import() {
    // dependency-unresolved: cudnn_cnn_infer64_8.dll is on PATH, but cublasLt64_11.dll is nowhere.
    let mut k = Kit::healthy_windows();
    k.file(&format!(r"{}\cudnn_cnn_infer64_8.dll", bin112()))
        .needed = vec!["KERNEL32.dll".into(), "cublasLt64_11.dll".into()];
    k.s.dirs.iter_mut().for_each(|d| {
        d.names
            .retain(|n| !n.eq_ignore_ascii_case("cublasLt64_11.dll"))
    });
    let f = k.expect(FindingId::DependencyUnresolved);
    assert!(
        f.title.contains("cudnn_cnn_infer64_8.dll") && f.title.contains("cublasLt64_11.dll"),
        "{f:?}"
    );
    // A CUDA 12 library missing beside CUDA 11.2 is the build's mismatch
    // (read from the import), one finding with the missing DLL tied to it.
    let mut k = Kit::healthy_windows();
    k.file(&format!(r"{}\cudnn_cnn_infer64_8.dll", bin112()))
        .needed = vec!["KERNEL32.dll".into(), "cublasLt64_12.dll".into()];
    k.absent(FindingId::DependencyUnresolved);
    let f = k.expect(FindingId::CudnnCudaMismatch);
    assert!(
        f.seen[0].contains("imports cublasLt64_12.dll, a library of CUDA 12")
            && f.seen.iter().any(|l| l
                .starts_with("cublasLt64_12.dll, which 1 of its library imports, is not found")),
        "{f:?}"
    );
    // Linux: libz.so.1 not installed.
    let mut k = Kit::healthy_linux();
    k.s.dirs
        .iter_mut()
        .for_each(|d| d.names.retain(|n| n != "libz.so.1"));
    let f = k.expect(FindingId::DependencyUnresolved);
    assert!(
        f.title.contains("libz.so.1") && f.fix.as_deref().unwrap().contains("zlib1g"),
        "{f:?}"
    );
    Kit::healthy_linux().absent(FindingId::DependencyUnresolved);
}

// --- cudnn-only-in-site-packages, soname-link-copied-as-file,
// toolkit-not-writable (docs/breakages.md) ----------------------------------

#[test]
fn cudnn_only_in_site_packages() {
    let mut k = Kit::linux();
    k.toolkit(TK12, "12.4");
    let wheel = "/home/me/.venv/lib/python3.12/site-packages/nvidia/cudnn";
    k.linux_set(
        &format!("{wheel}/lib"),
        &format!("{wheel}/include"),
        "9.1.0",
        false,
    );
    let f = k.expect(FindingId::CudnnOnlyInSitePackages);
    assert!(f.commands[0].contains(&format!("{wheel}/lib")), "{f:?}");
    k.s.ld_library_path.push(format!("{wheel}/lib"));
    k.absent(FindingId::CudnnOnlyInSitePackages);
}

#[test]
fn nothing_installed() {
    let mut k = Kit::linux();
    k.toolkit(TK12, "12.4");
    assert_eq!(k.expect(FindingId::CudnnNotFound).severity, Severity::Error);
    Kit::healthy_linux().absent(FindingId::CudnnNotFound);
}

#[test]
fn the_driver_library_is_the_driver_findings_business() {
    // cuDNN 9's runtime-compiled engines link libcuda.so.1, which the driver installs.
    let mut k = Kit::healthy_linux();
    k.file(&format!(
        "{TK12}/lib64/libcudnn_engines_runtime_compiled.so.9.1.0"
    ))
    .needed = vec!["libcuda.so.1".into(), "libc.so.6".into()];
    let f = k.expect(FindingId::DependencyUnresolved);
    assert!(f.fix.as_deref().unwrap().contains("NVIDIA driver"), "{f:?}");
    k.s.driver = None;
    k.absent(FindingId::DependencyUnresolved);
    k.expect(FindingId::DriverNotFound);
}

#[test]
fn a_32_bit_zlibwapi_found_first_beside_a_64_bit_cudnn() {
    let (zlib32, zlib64) = (r"C:\tools\zlib32", r"C:\tools\zlib64");
    let mut k = windows_with("8.9.7.29");
    for f in
        k.s.files
            .iter_mut()
            .filter(|f| f.path.ends_with("64_8.dll"))
    {
        f.needed.push("zlibwapi.dll".into());
    }
    let put = |k: &mut Kit, dir: &str, machine: &str| {
        k.name_in(dir, "zlibwapi.dll");
        let d = k.s.dirs.iter_mut().find(|d| d.path == dir).unwrap();
        d.machines.insert("zlibwapi.dll".into(), machine.into());
        k.s.path.insert(0, dir.into());
    };
    // Healthy neighbour: a 64-bit zlibwapi.dll on PATH.
    put(&mut k, zlib64, "x86_64");
    k.absent(FindingId::DependencyWrongArchitecture);
    // A 32-bit copy earlier on PATH is the one LoadLibrary takes: error 193.
    put(&mut k, zlib32, "x86");
    let f = k.expect(FindingId::DependencyWrongArchitecture);
    assert!(f.title.starts_with("zlibwapi.dll, which cudnn"), "{f:?}");
    assert!(f.title.contains("is built for x86; cudnn"), "{f:?}");
    assert!(f.why.contains("error 193"), "{f:?}");
    assert!(
        f.seen[1].contains(r"C:\tools\zlib32\zlibwapi.dll (x86)"),
        "{f:?}"
    );
}
