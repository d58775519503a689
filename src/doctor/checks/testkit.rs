//! Snapshots as data for the check tests: a healthy Linux machine and a
//! healthy Windows machine, and builders to break them one way at a time.

use crate::catalog::FrameworkBuild;
use crate::doctor::FindingId;
use crate::doctor::finding::Finding;
use crate::doctor::snapshot::*;
use crate::doctor::spath;
use crate::names;
use crate::version::Version;

use super::{DriverFloor, Offer, Tables};

pub(crate) fn v(s: &str) -> Version {
    s.parse().unwrap()
}

/// A release id from its text (`9.27.0.42_cuda12`).
pub(crate) fn id(s: &str) -> crate::version::ReleaseId {
    s.parse().unwrap()
}

/// A snapshot under construction and the tables it is checked against.
pub(crate) struct Kit {
    pub s: Snapshot,
    pub t: Tables,
}

/// Rows of `docs/releases.md#driver-floors` used by the tests.
fn driver_rows() -> Vec<DriverFloor> {
    let row = |c: &str, w: bool, m: &str| DriverFloor {
        cuda: v(c),
        windows: w,
        min: m.parse().unwrap(),
    };
    vec![
        row("12.4", false, "550.54.14"),
        row("12.4.1", false, "550.54.15"),
        row("12.4", true, "551.61"),
        row("11.2", false, "460.27.03"),
        row("11.2", true, "460.82"),
        row("11.2.2", true, "461.33"),
        row("10.0", false, "410.48"),
        row("8.0", true, "369.30"),
    ]
}

/// TensorFlow rows of `docs/releases.md#framework-builds` used by the tests.
fn framework_rows() -> Vec<FrameworkBuild> {
    let row = |f: &str, l: &str, os: Option<&str>, cuda: &str, cudnn: &str| FrameworkBuild {
        framework: "tensorflow".into(),
        first: v(f),
        last: v(l),
        os: os.map(str::to_owned),
        cuda: v(cuda),
        cudnn: v(cudnn),
    };
    vec![
        row("2.18.0", "2.21.0", Some("linux"), "12.5", "9.3"),
        row("2.16.1", "2.17.0", Some("linux"), "12.3", "8.9"),
        row("2.5.0", "2.11.0", Some("linux"), "11.2", "8.1"),
        row("2.5.0", "2.10.0", Some("windows"), "11.2", "8.1"),
        row("1.13.0", "2.0.0", Some("windows"), "10.0", "7.4"),
    ]
}

/// Releases the test catalog offers: a few NVIDIA archives and PyPI wheels,
/// as in `manifest.toml` (9.12 has no CUDA 11 build; 9.10.2.21 has).
fn offer_rows() -> Vec<Offer> {
    let row = |ver: &str, cuda: &str, wheel: Option<&str>| Offer {
        version: v(ver),
        cuda: cuda.parse().unwrap(),
        flavour: crate::version::Flavour::Full,
        wheel: wheel.map(str::to_owned),
        platform: None,
    };
    vec![
        row("9.12.0.46", "12", None),
        row("9.12.0.46", "12", Some("nvidia-cudnn-cu12")),
        row("9.10.2.21", "11", Some("nvidia-cudnn-cu11")),
        row("9.10.2.21", "12", None),
        row("9.3.0.75", "12", None),
        row("9.1.0.70", "12", Some("nvidia-cudnn-cu12")),
        row("8.9.7.29", "11", None),
        row("8.9.7.29", "12", None),
        row("8.1.1.33", "11.2", None),
        row("8.1.0.77", "11.2", None),
        row("7.4.2.24", "10.0", None),
    ]
}

impl Kit {
    fn base(family: &str) -> Kit {
        Kit {
            s: Snapshot {
                schema: SNAPSHOT_SCHEMA,
                os: OsInfo {
                    family: family.into(),
                    name: None,
                    version: None,
                    arch: "x86_64".into(),
                    bits: 64,
                },
                ..Default::default()
            },
            t: Tables {
                drivers: driver_rows(),
                frameworks: framework_rows(),
                offers: offer_rows(),
                compute: super::compute_rows(&crate::catalog::Catalog::embedded()),
                gpus: crate::catalog::Catalog::embedded().gpus().to_vec(),
                advisories: crate::catalog::advisory::with_yanks(
                    &crate::catalog::Catalog::embedded(),
                ),
            },
        }
    }

