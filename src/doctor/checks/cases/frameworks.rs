//! Cases for `frameworks.rs`: what frameworks and pins expect, and the
//! releases suggested for them.

use super::*;

// --- framework-expects-other-version, major-version-mismatch (docs/breakages.md) ---

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
    let f = k.expect(FindingId::FrameworkCudnnMismatch);
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
    k.absent(FindingId::FrameworkCudnnMismatch);
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
    let f = k.expect(FindingId::FrameworkCudnnMismatch);
    assert!(
        f.commands[0].contains("nvidia-cudnn-cu12==9.1.0.70"),
        "{f:?}"
    );
    k.s.frameworks[1].version = "9.1.0.70".into();
    k.absent(FindingId::FrameworkCudnnMismatch);
}

#[test]
fn a_wheel_outside_a_frameworks_range_is_a_mismatch() {
    // The JAX CUDA 13 plugin accepts nvidia-cudnn-cu13>=9.12.0.46,<10 (its METADATA).
    let sp = "/venv/lib/python3.12/site-packages";
    let mut k = Kit::healthy_linux();
    k.framework(
        "jax-cuda13-plugin",
        "0.12.0.1",
        sp,
        Some("nvidia-cudnn-cu13>=9.12.0.46, <10.0"),
    );
    k.framework("nvidia-cudnn-cu13", "10.0.0.1", sp, None);
    let f = k.expect(FindingId::FrameworkCudnnMismatch);
    assert_eq!(
        f.title,
        "jax-cuda13-plugin 0.12.0.1 requires nvidia-cudnn-cu13>=9.12.0.46, <10.0, but 10.0.0.1 is installed"
    );
    assert!(
        f.commands[0].contains("nvidia-cudnn-cu13>=9.12.0.46, <10.0"),
        "{f:?}"
    );
    k.s.frameworks[1].version = "9.26.0.51".into();
    k.absent(FindingId::FrameworkCudnnMismatch);
}

#[test]
fn an_advised_cudnn_wheel_is_warned_about() {
    let sp = "/venv/lib/python3.12/site-packages";
    let mut k = Kit::healthy_linux();
    k.framework("nvidia-cudnn-cu12", "9.10.0.56", sp, None);
    let f = k.expect(FindingId::CudnnAdvisory);
    assert_eq!(
        f.title,
        "the nvidia-cudnn-cu12 wheel in /venv/lib/python3.12/site-packages is cuDNN 9.10.0.56, which advisory cudnn-9.10.0-abi covers"
    );
    assert!(f.why.contains("release-notes.html#cudnn-9-10-1"), "{f:?}");
    // The yanked upload is the wheel's, and 9.10.2 is fine.
    k.s.frameworks[0].version = "9.25.0.15".into();
    assert!(
        k.expect(FindingId::CudnnAdvisory)
            .title
            .contains("pypi-9.25.0.15-yanked")
    );
    k.s.frameworks[0].version = "9.10.2.21".into();
    k.absent(FindingId::CudnnAdvisory);
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
    let f = k.expect(FindingId::FrameworkCudaMismatch);
    assert!(f.title.contains("11.2"), "{f:?}");
    let mut k = Kit::healthy_linux();
    k.framework(
        "tensorflow",
        "2.19.0",
        "/usr/lib/python3/dist-packages",
        None,
    );
    k.absent(FindingId::FrameworkCudaMismatch);
}

#[test]
fn pinned_major_not_installed() {
    // major-version-mismatch: the project needs cudnn64_8.dll; only cuDNN 9 is installed.
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
    let f = k.expect(FindingId::CudnnMajorMismatch);
    assert!(
        f.title.contains("cudnn64_8.dll") && f.why.contains("ABI"),
        "{f:?}"
    );
    k.s.pin = Some(PinInfo {
        spec: "9".into(),
        source: "CUDNNM_VERSION".into(),
    });
    k.absent(FindingId::CudnnMajorMismatch);
}

