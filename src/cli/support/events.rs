//! How the events of operations read ([`crate::ops::Event`]): each is a
//! status line on stderr (none with `-q`) or a warning (always shown).

use crate::cli::Ctx;
use crate::command::CommandLine;
use crate::ops::Event;
use crate::toolkit::Toolkit;

/// Where an event's line goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// A status line (suppressed by `-q`).
    Status,
    /// A warning (always shown).
    Warning,
}

impl crate::ops::Reporter for Ctx {
    fn event(&self, event: &Event<'_>) {
        match render(event, self.env.is_windows()) {
            Some((Level::Status, line)) => self.status(line),
            Some((Level::Warning, line)) => self.warn(line),
            None => {}
        }
    }
}

/// The line `event` prints, and where; `None` for an event that says
/// nothing. `windows`: the user's shell is Windows' (commands in the line).
pub fn render(event: &Event<'_>, windows: bool) -> Option<(Level, String)> {
    use Level::{Status, Warning};
    let line = match event {
        Event::HomeLockWait {
            lock_file,
            held_file,
            holder,
        } => match holder {
            None => (
                Status,
                format!(
                    "waiting for another cudnnm process to finish (lock '{}')",
                    lock_file.display()
                ),
            ),
            Some(h) => (
                Status,
                format!(
                    "waiting for another cudnnm process to finish ({h}; lock file '{}', this file system cannot lock; remove the file if that process is gone)",
                    held_file.display()
                ),
            ),
        },
        Event::Warning(w) => (Warning, w.to_string()),
        Event::Note(n) => (Status, n.to_string()),
        Event::RecordedToolkitLost {
            release,
            root,
            gone: true,
            ..
        } => (
            Warning,
            format!(
                "cuDNN {release} is recorded in '{}', whose folder is gone; `{}` forgets it (its backups stay)",
                root.display(),
                CommandLine::forget_toolkit(root).for_host(windows)
            ),
        ),
        Event::RecordedToolkitLost {
            release,
            root,
            error,
            ..
        } => (
            Warning,
            format!(
                "cuDNN {release} is recorded in '{}', which is no longer a toolkit: {error}",
                root.display()
            ),
        ),
        // `--cuda-root` named it: nothing to say.
        Event::ToolkitChosen(t) if t.found_by == "--cuda-root" => return None,
        Event::ToolkitChosen(t) => (
            Status,
            format!(
                "toolkit '{}' (CUDA {}): {}",
                t.root.display(),
                t.cuda,
                toolkit_reason(t)
            ),
        ),
        Event::BuildChosen { spec, toolkit: t } => (
            Status,
            format!(
                "choosing the build of cuDNN {spec} for the toolkit '{}' (CUDA {}): {}",
                t.root.display(),
                t.cuda,
                toolkit_reason(t)
            ),
        ),
        Event::ExportLeftBehind { old, dest, why } => {
            let old = old.display();
            (
                Warning,
                format!(
                    "could not remove the earlier export, moved aside to '{old}' ({why}); the next `cudnnm export dir` to '{}' removes it, or: chmod -R u+w '{old}' && rm -rf '{old}'",
                    dest.display()
                ),
            )
        }
        Event::UsingPinned { spec, source } => {
            (Status, format!("using cuDNN {spec} ({})", source.label()))
        }
        Event::PickedForGpu {
            spec,
            picked,
            gpu,
            newer,
            needs,
        } => (
            Status,
            format!(
                "picked cuDNN {}, the newest installed '{spec}' release that runs on {} (compute capability {}); cuDNN {} needs {needs} or newer",
                picked.id(),
                gpu.name,
                gpu.compute,
                newer.id(),
            ),
        ),
        Event::DeployingMisfit { release, toolkit } => {
            let (ma, mi) = toolkit.cuda_major_minor();
            (
                Warning,
                format!(
                    "cuDNN {} is built for CUDA {} and does not fit CUDA {ma}.{mi}; deploying it anyway (--force)",
                    release.id(),
                    release.cuda()
                ),
            )
        }
    };
    Some(line)
}

/// Why a toolkit was chosen, as a clause: the selector's reasons read as
/// sentences ("the only …"); a bare source (`CUDA_PATH`,
/// `deployments.toml`) gets "found by".
fn toolkit_reason(t: &Toolkit) -> String {
    if t.found_by.starts_with("the ") {
        t.found_by.clone()
    } else {
        format!("found by {}", t.found_by)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn toolkit(found_by: &str) -> Toolkit {
        Toolkit {
            root: "/usr/local/cuda-12.4".into(),
            cuda: "12.4.1".parse().unwrap(),
            layout: crate::toolkit::Layout::Linux,
            found_by: found_by.into(),
        }
    }

    #[test]
    fn a_toolkit_chosen_says_why_unless_the_user_named_it() {
        assert_eq!(
            render(&Event::ToolkitChosen(&toolkit("--cuda-root")), false),
            None
        );
        assert_eq!(
            render(&Event::ToolkitChosen(&toolkit("CUDA_PATH")), false),
            Some((
                Level::Status,
                "toolkit '/usr/local/cuda-12.4' (CUDA 12.4.1): found by CUDA_PATH".into()
            ))
        );
        let spec = "9.1".parse().unwrap();
        let t = toolkit("the only toolkit found");
        let (level, line) = render(
            &Event::BuildChosen {
                spec: &spec,
                toolkit: &t,
            },
            false,
        )
        .unwrap();
        assert_eq!(level, Level::Status);
        assert_eq!(
            line,
            "choosing the build of cuDNN 9.1 for the toolkit '/usr/local/cuda-12.4' (CUDA 12.4.1): the only toolkit found"
        );
    }

    #[test]
    fn a_lost_toolkit_is_a_warning_with_the_command_that_forgets_it() {
        let release = "9.1.0.70_cuda12".parse().unwrap();
        let error = crate::error::Error::msg("no CUDA version");
        let (level, line) = render(
            &Event::RecordedToolkitLost {
                release: &release,
                root: Path::new("/gone"),
                gone: true,
                error: &error,
            },
            false,
        )
        .unwrap();
        assert_eq!(level, Level::Warning);
        assert!(line.contains("`cudnnm toolkits forget /gone`"), "{line}");
    }
}
