//! The catalog of NVIDIA's cuDNN as published today (issue 26), through the
//! real binary: every PyPI wheel with its URL, size and SHA-256 per platform,
//! the JIT builds, yanked releases, the Arm and Windows-on-Arm builds, the
//! GPU ceilings (Blackwell), the 9.21+ library names read from a real wheel,
//! `manifest refresh` from recorded index answers served on 127.0.0.1, and
//! the maintainer script that regenerates the embedded rows.

// A stand-in nvidia-smi (a shell script), a real pip, symlinked toolkits.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common::http::{Route, TestServer, closed_port};
use crate::common::{Sandbox, bin, fixtures, output, real_wheel, wheels_dir};
use crate::deploy_support::linux_toolkit;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn recorded(package: &str) -> Value {
    let p = repo().join(format!("tests/fixtures/catalog/pypi/{package}.json"));
    serde_json::from_str(&fs::read_to_string(&p).unwrap()).unwrap()
}

/// `list --remote --json` rows.
fn remote(sb: &Sandbox, args: &[&str]) -> Vec<Value> {
    let mut a = vec!["list", "--remote", "--json"];
    a.extend_from_slice(args);
    let r = sb.run(&a).ok();
    r.json().as_array().unwrap().clone()
}

fn is_yanked(row: &Value) -> bool {
    row.get("yanked").is_some_and(|y| !y.is_null())
}

