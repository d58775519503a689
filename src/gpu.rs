//! The NVIDIA GPUs a CUDA program started here would use, and their compute
//! capability, as `nvidia-smi` reports them:
//! `nvidia-smi --query-gpu=index,uuid,name,compute_cap --format=csv,noheader`
//! (the `compute_cap` field exists since driver 510; see `nvidia-smi
//! --help-query-gpu`). Only `install` and `use` ask (never `env`, `exec` or
//! the shell hooks, which must stay fast), `doctor`, whose probe runs the
//! same query and selection, and a failing `default` or `pin`, whose hint
//! must not suggest an install the GPUs refuse.
//!
//! `CUDA_VISIBLE_DEVICES` is honoured as CUDA itself reads it
//! (<https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars>):
//! unset means every GPU; an empty value means none; otherwise a
//! comma-separated list of indices or `GPU-…` UUIDs (a unique prefix is
//! enough), and the list stops at the first entry that names no GPU.
//! Indices count in CUDA's device order: PCI bus order (nvidia-smi's) when
//! `CUDA_DEVICE_ORDER=PCI_BUS_ID`, otherwise CUDA's default "fastest first",
//! which this module approximates as highest compute capability first
//! (ties in PCI order).
//!
//! The program is started through a [`Runner`], so unit tests give canned
//! output; integration tests put a stand-in `nvidia-smi` script on `PATH`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::child::Running;
use crate::env::{self, Env};
use crate::version::Version;

/// `CUDA_VISIBLE_DEVICES`: the GPUs CUDA programs may use.
pub const CUDA_VISIBLE_DEVICES: &str = "CUDA_VISIBLE_DEVICES";
/// `CUDA_DEVICE_ORDER`: `PCI_BUS_ID` or `FASTEST_FIRST` (CUDA's default).
pub const CUDA_DEVICE_ORDER: &str = "CUDA_DEVICE_ORDER";

/// Where NVIDIA's Windows drivers put `nvidia-smi.exe` when it is not on `PATH`
/// (older drivers: NVSMI; from driver 418 also System32).
const WINDOWS_NVSMI: [&str; 2] = [
    r"C:\Windows\System32\nvidia-smi.exe",
    r"C:\Program Files\NVIDIA Corporation\NVSMI\nvidia-smi.exe",
];

/// The query cudnnm sends (`--format=csv,noheader`: one GPU per line).
pub const QUERY: [&str; 2] = [
    "--query-gpu=index,uuid,name,compute_cap",
    "--format=csv,noheader",
];

/// One GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Gpu {
    /// nvidia-smi's index (PCI bus order).
    pub index: u32,
    /// The UUID (`GPU-8932f937-…`).
    pub uuid: String,
    /// The product name (`NVIDIA GeForce GTX 1080`).
    pub name: String,
    /// The compute capability (`6.1`).
    pub compute: Version,
}

/// Runs a program and returns its standard output.
pub trait Runner {
    /// Runs `program` with `args`.
    ///
    /// # Errors
    /// A one-line reason when it cannot start, fails or times out.
    fn run(&self, program: &Path, args: &[&str]) -> Result<String, String>;
}

/// Runs real processes (killed after [`crate::child::TIMEOUT`]).
pub struct Processes;

impl Runner for Processes {
    fn run(&self, program: &Path, args: &[&str]) -> Result<String, String> {
        Running::spawn(Command::new(program).args(args))
            .ok_or_else(|| format!("could not start {}", program.display()))?
            .finish()
    }
}

/// Where `nvidia-smi` is: on `PATH`, else (Windows) where the driver installs it.
pub fn find_nvidia_smi(env: &Env) -> Option<PathBuf> {
    let exe = if env.is_windows() {
        "nvidia-smi.exe"
    } else {
        "nvidia-smi"
    };
    env.path_list(env::PATH)
        .into_iter()
        .map(|d| d.join(exe))
        .find(|p| p.is_file())
        .or_else(|| {
            env.is_windows()
                .then(|| {
                    WINDOWS_NVSMI
                        .iter()
                        .map(PathBuf::from)
                        .find(|p| p.is_file())
                })
                .flatten()
        })
}

