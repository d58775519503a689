//! Asking a cuDNN library what it is: load it and call `cudnnGetVersion()` and
//! `cudnnGetCudartVersion()`. Both answer without a GPU or CUDA driver
//! (`docs/releases.md#runtime-version-queries`), which lets `verify`, `doctor`
//! and the tests check the version a library really reports, not what its file
//! name claims.
//!
//! Whenever one process looks at more than one cuDNN, each library is loaded in
//! a child process of its own: the loader shares libraries by soname, so after
//! one `libcudnn.so.9` is loaded a second one (another release) resolves its
//! sub-libraries (`libcudnn_graph.so.9`, …) to the first release's copies and
//! reports the first release's version. The one child protocol is the hidden
//! command `cudnnm probe-library PATH` ([`PROBE_COMMAND`]): the child prints
//! [`probe_answer`], one line of JSON, and the parent reads it back with
//! [`query_in_children`]. `doctor` and `verify` both use it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::child::Running;
use crate::env::{self, Env};
use crate::error::{Error, Kind, Result};
use crate::version::Version;

/// What a loaded cuDNN library reports about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryVersion {
    /// `cudnnGetVersion()`: the `CUDNN_VERSION` integer (`91200` for 9.12.0, `8100` for 8.1.0).
    pub cudnn: u64,
    /// `cudnnGetCudartVersion()`: the CUDA runtime version it was built with (`12090` = 12.9).
    pub cudart: u64,
}

impl LibraryVersion {
    /// The cuDNN version as `major.minor.patch`.
    pub fn version(&self) -> Version {
        Version::from_cudnn_version_number(self.cudnn)
    }
}

/// Loads the cuDNN library at `path` (`libcudnn.so.9`, `cudnn64_8.dll`) and
/// asks its version. The library stays loaded only for the call.
///
/// # Errors
/// When the file cannot be loaded on this platform (wrong OS or architecture,
/// a missing dependency) or lacks the version functions.
pub fn query_version(path: &Path) -> Result<LibraryVersion> {
    query(path, || ()).map(|(v, ())| v)
}

/// Like [`query_version`], plus the cuDNN files mapped into this process
/// while the library is still loaded (Linux, from `/proc/self/maps`; empty
/// elsewhere): the sub-libraries it really got. cuDNN 9's main library is a
/// small shim that loads `libcudnn_graph.so.9` by name, and the graph
/// library answers `cudnnGetVersion()` — so the version alone does not say
/// whose it is.
///
/// # Errors
/// As [`query_version`].
pub fn query_version_and_modules(path: &Path) -> Result<(LibraryVersion, Vec<PathBuf>)> {
    query(path, mapped_cudnn_files)
}

/// The cuDNN files (`libcudnn*`) mapped into this process, in map order.
fn mapped_cudnn_files() -> Vec<PathBuf> {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = Vec::new();
    for line in maps.lines() {
        // `addr perms offset dev inode      /path/to/file`
        let Some(i) = line.find(" /") else { continue };
        let p = PathBuf::from(line[i + 1..].trim_end());
        let cudnn = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("libcudnn"));
        if cudnn && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// Loads `path`, asks its version, then runs `while_loaded` before unloading it.
fn query<T>(path: &Path, while_loaded: impl FnOnce() -> T) -> Result<(LibraryVersion, T)> {
    // SAFETY: loading a library runs its initialisers; cuDNN's are side-effect
    // free apart from registering its own state, and we call only two
    // argument-less functions with the C ABI documented in cudnn.h.
    unsafe {
        let lib = libloading::Library::new(path).map_err(|e| {
            Error::new(Kind::Failure, format!("could not load '{}'", path.display()))
                .cause(crate::error::error_chain(&e))
                .hint("the library may be for another platform, or one of its dependencies is missing (`cudnnm doctor` names it)")
        })?;
        let get_version: libloading::Symbol<unsafe extern "C" fn() -> usize> =
            lib.get(b"cudnnGetVersion\0").map_err(|e| {
                Error::new(
                    Kind::Integrity,
                    format!("'{}' has no cudnnGetVersion()", path.display()),
                )
                .cause(e)
            })?;
        let cudnn = get_version() as u64;
        let cudart = match lib.get::<unsafe extern "C" fn() -> usize>(b"cudnnGetCudartVersion\0") {
            Ok(f) => f() as u64,
            Err(_) => 0,
        };
        let extra = while_loaded();
        drop(lib);
        Ok((LibraryVersion { cudnn, cudart }, extra))
    }
}

/// The hidden cudnnm command a child runs to load one library:
/// `<exe> probe-library PATH` prints [`probe_answer`] for `PATH`.
pub const PROBE_COMMAND: &str = "probe-library";

/// What loading a library told: its version, and the cuDNN files the
/// process had mapped while it was loaded (empty when unknown: not Linux).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// `cudnnGetVersion()` and `cudnnGetCudartVersion()`.
    pub version: LibraryVersion,
    /// The cuDNN files mapped (the library itself and the sub-libraries it loaded).
    pub modules: Vec<String>,
    /// The cuDNN names the process asked the loader for, in order
    /// (`libcudnn_graph.so.9.27.0`, `libcudnn_graph.so.9.27`, …), from
    /// glibc's `LD_DEBUG=libs` trace (Linux; empty elsewhere).
    pub asked: Vec<String>,
}

