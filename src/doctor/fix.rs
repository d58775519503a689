//! `doctor --fix`: the safe, reversible fixes, and `doctor --undo-fix ID`.
//!
//! Safe: each fix checks its premise again right before acting (the copy
//! really holds the same bytes as the file it should link to; the folder is
//! not on PATH yet). Reversible: everything a fix replaces is first moved or
//! copied into `$CUDNNM_HOME/doctor-fix/<id>/`, with a `fix.toml` that
//! `--undo-fix <id>` replays backwards. A soname link is made (and taken
//! back) through the guard ([`crate::deploy::Guard::make_soname_link`]),
//! journaled with the record it adds to `fix.toml`, so a crash leaves the
//! folder and the record agreeing; the registry changes through
//! [`crate::platform`].
//!
//! A drifted deployment is redeployed through the guard
//! ([`crate::deploy::Guard::redeploy`]): a normal `use` transaction of the
//! recorded release by its recorded mode. The drifted files go into a
//! backup like any change's, so `cudnnm rollback` (not `--undo-fix`)
//! undoes it; the report says which backup.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::FindingId;
use super::finding::{AutoFix, Finding};
use crate::deploy::{self, Kept, RecordFile, Redeployed, SonameLink};
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::fsops;
use crate::hash;
use crate::home::Home;

/// The record of one `--fix` run, `doctor-fix/<id>/fix.toml`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FixRecord {
    /// The id (`20261129T213000Z-1234`).
    pub id: String,
    /// When, RFC 3339.
    pub created: String,
    /// What was changed, in order.
    #[serde(rename = "change", default)]
    pub changes: Vec<FixAction>,
}

/// One change made by `--fix`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum FixAction {
    /// `path` (a regular file) was moved to `backup` and replaced by a link to `target`.
    RelinkSoname {
        /// The file that became a link.
        path: PathBuf,
        /// Its backup, inside the fix folder.
        backup: PathBuf,
        /// The link target written.
        target: String,
        /// SHA-256 of the moved file.
        sha256: String,
    },
    /// The missing soname link `path` -> `target` was created where nothing was.
    MakeSonameLink {
        /// The link made.
        path: PathBuf,
        /// Its target as written (a name in the same folder).
        target: String,
    },
    /// The user `Path` in the registry was changed.
    UserPath {
        /// The value before (`None`: the value did not exist).
        old: Option<String>,
        /// Whether it was `REG_EXPAND_SZ`.
        old_expand: bool,
        /// The folder added.
        added: String,
    },
}

/// What became of one proposed fix. Written `applied` or `skipped` (every
/// kind of skip), as `--fix` prints it.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(into = "&'static str")]
pub enum FixStatus {
    /// The change was made (and recorded for `--undo-fix`).
    Applied,
    /// The finding says why `--fix` leaves it to the user
    /// ([`Finding::held_back`]).
    HeldBack,
    /// Its folder is outside the toolkits named with `--cuda-root`.
    OutOfScope,
    /// Nothing to do any more (already on the user PATH, the toolkit
    /// matches its record again).
    AlreadyDone,
    /// It was tried and failed; the message says why.
    Failed,
}

impl FixStatus {
    /// `applied` or `skipped`.
    pub fn as_str(self) -> &'static str {
        match self {
            FixStatus::Applied => "applied",
            FixStatus::HeldBack
            | FixStatus::OutOfScope
            | FixStatus::AlreadyDone
            | FixStatus::Failed => "skipped",
        }
    }
}

impl From<FixStatus> for &'static str {
    fn from(s: FixStatus) -> &'static str {
        s.as_str()
    }
}

impl std::fmt::Display for FixStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happened to one proposed fix.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FixReport {
    /// The finding it answers.
    pub finding: FindingId,
    /// What became of it.
    pub status: FixStatus,
    /// What was done, or why not.
    pub message: String,
    /// The fix it was, when it was an automatic one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_fix: Option<AutoFix>,
}

/// The folder of fix records.
pub fn fix_root(home: &Home) -> PathBuf {
    home.root().join("doctor-fix")
}

/// True when `target` is inside one of `roots` (or `roots` is empty: every
/// toolkit was in scope). Both sides are compared canonical where they exist.
pub fn in_scope(target: &str, roots: &[PathBuf]) -> bool {
    if roots.is_empty() {
        return true;
    }
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let t = canon(Path::new(target));
    roots.iter().any(|r| t.starts_with(canon(r)))
}

