//! One error type for the whole tool: what failed, why, and what to do next.
//!
//! Every error carries a [`Kind`] that decides the process exit code (listed in
//! README.md), a one-line message naming the thing that failed, optional
//! underlying causes, and a hint line with the command or step that fixes it.
//! Rendered by `cli` as:
//!
//! ```text
//! error: could not import 'x.zip': entry '../evil' points outside the archive
//! caused by: …
//! help: …
//! ```

use std::fmt;
use std::io;
use std::path::Path;

/// The category of an error; each maps to one documented exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Anything not covered below (exit 1).
    Failure,
    /// Bad command-line usage or a malformed argument/spec (exit 2).
    Usage,
    /// No installed release, catalog entry, toolkit or backup matches (exit 3).
    NotFound,
    /// A checksum or content check failed: hash mismatch, not a cuDNN
    /// archive, version disagreement, unsafe archive entry (exit 4).
    Integrity,
    /// The process lacks the rights to change a file or folder (exit 5).
    Permission,
    /// Download or network failure (exit 6).
    Network,
    /// `doctor` or `verify` found a problem (exit 7).
    Unhealthy,
    /// The request conflicts with the current state: a deployed release,
    /// an incompatible CUDA variant or a GPU too old for the release
    /// without `--force` (exit 8).
    Conflict,
    /// Ctrl-C or SIGTERM stopped a change, which was undone (exit 130).
    Interrupted,
}

impl Kind {
    /// A stable name for `--json` error output (`integrity`, `not-found`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Failure => "failure",
            Kind::Usage => "usage",
            Kind::NotFound => "not-found",
            Kind::Integrity => "integrity",
            Kind::Permission => "permission",
            Kind::Network => "network",
            Kind::Unhealthy => "unhealthy",
            Kind::Conflict => "conflict",
            Kind::Interrupted => "interrupted",
        }
    }

    /// The process exit code for this kind (see README.md, "Exit codes").
    pub fn exit_code(self) -> u8 {
        match self {
            Kind::Failure => 1,
            Kind::Usage => 2,
            Kind::NotFound => 3,
            Kind::Integrity => 4,
            Kind::Permission => 5,
            Kind::Network => 6,
            Kind::Unhealthy => 7,
            Kind::Conflict => 8,
            Kind::Interrupted => 130,
        }
    }
}

/// An error with a message, optional causes and an optional hint.
#[derive(Debug, Clone)]
pub struct Error {
    kind: Kind,
    message: String,
    causes: Vec<String>,
    hint: Option<String>,
    /// The OS error's kind, for an error made by [`Error::io`].
    io_kind: Option<io::ErrorKind>,
    /// The path [`Error::io`] could not write for lack of rights, while the
    /// hint is still its general one: the caller that knows the home can
    /// say more ([`Error::unwritable_path`]).
    unwritable: Option<std::path::PathBuf>,
}

