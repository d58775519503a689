//! `cudnnm install` from every real archive shape, every bad input, pip, the
//! real cuDNN builds, `list` and `uninstall`.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::fixtures::{self, Fixture, Item};
use common::{Run, Sandbox};
use serde_json::Value;

fn install(sb: &Sandbox, path: &Path, extra: &[&str]) -> Run {
    let mut args: Vec<std::ffi::OsString> = vec!["install".into(), path.into()];
    args.extend(extra.iter().map(Into::into));
    sb.run(args)
}

fn list(sb: &Sandbox) -> Vec<Value> {
    sb.run(["list", "--json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .clone()
}

fn release_dir(sb: &Sandbox, cuda: &str, version: &str) -> PathBuf {
    sb.home()
        .join("store")
        .join(format!("cuda-{cuda}"))
        .join(version)
}

/// Every file (not link) under a release folder except the receipt, relative, sorted.
fn files_of(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| !e.file_type().is_dir())
        .map(|e| {
            e.path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .filter(|p| p != "receipt.toml")
        .collect();
    v.sort();
    v
}

/// Asserts the store holds no release and no partial/trash folder.
#[track_caller]
fn assert_store_untouched(sb: &Sandbox, run: &Run) {
    let store = sb.home().join("store");
    let leftovers: Vec<String> = fs::read_dir(&store)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        leftovers.is_empty(),
        "store not empty: {leftovers:?}\n{}",
        run.describe()
    );
}

/// Runs an import expected to fail with `code`, naming the archive and each needle.
#[track_caller]
fn refused(sb: &Sandbox, path: &Path, extra: &[&str], code: i32, needles: &[&str]) -> Run {
    let r = install(sb, path, extra).code_is(code);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut all = vec![name.as_str(), "help:"];
    all.extend_from_slice(needles);
    let r = r.stderr_has(&all);
    assert_eq!(
        r.stderr()
            .lines()
            .filter(|l| l.starts_with("error:"))
            .count(),
        1,
        "one error line\n{}",
        r.describe()
    );
    assert_store_untouched(sb, &r);
    r
}

#[test]
fn fixtures_match_the_reference_file_counts() {
    let f = fixtures::windows_zip_8_1_0_77();
    let count = |ext: &str| f.file_paths().iter().filter(|p| p.ends_with(ext)).count();
    assert_eq!(
        (count(".dll"), count(".h"), count(".lib"), count(".txt")),
        (7, 9, 14, 1)
    );
    let f = fixtures::windows_zip_7_1_3();
    assert_eq!(
        f.file_paths(),
        vec![
            "cuda/bin/cudnn64_7.dll",
            "cuda/include/cudnn.h",
            "cuda/lib/x64/cudnn.lib",
            "cuda/NVIDIA_SLA_cuDNN_Support.txt"
        ]
    );
}

// ------------------------------------------------------------ every shape

#[test]
fn old_windows_zip_7_1_3_for_cuda_8_0() {
    let sb = Sandbox::new();
    let zip = fixtures::windows_zip_7_1_3().write(sb.root());
    install(&sb, &zip, &[])
        .ok()
        .stderr_has(&["installed cuDNN 7.1.3 for CUDA 8.0 (windows-x86_64)"]);
    let l = list(&sb);
    assert_eq!(l.len(), 1);
    assert_eq!(
        (l[0]["version"].as_str(), l[0]["cuda"].as_str()),
        (Some("7.1.3"), Some("8.0"))
    );
    assert_eq!(l[0]["platform"], "windows-x86_64");
    assert_eq!(l[0]["source"]["kind"], "windows-zip");
    assert_eq!(l[0]["source"]["name"], "cudnn-8.0-windows7-x64-v7.1.zip");
    let dir = release_dir(&sb, "8.0", "7.1.3");
    assert_eq!(
        files_of(&dir),
        [
            "NVIDIA_SLA_cuDNN_Support.txt",
            "bin/cudnn64_7.dll",
            "include/cudnn.h",
            "lib/cudnn.lib"
        ]
    );
    // The receipt's hashes are the bytes on disk; the files are read-only.
    let receipt: toml::Value =
        toml::from_str(&fs::read_to_string(dir.join("receipt.toml")).unwrap()).unwrap();
    let dll = receipt["file"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str() == Some("bin/cudnn64_7.dll"))
        .unwrap();
    let bytes = fs::read(dir.join("bin/cudnn64_7.dll")).unwrap();
    assert_eq!(dll["sha256"].as_str().unwrap(), sha256_hex(&bytes));
    assert_eq!(dll["size"].as_integer().unwrap() as usize, bytes.len());
    assert!(
        fs::metadata(dir.join("bin/cudnn64_7.dll"))
            .unwrap()
            .permissions()
            .readonly()
    );
    assert_eq!(
        receipt["source"]["sha256"].as_str().unwrap(),
        sha256_hex(&fs::read(&zip).unwrap())
    );
}

#[test]
fn old_windows_zip_8_1_0_77_has_the_full_set() {
    let sb = Sandbox::new();
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    install(&sb, &zip, &[]).ok();
    let files = files_of(&release_dir(&sb, "11.2", "8.1.0.77"));
    let n = |p: &str, ext: &str| {
        files
            .iter()
            .filter(|f| f.starts_with(p) && f.ends_with(ext))
            .count()
    };
    assert_eq!(
        (
            n("bin/", ".dll"),
            n("include/", ".h"),
            n("lib/", ".lib"),
            n("NVIDIA", ".txt")
        ),
        (7, 9, 14, 1)
    );
    assert!(files.contains(&"bin/cudnn_cnn_infer64_8.dll".to_string()));
    let l = list(&sb);
    assert_eq!(l[0]["header_version"], "8.1.0");
}

#[cfg(unix)]
#[test]
fn old_linux_tgz_keeps_its_symlink_chain() {
    let sb = Sandbox::new();
    let tgz = fixtures::linux_tgz("10.2", "7.6.5.32").write(sb.root());
    install(&sb, &tgz, &[])
        .ok()
        .stderr_has(&["cuDNN 7.6.5.32 for CUDA 10.2 (linux-x86_64)"]);
    let lib = release_dir(&sb, "10.2", "7.6.5.32").join("lib");
    assert_eq!(
        fs::read_link(lib.join("libcudnn.so")).unwrap(),
        Path::new("libcudnn.so.7")
    );
    assert_eq!(
        fs::read_link(lib.join("libcudnn.so.7")).unwrap(),
        Path::new("libcudnn.so.7.6.5")
    );
    assert!(
        fs::symlink_metadata(lib.join("libcudnn.so.7.6.5"))
            .unwrap()
            .file_type()
            .is_file()
    );
    assert!(lib.join("libcudnn_static.a").is_file());
    assert_eq!(list(&sb)[0]["source"]["kind"], "linux-tgz");
}

#[cfg(unix)]
#[test]
fn redist_linux_tar_xz_8_9_7_29() {
    let sb = Sandbox::new();
    let txz = fixtures::redist_linux("8.9.7.29", "12").write(sb.root());
    install(&sb, &txz, &[]).ok();
    let dir = release_dir(&sb, "12", "8.9.7.29");
    let files = files_of(&dir);
    assert_eq!(
        files.iter().filter(|f| f.starts_with("include/")).count(),
        18
    );
    assert_eq!(
        fs::read_link(dir.join("lib/libcudnn_ops_infer.so.8")).unwrap(),
        Path::new("libcudnn_ops_infer.so.8.9.7")
    );
    assert!(files.contains(&"LICENSE".to_string()));
    let l = list(&sb);
    assert_eq!(
        (l[0]["source"]["kind"].as_str(), l[0]["platform"].as_str()),
        (Some("redist"), Some("linux-x86_64"))
    );
}

#[test]
fn redist_windows_zips_across_folder_drift() {
    let sb = Sandbox::new();
    // 8.3: import libraries in lib\ ; 8.9: lib\x64 ; 9.18: DLLs in bin\x64.
    for (v, c) in [
        ("8.3.2.44", "11.5"),
        ("8.9.7.29", "12"),
        ("9.18.0.77", "12"),
    ] {
        let zip = fixtures::redist_windows(v, c).write(sb.root());
        install(&sb, &zip, &[]).ok();
        let files = files_of(&release_dir(&sb, c, v));
        let major = &v[..1];
        assert!(
            files.contains(&format!("bin/cudnn64_{major}.dll")),
            "{v}: {files:?}"
        );
        assert!(
            files.contains(&format!("lib/cudnn64_{major}.lib")),
            "{v}: {files:?}"
        );
        assert!(files.contains(&"include/cudnn_version.h".to_string()));
    }
    let ids: Vec<String> = list(&sb)
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        ids,
        ["8.3.2.44_cuda11.5", "8.9.7.29_cuda12", "9.18.0.77_cuda12"]
    );
}

#[cfg(unix)]
#[test]
fn wheels_linux_get_dev_links_and_metadata_version() {
    let sb = Sandbox::new();
    for (pkg, v, cuda) in [
        ("nvidia_cudnn_cu12", "9.1.0.70", "12"),
        ("nvidia_cudnn_cu11", "8.9.2.26", "11"),
        ("nvidia_cudnn_jit_cu12", "9.27.0.42", "12"),
    ] {
        let whl = fixtures::wheel(pkg, v, false).write(sb.root());
        install(&sb, &whl, &[]).ok();
        let folder = if pkg.contains("_jit_") {
            format!("{v}+jit")
        } else {
            v.to_string()
        };
        let lib = release_dir(&sb, cuda, &folder).join("lib");
        let major = &v[..1];
        assert_eq!(
            fs::read_link(lib.join("libcudnn.so")).unwrap(),
            Path::new(&format!("libcudnn.so.{major}")),
            "{pkg}"
        );
        assert!(!lib.join("__init__.py").exists());
    }
    let l = list(&sb);
    assert!(l.iter().all(|r| r["source"]["kind"] == "wheel"));
    let jit = l.iter().find(|r| r["version"] == "9.27.0.42").unwrap();
    let dir = PathBuf::from(jit["path"].as_str().unwrap());
    assert_eq!(
        files_of(&dir)
            .into_iter()
            .filter(|f| f.starts_with("lib/"))
            .collect::<Vec<_>>(),
        [
            "lib/libcudnn.so",
            "lib/libcudnn.so.9",
            "lib/libcudnn_engines_runtime_compiled.so",
            "lib/libcudnn_engines_runtime_compiled.so.9",
            "lib/libcudnn_graph.so",
            "lib/libcudnn_graph.so.9"
        ]
    );
}

#[test]
fn windows_wheel() {
    let sb = Sandbox::new();
    let whl = fixtures::wheel("nvidia_cudnn_cu12", "9.5.1.17", true).write(sb.root());
    install(&sb, &whl, &[]).ok();
    let files = files_of(&release_dir(&sb, "12", "9.5.1.17"));
    assert_eq!(
        files
            .iter()
            .filter(|f| f.starts_with("bin/") && f.ends_with(".dll"))
            .count(),
        8
    );
    assert_eq!(
        files
            .iter()
            .filter(|f| f.starts_with("lib/") && f.ends_with(".lib"))
            .count(),
        16
    );
    assert_eq!(list(&sb)[0]["platform"], "windows-x86_64");
}

#[cfg(unix)]
#[test]
fn unpacked_folder_imports_like_its_archive() {
    let sb = Sandbox::new();
    let dir = fixtures::redist_linux("9.1.0.70", "11").write_dir(sb.root());
    install(&sb, &dir, &[]).ok();
    let l = list(&sb);
    assert_eq!(
        (l[0]["id"].as_str(), l[0]["source"]["kind"].as_str()),
        (Some("9.1.0.70_cuda11"), Some("redist"))
    );
    assert!(
        l[0]["source"].get("sha256").is_none(),
        "folders have no archive hash"
    );
    let lib = release_dir(&sb, "11", "9.1.0.70").join("lib");
    assert_eq!(
        fs::read_link(lib.join("libcudnn_graph.so.9")).unwrap(),
        Path::new("libcudnn_graph.so.9.1.0")
    );
}

#[test]
fn nvidia_installer_folder_one_cuda_subfolder_at_a_time() {
    let sb = Sandbox::new();
    let dir = fixtures::installer_folder("9.7.1.26", &["11.8", "12.8"]).write_dir(sb.root());
    install(&sb, &dir, &[])
        .code_is(2)
        .stderr_has(&["11.8, 12.8", "--cuda"]);
    install(&sb, &dir, &["--cuda", "12"])
        .ok()
        .stderr_has(&["cuDNN 9.7.1 for CUDA 12 (windows-x86_64)"]);
    install(&sb, &dir, &["--cuda", "11.8"]).ok();
    let l = list(&sb);
    assert_eq!(l.len(), 2);
    assert!(l.iter().all(|r| r["source"]["kind"] == "installer-folder"));
    let files = files_of(&release_dir(&sb, "12", "9.7.1"));
    assert!(
        files.contains(&"bin/cudnn_graph64_9.dll".to_string())
            && files.contains(&"lib/cudnn_graph.lib".to_string())
    );
    install(&sb, &dir, &["--cuda", "13"])
        .code_is(3)
        .stderr_has(&["no build for CUDA 13"]);
}

// ------------------------------------------------------------ names and versions

#[test]
fn name_prefix_version_is_completed_by_the_headers() {
    let sb = Sandbox::new();
    // `v7.1` in the name, 7.1.3 in cudnn.h: agrees; the release is 7.1.3.
    let zip = fixtures::windows_zip_7_1_3().write(sb.root());
    install(&sb, &zip, &[]).ok();
    assert_eq!(list(&sb)[0]["version"], "7.1.3");
}

#[test]
fn name_and_headers_disagree() {
    let sb = Sandbox::new();
    let mut f = fixtures::windows_zip_8_1_0_77();
    f.replace(
        "cuda/include/cudnn_version.h",
        fixtures::version_header("8.0.5").as_bytes(),
    );
    let zip = f.write(sb.root());
    refused(&sb, &zip, &[], 4, &["8.1.0.77", "8.0.5"]);
    install(&sb, &zip, &["--force"])
        .ok()
        .stderr_has(&["warning:", "imported as 8.0.5"]);
    assert_eq!(list(&sb)[0]["version"], "8.0.5");
}

#[test]
fn unknown_cuda_needs_the_flag() {
    let sb = Sandbox::new();
    let mut f = fixtures::windows_zip_8_1_0_77();
    f.name = "my-cudnn.zip".into();
    let zip = f.write(sb.root());
    refused(&sb, &zip, &[], 2, &["cannot tell which CUDA", "--cuda"]);
    install(&sb, &zip, &["--cuda", "11.2"]).ok();
    assert_eq!(list(&sb)[0]["id"], "8.1.0_cuda11.2");
    install(
        &sb,
        &fixtures::windows_zip_8_1_0_77().write(sb.root()),
        &["--cuda", "12"],
    )
    .code_is(2)
    .stderr_has(&["built for CUDA 11.2", "--cuda 12"]);
}

#[test]
fn reinstall_is_a_no_op_unless_forced() {
    let sb = Sandbox::new();
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    install(&sb, &zip, &[]).ok();
    let receipt = release_dir(&sb, "11.2", "8.1.0.77").join("receipt.toml");
    let before = fs::read(&receipt).unwrap();
    install(&sb, &zip, &[])
        .ok()
        .stderr_has(&["already installed"]);
    assert_eq!(fs::read(&receipt).unwrap(), before, "untouched");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    install(&sb, &zip, &["--force"])
        .ok()
        .stderr_has(&["reinstalled"]);
    assert_ne!(
        fs::read(&receipt).unwrap(),
        before,
        "rewritten (new installed_at)"
    );
    assert_eq!(list(&sb).len(), 1);
}

// ------------------------------------------------------------ bad input

fn with_entry(mut f: Fixture, path: &str, item: Item) -> Fixture {
    f.push(path, item);
    f
}

#[test]
fn refuses_absolute_paths() {
    let sb = Sandbox::new();
    let f = with_entry(
        fixtures::linux_tgz("10.2", "7.6.5.32"),
        "/tmp/evil",
        Item::File(b"x".to_vec()),
    );
    refused(
        &sb,
        &f.write_tgz(sb.root()),
        &[],
        4,
        &["'/tmp/evil'", "absolute path"],
    );
}

#[test]
fn a_renamed_download_keeps_its_build_number() {
    // A browser's second download of the same file, in capitals.
    let sb = Sandbox::new();
    let mut f = fixtures::windows_zip_8_1_0_77();
    f.name = "CUDNN-11.2-WINDOWS-X64-V8.1.0.77 (1).ZIP".into();
    install(&sb, &f.write_zip(sb.root()), &[]).ok();
    let l = list(&sb);
    assert_eq!(l.len(), 1);
    assert_eq!(l[0]["id"], "8.1.0.77_cuda11.2", "{l:?}");
}

#[test]
fn refuses_entry_names_windows_cannot_hold() {
    // `x.dll::$DATA` would overwrite x.dll's bytes on NTFS; `NUL.dll` and a
    // trailing dot fail half-way on Windows. Refused up front on every host.
    let sb = Sandbox::new();
    for (entry, comp) in [
        ("cuda/bin/cudnn64_8.dll::$DATA", "cudnn64_8.dll::$DATA"),
        ("cuda/bin/NUL.dll", "NUL.dll"),
        ("cuda/bin/cudnn64_8.dll.", "cudnn64_8.dll."),
    ] {
        let f = with_entry(
            fixtures::windows_zip_8_1_0_77(),
            entry,
            Item::File(b"MZ x".to_vec()),
        );
        refused(
            &sb,
            &f.write_zip(sb.root()),
            &[],
            4,
            &[
                &format!("'{entry}'"),
                &format!("Windows cannot hold as a file ('{comp}'"),
            ],
        );
    }
}

#[test]
fn refuses_parent_dir_entries_in_zip_and_tar() {
    let sb = Sandbox::new();
    let f = with_entry(
        fixtures::windows_zip_8_1_0_77(),
        "cuda/../../evil.dll",
        Item::File(b"x".to_vec()),
    );
    refused(
        &sb,
        &f.write_zip(sb.root()),
        &[],
        4,
        &["'cuda/../../evil.dll'", "'..'"],
    );
    let f = with_entry(
        fixtures::linux_tgz("10.2", "7.6.5.32"),
        "cuda/../../evil",
        Item::File(b"x".to_vec()),
    );
    refused(&sb, &f.write_tgz(sb.root()), &[], 4, &["'..'"]);
    assert!(!sb.root().join("evil").exists() && !sb.home().join("evil").exists());
}

#[test]
fn refuses_links_leaving_the_release() {
    let sb = Sandbox::new();
    let f = with_entry(
        fixtures::linux_tgz("10.2", "7.6.5.32"),
        "cuda/lib64/libcudnn_evil.so",
        Item::Symlink("/etc/passwd".into()),
    );
    refused(
        &sb,
        &f.write_tgz(sb.root()),
        &[],
        4,
        &["libcudnn_evil.so", "outside the release"],
    );
    let f = with_entry(
        fixtures::linux_tgz("10.2", "7.6.5.32"),
        "cuda/lib64/libx.so",
        Item::Symlink("../../../../etc/shadow".into()),
    );
    refused(
        &sb,
        &f.write_tgz(sb.root()),
        &[],
        4,
        &["outside the release"],
    );
    let f = with_entry(
        fixtures::linux_tgz("10.2", "7.6.5.32"),
        "cuda/lib64/libcudnn_hard.so",
        Item::Hardlink("etc/passwd".into()),
    );
    refused(
        &sb,
        &f.write_tgz(sb.root()),
        &[],
        4,
        &["hard link", "outside the release"],
    );
}

#[test]
fn accepts_hard_links_within_the_release() {
    let sb = Sandbox::new();
    let f = with_entry(
        fixtures::linux_tgz("10.2", "7.6.5.32"),
        "cuda/lib64/libcudnn_copy.a",
        Item::Hardlink("cuda/lib64/libcudnn_static.a".into()),
    );
    install(&sb, &f.write_tgz(sb.root()), &[]).ok();
    let lib = release_dir(&sb, "10.2", "7.6.5.32").join("lib");
    assert_eq!(
        fs::read(lib.join("libcudnn_copy.a")).unwrap(),
        fs::read(lib.join("libcudnn_static.a")).unwrap()
    );
}

#[test]
fn refuses_device_files() {
    let sb = Sandbox::new();
    let f = with_entry(
        fixtures::linux_tgz("10.2", "7.6.5.32"),
        "cuda/lib64/null",
        Item::CharDevice,
    );
    refused(
        &sb,
        &f.write_tgz(sb.root()),
        &[],
        4,
        &["'cuda/lib64/null'", "character device"],
    );
}

#[test]
fn refuses_truncated_archives() {
    let sb = Sandbox::new();
    for path in [
        fixtures::windows_zip_8_1_0_77().write(sb.root()),
        fixtures::linux_tgz("10.2", "7.6.5.32").write(sb.root()),
        fixtures::redist_linux("9.1.0.70", "12").write(sb.root()),
    ] {
        let bytes = fs::read(&path).unwrap();
        fs::write(&path, &bytes[..bytes.len() * 2 / 3]).unwrap();
        refused(&sb, &path, &[], 4, &["truncated or corrupt"]);
    }
}

#[test]
fn refuses_corrupt_zip_members() {
    let sb = Sandbox::new();
    let mut f = fixtures::windows_zip_8_1_0_77();
    // A big compressible member so the flipped byte lands inside deflate
    // data; over 32 MiB, so it takes the two-thread (pipelined) path.
    f.replace("cuda/bin/cudnn64_8.dll", &vec![b'A'; 40 << 20]);
    let zip = f.write(sb.root());
    let mut bytes = fs::read(&zip).unwrap();
    let start = find(&bytes, b"cuda/bin/cudnn64_8.dll").unwrap() + 40;
    for b in &mut bytes[start..start + 32] {
        *b ^= 0x5a;
    }
    fs::write(&zip, bytes).unwrap();
    refused(&sb, &zip, &[], 4, &["corrupt"]);
}

#[test]
fn refuses_zips_that_are_not_cudnn() {
    let sb = Sandbox::new();
    let mut f = Fixture::new("cudnn-11.2-windows-x64-v8.1.0.77.zip");
    f.file("cuda/bin/cublas64_11.dll", fixtures::dll_bytes("cublas"))
        .file("cuda/readme.txt", "hi");
    refused(&sb, &f.write(sb.root()), &[], 4, &["no cuDNN header"]);
    let mut f = Fixture::new("cudnn-11.2-windows-x64-v8.1.0.77.zip");
    f.file("cuda/include/cudnn.h", "#include \"cudnn_version.h\"")
        .file(
            "cuda/include/cudnn_version.h",
            fixtures::version_header("8.1.0"),
        );
    refused(&sb, &f.write(sb.root()), &[], 4, &["no cuDNN library"]);
    let not_an_archive = sb.root().join("cudnn-notes.zip");
    fs::write(&not_an_archive, "<html>login required</html>").unwrap();
    refused(&sb, &not_an_archive, &[], 4, &["not a zip"]);
}

#[test]
fn refuses_sha256_mismatch() {
    let sb = Sandbox::new();
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    let wrong = "0".repeat(64);
    refused(&sb, &zip, &["--sha256", &wrong], 4, &["SHA-256", &wrong]);
    let tgz = fixtures::linux_tgz("10.2", "7.6.5.32").write(sb.root());
    refused(&sb, &tgz, &["--sha256", &wrong], 4, &["SHA-256"]);
    let right = sha256_hex(&fs::read(&zip).unwrap());
    install(&sb, &zip, &["--sha256", &right.to_uppercase()]).ok();
}

#[test]
fn refuses_two_versions_in_one_archive() {
    let sb = Sandbox::new();
    // Two trees, 8.1.0 and 8.0.5.
    let mut f = fixtures::windows_zip_8_1_0_77();
    for (p, i) in fixtures::windows_zip("11.0", "8.0.5.39", "x").entries {
        f.push(&p.replacen("cuda/", "old/cuda/", 1), i);
    }
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &["two different cuDNN versions", "8.1.0", "8.0.5"],
    );
    // A stale cuDNN 7 DLL inside an 8.x set.
    let f = with_entry(
        fixtures::windows_zip_8_1_0_77(),
        "cuda/bin/cudnn64_7.dll",
        Item::File(fixtures::dll_bytes("7")),
    );
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &["two different cuDNN versions", "cudnn64_7.dll"],
    );
}

