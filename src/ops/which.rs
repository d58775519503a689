//! `which`: the main library of the release that applies here
//! (`lib/libcudnn.so.9`, `bin\cudnn64_9.dll`), as `rustup which` and `nvm
//! which` name the tool that would run (`docs/architecture.md#pins`).

use std::path::PathBuf;

use serde::Serialize;

use super::Session;
use crate::error::{Error, Kind, Result};
use crate::names::FileKind;
use crate::pin::{self, SpecSource};
use crate::store::Release;

/// What `which` found (`--json` prints it).
#[derive(Debug, Serialize)]
pub struct Which {
    /// The release that applies here.
    pub release: String,
    /// Which build: `full` or `jit`.
    pub flavour: crate::version::Flavour,
    /// The release as the text shows it (`9.12.0.46_cuda12 (JIT build)`).
    #[serde(skip)]
    pub label: String,
    /// Its main library.
    pub library: PathBuf,
    /// Where the spec that selected it came from.
    #[serde(skip)]
    pub source: SpecSource,
}

/// The main library of the release `version` names, else of the one the
/// pin (or default) selects here.
///
/// # Errors
/// [`Kind::NotFound`] when no release applies or it is not installed;
/// [`Kind::Integrity`] when the release has no main library.
pub fn which(session: &Session<'_>, version: Option<&str>) -> Result<Which> {
    let (why, release) = pin::resolve_installed(version, session.env, session.home)?
        .ok_or_else(|| {
            Error::new(Kind::NotFound, "no cuDNN release is selected for this folder")
                .hint("pass --version SPEC, pin one with `cudnnm pin SPEC`, or set a default with `cudnnm default SPEC`")
        })?;
    let library = main_library(&release).ok_or_else(|| {
        Error::new(
            Kind::Integrity,
            format!(
                "cuDNN {} has no main library (libcudnn.so.N or cudnn64_N.dll) in '{}'",
                release.id(),
                release.loader_dir().display()
            ),
        )
        .hint(format!(
            "`cudnnm verify {}` checks the release against its receipt",
            release.id()
        ))
    })?;
    Ok(Which {
        release: release.id(),
        flavour: release.flavour(),
        label: release.label(),
        library,
        source: why.source,
    })
}

/// The release's main library in its loader folder: the name the loader
/// asks for (`libcudnn.so.9`, `cudnn64_9.dll`, [`crate::names`]), else
/// any main shared library there (the oldest releases name theirs after
/// CUDA, `cudnn64_65.dll`).
fn main_library(release: &Release) -> Option<PathBuf> {
    let dir = release.loader_dir();
    let major = release.version().major();
    let wanted = if release.platform().is_windows() {
        crate::names::dll_name("cudnn", major)
    } else {
        crate::names::soname("cudnn", major)
    };
    if dir.join(&wanted).exists() {
        return Some(dir.join(wanted));
    }
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let info = crate::names::classify(&name)?;
            (info.is_main() && info.kind == FileKind::Shared && info.loader_name().is_some())
                .then(|| (name, e.path()))
        })
        .collect();
    found.sort();
    found.into_iter().next().map(|(_, p)| p)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::error::Kind;
    use crate::ops::testing::{Fixture, folder};

    #[test]
    fn the_library_the_loader_asks_for_wins_else_any_main_library() {
        let f = Fixture::new();
        let r = f.release("9.1.0.70", "12", folder("a"));
        let lib = r.dir.join("lib");
        assert_eq!(main_library(&r), None);
        std::fs::write(lib.join("libcudnn_ops.so.9"), b"x").unwrap();
        assert_eq!(main_library(&r), None, "a sub-library is not the main one");
        std::fs::write(lib.join("libcudnn.so.9.1.0"), b"x").unwrap();
        assert_eq!(main_library(&r), Some(lib.join("libcudnn.so.9.1.0")));
        std::fs::write(lib.join("libcudnn.so.9"), b"x").unwrap();
        assert_eq!(main_library(&r), Some(lib.join("libcudnn.so.9")));
    }

    #[test]
    fn which_names_the_release_the_version_selects_and_why() {
        let f = Fixture::new();
        let r = f.release("9.1.0.70", "12", folder("a"));
        let e = which(&f.session(), Some("9.1")).unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity, "no main library: {e:?}");
        std::fs::write(r.dir.join("lib/libcudnn.so.9"), b"x").unwrap();
        let w = which(&f.session(), Some("9.1")).unwrap();
        assert_eq!(w.release, "9.1.0.70_cuda12");
        assert_eq!(w.library, r.dir.join("lib/libcudnn.so.9"));
        assert_eq!(w.source, SpecSource::Flag);
        let e = which(&f.session(), None).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
    }
}
