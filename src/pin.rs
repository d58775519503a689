//! Which release applies here, and why (`docs/architecture.md#pins`). First match wins:
//! the `--version` flag, `CUDNNM_VERSION`, the nearest `.cudnn-version`
//! walking up from the working folder to the filesystem root, the default in
//! `config.toml`. Like rustup, the answer always carries its source, so
//! `current` can say *why* and errors can name the file and line to fix.
//!
//! A pin file is read tolerantly (UTF-8 with or without BOM, UTF-16 with BOM
//! as Windows PowerShell 5.1's `echo 8.1 > .cudnn-version` writes it, CRLF,
//! blank and `#` comment lines, trailing comments) and rejected precisely
//! (two words on the spec line, a non-version word, a folder of that name, an
//! unreadable file): every error names the file and line.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::command::CommandLine;
use crate::env::{self, Env};
use crate::error::{Error, Kind, Result};
use crate::home::Home;
use crate::store::{Release, Store};
use crate::version::Spec;

pub mod lockfile;

/// The pin file name.
pub const PIN_FILE: &str = ".cudnn-version";

/// Pin files larger than this (bytes) are refused: a pin holds one spec.
const MAX_PIN_BYTES: u64 = 64 * 1024;

/// Where a spec came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SpecSource {
    /// The `--version` flag.
    Flag,
    /// The `CUDNNM_VERSION` variable.
    EnvVar,
    /// A `.cudnn-version` file, with the 1-based line holding the spec.
    PinFile {
        /// The pin file.
        path: PathBuf,
        /// Its line number.
        line: usize,
    },
    /// The default in `config.toml`.
    Default {
        /// The config file.
        path: PathBuf,
    },
    /// The system home's default (`default --system`), for a user with no
    /// default of their own.
    SystemDefault {
        /// The system home's config file.
        path: PathBuf,
    },
}

impl fmt::Display for SpecSource {
    /// A phrase for messages: `the command line`, `CUDNNM_VERSION`,
    /// `'/p/.cudnn-version' line 1`, `the default in '/h/config.toml'`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // `--version SPEC`, or `exec SPEC -- …`: what the user typed.
            SpecSource::Flag => f.write_str("the command line"),
            SpecSource::EnvVar => f.write_str(env::CUDNNM_VERSION),
            SpecSource::PinFile { path, line } => {
                write!(f, "'{}' line {line}", path.display())
            }
            SpecSource::Default { path } => write!(f, "the default in '{}'", path.display()),
            SpecSource::SystemDefault { path } => {
                write!(f, "the system default in '{}'", path.display())
            }
        }
    }
}

impl SpecSource {
    /// Where the spec came from, as a clause for people: `from --version`,
    /// `from CUDNNM_VERSION`, `from '/p/.cudnn-version' line 1`, `the
    /// default in '/h/config.toml'`.
    pub fn label(&self) -> String {
        match self {
            SpecSource::Flag => "from --version".into(),
            SpecSource::EnvVar => format!("from {}", env::CUDNNM_VERSION),
            SpecSource::PinFile { path, line } => {
                format!("from '{}' line {line}", path.display())
            }
            SpecSource::Default { path } => format!("the default in '{}'", path.display()),
            SpecSource::SystemDefault { path } => {
                format!("the system default in '{}'", path.display())
            }
        }
    }
}

/// A spec and where it came from.
#[derive(Clone, Debug, Serialize)]
pub struct Resolved {
    /// The spec.
    pub spec: Spec,
    /// Its source.
    pub source: SpecSource,
}