#[cfg(unix)]
fn as_nobody(sb: &Sandbox, args: &[&std::ffi::OsStr]) -> Run {
    // Root reads everything; run as `nobody` so permission bits apply.
    let mut c = sb.command();
    let is_root = fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false);
    if is_root {
        let bin = c.get_program().to_owned();
        c = std::process::Command::new("setpriv");
        c.args([
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            "--",
        ])
        .arg(bin);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("CUDNNM_HOME", sb.home())
            .current_dir(sb.work());
    }
    let out = c.args(args).output().unwrap();
    Run {
        args: args.iter().map(|a| a.to_os_string()).collect(),
        out,
        root: sb.root().to_path_buf(),
    }
}

#[cfg(unix)]
#[test]
fn refuses_unreadable_input() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    for d in [sb.root(), &sb.work()] {
        fs::set_permissions(d, fs::Permissions::from_mode(0o777)).unwrap();
    }
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    fs::set_permissions(&zip, fs::Permissions::from_mode(0o000)).unwrap();
    let r = as_nobody(&sb, &["install".as_ref(), zip.as_os_str()]).code_is(5);
    let r = r.stderr_has(&["could not", "cudnn-11.2-windows-x64-v8.1.0.77.zip", "help:"]);
    assert_store_untouched(&sb, &r);
}

