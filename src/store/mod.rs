//! The store (`docs/architecture.md#home-layout`): unpacked releases in a normalized layout,
//! `store/cuda-<variant>/<version>/{bin,include,lib}` plus `receipt.toml`.
//!
//! A release appears in the store only whole: imports build it in a
//! `store/.partial-*` folder and rename it into place (see [`PartialRelease`]),
//! so a crash leaves at most a partial folder that the next import sweeps.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::home::Home;
use crate::record;
use crate::version::{CudaVariant, Flavour, Platform, ReleaseId, Spec, Version};

mod receipt;

use receipt::receipt_error;
pub use receipt::{
    Distribution, FileRecord, RECEIPT_FILE, RECEIPT_SCHEMA, Receipt, Source, flavour_of_files,
};

/// One installed release: its folder and receipt.
#[derive(Clone, Debug)]
pub struct Release {
    /// The release folder `store/cuda-<variant>/<version>`.
    pub dir: PathBuf,
    /// Its receipt.
    pub receipt: Receipt,
}

impl Release {
    /// The full version.
    pub fn version(&self) -> &Version {
        &self.receipt.version
    }

    /// The CUDA variant.
    pub fn cuda(&self) -> &CudaVariant {
        &self.receipt.cuda
    }

    /// The platform.
    pub fn platform(&self) -> Platform {
        self.receipt.platform
    }

    /// The release, `8.9.7.29_cuda12` (`9.27.0.42_cuda12+jit`): as the store keys it.
    pub fn release_id(&self) -> ReleaseId {
        self.receipt.release_id()
    }

    /// Which build its files are ([`Receipt::build_flavour`]).
    pub fn flavour(&self) -> Flavour {
        self.receipt.build_flavour()
    }

    /// The id as the user reads it: [`Release::id`], which says `+jit` for
    /// a JIT build, and ` (JIT build)` after the id of one an older cudnnm
    /// put in the full build's folder (its id stays the plain one).
    pub fn label(&self) -> String {
        let id = self.release_id();
        if id.flavour != self.flavour() {
            format!("{id} ({} build)", self.flavour().as_str().to_uppercase())
        } else {
            id.to_string()
        }
    }

    /// The canonical id as text, `8.9.7.29_cuda12`, for messages and commands.
    pub fn id(&self) -> String {
        self.receipt.id()
    }

    /// `bin/`: DLLs (Windows releases).
    pub fn bin_dir(&self) -> PathBuf {
        self.dir.join("bin")
    }

    /// `include/`: headers.
    pub fn include_dir(&self) -> PathBuf {
        self.dir.join("include")
    }

    /// `lib/`: shared and static libraries, import libraries.
    pub fn lib_dir(&self) -> PathBuf {
        self.dir.join("lib")
    }

    /// The folder the loader must search: `bin` on Windows, `lib` elsewhere.
    pub fn loader_dir(&self) -> PathBuf {
        if self.platform().is_windows() {
            self.bin_dir()
        } else {
            self.lib_dir()
        }
    }

    /// The refusal for a damaged store file `path` of this release (`why`:
    /// `is missing`, `was changed …`), with the command that imports it
    /// again from the source its receipt names — never another package of
    /// the same release id — and `verify` for the rest.
    pub fn damaged(&self, path: &Path, why: &str) -> Error {
        let (arg, is_file) = self.receipt.source.reinstall_arg(&self.id());
        let cmd = crate::command::CommandLine::install_from(&arg, is_file)
            .force()
            .for_host(crate::platform::HOST_WINDOWS);
        let how = if is_file {
            format!("reinstall it from the file it came from ({arg}): `{cmd}`")
        } else {
            format!("reinstall it: `{cmd}`")
        };
        Error::new(
            Kind::Integrity,
            format!(
                "cuDNN {} in the store is damaged: '{}' {why}",
                self.id(),
                path.display()
            ),
        )
        .hint(format!(
            "{how} (`cudnnm verify` lists every changed file, and for a deployed release the commands that switch its toolkits away first); nothing was changed"
        ))
    }
}

/// Refusal to put the `wanted` build where `there`, the other build of the
/// same release, is (an older cudnnm put JIT builds in the full build's folder).
pub fn other_build_there(there: &Release, wanted: Flavour) -> Error {
    let cmd =
        crate::command::CommandLine::uninstall(there.id()).for_host(crate::platform::HOST_WINDOWS);
    Error::new(
        Kind::Conflict,
        format!(
            "'{}' holds the {} build of cuDNN {} for CUDA {}; the {} build cannot go there",
            there.dir.display(),
            there.flavour(),
            there.version(),
            there.cuda(),
            wanted
        ),
    )
    .hint(format!(
        "an older cudnnm stored the JIT build in the full build's folder; uninstall it first (`{cmd}`), then install again"
    ))
}

