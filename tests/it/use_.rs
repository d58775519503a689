//! `cudnnm use`, `rollback`, `backups`, `current`, `toolkits` on fake toolkits
//! in both layouts, run through the real binary. Tested in rustup's threes:
//! `x`, `x_then_rollback`, `x_that_exists`.

// These tests build toolkits with Unix links and run as processes on Linux;
// the Windows layout is exercised here as data (see deploy_support).
#![cfg(unix)]

use crate::common;
use crate::deploy_support;

use std::path::Path;

use common::{Sandbox, fixtures};
use cudnnm::version::Platform;
use deploy_support::*;

fn tk_arg(p: &Path) -> String {
    p.display().to_string()
}

/// A CUDA 10.2 Linux toolkit that already holds a hand-copied cuDNN 7.6.5
/// (a real file, its soname chain, a header), plus cuDNN 9.1.0.70 and
/// 9.12.0.46 for CUDA 12 in the store.
fn linux_world() -> (Sandbox, std::path::PathBuf) {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda 12.4 (runfile) ü"), "12.4.1");
    for v in ["9.1.0.70", "9.12.0.46"] {
        put_redist_linux_12(&sb.home(), v);
    }
    std::fs::write(
        tk.join("include/cudnn.h"),
        fixtures::version_header("7.6.5"),
    )
    .unwrap();
    std::fs::write(
        tk.join("lib64/libcudnn.so.7.6.5"),
        b"\x7fELF hand-copied 7.6.5",
    )
    .unwrap();
    std::os::unix::fs::symlink("libcudnn.so.7.6.5", tk.join("lib64/libcudnn.so.7")).unwrap();
    (sb, tk)
}

#[test]
fn use_deploys_a_linux_release_as_link_chains_and_backs_up_what_was_there() {
    let (sb, tk) = linux_world();
    let before = snapshot(&tk.join("targets"));
    let r = sb
        .run(["use", "9.1.0.70", "--cuda-root", &tk_arg(&tk)])
        .ok();
    let real_tk = std::fs::canonicalize(&tk).unwrap();
    r.stderr_has(&[&format!(
        "cuDNN 7.6.5 (not from cudnnm) → 9.1.0.70 in '{}' (symlink, backup 1)",
        real_tk.display()
    )]);
    let lib = tk.join("lib64");
    // Chains stay chains with their relative targets; real files link into the store.
    assert_eq!(
        std::fs::read_link(lib.join("libcudnn.so")).unwrap(),
        Path::new("libcudnn.so.9")
    );
    assert_eq!(
        std::fs::read_link(lib.join("libcudnn.so.9")).unwrap(),
        Path::new("libcudnn.so.9.1.0")
    );
    let store_file = sb
        .home()
        .join("store/cuda-12/9.1.0.70/lib/libcudnn.so.9.1.0");
    assert_eq!(
        std::fs::read_link(lib.join("libcudnn.so.9.1.0")).unwrap(),
        store_file
    );
    assert_eq!(
        std::fs::read(lib.join("libcudnn.so")).unwrap(),
        fixtures::elf_bytes("libcudnn.so.9 9.1.0.70", false),
        "the chain resolves to the release's library"
    );
    // The old 7.6.5 set is gone from the toolkit, and whole in backup 1.
    assert!(std::fs::symlink_metadata(lib.join("libcudnn.so.7")).is_err());
    let b = sb.home().join("backups/1/files");
    assert_eq!(
        std::fs::read(b.join("lib64/libcudnn.so.7.6.5")).unwrap(),
        b"\x7fELF hand-copied 7.6.5"
    );
    assert_eq!(
        std::fs::read_link(b.join("lib64/libcudnn.so.7")).unwrap(),
        Path::new("libcudnn.so.7.6.5")
    );
    assert_eq!(
        std::fs::read_to_string(b.join("include/cudnn.h")).unwrap(),
        fixtures::version_header("7.6.5")
    );
    // Non-cuDNN files of the toolkit are untouched; licenses stay in the store.
    assert!(tk.join("lib64/libcudart.so.12").is_file());
    assert!(tk.join("include/cuda.h").is_file());
    assert!(!tk.join("lib64/LICENSE").exists() && !tk.join("LICENSE").exists());
    let after = snapshot(&tk.join("targets"));
    assert_ne!(before, after);
    // backups tells the story.
    let j = sb.run(["backups", "--json"]).ok().json();
    assert_eq!(j[0]["id"], 1);
    assert_eq!(j[0]["reason"], "before use 9.1.0.70_cuda12");
    assert_eq!(j[0]["held"], "7.6.5 (not from cudnnm)");
    assert_eq!(j[0]["files"], 3);
    assert_eq!(j[0]["first"], true);
    assert!(
        !sb.home().join("journal").read_dir().unwrap().any(|_| true),
        "journal retired"
    );
}

#[test]
fn use_then_rollback_restores_bytes_and_the_rollback_can_be_rolled_back() {
    let (sb, tk) = linux_world();
    let t = tk_arg(&tk);
    let pristine = snapshot(&tk.join("targets"));
    sb.run(["use", "9.1.0.70", "--cuda-root", &t]).ok();
    sb.run(["use", "9.12", "--cuda-root", &t])
        .ok()
        .stderr_has(&["cuDNN 9.1.0.70 → 9.12.0.46", "(symlink, backup 2)"]);
    let on_912 = snapshot(&tk.join("targets"));
    sb.run(["rollback", "--cuda-root", &t]).ok().stderr_has(&[
        "cuDNN 9.12.0.46 → 9.1.0.70",
        "restored backup 2",
        "backup 3 holds what was replaced",
    ]);
    assert_eq!(
        resolved_cudnn(&tk.join("lib64"))["libcudnn.so"],
        cudnnm::hash::sha256_bytes(&fixtures::elf_bytes("libcudnn.so.9 9.1.0.70", false))
            .to_string()
    );
    let cur = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(cur["toolkits"][0]["release"], "9.1.0.70_cuda12");
    assert_eq!(
        cur["toolkits"][0]["drift"]["changed"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // Roll back the rollback: back on 9.12, byte for byte.
    sb.run(["rollback", "--cuda-root", &t])
        .ok()
        .stderr_has(&["cuDNN 9.1.0.70 → 9.12.0.46"]);
    assert_eq!(snapshot(&tk.join("targets")), on_912);
    // And to the state before cudnnm ever touched the toolkit: its first backup.
    sb.run(["rollback", "--to", "1"])
        .ok()
        .stderr_has(&["→ 7.6.5 (not from cudnnm)"]);
    assert_eq!(
        snapshot(&tk.join("targets")),
        pristine,
        "every original byte and link is back"
    );
    let cur = sb.run(["current", "--cuda-root", &t]).ok();
    assert!(
        cur.stdout()
            .contains("not managed by cudnnm (headers: cuDNN 7.6.5)"),
        "{}",
        cur.describe()
    );
}

#[test]
fn use_of_the_active_release_is_a_noop_that_says_so() {
    let (sb, tk) = linux_world();
    let t = tk_arg(&tk);
    sb.run(["use", "9.1", "--cuda-root", &t]).ok();
    let snap = snapshot(&tk.join("targets"));
    sb.run(["use", "9.1.0.70_cuda12", "--cuda-root", &t])
        .ok()
        .stderr_has(&["is already active", "nothing changed"]);
    assert_eq!(snapshot(&tk.join("targets")), snap);
    assert_eq!(
        sb.run(["backups", "--json"])
            .ok()
            .json()
            .as_array()
            .unwrap()
            .len(),
        1,
        "no new backup"
    );
    // A changed file is drift: `current` says so and `use` deploys again.
    std::fs::remove_file(tk.join("lib64/libcudnn.so")).unwrap();
    let cur = sb.run(["current", "--cuda-root", &t]).ok();
    assert!(
        cur.stdout().contains("drift: 1 missing"),
        "{}",
        cur.describe()
    );
    sb.run(["use", "9.1", "--cuda-root", &t])
        .ok()
        .stderr_has(&["deploying it again", "backup 2"]);
    assert_eq!(snapshot(&tk.join("targets")), snap);
}

#[test]
fn windows_release_into_a_windows_layout_toolkit_by_copy_and_hardlink() {
    let sb = Sandbox::new();
    let tk = windows_toolkit(
        &sb.root()
            .join("Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.2"),
        "11.2.152",
    );
    let f8 = fixtures::windows_zip_8_1_0_77();
    put_release(&sb.home(), &f8, "8.1.0.77", "11.2", Platform::WindowsX86_64);
    // A stale cuDNN 7 DLL next to an older hand-copied 8.0 set: all of it is cuDNN.
    std::fs::write(tk.join("bin/cudnn64_7.dll"), b"MZ stale 7").unwrap();
    std::fs::write(tk.join("bin/cudnn64_8.dll"), b"MZ hand 8.0.5").unwrap();
    std::fs::write(tk.join("lib/x64/cudnn.lib"), b"!<arch>\nhand").unwrap();
    let t = tk_arg(&tk);
    let pristine = snapshot(&tk);
    sb.run(["use", "8.1.0.77", "--cuda-root", &t, "--mode", "copy"])
        .ok()
        .stderr_has(&["→ 8.1.0.77", "(copy, backup 1)"]);
    let bin = resolved_cudnn(&tk.join("bin"));
    assert_eq!(
        bin.len(),
        7,
        "7 DLLs of 8.1, the stale 7 DLL moved out: {bin:?}"
    );
    assert!(!bin.contains_key("cudnn64_7.dll"));
    assert_eq!(resolved_cudnn(&tk.join("include")).len(), 9);
    assert_eq!(resolved_cudnn(&tk.join("lib/x64")).len(), 14);
    assert_eq!(
        bin["cudnn64_8.dll"],
        cudnnm::hash::sha256_bytes(&fixtures::dll_bytes("cudnn64_8.dll 8.1.0.77")).to_string()
    );
    let meta = std::fs::symlink_metadata(tk.join("bin/cudnn64_8.dll")).unwrap();
    assert!(
        meta.is_file() && meta.permissions().readonly(),
        "copies are real, read-only files"
    );
    assert!(
        tk.join("bin/cudart64_110.dll").is_file(),
        "CUDA's own DLLs stay"
    );
    let backup = sb.home().join("backups/1/files");
    assert_eq!(
        std::fs::read(backup.join("bin/cudnn64_7.dll")).unwrap(),
        b"MZ stale 7"
    );
    assert_eq!(
        std::fs::read(backup.join("lib/x64/cudnn.lib")).unwrap(),
        b"!<arch>\nhand"
    );
    // Same release, other mode: deployed again as hard links into the store.
    sb.run(["use", "8.1.0.77", "--cuda-root", &t, "--mode", "hardlink"])
        .ok()
        .stderr_has(&["8.1.0.77 → 8.1.0.77", "(hardlink, backup 2)"]);
    use std::os::unix::fs::MetadataExt;
    let store_dll = sb.home().join("store/cuda-11.2/8.1.0.77/bin/cudnn64_8.dll");
    assert_eq!(
        std::fs::metadata(tk.join("bin/cudnn64_8.dll"))
            .unwrap()
            .ino(),
        std::fs::metadata(&store_dll).unwrap().ino()
    );
    let cur = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(cur["toolkits"][0]["mode"], "hardlink");
    // Unchanged copies are not kept twice: backup 2 records them by hash and
    // store file, and holds no bytes of its own.
    let j = sb.run(["backups", "--json"]).ok().json();
    assert_eq!(j[1]["files"], 30);
    assert_eq!(j[1]["size"], 0);
    assert!(
        !sb.home().join("backups/2/files/bin/cudnn64_8.dll").exists(),
        "unchanged copies are not duplicated into the backup"
    );
    assert!(
        !std::fs::read_dir(tk.join("bin")).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".cudnnm-")),
        "and nothing is left aside in the toolkit"
    );
    let held = backup_holdings(&sb.home().join("backups/2"));
    assert_eq!(
        held["cudnn64_8.dll"],
        format!("sha:{}", bin["cudnn64_8.dll"])
    );
    // Rolling back to the copies brings them back byte for byte, with their time.
    let copy_mtime = |p: &Path| std::fs::symlink_metadata(p).unwrap().modified().unwrap();
    let store_mtime = copy_mtime(&store_dll);
    sb.run(["rollback", "--cuda-root", &t])
        .ok()
        .stderr_has(&["8.1.0.77 → 8.1.0.77", "restored backup 2; copy"]);
    let dll = tk.join("bin/cudnn64_8.dll");
    assert_ne!(
        std::fs::metadata(&dll).unwrap().ino(),
        std::fs::metadata(&store_dll).unwrap().ino()
    );
    assert_eq!(resolved_cudnn(&tk.join("bin")), bin);
    assert_eq!(
        copy_mtime(&dll),
        store_mtime,
        "a copy keeps its source's modification time"
    );
    let cur = sb.run(["current", "--cuda-root", &t]).ok();
    assert!(
        cur.stdout().contains("8.1.0.77_cuda11.2, copy,"),
        "{}",
        cur.describe()
    );
    assert!(cur.stdout().contains("files match"), "{}", cur.describe());
    let cur = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(cur["toolkits"][0]["layout"], "windows");
    // Back to the hand-copied state, byte for byte.
    sb.run(["rollback", "--to", "1"]).ok();
    assert_eq!(snapshot(&tk), pristine);
}

