//! The embedded catalog as the code reads it, and the user catalog overlay.

use std::path::Path;

use super::*;

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

fn c(s: &str) -> CudaVariant {
    s.parse().unwrap()
}

#[test]
fn embedded_manifest_is_clean_and_covers_the_required_releases() {
    let cat = Catalog::embedded();
    assert!(cat.warnings().is_empty(), "{:#?}", cat.warnings());
    assert!(cat.archives().len() >= 200, "{}", cat.archives().len());
    let w = Platform::WindowsX86_64;
    let l = Platform::LinuxX86_64;
    let a = cat
        .archive(&v("7.1.3"), &c("8.0"), w)
        .expect("7.1.3 for CUDA 8.0 on Windows");
    assert!(
        !a.is_verifiable(),
        "no hash was published for the 7.1.3 Windows zip"
    );
    assert_eq!(a.name(), "cudnn-8.0-windows7-x64-v7.1.zip");
    assert_eq!(
        a.urls(None),
        vec![
            "https://developer.download.nvidia.com/compute/redist/cudnn/v7.1.3/cudnn-8.0-windows7-x64-v7.1.zip"
        ]
    );
    let a = cat.archive(&v("8.1.0.77"), &c("11.2"), w).unwrap();
    assert_eq!(
        a.hashes[0].sha256.as_str(),
        "f5a23402ebed5b2add2ae0dc79df42f055f5851bbb3b1d0f6aa9dcdeeb9346ce"
    );
    assert!(a.hashes[0].source.contains("a4be42d"));
    for (ver, cu, p) in [
        ("8.9.7.29", "12", l),
        ("8.9.7.29", "12", w),
        ("8.9.7.29", "11", l),
        ("9.10.0.56", "12", w),
        ("9.25.0.15", "13", l),
        ("9.25.0.15", "12", w),
    ] {
        let a = cat
            .archive(&v(ver), &c(cu), p)
            .unwrap_or_else(|| panic!("{ver} {cu} {p}"));
        assert!(a.is_verifiable());
        assert!(a.hashes.iter().all(|h| !h.source.is_empty()));
        assert!(!a.source.is_empty());
    }
    let a = cat.archive(&v("8.9.7.29"), &c("12"), l).unwrap();
    assert_eq!(a.size, Some(864984964));
    assert_eq!(
        a.urls(Some("http://lab.example/nv")),
        vec![
            "http://lab.example/nv/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"
        ]
    );
    let a = cat.archive(&v("8.4.1.50"), &c("11.6"), l).unwrap();
    assert_eq!(
        a.urls(None).len(),
        2,
        "old and new path hold the same bytes"
    );
    let versions: std::collections::BTreeSet<_> =
        cat.archives().iter().map(|a| a.version.clone()).collect();
    assert!(versions.len() >= 60, "{}", versions.len());
    let hashes: usize = cat.archives().iter().map(|a| a.hashes.len()).sum();
    assert!(hashes >= 200, "{hashes}");
}

#[test]
fn support_matrix_and_compute_capability() {
    let cat = Catalog::embedded();
    let t = cat.supported_toolkits(&v("8.9.7.29"), &c("12")).unwrap();
    assert_eq!(t, vec![v("12.2"), v("12.1"), v("12.0")]);
    let t = cat.supported_toolkits(&v("8.9.7.29"), &c("11")).unwrap();
    assert_eq!(t.first(), Some(&v("11.8")));
    assert_eq!(t.last(), Some(&v("11.0")));
    let t = cat.supported_toolkits(&v("7.6.5.32"), &c("10.2")).unwrap();
    assert_eq!(t, vec![v("10.2")]);
    assert_eq!(
        cat.supported_toolkits(&v("7.6.5.32"), &c("9.1")),
        Some(vec![])
    );
    assert_eq!(cat.supported_toolkits(&v("8.1.0.77"), &c("11.2")), None);
    assert_eq!(cat.min_compute(&v("8.1.0.77"), &c("11.2")), Some(v("3.5")));
    assert_eq!(cat.min_compute(&v("8.1.0.77"), &c("10.2")), Some(v("3.0")));
    assert_eq!(cat.min_compute(&v("7.1.3"), &c("8.0")), Some(v("3.0")));
    assert_eq!(cat.min_compute(&v("9.1.0.70"), &c("12")), Some(v("5.0")));
    assert_eq!(cat.min_compute(&v("9.10.2.21"), &c("12")), Some(v("5.0")));
    assert_eq!(cat.min_compute(&v("9.10.2.21"), &c("11")), Some(v("5.0")));
    // NVIDIA's 9.11.0 support matrix drops Maxwell, Pascal and Volta from the CUDA 12 builds.
    assert_eq!(cat.min_compute(&v("9.11.0.98"), &c("12")), Some(v("7.5")));
    assert_eq!(cat.min_compute(&v("9.12.0.46"), &c("12")), Some(v("7.5")));
    assert_eq!(cat.min_compute(&v("9.27.0.42"), &c("12")), Some(v("7.5")));
    assert_eq!(cat.min_compute(&v("9.22.0.52"), &c("13")), Some(v("7.5")));
}

