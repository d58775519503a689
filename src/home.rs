//! The cudnnm home folder (`docs/architecture.md#home-layout`): where the store, downloads,
//! backups, journal, deployments and config live, and `config.toml` itself.
//!
//! ```text
//! $CUDNNM_HOME/
//!   config.toml  store/  downloads/  backups/  journal/
//!   deployments.toml  current/  catalog.toml  lock
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::command::CommandLine;
use crate::env::{self, Env};
use crate::error::{Error, Result};
use crate::fsops;
use crate::lock::{HomeLock, LockOptions};

/// The system home on Linux and macOS: releases an administrator installed
/// for every user of the machine.
pub const UNIX_SYSTEM_HOME: &str = "/opt/cudnnm";

/// Which kind of home a [`Home`] is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HomeKind {
    /// A user's own home; `system` is the system home whose releases the
    /// user also sees (after their own), when there is one apart from theirs.
    User {
        /// The system home's folder.
        system: Option<PathBuf>,
    },
    /// The system home itself (`install --system`): what it writes must be
    /// readable by every user.
    System,
}

/// Paths inside one cudnnm home folder. Creating a `Home` touches nothing on disk.
#[derive(Clone, Debug)]
pub struct Home {
    root: PathBuf,
    kind: HomeKind,
}

impl Home {
    /// A user home at `root` (absolute or relative to the working folder)
    /// that sees no system store.
    pub fn new(root: impl Into<PathBuf>) -> Home {
        Home {
            root: root.into(),
            kind: HomeKind::User { system: None },
        }
    }

    /// The system home at `root`, as `install --system` writes it.
    pub fn system(root: impl Into<PathBuf>) -> Home {
        Home {
            root: root.into(),
            kind: HomeKind::System,
        }
    }

    /// This user home, also seeing the releases of the system home at
    /// `system` (ignored when it is this home itself).
    pub fn with_system(mut self, system: PathBuf) -> Home {
        if system != self.root && self.kind != HomeKind::System {
            self.kind = HomeKind::User {
                system: Some(system),
            };
        }
        self
    }

    /// Which kind of home this is.
    pub fn kind(&self) -> &HomeKind {
        &self.kind
    }

    /// Whether this is the system home (what it writes is world-readable).
    pub fn is_system(&self) -> bool {
        self.kind == HomeKind::System
    }

    /// The system home this user home also reads, if any.
    pub fn system_root(&self) -> Option<&Path> {
        match &self.kind {
            HomeKind::User { system: Some(s) } => Some(s),
            _ => None,
        }
    }

    /// The store of the system home this user home also reads, if any.
    pub fn system_store_dir(&self) -> Option<PathBuf> {
        match &self.kind {
            HomeKind::User { system: Some(s) } => Some(s.join("store")),
            _ => None,
        }
    }

    /// The system home chosen by `--system-home`, else `CUDNNM_SYSTEM_HOME`,
    /// else the platform's: `%ProgramData%\cudnnm` on Windows (`ProgramData`
    /// defaults to `C:\ProgramData`), [`UNIX_SYSTEM_HOME`] elsewhere. The
    /// path is built as text by the rules of the environment's platform, so
    /// the Windows answer is the same when computed on Linux.
    pub fn locate_system(flag: Option<&Path>, env: &Env) -> PathBuf {
        let root = match flag {
            Some(p) => p.to_path_buf(),
            None => match env
                .var_os(env::CUDNNM_SYSTEM_HOME)
                .filter(|v| !v.is_empty())
            {
                Some(v) => PathBuf::from(v),
                None => Home::platform_system(env),
            },
        };
        let absolute = if env.is_windows() {
            is_windows_absolute(&root, env)
        } else {
            root.to_string_lossy().starts_with('/')
        };
        if absolute {
            root
        } else {
            // Joined by the environment's rules, as text.
            let sep = if env.is_windows() { '\\' } else { '/' };
            let cwd = env.cwd().to_string_lossy();
            PathBuf::from(format!(
                "{}{sep}{}",
                cwd.trim_end_matches(sep),
                root.display()
            ))
        }
    }

    /// The platform's system home, what [`Home::locate_system`] gives without
    /// flag or variable: `%ProgramData%\cudnnm` on Windows (`ProgramData`
    /// defaults to `C:\ProgramData`), [`UNIX_SYSTEM_HOME`] elsewhere. A
    /// printed command names any other system home with `--system-home`.
    pub fn platform_system(env: &Env) -> PathBuf {
        if env.is_windows() {
            let data = env
                .var(env::PROGRAM_DATA)
                .unwrap_or_else(|| r"C:\ProgramData".to_string());
            PathBuf::from(format!("{}\\cudnnm", data.trim_end_matches('\\')))
        } else {
            PathBuf::from(UNIX_SYSTEM_HOME)
        }
    }

