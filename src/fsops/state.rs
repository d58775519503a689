//! State files (`deployments.toml`, `config.toml`, receipts, `backup.toml`,
//! export markers) read and written one way: TOML parsed with the line of
//! a failure named, written atomically. The records themselves are
//! `crate::record`'s; here is only how their files are read and replaced.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::write_atomic;
use crate::error::{Error, Result};
use crate::record::to_toml;

/// The largest state file read, in bytes (16 MiB; a receipt of the
/// largest release is about 20 KiB).
pub const MAX_STATE_BYTES: u64 = 16 << 20;

/// The largest `config.toml` read, in bytes (256 KiB; it holds a few
/// settings).
pub const MAX_CONFIG_BYTES: u64 = 256 << 10;

/// Reads the TOML state file at `path`; `None` when it does not exist.
/// `bad` turns a parse failure (the file, the parser's message) into the
/// error the caller reports, with its own hint. The message starts with
/// the 1-based line the parser stopped at (`line 3: invalid string`) when
/// the parser names a place. Only a regular file of at most
/// [`MAX_STATE_BYTES`] is read ([`super::read_bounded`]).
///
/// # Errors
/// When the file exists but cannot be read (names it), is not a regular
/// file or is too large, or does not parse.
pub fn load_toml<T: DeserializeOwned>(
    path: &Path,
    bad: impl FnOnce(&Path, &str) -> Error,
) -> Result<Option<T>> {
    load_toml_bounded(path, MAX_STATE_BYTES, bad)
}

/// [`load_toml`] for a file of at most `max` bytes.
///
/// # Errors
/// As [`load_toml`].
pub fn load_toml_bounded<T: DeserializeOwned>(
    path: &Path,
    max: u64,
    bad: impl FnOnce(&Path, &str) -> Error,
) -> Result<Option<T>> {
    let Some(bytes) = super::read_bounded_if_exists(path, max, "a cudnnm state file")? else {
        return Ok(None);
    };
    let s = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(_) => return Err(bad(path, "it is not UTF-8 text")),
    };
    {
        toml::from_str(&s).map(Some).map_err(|e| {
            let message = match e.span() {
                Some(span) => format!(
                    "line {}: {}",
                    1 + s.as_bytes()[..span.start.min(s.len())]
                        .iter()
                        .filter(|b| **b == b'\n')
                        .count(),
                    e.message()
                ),
                None => e.message().to_string(),
            };
            bad(path, &message)
        })
    }
}

/// [`load_toml`] for a state file whose absence means its default
/// (`deployments.toml`: no deployments; `config.toml`: default settings).
///
/// # Errors
/// As [`load_toml`].
pub fn load_toml_or_default<T: DeserializeOwned + Default>(
    path: &Path,
    bad: impl FnOnce(&Path, &str) -> Error,
) -> Result<T> {
    Ok(load_toml(path, bad)?.unwrap_or_default())
}

/// Writes `value` as TOML to `path` atomically (temporary file, fsync,
/// rename); `what` names it in an encoding error.
///
/// # Errors
/// As [`to_toml`]; when the folder is not writable or the disk is full.
pub fn save_toml<T: Serialize>(path: &Path, value: &T, what: &str) -> Result<()> {
    write_atomic(path, to_toml(value, what)?.as_bytes())
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;
    use crate::record::Entry;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Named {
        path: String,
        #[serde(flatten)]
        entry: Entry,
    }

    #[test]
    fn a_missing_state_file_is_none_or_the_default_and_a_bad_one_says_so() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("state.toml");
        let bad = |p: &Path, m: &str| Error::msg(format!("bad {}: {m}", p.display()));
        assert_eq!(load_toml::<Named>(&p, bad).unwrap(), None);
        assert_eq!(
            load_toml_or_default::<std::collections::BTreeMap<String, u32>>(&p, bad).unwrap(),
            Default::default()
        );
        let n = Named {
            path: "x".into(),
            entry: Entry::link("y"),
        };
        save_toml(&p, &n, "a test record").unwrap();
        assert_eq!(load_toml::<Named>(&p, bad).unwrap(), Some(n));
        write_atomic(&p, b"path = [").unwrap();
        let e = load_toml::<Named>(&p, bad).unwrap_err();
        assert!(e.message().starts_with("bad "), "{e:?}");
        assert!(e.message().contains("line 1: "), "{e:?}");
    }
}
