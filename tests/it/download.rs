//! Catalog downloads against a real HTTP server on 127.0.0.1 serving fixture
//! archives in the real releases' layouts and `redistrib_*.json` files in
//! NVIDIA's schema: the mirror, the cache, resume, and every bad case of the
//! download path. The catalog entries come from `cudnnm manifest refresh`
//! reading the served index (their hashes are the fixtures'), which is also
//! how a lab feeds its own copy to cudnnm. No other network address is used.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use common::Sandbox;
use common::fixtures;
use common::http::{TestServer, closed_port};
use cudnnm::catalog::{self, FetchRequest, Fetched};
use cudnnm::env::Env;
use cudnnm::error::{Error, Kind};
use cudnnm::hash::{Sha256Hex, sha256_bytes};
use cudnnm::home::Home;
use cudnnm::progress::Progress;
use cudnnm::version::Platform;

const V: &str = "8.9.7.29";
const REDIST: &str = "compute/cudnn/redist/";

/// A sandbox, a server holding the 8.9.7.29 CUDA 12 Linux fixture under
/// NVIDIA's path, and a user catalog refreshed from the served index.
struct World {
    sb: Sandbox,
    server: TestServer,
    bytes: Vec<u8>,
    sha: String,
    name: String,
    /// Server path of the archive.
    path: String,
}

impl World {
    fn new() -> World {
        let sb = Sandbox::new();
        let server = TestServer::start();
        let fx = sb.root().join("fx");
        std::fs::create_dir_all(&fx).unwrap();
        let file = fixtures::redist_linux(V, "12").write(&fx);
        let bytes = std::fs::read(&file).unwrap();
        let sha = sha256_bytes(&bytes).to_string();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let path = format!("{REDIST}cudnn/linux-x86_64/{name}");
        server.file(&path, bytes.clone());
        let json = redistrib_a(
            V,
            &[(
                "linux-x86_64",
                &format!("cudnn/linux-x86_64/{name}"),
                &sha,
                bytes.len(),
            )],
        );
        server.file(&format!("{REDIST}redistrib_{V}.json"), json.into_bytes());
        let w = World {
            sb,
            server,
            bytes,
            sha,
            name,
            path,
        };
        w.sb.run([
            "manifest",
            "refresh",
            "--from",
            &w.server.url(&format!("{REDIST}redistrib_{V}.json")),
        ])
        .ok();
        w
    }

    fn mirror(&self) -> String {
        self.server.url("compute/")
    }

    fn home(&self) -> Home {
        Home::new(self.sb.home())
    }

    fn env(&self) -> Env {
        Env::from_vars(Vec::<(String, String)>::new(), self.sb.work(), false)
    }

    fn req(&self, spec: &str) -> FetchRequest {
        FetchRequest {
            spec: spec.parse().unwrap(),
            cuda: Some("12".parse().unwrap()),
            platform: Platform::LinuxX86_64,
            mirror: Some(self.mirror()),
            sha256: None,
            allow_unverified: false,
            asked_by: cudnnm::catalog::AskedBy::Install,
        }
    }

    fn fetch(&self, req: &FetchRequest) -> Result<Fetched, Error> {
        catalog::fetch(
            &self.home(),
            &self.env(),
            req,
            &cudnnm::progress::NoProgress,
        )
    }

    fn downloads(&self) -> PathBuf {
        self.sb.home().join("downloads")
    }
}

/// NVIDIA's shape A (`redistrib_8.9.7.29.json`): one archive per platform, `size` a string.
fn redistrib_a(version: &str, entries: &[(&str, &str, &str, usize)]) -> String {
    let plats: Vec<String> = entries
        .iter()
        .map(|(p, rel, sha, size)| {
            format!(r#""{p}": {{ "relative_path": "{rel}", "sha256": "{sha}", "md5": "00000000000000000000000000000000", "size": "{size}" }}"#)
        })
        .collect();
    format!(
        r#"{{ "release_date": "2023-12-05", "release_label": "{version}", "release_product": "cudnn-v8-9-cuda-12",
  "cudnn": {{ "name": "NVIDIA CUDA Deep Neural Network library", "license": "cudnn", "license_path": "cudnn/LICENSE.txt",
    "version": "{version}", {} }} }}"#,
        plats.join(", ")
    )
}

/// File names in a folder, sorted (empty when it does not exist).
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

#[derive(Default)]
struct Recorder {
    starts: Mutex<Vec<(String, Option<u64>)>>,
    bytes: Mutex<u64>,
}

impl Progress for Recorder {
    fn start(&self, what: &str, total: Option<u64>) {
        self.starts.lock().unwrap().push((what.to_string(), total));
    }
    fn advance(&self, bytes: u64) {
        *self.bytes.lock().unwrap() += bytes;
    }
    fn finish(&self) {}
}