    /// An empty Linux machine with its C runtime and zlib in the system folders.
    pub fn linux() -> Kit {
        let mut k = Kit::base("linux");
        k.s.cwd = "/home/me".into();
        k.s.system_dirs = vec![
            "/lib/x86_64-linux-gnu".into(),
            "/usr/lib/x86_64-linux-gnu".into(),
            "/lib64".into(),
        ];
        for n in [
            "libc.so.6",
            "libm.so.6",
            "libdl.so.2",
            "libpthread.so.0",
            "librt.so.1",
            "libstdc++.so.6",
            "libgcc_s.so.1",
            "libz.so.1",
        ] {
            k.name_in("/usr/lib/x86_64-linux-gnu", n);
        }
        k.name_in("/lib64", "ld-linux-x86-64.so.2");
        k
    }

    /// An empty Windows 10 machine with the VC++ runtime in System32.
    pub fn windows() -> Kit {
        let mut k = Kit::base("windows");
        k.s.os.version = Some("10.0.19045".into());
        k.s.os.name = Some("Windows 10 Pro".into());
        k.s.cwd = r"C:\Users\me".into();
        k.s.env.insert("SystemRoot".into(), r"C:\Windows".into());
        k.s.system_dirs = vec![r"C:\Windows\System32".into(), r"C:\Windows".into()];
        for n in [
            "vcruntime140.dll",
            "vcruntime140_1.dll",
            "msvcp140.dll",
            "msvcp140_1.dll",
            "KERNEL32.dll",
            "ucrtbase.dll",
        ] {
            k.name_in(r"C:\Windows\System32", n);
        }
        k.s.path = vec![r"C:\Windows\System32".into(), r"C:\Windows".into()];
        k.s.registry = Some(RegistryPaths {
            user: Some(String::new()),
            machine: Some(r"C:\Windows\System32;C:\Windows".into()),
        });
        k
    }

    /// Linux, CUDA 12.4 at /usr/local/cuda-12.4 with cuDNN 9.1.0 (chains),
    /// `lib64` on `LD_LIBRARY_PATH`, nvcc on PATH, a new enough driver.
    pub fn healthy_linux() -> Kit {
        let mut k = Kit::linux();
        let root = "/usr/local/cuda-12.4";
        k.toolkit(root, "12.4.1");
        k.linux_set(
            &format!("{root}/lib64"),
            &format!("{root}/include"),
            "9.1.0",
            true,
        );
        k.s.ld_library_path = vec![format!("{root}/lib64")];
        k.s.path = vec![format!("{root}/bin"), "/usr/bin".into()];
        k.nvcc(&format!("{root}/bin/nvcc"), "12.4");
        k.driver("550.54.15", &[("NVIDIA GeForce RTX 3080", "8.6")]);
        k
    }

    /// Windows 10, CUDA 11.2 with cuDNN 8.1.0.77 deployed the NVIDIA way,
    /// `bin` on PATH (machine), `CUDA_PATH` set, a new enough driver.
    pub fn healthy_windows() -> Kit {
        let mut k = Kit::windows();
        let root = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2";
        k.toolkit(root, "11.2.2");
        for n in [
            "cudart64_110.dll",
            "cublas64_11.dll",
            "cublasLt64_11.dll",
            "nvcc.exe",
        ] {
            k.name_in(&format!(r"{root}\bin"), n);
        }
        k.windows_set(
            &format!(r"{root}\bin"),
            &format!(r"{root}\include"),
            &format!(r"{root}\lib\x64"),
            "8.1.0.77",
        );
        let bin = format!(r"{root}\bin");
        k.s.path.insert(0, bin.clone());
        k.s.registry = Some(RegistryPaths {
            user: Some(String::new()),
            machine: Some(r"%CUDA_PATH%\bin;C:\Windows\System32;C:\Windows".to_string()),
        });
        k.s.env.insert("CUDA_PATH".into(), root.into());
        k.s.env.insert("CUDA_PATH_V11_2".into(), root.into());
        k.nvcc(&format!(r"{root}\bin\nvcc.exe"), "11.2");
        k.driver("461.33", &[("NVIDIA GeForce RTX 3080", "8.6")]);
        k
    }

    /// Adds `name` to the listing of `dir`.
    pub fn name_in(&mut self, dir: &str, name: &str) -> &mut Kit {
        let w = self.s.windows();
        match self
            .s
            .dirs
            .iter_mut()
            .find(|d| spath::same(&d.path, dir, w))
        {
            Some(d) => {
                if !d.names.iter().any(|n| n == name) {
                    d.names.push(name.into());
                }
            }
            None => self.s.dirs.push(DirListing {
                path: dir.into(),
                names: vec![name.into()],
                ..Default::default()
            }),
        }
        self
    }

