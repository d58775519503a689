//! Reading archive sources — zip (and wheels), tar (gzip, xz, plain) and
//! folders — and writing their planned entries into a partial release folder,
//! hashing every byte on the way.
//!
//! Zip and folder sources list their entries first, so the plan comes before
//! any write and members are extracted in parallel (largest first, one reader
//! per thread) while another thread hashes the archive. Tar is a stream: each
//! entry is checked, then written under `raw/` while hashing, and the plan is
//! applied afterwards by renames inside the partial folder.
//!
//! Writes here go only into the private partial folder, which the store
//! removes on any failure; `fsops` handles everything that touches shared state.

pub mod follow;
pub mod stream;
mod tarball;
pub mod zipstream;

pub use tarball::{TarResult, apply_tar_plan, read_tar, read_tar_from};

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use super::entry::{self, Member, MemberKind, Unsafe};
use super::layout::{Item, ItemKind, Plan};
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::hash::{self, Hasher, Sha256Hex};
use crate::progress::Progress;
use crate::store::FileRecord;

/// Largest member accepted (the biggest real cuDNN library is about 1 GB).
pub const MAX_ENTRY_BYTES: u64 = 16 << 30;

const BUF: usize = 256 << 10;

/// Largest decompressed/compressed ratio accepted for an archive's whole
/// content (real cuDNN archives and wheels expand 2 to 3 times; a bomb
/// thousands of times). Below 64 MiB of content it is not applied.
const MAX_EXPANSION: u64 = 200;

/// Room allowed per file beyond its bytes when checking free space: the
/// file system's block rounding and metadata (4 KiB, a common block size).
const PER_FILE_SLACK: u64 = 4096;

/// Refuses, before anything is written, to unpack `files` files of `bytes`
/// bytes in all (the sizes the archive or folder `source` declares) into
/// `dest` when the file system holding it has less room than that (plus
/// [`PER_FILE_SLACK`] a file): [`Kind::Failure`], exit 1 as for a full disk
/// (README, "Exit codes"), naming the archive, the bytes needed and those
/// available. Nothing is refused when the system does not say how much is free.
pub fn check_space(source: &Path, dest: &Path, bytes: u64, files: usize) -> Result<()> {
    let need = bytes.saturating_add(PER_FILE_SLACK.saturating_mul(files as u64));
    let Some(available) = crate::platform::available_space(dest) else {
        return Ok(());
    };
    if available >= need {
        return Ok(());
    }
    Err(Error::new(
        Kind::Failure,
        format!(
            "not enough disk space to unpack '{}': it needs {} ({need} bytes) and the disk holding '{}' has {} ({available} bytes) free",
            source.display(),
            crate::store::human_size(need),
            dest.display(),
            crate::store::human_size(available)
        ),
    )
    .cause("nothing was written")
    .hint("free some disk space (`cudnnm uninstall` old releases) or set CUDNNM_HOME to a larger disk, then run the command again"))
}

/// Most bytes an archive may expand to in all: several times a whole real
/// cuDNN release unpacked (a few GiB), whatever the archive's size.
pub const MAX_TOTAL_BYTES: u64 = 32 << 30;

/// Refuses an archive of `archive_bytes` whose content reaches
/// `expanded` bytes: more than [`MAX_TOTAL_BYTES`], or (past 64 MiB) more
/// than [`MAX_EXPANSION`] times its size.
fn check_expansion(path: &Path, expanded: u64, archive_bytes: u64) -> Result<()> {
    let why = if expanded > MAX_TOTAL_BYTES {
        format!(
            "expands to more than {} GiB ({expanded} bytes), more than any cuDNN release",
            MAX_TOTAL_BYTES >> 30
        )
    } else if expanded > (64 << 20) && expanded > MAX_EXPANSION * archive_bytes.max(1) {
        format!(
            "expands to more than {MAX_EXPANSION} times its size ({expanded} bytes from {archive_bytes}), unlike any cuDNN archive"
        )
    } else {
        return Ok(());
    };
    Err(bad(path, why).hint("this archive is malformed or hostile; download it again from NVIDIA"))
}