#[test]
fn a_release_for_another_cuda_is_refused_naming_the_ones_that_fit_unless_forced() {
    let sb = Sandbox::new();
    let tk = windows_toolkit(&sb.root().join("v10.2"), "10.2.89");
    put_release(
        &sb.home(),
        &fixtures::windows_zip_8_1_0_77(),
        "8.1.0.77",
        "11.2",
        Platform::WindowsX86_64,
    );
    put_release(
        &sb.home(),
        &fixtures::windows_zip("10.2", "7.6.5.32", "cudnn-10.2-windows10-x64-v7.6.5.32.zip"),
        "7.6.5.32",
        "10.2",
        Platform::WindowsX86_64,
    );
    let t = tk_arg(&tk);
    let snap = snapshot(&tk);
    sb.run(["use", "8.1.0.77", "--cuda-root", &t])
        .code_is(8)
        .stderr_has(&[
            "cuDNN 8.1.0.77_cuda11.2 is built for CUDA 11.2 and does not fit the CUDA 10.2 toolkit",
            "installed releases that fit: 7.6.5.32_cuda10.2",
            "--force",
        ]);
    assert_eq!(snapshot(&tk), snap, "a refusal changes nothing");
    sb.run([
        "use",
        "8.1.0.77",
        "--cuda-root",
        &t,
        "--force",
        "--mode",
        "copy",
    ])
    .ok()
    .stderr_has(&["deploying it anyway (--force)", "→ 8.1.0.77"]);
    // A Linux release never goes into a Windows-layout toolkit.
    put_release(
        &sb.home(),
        &fixtures::linux_tgz("10.2", "7.6.4.38"),
        "7.6.4.38",
        "10.2",
        Platform::LinuxX86_64,
    );
    let linux = linux_toolkit(&sb.root().join("cuda-10.2"), "10.2.89");
    sb.run(["use", "7.6", "--cuda-root", &tk_arg(&linux)])
        .ok()
        .stderr_has(&["→ 7.6.4.38"]);
    let e = sb
        .run(["use", "8.1.0.77", "--cuda-root", &tk_arg(&linux), "--force"])
        .code_is(8);
    e.stderr_has(&["installed only for windows-x86_64", "linux layout"]);
}

#[test]
fn a_prefix_picks_the_newest_installed_release_that_fits() {
    let sb = Sandbox::new();
    let tk = windows_toolkit(&sb.root().join("v11.4"), "11.4.0");
    put_release(
        &sb.home(),
        &fixtures::windows_zip_8_1_0_77(),
        "8.1.0.77",
        "11.2",
        Platform::WindowsX86_64,
    );
    put_release(
        &sb.home(),
        &fixtures::windows_zip("10.2", "8.1.1.33", "cudnn-10.2-windows10-x64-v8.1.1.33.zip"),
        "8.1.1.33",
        "10.2",
        Platform::WindowsX86_64,
    );
    // 8.1.1.33 is newer but built for CUDA 10.2; 8.1.0.77 (CUDA 11.2) fits 11.4.
    sb.run(["use", "8.1", "--cuda-root", &tk_arg(&tk)])
        .ok()
        .stderr_has(&["→ 8.1.0.77"]);
    sb.run(["use", "9", "--cuda-root", &tk_arg(&tk)])
        .code_is(3)
        .stderr_has(&[
            "cuDNN 9 is not installed",
            // The newest 9 the catalog builds for CUDA 11 (a CUDA 11.4 toolkit), not a
            // CUDA 12 wheel — and for the toolkit's Windows layout: the Windows archive
            // (`--platform`), not a Linux wheel `use` would then refuse for it.
            "cudnnm install 9.10.0.56_cuda11 --platform windows-x86_64",
        ]);
    sb.run(["use", "--cuda-root", &tk_arg(&tk)])
        .code_is(2)
        .stderr_has(&[
            "no SPEC given and no .cudnn-version pin or default found",
            "cudnnm pin",
        ]);
}

#[test]
fn a_toolkit_the_user_may_not_write_is_refused_whole() {
    let (sb, tk) = linux_world();
    let snap = snapshot(&tk.join("targets"));
    let real_lib = std::fs::canonicalize(tk.join("lib64")).unwrap();
    let t = tk_arg(&tk);
    let r = if is_root() {
        // Root ignores permission bits; an ordinary user does not: run as
        // nobody over this root-owned toolkit
        // (`docs/breakages.md#toolkit-not-writable`).
        run_as_nobody(&sb, &["use", "9.1.0.70", "--cuda-root", &t])
    } else {
        let mut p = std::fs::metadata(&real_lib).unwrap().permissions();
        p.set_readonly(true);
        std::fs::set_permissions(&real_lib, p).unwrap();
        sb.run(["use", "9.1.0.70", "--cuda-root", &t])
    };
    let r = r.code_is(5);
    let denied = format!(
        "no write access to '{}' (a link to '{}')",
        tk.join("include").display(),
        std::fs::canonicalize(tk.join("include")).unwrap().display()
    );
    let lib_denied = format!(
        "'{}' (a link to '{}'): ",
        tk.join("lib64").display(),
        real_lib.display()
    );
    r.stderr_has(&[
        "cannot change cuDNN in",
        &denied,
        "(and 1 more)",
        &lib_denied,
        "nothing was changed",
        "sudo cudnnm --home",
        "cudnnm exec --version 9.1.0.70_cuda12",
    ]);
    if !is_root() {
        let mut p = std::fs::metadata(&real_lib).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        p.set_readonly(false);
        std::fs::set_permissions(&real_lib, p).unwrap();
    }
    assert_eq!(snapshot(&tk.join("targets")), snap, "not a byte changed");
    assert!(
        !sb.home().join("backups/1").exists(),
        "no backup was started"
    );
}

#[test]
fn the_test_deny_hook_refuses_through_the_same_preflight() {
    // Debug builds let tests deny folders to the preflight's access check
    // (CUDNNM_TEST_DENY_WRITE), so the refusal path runs whoever runs the tests.
    let (mut sb, tk) = linux_world();
    let snap = snapshot(&tk.join("targets"));
    sb.set_env("CUDNNM_TEST_DENY_WRITE", tk.join("include"));
    sb.run(["use", "9.1.0.70", "--cuda-root", &tk_arg(&tk)])
        .code_is(5)
        .stderr_has(&["no write access to", "include", "nothing was changed"]);
    assert_eq!(snapshot(&tk.join("targets")), snap);
    sb.run(["rollback", "--cuda-root", &tk_arg(&tk)])
        .code_is(3)
        .stderr_has(&["no backups of"]);
}

#[test]
fn a_home_the_user_may_not_write_says_to_fix_the_home_not_to_use_sudo() {
    let (mut sb, tk) = linux_world();
    let snap = snapshot(&tk.join("targets"));
    sb.set_env("CUDNNM_TEST_DENY_WRITE", sb.home());
    let r = sb
        .run(["use", "9.1.0.70", "--cuda-root", &tk_arg(&tk)])
        .code_is(5);
    let home = sb.home().display().to_string();
    let first = r.stderr().lines().next().unwrap_or_default().to_string();
    assert!(
        first.starts_with("error: cannot change cuDNN in")
            && first.contains(&format!("no write access to '{home}")),
        "{}",
        r.describe()
    );
    let help = r
        .stderr()
        .lines()
        .find(|l| l.starts_with("help:"))
        .unwrap_or_default()
        .to_string();
    assert!(
        help.starts_with(&format!(
            "help: make the cudnnm home yours again: `sudo chown -R \"$(id -u):$(id -g)\" '{home}'`"
        )),
        "{}",
        r.describe()
    );
    assert!(!help.contains("sudo cudnnm --home"), "{help}");
    assert_eq!(snapshot(&tk.join("targets")), snap);
}

#[test]
fn releases_imported_by_install_deploy_in_both_layouts() {
    let sb = Sandbox::new();
    let dl = sb.root().join("downloads");
    std::fs::create_dir_all(&dl).unwrap();
    // An old Linux tgz (soname chain, static library) into a CUDA 10.2 toolkit.
    let tgz = fixtures::linux_tgz("10.2", "7.6.5.32").write(&dl);
    sb.run(["install".as_ref(), tgz.as_os_str()]).ok();
    let lin = linux_toolkit(&sb.root().join("cuda-10.2"), "10.2.89");
    sb.run(["use", "7.6.5", "--cuda-root", &tk_arg(&lin)])
        .ok()
        .stderr_has(&["(none) → 7.6.5.32"]);
    assert_eq!(
        std::fs::read_link(lin.join("lib64/libcudnn.so.7")).unwrap(),
        Path::new("libcudnn.so.7.6.5")
    );
    assert_eq!(
        std::fs::read(lin.join("lib64/libcudnn_static.a")).unwrap(),
        b"!<arch>\nstatic",
        "static libraries are deployed too"
    );
    assert_eq!(
        std::fs::read_to_string(lin.join("include/cudnn.h")).unwrap(),
        fixtures::version_header("7.6.5.32")
    );
    // The 7.1 Windows zip for CUDA 8.0 into a Windows-layout CUDA 8.0 toolkit (version.txt).
    let zip = fixtures::windows_zip_7_1_3().write(&dl);
    sb.run(["install".as_ref(), zip.as_os_str()]).ok();
    let win = windows_toolkit(
        &sb.root().join("NVIDIA GPU Computing Toolkit/CUDA/v8.0"),
        "8.0.61",
    );
    sb.run([
        "use",
        "7.1.3",
        "--cuda-root",
        &tk_arg(&win),
        "--mode",
        "copy",
    ])
    .ok();
    assert_eq!(
        std::fs::read(win.join("bin/cudnn64_7.dll")).unwrap(),
        fixtures::dll_bytes("cudnn64_7.dll 7.1.3")
    );
    assert!(win.join("lib/x64/cudnn.lib").is_file());
    assert!(win.join("include/cudnn.h").is_file());
    assert!(
        !win.join("NVIDIA_SLA_cuDNN_Support.txt").exists(),
        "the license stays in the store"
    );
    // 7.1.3 (CUDA 8.0) does not fit CUDA 10.2.
    sb.run(["use", "7.1.3", "--cuda-root", &tk_arg(&lin)])
        .code_is(8);
    let cur = sb.run(["toolkits"]).ok().stdout();
    assert!(cur.contains("7.1.3_cuda8.0, copy"), "{cur}");
    assert!(cur.contains("7.6.5.32_cuda10.2, symlink"), "{cur}");
}