/// Runs cudnnm inside a private mount namespace with a small tmpfs as the
/// home: `size` bytes, read-only when `ro`. A real full or read-only disk.
#[cfg(target_os = "linux")]
fn with_small_home(sb: &Sandbox, size: &str, ro: bool, archive: &Path) -> Run {
    let home = sb.home();
    fs::create_dir_all(&home).unwrap();
    let remount = if ro {
        format!(" && mount -o remount,ro '{}'", home.display())
    } else {
        String::new()
    };
    let script = format!(
        "mount -t tmpfs -o size={size} tmpfs '{h}'{remount} && exec '{bin}' install '{a}'; echo 'mount failed' >&2; exit 99",
        h = home.display(),
        bin = common::bin().display(),
        a = archive.display()
    );
    let out = sb
        .wrapped("unshare")
        .args(["-rm", "sh", "-c", &script])
        .output()
        .unwrap();
    Run {
        args: vec!["install".into(), archive.into()],
        out,
        root: sb.root().to_path_buf(),
    }
}

#[cfg(target_os = "linux")]
#[test]
fn full_disk_fails_cleanly() {
    let sb = Sandbox::new();
    let mut f = fixtures::windows_zip_8_1_0_77();
    // Incompressible and over 32 MiB: the two-thread (pipelined) writer hits the full disk.
    let big: Vec<u8> = (0..(40u32 << 20))
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    f.replace("cuda/bin/cudnn_cnn_infer64_8.dll", &big);
    let zip = f.write(sb.root());
    let r = with_small_home(&sb, "1m", false, &zip).code_is(1);
    let r = r.stderr_has(&["not enough disk space", "help:", "disk space"]);
    assert!(!r.stderr().contains("mount failed"), "{}", r.describe());
    // The tmpfs vanished with the namespace; the real home shows nothing was left behind.
    assert_store_untouched(&sb, &r);
}

