//! Which package index cuDNN wheels come from: `--index-url URL`, else
//! `CUDNNM_INDEX_URL`, else `index_url` in `config.toml`, else the index
//! pip is configured with (`PIP_INDEX_URL`, then pip's configuration files,
//! read here — pip is never run for it), else PyPI. The same rule for every
//! command that reads the index (`install`, `lock`, `lock --check`,
//! `list --remote`, `manifest refresh`).
//!
//! pip's files are read as pip reads them (<https://pip.pypa.io/en/stable/topics/configuration/>,
//! and pip's `configuration.py`): the global files (`$XDG_CONFIG_DIRS/pip/pip.conf`, `/etc/pip.conf`;
//! `C:\ProgramData\pip\pip.ini`), the user's (`~/.pip/pip.conf`, then
//! `$XDG_CONFIG_HOME/pip/pip.conf`; `%HOME%\pip\pip.ini`, then
//! `%APPDATA%\pip\pip.ini`), the virtual environment's
//! (`$VIRTUAL_ENV/pip.conf`), then the file `PIP_CONFIG_FILE` names, each
//! overriding the one before (the user's skipped when that file exists;
//! `/dev/null` or `nul` turns every file off); in a file,
//! `[download]` overrides `[global]`. A pip told `no-index` (its
//! `find-links` folders are pip's to read) keeps fetching with pip.

use std::path::{Path, PathBuf};

use crate::catalog::download::Trust;
use crate::catalog::pypi::PYPI_SIMPLE as PYPI;
use crate::env::{self, Env};
use crate::error::{Error, Kind, Result};
use crate::home::Home;

/// The largest pip configuration file read, in bytes.
const MAX_PIP_CONF: u64 = 256 << 10;

/// Where the index in effect was named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexFrom {
    /// `--index-url`.
    Flag,
    /// `CUDNNM_INDEX_URL`.
    Env,
    /// `index_url` in this `config.toml`.
    Config(PathBuf),
    /// `PIP_INDEX_URL`.
    PipEnv,
    /// `index-url` in this pip configuration file.
    PipConfig(PathBuf),
    /// Nothing named one: PyPI.
    Default,
}

impl std::fmt::Display for IndexFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IndexFrom::Flag => write!(f, "--index-url"),
            IndexFrom::Env => write!(f, "{}", env::CUDNNM_INDEX_URL),
            IndexFrom::Config(p) => write!(f, "index_url in '{}'", p.display()),
            IndexFrom::PipEnv => write!(f, "{}", env::PIP_INDEX_URL),
            IndexFrom::PipConfig(p) => write!(f, "index-url in pip's '{}'", p.display()),
            IndexFrom::Default => write!(f, "the default, PyPI"),
        }
    }
}

/// A package index: its simple API's base URL, ending in `/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Index {
    /// `https://pypi.org/simple/`. May hold credentials: show [`Index::shown`].
    pub url: String,
    /// Where it was named.
    pub from: IndexFrom,
}

impl Index {
    /// The URL without any `user:password@`, for messages.
    pub fn shown(&self) -> String {
        without_credentials(&self.url)
    }

    /// The project's page: `<base><normalized name>/` (PEP 503).
    pub fn project_url(&self, project: &str) -> String {
        format!("{}{}/", self.url, crate::version::python_name(project, '-'))
    }

    /// Whether the user named it for cudnnm (`--index-url`,
    /// `CUDNNM_INDEX_URL`, `index_url`) rather than for pip or not at all:
    /// then `install` fetches a release's wheel from it even where NVIDIA
    /// also publishes an archive.
    pub fn named_for_cudnnm(&self) -> bool {
        matches!(
            self.from,
            IndexFrom::Flag | IndexFrom::Env | IndexFrom::Config(_)
        )
    }

    /// Whether it may leave HTTPS: a user-named index may be `http://`
    /// (a lab or loopback mirror) and link its files so; PyPI, the
    /// default, is HTTPS only, redirects included.
    pub fn trust(&self) -> Trust {
        if self.from == IndexFrom::Default {
            Trust::HttpsOnly
        } else {
            Trust::Named
        }
    }
}

/// What the index setting comes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setting {
    /// Read this index directly.
    Index(Index),
    /// pip is configured with `no-index` (and its own `find-links`): wheels
    /// are fetched with pip, as `install pip:REQ` does. The string says
    /// where (`PIP_NO_INDEX`, a file).
    PipNoIndex(String),
}

