//! The [`Spec`] a user writes to pick a release (README, "SPEC"), parsed once
//! into a [`VersionReq`] and an optional CUDA variant; the rest of the tool
//! asks [`Spec::matches`] and never looks at the text again.
//!
//! ```text
//! spec    = req [ ("_cuda" | "-cuda" | "_cu" | "-cu") cuda ] [ "+jit" | "+full" ]
//! req     = "latest" | version [ ".x" ] | bound { "," bound }
//! bound   = ( ">=" | ">" | "<=" | "<" | "=" ) version
//! version = number { "." number }          (1 to 4 numbers)
//! ```
//!
//! A bound compares the release's version cut to the bound's length (missing
//! numbers count as 0), as Cargo's comparators do: `<9.11` excludes every
//! `9.11.x` (`9.11.0.40` cut to two numbers is `9.11`), `<=9.10` includes
//! every `9.10.x`, `>9.10` starts at `9.11`, `=9.10` is the prefix `9.10`.
//!
//! `+jit` asks for NVIDIA's JIT build of a release, `+full` for the full one
//! ([`Flavour`]). Without either, the catalog's pick is the full build and an
//! installed release of either flavour matches (the full one first), so a pin
//! written before flavours existed keeps naming what it named.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{CudaVariant, Flavour, Version};
use crate::error::{Error, Kind, Result};

/// The grammar, for the hint of every spec error.
pub const GRAMMAR: &str = "write an exact version (9.10.2.21), a prefix (9.10 or 9.10.x), \
a range (>=9.1,<9.11), or latest; add _cuda12 (or _cuda11.8) to name the CUDA, e.g. latest_cuda12, \
and +jit for NVIDIA's JIT build, e.g. 9.27+jit";

/// A comparison operator of a [`Bound`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `>=`
    Ge,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `<`
    Lt,
    /// `=`: the release's version starts with the bound's numbers.
    Eq,
}

impl Op {
    fn as_str(self) -> &'static str {
        match self {
            Op::Ge => ">=",
            Op::Gt => ">",
            Op::Le => "<=",
            Op::Lt => "<",
            Op::Eq => "=",
        }
    }
}

/// One comparator of a range: `>=9.1`, `<9.11`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bound {
    /// The operator.
    pub op: Op,
    /// The version compared with, as written (1 to 4 numbers).
    pub version: Version,
}

impl Bound {
    /// Whether `v` satisfies the bound: `v` cut (or padded with zeros) to the
    /// bound's length, compared with the bound's version.
    pub fn admits(&self, v: &Version) -> bool {
        let n = self.version.parts().len();
        let cut: Vec<u32> = (0..n)
            .map(|i| v.parts().get(i).copied().unwrap_or(0))
            .collect();
        let ord = cut.as_slice().cmp(self.version.parts());
        match self.op {
            Op::Ge => ord != Ordering::Less,
            Op::Gt => ord == Ordering::Greater,
            Op::Le => ord != Ordering::Greater,
            Op::Lt => ord == Ordering::Less,
            Op::Eq => ord == Ordering::Equal,
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.op.as_str(), self.version)
    }
}

/// Which versions a spec accepts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum VersionReq {
    /// `9.10.2.21` (exact), `9.10`, `9`, or `9.10.x` (`wildcard`): every
    /// version that starts with these numbers (`9.1` does not start `9.10`).
    Prefix {
        /// The numbers.
        version: Version,
        /// Written with a trailing `.x`.
        wildcard: bool,
    },
    /// `>=9.1,<9.11`: every bound must admit the version (at least one bound).
    Range(Vec<Bound>),
    /// `latest`: every version; the newest wins.
    Latest,
}

