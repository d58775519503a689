//! Shared setup for the switching tests: fake CUDA toolkits in both layouts,
//! releases put straight into a sandbox store (files, links and a receipt,
//! as the importer lays them out), and snapshots of folders by content.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cudnnm::hash;
use cudnnm::home::Home;
use cudnnm::store::{FileRecord, Receipt, Source, Store};
use cudnnm::version::{CudaVariant, Platform, Version};

use crate::common::fixtures::{Fixture, Item};

/// A symbolic link at `link` to `target` (Windows: a file or folder link by
/// what `target` names, which needs the right to create links there).
fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> std::io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::symlink(target, link);
    #[cfg(windows)]
    {
        let dir = link
            .as_ref()
            .parent()
            .is_some_and(|p| p.join(target.as_ref()).is_dir());
        if dir {
            std::os::windows::fs::symlink_dir(target, link)
        } else {
            std::os::windows::fs::symlink_file(target, link)
        }
    }
}

/// Puts the redist fixture of cuDNN `version` for CUDA 12 (Linux x86_64)
/// into the store of `home`, as [`put_release`] does; its folder.
pub fn put_redist_linux_12(home: &Path, version: &str) -> PathBuf {
    put_release(
        home,
        &crate::common::fixtures::redist_linux(version, "12"),
        version,
        "12",
        Platform::LinuxX86_64,
    )
}

