//! Reading a file while another thread still appends to it: a download's
//! partial file (`downloads/.partial-<key>`) read by the import that
//! unpacks it as it arrives ([`super::stream`]).
//!
//! The writer reports through a shared [`Feed`]: the file is open and holds
//! N bytes ([`Feed::opened`]), it grew ([`Feed::grew`]), it is about to be
//! truncated or removed ([`Feed::discard`], which waits until no reader
//! holds it open), the download ended and verified ([`Feed::complete`]) or
//! failed ([`Feed::abandon`]). A [`FollowReader`] reads only bytes already
//! written, waits for more, and ends at the length the completed download
//! has; each opening is a new generation, so a reader of an earlier one
//! fails instead of mixing two files' bytes.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How long [`Feed::discard`] waits for readers to close the file; a
/// reader checks the feed at every read, so this is only a backstop.
const DISCARD_WAIT: Duration = Duration::from_secs(30);

/// How often a waiting reader looks at the interrupt flag.
const POLL: Duration = Duration::from_millis(100);

/// Where the download stands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum End {
    /// Bytes may still come.
    Open,
    /// The download finished and verified: the file is whole.
    Complete,
    /// The download failed or was not needed: read no further.
    Abandoned,
}

#[derive(Debug)]
struct State {
    /// The file, once the writer opened it.
    path: Option<PathBuf>,
    /// The archive's file name, for messages.
    name: String,
    /// Bytes written so far in this generation.
    len: u64,
    /// Bumped at each opening; readers of an older one stop.
    generation: u64,
    end: End,
    /// Readers holding the file open now.
    readers: usize,
}

/// The shared state between a growing file's writer and its readers.
#[derive(Debug)]
pub struct Feed {
    state: Mutex<State>,
    changed: Condvar,
}

/// Why a [`FollowReader`] stopped before the end of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The writer started the file over (or a new file); read it again from the start.
    Restarted,
    /// The download failed, was not needed, or a signal asked to stop.
    Abandoned,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stop::Restarted => "the download started over",
            Stop::Abandoned => "the download stopped",
        })
    }
}

impl std::error::Error for Stop {}

