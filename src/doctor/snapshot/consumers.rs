//! The objects that ask the loader for cuDNN on a framework's behalf: a
//! framework's own library that needs cuDNN, or whose search folders lead
//! into a cuDNN wheel (PyTorch's `libtorch_cuda.so` carries `DT_RPATH`
//! `$ORIGIN/../../nvidia/cudnn/lib`). With them doctor plays the framework's
//! load through as ld.so does ([`crate::doctor::loader::process`]).

use serde::{Deserialize, Serialize};

/// A framework library that loads cuDNN.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Consumer {
    /// The framework's distribution name (`torch`), as in [`super::Framework::name`].
    pub framework: String,
    /// Its version as written (`2.4.1+cu121`).
    pub version: String,
    /// The library (`…/site-packages/torch/lib/libtorch_cuda.so`).
    pub path: String,
    /// The cuDNN libraries it needs (`DT_NEEDED`: `libcudnn.so.9`); empty
    /// for a library that loads cuDNN at run time.
    pub needed: Vec<String>,
    /// Its `DT_RPATH` entries, as written.
    pub rpath: Vec<String>,
    /// Its `DT_RUNPATH` entries, as written.
    pub runpath: Vec<String>,
}