/// Resolves the spec that applies: `flag`, then `CUDNNM_VERSION`, then the
/// nearest `.cudnn-version` from `env.cwd()` upwards, then the default, then
/// the system home's default (as a system Python serves users with none of
/// their own). `Ok(None)` when nothing names a release.
///
/// Cost: one `stat` per ancestor folder, one small read for the pin file
/// found, and `config.toml` (then the system home's) only when no pin applies.
///
/// # Errors
/// A malformed flag, variable, pin file (names the file and line) or config
/// default ([`Kind::Usage`]); an unreadable pin file or config.
pub fn resolve_spec(flag: Option<&str>, env: &Env, home: &Home) -> Result<Option<Resolved>> {
    if let Some(s) = flag {
        let spec = s
            .parse()
            .map_err(|e: Error| e.context(format!("could not use --version '{s}'")))?;
        return Ok(Some(Resolved {
            spec,
            source: SpecSource::Flag,
        }));
    }
    if let Some(s) = env.var(env::CUDNNM_VERSION) {
        let spec = s.parse().map_err(|e: Error| {
            e.context(format!(
                "could not use {}='{s}' from the environment",
                env::CUDNNM_VERSION
            ))
            .hint(format!(
                "set {} to a spec such as 9.12, 8.1.0.77 or 8.9.7.29_cuda12, or unset it",
                env::CUDNNM_VERSION
            ))
        })?;
        return Ok(Some(Resolved {
            spec,
            source: SpecSource::EnvVar,
        }));
    }
    if let Some(found) = find_pin(env.cwd())? {
        return Ok(Some(found));
    }
    let path = home.config_file();
    if let Some(s) = home.config()?.default {
        let spec = s.parse().map_err(|e: Error| {
            e.context(format!(
                "could not use the default '{s}' in '{}'",
                path.display()
            ))
            .hint("set a valid default with `cudnnm default SPEC`")
        })?;
        return Ok(Some(Resolved {
            spec,
            source: SpecSource::Default { path },
        }));
    }
    let Some(system) = home.system_root() else {
        return Ok(None);
    };
    let system = Home::system(system);
    let path = system.config_file();
    // The administrator's file: when it cannot be read or names no valid
    // spec it is as if unset, so that no user command fails on a file only
    // the administrator can fix.
    let spec = system
        .config()
        .ok()
        .and_then(|c| c.default)
        .and_then(|s| s.parse().ok());
    Ok(spec.map(|spec| Resolved {
        spec,
        source: SpecSource::SystemDefault { path },
    }))
}

