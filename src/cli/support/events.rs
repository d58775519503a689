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
        let printed = |c: CommandLine| super::printed(self, c);
        match render(event, self.env.is_windows(), &printed) {
            Some((Level::Status, line)) => self.status(line),
            Some((Level::Warning, line)) => self.warn(line),
            None => {}
        }
    }

    /// pip's messages on stderr as it writes them, none with `-q`.
    fn pip_output(&self) -> crate::catalog::pip::PipOutput {
        crate::cli::ui::pip_output(self.quiet)
    }
}

/// A line and where it goes.
pub(super) type Line = Option<(Level, String)>;

/// The line `event` prints, and where; `None` for an event that says
/// nothing. `windows`: the user's shell is Windows'; `printed`: a command
/// as a hint prints it for this home ([`super::printed`]).
pub fn render(event: &Event<'_>, windows: bool, printed: &dyn Fn(CommandLine) -> String) -> Line {
    use Event::*;
    match event {
        HomeLockWait { .. } | Warning(_) | Note(_) | ExportLeftBehind { .. } => general(event),
        ModulesRefreshed {
            dir,
            written,
            removed,
        } => Some((
            Level::Status,
            format!(
                "refreshed the cuDNN modulefiles in '{}' ({written} written, {removed} removed)",
                dir.display()
            ),
        )),
        ModulesStale {
            dir,
            error,
            command,
        } => Some((
            Level::Warning,
            format!(
                "could not refresh the cuDNN modulefiles in '{}' ({error}); they may name releases that are gone: run `{}`",
                dir.display(),
                printed(command.clone())
            ),
        )),
        RecordedToolkitLost { .. } | ToolkitChosen(_) | BuildChosen { .. } => {
            toolkits(event, windows)
        }
        UsingPinned { .. } | PickedForGpu { .. } | DeployingMisfit { .. } => deploying(event),
        IgnoredForLocal { .. }
        | Downloaded { .. }
        | PublishedAsWheel { .. }
        | WheelFromIndex { .. }
        | KeptWheel { .. }
        | FetchingWithPip { .. }
        | InstallingLocked { .. }
        | LockIgnored { .. } => installing(event),
        LockUnreadable { .. }
        | LockingInstalled { .. }
        | UnhashedArchive { .. }
        | LockingWheel { .. }
        | LockingFromIndex { .. }
        | LockWheelCached { .. }
        | LockFetchingWheel { .. }
        | LockWheelKept { .. }
        | LocalWheelLocked { .. } => locking(event, printed),
        ChosenForFrameworks { .. } | AdvisedInUse(_) | AdvisoryCovers { .. } => {
            super::frameworks::render(event)
        }
    }
}

/// The home lock, text the core gave, an export left behind.
fn general(event: &Event<'_>) -> Line {
    use Level::{Status, Warning};
    Some(match event {
        Event::HomeLockWait {
            lock_file,
            holder: None,
            ..
        } => (
            Status,
            format!(
                "waiting for another cudnnm process to finish (lock '{}')",
                lock_file.display()
            ),
        ),
        Event::HomeLockWait {
            held_file,
            holder: Some(h),
            ..
        } => (
            Status,
            format!(
                "waiting for another cudnnm process to finish ({h}; lock file '{}', this file system cannot lock; remove the file if that process is gone)",
                held_file.display()
            ),
        ),
        Event::Warning(w) => (Warning, w.to_string()),
        Event::Note(n) => (Status, n.to_string()),
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
        _ => return None,
    })
}

/// Toolkits lost, chosen, or choosing a CUDA build.
fn toolkits(event: &Event<'_>, windows: bool) -> Line {
    use Level::{Status, Warning};
    Some(match event {
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
        _ => return None,
    })
}

/// What `use` says while it chooses.
fn deploying(event: &Event<'_>) -> Line {
    use Level::{Status, Warning};
    Some(match event {
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
        _ => return None,
    })
}

/// What `install` says while it fetches.
fn installing(event: &Event<'_>) -> Line {
    use Level::{Status, Warning};
    Some(match event {
        Event::IgnoredForLocal { flag, what } => (
            Warning,
            format!("{flag} applies to catalog installs; ignored for '{what}'"),
        ),
        Event::Downloaded {
            name, cached: true, ..
        } => (Status, format!("using {name} from the download cache")),
        Event::Downloaded { name, url, .. } => (Status, format!("downloaded {name} from {url}")),
        Event::PublishedAsWheel {
            version,
            cuda,
            requirement,
        } => (
            Status,
            format!(
                "cuDNN {version} for CUDA {cuda} is published as a PyPI wheel: installing pip:{requirement}"
            ),
        ),
        Event::WheelFromIndex {
            version,
            cuda,
            file,
            index,
        } => (
            Status,
            format!(
                "cuDNN {version} for CUDA {cuda} is published as a wheel: fetching {file} from {index}"
            ),
        ),
        Event::KeptWheel { name, requirement } => (
            Status,
            format!("using {name} from the download cache (pip:{requirement}, no pip run)"),
        ),
        Event::FetchingWithPip {
            requirement,
            python,
        } => (
            Status,
            format!("fetching {requirement} with `{python} -m pip download`"),
        ),
        Event::InstallingLocked {
            release,
            lock,
            spec,
            source,
        } => (
            Status,
            format!(
                "installing {release} as locked in '{}' (pin {spec}, {source})",
                lock.display()
            ),
        ),
        Event::LockIgnored {
            release,
            lock,
            spec,
            source,
        } => (
            Warning,
            format!(
                "the lock '{}' names {release}, which does not satisfy the pin {spec} ({source}); resolving the pin instead (`cudnnm lock` records the new pick)",
                lock.display()
            ),
        ),
        _ => return None,
    })
}

