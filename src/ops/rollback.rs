//! `rollback`: restores a toolkit's cuDNN files from a backup — by
//! default the newest backup of the toolkit, i.e. the state before the last
//! change. It is a transaction like `use` ([`crate::deploy::Change`]): the
//! files it replaces go into a new backup, so a rollback can itself be
//! rolled back. A backup whose own files changed since it was made is named
//! as damaged, with the next older one that is whole.

use std::path::PathBuf;

use serde::Serialize;

use super::{Event, Session};
use crate::command::CommandLine;
use crate::deploy::{self, Applied, Deployments, Mode, Recovered, backup};
use crate::error::{Error, Kind, Result};
use crate::toolkit::{self, Selector, Toolkit};

/// What `rollback` is asked.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The backup to restore (`--to ID`); `None`: the toolkit's newest.
    pub to: Option<String>,
    /// The toolkit root.
    pub cuda_root: Option<PathBuf>,
    /// The toolkit's CUDA version (`X.Y`, or a major).
    pub cuda: Option<String>,
}

/// What `rollback` did (`--json` prints it).
#[derive(Debug, Serialize)]
pub struct RolledBack {
    /// The toolkit root.
    pub toolkit: PathBuf,
    /// The backup restored.
    pub restored_backup: u64,
    /// What the toolkit held before (a release, or `no cuDNN`).
    pub from: String,
    /// What it holds now.
    pub to: String,
    /// The release now recorded there, if the backup held one cudnnm deployed.
    pub release: Option<String>,
    /// The new backup holding what was replaced.
    pub backup: u64,
    /// Files moved into the backup that look like cuDNN's but that no release ships.
    pub not_from_a_release: Vec<String>,
    /// Old backups of the toolkit removed afterwards.
    pub pruned: Vec<u64>,
    /// Changes a crash left that were finished or undone first.
    pub recovered: Vec<Recovered>,
    /// How the restored release is placed, when one is recorded.
    #[serde(skip)]
    pub mode: Option<Mode>,
}

/// Restores the backup `req` names (or the toolkit's newest), under the
/// home lock, after recovering what a crash left.
///
/// # Errors
/// No such backup or toolkit, a toolkit that is not the backup's, a
/// damaged backup ([`Kind::Integrity`], naming its files and the next
/// whole one), or a failed change (undone).
pub fn rollback(session: &Session<'_>, req: &Request) -> Result<RolledBack> {
    let change = session.guard()?;
    let recovered = change.recovered().to_vec();
    let known = super::toolkits::recorded(session, &Deployments::load(session.home)?);
    // A rollback restores a backup: there is no release whose CUDA would
    // choose among several toolkits, only the backups each has.
    let selector = Selector {
        root: req.cuda_root.as_deref(),
        cuda: req.cuda.as_deref(),
        known: &known,
        wants: &[],
        wants_label: "",
    };
    let (toolkit, source) = match &req.to {
        Some(id) => named_backup(session, &selector, id)?,
        None => newest_backup(session, &selector)?,
    };
    let hint = deploy::elevate_hint(
        session.env,
        session.home,
        CommandLine::rollback().to_backup(source.record.id),
        &toolkit.root,
        None,
    );
    let Applied { outcome, pruned } = match change.rollback(&toolkit, &source, &hint) {
        Err(e) if e.kind() == Kind::Integrity => return Err(damaged(session, &source, e)),
        r => r?,
    };
    let p = &outcome.plan;
    Ok(RolledBack {
        toolkit: toolkit.root.clone(),
        restored_backup: source.record.id,
        from: p.from_label.clone(),
        to: p.to_label.clone(),
        release: outcome.deployment.as_ref().map(|d| d.release.to_string()),
        backup: p.id,
        not_from_a_release: deploy::moved_not_from_a_release(p),
        pruned,
        recovered,
        mode: outcome.deployment.as_ref().map(|d| d.mode),
    })
}

/// `--to ID`: the backup, and its toolkit (which `--cuda-root`/`--cuda`,
/// when given, must name).
fn named_backup(
    session: &Session<'_>,
    selector: &Selector<'_>,
    id: &str,
) -> Result<(Toolkit, backup::Backup)> {
    let b = backup::load(session.home, backup::parse_id(id)?)?;
    if selector.root.is_none() && selector.cuda.is_none() {
        let tk = Toolkit::at(&b.record.toolkit, "backup", session.env.is_windows())?;
        return Ok((tk, b));
    }
    let tk = toolkit::select(session.env, selector)?;
    if tk.root != b.record.toolkit {
        return Err(Error::new(
            Kind::Usage,
            format!(
                "backup {} holds files of '{}', not of '{}'",
                b.record.id,
                b.record.toolkit.display(),
                tk.root.display()
            ),
        )
        .hint(format!(
            "drop --cuda-root/--cuda: `cudnnm rollback --to {}`",
            b.record.id
        )));
    }
    Ok((tk, b))
}

/// No `--to`: the toolkit chosen (or the only one with backups) and its
/// newest backup.
fn newest_backup(
    session: &Session<'_>,
    selector: &Selector<'_>,
) -> Result<(Toolkit, backup::Backup)> {
    let explicit = selector.root.is_some() || selector.cuda.is_some();
    let tk = match toolkit::select(session.env, selector) {
        Err(e) if e.kind() == Kind::Usage && !explicit => with_backups(session, e)?,
        r => r?,
    };
    session.report.event(&Event::ToolkitChosen(&tk));
    let b = backup::for_toolkit(session.home, &tk.root)?
        .pop()
        .ok_or_else(|| {
            Error::new(
                Kind::NotFound,
                format!(
                    "there are no backups of '{}'; nothing to roll back",
                    tk.root.display()
                ),
            )
            .hint("`cudnnm backups` lists the backups of every toolkit")
        })?;
    Ok((tk, b))
}

