//! A finding: what `doctor` reports. Text, `--json` and `--report` are all
//! rendered from the same list of these (after mise's lesson: two render
//! paths drift apart).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::FindingId;
use crate::quote::{ps_quote, sh_quote};

/// How bad a finding is. `doctor` exits non-zero when any is an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something that fails: a load, a compile, a link, a framework start.
    Error,
    /// Something that works today by luck or breaks some programs.
    Warning,
    /// Worth knowing; nothing is broken.
    Info,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        })
    }
}

/// A fix `doctor --fix` may apply: safe (checked again right before it is
/// applied) and reversible (what it replaces is backed up first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum AutoFix {
    /// Replace the regular file `dir/link` by a symbolic link to `target`
    /// (a name in the same folder), when both hold the same bytes.
    RelinkSoname {
        /// The folder.
        dir: String,
        /// The file that should be a link (`libcudnn.so.8`).
        link: String,
        /// What it should point to (`libcudnn.so.8.9.7`).
        target: String,
    },
    /// Create the missing soname link `dir/link` -> `target` (a name in the
    /// same folder), when nothing exists at `link`, `target` is a regular
    /// file there, and the folder is writable.
    MakeSonameLink {
        /// The folder.
        dir: String,
        /// The link to create (`libcudnn.so.9`).
        link: String,
        /// What it points to (`libcudnn.so.9.27.0`).
        target: String,
    },
    /// Put `dir` first on the user's `PATH` in the Windows registry.
    AddToUserPath {
        /// The folder to add.
        dir: String,
    },
    /// Deploy `release` into `toolkit` again from the store.
    Redeploy {
        /// The toolkit root.
        toolkit: String,
        /// The release id.
        release: String,
    },
}

/// One problem (or fact) found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// What it is about: a stable id, kebab-case in text and `--json`.
    pub id: FindingId,
    /// How bad it is.
    pub severity: Severity,
    /// One line: what is wrong.
    pub title: String,
    /// What was seen: paths, versions, in the loader's order where it matters.
    pub seen: Vec<String>,
    /// Why it breaks, with the error the user would see.
    pub why: String,
    /// What to do, in words.
    pub fix: Option<String>,
    /// Commands that fix it, to copy.
    pub commands: Vec<String>,
    /// What `--fix` would do.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub auto_fix: Option<AutoFix>,
    /// Why `--fix` leaves this one to you although a fix of its kind is
    /// usually automatic (`--fix` prints it as a skipped fix).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub held_back: Option<String>,
}

impl Finding {
    /// A finding with an id, severity and title; the rest added by the builders below.
    pub fn new(id: FindingId, severity: Severity, title: impl Into<String>) -> Finding {
        Finding {
            id,
            severity,
            title: title.into(),
            seen: Vec::new(),
            why: String::new(),
            fix: None,
            commands: Vec::new(),
            auto_fix: None,
            held_back: None,
        }
    }

    /// Adds a line of what was seen.
    pub fn seen(mut self, line: impl Into<String>) -> Finding {
        self.seen.push(line.into());
        self
    }

    /// Adds lines of what was seen.
    pub fn seen_all(mut self, lines: impl IntoIterator<Item = String>) -> Finding {
        self.seen.extend(lines);
        self
    }

    /// Sets why it breaks.
    pub fn why(mut self, text: impl Into<String>) -> Finding {
        self.why = text.into();
        self
    }

    /// Sets the fix in words.
    pub fn fix(mut self, text: impl Into<String>) -> Finding {
        self.fix = Some(text.into());
        self
    }

    /// Adds a command that fixes it.
    pub fn command(mut self, cmd: impl Into<String>) -> Finding {
        self.commands.push(cmd.into());
        self
    }

    /// Sets the automatic fix.
    pub fn auto(mut self, fix: AutoFix) -> Finding {
        self.auto_fix = Some(fix);
        self
    }

    /// Says why `--fix` does not apply a fix here (one line).
    pub fn held_back(mut self, why: impl Into<String>) -> Finding {
        self.held_back = Some(why.into());
        self
    }
}

impl AutoFix {
    /// The folder the fix changes: the toolkit root, or the folder of the
    /// link or `PATH` entry.
    pub fn target(&self) -> &str {
        match self {
            AutoFix::RelinkSoname { dir, .. }
            | AutoFix::MakeSonameLink { dir, .. }
            | AutoFix::AddToUserPath { dir } => dir,
            AutoFix::Redeploy { toolkit, .. } => toolkit,
        }
    }
}

/// The command that puts `dir` first on the loader path for this shell:
/// `export LD_LIBRARY_PATH=…` (Linux) or `set "PATH=…;%PATH%"` (Windows cmd).
pub fn prepend_loader_path(dir: &str, windows: bool) -> String {
    if windows {
        format!("set \"PATH={dir};%PATH%\"")
    } else {
        format!(
            "export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}",
            sh_quote(dir)
        )
    }
}

/// The PowerShell line that puts `dir` first on the user's PATH for good.
pub fn persist_user_path(dir: &str) -> String {
    format!(
        "[Environment]::SetEnvironmentVariable('Path', {} + [Environment]::GetEnvironmentVariable('Path', 'User'), 'User')",
        ps_quote(&format!("{dir};"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_path_commands() {
        assert_eq!(
            prepend_loader_path("/x y", false),
            "export LD_LIBRARY_PATH='/x y'${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        );
        assert_eq!(
            prepend_loader_path(r"C:\Program Files\x", true),
            r#"set "PATH=C:\Program Files\x;%PATH%""#
        );
        assert!(persist_user_path(r"C:\it's").contains("'C:\\it''s;'"));
    }

    #[test]
    fn severities_order_errors_first() {
        let mut v = vec![Severity::Info, Severity::Error, Severity::Warning];
        v.sort();
        assert_eq!(v, vec![Severity::Error, Severity::Warning, Severity::Info]);
    }
}