/// A zip declares the sizes of its entries: on a disk too small for them,
/// install refuses before writing a byte, naming the archive, the bytes
/// needed and the bytes free (a real 2 MiB tmpfs as the home, looked at
/// after the command inside the same mount namespace).
#[cfg(target_os = "linux")]
#[test]
fn a_zip_too_big_for_the_disk_is_refused_before_writing() {
    let sb = Sandbox::new();
    let mut f = fixtures::windows_zip_8_1_0_77();
    // 8 MiB of zeros: the zip is small, its declared size is not.
    f.replace("cuda/bin/cudnn_cnn_infer64_8.dll", &vec![0u8; 8 << 20]);
    let zip = f.write(sb.root());
    let home = sb.home();
    fs::create_dir_all(&home).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=2m tmpfs '{h}' || exit 99; '{bin}' install '{a}'; echo \"exit=$?\"; find '{h}' -type f -size +0c -path '*/store/*'; echo end",
        h = home.display(),
        bin = common::bin().display(),
        a = zip.display()
    );
    let out = sb
        .wrapped("unshare")
        .args(["-rm", "sh", "-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stdout, "exit=1\nend\n", "{stderr}");
    let line = stderr.lines().next().unwrap_or_default();
    assert!(
        line.starts_with(&format!(
            "error: not enough disk space to unpack '{}': it needs 8.",
            zip.display()
        )),
        "{stderr}"
    );
    assert!(line.contains(" free"), "{stderr}");
    // The bytes needed: the declared sizes and a block a file.
    let needed: u64 = line
        .split(" (")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(needed > 8 << 20 && needed < 9 << 20, "{needed}");
    let free: u64 = line
        .rsplit(" (")
        .next()
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(free <= 2 << 20, "{free}");
    assert!(
        stderr.contains("caused by: nothing was written"),
        "{stderr}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn read_only_home_fails_cleanly() {
    let sb = Sandbox::new();
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    let r = with_small_home(&sb, "4m", true, &zip).code_is(5);
    r.stderr_has(&["could not", "Read-only file system", "help:"]);
}

// ------------------------------------------------------------ real cuDNN builds

#[cfg(target_os = "linux")]
#[test]
fn real_jit_wheels_install_and_report_their_version() {
    let sb = Sandbox::new();
    for (prefix, want) in [
        ("nvidia_cudnn_jit_cu12-9.12.0.46", 91200u64),
        ("nvidia_cudnn_jit_cu12-9.27.0.42", 92700),
    ] {
        let whl = common::real_wheel(prefix);
        install(&sb, &whl, &[]).ok();
        let version = &prefix["nvidia_cudnn_jit_cu12-".len()..];
        // The JIT build's own folder.
        let lib = release_dir(&sb, "12", &format!("{version}+jit")).join("lib/libcudnn.so.9");
        // One process per library: the loader shares sub-libraries by soname.
        let got = cudnnm::libcudnn::query_version_isolated(&common::bin(), &lib).unwrap();
        assert_eq!(got.cudnn, want, "{}", lib.display());
        assert!(
            (12000..13000).contains(&got.cudart),
            "cudart {}",
            got.cudart
        );
        let l = list(&sb);
        let r = l.iter().find(|r| r["version"] == version).unwrap();
        assert_eq!(
            r["header_version"],
            cudnnm::version::Version::from_cudnn_version_number(want).to_string()
        );
        assert_eq!(
            r["source"]["sha256"].as_str().unwrap(),
            sha256_hex(&fs::read(&whl).unwrap())
        );
        // Every library's SHA-256 in the receipt equals the one the wheel's own RECORD publishes.
        let record = wheel_record(&whl);
        let receipt: toml::Value = toml::from_str(
            &fs::read_to_string(
                release_dir(&sb, "12", &format!("{version}+jit")).join("receipt.toml"),
            )
            .unwrap(),
        )
        .unwrap();
        let mut checked = 0;
        for f in receipt["file"].as_array().unwrap() {
            let path = f["path"].as_str().unwrap();
            if let Some(want) = record.get(&format!("nvidia/cudnn_jit/{path}")) {
                assert_eq!(f["sha256"].as_str().unwrap(), want, "{path}");
                checked += 1;
            }
        }
        assert!(
            checked >= 15,
            "only {checked} files matched the wheel's RECORD"
        );
    }
}

#[cfg(unix)]
/// `path -> sha256 hex` from a wheel's `*.dist-info/RECORD` (`sha256=<base64url>`).
fn wheel_record(whl: &Path) -> std::collections::HashMap<String, String> {
    use std::io::Read;
    let mut z = zip::ZipArchive::new(fs::File::open(whl).unwrap()).unwrap();
    let name = z
        .file_names()
        .flatten()
        .find(|n| n.ends_with(".dist-info/RECORD"))
        .unwrap()
        .into_owned();
    let mut text = String::new();
    z.by_name(&name).unwrap().read_to_string(&mut text).unwrap();
    let mut out = std::collections::HashMap::new();
    for line in text.lines() {
        let mut parts = line.split(',');
        let (Some(path), Some(hash)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Some(b64) = hash.strip_prefix("sha256=") else {
            continue;
        };
        out.insert(path.to_string(), base64url_to_hex(b64));
    }
    out
}

#[cfg(unix)]
fn base64url_to_hex(s: &str) -> String {
    let val = |c: u8| {
        (match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => panic!("not base64url: {s}"),
        }) as u32
    };
    let (mut bits, mut n, mut out) = (0u32, 0, String::new());
    for c in s.bytes().filter(|&c| c != b'=') {
        bits = (bits << 6) | val(c);
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push_str(&format!("{:02x}", (bits >> n) & 0xff));
        }
    }
    out
}

#[cfg(target_os = "linux")]
#[test]
fn pip_requirement_runs_the_users_pip() {
    let mut sb = Sandbox::new();
    // Real pip, offline: the index is off and the cached real wheels are the only source.
    common::real_wheel("nvidia_cudnn_jit_cu12-9.12.0.46");
    sb.set_env("PIP_NO_INDEX", "1");
    sb.set_env("PIP_FIND_LINKS", common::wheels_dir());
    sb.set_env("PIP_CONFIG_FILE", "/dev/null");
    sb.run(["install", "pip:nvidia-cudnn-jit-cu12==9.12.0.46"])
        .ok();
    let l = list(&sb);
    assert_eq!(l[0]["id"], "9.12.0.46_cuda12+jit");
    assert_eq!(l[0]["flavour"], "jit");
    assert_eq!(
        l[0]["source"]["url"],
        "pip:nvidia-cudnn-jit-cu12==9.12.0.46"
    );
    let leftovers: Vec<_> = fs::read_dir(sb.home())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".pip-"))
        .collect();
    assert!(leftovers.is_empty(), "pip's download folder is removed");
    // A version the index lacks is "no such version" (exit 3) with the
    // nearest ones pip listed, not a network failure.
    sb.run(["install", "pip:nvidia-cudnn-jit-cu12==9.99.0.0"])
        .code_is(3)
        .stderr_has(&[
            "error: no such version: pip's index has no 'nvidia-cudnn-jit-cu12==9.99.0.0'",
            "help: the nearest versions pip's index has: 9.27.0.42, 9.12.0.46 (`cudnnm install pip:nvidia-cudnn-jit-cu12==9.27.0.42`)",
        ]);
    sb.run(["install", "-q", "pip:nvidia-cudnn-jit-cu12==9.12.0.4"])
        .code_is(3)
        .stderr_has(&["help: the nearest versions pip's index has: 9.12.0.46, 9.27.0.42 ("]);
    // An index that cannot be reached stays a network failure (exit 6).
    let mut sb = Sandbox::new();
    sb.set_env("PIP_CONFIG_FILE", "/dev/null");
    sb.set_env(
        "PIP_INDEX_URL",
        format!("http://127.0.0.1:{}/simple", common::http::closed_port()),
    );
    sb.set_env("PIP_RETRIES", "1");
    sb.run(["install", "pip:nvidia-cudnn-jit-cu12==9.12.0.46"])
        .code_is(6)
        .stderr_has(&["pip could not reach its index http://127.0.0.1:", "help:"]);
}

#[test]
fn pip_missing_is_a_clear_error() {
    let mut sb = Sandbox::new();
    sb.set_env("CUDNNM_PYTHON", "/nonexistent/python3");
    sb.run(["install", "pip:nvidia-cudnn-cu12==9.1.0.70"])
        .code_is(3)
        .stderr_has(&[
            "could not run '/nonexistent/python3'",
            "install Python 3 with pip",
        ]);
    // A program that runs, succeeds and downloads nothing.
    let mut sb = Sandbox::new();
    if cfg!(windows) {
        let fake = sb.root().join("fake-python.cmd");
        std::fs::write(&fake, "@exit /b 0\r\n").unwrap();
        sb.set_env("CUDNNM_PYTHON", &fake);
    } else {
        sb.set_env("CUDNNM_PYTHON", "true");
    }
    sb.run(["install", "pip:nvidia-cudnn-cu12==9.1.0.70"])
        .code_is(4)
        .stderr_has(&["0 wheel files"]);
}

