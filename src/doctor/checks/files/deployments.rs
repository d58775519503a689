//! What cudnnm deployed and stored: `deployment-drift`,
//! `store-release-damaged`, and the redeploy command other checks offer
//! for a toolkit cudnnm deployed.

use std::collections::BTreeSet;

use crate::command::CommandLine;
use crate::doctor::FindingId;
use crate::doctor::checks::Cx;
use crate::doctor::finding::{AutoFix, Finding, Severity};
use crate::doctor::snapshot::FileState;

use crate::names::{self, FileKind};
use crate::quote::quote_arg;
use crate::version::{ReleaseId, Version};

/// The release cudnnm deployed into the toolkit at `root`.
pub(super) fn deployed_release(cx: &Cx, root: &str) -> Option<ReleaseId> {
    cx.s.deployments
        .iter()
        .find(|d| cx.s.same_place(&d.toolkit, root))
        .map(|d| d.release.clone())
}

/// The cuDNN version the toolkit at `root` holds instead of `release`, the
/// release recorded there: when its own files (headers, libraries with a
/// full version) all agree on one version and it is another release's.
/// Then another cudnnm home, or the user, deployed something else there.
pub(super) fn held_instead(cx: &Cx, root: &str, release: &ReleaseId) -> Option<Version> {
    let recorded = release.version.triple();
    let mut seen: BTreeSet<Version> = BTreeSet::new();
    seen.extend(cx.s.header_version(root).map(|k| k.version.triple()));
    for f in cx.s.files_in_root(root) {
        let is_lib = names::classify(cx.name(&f.path))
            .is_some_and(|n| n.kind == FileKind::Shared && !n.dev_link);
        if !is_lib {
            continue;
        }
        if let Some(k) =
            cx.s.library_version(f)
                .filter(|k| k.version.parts().len() >= 3)
        {
            seen.insert(k.version.triple());
        }
    }
    // The rule `use` and `verify` share.
    crate::deploy::status::held_instead(&recorded, seen)
}

/// The command that deploys the release recorded in `root` again, by its
/// recorded mode — what `doctor --fix` does for [`AutoFix::Redeploy`].
pub(super) fn redeploy_command(cx: &Cx, root: &str, release: &ReleaseId) -> String {
    match cx
        .s
        .deployments
        .iter()
        .find(|d| cx.s.same_place(&d.toolkit, root))
        .and_then(|d| d.mode)
    {
        Some(mode) => {
            format!(
                "cudnnm use {release} --cuda-root {} --mode {mode}",
                quote_arg(root, cx.w),
            )
        }
        _ => format!("cudnnm use {release} --cuda-root {}", quote_arg(root, cx.w)),
    }
}

