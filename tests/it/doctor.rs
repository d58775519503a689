//! `cudnnm doctor` end to end: the real cuDNN 9.27.0.42 build in a sandbox
//! CUDA 12 toolkit (healthy, version read from the loaded library), then
//! broken the ways the issue names; `--fix` and `--undo-fix` on real files;
//! `--json`, `--report` and `--snapshot` (a Windows machine diagnosed here).
//!
//! The tests on real files build Linux toolkits (symlink chains, `lib64`,
//! `LD_LIBRARY_PATH`) and load the real Linux libraries, so they and their
//! helpers are `#[cfg(unix)]`; the snapshot and empty-machine tests run on
//! every OS.

use crate::common;
#[cfg(unix)]
use crate::doctor_wheels;

use std::fs;
#[cfg(unix)]
use std::{
    ffi::OsString,
    path::{Path, PathBuf},
};

use common::{Run, Sandbox};
#[cfg(unix)]
use {common::real_wheel, doctor_wheels::wheel_files};

/// The real wheel of `version`, imported once per build by the real
/// importer (`cudnnm install WHEEL`) into a home of its own; the imported
/// store release folder, moved out of that home into the tests' shared
/// folder (see `common::shared_once`).
#[cfg(unix)]
pub(crate) fn imported(version: &str) -> PathBuf {
    common::shared_once(&format!("doctor-imported-{version}"), |tmp| {
        let sb = Sandbox::new_in(tmp);
        let whl = real_wheel(&format!("nvidia_cudnn_jit_cu12-{version}"));
        sb.run([OsString::from("install"), whl.into_os_string()])
            .ok();
        let release = tmp.join("release");
        fs::rename(
            sb.home()
                .join("store/cuda-12")
                .join(format!("{version}+jit")),
            &release,
        )
        .unwrap();
        release
    })
}

/// Copies a store release's `include/` and `lib/` into a toolkit's `include/`
/// and `lib64/` the way `cp -P` does: files as files (hard links to the
/// read-only store files: tests replace them, never write into them), links
/// as the same links.
#[cfg(unix)]
pub(crate) fn place(release: &Path, tk: &Path) {
    for (from, to) in [("include", "include"), ("lib", "lib64")] {
        fs::create_dir_all(tk.join(to)).unwrap();
        for e in fs::read_dir(release.join(from)).unwrap().flatten() {
            let dest = tk.join(to).join(e.file_name());
            if e.file_type().unwrap().is_symlink() {
                std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), &dest).unwrap();
            } else {
                fs::hard_link(e.path(), &dest).unwrap();
            }
        }
    }
}

/// Appends `dir` to the sandbox's `LD_LIBRARY_PATH`.
#[cfg(unix)]
pub(crate) fn add_ld_path(sb: &mut Sandbox, dir: &Path) {
    let mut ld: Vec<PathBuf> = sb
        .env
        .iter()
        .filter(|(k, _)| k == "LD_LIBRARY_PATH")
        .flat_map(|(_, v)| std::env::split_paths(v).collect::<Vec<_>>())
        .collect();
    ld.push(dir.to_path_buf());
    sb.env.retain(|(k, _)| k != "LD_LIBRARY_PATH");
    sb.set_env("LD_LIBRARY_PATH", std::env::join_paths(ld).unwrap());
}

/// An empty sandbox CUDA 12.4.1 toolkit (`version.json`, `include/`, `lib64/`).
#[cfg(unix)]
pub(crate) fn empty_toolkit(sb: &Sandbox, dir: &str) -> PathBuf {
    let tk = sb.root().join(dir);
    fs::create_dir_all(tk.join("include")).unwrap();
    fs::create_dir_all(tk.join("lib64")).unwrap();
    fs::write(
        tk.join("version.json"),
        r#"{"cuda":{"name":"CUDA SDK","version":"12.4.1"}}"#,
    )
    .unwrap();
    tk
}

/// A sandbox CUDA 12.4.1 toolkit holding the real cuDNN 9.27.0.42 release
/// as `cudnnm install` imported it (wheel files plus the `libcudnn*.so`
/// development links), its `lib64` on `LD_LIBRARY_PATH`. With `chain`, the
/// main library is laid out as the redist archives ship it:
/// `libcudnn.so -> libcudnn.so.9 -> libcudnn.so.9.27.0`.
#[cfg(unix)]
pub(crate) fn toolkit(sb: &mut Sandbox, chain: bool) -> PathBuf {
    toolkit_with(sb, chain, "9.27.0.42", "cuda-12.4")
}

/// [`toolkit`] with another real build and folder name.
#[cfg(unix)]
pub(crate) fn toolkit_with(sb: &mut Sandbox, chain: bool, version: &str, dir: &str) -> PathBuf {
    let tk = empty_toolkit(sb, dir);
    place(&imported(version), &tk);
    if chain {
        let real = format!("libcudnn.so.{}", version.rsplit_once('.').unwrap().0);
        fs::rename(tk.join("lib64/libcudnn.so.9"), tk.join("lib64").join(&real)).unwrap();
        std::os::unix::fs::symlink(&real, tk.join("lib64/libcudnn.so.9")).unwrap();
    }
    add_ld_path(sb, &tk.join("lib64"));
    tk
}

#[cfg(unix)]
pub(crate) fn doctor(sb: &Sandbox, tk: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "doctor".to_string(),
        "--json".into(),
        "--cuda-root".into(),
        tk.to_string_lossy().into_owned(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    sb.run(args)
}

pub(crate) fn ids(r: &Run) -> Vec<String> {
    r.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn finding(r: &Run, id: &str) -> serde_json::Value {
    r.finding(id)
}

#[cfg(unix)]
#[test]
fn real_9_27_in_a_toolkit_is_healthy_and_versioned_by_the_loaded_library() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    let r = doctor(&sb, &tk, &[]).ok();
    let j = r.json();
    assert_eq!(j["healthy"], true, "{}", r.describe());
    assert_eq!(j["errors"], 0, "{}", r.describe());
    let active = &j["summary"]["active_cudnn"][0];
    assert_eq!(active["version"], "9.27.0", "{}", r.describe());
    assert_eq!(
        active["version_source"],
        "loaded library",
        "{}",
        r.describe()
    );
    assert_eq!(
        active["path"],
        tk.join("lib64/libcudnn.so.9").to_string_lossy().as_ref()
    );
    assert!(
        j["summary"]["toolkits"][0]
            .as_str()
            .unwrap()
            .starts_with("CUDA 12.4.1 at"),
        "{}",
        r.describe()
    );
    // No warning either: only notes (no driver on a build machine) may remain.
    for f in j["findings"].as_array().unwrap() {
        assert_eq!(f["severity"], "info", "{}", r.describe());
    }
    // The text form says the same.
    let t = sb.run(["doctor", "--cuda-root", tk.to_str().unwrap()]).ok();
    assert!(
        t.stdout().contains("9.27.0 (loaded library)"),
        "{}",
        t.describe()
    );
}

/// `--cuda-root ../cuda-12.4` from the working folder is the toolkit whose
/// `lib64` `LD_LIBRARY_PATH` names by its absolute path: no
/// toolkit-not-on-loader-path, the same healthy result as the absolute path.
#[cfg(unix)]
#[test]
fn a_relative_cuda_root_with_dots_is_the_toolkit_it_names() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    fs::create_dir_all(sb.work()).unwrap();
    let rel = format!("../{}", tk.file_name().unwrap().to_string_lossy());
    let r = sb.run(["doctor", "--json", "--cuda-root", &rel]);
    assert!(
        !ids(&r).iter().any(|i| i == "toolkit-not-on-loader-path"),
        "{}",
        r.describe()
    );
    let j = r.json();
    assert_eq!(j["errors"], 0, "{}", r.describe());
    assert_eq!(
        j["summary"]["active_cudnn"][0]["version"],
        "9.27.0",
        "{}",
        r.describe()
    );
}