fn sha_of(row: &Value) -> &str {
    row["sha256"][0]["sha256"].as_str().unwrap_or("")
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The final releases a recorded answer lists with a wheel whose tag ends
/// with `tag_end`, and whether every wheel of each is yanked.
fn published(package: &str, tag_end: &str) -> Vec<(String, bool)> {
    let idx = recorded(package);
    let mut out: Vec<(String, bool)> = Vec::new();
    for f in idx["files"].as_array().unwrap() {
        let name = f["filename"].as_str().unwrap();
        let Some(stem) = name.strip_suffix(".whl") else {
            continue;
        };
        let parts: Vec<&str> = stem.split('-').collect();
        let version = parts[1];
        if !parts[parts.len() - 1].ends_with(tag_end)
            || version.contains(['a', 'b', 'r', 'd'])
            || version.starts_with("0.")
        {
            continue;
        }
        let yanked = f["yanked"] != Value::Bool(false);
        match out.iter_mut().find(|(v, _)| v == version) {
            Some(e) => e.1 &= yanked,
            None => out.push((version.to_string(), yanked)),
        }
    }
    out
}

/// Done when: `list --remote --cuda 13` shows the 28 live releases of
/// `nvidia-cudnn-cu13` and the 26 of `nvidia-cudnn-jit-cu13`, each wheel
/// with the URL, size and SHA-256 PyPI publishes; 9.25.0.15 marked yanked;
/// how old the catalog is and how to refresh it.
#[test]
fn list_remote_shows_todays_pypi_releases_with_their_bytes_identity() {
    let sb = Sandbox::new();
    let rows = remote(&sb, &["--cuda", "13"]);
    let x86: Vec<&Value> = rows
        .iter()
        .filter(|r| r["platform"] == "linux-x86_64")
        .collect();
    assert_eq!(x86.len(), rows.len(), "the host's platform only");
    for (package, flavour, live) in [
        ("nvidia-cudnn-cu13", "full", 28),
        ("nvidia-cudnn-jit-cu13", "jit", 26),
    ] {
        let want = published(package, "x86_64");
        assert_eq!(
            want.iter().filter(|(_, y)| !y).count(),
            live,
            "{package}: {want:?}"
        );
        for (version, yanked) in &want {
            let row = x86
                .iter()
                .find(|r| r["version"] == version.as_str() && r["flavour"] == flavour)
                .unwrap_or_else(|| panic!("{package} {version} not listed"));
            assert_eq!(is_yanked(row), *yanked, "{row}");
            let id = row["id"].as_str().unwrap();
            assert_eq!(
                id,
                format!(
                    "{version}_cuda13{}",
                    if flavour == "jit" { "+jit" } else { "" }
                )
            );
            assert!(is_sha256(sha_of(row)), "{row}");
            assert!(row["size"].as_u64().unwrap_or(0) > 10 << 20 || row["kind"] == "archive");
            if row["kind"] == "pip" {
                // The recorded answer's own file, URL, size and hash.
                let file = row["file"].as_str().unwrap();
                let f = recorded(package)["files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|f| f["filename"] == file)
                    .cloned()
                    .unwrap_or_else(|| panic!("{file} is not in the recorded answer"));
                assert_eq!(row["urls"][0], f["url"], "{row}");
                assert_eq!(row["size"], f["size"], "{row}");
                assert_eq!(sha_of(row), f["hashes"]["sha256"].as_str().unwrap());
                assert_eq!(row["name"], format!("pip:{package}=={version}"), "{row}");
            }
        }
    }
    let yanked: Vec<&str> = x86
        .iter()
        .filter(|r| is_yanked(r))
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        yanked,
        ["9.25.0.15_cuda13"],
        "only the full build of 9.25.0.15"
    );

    // The text: a yanked mark, and how old the catalog is.
    let r = sb.run(["list", "--remote", "--cuda", "13"]).ok();
    let line = r
        .stdout()
        .lines()
        .find(|l| l.starts_with("9.25.0.15_cuda13 "))
        .unwrap_or_default()
        .to_string();
    assert!(line.contains("yanked"), "{}", r.describe());
    r.stderr_has(&[
        "catalog data of 2026-12-03 (",
        "embedded in cudnnm); `cudnnm manifest refresh` reads PyPI's and NVIDIA's indexes now",
    ]);
    // Windows on Arm: NVIDIA's win_arm64 wheels, from 9.26.1.1.
    let arm = remote(&sb, &["--cuda", "13", "--platform", "windows-arm64"]);
    let first = arm
        .iter()
        .map(|r| r["version"].as_str().unwrap())
        .min_by_key(|v| {
            v.split('.')
                .map(|n| n.parse::<u32>().unwrap())
                .collect::<Vec<_>>()
        })
        .unwrap();
    assert_eq!(first, "9.26.1.1");
    // Wheels, and the 9.27.0 archives of NVIDIA's redist index (one of them
    // for CUDA 13.4, as NVIDIA's JSON names it).
    for r in &arm {
        let url = r["urls"][0].as_str().unwrap();
        assert!(
            r["platform"] == "windows-arm64"
                && is_sha256(sha_of(r))
                && (url.ends_with("-win_arm64.whl")
                    || url.contains("/windows-arm64/cudnn-windows-arm64-")),
            "{r}"
        );
    }
}

/// Done when: `list --remote --platform linux-sbsa` has only Arm builds,
/// each with its hash; another machine's wheel is never fetched here.
#[test]
fn arm_server_builds_are_listed_for_linux_sbsa_and_never_installed_elsewhere() {
    let sb = Sandbox::new();
    let rows = remote(&sb, &["--platform", "linux-sbsa"]);
    assert!(rows.len() > 100, "{}", rows.len());
    for r in &rows {
        assert_eq!(r["platform"], "linux-sbsa", "{r}");
        assert!(is_sha256(sha_of(r)), "{r}");
        let url = r["urls"][0].as_str().unwrap();
        assert!(
            url.ends_with("_aarch64.whl") || url.contains("/linux-sbsa/"),
            "{r}"
        );
    }
    // A wheel-only release: the aarch64 wheel PyPI lists, with its hash.
    let row = rows.iter().find(|r| r["id"] == "9.28.1.4_cuda13").unwrap();
    let f = recorded("nvidia-cudnn-cu13")["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["filename"] == row["file"])
        .cloned()
        .unwrap();
    assert!(
        f["filename"].as_str().unwrap().ends_with("_aarch64.whl"),
        "{row}"
    );
    assert_eq!(sha_of(row), f["hashes"]["sha256"].as_str().unwrap());
    // An NVIDIA archive for Arm: the linux-sbsa one, never x86_64's.
    let r = sb
        .run([
            "install",
            "9.27.0.42",
            "--cuda",
            "13",
            "--platform",
            "linux-sbsa",
            "--mirror",
            &format!("http://127.0.0.1:{}/", closed_port()),
        ])
        .code_is(6);
    let r = r.stderr_has(&["cudnn-linux-sbsa-9.27.0.42_cuda13-archive.tar.xz"]);
    assert!(!r.stderr().contains("x86_64"), "{}", r.describe());
    // A wheel-only release for Arm, asked for on this x86_64 machine: read
    // straight from the index (issue 27), the aarch64 wheel is the one
    // fetched, never this machine's (here a loopback index whose files are gone).
    let ix = TestServer::start();
    let (arm, x86) = (
        "nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_aarch64.whl",
        "nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_x86_64.whl",
    );
    ix.html(
        "simple/nvidia-cudnn-cu13/",
        &format!(
            "<!DOCTYPE html><html><body><a href=\"../../files/{x86}#sha256={0}\">{x86}</a><a href=\"../../files/{arm}#sha256={0}\">{arm}</a></body></html>",
            "a".repeat(64)
        ),
    );
    let r = sb.run([
        "install",
        "9.28.1.4",
        "--cuda",
        "13",
        "--platform",
        "linux-sbsa",
        "--index-url",
        &ix.url("simple/"),
    ]);
    assert_ne!(r.code(), 0, "{}", r.describe());
    let r = r.stderr_has(&[&format!("fetching {arm} from")]);
    assert!(!r.stderr().contains(x86), "{}", r.describe());
    assert_eq!(ix.hits(&format!("files/{x86}")), 0);
    // A release with no Arm build says where it is published.
    sb.run([
        "install",
        "8.9.5.29",
        "--cuda",
        "12",
        "--platform",
        "linux-sbsa",
    ])
    .code_is(3)
    .stderr_has(&[
        "cuDNN 8.9.5.29_cuda12 has no linux-sbsa build",
        "it is published for windows-x86_64",
    ]);
}

/// A sandbox whose pip reads no configuration and finds nothing (an empty
/// local folder), and which sees no GPU.
fn offline_pip() -> Sandbox {
    let mut sb = Sandbox::new();
    let none = sb.root().join("no-index");
    fs::create_dir_all(&none).unwrap();
    sb.set_env("PIP_CONFIG_FILE", "/dev/null");
    sb.set_env("PIP_NO_INDEX", "1");
    sb.set_env("PIP_FIND_LINKS", &none);
    sb.set_env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
    sb.set_env("CUDA_VISIBLE_DEVICES", "");
    sb
}

/// Done when: a prefix, a range or `latest` never picks a yanked release;
/// naming it exactly installs it with a warning giving the reason.
#[test]
fn yanked_releases_are_picked_only_when_named_exactly() {
    let sb = offline_pip();
    for spec in ["9.25.0", ">=9.25.0,<9.25.1"] {
        sb.run(["install", spec, "--cuda", "12"])
            .code_is(3)
            .stderr_has(&[
                &format!("error: cuDNN {spec} matches only releases PyPI has yanked"),
                "cuDNN 9.25.0.15_cuda12 is yanked (no reason given)",
                "name it exactly to install it anyway: `cudnnm install 9.25.0.15_cuda12`",
            ]);
    }
    // A prefix or range around it takes the newest live release; pip (with
    // no index) then reports it cannot find that one.
    for (spec, want) in [
        ("9.25", "9.25.1.1"),
        ("<9.25.1", "9.24.1.1"),
        (">=9.24", "9.28.0.42"),
        ("latest", "9.28.0.42"),
    ] {
        let r = sb.run(["install", spec, "--cuda", "12"]);
        assert!(
            r.stderr().contains(&format!(
                "cuDNN {want} for CUDA 12 is published as a PyPI wheel: installing pip:nvidia-cudnn-cu12=={want}"
            )),
            "{spec}: {}",
            r.describe()
        );
        assert!(!r.stderr().contains("9.25.0.15"), "{}", r.describe());
    }
    // Named exactly: installed, with the warning (here the mirror is down).
    let closed = format!("http://127.0.0.1:{}/", closed_port());
    sb.run(["install", "9.25.0.15", "--cuda", "12", "--mirror", &closed])
        .code_is(6)
        .stderr_has(&[
            "warning: cuDNN 9.25.0.15_cuda12 is yanked on PyPI (no reason given); installing it because it was named exactly",
            "cudnn-linux-x86_64-9.25.0.15_cuda12-archive.tar.xz",
        ]);
    // A yanked wheel's reason, as PyPI gives it (8.9.4.19 for CUDA 11
    // exists only for Windows; Linux had 8.9.4.25).
    let win = remote(&sb, &["--cuda", "11", "--platform", "windows-x86_64"]);
    let row = win.iter().find(|r| r["version"] == "8.9.4.19").unwrap();
    assert_eq!(row["yanked"], "at the request of Paul Luh", "{row}");
    let linux = remote(&sb, &["--cuda", "11"]);
    assert!(linux.iter().all(|r| r["version"] != "8.9.4.19"));
    assert!(
        linux
            .iter()
            .any(|r| r["version"] == "8.9.4.25" && !is_yanked(r))
    );
}

/// Done when: `install 9.28 --cuda 13` installs 9.28.1.4 from
/// `nvidia-cudnn-cu13` (read straight from the index pip is configured
/// with, issue 27: here a loopback index serving a fixture wheel under that
/// name).
#[test]
fn install_9_28_for_cuda_13_installs_the_cu13_wheel() {
    let mut sb = Sandbox::new();
    let server = TestServer::start();
    let fx = sb.root().join("fx");
    fs::create_dir_all(&fx).unwrap();
    let wheel = fixtures::wheel("nvidia_cudnn_cu13", "9.28.1.4", false).write(&fx);
    let bytes = fs::read(&wheel).unwrap();
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let sha = cudnnm::hash::sha256_bytes(&bytes).to_string();
    server.file(&format!("files/{name}"), bytes);
    server.html(
        "simple/nvidia-cudnn-cu13/",
        &format!(
            "<!DOCTYPE html><html><body><a href=\"../../files/{name}#sha256={sha}\">{name}</a></body></html>"
        ),
    );
    sb.set_env("PIP_CONFIG_FILE", "/dev/null");
    sb.set_env("PIP_INDEX_URL", server.url("simple/"));
    sb.set_env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
    sb.set_env("CUDA_VISIBLE_DEVICES", "");
    let r = sb
        .run(["install", "9.28", "--cuda", "13"])
        .ok()
        .stderr_has(&[&format!("fetching {name} from {}", server.url("simple/"))]);
    assert!(
        server.hits("simple/nvidia-cudnn-cu13/") >= 1,
        "{}",
        r.describe()
    );
    assert!(
        sb.home()
            .join("store/cuda-13/9.28.1.4/receipt.toml")
            .is_file(),
        "{}",
        r.describe()
    );
    let list = sb.run(["list", "--json"]).ok().json();
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["9.28.1.4_cuda13"], "{list}");
}

/// A stand-in `nvidia-smi` first on PATH answering as one GPU with driver `driver`.
fn smi(sb: &mut Sandbox, gpu: &str, driver: &str) {
    let dir = sb.root().join("gpu-bin");
    fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n  *driver_version*) printf '%s\\n' '{driver}' ;;\n  *) printf '%s\\n' '{gpu}' ;;\nesac\n"
    );
    fs::write(dir.join("nvidia-smi"), script).unwrap();
    fs::set_permissions(dir.join("nvidia-smi"), fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    sb.set_env("PATH", path);
}

