//! A release written out as a plain folder (`cudnnm export dir`): the
//! record that marks the folder as cudnnm's ([`Marker`], `.cudnnm-export.toml`
//! in the folder, every file it wrote by size and SHA-256 or link target),
//! the check that lets a later export replace that folder and nothing else
//! ([`check_earlier`]), and the env file ([`env_file`]) that puts the folder
//! in front of the path lists as `cudnnm exec` does
//! (`docs/architecture.md#activation`), keeping what they held.
//!
//! This module decides and renders; the command writes through `fsops`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::record::Entry;
use crate::store::FileRecord;

/// The marker record's file name inside an exported folder.
pub const MARKER_FILE: &str = ".cudnnm-export.toml";

/// The env file of a Linux (or macOS) build: POSIX shell, `. cudnn.env`.
pub const ENV_FILE: &str = "cudnn.env";

/// The env file of a Windows build: a `cmd` batch file, `call cudnn.env.cmd`.
pub const ENV_FILE_CMD: &str = "cudnn.env.cmd";

/// What `export dir` wrote into a folder: the release and every file and
/// link, so that a later export may replace exactly these and nothing else.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Marker {
    /// Who wrote the folder (`cudnnm export dir`), for people reading it.
    pub written_by: String,
    /// The release exported (`9.27.0.42_cuda12`).
    pub release: String,
    /// Every file and link written, paths relative to the folder, `/`-separated.
    pub files: Vec<FileRecord>,
}

impl Marker {
    /// A marker for `release` holding `files`.
    pub fn new(release: impl Into<String>, files: Vec<FileRecord>) -> Marker {
        Marker {
            written_by: "cudnnm export dir".into(),
            release: release.into(),
            files,
        }
    }
}

/// A folder an earlier `export dir` wrote, checked to hold only its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Earlier {
    /// The release it holds.
    pub release: String,
}

/// Checks that the non-empty folder `dest` holds only what an earlier
/// `export dir` wrote there, unchanged: every file and link recorded in its
/// [`MARKER_FILE`] with the same size and SHA-256 (or link target), and no
/// other file, link or folder (a recorded file may be missing). Reads only.
///
/// # Errors
/// [`Kind::Conflict`] naming the folder when it has no marker, or naming
/// the first path that was not written by cudnnm or changed since.
pub fn check_earlier(dest: &Path) -> Result<Earlier> {
    let marker_path = dest.join(MARKER_FILE);
    let marker: Marker = match fsops::load_toml(&marker_path, |p, m| {
        Error::new(
            Kind::Conflict,
            format!("'{}' is not a marker cudnnm can read", p.display()),
        )
        .cause(m)
        .hint("give a new folder; cudnnm replaces only a folder it exported itself")
    })? {
        Some(m) => m,
        None => {
            return Err(Error::new(
                Kind::Conflict,
                format!(
                    "'{}' exists, is not empty, and was not written by cudnnm export dir",
                    dest.display()
                ),
            )
            .hint("give a new folder (cudnnm export dir replaces only a folder it wrote itself, marked by .cudnnm-export.toml)"));
        }
    };
    let recorded = |rel: &str| marker.files.iter().find(|f| f.path == rel);
    let is_recorded_dir = |rel: &str| {
        marker
            .files
            .iter()
            .any(|f| f.path.starts_with(rel) && f.path[rel.len()..].starts_with('/'))
    };
    for item in walkdir::WalkDir::new(dest).min_depth(1).sort_by_file_name() {
        let item = item.map_err(|e| {
            Error::new(
                Kind::Failure,
                format!("could not read '{}'", dest.display()),
            )
            .cause(e)
            .hint("check the folder's permissions")
        })?;
        let rel = relative(dest, item.path());
        if rel == MARKER_FILE {
            continue;
        }
        let kind = item.file_type();
        let ok = if kind.is_dir() {
            is_recorded_dir(&rel)
        } else {
            match recorded(&rel) {
                Some(f) => same(&f.entry, item.path(), kind.is_symlink()),
                None => false,
            }
        };
        if !ok {
            return Err(not_ours(dest, item.path()));
        }
    }
    Ok(Earlier {
        release: marker.release,
    })
}