    /// `command` with what it needs to reach this home and the system home
    /// it sees when a person runs it as printed: in this environment, or,
    /// when `elevated`, as root or from an Administrator terminal (`sudo`
    /// drops `CUDNNM_HOME` and `CUDNNM_SYSTEM_HOME` and changes the home
    /// folder; the caller adds `sudo`). For the system home, `--system`, and
    /// `--system-home DIR` unless it is the one the command finds anyway;
    /// for a user home, `--home DIR` (always when elevated, else when it came
    /// from the flag) and `--system-home DIR` for the system home it sees,
    /// on the same rule.
    pub fn reach(&self, env: &Env, command: CommandLine, elevated: bool) -> CommandLine {
        // What the printed command finds without flags.
        let found_system = if elevated {
            Home::platform_system(env)
        } else {
            Home::locate_system(None, env)
        };
        match &self.kind {
            HomeKind::System => {
                let c = command.literal("--system");
                if self.root != found_system {
                    c.system_home(&self.root)
                } else {
                    c
                }
            }
            HomeKind::User { system } => {
                let found_home = Home::locate(None, env).ok().map(|h| h.root);
                let mut c = command;
                if elevated || found_home.as_deref() != Some(self.root.as_path()) {
                    c = c.home(&self.root);
                }
                match system {
                    Some(s) if *s != found_system => c.system_home(s),
                    _ => c,
                }
            }
        }
    }

    /// The home chosen by `--home`, else `CUDNNM_HOME`, else the platform data
    /// folder of the `directories` crate (`~/.local/share/cudnnm`,
    /// `%LOCALAPPDATA%\cudnnm\data`).
    ///
    /// # Errors
    /// When neither is given and the platform has no home folder.
    pub fn locate(flag: Option<&Path>, env: &Env) -> Result<Home> {
        let root = match flag {
            Some(p) => p.to_path_buf(),
            None => match env.var_os(env::CUDNNM_HOME).filter(|v| !v.is_empty()) {
                Some(v) => PathBuf::from(v),
                None => directories::ProjectDirs::from("", "", "cudnnm")
                    .map(|d| d.data_local_dir().to_path_buf())
                    .ok_or_else(|| {
                        Error::msg("could not find a home folder for cudnnm")
                            .hint("set CUDNNM_HOME to a writable folder, or pass --home DIR")
                    })?,
            },
        };
        let root = if root.is_absolute() {
            root
        } else {
            env.cwd().join(root)
        };
        Ok(Home::new(root))
    }

    /// The home folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `store/`: unpacked releases, `store/cuda-<variant>/<version>/`.
    pub fn store_dir(&self) -> PathBuf {
        self.root.join("store")
    }

    /// `downloads/`: archive cache, one file per SHA-256.
    pub fn downloads_dir(&self) -> PathBuf {
        self.root.join("downloads")
    }

    /// `backups/`: files moved out of toolkits, `backups/<id>/`.
    pub fn backups_dir(&self) -> PathBuf {
        self.root.join("backups")
    }

    /// `journal/`: changes in flight.
    pub fn journal_dir(&self) -> PathBuf {
        self.root.join("journal")
    }

    /// `deployments.toml`: what is deployed in which toolkit.
    pub fn deployments_file(&self) -> PathBuf {
        self.root.join("deployments.toml")
    }

    /// `current/`: stable per-user links, `current/cuda-<variant>`.
    pub fn current_dir(&self) -> PathBuf {
        self.root.join("current")
    }

    /// `config.toml`.
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// `catalog.toml`: the user catalog written by `manifest refresh`, overlaying the embedded one.
    pub fn user_catalog_file(&self) -> PathBuf {
        self.root.join("catalog.toml")
    }

    /// `lock`: the advisory lock file that admits one writer at a time.
    pub fn lock_file(&self) -> PathBuf {
        self.root.join("lock")
    }

    /// Creates the home folder if needed.
    ///
    /// # Errors
    /// When the folder cannot be created (read-only or full disk).
    pub fn ensure(&self) -> Result<()> {
        fsops::create_dir_all_as(&self.root, "create the cudnnm home")
    }

    /// Takes the home lock (one cudnnm writer at a time), creating the home
    /// folder first. `on_wait` is called once if another process holds it.
    ///
    /// # Errors
    /// When the home folder or its lock file cannot be created or locked.
    pub fn lock(&self, on_wait: impl FnOnce()) -> Result<HomeLock> {
        self.lock_with(LockOptions::default(), |_| on_wait())
    }

