//! Wheels straight from a package index (issue 27): a 127.0.0.1 index
//! serving the PEP 691 JSON (or PEP 503 HTML) file list of small fixture
//! wheels under NVIDIA's real package names and platform tags. `install
//! VERSION` with no Python anywhere on PATH; tampered, unhashed, yanked,
//! missing and redirected files refused with nothing kept; `lock` records
//! every platform from the file list alone; a second home on another
//! platform installs exactly the locked bytes; `lock --check`.

use std::path::{Path, PathBuf};

use crate::common::http::TestServer;
use crate::common::{Sandbox, fixtures};

/// NVIDIA's platform tags, as the real wheels carry them.
const TAGS: [&str; 3] = [
    "manylinux_2_27_x86_64",
    "manylinux_2_27_aarch64",
    "win_amd64",
];

/// A version no real release has, known to the sandbox's catalog only as a wheel.
const V: &str = "9.30.0.1";

/// One fixture wheel on the index.
struct Wheel {
    name: String,
    bytes: Vec<u8>,
    sha: String,
}

/// An index on 127.0.0.1 serving `package`'s wheels of [`V`] for [`TAGS`].
struct Index {
    server: TestServer,
    package: String,
    wheels: Vec<Wheel>,
}

impl Index {
    fn new(package: &str) -> Index {
        Index::with_versions(package, &[V])
    }

    /// An index serving the wheels of `versions` (each for every tag).
    fn with_versions(package: &str, versions: &[&str]) -> Index {
        let dir = tempfile::tempdir().unwrap();
        let module = package.replace('-', "_");
        let wheels = versions
            .iter()
            .flat_map(|v| TAGS.iter().map(move |tag| (*v, *tag)))
            .map(|(v, tag)| {
                let path = fixtures::wheel_tagged(&module, v, tag).write(dir.path());
                let bytes = std::fs::read(&path).unwrap();
                Wheel {
                    name: path.file_name().unwrap().to_string_lossy().into_owned(),
                    sha: sha256(&bytes),
                    bytes,
                }
            })
            .collect();
        let index = Index {
            server: TestServer::start(),
            package: package.to_string(),
            wheels,
        };
        for w in &index.wheels {
            index
                .server
                .file(&format!("files/{}", w.name), w.bytes.clone());
        }
        index.serve_json(|_, f| f);
        index
    }

    /// `cudnnm install V --cuda 12 --platform linux-x86_64 --index-url` this index, in `sb`.
    fn install_linux(&self, sb: &Sandbox) -> crate::common::Run {
        install_linux_from(sb, &self.url())
    }

    /// The index's base URL (`--index-url`).
    fn url(&self) -> String {
        self.server.url("simple/")
    }

    fn page(&self) -> String {
        format!("simple/{}/", self.package)
    }

    /// Serves the PEP 691 page, each file's JSON object passed through `edit`.
    fn serve_json(&self, edit: impl Fn(&Wheel, String) -> String) {
        let files: Vec<String> = self
            .wheels
            .iter()
            .map(|w| {
                edit(
                    w,
                    format!(
                        r#"{{"filename":"{}","url":"../../files/{}","hashes":{{"sha256":"{}"}},"size":{}}}"#,
                        w.name,
                        w.name,
                        w.sha,
                        w.bytes.len()
                    ),
                )
            })
            .collect();
        let body = format!(
            r#"{{"meta":{{"api-version":"1.1"}},"name":"{}","files":[{}]}}"#,
            self.package,
            files.join(",")
        );
        self.server.route(
            &self.page(),
            crate::common::http::Route {
                status: 200,
                body: body.into_bytes(),
                content_type: "application/vnd.pypi.simple.v1+json".into(),
                ..Default::default()
            },
        );
    }

    fn wheel(&self, tag: &str) -> &Wheel {
        self.wheels.iter().find(|w| w.name.contains(tag)).unwrap()
    }

    /// Every path requested so far.
    fn paths(&self) -> Vec<String> {
        self.server.requests().into_iter().map(|r| r.path).collect()
    }

    /// GETs of the wheel with `tag`.
    fn fetched(&self, tag: &str) -> usize {
        self.server.hits(&format!("files/{}", self.wheel(tag).name))
    }
}

/// `cudnnm install V --cuda 12 --platform linux-x86_64 --index-url URL`, in `sb`.
fn install_linux_from(sb: &Sandbox, url: &str) -> crate::common::Run {
    sb.run([
        "install",
        V,
        "--cuda",
        "12",
        "--platform",
        "linux-x86_64",
        "--index-url",
        url,
    ])
}

fn sha256(bytes: &[u8]) -> String {
    cudnnm::hash::sha256_bytes(bytes).to_string()
}