/// The container format, sniffed from the first bytes (never from the name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// zip or wheel (`PK\x03\x04`).
    Zip,
    /// gzip-compressed tar (`\x1f\x8b`).
    TarGz,
    /// xz-compressed tar (`\xfd7zXZ\0`).
    TarXz,
    /// Uncompressed tar (`ustar` at offset 257).
    Tar,
    /// A folder.
    Dir,
}

/// Sniffs the format of `path`.
///
/// # Errors
/// When the path cannot be read, or is not one of the formats (names the file).
pub fn sniff(path: &Path) -> Result<Format> {
    let meta = fs::metadata(path).with_path("read", path)?;
    if meta.is_dir() {
        return Ok(Format::Dir);
    }
    let mut head = [0u8; 512];
    let mut f = File::open(path).with_path("open", path)?;
    let mut n = 0;
    while n < head.len() {
        let k = f.read(&mut head[n..]).with_path("read", path)?;
        if k == 0 {
            break;
        }
        n += k;
    }
    sniff_bytes(&head[..n]).ok_or_else(|| {
        bad(path, "is not a zip, wheel, .tgz, .tar.xz or tar archive (its first bytes say otherwise)")
            .hint("give a cuDNN archive as downloaded from NVIDIA or PyPI, or the folder it was unpacked into")
    })
}

/// The archive format of a file that starts with `h` (its first 512 bytes,
/// or all of it when shorter); `None` for anything else.
pub fn sniff_bytes(h: &[u8]) -> Option<Format> {
    if h.starts_with(b"PK\x03\x04") || h.starts_with(b"PK\x05\x06") {
        Some(Format::Zip)
    } else if h.starts_with(&[0x1f, 0x8b]) {
        Some(Format::TarGz)
    } else if h.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Some(Format::TarXz)
    } else if h.len() >= 262 && &h[257..262] == b"ustar" {
        Some(Format::Tar)
    } else {
        None
    }
}

/// An integrity error naming `path`.
pub fn bad(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(
        Kind::Integrity,
        format!("cannot import '{}': {why}", path.display()),
    )
}

fn clashing_entry(path: &Path, name: &str, why: entry::Clash) -> Error {
    bad(path, format!("entry '{name}' {why}")).hint(
        "this archive is malformed (no cuDNN release is built so); download it again from NVIDIA and check its SHA-256",
    )
}

fn unsafe_entry(path: &Path, name: &str, why: Unsafe) -> Error {
    bad(path, format!("entry '{name}' {why}")).hint(
        "this archive is malformed or hostile; download it again from NVIDIA and check its SHA-256",
    )
}

// ---------------------------------------------------------------- zip

/// A zip source: its entries (with their zip indices).
pub struct ZipSource {
    path: PathBuf,
    entries: Vec<Member>,
    index: HashMap<String, usize>,
    /// CRC-32 of each entry, as the central directory records it.
    crc32: HashMap<String, u32>,
}

