//! Fixture archives in the exact layouts and file names of real cuDNN
//! releases (`docs/releases.md#archive-families`, `#library-names`), with tiny contents:
//! real version-macro lines in the headers, a minimal ELF or PE header in the
//! libraries (so platform detection reads real magic), and real symlink chains.
//!
//! A [`Fixture`] is a list of entries; writers turn it into a zip, tgz,
//! tar.xz, wheel or folder. Tests mutate the entry list to make bad input.
#![allow(dead_code)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One archive entry.
#[derive(Clone, Debug)]
pub enum Item {
    File(Vec<u8>),
    Symlink(String),
    Dir,
    /// A tar hard link to an earlier entry path.
    Hardlink(String),
    /// A tar character device (bad input).
    CharDevice,
}

/// An archive's entries, in order.
#[derive(Clone, Debug)]
pub struct Fixture {
    /// The archive file name (`cudnn-11.2-windows-x64-v8.1.0.77.zip`).
    pub name: String,
    pub entries: Vec<(String, Item)>,
}

impl Fixture {
    pub fn new(name: &str) -> Fixture {
        Fixture {
            name: name.into(),
            entries: Vec::new(),
        }
    }

    pub fn file(&mut self, path: &str, bytes: impl Into<Vec<u8>>) -> &mut Self {
        self.entries.push((path.into(), Item::File(bytes.into())));
        self
    }

    pub fn symlink(&mut self, path: &str, target: &str) -> &mut Self {
        self.entries
            .push((path.into(), Item::Symlink(target.into())));
        self
    }

    pub fn push(&mut self, path: &str, item: Item) -> &mut Self {
        self.entries.push((path.into(), item));
        self
    }

    /// Removes entries whose path ends with `suffix`.
    pub fn remove(&mut self, suffix: &str) -> &mut Self {
        self.entries.retain(|(p, _)| !p.ends_with(suffix));
        self
    }

    /// Replaces the content of every file whose path ends with `suffix`.
    pub fn replace(&mut self, suffix: &str, bytes: &[u8]) -> &mut Self {
        for (p, i) in &mut self.entries {
            if p.ends_with(suffix) {
                *i = Item::File(bytes.to_vec());
            }
        }
        self
    }

    /// This wheel with a RECORD that lies about the file ending in `suffix`:
    /// it lists other bytes of the same size (the last byte flipped), as a
    /// publisher's broken RECORD would; only a hash can tell.
    pub fn with_lying_record(&self, suffix: &str) -> Fixture {
        let mut flipped = match self.entries.iter().find(|(p, _)| p.ends_with(suffix)) {
            Some((_, Item::File(b))) => b.clone(),
            _ => panic!("no file ending in {suffix}"),
        };
        *flipped.last_mut().unwrap() ^= 1;
        let mut other = self.clone();
        other.replace(suffix, &flipped);
        let mut lying = self.clone();
        lying.replace(".dist-info/RECORD", other.record_text().as_bytes());
        lying
    }

    /// Paths of regular files.
    pub fn file_paths(&self) -> Vec<&str> {
        self.entries
            .iter()
            .filter(|(_, i)| matches!(i, Item::File(_)))
            .map(|(p, _)| p.as_str())
            .collect()
    }

    /// Writes a zip (also used for wheels) into `dir`; returns its path.
    /// A wheel's RECORD for the entries as they are now: every file with
    /// its SHA-256 (urlsafe base64) and size, RECORD itself without.
    pub fn record_text(&self) -> String {
        let mut out = String::new();
        for (p, item) in &self.entries {
            match item {
                Item::File(_) if p.ends_with(".dist-info/RECORD") => {
                    out.push_str(&format!("{p},,\n"))
                }
                Item::File(b) => {
                    let sha = cudnnm::hash::sha256_bytes(b);
                    out.push_str(&format!(
                        "{p},sha256={},{}\n",
                        cudnnm::archive::record::urlsafe_b64(&sha),
                        b.len()
                    ));
                }
                _ => {}
            }
        }
        out
    }