#[test]
fn old_backups_are_pruned_but_never_a_toolkits_first() {
    let (sb, tk) = linux_world();
    std::fs::create_dir_all(sb.home()).unwrap();
    std::fs::write(sb.home().join("config.toml"), "keep_backups = 2\n").unwrap();
    let t = tk_arg(&tk);
    for (i, v) in ["9.1", "9.12", "9.1", "9.12", "9.1"].iter().enumerate() {
        let r = sb.run(["use", v, "--cuda-root", &t]).ok();
        if i == 3 {
            r.stderr_has(&["removed old backup 2"]);
        }
    }
    let j = sb.run(["backups", "--json"]).ok().json();
    let ids: Vec<u64> = j
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, vec![1, 4, 5]);
    assert_eq!(j[0]["held"], "7.6.5 (not from cudnnm)");
    assert_eq!(j[0]["first"], true);
    // The hand-copied 7.6.5 files are the user's (no release ships those
    // bytes): the first backup keeps them, and says how many, their bytes and which.
    let files = sb.home().join("backups/1/files");
    let yours = std::fs::metadata(files.join("include/cudnn.h"))
        .unwrap()
        .len()
        + std::fs::metadata(files.join("lib64/libcudnn.so.7.6.5"))
            .unwrap()
            .len();
    assert_eq!(
        j[0]["users_files"],
        serde_json::json!(["include/cudnn.h", "lib64/libcudnn.so.7.6.5"])
    );
    assert_eq!(j[0]["users_bytes"], yours);
    assert_eq!(j[1]["users_bytes"], 0);
    let text = sb.run(["backups"]).ok().stdout();
    assert!(
        text.contains(&format!(
            "7.6.5 (not from cudnnm) (first; yours: 2 files, {}: include/cudnn.h, lib64/libcudnn.so.7.6.5)",
            cudnnm::store::human_size(yours)
        )),
        "{text}"
    );
    // The first backup still restores the original files.
    sb.run(["rollback", "--to", "1"]).ok();
    assert_eq!(
        std::fs::read(tk.join("lib64/libcudnn.so.7.6.5")).unwrap(),
        b"\x7fELF hand-copied 7.6.5"
    );
}

#[test]
fn toolkits_lists_environment_toolkits_and_deployments() {
    let (mut sb, tk) = linux_world();
    let other = windows_toolkit(
        &sb.root().join("NVIDIA GPU Computing Toolkit/CUDA/v11.8"),
        "11.8.0",
    );
    sb.set_env("CUDA_HOME", &other);
    sb.run(["use", "9.1", "--cuda-root", &tk_arg(&tk)]).ok();
    let j = sb.run(["toolkits", "--json"]).ok().json();
    let arr = j.as_array().unwrap();
    let real_other = std::fs::canonicalize(&other).unwrap();
    let real_tk = std::fs::canonicalize(&tk).unwrap();
    let by_root = |p: &Path| {
        arr.iter()
            .find(|t| t["root"] == p.display().to_string())
            .cloned()
    };
    let o = by_root(&real_other).expect("CUDA_HOME toolkit listed");
    assert!(o["found_by"].as_str().unwrap().contains("CUDA_HOME"));
    assert_eq!(o["cuda"], "11.8.0");
    assert_eq!(o["layout"], "windows");
    let d = by_root(&real_tk).expect("deployed toolkit listed");
    assert_eq!(d["release"], "9.1.0.70_cuda12");
    assert_eq!(d["mode"], "symlink");
    // `use --cuda 11.8` finds the CUDA_HOME toolkit by version.
    sb.run(["use", "9.1", "--cuda", "11.8"])
        .code_is(8)
        .stderr_has(&["installed only for linux-x86_64"]);
    sb.run(["use", "9.1", "--cuda", "10.0"])
        .code_is(3)
        .stderr_has(&["no CUDA 10.0 toolkit found"]);
}

#[test]
fn a_rollback_from_a_tampered_backup_fails_and_changes_nothing() {
    let (sb, tk) = linux_world();
    let t = tk_arg(&tk);
    sb.run(["use", "9.1.0.70", "--cuda-root", &t]).ok();
    let on_9 = snapshot(&tk.join("targets"));
    // Same size, different bytes: only the hash can tell.
    let f = sb.home().join("backups/1/files/lib64/libcudnn.so.7.6.5");
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[0] ^= 0xff;
    std::fs::write(&f, &bytes).unwrap();
    sb.run(["rollback", "--to", "1"]).code_is(4).stderr_has(&[
        &format!(
            "error: backup 1 of '{}' is damaged and cannot be restored: '{}' (lib64/libcudnn.so.7.6.5) no longer holds what was recorded when the backup was made (its SHA-256 changed)",
            std::fs::canonicalize(&tk).unwrap().display(),
            f.display()
        ),
        "nothing changed: the earlier files are back",
        "help: no older backup of that toolkit is whole; remove the damaged backup with `cudnnm backups remove 1 --force` (the files it holds go with it)",
    ]);
    assert_eq!(
        snapshot(&tk.join("targets")),
        on_9,
        "the undo put every file back"
    );
    let j = sb.run(["backups", "--json"]).ok().json();
    assert_eq!(
        j.as_array().unwrap().len(),
        1,
        "the failed change left no backup"
    );
    let cur = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(
        cur["toolkits"][0]["release"], "9.1.0.70_cuda12",
        "the record is the earlier one"
    );
    assert!(!sb.home().join("journal").read_dir().unwrap().any(|_| true));
}

#[test]
fn use_without_spec_deploys_the_pin_and_current_says_why() {
    let (mut sb, tk) = linux_world();
    let t = tk_arg(&tk);
    std::fs::write(sb.work().join(".cudnn-version"), "# this project\n9.12\n").unwrap();
    sb.run(["use", "--cuda-root", &t]).ok().stderr_has(&[
        "using cuDNN 9.12",
        ".cudnn-version' line 2",
        "→ 9.12.0.46",
    ]);
    let cur = sb.run(["current", "--cuda-root", &t]).ok();
    let out = cur.stdout();
    assert!(
        out.contains("spec here: 9.12 (from '")
            && out.contains(".cudnn-version' line 2) → 9.12.0.46_cuda12"),
        "{}",
        cur.describe()
    );
    assert!(
        out.contains("9.12.0.46_cuda12, symlink, deployed"),
        "{}",
        cur.describe()
    );
    // CUDNNM_VERSION comes before the pin file.
    sb.set_env("CUDNNM_VERSION", "9.1");
    let j = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(j["spec"]["spec"], "9.1");
    assert_eq!(j["spec"]["source"]["kind"], "env-var");
    assert_eq!(j["spec"]["release"], "9.1.0.70_cuda12");
    sb.run(["use", "--cuda-root", &t])
        .ok()
        .stderr_has(&["9.12.0.46 → 9.1.0.70"]);
}

#[test]
fn use_and_rollback_leave_cudnn_frontend_and_samples_alone_and_name_unknown_cudnn_files() {
    let (sb, tk) = linux_world();
    let t = tk_arg(&tk);
    let inc = tk.join("include");
    // cudnn-frontend (header-only, NVIDIA's) and a sample note beside cuDNN's headers.
    let kept: Vec<(&str, &[u8])> = vec![
        ("cudnn_frontend.h", b"// cudnn-frontend 1.8 umbrella\n"),
        ("cudnn_frontend_Engine.h", b"// frontend engine\n"),
        ("cudnn_backend_base.h", b"// frontend backend base\n"),
        ("cudnn_frontend/graph_interface.h", b"// frontend graph\n"),
        ("cudnn_samples_README.txt", b"samples live elsewhere\n"),
    ];
    std::fs::create_dir_all(inc.join("cudnn_frontend")).unwrap();
    for (rel, bytes) in &kept {
        std::fs::write(inc.join(rel), bytes).unwrap();
    }
    // Looks like cuDNN, but no release ships it: moved like any stale file, and named.
    std::fs::write(inc.join("cudnn_foo.h"), b"#define FOO 1\n").unwrap();
    let pristine = snapshot(&tk.join("targets"));
    let r = sb
        .run(["use", "9.1.0.70", "--cuda-root", &t, "--json"])
        .ok();
    let r = r.stderr_has(&[
        "→ 9.1.0.70",
        "also moved to backup 1: include/cudnn_foo.h (not part of any cuDNN release)",
    ]);
    assert_eq!(
        r.json()["not_from_a_release"],
        serde_json::json!(["include/cudnn_foo.h"])
    );
    let check_kept = |when: &str| {
        for (rel, bytes) in &kept {
            assert_eq!(
                std::fs::read(inc.join(rel)).unwrap(),
                *bytes,
                "{rel} byte for byte {when}"
            );
        }
    };
    check_kept("after use");
    assert!(!inc.join("cudnn_foo.h").exists());
    assert_eq!(
        std::fs::read(sb.home().join("backups/1/files/include/cudnn_foo.h")).unwrap(),
        b"#define FOO 1\n"
    );
    assert!(
        !sb.home()
            .join("backups/1/files/include/cudnn_frontend.h")
            .exists(),
        "frontend headers are not backed up: they never moved"
    );
    let j = sb.run(["backups", "--json"]).ok().json();
    assert_eq!(j[0]["files"], 4, "7.6.5's three files and cudnn_foo.h");
    // Not drift either: `current` does not count them as extra.
    let cur = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(cur["toolkits"][0]["drift"]["extra"], serde_json::json!([]));
    sb.run(["rollback", "--cuda-root", &t]).ok();
    check_kept("after rollback");
    assert_eq!(
        snapshot(&tk.join("targets")),
        pristine,
        "the rollback restores cudnn_foo.h and the 7.6.5 set; the rest never moved"
    );
}

/// The files of `tk` and of the home's backups and deployments, for "nothing changed".
fn world_state(sb: &Sandbox, tk: &Path) -> (std::collections::BTreeMap<String, String>, bool) {
    (
        snapshot(tk),
        sb.home().join("backups").exists() || sb.home().join("deployments.toml").exists(),
    )
}

/// Runs `cudnnm ARGS`, asserts exit `code` and that neither the toolkit nor
/// the home's backups and records changed; returns the run.
#[track_caller]
fn refused_unchanged(sb: &Sandbox, tk: &Path, args: &[&str], code: i32) -> common::Run {
    let before = world_state(sb, tk);
    let r = sb.run(args).code_is(code);
    assert_eq!(world_state(sb, tk), before, "nothing changed");
    r
}