impl ZipSource {
    /// Opens a zip and lists its entries, refusing unsafe names.
    ///
    /// # Errors
    /// A truncated or corrupt zip; unsafe entry names; absurd sizes.
    pub fn open(path: &Path) -> Result<ZipSource> {
        // The declared count first: the zip library reads the whole
        // central directory into memory, so an absurd count is refused
        // before it does.
        let dir = super::zipdir::directory(path).with_path("read", path)?;
        let count = |n: u64| {
            bad(
                path,
                format!(
                    "holds {n} entries; no cuDNN archive holds more than {}",
                    entry::MAX_ENTRIES
                ),
            )
            .hint("this archive is malformed or hostile; download it again from NVIDIA")
        };
        if let Some(d) = &dir {
            if d.entries > entry::MAX_ENTRIES as u64 {
                return Err(count(d.entries));
            }
            // Names as stored, so that two entries of one name (which the
            // zip library folds into one) are refused, naming it.
            if let Some(names) = super::zipdir::names(path, d).with_path("read", path)? {
                let mut seen = std::collections::HashSet::new();
                for n in &names {
                    if !seen.insert(n.as_str()) {
                        return Err(clashing_entry(path, n, entry::Clash::Duplicate));
                    }
                }
            }
        }
        let mut za = open_zip(path)?;
        if za.len() > entry::MAX_ENTRIES {
            return Err(count(za.len() as u64));
        }
        if let Some(d) = &dir
            && (za.len() as u64) < d.entries
        {
            return Err(bad(
                path,
                format!(
                    "declares {} entries but {} have distinct names: some entry appears twice",
                    d.entries,
                    za.len()
                ),
            )
            .hint("this archive is malformed (no cuDNN release is built so); download it again from NVIDIA and check its SHA-256"));
        }
        let mut entries = Vec::with_capacity(za.len());
        let mut index = HashMap::new();
        let mut crc32 = HashMap::new();
        let mut tree = entry::Tree::default();
        let archive_bytes = fs::metadata(path).with_path("read", path)?.len();
        let mut declared = 0u64;
        for i in 0..za.len() {
            let mut f = za
                .by_index(i)
                .map_err(|e| bad(path, format!("zip entry {i} is unreadable: {e}")))?;
            let raw = f
                .name()
                .map_err(|e| bad(path, format!("zip entry {i} has a bad name: {e}")))?
                .into_owned();
            let norm = entry::normalize(&raw).map_err(|why| unsafe_entry(path, &raw, why))?;
            let crc = f.crc32();
            let kind = if f.is_dir() {
                MemberKind::Dir
            } else if f.is_symlink() {
                let mut t = String::new();
                f.by_ref()
                    .take(4096)
                    .read_to_string(&mut t)
                    .map_err(|e| bad(path, format!("link '{raw}' is unreadable: {e}")))?;
                MemberKind::Symlink(t)
            } else {
                let size = f.size();
                if size > MAX_ENTRY_BYTES
                    || (size > (1 << 30) && size / f.compressed_size().max(1) > 1000)
                {
                    return Err(bad(
                        path,
                        format!("entry '{raw}' claims {size} bytes, more than any cuDNN file"),
                    )
                    .hint("this archive is malformed or hostile; download it again"));
                }
                // The sizes the zip declares, in all: a bomb of many
                // entries is refused before any is written.
                declared = declared.saturating_add(size);
                check_expansion(path, declared, archive_bytes)?;
                MemberKind::File { size }
            };
            let e = Member { path: norm, kind };
            tree.add(&e)
                .map_err(|why| clashing_entry(path, &raw, why))?;
            index.insert(e.path.clone(), i);
            crc32.insert(e.path.clone(), crc);
            entries.push(e);
        }
        Ok(ZipSource {
            path: path.to_path_buf(),
            entries,
            index,
            crc32,
        })
    }

    /// The CRC-32 the central directory records for entry `name`.
    pub fn crc32(&self, name: &str) -> Option<u32> {
        self.crc32.get(name).copied()
    }

    /// The entries, in archive order.
    pub fn entries(&self) -> &[Member] {
        &self.entries
    }

