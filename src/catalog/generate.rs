//! The one generator of the catalog's machine-written rows: PyPI's file
//! lists become `[[wheel]]` tables and NVIDIA's `redistrib_*.json` files
//! `[[redist]]` tables, written the same way into `manifest.toml` (by
//! `scripts/update-catalog.sh`, through `cudnnm manifest generate`) and
//! into the user catalog (by `cudnnm manifest refresh`).
//!
//! The text is built here, not by a TOML serializer, so that one input
//! always gives the same bytes: the maintainer script's output is compared
//! with the committed rows byte for byte. Wheel rows keep what no other
//! source gives (URL, size, SHA-256, yanked state and reason); the version
//! and platform tag are read back from the file name in the URL.

use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

use super::pypi::{self, PackageIndex, WheelName};
use super::redist::{self, RedistTable};
use super::{Archive, WheelFile, WheelList, manifest};
use crate::error::{Error, IoResultExt, Kind, Result};
use crate::version::{Package, Platform};

/// The line that opens the generated rows of `manifest.toml`.
pub const BEGIN: &str = "# ═══ BEGIN GENERATED ROWS: scripts/update-catalog.sh writes everything down to END; do not edit by hand ═══";

/// The line that closes them.
pub const END: &str = "# ═══ END GENERATED ROWS ═══";

/// Files of an index answer that are no release row, counted for the header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Source archives (`.tar.gz`): nothing to install.
    pub sdists: usize,
    /// Wheels for no platform (`py3-none-any` placeholders) or one cudnnm does not know.
    pub other_platforms: usize,
    /// Pre-release and development versions (`0.0.0a0`, `9.26.0.33.dev63203437`).
    pub prereleases: usize,
}

/// The `[[wheel]]` list of one package's index answer: its wheels of final
/// (and post-) releases for the platforms cudnnm knows, sorted by version,
/// platform and name; the rest counted in `skipped`. `read` is the date
/// the answer was read.
pub fn wheel_list(
    idx: &PackageIndex,
    source: &str,
    read: Option<&str>,
    skipped: &mut Skipped,
) -> WheelList {
    let mut files: Vec<WheelFile> = Vec::new();
    for f in &idx.files {
        let Some(name) = WheelName::parse(&f.filename) else {
            skipped.sdists += 1;
            continue;
        };
        if name.project != idx.package.name() {
            skipped.other_platforms += 1;
            continue;
        }
        let Some(platform) = pypi::platform_of(&name) else {
            skipped.other_platforms += 1;
            continue;
        };
        let Some(version) = crate::version::release_of(&name.version) else {
            skipped.prereleases += 1;
            continue;
        };
        files.push(WheelFile {
            version,
            dist_version: name.version,
            platform,
            tag: name.platform_tag,
            filename: f.filename.clone(),
            url: f.url.clone(),
            size: f.size,
            sha256: f.sha256.clone(),
            yanked: f.yanked.clone(),
        });
    }
    files.sort_by(|a, b| {
        (&a.version, &a.dist_version, a.platform, &a.filename).cmp(&(
            &b.version,
            &b.dist_version,
            b.platform,
            &b.filename,
        ))
    });
    let mut versions: Vec<_> = files.iter().map(|f| f.version.clone()).collect();
    versions.dedup();
    WheelList {
        package: idx.package.name(),
        cuda: idx.package.cuda_variant(),
        flavour: idx.package.flavour,
        versions,
        source: source.to_string(),
        read: read.map(str::to_owned),
        files,
    }
}

/// A TOML basic string: quotes, backslashes and control characters escaped.
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `[[wheel]]` tables for `lists`, in the order given.
pub fn render_wheels(lists: &[WheelList]) -> String {
    let mut t = String::new();
    for w in lists {
        let _ = writeln!(t, "[[wheel]]");
        let _ = writeln!(t, "package = {}", quoted(&w.package));
        let _ = writeln!(t, "source = {}", quoted(&w.source));
        if let Some(r) = &w.read {
            let _ = writeln!(t, "read = {}", quoted(r));
        }
        let _ = writeln!(t, "files = [");
        for f in &w.files {
            let _ = write!(t, "  {{ url = {}", quoted(&f.url));
            if !f
                .url
                .split(['?', '#'])
                .next()
                .unwrap_or("")
                .ends_with(&format!("/{}", f.filename))
            {
                let _ = write!(t, ", file = {}", quoted(&f.filename));
            }
            let _ = write!(t, ", size = {}, sha256 = \"{}\"", f.size, f.sha256);
            if let Some(reason) = &f.yanked {
                t.push_str(", yanked = true");
                if !reason.is_empty() {
                    let _ = write!(t, ", yanked_reason = {}", quoted(reason));
                }
            }
            t.push_str(" },\n");
        }
        t.push_str("]\n\n");
    }
    t
}