#[test]
fn fetch_by_version_through_the_mirror_then_from_the_cache() {
    let w = World::new();
    let rec = Recorder::default();
    let f = catalog::fetch(&w.home(), &w.env(), &w.req(V), &rec).unwrap();
    assert_eq!(f.name, w.name);
    assert_eq!(f.sha256.as_str(), w.sha);
    assert_eq!(f.version.to_string(), V);
    assert_eq!(f.cuda.to_string(), "12");
    assert!(!f.cached);
    assert_eq!(f.url, w.server.url(&w.path));
    assert_eq!(f.path, w.downloads().join(&w.sha));
    assert_eq!(std::fs::read(&f.path).unwrap(), w.bytes);
    // Held for its import (`cache clean` leaves it) while `f` lives.
    assert_eq!(
        names(&w.downloads()),
        vec![
            format!(".use-{}", w.sha),
            w.sha.clone(),
            format!("{}.toml", w.sha)
        ]
    );
    let sidecar = std::fs::read_to_string(w.downloads().join(format!("{}.toml", w.sha))).unwrap();
    assert!(
        sidecar.contains(&format!("name = \"{}\"", w.name)),
        "{sidecar}"
    );
    assert!(sidecar.contains("verified = true"), "{sidecar}");
    assert_eq!(*rec.bytes.lock().unwrap(), w.bytes.len() as u64);
    assert_eq!(
        rec.starts.lock().unwrap()[0],
        (
            format!("downloading {}", w.name),
            Some(w.bytes.len() as u64)
        )
    );
    assert_eq!(w.server.hits(&w.path), 1);

    let again = w.fetch(&w.req("8.9_cuda12")).unwrap();
    assert!(again.cached);
    assert_eq!(again.path, f.path);
    assert_eq!(
        again.url, f.url,
        "the cache remembers where the archive came from"
    );
    assert_eq!(
        w.server.hits(&w.path),
        1,
        "a second install never downloads"
    );
    // The last holder to let go removes the lock file.
    drop(f);
    assert!(w.downloads().join(format!(".use-{}", w.sha)).exists());
    drop(again);
    assert_eq!(
        names(&w.downloads()),
        vec![w.sha.clone(), format!("{}.toml", w.sha)]
    );
}

#[test]
fn a_damaged_cache_entry_is_replaced() {
    let w = World::new();
    let f = w.fetch(&w.req(V)).unwrap();
    std::fs::write(&f.path, b"bit rot").unwrap();
    let again = w.fetch(&w.req(V)).unwrap();
    assert!(!again.cached);
    assert_eq!(std::fs::read(&again.path).unwrap(), w.bytes);
    assert_eq!(w.server.hits(&w.path), 2);
}

#[test]
fn a_connection_cut_halfway_is_resumed_with_a_range_request() {
    let w = World::new();
    let half = (w.bytes.len() / 2) as u64;
    w.server.edit(&w.path, |r| {
        r.cut_after = half;
        r.cut_times = 1;
    });
    let rec = Recorder::default();
    let f = catalog::fetch(&w.home(), &w.env(), &w.req(V), &rec).unwrap();
    assert_eq!(std::fs::read(&f.path).unwrap(), w.bytes);
    let reqs = w.server.requests_for(&w.path);
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert_eq!(reqs[0].range, None);
    assert_eq!(
        reqs[1].range.as_deref(),
        Some(format!("bytes={half}-").as_str())
    );
    assert_eq!(
        *rec.bytes.lock().unwrap(),
        w.bytes.len() as u64,
        "progress counts each byte once"
    );
    drop(f);
    assert_eq!(
        names(&w.downloads()).len(),
        2,
        "no partial file is left: {:?}",
        names(&w.downloads())
    );
}

#[test]
fn an_interrupted_download_fails_cleanly_and_resumes_on_the_next_run() {
    let w = World::new();
    let half = (w.bytes.len() / 2) as u64;
    // The first response is cut halfway, then the server is down.
    w.server.edit(&w.path, |r| {
        r.cut_after = half;
        r.cut_times = 1;
        r.fail_status = 503;
        r.fail_times = 100;
    });
    let e = w.fetch(&w.req(V)).unwrap_err();
    assert_eq!(e.kind(), Kind::Network, "{e:?}");
    assert!(
        e.message().contains(&format!(
            "interrupted after {half} of {} bytes",
            w.bytes.len()
        )),
        "{e:?}"
    );
    assert!(
        e.hint_text()
            .unwrap()
            .contains("run the same command again to resume"),
        "{e:?}"
    );
    let reqs = w.server.requests_for(&w.path);
    assert_eq!(
        reqs.len(),
        5,
        "one cut response, then 1 + 3 retries without progress: {reqs:?}"
    );
    assert!(
        reqs[1..]
            .iter()
            .all(|r| r.range.as_deref() == Some(format!("bytes={half}-").as_str()))
    );
    let partial = w.downloads().join(format!(".partial-{}", w.sha));
    assert_eq!(
        std::fs::metadata(&partial).unwrap().len(),
        half,
        "the bytes received are kept for resuming"
    );
    assert!(
        !w.downloads().join(&w.sha).exists(),
        "nothing unverified enters the cache"
    );

    w.server.edit(&w.path, |r| r.fail_times = 0);
    let f = w.fetch(&w.req(V)).unwrap();
    assert_eq!(std::fs::read(&f.path).unwrap(), w.bytes);
    let reqs = w.server.requests_for(&w.path);
    assert_eq!(reqs.len(), 6);
    assert_eq!(
        reqs[5].range.as_deref(),
        Some(format!("bytes={half}-").as_str()),
        "the next run resumes"
    );
    assert!(!partial.exists());
}

