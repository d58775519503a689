//! The toolkits probe: every CUDA toolkit to examine (as `use` finds them,
//! plus `--cuda-root` folders and those `deployments.toml` records), whether
//! this user may change it, another home's unfinished change to it; and
//! `nvcc` on `PATH`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{find_on, s};
use crate::child::Running;
use crate::deploy::Deployments;
use crate::doctor::snapshot::{Nvcc, Snapshot, ToolkitInfo, ToolkitLayout, UnfinishedChange};
use crate::env::{self, Env};
use crate::home::Home;
use crate::toolkit::{self, Layout, Toolkit};
use crate::version::Version;

/// Fills the toolkits: `cuda_roots` first, then those the environment
/// names, then those `deployments` records; each with a home's (another's
/// or this one's) unfinished change to it, if any. Problems go to the notes.
pub(crate) fn probe(
    snap: &mut Snapshot,
    env: &Env,
    home: &Home,
    cuda_roots: &[PathBuf],
    deployments: &Deployments,
) {
    snap.toolkits = find_toolkits(env, cuda_roots, deployments, &mut snap.notes);
    for t in &mut snap.toolkits {
        let root = Path::new(&t.root);
        let own = crate::deploy::inflight::read(root).filter(|m| m.is_from(home) && m.is_live());
        let own_home = own.is_some();
        t.unfinished_change = own
            .or_else(|| crate::deploy::inflight::foreign(home, root))
            .map(|m| UnfinishedChange {
                own_home,
                finish: if m.home.as_os_str().is_empty() {
                    String::new()
                } else {
                    crate::deploy::inflight::finish_command(&m, root, env.is_windows())
                },
                home: s(&m.home),
                backup: m.backup,
                action: m.action,
                running: crate::lock::toolkit_busy(root),
            });
    }
}

/// Every toolkit to examine, each once, named as its first source spelled
/// it: the `--cuda-root` folders (kept even without a readable CUDA version,
/// with a note saying why), every toolkit [`toolkit::discover_named`] finds
/// (`CUDA_PATH`, `CUDA_HOME`, `CUDA_PATH_VX_Y`, `nvcc` on PATH, the default
/// folders), then those `deployments.toml` records elsewhere. A `--cuda-root`
/// folder is a toolkit exactly as for `cudnnm use --cuda-root`.
fn find_toolkits(
    env: &Env,
    cuda_roots: &[PathBuf],
    deployments: &Deployments,
    notes: &mut Vec<String>,
) -> Vec<ToolkitInfo> {
    let windows = env.is_windows();
    let mut out: Vec<ToolkitInfo> = Vec::new();
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let push =
        |out: &mut Vec<ToolkitInfo>, seen: &mut BTreeSet<PathBuf>, named: &Path, t: &Toolkit| {
            if seen.insert(t.root.clone()) {
                out.push(toolkit_info(named, t));
            }
        };
    for root in cuda_roots {
        match Toolkit::at(root, "--cuda-root", windows) {
            Ok(t) => push(&mut out, &mut seen, root, &t),
            Err(_) if !root.is_dir() => {
                notes.push(format!("--cuda-root {}: no such folder", root.display()));
            }
            Err(e) => {
                notes.push(format!("--cuda-root {}: {e}", root.display()));
                let key = fs::canonicalize(root).unwrap_or_else(|_| root.clone());
                if seen.insert(key) {
                    let layout = toolkit::detect_layout(root, windows);
                    out.push(ToolkitInfo {
                        root: s(root),
                        cuda: None,
                        layout: snapshot_layout(layout),
                        found_by: "--cuda-root".into(),
                        writable: writable(root),
                        unfinished_change: None,
                    });
                }
            }
        }
    }
    for n in toolkit::discover_named(env) {
        push(&mut out, &mut seen, &n.names[0], &n.toolkit);
    }
    for d in &deployments.entries {
        if let Ok(t) = Toolkit::at(&d.toolkit, "cudnnm deployment", windows) {
            push(&mut out, &mut seen, &d.toolkit, &t);
        }
    }
    out
}

/// The snapshot's record of toolkit `t`, reported under the path that named it.
fn toolkit_info(named: &Path, t: &Toolkit) -> ToolkitInfo {
    ToolkitInfo {
        root: s(named),
        cuda: Some(t.cuda.clone()),
        layout: snapshot_layout(t.layout),
        found_by: t.found_by.clone(),
        writable: writable(&t.root),
        unfinished_change: None,
    }
}

fn snapshot_layout(l: Layout) -> ToolkitLayout {
    match l {
        Layout::Windows => ToolkitLayout::Windows,
        Layout::Linux => ToolkitLayout::Linux,
    }
}

/// Whether this user may change the toolkit's cuDNN files (probed on `include`, else the root).
fn writable(root: &Path) -> Option<bool> {
    let probe = [root.join("include"), root.to_path_buf()]
        .into_iter()
        .find(|p| p.is_dir())
        .unwrap_or_else(|| root.to_path_buf());
    crate::platform::dir_writable(&probe)
}

/// `nvcc` on `PATH` and, when tools run, its `nvcc --version` running.
pub(crate) struct NvccRun {
    path: Option<PathBuf>,
    child: Option<Running>,
}