/// Whether `path` (a link when `is_link`) still is what `entry` records.
fn same(entry: &Entry, path: &Path, is_link: bool) -> bool {
    match (entry, is_link) {
        (Entry::Link { target, .. }, true) => std::fs::read_link(path)
            .is_ok_and(|t| t.to_string_lossy().replace('\\', "/") == *target),
        (Entry::File(c), false) => crate::hash::sha256_file(path)
            .is_ok_and(|(size, sha)| size == c.size && sha == c.sha256),
        _ => false,
    }
}

fn relative(dest: &Path, p: &Path) -> String {
    p.strip_prefix(dest)
        .unwrap_or(p)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn not_ours(dest: &Path, p: &Path) -> Error {
    Error::new(
        Kind::Conflict,
        format!(
            "'{}' was not written by cudnnm export dir, or changed since",
            p.display()
        ),
    )
    .hint(format!(
        "move it out of '{}' (cudnnm replaces an earlier export only when it holds nothing else), or export into a new folder",
        dest.display()
    ))
}

/// One variable the env file sets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EnvVar {
    /// Its name.
    pub name: String,
    /// The exported folder's part of it.
    pub value: String,
    /// Whether it is a path list the value goes in front of, keeping what
    /// the variable held (`LD_LIBRARY_PATH`), rather than a value that
    /// replaces it (`CUDNN_PATH`).
    pub prepend: bool,
}

/// The variables that make a release exported at `prefix` visible, as
/// `cudnnm exec` sets them: `CUDNN_PATH`, `CUDNN_INCLUDE_DIR`,
/// `CUDNN_LIBRARY_DIR`, and the release's folders in front of the loader
/// and compiler path lists (`PATH`/`INCLUDE`/`LIB` for a Windows build,
/// `LD_LIBRARY_PATH`/`CPATH`/`LIBRARY_PATH` otherwise). `prefix` is
/// written with the build's separator.
pub fn variables(prefix: &str, windows: bool) -> Vec<EnvVar> {
    let sep = if windows { '\\' } else { '/' };
    let prefix = prefix.trim_end_matches(sep);
    let under = |d: &str| format!("{prefix}{sep}{d}");
    let set = |name: &str, value: String| EnvVar {
        name: name.into(),
        value,
        prepend: false,
    };
    let pre = |name: &str, value: String| EnvVar {
        name: name.into(),
        value,
        prepend: true,
    };
    let mut vars = vec![
        set(crate::env::CUDNN_PATH, prefix.to_string()),
        set(crate::env::CUDNN_INCLUDE_DIR, under("include")),
        set(crate::env::CUDNN_LIBRARY_DIR, under("lib")),
    ];
    if windows {
        vars.push(pre(crate::env::PATH, under("bin")));
        vars.push(pre(crate::env::INCLUDE, under("include")));
        vars.push(pre(crate::env::LIB, under("lib")));
    } else {
        vars.push(pre(crate::env::LD_LIBRARY_PATH, under("lib")));
        vars.push(pre(crate::env::CPATH, under("include")));
        vars.push(pre(crate::env::LIBRARY_PATH, under("lib")));
    }
    vars
}