#[test]
fn a_damaged_partial_file_is_downloaded_again_from_the_start() {
    let w = World::new();
    let half = w.bytes.len() / 2;
    std::fs::create_dir_all(w.downloads()).unwrap();
    std::fs::write(
        w.downloads().join(format!(".partial-{}", w.sha)),
        vec![0u8; half],
    )
    .unwrap();
    let f = w.fetch(&w.req(V)).unwrap();
    assert_eq!(std::fs::read(&f.path).unwrap(), w.bytes);
    let reqs = w.server.requests_for(&w.path);
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[0].range.as_deref(),
        Some(format!("bytes={half}-").as_str())
    );
    assert_eq!(
        reqs[1].range, None,
        "after a mismatch of a resumed file, one fresh download"
    );
}

#[test]
fn a_server_that_ignores_ranges_restarts_the_file() {
    let w = World::new();
    let half = (w.bytes.len() / 2) as u64;
    w.server.edit(&w.path, |r| {
        r.cut_after = half;
        r.cut_times = 1;
        r.ignore_range = true;
    });
    let f = w.fetch(&w.req(V)).unwrap();
    assert_eq!(
        std::fs::read(&f.path).unwrap(),
        w.bytes,
        "a 200 answer to a range request starts over"
    );
    assert_eq!(w.server.hits(&w.path), 2);
}

#[test]
fn a_hash_mismatch_discards_the_file() {
    let w = World::new();
    let mut evil = w.bytes.clone();
    evil[100] ^= 0xff;
    w.server.file(&w.path, evil.clone());
    let e = w.fetch(&w.req(V)).unwrap_err();
    assert_eq!(e.kind(), Kind::Integrity, "{e:?}");
    assert!(
        e.message().contains("does not match its published SHA-256"),
        "{e}"
    );
    assert!(e.to_string().contains(&w.sha), "{e}");
    assert!(e.to_string().contains(sha256_bytes(&evil).as_str()), "{e}");
    assert!(
        names(&w.downloads()).is_empty(),
        "{:?}",
        names(&w.downloads())
    );
}

#[test]
fn not_found_and_forbidden_name_the_url_and_the_manual_route() {
    for status in [404, 403] {
        let w = World::new();
        w.server.status(&w.path, status);
        let e = w.fetch(&w.req(V)).unwrap_err();
        assert_eq!(e.kind(), Kind::Network, "{e:?}");
        assert!(e.message().contains(&format!("HTTP {status}")), "{e}");
        assert!(e.message().contains(&w.server.url(&w.path)), "{e}");
        let hint = e.hint_text().unwrap();
        assert!(hint.contains("NVIDIA developer login"), "{hint}");
        assert!(hint.contains(&w.name), "{hint}");
        assert!(
            hint.contains(&format!("cudnnm install /path/to/{}", w.name)),
            "{hint}"
        );
        assert!(
            names(&w.downloads()).is_empty(),
            "nothing is left in the cache: {:?}",
            names(&w.downloads())
        );
    }
}

#[test]
fn html_instead_of_an_archive_is_refused() {
    let w = World::new();
    // A login page served as HTML.
    w.server.html(
        &w.path,
        "<!DOCTYPE html><html><body>Please log in</body></html>",
    );
    let e = w.fetch(&w.req(V)).unwrap_err();
    assert_eq!(e.kind(), Kind::Network);
    assert!(
        e.message()
            .contains("sent an HTML page instead of the archive"),
        "{e}"
    );
    assert!(e.hint_text().unwrap().contains("developer login"));
    // The same page with a binary content type is caught by its first bytes.
    w.server.file(
        &w.path,
        b"\n<html><head><title>Login</title></head></html>".to_vec(),
    );
    let e = w.fetch(&w.req(V)).unwrap_err();
    assert!(e.message().contains("HTML page"), "{e}");
    assert!(
        names(&w.downloads()).is_empty(),
        "no byte of the page is kept: {:?}",
        names(&w.downloads())
    );
}

