//! Operations: the decisions behind the commands that change or read the
//! home as a whole — install, lock, resolving against the catalog, export,
//! deploying and rolling back, what applies here — between the core (store,
//! catalog, deploy, pin …) and the front end
//! (`docs/architecture.md#layers`).
//!
//! Each operation takes typed inputs and returns a typed outcome that `cli`
//! renders as text or JSON; nothing here prints, reads the terminal or
//! exits, so every decision is tested without a process. What an operation
//! says while it runs (a download starting, a build chosen) goes to its
//! [`Reporter`] as an [`Event`], which the CLI renders.

use std::path::Path;

use crate::catalog::Catalog;
use crate::command::CommandLine;
use crate::deploy::{Guard, Recovered};
use crate::env::Env;
use crate::error::{Error, Kind, Result};
use crate::home::Home;
use crate::lock::HomeLock;

pub mod backups;
pub mod current;
pub mod default;
pub mod event;
pub mod export;
pub mod frameworks;
pub mod gpu;
pub mod install;
pub mod list;
pub mod lock;
pub mod offers;
pub mod pin;
pub mod remote;
pub mod rollback;
pub mod toolkits;
pub mod uninstall;
pub mod use_;
pub mod which;

pub use event::Event;

/// Whom an operation tells what it is doing: the events it reports and,
/// through [`crate::deploy::Reporter`], the progress of long steps,
/// recoveries and waits for a toolkit's lock. Every method has a silent
/// default.
pub trait Reporter: crate::deploy::Reporter {
    /// Something the operation says while it runs.
    fn event(&self, event: &Event<'_>) {
        let _ = event;
    }

    /// Where the messages of a pip the operation runs go (`install
    /// pip:…`, `lock` of a wheel): nowhere by default.
    fn pip_output(&self) -> crate::catalog::pip::PipOutput {
        crate::catalog::pip::PipOutput::silent()
    }
}

/// A reporter that says nothing (tests).
impl Reporter for crate::deploy::Silent {}

/// What every operation reads: the home it works on, the system home, the
/// environment read once, and whom to tell.
#[derive(Clone, Copy)]
pub struct Session<'a> {
    /// The home the operation works on.
    pub home: &'a Home,
    /// The system home's folder (`--system-home`, `CUDNNM_SYSTEM_HOME`, or the platform's).
    pub system_home: &'a Path,
    /// The process environment at start-up.
    pub env: &'a Env,
    /// Whom to tell.
    pub report: &'a dyn Reporter,
}

impl<'a> Session<'a> {
    /// Takes the home lock, reporting [`Event::HomeLockWait`] when another
    /// cudnnm holds it; then removes what a kill left of a state file's
    /// temporary copy (`.tmp-*`, an hour old).
    ///
    /// # Errors
    /// The home cannot be created or locked.
    pub fn lock(&self) -> Result<HomeLock> {
        let options = crate::lock::LockOptions {
            force_fallback: cfg!(debug_assertions)
                && self
                    .env
                    .var(crate::env::CUDNNM_TEST_LOCK_UNSUPPORTED)
                    .is_some(),
        };
        let lock = self.home.lock_with(options, |holder| {
            self.report.event(&Event::HomeLockWait {
                lock_file: &self.home.lock_file(),
                held_file: &self.home.root().join(crate::lock::HELD_FILE),
                holder: holder.as_deref(),
            })
        })?;
        crate::fsops::sweep_stale_temps(self.home.root(), std::time::Duration::from_secs(3600));
        Ok(lock)
    }

    /// Takes the home lock and starts the guard every change goes through
    /// ([`Guard`]): what a crash left is finished or undone first, each
    /// reported.
    ///
    /// # Errors
    /// As [`Session::lock`], and a journal that cannot be read or acted on.
    pub fn guard(&self) -> Result<Guard<'a>> {
        Guard::begin(self.lock()?, self.home, self.env, self.report)
    }

    /// For read-only operations: when a journal (or a release an
    /// interrupted `install --force` moved aside) exists, waits for the
    /// home lock (the change may still be running) and recovers; otherwise
    /// touches nothing.
    ///
    /// # Errors
    /// As [`Session::guard`].
    pub fn recover_if_pending(&self) -> Result<Vec<Recovered>> {
        if !crate::deploy::recovery_pending(self.home) {
            return Ok(Vec::new());
        }
        Ok(self.guard()?.recovered().to_vec())
    }

    /// A command as a hint prints it: for this home, run by the same
    /// person ([`Home::reach`]), in the user's shell.
    pub fn printed(&self, c: CommandLine) -> String {
        self.home
            .reach(self.env, c, false)
            .for_host(self.env.is_windows())
    }

    /// `command` for the system store, as a person runs it (as root or
    /// from an Administrator terminal when `elevated`; the caller adds
    /// `sudo`): `--system`, and the system home spelled out where the
    /// command would not find it ([`Home::reach`]).
    pub fn on_system(&self, command: CommandLine, elevated: bool) -> CommandLine {
        Home::system(self.system_home).reach(self.env, command, elevated)
    }

    /// The catalog (the user's `catalog.toml` over the embedded one), or
    /// the embedded one when that cannot be read: for hints and choices
    /// that must not fail a command.
    pub fn catalog_or_embedded(&self) -> Catalog {
        Catalog::load(self.home).unwrap_or_else(|_| Catalog::embedded())
    }
}

