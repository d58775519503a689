//! Progress reporting from library code. The library reports through this
//! small trait and only the CLI draws bars (after uv), so tests and `-q` runs
//! pass [`NoProgress`].

/// Receives progress of one long operation (a download, an extraction).
pub trait Progress: Sync {
    /// A new phase starts: `what` is a short label ("downloading x.zip"),
    /// `total` the expected byte count when known.
    fn start(&self, what: &str, total: Option<u64>);
    /// `bytes` more were processed in the current phase.
    fn advance(&self, bytes: u64);
    /// The current phase ended.
    fn finish(&self);
}

/// Reports nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _what: &str, _total: Option<u64>) {}
    fn advance(&self, _bytes: u64) {}
    fn finish(&self) {}
}