#[test]
fn a_redirect_loop_is_reported() {
    let w = World::new();
    w.server.redirect(&w.path, "/loop/b");
    w.server.redirect("/loop/b", &format!("/{}", w.path));
    let e = w.fetch(&w.req(V)).unwrap_err();
    assert_eq!(e.kind(), Kind::Network);
    assert!(e.message().contains("redirect loop"), "{e}");
    assert!(
        names(&w.downloads()).is_empty(),
        "{:?}",
        names(&w.downloads())
    );
    assert!(
        w.server.hits(&w.path) >= 5 && w.server.hits(&w.path) <= 11,
        "{}",
        w.server.hits(&w.path)
    );
}

#[test]
fn no_network_points_at_the_mirror_and_the_offline_import() {
    let w = World::new();
    let mut req = w.req(V);
    req.mirror = Some(format!("http://127.0.0.1:{}/compute/", closed_port()));
    let t = std::time::Instant::now();
    let e = w.fetch(&req).unwrap_err();
    assert_eq!(e.kind(), Kind::Network);
    assert!(
        e.message()
            .contains(&format!("could not download {} from 127.0.0.1:", w.name)),
        "{e}"
    );
    let hint = e.hint_text().unwrap();
    for needle in [
        "is up and that the mirror URL is right",
        "CUDNNM_MIRROR",
        "`mirror` in config.toml",
        "cudnnm install PATH",
    ] {
        assert!(hint.contains(needle), "{hint}");
    }
    assert!(
        names(&w.downloads()).is_empty(),
        "{:?}",
        names(&w.downloads())
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(10),
        "retries are bounded: {:?}",
        t.elapsed()
    );
}

#[test]
fn an_archive_without_a_published_hash_needs_a_flag() {
    let w = World::new();
    // A lab catalog entry with no hash, beside the refreshed one.
    let cat = std::fs::read_to_string(w.sb.home().join("catalog.toml")).unwrap();
    let unverified = format!(
        "{cat}\n[[archive]]\nversion = \"9.99.0.1\"\ncuda = \"12\"\nplatform = \"linux-x86_64\"\npath = \"lab/{}\"\nsource = \"lab share\"\nhashes = []\n",
        w.name
    );
    std::fs::write(w.sb.home().join("catalog.toml"), unverified).unwrap();
    w.server
        .file(&format!("compute/lab/{}", w.name), w.bytes.clone());

    let e = w.fetch(&w.req("9.99.0.1")).unwrap_err();
    assert_eq!(e.kind(), Kind::Integrity);
    assert!(e.message().contains("no published SHA-256"), "{e}");
    assert!(
        e.hint_text().unwrap().contains("--sha256")
            && e.hint_text().unwrap().contains("--allow-unverified")
    );
    assert_eq!(
        w.server.hits(&format!("compute/lab/{}", w.name)),
        0,
        "refused before downloading"
    );

    let mut wrong = w.req("9.99.0.1");
    wrong.sha256 = Some(Sha256Hex::parse(&"0".repeat(64)).unwrap());
    assert_eq!(w.fetch(&wrong).unwrap_err().kind(), Kind::Integrity);

    let mut right = w.req("9.99.0.1");
    right.sha256 = Some(Sha256Hex::parse(&w.sha).unwrap());
    let f = w.fetch(&right).unwrap();
    assert_eq!(f.sha256.as_str(), w.sha);
    std::fs::remove_file(&f.path).unwrap();

    let mut loose = w.req("9.99.0.1");
    loose.allow_unverified = true;
    let f = w.fetch(&loose).unwrap();
    assert_eq!(std::fs::read(&f.path).unwrap(), w.bytes);
    assert!(
        f.warnings.iter().any(|m| m.contains("NOT VERIFIED")),
        "{:?}",
        f.warnings
    );
    let hits = w.server.hits(&format!("compute/lab/{}", w.name));
    let again = w.fetch(&loose).unwrap();
    assert!(
        again.cached,
        "the unverified archive is found again through its sidecar"
    );
    assert_eq!(w.server.hits(&format!("compute/lab/{}", w.name)), hits);
}

#[test]
fn proxies_come_from_the_environment() {
    let w = World::new();
    // The mirror's port has nothing listening: only the proxy can answer.
    let dead = closed_port();
    let mut req = w.req(V);
    req.mirror = Some(format!("http://127.0.0.1:{dead}/compute/"));
    let env = Env::from_vars([("http_proxy", w.server.url(""))], w.sb.work(), false);
    let f = catalog::fetch(&w.home(), &env, &req, &cudnnm::progress::NoProgress).unwrap();
    assert_eq!(std::fs::read(&f.path).unwrap(), w.bytes);
    let r = w.server.requests_for(&w.path);
    assert_eq!(r.len(), 1);
    assert!(r[0].proxied, "{r:?}");
    assert_eq!(
        r[0].host.as_deref(),
        Some(format!("127.0.0.1:{dead}").as_str())
    );

    // NO_PROXY sends the same request straight to the (dead) mirror.
    std::fs::remove_file(&f.path).unwrap();
    let env = Env::from_vars(
        [
            ("http_proxy", w.server.url("")),
            ("NO_PROXY", "127.0.0.1".into()),
        ],
        w.sb.work(),
        false,
    );
    let e = catalog::fetch(&w.home(), &env, &req, &cudnnm::progress::NoProgress).unwrap_err();
    assert_eq!(e.kind(), Kind::Network);
    assert_eq!(w.server.requests_for(&w.path).len(), 1);
}

