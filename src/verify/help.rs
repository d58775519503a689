//! What to do about a record that does not match: commands that can work
//! (releases the catalog lists, the deployment's own release and mode),
//! never one that cannot find what it needs.

use super::Check;
use crate::catalog::offer::{Offer, best_offer};
use crate::command::CommandLine;
use crate::deploy::{Deployment, Deployments, Mode};
use crate::store::{Release, Source};
use crate::version::Spec;

/// Commands verify prints are for this machine's shell.
const HOST_WINDOWS: bool = crate::platform::HOST_WINDOWS;

/// The commands that repair store release `id` while it is deployed in
/// `deployed` (toolkit root, mode): `install --force` imports it again (a
/// deployed release only from bytes its receipt records), which repairs
/// what symlink deployments lead to; a hardlink or copy deployment holds
/// its own files, so it is deployed again by its mode. Written for the
/// shell of a Windows machine when `windows`.
pub fn repair_commands(
    id: &str,
    install: &CommandLine,
    deployed: &[(String, Mode)],
    windows: bool,
) -> Vec<String> {
    let mut cmds = vec![install.for_host(windows)];
    cmds.extend(
        deployed
            .iter()
            .filter(|(_, m)| *m != Mode::Symlink)
            .map(|(t, m)| CommandLine::use_(id).cuda_root(t).mode(m).for_host(windows)),
    );
    cmds
}

/// How to import release `id` again: from the source its receipt names
/// ([`Source::reinstall_arg`]); without a receipt, the catalog's archive or
/// wheel of exactly that release — never a command that cannot find it.
pub(super) fn reinstall_help(offers: &[Offer], id: &str, source: Option<&Source>) -> String {
    if let Some(src) = source {
        let (arg, file) = src.reinstall_arg(id);
        let cmd = CommandLine::install_from(&arg, file)
            .force()
            .for_host(HOST_WINDOWS);
        return if file {
            format!("import {id} again from the file it came from ({arg}): `{cmd}`")
        } else {
            format!("import {id} again: `{cmd}`")
        };
    }
    let spec: Option<Spec> = id.parse().ok().filter(|s: &Spec| s.cuda.is_some());
    if let Some(sp) = &spec
        && let Some(o) = best_offer(offers, sp, None).filter(|o| Some(&o.version) == sp.version())
    {
        return format!(
            "import {id} again: `{}`",
            o.install().force().for_host(HOST_WINDOWS)
        );
    }
    format!(
        "import {id} again from the archive or wheel it came from with `cudnnm install --force` and that file; the catalog does not list it"
    )
}

/// What to do about a store release whose files changed: import it again
/// from its source, then deploy it again where a deployment holds its own
/// files ([`repair_commands`]).
pub(super) fn release_help(offers: &[Offer], r: &Release, deployments: &Deployments) -> String {
    let id = r.id();
    let deployed: Vec<(String, Mode)> = deployments
        .entries
        .iter()
        .filter(|d| d.release == r.release_id())
        .map(|d| (d.toolkit.display().to_string(), d.mode))
        .collect();
    if deployed.is_empty() {
        return reinstall_help(offers, &id, Some(&r.receipt.source));
    }
    let (arg, file) = r.receipt.source.reinstall_arg(&id);
    let install = CommandLine::install_from(&arg, file).force();
    let cmds = repair_commands(&id, &install, &deployed, HOST_WINDOWS);
    format!(
        "{id} is deployed: import it again from its source (its receipt's bytes; the links deployed lead to them again){}: {}",
        if cmds.len() > 1 {
            ", then deploy it again where the toolkit holds its own files"
        } else {
            ""
        },
        cmds.iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", then ")
    )
}

/// What a deployment whose toolkit now holds cuDNN `now` instead means: not
/// an error of this home, nothing to do if `now` belongs there; the command
/// that puts this home's release back if it does not.
pub(super) fn now_holds_help(d: &Deployment, now: &crate::version::Version) -> String {
    format!(
        "'{}' now holds cuDNN {now} (not this home's record of {}): another cudnnm home, or you, deployed it since; the toolkit is consistent and this home's record is out of date, not an error of this home. Nothing to do if cuDNN {now} belongs there; to put {} back, `{}` (what is there now goes into a backup)",
        d.toolkit.display(),
        d.release,
        d.release,
        CommandLine::use_(d.release.to_string())
            .cuda_root(&d.toolkit)
            .mode(d.mode)
            .for_host(HOST_WINDOWS)
    )
}

/// What an orphaned deployment means ([`super::Check::orphaned`]): its
/// files are whole and keep working without the store release; to check
/// and switch it as usual again, import the release again from its source,
/// or deploy an installed release there (the newest of the same CUDA
/// variant, when there is one), which backs these files up as the
/// release's, not the user's.
pub(super) fn orphaned_help(offers: &[Offer], d: &Deployment, installed: &[Release]) -> String {
    let other = installed
        .iter()
        .filter(|r| r.cuda() == &d.release.cuda)
        .max_by(|a, b| a.version().cmp(b.version()))
        .map(Release::id)
        .unwrap_or_else(|| "OTHER".into());
    format!(
        "{} is not in the store any more (uninstalled), but its {} in '{}' still match what was placed and keep working: nothing is damaged. To check them against the release again, {}; or switch the toolkit to an installed release with `{}` (these files then go into a backup as {}'s)",
        d.release,
        if d.mode == Mode::Copy {
            "copies"
        } else {
            "hard-linked files"
        },
        d.toolkit.display(),
        reinstall_help(offers, &d.release.to_string(), d.source.as_ref()),
        CommandLine::use_(other)
            .cuda_root(&d.toolkit)
            .for_host(HOST_WINDOWS),
        d.release
    )
}

