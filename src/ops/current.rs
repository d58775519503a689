//! `current`: which spec applies here and why (flag, `CUDNNM_VERSION`, a
//! `.cudnn-version` file, the default), the release it selects, the lock
//! beside the pin, and per toolkit what it holds
//! ([`super::toolkits::ToolkitState`]).

use std::path::PathBuf;

use serde::Serialize;

use super::toolkits::{self, ToolkitState};
use super::{Event, Session};
use crate::deploy::Deployments;
use crate::deploy::Recovered;
use crate::error::Result;
use crate::pin::lockfile::{self, ProjectLock};
use crate::pin::{self, SpecSource};
use crate::store::Store;
use crate::toolkit::{self as tk, Toolkit};

/// What `current` is asked.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Only this toolkit root (from the working folder when relative).
    pub cuda_root: Option<PathBuf>,
    /// Only the toolkit of this CUDA version (`X.Y`, or a major).
    pub cuda: Option<String>,
    /// The spec to resolve instead of the pin (`--version`).
    pub version: Option<String>,
}

/// The spec that applies here.
#[derive(Debug, Serialize)]
pub struct Applies {
    /// The spec.
    pub spec: String,
    /// Where it came from.
    pub source: SpecSource,
    /// The installed release it resolves to, if any.
    pub release: Option<String>,
    /// Which build that release is (`full`, `jit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flavour: Option<crate::version::Flavour>,
    /// The release as the text shows it (`9.12.0.46_cuda12 (JIT build)`).
    #[serde(skip)]
    pub label: Option<String>,
    /// Why that release: `the newest installed release with >=9.1 and <9.11`.
    pub why: String,
    /// The lock file beside the pin, when there is one, and the release it names.
    pub lock: Option<Locked>,
}

/// The lock file beside the pin.
#[derive(Debug, Serialize)]
pub struct Locked {
    /// The lock file.
    pub path: PathBuf,
    /// The release it names.
    pub release: String,
    /// Whether the locked release still satisfies the pin.
    pub satisfies_pin: bool,
    /// Whether it is the release the pin selects here (the newest installed
    /// match, which `exec`, `env` and `use` take).
    pub selected_here: bool,
    /// Whether it is installed.
    pub installed: bool,
}

/// What `current` shows (`--json` prints it).
#[derive(Debug, Serialize)]
pub struct Current {
    /// The spec that applies here, if any.
    pub spec: Option<Applies>,
    /// The toolkits asked about (or all worth showing) and their state.
    pub toolkits: Vec<ToolkitState>,
    /// Changes a crash left that were finished or undone first.
    pub recovered: Vec<Recovered>,
}

/// Which release applies here and what each toolkit holds; see the module
/// documentation.
///
/// # Errors
/// A pin or lock file that cannot be read, a toolkit that cannot be found
/// as asked, or state files that cannot be read.
pub fn current(session: &Session<'_>, req: &Request) -> Result<Current> {
    let recovered = session.recover_if_pending()?;
    let store = Store::new(session.home);
    let spec = applies(session, &store, req.version.as_deref())?;
    let deployments = Deployments::load(session.home)?;
    let toolkits = match (&req.cuda_root, &req.cuda) {
        (Some(root), _) => {
            let root = session.env.cwd().join(root);
            vec![Toolkit::at(&root, "--cuda-root", session.env.is_windows())?]
        }
        (None, Some(c)) => {
            let known = toolkits::recorded(session, &deployments);
            let t = tk::select(
                session.env,
                &tk::Selector {
                    cuda: Some(c),
                    known: &known,
                    ..Default::default()
                },
            )?;
            session.report.event(&Event::ToolkitChosen(&t));
            vec![t]
        }
        (None, None) => toolkits::known(session, &deployments),
    };
    Ok(Current {
        spec,
        toolkits: toolkits
            .iter()
            .map(|t| ToolkitState::read(session, t, &deployments, &store))
            .collect(),
        recovered,
    })
}

/// The spec that applies here (`version` first), the installed release it
/// selects, and the lock beside its pin.
fn applies(session: &Session<'_>, store: &Store, version: Option<&str>) -> Result<Option<Applies>> {
    let Some(r) = pin::resolve_spec(version, session.env, session.home)? else {
        return Ok(None);
    };
    let resolved = store.resolve(&r.spec).ok();
    let release = resolved.as_ref().map(|rel| rel.id());
    let (flavour, label) = match &resolved {
        Some(rel) => (Some(rel.flavour()), Some(rel.label())),
        None => (None, None),
    };
    let why = match &release {
        Some(_) => r.spec.describe("installed"),
        None => format!(
            "no installed release matches; it would be {}",
            r.spec.describe("catalog")
        ),
    };
    let lock = match &r.source {
        SpecSource::PinFile { path, .. } => {
            let path = lockfile::lock_path(path);
            ProjectLock::read(&path)?.map(|l| Locked {
                selected_here: release.as_deref() == Some(l.release.to_string().as_str()),
                installed: store.get_id(&l.release).ok().flatten().is_some(),
                release: l.release.to_string(),
                satisfies_pin: l.satisfies(&r.spec),
                path,
            })
        }
        _ => None,
    };
    Ok(Some(Applies {
        release,
        flavour,
        label,
        why,
        spec: r.spec.to_string(),
        source: r.source,
        lock,
    }))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::ops::testing::{Fixture, folder};

    #[test]
    fn the_pin_here_selects_the_newest_installed_match_and_says_why() {
        let f = Fixture::new();
        f.release("9.1.0.70", "12", folder("a"));
        f.release("9.1.1.17", "12", folder("b"));
        std::fs::write(f.root().join(pin::PIN_FILE), "9.1\n").unwrap();
        let c = current(
            &f.session(),
            &Request {
                cuda_root: Some(f.root().join("no-toolkit")),
                ..Default::default()
            },
        );
        // A --cuda-root that is no toolkit is an error, not an empty list.
        assert!(c.is_err());
        let a = applies(&f.session(), &Store::new(&f.home), None)
            .unwrap()
            .unwrap();
        assert_eq!(a.spec, "9.1");
        assert_eq!(a.release.as_deref(), Some("9.1.1.17_cuda12"));
        assert!(matches!(a.source, SpecSource::PinFile { line: 1, .. }));
        assert!(a.lock.is_none());
        let a = applies(&f.session(), &Store::new(&f.home), Some("9.2"))
            .unwrap()
            .unwrap();
        assert_eq!(a.release, None);
        assert!(
            a.why.starts_with("no installed release matches"),
            "{}",
            a.why
        );
        assert_eq!(a.source, SpecSource::Flag);
    }
}
