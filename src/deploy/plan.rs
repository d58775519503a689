//! Planning a change as pure data (DESIGN.md §5 step 2): the toolkit's
//! current cuDNN files (every `cudnn*`/`libcudnn*` in its cuDNN folders,
//! whoever put them there) versus the files of the target — a store release
//! for `use`, a backup for `rollback`. The [`Plan`] is what the journal
//! stores before the first change, so it holds everything needed to finish
//! or undo the change without the process that started it.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::backup::{BackupFile, BackupRecord};
use super::{Deployment, FileState, Mode, PlacedFile, mtime_ns};
use crate::command::CommandLine;
use crate::error::{Error, Kind, Result};
use crate::hash::{self, Sha256Hex};
use crate::home::Home;
use crate::platform;
use crate::store::{Release, Store};
use crate::toolkit::{Layout, Toolkit};
use crate::version::{Spec, Version};

/// The label of a toolkit (or backup) without cuDNN files.
pub const NO_CUDNN: &str = "no cuDNN";

/// Journal schema written by this build.
pub const PLAN_SCHEMA: u32 = 1;

/// One cuDNN file found in a toolkit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Absolute path in the toolkit.
    pub path: PathBuf,
    /// Path relative to the toolkit root, `/`-separated (`lib64/libcudnn.so.9`).
    pub rel: String,
    /// What it is.
    pub state: FileState,
    /// For an unchanged copy cudnnm placed: the store file with the same
    /// bytes (the backup records it instead of keeping a second copy).
    pub store_copy: Option<PathBuf>,
    /// Its modification time, when `store_copy` is set.
    pub mtime_ns: Option<i64>,
}

/// Moving one current file out of the toolkit into the backup.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    /// The file in the toolkit.
    pub from: PathBuf,
    /// Where it goes in the backup (`backups/<id>/files/<rel>`).
    pub to: PathBuf,
    /// Toolkit-relative path.
    pub rel: String,
    /// What it is (size and hash, or link target).
    pub state: FileState,
    /// Set for an unchanged copy cudnnm placed whose bytes the store holds:
    /// it is renamed aside in its own folder (`to`), then deleted once the
    /// records are written, before anything is placed; undo renames it back,
    /// or copies it from this store file once it is gone; rollback copies it
    /// from there.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub store_copy: Option<PathBuf>,
    /// The file's modification time, restored with it (copies only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mtime_ns: Option<i64>,
}

/// How a file is put into the toolkit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlaceKind {
    /// A symbolic link whose target is `source` as written.
    Link,
    /// A hard link to the file `source`.
    Hardlink,
    /// A copy of the file `source` (through a temporary name, then renamed).
    Copy,
}

/// Putting one file of the target into the toolkit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The path in the toolkit.
    pub dest: PathBuf,
    /// Toolkit-relative path.
    pub rel: String,
    /// How.
    pub kind: PlaceKind,
    /// The link target (for `link`) or the file to link or copy.
    pub source: PathBuf,
    /// What the placed file must be: content size and hash, and for links the target.
    pub state: FileState,
    /// Where it came from, for the deployment record (`lib/libcudnn.so.9`).
    pub from: String,
    /// For copies: the modification time given to the copy (its source's,
    /// as `cp -p` does), so the record can hold it before the copy exists.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mtime_ns: Option<i64>,
    /// For copies: re-hash the bytes while copying. Set for files restored
    /// from a backup (the user's own bytes); copies of store files are
    /// checked by size, as links are checked by target — the store was
    /// hashed at import and `cudnnm verify` re-hashes it.
    #[serde(default)]
    pub check_hash: bool,
}

impl Place {
    /// The temporary name a copy is written to before it is renamed into place.
    pub fn tmp_path(&self) -> PathBuf {
        let name = self
            .dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        crate::fsops::parent_of(&self.dest).join(format!(".cudnnm-tmp-{name}"))
    }
}

/// The deployment to record once the change is verified.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Next {
    /// Release id (`9.27.0.42_cuda12`).
    pub release: String,
    /// Mode of the placed files.
    pub mode: Mode,
    /// Where the release came from (its receipt's source), kept in the
    /// deployment record so that a reinstall hint can name it after the
    /// release left the store.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source: Option<crate::store::Source>,
}

/// A whole change, as stored in the journal before anything changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// [`PLAN_SCHEMA`].
    pub schema: u32,
    /// Transaction id, equal to the id of the backup it creates.
    pub id: u64,
    /// What the user asked for, for messages (`use 9.27.0.42_cuda12`, `rollback to backup 3`).
    pub action: String,
    /// The toolkit root.
    pub toolkit: PathBuf,
    /// Its layout.
    pub layout: Layout,
    /// The backup folder this change fills (`backups/<id>`).
    pub backup_dir: PathBuf,
    /// Toolkit folders to create first (missing cuDNN folders), parents first.
    pub mkdirs: Vec<PathBuf>,
    /// Current files to move into the backup.
    pub moves: Vec<Move>,
    /// Target files to place.
    pub places: Vec<Place>,
    /// `backup.toml` to write when the change commits.
    pub backup: BackupRecord,
    /// The deployment to record (none when a rollback restores files that
    /// cudnnm did not deploy).
    pub next: Option<Next>,
    /// The deployment `deployments.toml` recorded for the toolkit before the
    /// change, put back by an undo. It differs from `backup.deployment` only
    /// when that record was stale ([`record_describes`]): the backup then
    /// holds files not from cudnnm, but an undone change leaves the record
    /// as it was. Absent in journals written before this field: undo then
    /// uses `backup.deployment`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub previous: Option<Deployment>,
    /// What the toolkit held, for messages (`9.12.0.46`, `8.1.0 (not from cudnnm)`, `no cuDNN`).
    pub from_label: String,
    /// What it will hold, for messages.
    pub to_label: String,
}

