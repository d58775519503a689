//! `pin SPEC` (or `pin --for python`: the release the frameworks there
//! choose): writes `.cudnn-version` in the working folder, after checking
//! that an installed release satisfies SPEC (`force` pins one not installed
//! yet). An existing pin's comments are kept.

use std::fs;
use std::path::PathBuf;

use serde::Serialize;

use super::Session;
use crate::command::CommandLine;
use crate::env;
use crate::error::{Error, Kind, Result};
use crate::fsops;
use crate::pin::{self, PIN_FILE};
use crate::store::Store;
use crate::version::Spec;

/// What `pin` wrote (`--json` prints it).
#[derive(Debug, Serialize)]
pub struct Pinned {
    /// The pin file.
    pub path: String,
    /// The spec pinned (as the pin file spells it).
    #[serde(serialize_with = "as_text")]
    pub spec: Spec,
    /// The installed release it selects now, if any.
    pub release: Option<String>,
    /// The value of `CUDNNM_VERSION`, which takes precedence over the pin
    /// here, when it is set.
    #[serde(skip)]
    pub overridden_by: Option<String>,
}

fn as_text<S: serde::Serializer>(v: &Spec, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// Pins `spec` in the working folder.
///
/// # Errors
/// [`Kind::NotFound`] when no installed release matches and not `force`
/// (with what installs it); [`Kind::Conflict`] when a folder has the pin
/// file's name; the pin file cannot be read or written (with how to choose
/// the release without a file).
pub fn pin(session: &Session<'_>, spec: &Spec, force: bool) -> Result<Pinned> {
    let release = Store::new(session.home).newest_matching(spec)?;
    if release.is_none() && !force {
        let pin_anyway = CommandLine::pin(spec.to_string())
            .force()
            .for_host(session.env.is_windows());
        // What installs it, by the rule every install hint follows.
        return Err(
            Error::new(Kind::NotFound, format!("no installed cuDNN matches {spec}")).hint(
                match super::offers::install_advice(session, spec, CommandLine::pin) {
                    (_, Some(cmd)) => {
                        format!(
                            "install it first with `{cmd}`, or pin it anyway with `{pin_anyway}`"
                        )
                    }
                    (words, None) => format!("{words}; or pin it anyway with `{pin_anyway}`"),
                },
            ),
        );
    }
    let path = session.env.cwd().join(PIN_FILE);
    write(&path, spec)?;
    Ok(Pinned {
        path: path.display().to_string(),
        spec: spec.clone(),
        release: release.as_ref().map(|r| r.id()),
        overridden_by: session.env.var(env::CUDNNM_VERSION),
    })
}

/// Pins the release the frameworks of a Python environment choose
/// (`pin --for`, [`super::frameworks::pick`]) in the working folder.
///
/// # Errors
/// As [`super::frameworks::pick`] and [`pin`].
pub fn pin_for(session: &Session<'_>, f: &super::frameworks::For, force: bool) -> Result<Pinned> {
    let pick = super::frameworks::pick(session, f, None)?;
    pin(session, &pick.id.to_string().parse()?, force)
}

/// Writes the pin file `path` for `spec`, keeping an existing one's comments.
fn write(path: &PathBuf, spec: &Spec) -> Result<()> {
    let existing = match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(Error::new(
                Kind::Conflict,
                format!(
                    "could not write the pin '{}': a folder has that name",
                    path.display()
                ),
            )
            .hint("move the folder aside, then run `cudnnm pin` again"));
        }
        // Bounded: a pin linked to a device is replaced, not read without end.
        Ok(_) => match fsops::read_bounded(path, 64 << 10, "a pin") {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == Kind::Usage => None,
            Err(e) => return Err(e),
        },
        Err(_) => None,
    };
    fsops::write_atomic(path, pin::pin_file_text(spec, existing.as_deref()).as_bytes()).map_err(
        |e| match e.unwritable_path() {
            // A folder the user may not write to: a pin without a file.
            Some(dir) => {
                let hint = format!(
                    "pin writes '{PIN_FILE}' in the working folder, and '{}' is not yours to write: run it in a folder you may write to, or choose the release per process without a file (`CUDNNM_VERSION={spec}`, or `cudnnm exec --version {spec} -- COMMAND`)",
                    dir.display()
                );
                e.hint(hint)
            }
            None => e,
        },
    )
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::ops::testing::{Fixture, folder};

    #[test]
    fn a_spec_nothing_installs_is_pinned_only_with_force() {
        let f = Fixture::new();
        let spec: Spec = "9.1".parse().unwrap();
        let e = pin(&f.session(), &spec, false).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert!(
            e.hint_text().unwrap().contains("cudnnm pin 9.1 --force"),
            "{e:?}"
        );
        assert!(!f.root().join(PIN_FILE).exists());
        let p = pin(&f.session(), &spec, true).unwrap();
        assert_eq!(p.release, None);
        assert_eq!(
            std::fs::read_to_string(f.root().join(PIN_FILE))
                .unwrap()
                .trim(),
            "9.1"
        );
    }

    #[test]
    fn a_pin_keeps_comments_names_the_release_and_the_variable_that_overrides_it() {
        let mut f = Fixture::new();
        f.release("9.1.0.70", "12", folder("a"));
        std::fs::write(f.root().join(PIN_FILE), "# for the team\n8.9\n").unwrap();
        f.env = crate::env::Env::from_vars([(env::CUDNNM_VERSION, "8.9")], f.root(), false);
        let p = pin(&f.session(), &"9.1".parse().unwrap(), false).unwrap();
        assert_eq!(p.release.as_deref(), Some("9.1.0.70_cuda12"));
        assert_eq!(p.overridden_by.as_deref(), Some("8.9"));
        let text = std::fs::read_to_string(f.root().join(PIN_FILE)).unwrap();
        assert!(text.starts_with("# for the team\n"), "{text}");
        assert!(text.contains("9.1"), "{text}");
        assert!(!text.contains("8.9"), "{text}");
    }

    #[test]
    fn a_folder_named_like_the_pin_is_a_conflict() {
        let f = Fixture::new();
        std::fs::create_dir(f.root().join(PIN_FILE)).unwrap();
        let e = pin(&f.session(), &"9.1".parse().unwrap(), true).unwrap_err();
        assert_eq!(e.kind(), Kind::Conflict);
    }
}
