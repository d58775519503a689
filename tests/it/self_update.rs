//! `cudnnm self update` over a loopback HTTP server, on Linux and (under
//! wine, `scripts/test-windows.sh`) on Windows: a copy of the binary under
//! test (version N) updates itself to N+1 from a release folder
//! (`SHA256SUMS` and the archive for this machine: a `.tar.gz` on Linux, a
//! `.zip` on Windows); a tampered N+1, one that does not run, and an N+1
//! missing from `SHA256SUMS` are refused and N keeps working, byte for byte.
//!
//! N+1 is a program that answers `--version` with `cudnnm N+1`: on Linux a
//! small shell script; on Windows, where the running `.exe` cannot be
//! overwritten and is renamed aside instead (the `self-replace` crate), the
//! real `cudnnm.exe` under test with its version string changed to N+1 (the
//! same length, so nothing else in the file moves).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::common::Sandbox;
use crate::common::http::TestServer;

const N: &str = env!("CARGO_PKG_VERSION");

/// A version newer than N written with as many characters (0.1.0 → 0.1.1,
/// 0.1.9 → 0.2.0): the Windows N+1 is N's binary with the version patched
/// in place.
fn next_version() -> String {
    let parts: Vec<u64> = N.split('.').map(|p| p.parse().unwrap()).collect();
    let join = |v: Vec<u64>| v.iter().map(u64::to_string).collect::<Vec<_>>().join(".");
    (0..parts.len())
        .rev()
        .map(|i| {
            let mut v = parts.clone();
            v[i] += 1;
            v[i + 1..].iter_mut().for_each(|p| *p = 0);
            join(v)
        })
        .find(|v| v.len() == N.len())
        .unwrap_or_else(|| panic!("no version after {N} of the same length"))
}

/// The release target of this machine, as `SHA256SUMS` names it.
fn target() -> String {
    if cfg!(windows) {
        "x86_64-pc-windows-gnu".to_string()
    } else {
        format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
    }
}

/// A release target that is not this machine's.
fn foreign_target() -> &'static str {
    if cfg!(windows) {
        "x86_64-unknown-linux-gnu"
    } else {
        "x86_64-pc-windows-gnu"
    }
}

fn archive_name(version: &str, target: &str) -> String {
    let ext = if target.contains("windows") {
        "zip"
    } else {
        "tar.gz"
    };
    format!("cudnnm-{version}-{target}.{ext}")
}

/// The binary's name in the archive and in its install folder.
fn exe_name() -> &'static str {
    if cfg!(windows) {
        "cudnnm.exe"
    } else {
        "cudnnm"
    }
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The N+1 binary: a script printing `cudnnm N+1` for `--version`.
#[cfg(unix)]
fn next_binary(next: &str) -> Vec<u8> {
    format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'cudnnm {next}'; exit 0; fi\necho 'new cudnnm ran'\n"
    )
    .into_bytes()
}

/// The N+1 binary: the real cudnnm.exe under test with every `N` in it
/// (clap's `--version`, the user agent) replaced by `next`.
#[cfg(windows)]
fn next_binary(next: &str) -> Vec<u8> {
    assert_eq!(next.len(), N.len());
    let mut bytes = std::fs::read(crate::common::bin()).unwrap();
    let mut patched = 0;
    let mut i = 0;
    while let Some(at) = bytes[i..].windows(N.len()).position(|w| w == N.as_bytes()) {
        let at = i + at;
        bytes[at..at + N.len()].copy_from_slice(next.as_bytes());
        patched += 1;
        i = at + N.len();
    }
    assert!(patched > 0, "the binary under test does not hold '{N}'");
    bytes
}

/// A "release" binary that does not run here: `--version` fails (Linux), or
/// the file is no Windows program at all.
fn broken_binary() -> Vec<u8> {
    if cfg!(windows) {
        b"MZ this is not a Windows program".to_vec()
    } else {
        b"#!/bin/sh\necho 'broken' >&2\nexit 1\n".to_vec()
    }
}