#[test]
fn a_mirror_folder_works_like_a_server() {
    let w = World::new();
    let tree = w.sb.root().join("share/nvidia");
    let dest = tree.join(w.path.trim_start_matches("compute/"));
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::write(&dest, &w.bytes).unwrap();
    let mut req = w.req(V);
    req.mirror = Some(tree.display().to_string());
    let f = w.fetch(&req).unwrap();
    assert_eq!(std::fs::read(&f.path).unwrap(), w.bytes);
    assert!(f.url.starts_with("file://"), "{}", f.url);
    assert_eq!(w.server.hits(&w.path), 0);
    std::fs::remove_file(&f.path).unwrap();
    std::fs::remove_file(&dest).unwrap();
    // A local folder without the file: not found (exit 3), not the network.
    let e = w.fetch(&req).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
    assert!(e.message().contains("does not exist"), "{e}");
}

#[test]
fn the_mirror_comes_from_the_flag_the_variable_or_the_config() {
    let w = World::new();
    let home = w.home();
    let env = w.env();
    assert_eq!(catalog::effective_mirror(None, &env, &home).unwrap(), None);
    std::fs::write(home.config_file(), format!("mirror = \"{}\"\n", w.mirror())).unwrap();
    assert_eq!(
        catalog::effective_mirror(None, &env, &home).unwrap(),
        Some(w.mirror())
    );
    let env_m = Env::from_vars(
        [("CUDNNM_MIRROR", "http://127.0.0.1:9/env")],
        w.sb.work(),
        false,
    );
    assert_eq!(
        catalog::effective_mirror(None, &env_m, &home)
            .unwrap()
            .as_deref(),
        Some("http://127.0.0.1:9/env/")
    );
    assert_eq!(
        catalog::effective_mirror(Some("http://127.0.0.1:9/flag"), &env_m, &home)
            .unwrap()
            .as_deref(),
        Some("http://127.0.0.1:9/flag/")
    );
    // With only the config's mirror, fetch goes there.
    let mut req = w.req(V);
    req.mirror = None;
    let f = w.fetch(&req).unwrap();
    assert_eq!(f.url, w.server.url(&w.path));
    let e = catalog::effective_mirror(Some("ftp://host/x"), &env, &home).unwrap_err();
    assert_eq!(e.kind(), Kind::Usage);
}

#[test]
fn an_unknown_version_lists_the_nearest_known_ones() {
    let w = World::new();
    let mut req = w.req("8.9.7.30");
    req.cuda = None;
    let e = w.fetch(&req).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
    assert!(e.message().contains("8.9.7.30"), "{e}");
    assert!(e.causes()[0].starts_with("nearest known: "), "{e:?}");
    assert!(
        e.causes()[0].contains("8.9.7.29") && e.causes()[0].contains("8.9.6.50"),
        "{e:?}"
    );
    assert!(
        w.server
            .requests()
            .iter()
            .all(|r| !r.path.ends_with(".tar.xz"))
    );
}

#[test]
fn concurrent_fetches_of_one_archive_download_it_once() {
    let w = World::new();
    let results: Vec<Result<Fetched, Error>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4).map(|_| s.spawn(|| w.fetch(&w.req(V)))).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for r in &results {
        let f = r.as_ref().unwrap();
        assert_eq!(std::fs::read(&f.path).unwrap(), w.bytes);
    }
    assert_eq!(
        results
            .iter()
            .filter(|r| !r.as_ref().unwrap().cached)
            .count(),
        1
    );
    assert_eq!(
        w.server.hits(&w.path),
        1,
        "the others waited and found it in the cache"
    );
    drop(results);
    assert_eq!(
        names(&w.downloads()).len(),
        2,
        "{:?}",
        names(&w.downloads())
    );
}