#[test]
fn driver_floors_follow_table_3() {
    let cat = Catalog::embedded();
    let d = |s: &str| s.parse::<crate::version::DriverVersion>().unwrap();
    assert_eq!(cat.min_driver(&v("12.2.2"), false), Some(d("535.104.05")));
    assert_eq!(cat.min_driver(&v("12.2"), false), Some(d("535.54.03")));
    assert_eq!(cat.min_driver(&v("12.2"), true), Some(d("536.25")));
    assert_eq!(
        cat.min_driver(&v("12.6.20241114"), false),
        Some(d("560.28.03"))
    );
    assert_eq!(
        cat.min_driver(&v("11.0"), false),
        Some(d("450.51.05")),
        "GA, not RC"
    );
    assert_eq!(cat.min_driver(&v("10.1.243"), true), Some(d("418.96")));
    assert_eq!(cat.min_driver(&v("9.2.148"), false), Some(d("396.37")));
    assert_eq!(cat.min_driver(&v("8.0"), true), Some(d("369.30")));
    assert_eq!(
        cat.min_driver(&v("13.0"), true),
        None,
        "N/A on Windows from CUDA 13"
    );
    assert_eq!(cat.min_driver(&v("13.0"), false), Some(d("580.65.06")));
    assert_eq!(cat.min_driver(&v("12.7"), false), None);
    // Kept as NVIDIA writes it: the leading zero of the last field stays.
    assert_eq!(
        cat.min_driver(&v("12.2.2"), false).unwrap().to_string(),
        "535.104.05"
    );
}

#[test]
fn frameworks_and_wheels() {
    let cat = Catalog::embedded();
    let tf = cat
        .frameworks()
        .iter()
        .find(|f| {
            f.framework == "tensorflow"
                && f.os.as_deref() == Some("windows")
                && f.first == v("2.5.0")
        })
        .unwrap();
    assert_eq!(
        (tf.last.clone(), tf.cuda.clone(), tf.cudnn.clone()),
        (v("2.10.0"), v("11.2"), v("8.1"))
    );
    let pt: Vec<_> = cat
        .frameworks()
        .iter()
        .filter(|f| f.framework == "pytorch" && f.first == v("2.4"))
        .map(|f| (f.cuda.to_string(), f.cudnn.to_string()))
        .collect();
    assert_eq!(pt.len(), 3);
    assert!(pt.contains(&("12.1".into(), "9.1.0.70".into())));
    let (w, ver) = cat.wheel_for(&"9.12_cuda12".parse().unwrap()).unwrap();
    assert_eq!(
        (w.package.as_str(), ver.to_string()),
        ("nvidia-cudnn-cu12", "9.12.0.46".into())
    );
    // Without a CUDA suffix the newest CUDA; with +jit the JIT package.
    let (w, _) = cat.wheel_for(&"9.12".parse().unwrap()).unwrap();
    assert_eq!(w.package, "nvidia-cudnn-cu13");
    let (w, _) = cat.wheel_for(&"9.12+jit".parse().unwrap()).unwrap();
    assert_eq!(w.package, "nvidia-cudnn-jit-cu13");
    // A yanked release only when named exactly.
    let (_, ver) = cat.wheel_for(&"9.25_cuda12".parse().unwrap()).unwrap();
    assert_eq!(ver.to_string(), "9.25.1.1");
    assert!(cat.wheel_for(&"9.25.0_cuda12".parse().unwrap()).is_none());
    let (_, ver) = cat.wheel_for(&"9.25.0.15_cuda12".parse().unwrap()).unwrap();
    assert_eq!(ver.to_string(), "9.25.0.15");
}

const HASH_A: &str = "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb";
const HASH_B: &str = "1111111111111111111111111111111111111111111111111111111111111111";

#[test]
fn user_catalog_overlays_and_unions_hashes() {
    let user = format!(
        r#"schema = 1
[[archive]]
version = "8.9.7.29"
cuda = "12"
platform = "linux-x86_64"
path = "mirror-only/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"
size = 10
source = "lab"
hashes = [{{ sha256 = "{HASH_B}", source = "lab re-upload" }}, {{ sha256 = "{HASH_A}", source = "dup" }}]

[[archive]]
version = "9.99.0.1"
cuda = "12"
platform = "linux-x86_64"
path = "cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.99.0.1_cuda12-archive.tar.xz"
hashes = []

[[archive]]
version = "8.1.0.77"
cuda = "11.2"
platform = "windows-x86_64"
path = "renamed.zip"
hashes = []
"#
    );
    let cat = Catalog::from_texts(
        EMBEDDED_MANIFEST,
        Some((&user, Path::new("/h/catalog.toml"))),
    );
    assert!(cat.warnings().is_empty(), "{:?}", cat.warnings());
    let a = cat
        .archive(&v("8.9.7.29"), &c("12"), Platform::LinuxX86_64)
        .unwrap();
    assert_eq!(a.origin, CatalogLayer::User);
    assert_eq!(a.size, Some(10));
    let hs: Vec<_> = a
        .hashes
        .iter()
        .map(|h| (h.sha256.as_str(), h.source.as_str()))
        .collect();
    assert_eq!(hs.len(), 2, "{hs:?}");
    assert_eq!(hs[0], (HASH_B, "lab re-upload"));
    assert_eq!(hs[1].0, HASH_A);
    assert_eq!(
        a.urls(None)[1],
        "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz",
        "the embedded path stays as a fall-back"
    );
    assert!(
        cat.archive(&v("9.99.0.1"), &c("12"), Platform::LinuxX86_64)
            .is_some()
    );
    let r = cat
        .archive(&v("8.1.0.77"), &c("11.2"), Platform::WindowsX86_64)
        .unwrap();
    assert_eq!(r.name(), "renamed.zip");
    assert!(r.hashes.is_empty(), "a different file replaces the entry");
    assert_eq!(cat.user_file(), Some(Path::new("/h/catalog.toml")));
}

#[test]
fn broken_user_catalog_leaves_the_embedded_one_usable() {
    let cat = Catalog::from_texts(
        EMBEDDED_MANIFEST,
        Some(("schema = [", Path::new("/h/catalog.toml"))),
    );
    assert_eq!(cat.warnings().len(), 1);
    assert!(cat.warnings()[0].contains("/h/catalog.toml"));
    assert!(cat.archives().len() >= 200);
}