    /// Reads a small member (a header, METADATA) as text; at most 4 MiB.
    pub fn read_text(&self, name: &str) -> Result<String> {
        let mut za = open_zip(&self.path)?;
        let i = self.index[name];
        let f = za
            .by_index(i)
            .map_err(|e| bad(&self.path, format!("'{name}' is unreadable: {e}")))?;
        let mut bytes = Vec::new();
        f.take(4 << 20)
            .read_to_end(&mut bytes)
            .map_err(|e| bad(&self.path, format!("'{name}' is unreadable: {e}")))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Extracts the planned items into `dest` in parallel while hashing the
    /// archive on another thread; hashes each file member too unless
    /// `hash_members` is false (a wheel whose `RECORD` will give them).
    pub fn extract(
        &self,
        plan: &Plan,
        dest: &Path,
        hash_members: bool,
        progress: &dyn Progress,
    ) -> Result<Extracted> {
        let mut files: Vec<&Item> = plan
            .items
            .iter()
            .filter(|i| matches!(i.kind, ItemKind::File { .. }))
            .collect();
        let total: u64 = files.iter().map(|i| item_size(i)).sum();
        // The zip declares every size: refuse a disk too small before writing.
        check_space(&self.path, dest, total, files.len())?;
        progress.start("unpacking", Some(total));
        make_dirs(plan, dest)?;
        // Longest-processing-time-first over the threads: the one huge library
        // gets a thread of its own while the rest share the others.
        files.sort_by_key(|i| std::cmp::Reverse(item_size(i)));
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 8);
        let mut buckets: Vec<(u64, Vec<&Item>)> = (0..threads).map(|_| (0, Vec::new())).collect();
        for it in files {
            let b = buckets
                .iter_mut()
                .min_by_key(|b| b.0)
                .expect("at least one bucket");
            b.0 += item_size(it);
            b.1.push(it);
        }
        let archive_bytes = fs::metadata(&self.path).map_or(0, |m| m.len());
        let (records, archive) = std::thread::scope(|s| {
            let hasher = s.spawn(|| hash::sha256_file(&self.path));
            let workers: Vec<_> = buckets
                .into_iter()
                .filter(|b| !b.1.is_empty())
                .map(|(load, items)| {
                    let pipelined = worth_pipelining(load, total, archive_bytes, threads);
                    s.spawn(move || {
                        self.extract_bucket(&items, dest, pipelined, hash_members, progress)
                    })
                })
                .collect();
            let mut records = Vec::new();
            let mut first_err = None;
            for w in workers {
                match w
                    .join()
                    .unwrap_or_else(|_| Err(Error::msg("an extraction thread panicked")))
                {
                    Ok(r) => records.extend(r),
                    Err(e) => first_err = first_err.or(Some(e)),
                }
            }
            let archive = hasher
                .join()
                .unwrap_or_else(|_| Err(Error::msg("the hashing thread panicked")));
            match first_err {
                Some(e) => Err(e),
                None => Ok((records, archive)),
            }
        })?;
        let (size, sha256) = archive?;
        let links = place_links(plan, dest)?;
        progress.finish();
        Ok(Extracted {
            files: records,
            links,
            size,
            sha256,
        })
    }

    /// Extracts `items` one after another on this thread; with `pipelined`,
    /// each member of at least [`PIPELINE_MIN`] bytes on two threads
    /// ([`write_stream_pipelined`]).
    fn extract_bucket(
        &self,
        items: &[&Item],
        dest: &Path,
        pipelined: bool,
        hash: bool,
        progress: &dyn Progress,
    ) -> Result<Vec<Written>> {
        let mut za = open_zip(&self.path)?;
        let mut buf = vec![0u8; BUF];
        let mut out = Vec::with_capacity(items.len());
        for it in items {
            let f = open_member(&mut za, self.index[&it.src])
                .map_err(|e| bad(&self.path, format!("'{}' is unreadable: {e}", it.src)))?;
            let target = dest.join(&it.dest);
            // Never more than the entry declares (one byte more tells a lie).
            let declared = item_size(it);
            let f = f.take(declared.saturating_add(1));
            let written = if pipelined && declared >= PIPELINE_MIN {
                write_stream_pipelined(f, &target, hash, progress)
            } else {
                copy_member(f, &target, &mut buf, hash, progress)
            };
            let (size, sha) = written.map_err(|e| stream_error(&self.path, &it.src, &target, e))?;
            if size != declared {
                return Err(bad(
                    &self.path,
                    format!(
                        "entry '{}' holds more or fewer bytes than the {declared} it declares",
                        it.src
                    ),
                )
                .hint("this archive is malformed or hostile; download it again from NVIDIA"));
            }
            out.push(Written {
                path: it.dest.clone(),
                size,
                sha256: sha,
            });
        }
        Ok(out)
    }
}

/// Size and SHA-256 (when hashed as it was written) of each file member
/// written under a partial folder's `raw/`, by member path.
pub type MemberHashes = HashMap<String, (u64, Option<Sha256Hex>)>;

/// What [`ZipSource::extract`] wrote.
#[derive(Debug)]
pub struct Extracted {
    /// The file members, in no particular order.
    pub files: Vec<Written>,
    /// The links and copies of members the plan adds, as recorded.
    pub links: Vec<FileRecord>,
    /// The archive's size in bytes.
    pub size: u64,
    /// The archive's SHA-256.
    pub sha256: Sha256Hex,
}

/// One file member written into the release folder.
#[derive(Debug)]
pub struct Written {
    /// Its path in the release (`lib/libcudnn.so.9`).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256, when it was hashed as it was written.
    pub sha256: Option<Sha256Hex>,
}