    /// Adds a toolkit.
    pub fn toolkit(&mut self, root: &str, cuda: &str) -> &mut Kit {
        let layout = if self.s.windows() {
            ToolkitLayout::Windows
        } else {
            ToolkitLayout::Linux
        };
        self.s.toolkits.push(ToolkitInfo {
            root: root.into(),
            cuda: Some(v(cuda)),
            layout,
            found_by: "test".into(),
            writable: None,
            unfinished_change: None,
        });
        self
    }

    /// Adds a cuDNN file; root, kind and origin are derived like gathering does.
    pub fn file(&mut self, path: &str) -> &mut CudnnFile {
        let w = self.s.windows();
        let dir = spath::parent(path, w).unwrap();
        let name = spath::file_name(path, w).to_string();
        self.name_in(&dir, &name);
        let origin = if self.s.toolkit_of(path).is_some() {
            InstallKind::Toolkit
        } else if path.contains("site-packages") {
            InstallKind::PipWheel
        } else {
            InstallKind::Other
        };
        self.s.files.retain(|f| !spath::same(&f.path, path, w));
        self.s.files.push(CudnnFile {
            path: path.into(),
            root: install_root(path, w),
            origin,
            kind: names::classify(&name).map(|n| n.kind),
            size: 1000,
            real_path: Some(path.into()),
            ..Default::default()
        });
        self.s.files.last_mut().unwrap()
    }

    /// Adds a symbolic link `path -> target` (a name in the same folder).
    pub fn link(&mut self, path: &str, target: &str) -> &mut CudnnFile {
        let w = self.s.windows();
        let real = spath::join(&spath::parent(path, w).unwrap(), target, w);
        let real = self
            .s
            .file(&real)
            .and_then(|f| f.real_path.clone())
            .unwrap_or(real);
        let f = self.file(path);
        f.link_target = Some(target.into());
        f.real_path = Some(real);
        f
    }

    /// Adds a version header.
    pub fn header(&mut self, path: &str, version: &str) -> &mut CudnnFile {
        let f = self.file(path);
        f.header_version = Some(v(version));
        f
    }

    /// A complete Linux set of `version` (`docs/releases.md#library-names`): libraries with
    /// chains (or wheel-style `.so.M` files), headers, the dev link.
    pub fn linux_set(&mut self, lib: &str, inc: &str, version: &str, chain: bool) -> &mut Kit {
        let ver = v(version);
        let (ma, mi, pa) = (ver.major(), ver.minor(), ver.patch());
        let mut stems = vec!["cudnn"];
        // The sub-libraries this release ships (9.21+ added two).
        stems.extend(
            names::sublib_stems(ma)
                .iter()
                .filter(|st| names::ships(st, &ver)),
        );
        for st in stems {
            let soname = names::soname(st, ma);
            let path_so = format!("{lib}/{soname}");
            if chain {
                let real = format!("{lib}/lib{st}.so.{ma}.{mi}.{pa}");
                let f = self.file(&real);
                f.machine = Some("x86_64".into());
                f.soname = Some(soname.clone());
                f.needed = vec![
                    "libc.so.6".into(),
                    "libz.so.1".into(),
                    "ld-linux-x86-64.so.2".into(),
                ];
                f.rpath = vec!["$ORIGIN".into()];
                if st == "cudnn" {
                    f.library_version = Some(ver.triple());
                    f.cudart_version = Some(if ma >= 9 { 12030 } else { 11020 });
                }
                let real_name = format!("lib{st}.so.{ma}.{mi}.{pa}");
                let l = self.link(&path_so, &real_name);
                l.machine = Some("x86_64".into());
                if st == "cudnn" {
                    self.link(&format!("{lib}/libcudnn.so"), &soname);
                }
            } else {
                let f = self.file(&path_so);
                f.machine = Some("x86_64".into());
                f.needed = vec!["libc.so.6".into()];
                if st == "cudnn" {
                    f.library_version = Some(ver.triple());
                }
            }
        }
        for h in ["cudnn.h", "cudnn_version.h"] {
            if h == "cudnn_version.h" || ma <= 7 {
                self.header(&format!("{inc}/{h}"), version);
            } else {
                self.file(&format!("{inc}/{h}"));
            }
        }
        self
    }

