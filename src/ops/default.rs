//! `default`: the release used where no pin applies. Setting it records
//! the exact release id in `config.toml` and re-points the stable per-user
//! link `$CUDNNM_HOME/current/cuda-<variant>` at it atomically (symlink on
//! Unix; junction on Windows, else a directory symlink, else a recorded
//! path in `current/cuda-<variant>.path`); unsetting it removes that link.

use std::path::PathBuf;

use serde::Serialize;

use super::Session;
use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::store::Store;
use crate::version::Spec;

/// How the stable link of a new default was made.
#[derive(Debug)]
pub enum Placed {
    /// A folder link of this kind (`symlink`, `junction`).
    Link(String),
    /// No folder link could be made here (junctions under wine, a FAT
    /// volume): the release folder is recorded in this file instead.
    Recorded {
        /// The `.path` record.
        record: PathBuf,
        /// Why the link could not be made.
        error: Error,
    },
}

/// What `default` found or did.
#[derive(Debug)]
pub enum Outcome {
    /// The default, without changing it.
    Shown {
        /// The spec `config.toml` records.
        default: Option<String>,
        /// The installed release it selects.
        release: Option<String>,
        /// That release's stable link.
        link: Option<PathBuf>,
        /// For a user home with no default: the system home's, which
        /// applies instead.
        system_default: Option<String>,
    },
    /// A new default was set.
    Set {
        /// The default before.
        before: Option<String>,
        /// The release now the default.
        release: String,
        /// Its folder.
        dir: PathBuf,
        /// The stable link `current/cuda-<variant>`.
        link: PathBuf,
        /// How the link was made.
        placed: Placed,
    },
    /// The default was unset (`default none`).
    Unset {
        /// The default before; `None` when none was set (nothing changed).
        before: Option<String>,
        /// The stable link removed with it.
        removed_link: Option<PathBuf>,
    },
}

/// What `default --json` prints.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The default now.
    pub default: Option<String>,
    /// The release it selects.
    pub release: Option<String>,
    /// Its stable link.
    pub link: Option<String>,
    /// How a new link was made.
    pub link_kind: Option<String>,
}

impl Outcome {
    /// The JSON report.
    pub fn report(&self) -> Report {
        match self {
            Outcome::Shown {
                default,
                release,
                link,
                ..
            } => Report {
                default: default.clone(),
                release: release.clone(),
                link: link.as_ref().map(|l| l.display().to_string()),
                link_kind: None,
            },
            Outcome::Set {
                release,
                link,
                placed,
                ..
            } => Report {
                default: Some(release.clone()),
                release: Some(release.clone()),
                link: Some(link.display().to_string()),
                link_kind: match placed {
                    Placed::Link(k) => Some(k.clone()),
                    Placed::Recorded { .. } => None,
                },
            },
            Outcome::Unset { .. } => Report {
                default: None,
                release: None,
                link: None,
                link_kind: None,
            },
        }
    }
}

/// The default `config.toml` records and the installed release it selects.
///
/// # Errors
/// `config.toml` cannot be read.
pub fn show(session: &Session<'_>) -> Result<Outcome> {
    let default = session.home.config()?.default;
    let release = default
        .as_deref()
        .and_then(|d| d.parse::<Spec>().ok())
        .and_then(|s| Store::new(session.home).newest_matching(&s).ok().flatten());
    let system_default = match (&default, session.home.system_root()) {
        (None, Some(system)) => crate::home::Home::system(system)
            .config()
            .ok()
            .and_then(|c| c.default),
        _ => None,
    };
    Ok(Outcome::Shown {
        system_default,
        link: release
            .as_ref()
            .map(|r| session.home.current_dir().join(r.cuda().dir_name())),
        release: release.as_ref().map(|r| r.id()),
        default,
    })
}

/// Makes the newest installed release `spec` names the default.
///
/// # Errors
/// [`Kind::NotFound`] when none is installed (with what installs it); the
/// link, its record or `config.toml` cannot be written.
pub fn set(session: &Session<'_>, spec: &Spec) -> Result<Outcome> {
    set_as(session, spec, false)
}

/// [`set`] for the first release a home holds (`install`): recorded as
/// such, so that `uninstall` clears it rather than refusing.
///
/// # Errors
/// As [`set`].
pub fn set_first(session: &Session<'_>, spec: &Spec) -> Result<Outcome> {
    set_as(session, spec, true)
}