impl Plan {
    /// Every toolkit folder this plan changes entries in, without duplicates.
    pub fn toolkit_dirs(&self) -> Vec<PathBuf> {
        let mut set = BTreeSet::new();
        for m in &self.moves {
            set.insert(crate::fsops::parent_of(&m.from).to_path_buf());
        }
        for p in &self.places {
            set.insert(crate::fsops::parent_of(&p.dest).to_path_buf());
        }
        set.into_iter().collect()
    }

    /// Every backup folder this plan moves files into.
    pub fn backup_dirs(&self) -> Vec<PathBuf> {
        let mut set = BTreeSet::new();
        set.insert(self.backup_dir.clone());
        for m in &self.moves {
            let mut d = crate::fsops::parent_of(&m.to).to_path_buf();
            while d.starts_with(&self.backup_dir) {
                set.insert(d.clone());
                if !d.pop() {
                    break;
                }
            }
        }
        set.into_iter().collect()
    }

    /// The deployment record for the placed files.
    pub fn deployment(&self, deployed_at: &str) -> Option<Deployment> {
        let next = self.next.as_ref()?;
        let files = self
            .places
            .iter()
            .map(|p| PlacedFile {
                path: p.dest.clone(),
                from: p.from.clone(),
                sha256: p.state.sha256.clone(),
                link: p.state.link.clone(),
                size: p.state.size,
                mtime_ns: match p.kind {
                    PlaceKind::Copy => p.mtime_ns,
                    _ => None,
                },
            })
            .collect();
        Some(Deployment {
            toolkit: self.toolkit.clone(),
            release: next.release.clone(),
            mode: next.mode,
            deployed_at: deployed_at.to_string(),
            backup: Some(self.id.to_string()),
            files,
            source: next.source.clone(),
        })
    }

    /// Number of journal steps a full run logs: the plan, each folder made,
    /// each move, "moved", "recorded", each placement, "verified".
    pub fn step_count(&self) -> u64 {
        (1 + self.mkdirs.len() + self.moves.len() + 2 + self.places.len() + 1) as u64
    }

    /// True when some file is placed by copying (the slow, size-bound mode).
    pub fn copies(&self) -> bool {
        self.places.iter().any(|p| p.kind == PlaceKind::Copy)
    }
}

/// The toolkit-relative paths of the files this plan moves into its backup
/// whose names look like cuDNN's but that no cuDNN release ships
/// ([`crate::names::is_release_name`]): leftovers or someone's own
/// files, which the summary names so nobody wonders where they went.
pub fn moved_not_from_a_release(plan: &Plan) -> Vec<String> {
    plan.moves
        .iter()
        .filter(|m| {
            let name = m.rel.rsplit('/').next().unwrap_or(&m.rel);
            !crate::names::is_release_name(name)
        })
        .map(|m| m.rel.clone())
        .collect()
}

/// The `from` of a file a rollback restored from backup `id` that is not
/// the release's own copy: `backup 3: include/cudnn.h`.
pub fn backup_label(id: u64, rel: &str) -> String {
    format!("backup {id}: {rel}")
}

/// The backup id and toolkit-relative path of a [`backup_label`], `None`
/// for a release path (`include/cudnn.h`).
pub fn parse_backup_label(from: &str) -> Option<(u64, &str)> {
    let (id, rel) = from.strip_prefix("backup ")?.split_once(": ")?;
    Some((id.parse().ok()?, rel))
}

/// `lib64/libcudnn.so.9` for `root/lib64/libcudnn.so.9`.
pub fn rel_path(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// `root` joined with a `/`-separated relative path, refusing `..` and absolute parts.
pub fn join_rel(root: &Path, rel: &str) -> Result<PathBuf> {
    let mut p = root.to_path_buf();
    for part in rel.split('/') {
        if part.is_empty() || part == "." || part == ".." || part.contains(['\\', ':']) {
            return Err(Error::new(
                Kind::Integrity,
                format!("'{rel}' is not a safe relative path"),
            ));
        }
        p.push(part);
    }
    Ok(p)
}

/// The store folder of release `id` (`9.12.0.46_cuda12`), whether or not it exists.
pub fn release_dir_of(store: &Store, id: &str) -> Option<PathBuf> {
    let spec: Spec = id.parse().ok()?;
    Some(store.release_dir(&spec.version, spec.cuda.as_ref()?))
}

/// Every cuDNN file in the toolkit's cuDNN folders, sorted by path. Links
/// are recorded by target (never followed); regular files by size and
/// SHA-256. Files that `known` (the deployment cudnnm recorded) says it
/// placed are not re-read when provably unchanged: a hard link that is still
/// the same file as its store file, or a copy with the recorded size and
/// modification time.
///
/// # Errors
/// When a folder cannot be listed or a file cannot be read.
pub fn scan_toolkit(
    toolkit: &Toolkit,
    known: Option<&Deployment>,
    store: &Store,
) -> Result<Vec<Found>> {
    let mut out = Vec::new();
    for path in list_cudnn_entries(toolkit)? {
        let meta = std::fs::symlink_metadata(&path).map_err(|e| Error::io("inspect", &path, e))?;
        let state = if meta.file_type().is_symlink() {
            let t = std::fs::read_link(&path).map_err(|e| Error::io("read the link", &path, e))?;
            FileState::link(t.to_string_lossy().into_owned())
        } else if meta.is_file() {
            match known_hash(&path, &meta, known, store) {
                Some((sha, store_src)) => {
                    let t = store_src.as_ref().and_then(|_| mtime_ns(&meta));
                    out.push(Found {
                        rel: rel_path(&toolkit.root, &path),
                        path,
                        state: FileState::file(meta.len(), sha),
                        store_copy: store_src,
                        mtime_ns: t,
                    });
                    continue;
                }
                None => {
                    let (size, sha) = hash::sha256_file(&path)?;
                    FileState::file(size, sha)
                }
            }
        } else {
            // A folder named cudnn* is not a cuDNN file; leave it alone.
            continue;
        };
        out.push(Found {
            rel: rel_path(&toolkit.root, &path),
            path,
            state,
            store_copy: None,
            mtime_ns: None,
        });
    }
    Ok(out)
}

/// Paths of the cuDNN files and links in the toolkit's cuDNN folders
/// (folders named `cudnn*` excluded), sorted; unreadable folders are skipped.
pub fn scan_toolkit_names(toolkit: &Toolkit) -> Vec<PathBuf> {
    let mut v = list_cudnn_entries(toolkit).unwrap_or_default();
    v.retain(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir()));
    v
}

