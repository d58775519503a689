//! `.cudnn-version.lock`: the exact release a project uses and, for each
//! platform, the archive that carries it with its SHA-256
//! (`docs/architecture.md#pins`). Written by `cudnnm lock` beside the pin,
//! read by a bare `cudnnm install`, meant to be committed.
//!
//! The file is plain TOML in a fixed order (the header comment, `pin`,
//! `release`, then one `[platform.<name>]` table per platform sorted by name)
//! so that locking the same catalog again writes the same bytes.
//!
//! ```toml
//! pin = "9.10.x"
//! release = "9.10.2.21_cuda12"
//!
//! [platform.linux-x86_64]
//! url = "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/…tar.xz"
//! path = "cudnn/redist/cudnn/linux-x86_64/…tar.xz"
//! sha256 = "…"
//! size = 123
//!
//! [platform.windows-x86_64]
//! pip = "nvidia-cudnn-cu12==9.10.2.21"
//! wheel = "nvidia_cudnn_cu12-9.10.2.21-py3-none-win_amd64.whl"
//! sha256 = "…"
//! size = 123
//! url = "https://files.pythonhosted.org/packages/…/nvidia_cudnn_cu12-9.10.2.21-py3-none-win_amd64.whl"
//! ```
//!
//! A catalog source keeps `path`, relative to NVIDIA's base URL, so that a
//! mirror (`--mirror`, `CUDNNM_MIRROR`, `mirror` in `config.toml`) serves
//! the same file. A wheel source (`pip`) records the file name, SHA-256 and
//! size the package index publishes (PEP 691/503), for every platform the
//! release has a wheel for, read from the index's file list without
//! downloading; an install asks the index in effect (`--index-url`, …) for
//! the file of that name and checks those bytes, so `url` is for people.
//! Where pip is configured with `no-index` (its own `find-links`), the
//! hash is that of the wheel `pip download` fetched, for the platform the
//! lock was written on only, and the entries other machines recorded for
//! the same release are kept.
//!
//! A lock comes with a project: whoever commits it is not whoever installs
//! from it, so it is read as hostile data (README, "Security"): only a
//! regular file of at most [`MAX_LOCK_BYTES`], every field checked for
//! exactly the shape `cudnnm lock` writes — a release id, and per platform
//! an `https://` URL (with the path a mirror the user configured serves) or
//! a [`PipRequirement`] `NAME==VERSION` of one of NVIDIA's cuDNN packages
//! naming the locked release, with its wheel's file name (and, as the
//! index published them, its size and URL), each with its SHA-256 — and
//! anything else refused ([`Kind::Integrity`], exit 4) naming the field,
//! never echoing its value, before pip or the network is touched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::version::{Flavour, PipRequirement, Platform, ReleaseId, Spec};

/// The lock file name, beside `.cudnn-version`.
pub const LOCK_FILE: &str = ".cudnn-version.lock";

/// The largest lock file read, in bytes (256 KiB; one `cudnnm lock` writes
/// for every platform is about 2 KiB).
pub const MAX_LOCK_BYTES: u64 = 256 << 10;

const HEADER: &str = "# cudnnm lock file: the exact cuDNN release of this project and, per platform,\n\
# the archive that carries it with its SHA-256. Written by `cudnnm lock`;\n\
# commit it. `cudnnm install` installs exactly these bytes or fails.\n";

/// Where one platform's archive comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum LockedSource {
    /// A catalog archive.
    Catalog {
        /// Its full URL under the catalog's base; always `https://`.
        url: String,
        /// The same, relative to the base (for mirrors); absent when the
        /// catalog gave an absolute URL. A relative path without `..`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        /// The archive's SHA-256.
        sha256: Sha256Hex,
        /// Its size in bytes, when the catalog publishes it: the most the
        /// download accepts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
    },
    /// A wheel from the package index (read there directly, or by the
    /// user's pip when pip is configured with `no-index`).
    Pip {
        /// The requirement (`nvidia-cudnn-cu12==9.1.0.70`).
        pip: PipRequirement,
        /// The wheel's file name, as the index lists it (no folder).
        wheel: String,
        /// That wheel's SHA-256.
        sha256: Sha256Hex,
        /// Its size in bytes, when the index publishes it (PEP 700).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
        /// Where the index served it when the lock was written, for
        /// people: an install asks the index in effect for the file of
        /// this name and hash, never this URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    },
}