/// `[[redist]]` tables for `tables`, in the order given.
pub fn render_redist(tables: &[RedistTable]) -> String {
    let mut t = String::new();
    for r in tables {
        let _ = writeln!(t, "[[redist]]");
        let _ = writeln!(t, "label = {}", quoted(&r.label));
        let _ = writeln!(t, "version = \"{}\"", r.version);
        if let Some(d) = &r.release_date {
            let _ = writeln!(t, "release_date = {}", quoted(d));
        }
        let _ = writeln!(t, "source = {}", quoted(&r.source));
        let _ = writeln!(t, "files = [");
        for f in &r.files {
            let _ = write!(
                t,
                "  {{ platform = \"{}\", cuda = \"{}\"",
                f.platform, f.cuda
            );
            if !f.flavour.is_full() {
                let _ = write!(t, ", flavour = \"{}\"", f.flavour);
            }
            if let Some(n) = f.size {
                let _ = write!(t, ", size = {n}");
            }
            let _ = writeln!(
                t,
                ", sha256 = \"{}\", path = {} }},",
                f.sha256,
                quoted(&f.path)
            );
        }
        t.push_str("]\n\n");
    }
    t
}

/// Orders a table's rows as the catalog lists them: the full build first,
/// then platform and CUDA variant.
fn sort_rows(r: &mut RedistTable) {
    r.files.sort_by_key(|f| (f.flavour, f.platform, f.cuda));
}

/// What a generated section holds, for its header and the report.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    /// Per package: releases, releases not yanked, wheel files, yanked files.
    pub packages: Vec<(String, usize, usize, usize, usize)>,
    /// Index files left out.
    pub skipped: Skipped,
    /// Redist tables and the archives they list.
    pub redist: (usize, usize),
}

/// The generated rows of `manifest.toml`, between [`BEGIN`] and [`END`]
/// (both included, with a final newline): `lists` (already built by
/// [`wheel_list`]) and `tables` as given, sorted here.
pub fn embedded_section(lists: &[WheelList], tables: &[RedistTable], counts: &Counts) -> String {
    let mut lists = lists.to_vec();
    lists.sort_by_key(|w| {
        w.package
            .parse::<Package>()
            .map(|p| {
                Package::PUBLISHED
                    .iter()
                    .position(|x| *x == p)
                    .unwrap_or(99)
            })
            .unwrap_or(99)
    });
    let mut tables = tables.to_vec();
    tables.sort_by(|a, b| a.version.cmp(&b.version));
    for r in &mut tables {
        sort_rows(r);
    }
    let mut t = String::new();
    let _ = writeln!(t, "{BEGIN}");
    t.push_str(
        "#\n\
         # [[wheel]]: one table per PyPI package, every wheel of a final (or post-) release for a\n\
         # platform cudnnm knows, with the URL, size and SHA-256 the index publishes and its yanked\n\
         # state (PEP 592). The file name in the URL says the version and the platform tag.\n",
    );
    let s = counts.skipped;
    let _ = writeln!(
        t,
        "# Left out: {} source archives, {} wheels for no platform (placeholders), {} pre-release wheels.",
        s.sdists, s.other_platforms, s.prereleases
    );
    for (p, releases, live, files, yanked) in &counts.packages {
        let _ = writeln!(
            t,
            "#   {p}: {releases} releases ({live} not yanked), {files} wheels ({yanked} yanked)"
        );
    }
    t.push_str(
        "# [[redist]]: one table per NVIDIA redistrib_*.json, its archives as rows (`path` below\n\
         # cudnn/redist/ of the base URL, NVIDIA's relative_path), read from the public copy `source` names.\n",
    );
    let _ = writeln!(
        t,
        "#   {} files, {} archives\n",
        counts.redist.0, counts.redist.1
    );
    t.push_str(&render_wheels(&lists));
    t.push_str(&render_redist(&tables));
    let _ = writeln!(t, "{END}");
    t
}

