//! A catalog install that unpacks its archive while downloading it
//! (`install SPEC`, and a bare `install` of a locked catalog archive): the
//! partial store folder and the unpacking thread start when the download
//! opens its partial file, under the home lock for a moment; the download
//! runs without it, telling the thread about every byte
//! ([`download::Tap`]); the home lock is taken again to check and commit
//! ([`archive::import_streamed`]). An archive found in the download cache,
//! or a home that cannot lock its partial folder, is imported from the
//! file as before.

use std::cell::{Cell, RefCell};
use std::path::Path;
use std::sync::Arc;

use super::{Installed, import_file, import_with};
use crate::archive::source::follow::Feed;
use crate::archive::{self, ImportRequest, Streaming};
use crate::catalog::download;
use crate::error::Result;
use crate::ops::Session;

/// The download's side of a streamed import, and the [`download::Tap`]
/// the download reports to: when the download opens its partial file, it
/// takes the home lock for as long as it takes to make the partial store
/// folder and starts the unpacking thread ([`archive::begin_streamed`]).
/// Then [`StreamedInstall::import`]. Dropped before that (a
/// failed download, a refused release), it stops the thread and removes
/// its partial folder; the store is unchanged.
pub(super) struct StreamedInstall<'c> {
    session: &'c Session<'c>,
    feed: Arc<Feed>,
    /// The download is a wheel checked against its publisher's SHA-256: its
    /// members are not hashed as they stream ([`archive::begin_streamed`]).
    published_wheel: bool,
    /// Whether the partial folder was tried (at the first opening).
    tried: Cell<bool>,
    streaming: RefCell<Option<Streaming>>,
}

impl download::Tap for StreamedInstall<'_> {
    fn opened(&self, path: &Path, name: &str, len: u64) {
        if !self.tried.replace(true) {
            *self.streaming.borrow_mut() = self.begin();
        }
        self.feed.opened(path, name, len);
    }
    fn grew(&self, len: u64) {
        self.feed.grew(len);
    }
    fn discard(&self) {
        self.feed.discard();
    }
}

impl<'c> StreamedInstall<'c> {
    /// Nothing starts before the download opens its partial file (an
    /// archive in the cache, or a release refused before its download,
    /// never makes a partial folder). `published_wheel`: the download is a
    /// wheel checked against its publisher's SHA-256.
    pub(super) fn new(session: &'c Session<'c>, published_wheel: bool) -> StreamedInstall<'c> {
        StreamedInstall {
            session,
            feed: Feed::new(),
            published_wheel,
            tried: Cell::new(false),
            streaming: RefCell::new(None),
        }
    }

    /// The partial folder and thread; `None` (the download is imported
    /// after it finished, which reports any problem with the home) when the
    /// home cannot be locked or written, or its file system cannot lock the
    /// partial folder.
    fn begin(&self) -> Option<Streaming> {
        // Under the guard: the store's recovery (a replaced release moved
        // back) runs only there.
        let guard = self.session.guard().ok()?;
        archive::begin_streamed(
            &guard.store_for_import(),
            self.feed.clone(),
            self.published_wheel,
        )
        .ok()
        .flatten()
    }

    /// Imports the verified download `req.source` as every install does:
    /// from what the thread unpacked, or from the file (an archive that came
    /// from the cache, `cached`, or no thread).
    pub(super) fn import(self, req: ImportRequest, cached: bool) -> Result<Installed> {
        let StreamedInstall {
            session,
            feed,
            streaming,
            ..
        } = self;
        match streaming.into_inner() {
            Some(streaming) if !cached => {
                feed.complete();
                import_with(session, req, |store, req, progress| {
                    archive::import_streamed(store, req, streaming, progress)
                })
            }
            other => {
                drop(other);
                import_file(session, req)
            }
        }
    }
}