/// What to do about a deployment whose toolkit folder is gone: forget it
/// (`cudnnm toolkits forget`); its backups (`ids`) stay.
pub(super) fn toolkit_gone_help(d: &Deployment, ids: &[u64]) -> String {
    let kept = match ids {
        [] => String::new(),
        [one] => format!("; backup {one} of it stays (`cudnnm backups` lists it)"),
        many => format!(
            "; backups {} of it stay (`cudnnm backups` lists them)",
            many.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "the toolkit folder '{}' is gone (deleted or moved), with the {} this home deployed there: nothing in the store or the backups is damaged. `{}` forgets it{kept}",
        d.toolkit.display(),
        d.release,
        CommandLine::forget_toolkit(&d.toolkit).for_host(HOST_WINDOWS)
    )
}

/// What to do about a deployment: redeploy it by its recorded mode when its
/// files changed; keep or drop the files a rollback restored.
pub(super) fn deployment_help(
    offers: &[Offer],
    d: &Deployment,
    installed: bool,
    c: &Check,
) -> Vec<String> {
    let root = d.toolkit.display();
    let use_cmd = CommandLine::use_(d.release.to_string())
        .cuda_root(&d.toolkit)
        .mode(d.mode)
        .for_host(HOST_WINDOWS);
    let mut help = Vec::new();
    let files_changed = !c.modified.is_empty() || !c.missing.is_empty() || !c.extra.is_empty();
    // A library that reports another version was changed; one whose files
    // all match but that does not load lacks something else: deploying it
    // again would place the same bytes.
    let misreports = c
        .library
        .as_ref()
        .is_some_and(|l| !l.ok && l.reported.is_some());
    let unloadable = c
        .library
        .as_ref()
        .filter(|l| l.reported.is_none() && l.error.is_some());
    let changed = files_changed || misreports;
    if let Some(l) = unloadable.filter(|_| !changed && installed) {
        help.push(format!(
            "the files in {root} are exactly what cudnnm placed, but {} does not load here: a library it needs is missing (the CUDA runtime, cuBLAS, zlibwapi.dll for cuDNN 8.3–8.9 on Windows, the Visual C++ runtime) or it is built for another system; `{}` names what is missing",
            l.path,
            CommandLine::doctor()
                .cuda_root(&d.toolkit)
                .for_host(HOST_WINDOWS)
        ));
    }
    if !installed {
        help.push(format!(
            "{} is not in the store any more: {}, then `{use_cmd}` deploys it again",
            d.release,
            reinstall_help(offers, &d.release.to_string(), d.source.as_ref())
        ));
    } else if changed {
        help.push(format!(
            "`{use_cmd}` deploys {} again; what is there now goes into a backup (`cudnnm rollback` brings it back)",
            d.release
        ));
    }
    if !c.restored.is_empty() {
        let n = c.restored.len();
        help.push(format!(
            "{n} file{} in {root} {} not {}'s copy but yours: a change made before switching away, which `cudnnm rollback` restored from its backup. To keep {}, nothing needs doing (a later `cudnnm use` backs {} up first). To go back to the release's copy, run `{use_cmd}`; the changed file{} then go{} into a backup, and `cudnnm rollback` restores {} again",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" },
            d.release,
            if n == 1 { "it" } else { "them" },
            if n == 1 { "it" } else { "them" },
            if n == 1 { "" } else { "s" },
            if n == 1 { "es" } else { "" },
            if n == 1 { "it" } else { "them" },
        ));
    }
    help
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repair_commands_switch_away_reinstall_and_deploy_again() {
        let id = "9.27.0.42_cuda12";
        assert_eq!(
            CommandLine::install_from("cudnn-9.27-custom.tar.xz", true)
                .force()
                .for_host(false),
            "cudnnm install PATH/TO/cudnn-9.27-custom.tar.xz --force"
        );
        assert_eq!(
            repair_commands(
                id,
                &CommandLine::install("pip:nvidia-cudnn-jit-cu12==9.27.0.42").force(),
                &[("/opt/cuda 12".into(), Mode::Hardlink)],
                false
            ),
            vec![
                "cudnnm install pip:nvidia-cudnn-jit-cu12==9.27.0.42 --force",
                "cudnnm use 9.27.0.42_cuda12 --cuda-root '/opt/cuda 12' --mode hardlink",
            ]
        );
        // A symlink deployment leads to the store: the reinstall repairs it.
        assert_eq!(
            repair_commands(
                id,
                &CommandLine::install("pip:nvidia-cudnn-jit-cu12==9.27.0.42").force(),
                &[("/opt/cuda-12".into(), Mode::Symlink)],
                false
            ),
            vec!["cudnnm install pip:nvidia-cudnn-jit-cu12==9.27.0.42 --force"]
        );
    }
}