/// The index in effect; see the module documentation.
///
/// # Errors
/// [`Kind::Usage`] for an index that is not an `http(s)://` URL; an
/// unreadable `config.toml`.
pub fn effective(flag: Option<&str>, env: &Env, home: &Home) -> Result<Setting> {
    let given = |raw: &str, from: IndexFrom| -> Result<Setting> {
        Ok(Setting::Index(Index {
            url: checked(raw, &from)?,
            from,
        }))
    };
    if let Some(f) = flag.map(str::trim).filter(|f| !f.is_empty()) {
        return given(f, IndexFrom::Flag);
    }
    if let Some(v) = env.var(env::CUDNNM_INDEX_URL) {
        return given(v.trim(), IndexFrom::Env);
    }
    if let Some(v) = home.config()?.index_url.filter(|v| !v.trim().is_empty()) {
        return given(v.trim(), IndexFrom::Config(home.config_file()));
    }
    let pip = pip_settings(env);
    if let Some((true, from)) = &pip.no_index {
        return Ok(Setting::PipNoIndex(from.clone()));
    }
    match pip.index_url {
        Some((url, from)) => given(&url, from),
        None => Ok(Setting::Index(Index {
            url: PYPI.to_string(),
            from: IndexFrom::Default,
        })),
    }
}

/// `raw` as an index base URL ending in `/`.
fn checked(raw: &str, from: &IndexFrom) -> Result<String> {
    let lower = raw.to_ascii_lowercase();
    let url = reqwest::Url::parse(raw)
        .ok()
        .filter(|_| lower.starts_with("https://") || lower.starts_with("http://"));
    match url {
        Some(u) => Ok(format!("{}/", u.as_str().trim_end_matches('/'))),
        None => Err(Error::new(
            Kind::Usage,
            format!(
                "the package index '{}' ({from}) is not an http(s):// URL",
                without_credentials(raw)
            ),
        )
        .hint("give the index's simple API, e.g. https://pypi.org/simple/ or https://mirror.example/pypi/simple/")),
    }
}

/// `url` without `user:password@`.
pub fn without_credentials(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => url.chars().filter(|c| !c.is_control()).take(200).collect(),
    }
}

/// What pip's environment and files say of the index.
#[derive(Debug, Default, PartialEq)]
struct PipSettings {
    index_url: Option<(String, IndexFrom)>,
    no_index: Option<(bool, String)>,
}

fn pip_settings(env: &Env) -> PipSettings {
    let mut s = PipSettings::default();
    for file in pip_files(env) {
        let Some(text) = read_small(&file) else {
            continue;
        };
        let ini = read_ini(&text);
        if let Some(v) = ini.index_url {
            s.index_url = Some((v, IndexFrom::PipConfig(file.clone())));
        }
        if let Some(v) = ini.no_index {
            s.no_index = Some((v, format!("no-index in pip's '{}'", file.display())));
        }
    }
    if let Some(v) = env.var(env::PIP_INDEX_URL) {
        s.index_url = Some((v.trim().to_string(), IndexFrom::PipEnv));
    }
    if let Some(v) = env.var(env::PIP_NO_INDEX).and_then(|v| truth(&v)) {
        s.no_index = Some((v, env::PIP_NO_INDEX.to_string()));
    }
    s
}

/// A regular file of at most [`MAX_PIP_CONF`] bytes as text (a larger one,
/// a device, a FIFO or a folder is no pip configuration: `None`).
fn read_small(path: &Path) -> Option<String> {
    // The shared bounded reader: regular files only, opened without waiting
    // (a FIFO planted as a venv's pip.conf must not hang the command).
    crate::fsops::read_bounded(path, MAX_PIP_CONF, "a pip configuration file")
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// pip's configuration files, later ones winning, as pip's
/// `Configuration` orders them (`OVERRIDE_ORDER`: global, user, site, then
/// the `PIP_CONFIG_FILE` file): the user's files are skipped when
/// `PIP_CONFIG_FILE` names a file that exists, and that file wins over all.
fn pip_files(env: &Env) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let named = env.var_os(env::PIP_CONFIG_FILE).map(PathBuf::from);
    if let Some(f) = &named {
        let s = f.to_string_lossy().to_ascii_lowercase();
        if s == "/dev/null" || s == "nul" {
            return Vec::new();
        }
    }
    let user = named.as_ref().is_none_or(|f| !f.exists());
    let var = |n: &str| env.var_os(n).map(PathBuf::from);
    if env.is_windows() {
        if let Some(p) = var(env::PROGRAM_DATA) {
            files.push(p.join("pip").join("pip.ini"));
        }
        if user && let Some(h) = var("HOME") {
            files.push(h.join("pip").join("pip.ini"));
        }
        if user && let Some(a) = var("APPDATA") {
            files.push(a.join("pip").join("pip.ini"));
        }
        if let Some(v) = var("VIRTUAL_ENV") {
            files.push(v.join("pip.ini"));
        }
    } else {
        let dirs = env
            .var("XDG_CONFIG_DIRS")
            .unwrap_or_else(|| "/etc/xdg".to_string());
        for d in dirs.split(':').filter(|d| !d.is_empty()) {
            files.push(Path::new(d).join("pip").join("pip.conf"));
        }
        files.push(PathBuf::from("/etc/pip.conf"));
        if user && let Some(h) = var("HOME") {
            files.push(h.join(".pip").join("pip.conf"));
            let config = var("XDG_CONFIG_HOME").unwrap_or_else(|| h.join(".config"));
            files.push(config.join("pip").join("pip.conf"));
        }
        if let Some(v) = var("VIRTUAL_ENV") {
            files.push(v.join("pip.conf"));
        }
    }
    files.extend(named);
    files
}

