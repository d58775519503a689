//! Links: replaced atomically, made as given, and removed only when they
//! are links (a real file or folder in their place is refused).

#![allow(clippy::disallowed_methods)] // the one place files change
use std::fs;
use std::io;
use std::path::Path;

use super::{create_dir_all, parent_of, rename, retry_busy, sibling, sync_dir};
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::platform;

/// Points `link` at `target` atomically: a new link is made beside `link` and
/// renamed over it. Refuses when `link` exists and is not a link (a real
/// folder or file is never replaced here).
///
/// `dir` selects a folder link (a junction on Windows where supported).
pub fn replace_link(target: &Path, link: &Path, dir: bool) -> Result<()> {
    replace_link_with(link, |tmp| {
        if dir {
            platform::link_dir(target, tmp)
        } else {
            platform::symlink_file(target, tmp)
        }
    })
}

/// Like [`replace_link`] for a folder link, and says which kind was made
/// (junction or symbolic link on Windows, symbolic link on Unix) so callers
/// can report it. Same guarantees: new link beside `link`, renamed over it;
/// a real file or folder at `link` is refused.
///
/// # Errors
/// [`Kind::Conflict`] when `link` is not a link; the OS error when no kind
/// of folder link can be made there (the temporary link is removed).
pub fn replace_dir_link(target: &Path, link: &Path) -> Result<platform::DirLinkKind> {
    replace_link_with(link, |tmp| platform::link_dir_kind(target, tmp))
}

/// The shared steps of [`replace_link`] and [`replace_dir_link`]: refuse a
/// real file or folder at `link`, `make` the new link at a sibling
/// temporary name, rename it over `link`, sync the folder.
fn replace_link_with<T>(link: &Path, make: impl FnOnce(&Path) -> io::Result<T>) -> Result<T> {
    if let Ok(meta) = fs::symlink_metadata(link)
        && !platform::is_link(&meta, link)
    {
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "'{}' exists and is not a link; cudnnm will not replace it",
                link.display()
            ),
        )
        .hint("move it aside yourself, then run the command again"));
    }
    let parent = parent_of(link);
    create_dir_all(parent)?;
    let tmp = sibling(link, "tmp-link");
    let _ = remove_link(&tmp);
    let made = make(&tmp).with_path("create the link", &tmp)?;
    if let Err(e) = rename_link_over(&tmp, link) {
        let _ = remove_link(&tmp);
        return Err(e);
    }
    sync_dir(parent);
    Ok(made)
}

fn rename_link_over(tmp: &Path, link: &Path) -> Result<()> {
    // Windows cannot rename a directory link over an existing one; remove the old link first.
    if crate::platform::HOST_WINDOWS && fs::symlink_metadata(link).is_ok() {
        remove_link(link)?;
    }
    rename(tmp, link)
}

/// Removes `path` only if it is a symbolic link or junction; refuses otherwise.
///
/// # Errors
/// [`Kind::Conflict`] when `path` is a real file or folder.
pub fn remove_link(path: &Path) -> Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("inspect", path, e)),
        Ok(m) => m,
    };
    if !platform::is_link(&meta, path) {
        return Err(Error::new(
            Kind::Conflict,
            format!("'{}' is not a link; refusing to remove it", path.display()),
        ));
    }
    platform::remove_link(path, &meta).with_path("remove the link", path)
}

/// Creates a hard link `dst` to the existing file `src` (same volume only).
///
/// # Errors
/// When `dst` exists, the volumes differ, or the file system has no hard links.
pub fn hard_link(src: &Path, dst: &Path) -> Result<()> {
    retry_busy(|| fs::hard_link(src, dst)).map_err(|e| {
        Error::io("create the hard link", dst, e).context(format!(
            "could not hard-link '{}' to '{}'",
            dst.display(),
            src.display()
        ))
    })
}

/// Creates a symbolic link `link` whose target is `target`, written as given
/// (a relative target stays relative; nothing is resolved).
///
/// # Errors
/// When `link` exists, or (Windows) the process may not create symbolic
/// links (needs Developer Mode or admin rights).
pub fn symlink(target: &Path, link: &Path) -> Result<()> {
    platform::symlink_file(target, link).map_err(|e| {
        let err = Error::io("create the link", link, e);
        if crate::platform::HOST_WINDOWS {
            err.hint("creating symbolic links on Windows needs Developer Mode or an Administrator terminal; use --mode hardlink or --mode copy instead")
        } else {
            err
        }
    })
}

/// What [`symlink_or_copy`] made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placed {
    /// The symbolic link.
    Linked,
    /// A copy of the link's target (Windows without the right to make links).
    Copied,
}

/// Creates the relative symbolic link `link` → `target` that a release
/// records (`target` as written in the archive, never resolved). On Windows,
/// where creating links needs a privilege, a refused link is written as a
/// copy of its target instead, so a Linux release still unpacks there; the
/// caller records what was made ([`Placed`]).
///
/// # Errors
/// When `link` exists, or (Unix) links cannot be made here, or (Windows) the
/// fallback copy fails.
pub fn symlink_or_copy(target: &str, link: &Path) -> io::Result<Placed> {
    let copy = || {
        let resolved = link.parent().unwrap_or(Path::new(".")).join(target);
        fs::copy(resolved, link).map(|_| Placed::Copied)
    };
    match platform::symlink_file(Path::new(target), link) {
        // Wine (and some file systems) report a link made that is not there.
        Ok(()) if platform::HOST_WINDOWS && fs::symlink_metadata(link).is_err() => copy(),
        Ok(()) => Ok(Placed::Linked),
        Err(e) if !platform::HOST_WINDOWS => Err(e),
        Err(_) => copy(),
    }
}