#[test]
fn https_checks_the_server_certificate_and_trusts_a_ca_named_by_ssl_cert_file() {
    // A real TLS handshake on 127.0.0.1: a server certificate signed by a
    // test CA that no system trusts, as behind a company's TLS proxy.
    let w = World::new();
    let front = common::tls::TlsFront::start(w.server.port(), w.sb.root());
    let mirror = front.url("compute/");
    let platform = ["--platform", "linux-x86_64"];
    let untrusted = w.sb.run(
        ["install", V, "--cuda", "12", "--mirror", &mirror]
            .iter()
            .chain(&platform),
    );
    assert_eq!(untrusted.code(), 6, "{}", untrusted.describe());
    // Windows: the system's certificate store decides (rustls-platform-verifier,
    // which reports the OS error); elsewhere rustls names the reason.
    let (why, trust) = if cfg!(windows) {
        (
            "invalid peer certificate: ",
            "import that CA's certificate into Windows' Trusted Root Certification Authorities store",
        )
    } else {
        (
            "invalid peer certificate: UnknownIssuer",
            "point SSL_CERT_FILE at that CA's certificate (a PEM file)",
        )
    };
    untrusted.stderr_has(&[
        &format!(
            "could not download {}: the TLS certificate of 127.0.0.1 is not trusted",
            w.name
        ),
        why,
        trust,
    ]);
    assert_eq!(
        w.server.requests_for(&w.path).len(),
        0,
        "no request got past the handshake"
    );
    assert!(
        !w.sb.home().join("store/cuda-12").join(V).exists(),
        "nothing was imported"
    );
    assert!(
        names(&w.downloads()).is_empty(),
        "{:?}",
        names(&w.downloads())
    );

    // SSL_CERT_FILE is how a CA is added on Unix (rustls-native-certs reads
    // it); Windows has no such variable, its certificate store decides.
    if cfg!(windows) {
        return;
    }
    // SSL_CERT_FILE naming some other CA: the hint says it is set and to
    // check what it holds.
    let other = w.sb.root().join("other-ca");
    std::fs::create_dir_all(&other).unwrap();
    let wrong = common::tls::TlsFront::start(w.server.port(), &other).ca_pem;
    let mut c = w.sb.command();
    let r = c
        .env("SSL_CERT_FILE", &wrong)
        .args(["install", V, "--cuda", "12", "--mirror", &mirror])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(6), "{err}");
    assert!(
        err.contains(&format!(
            "check that SSL_CERT_FILE ('{}', set now) holds that CA's certificate (PEM)",
            wrong.display()
        )),
        "{err}"
    );
    // With the CA trusted through SSL_CERT_FILE the same download goes over
    // TLS, is checked against the catalog's SHA-256, and is imported.
    let mut sb = w.sb;
    sb.set_env("SSL_CERT_FILE", &front.ca_pem);
    sb.run(["install", V, "--cuda", "12", "--mirror", &mirror])
        .ok();
    let receipt =
        std::fs::read_to_string(sb.home().join("store/cuda-12").join(V).join("receipt.toml"))
            .unwrap();
    assert!(receipt.contains(&w.sha), "{receipt}");
    let got = w.server.requests_for(&w.path);
    assert_eq!(got.len(), 1, "one download, through the TLS front: {got:?}");
}

#[test]
fn cache_clean_leaves_an_archive_an_install_downloaded_and_has_not_imported_yet() {
    let w = World::new();
    let pause = w.sb.root().join("pause");
    let mut install = w.sb.command();
    install
        .args(["install", V, "--cuda", "12", "--mirror", &w.mirror()])
        .args(["--platform", "linux-x86_64"])
        .env("CUDNNM_TEST_PAUSE_AFTER_DOWNLOAD", "1")
        .env("CUDNNM_TEST_PAUSE_FILE", &pause)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = install.spawn().unwrap();
    let start = std::time::Instant::now();
    while !pause.exists() {
        assert!(start.elapsed().as_secs() < 60, "the install never paused");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // The install has downloaded the archive and not taken the home lock yet.
    let archive = w.downloads().join(&w.sha);
    assert_eq!(std::fs::read(&archive).unwrap(), w.bytes);
    let j = w.sb.run(["cache", "--json"]).ok().json();
    assert_eq!(j["entries"][0]["in_use"], true, "{j}");
    w.sb.run(["cache"])
        .ok()
        .stdout_has(&["an install is importing it now"]);
    let clean = w.sb.run(["cache", "clean"]).ok().stderr_has(&[
        &format!("kept '{}' (", archive.display()),
        "): an install downloaded it and is about to import it; `cudnnm cache clean` removes it once that install is done",
        "removed 0 files from the download cache",
    ]);
    let json = w.sb.run(["cache", "clean", "--json"]).ok().json();
    assert_eq!(
        json["in_use"][0]["path"],
        archive.display().to_string(),
        "{json}"
    );
    assert_eq!(json["removed"], serde_json::json!([]));
    assert_eq!(
        std::fs::read(&archive).unwrap(),
        w.bytes,
        "{}",
        clean.describe()
    );
    // Let the install go on: it imports the archive it holds.
    std::fs::remove_file(&pause).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("installed cuDNN {V} for CUDA 12")),
        "{stderr}"
    );
    assert!(
        w.sb.home()
            .join("store/cuda-12")
            .join(V)
            .join("receipt.toml")
            .is_file()
    );
    // Done with it: the next clean removes it, and no lock file is left.
    w.sb.run(["cache", "clean"])
        .ok()
        .stderr_has(&["removed 1 file from the download cache"]);
    assert_eq!(names(&w.downloads()), Vec::<String>::new());
}