#[cfg(unix)]
#[test]
fn header_from_9_12_over_the_9_27_library_is_a_mismatch() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    let h = tk.join("include/cudnn_version.h");
    fs::remove_file(&h).unwrap();
    fs::copy(
        wheel_files("9.12.0.46", false).join("include/cudnn_version.h"),
        &h,
    )
    .unwrap();
    let r = doctor(&sb, &tk, &[]).code_is(7);
    let f = finding(&r, "header-library-mismatch");
    let seen = f["seen"].to_string();
    assert!(
        seen.contains("9.12.0") && seen.contains("9.27.0") && seen.contains("loaded library"),
        "{}",
        r.describe()
    );
    assert_eq!(f["severity"], "error");
}

#[cfg(unix)]
#[test]
fn plain_copy_where_the_release_had_a_link_chain_is_found_fixed_and_undone() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, true);
    let r = doctor(&sb, &tk, &[]).ok();
    assert!(
        !ids(&r).contains(&"broken-soname-chain".to_string()),
        "{}",
        r.describe()
    );
    // Copy without `cp -P`: libcudnn.so.9 becomes a regular file.
    let so9 = tk.join("lib64/libcudnn.so.9");
    fs::remove_file(&so9).unwrap();
    fs::copy(tk.join("lib64/libcudnn.so.9.27.0"), &so9).unwrap();
    let r = doctor(&sb, &tk, &["--report", "chain.json"]).code_is(7);
    let f = finding(&r, "broken-soname-chain");
    assert_eq!(f["auto_fix"]["action"], "relink-soname", "{}", r.describe());
    assert_eq!(f["auto_fix"]["target"], "libcudnn.so.9.27.0");
    // Read back from the report, the fix is for the machine it was taken on.
    let again = sb.run(["doctor", "--snapshot", "chain.json"]).code_is(7);
    sb.run(["doctor", "--snapshot", "missing.json"])
        .code_is(3)
        .stderr_has(&["help: give a file written by `cudnnm doctor --report FILE.json`"]);
    assert!(
        again.stdout().contains(
            "1 fix can be applied with `cudnnm doctor --fix` on the machine the snapshot was taken on."
        ),
        "{}",
        again.describe()
    );
    // --fix relinks it (backing the copy up) and the result is healthy.
    let r = doctor(&sb, &tk, &["--fix"]).ok();
    assert!(
        r.stderr().contains("fix applied [broken-soname-chain]"),
        "{}",
        r.describe()
    );
    assert_eq!(
        fs::read_link(&so9).unwrap(),
        Path::new("libcudnn.so.9.27.0")
    );
    let id = r
        .stderr()
        .split("--undo-fix ")
        .nth(1)
        .and_then(|s| s.split('`').next())
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no fix id\n{}", r.describe()));
    // A wrong id names the ones there are.
    sb.run(["doctor", "--undo-fix", "no-such-fix"])
        .code_is(3)
        .stderr_has(&[&format!("help: fixes this home can undo: {id}")]);
    sb.run(["doctor", "--undo-fix", "../../etc"])
        .code_is(2)
        .stderr_has(&[&format!("help: fixes this home can undo: {id}")]);
    // --undo-fix puts the copy back, byte for byte.
    sb.run(["doctor", "--undo-fix", &id]).ok();
    let m = fs::symlink_metadata(&so9).unwrap();
    assert!(m.file_type().is_file(), "the copy is back");
    assert_eq!(
        m.len(),
        fs::metadata(tk.join("lib64/libcudnn.so.9.27.0"))
            .unwrap()
            .len()
    );
    doctor(&sb, &tk, &[]).code_is(7);
}

#[cfg(unix)]
#[test]
fn probe_library_answers_for_the_real_library() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    let r = sb
        .run([
            "probe-library",
            tk.join("lib64/libcudnn.so.9").to_str().unwrap(),
        ])
        .ok();
    let j: serde_json::Value = serde_json::from_str(r.stdout().trim()).unwrap();
    assert_eq!(j["cudnn"], 92700, "{}", r.describe());
    assert_eq!(j["cudart"].as_u64().unwrap() / 1000, 12);
    let r = sb.run(["probe-library", "/nonexistent/libcudnn.so.9"]).ok();
    assert!(r.stdout().contains("\"error\""), "{}", r.describe());
}

#[cfg(unix)]
#[test]
fn reports_are_written_and_can_be_diagnosed_again() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    fs::remove_file(tk.join("include/cudnn.h")).unwrap();
    let r = doctor(&sb, &tk, &["--report", "env.json"]).code_is(7);
    assert!(
        ids(&r).contains(&"missing-header".to_string()),
        "{}",
        r.describe()
    );
    let rep: serde_json::Value =
        serde_json::from_slice(&fs::read(sb.work().join("env.json")).unwrap()).unwrap();
    assert_eq!(rep["report"], "cudnnm doctor");
    assert!(rep["snapshot"]["files"].as_array().unwrap().len() >= 10);
    assert_eq!(rep["findings"], r.json()["findings"]);
    // The saved snapshot gives the same findings without looking at the machine.
    fs::remove_dir_all(&tk).unwrap();
    let again = sb
        .run(["doctor", "--json", "--snapshot", "env.json"])
        .code_is(7);
    assert_eq!(ids(&again), ids(&r));
    // A text report for people.
    sb.run([
        "doctor",
        "--cuda-root",
        "/nonexistent",
        "--report",
        "env.txt",
    ])
    .code_is(7);
    let t = fs::read_to_string(sb.work().join("env.txt")).unwrap();
    assert!(t.starts_with("cudnnm doctor report"), "{t}");
    assert!(t.contains("LD_LIBRARY_PATH:"), "{t}");
}

/// A Windows machine as data: NVIDIA's cuDNN 9 installer put `…\v9.7\bin` on
/// PATH while the DLLs sit in `bin\12.8`
/// (`docs/breakages.md#installer-subfolder-not-on-path`), and no zlib is needed (9.7).
fn windows_snapshot() -> serde_json::Value {
    let base = r"C:\Program Files\NVIDIA\CUDNN\v9.7";
    let tk = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8";
    let mut files = Vec::new();
    let mut names = Vec::new();
    for st in [
        "cudnn",
        "cudnn_adv",
        "cudnn_cnn",
        "cudnn_engines_precompiled",
        "cudnn_engines_runtime_compiled",
        "cudnn_graph",
        "cudnn_heuristic",
        "cudnn_ops",
    ] {
        let n = format!("{st}64_9.dll");
        files.push(serde_json::json!({"path": format!(r"{base}\bin\12.8\{n}"), "root": base, "origin": "nvidia-installer", "kind": "shared", "size": 1000, "machine": "x86_64", "file_version": "9.7.1.26", "needed": ["KERNEL32.dll"]}));
        names.push(n);
    }
    serde_json::json!({
        "schema": 1,
        "os": {"family": "windows", "name": "Windows 11 Pro", "version": "10.0.22631", "arch": "x86_64", "bits": 64},
        "cwd": r"C:\Users\me",
        "env": {"CUDA_PATH": tk, "CUDA_PATH_V12_8": tk, "SystemRoot": r"C:\Windows"},
        "path": [format!(r"{tk}\bin"), format!(r"{base}\bin"), r"C:\Windows\System32"],
        "system_dirs": [r"C:\Windows\System32", r"C:\Windows"],
        "registry": {"user": format!(r"{base}\bin"), "machine": format!(r"%CUDA_PATH%\bin;C:\Windows\System32")},
        "toolkits": [{"root": tk, "cuda": "12.8.1", "layout": "windows", "found_by": "CUDA_PATH"}],
        "dirs": [
            {"path": r"C:\Windows\System32", "names": ["KERNEL32.dll", "vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll", "msvcp140_1.dll"]},
            {"path": format!(r"{base}\bin\12.8"), "names": names},
            {"path": format!(r"{base}\bin"), "names": []}
        ],
        "files": files,
        "driver": {"tool": "nvidia-smi", "output": "", "version": "572.61", "gpus": [{"name": "RTX 4070", "compute_capability": "8.9"}]}
    })
}