const BLACKWELL: &str = "0, GPU-0d0d0d0d-1111-2222-3333-444455556666, NVIDIA RTX PRO 6000 Blackwell Workstation Edition, 12.0";

/// Done when: a GPU newer than a release supports is refused by `use` and
/// `install` (exit 8) and reported by doctor as `gpu-too-new`, exactly as
/// the floor is: Blackwell needs cuDNN 9.7 built for CUDA 12.8.
#[test]
fn blackwell_refuses_9_6_and_a_cuda_12_4_toolkit_and_doctor_says_gpu_too_new() {
    let mut sb = Sandbox::new();
    let fx = sb.root().join("fx");
    fs::create_dir_all(&fx).unwrap();
    let w96 = fixtures::wheel("nvidia_cudnn_cu12", "9.6.0.74", false).write(&fx);
    let w97 = fixtures::wheel("nvidia_cudnn_cu12", "9.7.0.66", false).write(&fx);
    // Installed before the GPU is there (a shared store).
    for w in [&w96, &w97] {
        sb.run(["install".to_string(), w.display().to_string()])
            .ok();
    }
    let tk128 = linux_toolkit(&sb.root().join("cuda-12.8"), "12.8.0");
    let tk124 = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let (t128, t124) = (tk128.display().to_string(), tk124.display().to_string());
    smi(&mut sb, BLACKWELL, "570.86.10");
    let what = "NVIDIA RTX PRO 6000 Blackwell Workstation Edition (GPU 0, compute capability 12.0)";
    let r = sb
        .run(["use", "9.6", "--cuda-root", &t128])
        .code_is(8)
        .stderr_has(&[
            &format!("error: cuDNN 9.6.0.74 for CUDA 12 cannot run on {what}: Blackwell GPUs need cuDNN 9.7.0 or newer built for CUDA 12.8 or newer and driver 570.26 or newer"),
            "NVIDIA's cuDNN support matrix lists Blackwell GPUs (compute capability 10.0 to 12.9) only from cuDNN 9.7.0 with CUDA 12.8",
            "--force",
        ]);
    assert!(
        !tk128.join("lib64/libcudnn.so.9").exists(),
        "{}",
        r.describe()
    );
    sb.run([
        "install".to_string(),
        w96.display().to_string(),
        "--reinstall".into(),
    ]);
    sb.run(["install".to_string(), w96.display().to_string()])
        .code_is(8)
        .stderr_has(&["Blackwell GPUs need cuDNN 9.7.0 or newer"]);
    // 9.7 runs there, in a CUDA 12.8 toolkit but not a 12.4 one.
    sb.run(["use", "9.7", "--cuda-root", &t128]).ok();
    sb.run(["use", "9.7", "--cuda-root", &t124])
        .code_is(8)
        .stderr_has(&[&format!(
            "error: cuDNN 9.7.0.66 for CUDA 12 in a CUDA 12.4 toolkit cannot run on {what}: Blackwell GPUs need CUDA 12.8 or newer and driver 570.26 or newer; this toolkit is CUDA 12.4"
        )]);
    // Forced, 9.6 is deployed with a warning, and doctor reports it.
    sb.run(["use", "9.6", "--cuda-root", &t128, "--force"])
        .ok()
        .stderr_has(&["will not run on", "(--force)"]);
    let r = sb
        .run(["doctor", "--json", "--no-load", "--cuda-root", &t128])
        .code_is(7);
    let f = r.finding("gpu-too-new");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .starts_with("NVIDIA RTX PRO 6000 Blackwell Workstation Edition (compute capability 12.0) cannot run cuDNN 9.6.0.74"),
        "{}",
        r.describe()
    );
    assert!(
        f["why"]
            .as_str()
            .unwrap()
            .contains("Blackwell GPUs need cuDNN 9.7.0 or newer built for CUDA 12.8 or newer"),
        "{}",
        r.describe()
    );
}

