//! Progress bars for the long steps (`use --mode copy`, `verify`, backup
//! copies): drawn on a terminal only — a real pseudo-terminal from
//! util-linux's `script` — never into a pipe, nor with `--json` or `-q`.
#![cfg(unix)]

use crate::common::{self, Sandbox, skip};
use crate::deploy_support::*;

/// `cudnnm ARGS` on a pseudo-terminal (`script -qec`); what the terminal
/// showed (stdout and stderr), and the exit code. `None` without `script`.
fn on_terminal(sb: &Sandbox, args: &[&str]) -> Option<(String, i32)> {
    let script = skip::need_program("script", "bsdutils")?;
    let line = std::iter::once(common::bin().display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let out = sb
        .wrapped(&script.display().to_string())
        .args(["-qec", &line, "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .unwrap();
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    ))
}

fn world() -> (Sandbox, String) {
    let sb = Sandbox::new();
    let tk = linux_toolkit(&sb.root().join("cuda-12.4"), "12.4.1");
    big_linux_release(&sb.home(), "9.1.0.70", 8);
    big_linux_release(&sb.home(), "9.12.0.46", 8);
    (sb, tk.display().to_string())
}

fn no_bar(text: &str) {
    assert!(
        !text.contains("copying cuDNN files")
            && !text.contains("re-hashing")
            && !text.contains('\u{1b}'),
        "{text:?}"
    );
}

#[test]
fn use_copy_and_verify_draw_a_bar_on_a_terminal_and_nothing_into_a_pipe() {
    let (sb, t) = world();
    let piped = sb
        .run(["use", "9.12", "--cuda-root", &t, "--mode", "copy"])
        .ok();
    no_bar(&piped.stderr());
    no_bar(&sb.run(["verify", "--no-load"]).ok().stderr());
    let Some((shown, code)) =
        on_terminal(&sb, &["use", "9.1", "--cuda-root", &t, "--mode", "copy"])
    else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    // The label is cut to fit the line (80 columns at most).
    assert!(shown.contains("copying cuDNN files into '"), "{shown:?}");
    assert!(shown.contains("cuDNN 9.12.0.46 → 9.1.0.70"), "{shown:?}");
    let (shown, code) = on_terminal(&sb, &["verify", "--no-load"]).unwrap();
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("re-hashing the store and the "), "{shown:?}");
    // Never with --json or -q, terminal or not.
    for quiet in [&["--json"][..], &["-q"][..]] {
        let mut args = vec!["use", "9.12", "--cuda-root", &t, "--mode", "copy"];
        args.extend_from_slice(quiet);
        let (shown, code) = on_terminal(&sb, &args).unwrap();
        assert_eq!(code, 0, "{shown}");
        assert!(!shown.contains("copying cuDNN files"), "{shown:?}");
        let (shown, _) = on_terminal(&sb, &[quiet[0], "verify", "--no-load"]).unwrap();
        assert!(!shown.contains("re-hashing"), "{shown:?}");
    }
}

/// `export dir` draws a bar on a terminal, no wider than 80 columns even
/// on a wide one; into a pipe, a short export says nothing more than its
/// result.
#[test]
fn export_dir_draws_a_bar_no_wider_than_80_columns() {
    let (sb, _) = world();
    let dest = sb.root().join("exported");
    let d = dest.display().to_string();
    let piped = sb.run(["export", "dir", &d, "9.12"]).ok();
    assert!(
        !piped.stderr().contains("exporting cuDNN"),
        "{}",
        piped.describe()
    );
    std::fs::remove_dir_all(&dest).unwrap();
    let Some((shown, code)) = on_terminal_cols(&sb, &["export", "dir", &d, "9.12"], 200) else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("exporting cuDNN 9.12.0.46_cuda12"),
        "{shown:?}"
    );
    // Every drawn line (between carriage returns and escapes) fits 80 columns.
    let widest = shown
        .split(['\r', '\n', '\u{1b}'])
        .map(|l| l.strip_prefix("[2K").unwrap_or(l))
        .filter(|l| l.contains("exporting cuDNN"))
        .map(|l| l.chars().count())
        .max()
        .unwrap();
    assert!(widest <= 80, "{widest}: {shown:?}");
}

/// [`on_terminal`] on a terminal `cols` columns wide.
fn on_terminal_cols(sb: &Sandbox, args: &[&str], cols: u16) -> Option<(String, i32)> {
    let script = skip::need_program("script", "bsdutils")?;
    let line = std::iter::once(common::bin().display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let out = sb
        .wrapped(&script.display().to_string())
        .args(["-qec", &format!("stty cols {cols}; {line}"), "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .unwrap();
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    ))
}
