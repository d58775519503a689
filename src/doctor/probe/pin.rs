//! The pin probe: the release that applies in the working folder, and where
//! that was decided (as `cudnnm current` resolves it).

use crate::doctor::snapshot::{CurrentLink, LockInfo, PinInfo, Snapshot};
use crate::env::Env;
use crate::home::Home;
use crate::pin::SpecSource;

/// Fills [`Snapshot::pin`]; a pin that cannot be read is a note.
pub(crate) fn probe(snap: &mut Snapshot, env: &Env, home: &Home) {
    match home.config() {
        Ok(c) => {
            snap.default_spec = c.default;
            snap.config_unknown = c.unknown.into_keys().collect();
        }
        Err(e) => {
            let mut text = e.message().to_string();
            for c in e.causes() {
                text.push_str(&format!("\ncaused by: {c}"));
            }
            if let Some(h) = e.hint_text() {
                text.push_str(&format!("\nhint: {h}"));
            }
            snap.config_error = Some(text);
        }
    }
    snap.current_links = current_links(home);
    snap.pin = match crate::pin::resolve_spec(None, env, home) {
        Ok(Some(r)) => Some({
            if let SpecSource::PinFile { path, .. } = &r.source {
                let lock = crate::pin::lockfile::lock_path(path);
                if let Ok(Some(l)) = crate::pin::lockfile::ProjectLock::read(&lock) {
                    snap.lock = Some(LockInfo {
                        path: lock.to_string_lossy().into_owned(),
                        release: l.release,
                    });
                }
            }
            PinInfo {
                spec: r.spec.to_string(),
                source: describe_source(&r.source),
            }
        }),
        Ok(None) => None,
        // The default could not be read because config.toml cannot: that is
        // `config-invalid`, not a pin to rewrite.
        Err(_) if snap.config_error.is_some() => None,
        Err(e) => {
            snap.notes.push(format!("pin: {}", e.message()));
            snap.pin_error = Some(match e.hint_text() {
                Some(h) => format!("{}\nhint: {h}", e.message()),
                None => e.message().to_string(),
            });
            None
        }
    };
}

fn describe_source(s: &SpecSource) -> String {
    match s {
        SpecSource::Flag => "--version".into(),
        SpecSource::EnvVar => "CUDNNM_VERSION".into(),
        SpecSource::PinFile { path, line } => format!("{}:{line}", path.display()),
        SpecSource::Default { path } => format!("default in {}", path.display()),
        SpecSource::SystemDefault { path } => format!("system default in {}", path.display()),
    }
}

/// The home's `current/cuda-<variant>` links (and `.path` records), each
/// with where it leads and whether that folder is there.
fn current_links(home: &Home) -> Vec<CurrentLink> {
    let Ok(rd) = std::fs::read_dir(home.current_dir()) else {
        return Vec::new();
    };
    let mut out: Vec<CurrentLink> = rd
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with("cuda-") {
                return None;
            }
            let target = if name.ends_with(".path") {
                std::fs::read_to_string(&path)
                    .ok()
                    .map(|t| t.trim().to_string())
            } else {
                std::fs::read_link(&path)
                    .ok()
                    .map(|t| t.to_string_lossy().into_owned())
            };
            let gone = match &target {
                Some(t) if name.ends_with(".path") => !std::path::Path::new(t).exists(),
                _ => !path.exists(),
            };
            Some(CurrentLink {
                path: path.to_string_lossy().into_owned(),
                target,
                gone,
            })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}
