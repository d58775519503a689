//! The shape of an archive or folder a release came from: what `archive`
//! recognises and what a receipt records (`source.kind`). Vocabulary at the
//! bottom, so that `store` can type its receipts without importing `archive`
//! (which imports `store` to commit an import).

/// The recognised archive shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Old Windows zip (`cuda\bin`, `cuda\include`, `cuda\lib\x64`).
    WindowsZip,
    /// Old Linux tgz (`cuda/include`, `cuda/lib64`).
    LinuxTgz,
    /// NVIDIA redist archive (`<name>-archive/…`).
    Redist,
    /// pip wheel (`nvidia/cudnn*/…`).
    Wheel,
    /// NVIDIA's cuDNN 9 Windows installer folder (`bin/<CUDA>/…`).
    InstallerFolder,
    /// Headers and libraries in one folder (cuDNN v2 tgz).
    Flat,
    /// Any other folder with `include` and `lib`/`bin` below one root.
    Folder,
}

impl Shape {
    /// The name recorded in receipts (`windows-zip`, `linux-tgz`, `redist`, …).
    pub fn as_str(&self) -> &'static str {
        match self {
            Shape::WindowsZip => "windows-zip",
            Shape::LinuxTgz => "linux-tgz",
            Shape::Redist => "redist",
            Shape::Wheel => "wheel",
            Shape::InstallerFolder => "installer-folder",
            Shape::Flat => "flat",
            Shape::Folder => "folder",
        }
    }

    /// Every shape, in the order [`Shape::as_str`] lists them.
    pub const ALL: [Shape; 7] = [
        Shape::WindowsZip,
        Shape::LinuxTgz,
        Shape::Redist,
        Shape::Wheel,
        Shape::InstallerFolder,
        Shape::Flat,
        Shape::Folder,
    ];

    /// Whether the release came from a folder rather than an archive file.
    pub fn is_folder(&self) -> bool {
        matches!(self, Shape::Folder | Shape::InstallerFolder)
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Receipts record the shape by its [`Shape::as_str`] name.
impl serde::Serialize for Shape {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::str::FromStr for Shape {
    type Err = String;

    /// Reads a [`Shape::as_str`] name.
    fn from_str(s: &str) -> std::result::Result<Shape, String> {
        Shape::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("'{s}' is not an archive shape"))
    }
}

impl<'de> serde::Deserialize<'de> for Shape {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}