/// A sandbox whose catalog knows [`V`] only as a wheel of each package in
/// `packages` (`nvidia-cudnn-cu12` → CUDA 12), whose PATH holds no
/// program at all (no python3, no pip, no nvidia-smi) and which reads no
/// pip configuration.
fn sandbox(packages: &[&str]) -> Sandbox {
    let mut sb = Sandbox::new();
    let empty = sb.root().join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    sb.set_env("PATH", &empty);
    sb.set_env("PIP_CONFIG_FILE", "/dev/null");
    sb.set_env("CUDA_VISIBLE_DEVICES", "");
    std::fs::create_dir_all(sb.home()).unwrap();
    let mut catalog = String::from("schema = 1\n");
    for p in packages {
        let cuda = p.rsplit("-cu").next().unwrap();
        catalog.push_str(&format!(
            "\n[[wheel]]\npackage = \"{p}\"\ncuda = \"{cuda}\"\nsource = \"test\"\nversions = [\"{V}\"]\n"
        ));
    }
    std::fs::write(sb.home().join("catalog.toml"), catalog).unwrap();
    sb
}

fn receipt(home: &Path, cuda: &str) -> String {
    std::fs::read_to_string(home.join(format!("store/cuda-{cuda}/{V}/receipt.toml")))
        .unwrap_or_default()
}

/// Release folders in the store and files in the download cache (not
/// counting the cache's empty lock files).
fn kept(home: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let store: Vec<PathBuf> = walk(&home.join("store"))
        .into_iter()
        .filter(|p| p.ends_with("receipt.toml"))
        .collect();
    let cache: Vec<String> = std::fs::read_dir(home.join("downloads"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with(".lock-") && !n.starts_with(".use-"))
        .collect();
    (store, cache)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn install_by_version_fetches_the_wheel_from_the_index_with_no_python_on_path() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let sb = sandbox(&["nvidia-cudnn-cu12"]);
    let x86 = ix.wheel("x86_64");
    ix.install_linux(&sb).ok().stderr_has(&[&format!(
        "cuDNN {V} for CUDA 12 is published as a wheel: fetching {} from {}",
        x86.name,
        ix.url()
    )]);
    let r = receipt(&sb.home(), "12");
    assert!(r.contains(&x86.sha), "{r}");
    // The index page, then the one wheel: nothing for other platforms.
    assert_eq!(
        ix.paths(),
        [
            "/simple/nvidia-cudnn-cu12/".to_string(),
            format!("/files/{}", x86.name)
        ]
    );
    // Kept in the download cache by its SHA-256.
    assert!(kept(&sb.home()).1.contains(&x86.sha));
}

#[test]
fn a_jit_wheel_from_the_index_is_the_jit_build_in_the_store_and_the_cache() {
    let ix = Index::new("nvidia-cudnn-jit-cu12");
    let sb = sandbox(&["nvidia-cudnn-jit-cu12"]);
    let x86 = ix.wheel("x86_64");
    let spec = format!("{V}+jit");
    let args = [
        "install",
        &spec,
        "--cuda",
        "12",
        "--platform",
        "linux-x86_64",
    ];
    sb.run(args.into_iter().chain(["--index-url", &ix.url()]))
        .ok();
    assert!(
        sb.home()
            .join(format!("store/cuda-12/{V}+jit/receipt.toml"))
            .is_file()
    );
    // `cache` names the download by the release it is, JIT build included.
    let cache: serde_json::Value =
        serde_json::from_str(&sb.run(["cache", "--json"]).ok().stdout()).unwrap();
    let text = cache.to_string();
    assert!(text.contains(&x86.sha), "{text}");
    assert!(text.contains(&format!("\"{V}_cuda12+jit\"")), "{text}");
}

#[test]
fn the_index_comes_from_pips_configuration_file_without_running_pip() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let mut sb = sandbox(&["nvidia-cudnn-cu12"]);
    let conf = sb.root().join("pip.conf");
    std::fs::write(
        &conf,
        format!(
            "[global]\nindex-url = http://127.0.0.1:1/nowhere/\n[download]\nindex-url = {}\n",
            ix.url()
        ),
    )
    .unwrap();
    sb.set_env("PIP_CONFIG_FILE", &conf);
    sb.run(["install", V, "--cuda", "12", "--platform", "linux-x86_64"])
        .ok();
    assert_eq!(ix.fetched("x86_64"), 1);
    // CUDNNM_INDEX_URL comes before pip's: a closed index fails (exit 6).
    sb.set_env("CUDNNM_INDEX_URL", "http://127.0.0.1:1/simple/");
    sb.run([
        "install",
        V,
        "--cuda",
        "12",
        "--force",
        "--platform",
        "linux-x86_64",
    ])
    .code_is(6)
    .stderr_has(&[
        "could not read the package index http://127.0.0.1:1/simple/ for nvidia-cudnn-cu12",
    ]);
}

