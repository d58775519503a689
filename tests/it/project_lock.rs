//! Reproducible projects: a pin with a range, `cudnnm lock`, and a bare
//! `cudnnm install` on a second home that gets exactly the locked bytes
//! through a loopback mirror. Archives are fixtures in NVIDIA's redist
//! layouts served by a real HTTP server on 127.0.0.1, in a catalog read by
//! `cudnnm manifest refresh` from a served `redistrib_*.json`. The versions
//! (9.40.x, 9.41.x) are made up so that no embedded catalog entry mixes in.
//! The catalog's URLs are NVIDIA's, so each home reaches the served tree
//! as its mirror (`CUDNNM_MIRROR`), as a lab without internet access does.

// The served fixtures are Linux x86_64 archives, the host platform a bare
// `install` picks; `use` below needs a Unix toolkit with links.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use crate::common;
use crate::deploy_support::{linux_toolkit, put_redist_linux_12};

use std::path::{Path, PathBuf};

use common::Sandbox;
use common::fixtures;
use common::http::TestServer;
use cudnnm::hash::sha256_bytes;

const REDIST: &str = "compute/cudnn/redist/";
const OLD: &str = "9.40.1.3";
const NEW: &str = "9.41.0.7";

/// One served archive.
struct Served {
    /// Server path.
    path: String,
    bytes: Vec<u8>,
    sha: String,
}

/// A server holding Linux and Windows CUDA 12 archives of 9.40.1.3 and a
/// Linux one of 9.41.0.7, with one `redistrib_*.json` per release.
struct Project {
    server: TestServer,
    files: Vec<Served>,
}

fn redistrib(version: &str, entries: &[(&str, &Served)]) -> String {
    let plats: Vec<String> = entries
        .iter()
        .map(|(p, s)| {
            let rel = s.path.strip_prefix(REDIST).unwrap();
            format!(
                r#""{p}": {{ "relative_path": "{rel}", "sha256": "{}", "md5": "00000000000000000000000000000000", "size": "{}" }}"#,
                s.sha,
                s.bytes.len()
            )
        })
        .collect();
    format!(
        r#"{{ "release_date": "2026-01-05", "release_label": "{version}", "release_product": "cudnn",
  "cudnn": {{ "name": "NVIDIA CUDA Deep Neural Network library", "license": "cudnn", "license_path": "cudnn/LICENSE.txt",
    "version": "{version}", {} }} }}"#,
        plats.join(", ")
    )
}

fn build(dir: &Path, fx: fixtures::Fixture, plat: &str) -> Served {
    std::fs::create_dir_all(dir).unwrap();
    let file = fx.write(dir);
    let bytes = std::fs::read(&file).unwrap();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    Served {
        path: format!("{REDIST}cudnn/{plat}/{name}"),
        sha: sha256_bytes(&bytes).to_string(),
        bytes,
    }
}

impl Project {
    fn new(fx: &Path) -> Project {
        std::fs::create_dir_all(fx).unwrap();
        let server = TestServer::start();
        let files = vec![
            build(fx, fixtures::redist_linux(OLD, "12"), "linux-x86_64"),
            build(fx, fixtures::redist_windows(OLD, "12"), "windows-x86_64"),
            build(fx, fixtures::redist_linux(NEW, "12"), "linux-x86_64"),
        ];
        for f in &files {
            server.file(&f.path, f.bytes.clone());
        }
        let p = Project { server, files };
        p.server.file(
            &format!("{REDIST}redistrib_{OLD}.json"),
            redistrib(
                OLD,
                &[
                    ("linux-x86_64", &p.files[0]),
                    ("windows-x86_64", &p.files[1]),
                ],
            )
            .into_bytes(),
        );
        p.server.file(
            &format!("{REDIST}redistrib_{NEW}.json"),
            redistrib(NEW, &[("linux-x86_64", &p.files[2])]).into_bytes(),
        );
        p
    }

    /// Reads both served indexes into `sb`'s user catalog.
    fn refresh(&self, sb: &Sandbox) {
        sb.run([
            "manifest",
            "refresh",
            "--from",
            &self.server.url(&format!("{REDIST}redistrib_{OLD}.json")),
            "--from",
            &self.server.url(&format!("{REDIST}redistrib_{NEW}.json")),
        ])
        .ok();
    }
}

/// The receipt of release `id` in `home`'s store.
fn receipt(home: &Path, id: &str) -> Option<String> {
    let (v, c) = id.split_once("_cuda").unwrap();
    // The JIT build's folder: `<version>+jit`.
    let (c, jit) = c.strip_suffix("+jit").map_or((c, ""), |c| (c, "+jit"));
    std::fs::read_to_string(home.join(format!("store/cuda-{c}/{v}{jit}/receipt.toml"))).ok()
}