#[test]
fn a_windows_snapshot_is_diagnosed_on_linux() {
    let sb = Sandbox::new();
    fs::write(
        sb.work().join("win.json"),
        serde_json::to_vec(&windows_snapshot()).unwrap(),
    )
    .unwrap();
    let r = sb
        .run(["doctor", "--json", "--snapshot", "win.json"])
        .code_is(7);
    let f = finding(&r, "installer-subfolder-not-on-path");
    assert_eq!(
        f["auto_fix"]["dir"],
        r"C:\Program Files\NVIDIA\CUDNN\v9.7\bin\12.8",
        "{}",
        r.describe()
    );
    assert!(
        !ids(&r).contains(&"zlibwapi-missing".to_string()),
        "{}",
        r.describe()
    );
    assert!(
        !ids(&r).contains(&"vc-runtime-missing".to_string()),
        "{}",
        r.describe()
    );
    // --fix refuses a foreign snapshot.
    sb.run(["doctor", "--snapshot", "win.json", "--fix"])
        .code_is(2);
    // Not a snapshot at all.
    fs::write(sb.work().join("bad.json"), b"[1,2]").unwrap();
    sb.run(["doctor", "--snapshot", "bad.json"])
        .code_is(2)
        .stderr_has(&["not a cudnnm snapshot"]);
}

#[test]
fn nothing_installed_is_unhealthy_with_the_commands_to_fix_it() {
    let sb = Sandbox::new();
    let r = sb.run(["doctor"]).code_is(7);
    assert!(
        r.stdout().contains("error[cudnn-not-found]"),
        "{}",
        r.describe()
    );
    // A release the catalog has, not a placeholder; no toolkit, so no `use`.
    let install = r
        .stdout()
        .lines()
        .find(|l| l.trim_start().starts_with("$ cudnnm install "))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no install command\n{}", r.describe()));
    assert!(!install.contains("SPEC"), "{}", r.describe());
    assert!(
        r.stdout().contains("$ cudnnm exec --version ") && !r.stdout().contains("$ cudnnm use "),
        "{}",
        r.describe()
    );
}

#[cfg(unix)]
#[test]
fn distro_style_headers_are_read_through_their_links() {
    // docs/breakages.md#version-macros-moved-8-0: cuDNN 8 keeps its macros in
    // cudnn_version.h; Debian packages ship only cudnn_version_v8.h and point
    // cudnn_version.h at it.
    let sb = Sandbox::new();
    let tk = sb.root().join("cuda-11.8");
    fs::create_dir_all(tk.join("include")).unwrap();
    fs::create_dir_all(tk.join("lib64")).unwrap();
    fs::write(tk.join("version.txt"), "CUDA Version 11.8.89\n").unwrap();
    fs::write(
        tk.join("include/cudnn_version_v8.h"),
        common::fixtures::version_header("8.9.7"),
    )
    .unwrap();
    std::os::unix::fs::symlink("cudnn_version_v8.h", tk.join("include/cudnn_version.h")).unwrap();
    fs::write(tk.join("include/cudnn.h"), "#include \"cudnn_version.h\"\n").unwrap();
    let r = sb
        .run([
            "doctor",
            "--json",
            "--no-load",
            "--cuda-root",
            tk.to_str().unwrap(),
            "--report",
            "r.json",
        ])
        .code_is(7);
    let rep: serde_json::Value =
        serde_json::from_slice(&fs::read(sb.work().join("r.json")).unwrap()).unwrap();
    let files = rep["snapshot"]["files"].as_array().unwrap();
    let h = files
        .iter()
        .find(|f| {
            f["path"]
                .as_str()
                .unwrap()
                .ends_with("include/cudnn_version.h")
        })
        .unwrap();
    assert_eq!(h["header_version"], "8.9.7", "{}", r.describe());
    assert_eq!(h["link_target"], "cudnn_version_v8.h");
    assert_eq!(rep["snapshot"]["toolkits"][0]["cuda"], "11.8.89");
    // Headers without libraries: the set is incomplete.
    let f = finding(&r, "missing-library");
    assert!(
        f["title"].as_str().unwrap().contains("libcudnn.so.8"),
        "{}",
        r.describe()
    );
}

#[cfg(unix)]
#[test]
fn ld_library_path_at_an_unpacked_archive_root() {
    // docs/breakages.md#path-at-archive-root, Linux flavour: the entry is the
    // archive folder, the libraries are in its lib/.
    let mut sb = Sandbox::new();
    let arch = sb.root().join("cudnn-linux-x86_64-8.9.7.29_cuda12-archive");
    fs::create_dir_all(arch.join("lib")).unwrap();
    fs::create_dir_all(arch.join("include")).unwrap();
    fs::write(
        arch.join("include/cudnn_version.h"),
        common::fixtures::version_header("8.9.7"),
    )
    .unwrap();
    fs::write(
        arch.join("lib/libcudnn.so.8.9.7"),
        common::fixtures::elf_bytes("libcudnn.so.8 8.9.7", false),
    )
    .unwrap();
    std::os::unix::fs::symlink("libcudnn.so.8.9.7", arch.join("lib/libcudnn.so.8")).unwrap();
    sb.set_env("LD_LIBRARY_PATH", &arch);
    let r = sb.run(["doctor", "--json", "--no-load"]).code_is(7);
    let f = finding(&r, "path-points-at-archive-root");
    assert_eq!(f["severity"], "error");
    assert!(
        f["title"].as_str().unwrap().ends_with("-archive/lib"),
        "{}",
        r.describe()
    );
}

#[cfg(unix)]
#[test]
fn python_environments_are_read() {
    // docs/breakages.md#cudnn-only-in-site-packages: cuDNN only inside a
    // virtual environment; and PyTorch's exact pin against the cuDNN wheel
    // another install moved.
    let mut sb = Sandbox::new();
    let site = sb.root().join("venv/lib/python3.11/site-packages");
    let lib = site.join("nvidia/cudnn/lib");
    fs::create_dir_all(&lib).unwrap();
    let w = wheel_files("9.27.0.42", true);
    for n in [
        "libcudnn.so.9",
        "libcudnn_graph.so.9",
        "libcudnn_engines_runtime_compiled.so.9",
    ] {
        fs::hard_link(w.join("lib").join(n), lib.join(n)).unwrap();
    }
    let meta = |dir: &str, body: &str| {
        fs::create_dir_all(site.join(dir)).unwrap();
        fs::write(site.join(dir).join("METADATA"), body).unwrap();
    };
    meta(
        "torch-2.4.1+cu121.dist-info",
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.4.1+cu121\nRequires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\" and platform_machine == \"x86_64\"\n\n",
    );
    meta(
        "nvidia_cudnn_cu12-9.27.0.42.dist-info",
        "Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\nVersion: 9.27.0.42\n\n",
    );
    sb.set_env("VIRTUAL_ENV", sb.root().join("venv"));
    let r = sb.run(["doctor", "--json"]).code_is(7);
    let f = finding(&r, "cudnn-only-in-site-packages");
    assert!(
        f["title"].as_str().unwrap().contains("9.27.0"),
        "the version comes from loading it: {}",
        r.describe()
    );
    assert!(
        f["seen"][0].as_str().unwrap().contains("pip wheel"),
        "{}",
        r.describe()
    );
    let f = finding(&r, "framework-cudnn-mismatch");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("nvidia-cudnn-cu12==9.1.0.70"),
        "{}",
        r.describe()
    );
    let fw = r.json()["summary"]["frameworks"].to_string();
    assert!(fw.contains("torch 2.4.1+cu121"), "{}", r.describe());
}