#[test]
fn an_index_named_for_cudnnm_serves_the_wheel_of_a_release_nvidia_also_ships_as_an_archive() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let mut sb = sandbox(&["nvidia-cudnn-cu12"]);
    // The catalog lists the same release as an NVIDIA archive too, on the
    // same server (the mirror), where nothing answers.
    let archive = format!("lab/cudnn-linux-x86_64-{V}_cuda12-archive.tar.xz");
    let cat = sb.home().join("catalog.toml");
    let text = std::fs::read_to_string(&cat).unwrap();
    std::fs::write(
        &cat,
        format!(
            "{text}\n[[archive]]\nversion = \"{V}\"\ncuda = \"12\"\nplatform = \"linux-x86_64\"\npath = \"{archive}\"\nsource = \"lab share\"\nhashes = [{{ sha256 = \"{}\", source = \"lab\" }}]\n",
            "0".repeat(64)
        ),
    )
    .unwrap();
    let mirror = ix.server.url("");
    let install = |sb: &Sandbox, extra: &[&str]| {
        let mut args = vec![
            "install",
            V,
            "--cuda",
            "12",
            "--force",
            "--platform",
            "linux-x86_64",
            "--mirror",
            &mirror,
        ];
        args.extend_from_slice(extra);
        sb.run(args)
    };
    // --index-url: the wheel from that index, the archive never asked for.
    install(&sb, &["--index-url", &ix.url()]).ok();
    assert_eq!(ix.fetched("x86_64"), 1);
    assert!(receipt(&sb.home(), "12").contains(&ix.wheel("x86_64").sha));
    assert_eq!(ix.server.hits(&archive), 0);
    // CUDNNM_INDEX_URL alike.
    sb.set_env("CUDNNM_INDEX_URL", ix.url());
    install(&sb, &[]).ok();
    // (the wheel itself from the download cache, by its SHA-256)
    assert_eq!(ix.server.hits(&ix.page()), 2);
    assert_eq!(ix.server.hits(&archive), 0);
    // pip's own index setting does not move the pick off NVIDIA's archive.
    sb.remove_env("CUDNNM_INDEX_URL");
    sb.set_env("PIP_INDEX_URL", ix.url());
    install(&sb, &[]).code_is(6);
    assert_eq!(ix.server.hits(&archive), 1);
    assert_eq!(ix.server.hits(&ix.page()), 2);
    // A named index without the package: NVIDIA's archive is the way, said.
    let empty = crate::common::http::TestServer::start();
    install(&sb, &["--index-url", &empty.url("simple/")])
        .code_is(6)
        .stderr_has(&["; fetching NVIDIA's archive of the release instead"]);
    assert_eq!(ix.server.hits(&archive), 2);
}

#[test]
fn a_tampered_wheel_behind_the_same_index_entry_is_refused_with_nothing_kept() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let sb = sandbox(&["nvidia-cudnn-cu12"]);
    let x86 = ix.wheel("x86_64");
    let mut other = x86.bytes.clone();
    let n = other.len();
    other[n / 2] ^= 0xff;
    ix.server.file(&format!("files/{}", x86.name), other);
    sb.run(["install", V, "--cuda", "12", "--platform", "linux-x86_64", "--index-url", &ix.url()])
        .code_is(4)
        .stderr_has(&[
            &format!("error: {} from {}files/{} does not match its published SHA-256; the download was discarded", x86.name, ix.server.url(""), x86.name),
            &format!("expected {}", x86.sha),
            // The hint speaks of the index, not of NVIDIA or --sha256.
            &format!("help: the package index {} serves other bytes under {}", ix.url(), x86.name),
        ]);
    assert_eq!(kept(&sb.home()), (vec![], vec![]));
}

#[test]
fn an_html_index_with_sha256_fragments_serves_as_well_and_a_login_page_does_not() {
    let ix = Index::new("nvidia-cudnn-cu11");
    let sb = sandbox(&["nvidia-cudnn-cu11"]);
    let links: Vec<String> = ix
        .wheels
        .iter()
        .map(|w| {
            format!(
                "<a href=\"/files/{}#sha256={}\">{}</a><br/>",
                w.name, w.sha, w.name
            )
        })
        .collect();
    ix.server.html(
        &ix.page(),
        &format!(
            "<!DOCTYPE html><html><body>{}</body></html>",
            links.join("\n")
        ),
    );
    sb.run([
        "install",
        V,
        "--cuda",
        "11",
        "--platform",
        "linux-x86_64",
        "--index-url",
        &ix.url(),
    ])
    .ok();
    assert!(receipt(&sb.home(), "11").contains(&ix.wheel("x86_64").sha));
    // A page that is neither form (a proxy's login page): refused, naming the index.
    ix.server
        .html(&ix.page(), "<html><body><form>Sign in</form></body></html>");
    let r = sb
        .run(["install", V, "--cuda", "11", "--force", "--platform", "windows-x86_64", "--index-url", &ix.url()])
        .code_is(4)
        .stderr_has(&[&format!(
            "error: the package index {} answered for nvidia-cudnn-cu11 with a page that is neither PEP 691 JSON nor a PEP 503 link list",
            ix.url()
        )]);
    assert!(!r.stderr().contains("Sign in"), "{}", r.describe());
}