#[test]
fn cache_lists_each_archive_with_its_release_and_clean_frees_it_but_not_a_running_download() {
    let w = World::new();
    w.sb.run([
        "install",
        V,
        "--cuda",
        "12",
        "--mirror",
        &w.mirror(),
        "--platform",
        "linux-x86_64",
    ])
    .ok();
    let archive = w.downloads().join(&w.sha);
    assert_eq!(std::fs::read(&archive).unwrap(), w.bytes);
    let sidecar_len = std::fs::metadata(w.downloads().join(format!("{}.toml", w.sha)))
        .unwrap()
        .len();
    // A partial download another cudnnm is writing now (it holds the lock),
    // and one a killed download left.
    let live = w.downloads().join(".partial-live");
    std::fs::write(&live, b"0123").unwrap();
    let lock = std::fs::File::options()
        .create(true)
        .append(true)
        .open(w.downloads().join(".lock-live"))
        .unwrap();
    lock.lock().unwrap();
    let dead = w.downloads().join(".partial-dead");
    std::fs::write(&dead, vec![1u8; 1000]).unwrap();

    let j = w.sb.run(["cache", "--json"]).ok().json();
    let entries = j["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3, "{j}");
    assert_eq!(entries[0]["kind"], "archive");
    assert_eq!(entries[0]["release"], format!("{V}_cuda12"));
    assert_eq!(entries[0]["name"], w.name);
    assert_eq!(entries[0]["bytes"], w.bytes.len() as u64 + sidecar_len);
    assert!(entries.iter().any(|e| e["in_flight"] == true));
    assert_eq!(
        j["bytes"],
        w.bytes.len() as u64 + sidecar_len + 4 + 1000,
        "{j}"
    );
    w.sb.run(["cache"]).ok().stdout_has(&[
        &format!("{V}_cuda12 (linux-x86_64)"),
        &w.name,
        "downloading now",
    ]);
    // `du` counts the cache with the rest of the home.
    let du = w.sb.run(["du", "--json"]).ok().json();
    assert_eq!(du["downloads"], j["bytes"]);

    let freed = w.bytes.len() as u64 + sidecar_len + 1000;
    w.sb.run(["cache", "clean"]).ok().stderr_has(&[
        &format!(
            "kept '{}' (4 B): a download is writing it now",
            live.display()
        ),
        &format!(
            "removed 2 files from the download cache '{}' ({} freed)",
            w.downloads().display(),
            cudnnm::store::human_size(freed)
        ),
    ]);
    assert!(!archive.exists() && !dead.exists());
    assert_eq!(std::fs::read(&live).unwrap(), b"0123");
    drop(lock);
    // The installed release does not need the archive (a Linux archive's
    // links cannot be made under wine, so its store copy verifies on Unix).
    if cfg!(unix) {
        w.sb.run(["verify", "--no-load"]).ok();
    }
    w.sb.run(["cache", "prune"])
        .ok()
        .stderr_has(&["removed 1 file from the download cache"]);
    assert!(!live.exists());
    w.sb.run(["cache"]).ok().stderr_has(&["is empty"]);
}

/// NVIDIA's shape B: one release, a CUDA 11 and a CUDA 12 archive for Linux x86_64.
#[cfg(unix)]
fn redistrib_b(version: &str, archives: &[(&str, &str, &str, usize)]) -> String {
    let entries: Vec<String> = archives
        .iter()
        .map(|(cuda, rel, sha, size)| {
            format!(r#""cuda{cuda}": {{ "relative_path": "{rel}", "sha256": "{sha}", "md5": "00", "size": "{size}" }}"#)
        })
        .collect();
    format!(
        r#"{{ "release_date": "2026-01-01", "release_label": "{version}", "release_product": "cudnn",
  "cudnn": {{ "name": "NVIDIA CUDA Deep Neural Network library", "license": "cudnn", "license_path": "cudnn/LICENSE.txt",
    "version": "{version}", "linux-x86_64": {{ {} }}, "cuda_variant": ["11", "12"] }} }}"#,
        entries.join(", ")
    )
}

