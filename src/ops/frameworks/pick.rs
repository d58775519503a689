//! `--for python|NAME` on `install`, `pin`, `use` and `exec`: the release
//! the frameworks of a Python environment choose, or the error saying why
//! none can be chosen; a choice in words (what `cudnnm frameworks` prints,
//! and what that error carries); and the advisories that cover a release
//! being installed or deployed.

use std::path::PathBuf;
use std::str::FromStr;

use pep508_rs::PackageName;

use super::{Choice, Conflict, Gather, PassedOver, Resolution, Skipped, gather};
use crate::catalog::advisory;
use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::ops::{Event, Session};
use crate::version::{CudaVariant, ReleaseId, Version};

/// Which frameworks `--for` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frameworks {
    /// `--for python`: every framework of the environment.
    Every,
    /// `--for torch`: only that distribution.
    Only(PackageName),
}

impl Frameworks {
    /// The one framework named, if any.
    pub fn only(&self) -> Option<&PackageName> {
        match self {
            Frameworks::Every => None,
            Frameworks::Only(n) => Some(n),
        }
    }
}

impl FromStr for Frameworks {
    type Err = Error;

    /// `python` (any case) is every framework; anything else a distribution name.
    ///
    /// # Errors
    /// [`Kind::Usage`] for a name PEP 508 does not allow.
    fn from_str(s: &str) -> Result<Frameworks> {
        if s.eq_ignore_ascii_case("python") {
            return Ok(Frameworks::Every);
        }
        s.parse().map(Frameworks::Only).map_err(|_| {
            Error::new(
                Kind::Usage,
                format!("'{s}' is not a Python distribution name"),
            )
            .hint(
                "name a framework as pip does: torch, tensorflow, jax-cuda13-plugin, onnxruntime-gpu",
            )
        })
    }
}

/// `--for` with `--python`: choose the release for these frameworks.
#[derive(Clone, Debug)]
pub struct For {
    /// The frameworks.
    pub frameworks: Frameworks,
    /// The Python environment (an interpreter or its folder); `None`: the active one.
    pub python: Option<PathBuf>,
}

/// The release `--for` chose.
#[derive(Clone, Debug, PartialEq)]
pub struct Pick {
    /// The release.
    pub id: ReleaseId,
    /// The PyPI package (`nvidia-cudnn-cu13`) when the catalog has it only as a wheel.
    pub wheel: Option<String>,
}

impl Pick {
    /// What `install` takes for it: the release id, or `pip:PACKAGE==VERSION`.
    pub fn install_arg(&self) -> String {
        match &self.wheel {
            Some(p) => format!("pip:{p}=={}", self.id.version),
            None => self.id.to_string(),
        }
    }
}

/// The newest release satisfying the frameworks `f` names; `toolkit`
/// limits it to builds that fit a toolkit of that CUDA (`use`). Reports
/// each release in use an advisory covers ([`Event::AdvisedInUse`]) and
/// the release chosen ([`Event::ChosenForFrameworks`]).
///
/// # Errors
/// No Python environment found; [`Kind::NotFound`] when no framework there
/// names a cuDNN; [`Kind::Conflict`] when two frameworks' requirements
/// conflict (both named, and what resolves it) or no release satisfying
/// them can be chosen here.
pub fn pick(session: &Session<'_>, f: &For, toolkit: Option<Version>) -> Result<Pick> {
    let only = f.frameworks.only();
    let g = gather(&Gather {
        env: session.env,
        home: session.home,
        python: f.python.as_deref(),
        only,
        toolkit,
    })?;
    for a in &g.report.advised {
        session.report.event(&Event::AdvisedInUse(a));
    }
    let names: Vec<String> = g
        .report
        .frameworks
        .iter()
        .filter(|x| !x.needs.is_empty())
        .map(|x| format!("{} {}", x.name, x.version))
        .collect();
    decide(&g.report.choice, only, &names, session.env.is_windows()).inspect(|p| {
        session.report.event(&Event::ChosenForFrameworks {
            release: &p.id,
            frameworks: &names,
        })
    })
}

/// The pick a choice makes, or the error for none: `names` are the
/// frameworks with a need (`torch 2.15.0`).
fn decide(
    choice: &Choice,
    only: Option<&PackageName>,
    names: &[String],
    windows: bool,
) -> Result<Pick> {
    match choice {
        Choice::Release { release, wheel, .. } => Ok(Pick {
            id: release.clone(),
            wheel: wheel.clone(),
        }),
        Choice::NoNeeds => Err(Error::new(
            Kind::NotFound,
            match only {
                Some(n) => format!(
                    "no installed framework named {n} names a cuDNN it needs in that Python environment"
                ),
                None => {
                    "no framework in that Python environment names a cuDNN it needs".to_string()
                }
            },
        )
        .hint("`cudnnm frameworks` lists what cudnnm sees there; name a release instead of --for")),
        _ => Err(Error::new(
            Kind::Conflict,
            format!("no cuDNN release can be chosen for {}", names.join(", ")),
        )
        .cause(choice_lines(choice, windows).join("\n"))
        .hint("`cudnnm frameworks` shows each requirement; name a release instead of --for, or change the environment as said above")),
    }
}