fn set_as(session: &Session<'_>, spec: &Spec, first_install: bool) -> Result<Outcome> {
    let store = Store::new(session.home);
    let release = store.newest_matching(spec)?.ok_or_else(|| {
        Error::new(Kind::NotFound, format!("no installed cuDNN matches {spec}")).hint(
            match super::offers::install_advice(session, spec, CommandLine::default_) {
                (_, Some(cmd)) => format!(
                    "install it first with `{cmd}` (see `cudnnm list` for what is installed)"
                ),
                (words, None) => format!("{words} (see `cudnnm list` for what is installed)"),
            },
        )
    })?;
    let lock = session.lock()?;
    let mut config = session.home.config()?;
    let before = config.default.clone();
    let link = session.home.current_dir().join(release.cuda().dir_name());
    let record = link.with_file_name(format!("{}.path", release.cuda().dir_name()));
    let placed = match fsops::replace_dir_link(&release.dir, &link) {
        Ok(kind) => {
            fsops::remove_file(&record)?;
            Placed::Link(kind.to_string())
        }
        Err(e) if e.kind() == Kind::Conflict => return Err(e),
        Err(error) => {
            // No folder link possible here: drop a stale link and record the path instead.
            fsops::remove_link(&link)?;
            fsops::write_atomic(&record, release.dir.to_string_lossy().as_bytes())?;
            Placed::Recorded { record, error }
        }
    };
    config.default = Some(release.id());
    config.default_is_first_install = first_install.then_some(true);
    session.home.save_config(&config)?;
    drop(lock);
    super::export::refresh(session);
    Ok(Outcome::Set {
        before,
        release: release.id(),
        dir: release.dir.clone(),
        link,
        placed,
    })
}

/// `default none`: no default any more (as `rustup default none`); the
/// stable link `current/cuda-<variant>` that pointed at it goes too, so no
/// program keeps loading a release that is no longer chosen.
///
/// # Errors
/// `config.toml` cannot be written, or the link cannot be removed.
pub fn unset(session: &Session<'_>) -> Result<Outcome> {
    let lock = session.lock()?;
    let mut config = session.home.config()?;
    config.default_is_first_install = None;
    let Some(before) = config.default.take() else {
        return Ok(Outcome::Unset {
            before: None,
            removed_link: None,
        });
    };
    let old = before
        .parse::<Spec>()
        .ok()
        .and_then(|s| Store::new(session.home).newest_matching(&s).ok().flatten());
    session.home.save_config(&config)?;
    let mut removed_link = None;
    if let Some(r) = &old {
        let link = session.home.current_dir().join(r.cuda().dir_name());
        let record = link.with_file_name(format!("{}.path", r.cuda().dir_name()));
        if std::fs::symlink_metadata(&link).is_ok() {
            fsops::remove_link(&link)?;
            removed_link = Some(link);
        }
        fsops::remove_file(&record)?;
    }
    drop(lock);
    super::export::refresh(session);
    Ok(Outcome::Unset {
        before: Some(before),
        removed_link,
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::ops::testing::{Fixture, folder};

    #[test]
    fn set_links_the_newest_match_show_finds_it_unset_removes_the_link() {
        let f = Fixture::new();
        f.release("9.1.0.70", "12", folder("a"));
        let newest = f.release("9.1.1.17", "12", folder("b"));
        let s = f.session();
        let Outcome::Set {
            before,
            release,
            link,
            placed,
            ..
        } = set(&s, &"9.1".parse().unwrap()).unwrap()
        else {
            panic!("not set")
        };
        assert_eq!((before, release.as_str()), (None, "9.1.1.17_cuda12"));
        assert_eq!(link, f.home.current_dir().join("cuda-12"));
        // No folder link where the file system cannot make one (wine):
        // the release folder is recorded instead.
        let linked = matches!(placed, Placed::Link(_));
        if linked {
            assert_eq!(
                std::fs::canonicalize(&link).unwrap(),
                std::fs::canonicalize(&newest.dir).unwrap()
            );
        }
        assert_eq!(
            f.home.config().unwrap().default.as_deref(),
            Some("9.1.1.17_cuda12")
        );

        let shown = show(&s).unwrap();
        let r = shown.report();
        assert_eq!(r.release.as_deref(), Some("9.1.1.17_cuda12"));
        assert_eq!(r.link_kind, None);

        let Outcome::Unset {
            before,
            removed_link,
        } = unset(&s).unwrap()
        else {
            panic!("not unset")
        };
        assert_eq!(before.as_deref(), Some("9.1.1.17_cuda12"));
        assert_eq!(removed_link.as_ref(), linked.then_some(&link));
        assert!(std::fs::symlink_metadata(&link).is_err());
        assert_eq!(f.home.config().unwrap().default, None);
        // Unsetting again changes nothing.
        assert!(matches!(
            unset(&s).unwrap(),
            Outcome::Unset { before: None, .. }
        ));
    }

    #[test]
    fn a_default_nothing_installs_is_refused_with_what_installs_it() {
        let f = Fixture::new();
        let e = set(&f.session(), &"9.1.0.70_cuda12".parse().unwrap()).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        let hint = e.hint_text().unwrap();
        assert!(hint.contains(" install 9.1.0.70_cuda12`"), "{hint}");
        assert_eq!(f.home.config().unwrap().default, None);
    }
}