#[cfg(unix)]
#[test]
fn two_real_sets_on_the_loader_path_each_report_their_own_version() {
    // 9.12's libcudnn.so.9 has DT_RUNPATH=$ORIGIN, so in a process whose
    // LD_LIBRARY_PATH lists the 9.27 set first it would answer with 9.27's
    // sub-libraries; doctor loads each copy with its own folder first.
    let mut sb = Sandbox::new();
    let a = toolkit_with(&mut sb, false, "9.27.0.42", "cuda-12.4");
    let b = toolkit_with(&mut sb, false, "9.12.0.46", "cuda-12.6");
    let r = sb
        .run([
            "doctor",
            "--json",
            "--cuda-root",
            a.to_str().unwrap(),
            "--cuda-root",
            b.to_str().unwrap(),
            "--report",
            "r.json",
        ])
        .ok();
    let rep: serde_json::Value =
        serde_json::from_slice(&fs::read(sb.work().join("r.json")).unwrap()).unwrap();
    let version = |p: &Path| {
        rep["snapshot"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == p.to_str().unwrap())
            .unwrap()["library_version"]
            .clone()
    };
    assert_eq!(version(&a.join("lib64/libcudnn.so.9")), "9.27.0");
    assert_eq!(
        version(&b.join("lib64/libcudnn.so.9")),
        "9.12.0",
        "{}",
        r.describe()
    );
    let ids = ids(&r);
    assert!(
        !ids.contains(&"header-library-mismatch".to_string()),
        "{}",
        r.describe()
    );
    let f = finding(&r, "multiple-cudnn-copies");
    let seen = f["seen"].as_array().unwrap();
    assert!(
        seen[0].as_str().unwrap().contains("9.27.0")
            && seen[0].as_str().unwrap().ends_with("← loaded"),
        "{}",
        r.describe()
    );
    assert!(
        seen[1].as_str().unwrap().contains("9.12.0"),
        "{}",
        r.describe()
    );
    assert_eq!(finding(&r, "sub-libraries-mixed")["severity"], "warning");
}

#[cfg(unix)]
#[test]
fn a_symlink_deployment_turned_into_a_plain_copy_is_drift() {
    // The release as `cudnnm install` imported it, placed by symlinks into the
    // store and recorded the way `cudnnm use --mode symlink` records it; then
    // libcudnn.so.9 is copied over with plain `cp`.
    use cudnnm::deploy::{Deployment, Deployments, Mode, PlacedFile, PlacedFrom};
    let mut sb = Sandbox::new();
    let whl = real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42");
    sb.run([OsString::from("install"), whl.into_os_string()])
        .ok();
    let rel = sb.home().join("store/cuda-12/9.27.0.42+jit");
    let tk = empty_toolkit(&sb, "cuda-12.4");
    let mut files = Vec::new();
    for (from, to) in [("include", "include"), ("lib", "lib64")] {
        for e in fs::read_dir(rel.join(from)).unwrap().flatten() {
            let dest = tk.join(to).join(e.file_name());
            let target = match fs::read_link(e.path()) {
                Ok(t) => t,
                Err(_) => e.path(),
            };
            std::os::unix::fs::symlink(&target, &dest).unwrap();
            files.push(PlacedFile {
                path: dest,
                from: PlacedFrom::Release(format!("{from}/{}", e.file_name().to_string_lossy())),
                entry: cudnnm::record::Entry::link(target.to_string_lossy()),
                mtime_ns: None,
            });
        }
    }
    let d = Deployments {
        entries: vec![Deployment {
            toolkit: tk.clone(),
            release: "9.27.0.42_cuda12+jit".parse().unwrap(),
            mode: Mode::Symlink,
            deployed_at: "2026-11-29T22:00:00Z".into(),
            backup: None,
            source: None,
            files,
        }],
    };
    fs::write(
        sb.home().join("deployments.toml"),
        toml::to_string(&d).unwrap(),
    )
    .unwrap();
    add_ld_path(&mut sb, &tk.join("lib64"));
    let r = doctor(&sb, &tk, &[]).ok();
    assert_eq!(
        r.json()["summary"]["active_cudnn"][0]["version"],
        "9.27.0",
        "{}",
        r.describe()
    );
    sb.run(["verify"]).ok();

    let so9 = tk.join("lib64/libcudnn.so.9");
    fs::remove_file(&so9).unwrap();
    fs::copy(rel.join("lib/libcudnn.so.9"), &so9).unwrap();
    let r = doctor(&sb, &tk, &[]).code_is(7);
    let f = finding(&r, "deployment-drift");
    assert!(
        f["seen"][0]
            .as_str()
            .unwrap()
            .contains("a regular file, expected a link"),
        "{}",
        r.describe()
    );
    assert_eq!(
        f["commands"][0],
        format!(
            "cudnnm use 9.27.0.42_cuda12+jit --cuda-root {} --mode symlink",
            cudnnm::quote::sh_quote(&tk.display().to_string())
        )
    );
    let v = sb.run(["verify", "--json"]).code_is(7);
    assert!(
        v.json()["deployments"][0]["modified"][0]
            .as_str()
            .unwrap()
            .contains("libcudnn.so.9"),
        "{}",
        v.describe()
    );
}

#[cfg(unix)]
#[test]
fn a_project_pinned_to_cudnn_8_with_only_cudnn_9_installed() {
    // docs/breakages.md#major-version-mismatch: the pin names cuDNN 8;
    // cudnn64_8/libcudnn.so.8 and 9 are different libraries.
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    fs::write(
        sb.work().join(".cudnn-version"),
        "# this project\n8.9.7.29_cuda12\n",
    )
    .unwrap();
    let r = doctor(&sb, &tk, &[]).code_is(7);
    let f = finding(&r, "cudnn-major-mismatch");
    let t = f["title"].as_str().unwrap();
    assert!(
        t.contains("libcudnn.so.8") && t.contains(".cudnn-version"),
        "{}",
        r.describe()
    );
    assert_eq!(
        r.json()["summary"]["pin"]
            .as_str()
            .unwrap()
            .split(' ')
            .next(),
        Some("8.9.7.29_cuda12")
    );
    fs::write(sb.work().join(".cudnn-version"), "9.27\n").unwrap();
    store_release_in(&sb.home(), "9.27.0.42");
    doctor(&sb, &tk, &[]).ok();
}

#[test]
fn a_report_path_must_name_a_file_in_an_existing_folder() {
    let sb = Sandbox::new();
    // A folder: refused with a help line, nothing written into it.
    let dir = sb.work().join("reports");
    fs::create_dir_all(&dir).unwrap();
    for given in [dir.to_string_lossy().into_owned(), "reports/".to_string()] {
        let r = sb
            .run(["doctor", "--no-load", "--report", &given])
            .code_is(2)
            .stderr_has(&["could not write the report to", "names a folder", "help: "]);
        assert!(
            r.stderr().contains("cudnnm-doctor.json"),
            "the help names a file to pass: {}",
            r.describe()
        );
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "{}", r.describe());
    }
    // A missing folder: an error naming it, and no folder created.
    let missing = sb.root().join("nonexistent/dir");
    let target = missing.join("x.json");
    let r = sb
        .run(["doctor", "--no-load", "--report", target.to_str().unwrap()])
        .code_is(2)
        .stderr_has(&["does not exist", "help: "]);
    assert!(
        r.stderr()
            .contains(&format!("the folder '{}'", missing.display())),
        "{}",
        r.describe()
    );
    assert!(!sb.root().join("nonexistent").exists(), "{}", r.describe());
    // A file in an existing folder is written.
    sb.run(["doctor", "--no-load", "--report", "reports/r.txt"])
        .code_is(7);
    assert!(dir.join("r.txt").is_file());
}