    /// A complete Windows set of `version`: DLLs in `bin`, headers, import libraries.
    pub fn windows_set(&mut self, bin: &str, inc: &str, lib: &str, version: &str) -> &mut Kit {
        let ver = v(version);
        let ma = ver.major();
        let mut stems = vec!["cudnn"];
        // The sub-libraries this release ships (9.21+ added two).
        stems.extend(
            names::sublib_stems(ma)
                .iter()
                .filter(|st| names::ships(st, &ver)),
        );
        for st in &stems {
            let f = self.file(&format!(r"{bin}\{}", names::dll_name(st, ma)));
            f.machine = Some("x86_64".into());
            f.file_version = Some(ver.clone());
            f.needed = vec![
                "KERNEL32.dll".into(),
                "api-ms-win-crt-runtime-l1-1-0.dll".into(),
            ];
        }
        self.header(&format!(r"{inc}\cudnn_version.h"), version);
        self.file(&format!(r"{inc}\cudnn.h"));
        self.file(&format!(r"{lib}\cudnn.lib"));
        if ma >= 8 {
            self.file(&format!(r"{lib}\cudnn64_{ma}.lib"));
        }
        self
    }

    /// `nvcc` on PATH at `path`, reporting `release`.
    pub fn nvcc(&mut self, path: &str, release: &str) -> &mut Kit {
        self.s.nvcc = Some(Nvcc {
            path: path.into(),
            output: None,
            release: Some(v(release)),
        });
        self
    }

    /// The driver and GPUs (name, compute capability).
    pub fn driver(&mut self, version: &str, gpus: &[(&str, &str)]) -> &mut Kit {
        self.s.driver = Some(DriverInfo {
            tool: "nvidia-smi".into(),
            output: String::new(),
            version: Some(version.parse().unwrap()),
            gpus: gpus
                .iter()
                .map(|(n, c)| Gpu {
                    name: (*n).into(),
                    compute_capability: Some(v(c)),
                    ..Default::default()
                })
                .collect(),
        });
        self
    }

    /// Adds a Python framework or wheel.
    pub fn framework(
        &mut self,
        name: &str,
        version: &str,
        location: &str,
        requirement: Option<&str>,
    ) -> &mut Kit {
        self.s.frameworks.push(Framework {
            name: name.into(),
            version: version.into(),
            location: location.into(),
            cudnn_requirement: requirement.map(str::to_owned),
        });
        self
    }

    /// Removes the files whose path ends with `suffix` (and their names from listings).
    pub fn remove(&mut self, suffix: &str) -> &mut Kit {
        let w = self.s.windows();
        let gone: Vec<String> = self
            .s
            .files
            .iter()
            .filter(|f| f.path.ends_with(suffix))
            .map(|f| f.path.clone())
            .collect();
        assert!(!gone.is_empty(), "nothing ends with {suffix}");
        self.s.files.retain(|f| !f.path.ends_with(suffix));
        for p in gone {
            let dir = spath::parent(&p, w).unwrap();
            let name = spath::file_name(&p, w).to_string();
            if let Some(d) = self
                .s
                .dirs
                .iter_mut()
                .find(|d| spath::same(&d.path, &dir, w))
            {
                d.names.retain(|n| *n != name);
            }
        }
        self
    }

    /// The findings.
    pub fn run(&self) -> Vec<Finding> {
        super::run_all(&self.s, &self.t)
    }

    /// All findings, one per line, for failure messages.
    pub fn dump(&self) -> String {
        self.run()
            .iter()
            .map(|f| {
                format!(
                    "{} [{}] {}\n    {}",
                    f.severity,
                    f.id,
                    f.title,
                    f.seen.join("\n    ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The one finding with `id`; panics with every finding when absent.
    #[track_caller]
    pub fn expect(&self, id: FindingId) -> Finding {
        let all = self.run();
        let mut it = all.iter().filter(|f| f.id == id);
        match it.next() {
            Some(f) => f.clone(),
            None => panic!("no finding {id}; findings:\n{}", self.dump()),
        }
    }

    /// Every finding with `id`.
    pub fn all(&self, id: FindingId) -> Vec<Finding> {
        self.run().into_iter().filter(|f| f.id == id).collect()
    }

    /// Asserts there is no finding with `id`.
    #[track_caller]
    pub fn absent(&self, id: FindingId) {
        assert!(
            self.all(id).is_empty(),
            "unexpected {id}; findings:\n{}",
            self.dump()
        );
    }
}
