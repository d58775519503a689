//! The Windows binary doing Windows things, run under wine by
//! `scripts/test-windows.sh`: a toolkit in `…\NVIDIA GPU Computing
//! Toolkit\CUDA\v11.2` and a home whose path has spaces and non-ASCII
//! characters; old Windows zips installed, deployed by hard link, switched,
//! rolled back, byte for byte; a DLL held open by another process; `exec`'s
//! PATH/INCLUDE/LIB; the per-user `current` link; the import table of the
//! `.exe` (C runtime linked statically).
//!
//! What wine cannot show (junctions, Program Files' ACLs, UAC, a second
//! volume) is checked as data: `deploy::access` (held files, denied
//! folders), the injected denial below, and `tests/it/use_.rs` on Linux.
#![cfg(windows)]

use crate::common;
use crate::deploy_support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use common::{Sandbox, fixtures};
use deploy_support::{snapshot, windows_toolkit};

/// A sandbox inside a folder named like a real Windows user's profile:
/// spaces, accents, CJK.
fn unicode_sandbox() -> Sandbox {
    let parent = std::env::temp_dir().join("Jürgen Müller 用户 (x64)");
    fs::create_dir_all(&parent).unwrap();
    Sandbox::new_in(&parent)
}

/// A CUDA 11.2 toolkit where NVIDIA's installer puts it (below the sandbox).
fn toolkit_11_2(sb: &Sandbox) -> PathBuf {
    let root = sb
        .root()
        .join(r"Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2");
    windows_toolkit(&root, "11.2.152")
}

/// The cuDNN files a zip fixture puts into a toolkit, keyed as the toolkit
/// holds them (`bin/cudnn64_8.dll`, `include/cudnn.h`, `lib/x64/cudnn.lib`).
fn expected(fx: &fixtures::Fixture) -> BTreeMap<String, Vec<u8>> {
    fx.entries
        .iter()
        .filter_map(|(p, item)| {
            let fixtures::Item::File(bytes) = item else {
                return None;
            };
            let rel = p.strip_prefix("cuda/")?;
            (rel.starts_with("bin/") || rel.starts_with("include/") || rel.starts_with("lib/x64/"))
                .then(|| (rel.to_string(), bytes.clone()))
        })
        .collect()
}

/// The cuDNN files in the toolkit's `bin`, `include` and `lib\x64`, with
/// their bytes.
fn cudnn_files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    for dir in ["bin", "include", "lib/x64"] {
        for e in fs::read_dir(root.join(dir)).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.to_ascii_lowercase().starts_with("cudnn") {
                m.insert(format!("{dir}/{name}"), fs::read(e.path()).unwrap());
            }
        }
    }
    m
}

fn assert_same(got: &BTreeMap<String, Vec<u8>>, want: &BTreeMap<String, Vec<u8>>, when: &str) {
    let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(got), names(want), "{when}: file names");
    for (k, v) in want {
        assert!(got[k] == *v, "{when}: bytes of {k} differ");
    }
}

/// A hand-copied cuDNN 8.0.5 set, as users leave it in the toolkit.
fn hand_copied(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let fx = fixtures::windows_zip("11.0", "8.0.5.39", "cudnn-11.0-windows-x64-v8.0.5.39.zip");
    let want = expected(&fx);
    for (rel, bytes) in &want {
        fs::write(root.join(rel), bytes).unwrap();
    }
    want
}

