//! Cases for `system.rs`: OS, toolkits, `nvcc`, `CUDA_PATH`, driver, GPU,
//! write access, unfinished changes.

use super::*;

// --- os-not-64-bit (docs/breakages.md) -------------------------------------

#[test]
fn os_not_64bit() {
    let mut k = Kit::healthy_windows();
    k.s.os.bits = 32;
    k.s.os.arch = "x86".into();
    let f = k.expect(FindingId::OsNot64Bit);
    assert_eq!(f.severity, Severity::Error);
    assert!(f.why.contains("193"));
    Kit::healthy_windows().absent(FindingId::OsNot64Bit);
}

// --- no-cuda-toolkit (docs/breakages.md) -----------------------------------

#[test]
fn no_cuda_toolkit() {
    let mut k = Kit::linux();
    k.linux_set("/opt/cudnn/lib", "/opt/cudnn/include", "9.1.0", true);
    assert_eq!(k.expect(FindingId::NoCudaToolkit).severity, Severity::Error);
    k.framework(
        "torch",
        "2.4.1+cu121",
        "/venv/lib/python3.11/site-packages",
        None,
    );
    assert_eq!(
        k.expect(FindingId::NoCudaToolkit).severity,
        Severity::Info,
        "pip brings CUDA: a healthy setup"
    );
    Kit::healthy_linux().absent(FindingId::NoCudaToolkit);
}

#[test]
fn nvcc_belongs_to_another_toolkit_than_cuda_path() {
    let mut k = Kit::healthy_windows();
    let tk121 = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1";
    k.toolkit(tk121, "12.1");
    k.nvcc(&format!(r"{tk121}\bin\nvcc.exe"), "12.1");
    let f = k.expect(FindingId::NvccCudaPathMismatch);
    assert!(
        f.title.contains("12.1") && f.title.contains("11.2"),
        "{f:?}"
    );
    Kit::healthy_windows().absent(FindingId::NvccCudaPathMismatch);
}

// --- driver-too-old (docs/breakages.md) ------------------------------------

#[test]
fn driver_older_than_the_toolkit_needs() {
    let mut k = Kit::healthy_linux();
    k.driver("450.51.06", &[]);
    let f = k.expect(FindingId::DriverTooOld);
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.title.contains("550.54.15"),
        "the 12.4 Update 1 row applies: {f:?}"
    );
    k.driver("535.104.05", &[]);
    assert_eq!(
        k.expect(FindingId::DriverMinorCompatOnly).severity,
        Severity::Warning
    );
    k.absent(FindingId::DriverTooOld);
    // The reverse is fine: newer drivers run older CUDA.
    let mut k = Kit::healthy_windows();
    k.driver("560.94", &[]);
    k.absent(FindingId::DriverTooOld);
    k.absent(FindingId::DriverMinorCompatOnly);
}

#[test]
fn no_driver_is_an_info_only() {
    let mut k = Kit::healthy_linux();
    k.s.driver = None;
    assert_eq!(k.expect(FindingId::DriverNotFound).severity, Severity::Info);
    Kit::healthy_linux().absent(FindingId::DriverNotFound);
}

#[test]
fn gpu_below_the_supported_compute_capability() {
    let mut k = Kit::healthy_linux();
    k.driver("550.54.15", &[("Tesla K80", "3.7")]);
    let f = k.expect(FindingId::GpuTooOld);
    assert!(f.why.contains("5.0"), "{f:?}");
    Kit::healthy_linux().absent(FindingId::GpuTooOld);
}

/// A machine whose only cuDNN is a CUDA 12 build of `version` deployed in
/// its toolkit (the loader takes it), with one GPU.
fn gpu_machine(gpu: (&str, &str), version: &str) -> Kit {
    let mut k = Kit::linux();
    let root = "/usr/local/cuda-12.4";
    k.toolkit(root, "12.4.1");
    k.linux_set(
        &format!("{root}/lib64"),
        &format!("{root}/include"),
        version,
        true,
    );
    k.s.ld_library_path = vec![format!("{root}/lib64")];
    k.driver("570.86.10", &[gpu]);
    k.s.deployments = vec![DeploymentState {
        toolkit: root.into(),
        release: id(&format!("{version}_cuda12")),
        mode: Some(crate::deploy::Mode::Symlink),
        files: vec![],
        extra: vec![],
        toolkit_gone: false,
    }];
    k
}