// Sandbox toolkits use Unix links (lib64 -> targets/…).
#[cfg(unix)]
#[test]
fn a_bare_version_install_picks_the_build_for_the_toolkit_this_home_knows_and_says_so() {
    use crate::deploy_support::{linux_toolkit, put_redist_linux_12, put_release};
    const V2: &str = "9.99.0.1";
    let sb = Sandbox::new();
    let server = TestServer::start();
    let fx = sb.root().join("fx");
    std::fs::create_dir_all(&fx).unwrap();
    let mut rows = Vec::new();
    for cuda in ["11", "12"] {
        let file = fixtures::redist_linux(V2, cuda).write(&fx);
        let bytes = std::fs::read(&file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let rel = format!("cudnn/linux-x86_64/{name}");
        server.file(&format!("{REDIST}{rel}"), bytes.clone());
        rows.push((cuda, rel, sha256_bytes(&bytes).to_string(), bytes.len()));
    }
    let rows: Vec<(&str, &str, &str, usize)> = rows
        .iter()
        .map(|(c, r, s, n)| (*c, r.as_str(), s.as_str(), *n))
        .collect();
    server.file(
        &format!("{REDIST}redistrib_{V2}.json"),
        redistrib_b(V2, &rows).into_bytes(),
    );
    sb.run([
        "manifest",
        "refresh",
        "--from",
        &server.url(&format!("{REDIST}redistrib_{V2}.json")),
    ])
    .ok();
    let mirror = server.url("compute/");
    let install = |extra: &[&str]| {
        let mut args = vec![
            "install",
            V2,
            "--mirror",
            &mirror,
            "--platform",
            "linux-x86_64",
        ];
        args.extend_from_slice(extra);
        sb.run(&args)
    };
    // No toolkit anywhere: two builds, nothing to choose by.
    install(&[])
        .code_is(2)
        .stderr_has(&["is built for several CUDA versions (11, 12); say which with --cuda"]);
    // A toolkit this home deployed to (found by nothing else): its build, said.
    let tk12 = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    put_redist_linux_12(&sb.home(), "9.12.0.46");
    sb.run(["use", "9.12", "--cuda-root", &tk12.display().to_string()])
        .ok();
    let r12 = std::fs::canonicalize(&tk12).unwrap();
    install(&[]).ok().stderr_has(&[
        &format!(
            "choosing the build of cuDNN {V2} for the toolkit '{}' (CUDA 12.4.1): the only toolkit found or known to this home (found by deployments.toml)",
            r12.display()
        ),
        &format!("installed cuDNN {V2} for CUDA 12 "),
    ]);
    // Two known toolkits both fit a build: asked for --cuda, both named.
    let tk11 = linux_toolkit(&sb.root().join("cuda-11.8"), "11.8.0");
    put_release(
        &sb.home(),
        &fixtures::redist_linux("9.1.0.70", "11"),
        "9.1.0.70",
        "11",
        cudnnm::version::Platform::LinuxX86_64,
    );
    sb.run([
        "use",
        "9.1.0.70_cuda11",
        "--cuda-root",
        &tk11.display().to_string(),
    ])
    .ok();
    let r11 = std::fs::canonicalize(&tk11).unwrap();
    install(&["--force"]).code_is(2).stderr_has(&[
        "is built for several CUDA versions (11, 12); say which with --cuda",
        &format!("CUDA 11.8.0 at '{}'", r11.display()),
        &format!("CUDA 12.4.1 at '{}'", r12.display()),
        "help: e.g. `cudnnm install 9.99.0.1 --cuda 12`",
    ]);
    // The pin names the CUDA: the toolkit a build for it fits.
    sb.run(["pin", "9.99_cuda11", "--force"]).ok();
    install(&[]).ok().stderr_has(&[
        &format!(
            "choosing the build of cuDNN {V2} for the toolkit '{}' (CUDA 11.8.0): the only one of 2 toolkits whose CUDA 11.8 fits the CUDA 11 build of cuDNN {V2} the pin 9.99_cuda11 asks for (from '",
            r11.display()
        ),
        &format!("installed cuDNN {V2} for CUDA 11 "),
    ]);
    // `--cuda` still decides, and nothing is said about toolkits.
    let r = install(&["--cuda", "12"]).ok();
    assert!(
        !r.stderr().contains("choosing the build"),
        "{}",
        r.describe()
    );
}

/// A mirror that is a local folder (a path or a `file://` URL) without the
/// archive: not found (exit 3) naming the path it looked at, not a network
/// failure; nothing is downloaded or installed.
#[test]
fn a_file_missing_from_a_local_mirror_folder_is_not_found() {
    let w = World::new();
    let folder = w.sb.root().join("mirror");
    std::fs::create_dir_all(&folder).unwrap();
    // One component at a time: the path the program prints uses the host's separator.
    let expected = w.path["compute/".len()..]
        .split('/')
        .fold(folder.clone(), |p, c| p.join(c));
    let url = url::Url::from_directory_path(&folder).unwrap().to_string();
    for mirror in [folder.display().to_string(), url] {
        let r =
            w.sb.run([
                "install",
                V,
                "--cuda",
                "12",
                "--platform",
                "linux-x86_64",
                "--mirror",
                &mirror,
            ])
            .code_is(3)
            .stderr_has(&[&format!(
                "error: could not find {} in the mirror folder: '{}' does not exist",
                w.name,
                expected.display()
            )]);
        assert!(
            !r.stderr().contains("could not download"),
            "{}",
            r.describe()
        );
        assert_eq!(w.server.hits(&w.path), 0, "{}", r.describe());
        assert!(
            !w.sb.home().join("store/cuda-12").join(V).exists(),
            "{}",
            r.describe()
        );
    }
}