/// What `lock` says while it records the bytes.
fn locking(event: &Event<'_>, printed: &dyn Fn(CommandLine) -> String) -> Line {
    use Level::{Status, Warning};
    Some(match event {
        Event::LockUnreadable { lock, why } => (
            Warning,
            format!(
                "the lock file '{}' could not be read ({why}); writing it anew",
                lock.display()
            ),
        ),
        Event::LockingInstalled { release, spec } => (
            Status,
            format!("locking cuDNN {release}, the release the pin {spec} selects here (installed)"),
        ),
        Event::UnhashedArchive { name, platform } => (
            Warning,
            format!("{name} for {platform} has no published SHA-256; left out of the lock"),
        ),
        Event::LockingWheel { release, platform } => (
            Status,
            format!(
                "cuDNN {release} is published only on PyPI; its lock entry for {platform} is the SHA-256 of the wheel pip fetches"
            ),
        ),
        Event::LockingFromIndex {
            release,
            index,
            platforms,
        } => (
            Status,
            format!(
                "locking cuDNN {release} from the wheels {index} publishes for {} (nothing downloaded)",
                platforms
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Event::LockWheelCached { name } => (
            Status,
            format!(
                "lock: {name} is in the download cache; recording its SHA-256 (nothing downloaded)"
            ),
        ),
        Event::LockFetchingWheel { requirement } => (
            Status,
            format!(
                "lock: fetching {requirement} with pip to record its SHA-256 (kept in the download cache)"
            ),
        ),
        Event::LockWheelKept { name, size } => (
            Status,
            format!(
                "lock: kept {name} ({}) in the download cache; `{}` installs it from there",
                super::human_size(*size),
                printed(CommandLine::install_here())
            ),
        ),
        Event::LocalWheelLocked {
            platform,
            sha,
            file,
            requirement,
        } => (
            Warning,
            format!(
                "the lock's SHA-256 for {platform} ({sha}) is that of the local file '{file}', and no catalog entry tells the one PyPI publishes for {requirement}: a teammate's pip must fetch exactly those bytes (from the same local folder, say), or their install fails"
            ),
        ),
        _ => return None,
    })
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

    fn no_home(c: CommandLine) -> String {
        c.for_host(false)
    }

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
            render(
                &Event::ToolkitChosen(&toolkit("--cuda-root")),
                false,
                &no_home
            ),
            None
        );
        assert_eq!(
            render(
                &Event::ToolkitChosen(&toolkit("CUDA_PATH")),
                false,
                &no_home
            ),
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
            &no_home,
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
            &no_home,
        )
        .unwrap();
        assert_eq!(level, Level::Warning);
        assert!(line.contains("`cudnnm toolkits forget /gone`"), "{line}");
    }

    #[test]
    fn downloads_and_kept_wheels_read_as_before() {
        let line = |e: &Event<'_>| render(e, false, &no_home).unwrap();
        assert_eq!(
            line(&Event::Downloaded {
                name: "a.tar.xz",
                url: "https://x/a.tar.xz",
                cached: true
            }),
            (
                Level::Status,
                "using a.tar.xz from the download cache".into()
            )
        );
        assert_eq!(
            line(&Event::Downloaded {
                name: "a.tar.xz",
                url: "https://x/a.tar.xz",
                cached: false
            })
            .1,
            "downloaded a.tar.xz from https://x/a.tar.xz"
        );
        let home = |c: CommandLine| format!("[{}]", c.for_host(false));
        let (level, kept) = render(
            &Event::LockWheelKept {
                name: "w.whl",
                size: 1536,
            },
            false,
            &home,
        )
        .unwrap();
        assert_eq!(level, Level::Status);
        assert_eq!(
            kept,
            "lock: kept w.whl (1.5 KiB) in the download cache; `[cudnnm install]` installs it from there"
        );
        assert_eq!(
            line(&Event::IgnoredForLocal {
                flag: "--platform",
                what: "./x.zip"
            }),
            (
                Level::Warning,
                "--platform applies to catalog installs; ignored for './x.zip'".into()
            )
        );
    }
}