/// The nearest `.cudnn-version` in `start` or one of its ancestors, parsed.
/// `Ok(None)` when no folder up to the root has one.
///
/// # Errors
/// When the nearest one is a folder, not a regular file, unreadable, or
/// malformed (see [`parse_pin`]); the search does not skip past a bad pin.
pub fn find_pin(start: &Path) -> Result<Option<Resolved>> {
    for dir in start.ancestors() {
        let path = dir.join(PIN_FILE);
        match fs::metadata(&path) {
            Ok(meta) if meta.is_file() => {
                let (spec, line) = read_pin(&path)?;
                return Ok(Some(Resolved {
                    spec,
                    source: SpecSource::PinFile { path, line },
                }));
            }
            Ok(meta) => {
                let what = if meta.is_dir() {
                    "is a folder"
                } else {
                    "is not a regular file"
                };
                return Err(Error::new(
                    Kind::Usage,
                    format!("could not read the pin '{}': it {what}", path.display()),
                )
                .hint(format!(
                    "a pin is a text file holding one spec; remove or rename '{}'",
                    path.display()
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A dangling link named .cudnn-version is a broken pin, not "no pin".
                if fs::symlink_metadata(&path).is_ok() {
                    return Err(unreadable(&path, e));
                }
            }
            Err(e) => return Err(unreadable(&path, e)),
        }
    }
    Ok(None)
}

fn unreadable(path: &Path, e: impl fmt::Display) -> Error {
    Error::new(
        Kind::Usage,
        format!("could not read the pin '{}'", path.display()),
    )
    .cause(e)
    .hint(format!(
        "make '{}' a readable text file holding one spec, or remove it",
        path.display()
    ))
}

/// Reads and parses one pin file: its spec and the 1-based line holding it.
///
/// # Errors
/// Unreadable, not a regular file or larger than 64 KiB, or malformed
/// (see [`parse_pin`]).
pub fn read_pin(path: &Path) -> Result<(Spec, usize)> {
    let bytes = crate::fsops::read_bounded(path, MAX_PIN_BYTES, "a pin").map_err(|e| {
        if e.kind() == Kind::Usage {
            // Not a regular file, or too large: the reader's words, a pin's hint.
            e.hint("a pin file holds one spec such as 9.12; is this the right file?")
        } else {
            unreadable(path, e.causes().first().cloned().unwrap_or_default())
        }
    })?;
    parse_pin(&bytes).map_err(|e| {
        let at = match e.line {
            Some(n) => format!("'{}' line {n}", path.display()),
            None => format!("'{}'", path.display()),
        };
        Error::new(
            Kind::Usage,
            format!("could not read the pin in {at}: {}", e.reason),
        )
        .hint(
            "write one spec on the first line that is not blank or a # comment, \
             e.g. 9.12, 9.10.x, >=9.1,<9.11, latest_cuda12 or 8.9.7.29_cuda12",
        )
    })
}

/// Why pin file content was refused, and on which 1-based line (none for
/// encoding problems). The reason never quotes the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinError {
    /// The line, when the problem is on one.
    pub line: Option<usize>,
    /// What is wrong, e.g. `it holds 2 words; a pin holds one spec`.
    pub reason: String,
}

/// Parses pin file content: the first line that is not blank or a `#`
/// comment holds the spec; a trailing `# comment` and surrounding white space
/// are ignored. Accepts UTF-8 (BOM optional) and UTF-16 LE/BE with a BOM.
///
/// # Errors
/// Text that is neither of those encodings, no spec line, more than one word
/// on the spec line, or a word that is not a spec.
pub fn parse_pin(bytes: &[u8]) -> std::result::Result<(Spec, usize), PinError> {
    let text = decode_text(bytes).map_err(|reason| PinError { line: None, reason })?;
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let content = match line.find('#') {
            Some(at) => line[..at].trim(),
            None => line,
        };
        let words: Vec<&str> = content.split_whitespace().collect();
        let bad = |reason: String| PinError {
            line: Some(i + 1),
            reason,
        };
        // The line is never quoted: a pin that does not parse may be any
        // file a link points at (a credentials file), and errors reach logs.
        if words.len() > 1 {
            return Err(bad(format!(
                "it holds {} words; a pin holds one spec",
                words.len()
            )));
        }
        return content.parse::<Spec>().map(|s| (s, i + 1)).map_err(|_| {
            // Invisible characters (a doubled BOM, a zero-width space)
            // make a line that looks valid fail: say so.
            let invisible = content
                .chars()
                .any(|c| c.is_control() || (!c.is_ascii() && !c.is_alphanumeric()));
            let hint = if invisible {
                "; it holds invisible characters, retype the line"
            } else {
                ""
            };
            bad(format!(
                "it is not a cuDNN version spec ({} characters, not shown{hint})",
                content.chars().count()
            ))
        });
    }
    Err(PinError {
        line: None,
        reason: "it holds no spec (only blank or # comment lines)".into(),
    })
}

/// Decodes pin text: UTF-8 (an optional BOM removed), or UTF-16 LE/BE when
/// it starts with a BOM. NUL bytes without a BOM mean UTF-16 without a BOM,
/// which is refused rather than guessed.
fn decode_text(bytes: &[u8]) -> std::result::Result<String, String> {
    let utf16 = |b: &[u8], le: bool| -> std::result::Result<String, String> {
        if !b.len().is_multiple_of(2) {
            return Err("it is UTF-16 text cut off mid-character".into());
        }
        let units = b.chunks_exact(2).map(|c| {
            if le {
                u16::from_le_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], c[1]])
            }
        });
        char::decode_utf16(units)
            .collect::<std::result::Result<String, _>>()
            .map_err(|_| "it is not valid UTF-16 text".to_string())
    };
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8(rest.to_vec()).map_err(|_| "it is not valid UTF-8 text".into());
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, true);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, false);
    }
    if bytes.contains(&0) {
        return Err(
            "it holds NUL bytes (UTF-16 without a byte-order mark?); save it as UTF-8".into(),
        );
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| "it is not UTF-8 text; save it as UTF-8".into())
}