#[test]
fn damaged_store_releases_are_findings_as_in_verify() {
    let sb = Sandbox::new();
    let store = sb.home().join("store/cuda-12");
    fs::create_dir_all(store.join("9.27.0.42/lib")).unwrap();
    fs::write(store.join("9.27.0.42/receipt.toml"), "schema = [not toml").unwrap();
    fs::create_dir_all(store.join("9.12.0.46/include")).unwrap();
    let r = sb.run(["doctor", "--json", "--no-load"]).code_is(7);
    let damaged: Vec<serde_json::Value> = r.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "store-release-damaged")
        .cloned()
        .collect();
    assert_eq!(damaged.len(), 2, "{}", r.describe());
    let text = serde_json::Value::Array(damaged).to_string();
    assert!(
        text.contains("9.27.0.42_cuda12") && text.contains("9.12.0.46_cuda12"),
        "{}",
        r.describe()
    );
    assert!(text.contains("has no receipt.toml"), "{}", r.describe());
    assert!(
        text.contains("cudnnm install 9.27.0.42_cuda12 --force")
            || text.contains("cudnnm install pip:nvidia-cudnn-cu12==9.27.0.42 --force"),
        "the catalog's release is offered for reinstalling: {}",
        r.describe()
    );
    // verify fails on the same two folders.
    let v = sb.run(["verify", "--json"]).code_is(7);
    let errs = v.json()["releases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["error"].is_string())
        .count();
    assert_eq!(errs, 2, "{}", v.describe());
}

#[cfg(unix)]
#[test]
fn a_windows_layout_toolkit_on_linux_is_checked_as_windows() {
    // `doctor --cuda-root` at a Windows toolkit tree (bin\nvcc.exe, lib\x64):
    // DLLs in bin, import libraries in lib\x64, a stray lib\cudnn.lib.
    let sb = Sandbox::new();
    let tk = sb.root().join("CUDA/v11.2");
    for d in ["bin", "include", "lib/x64"] {
        fs::create_dir_all(tk.join(d)).unwrap();
    }
    fs::write(tk.join("version.txt"), "CUDA Version 11.2.152\n").unwrap();
    fs::write(tk.join("bin/nvcc.exe"), b"MZ").unwrap();
    for st in [
        "cudnn",
        "cudnn_ops_infer",
        "cudnn_ops_train",
        "cudnn_cnn_infer",
        "cudnn_cnn_train",
        "cudnn_adv_infer",
        "cudnn_adv_train",
    ] {
        fs::write(tk.join(format!("bin/{st}64_8.dll")), b"MZ").unwrap();
    }
    fs::write(
        tk.join("include/cudnn_version.h"),
        common::fixtures::version_header("8.1.0"),
    )
    .unwrap();
    fs::write(tk.join("include/cudnn.h"), "#include \"cudnn_version.h\"\n").unwrap();
    for n in ["lib/x64/cudnn.lib", "lib/x64/cudnn64_8.lib"] {
        fs::write(tk.join(n), b"!<arch>\n").unwrap();
    }
    let r = doctor(&sb, &tk, &["--no-load"]);
    let found = ids(&r);
    for id in ["missing-library", "missing-link-library", "lib-not-in-x64"] {
        assert!(!found.contains(&id.to_string()), "{id}: {}", r.describe());
    }
    fs::write(tk.join("lib/cudnn.lib"), b"!<arch>\n").unwrap();
    let r = doctor(&sb, &tk, &["--no-load"]).code_is(7);
    let f = finding(&r, "lib-not-in-x64");
    assert!(
        f["title"].as_str().unwrap().ends_with("lib/x64"),
        "{}",
        r.describe()
    );
    assert!(
        !r.stdout().contains("libcudnn.so"),
        "no Linux file names for a Windows toolkit: {}",
        r.describe()
    );
}

#[cfg(unix)]
/// A store release folder of the shared import home, linked into `home`'s
/// store (files as hard links, links as links): the same receipt and bytes
/// as `cudnnm install` writes, without importing again.
fn store_release_in(home: &Path, version: &str) -> PathBuf {
    fn copy_tree(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for e in fs::read_dir(from).unwrap().flatten() {
            let dest = to.join(e.file_name());
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), &dest).unwrap();
            } else if t.is_dir() {
                copy_tree(&e.path(), &dest);
            } else {
                fs::hard_link(e.path(), &dest).unwrap();
            }
        }
    }
    let dest = home.join("store/cuda-12").join(version);
    copy_tree(&imported(version), &dest);
    dest
}

#[cfg(unix)]
#[test]
fn a_9_12_shim_that_loads_the_9_27_graph_library_is_mixing_not_the_same_version() {
    // The tester's report, exactly: a/ holds 9.12's libcudnn.so.9 (a small
    // shim with RUNPATH $ORIGIN), b/ 9.27's libcudnn.so.9 and
    // libcudnn_graph.so.9; LD_LIBRARY_PATH=a:b. Loaded, a's shim answers
    // 9.27.0: cudnnGetVersion() comes from b's graph library.
    let mut sb = Sandbox::new();
    let s912 = store_release_in(&sb.home(), "9.12.0.46");
    let s927 = store_release_in(&sb.home(), "9.27.0.42");
    let (a, b) = (sb.work().join("a"), sb.work().join("b"));
    fs::create_dir_all(&a).unwrap();
    fs::create_dir_all(&b).unwrap();
    fs::copy(s912.join("lib/libcudnn.so.9"), a.join("libcudnn.so.9")).unwrap();
    for n in ["libcudnn.so.9", "libcudnn_graph.so.9"] {
        fs::copy(s927.join("lib").join(n), b.join(n)).unwrap();
    }
    sb.set_env("LD_LIBRARY_PATH", std::env::join_paths([&a, &b]).unwrap());
    let r = sb.run(["doctor", "--json"]).code_is(7);
    let j = r.json();
    let mixed: Vec<&serde_json::Value> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "sub-libraries-mixed")
        .collect();
    assert_eq!(mixed.len(), 1, "{}", r.describe());
    let f = mixed[0];
    assert_eq!(f["severity"], "error", "{}", r.describe());
    let a_so = a.join("libcudnn.so.9");
    assert_eq!(
        f["title"],
        format!(
            "{} loads libcudnn_graph.so.9 from another cuDNN copy",
            a_so.display()
        )
    );
    let seen = f["seen"].to_string();
    assert!(
        seen.contains("9.12.0.46")
            && seen.contains(&b.join("libcudnn_graph.so.9").display().to_string())
            && seen.contains("9.27.0"),
        "which sub-library comes from where, with versions: {}",
        r.describe()
    );
    // Never "the same version".
    let c = finding(&r, "multiple-cudnn-copies");
    assert_eq!(c["severity"], "warning", "{}", r.describe());
    assert!(!c["why"].as_str().unwrap().contains("same version"));
    assert!(
        c["seen"][0]
            .as_str()
            .unwrap()
            .contains("cuDNN 9.12.0.46 (store receipt"),
        "{}",
        r.describe()
    );
    let active = &j["summary"]["active_cudnn"][0];
    assert_eq!(active["version"], "9.12.0.46", "{}", r.describe());
    assert_eq!(active["version_source"], "store receipt");

    // Without the store, a's own version is unknown: still mixing, still not "the same".
    fs::remove_dir_all(sb.home().join("store")).unwrap();
    let r = sb.run(["doctor", "--json"]).code_is(7);
    assert_eq!(finding(&r, "sub-libraries-mixed")["severity"], "error");
    let c = finding(&r, "multiple-cudnn-copies");
    assert_eq!(c["severity"], "warning", "{}", r.describe());
    assert!(!c["why"].as_str().unwrap().contains("same version"));
    // And without loading anything at all, from the folders alone.
    let r = sb.run(["doctor", "--json", "--no-load"]).code_is(7);
    let f = finding(&r, "sub-libraries-mixed");
    assert_eq!(f["severity"], "error", "{}", r.describe());
    assert!(
        f["seen"][1]
            .as_str()
            .unwrap()
            .contains("found via LD_LIBRARY_PATH entry 2"),
        "{}",
        r.describe()
    );
}

