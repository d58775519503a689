//! A zip (or wheel) read front to back, member by member from its local
//! file headers, as a download delivers it: each member is checked as the
//! central-directory path checks it ([`entry::normalize`], [`entry::Tree`],
//! the size limits) and then written under `raw/` in the partial folder
//! while hashing, exactly as a tar streams. The central directory comes
//! last, so what the local headers said is returned for the importer to
//! hold against it once the whole archive is there and verified
//! ([`super::stream::agree`]).
//!
//! Local headers: PKWARE's APPNOTE.TXT section 4.3.7; a member whose sizes
//! follow its data (general purpose bit 3, a data descriptor, 4.3.9), one
//! compressed with a method this build does not inflate, or an encrypted
//! one, cannot be unpacked from the stream and ends it
//! ([`Halt::Fallback`]); zip64 sizes (4.5.3) are read from the extra field.

use super::stream::Halt;
use super::*;

/// One member as its local file header describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalHeader {
    /// Normalized path ([`entry::normalize`]).
    pub path: String,
    /// A folder (its name ends in `/`).
    pub dir: bool,
    /// Uncompressed size in bytes, as declared (0 for a folder).
    pub size: u64,
    /// CRC-32 of the uncompressed bytes, as declared.
    pub crc32: u32,
}

/// What streaming a zip wrote under `raw/`.
#[derive(Debug, Default)]
pub struct ZipStreamed {
    /// The members, in archive order.
    pub members: Vec<LocalHeader>,
    /// Size and SHA-256 (unless not asked for) of each file member written, by path.
    pub hashes: MemberHashes,
}

