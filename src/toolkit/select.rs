//! Picking the one toolkit a command works on: `--cuda-root`, `--cuda X.Y`
//! (or a major, `--cuda 12`, when one toolkit of it is found), the toolkit
//! the environment prefers, or else among the toolkits found and those the
//! home knows (deployed to, or backed up) the only one, or the only one whose
//! CUDA fits the release asked for.

use std::path::{Path, PathBuf};

use super::Toolkit;
use super::discover::{DefaultFolders, candidates, discover_with, windows_cuda_parent};
use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::quote::{Dialect, quote_posix};
use crate::version::{CudaVariant, Version};

/// How `use`, `rollback` and `current` pick one toolkit.
#[derive(Clone, Debug, Default)]
pub struct Selector<'a> {
    /// `--cuda-root PATH`.
    pub root: Option<&'a Path>,
    /// `--cuda X.Y`.
    pub cuda: Option<&'a str>,
    /// Toolkits known besides those discovered (the ones `deployments.toml`
    /// records, deployed to with `--cuda-root`): `--cuda X.Y` picks one of
    /// them too, as `cudnnm toolkits` lists them.
    pub known: &'a [Toolkit],
    /// The CUDA variants of the installed releases the spec (or pin) names:
    /// when several toolkits are left to choose from, the only one a build
    /// of these fits is chosen.
    pub wants: &'a [CudaVariant],
    /// What `wants` came from, for the reason given (`cuDNN 9.12 from
    /// '/p/.cudnn-version' line 1`).
    pub wants_label: &'a str,
}

/// Picks the toolkit to work on: `--cuda-root`; else `--cuda X.Y` (Windows:
/// `CUDA_PATH_VX_Y`, then `%ProgramFiles%\…\CUDA\vX.Y`; Linux:
/// `/usr/local/cuda-X.Y`; then any discovered toolkit of that version); else
/// the toolkit named by `CUDA_PATH`/`CUDA_HOME`/`nvcc`/`/usr/local/cuda`,
/// or the only one found.
///
/// # Errors
/// [`Kind::NotFound`] when nothing matches; [`Kind::Usage`] when several
/// toolkits are found and none is preferred (the message lists them).
pub fn select(env: &Env, sel: &Selector) -> Result<Toolkit> {
    select_with(env, sel, &DefaultFolders::for_env(env))
}

/// [`select`] with explicit default folders.
pub fn select_with(env: &Env, sel: &Selector, defaults: &DefaultFolders) -> Result<Toolkit> {
    if let Some(root) = sel.root {
        let root = if root.is_absolute() {
            root.to_path_buf()
        } else {
            env.cwd().join(root)
        };
        return Toolkit::at(&root, "--cuda-root", env.is_windows());
    }
    if let Some(c) = sel.cuda {
        return select_cuda(env, c, defaults, sel.known);
    }
    let found = candidates(env, defaults);
    for c in found.iter().filter(|c| c.preferred) {
        if let Ok(t) = Toolkit::at(&c.root, &c.found_by, env.is_windows()) {
            return Ok(t);
        }
    }
    // `CUDA_PATH`/`CUDA_HOME` set to a folder that is no toolkit: passed
    // over, and said wherever the choice is reported.
    let bad_vars = misnamed(env);
    let passed_over = if bad_vars.is_empty() {
        String::new()
    } else {
        format!("; {}, passed over", misnamed_phrase(&bad_vars))
    };
    let all = pool(env, defaults, sel.known);
    if all.len() == 1 {
        let mut t = all.into_iter().next().expect("one toolkit");
        t.found_by = format!(
            "the only toolkit found or known to this home (found by {}){passed_over}",
            t.found_by
        );
        return Ok(t);
    }
    if all.is_empty() {
        let mut e = Error::new(Kind::NotFound, "no CUDA toolkit found");
        // A variable that is set but names no toolkit is the usual cause
        // (a typo, quotes left by `setx`, an uninstalled version): show it.
        for c in found.iter().filter(|c| c.found_by.starts_with("CUDA_")) {
            let why = Toolkit::at(&c.root, &c.found_by, env.is_windows())
                .err()
                .map_or_else(String::new, |e| format!(": {}", e.message()));
            e = e.cause(format!("{}='{}'{why}", c.found_by, c.root.display()));
        }
        return Err(e.hint(
            "pass --cuda-root PATH (the folder holding include/ and lib64/ or lib\\x64\\), or set CUDA_PATH / CUDA_HOME to it (without quotes)",
        ));
    }
    let fitting: Vec<&Toolkit> = all
        .iter()
        .filter(|t| {
            let (ma, mi) = t.cuda_major_minor();
            sel.wants.iter().any(|w| w.fits(ma, mi))
        })
        .collect();
    if let [one] = fitting.as_slice() {
        let mut t = (*one).clone();
        t.found_by = format!(
            "the only one of {} toolkits whose CUDA {} fits {} (found by {}){passed_over}",
            all.len(),
            t.cuda_short(),
            sel.wants_label,
            t.found_by
        );
        return Ok(t);
    }
    let among = if fitting.is_empty() {
        all.iter().collect::<Vec<_>>()
    } else {
        fitting
    };
    let fit = if among.len() < all.len() || sel.wants_label.is_empty() {
        String::new()
    } else {
        format!(" that fit {}", sel.wants_label)
    };
    if !bad_vars.is_empty() {
        let mut e = Error::new(
            Kind::Usage,
            format!(
                "{}; of the {} CUDA toolkits found{fit}, none is named by --cuda-root or --cuda: {}",
                misnamed_phrase(&bad_vars),
                among.len(),
                list(&among)
            ),
        );
        for m in &bad_vars {
            e = e.cause(m.cause());
        }
        return Err(e.hint(format!(
            "point the variable at one of them (or unset it), or {}",
            pick_hint(&among, env.is_windows())
        )));
    }
    Err(Error::new(
        Kind::Usage,
        format!(
            "{} CUDA toolkits found{fit} and none is named by --cuda-root, --cuda, CUDA_PATH, CUDA_HOME or nvcc: {}",
            among.len(),
            list(&among)
        ),
    )
    .hint(pick_hint(&among, env.is_windows())))
}