    pub fn write_zip(&self, dir: &Path) -> PathBuf {
        // A wheel whose RECORD was left empty gets the RECORD of its entries.
        let filled;
        let this = if self.name.ends_with(".whl")
            && self.entries.iter().any(|(p, i)| {
                p.ends_with(".dist-info/RECORD") && matches!(i, Item::File(b) if b.is_empty())
            }) {
            let text = self.record_text();
            let mut f = self.clone();
            f.replace(".dist-info/RECORD", text.as_bytes());
            filled = f;
            &filled
        } else {
            self
        };
        this.write_zip_as_is(dir)
    }

    fn write_zip_as_is(&self, dir: &Path) -> PathBuf {
        let path = dir.join(&self.name);
        let f = fs::File::create(&path).unwrap();
        let mut z = zip::ZipWriter::new(f);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (p, item) in &self.entries {
            match item {
                Item::File(b) => {
                    z.start_file(p.as_str(), opts).unwrap();
                    z.write_all(b).unwrap();
                }
                Item::Dir => {
                    z.add_directory(p.as_str(), opts).unwrap();
                }
                Item::Symlink(t) => {
                    z.add_symlink(p.as_str(), t.as_str(), opts).unwrap();
                }
                Item::Hardlink(_) | Item::CharDevice => panic!("zip cannot hold {p}"),
            }
        }
        z.finish().unwrap();
        path
    }

    /// Writes a zip whose entry names then have every `from` replaced by
    /// `to` (same length) in the file's bytes: a zip with two entries of
    /// one name, which zip writers refuse to make.
    pub fn write_zip_renaming(&self, dir: &Path, from: &str, to: &str) -> PathBuf {
        assert_eq!(from.len(), to.len());
        let path = self.write_zip(dir);
        let mut bytes = fs::read(&path).unwrap();
        let (f, t) = (from.as_bytes(), to.as_bytes());
        let mut i = 0;
        let mut n = 0;
        while i + f.len() <= bytes.len() {
            if &bytes[i..i + f.len()] == f {
                bytes[i..i + f.len()].copy_from_slice(t);
                n += 1;
                i += f.len();
            } else {
                i += 1;
            }
        }
        assert!(
            n >= 2,
            "renamed in the local header and the central directory"
        );
        fs::write(&path, bytes).unwrap();
        path
    }

    fn write_tar<W: Write>(&self, w: W) -> W {
        let mut t = tar::Builder::new(w);
        for (p, item) in &self.entries {
            let mut h = tar::Header::new_gnu();
            h.set_mode(0o644);
            h.set_mtime(1_600_000_000);
            let (ty, data): (tar::EntryType, &[u8]) = match item {
                Item::File(b) => (tar::EntryType::Regular, b),
                Item::Dir => (tar::EntryType::Directory, &[]),
                Item::Symlink(_) => (tar::EntryType::Symlink, &[]),
                Item::Hardlink(_) => (tar::EntryType::Link, &[]),
                Item::CharDevice => (tar::EntryType::Char, &[]),
            };
            h.set_entry_type(ty);
            h.set_size(data.len() as u64);
            // Raw name bytes: the tar crate refuses `..` and absolute paths,
            // which bad-input tests need.
            set_raw_name(&mut h, p);
            match item {
                Item::Symlink(t) | Item::Hardlink(t) => {
                    let name = &mut h.as_old_mut().linkname;
                    name.fill(0);
                    name[..t.len()].copy_from_slice(t.as_bytes());
                }
                _ => {}
            }
            h.set_cksum();
            t.append(&h, data).unwrap();
        }
        t.into_inner().unwrap()
    }

