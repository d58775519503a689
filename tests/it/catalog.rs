//! `cudnnm install VERSION`, `manifest refresh` and `list --remote` through
//! the real binary, against a lab mirror on 127.0.0.1 that holds fixture
//! archives (the real releases' layouts and names) under NVIDIA's paths and
//! `redistrib_*.json` files in NVIDIA's schema. Fixture bytes are not NVIDIA's,
//! so their hashes reach the catalog the way a lab's would: `manifest refresh`
//! of the mirror's index, or a hand-written `catalog.toml`.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::fixtures;
use common::http::{TestServer, closed_port};
use common::{Run, Sandbox};
use serde_json::Value;

const REDIST: &str = "compute/cudnn/redist/";

/// A fixture archive as served: server path, bytes, SHA-256, file name.
struct Served {
    path: String,
    bytes: Vec<u8>,
    sha: String,
    name: String,
}

/// A sandbox and a mirror holding:
/// - 8.9.7.29 CUDA 12 Linux (listed in `redistrib_8.9.7.29.json`, NVIDIA's shape A);
/// - 9.1.0.70 CUDA 12 Windows and Linux (`redistrib_9.1.0.json`, shape B);
/// - the 8.1.0.77 CUDA 11.2 and 7.1.3 CUDA 8.0 Windows zips in the old tree;
/// - a directory listing of `cudnn/redist/` linking both index files.
struct Lab {
    sb: Sandbox,
    server: TestServer,
    linux_8_9: Served,
    win_9_1: Served,
    linux_9_1: Served,
    win_8_1: Served,
    win_7_1: Served,
    /// The text of `redistrib_9.1.0.json` as served.
    index_9_1: String,
}

