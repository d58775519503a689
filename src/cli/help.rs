//! What `--help` shows beyond the flags: examples for every command and,
//! on the main help, the exit codes (the table in README.md, "Exit codes",
//! which a test keeps in step). Added to the clap command built from
//! [`super::Cli`], so the parser and the completer see one command.

use clap::CommandFactory;

use super::Cli;

/// The exit codes, as README.md's table gives them.
pub const EXIT_CODES: &[(u8, &str)] = &[
    (0, "success (also: already installed, nothing to do)"),
    (1, "other failure (I/O, disk full)"),
    (
        2,
        "usage: bad arguments or spec, a toolkit to name with --cuda or --cuda-root",
    ),
    (
        3,
        "not found: no such release, version, file, toolkit, or Python/pip",
    ),
    (
        4,
        "integrity: hash mismatch, not a cuDNN archive, unsafe entry, version disagreement",
    ),
    (
        5,
        "permission denied (run elevated, or use per-process activation)",
    ),
    (
        6,
        "network or download failure (including pip's when it cannot reach its index)",
    ),
    (7, "doctor/verify found a problem"),
    (
        8,
        "conflict with current state (release deployed, CUDA does not fit, GPU too old, …)",
    ),
    (
        130,
        "interrupted (Ctrl-C or SIGTERM; use/rollback undid their change)",
    ),
];

