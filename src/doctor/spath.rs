//! Paths inside a [`Snapshot`](super::Snapshot), as text with the rules of
//! the snapshot's OS rather than the host's.
//!
//! A snapshot taken on Windows holds `C:\CUDA\v11.2\bin`; on a Linux host
//! `std::path::Path` would treat the backslashes as ordinary characters. So
//! every check manipulates snapshot paths through these functions, which take
//! `win` (the snapshot's OS) and accept both separators on Windows, compare
//! case-insensitively there, and ignore trailing separators.

/// The separator the snapshot's OS writes: `\` on Windows, `/` elsewhere.
pub fn sep(win: bool) -> char {
    if win { '\\' } else { '/' }
}

fn is_sep(c: char, win: bool) -> bool {
    c == '/' || (win && c == '\\')
}

/// The comparison key of a path: separators unified, trailing separators and
/// `.` components dropped, lower case on Windows. Two paths name the same
/// folder when their keys are equal.
pub fn key(p: &str, win: bool) -> String {
    let mut out = String::with_capacity(p.len());
    let mut last_sep = false;
    for c in p.chars() {
        if is_sep(c, win) {
            if !last_sep {
                out.push('/');
            }
            last_sep = true;
        } else {
            out.push(if win { c.to_ascii_lowercase() } else { c });
            last_sep = false;
        }
    }
    // Drop `/./` components.
    while let Some(i) = out.find("/./") {
        out.replace_range(i..i + 2, "");
    }
    if out.ends_with("/.") && out.len() > 2 {
        out.truncate(out.len() - 2);
    }
    while out.len() > 1
        && out.ends_with('/')
        && !(win && out.len() == 3 && out.as_bytes()[1] == b':')
    {
        out.pop();
    }
    out
}

/// `p` with `.` and `..` components resolved by name (`/a/lib/../../b` →
/// `/b`), separators as written; what an `$ORIGIN/../..` search entry names.
/// A `..` above the root stays at the root.
pub fn normalize(p: &str, win: bool) -> String {
    let s = sep(win);
    let absolute = p.starts_with(|c| is_sep(c, win));
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split(|c| is_sep(c, win)) {
        match c {
            "" | "." => {}
            ".." => {
                // Keep a drive (`C:`) as the root.
                if parts.last().is_some_and(|l| !(win && l.ends_with(':'))) {
                    parts.pop();
                }
            }
            c => parts.push(c),
        }
    }
    let body = parts.join(&s.to_string());
    if absolute { format!("{s}{body}") } else { body }
}

/// True when `a` and `b` name the same path under the snapshot's rules.
pub fn same(a: &str, b: &str, win: bool) -> bool {
    key(a, win) == key(b, win)
}

/// `base` joined with `name` (which may hold several components); an
/// absolute `name` (a link's absolute target) is itself.
pub fn join(base: &str, name: &str, win: bool) -> String {
    let s = sep(win);
    let name = if win {
        name.replace('/', "\\")
    } else {
        name.to_string()
    };
    let absolute =
        name.starts_with(|c| is_sep(c, win)) || (win && name.as_bytes().get(1) == Some(&b':'));
    if base.is_empty() || absolute {
        return name;
    }
    if base.ends_with(|c| is_sep(c, win)) {
        format!("{base}{name}")
    } else {
        format!("{base}{s}{name}")
    }
}

/// The folder holding `p`, `None` for a root or a bare name.
pub fn parent(p: &str, win: bool) -> Option<String> {
    let t = p.trim_end_matches(|c| is_sep(c, win));
    let i = t.rfind(|c| is_sep(c, win))?;
    let head = &t[..i];
    if head.is_empty() {
        return Some(sep(win).to_string());
    }
    if win && head.len() == 2 && head.ends_with(':') {
        return Some(format!("{head}\\"));
    }
    Some(head.to_string())
}

/// The last component of `p` (`cudnn64_8.dll` of `C:\x\bin\cudnn64_8.dll`).
pub fn file_name(p: &str, win: bool) -> &str {
    let t = p.trim_end_matches(|c| is_sep(c, win));
    match t.rfind(|c| is_sep(c, win)) {
        Some(i) => &t[i + 1..],
        None => t,
    }
}