/// Applies the automatic fixes of `findings` on this machine. Each fix is
/// independent: one failing does not stop the others. With `roots` (the
/// toolkits named with `--cuda-root`), only fixes inside them are applied;
/// the others are reported as skipped. A finding whose fix is held back
/// ([`Finding::held_back`]) is reported as skipped with its reason. The
/// record of what changed is written before returning; its id is in the
/// messages. Runs under `change`, the home's change guard (a redeploy is a
/// `use` transaction; a soname link a journaled change of its own).
pub fn apply(
    change: &deploy::Guard,
    findings: &[Finding],
    roots: &[PathBuf],
) -> Result<(Vec<FixReport>, Option<String>)> {
    let (home, env) = (change.home(), change.env());
    let id = format!(
        "{}-{}",
        crate::store::now_rfc3339().replace([':', '-'], ""),
        std::process::id()
    );
    let dir = fix_root(home).join(&id);
    let mut record = FixRecord {
        id: id.clone(),
        created: crate::store::now_rfc3339(),
        changes: Vec::new(),
    };
    let mut reports = Vec::new();
    let mut done: Vec<AutoFix> = Vec::new();
    for f in findings {
        let Some(a) = &f.auto_fix else {
            if let Some(why) = &f.held_back {
                reports.push(FixReport {
                    finding: f.id,
                    status: FixStatus::HeldBack,
                    message: why.clone(),
                    auto_fix: None,
                });
            }
            continue;
        };
        if done.contains(a) {
            continue;
        }
        done.push(a.clone());
        if !in_scope(a.target(), roots) {
            reports.push(FixReport {
                finding: f.id,
                auto_fix: Some(a.clone()),
                status: FixStatus::OutOfScope,
                message: format!(
                    "not applied: '{}' is not in a toolkit named with --cuda-root",
                    a.target()
                ),
            });
            continue;
        }
        let r = match a {
            AutoFix::RelinkSoname {
                dir: d,
                link,
                target,
            } => relink(change, &record, &dir, Path::new(d), link, target).map(|c| {
                let msg = format!(
                    "{}/{link} is now a link to {target} (the copy is kept in {})",
                    d,
                    dir.display()
                );
                record.changes.push(c);
                msg
            }),
            AutoFix::MakeSonameLink {
                dir: d,
                link,
                target,
            } => make_link(change, &record, &dir, Path::new(d), link, target).map(|c| {
                record.changes.push(c);
                format!("made the missing link {d}/{link} -> {target}")
            }),
            AutoFix::AddToUserPath { dir: d } => match add_to_user_path(d) {
                Ok(Some(c)) => {
                    record.changes.push(c);
                    Ok(format!(
                        "added {d} to your user PATH; open a new terminal (or restart the program) to see it"
                    ))
                }
                Ok(None) => {
                    reports.push(FixReport {
                        finding: f.id,
                        auto_fix: Some(a.clone()),
                        status: FixStatus::AlreadyDone,
                        message: format!("{d} is already on your user PATH in the registry; open a new terminal (or restart the program) to see it"),
                    });
                    continue;
                }
                Err(e) => Err(e),
            },
            AutoFix::Redeploy { toolkit, release } => {
                match change.redeploy(Path::new(toolkit), release) {
                    Ok(Redeployed::Done {
                        release,
                        mode,
                        applied,
                    }) => {
                        let p = &applied.outcome.plan;
                        let mut msg = format!(
                            "deployed cuDNN {release} again into '{toolkit}' ({mode}); the files found there are in backup {} — `cudnnm rollback --cuda-root {}` puts them back",
                            p.id,
                            crate::quote::quote_arg(toolkit, env.is_windows())
                        );
                        if !applied.pruned.is_empty() {
                            msg.push_str(&format!(
                                "; removed old backup(s) {} (config keep_backups)",
                                applied
                                    .pruned
                                    .iter()
                                    .map(u64::to_string)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ));
                        }
                        Ok(msg)
                    }
                    Ok(Redeployed::AlreadyClean) => {
                        reports.push(FixReport {
                            finding: f.id,
                            auto_fix: Some(a.clone()),
                            status: FixStatus::AlreadyDone,
                            message: format!(
                                "'{toolkit}' matches its record of cuDNN {release} again; nothing to redeploy"
                            ),
                        });
                        continue;
                    }
                    Err(e) => Err(e),
                }
            }
        };
        reports.push(match r {
            Ok(m) => FixReport {
                finding: f.id,
                auto_fix: Some(a.clone()),
                status: FixStatus::Applied,
                message: m,
            },
            Err(e) => FixReport {
                finding: f.id,
                auto_fix: Some(a.clone()),
                status: FixStatus::Failed,
                message: format!(
                    "{}{}",
                    e,
                    e.hint_text().map(|h| format!(" ({h})")).unwrap_or_default()
                ),
            },
        });
    }
    if record.changes.is_empty() {
        let _ = fsops::remove_dir_all(&dir);
        return Ok((reports, None));
    }
    let text = toml::to_string_pretty(&record)
        .map_err(|e| Error::msg(format!("could not encode the fix record: {e}")))?;
    fsops::write_atomic(&dir.join("fix.toml"), text.as_bytes())?;
    Ok((reports, Some(id)))
}