/// `tests/fixtures/catalog/SOURCES.toml`: where each recorded answer
/// comes from.
#[derive(Debug, Deserialize)]
struct Sources {
    pypi: PypiSources,
    redist: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
struct PypiSources {
    /// The index, `{package}` standing for the package name.
    url: String,
    /// When the answers were read (`2026-12-03`).
    read: String,
}

/// The generated section from a folder of recorded answers: `pypi/<package>.json`
/// (PEP 691), `redist/redistrib_*.json`, and `SOURCES.toml` naming the
/// public address of each (what the maintainer script commits).
///
/// # Errors
/// A file that cannot be read, an answer that is refused, a file
/// `SOURCES.toml` does not name.
pub fn from_fixtures(dir: &Path) -> Result<(String, Counts)> {
    let sources_file = dir.join("SOURCES.toml");
    let text = std::fs::read_to_string(&sources_file).with_path("read", &sources_file)?;
    let sources: Sources = toml::from_str(&text).map_err(|e| {
        Error::new(
            Kind::Integrity,
            format!("'{}' is malformed", sources_file.display()),
        )
        .cause(e.message().to_string())
    })?;
    let mut counts = Counts::default();
    let mut lists = Vec::new();
    for package in Package::PUBLISHED {
        let f = dir.join("pypi").join(format!("{package}.json"));
        let text = std::fs::read_to_string(&f).with_path("read", &f)?;
        let url = sources.pypi.url.replace("{package}", &package.name());
        let idx = pypi::parse(&text, &url, Some(package))?;
        let list = wheel_list(
            &idx,
            &format!("{url} (PEP 691 JSON)"),
            Some(&sources.pypi.read),
            &mut counts.skipped,
        );
        let live = list
            .versions
            .iter()
            .filter(|v| {
                list.files
                    .iter()
                    .any(|f| &f.version == *v && f.yanked.is_none())
            })
            .count();
        counts.packages.push((
            list.package.clone(),
            list.versions.len(),
            live,
            list.files.len(),
            list.files.iter().filter(|f| f.yanked.is_some()).count(),
        ));
        lists.push(list);
    }
    let rdir = dir.join("redist");
    let mut names: Vec<String> = std::fs::read_dir(&rdir)
        .with_path("list", &rdir)?
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| n.starts_with("redistrib_") && n.ends_with(".json"))
        .collect();
    names.sort();
    let mut tables = Vec::new();
    let mut warnings = Vec::new();
    for n in names {
        let source = sources.redist.get(&n).ok_or_else(|| {
            Error::new(
                Kind::Integrity,
                format!(
                    "'{}' does not say where {n} comes from",
                    sources_file.display()
                ),
            )
            .hint("add its public address under [redist] (a packager's copy at a commit)")
        })?;
        let f = rdir.join(&n);
        let text = std::fs::read_to_string(&f).with_path("read", &f)?;
        let table = redist::parse(&text, &n, Some(source), &mut warnings)?;
        counts.redist.0 += 1;
        counts.redist.1 += table.files.len();
        tables.push(table);
    }
    if let Some(w) = warnings.first() {
        return Err(Error::new(
            Kind::Integrity,
            format!("a recorded redist file is not clean: {w}"),
        ));
    }
    Ok((embedded_section(&lists, &tables, &counts), counts))
}

/// The generated rows of a `manifest.toml` text (from [`BEGIN`] to
/// [`END`], both included); `None` without them.
pub fn section_of(manifest: &str) -> Option<&str> {
    let a = manifest.find(BEGIN)?;
    let rest = &manifest[a..];
    let b = rest.find(END)? + END.len();
    let end = if rest[b..].starts_with('\n') {
        b + 1
    } else {
        b
    };
    Some(&rest[..end])
}

/// What the user catalog holds: archive rows kept from earlier refreshes
/// (and older cudnnm versions), redist tables, wheel lists.
#[derive(Clone, Debug, Default)]
pub struct UserParts {
    /// `[[archive]]` rows.
    pub archives: Vec<Archive>,
    /// `[[redist]]` tables.
    pub redists: Vec<RedistTable>,
    /// `[[wheel]]` tables.
    pub wheels: Vec<WheelList>,
}