    /// Writes a gzip tar (`.tgz`) into `dir`.
    pub fn write_tgz(&self, dir: &Path) -> PathBuf {
        let path = dir.join(&self.name);
        let gz = flate2::write::GzEncoder::new(
            fs::File::create(&path).unwrap(),
            flate2::Compression::fast(),
        );
        self.write_tar(gz).finish().unwrap();
        path
    }

    /// Writes an xz tar (`.tar.xz`) into `dir`.
    pub fn write_txz(&self, dir: &Path) -> PathBuf {
        let path = dir.join(&self.name);
        let xz = liblzma::write::XzEncoder::new(fs::File::create(&path).unwrap(), 1);
        self.write_tar(xz).finish().unwrap();
        path
    }

    /// Writes the entries as a folder `dir/<name>`.
    pub fn write_dir(&self, dir: &Path) -> PathBuf {
        let root = dir.join(&self.name);
        fs::create_dir_all(&root).unwrap();
        for (p, item) in &self.entries {
            let dest = root.join(p);
            fs::create_dir_all(dest.parent().unwrap()).unwrap();
            match item {
                Item::File(b) => fs::write(&dest, b).unwrap(),
                Item::Dir => fs::create_dir_all(&dest).unwrap(),
                #[cfg(unix)]
                Item::Symlink(t) => std::os::unix::fs::symlink(t, &dest).unwrap(),
                _ => panic!("folder fixtures hold files, folders and links only"),
            }
        }
        root
    }

    /// Writes the natural format for the name (`.zip`/`.whl`, `.tgz`, `.tar.xz`).
    pub fn write(&self, dir: &Path) -> PathBuf {
        if self.name.ends_with(".zip") || self.name.ends_with(".whl") {
            self.write_zip(dir)
        } else if self.name.ends_with(".tgz") || self.name.ends_with(".tar.gz") {
            self.write_tgz(dir)
        } else if self.name.ends_with(".tar.xz") {
            self.write_txz(dir)
        } else {
            self.write_dir(dir)
        }
    }
}

fn set_raw_name(h: &mut tar::Header, p: &str) {
    let name = &mut h.as_old_mut().name;
    name.fill(0);
    assert!(
        p.len() <= 100,
        "fixture paths fit the old tar name field: {p}"
    );
    name[..p.len()].copy_from_slice(p.as_bytes());
}

/// Splits `"8.1.0.77"` into numbers.
fn nums(v: &str) -> Vec<u32> {
    v.split('.').map(|x| x.parse().unwrap()).collect()
}

/// The version header text as NVIDIA writes it: `cudnn_version.h` for 8+,
/// the top of `cudnn.h` for 7 and before (several spaces after some macro
/// names in 7.x, as in the real 7.1 headers). `CUDNN_VERSION` uses the
/// formula of the major (`docs/releases.md#version-number`).
pub fn version_header(v: &str) -> String {
    let n = nums(v);
    let (ma, mi, pa) = (n[0], n[1], n.get(2).copied().unwrap_or(0));
    let factor = if ma >= 9 { 10000 } else { 1000 };
    if ma <= 7 {
        format!(
            "/* cudnn : Neural Networks Library */\n#if !defined(CUDNN_H_)\n#define CUDNN_H_\n\n#define CUDNN_MAJOR      {ma}\n#define CUDNN_MINOR      {mi}\n#define CUDNN_PATCHLEVEL {pa}\n\n#define CUDNN_VERSION    (CUDNN_MAJOR * {factor} + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n\n#include \"driver_types.h\"\n#endif\n"
        )
    } else {
        format!(
            "/**\n * \\file: The master cuDNN version file.\n */\n\n#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n#define CUDNN_MAJOR {ma}\n#define CUDNN_MINOR {mi}\n#define CUDNN_PATCHLEVEL {pa}\n\n#define CUDNN_VERSION (CUDNN_MAJOR * {factor} + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n\n#endif /* CUDNN_VERSION_H */\n"
        )
    }
}

