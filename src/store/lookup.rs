//! Finding installed releases: every one (and the folders that look like
//! releases but cannot be read), by id, and the newest a spec matches,
//! read from folder names so that only the chosen receipt is opened.

use std::fs;
use std::path::{Path, PathBuf};

use super::release::load_dir;
use super::{BrokenRelease, RECEIPT_FILE, Release, Store};
use crate::error::{Error, Kind, Result};
use crate::version::{CudaVariant, Flavour, ReleaseId, Spec, Version};

impl Store {
    /// Every installed release, sorted by version then CUDA variant.
    /// Folders without a readable receipt are skipped (partial imports, foreign files).
    ///
    /// # Errors
    /// When the store folder exists but cannot be listed.
    pub fn releases(&self) -> Result<Vec<Release>> {
        Ok(self.scan()?.0)
    }

    /// Every installed release, plus the folders that look like releases
    /// (`cuda-<variant>/<version>`) but whose receipt is missing or
    /// unreadable — `list` warns about them and `verify` fails on them,
    /// so a damaged release never just disappears.
    ///
    /// # Errors
    /// When the store folder exists but cannot be listed.
    pub fn scan(&self) -> Result<(Vec<Release>, Vec<BrokenRelease>)> {
        let mut out: Vec<Release> = Vec::new();
        let mut broken = Vec::new();
        for (i, (root, _)) in self.roots().into_iter().enumerate() {
            let (found, bad) = match Self::scan_root(root) {
                // An unreadable system store hides its releases, never the user's.
                Err(_) if i > 0 => continue,
                r => r?,
            };
            for r in found {
                if !out.iter().any(|o| o.release_id() == r.release_id()) {
                    out.push(r);
                }
            }
            broken.extend(bad);
        }
        out.sort_by(|a, b| {
            (a.version(), a.cuda(), a.release_id().flavour).cmp(&(
                b.version(),
                b.cuda(),
                b.release_id().flavour,
            ))
        });
        broken.sort_by(|a, b| a.dir.cmp(&b.dir));
        Ok((out, broken))
    }