/// The release archive for this machine holding `binary` and a README, laid
/// out as scripts/dist.sh lays it out (both at the top level).
fn release_archive(binary: &[u8]) -> Vec<u8> {
    let readme = &b"# cudnnm\n"[..];
    if cfg!(windows) {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, body) in [(exe_name(), binary), ("README.md", readme)] {
            zip.start_file(name, zip::write::SimpleFileOptions::default())
                .unwrap();
            std::io::Write::write_all(&mut zip, body).unwrap();
        }
        return zip.finish().unwrap().into_inner();
    }
    let mut tar = tar::Builder::new(Vec::new());
    for (name, body, mode) in [(exe_name(), binary, 0o755), ("README.md", readme, 0o644)] {
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(mode);
        h.set_cksum();
        tar.append_data(&mut h, name, body).unwrap();
    }
    let raw = tar.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &raw).unwrap();
    gz.finish().unwrap()
}

/// A sandbox with a copy of the binary under test in `bin/`, and a server.
/// On Windows the sandbox's `TEMP` is its own `tmp/`, where `self-replace`
/// moves the old `.exe` until it has exited and can be deleted.
struct Setup {
    sb: Sandbox,
    exe: PathBuf,
    server: TestServer,
}

fn setup() -> Setup {
    let mut sb = Sandbox::new();
    let dir = sb.root().join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(exe_name());
    std::fs::copy(crate::common::bin(), &exe).unwrap();
    if cfg!(windows) {
        let tmp = sb.root().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        sb.set_env("TEMP", &tmp);
        sb.set_env("TMP", &tmp);
    }
    Setup {
        sb,
        exe,
        server: TestServer::start(),
    }
}

impl Setup {
    /// Serves `archive` as release `version` under `/rel/`, with a
    /// SHA256SUMS line giving `published` as its hash (and a wheel line,
    /// as a real SHA256SUMS has).
    fn publish(&self, version: &str, archive: Vec<u8>, published: &str) {
        let name = archive_name(version, &target());
        let sums = format!(
            "{published}  {name}\n{}  cudnnm-{version}-py3-none-manylinux_2_17_x86_64.whl\n",
            hex(b"wheel")
        );
        self.server.file("/rel/SHA256SUMS", sums.into_bytes());
        self.server.file(&format!("/rel/{name}"), archive);
    }

    fn run(&self, args: &[&str]) -> crate::common::Run {
        let mut c = self.sb.wrapped(self.exe.to_str().unwrap());
        c.args(args);
        let out = crate::common::output(&mut c);
        crate::common::Run {
            args: args.iter().map(Into::into).collect(),
            out,
            root: self.sb.root().to_path_buf(),
        }
    }

    fn update(&self) -> crate::common::Run {
        self.run(&["self", "update", "--base", &self.server.url("/rel")])
    }

    /// The old binary is untouched and alone in its folder.
    #[track_caller]
    fn assert_unchanged(&self) {
        assert_eq!(
            std::fs::read(&self.exe).unwrap(),
            std::fs::read(crate::common::bin()).unwrap(),
            "the old binary changed"
        );
        self.run(&["--version"])
            .ok()
            .stdout_has(&[&format!("cudnnm {N}")]);
        assert_eq!(folder_names(self.exe.parent().unwrap()), [exe_name()]);
    }

