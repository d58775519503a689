//! `cudnnm install VERSION` unpacking its archive while the download still
//! arrives, through the real binary against the loopback server: the server
//! holds a response part-way (`Route::hold`), and the test sees the members
//! already written under `store/.partial-*/.raw/` while the body is not
//! finished. Then what a streamed install leaves in every bad case: a
//! changed archive behind the same URL, hostile zips (local headers that
//! disagree with the central directory, a path escape, a duplicate), a
//! download cut or interrupted and resumed, and an archive that cannot be
//! streamed. Catalog entries are written by hand into `catalog.toml` with
//! the server's URL and the fixtures' SHA-256.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::fixtures::{self, Fixture, Item};
use common::http::{Gate, Route, TestServer};
use common::{Run, Sandbox};

const INSTALL: [&str; 6] = [
    "install",
    "9.1.0.70",
    "--cuda",
    "12",
    "--platform",
    "linux-x86_64",
];

/// A sandbox and a server; archives are served at `/<name>` and listed in
/// the home's `catalog.toml` as cuDNN 9.1.0.70 for CUDA 12, Linux.
struct Lab {
    sb: Sandbox,
    server: TestServer,
}

/// An archive as served.
struct Served {
    name: String,
    bytes: Vec<u8>,
    /// The SHA-256 the catalog publishes.
    sha: String,
}

impl Lab {
    fn new() -> Lab {
        Lab {
            sb: Sandbox::new(),
            server: TestServer::start(),
        }
    }

    /// Serves `bytes` as `name` (held after `hold` bytes when given) and
    /// lists it in the catalog with SHA-256 `sha` (default: its own).
    fn serve(
        &self,
        name: &str,
        bytes: Vec<u8>,
        sha: Option<&str>,
        hold: Option<(u64, Gate)>,
    ) -> Served {
        let sha = sha.map_or_else(|| sha256_hex(&bytes), str::to_string);
        self.server.route(
            name,
            Route {
                status: 200,
                body: bytes.clone(),
                content_type: "application/octet-stream".into(),
                hold,
                ..Default::default()
            },
        );
        std::fs::create_dir_all(self.sb.home()).unwrap();
        std::fs::write(
            self.sb.home().join("catalog.toml"),
            format!(
                "schema = 1\n[[archive]]\nversion = \"9.1.0.70\"\ncuda = \"12\"\nplatform = \"linux-x86_64\"\npath = \"{}\"\nsize = {}\nsource = \"test server\"\nhashes = [{{ sha256 = \"{sha}\", source = \"test\" }}]\n",
                self.server.url(name),
                bytes.len()
            ),
        )
        .unwrap();
        Served {
            name: name.to_string(),
            bytes,
            sha,
        }
    }

