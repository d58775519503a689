//! One test per check: a snapshot that triggers it and one that does not.
//! Windows cases are Windows snapshots as data (the checks never look at the host).

use super::testkit::{Kit, v};
use crate::doctor::finding::{AutoFix, Severity};
use crate::doctor::snapshot::*;

const TK12: &str = "/usr/local/cuda-12.4";
const TK112: &str = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2";

fn bin112() -> String {
    format!(r"{TK112}\bin")
}

#[test]
fn healthy_machines_have_no_findings() {
    for k in [Kit::healthy_linux(), Kit::healthy_windows()] {
        let all = k.run();
        assert!(all.is_empty(), "findings on a healthy setup:\n{}", k.dump());
    }
}

#[test]
fn every_finding_id_is_documented() {
    let doc = include_str!("../mod.rs");
    for id in crate::doctor::FINDING_IDS {
        assert!(
            doc.contains(&format!("| `{id}` |")),
            "{id} missing from the table in doctor/mod.rs"
        );
    }
    let checks: String = [
        include_str!("system.rs"),
        include_str!("files.rs"),
        include_str!("loading.rs"),
        include_str!("windows.rs"),
        include_str!("frameworks.rs"),
    ]
    .concat();
    for id in crate::doctor::FINDING_IDS {
        assert!(
            checks.contains(&format!("\"{id}\"")),
            "{id} is documented but no check emits it"
        );
    }
}

/// Internal reference tags (`cudnn-facts §8`, `§3.4`, field case `F20`,
/// `issue item 7`) in a line of code that is not a comment.
fn internal_tag(line: &str) -> Option<&'static str> {
    let t = line.trim_start();
    if t.starts_with("//") {
        return None;
    }
    for tag in ["§", "cudnn-facts", "field-cases", "issue item"] {
        if line.contains(tag) {
            return Some(tag);
        }
    }
    let b = line.as_bytes();
    (0..b.len().saturating_sub(2))
        .any(|i| {
            b[i] == b'F'
                && b[i + 1].is_ascii_digit()
                && b[i + 2].is_ascii_digit()
                && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
                && b.get(i + 3).is_none_or(|c| !c.is_ascii_alphanumeric())
        })
        .then_some("a field case id (Fnn)")
}