/// Examples per subcommand path (`use`, `export lmod`), each a command line
/// and what it does.
const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "install",
        &[
            (
                "cudnnm install 9.12",
                "the newest 9.12 release for this machine from the catalog",
            ),
            (
                "cudnnm install 8.9.7.29_cuda12 --platform windows-x86_64",
                "a build for another platform",
            ),
            (
                "cudnnm install ./cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz",
                "an archive you downloaded",
            ),
            (
                "cudnnm install pip:nvidia-cudnn-cu12==9.12.0.46",
                "a wheel, fetched with your own pip",
            ),
        ],
    ),
    (
        "uninstall",
        &[
            (
                "cudnnm uninstall 9.1.0.70",
                "remove one release (also `cudnnm rm`, `cudnnm remove`)",
            ),
            (
                "cudnnm uninstall 9.1 --force",
                "even when deployed, the default, or needed by a backup",
            ),
        ],
    ),
    (
        "list",
        &[
            (
                "cudnnm ls",
                "installed releases (deployed, default and pinned marked)",
            ),
            (
                "cudnnm list --remote --cuda 12",
                "the catalog for CUDA 12, installed releases marked",
            ),
        ],
    ),
    (
        "ls-remote",
        &[
            ("cudnnm ls-remote", "the catalog for this machine"),
            (
                "cudnnm ls-remote --platform all --cuda 11.8",
                "every platform's builds for CUDA 11.8",
            ),
        ],
    ),
    (
        "use",
        &[
            (
                "cudnnm use 9.12",
                "deploy into the toolkit found (or the one this home knows)",
            ),
            (
                "cudnnm use 9.12 --cuda 12",
                "into the one CUDA 12.x toolkit",
            ),
            (
                "cudnnm use 8.9.7 --cuda-root /usr/local/cuda-11.8 --mode copy",
                "into a given toolkit, by copy",
            ),
            (
                "cudnnm use",
                "deploy the release pinned here (.cudnn-version) or the default",
            ),
        ],
    ),
    (
        "current",
        &[
            (
                "cudnnm current",
                "which release applies here and why; what each toolkit holds",
            ),
            ("cudnnm current --cuda 12.4 --json", "one toolkit, as JSON"),
        ],
    ),
    (
        "which",
        &[
            (
                "cudnnm which",
                "the main library of the release that applies here",
            ),
            ("cudnnm which --version 8.9", "of another release"),
        ],
    ),
    (
        "rollback",
        &[
            ("cudnnm rollback", "undo the last change to the toolkit"),
            (
                "cudnnm rollback --to 3",
                "restore backup 3 (`cudnnm backups` lists them)",
            ),
            (
                "cudnnm rollback --cuda 11.8",
                "undo the last change to the CUDA 11.8 toolkit",
            ),
        ],
    ),
    (
        "backups",
        &[
            (
                "cudnnm backups",
                "every backup: when, size, what it held, the files of yours it keeps",
            ),
            (
                "cudnnm backups remove 4 5",
                "remove backups 4 and 5, saying what each frees",
            ),
            (
                "cudnnm backups prune --keep 2",
                "keep each toolkit's first, its newest 2 and those holding files of yours",
            ),
        ],
    ),
    (
        "cache",
        &[
            (
                "cudnnm cache",
                "the downloaded archives, their sizes and releases",
            ),
            (
                "cudnnm cache clean",
                "remove them (installed releases never need them)",
            ),
        ],
    ),
    (
        "du",
        &[
            (
                "cudnnm du",
                "where the home's space goes: store, backups, downloads",
            ),
            ("cudnnm du --json", "the same, as JSON"),
        ],
    ),
    (
        "lock",
        &[
            (
                "cudnnm lock",
                "write .cudnn-version.lock: the pinned release's archive and SHA-256 per platform",
            ),
            (
                "cudnnm install --locked",
                "on another machine: install exactly the locked bytes",
            ),
        ],
    ),
    (
        "pin",
        &[
            (
                "cudnnm pin 9.12",
                "use 9.12 in this folder and below (writes .cudnn-version)",
            ),
            (
                "cudnnm pin 8.9.7.29_cuda11 --force",
                "pin a release not installed yet",
            ),
            (
                "cudnnm pin --for python",
                "pin the newest release every framework of the active Python environment accepts",
            ),
        ],
    ),
    (
        "frameworks",
        &[
            (
                "cudnnm frameworks",
                "the cuDNN each framework of the active Python environment needs, and the release for them all",
            ),
            (
                "cudnnm frameworks --python .venv/bin/python --json",
                "the same for that environment, as JSON",
            ),
        ],
    ),
    (
        "default",
        &[
            ("cudnnm default 9.12", "use 9.12 where no pin applies"),
            ("cudnnm default", "show the default"),
            ("cudnnm default none", "unset the default"),
        ],
    ),
    (
        "exec",
        &[
            (
                "cudnnm exec -- python3 train.py",
                "run with the release pinned here",
            ),
            (
                "cudnnm exec --version 8.9 -- ./bench",
                "run with another release",
            ),
        ],
    ),
    (
        "env",
        &[
            (
                "eval \"$(cudnnm env --shell bash)\"",
                "activate the release pinned here in this shell",
            ),
            (
                "eval \"$(cudnnm env --shell bash --use-on-cd)\"",
                "follow pins on every cd (put it in ~/.bashrc)",
            ),
            (
                "cudnnm env --shell powershell | Out-String | Invoke-Expression",
                "the same in PowerShell",
            ),
        ],
    ),
    (
        "toolkits",
        &[
            (
                "cudnnm toolkits",
                "the CUDA toolkits found and known, and the cuDNN each holds",
            ),
            (
                "cudnnm toolkits forget /opt/cuda-12.4",
                "forget a toolkit whose folder was deleted (its backups stay)",
            ),
        ],
    ),
    (
        "doctor",
        &[
            (
                "cudnnm doctor",
                "what breaks cuDNN on this machine, and the fix",
            ),
            ("cudnnm doctor --fix", "apply the safe, reversible fixes"),
            (
                "cudnnm doctor --report report.md",
                "a report to attach to a bug",
            ),
            (
                "cudnnm doctor -- python3 train.py",
                "run a program: the cuDNN files it really mapped",
            ),
        ],
    ),
    (
        "verify",
        &[
            (
                "cudnnm verify",
                "re-hash the store and the deployments, load each deployed library",
            ),
            ("cudnnm verify --no-load", "hashes only"),
        ],
    ),
    (
        "manifest",
        &[(
            "cudnnm manifest refresh",
            "read NVIDIA's current release index into the catalog",
        )],
    ),
    (
        "completions",
        &[
            (
                "cudnnm completions bash >> ~/.bashrc",
                "completion of commands, flags, versions, backups and toolkits",
            ),
            ("cudnnm completions zsh > ~/.zfunc/_cudnnm", "zsh"),
        ],
    ),
    (
        "export",
        &[
            (
                "cudnnm export lmod ~/modulefiles",
                "one Lmod modulefile per release",
            ),
            (
                "cudnnm export dir ./cudnn 9.12",
                "one release as a plain folder, for containers",
            ),
        ],
    ),
    (
        "export lmod",
        &[(
            "cudnnm export lmod ~/modulefiles --cuda-module 'cuda/{major}.{minor}'",
            "modulefiles that load the site's CUDA module first",
        )],
    ),
    (
        "export tcl",
        &[(
            "cudnnm export tcl ~/modulefiles",
            "Environment Modules (Tcl) modulefiles",
        )],
    ),
    (
        "export spack",
        &[(
            "cudnnm export spack >> ~/.spack/packages.yaml",
            "each release as an external cudnn",
        )],
    ),
    (
        "export dir",
        &[(
            "cudnnm export dir ./cudnn 9.12 --prefix /opt/cudnn",
            "a folder plus cudnn.env naming /opt/cudnn",
        )],
    ),
    (
        "self",
        &[(
            "cudnnm self update",
            "replace this binary with the newest release",
        )],
    ),
];

