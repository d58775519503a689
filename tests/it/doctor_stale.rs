//! Stale state against a real load: an ld.so cache entry whose file is
//! gone (the cache bound over `/etc/ld.so.cache` in a mount namespace of
//! the test's own, `unshare`), loader entries and a loaded module into a
//! removed release, a `current/` link whose release an administrator
//! removed, and a lock for another CUDA than the toolkit. Each compares
//! doctor's account with what python3 ctypes really loads.

#![cfg(target_os = "linux")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, Sandbox, skip};
use crate::doctor::{ids, imported, place, toolkit, toolkit_with};
use crate::doctor_loader::{LOAD_SCRIPT, RealLoad, doctor_active, python, real};

fn count(r: &Run, id: &str) -> usize {
    ids(r).iter().filter(|i| *i == id).count()
}

/// Runs `program ARGS` in the sandbox's environment inside a mount
/// namespace where `cache` is `/etc/ld.so.cache`; `None` (after saying
/// why) where this system gives no namespace to this user.
fn with_cache(
    sb: &Sandbox,
    cache: &Path,
    program: &Path,
    args: &[&str],
) -> Option<std::process::Output> {
    let unshare = skip::need_program("unshare", "util-linux")?;
    let script = "mount --bind \"$0\" /etc/ld.so.cache && exec \"$@\"";
    let mut cmd = sb.wrapped(unshare.to_str().unwrap());
    cmd.args(["-r", "-m", "sh", "-c", script])
        .arg(cache)
        .arg(program)
        .args(args);
    let out = cmd.output().unwrap();
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("unshare") {
        skip::skip(&format!(
            "no mount namespace for this user ({}): the test binds its own ld.so cache over /etc/ld.so.cache",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
        return None;
    }
    Some(out)
}

/// The ld.so cache lists a cuDNN whose files were removed since: ld.so
/// skips the entry, and so does doctor (no copy predicted, `ld-cache-stale`
/// naming it, `sudo ldconfig`); the real load fails the same way. Rebuilt,
/// the cache leads both to the copy.
#[test]
fn a_cache_entry_whose_file_is_gone_is_skipped_as_the_loader_skips_it() {
    let sb = Sandbox::new();
    let Some(py) = python() else { return };
    let Some(ldconfig) = ["/sbin/ldconfig", "/usr/sbin/ldconfig"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
    else {
        skip::skip("ldconfig is not installed (libc-bin)");
        return;
    };
    let opt = sb.root().join("opt/cudnn");
    place(&imported("9.27.0.42"), &opt);
    let conf = sb.root().join("ld.so.conf");
    fs::write(&conf, format!("{}\n", opt.join("lib64").display())).unwrap();
    let cache = sb.root().join("ld.so.cache");
    let built = Command::new(&ldconfig)
        .arg("-C")
        .arg(&cache)
        .arg("-f")
        .arg(&conf)
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    let bin = crate::common::bin();
    let doctor_in_ns = |sb: &Sandbox| {
        let out = with_cache(sb, &cache, &bin, &["doctor", "--json"])?;
        Some(Run {
            args: vec!["doctor".into(), "--json".into()],
            out,
            root: sb.root().to_path_buf(),
        })
    };
    let load_in_ns = |sb: &Sandbox| -> Option<RealLoad> {
        let out = with_cache(
            sb,
            &cache,
            &py,
            &["-c", LOAD_SCRIPT, "libcudnn.so.9", "cudnnGetVersion"],
        )?;
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        Some(RealLoad {
            version: j["version"].as_u64(),
            mapped: j["mapped"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| PathBuf::from(p.as_str().unwrap()))
                .collect(),
            error: j["error"].as_str().map(str::to_owned),
        })
    };
    // While the files are there, the cache leads both to them.
    let Some(r) = doctor_in_ns(&sb) else { return };
    let load = load_in_ns(&sb).unwrap();
    assert_eq!(load.version, Some(92700), "{load:?}");
    assert_eq!(
        doctor_active(&r).as_deref(),
        load.main(),
        "{}",
        r.describe()
    );
    assert_eq!(r.json()["summary"]["active_cudnn"][0]["via"], "ld.so cache");
    assert_eq!(count(&r, "ld-cache-stale"), 0, "{}", r.describe());
    // The files go; the cache still lists them.
    fs::remove_dir_all(opt.join("lib64")).unwrap();
    let r = doctor_in_ns(&sb).unwrap();
    let load = load_in_ns(&sb).unwrap();
    assert!(
        load.error
            .as_deref()
            .is_some_and(|e| e.contains("libcudnn.so.9")),
        "{load:?}"
    );
    assert_eq!(doctor_active(&r), None, "{}", r.describe());
    let f = r.finding("ld-cache-stale");
    assert_eq!(f["severity"], "warning");
    assert!(
        f["seen"][0].as_str().unwrap().starts_with(&format!(
            "libcudnn.so.9 => {}",
            opt.join("lib64/libcudnn.so.9").display()
        )),
        "{}",
        r.describe()
    );
    assert_eq!(f["commands"][0], "sudo ldconfig");
    assert_eq!(
        count(&r, "ld-cache-stale"),
        1,
        "one finding for every gone entry"
    );
}

/// `LD_LIBRARY_PATH` still names a cudnnm release that was uninstalled,
/// before a toolkit's copy: the loader skips the missing folder (so does
/// doctor: the toolkit's copy is the one loaded), and the entry is
/// `stale-activation`, once.
#[test]
fn a_loader_entry_into_a_removed_release_is_skipped_and_named() {
    let mut sb = Sandbox::new();
    let gone = sb.home().join("store/cuda-12/9.1.0.70/lib");
    sb.set_env("LD_LIBRARY_PATH", &gone);
    let tk = toolkit(&mut sb, false);
    let r = sb
        .run(["doctor", "--json", "--cuda-root", tk.to_str().unwrap()])
        .ok();
    let Some(load) = crate::doctor_loader::ctypes_load(&sb, "libcudnn.so.9") else {
        return;
    };
    assert_eq!(
        doctor_active(&r).as_deref(),
        load.main(),
        "{}",
        r.describe()
    );
    assert_eq!(count(&r, "stale-activation"), 1, "{}", r.describe());
    let f = r.finding("stale-activation");
    assert_eq!(f["severity"], "warning");
    assert_eq!(
        f["seen"][0],
        format!("LD_LIBRARY_PATH entry 1: {} (gone)", gone.display())
    );
    assert_eq!(f["commands"][0], "eval \"$(cudnnm env --shell bash)\"");
}

/// A loaded environment module whose release was removed: one finding for
/// the module (not a second one for the `LD_LIBRARY_PATH` entry it set),
/// and the copy both doctor and the loader then take.
#[test]
fn a_loaded_module_of_a_removed_release_is_one_finding() {
    let mut sb = Sandbox::new();
    let release = sb.root().join("sw/cudnn/9.1.0.70_cuda12");
    let modulefile = sb.root().join("modules/cudnn/9.1.0.70_cuda12");
    fs::create_dir_all(modulefile.parent().unwrap()).unwrap();
    fs::write(
        &modulefile,
        format!(
            "#%Module1.0\nprepend-path LD_LIBRARY_PATH {0}/lib\nprepend-path CPATH {0}/include\nsetenv CUDNN_PATH {0}\n",
            release.display()
        ),
    )
    .unwrap();
    sb.set_env("LOADEDMODULES", "gcc/12:cudnn/9.1.0.70_cuda12");
    sb.set_env(
        "_LMFILES_",
        format!(
            "{}/modules/gcc/12:{}",
            sb.root().display(),
            modulefile.display()
        ),
    );
    sb.set_env("CPATH", release.join("include"));
    sb.set_env("CUDNN_PATH", &release);
    sb.set_env("LD_LIBRARY_PATH", release.join("lib"));
    let tk = toolkit(&mut sb, false);
    let r = sb
        .run(["doctor", "--json", "--cuda-root", tk.to_str().unwrap()])
        .ok();
    let load = crate::doctor_loader::ctypes_load(&sb, "libcudnn.so.9").unwrap();
    assert_eq!(
        doctor_active(&r).as_deref(),
        load.main(),
        "{}",
        r.describe()
    );
    assert_eq!(count(&r, "stale-activation"), 1, "{}", r.describe());
    let f = r.finding("stale-activation");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("cudnn/9.1.0.70_cuda12"),
        "{}",
        r.describe()
    );
    assert_eq!(f["commands"][0], "module unload cudnn/9.1.0.70_cuda12");
}

/// The project's lock records a build for CUDA 12 and the toolkit in use is
/// CUDA 11.8: `lock-toolkit-mismatch`, whose CUDA is the one the locked
/// library itself reports it was built with (`cudnnGetCudartVersion()`).
#[test]
fn a_lock_for_another_cuda_than_the_toolkit_is_named_with_the_librarys_own_cuda() {
    let mut sb = Sandbox::new();
    let tk = toolkit_with(&mut sb, false, "9.27.0.42", "cuda-11.8");
    fs::write(
        tk.join("version.json"),
        r#"{"cuda":{"name":"CUDA SDK","version":"11.8.0"}}"#,
    )
    .unwrap();
    sb.set_env("CUDA_HOME", &tk);
    fs::write(sb.work().join(".cudnn-version"), "9.27\n").unwrap();
    fs::write(
        sb.work().join(".cudnn-version.lock"),
        "pin = \"9.27\"\nrelease = \"9.27.0.42_cuda12\"\n",
    )
    .unwrap();
    let r = sb.run(["doctor", "--json"]);
    let f = r.finding("lock-toolkit-mismatch");
    assert_eq!(f["severity"], "warning", "{}", r.describe());
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("a build for CUDA 12; the toolkit in use is CUDA 11.8"),
        "{}",
        r.describe()
    );
    assert_eq!(f["commands"][0], "cudnnm pin 9.27_cuda11");
    // The locked release's own library says which CUDA it was built with.
    let Some(py) = python() else { return };
    let lib = imported("9.27.0.42").join("lib/libcudnn.so.9");
    let out = Command::new(py)
        .args([
            "-c",
            "import ctypes,sys; print(ctypes.CDLL(sys.argv[1]).cudnnGetCudartVersion())",
        ])
        .arg(&lib)
        .output()
        .unwrap();
    let cudart: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!(cudart / 1000, 12, "{out:?}");
    // A lock that fits is no finding.
    fs::write(
        tk.join("version.json"),
        r#"{"cuda":{"name":"CUDA SDK","version":"12.4.1"}}"#,
    )
    .unwrap();
    let r = sb.run(["doctor", "--json"]);
    assert_eq!(count(&r, "lock-toolkit-mismatch"), 0, "{}", r.describe());
    let _ = real(&tk);
}

/// The default names a release an administrator removed from the system
/// store: its `current/cuda-12` link dangles, and a loader path through the
/// link finds nothing (as the real load does). One finding — the pin that
/// is not installed — whose fix makes an installed release the default
/// (`cudnnm default`, which re-points the link), not a reinstall. The
/// installed wheel is the JIT build, whose id says `+jit` (issue 26).
#[test]
fn a_vanished_default_is_fixed_with_cudnnm_default() {
    let mut sb = Sandbox::new();
    let whl = crate::common::real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42");
    sb.run([std::ffi::OsString::from("install"), whl.into_os_string()])
        .ok();
    let gone = sb.system().join("store/cuda-12/9.12.0.46");
    let current = sb.home().join("current");
    fs::create_dir_all(&current).unwrap();
    std::os::unix::fs::symlink(&gone, current.join("cuda-12")).unwrap();
    fs::write(
        sb.home().join("config.toml"),
        "default = \"9.12.0.46_cuda12\"\n",
    )
    .unwrap();
    sb.set_env("LD_LIBRARY_PATH", current.join("cuda-12/lib"));
    let r = sb.run(["doctor", "--json"]);
    let load = crate::doctor_loader::ctypes_load(&sb, "libcudnn.so.9").unwrap();
    assert!(load.error.is_some(), "{load:?}");
    assert_eq!(doctor_active(&r), None, "{}", r.describe());
    let f = r.finding("pin-not-installed");
    assert_eq!(
        f["commands"][0],
        "cudnnm default 9.27.0.42_cuda12+jit",
        "{}",
        r.describe()
    );
    assert!(
        f["seen"].to_string().contains("dangles"),
        "{}",
        r.describe()
    );
    assert_eq!(
        count(&r, "stale-activation"),
        0,
        "one cause: {}",
        r.describe()
    );
}