/// Refuses, before anything is changed, a command that would write the
/// system home at `system` when this user may not: [`Kind::Permission`]
/// (exit 5) with the command to run as root or as Administrator. The
/// nearest existing folder of `system/store` decides (unknown on Windows,
/// where ACLs decide and a refused write fails with the same kind).
pub fn check_system_writable(
    system: &Path,
    env: &crate::env::Env,
    command: CommandLine,
) -> Result<()> {
    let store = system.join("store");
    let mut probe = store.as_path();
    while !probe.exists() {
        match probe.parent() {
            Some(p) => probe = p,
            None => return Ok(()),
        }
    }
    if crate::platform::dir_writable(probe) != Some(false) {
        return Ok(());
    }
    let windows = env.is_windows();
    let command = crate::home::Home::system(system).reach(env, command, true);
    let how = if windows {
        format!(
            "run it from an Administrator terminal: `{}`",
            command.for_host(true)
        )
    } else {
        format!("run it as root: `{}`", command.sudo().for_host(false))
    };
    Err(Error::new(
        Kind::Permission,
        format!(
            "cannot write the system store '{}' ('{}' is not writable for this user)",
            store.display(),
            probe.display()
        ),
    )
    .hint(format!(
        "{how}; or ask whoever administers this machine (releases a user installs without --system go to their own home)"
    )))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
pub(crate) mod testing {
    //! A home, environment and reporter for the unit tests of operations.

    use std::cell::RefCell;
    use std::path::{Path, PathBuf};

    use super::{Event, Reporter, Session};
    use crate::env::Env;
    use crate::home::Home;
    use crate::shape::Shape;
    use crate::store::{Receipt, Release, Source, Store};
    use crate::version::{CudaVariant, Platform, Version};

    /// Records every event as the CLI would print it (its `Debug`).
    #[derive(Default)]
    pub struct Recorder {
        pub events: RefCell<Vec<String>>,
    }

    impl crate::deploy::Reporter for Recorder {}

    impl Reporter for Recorder {
        fn event(&self, event: &Event<'_>) {
            self.events.borrow_mut().push(format!("{event:?}"));
        }
    }

    /// A home in a temporary folder, an environment of this host's kind
    /// (no `PATH`: no `nvidia-smi`, no `nvcc`) whose working folder is that
    /// folder, and a recorder.
    pub struct Fixture {
        pub dir: tempfile::TempDir,
        pub home: Home,
        pub system: PathBuf,
        pub env: Env,
        pub report: Recorder,
    }

    impl Fixture {
        pub fn new() -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            let home = Home::new(dir.path().join("home"));
            let system = dir.path().join("system");
            let env = Env::from_vars([("PATH", "")], dir.path(), crate::platform::HOST_WINDOWS);
            Fixture {
                home,
                system,
                env,
                report: Recorder::default(),
                dir,
            }
        }

        pub fn session(&self) -> Session<'_> {
            Session {
                home: &self.home,
                system_home: &self.system,
                env: &self.env,
                report: &self.report,
            }
        }

        pub fn root(&self) -> &Path {
            self.dir.path()
        }

        /// A release of `version` for `cuda` (Linux x86-64) in the home's
        /// store, with a receipt recording `source` and no files.
        pub fn release(&self, version: &str, cuda: &str, source: Source) -> Release {
            let version: Version = version.parse().unwrap();
            let cuda: CudaVariant = cuda.parse().unwrap();
            let dir = Store::new(&self.home).release_dir(&version, &cuda);
            std::fs::create_dir_all(dir.join("lib")).unwrap();
            let receipt = Receipt {
                schema: 1,
                header_version: version.triple(),
                version,
                cuda,
                platform: Platform::LinuxX86_64,
                installed_at: "2026-01-01T00:00:00Z".into(),
                source,
                files: vec![],
                flavour: None,
            };
            std::fs::write(dir.join("receipt.toml"), receipt.to_toml()).unwrap();
            Release { dir, receipt }
        }

        /// The events reported so far.
        pub fn events(&self) -> Vec<String> {
            self.report.events.borrow().clone()
        }
    }

    /// A receipt's source: a folder of that name (no hash, no URL).
    pub fn folder(name: &str) -> Source {
        Source {
            kind: Shape::Folder,
            name: name.into(),
            sha256: None,
            size: 0,
            from: crate::store::Provenance::Local,
            dist: None,
        }
    }
}