/// The installed release a resolved spec names: the newest match in `store`.
///
/// # Errors
/// [`Kind::NotFound`] naming the spec, where it came from (flag, variable,
/// pin file and line, or config default) and the command that installs it.
///
/// With `hints`, the printed commands carry what they need to reach the
/// same home and system home ([`Home::reach`]) and are quoted for its platform.
pub fn installed_release(
    resolved: &Resolved,
    store: &Store,
    hints: Option<(&Home, &Env)>,
) -> Result<Release> {
    if let Some(r) = store.newest_matching(&resolved.spec)? {
        return Ok(r);
    }
    let spec = &resolved.spec;
    let reach = |c: CommandLine| match hints {
        Some((home, env)) => home.reach(env, c, false).for_host(env.is_windows()),
        None => c.for_host(false),
    };
    // What the catalog has for this machine, by the rule every install hint
    // follows: never `install SPEC` for a release it cannot find.
    let install = match hints {
        Some((home, env)) => {
            crate::catalog::offer::install_hint(home, spec, env.platform(), None, &reach)
        }
        None => {
            let offers = crate::catalog::offer::offers_for(
                &crate::catalog::Catalog::embedded(),
                crate::version::Platform::host(),
            );
            crate::catalog::offer::advise(&offers, spec, None).hint(&reach)
        }
    };
    let hint = match &resolved.source {
        SpecSource::Flag => install,
        SpecSource::EnvVar => format!("{install}, or change or unset {}", env::CUDNNM_VERSION),
        SpecSource::PinFile { .. } => match lock_install_hint(&resolved.source, spec, &reach) {
            Some(h) => h,
            None => format!(
                "{install}, or pin an installed one with `cudnnm pin SPEC` (see `cudnnm list`)"
            ),
        },
        SpecSource::Default { .. } | SpecSource::SystemDefault { .. } => {
            // Name what is installed, so the user can pick one at once.
            let installed: Vec<String> = store
                .releases()
                .unwrap_or_default()
                .iter()
                .rev()
                .map(Release::id)
                .collect();
            match installed.first() {
                Some(newest) => format!(
                    "choose another default, e.g. `{}` (installed: {}), or {install}",
                    reach(CommandLine::default_(newest.clone())),
                    installed.join(", ")
                ),
                None => {
                    format!("{install}, or choose an installed default with `cudnnm default SPEC`")
                }
            }
        }
    };
    // A default that names a release neither store holds any more: on a
    // shared machine an administrator may have removed it from the system store.
    let gone = match (&resolved.source, store.system_root()) {
        (SpecSource::Default { .. } | SpecSource::SystemDefault { .. }, Some(system)) => format!(
            "; it is in neither your store nor the system store '{}' (an administrator may have removed it)",
            system.display()
        ),
        _ => String::new(),
    };
    Err(Error::new(
        Kind::NotFound,
        format!(
            "cuDNN {spec} is not installed (asked for by {}){gone}",
            resolved.source
        ),
    )
    .hint(hint))
}

/// The hint for a pinned `spec` that is not installed when the lock beside
/// the pin file names its exact bytes: a bare `install` fetches them, where
/// another package would not do. `None` when `source` is not a pin file or
/// no readable lock beside it satisfies `spec`. `reach` renders a command
/// for this home and host.
pub fn lock_install_hint(
    source: &SpecSource,
    spec: &Spec,
    reach: &dyn Fn(CommandLine) -> String,
) -> Option<String> {
    let SpecSource::PinFile { path, .. } = source else {
        return None;
    };
    let l = locked_for(path, spec)?;
    Some(format!(
        "install the release the lock '{}' names ({}) with `{}`, or pin an installed one with `cudnnm pin SPEC` (see `cudnnm list`)",
        lockfile::lock_path(path).display(),
        l.release,
        reach(CommandLine::install_here())
    ))
}

/// The lock beside the pin file `pin`, when it can be read and still
/// satisfies `spec` (what a bare `install` then installs).
fn locked_for(pin: &Path, spec: &Spec) -> Option<lockfile::ProjectLock> {
    lockfile::ProjectLock::read(&lockfile::lock_path(pin))
        .ok()
        .flatten()
        .filter(|l| l.satisfies(spec))
}

