//! What a library file says about itself, read with the `object` crate and no
//! external tools: the machine it is built for (ELF `e_machine`, PE
//! `Machine`), its SONAME, the libraries it needs (ELF `DT_NEEDED`, PE import
//! table) and where it looks for them (`DT_RPATH`/`DT_RUNPATH`), and for DLLs
//! the file version from the `VS_VERSION_INFO` resource.
//!
//! Only the parts needed are read (headers, the dynamic section, the import
//! and resource directories) through `object::ReadCache`, so a 500 MB library
//! costs a few small reads. Garbage input never panics: whatever cannot be
//! read is left empty and the reason recorded in [`BinInfo::error`].

use std::fs::File;
use std::io::Read;
use std::path::Path;

use object::read::elf::{ElfFile, FileHeader, SectionHeader as _, Sym as _};
use object::read::pe::{ImageNtHeaders, PeFile};
use object::{Endianness, LittleEndian as LE, ReadCache, ReadRef, elf, pe};

use crate::version::Version;

/// What was read from one binary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BinInfo {
    /// `x86_64`, `aarch64`, `x86`, `ppc64le`, `arm`, or `machine-<n>`; `None`
    /// when the file is neither ELF nor PE.
    pub machine: Option<String>,
    /// ELF `DT_SONAME`.
    pub soname: Option<String>,
    /// ELF `DT_NEEDED` or PE imported DLL names, in file order.
    pub needed: Vec<String>,
    /// ELF `DT_RPATH` entries (searched before `LD_LIBRARY_PATH`).
    pub rpath: Vec<String>,
    /// ELF `DT_RUNPATH` entries (searched after `LD_LIBRARY_PATH`).
    pub runpath: Vec<String>,
    /// PE `VS_FIXEDFILEINFO` file version (`8.9.7.29`).
    pub file_version: Option<Version>,
    /// The release marker compiled into the read-only data
    /// ([`embedded_version`]): `9.12.0.46` from `cudnn_version_9_12_0_46_…`.
    pub embedded_version: Option<Version>,
    /// ELF: the cuDNN symbols it defines for others (`cudnn…`, `_Z…5cudnn…`).
    pub cudnn_defined: Vec<String>,
    /// ELF: the cuDNN symbols it needs from another library.
    pub cudnn_needed: Vec<String>,
    /// Why the details could not be read, if they could not.
    pub error: Option<String>,
}

/// True for a symbol of cuDNN's own API or namespace: C names `cudnn…`
/// and C++ names that mention `cudnn` (`_ZN5cudnn…`, `_Z11cudnnGetPidv`).
fn is_cudnn_symbol(name: &[u8]) -> bool {
    name.starts_with(b"cudnn")
        || (name.starts_with(b"_Z") && memchr::memmem::find(name, b"cudnn").is_some())
}

/// The machine name of an ELF `e_machine` value (`62` → `x86_64`).
fn elf_machine(m: u16, little: bool) -> String {
    match m {
        3 => "x86".into(),
        62 => "x86_64".into(),
        183 => "aarch64".into(),
        21 if little => "ppc64le".into(),
        21 => "ppc64".into(),
        40 => "arm".into(),
        n => format!("machine-{n}"),
    }
}

/// The machine name of a PE `Machine` value (`0x8664` → `x86_64`).
fn pe_machine(m: u16) -> String {
    match m {
        0x8664 => "x86_64".into(),
        0x14c => "x86".into(),
        0xaa64 => "aarch64".into(),
        0x1c4 => "arm".into(),
        n => format!("machine-{n:#x}"),
    }
}

/// The machine from the first bytes of a file, read by hand so that even a
/// truncated header (as in test fixtures) gives an answer.
pub fn machine_of(head: &[u8]) -> Option<String> {
    if head.len() >= 20 && head.starts_with(b"\x7fELF") {
        let little = head[5] != 2;
        let m = if little {
            u16::from_le_bytes([head[18], head[19]])
        } else {
            u16::from_be_bytes([head[18], head[19]])
        };
        return Some(elf_machine(m, little));
    }
    if head.len() >= 0x40 && head.starts_with(b"MZ") {
        let off = u32::from_le_bytes([head[0x3c], head[0x3d], head[0x3e], head[0x3f]]) as usize;
        if off.checked_add(6).is_some_and(|end| head.len() >= end)
            && &head[off..off + 4] == b"PE\0\0"
        {
            return Some(pe_machine(u16::from_le_bytes([
                head[off + 4],
                head[off + 5],
            ])));
        }
    }
    None
}

