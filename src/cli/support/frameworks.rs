//! `--for` and `--python` as `install`, `pin`, `use` and `exec` take them,
//! and how the frameworks' events read: the release `--for` chose, and the
//! advisories covering a release in use or being installed or deployed.
//! The choice itself is [`crate::ops::frameworks::pick`].

use super::events::{Level, Line};
use crate::error::Result;
use crate::ops::Event;
use crate::ops::frameworks::{AdvisedInUse, For};

/// `--for` and `--python` of `install`, `pin`, `use` and `exec`: the release
/// chosen for the frameworks of a Python environment.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ForArgs {
    /// Choose the newest release that satisfies the frameworks of a Python
    /// environment: `python` (every framework there) or one (`torch`)
    #[arg(long = "for", value_name = "python|NAME")]
    pub for_: Option<String>,
    /// The Python environment for --for: its interpreter or folder [default:
    /// the active one]
    #[arg(long, value_name = "PATH", requires = "for_")]
    pub python: Option<std::path::PathBuf>,
}

impl ForArgs {
    /// The request, when `--for` is given.
    ///
    /// # Errors
    /// [`crate::error::Kind::Usage`] for a name PEP 508 does not allow.
    pub fn request(&self) -> Result<Option<For>> {
        let Some(what) = self.for_.as_deref() else {
            return Ok(None);
        };
        Ok(Some(For {
            frameworks: what.parse()?,
            python: self.python.clone(),
        }))
    }
}

/// The warning for a release in use that an advisory covers.
pub fn advised_line(a: &AdvisedInUse) -> String {
    let what = match &a.wheel {
        Some(w) => format!("the {w} wheel installed here ({})", a.release),
        None => format!("cuDNN {}, the release that applies here,", a.release),
    };
    format!(
        "{what} is covered by advisory {}: {} ({})",
        a.id, a.summary, a.source
    )
}

/// The line a frameworks event prints.
pub(super) fn render(event: &Event<'_>) -> Line {
    Some(match event {
        Event::ChosenForFrameworks {
            release,
            frameworks,
        } => (
            Level::Status,
            format!(
                "cuDNN {release}: the newest release satisfying {}",
                frameworks.join(", ")
            ),
        ),
        Event::AdvisedInUse(a) => (Level::Warning, advised_line(a)),
        Event::AdvisoryCovers { release, advisory } => (
            Level::Warning,
            format!(
                "cuDNN {release} is covered by advisory {}: {} ({})",
                advisory.id, advisory.summary, advisory.source
            ),
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_advisory_reads_with_its_id_summary_and_source() {
        let all = crate::catalog::advisory::embedded();
        let v = "9.10.0.56".parse().unwrap();
        let cuda = "12".parse().unwrap();
        let a = *crate::catalog::advisory::covering(&all, &v, &cuda, None, None)
            .first()
            .expect("the embedded advisories cover 9.10.0.56");
        let release = "9.10.0.56_cuda12".parse().unwrap();
        let (level, line) = render(&Event::AdvisoryCovers {
            release: &release,
            advisory: a,
        })
        .unwrap();
        assert_eq!(level, Level::Warning);
        assert!(
            line.starts_with("cuDNN 9.10.0.56_cuda12 is covered by advisory cudnn-9.10.0-abi: "),
            "{line}"
        );
        assert!(line.ends_with(&format!("({})", a.source)), "{line}");
    }

    #[test]
    fn a_choice_names_the_frameworks_it_satisfies() {
        let release = "9.26.0.51_cuda13".parse().unwrap();
        let names = ["onnxruntime-gpu 1.31.1".to_string(), "torch 2.15.0".into()];
        assert_eq!(
            render(&Event::ChosenForFrameworks {
                release: &release,
                frameworks: &names,
            }),
            Some((
                Level::Status,
                "cuDNN 9.26.0.51_cuda13: the newest release satisfying onnxruntime-gpu 1.31.1, torch 2.15.0".into()
            ))
        );
    }

    #[test]
    fn for_python_is_every_framework_and_a_bad_name_is_a_usage_error() {
        use crate::ops::frameworks::Frameworks;
        let args = |w: &str| ForArgs {
            for_: Some(w.into()),
            python: None,
        };
        assert_eq!(
            args("Python").request().unwrap().unwrap().frameworks,
            Frameworks::Every
        );
        assert_eq!(
            args("torch").request().unwrap().unwrap().frameworks,
            Frameworks::Only("torch".parse().unwrap())
        );
        let e = args("not a name!").request().unwrap_err();
        assert_eq!(e.kind(), crate::error::Kind::Usage);
        assert!(ForArgs::default().request().unwrap().is_none());
    }
}