fn list_cudnn_entries(toolkit: &Toolkit) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut seen_dirs = BTreeSet::new();
    for dir in toolkit.cudnn_dirs() {
        let real = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        if !seen_dirs.insert(real) {
            continue;
        }
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io("list", &dir, e)),
        };
        for entry in rd {
            let entry = entry.map_err(|e| Error::io("list", &dir, e))?;
            let name = entry.file_name();
            if name
                .to_str()
                .is_some_and(|n| toolkit.layout.is_cudnn_name(n))
            {
                out.push(dir.join(&name));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The hash of a file cudnnm placed and that is provably unchanged, and for
/// a copy the store file holding the same bytes (when it is still there).
fn known_hash(
    path: &Path,
    meta: &std::fs::Metadata,
    known: Option<&Deployment>,
    store: &Store,
) -> Option<(Sha256Hex, Option<PathBuf>)> {
    let d = known?;
    let pf = d.files.iter().find(|f| f.path == path)?;
    let sha = pf.sha256.clone()?;
    if pf.link.is_some() || meta.len() != pf.size {
        return None;
    }
    let src = release_dir_of(store, &d.release).and_then(|r| join_rel(&r, &pf.from).ok());
    match d.mode {
        Mode::Hardlink => platform::same_file(path, src.as_ref()?).then_some((sha, None)),
        Mode::Copy => {
            if pf.mtime_ns.is_none() || mtime_ns(meta) != pf.mtime_ns {
                return None;
            }
            let in_store = src.filter(|s| std::fs::metadata(s).is_ok_and(|m| m.len() == pf.size));
            Some((sha, in_store))
        }
        Mode::Symlink => None,
    }
}

/// A file of a release and where it goes in a toolkit.
#[derive(Clone, Debug)]
pub struct Target {
    /// Destination in the toolkit.
    pub dest: PathBuf,
    /// The receipt path (`lib/libcudnn.so.9`).
    pub from: String,
    /// Content (size, hash) or link target, from the receipt.
    pub state: FileState,
}

/// Where each deployable file of `release` goes in `toolkit`: headers
/// (`include/…`) into the include folder, libraries (`lib/…`, any subfolder)
/// into the library folder, DLLs (`bin/…`) into `bin` (Windows layout).
/// Only cuDNN-named files are deployed; licenses and anything else stay in
/// the store (a file cudnnm places must be one the next scan finds again).
///
/// # Errors
/// [`Kind::Conflict`] when the release's platform does not match the
/// toolkit's layout; [`Kind::Integrity`] when two files would land on one
/// name or the receipt lists nothing deployable.
pub fn release_targets(release: &Release, toolkit: &Toolkit) -> Result<Vec<Target>> {
    let windows_release = release.platform().is_windows();
    if windows_release != (toolkit.layout == Layout::Windows) {
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "cuDNN {} is a {} release; the toolkit '{}' has the {} layout",
                release.id(),
                release.platform(),
                toolkit.root.display(),
                toolkit.layout.as_str()
            ),
        )
        .hint("install the release built for the toolkit's platform, or pick another toolkit with --cuda-root"));
    }
    let mut out: Vec<Target> = Vec::new();
    let mut names = BTreeSet::new();
    for f in &release.receipt.files {
        let parts: Vec<&str> = f.path.split('/').collect();
        let (Some(top), Some(name)) = (parts.first(), parts.last()) else {
            continue;
        };
        if parts.len() < 2 || !toolkit.layout.is_cudnn_name(name) {
            continue;
        }
        let dir = match *top {
            "include" => toolkit.include_dir(),
            "lib" => toolkit.lib_dir(),
            "bin" => match toolkit.bin_dir() {
                Some(b) => b,
                None => continue,
            },
            _ => continue,
        };
        let dest = dir.join(name);
        let key = match toolkit.layout {
            Layout::Windows => dest.to_string_lossy().to_ascii_lowercase(),
            Layout::Linux => dest.to_string_lossy().into_owned(),
        };
        if !names.insert(key) {
            return Err(Error::new(
                Kind::Integrity,
                format!(
                    "release {} holds two files named '{name}' for '{}'",
                    release.id(),
                    dir.display()
                ),
            )
            .hint("reinstall the release with `cudnnm install --force …`"));
        }
        let state = match &f.link {
            Some(t) => FileState::link(t.clone()),
            None => FileState {
                size: f.size,
                sha256: f.sha256.clone(),
                link: None,
            },
        };
        if state.link.is_none() && state.sha256.is_none() {
            return Err(Error::new(
                Kind::Integrity,
                format!(
                    "the receipt of {} lists '{}' without a SHA-256",
                    release.id(),
                    f.path
                ),
            )
            .hint("reinstall the release with `cudnnm install --force …`"));
        }
        out.push(Target {
            dest,
            from: f.path.clone(),
            state,
        });
    }
    if out.is_empty() {
        return Err(Error::new(
            Kind::Integrity,
            format!("release {} has no cuDNN files to deploy", release.id()),
        )
        .hint("reinstall the release with `cudnnm install --force …`"));
    }
    Ok(out)
}

