//! `cudnnm install` from every real archive shape, and every bad input.

mod common;

use common::fixtures;

#[test]
fn fixtures_match_the_reference_file_counts() {
    let f = fixtures::windows_zip_8_1_0_77();
    let count = |ext: &str| f.file_paths().iter().filter(|p| p.ends_with(ext)).count();
    assert_eq!((count(".dll"), count(".h"), count(".lib"), count(".txt")), (7, 9, 14, 1));
    let f = fixtures::windows_zip_7_1_3();
    assert_eq!(
        f.file_paths(),
        vec!["cuda/bin/cudnn64_7.dll", "cuda/include/cudnn.h", "cuda/lib/x64/cudnn.lib", "cuda/NVIDIA_SLA_cuDNN_Support.txt"]
    );
}