#[test]
fn an_index_without_a_hash_with_only_yanked_files_or_without_the_project_is_refused() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let sb = sandbox(&["nvidia-cudnn-cu12"]);
    let x86 = ix.wheel("x86_64").name.clone();
    let install_as = |spec: &str| {
        sb.run([
            "install",
            spec,
            "--cuda",
            "12",
            "--platform",
            "linux-x86_64",
            "--index-url",
            &ix.url(),
        ])
    };
    let install = || install_as(V);
    ix.serve_json(|w, f| {
        if w.name == x86 {
            f.replace(&format!(r#""sha256":"{}""#, w.sha), "")
        } else {
            f
        }
    });
    install().code_is(4).stderr_has(&[
        &format!(
            "error: the package index {} publishes no SHA-256 for {x86}; refusing to fetch a wheel nothing can check",
            ix.url()
        ),
        &format!("or fetch it with your pip: `cudnnm install pip:nvidia-cudnn-cu12=={V}`"),
    ]);
    // Only yanked files: a prefix never takes one (PEP 592), and nothing
    // else matches here (exit 3, as for a release the catalog knows is yanked) ...
    ix.serve_json(|_, f| format!("{},\"yanked\":\"broken\"}}", f.trim_end_matches('}')));
    install_as("9.30").code_is(3).stderr_has(&[
        &format!(
            "warning: the package index {} marks every wheel of nvidia-cudnn-cu12=={V} for linux-x86_64 yanked; passing over it",
            ix.url()
        ),
        "error: cuDNN 9.30 is not in the catalog for linux-x86_64",
    ]);
    ix.server.status(&ix.page(), 404);
    install().code_is(3).stderr_has(&[
        &format!(
            "error: could not read the package index {} for nvidia-cudnn-cu12",
            ix.url()
        ),
        "has no project 'nvidia-cudnn-cu12'",
    ]);
    // Not one wheel was requested, nothing kept.
    assert_eq!(ix.fetched("x86_64"), 0);
    assert_eq!(kept(&sb.home()), (vec![], vec![]));
    // ... the version named exactly does, saying so (as the catalog's yanked releases).
    ix.serve_json(|_, f| format!("{},\"yanked\":\"broken\"}}", f.trim_end_matches('}')));
    install().ok().stderr_has(&[&format!(
        "warning: the package index {} marks {x86} yanked; installing it because {V} was named exactly",
        ix.url()
    )]);
    assert_eq!(ix.fetched("x86_64"), 1);
}

// Unix only, as `hostile::a_redirect_from_https_to_http_is_refused`: on
// Windows the certificate verifier asks the system store, which the test
// CA (given by SSL_CERT_FILE) is not in, so the index itself is refused
// before any redirect.
#[cfg(unix)]
#[test]
fn a_redirect_off_https_is_refused_with_nothing_kept() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let mut sb = sandbox(&["nvidia-cudnn-cu12"]);
    let front = crate::common::tls::TlsFront::start(ix.server.port(), sb.root());
    sb.set_env("SSL_CERT_FILE", &front.ca_pem);
    let x86 = ix.wheel("x86_64").name.clone();
    // The https index links its file over https, which redirects to plain http.
    ix.serve_json(|w, f| {
        f.replace(
            &format!("../../files/{}", w.name),
            &format!("../../moved/{}", w.name),
        )
    });
    ix.server.redirect(
        &format!("moved/{x86}"),
        &ix.server.url(&format!("files/{x86}")),
    );
    install_linux_from(&sb, &front.url("simple/"))
        .code_is(4)
        .stderr_has(&[&format!(
            "error: refused the redirect from {} to {}: it leaves HTTPS",
            front.url(&format!("moved/{x86}")),
            ix.server.url(&format!("files/{x86}"))
        )]);
    assert_eq!(ix.fetched("x86_64"), 0);
    assert_eq!(kept(&sb.home()), (vec![], vec![]));
}

/// Writes the pin `spec` in `sb`'s work folder.
fn pin(sb: &Sandbox, spec: &str) {
    std::fs::write(sb.work().join(".cudnn-version"), format!("{spec}\n")).unwrap();
}

fn lock_text(sb: &Sandbox) -> String {
    std::fs::read_to_string(sb.work().join(".cudnn-version.lock")).unwrap()
}