/// The machine of the host this binary runs on, in the same names.
pub fn host_machine() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x86_64",
        "aarch64" => "aarch64",
        "x86" => "x86",
        "powerpc64" => "ppc64le",
        "arm" => "arm",
        other => other,
    }
}

/// Reads a binary at `path`. Never fails: problems end up in `error`.
pub fn read(path: &Path) -> BinInfo {
    read_with(path, true)
}

/// Like [`read`], without the symbol table and the release marker: only
/// the machine, SONAME, needed libraries and search folders. For the large
/// libraries of a framework (PyTorch's `libtorch_cuda.so` is about a
/// gigabyte), a few small reads.
pub fn read_dynamic(path: &Path) -> BinInfo {
    read_with(path, false)
}

fn read_with(path: &Path, symbols: bool) -> BinInfo {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) => {
            return BinInfo {
                error: Some(format!("cannot open: {e}")),
                ..Default::default()
            };
        }
    };
    let mut head = vec![0u8; 4096];
    let n = read_up_to(&mut file, &mut head);
    head.truncate(n);
    let mut info = BinInfo {
        machine: machine_of(&head),
        ..Default::default()
    };
    if info.machine.is_none() {
        info.error = Some("not an ELF or PE file".into());
        return info;
    }
    let cache = ReadCache::new(file);
    if let Err(e) = details(&cache, &mut info, symbols) {
        info.error = Some(e);
    }
    info
}

/// Reads a binary held in memory (tests, small files).
pub fn parse_bytes(data: &[u8]) -> BinInfo {
    let mut info = BinInfo {
        machine: machine_of(data),
        ..Default::default()
    };
    if info.machine.is_none() {
        info.error = Some("not an ELF or PE file".into());
        return info;
    }
    if let Err(e) = details(data, &mut info, true) {
        info.error = Some(e);
    }
    info
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    n
}

fn details<'data, R: ReadRef<'data>>(
    data: R,
    info: &mut BinInfo,
    symbols: bool,
) -> Result<(), String> {
    let kind = object::FileKind::parse(data).map_err(|e| e.to_string())?;
    match kind {
        object::FileKind::Elf64 => {
            elf_details::<elf::FileHeader64<Endianness>, R>(data, info, symbols)
        }
        object::FileKind::Elf32 => {
            elf_details::<elf::FileHeader32<Endianness>, R>(data, info, symbols)
        }
        object::FileKind::Pe64 => pe_details::<pe::ImageNtHeaders64, R>(data, info),
        object::FileKind::Pe32 => pe_details::<pe::ImageNtHeaders32, R>(data, info),
        other => Err(format!("unsupported file kind {other:?}")),
    }
}

fn elf_details<'data, Elf, R>(data: R, info: &mut BinInfo, symbols: bool) -> Result<(), String>
where
    Elf: FileHeader<Endian = Endianness>,
    R: ReadRef<'data>,
{
    let f = ElfFile::<Elf, R>::parse(data).map_err(|e| e.to_string())?;
    let endian = f.endian();
    let table = f
        .elf_section_table()
        .dynamic_table(endian, data)
        .map_err(|e| e.to_string())?;
    let split = |s: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(s)
            .split(':')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let sections = f.elf_section_table();
    if symbols && let Ok(dynsym) = sections.symbols(endian, data, elf::SHT_DYNSYM) {
        for sym in dynsym.iter() {
            let Ok(name) = sym.name(endian, dynsym.strings()) else {
                continue;
            };
            if !is_cudnn_symbol(name) {
                continue;
            }
            let name = String::from_utf8_lossy(name).into_owned();
            if sym.is_undefined(endian) {
                info.cudnn_needed.push(name);
            } else {
                info.cudnn_defined.push(name);
            }
        }
    }
    if symbols
        && let Some((_, sh)) = sections.section_by_name(endian, b".rodata")
        && let Ok(bytes) = marker_area(sh.sh_offset(endian).into(), sh.sh_size(endian).into(), data)
    {
        info.embedded_version = embedded_version(bytes);
    }
    for d in table.iter() {
        let Ok(s) = table.string(d) else { continue };
        match d.tag {
            elf::DT_NEEDED => info.needed.push(String::from_utf8_lossy(s).into_owned()),
            elf::DT_SONAME => info.soname = Some(String::from_utf8_lossy(s).into_owned()),
            elf::DT_RPATH => info.rpath.extend(split(s)),
            elf::DT_RUNPATH => info.runpath.extend(split(s)),
            _ => {}
        }
    }
    Ok(())
}

