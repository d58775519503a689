//! The GPU probe: the NVIDIA driver version and each GPU's compute
//! capability, from `nvidia-smi` (on `PATH`, or where the Windows driver
//! puts it).

use std::path::PathBuf;
use std::process::Command;

use super::{find_on, s};
use crate::child::Running;
use crate::doctor::snapshot::{DriverInfo, Gpu, Snapshot};
use crate::env::{self, Env};

/// Where the Windows driver installs `nvidia-smi.exe` when it is not on `PATH`.
const WINDOWS_NVSMI: &str = r"C:\Program Files\NVIDIA Corporation\NVSMI\nvidia-smi.exe";

/// `nvidia-smi` running, when found and tools run.
pub(crate) struct SmiRun {
    path: PathBuf,
    child: Running,
}

/// Finds `nvidia-smi` and starts its query when `run` is set.
pub(crate) fn start(env: &Env, run: bool) -> Option<SmiRun> {
    let windows = env.is_windows();
    let exe = if windows {
        "nvidia-smi.exe"
    } else {
        "nvidia-smi"
    };
    let path = find_on(&env.path_list(env::PATH), exe).or_else(|| {
        windows
            .then(|| PathBuf::from(WINDOWS_NVSMI))
            .filter(|p| p.is_file())
    })?;
    if !run {
        return None;
    }
    let child = Running::spawn(Command::new(&path).args([
        "--query-gpu=name,driver_version,compute_cap",
        "--format=csv,noheader",
    ]))?;
    Some(SmiRun { path, child })
}

/// Fills [`Snapshot::driver`] from the query [`start`] began; a failure is a note.
pub(crate) fn finish(snap: &mut Snapshot, run: Option<SmiRun>) {
    let Some(run) = run else { return };
    match run.child.finish() {
        Ok(out) => snap.driver = Some(parse_nvidia_smi(&s(&run.path), &out)),
        Err(e) => snap.notes.push(format!("nvidia-smi: {e}")),
    }
}

/// Parses `nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader`.
fn parse_nvidia_smi(tool: &str, out: &str) -> DriverInfo {
    let mut d = DriverInfo {
        tool: tool.to_string(),
        output: out.to_string(),
        ..Default::default()
    };
    // A GPU name may hold commas: the driver version and compute capability
    // are the last two columns. A line whose driver column does not read as
    // a version is not this query's answer and is skipped; a compute
    // capability of `[N/A]` is kept as unknown.
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        if cols.len() < 3 {
            continue;
        }
        let n = cols.len();
        let Ok(version) = cols[n - 2].parse() else {
            continue;
        };
        if d.version.is_none() {
            d.version = Some(version);
        }
        d.gpus.push(Gpu {
            name: cols[..n - 2].join(", "),
            compute_capability: cols[n - 1].parse().ok(),
        });
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_driver_and_gpus() {
        let smi = "NVIDIA GeForce RTX 3080, 550.54.15, 8.6\nTesla K80, 550.54.15, 3.7\n";
        let d = parse_nvidia_smi("nvidia-smi", smi);
        assert_eq!(d.version.unwrap().to_string(), "550.54.15");
        assert_eq!(d.gpus.len(), 2);
        assert_eq!(
            d.gpus[1].compute_capability.as_ref().unwrap().to_string(),
            "3.7"
        );
        assert!(parse_nvidia_smi("x", "garbage").version.is_none());
        // A name with a comma; and another query's answer (index, uuid,
        // name, compute_cap) is not read as a driver and GPU.
        let d = parse_nvidia_smi("x", "Quadro RTX 8000, rev 2, 535.1, 7.5\n");
        assert_eq!(d.gpus[0].name, "Quadro RTX 8000, rev 2");
        let d = parse_nvidia_smi("x", "0, GPU-1234, NVIDIA GeForce GTX 1080, 6.1\n");
        assert!(d.version.is_none() && d.gpus.is_empty(), "{d:?}");
    }
}