/// The GPUs a CUDA program started in `env` would use, in CUDA's order.
/// Empty when there is no `nvidia-smi`, it fails, or no GPU is visible:
/// callers then say nothing.
pub fn visible(env: &Env, runner: &dyn Runner) -> Vec<Gpu> {
    let Some(smi) = find_nvidia_smi(env) else {
        return Vec::new();
    };
    let Ok(out) = runner.run(&smi, &QUERY) else {
        return Vec::new();
    };
    in_use(env, parse(&out))
}

/// The GPUs of `all` (every GPU nvidia-smi lists) that a CUDA program
/// started in `env` would use, in CUDA's order: `CUDA_VISIBLE_DEVICES` and
/// `CUDA_DEVICE_ORDER` applied ([`select`]). `install`, `use` and `doctor`
/// all judge by this one selection.
pub fn in_use(env: &Env, all: Vec<Gpu>) -> Vec<Gpu> {
    let order_pci = env
        .var(CUDA_DEVICE_ORDER)
        .is_some_and(|o| o.trim().eq_ignore_ascii_case("PCI_BUS_ID"));
    let visible = env
        .var_os(CUDA_VISIBLE_DEVICES)
        .map(|v| v.to_string_lossy().into_owned());
    select(all, visible.as_deref(), order_pci)
}

/// The query for the driver version (one line per GPU, the same on each).
pub const DRIVER_QUERY: [&str; 2] = ["--query-gpu=driver_version", "--format=csv,noheader"];

/// The driver version from [`DRIVER_QUERY`]'s answer, exactly as written
/// (`535.104.05`); `None` when no line reads as one.
pub fn parse_driver(out: &str) -> Option<crate::version::DriverVersion> {
    out.lines().find_map(|l| l.trim().parse().ok())
}

/// Parses the output of [`QUERY`]: `0, GPU-…, NVIDIA GeForce GTX 1080, 6.1`
/// per line (CRLF or LF). Lines whose index or compute capability cannot be
/// read (`[N/A]` from old drivers) are left out.
pub fn parse(out: &str) -> Vec<Gpu> {
    out.lines()
        .filter_map(|line| {
            let cols: Vec<&str> = line.split(',').map(str::trim).collect();
            if cols.len() < 4 {
                return None;
            }
            let index = cols[0].parse().ok()?;
            let compute = cols[cols.len() - 1].parse::<Version>().ok()?;
            (compute.parts().len() == 2).then(|| Gpu {
                index,
                uuid: cols[1].to_string(),
                name: cols[2..cols.len() - 1].join(", "),
                compute,
            })
        })
        .collect()
}

/// The GPUs `CUDA_VISIBLE_DEVICES` (`visible`, `None` when unset) leaves, in
/// CUDA's numbering: PCI order when `order_pci`, else highest compute
/// capability first.
pub fn select(mut all: Vec<Gpu>, visible: Option<&str>, order_pci: bool) -> Vec<Gpu> {
    all.sort_by_key(|g| g.index);
    if !order_pci {
        all.sort_by(|a, b| b.compute.cmp(&a.compute));
    }
    let Some(list) = visible else { return all };
    let mut out: Vec<Gpu> = Vec::new();
    for entry in list.split(',').map(str::trim) {
        let hit = if let Ok(i) = entry.parse::<usize>() {
            all.get(i)
        } else if entry.len() > 4 && entry[..4].eq_ignore_ascii_case("GPU-") {
            let mut m = all.iter().filter(|g| {
                g.uuid.len() >= entry.len() && g.uuid[..entry.len()].eq_ignore_ascii_case(entry)
            });
            match (m.next(), m.next()) {
                (Some(g), None) => Some(g),
                _ => None,
            }
        } else {
            None
        };
        // CUDA stops at the first entry that names no device (`-1` hides all).
        let Some(g) = hit else { break };
        if !out.contains(g) {
            out.push(g.clone());
        }
    }
    out
}