/// pip's yes and no (`1`, `true`, `yes`, `on`; `0`, `false`, `no`, `off`).
fn truth(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" | "y" | "t" => Some(true),
        "0" | "false" | "no" | "off" | "n" | "f" => Some(false),
        _ => None,
    }
}

/// The index settings of one pip configuration file.
#[derive(Debug, Default, PartialEq)]
struct Ini {
    index_url: Option<String>,
    no_index: Option<bool>,
}

/// `index-url` and `no-index` of `[global]`, overridden by `[download]`
/// (pip's command sections; `pip download` is what cudnnm stands in for).
/// Keys as pip spells them, `-` or `_`; `#` and `;` start comments.
fn read_ini(text: &str) -> Ini {
    let (mut global, mut download) = (Ini::default(), Ini::default());
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.trim().to_ascii_lowercase();
            continue;
        }
        let Some((k, v)) = line.split_once('=').or_else(|| line.split_once(':')) else {
            continue;
        };
        let into = match section.as_str() {
            "global" => &mut global,
            "download" => &mut download,
            _ => continue,
        };
        let v = v.trim();
        match k.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "index-url" if !v.is_empty() => into.index_url = Some(v.to_string()),
            "no-index" => into.no_index = truth(v),
            _ => {}
        }
    }
    Ini {
        index_url: download.index_url.or(global.index_url),
        no_index: download.no_index.or(global.no_index),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests write their fixtures directly
mod tests {
    use super::*;

    fn home(dir: &Path, config: &str) -> Home {
        std::fs::write(dir.join("config.toml"), config).unwrap();
        Home::locate(Some(dir), &Env::from_vars([("X", "y")], "/", false)).unwrap()
    }

    fn url(s: Setting) -> (String, IndexFrom) {
        match s {
            Setting::Index(i) => (i.url, i.from),
            other => panic!("{other:?}"),
        }
    }

    /// Flag over CUDNNM_INDEX_URL over config.toml over PIP_INDEX_URL
    /// over pip's files over PyPI.
    #[test]
    fn the_index_in_effect_follows_the_documented_order() {
        let d = tempfile::tempdir().unwrap();
        let conf = d.path().join("pip.conf");
        std::fs::write(
            &conf,
            "[global]\nindex-url = https://files.example/simple\n[install]\nindex-url = https://no.example/\n",
        )
        .unwrap();
        let h = home(d.path(), "index_url = \"https://config.example/simple\"\n");
        let all = [
            (env::CUDNNM_INDEX_URL, "https://env.example/simple/"),
            (env::PIP_INDEX_URL, "https://pip.example/simple"),
            (env::PIP_CONFIG_FILE, conf.to_str().unwrap()),
            ("HOME", "/nonexistent"),
        ];
        let env = |n: usize| Env::from_vars(all[all.len() - n..].to_vec(), "/", false);
        assert_eq!(
            url(effective(Some("https://flag.example/s"), &env(4), &h).unwrap()),
            ("https://flag.example/s/".into(), IndexFrom::Flag)
        );
        assert_eq!(
            url(effective(None, &env(4), &h).unwrap()),
            ("https://env.example/simple/".into(), IndexFrom::Env)
        );
        assert_eq!(
            url(effective(None, &env(3), &h).unwrap()).0,
            "https://config.example/simple/"
        );
        let bare = home(d.path(), "");
        assert_eq!(
            url(effective(None, &env(3), &bare).unwrap()),
            ("https://pip.example/simple/".into(), IndexFrom::PipEnv)
        );
        assert_eq!(
            url(effective(None, &env(2), &bare).unwrap()),
            (
                "https://files.example/simple/".into(),
                IndexFrom::PipConfig(conf.clone())
            )
        );
        let nothing = Env::from_vars([(env::PIP_CONFIG_FILE, "/dev/null")], "/", false);
        assert_eq!(
            url(effective(None, &nothing, &bare).unwrap()),
            (PYPI.into(), IndexFrom::Default)
        );
        let no_index = Env::from_vars(
            [
                (env::PIP_CONFIG_FILE, "/dev/null"),
                (env::PIP_NO_INDEX, "1"),
            ],
            "/",
            false,
        );
        assert_eq!(
            effective(None, &no_index, &bare).unwrap(),
            Setting::PipNoIndex("PIP_NO_INDEX".into())
        );
        let e = effective(Some("ftp://a:secret@x/"), &nothing, &bare).unwrap_err();
        assert_eq!(e.kind(), Kind::Usage);
        assert!(!e.to_string().contains("secret"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_device_as_pip_conf_is_skipped_at_once() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pip.conf");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let t = std::time::Instant::now();
        assert_eq!(read_small(&fifo), None);
        assert_eq!(read_small(Path::new("/dev/zero")), None);
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
        let f = d.path().join("ok.conf");
        std::fs::write(&f, "[global]\nindex-url = https://x/\n").unwrap();
        assert_eq!(
            read_small(&f).as_deref(),
            Some("[global]\nindex-url = https://x/\n")
        );
    }

    #[test]
    fn pip_files_are_read_as_pip_reads_them() {
        let ini = read_ini(
            "# c\n[global]\nindex_url=https://g/\nno-index = false\n[download]\nindex-url: https://d/\n",
        );
        assert_eq!(ini.index_url.as_deref(), Some("https://d/"));
        assert_eq!(ini.no_index, Some(false));
        let env = Env::from_vars(
            [
                ("HOME", "/h"),
                ("XDG_CONFIG_DIRS", "/x1:/x2"),
                ("VIRTUAL_ENV", "/v"),
            ],
            "/",
            false,
        );
        // The Linux layout as data; a Windows host joins with `\\`.
        let files: Vec<String> = pip_files(&env)
            .iter()
            .map(|p| p.display().to_string().replace('\\', "/"))
            .collect();
        assert_eq!(
            files,
            [
                "/x1/pip/pip.conf",
                "/x2/pip/pip.conf",
                "/etc/pip.conf",
                "/h/.pip/pip.conf",
                "/h/.config/pip/pip.conf",
                "/v/pip.conf"
            ]
        );
        // PIP_CONFIG_FILE wins over all, and an existing one turns the
        // user's files off (pip's OVERRIDE_ORDER); a missing one does not.
        let d = tempfile::tempdir().unwrap();
        let named = d.path().join("a.conf");
        std::fs::write(&named, "[global]\nindex-url = https://a/\n").unwrap();
        let with = |f: &Path| {
            let env = Env::from_vars(
                [
                    ("HOME", "/h"),
                    ("XDG_CONFIG_DIRS", "/x1"),
                    (env::PIP_CONFIG_FILE, f.to_str().unwrap()),
                ],
                "/",
                false,
            );
            pip_files(&env)
                .iter()
                .map(|p| p.display().to_string().replace('\\', "/"))
                .collect::<Vec<String>>()
        };
        let shown = named.display().to_string().replace('\\', "/");
        assert_eq!(
            with(&named),
            ["/x1/pip/pip.conf", "/etc/pip.conf", shown.as_str()]
        );
        let missing = d.path().join("missing.conf");
        let shown = missing.display().to_string().replace('\\', "/");
        assert_eq!(
            with(&missing),
            [
                "/x1/pip/pip.conf",
                "/etc/pip.conf",
                "/h/.pip/pip.conf",
                "/h/.config/pip/pip.conf",
                shown.as_str()
            ]
        );
    }

    #[test]
    fn names_normalize_and_credentials_are_never_shown() {
        let url = |p: &str| {
            Index {
                url: PYPI.into(),
                from: IndexFrom::Default,
            }
            .project_url(p)
        };
        assert_eq!(
            url("NVIDIA_cudnn.cu12"),
            "https://pypi.org/simple/nvidia-cudnn-cu12/"
        );
        assert_eq!(
            url("nvidia--cudnn__cu12"),
            "https://pypi.org/simple/nvidia-cudnn-cu12/"
        );
        assert_eq!(
            without_credentials("https://me:pw@idx.example/simple/"),
            "https://idx.example/simple/"
        );
    }
}