/// `deployment-drift`: files cudnnm placed in a toolkit changed since.
pub(super) fn deployments(cx: &Cx, out: &mut Vec<Finding>) {
    for d in &cx.s.deployments {
        if d.toolkit_gone {
            // Nothing cudnnm owns is damaged: the record outlived the folder.
            out.push(
                Finding::new(
                    FindingId::DeploymentDrift,
                    Severity::Warning,
                    format!(
                        "the toolkit folder {} recorded with cuDNN {} is gone",
                        d.toolkit, d.release
                    ),
                )
                .seen(format!("{}: no such folder", d.toolkit))
                .why("The toolkit was deleted or moved after cudnnm deployed into it. Its record in deployments.toml remains, and so do its backups (your files before cudnnm, and every change since), which cudnnm never deletes on its own.")
                .fix("Forget the toolkit: its deployment record is dropped, its backups stay (`cudnnm backups` lists them). A toolkit moved elsewhere gets cuDNN with `cudnnm use` there.")
                .command(format!(
                    "cudnnm toolkits forget {}",
                    quote_arg(&d.toolkit, cx.w)
                )),
            );
            continue;
        }
        let mut lines = Vec::new();
        let mut restored: Vec<String> = Vec::new();
        for p in &d.files {
            let problem = match (&p.state, &p.expected_link, p.expected_size) {
                (FileState::Missing, _, _) => Some("missing".to_string()),
                (FileState::Link { target }, Some(want), _) if target != want => {
                    Some(format!("link points at {target}, expected {want}"))
                }
                (FileState::File { .. }, Some(want), _) => {
                    Some(format!("a regular file, expected a link to {want}"))
                }
                (FileState::File { size }, None, Some(want)) if *size != want => {
                    Some(format!("{size} bytes, expected {want}"))
                }
                (FileState::Link { target }, None, _) => {
                    Some(format!("a link to {target}, expected a file"))
                }
                _ => None,
            };
            match (problem, &p.restored) {
                // The store's own file (a hard link): the store release
                // changed, which `store-release-damaged` reports.
                (Some(_), _) if p.store_file => {}
                (Some(pr), _) => lines.push(format!("{}: {pr}", p.path)),
                (None, Some(why)) => restored.push(format!("{}: {why}", p.path)),
                (None, None) => {}
            }
        }
        for x in &d.extra {
            lines.push(format!("{x}: a cuDNN file the deployment did not place"));
        }
        // This home's own interrupted change explains any difference: it
        // is reported as toolkit-change-unfinished, not as drift.
        if own_change_unfinished(cx, &d.toolkit) {
            continue;
        }
        if lines.is_empty() && !restored.is_empty() {
            // The record holds the user's change a rollback brought back:
            // not drift, but not the release's copy either (as `current` and
            // `verify` say). No automatic fix: it would replace the change.
            let mut f = Finding::new(
                FindingId::DeploymentDrift,
                Severity::Info,
                format!(
                    "{} file(s) in {} are not release {}'s copy: a rollback restored your change",
                    restored.len(),
                    d.toolkit,
                    d.release
                ),
            );
            for l in &restored {
                f = f.seen(l.clone());
            }
            out.push(
                f.why("You changed these files before switching releases; the switch kept them in a backup and `cudnnm rollback` put them back. They match the deployment record, so nothing is broken, but the toolkit holds the release plus your change.")
                    .fix("To keep the change, nothing needs doing (a later `cudnnm use` backs it up first). To go back to the release's copy, deploy the release again; your changed files go into a backup that `cudnnm rollback` restores.")
                    .command(redeploy_command(cx, &d.toolkit, &d.release)),
            );
            continue;
        }
        if lines.is_empty() {
            continue;
        }
        let cmd = redeploy_command(cx, &d.toolkit, &d.release);
        if let Some(v) = held_instead(cx, &d.toolkit, &d.release) {
            // Another home (or the user) deployed another release there:
            // redeploying this home's record would undo that change.
            let mut f = Finding::new(
                FindingId::DeploymentDrift,
                Severity::Warning,
                format!(
                    "{} now holds cuDNN {v} (not this home's record of {})",
                    d.toolkit, d.release
                ),
            );
            for l in lines {
                f = f.seen(l);
            }
            out.push(
                f.why(format!("This home deployed {} there, but the toolkit's own files (headers, libraries) now all say cuDNN {v}: another cudnnm home, or you, deployed something else since. This home's record is out of date; the toolkit itself is consistent.", d.release))
                    .fix(format!("Nothing to do if cuDNN {v} is meant to be there. To put this home's release back, deploy it explicitly (what is there now goes into a backup that `cudnnm rollback` restores)."))
                    .command(cmd.clone())
                    .held_back(format!("'{}' now holds cuDNN {v} (not this home's record of {}); redeploying would undo that change — run `{cmd}` yourself if this home's release belongs there", d.toolkit, d.release)),
            );
            continue;
        }
        let changed = lines.len() - d.extra.len();
        let title = match (changed, d.extra.len()) {
            (_, 0) => format!(
                "{changed} of the files cudnnm deployed into {} changed",
                d.toolkit
            ),
            (0, x) => format!(
                "{x} cuDNN file(s) in {} were not placed by its deployment of {}",
                d.toolkit, d.release
            ),
            (c, x) => format!(
                "{c} of the files cudnnm deployed into {} changed, and {x} other cuDNN file(s) are there",
                d.toolkit
            ),
        };
        let mut f = Finding::new(FindingId::DeploymentDrift, Severity::Error, title);
        for l in lines {
            f = f.seen(l);
        }
        let f = f.why(format!("The toolkit no longer holds release {} as deployed: something replaced, removed or copied over its files, so the headers, libraries and links may now come from different releases.", d.release))
            .fix("Deploy the release again from the store (what is there now is backed up first).")
            .command(cmd);
        out.push(if change_unfinished(cx, &d.toolkit) {
            // Another home's interrupted change explains the drift, and
            // `use` refuses until it is finished: no automatic redeploy.
            f.held_back(format!("'{}' has an unfinished change from another cudnnm home (toolkit-change-unfinished); finish that first", d.toolkit))
        } else {
            f.auto(AutoFix::Redeploy { toolkit: d.toolkit.clone(), release: d.release.to_string() })
        });
    }
}