impl LockedSource {
    /// The SHA-256 the archive must have.
    pub fn sha256(&self) -> &Sha256Hex {
        match self {
            LockedSource::Catalog { sha256, .. } | LockedSource::Pip { sha256, .. } => sha256,
        }
    }
}

/// The content of a lock file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProjectLock {
    /// The pin's spec when the lock was written (for people; the check
    /// against the pin uses [`ProjectLock::release`]).
    pub pin: Spec,
    /// The exact release.
    pub release: ReleaseId,
    /// Per platform (NVIDIA's names), the archive's source.
    pub platform: BTreeMap<String, LockedSource>,
}

impl ProjectLock {
    /// The source recorded for `p`.
    pub fn source(&self, p: Platform) -> Option<&LockedSource> {
        self.platform.get(p.as_str())
    }

    /// Whether the locked release still satisfies `spec` (the pin now).
    pub fn satisfies(&self, spec: &Spec) -> bool {
        spec.matches(&self.release.version, &self.release.cuda)
            && spec.admits_flavour(self.release.flavour)
    }

    /// The file's text: a header comment, then the TOML, the same bytes for
    /// the same lock.
    pub fn to_text(&self) -> String {
        let body = toml::to_string(self).expect("a lock always serializes");
        format!("{HEADER}\n{body}")
    }

    /// Parses a lock file's text, checking every field (see the module
    /// documentation).
    ///
    /// # Errors
    /// [`Kind::Integrity`] naming `path`, its size and the first field that
    /// is not what a lock holds (or the line where it stops being TOML),
    /// never quoting the file.
    pub fn parse(text: &str, path: &Path) -> Result<ProjectLock> {
        let bad = |what: String| {
            Error::new(
                Kind::Integrity,
                format!(
                    "could not read the lock file '{}' ({} bytes)",
                    path.display(),
                    text.len()
                ),
            )
            .cause(what)
            .hint("write it again with `cudnnm lock` (it is generated; do not edit it by hand)")
        };
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| {
                1 + text.as_bytes()[..s.start.min(text.len())]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count()
            });
            bad(match line {
                Some(n) => format!("it is not a TOML lock file (line {n})"),
                None => "it is not a TOML lock file".to_string(),
            })
        })?;
        from_table(&table).map_err(|f| bad(f.to_string()))
    }

    /// Reads `path`; `Ok(None)` when there is no such file.
    ///
    /// # Errors
    /// [`Kind::Integrity`] for anything but a regular file of at most
    /// [`MAX_LOCK_BYTES`] (a link to `/dev/zero` is refused at once, not
    /// read), and as [`ProjectLock::parse`]; an unreadable file, naming it.
    pub fn read(path: &Path) -> Result<Option<ProjectLock>> {
        let bytes = match crate::fsops::read_bounded_if_exists(path, MAX_LOCK_BYTES, "a lock file")
        {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(None),
            Err(e) if e.kind() == Kind::Usage => return Err(e.with_kind(Kind::Integrity)),
            Err(e) => return Err(e),
        };
        let text = String::from_utf8(bytes).map_err(|e| {
            Error::new(
                Kind::Integrity,
                format!(
                    "could not read the lock file '{}' ({} bytes): it is not UTF-8 text",
                    path.display(),
                    e.as_bytes().len()
                ),
            )
            .hint("write it again with `cudnnm lock` (it is generated; do not edit it by hand)")
        })?;
        ProjectLock::parse(&text, path).map(Some)
    }
}

/// A field of a lock that is not what a lock holds there: its dotted name
/// (`platform.linux-x86_64.pip`) and what was expected.
#[derive(Debug)]
struct BadField {
    field: String,
    expected: String,
}

impl std::fmt::Display for BadField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "field '{}' is not {}", self.field, self.expected)
    }
}

fn bad(field: impl Into<String>, expected: impl Into<String>) -> BadField {
    BadField {
        field: field.into(),
        expected: expected.into(),
    }
}

