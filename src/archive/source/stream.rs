//! Unpacking an archive while it downloads: a thread reads the download's
//! partial file as it grows ([`follow`](super::follow)), from its first byte
//! (so a resumed download's bytes already on disk come first), recognises
//! the format from the first bytes, and writes every member under `raw/` in
//! the store's private partial folder while hashing it: a zip or wheel from
//! its local headers ([`zipstream`](super::zipstream)), a tar (gzip, xz,
//! plain) through the same reader as a tar file ([`read_tar_from`]). It also
//! hashes the whole stream, so the importer can tell that what it unpacked
//! is, byte for byte, the archive whose SHA-256 the download verified.
//!
//! Nothing is planned, identified or committed here: that happens once the
//! download finished and verified (`archive::import_streamed`), holding a
//! zip's local headers against its central directory ([`agree`]). Whatever
//! cannot be streamed ends the thread with [`Outcome::Fallback`], and the
//! import reads the finished file instead; a member every import refuses
//! ends it with [`Outcome::Refused`]. The thread writes only under `raw/`.

use std::sync::Arc;
use std::thread::JoinHandle;

use super::follow::{Feed, FollowReader, Stop};
use super::zipstream::{ZipStreamed, stream_zip};
use super::*;

/// Why streaming a member stopped.
#[derive(Debug)]
pub enum Halt {
    /// It cannot be unpacked from the stream (the reason, for a note):
    /// import the finished file instead.
    Fallback(String),
    /// Every import refuses it ([`Kind::Integrity`]), once the download verified.
    Refused(Error),
}

/// The members unpacked from the stream, by format.
#[derive(Debug)]
pub enum Streamed {
    /// A zip or wheel: its members as the local headers gave them.
    Zip(ZipStreamed),
    /// A tar: its entries, as a tar file gives them.
    Tar(TarResult),
}

/// A stream unpacked to its end.
#[derive(Debug)]
pub struct Unpacked {
    /// The format its first bytes showed.
    pub format: Format,
    /// What was written under `raw/`.
    pub streamed: Streamed,
    /// Bytes read, the whole download.
    pub size: u64,
    /// SHA-256 of the bytes read.
    pub sha256: Sha256Hex,
}

/// How the unpacking thread ended.
#[derive(Debug)]
pub enum Outcome {
    /// Every member is under `raw/`.
    Unpacked(Unpacked),
    /// Streaming stopped for this reason; import the finished file.
    Fallback(String),
    /// The archive is refused ([`Kind::Integrity`]); report it once the
    /// download verified (a download that did not verify reports that instead).
    Refused(Error),
}

/// The thread unpacking a download as it arrives; see the module
/// documentation. Dropping it abandons the feed and waits for the thread.
#[derive(Debug)]
pub struct Unpacker {
    feed: Arc<Feed>,
    thread: Option<JoinHandle<Outcome>>,
}

impl Unpacker {
    /// Starts the thread: it waits for the download to open its partial
    /// file ([`Feed::opened`]), then unpacks into `raw` (a folder inside a
    /// store partial folder, created here and emptied when the download
    /// starts over).
    /// Unless `hash_members`, a zip's members are not hashed as they are
    /// written (a published wheel's `RECORD` gives their SHA-256).
    pub fn start(feed: Arc<Feed>, raw: PathBuf, hash_members: bool) -> Unpacker {
        let f = feed.clone();
        let thread = std::thread::Builder::new()
            .name("unpack-stream".into())
            .spawn(move || run(&f, &raw, hash_members))
            .ok();
        Unpacker { feed, thread }
    }

    /// Waits for the thread after the download completed and verified
    /// ([`Feed::complete`]) or stopped ([`Feed::abandon`]).
    pub fn finish(mut self) -> Outcome {
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(o)) => o,
            Some(Err(_)) => Outcome::Fallback("the unpacking thread failed".into()),
            None => Outcome::Fallback("no thread could be started".into()),
        }
    }
}