#[cfg(unix)]
#[test]
fn a_missing_development_link_is_a_warning_not_an_error() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    // Healthy neighbour: with the link, no finding.
    let r = doctor(&sb, &tk, &[]).ok();
    assert!(
        !ids(&r).contains(&"missing-link-library".to_string()),
        "{}",
        r.describe()
    );
    // Without libcudnn.so, programs still load cuDNN (by its SONAME); only
    // `-lcudnn` builds fail: a warning, and doctor exits 0.
    fs::remove_file(tk.join("lib64/libcudnn.so")).unwrap();
    let r = doctor(&sb, &tk, &[]).ok();
    let f = finding(&r, "missing-link-library");
    assert_eq!(f["severity"], "warning", "{}", r.describe());
    assert!(
        f["why"].as_str().unwrap().contains("cannot find -lcudnn"),
        "{f}"
    );
    assert_eq!(r.json()["errors"], 0, "{}", r.describe());
}

#[cfg(unix)]
#[test]
fn a_receipt_this_user_cannot_read_is_a_permission_problem_not_damage() {
    use std::os::unix::fs::PermissionsExt;
    if !crate::deploy_support::is_root() {
        // Needs a second user (nobody, via setpriv) so the mode applies to the reader.
        common::skip::skip(
            "needs root, to run cudnnm as a second user (nobody, through setpriv) whom a mode 0000 receipt denies",
        );
        return;
    }
    let sb = Sandbox::new();
    // Healthy neighbour: the real release, readable: neither finding.
    store_release_in(&sb.home(), "9.27.0.42");
    let r = sb.run(["doctor", "--json", "--no-load"]);
    for id in ["store-release-damaged", "store-release-unreadable"] {
        assert!(!ids(&r).contains(&id.to_string()), "{}", r.describe());
    }
    // The 9.12 release's real receipt, mode 0000, in a home owned by nobody.
    let dir = sb.home().join("store/cuda-12/9.12.0.46");
    fs::create_dir_all(&dir).unwrap();
    let receipt = dir.join("receipt.toml");
    fs::copy(imported("9.12.0.46").join("receipt.toml"), &receipt).unwrap();
    // The shared 9.27 files are hard links: give this home its own copy of them
    // before run_as_nobody changes the home's owner.
    fs::remove_dir_all(sb.home().join("store/cuda-12/9.27.0.42")).unwrap();
    fs::set_permissions(&receipt, fs::Permissions::from_mode(0o000)).unwrap();
    let r = crate::deploy_support::run_as_nobody(&sb, &["doctor", "--json", "--no-load"]);
    let f = finding(&r, "store-release-unreadable");
    assert_eq!(f["severity"], "warning", "{}", r.describe());
    let text = f.to_string();
    assert!(text.contains("9.12.0.46_cuda12"), "{text}");
    assert!(text.contains("ermission denied"), "{text}");
    assert!(text.contains("chmod -R u+rX"), "{text}");
    assert!(
        !ids(&r).contains(&"store-release-damaged".to_string()),
        "{}",
        r.describe()
    );
}

#[cfg(unix)]
#[test]
fn a_library_this_user_may_not_read_is_a_permission_finding_not_a_failed_load() {
    use std::os::unix::fs::PermissionsExt;
    if !crate::deploy_support::is_root() {
        common::skip::skip(
            "needs root, to run cudnnm as a second user (nobody, through setpriv) whom a mode 0000 library denies",
        );
        return;
    }
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    let lib = tk.join("lib64/libcudnn.so.9");
    // A copy of its own (the placed file is a hard link to the shared import).
    fs::remove_file(&lib).unwrap();
    fs::copy(imported("9.27.0.42").join("lib/libcudnn.so.9"), &lib).unwrap();
    let args = ["doctor", "--json", "--cuda-root", tk.to_str().unwrap()];
    // Healthy neighbour: readable, it loads for nobody too.
    let r = crate::deploy_support::run_as_nobody(&sb, &args);
    assert!(
        !ids(&r).contains(&"library-unreadable".to_string()),
        "{}",
        r.describe()
    );
    assert!(
        !ids(&r).contains(&"library-load-failed".to_string()),
        "{}",
        r.describe()
    );
    fs::set_permissions(&lib, fs::Permissions::from_mode(0o000)).unwrap();
    let r = crate::deploy_support::run_as_nobody(&sb, &args);
    let f = finding(&r, "library-unreadable");
    assert_eq!(f["severity"], "error", "{}", r.describe());
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .starts_with("libcudnn.so.9 is present but this user may not read it"),
        "{f}"
    );
    assert!(
        f["why"]
            .as_str()
            .unwrap()
            .contains("cannot open shared object file: Permission denied"),
        "{f}"
    );
    assert_eq!(
        f["commands"][0],
        format!("chmod a+r {}", lib.display()),
        "{f}"
    );
    // Not "does not load, reinstall".
    assert!(
        !ids(&r).contains(&"library-load-failed".to_string()),
        "{}",
        r.describe()
    );
}

#[cfg(unix)]
#[test]
fn a_library_on_a_noexec_mount_names_the_mount_option() {
    if common::skip::need_program("unshare", "util-linux").is_none() {
        return;
    }
    let sb = Sandbox::new();
    let tk = empty_toolkit(&sb, "cuda-12.4");
    let release = imported("9.27.0.42");
    place_headers(&release, &tk);
    // lib64 becomes a noexec tmpfs inside a private mount namespace: the small
    // libcudnn.so.9 copied onto it, the big sub-libraries linked from the import.
    let lib64 = tk.join("lib64");
    let mut script = format!(
        "mount -t tmpfs -o noexec,size=4m tmpfs '{l}' || exit 99; cp '{r}/lib/libcudnn.so.9' '{l}/' || exit 98; ",
        l = lib64.display(),
        r = release.display()
    );
    for e in fs::read_dir(release.join("lib")).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n != "libcudnn.so.9" {
            script.push_str(&format!(
                "ln -s '{}' '{}/{n}'; ",
                e.path().display(),
                lib64.display()
            ));
        }
    }
    let doctor_cmd = format!(
        "exec '{}' doctor --json --cuda-root '{}'",
        common::bin().display(),
        tk.display()
    );
    let run = |script: &str| {
        let out = sb
            .wrapped("unshare")
            .args(["-rm", "sh", "-c", script])
            .output()
            .unwrap();
        Run {
            args: vec!["doctor".into()],
            out,
            root: sb.root().to_path_buf(),
        }
    };
    // Healthy neighbour: the same on an exec tmpfs.
    let healthy = run(&format!("{}{doctor_cmd}", script.replace("noexec,", "")));
    assert!(
        !ids(&healthy).contains(&"library-on-noexec-mount".to_string()),
        "{}",
        healthy.describe()
    );
    assert!(
        !ids(&healthy).contains(&"library-load-failed".to_string()),
        "{}",
        healthy.describe()
    );
    let r = run(&format!("{script}{doctor_cmd}"));
    let f = finding(&r, "library-on-noexec-mount");
    assert_eq!(f["severity"], "error", "{}", r.describe());
    assert!(
        f["why"]
            .as_str()
            .unwrap()
            .contains("failed to map segment from shared object"),
        "{f}"
    );
    assert_eq!(
        f["commands"][0],
        format!("sudo mount -o remount,exec {}", lib64.display()),
        "{f}"
    );
    assert!(
        !ids(&r).contains(&"library-load-failed".to_string()),
        "{}",
        r.describe()
    );
}

/// Copies a store release's `include/` into a toolkit's `include/` (hard links).
#[cfg(unix)]
fn place_headers(release: &Path, tk: &Path) {
    for e in fs::read_dir(release.join("include")).unwrap().flatten() {
        let dest = tk.join("include").join(e.file_name());
        if e.file_type().unwrap().is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), &dest).unwrap();
        } else {
            fs::hard_link(e.path(), &dest).unwrap();
        }
    }
}