/// SIGTERM (or Ctrl-C sent to cudnnm alone) while pip downloads: pip is
/// stopped too, its download folder is removed, and the exit is 130 as for
/// any interrupted install — no orphaned pip writing into the home.
#[cfg(unix)]
#[test]
fn a_signal_during_a_pip_download_stops_pip_and_leaves_nothing() {
    use std::os::unix::fs::PermissionsExt;
    for signal in ["-TERM", "-INT"] {
        let mut sb = Sandbox::new();
        // A stand-in for `python3 -m pip download`: says its PID, writes a
        // partial wheel into --dest, then downloads "forever".
        let pidfile = sb.root().join("pip.pid");
        let fake = sb.root().join("fake-python");
        std::fs::write(
            &fake,
            format!(
                "#!/bin/sh\nwhile [ \"$1\" != --dest ]; do shift; done\nhead -c 4096 /dev/zero > \"$2/x.whl.part\"\necho $$ > {}\nexec sleep 60\n",
                pidfile.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        sb.set_env("CUDNNM_PYTHON", &fake);
        let child = sb
            .command()
            .args(["install", "pip:nvidia-cudnn-cu12==9.1.0.70"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while std::fs::read_to_string(&pidfile).map_or(true, |t| t.trim().is_empty()) {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "pip never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let pip: u32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The signal goes to cudnnm only, as `kill PID` sends it.
        let st = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let out = child.wait_with_output().unwrap();
        let r = Run {
            args: vec!["install".into()],
            out,
            root: sb.root().to_path_buf(),
        };
        let r = r
            .code_is(130)
            .stderr_has(&["error: interrupted; nothing was installed"]);
        let alive = std::process::Command::new("kill")
            .args(["-0", &pip.to_string()])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(
            !alive,
            "pip ({pip}) still runs after {signal}\n{}",
            r.describe()
        );
        let left: Vec<_> = std::fs::read_dir(sb.home())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".pip-"))
            .collect();
        assert!(left.is_empty(), "{left:?}\n{}", r.describe());
    }
}

/// pip behind a shim (pyenv's `python3` is a shell script that runs the
/// real python as its child): SIGTERM sent to cudnnm alone stops the shim
/// and what it started (pip runs in a process group of its own, which
/// cudnnm kills), at once — not after pip's download — and leaves no
/// download folder.
#[cfg(unix)]
#[test]
fn a_signal_stops_pip_behind_a_shim_and_what_the_shim_started() {
    use std::os::unix::fs::PermissionsExt;
    let mut sb = Sandbox::new();
    let bin = sb.root().join("shims");
    fs::create_dir_all(&bin).unwrap();
    let pidfile = sb.root().join("python.pid");
    // The shim waits for its child, which says its PID, writes a partial
    // wheel into --dest and downloads "forever" (holding pip's stderr).
    let shim = bin.join("python3");
    fs::write(
        &shim,
        format!(
            "#!/bin/sh\nwhile [ \"$1\" != --dest ]; do shift; done\nsh -c 'head -c 4096 /dev/zero > \"$1/x.whl.part\"; echo $$ > {}; exec sleep 60' sh \"$2\"\nexit $?\n",
            pidfile.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&shim, fs::Permissions::from_mode(0o755)).unwrap();
    sb.set_env("CUDNNM_PYTHON", &shim);
    let child = sb
        .command()
        .args(["install", "pip:nvidia-cudnn-cu12==9.1.0.70"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while fs::read_to_string(&pidfile).map_or(true, |t| t.trim().is_empty()) {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "pip never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let python: u32 = fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    common::signal("-TERM", child.id());
    let (out, took) = common::wait_within(child, std::time::Duration::from_secs(10));
    let r = Run {
        args: vec!["install".into()],
        out,
        root: sb.root().to_path_buf(),
    };
    // Whatever happened, the test leaves no process behind.
    let gone = (0..200).any(|_| {
        let runs = common::process_runs(python);
        if runs {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        !runs
    });
    if !gone {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &python.to_string()])
            .status();
    }
    let r = r
        .code_is(130)
        .stderr_has(&["error: interrupted; nothing was installed"]);
    assert!(
        took < std::time::Duration::from_secs(3),
        "exited {took:?} after the signal\n{}",
        r.describe()
    );
    assert!(
        gone,
        "the shim's child ({python}) still runs\n{}",
        r.describe()
    );
    let left: Vec<_> = fs::read_dir(sb.home())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".pip-"))
        .collect();
    assert!(left.is_empty(), "{left:?}\n{}", r.describe());
}

/// A `.pip-*` download folder a kill left (nothing changed in it for an
/// hour, nobody holds it) is removed by the next `install pip:`; a recent
/// one, and one whose owner still holds it, stay. `du` counts them with
/// the downloads.
#[cfg(unix)]
#[test]
fn pip_download_folders_a_kill_left_are_swept_after_an_hour_and_counted_as_downloads() {
    let mut sb = Sandbox::new();
    fs::create_dir_all(sb.home()).unwrap();
    let folder = |name: &str, bytes: usize| {
        let d = sb.home().join(name);
        fs::create_dir_all(d.join("sub")).unwrap();
        fs::write(d.join("sub/x.whl.part"), vec![7u8; bytes]).unwrap();
        d
    };
    let old = folder(".pip-old", 1000);
    let recent = folder(".pip-recent", 300);
    let held = folder(".pip-held", 20);
    // `held`: a running cudnnm holds its `.busy` lock.
    let busy = fs::File::create(held.join(".busy")).unwrap();
    busy.lock().unwrap();
    // Every entry last changed two hours ago; then one file inside
    // `recent` changes.
    for d in [&old, &held, &recent] {
        let mut touch = std::process::Command::new("touch");
        touch.args(["-d", "2 hours ago"]);
        for e in walkdir::WalkDir::new(d).into_iter().flatten() {
            touch.arg(e.path());
        }
        assert!(touch.status().unwrap().success());
    }
    fs::write(recent.join("sub/x.whl.part"), vec![8u8; 300]).unwrap();
    let du = sb.run(["du", "--json"]).ok().json();
    let downloads = du["downloads"].as_u64().unwrap();
    assert_eq!(downloads, 1000 + 300 + 20, "{du}");
    sb.run(["du"]).ok().stdout_has(&["pip's download folders"]);
    sb.set_env("CUDNNM_PYTHON", "true");
    sb.run(["install", "pip:nvidia-cudnn-cu12==9.1.0.70"])
        .code_is(4)
        .stderr_has(&["0 wheel files"]);
    assert!(!old.exists(), "an hour-old folder nobody holds is removed");
    assert!(recent.exists(), "a folder changed within the hour stays");
    assert!(held.exists(), "a folder its owner holds stays");
    drop(busy);
    let du = sb.run(["du", "--json"]).ok().json();
    assert_eq!(du["downloads"].as_u64().unwrap(), 300 + 20, "{du}");
}

// ------------------------------------------------------------ list and uninstall

#[test]
fn uninstall_removes_one_release() {
    let sb = Sandbox::new();
    install(&sb, &fixtures::windows_zip_8_1_0_77().write(sb.root()), &[]).ok();
    install(
        &sb,
        &fixtures::redist_windows("8.1.1.33", "11.2").write(sb.root()),
        &[],
    )
    .ok();
    sb.run(["uninstall", "8.1"])
        .code_is(2)
        .stderr_has(&["matches 2 releases", "8.1.0.77_cuda11.2"]);
    sb.run(["uninstall", "7"])
        .code_is(3)
        .stderr_has(&["not installed"]);
    sb.run(["uninstall", "8.1.0.77"])
        .ok()
        .stderr_has(&["removed cuDNN 8.1.0.77_cuda11.2"]);
    assert!(!release_dir(&sb, "11.2", "8.1.0.77").exists());
    let l = list(&sb);
    assert_eq!(l.len(), 1);
    assert_eq!(l[0]["version"], "8.1.1.33");
}

#[test]
fn uninstall_refuses_a_deployed_release() {
    let sb = Sandbox::new();
    install(&sb, &fixtures::windows_zip_8_1_0_77().write(sb.root()), &[]).ok();
    fs::write(
        sb.home().join("deployments.toml"),
        "[[deployment]]\ntoolkit = '/opt/cuda-11.2'\nrelease = '8.1.0.77_cuda11.2'\nmode = 'copy'\ndeployed_at = '2026-01-01T00:00:00Z'\n",
    )
    .unwrap();
    assert_eq!(list(&sb)[0]["deployed_in"][0], "/opt/cuda-11.2");
    sb.run(["uninstall", "8.1.0.77"])
        .code_is(8)
        .stderr_has(&["deployed in /opt/cuda-11.2", "--force"]);
    assert!(release_dir(&sb, "11.2", "8.1.0.77").exists());
    sb.run(["uninstall", "8.1.0.77", "--force"])
        .ok()
        .stderr_has(&["warning:"]);
    assert!(list(&sb).is_empty());
}

#[test]
fn list_filters_by_cuda_and_prints_a_table() {
    let sb = Sandbox::new();
    install(&sb, &fixtures::windows_zip_7_1_3().write(sb.root()), &[]).ok();
    install(&sb, &fixtures::windows_zip_8_1_0_77().write(sb.root()), &[]).ok();
    let out = sb.run(["list", "--cuda", "11.2"]).ok().stdout();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("VERSION")
            && lines[1].starts_with("8.1.0.77")
            && lines[1].contains("windows-x86_64")
    );
    assert!(sb.run(["list"]).ok().stdout().contains("7.1.3"));
}

// ------------------------------------------------------------ helpers

fn sha256_hex(bytes: &[u8]) -> String {
    cudnnm::hash::sha256_bytes(bytes).to_string()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

// ------------------------------------------------------------ found by a first-time user

#[test]
fn a_renamed_wheel_is_judged_by_its_metadata() {
    let sb = Sandbox::new();
    let mut f = fixtures::wheel("nvidia_cudnn_jit_cu12", "9.12.0.46", false);
    f.name = "cudnn-11.2-windows-x64-v8.1.0.77.zip".into();
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &["name says cuDNN 8.1.0.77", "METADATA says 9.12.0.46"],
    );
    f.name = "nvidia_cudnn_jit_cu11-9.12.0.46-py3-none-manylinux_2_27_x86_64.whl".into();
    let whl = f.write(sb.root());
    refused(
        &sb,
        &whl,
        &[],
        4,
        &["name says CUDA 11", "METADATA says 12"],
    );
    install(&sb, &whl, &["--force"])
        .ok()
        .stderr_has(&["warning:", "imported for CUDA 12"]);
    // A JIT wheel (its METADATA's package): the JIT build's release.
    assert_eq!(list(&sb)[0]["id"], "9.12.0.46_cuda12+jit");
}

#[cfg(unix)]
#[test]
fn site_packages_folders_use_the_wheels_dist_info() {
    let sb = Sandbox::new();
    let site = fixtures::wheel("nvidia_cudnn_jit_cu12", "9.27.0.42", false).write_dir(sb.root());
    // Another package's dist-info beside it must not be taken for cuDNN's.
    fs::create_dir_all(site.join("torch-2.5.0.dist-info")).unwrap();
    fs::write(
        site.join("torch-2.5.0.dist-info/METADATA"),
        "Name: torch\nVersion: 2.5.0\n",
    )
    .unwrap();
    install(&sb, &site.join("nvidia/cudnn_jit"), &[])
        .ok()
        .stderr_has(&["cuDNN 9.27.0.42 for CUDA 12"]);
    install(&sb, &site, &[])
        .ok()
        .stderr_has(&["already installed"]);
    assert_eq!(list(&sb)[0]["id"], "9.27.0.42_cuda12+jit");
}

/// `install --force` of a deployed release takes only the bytes its
/// receipt records (a repair: the deployed links lead to them); other
/// bytes are refused and the release is untouched.
#[test]
fn force_reinstall_of_a_deployed_release_is_refused_unless_it_is_the_same_bytes() {
    let sb = Sandbox::new();
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    install(&sb, &zip, &[]).ok();
    fs::write(
        sb.home().join("deployments.toml"),
        "[[deployment]]\ntoolkit = '/opt/cuda-11.2'\nrelease = '8.1.0.77_cuda11.2'\nmode = 'symlink'\ndeployed_at = '2026-01-01T00:00:00Z'\n",
    )
    .unwrap();
    let receipt = release_dir(&sb, "11.2", "8.1.0.77").join("receipt.toml");
    install(&sb, &zip, &["--force"]).ok().stderr_has(&[
        "repaired in place: the imported files are the ones its receipt records (deployed in /opt/cuda-11.2)",
        "reinstalled cuDNN 8.1.0.77",
    ]);
    let before = fs::read(&receipt).unwrap();
    let dir = sb.root().join("other");
    fs::create_dir_all(&dir).unwrap();
    let other = fixtures::windows_zip_8_1_0_77()
        .replace("cudnn_ops_infer64_8.dll", b"MZ another build")
        .write(&dir);
    install(&sb, &other, &["--force"]).code_is(8).stderr_has(&[
        "error: cuDNN 8.1.0.77_cuda11.2 is deployed in /opt/cuda-11.2; these files are not the ones its receipt records",
        "help:",
    ]);
    assert_eq!(
        fs::read(&receipt).unwrap(),
        before,
        "the deployed release is untouched"
    );
}

#[cfg(unix)]
#[test]
fn refuses_link_loops() {
    let sb = Sandbox::new();
    let mut f = fixtures::linux_tgz("10.2", "7.6.5.32");
    f.symlink("cuda/lib64/libcudnn_a.so", "libcudnn_b.so");
    f.symlink("cuda/lib64/libcudnn_b.so", "libcudnn_a.so");
    refused(
        &sb,
        &f.write_tgz(sb.root()),
        &[],
        4,
        &["loops or never reaches a file"],
    );
}

#[test]
fn refuses_a_tar_that_expands_like_a_bomb() {
    let sb = Sandbox::new();
    let mut f = fixtures::linux_tgz("10.2", "7.6.5.32");
    f.file("cuda/lib64/libcudnn_huge.a", vec![0u8; 100 << 20]);
    refused(
        &sb,
        &f.write_tgz(sb.root()),
        &[],
        4,
        &["expands to more than 200 times"],
    );
}

/// `install pip:` takes `NAME==VERSION` of one of NVIDIA's cuDNN packages
/// and nothing else, refused before pip runs (a Python that would leave a
/// mark shows it never ran): pip options, paths and direct references that
/// make pip build and run a package, other packages.
#[test]
fn pip_options_are_not_requirements() {
    let mut sb = Sandbox::new();
    let ran = sb.root().join("python-ran");
    let fake = sb.root().join("fake-python");
    std::fs::write(&fake, format!("#!/bin/sh\ntouch '{}'\n", ran.display())).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    sb.set_env("CUDNNM_PYTHON", &fake);
    for req in [
        "-r/etc/passwd",
        "./evilpkg",
        "evil @ file:///tmp/evil-1.0.tar.gz",
        "numpy==2.0.0",
        "nvidia-cudnn-cu12>=9",
        "nvidia-cudnn-cu12==9.*",
    ] {
        sb.run(["install", &format!("pip:{req}")])
            .code_is(2)
            .stderr_has(&[
                "is not a cuDNN wheel requirement",
                "nvidia-cudnn-cu12==9.10.2.21",
            ]);
    }
    assert!(!ran.exists(), "pip was run");
}

#[test]
fn a_damaged_receipt_is_reported_not_hidden() {
    let sb = Sandbox::new();
    install(&sb, &fixtures::windows_zip_8_1_0_77().write(sb.root()), &[]).ok();
    install(&sb, &fixtures::windows_zip_7_1_3().write(sb.root()), &[]).ok();
    fs::write(
        release_dir(&sb, "11.2", "8.1.0.77").join("receipt.toml"),
        "garbage = [",
    )
    .unwrap();
    let r = sb
        .run(["list", "--json"])
        .ok()
        .stderr_has(&["warning:", "8.1.0.77", "receipt"]);
    assert_eq!(
        r.json().as_array().unwrap().len(),
        1,
        "the readable release is still listed"
    );
    let v = sb.run(["verify", "--no-load"]).code_is(7);
    assert!(v.stdout().contains("8.1.0.77"), "{}", v.describe());
}

#[cfg(target_os = "linux")]
#[test]
fn stdout_write_failures_are_errors_and_json_errors_are_json() {
    let sb = Sandbox::new();
    install(&sb, &fixtures::windows_zip_7_1_3().write(sb.root()), &[]).ok();
    let out = sb
        .command()
        .arg("list")
        .stdout(fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("could not write to standard output"));
    let r = sb.run(["--json", "uninstall", "6"]).code_is(3);
    let j = r.json();
    assert_eq!(
        (
            j["error"]["kind"].as_str(),
            j["error"]["exit_code"].as_i64()
        ),
        (Some("not-found"), Some(3))
    );
}

#[test]
fn a_file_shadowed_by_a_folder_entry_is_refused_naming_it() {
    let sb = Sandbox::new();
    // zip: the library and a folder entry of the same name.
    let mut f = fixtures::windows_zip_8_1_0_77();
    f.push("cuda/bin/cudnn64_8.dll/", Item::Dir);
    let zip = f.write(sb.root());
    refused(
        &sb,
        &zip,
        &[],
        4,
        &[
            "entry 'cuda/bin/cudnn64_8.dll/'",
            "'cuda/bin/cudnn64_8.dll' is both a file and a folder",
        ],
    );
    // zip: a member below the library's path.
    let mut f = fixtures::windows_zip_8_1_0_77();
    f.file("cuda/bin/cudnn64_8.dll/x", "x");
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &[
            "entry 'cuda/bin/cudnn64_8.dll/x'",
            "is both a file and a folder",
        ],
    );
    // tar: a folder entry after the file (was exit 1 with an internal path).
    let mut f = fixtures::linux_tgz("10.2", "7.6.5.32");
    f.push("cuda/include/cudnn.h", Item::Dir);
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &[
            "entry 'cuda/include/cudnn.h'",
            "'cuda/include/cudnn.h' is both a file and a folder",
        ],
    );
}

#[test]
fn duplicate_entries_are_refused_naming_them() {
    let sb = Sandbox::new();
    // zip: a second, different cudnn64_8.dll (the later one would win).
    let mut f = fixtures::windows_zip_8_1_0_77();
    f.file("cuda/bin/cudnn64_8.dlX", fixtures::dll_bytes("tampered"));
    let zip = f.write_zip_renaming(
        sb.root(),
        "cuda/bin/cudnn64_8.dlX",
        "cuda/bin/cudnn64_8.dll",
    );
    refused(
        &sb,
        &zip,
        &[],
        4,
        &["entry 'cuda/bin/cudnn64_8.dll' appears twice in the archive"],
    );
    // tar: the header twice.
    let mut f = fixtures::linux_tgz("10.2", "7.6.5.32");
    f.file("cuda/include/cudnn.h", fixtures::version_header("7.6.4"));
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &["entry 'cuda/include/cudnn.h' appears twice in the archive"],
    );
}

