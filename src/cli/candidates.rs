//! Dynamic completion (clap_complete's `CompleteEnv`, the `COMPLETE=bash`
//! protocol): besides commands and flags, the shell is offered what this
//! home holds — installed releases for a SPEC or `--version`, backup ids for
//! `rollback --to` and `backups remove`, toolkit folders for
//! `--cuda-root`. The candidates are read when the shell asks, so they are
//! never stale, from the home a `--home` on the line names (else
//! `CUDNNM_HOME`). Reading fails quietly: a completion never prints an error.

use std::ffi::OsString;

use clap_complete::engine::{
    ArgValueCandidates, ArgValueCompleter, CompletionCandidate, PathCompleter, ValueCompleter,
};

use crate::env::Env;
use crate::home::Home;

/// Answers a completion request when the shell sent one (`COMPLETE` set
/// by the registration `cudnnm completions SHELL` prints): writes the
/// candidates to stdout and returns `true`; `false` for a normal run.
pub fn complete_if_asked(args: &[OsString]) -> bool {
    if std::env::var_os("COMPLETE").is_none_or(|v| v.is_empty()) {
        return false;
    }
    // The words being completed follow `--`: a `--home DIR` among them is
    // the home the candidates come from.
    let _ = LINE_HOME.set(home_on_line(args));
    let cwd = std::env::current_dir().ok();
    clap_complete::CompleteEnv::with_factory(command)
        .try_complete(args.iter().cloned(), cwd.as_deref())
        .unwrap_or(true)
}

/// The shell code that registers `completer` (this binary) for `shell`'s
/// dynamic completion, as `COMPLETE=SHELL cudnnm` prints it.
pub fn registration(shell: clap_complete::Shell, completer: &str) -> std::io::Result<Vec<u8>> {
    use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
    let s: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &Bash,
        clap_complete::Shell::Zsh => &Zsh,
        clap_complete::Shell::Fish => &Fish,
        clap_complete::Shell::Elvish => &Elvish,
        _ => &Powershell,
    };
    let mut buf = Vec::new();
    s.write_registration("COMPLETE", "cudnnm", "cudnnm", completer, &mut buf)?;
    Ok(buf)
}

/// [`super::help::command`] with the value candidates attached.
pub fn command() -> clap::Command {
    let releases = || ArgValueCandidates::new(installed_releases);
    let backups = || ArgValueCandidates::new(backup_ids);
    let toolkits = || ArgValueCompleter::new(toolkit_roots_or_folders);
    let mut cmd = super::help::command();
    for (sub, arg) in [
        ("use", "spec"),
        ("uninstall", "spec"),
        ("pin", "spec"),
        ("default", "spec"),
        ("current", "version"),
        ("which", "version"),
        ("exec", "version"),
        ("env", "version"),
    ] {
        cmd = cmd.mut_subcommand(sub, |c| c.mut_arg(arg, |a| a.add(releases())));
    }
    cmd = cmd.mut_subcommand("export", |c| {
        c.mut_subcommand("dir", |c| c.mut_arg("spec", |a| a.add(releases())))
    });
    cmd = cmd.mut_subcommand("rollback", |c| c.mut_arg("to", |a| a.add(backups())));
    cmd = cmd.mut_subcommand("backups", |c| {
        c.mut_arg("remove", |a| a.add(backups()))
            .mut_subcommand("remove", |c| c.mut_arg("ids", |a| a.add(backups())))
    });
    cmd = cmd.mut_subcommand("toolkits", |c| {
        c.mut_subcommand("forget", |c| {
            c.mut_arg("root", |a| {
                a.add(ArgValueCandidates::new(gone_toolkit_roots))
            })
        })
    });
    for sub in ["use", "rollback", "current", "backups"] {
        cmd = cmd.mut_subcommand(sub, |c| c.mut_arg("cuda_root", |a| a.add(toolkits())));
    }
    cmd
}

/// The `--home` (and `--system-home`) of the command line being completed.
static LINE_HOME: std::sync::OnceLock<(Option<std::path::PathBuf>, Option<std::path::PathBuf>)> =
    std::sync::OnceLock::new();

/// `--home DIR` / `--home=DIR` and `--system-home` among the words after
/// `--` (the line being completed), the last of each.
fn home_on_line(args: &[OsString]) -> (Option<std::path::PathBuf>, Option<std::path::PathBuf>) {
    let words: Vec<String> = args
        .iter()
        .skip_while(|a| *a != "--")
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut found = (None, None);
    for (i, w) in words.iter().enumerate() {
        for (flag, slot) in [("--home", &mut found.0), ("--system-home", &mut found.1)] {
            if let Some(v) = w.strip_prefix(&format!("{flag}=")) {
                *slot = Some(v.into());
            } else if w == flag
                && let Some(v) = words.get(i + 1)
            {
                *slot = Some(v.into());
            }
        }
    }
    found
}

