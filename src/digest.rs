//! A SHA-256 digest as a value: how receipts, journals, locks, catalogs and
//! download sidecars write one (64 lowercase hex characters), read back
//! strictly. Computing one from bytes or files is the `hash` module's.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Kind, Result};

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

    /// The digest of 32 raw bytes (what a hasher returns).
    pub fn from_bytes(bytes: &[u8; 32]) -> Sha256Hex {
        let mut s = String::with_capacity(64);
        for b in bytes {
            use fmt::Write as _;
            let _ = write!(s, "{b:02x}");
        }
        Sha256Hex(s)
    }

    /// The 32 raw bytes.
    pub fn to_bytes(&self) -> [u8; 32] {
        let mut raw = [0u8; 32];
        for (i, b) in raw.iter_mut().enumerate() {
            // Two lowercase hex digits, as `parse` and `from_bytes` made them.
            *b = u8::from_str_radix(&self.0[2 * i..2 * i + 2], 16).unwrap_or(0);
        }
        raw
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_is_read_strictly_and_written_lowercase() {
        assert!(Sha256Hex::parse("xyz").is_err());
        assert!(Sha256Hex::parse(&"a".repeat(63)).is_err());
        assert_eq!(
            Sha256Hex::parse(&"AB".repeat(32)).unwrap().as_str(),
            "ab".repeat(32)
        );
        assert_eq!(Sha256Hex::from_bytes(&[0xab; 32]).as_str(), "ab".repeat(32));
        assert_eq!(Sha256Hex::from_bytes(&[0xab; 32]).short(), "abababababab");
    }
}
