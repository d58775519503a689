//! NVIDIA driver versions, kept exactly as the driver reports them.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Kind, Result};

/// An NVIDIA driver version as `nvidia-smi` and NVIDIA's tables write it:
/// `535.104.05`, `551.61`, `580`. The text is kept as written (the last
/// field of a Linux driver version is two digits with a leading zero, and
/// `535.104.5` is not a version NVIDIA publishes); comparison is numeric,
/// field by field (`535.104.05 < 535.104.12 < 535.183`).
#[derive(Clone)]
pub struct DriverVersion {
    text: String,
    parts: Vec<u32>,
}

impl DriverVersion {
    /// The numeric fields, first field first.
    pub fn parts(&self) -> &[u32] {
        &self.parts
    }

    /// The version as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl FromStr for DriverVersion {
    type Err = Error;

    /// Parses `535.104.05`, `551.61`, `580` (1 to 4 numeric fields).
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        let bad = || {
            Error::new(Kind::Usage, format!("'{s}' is not a driver version"))
                .hint("write a driver version such as 535.104.05 or 551.61")
        };
        let mut parts = Vec::new();
        for p in t.split('.') {
            if p.is_empty() || p.len() > 9 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            parts.push(p.parse::<u32>().map_err(|_| bad())?);
        }
        if parts.is_empty() || parts.len() > 4 {
            return Err(bad());
        }
        Ok(DriverVersion {
            text: t.to_string(),
            parts,
        })
    }
}

impl PartialEq for DriverVersion {
    fn eq(&self, other: &Self) -> bool {
        self.parts == other.parts
    }
}

impl Eq for DriverVersion {}

impl Ord for DriverVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.parts.cmp(&other.parts)
    }
}

impl PartialOrd for DriverVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for DriverVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DriverVersion({})", self.text)
    }
}

impl Serialize for DriverVersion {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for DriverVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> DriverVersion {
        s.parse().unwrap()
    }

    #[test]
    fn keeps_the_text_and_compares_numerically() {
        assert_eq!(d("535.104.05").to_string(), "535.104.05");
        assert_eq!(
            serde_json::to_string(&d("535.104.05")).unwrap(),
            "\"535.104.05\""
        );
        assert!(d("535.104.05") < d("535.104.12"));
        assert!(d("535.104.12") < d("535.183"));
        assert!(d("99.1") < d("535"));
        assert_eq!(d("535.104.05"), d("535.104.5"));
        for bad in ["", "535.", "5a", "1.2.3.4.5"] {
            assert!(bad.parse::<DriverVersion>().is_err(), "{bad}");
        }
    }
}