/// Which store a release was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreOrigin {
    /// The user's own store (`$CUDNNM_HOME/store`).
    User,
    /// The system store an administrator filled (`install --system`), read-only to users.
    System,
}

impl std::fmt::Display for StoreOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StoreOrigin::User => "user",
            StoreOrigin::System => "system",
        })
    }
}

/// The store under a home folder, and for a user home the system store
/// after it: reading sees the user's releases first, then the system's (a
/// system release with the id of one of the user's is hidden by it);
/// writing (imports, removal) only ever touches the home's own store.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
    system: Option<PathBuf>,
    shared: bool,
    /// Test-only: abort right after this step of a replacing [`Store::commit`].
    fault_after_step: Option<u64>,
    /// Test-only: before committing (step 0), create this file and wait
    /// while it exists (at most a minute) or until a signal asks to stop.
    pause_file: Option<PathBuf>,
}

/// A folder an import left in the store (`store/.partial-*`): killed, or
/// still running when the home lock is held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialLeft {
    /// The folder.
    pub dir: PathBuf,
    /// Bytes of the files in it.
    pub bytes: u64,
}

/// The name prefix a release replaced by `install --force` has beside its
/// successor while the swap is under way: `cuda-12/.replaced-9.1.0.70`.
pub const REPLACED_PREFIX: &str = ".replaced-";

impl Store {
    /// The store of `home` (`$CUDNNM_HOME/store`), reading the system store
    /// too when `home` sees one ([`Home::system_store_dir`]).
    pub fn new(home: &Home) -> Store {
        Store {
            root: home.store_dir(),
            system: home.system_store_dir(),
            shared: home.is_system(),
            fault_after_step: None,
            pause_file: None,
        }
    }

    /// The same store with the test-only pause before commit (see
    /// `CUDNNM_TEST_PAUSE_AFTER_STEP=0` and `CUDNNM_TEST_PAUSE_FILE`).
    pub fn with_pause_file(mut self, file: Option<PathBuf>) -> Store {
        self.pause_file = file;
        self
    }

    fn pause_point(&self) {
        if let Some(f) = &self.pause_file {
            crate::interrupt::test_pause(f);
        }
    }