/// How much slower extracting a member's byte (inflating, hashing, writing)
/// is than hashing an archive's byte: about 6 times (issue 27: the archive
/// hash of the 732 MB benchmark wheel cost about 0.55 s of CPU, extracting
/// its 1.18 GB about 5.8 s).
const EXTRACT_PER_HASH: u64 = 6;

/// Whether a bucket of members of `load` bytes, one of `threads` sharing
/// members of `total` bytes while another thread hashes the archive's
/// `archive_bytes`, should pipeline its large members (inflate on its
/// thread, hash and write on another).
///
/// Only when it would keep its thread busy well after the others finished,
/// so that a core would idle: when it is more than a quarter over the work
/// one core gets with everything spread evenly. Otherwise handing its bytes
/// between two threads only costs CPU: context switches (thread wake-ups
/// across CPUs, costly in a VM) and the bytes leaving one core's cache for
/// another's. On the benchmark wheel on 2 cores (its 617 MiB library alone
/// in one bucket, about the fair share) pipelining cost about 1 s more
/// system time and 4,700 context switches against 60 (issue 27).
fn worth_pipelining(load: u64, total: u64, archive_bytes: u64, threads: usize) -> bool {
    let fair = (total + archive_bytes / EXTRACT_PER_HASH) / threads.max(1) as u64;
    load > fair + fair / 4
}

fn open_zip(path: &Path) -> Result<zip::ZipArchive<BufReader<File>>> {
    let f = File::open(path).with_path("open", path)?;
    zip::ZipArchive::new(BufReader::with_capacity(BUF, f)).map_err(|e| {
        bad(path, format!("is not a readable zip ({e})")).hint(
            "the download may be truncated or corrupt; fetch it again and compare its SHA-256",
        )
    })
}

/// The bytes of member `i` of `za`, inflated from input read [`BUF`] bytes
/// at a time, and failing at their end unless their CRC-32 is the one the
/// zip declares.
///
/// The zip crate's own reader ([`zip::ZipArchive::by_index`]) feeds the
/// inflater through an 8 KiB buffer it makes inside, copied out of the
/// archive's: every call then inflates a few KiB, and the inflater copies
/// much of what it writes into its window once more. Read from large
/// buffers, those copies (about 3% of the CPU samples of the benchmark
/// wheel's import) mostly go. The zip crate still finds the member and
/// reads its local header; what it would refuse (encryption, other
/// compression methods) is refused here too.
fn open_member(
    za: &mut zip::ZipArchive<BufReader<File>>,
    i: usize,
) -> zip::result::ZipResult<CrcChecked<Box<dyn Read + '_>>> {
    use zip::CompressionMethod;
    use zip::result::ZipError;
    let raw = za.by_index_raw(i)?;
    if raw.encrypted() {
        return Err(ZipError::UnsupportedArchive("encrypted members"));
    }
    let expected = raw.crc32();
    let bytes: Box<dyn Read> = match raw.compression() {
        CompressionMethod::Stored => Box::new(raw),
        CompressionMethod::Deflated => Box::new(flate2::bufread::DeflateDecoder::new(
            // After the first, its reads bypass the archive's `BufReader`
            // (as large as this one): one read of the file each, no copy between.
            BufReader::with_capacity(BUF, raw),
        )),
        _ => {
            return Err(ZipError::UnsupportedArchive(
                "compression methods other than deflate",
            ));
        }
    };
    Ok(CrcChecked {
        inner: bytes,
        crc: crc32fast::Hasher::new(),
        expected,
    })
}

/// A reader that fails at the end of its input when the bytes' CRC-32 is
/// not `expected` (as the zip crate's own member reader does).
struct CrcChecked<R> {
    inner: R,
    // Not `flate2::Crc`: built on zlib-rs it sums without the carry-less
    // multiply instructions crc32fast picks at run time, about 10 times slower.
    crc: crc32fast::Hasher,
    expected: u32,
}

impl<R: Read> Read for CrcChecked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() && self.crc.clone().finalize() != self.expected {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "CRC-32 {:08x}, not the {:08x} the zip declares",
                    self.crc.clone().finalize(),
                    self.expected
                ),
            ));
        }
        self.crc.update(&buf[..n]);
        Ok(n)
    }
}

