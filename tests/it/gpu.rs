//! GPU architecture: `install` and `use` refuse a release the GPUs in use
//! cannot run (exit 8), with the real `nvidia-cudnn-jit-cu12` 9.12.0.46 and
//! 9.27.0.42 wheels (CUDA 12 builds of 9.11+, which need compute capability
//! 7.5) and a stand-in `nvidia-smi` on PATH that answers as a Pascal (6.1),
//! Volta (7.0) or Turing (7.5) machine would. `env`, `exec` and the shell
//! hooks never run it.

// The stand-in nvidia-smi is a shell script.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::common::{Sandbox, fixtures, real_wheel};
use crate::deploy_support::linux_toolkit;

const W912: &str = "nvidia_cudnn_jit_cu12-9.12.0.46";
const W927: &str = "nvidia_cudnn_jit_cu12-9.27.0.42";

const PASCAL: &str = "0, GPU-0a0a0a0a-1111-2222-3333-444455556666, NVIDIA GeForce GTX 1080, 6.1";
const VOLTA: &str = "0, GPU-0b0b0b0b-1111-2222-3333-444455556666, Tesla V100-SXM2-16GB, 7.0";
const TURING: &str = "0, GPU-0c0c0c0c-1111-2222-3333-444455556666, NVIDIA GeForce RTX 2080 Ti, 7.5";

/// A sandbox whose PATH starts with a folder holding a stand-in `nvidia-smi`
/// that prints `lines` and counts its calls in `root/smi-calls`.
fn machine(lines: &[&str]) -> Sandbox {
    let mut sb = Sandbox::new();
    set_gpus(&sb, lines);
    let bin = sb.root().join("gpu-bin");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    sb.set_env("PATH", path);
    sb
}