#[test]
fn an_unreadable_pin_is_fixed_with_a_release_that_is_installed() {
    let mut k = Kit::healthy_linux();
    k.s.pin_error = Some(
        "'/proj/.cudnn-version' names no release: 'nine'\nhint: write a release such as 9.1".into(),
    );
    k.s.store_releases = Some(vec![
        id("9.12.0.46_cuda12"),
        id("9.27.0.42_cuda12"),
        id("8.9.7.29_cuda11"),
    ]);
    let f = k.expect(FindingId::PinUnreadable);
    // The newest installed release, never a placeholder.
    assert_eq!(f.commands, vec!["cudnnm pin 9.27.0.42_cuda12".to_string()]);
    assert_eq!(f.fix.as_deref(), Some("write a release such as 9.1"));
    // Nothing installed: no command to name (the fix says what to write).
    k.s.store_releases = Some(vec![]);
    assert!(k.expect(FindingId::PinUnreadable).commands.is_empty());
}

// --- cudnn-only-in-site-packages, soname-link-copied-as-file,
// toolkit-not-writable (docs/breakages.md) ----------------------------------

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
    let f = k.expect(FindingId::CudnnMajorMismatch);
    assert!(f.title.contains("PyTorch 2.5.1+cu124"), "{f:?}");
    // Windows: torch\lib carries cudnn64_9.dll; the loader path's cuDNN 8 is not its business.
    let mut k = Kit::healthy_windows();
    k.t.frameworks = vec![row("12.4", "9.1.0.70")];
    let sp = r"C:\Python311\Lib\site-packages";
    k.framework("torch", "2.5.1+cu124", sp, None);
    k.file(&format!(r"{sp}\torch\lib\cudnn64_9.dll"))
        .file_version = Some(v("9.1.0.70"));
    k.absent(FindingId::CudnnMajorMismatch);
    k.absent(FindingId::FrameworkCudnnMismatch);
}

// --- suggestions name only releases that exist -----------------------------

#[test]
fn a_framework_mismatch_suggests_a_release_the_catalog_has_for_the_toolkit() {
    // TensorFlow 2.5 wants cuDNN 8.1 (CUDA 11.2); 8.0.5 is deployed.
    let mut k = tensorflow_25_on_cudnn_805("11.2.2");
    let f = k.expect(FindingId::FrameworkCudnnMismatch);
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
    let f = k.expect(FindingId::FrameworkCudnnMismatch);
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
    let f = k.expect(FindingId::CudnnMajorMismatch);
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
    let f = k.expect(FindingId::CudnnMajorMismatch);
    assert_eq!(f.commands[0], "cudnnm install 9.12.0.46_cuda12", "{f:?}");
}

#[test]
fn a_pin_for_a_cuda_10_1_build_while_cuda_path_names_11_2() {
    let mut k = Kit::healthy_windows();
    k.s.pin = Some(PinInfo {
        spec: "8.0.5.39_cuda10.1".into(),
        source: r"C:\proj\.cudnn-version".into(),
    });
    let f = k.expect(FindingId::PinToolkitMismatch);
    assert!(
        f.title
            .contains("CUDA 10.1; the toolkit in use is CUDA 11.2"),
        "{f:?}"
    );
    assert_eq!(f.commands, vec!["cudnnm pin 8.0.5.39_cuda11"]);
    // The same major as the loaded 8.1.0.77, another release.
    let f = k.expect(FindingId::PinReleaseMismatch);
    assert!(f.title.contains("asks for cuDNN 8.0.5.39"), "{f:?}");
    // Healthy neighbour: the deployed release, pinned.
    k.s.pin = Some(PinInfo {
        spec: "8.1.0.77_cuda11.2".into(),
        source: r"C:\proj\.cudnn-version".into(),
    });
    k.absent(FindingId::PinToolkitMismatch);
    k.absent(FindingId::PinReleaseMismatch);
}

#[test]
fn a_pin_whose_only_build_does_not_fit_the_toolkit_is_not_offered_for_install() {
    // The catalog has 7.4.2.24 only for CUDA 10.0; the toolkit is 12.4.
    let mut k = Kit::healthy_linux();
    k.s.store_releases = Some(vec![]);
    k.s.pin = Some(PinInfo {
        spec: "7.4_cuda10.0".into(),
        source: "/home/me/proj/.cudnn-version:1".into(),
    });
    k.expect(FindingId::PinToolkitMismatch);
    let f = k.expect(FindingId::PinNotInstalled);
    assert!(
        !f.commands.iter().any(|c| c.contains("install")),
        "the report says the CUDA 10.0 build does not fit: {f:?}"
    );
    assert!(
        f.fix.as_deref().unwrap().contains(
            "is a build for CUDA 10.0, which does not fit the toolkit in use (CUDA 12.4)"
        ),
        "{f:?}"
    );
}