#[test]
fn user_facing_text_cites_public_sources_only() {
    // Every string a finding, a fix report or `verify` prints lives in these
    // files; internal notes may be named in comments only.
    let files = [
        ("system.rs", include_str!("system.rs")),
        ("files.rs", include_str!("files.rs")),
        ("loading.rs", include_str!("loading.rs")),
        ("windows.rs", include_str!("windows.rs")),
        ("frameworks.rs", include_str!("frameworks.rs")),
        ("mod.rs", include_str!("mod.rs")),
        ("../fix.rs", include_str!("../fix.rs")),
        ("../render.rs", include_str!("../render.rs")),
        ("verify/mod.rs", include_str!("../../verify/mod.rs")),
        ("verify/check.rs", include_str!("../../verify/check.rs")),
        ("verify/help.rs", include_str!("../../verify/help.rs")),
        ("verify/text.rs", include_str!("../../verify/text.rs")),
        ("../gather.rs", include_str!("../gather.rs")),
    ];
    let mut bad = Vec::new();
    for (name, text) in files {
        for (i, line) in text.lines().enumerate() {
            if let Some(tag) = internal_tag(line) {
                bad.push(format!("{name}:{}: {tag}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "internal references in user-facing text:\n{}",
        bad.join("\n")
    );
    // And the tag finder itself.
    assert_eq!(internal_tag("x (cudnn-facts §8)"), Some("§"));
    assert!(internal_tag("(F20: the 8.3 archives)").is_some());
    assert!(internal_tag("// F20 in a comment").is_none());
    assert!(internal_tag("\"x64 F200\"").is_none());
}

// --- issue item 1 -----------------------------------------------------------

#[test]
fn os_not_64bit() {
    let mut k = Kit::healthy_windows();
    k.s.os.bits = 32;
    k.s.os.arch = "x86".into();
    let f = k.expect("os-not-64bit");
    assert_eq!(f.severity, Severity::Error);
    assert!(f.why.contains("193"));
    Kit::healthy_windows().absent("os-not-64bit");
}

#[test]
fn wrong_architecture() {
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn_ops.so.9.1.0"))
        .machine = Some("aarch64".into());
    let f = k.expect("wrong-architecture");
    assert!(f.title.contains("aarch64"), "{f:?}");
    Kit::healthy_linux().absent("wrong-architecture");
}

// --- issue item 2 -----------------------------------------------------------

#[test]
fn no_cuda_toolkit() {
    let mut k = Kit::linux();
    k.linux_set("/opt/cudnn/lib", "/opt/cudnn/include", "9.1.0", true);
    assert_eq!(k.expect("no-cuda-toolkit").severity, Severity::Error);
    k.framework(
        "torch",
        "2.4.1+cu121",
        "/venv/lib/python3.11/site-packages",
        None,
    );
    assert_eq!(
        k.expect("no-cuda-toolkit").severity,
        Severity::Warning,
        "pip brings CUDA"
    );
    Kit::healthy_linux().absent("no-cuda-toolkit");
}

#[test]
fn nvcc_belongs_to_another_toolkit_than_cuda_path() {
    let mut k = Kit::healthy_windows();
    let tk121 = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1";
    k.toolkit(tk121, "12.1");
    k.nvcc(&format!(r"{tk121}\bin\nvcc.exe"), "12.1");
    let f = k.expect("nvcc-cuda-path-mismatch");
    assert!(
        f.title.contains("12.1") && f.title.contains("11.2"),
        "{f:?}"
    );
    Kit::healthy_windows().absent("nvcc-cuda-path-mismatch");
}

// --- issue item 3 -----------------------------------------------------------

#[test]
fn driver_older_than_the_toolkit_needs() {
    let mut k = Kit::healthy_linux();
    k.driver("450.51.06", &[]);
    let f = k.expect("driver-too-old");
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.title.contains("550.54.15"),
        "the 12.4 Update 1 row applies: {f:?}"
    );
    k.driver("535.104.05", &[]);
    assert_eq!(
        k.expect("driver-minor-compat-only").severity,
        Severity::Warning
    );
    k.absent("driver-too-old");
    // The reverse is fine: newer drivers run older CUDA.
    let mut k = Kit::healthy_windows();
    k.driver("560.94", &[]);
    k.absent("driver-too-old");
    k.absent("driver-minor-compat-only");
}

#[test]
fn no_driver_is_an_info_only() {
    let mut k = Kit::healthy_linux();
    k.s.driver = None;
    assert_eq!(k.expect("driver-not-found").severity, Severity::Info);
    Kit::healthy_linux().absent("driver-not-found");
}

#[test]
fn gpu_below_the_supported_compute_capability() {
    let mut k = Kit::healthy_linux();
    k.driver("550.54.15", &[("Tesla K80", "3.7")]);
    let f = k.expect("gpu-too-old");
    assert!(f.why.contains("5.0"), "{f:?}");
    Kit::healthy_linux().absent("gpu-too-old");
}

// --- issue item 4, F26 ------------------------------------------------------

#[test]
fn cudnn_build_does_not_fit_the_toolkit() {
    // An 8.x build for 11.2 in a CUDA 8.0 toolkit.
    let mut k = Kit::windows();
    let tk80 = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v8.0";
    k.toolkit(tk80, "8.0");
    k.windows_set(
        &format!(r"{tk80}\bin"),
        &format!(r"{tk80}\include"),
        &format!(r"{tk80}\lib\x64"),
        "8.1.0.77",
    );
    k.s.path.insert(0, format!(r"{tk80}\bin"));
    k.s.deployments.push(DeploymentState {
        toolkit: tk80.into(),
        release: "8.1.0.77_cuda11.2".into(),
        mode: "hardlink".into(),
        extra: vec![],
        files: vec![],
    });
    let f = k.expect("cudnn-cuda-mismatch");
    assert!(f.seen.iter().any(|s| s.contains("11.2")), "{f:?}");
    // Without a record, the published CUDA range still rules it out.
    k.s.deployments.clear();
    k.expect("cudnn-cuda-mismatch");
    // Linux: a library built with CUDA 11.8 inside a 12.4 toolkit.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn.so.9.1.0"))
        .cudart_version = Some(11080);
    k.expect("cudnn-cuda-mismatch");
    // Minor-version compatibility: a 12.9 build fits a 12.4 toolkit.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn.so.9.1.0"))
        .cudart_version = Some(12090);
    k.absent("cudnn-cuda-mismatch");
}

#[test]
fn cudnn_loaded_from_another_cuda_install() {
    // F26: LD_LIBRARY_PATH brings a CUDA 11 build ahead of the 12.4 toolkit's.
    let mut k = Kit::healthy_linux();
    k.linux_set(
        "/opt/cuda-11.8/lib64",
        "/opt/cuda-11.8/include",
        "9.0.0",
        true,
    );
    k.file("/opt/cuda-11.8/lib64/libcudnn.so.9.0.0")
        .cudart_version = Some(11080);
    k.s.ld_library_path.insert(0, "/opt/cuda-11.8/lib64".into());
    let f = k.expect("cudnn-cuda-mismatch");
    assert!(
        f.title.contains("CUDA 11.8") && f.title.contains("12.4"),
        "{f:?}"
    );
}

// --- issue item 5 -----------------------------------------------------------

#[test]
fn missing_library_of_the_set() {
    let mut k = Kit::healthy_windows();
    k.remove("cudnn_cnn_infer64_8.dll");
    let f = k.expect("missing-library");
    assert!(f.title.contains("cudnn_cnn_infer64_8.dll"), "{f:?}");
    assert!(f.why.contains("Error code 126"), "{f:?}");
    let mut k = Kit::healthy_linux();
    k.remove("libcudnn_graph.so.9.1.0")
        .remove("libcudnn_graph.so.9");
    let f = k.expect("missing-library");
    assert!(
        f.why
            .contains("libcudnn_graph.so.9: cannot open shared object file"),
        "{f:?}"
    );
    // The JIT subset (cudnn, graph, runtime-compiled engines) is complete.
    let mut k = Kit::healthy_linux();
    for st in ["adv", "cnn", "ops", "heuristic", "engines_precompiled"] {
        k.remove(&format!("libcudnn_{st}.so.9.1.0"))
            .remove(&format!("libcudnn_{st}.so.9"));
    }
    k.absent("missing-library");
}

#[test]
fn missing_header() {
    let mut k = Kit::healthy_windows();
    k.remove(r"\cudnn.h");
    let f = k.expect("missing-header");
    assert!(f.why.contains("C1083"), "{f:?}");
    let mut k = Kit::healthy_linux();
    k.remove("/cudnn_version.h");
    let f = k.expect("missing-header");
    assert!(f.why.contains("cudnn_version.h: No such file"), "{f:?}");
    Kit::healthy_linux().absent("missing-header");
}

#[test]
fn missing_link_library() {
    let mut k = Kit::healthy_windows();
    k.remove(r"\cudnn.lib");
    assert!(k.expect("missing-link-library").why.contains("LNK1181"));
    let mut k = Kit::healthy_linux();
    k.remove("/libcudnn.so");
    let f = k.expect("missing-link-library");
    assert!(f.why.contains("cannot find -lcudnn"), "{f:?}");
    assert!(f.commands[0].starts_with("ln -s libcudnn.so.9"), "{f:?}");
    Kit::healthy_windows().absent("missing-link-library");
}

// --- issue item 6, F20 ------------------------------------------------------

#[test]
fn import_libraries_in_lib_instead_of_lib_x64() {
    let mut k = Kit::healthy_windows();
    k.remove(r"\lib\x64\cudnn.lib")
        .remove(r"\lib\x64\cudnn64_8.lib");
    k.file(&format!(r"{TK112}\lib\cudnn.lib"));
    k.file(&format!(r"{TK112}\lib\cudnn64_8.lib"));
    let f = k.expect("lib-not-in-x64");
    assert!(f.commands[0].starts_with("move "), "{f:?}");
    k.absent("missing-link-library");
    k.absent("file-in-wrong-folder");
    Kit::healthy_windows().absent("lib-not-in-x64");
}

#[test]
fn a_windows_layout_toolkit_is_checked_as_windows_on_linux() {
    // A Windows toolkit tree (a copy, a mounted drive) examined on Linux: its
    // layout, not the host, decides the file set and the folders.
    let mut k = Kit::linux();
    let root = "/mnt/c/CUDA/v11.2";
    k.s.toolkits.push(ToolkitInfo {
        root: root.into(),
        cuda: Some(v("11.2.2")),
        layout: ToolkitLayout::Windows,
        found_by: "--cuda-root".into(),
        writable: None,
        unfinished_change: None,
    });
    let mut stems = vec!["cudnn"];
    stems.extend(crate::names::sublib_stems(8));
    for st in stems {
        let f = k.file(&format!("{root}/bin/{st}64_8.dll"));
        f.machine = Some("x86_64".into());
        f.file_version = Some(v("8.1.0.77"));
    }
    k.header(&format!("{root}/include/cudnn_version.h"), "8.1.0");
    k.file(&format!("{root}/include/cudnn.h"));
    k.file(&format!("{root}/lib/x64/cudnn.lib"));
    k.file(&format!("{root}/lib/x64/cudnn64_8.lib"));
    for id in [
        "missing-library",
        "missing-header",
        "missing-link-library",
        "lib-not-in-x64",
        "file-in-wrong-folder",
    ] {
        k.absent(id);
    }
    // A stray import library in `lib`: the Windows mistake, found on Linux too.
    k.file(&format!("{root}/lib/cudnn.lib"));
    let f = k.expect("lib-not-in-x64");
    assert_eq!(
        f.title,
        format!("cuDNN import libraries are in {root}/lib, not {root}/lib/x64"),
        "paths keep the host's spelling: {f:?}"
    );
    assert_eq!(
        f.commands,
        vec![format!("mv {root}/lib/cudnn*.lib {root}/lib/x64/")]
    );
    k.absent("file-in-wrong-folder");
    // A missing DLL is named as the DLL, in bin.
    k.remove("/bin/cudnn_cnn_infer64_8.dll");
    let f = k.expect("missing-library");
    assert!(
        f.title.contains("cudnn_cnn_infer64_8.dll") && !f.title.contains(".so"),
        "{f:?}"
    );
    assert!(
        f.seen[0].starts_with(&format!("missing from {root}/bin:")),
        "{f:?}"
    );
}

#[test]
fn files_in_the_wrong_toolkit_folder() {
    let mut k = Kit::healthy_windows();
    k.file(&format!(r"{TK112}\lib\x64\cudnn_ops_train64_8.dll"));
    let f = k.expect("file-in-wrong-folder");
    assert!(f.seen[0].ends_with(r"v11.2\bin"), "{f:?}");
    // F20: the 8.3+ archive's `lib` copied as the toolkit's `lib`.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib/libcudnn_adv.so.9"));
    k.expect("file-in-wrong-folder");
    Kit::healthy_linux().absent("file-in-wrong-folder");
}

// --- issue item 7, F01, F02 -------------------------------------------------

#[test]
fn toolkit_bin_not_on_path() {
    let mut k = Kit::healthy_windows();
    k.s.path.retain(|p| !p.ends_with(r"v11.2\bin"));
    k.s.registry = None;
    let f = k.expect("toolkit-not-on-loader-path");
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.auto_fix, Some(AutoFix::AddToUserPath { dir: bin112() }));
    let mut k = Kit::healthy_linux();
    k.s.ld_library_path.clear();
    let f = k.expect("toolkit-not-on-loader-path");
    assert!(
        f.commands[0].starts_with("export LD_LIBRARY_PATH=/usr/local/cuda-12.4/lib64"),
        "{f:?}"
    );
    // Registered with ldconfig instead: fine.
    k.s.ld_cache.push(LdCacheEntry {
        name: "libcudnn.so.9".into(),
        path: format!("{TK12}/lib64/libcudnn.so.9"),
    });
    k.absent("toolkit-not-on-loader-path");
}

#[test]
fn path_points_at_the_archive_root() {
    // F01: PATH holds the folder the zip was unpacked into; the DLL is in cuda\bin.
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
    let f = k.expect("path-points-at-archive-root");
    assert_eq!(f.severity, Severity::Error);
    assert!(f.title.contains(r"cuda\bin"), "{f:?}");
    k.s.path.pop();
    k.s.path
        .push(r"C:\tools\cudnn-11.2-windows-x64-v8.1.0.77\cuda\bin".into());
    k.absent("path-points-at-archive-root");
}

#[test]
fn installer_puts_bin_on_path_but_dlls_are_in_a_cuda_subfolder() {
    // F02: cuDNN 9 installer, DLLs in bin\12.8 and bin\11.8, toolkit CUDA 12.8.
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
    let f = k.expect("installer-subfolder-not-on-path");
    assert_eq!(
        f.auto_fix,
        Some(AutoFix::AddToUserPath {
            dir: format!(r"{base}\bin\12.8")
        }),
        "{f:?}"
    );
    k.absent("path-points-at-archive-root");
    k.s.path.push(format!(r"{base}\bin\12.8"));
    k.absent("installer-subfolder-not-on-path");
}

// --- issue item 8 -----------------------------------------------------------

#[test]
fn cuda_path_missing_or_wrong() {
    let mut k = Kit::healthy_windows();
    k.s.env.remove("CUDA_PATH");
    assert_eq!(k.expect("cuda-path-missing").severity, Severity::Warning);
    let mut k = Kit::healthy_windows();
    k.s.env.insert("CUDA_PATH".into(), r"C:\nowhere".into());
    k.expect("cuda-path-invalid");
    // CUDA_PATH_V11_2 pointing at a 12.1 toolkit.
    let mut k = Kit::healthy_windows();
    let tk121 = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1";
    k.toolkit(tk121, "12.1");
    k.s.env.insert("CUDA_PATH_V11_2".into(), tk121.into());
    assert_eq!(
        k.expect("cuda-path-other-version").severity,
        Severity::Error
    );
    // CUDA_PATH at a toolkit without cuDNN while cuDNN is in another.
    let mut k = Kit::healthy_windows();
    k.toolkit(tk121, "12.1");
    k.s.env.insert("CUDA_PATH".into(), tk121.into());
    let f = k.expect("cuda-path-other-version");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.seen[1].contains("v11.2"), "{f:?}");
    let k = Kit::healthy_windows();
    for id in [
        "cuda-path-missing",
        "cuda-path-invalid",
        "cuda-path-other-version",
    ] {
        k.absent(id);
    }
}

// --- issue item 9, F06, F12, F13 --------------------------------------------

#[test]
fn two_copies_on_path_the_first_older() {
    // F06: two cudnn64_5.dll on PATH; the first is older.
    let mut k = Kit::windows();
    k.toolkit(r"C:\CUDA\v8.0", "8.0");
    let a = k.file(r"C:\old\cudnn64_5.dll");
    a.file_version = Some(v("5.0.5"));
    let b = k.file(r"C:\new\cudnn64_5.dll");
    b.file_version = Some(v("5.1.10"));
    k.s.path
        .extend([r"C:\old".to_string(), r"C:\new".to_string()]);
    let f = k.expect("multiple-cudnn-copies");
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        f.seen[0].starts_with(r"1. C:\old\cudnn64_5.dll") && f.seen[0].ends_with("← loaded"),
        "{f:?}"
    );
    assert!(f.seen[1].contains("5.1.10"), "{f:?}");
    Kit::healthy_windows().absent("multiple-cudnn-copies");
}