/// Finds `nvcc` on `PATH` and starts `nvcc --version` when `run` is set.
pub(crate) fn start_nvcc(env: &Env, run: bool) -> NvccRun {
    let exe = if env.is_windows() { "nvcc.exe" } else { "nvcc" };
    let path = find_on(&env.path_list(env::PATH), exe);
    let child = path
        .as_ref()
        .filter(|_| run)
        .and_then(|p| Running::spawn(Command::new(p).arg("--version")));
    NvccRun { path, child }
}

/// Fills [`Snapshot::nvcc`] from what [`start_nvcc`] found and started.
pub(crate) fn finish_nvcc(snap: &mut Snapshot, run: NvccRun) {
    let Some(p) = run.path else { return };
    snap.nvcc = Some(match run.child {
        Some(c) => {
            let out = c.finish();
            let text = out.as_ref().ok().cloned();
            Nvcc {
                path: s(&p),
                release: text.as_deref().and_then(nvcc_release),
                output: text.or_else(|| out.err()),
            }
        }
        None => Nvcc {
            path: s(&p),
            output: None,
            release: None,
        },
    });
}

/// The CUDA release `nvcc --version` names (`release 11.2, V11.2.152` →
/// `11.2`), read by the toolkit module's one parser; the build number stays
/// in the recorded output.
fn nvcc_release(out: &str) -> Option<Version> {
    toolkit::parse_nvcc_output(out).map(|v| Version::from_parts(&[v.major(), v.minor()]))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;

    #[test]
    fn the_nvcc_release_is_its_major_and_minor() {
        let nv = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.2, V11.2.152\nBuild cuda_11.2.r11.2/compiler.29618528_0\n";
        assert_eq!(nvcc_release(nv).unwrap().to_string(), "11.2");
        assert_eq!(
            nvcc_release("Cuda compilation tools, release 9.0")
                .unwrap()
                .to_string(),
            "9.0"
        );
        assert_eq!(nvcc_release("command not found"), None);
    }

    /// A CUDA 12.4.1 toolkit folder (`version.json`, `include/`, `lib64/`).
    #[cfg(unix)]
    fn toolkit_folder(root: &Path) {
        fs::create_dir_all(root.join("include")).unwrap();
        fs::create_dir_all(root.join("lib64")).unwrap();
        fs::write(
            root.join("version.json"),
            r#"{"cuda":{"name":"CUDA SDK","version":"12.4.1"}}"#,
        )
        .unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn toolkits_come_from_the_toolkit_module_named_as_their_source_wrote_them() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("cuda-12.4");
        toolkit_folder(&real);
        let link = d.path().join("cuda");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let versionless = d.path().join("no-version");
        fs::create_dir_all(versionless.join("include")).unwrap();
        let missing = d.path().join("missing");
        let deployed = d.path().join("deployed-elsewhere");
        toolkit_folder(&deployed);
        let env = Env::from_vars([("CUDA_HOME", link.clone().into_os_string())], "/", false);
        let cuda_roots = vec![versionless.clone(), missing.clone(), real.clone()];
        let deployments = Deployments {
            entries: vec![crate::deploy::Deployment {
                toolkit: deployed.clone(),
                release: "9.27.0.42_cuda12".parse().unwrap(),
                mode: crate::deploy::Mode::Symlink,
                deployed_at: "2026-01-01T00:00:00Z".into(),
                backup: None,
                source: None,
                files: Vec::new(),
            }],
        };
        let mut notes = Vec::new();
        let found: Vec<ToolkitInfo> = find_toolkits(&env, &cuda_roots, &deployments, &mut notes)
            .into_iter()
            .filter(|t| t.root.starts_with(&*d.path().to_string_lossy()))
            .collect();
        let roots: Vec<&str> = found.iter().map(|t| t.root.as_str()).collect();
        assert_eq!(
            roots,
            vec![
                s(&versionless).as_str(),
                s(&real).as_str(),
                s(&deployed).as_str()
            ],
            "CUDA_HOME names the --cuda-root toolkit through a link: listed once"
        );
        assert_eq!(found[0].cuda, None);
        assert_eq!(found[0].found_by, "--cuda-root");
        assert_eq!(found[1].cuda, Some("12.4.1".parse().unwrap()));
        assert_eq!(found[1].layout, ToolkitLayout::Linux);
        assert_eq!(found[2].found_by, "cudnnm deployment");
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].contains("could not read the CUDA version") && notes[0].contains("no-version"),
            "{notes:?}"
        );
        assert_eq!(
            notes[1],
            format!("--cuda-root {}: no such folder", missing.display())
        );

        // Without --cuda-root the variable's own spelling is kept, so checks
        // that compare CUDA_HOME with the toolkit roots find it.
        let mut notes = Vec::new();
        let found = find_toolkits(&env, &[], &Deployments::default(), &mut notes);
        let t = found
            .iter()
            .find(|t| t.root.starts_with(&*d.path().to_string_lossy()))
            .unwrap();
        assert_eq!(t.root, s(&link));
        assert_eq!(t.found_by, "CUDA_HOME");
        assert!(notes.is_empty(), "{notes:?}");
    }
}
