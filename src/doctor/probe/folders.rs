//! Which folders to list: the toolkits' cuDNN folders, every loader path
//! entry and the library folders just below it, the loader's fixed folders,
//! the system include folders, and the Python and conda folders where cuDNN
//! wheels and packages put their files.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::environment::triplet;
use super::subdirs;
use crate::doctor::snapshot::Snapshot;
use crate::env::{self, Env};
use crate::version::Version;

/// Folders already examined, with their entries, first spelling kept.
#[derive(Default)]
pub(crate) struct Scanner {
    seen: BTreeSet<PathBuf>,
    /// Each folder listed, in the order added, with its entry names sorted.
    pub(crate) listed: Vec<(PathBuf, Vec<String>)>,
}

impl Scanner {
    /// Lists `dir` unless it (or a link to it) was listed already; a folder
    /// that cannot be read is skipped.
    pub(crate) fn add(&mut self, dir: &Path) {
        let key = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if !self.seen.insert(key) {
            return;
        }
        let Ok(rd) = fs::read_dir(dir) else { return };
        let mut names: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        self.listed.push((dir.to_path_buf(), names));
    }
}

/// Lists the folders to examine for the toolkits and system folders already
/// in `snap`, the loader path of `env`, and the Python `sites`.
pub(crate) fn probe(snap: &Snapshot, env: &Env, sites: &[PathBuf]) -> Scanner {
    let windows = env.is_windows();
    let mut scan = Scanner::default();
    for t in &snap.toolkits {
        let root = PathBuf::from(&t.root);
        for sub in ["", "bin", "bin/x64", "include", "lib", "lib/x64", "lib64"] {
            scan.add(&root.join(sub));
        }
        for (d, _) in subdirs(&root.join("targets")) {
            scan.add(&d.join("lib"));
            scan.add(&d.join("include"));
        }
    }
    // Linux: the folders ld.so really searches (empty and relative entries
    // are the working folder), as the environment probe resolved them.
    let loader_entries: Vec<PathBuf> = if windows {
        env.path_list(env::PATH)
    } else {
        snap.ld_library_path.iter().map(PathBuf::from).collect()
    };
    for d in &loader_entries {
        scan.add(d);
        probe_below(&mut scan, d, &snap.system_dirs);
    }
    for d in &snap.system_dirs {
        scan.add(Path::new(d));
    }
    if windows {
        scan.add(env.cwd());
    } else {
        for d in ["/usr/include", "/usr/local/include"] {
            scan.add(Path::new(d));
        }
        if let Some(t) = triplet() {
            scan.add(&Path::new("/usr/include").join(t));
        }
    }
    for site in sites {
        for sub in [
            "nvidia/cudnn/lib",
            "nvidia/cudnn/bin",
            "nvidia/cudnn/include",
            "nvidia/cudnn_jit/lib",
            "nvidia/cudnn_jit/include",
            "torch/lib",
        ] {
            scan.add(&site.join(sub));
        }
    }
    if let Some(c) = env.var("CONDA_PREFIX") {
        let c = PathBuf::from(c);
        for sub in [
            "lib",
            "include",
            "Library/bin",
            "Library/include",
            "Library/lib",
        ] {
            scan.add(&c.join(sub));
        }
    }
    scan
}

/// `docs/breakages.md#path-at-archive-root` and
/// `docs/breakages.md#installer-subfolder-not-on-path`: the folders just below
/// a loader path entry where an unpacked archive or NVIDIA's installer keeps
/// its libraries (`bin`, `cuda\bin`, `bin\<CUDA>`, `lib`, `lib64`,
/// `<cudnn-…>\bin`). System folders are skipped.
fn probe_below(scan: &mut Scanner, entry: &Path, system: &[String]) {
    if system.iter().any(|d| entry.starts_with(d))
        || entry.starts_with("/usr")
        || entry == Path::new("/")
    {
        return;
    }
    let mut tops = vec![entry.to_path_buf(), entry.join("cuda")];
    for (d, name) in subdirs(entry) {
        let l = name.to_ascii_lowercase();
        if l.starts_with("cudnn") || l.ends_with("-archive") {
            tops.push(d.clone());
            tops.push(d.join("cuda"));
        }
    }
    for top in tops {
        for sub in ["bin", "bin/x64", "lib", "lib64", "lib/x64"] {
            let d = top.join(sub);
            if d.is_dir() && d != entry {
                scan.add(&d);
            }
        }
        for (d, name) in subdirs(&top.join("bin")) {
            if name.parse::<Version>().is_ok_and(|v| v.parts().len() == 2) {
                scan.add(&d);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their fixtures directly
mod tests {
    use super::*;

    #[test]
    fn below_a_loader_entry_archive_and_installer_folders_are_listed_once() {
        let d = tempfile::tempdir().unwrap();
        let entry = d.path().join("unzipped");
        for sub in [
            "cuda/bin",
            "cudnn-windows-x86_64-8.9.7.29_cuda12-archive/bin",
            "bin/12.8",
            "bin/not-a-cuda",
            "other/bin",
        ] {
            fs::create_dir_all(entry.join(sub)).unwrap();
        }
        let mut scan = Scanner::default();
        probe_below(&mut scan, &entry, &[]);
        probe_below(&mut scan, &entry, &[]);
        let listed: Vec<String> = scan
            .listed
            .iter()
            .map(|(p, _)| {
                p.strip_prefix(&entry)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        assert_eq!(
            listed,
            vec![
                "bin",
                "bin/12.8",
                "cuda/bin",
                "cudnn-windows-x86_64-8.9.7.29_cuda12-archive/bin"
            ]
        );
        // A system folder is not searched below.
        let mut scan = Scanner::default();
        probe_below(&mut scan, &entry, &[entry.to_string_lossy().into_owned()]);
        assert!(scan.listed.is_empty());
    }
}
