//! The cudnnm commands cudnnm prints: in `help:` lines, `doctor` findings
//! and `verify` advice. Built as typed values and rendered for the shell the
//! user will paste them into, so every path is quoted the one way
//! [`crate::quote`] decides, and a flag is spelled the same everywhere.
//!
//! ```
//! use cudnnm::command::CommandLine;
//! use cudnnm::quote::Dialect;
//! let c = CommandLine::use_("9.1.0.70_cuda12").cuda_root("/opt/cuda 12").mode("copy");
//! assert_eq!(
//!     c.render(Dialect::Posix),
//!     "cudnnm use 9.1.0.70_cuda12 --cuda-root '/opt/cuda 12' --mode copy"
//! );
//! ```

use std::ffi::OsStr;
use std::fmt::Display;

use crate::quote::Dialect;

/// The subcommands printed commands run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sub {
    Install,
    Uninstall,
    Use,
    Rollback,
    Current,
    Exec,
    Doctor,
    Pin,
    Default,
    Toolkits,
    Lock,
    Backups,
    Export,
}

impl Sub {
    fn as_str(self) -> &'static str {
        match self {
            Sub::Install => "install",
            Sub::Uninstall => "uninstall",
            Sub::Use => "use",
            Sub::Rollback => "rollback",
            Sub::Current => "current",
            Sub::Exec => "exec",
            Sub::Doctor => "doctor",
            Sub::Pin => "pin",
            Sub::Default => "default",
            Sub::Toolkits => "toolkits",
            Sub::Lock => "lock",
            Sub::Backups => "backups",
            Sub::Export => "export",
        }
    }
}

/// One piece of a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Arg {
    /// Written as is: a flag, or a placeholder the user replaces (`SPEC`).
    Literal(String),
    /// A value such as a release spec or a mode: bare when plain.
    Word(String),
    /// A path: quoted as paths are for the shell.
    Path(String),
}

/// A `cudnnm` command line: `[sudo] cudnnm [--home H] SUB ARGS…`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandLine {
    sudo: bool,
    home: Option<String>,
    system_home: Option<String>,
    sub: Sub,
    args: Vec<Arg>,
}

impl CommandLine {
    fn new(sub: Sub) -> CommandLine {
        CommandLine {
            sudo: false,
            home: None,
            system_home: None,
            sub,
            args: Vec::new(),
        }
    }

    /// `cudnnm install WHAT`: a release spec or id (`9.1`,
    /// `9.1.0.70_cuda12`) or a `pip:` requirement.
    pub fn install(what: impl Into<String>) -> CommandLine {
        CommandLine::new(Sub::Install).word(what)
    }

    /// `cudnnm install` without an argument: what the pin (or lock) names here.
    pub fn install_here() -> CommandLine {
        CommandLine::new(Sub::Install)
    }

    /// `cudnnm install PATH`: a local archive or folder.
    pub fn install_path(path: impl AsRef<OsStr>) -> CommandLine {
        CommandLine::new(Sub::Install).path(path.as_ref().to_string_lossy().into_owned())
    }

    /// `cudnnm install PATH/TO/<name>`: a local archive or folder known only
    /// by its name, the user filling in where it is.
    pub fn install_file(name: &str) -> CommandLine {
        CommandLine::new(Sub::Install).path(format!("PATH/TO/{name}"))
    }

    /// `cudnnm install` of a release spec or requirement, or, when
    /// `is_file`, of a local file known by its name (what a receipt's
    /// source says to reinstall from): [`CommandLine::install_file`] when
    /// `is_file`, else [`CommandLine::install`].
    pub fn install_from(arg: &str, is_file: bool) -> CommandLine {
        if is_file {
            CommandLine::install_file(arg)
        } else {
            CommandLine::install(arg)
        }
    }

    /// `cudnnm export lmod DIR` (or `tcl`): the modulefiles of a store.
    pub fn export_modules(engine: &str, dir: impl AsRef<OsStr>) -> CommandLine {
        CommandLine::new(Sub::Export)
            .literal(engine)
            .path(dir.as_ref().to_string_lossy().into_owned())
    }