/// `cudnnGetVersion()` of the `libcudnn.so.9` a fresh python3 process loads
/// by name, with `ld_path` as LD_LIBRARY_PATH and `cwd` as working folder:
/// what ld.so itself picks.
#[cfg(unix)]
fn dlopen_version(ld_path: &str, cwd: &Path) -> u64 {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import ctypes; l=ctypes.CDLL('libcudnn.so.9'); l.cudnnGetVersion.restype=ctypes.c_size_t; print(l.cudnnGetVersion())",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("LD_LIBRARY_PATH", ld_path)
        .current_dir(cwd)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[cfg(unix)]
#[test]
fn an_empty_ld_library_path_entry_is_the_working_folder_as_for_ld_so() {
    if common::skip::need_program("python3", "python3").is_none() {
        return;
    }
    let mut sb = Sandbox::new();
    let tk = empty_toolkit(&sb, "cuda-12.4");
    place(&imported("9.27.0.42"), &tk);
    // The working folder holds 9.12's libraries (a project's own copy).
    for e in fs::read_dir(imported("9.12.0.46").join("lib"))
        .unwrap()
        .flatten()
    {
        let dest = sb.work().join(e.file_name());
        if e.file_type().unwrap().is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), &dest).unwrap();
        } else {
            fs::hard_link(e.path(), &dest).unwrap();
        }
    }
    let lib64 = tk.join("lib64").display().to_string();
    let work_lib = sb.work().join("libcudnn.so.9").display().to_string();
    // Healthy neighbour: an absolute entry alone; ld.so and doctor agree on 9.27.
    sb.set_env("LD_LIBRARY_PATH", &lib64);
    assert_eq!(dlopen_version(&lib64, &sb.work()), 92700);
    let r = doctor(&sb, &tk, &[]).ok();
    assert!(
        !ids(&r).contains(&"ld-library-path-current-folder".to_string()),
        "{}",
        r.describe()
    );
    assert_eq!(
        r.json()["summary"]["active_cudnn"][0]["version"],
        "9.27.0",
        "{}",
        r.describe()
    );
    // `:x`, `x:` and `x::y`: each empty entry is the working folder.
    for (value, first) in [
        (format!(":{lib64}"), true),
        (format!("{lib64}:"), false),
        (format!("{lib64}::/nonexistent"), false),
        (format!("/nonexistent::{lib64}"), true),
    ] {
        sb.env.retain(|(k, _)| k != "LD_LIBRARY_PATH");
        sb.set_env("LD_LIBRARY_PATH", &value);
        let expect = if first { 91200 } else { 92700 };
        assert_eq!(
            dlopen_version(&value, &sb.work()),
            expect,
            "ld.so with {value}"
        );
        let r = doctor(&sb, &tk, &[]);
        let active = &r.json()["summary"]["active_cudnn"][0];
        let (want_path, want_version) = if first {
            (work_lib.clone(), "9.12.0")
        } else {
            (format!("{lib64}/libcudnn.so.9"), "9.27.0")
        };
        assert_eq!(
            active["path"],
            want_path.as_str(),
            "{value}: {}",
            r.describe()
        );
        assert_eq!(active["version"], want_version, "{value}: {}", r.describe());
        let f = finding(&r, "ld-library-path-current-folder");
        assert_eq!(f["severity"], "warning", "{f}");
        assert!(f["seen"].to_string().contains("is empty"), "{f}");
        assert_eq!(
            f["seen"].to_string().contains("here the loader takes"),
            first,
            "{value}: {f}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_renamed_major_and_a_non_cudnn_library_under_a_cudnn_name_are_said_plainly() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    // Healthy neighbour: the real 9.27 set alone.
    let r = doctor(&sb, &tk, &[]).ok();
    for id in ["library-renamed", "not-a-cudnn-library"] {
        assert!(!ids(&r).contains(&id.to_string()), "{}", r.describe());
    }
    // 9.27's libcudnn.so.9 copied as libcudnn.so.8 (to satisfy a cuDNN 8 program).
    let renamed = tk.join("lib64/libcudnn.so.8");
    fs::copy(imported("9.27.0.42").join("lib/libcudnn.so.9"), &renamed).unwrap();
    let r = doctor(&sb, &tk, &[]);
    // Not "missing sub-libraries" of a cuDNN 8 that is not there.
    assert!(
        !ids(&r).contains(&"missing-library".to_string()),
        "{}",
        r.describe()
    );
    let f = finding(&r, "library-renamed");
    assert_eq!(f["severity"], "error", "{f}");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .starts_with("libcudnn.so.8 is renamed: this file is cuDNN 9"),
        "{f}"
    );
    assert_eq!(f["commands"][0], format!("rm {}", renamed.display()), "{f}");
    assert!(
        !ids(&r).contains(&"library-load-failed".to_string()),
        "{}",
        r.describe()
    );
    fs::remove_file(&renamed).unwrap();

    // A link under a cuDNN name to zlib.
    let Some(libz) = [
        "/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib64/libz.so.1",
        "/lib64/libz.so.1",
    ]
    .into_iter()
    .map(Path::new)
    .find(|p| p.exists()) else {
        common::skip::skip("no libz.so.1 in the usual folders (apt-get install zlib1g)");
        return;
    };
    std::os::unix::fs::symlink(libz, &renamed).unwrap();
    let r = doctor(&sb, &tk, &[]);
    assert!(
        !ids(&r).contains(&"missing-library".to_string()),
        "{}",
        r.describe()
    );
    let f = finding(&r, "not-a-cudnn-library");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .starts_with("libcudnn.so.8 is not a cuDNN library: its SONAME is libz.so.1"),
        "{f}"
    );
    assert!(
        !ids(&r).contains(&"library-load-failed".to_string()),
        "{}",
        r.describe()
    );
    assert!(
        !ids(&r).contains(&"library-renamed".to_string()),
        "{}",
        r.describe()
    );
}

#[cfg(unix)]
#[test]
fn a_pin_is_checked_against_the_toolkit_in_use_and_the_loaded_release() {
    let mut sb = Sandbox::new();
    let tk = toolkit(&mut sb, false);
    sb.set_env("CUDA_HOME", &tk);
    let pin = sb.work().join(".cudnn-version");
    // Healthy neighbour: the pin names the loaded release, built for the toolkit's CUDA.
    fs::write(&pin, "9.27.0.42_cuda12\n").unwrap();
    // Both pinned releases installed (else `pin-not-installed`).
    store_release_in(&sb.home(), "9.27.0.42");
    store_release_in(&sb.home(), "9.12.0.46");
    let r = doctor(&sb, &tk, &[]).ok();
    for id in ["pin-toolkit-mismatch", "pin-release-mismatch"] {
        assert!(!ids(&r).contains(&id.to_string()), "{}", r.describe());
    }
    // Another release of the same major than the real 9.27 the loader takes.
    fs::write(&pin, "9.12.0.46\n").unwrap();
    let r = doctor(&sb, &tk, &[]).ok();
    let f = finding(&r, "pin-release-mismatch");
    assert_eq!(f["severity"], "warning", "{f}");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("asks for cuDNN 9.12.0.46; the loader takes cuDNN 9.27.0 here"),
        "{f}"
    );
    assert!(
        !ids(&r).contains(&"pin-toolkit-mismatch".to_string()),
        "{}",
        r.describe()
    );
    // A build for CUDA 11 pinned while the toolkit in use is CUDA 12.4.
    fs::write(&pin, "9.27.0.42_cuda11\n").unwrap();
    // Not installed either: that is an error of its own, alongside.
    let r = doctor(&sb, &tk, &[]).code_is(7);
    assert_eq!(finding(&r, "pin-not-installed")["severity"], "error");
    let f = finding(&r, "pin-toolkit-mismatch");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .ends_with("is a build for CUDA 11; the toolkit in use is CUDA 12.4"),
        "{f}"
    );
    assert_eq!(f["commands"][0], "cudnnm pin 9.27.0.42_cuda12", "{f}");
}

