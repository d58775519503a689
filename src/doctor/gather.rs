//! Gathering: fills a [`Snapshot`] from this machine by running the probes
//! (`doctor/probe/`, one per concern), each filling its part. The only part of `doctor`
//! that looks at the host; the OS-specific bits (registry, Windows version,
//! write access) come from [`crate::platform`], and which OS the snapshot
//! describes is the environment's to say.
//!
//! Cost: one `read_dir` per folder examined, a few small reads per cuDNN
//! file (header macros, ELF/PE headers and dynamic tables through
//! `object::ReadCache`), no hashing. External programs (`ldconfig -p`,
//! `nvcc --version`, `nvidia-smi`) and the library loads (each in its own
//! child process, so that two copies of one soname never meet in one
//! process) all run at the same time. Every phase's time is recorded in
//! [`Snapshot::timings_ms`].

use std::path::PathBuf;
use std::time::Instant;

use super::probe::{
    consumers, deployments, environment, files, folders, gpu, headers, identity, ldcache, loads,
    netfs, pin, python, store, toolkits,
};
use super::snapshot::{SNAPSHOT_SCHEMA, Snapshot};
use crate::env::Env;
use crate::home::Home;

use crate::libcudnn::Querier;

/// What to gather.
pub struct Options<'a> {
    /// Toolkit roots given with `--cuda-root`, examined first.
    pub cuda_roots: Vec<PathBuf>,
    /// How to load libraries; `None` skips loading (versions then come from
    /// file names and headers).
    pub query: Option<Querier<'a>>,
    /// Run `ldconfig -p`, `nvcc --version` and `nvidia-smi`.
    pub run_tools: bool,
    /// The program watched ([`super::process`]): its cuDNN files' folders
    /// are examined too, and it is kept in the snapshot.
    pub process: Option<super::snapshot::ProcessView>,
}

/// Takes a snapshot of the machine `env` describes (this one).
pub fn gather(env: &Env, home: &Home, opts: &Options) -> Snapshot {
    let windows = env.is_windows();
    let mut laps = Laps::start();
    let mut snap = Snapshot {
        schema: SNAPSHOT_SCHEMA,
        taken_at: crate::store::now_rfc3339(),
        cudnnm_version: env!("CARGO_PKG_VERSION").to_string(),
        cwd: env.cwd().to_string_lossy().into_owned(),
        ..Default::default()
    };
    // The slow external programs start first; they are collected when needed.
    let ldconfig = ldcache::start(env, opts.run_tools);
    let nvcc = toolkits::start_nvcc(env, opts.run_tools);
    let smi = gpu::start(env, opts.run_tools);

    environment::probe(&mut snap, env);
    laps.lap(&mut snap, "environment");

    let deployments = deployments::load(&mut snap.notes, home);
    toolkits::probe(&mut snap, env, home, &opts.cuda_roots, &deployments);
    headers::probe(&mut snap, env);
    let store = store::scan(&mut snap, home);
    netfs::probe(&mut snap, home);
    laps.lap(&mut snap, "toolkits");

    let sites = python::site_packages(env);
    let mut scan = folders::probe(&snap, env, &sites);
    if let Some(p) = &opts.process {
        for f in &p.mapped {
            if let Some(d) = std::path::Path::new(f).parent() {
                scan.add(d);
            }
        }
        snap.process = Some(p.clone());
    }
    snap.frameworks = python::frameworks(&sites, windows);
    if !windows {
        snap.consumers = consumers::probe(&snap.frameworks, &mut scan);
    }
    laps.lap(&mut snap, "folders, frameworks");

    let cache = ldcache::probe(ldconfig, &mut scan);
    laps.lap(&mut snap, "ldconfig");

    files::probe(&mut snap, env, home, &scan);
    laps.lap(&mut snap, "files");

    store::mark_copies(&mut snap.files, &store.releases);
    laps.lap(&mut snap, "store copies");

    if let Some(query) = opts.query {
        loads::probe(&mut snap.files, query, windows);
    }
    laps.lap(&mut snap, "library loads");

    files::listings(&mut snap, &scan, cache);
    pin::probe(&mut snap, env, home);
    store::probe(&mut snap, &store);
    snap.deployments = deployments::states(&store.releases, &deployments, windows);
    laps.lap(&mut snap, "frameworks, pin, deployments");

    toolkits::finish_nvcc(&mut snap, nvcc);
    gpu::finish(&mut snap, smi);
    laps.lap(&mut snap, "nvcc, nvidia-smi");
    identity::probe(&mut snap, env);
    laps.lap(&mut snap, "folder identities");
    laps.total(&mut snap);
    snap
}

/// The time of each gathering phase, into [`Snapshot::timings_ms`].
struct Laps {
    start: Instant,
    lap: Instant,
}

impl Laps {
    fn start() -> Laps {
        let now = Instant::now();
        Laps {
            start: now,
            lap: now,
        }
    }

    /// Records the time since the last lap as phase `what`.
    fn lap(&mut self, snap: &mut Snapshot, what: &str) {
        snap.timings_ms
            .push((what.to_string(), self.lap.elapsed().as_millis() as u64));
        self.lap = Instant::now();
    }

    /// Records the time since the start as `total`.
    fn total(self, snap: &mut Snapshot) {
        snap.timings_ms
            .push(("total".into(), self.start.elapsed().as_millis() as u64));
    }
}