/// What a user writes to pick a release: a [`VersionReq`] and, optionally,
/// NVIDIA's CUDA suffix (`8.9.7.29_cuda12`, `latest_cuda12`,
/// `>=9.1,<9.11_cuda12`). See the module documentation for the grammar.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Spec {
    /// The versions accepted.
    pub req: VersionReq,
    /// The CUDA variant, when the spec names one.
    pub cuda: Option<CudaVariant>,
    /// The build, when the spec names one (`+jit`, `+full`).
    pub flavour: Option<Flavour>,
}

impl Spec {
    /// The prefix (or exact) spec `version`, for `cuda` when given.
    pub fn prefix(version: Version, cuda: Option<CudaVariant>) -> Spec {
        Spec {
            req: VersionReq::Prefix {
                version,
                wildcard: false,
            },
            cuda,
            flavour: None,
        }
    }

    /// `latest`, of every CUDA and flavour.
    pub fn latest() -> Spec {
        Spec {
            req: VersionReq::Latest,
            cuda: None,
            flavour: None,
        }
    }

    /// Whether a build of `flavour` satisfies the spec: always without a
    /// `+jit` / `+full` suffix.
    pub fn admits_flavour(&self, flavour: Flavour) -> bool {
        self.flavour.is_none_or(|f| f == flavour)
    }

    /// The flavour the catalog picks for the spec: the one it names, else
    /// the full build (the JIT build is asked for by name).
    pub fn wanted_flavour(&self) -> Flavour {
        self.flavour.unwrap_or_default()
    }

    /// The version of a prefix or exact spec (`9.10` of `9.10.x`); `None` for
    /// a range or `latest`.
    pub fn version(&self) -> Option<&Version> {
        match &self.req {
            VersionReq::Prefix { version, .. } => Some(version),
            _ => None,
        }
    }

    /// A version the spec is about, for "nearest known" messages: the prefix,
    /// or the first bound's version; `None` for `latest`.
    pub fn anchor(&self) -> Option<&Version> {
        match &self.req {
            VersionReq::Prefix { version, .. } => Some(version),
            VersionReq::Range(b) => b.first().map(|b| &b.version),
            VersionReq::Latest => None,
        }
    }

    /// Whether a version number satisfies the spec, whatever its CUDA.
    pub fn admits(&self, version: &Version) -> bool {
        match &self.req {
            VersionReq::Prefix { version: p, .. } => p.is_prefix_of(version),
            VersionReq::Range(bounds) => bounds.iter().all(|b| b.admits(version)),
            VersionReq::Latest => true,
        }
    }

    /// Whether a release of `version` built for `cuda` satisfies this spec.
    /// A spec's CUDA `12` matches a release variant `12` or `12.x`; a spec's
    /// `11.2` matches only `11.2`.
    pub fn matches(&self, version: &Version, cuda: &CudaVariant) -> bool {
        self.admits(version) && self.cuda_admits(cuda)
    }

    /// Whether a build for `cuda` satisfies the spec's CUDA suffix (always, without one).
    pub fn cuda_admits(&self, cuda: &CudaVariant) -> bool {
        match &self.cuda {
            None => true,
            Some(want) => {
                want.major == cuda.major && (want.minor.is_none() || want.minor == cuda.minor)
            }
        }
    }

    /// True when the spec is `version` itself, every number written (no
    /// prefix, range or `latest`): the only way to ask for a yanked release.
    pub fn names_exactly(&self, version: &Version) -> bool {
        matches!(&self.req, VersionReq::Prefix { version: v, wildcard: false } if v == version)
    }

    /// True when the spec names a full version (three or four numbers, no
    /// `.x`) rather than a prefix, a range or `latest`.
    pub fn is_exact(&self) -> bool {
        matches!(&self.req, VersionReq::Prefix { version, wildcard: false } if version.parts().len() >= 3)
    }

