//! SHA-256 for archives, store files, backups and deployments.
//!
//! `sha2` picks the SHA-NI instructions at run time where the CPU has them,
//! which keeps hashing well ahead of inflating (the import benchmark hashes
//! every byte twice: the archive, and every file it holds).

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

use crate::error::{Error, IoResultExt, Kind, Result};

/// A SHA-256 digest as 64 lowercase hex characters.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sha256Hex(String);

impl Sha256Hex {
    /// Parses 64 hex characters (any case; stored lowercase).
    ///
    /// # Errors
    /// [`Kind::Usage`] when `s` is not 64 hex characters.
    pub fn parse(s: &str) -> Result<Sha256Hex> {
        let t = s.trim();
        if t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(Sha256Hex(t.to_ascii_lowercase()))
        } else {
            Err(
                Error::new(Kind::Usage, format!("'{s}' is not a SHA-256 digest"))
                    .hint("give the 64 hex characters that `sha256sum FILE` prints"),
            )
        }
    }

    /// The hex text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 characters, for messages.
    pub fn short(&self) -> &str {
        &self.0[..12]
    }
}

impl fmt::Display for Sha256Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Sha256Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.0)
    }
}

impl Serialize for Sha256Hex {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Sha256Hex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Sha256Hex::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// An incremental SHA-256.
#[derive(Clone, Default)]
pub struct Hasher(Sha256);

impl Hasher {
    /// A fresh hasher.
    pub fn new() -> Hasher {
        Hasher(Sha256::new())
    }

    /// Feeds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of everything fed.
    pub fn finish(self) -> Sha256Hex {
        let out = self.0.finalize();
        let mut s = String::with_capacity(64);
        for b in out.iter() {
            use fmt::Write as _;
            let _ = write!(s, "{b:02x}");
        }
        Sha256Hex(s)
    }
}

/// SHA-256 of a byte slice.
pub fn sha256_bytes(bytes: &[u8]) -> Sha256Hex {
    let mut h = Hasher::new();
    h.update(bytes);
    h.finish()
}

/// Size and SHA-256 of a file, read in 1 MiB blocks.
///
/// # Errors
/// When the file cannot be opened or read (names the file).
pub fn sha256_file(path: &Path) -> Result<(u64, Sha256Hex)> {
    let f = File::open(path).with_path("open", path)?;
    sha256_reader(f).with_path("read", path)
}

/// Size and SHA-256 of everything a reader yields.
pub fn sha256_reader(mut r: impl Read) -> io::Result<(u64, Sha256Hex)> {
    let mut h = Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = r.read(&mut buf)?;
        if k == 0 {
            return Ok((n, h.finish()));
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
}

/// A reader that hashes and counts what passes through it.
pub struct HashingReader<R> {
    inner: R,
    hasher: Hasher,
    count: u64,
}

impl<R: Read> HashingReader<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hasher: Hasher::new(),
            count: 0,
        }
    }

    /// Bytes read so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Reads the rest of the input (so the digest covers the whole stream),
    /// then returns the byte count and digest.
    pub fn finish(mut self) -> io::Result<(u64, Sha256Hex)> {
        io::copy(&mut self, &mut io::sink())?;
        Ok((self.count, self.hasher.finish()))
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
}

/// A writer that hashes and counts what passes through it.
pub struct HashingWriter<W> {
    inner: W,
    hasher: Hasher,
    count: u64,
}

impl<W: Write> HashingWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: Hasher::new(),
            count: 0,
        }
    }

    /// The inner writer, byte count and digest.
    pub fn finish(self) -> (W, u64, Sha256Hex) {
        (self.inner, self.count, self.hasher.finish())
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        assert_eq!(
            sha256_bytes(b"").as_str(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let mut r = HashingReader::new(&b"hello world"[..]);
        let mut first = [0u8; 5];
        r.read_exact(&mut first).unwrap();
        let (n, h) = r.finish().unwrap();
        assert_eq!(n, 11);
        assert_eq!(
            h.as_str(),
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
        );
        assert!(Sha256Hex::parse("xyz").is_err());
        assert_eq!(
            Sha256Hex::parse(&"AB".repeat(32)).unwrap().as_str(),
            "ab".repeat(32)
        );
    }
}