    /// Folders interrupted imports left (`store/.partial-*`), with their
    /// sizes. While an import runs (it holds the home lock) its own folder is
    /// one of them; callers that cannot tell check [`crate::lock::home_busy`].
    /// A folder an import streaming a download fills now (its [`BUSY_FILE`]
    /// is locked by that process) is not one of them.
    pub fn partials(&self) -> Vec<PartialLeft> {
        let Ok(rd) = fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut out: Vec<PartialLeft> = rd
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".partial-"))
            .filter(|e| !busy_elsewhere(&e.path()))
            .map(|e| PartialLeft {
                bytes: tree_bytes(&e.path()),
                dir: e.path(),
            })
            .collect();
        out.sort_by(|a, b| a.dir.cmp(&b.dir));
        out
    }

    /// The same store whose replacing [`Store::commit`] aborts the process
    /// right after step `step` (1: the old release moved aside; 2: the new
    /// one in place; 3: the old one deleted), as a kill would; for the
    /// crash tests (`CUDNNM_FAULT_AFTER_STEP`, read by debug builds only).
    pub fn with_fault_after_step(mut self, step: Option<u64>) -> Store {
        self.fault_after_step = step;
        self
    }

    fn fault_point(&self, step: u64) {
        if self.fault_after_step == Some(step) {
            // Die now, as a kill -9 would: no destructor, no undo.
            std::process::abort();
        }
    }

    /// Releases an interrupted `install --force` left moved aside
    /// (`cuda-*/.replaced-<version>`), as `(folder, the release folder it belongs in)`.
    pub fn replaced(&self) -> Vec<(PathBuf, PathBuf)> {
        let mut out = Vec::new();
        let Ok(top) = fs::read_dir(&self.root) else {
            return out;
        };
        for cuda_dir in top.flatten() {
            if !cuda_dir.file_name().to_string_lossy().starts_with("cuda-") {
                continue;
            }
            let Ok(rd) = fs::read_dir(cuda_dir.path()) else {
                continue;
            };
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if let Some(v) = n.strip_prefix(REPLACED_PREFIX) {
                    out.push((e.path(), cuda_dir.path().join(v)));
                }
            }
        }
        out.sort();
        out
    }

    /// Finishes or undoes each replacement an interrupted `install --force`
    /// left: when the new release is in place the old one is deleted;
    /// otherwise the old one is moved back. Either way one release is in the
    /// store. Call under the home lock. Returns the release folders whose
    /// old release came back.
    ///
    /// # Errors
    /// When an old release cannot be moved back (it stays where it is and
    /// the next command tries again).
    pub fn recover_replaced(&self) -> Result<Vec<PathBuf>> {
        let mut restored = Vec::new();
        for (aside, dest) in self.replaced() {
            if fs::symlink_metadata(&dest).is_ok() {
                fsops::remove_dir_all(&aside)?;
            } else {
                fsops::rename(&aside, &dest)?;
                fsops::sync_dir(fsops::parent_of(&dest));
                restored.push(dest);
            }
        }
        Ok(restored)
    }

    /// The store folder this store writes.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The system store this store also reads, if any.
    pub fn system_root(&self) -> Option<&Path> {
        self.system.as_deref()
    }

    /// The store folders read, in order, with their origin.
    fn roots(&self) -> Vec<(&Path, StoreOrigin)> {
        let own = if self.shared {
            StoreOrigin::System
        } else {
            StoreOrigin::User
        };
        let mut v = vec![(self.root.as_path(), own)];
        if let Some(s) = &self.system {
            v.push((s.as_path(), StoreOrigin::System));
        }
        v
    }

    /// Which store `release` lives in.
    pub fn origin(&self, release: &Release) -> StoreOrigin {
        match &self.system {
            Some(s) if release.dir.starts_with(s) => StoreOrigin::System,
            _ if self.shared => StoreOrigin::System,
            _ => StoreOrigin::User,
        }
    }

    /// The folder the full build of `version` for `cuda` is written to in
    /// this home's own store (whether or not it exists).
    pub fn release_dir(&self, version: &Version, cuda: &CudaVariant) -> PathBuf {
        self.release_dir_of(&ReleaseId::new(version.clone(), *cuda))
    }

    /// The folder release `id` is written to in this home's own store:
    /// `cuda-<variant>/<version>` (`<version>+jit` for the JIT build).
    pub fn release_dir_of(&self, id: &ReleaseId) -> PathBuf {
        self.root.join(id.cuda.dir_name()).join(id.dir_name())
    }

    /// The folder of release `id`: in the user's store when it is there,
    /// else in the system store when it is there, else where the user's
    /// store would hold it.
    pub fn dir_of(&self, id: &ReleaseId) -> PathBuf {
        let own = self.release_dir_of(id);
        if let Some(s) = &self.system
            && !own.exists()
        {
            let sys = s.join(id.cuda.dir_name()).join(id.dir_name());
            if sys.exists() {
                return sys;
            }
        }
        own
    }

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
        found.sort_by(|a, b| {
            b.0.version
                .cmp(&a.0.version)
                .then(b.0.cuda.cmp(&a.0.cuda))
                .then(a.0.flavour.cmp(&b.0.flavour))
        });
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

    /// Checks that the regular files of `release` whose receipt paths pass
    /// `which` still hold the bytes the receipt records, cheaply
    /// ([`Store::changed_contents`]).
    ///
    /// # Errors
    /// [`Kind::Integrity`] ([`Release::damaged`]) naming the first file that
    /// changed (and how many others did).
    pub fn check_contents(&self, release: &Release, which: impl Fn(&str) -> bool) -> Result<()> {
        let changed = self.changed_contents(release, which);
        if let Some((path, why)) = changed.first() {
            let e = release.damaged(path, why);
            return Err(match changed.len() {
                1 => e,
                n => e.cause(format!(
                    "{} other file{} changed too",
                    n - 1,
                    if n == 2 { "" } else { "s" }
                )),
            });
        }
        Ok(())
    }

    /// The regular files of `release` whose receipt paths pass `which` and
    /// no longer hold the bytes the receipt records, each with why in
    /// words, in receipt order; empty when all hold them. Read cheaply
    /// ([`record::Content::look`]): by size and modification time, reading
    /// a file (SHA-256) only when its time differs from the receipt's or
    /// was never recorded. The receipt is read from disk, so what an
    /// earlier check recorded counts. The times of files found unchanged by
    /// reading them are recorded in the receipt (in this home's own store;
    /// a failure to write is not an error), so the next check reads
    /// nothing: as git refreshes its index.
    pub fn changed_contents(
        &self,
        release: &Release,
        which: impl Fn(&str) -> bool,
    ) -> Vec<(PathBuf, String)> {
        let mut receipt = match load_dir(&release.dir) {
            Ok(Some(r)) => r.receipt,
            _ => release.receipt.clone(),
        };
        let mut changed: Vec<(PathBuf, String)> = Vec::new();
        let mut fresh = false;
        for f in receipt.files.iter_mut().filter(|f| which(&f.path)) {
            let record::Entry::File(content) = &f.entry else {
                continue;
            };
            let path = release.dir.join(&f.path);
            match content.look(&path, f.mtime_ns, true) {
                record::Look::Changed(why) => changed.push((path, why)),
                record::Look::Same { mtime_ns, .. } if mtime_ns != f.mtime_ns => {
                    f.mtime_ns = mtime_ns;
                    fresh = true;
                }
                _ => {}
            }
        }
        if fresh && release.dir.starts_with(&self.root) {
            let _ = fsops::write_atomic(
                &release.dir.join(RECEIPT_FILE),
                receipt.to_toml().as_bytes(),
            );
        }
        changed
    }

    /// Starts an import: a fresh `store/.partial-*` folder, removed on drop
    /// unless committed. Also sweeps partial folders left by crashed imports.
    ///
    /// # Errors
    /// When the store folder cannot be created (read-only home, full disk).
    pub fn begin_import(&self) -> Result<PartialRelease> {
        // Ctrl-C now sets a flag the copy loops check: the import stops and
        // its partial folder is removed before the process exits.
        crate::interrupt::doing(crate::interrupt::Activity::Import);
        fsops::create_dir_all(&self.root)?;
        self.recover_replaced()?;
        self.sweep_partials();
        let dir = tempfile::Builder::new()
            .prefix(".partial-")
            .tempdir_in(&self.root)
            .with_path("create a folder in", &self.root)?;
        Ok(PartialRelease {
            dir: Some(dir),
            busy: None,
        })
    }

    /// Starts an import that fills its partial folder while a download runs,
    /// without the home lock: as [`Store::begin_import`] (call it under the
    /// home lock), and the folder's [`BUSY_FILE`] is locked for as long as
    /// the returned [`PartialRelease`] lives, so that the sweep of another
    /// import (and `doctor`) leaves the folder alone after this process has
    /// released the home lock. Commit it under the home lock again.
    ///
    /// `Ok(None)` when the file system cannot lock a file (some network file
    /// systems): the caller then imports after the download instead.
    ///
    /// # Errors
    /// As [`Store::begin_import`].
    pub fn begin_streamed_import(&self) -> Result<Option<PartialRelease>> {
        let mut partial = self.begin_import()?;
        let path = partial.path().join(BUSY_FILE);
        let file = fsops::create_new_file(&path).with_path("create", &path)?;
        if file.try_lock().is_err() {
            return Ok(None);
        }
        partial.busy = Some(file);
        Ok(Some(partial))
    }

    /// Removes `.partial-*` and `.trash-*` folders whose owner is gone. An
    /// import in progress holds the home lock, so callers sweep only under it.
    fn sweep_partials(&self) {
        let Ok(rd) = fs::read_dir(&self.root) else {
            return;
        };
        for e in rd.flatten() {
            let n = e.file_name();
            let n = n.to_string_lossy();
            if (n.starts_with(".partial-") || n.starts_with(".trash-"))
                && !busy_elsewhere(&e.path())
            {
                let _ = fsops::remove_dir_all(&e.path());
            }
        }
    }

    /// Moves a finished partial release into place as `version`/`cuda`,
    /// writing its receipt and making its files read-only. With `replace`,
    /// an existing release there is swapped out and deleted: it is first
    /// renamed to `.replaced-<version>` beside it, then the new one is
    /// renamed into place, then the old one is deleted. A kill between the
    /// two renames leaves the old release aside, and the next command under
    /// the lock ([`Store::recover_replaced`]) moves it back: the store always
    /// holds the old release or the new one.
    ///
    /// # Errors
    /// [`Kind::Conflict`] when a release exists there and `replace` is false;
    /// I/O errors (the partial folder is removed, the store unchanged).
    pub fn commit(
        &self,
        mut partial: PartialRelease,
        receipt: Receipt,
        replace: bool,
    ) -> Result<Release> {
        let dest = self.release_dir_of(&receipt.release_id());
        // Never one build over the other (an older cudnnm's JIT build in
        // the full build's folder): they are different releases.
        if let Ok(Some(there)) = load_dir(&dest)
            && there.flavour() != receipt.build_flavour()
        {
            return Err(other_build_there(&there, receipt.build_flavour()));
        }
        let dir = partial.path().to_path_buf();
        // Under the home lock now: the folder needs its own lock no longer.
        partial.release_busy()?;
        self.pause_point();
        if crate::interrupt::requested() {
            return Err(crate::interrupt::import_error());
        }
        // Each file's time with its size and hash: later checks read only
        // files whose time changed (`check_contents`, `Content::look`).
        let mut receipt = receipt;
        for f in receipt.files.iter_mut().filter(|f| !f.entry.is_link()) {
            f.mtime_ns = fs::metadata(dir.join(&f.path))
                .ok()
                .and_then(|m| record::mtime_ns(&m));
        }
        fsops::write_atomic(&dir.join(RECEIPT_FILE), receipt.to_toml().as_bytes())?;
        for f in &receipt.files {
            if !f.entry.is_link() {
                fsops::set_readonly(&dir.join(&f.path), true)?;
            }
        }
        if self.shared {
            // The system store: every user reads it, nobody but its owner changes it.
            fsops::make_tree_shared(&dir)?;
        }
        fsops::sync_dir(&dir);
        let parent = fsops::parent_of(&dest).to_path_buf();
        fsops::create_dir_all(&parent)?;
        if self.shared {
            fsops::make_shared(&self.root)?;
            fsops::make_shared(&parent)?;
            // The whole system home (store and downloads): on Windows its
            // own DACL, not the one %ProgramData% would let users write under.
            fsops::protect_system_home(fsops::parent_of(&self.root))?;
        }
        let mut aside = None;
        if dest.exists() {
            if !replace {
                return Err(Error::new(
                    Kind::Conflict,
                    format!("'{}' already exists", dest.display()),
                ));
            }
            let name = dest.file_name().unwrap_or_default().to_string_lossy();
            let a = parent.join(format!("{REPLACED_PREFIX}{name}"));
            if fs::symlink_metadata(&a).is_ok() {
                // Left by an earlier replacement whose successor is in place.
                fsops::remove_dir_all(&a)?;
            }
            fsops::rename(&dest, &a)?;
            fsops::sync_dir(&parent);
            aside = Some(a);
            self.fault_point(1);
        }
        if let Err(e) = fsops::rename(&dir, &dest) {
            if let Some(a) = &aside {
                let _ = fsops::rename(a, &dest);
            }
            return Err(e);
        }
        partial.keep();
        fsops::sync_dir(&parent);
        if let Some(a) = aside {
            self.fault_point(2);
            fsops::remove_dir_all(&a)?;
            self.fault_point(3);
        }
        Ok(Release { dir: dest, receipt })
    }

    /// Removes a release folder from the store (rename aside, then delete, so
    /// a crash never leaves a half-deleted release that still has a receipt).
    ///
    /// # Errors
    /// [`Kind::Permission`] for a release outside this home's own store
    /// (a system release seen from a user's home); I/O errors.
    pub fn remove(&self, release: &Release) -> Result<()> {
        if !release.dir.starts_with(&self.root) {
            return Err(Error::new(
                Kind::Permission,
                format!(
                    "cuDNN {} is in the system store '{}', not in yours",
                    release.id(),
                    fsops::parent_of(fsops::parent_of(&release.dir)).display()
                ),
            )
            .hint(format!(
                "an administrator removes it with `cudnnm uninstall {} --system`",
                release.id()
            )));
        }
        self.remove_dir(&release.dir)
    }

    /// Removes a store folder whose receipt cannot be read (`uninstall`
    /// of a [`BrokenRelease`]), as [`Store::remove`] does: only a
    /// `cuda-<variant>/<version>` folder directly in this home's store.
    ///
    /// # Errors
    /// [`Kind::Permission`] for a folder elsewhere (the system store seen
    /// from a user's home); I/O errors.
    pub fn remove_broken(&self, broken: &BrokenRelease) -> Result<()> {
        let in_store = broken.dir.parent().and_then(Path::parent) == Some(self.root.as_path())
            && broken.release_id().is_some();
        if !in_store {
            return Err(Error::new(
                Kind::Permission,
                format!(
                    "'{}' is not a release folder of the store '{}'",
                    broken.dir.display(),
                    self.root.display()
                ),
            )
            .hint(
                "an administrator removes a system release with `cudnnm uninstall ID --system`",
            ));
        }
        self.remove_dir(&broken.dir)
    }

    /// Renames `dir` aside in the store, then deletes it.
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        let release_dir = dir;
        let t = self.root.join(
            fsops::sibling(release_dir, "trash")
                .file_name()
                .expect("sibling has a name"),
        );
        fsops::rename(release_dir, &t)?;
        fsops::remove_dir_all(&t)?;
        let parent = fsops::parent_of(release_dir);
        fsops::remove_dir_if_empty(parent); // the cuda-<v> folder
        Ok(())
    }
}