/// The last 64 KiB of the real `nvidia-cudnn-cu13` 9.28.1.4 wheel for
/// Linux x86_64 (scripts/fetch-test-wheels.sh): its zip central directory.
const TAIL: &str = "nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_x86_64.whl";

fn real_tail() -> PathBuf {
    let p = wheels_dir().join(format!("{TAIL}.tail"));
    assert!(
        p.is_file(),
        "{} not found; run `scripts/fetch-test-wheels.sh` (or .ci/run) first",
        p.display()
    );
    p
}

fn u16le(b: &[u8], at: usize) -> usize {
    u16::from_le_bytes([b[at], b[at + 1]]) as usize
}

fn u32le(b: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]))
}

/// The member names of a zip whose last `tail.len()` bytes are `tail` and
/// whose whole size is `size` (the central directory must lie in the tail).
fn central_directory(tail: &[u8], size: u64) -> Vec<String> {
    let eocd = (0..=tail.len() - 22)
        .rev()
        .find(|&i| tail[i..i + 4] == [0x50, 0x4b, 0x05, 0x06])
        .expect("end of central directory");
    assert_eq!(
        eocd + 22 + u16le(tail, eocd + 20),
        tail.len(),
        "EOCD at the end"
    );
    let entries = u16le(tail, eocd + 10);
    let (cd_size, cd_offset) = (u32le(tail, eocd + 12), u32le(tail, eocd + 16));
    let start = size - tail.len() as u64;
    // The catalog's size agrees with where the directory says it is.
    assert_eq!(cd_offset + cd_size, start + eocd as u64, "size {size}");
    let mut at = usize::try_from(cd_offset - start).unwrap();
    let mut names = Vec::new();
    for _ in 0..entries {
        assert_eq!(tail[at..at + 4], [0x50, 0x4b, 0x01, 0x02]);
        let (n, x, c) = (
            u16le(tail, at + 28),
            u16le(tail, at + 30),
            u16le(tail, at + 32),
        );
        names.push(String::from_utf8(tail[at + 46..at + 46 + n].to_vec()).unwrap());
        at += 46 + n + x + c;
    }
    names
}