/// `Examples:` and one indented line per example.
fn examples_text(examples: &[(&str, &str)]) -> String {
    let mut s = String::from("Examples:");
    for (line, what) in examples {
        s.push_str(&format!("\n  {}\n      {what}", line.trim_end()));
    }
    s
}

/// The exit-code list for the main help.
fn exit_codes_text() -> String {
    let mut s = String::from("Exit codes:");
    for (code, what) in EXIT_CODES {
        s.push_str(&format!("\n  {code:>3}  {what}"));
    }
    s
}

/// The clap command of [`Cli`] with examples on every subcommand and the
/// exit codes on the main help.
pub fn command() -> clap::Command {
    let mut cmd = Cli::command().after_help(format!(
        "{}\n\n{}",
        examples_text(&[
            (
                "cudnnm install 9.12 && cudnnm use 9.12",
                "install a release and deploy it into the toolkit"
            ),
            (
                "cudnnm pin 9.12 && cudnnm exec -- python3 app.py",
                "pin one for a project, run with it"
            ),
            ("cudnnm doctor", "what breaks cuDNN here"),
        ]),
        exit_codes_text()
    ));
    for (path, examples) in EXAMPLES {
        let text = examples_text(examples);
        let mut names = path.split(' ');
        let first = names.next().expect("a command name");
        match names.next() {
            None => cmd = cmd.mut_subcommand(first, |c| c.after_help(text)),
            Some(second) => {
                cmd =
                    cmd.mut_subcommand(first, |c| c.mut_subcommand(second, |c| c.after_help(text)))
            }
        }
    }
    cmd
}

#[cfg(test)]
mod tests {
    /// Every visible command, nested ones included, carries examples that
    /// run that command.
    #[test]
    fn every_command_has_examples_that_use_it() {
        fn walk(c: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for sub in c.get_subcommands().filter(|s| !s.is_hide_set()) {
                let p = format!("{path} {}", sub.get_name()).trim().to_string();
                // A group's examples cover its own subcommands (`manifest
                // refresh`, `self update`); only `export`'s have their own.
                let text = sub
                    .get_after_help()
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                let named = sub
                    .get_all_aliases()
                    .chain([sub.get_name()])
                    .any(|n| text.contains(&format!("cudnnm {}", p.replace(sub.get_name(), n))));
                if sub.get_name() != "help" && (!text.starts_with("Examples:") || !named) {
                    missing.push(p.clone());
                }
                if sub.get_name() == "export" {
                    walk(sub, &p, missing);
                }
            }
        }
        let mut missing = Vec::new();
        walk(&super::command(), "", &mut missing);
        assert!(missing.is_empty(), "commands without examples: {missing:?}");
    }

    /// No argument takes its value from the environment through clap: clap
    /// counts such a flag as given and prints it in usage lines (`Usage:
    /// cudnnm pin --home <DIR> <SPEC>` with `CUDNNM_HOME` set), so the code
    /// that uses each variable reads it itself.
    #[test]
    fn no_argument_is_read_from_the_environment_by_clap() {
        fn walk(c: &clap::Command, path: &str, found: &mut Vec<String>) {
            for a in c.get_arguments().filter(|a| a.get_env().is_some()) {
                found.push(format!("{path} --{}", a.get_id()));
            }
            for sub in c.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), found);
            }
        }
        let mut found = Vec::new();
        walk(&super::command(), "cudnnm", &mut found);
        assert!(found.is_empty(), "arguments with clap's env: {found:?}");
    }

    /// The main help's exit codes are README.md's table, code for code.
    #[test]
    fn the_exit_codes_are_the_readmes() {
        let readme = include_str!("../../README.md");
        let table = readme
            .split("## Exit codes")
            .nth(1)
            .expect("an exit-code section");
        let codes: Vec<u8> = table
            .lines()
            .skip_while(|l| !l.starts_with("| code"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                l.trim_matches('|')
                    .split('|')
                    .next()
                    .unwrap()
                    .trim()
                    .parse::<u8>()
                    .unwrap()
            })
            .collect();
        let ours: Vec<u8> = super::EXIT_CODES.iter().map(|(c, _)| *c).collect();
        assert_eq!(ours, codes);
        let kinds: Vec<u8> = [
            crate::error::Kind::Failure,
            crate::error::Kind::Usage,
            crate::error::Kind::NotFound,
            crate::error::Kind::Integrity,
            crate::error::Kind::Permission,
            crate::error::Kind::Network,
            crate::error::Kind::Unhealthy,
            crate::error::Kind::Conflict,
            crate::error::Kind::Interrupted,
        ]
        .iter()
        .map(|k| k.exit_code())
        .collect();
        assert_eq!(&ours[1..], &kinds[..]);
    }
}