/// The lock in `t`, every field checked; the first field that is not what
/// a lock holds is the error. Unknown fields are named only by the table
/// they are in, never by their (untrusted) name.
fn from_table(t: &toml::Table) -> std::result::Result<ProjectLock, BadField> {
    only(t, "the top level", &["pin", "release", "platform"])?;
    let pin: Spec = text(t, "pin", "pin")?
        .parse()
        .map_err(|_| bad("pin", "a cuDNN version spec such as 9.10.x"))?;
    let mut release: ReleaseId = text(t, "release", "release")?
        .parse()
        .map_err(|_| bad("release", "a release id such as 9.10.2.21_cuda12"))?;
    let mut platform = BTreeMap::new();
    if let Some(v) = t.get("platform") {
        let table = v
            .as_table()
            .ok_or_else(|| bad("platform", "a table of platforms"))?;
        for (name, entry) in table {
            if !is_platform_name(name) {
                return Err(bad(
                    "platform",
                    "a table of platforms named as NVIDIA names them (linux-x86_64, windows-x86_64, …)",
                ));
            }
            let at = format!("platform.{name}");
            let e = entry
                .as_table()
                .ok_or_else(|| bad(&at, "a table holding url or pip"))?;
            // A wheel entry may record its `url` beside `pip`, for people.
            let source = match (e.contains_key("url"), e.contains_key("pip")) {
                (_, true) => pip_source(e, &at, &release)?,
                (true, false) => catalog_source(e, &at)?,
                _ => return Err(bad(&at, "a table holding either url or pip")),
            };
            platform.insert(name.clone(), source);
        }
    }
    // A lock written before flavours named a JIT build by the plain id;
    // its pip requirement (`nvidia-cudnn-jit-cu12==…`) says what it is.
    if release.flavour.is_full()
        && platform.values().any(|s| {
            matches!(s, LockedSource::Pip { pip, .. } if pip.package().flavour() == Flavour::Jit)
        })
    {
        release = release.with_flavour(Flavour::Jit);
    }
    Ok(ProjectLock {
        pin,
        release,
        platform,
    })
}

fn catalog_source(e: &toml::Table, at: &str) -> std::result::Result<LockedSource, BadField> {
    only(e, at, &["url", "path", "sha256", "size"])?;
    let f = |k: &str| format!("{at}.{k}");
    let url = text(e, "url", &f("url"))?;
    if !is_https_url(url) {
        return Err(bad(
            f("url"),
            "an https:// URL (a mirror is named by the user, with --mirror, CUDNNM_MIRROR or config.toml, never by a lock)",
        ));
    }
    let path = match e.get("path") {
        None => None,
        Some(_) => {
            let p = text(e, "path", &f("path"))?;
            if !is_relative_path(p) {
                return Err(bad(
                    f("path"),
                    "a path below NVIDIA's base URL (letters, digits, . _ + - ~ and /, no ..)",
                ));
            }
            Some(p.to_string())
        }
    };
    let size = size(e, &f("size"))?;
    Ok(LockedSource::Catalog {
        url: url.to_string(),
        path,
        sha256: sha(e, &f("sha256"))?,
        size,
    })
}

fn pip_source(
    e: &toml::Table,
    at: &str,
    release: &ReleaseId,
) -> std::result::Result<LockedSource, BadField> {
    only(e, at, &["pip", "wheel", "sha256", "size", "url"])?;
    let f = |k: &str| format!("{at}.{k}");
    let pip: PipRequirement = text(e, "pip", &f("pip"))?.parse().map_err(|_| {
        bad(
            f("pip"),
            "NAME==VERSION with NAME one of NVIDIA's cuDNN packages (nvidia-cudnn-cu12==9.10.2.21)",
        )
    })?;
    // A lock written before flavours names a JIT build by the plain id.
    let named = pip.release();
    if named != *release && named != release.clone().with_flavour(Flavour::Jit) {
        return Err(bad(
            f("pip"),
            "a requirement of the locked release (its version, from the package for its CUDA)",
        ));
    }
    let wheel = text(e, "wheel", &f("wheel"))?;
    if !is_wheel_name(wheel) {
        return Err(bad(f("wheel"), "a wheel file name (….whl, no folder)"));
    }
    // Informational (an install asks the index in effect, never this URL),
    // yet held to what `lock` writes: the index's URL of that very file.
    let url = match e.get("url") {
        None => None,
        Some(_) => {
            let u = text(e, "url", &f("url"))?;
            if !is_wheel_url(u, wheel) {
                return Err(bad(
                    f("url"),
                    "the https:// URL of the wheel named by `wheel` (plain http:// only to this machine)",
                ));
            }
            Some(u.to_string())
        }
    };
    Ok(LockedSource::Pip {
        pip,
        wheel: wheel.to_string(),
        sha256: sha(e, &f("sha256"))?,
        size: size(e, &f("size"))?,
        url,
    })
}