#[test]
fn install_use_hardlink_switch_and_rollback_byte_for_byte() {
    let sb = unicode_sandbox();
    assert!(sb.home().to_string_lossy().contains("Müller 用户"));
    let tk = toolkit_11_2(&sb);
    let cudart = fs::read(tk.join("bin/cudart64_110.dll")).unwrap();
    let original = hand_copied(&tk);

    let fx81 = fixtures::windows_zip_8_1_0_77();
    let fx71 = fixtures::windows_zip_7_1_3();
    let downloads = sb.root().join("My Downloads");
    fs::create_dir_all(&downloads).unwrap();
    for fx in [&fx81, &fx71] {
        let zip = fx.write(&downloads);
        sb.run([Path::new("install"), &zip]).ok();
    }
    let listed = sb.run(["list", "--json"]).ok().json();
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["7.1.3_cuda8.0", "8.1.0.77_cuda11.2"], "{listed}");

    let root = tk.display().to_string();
    let want81 = expected(&fx81);
    let want71 = expected(&fx71);
    sb.run([
        "use",
        "8.1.0.77",
        "--cuda-root",
        &root,
        "--mode",
        "hardlink",
    ])
    .ok()
    .stderr_has(&[
        "cuDNN 8.0.5 (not from cudnnm) → 8.1.0.77 in",
        "(hardlink, backup 1)",
    ]);
    assert_same(&cudnn_files(&tk), &want81, "after use 8.1.0.77");
    let cur = sb
        .run(["current", "--cuda-root", &root, "--json"])
        .ok()
        .json();
    let text = cur.to_string();
    assert!(text.contains("\"hardlink\""), "{cur}");
    assert!(text.contains("8.1.0.77_cuda11.2"), "{cur}");

    // The fixture DLLs are not real libraries: verify says they do not load
    // (with Windows' own reason), not that the files changed, and points to
    // doctor rather than to a redeploy that would place the same bytes.
    let v = sb.run(["verify"]).code_is(7);
    let text = v.stdout() + &v.stderr();
    assert!(text.contains("does not load"), "{text}");
    assert!(text.contains("(os error "), "the OS reason is kept: {text}");
    assert!(text.contains("are exactly what cudnnm placed"), "{text}");
    assert!(!text.contains("deploys 8.1.0.77_cuda11.2 again"), "{text}");

    // cuDNN 7.1.3 is built for CUDA 8.0: refused, nothing changed; --force deploys it.
    sb.run(["use", "7.1.3", "--cuda-root", &root, "--mode", "hardlink"])
        .code_is(8);
    assert_same(&cudnn_files(&tk), &want81, "after the refused use");
    sb.run([
        "use",
        "7.1.3",
        "--cuda-root",
        &root,
        "--mode",
        "hardlink",
        "--force",
    ])
    .ok();
    assert_same(&cudnn_files(&tk), &want71, "after use 7.1.3");

    sb.run(["rollback", "--cuda-root", &root]).ok();
    assert_same(&cudnn_files(&tk), &want81, "after rollback");

    // The first backup holds the hand-copied set: back to it, byte for byte.
    sb.run(["rollback", "--cuda-root", &root, "--to", "1"]).ok();
    assert_same(&cudnn_files(&tk), &original, "after rollback --to 1");
    assert_eq!(fs::read(tk.join("bin/cudart64_110.dll")).unwrap(), cudart);

    // Hard links never let the toolkit's copies change the store.
    sb.run(["verify", "--no-load"]).ok();
}

#[test]
fn a_dll_held_open_by_another_program_refuses_use_and_changes_nothing() {
    use std::os::windows::fs::OpenOptionsExt;
    const FILE_SHARE_READ: u32 = 1;
    let sb = Sandbox::new();
    let tk = toolkit_11_2(&sb);
    hand_copied(&tk);
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    sb.run([Path::new("install"), &zip]).ok();
    let before = snapshot(&tk);
    let root = tk.display().to_string();
    let held = tk.join("bin").join("cudnn64_8.dll");

    // Opened without delete sharing, as an editor or a copy in progress does:
    // Windows will not let it be renamed.
    let handle = fs::OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ)
        .open(&held)
        .unwrap();
    let r = sb.run(["use", "8.1.0.77", "--cuda-root", &root]).code_is(8);
    r.stderr_has(&[
        &format!("'{}' is in use by another program", held.display()),
        "nothing was changed",
        "close the programs using it",
    ]);
    // Only the toolkit's lock file (Windows has no flock on folders) is new.
    let mut after = snapshot(&tk);
    assert!(after.remove(".cudnnm-lock").is_some());
    assert_eq!(after, before, "the toolkit is as it was");
    assert!(
        !sb.home().join("deployments.toml").exists(),
        "nothing was recorded"
    );

    // Held for a moment (a scanner): cudnnm waits and goes on. Let go a
    // second after the run starts, well after it first meets the file, so
    // only the retries can make it succeed.
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(1000));
        drop(handle);
    });
    sb.run(["use", "8.1.0.77", "--cuda-root", &root]).ok();
    releaser.join().unwrap();
    assert_same(
        &cudnn_files(&tk),
        &expected(&fixtures::windows_zip_8_1_0_77()),
        "after the file was let go",
    );
}

