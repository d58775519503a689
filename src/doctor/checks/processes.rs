//! What a framework's process maps: its own library that loads cuDNN
//! (PyTorch's `libtorch_cuda.so`, [`crate::doctor::snapshot::Consumer`]) asks
//! the loader for the main library with its search folders, and the main
//! library then asks for each sub-library by name
//! ([`crate::doctor::loader::process`]). The summary lists the result per
//! framework; `sub-libraries-mixed` reports a load that takes files from two
//! copies.

use serde::Serialize;

use super::Cx;
use crate::doctor::loader::{self, Mapped, Requester};
use crate::doctor::snapshot::{Consumer, Snapshot};
use crate::names;

/// One cuDNN file a framework's process maps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MappedCopy {
    /// The name asked for (`libcudnn_graph.so.9`).
    pub name: String,
    /// The file the loader takes.
    pub path: String,
    /// Its version, from its own evidence, when known.
    pub version: Option<String>,
    /// Why the loader takes it (`RPATH of libtorch_cuda.so`).
    pub via: String,
}

/// A framework's load of cuDNN, played through as ld.so does it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FrameworkLoad {
    /// The framework and its version (`torch 2.4.1+cu121`).
    pub framework: String,
    /// The framework's library that asks for cuDNN.
    pub by: String,
    /// The cuDNN major.
    pub major: u32,
    /// Each cuDNN file its process maps, main library first.
    pub files: Vec<MappedCopy>,
}

/// The requester a consumer is to the loader.
pub(crate) fn requester(c: &Consumer) -> Requester<'_> {
    Requester {
        path: &c.path,
        rpath: &c.rpath,
        runpath: &c.runpath,
    }
}

/// The consumers and the cuDNN majors each asks for: those it needs
/// (`DT_NEEDED`), else every major present (it loads cuDNN at run time).
/// One consumer per framework and major, those that need cuDNN first.
pub(crate) fn consumers<'a>(cx: &Cx<'a>) -> Vec<(&'a Consumer, u32)> {
    let present = cx.majors_present();
    let mut out: Vec<(&Consumer, u32)> = Vec::new();
    let mut sorted: Vec<&Consumer> = cx.s.consumers.iter().collect();
    sorted.sort_by_key(|c| c.needed.is_empty());
    for c in sorted {
        let majors: Vec<u32> = if c.needed.is_empty() {
            present.iter().copied().collect()
        } else {
            c.needed
                .iter()
                .filter_map(|n| names::classify(n))
                .filter(|n| n.is_main())
                .filter_map(|n| n.major)
                .collect()
        };
        for m in majors {
            if !out
                .iter()
                .any(|(o, om)| *om == m && o.framework == c.framework && o.version == c.version)
            {
                out.push((c, m));
            }
        }
    }
    out
}

/// The cuDNN files each consumer's process maps, per major.
pub(crate) fn mapped<'a>(cx: &Cx<'a>) -> Vec<(&'a Consumer, u32, Vec<Mapped>)> {
    consumers(cx)
        .into_iter()
        .map(|(c, m)| (c, m, loader::process(cx.s, m, &[requester(c)])))
        .filter(|(_, _, v)| !v.is_empty())
        .collect()
}

/// What each framework's process maps, for the summary.
pub fn framework_loads(s: &Snapshot) -> Vec<FrameworkLoad> {
    let t = super::Tables::default();
    let cx = Cx::new(s, &t);
    mapped(&cx)
        .into_iter()
        .map(|(c, m, files)| FrameworkLoad {
            framework: format!("{} {}", c.framework, c.version),
            by: c.path.clone(),
            major: m,
            files: files
                .into_iter()
                .map(|x| MappedCopy {
                    version: cx
                        .s
                        .file(&x.path)
                        .and_then(|f| cx.s.version_of(f))
                        .map(|k| k.version.to_string()),
                    via: x.via.to_string(),
                    name: x.name,
                    path: x.path,
                })
                .collect(),
        })
        .collect()
}
