//! The no-false-alarm corpus: healthy setups as people really have them,
//! built from the real cuDNN wheels (Windows: stand-in DLLs under wine).
//! Each must give exit 0 with nothing above `info`, and the cuDNN doctor
//! says loads must be the one a real load maps.
//!
//! NVIDIA's documented Linux setup (the `/usr/local/cuda` link, either
//! spelling on `LD_LIBRARY_PATH`) and Windows setup (`CUDA_PATH`, the
//! toolkit's `bin` on PATH); a conda environment whose `lib/` is on
//! `LD_LIBRARY_PATH`; a venv with pip's PyTorch and its own cuDNN wheel; a
//! cuDNN environment module; a container with cuDNN in
//! `/usr/lib/x86_64-linux-gnu` (an overlay in a mount namespace of the
//! test's own).

#![cfg(target_os = "linux")]

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{Run, Sandbox, skip};
use crate::doctor::{empty_toolkit, imported, toolkit};
use crate::doctor_loader::{
    ctypes_call, ctypes_load, doctor_active, python, real, stand_in_torch, venv_with_wheel,
    wheel_lib,
};

/// Exit 0 and no finding above `info`.
fn assert_healthy(r: &Run) {
    assert_eq!(r.code(), 0, "{}", r.describe());
    for f in r.json()["findings"].as_array().unwrap() {
        assert_eq!(f["severity"], "info", "{}", r.describe());
    }
}

/// Copies a store release's `lib/` into `dest` as `cp -P` does (files as
/// hard links to the read-only store files, links as links).
fn copy_lib(release: &Path, dest: &Path) {
    fs::create_dir_all(dest).unwrap();
    for e in fs::read_dir(release.join("lib")).unwrap().flatten() {
        let to = dest.join(e.file_name());
        if e.file_type().unwrap().is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), &to).unwrap();
        } else {
            fs::hard_link(e.path(), &to).unwrap();
        }
    }
}