#[test]
fn pascal_and_volta_cannot_run_cuda_12_builds_of_9_11_and_later() {
    for gpu in [
        ("NVIDIA GeForce GTX 1080", "6.1"),
        ("Tesla V100-SXM2-16GB", "7.0"),
    ] {
        for version in ["9.12.0.46", "9.27.0.42"] {
            let k = gpu_machine(gpu, version);
            let f = k.expect(FindingId::GpuTooOld);
            assert_eq!(f.severity, Severity::Error);
            assert!(f.title.contains(gpu.0) && f.title.contains(gpu.1), "{f:?}");
            assert!(f.why.contains("7.5 and newer"), "{f:?}");
            // Deployed and taken by the loader: one finding naming both.
            assert_eq!(k.all(FindingId::GpuTooOld).len(), 1, "{f:?}");
            assert!(
                f.seen
                    .iter()
                    .any(|l| l.contains("deployed in /usr/local/cuda-12.4")),
                "{f:?}"
            );
            // The advice: the newest catalog release that runs there (9.10.x for CUDA 12).
            assert!(
                f.fix.as_deref().unwrap().contains("cuDNN 9.10.2.21_cuda12"),
                "{f:?}"
            );
            assert!(
                f.commands
                    .contains(&"cudnnm install 9.10.2.21_cuda12".to_string()),
                "{f:?}"
            );
        }
    }
    // Healthy neighbours: Turing runs them; Pascal runs 9.10.
    gpu_machine(("NVIDIA GeForce RTX 2080 Ti", "7.5"), "9.27.0.42").absent(FindingId::GpuTooOld);
    gpu_machine(("NVIDIA GeForce GTX 1080", "6.1"), "9.10.2.21").absent(FindingId::GpuTooOld);
}

/// Blackwell (an RTX 5090, 12.0; a B200, 10.0) needs cuDNN 9.7 built for
/// CUDA 12.8 or newer: 9.6 deployed there is `gpu-too-new`, naming what it
/// needs and the newest release that runs; 9.7 and later are fine.
#[test]
fn blackwell_cannot_run_a_release_older_than_9_7() {
    for gpu in [("NVIDIA GeForce RTX 5090", "12.0"), ("NVIDIA B200", "10.0")] {
        let k = gpu_machine(gpu, "9.6.0.74");
        let f = k.expect(FindingId::GpuTooNew);
        assert_eq!(f.severity, Severity::Error);
        assert!(f.title.contains(gpu.0) && f.title.contains(gpu.1), "{f:?}");
        assert!(
            f.why.contains("Blackwell GPUs need cuDNN 9.7.0 or newer built for CUDA 12.8 or newer and driver 570.26 or newer"),
            "{f:?}"
        );
        k.absent(FindingId::GpuTooOld);
        assert!(
            f.fix
                .as_deref()
                .unwrap()
                .contains("newest release that runs"),
            "{f:?}"
        );
        for version in ["9.7.0.66", "9.10.2.21"] {
            gpu_machine(gpu, version).absent(FindingId::GpuTooNew);
        }
    }
    // Older GPUs are not judged by the ceiling.
    gpu_machine(("NVIDIA GeForce RTX 4090", "8.9"), "9.6.0.74").absent(FindingId::GpuTooNew);
}

#[test]
fn a_windows_snapshot_judges_the_deployed_release_by_its_cuda_build() {
    // cuDNN 8.1.0.77 for CUDA 11.2 starts at Kepler 3.5 (3.0 only for CUDA 10.2 builds).
    let deployed = |k: &mut Kit| {
        k.s.deployments = vec![DeploymentState {
            toolkit: r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2".into(),
            release: id("8.1.0.77_cuda11.2"),
            mode: Some(crate::deploy::Mode::Copy),
            files: vec![],
            extra: vec![],
            toolkit_gone: false,
        }];
    };
    let mut k = Kit::healthy_windows();
    deployed(&mut k);
    k.driver("546.33", &[("Quadro K4000", "3.0")]);
    let f = k.expect(FindingId::GpuTooOld);
    assert!(f.why.contains("3.5 and newer"), "{f:?}");
    assert!(
        f.seen
            .iter()
            .any(|l| l.contains(r"deployed in C:\Program Files")),
        "{f:?}"
    );
    let mut k = Kit::healthy_windows();
    deployed(&mut k);
    k.driver("546.33", &[("Tesla K40c", "3.5")]);
    k.absent(FindingId::GpuTooOld);
}

#[test]
fn a_pinned_release_the_gpu_cannot_run_is_reported() {
    let mut k = Kit::healthy_linux();
    k.driver("550.54.15", &[("NVIDIA GeForce GTX 1080", "6.1")]);
    k.absent(FindingId::GpuTooOld);
    k.s.pin = Some(PinInfo {
        spec: "9.12.0.46_cuda12".into(),
        source: "/home/me/proj/.cudnn-version".into(),
    });
    let f = k.expect(FindingId::GpuTooOld);
    assert!(f.title.contains("cuDNN 9.12.0.46 for CUDA 12"), "{f:?}");
    assert!(
        f.seen
            .iter()
            .any(|l| l.contains("pinned as `9.12.0.46_cuda12`")),
        "{f:?}"
    );
    // A pin of 9.10 is fine on Pascal.
    k.s.pin = Some(PinInfo {
        spec: "9.10".into(),
        source: "default".into(),
    });
    k.absent(FindingId::GpuTooOld);
}

// --- cuda-path-wrong (docs/breakages.md) -----------------------------------