/// Loads the release in `dir`, `None` when it has no receipt.
fn load_dir(dir: &Path) -> Result<Option<Release>> {
    let receipt = record::load(&dir.join(RECEIPT_FILE), receipt_error)?;
    Ok(receipt.map(|receipt| Release {
        dir: dir.to_path_buf(),
        receipt,
    }))
}

/// A store folder that should hold a release but has no readable receipt.
#[derive(Clone, Debug)]
pub struct BrokenRelease {
    /// The folder.
    pub dir: PathBuf,
    /// Why its receipt cannot be used.
    pub error: Error,
}

impl BrokenRelease {
    /// The release its folder's name gives (`cuda-12/9.12.0.46` →
    /// `9.12.0.46_cuda12`).
    pub fn release_id(&self) -> Option<ReleaseId> {
        receipt::id_of_dir(&self.dir)
    }
}

/// The store folder and release of a path inside a cudnnm store release
/// (`…/store/cuda-12/9.27.0.42/lib/libcudnn.so.9` → (`…/store`,
/// 9.27.0.42_cuda12)), read from the text by the store's layout (any
/// home's store, `/` or `\` separators, so a Windows path reads the same on
/// Linux); `None` elsewhere.
pub fn release_in_store_path(path: &str) -> Option<(String, crate::version::ReleaseId)> {
    let parts: Vec<&str> = path.split(['/', '\\']).collect();
    parts.windows(3).enumerate().find_map(|(i, w)| {
        let cuda = w[1].strip_prefix("cuda-")?.parse().ok()?;
        let (version, flavour) = ReleaseId::parse_dir_name(w[2])?;
        (w[0] == "store").then(|| {
            let sep = if path.contains('/') { "/" } else { "\\" };
            (
                parts[..=i].join(sep),
                ReleaseId::new(version, cuda).with_flavour(flavour),
            )
        })
    })
}