/// `fix.toml` as it will be once `change` is added to `record`, for the
/// guard to write when the change is made.
fn record_with(record: &FixRecord, fix_dir: &Path, change: &FixAction) -> Result<RecordFile> {
    let mut next = record.clone();
    next.changes.push(change.clone());
    record_file(&next, fix_dir)
}

/// `record` as the text of `fix_dir/fix.toml`.
fn record_file(record: &FixRecord, fix_dir: &Path) -> Result<RecordFile> {
    let text = toml::to_string_pretty(record)
        .map_err(|e| Error::msg(format!("could not encode the fix record: {e}")))?;
    Ok(RecordFile {
        path: fix_dir.join("fix.toml"),
        text,
    })
}

/// Replaces the regular file `dir/link` by a link to `target` when both hold the same bytes.
fn relink(
    guard: &deploy::Guard,
    record: &FixRecord,
    fix_dir: &Path,
    dir: &Path,
    link: &str,
    target: &str,
) -> Result<FixAction> {
    let lp = dir.join(link);
    let tp = dir.join(target);
    let lm = std::fs::symlink_metadata(&lp).with_path("inspect", &lp)?;
    let tm = std::fs::metadata(&tp).with_path("inspect", &tp)?;
    if lm.file_type().is_symlink() || !lm.is_file() || !tm.is_file() {
        return Err(Error::new(
            Kind::Conflict,
            format!("'{}' is no longer a plain copy of '{target}'", lp.display()),
        ));
    }
    if target.contains(['/', '\\']) {
        return Err(Error::new(
            Kind::Usage,
            format!("link target '{target}' is not a name in the same folder"),
        ));
    }
    let (_, a) = hash::sha256_file(&lp)?;
    let (_, b) = hash::sha256_file(&tp)?;
    if a != b {
        return Err(Error::new(
            Kind::Conflict,
            format!(
                "'{}' and '{}' differ; not replacing either",
                lp.display(),
                tp.display()
            ),
        )
        .hint("they come from different releases: redeploy the one you want"));
    }
    fsops::create_dir_all(fix_dir)?;
    let backup = fix_dir.join(format!("{}-{link}", std::process::id()));
    let change = FixAction::RelinkSoname {
        path: lp.clone(),
        backup: backup.clone(),
        target: target.to_string(),
        sha256: a.to_string(),
    };
    guard.make_soname_link(SonameLink {
        path: lp,
        target: target.to_string(),
        kept: Some(Kept {
            path: backup,
            sha256: a,
        }),
        record: Some(record_with(record, fix_dir, &change)?),
    })?;
    Ok(change)
}