/// `text` with the `user:password@` of every URL in it removed
/// (`https://alice:pw@mirror/simple/` → `https://mirror/simple/`): every
/// error line passes through it, so a credential in an index or mirror URL
/// never reaches a terminal, a CI log or `--json`, whichever message
/// carried the URL.
pub fn without_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the path, query, fragment or the URL's end.
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '\'' | '"' | '<' | '>' | ')' | ']')
                    || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => out.push_str(&authority[at + 1..]),
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind` whose one-line `message` names what failed.
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: without_userinfo(&message.into()),
            causes: Vec::new(),
            hint: None,
            io_kind: None,
            unwritable: None,
        }
    }

    /// Shorthand for [`Kind::Failure`].
    pub fn msg(message: impl Into<String>) -> Self {
        Self::new(Kind::Failure, message)
    }

    /// Sets the hint line (what the user should do next).
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(without_userinfo(&hint.into()));
        self.unwritable = None;
        self
    }

    /// The path an [`Error::io`] could not write for lack of rights, while
    /// its hint is still the general one (a caller's own hint clears it).
    pub fn unwritable_path(&self) -> Option<&Path> {
        self.unwritable.as_deref()
    }

    /// Appends an underlying cause.
    pub fn cause(mut self, cause: impl fmt::Display) -> Self {
        self.causes.push(without_userinfo(&cause.to_string()));
        self
    }

    /// Replaces the kind (e.g. a generic I/O failure that is really a permission problem).
    pub fn with_kind(mut self, kind: Kind) -> Self {
        self.kind = kind;
        self
    }

    /// Wraps this error under a new message; this error's message becomes the first cause.
    pub fn context(self, message: impl Into<String>) -> Self {
        let mut causes = vec![self.message];
        causes.extend(self.causes);
        Error {
            kind: self.kind,
            message: without_userinfo(&message.into()),
            causes,
            hint: self.hint,
            io_kind: self.io_kind,
            unwritable: self.unwritable,
        }
    }

    /// An I/O error on `path` while trying to `verb` it ("read", "create", …),
    /// classified so that permission and disk-full failures get their own hint.
    pub fn io(verb: &str, path: &Path, err: io::Error) -> Self {
        let mut base = Error::msg(format!("could not {verb} '{}'", path.display())).cause(&err);
        base.io_kind = Some(err.kind());
        match err.kind() {
            // Reading needs read rights: say so, not "write".
            io::ErrorKind::PermissionDenied
                if matches!(verb, "read" | "list" | "open" | "inspect" | "read the link") =>
            {
                base.with_kind(Kind::Permission).hint(format!(
                    "check that you may read '{}' (its owner or an administrator can `chmod a+r` it)",
                    path.display()
                ))
            }
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                let mut e = base.with_kind(Kind::Permission).hint(format!(
                    "check that you may write to '{}' (its owner can give you the right, or run elevated), or name a folder you may write to",
                    path.display()
                ));
                e.unwritable = Some(path.to_path_buf());
                e
            }
            io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => base.hint(
                "free some disk space (`cudnnm uninstall` old releases) or set CUDNNM_HOME to a larger disk",
            ),
            io::ErrorKind::NotFound => base.with_kind(Kind::NotFound),
            _ => base,
        }
    }

    /// The kind, which decides the exit code.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The one-line message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Underlying causes, outermost first.
    pub fn causes(&self) -> &[String] {
        &self.causes
    }

    /// The hint line, if any.
    pub fn hint_text(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    /// True when an OS error said the disk (or the user's quota) is full.
    pub fn is_disk_full(&self) -> bool {
        matches!(
            self.io_kind,
            Some(io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded)
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        for c in &self.causes {
            write!(f, ": {c}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Adds a message to a fallible result, in the style of `anyhow::Context`.
pub trait ResultExt<T> {
    /// Wraps any error under `message()`.
    fn context_with(self, message: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: fmt::Display> ResultExt<T> for std::result::Result<T, E> {
    fn context_with(self, message: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::msg(message()).cause(e))
    }
}

/// Adds an I/O verb and path to an `io::Result`.
pub trait IoResultExt<T> {
    /// See [`Error::io`].
    fn with_path(self, verb: &str, path: &Path) -> Result<T>;
}

impl<T> IoResultExt<T> for io::Result<T> {
    fn with_path(self, verb: &str, path: &Path) -> Result<T> {
        self.map_err(|e| Error::io(verb, path, e))
    }
}

/// An error's message followed by each new message of its sources, joined
/// with `: ` (`LoadLibraryExW failed: The specified module could not be
/// found. (os error 126)`): some errors (reqwest's, libloading's) keep
/// the useful part only in their sources.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut src = e.source();
    while let Some(s) = src {
        let m = s.to_string();
        if !parts.iter().any(|p| p.contains(&m)) {
            parts.push(m);
        }
        src = s.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_are_classified() {
        let p = Path::new("/x/y");
        let e = Error::io("write", p, io::Error::from(io::ErrorKind::PermissionDenied));
        assert_eq!(e.kind(), Kind::Permission);
        assert!(e.hint_text().unwrap().contains("may write to '/x/y'"));
        // A read refused is about read rights, not write rights.
        let e = Error::io("read", p, io::Error::from(io::ErrorKind::PermissionDenied));
        assert_eq!(e.kind(), Kind::Permission);
        assert!(e.hint_text().unwrap().contains("may read '/x/y'"), "{e:?}");
        let e = Error::io("write", p, io::Error::from(io::ErrorKind::StorageFull));
        assert_eq!(e.kind(), Kind::Failure);
        assert!(e.hint_text().unwrap().contains("disk space"));
        assert!(e.context("outer").is_disk_full());
        assert!(!Error::msg("x").is_disk_full());
    }

    #[test]
    fn credentials_in_urls_never_reach_an_error_line() {
        assert_eq!(
            without_userinfo("could not read http://alice:s3cr3t@127.0.0.1:8/simple/x/ (404)"),
            "could not read http://127.0.0.1:8/simple/x/ (404)"
        );
        assert_eq!(
            without_userinfo("a https://u@h/p and 'https://t:k@[::1]:9' end"),
            "a https://h/p and 'https://[::1]:9' end"
        );
        assert_eq!(without_userinfo("mail a@b, no URL"), "mail a@b, no URL");
        let e = Error::new(Kind::Network, "GET https://a:b@h/x")
            .cause("error sending request for url (https://a:b@h/x)")
            .hint("check https://a:b@h/")
            .context("could not read the package index https://a:b@h/");
        let all = format!("{e} {:?} {:?}", e.causes(), e.hint_text());
        assert!(!all.contains("a:b"), "{all}");
    }

    #[test]
    fn context_keeps_kind_and_hint() {
        let e = Error::new(Kind::Integrity, "inner")
            .hint("do x")
            .context("outer");
        assert_eq!(e.kind(), Kind::Integrity);
        assert_eq!(e.to_string(), "outer: inner");
        assert_eq!(e.hint_text(), Some("do x"));
    }
}
