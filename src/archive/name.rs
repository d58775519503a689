//! What an archive's name says: version, CUDA variant, platform.
//!
//! Naming schemes (`docs/releases.md#archive-families`): old archives
//! `cudnn-<CUDA>-<os>-x64-v<version>[-prod|-ga].{zip,tgz}`; redist archives
//! `cudnn-<platform>-<version>_cuda<CUDA>-archive.{tar.xz,zip}`; wheels
//! `nvidia_cudnn[_jit]_cu<M>-<version>-<tags>.whl`; NVIDIA's Windows installer
//! folder `v9.<minor>`. Names are hints: the headers decide the version, and
//! an old name's version may be a prefix of the real one
//! (`cudnn-8.0-windows7-x64-v7.1.zip` carried 7.1.1–7.1.3).

use crate::version::{CudaVariant, Platform, Version};

/// What a name says; every field optional.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameInfo {
    /// The version or version prefix in the name.
    pub version: Option<Version>,
    /// The CUDA variant in the name.
    pub cuda: Option<CudaVariant>,
    /// The platform in the name.
    pub platform: Option<Platform>,
}

/// Parses an archive or folder name. Unknown names give an empty [`NameInfo`].
/// Names are read as downloads get renamed: in any letter case, with a
/// browser's duplicate mark (`… (1).zip`), a doubled extension
/// (`….zip.zip`) or words before `cudnn-` (`Copy of cudnn-…`).
pub fn parse(name: &str) -> NameInfo {
    let lower = name.to_ascii_lowercase();
    let base = strip_duplicate_mark(strip_ext(&lower));
    if let Some(n) = parse_wheel(base) {
        return n;
    }
    let nvidia = base.find("cudnn-").map_or(base, |i| &base[i..]);
    if let Some(n) = parse_redist(nvidia) {
        return n;
    }
    if let Some(n) = parse_old(nvidia) {
        return n;
    }
    if let Some(v) = base
        .strip_prefix('v')
        .and_then(|v| v.parse::<Version>().ok())
    {
        // NVIDIA's installer folder `v9.7`.
        return NameInfo {
            version: Some(v),
            ..Default::default()
        };
    }
    NameInfo::default()
}

/// `name` without its archive extensions (all of them: `x.zip.zip` → `x`).
fn strip_ext(name: &str) -> &str {
    let mut base = name;
    'outer: loop {
        for ext in [".tar.xz", ".tar.gz", ".tgz", ".zip", ".whl", ".txz", ".tar"] {
            if let Some(b) = base.strip_suffix(ext) {
                base = strip_duplicate_mark(b);
                continue 'outer;
            }
        }
        return base;
    }
}

