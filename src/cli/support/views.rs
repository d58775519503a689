//! How a toolkit's state reads (`current`, `toolkits`).

use crate::deploy::NO_CUDNN;
use crate::ops::toolkits::{ToolkitState, UnfinishedChange};

/// `9.12.0.46_cuda12, symlink, deployed …, files match (backup 3)` or
/// `not managed by cudnnm (headers: cuDNN 8.9.7)`, or `no cuDNN`
/// ([`NO_CUDNN`], the words every command uses).
pub fn toolkit_state(t: &ToolkitState) -> String {
    match (&t.release, t.mode, &t.drift) {
        (Some(r), Some(m), Some(d)) => format!(
            "{r}, {m}, deployed {}, {}{}",
            t.deployed_at.as_deref().unwrap_or("?"),
            match &t.now_holds {
                // The words `verify` uses for the same judgement.
                Some(v) => format!(
                    "replaced: the toolkit now holds cuDNN {v} (deployed since by another cudnnm home, or by you); this home's record is out of date, not an error of this home{}",
                    t.put_back
                        .as_ref()
                        .map(|c| format!(" (`{c}` puts {r} back)"))
                        .unwrap_or_default()
                ),
                None => d.summary(),
            },
            match (t.backup_removed, t.backup) {
                (None, Some(b)) => format!(" (backup {b})"),
                (Some(r), Some(b)) => {
                    format!(" (backup {r} was removed; `rollback` restores backup {b})")
                }
                (Some(r), None) => format!(" (backup {r} was removed; no backup is left)"),
                (None, None) => String::new(),
            }
        ),
        // The same words as the backups' and recovery's "held" label.
        _ => match (&t.unmanaged_cudnn, t.unmanaged_files) {
            (Some(v), _) => format!("not managed by cudnnm (headers: cuDNN {v})"),
            (None, 0) => NO_CUDNN.into(),
            (None, n) => format!(
                "not managed by cudnnm ({n} cuDNN file{}, no version header)",
                if n == 1 { "" } else { "s" }
            ),
        },
    }
}

/// Another home's change to a toolkit, as one line for people.
pub fn unfinished_line(u: &UnfinishedChange) -> String {
    if u.running {
        format!("  {}; it holds the toolkit lock", u.hint)
    } else {
        format!("  {}", u.hint)
    }
}