#[test]
fn cuda_path_missing_or_wrong() {
    let mut k = Kit::healthy_windows();
    k.s.env.remove("CUDA_PATH");
    assert_eq!(
        k.expect(FindingId::CudaPathMissing).severity,
        Severity::Warning
    );
    let mut k = Kit::healthy_windows();
    k.s.env.insert("CUDA_PATH".into(), r"C:\nowhere".into());
    k.expect(FindingId::CudaPathInvalid);
    // CUDA_PATH_V11_2 pointing at a 12.1 toolkit.
    let mut k = Kit::healthy_windows();
    let tk121 = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1";
    k.toolkit(tk121, "12.1");
    k.s.env.insert("CUDA_PATH_V11_2".into(), tk121.into());
    assert_eq!(
        k.expect(FindingId::CudaPathOtherVersion).severity,
        Severity::Error
    );
    // CUDA_PATH at a toolkit without cuDNN while cuDNN is in another.
    let mut k = Kit::healthy_windows();
    k.toolkit(tk121, "12.1");
    k.s.env.insert("CUDA_PATH".into(), tk121.into());
    let f = k.expect(FindingId::CudaPathOtherVersion);
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.seen[1].contains("v11.2"), "{f:?}");
    // The command deploys a real release that fits the toolkit CUDA_PATH names.
    k.s.store_releases = Some(vec![id("8.1.0.77_cuda11.2"), id("9.1.0.70_cuda12")]);
    let f = k.expect(FindingId::CudaPathOtherVersion);
    assert_eq!(
        f.commands,
        vec![format!(
            "cudnnm use 9.1.0.70_cuda12 --cuda-root \"{tk121}\""
        )],
        "{f:?}"
    );
    let k = Kit::healthy_windows();
    for id in [
        FindingId::CudaPathMissing,
        FindingId::CudaPathInvalid,
        FindingId::CudaPathOtherVersion,
    ] {
        k.absent(id);
    }
}

// --- cudnn-only-in-site-packages, soname-link-copied-as-file,
// toolkit-not-writable (docs/breakages.md) ----------------------------------

#[test]
fn toolkit_needs_elevated_rights() {
    let mut k = Kit::healthy_linux();
    k.s.toolkits[0].writable = Some(false);
    let f = k.expect(FindingId::ToolkitNotWritable);
    assert_eq!(f.severity, Severity::Info);
    assert!(
        f.commands.iter().any(|c| c.contains("cudnnm exec")),
        "{f:?}"
    );
    Kit::healthy_linux().absent(FindingId::ToolkitNotWritable);
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
        own_home: false,
    });
    let f = k.expect(FindingId::ToolkitChangeUnfinished);
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.seen[0].contains("`use 9.27.0.42_cuda12` (backup 3 of cudnnm home /home/b/.cudnnm)"),
        "{f:?}"
    );
    assert_eq!(f.commands, vec![finish.to_string()]);
    // While the other process still holds the toolkit lock it is running,
    // not interrupted: a warning to wait, and no command to run.
    k.s.toolkits[0].unfinished_change.as_mut().unwrap().running = true;
    let f = k.expect(FindingId::ToolkitChangeUnfinished);
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("is being changed right now"), "{f:?}");
    assert!(f.commands.is_empty(), "{f:?}");
    Kit::healthy_linux().absent(FindingId::ToolkitChangeUnfinished);
}

#[test]
fn a_home_on_a_network_file_system_is_a_warning() {
    let mut k = Kit::healthy_linux();
    k.s.network_fs.push(crate::doctor::snapshot::NetworkFs {
        what: "home".into(),
        path: "/home/u/.local/share/cudnnm".into(),
        fs_type: "nfs4".into(),
        mount: "/home".into(),
    });
    let f = k.expect(FindingId::NetworkFileSystem);
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("nfs4"), "{f:?}");
    Kit::healthy_linux().absent(FindingId::NetworkFileSystem);
}

// --- config-invalid ----------------------------------------------------------

#[test]
fn unreadable_or_unknown_settings_are_config_findings() {
    let mut k = Kit::healthy_linux();
    k.s.config_error = Some(
        "could not parse '/h/config.toml'\ncaused by: line 1: expected `=`\nhint: edit '/h/config.toml' to fix the TOML at line 1, or remove it".into(),
    );
    let f = k.expect(FindingId::ConfigInvalid);
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.title.contains("could not parse '/h/config.toml'"),
        "{f:?}"
    );
    assert_eq!(f.seen, vec!["line 1: expected `=`".to_string()]);
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .starts_with("edit '/h/config.toml'"),
        "{f:?}"
    );
    // Nothing for the pin: the default was only unreadable through the file.
    k.absent(FindingId::PinUnreadable);

    let mut k = Kit::healthy_linux();
    k.s.config_unknown = vec!["mdoe".into()];
    let f = k.expect(FindingId::ConfigInvalid);
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("mdoe"), "{f:?}");
    Kit::healthy_linux().absent(FindingId::ConfigInvalid);
}