/// Creates the missing link `dir/link` -> `target`, checking the finding's
/// premises again first: both are plain names in `dir`, nothing exists at
/// `link` (not even a dangling link: the link is created, never replaced),
/// `target` is a regular file, and this user may write in `dir`.
fn make_link(
    guard: &deploy::Guard,
    record: &FixRecord,
    fix_dir: &Path,
    dir: &Path,
    link: &str,
    target: &str,
) -> Result<FixAction> {
    if [link, target].iter().any(|n| n.contains(['/', '\\'])) {
        return Err(Error::new(
            Kind::Usage,
            format!("'{link}' -> '{target}' is not a link between names in one folder"),
        ));
    }
    let lp = dir.join(link);
    let tp = dir.join(target);
    if std::fs::symlink_metadata(&lp).is_ok() {
        return Err(Error::new(
            Kind::Conflict,
            format!("'{}' exists now; leaving it", lp.display()),
        )
        .hint("run `cudnnm doctor` again to see whether it is still a problem"));
    }
    let tm = std::fs::symlink_metadata(&tp).with_path("inspect", &tp)?;
    if !tm.is_file() {
        return Err(Error::new(
            Kind::Conflict,
            format!("'{}' is no longer a regular file", tp.display()),
        )
        .hint("run `cudnnm doctor` again to see what the folder holds now"));
    }
    // Mode bits miss ACLs and read-only mounts: a refused link below is reported too.
    if crate::platform::dir_writable(dir) == Some(false) {
        return Err(Error::new(
            Kind::Permission,
            format!("'{}' is not writable by this user", dir.display()),
        )
        .hint(format!(
            "make the link as a user who may write there: `ln -s {} {}`",
            crate::quote::sh_quote(target),
            crate::quote::sh_quote(&lp.to_string_lossy())
        )));
    }
    let change = FixAction::MakeSonameLink {
        path: lp.clone(),
        target: target.to_string(),
    };
    fsops::create_dir_all(fix_dir)?;
    // Fails rather than replaces if something appeared at `link` meanwhile.
    guard.make_soname_link(SonameLink {
        path: lp,
        target: target.to_string(),
        kept: None,
        record: Some(record_with(record, fix_dir, &change)?),
    })?;
    Ok(change)
}

/// Puts `dir` first on the user `Path` in the registry, keeping its type.
fn add_to_user_path(dir: &str) -> Result<Option<FixAction>> {
    let old = crate::platform::user_path_value()
        .map_err(|e| Error::msg("could not read the user PATH").cause(e))?;
    let (value, expand) = match &old {
        Some((v, e)) => (v.clone(), *e),
        None => (String::new(), true),
    };
    let norm = |s: &str| s.trim().trim_end_matches(['\\', '/']).to_ascii_lowercase();
    if value.split(';').any(|e| norm(e) == norm(dir)) {
        return Ok(None);
    }
    let new = if value.trim().is_empty() {
        dir.to_string()
    } else {
        format!("{dir};{value}")
    };
    crate::platform::set_user_path_value(Some(&new), expand)
        .map_err(|e| Error::msg("could not write the user PATH").cause(e))?;
    Ok(Some(FixAction::UserPath {
        old: old.map(|(v, _)| v),
        old_expand: expand,
        added: dir.to_string(),
    }))
}

/// The fix ids this home recorded (`doctor --fix` prints the id of each
/// run), or that there are none.
fn fix_ids_hint(home: &Home) -> String {
    let mut ids: Vec<String> = std::fs::read_dir(fix_root(home))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().join("fix.toml").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    if ids.is_empty() {
        "this home has no fixes to undo: `cudnnm doctor --fix` records each run under an id it prints".into()
    } else {
        format!("fixes this home can undo: {}", ids.join(", "))
    }
}

/// After `--fix` ran and the machine was diagnosed again: a finding whose
/// automatic fix this run reported on is not offered again, and says why
/// ([`Finding::held_back`]): one skipped is not one `--fix` can apply, and
/// one applied whose finding is still seen (the user PATH, which only new
/// processes read) is done.
pub fn hold_back(reports: &[FixReport], findings: &mut [Finding]) {
    for r in reports {
        let Some(a) = &r.auto_fix else { continue };
        for f in findings
            .iter_mut()
            .filter(|f| f.auto_fix.as_ref() == Some(a))
        {
            f.auto_fix = None;
            f.held_back = Some(r.message.clone());
        }
    }
}