/// Several toolkits and none named (`several`, the selector's question):
/// the only one that has backups, or the question again, listing the
/// toolkits that have backups and the command for each.
///
/// # Errors
/// [`Kind::NotFound`] when no toolkit has a backup; [`Kind::Usage`]
/// listing them when several do.
fn with_backups(session: &Session<'_>, several: Error) -> Result<Toolkit> {
    let windows = session.env.is_windows();
    let mut roots: Vec<(std::path::PathBuf, Vec<u64>)> = Vec::new();
    for b in backup::list(session.home)? {
        match roots.iter_mut().find(|(r, _)| *r == b.record.toolkit) {
            Some((_, ids)) => ids.push(b.record.id),
            None => roots.push((b.record.toolkit.clone(), vec![b.record.id])),
        }
    }
    let toolkits: Vec<(Toolkit, Vec<u64>)> = roots
        .into_iter()
        .filter_map(|(r, ids)| Some((Toolkit::at(&r, "backups", windows).ok()?, ids)))
        .collect();
    let n = toolkits.len();
    match toolkits.as_slice() {
        [] => Err(Error::new(
            Kind::NotFound,
            "no toolkit has a backup; nothing to roll back",
        )
        .cause(several.message().to_string())
        .hint("`cudnnm backups` lists the backups of every toolkit")),
        [(t, _)] => {
            let mut t = t.clone();
            t.found_by = std::iter::once("the only toolkit with backups".to_string())
                .chain(
                    toolkit::misnamed(session.env)
                        .iter()
                        .map(|m| format!("{m}, passed over")),
                )
                .collect::<Vec<_>>()
                .join("; ");
            Ok(t)
        }
        _ => {
            let render = |c: CommandLine| session.printed(c);
            let listed: Vec<String> = toolkits
                .iter()
                .map(|(t, ids)| {
                    format!(
                        "'{}' (CUDA {}; backup{} {})",
                        t.root.display(),
                        t.cuda_short(),
                        if ids.len() == 1 { "" } else { "s" },
                        ids.iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
                .collect();
            let commands: Vec<String> = toolkits
                .iter()
                .map(|(t, _)| format!("`{}`", render(CommandLine::rollback().cuda_root(&t.root))))
                .collect();
            let misnamed = toolkit::misnamed(session.env);
            let mut e = if misnamed.is_empty() {
                Error::new(
                    Kind::Usage,
                    format!(
                        "{n} toolkits have backups and none is named by --cuda-root, --cuda, CUDA_PATH, CUDA_HOME or nvcc: {}",
                        listed.join(", ")
                    ),
                )
            } else {
                Error::new(
                    Kind::Usage,
                    format!(
                        "{}; of the {n} toolkits with backups, none is named by --cuda-root or --cuda: {}",
                        toolkit::misnamed_phrase(&misnamed),
                        listed.join(", ")
                    ),
                )
            };
            for m in &misnamed {
                e = e.cause(m.cause());
            }
            Err(e.hint(format!(
                "pick the toolkit to roll back with --cuda-root (or --cuda X.Y): {}",
                commands.join(" or ")
            )))
        }
    }
}

/// A rollback to `source` that failed its checks (`e`): when files the
/// backup holds no longer match their record, an error naming the backup
/// and each file, with a way on — the next older backup of the toolkit that
/// is whole, and removing the damaged one. Else `e` as it was.
fn damaged(session: &Session<'_>, source: &backup::Backup, e: Error) -> Error {
    let bad = backup::damage(source);
    if bad.is_empty() {
        return e;
    }
    let id = source.record.id;
    let render = |c: CommandLine| session.printed(c);
    // The next older backup of the toolkit whose own files all check out.
    let older = backup::for_toolkit(session.home, &source.record.toolkit)
        .unwrap_or_default()
        .into_iter()
        .rev()
        .filter(|b| b.record.id < id)
        .find(|b| backup::damage(b).is_empty());
    let remove = CommandLine::backups_remove(id);
    let remove = if backup::removal_needs_force(session.home, source).unwrap_or(true) {
        remove.force()
    } else {
        remove
    };
    let what = match bad.as_slice() {
        [one] => format!(
            "'{}' ({}) no longer holds what was recorded when the backup was made ({})",
            one.file.display(),
            one.path,
            one.why
        ),
        many => format!(
            "{} of its files no longer hold what was recorded when it was made",
            many.len()
        ),
    };
    let mut err = Error::new(
        Kind::Integrity,
        format!(
            "backup {id} of '{}' is damaged and cannot be restored: {what}",
            source.record.toolkit.display()
        ),
    );
    if bad.len() > 1 {
        for d in bad.iter().take(5) {
            err = err.cause(d.to_string());
        }
    }
    // What the failed attempt said about the toolkit (nothing changed).
    for c in e.causes() {
        err = err.cause(c.clone());
    }
    let rest = format!(
        "remove the damaged backup with `{}` (the files it holds go with it)",
        render(remove)
    );
    err.hint(match older {
        Some(b) => format!(
            "roll back to backup {}, the next older one that is whole (it holds {}), with `{}`; or {rest}",
            b.record.id,
            b.record.held,
            render(CommandLine::rollback().to_backup(b.record.id))
        ),
        None => format!("no older backup of that toolkit is whole; {rest}"),
    })
}