/// The cuDNN library names a glibc `LD_DEBUG=libs` trace shows being looked
/// up (`  1234:\tfind library=libcudnn_graph.so.9.27.0 [0]; searching`), in order, each once.
pub fn asked_names(trace: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in trace.lines() {
        let Some(at) = line.find("find library=") else {
            continue;
        };
        let rest = &line[at + "find library=".len()..];
        let name = rest.split([' ', '\t']).next().unwrap_or("");
        if name.starts_with("libcudnn") && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// Asks a batch of libraries for their version; one result per path, in
/// order. An error is the reason in words (the loader's message, or how the
/// child failed). [`query_in_children`] and [`query_in_process`] are the two.
pub type Querier<'a> = &'a (dyn Fn(&[PathBuf]) -> Vec<std::result::Result<Loaded, String>> + Sync);

/// The child's answer for the library at `path`, one line of JSON:
/// `{"cudnn":92700,"cudart":12090,"modules":["/x/libcudnn.so.9","/y/libcudnn_graph.so.9"]}`,
/// or `{"error":"…"}` when it does not load (the child still exits 0).
pub fn probe_answer(path: &Path) -> String {
    match query_version_and_modules(path) {
        Ok((v, modules)) => serde_json::json!({
            "cudnn": v.cudnn,
            "cudart": v.cudart,
            "modules": modules
                .iter()
                .map(|m| m.to_string_lossy().into_owned())
                .collect::<Vec<_>>(),
        })
        .to_string(),
        Err(e) => serde_json::json!({"error": e.to_string()}).to_string(),
    }
}

/// Why a child gave no version.
enum Refusal {
    /// The child answered: the library does not load (its message).
    Answered(String),
    /// The child could not start, failed, timed out or answered garbage.
    Child(String),
}

impl Refusal {
    fn text(self) -> String {
        match self {
            Refusal::Answered(t) | Refusal::Child(t) => t,
        }
    }
}

/// Reads a [`probe_answer`] back.
fn parse_probe_answer(out: &str) -> std::result::Result<Loaded, Refusal> {
    let v: serde_json::Value = serde_json::from_str(out.trim())
        .map_err(|e| Refusal::Child(format!("bad answer from the child: {e}")))?;
    if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
        return Err(Refusal::Answered(e.to_string()));
    }
    Ok(Loaded {
        version: LibraryVersion {
            cudnn: v
                .get("cudnn")
                .and_then(|x| x.as_u64())
                .ok_or_else(|| Refusal::Child("no cudnn version".into()))?,
            cudart: v.get("cudart").and_then(|x| x.as_u64()).unwrap_or(0),
        },
        modules: v
            .get("modules")
            .and_then(|m| m.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        asked: Vec::new(),
    })
}

/// Starts `<exe> probe-library PATH` for each path, all at once, and
/// collects the answers (each child may take [`crate::child::TIMEOUT`]).
/// The library's own folder is put first on the child's loader path
/// (`LD_LIBRARY_PATH`, Windows `PATH`, after `env`'s value): cuDNN's main
/// library loads its sub-libraries by name, and a build with `DT_RUNPATH`
/// (9.12's, unlike 9.27's `DT_RPATH`) would otherwise answer with the
/// sub-libraries of whatever set comes first, not this file's version.
fn run_children(
    exe: &Path,
    env: &Env,
    paths: &[PathBuf],
) -> Vec<std::result::Result<Loaded, Refusal>> {
    let var = if env.is_windows() {
        env::PATH
    } else {
        env::LD_LIBRARY_PATH
    };
    let running: Vec<Option<Running>> = paths
        .iter()
        .map(|p| {
            let mut dirs: Vec<PathBuf> = p.parent().map(Path::to_path_buf).into_iter().collect();
            // Split as the loader splits (an empty entry stays: it means `.`).
            dirs.extend(env.var_os(var).into_iter().flat_map(std::env::split_paths));
            let joined = std::env::join_paths(dirs).unwrap_or_default();
            let mut cmd = Command::new(exe);
            cmd.arg(PROBE_COMMAND).arg(p).env(var, joined);
            if !env.is_windows() {
                // glibc's loader trace on standard error: which names the
                // library asks for (cuDNN 9's main library asks for its own
                // release's graph library first). Other loaders ignore it.
                cmd.env("LD_DEBUG", "libs").env_remove("LD_DEBUG_OUTPUT");
            }
            Running::spawn(&mut cmd)
        })
        .collect();
    running
        .into_iter()
        .map(|r| {
            let (out, trace) = r
                .ok_or_else(|| Refusal::Child("could not start a child process".into()))?
                .finish_both()
                .map_err(Refusal::Child)?;
            let mut loaded = parse_probe_answer(&out)?;
            loaded.asked = asked_names(&trace);
            Ok(loaded)
        })
        .collect()
}

/// Loads each library in its own child process of the cudnnm binary `exe`
/// (see the module comment for why), all at once, so that two copies with
/// the same soname never share a process. `env` is this process's
/// environment: the children inherit it, with the library's folder first on
/// the loader path. Results in order of `paths`.
pub fn query_in_children(
    exe: &Path,
    env: &Env,
    paths: &[PathBuf],
) -> Vec<std::result::Result<Loaded, String>> {
    run_children(exe, env, paths)
        .into_iter()
        .map(|r| r.map_err(Refusal::text))
        .collect()
}

/// Loads in this process (tests and library callers without a cudnnm
/// binary). The modules are not listed: after the first library, this
/// process's map holds every library loaded so far.
pub fn query_in_process(paths: &[PathBuf]) -> Vec<std::result::Result<Loaded, String>> {
    paths
        .iter()
        .map(|p| {
            query_version(p)
                .map(|version| Loaded {
                    version,
                    modules: Vec::new(),
                    asked: Vec::new(),
                })
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// Like [`query_version`], but in a child process of the cudnnm binary
/// `exe` (the protocol of [`query_in_children`], with this process's
/// environment).
///
/// # Errors
/// [`Kind::Failure`] when the library does not load (the child's message),
/// or when the child cannot start, fails or answers garbage.
pub fn query_version_isolated(exe: &Path, path: &Path) -> Result<LibraryVersion> {
    let env = Env::from_process();
    match run_children(exe, &env, &[path.to_path_buf()]).pop() {
        Some(Ok(l)) => Ok(l.version),
        Some(Err(Refusal::Answered(why))) => Err(Error::new(Kind::Failure, why)),
        Some(Err(Refusal::Child(why))) => Err(Error::new(
            Kind::Failure,
            format!("could not load '{}' in a child process", path.display()),
        )
        .cause(why)),
        None => Err(Error::msg("no answer from the child process")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_a_loader_trace_looks_up_are_read_in_order() {
        let trace = "     15593:\tcalling init: ./libcudnn.so.9\n\
                     15593:\tfind library=libcudnn_graph.so.9.27.0 [0]; searching\n\
                     15593:\t search path=/x\t\t(LD_LIBRARY_PATH)\n\
                     15593:\tfind library=libcudnn_graph.so.9.27 [0]; searching\n\
                     15593:\tfind library=libz.so.1 [0]; searching\n\
                     15593:\tfind library=libcudnn_graph.so.9.27.0 [0]; searching\n";
        assert_eq!(
            asked_names(trace),
            ["libcudnn_graph.so.9.27.0", "libcudnn_graph.so.9.27"]
        );
        assert!(asked_names("no trace here").is_empty());
    }

    #[test]
    fn answers_are_read_back() {
        let refused = |out: &str| match parse_probe_answer(out) {
            Err(Refusal::Answered(t)) => Some(t),
            _ => None,
        };
        assert_eq!(refused("{\"error\":\"nope\"}").as_deref(), Some("nope"));
        let l =
            parse_probe_answer("{\"cudnn\":92700,\"cudart\":12090}").unwrap_or_else(|_| panic!());
        assert_eq!(l.version.cudnn, 92700);
        assert_eq!(l.version.version().to_string(), "9.27.0");
        assert!(l.modules.is_empty());
        let l = parse_probe_answer(
            "{\"cudnn\":91200,\"cudart\":12090,\"modules\":[\"/a/libcudnn.so.9\",\"/b/libcudnn_graph.so.9\"]}",
        )
        .unwrap_or_else(|_| panic!());
        assert_eq!(
            l.modules,
            vec!["/a/libcudnn.so.9", "/b/libcudnn_graph.so.9"]
        );
        assert!(matches!(
            parse_probe_answer("not json"),
            Err(Refusal::Child(_))
        ));
        assert!(matches!(
            parse_probe_answer("{\"cudart\":1}"),
            Err(Refusal::Child(_))
        ));
    }

    #[test]
    fn a_library_that_does_not_load_is_answered_as_an_error() {
        let v: serde_json::Value =
            serde_json::from_str(&probe_answer(Path::new("/nonexistent/libcudnn.so.9"))).unwrap();
        let e = v["error"].as_str().unwrap();
        assert!(
            e.starts_with("could not load '/nonexistent/libcudnn.so.9'"),
            "{e}"
        );
    }
}
