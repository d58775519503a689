//! A wheel's `RECORD` (`<name>.dist-info/RECORD`): one line per member,
//! `path,sha256=<urlsafe base64 digest, no padding>,size`. Every member but
//! `RECORD` itself (and its signatures) must be listed with its hash, and an
//! installer checks each member against it (the binary distribution format,
//! <https://packaging.python.org/en/latest/specifications/binary-distribution-format/>,
//! "The .dist-info directory" and "Signed wheel files").

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::hash::Sha256Hex;

/// The listed members: path → what `RECORD` says of it, or `None` when it
/// lists the path twice with different hashes or sizes.
#[derive(Debug, Default)]
pub struct Record {
    entries: HashMap<String, Option<Listed>>,
}

/// One line of `RECORD`: its hash field as written (`sha256=<digest>`,
/// empty for none) and its size.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Listed {
    hash: String,
    size: Option<u64>,
}

/// Why a member does not check out against `RECORD`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// Not listed, or listed without a hash (or one that is not 32 bytes
    /// of urlsafe base64).
    Missing,
    /// Listed with a hash of another algorithm (`sha512`): the wheel format
    /// allows any of Python's `hashlib.algorithms_guaranteed` but MD5 and
    /// SHA-1; NVIDIA's wheels, and what pip and `build` make, list SHA-256.
    Algorithm(String),
    /// Listed with another size (the size listed).
    Size(u64),
    /// Listed with other bytes.
    Differs,
    /// Listed twice, with different hashes or sizes.
    Twice,
}