    /// `cudnnm uninstall SPEC`.
    pub fn uninstall(spec: impl Into<String>) -> CommandLine {
        CommandLine::new(Sub::Uninstall).word(spec)
    }

    /// `cudnnm use SPEC`.
    pub fn use_(spec: impl Into<String>) -> CommandLine {
        CommandLine::new(Sub::Use).word(spec)
    }

    /// A bare `cudnnm use V` (no toolkit named) said as `how` says it
    /// (`CommandLine::default_`, `CommandLine::pin`): where a hint for
    /// `default` or `pin` names an installed release, the user's own
    /// command takes it. Any other command is returned as it is.
    pub fn use_as(self, how: fn(String) -> CommandLine) -> CommandLine {
        match (self.sub, self.args.as_slice()) {
            (Sub::Use, [Arg::Word(v)]) => CommandLine {
                sudo: self.sudo,
                home: self.home,
                system_home: self.system_home,
                ..how(v.clone())
            },
            _ => self,
        }
    }

    /// `cudnnm default SPEC`.
    pub fn default_(spec: impl Into<String>) -> CommandLine {
        CommandLine::new(Sub::Default).word(spec)
    }

    /// `cudnnm pin SPEC`.
    pub fn pin(spec: impl Into<String>) -> CommandLine {
        CommandLine::new(Sub::Pin).word(spec)
    }

    /// `cudnnm toolkits forget ROOT`: drop the record of a toolkit whose
    /// folder is gone.
    pub fn forget_toolkit(root: impl AsRef<OsStr>) -> CommandLine {
        CommandLine::new(Sub::Toolkits)
            .literal("forget")
            .path(root.as_ref().to_string_lossy().into_owned())
    }

    /// `cudnnm lock`: write `.cudnn-version.lock` beside the pin.
    pub fn lock() -> CommandLine {
        CommandLine::new(Sub::Lock)
    }

    /// `cudnnm backups remove ID`.
    pub fn backups_remove(id: u64) -> CommandLine {
        CommandLine::new(Sub::Backups)
            .literal("remove")
            .word(id.to_string())
    }

    /// `cudnnm rollback`.
    pub fn rollback() -> CommandLine {
        CommandLine::new(Sub::Rollback)
    }

    /// `cudnnm current`.
    pub fn current() -> CommandLine {
        CommandLine::new(Sub::Current)
    }

    /// `cudnnm doctor`.
    pub fn doctor() -> CommandLine {
        CommandLine::new(Sub::Doctor)
    }

    /// `cudnnm exec --version VERSION -- PROGRAM`, `program` a placeholder
    /// the user replaces (`COMMAND`, `<your program>`).
    pub fn exec(version: impl Into<String>, program: &str) -> CommandLine {
        CommandLine::new(Sub::Exec)
            .literal("--version")
            .word(version)
            .literal("--")
            .literal(program)
    }

    /// Runs it as root with `sudo` (which would change the home cudnnm
    /// finds, so give [`CommandLine::home`] too).
    pub fn sudo(mut self) -> CommandLine {
        self.sudo = true;
        self
    }

    /// `--home DIR` before the subcommand.
    pub fn home(mut self, dir: impl AsRef<OsStr>) -> CommandLine {
        self.home = Some(dir.as_ref().to_string_lossy().into_owned());
        self
    }

    /// `--system-home DIR` before the subcommand: the system home, spelled
    /// out because `sudo` drops `CUDNNM_SYSTEM_HOME`.
    pub fn system_home(mut self, dir: impl AsRef<OsStr>) -> CommandLine {
        self.system_home = Some(dir.as_ref().to_string_lossy().into_owned());
        self
    }

    /// `--cuda-root ROOT`.
    pub fn cuda_root(self, root: impl AsRef<OsStr>) -> CommandLine {
        self.literal("--cuda-root")
            .path(root.as_ref().to_string_lossy().into_owned())
    }

    /// `--cuda VARIANT` (`12`, `11.2`).
    pub fn cuda(self, variant: impl Display) -> CommandLine {
        self.literal("--cuda").word(variant.to_string())
    }

    /// `--mode MODE` (`symlink`, `hardlink`, `copy`).
    pub fn mode(self, mode: impl Display) -> CommandLine {
        self.literal("--mode").word(mode.to_string())
    }

