//! Names for what a release is: its cuDNN [`Version`], the [`CudaVariant`] it
//! was built for, its [`Platform`], the [`Spec`] a user writes to pick one,
//! and the [`PipRequirement`] that names its wheel on PyPI.
//!
//! Everything here is pure and parsed once; the rest of the tool compares these
//! values instead of strings.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Kind, Result};

/// Serialises a type as its `Display` text and reads it back through
/// `FromStr`: versions, variants, ids and specs are strings in every record.
macro_rules! serde_as_text {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use serde_as_text;

mod spec;
pub use spec::{Bound, Op, Spec, VersionReq};
mod driver;
pub use driver::DriverVersion;
mod requirement;
pub use requirement::{CudnnPackage, PipRequirement};
mod package;
pub use package::{Flavour, Package, release_of};

/// A cuDNN version of one to four numbers: `9`, `8.1`, `7.1.3`, `8.1.0.77`.
///
/// The fourth number is NVIDIA's build number; it appears only in file and
/// package names, never in the headers (`docs/releases.md#version-number`). Ordering is numeric
/// per component, and a shorter version sorts before a longer one it prefixes
/// (`7.1.3 < 7.1.3.0`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Version(Vec<u32>);

/// How near one version is to another ([`Version::nearness`]): spelled
/// as its start, leading numbers shared, closeness of the first that differs.
pub type Nearness = (bool, usize, std::cmp::Reverse<u32>);

impl Version {
    /// Builds a version from its components (1 to 4 of them).
    ///
    /// # Panics
    /// If `parts` is empty or longer than 4; callers pass literals.
    pub fn from_parts(parts: &[u32]) -> Self {
        assert!((1..=4).contains(&parts.len()), "a version has 1 to 4 parts");
        Version(parts.to_vec())
    }

    /// The components, major first.
    pub fn parts(&self) -> &[u32] {
        &self.0
    }

    /// The major version (`8` in `8.1.0.77`).
    pub fn major(&self) -> u32 {
        self.0[0]
    }

    /// The minor version, 0 when absent.
    pub fn minor(&self) -> u32 {
        self.0.get(1).copied().unwrap_or(0)
    }

    /// The patch level, 0 when absent.
    pub fn patch(&self) -> u32 {
        self.0.get(2).copied().unwrap_or(0)
    }

    /// The build number (`77` in `8.1.0.77`), if the version has one.
    pub fn build(&self) -> Option<u32> {
        self.0.get(3).copied()
    }

    /// How near `other` is to this version, for "did you mean" lists
    /// (larger is nearer): whether this version spells the start of
    /// `other` (`8.1.0.7` → `8.1.0.77`, a digit short), then how many
    /// leading numbers they share, then how close the first number that
    /// differs is (`9.12` is nearer `9.11` than `9.25`). `None` when they
    /// share not even the major.
    pub fn nearness(&self, other: &Version) -> Option<Nearness> {
        let spelled = other.to_string().starts_with(&self.to_string());
        let (a, b) = (self.parts(), other.parts());
        let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let gap = match (a.get(common), b.get(common)) {
            (Some(x), Some(y)) => x.abs_diff(*y),
            _ => 0,
        };
        (spelled || common > 0).then_some((spelled, common, std::cmp::Reverse(gap)))
    }

    /// Up to `n` of `candidates` nearest this version ([`Version::nearness`]),
    /// nearest first, the newest first among equals.
    pub fn nearest<'a>(&self, candidates: &'a [Version], n: usize) -> Vec<&'a Version> {
        let mut scored: Vec<(_, &Version)> = candidates
            .iter()
            .filter_map(|c| Some((self.nearness(c)?, c)))
            .collect();
        scored.sort_by(|a, b| (b.0, b.1).cmp(&(a.0, a.1)));
        scored.dedup_by(|a, b| a.1 == b.1);
        scored.into_iter().take(n).map(|(_, c)| c).collect()
    }

    /// True when every component of `self` equals the same component of
    /// `other` (`7.1` prefixes `7.1.3`; a version prefixes itself).
    pub fn is_prefix_of(&self, other: &Version) -> bool {
        self.0.len() <= other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a == b)
    }

    /// The first three components (`8.1.0` of `8.1.0.77`), padding with zeros.
    pub fn triple(&self) -> Version {
        Version(vec![self.major(), self.minor(), self.patch()])
    }

    /// The `CUDNN_VERSION` integer that the headers define and that
    /// `cudnnGetVersion()` returns: `MAJOR*1000 + MINOR*100 + PATCHLEVEL` up to
    /// cuDNN 8, `MAJOR*10000 + MINOR*100 + PATCHLEVEL` from cuDNN 9 (NVIDIA cuDNN
    /// 9.0.0 release notes; `docs/releases.md#version-number`). `7.1.3 → 7103`, `9.27.0 → 92700`.
    pub fn cudnn_version_number(&self) -> u64 {
        let (ma, mi, pa) = (
            self.major() as u64,
            self.minor() as u64,
            self.patch() as u64,
        );
        if ma >= 9 {
            ma * 10000 + mi * 100 + pa
        } else {
            ma * 1000 + mi * 100 + pa
        }
    }

    /// The inverse of [`Version::cudnn_version_number`]: `91200 → 9.12.0`,
    /// `8100 → 8.1.0`. Values from 90000 on use the cuDNN 9 formula.
    pub fn from_cudnn_version_number(n: u64) -> Version {
        let (ma, mi, pa) = if n >= 90000 {
            (n / 10000, (n / 100) % 100, n % 100)
        } else {
            (n / 1000, (n / 100) % 10, n % 100)
        };
        Version(vec![ma as u32, mi as u32, pa as u32])
    }
}