/// The GPU with the lowest compute capability: a release must run on it.
pub fn oldest(gpus: &[Gpu]) -> Option<&Gpu> {
    gpus.iter().min_by(|a, b| a.compute.cmp(&b.compute))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;

    const TWO: &str = "0, GPU-aaaa1111-0000, NVIDIA GeForce GTX 1080, 6.1\r\n\
                       1, GPU-bbbb2222-0000, NVIDIA GeForce RTX 2080 Ti, 7.5\r\n";

    struct Canned(Result<String, String>);
    impl Runner for Canned {
        fn run(&self, _: &Path, args: &[&str]) -> Result<String, String> {
            assert_eq!(args, QUERY);
            self.0.clone()
        }
    }

    fn names(g: &[Gpu]) -> Vec<&str> {
        g.iter().map(|g| g.name.as_str()).collect()
    }

    #[test]
    fn parses_lines_with_crlf_and_skips_unreadable_ones() {
        let g = parse(&format!(
            "{TWO}2, GPU-cccc, Tesla K80, [N/A]\n\nnot a gpu line\n"
        ));
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].index, 0);
        assert_eq!(g[0].uuid, "GPU-aaaa1111-0000");
        assert_eq!(g[0].name, "NVIDIA GeForce GTX 1080");
        assert_eq!(g[0].compute.to_string(), "6.1");
        assert_eq!(g[1].compute.to_string(), "7.5");
    }

    #[test]
    fn cuda_visible_devices_picks_by_index_and_uuid_and_stops_at_a_bad_entry() {
        let all = parse(TWO);
        assert_eq!(select(all.clone(), None, true).len(), 2);
        assert!(select(all.clone(), Some(""), true).is_empty());
        assert!(select(all.clone(), Some("-1"), true).is_empty());
        assert_eq!(
            names(&select(all.clone(), Some("1"), true)),
            ["NVIDIA GeForce RTX 2080 Ti"]
        );
        assert_eq!(
            names(&select(all.clone(), Some("GPU-aaaa"), true)),
            ["NVIDIA GeForce GTX 1080"]
        );
        // Entries after an invalid one are ignored, as CUDA does.
        assert_eq!(
            names(&select(all.clone(), Some("1,7,0"), true)),
            ["NVIDIA GeForce RTX 2080 Ti"]
        );
        // Default order: fastest (highest compute capability) first.
        assert_eq!(
            names(&select(all.clone(), Some("0"), false)),
            ["NVIDIA GeForce RTX 2080 Ti"]
        );
        assert_eq!(oldest(&all).unwrap().compute.to_string(), "6.1");
    }

    #[test]
    fn visible_reads_the_environment_and_is_empty_without_nvidia_smi() {
        let dir = tempfile::tempdir().unwrap();
        // The host's own rules: a Windows temp path holds a drive colon.
        let env = |vars: Vec<(&str, String)>| {
            Env::from_vars(vars, dir.path(), crate::platform::HOST_WINDOWS)
        };
        let no_smi = env(vec![("PATH", dir.path().display().to_string())]);
        assert!(visible(&no_smi, &Canned(Ok(TWO.into()))).is_empty());
        std::fs::write(dir.path().join("nvidia-smi"), "").unwrap();
        std::fs::write(dir.path().join("nvidia-smi.exe"), "").unwrap();
        let path = dir.path().display().to_string();
        let all = env(vec![("PATH", path.clone())]);
        assert_eq!(visible(&all, &Canned(Ok(TWO.into()))).len(), 2);
        assert!(visible(&all, &Canned(Err("exited with 9".into()))).is_empty());
        let one = env(vec![
            ("PATH", path),
            (CUDA_VISIBLE_DEVICES, "0".into()),
            (CUDA_DEVICE_ORDER, "PCI_BUS_ID".into()),
        ]);
        assert_eq!(
            names(&visible(&one, &Canned(Ok(TWO.into())))),
            ["NVIDIA GeForce GTX 1080"]
        );
    }
}