    /// `--platform PLATFORM` (`linux-x86_64`).
    pub fn platform(self, platform: impl Display) -> CommandLine {
        self.literal("--platform").word(platform.to_string())
    }

    /// `--to ID`: the backup a rollback restores.
    pub fn to_backup(self, id: u64) -> CommandLine {
        self.literal("--to").word(id.to_string())
    }

    /// `--force`.
    pub fn force(self) -> CommandLine {
        self.literal("--force")
    }

    /// A further value, bare when plain.
    pub fn word(mut self, w: impl Into<String>) -> CommandLine {
        self.args.push(Arg::Word(w.into()));
        self
    }

    /// A further path.
    pub fn path(mut self, p: impl Into<String>) -> CommandLine {
        self.args.push(Arg::Path(p.into()));
        self
    }

    /// A further piece written as is: a flag, or a placeholder (`SPEC`).
    pub fn literal(mut self, text: &str) -> CommandLine {
        self.args.push(Arg::Literal(text.to_string()));
        self
    }

    /// The command line for `dialect`, each value quoted for it.
    pub fn render(&self, dialect: Dialect) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.sudo {
            parts.push("sudo".into());
        }
        parts.push("cudnnm".into());
        if let Some(h) = &self.home {
            parts.push("--home".into());
            parts.push(dialect.path(h));
        }
        if let Some(h) = &self.system_home {
            parts.push("--system-home".into());
            parts.push(dialect.path(h));
        }
        parts.push(self.sub.as_str().into());
        for a in &self.args {
            parts.push(match a {
                Arg::Literal(t) => t.clone(),
                Arg::Word(w) => dialect.word(w),
                Arg::Path(p) => dialect.path(p),
            });
        }
        parts.join(" ")
    }

    /// [`CommandLine::render`] for the user of a machine ([`Dialect::host`]).
    pub fn for_host(&self, windows: bool) -> String {
        self.render(Dialect::host(windows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_per_shell() {
        let c = CommandLine::rollback().cuda_root(r"C:\Program Files\CUDA\v12.4");
        assert_eq!(
            c.render(Dialect::PowerShell),
            r#"cudnnm rollback --cuda-root "C:\Program Files\CUDA\v12.4""#
        );
        assert_eq!(
            c.render(Dialect::Cmd),
            r#"cudnnm rollback --cuda-root "C:\Program Files\CUDA\v12.4""#
        );
        assert_eq!(
            CommandLine::current()
                .home("/home/b/.cudnnm")
                .cuda_root("/usr/local/cuda-12.4")
                .render(Dialect::Posix),
            "cudnnm --home /home/b/.cudnnm current --cuda-root /usr/local/cuda-12.4"
        );
        assert_eq!(
            CommandLine::use_("9.1.0.70_cuda12")
                .sudo()
                .home("/root/it's")
                .cuda_root("/opt/cuda")
                .for_host(false),
            r"sudo cudnnm --home '/root/it'\''s' use 9.1.0.70_cuda12 --cuda-root /opt/cuda"
        );
        assert_eq!(
            CommandLine::install_from("cudnn-9.27-custom.tar.xz", true)
                .force()
                .for_host(false),
            "cudnnm install PATH/TO/cudnn-9.27-custom.tar.xz --force"
        );
        assert_eq!(
            CommandLine::install_from("pip:nvidia-cudnn-cu12==9.12.0.46", false).for_host(true),
            "cudnnm install pip:nvidia-cudnn-cu12==9.12.0.46"
        );
        assert_eq!(
            CommandLine::install("9.1.0.70").cuda("12").for_host(false),
            "cudnnm install 9.1.0.70 --cuda 12"
        );
        assert_eq!(
            CommandLine::exec("8.1.0.77_cuda11.2", "COMMAND").for_host(true),
            "cudnnm exec --version 8.1.0.77_cuda11.2 -- COMMAND"
        );
        assert_eq!(
            CommandLine::use_("SPEC")
                .cuda_root(r"C:\$me")
                .for_host(true),
            r"cudnnm use SPEC --cuda-root 'C:\$me'"
        );
    }
}