#[test]
fn ld_library_path_lists_an_old_copy_first() {
    // F12: LD_LIBRARY_PATH holds cuDNN 8.0.3 before the framework's own 8.3.2.
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
    let f = k.expect("multiple-cudnn-copies");
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
    // F13: a conda env's lib/ (8.1) searched before the pip wheel (8.6) TensorFlow 2.12 wants.
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
        f.origin = Origin::Conda;
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
    let f = k.expect("multiple-cudnn-copies");
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
    // F14: two complete cuDNN 8 sets visible: the wheel folder and a toolkit lib64.
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
    assert_eq!(k.expect("sub-libraries-mixed").severity, Severity::Warning);
    // A sub-library missing from the first folder comes from the second: an error.
    k.s.ld_library_path.push(format!("{wheel}/lib"));
    k.remove("/lib64/libcudnn_cnn_infer.so.8")
        .remove("/lib64/libcudnn_cnn_infer.so.8.7.0");
    let all = k.all("sub-libraries-mixed");
    assert!(
        all.iter().any(|f| f.severity == Severity::Error),
        "{}",
        k.dump()
    );
    // One folder with two releases' files (a partial copy over an older one).
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn_ops.so.9.0.0"));
    k.expect("sub-libraries-mixed");
    Kit::healthy_linux().absent("sub-libraries-mixed");
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
        release: "9.12.0.46_cuda12".into(),
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
    let f = k.expect("sub-libraries-mixed");
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
    let c = k.expect("multiple-cudnn-copies");
    assert_eq!(c.severity, Severity::Warning);
    assert!(!c.why.contains("same version"), "{c:?}");
    assert!(
        c.seen[0].contains("9.12.0.46 (store receipt; reports 9.27.0 when loaded"),
        "{c:?}"
    );
    assert!(c.seen[1].contains("9.27.0 (loaded library)"), "{c:?}");
    // What a program gets is summarised by the copy's own version.
    let act = super::active_copies(&k.s);
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
    let f = k.expect("sub-libraries-mixed");
    assert_eq!(f.severity, Severity::Error, "{f:?}");
    assert!(f.seen[0].contains("its own version is unknown"), "{f:?}");
    assert!(
        f.seen[1].contains("found via LD_LIBRARY_PATH entry 2"),
        "{f:?}"
    );
    let c = k.expect("multiple-cudnn-copies");
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
    let c = k.expect("multiple-cudnn-copies");
    assert_eq!(c.severity, Severity::Info, "{}", k.dump());
    assert!(
        k.all("sub-libraries-mixed")
            .iter()
            .all(|f| f.severity != Severity::Error),
        "{}",
        k.dump()
    );
}