/// A `CUDA_PATH` or `CUDA_HOME` that names a folder that is not a CUDA
/// toolkit: the toolkit search passes it over, and a command that reports
/// its choice, or asks for one, says so ([`misnamed`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Misnamed {
    /// The variable (`CUDA_PATH`).
    pub var: &'static str,
    /// Its value.
    pub value: String,
    /// Why it is no toolkit (`CUDA toolkit folder '/x' does not exist`).
    pub why: String,
}

impl std::fmt::Display for Misnamed {
    /// `CUDA_PATH names '/x', which is not a CUDA toolkit`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} names '{}', which is not a CUDA toolkit",
            self.var, self.value
        )
    }
}

impl Misnamed {
    /// A `caused by:` line: `CUDA_PATH='/x': why`.
    pub fn cause(&self) -> String {
        format!("{}='{}': {}", self.var, self.value, self.why)
    }
}

/// `CUDA_PATH` and `CUDA_HOME` where set to a folder that is not a CUDA toolkit.
pub fn misnamed(env: &Env) -> Vec<Misnamed> {
    [crate::env::CUDA_PATH, crate::env::CUDA_HOME]
        .into_iter()
        .filter_map(|var| {
            let value = env.var(var)?;
            let e = Toolkit::at(Path::new(&value), var, env.is_windows()).err()?;
            Some(Misnamed {
                var,
                value,
                why: e.message().to_string(),
            })
        })
        .collect()
}