#[test]
fn lock_on_linux_records_every_platform_from_the_index_and_a_second_home_installs_the_locked_bytes()
{
    let ix = Index::new("nvidia-cudnn-cu13");
    let sb = sandbox(&["nvidia-cudnn-cu13"]);
    pin(&sb, "9.30.x");
    sb.run(["lock", "--index-url", &ix.url()]).ok().stderr_has(&[&format!(
        "locking cuDNN {V}_cuda13 from the wheels {} publishes for windows-x86_64, linux-x86_64, linux-sbsa (nothing downloaded)",
        ix.url()
    )]);
    let lock = lock_text(&sb);
    for (platform, tag) in [
        ("linux-x86_64", "x86_64"),
        ("linux-sbsa", "aarch64"),
        ("windows-x86_64", "win_amd64"),
    ] {
        let w = ix.wheel(tag);
        let entry = format!(
            "[platform.{platform}]\npip = \"nvidia-cudnn-cu13=={V}\"\nwheel = \"{}\"\nsha256 = \"{}\"\nsize = {}\n",
            w.name,
            w.sha,
            w.bytes.len()
        );
        assert!(lock.contains(&entry), "{entry}\nnot in\n{lock}");
    }
    // Only the index page was read: no wheel.
    assert_eq!(ix.paths(), ["/simple/nvidia-cudnn-cu13/"]);
    // `--platform`, repeatable, keeps those only.
    sb.run([
        "lock",
        "--index-url",
        &ix.url(),
        "--platform",
        "linux-sbsa",
        "--platform",
        "windows-x86_64",
    ])
    .ok();
    let two = lock_text(&sb);
    assert!(
        !two.contains("[platform.linux-x86_64]") && two.contains("[platform.linux-sbsa]"),
        "{two}"
    );
    sb.run(["lock", "--index-url", &ix.url()]).ok();

    // A second home (an Arm server) installs exactly the locked bytes.
    let sb2 = sandbox(&["nvidia-cudnn-cu13"]);
    std::fs::copy(
        sb.work().join(".cudnn-version"),
        sb2.work().join(".cudnn-version"),
    )
    .unwrap();
    std::fs::copy(
        sb.work().join(".cudnn-version.lock"),
        sb2.work().join(".cudnn-version.lock"),
    )
    .unwrap();
    sb2.run([
        "install",
        "--locked",
        "--platform",
        "linux-sbsa",
        "--index-url",
        &ix.url(),
    ])
    .ok();
    let arm = ix.wheel("aarch64");
    assert!(receipt(&sb2.home(), "13").contains(&arm.sha));
    assert_eq!((ix.fetched("aarch64"), ix.fetched("x86_64")), (1, 0));
    // The index now serves other bytes under that name: the locked install refuses them.
    let sb3 = sandbox(&["nvidia-cudnn-cu13"]);
    std::fs::copy(
        sb.work().join(".cudnn-version"),
        sb3.work().join(".cudnn-version"),
    )
    .unwrap();
    std::fs::copy(
        sb.work().join(".cudnn-version.lock"),
        sb3.work().join(".cudnn-version.lock"),
    )
    .unwrap();
    let other = sha256(b"rebuilt");
    ix.serve_json(|w, f| {
        if w.name == arm.name {
            f.replace(&w.sha, &other)
        } else {
            f
        }
    });
    sb3.run([
        "install",
        "--platform",
        "linux-sbsa",
        "--index-url",
        &ix.url(),
    ])
    .code_is(4)
    .stderr_has(&[&format!(
        "no longer serves {} with the locked SHA-256 {}",
        arm.name, arm.sha
    )]);
    assert_eq!(kept(&sb3.home()), (vec![], vec![]));
}

#[test]
fn lock_check_fails_when_the_lock_is_missing_stale_or_not_served_and_changes_nothing() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let sb = sandbox(&["nvidia-cudnn-cu12"]);
    pin(&sb, "9.30.x");
    let check = || sb.run(["lock", "--check", "--index-url", &ix.url()]);
    check().code_is(4).stderr_has(&[
        "error: lock --check: there is no lock file",
        "help: run `cudnnm lock`",
    ]);
    sb.run(["lock", "--index-url", &ix.url()]).ok();
    let locked = lock_text(&sb);
    check().ok().stderr_has(&[&format!(
        "is up to date: {V}_cuda12 (pin 9.30.x) for linux-sbsa, linux-x86_64, windows-x86_64"
    )]);
    // The index's file list only, never a wheel.
    assert!(
        ix.paths().iter().all(|p| p == "/simple/nvidia-cudnn-cu12/"),
        "{:?}",
        ix.paths()
    );
    // The pin changes: the lock is stale.
    pin(&sb, "9.31");
    check().code_is(4).stderr_has(&[&format!(
        "is stale: it was written for the pin 9.30.x and names {V}_cuda12; the pin is now 9.31"
    )]);
    pin(&sb, "9.30.x");
    check().ok();
    // The index no longer serves the locked Windows wheel's bytes.
    let win = ix.wheel("win_amd64");
    ix.serve_json(|w, f| {
        if w.name == win.name {
            f.replace(&w.sha, &sha256(b"x"))
        } else {
            f
        }
    });
    check().code_is(4).stderr_has(&[&format!(
        "names bytes for windows-x86_64 that the package index {} no longer serves ({} with SHA-256 {})",
        ix.url(),
        win.name,
        win.sha
    )]);
    // An index without the project at all (404) serves none of its bytes: 4 too.
    let other = Index::new("nvidia-cudnn-cu13");
    sb.run(["lock", "--check", "--index-url", &other.url()])
        .code_is(4)
        .stderr_has(&[
            "no longer serves (nvidia_cudnn_cu12-",
            "it has no project nvidia-cudnn-cu12)",
        ]);
    // Yanked since it was locked: still the locked bytes (a lock may name a
    // yanked file, PEP 592), so the check passes, saying so.
    ix.serve_json(|_, f| format!("{},\"yanked\":\"broken\"}}", f.trim_end_matches('}')));
    check().ok().stderr_has(&[&format!(
        "warning: the package index {} now marks the locked {} (windows-x86_64) yanked",
        ix.url(),
        win.name
    )]);
    assert_eq!(lock_text(&sb), locked);
    assert_eq!(kept(&sb.home()), (vec![], vec![]));
}