#[test]
fn exec_puts_bin_first_on_path_and_sets_msvc_include_and_lib() {
    let mut sb = Sandbox::new();
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    sb.run([Path::new("install"), &zip]).ok();
    sb.set_env("INCLUDE", r"C:\VS\include");
    sb.set_env("LIB", r"C:\VS\lib");
    let r = sb
        .run(["exec", "--version", "8.1", "--", "cmd", "/c", "set"])
        .ok();
    let vars: BTreeMap<String, String> = r
        .stdout()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_ascii_uppercase(), v.trim_end().to_string()))
        .collect();
    let rel = sb.home().join(r"store\cuda-11.2\8.1.0.77");
    let first = |k: &str| vars[k].split(';').next().unwrap().to_string();
    assert_eq!(Path::new(&first("PATH")), rel.join("bin"), "{vars:?}");
    assert_eq!(Path::new(&first("INCLUDE")), rel.join("include"));
    assert_eq!(Path::new(&first("LIB")), rel.join("lib"));
    assert!(vars["INCLUDE"].ends_with(r";C:\VS\include"), "{vars:?}");
    assert!(vars["LIB"].ends_with(r";C:\VS\lib"), "{vars:?}");
    assert_eq!(vars["CUDNNM_ACTIVE"], "8.1.0.77_cuda11.2");
    assert_eq!(Path::new(&vars["CUDNN_PATH"]), rel);
}

#[test]
fn default_links_current_or_records_the_folder_where_junctions_fail() {
    let sb = unicode_sandbox();
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    sb.run([Path::new("install"), &zip]).ok();
    let r = sb.run(["default", "8.1", "--json"]).ok();
    let j = r.json();
    let rel = sb.home().join(r"store\cuda-11.2\8.1.0.77");
    let link = sb.home().join(r"current\cuda-11.2");
    let record = sb.home().join(r"current\cuda-11.2.path");
    match j["link_kind"].as_str() {
        // wine 8.0 makes no junctions (FSCTL_SET_REPARSE_POINT: error 50);
        // where a directory symlink is allowed instead, it is made.
        Some("junction") | Some("symlink") => {
            assert_eq!(
                fs::read(link.join("bin/cudnn64_8.dll")).unwrap(),
                fs::read(rel.join("bin/cudnn64_8.dll")).unwrap()
            );
            assert!(!record.exists());
        }
        None => {
            assert_eq!(Path::new(&fs::read_to_string(&record).unwrap()), rel);
            r.stderr_has(&["recorded the release folder in"]);
        }
        other => panic!("link_kind {other:?}: {j}"),
    }
    // Either way `env` activates the default from a folder with no pin.
    let env = sb.run(["env", "--json"]).ok().json();
    assert_eq!(env["release"], "8.1.0.77_cuda11.2", "{env}");
}