impl FromStr for Version {
    type Err = Error;

    /// Parses `8.1.0.77`, `7.1.3`, `8.1`, `9`; a leading `v` is accepted.
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let bad = || {
            Error::new(Kind::Usage, format!("'{s}' is not a cuDNN version"))
                .hint("write a version such as 8.1.0.77, 7.1.3, 8.1 or 9")
        };
        if t.is_empty() {
            return Err(bad());
        }
        let mut parts = Vec::new();
        for p in t.split('.') {
            if p.is_empty() || p.len() > 9 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            parts.push(p.parse::<u32>().map_err(|_| bad())?);
        }
        if parts.len() > 4 {
            return Err(bad());
        }
        Ok(Version(parts))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Version({self})")
    }
}

serde_as_text!(Version);

/// The CUDA a cuDNN build targets: `8.0`, `10.2`, `11.2` (full `major.minor`,
/// as in old archive names) or `12` (major only, as in `_cuda12` redist
/// archives and `-cu12` wheels).
///
/// Before CUDA 11 a build fits only the toolkit of the same `major.minor`;
/// from CUDA 11 on, NVIDIA's minor-version compatibility lets a build serve
/// every toolkit of the same major (CUDA compatibility guide,
/// `docs/releases.md#minor-version-compatibility`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CudaVariant {
    major: u32,
    minor: Option<u32>,
}

impl CudaVariant {
    /// `major.minor` variant.
    pub fn new(major: u32, minor: Option<u32>) -> Self {
        CudaVariant { major, minor }
    }

    /// The CUDA major version.
    pub fn major(&self) -> u32 {
        self.major
    }

    /// The CUDA minor version, when the variant names one.
    pub fn minor(&self) -> Option<u32> {
        self.minor
    }

    /// Whether a build for this variant runs in a toolkit of CUDA
    /// `major.minor`: exact `major.minor` before CUDA 11, same major from 11 on.
    pub fn fits(&self, toolkit_major: u32, toolkit_minor: u32) -> bool {
        if self.major != toolkit_major {
            return false;
        }
        if self.major >= 11 {
            return true;
        }
        self.minor == Some(toolkit_minor)
    }

