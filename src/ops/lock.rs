//! `lock`: the release the pin selects on this machine, written to
//! `.cudnn-version.lock` beside the pin with, per platform, where its bytes
//! come from and their SHA-256 (`docs/architecture.md#pins`); and the rule
//! of which installed bytes another machine can fetch again.

/// Whether the installed bytes of release `r` are ones another machine can
/// fetch, so that locking them (`cudnnm lock`) is worth suggesting: a
/// catalog archive's published hash; a downloaded archive's URL; a wheel
/// whose hash is the one the catalog says PyPI publishes for its
/// requirement, or, where the catalog tells none, a wheel pip fetched.
pub fn reproducible(cat: &crate::catalog::Catalog, r: &crate::store::Release) -> bool {
    let s = &r.receipt.source;
    let id = r.release_id();
    let Some(sha) = &s.sha256 else {
        return false;
    };
    if cat.archives().iter().any(|a| {
        a.version == id.version
            && a.cuda == id.cuda
            && a.platform == r.platform()
            && a.hashes.iter().any(|h| &h.sha256 == sha)
    }) {
        return true;
    }
    if s.kind == crate::shape::Shape::Wheel || s.dist.is_some() {
        let Some(pip) = s.exact_pip_requirement(&id.version) else {
            return false;
        };
        let published = cat.wheel_hashes(project_of(&pip), &id.version, r.platform());
        return if published.is_empty() {
            fetched_by_pip(s)
        } else {
            published.contains(&sha)
        };
    }
    let (_, is_file) = s.reinstall_arg(&r.id());
    !is_file
        && s.url
            .as_deref()
            .is_some_and(crate::catalog::is_absolute_url)
}

/// Whether pip fetched the installed wheel (`install pip:REQ`), rather
/// than the user giving a local file.
pub fn fetched_by_pip(s: &crate::store::Source) -> bool {
    s.url.as_deref().is_some_and(|u| u.starts_with("pip:"))
}

/// The project of an exact requirement (`nvidia-cudnn-jit-cu12==9.12.0.46`).
pub fn project_of(requirement: &str) -> &str {
    requirement
        .split_once("==")
        .map_or(requirement, |(p, _)| p.trim())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::hash::Sha256Hex;
    use crate::ops::testing::{Fixture, folder};
    use crate::shape::Shape;
    use crate::store::Source;

    fn sha(c: char) -> Sha256Hex {
        Sha256Hex::parse(&c.to_string().repeat(64)).unwrap()
    }

    #[test]
    fn bytes_another_machine_can_fetch_are_reproducible_a_local_file_is_not() {
        let f = Fixture::new();
        let cat = Catalog::embedded();
        // A folder has no hash: nothing to lock.
        assert!(!reproducible(
            &cat,
            &f.release("9.1.0.70", "12", folder("x"))
        ));
        // A downloaded archive: its URL gives the bytes back.
        let url = Source {
            kind: Shape::Redist,
            name: "cudnn-linux-x86_64-9.1.1.17_cuda12-archive.tar.xz".into(),
            sha256: Some(sha('a')),
            size: 10,
            url: Some("https://mirror.example/cudnn.tar.xz".into()),
            dist: None,
        };
        assert!(reproducible(
            &cat,
            &f.release("9.1.1.17", "12", url.clone())
        ));
        // The same archive given as a local file, with no published hash.
        let local = Source { url: None, ..url };
        assert!(!reproducible(&cat, &f.release("9.2.0.82", "12", local)));
    }

    #[test]
    fn a_wheel_pip_fetched_is_reproducible_when_no_hash_is_published() {
        let f = Fixture::new();
        let cat = Catalog::embedded();
        let wheel = |url: Option<&str>| Source {
            kind: Shape::Wheel,
            name: "nvidia_cudnn_cu12-9.3.0.75-py3-none-manylinux2014_x86_64.whl".into(),
            sha256: Some(sha('b')),
            size: 10,
            url: url.map(str::to_string),
            dist: None,
        };
        assert!(fetched_by_pip(&wheel(Some(
            "pip:nvidia-cudnn-cu12==9.3.0.75"
        ))));
        assert!(!fetched_by_pip(&wheel(None)));
        let by_pip = f.release(
            "9.3.0.75",
            "12",
            wheel(Some("pip:nvidia-cudnn-cu12==9.3.0.75")),
        );
        let published = cat.wheel_hashes("nvidia-cudnn-cu12", by_pip.version(), by_pip.platform());
        // Where the catalog tells PyPI's hash, only those bytes count.
        assert_eq!(reproducible(&cat, &by_pip), published.is_empty());
        assert_eq!(
            project_of("nvidia-cudnn-cu12 == 9.3.0.75"),
            "nvidia-cudnn-cu12"
        );
    }
}
