//! Telling what an archive holds: the cuDNN version (headers, library
//! names, wheel metadata), its CUDA variant and platform, checked against
//! what the user asked for.

use super::*;

pub(super) fn first_version_header(
    path: &Path,
    plan: &Plan,
    read: impl Fn(&str) -> Result<String>,
) -> Result<(String, Version)> {
    for h in &plan.version_headers {
        if let Some(v) = header::parse_version(&read(h)?) {
            return Ok((h.clone(), v));
        }
    }
    Err(source::bad(path, "its headers define no CUDNN_MAJOR/CUDNN_MINOR/CUDNN_PATCHLEVEL, so its version is unknown")
        .hint("cudnn_version.h (cuDNN 8+) or cudnn.h (7 and before) must carry the version macros; the archive may be damaged"))
}

/// The platform the library names imply: DLLs → Windows; `.so` → Linux (the
/// architecture is read from the ELF header after extraction).
pub(super) fn platform_from_names(plan: &Plan) -> Option<Platform> {
    let dll = plan
        .libraries()
        .any(|i| i.dest.to_ascii_lowercase().ends_with(".dll"));
    let so = plan.libraries().any(|i| i.dest.contains(".so"));
    match (dll, so) {
        (true, false) => Some(Platform::WindowsX86_64),
        (false, true) => Some(Platform::LinuxX86_64),
        _ => None,
    }
}

/// Decides version, CUDA variant and platform from the headers, libraries,
/// name and request; refuses disagreements (unless `--force` for versions).
pub(super) fn identify(
    path: &Path,
    name: &str,
    req: &ImportRequest,
    plan: &Plan,
    header: &(String, Version),
    metadata: Option<&DistInfo>,
    platform: Option<Platform>,
) -> Result<Identity> {
    let (header_path, hv) = header;
    // Every library's major must be the header's; full-versioned sonames must match exactly.
    for it in plan.libraries() {
        let file = it.dest.rsplit('/').next().unwrap_or(&it.dest);
        if let Some(lv) = library_version(file)
            && !(lv.parts().len() >= 3 && lv.triple() == *hv
                || lv.parts().len() < 3 && lv.major() == hv.major())
        {
            return Err(source::bad(
                path,
                format!("holds two different cuDNN versions: {header_path} says {hv}, but '{file}' is cuDNN {lv}"),
            )
            .hint("the archive mixes files of two releases; import a clean copy of one release"));
        }
    }
    let mut warnings = Vec::new();
    let info = name::parse(name);
    // A wheel's METADATA says what it is; its file name can be anything.
    let meta = metadata.map(|d| wheel_metadata(&d.metadata));
    if let Some(m) = &meta {
        let disagree = |what: &str, named: String, meta: String| {
            source::bad(path, format!("its name says {what} {named} but its wheel METADATA says {meta}"))
                .hint("the file was renamed or mixed up; use the wheel as pip downloaded it (`--force` trusts the METADATA)")
        };
        if let (Some(n), Some(v)) = (&info.version, &m.version)
            && !(n.is_prefix_of(v) || v.is_prefix_of(n))
        {
            if !req.force {
                return Err(disagree("cuDNN", n.to_string(), v.to_string()));
            }
            warnings.push(format!(
                "its name says cuDNN {n} but its METADATA says {v}; imported as {v} (--force)"
            ));
        }
        if let (Some(n), Some(c)) = (&info.cuda, &m.cuda)
            && !(n.major() == c.major()
                && (n.minor().is_none() || c.minor().is_none() || n.minor() == c.minor()))
        {
            if !req.force {
                return Err(disagree("CUDA", n.to_string(), c.to_string()));
            }
            warnings.push(format!(
                "its name says CUDA {n} but its METADATA says {c}; imported for CUDA {c} (--force)"
            ));
        }
    }
    let named = match &meta {
        Some(m) => m.version.clone().or(info.version.clone()),
        None => info.version.clone(),
    };
    let version = match named {
        None => hv.clone(),
        Some(n) if n.is_prefix_of(hv) => hv.clone(),
        Some(n) if hv.is_prefix_of(&n) => n,
        Some(n) if req.force => {
            warnings.push(format!(
                "its name says cuDNN {n} but its headers say {hv}; imported as {hv} (--force)"
            ));
            hv.clone()
        }
        Some(n) => {
            return Err(source::bad(
                path,
                format!("its name says cuDNN {n} but its headers say {hv}"),
            )
            .hint(format!(
                "check that you have the archive you meant; `--force` imports it as {hv}"
            )));
        }
    };
    let named_cuda = meta
        .as_ref()
        .and_then(|m| m.cuda)
        .or(info.cuda)
        .or_else(|| {
            plan.installer_cuda
                .as_deref()
                .and_then(CudaVariant::from_name_part)
                .map(|c| {
                    // NVIDIA's installer folders are per CUDA major from 11 on (`12.8` serves all of 12.x).
                    if c.major() >= 11 {
                        CudaVariant::new(c.major(), None)
                    } else {
                        c
                    }
                })
        });
    let cuda = match (req.cuda, named_cuda) {
        (Some(given), Some(named)) => {
            let agrees = given.major() == named.major()
                && (given.minor().is_none()
                    || named.minor().is_none()
                    || given.minor() == named.minor());
            if !agrees {
                return Err(Error::new(
                    Kind::Usage,
                    format!(
                        "'{}' is built for CUDA {named}, but --cuda {given} was given",
                        path.display()
                    ),
                )
                .hint(format!("drop --cuda, or pass --cuda {named}")));
            }
            named
        }
        (Some(c), None) | (None, Some(c)) => c,
        (None, None) => {
            return Err(Error::new(
                Kind::Usage,
                format!(
                    "cannot tell which CUDA '{}' is built for: its name does not say",
                    path.display()
                ),
            )
            .hint(format!(
                "pass --cuda, e.g. `{}` (or 11.2, 10.2 … as NVIDIA's download page names it)",
                CommandLine::install_path(path)
                    .cuda(12)
                    .for_host(crate::platform::HOST_WINDOWS)
            )));
        }
    };
    let platform = match platform {
        Some(p) => p,
        None => {
            return Err(source::bad(
                path,
                "holds both Windows DLLs and Linux libraries, or neither",
            )
            .hint("import one platform's archive at a time"));
        }
    };
    // What the wheel is, as its dist-info says, for a lock's pip
    // requirement: never from the file name, which can be anything.
    let dist = match (metadata, &meta) {
        (
            Some(d),
            Some(WheelMetadata {
                name: Some(name),
                version_text: Some(v),
                ..
            }),
        ) => Some(store::Distribution {
            name: name.clone(),
            version: v.clone(),
            tags: d.tags(),
        }),
        _ => None,
    };
    // The build: as the wheel's own metadata names its package, else the
    // archive's name (`cudnn_jit-…`), else its libraries.
    let flavour = match dist
        .as_ref()
        .and_then(|d| d.name.parse::<crate::version::Package>().ok())
    {
        Some(p) => p.flavour,
        None if name.starts_with("cudnn_jit-") => crate::version::Flavour::Jit,
        None => store::flavour_of_files(plan.libraries().map(|i| i.dest.as_str())),
    };
    Ok(Identity {
        version,
        header_version: hv.clone(),
        cuda,
        platform,
        flavour,
        warnings,
        dist,
    })
}