    /// Store folder name: `cuda-11.2`, `cuda-12`.
    pub fn dir_name(&self) -> String {
        format!("cuda-{self}")
    }

    /// Parses the CUDA part of NVIDIA's names: `cuda12`, `cuda11.5`, `cu12`,
    /// `11.2`. NVIDIA's `_cuda10` redist archives (8.6–8.7) carry CUDA 10.2
    /// (redistrib_8.6.0.json), so a bare `10` from a name means `10.2`.
    pub fn from_name_part(s: &str) -> Option<Self> {
        let t = s
            .strip_prefix("cuda")
            .or_else(|| s.strip_prefix("cu"))
            .unwrap_or(s);
        let v: Version = t.parse().ok()?;
        match v.parts() {
            [10] => Some(CudaVariant::new(10, Some(2))),
            [ma] => Some(CudaVariant::new(*ma, None)),
            [ma, mi] | [ma, mi, _] => Some(CudaVariant::new(*ma, Some(*mi))),
            _ => None,
        }
    }
}

impl FromStr for CudaVariant {
    type Err = Error;

    /// Parses a user-given variant: `12`, `11.2`, `cuda12`, `cu11`, `10.2`.
    /// CUDA before 11 needs its minor (`10.2`, `8.0`).
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        let t = t
            .strip_prefix("cuda")
            .or_else(|| t.strip_prefix("cu"))
            .unwrap_or(t)
            .trim_start_matches(['-', '_']);
        let bad = || {
            Error::new(Kind::Usage, format!("'{s}' is not a CUDA version"))
                .hint("write a CUDA version such as 12, 11.2, 10.2 or 8.0")
        };
        let v: Version = t.parse().map_err(|_| bad())?;
        let c = match v.parts() {
            [ma] => CudaVariant::new(*ma, None),
            [ma, mi] | [ma, mi, _] => CudaVariant::new(*ma, Some(*mi)),
            _ => return Err(bad()),
        };
        if c.major < 11 && c.minor.is_none() {
            return Err(Error::new(
                Kind::Usage,
                format!("CUDA '{s}' needs a minor version: before CUDA 11 a cuDNN build fits only one major.minor"),
            )
            .hint(format!("write it in full, e.g. {}.0 or {}.2", c.major, c.major)));
        }
        Ok(c)
    }
}

impl fmt::Display for CudaVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.minor {
            Some(mi) => write!(f, "{}.{}", self.major, mi),
            None => write!(f, "{}", self.major),
        }
    }
}

impl fmt::Debug for CudaVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CudaVariant({self})")
    }
}

serde_as_text!(CudaVariant);

/// The platform a release's binaries are built for, in NVIDIA's redist names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Platform {
    /// `windows-x86_64`: DLLs and import libraries.
    WindowsX86_64,
    /// `linux-x86_64`.
    LinuxX86_64,
    /// `linux-sbsa`: Arm servers.
    LinuxSbsa,
    /// `linux-aarch64`: Jetson.
    LinuxAarch64,
    /// `linux-ppc64le`.
    LinuxPpc64le,
    /// `windows-arm64`: Windows on Arm (PyPI `win_arm64` wheels from
    /// 9.26.1.1; NVIDIA's `windows-arm64` redist archives from 9.27.0).
    WindowsArm64,
}

impl Platform {
    /// Every platform, in display order.
    pub const ALL: [Platform; 6] = [
        Platform::WindowsX86_64,
        Platform::LinuxX86_64,
        Platform::LinuxSbsa,
        Platform::LinuxAarch64,
        Platform::LinuxPpc64le,
        Platform::WindowsArm64,
    ];