#[test]
fn an_archive_with_an_absurd_entry_count_is_refused_before_extracting() {
    let sb = Sandbox::new();
    let mut f = fixtures::windows_zip_8_1_0_77();
    for i in 0..20_001 {
        f.push(&format!("cuda/extra/{i}/"), Item::Dir);
    }
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &["holds 20032 entries; no cuDNN archive holds more than 20000"],
    );
    let mut f = fixtures::linux_tgz("10.2", "7.6.5.32");
    for i in 0..20_001 {
        f.push(&format!("cuda/extra/{i}/"), Item::Dir);
    }
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &["no cuDNN archive holds that many"],
    );
}

#[test]
fn a_zip_of_many_entries_that_expands_like_a_bomb_is_refused_before_writing() {
    let sb = Sandbox::new();
    // Each entry alone is small enough; together they expand ~1000 times.
    let mut f = fixtures::windows_zip_8_1_0_77();
    for i in 0..3 {
        f.file(
            &format!("cuda/lib/x64/cudnn_pad{i}.lib"),
            vec![0u8; 30 << 20],
        );
    }
    let zip = f.write(sb.root());
    assert!(fs::metadata(&zip).unwrap().len() < (1 << 20));
    refused(
        &sb,
        &zip,
        &[],
        4,
        &["expands to more than 200 times its size"],
    );
}

