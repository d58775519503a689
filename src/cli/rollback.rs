//! `cudnnm rollback [--to ID] [--cuda-root P | --cuda X.Y]`: restore a
//! toolkit's cuDNN files from a backup — by default the newest backup of the
//! toolkit, i.e. the state before the last change. It is a transaction like
//! `use`: the files it replaces go into a new backup, so a rollback can
//! itself be rolled back.

use serde::Serialize;

use super::Ctx;
use super::support::{
    elevate_hint, msg_label, recorded_toolkits, report_not_from_a_release, report_pruned,
    report_toolkit_choice,
};
use crate::command::CommandLine;
use crate::deploy::Recovered;
use crate::deploy::{self, Applied, Deployments, Guard, backup};
use crate::error::{Error, Kind, Result};
use crate::toolkit::{self, Selector, Toolkit};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Restore this backup instead of the last change
    #[arg(long, value_name = "ID")]
    pub to: Option<String>,
    /// The CUDA toolkit root
    #[arg(long, value_name = "PATH", conflicts_with = "cuda")]
    pub cuda_root: Option<std::path::PathBuf>,
    /// The CUDA toolkit version (X.Y, or a major such as 12 when one 12.x
    /// toolkit is found or known)
    #[arg(long, value_name = "X.Y")]
    pub cuda: Option<String>,
}

#[derive(Serialize)]
struct RollbackReport {
    toolkit: std::path::PathBuf,
    restored_backup: u64,
    from: String,
    to: String,
    release: Option<String>,
    backup: u64,
    not_from_a_release: Vec<String>,
    pruned: Vec<u64>,
    recovered: Vec<Recovered>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<u8> {
    let change = Guard::begin(ctx.lock()?, &ctx.home, &ctx.env, ctx)?;
    let recovered = change.recovered().to_vec();
    let known = recorded_toolkits(ctx, &Deployments::load(&ctx.home)?);
    // A rollback restores a backup: there is no release whose CUDA would
    // choose among several toolkits, only the backups each has.
    let selector = Selector {
        root: args.cuda_root.as_deref(),
        cuda: args.cuda.as_deref(),
        known: &known,
        wants: &[],
        wants_label: "",
    };
    let explicit = selector.root.is_some() || selector.cuda.is_some();
    let (toolkit, source) = match &args.to {
        Some(id) => {
            let b = backup::load(&ctx.home, backup::parse_id(id)?)?;
            let tk = if explicit {
                let tk = toolkit::select(&ctx.env, &selector)?;
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
                tk
            } else {
                Toolkit::at(&b.record.toolkit, "backup", ctx.env.is_windows())?
            };
            (tk, b)
        }
        None => {
            let tk = match toolkit::select(&ctx.env, &selector) {
                Err(e) if e.kind() == Kind::Usage && !explicit => with_backups(ctx, e)?,
                r => r?,
            };
            report_toolkit_choice(ctx, &tk);
            let b = backup::for_toolkit(&ctx.home, &tk.root)?
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
            (tk, b)
        }
    };
    let hint = elevate_hint(
        ctx,
        CommandLine::rollback().to_backup(source.record.id),
        &toolkit.root,
        None,
    );
    let Applied { outcome, pruned } = match change.rollback(&toolkit, &source, &hint) {
        Err(e) if e.kind() == Kind::Integrity => return Err(damaged(ctx, &source, e)),
        r => r?,
    };
    let p = &outcome.plan;
    let how = match &outcome.deployment {
        Some(d) => format!("{}, ", d.mode),
        None => String::new(),
    };
    ctx.status(format!(
        "cuDNN {} → {} in '{}' (restored backup {}; {how}backup {} holds what was replaced)",
        msg_label(&p.from_label),
        msg_label(&p.to_label),
        toolkit.root.display(),
        source.record.id,
        p.id
    ));
    let unknown = deploy::moved_not_from_a_release(p);
    report_not_from_a_release(ctx, p.id, &unknown);
    report_pruned(ctx, &pruned);
    if ctx.json {
        ctx.out_json(&RollbackReport {
            toolkit: toolkit.root.clone(),
            restored_backup: source.record.id,
            from: p.from_label.clone(),
            to: p.to_label.clone(),
            release: outcome.deployment.as_ref().map(|d| d.release.to_string()),
            backup: p.id,
            not_from_a_release: unknown,
            pruned,
            recovered,
        });
    }
    Ok(0)
}

/// Several toolkits and none named (`several`, the selector's question):
/// the only one that has backups, or the question again, listing the
/// toolkits that have backups and the command for each.
///
/// # Errors
/// [`Kind::NotFound`] when no toolkit has a backup; [`Kind::Usage`]
/// listing them when several do.
fn with_backups(ctx: &Ctx, several: Error) -> Result<Toolkit> {
    let windows = ctx.env.is_windows();
    let mut roots: Vec<(std::path::PathBuf, Vec<u64>)> = Vec::new();
    for b in backup::list(&ctx.home)? {
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
                    toolkit::misnamed(&ctx.env)
                        .iter()
                        .map(|m| format!("{m}, passed over")),
                )
                .collect::<Vec<_>>()
                .join("; ");
            Ok(t)
        }
        _ => {
            let render = |c: CommandLine| ctx.home.reach(&ctx.env, c, false).for_host(windows);
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
            let misnamed = toolkit::misnamed(&ctx.env);
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
fn damaged(ctx: &Ctx, source: &backup::Backup, e: Error) -> Error {
    let bad = backup::damage(source);
    if bad.is_empty() {
        return e;
    }
    let id = source.record.id;
    let render = |c: CommandLine| {
        ctx.home
            .reach(&ctx.env, c, false)
            .for_host(ctx.env.is_windows())
    };
    // The next older backup of the toolkit whose own files all check out.
    let older = backup::for_toolkit(&ctx.home, &source.record.toolkit)
        .unwrap_or_default()
        .into_iter()
        .rev()
        .filter(|b| b.record.id < id)
        .find(|b| backup::damage(b).is_empty());
    let remove = CommandLine::backups_remove(id);
    let remove = if backup::removal_needs_force(&ctx.home, source).unwrap_or(true) {
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