/// The modification time of the file a copy is made from (kept by the copy).
fn source_mtime(p: &Path) -> Option<i64> {
    std::fs::metadata(p).ok().and_then(|m| mtime_ns(&m))
}

/// Missing folders among `dirs` and their missing parents below `root`, parents first.
fn missing_dirs(root: &Path, dirs: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut set = BTreeSet::new();
    for d in dirs {
        let mut cur = d;
        while cur.starts_with(root) && cur != root && std::fs::symlink_metadata(&cur).is_err() {
            set.insert(cur.clone());
            if !cur.pop() {
                break;
            }
        }
    }
    let mut v: Vec<PathBuf> = set.into_iter().collect();
    v.sort_by_key(|p| p.components().count());
    v
}

/// The move of every found file into `backups/<id>/files/<rel>`; an
/// unchanged copy whose bytes the store holds is only renamed aside in its
/// own folder (`.cudnnm-old-<id>-<name>`: same volume, so no bytes move, and
/// a loaded DLL can be renamed on Windows) and trimmed once the change is done.
fn moves_for(found: &[Found], backup_dir: &Path, id: u64) -> Result<Vec<Move>> {
    found
        .iter()
        .map(|f| {
            let to = match &f.store_copy {
                Some(_) => {
                    let name = f.path.file_name().map(|n| n.to_string_lossy().into_owned());
                    crate::fsops::parent_of(&f.path)
                        .join(format!(".cudnnm-old-{id}-{}", name.unwrap_or_default()))
                }
                None => join_rel(&backup_dir.join("files"), &f.rel)?,
            };
            Ok(Move {
                from: f.path.clone(),
                to,
                rel: f.rel.clone(),
                state: f.state.clone(),
                store_copy: f.store_copy.clone(),
                mtime_ns: f.mtime_ns,
            })
        })
        .collect()
}

/// Whether the deployment record `dep` still describes the `found` files:
/// the version header in the toolkit (when there is one) declares the
/// recorded release's version, and at least one found file is a file (or an
/// absolute link into a store) the record lists with that content. A record
/// is stale when another cudnnm home or the user replaced the files; the
/// files are then described by what they are, not by the record.
pub fn record_describes(found: &[Found], dep: &Deployment, toolkit: &Toolkit) -> bool {
    if found.is_empty() {
        return false;
    }
    let recorded: Option<Version> = dep.version_label().parse().ok();
    if let (Some(on_disk), Some(rec)) = (toolkit.header_cudnn_version(), recorded)
        && on_disk.triple() != rec.triple()
    {
        return false;
    }
    found.iter().any(|f| {
        dep.files.iter().any(|p| {
            p.path == f.path
                && match (&p.link, &f.state.link) {
                    // A chain link (`libcudnn.so -> libcudnn.so.9`) is the same
                    // in every release; only a link into a store is telling.
                    (Some(a), Some(b)) => a == b && Path::new(a).is_absolute(),
                    (None, None) => p.sha256.is_some() && p.sha256 == f.state.sha256,
                    _ => false,
                }
        })
    })
}

/// What the toolkit holds now, for messages and `backup.toml`. `current`
/// must be a record that describes the files ([`record_describes`]).
fn held_label(found: &[Found], current: Option<&Deployment>, toolkit: &Toolkit) -> String {
    if found.is_empty() {
        return NO_CUDNN.into();
    }
    if let Some(d) = current {
        return d.version_label().to_string();
    }
    match toolkit.header_cudnn_version() {
        Some(v) => format!("{v} (not from cudnnm)"),
        None => match found.len() {
            1 => "unknown (1 file not from cudnnm)".into(),
            n => format!("unknown ({n} files not from cudnnm)"),
        },
    }
}

/// How to install again the release `dep` names, when the store holds it:
/// the command from the source its receipt names, in backticks, and for a
/// local file or folder which one it was.
fn reinstall_of(store: &Store, dep: Option<&Deployment>) -> Option<String> {
    let dir = release_dir_of(store, &dep?.release)?;
    let release = store.load(&dir).ok()??;
    let (arg, is_file) = release.receipt.source.reinstall_arg(&release.id());
    let cmd = CommandLine::install_from(&arg, is_file).for_host(cfg!(windows));
    let source = &release.receipt.source;
    Some(if is_file {
        let what = if source.kind == "folder" || source.kind == "installer-folder" {
            "folder"
        } else {
            "file"
        };
        format!("`{cmd}` (the {what} it was installed from)")
    } else {
        format!("`{cmd}`")
    })
}

fn backup_record(
    id: u64,
    toolkit: &Toolkit,
    reason: String,
    held: String,
    current: Option<&Deployment>,
    found: &[Found],
    reinstall: Option<String>,
) -> BackupRecord {
    BackupRecord {
        reinstall: found
            .iter()
            .any(|f| {
                f.store_copy.is_some()
                    || f.state
                        .link
                        .as_deref()
                        .is_some_and(|l| Path::new(l).is_absolute())
            })
            .then_some(reinstall)
            .flatten(),
        id,
        toolkit: toolkit.root.clone(),
        layout: toolkit.layout,
        cuda: toolkit.cuda.to_string(),
        created_at: crate::store::now_rfc3339(),
        reason,
        held,
        deployment: current.cloned(),
        files: found
            .iter()
            .map(|f| BackupFile {
                path: f.rel.clone(),
                size: f.state.size,
                sha256: f.state.sha256.clone(),
                link: f.state.link.clone(),
                store: f.store_copy.clone(),
                mtime_ns: f.mtime_ns,
            })
            .collect(),
    }
}

