//! Everything that still needs a release, refused at once: each blocker
//! with the command that clears it and what `--force` does about it.

use super::Context;
use super::uses::DefaultRefs;
use crate::command::CommandLine;
use crate::deploy::backup::{self, Referring};
use crate::deploy::{Deployment, Mode};
use crate::error::{Error, Kind, Result};
use crate::store::{Release, Store, human_size};
use crate::version::ReleaseId;

/// Everything that still needs a release, for one refusal.
pub(super) struct Blockers<'a> {
    pub(super) id: &'a ReleaseId,
    /// `--system`: users' toolkits and this home's uses.
    pub(super) system: &'a [String],
    pub(super) using: &'a [Deployment],
    pub(super) refs: &'a DefaultRefs,
    pub(super) referring: &'a [Referring],
}

/// One blocker: what needs the release, the command that clears it, and
/// what `--force` does about it.
struct Blocker {
    /// The refusal's message when it is the only blocker.
    alone: String,
    /// The hint when it is the only blocker.
    alone_hint: String,
    /// Its line among several: what needs it, and the command that clears it.
    line: String,
    /// What `--force` does about it.
    forced: String,
}

impl Blockers<'_> {
    /// Refuses with every blocker at once (one alone keeps its own words).
    pub(super) fn refuse(&self, cx: &Context<'_>, store: &Store) -> Result<()> {
        let all = self.each(cx, store)?;
        let id = self.id;
        match all.as_slice() {
            [] => Ok(()),
            [one] => {
                Err(Error::new(Kind::Conflict, one.alone.clone()).hint(one.alone_hint.clone()))
            }
            many => {
                let mut e = Error::new(
                    Kind::Conflict,
                    format!(
                        "cuDNN {id} is still needed in {} ways; nothing was removed",
                        many.len()
                    ),
                );
                for b in many {
                    e = e.cause(&b.line);
                }
                let forced: Vec<&str> = many.iter().map(|b| b.forced.as_str()).collect();
                Err(e.hint(format!(
                    "clear each as shown, then run `{}` again; or pass --force: {}",
                    cx.say(CommandLine::uninstall(id.to_string())),
                    forced.join("; ")
                )))
            }
        }
    }

    fn each(&self, cx: &Context<'_>, store: &Store) -> Result<Vec<Blocker>> {
        let id = self.id.to_string();
        let mut out = Vec::new();
        if !self.system.is_empty() {
            out.push(system_blocker(&id, self.system));
        }
        if !self.using.is_empty() {
            out.push(deployed_blocker(cx, &id, self.using));
        }
        if !self.refs.is_empty() {
            out.push(default_blocker(cx, store, &id, self.refs)?);
        }
        if !self.referring.is_empty() {
            out.push(backups_blocker(cx, &id, self.referring));
        }
        Ok(out)
    }
}

fn system_blocker(id: &str, uses: &[String]) -> Blocker {
    Blocker {
        alone: format!("cuDNN {id} is still needed: {}", uses.join("; ")),
        alone_hint: "switch those toolkits first (`cudnnm use OTHER --cuda-root TOOLKIT` or `cudnnm rollback --cuda-root TOOLKIT`) and make another release the default (`cudnnm default OTHER`), or pass --force (their links will dangle until they do)".into(),
        line: format!(
            "{} — switch each (`cudnnm use OTHER --cuda-root TOOLKIT` or `cudnnm rollback --cuda-root TOOLKIT`) and choose another default (`cudnnm default OTHER`)",
            uses.join("; ")
        ),
        forced: "their links dangle until they switch".into(),
    }
}

fn deployed_blocker(cx: &Context<'_>, id: &str, using: &[Deployment]) -> Blocker {
    let e = deployed_refusal(id, "", using);
    let clear: Vec<String> = using
        .iter()
        .map(|d| {
            format!(
                "`{}` or `{}`",
                cx.say(CommandLine::use_("OTHER").cuda_root(&d.toolkit)),
                cx.say(CommandLine::rollback().cuda_root(&d.toolkit))
            )
        })
        .collect();
    Blocker {
        alone: e.message().to_string(),
        alone_hint: e.hint_text().unwrap_or_default().to_string(),
        line: format!(
            "{} — switch it: {} (the backup that switch takes then needs this release's files too)",
            e.message(),
            clear.join("; ")
        ),
        forced: deployed_effect(using).to_string(),
    }
}