#[test]
fn lock_leaves_out_a_platform_whose_wheels_the_index_yanked_and_a_prefix_never_takes_them() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let sb = sandbox(&["nvidia-cudnn-cu12"]);
    pin(&sb, "9.30.x");
    let arm = ix.wheel("aarch64").name.clone();
    let yank = |f: String| format!("{},\"yanked\":\"broken\"}}", f.trim_end_matches('}'));
    ix.serve_json(move |w, f| if w.name == arm { yank(f) } else { f });
    let arm = ix.wheel("aarch64").name.clone();
    sb.run(["lock", "--index-url", &ix.url()]).ok().stderr_has(&[
        &format!(
            "warning: the package index {} marks every wheel of nvidia-cudnn-cu12=={V} for linux-sbsa as yanked ({arm}); linux-sbsa is left out of the lock",
            ix.url()
        ),
        "for linux-x86_64, windows-x86_64 in '",
    ]);
    assert!(!lock_text(&sb).contains("linux-sbsa"));
    // Asked for by name: a prefix never takes a yanked file, and no other
    // version matches (exit 3, as `install`).
    sb.run(["lock", "--platform", "linux-sbsa", "--index-url", &ix.url()])
        .code_is(3)
        .stderr_has(&[&format!(
            "warning: the package index {} marks every wheel of nvidia-cudnn-cu12=={V} for linux-sbsa yanked; passing over it (`cudnnm manifest refresh` tells the catalog)",
            ix.url()
        )]);
    // And this machine's own platform is never left out: its yanked version
    // is passed over, and with nothing else the lock fails (exit 3).
    let here = ix
        .wheel(if cfg!(windows) { "win_amd64" } else { "x86_64" })
        .name
        .clone();
    ix.serve_json(move |w, f| if w.name == here { yank(f) } else { f });
    let before = lock_text(&sb);
    sb.run(["lock", "--index-url", &ix.url()])
        .code_is(3)
        .stderr_has(&["yanked; passing over it"]);
    assert_eq!(
        lock_text(&sb),
        before,
        "a failed lock leaves the lock as it was"
    );
}

/// PyPI yanked a release after the catalog was written: a prefix passes
/// over it (the index's yank, as the catalog's), naming it; the version
/// named in full still takes it.
#[test]
fn a_prefix_passes_over_a_version_only_the_index_has_yanked() {
    const OLD: &str = "9.30.0.0";
    let ix = Index::with_versions("nvidia-cudnn-cu12", &[V, OLD]);
    let sb = sandbox(&["nvidia-cudnn-cu12"]);
    std::fs::write(
        sb.home().join("catalog.toml"),
        format!(
            "schema = 1\n\n[[wheel]]\npackage = \"nvidia-cudnn-cu12\"\ncuda = \"12\"\nsource = \"test\"\nversions = [\"{V}\", \"{OLD}\"]\n"
        ),
    )
    .unwrap();
    let yank = |f: String| format!("{},\"yanked\":\"broken\"}}", f.trim_end_matches('}'));
    ix.serve_json(move |w, f| if w.name.contains(V) { yank(f) } else { f });
    let install = |spec: &str| {
        let args = [
            "install",
            spec,
            "--cuda",
            "12",
            "--platform",
            "linux-x86_64",
        ];
        sb.run(args.into_iter().chain(["--index-url", &ix.url()]))
    };
    // `lock` passes over it the same way (nothing installed yet).
    pin(&sb, "9.30");
    sb.run([
        "lock",
        "--platform",
        "linux-x86_64",
        "--index-url",
        &ix.url(),
    ])
    .ok()
    .stderr_has(&[
        "yanked; passing over it",
        &format!("locked {OLD}_cuda12 (pin 9.30)"),
    ]);
    install("9.30").ok().stderr_has(&[
        &format!(
            "warning: the package index {} marks every wheel of nvidia-cudnn-cu12=={V} for linux-x86_64 yanked; passing over it",
            ix.url()
        ),
        &format!("installed cuDNN {OLD} for CUDA 12"),
    ]);
    assert!(
        sb.home()
            .join(format!("store/cuda-12/{OLD}/receipt.toml"))
            .is_file()
    );
    assert!(!sb.home().join(format!("store/cuda-12/{V}")).exists());
    // One read of the index page for each pick, no wheel of the yanked version.
    assert!(
        ix.paths().iter().all(|p| !p.contains(V)),
        "{:?}",
        ix.paths()
    );
    install(V).ok().stderr_has(&[&format!(
        "marks nvidia_cudnn_cu12-{V}-py3-none-manylinux_2_27_x86_64.whl yanked; installing it because {V} was named exactly"
    )]);
    assert!(
        sb.home()
            .join(format!("store/cuda-12/{V}/receipt.toml"))
            .is_file()
    );
}

