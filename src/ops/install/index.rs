//! A wheel fetched straight from the package index, no pip: the file list
//! read from the index (`catalog::index`), the wheel for the platform
//! picked (or the one a lock names, by file name and SHA-256), downloaded
//! like an archive — resumable, cached by SHA-256, unpacked while it
//! arrives — and committed to the store only once the whole file matches
//! the SHA-256 the index (or the lock) gives.

use super::stream::StreamedInstall;
use super::{Installed, pause_after_download};
use crate::archive::ImportRequest;
use crate::catalog::index::{self, Index, IndexFile};
use crate::catalog::{Catalog, FetchRequest, download, resolve};
use crate::error::{Error, Kind, Result};
use crate::hash::Sha256Hex;
use crate::ops::{Event, Session};
use crate::store::Provenance;
use crate::toolkit::Toolkit;
use crate::version::{CudaVariant, Flavour, Platform, Version};

/// Which wheel to fetch.
pub(super) struct Wanted<'a> {
    /// The PyPI project (`nvidia-cudnn-cu12`).
    pub project: &'a str,
    /// The release version.
    pub version: &'a Version,
    /// Its CUDA.
    pub cuda: &'a CudaVariant,
    /// The platform to fetch for.
    pub platform: Platform,
    /// Which build (the project's: `nvidia-cudnn-jit-cu12` is the JIT one).
    pub flavour: Flavour,
    /// A lock's file name and SHA-256: exactly that file, or nothing.
    pub locked: Option<(&'a str, &'a Sha256Hex)>,
    /// The user named the version exactly: a wheel the index marks yanked
    /// may be taken when it has no other (PEP 592).
    pub exact: bool,
}

/// The index's file `want` names: the lock's, when it gives one (still
/// listed with that SHA-256), else the index's wheel of the version for
/// the platform.
///
/// # Errors
/// As [`index::read`] and [`index::Listing::wheel`]; [`Kind::Integrity`]
/// when the index no longer serves the locked file with the locked hash,
/// or links an `https://` index's file over plain `http://`.
pub(super) fn find(session: &Session<'_>, index: &Index, want: &Wanted) -> Result<IndexFile> {
    let listing = index::read(session.env, index, want.project)?;
    find_in(session, index, &listing, want)
}

/// [`find`] in a file list already read from `index`.
///
/// # Errors
/// As [`find`], but for reading the index.
pub(super) fn find_in(
    session: &Session<'_>,
    index: &Index,
    listing: &index::Listing,
    want: &Wanted,
) -> Result<IndexFile> {
    let file = match want.locked {
        Some((name, sha)) => listing.serves(name, sha).cloned().ok_or_else(|| {
            let listed = listing.files.iter().find(|f| f.filename == name);
            Error::new(
                Kind::Integrity,
                format!(
                    "the package index {} no longer serves {name} with the locked SHA-256 {sha}",
                    index.shown()
                ),
            )
            .cause(match listed.and_then(|f| f.sha256.as_ref()) {
                Some(other) => format!("it lists that file with SHA-256 {other}"),
                None if listed.is_some() => "it lists that file without a SHA-256".to_string(),
                None => "it does not list that file".to_string(),
            })
            .hint("check the index (--index-url, CUDNNM_INDEX_URL, `index_url` in config.toml, pip's index-url); if the new file is genuine, lock again with `cudnnm lock`")
        })?,
        None => listing
            .wheel(want.version, want.platform, want.exact)?
            .clone(),
    };
    if want.locked.is_some() && file.yanked {
        let w =
            crate::ops::lock::yanked_since(&index.shown(), want.platform.as_str(), &file.filename);
        session.report.event(&Event::Warning(&w));
    }
    if index.url.starts_with("https://") && !file.url.starts_with("https://") {
        return Err(Error::new(
            Kind::Integrity,
            format!(
                "the package index {} links {} over plain HTTP; refused",
                index.shown(),
                file.filename
            ),
        )
        .hint("an https:// index must link its files over https://; ask its owner, or use another index (--index-url)"));
    }
    Ok(file)
}