/// nvcc on PATH, in the toolkit's `bin`, reached through `bin_dir`.
fn nvcc_on_path(sb: &mut Sandbox, tk: &Path, bin_dir: &Path) {
    fs::create_dir_all(tk.join("bin")).unwrap();
    let nvcc = tk.join("bin/nvcc");
    fs::write(
        &nvcc,
        "#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n",
    )
    .unwrap();
    fs::set_permissions(&nvcc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    sb.set_env(
        "PATH",
        format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    );
}

/// NVIDIA's Linux post-install lines with the usual link, in both
/// spellings: `LD_LIBRARY_PATH` through the link and `CUDA_HOME` on the
/// versioned folder, and the reverse; nvcc on PATH through the link.
#[test]
fn nvidia_linux_setup_with_the_cuda_link_is_healthy() {
    for ld_through_link in [true, false] {
        let mut sb = Sandbox::new();
        let tk = toolkit(&mut sb, true);
        let link = sb.root().join("cuda");
        std::os::unix::fs::symlink("cuda-12.4", &link).unwrap();
        sb.env.retain(|(k, _)| k != "LD_LIBRARY_PATH");
        let (ld, home) = if ld_through_link {
            (link.join("lib64"), tk.clone())
        } else {
            (tk.join("lib64"), link.clone())
        };
        sb.set_env("LD_LIBRARY_PATH", &ld);
        sb.set_env("CUDA_HOME", &home);
        nvcc_on_path(&mut sb, &tk, &link.join("bin"));
        let r = sb.run(["doctor", "--json"]);
        assert_healthy(&r);
        let Some(load) = ctypes_load(&sb, "libcudnn.so.9") else {
            return;
        };
        assert_eq!(
            doctor_active(&r).as_deref(),
            load.main(),
            "{}",
            r.describe()
        );
    }
}

/// NVIDIA's Windows setup: cuDNN copied into the toolkit, `CUDA_PATH` set
/// by the CUDA installer, the toolkit's `bin` on PATH. Windows' loader
/// (wine) loads it; doctor finds nothing to say.
#[test]
fn nvidia_windows_setup_with_cuda_path_is_healthy() {
    use crate::doctor_windows_load::{cublas, cudnn, diagnose, mingw, snapshot, wine_load};
    let sb = Sandbox::new();
    let tk = sb.root().join("CUDA/v12.4");
    let bin = tk.join("bin");
    if cublas(&bin, "cublasLt64_12.dll").is_none() {
        return;
    }
    cudnn(&bin, "cublasLt64_12.dll", &bin).unwrap();
    for st in ["cudnn_graph", "cudnn_engines_runtime_compiled"] {
        mingw(
            &bin.join(format!("{st}64_9.dll")),
            "__declspec(dllexport) int x(void) { return 0; }\n",
            &[],
        )
        .unwrap();
    }
    let Some(real_load) = wine_load(&sb, &[&bin], "cudnn64_9.dll") else {
        return;
    };
    let modules = real_load.expect("loads");
    assert!(
        modules.iter().any(|m| m
            .to_ascii_lowercase()
            .ends_with(r"cuda\v12.4\bin\cudnn64_9.dll")),
        "{modules:?}"
    );
    let mut snap = snapshot(&[&bin], &[(&tk, "12.4.1")], &tk);
    // The headers and import library the guide copies beside the DLLs.
    let win = crate::doctor_windows_load::win;
    for (name, v) in [("cudnn.h", None), ("cudnn_version.h", Some("9.27.0"))] {
        snap["files"].as_array_mut().unwrap().push(serde_json::json!({
            "path": format!(r"{}\include\{name}", win(&tk)), "root": win(&tk), "kind": "header", "size": 100, "header_version": v,
        }));
    }
    snap["files"].as_array_mut().unwrap().push(serde_json::json!({
        "path": format!(r"{}\lib\x64\cudnn.lib", win(&tk)), "root": win(&tk), "kind": "import-lib", "size": 100,
    }));
    let r = diagnose(&sb, &snap);
    assert_healthy(&r);
    assert!(
        r.json()["summary"]["active_cudnn"][0]["path"]
            .as_str()
            .unwrap()
            .eq_ignore_ascii_case(&format!(r"{}\cudnn64_9.dll", win(&bin))),
        "{}",
        r.describe()
    );
}

/// A conda environment with cuDNN in its `lib/`, activated and on
/// `LD_LIBRARY_PATH` (what many guides tell users to export); no CUDA
/// toolkit outside it.
#[test]
fn a_conda_environment_on_ld_library_path_is_healthy() {
    let mut sb = Sandbox::new();
    let conda = sb.root().join("miniconda3/envs/ml");
    fs::create_dir_all(conda.join("conda-meta")).unwrap();
    copy_lib(&imported("9.27.0.42"), &conda.join("lib"));
    sb.set_env("CONDA_PREFIX", &conda);
    sb.set_env("CONDA_DEFAULT_ENV", "ml");
    sb.set_env("LD_LIBRARY_PATH", conda.join("lib"));
    let r = sb.run(["doctor", "--json"]);
    assert_healthy(&r);
    let Some(load) = ctypes_load(&sb, "libcudnn.so.9") else {
        return;
    };
    assert_eq!(
        doctor_active(&r).as_deref(),
        load.main(),
        "{}",
        r.describe()
    );
    assert_eq!(
        r.json()["summary"]["active_cudnn"][0]["origin"],
        "conda package"
    );
}

/// A venv with pip's PyTorch and the cuDNN wheel it requires; no loader
/// variable, no toolkit. PyTorch's library finds the wheel through its
/// RPATH, which is what doctor says its process maps.
#[test]
fn a_venv_with_pytorch_and_its_cudnn_wheel_is_healthy() {
    let mut sb = Sandbox::new();
    let Some(site) = venv_with_wheel(&mut sb, "9.27.0.42") else {
        return;
    };
    let Some(torch) = stand_in_torch(&site, "9.27.0.42") else {
        return;
    };
    let r = sb.run(["doctor", "--json"]);
    assert_healthy(&r);
    let load = ctypes_call(&sb, torch.to_str().unwrap(), "torch_cudnn_version").unwrap();
    let files = &r.json()["summary"]["framework_loads"][0]["files"];
    assert_eq!(
        Some(real(files[0]["path"].as_str().unwrap()).as_path()),
        load.main(),
        "{}",
        r.describe()
    );
    assert_eq!(
        load.main(),
        Some(real(wheel_lib(&site).join("libcudnn.so.9")).as_path())
    );
}

/// A cuDNN environment module loaded in the shell (what HPC sites and
/// `cudnnm export modulefile` give): its release's `lib` on
/// `LD_LIBRARY_PATH`, `include` on `CPATH`, `CUDNN_PATH`; the CUDA toolkit
/// module beside it (`CUDA_HOME`, no cuDNN of its own).
#[test]
fn a_loaded_cudnn_module_is_healthy() {
    let mut sb = Sandbox::new();
    let release = sb.root().join("sw/cudnn/9.27.0.42_cuda12");
    copy_lib(&imported("9.27.0.42"), &release.join("lib"));
    fs::create_dir_all(release.join("include")).unwrap();
    for e in fs::read_dir(imported("9.27.0.42").join("include"))
        .unwrap()
        .flatten()
    {
        fs::hard_link(e.path(), release.join("include").join(e.file_name())).unwrap();
    }
    let modulefile = sb.root().join("modules/cudnn/9.27.0.42_cuda12");
    fs::create_dir_all(modulefile.parent().unwrap()).unwrap();
    fs::write(
        &modulefile,
        format!(
            "#%Module1.0\nprepend-path LD_LIBRARY_PATH {0}/lib\nprepend-path CPATH {0}/include\nsetenv CUDNN_PATH {0}\n",
            release.display()
        ),
    )
    .unwrap();
    let cuda = empty_toolkit(&sb, "cuda-12.4");
    sb.set_env("LOADEDMODULES", "cuda/12.4:cudnn/9.27.0.42_cuda12");
    sb.set_env(
        "_LMFILES_",
        format!(
            "{}/modules/cuda/12.4:{}",
            sb.root().display(),
            modulefile.display()
        ),
    );
    sb.set_env(
        "LD_LIBRARY_PATH",
        format!(
            "{}:{}",
            release.join("lib").display(),
            cuda.join("lib64").display()
        ),
    );
    sb.set_env("CPATH", release.join("include"));
    sb.set_env("CUDNN_PATH", &release);
    sb.set_env("CUDA_HOME", &cuda);
    let r = sb.run(["doctor", "--json"]);
    assert_healthy(&r);
    let Some(load) = ctypes_load(&sb, "libcudnn.so.9") else {
        return;
    };
    assert_eq!(
        doctor_active(&r).as_deref(),
        load.main(),
        "{}",
        r.describe()
    );
}

/// A container image with cuDNN in `/usr/lib/x86_64-linux-gnu` (the
/// distribution's package layout) and the CUDA toolkit in its own folder
/// on `LD_LIBRARY_PATH`: the system folder is an overlay in a mount
/// namespace of the test's own, so the host is untouched.
#[test]
fn a_container_with_cudnn_in_the_system_folder_is_healthy() {
    let mut sb = Sandbox::new();
    let sys = Path::new("/usr/lib/x86_64-linux-gnu");
    if !sys.is_dir() {
        skip::skip("no /usr/lib/x86_64-linux-gnu here (not Debian/Ubuntu x86_64)");
        return;
    }
    let Some(unshare) = skip::need_program("unshare", "util-linux") else {
        return;
    };
    let upper = sb.root().join("overlay/upper");
    let work = sb.root().join("overlay/work");
    fs::create_dir_all(&work).unwrap();
    copy_lib(&imported("9.27.0.42"), &upper);
    let cuda = empty_toolkit(&sb, "usr-local-cuda-12.4");
    sb.set_env("CUDA_HOME", &cuda);
    sb.set_env("LD_LIBRARY_PATH", cuda.join("lib64"));
    let script = format!(
        "mount -t overlay overlay -o lowerdir={0},upperdir={1},workdir={2} {0} && exec \"$@\"",
        sys.display(),
        upper.display(),
        work.display()
    );
    let in_ns = |program: &Path, args: &[&str]| {
        sb.wrapped(unshare.to_str().unwrap())
            .args(["-r", "-m", "sh", "-c", &script, "sh"])
            .arg(program)
            .args(args)
            .output()
            .unwrap()
    };
    let out = in_ns(&crate::common::bin(), &["doctor", "--json"]);
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("mount") {
        skip::skip(&format!(
            "no overlay mount in a user namespace here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
        return;
    }
    let r = Run {
        args: vec!["doctor".into(), "--json".into()],
        out,
        root: sb.root().to_path_buf(),
    };
    assert_healthy(&r);
    let Some(py) = python() else { return };
    let load = in_ns(
        &py,
        &[
            "-c",
            crate::doctor_loader::LOAD_SCRIPT,
            "libcudnn.so.9",
            "cudnnGetVersion",
        ],
    );
    let j: serde_json::Value = serde_json::from_slice(&load.stdout).unwrap();
    let mapped: Vec<PathBuf> = j["mapped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| PathBuf::from(p.as_str().unwrap()))
        .collect();
    let main = mapped
        .iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("libcudnn.so")
        })
        .unwrap();
    assert_eq!(main, &sys.join("libcudnn.so.9"));
    // Doctor names it by the loader's first trusted folder (`/lib/…`, a
    // link to `/usr/lib` on a merged-/usr system): the same folder.
    let said = PathBuf::from(
        r.json()["summary"]["active_cudnn"][0]["path"]
            .as_str()
            .unwrap(),
    );
    assert_eq!(
        real(said.parent().unwrap()).join(said.file_name().unwrap()),
        real(sys).join("libcudnn.so.9"),
        "{}",
        r.describe()
    );
}