/// Whether this home's own change to the toolkit at `root` is unfinished.
fn own_change_unfinished(cx: &Cx, root: &str) -> bool {
    let resolved = |p: &str| std::fs::canonicalize(p).ok();
    cx.s.toolkits.iter().any(|t| {
        t.unfinished_change.as_ref().is_some_and(|u| u.own_home)
            && (t.root == root || resolved(&t.root).is_some_and(|r| Some(r) == resolved(root)))
    })
}

/// Whether another home's change to the toolkit at `root` is unfinished
/// (see `toolkit-change-unfinished`); roots compared as spelled, then resolved.
fn change_unfinished(cx: &Cx, root: &str) -> bool {
    let resolved = |p: &str| std::fs::canonicalize(p).ok();
    cx.s.toolkits.iter().any(|t| {
        t.unfinished_change.as_ref().is_some_and(|u| !u.own_home)
            && (t.root == root || resolved(&t.root).is_some_and(|r| Some(r) == resolved(root)))
    })
}

/// `store-release-damaged`: a store folder whose receipt is missing or
/// unreadable — the release is invisible to `list`, `use`, `exec` and `env`,
/// and `verify` cannot check it; or a release whose files changed, edited
/// through a toolkit it is linked into (symlink or hardlink deployment).
pub(super) fn store_damage(cx: &Cx, out: &mut Vec<Finding>) {
    store_changed(cx, out);
    store_partials(cx, out);
    for d in &cx.s.store_damaged {
        let name = d
            .release
            .as_ref()
            .map_or_else(|| "a release".to_string(), ReleaseId::to_string);
        let name = name.as_str();
        if d.unreadable {
            out.push(store_unreadable(cx, d, name));
            continue;
        }
        let mut f = Finding::new(
            FindingId::StoreReleaseDamaged,
            Severity::Error,
            format!(
                "the store holds {name} in {} without a readable receipt",
                d.dir
            ),
        )
        .seen(d.error.clone());
        let deployed: Vec<&str> = match &d.release {
            Some(id) => {
                cx.s.deployments
                    .iter()
                    .filter(|x| &x.release == id)
                    .map(|x| x.toolkit.as_str())
                    .collect()
            }
            None => Vec::new(),
        };
        for t in &deployed {
            f = f.seen(format!(
                "deployed in {t}: it cannot be verified or redeployed from the store"
            ));
        }
        f = f.why("cudnnm knows a release only through its receipt.toml (version, CUDA, every file with its size and SHA-256): without it the release is left out of `cudnnm list`, `use`, `exec` and `env`, `cudnnm verify` cannot check its files, and a toolkit it was deployed into cannot be verified or redeployed.");
        let offer = d.release.as_ref().map(ReleaseId::spec).and_then(|sp| {
            cx.t.offer(&sp, None)
                .filter(|o| Some(&o.version) == sp.version())
        });
        f = match offer {
            Some(o) => f
                .fix(format!("Import the release again over the damaged folder (`--force` replaces it), or delete {} if you no longer need it.", d.dir))
                .command(cx.install_cmd(o).force().for_host(cx.w)),
            None => f.fix(format!("Import the release again from the archive or wheel it came from, with `cudnnm install --force` and that file (the catalog does not list {name} for this platform), or delete {} if you no longer need it.", d.dir)),
        };
        out.push(f);
    }
}