/// Done when: the 9.21+ sub-library names come from a real recent wheel:
/// the file list of `nvidia-cudnn-cu13` 9.28.1.4 holds the main library and
/// exactly the nine sub-libraries cudnnm knows for it (with
/// `engines_tensor_ir` and `ext`); the real JIT wheel's list is a JIT build.
#[test]
fn the_sub_library_names_are_those_of_a_real_recent_wheel() {
    let sb = Sandbox::new();
    let row = remote(&sb, &["--cuda", "13"])
        .into_iter()
        .find(|r| r["id"] == "9.28.1.4_cuda13")
        .unwrap();
    assert_eq!(row["file"], TAIL);
    let size = row["size"].as_u64().unwrap();
    let names = central_directory(&fs::read(real_tail()).unwrap(), size);
    let mut libs: Vec<&str> = names
        .iter()
        .filter_map(|n| n.strip_prefix("nvidia/cudnn/lib/"))
        .filter(|n| n.ends_with(".so.9"))
        .collect();
    libs.sort_unstable();
    let v: cudnnm::version::Version = "9.28.1.4".parse().unwrap();
    let mut known: Vec<String> = cudnnm::names::sublib_stems(9)
        .iter()
        .inspect(|s| assert!(cudnnm::names::ships(s, &v), "{s}"))
        .map(|s| format!("lib{s}.so.9"))
        .chain(["libcudnn.so.9".to_string()])
        .collect();
    known.sort_unstable();
    assert_eq!(libs, known, "{names:#?}");
    assert_eq!(libs.len(), 10);
    for later in ["libcudnn_engines_tensor_ir.so.9", "libcudnn_ext.so.9"] {
        assert!(libs.contains(&later), "{later}");
    }
    // Where each first appeared (read from the 9.20.0.48, 9.21.0.82 and
    // 9.22.0.52 wheels; docs/releases.md#library-names).
    let ships = |stem: &str, v: &str| cudnnm::names::ships(stem, &v.parse().unwrap());
    assert!(!ships("cudnn_engines_tensor_ir", "9.20.0.48"));
    assert!(ships("cudnn_engines_tensor_ir", "9.21.0.82"));
    assert!(!ships("cudnn_ext", "9.21.1.3"));
    assert!(ships("cudnn_ext", "9.22.0.52"));
    assert_eq!(
        cudnnm::store::flavour_of_files(names.iter().map(String::as_str)),
        cudnnm::version::Flavour::Full
    );
    // The real JIT wheel: three libraries, a JIT build.
    let jit = real_wheel("nvidia_cudnn_jit_cu12-9.27.0.42");
    let z = zip::ZipArchive::new(fs::File::open(&jit).unwrap()).unwrap();
    let jit_names: Vec<String> = z.file_names().map(|n| n.unwrap().into_owned()).collect();
    assert_eq!(
        cudnnm::store::flavour_of_files(jit_names.iter().map(String::as_str)),
        cudnnm::version::Flavour::Jit
    );
}