/// An entry's `size`: bytes, 1 to 16 GiB (the most a cuDNN archive or
/// wheel is believed to be, [`crate::catalog::pypi::MAX_WHEEL_BYTES`]).
fn size(e: &toml::Table, field: &str) -> std::result::Result<Option<u64>, BadField> {
    let Some(v) = e.get("size") else {
        return Ok(None);
    };
    v.as_integer()
        .filter(|n| *n > 0)
        .map(|n| n as u64)
        .filter(|n| *n <= crate::catalog::pypi::MAX_WHEEL_BYTES)
        .map(Some)
        .ok_or_else(|| bad(field, "a size in bytes (1 to 16 GiB)"))
}

/// Refuses a field of `t` not in `known`.
fn only(t: &toml::Table, at: &str, known: &[&str]) -> std::result::Result<(), BadField> {
    if t.keys().any(|k| !known.contains(&k.as_str())) {
        return Err(BadField {
            field: at.to_string(),
            expected: format!(
                "made of {} alone (it holds another field)",
                known.join(", ")
            ),
        });
    }
    Ok(())
}

fn text<'t>(t: &'t toml::Table, key: &str, field: &str) -> std::result::Result<&'t str, BadField> {
    t.get(key)
        .and_then(|v| v.as_str())
        .ok_or_else(|| bad(field, "text (a quoted string)"))
}

fn sha(t: &toml::Table, field: &str) -> std::result::Result<Sha256Hex, BadField> {
    let key = field.rsplit('.').next().unwrap_or(field);
    Sha256Hex::parse(text(t, key, field)?).map_err(|_| bad(field, "a SHA-256 (64 hex digits)"))
}

/// A platform name as NVIDIA writes them (`linux-x86_64`): lower-case
/// letters, digits, `_` and `-`, short.
fn is_platform_name(s: &str) -> bool {
    (1..=32).contains(&s.len())
        && s.contains('-')
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// An `https://` URL with a host and no user name or password.
fn is_https_url(s: &str) -> bool {
    s.len() <= 2048
        && url::Url::parse(s).is_ok_and(|u| {
            u.scheme() == "https"
                && u.has_host()
                && u.username().is_empty()
                && u.password().is_none()
        })
}

/// Whether `url` may stand as a wheel entry's `url` for the file `wheel`:
/// `https://` (plain `http://` only to this machine, a loopback index), no
/// user name or password, its path ending in `/<wheel>`. `cudnnm lock`
/// records only such a URL, and the parser takes back nothing else.
pub fn is_wheel_url(url: &str, wheel: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    (is_https_url(url) || is_loopback_http_url(url)) && path.ends_with(&format!("/{wheel}"))
}

/// An `http://` URL to this machine (a loopback index: tests, a local
/// mirror), without user name or password.
fn is_loopback_http_url(s: &str) -> bool {
    s.len() <= 2048
        && s.starts_with("http://")
        && crate::catalog::pypi::url_allowed(s)
        && url::Url::parse(s).is_ok_and(|u| u.username().is_empty() && u.password().is_none())
}

/// A path relative to a base URL: `/`-separated segments of URL-safe
/// characters, none empty, `.` or `..`.
fn is_relative_path(s: &str) -> bool {
    s.len() <= 1024
        && s.split('/').all(|seg| {
            !seg.is_empty()
                && seg != "."
                && seg != ".."
                && seg.bytes().all(|b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'+' | b'-' | b'~')
                })
        })
}

/// A wheel's file name: no folder, no leading dot, `.whl` at the end.
fn is_wheel_name(s: &str) -> bool {
    (5..=255).contains(&s.len())
        && s.ends_with(".whl")
        && !s.starts_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'+' | b'-' | b'!'))
}

