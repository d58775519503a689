//! Which of cudnnm's folders sit on a network file system (Linux: the
//! mount table `/proc/self/mountinfo`, format in proc(5)), where `flock`
//! may fail or do nothing and the home lock falls back to a lock file.

use std::path::Path;

use crate::doctor::snapshot::{NetworkFs, Snapshot};
use crate::home::Home;

/// File system types that are network or cluster file systems.
const NETWORK_TYPES: [&str; 12] = [
    "nfs",
    "nfs4",
    "lustre",
    "cifs",
    "smb3",
    "smbfs",
    "gpfs",
    "beegfs",
    "ceph",
    "glusterfs",
    "fuse.glusterfs",
    "fuse.sshfs",
];

/// Whether `fs_type` is a network file system type.
pub(crate) fn is_network(fs_type: &str) -> bool {
    NETWORK_TYPES.contains(&fs_type) || fs_type.starts_with("fuse.ceph")
}

/// The mount point and file system type that `path` (absolute, links
/// resolved) lives on, from `mountinfo` text: the longest mount point
/// that is a prefix of it.
pub(crate) fn mount_of(mountinfo: &str, path: &Path) -> Option<(String, String)> {
    let mut best: Option<(String, String)> = None;
    for line in mountinfo.lines() {
        let mut halves = line.splitn(2, " - ");
        let (Some(left), Some(right)) = (halves.next(), halves.next()) else {
            continue;
        };
        let Some(point) = left.split_whitespace().nth(4) else {
            continue;
        };
        let Some(fs_type) = right.split_whitespace().next() else {
            continue;
        };
        let point = unescape(point);
        if path.starts_with(&point) && best.as_ref().is_none_or(|(b, _)| point.len() >= b.len()) {
            best = Some((point, fs_type.to_string()));
        }
    }
    best
}

/// Mount points escape space, tab, newline and backslash as `\ooo`.
fn unescape(s: &str) -> String {
    let mut out: Vec<u8> = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && let Some(n) = std::str::from_utf8(&b[i + 1..i + 4])
                .ok()
                .and_then(|o| u8::from_str_radix(o, 8).ok())
        {
            out.push(n);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Fills [`Snapshot::network_fs`] for the home, the system store it reads
/// and every toolkit found. Nothing where there is no mount table.
pub(crate) fn probe(snap: &mut Snapshot, home: &Home) {
    let Ok(table) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return;
    };
    let mut folders: Vec<(&str, std::path::PathBuf)> = vec![("home", home.root().to_path_buf())];
    if let Some(s) = home.system_store_dir() {
        folders.push(("system store", s));
    }
    for t in &snap.toolkits {
        folders.push(("toolkit", t.root.clone().into()));
    }
    let mut found = Vec::new();
    for (what, dir) in folders {
        // A folder not made yet lives where its nearest existing parent does.
        let mut probe = dir.as_path();
        while !probe.exists() {
            match probe.parent() {
                Some(p) => probe = p,
                None => break,
            }
        }
        let real = std::fs::canonicalize(probe).unwrap_or_else(|_| probe.to_path_buf());
        if let Some((mount, fs_type)) = mount_of(&table, &real)
            && is_network(&fs_type)
        {
            found.push(NetworkFs {
                what: what.to_string(),
                path: dir.to_string_lossy().into_owned(),
                fs_type,
                mount,
            });
        }
    }
    snap.network_fs = found;
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:35 / /home rw,relatime shared:20 - nfs4 srv:/export/home rw,vers=4.2
41 22 0:36 / /scratch rw shared:21 - lustre 10.0.0.1@o2ib:/scratch rw,noflock
42 40 0:37 / /home/u/local\\040disk rw - ext4 /dev/sdb1 rw
";

    #[test]
    fn the_longest_mount_point_decides() {
        assert_eq!(
            mount_of(TABLE, Path::new("/home/u/.local/share/cudnnm")),
            Some(("/home".into(), "nfs4".into()))
        );
        assert_eq!(
            mount_of(TABLE, Path::new("/scratch/cudnnm/store")),
            Some(("/scratch".into(), "lustre".into()))
        );
        assert_eq!(
            mount_of(TABLE, Path::new("/home/u/local disk/x")),
            Some(("/home/u/local disk".into(), "ext4".into()))
        );
        assert_eq!(
            mount_of(TABLE, Path::new("/homeless")),
            Some(("/".into(), "ext4".into()))
        );
        assert!(is_network("nfs4") && is_network("lustre") && !is_network("ext4"));
    }
}