#[test]
fn a_wheel_whose_members_do_not_match_its_record_is_refused() {
    let sb = Sandbox::new();
    let good = fixtures::wheel("nvidia-cudnn-cu12", "9.1.0.70", false);
    let record_at = good
        .entries
        .iter()
        .find(|(p, _)| p.ends_with(".dist-info/RECORD"))
        .unwrap()
        .0
        .clone();
    let lib = good
        .entries
        .iter()
        .find(|(p, _)| p.ends_with("libcudnn_graph.so.9"))
        .unwrap()
        .0
        .clone();
    // A tampered library under the RECORD of the real one.
    let mut f = good.clone();
    f.replace(&record_at, good.record_text().as_bytes());
    f.replace(
        &lib,
        &fixtures::elf_bytes("libcudnn_graph.so.9 patched", false),
    );
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &[&format!(
            "member '{lib}' holds 91 bytes, not the 92 the wheel's RECORD lists"
        )],
    );
    // The same size, other bytes: only the hash tells.
    refused(
        &sb,
        &good.with_lying_record(&lib).write(sb.root()),
        &[],
        4,
        &[&format!(
            "member '{lib}' does not match its SHA-256 in the wheel's RECORD"
        )],
    );
    // A RECORD that lists a member twice, differently, vouches for neither.
    let record = good.record_text();
    let mut f = good.clone();
    f.replace(
        &record_at,
        format!("{record}{lib},sha256=AAAAv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,92\n").as_bytes(),
    );
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &[&format!(
            "member '{lib}' is listed twice in the wheel's RECORD, with different hashes or sizes"
        )],
    );
    // One listed with SHA-512: said as such, not as an altered wheel.
    let mut f = good.clone();
    f.replace(
        &record_at,
        record
            .replace(&format!("{lib},sha256="), &format!("{lib},sha512="))
            .as_bytes(),
    );
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &[
            &format!("member '{lib}' is listed in the wheel's RECORD with a sha512 hash"),
            "help: rebuild the wheel with SHA-256 in its RECORD",
        ],
    );
    // A member RECORD does not list.
    let mut f = good.clone();
    f.replace(&record_at, good.record_text().as_bytes());
    f.file(
        "nvidia/cudnn/lib/libcudnn_extra.so.9",
        fixtures::elf_bytes("extra", false),
    );
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &["member 'nvidia/cudnn/lib/libcudnn_extra.so.9' is not listed in the wheel's RECORD"],
    );
    // A library RECORD lists that the wheel lost: not an incomplete release.
    let mut f = good.clone();
    f.replace(&record_at, good.record_text().as_bytes());
    f.entries.retain(|(p, _)| *p != lib);
    refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &[&format!(
            "'{lib}' is listed in the wheel's RECORD but missing from the wheel"
        )],
    );
    // The same wheel with its own RECORD installs.
    install(&sb, &good.write(sb.root()), &[]).ok();
}

#[test]
fn a_name_too_long_for_the_file_system_is_said_plainly() {
    let sb = Sandbox::new();
    let long = "x".repeat(300);
    let mut f = fixtures::windows_zip_8_1_0_77();
    f.file(&format!("cuda/include/{long}.h"), "x");
    let r = refused(
        &sb,
        &f.write(sb.root()),
        &[],
        4,
        &["has a name part of 302 bytes, too long for the file system (at most 255)"],
    );
    assert!(!r.stderr().contains("corrupt"), "{}", r.describe());
}

/// The `list --remote` row of `id` (its pip row, `--cuda 12`, Linux).
fn remote_row(sb: &Sandbox, id: &str) -> Value {
    let rows = sb
        .run([
            "list",
            "--remote",
            "--platform",
            "linux-x86_64",
            "--cuda",
            "12",
            "--json",
        ])
        .ok()
        .json();
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap()
        .clone()
}

/// The JIT build of a release is another release (`<id>+jit`, its own
/// store folder): installing the JIT wheel marks the JIT row of `list
/// --remote`, never the full build's; both builds install side by side.
#[test]
fn list_remote_marks_each_build_installed_by_its_own_files() {
    let sb = Sandbox::new();
    let jit = fixtures::wheel("nvidia_cudnn_jit_cu12", "9.12.0.46", false).write(sb.root());
    install(&sb, &jit, &[])
        .ok()
        .stderr_has(&["installed cuDNN 9.12.0.46 for CUDA 12"]);
    assert!(
        sb.home()
            .join("store/cuda-12/9.12.0.46+jit/receipt.toml")
            .is_file()
    );
    assert!(!sb.home().join("store/cuda-12/9.12.0.46").exists());
    let row = remote_row(&sb, "9.12.0.46_cuda12");
    assert_eq!(row["flavour"], "full");
    assert_eq!(row["installed"], Value::Bool(false));
    let row = remote_row(&sb, "9.12.0.46_cuda12+jit");
    assert_eq!(row["flavour"], "jit");
    assert_eq!(row["installed"], Value::Bool(true));
    let r = sb
        .run([
            "list",
            "--remote",
            "--platform",
            "linux-x86_64",
            "--cuda",
            "12",
        ])
        .ok();
    let line = r
        .stdout()
        .lines()
        .find(|l| l.starts_with("9.12.0.46_cuda12+jit "))
        .unwrap()
        .to_string();
    assert!(line.ends_with("installed"), "{line}");
    assert!(r.stderr().contains(", 1 installed;"), "{}", r.describe());
    // The full build's wheel installs beside it, no --force needed.
    let full = fixtures::wheel("nvidia_cudnn_cu12", "9.12.0.46", false).write(sb.root());
    install(&sb, &full, &[]).ok();
    assert_eq!(
        remote_row(&sb, "9.12.0.46_cuda12")["installed"],
        Value::Bool(true)
    );
    assert_eq!(
        remote_row(&sb, "9.12.0.46_cuda12+jit")["installed"],
        Value::Bool(true)
    );
    let ids: Vec<(String, String)> = list(&sb)
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["flavour"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("9.12.0.46_cuda12".to_string(), "full".to_string()),
            ("9.12.0.46_cuda12+jit".to_string(), "jit".to_string())
        ]
    );
}

/// A release whose `receipt.toml` is garbage: `list` hides it and names
/// both ways out; `install ARCHIVE --force` replaces it through the
/// journaled swap (a kill after the old folder is moved aside gives it
/// back); `uninstall ID` removes only that folder.
#[test]
fn a_release_with_an_unreadable_receipt_is_replaced_by_force_or_uninstalled() {
    let sb = Sandbox::new();
    let zip = fixtures::windows_zip_8_1_0_77().write(sb.root());
    install(&sb, &zip, &[]).ok();
    fs::create_dir_all(sb.root().join("other")).unwrap();
    let other = fixtures::windows_zip_7_1_3().write(&sb.root().join("other"));
    install(&sb, &other, &[]).ok();
    let other_id = list(&sb)
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .find(|id| id.starts_with("7.1.3"))
        .unwrap();
    let others_before = crate::deploy_support::snapshot(&sb.home().join("store"));
    let dir = release_dir(&sb, "11.2", "8.1.0.77");
    let spoil = || {
        let receipt = dir.join("receipt.toml");
        let mut perm = fs::metadata(&receipt).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perm.set_readonly(false);
        fs::set_permissions(&receipt, perm).unwrap();
        fs::write(&receipt, "trash\n").unwrap();
    };
    spoil();
    let warned = sb.run(["list"]).ok();
    assert!(
        !warned.stdout().contains("8.1.0.77"),
        "{}",
        warned.describe()
    );
    // (PowerShell quotes the placeholder on Windows: `install "ARCHIVE" --force`.)
    warned.stderr_has(&[
        "install",
        "ARCHIVE",
        "--force",
        "uninstall 8.1.0.77_cuda11.2",
    ]);
    install(&sb, &zip, &[]).code_is(4).stderr_has(&[
        "could not read the receipt",
        "install",
        "ARCHIVE",
        "--force",
        "uninstall 8.1.0.77_cuda11.2",
    ]);

    // Killed right after the unreadable release is moved aside: the next
    // command puts it back, bytes and all.
    let mut c = sb.command();
    c.args(["install".as_ref(), zip.as_os_str(), "--force".as_ref()])
        .env("CUDNNM_FAULT_AFTER_STEP", "1");
    let killed = c.output().unwrap();
    assert!(!killed.status.success());
    sb.run(["list"]).ok();
    assert_eq!(fs::read(dir.join("receipt.toml")).unwrap(), b"trash\n");

    install(&sb, &zip, &["--force"])
        .ok()
        .stderr_has(&["reinstalled cuDNN 8.1.0.77"]);
    let ids: Vec<String> = list(&sb)
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert!(ids.contains(&"8.1.0.77_cuda11.2".to_string()), "{ids:?}");
    sb.run(["verify"]).ok();

    spoil();
    sb.run(["uninstall", "8.1.0.77_cuda11.2"])
        .ok()
        .stderr_has(&[
            "removed cuDNN 8.1.0.77_cuda11.2",
            "receipt could not be read",
        ]);
    assert!(!dir.exists());
    let mut others_now = crate::deploy_support::snapshot(&sb.home().join("store"));
    let mut others_before = others_before;
    others_before.retain(|k, _| !k.starts_with("cuda-11.2"));
    others_now.retain(|k, _| !k.starts_with("cuda-11.2"));
    assert_eq!(
        others_now, others_before,
        "only that release's folder changed"
    );
    assert!(
        others_now
            .keys()
            .any(|k| k.contains(other_id.split('_').next().unwrap()))
    );
}