    /// [`Home::lock`] with explicit options ([`HomeLock::acquire_with`]).
    ///
    /// # Errors
    /// As [`Home::lock`].
    pub fn lock_with(
        &self,
        options: LockOptions,
        on_wait: impl FnOnce(Option<String>),
    ) -> Result<HomeLock> {
        self.ensure()?;
        HomeLock::acquire_with(&self.lock_file(), options, on_wait)
    }

    /// Whether a cudnnm process holds this home's lock right now (a command
    /// that changes the home is running).
    pub fn busy(&self) -> bool {
        crate::lock::home_busy(&self.lock_file())
    }

    /// Reads `config.toml`; a missing file is the default config.
    ///
    /// # Errors
    /// When the file exists but cannot be read or parsed (names the file
    /// and the line). No command rewrites a file it cannot read (that would
    /// lose the user's other settings), so the hint says to edit or remove it.
    /// Only a regular file of at most 256 KiB is read.
    pub fn config(&self) -> Result<Config> {
        let loaded = fsops::load_toml_bounded(
            &self.config_file(),
            fsops::MAX_CONFIG_BYTES,
            |path, message| {
                let at = message
                    .strip_prefix("line ")
                    .and_then(|m| m.split_once(':'))
                    .map(|(n, _)| format!(" at line {n}"))
                    .unwrap_or_default();
                Error::msg(format!("could not parse '{}'", path.display()))
                .cause(message)
                .hint(format!(
                    "edit '{}' to fix the TOML{at}, or remove it to go back to the default settings (default, mode, mirror, index_url, keep_backups)",
                    path.display()
                ))
            },
        )?;
        Ok(loaded.unwrap_or_default())
    }

    /// Writes `config.toml` atomically.
    ///
    /// # Errors
    /// When the home cannot be created or written.
    pub fn save_config(&self, config: &Config) -> Result<()> {
        self.ensure()?;
        fsops::save_toml(&self.config_file(), config, "config")
    }
}

/// Whether `p` is absolute by Windows rules (`C:\…`, `\\server\…`) in a
/// Windows environment, also when computed on another platform.
fn is_windows_absolute(p: &Path, env: &Env) -> bool {
    if !env.is_windows() {
        return false;
    }
    let s = p.to_string_lossy();
    let b = s.as_bytes();
    s.starts_with("\\\\")
        || (b.len() >= 3
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && (b[2] == b'\\' || b[2] == b'/'))
}

/// `config.toml`: user settings. Keys it does not know are kept (written
/// back as they were) and listed in [`Config::unknown`], so that commands
/// can say so: a misspelt `mdoe = "copy"` would otherwise change nothing
/// silently.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Config {
    /// The default release spec (`cudnnm default SPEC`), used when no pin applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// The default was set by the first install, not chosen with `cudnnm
    /// default`: `uninstall` then clears it instead of refusing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_is_first_install: Option<bool>,
    /// Link mode for `use`: `auto`, `symlink`, `hardlink` or `copy`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Base URL replacing NVIDIA's download server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirror: Option<String>,
    /// The package index cuDNN wheels come from (a PEP 503/691 simple API
    /// URL), after `--index-url` and `CUDNNM_INDEX_URL`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_url: Option<String>,
    /// How many backups to keep per toolkit (default 5); a toolkit's first backup is always kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_backups: Option<u32>,
    /// Keys the file holds that cudnnm does not know, with their values.
    #[serde(flatten)]
    pub unknown: std::collections::BTreeMap<String, toml::Value>,
}

/// The keys `config.toml` knows, for messages about the others.
/// (`default_is_first_install` is cudnnm's own record, not a setting.)
pub const CONFIG_KEYS: &[&str] = &["default", "mode", "mirror", "index_url", "keep_backups"];