// --- issue item 10, F24 -----------------------------------------------------

#[test]
fn header_and_library_disagree() {
    // F24: the header says 7.x, the library is 5.1 (partial copy).
    let mut k = Kit::linux();
    k.toolkit("/usr/local/cuda-8.0", "8.0");
    k.header("/usr/local/cuda-8.0/include/cudnn.h", "7.0.5");
    k.file("/usr/local/cuda-8.0/lib64/libcudnn.so.5.1.10");
    k.link(
        "/usr/local/cuda-8.0/lib64/libcudnn.so.5",
        "libcudnn.so.5.1.10",
    );
    k.s.ld_library_path = vec!["/usr/local/cuda-8.0/lib64".into()];
    let f = k.expect("header-library-mismatch");
    assert!(f.seen[0].contains("cuDNN 5"), "{f:?}");
    // #10: the headers say 9.12.0, the loaded library 9.1.0.
    let mut k = Kit::healthy_linux();
    k.header(&format!("{TK12}/include/cudnn_version.h"), "9.12.0");
    let f = k.expect("header-library-mismatch");
    assert!(f.seen[0].contains("loaded library"), "{f:?}");
    Kit::healthy_linux().absent("header-library-mismatch");
}

// --- issue item 11, F08 -----------------------------------------------------

/// TensorFlow 2.5 (built with cuDNN 8.1, CUDA 11.2) beside a CUDA toolkit of
/// version `cuda` whose bin holds cuDNN 8.0.5.39, first on PATH.
fn tensorflow_25_on_cudnn_805(cuda: &str) -> Kit {
    let mut k = Kit::windows();
    k.toolkit(TK112, cuda);
    k.windows_set(
        &bin112(),
        &format!(r"{TK112}\include"),
        &format!(r"{TK112}\lib\x64"),
        "8.0.5.39",
    );
    k.s.path.insert(0, bin112());
    k.framework(
        "tensorflow",
        "2.5.0",
        r"C:\Python39\Lib\site-packages",
        None,
    );
    k
}

#[test]
fn framework_wants_another_cudnn() {
    // TensorFlow 2.5 wants 8.1 with CUDA 11.2; 8.0.5 is what loads.
    let k = tensorflow_25_on_cudnn_805("11.2");
    let f = k.expect("framework-cudnn-mismatch");
    assert!(
        f.title.contains("8.1") && f.title.contains("8.0.5"),
        "{f:?}"
    );
    let mut k = Kit::healthy_windows();
    k.framework(
        "tensorflow",
        "2.5.0",
        r"C:\Python39\Lib\site-packages",
        None,
    );
    k.absent("framework-cudnn-mismatch");
    // PyTorch's exact wheel pin, moved by another install.
    let sp = "/venv/lib/python3.11/site-packages";
    let mut k = Kit::healthy_linux();
    k.framework(
        "torch",
        "2.4.1+cu121",
        sp,
        Some("nvidia-cudnn-cu12==9.1.0.70"),
    );
    k.framework("nvidia-cudnn-cu12", "9.3.0.75", sp, None);
    let f = k.expect("framework-cudnn-mismatch");
    assert!(
        f.commands[0].contains("nvidia-cudnn-cu12==9.1.0.70"),
        "{f:?}"
    );
    k.s.frameworks[1].version = "9.1.0.70".into();
    k.absent("framework-cudnn-mismatch");
}

