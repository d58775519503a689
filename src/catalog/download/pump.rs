//! A response body read on a thread of its own, so that the transfer loop
//! keeps control while a server sends nothing: a Ctrl-C that
//! [`crate::interrupt`] caught is noticed within [`POLL`], not after the
//! read timeout. At most [`DEPTH`] + 2 buffers of [`BUF`] bytes exist.
//! The request before the body (connecting, sending, waiting for the
//! response's head) runs on a thread of its own the same way ([`until`]).

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::time::Duration;

/// How long [`Pump::next`] waits before saying nothing came.
pub(super) const POLL: Duration = Duration::from_millis(100);
/// Bytes read at a time.
const BUF: usize = 256 << 10;
/// Buffers read ahead of the transfer loop.
const DEPTH: usize = 4;

/// What [`Pump::next`] got.
pub(super) enum Next {
    /// Bytes of the body (give the buffer back with [`Pump::recycle`]).
    Bytes(Vec<u8>),
    /// The body ended.
    End,
    /// Nothing within [`POLL`].
    Idle,
}

/// The reading thread's end of the body; dropping it lets the thread go
/// (at its next read, or when the read times out).
pub(super) struct Pump {
    full: Receiver<io::Result<Vec<u8>>>,
    empty: Sender<Vec<u8>>,
}

impl Pump {
    /// Starts reading `body` on a new thread.
    pub(super) fn start(mut body: impl Read + Send + 'static) -> Pump {
        let (full_tx, full): (SyncSender<io::Result<Vec<u8>>>, _) = mpsc::sync_channel(DEPTH);
        let (empty, empty_rx) = mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            loop {
                let mut buf = empty_rx.try_recv().unwrap_or_default();
                buf.resize(BUF, 0);
                let n = match body.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let _ = full_tx.send(Err(e));
                        return;
                    }
                };
                buf.truncate(n);
                if full_tx.send(Ok(buf)).is_err() {
                    return;
                }
            }
        });
        Pump { full, empty }
    }

    /// The next bytes of the body, its end, or [`Next::Idle`] after [`POLL`].
    ///
    /// # Errors
    /// The read's error (a connection lost, a timeout).
    pub(super) fn next(&self) -> io::Result<Next> {
        match self.full.recv_timeout(POLL) {
            Ok(Ok(b)) => Ok(Next::Bytes(b)),
            Ok(Err(e)) => Err(e),
            Err(RecvTimeoutError::Timeout) => Ok(Next::Idle),
            Err(RecvTimeoutError::Disconnected) => Ok(Next::End),
        }
    }

    /// Gives a buffer back for the next read.
    pub(super) fn recycle(&self, buf: Vec<u8>) {
        let _ = self.empty.send(buf);
    }
}

/// Runs `work` on a thread of its own and returns what it returns, or
/// `None` as soon as `stop()` says so (asked every [`POLL`]): the thread is
/// then left to end by itself (a request, at the client's timeout), or
/// with the process.
pub(super) fn until<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
    stop: impl Fn() -> bool,
) -> Option<T> {
    let (tx, rx) = mpsc::sync_channel(1);
    let worker = std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    loop {
        match rx.recv_timeout(POLL) {
            Ok(v) => return Some(v),
            Err(RecvTimeoutError::Timeout) if stop() => return None,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => match worker.join() {
                // `work` panicked: so does the caller, as if it had run here.
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!("the worker sends before it ends"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_that_never_ends_leaves_the_caller_free_to_stop() {
        assert_eq!(until(|| 7, || false), Some(7));
        let t = std::time::Instant::now();
        let asked = std::cell::Cell::new(0);
        let got = until(
            || std::thread::sleep(Duration::from_secs(5)),
            || {
                asked.set(asked.get() + 1);
                asked.get() == 2
            },
        );
        assert_eq!(got, None);
        assert_eq!(asked.get(), 2);
        assert!(t.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_body_arrives_whole_in_order_then_ends() {
        let body: Vec<u8> = (0..(BUF * 3 + 17)).map(|i| (i % 251) as u8).collect();
        let p = Pump::start(io::Cursor::new(body.clone()));
        let mut got = Vec::new();
        loop {
            match p.next().unwrap() {
                Next::Bytes(b) => {
                    got.extend_from_slice(&b);
                    p.recycle(b);
                }
                Next::End => break,
                Next::Idle => {}
            }
        }
        assert_eq!(got, body);
    }

    #[test]
    fn a_silent_body_leaves_the_caller_in_control() {
        struct Silent;
        impl Read for Silent {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                std::thread::sleep(Duration::from_secs(5));
                Ok(0)
            }
        }
        let p = Pump::start(Silent);
        let t = std::time::Instant::now();
        assert!(matches!(p.next().unwrap(), Next::Idle));
        assert!(t.elapsed() < Duration::from_secs(2));
    }
}