/// A header that is not the version header: includes `cudnn_version.h` (8+).
fn other_header(name: &str, v: &str) -> Vec<u8> {
    format!("/* {name} fixture for cuDNN {v} */\n#include \"cudnn_version.h\"\n").into_bytes()
}

/// A minimal 64-bit little-endian ELF shared-object header (x86_64, or
/// aarch64 when `arm`), followed by a marker naming the library.
pub fn elf_bytes(marker: &str, arm: bool) -> Vec<u8> {
    let mut b = vec![0u8; 64];
    b[..4].copy_from_slice(b"\x7fELF");
    b[4] = 2; // 64-bit
    b[5] = 1; // little-endian
    b[6] = 1; // version
    b[16] = 3; // ET_DYN
    let machine: u16 = if arm { 183 } else { 62 };
    b[18..20].copy_from_slice(&machine.to_le_bytes());
    b[20] = 1; // e_version
    b[52] = 64; // e_ehsize
    b.extend_from_slice(marker.as_bytes());
    b
}

/// A minimal DOS+PE header for an x86_64 DLL, followed by a marker.
pub fn dll_bytes(marker: &str) -> Vec<u8> {
    let mut b = vec![0u8; 0x80];
    b[..2].copy_from_slice(b"MZ");
    b[0x3c] = 0x40; // e_lfanew
    b[0x40..0x44].copy_from_slice(b"PE\0\0");
    b[0x44..0x46].copy_from_slice(&0x8664u16.to_le_bytes()); // IMAGE_FILE_MACHINE_AMD64
    b.extend_from_slice(marker.as_bytes());
    b
}

/// A Windows import library (`.lib`): an `ar` archive header and a marker.
pub fn implib_bytes(marker: &str) -> Vec<u8> {
    let mut b = b"!<arch>\n".to_vec();
    b.extend_from_slice(marker.as_bytes());
    b
}

const LICENSE_SLA: &str = "NVIDIA_SLA_cuDNN_Support.txt";

/// Sub-library stems per major (`docs/releases.md#library-names`).
pub fn sublibs(major: u32) -> Vec<&'static str> {
    match major {
        0..=7 => vec![],
        8 => vec![
            "ops_infer",
            "ops_train",
            "cnn_infer",
            "cnn_train",
            "adv_infer",
            "adv_train",
        ],
        _ => vec![
            "adv",
            "cnn",
            "engines_precompiled",
            "engines_runtime_compiled",
            "graph",
            "heuristic",
            "ops",
        ],
    }
}

/// Header names per major: 8 → 9 headers (+`_v8` copies when `versioned`),
/// 9 → 7 (+`_v9`), 7 → `cudnn.h` only.
pub fn header_names(major: u32, versioned: bool) -> Vec<String> {
    let base: Vec<&str> = match major {
        0..=7 => return vec!["cudnn.h".into()],
        8 => vec![
            "cudnn",
            "cudnn_adv_infer",
            "cudnn_adv_train",
            "cudnn_backend",
            "cudnn_cnn_infer",
            "cudnn_cnn_train",
            "cudnn_ops_infer",
            "cudnn_ops_train",
            "cudnn_version",
        ],
        _ => vec![
            "cudnn",
            "cudnn_adv",
            "cudnn_backend",
            "cudnn_cnn",
            "cudnn_graph",
            "cudnn_ops",
            "cudnn_version",
        ],
    };
    let mut v: Vec<String> = base.iter().map(|b| format!("{b}.h")).collect();
    if versioned {
        v.extend(base.iter().map(|b| format!("{b}_v{major}.h")));
    }
    v
}

fn add_headers(f: &mut Fixture, dir: &str, version: &str, versioned: bool) {
    let major = nums(version)[0];
    for h in header_names(major, versioned) {
        let body = if h == "cudnn_version.h"
            || h == format!("cudnn_version_v{major}.h")
            || (major <= 7 && h == "cudnn.h")
        {
            version_header(version).into_bytes()
        } else {
            other_header(&h, version)
        };
        f.file(&format!("{dir}/{h}"), body);
    }
}