#[test]
fn framework_built_for_another_cuda_major() {
    let mut k = Kit::healthy_linux();
    k.framework(
        "tensorflow",
        "2.10.0",
        "/usr/lib/python3/dist-packages",
        None,
    );
    let f = k.expect("framework-cuda-mismatch");
    assert!(f.title.contains("11.2"), "{f:?}");
    let mut k = Kit::healthy_linux();
    k.framework(
        "tensorflow",
        "2.19.0",
        "/usr/lib/python3/dist-packages",
        None,
    );
    k.absent("framework-cuda-mismatch");
}

#[test]
fn pinned_major_not_installed() {
    // F08: the project needs cudnn64_8.dll; only cuDNN 9 is installed.
    let mut k = Kit::windows();
    let tk = r"C:\CUDA\v12.4";
    k.toolkit(tk, "12.4");
    k.windows_set(
        &format!(r"{tk}\bin"),
        &format!(r"{tk}\include"),
        &format!(r"{tk}\lib\x64"),
        "9.1.0.70",
    );
    k.s.path.insert(0, format!(r"{tk}\bin"));
    k.s.pin = Some(PinInfo {
        spec: "8.9.7.29_cuda12".into(),
        source: r"C:\proj\.cudnn-version".into(),
    });
    let f = k.expect("cudnn-major-mismatch");
    assert!(
        f.title.contains("cudnn64_8.dll") && f.why.contains("ABI"),
        "{f:?}"
    );
    k.s.pin = Some(PinInfo {
        spec: "9".into(),
        source: "CUDNNM_VERSION".into(),
    });
    k.absent("cudnn-major-mismatch");
}

// --- issue item 12, F10 -----------------------------------------------------

#[test]
fn visual_cpp_runtime_missing() {
    let mut k = Kit::healthy_windows();
    k.s.dirs.iter_mut().for_each(|d| {
        d.names
            .retain(|n| n != "vcruntime140_1.dll" && n != "msvcp140_1.dll")
    });
    let f = k.expect("vc-runtime-missing");
    assert!(
        f.title.contains("vcruntime140_1.dll") && f.why.contains("not a cuDNN problem"),
        "{f:?}"
    );
    Kit::healthy_windows().absent("vc-runtime-missing");
}

#[test]
fn universal_c_runtime_missing_on_windows_7() {
    let mut k = Kit::healthy_windows();
    k.s.os.version = Some("6.1.7601".into());
    k.s.dirs
        .iter_mut()
        .for_each(|d| d.names.retain(|n| n != "ucrtbase.dll"));
    let f = k.expect("ucrt-missing");
    assert!(f.fix.as_deref().unwrap().contains("KB2999226"), "{f:?}");
    // The cuDNN DLLs import the UCRT: on Windows 7 that import is unresolved too.
    k.expect("dependency-unresolved");
    k.name_in(r"C:\Windows\System32", "api-ms-win-crt-runtime-l1-1-0.dll");
    k.absent("ucrt-missing");
    let mut k = Kit::healthy_windows();
    k.s.dirs
        .iter_mut()
        .for_each(|d| d.names.retain(|n| n != "ucrtbase.dll"));
    k.absent("ucrt-missing");
}

// --- issue item 13 ----------------------------------------------------------

#[test]
fn registry_path_changed_after_the_process_started() {
    let mut k = Kit::healthy_windows();
    k.s.path.retain(|p| !p.ends_with(r"v11.2\bin"));
    let f = k.expect("process-path-stale");
    assert!(f.title.contains("machine"), "{f:?}");
    Kit::healthy_windows().absent("process-path-stale");
}

#[test]
fn user_and_machine_path_lead_to_different_copies() {
    let mut k = Kit::healthy_windows();
    let old = r"C:\cudnn7\cuda\bin";
    k.file(&format!(r"{old}\cudnn64_7.dll")).file_version = Some(v("7.6.5"));
    k.s.registry = Some(RegistryPaths {
        user: Some(r"%CUDA_PATH%\bin".to_string()),
        machine: Some(format!(r"{old};C:\Windows\System32")),
    });
    k.s.path.push(old.into());
    let f = k.expect("user-machine-path-differ");
    assert_eq!(f.severity, Severity::Warning);
    // User-only: a note.
    let mut k = Kit::healthy_windows();
    k.s.registry = Some(RegistryPaths {
        user: Some(bin112()),
        machine: Some(r"C:\Windows\System32".into()),
    });
    assert_eq!(
        k.expect("user-machine-path-differ").severity,
        Severity::Info
    );
    Kit::healthy_windows().absent("user-machine-path-differ");
}

#[test]
fn path_set_for_this_process_only() {
    let mut k = Kit::healthy_windows();
    k.s.registry = Some(RegistryPaths {
        user: None,
        machine: Some(r"C:\Windows\System32".into()),
    });
    assert_eq!(k.expect("path-not-persistent").severity, Severity::Info);
    Kit::healthy_windows().absent("path-not-persistent");
}

// --- F03, F04 ---------------------------------------------------------------

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
        let f = k.expect("zlibwapi-missing");
        assert!(f.why.contains("Could not locate zlibwapi.dll"), "{f:?}");
        let mut k = windows_with(ver);
        k.name_in(r"C:\CUDA\v12.2\bin", "zlibwapi.dll");
        k.absent("zlibwapi-missing");
    }
    for ver in ["8.2.4.15", "9.2.0.82", "7.6.5.32"] {
        windows_with(ver).absent("zlibwapi-missing");
    }
}

#[test]
fn present_dll_with_an_unresolved_import() {
    // F04: cudnn_cnn_infer64_8.dll is on PATH, but cublasLt64_11.dll is nowhere.
    let mut k = Kit::healthy_windows();
    k.file(&format!(r"{}\cudnn_cnn_infer64_8.dll", bin112()))
        .needed = vec!["KERNEL32.dll".into(), "cublasLt64_12.dll".into()];
    let f = k.expect("dependency-unresolved");
    assert!(
        f.title.contains("cudnn_cnn_infer64_8.dll") && f.title.contains("cublasLt64_12.dll"),
        "{f:?}"
    );
    // Linux: libz.so.1 not installed.
    let mut k = Kit::healthy_linux();
    k.s.dirs
        .iter_mut()
        .for_each(|d| d.names.retain(|n| n != "libz.so.1"));
    let f = k.expect("dependency-unresolved");
    assert!(
        f.title.contains("libz.so.1") && f.fix.as_deref().unwrap().contains("zlib1g"),
        "{f:?}"
    );
    Kit::healthy_linux().absent("dependency-unresolved");
}