impl Feed {
    /// A feed whose file is not open yet.
    pub fn new() -> Arc<Feed> {
        Arc::new(Feed {
            state: Mutex::new(State {
                path: None,
                name: String::new(),
                len: 0,
                generation: 0,
                end: End::Open,
                readers: 0,
            }),
            changed: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The writer opened `path`, the download of the archive `name`, which
    /// holds `len` bytes (left by an earlier run when > 0; readers read
    /// those first): a new generation.
    pub fn opened(&self, path: &Path, name: &str, len: u64) {
        let mut s = self.lock();
        s.path = Some(path.to_path_buf());
        s.name = name.to_string();
        s.len = len;
        s.generation += 1;
        self.changed.notify_all();
    }

    /// The file now holds `len` bytes.
    pub fn grew(&self, len: u64) {
        let mut s = self.lock();
        s.len = len;
        self.changed.notify_all();
    }

    /// The file is about to be truncated or removed: readers stop
    /// ([`Stop::Restarted`]); returns once none holds it open (or after
    /// [`DISCARD_WAIT`]).
    pub fn discard(&self) {
        let mut s = self.lock();
        s.path = None;
        s.len = 0;
        s.generation += 1;
        self.changed.notify_all();
        let _ = self
            .changed
            .wait_timeout_while(s, DISCARD_WAIT, |s| s.readers > 0);
    }

    /// The download finished and its SHA-256 matched: readers read to the
    /// length written and then see the end of the file.
    pub fn complete(&self) {
        let mut s = self.lock();
        s.end = End::Complete;
        self.changed.notify_all();
    }

    /// The download failed or is not needed: readers stop ([`Stop::Abandoned`]).
    pub fn abandon(&self) {
        let mut s = self.lock();
        s.end = End::Abandoned;
        self.changed.notify_all();
    }

    /// Waits until the writer opens a file (or gives up), then opens it for
    /// reading from its first byte; also returns the archive's name.
    ///
    /// # Errors
    /// [`Stop::Abandoned`] when the download ended without opening a file
    /// (a cache hit, a failure) or a signal asked to stop; I/O errors.
    pub fn follow(self: &Arc<Feed>) -> io::Result<(FollowReader, String)> {
        let mut s = self.lock();
        loop {
            if s.end == End::Abandoned || crate::interrupt::requested() {
                return Err(io::Error::other(Stop::Abandoned));
            }
            if let Some(path) = s.path.clone() {
                let file = File::open(&path)?;
                s.readers += 1;
                let reader = FollowReader {
                    feed: self.clone(),
                    file,
                    pos: 0,
                    generation: s.generation,
                };
                return Ok((reader, s.name.clone()));
            }
            s = self
                .changed
                .wait_timeout(s, POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Feed {
    /// Why a reader of `generation` would stop now, if it would: what a
    /// decoder's error really was.
    pub fn stop_for(&self, generation: u64) -> Option<Stop> {
        let s = self.lock();
        if s.generation != generation {
            Some(Stop::Restarted)
        } else if s.end == End::Abandoned || crate::interrupt::requested() {
            Some(Stop::Abandoned)
        } else {
            None
        }
    }
}

impl Feed {
    /// Waits until the download of `generation` ends: `None` when it
    /// completed, else why it stopped (started over, failed, a signal).
    pub fn wait_end(&self, generation: u64) -> Option<Stop> {
        let mut s = self.lock();
        loop {
            if s.generation != generation {
                return Some(Stop::Restarted);
            }
            match s.end {
                End::Complete => return None,
                End::Abandoned => return Some(Stop::Abandoned),
                End::Open if crate::interrupt::requested() => return Some(Stop::Abandoned),
                End::Open => {}
            }
            s = self
                .changed
                .wait_timeout(s, POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

/// Reads a growing file from its first byte, waiting for bytes not yet
/// written; see the module documentation. Its errors carry a [`Stop`]
/// (see [`stop_of`]) when the writer restarted or abandoned the file.
#[derive(Debug)]
pub struct FollowReader {
    feed: Arc<Feed>,
    file: File,
    pos: u64,
    generation: u64,
}

impl FollowReader {
    /// The generation (opening of the file) this reader reads.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

impl Read for FollowReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let available = {
            let mut s = self.feed.lock();
            loop {
                if s.generation != self.generation {
                    return Err(io::Error::other(Stop::Restarted));
                }
                if s.end == End::Abandoned || crate::interrupt::requested() {
                    return Err(io::Error::other(Stop::Abandoned));
                }
                if s.len > self.pos {
                    break s.len - self.pos;
                }
                if s.end == End::Complete {
                    return Ok(0);
                }
                s = self
                    .feed
                    .changed
                    .wait_timeout(s, POLL)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        };
        let want = buf
            .len()
            .min(usize::try_from(available).unwrap_or(usize::MAX));
        let n = self.file.read(&mut buf[..want])?;
        if n == 0 {
            // Shorter than the writer said: truncated behind our back.
            return Err(io::Error::other(Stop::Restarted));
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl Drop for FollowReader {
    fn drop(&mut self) {
        let mut s = self.feed.lock();
        s.readers -= 1;
        self.feed.changed.notify_all();
    }
}

/// The [`Stop`] an I/O error from a [`FollowReader`] carries, also when a
/// decoder or the zip reader passed it on.
pub fn stop_of(e: &io::Error) -> Option<Stop> {
    e.get_ref().and_then(|i| i.downcast_ref::<Stop>()).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_reader_follows_the_writer_and_ends_where_the_download_completed() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".partial-x");
        let mut f = crate::fsops::create_new_file(&p).unwrap();
        f.write_all(b"left ").unwrap();
        let feed = Feed::new();
        feed.opened(&p, "x.zip", 5);
        let reader = {
            let feed = feed.clone();
            std::thread::spawn(move || {
                let (mut r, name) = feed.follow().unwrap();
                assert_eq!(name, "x.zip");
                let mut out = Vec::new();
                r.read_to_end(&mut out).map(|_| out)
            })
        };
        let mut len = 5;
        for part in [&b"by a"[..], b" previous run"] {
            std::thread::sleep(Duration::from_millis(20));
            f.write_all(part).unwrap();
            len += part.len() as u64;
            feed.grew(len);
        }
        feed.complete();
        assert_eq!(reader.join().unwrap().unwrap(), b"left by a previous run");
    }

    #[test]
    fn a_discard_stops_readers_of_the_old_file_and_waits_until_they_let_go() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".partial-x");
        let mut f = crate::fsops::create_new_file(&p).unwrap();
        f.write_all(b"abc").unwrap();
        let feed = Feed::new();
        feed.opened(&p, "x.zip", 3);
        let (mut r, _) = feed.follow().unwrap();
        let mut b = [0u8; 8];
        assert_eq!(r.read(&mut b).unwrap(), 3);
        let t = {
            let feed = feed.clone();
            std::thread::spawn(move || feed.discard())
        };
        // The reader is told, and the discard returns once it is dropped.
        let e = loop {
            match r.read(&mut b) {
                Err(e) => break e,
                Ok(n) => {
                    assert_eq!(n, 0, "nothing more was written");
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        };
        assert_eq!(stop_of(&e), Some(Stop::Restarted));
        drop(r);
        t.join().unwrap();
        feed.abandon();
        assert_eq!(
            stop_of(&feed.follow().unwrap_err()),
            Some(Stop::Abandoned),
            "no file is open after the discard, and the download ended"
        );
    }
}