#[test]
fn list_remote_checks_the_catalogs_wheels_against_the_index_named() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let sb = sandbox(&[]);
    // The catalog's file list, as PyPI's: the fixture wheels' names (other
    // hashes and URLs), and one version this index does not carry.
    let gone = "nvidia_cudnn_cu12-9.30.0.2-py3-none-manylinux_2_27_x86_64.whl";
    let pypi = |name: &str| {
        format!(
            "  {{ url = \"https://files.pythonhosted.org/packages/ab/cd/{name}\", size = 123, sha256 = \"{}\" }},\n",
            "ab".repeat(32)
        )
    };
    let mut files = String::new();
    for w in &ix.wheels {
        files.push_str(&pypi(&w.name));
    }
    files.push_str(&pypi(gone));
    std::fs::write(
        sb.home().join("catalog.toml"),
        format!(
            "schema = 1\n\n[[wheel]]\npackage = \"nvidia-cudnn-cu12\"\nsource = \"test\"\nfiles = [\n{files}]\n"
        ),
    )
    .unwrap();
    // No index named: the catalog alone, nothing asked of any index.
    let plain = sb
        .run(["list", "--remote", "--platform", "all", "--json"])
        .ok();
    assert!(plain.stdout().contains("files.pythonhosted.org"));
    assert!(ix.paths().is_empty(), "{:?}", ix.paths());
    let listed = || -> Vec<serde_json::Value> {
        let args = ["list", "--remote", "--platform", "all", "--json"];
        let out = sb
            .run(args.into_iter().chain(["--index-url", &ix.url()]))
            .ok();
        serde_json::from_str(&out.stdout()).unwrap()
    };
    let rows = listed();
    let row = |file: &str| {
        rows.iter()
            .find(|r| r["file"] == file)
            .unwrap_or_else(|| panic!("{file}: {rows:?}"))
    };
    for w in &ix.wheels {
        let r = row(&w.name);
        assert_eq!(r["on_index"], true);
        assert_eq!(r["sha256"][0]["sha256"], w.sha.as_str());
        assert_eq!(r["size"], w.bytes.len());
        assert_eq!(r["urls"][0], ix.server.url(&format!("files/{}", w.name)));
    }
    assert_eq!(row(gone)["on_index"], false);
    assert!(ix.wheels.iter().all(|w| row(&w.name)["yanked"].is_null()));
    // A wheel the index yanked (the catalog does not know it) is marked so.
    let win = ix.wheel("win_amd64").name.clone();
    let yanked = win.clone();
    ix.serve_json(move |w, f| {
        if w.name == yanked {
            format!("{},\"yanked\":\"broken\"}}", f.trim_end_matches('}'))
        } else {
            f
        }
    });
    let again = listed();
    let marked: Vec<&str> = again
        .iter()
        .filter(|r| !r["yanked"].is_null())
        .filter_map(|r| r["file"].as_str())
        .filter(|f| ix.wheels.iter().any(|w| w.name == *f))
        .collect();
    assert_eq!(marked, [win.as_str()]);
    // Only pages read (the embedded catalog's other packages' too: this
    // index has none of them), no wheel fetched.
    assert!(
        ix.paths()
            .contains(&"/simple/nvidia-cudnn-cu12/".to_string())
    );
    assert!(
        ix.paths()
            .iter()
            .all(|p| p.starts_with("/simple/nvidia-cudnn-")),
        "{:?}",
        ix.paths()
    );
    // The table says which rows the index lacks.
    sb.run([
        "ls-remote",
        "--platform",
        "linux-x86_64",
        "--index-url",
        &ix.url(),
    ])
    .ok()
    .stdout_has(&["pip:nvidia-cudnn-cu12==9.30.0.2  not on the index"])
    .stderr_has(&[&format!(
        "wheels as the package index {} serves them (",
        ix.url()
    )]);
    // A named index that does not answer fails, naming it (exit 6).
    sb.run([
        "list",
        "--remote",
        "--index-url",
        "http://127.0.0.1:1/simple/",
    ])
    .code_is(6)
    .stderr_has(&["could not read the package index http://127.0.0.1:1/simple/"]);
}

#[test]
fn manifest_refresh_reads_the_cudnn_packages_of_the_index_named() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let sb = sandbox(&[]);
    std::fs::remove_file(sb.home().join("catalog.toml")).unwrap();
    // NVIDIA's listing on the mirror (the same server).
    let redist = "compute/cudnn/redist/";
    ix.server.file(
        &format!("{redist}redistrib_9.1.0.json"),
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/catalog/redist/redistrib_9.1.0.json"),
        )
        .unwrap(),
    );
    ix.server.html(
        redist,
        r#"<html><body><a href="redistrib_9.1.0.json">redistrib_9.1.0.json</a></body></html>"#,
    );
    let mirror = ix.server.url("compute/");
    let out = sb
        .run([
            "manifest",
            "refresh",
            "--mirror",
            &mirror,
            "--index-url",
            &ix.url(),
        ])
        .ok();
    // The index's one cuDNN package read; the others it lacks, said.
    out.stderr_has(&[
        &format!(
            "read {}nvidia-cudnn-cu12/: nvidia-cudnn-cu12, 1 release (3 wheels)",
            ix.url()
        ),
        &format!("the package index {} has no nvidia-cudnn-cu13", ix.url()),
    ]);
    let cat = std::fs::read_to_string(sb.home().join("catalog.toml")).unwrap();
    for w in &ix.wheels {
        assert!(cat.contains(&w.sha), "{cat}");
    }
    // The version is now installable by version from that index.
    ix.install_linux(&sb).ok();
    assert!(receipt(&sb.home(), "12").contains(&ix.wheel("x86_64").sha));
    // `--from` an index's root alike: the packages it lacks skipped, said.
    sb.run(["manifest", "refresh", "--from", &ix.url()])
        .ok()
        .stderr_has(&[&format!(
            "the package index {} has no nvidia-cudnn-jit-cu13",
            ix.url()
        )]);
    // With a mirror and no index named anywhere, no index is read.
    let before = ix.paths().len();
    sb.run(["manifest", "refresh", "--mirror", &mirror]).ok();
    assert!(
        ix.paths()[before..].iter().all(|p| !p.contains("/simple/")),
        "{:?}",
        ix.paths()
    );
}