/// A wheel's `*.dist-info` as read from an archive or folder: the text of
/// its `METADATA`, and of its `WHEEL` when it has one.
pub(super) struct DistInfo {
    pub(super) metadata: String,
    pub(super) wheel: Option<String>,
}

impl DistInfo {
    /// Reads the dist-info whose `METADATA` is at `metadata` (a path `read`
    /// takes); a missing or unreadable `WHEEL` is `None`, not an error.
    ///
    /// # Errors
    /// When `METADATA` cannot be read.
    pub(super) fn read(metadata: &str, read: impl Fn(&str) -> Result<String>) -> Result<DistInfo> {
        let wheel_path = format!("{}WHEEL", metadata.strip_suffix("METADATA").unwrap_or(""));
        Ok(DistInfo {
            metadata: read(metadata)?,
            wheel: read(&wheel_path).ok(),
        })
    }

    /// The `Tag:` lines of `WHEEL`, in order.
    fn tags(&self) -> Vec<String> {
        self.wheel
            .as_deref()
            .map(|w| {
                w.lines()
                    .filter_map(|l| l.strip_prefix("Tag:"))
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// What a wheel's METADATA says: `Name:` and `Version:` as written, the
/// version parsed, and the CUDA of the name (`nvidia-cudnn-cu12`,
/// `nvidia-cudnn-jit-cu12` → 12).
pub(super) struct WheelMetadata {
    pub(super) name: Option<String>,
    pub(super) version_text: Option<String>,
    pub(super) version: Option<Version>,
    pub(super) cuda: Option<CudaVariant>,
}

pub(super) fn wheel_metadata(text: &str) -> WheelMetadata {
    let field = |key: &str| {
        text.lines()
            .take_while(|l| !l.trim().is_empty())
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let name = field("Name:");
    let version_text = field("Version:");
    WheelMetadata {
        // `9.0.0.312.post1` carries cuDNN 9.0.0.312.
        version: version_text
            .as_deref()
            .and_then(|v| crate::version::release_of(v).or_else(|| v.parse().ok())),
        cuda: name.as_deref().and_then(|n| {
            let n = crate::version::python_name(n, '-');
            n.rsplit('-').next().and_then(CudaVariant::from_name_part)
        }),
        name,
        version_text,
    }
}

/// The dist-info of the cuDNN wheel a `site-packages/nvidia/cudnn[_jit]`
/// folder came from: `site-packages/nvidia_cudnn[_jit]_cuNN-*.dist-info`.
pub(super) fn sibling_wheel_metadata(root: &Path) -> Option<DistInfo> {
    let leaf = root.file_name()?.to_str()?.to_ascii_lowercase();
    let nvidia = root.parent()?;
    if !nvidia.file_name()?.eq_ignore_ascii_case("nvidia") {
        return None;
    }
    let prefix = format!("nvidia_{leaf}_cu");
    let found: Vec<PathBuf> = std::fs::read_dir(nvidia.parent()?)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                let n = n.to_ascii_lowercase();
                n.starts_with(&prefix) && n.ends_with(".dist-info")
            })
        })
        .collect();
    match found.as_slice() {
        [one] => Some(DistInfo {
            metadata: source::read_text_file(&one.join("METADATA")).ok()?,
            wheel: source::read_text_file(&one.join("WHEEL")).ok(),
        }),
        _ => None,
    }
}

/// The cuDNN version a library file name carries: `libcudnn.so.8.1.0` → 8.1.0,
/// `libcudnn_ops.so.9` → 9, `cudnn64_8.dll` / `cudnn_ops64_9.lib` → 8 / 9.
/// `None` for names without one (`libcudnn.so`, `cudnn.lib`, `libcudnn_static.a`).
pub fn library_version(file: &str) -> Option<Version> {
    let lower = file.to_ascii_lowercase();
    if let Some(i) = lower.find(".so.") {
        return lower[i + 4..].parse().ok();
    }
    let stem = lower
        .strip_suffix(".dll")
        .or_else(|| lower.strip_suffix(".lib"))?;
    let (_, m) = stem.rsplit_once("64_")?;
    m.parse::<u32>().ok().map(|m| Version::from_parts(&[m]))
}

/// The platform of the extracted libraries: Windows for DLLs; for ELF files
/// the machine in the header (x86_64, aarch64 → sbsa unless the name says
/// Jetson, ppc64le). A file that is not ELF keeps the name-based guess.
pub(super) fn detect_platform(dir: &Path, plan: &Plan, guess: Platform) -> Result<Platform> {
    if guess.is_windows() {
        // The PE header's machine field: 0x8664 x64, 0xAA64 Arm64 (the
        // `win_arm64` wheels and `windows-arm64` archives); anything else,
        // or a DLL too short to say, keeps the guess.
        for it in plan.libraries() {
            if !matches!(it.kind, layout::ItemKind::File { .. })
                || !it.dest.to_ascii_lowercase().ends_with(".dll")
            {
                continue;
            }
            let mut head = vec![0u8; 4096];
            let Ok(mut f) = std::fs::File::open(dir.join(&it.dest)) else {
                continue;
            };
            let n = std::io::Read::read(&mut f, &mut head).unwrap_or(0);
            let head = &head[..n];
            let Some(pe) = head
                .get(0x3c..0x40)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            else {
                continue;
            };
            match head.get(pe..pe + 6) {
                Some([b'P', b'E', 0, 0, lo, hi]) => {
                    return Ok(match u16::from_le_bytes([*lo, *hi]) {
                        0xaa64 => Platform::WindowsArm64,
                        0x8664 => Platform::WindowsX86_64,
                        _ => guess,
                    });
                }
                _ => continue,
            }
        }
        return Ok(guess);
    }
    for it in plan.libraries() {
        if !matches!(it.kind, layout::ItemKind::File { .. }) || !it.dest.contains(".so") {
            continue;
        }
        let mut head = [0u8; 20];
        let Ok(mut f) = std::fs::File::open(dir.join(&it.dest)) else {
            continue;
        };
        if std::io::Read::read_exact(&mut f, &mut head).is_err() || &head[..4] != b"\x7fELF" {
            continue;
        }
        let machine = if head[5] == 1 {
            u16::from_le_bytes([head[18], head[19]])
        } else {
            u16::from_be_bytes([head[18], head[19]])
        };
        return Ok(match machine {
            62 => Platform::LinuxX86_64,
            183 if guess == Platform::LinuxAarch64 => Platform::LinuxAarch64,
            183 => Platform::LinuxSbsa,
            21 => Platform::LinuxPpc64le,
            other => {
                return Err(Error::new(
                    Kind::Integrity,
                    format!(
                        "'{}' is built for ELF machine {other}, which cuDNN does not ship for",
                        it.dest
                    ),
                )
                .hint("the library is damaged or not a cuDNN build; download the archive again and check its SHA-256"));
            }
        });
    }
    Ok(guess)
}