fn default_blocker(
    cx: &Context<'_>,
    store: &Store,
    id: &str,
    refs: &DefaultRefs,
) -> Result<Blocker> {
    let others: Vec<String> = store
        .releases()?
        .iter()
        .rev()
        .map(Release::id)
        .filter(|o| o != id)
        .collect();
    let installed = match others.as_slice() {
        [] => String::new(),
        o => format!("; installed: {}", o.join(", ")),
    };
    let choose = cx.say(CommandLine::default_("OTHER"));
    Ok(Blocker {
        alone: format!("cuDNN {id} is {}", refs.describe()),
        alone_hint: format!(
            "make another release the default first (`{choose}`{installed}), or pass --force (the default is then cleared and the link removed)"
        ),
        line: format!(
            "it is {} — make another release the default: `{choose}`{installed}",
            refs.describe()
        ),
        forced: "the default is cleared and the link removed".into(),
    })
}

fn backups_blocker(cx: &Context<'_>, id: &str, referring: &[Referring]) -> Blocker {
    let n = referring.len();
    let needs = format!(
        "{} need{} to restore: {}",
        plural(n, "backup", "backups"),
        if n == 1 { "s" } else { "" },
        describe_referring(referring)
    );
    let (first, rest) = referring.split_first().expect("not empty");
    let remove = cx.say(rest.iter().fold(
        CommandLine::backups_remove(first.backup.record.id),
        |c, r| c.word(r.backup.record.id.to_string()),
    ));
    let stay = human_size(backup::needed_bytes(referring));
    Blocker {
        alone: format!("cuDNN {id} holds files that {needs}"),
        alone_hint: format!(
            "keep the release, or pass --force: those files ({stay}) then stay in the backups (one copy on disk, however many backups need it) so they can still be restored, and the rest of the release is removed; or remove those backups first (`{remove}`) and the whole release is freed"
        ),
        line: format!("it holds files that {needs} — remove them first to free it all: `{remove}`"),
        forced: format!("those files ({stay}) stay in the backups, one copy"),
    }
}

/// The refusal to remove release `id` (`what` qualifies it) while `using`
/// deploy it, saying what `--force` would leave in each toolkit.
pub(super) fn deployed_refusal(id: &str, what: &str, using: &[Deployment]) -> Error {
    let roots: Vec<String> = using
        .iter()
        .map(|d| format!("{} ({})", d.toolkit.display(), d.mode))
        .collect();
    Error::new(
        Kind::Conflict,
        format!("cuDNN {id}{what} is deployed in {}", roots.join(", ")),
    )
    .hint(format!(
        "switch that toolkit first (`cudnnm use OTHER` or `cudnnm rollback`), or pass --force ({})",
        deployed_effect(using)
    ))
}

/// What `--force` leaves in the toolkits `using` deploy the release.
fn deployed_effect(using: &[Deployment]) -> &'static str {
    let links = using.iter().any(|d| d.mode == Mode::Symlink);
    let files = using.iter().any(|d| d.mode != Mode::Symlink);
    match (links, files) {
        (true, false) => "its links there will dangle",
        (false, _) => "the copies and hard links there stay and keep working",
        (true, true) => {
            "a symlink deployment's links will dangle; copies and hard links stay and keep working"
        }
    }
}

/// `1 backup`, `2 backups`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `backup 2 of '/tk' (3 files), backup 5 of '/tk' (1 file)`.
pub(super) fn describe_referring(refs: &[Referring]) -> String {
    refs.iter()
        .map(|r| {
            format!(
                "backup {} of '{}' ({})",
                r.backup.record.id,
                r.backup.record.toolkit.display(),
                plural(r.files.len(), "file", "files")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
