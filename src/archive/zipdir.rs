//! A zip's central directory read by hand, before the zip library reads it:
//! the entry count the archive declares (refused early when absurd, before
//! memory is spent on it) and every entry name as stored, so that two
//! entries of one name are caught — the zip library keeps only one of them.
//!
//! Format: PKWARE's APPNOTE.TXT, sections 4.3.12 (central directory file
//! header), 4.3.14–4.3.16 (zip64 end of central directory record and
//! locator, end of central directory record),
//! <https://pkware.cachefly.net/webdocs/casestudies/APPNOTE.TXT>.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

const EOCD_SIG: &[u8; 4] = b"PK\x05\x06";
const LOCATOR_SIG: &[u8; 4] = b"PK\x06\x07";
const ZIP64_EOCD_SIG: &[u8; 4] = b"PK\x06\x06";
const CDH_SIG: &[u8; 4] = b"PK\x01\x02";

/// Where the central directory is and how many entries it declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Directory {
    /// Entries declared.
    pub entries: u64,
    /// Byte offset of the central directory, as recorded.
    pub offset: u64,
    /// Its size in bytes, as recorded.
    pub size: u64,
}

fn u16_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?) as u64)
}

fn u32_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?) as u64)
}

fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// Reads the end-of-central-directory record (and its zip64 form when the
/// plain one is saturated). `None` when there is none to read; the zip
/// library then reports the damage.
pub fn directory(path: &Path) -> std::io::Result<Option<Directory>> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    // The record is 22 bytes plus a comment of at most 65535.
    let tail_len = len.min(22 + 65535);
    f.seek(SeekFrom::Start(len - tail_len))?;
    let mut tail = vec![0u8; tail_len as usize];
    f.read_exact(&mut tail)?;
    let Some(at) = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| &tail[i..i + 4] == EOCD_SIG)
    else {
        return Ok(None);
    };
    let e = &tail[at..];
    let (Some(n), Some(size), Some(offset)) = (u16_at(e, 10), u32_at(e, 12), u32_at(e, 16)) else {
        return Ok(None);
    };
    let mut d = Directory {
        entries: n,
        offset,
        size,
    };
    if (n == 0xFFFF || offset == 0xFFFF_FFFF || size == 0xFFFF_FFFF)
        && at >= 20
        && &tail[at - 20..at - 16] == LOCATOR_SIG
    {
        let Some(z64_at) = u64_at(&tail, at - 20 + 8) else {
            return Ok(None);
        };
        let mut rec = [0u8; 56];
        f.seek(SeekFrom::Start(z64_at))?;
        if f.read_exact(&mut rec).is_err() || &rec[..4] != ZIP64_EOCD_SIG {
            return Ok(None);
        }
        if let (Some(n), Some(size), Some(offset)) =
            (u64_at(&rec, 32), u64_at(&rec, 40), u64_at(&rec, 48))
        {
            d = Directory {
                entries: n,
                offset,
                size,
            };
        }
    }
    Ok(Some(d))
}

/// The entry names of the central directory `d` of `path`, as stored (raw
/// bytes, lossily decoded), in order. `None` when the directory is not
/// where the record says (data prepended to the zip): the caller then
/// relies on the count alone. Reads at most `d.size` bytes, which the
/// caller bounds through the entry count.
pub fn names(path: &Path, d: &Directory) -> std::io::Result<Option<Vec<String>>> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    if d.offset.saturating_add(d.size) > len {
        return Ok(None);
    }
    f.seek(SeekFrom::Start(d.offset))?;
    let mut cd = vec![0u8; d.size as usize];
    f.read_exact(&mut cd)?;
    let mut out = Vec::with_capacity(d.entries.min(1 << 16) as usize);
    let mut i = 0usize;
    for _ in 0..d.entries {
        if cd.get(i..i + 4) != Some(CDH_SIG) {
            return Ok(None);
        }
        let (Some(name_len), Some(extra_len), Some(comment_len)) = (
            u16_at(&cd, i + 28),
            u16_at(&cd, i + 30),
            u16_at(&cd, i + 32),
        ) else {
            return Ok(None);
        };
        let start = i + 46;
        let Some(name) = cd.get(start..start + name_len as usize) else {
            return Ok(None);
        };
        out.push(String::from_utf8_lossy(name).into_owned());
        i = start + (name_len + extra_len + comment_len) as usize;
    }
    Ok(Some(out))
}