    /// A phrase for `current` saying which release the spec picks among
    /// `among` (`installed`): `exactly 9.10.2.21`, `the newest installed
    /// 9.10.x release`, `the newest installed release with >=9.1 and <9.11`,
    /// each followed by ` built for CUDA 12` when the spec names its CUDA.
    pub fn describe(&self, among: &str) -> String {
        let mut cuda = self
            .cuda
            .map(|c| format!(" built for CUDA {c}"))
            .unwrap_or_default();
        match self.flavour {
            Some(Flavour::Jit) => cuda.push_str(" (JIT build)"),
            Some(Flavour::Full) => cuda.push_str(" (full build)"),
            None => {}
        }
        match &self.req {
            VersionReq::Prefix { version, .. } if self.is_exact() => {
                format!("exactly {version}{cuda}")
            }
            VersionReq::Prefix { version, .. } => {
                format!("the newest {among} {version}.x release{cuda}")
            }
            VersionReq::Range(b) => format!(
                "the newest {among} release with {}{cuda}",
                b.iter()
                    .map(Bound::to_string)
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            VersionReq::Latest => format!("the newest {among} release{cuda}"),
        }
    }
}

fn bad_spec(s: &str, why: Option<&str>) -> Error {
    let why = why.map(|w| format!(": {w}")).unwrap_or_default();
    Error::new(
        Kind::Usage,
        format!("'{s}' is not a cuDNN version spec{why}"),
    )
    .hint(GRAMMAR)
}

fn parse_version(s: &str, whole: &str) -> Result<Version> {
    s.parse::<Version>()
        .map_err(|_| bad_spec(whole, Some(&format!("'{s}' is not a version"))))
}

impl FromStr for Spec {
    type Err = Error;

    /// Parses the grammar in the module documentation.
    ///
    /// # Errors
    /// [`Kind::Usage`] naming the text and, in the hint, the grammar.
    fn from_str(s: &str) -> Result<Self> {
        let (t, flavour) = Flavour::split_suffix(s.trim());
        let t = t.trim();
        if t.contains('+') {
            return Err(bad_spec(
                s,
                Some("the only build suffixes are +jit and +full"),
            ));
        }
        let lower = t.to_ascii_lowercase();
        let (v, c) = match lower.find("_cu").or_else(|| lower.find("-cu")) {
            Some(i) => (&t[..i], Some(&t[i + 1..])),
            None => (t, None),
        };
        let cuda = match c {
            None => None,
            Some(c) => Some(
                CudaVariant::from_name_part(&c.to_ascii_lowercase()).ok_or_else(|| {
                    bad_spec(
                        s,
                        Some(&format!(
                            "'{c}' is not a CUDA suffix such as cuda12 or cuda11.8"
                        )),
                    )
                })?,
            ),
        };
        if v.is_empty() {
            return Err(bad_spec(s, None));
        }
        let req = if v.eq_ignore_ascii_case("latest") {
            VersionReq::Latest
        } else if v.starts_with(['<', '>', '=']) {
            let mut bounds = Vec::new();
            for part in v.split(',') {
                let part = part.trim();
                let (op, rest) = [
                    (">=", Op::Ge),
                    ("<=", Op::Le),
                    (">", Op::Gt),
                    ("<", Op::Lt),
                    ("=", Op::Eq),
                ]
                .iter()
                .find_map(|(p, op)| part.strip_prefix(p).map(|r| (*op, r)))
                .ok_or_else(|| {
                    bad_spec(
                        s,
                        Some(&format!("'{part}' does not start with >=, >, <=, < or =")),
                    )
                })?;
                bounds.push(Bound {
                    op,
                    version: parse_version(rest.trim(), s)?,
                });
            }
            VersionReq::Range(bounds)
        } else if let Some(p) = v.strip_suffix(".x").or_else(|| v.strip_suffix(".X")) {
            VersionReq::Prefix {
                version: parse_version(p, s)?,
                wildcard: true,
            }
        } else {
            VersionReq::Prefix {
                version: v.parse().map_err(|_| bad_spec(s, None))?,
                wildcard: false,
            }
        };
        if let VersionReq::Prefix {
            version,
            wildcard: true,
        } = &req
            && version.parts().len() >= 4
        {
            return Err(bad_spec(s, Some("a version has at most 4 numbers")));
        }
        Ok(Spec { req, cuda, flavour })
    }
}

impl fmt::Display for Spec {
    /// Writes what [`Spec::from_str`] reads back: `9.10.x`, `>=9.1,<9.11_cuda12`, `latest`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.req {
            VersionReq::Prefix { version, wildcard } => {
                write!(f, "{version}")?;
                if *wildcard {
                    f.write_str(".x")?;
                }
            }
            VersionReq::Range(b) => {
                for (i, b) in b.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{b}")?;
                }
            }
            VersionReq::Latest => f.write_str("latest")?,
        }
        if let Some(c) = &self.cuda {
            write!(f, "_cuda{c}")?;
        }
        if let Some(fl) = self.flavour {
            write!(f, "+{fl}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Spec({self})")
    }
}