#[test]
fn the_exe_imports_no_c_runtime_dll_that_a_machine_may_lack() {
    // +crt-static (.cargo/config.toml): doctor must start where the VC++ or
    // MinGW runtime is missing. msvcrt.dll and the api-ms-win-core sets ship
    // with every Windows; vcruntime/msvcp/ucrtbase, api-ms-win-crt-* (the
    // Universal CRT, absent on a Windows 7 without KB2999226) and
    // libgcc/libwinpthread/libstdc++ do not.
    use object::read::pe::PeFile64;
    let bytes = fs::read(common::bin()).unwrap();
    let pe = PeFile64::parse(&*bytes).unwrap();
    let table = pe.import_table().unwrap().unwrap();
    let mut dlls = Vec::new();
    let mut it = table.descriptors().unwrap();
    while let Some(d) = it.next().unwrap() {
        let name = table.name(d.name.get(object::LittleEndian)).unwrap();
        dlls.push(String::from_utf8_lossy(name).to_ascii_lowercase());
    }
    assert!(dlls.iter().any(|d| d == "kernel32.dll"), "{dlls:?}");
    let bad: Vec<&String> = dlls
        .iter()
        .filter(|d| {
            [
                "vcruntime",
                "msvcp",
                "ucrtbase",
                "api-ms-win-crt-",
                "libgcc",
                "libwinpthread",
                "libstdc++",
            ]
            .iter()
            .any(|p| d.starts_with(p))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "runtime DLLs imported: {bad:?} (all: {dlls:?})"
    );
}

#[test]
fn program_files_without_admin_rights_is_refused_before_any_change() {
    // wine runs everything with full rights, so the denial is injected
    // (CUDNNM_TEST_DENY_WRITE, debug builds): what is checked is that the
    // Windows binary refuses before touching anything and says how to run
    // elevated or activate per process. The Windows probe creates and
    // removes `.cudnnm-probe` in each folder (as Program Files' ACLs
    // decide); on Linux tests/it/use_.rs denies its O_TMPFILE probe for real.
    let mut sb = Sandbox::new();
    let tk = toolkit_11_2(&sb);
    hand_copied(&tk);
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    sb.run([Path::new("install"), &zip]).ok();
    let before = snapshot(&tk);
    sb.set_env("CUDNNM_TEST_DENY_WRITE", &tk);
    let root = tk.display().to_string();
    sb.run(["use", "8.1.0.77", "--cuda-root", &root])
        .code_is(5)
        .stderr_has(&[
            &format!("cannot change cuDNN in '{root}': no write access to"),
            "nothing was changed",
            "run it from an Administrator terminal: `cudnnm --home",
            "cudnnm exec --version 8.1.0.77_cuda11.2 -- COMMAND",
        ]);
    let mut after = snapshot(&tk);
    after.remove(".cudnnm-lock");
    assert_eq!(after, before);
    assert!(!sb.home().join("deployments.toml").exists());
}

#[test]
fn a_dll_loaded_by_a_running_program_is_renamed_into_the_backup() {
    // A real PE DLL (scripts/test-windows.sh names the one it built) sits in
    // the toolkit as cudnn64_8.dll and is loaded by this process, as a
    // notebook holds cuDNN. Windows lets it be renamed, not deleted or
    // overwritten: the switch moves it aside and goes on.
    let pe = std::env::var_os("CUDNNM_TEST_PE_DLL")
        .expect("CUDNNM_TEST_PE_DLL unset: run the Windows tests with scripts/test-windows.sh");
    let sb = Sandbox::new();
    let tk = toolkit_11_2(&sb);
    let loaded = tk.join("bin").join("cudnn64_8.dll");
    fs::copy(&pe, &loaded).unwrap();
    let pe_bytes = fs::read(&loaded).unwrap();
    // SAFETY: the DLL is the one-function stand-in built by
    // scripts/wine/setup.sh; its DllMain does nothing.
    let lib = unsafe { libloading::Library::new(&loaded) }.unwrap();
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    sb.run([Path::new("install"), &zip]).ok();
    let root = tk.display().to_string();
    sb.run(["use", "8.1.0.77", "--cuda-root", &root]).ok();
    assert_same(
        &cudnn_files(&tk),
        &expected(&fixtures::windows_zip_8_1_0_77()),
        "after use, with the old DLL still loaded",
    );
    let backup = sb.home().join(r"backups\1\files\bin\cudnn64_8.dll");
    assert_eq!(
        fs::read(&backup).unwrap(),
        pe_bytes,
        "the loaded DLL is in backup 1"
    );
    drop(lib);
}