/// Unpacks the members of the zip `input` delivers into `raw`, up to its
/// central directory (`input` counts the bytes read, and hashes them for
/// the caller); `path` names the archive in errors.
///
/// # Errors
/// [`Halt::Refused`] for a member every import refuses (an unsafe or
/// clashing name, too many members, a size no cuDNN file has, bytes that
/// disagree with the declared size); [`Halt::Fallback`] for anything that
/// only stops the streaming (a data descriptor, another compression, a
/// damaged or unusual header, a full disk, the download stopping).
pub fn stream_zip(
    counted: &mut hash::HashingReader<impl Read>,
    path: &Path,
    raw: &Path,
    hash_members: bool,
) -> Result<ZipStreamed, Halt> {
    let mut out = ZipStreamed::default();
    let mut tree = entry::Tree::default();
    let mut buf = vec![0u8; BUF];
    let mut declared = 0u64;
    let refuse = |raw_name: &str, why: Unsafe| Halt::Refused(unsafe_entry(path, raw_name, why));
    loop {
        let consumed = counted.count();
        let mut f = match zip::read::read_zipfile_from_stream(counted) {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                return Err(Halt::Fallback(format!(
                    "zip member {}: {e}",
                    out.members.len()
                )));
            }
        };
        let raw_name = match f.name() {
            Ok(n) => n.into_owned(),
            Err(e) => return Err(Halt::Fallback(format!("a member's name: {e}"))),
        };
        let name = entry::normalize(&raw_name).map_err(|why| refuse(&raw_name, why))?;
        let dir = f.is_dir();
        let (size, compressed) = if dir {
            (0, 0)
        } else {
            (f.size(), f.compressed_size())
        };
        let e = Member {
            path: name.clone(),
            kind: if dir {
                MemberKind::Dir
            } else {
                MemberKind::File { size }
            },
        };
        tree.add(&e)
            .map_err(|why| Halt::Refused(clashing_entry(path, &raw_name, why)))?;
        out.members.push(LocalHeader {
            path: name.clone(),
            dir,
            size,
            crc32: f.crc32(),
        });
        if dir {
            continue;
        }
        if size > MAX_ENTRY_BYTES || (size > (1 << 30) && size / compressed.max(1) > 1000) {
            return Err(Halt::Refused(
                bad(
                    path,
                    format!("entry '{raw_name}' claims {size} bytes, more than any cuDNN file"),
                )
                .hint("this archive is malformed or hostile; download it again"),
            ));
        }
        // The whole archive's size is not known yet: a ratio the central
        // directory's check may still accept only ends the streaming.
        declared = declared.saturating_add(size);
        let so_far = consumed.saturating_add(compressed);
        check_expansion(path, declared, so_far).map_err(|e| Halt::Fallback(e.to_string()))?;
        let target = raw.join(&name);
        if let Some(p) = target.parent() {
            fsops::create_dir_all(p).map_err(|e| Halt::Fallback(e.to_string()))?;
        }
        check_space(path, raw, size, 1).map_err(|e| Halt::Fallback(e.to_string()))?;
        // Never more than the member declares (one byte more tells a lie).
        let limited = (&mut f).take(size.saturating_add(1));
        let written = if size >= PIPELINE_MIN {
            write_stream_pipelined(limited, &target, hash_members, &crate::progress::NoProgress)
        } else {
            copy_member(
                limited,
                &target,
                &mut buf,
                hash_members,
                &crate::progress::NoProgress,
            )
        };
        let (n, sha) = match written {
            Ok(w) => w,
            // A checksum or inflate error, a full disk, the download stopping.
            Err(e) => return Err(Halt::Fallback(format!("member '{raw_name}': {e}"))),
        };
        if n != size {
            return Err(Halt::Refused(
                bad(
                    path,
                    format!(
                        "entry '{raw_name}' holds more or fewer bytes than the {size} it declares"
                    ),
                )
                .hint("this archive is malformed or hostile; download it again from NVIDIA"),
            ));
        }
        out.hashes.insert(name, (n, sha));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, Write};

    fn zip_of(members: &[(&str, &[u8])], opts: zip::write::SimpleFileOptions) -> Vec<u8> {
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (p, b) in members {
            if p.ends_with('/') {
                z.add_directory(*p, opts).unwrap();
            } else {
                z.start_file(*p, opts).unwrap();
                z.write_all(b).unwrap();
            }
        }
        z.finish().unwrap().into_inner()
    }

    fn crc(b: &[u8]) -> u32 {
        let mut c = flate2::Crc::new();
        c.update(b);
        c.sum()
    }

    fn deflated() -> zip::write::SimpleFileOptions {
        zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
    }

    #[test]
    fn members_stream_into_raw_with_their_sizes_crcs_and_hashes() {
        let d = tempfile::tempdir().unwrap();
        let body = vec![7u8; 100_000];
        for opts in [
            deflated(),
            zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored),
            deflated().large_file(true), // zip64 extra fields in the local headers
        ] {
            let raw = tempfile::tempdir_in(d.path()).unwrap();
            let bytes = zip_of(
                &[
                    ("a/", b""),
                    ("a/lib.so.9", &body),
                    ("a/h.h", b"#define X 1\n"),
                ],
                opts,
            );
            let mut input = hash::HashingReader::new(Cursor::new(bytes.clone()));
            let got = stream_zip(&mut input, Path::new("x.whl"), raw.path(), true)
                .unwrap_or_else(|h| panic!("{h:?}"));
            assert_eq!(
                got.members,
                vec![
                    LocalHeader {
                        path: "a".into(),
                        dir: true,
                        size: 0,
                        crc32: 0
                    },
                    LocalHeader {
                        path: "a/lib.so.9".into(),
                        dir: false,
                        size: 100_000,
                        crc32: crc(&body),
                    },
                    LocalHeader {
                        path: "a/h.h".into(),
                        dir: false,
                        size: 12,
                        crc32: crc(b"#define X 1\n"),
                    },
                ]
            );
            assert_eq!(
                got.hashes["a/lib.so.9"],
                (100_000, Some(hash::sha256_bytes(&body)))
            );
            assert_eq!(std::fs::read(raw.path().join("a/lib.so.9")).unwrap(), body);
            // A published wheel's members are written, not hashed.
            let raw = tempfile::tempdir_in(d.path()).unwrap();
            let mut input = hash::HashingReader::new(Cursor::new(bytes));
            let got = stream_zip(&mut input, Path::new("x.whl"), raw.path(), false)
                .unwrap_or_else(|h| panic!("{h:?}"));
            assert_eq!(got.hashes["a/lib.so.9"], (100_000, None));
            assert_eq!(std::fs::read(raw.path().join("a/lib.so.9")).unwrap(), body);
        }
    }

    #[test]
    fn a_data_descriptor_ends_the_streaming_and_an_unsafe_name_refuses() {
        let d = tempfile::tempdir().unwrap();
        // A writer that cannot seek back puts the sizes after the data (bit 3).
        let mut z = zip::ZipWriter::new_stream(Vec::new());
        z.start_file("a/lib.so.9", deflated()).unwrap();
        z.write_all(b"library").unwrap();
        let bytes = z.finish().unwrap().into_inner();
        match stream_zip(
            &mut hash::HashingReader::new(Cursor::new(bytes)),
            Path::new("x.zip"),
            d.path(),
            true,
        ) {
            Err(Halt::Fallback(why)) => assert!(why.contains("not available"), "{why}"),
            other => panic!("{other:?}"),
        }
        let bytes = zip_of(&[("a/../../evil.so", b"x")], deflated());
        match stream_zip(
            &mut hash::HashingReader::new(Cursor::new(bytes)),
            Path::new("x.zip"),
            d.path(),
            true,
        ) {
            Err(Halt::Refused(e)) => {
                assert_eq!(e.kind(), crate::error::Kind::Integrity);
                assert!(e.message().contains("'..'"), "{e}");
            }
            other => panic!("{other:?}"),
        }
        assert!(!d.path().join("evil.so").exists());
    }
}