impl Config {
    /// Backups to keep per toolkit: `keep_backups`, default 5.
    pub fn backups_to_keep(&self) -> u32 {
        self.keep_backups.unwrap_or(5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key cudnnm does not know is listed and written back as it was.
    #[test]
    fn unknown_settings_are_listed_and_kept() {
        let c: Config = toml::from_str("mdoe = \"copy\"\ndefault = \"9.12\"\n").unwrap();
        assert_eq!(c.default.as_deref(), Some("9.12"));
        assert_eq!(c.mode, None);
        assert_eq!(c.unknown.keys().collect::<Vec<_>>(), ["mdoe"]);
        let text = toml::to_string(&c).unwrap();
        assert!(text.contains("mdoe = \"copy\""), "{text}");
        // A known key of the wrong type is still an error.
        assert!(toml::from_str::<Config>("keep_backups = \"five\"").is_err());
    }

    #[test]
    fn home_precedence_flag_env_default() {
        let env = Env::from_vars([(env::CUDNNM_HOME, "/env/home")], "/cwd", false);
        assert_eq!(
            Home::locate(Some(Path::new("/flag")), &env).unwrap().root(),
            Path::new("/flag")
        );
        assert_eq!(
            Home::locate(None, &env).unwrap().root(),
            Path::new("/env/home")
        );
        assert_eq!(
            Home::locate(Some(Path::new("rel")), &env).unwrap().root(),
            Path::new("/cwd/rel")
        );
    }

    #[test]
    fn system_home_by_platform_flag_and_env() {
        let linux = Env::from_vars([("X", "y")], "/cwd", false);
        assert_eq!(
            Home::locate_system(None, &linux),
            PathBuf::from("/opt/cudnnm")
        );
        let win = Env::from_vars([("ProgramData", r"D:\Data")], r"C:\work", true);
        assert_eq!(
            Home::locate_system(None, &win),
            PathBuf::from(r"D:\Data\cudnnm")
        );
        let win_bare = Env::from_vars([("X", "y")], r"C:\work", true);
        assert_eq!(
            Home::locate_system(None, &win_bare),
            PathBuf::from(r"C:\ProgramData\cudnnm")
        );
        let set = Env::from_vars(
            [(env::CUDNNM_SYSTEM_HOME, r"\\srv\share\cudnnm")],
            r"C:\w",
            true,
        );
        assert_eq!(
            Home::locate_system(None, &set),
            PathBuf::from(r"\\srv\share\cudnnm")
        );
        assert_eq!(
            Home::locate_system(Some(Path::new("rel")), &linux),
            PathBuf::from("/cwd/rel")
        );
        let user = Home::new("/u").with_system(PathBuf::from("/opt/cudnnm"));
        assert_eq!(
            user.system_store_dir(),
            Some(PathBuf::from("/opt/cudnnm").join("store"))
        );
        // The system home reading itself sees one store, not two.
        let admin = Home::new("/opt/cudnnm").with_system(PathBuf::from("/opt/cudnnm"));
        assert_eq!(admin.system_store_dir(), None);
        assert!(Home::system("/opt/cudnnm").is_system());
    }

    #[test]
    fn printed_commands_carry_the_homes_they_need() {
        use crate::command::CommandLine;
        let env = Env::from_vars(
            [
                (env::CUDNNM_HOME, "/env/home"),
                (env::CUDNNM_SYSTEM_HOME, "/env/sys"),
            ],
            "/w",
            false,
        );
        let r = |h: &Home, elevated| {
            h.reach(&env, CommandLine::uninstall("9.1"), elevated)
                .for_host(false)
        };
        // From the environment: nothing to add here; everything under sudo.
        let user = Home::new("/env/home").with_system(PathBuf::from("/env/sys"));
        assert_eq!(r(&user, false), "cudnnm uninstall 9.1");
        assert_eq!(
            r(&user, true),
            "cudnnm --home /env/home --system-home /env/sys uninstall 9.1"
        );
        // From flags: spelled out here too.
        let flagged = Home::new("/flag/home").with_system(PathBuf::from("/flag/sys"));
        assert_eq!(
            r(&flagged, false),
            "cudnnm --home /flag/home --system-home /flag/sys uninstall 9.1"
        );
        // The system home: --system, and the home unless the platform's under sudo.
        assert_eq!(
            r(&Home::system("/env/sys"), false),
            "cudnnm uninstall 9.1 --system"
        );
        assert_eq!(
            r(&Home::system("/env/sys"), true),
            "cudnnm --system-home /env/sys uninstall 9.1 --system"
        );
        assert_eq!(
            r(&Home::system("/opt/cudnnm"), true),
            "cudnnm uninstall 9.1 --system"
        );
    }

    #[test]
    fn config_roundtrip_and_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path());
        assert_eq!(home.config().unwrap(), Config::default());
        fsops::write_atomic(&home.config_file(), b"default = \"8.1\"\nfuture_key = 1\n").unwrap();
        assert_eq!(home.config().unwrap().default.as_deref(), Some("8.1"));
        let c = Config {
            keep_backups: Some(3),
            ..Default::default()
        };
        home.save_config(&c).unwrap();
        assert_eq!(home.config().unwrap(), c);
        fsops::write_atomic(&home.config_file(), b"default = [").unwrap();
        let e = home.config().unwrap_err();
        assert!(e.message().contains("config.toml"));
        fsops::write_atomic(&home.config_file(), b"mode = \"copy\"\n\nmirror = nope\n").unwrap();
        let e = home.config().unwrap_err();
        assert!(e.causes()[0].starts_with("line 3: "), "{:?}", e.causes());
        let hint = e.hint_text().unwrap();
        assert!(
            hint.contains("config.toml' to fix the TOML at line 3, or remove it"),
            "{hint}"
        );
        assert!(!hint.contains("cudnnm default"), "{hint}");
    }
}