/// `x (1)` or `x(12)` → `x`: the mark browsers add to a repeated download.
fn strip_duplicate_mark(base: &str) -> &str {
    base.strip_suffix(')')
        .and_then(|b| b.rsplit_once('('))
        .filter(|(_, n)| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
        .map_or(base, |(b, _)| b.trim_end())
}

/// `nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64`,
/// `nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64`.
fn parse_wheel(base: &str) -> Option<NameInfo> {
    let rest = base
        .strip_prefix("nvidia_cudnn_")
        .or_else(|| base.strip_prefix("nvidia-cudnn-"))?;
    let mut parts = rest.split('-');
    let pkg = parts.next()?;
    let cu = pkg.rsplit(['_', '-']).next()?;
    let cuda = CudaVariant::from_name_part(cu)?;
    // `9.0.0.312.post1` carries cuDNN 9.0.0.312.
    let version = parts
        .next()
        .and_then(|v| crate::version::release_of(v).or_else(|| v.parse().ok()));
    let tags: Vec<&str> = parts.collect();
    let platform = tags.last().and_then(|t| Platform::from_wheel_tag(t));
    Some(NameInfo {
        version,
        cuda: Some(cuda),
        platform,
    })
}

/// `cudnn-linux-x86_64-8.9.7.29_cuda12-archive`, `cudnn-windows-x86_64-8.3.2.44_cuda11.5-archive`.
fn parse_redist(base: &str) -> Option<NameInfo> {
    // `cudnn_jit-…`: NVIDIA's JIT build, named the same way.
    let rest = base
        .strip_prefix("cudnn-")
        .or_else(|| base.strip_prefix("cudnn_jit-"))?;
    let rest = rest.strip_suffix("-archive").unwrap_or(rest);
    let (head, cuda) = rest.rsplit_once("_cuda")?;
    let (plat, ver) = head.rsplit_once('-')?;
    Some(NameInfo {
        version: ver.parse().ok(),
        cuda: CudaVariant::from_name_part(cuda),
        platform: plat.parse().ok(),
    })
}

/// `cudnn-11.2-windows-x64-v8.1.0.77`, `cudnn-8.0-windows7-x64-v7.1`,
/// `cudnn-7.0-linux-x64-v3.0-prod`, `cudnn-11.4-linux-aarch64sbsa-v8.2.4.15`.
fn parse_old(base: &str) -> Option<NameInfo> {
    let rest = base.strip_prefix("cudnn-")?;
    let mut tokens = rest.split('-');
    let cuda_tok = tokens.next()?;
    let cuda: CudaVariant = cuda_tok.parse().ok()?;
    let tokens: Vec<&str> = tokens.collect();
    let vtok = tokens
        .iter()
        .find(|t| t.starts_with('v') && t[1..].starts_with(|c: char| c.is_ascii_digit()))?;
    let version = vtok[1..].parse().ok();
    let os = tokens.first().copied().unwrap_or("");
    let arch = tokens.get(1).copied().unwrap_or("");
    let platform = if os.starts_with("win") {
        Some(Platform::WindowsX86_64)
    } else if os == "linux" {
        match arch {
            "x64" => Some(Platform::LinuxX86_64),
            "ppc64le" => Some(Platform::LinuxPpc64le),
            "aarch64sbsa" => Some(Platform::LinuxSbsa),
            _ => None,
        }
    } else {
        None
    };
    Some(NameInfo {
        version,
        cuda: Some(cuda),
        platform,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str) -> (Option<String>, Option<String>, Option<Platform>) {
        let n = parse(name);
        (
            n.version.map(|v| v.to_string()),
            n.cuda.map(|c| c.to_string()),
            n.platform,
        )
    }

    #[test]
    fn names_of_every_scheme() {
        use Platform::*;
        type Case = (
            &'static str,
            Option<&'static str>,
            Option<&'static str>,
            Option<Platform>,
        );
        let cases: &[Case] = &[
            // Renamed downloads read like the original.
            (
                "cudnn-11.2-windows-x64-v8.2.0.53 (1).zip",
                Some("8.2.0.53"),
                Some("11.2"),
                Some(WindowsX86_64),
            ),
            (
                "cudnn-11.2-windows-x64-v8.2.0.53(12).zip",
                Some("8.2.0.53"),
                Some("11.2"),
                Some(WindowsX86_64),
            ),
            (
                "cudnn-11.2-windows-x64-v8.2.0.53.zip (1).zip",
                Some("8.2.0.53"),
                Some("11.2"),
                Some(WindowsX86_64),
            ),
            (
                "CUDNN-11.2-WINDOWS-X64-V8.2.0.53.ZIP",
                Some("8.2.0.53"),
                Some("11.2"),
                Some(WindowsX86_64),
            ),
            (
                "Copy of cudnn-windows-x86_64-8.9.7.29_cuda12-archive (2).zip",
                Some("8.9.7.29"),
                Some("12"),
                Some(WindowsX86_64),
            ),
            // Old archives (version may be a prefix of the real one).
            (
                "cudnn-11.2-windows-x64-v8.1.0.77.zip",
                Some("8.1.0.77"),
                Some("11.2"),
                Some(WindowsX86_64),
            ),
            (
                "cudnn-8.0-windows7-x64-v7.1.zip",
                Some("7.1"),
                Some("8.0"),
                Some(WindowsX86_64),
            ),
            (
                "cudnn-8.0-windows7-x64-v7.1-ga.zip",
                Some("7.1"),
                Some("8.0"),
                Some(WindowsX86_64),
            ),
            (
                "cudnn-10.2-linux-x64-v7.6.5.32.tgz",
                Some("7.6.5.32"),
                Some("10.2"),
                Some(LinuxX86_64),
            ),
            (
                "cudnn-7.0-linux-x64-v3.0-prod.tgz",
                Some("3.0"),
                Some("7.0"),
                Some(LinuxX86_64),
            ),
            (
                "cudnn-11.4-linux-aarch64sbsa-v8.2.4.15.tgz",
                Some("8.2.4.15"),
                Some("11.4"),
                Some(LinuxSbsa),
            ),
            // Redist archives: `_cuda10` (8.6–8.7) means CUDA 10.2.
            (
                "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz",
                Some("8.9.7.29"),
                Some("12"),
                Some(LinuxX86_64),
            ),
            (
                "cudnn-windows-x86_64-8.3.2.44_cuda11.5-archive.zip",
                Some("8.3.2.44"),
                Some("11.5"),
                Some(WindowsX86_64),
            ),
            (
                "cudnn-linux-x86_64-8.6.0.163_cuda10-archive",
                Some("8.6.0.163"),
                Some("10.2"),
                Some(LinuxX86_64),
            ),
            (
                "cudnn-linux-sbsa-9.1.0.70_cuda12-archive.tar.xz",
                Some("9.1.0.70"),
                Some("12"),
                Some(LinuxSbsa),
            ),
            // Wheels and NVIDIA's installer folder.
            (
                "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl",
                Some("9.1.0.70"),
                Some("12"),
                Some(LinuxX86_64),
            ),
            (
                "nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64.whl",
                Some("9.27.0.42"),
                Some("12"),
                Some(LinuxX86_64),
            ),
            (
                "nvidia_cudnn_cu11-8.9.2.26-py3-none-win_amd64.whl",
                Some("8.9.2.26"),
                Some("11"),
                Some(WindowsX86_64),
            ),
            ("v9.7", Some("9.7"), None, None),
            ("my-cudnn.zip", None, None, None),
        ];
        for (name, version, cuda, platform) in cases {
            let (v, c, p) = info(name);
            assert_eq!(
                (v.as_deref(), c.as_deref(), p),
                (*version, *cuda, *platform),
                "{name}"
            );
        }
    }
}
