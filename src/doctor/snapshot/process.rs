//! A program doctor watched (`doctor -- CMD`, `doctor --pid PID`): the cuDNN
//! files it really mapped, read from the process itself, to hold against
//! what the loader model predicts.

use serde::{Deserialize, Serialize};

/// A program run or watched, and the cuDNN files it mapped.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ProcessView {
    /// What was watched: the command run (`python3 -c …`), or `pid 1234`.
    pub command: String,
    /// The process id, for `--pid`.
    pub pid: Option<u32>,
    /// The exit code of a program run here (`None` for `--pid`, or when a
    /// signal ended it).
    pub exit: Option<i32>,
    /// The program file it ran (after any `exec`), when known.
    pub exe: Option<String>,
    /// The program's `DT_RPATH` entries.
    pub exe_rpath: Vec<String>,
    /// The program's `DT_RUNPATH` entries.
    pub exe_runpath: Vec<String>,
    /// Every cuDNN file mapped (Linux: at the end of each process of the
    /// run, or now for `--pid`; Windows: every cuDNN DLL loaded), by the
    /// path the system names it with (links resolved), each once.
    pub mapped: Vec<String>,
    /// Why the process could not be read, when it could not.
    pub error: Option<String>,
}