#[test]
fn library_that_does_not_load() {
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn.so.9.1.0"))
        .load_error = Some("libz.so.1: cannot open shared object file".into());
    let f = k.expect("library-load-failed");
    assert!(f.seen[1].contains("libz.so.1"), "{f:?}");
    Kit::healthy_linux().absent("library-load-failed");
}

// --- F16, F19, F21 ----------------------------------------------------------

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
    let f = k.expect("cudnn-only-in-site-packages");
    assert!(f.commands[0].contains(&format!("{wheel}/lib")), "{f:?}");
    k.s.ld_library_path.push(format!("{wheel}/lib"));
    k.absent("cudnn-only-in-site-packages");
}

#[test]
fn soname_chain_broken_by_a_copy() {
    // F19: libcudnn.so.9 is a regular file where a link was expected.
    let mut k = Kit::healthy_linux();
    let f = k.file(&format!("{TK12}/lib64/libcudnn.so.9"));
    f.size = 1000;
    let f = k.expect("broken-soname-chain");
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        f.auto_fix,
        Some(AutoFix::RelinkSoname {
            dir: format!("{TK12}/lib64"),
            link: "libcudnn.so.9".into(),
            target: "libcudnn.so.9.1.0".into()
        })
    );
    // The development link copied: a warning.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn.so"));
    k.file(&format!("{TK12}/lib64/libcudnn.so.9")).size = 1000;
    assert!(
        k.all("broken-soname-chain")
            .iter()
            .any(|f| f.severity == Severity::Warning)
    );
    // A dangling link.
    let mut k = Kit::healthy_linux();
    k.file(&format!("{TK12}/lib64/libcudnn_adv.so.9")).dangling = true;
    k.s.files.last_mut().unwrap().link_target = Some("libcudnn_adv.so.9.0.0".into());
    k.expect("broken-soname-chain");
    // Wheels hold only libX.so.M files: no chain expected.
    let mut k = Kit::linux();
    k.linux_set(
        "/w/nvidia/cudnn/lib",
        "/w/nvidia/cudnn/include",
        "9.1.0",
        false,
    );
    k.absent("broken-soname-chain");
    Kit::healthy_linux().absent("broken-soname-chain");
}

#[test]
fn toolkit_needs_elevated_rights() {
    let mut k = Kit::healthy_linux();
    k.s.toolkits[0].writable = Some(false);
    let f = k.expect("toolkit-not-writable");
    assert_eq!(f.severity, Severity::Info);
    assert!(
        f.commands.iter().any(|c| c.contains("cudnnm exec")),
        "{f:?}"
    );
    Kit::healthy_linux().absent("toolkit-not-writable");
}

#[test]
fn another_homes_unfinished_change_is_an_error_naming_the_command_that_finishes_it() {
    let mut k = Kit::healthy_linux();
    let finish = "cudnnm --home /home/b/.cudnnm current --cuda-root /usr/local/cuda-12.4";
    k.s.toolkits[0].unfinished_change = Some(crate::doctor::snapshot::UnfinishedChange {
        home: "/home/b/.cudnnm".into(),
        backup: 3,
        action: "use 9.27.0.42_cuda12".into(),
        finish: finish.into(),
        running: false,
    });
    let f = k.expect("toolkit-change-unfinished");
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.seen[0].contains("`use 9.27.0.42_cuda12` (backup 3 of cudnnm home /home/b/.cudnnm)"),
        "{f:?}"
    );
    assert_eq!(f.commands, vec![finish.to_string()]);
    // While the other process still holds the toolkit lock it is running,
    // not interrupted: a warning to wait, and no command to run.
    k.s.toolkits[0].unfinished_change.as_mut().unwrap().running = true;
    let f = k.expect("toolkit-change-unfinished");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("is being changed right now"), "{f:?}");
    assert!(f.commands.is_empty(), "{f:?}");
    Kit::healthy_linux().absent("toolkit-change-unfinished");
}

#[test]
fn nothing_installed() {
    let mut k = Kit::linux();
    k.toolkit(TK12, "12.4");
    assert_eq!(k.expect("cudnn-not-found").severity, Severity::Error);
    Kit::healthy_linux().absent("cudnn-not-found");
}

#[test]
fn deployed_files_changed() {
    let mut k = Kit::healthy_linux();
    let placed = |path: &str, link: Option<&str>, state: FileState| PlacedState {
        path: format!("{TK12}/{path}"),
        from: path.replace("lib64", "lib"),
        expected_link: link.map(str::to_owned),
        expected_size: None,
        restored: None,
        state,
        store_file: false,
    };
    k.s.deployments.push(DeploymentState {
        toolkit: TK12.into(),
        release: "9.1.0.70_cuda12".into(),
        mode: "symlink".into(),
        extra: vec![],
        files: vec![
            placed(
                "lib64/libcudnn.so.9",
                Some("libcudnn.so.9.1.0"),
                FileState::Link {
                    target: "libcudnn.so.9.1.0".into(),
                },
            ),
            placed(
                "include/cudnn.h",
                Some("/h/store/cudnn.h"),
                FileState::Link {
                    target: "/h/store/cudnn.h".into(),
                },
            ),
        ],
    });
    k.absent("deployment-drift");
    // A stale copy beside the deployment (say in targets/x86_64-linux/lib)
    // is drift too, fixed by deploying again (which backs it up).
    let stale = format!("{TK12}/targets/x86_64-linux/lib/libcudnn_graph.so.9");
    k.s.deployments[0].extra = vec![stale.clone()];
    let f = k.expect("deployment-drift");
    assert!(
        f.title.contains("1 cuDNN file(s) in")
            && f.title
                .contains("were not placed by its deployment of 9.1.0.70_cuda12"),
        "{f:?}"
    );
    assert_eq!(
        f.seen,
        vec![format!(
            "{stale}: a cuDNN file the deployment did not place"
        )]
    );
    assert!(f.auto_fix.is_some(), "{f:?}");
    k.s.deployments[0].extra.clear();
    k.s.deployments[0].files[0].state = FileState::File { size: 1000 };
    k.s.deployments[0].files[1].state = FileState::Missing;
    let f = k.expect("deployment-drift");
    assert_eq!(f.seen.len(), 2);
    assert_eq!(
        f.auto_fix,
        Some(AutoFix::Redeploy {
            toolkit: TK12.into(),
            release: "9.1.0.70_cuda12".into()
        })
    );
    // While another home's change there is unfinished, `use` would refuse:
    // the redeploy is held back, not attempted.
    let tk = k.s.toolkits.iter_mut().find(|t| t.root == TK12).unwrap();
    tk.unfinished_change = Some(crate::doctor::snapshot::UnfinishedChange {
        home: "/home/b/.cudnnm".into(),
        backup: 2,
        action: "use 9.27.0.42_cuda12".into(),
        finish: "cudnnm --home /home/b/.cudnnm current".into(),
        running: false,
    });
    let f = k.expect("deployment-drift");
    assert_eq!(f.auto_fix, None);
    assert!(
        f.held_back
            .as_deref()
            .is_some_and(|h| h.contains("unfinished change from another cudnnm home")),
        "{f:?}"
    );
}