    /// [`Store::scan`] of one store folder.
    fn scan_root(root: &Path) -> Result<(Vec<Release>, Vec<BrokenRelease>)> {
        let mut out = Vec::new();
        let mut broken = Vec::new();
        let top = match fs::read_dir(root) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((out, broken)),
            Err(e) => return Err(Error::io("list", root, e)),
        };
        for cuda_dir in top.flatten() {
            let name = cuda_dir.file_name();
            let Some(name) = name.to_str() else { continue };
            if !name.starts_with("cuda-") {
                continue;
            }
            let Ok(versions) = fs::read_dir(cuda_dir.path()) else {
                continue;
            };
            for rel in versions.flatten() {
                if rel.file_name().to_string_lossy().starts_with('.') {
                    // A release moved aside by an interrupted replacement
                    // (see `recover_replaced`), not one of the store's.
                    continue;
                }
                let looks_like_release = rel
                    .file_name()
                    .to_str()
                    .is_some_and(|n| ReleaseId::parse_dir_name(n).is_some());
                match load_dir(&rel.path()) {
                    Ok(Some(r)) => out.push(r),
                    Ok(None) if looks_like_release => broken.push(BrokenRelease {
                        dir: rel.path(),
                        error: Error::new(
                            Kind::Integrity,
                            format!("'{}' has no {RECEIPT_FILE}", rel.path().display()),
                        ),
                    }),
                    Err(e) if looks_like_release => broken.push(BrokenRelease {
                        dir: rel.path(),
                        error: e,
                    }),
                    _ => {}
                }
            }
        }
        Ok((out, broken))
    }

    /// Loads the release in `dir`, `None` when it has no receipt.
    ///
    /// # Errors
    /// When the receipt exists but is unreadable or malformed.
    pub fn load(&self, dir: &Path) -> Result<Option<Release>> {
        load_dir(dir)
    }

    /// The installed release of exactly `version` for `cuda` in the full
    /// build's folder, if any: the user's, else the system's.
    pub fn get(&self, version: &Version, cuda: &CudaVariant) -> Result<Option<Release>> {
        self.get_in(&ReleaseId::new(version.clone(), *cuda))
    }

    /// The release in the folder of `id`: the user's, else the system's.
    ///
    /// # Errors
    /// As [`Store::load`].
    pub fn get_in_folder(&self, id: &ReleaseId) -> Result<Option<Release>> {
        self.get_in(id)
    }

    fn get_in(&self, id: &ReleaseId) -> Result<Option<Release>> {
        if let Some(r) = self.load(&self.release_dir_of(id))? {
            return Ok(Some(r));
        }
        match &self.system {
            Some(s) => Ok(load_dir(&s.join(id.cuda.dir_name()).join(id.dir_name()))
                .ok()
                .flatten()),
            None => Ok(None),
        }
    }

    /// The installed release that holds build `flavour` of `version` for
    /// `cuda`, wherever it is: its own folder, or — for a JIT build an older
    /// cudnnm imported — the full build's folder whose receipt says JIT.
    ///
    /// # Errors
    /// As [`Store::load`].
    pub fn get_build(
        &self,
        version: &Version,
        cuda: &CudaVariant,
        flavour: Flavour,
    ) -> Result<Option<Release>> {
        let id = ReleaseId::new(version.clone(), *cuda).with_flavour(flavour);
        if let Some(r) = self.get_in(&id)?.filter(|r| r.flavour() == flavour) {
            return Ok(Some(r));
        }
        if flavour == Flavour::Jit
            && let Ok(Some(r)) = self.get(version, cuda)
            && r.flavour() == Flavour::Jit
        {
            return Ok(Some(r));
        }
        Ok(None)
    }

    /// The installed release `id`, if any.
    ///
    /// # Errors
    /// As [`Store::load`].
    pub fn get_id(&self, id: &ReleaseId) -> Result<Option<Release>> {
        self.load(&self.dir_of(id))
    }

    /// Installed releases matching `spec`, newest first.
    pub fn matching(&self, spec: &Spec) -> Result<Vec<Release>> {
        let mut v: Vec<Release> = self
            .releases()?
            .into_iter()
            .filter(|r| spec.matches(r.version(), r.cuda()) && spec.admits_flavour(r.flavour()))
            .collect();
        v.reverse();
        Ok(v)
    }

    /// The newest installed release matching `spec`, found from folder names
    /// (`cuda-<variant>/<version>`) so that only the chosen release's receipt
    /// is read: the fast path for `env`, `exec` and the shell hook. A folder
    /// whose receipt is missing, unreadable or disagrees with its name is
    /// skipped in favour of the next match.
    ///
    /// # Errors
    /// When the store folder exists but cannot be listed.
    pub fn newest_matching(&self, spec: &Spec) -> Result<Option<Release>> {
        self.newest_matching_where(spec, |_| true)
    }

    /// The newest installed release matching `spec` for which `keep` holds,
    /// reading receipts newest first and stopping at the first kept one (as
    /// [`Store::newest_matching`]): `use` picks the newest match that fits a
    /// toolkit without reading every receipt.
    ///
    /// # Errors
    /// When the store folder exists but cannot be listed.
    pub fn newest_matching_where(
        &self,
        spec: &Spec,
        keep: impl Fn(&Release) -> bool,
    ) -> Result<Option<Release>> {
        let mut found: Vec<(ReleaseId, PathBuf)> = Vec::new();
        for (i, (root, _)) in self.roots().into_iter().enumerate() {
            match Self::candidates(root, spec, &mut found) {
                Err(_) if i > 0 => {}
                r => r?,
            }
        }
        // A stable sort: for equal ids the user's folder (found first) stays
        // first; at one version the full build before the JIT build.
        found.sort_by(|a, b| newest_first(&a.0, &b.0));
        for (id, dir) in found {
            if let Ok(Some(r)) = self.load(&dir)
                && r.release_id() == id
                && spec.admits_flavour(r.flavour())
                && keep(&r)
            {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    /// The release folders of `root` whose names match `spec`, appended to `found`.
    fn candidates(root: &Path, spec: &Spec, found: &mut Vec<(ReleaseId, PathBuf)>) -> Result<()> {
        let top = match fs::read_dir(root) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io("list", root, e)),
        };
        for cuda_dir in top.flatten() {
            let name = cuda_dir.file_name();
            let Some(cuda) = name
                .to_str()
                .and_then(|n| n.strip_prefix("cuda-"))
                .and_then(|c| c.parse::<CudaVariant>().ok())
            else {
                continue;
            };
            if spec.cuda.is_some_and(|want| {
                want.major() != cuda.major()
                    || (want.minor().is_some() && want.minor() != cuda.minor())
            }) {
                continue;
            }
            let Ok(versions) = fs::read_dir(cuda_dir.path()) else {
                continue;
            };
            for rel in versions.flatten() {
                let name = rel.file_name();
                let Some((version, flavour)) = name.to_str().and_then(ReleaseId::parse_dir_name)
                else {
                    continue;
                };
                // A `+jit` folder holds a JIT build; a plain one may too (an
                // older cudnnm's): its receipt decides.
                if spec.matches(&version, &cuda)
                    && (flavour == Flavour::Full || spec.admits_flavour(flavour))
                {
                    found.push((
                        ReleaseId::new(version, cuda).with_flavour(flavour),
                        rel.path(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The one installed release `spec` names: the newest match, or an
    /// error naming the spec and, in its hint, the nearest installed
    /// releases. How to install it is the caller's to add: what the catalog
    /// has for this machine (the rule in `catalog::offer`), which the store
    /// does not know.
    ///
    /// # Errors
    /// [`Kind::NotFound`] when nothing matches.
    pub fn resolve(&self, spec: &Spec) -> Result<Release> {
        self.newest_matching(spec)?.ok_or_else(|| {
            let near = self.nearest(spec);
            let e = Error::new(Kind::NotFound, format!("cuDNN {spec} is not installed"));
            if near.is_empty() {
                e.hint("`cudnnm list` shows the installed releases")
            } else {
                e.hint(format!(
                    "the nearest installed release{}: {}",
                    if near.len() == 1 { " is" } else { "s are" },
                    near.join(", ")
                ))
            }
        })
    }

    /// Up to three installed release ids nearest `spec`, nearest first: a
    /// version `spec` spells the start of (`8.1.0.7` → `8.1.0.77`), then
    /// the most leading numbers in common (at least the major); a typo
    /// thus meets the release meant. Empty when none shares the major.
    pub fn nearest(&self, spec: &Spec) -> Vec<String> {
        let Some(anchor) = spec.anchor() else {
            return Vec::new();
        };
        let releases = self.releases().unwrap_or_default();
        let mut scored: Vec<(_, &Release)> = releases
            .iter()
            .filter_map(|r| Some((anchor.nearness(r.version())?, r)))
            .collect();
        // Nearest first; among equals the newest.
        scored.sort_by(|a, b| (b.0, b.1.version()).cmp(&(a.0, a.1.version())));
        scored.into_iter().take(3).map(|(_, r)| r.id()).collect()
    }
}

/// The order [`Store::newest_matching`] prefers releases in: the newest
/// version, then the newest CUDA, then the full build before the JIT one.
pub fn newest_first(a: &ReleaseId, b: &ReleaseId) -> std::cmp::Ordering {
    b.version
        .cmp(&a.version)
        .then(b.cuda.cmp(&a.cuda))
        .then(a.flavour.cmp(&b.flavour))
}