#[test]
fn a_damaged_store_release_is_named_with_how_to_reinstall_it_and_nothing_changes() {
    let (sb, tk) = linux_world();
    let t = tk_arg(&tk);
    let before = world_state(&sb, &tk);
    // The real library of the chain is gone: the chain's links now dangle.
    let rel = sb.home().join("store/cuda-12/9.1.0.70");
    let lib = rel.join("lib/libcudnn.so.9.1.0");
    let mut p = std::fs::metadata(rel.join("lib")).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    p.set_readonly(false);
    std::fs::set_permissions(rel.join("lib"), p).unwrap();
    std::fs::remove_file(&lib).unwrap();
    sb.run(["use", "9.1.0.70", "--cuda-root", &t])
        .code_is(4)
        .stderr_has(&[
            &format!(
                "error: cuDNN 9.1.0.70_cuda12 in the store is damaged: '{}' ",
                rel.join("lib/libcudnn.so").display()
            ),
            "is a broken link (to 'libcudnn.so.9')",
            // From the source its receipt names: here a local archive.
            "help: reinstall it from the file it came from (cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz): `cudnnm install PATH/TO/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz --force`",
        ]);
    // A file of the wrong size is named too.
    std::fs::write(&lib, b"short").unwrap();
    sb.run(["use", "9.1.0.70", "--cuda-root", &t, "--mode", "copy"])
        .code_is(4)
        .stderr_has(&[&format!("'{}' holds 5 bytes, not the", lib.display())]);
    assert_eq!(world_state(&sb, &tk), before, "nothing changed");
}

#[test]
fn a_folder_where_a_cudnn_file_must_go_is_named_and_left_alone() {
    let (sb, tk) = linux_world();
    let t = tk_arg(&tk);
    // cudnn_version.h, which 9.1 places, is a folder with someone's file in it.
    let inc = tk.join("include");
    std::fs::create_dir(inc.join("cudnn_version.h")).unwrap();
    std::fs::write(inc.join("cudnn_version.h/notes.txt"), b"mine").unwrap();
    refused_unchanged(&sb, &tk, &["use", "9.1.0.70", "--cuda-root", &t], 8).stderr_has(&[
        &format!(
            "error: '{}' is a folder, where cuDNN's file include/cudnn_version.h must go",
            inc.join("cudnn_version.h").display()
        ),
        "help: move that folder out of",
    ]);
    assert_eq!(
        std::fs::read(inc.join("cudnn_version.h/notes.txt")).unwrap(),
        b"mine"
    );
}

#[test]
fn a_file_given_as_the_toolkit_root_is_refused_clearly() {
    let (sb, _tk) = linux_world();
    let f = sb.root().join("cuda.run");
    std::fs::write(&f, b"#!/bin/sh installer").unwrap();
    sb.run(["use", "9.1.0.70", "--cuda-root", &tk_arg(&f)])
        .code_is(3)
        .stderr_has(&[
            &format!(
                "error: '{}' is a file, not a CUDA toolkit folder",
                f.display()
            ),
            "help: pass the toolkit root folder",
        ]);
    assert_eq!(std::fs::read(&f).unwrap(), b"#!/bin/sh installer");
    assert!(!sb.home().join("backups").exists());
}

#[test]
fn a_dangling_lib64_link_is_named_with_where_it_points() {
    let (sb, tk) = linux_world();
    let t = tk_arg(&tk);
    // The runfile's targets/ folder was removed; lib64 points at nothing.
    std::fs::rename(
        tk.join("targets/x86_64-linux/lib"),
        sb.root().join("moved-lib"),
    )
    .unwrap();
    let real = std::fs::canonicalize(&tk).unwrap();
    refused_unchanged(&sb, &tk, &["use", "9.1.0.70", "--cuda-root", &t], 3).stderr_has(&[
        &format!(
            "error: '{}' is a link to 'targets/x86_64-linux/lib', which does not exist",
            real.join("lib64").display()
        ),
        "help: restore the folder it points to",
    ]);
}

#[test]
fn a_garbage_version_json_falls_back_to_cuda_h_and_is_named_when_nothing_else_works() {
    let (sb, tk) = linux_world();
    let t = tk_arg(&tk);
    std::fs::write(tk.join("version.json"), b"\x00\x01 not json {").unwrap();
    // include/cuda.h says 12040: CUDA 12.4, which 9.1.0.70 (CUDA 12) fits.
    let j = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(j["toolkits"][0]["cuda"], "12.4");
    sb.run(["use", "9.1.0.70", "--cuda-root", &t])
        .ok()
        .stderr_has(&["→ 9.1.0.70"]);
    // Without cuda.h nothing gives the version: the error names version.json.
    let (sb2, tk2) = linux_world();
    std::fs::write(tk2.join("version.json"), b"garbage").unwrap();
    std::fs::remove_file(tk2.join("include/cuda.h")).unwrap();
    let real = std::fs::canonicalize(&tk2).unwrap();
    let t2 = tk_arg(&tk2);
    refused_unchanged(&sb2, &tk2, &["use", "9.1.0.70", "--cuda-root", &t2], 3).stderr_has(&[
        &format!(
            "error: could not read the CUDA version of '{}'",
            real.display()
        ),
        &format!(
            "caused by: '{}' is not valid JSON",
            real.join("version.json").display()
        ),
        "help: ",
    ]);
}

#[test]
fn cuda_major_minor_finds_a_toolkit_with_a_patch_version() {
    let (mut sb, tk) = linux_world();
    // The toolkit says 12.4.1; `--cuda 12.4` names it.
    sb.set_env("CUDA_HOME", &tk);
    sb.run(["use", "9.1.0.70", "--cuda", "12.4"])
        .ok()
        .stderr_has(&["→ 9.1.0.70"]);
    let j = sb.run(["current", "--json"]).ok().json();
    assert_eq!(j["toolkits"][0]["cuda"], "12.4.1");
    assert_eq!(j["toolkits"][0]["release"], "9.1.0.70_cuda12");
    sb.run(["use", "9.1.0.70", "--cuda", "12.5"])
        .code_is(3)
        .stderr_has(&["no CUDA 12.5 toolkit found"]);
}

#[test]
fn backup_ids_are_numbers_everywhere_and_no_cudnn_reads_the_same() {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    let t = tk_arg(&tk);
    // A toolkit without cuDNN: `current` and `toolkits` say "no cuDNN", the
    // words the backup's "held" label uses.
    let cur = sb.run(["current", "--cuda-root", &t]).ok().stdout();
    assert!(cur.contains("(CUDA 12.4.1): no cuDNN\n"), "{cur}");
    let used = sb
        .run(["use", "9.1.0.70", "--cuda-root", &t, "--json"])
        .ok()
        .json();
    assert_eq!(used["backup"], 1);
    let j = sb.run(["backups", "--json"]).ok().json();
    assert_eq!(j[0]["id"], 1);
    assert_eq!(j[0]["held"], "no cuDNN");
    let cur = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(
        cur["toolkits"][0]["backup"], 1,
        "a number, as in backups --json"
    );
    let tks = sb.run(["toolkits", "--json"]).ok().json();
    assert_eq!(tks[0]["backup"], 1);
    let rb = sb
        .run(["rollback", "--cuda-root", &t, "--json"])
        .ok()
        .json();
    assert_eq!(
        (rb["restored_backup"].clone(), rb["backup"].clone()),
        (1.into(), 2.into())
    );
    let cur = sb.run(["current", "--cuda-root", &t]).ok().stdout();
    assert!(cur.contains("(CUDA 12.4.1): no cuDNN\n"), "{cur}");
    // cuDNN files without a version header are not "no cuDNN".
    std::fs::write(tk.join("lib64/libcudnn.so.9"), b"\x7fELF copied").unwrap();
    let cur = sb.run(["current", "--cuda-root", &t]).ok().stdout();
    assert!(
        cur.contains("not managed by cudnnm (1 cuDNN file, no version header)"),
        "{cur}"
    );
}

#[test]
fn a_stale_record_does_not_label_the_backup_and_its_rollback_records_files_not_from_cudnnm() {
    // Two homes, one toolkit: home A copies 9.1, home B copies 9.12 over it,
    // then A deploys 9.1 again. A's record still names 9.1; the files are 9.12.
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let t = tk_arg(&tk);
    let home_b = sb.root().join("home-b");
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    put_redist_linux_12(&home_b, "9.12.0.46");
    let hb = home_b.display().to_string();
    sb.run(["use", "9.1.0.70", "--mode", "copy", "--cuda-root", &t])
        .ok();
    sb.run([
        "--home",
        &hb,
        "use",
        "9.12",
        "--mode",
        "copy",
        "--cuda-root",
        &t,
    ])
    .ok();
    let on_912 = snapshot(&tk.join("targets"));
    // A change killed midway is undone by the next command, and A's record
    // is put back as it was (stale, but A's to keep).
    let killed = sb
        .command()
        .env("CUDNNM_FAULT_AFTER_STEP", "3")
        .args(["use", "9.1.0.70", "--mode", "copy", "--cuda-root", &t])
        .output()
        .unwrap();
    assert!(!killed.status.success());
    let cur = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(cur["toolkits"][0]["release"], "9.1.0.70_cuda12");
    assert_eq!(snapshot(&tk.join("targets")), on_912);
    // Backup 3: the killed change's id 2 is not handed out again.
    sb.run(["use", "9.1.0.70", "--mode", "copy", "--cuda-root", &t])
        .ok()
        .stderr_has(&[
            "cuDNN 9.12.0 (not from cudnnm) → 9.1.0.70",
            "(copy, backup 3)",
        ]);
    let j = sb.run(["backups", "--json"]).ok().json();
    assert_eq!(j[1]["id"], 3);
    assert_eq!(j[1]["held"], "9.12.0 (not from cudnnm)");
    assert_eq!(j[1]["release"], serde_json::Value::Null, "{j}");
    // Rolling back to it restores B's 9.12 bytes and does not claim 9.1.
    sb.run(["rollback", "--cuda-root", &t])
        .ok()
        .stderr_has(&["cuDNN 9.1.0.70 → 9.12.0 (not from cudnnm)"]);
    assert_eq!(snapshot(&tk.join("targets")), on_912);
    let cur = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(cur["toolkits"][0]["release"], serde_json::Value::Null);
    assert_eq!(cur["toolkits"][0]["unmanaged_cudnn"], "9.12.0");
    let cur = sb.run(["current", "--cuda-root", &t]).ok();
    assert!(
        cur.stdout()
            .contains("not managed by cudnnm (headers: cuDNN 9.12.0)"),
        "{}",
        cur.describe()
    );
}

/// A CUDA 12.4 toolkit without cuDNN, with 9.1.0.70 and 9.12.0.46 in the store.
fn world_9_1_and_9_12(sb: &Sandbox) -> std::path::PathBuf {
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    for v in ["9.1.0.70", "9.12.0.46"] {
        put_redist_linux_12(&sb.home(), v);
    }
    tk
}

/// 9.12 copied into the toolkit, then 9.1 copied over it, so backup 2 holds
/// the 9.12 copies by reference to the store. Returns the toolkit's folders
/// as they were on 9.12.
fn copies_backed_up_by_reference(
    sb: &Sandbox,
    tk: &Path,
) -> std::collections::BTreeMap<String, String> {
    let t = tk_arg(tk);
    sb.run(["use", "9.12.0.46", "--mode", "copy", "--cuda-root", &t])
        .ok();
    let on_912 = snapshot(&tk.join("targets"));
    sb.run(["use", "9.1.0.70", "--mode", "copy", "--cuda-root", &t])
        .ok();
    let j = sb.run(["backups", "--json"]).ok().json();
    assert_eq!(j[1]["id"], 2);
    assert_eq!(
        j[1]["size"], 0,
        "the 9.12 copies are kept by reference: {j}"
    );
    on_912
}

