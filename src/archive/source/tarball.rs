//! Tar sources (plain, gzip, xz): streamed entry by entry into the partial
//! folder while hashing, with the total expansion capped.

use super::*;

/// Streams a tar (plain, gzip or xz) into `raw` under the partial folder,
/// checking each entry before writing it. Returns the entries, the size and
/// SHA-256 of every regular file written (by entry path), and the archive's
/// size and SHA-256 (of the compressed bytes).
pub fn read_tar(
    path: &Path,
    format: Format,
    raw: &Path,
    progress: &dyn Progress,
) -> Result<TarResult> {
    let file = File::open(path).with_path("open", path)?;
    let total = file.metadata().map(|m| m.len()).ok();
    progress.start("unpacking", total);
    let tar = read_tar_from(file, path, format, raw, progress)?;
    progress.finish();
    Ok(tar)
}

/// [`read_tar`] of the archive bytes `input` yields (a file, or a download
/// as it arrives), reading it to its end; `path` names the archive in
/// errors, `progress` counts the compressed bytes read.
///
/// # Errors
/// [`Kind::Integrity`] for a truncated, corrupt or hostile archive (the
/// [`bad`] errors of the entry checks); I/O errors writing into `raw`.
pub fn read_tar_from(
    input: impl Read,
    path: &Path,
    format: Format,
    raw: &Path,
    progress: &dyn Progress,
) -> Result<TarResult> {
    let compressed = std::cell::Cell::new(0u64);
    let counted = hash::HashingReader::new(ProgressReader {
        inner: input,
        progress,
        read: &compressed,
    });
    let mut input = BufReader::with_capacity(BUF, counted);
    let decoded: Box<dyn Read + '_> = match format {
        Format::TarGz => Box::new(flate2::bufread::MultiGzDecoder::new(&mut input)),
        Format::TarXz => {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
            let stream = liblzma::stream::MtStreamBuilder::new()
                .threads(threads)
                .memlimit_threading(256 << 20)
                .memlimit_stop(u64::MAX)
                .decoder()
                .map_err(|e| Error::msg(format!("could not start the xz decoder: {e}")))?;
            Box::new(liblzma::bufread::XzDecoder::new_stream(&mut input, stream))
        }
        Format::Tar => Box::new(&mut input),
        Format::Zip | Format::Dir => unreachable!("not a tar format"),
    };
    let mut archive = tar::Archive::new(decoded);
    let mut entries = Vec::new();
    let mut hashes = HashMap::new();
    let mut buf = vec![0u8; BUF];
    let mut expanded = 0u64;
    let mut tree = entry::Tree::default();
    let corrupt = |e: &dyn std::fmt::Display| {
        bad(path, format!("is truncated or corrupt ({e})"))
            .hint("the download may be incomplete; fetch it again and compare its SHA-256")
    };
    for item in archive.entries().map_err(|e| corrupt(&e))? {
        let mut item = item.map_err(|e| corrupt(&e))?;
        let name_bytes = item.path_bytes().into_owned();
        let raw_name =
            String::from_utf8(name_bytes).map_err(|_| unsafe_entry(path, "?", Unsafe::NotUtf8))?;
        let name = entry::normalize(&raw_name).map_err(|why| unsafe_entry(path, &raw_name, why))?;
        let ty = item.header().entry_type();
        if !matches!(ty, tar::EntryType::XGlobalHeader | tar::EntryType::XHeader) {
            // Checked before anything of it is written.
            let probe = Member {
                path: name.clone(),
                kind: if ty == tar::EntryType::Directory {
                    MemberKind::Dir
                } else {
                    MemberKind::File { size: 0 }
                },
            };
            tree.add(&probe)
                .map_err(|why| clashing_entry(path, &raw_name, why))?;
        }
        let kind = match ty {
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let size = item.header().size().map_err(|e| corrupt(&e))?;
                if size > MAX_ENTRY_BYTES {
                    return Err(bad(
                        path,
                        format!("entry '{raw_name}' claims {size} bytes, more than any cuDNN file"),
                    ));
                }
                // Real cuDNN tarballs expand about 2.5×; a bomb expands thousands of times.
                expanded += size;
                check_expansion(path, expanded, compressed.get())?;
                let target = raw.join(&name);
                if let Some(p) = target.parent() {
                    fsops::create_dir_all(p)?;
                }
                let (n, sha) = write_stream(&mut item, &target, &mut buf, &NoAdvance)
                    .map_err(|e| stream_error(path, &raw_name, &target, e))?;
                if n != size {
                    return Err(corrupt(&format!(
                        "entry '{raw_name}' is {n} bytes, its header says {size}"
                    )));
                }
                hashes.insert(name.clone(), (n, Some(sha)));
                MemberKind::File { size }
            }
            tar::EntryType::Directory => MemberKind::Dir,
            tar::EntryType::Symlink | tar::EntryType::Link => {
                let t = item
                    .link_name_bytes()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .ok_or_else(|| corrupt(&format!("link '{raw_name}' has no target")))?;
                if ty == tar::EntryType::Symlink {
                    MemberKind::Symlink(t)
                } else {
                    MemberKind::Hardlink(t)
                }
            }
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader => continue,
            other => {
                return Err(bad(path, format!("entry '{raw_name}' is a {}, not a file, folder or link", describe_type(other)))
                    .hint("cuDNN archives hold only files, folders and links; this one is malformed or hostile"));
            }
        };
        entries.push(Member { path: name, kind });
    }
    drop(archive);
    // Read whatever follows the tar end marker so the digest covers the whole file.
    let counted = input.into_inner();
    let (size, sha) = counted.finish().map_err(|e| Error::io("read", path, e))?;
    Ok(TarResult {
        entries,
        hashes,
        size,
        sha256: sha,
    })
}