fn pe_details<'data, Pe, R>(data: R, info: &mut BinInfo) -> Result<(), String>
where
    Pe: ImageNtHeaders,
    R: ReadRef<'data>,
{
    let f = PeFile::<Pe, R>::parse(data).map_err(|e| e.to_string())?;
    let sections = f.section_table();
    if let Some(table) = f.import_table().map_err(|e| e.to_string())? {
        let mut descs = table.descriptors().map_err(|e| e.to_string())?;
        while let Some(d) = descs.next().map_err(|e| e.to_string())? {
            if let Ok(name) = table.name(d.name.get(LE)) {
                info.needed.push(String::from_utf8_lossy(name).into_owned());
            }
        }
    }
    // The file version: RT_VERSION (16) → first name → first language → data.
    let version = (|| {
        let dir = f
            .data_directories()
            .resource_directory(data, &sections)
            .ok()??;
        let root = dir.root().ok()?;
        let ty = root
            .entries
            .iter()
            .find(|e| e.name_or_id().id() == Some(pe::RT_VERSION))?;
        let names = ty.data(dir).ok()?.table()?;
        let langs = names.entries.first()?.data(dir).ok()?.table()?;
        let entry = langs.entries.first()?.data(dir).ok()?.data()?;
        let bytes = sections.pe_data_at(data, entry.offset_to_data.get(LE))?;
        let bytes = &bytes[..(entry.size.get(LE) as usize).min(bytes.len())];
        fixed_file_version(bytes)
    })();
    info.file_version = version;
    if let Some(sh) = sections.iter().find(|s| s.raw_name() == b".rdata")
        && let Ok(bytes) = marker_area(
            sh.pointer_to_raw_data.get(LE).into(),
            sh.size_of_raw_data.get(LE).into(),
            data,
        )
    {
        info.embedded_version = embedded_version(bytes);
    }
    Ok(())
}

/// Read-only data larger than this is not searched for the release marker
/// (the largest cuDNN 9 graph library's, 9.27's, is 21 MB).
const MARKER_AREA_MAX: u64 = 64 << 20;

/// The bytes of a section at `offset`/`size` in `data`, when small enough.
fn marker_area<'data, R: ReadRef<'data>>(
    offset: u64,
    size: u64,
    data: R,
) -> Result<&'data [u8], ()> {
    if size > MARKER_AREA_MAX {
        return Err(());
    }
    data.read_bytes_at(offset, size)
}

/// The release a cuDNN library was built as, from the marker its build
/// compiles into the read-only data: `cudnn_version_9_12_0_46_36300845_e0`
/// (9.12.0.46) in cuDNN 9's graph library, the one that answers
/// `cudnnGetVersion()`. The main library and the engine libraries carry none.
pub fn embedded_version(bytes: &[u8]) -> Option<Version> {
    const MARK: &[u8] = b"cudnn_version_";
    let at = memchr::memmem::find(bytes, MARK)? + MARK.len();
    let mut parts: Vec<u32> = Vec::new();
    for field in bytes[at..].split(|b| *b == b'_').take(4) {
        let digits: Vec<u8> = field
            .iter()
            .copied()
            .take_while(u8::is_ascii_digit)
            .collect();
        if digits.is_empty() || digits.len() != field.len() || digits.len() > 6 {
            break;
        }
        parts.push(std::str::from_utf8(&digits).ok()?.parse().ok()?);
    }
    (parts.len() >= 3).then(|| Version::from_parts(&parts))
}