    /// After an update: the binary's folder holds only the new binary (on
    /// Windows the old `.exe`, renamed aside while it ran, is gone once it
    /// has exited), and the sandbox's TEMP nothing.
    #[track_caller]
    fn assert_only_the_new_binary_left(&self) {
        let bin = self.exe.parent().unwrap();
        let tmp = self.sb.root().join("tmp");
        let names = |d: &Path| if d.exists() { folder_names(d) } else { vec![] };
        let start = Instant::now();
        while (names(bin) != [exe_name()] || !names(&tmp).is_empty())
            && start.elapsed() < Duration::from_secs(30)
        {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(names(bin), [exe_name()], "left beside the binary");
        assert_eq!(names(&tmp), Vec::<String>::new(), "left in TEMP");
    }
}

fn folder_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn self_update_replaces_n_with_n_plus_1() {
    let s = setup();
    let next = next_version();
    let binary = next_binary(&next);
    let archive = release_archive(&binary);
    s.publish(&next, archive.clone(), &hex(&archive));
    s.update()
        .ok()
        .stderr_has(&[&format!("cudnnm {N} → {next}")]);
    assert!(
        std::fs::read(&s.exe).unwrap() == binary,
        "the binary is not N+1's"
    );
    s.run(&["--version"])
        .ok()
        .stdout_has(&[&format!("cudnnm {next}")]);
    s.assert_only_the_new_binary_left();
    // N+1 runs as the program it is (the script's line, or the real cudnnm).
    let list = s.run(&["list"]).ok();
    if cfg!(unix) {
        list.stdout_has(&["new cudnnm ran"]);
    }
}

#[test]
fn self_update_refuses_a_tampered_release_and_n_keeps_working() {
    let s = setup();
    let next = next_version();
    let good = release_archive(&next_binary(&next));
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x40;
    s.publish(&next, bad, &hex(&good));
    s.update()
        .code_is(4)
        .stderr_has(&["does not match its SHA256SUMS line", "nothing was changed"]);
    s.assert_unchanged();
    assert_eq!(
        s.server
            .hits(&format!("/rel/{}", archive_name(&next, &target()))),
        1
    );
}

#[test]
fn self_update_refuses_a_release_that_does_not_run() {
    let s = setup();
    let next = next_version();
    let archive = release_archive(&broken_binary());
    s.publish(&next, archive.clone(), &hex(&archive));
    s.update()
        .code_is(4)
        .stderr_has(&["does not run here; the old binary is kept"]);
    s.assert_unchanged();
}

#[test]
fn self_update_with_nothing_newer_changes_nothing() {
    let s = setup();
    let archive = release_archive(&next_binary(&next_version()));
    s.publish(N, archive.clone(), &hex(&archive));
    let r = s
        .run(&["--json", "self", "update", "--base", &s.server.url("/rel")])
        .ok();
    assert_eq!(r.json()["updated"], false);
    assert_eq!(r.json()["to"], N);
    s.assert_unchanged();
    assert_eq!(
        s.server
            .hits(&format!("/rel/{}", archive_name(N, &target()))),
        0
    );
}

#[test]
fn self_update_without_a_release_for_this_machine_says_so() {
    let s = setup();
    s.server.file(
        "/rel/SHA256SUMS",
        format!(
            "{}  {}\n",
            hex(b"other"),
            archive_name("9.9.9", foreign_target())
        )
        .into_bytes(),
    );
    s.update()
        .code_is(3)
        .stderr_has(&["names no cudnnm release for", "CUDNNM_INSTALL_BASE"]);
    s.assert_unchanged();
}

#[test]
fn self_update_reads_a_local_release_folder() {
    let s = setup();
    let next = next_version();
    let binary = next_binary(&next);
    let archive = release_archive(&binary);
    let folder = s.sb.root().join("mirror");
    std::fs::create_dir_all(&folder).unwrap();
    let name = archive_name(&next, &target());
    std::fs::write(
        folder.join("SHA256SUMS"),
        format!("{}  {name}\n", hex(&archive)),
    )
    .unwrap();
    std::fs::write(folder.join(&name), &archive).unwrap();
    let mut c = s.sb.wrapped(s.exe.to_str().unwrap());
    c.args(["self", "update"])
        .env("CUDNNM_INSTALL_BASE", &folder);
    let out = crate::common::output(&mut c);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read(&s.exe).unwrap() == binary);
    s.run(&["--version"])
        .ok()
        .stdout_has(&[&format!("cudnnm {next}")]);
}

#[test]
fn self_update_without_network_names_its_own_flags() {
    let s = setup();
    // A port nothing listens on: the connection is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/rel", closed.local_addr().unwrap());
    drop(closed);
    let run = s.run(&["self", "update", "--base", &url]).stderr_has(&[
        "could not read the release list",
        "--base",
        "CUDNNM_INSTALL_BASE",
    ]);
    assert_ne!(run.code(), 0, "{}", run.describe());
    let err = run.stderr();
    assert!(
        !err.contains("--mirror") && !err.contains("--from"),
        "self update names the manifest command's flags: {err}"
    );
    s.assert_unchanged();
}