/// Undoes the fixes recorded under `id`, last change first, under the
/// guard: each soname link is taken back as a journaled change that also
/// rewrites `fix.toml` without it, so an undo a crash stopped resumes.
///
/// # Errors
/// A fix id that is not one; a file changed since the fix (left alone).
pub fn undo(guard: &deploy::Guard, id: &str) -> Result<Vec<String>> {
    let home = guard.home();
    if id.contains(['/', '\\']) || id.contains("..") {
        return Err(
            Error::new(Kind::Usage, format!("'{id}' is not a fix id")).hint(fix_ids_hint(home))
        );
    }
    let path = fix_root(home).join(id).join("fix.toml");
    let text = std::fs::read_to_string(&path)
        .with_path("read", &path)
        .map_err(|e| e.with_kind(Kind::NotFound).hint(fix_ids_hint(home)))?;
    let record: FixRecord = toml::from_str(&text).map_err(|e| {
        Error::new(
            Kind::Integrity,
            format!("could not parse '{}'", path.display()),
        )
        .cause(e.message())
    })?;
    let mut done = Vec::new();
    let fix_dir = fix_root(home).join(id);
    for (i, c) in record.changes.iter().enumerate().rev() {
        // What `fix.toml` holds once this change is undone.
        let rest = record_file(
            &FixRecord {
                changes: record.changes[..i].to_vec(),
                ..record.clone()
            },
            &fix_dir,
        )?;
        match c {
            FixAction::RelinkSoname {
                path,
                backup,
                target,
                sha256,
            } => {
                let meta = std::fs::symlink_metadata(path).ok();
                if meta.as_ref().is_some_and(|m| !m.file_type().is_symlink()) {
                    return Err(Error::new(
                        Kind::Conflict,
                        format!(
                            "'{}' is no longer the link doctor made; leaving it",
                            path.display()
                        ),
                    ));
                }
                let h = hash::Sha256Hex::parse(sha256)?;
                guard.take_back_soname_link(SonameLink {
                    path: path.clone(),
                    target: target.clone(),
                    kept: Some(Kept {
                        path: backup.clone(),
                        sha256: h,
                    }),
                    record: Some(rest),
                })?;
                done.push(format!(
                    "restored {} (was a link to {target})",
                    path.display()
                ));
            }
            FixAction::MakeSonameLink { path, target } => {
                // Only the link doctor made: anything else there now is not its to remove.
                let ours = std::fs::symlink_metadata(path)
                    .is_ok_and(|m| m.file_type().is_symlink())
                    && std::fs::read_link(path).is_ok_and(|t| t == Path::new(target));
                if !ours {
                    if std::fs::symlink_metadata(path).is_err() {
                        done.push(format!("{} is gone already", path.display()));
                        continue;
                    }
                    return Err(Error::new(
                        Kind::Conflict,
                        format!(
                            "'{}' is no longer the link to {target} doctor made; leaving it",
                            path.display()
                        ),
                    )
                    .hint("remove it yourself if it should go, then run the command again"));
                }
                guard.take_back_soname_link(SonameLink {
                    path: path.clone(),
                    target: target.clone(),
                    kept: None,
                    record: Some(rest),
                })?;
                done.push(format!(
                    "removed the link {} -> {target} that doctor made",
                    path.display()
                ));
            }
            FixAction::UserPath {
                old,
                old_expand,
                added,
            } => {
                crate::platform::set_user_path_value(old.as_deref(), *old_expand)
                    .map_err(|e| Error::msg("could not write the user PATH").cause(e))?;
                fsops::write_atomic(&rest.path, rest.text.as_bytes())?;
                done.push(format!(
                    "removed {added} from your user PATH (restored the previous value)"
                ));
            }
        }
    }
    fsops::remove_dir_all(&fix_root(home).join(id))?;
    Ok(done)
}

