//! `verify`'s text output; `--json` serialises the same [`VerifyReport`].

use std::path::Path;

use super::{Check, VerifyReport};

/// `verify` as text.
pub fn text(r: &VerifyReport) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let line = |o: &mut String, c: &Check, head: String| {
        if c.toolkit_gone {
            let _ = writeln!(
                o,
                "  gone      {head}: the toolkit folder no longer exists (deleted or moved)"
            );
            return;
        }
        if c.orphaned && c.ok() {
            let _ = writeln!(
                o,
                "  orphaned  {head}: the release is not in the store any more; the {} files placed here match their record and keep working",
                c.files
            );
            return;
        }
        if let Some(v) = c.now_holds.as_ref().filter(|_| c.ok()) {
            let _ = writeln!(
                o,
                "  replaced  {head}: the toolkit now holds cuDNN {v} (deployed since by another cudnnm home, or by you)"
            );
            return;
        }
        if c.ok() {
            let _ = write!(o, "  ok        {head} ({} files", c.files);
            if !c.restored.is_empty() {
                let _ = write!(
                    o,
                    "; {} not the release's copy",
                    match c.restored.len() {
                        1 => "1 is".to_string(),
                        n => format!("{n} are"),
                    }
                );
            }
            let _ = write!(o, ")");
            if let Some(l) = &c.library {
                let _ = write!(
                    o,
                    "; {} reports {}",
                    Path::new(&l.path)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    l.reported.as_deref().unwrap_or("?")
                );
            }
            let _ = writeln!(o);
            for m in &c.restored {
                let _ = writeln!(o, "    restored: {m}");
            }
            return;
        }
        let _ = writeln!(o, "  CHANGED   {head}");
        if let Some(e) = &c.error {
            let _ = writeln!(o, "    error:    {e}");
        }
        for m in &c.modified {
            let _ = writeln!(o, "    modified: {m}");
        }
        for m in &c.missing {
            let _ = writeln!(o, "    missing:  {m}");
        }
        for m in &c.extra {
            let _ = writeln!(o, "    extra:    {m}");
        }
        for m in &c.restored {
            let _ = writeln!(o, "    restored: {m}");
        }
        if let Some(l) = c.library.as_ref().filter(|l| !l.ok) {
            match (&l.reported, &l.error) {
                (Some(v), _) => {
                    let _ = writeln!(
                        o,
                        "    library:  {} reports {v}, the receipt says {}",
                        l.path, l.expected
                    );
                }
                (None, Some(e)) => {
                    let _ = writeln!(o, "    library:  {} does not load: {e}", l.path);
                }
                _ => {}
            }
        }
    };
    let _ = writeln!(
        o,
        "store: {} release{}",
        r.releases.len(),
        if r.releases.len() == 1 { "" } else { "s" }
    );
    for c in &r.releases {
        line(&mut o, c, format!("{}  {}", c.name(), c.path));
    }
    let _ = writeln!(o, "deployments: {}", r.deployments.len());
    for c in &r.deployments {
        line(&mut o, c, format!("{}  in {}", c.name(), c.path));
    }
    let bad = r
        .releases
        .iter()
        .chain(&r.deployments)
        .filter(|c| !c.ok())
        .count();
    let replaced = r
        .deployments
        .iter()
        .filter(|c| c.now_holds.is_some())
        .count();
    let gone = r.deployments.iter().filter(|c| c.toolkit_gone).count();
    let plural = |n: usize, one: &str, many: &str| if n == 1 { one } else { many }.to_string();
    let mut except = Vec::new();
    if replaced > 0 {
        except.push(format!(
            "{replaced} toolkit{} that now hold{} another release",
            plural(replaced, "", "s"),
            plural(replaced, "s", "")
        ));
    }
    if gone > 0 {
        except.push(format!(
            "{gone} toolkit folder{} that no longer exist{}",
            plural(gone, "", "s"),
            plural(gone, "s", "")
        ));
    }
    let orphaned = r
        .deployments
        .iter()
        .filter(|c| c.orphaned && c.ok())
        .count();
    if bad == 0 && !except.is_empty() {
        let _ = writeln!(
            o,
            "Everything this home placed matches its record, except {}.",
            except.join(" and ")
        );
    } else if bad == 0 {
        let _ = writeln!(o, "Everything matches its record.");
    } else {
        let _ = writeln!(
            o,
            "{bad} of {} records do not match.",
            r.releases.len() + r.deployments.len()
        );
    }
    if orphaned > 0 {
        let _ = writeln!(
            o,
            "note: {orphaned} deployment{} of a release no longer in the store (orphaned): whole, but not checked against a receipt.",
            plural(orphaned, "", "s")
        );
    }
    for h in r
        .releases
        .iter()
        .chain(&r.deployments)
        .flat_map(|c| &c.help)
    {
        let _ = writeln!(o, "help: {h}.");
    }
    o
}