impl Drop for Unpacker {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.feed.abandon();
            let _ = t.join();
        }
    }
}

fn run(feed: &Arc<Feed>, raw: &Path, hash_members: bool) -> Outcome {
    loop {
        let (reader, name) = match feed.follow() {
            Ok(r) => r,
            Err(e) => return Outcome::Fallback(format!("the download was not read ({e})")),
        };
        let generation = reader.generation();
        let outcome = match fresh(raw) {
            Ok(()) => unpack(reader, Path::new(&name), raw, hash_members),
            Err(e) => Outcome::Fallback(e.to_string()),
        };
        // A stream unpacked to its end saw the download complete. Any other
        // outcome may be of bytes the download is about to throw away (a
        // resumed file that does not verify): wait for its end, and start
        // again on the next file.
        let stop = match outcome {
            Outcome::Unpacked(_) => feed.stop_for(generation),
            _ => feed.wait_end(generation),
        };
        match stop {
            Some(Stop::Restarted) => continue,
            Some(Stop::Abandoned) => return Outcome::Fallback(Stop::Abandoned.to_string()),
            None => return outcome,
        }
    }
}

/// An empty `raw` folder.
fn fresh(raw: &Path) -> Result<()> {
    fsops::remove_dir_all(raw)?;
    fsops::create_dir_all(raw)
}

/// Unpacks what `reader` delivers into `raw`; `path` names the archive in errors.
fn unpack(reader: FollowReader, path: &Path, raw: &Path, hash_members: bool) -> Outcome {
    let mut reader = reader;
    // Enough to tell the formats apart (a plain tar says so at 257).
    let mut head = vec![0u8; 512];
    let n = match read_full(&mut reader, &mut head) {
        Ok(n) => n,
        Err(e) => return Outcome::Fallback(format!("reading the download: {e}")),
    };
    head.truncate(n);
    let Some(format) = sniff_bytes(&head) else {
        return Outcome::Fallback("its first bytes are no zip or tar".into());
    };
    let input = io::Cursor::new(head).chain(reader);
    match format {
        Format::Zip => {
            let mut input = BufReader::with_capacity(BUF, input);
            let mut counted = hash::HashingReader::new(&mut input);
            match stream_zip(&mut counted, path, raw, hash_members) {
                // The rest (the central directory) is hashed too.
                Ok(z) => match counted.finish() {
                    Ok((size, sha256)) => Outcome::Unpacked(Unpacked {
                        format,
                        streamed: Streamed::Zip(z),
                        size,
                        sha256,
                    }),
                    Err(e) => Outcome::Fallback(format!("reading the download: {e}")),
                },
                Err(Halt::Fallback(why)) => Outcome::Fallback(why),
                Err(Halt::Refused(e)) => Outcome::Refused(e),
            }
        }
        Format::TarGz | Format::TarXz | Format::Tar => {
            match read_tar_from(input, path, format, raw, &crate::progress::NoProgress) {
                Ok(t) => Outcome::Unpacked(Unpacked {
                    format,
                    size: t.size,
                    sha256: t.sha256.clone(),
                    streamed: Streamed::Tar(t),
                }),
                // A tar has no second table of contents: what its stream
                // says, the finished file says too.
                Err(e) if e.kind() == Kind::Integrity => Outcome::Refused(e),
                Err(e) => Outcome::Fallback(e.to_string()),
            }
        }
        Format::Dir => Outcome::Fallback("not an archive".into()),
    }
}