/// An answer served as PEP 691 JSON.
fn serve_json(server: &TestServer, path: &str, body: String) {
    server.route(
        path,
        Route {
            status: 200,
            body: body.into_bytes(),
            content_type: "application/vnd.pypi.simple.v1+json".into(),
            ..Default::default()
        },
    );
}

/// Done when: `manifest refresh --from` a package index and a redist
/// listing on 127.0.0.1 writes the user catalog; a hostile answer (HTML, no
/// hash, a URL that is not HTTPS, a path in a file name, an absurd size) is
/// refused naming the index, and the catalog on disk is unchanged.
#[test]
fn manifest_refresh_reads_recorded_answers_and_refuses_hostile_ones() {
    let sb = Sandbox::new();
    let server = TestServer::start();
    let packages = [
        "nvidia-cudnn-cu11",
        "nvidia-cudnn-cu12",
        "nvidia-cudnn-cu13",
        "nvidia-cudnn-jit-cu12",
        "nvidia-cudnn-jit-cu13",
    ];
    let fixtures = repo().join("tests/fixtures/catalog");
    for p in packages {
        let text = fs::read_to_string(fixtures.join(format!("pypi/{p}.json"))).unwrap();
        serve_json(&server, &format!("simple/{p}/"), text);
    }
    let redist = fs::read(fixtures.join("redist/redistrib_9.27.0.json")).unwrap();
    server.file("redist/redistrib_9.27.0.json", redist);
    server.html(
        "redist/",
        "<html><body><a href=\"redistrib_9.27.0.json\">redistrib_9.27.0.json</a></body></html>",
    );
    let simple = server.url("simple/");
    let listing = server.url("redist/");
    sb.run(["manifest", "refresh", "--from", &simple, "--from", &listing])
        .ok()
        .stderr_has(&[
            &format!("read {simple}nvidia-cudnn-cu13/: nvidia-cudnn-cu13, 29 releases"),
            &format!("read {listing}redistrib_9.27.0.json: cuDNN 9.27.0.42"),
        ]);
    let catalog = sb.home().join("catalog.toml");
    let before = fs::read(&catalog).unwrap();
    let r = sb.run(["list", "--remote", "--cuda", "13"]).ok();
    r.stderr_has(&["your catalog.toml"]);

    let good = r#"{"filename": "nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_x86_64.whl", "url": "https://files.pythonhosted.org/packages/ef/6f/nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_x86_64.whl", "hashes": {"sha256": "a54f205b1db1f2895d99f398754db1369816f0569dd459731f925635cf7b65ec"}, "size": 516817937, "yanked": false}"#;
    let answer = |file: String| {
        format!(
            r#"{{"meta": {{"api-version": "1.1"}}, "name": "nvidia-cudnn-cu13", "versions": ["9.28.1.4"], "files": [{file}]}}"#
        )
    };
    let cu13 = format!("{simple}nvidia-cudnn-cu13/");
    for (body, why) in [
        (
            "<!DOCTYPE html><html><body><a href=\"x.whl\">x.whl</a></body></html>".to_string(),
            "it is HTML",
        ),
        (
            answer(good.replace(
                r#""hashes": {"sha256": "a54f205b1db1f2895d99f398754db1369816f0569dd459731f925635cf7b65ec"}"#,
                r#""hashes": {}"#,
            )),
            "has no SHA-256",
        ),
        (
            answer(good.replace("https://files", "http://files")),
            "is not HTTPS",
        ),
        (
            answer(good.replace("\"filename\": \"", "\"filename\": \"../")),
            "not a plain file name",
        ),
        (
            answer(good.replace("516817937", "99999999999999")),
            "absurd size",
        ),
    ] {
        serve_json(&server, "simple/nvidia-cudnn-cu13/", body);
        let r = sb
            .run(["manifest", "refresh", "--from", &simple, "--from", &listing])
            .code_is(4)
            .stderr_has(&[&cu13, why]);
        assert_eq!(fs::read(&catalog).unwrap(), before, "{}", r.describe());
    }
    // The same answer put right is read again.
    serve_json(
        &server,
        "simple/nvidia-cudnn-cu13/",
        answer(good.to_string()),
    );
    sb.run(["manifest", "refresh", "--from", &cu13])
        .ok()
        .stderr_has(&["nvidia-cudnn-cu13, 1 release (1 wheel), 0 yanked"]);
}