/// A Linux release imported where links cannot be made (Windows without
/// the privilege, or wine, which reports a link made that is not there)
/// gets copies of its link targets, recorded as the files they are: `verify`
/// passes. On Unix the links are links.
#[test]
fn a_linux_wheels_links_are_recorded_as_what_was_made_and_verify() {
    let sb = Sandbox::new();
    let whl = fixtures::wheel("nvidia_cudnn_cu12", "9.1.0.70", false).write(sb.root());
    install(&sb, &whl, &[]).ok();
    let lib = release_dir(&sb, "12", "9.1.0.70").join("lib");
    let dev = fs::symlink_metadata(lib.join("libcudnn.so")).unwrap();
    assert_eq!(dev.file_type().is_symlink(), cfg!(unix));
    assert_eq!(
        fs::read(lib.join("libcudnn.so")).unwrap(),
        fs::read(lib.join("libcudnn.so.9")).unwrap()
    );
    sb.run(["verify", "--no-load"])
        .ok()
        .stdout_has(&["Everything matches its record."]);
}

/// The first release a home holds becomes its default (as fnm, nvm and
/// rustup do), and the install says so; a second install leaves it.
#[cfg(unix)]
#[test]
fn the_first_install_becomes_the_default_and_says_so() {
    let sb = Sandbox::new();
    let dir = sb.root().join("archives");
    fs::create_dir_all(&dir).unwrap();
    let first = fixtures::redist_linux("9.12.0.46", "12").write(&dir);
    let second = fixtures::redist_linux("9.13.0.50", "12").write(&dir);
    install(&sb, &first, &[]).ok().stderr_has(&[
        "installed cuDNN 9.12.0.46",
        "cuDNN 9.12.0.46_cuda12 is now the default, the first release installed here (`cudnnm default SPEC` changes it)",
    ]);
    let config = fs::read_to_string(sb.home().join("config.toml")).unwrap();
    assert!(
        config.contains("default = \"9.12.0.46_cuda12\""),
        "{config}"
    );
    // What applies with no pin is that release's library.
    let lib = release_dir(&sb, "12", "9.12.0.46").join("lib/libcudnn.so.9");
    assert_eq!(
        sb.run(["which"]).ok().stdout().trim_end(),
        lib.display().to_string()
    );
    let r = install(&sb, &second, &["--json"]).ok();
    assert_eq!(r.json()["release"]["default"], false, "{}", r.describe());
    assert!(
        !r.stderr().contains("is now the default"),
        "{}",
        r.describe()
    );
    let listed = list(&sb);
    let default: Vec<&str> = listed
        .iter()
        .filter(|v| v["default"] == true)
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(default, ["9.12.0.46_cuda12"]);
    // A default the first install set is cleared with its release, not a
    // refusal; one chosen with `default` still refuses.
    sb.run(["uninstall", "9.12.0.46"]).ok().stderr_has(&[
        "removed cuDNN 9.12.0.46_cuda12",
        "cleared the default cuDNN (was 9.12.0.46_cuda12)",
    ]);
    assert!(!sb.home().join("current/cuda-12").exists());
    sb.run(["default", "9.13"]).ok();
    sb.run(["uninstall", "9.13.0.50"])
        .code_is(8)
        .stderr_has(&["make another release the default first"]);
}

/// The first install of a JIT wheel makes the JIT build the default, by
/// its `+jit` id, and what applies with no pin is that build's folder.
#[cfg(unix)]
#[test]
fn the_first_install_of_a_jit_wheel_makes_the_jit_build_the_default() {
    let sb = Sandbox::new();
    let wheel = common::real_wheel("nvidia_cudnn_jit_cu12-9.12.0.46");
    install(&sb, &wheel, &[]).ok().stderr_has(&[
        "cuDNN 9.12.0.46_cuda12+jit is now the default, the first release installed here",
    ]);
    let config = fs::read_to_string(sb.home().join("config.toml")).unwrap();
    assert!(
        config.contains("default = \"9.12.0.46_cuda12+jit\""),
        "{config}"
    );
    let which = sb.run(["which"]).ok().stdout().trim_end().to_string();
    let folder = sb.home().join("store/cuda-12/9.12.0.46+jit");
    assert!(
        std::path::Path::new(&which).starts_with(&folder),
        "{which} is not in {}",
        folder.display()
    );
}

/// A folder of wheels is no release: the refusal names them and how one
/// installs, before anything is read or written.
#[test]
fn a_folder_of_wheels_is_named_with_its_wheels() {
    let sb = Sandbox::new();
    let dir = sb.root().join("wheels");
    fs::create_dir_all(&dir).unwrap();
    for w in [
        "nvidia_cudnn_cu12-9.12.0.46-py3-none-manylinux_2_27_x86_64.whl",
        "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl",
    ] {
        fs::write(dir.join(w), b"not read").unwrap();
    }
    let r = install(&sb, &dir, &[]).code_is(2);
    let r = r.stderr_has(&[
        &format!("'{}' holds 2 wheels, not one cuDNN release", dir.display()),
        "wheels: nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl, nvidia_cudnn_cu12-9.12.0.46-py3-none-manylinux_2_27_x86_64.whl",
        "install one wheel at a time",
    ]);
    assert!(!sb.home().join("store").exists(), "{}", r.describe());
}

/// A wheel whose bytes are the ones its publisher lists (here a user
/// catalog's `[[wheel]]` row, as `manifest refresh` writes PyPI's) is not
/// hashed member by member: its RECORD, vouched for by the whole file's
/// SHA-256, gives every member's SHA-256 for the receipt. The receipt still
/// holds each file's true SHA-256, and `verify`, which reads every byte,
/// catches a publisher's RECORD that lied rather than trusting it.
#[test]
fn a_published_wheel_takes_its_members_hashes_from_its_record() {
    let sb = Sandbox::new();
    let good = fixtures::wheel_tagged("nvidia_cudnn_cu12", "9.1.0.70", "manylinux_2_27_x86_64");
    let publish = |sb: &Sandbox, wheel: &Path| {
        let name = wheel.file_name().unwrap().to_str().unwrap();
        let bytes = fs::read(wheel).unwrap();
        fs::create_dir_all(sb.home()).unwrap();
        fs::write(
            sb.home().join("catalog.toml"),
            format!(
                "schema = 1\n\n[[wheel]]\npackage = \"nvidia-cudnn-cu12\"\nsource = \"test\"\nfiles = [\n  {{ url = \"https://files.pythonhosted.org/packages/ab/cd/{name}\", size = {}, sha256 = \"{}\" }},\n]\n",
                bytes.len(),
                cudnnm::hash::sha256_bytes(&bytes)
            ),
        )
        .unwrap();
    };
    let wheel = good.write(sb.root());
    publish(&sb, &wheel);
    install(&sb, &wheel, &[]).ok();
    let receipt: toml::Value = toml::from_str(
        &fs::read_to_string(sb.home().join("store/cuda-12/9.1.0.70/receipt.toml")).unwrap(),
    )
    .unwrap();
    let release = sb.home().join("store/cuda-12/9.1.0.70");
    let mut hashed = 0;
    for f in receipt["file"].as_array().unwrap() {
        let Some(sha) = f.get("sha256") else { continue };
        let on_disk = fs::read(release.join(f["path"].as_str().unwrap())).unwrap();
        assert_eq!(
            sha.as_str().unwrap(),
            cudnnm::hash::sha256_bytes(&on_disk).as_str(),
            "{f}"
        );
        hashed += 1;
    }
    assert!(hashed >= 5, "{receipt}");
    sb.run(["verify", "--no-load"]).ok();

    // The publisher's own RECORD lists another hash for a library: the
    // receipt records it, and `verify` names that library as changed.
    let sb = Sandbox::new();
    let lying = good.with_lying_record("libcudnn_graph.so.9");
    let wheel = lying.write(sb.root());
    publish(&sb, &wheel);
    install(&sb, &wheel, &[]).ok();
    common::verify_finds_one_changed(&sb, "libcudnn_graph.so.9");

    // The same lying wheel with no publisher's hash (or another one) is
    // hashed member by member and refused.
    let sb = Sandbox::new();
    let wheel = lying.write(sb.root());
    refused(
        &sb,
        &wheel,
        &[],
        4,
        &["does not match its SHA-256 in the wheel's RECORD"],
    );
    let elsewhere = sb.root().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    publish(&sb, &good.write(&elsewhere));
    refused(
        &sb,
        &wheel,
        &[],
        4,
        &["does not match its SHA-256 in the wheel's RECORD"],
    );
    // A build of its own under the listed name, its RECORD its own: it
    // installs, checked member by member, and the install says whose it is.
    let mut own = good.clone();
    own.replace(
        "libcudnn_graph.so.9",
        &fixtures::elf_bytes("libcudnn_graph.so.9 own", false),
    );
    let wheel = own.write(sb.root());
    let sha = cudnnm::hash::sha256_bytes(&fs::read(&wheel).unwrap());
    let listed =
        cudnnm::hash::sha256_bytes(&fs::read(elsewhere.join(wheel.file_name().unwrap())).unwrap());
    install(&sb, &wheel, &[]).ok().stderr_has(&[&format!(
        "is not the wheel the catalog lists under that name (its SHA-256 is {}…, not {}…): installed as a build of its own",
        sha.short(),
        listed.short()
    )]);
    sb.run(["verify", "--no-load"]).ok();
}