#[cfg(all(test, unix))]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;
    use crate::doctor::finding::Severity;
    use crate::env::Env;

    fn finding(fix: AutoFix) -> Finding {
        Finding::new(FindingId::BrokenSonameChain, Severity::Error, "t").auto(fix)
    }

    /// [`apply`] as `doctor --fix` runs it: under the home lock, through the change guard.
    fn apply_fixes(
        home: &Home,
        env: &Env,
        findings: &[Finding],
        roots: &[PathBuf],
    ) -> Result<(Vec<FixReport>, Option<String>)> {
        let lock = home.lock(|| {})?;
        let change = deploy::Guard::begin(lock, home, env, &deploy::Silent)?;
        apply(&change, findings, roots)
    }

    /// [`undo`] as `doctor --undo-fix` runs it: through the guard.
    fn undo_fix(home: &Home, id: &str) -> Result<Vec<String>> {
        let lock = home.lock(|| {})?;
        let env = Env::default();
        let guard = deploy::Guard::begin(lock, home, &env, &deploy::Silent)?;
        undo(&guard, id)
    }

    #[test]
    fn a_fix_reported_on_is_not_offered_again_and_says_why() {
        let path = AutoFix::AddToUserPath {
            dir: "/opt/cuda/bin".into(),
        };
        let other = AutoFix::AddToUserPath {
            dir: "/opt/other/bin".into(),
        };
        let mut findings = vec![finding(path.clone()), finding(other.clone())];
        let reports = [
            FixReport {
                finding: FindingId::BrokenSonameChain,
                status: FixStatus::Applied,
                message: "added to the user PATH; new terminals see it".into(),
                auto_fix: Some(path),
            },
            FixReport {
                finding: FindingId::BrokenSonameChain,
                status: FixStatus::Failed,
                message: "no automatic fix".into(),
                auto_fix: None,
            },
        ];
        hold_back(&reports, &mut findings);
        assert_eq!(findings[0].auto_fix, None);
        assert_eq!(
            findings[0].held_back.as_deref(),
            Some("added to the user PATH; new terminals see it")
        );
        assert_eq!(findings[1].auto_fix, Some(other));
        assert_eq!(findings[1].held_back, None);
    }

    #[test]
    fn relink_backs_up_replaces_and_undoes() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        let lib = d.path().join("lib64");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::write(lib.join("libcudnn.so.8.9.7"), b"same bytes").unwrap();
        std::fs::write(lib.join("libcudnn.so.8"), b"same bytes").unwrap();
        let f = finding(AutoFix::RelinkSoname {
            dir: lib.to_string_lossy().into(),
            link: "libcudnn.so.8".into(),
            target: "libcudnn.so.8.9.7".into(),
        });
        let (reports, id) = apply_fixes(&home, &Env::default(), &[f.clone(), f], &[]).unwrap();
        assert_eq!(
            reports.len(),
            1,
            "the same fix twice is applied once: {reports:?}"
        );
        assert_eq!(reports[0].status, FixStatus::Applied, "{reports:?}");
        assert_eq!(
            std::fs::read_link(lib.join("libcudnn.so.8")).unwrap(),
            Path::new("libcudnn.so.8.9.7")
        );
        let id = id.unwrap();
        let done = undo_fix(&home, &id).unwrap();
        assert_eq!(done.len(), 1);
        let m = std::fs::symlink_metadata(lib.join("libcudnn.so.8")).unwrap();
        assert!(m.is_file(), "the copy is back");
        assert_eq!(
            std::fs::read(lib.join("libcudnn.so.8")).unwrap(),
            b"same bytes"
        );
        assert!(!fix_root(&home).join(&id).exists());
    }

    #[test]
    fn relink_refuses_different_bytes_and_changes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path().join("home"));
        std::fs::write(d.path().join("libcudnn.so.8.9.7"), b"new").unwrap();
        std::fs::write(d.path().join("libcudnn.so.8"), b"old").unwrap();
        let f = finding(AutoFix::RelinkSoname {
            dir: d.path().to_string_lossy().into(),
            link: "libcudnn.so.8".into(),
            target: "libcudnn.so.8.9.7".into(),
        });
        let (reports, id) = apply_fixes(&home, &Env::default(), &[f], &[]).unwrap();
        assert_eq!(reports[0].status, FixStatus::Failed);
        assert!(reports[0].message.contains("differ"), "{reports:?}");
        assert!(id.is_none());
        assert_eq!(
            std::fs::read(d.path().join("libcudnn.so.8")).unwrap(),
            b"old"
        );
    }

    #[test]
    fn path_fix_on_unix_and_a_redeploy_without_a_record_are_skipped() {
        let d = tempfile::tempdir().unwrap();
        let home = Home::new(d.path());
        let env = Env::from_vars(Vec::<(String, String)>::new(), "/", false);
        let tk = d.path().join("cuda-12.4");
        std::fs::create_dir_all(tk.join("lib64")).unwrap();
        std::fs::write(tk.join("version.json"), r#"{"cuda":{"version":"12.4.1"}}"#).unwrap();
        let tk = std::fs::canonicalize(tk).unwrap();
        let (reports, id) = apply_fixes(
            &home,
            &env,
            &[
                finding(AutoFix::AddToUserPath {
                    dir: r"C:\CUDA\bin".into(),
                }),
                finding(AutoFix::Redeploy {
                    toolkit: tk.to_string_lossy().into(),
                    release: "9.1.0.70_cuda12".into(),
                }),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(reports[0].status, FixStatus::Failed);
        assert_eq!(reports[1].status, FixStatus::Failed);
        assert_eq!(reports[1].status.to_string(), "skipped");
        assert!(
            reports[1]
                .message
                .contains(&format!("no deployment is recorded for '{}'", tk.display())),
            "{reports:?}"
        );
        assert!(
            reports[1]
                .message
                .contains("cudnnm use 9.1.0.70_cuda12 --cuda-root"),
            "the hint comes along: {reports:?}"
        );
        assert!(id.is_none());
        assert!(undo_fix(&home, "../x").is_err());
    }
}