super::serde_as_text!(Spec);

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }
    fn c(s: &str) -> CudaVariant {
        s.parse().unwrap()
    }
    fn spec(s: &str) -> Spec {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e:?}"))
    }

    #[test]
    fn prefixes_and_nvidia_forms() {
        let s = spec("8.9.7.29_cuda12");
        assert_eq!(s.version(), Some(&v("8.9.7.29")));
        assert_eq!(s.cuda.unwrap().to_string(), "12");
        assert!(s.matches(&v("8.9.7.29"), &c("12")));
        assert!(!s.matches(&v("8.9.7.29"), &c("11")));
        assert!(s.is_exact());
        let p = spec("8.1");
        assert!(p.matches(&v("8.1.0.77"), &c("11.2")));
        assert!(!p.matches(&v("8.10.0"), &c("12")));
        assert!(!p.is_exact());
        let s = spec("8.3.2.44_cuda11.5");
        assert_eq!(s.to_string(), "8.3.2.44_cuda11.5");
        assert!(s.matches(&v("8.3.2.44"), &c("11.5")));
        assert!(!s.matches(&v("8.3.2.44"), &c("11.6")));
        assert!(spec("9_cuda12").matches(&v("9.1.0.70"), &c("12")));
    }

    #[test]
    fn wildcards_are_prefixes_that_stop_at_a_dot() {
        let s = spec("9.10.x");
        assert_eq!(s.to_string(), "9.10.x");
        assert!(s.admits(&v("9.10.2.21")));
        assert!(s.admits(&v("9.10.0")));
        assert!(!s.admits(&v("9.1.0.70")), "9.10.x excludes 9.1.x");
        assert!(!s.admits(&v("9.100.0")));
        assert!(!s.is_exact(), "9.10.2.x is not exact");
        assert!(!spec("9.10.2.x").is_exact());
        let s = spec("9.10.x_cuda12");
        assert!(s.matches(&v("9.10.2.21"), &c("12")));
        assert!(!s.matches(&v("9.10.2.21"), &c("11.8")));
        assert!(spec("9.x").admits(&v("9.27.0.42")));
    }

    #[test]
    fn ranges_cut_the_release_version_to_the_bound() {
        let r = spec(">=9.1,<9.11");
        assert_eq!(r.to_string(), ">=9.1,<9.11");
        assert!(r.admits(&v("9.1.0.70")), ">=9.1 includes 9.1.0.x");
        assert!(r.admits(&v("9.10.2.21")));
        assert!(!r.admits(&v("9.11.0.98")), "<9.11 excludes 9.11.0.x");
        assert!(!r.admits(&v("9.0.0.312")));
        assert!(!r.admits(&v("8.9.7.29")));
        assert!(
            spec("<=9.10").admits(&v("9.10.2.21")),
            "<=9.10 includes 9.10.x"
        );
        assert!(!spec("<=9.10").admits(&v("9.11.0")));
        assert!(
            !spec(">9.10").admits(&v("9.10.2.21")),
            ">9.10 starts at 9.11"
        );
        assert!(spec(">9.10").admits(&v("9.11.0")));
        assert!(spec("=9.10").admits(&v("9.10.1")));
        assert!(!spec("=9.10").admits(&v("9.1.0")));
        assert!(spec(">=8").admits(&v("8.0.5")));
        let r = spec(" >= 9.1 , < 9.11 _cuda12");
        assert_eq!(r.to_string(), ">=9.1,<9.11_cuda12");
        assert!(r.matches(&v("9.5.0"), &c("12")));
        assert!(!r.matches(&v("9.5.0"), &c("11.8")));
        assert!(!r.is_exact());
        assert_eq!(
            r.describe("installed"),
            "the newest installed release with >=9.1 and <9.11 built for CUDA 12"
        );
        assert_eq!(
            spec("9.10.x").describe("installed"),
            "the newest installed 9.10.x release"
        );
        assert_eq!(spec("9.10.2.21").describe("installed"), "exactly 9.10.2.21");
    }

    #[test]
    fn a_build_suffix_names_the_flavour() {
        let s = spec("9.27+jit");
        assert_eq!(s.flavour, Some(Flavour::Jit));
        assert!(s.admits(&v("9.27.0.42")));
        assert!(s.admits_flavour(Flavour::Jit) && !s.admits_flavour(Flavour::Full));
        assert_eq!(s.wanted_flavour(), Flavour::Jit);
        let s = spec("latest_cuda13+JIT");
        assert_eq!(
            (s.cuda.unwrap().to_string(), s.flavour),
            ("13".into(), Some(Flavour::Jit))
        );
        let plain = spec("9.27");
        assert!(plain.admits_flavour(Flavour::Jit) && plain.admits_flavour(Flavour::Full));
        assert_eq!(plain.wanted_flavour(), Flavour::Full);
        assert_eq!(
            spec("9.12.0.46_cuda12+jit").describe("installed"),
            "exactly 9.12.0.46 built for CUDA 12 (JIT build)"
        );
        assert!(spec("9.12.0.46+jit").is_exact());
    }

    #[test]
    fn latest_takes_everything_of_its_cuda() {
        let l = spec("latest");
        assert!(l.admits(&v("7.1.3")) && l.matches(&v("9.27.0"), &c("13")));
        assert!(!l.is_exact());
        let l = spec("latest_cuda12");
        assert_eq!(l.to_string(), "latest_cuda12");
        assert!(l.matches(&v("9.27.0"), &c("12")));
        assert!(!l.matches(&v("9.27.0"), &c("13")));
        assert_eq!(spec("LATEST-cu12"), l);
    }

    #[test]
    fn every_spec_reads_back_what_it_writes() {
        for t in [
            "9",
            "9.10.x",
            "8.9.7.29_cuda12",
            ">=9.1,<9.11",
            "<9.11_cuda12",
            "=9.10",
            "latest",
            "latest_cuda11.8",
            "9.27+jit",
            "9.27.0.42_cuda12+jit",
            "latest_cuda13+full",
        ] {
            assert_eq!(spec(t).to_string(), t);
            assert_eq!(spec(&spec(t).to_string()), spec(t));
        }
    }

    #[test]
    fn bad_specs_name_the_spec_and_the_grammar() {
        for bad in [
            "",
            "8.1 9.0",
            "8.1_cudax",
            "latest_cuda",
            ">=9.1,",
            ">=9.1,9.11",
            "=>9.1",
            "9.x.1",
            "9.10.2.21.x",
            "newest",
            "~9.1",
            "_cuda12",
            "9.27+fast",
            "+jit",
            "9.27+jit+jit",
        ] {
            let e = bad.parse::<Spec>().unwrap_err();
            assert!(e.to_string().contains(&format!("'{bad}'")), "{bad}: {e}");
            assert!(
                e.hint_text()
                    .is_some_and(|h| h.contains(">=9.1,<9.11") && h.contains("latest")),
                "{bad}: {e:?}"
            );
        }
    }
}