impl Record {
    /// Parses `RECORD` text. Lines it cannot read list nothing (their
    /// members are then missing, and refused); a path listed twice alike
    /// counts once, twice differently not at all ([`Mismatch::Twice`]).
    pub fn parse(text: &str) -> Record {
        let mut entries: HashMap<String, Option<Listed>> = HashMap::new();
        for line in text.lines() {
            let mut parts = line.rsplitn(3, ',');
            let (Some(size), Some(hash), Some(path)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let path = path
                .strip_prefix('"')
                .and_then(|p| p.strip_suffix('"'))
                .map(|p| p.replace("\"\"", "\""))
                .unwrap_or_else(|| path.to_string());
            let listed = Listed {
                hash: hash.trim().to_string(),
                size: size.trim().parse().ok(),
            };
            entries
                .entry(path)
                .and_modify(|e| {
                    if e.as_ref() != Some(&listed) {
                        *e = None;
                    }
                })
                .or_insert(Some(listed));
        }
        Record { entries }
    }

    /// Every path listed, in no particular order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Whether `path` is listed at all.
    pub fn lists(&self, path: &str) -> bool {
        self.entries.contains_key(path)
    }

    /// Checks member `path` of `size` bytes and SHA-256 `sha`.
    ///
    /// # Errors
    /// The [`Mismatch`].
    pub fn check(&self, path: &str, size: u64, sha: &Sha256Hex) -> Result<(), Mismatch> {
        if self.listed_sha256(path, size)? != *sha {
            return Err(Mismatch::Differs);
        }
        Ok(())
    }

    /// The SHA-256 `RECORD` lists for member `path`, which holds `size`
    /// bytes: what a wheel whose whole-file SHA-256 its publisher vouches for
    /// says about each member, without hashing it.
    ///
    /// # Errors
    /// [`Mismatch::Missing`] when the member is not listed with a SHA-256 (or
    /// with one that is not 32 bytes of urlsafe base64),
    /// [`Mismatch::Differs`] when it is listed with another size.
    pub fn listed_sha256(&self, path: &str, size: u64) -> Result<Sha256Hex, Mismatch> {
        let listed = match self.entries.get(path) {
            None => return Err(Mismatch::Missing),
            Some(None) => return Err(Mismatch::Twice),
            Some(Some(l)) => l,
        };
        let Some((algorithm, digest)) = listed.hash.split_once('=') else {
            return Err(Mismatch::Missing);
        };
        if algorithm != "sha256" {
            return Err(Mismatch::Algorithm(algorithm.to_string()));
        }
        if let Some(n) = listed.size.filter(|n| *n != size) {
            return Err(Mismatch::Size(n));
        }
        let raw = URL_SAFE_NO_PAD
            .decode(digest.trim_end_matches('='))
            .map_err(|_| Mismatch::Missing)?;
        let raw: [u8; 32] = raw.try_into().map_err(|_| Mismatch::Missing)?;
        Ok(Sha256Hex::from_bytes(&raw))
    }
}

/// Whether `path` needs no entry of its own: `RECORD` and its signatures.
pub fn exempt(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.contains(".dist-info/") && matches!(name, "RECORD" | "RECORD.jws" | "RECORD.p7s")
}

/// A SHA-256 as `RECORD` writes it: the 32 bytes in urlsafe base64 without padding.
pub fn urlsafe_b64(sha: &Sha256Hex) -> String {
    URL_SAFE_NO_PAD.encode(sha.to_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_records_and_checks_members() {
        // sha256("abc"), as pip writes it.
        let sha = crate::hash::sha256_bytes(b"abc");
        assert_eq!(
            urlsafe_b64(&sha),
            "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"
        );
        let r = Record::parse(
            "nvidia/cudnn/lib/a.so.9,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n\
             \"nvidia/x,y\",sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n\
             nvidia_cudnn-9.dist-info/RECORD,,\n",
        );
        assert_eq!(r.check("nvidia/cudnn/lib/a.so.9", 3, &sha), Ok(()));
        assert_eq!(r.check("nvidia/x,y", 3, &sha), Ok(()));
        assert_eq!(
            r.check("nvidia/cudnn/lib/a.so.9", 4, &sha),
            Err(Mismatch::Size(3))
        );
        let other = crate::hash::sha256_bytes(b"abd");
        assert_eq!(
            r.check("nvidia/cudnn/lib/a.so.9", 3, &other),
            Err(Mismatch::Differs)
        );
        assert_eq!(
            r.check("nvidia/cudnn/lib/b.so.9", 3, &sha),
            Err(Mismatch::Missing)
        );
        assert_eq!(
            r.check("nvidia_cudnn-9.dist-info/RECORD", 0, &sha),
            Err(Mismatch::Missing)
        );
        // What RECORD lists, decoded: the digest a published wheel's receipt takes.
        assert_eq!(
            r.listed_sha256("nvidia/cudnn/lib/a.so.9", 3),
            Ok(sha.clone())
        );
        assert_eq!(
            r.listed_sha256("nvidia/cudnn/lib/a.so.9", 4),
            Err(Mismatch::Size(3))
        );
        let odd = Record::parse(
            "a,sha256=not*base64,3\nb,sha256=YWJj,3\nc,sha512=ungW,3\nd,,3\n\
             e,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0=,3\n\
             f,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n\
             f,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n\
             g,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n\
             g,sha256=AAAAv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n",
        );
        for p in ["a", "b", "d"] {
            assert_eq!(odd.listed_sha256(p, 3), Err(Mismatch::Missing), "{p}");
        }
        assert_eq!(
            odd.listed_sha256("c", 3),
            Err(Mismatch::Algorithm("sha512".into()))
        );
        // Padding is read; a line repeated alike counts once; two that
        // differ vouch for nothing, whichever comes first.
        assert_eq!(odd.listed_sha256("e", 3), Ok(sha.clone()));
        assert_eq!(odd.listed_sha256("f", 3), Ok(sha.clone()));
        assert_eq!(odd.listed_sha256("g", 3), Err(Mismatch::Twice));
        assert_eq!(odd.check("g", 3, &sha), Err(Mismatch::Twice));
        assert_eq!(sha.to_bytes().to_vec(), {
            use sha2::Digest;
            sha2::Sha256::digest(b"abc").to_vec()
        });
        assert!(exempt("nvidia_cudnn-9.dist-info/RECORD"));
        assert!(!exempt("nvidia/cudnn/RECORD"));
    }
}