#[test]
fn uninstall_of_a_release_backups_need_is_refused_and_force_copies_its_files_into_them() {
    let sb = Sandbox::new();
    let tk = world_9_1_and_9_12(&sb);
    let on_912 = copies_backed_up_by_reference(&sb, &tk);
    let store_912 = sb.home().join("store/cuda-12/9.12.0.46");
    let real_tk = std::fs::canonicalize(&tk).unwrap();
    sb.run(["uninstall", "9.12.0.46"]).code_is(8).stderr_has(&[
        &format!(
            "error: cuDNN 9.12.0.46_cuda12 holds files that 1 backup needs to restore: backup 2 of '{}' (",
            real_tk.display()
        ),
        "help: keep the release, or pass --force: those files (",
        "then stay in the backups (one copy on disk, however many backups need it) so they can still be restored",
    ]);
    assert!(store_912.join("receipt.toml").is_file(), "nothing removed");
    let r = sb.run(["uninstall", "9.12.0.46", "--force"]).ok();
    r.stderr_has(&[
        &format!(
            "of cuDNN 9.12.0.46_cuda12 in backup 2 (of '{}') so it can still be restored",
            real_tk.display()
        ),
        "removed cuDNN 9.12.0.46_cuda12",
    ]);
    assert!(!store_912.exists());
    let j = sb.run(["backups", "--json"]).ok().json();
    assert!(j[1]["size"].as_u64().unwrap() > 0, "{j}");
    assert_eq!(j[1]["release"], serde_json::Value::Null);
    // The rollback restores 9.12's bytes exactly, as files not from cudnnm.
    sb.run(["rollback", "--cuda-root", &tk_arg(&tk)])
        .ok()
        .stderr_has(&["cuDNN 9.1.0.70 → 9.12.0.46", "restored backup 2"]);
    assert_eq!(snapshot(&tk.join("targets")), on_912);
    let cur = sb
        .run(["current", "--cuda-root", &tk_arg(&tk), "--json"])
        .ok()
        .json();
    assert_eq!(cur["toolkits"][0]["release"], serde_json::Value::Null);
    assert_eq!(cur["toolkits"][0]["unmanaged_cudnn"], "9.12.0");
}

#[test]
fn a_rollback_whose_release_is_gone_names_where_that_release_came_from() {
    let sb = Sandbox::new();
    let tk = world_9_1_and_9_12(&sb);
    // The receipt says 9.12 came from pip.
    let receipt = sb.home().join("store/cuda-12/9.12.0.46/receipt.toml");
    let text = std::fs::read_to_string(&receipt).unwrap();
    let text = text.replace(
        "[source]\n",
        "[source]\nurl = \"pip:nvidia-cudnn-cu12==9.12.0.46\"\n",
    );
    assert!(text.contains("pip:"), "{text}");
    std::fs::write(&receipt, text).unwrap();
    let t = tk_arg(&tk);
    copies_backed_up_by_reference(&sb, &tk);
    // The release is removed behind cudnnm's back (or by an older cudnnm).
    std::fs::remove_dir_all(sb.home().join("store/cuda-12/9.12.0.46")).unwrap();
    let before = snapshot(&tk.join("targets"));
    sb.run(["rollback", "--cuda-root", &t]).code_is(3).stderr_has(&[
        "error: backup 2 refers to '",
        "of release 9.12.0.46_cuda12, which is no longer installed",
        "help: reinstall cuDNN 9.12.0.46_cuda12 (`cudnnm install pip:nvidia-cudnn-cu12==9.12.0.46`), then run the rollback again",
    ]);
    assert_eq!(snapshot(&tk.join("targets")), before, "nothing changed");
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_toolkit_disk_says_to_free_space_there_or_use_symlinks() {
    // The toolkit's library folder is a 1 MiB tmpfs in a private mount
    // namespace: a real full disk, and only the toolkit's.
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    big_linux_release(&sb.home(), "9.3.0.75", 2);
    let snap = snapshot(&tk);
    let real_tk = std::fs::canonicalize(&tk).unwrap();
    let lib = real_tk.join("targets/x86_64-linux/lib");
    let script = format!(
        "mount -t tmpfs -o size=1m tmpfs '{lib}' && exec '{bin}' use 9.3.0.75 --mode copy --cuda-root '{tk}'; echo 'mount failed' >&2; exit 99",
        lib = lib.display(),
        bin = common::bin().display(),
        tk = tk.display()
    );
    let out = sb
        .wrapped("unshare")
        .args(["-rm", "sh", "-c", &script])
        .output()
        .unwrap();
    let r = common::Run {
        args: vec!["use".into(), "9.3.0.75".into()],
        out,
        root: sb.root().to_path_buf(),
    };
    let r = r.code_is(1).stderr_has(&[
        "No space left",
        &format!(
            "help: the disk holding the toolkit folder '{}' (a link to '{}') is full: free some space there, or deploy with `--mode symlink` (links into the store take no space there), then run the command again",
            real_tk.join("lib64").display(),
            lib.display()
        ),
    ]);
    assert!(!r.stderr().contains("CUDNNM_HOME"), "{}", r.describe());
    assert_eq!(snapshot(&tk), snap, "the toolkit is as it was");
    assert!(!sb.home().join("backups/1").exists(), "{}", r.describe());
    let deps = std::fs::read_to_string(sb.home().join("deployments.toml")).unwrap_or_default();
    assert!(!deps.contains("[[deployment]]"), "nothing recorded: {deps}");
}

#[test]
fn a_cuda_version_not_found_says_where_it_looked_and_lists_the_toolkits_found() {
    let (mut sb, tk) = linux_world(); // CUDA 12.4.1, deployed to by --cuda-root
    let other = linux_toolkit(&sb.root().join("cuda-11.8"), "11.8.0");
    sb.set_env("CUDA_PATH", &other);
    sb.run(["use", "9.12", "--cuda-root", &tk_arg(&tk)]).ok();
    let real_tk = std::fs::canonicalize(&tk).unwrap();
    let real_other = std::fs::canonicalize(&other).unwrap();
    // `toolkits` lists both; `--cuda` finds the one deployments.toml records.
    let listed = sb.run(["toolkits"]).ok().stdout();
    assert!(
        listed.contains(&format!("'{}'  CUDA 12.4.1", real_tk.display())),
        "{listed}"
    );
    sb.run(["use", "9.1.0.70", "--cuda", "12.4"])
        .ok()
        .stderr_has(&[&format!("→ 9.1.0.70 in '{}'", real_tk.display())]);
    sb.run(["use", "9.12", "--cuda", "12.6"]).code_is(3).stderr_has(&[
        "error: no CUDA 12.6 toolkit found (looked in '/usr/local/cuda-12.6', and among the toolkits named by CUDA_PATH, CUDA_HOME, nvcc on PATH, the default folders and the toolkits this home deployed to or backed up)",
        &format!(
            "'{}' (CUDA 11.8.0, found by CUDA_PATH)",
            real_other.display()
        ),
        &format!(
            "'{}' (CUDA 12.4.1, found by deployments.toml)",
            real_tk.display()
        ),
        "help: pass the toolkit's folder with --cuda-root PATH (e.g. `--cuda-root '",
    ]);
}

/// Makes the folder `tk` a CUDA 12.4 toolkit (its `version.json`) and puts
/// the 9.12.0.46 fixture into the sandbox's store.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn cuda_12_4_and_9_12(sb: &Sandbox, tk: &Path) {
    std::fs::write(
        tk.join("version.json"),
        r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}"#,
    )
    .unwrap();
    put_redist_linux_12(&sb.home(), "9.12.0.46");
}

#[test]
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn a_stale_cudnn_in_targets_lib_beside_a_real_lib64_is_backed_up_and_restored() {
    // A repackaged toolkit: lib64 and include are real folders, and
    // targets/x86_64-linux/lib (on the loader's path through NVIDIA's
    // ld.so.conf.d line) still holds a hand-copied cuDNN 8.9.7.
    let sb = Sandbox::new();
    let tk = sb.root().join("cuda-12.4");
    for d in [
        "include",
        "lib64",
        "targets/x86_64-linux/lib",
        "targets/aarch64-linux/lib",
    ] {
        std::fs::create_dir_all(tk.join(d)).unwrap();
    }
    let stale = tk.join("targets/x86_64-linux/lib");
    std::fs::write(stale.join("libcudnn.so.8.9.7"), b"\x7fELF stale 8.9.7").unwrap();
    std::os::unix::fs::symlink("libcudnn.so.8.9.7", stale.join("libcudnn.so.8")).unwrap();
    std::fs::write(stale.join("libcudart.so.12"), b"\x7fELF cudart").unwrap();
    let stale_inc = tk.join("targets/x86_64-linux/include");
    std::fs::create_dir_all(&stale_inc).unwrap();
    std::fs::write(
        stale_inc.join("cudnn_version.h"),
        fixtures::version_header("8.9.7"),
    )
    .unwrap();
    // A cross-compilation target's cuDNN is not the host's: left alone.
    let cross = tk.join("targets/aarch64-linux/lib/libcudnn.so.8");
    std::fs::write(&cross, b"\x7fELF aarch64 cudnn").unwrap();
    cuda_12_4_and_9_12(&sb, &tk);
    let before = snapshot(&tk);
    let t = tk_arg(&tk);
    sb.run(["use", "9.12.0.46", "--cuda-root", &t, "--mode", "copy"])
        .ok()
        .stderr_has(&[
            "cuDNN 8.9.7 (not from cudnnm) → 9.12.0.46",
            "(copy, backup 1)",
        ]);
    let names: Vec<String> = std::fs::read_dir(&stale)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["libcudart.so.12"],
        "the stale cuDNN went into the backup"
    );
    assert!(tk.join("lib64/libcudnn.so.9").is_file());
    assert_eq!(std::fs::read(&cross).unwrap(), b"\x7fELF aarch64 cudnn");
    let held = backup_holdings(Path::new(
        sb.run(["backups", "--json"]).ok().json()[0]["dir"]
            .as_str()
            .unwrap(),
    ));
    assert_eq!(
        held.keys().collect::<Vec<_>>(),
        ["cudnn_version.h", "libcudnn.so.8", "libcudnn.so.8.9.7"]
    );
    // verify looks where use looks: a stale copy put back into targets/ is
    // an extra file of the deployment.
    sb.run(["verify", "--no-load"]).ok();
    std::fs::write(stale.join("libcudnn.so.8.9.7"), b"\x7fELF stale 8.9.7").unwrap();
    let v = sb.run(["verify", "--no-load"]).code_is(7);
    v.stdout_has(&[&format!(
        "extra:    {}",
        stale.join("libcudnn.so.8.9.7").display()
    )]);
    // doctor agrees: drift, naming the file.
    let drift = sb
        .run(["doctor", "--json", "--no-load", "--cuda-root", &t])
        .finding("deployment-drift")
        .to_string();
    assert!(
        drift.contains(
            "targets/x86_64-linux/lib/libcudnn.so.8.9.7: a cuDNN file the deployment did not place"
        ),
        "{drift}"
    );
    std::fs::remove_file(stale.join("libcudnn.so.8.9.7")).unwrap();
    // Rollback puts the stale files back where they were, byte for byte.
    sb.run(["rollback", "--cuda-root", &t]).ok();
    assert_eq!(snapshot(&tk), before);
}