/// The file in a partial folder that a streaming import keeps locked while
/// it fills the folder without holding the home lock
/// ([`Store::begin_streamed_import`]); removed before the commit.
pub const BUSY_FILE: &str = ".busy";

/// Whether the partial folder `dir` is being filled by another process now:
/// its [`BUSY_FILE`] exists and another open file holds its lock.
fn busy_elsewhere(dir: &Path) -> bool {
    fs::OpenOptions::new()
        .read(true)
        .open(dir.join(BUSY_FILE))
        .is_ok_and(|f| matches!(f.try_lock(), Err(fs::TryLockError::WouldBlock)))
}

/// A release being built in `store/.partial-*`; deleted on drop unless committed.
#[derive(Debug)]
pub struct PartialRelease {
    dir: Option<tempfile::TempDir>,
    /// The locked [`BUSY_FILE`] of a streaming import.
    busy: Option<fs::File>,
}

impl PartialRelease {
    /// The partial folder.
    pub fn path(&self) -> &Path {
        self.dir.as_ref().expect("partial folder present").path()
    }

    /// Unlocks and removes the [`BUSY_FILE`], if this folder has one.
    fn release_busy(&mut self) -> Result<()> {
        if self.busy.take().is_some() {
            fsops::remove_file(&self.path().join(BUSY_FILE))?;
        }
        Ok(())
    }

