//! The loads probe: each main library this host can load is asked its
//! version (through [`crate::libcudnn`]'s child protocol), once per real
//! file, and the answer is recorded on every path that leads to it.

use std::path::PathBuf;

use super::file_name;
use crate::doctor::binfmt;
use crate::doctor::snapshot::CudnnFile;
use crate::libcudnn::Querier;
use crate::names::{self, FileKind};

/// Loads every main library of the snapshot's OS built for this host's
/// machine, and records its version, CUDA runtime and mapped modules, or
/// why it did not load.
pub(crate) fn probe(files: &mut [CudnnFile], query: Querier, windows: bool) {
    let host = binfmt::host_machine();
    let mut targets: Vec<String> = Vec::new();
    for f in files.iter() {
        let Some(n) = names::classify(file_name(&f.path)) else {
            continue;
        };
        let real = f.real_path.clone().unwrap_or_else(|| f.path.clone());
        if n.kind == FileKind::Shared
            && n.is_main()
            && n.windows == windows
            && !f.dangling
            && f.machine.as_deref() == Some(host)
            && !targets.contains(&real)
        {
            targets.push(real);
        }
    }
    let paths: Vec<PathBuf> = targets.iter().map(PathBuf::from).collect();
    let results = query(&paths);
    for (real, r) in targets.iter().zip(results) {
        for f in files
            .iter_mut()
            .filter(|f| f.real_path.as_deref().unwrap_or(&f.path) == real)
        {
            match &r {
                Ok(l) => {
                    f.library_version = Some(l.version.version());
                    f.cudart_version = (l.version.cudart > 0).then_some(l.version.cudart);
                    f.loaded_modules = l.modules.clone();
                    f.asked_for = l.asked.clone();
                }
                Err(e) => f.load_error = Some(e.clone()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::libcudnn::{LibraryVersion, Loaded};

    #[test]
    fn each_real_library_is_loaded_once_and_every_path_to_it_gets_the_answer() {
        let host = Some(binfmt::host_machine().to_string());
        let file = |path: &str, real: &str| CudnnFile {
            path: path.into(),
            real_path: Some(real.into()),
            machine: host.clone(),
            ..Default::default()
        };
        let mut files = vec![
            file("/a/libcudnn.so.9", "/a/libcudnn.so.9.1.0"),
            file("/a/libcudnn.so.9.1.0", "/a/libcudnn.so.9.1.0"),
            file("/a/libcudnn_graph.so.9", "/a/libcudnn_graph.so.9"),
            file("/b/libcudnn.so.9", "/b/libcudnn.so.9"),
            CudnnFile {
                machine: Some("some-other-machine".into()),
                ..file("/c/libcudnn.so.9", "/c/libcudnn.so.9")
            },
            file("/w/cudnn64_9.dll", "/w/cudnn64_9.dll"),
        ];
        let asked = std::sync::Mutex::new(Vec::new());
        let query = |paths: &[PathBuf]| -> Vec<Result<Loaded, String>> {
            asked.lock().unwrap().extend(paths.to_vec());
            paths
                .iter()
                .map(|p| {
                    if p.starts_with("/b") {
                        Err("does not load".to_string())
                    } else {
                        Ok(Loaded {
                            version: LibraryVersion {
                                cudnn: 90100,
                                cudart: 12040,
                            },
                            modules: vec!["/a/libcudnn_graph.so.9".into()],
                            asked: Vec::new(),
                        })
                    }
                })
                .collect()
        };
        probe(&mut files, &query, false);
        assert_eq!(
            *asked.lock().unwrap(),
            vec![
                PathBuf::from("/a/libcudnn.so.9.1.0"),
                PathBuf::from("/b/libcudnn.so.9")
            ]
        );
        for f in &files[..2] {
            assert_eq!(f.library_version.as_ref().unwrap().to_string(), "9.1.0");
            assert_eq!(f.cudart_version, Some(12040));
            assert_eq!(f.loaded_modules, vec!["/a/libcudnn_graph.so.9"]);
        }
        assert_eq!(
            files[2].library_version, None,
            "a sub-library is not loaded"
        );
        assert_eq!(files[3].load_error.as_deref(), Some("does not load"));
        assert_eq!(files[4].library_version, None, "another machine's build");
        assert_eq!(files[5].library_version, None, "another OS's library");
    }
}
