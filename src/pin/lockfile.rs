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
//! ```
//!
//! A catalog source keeps `path`, relative to NVIDIA's base URL, so that a
//! mirror (`--mirror`, `CUDNNM_MIRROR`, `mirror` in `config.toml`) serves
//! the same file. A pip source's hash is the SHA-256 of the wheel `pip
//! download` fetched when the lock was written (PyPI publishes one per wheel
//! file, and the catalog holds none); pip picks a wheel per platform, so
//! `cudnnm lock` records one only for the platform it runs on and keeps the
//! entries other machines recorded for the same release.
//!
//! A lock comes with a project: whoever commits it is not whoever installs
//! from it, so it is read as hostile data (README, "Security"): only a
//! regular file of at most [`MAX_LOCK_BYTES`], every field checked for
//! exactly the shape `cudnnm lock` writes — a release id, and per platform
//! an `https://` URL (with the path a mirror the user configured serves) or
//! a [`PipRequirement`] `NAME==VERSION` of one of NVIDIA's cuDNN packages
//! naming the locked release, each with its SHA-256 — and anything else
//! refused ([`Kind::Integrity`], exit 4) naming the field, never echoing
//! its value, before pip or the network is touched.

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
    /// A wheel fetched with the user's pip.
    Pip {
        /// The requirement (`nvidia-cudnn-cu12==9.1.0.70`).
        pip: PipRequirement,
        /// The wheel file pip downloaded (a file name, no folder).
        wheel: String,
        /// That wheel's SHA-256.
        sha256: Sha256Hex,
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
            let source = match (e.contains_key("url"), e.contains_key("pip")) {
                (true, false) => catalog_source(e, &at)?,
                (false, true) => pip_source(e, &at, &release)?,
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
    let size = match e.get("size") {
        None => None,
        Some(v) => Some(
            v.as_integer()
                .filter(|n| *n > 0)
                .map(|n| n as u64)
                .ok_or_else(|| bad(f("size"), "a size in bytes"))?,
        ),
    };
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
    only(e, at, &["pip", "wheel", "sha256"])?;
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
    Ok(LockedSource::Pip {
        pip,
        wheel: wheel.to_string(),
        sha256: sha(e, &f("sha256"))?,
    })
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
            (
                format!(
                    "url = \"https://h.example/x\"\npip = \"nvidia-cudnn-cu12==9.10.2.21\"\nsha256 = \"{sha}\""
                ),
                "platform.linux-x86_64",
            ),
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