#[test]
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn targets_folders_outside_the_root_are_left_alone_and_lib64_to_lib_verifies_clean() {
    // lib64 -> lib (a real folder); targets/x86_64-linux/lib links out of the
    // toolkit to a system folder holding another package's cuDNN.
    let sb = Sandbox::new();
    let tk = sb.root().join("cuda-12.4");
    let system = sb.root().join("usr-lib");
    for d in ["include", "lib", "targets/x86_64-linux"] {
        std::fs::create_dir_all(tk.join(d)).unwrap();
    }
    std::fs::create_dir_all(&system).unwrap();
    std::os::unix::fs::symlink("lib", tk.join("lib64")).unwrap();
    std::os::unix::fs::symlink(&system, tk.join("targets/x86_64-linux/lib")).unwrap();
    std::fs::write(system.join("libcudnn.so.9"), b"\x7fELF the distro's cudnn").unwrap();
    cuda_12_4_and_9_12(&sb, &tk);
    let outside = snapshot(&system);
    let t = tk_arg(&tk);
    sb.run(["use", "9.12.0.46", "--cuda-root", &t, "--mode", "symlink"])
        .ok()
        .stderr_has(&["cuDNN (none) → 9.12.0.46"]);
    assert_eq!(
        snapshot(&system),
        outside,
        "another package's folder is not the toolkit's"
    );
    assert!(tk.join("lib/libcudnn.so.9").exists());
    // The files placed through lib64 are the ones found through lib.
    sb.run(["verify", "--no-load"])
        .ok()
        .stdout_has(&["Everything matches its record."]);
}

#[test]
fn pruning_keeps_the_users_own_files_until_removed_by_name() {
    let (sb, tk) = linux_world();
    std::fs::create_dir_all(sb.home()).unwrap();
    std::fs::write(sb.home().join("config.toml"), "keep_backups = 2\n").unwrap();
    let t = tk_arg(&tk);
    sb.run(["use", "9.12", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    // The user patches the deployed header and drops a plugin of their own.
    let mut patched = std::fs::read(tk.join("include/cudnn.h")).unwrap();
    patched.extend_from_slice(b"\n#define MY_PATCH 1\n");
    std::fs::write(tk.join("include/cudnn.h"), &patched).unwrap();
    let plugin = b"\x7fELF my own plugin".to_vec();
    std::fs::write(tk.join("lib64/libcudnn_myplugin.so.9"), &plugin).unwrap();
    sb.run(["use", "9.1", "--cuda-root", &t, "--mode", "copy"])
        .ok()
        .stderr_has(&[
            "also moved to backup 2: lib64/libcudnn_myplugin.so.9 (not part of any cuDNN release)",
            "kept until `cudnnm backups remove 2 --force` deletes them",
        ]);
    // Far more switches than keep_backups: backup 2 holds the user's bytes.
    for v in ["9.12", "9.1", "9.12", "9.1", "9.12"] {
        sb.run(["use", v, "--cuda-root", &t, "--mode", "copy"]).ok();
    }
    let j = sb.run(["backups", "--json"]).ok().json();
    let ids: Vec<u64> = j
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![1, 2, 6, 7],
        "pruned all but first, newest 2 and the user's"
    );
    let kept = &j[1];
    assert_eq!(
        kept["users_files"],
        serde_json::json!(["include/cudnn.h", "lib64/libcudnn_myplugin.so.9"])
    );
    assert!(j[3]["users_files"].as_array().unwrap().is_empty());
    assert_eq!(kept["users_bytes"], (patched.len() + plugin.len()) as u64);
    let text = sb.run(["backups"]).ok().stdout();
    assert!(
        text.contains(&format!(
            "(yours: 2 files, {}: include/cudnn.h, lib64/libcudnn_myplugin.so.9)",
            cudnnm::store::human_size((patched.len() + plugin.len()) as u64)
        )),
        "{text}"
    );
    let files = sb.home().join("backups/2/files");
    assert_eq!(
        std::fs::read(files.join("include/cudnn.h")).unwrap(),
        patched
    );
    assert_eq!(
        std::fs::read(files.join("lib64/libcudnn_myplugin.so.9")).unwrap(),
        plugin
    );
    // Rolling back to that state gives both back byte for byte.
    sb.run(["rollback", "--to", "2"]).ok();
    assert_eq!(std::fs::read(tk.join("include/cudnn.h")).unwrap(), patched);
    assert_eq!(
        std::fs::read(tk.join("lib64/libcudnn_myplugin.so.9")).unwrap(),
        plugin
    );
    // Only a command naming it (and forcing it: it lists the files first) removes it.
    sb.run(["backups", "--remove", "2"]).code_is(8).stderr_has(&[
        "error: backup 2 keeps files of yours that no cuDNN release holds: include/cudnn.h, lib64/libcudnn_myplugin.so.9",
    ]);
    assert!(sb.home().join("backups/2").exists());
    sb.run(["backups", "--remove", "2", "--force"])
        .ok()
        .stderr_has(&[
            "and the files of yours it kept: include/cudnn.h, lib64/libcudnn_myplugin.so.9",
        ]);
    assert!(!sb.home().join("backups/2").exists());
    sb.run(["backups", "--remove", "2"]).code_is(3);
}

/// The reason line `use`, `rollback` and `current` print for a toolkit
/// nothing named.
fn chosen(root: &Path, cuda: &str, why: &str) -> String {
    format!(
        "toolkit '{}' (CUDA {cuda}): {why}",
        std::fs::canonicalize(root).unwrap().display()
    )
}

#[test]
fn toolkits_this_home_knows_are_found_without_flags_and_by_a_cuda_major() {
    let mut sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("sandbox cuda 12.4"), "12.4.1");
    for v in ["9.1.0.70", "9.12.0.46"] {
        put_redist_linux_12(&sb.home(), v);
    }
    let lib = tk.join("lib64/libcudnn.so.9");
    // The first deployment names the toolkit; nothing in the environment does.
    sb.run(["use", "9.12", "--cuda-root", &tk_arg(&tk)]).ok();
    // A plain `use` and `rollback` find it through deployments.toml and say so.
    sb.run(["use", "9.1"]).ok().stderr_has(&[
        &chosen(
            &tk,
            "12.4.1",
            "the only toolkit found or known to this home (found by deployments.toml)",
        ),
        "→ 9.1.0.70 in '",
    ]);
    assert_eq!(
        std::fs::read(&lib).unwrap(),
        fixtures::elf_bytes("libcudnn.so.9 9.1.0.70", false)
    );
    sb.run(["rollback"])
        .ok()
        .stderr_has(&["9.1.0.70 → 9.12.0.46"]);
    assert_eq!(
        std::fs::read(&lib).unwrap(),
        fixtures::elf_bytes("libcudnn.so.9 9.12.0.46", false)
    );
    // Back to "no cuDNN" (backup 1): no deployment is left, but the backups
    // keep the toolkit findable, by --cuda X.Y, by a major, and plainly.
    sb.run(["rollback", "--to", "1"])
        .ok()
        .stderr_has(&["→ (none)"]);
    assert!(std::fs::symlink_metadata(&lib).is_err());
    sb.run(["current", "--cuda", "12.4"])
        .ok()
        .stdout_has(&["(CUDA 12.4.1): no cuDNN"]);
    sb.run(["rollback", "--cuda", "12.4"]).ok().stderr_has(&[
        &chosen(&tk, "12.4.1", "found by backups"),
        "(none) → 9.12.0.46",
    ]);
    sb.run(["use", "9.1", "--cuda", "12"]).ok().stderr_has(&[
        &chosen(
            &tk,
            "12.4.1",
            "the only CUDA 12.x toolkit found (found by deployments.toml)",
        ),
        "9.12.0.46 → 9.1.0.70",
    ]);
    // A second toolkit: a pre-11 CUDA 8.0 one with a release for it. The
    // spec decides which toolkit fits; when both would, they are listed.
    let tk8 = linux_toolkit(&sb.root().join("sandbox cuda 8.0"), "8.0.61");
    put_release(
        &sb.home(),
        &fixtures::linux_tgz("8.0", "7.1.4.18"),
        "7.1.4.18",
        "8.0",
        Platform::LinuxX86_64,
    );
    sb.run(["use", "7.1", "--cuda-root", &tk_arg(&tk8)]).ok();
    sb.run(["use", "9.12"]).ok().stderr_has(&[
        &chosen(
            &tk,
            "12.4.1",
            "the only one of 2 toolkits whose CUDA 12.4 fits cuDNN 9.12 (found by deployments.toml)",
        ),
        "9.1.0.70 → 9.12.0.46",
    ]);
    sb.run(["current", "--cuda", "12"])
        .ok()
        .stdout_has(&["(CUDA 12.4.1): 9.12.0.46_cuda12, symlink"]);
    // A rollback restores a backup, not a release: a pin does not choose
    // the toolkit; the toolkits with backups are listed, each with the
    // command that rolls it back.
    std::fs::write(sb.work().join(".cudnn-version"), "7.1\n").unwrap();
    let r = sb.run(["rollback"]).code_is(2);
    let (real, real8) = (
        std::fs::canonicalize(&tk).unwrap(),
        std::fs::canonicalize(&tk8).unwrap(),
    );
    let r = r.stderr_has(&[
        &format!(
            "error: 2 toolkits have backups and none is named by --cuda-root, --cuda, CUDA_PATH, CUDA_HOME or nvcc: '{}' (CUDA 12.4; backups ",
            real.display()
        ),
        &format!("'{}' (CUDA 8.0; backup ", real8.display()),
        &format!(
            "help: pick the toolkit to roll back with --cuda-root (or --cuda X.Y): `cudnnm rollback --cuda-root '{}'` or `cudnnm rollback --cuda-root '{}'`",
            real.display(),
            real8.display()
        ),
    ]);
    assert!(!r.stderr().contains("fit"), "{}", r.describe());
    sb.run(["rollback", "--cuda-root", &tk_arg(&tk8)])
        .ok()
        .stderr_has(&["7.1.4.18 → (none)"]);
    std::fs::remove_file(sb.work().join(".cudnn-version")).unwrap();
    sb.run(["rollback", "--cuda", "8"])
        .ok()
        .stderr_has(&["(none) → 7.1.4.18"]);
    // CUDA_PATH naming a folder that is no toolkit is said, not skipped in silence.
    sb.set_env("CUDA_PATH", "/nonexistent");
    sb.run(["use", "9.12"]).ok().stderr_has(&[&chosen(
        &tk,
        "12.4.1",
        "the only one of 2 toolkits whose CUDA 12.4 fits cuDNN 9.12 (found by deployments.toml); CUDA_PATH names '/nonexistent', which is not a CUDA toolkit, passed over",
    )]);
    let r = sb.run(["rollback"]).code_is(2).stderr_has(&[
        "error: CUDA_PATH names '/nonexistent', which is not a CUDA toolkit; of the 2 toolkits with backups, none is named by --cuda-root or --cuda: '",
        "caused by: CUDA_PATH='/nonexistent': CUDA toolkit folder '/nonexistent' does not exist",
    ]);
    assert!(
        !r.stderr()
            .contains("named by --cuda-root, --cuda, CUDA_PATH"),
        "{}",
        r.describe()
    );
}