/// Refuses a toolkit whose cuDNN folder is a link to nothing (`lib64 ->
/// targets/x86_64-linux/lib` with the target gone): files cannot be listed
/// or placed there, and cudnnm does not guess where they belong.
///
/// # Errors
/// [`Kind::NotFound`] naming the link and where it points.
pub fn check_toolkit_dirs(toolkit: &Toolkit) -> Result<()> {
    for dir in toolkit.cudnn_dirs() {
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if meta.file_type().is_symlink() && std::fs::metadata(&dir).is_err() {
            let target = std::fs::read_link(&dir)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            return Err(Error::new(
                Kind::NotFound,
                format!(
                    "'{}' is a link to '{target}', which does not exist",
                    dir.display()
                ),
            )
            .hint(format!(
                "restore the folder it points to (reinstall the CUDA toolkit), or replace the link with a folder (`mkdir -p` it), then run the command again; nothing was changed in '{}'",
                toolkit.root.display()
            )));
        }
    }
    Ok(())
}

/// Refuses a plan that would put a file where a folder is (`include/cudnn.h`
/// made a folder by mistake): the folder is not cuDNN's and is left alone.
///
/// # Errors
/// [`Kind::Conflict`] naming the folder.
fn check_no_folder_at(places: &[Place]) -> Result<()> {
    for p in places {
        if std::fs::symlink_metadata(&p.dest).is_ok_and(|m| m.is_dir()) {
            return Err(Error::new(
                Kind::Conflict,
                format!(
                    "'{}' is a folder, where cuDNN's file {} must go",
                    p.dest.display(),
                    p.rel
                ),
            )
            .hint(format!(
                "move that folder out of '{}' (cudnnm does not touch folders), then run the command again; nothing was changed",
                crate::fsops::parent_of(&p.dest).display()
            )));
        }
    }
    Ok(())
}

/// Checks that every file of `release` a plan links, links to or copies is
/// whole in the store: a file of the recorded size, or a link of the
/// release's chain whose target is there.
///
/// # Errors
/// [`Kind::Integrity`] naming the damaged file, with how to reinstall the release.
fn check_release_files(release: &Release, targets: &[Target]) -> Result<()> {
    for t in targets {
        let path = join_rel(&release.dir, &t.from)?;
        let problem = match std::fs::symlink_metadata(&path) {
            Err(_) => Some("is missing".to_string()),
            Ok(m) => match &t.state.link {
                Some(_) if std::fs::metadata(&path).is_err() => {
                    let to = std::fs::read_link(&path)
                        .map(|l| l.display().to_string())
                        .unwrap_or_default();
                    Some(format!("is a broken link (to '{to}')"))
                }
                Some(_) => None,
                None if m.file_type().is_symlink() || !m.is_file() => {
                    Some("is not a regular file".to_string())
                }
                None if m.len() != t.state.size => Some(format!(
                    "holds {} bytes, not the {} its receipt records",
                    m.len(),
                    t.state.size
                )),
                None => None,
            },
        };
        if let Some(why) = problem {
            return Err(Error::new(
                Kind::Integrity,
                format!(
                    "cuDNN {} in the store is damaged: '{}' {why}",
                    release.id(),
                    path.display()
                ),
            )
            .hint({
                // From the source its receipt names, never another package
                // of the same release id (the catalog's full wheel for a jit one).
                let (arg, is_file) = release.receipt.source.reinstall_arg(&release.id());
                let cmd = CommandLine::install_from(&arg, is_file)
                    .force()
                    .for_host(cfg!(windows));
                if is_file {
                    format!("reinstall it from the file it came from ({arg}): `{cmd}`; nothing was changed")
                } else {
                    format!("reinstall it: `{cmd}`; nothing was changed")
                }
            }));
        }
    }
    Ok(())
}