/// Windows DLL names: `cudnn64_7.dll`; 8: `cudnn64_8.dll` + 6 `cudnn_X64_8.dll`; 9: 8 DLLs.
pub fn dll_names(major: u32) -> Vec<String> {
    let mut v = vec![format!("cudnn64_{major}.dll")];
    v.extend(
        sublibs(major)
            .iter()
            .map(|s| format!("cudnn_{s}64_{major}.dll")),
    );
    v
}

/// Windows import libraries: `cudnn.lib` (7); 8: 14; 9: 16 (`X.lib` and `X64_M.lib`).
pub fn implib_names(major: u32) -> Vec<String> {
    if major <= 7 {
        return vec!["cudnn.lib".into()];
    }
    let mut v = vec!["cudnn.lib".to_string(), format!("cudnn64_{major}.lib")];
    for s in sublibs(major) {
        v.push(format!("cudnn_{s}.lib"));
        v.push(format!("cudnn_{s}64_{major}.lib"));
    }
    v
}

fn add_windows_set(
    f: &mut Fixture,
    bin: &str,
    include: &str,
    lib: &str,
    version: &str,
    versioned_headers: bool,
) {
    let major = nums(version)[0];
    for d in dll_names(major) {
        f.file(&format!("{bin}/{d}"), dll_bytes(&format!("{d} {version}")));
    }
    add_headers(f, include, version, versioned_headers);
    for l in implib_names(major) {
        f.file(
            &format!("{lib}/{l}"),
            implib_bytes(&format!("{l} {version}")),
        );
    }
}

/// Linux shared libraries with their chain `X.so -> X.so.M -> X.so.M.m.p`
/// (`chain`), or only `X.so.M` files (wheels).
fn add_linux_libs(f: &mut Fixture, lib: &str, version: &str, chain: bool, arm: bool) {
    let n = nums(version);
    let (ma, mi, pa) = (n[0], n[1], n.get(2).copied().unwrap_or(0));
    let mut stems = vec!["libcudnn".to_string()];
    stems.extend(sublibs(ma).iter().map(|s| format!("libcudnn_{s}")));
    for s in stems {
        let soname = format!("{s}.so.{ma}");
        if chain {
            let real = format!("{s}.so.{ma}.{mi}.{pa}");
            f.file(
                &format!("{lib}/{real}"),
                elf_bytes(&format!("{soname} {version}"), arm),
            );
            f.symlink(&format!("{lib}/{soname}"), &real);
            f.symlink(&format!("{lib}/{s}.so"), &soname);
        } else {
            f.file(
                &format!("{lib}/{soname}"),
                elf_bytes(&format!("{soname} {version}"), arm),
            );
        }
    }
}

fn add_static_libs(f: &mut Fixture, lib: &str, version: &str) {
    let ma = nums(version)[0];
    match ma {
        0..=7 => {
            f.file(
                &format!("{lib}/libcudnn_static.a"),
                b"!<arch>\nstatic".to_vec(),
            );
        }
        8 => {
            for s in sublibs(8) {
                f.file(
                    &format!("{lib}/libcudnn_{s}_static.a"),
                    b"!<arch>\n".to_vec(),
                );
                f.file(
                    &format!("{lib}/libcudnn_{s}_static_v8.a"),
                    b"!<arch>\n".to_vec(),
                );
            }
        }
        _ => {
            for s in sublibs(ma) {
                f.file(
                    &format!("{lib}/libcudnn_{s}_static_v{ma}.a"),
                    b"!<arch>\n".to_vec(),
                );
            }
        }
    }
}