#[test]
fn a_missing_version_names_the_nearest_installed_and_a_foreign_build_the_nearest_that_exists() {
    let (sb, tk) = linux_world(); // 9.1.0.70 and 9.12.0.46 for CUDA 12 (Linux)
    // A digit short of an installed version: that one is named first.
    refused_unchanged(&sb, &tk, &["use", "9.1.0.7", "--cuda-root", &tk_arg(&tk)], 3)
        .stderr_has(&[
            "error: cuDNN 9.1.0.7 is not installed",
            "caused by: the catalog has no cuDNN 9.1.0.7 release",
            "help: the nearest installed releases are: 9.1.0.70_cuda12, 9.12.0.46_cuda12; or the nearest release the catalog has is cuDNN 9.1.0.70 for CUDA 12 (`cudnnm install 9.1.0.70_cuda12`)",
        ]);
    // A Windows-layout toolkit: 9.1 and 9.12 have Windows archives in the
    // catalog (redistrib_9.1.1.json, redistrib_9.12.0.json); 9.14 (wheels
    // there, which pip fetches only for the machine it runs on) has none, so
    // no `install 9.14 --platform` that fails.
    put_redist_linux_12(&sb.home(), "9.14.0.64");
    let wtk = windows_toolkit(&sb.root().join("CUDA/v12.4"), "12.4.1");
    let t = tk_arg(&wtk);
    refused_unchanged(&sb, &wtk, &["use", "9.1", "--cuda-root", &t], 8).stderr_has(&[
        "error: cuDNN 9.1 is installed only for linux-x86_64; the toolkit '",
        "help: install a windows build (`cudnnm install 9.1.1.17_cuda12 --platform windows-x86_64`)",
    ]);
    refused_unchanged(&sb, &wtk, &["use", "9.12", "--cuda-root", &t], 8).stderr_has(&[
        "help: install a windows build (`cudnnm install 9.12.0.46_cuda12 --platform windows-x86_64`)",
    ]);
    let r = refused_unchanged(&sb, &wtk, &["use", "9.14", "--cuda-root", &t], 8).stderr_has(&[
        "caused by: the catalog has no windows-x86_64 build of cuDNN 9.14 for CUDA 12.4",
        "help: the nearest release with a windows-x86_64 build is cuDNN 9.13.",
        "--platform windows-x86_64`)",
    ]);
    assert!(!r.stderr().contains("install 9.14"), "{}", r.describe());
}

#[test]
fn a_garbage_config_names_its_line_and_removing_it_as_said_works() {
    let (sb, _tk) = linux_world();
    let config = sb.home().join("config.toml");
    std::fs::write(&config, "mode = \"copy\"\n\nkeep_backups = [oops\n").unwrap();
    let help = format!(
        "help: edit '{}' to fix the TOML at line 3, or remove it to go back to the default settings",
        config.display()
    );
    for args in [&["list"][..], &["default", "9.12"][..]] {
        let r = sb.run(args).code_is(1).stderr_has(&[
            &format!("error: could not parse '{}'", config.display()),
            "line 3: ",
            &help,
        ]);
        assert!(
            !r.stderr().contains("cudnnm default SPEC"),
            "{}",
            r.describe()
        );
    }
    assert!(
        std::fs::read_to_string(&config).unwrap().contains("[oops"),
        "left as it was"
    );
    // Removing it, as the hint says, makes both work.
    std::fs::remove_file(&config).unwrap();
    sb.run(["default", "9.12"]).ok();
    sb.run(["list"]).ok().stdout_has(&["9.12.0.46_cuda12"]);
}

/// The command in a `help:` line's last "(`…`)" (or "with `…`"), run as
/// printed (its arguments hold no spaces).
fn run_printed(sb: &Sandbox, stderr: &str) -> common::Run {
    let help = stderr.lines().find(|l| l.starts_with("help: ")).unwrap();
    let start = help.rfind("`cudnnm ").unwrap() + 1;
    let cmd = &help[start..start + help[start..].find('`').unwrap()];
    let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
    sb.run(&args)
}

/// pip offline over a folder of wheels, and a user catalog that lists the
/// real jit wheels (as `manifest refresh` would list a package).
fn offline_pip(sb: &mut Sandbox, links: &Path) {
    sb.set_env("PIP_NO_INDEX", "1");
    sb.set_env("PIP_FIND_LINKS", links);
    sb.set_env("PIP_CONFIG_FILE", "/dev/null");
    std::fs::create_dir_all(sb.home()).unwrap();
    std::fs::write(
        sb.home().join("catalog.toml"),
        "[[wheel]]\npackage = \"nvidia-cudnn-jit-cu12\"\ncuda = \"12\"\nsource = \"test\"\nversions = [\"9.12.0.46\", \"9.27.0.42\"]\n",
    )
    .unwrap();
}

/// NVIDIA's Linux archives of `releases` (version, CUDA) as a lab's server holds
/// them (NVIDIA's download server is out of reach here): fixture archives
/// under their real names, added to the user catalog with their own hashes.
/// The embedded rows of the same files merge with them (NVIDIA's hash and
/// URL kept as a fall-back), so the catalog's commands install these.
fn lab_archives(sb: &Sandbox, releases: &[(&str, &str)]) -> common::http::TestServer {
    let server = common::http::TestServer::start();
    let dir = sb.root().join("lab");
    std::fs::create_dir_all(&dir).unwrap();
    let mut rows = String::new();
    for (v, cuda) in releases {
        let file = fixtures::redist_linux(v, cuda).write(&dir);
        let bytes = std::fs::read(&file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        rows.push_str(&format!(
            "\n[[archive]]\nversion = \"{v}\"\ncuda = \"{cuda}\"\nplatform = \"linux-x86_64\"\npath = \"{}\"\nsize = {}\nsource = \"lab\"\nhashes = [{{ sha256 = \"{}\", source = \"lab\" }}]\n",
            server.url(&name),
            bytes.len(),
            cudnnm::hash::sha256_bytes(&bytes)
        ));
        server.file(&name, bytes);
    }
    let path = sb.home().join("catalog.toml");
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    text.push_str(&rows);
    std::fs::write(&path, text).unwrap();
    server
}

#[cfg(target_os = "linux")]
#[test]
fn a_release_not_installed_suggests_install_only_when_the_catalog_has_it_and_the_command_works() {
    let mut sb = Sandbox::new();
    offline_pip(&mut sb, &common::wheels_dir());
    let _lab = lab_archives(&sb, &[("9.12.0.46", "12"), ("9.27.0.42", "12")]);
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let t = tk_arg(&tk);
    // Not in the catalog at all, or not for that CUDA: no `install 9.99`.
    for (spec, near) in [
        (
            "9.99",
            "help: the nearest release the catalog has is cuDNN 9.",
        ),
        (
            "9.12_cuda11",
            "help: the nearest release the catalog has is cuDNN 9.10.2.21 for CUDA 11 (`cudnnm install 9.10.2.21_cuda11`)",
        ),
    ] {
        let r = refused_unchanged(&sb, &tk, &["use", spec, "--cuda-root", &t], 3).stderr_has(&[
            &format!("error: cuDNN {spec} is not installed"),
            &format!("caused by: the catalog has no cuDNN {spec} release"),
            near,
        ]);
        let help = r
            .stderr()
            .lines()
            .find(|l| l.starts_with("help: "))
            .unwrap()
            .to_string();
        assert!(
            !help.contains(&format!("install {spec}`")),
            "{}",
            r.describe()
        );
    }
    // In the catalog (NVIDIA's archive of the full build): the printed
    // command installs it, and `use` then deploys it.
    let r = refused_unchanged(&sb, &tk, &["use", "9.12", "--cuda-root", &t], 3)
        .stderr_has(&["help: install it with `cudnnm install 9.12.0.46_cuda12`"]);
    run_printed(&sb, &r.stderr()).ok();
    sb.run(["use", "9.12", "--cuda-root", &t])
        .ok()
        .stderr_has(&["→ 9.12.0.46"]);
    // A near miss of an installed and catalogued version: both are named, and it works.
    let r = refused_unchanged(&sb, &tk, &["use", "9.27.0.4", "--cuda-root", &t], 3).stderr_has(&[
        "help: the nearest installed release is: 9.12.0.46_cuda12; or the nearest release the catalog has is cuDNN 9.27.0.42 for CUDA 12 (`cudnnm install 9.27.0.42_cuda12`)",
    ]);
    run_printed(&sb, &r.stderr()).ok();
    sb.run(["use", "9.27", "--cuda-root", &t])
        .ok()
        .stderr_has(&["9.12.0.46 → 9.27.0.42"]);
}

#[cfg(target_os = "linux")]
#[test]
fn a_build_for_another_cuda_suggests_only_a_build_the_catalog_has_for_the_toolkits_cuda() {
    let mut sb = Sandbox::new();
    let links = sb.root().join("links");
    std::fs::create_dir_all(&links).unwrap();
    // What PyPI serves as nvidia-cudnn-cu11 9.10.2.21, in a real wheel layout.
    fixtures::wheel("nvidia_cudnn_cu11", "9.10.2.21", false).write(&links);
    offline_pip(&mut sb, &links);
    sb.run([
        "install",
        &common::real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42")
            .display()
            .to_string(),
        "--force",
    ])
    .ok();
    let tk = linux_toolkit(&sb.root().join("cuda-11.8"), "11.8.0");
    let t = tk_arg(&tk);
    let r = refused_unchanged(&sb, &tk, &["use", "9.27", "--cuda-root", &t], 8).stderr_has(&[
        "error: cuDNN 9.27.0.42_cuda12+jit is built for CUDA 12 and does not fit the CUDA 11.8 toolkit",
        "help: the catalog has no build of cuDNN 9.27 for CUDA 11.8; the newest release that has one is cuDNN 9.10.2.21 (`cudnnm install 9.10.2.21_cuda11`); or pass --force",
    ]);
    assert!(!r.stderr().contains("--cuda 11`"), "{}", r.describe());
    run_printed(&sb, &r.stderr()).ok();
    sb.run(["use", "9.10", "--cuda-root", &t])
        .ok()
        .stderr_has(&["→ 9.10.2.21"]);
}

/// `sudo cudnnm --home ~user/… use …`, as the hint for a root-owned toolkit
/// says: what root created in the user's home becomes the user's (records,
/// backup folders, the lock), so the user's own commands keep working; the
/// toolkit's files inside the backup keep their owner (root), so a rollback
/// puts them back as they were.
#[cfg(target_os = "linux")]
#[test]
fn root_working_in_a_users_home_leaves_it_the_users() {
    use std::os::unix::fs::MetadataExt;
    if !is_root() {
        common::skip::skip("needs root, to run cudnnm as root on a home owned by nobody");
        return;
    }
    if common::skip::need_program("setpriv", "util-linux").is_none() {
        return;
    }
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    // A cuDNN file root had put in the toolkit before.
    std::fs::write(
        tk.join("include/cudnn_version.h"),
        "#define CUDNN_MAJOR 8\n",
    )
    .unwrap();
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    // The home is nobody's: `run_as_nobody` gives it to them first.
    run_as_nobody(&sb, &["list"]).ok();
    let t = tk_arg(&tk);
    sb.run(["use", "9.12.0.46", "--cuda-root", &t]).ok();
    let mut payload = 0;
    for e in walkdir::WalkDir::new(sb.home()).follow_links(false) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(sb.home()).unwrap().to_path_buf();
        let owner = e.path().symlink_metadata().unwrap().uid();
        let in_files = rel
            .components()
            .nth(2)
            .is_some_and(|c| c.as_os_str() == "files");
        if in_files && !e.file_type().is_dir() {
            payload += 1;
            assert_eq!(owner, 0, "backup payload {} keeps root", rel.display());
        } else {
            assert_eq!(owner, 65534, "{} is the user's", rel.display());
        }
    }
    assert_eq!(payload, 1, "the header root had placed is in the backup");
    // The user's own commands read and change their home.
    let cur = run_as_nobody(&sb, &["current", "--json", "--cuda-root", &t]).ok();
    assert!(cur.stdout().contains("9.12.0.46"), "{}", cur.describe());
    run_as_nobody(&sb, &["backups"]).ok();
    run_as_nobody(&sb, &["du"]).ok();
    run_as_nobody(&sb, &["default", "9.12"]).ok();
}

