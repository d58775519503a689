//! `cudnnm self update` over a loopback HTTP server: a copy of the binary
//! under test (version N) updates itself to N+1 from a release folder
//! (`SHA256SUMS` and a `.tar.gz`); a tampered N+1, one that does not run,
//! and an N+1 missing from `SHA256SUMS` are refused and N keeps working,
//! byte for byte. Linux only: N+1 is a small shell script standing in for
//! a newer cudnnm (it answers `--version`), and the Linux artifact names
//! are the ones served.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::common::Sandbox;
use crate::common::http::TestServer;

const N: &str = env!("CARGO_PKG_VERSION");

fn next_version() -> String {
    let mut parts: Vec<u64> = N.split('.').map(|p| p.parse().unwrap()).collect();
    *parts.last_mut().unwrap() += 1;
    parts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

fn target() -> String {
    format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A release tarball whose `cudnnm` is a script that prints `version_line`
/// for `--version` and exits with `code`.
fn release_tgz(version_line: &str, code: i32) -> Vec<u8> {
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '{version_line}'; exit {code}; fi\necho 'new cudnnm ran'\n"
    );
    let mut tar = tar::Builder::new(Vec::new());
    for (name, body, mode) in [
        ("cudnnm", script.as_bytes(), 0o755),
        ("README.md", &b"# cudnnm\n"[..], 0o644),
    ] {
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
struct Setup {
    sb: Sandbox,
    exe: PathBuf,
    server: TestServer,
}

fn setup() -> Setup {
    let sb = Sandbox::new();
    let dir = sb.root().join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("cudnnm");
    std::fs::copy(crate::common::bin(), &exe).unwrap();
    Setup {
        sb,
        exe,
        server: TestServer::start(),
    }
}

impl Setup {
    /// Serves `tgz` as release `version` under `/rel/`, with a SHA256SUMS
    /// line giving `published` as its hash.
    fn publish(&self, version: &str, tgz: Vec<u8>, published: &str) {
        let name = format!("cudnnm-{version}-{}.tar.gz", target());
        let sums = format!(
            "{published}  {name}\n{}  cudnnm-{version}-py3-none-manylinux_2_17_x86_64.whl\n",
            hex(b"wheel")
        );
        self.server.file("/rel/SHA256SUMS", sums.into_bytes());
        self.server.file(&format!("/rel/{name}"), tgz);
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
        assert_eq!(folder_names(self.exe.parent().unwrap()), ["cudnnm"]);
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
    let tgz = release_tgz(&format!("cudnnm {next}"), 0);
    s.publish(&next, tgz.clone(), &hex(&tgz));
    s.update()
        .ok()
        .stderr_has(&[&format!("cudnnm {N} → {next}")]);
    s.run(&["--version"])
        .ok()
        .stdout_has(&[&format!("cudnnm {next}")]);
    s.run(&["list"]).ok().stdout_has(&["new cudnnm ran"]);
    assert_eq!(folder_names(s.exe.parent().unwrap()), ["cudnnm"]);
}

#[test]
fn self_update_refuses_a_tampered_release_and_n_keeps_working() {
    let s = setup();
    let next = next_version();
    let good = release_tgz(&format!("cudnnm {next}"), 0);
    let mut bad = good.clone();
    let last = bad.len() - 9; // inside the deflate stream, before the gzip trailer
    bad[last] ^= 0x40;
    s.publish(&next, bad, &hex(&good));
    s.update()
        .code_is(4)
        .stderr_has(&["does not match its SHA256SUMS line", "nothing was changed"]);
    s.assert_unchanged();
}

#[test]
fn self_update_refuses_a_release_that_does_not_run() {
    let s = setup();
    let next = next_version();
    let tgz = release_tgz(&format!("cudnnm {next}"), 1);
    s.publish(&next, tgz.clone(), &hex(&tgz));
    s.update()
        .code_is(4)
        .stderr_has(&["does not run here; the old binary is kept"]);
    s.assert_unchanged();
}

#[test]
fn self_update_with_nothing_newer_changes_nothing() {
    let s = setup();
    let tgz = release_tgz(&format!("cudnnm {N}"), 0);
    s.publish(N, tgz.clone(), &hex(&tgz));
    let r = s
        .run(&["--json", "self", "update", "--base", &s.server.url("/rel")])
        .ok();
    assert_eq!(r.json()["updated"], false);
    assert_eq!(r.json()["to"], N);
    s.assert_unchanged();
    assert_eq!(
        s.server
            .hits(&format!("/rel/cudnnm-{N}-{}.tar.gz", target())),
        0
    );
}

#[test]
fn self_update_without_a_release_for_this_machine_says_so() {
    let s = setup();
    s.server.file(
        "/rel/SHA256SUMS",
        format!("{}  cudnnm-9.9.9-x86_64-pc-windows-gnu.zip\n", hex(b"zip")).into_bytes(),
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
    let tgz = release_tgz(&format!("cudnnm {next}"), 0);
    let folder = s.sb.root().join("mirror");
    std::fs::create_dir_all(&folder).unwrap();
    let name = format!("cudnnm-{next}-{}.tar.gz", target());
    std::fs::write(
        folder.join("SHA256SUMS"),
        format!("{}  {name}\n", hex(&tgz)),
    )
    .unwrap();
    std::fs::write(folder.join(&name), &tgz).unwrap();
    let mut c = s.sb.wrapped(s.exe.to_str().unwrap());
    c.args(["self", "update"])
        .env("CUDNNM_INSTALL_BASE", &folder);
    let out = crate::common::output(&mut c);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    s.run(&["--version"])
        .ok()
        .stdout_has(&[&format!("cudnnm {next}")]);
}