/// What [`read_tar`] found.
#[derive(Debug)]
pub struct TarResult {
    /// The entries, in archive order.
    pub entries: Vec<Member>,
    /// Size and SHA-256 of each regular file written, by entry path.
    pub hashes: MemberHashes,
    /// Archive size in bytes.
    pub size: u64,
    /// Archive SHA-256.
    pub sha256: Sha256Hex,
}

pub(super) fn describe_type(t: tar::EntryType) -> &'static str {
    match t {
        tar::EntryType::Char => "character device",
        tar::EntryType::Block => "block device",
        tar::EntryType::Fifo => "named pipe",
        tar::EntryType::GNUSparse => "sparse file",
        _ => "special entry",
    }
}

/// Moves a streamed tar's planned files from `raw` to their store paths,
/// creates the links, and returns the file records.
pub fn apply_tar_plan(
    plan: &Plan,
    raw: &Path,
    dest: &Path,
    hashes: &MemberHashes,
) -> Result<(Vec<Written>, Vec<FileRecord>)> {
    make_dirs(plan, dest)?;
    let mut files = Vec::new();
    for it in &plan.items {
        if let ItemKind::File { .. } = it.kind {
            let from = raw.join(&it.src);
            let to = dest.join(&it.dest);
            fsops::rename(&from, &to)?;
            let (size, sha256) = hashes[&it.src].clone();
            files.push(Written {
                path: it.dest.clone(),
                size,
                sha256,
            });
        }
    }
    let links = place_links(plan, dest)?;
    crate::fsops::remove_dir_all(raw)?;
    Ok((files, links))
}

pub(super) struct ProgressReader<'a, R> {
    inner: R,
    progress: &'a dyn Progress,
    read: &'a std::cell::Cell<u64>,
}

impl<R: Read> Read for ProgressReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        self.progress.advance(n as u64);
        Ok(n)
    }
}

pub(super) struct NoAdvance;

impl Progress for NoAdvance {
    fn start(&self, _: &str, _: Option<u64>) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}