#[cfg(unix)]
#[test]
fn a_32_bit_zlibwapi_from_mingw_is_found_by_its_machine_type() {
    // Real PE files: a 64-bit "cudnn64_8.dll" importing zlibwapi.dll, and
    // zlibwapi.dll built for x86-64 and for i686, probed on this machine;
    // the saved snapshot then diagnosed as the Windows machine it describes.
    let (Some(_), Some(_)) = (
        common::skip::need_program("x86_64-w64-mingw32-gcc", "gcc-mingw-w64-x86-64"),
        common::skip::need_program("i686-w64-mingw32-gcc", "gcc-mingw-w64-i686"),
    ) else {
        return;
    };
    let mut sb = Sandbox::new();
    let src = sb.root().join("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(
        src.join("z.c"),
        "__declspec(dllexport) int zlibVersion(void) { return 1; }\n",
    )
    .unwrap();
    fs::write(
        src.join("c.c"),
        "int zlibVersion(void);\n__declspec(dllexport) unsigned long long cudnnGetVersion(void) { return 8907 + zlibVersion(); }\n",
    )
    .unwrap();
    let tk = sb.root().join("CUDA/v12.2");
    for d in ["bin", "include", "lib/x64"] {
        fs::create_dir_all(tk.join(d)).unwrap();
    }
    fs::write(tk.join("version.txt"), "CUDA Version 12.2.140\n").unwrap();
    let (z32, z64) = (sb.root().join("zlib32"), sb.root().join("zlib64"));
    let gcc = |cc: &str, args: &[&Path]| {
        let st = std::process::Command::new(cc)
            .arg("-shared")
            .args(args)
            .status()
            .unwrap();
        assert!(st.success(), "{cc} {args:?}");
    };
    for (cc, dir) in [
        ("x86_64-w64-mingw32-gcc", &z64),
        ("i686-w64-mingw32-gcc", &z32),
    ] {
        fs::create_dir_all(dir).unwrap();
        gcc(
            cc,
            &[Path::new("-o"), &dir.join("zlibwapi.dll"), &src.join("z.c")],
        );
    }
    gcc(
        "x86_64-w64-mingw32-gcc",
        &[
            Path::new("-o"),
            &tk.join("bin/cudnn64_8.dll"),
            &src.join("c.c"),
            &z64.join("zlibwapi.dll"),
        ],
    );
    // Probe: both zlib folders are scanned (listed on the loader path here).
    add_ld_path(&mut sb, &z32);
    add_ld_path(&mut sb, &z64);
    doctor(&sb, &tk, &["--no-load", "--report", "probe.json"]);
    let rep: serde_json::Value =
        serde_json::from_slice(&fs::read(sb.work().join("probe.json")).unwrap()).unwrap();
    let mut snap = rep["snapshot"].clone();
    let machines: Vec<String> = snap["dirs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["machines"]["zlibwapi.dll"].as_str().map(String::from))
        .collect();
    assert!(
        machines.contains(&"x86".to_string()) && machines.contains(&"x86_64".to_string()),
        "{machines:?}"
    );
    // The same files as a Windows machine sees them, PATH in two orders.
    snap["os"]["family"] = "windows".into();
    snap["ld_library_path"] = serde_json::json!([]);
    let bin = tk.join("bin").display().to_string();
    let diagnose = |first: &Path| {
        let mut s = snap.clone();
        s["path"] = serde_json::json!([first.display().to_string(), bin]);
        fs::write(sb.work().join("win.json"), serde_json::to_vec(&s).unwrap()).unwrap();
        sb.run(["doctor", "--json", "--snapshot", "win.json"])
    };
    let healthy = diagnose(&z64);
    assert!(
        !ids(&healthy).contains(&"dependency-wrong-architecture".to_string()),
        "{}",
        healthy.describe()
    );
    let r = diagnose(&z32);
    let f = finding(&r, "dependency-wrong-architecture");
    assert!(
        f["title"].as_str().unwrap().starts_with(
            "zlibwapi.dll, which cudnn64_8.dll needs, is built for x86; cudnn64_8.dll is x86_64"
        ),
        "{f}"
    );
    assert!(f["why"].as_str().unwrap().contains("error 193"), "{f}");
}

#[cfg(unix)]
#[test]
fn a_framework_whose_pinned_wheel_loses_to_ld_library_path_is_reported() {
    // torch requires nvidia-cudnn-cu12==9.27.0.42 and has it (real wheel files);
    // a conda-style lib folder on LD_LIBRARY_PATH holds the real 9.12.
    let mut sb = Sandbox::new();
    let venv = sb.root().join("venv");
    let site = venv.join("lib/python3.11/site-packages");
    let lib = site.join("nvidia/cudnn/lib");
    fs::create_dir_all(&lib).unwrap();
    let w = wheel_files("9.27.0.42", true);
    for n in [
        "libcudnn.so.9",
        "libcudnn_graph.so.9",
        "libcudnn_engines_runtime_compiled.so.9",
    ] {
        fs::hard_link(w.join("lib").join(n), lib.join(n)).unwrap();
    }
    for (dir, body) in [
        (
            "torch-2.9.0.dist-info",
            "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\nRequires-Dist: nvidia-cudnn-cu12==9.27.0.42; platform_system == \"Linux\"\n\n",
        ),
        (
            "nvidia_cudnn_cu12-9.27.0.42.dist-info",
            "Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\nVersion: 9.27.0.42\n\n",
        ),
    ] {
        fs::create_dir_all(site.join(dir)).unwrap();
        fs::write(site.join(dir).join("METADATA"), body).unwrap();
    }
    sb.set_env("VIRTUAL_ENV", &venv);
    // Healthy neighbour: nothing else on the loader path.
    let r = sb.run(["doctor", "--json"]);
    assert!(
        !ids(&r).contains(&"framework-cudnn-mismatch".to_string()),
        "{}",
        r.describe()
    );
    // The conda env's lib with another cuDNN 9 on LD_LIBRARY_PATH.
    let conda_lib = sb.root().join("conda/lib");
    fs::create_dir_all(&conda_lib).unwrap();
    for e in fs::read_dir(imported("9.12.0.46").join("lib"))
        .unwrap()
        .flatten()
    {
        let dest = conda_lib.join(e.file_name());
        if e.file_type().unwrap().is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), &dest).unwrap();
        } else {
            fs::hard_link(e.path(), &dest).unwrap();
        }
    }
    add_ld_path(&mut sb, &conda_lib);
    let r = sb.run(["doctor", "--json"]);
    let f = finding(&r, "framework-cudnn-mismatch");
    assert_eq!(
        f["title"],
        "PyTorch 2.9.0 requires nvidia-cudnn-cu12==9.27.0.42 (installed), but the loader takes cuDNN 9.12.0 first",
        "{}",
        r.describe()
    );
    assert!(
        f["seen"]
            .to_string()
            .contains(&conda_lib.display().to_string()),
        "{f}"
    );
}

/// A misspelt key in `config.toml` is named by every command but `exec`/`env`
/// and by doctor (a warning); a file that is not TOML is doctor's
/// `config-invalid` error, not a pin to rewrite.
#[test]
fn unknown_or_broken_settings_are_named_not_ignored() {
    let sb = Sandbox::new();
    fs::create_dir_all(sb.home()).unwrap();
    fs::create_dir_all(sb.work()).unwrap();
    fs::write(sb.home().join("config.toml"), "mdoe = \"copy\"\n").unwrap();
    sb.run(["list"]).ok().stderr_has(&[
        "config.toml' sets a key that cudnnm does not know (mdoe), which change nothing; the settings are default, mode, mirror, index_url, keep_backups",
    ]);
    let r = sb.run(["exec", "--", "true"]);
    assert!(!r.stderr().contains("does not know"), "{}", r.describe());
    let d = sb.run(["doctor", "--json", "--no-load"]);
    assert_eq!(
        finding(&d, "config-invalid")["severity"],
        "warning",
        "{}",
        d.describe()
    );
    fs::write(sb.home().join("config.toml"), "mode = \n").unwrap();
    let d = sb.run(["doctor", "--json", "--no-load"]);
    assert_eq!(
        finding(&d, "config-invalid")["severity"],
        "error",
        "{}",
        d.describe()
    );
    assert!(
        !ids(&d).iter().any(|i| i == "pin-unreadable"),
        "{}",
        d.describe()
    );
}