    /// NVIDIA's name: `windows-x86_64`, `linux-x86_64`, `linux-sbsa`, …
    pub fn as_str(&self) -> &'static str {
        match self {
            Platform::WindowsX86_64 => "windows-x86_64",
            Platform::LinuxX86_64 => "linux-x86_64",
            Platform::LinuxSbsa => "linux-sbsa",
            Platform::LinuxAarch64 => "linux-aarch64",
            Platform::LinuxPpc64le => "linux-ppc64le",
            Platform::WindowsArm64 => "windows-arm64",
        }
    }

    /// True for Windows platforms (DLLs in `bin`, import libraries in `lib\x64`).
    pub fn is_windows(&self) -> bool {
        matches!(self, Platform::WindowsX86_64 | Platform::WindowsArm64)
    }

    /// The platform of a wheel's platform tag (PEP 425; the last part of
    /// its file name): `manylinux_2_27_x86_64`, `manylinux2014_x86_64`,
    /// `manylinux1_x86_64` → linux-x86_64; `manylinux*_aarch64` →
    /// linux-sbsa (NVIDIA's aarch64 wheels are its Arm server builds, the
    /// ones its redist tree calls sbsa); `win_amd64` → windows-x86_64;
    /// `win_arm64` → windows-arm64. `None` for `any` and every other tag.
    /// A compressed tag set (`a.b`) gives the platform all its members share.
    pub fn from_wheel_tag(tag: &str) -> Option<Platform> {
        let mut out: Option<Platform> = None;
        for t in tag.split('.') {
            let p = match t {
                "win_amd64" => Platform::WindowsX86_64,
                "win_arm64" => Platform::WindowsArm64,
                t if t.starts_with("manylinux") && t.ends_with("_x86_64") => Platform::LinuxX86_64,
                t if t.starts_with("manylinux") && t.ends_with("_aarch64") => Platform::LinuxSbsa,
                _ => return None,
            };
            if out.is_some_and(|o| o != p) {
                return None;
            }
            out = Some(p);
        }
        out
    }

    /// The platform this binary was built for, if cuDNN ships for it.
    pub fn host() -> Option<Platform> {
        if cfg!(all(windows, target_arch = "x86_64")) {
            Some(Platform::WindowsX86_64)
        } else if cfg!(all(windows, target_arch = "aarch64")) {
            Some(Platform::WindowsArm64)
        } else if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            Some(Platform::LinuxX86_64)
        } else if cfg!(all(target_os = "linux", target_arch = "aarch64")) {
            Some(Platform::LinuxSbsa)
        } else if cfg!(all(target_os = "linux", target_arch = "powerpc64")) {
            Some(Platform::LinuxPpc64le)
        } else {
            None
        }
    }
}

impl FromStr for Platform {
    type Err = Error;