#[test]
fn an_edit_through_a_hardlink_is_the_store_release_not_drift() {
    let mut k = Kit::healthy_linux();
    k.s.deployments.push(DeploymentState {
        toolkit: TK12.into(),
        release: "9.1.0.70_cuda12".into(),
        mode: "hardlink".into(),
        extra: vec![],
        files: vec![PlacedState {
            path: format!("{TK12}/include/cudnn_version.h"),
            from: "include/cudnn_version.h".into(),
            expected_link: None,
            expected_size: Some(286),
            restored: None,
            state: FileState::File { size: 287 },
            store_file: true,
        }],
    });
    k.s.store_changed
        .push(crate::doctor::snapshot::ChangedRelease {
            release: "9.1.0.70_cuda12".into(),
            dir: "/h/store/cuda-12/9.1.0.70".into(),
            files: vec!["include/cudnn_version.h: 287 bytes, expected 286".into()],
            reinstall: "pip:nvidia-cudnn-jit-cu12==9.1.0.70".into(),
            reinstall_is_file: false,
        });
    k.absent("deployment-drift");
    let f = k.expect("store-release-damaged");
    assert_eq!(f.auto_fix, None);
    assert_eq!(
        f.seen,
        vec![
            "/h/store/cuda-12/9.1.0.70: include/cudnn_version.h: 287 bytes, expected 286"
                .to_string(),
            format!("linked from {TK12} (hardlink deployment): the change shows there too"),
        ]
    );
    assert_eq!(
        f.commands,
        vec![
            format!("cudnnm rollback --cuda-root {TK12}"),
            "cudnnm install pip:nvidia-cudnn-jit-cu12==9.1.0.70 --force".to_string(),
            format!("cudnnm use 9.1.0.70_cuda12 --cuda-root {TK12} --mode hardlink"),
        ]
    );
    // The same size change in a copy (not the store's file) is drift.
    k.s.deployments[0].files[0].store_file = false;
    k.s.store_changed.clear();
    let f = k.expect("deployment-drift");
    assert_eq!(f.severity, Severity::Error);
    assert!(f.auto_fix.is_some());
    // A toolkit whose own files all say another release than the record
    // (another home deployed 9.1.0 over this home's 9.27.0.42): no redeploy.
    k.s.deployments[0].release = "9.27.0.42_cuda12".into();
    let f = k.expect("deployment-drift");
    assert_eq!(
        f.title,
        format!("{TK12} now holds cuDNN 9.1.0 (not this home's record of 9.27.0.42_cuda12)")
    );
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.auto_fix, None);
    assert!(
        f.held_back
            .as_deref()
            .is_some_and(|h| h.contains("redeploying would undo that change")),
        "{f:?}"
    );
}

#[test]
fn a_change_a_rollback_restored_is_a_note_not_drift() {
    // `use` (copy), edit cudnn.h, `use` another, `rollback`: the record holds
    // the edit (restored from backup 2), which is what is there.
    let mut k = Kit::healthy_linux();
    k.s.deployments.push(DeploymentState {
        toolkit: TK12.into(),
        release: "9.1.0.70_cuda12".into(),
        mode: "copy".into(),
        extra: vec![],
        files: vec![PlacedState {
            path: format!("{TK12}/include/cudnn.h"),
            from: "backup 2: include/cudnn.h".into(),
            expected_link: None,
            expected_size: Some(3119),
            restored: Some("restored by rollback from backup 2".into()),
            state: FileState::File { size: 3119 },
            store_file: false,
        }],
    });
    let f = k.expect("deployment-drift");
    assert_eq!(f.severity, Severity::Info, "{f:?}");
    assert!(
        f.title.contains("not release 9.1.0.70_cuda12's copy"),
        "{f:?}"
    );
    assert_eq!(f.auto_fix, None, "--fix must not replace the user's change");
    assert_eq!(
        f.commands,
        vec![format!(
            "cudnnm use 9.1.0.70_cuda12 --cuda-root {TK12} --mode copy"
        )]
    );
    // Changed since the rollback: drift again, an error.
    k.s.deployments[0].files[0].state = FileState::File { size: 10 };
    assert_eq!(k.expect("deployment-drift").severity, Severity::Error);
}

#[test]
fn the_driver_library_is_the_driver_findings_business() {
    // cuDNN 9's runtime-compiled engines link libcuda.so.1, which the driver installs.
    let mut k = Kit::healthy_linux();
    k.file(&format!(
        "{TK12}/lib64/libcudnn_engines_runtime_compiled.so.9.1.0"
    ))
    .needed = vec!["libcuda.so.1".into(), "libc.so.6".into()];
    let f = k.expect("dependency-unresolved");
    assert!(f.fix.as_deref().unwrap().contains("NVIDIA driver"), "{f:?}");
    k.s.driver = None;
    k.absent("dependency-unresolved");
    k.expect("driver-not-found");
}