/// Plans `use`: back up every current cuDNN file of `toolkit`, place every
/// deployable file of `release` by `mode`. `current` is the recorded
/// deployment in that toolkit; `id` the new backup's id.
///
/// # Errors
/// See [`release_targets`] and [`scan_toolkit`].
pub fn plan_use(
    home: &Home,
    store: &Store,
    toolkit: &Toolkit,
    release: &Release,
    mode: Mode,
    current: Option<&Deployment>,
    id: u64,
) -> Result<Plan> {
    check_toolkit_dirs(toolkit)?;
    let targets = release_targets(release, toolkit)?;
    check_release_files(release, &targets)?;
    let found = scan_toolkit(toolkit, current, store)?;
    let previous = current.cloned();
    // A stale record (another home or the user replaced the files) does not
    // name what the backup holds: the files found do.
    let current = current.filter(|d| record_describes(&found, d, toolkit));
    let backup_dir = home.backups_dir().join(id.to_string());
    let places = targets
        .into_iter()
        .map(|t| {
            let src = join_rel(&release.dir, &t.from)?;
            let (kind, source, state) = match (&t.state.link, mode) {
                (Some(l), _) => (PlaceKind::Link, PathBuf::from(l), t.state.clone()),
                (None, Mode::Symlink) => (
                    PlaceKind::Link,
                    src.clone(),
                    FileState {
                        link: Some(src.to_string_lossy().into_owned()),
                        ..t.state.clone()
                    },
                ),
                (None, Mode::Hardlink) => (PlaceKind::Hardlink, src, t.state.clone()),
                (None, Mode::Copy) => (PlaceKind::Copy, src, t.state.clone()),
            };
            let mtime = match kind {
                PlaceKind::Copy => source_mtime(&source),
                _ => None,
            };
            Ok(Place {
                rel: rel_path(&toolkit.root, &t.dest),
                dest: t.dest,
                kind,
                source,
                state,
                from: t.from,
                mtime_ns: mtime,
                check_hash: false,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    check_no_folder_at(&places)?;
    let mkdirs = missing_dirs(
        &toolkit.root,
        places
            .iter()
            .map(|p| crate::fsops::parent_of(&p.dest).to_path_buf()),
    );
    let action = format!("use {}", release.id());
    let held = held_label(&found, current, toolkit);
    Ok(Plan {
        schema: PLAN_SCHEMA,
        id,
        action: action.clone(),
        toolkit: toolkit.root.clone(),
        layout: toolkit.layout,
        moves: moves_for(&found, &backup_dir, id)?,
        backup: backup_record(
            id,
            toolkit,
            format!("before {action}"),
            held.clone(),
            current,
            &found,
            reinstall_of(store, previous.as_ref()),
        ),
        backup_dir,
        mkdirs,
        places,
        next: Some(Next {
            release: release.id(),
            mode,
            source: Some(release.receipt.source.clone()),
        }),
        previous,
        from_label: held,
        to_label: release.version().to_string(),
    })
}

/// How the backup says to install again the release it refers to; for a
/// backup written before it recorded that, the two ways there are.
fn reinstall_hint(source: &BackupRecord) -> String {
    source.reinstall.clone().unwrap_or_else(|| {
        let host = |c: CommandLine| c.for_host(cfg!(windows));
        format!(
            "from the archive or pip requirement it came from: `{}` or `{}`",
            host(CommandLine::install("PATH")),
            host(CommandLine::install("pip:REQUIREMENT"))
        )
    })
}

/// Plans `rollback`: back up every current cuDNN file of `toolkit`, then put
/// back the files of backup `source` (in folder `source_dir`): links as links
/// with their recorded targets; regular files as hard links to the store
/// when the backup held a hard-link deployment whose store files are still
/// there (identical bytes, same mode), else as verified copies of the
/// backup's files, so the backup stays whole and can be restored again.
///
/// # Errors
/// [`Kind::NotFound`] when the backup holds links into a release that is no
/// longer installed; [`Kind::Integrity`] when a backup file is missing.
pub fn plan_rollback(
    home: &Home,
    store: &Store,
    toolkit: &Toolkit,
    source: &BackupRecord,
    source_dir: &Path,
    current: Option<&Deployment>,
    id: u64,
) -> Result<Plan> {
    check_toolkit_dirs(toolkit)?;
    let found = scan_toolkit(toolkit, current, store)?;
    let previous = current.cloned();
    let current = current.filter(|d| record_describes(&found, d, toolkit));
    let backup_dir = home.backups_dir().join(id.to_string());
    let src_dep = source.deployment.as_ref();
    let store_dir = src_dep.and_then(|d| release_dir_of(store, &d.release));
    let mut any_copy = false;
    let mut places = Vec::new();
    for f in &source.files {
        let dest = join_rel(&toolkit.root, &f.path)?;
        let pf = src_dep.and_then(|d| d.files.iter().find(|p| p.path == dest));
        // The release's file only when the backup holds what cudnnm placed;
        // a file the user changed (or added) is recorded as the backup's, so
        // `current`, `verify`, `doctor` and the next `use` see that it is not
        // the release's copy.
        let placed_as_is =
            |p: &&PlacedFile| p.link == f.link && (p.link.is_some() || p.sha256 == f.sha256);
        let from = pf
            .filter(placed_as_is)
            .map(|p| p.from.clone())
            .unwrap_or_else(|| backup_label(source.id, &f.path));
        let state = FileState {
            size: f.size,
            sha256: f.sha256.clone(),
            link: f.link.clone(),
        };
        let mut from_backup = false;
        let (kind, src) = match &f.link {
            Some(l) => {
                let target = PathBuf::from(l);
                if target.is_absolute() && std::fs::metadata(&target).is_err() {
                    let who = src_dep
                        .map(|d| format!("release {}", d.release))
                        .unwrap_or_else(|| "a folder".into());
                    return Err(Error::new(
                        Kind::NotFound,
                        format!(
                            "backup {} holds a link '{}' into {who}, whose file '{}' is gone",
                            source.id, f.path, l
                        ),
                    )
                    .hint(match src_dep {
                        Some(d) => format!(
                            "reinstall cuDNN {} ({}), then run the rollback again",
                            d.release,
                            reinstall_hint(source)
                        ),
                        None => {
                            "restore that file, or roll back to another backup (`cudnnm backups`)"
                                .into()
                        }
                    }));
                }
                (PlaceKind::Link, target)
            }
            None => {
                let store_src = match (src_dep, &store_dir, pf) {
                    (Some(d), Some(sd), Some(pf))
                        if d.mode == Mode::Hardlink && pf.sha256 == f.sha256 =>
                    {
                        let s = join_rel(sd, &pf.from)?;
                        let ok = std::fs::metadata(&s).is_ok_and(|m| m.len() == f.size)
                            && platform::same_volume(&s, &toolkit.root);
                        ok.then_some(s)
                    }
                    _ => None,
                };
                match (store_src, &f.store) {
                    (Some(s), _) => (PlaceKind::Hardlink, s),
                    (None, Some(s)) => {
                        // An unchanged copy: the store holds its bytes.
                        if std::fs::metadata(s).map(|m| m.len()).ok() != Some(f.size) {
                            let who = src_dep.map(|d| d.release.clone()).unwrap_or_default();
                            return Err(Error::new(
                                Kind::NotFound,
                                format!(
                                    "backup {} refers to '{}' of release {who}, which is no longer installed",
                                    source.id,
                                    s.display()
                                ),
                            )
                            .hint(format!(
                                "reinstall cuDNN {who} ({}), then run the rollback again",
                                reinstall_hint(source)
                            )));
                        }
                        any_copy = true;
                        (PlaceKind::Copy, s.clone())
                    }
                    (None, None) => {
                        let b = join_rel(&source_dir.join("files"), &f.path)?;
                        if std::fs::symlink_metadata(&b).is_err() {
                            return Err(Error::new(
                                Kind::Integrity,
                                format!(
                                    "backup {} is incomplete: '{}' is missing",
                                    source.id,
                                    b.display()
                                ),
                            )
                            .hint("roll back to another backup (`cudnnm backups` lists them)"));
                        }
                        any_copy = true;
                        from_backup = true;
                        (PlaceKind::Copy, b)
                    }
                }
            }
        };
        let mtime = match kind {
            PlaceKind::Copy => f.mtime_ns.or_else(|| source_mtime(&src)),
            _ => None,
        };
        places.push(Place {
            rel: f.path.clone(),
            dest,
            kind,
            source: src,
            state,
            from,
            mtime_ns: mtime,
            check_hash: from_backup,
        });
    }
    check_no_folder_at(&places)?;
    let mkdirs = missing_dirs(
        &toolkit.root,
        places
            .iter()
            .map(|p| crate::fsops::parent_of(&p.dest).to_path_buf()),
    );
    let next = src_dep.map(|d| Next {
        release: d.release.clone(),
        mode: if d.mode == Mode::Hardlink && any_copy {
            Mode::Copy
        } else {
            d.mode
        },
        source: d.source.clone(),
    });
    let action = format!("rollback to backup {}", source.id);
    let held = held_label(&found, current, toolkit);
    Ok(Plan {
        schema: PLAN_SCHEMA,
        id,
        action: action.clone(),
        toolkit: toolkit.root.clone(),
        layout: toolkit.layout,
        moves: moves_for(&found, &backup_dir, id)?,
        backup: backup_record(
            id,
            toolkit,
            format!("before {action}"),
            held.clone(),
            current,
            &found,
            reinstall_of(store, previous.as_ref()),
        ),
        backup_dir,
        mkdirs,
        places,
        next,
        previous,
        from_label: held,
        to_label: source.held.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{FileRecord, Receipt, Source};
    use crate::version::{CudaVariant, Platform, Version};
    #[cfg(unix)]
    use std::fs;

    fn receipt(version: &str, cuda: &str, platform: Platform, files: Vec<FileRecord>) -> Receipt {
        let v: Version = version.parse().unwrap();
        Receipt {
            schema: 1,
            header_version: v.triple(),
            version: v,
            cuda: cuda.parse::<CudaVariant>().unwrap(),
            platform,
            installed_at: "2026-01-01T00:00:00Z".into(),
            source: Source {
                kind: "folder".into(),
                name: "x".into(),
                sha256: None,
                size: 0,
                url: None,
            },
            files,
        }
    }

    fn file(path: &str, bytes: &[u8]) -> FileRecord {
        FileRecord {
            path: path.into(),
            size: bytes.len() as u64,
            sha256: Some(hash::sha256_bytes(bytes)),
            link: None,
        }
    }

    fn link(path: &str, target: &str) -> FileRecord {
        FileRecord {
            path: path.into(),
            size: 0,
            sha256: None,
            link: Some(target.into()),
        }
    }

    fn toolkit(root: &Path, layout: Layout) -> Toolkit {
        Toolkit {
            root: root.to_path_buf(),
            cuda: "12.4".parse().unwrap(),
            layout,
            found_by: "test".into(),
        }
    }

    #[test]
    fn windows_release_maps_into_windows_layout_and_licenses_stay() {
        let rel = Release {
            dir: PathBuf::from("/store/cuda-11.2/8.1.0.77"),
            receipt: receipt(
                "8.1.0.77",
                "11.2",
                Platform::WindowsX86_64,
                vec![
                    file("bin/cudnn64_8.dll", b"dll"),
                    file("bin/x64/cudnn_ops_infer64_8.dll", b"dll2"),
                    file("include/cudnn.h", b"h"),
                    file("lib/x64/cudnn.lib", b"lib"),
                    file("lib/cudnn64_8.lib", b"lib2"),
                    file("NVIDIA_SLA_cuDNN_Support.txt", b"license"),
                    file("include/other.h", b"not cudnn"),
                ],
            ),
        };
        let tk = toolkit(Path::new("/P F/CUDA/v11.2"), Layout::Windows);
        let t = release_targets(&rel, &tk).unwrap();
        let dests: Vec<String> = t.iter().map(|t| rel_path(&tk.root, &t.dest)).collect();
        assert_eq!(
            dests,
            vec![
                "bin/cudnn64_8.dll",
                "bin/cudnn_ops_infer64_8.dll",
                "include/cudnn.h",
                "lib/x64/cudnn.lib",
                "lib/x64/cudnn64_8.lib"
            ]
        );
        let linux = toolkit(Path::new("/usr/local/cuda-11.2"), Layout::Linux);
        assert_eq!(
            release_targets(&rel, &linux).unwrap_err().kind(),
            Kind::Conflict
        );
    }

    #[test]
    fn linux_chains_stay_links_and_duplicates_are_refused() {
        let mut r = receipt(
            "9.1.0.70",
            "12",
            Platform::LinuxX86_64,
            vec![
                file("lib/libcudnn.so.9.1.0", b"elf"),
                link("lib/libcudnn.so.9", "libcudnn.so.9.1.0"),
                link("lib/libcudnn.so", "libcudnn.so.9"),
                file("include/cudnn_version.h", b"#define CUDNN_MAJOR 9"),
            ],
        );
        let rel = Release {
            dir: PathBuf::from("/s"),
            receipt: r.clone(),
        };
        let tk = toolkit(Path::new("/tk"), Layout::Linux);
        let t = release_targets(&rel, &tk).unwrap();
        let so = t.iter().find(|t| t.from == "lib/libcudnn.so").unwrap();
        assert_eq!(so.state.link.as_deref(), Some("libcudnn.so.9"));
        assert_eq!(so.dest, Path::new("/tk/lib64/libcudnn.so"));
        r.files.push(file("lib/stubs/libcudnn.so.9.1.0", b"dup"));
        let rel = Release {
            dir: PathBuf::from("/s"),
            receipt: r,
        };
        assert_eq!(
            release_targets(&rel, &tk).unwrap_err().kind(),
            Kind::Integrity
        );
    }

    #[cfg(unix)]
    #[test]
    fn scan_finds_every_cudnn_file_and_plan_backs_them_up() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let store = Store::new(&home);
        let root = d.path().join("tk (x86) ü");
        fs::create_dir_all(root.join("include")).unwrap();
        fs::create_dir_all(root.join("targets/x86_64-linux/lib")).unwrap();
        std::os::unix::fs::symlink("targets/x86_64-linux/lib", root.join("lib64")).unwrap();
        fs::write(
            root.join("include/cudnn.h"),
            "#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n",
        )
        .unwrap();
        fs::write(root.join("include/cuda.h"), "x").unwrap();
        fs::write(root.join("lib64/libcudnn.so.7.6.5"), "old").unwrap();
        std::os::unix::fs::symlink("libcudnn.so.7.6.5", root.join("lib64/libcudnn.so.7")).unwrap();
        std::os::unix::fs::symlink("gone", root.join("lib64/libcudnn_dangling.so")).unwrap();
        fs::create_dir(root.join("lib64/cudnn_samples")).unwrap();
        let tk = toolkit(&root, Layout::Linux);
        let found = scan_toolkit(&tk, None, &store).unwrap();
        let rels: Vec<&str> = found.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(
            rels,
            vec![
                "include/cudnn.h",
                "lib64/libcudnn.so.7",
                "lib64/libcudnn.so.7.6.5",
                "lib64/libcudnn_dangling.so"
            ]
        );
        assert_eq!(found[1].state.link.as_deref(), Some("libcudnn.so.7.6.5"));
        assert_eq!(found[2].state.sha256, Some(hash::sha256_bytes(b"old")));

        let rdir = d.path().join("store/cuda-12/9.1.0.70");
        fs::create_dir_all(rdir.join("lib")).unwrap();
        fs::write(rdir.join("lib/libcudnn.so.9"), "new").unwrap();
        std::os::unix::fs::symlink("libcudnn.so.9", rdir.join("lib/libcudnn.so")).unwrap();
        let rel = Release {
            dir: rdir.clone(),
            receipt: receipt(
                "9.1.0.70",
                "12",
                Platform::LinuxX86_64,
                vec![
                    file("lib/libcudnn.so.9", b"new"),
                    link("lib/libcudnn.so", "libcudnn.so.9"),
                ],
            ),
        };
        let plan = plan_use(&home, &store, &tk, &rel, Mode::Symlink, None, 7).unwrap();
        assert_eq!(plan.moves.len(), 4);
        assert_eq!(
            plan.moves[2].to,
            home.backups_dir().join("7/files/lib64/libcudnn.so.7.6.5")
        );
        assert_eq!(plan.from_label, "7.6.5 (not from cudnnm)");
        assert_eq!(plan.to_label, "9.1.0.70");
        let so9 = plan
            .places
            .iter()
            .find(|p| p.rel == "lib64/libcudnn.so.9")
            .unwrap();
        assert_eq!(so9.kind, PlaceKind::Link);
        assert_eq!(so9.source, rdir.join("lib/libcudnn.so.9"));
        assert_eq!(so9.state.sha256, Some(hash::sha256_bytes(b"new")));
        assert!(plan.mkdirs.is_empty());
        assert_eq!(plan.step_count(), 1 + 4 + 2 + 2 + 1);
        assert!(!plan.copies());
        let copy = plan_use(&home, &store, &tk, &rel, Mode::Copy, None, 7).unwrap();
        assert_eq!(copy.places[0].kind, PlaceKind::Copy);
        assert_eq!(
            copy.places[1].kind,
            PlaceKind::Link,
            "chain links stay links in copy mode"
        );
        assert!(copy.copies());
        assert_eq!(
            copy.places[0].mtime_ns,
            mtime_ns(&fs::metadata(rdir.join("lib/libcudnn.so.9")).unwrap()),
            "a copy keeps its source's modification time"
        );
        // A journal roundtrip keeps the plan whole.
        let json = serde_json::to_string(&plan).unwrap();
        assert_eq!(serde_json::from_str::<Plan>(&json).unwrap(), plan);
        // A store file that is gone is named before anything is planned.
        fs::remove_file(rdir.join("lib/libcudnn.so.9")).unwrap();
        let e = plan_use(&home, &store, &tk, &rel, Mode::Symlink, None, 7).unwrap_err();
        assert_eq!(e.kind(), Kind::Integrity);
        assert!(
            e.message().ends_with("lib/libcudnn.so.9' is missing"),
            "{e:?}"
        );
    }

    #[test]
    fn missing_folders_are_created_parents_first() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        let v = missing_dirs(root, [root.join("lib/x64"), root.join("bin")]);
        assert_eq!(
            v,
            vec![root.join("bin"), root.join("lib"), root.join("lib/x64")]
        );
        assert!(join_rel(root, "../x").is_err());
        assert!(join_rel(root, "lib64/x").is_ok());
    }
}