/// Downloads `file` (unpacking it as it arrives) and imports it for
/// `want`'s release; `base` carries the request's flags.
///
/// # Errors
/// The download's ([`download::download_tapped`]: a hash mismatch discards
/// the file, nothing is kept) and the import's.
pub(super) fn install_file(
    session: &Session<'_>,
    index: &Index,
    want: &Wanted,
    file: &IndexFile,
    base: ImportRequest,
) -> Result<Installed> {
    let sha = file
        .sha256
        .clone()
        .expect("a picked file has a SHA-256 (Listing::wheel, Listing::serves)");
    session.report.event(&Event::WheelFromIndex {
        version: want.version,
        cuda: want.cuda,
        file: &file.filename,
        index: &index.shown(),
    });
    // The index's trust: PyPI's files over HTTPS only, a user-named
    // index's as it links them (`find` refused plain HTTP from an HTTPS one).
    let urls = [download::Location {
        url: file.url.clone(),
        trust: index.trust(),
    }];
    let expect = [sha.clone()];
    let job = download::Job {
        urls: &urls,
        name: &file.filename,
        size: file.size,
        expect: &expect,
        identity: download::Identity {
            version: want.version,
            cuda: want.cuda,
            platform: want.platform,
            flavour: want.flavour,
        },
    };
    let streamed = StreamedInstall::new(session, true);
    let got = download::download_tapped(
        session.home,
        session.env,
        &job,
        session.report.progress(),
        &streamed,
    )
    // The downloader's hints speak of NVIDIA's server and the catalog; this
    // file came from the index.
    .map_err(|e| match e.kind() {
        Kind::Integrity => e.hint(format!(
            "the package index {} serves other bytes under {} than the SHA-256 it publishes: the index or a proxy between is broken or tampered with; tell its maintainer, or use another index (--index-url)",
            index.shown(),
            file.filename
        )),
        Kind::NotFound | Kind::Network => e.hint(format!(
            "the package index {} lists {} but did not serve it: check the index ({}), its credentials and the proxy (HTTPS_PROXY), or download the wheel yourself and run `cudnnm install PATH`",
            index.shown(),
            file.filename,
            index.from
        )),
        _ => e,
    })?;
    session.report.event(&Event::Downloaded {
        name: &file.filename,
        url: &index::setting::without_credentials(&got.url),
        cached: got.cached,
    });
    pause_after_download(session);
    // Held (`cache clean` leaves it) until the import has read it.
    let hold = got.hold;
    let done = streamed.import(
        ImportRequest {
            source: got.path,
            name: Some(file.filename.clone()),
            cuda: Some(*want.cuda),
            expected_sha256: Some(got.sha256.clone()),
            // The index's own hash, which the download was checked against.
            published_sha256: Some(got.sha256),
            from: Provenance::Url(index::setting::without_credentials(&file.url)),
            ..base
        },
        got.cached,
    );
    drop(hold);
    done
}

/// The catalog's pick for `fetch`, as `install` and `lock` both make it.
pub(crate) struct IndexedPick {
    /// The release picked.
    pub pick: resolve::Pick,
    /// The first pick was NVIDIA's archive, and an index named for cudnnm
    /// was asked for the wheel instead ([`resolve::prefer_wheel`]): NVIDIA's
    /// archive stays the way where that index lacks it.
    pub archive_too: bool,
    /// For a wheel picked through an index: that package's file list, or
    /// why it could not be read (said where the wheel is fetched or locked).
    pub listing: Option<Result<index::Listing>>,
    /// The platform whose wheels could be picked: any (`--platform`) from
    /// an index, only the machine's when pip fetches.
    pub host: Option<Platform>,
}

/// Picks the release `fetch` asks for from `cat` ([`resolve::pick_on`]):
/// an index named for cudnnm serves the wheel of a release NVIDIA also
/// ships as an archive, and a version the index marks yanked for the
/// platform (every file of it) though the catalog does not know it yet is
/// passed over, as the catalog's yanked releases are, unless the spec names
/// it exactly — with a warning, and recorded in `cat`
/// ([`Catalog::note_index_yank`]). The index's file list is read once.
///
/// # Errors
/// As [`resolve::pick_on`] and [`resolve::prefer_wheel`].
pub(crate) fn pick(
    session: &Session<'_>,
    cat: &mut Catalog,
    fetch: &FetchRequest,
    toolkits: &[Toolkit],
    gpu: Option<&Version>,
    setting: &index::Setting,
) -> Result<IndexedPick> {
    // A wheel read straight from the index serves any platform (`--platform`);
    // one pip fetches, only the machine pip runs on.
    let host = match setting {
        index::Setting::Index(_) => Some(fetch.platform),
        index::Setting::PipNoIndex(_) => session.env.platform(),
    };
    let named = matches!(setting, index::Setting::Index(i) if i.named_for_cudnnm());
    let mut listing: Option<Result<index::Listing>> = None;
    loop {
        let first = resolve::pick_on(cat, fetch, toolkits, gpu, host)?;
        let archive_too = named && matches!(first, resolve::Pick::Archive { .. });
        let pick = if archive_too {
            resolve::prefer_wheel(cat, fetch, toolkits, gpu, host, first)?
        } else {
            first
        };
        let (resolve::Pick::Wheel(w), index::Setting::Index(ix)) = (&pick, setting) else {
            return Ok(IndexedPick {
                pick,
                archive_too,
                listing: None,
                host,
            });
        };
        let read = match listing.take() {
            Some(Ok(l)) if l.project == w.package => Ok(l),
            _ => index::read(session.env, ix, &w.package),
        };
        // (A pick the catalog already counts as yanked was named exactly: kept.)
        let yanked = read.as_ref().is_ok_and(|l| {
            w.yanked.is_none()
                && !fetch.spec.names_exactly(&w.version)
                && l.all_yanked(&w.version, fetch.platform)
        });
        if !yanked {
            return Ok(IndexedPick {
                pick,
                archive_too,
                listing: Some(read),
                host,
            });
        }
        let note = format!(
            "the package index {} marks every wheel of {}=={} for {} yanked; passing over it (`cudnnm manifest refresh` tells the catalog)",
            ix.shown(),
            w.package,
            w.version,
            fetch.platform
        );
        session.report.event(&Event::Warning(&note));
        cat.note_index_yank(
            w.release_id(),
            format!("yanked on the package index {}", ix.shown()),
        );
        listing = Some(read);
    }
}