/// Replaces the stand-in's answer.
fn set_gpus(sb: &Sandbox, lines: &[&str]) {
    let bin = sb.root().join("gpu-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let smi = bin.join("nvidia-smi");
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(
        &smi,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\ncat <<'EOF'\n{body}EOF\n",
            calls_file(sb).display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn calls_file(sb: &Sandbox) -> PathBuf {
    sb.root().join("smi-calls")
}

fn calls(sb: &Sandbox) -> usize {
    std::fs::read_to_string(calls_file(sb))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn store_is_empty(sb: &Sandbox) -> bool {
    let store = sb.home().join("store");
    std::fs::read_dir(&store).map_or(true, |rd| {
        rd.flatten()
            .all(|e| e.file_name().to_string_lossy().starts_with('.'))
    })
}

fn install(sb: &Sandbox, wheel: &Path, extra: &[&str]) -> crate::common::Run {
    let mut args = vec!["install".to_string(), wheel.display().to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    sb.run(&args)
}

#[test]
fn pascal_and_volta_refuse_the_real_9_12_and_9_27_builds() {
    for (gpu, name, cc) in [
        (PASCAL, "NVIDIA GeForce GTX 1080", "6.1"),
        (VOLTA, "Tesla V100-SXM2-16GB", "7.0"),
    ] {
        let sb = machine(&[gpu]);
        for w in [W912, W927] {
            let version = &w["nvidia_cudnn_jit_cu12-".len()..];
            let r = install(&sb, &real_wheel(w), &[]).code_is(8).stderr_has(&[
                &format!("cuDNN {version} for CUDA 12 cannot run on {name} (GPU 0, compute capability {cc})"),
                "needs compute capability 7.5 or newer",
                // The newest catalog release that still runs there.
                "the newest release that runs on it is cuDNN 9.10.2.21 for CUDA 12",
                // A command that works: 9.10.2.21 is published as a wheel only.
                "(in the catalog: `cudnnm install 9.10.2.21_cuda12`)",
                "--force",
            ]);
            assert!(store_is_empty(&sb), "{}", r.describe());
        }
        assert!(calls(&sb) >= 2, "nvidia-smi was asked");
    }
}

#[test]
fn turing_accepts_them_and_force_overrides_on_pascal() {
    let sb = machine(&[TURING]);
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let t = tk.display().to_string();
    for w in [W912, W927] {
        let r = install(&sb, &real_wheel(w), &[]).ok();
        assert!(
            !r.stderr().contains("compute capability"),
            "{}",
            r.describe()
        );
    }
    sb.run(["use", "9.27.0.42", "--cuda-root", &t]).ok();
    assert!(tk.join("lib64/libcudnn.so.9").exists());

    // The same store on a Pascal machine: `use` refuses and changes nothing.
    set_gpus(&sb, &[PASCAL]);
    sb.run(["use", "9.12.0.46", "--cuda-root", &t])
        .code_is(8)
        .stderr_has(&[
            "cuDNN 9.12.0.46 for CUDA 12 cannot run on NVIDIA GeForce GTX 1080 (GPU 0, compute capability 6.1): it needs compute capability 7.5 or newer",
        ]);
    let target = std::fs::read_link(tk.join("lib64/libcudnn.so.9")).unwrap();
    assert!(target.to_string_lossy().contains("9.27.0.42"), "{target:?}");
    sb.run(["use", "9.12.0.46", "--cuda-root", &t, "--force"])
        .ok()
        .stderr_has(&[
            "will not run on NVIDIA GeForce GTX 1080",
            "(--force)",
            "9.27.0.42 → 9.12.0.46",
        ]);

    // `install --force` on Pascal installs with a warning.
    let sb = machine(&[PASCAL]);
    install(&sb, &real_wheel(W927), &["--force"])
        .ok()
        .stderr_has(&[
            "needs compute capability 7.5 or newer and will not run on NVIDIA GeForce GTX 1080",
            "installing it anyway (--force)",
        ]);
    assert!(!store_is_empty(&sb));
}

#[test]
fn two_gpus_are_judged_by_the_oldest_one_in_use() {
    let pascal_and_turing = [
        PASCAL,
        "1, GPU-0c0c0c0c-1111-2222-3333-444455556666, NVIDIA GeForce RTX 2080 Ti, 7.5",
    ];
    let mut sb = machine(&pascal_and_turing);
    install(&sb, &real_wheel(W912), &[])
        .code_is(8)
        .stderr_has(&["NVIDIA GeForce GTX 1080 (GPU 0, compute capability 6.1)"]);
    // Only the Turing card visible to CUDA: by index in PCI order, or by UUID.
    sb.set_env("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    sb.set_env("CUDA_VISIBLE_DEVICES", "1");
    install(&sb, &real_wheel(W912), &[]).ok();
    sb.set_env("CUDA_VISIBLE_DEVICES", "GPU-0a0a0a0a");
    install(&sb, &real_wheel(W927), &[])
        .code_is(8)
        .stderr_has(&["NVIDIA GeForce GTX 1080"]);
    // No GPU visible to CUDA: nothing said, nothing refused.
    sb.set_env("CUDA_VISIBLE_DEVICES", "");
    let r = install(&sb, &real_wheel(W927), &[]).ok();
    assert!(
        !r.stderr().contains("compute capability"),
        "{}",
        r.describe()
    );
}

#[test]
fn no_gpu_or_a_failing_nvidia_smi_is_silent() {
    // No nvidia-smi anywhere on PATH.
    let mut sb = Sandbox::new();
    sb.set_env("PATH", "/usr/bin:/bin");
    let r = install(&sb, &real_wheel(W912), &[]).ok();
    assert!(!r.stderr().contains("GPU"), "{}", r.describe());
    // An nvidia-smi that fails (no driver loaded) or prints nothing.
    let sb = machine(&[]);
    let r = install(&sb, &real_wheel(W912), &[]).ok();
    assert!(!r.stderr().contains("GPU"), "{}", r.describe());
    let bin = sb.root().join("gpu-bin/nvidia-smi");
    std::fs::write(
        &bin,
        "#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n",
    )
    .unwrap();
    let r = install(&sb, &real_wheel(W927), &[]).ok();
    assert!(!r.stderr().contains("GPU"), "{}", r.describe());
}

#[test]
fn a_version_prefix_picks_the_newest_release_that_runs_and_env_exec_never_ask() {
    let sb = machine(&[PASCAL]);
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let t = tk.display().to_string();
    // A 9.10 release (a fixture: real layout, stand-in library bytes) and the real 9.27.
    let old = fixtures::redist_linux("9.10.2.21", "12").write(&sb.work());
    install(&sb, &old, &[]).ok();
    install(&sb, &real_wheel(W927), &["--force"]).ok();
    sb.run(["use", "9", "--cuda-root", &t]).ok().stderr_has(&[
        "picked cuDNN 9.10.2.21",
        "runs on NVIDIA GeForce GTX 1080 (compute capability 6.1); cuDNN 9.27.0.42",
        "needs 7.5 or newer",
        "(none) → 9.10.2.21",
    ]);
    // An exact version that cannot run names the installed one that can.
    sb.run(["use", "9.27.0.42", "--cuda-root", &t])
        .code_is(8)
        .stderr_has(&["installed: `cudnnm use 9.10.2.21`"]);

    // Per-process activation never runs nvidia-smi.
    let before = calls(&sb);
    sb.run(["env", "--shell", "bash", "--version", "9.27.0.42"])
        .ok();
    sb.run(["exec", "--version", "9.27.0.42", "--", "true"])
        .ok();
    sb.run(["pin", "9.27.0.42"]).ok();
    sb.run(["env", "--shell", "bash"]).ok();
    assert_eq!(calls(&sb), before, "env/exec/pin must not query the GPU");
}

#[test]
fn a_bad_mode_is_refused_before_the_gpu_is_asked_and_one_from_config_names_the_file() {
    let sb = machine(&[PASCAL]);
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let t = tk.display().to_string();
    install(&sb, &real_wheel(W927), &["--force"]).ok();
    let before = calls(&sb);
    let r = sb
        .run(["use", "9.27", "--cuda-root", &t, "--mode", "sideways"])
        .code_is(2)
        .stderr_has(&[
            "error: 'sideways' is not a deploy mode",
            "help: use one of auto, symlink, hardlink, copy",
        ]);
    assert!(
        !r.stderr().contains("compute capability"),
        "{}",
        r.describe()
    );
    assert_eq!(calls(&sb), before, "nvidia-smi was not asked");
    let config = sb.home().join("config.toml");
    std::fs::write(&config, "mode = \"teleport\"\n").unwrap();
    let r = sb
        .run(["use", "9.27", "--cuda-root", &t])
        .code_is(2)
        .stderr_has(&[
            &format!(
                "error: 'teleport' is not a deploy mode (the `mode` key in '{}')",
                config.display()
            ),
            &format!(
                "help: set `mode` in '{}' to one of auto, symlink, hardlink, copy, or remove the line",
                config.display()
            ),
        ]);
    assert_eq!(calls(&sb), before, "{}", r.describe());
    assert!(!tk.join("lib64/libcudnn.so.9").exists());
    // The fix as said: a good mode in the file deploys (forced past the old GPU).
    std::fs::write(&config, "mode = \"copy\"\n").unwrap();
    sb.run(["use", "9.27", "--cuda-root", &t, "--force"])
        .ok()
        .stderr_has(&["→ 9.27.0.42", "(copy,"]);
}

/// `install 9` on a Pascal GPU (6.1) picks the newest 9.x it runs — a
/// release published only as a wheel — and says which newer one it passed
/// over and why, as it does for an archive.
#[test]
fn a_prefix_on_an_old_gpu_names_the_newer_wheel_release_it_passed_over() {
    let mut sb = machine(&[PASCAL]);
    let links = sb.root().join("links");
    std::fs::create_dir_all(&links).unwrap();
    fixtures::wheel("nvidia_cudnn_cu12", "9.10.2.21", false).write(&links);
    sb.set_env("PIP_NO_INDEX", "1");
    sb.set_env("PIP_FIND_LINKS", &links);
    sb.set_env("PIP_CONFIG_FILE", "/dev/null");
    sb.run(["install", "9", "--cuda", "12"]).ok().stderr_has(&[
        "picked cuDNN 9.10.2.21 for CUDA 12, the newest '9' release that runs on NVIDIA GeForce GTX 1080 (compute capability 6.1); cuDNN ",
        "installing pip:nvidia-cudnn-cu12==9.10.2.21",
    ]);
    assert!(!store_is_empty(&sb));
}

/// A stand-in Python for pip that records each call in `root/pip-calls`
/// and fails: a test that sees no such file knows pip never ran.
fn fake_pip(sb: &mut Sandbox) -> PathBuf {
    let calls = sb.root().join("pip-calls");
    let py = sb.root().join("fake-python3");
    std::fs::write(
        &py,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", calls.display()),
    )
    .unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    sb.set_env("CUDNNM_PYTHON", &py);
    calls
}

/// The refusal every install gives for 9.27.0.42 on the Pascal stand-in,
/// before or after a download alike.
const REFUSE_927: [&str; 2] = [
    "error: cuDNN 9.27.0.42 for CUDA 12 cannot run on NVIDIA GeForce GTX 1080 (GPU 0, compute capability 6.1): it needs compute capability 7.5 or newer",
    "help: the newest release that runs on it is cuDNN 9.10.2.21 for CUDA 12 (in the catalog: `cudnnm install 9.10.2.21_cuda12`); or pass --force to install this one anyway",
];

/// An install whose release is known before fetching (an exact pip
/// requirement, the catalog's pick, a lock) is refused for the GPU before
/// pip runs or anything is downloaded: the same message and exit code as
/// the refusal after a download, and `--force` still installs it.
#[test]
fn a_release_known_before_fetching_is_refused_for_the_gpu_before_pip_runs() {
    let mut sb = machine(&[PASCAL]);
    let pip_calls = fake_pip(&mut sb);
    // (9.27.0.42 is built for CUDA 12 and 13: the spec forms name 12.)
    for what in [
        &["pip:nvidia-cudnn-jit-cu12==9.27.0.42"][..],
        &["pip:nvidia-cudnn-cu12==9.27.0.42"],
        &["9.27", "--cuda", "12"],
        &["9.27.0.42", "--cuda", "12"],
    ] {
        let r = sb
            .run(std::iter::once("install").chain(what.iter().copied()))
            .code_is(8)
            .stderr_has(&REFUSE_927);
        assert!(
            !pip_calls.exists(),
            "pip ran for {what:?}\n{}",
            r.describe()
        );
        assert!(!r.stderr().contains("fetching"), "{}", r.describe());
    }
    // The same words as the refusal after a download (a local wheel file).
    install(&sb, &real_wheel(W927), &[])
        .code_is(8)
        .stderr_has(&REFUSE_927);

    // A lock naming the release, as a wheel or as an archive (an https://
    // URL, as a lock's must be, of a server that is not there: a download
    // would fail with exit 6): refused before
    // pip runs or the download starts.
    std::fs::write(sb.work().join(".cudnn-version"), "9.27.0.42\n").unwrap();
    let port = crate::common::http::closed_port();
    let sha = "0".repeat(64);
    // A lock an older cudnnm wrote for the JIT wheel names the release
    // without its flavour: it is read as the JIT build.
    for (source, id) in [
        (
            format!(
                "pip = \"nvidia-cudnn-jit-cu12==9.27.0.42\"\nwheel = \"nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64.whl\"\nsha256 = \"{sha}\"\n"
            ),
            "9.27.0.42_cuda12+jit",
        ),
        (
            format!(
                "url = \"https://127.0.0.1:{port}/cudnn-linux-x86_64-9.27.0.42_cuda12-archive.tar.xz\"\nsha256 = \"{sha}\"\n"
            ),
            "9.27.0.42_cuda12",
        ),
    ] {
        std::fs::write(
            sb.work().join(".cudnn-version.lock"),
            format!(
                "pin = \"9.27.0.42\"\nrelease = \"9.27.0.42_cuda12\"\n\n[platform.linux-x86_64]\n{source}"
            ),
        )
        .unwrap();
        let r = sb.run(["install"]).code_is(8).stderr_has(&[
            &format!("installing {id} as locked"),
            REFUSE_927[0],
            REFUSE_927[1],
        ]);
        assert!(!pip_calls.exists(), "{}", r.describe());
        assert!(!r.stderr().contains("download"), "{}", r.describe());
    }
    std::fs::remove_file(sb.work().join(".cudnn-version")).unwrap();
    std::fs::remove_file(sb.work().join(".cudnn-version.lock")).unwrap();
    assert!(store_is_empty(&sb));

    // --force: pip runs (the real one, from a folder holding the wheel),
    // and the release is installed with the one warning.
    sb.set_env("CUDNNM_PYTHON", "python3");
    sb.set_env("PIP_CONFIG_FILE", "/dev/null");
    sb.set_env("PIP_NO_INDEX", "1");
    sb.set_env("PIP_FIND_LINKS", crate::common::wheels_dir());
    let r = sb
        .run(["install", "pip:nvidia-cudnn-jit-cu12==9.27.0.42", "--force"])
        .ok()
        .stderr_has(&[
            "fetching nvidia-cudnn-jit-cu12==9.27.0.42",
            "warning: cuDNN 9.27.0.42 for CUDA 12 needs compute capability 7.5 or newer and will not run on NVIDIA GeForce GTX 1080 (GPU 0, compute capability 6.1); installing it anyway (--force)",
            "installed cuDNN 9.27.0.42 for CUDA 12",
        ]);
    assert_eq!(
        r.stderr().matches("installing it anyway").count(),
        1,
        "{}",
        r.describe()
    );
}

/// A hint never suggests an install the GPU check refuses: `default` and
/// `pin` of a release the GPU cannot run say so and name the newest that
/// does, or `--force`.
#[test]
fn hints_do_not_suggest_an_install_the_gpu_refuses() {
    let mut sb = machine(&[PASCAL]);
    fake_pip(&mut sb);
    // (9.27.0.42 is built for CUDA 12 and 13, an NVIDIA archive for each: 12 is named.)
    let not_here = "cuDNN 9.27.0.42 for CUDA 12 does not run on NVIDIA GeForce GTX 1080 (GPU 0, compute capability 6.1; it needs 7.5 or newer): the newest release that runs on it is cuDNN 9.10.2.21 for CUDA 12 (in the catalog: `cudnnm install 9.10.2.21_cuda12`); or `cudnnm install 9.27.0.42_cuda12 --force` installs it anyway";
    let r = sb.run(["default", "9.27_cuda12"]).code_is(3).stderr_has(&[
        "error: no installed cuDNN matches 9.27_cuda12",
        &format!("help: {not_here} (see `cudnnm list` for what is installed)"),
    ]);
    assert!(!r.stderr().contains("install it first"), "{}", r.describe());
    sb.run(["pin", "9.27_cuda12"])
        .code_is(3)
        .stderr_has(&[&format!("help: {not_here}; or pin it anyway")]);
    // A prefix names the newest release it matches that runs here, as
    // `install 9` picks it.
    sb.run(["default", "9"])
        .code_is(3)
        .stderr_has(&["help: install it first with `cudnnm install 9.10.2.21_cuda12`"]);
    // Installed, the release that runs is named by the user's own command.
    let w = fixtures::wheel("nvidia_cudnn_cu12", "9.10.2.21", false).write(sb.root());
    sb.run(["install".as_ref(), w.as_os_str()]).ok();
    let r = sb.run(["default", "9.27_cuda12"]).code_is(3).stderr_has(&[
        "the newest release that runs on it is cuDNN 9.10.2.21 for CUDA 12 (installed: `cudnnm default 9.10.2.21`)",
    ]);
    assert!(!r.stderr().contains("cudnnm use"), "{}", r.describe());
    sb.run(["pin", "9.27_cuda12"])
        .code_is(3)
        .stderr_has(&["(installed: `cudnnm pin 9.10.2.21`)"]);
    // A GPU that runs it: the plain command.
    set_gpus(&sb, &[TURING]);
    sb.run(["default", "9.27_cuda12"])
        .code_is(3)
        .stderr_has(&["help: install it first with `cudnnm install 9.27.0.42_cuda12`"]);
}

/// `install 9` with no CUDA to choose a build by keeps the spec in its
/// example, and that example installs what it says: the newest 9.x for
/// CUDA 12 that runs here (a wheel), not the older archive it was asked
/// about.
#[test]
fn the_several_cuda_builds_example_keeps_the_spec_and_works() {
    let mut sb = machine(&[PASCAL]);
    let links = sb.root().join("links");
    std::fs::create_dir_all(&links).unwrap();
    fixtures::wheel("nvidia_cudnn_cu12", "9.10.2.21", false).write(&links);
    sb.set_env("PIP_NO_INDEX", "1");
    sb.set_env("PIP_FIND_LINKS", &links);
    sb.set_env("PIP_CONFIG_FILE", "/dev/null");
    let r = sb.run(["install", "9"]).code_is(2).stderr_has(&[
        "is built for several CUDA versions (11, 12); say which with --cuda",
        "help: e.g. `cudnnm install 9 --cuda 12`",
    ]);
    assert!(!r.stderr().contains("9.10.0.56 --cuda"), "{}", r.describe());
    sb.run(["install", "9", "--cuda", "12"])
        .ok()
        .stderr_has(&["installed cuDNN 9.10.2.21 for CUDA 12"]);
}