/// [`resolve_spec`] then [`installed_release`]: the release that applies
/// here and why, `Ok(None)` when nothing names one. Reads one receipt.
///
/// # Errors
/// Those of [`resolve_spec`], and [`Kind::NotFound`] when the named release
/// is not installed (naming the spec, its source and the install command).
pub fn resolve_installed(
    flag: Option<&str>,
    env: &Env,
    home: &Home,
) -> Result<Option<(Resolved, Release)>> {
    let Some(resolved) = resolve_spec(flag, env, home)? else {
        return Ok(None);
    };
    let release = installed_release(&resolved, &Store::new(home), Some((home, env)))?;
    Ok(Some((resolved, release)))
}

/// The release among `releases` (already listed, any order) that `spec`
/// selects: the newest match. Cheap: no file access, for marking the pinned
/// release in `list`.
pub fn select<'a>(spec: &Spec, releases: &'a [Release]) -> Option<&'a Release> {
    releases
        .iter()
        .filter(|r| spec.matches(r.version(), r.cuda()))
        .max_by(|a, b| a.version().cmp(b.version()).then(a.cuda().cmp(b.cuda())))
}

/// The text `cudnnm pin` writes: the spec on its own line. When `existing`
/// pin text parses, its spec line is replaced and every other line (comments)
/// is kept; otherwise the file is written afresh.
pub fn pin_file_text(spec: &Spec, existing: Option<&[u8]>) -> String {
    if let Some(bytes) = existing
        && let Ok((_, line)) = parse_pin(bytes)
        && let Ok(text) = decode_text(bytes)
    {
        let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        let old = &lines[line - 1];
        let cr = if old.ends_with('\r') { "\r" } else { "" };
        let comment = old.find('#').map(|at| format!(" {}", old[at..].trim_end()));
        lines[line - 1] = format!("{spec}{}{cr}", comment.unwrap_or_default());
        let mut out = lines.join("\n");
        if !out.ends_with('\n') {
            out.push('\n');
        }
        return out;
    }
    format!("{spec}\n")
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::store::{Receipt, Source};
    use crate::version::{CudaVariant, Platform, Version};

    fn ok(text: &[u8]) -> (String, usize) {
        let (s, l) = parse_pin(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
        (s.to_string(), l)
    }

    fn err(text: &[u8]) -> PinError {
        parse_pin(text).expect_err(&format!("{text:?} parsed"))
    }

    fn utf16(s: &str, le: bool) -> Vec<u8> {
        let mut out = if le {
            vec![0xFF, 0xFE]
        } else {
            vec![0xFE, 0xFF]
        };
        for u in s.encode_utf16() {
            out.extend(if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        out
    }

    #[test]
    fn pin_forms_that_are_accepted() {
        assert_eq!(ok(b"8.1.0.77\n"), ("8.1.0.77".into(), 1));
        assert_eq!(ok(b"8.1"), ("8.1".into(), 1));
        assert_eq!(ok(b"9\n"), ("9".into(), 1));
        assert_eq!(ok(b"8.9.7.29_cuda12\n"), ("8.9.7.29_cuda12".into(), 1));
        assert_eq!(ok(b"  \t9.12  \n"), ("9.12".into(), 1));
        assert_eq!(ok(b"9.12\r\n"), ("9.12".into(), 1));
        assert_eq!(ok(b"\xEF\xBB\xBF9.12\r\n"), ("9.12".into(), 1));
        assert_eq!(ok(b"9.12 # for the ONNX build\n"), ("9.12".into(), 1));
        assert_eq!(ok(b"9.12# tight\n"), ("9.12".into(), 1));
        assert_eq!(
            ok(b"# project pin\n\n   \n  # indented comment\n8.9.7.29_cuda12\n9.1\n"),
            ("8.9.7.29_cuda12".into(), 5)
        );
        // Windows PowerShell 5.1 `echo 8.1 > .cudnn-version`: UTF-16 LE, BOM, CRLF.
        assert_eq!(ok(&utf16("8.1\r\n", true)), ("8.1".into(), 1));
        assert_eq!(ok(&utf16("# x\r\n9.12\r\n", false)), ("9.12".into(), 2));
    }

    #[test]
    fn malformed_pins_name_the_line() {
        let e = err(b"# c\n8.1 9.0\n");
        assert_eq!(e.line, Some(2));
        assert_eq!(e.reason, "it holds 2 words; a pin holds one spec");
        let e = err(b"newest\n");
        assert_eq!(e.line, Some(1));
        assert_eq!(
            e.reason,
            "it is not a cuDNN version spec (6 characters, not shown)"
        );
        // Ranges and aliases are specs (`version::Spec`); a space inside one is two words.
        assert_eq!(ok(b">=9.1,<9.11 # range\n"), (">=9.1,<9.11".into(), 1));
        assert_eq!(ok(b"latest_cuda12\r\n"), ("latest_cuda12".into(), 1));
        assert!(err(b">=9.1, <9.11\n").reason.contains("holds 2 words"));
        // A doubled UTF-8 BOM: named, not shown.
        let e = err("\u{feff}\u{feff}9.12\n".as_bytes());
        assert_eq!(
            e.reason,
            "it is not a cuDNN version spec (5 characters, not shown; it holds invisible characters, retype the line)"
        );
        // A credentials file a pin links to: nothing of it in the reason.
        let e = err(b"https://user:ghp_0123456789@github.com\n");
        assert!(
            !e.reason.contains("ghp_") && !e.reason.contains("github"),
            "{e:?}"
        );
        let e = err(b"\n\ncudnn-9.12\n");
        assert_eq!(e.line, Some(3));
        assert_eq!(err(b"8.1_cudax").line, Some(1));
        for (bytes, needle) in [
            (&b""[..], "holds no spec"),
            (b"# only\n\n", "holds no spec"),
            (b"8\x001\x00", "NUL"),
            (b"\xFF\xFE8\x00.", "cut off"),
            (b"9.\xC312", "not UTF-8"),
            (b"\xFF\xFE\x00\xD8", "not valid UTF-16"),
        ] {
            let e = err(bytes);
            assert_eq!(e.line, None, "{bytes:?}");
            assert!(e.reason.contains(needle), "{bytes:?}: {e:?}");
        }
    }

    fn fake_release(store: &Store, version: &str, cuda: &str) -> Release {
        let version: Version = version.parse().unwrap();
        let cuda: CudaVariant = cuda.parse().unwrap();
        let dir = store.release_dir(&version, &cuda);
        fs::create_dir_all(dir.join("lib")).unwrap();
        let receipt = Receipt {
            schema: 1,
            version: version.clone(),
            cuda,
            platform: Platform::LinuxX86_64,
            flavour: None,
            header_version: version.triple(),
            installed_at: "2026-01-01T00:00:00Z".into(),
            source: Source {
                kind: crate::shape::Shape::Folder,
                name: "test".into(),
                sha256: None,
                size: 0,
                from: crate::store::Provenance::Local,
                dist: None,
            },
            files: vec![],
        };
        fs::write(dir.join("receipt.toml"), receipt.to_toml()).unwrap();
        Release { dir, receipt }
    }

    #[test]
    fn resolution_order_flag_env_pin_default() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let proj = d.path().join("proj");
        let deep = proj.join("a/b");
        fs::create_dir_all(&deep).unwrap();
        let env_at = |cwd: &Path, var: Option<&str>| {
            let vars: Vec<(&str, &str)> =
                var.map(|v| (env::CUDNNM_VERSION, v)).into_iter().collect();
            Env::from_vars(vars, cwd, false)
        };
        // Nothing at all.
        assert!(
            resolve_spec(None, &env_at(&deep, None), &home)
                .unwrap()
                .is_none()
        );
        // The default.
        home.save_config(&crate::home::Config {
            default: Some("9.12.0.46_cuda12".into()),
            ..Default::default()
        })
        .unwrap();
        let r = resolve_spec(None, &env_at(&deep, None), &home)
            .unwrap()
            .unwrap();
        assert_eq!(r.spec.to_string(), "9.12.0.46_cuda12");
        assert_eq!(
            r.source,
            SpecSource::Default {
                path: home.config_file()
            }
        );
        // A pin two folders up beats the default; a nearer one beats it.
        fs::write(proj.join(PIN_FILE), "9.27\n").unwrap();
        let r = resolve_spec(None, &env_at(&deep, None), &home)
            .unwrap()
            .unwrap();
        assert_eq!(r.spec.to_string(), "9.27");
        assert_eq!(
            r.source,
            SpecSource::PinFile {
                path: proj.join(PIN_FILE),
                line: 1
            }
        );
        fs::write(deep.join(PIN_FILE), "# inner\n8.9\n").unwrap();
        let r = resolve_spec(None, &env_at(&deep, None), &home)
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.spec.to_string(), r.source.to_string()),
            (
                "8.9".into(),
                format!("'{}' line 2", deep.join(PIN_FILE).display())
            )
        );
        // CUDNNM_VERSION beats pins; the flag beats everything.
        let r = resolve_spec(None, &env_at(&deep, Some("7.6")), &home)
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.spec.to_string(), r.source),
            ("7.6".into(), SpecSource::EnvVar)
        );
        let r = resolve_spec(Some("9.1"), &env_at(&deep, Some("7.6")), &home)
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.spec.to_string(), r.source),
            ("9.1".into(), SpecSource::Flag)
        );
        // A bad variable is an error naming it, not a silent fall-through.
        let e = resolve_spec(None, &env_at(&deep, Some("newest")), &home).unwrap_err();
        assert!(e.message().contains("CUDNNM_VERSION='newest'"), "{e}");
        assert_eq!(e.kind(), Kind::Usage);
    }

    #[test]
    fn bad_pin_files_are_errors_naming_the_file() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let proj = d.path().join("proj");
        fs::create_dir_all(proj.join(PIN_FILE)).unwrap();
        let env = Env::from_vars(Vec::<(String, String)>::new(), &proj, false);
        let e = resolve_spec(None, &env, &home).unwrap_err();
        assert!(
            e.message().contains(&format!(
                "'{}': it is a folder",
                proj.join(PIN_FILE).display()
            )),
            "{e}"
        );
        fs::remove_dir(proj.join(PIN_FILE)).unwrap();
        fs::write(proj.join(PIN_FILE), "9.12 9.27\n").unwrap();
        let e = resolve_spec(None, &env, &home).unwrap_err();
        assert_eq!(
            e.message(),
            format!(
                "could not read the pin in '{}' line 1: it holds 2 words; a pin holds one spec",
                proj.join(PIN_FILE).display()
            )
        );
        assert!(e.hint_text().unwrap().contains("e.g. 9.12"));
        #[cfg(unix)]
        {
            fs::remove_file(proj.join(PIN_FILE)).unwrap();
            std::os::unix::fs::symlink(d.path().join("gone"), proj.join(PIN_FILE)).unwrap();
            let e = resolve_spec(None, &env, &home).unwrap_err();
            assert!(e.message().starts_with("could not read the pin '"), "{e}");
            assert!(e.message().contains(PIN_FILE));
        }
        let big = d.path().join("big");
        fs::create_dir_all(&big).unwrap();
        fs::write(big.join(PIN_FILE), vec![b'#'; 70 * 1024]).unwrap();
        assert!(
            read_pin(&big.join(PIN_FILE))
                .unwrap_err()
                .message()
                .contains("more than the 64 KiB a pin may be")
        );
    }

    #[test]
    fn installed_release_errors_name_spec_source_and_install_command() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path());
        let store = Store::new(&home);
        fake_release(&store, "9.12.0.46", "12");
        fake_release(&store, "9.27.0.42", "12");
        fake_release(&store, "8.9.7.29", "11.8");
        let pick = |s: &str| {
            let r = Resolved {
                spec: s.parse().unwrap(),
                source: SpecSource::Flag,
            };
            installed_release(&r, &store, None).map(|r| r.id())
        };
        assert_eq!(pick("9").unwrap(), "9.27.0.42_cuda12");
        assert_eq!(pick("9.12").unwrap(), "9.12.0.46_cuda12");
        assert_eq!(pick("8_cuda11.8").unwrap(), "8.9.7.29_cuda11.8");
        let r = Resolved {
            spec: "9.3".parse().unwrap(),
            source: SpecSource::PinFile {
                path: PathBuf::from("/p/.cudnn-version"),
                line: 2,
            },
        };
        let e = installed_release(&r, &store, None).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert_eq!(
            e.message(),
            "cuDNN 9.3 is not installed (asked for by '/p/.cudnn-version' line 2)"
        );
        // What the catalog has: its release id, never `install 9.3`.
        assert_eq!(
            e.hint_text().unwrap(),
            "install it with `cudnnm install 9.3.0.75_cuda12`, or pin an installed one with `cudnnm pin SPEC` (see `cudnnm list`)"
        );
        let all = store.releases().unwrap();
        assert_eq!(
            select(&"9".parse().unwrap(), &all).unwrap().id(),
            "9.27.0.42_cuda12"
        );
        assert!(select(&"7".parse().unwrap(), &all).is_none());
    }

    #[test]
    fn newest_matching_reads_names_and_skips_broken_folders() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::new(&Home::new(d.path()));
        assert!(
            store
                .newest_matching(&"9".parse().unwrap())
                .unwrap()
                .is_none(),
            "no store yet"
        );
        fake_release(&store, "9.12.0.46", "12");
        fake_release(&store, "9.1.0.70", "12");
        fake_release(&store, "9.27.0.42", "11.8");
        // Newer by name, but no receipt (a crashed import) or a receipt for another version.
        fs::create_dir_all(store.root().join("cuda-12/9.30.0.1/lib")).unwrap();
        let wrong = store.root().join("cuda-12/9.40.0.1");
        fs::create_dir_all(&wrong).unwrap();
        fs::copy(
            store.root().join("cuda-12/9.12.0.46/receipt.toml"),
            wrong.join("receipt.toml"),
        )
        .unwrap();
        fs::create_dir_all(store.root().join("cuda-12/not-a-version")).unwrap();
        fs::create_dir_all(store.root().join(".partial-x/9.99.0")).unwrap();
        let id = |s: &str| {
            store
                .newest_matching(&s.parse().unwrap())
                .unwrap()
                .map(|r| r.id())
        };
        assert_eq!(id("9").as_deref(), Some("9.27.0.42_cuda11.8"));
        assert_eq!(id("9_cuda12").as_deref(), Some("9.12.0.46_cuda12"));
        assert_eq!(
            id("9.1").as_deref(),
            Some("9.1.0.70_cuda12"),
            "9.1 is not a prefix of 9.12"
        );
        assert_eq!(id("9.30"), None);
        assert_eq!(id("9.27_cuda12"), None);
    }

    #[test]
    fn newest_matching_where_takes_the_newest_that_fits() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::new(&Home::new(d.path()));
        fake_release(&store, "9.12.0.46", "12");
        fake_release(&store, "9.1.0.70", "12");
        fake_release(&store, "9.27.0.42", "11.8");
        let spec: Spec = "9".parse().unwrap();
        let id = |keep: &dyn Fn(&Release) -> bool| {
            store
                .newest_matching_where(&spec, keep)
                .unwrap()
                .map(|r| r.id())
        };
        assert_eq!(id(&|_| true).as_deref(), Some("9.27.0.42_cuda11.8"));
        assert_eq!(
            id(&|r| r.cuda().fits(12, 4)).as_deref(),
            Some("9.12.0.46_cuda12"),
            "the newest release for CUDA 12 is passed over for nothing older"
        );
        assert_eq!(
            id(&|r| r.version().minor() < 12).as_deref(),
            Some("9.1.0.70_cuda12")
        );
        assert_eq!(id(&|_| false), None);
    }

    #[test]
    fn pin_rewrites_keep_comments() {
        let s: Spec = "9.27".parse().unwrap();
        assert_eq!(pin_file_text(&s, None), "9.27\n");
        assert_eq!(
            pin_file_text(&s, Some(b"# why: ONNX\r\n9.12 # old\r\n")),
            "# why: ONNX\r\n9.27 # old\r\n"
        );
        assert_eq!(pin_file_text(&s, Some(b"garbage words")), "9.27\n");
        assert_eq!(pin_file_text(&s, Some(&utf16("8.1\r\n", true))), "9.27\r\n");
    }
}
