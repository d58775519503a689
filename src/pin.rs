//! Which release applies here (DESIGN.md §6): `--version` flag,
//! `CUDNNM_VERSION`, the nearest `.cudnn-version`, the default in `config.toml`.
//!
//! (Filled in by the pins issue; the types here are the contract.)

use std::path::PathBuf;

use serde::Serialize;

use crate::env::Env;
use crate::error::Result;
use crate::home::Home;
use crate::version::Spec;

/// The pin file name.
pub const PIN_FILE: &str = ".cudnn-version";

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
/// nearest `.cudnn-version` from `env.cwd()` upwards, then the default.
/// `Ok(None)` when nothing names a release.
///
/// # Errors
/// A malformed pin file or variable (names the file and line).
pub fn resolve_spec(flag: Option<&str>, _env: &Env, _home: &Home) -> Result<Option<Resolved>> {
    match flag {
        Some(s) => Ok(Some(Resolved {
            spec: s.parse()?,
            source: SpecSource::Flag,
        })),
        None => Ok(None),
    }
}