/// Every release folder in `home`'s store (`cuda-12/9.40.1.3`), sorted.
fn releases(home: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for c in std::fs::read_dir(home.join("store"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let cn = c.file_name().to_string_lossy().into_owned();
        if !cn.starts_with("cuda-") {
            continue;
        }
        for v in std::fs::read_dir(c.path()).unwrap().flatten() {
            out.push(format!("{cn}/{}", v.file_name().to_string_lossy()));
        }
    }
    out.sort();
    out
}

fn lock_of(dir: &Path) -> PathBuf {
    dir.join(".cudnn-version.lock")
}

#[test]
fn a_locked_project_installs_the_same_bytes_on_a_second_home_through_a_mirror() {
    let mut sb = Sandbox::new();
    let p = Project::new(&sb.root().join("fx"));
    sb.set_env("CUDNNM_MIRROR", p.server.url("compute/"));
    p.refresh(&sb);
    sb.run(["pin", ">=9.40,<9.41", "--force"]).ok();
    sb.run(["lock"])
        .ok()
        .stderr_has(&["locked 9.40.1.3_cuda12", "linux-x86_64, windows-x86_64"]);
    let lock = std::fs::read_to_string(lock_of(&sb.work())).unwrap();
    // The exact release and, per platform, the served file and its hash.
    assert!(
        lock.contains("pin = \">=9.40,<9.41\"\nrelease = \"9.40.1.3_cuda12\"\n"),
        "{lock}"
    );
    let linux = lock.find("[platform.linux-x86_64]").expect("linux entry");
    let windows = lock
        .find("[platform.windows-x86_64]")
        .expect("windows entry");
    assert!(linux < windows, "{lock}");
    assert!(
        lock[linux..windows].contains(&format!("sha256 = \"{}\"", p.files[0].sha)),
        "{lock}"
    );
    // NVIDIA's URL and the path under its base, which a mirror replaces.
    let rel = p.files[0].path.strip_prefix("compute/").unwrap();
    assert!(
        lock[linux..windows].contains(&format!(
            "url = \"https://developer.download.nvidia.com/compute/{rel}\"\npath = \"{rel}\"\n"
        )),
        "{lock}"
    );
    assert!(
        lock[windows..].contains(&format!("sha256 = \"{}\"", p.files[1].sha)),
        "{lock}"
    );
    assert!(!lock.contains(NEW), "<9.41 excludes 9.41.0.7: {lock}");
    // Stable byte for byte when run again.
    sb.run(["lock"]).ok().stderr_has(&["lock unchanged"]);
    assert_eq!(std::fs::read_to_string(lock_of(&sb.work())).unwrap(), lock);

    // A teammate's machine: a fresh home with no catalog entry for these
    // releases, the project's two files, and a mirror of the server's tree.
    let sb2 = {
        let mut s = Sandbox::new();
        let mirror = TestServer::start();
        for f in &p.files {
            mirror.file(&f.path, f.bytes.clone());
        }
        s.set_env("CUDNNM_MIRROR", mirror.url("compute/"));
        (s, mirror)
    };
    let (sb2, mirror) = sb2;
    for f in [".cudnn-version", ".cudnn-version.lock"] {
        std::fs::copy(sb.work().join(f), sb2.work().join(f)).unwrap();
    }
    let before = p.server.hits(&p.files[0].path);
    sb2.run(["install"])
        .ok()
        .stderr_has(&["as locked in", "installed cuDNN 9.40.1.3 for CUDA 12"]);
    assert_eq!(
        mirror.hits(&p.files[0].path),
        1,
        "the mirror served the archive"
    );
    assert_eq!(
        p.server.hits(&p.files[0].path),
        before,
        "only the second home's mirror was asked"
    );
    assert_eq!(releases(&sb2.home()), ["cuda-12/9.40.1.3"]);
    let r = receipt(&sb2.home(), "9.40.1.3_cuda12").unwrap();
    assert!(
        r.contains(&format!("sha256 = \"{}\"", p.files[0].sha)),
        "{r}"
    );
    // Installed: a no-op that says so, downloading nothing.
    sb2.run(["install"])
        .ok()
        .stderr_has(&["9.40.1.3_cuda12 is already installed", "nothing to do"]);
    assert_eq!(mirror.hits(&p.files[0].path), 1);
    // Activation takes the newest installed match, without the catalog.
    sb2.run(["current"]).ok().stdout_has(&[
        "spec here: >=9.40,<9.41 (",
        "→ 9.40.1.3_cuda12 (the newest installed release with >=9.40 and <9.41)",
        "locked: 9.40.1.3_cuda12 in '",
    ]);
}

#[test]
fn a_changed_archive_behind_the_locked_url_is_refused() {
    let mut sb = Sandbox::new();
    let p = Project::new(&sb.root().join("fx"));
    sb.set_env("CUDNNM_MIRROR", p.server.url("compute/"));
    p.refresh(&sb);
    sb.run(["pin", "9.40.x", "--force"]).ok();
    sb.run(["lock"]).ok();
    // The server now holds other bytes under the same name: a rebuilt archive.
    let mut other = fixtures::redist_linux(OLD, "12");
    other.file(
        &format!("cudnn-linux-x86_64-{OLD}_cuda12-archive/EXTRA"),
        "not what was locked",
    );
    let changed = build(&sb.root().join("fx2"), other, "linux-x86_64");
    assert_ne!(changed.sha, p.files[0].sha);
    p.server.file(&p.files[0].path, changed.bytes.clone());
    let e = sb.run(["install"]).code_is(4);
    let lock_path = lock_of(&sb.work());
    e.stderr_has(&[
        &format!("the lock '{}' records", lock_path.display()),
        &format!("(SHA-256 {})", p.files[0].sha),
        "nothing was installed",
    ]);
    assert_eq!(
        releases(&sb.home()),
        Vec::<String>::new(),
        "nothing installed"
    );
    let cached: Vec<String> = std::fs::read_dir(sb.home().join("downloads"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert!(
        !cached.iter().any(|n| n.starts_with(&changed.sha)),
        "the changed bytes are not kept: {cached:?}"
    );
    // Served as locked again, the same command installs the locked bytes.
    p.server.file(&p.files[0].path, p.files[0].bytes.clone());
    sb.run(["install"]).ok();
    let r = receipt(&sb.home(), "9.40.1.3_cuda12").unwrap();
    assert!(r.contains(&p.files[0].sha), "{r}");
}

#[test]
fn locked_install_fails_when_the_pin_moved_past_the_lock() {
    let mut sb = Sandbox::new();
    let p = Project::new(&sb.root().join("fx"));
    sb.set_env("CUDNNM_MIRROR", p.server.url("compute/"));
    p.refresh(&sb);
    sb.run(["pin", "9.40.x", "--force"]).ok();
    sb.run(["lock"]).ok();
    sb.run(["pin", "9.41", "--force"]).ok();
    let lock_path = lock_of(&sb.work());
    sb.run(["install", "--locked"]).code_is(4).stderr_has(&[
        &format!("the lock '{}' names 9.40.1.3_cuda12", lock_path.display()),
        "does not satisfy the pin 9.41",
        ".cudnn-version' line 1",
        "cudnnm lock",
    ]);
    assert_eq!(releases(&sb.home()), Vec::<String>::new());
    // Without --locked the stale lock is named and the pin is resolved.
    sb.run(["install"])
        .ok()
        .stderr_has(&["does not satisfy the pin 9.41", "installed cuDNN 9.41.0.7"]);
    assert_eq!(releases(&sb.home()), ["cuda-12/9.41.0.7"]);
    // No lock at all: --locked refuses, naming the file it looked for.
    std::fs::remove_file(&lock_path).unwrap();
    sb.run(["install", "--locked"])
        .code_is(4)
        .stderr_has(&[&format!("there is no lock file '{}'", lock_path.display())]);
}

#[test]
fn a_bare_install_resolves_the_pin_against_the_catalog_then_is_a_no_op() {
    let mut sb = Sandbox::new();
    let p = Project::new(&sb.root().join("fx"));
    sb.set_env("CUDNNM_MIRROR", p.server.url("compute/"));
    p.refresh(&sb);
    // Nothing names a release: the error says how to name one.
    sb.run(["install"]).code_is(3).stderr_has(&[
        "no cuDNN release is named for this folder",
        "cudnnm pin SPEC",
    ]);
    sb.run(["pin", "latest_cuda12", "--force"]).ok();
    sb.run(["install"])
        .ok()
        .stderr_has(&["installed cuDNN 9.41.0.7 for CUDA 12"]);
    assert_eq!(p.server.hits(&p.files[2].path), 1);
    sb.run(["install"]).ok().stderr_has(&[
        "9.41.0.7_cuda12 is already installed",
        "matches latest_cuda12",
    ]);
    assert_eq!(
        p.server.hits(&p.files[2].path),
        1,
        "a no-op downloads nothing"
    );
    // The default applies where no pin does.
    std::fs::remove_file(sb.work().join(".cudnn-version")).unwrap();
    sb.run(["default", "9.40.x"]).code_is(3);
    std::fs::write(sb.home().join("config.toml"), "default = \"9.40.x\"\n").unwrap();
    sb.run(["install"])
        .ok()
        .stderr_has(&["installed cuDNN 9.40.1.3 for CUDA 12"]);
    // Ranges pick the newest installed match for activation: 9.40 here, 9.41 with >=9.40.
    let env = sb
        .run([
            "exec",
            "--version",
            "<9.41",
            "--",
            "sh",
            "-c",
            "echo $CUDNN_PATH",
        ])
        .ok()
        .stdout();
    assert!(env.trim().ends_with("9.40.1.3"), "{env}");
    let env = sb
        .run([
            "exec",
            "--version",
            ">=9.40",
            "--",
            "sh",
            "-c",
            "echo $CUDNN_PATH",
        ])
        .ok()
        .stdout();
    assert!(env.trim().ends_with("9.41.0.7"), "{env}");
    sb.run(["exec", "--version", "9.4.x", "--", "true"])
        .code_is(3)
        .stderr_has(&["cuDNN 9.4.x is not installed"]);
    sb.run(["exec", "--version", "~9.40", "--", "true"])
        .code_is(2)
        .stderr_has(&["'~9.40' is not a cuDNN version spec", ">=9.1,<9.11"]);
}

/// Real pip, offline: the index is off and `links` (a find-links folder) is
/// the only source, as in `install::pip_requirement_runs_the_users_pip`.
fn offline_pip(sb: &mut Sandbox, links: &Path) {
    sb.set_env("PIP_NO_INDEX", "1");
    sb.set_env("PIP_FIND_LINKS", links);
    sb.set_env("PIP_CONFIG_FILE", "/dev/null");
    // A release the catalog knows only from PyPI (no archive of it anywhere).
    std::fs::create_dir_all(sb.home()).unwrap();
    std::fs::write(
        sb.home().join("catalog.toml"),
        "schema = 1\n\n[[wheel]]\npackage = \"nvidia-cudnn-cu12\"\ncuda = \"12\"\nsource = \"test\"\nversions = [\"9.30.0.1\"]\n",
    )
    .unwrap();
}

/// A sandbox whose pip installs only from its `links` folder (returned,
/// empty): [`offline_pip`] on a fresh sandbox.
fn offline_sandbox() -> (Sandbox, PathBuf) {
    let mut sb = Sandbox::new();
    let links = sb.root().join("links");
    std::fs::create_dir_all(&links).unwrap();
    offline_pip(&mut sb, &links);
    (sb, links)
}

#[test]
fn a_pip_only_release_is_locked_by_the_hash_of_the_wheel_pip_fetched() {
    let mut sb = Sandbox::new();
    let links = sb.root().join("links");
    std::fs::create_dir_all(&links).unwrap();
    let wheel = fixtures::wheel("nvidia_cudnn_cu12", "9.30.0.1", false).write(&links);
    let sha = sha256_bytes(&std::fs::read(&wheel).unwrap()).to_string();
    offline_pip(&mut sb, &links);
    sb.run(["pin", "9.30.x", "--force"]).ok();
    sb.run(["lock"])
        .ok()
        .stderr_has(&["published only on PyPI"]);
    let lock = std::fs::read_to_string(lock_of(&sb.work())).unwrap();
    assert!(
        lock.ends_with(&format!(
            "release = \"9.30.0.1_cuda12\"\n\n[platform.linux-x86_64]\npip = \"nvidia-cudnn-cu12==9.30.0.1\"\nwheel = \"{}\"\nsha256 = \"{sha}\"\n",
            wheel.file_name().unwrap().to_string_lossy()
        )),
        "{lock}"
    );
    // A second home installs it through pip, checked against the lock.
    let mut sb2 = Sandbox::new();
    offline_pip(&mut sb2, &links);
    for f in [".cudnn-version", ".cudnn-version.lock"] {
        std::fs::copy(sb.work().join(f), sb2.work().join(f)).unwrap();
    }
    sb2.run(["install", "--locked"]).ok();
    let r = receipt(&sb2.home(), "9.30.0.1_cuda12").unwrap();
    assert!(r.contains(&sha), "{r}");
    // Other bytes under the same wheel name: refused, nothing installed.
    let mut other = fixtures::wheel("nvidia_cudnn_cu12", "9.30.0.1", false);
    other.file("nvidia/cudnn/EXTRA", "not what was locked");
    other.write(&links);
    let mut sb3 = Sandbox::new();
    offline_pip(&mut sb3, &links);
    for f in [".cudnn-version", ".cudnn-version.lock"] {
        std::fs::copy(sb.work().join(f), sb3.work().join(f)).unwrap();
    }
    sb3.run(["install"]).code_is(4).stderr_has(&[
        "pip:nvidia-cudnn-cu12==9.30.0.1 is not the archive the lock '",
        &format!("(SHA-256 {sha})"),
    ]);
    assert_eq!(releases(&sb3.home()), Vec::<String>::new());
}

#[test]
fn use_takes_the_newest_installed_release_a_range_admits() {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    for v in [OLD, NEW, "9.4.0.1"] {
        put_redist_linux_12(&sb.home(), v);
    }
    let root = tk.display().to_string();
    // <9.41 excludes 9.41.0.7; 9.40 > 9.4 numerically.
    sb.run(["use", "<9.41", "--cuda-root", &root])
        .ok()
        .stderr_has(&["→ 9.40.1.3"]);
    sb.run(["use", "9.4.x", "--cuda-root", &root])
        .ok()
        .stderr_has(&["→ 9.4.0.1"]);
    sb.run(["use", "latest_cuda12", "--cuda-root", &root])
        .ok()
        .stderr_has(&["→ 9.41.0.7"]);
    // The toolkit's library now resolves into the store's 9.41.0.7.
    let l = std::fs::canonicalize(tk.join("targets/x86_64-linux/lib/libcudnn.so.9")).unwrap();
    assert!(
        l.starts_with(sb.home().join("store/cuda-12/9.41.0.7")),
        "{}",
        l.display()
    );
    sb.run(["use", ">=9.42", "--cuda-root", &root])
        .code_is(3)
        .stderr_has(&["cuDNN >=9.42 is not installed"]);
}

#[test]
fn a_release_installed_from_other_bytes_than_the_lock_is_named() {
    let mut sb = Sandbox::new();
    let p = Project::new(&sb.root().join("fx"));
    sb.set_env("CUDNNM_MIRROR", p.server.url("compute/"));
    p.refresh(&sb);
    sb.run(["pin", "9.40.x", "--force"]).ok();
    sb.run(["lock"]).ok();
    // The same release id, imported from a rebuilt archive of your own.
    let mut other = fixtures::redist_linux(OLD, "12");
    other.file(
        &format!("cudnn-linux-x86_64-{OLD}_cuda12-archive/EXTRA"),
        "a rebuilt archive",
    );
    std::fs::create_dir_all(sb.root().join("mine")).unwrap();
    let file = other.write(&sb.root().join("mine"));
    let mine = sha256_bytes(&std::fs::read(&file).unwrap()).to_string();
    sb.run([std::ffi::OsStr::new("install"), file.as_os_str()])
        .ok();
    let lock = lock_of(&sb.work());
    let refused = |verb: &str| {
        format!(
            "error: {verb}: 9.40.1.3_cuda12 is installed from an archive with SHA-256 {mine}, not the archive with SHA-256 {} the lock '{}' records",
            p.files[0].sha,
            lock.display()
        )
    };
    // A rebuilt archive no other machine can fetch: locking it is not offered.
    let help = "help: `cudnnm install --force` replaces it with the locked bytes (no other machine can fetch the installed ones, so a lock of them would fail there)";
    sb.run(["install", "--locked"])
        .code_is(4)
        .stderr_has(&[&refused("install --locked"), help]);
    // A bare install honours the lock as --locked does: other bytes are
    // not "already installed" (exit 4, naming the file and both hashes).
    let r = sb
        .run(["install"])
        .code_is(4)
        .stderr_has(&[&refused("install"), help]);
    assert!(!r.stderr().contains("nothing to do"), "{}", r.describe());
    // --force puts the locked bytes in place of the other ones.
    sb.run(["install", "--force"]).ok();
    let r = receipt(&sb.home(), "9.40.1.3_cuda12").unwrap();
    assert!(r.contains(&p.files[0].sha) && !r.contains(&mine), "{r}");
    sb.run(["install", "--locked"])
        .ok()
        .stderr_has(&["already installed"]);
}

/// `install VERSION`, `install PREFIX` and `install latest` reach a release
/// the catalog knows only as a PyPI wheel (most of cuDNN 9) through the
/// user's pip; once installed, the same spec is a no-op that does not run pip.
#[test]
fn install_by_version_reaches_a_release_published_only_on_pypi() {
    let mut sb = Sandbox::new();
    let links = sb.root().join("links");
    std::fs::create_dir_all(&links).unwrap();
    let wheel = fixtures::wheel("nvidia_cudnn_cu12", "9.30.0.1", false).write(&links);
    let sha = sha256_bytes(&std::fs::read(&wheel).unwrap()).to_string();
    offline_pip(&mut sb, &links);
    sb.run(["install", "9.30.0.1"]).ok().stderr_has(&[
        "cuDNN 9.30.0.1 for CUDA 12 is published as a PyPI wheel: installing pip:nvidia-cudnn-cu12==9.30.0.1",
    ]);
    assert_eq!(releases(&sb.home()), vec!["cuda-12/9.30.0.1".to_string()]);
    assert!(
        receipt(&sb.home(), "9.30.0.1_cuda12")
            .unwrap()
            .contains(&sha)
    );
    // Installed: no pip run (its folder is gone, so a run would fail).
    std::fs::remove_dir_all(&links).unwrap();
    for spec in ["9.30.0.1", "9.30", "latest"] {
        sb.run(["install", spec, "--cuda", "12"])
            .ok()
            .stderr_has(&["cuDNN 9.30.0.1_cuda12 is already installed at '"]);
    }
    sb.run(["install", "pip:nvidia-cudnn-cu12==9.30.0.1"])
        .ok()
        .stderr_has(&["cuDNN 9.30.0.1_cuda12 is already installed at '"]);
}

/// `cudnnm lock` locks the release the pin selects here (the newest
/// installed match, what `exec` and `current` use), not an older catalog
/// pick, and takes the wheel's hash from the receipt: nothing is downloaded.
#[test]
fn lock_names_the_installed_release_the_pin_selects_without_downloading() {
    let (sb, _) = offline_sandbox();
    // Installed from a wheel file of another package, newer than the catalog's 9.30.0.1.
    let whl = fixtures::wheel("nvidia_cudnn_jit_cu12", "9.30.0.2", false).write(sb.root());
    let sha = sha256_bytes(&std::fs::read(&whl).unwrap()).to_string();
    sb.run(["install".as_ref(), whl.as_os_str()]).ok();
    sb.run(["pin", "9.30.x"]).ok();
    sb.run(["lock"]).ok().stderr_has(&[
        "locking cuDNN 9.30.0.2_cuda12+jit, the release the pin 9.30.x selects here (installed)",
    ]);
    let lock = std::fs::read_to_string(lock_of(&sb.work())).unwrap();
    assert!(
        lock.ends_with(&format!(
            "release = \"9.30.0.2_cuda12+jit\"\n\n[platform.linux-x86_64]\npip = \"nvidia-cudnn-jit-cu12==9.30.0.2\"\nwheel = \"{}\"\nsha256 = \"{sha}\"\n",
            whl.file_name().unwrap().to_string_lossy()
        )),
        "{lock}"
    );
    let cur = sb.run(["current"]).ok();
    assert!(
        cur.stdout().contains("→ 9.30.0.2_cuda12+jit")
            && cur.stdout().contains("locked: 9.30.0.2_cuda12+jit"),
        "{}",
        cur.describe()
    );
    // A lock damaged by hand: install says to lock again, and lock does
    // write it anew (the same bytes as before the damage).
    let path = lock_of(&sb.work());
    let good = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, good.replace(&sha, "zz")).unwrap();
    sb.run(["install"]).code_is(4).stderr_has(&[
        "field 'platform.linux-x86_64.sha256' is not a SHA-256",
        "help: write it again with `cudnnm lock`",
    ]);
    sb.run(["lock"]).ok().stderr_has(&[&format!(
        "warning: the lock file '{}' could not be read (",
        path.display()
    )]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), good);
    sb.run(["install"]).ok();
}

/// The catalog's release installed from another package (the JIT-only
/// wheel) is "already installed", and the message says which package it
/// The JIT build of a release is another release: with it installed,
/// `install VERSION` installs the full build (the catalog's package) beside
/// it, and `install VERSION+jit` finds the JIT build already installed.
#[test]
fn the_full_build_installs_beside_the_jit_build_of_the_same_release() {
    let (sb, links) = offline_sandbox();
    let whl = fixtures::wheel("nvidia_cudnn_jit_cu12", "9.30.0.1", false).write(sb.root());
    sb.run(["install".as_ref(), whl.as_os_str()]).ok();
    fixtures::wheel("nvidia_cudnn_cu12", "9.30.0.1", false).write(&links);
    sb.run(["install", "9.30.0.1"]).ok().stderr_has(&[
        "installing pip:nvidia-cudnn-cu12==9.30.0.1",
        "installed cuDNN 9.30.0.1 for CUDA 12",
    ]);
    assert!(receipt(&sb.home(), "9.30.0.1_cuda12").is_some());
    assert!(receipt(&sb.home(), "9.30.0.1_cuda12+jit").is_some());
    sb.run(["install", "pip:nvidia-cudnn-jit-cu12==9.30.0.1"])
        .ok()
        .stderr_has(&["cuDNN 9.30.0.1_cuda12+jit is already installed at '"]);
    // `list` marks the build the default and the pin select, as `which` does:
    // the full one for a plain spec, the JIT one for `+jit`.
    let marked = |spec: &str| {
        sb.run(["default", spec]).ok();
        sb.run(["pin", spec]).ok();
        let listed: serde_json::Value =
            serde_json::from_str(&sb.run(["list", "--json"]).ok().stdout()).unwrap();
        let rows = listed.as_array().unwrap().clone();
        let of = |key: &str| {
            rows.iter()
                .filter(|r| r[key] == true)
                .map(|r| r["id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        (of("default"), of("pinned"))
    };
    let full = vec!["9.30.0.1_cuda12".to_string()];
    let jit = vec!["9.30.0.1_cuda12+jit".to_string()];
    assert_eq!(marked("9.30.0.1_cuda12"), (full.clone(), full));
    assert_eq!(marked("9.30.0.1_cuda12+jit"), (jit.clone(), jit));
}

/// A user catalog with NVIDIA archives of 9.12.0.46 for Linux and Windows
/// (as `manifest refresh` writes from NVIDIA's `redistrib_9.12.0.json`; the
/// hashes are stand-ins): a release published both ways.
fn catalog_with_9_12_archives(home: &Path) -> (String, String) {
    let (linux, windows) = ("ab".repeat(32), "cd".repeat(32));
    std::fs::create_dir_all(home).unwrap();
    let entry = |plat: &str, ext: &str, sha: &str| {
        format!(
            "[[archive]]\nversion = \"9.12.0.46\"\ncuda = \"12\"\nplatform = \"{plat}\"\npath = \"cudnn/redist/cudnn/{plat}/cudnn-{plat}-9.12.0.46_cuda12-archive.{ext}\"\nsize = 1000\nsource = \"test\"\nhashes = [{{ sha256 = \"{sha}\", source = \"test\" }}]\n"
        )
    };
    std::fs::write(
        home.join("catalog.toml"),
        format!(
            "schema = 1\n\n{}\n{}",
            entry("linux-x86_64", "tar.xz", &linux),
            entry("windows-x86_64", "zip", &windows)
        ),
    )
    .unwrap();
    (linux, windows)
}

/// A release installed from the real `nvidia-cudnn-jit-cu12` wheel, whose
/// version the catalog also has as an NVIDIA archive: the lock records, for
/// this platform, the wheel it was installed from (so `install --locked`
/// here finds it installed), and the catalog's archive for the others.
#[test]
fn lock_records_the_wheel_the_installed_release_came_from_not_the_catalogs_archive() {
    let mut sb = Sandbox::new();
    // An index without the package: no wheel for other platforms is added
    // (`lock` asks the index for them; see tests/it/index.rs).
    let index = crate::common::http::TestServer::start();
    sb.set_env("CUDNNM_INDEX_URL", index.url("simple/"));
    let (linux, windows) = catalog_with_9_12_archives(&sb.home());
    let whl = common::real_wheel("nvidia_cudnn_jit_cu12-9.12.0.46");
    let sha = sha256_bytes(&std::fs::read(&whl).unwrap()).to_string();
    sb.run(["install".as_ref(), whl.as_os_str()]).ok();
    sb.run(["pin", "9.12.x"]).ok();
    // The JIT build's lock: never the full build's archives (the catalog's
    // Linux and Windows ones here), but NVIDIA's JIT archive for Arm servers.
    sb.run(["lock"]).ok().stderr_has(&[
        "locking cuDNN 9.12.0.46_cuda12+jit, the release the pin 9.12.x selects here (installed)",
        "for linux-sbsa, linux-x86_64",
    ]);
    let lock = std::fs::read_to_string(lock_of(&sb.work())).unwrap();
    let linux_at = lock.find("[platform.linux-x86_64]").expect("linux entry");
    assert_eq!(
        &lock[linux_at..],
        format!(
            "[platform.linux-x86_64]\npip = \"nvidia-cudnn-jit-cu12==9.12.0.46\"\nwheel = \"{}\"\nsha256 = \"{sha}\"\n",
            whl.file_name().unwrap().to_string_lossy()
        )
    );
    assert!(!lock.contains(&linux) && !lock.contains(&windows), "{lock}");
    assert!(!lock.contains("windows-x86_64"), "{lock}");
    assert!(
        lock.contains(
            "sha256 = \"97a7752cb71acb41b6da553e2f376516a5464aea82ccf49cc6a4748a68ec1a76\""
        ),
        "the JIT archive for linux-sbsa (redistrib_9.12.0.json): {lock}"
    );
    sb.run(["install", "--locked"]).ok().stderr_has(&[
        "cuDNN 9.12.0.46_cuda12+jit is already installed at '",
        "as locked in '",
    ]);
    let cur = sb.run(["current"]).ok();
    assert!(
        cur.stdout().contains(&format!(
            "locked: 9.12.0.46_cuda12+jit in '{}'\n",
            lock_of(&sb.work()).display()
        )),
        "{}",
        cur.describe()
    );
}

/// A release imported from a local archive: locked as the catalog archive
/// when it is those bytes; refused, naming the file, when nothing another
/// machine can fetch gives them back.
#[test]
fn lock_takes_a_local_archive_only_when_the_catalog_has_its_bytes() {
    let mut sb = Sandbox::new();
    let p = Project::new(&sb.root().join("fx"));
    sb.set_env("CUDNNM_MIRROR", p.server.url("compute/"));
    p.refresh(&sb);
    // The catalog's own archive, downloaded by hand and installed as a file.
    let dl = sb.root().join("dl");
    std::fs::create_dir_all(&dl).unwrap();
    let name = p.files[0].path.rsplit('/').next().unwrap();
    let file = dl.join(name);
    std::fs::write(&file, &p.files[0].bytes).unwrap();
    sb.run([std::ffi::OsStr::new("install"), file.as_os_str()])
        .ok();
    sb.run(["pin", "9.40.x"]).ok();
    sb.run(["lock"]).ok();
    let lock = std::fs::read_to_string(lock_of(&sb.work())).unwrap();
    let rel = p.files[0].path.strip_prefix("compute/").unwrap();
    assert!(
        lock.contains(&format!(
            "[platform.linux-x86_64]\nurl = \"https://developer.download.nvidia.com/compute/{rel}\"\npath = \"{rel}\"\nsha256 = \"{}\"\n",
            p.files[0].sha
        )),
        "{lock}"
    );
    sb.run(["install", "--locked"])
        .ok()
        .stderr_has(&["already installed"]);
    // A rebuilt archive of the same release: no catalog entry or pip
    // requirement gives these bytes back, so nothing is locked.
    let mut other = fixtures::redist_linux(OLD, "12");
    other.file(
        &format!("cudnn-linux-x86_64-{OLD}_cuda12-archive/EXTRA"),
        "a rebuilt archive",
    );
    std::fs::create_dir_all(sb.root().join("mine")).unwrap();
    let mine = other.write(&sb.root().join("mine"));
    sb.run([
        std::ffi::OsStr::new("install"),
        mine.as_os_str(),
        std::ffi::OsStr::new("--force"),
    ])
    .ok();
    let before = std::fs::read(lock_of(&sb.work())).unwrap();
    sb.run(["lock"]).code_is(8).stderr_has(&[
        &format!(
            "error: cuDNN 9.40.1.3_cuda12 is installed here from the local archive '{}', which no catalog archive or pip requirement gives back",
            mine.file_name().unwrap().to_string_lossy()
        ),
        "help: a lock records bytes another machine can fetch: install it from there with `cudnnm install 9.40.1.3_cuda12 --force` and run `cudnnm lock` again, or lock without it (`cudnnm uninstall 9.40.1.3_cuda12`, then `cudnnm lock` locks the catalog's pick)",
    ]);
    // The lock to run again is the one given: its platforms, its CUDA, its
    // index (without the credentials in its URL).
    let r = sb.run([
        "lock",
        "--platform",
        "linux-x86_64",
        "--platform",
        "windows-x86_64",
        "--cuda",
        "12",
        "--index-url",
        "https://me:secret@pypi.example/simple/",
    ])
    .code_is(8)
    .stderr_has(&[
        "and run `cudnnm lock --platform linux-x86_64 --platform windows-x86_64 --index-url https://pypi.example/simple/ --cuda 12` again",
    ])
    .stderr_has(&["help: "]);
    assert!(!r.stderr().contains("secret"), "{}", r.describe());
    assert_eq!(
        std::fs::read(lock_of(&sb.work())).unwrap(),
        before,
        "the lock is left as it was"
    );
}

/// `exec` and `env` for a pin whose lock names a release not installed
/// here: the help is the bare `install` that installs exactly the locked
/// bytes (with the home it needs), never another package's wheel; `current`
/// says how the lock and what the pin selects here differ.
#[test]
fn a_locked_release_not_installed_is_installed_by_a_bare_install() {
    let mut sb = Sandbox::new();
    let links = sb.root().join("links");
    std::fs::create_dir_all(&links).unwrap();
    fixtures::wheel("nvidia_cudnn_jit_cu12", "9.30.0.1", false).write(&links);
    offline_pip(&mut sb, &links);
    sb.run(["pin", "9.30.x", "--force"]).ok();
    // Locked from what pip fetches (nothing installed): the catalog's PyPI
    // package is nvidia-cudnn-cu12; the lock names the jit package's wheel.
    std::fs::write(
        lock_of(&sb.work()),
        format!(
            "pin = \"9.30.x\"\nrelease = \"9.30.0.1_cuda12\"\n\n[platform.linux-x86_64]\npip = \"nvidia-cudnn-jit-cu12==9.30.0.1\"\nwheel = \"nvidia_cudnn_jit_cu12-9.30.0.1-py3-none-manylinux2014_x86_64.whl\"\nsha256 = \"{}\"\n",
            sha256_bytes(
                &std::fs::read(
                    links.join("nvidia_cudnn_jit_cu12-9.30.0.1-py3-none-manylinux2014_x86_64.whl")
                )
                .unwrap()
            )
        ),
    )
    .unwrap();
    let lock = lock_of(&sb.work());
    // Another home than the one cudnnm finds by itself: the command names it.
    let home = sb.home();
    let run_elsewhere = |args: &[&str]| {
        let mut c = sb.command();
        c.env_remove("CUDNNM_HOME")
            .arg("--home")
            .arg(&home)
            .args(args);
        common::Run {
            args: args.iter().map(Into::into).collect(),
            out: common::output(&mut c),
            root: sb.root().to_path_buf(),
        }
    };
    let help = format!(
        "help: install the release the lock '{}' names (9.30.0.1_cuda12+jit) with `cudnnm --home {} install`",
        lock.display(),
        home.display()
    );
    for args in [&["exec", "--", "true"][..], &["env", "--shell", "bash"][..]] {
        let r = run_elsewhere(args).code_is(3).stderr_has(&[
            "error: cuDNN 9.30.x is not installed (asked for by '",
            &help,
        ]);
        assert!(!r.stderr().contains("pip:"), "{}", r.describe());
    }
    // `use` without a spec takes the pin, and leads to the same install.
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    let r = sb
        .run(["use".as_ref(), "--cuda-root".as_ref(), tk.as_os_str()])
        .code_is(3)
        .stderr_has(&[
            "error: cuDNN 9.30.x is not installed",
            &format!(
                "help: install the release the lock '{}' names (9.30.0.1_cuda12+jit) with `cudnnm install`",
                lock.display()
            ),
        ]);
    assert!(!r.stderr().contains("pip:"), "{}", r.describe());
    sb.run(["current"]).ok().stdout_has(&[
        "locked: 9.30.0.1_cuda12+jit in '",
        "(not installed: `cudnnm install` installs it)",
    ]);
    // As the help says: the locked wheel, and exec runs.
    sb.run(["install"]).ok();
    sb.run(["exec", "--", "true"]).ok();
    sb.run(["current"])
        .ok()
        .stdout_has(&["locked: 9.30.0.1_cuda12+jit in '"]);
    // A newer match installed besides: exec takes it, and current says the
    // lock is not what the pin selects here.
    let newer = fixtures::wheel("nvidia_cudnn_jit_cu12", "9.30.0.5", false).write(sb.root());
    sb.run(["install".as_ref(), newer.as_os_str()]).ok();
    sb.run(["current"]).ok().stdout_has(&[
        "→ 9.30.0.5_cuda12+jit",
        "locked: 9.30.0.1_cuda12+jit in '",
        "(not what the pin selects here: 9.30.0.5_cuda12+jit, the newest installed match, is what exec, env and use take; `cudnnm lock` locks 9.30.0.5_cuda12+jit, or `cudnnm pin 9.30.0.1_cuda12+jit` pins the locked release)",
    ]);
}

/// The files in `home`'s download cache (`downloads/<sha256>`, no sidecars).
fn cached_files(home: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(home.join("downloads"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && !n.ends_with(".toml"))
        .collect();
    out.sort();
    out
}

/// A wheel installed from a renamed file (`Copy of ….whl`, as a browser or
/// a file manager names a second copy) is locked as what its METADATA says
/// it is: the PyPI requirement and the canonical wheel name, which a fresh
/// home's pip then fetches and installs with `install --locked`.
#[test]
fn lock_takes_the_requirement_from_the_wheels_metadata_not_its_file_name() {
    let mut sb = Sandbox::new();
    let links = sb.root().join("links");
    std::fs::create_dir_all(&links).unwrap();
    let canonical = fixtures::wheel("nvidia_cudnn_jit_cu12", "9.30.0.1", false).write(&links);
    let sha = sha256_bytes(&std::fs::read(&canonical).unwrap()).to_string();
    let canonical_name = canonical
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    offline_pip(&mut sb, &links);
    let copy = sb.root().join(format!(
        "Copy of {} (1).whl",
        canonical_name.strip_suffix(".whl").unwrap()
    ));
    std::fs::copy(&canonical, &copy).unwrap();
    sb.run(["install".as_ref(), copy.as_os_str()]).ok();
    let r = receipt(&sb.home(), "9.30.0.1_cuda12+jit").unwrap();
    assert!(
        r.contains("[source.dist]\nname = \"nvidia-cudnn-jit-cu12\"\nversion = \"9.30.0.1\"\ntags = [\"py3-none-manylinux2014_x86_64\"]\n"),
        "{r}"
    );
    sb.run(["pin", "9.30.x", "--force"]).ok();
    sb.run(["lock"]).ok();
    let lock = std::fs::read_to_string(lock_of(&sb.work())).unwrap();
    assert!(
        lock.ends_with(&format!(
            "[platform.linux-x86_64]\npip = \"nvidia-cudnn-jit-cu12==9.30.0.1\"\nwheel = \"{canonical_name}\"\nsha256 = \"{sha}\"\n"
        )),
        "{lock}"
    );
    assert!(!lock.to_lowercase().contains("copy of"), "{lock}");
    // A teammate's fresh home: pip fetches that requirement, the hash holds.
    let mut sb2 = Sandbox::new();
    offline_pip(&mut sb2, &links);
    for f in [".cudnn-version", ".cudnn-version.lock"] {
        std::fs::copy(sb.work().join(f), sb2.work().join(f)).unwrap();
    }
    sb2.run(["install", "--locked"])
        .ok()
        .stderr_has(&["installed cuDNN 9.30.0.1 for CUDA 12"]);
    assert!(
        receipt(&sb2.home(), "9.30.0.1_cuda12+jit")
            .unwrap()
            .contains(&sha)
    );
}

/// A wheel renamed to say another version, imported with --force as what
/// its METADATA says: the lock's requirement names the release installed,
/// never the version in the file name.
#[test]
fn a_wheel_renamed_to_another_version_is_locked_as_the_release_it_is() {
    let (sb, links) = offline_sandbox();
    let real = fixtures::wheel("nvidia_cudnn_jit_cu12", "9.30.0.1", false).write(sb.root());
    let renamed = links.join("nvidia_cudnn_jit_cu12-9.30.0.5-py3-none-manylinux2014_x86_64.whl");
    std::fs::rename(&real, &renamed).unwrap();
    sb.run(["install".as_ref(), renamed.as_os_str(), "--force".as_ref()])
        .ok()
        .stderr_has(&["imported as 9.30.0.1 (--force)"]);
    sb.run(["pin", "9.30.x", "--force"]).ok();
    sb.run(["lock"]).ok();
    let lock = std::fs::read_to_string(lock_of(&sb.work())).unwrap();
    assert!(
        lock.contains("release = \"9.30.0.1_cuda12+jit\"\n")
            && lock.contains(
                "pip = \"nvidia-cudnn-jit-cu12==9.30.0.1\"\nwheel = \"nvidia_cudnn_jit_cu12-9.30.0.1-py3-none-manylinux2014_x86_64.whl\"\n"
            ),
        "{lock}"
    );
    assert!(!lock.contains("9.30.0.5"), "{lock}");
}

/// A receipt written before cudnnm recorded the wheel's METADATA, of a
/// renamed wheel file: `lock` refuses to guess a requirement from the name
/// (exit 8), names the file and the reinstall from PyPI that fixes it, and
/// leaves the lock as it was.
#[test]
fn lock_refuses_a_requirement_an_old_receipts_renamed_wheel_cannot_give() {
    let (sb, _) = offline_sandbox();
    let real = fixtures::wheel("nvidia_cudnn_jit_cu12", "9.30.0.1", false).write(sb.root());
    let copy = sb
        .root()
        .join("Copy of nvidia_cudnn_jit_cu12-9.30.0.1-py3-none-manylinux2014_x86_64 (1).whl");
    std::fs::rename(&real, &copy).unwrap();
    sb.run(["install".as_ref(), copy.as_os_str()]).ok();
    // As an older cudnnm wrote it: no [source.dist].
    let strip_dist = |version: &str| {
        let path = sb
            .home()
            .join(format!("store/cuda-12/{version}/receipt.toml"));
        let text = std::fs::read_to_string(&path).unwrap();
        let start = text.find("\n[source.dist]").expect("dist recorded");
        let end = text[start + 1..]
            .find("\n[")
            .map_or(text.len(), |i| start + 1 + i);
        std::fs::write(&path, format!("{}{}", &text[..start], &text[end..])).unwrap();
    };
    strip_dist("9.30.0.1+jit");
    sb.run(["pin", "9.30.x", "--force"]).ok();
    // Its files are the JIT package's: that one is named.
    sb.run(["lock"]).code_is(8).stderr_has(&[
        "error: cuDNN 9.30.0.1_cuda12+jit is installed here from the wheel file 'Copy of nvidia_cudnn_jit_cu12-9.30.0.1-py3-none-manylinux2014_x86_64 (1).whl', whose name does not say which pip requirement gives it back",
        "help: reinstall it from PyPI by name with `cudnnm install pip:nvidia-cudnn-jit-cu12==9.30.0.1 --force`, then run `cudnnm lock` again",
    ]);
    assert!(!lock_of(&sb.work()).exists(), "no lock was written");
    // A full package's files: cudnnm cannot tell which, and names both.
    let full = fixtures::wheel("nvidia_cudnn_cu12", "9.30.0.2", false).write(sb.root());
    let copy = sb.root().join("wheel (2).whl");
    std::fs::rename(&full, &copy).unwrap();
    sb.run([
        "install".as_ref(),
        copy.as_os_str(),
        "--cuda".as_ref(),
        "12".as_ref(),
    ])
    .ok();
    strip_dist("9.30.0.2");
    sb.run(["lock"]).code_is(8).stderr_has(&[
        "error: cuDNN 9.30.0.2_cuda12 is installed here from the wheel file 'wheel (2).whl'",
        "help: reinstall it from PyPI by name with `cudnnm install pip:nvidia-cudnn-cu12==9.30.0.2 --force` (the full package) or `cudnnm install pip:nvidia-cudnn-jit-cu12==9.30.0.2 --force` (the JIT-only package) — cudnnm cannot tell which one its files came from, then run `cudnnm lock` again",
    ]);
}

/// `lock` of a release published only on PyPI and not installed keeps the
/// wheel pip fetched in the download cache (said before fetching): `cache`
/// counts it, a second `lock` runs no pip, and the bare `install` that
/// follows imports it from there without pip.
#[test]
fn lock_keeps_the_wheel_it_fetched_for_install_to_use() {
    let mut sb = Sandbox::new();
    let links = sb.root().join("links");
    std::fs::create_dir_all(&links).unwrap();
    let wheel = fixtures::wheel("nvidia_cudnn_cu12", "9.30.0.1", false).write(&links);
    let sha = sha256_bytes(&std::fs::read(&wheel).unwrap()).to_string();
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    offline_pip(&mut sb, &links);
    sb.run(["pin", "9.30.x", "--force"]).ok();
    let out = sb.run(["lock"]).ok().stderr_has(&[
        "lock: fetching nvidia-cudnn-cu12==9.30.0.1 with pip to record its SHA-256 (kept in the download cache)",
        &format!("lock: kept {name} ("),
    ]);
    let err = out.stderr();
    assert!(
        err.find("lock: fetching").unwrap() < err.find("lock: kept").unwrap(),
        "said before fetching: {err}"
    );
    assert_eq!(cached_files(&sb.home()), vec![sha.clone()]);
    let side = std::fs::read_to_string(sb.home().join(format!("downloads/{sha}.toml"))).unwrap();
    assert!(
        side.contains(&format!("name = \"{name}\""))
            && side.contains("url = \"pip:nvidia-cudnn-cu12==9.30.0.1\""),
        "{side}"
    );
    sb.run(["cache"])
        .ok()
        .stdout_has(&["9.30.0.1_cuda12 (linux-x86_64)", &name]);
    // pip cannot fetch anything now: what follows uses the cache.
    std::fs::remove_dir_all(&links).unwrap();
    sb.run(["lock"]).ok().stderr_has(&[
        &format!(
            "lock: {name} is in the download cache; recording its SHA-256 (nothing downloaded)"
        ),
        "lock unchanged",
    ]);
    sb.run(["install"]).ok().stderr_has(&[
        &format!("using {name} from the download cache"),
        "installed cuDNN 9.30.0.1 for CUDA 12",
    ]);
    assert!(
        receipt(&sb.home(), "9.30.0.1_cuda12")
            .unwrap()
            .contains(&sha)
    );
}

/// A release installed from a folder holding an unpacked
/// `nvidia-cudnn-jit-cu12` wheel cannot be locked (no archive hash), and
/// the reinstall `lock` suggests is that package — told by the folder's
/// dist-info, or without one by the JIT layout — never the larger
/// `nvidia-cudnn-cu12`.
#[test]
fn lock_suggests_the_package_an_unpacked_wheel_folder_came_from() {
    let (sb, links) = offline_sandbox();
    sb.run(["pin", "9.30.x", "--force"]).ok();
    let unpack = |fx: fixtures::Fixture, to: &str| {
        let dir = fx.write_dir(&sb.root().join("unpacked"));
        let folder = sb.root().join(to);
        std::fs::rename(dir, &folder).unwrap();
        folder
    };
    let jit = "help: a lock records bytes another machine can fetch: install it from PyPI with `cudnnm install pip:nvidia-cudnn-jit-cu12==9.30.0.1 --force` and run `cudnnm lock` again";
    // With its dist-info, as `unzip` leaves a wheel.
    let with_info = unpack(
        fixtures::wheel("nvidia_cudnn_jit_cu12", "9.30.0.1", false),
        "jit-folder",
    );
    sb.run(["install".as_ref(), with_info.as_os_str()]).ok();
    let r = sb.run(["lock"]).code_is(8).stderr_has(&[
        "error: cuDNN 9.30.0.1_cuda12+jit is installed here from the local folder 'cudnn_jit'",
        jit,
    ]);
    assert!(
        !r.stderr().contains("pip:nvidia-cudnn-cu12"),
        "{}",
        r.describe()
    );
    // Without it: the JIT layout says which package.
    let mut bare = fixtures::wheel("nvidia_cudnn_jit_cu12", "9.30.0.1", false);
    bare.remove(".dist-info/METADATA");
    let no_info = unpack(bare, "jit-files");
    sb.run([
        "install".as_ref(),
        no_info.as_os_str(),
        "--cuda".as_ref(),
        "12".as_ref(),
        "--force".as_ref(),
    ])
    .ok();
    let r = sb.run(["lock"]).code_is(8).stderr_has(&[jit]);
    assert!(
        !r.stderr().contains("pip:nvidia-cudnn-cu12"),
        "{}",
        r.describe()
    );
    // Alone in a home, the folder is known by its headers only (9.30.0):
    // the requirement matches PyPI's four-part versions as a prefix.
    let mut fresh = Sandbox::new();
    offline_pip(&mut fresh, &links);
    fresh.run(["pin", "9.30.x", "--force"]).ok();
    fresh
        .run([
            "install".as_ref(),
            no_info.as_os_str(),
            "--cuda".as_ref(),
            "12".as_ref(),
        ])
        .ok()
        .stderr_has(&["installed cuDNN 9.30.0 for CUDA 12"]);
    fresh
        .run(["lock"])
        .code_is(8)
        .stderr_has(&["`cudnnm install pip:nvidia-cudnn-jit-cu12==9.30.0.N --force` (`pip index versions nvidia-cudnn-jit-cu12` lists the build numbers N)"]);
    // `install pip:` takes exact versions only: a prefix is refused before pip runs.
    fresh
        .run(["install", "pip:nvidia-cudnn-jit-cu12==9.30.0.*", "--force"])
        .code_is(2)
        .stderr_has(&["is not a cuDNN wheel requirement"]);
    // Followed with the full version, it works: PyPI's 9.30.0.1, which lock then records.
    fixtures::wheel("nvidia_cudnn_jit_cu12", "9.30.0.1", false).write(&links);
    fresh
        .run(["install", "pip:nvidia-cudnn-jit-cu12==9.30.0.1", "--force"])
        .ok();
    fresh
        .run(["lock"])
        .ok()
        .stderr_has(&["locking cuDNN 9.30.0.1_cuda12"]);
}

/// The locked release installed, then one of its store files edited: a
/// bare `install` and `install --locked` do not call it done (exit 4,
/// naming the release folder and the file), `install --force` imports the
/// locked bytes again, and without a lock the edit goes unremarked as
/// before.
#[test]
fn a_locked_install_fails_when_the_installed_files_were_changed() {
    let mut sb = Sandbox::new();
    let links = sb.root().join("links");
    std::fs::create_dir_all(&links).unwrap();
    let wheel = fixtures::wheel("nvidia_cudnn_cu12", "9.30.0.1", false).write(&links);
    let sha = sha256_bytes(&std::fs::read(&wheel).unwrap()).to_string();
    offline_pip(&mut sb, &links);
    sb.run(["pin", "9.30.x", "--force"]).ok();
    sb.run(["lock"]).ok();
    sb.run(["install"]).ok();
    sb.run(["install", "--locked"])
        .ok()
        .stderr_has(&["already installed"]);
    let dir = sb.home().join("store/cuda-12/9.30.0.1");
    let header = dir.join("include/cudnn_version.h");
    let size = std::fs::metadata(&header).unwrap().len();
    let mut perm = std::fs::metadata(&header).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    std::fs::set_permissions(&header, perm).unwrap();
    let mut text = std::fs::read(&header).unwrap();
    text.extend_from_slice(b"x\n");
    std::fs::write(&header, &text).unwrap();
    let why = format!(
        "'include/cudnn_version.h' holds {} bytes, not the {size} recorded",
        size + 2
    );
    for (verb, args) in [
        ("install --locked", &["install", "--locked"][..]),
        ("install", &["install"][..]),
    ] {
        let r = sb.run(args).code_is(4).stderr_has(&[
            &format!(
                "error: {verb}: 9.30.0.1_cuda12 at '{}' is not the locked bytes any more: 1 file changed since it was installed: {why}",
                dir.display()
            ),
            &format!("help: `cudnnm install --force` imports the locked bytes (SHA-256 {sha}) again in its place"),
        ]);
        assert!(!r.stderr().contains("nothing to do"), "{}", r.describe());
    }
    sb.run(["verify"]).code_is(7);
    // As the help says: the locked bytes again, and all is well.
    sb.run(["install", "--force"]).ok();
    assert_eq!(
        std::fs::read(&header).unwrap().len() as u64,
        size,
        "the header is the locked one again"
    );
    sb.run(["install", "--locked"])
        .ok()
        .stderr_has(&["already installed", "as locked in '"]);
    sb.run(["verify"]).ok();
    // Without a lock, today's behaviour: an installed match is a no-op.
    std::fs::set_permissions(&header, {
        let mut p = std::fs::metadata(&header).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        p.set_readonly(false);
        p
    })
    .unwrap();
    std::fs::write(&header, &text).unwrap();
    std::fs::remove_file(lock_of(&sb.work())).unwrap();
    sb.run(["install"])
        .ok()
        .stderr_has(&["already installed", "nothing to do"]);
}

/// A user catalog listing `nvidia-cudnn-jit-cu12` 9.30.0.1 on PyPI, with
/// the SHA-256 PyPI publishes for its Linux wheel when `published` is given.
fn catalog_with_jit_wheel(home: &Path, published: Option<&str>) {
    let files = published.map_or(String::new(), |sha| {
        format!(
            "files = [{{ url = \"https://files.pythonhosted.org/packages/00/nvidia_cudnn_jit_cu12-9.30.0.1-py3-none-manylinux2014_x86_64.whl\", size = 1000, sha256 = \"{sha}\" }}]\n"
        )
    });
    std::fs::write(
        home.join("catalog.toml"),
        format!(
            "schema = 1\n\n[[wheel]]\npackage = \"nvidia-cudnn-jit-cu12\"\ncuda = \"12\"\nsource = \"test\"\nversions = [\"9.30.0.1\"]\n{files}"
        ),
    )
    .unwrap();
}

/// A re-zipped copy of a PyPI wheel (the same files, other archive bytes)
/// installed from a local file: `lock` refuses it when the catalog tells
/// the hash PyPI publishes (exit 8, both hashes, the reinstall from the
/// requirement), locks it with a warning when nothing tells it, and a
/// locked install that finds these bytes does not suggest locking them.
#[test]
fn lock_refuses_a_wheel_whose_bytes_are_not_the_ones_pypi_publishes() {
    let mut sb = Sandbox::new();
    let links = sb.root().join("links");
    std::fs::create_dir_all(&links).unwrap();
    let fx = fixtures::wheel("nvidia_cudnn_jit_cu12", "9.30.0.1", false);
    let canonical = fx.write(&links);
    let published = sha256_bytes(&std::fs::read(&canonical).unwrap()).to_string();
    offline_pip(&mut sb, &links);
    let mut rezipped = fx.clone();
    rezipped.entries.reverse();
    std::fs::create_dir_all(sb.root().join("mine")).unwrap();
    let local = rezipped.write(&sb.root().join("mine"));
    let mine = sha256_bytes(&std::fs::read(&local).unwrap()).to_string();
    assert_ne!(mine, published, "a re-zip gives other archive bytes");
    catalog_with_jit_wheel(&sb.home(), Some(&published));
    sb.run(["install".as_ref(), local.as_os_str()]).ok();
    sb.run(["pin", "9.30.x"]).ok();
    sb.run(["lock"]).code_is(8).stderr_has(&[
        &format!(
            "error: cuDNN 9.30.0.1_cuda12+jit is installed here from '{}' with SHA-256 {mine}, but the wheel PyPI publishes for nvidia-cudnn-jit-cu12==9.30.0.1 on linux-x86_64 has SHA-256 {published}",
            local.file_name().unwrap().to_string_lossy()
        ),
        "help: reinstall it from the PyPI requirement with `cudnnm install pip:nvidia-cudnn-jit-cu12==9.30.0.1 --force`, then run `cudnnm lock` again",
    ]);
    assert!(!lock_of(&sb.work()).exists(), "no lock was written");
    // Nothing tells PyPI's hash: locked, with a warning naming the file's.
    catalog_with_jit_wheel(&sb.home(), None);
    sb.run(["lock"]).ok().stderr_has(&[&format!(
        "warning: the lock's SHA-256 for linux-x86_64 ({mine}) is that of the local file '{}', and no catalog entry tells the one PyPI publishes for nvidia-cudnn-jit-cu12==9.30.0.1: a teammate's pip must fetch exactly those bytes",
        local.file_name().unwrap().to_string_lossy()
    )]);
    assert!(
        std::fs::read_to_string(lock_of(&sb.work()))
            .unwrap()
            .contains(&format!("sha256 = \"{mine}\"")),
    );
    // As the refusal's help says: the requirement's bytes, then lock.
    catalog_with_jit_wheel(&sb.home(), Some(&published));
    sb.run(["install", "pip:nvidia-cudnn-jit-cu12==9.30.0.1", "--force"])
        .ok();
    let r = sb.run(["lock"]).ok();
    assert!(!r.stderr().contains("warning:"), "{}", r.describe());
    assert!(
        std::fs::read_to_string(lock_of(&sb.work()))
            .unwrap()
            .contains(&format!("sha256 = \"{published}\"")),
    );
    // The re-zipped copy installed again: a locked install names it and
    // offers only the reinstall of the locked bytes, never `cudnnm lock`.
    sb.run(["install".as_ref(), local.as_os_str(), "--force".as_ref()])
        .ok();
    let r = sb.run(["install", "--locked"]).code_is(4).stderr_has(&[
        &format!(
            "error: install --locked: 9.30.0.1_cuda12+jit is installed from an archive with SHA-256 {mine}, not the archive with SHA-256 {published} the lock '"
        ),
        "help: `cudnnm install --force` replaces it with the locked bytes (no other machine can fetch the installed ones, so a lock of them would fail there)",
    ]);
    assert!(!r.stderr().contains("cudnnm lock"), "{}", r.describe());
}

/// A committed lock picks bytes, never a host: an archive entry whose
/// SHA-256 is not the catalog's, or whose URL is a host that is not
/// NVIDIA's for a release the catalog does not know, is refused before any
/// download, and the attacker's server is never asked.
#[test]
fn a_lock_naming_other_bytes_or_another_host_is_refused_before_any_download() {
    let mut sb = Sandbox::new();
    let p = Project::new(&sb.root().join("fx"));
    sb.set_env("CUDNNM_MIRROR", p.server.url("compute/"));
    p.refresh(&sb);
    sb.run(["pin", ">=9.40,<9.41", "--force"]).ok();
    sb.run(["lock"]).ok();
    let good = std::fs::read_to_string(lock_of(&sb.work())).unwrap();
    // The attacker's archive, on a host of theirs.
    let evil = TestServer::start();
    let evil_bytes = b"not NVIDIA's archive".to_vec();
    let evil_sha = cudnnm::hash::sha256_bytes(&evil_bytes).to_string();
    evil.file("evil/cudnn.tar.xz", evil_bytes.clone());
    let evil_url = evil.url("evil/cudnn.tar.xz").replace("http://", "https://");
    let rel = p.files[0].path.strip_prefix("compute/").unwrap();
    let nvidia_url = format!("https://developer.download.nvidia.com/compute/{rel}");
    // 1. Other bytes than the catalog publishes for the release: refused.
    let tampered = good
        .replacen(&nvidia_url, &evil_url, 1)
        .replacen(&p.files[0].sha, &evil_sha, 1)
        .replacen(&format!("path = \"{rel}\"\n"), "", 1);
    std::fs::write(lock_of(&sb.work()), &tampered).unwrap();
    sb.run(["install"]).code_is(4).stderr_has(&[
        "with another SHA-256 (",
        "than the catalog publishes; nothing was downloaded",
    ]);
    // 2. The real hash, from another host, on a machine whose catalog does
    // not know the release and with no mirror: refused too.
    let sb2 = Sandbox::new();
    std::fs::copy(
        sb.work().join(".cudnn-version"),
        sb2.work().join(".cudnn-version"),
    )
    .unwrap();
    let other_host =
        good.replacen(&nvidia_url, &evil_url, 1)
            .replacen(&format!("path = \"{rel}\"\n"), "", 1);
    std::fs::write(lock_of(&sb2.work()), &other_host).unwrap();
    sb2.run(["install"])
        .code_is(4)
        .stderr_has(&["from a host that is not NVIDIA's, of a release the catalog does not know"]);
    assert!(evil.requests().is_empty(), "{:?}", evil.requests().len());
    assert!(!sb.home().join("store/cuda-12/9.40.1.3").exists());
    assert!(!sb2.home().join("store/cuda-12/9.40.1.3").exists());
}

/// A `--cuda` the release is not built for: the example is the same `lock`
/// (every `--platform` given, the `--home` that reaches this home) with a
/// `--cuda` it is built for, never an `install`. The embedded catalog's
/// 9.28 is built for CUDA 12 and 13, its Windows-on-Arm wheels of 9.26 for
/// CUDA 13 only; nothing is fetched to say so.
#[test]
fn a_cuda_the_pin_is_not_built_for_gets_a_lock_example_as_given() {
    let sb = Sandbox::new();
    sb.run(["pin", "9.28", "--force"]).ok();
    // A home other than CUDNNM_HOME's, so the example must name it.
    let home = sb.root().join("other home").display().to_string();
    sb.run([
        "--home",
        &home,
        "lock",
        "--platform",
        "linux-x86_64",
        "--platform",
        "windows-x86_64",
        "--cuda",
        "11",
    ])
    .code_is(3)
    .stderr_has(&[
        "error: there is no CUDA 11 build of cuDNN 9.28",
        &format!(
            "e.g. `cudnnm --home '{home}' lock --platform linux-x86_64 --platform windows-x86_64 --cuda 13`"
        ),
    ]);
    sb.run(["pin", "9.26", "--force"]).ok();
    sb.run(["lock", "--platform", "windows-arm64", "--cuda", "12"])
        .code_is(3)
        .stderr_has(&[
            // Its CUDA 12 builds are for the other platforms.
            "error: there is no CUDA 12 build of cuDNN 9.26 for windows-arm64",
            "e.g. `cudnnm lock --platform windows-arm64 --cuda 13`",
        ]);
    assert!(!lock_of(&sb.work()).exists());
}