/// Another cudnnm home's symlink deployment is named as such when this
/// home replaces it (in the message and the backup's record), not as
/// files "not from cudnnm".
#[test]
fn another_homes_deployment_is_named_as_such() {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let other = sb.root().join("other-home");
    put_redist_linux_12(&other, "9.1.0.70");
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    let t = tk_arg(&tk);
    let o = other.display().to_string();
    sb.run(["--home", &o, "use", "9.1.0.70", "--cuda-root", &t])
        .ok();
    sb.run(["use", "9.12.0.46", "--cuda-root", &t])
        .ok()
        .stderr_has(&["cuDNN 9.1.0.70 (from another cudnnm home) → 9.12.0.46 in '"]);
    let b = sb.run(["backups", "--json"]).ok().json();
    assert_eq!(b[0]["held"], "9.1.0.70 (from another cudnnm home)", "{b:#}");
}

/// cuDNN 9.1.0.70 and 9.12.0.46 for CUDA 12 imported from their archives
/// (receipts with each file's time, as `install` writes them), and a CUDA
/// 12.4 toolkit; the 9.12 archive's name.
fn imported_9_1_and_9_12(sb: &Sandbox) -> (std::path::PathBuf, String) {
    let dir = sb.root().join("archives");
    std::fs::create_dir_all(&dir).unwrap();
    let mut name = String::new();
    for v in ["9.1.0.70", "9.12.0.46"] {
        let a = fixtures::redist_linux(v, "12").write(&dir);
        sb.run(["install", &a.display().to_string()]).ok();
        name = a.file_name().unwrap().to_string_lossy().into_owned();
    }
    (linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1"), name)
}

/// Overwrites `path` in place (the same file, so a hard link or the store
/// file behind a link sees it) with bytes of the same length: one changed.
fn edit_same_size(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut bytes = std::fs::read(path).unwrap();
    bytes[0] ^= 0x20;
    let real = std::fs::canonicalize(path).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&real, &bytes).unwrap();
}

/// A same-size edit of a deployed file that is the store's own (a hard
/// link, or the store file a symlink leads to) is seen by `current`, not
/// only by `verify`, and `use` refuses to deploy the changed release.
fn a_same_size_edit_of_a_store_file_is_seen_and_refused(mode: &str) {
    let sb = Sandbox::new();
    let (tk, archive) = imported_9_1_and_9_12(&sb);
    let t = tk_arg(&tk);
    let receipt =
        std::fs::read_to_string(sb.home().join("store/cuda-12/9.12.0.46/receipt.toml")).unwrap();
    assert!(receipt.contains("mtime_ns = "), "{receipt}");
    sb.run(["use", "9.12", "--cuda-root", &t, "--mode", mode])
        .ok();
    sb.run(["current", "--cuda-root", &t]).ok().stdout_has(&[
        &format!("9.12.0.46_cuda12, {mode}, deployed "),
        "files match",
    ]);
    edit_same_size(&tk.join("include/cudnn.h"));
    let store_file = sb.home().join("store/cuda-12/9.12.0.46/include/cudnn.h");
    let store_file = std::fs::canonicalize(&store_file).unwrap();
    sb.run(["current", "--cuda-root", &t])
        .ok()
        .stdout_has(&["drift: 1 changed"]);
    let j = sb.run(["current", "--cuda-root", &t, "--json"]).ok().json();
    assert_eq!(
        j["toolkits"][0]["drift"]["changed"][0],
        tk.join("include/cudnn.h").display().to_string(),
        "{j}"
    );
    // `use` of the changed release: refused, nothing changed.
    let before = (
        snapshot(&tk),
        std::fs::read_to_string(sb.home().join("deployments.toml")).unwrap(),
    );
    for args in [
        vec!["use", "9.12", "--cuda-root", &t, "--mode", mode],
        vec!["use", "9.12", "--cuda-root", &t, "--mode", "copy"],
    ] {
        sb.run(&args).code_is(4).stderr_has(&[
            &format!(
                "error: cuDNN 9.12.0.46_cuda12 in the store is damaged: '{}' was changed (same size, SHA-256 ",
                store_file.display()
            ),
            &format!("help: reinstall it from the file it came from ({archive}): `cudnnm install PATH/TO/{archive} --force` (`cudnnm verify` lists every changed file"),
            "; nothing was changed",
        ]);
    }
    assert_eq!(
        (
            snapshot(&tk),
            std::fs::read_to_string(sb.home().join("deployments.toml")).unwrap()
        ),
        before
    );
    // Switching away works, and the backup holds the edited bytes as they are.
    sb.run(["use", "9.1", "--cuda-root", &t, "--mode", mode])
        .ok();
    let b = sb.run(["backups", "--json"]).ok().json();
    let last = b.as_array().unwrap().last().unwrap();
    assert_eq!(last["held"], "9.12.0.46", "{b}");
    sb.run(["rollback", "--cuda-root", &t]).ok();
    assert_eq!(
        std::fs::read(tk.join("include/cudnn.h")).unwrap(),
        std::fs::read(&store_file).unwrap()
    );
}

#[test]
fn a_same_size_edit_through_a_hard_link_is_seen_by_current_and_refused_by_use() {
    a_same_size_edit_of_a_store_file_is_seen_and_refused("hardlink");
}

#[test]
fn a_same_size_edit_through_a_symlink_is_seen_by_current_and_refused_by_use() {
    a_same_size_edit_of_a_store_file_is_seen_and_refused("symlink");
}

#[test]
fn a_copy_is_judged_by_its_bytes_when_its_time_changed() {
    let sb = Sandbox::new();
    let (tk, _) = imported_9_1_and_9_12(&sb);
    let t = tk_arg(&tk);
    sb.run(["use", "9.12", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    // Touched, same bytes: still the release's copy (read once, as git does).
    let h = tk.join("include/cudnn.h");
    let f = std::fs::File::options().write(true).open(&h);
    let f = f.unwrap_or_else(|_| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&h, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::File::options().write(true).open(&h).unwrap()
    });
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(f);
    sb.run(["current", "--cuda-root", &t])
        .ok()
        .stdout_has(&["files match"]);
    sb.run(["use", "9.12", "--cuda-root", &t, "--mode", "copy"])
        .ok()
        .stderr_has(&["is already active"]);
    // Same size, other bytes: drift, and `use` deploys the release again.
    edit_same_size(&h);
    sb.run(["current", "--cuda-root", &t])
        .ok()
        .stdout_has(&["drift: 1 changed"]);
    sb.run(["use", "9.12", "--cuda-root", &t, "--mode", "copy"])
        .ok()
        .stderr_has(&["but the files changed (drift: 1 changed); deploying it again"]);
}

#[test]
fn a_receipt_without_times_is_read_once_then_recorded_and_a_changed_file_is_refused() {
    // Receipts written before the times were kept (`put_release` writes
    // them so): `use` reads the files it deploys and records their times.
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let t = tk_arg(&tk);
    let rel = put_redist_linux_12(&sb.home(), "9.12.0.46");
    put_redist_linux_12(&sb.home(), "9.1.0.70");
    let receipt = rel.join("receipt.toml");
    assert!(
        !std::fs::read_to_string(&receipt)
            .unwrap()
            .contains("mtime_ns")
    );
    sb.run(["use", "9.12", "--cuda-root", &t]).ok();
    let now = std::fs::read_to_string(&receipt).unwrap();
    assert!(now.contains("mtime_ns = "), "{now}");
    assert!(now.contains("path = \"include/cudnn.h\""), "{now}");
    // A same-size change to a store file of the other release: refused.
    let other = sb.home().join("store/cuda-12/9.1.0.70/include/cudnn.h");
    edit_same_size(&other);
    sb.run(["use", "9.1", "--cuda-root", &t])
        .code_is(4)
        .stderr_has(&["error: cuDNN 9.1.0.70_cuda12 in the store is damaged: '"]);
    sb.run(["current", "--cuda-root", &t])
        .ok()
        .stdout_has(&["9.12.0.46_cuda12, symlink", "files match"]);
}

/// The command in backticks right after `after` in `text`, run as printed
/// (its arguments hold no spaces).
fn run_after(sb: &Sandbox, text: &str, after: &str) -> common::Run {
    let at = text
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} in {text}"))
        + after.len();
    let start = at + text[at..].find("`cudnnm ").unwrap() + 1;
    let cmd = &text[start..start + text[start..].find('`').unwrap()];
    let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
    sb.run(&args)
}

#[cfg(target_os = "linux")]
#[test]
fn every_install_hint_names_what_the_catalog_has_and_the_printed_commands_work() {
    let mut sb = Sandbox::new();
    offline_pip(&mut sb, &common::wheels_dir());
    let _lab = lab_archives(&sb, &[("9.12.0.46", "13"), ("9.27.0.42", "13")]);
    // exec / which / env (a release no store holds): the catalog's release
    // (with no toolkit to choose by, its newest CUDA's build), not `install 9.12`.
    let r = sb
        .run(["exec", "--version", "9.12", "--", "true"])
        .code_is(3);
    let r = r.stderr_has(&[
        "error: cuDNN 9.12 is not installed (asked for by the command line)",
        "help: install it with `cudnnm install 9.12.0.46_cuda13`",
    ]);
    sb.run(["which", "--version", "9.12"])
        .code_is(3)
        .stderr_has(&["help: install it with `cudnnm install 9.12.0.46_cuda13`"]);
    run_printed(&sb, &r.stderr()).ok();
    sb.run(["exec", "--version", "9.12", "--", "true"]).ok();
    // export dir: the nearest installed, then the catalog's command; it works.
    let out = sb.root().join("out").display().to_string();
    let r = sb.run(["export", "dir", &out, "9.27"]).code_is(3).stderr_has(&[
        "error: cuDNN 9.27 is not installed",
        "help: the nearest installed release is: 9.12.0.46_cuda13; or install it with `cudnnm install 9.27.0.42_cuda13`",
    ]);
    run_printed(&sb, &r.stderr()).ok();
    sb.run(["export", "dir", &out, "9.27"]).ok();
    // A release no catalog has: never `install 9.99`, but the nearest there is.
    for args in [
        &["pin", "9.99"][..],
        &["default", "9.99"],
        &["exec", "--version", "9.99", "--", "true"],
    ] {
        let r = sb
            .run(args)
            .code_is(3)
            .stderr_has(&["help: the nearest release the catalog has is cuDNN 9."]);
        assert!(!r.stderr().contains("install 9.99"), "{}", r.describe());
    }
    // `install` of a version the catalog lacks lists the nearest, PyPI's
    // included, each with its command; the one printed for 9.12.0.46 works.
    let r = sb.run(["install", "9.12.0.4"]).code_is(3).stderr_has(&[
        "error: cuDNN 9.12.0.4 is not in the catalog for linux-x86_64",
        "caused by: nearest known: ",
        "9.12.0.46 (`cudnnm install 9.12.0.46_cuda13`)",
    ]);
    run_after(&sb, &r.stderr(), "9.12.0.46 (")
        .ok()
        .stderr_has(&["is already installed"]);
}