/// A Linux-layout toolkit as the runfile installs it: `lib64 ->
/// targets/x86_64-linux/lib`, `include -> targets/x86_64-linux/include`,
/// `version.json`.
pub fn linux_toolkit(root: &Path, cuda: &str) -> PathBuf {
    std::fs::create_dir_all(root.join("targets/x86_64-linux/lib")).unwrap();
    std::fs::create_dir_all(root.join("targets/x86_64-linux/include")).unwrap();
    std::fs::create_dir_all(root.join("bin")).unwrap();
    symlink("targets/x86_64-linux/lib", root.join("lib64")).unwrap();
    symlink("targets/x86_64-linux/include", root.join("include")).unwrap();
    std::fs::write(root.join("include/cuda.h"), "#define CUDA_VERSION 12040\n").unwrap();
    std::fs::write(root.join("lib64/libcudart.so.12"), b"\x7fELF cudart").unwrap();
    std::fs::write(
        root.join("version.json"),
        format!(r#"{{"cuda": {{"name": "CUDA SDK", "version": "{cuda}"}}}}"#),
    )
    .unwrap();
    root.to_path_buf()
}

/// A Windows-layout toolkit folder (`bin`, `include`, `lib\x64`, `version.json`
/// or `version.txt` before CUDA 11), usable on Linux.
pub fn windows_toolkit(root: &Path, cuda: &str) -> PathBuf {
    for d in ["bin", "include", "lib/x64", "libnvvp"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("bin/cudart64_110.dll"), b"MZ cudart").unwrap();
    std::fs::write(root.join("lib/x64/cudart.lib"), b"!<arch>\ncudart").unwrap();
    let major: u32 = cuda.split('.').next().unwrap().parse().unwrap();
    if major >= 11 {
        std::fs::write(
            root.join("version.json"),
            format!(r#"{{"cuda": {{"name": "CUDA SDK", "version": "{cuda}"}}}}"#),
        )
        .unwrap();
    } else {
        std::fs::write(root.join("version.txt"), format!("CUDA Version {cuda}\n")).unwrap();
    }
    root.to_path_buf()
}

/// Puts the release carried by `fixture` into the store of the home at
/// `home` in the normalized layout (`bin/` DLLs, `include/` headers, `lib/`
/// libraries; licenses at the top), links kept as links, files read-only,
/// with a receipt listing every file. Returns the release folder.
pub fn put_release(
    home: &Path,
    fixture: &Fixture,
    version: &str,
    cuda: &str,
    platform: Platform,
) -> PathBuf {
    let store = Store::new(&Home::new(home));
    let v: Version = version.parse().unwrap();
    let c: CudaVariant = cuda.parse().unwrap();
    let dir = store.release_dir(&v, &c);
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for (path, item) in &fixture.entries {
        let name = path.rsplit('/').next().unwrap();
        let lower = path.to_ascii_lowercase();
        let rel = if lower.contains("/include/") || lower.starts_with("include/") {
            format!("include/{name}")
        } else if lower.contains("/bin/") || lower.starts_with("bin/") {
            format!("bin/{name}")
        } else if lower.contains("/lib/") || lower.contains("/lib64/") || lower.starts_with("lib") {
            format!("lib/{name}")
        } else if name.to_ascii_lowercase().contains("license") || name.ends_with(".txt") {
            name.to_string()
        } else {
            continue;
        };
        if name == "__init__.py" {
            continue;
        }
        let dest = dir.join(&rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        match item {
            Item::File(bytes) => {
                std::fs::write(&dest, bytes).unwrap();
                files.push(FileRecord::file(
                    rel,
                    bytes.len() as u64,
                    hash::sha256_bytes(bytes),
                ));
            }
            Item::Symlink(t) => {
                symlink(t, &dest).unwrap();
                files.push(FileRecord::link(rel, t.clone()));
            }
            _ => {}
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    for f in &files {
        if !f.entry.is_link() {
            let p = dir.join(&f.path);
            let mut perm = std::fs::metadata(&p).unwrap().permissions();
            perm.set_readonly(true);
            std::fs::set_permissions(&p, perm).unwrap();
        }
    }
    let receipt = Receipt {
        schema: 1,
        header_version: v.triple(),
        version: v,
        cuda: c,
        platform,
        flavour: None,
        installed_at: "2026-11-29T00:00:00Z".into(),
        source: Source {
            kind: cudnnm::shape::Shape::Folder,
            name: fixture.name.clone(),
            sha256: None,
            size: 0,
            from: cudnnm::store::Provenance::Local,
            dist: None,
        },
        files,
    };
    std::fs::write(dir.join("receipt.toml"), receipt.to_toml()).unwrap();
    dir
}

/// A big Linux release `version` for CUDA 12: three libraries of `mb` MiB
/// each (distinct bytes per version) with their soname chains, and headers.
pub fn big_linux_release(home: &Path, version: &str, mb: usize) -> PathBuf {
    let mut f = Fixture::new(&format!("big-{version}"));
    let n: Vec<u32> = version.split('.').map(|x| x.parse().unwrap()).collect();
    f.file(
        "include/cudnn_version.h",
        crate::common::fixtures::version_header(version),
    );
    f.file("include/cudnn.h", format!("/* cudnn {version} */\n"));
    for (i, stem) in ["libcudnn", "libcudnn_graph", "libcudnn_ops"]
        .iter()
        .enumerate()
    {
        let real = format!("{stem}.so.{}.{}.{}", n[0], n[1], n[2]);
        let mut bytes = vec![0u8; mb << 20];
        let seed = (n[1] * 31 + i as u32 * 7 + 1) as u8;
        for (k, b) in bytes.iter_mut().enumerate() {
            *b = seed
                .wrapping_mul((k % 251) as u8)
                .wrapping_add((k >> 12) as u8);
        }
        f.file(&format!("lib/{real}"), bytes);
        f.symlink(&format!("lib/{stem}.so.{}", n[0]), &real);
        f.symlink(&format!("lib/{stem}.so"), &format!("{stem}.so.{}", n[0]));
    }
    put_release(home, &f, version, "12", Platform::LinuxX86_64)
}

/// Every entry below `root` (links not followed): `dir`, `link:<target>` or
/// `sha:<sha256>`, keyed by `/`-separated relative path.
pub fn snapshot(root: &Path) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for e in walkdir::WalkDir::new(root).min_depth(1).sort_by_file_name() {
        let e = e.unwrap();
        let rel = e
            .path()
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let v = if e.path_is_symlink() {
            format!("link:{}", std::fs::read_link(e.path()).unwrap().display())
        } else if e.file_type().is_dir() {
            "dir".to_string()
        } else {
            format!("sha:{}", hash::sha256_file(e.path()).unwrap().1)
        };
        m.insert(rel, v);
    }
    m
}

/// The content hash of every file reachable at `root/<rel>` following links
/// (what a loader would read), for cuDNN-named entries of `dir`.
pub fn resolved_cudnn(dir: &Path) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.to_ascii_lowercase().starts_with("cudnn") || n.starts_with("libcudnn") {
            let sha = hash::sha256_file(&e.path())
                .map(|(_, h)| h.to_string())
                .unwrap_or_else(|_| "broken".into());
            m.insert(n, sha);
        }
    }
    m
}

/// What a backup holds, keyed by file name: `link:<target>` or
/// `sha:<sha256>` of the bytes it can restore — its own file, or for an
/// unchanged copy cudnnm had placed, the store file its `backup.toml` names
/// (checked against the recorded hash). Panics when a recorded file is gone.
pub fn backup_holdings(dir: &Path) -> BTreeMap<String, String> {
    let rec: toml::Value =
        toml::from_str(&std::fs::read_to_string(dir.join("backup.toml")).unwrap()).unwrap();
    let mut m = BTreeMap::new();
    for f in rec
        .get("file")
        .and_then(|f| f.as_array())
        .cloned()
        .unwrap_or_default()
    {
        let rel = f["path"].as_str().unwrap();
        let name = rel.rsplit('/').next().unwrap().to_string();
        let v = if let Some(t) = f.get("link") {
            let p = dir.join("files").join(rel);
            let actual = std::fs::read_link(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert_eq!(actual.to_string_lossy(), t.as_str().unwrap());
            format!("link:{}", actual.display())
        } else {
            let p = match f.get("store") {
                Some(s) => PathBuf::from(s.as_str().unwrap()),
                None => dir.join("files").join(rel),
            };
            let sha = hash::sha256_file(&p)
                .unwrap_or_else(|e| panic!("{e}"))
                .1
                .to_string();
            assert_eq!(
                sha,
                f["sha256"].as_str().unwrap(),
                "{} holds the recorded bytes",
                p.display()
            );
            format!("sha:{sha}")
        };
        m.insert(name, v);
    }
    m
}

/// Whether this process runs as root (root ignores permission bits).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

#[cfg(unix)]
/// Runs cudnnm as `nobody` through `setpriv` (util-linux), with the
/// sandbox's scrubbed environment: an ordinary user facing a root-owned toolkit.
pub fn run_as_nobody(sb: &crate::common::Sandbox, args: &[&str]) -> crate::common::Run {
    use std::os::unix::fs::PermissionsExt;
    for d in [sb.root().to_path_buf(), sb.work()] {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // The home belongs to the user running cudnnm, as it would.
    std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(sb.home())
        .status()
        .unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(crate::common::bin())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sb.work())
        .env("CUDNNM_HOME", sb.home())
        .env("CUDNNM_SYSTEM_HOME", sb.system())
        .envs(sb.env.iter().map(|(k, v)| (k, v)))
        .current_dir(sb.work())
        .output()
        .expect("setpriv runs (util-linux; .ci/run installs it)");
    crate::common::Run {
        args: args.iter().map(Into::into).collect(),
        out,
        root: sb.root().to_path_buf(),
    }
}