fn item_size(i: &Item) -> u64 {
    match i.kind {
        ItemKind::File { size } => size,
        _ => 0,
    }
}

fn make_dirs(plan: &Plan, dest: &Path) -> Result<()> {
    let mut dirs: Vec<PathBuf> = plan
        .items
        .iter()
        .filter_map(|i| dest.join(&i.dest).parent().map(Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs.dedup();
    for d in dirs {
        fsops::create_dir_all(&d)?;
    }
    Ok(())
}

/// Copies `r` into a new file `target`, hashing; fails if `target` exists.
fn write_stream(
    r: impl Read,
    target: &Path,
    buf: &mut [u8],
    progress: &dyn Progress,
) -> io::Result<(u64, Sha256Hex)> {
    let (n, sha) = copy_member(r, target, buf, true, progress)?;
    let sha = sha.ok_or_else(|| io::Error::other("the file was not hashed"))?;
    Ok((n, sha))
}

/// Copies `r` into a new file `target`, hashing unless `hash` is false;
/// fails if `target` exists.
fn copy_member(
    mut r: impl Read,
    target: &Path,
    buf: &mut [u8],
    hash: bool,
    progress: &dyn Progress,
) -> io::Result<(u64, Option<Sha256Hex>)> {
    let mut out = fsops::create_new_file(target)?;
    let mut h = hash.then(Hasher::new);
    let mut n = 0u64;
    loop {
        let k = match r.read(buf) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        stop_if_interrupted()?;
        if let Some(h) = &mut h {
            h.update(&buf[..k]);
        }
        out.write_all(&buf[..k])?;
        n += k as u64;
        if n > MAX_ENTRY_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "entry larger than any cuDNN file",
            ));
        }
        progress.advance(k as u64);
    }
    Ok((n, h.map(Hasher::finish)))
}

/// Members at least this large are inflated and hashed+written on two
/// threads ([`write_stream_pipelined`]).
const PIPELINE_MIN: u64 = 32 << 20;

/// Buffers in flight between the two threads of a pipelined member.
const PIPE_DEPTH: usize = 8;

/// Like [`write_stream`], but reading (inflating) runs on this thread while
/// hashing and writing run on another, so a large member costs the slower of
/// the two instead of their sum — the one big library of a wheel otherwise
/// bounds the whole import. At most `PIPE_DEPTH + 2` buffers exist.
fn write_stream_pipelined(
    mut r: impl Read,
    target: &Path,
    hash: bool,
    progress: &dyn Progress,
) -> io::Result<(u64, Option<Sha256Hex>)> {
    let out = fsops::create_new_file(target)?;
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<(Vec<u8>, usize)>(PIPE_DEPTH);
    let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::scope(|s| {
        let writer = s.spawn(move || -> io::Result<(u64, Option<Sha256Hex>)> {
            let mut out = out;
            let mut h = hash.then(Hasher::new);
            let mut n = 0u64;
            for (buf, k) in full_rx {
                if let Some(h) = &mut h {
                    h.update(&buf[..k]);
                }
                out.write_all(&buf[..k])?;
                n += k as u64;
                progress.advance(k as u64);
                let _ = empty_tx.send(buf);
            }
            Ok((n, h.map(Hasher::finish)))
        });
        let read = (|| -> io::Result<()> {
            let mut total = 0u64;
            loop {
                let mut buf = empty_rx.try_recv().unwrap_or_else(|_| vec![0u8; BUF]);
                let k = read_full(&mut r, &mut buf)?;
                if k == 0 {
                    return Ok(());
                }
                stop_if_interrupted()?;
                total += k as u64;
                if total > MAX_ENTRY_BYTES {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "entry larger than any cuDNN file",
                    ));
                }
                if full_tx.send((buf, k)).is_err() {
                    return Ok(()); // the writer stopped; its error is the one to report
                }
            }
        })();
        drop(full_tx);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the writing thread panicked")));
        match (read, written) {
            (_, Err(w)) => Err(w),
            (Err(r), Ok(_)) => Err(r),
            (Ok(()), Ok(v)) => Ok(v),
        }
    })
}

