//! The GPU probe: the NVIDIA driver version and every GPU, from
//! `nvidia-smi` (on `PATH`, or where the Windows driver puts it), through
//! [`crate::gpu`]: the same query, parser and `CUDA_VISIBLE_DEVICES`
//! selection that `install` and `use` use, so doctor and they never read the
//! machine differently. Every GPU is recorded; the ones a CUDA program
//! started here would not use are marked [`Gpu::hidden`].

use std::path::PathBuf;
use std::process::Command;

use super::s;
use crate::child::Running;
use crate::doctor::snapshot::{DriverInfo, Gpu, Snapshot};
use crate::env::Env;
use crate::gpu;

/// The two `nvidia-smi` queries running (GPUs, driver version).
pub(crate) struct SmiRun {
    path: PathBuf,
    gpus: Option<Running>,
    driver: Option<Running>,
    /// The GPUs a CUDA program would use, by nvidia-smi index, decided by
    /// this environment once the list is in.
    env: Env,
}

/// Finds `nvidia-smi` and starts both queries when `run` is set.
pub(crate) fn start(env: &Env, run: bool) -> Option<SmiRun> {
    let path = gpu::find_nvidia_smi(env)?;
    if !run {
        return None;
    }
    let gpus = Running::spawn(Command::new(&path).args(gpu::QUERY));
    let driver = Running::spawn(Command::new(&path).args(gpu::DRIVER_QUERY));
    Some(SmiRun {
        path,
        gpus,
        driver,
        env: env.clone(),
    })
}

/// Fills [`Snapshot::driver`] from the queries [`start`] began; a failure is a note.
pub(crate) fn finish(snap: &mut Snapshot, run: Option<SmiRun>) {
    let Some(run) = run else { return };
    let tool = s(&run.path);
    let out = match run.gpus.map(Running::finish) {
        Some(Ok(out)) => out,
        Some(Err(e)) => {
            snap.notes.push(format!("nvidia-smi: {e}"));
            return;
        }
        None => {
            snap.notes
                .push(format!("nvidia-smi: could not start {tool}"));
            return;
        }
    };
    let driver = match run.driver.map(Running::finish) {
        Some(Ok(d)) => d,
        Some(Err(e)) => {
            snap.notes.push(format!("nvidia-smi (driver version): {e}"));
            String::new()
        }
        None => String::new(),
    };
    snap.driver = Some(driver_info(&run.env, tool, &out, &driver));
}

/// The snapshot record from the GPU query's answer `out` and the driver
/// query's answer `driver`, judged by `env`'s `CUDA_VISIBLE_DEVICES`.
fn driver_info(env: &Env, tool: String, out: &str, driver: &str) -> DriverInfo {
    let all = gpu::parse(out);
    let used: Vec<u32> = gpu::in_use(env, all.clone())
        .iter()
        .map(|g| g.index)
        .collect();
    let mut gpus: Vec<Gpu> = all
        .into_iter()
        .map(|g| Gpu {
            hidden: !used.contains(&g.index),
            name: g.name,
            compute_capability: Some(g.compute),
            index: Some(g.index),
            uuid: Some(g.uuid),
        })
        .collect();
    // GPUs whose compute capability the driver does not give (`[N/A]`, old
    // drivers) are listed too, as unknown: nothing is judged by them.
    for line in out.lines() {
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        let Some(index) = cols.first().and_then(|c| c.parse::<u32>().ok()) else {
            continue;
        };
        if cols.len() >= 4 && !gpus.iter().any(|g| g.index == Some(index)) {
            gpus.push(Gpu {
                name: cols[2..cols.len() - 1].join(", "),
                compute_capability: None,
                index: Some(index),
                uuid: Some(cols[1].to_string()),
                hidden: false,
            });
        }
    }
    gpus.sort_by_key(|g| g.index);
    DriverInfo {
        tool,
        output: format!("{out}{driver}"),
        version: gpu::parse_driver(driver),
        gpus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str =
        "0, GPU-aaaa, NVIDIA GeForce GTX 1080, 6.1\n1, GPU-bbbb, NVIDIA GeForce RTX 2080 Ti, 7.5\n";

    fn env(vars: &[(&str, &str)]) -> Env {
        Env::from_vars(
            vars.iter().map(|(k, v)| (*k, v.to_string())),
            std::path::Path::new("/"),
            false,
        )
    }

    #[test]
    fn every_gpu_is_listed_and_the_hidden_ones_marked() {
        let d = driver_info(
            &env(&[]),
            "nvidia-smi".into(),
            TWO,
            "535.104.05\n535.104.05\n",
        );
        assert_eq!(d.version.as_ref().unwrap().to_string(), "535.104.05");
        assert_eq!(d.gpus.len(), 2);
        assert!(d.gpus.iter().all(|g| !g.hidden));
        let e = env(&[
            ("CUDA_VISIBLE_DEVICES", "1"),
            ("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
        ]);
        let d = driver_info(&e, "nvidia-smi".into(), TWO, "");
        assert!(d.version.is_none());
        assert_eq!(
            d.gpus.iter().map(|g| g.hidden).collect::<Vec<_>>(),
            [true, false]
        );
        assert_eq!(d.gpus[1].uuid.as_deref(), Some("GPU-bbbb"));
        // An old driver's `[N/A]` compute capability: listed, unknown.
        let d = driver_info(
            &env(&[]),
            "x".into(),
            "0, GPU-cc, Tesla K80, [N/A]\n",
            "470.82.01\n",
        );
        assert_eq!(d.gpus.len(), 1);
        assert_eq!(d.gpus[0].name, "Tesla K80");
        assert!(d.gpus[0].compute_capability.is_none() && !d.gpus[0].hidden);
        assert_eq!(d.version.unwrap().to_string(), "470.82.01");
        // CUDA's default order is fastest first: index 0 is the 2080 Ti.
        let d = driver_info(&env(&[("CUDA_VISIBLE_DEVICES", "0")]), "x".into(), TWO, "");
        assert_eq!(
            d.gpus.iter().map(|g| g.hidden).collect::<Vec<_>>(),
            [true, false]
        );
    }
}