impl Lab {
    fn new() -> Lab {
        let mut sb = Sandbox::new();
        // A release only on PyPI goes to pip: an empty local index, never the internet.
        let no_index = sb.root().join("no-index");
        fs::create_dir_all(&no_index).unwrap();
        sb.set_env("PIP_NO_INDEX", "1");
        sb.set_env("PIP_FIND_LINKS", &no_index);
        sb.set_env("PIP_CONFIG_FILE", "/dev/null");
        let server = TestServer::start();
        let fx = sb.root().join("fx");
        fs::create_dir_all(&fx).unwrap();
        let serve = |f: fixtures::Fixture, dir: &str| {
            let file = f.write(&fx);
            let bytes = fs::read(&file).unwrap();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let path = format!("{dir}{name}");
            server.file(&path, bytes.clone());
            Served {
                path,
                sha: sha256_hex(&bytes),
                bytes,
                name,
            }
        };
        let linux_8_9 = serve(
            fixtures::redist_linux("8.9.7.29", "12"),
            &format!("{REDIST}cudnn/linux-x86_64/"),
        );
        let win_9_1 = serve(
            fixtures::redist_windows("9.1.0.70", "12"),
            &format!("{REDIST}cudnn/windows-x86_64/"),
        );
        let linux_9_1 = serve(
            fixtures::redist_linux("9.1.0.70", "12"),
            &format!("{REDIST}cudnn/linux-x86_64/"),
        );
        let win_8_1 = serve(
            fixtures::windows_zip_8_1_0_77(),
            "compute/redist/cudnn/v8.1.0/",
        );
        let win_7_1 = serve(
            fixtures::windows_zip_7_1_3(),
            "compute/redist/cudnn/v7.1.3/",
        );

        let entry = |s: &Served| {
            format!(
                r#"{{ "relative_path": "{}", "sha256": "{}", "md5": "0", "size": "{}" }}"#,
                s.path.trim_start_matches(REDIST),
                s.sha,
                s.bytes.len()
            )
        };
        let shape_a = format!(
            r#"{{ "release_date": "2023-12-05", "release_label": "8.9.7.29", "release_product": "cudnn-v8-9-cuda-12",
              "cudnn": {{ "name": "NVIDIA CUDA Deep Neural Network library", "license": "cudnn", "license_path": "cudnn/LICENSE.txt",
                "version": "8.9.7.29", "linux-x86_64": {} }},
              "cudnn_samples": {{ "name": "samples", "version": "8.9.7.29" }} }}"#,
            entry(&linux_8_9)
        );
        let shape_b = format!(
            r#"{{ "release_date": "2024-04-12", "release_label": "9.1.0", "release_product": "cudnn",
              "cudnn": {{ "name": "NVIDIA CUDA Deep Neural Network library", "license": "cudnn", "license_path": "cudnn/LICENSE.txt",
                "version": "9.1.0.70",
                "linux-x86_64": {{ "cuda12": {} }},
                "cuda_variant": ["12"],
                "windows-x86_64": {{ "cuda12": {} }} }} }}"#,
            entry(&linux_9_1),
            entry(&win_9_1)
        );
        server.file(
            &format!("{REDIST}redistrib_8.9.7.29.json"),
            shape_a.into_bytes(),
        );
        server.file(
            &format!("{REDIST}redistrib_9.1.0.json"),
            shape_b.clone().into_bytes(),
        );
        server.html(
            REDIST,
            r#"<html><body><h1>Index of /compute/cudnn/redist/</h1>
               <a href="../">../</a><a href="cudnn/">cudnn/</a><a href="cudnn_samples/">cudnn_samples/</a>
               <a href="redistrib_8.9.7.29.json">redistrib_8.9.7.29.json</a>
               <a href="redistrib_9.1.0.json">redistrib_9.1.0.json</a></body></html>"#,
        );
        Lab {
            sb,
            server,
            linux_8_9,
            win_9_1,
            linux_9_1,
            win_8_1,
            win_7_1,
            index_9_1: shape_b,
        }
    }

    fn mirror(&self) -> String {
        self.server.url("compute/")
    }

    /// `manifest refresh` from the mirror's index listing.
    fn refresh(&self) -> Run {
        self.sb
            .run(["manifest", "refresh", "--mirror", &self.mirror()])
            .ok()
    }

    fn run(&self, args: &[&str]) -> Run {
        self.sb.run(args)
    }

    fn install(&self, spec: &str, extra: &[&str]) -> Run {
        let mut a = vec!["install", spec, "--mirror"];
        let m = self.mirror();
        a.push(&m);
        a.extend_from_slice(extra);
        self.sb.run(a)
    }

    fn release_dir(&self, cuda: &str, version: &str) -> PathBuf {
        self.sb
            .home()
            .join("store")
            .join(format!("cuda-{cuda}"))
            .join(version)
    }

    fn receipt(&self, cuda: &str, version: &str) -> toml::Value {
        let p = self.release_dir(cuda, version).join("receipt.toml");
        toml::from_str(&fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
            .unwrap()
    }

    fn downloads(&self) -> Vec<String> {
        names(&self.sb.home().join("downloads"))
    }

    fn store(&self) -> Vec<String> {
        names(&self.sb.home().join("store"))
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
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

/// Exactly one `error:` line, and `help:`.
#[track_caller]
fn one_error(r: Run) -> Run {
    let n = r
        .stderr()
        .lines()
        .filter(|l| l.starts_with("error:"))
        .count();
    assert_eq!(n, 1, "one error line\n{}", r.describe());
    r.stderr_has(&["help:"])
}

#[test]
fn install_by_version_through_the_mirror_then_from_the_cache() {
    let lab = Lab::new();
    lab.refresh().stderr_has(&[
        "redistrib_8.9.7.29.json: cuDNN 8.9.7.29 (1 archive)",
        "redistrib_9.1.0.json: cuDNN 9.1.0.70 (2 archives)",
        "wrote 3 archives",
    ]);
    let catalog = fs::read_to_string(lab.sb.home().join("catalog.toml")).unwrap();
    for s in [&lab.linux_8_9, &lab.linux_9_1, &lab.win_9_1] {
        assert!(catalog.contains(&s.sha), "{catalog}");
    }

    let args = ["--platform", "linux-x86_64", "--cuda", "12"];
    lab.install("8.9.7.29", &args).ok().stderr_has(&[
        &format!(
            "downloaded {} from {}",
            lab.linux_8_9.name,
            lab.server.url(&lab.linux_8_9.path)
        ),
        "installed cuDNN 8.9.7.29 for CUDA 12",
    ]);
    let dir = lab.release_dir("12", "8.9.7.29");
    let r = lab.receipt("12", "8.9.7.29");
    let so8 = r["file"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str() == Some("lib/libcudnn.so.8"))
        .unwrap();
    // On Windows (a Linux release imported for another machine) the link
    // is made as Windows can, or copied and recorded as the file it is;
    // Linux keeps the soname link as it is.
    if cfg!(unix) {
        assert_eq!(so8["link"].as_str(), Some("libcudnn.so.8.9.7"), "{so8}");
        assert_eq!(
            fs::read_link(dir.join("lib/libcudnn.so.8")).unwrap(),
            Path::new("libcudnn.so.8.9.7")
        );
    } else {
        let target = fs::read(dir.join("lib/libcudnn.so.8.9.7")).unwrap();
        let real = cudnnm::hash::sha256_bytes(&target);
        assert!(
            so8.get("link").and_then(|v| v.as_str()) == Some("libcudnn.so.8.9.7")
                || so8.get("sha256").and_then(|v| v.as_str()) == Some(real.as_str()),
            "{so8}"
        );
    }
    assert_eq!(
        r["source"]["sha256"].as_str(),
        Some(lab.linux_8_9.sha.as_str())
    );
    assert_eq!(
        r["source"]["name"].as_str(),
        Some(lab.linux_8_9.name.as_str())
    );
    assert_eq!(
        r["source"]["url"].as_str(),
        Some(lab.server.url(&lab.linux_8_9.path).as_str())
    );
    assert_eq!(lab.server.hits(&lab.linux_8_9.path), 1);
    assert_eq!(
        lab.downloads(),
        vec![
            lab.linux_8_9.sha.clone(),
            format!("{}.toml", lab.linux_8_9.sha)
        ]
    );

    // Removed from the store, installed again: from the cache, no download.
    lab.run(&["uninstall", "8.9.7.29_cuda12"]).ok();
    assert!(!dir.exists());
    lab.install("8.9.7.29", &args).ok().stderr_has(&[&format!(
        "using {} from the download cache",
        lab.linux_8_9.name
    )]);
    assert!(dir.join("receipt.toml").is_file());
    assert_eq!(
        lab.server.hits(&lab.linux_8_9.path),
        1,
        "a second install never downloads"
    );

    // NVIDIA's suffix form and a prefix resolve to the same archive.
    lab.install("8.9_cuda12", &["--platform", "linux-x86_64", "--force"])
        .ok()
        .stderr_has(&["reinstalled"]);
    assert_eq!(lab.server.hits(&lab.linux_8_9.path), 1);
}

#[test]
fn the_mirror_comes_from_cudnnm_mirror_or_config_toml() {
    let mut lab = Lab::new();
    lab.refresh();
    // CUDNNM_MIRROR.
    lab.sb.set_env("CUDNNM_MIRROR", lab.mirror());
    lab.run(&[
        "install",
        "9.1.0.70",
        "--platform",
        "windows-x86_64",
        "--cuda",
        "12",
    ])
    .ok()
    .stderr_has(&["installed cuDNN 9.1.0.70 for CUDA 12 (windows-x86_64)"]);
    assert_eq!(lab.server.hits(&lab.win_9_1.path), 1);
    assert!(
        lab.release_dir("12", "9.1.0.70")
            .join("bin/cudnn64_9.dll")
            .is_file()
    );
    // `mirror` in config.toml.
    lab.sb.env.clear();
    fs::write(
        lab.sb.home().join("config.toml"),
        format!("mirror = \"{}\"\n", lab.mirror()),
    )
    .unwrap();
    lab.run(&[
        "install",
        "8.9.7.29",
        "--platform",
        "linux-x86_64",
        "--cuda",
        "12",
    ])
    .ok();
    assert_eq!(lab.server.hits(&lab.linux_8_9.path), 1);
    assert_eq!(
        lab.receipt("12", "8.9.7.29")["source"]["url"].as_str(),
        Some(lab.server.url(&lab.linux_8_9.path).as_str())
    );
}

#[test]
fn the_two_releases_the_project_started_from() {
    let lab = Lab::new();
    // 7.1.3 for CUDA 8.0 on Windows: NVIDIA's zip has no published hash.
    let r = one_error(
        lab.install("7.1.3", &["--platform", "windows-x86_64"])
            .code_is(4),
    );
    r.stderr_has(&[
        "no published SHA-256 for cudnn-8.0-windows7-x64-v7.1.zip",
        "--sha256",
        "--allow-unverified",
    ]);
    assert_eq!(
        lab.server.hits(&lab.win_7_1.path),
        0,
        "refused before downloading"
    );
    assert!(lab.store().is_empty());
    lab.install(
        "7.1.3",
        &["--platform", "windows-x86_64", "--allow-unverified"],
    )
    .ok()
    .stderr_has(&[
        "warning: NOT VERIFIED",
        "--allow-unverified skipped the integrity check",
        &lab.win_7_1.sha,
    ]);
    assert!(
        lab.release_dir("8.0", "7.1.3")
            .join("bin/cudnn64_7.dll")
            .is_file()
    );
    assert_eq!(
        lab.receipt("8.0", "7.1.3")["source"]["sha256"].as_str(),
        Some(lab.win_7_1.sha.as_str())
    );
    // With the hash given, the same archive is checked (and comes from the cache).
    lab.install(
        "7.1.3",
        &[
            "--platform",
            "windows-x86_64",
            "--sha256",
            &lab.win_7_1.sha,
            "--force",
        ],
    )
    .ok();
    assert_eq!(lab.server.hits(&lab.win_7_1.path), 1);

    // 8.1.0.77 for CUDA 11.2 on Windows: the embedded entry has NVIDIA's hash; a lab
    // catalog adds the hash of its own copy (an accepted second hash, with its source).
    fs::write(
        lab.sb.home().join("catalog.toml"),
        format!(
            "schema = 1\n[[archive]]\nversion = \"8.1.0.77\"\ncuda = \"11.2\"\nplatform = \"windows-x86_64\"\npath = \"redist/cudnn/v8.1.0/{}\"\nsource = \"lab copy\"\nhashes = [{{ sha256 = \"{}\", source = \"lab file server\" }}]\n",
            lab.win_8_1.name, lab.win_8_1.sha
        ),
    )
    .unwrap();
    one_error(
        lab.install("8.1.0.77", &["--platform", "windows-x86_64"])
            .code_is(2),
    )
    .stderr_has(&[
        "built for several CUDA versions (10.2, 11.2)",
        "--cuda 11.2",
    ]);
    lab.install(
        "8.1.0.77",
        &["--platform", "windows-x86_64", "--cuda", "11.2"],
    )
    .ok();
    let dir = lab.release_dir("11.2", "8.1.0.77");
    assert_eq!(names(&dir.join("bin")).len(), 7);
    assert_eq!(names(&dir.join("lib")).len(), 14);
    let rows = lab
        .run(&[
            "list",
            "--remote",
            "--platform",
            "windows-x86_64",
            "--cuda",
            "11.2",
            "--json",
        ])
        .ok()
        .json();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "8.1.0.77_cuda11.2")
        .unwrap()
        .clone();
    assert_eq!(row["installed"], Value::Bool(true));
    let hashes: Vec<&str> = row["sha256"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["sha256"].as_str().unwrap())
        .collect();
    assert_eq!(
        hashes,
        vec![
            lab.win_8_1.sha.as_str(),
            "f5a23402ebed5b2add2ae0dc79df42f055f5851bbb3b1d0f6aa9dcdeeb9346ce"
        ]
    );
}

#[test]
fn a_cut_connection_is_resumed_and_a_dead_server_fails_cleanly() {
    let lab = Lab::new();
    lab.refresh();
    let half = (lab.linux_8_9.bytes.len() / 2) as u64;
    let args = ["--platform", "linux-x86_64", "--cuda", "12"];
    lab.server.edit(&lab.linux_8_9.path, |r| {
        r.cut_after = half;
        r.cut_times = 1;
        r.fail_status = 503;
        r.fail_times = 100;
    });
    one_error(lab.install("8.9.7.29", &args).code_is(6)).stderr_has(&[
        &format!(
            "interrupted after {half} of {} bytes",
            lab.linux_8_9.bytes.len()
        ),
        "run the same command again to resume",
    ]);
    assert!(lab.store().is_empty(), "{:?}", lab.store());
    assert_eq!(
        lab.downloads(),
        vec![
            format!(".lock-{}", lab.linux_8_9.sha),
            format!(".partial-{}", lab.linux_8_9.sha)
        ]
    );

    lab.server.edit(&lab.linux_8_9.path, |r| r.fail_times = 0);
    lab.install("8.9.7.29", &args).ok();
    let reqs = lab.server.requests_for(&lab.linux_8_9.path);
    assert_eq!(
        reqs.last().unwrap().range.as_deref(),
        Some(format!("bytes={half}-").as_str())
    );
    assert_eq!(
        lab.receipt("12", "8.9.7.29")["source"]["sha256"].as_str(),
        Some(lab.linux_8_9.sha.as_str())
    );
    assert_eq!(lab.downloads().len(), 2, "{:?}", lab.downloads());
}

#[test]
fn bad_downloads_end_with_one_line_and_leave_nothing_behind() {
    let args = ["--platform", "linux-x86_64", "--cuda", "12"];
    type Breaker = Box<dyn Fn(&Lab)>;
    let cases: Vec<(&str, i32, Vec<&str>, Breaker)> = vec![
        (
            "hash mismatch",
            4,
            vec!["does not match its published SHA-256", "discarded"],
            Box::new(|lab: &Lab| {
                let mut b = lab.linux_8_9.bytes.clone();
                b[10] ^= 1;
                lab.server.file(&lab.linux_8_9.path, b);
            }),
        ),
        (
            "404",
            6,
            vec![
                "HTTP 404",
                "NVIDIA developer login",
                "cudnnm install /path/to/",
            ],
            Box::new(|lab: &Lab| lab.server.status(&lab.linux_8_9.path, 404)),
        ),
        (
            "403",
            6,
            vec!["HTTP 403", "NVIDIA developer login"],
            Box::new(|lab: &Lab| lab.server.status(&lab.linux_8_9.path, 403)),
        ),
        (
            "html",
            6,
            vec![
                "sent an HTML page instead of the archive",
                "developer login",
            ],
            Box::new(|lab: &Lab| {
                lab.server
                    .html(&lab.linux_8_9.path, "<!DOCTYPE html><title>Sign in</title>")
            }),
        ),
        (
            "redirect loop",
            6,
            vec!["redirect loop"],
            Box::new(|lab: &Lab| {
                lab.server.redirect(&lab.linux_8_9.path, "/elsewhere");
                lab.server
                    .redirect("/elsewhere", &format!("/{}", lab.linux_8_9.path));
            }),
        ),
    ];
    for (what, code, needles, break_it) in cases {
        let lab = Lab::new();
        lab.refresh();
        break_it(&lab);
        let r = one_error(lab.install("8.9.7.29", &args).code_is(code));
        let mut all = vec![lab.linux_8_9.name.as_str()];
        all.extend(needles.iter());
        r.stderr_has(&all);
        assert!(lab.store().is_empty(), "{what}: store {:?}", lab.store());
        assert!(
            lab.downloads().is_empty(),
            "{what}: downloads {:?}",
            lab.downloads()
        );
    }
}

#[test]
fn no_network_names_the_mirror_and_the_offline_import() {
    let lab = Lab::new();
    lab.refresh();
    let dead = format!("http://127.0.0.1:{}/compute/", closed_port());
    let r = one_error(
        lab.run(&[
            "install",
            "8.9.7.29",
            "--platform",
            "linux-x86_64",
            "--cuda",
            "12",
            "--mirror",
            &dead,
        ])
        .code_is(6),
    );
    r.stderr_has(&[
        "could not download",
        "is up and that the mirror URL is right",
        "CUDNNM_MIRROR",
        "cudnnm install PATH",
    ]);
    assert!(lab.store().is_empty());
    let r = one_error(
        lab.run(&["manifest", "refresh", "--mirror", &dead])
            .code_is(6),
    );
    r.stderr_has(&["could not", "redist/"]);
}

#[test]
fn unknown_versions_and_platforms_say_what_the_catalog_has() {
    let lab = Lab::new();
    one_error(
        lab.install("8.1.0.78", &["--platform", "windows-x86_64"])
            .code_is(3),
    )
    .stderr_has(&[
        "cuDNN 8.1.0.78 is not in the catalog",
        "nearest known: ",
        "8.1.0.77",
    ]);
    one_error(
        lab.install("8.1.1.33", &["--platform", "windows-x86_64"])
            .code_is(3),
    )
    .stderr_has(&[
        "cuDNN 8.1.1.33_cuda11.2 has no windows-x86_64 build",
        "it is published for linux-x86_64",
    ]);
    // Only on PyPI: installed through pip (here an empty index, so pip says
    // it has no such version; exit 3) on a Linux machine. pip fetches wheels
    // for the machine it runs on, so on another one it is refused.
    let r = lab
        .install("9.11.0.98", &["--platform", "linux-x86_64"])
        .code_is(3);
    if cfg!(unix) {
        r.stderr_has(&[
            "cuDNN 9.11.0.98 for CUDA 12 is published as a PyPI wheel: installing pip:nvidia-cudnn-cu12==9.11.0.98",
            "error: pip's index has no version of 'nvidia-cudnn-cu12'",
        ]);
    } else {
        r.stderr_has(&[
            "error: cuDNN 9.11.0.98_cuda12 for linux-x86_64 is published only as a PyPI wheel (nvidia_cudnn_cu12-9.11.0.98-py3-none-manylinux_2_27_x86_64.whl)",
            "this machine is windows-x86_64",
        ]);
    }
    assert!(lab.server.requests().is_empty(), "nothing was downloaded");
}

/// `--cuda` for which a release has no build names the CUDA versions it
/// has (nothing downloaded); `list --cuda` and `list --remote SPEC` filter
/// and say when nothing is left.
#[test]
fn a_cuda_with_no_build_and_a_version_filter_say_what_there_is() {
    let lab = Lab::new();
    one_error(lab.install("9.12", &["--cuda", "99"]).code_is(3)).stderr_has(&[
        "error: there is no CUDA 99 build of cuDNN 9.12",
        // PyPI has 9.12.0.46 as nvidia-cudnn-cu12 and -cu13.
        &format!(
            "cuDNN 9.12 exists for {} for CUDA 12, 13",
            cudnnm::version::Platform::host().unwrap()
        ),
        "`cudnnm install 9.12 --cuda 13`",
    ]);
    assert!(lab.server.requests().is_empty(), "nothing was downloaded");
    lab.sb
        .run(["list", "--cuda", "99"])
        .ok()
        .stderr_has(&["none for CUDA 99: no installed cuDNN release is built for it"]);
    let rows = lab
        .sb
        .run(["list", "--remote", "9.12", "--platform", "all", "--json"])
        .ok()
        .json();
    let ids: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(!ids.is_empty());
    assert!(ids.iter().all(|id| id.starts_with("9.12.")), "{ids:?}");
    assert!(ids.contains(&"9.12.0.46_cuda12"), "{ids:?}");
    assert!(
        ids.contains(&"9.12.0.46_cuda12+jit"),
        "both builds: {ids:?}"
    );
    // A spec that names the JIT build keeps its rows alone.
    let jit = lab
        .sb
        .run([
            "list",
            "--remote",
            "9.12+jit",
            "--platform",
            "all",
            "--json",
        ])
        .ok()
        .json();
    let jit: Vec<&str> = jit
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(jit.contains(&"9.12.0.46_cuda12+jit"), "{jit:?}");
    assert!(jit.iter().all(|id| id.ends_with("+jit")), "{jit:?}");
    lab.sb
        .run(["ls-remote", "9.99"])
        .code_is(3)
        .stderr_has(&["the catalog has no release matching 9.99"]);
}

#[test]
fn a_malformed_catalog_entry_is_skipped_and_the_rest_works() {
    let lab = Lab::new();
    lab.refresh();
    let path = lab.sb.home().join("catalog.toml");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(
        &path,
        format!("{text}\n[[archive]]\nversion = \"9.9.9.9\"\ncuda = \"12\"\nplatform = \"linux-x86_64\"\npath = \"x.tar.xz\"\nhashes = [{{ sha256 = \"feed\" }}]\nmood = \"odd\"\n"),
    )
    .unwrap();
    lab.install("8.9.7.29", &["--platform", "linux-x86_64", "--cuda", "12"])
        .ok()
        .stderr_has(&[
            "warning: user catalog",
            "skipped archive 1 (9.9.9.9 cuda12 linux-x86_64)",
            "unknown field `mood` ignored",
        ]);
    let r = lab
        .run(&[
            "list",
            "--remote",
            "--platform",
            "linux-x86_64",
            "--cuda",
            "12",
        ])
        .ok();
    let r = r.stderr_has(&["skipped archive 1"]);
    assert!(
        r.stdout()
            .lines()
            .any(|l| l.starts_with("8.9.7.29_cuda12 ") && l.ends_with("installed")),
        "{}",
        r.describe()
    );
    assert!(!r.stdout().contains("9.9.9.9"));
}

#[test]
fn list_remote_shows_the_catalog_with_installed_releases_marked() {
    let lab = Lab::new();
    let r = lab
        .run(&["list", "--remote", "--platform", "windows-x86_64"])
        .ok();
    let out = r.stdout();
    let header = out.lines().next().unwrap();
    assert!(
        header.starts_with("RELEASE") && header.contains("SHA-256"),
        "{out}"
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("7.1.3_cuda8.0 "))
        .unwrap();
    assert!(
        line.contains("windows-x86_64") && line.contains("none"),
        "{line}"
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("8.1.0.77_cuda11.2 "))
        .unwrap();
    assert!(line.contains("f5a23402ebed"), "{line}");
    r.stderr_has(&["1 without a published SHA-256", "embedded catalog"]);

    let rows = lab
        .run(&[
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
    let rows = rows.as_array().unwrap();
    assert!(rows.iter().all(|r| r["cuda"] == "12"));
    let r897 = rows.iter().find(|r| r["id"] == "8.9.7.29_cuda12").unwrap();
    assert_eq!(r897["installed"], Value::Bool(false));
    assert_eq!(r897["size"], Value::from(864984964u64));
    assert_eq!(
        r897["supported_toolkits"],
        serde_json::json!(["12.2", "12.1", "12.0"])
    );
    assert_eq!(r897["min_compute"], "5.0");
    assert_eq!(
        r897["urls"][0],
        "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"
    );
    // A release only PyPI has: its wheel for the platform, with its identity.
    let pip = rows.iter().find(|r| r["id"] == "9.11.0.98_cuda12").unwrap();
    assert_eq!(pip["kind"], "pip");
    assert_eq!(pip["name"], "pip:nvidia-cudnn-cu12==9.11.0.98");
    assert_eq!(pip["platform"], "linux-x86_64");
    assert_eq!(
        pip["file"],
        "nvidia_cudnn_cu12-9.11.0.98-py3-none-manylinux_2_27_x86_64.whl"
    );
    assert!(
        pip["urls"][0]
            .as_str()
            .unwrap()
            .starts_with("https://files.pythonhosted.org/packages/")
    );
    assert_eq!(
        pip["sha256"].as_array().unwrap()[0]["sha256"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    assert!(pip["size"].as_u64().unwrap() > 100_000_000);

    // After a refresh and an install: the user catalog's entry, marked installed.
    lab.refresh();
    lab.install("8.9.7.29", &["--platform", "linux-x86_64", "--cuda", "12"])
        .ok();
    let rows = lab
        .run(&[
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
    let r897 = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "8.9.7.29_cuda12")
        .unwrap()
        .clone();
    assert_eq!(r897["installed"], Value::Bool(true));
    assert_eq!(r897["origin"], "user");
    assert_eq!(
        r897["sha256"].as_array().unwrap().len(),
        2,
        "lab hash and NVIDIA's: {r897}"
    );
    one_error(
        lab.run(&[
            "list",
            "--remote",
            "--platform",
            "linux-x86_64",
            "--cuda",
            "6.0",
        ])
        .code_is(3),
    );
    one_error(
        lab.run(&["list", "--remote", "--platform", "macos"])
            .code_is(2),
    );
}

#[test]
fn manifest_refresh_reads_files_and_folders_and_refuses_what_is_not_an_index() {
    let lab = Lab::new();
    let dir = lab.sb.work().join("idx");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("redistrib_9.1.0.json"), &lab.index_9_1).unwrap();
    let r = lab
        .run(&["manifest", "refresh", "--from", "idx", "--json"])
        .ok()
        .json();
    assert_eq!(r["archives"], 2);
    assert_eq!(r["read"][0]["version"], "9.1.0.70");
    assert!(
        lab.server
            .requests()
            .iter()
            .all(|q| !q.path.ends_with(".json")),
        "read from the folder"
    );

    let before = fs::read(lab.sb.home().join("catalog.toml")).unwrap();
    fs::write(
        lab.sb.work().join("login.json"),
        "<!DOCTYPE html><html>sign in</html>",
    )
    .unwrap();
    one_error(
        lab.run(&["manifest", "refresh", "--from", "login.json"])
            .code_is(4),
    )
    .stderr_has(&["not an NVIDIA redistrib_*.json index"]);
    one_error(
        lab.run(&["manifest", "refresh", "--from", "missing.json"])
            .code_is(3),
    );
    let url404 = lab.server.url(&format!("{REDIST}redistrib_0.0.0.json"));
    one_error(
        lab.run(&["manifest", "refresh", "--from", &url404])
            .code_is(6),
    )
    .stderr_has(&["HTTP 404"]);
    assert_eq!(
        fs::read(lab.sb.home().join("catalog.toml")).unwrap(),
        before,
        "a failed refresh writes nothing"
    );
}