/// `child` relative to `ancestor` when `child` lies strictly inside it
/// (`bin\12.8` for `…\v9.7\bin\12.8` under `…\v9.7`), with `/` separators.
pub fn relative(child: &str, ancestor: &str, win: bool) -> Option<String> {
    let (c, a) = (key(child, win), key(ancestor, win));
    let rest = if a == "/" {
        c.strip_prefix('/')?
    } else {
        c.strip_prefix(&a)?.strip_prefix('/')?
    };
    if rest.is_empty() {
        None
    } else {
        // Return the original spelling of the remainder.
        let n = rest.len();
        let orig = child.trim_end_matches(|ch| is_sep(ch, win));
        Some(orig[orig.len().saturating_sub(n)..].replace('\\', "/"))
    }
}

/// True when `child` is `ancestor` or lies inside it.
pub fn is_within(child: &str, ancestor: &str, win: bool) -> bool {
    same(child, ancestor, win) || relative(child, ancestor, win).is_some()
}

/// Name comparison under the snapshot's rules (case-insensitive on Windows).
pub fn name_eq(a: &str, b: &str, win: bool) -> bool {
    if win {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// Expands `%VAR%` references (Windows `REG_EXPAND_SZ` values such as
/// `%CUDA_PATH%\bin`) with `lookup`; unknown variables stay as written.
pub fn expand_vars(p: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = p;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.find('%') {
            Some(j) if j > 0 => {
                let name = &after[..j];
                match lookup(name) {
                    Some(v) => out.push_str(&v),
                    None => {
                        out.push('%');
                        out.push_str(name);
                        out.push('%');
                    }
                }
                rest = &after[j + 1..];
            }
            _ => {
                out.push('%');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_paths_on_any_host() {
        let w = true;
        assert!(same(r"C:\CUDA\v11.2\bin\", "c:/cuda/V11.2/bin", w));
        assert!(!same("/a/B", "/a/b", false));
        assert_eq!(
            parent(r"C:\CUDA\v11.2\bin\cudnn64_8.dll", w).unwrap(),
            r"C:\CUDA\v11.2\bin"
        );
        assert_eq!(parent(r"C:\x", w).unwrap(), r"C:\");
        assert_eq!(parent("/x", false).unwrap(), "/");
        assert_eq!(file_name(r"C:\CUDA\bin\cudnn64_8.dll", w), "cudnn64_8.dll");
        assert_eq!(join(r"C:\CUDA", "lib/x64", w), r"C:\CUDA\lib\x64");
        assert_eq!(
            join("/usr/local/cuda", "lib64", false),
            "/usr/local/cuda/lib64"
        );
        // A link's absolute target stands on its own.
        assert_eq!(
            join("/usr/local/cuda/lib64", "/opt/x.so", false),
            "/opt/x.so"
        );
        assert_eq!(join(r"C:\CUDA\bin", r"D:\x.dll", w), r"D:\x.dll");
        assert_eq!(
            relative(r"C:\NVIDIA\CUDNN\v9.7\bin\12.8", r"c:\nvidia\cudnn\v9.7", w).unwrap(),
            "bin/12.8"
        );
        assert!(relative("/a/b", "/a/b", false).is_none());
        assert!(relative("/a/bc", "/a/b", false).is_none());
        assert!(is_within("/a/b/c", "/a", false));
        assert!(is_within("/a", "/", false));
        assert_eq!(key("C:\\", w), "c:/");
        assert_eq!(key("/usr/./lib/", false), "/usr/lib");
    }

    #[test]
    fn dot_dot_is_resolved_by_name() {
        assert_eq!(
            normalize("/v/site/torch/lib/../../nvidia/cudnn/lib", false),
            "/v/site/nvidia/cudnn/lib"
        );
        assert_eq!(normalize("/../x/./y/", false), "/x/y");
        assert_eq!(normalize(r"C:\a\..\..\b", true), r"C:\b");
    }

    #[test]
    fn expands_percent_variables() {
        let f = |n: &str| (n == "CUDA_PATH").then(|| r"C:\CUDA\v11.2".to_string());
        assert_eq!(expand_vars(r"%CUDA_PATH%\bin", f), r"C:\CUDA\v11.2\bin");
        assert_eq!(expand_vars(r"%NOPE%\bin;50%", f), r"%NOPE%\bin;50%");
    }
}