/// Done when: the maintainer script regenerates the PyPI and redist rows and
/// the generated framework rows of manifest.toml byte for byte from the
/// recorded answers and METADATA files.
#[test]
fn the_maintainer_script_reproduces_the_generated_rows() {
    if crate::common::skip::need_program("python3", "python3").is_none() {
        return;
    }
    let out = output(
        Command::new("bash")
            .arg(repo().join("scripts/update-catalog.sh"))
            .args(["--offline", "--check"])
            .env("CUDNNM", bin()),
    );
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("generated rows up to date"), "{text}");
    assert!(
        text.contains("generated framework rows up to date"),
        "{text}"
    );
}

/// The generated framework rows of `manifest`, one line each.
fn generated_framework_rows(manifest: &str) -> Vec<String> {
    let begin = manifest.find("# ═══ BEGIN GENERATED FRAMEWORKS").unwrap();
    let end = manifest.find("# ═══ END GENERATED FRAMEWORKS").unwrap();
    manifest[begin..end]
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .map(str::to_string)
        .collect()
}

/// Done when (issue 29): the framework rows are read from the recorded
/// METADATA of the newest release of each line (torch 2.13–2.15, TensorFlow
/// 2.21, onnxruntime-gpu 1.31, JAX's CUDA plugins 0.12), and a row edited by
/// hand is caught by `--check` and put back by `--offline`.
#[test]
fn the_framework_rows_are_the_recorded_metadata_and_a_hand_edit_is_caught() {
    if crate::common::skip::need_program("python3", "python3").is_none() {
        return;
    }
    let manifest = fs::read_to_string(repo().join("manifest.toml")).unwrap();
    let rows = generated_framework_rows(&manifest);
    // Each row's (CUDA, cuDNN) is what the recorded METADATA requires.
    for (name, line, cuda, cudnn, read) in [
        ("pytorch", "2.15", "13.2", "9.26.0.51", "torch/2.15.0/"),
        ("pytorch", "2.14", "13.0", "9.24.0.43", "torch/2.14.1/"),
        ("pytorch", "2.13", "13.0", "9.20.0.48", "torch/2.13.0/"),
        ("tensorflow", "2.21", "12.5", "9.3", "tensorflow/2.21.0/"),
        (
            "onnxruntime",
            "1.31",
            "13.0",
            "9.0",
            "onnxruntime-gpu/1.31.1/",
        ),
        (
            "jax-cuda13-plugin",
            "0.12",
            "13.0",
            "9.12",
            "jax-cuda13-plugin/0.12.1/",
        ),
        (
            "jax-cuda12-plugin",
            "0.12",
            "12.1",
            "9.10",
            "jax-cuda12-plugin/0.12.0.1/",
        ),
    ] {
        let want = format!(
            "versions = [\"{line}\", \"{line}\"], cuda = \"{cuda}\", cudnn = \"{cudnn}\", source = \"https://pypi.org/project/{read}"
        );
        assert!(
            rows.iter()
                .any(|r| r.contains(&format!("name = \"{name}\"")) && r.contains(&want)),
            "{want} in {rows:#?}"
        );
    }
    assert_eq!(rows.len(), 7, "{rows:#?}");

    // A copy with one generated row edited by hand.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("manifest.toml");
    let edited = manifest.replacen(
        "cudnn = \"9.26.0.51\", source = \"https://pypi.org/project/torch/2.15.0/",
        "cudnn = \"9.28.1.4\", source = \"https://pypi.org/project/torch/2.15.0/",
        1,
    );
    assert_ne!(edited, manifest);
    fs::write(&copy, &edited).unwrap();
    let script = repo().join("scripts/update-frameworks.py");
    let run = |args: &[&str]| {
        output(
            Command::new("python3")
                .arg(&script)
                .args(args)
                .arg("--manifest")
                .arg(&copy),
        )
    };
    let out = run(&["--check"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("generated framework rows differ"),
        "{out:?}"
    );
    assert_eq!(
        fs::read_to_string(&copy).unwrap(),
        edited,
        "--check writes nothing"
    );
    let out = run(&["--offline"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(fs::read_to_string(&copy).unwrap(), manifest);
}
