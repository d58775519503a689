//! Importing a download unpacked while it arrived
//! (`docs/architecture.md#importing`): the partial folder and thread that
//! fill it ([`begin_streamed`]), then, once the download verified, the
//! members checked and committed as every import does ([`import_streamed`]),
//! or the finished file imported when the stream could not be used.

use super::*;

/// Starts unpacking a download as it arrives: a new partial folder in
/// `store` that stays this process's after the home lock is released
/// ([`Store::begin_streamed_import`]; call this under the home lock), and
/// the thread that fills it from `feed` ([`source::stream`]); for a
/// `published_wheel` (a wheel whose publisher's SHA-256 the download is
/// checked against) without hashing its members, which its `RECORD` gives
/// ([`ImportRequest::published_sha256`]). `Ok(None)`
/// when the file system cannot lock the partial folder: import after the
/// download then.
///
/// # Errors
/// As [`Store::begin_import`].
pub fn begin_streamed(
    store: &Store,
    feed: std::sync::Arc<source::follow::Feed>,
    published_wheel: bool,
) -> Result<Option<Streaming>> {
    let Some(partial) = store.begin_streamed_import()? else {
        return Ok(None);
    };
    let unpacker =
        source::stream::Unpacker::start(feed, partial.path().join(RAW), !published_wheel);
    Ok(Some(Streaming { unpacker, partial }))
}

/// An import unpacking a download as it arrives ([`begin_streamed`]).
/// Dropped without [`import_streamed`], it stops the thread and removes its
/// partial folder.
#[derive(Debug)]
pub struct Streaming {
    // Declared first: dropped (the thread stopped) before the folder goes.
    unpacker: source::stream::Unpacker,
    partial: store::PartialRelease,
}

/// Imports the download `req.source` (finished, its SHA-256 verified:
/// `req.expected_sha256`) that `streaming` unpacked as it arrived, after
/// the feed was told it completed. The caller holds the home lock again.
///
/// The members already under the partial folder are checked as every
/// import checks them: a zip's local headers must agree with its central
/// directory ([`source::stream::agree`]), the stream's SHA-256 must be the
/// download's, then the plan, identification, `RECORD` and version checks
/// run and the plan is applied by renames. When the archive could not be
/// streamed, it is imported from the finished file as [`import`] does.
/// [`Imported::notes`] says which happened.
///
/// # Errors
/// As [`import`]; [`Kind::Integrity`] for a member the stream refused or a
/// zip whose two tables of contents disagree. The store is unchanged on
/// every error, and the partial folder removed.
pub fn import_streamed(
    store: &Store,
    req: &ImportRequest,
    streaming: Streaming,
    progress: &dyn Progress,
) -> Result<Imported> {
    let Streaming { unpacker, partial } = streaming;
    let why = match unpacker.finish() {
        source::stream::Outcome::Refused(e) => return Err(e),
        source::stream::Outcome::Fallback(why) => {
            drop(partial);
            why
        }
        source::stream::Outcome::Unpacked(u) => {
            match import_stream_result(store, req, partial, u)? {
                Ok(mut done) => {
                    done.notes.push("unpacked while downloading".into());
                    return Ok(done);
                }
                Err(why) => why,
            }
        }
    };
    let mut done = import(store, req, progress)?;
    done.notes
        .push(format!("unpacked after the download: {why}"));
    Ok(done)
}

/// The streamed members of `u` checked, planned and committed; `Ok(Err(why))`
/// when they are not the verified archive's and the file must be read instead.
fn import_stream_result(
    store: &Store,
    req: &ImportRequest,
    partial: store::PartialRelease,
    u: source::stream::Unpacked,
) -> Result<std::result::Result<Imported, String>> {
    let path = &req.source;
    if req.expected_sha256.as_ref() != Some(&u.sha256) || source::sniff(path)? != u.format {
        return Ok(Err(
            "the bytes read while downloading are not the verified archive's".into(),
        ));
    }
    let name = req
        .name
        .clone()
        .or_else(|| path.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let opts = PlanOptions { cuda: req.cuda };
    let done = match &u.streamed {
        source::stream::Streamed::Tar(t) => {
            let unpacked = Extracted {
                entries: &t.entries,
                hashes: &t.hashes,
                size: u.size,
                sha256: u.sha256.clone(),
                zip: None,
            };
            import_unpacked(store, req, &name, &opts, partial, unpacked)?
        }
        source::stream::Streamed::Zip(z) => {
            let zip = source::ZipSource::open(path)?;
            // Named as the stream's own refusals name it.
            source::stream::agree(&zip, z, Path::new(&name))?;
            let unpacked = Extracted {
                entries: zip.entries(),
                hashes: &z.hashes,
                size: u.size,
                sha256: u.sha256.clone(),
                zip: Some(&zip),
            };
            import_unpacked(store, req, &name, &opts, partial, unpacked)?
        }
    };
    Ok(Ok(done))
}