/// Holds what a zip's local headers said while it streamed against its
/// central directory `zip` (read from the finished, verified file `path`):
/// the same members, each of the same kind, size and CRC-32.
///
/// # Errors
/// [`Kind::Integrity`] naming the first disagreement: the two tables of
/// contents of a zip differ only when it was built to show one thing to a
/// streaming reader and another to the rest.
pub fn agree(zip: &ZipSource, streamed: &ZipStreamed, path: &Path) -> Result<()> {
    let refuse = |why: String| {
        bad(path, why).hint(
            "its local file headers and its central directory disagree, which no real release does: this archive is malformed or hostile; download it again from NVIDIA and check its SHA-256",
        )
    };
    let cd = zip.entries();
    let local: HashMap<&str, &super::zipstream::LocalHeader> = streamed
        .members
        .iter()
        .map(|m| (m.path.as_str(), m))
        .collect();
    for e in cd {
        let Some(m) = local.get(e.path.as_str()) else {
            return Err(refuse(format!(
                "member '{}' is in the central directory but has no local header",
                e.path
            )));
        };
        let (dir, size) = match &e.kind {
            MemberKind::Dir => (true, 0),
            MemberKind::File { size } => (false, *size),
            MemberKind::Symlink(t) => (false, t.len() as u64),
            MemberKind::Hardlink(_) => (false, 0),
        };
        let crc = zip.crc32(&e.path).unwrap_or(0);
        if m.dir != dir || (!dir && (m.size != size || m.crc32 != crc)) {
            return Err(refuse(format!(
                "member '{}' is {} in its local header but {} in the central directory",
                e.path,
                describe(m.dir, m.size, m.crc32),
                describe(dir, size, crc)
            )));
        }
    }
    if cd.len() != streamed.members.len() {
        let listed: std::collections::HashSet<&str> = cd.iter().map(|e| e.path.as_str()).collect();
        let extra = streamed
            .members
            .iter()
            .find(|m| !listed.contains(m.path.as_str()))
            .map_or("?", |m| m.path.as_str());
        return Err(refuse(format!(
            "member '{extra}' has a local header but is not in the central directory"
        )));
    }
    Ok(())
}

fn describe(dir: bool, size: u64, crc: u32) -> String {
    if dir {
        "a folder".into()
    } else {
        format!("{size} bytes with CRC-32 {crc:08x}")
    }
}

#[cfg(test)]
mod tests {
    use super::super::zipstream::LocalHeader;
    use super::*;
    use std::io::Write;

    fn crc(b: &[u8]) -> u32 {
        let mut c = flate2::Crc::new();
        c.update(b);
        c.sum()
    }

    #[test]
    fn local_headers_must_agree_with_the_central_directory() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("x.zip");
        let mut z = zip::ZipWriter::new(crate::fsops::create_new_file(&path).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        z.add_directory("a/", opts).unwrap();
        z.start_file("a/lib.so.9", opts).unwrap();
        z.write_all(b"library").unwrap();
        z.finish().unwrap();
        let zip = ZipSource::open(&path).unwrap();
        let member = |p: &str, dir, size, crc32| LocalHeader {
            path: p.into(),
            dir,
            size,
            crc32,
        };
        let streamed = |members: Vec<LocalHeader>| ZipStreamed {
            members,
            ..Default::default()
        };
        let good = vec![
            member("a", true, 0, 0),
            member("a/lib.so.9", false, 7, crc(b"library")),
        ];
        agree(&zip, &streamed(good.clone()), &path).unwrap();

        let mut other_bytes = good.clone();
        other_bytes[1].crc32 = crc(b"LIBRARY");
        let e = agree(&zip, &streamed(other_bytes), &path).unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity);
        assert!(
            e.message().contains(&format!(
                "member 'a/lib.so.9' is 7 bytes with CRC-32 {:08x} in its local header but 7 bytes with CRC-32 {:08x} in the central directory",
                crc(b"LIBRARY"),
                crc(b"library")
            )),
            "{e}"
        );
        let mut extra = good.clone();
        extra.push(member("a/hidden.so", false, 1, 0));
        let e = agree(&zip, &streamed(extra), &path).unwrap_err();
        assert!(
            e.message().contains(
                "member 'a/hidden.so' has a local header but is not in the central directory"
            ),
            "{e}"
        );
        let e = agree(&zip, &streamed(good[..1].to_vec()), &path).unwrap_err();
        assert!(
            e.message().contains(
                "member 'a/lib.so.9' is in the central directory but has no local header"
            ),
            "{e}"
        );
    }
}