/// Old Windows zip (`cuda\bin`, `cuda\include`, `cuda\lib\x64`, license),
/// e.g. `windows_zip("8.0", "7.1.3", "cudnn-8.0-windows7-x64-v7.1.zip")` or
/// `windows_zip("11.2", "8.1.0.77", "cudnn-11.2-windows-x64-v8.1.0.77.zip")`
/// (7 DLLs, 9 headers, 14 import libraries, 1 license for 8.x).
pub fn windows_zip(_cuda: &str, version: &str, name: &str) -> Fixture {
    let mut f = Fixture::new(name);
    add_windows_set(
        &mut f,
        "cuda/bin",
        "cuda/include",
        "cuda/lib/x64",
        version,
        false,
    );
    f.file(
        &format!("cuda/{LICENSE_SLA}"),
        "NVIDIA Software License Agreement (fixture)",
    );
    f
}

/// `cudnn-8.0-windows7-x64-v7.1.zip` carrying cuDNN 7.1.3 for CUDA 8.0.
pub fn windows_zip_7_1_3() -> Fixture {
    windows_zip("8.0", "7.1.3", "cudnn-8.0-windows7-x64-v7.1.zip")
}

/// `cudnn-11.2-windows-x64-v8.1.0.77.zip`.
pub fn windows_zip_8_1_0_77() -> Fixture {
    windows_zip("11.2", "8.1.0.77", "cudnn-11.2-windows-x64-v8.1.0.77.zip")
}

/// Old Linux tgz (`cuda/include`, `cuda/lib64` with soname chains, static
/// library, license), e.g. `cudnn-10.2-linux-x64-v7.6.5.32.tgz`.
pub fn linux_tgz(cuda: &str, version: &str) -> Fixture {
    let mut f = Fixture::new(&format!("cudnn-{cuda}-linux-x64-v{version}.tgz"));
    add_headers(&mut f, "cuda/include", version, false);
    add_linux_libs(&mut f, "cuda/lib64", version, true, false);
    add_static_libs(&mut f, "cuda/lib64", version);
    f.file(
        &format!("cuda/{LICENSE_SLA}"),
        "NVIDIA Software License Agreement (fixture)",
    );
    f
}

/// NVIDIA redist archive for Linux: `cudnn-linux-x86_64-<v>_cuda<c>-archive.tar.xz`
/// with `<base>/{include,lib,LICENSE}`; headers with `_vM` copies, chains, static libs.
pub fn redist_linux(version: &str, cuda: &str) -> Fixture {
    let base = format!("cudnn-linux-x86_64-{version}_cuda{cuda}-archive");
    let mut f = Fixture::new(&format!("{base}.tar.xz"));
    f.file(&format!("{base}/LICENSE"), "NVIDIA cuDNN license (fixture)");
    add_headers(&mut f, &format!("{base}/include"), version, true);
    add_linux_libs(&mut f, &format!("{base}/lib"), version, true, false);
    add_static_libs(&mut f, &format!("{base}/lib"), version);
    f
}

/// NVIDIA redist archive for Windows: `cudnn-windows-x86_64-<v>_cuda<c>-archive.zip`.
/// Folder drift (`docs/releases.md#windows-folder-drift`): import libraries in `lib\` for 8.3–8.4,
/// `lib\x64\` from 8.5; DLLs in `bin\` up to 9.17, `bin\x64\` from 9.18.
pub fn redist_windows(version: &str, cuda: &str) -> Fixture {
    let base = format!("cudnn-windows-x86_64-{version}_cuda{cuda}-archive");
    let n = nums(version);
    let lib = if n[0] == 8 && n[1] <= 4 {
        format!("{base}/lib")
    } else {
        format!("{base}/lib/x64")
    };
    let bin = if n[0] > 9 || (n[0] == 9 && n[1] >= 18) {
        format!("{base}/bin/x64")
    } else {
        format!("{base}/bin")
    };
    let mut f = Fixture::new(&format!("{base}.zip"));
    f.file(&format!("{base}/LICENSE"), "NVIDIA cuDNN license (fixture)");
    add_windows_set(
        &mut f,
        &bin,
        &format!("{base}/include"),
        &lib,
        version,
        false,
    );
    f
}