    /// Parses NVIDIA's names and the common aliases (`windows`, `linux`,
    /// `win-x64`, `linux-x64`, `linux-aarch64sbsa`).
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_lowercase();
        Ok(match t.as_str() {
            "windows-x86_64" | "windows" | "win" | "win-x64" | "windows-x64" | "win64" => {
                Platform::WindowsX86_64
            }
            "linux-x86_64" | "linux" | "linux-x64" => Platform::LinuxX86_64,
            "linux-sbsa" | "linux-aarch64sbsa" => Platform::LinuxSbsa,
            "linux-aarch64" => Platform::LinuxAarch64,
            "linux-ppc64le" => Platform::LinuxPpc64le,
            "windows-arm64" | "win-arm64" | "windows-aarch64" => Platform::WindowsArm64,
            _ => {
                return Err(Error::new(Kind::Usage, format!("'{s}' is not a cuDNN platform")).hint(
                    "use one of windows-x86_64, windows-arm64, linux-x86_64, linux-sbsa, linux-aarch64, linux-ppc64le",
                ));
            }
        })
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Platform {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Platform {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The canonical id of a release: `8.9.7.29_cuda12`, `8.1.0.77_cuda11.2`.
pub fn release_id(version: &Version, cuda: &CudaVariant) -> String {
    ReleaseId::new(version.clone(), *cuda).to_string()
}

/// Which release: its full version, the CUDA variant it was built for,
/// and its [`Flavour`]. Written as `<version>_cuda<variant>` for the full
/// build (`9.12.0.46_cuda12`, `8.1.0.77_cuda11.2`: every id written before
/// flavours existed) and with `+jit` for the JIT build
/// (`9.12.0.46_cuda12+jit`) in records and messages, and read back from
/// exactly that form, so a record names the store folder without parsing a
/// spec.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReleaseId {
    /// The release version (`9.12.0.46`).
    pub version: Version,
    /// The CUDA variant (`12`, `11.2`).
    pub cuda: CudaVariant,
    /// Which build.
    pub flavour: Flavour,
}

impl ReleaseId {
    /// The id of the full build of `version` for `cuda`.
    pub fn new(version: Version, cuda: CudaVariant) -> ReleaseId {
        ReleaseId {
            version,
            cuda,
            flavour: Flavour::Full,
        }
    }

    /// The same release in `flavour`.
    pub fn with_flavour(mut self, flavour: Flavour) -> ReleaseId {
        self.flavour = flavour;
        self
    }

    /// The spec that names exactly this release.
    pub fn spec(&self) -> Spec {
        let mut s = Spec::prefix(self.version.clone(), Some(self.cuda));
        s.flavour = Some(self.flavour);
        s
    }

    /// The name of its store folder below `cuda-<variant>/`: the version,
    /// with `+jit` for the JIT build (`9.12.0.46`, `9.12.0.46+jit`).
    pub fn dir_name(&self) -> String {
        format!("{}{}", self.version, self.flavour.suffix())
    }

    /// Reads a store folder name ([`ReleaseId::dir_name`]) back into the
    /// version and the flavour the name says; `None` for anything else.
    pub fn parse_dir_name(name: &str) -> Option<(Version, Flavour)> {
        let (v, flavour) = match name.strip_suffix(Flavour::Jit.suffix()) {
            Some(v) => (v, Flavour::Jit),
            None => (name, Flavour::Full),
        };
        if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return None;
        }
        Some((v.parse().ok()?, flavour))
    }
}

impl FromStr for ReleaseId {
    type Err = Error;

    /// Reads what [`fmt::Display`] writes. The variant is taken as written
    /// (`_cuda10` stays `10`; only names from NVIDIA are read as 10.2).
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::new(Kind::Usage, format!("'{s}' is not a release id"))
                .hint("a release id is a version and its CUDA variant, e.g. 9.12.0.46_cuda12 (9.12.0.46_cuda12+jit for the JIT build)")
        };
        let (text, flavour) = Flavour::split_suffix(s.trim());
        let (v, c) = text.trim().split_once("_cuda").ok_or_else(bad)?;
        let version: Version = v.parse().map_err(|_| bad())?;
        let cuda = match c.parse::<Version>().map_err(|_| bad())?.parts() {
            [ma] => CudaVariant::new(*ma, None),
            [ma, mi] => CudaVariant::new(*ma, Some(*mi)),
            _ => return Err(bad()),
        };
        Ok(ReleaseId {
            version,
            cuda,
            flavour: flavour.unwrap_or_default(),
        })
    }
}

impl fmt::Display for ReleaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}_cuda{}{}",
            self.version,
            self.cuda,
            self.flavour.suffix()
        )
    }
}

impl fmt::Debug for ReleaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReleaseId({self})")
    }
}

serde_as_text!(ReleaseId);