/// Reports each advisory covering release `version` for `cuda` that is
/// being installed or deployed ([`Event::AdvisoryCovers`]). A yank is said
/// by the catalog's pick instead (its reason, from the catalog), so only
/// the embedded advisories are read here.
pub fn report_advisories(session: &Session<'_>, version: &Version, cuda: &CudaVariant) {
    let all = advisory::embedded();
    let id = ReleaseId::new(version.clone(), *cuda);
    for a in advisory::covering(&all, version, cuda, None, None) {
        session.report.event(&Event::AdvisoryCovers {
            release: &id,
            advisory: a,
        });
    }
}

/// The choice in words, one line each: the release and its commands, or
/// the conflict with both requirements and what would resolve it.
pub fn choice_lines(c: &Choice, windows: bool) -> Vec<String> {
    let host = |c: CommandLine| c.for_host(windows);
    match c {
        Choice::NoNeeds => vec!["no framework here names a cuDNN it needs".to_string()],
        Choice::Release {
            release,
            passed_over,
            ..
        } => {
            let mut out = vec![format!(
                "cuDNN {release} satisfies every framework here: `{}`, then `{}`",
                host(CommandLine::install(release.to_string())),
                host(CommandLine::pin(release.to_string()))
            )];
            out.extend(
                passed_over
                    .iter()
                    .map(|s| format!("  passed over {}", skipped(s))),
            );
            out
        }
        Choice::Conflict(k) => conflict_lines(k),
        Choice::NoneRuns { passed_over } => {
            let mut out =
                vec!["releases satisfy every framework here, but none can be chosen:".to_string()];
            out.extend(passed_over.iter().map(|s| format!("  {}", skipped(s))));
            out
        }
        Choice::NoneKnown => vec![
            "the catalog has no release that satisfies every framework here (`cudnnm manifest refresh` updates it)".to_string(),
        ],
    }
}

fn conflict_lines(k: &Conflict) -> Vec<String> {
    let mut out = vec![
        "no cuDNN satisfies both:".to_string(),
        format!("  {}", k.first.describe()),
        format!("  {}", k.second.describe()),
    ];
    if k.first.cuda != k.second.cuda {
        out.push(format!(
            "  cuDNN builds for CUDA {} and CUDA {} install the same files (nvidia/cudnn/lib) and a process loads one libcudnn",
            k.first.cuda, k.second.cuda
        ));
    }
    out.push("resolve it with one of:".to_string());
    for r in &k.resolutions {
        out.push(match r {
            Resolution::OtherBuild {
                framework,
                version,
                cuda,
                cudnn,
            } => format!(
                "  {framework} {version} has a build for CUDA {cuda} (with cuDNN {cudnn}): install that build instead"
            ),
            Resolution::SeparateEnvironments { frameworks } => format!(
                "  {} and {} in separate environments, each run in its own process",
                frameworks[0], frameworks[1]
            ),
        });
    }
    out
}

fn skipped(s: &Skipped) -> String {
    let why = match &s.why {
        PassedOver::Advisory { id, summary } => format!("advisory {id}: {summary}"),
        PassedOver::Gpu { needs, has } => {
            format!("needs compute capability {needs}; the oldest GPU in use has {has}")
        }
        PassedOver::Driver { needs, has } => {
            format!("needs driver {needs} or newer; this one is {has}")
        }
        PassedOver::Toolkit { cuda } => format!("not built for the CUDA {cuda} toolkit"),
    };
    format!("{} ({why})", s.release)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::frameworks::Skipped;

    fn names() -> Vec<String> {
        vec!["torch 2.15.0".into(), "onnxruntime-gpu 1.31.1".into()]
    }

    #[test]
    fn a_release_only_on_pypi_installs_as_its_wheel() {
        let choice = Choice::Release {
            release: "9.26.0.51_cuda13".parse().unwrap(),
            wheel: Some("nvidia-cudnn-cu13".into()),
            passed_over: vec![],
        };
        let pick = decide(&choice, None, &names(), false).unwrap();
        assert_eq!(pick.id.to_string(), "9.26.0.51_cuda13");
        assert_eq!(pick.install_arg(), "pip:nvidia-cudnn-cu13==9.26.0.51");
        let archive = Pick {
            wheel: None,
            ..pick
        };
        assert_eq!(archive.install_arg(), "9.26.0.51_cuda13");
    }

    #[test]
    fn no_need_is_not_found_naming_the_framework_asked_for() {
        let torch: PackageName = "torch".parse().unwrap();
        let e = decide(&Choice::NoNeeds, Some(&torch), &[], false).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert_eq!(
            e.message(),
            "no installed framework named torch names a cuDNN it needs in that Python environment"
        );
    }

    #[test]
    fn none_that_runs_is_a_conflict_carrying_each_release_passed_over() {
        let choice = Choice::NoneRuns {
            passed_over: vec![Skipped {
                release: "9.10.0.56_cuda12".parse().unwrap(),
                why: PassedOver::Toolkit {
                    cuda: "11.8".parse().unwrap(),
                },
            }],
        };
        let e = decide(&choice, None, &names(), false).unwrap_err();
        assert_eq!(e.kind(), Kind::Conflict);
        assert_eq!(
            e.message(),
            "no cuDNN release can be chosen for torch 2.15.0, onnxruntime-gpu 1.31.1"
        );
        assert_eq!(
            e.causes(),
            [
                "releases satisfy every framework here, but none can be chosen:\n  9.10.0.56_cuda12 (not built for the CUDA 11.8 toolkit)"
            ]
        );
    }
}