/// A pip wheel: `nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl`
/// (`package` = `nvidia_cudnn_cu12`, `nvidia_cudnn_cu11`, `nvidia_cudnn_jit_cu12`).
/// Linux wheels carry only `libcudnn*.so.M`; Windows wheels DLLs in `bin`.
pub fn wheel(package: &str, version: &str, windows: bool) -> Fixture {
    let tag = if windows {
        "win_amd64"
    } else {
        "manylinux2014_x86_64"
    };
    wheel_tagged(package, version, tag)
}

/// A pip wheel with the platform tag `tag` as NVIDIA's wheels carry them
/// (`manylinux_2_27_x86_64`, `manylinux_2_27_aarch64`, `win_amd64`):
/// DLLs for `win_amd64`, Arm ELF libraries for an `aarch64` tag.
pub fn wheel_tagged(package: &str, version: &str, tag: &str) -> Fixture {
    let windows = tag == "win_amd64";
    let arm = tag.ends_with("aarch64");
    let jit = package.contains("_jit_");
    let dir = if jit {
        "nvidia/cudnn_jit"
    } else {
        "nvidia/cudnn"
    };
    let mut f = Fixture::new(&format!("{package}-{version}-py3-none-{tag}.whl"));
    let dist = format!("{package}-{version}.dist-info");
    let pip_name = package.replace('_', "-");
    f.file("nvidia/__init__.py", "");
    f.file(&format!("{dir}/__init__.py"), "");
    f.file(&format!("{dir}/include/__init__.py"), "");
    add_headers(&mut f, &format!("{dir}/include"), version, true);
    if windows {
        f.file(&format!("{dir}/bin/__init__.py"), "");
        let major = nums(version)[0];
        for d in dll_names(major) {
            f.file(
                &format!("{dir}/bin/{d}"),
                dll_bytes(&format!("{d} {version}")),
            );
        }
        for l in implib_names(major) {
            f.file(&format!("{dir}/lib/x64/{l}"), implib_bytes(l.as_str()));
        }
    } else {
        f.file(&format!("{dir}/lib/__init__.py"), "");
        let ma = nums(version)[0];
        if jit {
            for s in [
                "libcudnn",
                "libcudnn_engines_runtime_compiled",
                "libcudnn_graph",
            ] {
                f.file(
                    &format!("{dir}/lib/{s}.so.{ma}"),
                    elf_bytes(&format!("{s}.so.{ma} {version}"), false),
                );
            }
        } else {
            add_linux_libs(&mut f, &format!("{dir}/lib"), version, false, arm);
        }
    }
    f.file(
        &format!("{dist}/METADATA"),
        format!("Metadata-Version: 2.1\nName: {pip_name}\nVersion: {version}\nSummary: cuDNN runtime libraries\n"),
    );
    f.file(
        &format!("{dist}/WHEEL"),
        format!(
            "Wheel-Version: 1.0\nGenerator: fixture\nRoot-Is-Purelib: true\nTag: py3-none-{tag}\n"
        ),
    );
    f.file(
        &format!("{dist}/License.txt"),
        "NVIDIA cuDNN license (fixture)",
    );
    f.file(&format!("{dist}/RECORD"), "");
    f
}

/// NVIDIA's cuDNN 9 Windows installer folder: `v9.<minor>\{bin,include,lib}\<CUDA M.m>\…`
/// with import libraries in `lib\<CUDA>\x64`, one subfolder per CUDA in `cudas`.
/// `name` is the folder name (`v9.7`).
pub fn installer_folder(version: &str, cudas: &[&str]) -> Fixture {
    let n = nums(version);
    let mut f = Fixture::new(&format!("v{}.{}", n[0], n[1]));
    for c in cudas {
        add_windows_set(
            &mut f,
            &format!("bin/{c}"),
            &format!("include/{c}"),
            &format!("lib/{c}/x64"),
            version,
            false,
        );
    }
    f
}