/// A Python project name as PyPI compares them (PEP 503 normalization:
/// lower case, each run of `-`, `_`, `.` one `sep`): `-` for requirements
/// (`Nvidia_CUDNN_cu12` → `nvidia-cudnn-cu12`), `_` for a wheel file's
/// distribution part (PEP 427: `nvidia_cudnn_cu12`).
pub fn python_name(name: &str, sep: char) -> String {
    let mut out = String::with_capacity(name.len());
    let mut run = false;
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            run = true;
            continue;
        }
        if run && !out.is_empty() {
            out.push(sep);
        }
        run = false;
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn the_nearest_versions_start_with_what_was_typed_then_share_the_most_numbers() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        let have = [v("8.1.0.77"), v("8.1.1.33"), v("8.9.7.29"), v("9.1.0.70")];
        let near = v("8.1.0.7").nearest(&have, 3);
        assert_eq!(near, [&have[0], &have[1], &have[2]]);
        let nines = [v("9.10.2.21"), v("9.13.0.50"), v("9.25.0.15")];
        assert_eq!(v("9.12").nearest(&nines, 2), [&nines[1], &nines[0]]);
        assert_eq!(v("9.99.0.0").nearest(&have, 3), [&have[3]]);
        assert!(v("7.6").nearest(&have, 3).is_empty());
    }

    #[test]
    fn versions_parse_and_order() {
        assert_eq!(v("8.1.0.77").parts(), &[8, 1, 0, 77]);
        assert_eq!(v("v7.1").parts(), &[7, 1]);
        assert!(v("7.1.3") < v("7.1.3.4"));
        assert!(v("9.9.0") < v("9.10.0"));
        assert!(v("8.9.7.29") < v("9.0.0.312"));
        for bad in ["", "8.", ".1", "8..1", "a.b", "1.2.3.4.5", "8.1-rc", "-1"] {
            assert!(bad.parse::<Version>().is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn prefix() {
        assert!(v("7.1").is_prefix_of(&v("7.1.3")));
        assert!(v("7.1.3").is_prefix_of(&v("7.1.3")));
        assert!(!v("7.1.3").is_prefix_of(&v("7.1")));
        assert!(!v("8.1").is_prefix_of(&v("8.10.0")));
    }

    #[test]
    fn cudnn_version_numbers_follow_nvidia_formulas() {
        assert_eq!(v("7.1.3").cudnn_version_number(), 7103);
        assert_eq!(v("8.1.0.77").cudnn_version_number(), 8100);
        assert_eq!(v("8.9.7").cudnn_version_number(), 8907);
        assert_eq!(v("9.1.0").cudnn_version_number(), 90100);
        assert_eq!(v("9.12.0.46").cudnn_version_number(), 91200);
        assert_eq!(v("9.27.0").cudnn_version_number(), 92700);
        for n in [7103, 8100, 8907, 90000, 91002, 92700] {
            assert_eq!(
                Version::from_cudnn_version_number(n).cudnn_version_number(),
                n
            );
        }
        assert_eq!(Version::from_cudnn_version_number(91200), v("9.12.0"));
    }

    #[test]
    fn cuda_fit_rules() {
        let c112: CudaVariant = "11.2".parse().unwrap();
        let c12: CudaVariant = "12".parse().unwrap();
        let c80: CudaVariant = "8.0".parse().unwrap();
        assert!(c112.fits(11, 2));
        assert!(c112.fits(11, 8), "minor-version compatibility from CUDA 11");
        assert!(!c112.fits(12, 0));
        assert!(c12.fits(12, 9));
        assert!(c80.fits(8, 0));
        assert!(!c80.fits(9, 0));
        let c102: CudaVariant = "10.2".parse().unwrap();
        assert!(
            !c102.fits(10, 1),
            "before CUDA 11 only the exact major.minor fits"
        );
        assert!("10".parse::<CudaVariant>().is_err());
        assert_eq!("cuda12".parse::<CudaVariant>().unwrap(), c12);
        assert_eq!(
            CudaVariant::from_name_part("cuda10").unwrap().to_string(),
            "10.2"
        );
        assert_eq!(
            CudaVariant::from_name_part("cuda11.5").unwrap().to_string(),
            "11.5"
        );
        assert_eq!(
            CudaVariant::from_name_part("cu12").unwrap().to_string(),
            "12"
        );
        assert_eq!(c112.dir_name(), "cuda-11.2");
    }

    #[test]
    fn platforms() {
        for p in Platform::ALL {
            assert_eq!(p.as_str().parse::<Platform>().unwrap(), p);
        }
        for (tag, p) in [
            ("manylinux_2_27_x86_64", Some(Platform::LinuxX86_64)),
            ("manylinux1_x86_64", Some(Platform::LinuxX86_64)),
            ("manylinux2014_aarch64", Some(Platform::LinuxSbsa)),
            ("manylinux_2_27_aarch64", Some(Platform::LinuxSbsa)),
            ("win_amd64", Some(Platform::WindowsX86_64)),
            ("win_arm64", Some(Platform::WindowsArm64)),
            (
                "manylinux2014_x86_64.manylinux_2_17_x86_64",
                Some(Platform::LinuxX86_64),
            ),
            ("manylinux2014_x86_64.win_amd64", None),
            ("any", None),
            ("macosx_11_0_arm64", None),
        ] {
            assert_eq!(Platform::from_wheel_tag(tag), p, "{tag}");
        }
        assert!(Platform::WindowsArm64.is_windows());
        assert_eq!(
            "linux-aarch64sbsa".parse::<Platform>().unwrap(),
            Platform::LinuxSbsa
        );
        assert!("macos".parse::<Platform>().is_err());
    }

    #[test]
    fn release_ids_read_back_what_they_write() {
        for text in ["9.12.0.46_cuda12", "8.1.0.77_cuda11.2", "7.1.3_cuda8.0"] {
            let id: ReleaseId = text.parse().unwrap();
            assert_eq!(id.to_string(), text);
            assert_eq!(toml::Value::try_from(&id).unwrap().as_str(), Some(text));
        }
        let id: ReleaseId = "9.12.0.46_cuda12".parse().unwrap();
        assert_eq!(id.version, v("9.12.0.46"));
        assert_eq!(id.cuda, "12".parse().unwrap());
        assert_eq!(release_id(&id.version, &id.cuda), "9.12.0.46_cuda12");
        assert!(id.spec().matches(&id.version, &id.cuda));
        for bad in [
            "9.12.0.46",
            "9.12.0.46_cu12",
            "x_cuda12",
            "9_cuda1.2.3",
            "",
            "9.1_cuda12+fast",
        ] {
            assert!(bad.parse::<ReleaseId>().is_err(), "{bad}");
        }
        let jit: ReleaseId = "9.12.0.46_cuda12+jit".parse().unwrap();
        assert_eq!(jit.flavour, Flavour::Jit);
        assert_eq!(jit.to_string(), "9.12.0.46_cuda12+jit");
        assert_eq!(jit.dir_name(), "9.12.0.46+jit");
        assert!(jit.spec().admits_flavour(Flavour::Jit));
        assert!(!jit.spec().admits_flavour(Flavour::Full));
        assert_ne!(jit, id);
        assert_eq!(
            ReleaseId::parse_dir_name("9.12.0.46+jit"),
            Some((v("9.12.0.46"), Flavour::Jit))
        );
        assert_eq!(
            ReleaseId::parse_dir_name("9.12.0.46"),
            Some((v("9.12.0.46"), Flavour::Full))
        );
        for bad in ["9.12.0.46+", "v9.12", "9.12+jitx", ".replaced-9.1"] {
            assert_eq!(ReleaseId::parse_dir_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn python_names_compare_as_pypi_does() {
        assert_eq!(python_name(" Nvidia_CUDNN.cu12 ", '-'), "nvidia-cudnn-cu12");
        assert_eq!(
            python_name("nvidia-cudnn--jit-cu12", '_'),
            "nvidia_cudnn_jit_cu12"
        );
    }
}