/// The lock file beside a pin file.
pub fn lock_path(pin_file: &Path) -> PathBuf {
    crate::fsops::parent_of(pin_file).join(LOCK_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(c: char) -> Sha256Hex {
        Sha256Hex::parse(&c.to_string().repeat(64)).unwrap()
    }

    fn lock() -> ProjectLock {
        let mut platform = BTreeMap::new();
        platform.insert(
            "windows-x86_64".into(),
            LockedSource::Pip {
                pip: "nvidia-cudnn-cu12==9.10.2.21".parse().unwrap(),
                wheel: "nvidia_cudnn_cu12-9.10.2.21-py3-none-win_amd64.whl".into(),
                sha256: sha('b'),
                size: Some(7),
                url: Some(
                    "https://files.example/packages/nvidia_cudnn_cu12-9.10.2.21-py3-none-win_amd64.whl"
                        .into(),
                ),
            },
        );
        platform.insert(
            "linux-x86_64".into(),
            LockedSource::Catalog {
                url: "https://example.test/compute/cudnn/a.tar.xz".into(),
                path: Some("cudnn/a.tar.xz".into()),
                sha256: sha('a'),
                size: Some(12),
            },
        );
        ProjectLock {
            pin: "9.10.x".parse().unwrap(),
            release: "9.10.2.21_cuda12".parse().unwrap(),
            platform,
        }
    }

    #[test]
    fn the_text_is_stable_and_reads_back() {
        let l = lock();
        let text = l.to_text();
        assert_eq!(text, lock().to_text());
        let back = ProjectLock::parse(&text, Path::new("x")).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.to_text(), text);
        let body = text.split_once("\n\n").unwrap().1;
        assert!(
            body.starts_with("pin = \"9.10.x\"\nrelease = \"9.10.2.21_cuda12\"\n\n[platform.linux-x86_64]\nurl = "),
            "{body}"
        );
        assert!(text.find("linux-x86_64").unwrap() < text.find("windows-x86_64").unwrap());
        assert_eq!(
            back.source(Platform::LinuxX86_64).unwrap().sha256(),
            &sha('a')
        );
    }

    #[test]
    fn satisfies_checks_the_pin_now() {
        let l = lock();
        assert!(l.satisfies(&"9.10.x".parse().unwrap()));
        assert!(l.satisfies(&">=9.1,<9.11_cuda12".parse().unwrap()));
        assert!(!l.satisfies(&"9.11".parse().unwrap()));
        assert!(!l.satisfies(&"latest_cuda13".parse().unwrap()));
    }

    #[test]
    fn a_bad_lock_names_the_file() {
        let e =
            ProjectLock::parse("release = 3\n", Path::new("/p/.cudnn-version.lock")).unwrap_err();
        assert!(e.to_string().contains("/p/.cudnn-version.lock"), "{e}");
        assert_eq!(e.kind(), Kind::Integrity);
        assert!(e.hint_text().unwrap().contains("cudnnm lock"));
    }

    /// The error's message and causes, one line each.
    fn refusal(text: &str) -> String {
        let e = ProjectLock::parse(text, Path::new("/p/.cudnn-version.lock")).unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity, "{text}");
        std::iter::once(e.message().to_string())
            .chain(e.causes().iter().cloned())
            .collect::<Vec<_>>()
            .join("\n")
    }

    const HEAD: &str = "pin = \"9.10.x\"\nrelease = \"9.10.2.21_cuda12\"\n";

    fn pip_lock(req: &str) -> String {
        format!(
            "{HEAD}[platform.linux-x86_64]\npip = \"{req}\"\nwheel = \"x-1-py3-none-any.whl\"\nsha256 = \"{}\"\n",
            "a".repeat(64)
        )
    }

    /// The four requirements that made pip run a package's `setup.py`, and
    /// every other shape a lock may not hold, are refused naming the field
    /// and never quoting it.
    #[test]
    fn a_lock_names_bytes_never_something_to_build() {
        for req in [
            "./evilpkg",
            "evilpkg/",
            "evil @ file:///tmp/evil-1.0.tar.gz",
            "evil @ http://127.0.0.1/evil-1.0.tar.gz",
            "numpy==2.0.0",
            "nvidia-cudnn-cu12>=9",
            "nvidia-cudnn-cu12[x]==9.10.2.21",
            "nvidia-cudnn-cu12==9.10.2.21; sys_platform=='linux'",
            "--index-url=http://evil nvidia-cudnn-cu12==9.10.2.21",
        ] {
            let m = refusal(&pip_lock(req));
            assert!(
                m.contains("field 'platform.linux-x86_64.pip' is not NAME==VERSION"),
                "{req}: {m}"
            );
            assert!(!m.contains(req), "{m} quotes the field");
        }
        // Another release's wheel than the one locked.
        let m = refusal(&pip_lock("nvidia-cudnn-cu11==9.10.2.21"));
        assert!(m.contains("a requirement of the locked release"), "{m}");
        assert!(
            ProjectLock::parse(&pip_lock("nvidia-cudnn-cu12==9.10.2.21"), Path::new("x")).is_ok()
        );
        let sha = "b".repeat(64);
        let whl = "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl";
        let wheel = format!(
            "pip = \"nvidia-cudnn-cu12==9.10.2.21\"\nwheel = \"{whl}\"\nsha256 = \"{sha}\""
        );
        // What `lock` writes for a wheel: its size and the index's URL of it.
        for url in [
            format!("https://files.example/p/{whl}"),
            format!("http://127.0.0.1:8080/files/{whl}#sha256={sha}"),
        ] {
            let text =
                format!("{HEAD}[platform.linux-x86_64]\n{wheel}\nsize = 42\nurl = \"{url}\"\n");
            let l = ProjectLock::parse(&text, Path::new("x")).unwrap();
            assert!(
                matches!(&l.platform["linux-x86_64"], LockedSource::Pip { size: Some(42), url: Some(u), .. } if *u == url)
            );
        }
        for (entry, field) in [
            (
                format!("url = \"http://127.0.0.1/x.tgz\"\nsha256 = \"{sha}\""),
                "platform.linux-x86_64.url",
            ),
            (
                format!("url = \"file:///dev/zero\"\nsha256 = \"{sha}\""),
                "platform.linux-x86_64.url",
            ),
            (
                format!("url = \"https://u:p@h.example/x\"\nsha256 = \"{sha}\""),
                "platform.linux-x86_64.url",
            ),
            (
                format!("url = \"https://h.example/x\"\npath = \"../../x\"\nsha256 = \"{sha}\""),
                "platform.linux-x86_64.path",
            ),
            (
                format!(
                    "url = \"https://h.example/x\"\npath = \"/etc/passwd\"\nsha256 = \"{sha}\""
                ),
                "platform.linux-x86_64.path",
            ),
            (
                format!("url = \"https://h.example/x\"\nsha256 = \"{sha}\"\nsize = -1"),
                "platform.linux-x86_64.size",
            ),
            (
                "url = \"https://h.example/x\"\nsha256 = \"zz\"".to_string(),
                "platform.linux-x86_64.sha256",
            ),
            (
                format!("url = \"https://h.example/x\"\nsha256 = \"{sha}\"\nrun = \"sh\""),
                "platform.linux-x86_64",
            ),
            // A wheel entry may carry its index URL, for people; still a wheel.
            (
                format!(
                    "url = \"https://h.example/x\"\npip = \"nvidia-cudnn-cu12==9.10.2.21\"\nsha256 = \"{sha}\""
                ),
                "platform.linux-x86_64.wheel",
            ),
            (
                format!("{wheel}\nurl = \"https://h.example/other.whl\""),
                "platform.linux-x86_64.url",
            ),
            (
                format!("{wheel}\nurl = \"http://mirror.example/{whl}\""),
                "platform.linux-x86_64.url",
            ),
            (
                format!("{wheel}\nurl = \"https://u:p@h.example/{whl}\""),
                "platform.linux-x86_64.url",
            ),
            (
                format!("{wheel}\nsize = 17179869185"),
                "platform.linux-x86_64.size",
            ),
            (format!("{wheel}\nsize = 0"), "platform.linux-x86_64.size"),
        ] {
            let m = refusal(&format!("{HEAD}[platform.linux-x86_64]\n{entry}\n"));
            assert!(
                m.contains(&format!("field '{field}' is not")),
                "{entry}: {m}"
            );
        }
        let m = refusal(&format!("{HEAD}token = \"ghp_secret\"\n"));
        assert!(
            m.contains("field 'the top level' is not made of pin, release, platform"),
            "{m}"
        );
        assert!(!m.contains("ghp_secret") && !m.contains("token"), "{m}");
    }

    /// A file that is not a lock (a credentials file a link points at) is
    /// described by its size and the line where it stops being TOML.
    #[test]
    fn a_file_that_is_not_a_lock_is_never_quoted() {
        let secret = "https://user:ghp_0123456789abcdef@github.com\n";
        let m = refusal(secret);
        assert!(!m.contains("ghp_") && !m.contains("github"), "{m}");
        assert_eq!(
            m,
            format!(
                "could not read the lock file '/p/.cudnn-version.lock' ({} bytes)\nit is not a TOML lock file (line 1)",
                secret.len()
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_linked_to_a_device_is_refused_unread() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(LOCK_FILE);
        crate::fsops::symlink(Path::new("/dev/zero"), &p).unwrap();
        let e = ProjectLock::read(&p).unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity);
        assert!(e.message().contains("character device"), "{e}");
        assert!(ProjectLock::read(&d.path().join("none")).unwrap().is_none());
    }
}
