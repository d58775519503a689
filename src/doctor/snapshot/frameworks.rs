//! Python package records: frameworks and cuDNN wheels installed.

use serde::{Deserialize, Serialize};

use crate::version::Version;

/// An installed Python distribution that matters: a framework or a cuDNN wheel.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Framework {
    /// Normalised distribution name: `tensorflow`, `torch`, `nvidia-cudnn-cu12`, …
    pub name: String,
    /// Its version as written (`2.4.1+cu121`).
    pub version: String,
    /// The `site-packages` folder.
    pub location: String,
    /// The exact `nvidia-cudnn-*` version it requires (`Requires-Dist: nvidia-cudnn-cu12==9.1.0.70`).
    pub cudnn_requirement: Option<String>,
}

impl Framework {
    /// The version without a local part (`2.4.1` of `2.4.1+cu121`), if numeric.
    pub fn numeric_version(&self) -> Option<Version> {
        let v = self.version.split(['+', '-']).next()?;
        let parts: Vec<&str> = v.split('.').take(4).collect();
        let nums: Vec<u32> = parts
            .iter()
            .map_while(|p| {
                let d: String = p.chars().take_while(|c| c.is_ascii_digit()).collect();
                d.parse().ok()
            })
            .collect();
        (!nums.is_empty()).then(|| Version::from_parts(&nums))
    }

    /// True for a cuDNN wheel (`nvidia-cudnn-cu12`, `nvidia-cudnn-jit-cu12`).
    pub fn is_cudnn_wheel(&self) -> bool {
        self.name.starts_with("nvidia-cudnn")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framework_versions() {
        let f = Framework {
            version: "2.4.1+cu121".into(),
            ..Default::default()
        };
        assert_eq!(f.numeric_version().unwrap().to_string(), "2.4.1");
        let f = Framework {
            version: "2.16.0rc0".into(),
            ..Default::default()
        };
        assert_eq!(f.numeric_version().unwrap().to_string(), "2.16.0");
    }
}