#[test]
fn pytorch_rows_follow_the_cuda_of_the_wheel_and_bundled_copies_are_its_own() {
    let row = |cuda: &str, cudnn: &str| crate::catalog::FrameworkBuild {
        framework: "pytorch".into(),
        first: v("2.5"),
        last: v("2.5"),
        os: None,
        cuda: v(cuda),
        cudnn: v(cudnn),
    };
    // torch 2.5.1+cu124 from a conda-style environment (no wheel pin), cuDNN 8 loaded: 9 is needed.
    let mut k = Kit::healthy_linux();
    k.t.frameworks = vec![row("11.8", "9.1.0.70"), row("12.4", "9.1.0.70")];
    k.remove("libcudnn.so.9.1.0").remove("/libcudnn.so.9");
    k.linux_set(
        &format!("{TK12}/lib64"),
        &format!("{TK12}/include"),
        "8.9.7",
        true,
    );
    k.framework(
        "torch",
        "2.5.1+cu124",
        "/opt/conda/lib/python3.11/site-packages",
        None,
    );
    let f = k.expect("cudnn-major-mismatch");
    assert!(f.title.contains("PyTorch 2.5.1+cu124"), "{f:?}");
    // Windows: torch\lib carries cudnn64_9.dll; the loader path's cuDNN 8 is not its business.
    let mut k = Kit::healthy_windows();
    k.t.frameworks = vec![row("12.4", "9.1.0.70")];
    let sp = r"C:\Python311\Lib\site-packages";
    k.framework("torch", "2.5.1+cu124", sp, None);
    k.file(&format!(r"{sp}\torch\lib\cudnn64_9.dll"))
        .file_version = Some(v("9.1.0.70"));
    k.absent("cudnn-major-mismatch");
    k.absent("framework-cudnn-mismatch");
}

// --- the store -------------------------------------------------------------

#[test]
fn store_release_damaged() {
    let mut k = Kit::healthy_linux();
    k.absent("store-release-damaged");
    k.s.store_damaged.push(DamagedRelease {
        dir: "/h/store/cuda-12/9.12.0.46".into(),
        release: Some("9.12.0.46_cuda12".into()),
        error: "could not read the receipt '/h/store/cuda-12/9.12.0.46/receipt.toml': expected `=`"
            .into(),
    });
    k.s.deployments.push(DeploymentState {
        toolkit: TK12.into(),
        release: "9.12.0.46_cuda12".into(),
        mode: "symlink".into(),
        extra: vec![],
        files: vec![],
    });
    let f = k.expect("store-release-damaged");
    assert_eq!(f.severity, Severity::Error);
    assert!(f.title.contains("9.12.0.46_cuda12"), "{f:?}");
    assert!(f.seen[0].contains("expected `=`"), "{f:?}");
    assert!(f.seen[1].contains(TK12), "the deployment is named: {f:?}");
    // The catalog has it: the command reinstalls exactly that release.
    assert_eq!(f.commands, vec!["cudnnm install 9.12.0.46_cuda12 --force"]);
    // A release the catalog does not know: words, not a command that fails.
    k.s.store_damaged[0].release = Some("9.12.0.46_cuda11".into());
    let f = k.expect("store-release-damaged");
    assert!(f.commands.is_empty(), "{f:?}");
    assert!(f.fix.unwrap().contains("archive or wheel it came from"));
}

// --- suggestions name only releases that exist -----------------------------

#[test]
fn a_framework_mismatch_suggests_a_release_the_catalog_has_for_the_toolkit() {
    // TensorFlow 2.5 wants cuDNN 8.1 (CUDA 11.2); 8.0.5 is deployed.
    let mut k = tensorflow_25_on_cudnn_805("11.2.2");
    let f = k.expect("framework-cudnn-mismatch");
    assert_eq!(
        f.commands,
        vec![
            "cudnnm install 8.1.1.33_cuda11.2".to_string(),
            format!("cudnnm use 8.1.1.33_cuda11.2 --cuda-root \"{TK112}\""),
        ],
        "{f:?}"
    );
    // A catalog without such a build: what to look for, no command that fails.
    k.t.offers
        .retain(|o| !o.version.to_string().starts_with("8.1"));
    let f = k.expect("framework-cudnn-mismatch");
    assert!(f.commands.is_empty(), "{f:?}");
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains("The catalog lists no cuDNN 8.1 build for CUDA 11.2"),
        "{f:?}"
    );
}

#[test]
fn a_pin_for_a_variant_that_does_not_exist_gets_no_install_command() {
    // The pin names 9.12.0.46_cuda99; only cuDNN 8 is reachable.
    let mut k = Kit::healthy_linux();
    k.remove("libcudnn.so.9.1.0").remove("/libcudnn.so.9");
    k.linux_set(
        &format!("{TK12}/lib64"),
        &format!("{TK12}/include"),
        "8.9.7",
        true,
    );
    k.s.pin = Some(PinInfo {
        spec: "9.12.0.46_cuda99".into(),
        source: "/home/me/.cudnn-version:1".into(),
    });
    let f = k.expect("cudnn-major-mismatch");
    assert!(
        !f.commands.iter().any(|c| c.contains("cudnnm install")),
        "{f:?}"
    );
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains("The catalog lists no cuDNN 9.12.0.46 for CUDA 99"),
        "{f:?}"
    );
    // A pin the catalog has, for the toolkit's CUDA: exactly that release.
    k.s.pin.as_mut().unwrap().spec = "9.12".into();
    let f = k.expect("cudnn-major-mismatch");
    assert_eq!(f.commands[0], "cudnnm install 9.12.0.46_cuda12", "{f:?}");
}

#[test]
fn a_build_for_another_cuda_suggests_one_that_exists_for_the_toolkit() {
    // cuDNN 9.12 (built for CUDA 12) deployed into a CUDA 11.8 toolkit: the
    // catalog has no 9.12 build for CUDA 11, so not `install 9.12 --cuda 11`
    // but the newest 9.x that has one.
    let mut k = Kit::linux();
    let tk = "/usr/local/cuda-11.8";
    k.toolkit(tk, "11.8");
    k.linux_set(
        &format!("{tk}/lib64"),
        &format!("{tk}/include"),
        "9.12.0",
        true,
    );
    k.file(&format!("{tk}/lib64/libcudnn.so.9.12.0"))
        .cudart_version = Some(12090);
    k.s.ld_library_path = vec![format!("{tk}/lib64")];
    let f = k.expect("cudnn-cuda-mismatch");
    assert_eq!(
        f.commands,
        vec![
            "cudnnm install pip:nvidia-cudnn-cu11==9.10.2.21".to_string(),
            format!("cudnnm use 9.10.2.21_cuda11 --cuda-root {tk}"),
        ],
        "{f:?}"
    );
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains("no cuDNN 9.12.0 built for CUDA 11.8"),
        "{f:?}"
    );
}