#[test]
fn lock_follows_the_index_named_for_archives_too_and_takes_its_wheels_as_they_are_now() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let mut sb = sandbox(&["nvidia-cudnn-cu12"]);
    // pip's index setting (not one named for cudnnm): where this machine's
    // platform has no archive (Windows), its wheel comes from here, not PyPI.
    sb.set_env("PIP_INDEX_URL", ix.url());
    // NVIDIA's archive of the same release for linux-x86_64, as the catalog lists it.
    let cat = sb.home().join("catalog.toml");
    let text = std::fs::read_to_string(&cat).unwrap();
    std::fs::write(
        &cat,
        format!(
            "{text}\n[[archive]]\nversion = \"{V}\"\ncuda = \"12\"\nplatform = \"linux-x86_64\"\npath = \"lab/cudnn-linux-x86_64-{V}_cuda12-archive.tar.xz\"\nsource = \"lab share\"\nhashes = [{{ sha256 = \"{}\", source = \"lab\" }}]\n",
            "0".repeat(64)
        ),
    )
    .unwrap();
    pin(&sb, "9.30.x");
    // Without an index named for cudnnm: NVIDIA's archive for linux-x86_64.
    sb.run(["lock"]).ok();
    assert!(
        lock_text(&sb).contains("cudnn-linux-x86_64-"),
        "{}",
        lock_text(&sb)
    );
    // With one: its wheels for every platform, the archive given way.
    sb.run(["lock", "--index-url", &ix.url()]).ok();
    let lock = lock_text(&sb);
    assert!(!lock.contains("cudnn-linux-x86_64-"), "{lock}");
    for tag in TAGS {
        assert!(lock.contains(&ix.wheel(tag).sha), "{tag}: {lock}");
    }
    // The index now serves other bytes for Windows: a new lock records them
    // (an older lock's wheel entry gives way), and lock --check agrees.
    let win = ix.wheel("win_amd64").sha.clone();
    let new = "cd".repeat(32);
    ix.serve_json(|w, f| {
        if w.sha == win {
            f.replace(&win, &new)
        } else {
            f
        }
    });
    sb.run(["lock", "--index-url", &ix.url(), "--check"])
        .code_is(4);
    sb.run(["lock", "--index-url", &ix.url()]).ok();
    let relocked = lock_text(&sb);
    assert!(
        relocked.contains(&new) && !relocked.contains(&win),
        "{relocked}"
    );
    sb.run(["lock", "--index-url", &ix.url(), "--check"]).ok();
    // No wheel was downloaded for any of it.
    assert!(
        ix.paths().iter().all(|p| p.starts_with("/simple/")),
        "{:?}",
        ix.paths()
    );
}

/// A wheel unpacked while it downloads from the index, checked against the
/// index's SHA-256, is not hashed member by member: its RECORD gives each
/// file's SHA-256. The receipt holds the files' true hashes (`verify` reads
/// every byte); a publisher whose RECORD lied is caught by `verify`, which
/// names the one library, rather than trusted silently.
#[test]
fn a_wheel_streamed_from_the_index_takes_its_members_hashes_from_its_record() {
    let ix = Index::new("nvidia-cudnn-cu12");
    let sb = sandbox(&["nvidia-cudnn-cu12"]);
    ix.install_linux(&sb)
        .ok()
        .stderr_has(&["unpacked while downloading"]);
    let v = sb.run(["verify", "--no-load", "--json"]).ok();
    assert!(v.json()["releases"][0]["files"].as_u64().unwrap() >= 5);

    // The same wheel, its RECORD listing other bytes (same size) for one
    // library, published under the new file's own SHA-256.
    let lying = fixtures::wheel_tagged("nvidia_cudnn_cu12", V, "manylinux_2_27_x86_64")
        .with_lying_record("libcudnn_graph.so.9");
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(lying.write(dir.path())).unwrap();
    let x86 = ix.wheel("x86_64");
    let (name, old_sha, old_len) = (x86.name.clone(), x86.sha.clone(), x86.bytes.len());
    let (sha, len) = (sha256(&bytes), bytes.len());
    ix.server.file(&format!("files/{name}"), bytes);
    ix.serve_json(move |w, f| {
        if w.name == name {
            f.replace(&old_sha, &sha)
                .replace(&format!("\"size\":{old_len}"), &format!("\"size\":{len}"))
        } else {
            f
        }
    });
    let sb = sandbox(&["nvidia-cudnn-cu12"]);
    ix.install_linux(&sb)
        .ok()
        .stderr_has(&["unpacked while downloading"]);
    crate::common::verify_finds_one_changed(&sb, "libcudnn_graph.so.9");
}