    fn keep(mut self) {
        if let Some(d) = self.dir.take() {
            let _ = d.keep();
        }
    }
}

impl Drop for PartialRelease {
    fn drop(&mut self) {
        // Closed first: Windows removes no file another handle holds open.
        self.busy = None;
        if let Some(d) = self.dir.take() {
            // Files may be read-only already; clear them so the folder can go.
            let p = d.path().to_path_buf();
            let _ = d.keep();
            let _ = fsops::remove_dir_all(&p);
        }
    }
}

/// `1.2 GiB`, `830 KiB`, `12 B`.
pub fn human_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Bytes of the regular files under `dir` (links not followed).
fn tree_bytes(dir: &Path) -> u64 {
    let Ok(rd) = fs::read_dir(dir) else { return 0 };
    rd.flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => tree_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// Current time as RFC 3339 UTC with seconds (`2026-11-29T21:12:07Z`).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_inside_a_store_release_names_it() {
        let r = |p: &str| release_in_store_path(p).map(|(s, id)| (s, id.to_string()));
        assert_eq!(
            r("/home/u/.local/share/cudnnm/store/cuda-12/9.12.0.46/lib/libcudnn.so.9"),
            Some((
                "/home/u/.local/share/cudnnm/store".into(),
                "9.12.0.46_cuda12".into()
            ))
        );
        assert_eq!(
            r(r"C:\ProgramData\cudnnm\store\cuda-11.2\8.1.0.77\bin\cudnn64_8.dll"),
            Some((
                r"C:\ProgramData\cudnnm\store".into(),
                "8.1.0.77_cuda11.2".into()
            ))
        );
        assert_eq!(
            r("/h/store/cuda-13/9.27.0.42+jit/lib/libcudnn.so.9"),
            Some(("/h/store".into(), "9.27.0.42_cuda13+jit".into()))
        );
        assert_eq!(r("/usr/local/cuda-12.4/lib64/libcudnn.so.9"), None);
        assert_eq!(r("/srv/store/cuda-12/notaversion/x"), None);
    }

    /// A release folder with a receipt only (files are not read here).
    #[allow(clippy::disallowed_methods)] // a test fixture
    fn fake(
        store: &Store,
        dir: &Path,
        version: &str,
        flavour: Option<Flavour>,
        files: &[&str],
        dist: Option<&str>,
    ) {
        std::fs::create_dir_all(dir).unwrap();
        let receipt = Receipt {
            schema: RECEIPT_SCHEMA,
            version: version.parse().unwrap(),
            cuda: "12".parse().unwrap(),
            platform: Platform::LinuxX86_64,
            flavour,
            header_version: version.parse::<Version>().unwrap().triple(),
            installed_at: "2026-12-03T00:00:00Z".into(),
            source: Source {
                kind: "wheel".parse().unwrap(),
                name: "x.whl".into(),
                sha256: None,
                size: 0,
                url: None,
                dist: dist.map(|n| Distribution {
                    name: n.into(),
                    version: version.into(),
                    tags: vec![],
                }),
            },
            files: files
                .iter()
                .map(|f| FileRecord::link(format!("lib/{f}"), "x"))
                .collect(),
        };
        std::fs::write(dir.join(RECEIPT_FILE), receipt.to_toml()).unwrap();
        let _ = store;
    }

    /// Both builds of one release side by side (`9.27.0.42` and
    /// `9.27.0.42+jit`); a JIT build an older cudnnm put in the plain folder
    /// keeps its id there, is read as JIT, and blocks the full build.
    #[test]
    fn both_flavours_side_by_side_and_an_older_jit_where_it_is() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let store = Store::new(&home);
        let full = ReleaseId::new("9.27.0.42".parse().unwrap(), "12".parse().unwrap());
        let jit = full.clone().with_flavour(Flavour::Jit);
        let libs_full = [
            "libcudnn.so.9",
            "libcudnn_engines_precompiled.so.9",
            "libcudnn_engines_runtime_compiled.so.9",
        ];
        let libs_jit = [
            "libcudnn.so.9",
            "libcudnn_graph.so.9",
            "libcudnn_engines_runtime_compiled.so.9",
        ];
        fake(
            &store,
            &store.release_dir_of(&full),
            "9.27.0.42",
            None,
            &libs_full,
            Some("nvidia-cudnn-cu12"),
        );
        fake(
            &store,
            &store.release_dir_of(&jit),
            "9.27.0.42",
            Some(Flavour::Jit),
            &libs_jit,
            Some("nvidia-cudnn-jit-cu12"),
        );
        assert!(
            store
                .release_dir_of(&jit)
                .ends_with("cuda-12/9.27.0.42+jit")
        );
        let ids: Vec<String> = store.releases().unwrap().iter().map(Release::id).collect();
        assert_eq!(ids, ["9.27.0.42_cuda12", "9.27.0.42_cuda12+jit"]);
        let pick = |s: &str| {
            store
                .newest_matching(&s.parse().unwrap())
                .unwrap()
                .map(|r| r.id())
        };
        assert_eq!(
            pick("9.27").as_deref(),
            Some("9.27.0.42_cuda12"),
            "the full build first"
        );
        assert_eq!(pick("9.27+jit").as_deref(), Some("9.27.0.42_cuda12+jit"));
        assert_eq!(pick("9.27+full").as_deref(), Some("9.27.0.42_cuda12"));
        assert_eq!(store.get_id(&jit).unwrap().unwrap().flavour(), Flavour::Jit);

        // An older cudnnm's JIT build in the plain folder: its id stays the
        // plain one, its build is read from the wheel's metadata (or its files).
        let old = ReleaseId::new("9.12.0.46".parse().unwrap(), "12".parse().unwrap());
        fake(
            &store,
            &store.release_dir_of(&old),
            "9.12.0.46",
            None,
            &libs_jit,
            None,
        );
        let r = store.get_id(&old).unwrap().unwrap();
        assert_eq!(
            (r.id(), r.flavour()),
            ("9.12.0.46_cuda12".to_string(), Flavour::Jit)
        );
        assert_eq!(pick("9.12+jit").as_deref(), Some("9.12.0.46_cuda12"));
        assert_eq!(pick("9.12+full"), None);
        assert_eq!(
            pick("9.12").as_deref(),
            Some("9.12.0.46_cuda12"),
            "a pin written before flavours keeps working"
        );
        let found = store
            .get_build(&old.version, &old.cuda, Flavour::Jit)
            .unwrap()
            .unwrap();
        assert_eq!(found.dir, store.release_dir_of(&old));
        assert!(
            store
                .get_build(&old.version, &old.cuda, Flavour::Full)
                .unwrap()
                .is_none(),
            "the folder holds the other build"
        );
        let e = other_build_there(&r, Flavour::Full);
        assert_eq!(e.kind(), Kind::Conflict);
        assert!(
            e.hint_text()
                .unwrap()
                .contains("cudnnm uninstall 9.12.0.46_cuda12"),
            "{e:?}"
        );
    }

    fn source(kind: &str, name: &str, url: Option<&str>) -> Source {
        Source {
            kind: kind.parse().unwrap(),
            name: name.into(),
            sha256: None,
            size: 0,
            url: url.map(str::to_string),
            dist: None,
        }
    }

    #[test]
    fn a_streaming_imports_partial_folder_outlives_sweeps_until_it_is_dropped() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let store = Store::new(&home);
        let streamed = store
            .begin_streamed_import()
            .unwrap()
            .expect("a local disk locks files");
        let dir = streamed.path().to_path_buf();
        assert!(dir.join(BUSY_FILE).is_file());
        // Another import's sweep, and the report of folders left, pass it by.
        let other = store.begin_import().unwrap();
        assert!(dir.is_dir(), "swept while its import runs");
        let left: Vec<PathBuf> = store.partials().into_iter().map(|p| p.dir).collect();
        assert_eq!(left, vec![other.path().to_path_buf()]);
        drop(other);
        // Dropped (the download failed): the folder goes.
        drop(streamed);
        assert!(!dir.exists());
        assert!(store.partials().is_empty());
    }

    #[test]
    fn reinstall_from_the_receipts_own_source() {
        let id = "9.27.0.42_cuda12";
        let jit = source(
            "wheel",
            "nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux2014_x86_64.whl",
            None,
        );
        assert_eq!(
            jit.reinstall_arg(id),
            ("pip:nvidia-cudnn-jit-cu12==9.27.0.42".to_string(), false)
        );
        let pip = source(
            "wheel",
            "x.whl",
            Some("pip:nvidia-cudnn-jit-cu12==9.27.0.42"),
        );
        assert_eq!(
            pip.reinstall_arg(id).0,
            "pip:nvidia-cudnn-jit-cu12==9.27.0.42"
        );
        let dl = source(
            "redist",
            "cudnn-linux-x86_64-9.27.0.42_cuda12-archive.tar.xz",
            Some("https://developer.download.nvidia.com/compute/cudnn/x.tar.xz"),
        );
        assert_eq!(dl.reinstall_arg(id), (id.to_string(), false));
        let local = source("redist", "cudnn-9.27-custom.tar.xz", None);
        assert_eq!(
            local.reinstall_arg(id),
            ("cudnn-9.27-custom.tar.xz".to_string(), true)
        );
        // What a lock records: one version, the wheel's own package.
        let v: crate::version::Version = "9.27.0.42".parse().unwrap();
        assert_eq!(
            jit.exact_pip_requirement(&v).as_deref(),
            Some("nvidia-cudnn-jit-cu12==9.27.0.42")
        );
        assert_eq!(
            pip.exact_pip_requirement(&v).as_deref(),
            Some("nvidia-cudnn-jit-cu12==9.27.0.42")
        );
        let ranged = source(
            "wheel",
            "nvidia_cudnn_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64.whl",
            Some("pip:nvidia-cudnn-cu12>=9.27"),
        );
        assert_eq!(
            ranged.exact_pip_requirement(&v).as_deref(),
            Some("nvidia-cudnn-cu12==9.27.0.42")
        );
        assert_eq!(dl.exact_pip_requirement(&v), None);
        assert_eq!(local.exact_pip_requirement(&v), None);
        // A renamed file gives no requirement, nor one of another version.
        let copy = source(
            "wheel",
            "Copy of nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64 (1).whl",
            None,
        );
        assert_eq!(copy.exact_pip_requirement(&v), None);
        assert!(copy.reinstall_arg(id).1);
        let other = source(
            "wheel",
            "nvidia_cudnn_jit_cu12-9.28.0.1-py3-none-manylinux_2_27_x86_64.whl",
            None,
        );
        assert_eq!(other.exact_pip_requirement(&v), None);
        // The wheel's METADATA, recorded at install, decides whatever the name.
        let dist = Source {
            dist: Some(crate::store::Distribution {
                name: "nvidia_cudnn_JIT.cu12".into(),
                version: "9.27.0.42".into(),
                tags: vec![
                    "py3-none-manylinux_2_27_x86_64".into(),
                    "py3-none-manylinux2014_x86_64".into(),
                ],
            }),
            ..copy.clone()
        };
        assert_eq!(
            dist.exact_pip_requirement(&v).as_deref(),
            Some("nvidia-cudnn-jit-cu12==9.27.0.42")
        );
        assert_eq!(
            dist.wheel_file_name(&v).as_deref(),
            Some(
                "nvidia_cudnn_jit_cu12-9.27.0.42-py3-none-manylinux_2_27_x86_64.manylinux2014_x86_64.whl"
            )
        );
        assert_eq!(
            dist.reinstall_arg(id),
            ("pip:nvidia-cudnn-jit-cu12==9.27.0.42".to_string(), false)
        );
        assert_eq!(copy.wheel_file_name(&v), None);
    }
}