/// `CUDA_PATH names '/x', which is not a CUDA toolkit; CUDA_HOME …`.
pub fn misnamed_phrase(m: &[Misnamed]) -> String {
    m.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The toolkits found on this machine, then those the home knows that were
/// not found (one entry per root).
fn pool(env: &Env, defaults: &DefaultFolders, known: &[Toolkit]) -> Vec<Toolkit> {
    let mut all = discover_with(env, defaults);
    for k in known {
        if !all.iter().any(|t| t.root == k.root) {
            all.push(k.clone());
        }
    }
    all
}

/// `'/a' (CUDA 12.4), '/b' (CUDA 11.8)`.
fn list(toolkits: &[&Toolkit]) -> String {
    toolkits
        .iter()
        .map(|t| format!("'{}' (CUDA {})", t.root.display(), t.cuda_short()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Pick one: `--cuda X.Y` when the versions differ, else `--cuda-root`.
fn pick_hint(toolkits: &[&Toolkit], windows: bool) -> String {
    let mut versions: Vec<String> = toolkits.iter().map(|t| t.cuda_short()).collect();
    versions.sort();
    versions.dedup();
    let first = toolkits.first().expect("a toolkit to pick");
    if versions.len() == toolkits.len() {
        format!(
            "pick one with --cuda X.Y ({}) or --cuda-root PATH (e.g. `--cuda-root {}`)",
            toolkits
                .iter()
                .map(|t| format!("`--cuda {}`", t.cuda_short()))
                .collect::<Vec<_>>()
                .join(", "),
            quoted_root(&first.root, windows)
        )
    } else {
        format!(
            "pick one with --cuda-root PATH (e.g. `--cuda-root {}`)",
            quoted_root(&first.root, windows)
        )
    }
}

fn select_cuda(
    env: &Env,
    c: &str,
    defaults: &DefaultFolders,
    known: &[Toolkit],
) -> Result<Toolkit> {
    let want: Version = c.trim().trim_start_matches('v').parse().map_err(|_| {
        Error::new(Kind::Usage, format!("'{c}' is not a CUDA version"))
            .hint("write the toolkit version as X.Y, e.g. --cuda 12.4")
    })?;
    if want.parts().len() < 2 {
        return select_major(env, want.major(), defaults, known);
    }
    let (ma, mi) = (want.major(), want.minor());
    let mut tries: Vec<(PathBuf, String)> = Vec::new();
    if env.is_windows() {
        let var = format!("CUDA_PATH_V{ma}_{mi}");
        if let Some(p) = env.var(&var) {
            tries.push((PathBuf::from(p), var));
        }
        tries.push((
            windows_cuda_parent(env).join(format!("v{ma}.{mi}")),
            "default folder".into(),
        ));
    } else {
        tries.push((
            PathBuf::from(format!("/usr/local/cuda-{ma}.{mi}")),
            "default folder".into(),
        ));
    }
    for (p, by) in &tries {
        if let Ok(t) = Toolkit::at(p, by, env.is_windows())
            && t.cuda_major_minor() == (ma, mi)
        {
            return Ok(t);
        }
    }
    let all = pool(env, defaults, known);
    if let Some(t) = all.iter().find(|t| t.cuda_major_minor() == (ma, mi)) {
        return Ok(t.clone());
    }
    let seen = if all.is_empty() {
        "none".to_string()
    } else {
        all.iter()
            .map(|t| {
                format!(
                    "'{}' (CUDA {}, found by {})",
                    t.root.display(),
                    t.cuda,
                    t.found_by
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sources = if env.is_windows() {
        "CUDA_PATH, CUDA_HOME, CUDA_PATH_V*_*, nvcc on PATH, the default folders"
    } else {
        "CUDA_PATH, CUDA_HOME, nvcc on PATH, the default folders"
    };
    let mut e = Error::new(
        Kind::NotFound,
        format!(
            "no CUDA {ma}.{mi} toolkit found (looked in {}, and among the toolkits named by {sources}{})",
            tries
                .iter()
                .map(|(p, _)| format!("'{}'", p.display()))
                .collect::<Vec<_>>()
                .join(", "),
            if known.is_empty() {
                ""
            } else {
                " and the toolkits this home deployed to or backed up"
            }
        ),
    )
    .cause(format!("toolkits found: {seen}"));
    e = e.hint(match all.first() {
        Some(t) => format!(
            "pass the toolkit's folder with --cuda-root PATH (e.g. `--cuda-root {}` for CUDA {}), or --cuda with a version found",
            quoted_root(&t.root, env.is_windows()),
            t.cuda_short()
        ),
        None => "pass the toolkit's folder with --cuda-root PATH (the folder holding include/ and lib64/ or lib\\x64\\)".into(),
    });
    Err(e)
}

/// `--cuda 12`: the one CUDA 12.x toolkit found or known, saying so.
///
/// # Errors
/// [`Kind::Usage`] listing them when there are several; [`Kind::NotFound`]
/// listing the toolkits found when there is none.
fn select_major(
    env: &Env,
    major: u32,
    defaults: &DefaultFolders,
    known: &[Toolkit],
) -> Result<Toolkit> {
    let all = pool(env, defaults, known);
    let of_major: Vec<&Toolkit> = all.iter().filter(|t| t.cuda.major() == major).collect();
    match of_major.as_slice() {
        [one] => {
            let mut t = (*one).clone();
            t.found_by = format!(
                "the only CUDA {major}.x toolkit found (found by {})",
                t.found_by
            );
            Ok(t)
        }
        [] => Err(Error::new(
            Kind::NotFound,
            format!("no CUDA {major}.x toolkit found"),
        )
        .cause(format!(
            "toolkits found: {}",
            if all.is_empty() {
                "none".to_string()
            } else {
                list(&all.iter().collect::<Vec<_>>())
            }
        ))
        .hint(match all.first() {
            Some(t) => format!(
                "pass the toolkit's folder with --cuda-root PATH (e.g. `--cuda-root {}` for CUDA {}), or --cuda with a version found",
                quoted_root(&t.root, env.is_windows()),
                t.cuda_short()
            ),
            None => "pass the toolkit's folder with --cuda-root PATH (the folder holding include/ and lib64/ or lib\\x64\\)".into(),
        })),
        several => Err(Error::new(
            Kind::Usage,
            format!(
                "--cuda {major} names {} toolkits: {}",
                several.len(),
                list(several)
            ),
        )
        .hint(pick_hint(several, env.is_windows()))),
    }
}

/// `root` for the user's shell, always quoted (the example reads as a path
/// whatever it holds): POSIX single quotes, or as PowerShell reads it.
fn quoted_root(root: &Path, windows: bool) -> String {
    if windows {
        Dialect::PowerShell.path(&root.to_string_lossy())
    } else {
        String::from_utf8_lossy(&quote_posix(root.as_os_str().as_encoded_bytes())).into_owned()
    }
}