/// `store-release-unreadable`: the receipt is there but this user may not
/// read it (or its folder). Reinstalling would not help and may fail the
/// same way; the fix is the permission.
fn store_unreadable(cx: &Cx, d: &crate::doctor::snapshot::DamagedRelease, name: &str) -> Finding {
    let f = Finding::new(
        FindingId::StoreReleaseUnreadable,
        Severity::Warning,
        format!("you may not read the store release {name} in {}", d.dir),
    )
    .seen(d.error.clone())
    .why("cudnnm knows a release through its receipt.toml; this user is denied reading it (file mode, owner or ACL), so the release is left out of `cudnnm list`, `use`, `exec` and `env`, and `verify` cannot check it. Its files are not known to be damaged: this is a permission problem, and reinstalling does not fix it.");
    if cx.w {
        f.fix(format!(
            "Give your user read access to {} (or run cudnnm as the user who owns this home).",
            d.dir
        ))
        .command(format!(
            "icacls \"{}\" /grant \"%USERNAME%:(OI)(CI)RX\" /T",
            d.dir
        ))
    } else {
        f.fix(format!("Give your user read access to {} — `chmod` when you own it, `sudo chown -R \"$USER\"` when another user (often root, from a `sudo cudnnm install`) does; `ls -ld` shows the owner.", d.dir))
            .command(format!("chmod -R u+rX {}", crate::quote::sh_quote(&d.dir)))
    }
}

/// `store-partial-left`: a folder an import killed before it finished
/// (power cut, `kill -9`, a second Ctrl-C) left in the store.
fn store_partials(cx: &Cx, out: &mut Vec<Finding>) {
    for p in &cx.s.store_partials {
        out.push(
            Finding::new(
                FindingId::StorePartialLeft,
                Severity::Warning,
                format!(
                    "an interrupted install left {} ({}) in the store",
                    p.dir,
                    crate::store::human_size(p.bytes)
                ),
            )
            .why("An import extracts a release into a `.partial-*` folder of the store and renames it into place when it is whole; an import killed before that leaves the folder, which no release, `list` entry or deployment uses.")
            .fix(format!("The next `cudnnm install` removes it; or delete {} yourself (no cudnnm command is running).", p.dir)),
        );
    }
}

/// `store-release-damaged` for a store release whose files changed: a link
/// deployment shares its files with the store, so an edit made through the
/// toolkit lands in the store. Redeploying cannot repair it (it links the
/// same files), so no automatic fix: the commands switch the toolkits away,
/// import the release again from its original source, and deploy it again.
fn store_changed(cx: &Cx, out: &mut Vec<Finding>) {
    for c in &cx.s.store_changed {
        let mut f = Finding::new(
            FindingId::StoreReleaseDamaged,
            Severity::Error,
            format!(
                "the store release {} changed: {} file(s) differ from its receipt",
                c.release,
                c.files.len()
            ),
        );
        for l in &c.files {
            f = f.seen(format!("{}: {l}", c.dir));
        }
        let deployed: Vec<(String, crate::deploy::Mode)> =
            cx.s.deployments
                .iter()
                .filter(|d| d.release == c.release)
                .filter_map(|d| Some((d.toolkit.clone(), d.mode?)))
                .collect();
        for (t, m) in deployed
            .iter()
            .filter(|(_, m)| *m != crate::deploy::Mode::Copy)
        {
            f = f.seen(format!(
                "linked from {t} ({m} deployment): the change shows there too"
            ));
        }
        let install = CommandLine::install_from(&c.reinstall, c.reinstall_is_file).force();
        let cmds =
            crate::verify::repair_commands(&c.release.to_string(), &install, &deployed, cx.w);
        let from = if c.reinstall_is_file {
            format!("the file it came from ({})", c.reinstall)
        } else {
            format!("its original source ({})", c.reinstall)
        };
        f = f
            .why(format!("A symlink or hardlink deployment shares its files with the store: an edit made through the toolkit changes the store's copy of release {}, so every toolkit linked to it and `cudnnm exec`/`env` see the changed file, and deploying the release again links the same changed files (it is \"already active\").", c.release))
            .fix(if deployed.is_empty() {
                format!("Import the release again from {from} with `--force`.")
            } else {
                format!("Import the release again from {from} with `--force`: while it is deployed, only the bytes its receipt records are taken, so the linked toolkits lead to the original files again; a hardlink or copy deployment holds its own files and is deployed again by its mode.")
            })
            .held_back(format!(
                "the store release {} itself changed; redeploying cannot repair it — import it again from {from} (see the commands)",
                c.release
            ));
        for cmd in cmds {
            f = f.command(cmd);
        }
        out.push(f);
    }
}