/// The home a completion reads: a `--home` on the line being completed,
/// else `CUDNNM_HOME`, else the platform's.
fn home() -> Option<(Env, Home)> {
    let env = Env::from_process();
    let (home, system) = LINE_HOME.get().cloned().unwrap_or_default();
    let system = Home::locate_system(system.as_deref(), &env);
    let home = Home::locate(home.as_deref(), &env)
        .ok()?
        .with_system(system);
    Some((env, home))
}

/// Every installed release: its id (`9.12.0.46_cuda12`), then its version
/// alone, each with where it came from.
fn installed_releases() -> Vec<CompletionCandidate> {
    let Some((_, home)) = home() else {
        return Vec::new();
    };
    let releases = crate::store::Store::new(&home)
        .releases()
        .unwrap_or_default();
    let mut out = Vec::new();
    for r in releases.iter().rev() {
        let help = format!("cuDNN for CUDA {}, {}", r.cuda(), r.platform());
        out.push(CompletionCandidate::new(r.id()).help(Some(help.clone().into())));
        out.push(CompletionCandidate::new(r.version().to_string()).help(Some(help.into())));
    }
    out.dedup_by(|a, b| a.get_value() == b.get_value());
    out
}

/// Every backup id, with what it held and of which toolkit.
fn backup_ids() -> Vec<CompletionCandidate> {
    let Some((_, home)) = home() else {
        return Vec::new();
    };
    crate::deploy::backup::list(&home)
        .unwrap_or_default()
        .iter()
        .rev()
        .map(|b| {
            CompletionCandidate::new(b.record.id.to_string()).help(Some(
                format!("{}, {}", b.record.held, b.record.toolkit.display()).into(),
            ))
        })
        .collect()
}

/// The toolkit roots `deployments.toml` records whose folder is gone (what
/// `toolkits forget` takes), with the release recorded there.
fn gone_toolkit_roots() -> Vec<CompletionCandidate> {
    let Some((_, home)) = home() else {
        return Vec::new();
    };
    crate::deploy::Deployments::load(&home)
        .unwrap_or_default()
        .entries
        .iter()
        .filter(|d| crate::toolkit::is_gone(&d.toolkit))
        .map(|d| {
            CompletionCandidate::new(d.toolkit.clone().into_os_string())
                .help(Some(format!("{}, folder gone", d.release).into()))
        })
        .collect()
}

/// For `--cuda-root`: the toolkit folders cudnnm knows that start with
/// what is typed, then the folders the typed path leads to — a toolkit
/// new to this home is completed as any folder is.
fn toolkit_roots_or_folders(current: &std::ffi::OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let mut out: Vec<CompletionCandidate> = toolkit_roots()
        .into_iter()
        .filter(|c| c.get_value().to_string_lossy().starts_with(typed.as_ref()))
        .collect();
    // A known toolkit is offered once: not again as `ROOT/` by the folders.
    let bare = |v: &std::ffi::OsStr| {
        let v = v.to_string_lossy();
        v.trim_end_matches(['/', '\\']).to_string()
    };
    for c in PathCompleter::dir().complete(current) {
        if !out
            .iter()
            .any(|o| bare(o.get_value()) == bare(c.get_value()))
        {
            out.push(c);
        }
    }
    out
}

/// The toolkit folders found here and those the home has deployed to or
/// backed up.
fn toolkit_roots() -> Vec<CompletionCandidate> {
    let Some((env, home)) = home() else {
        return Vec::new();
    };
    let mut roots: Vec<std::path::PathBuf> = crate::toolkit::discover(&env)
        .into_iter()
        .map(|t| t.root)
        .collect();
    let deployed = crate::deploy::Deployments::load(&home)
        .map(|d| d.entries.into_iter().map(|e| e.toolkit).collect::<Vec<_>>())
        .unwrap_or_default();
    let backed_up = crate::deploy::backup::list(&home)
        .unwrap_or_default()
        .into_iter()
        .map(|b| b.record.toolkit);
    for r in deployed.into_iter().chain(backed_up) {
        if !roots.contains(&r) && r.is_dir() {
            roots.push(r);
        }
    }
    roots
        .into_iter()
        .map(|r| CompletionCandidate::new(r.into_os_string()))
        .collect()
}