/// The file version in a `VS_VERSION_INFO` block: the `VS_FIXEDFILEINFO`
/// structure starts with the signature `0xFEEF04BD`, followed by the struct
/// version, then `dwFileVersionMS` and `dwFileVersionLS`.
pub fn fixed_file_version(block: &[u8]) -> Option<Version> {
    let sig = 0xFEEF04BDu32.to_le_bytes();
    let i = block.windows(4).position(|w| w == sig)?;
    let word = |o: usize| -> Option<u32> {
        let b = block.get(i + o..i + o + 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (ms, ls) = (word(8)?, word(12)?);
    Some(Version::from_parts(&[
        ms >> 16,
        ms & 0xffff,
        ls >> 16,
        ls & 0xffff,
    ]))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal but valid PE32+ DLL: one `.rdata` section holding an import
    /// directory for `imports` and a version resource of `version`.
    pub(crate) fn pe_with_imports(imports: &[&str], version: Option<[u16; 4]>) -> Vec<u8> {
        const SEC_RVA: u32 = 0x1000;
        const SEC_OFF: u32 = 0x200;
        // Section content: import descriptors, names, then the resource tree.
        let mut sec = vec![0u8; 0];
        let n = imports.len();
        let desc_size = 20 * (n + 1);
        sec.resize(desc_size, 0);
        let mut name_rvas = Vec::new();
        for imp in imports {
            name_rvas.push(SEC_RVA + sec.len() as u32);
            sec.extend_from_slice(imp.as_bytes());
            sec.push(0);
            while !sec.len().is_multiple_of(2) {
                sec.push(0);
            }
        }
        // Empty import lookup table (one null thunk) shared by all descriptors.
        while !sec.len().is_multiple_of(8) {
            sec.push(0);
        }
        let ilt_rva = SEC_RVA + sec.len() as u32;
        sec.extend_from_slice(&[0u8; 8]);
        for (i, rva) in name_rvas.iter().enumerate() {
            let d = &mut sec[i * 20..i * 20 + 20];
            d[0..4].copy_from_slice(&ilt_rva.to_le_bytes()); // OriginalFirstThunk
            d[12..16].copy_from_slice(&rva.to_le_bytes()); // Name
            d[16..20].copy_from_slice(&ilt_rva.to_le_bytes()); // FirstThunk
        }
        let mut rsrc_rva = 0u32;
        let mut rsrc_size = 0u32;
        if let Some(v) = version {
            while !sec.len().is_multiple_of(4) {
                sec.push(0);
            }
            let base = sec.len();
            rsrc_rva = SEC_RVA + base as u32;
            // Three directory levels, one entry each, then a data entry.
            let dir = |id_or_off: u32, target: u32| {
                let mut t = vec![0u8; 16];
                t[14..16].copy_from_slice(&1u16.to_le_bytes()); // NumberOfIdEntries
                t.extend_from_slice(&id_or_off.to_le_bytes());
                t.extend_from_slice(&target.to_le_bytes());
                t
            };
            let mut r = Vec::new();
            r.extend(dir(16, 0x8000_0000 | 24)); // RT_VERSION → table at 24
            r.extend(dir(1, 0x8000_0000 | 48)); // name 1 → table at 48
            r.extend(dir(0x409, 72)); // language → data entry at 72
            let data_rva = rsrc_rva + 88;
            let mut block = vec![0u8; 8];
            block.extend_from_slice(&0xFEEF04BDu32.to_le_bytes());
            block.extend_from_slice(&0x0001_0000u32.to_le_bytes());
            block.extend_from_slice(&(((v[0] as u32) << 16) | v[1] as u32).to_le_bytes());
            block.extend_from_slice(&(((v[2] as u32) << 16) | v[3] as u32).to_le_bytes());
            block.extend_from_slice(&[0u8; 36]);
            r.extend_from_slice(&data_rva.to_le_bytes());
            r.extend_from_slice(&(block.len() as u32).to_le_bytes());
            r.extend_from_slice(&[0u8; 8]);
            assert_eq!(r.len(), 88);
            r.extend(block);
            rsrc_size = r.len() as u32;
            sec.extend(r);
        }
        while !sec.len().is_multiple_of(0x200) {
            sec.push(0);
        }
        let mut b = vec![0u8; SEC_OFF as usize];
        b[..2].copy_from_slice(b"MZ");
        b[0x3c..0x40].copy_from_slice(&0x40u32.to_le_bytes());
        b[0x40..0x44].copy_from_slice(b"PE\0\0");
        let coff = 0x44;
        b[coff..coff + 2].copy_from_slice(&0x8664u16.to_le_bytes());
        b[coff + 2..coff + 4].copy_from_slice(&1u16.to_le_bytes()); // sections
        b[coff + 16..coff + 18].copy_from_slice(&240u16.to_le_bytes()); // optional header size
        b[coff + 18..coff + 20].copy_from_slice(&0x2022u16.to_le_bytes()); // DLL | executable | large address
        let opt = coff + 20;
        b[opt..opt + 2].copy_from_slice(&0x20bu16.to_le_bytes()); // PE32+
        b[opt + 16..opt + 20].copy_from_slice(&0u32.to_le_bytes()); // entry point
        b[opt + 24..opt + 32].copy_from_slice(&0x1_8000_0000u64.to_le_bytes()); // image base
        b[opt + 32..opt + 36].copy_from_slice(&0x1000u32.to_le_bytes()); // section alignment
        b[opt + 36..opt + 40].copy_from_slice(&0x200u32.to_le_bytes()); // file alignment
        b[opt + 40..opt + 42].copy_from_slice(&6u16.to_le_bytes()); // OS major
        b[opt + 48..opt + 50].copy_from_slice(&6u16.to_le_bytes()); // subsystem major
        let image_size = SEC_RVA + (sec.len() as u32).div_ceil(0x1000) * 0x1000;
        b[opt + 56..opt + 60].copy_from_slice(&image_size.to_le_bytes());
        b[opt + 60..opt + 64].copy_from_slice(&SEC_OFF.to_le_bytes()); // headers size
        b[opt + 68..opt + 70].copy_from_slice(&2u16.to_le_bytes()); // GUI subsystem
        b[opt + 108..opt + 112].copy_from_slice(&16u32.to_le_bytes()); // data directories
        let dd = opt + 112;
        b[dd + 8..dd + 12].copy_from_slice(&SEC_RVA.to_le_bytes()); // import
        b[dd + 12..dd + 16].copy_from_slice(&(desc_size as u32).to_le_bytes());
        b[dd + 16..dd + 20].copy_from_slice(&rsrc_rva.to_le_bytes()); // resource
        b[dd + 20..dd + 24].copy_from_slice(&rsrc_size.to_le_bytes());
        let sh = opt + 240;
        b[sh..sh + 6].copy_from_slice(b".rdata");
        b[sh + 8..sh + 12].copy_from_slice(&(sec.len() as u32).to_le_bytes()); // virtual size
        b[sh + 12..sh + 16].copy_from_slice(&SEC_RVA.to_le_bytes());
        b[sh + 16..sh + 20].copy_from_slice(&(sec.len() as u32).to_le_bytes()); // raw size
        b[sh + 20..sh + 24].copy_from_slice(&SEC_OFF.to_le_bytes());
        b[sh + 36..sh + 40].copy_from_slice(&0x4000_0040u32.to_le_bytes()); // read | initialised data
        b.extend(sec);
        b
    }

    #[test]
    fn reads_pe_imports_machine_and_file_version() {
        let dll = pe_with_imports(
            &["cudnn_ops_infer64_8.dll", "zlibwapi.dll", "KERNEL32.dll"],
            Some([8, 9, 7, 29]),
        );
        let info = parse_bytes(&dll);
        assert_eq!(info.error, None);
        assert_eq!(info.machine.as_deref(), Some("x86_64"));
        assert_eq!(
            info.needed,
            vec!["cudnn_ops_infer64_8.dll", "zlibwapi.dll", "KERNEL32.dll"]
        );
        assert_eq!(info.file_version.unwrap().to_string(), "8.9.7.29");
    }

    #[test]
    fn reads_the_real_elf_of_this_test_binary() {
        let exe = std::env::current_exe().unwrap();
        let info = read(&exe);
        if cfg!(target_os = "linux") {
            assert_eq!(info.machine.as_deref(), Some(host_machine()));
            assert!(
                info.needed.iter().any(|n| n.starts_with("libc.so")),
                "{info:?}"
            );
        }
    }

    #[test]
    fn the_release_marker_is_read_from_read_only_data() {
        let v = |b: &[u8]| embedded_version(b).map(|v| v.to_string());
        assert_eq!(
            v(b"\0x\0cudnn_version_9_12_0_46_36300845_e0\0").as_deref(),
            Some("9.12.0.46")
        );
        assert_eq!(
            v(b"cudnn_version_9_27_0_42_\0").as_deref(),
            Some("9.27.0.42")
        );
        assert_eq!(v(b"cudnn_version_9_\0"), None);
        assert_eq!(v(b"cudnn_version_check failed"), None);
        assert_eq!(v(b"nothing here"), None);
    }

    #[test]
    fn truncated_and_garbage_input_never_panics() {
        // The fixtures' minimal headers: machine known, details missing.
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[18] = 62;
        let info = parse_bytes(&elf);
        assert_eq!(info.machine.as_deref(), Some("x86_64"));
        assert!(info.needed.is_empty());
        let mut dll = vec![0u8; 0x80];
        dll[..2].copy_from_slice(b"MZ");
        dll[0x3c] = 0x40;
        dll[0x40..0x44].copy_from_slice(b"PE\0\0");
        dll[0x44..0x46].copy_from_slice(&0xaa64u16.to_le_bytes());
        assert_eq!(parse_bytes(&dll).machine.as_deref(), Some("aarch64"));
        for junk in [&b""[..], b"MZ", b"\x7fELF\x02", &[0xffu8; 300][..]] {
            let _ = parse_bytes(junk);
        }
        let mut big_off = vec![0u8; 0x40];
        big_off[..2].copy_from_slice(b"MZ");
        big_off[0x3c..0x40].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse_bytes(&big_off).machine.is_none());
        assert!(
            read(Path::new("/nonexistent/libcudnn.so.9"))
                .error
                .is_some()
        );
    }
}