/// The env file's name and text for `vars` (from [`variables`]), headed by
/// `title`: for a Linux build POSIX shell lines to `.` (source), a path list
/// written `NAME='value'"${NAME:+:$NAME}"` so that what it held stays behind
/// the new entry; for a Windows build `cmd` lines, `set "NAME=value;%NAME%"`.
///
/// # Errors
/// A value holding a line break, which `cmd` cannot set.
pub fn env_file(title: &str, vars: &[EnvVar], windows: bool) -> Result<(&'static str, String)> {
    let mut text = String::new();
    if windows {
        text.push_str(&format!("@rem {title}\n"));
        for v in vars {
            let line = crate::quote::cmd_set(&v.name, &v.value)?;
            if v.prepend {
                // `set "NAME=value;%NAME%"`: the old value expands when the line runs.
                let open = line.trim_end_matches('"');
                text.push_str(&format!("{open};%{}%\"\n", v.name));
            } else {
                text.push_str(&line);
                text.push('\n');
            }
        }
        return Ok((ENV_FILE_CMD, text));
    }
    text.push_str(&format!("# {title}\n# source it: . ./cudnn.env\n"));
    for v in vars {
        let value = String::from_utf8(crate::quote::quote_posix(v.value.as_bytes()))
            .expect("quoting keeps UTF-8");
        if v.prepend {
            text.push_str(&format!(
                "{n}={value}\"${{{n}:+:${n}}}\"; export {n}\n",
                n = v.name
            ));
        } else {
            text.push_str(&format!("{n}={value}; export {n}\n", n = v.name));
        }
    }
    Ok((ENV_FILE, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::sha256_bytes;

    #[test]
    fn env_files_prepend_path_lists_and_set_scalars() {
        let vars = variables("/opt/cu dnn/", false);
        let (name, text) = env_file("cuDNN 9", &vars, false).unwrap();
        assert_eq!(name, "cudnn.env");
        assert!(
            text.lines().any(|l| l
                == "LD_LIBRARY_PATH='/opt/cu dnn/lib'\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"; export LD_LIBRARY_PATH"),
            "{text}"
        );
        assert!(
            text.lines()
                .any(|l| l == "CUDNN_PATH='/opt/cu dnn'; export CUDNN_PATH")
        );
        let win = variables(r"C:\cudnn", true);
        let (name, text) = env_file("cuDNN 9", &win, true).unwrap();
        assert_eq!(name, "cudnn.env.cmd");
        assert!(
            text.lines()
                .any(|l| l == r#"set "PATH=C:\cudnn\bin;%PATH%""#),
            "{text}"
        );
        assert!(text.lines().any(|l| l == r#"set "CUDNN_PATH=C:\cudnn""#));
    }

    #[test]
    fn only_an_unchanged_earlier_export_may_be_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out");
        let w = |rel: &str, bytes: &[u8]| {
            let p = dest.join(rel);
            crate::fsops::create_dir_all(crate::fsops::parent_of(&p)).unwrap();
            crate::fsops::write_atomic(&p, bytes).unwrap();
        };
        w("lib/libcudnn.so.9", b"lib");
        w("cudnn.env", b"env");
        let files = vec![
            FileRecord::file("lib/libcudnn.so.9", 3, sha256_bytes(b"lib")),
            FileRecord::file("cudnn.env", 3, sha256_bytes(b"env")),
        ];
        // No marker: not ours.
        let e = check_earlier(&dest).unwrap_err();
        assert_eq!(e.kind(), Kind::Conflict);
        assert!(e.message().contains("was not written by cudnnm"), "{e:?}");
        fsops::save_toml(
            &dest.join(MARKER_FILE),
            &Marker::new("9.27.0.42_cuda12", files),
            "marker",
        )
        .unwrap();
        assert_eq!(check_earlier(&dest).unwrap().release, "9.27.0.42_cuda12");
        // A file of the user's, a folder of the user's, a changed byte: refused.
        w("lib/mine.so", b"user");
        assert!(
            check_earlier(&dest)
                .unwrap_err()
                .message()
                .contains("mine.so")
        );
        crate::fsops::remove_file(&dest.join("lib/mine.so")).unwrap();
        crate::fsops::create_dir_all(&dest.join("notes")).unwrap();
        assert!(
            check_earlier(&dest)
                .unwrap_err()
                .message()
                .contains("notes")
        );
        crate::fsops::remove_dir_all(&dest.join("notes")).unwrap();
        w("cudnn.env", b"eNv");
        assert!(
            check_earlier(&dest)
                .unwrap_err()
                .message()
                .contains("cudnn.env")
        );
    }
}