    fn spawn_install(&self) -> std::process::Child {
        self.sb
            .command()
            .args(INSTALL)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn downloads(&self) -> Vec<String> {
        names(&self.sb.home().join("downloads"))
    }

    /// Everything in the store folder (releases and `.partial-*` folders).
    fn store(&self) -> Vec<String> {
        names(&self.sb.home().join("store"))
    }

    fn receipt(&self) -> toml::Value {
        receipt_of(&self.sb)
    }
}

fn receipt_of(sb: &Sandbox) -> toml::Value {
    let p = sb.home().join("store/cuda-12/9.1.0.70/receipt.toml");
    toml::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

fn finish(child: std::process::Child, sb: &Sandbox) -> Run {
    Run {
        args: INSTALL.iter().map(Into::into).collect(),
        out: child.wait_with_output().unwrap(),
        root: sb.root().to_path_buf(),
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn sha256_hex(bytes: &[u8]) -> String {
    cudnnm::hash::sha256_bytes(bytes).to_string()
}

/// The `.raw` folder of the one `store/.partial-*` folder, once there is one.
fn raw_folder(sb: &Sandbox) -> Option<PathBuf> {
    std::fs::read_dir(sb.home().join("store"))
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(".partial-"))
        .map(|e| e.path().join(".raw"))
}

/// Waits (at most 30 s) until `path` holds exactly `bytes`.
#[track_caller]
fn wait_for_file(path: impl Fn() -> Option<PathBuf>, bytes: &[u8]) -> PathBuf {
    let start = Instant::now();
    loop {
        if let Some(p) = path()
            && std::fs::read(&p).is_ok_and(|b| b == bytes)
        {
            return p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no such file was written while the download was held"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The byte offset of a zip's central directory (from its end record; no comment).
fn central_directory_offset(zip: &[u8]) -> u64 {
    let e = &zip[zip.len() - 22..];
    assert_eq!(&e[..4], b"PK\x05\x06");
    u32::from_le_bytes(e[16..20].try_into().unwrap()) as u64
}

fn wheel() -> Fixture {
    fixtures::wheel("nvidia_cudnn_cu12", "9.1.0.70", false)
}

fn file_bytes<'a>(f: &'a Fixture, suffix: &str) -> &'a [u8] {
    f.entries
        .iter()
        .find_map(|(p, i)| match i {
            Item::File(b) if p.ends_with(suffix) => Some(b.as_slice()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no {suffix} in the fixture"))
}

fn written(f: &Fixture, dir: &Path) -> (String, Vec<u8>) {
    let p = f.write(dir);
    (
        p.file_name().unwrap().to_string_lossy().into_owned(),
        std::fs::read(&p).unwrap(),
    )
}

/// The receipt's file list (path, size, sha256 or link) without the times
/// (each file's `mtime_ns` is when this import wrote it).
fn files_of(r: &toml::Value) -> Vec<String> {
    r["file"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if let Some(t) = f.as_table_mut() {
                t.remove("mtime_ns");
            }
            f.to_string()
        })
        .collect()
}

/// What `install ARCHIVE` of the same bytes records: the reference a
/// streamed install must equal.
fn file_import_receipt(name: &str, bytes: &[u8]) -> toml::Value {
    let sb = Sandbox::new();
    let p = sb.root().join(name);
    std::fs::write(&p, bytes).unwrap();
    sb.run(["install".as_ref(), p.as_os_str()]).ok();
    receipt_of(&sb)
}

/// The receipt of a streamed install of `s`: its source and every file as a
/// file import of the same bytes records them.
#[track_caller]
fn assert_installed(lab: &Lab, s: &Served) {
    let r = lab.receipt();
    assert_eq!(r["version"].as_str(), Some("9.1.0.70"));
    assert_eq!(r["source"]["sha256"].as_str(), Some(s.sha.as_str()));
    assert_eq!(r["source"]["name"].as_str(), Some(s.name.as_str()));
    assert_eq!(r["source"]["size"].as_integer(), Some(s.bytes.len() as i64));
    assert_eq!(
        r["source"]["url"].as_str(),
        Some(lab.server.url(&s.name).as_str())
    );
    assert_eq!(
        files_of(&r),
        files_of(&file_import_receipt(&s.name, &s.bytes))
    );
    assert_eq!(lab.store(), vec!["cuda-12"], "no partial folder is left");
    let dir = lab.sb.home().join("store/cuda-12/9.1.0.70");
    assert_eq!(
        names(&dir)
            .into_iter()
            .filter(|n| n.starts_with('.'))
            .collect::<Vec<_>>(),
        Vec::<String>::new(),
        "no .raw or .busy in the release"
    );
    lab.sb.run(["verify", "--no-load"]).ok();
    assert_eq!(
        lab.downloads(),
        vec![s.sha.clone(), format!("{}.toml", s.sha)]
    );
}

#[test]
fn a_wheel_is_unpacked_while_its_body_is_still_arriving() {
    let lab = Lab::new();
    let f = wheel();
    let (name, bytes) = written(&f, lab.sb.root());
    let gate = Gate::default();
    // Everything but the central directory, then the server waits.
    let at = central_directory_offset(&bytes);
    let s = lab.serve(&name, bytes, None, Some((at, gate.clone())));
    let child = lab.spawn_install();
    gate.wait_reached();
    let header = file_bytes(&f, "include/cudnn_version.h");
    let lib = file_bytes(&f, "lib/libcudnn.so.9");
    let raw = || raw_folder(&lab.sb);
    wait_for_file(
        || raw().map(|r| r.join("nvidia/cudnn/include/cudnn_version.h")),
        header,
    );
    wait_for_file(
        || raw().map(|r| r.join("nvidia/cudnn/lib/libcudnn.so.9")),
        lib,
    );
    // The body has not all arrived: the download is still a partial file.
    assert_eq!(
        lab.downloads(),
        vec![format!(".lock-{}", s.sha), format!(".partial-{}", s.sha)]
    );
    assert_eq!(
        std::fs::metadata(
            lab.sb
                .home()
                .join("downloads")
                .join(format!(".partial-{}", s.sha))
        )
        .unwrap()
        .len(),
        at
    );
    gate.open();
    let run = finish(child, &lab.sb).ok();
    run.stderr_has(&[
        "unpacked while downloading",
        "installed cuDNN 9.1.0.70 for CUDA 12 (linux-x86_64)",
    ]);
    assert_installed(&lab, &s);
    let r = lab.receipt();
    let so9 = r["file"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str() == Some("lib/libcudnn.so.9"))
        .unwrap();
    assert_eq!(so9["sha256"].as_str(), Some(sha256_hex(lib).as_str()));
    assert_eq!(so9["size"].as_integer(), Some(lib.len() as i64));
    assert_eq!(lab.server.hits(&s.name), 1);
}

#[test]
fn a_changed_archive_behind_the_same_url_leaves_no_release_no_partial_folder_and_no_cached_file() {
    let lab = Lab::new();
    let good = wheel();
    let (name, good_bytes) = written(&good, lab.sb.root());
    let mut changed = wheel();
    changed.replace("include/cudnn_backend.h", b"/* changed upstream */\n");
    let dir = lab.sb.root().join("changed");
    std::fs::create_dir_all(&dir).unwrap();
    let (_, bytes) = written(&changed, &dir);
    assert_ne!(bytes, good_bytes);
    let gate = Gate::default();
    let at = central_directory_offset(&bytes);
    // The catalog still publishes the hash of the original.
    lab.serve(
        &name,
        bytes.clone(),
        Some(&sha256_hex(&good_bytes)),
        Some((at, gate.clone())),
    );
    let child = lab.spawn_install();
    gate.wait_reached();
    // The changed archive is being unpacked …
    wait_for_file(
        || raw_folder(&lab.sb).map(|r| r.join("nvidia/cudnn/include/cudnn_backend.h")),
        b"/* changed upstream */\n",
    );
    gate.open();
    // … and none of it stays once its hash is known.
    let run = finish(child, &lab.sb).code_is(4).stderr_has(&[
        &format!(
            "{name} from {} does not match its published SHA-256",
            lab.server.url(&name)
        ),
        &sha256_hex(&bytes),
    ]);
    assert_eq!(
        run.stderr()
            .lines()
            .filter(|l| l.starts_with("error:"))
            .count(),
        1,
        "{}",
        run.describe()
    );
    assert!(lab.store().is_empty(), "store: {:?}", lab.store());
    assert!(
        lab.downloads().is_empty(),
        "downloads: {:?}",
        lab.downloads()
    );
}

/// `bytes` with the first occurrence of `from` (a local header's name: local
/// headers come before the central directory) replaced by `to`.
fn patch_local_name(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let i = bytes
        .windows(from.len())
        .position(|w| w == from.as_bytes())
        .unwrap_or_else(|| panic!("{from} not in the archive"));
    assert!((i as u64) < central_directory_offset(bytes));
    let mut out = bytes.to_vec();
    out[i..i + to.len()].copy_from_slice(to.as_bytes());
    out
}

#[test]
fn hostile_zips_served_over_http_are_refused_with_exit_4_and_leave_no_release() {
    let f = wheel();
    let tmp = Sandbox::new();
    let (name, bytes) = written(&f, tmp.root());
    let header = "nvidia/cudnn/include/cudnn_version.h";
    let cases: Vec<(&str, Vec<u8>, Vec<String>)> = vec![
        (
            "a local header naming another file than the central directory",
            patch_local_name(&bytes, header, "nvidia/cudnn/include/cudnn_versiom.h"),
            vec![
                format!(
                    "error: cannot import '{name}': member '{header}' is in the central directory but has no local header"
                ),
                "local file headers and its central directory disagree".into(),
            ],
        ),
        (
            "a path escape in a local header only",
            patch_local_name(&bytes, "nvidia/__init__.py", "../../../e/init.py"),
            vec![format!(
                "error: cannot import '{name}': entry '../../../e/init.py' has a '..' component"
            )],
        ),
        (
            "one name twice",
            {
                let d = tmp.root().join("dup");
                std::fs::create_dir_all(&d).unwrap();
                let p = f.write_zip_renaming(&d, "cudnn_adv.h", "cudnn_cnn.h");
                std::fs::read(p).unwrap()
            },
            vec![format!(
                "error: cannot import '{name}': entry 'nvidia/cudnn/include/cudnn_cnn.h' appears twice"
            )],
        ),
    ];
    for (what, hostile, needles) in cases {
        let lab = Lab::new();
        let s = lab.serve(&name, hostile, None, None);
        let mut all: Vec<&str> = needles.iter().map(String::as_str).collect();
        all.push(&name);
        all.push("help:");
        let run = lab.sb.run(INSTALL).code_is(4).stderr_has(&all);
        assert_eq!(
            run.stderr()
                .lines()
                .filter(|l| l.starts_with("error:"))
                .count(),
            1,
            "{what}\n{}",
            run.describe()
        );
        assert!(lab.store().is_empty(), "{what}: store {:?}", lab.store());
        assert!(!lab.sb.home().join("e").exists(), "{what}: nothing escaped");
        assert!(!lab.sb.root().join("e").exists(), "{what}: nothing escaped");
        // The download verified, so the cache keeps it as for any archive
        // an import refuses; `cudnnm cache clean` removes it.
        assert_eq!(
            lab.downloads(),
            vec![s.sha.clone(), format!("{}.toml", s.sha)],
            "{what}"
        );
    }
}

#[test]
fn a_cut_streaming_download_resumes_from_the_bytes_on_disk_and_installs_them() {
    let lab = Lab::new();
    let (name, bytes) = written(&wheel(), lab.sb.root());
    let half = (bytes.len() / 2) as u64;
    let s = lab.serve(&name, bytes, None, None);
    lab.server.edit(&name, |r| {
        r.cut_after = half;
        r.cut_times = 1;
        r.fail_status = 503;
        r.fail_times = 100;
    });
    lab.sb.run(INSTALL).code_is(6).stderr_has(&[&format!(
        "interrupted after {half} of {} bytes",
        s.bytes.len()
    )]);
    assert!(lab.store().is_empty(), "store: {:?}", lab.store());
    assert_eq!(
        lab.downloads(),
        vec![format!(".lock-{}", s.sha), format!(".partial-{}", s.sha)]
    );

    lab.server.edit(&name, |r| r.fail_times = 0);
    lab.sb
        .run(INSTALL)
        .ok()
        .stderr_has(&["unpacked while downloading"]);
    let reqs = lab.server.requests_for(&name);
    assert_eq!(
        reqs.last().unwrap().range.as_deref(),
        Some(format!("bytes={half}-").as_str()),
        "only the second half came over the network"
    );
    // The unpacked bytes equal the verified archive's only if the first half
    // was read from the partial file.
    assert_installed(&lab, &s);
}

#[cfg(unix)]
#[test]
fn ctrl_c_during_a_streaming_download_keeps_the_download_and_removes_the_partial_folder() {
    let lab = Lab::new();
    let f = wheel();
    let (name, bytes) = written(&f, lab.sb.root());
    let gate = Gate::default();
    let at = central_directory_offset(&bytes);
    let s = lab.serve(&name, bytes, None, Some((at, gate.clone())));
    let child = lab.spawn_install();
    gate.wait_reached();
    wait_for_file(
        || raw_folder(&lab.sb).map(|r| r.join("nvidia/cudnn/include/cudnn_version.h")),
        file_bytes(&f, "include/cudnn_version.h"),
    );
    let st = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let run = finish(child, &lab.sb).code_is(130);
    run.stderr_has(&[
        "error: interrupted; nothing was installed",
        &format!("the {at} bytes downloaded stay in"),
        "the same command resumes from there",
    ]);
    assert!(lab.store().is_empty(), "store: {:?}", lab.store());
    let partial = lab
        .sb
        .home()
        .join("downloads")
        .join(format!(".partial-{}", s.sha));
    assert_eq!(std::fs::metadata(&partial).unwrap().len(), at);
    gate.open();

    lab.sb
        .run(INSTALL)
        .ok()
        .stderr_has(&["unpacked while downloading"]);
    assert_eq!(
        lab.server
            .requests_for(&name)
            .last()
            .unwrap()
            .range
            .as_deref(),
        Some(format!("bytes={at}-").as_str())
    );
    assert_installed(&lab, &s);
}

#[test]
fn a_redist_tar_xz_streams_too() {
    let lab = Lab::new();
    let f = fixtures::redist_linux("9.1.0.70", "12");
    let (name, bytes) = written(&f, lab.sb.root());
    let gate = Gate::default();
    let at = bytes.len() as u64 - 1;
    let s = lab.serve(&name, bytes, None, Some((at, gate.clone())));
    let child = lab.spawn_install();
    gate.wait_reached();
    let base = name.trim_end_matches(".tar.xz");
    wait_for_file(
        || raw_folder(&lab.sb).map(|r| r.join(format!("{base}/include/cudnn_version.h"))),
        file_bytes(&f, "include/cudnn_version.h"),
    );
    gate.open();
    finish(child, &lab.sb)
        .ok()
        .stderr_has(&["unpacked while downloading"]);
    assert_installed(&lab, &s);
    let r = lab.receipt();
    let so9 = r["file"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str() == Some("lib/libcudnn.so.9"))
        .unwrap();
    if cfg!(windows) {
        // No right to make links there: a copy, recorded as the file it is.
        let real = cudnnm::hash::sha256_bytes(file_bytes(&f, "lib/libcudnn.so.9.1.0"));
        assert_eq!(so9["sha256"].as_str(), Some(real.as_str()), "{so9}");
    } else {
        assert_eq!(so9["link"].as_str(), Some("libcudnn.so.9.1.0"), "{so9}");
    }
}

#[test]
fn a_zip_whose_sizes_follow_the_data_is_imported_after_the_download() {
    // Sizes in data descriptors (bit 3), as a writer that cannot seek makes
    // them: a member's end is unknown from its local header.
    let lab = Lab::new();
    let f = wheel();
    let good = f.write_zip(lab.sb.root());
    let name = good.file_name().unwrap().to_string_lossy().into_owned();
    let mut src = zip::ZipArchive::new(std::fs::File::open(&good).unwrap()).unwrap();
    let mut z = zip::ZipWriter::new_stream(Vec::new());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for i in 0..src.len() {
        let mut m = src.by_index(i).unwrap();
        z.start_file(m.name().unwrap().into_owned(), opts).unwrap();
        std::io::copy(&mut m, &mut z).unwrap();
    }
    let bytes = z.finish().unwrap().into_inner();
    assert_ne!(
        bytes[6] & 8,
        0,
        "bit 3: a data descriptor follows the first member"
    );
    let s = lab.serve(&name, bytes, None, None);
    lab.sb
        .run(INSTALL)
        .ok()
        .stderr_has(&["unpacked after the download: "]);
    assert_installed(&lab, &s);
}

#[test]
fn a_damaged_partial_download_is_fetched_again_and_the_fresh_bytes_stream() {
    let lab = Lab::new();
    let (name, bytes) = written(&wheel(), lab.sb.root());
    let s = lab.serve(&name, bytes, None, None);
    // What an earlier run left: as long as half the archive, but not its bytes.
    let half = s.bytes.len() / 2;
    let dl = lab.sb.home().join("downloads");
    std::fs::create_dir_all(&dl).unwrap();
    std::fs::write(dl.join(format!(".partial-{}", s.sha)), vec![0u8; half]).unwrap();
    lab.sb
        .run(INSTALL)
        .ok()
        .stderr_has(&["unpacked while downloading"]);
    let reqs = lab.server.requests_for(&name);
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert_eq!(
        reqs[0].range.as_deref(),
        Some(format!("bytes={half}-").as_str())
    );
    assert_eq!(
        reqs[1].range, None,
        "the resumed file did not verify: a fresh download"
    );
    assert_installed(&lab, &s);
}

/// A mirror that accepts the connection and never answers: SIGTERM stops
/// the install within a moment (not after the read timeout), exit 130,
/// nothing in the store and no empty partial download left.
#[cfg(unix)]
#[test]
fn sigterm_while_a_stalled_server_has_not_answered_stops_at_once() {
    let lab = Lab::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (accepted_tx, accepted) = std::sync::mpsc::channel();
    // Accepts, reads nothing, answers nothing; the connections stay open
    // until the test ends.
    std::thread::spawn(move || {
        let mut open = Vec::new();
        for conn in listener.incoming().flatten() {
            open.push(conn);
            let _ = accepted_tx.send(());
        }
    });
    let f = wheel();
    let (name, bytes) = written(&f, lab.sb.root());
    std::fs::create_dir_all(lab.sb.home()).unwrap();
    std::fs::write(
        lab.sb.home().join("catalog.toml"),
        format!(
            "schema = 1\n[[archive]]\nversion = \"9.1.0.70\"\ncuda = \"12\"\nplatform = \"linux-x86_64\"\npath = \"http://127.0.0.1:{port}/{name}\"\nsize = {}\nsource = \"test server\"\nhashes = [{{ sha256 = \"{}\", source = \"test\" }}]\n",
            bytes.len(),
            sha256_hex(&bytes)
        ),
    )
    .unwrap();
    let child = lab.spawn_install();
    accepted
        .recv_timeout(Duration::from_secs(30))
        .expect("the install never connected");
    // The request is sent; the server sits on it.
    std::thread::sleep(Duration::from_millis(200));
    common::signal("-TERM", child.id());
    let (out, took) = common::wait_within(child, Duration::from_secs(10));
    let run = Run {
        args: INSTALL.iter().map(Into::into).collect(),
        out,
        root: lab.sb.root().to_path_buf(),
    }
    .code_is(130)
    .stderr_has(&[
        "error: interrupted; nothing was installed",
        "help: the store is as it was; run the command again to install",
    ]);
    assert!(
        took < Duration::from_secs(2),
        "exited {took:?} after the signal\n{}",
        run.describe()
    );
    assert!(lab.store().is_empty(), "store: {:?}", lab.store());
    assert!(
        !lab.downloads().iter().any(|n| n.starts_with(".partial-")),
        "{:?}",
        lab.downloads()
    );
}