/// Fails when a signal asked the process to stop (see [`crate::interrupt`]);
/// [`stream_error`] then reports the interruption, not a damaged archive.
fn stop_if_interrupted() -> io::Result<()> {
    if crate::interrupt::requested() {
        return Err(io::Error::other("interrupted"));
    }
    Ok(())
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Classifies a failure while copying one entry: write-side errors (disk
/// full, read-only) name the target; read-side errors mean a corrupt archive.
fn stream_error(archive: &Path, entry_name: &str, target: &Path, e: io::Error) -> Error {
    if crate::interrupt::requested() {
        return crate::interrupt::import_error();
    }
    match e.kind() {
        io::ErrorKind::StorageFull
        | io::ErrorKind::QuotaExceeded
        | io::ErrorKind::PermissionDenied
        | io::ErrorKind::ReadOnlyFilesystem
        | io::ErrorKind::AlreadyExists => Error::io("write", target, e),
        _ => bad(
            archive,
            format!("entry '{entry_name}' is corrupt or truncated ({e})"),
        )
        .hint("the archive is damaged; download it again and compare its SHA-256"),
    }
}

/// The record of the link `path` → `target` as [`fsops::symlink_or_copy`]
/// placed it at `at`: a link, or (Windows without the right to make links)
/// a file with the copy's size and SHA-256, so `verify` checks what is there.
pub fn placed_record(
    path: &str,
    target: &str,
    placed: fsops::Placed,
    at: &Path,
) -> Result<FileRecord> {
    Ok(match placed {
        fsops::Placed::Linked => FileRecord::link(path.to_string(), target.to_string()),
        fsops::Placed::Copied => {
            let (size, sha) = hash::sha256_file(at)?;
            FileRecord::file(path.to_string(), size, sha)
        }
    })
}

/// Creates the planned symbolic links and hard-link copies (after all files exist).
fn place_links(plan: &Plan, dest: &Path) -> Result<Vec<FileRecord>> {
    let mut out = Vec::new();
    for it in &plan.items {
        let target = dest.join(&it.dest);
        match &it.kind {
            ItemKind::File { .. } => {}
            ItemKind::Symlink(t) => {
                let placed =
                    fsops::symlink_or_copy(t, &target).with_path("create the link", &target)?;
                out.push(placed_record(&it.dest, t, placed, &target)?);
            }
            ItemKind::CopyOf(of) => {
                fsops::copy_file(&dest.join(of), &target)?;
                let (size, sha) = hash::sha256_file(&target)?;
                out.push(FileRecord::file(it.dest.clone(), size, sha));
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------- folder

/// Lists a folder as entries (links not followed; absolute links that point
/// inside the folder are made relative).
///
/// # Errors
/// Unreadable folders; device files, sockets and pipes.
pub fn list_dir(root: &Path) -> Result<Vec<Member>> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1)
    {
        let e = e.map_err(|err| {
            let p = err.path().unwrap_or(root).to_path_buf();
            match err.into_io_error() {
                Some(io) => Error::io("read", &p, io),
                None => Error::msg(format!("could not read '{}'", p.display())),
            }
        })?;
        let rel = e
            .path()
            .strip_prefix(root)
            .expect("walkdir stays under root");
        let name = rel
            .to_str()
            .ok_or_else(|| unsafe_entry(root, &rel.to_string_lossy(), Unsafe::NotUtf8))?
            .replace('\\', "/");
        let ft = e.file_type();
        let kind = if ft.is_dir() {
            MemberKind::Dir
        } else if ft.is_symlink() {
            let t = fs::read_link(e.path()).with_path("read the link", e.path())?;
            let t = match t.strip_prefix(root) {
                Ok(inside) if t.is_absolute() => entry::relative_path(
                    name.rsplit_once('/').map(|(d, _)| d).unwrap_or(""),
                    &inside.to_string_lossy().replace('\\', "/"),
                ),
                _ => t.to_string_lossy().into_owned(),
            };
            MemberKind::Symlink(t)
        } else if ft.is_file() {
            MemberKind::File {
                size: e.metadata().map(|m| m.len()).unwrap_or(0),
            }
        } else {
            return Err(bad(
                root,
                format!("'{name}' is a device, socket or pipe, not a file"),
            )
            .hint("import a folder that holds only the cuDNN files"));
        };
        out.push(Member { path: name, kind });
    }
    Ok(out)
}

/// Copies the planned items of a folder source into `dest`, hashing.
pub fn copy_dir(
    plan: &Plan,
    root: &Path,
    dest: &Path,
    progress: &dyn Progress,
) -> Result<Vec<FileRecord>> {
    let total: u64 = plan.items.iter().map(item_size).sum();
    check_space(root, dest, total, plan.items.len())?;
    progress.start("copying", Some(total));
    make_dirs(plan, dest)?;
    let mut buf = vec![0u8; BUF];
    let mut out = Vec::new();
    for it in plan
        .items
        .iter()
        .filter(|i| matches!(i.kind, ItemKind::File { .. }))
    {
        let from = root.join(&it.src);
        let to = dest.join(&it.dest);
        let f = File::open(&from).with_path("read", &from)?;
        let (size, sha) = write_stream(f, &to, &mut buf, progress).map_err(|e| match e.kind() {
            io::ErrorKind::StorageFull
            | io::ErrorKind::ReadOnlyFilesystem
            | io::ErrorKind::AlreadyExists => Error::io("write", &to, e),
            _ => Error::io("read", &from, e),
        })?;
        out.push(FileRecord::file(it.dest.clone(), size, sha));
    }
    out.extend(place_links(plan, dest)?);
    progress.finish();
    Ok(out)
}

/// Reads a small file of a folder source as text (at most 4 MiB).
pub fn read_text_file(path: &Path) -> Result<String> {
    let f = File::open(path).with_path("read", path)?;
    let mut bytes = Vec::new();
    f.take(4 << 20)
        .read_to_end(&mut bytes)
        .with_path("read", path)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn zip_of(members: &[(&str, &[u8], zip::CompressionMethod)]) -> Vec<u8> {
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, bytes, method) in members {
            let opts = zip::write::SimpleFileOptions::default().compression_method(*method);
            z.start_file(*name, opts).unwrap();
            z.write_all(bytes).unwrap();
        }
        z.finish().unwrap().into_inner()
    }

    fn read_member(zip: &[u8], i: usize) -> io::Result<Vec<u8>> {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("a.zip");
        fsops::create_new_file(&path)
            .unwrap()
            .write_all(zip)
            .unwrap();
        let mut za = open_zip(&path).unwrap();
        let mut out = Vec::new();
        open_member(&mut za, i)
            .map_err(io::Error::other)?
            .read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn members_read_back_stored_or_deflated() {
        let big: Vec<u8> = (0..3 * BUF + 17).map(|i| (i * 7 % 253) as u8).collect();
        let zip = zip_of(&[
            ("s", &big, zip::CompressionMethod::Stored),
            ("d", &big, zip::CompressionMethod::Deflated),
            ("e", b"", zip::CompressionMethod::Deflated),
        ]);
        assert_eq!(read_member(&zip, 0).unwrap(), big);
        assert_eq!(read_member(&zip, 1).unwrap(), big);
        assert_eq!(read_member(&zip, 2).unwrap(), b"");
    }

    #[test]
    fn a_member_whose_crc_differs_is_refused_at_its_end() {
        // Stored, so the changed byte inflates fine: only the CRC-32 tells.
        let mut zip = zip_of(&[("s", b"hello, cuDNN", zip::CompressionMethod::Stored)]);
        let at = zip.windows(5).position(|w| w == b"hello").unwrap();
        zip[at] ^= 0x20;
        let e = read_member(&zip, 0).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("CRC-32"), "{e}");
    }

    #[test]
    fn only_a_bucket_well_over_its_share_is_pipelined() {
        // The benchmark wheel: 1.18 GB in members, the largest 647.6 MB, 732 MB archive.
        let (total, big, archive) = (1_182_000_000, 647_553_136, 731_725_872);
        assert!(!worth_pipelining(big, total, archive, 2));
        assert!(!worth_pipelining(total - big, total, archive, 2));
        assert!(worth_pipelining(big, total, archive, 4));
        assert!(!worth_pipelining(total, total, archive, 1));
    }
}
