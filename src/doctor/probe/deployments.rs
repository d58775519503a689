//! The deployments probe: what cudnnm placed in each toolkit
//! (`deployments.toml`) against what is at those paths now.

use std::fs;

use super::s;
use crate::deploy::Deployments;
use crate::doctor::snapshot::{DeploymentState, FileState, PlacedState};
use crate::home::Home;
use crate::store::Release;
use crate::toolkit::Toolkit;

/// The deployments `home` records; a record that cannot be read is a note
/// (and no deployments).
pub(crate) fn load(notes: &mut Vec<String>, home: &Home) -> Deployments {
    Deployments::load(home).unwrap_or_else(|e| {
        notes.push(format!("deployments: {e}"));
        Deployments::default()
    })
}

/// What is at each path cudnnm placed, against what it placed.
pub(crate) fn states(
    releases: &[Release],
    deployments: &Deployments,
    windows: bool,
) -> Vec<DeploymentState> {
    deployments
        .entries
        .iter()
        .map(|d| {
            let release = releases.iter().find(|r| r.release_id() == d.release);
            let receipt = release.map(|r| &r.receipt);
            let files = d
                .files
                .iter()
                .map(|p| {
                    let state = match fs::symlink_metadata(&p.path) {
                        Err(_) => FileState::Missing,
                        Ok(m) if m.file_type().is_symlink() => FileState::Link {
                            target: fs::read_link(&p.path).map(|t| s(&t)).unwrap_or_default(),
                        },
                        Ok(m) => FileState::File { size: m.len() },
                    };
                    // A file a rollback restored is expected as recorded.
                    let restored = crate::deploy::status::restored_from_backup(p, receipt);
                    let from = p.from.release_path();
                    let expected_size = if p.entry.is_link() {
                        None
                    } else if restored.is_some() {
                        Some(p.entry.size())
                    } else {
                        receipt
                            .and_then(|r| r.files.iter().find(|f| Some(f.path.as_str()) == from))
                            .map(|f| f.entry.size())
                    };
                    let store_file = matches!(state, FileState::File { .. })
                        && release.is_some_and(|r| {
                            from.is_some_and(|from| {
                                crate::platform::same_file(&p.path, &r.dir.join(from))
                            })
                        });
                    PlacedState {
                        store_file,
                        path: s(&p.path),
                        from: p.from.to_string(),
                        expected_link: p.entry.link_target().map(str::to_string),
                        expected_size,
                        restored,
                        state,
                    }
                })
                .collect();
            // Found where `use` looks (`targets/<arch>/…` included), as
            // `current` and `verify` find them.
            let extra = Toolkit::at(&d.toolkit, "deployments.toml", windows)
                .map(|t| crate::deploy::status::extra_files(d, &t))
                .unwrap_or_default()
                .iter()
                .map(|p| s(p))
                .collect();
            DeploymentState {
                toolkit: s(&d.toolkit),
                release: d.release.clone(),
                mode: Some(d.mode),
                files,
                extra,
                toolkit_gone: crate::toolkit::is_gone(&d.toolkit),
            }
        })
        .collect()
}