/// The user catalog's text (`written`: when, RFC 3339), archive paths
/// relative to `base`.
pub fn user_catalog(parts: &UserParts, base: &str, written: &str) -> String {
    let mut t = format!(
        "# cudnnm user catalog, written by `cudnnm manifest refresh` at {written}.\n\
         # It overlays the catalog embedded in cudnnm: an archive here with the same release,\n\
         # CUDA variant, flavour and platform as an embedded one is preferred, and the SHA-256\n\
         # values of both are accepted; a package's wheel list here replaces the embedded one.\n\
         # Safe to delete (`cudnnm manifest refresh` rewrites it).\n\n\
         schema = {}\nbase_url = {}\nwritten = {}\n\n",
        super::SCHEMA,
        quoted(base),
        quoted(written)
    );
    for a in &parts.archives {
        let mut row = manifest::archive_to_toml(a);
        // An entry read from a file with another base keeps its full URL.
        if a.base != base && !super::is_absolute_url(&row.path) {
            row.path = format!("{}{}", a.base, row.path);
            row.alt_paths = row
                .alt_paths
                .iter()
                .map(|p| format!("{}{p}", a.base))
                .collect();
        }
        #[derive(serde::Serialize)]
        struct One {
            archive: Vec<manifest::ArchiveToml>,
        }
        t.push_str(&toml::to_string_pretty(&One { archive: vec![row] }).unwrap_or_default());
        t.push('\n');
    }
    let mut tables = parts.redists.clone();
    for r in &mut tables {
        sort_rows(r);
    }
    t.push_str(&render_redist(&tables));
    t.push_str(&render_wheels(&parts.wheels));
    t
}

/// Counts releases by platform, for reports: `(platform, releases)`.
pub fn releases_by_platform(lists: &[WheelList]) -> Vec<(Platform, usize)> {
    let mut out: Vec<(Platform, usize)> = Vec::new();
    for p in Platform::ALL {
        let mut vs: Vec<_> = lists
            .iter()
            .flat_map(|w| {
                w.files
                    .iter()
                    .filter(move |f| f.platform == p)
                    .map(move |f| (&w.package, &f.version))
            })
            .collect();
        vs.sort();
        vs.dedup();
        if !vs.is_empty() {
            out.push((p, vs.len()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixtures() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalog")
    }

    /// The committed rows of `manifest.toml` are exactly what the generator
    /// writes from the recorded answers (`scripts/update-catalog.sh --offline`).
    #[test]
    fn the_committed_rows_are_the_generators_output_byte_for_byte() {
        let (text, _) = from_fixtures(&fixtures()).unwrap();
        let committed =
            section_of(super::super::EMBEDDED_MANIFEST).expect("manifest.toml has generated rows");
        if committed != text {
            let line = committed
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(committed.lines().count().min(text.lines().count()));
            panic!(
                "manifest.toml's generated rows differ from the generator's at line {} of the section:\n committed: {:?}\n generated: {:?}\nrun scripts/update-catalog.sh --offline",
                line + 1,
                committed.lines().nth(line),
                text.lines().nth(line)
            );
        }
    }

    /// Counts from the recorded answers (PyPI, 2026-12-03): every CUDA 13
    /// release, the JIT packages, the one yank of cu12 and cu13.
    #[test]
    fn the_recorded_answers_give_every_published_release() {
        let (_, counts) = from_fixtures(&fixtures()).unwrap();
        let of = |p: &str| counts.packages.iter().find(|x| x.0 == p).cloned().unwrap();
        // 28 CUDA 13 releases, and 9.25.0.15, whose three wheels are yanked.
        assert_eq!(
            (of("nvidia-cudnn-cu13").1, of("nvidia-cudnn-cu13").2),
            (29, 28)
        );
        assert_eq!(of("nvidia-cudnn-cu13").4, 3);
        assert_eq!(
            (of("nvidia-cudnn-jit-cu12").1, of("nvidia-cudnn-jit-cu12").2),
            (26, 26)
        );
        assert_eq!(
            (of("nvidia-cudnn-jit-cu13").1, of("nvidia-cudnn-jit-cu13").2),
            (26, 26)
        );
        assert_eq!(of("nvidia-cudnn-cu12").4, 3);
        assert_eq!(of("nvidia-cudnn-cu11").4, 1, "8.9.4.19 for Windows");
        assert!(counts.skipped.prereleases > 0 && counts.skipped.sdists > 0);
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(quoted("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000A\"");
        let text = "x\n# ═══ BEGIN GENERATED ROWS: a\nrow\n# ═══ END GENERATED ROWS ═══\ntail";
        assert!(section_of(text).is_none(), "the marker must be whole");
        let text = format!("x\n{BEGIN}\nrow\n{END}\ntail");
        assert_eq!(
            section_of(&text),
            Some(format!("{BEGIN}\nrow\n{END}\n").as_str())
        );
    }
}
