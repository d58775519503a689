//! Text, `--json` and `--report` output, all from one [`Outcome`] (the
//! summary of the machine plus the list of findings), so the three never
//! drift apart.

use std::fmt::Write as _;

use serde::Serialize;

use super::checks::processes::{FrameworkLoad, framework_loads};
use super::checks::{ActiveCopy, active_copies};
use super::finding::{Finding, Severity};
use super::snapshot::Snapshot;

/// The environment at a glance: what `--report` calls "the environment after setup".
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Summary {
    /// `Ubuntu 22.04.4 LTS (linux x86_64, 64-bit)`.
    pub os: String,
    /// `CUDA 12.4.1 at /usr/local/cuda-12.4 (found by CUDA_PATH)`, one per toolkit.
    pub toolkits: Vec<String>,
    /// The driver version, when found.
    pub driver: Option<String>,
    /// `NVIDIA GeForce RTX 3080 (compute capability 8.6)`, one per GPU.
    pub gpus: Vec<String>,
    /// `nvcc` on PATH and its CUDA release.
    pub nvcc: Option<String>,
    /// The cuDNN each program would load, per major.
    pub active_cudnn: Vec<ActiveCopy>,
    /// `torch 2.4.1+cu121 (…/site-packages)`, one per framework or cuDNN wheel.
    pub frameworks: Vec<String>,
    /// The cuDNN files each framework's process maps, played through as
    /// the loader does it (Linux).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub framework_loads: Vec<FrameworkLoad>,
    /// The pinned release and where the pin is.
    pub pin: Option<String>,
    /// The program watched (`doctor -- CMD`, `--pid`): what ran, how it
    /// ended, and every cuDNN file it mapped against the prediction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessSummary>,
}

/// The program `doctor -- CMD` ran (or `--pid` watched) in the summary.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ProcessSummary {
    /// The command (`python3 -c '…'`) or `pid 1234`.
    pub command: String,
    /// How it ended (`exit 0`), or why it could not be watched.
    pub state: String,
    /// Every cuDNN file it mapped, with its version and the prediction.
    pub mapped: Vec<super::checks::watched::Compared>,
}

/// What `doctor` found: the summary and the findings, errors first.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Outcome {
    /// No errors (warnings and notes allowed).
    pub healthy: bool,
    /// Number of errors.
    pub errors: usize,
    /// Number of warnings.
    pub warnings: usize,
    /// Number of notes.
    pub infos: usize,
    /// The environment.
    pub summary: Summary,
    /// The findings.
    pub findings: Vec<Finding>,
    /// Diagnosed from a snapshot: the fixes are for the machine it was
    /// taken on, not for this one's `doctor --fix`.
    #[serde(skip)]
    pub fixes_elsewhere: bool,
}

impl Outcome {
    /// The outcome for `findings` on the machine in `s`.
    pub fn new(s: &Snapshot, findings: Vec<Finding>) -> Outcome {
        let count = |sev| findings.iter().filter(|f| f.severity == sev).count();
        let (errors, warnings, infos) = (
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info),
        );
        Outcome {
            healthy: errors == 0,
            errors,
            warnings,
            infos,
            summary: summarize(s),
            findings,
            fixes_elsewhere: false,
        }
    }
}

/// The summary of a snapshot.
pub fn summarize(s: &Snapshot) -> Summary {
    let os = format!(
        "{} ({} {}, {}-bit{})",
        s.os.name.as_deref().unwrap_or(&s.os.family),
        s.os.family,
        s.os.arch,
        s.os.bits,
        s.os.version
            .as_deref()
            .map(|v| format!(", {v}"))
            .unwrap_or_default()
    );
    let toolkits = s
        .toolkits
        .iter()
        .map(|t| {
            format!(
                "CUDA {} at {} (found by {})",
                t.cuda
                    .as_ref()
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "?".into()),
                t.root,
                t.found_by
            )
        })
        .collect();
    let driver = s
        .driver
        .as_ref()
        .and_then(|d| d.version.as_ref())
        .map(|v| v.to_string());
    let mut gpus: Vec<String> = s
        .driver
        .iter()
        .flat_map(|d| &d.gpus)
        .map(|g| {
            let name = match g.index {
                Some(i) => format!("GPU {i}: {}", g.name),
                None => g.name.clone(),
            };
            let hidden = if g.hidden {
                ", not used: CUDA_VISIBLE_DEVICES hides it"
            } else {
                ""
            };
            match &g.compute_capability {
                Some(c) => format!("{name} (compute capability {c}{hidden})"),
                None if g.hidden => format!("{name} ({})", &hidden[2..]),
                None => name,
            }
        })
        .collect();
    if let Some(note) = device_order_note(s) {
        gpus.push(note);
    }
    let nvcc = s.nvcc.as_ref().map(|n| match &n.release {
        Some(r) => format!("{} (CUDA {r})", n.path),
        None => n.path.clone(),
    });
    let frameworks = s
        .frameworks
        .iter()
        .map(|f| format!("{} {} ({})", f.name, f.version, f.location))
        .collect();
    let pin = s.pin.as_ref().map(|p| format!("{} ({})", p.spec, p.source));
    Summary {
        os,
        toolkits,
        driver,
        gpus,
        nvcc,
        active_cudnn: active_copies(s),
        frameworks,
        framework_loads: framework_loads(s),
        pin,
        process: process_summary(s),
    }
}

/// The watched program's part of the summary.
fn process_summary(s: &Snapshot) -> Option<ProcessSummary> {
    let p = s.process.as_ref()?;
    let t = super::Tables::default();
    let cx = super::checks::Cx::new(s, &t);
    let state = match (&p.error, p.exit, p.pid) {
        (Some(e), _, _) => e.clone(),
        (None, Some(c), _) => format!("exit {c}"),
        (None, None, Some(_)) => "running".into(),
        (None, None, None) => "ended by a signal".into(),
    };
    Some(ProcessSummary {
        command: p.command.clone(),
        state,
        mapped: super::checks::watched::compare(&cx),
    })
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The environment block of the text output.
pub fn summary_text(sm: &Summary) -> String {
    let mut o = String::new();
    let mut row = |k: &str, v: &str| {
        let _ = writeln!(o, "  {k:<11}{v}");
    };
    row("system", &sm.os);
    if sm.toolkits.is_empty() {
        row("toolkits", "none found");
    }
    for t in &sm.toolkits {
        row("toolkit", t);
    }
    row(
        "driver",
        sm.driver.as_deref().unwrap_or("not found (nvidia-smi)"),
    );
    for g in &sm.gpus {
        row("gpu", g);
    }
    row("nvcc", sm.nvcc.as_deref().unwrap_or("not on PATH"));
    if sm.active_cudnn.is_empty() {
        row("cuDNN", "none reachable by the loader");
    }
    for a in &sm.active_cudnn {
        let v = match (&a.version, &a.version_source) {
            (Some(v), Some(src)) => format!("{v} ({src})"),
            (Some(v), None) => v.clone(),
            _ => format!("{} (version unknown)", a.major),
        };
        // A copy the snapshot has no record of (an ld.so cache entry in a
        // folder not examined) has no origin to name.
        let how = if a.origin.is_empty() {
            format!("via {}", a.via)
        } else {
            format!("{}, via {}", a.origin, a.via)
        };
        row("cuDNN", &format!("{v} — {} ({how})", a.path));
    }
    for f in &sm.frameworks {
        row("python", f);
    }
    for l in &sm.framework_loads {
        let files: Vec<String> = l
            .files
            .iter()
            .map(|c| {
                let v = c.version.as_deref().unwrap_or("version unknown");
                format!("{} ({v}, via {})", c.path, c.via)
            })
            .collect();
        row(
            "loads",
            &format!("{} maps {}", l.framework, files.join(", ")),
        );
    }
    if let Some(p) = &sm.pin {
        row("pin", p);
    }
    if let Some(p) = &sm.process {
        row("program", &format!("{} ({})", p.command, p.state));
        if p.mapped.is_empty() && !p.state.starts_with("could not") {
            row("mapped", "no cuDNN file");
        }
        for m in &p.mapped {
            let v = m.version.as_deref().unwrap_or("version unknown");
            let pred = match (&m.predicted, m.agrees) {
                (_, true) => "as predicted".to_string(),
                (Some(p), false) => format!("doctor predicted {p}"),
                (None, false) => "not predicted".to_string(),
            };
            row("mapped", &format!("{} — cuDNN {v}; {pred}", m.path));
        }
    }
    o
}

/// One finding as text: `error[id]: title`, then seen / why / fix / commands.
pub fn finding_text(f: &Finding) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}[{}]: {}", f.severity, f.id, f.title);
    for s in &f.seen {
        let _ = writeln!(o, "  seen: {s}");
    }
    if !f.why.is_empty() {
        let _ = writeln!(o, "  why:  {}", f.why);
    }
    if let Some(fix) = &f.fix {
        let _ = writeln!(o, "  fix:  {fix}");
    }
    for c in &f.commands {
        let _ = writeln!(o, "        $ {c}");
    }
    if f.auto_fix.is_some() {
        let _ = writeln!(o, "        (`cudnnm doctor --fix` can do this)");
    } else if let Some(why) = &f.held_back {
        let _ = writeln!(
            o,
            "        (`cudnnm doctor --fix` leaves this to you: {why})"
        );
    }
    o
}

/// The whole text output of `doctor`.
pub fn text(out: &Outcome) -> String {
    let mut o = String::new();
    o.push_str(&summary_text(&out.summary));
    o.push('\n');
    for f in &out.findings {
        o.push_str(&finding_text(f));
        o.push('\n');
    }
    // Distinct fixes: two findings with the same fix are one fix.
    let mut fixes: Vec<&super::AutoFix> = Vec::new();
    for a in out.findings.iter().filter_map(|f| f.auto_fix.as_ref()) {
        if !fixes.contains(&a) {
            fixes.push(a);
        }
    }
    let fixable = fixes.len();
    if out.findings.is_empty() {
        o.push_str("No problems found.\n");
    } else {
        let _ = writeln!(
            o,
            "{}, {}, {}.",
            plural(out.errors, "error", "errors"),
            plural(out.warnings, "warning", "warnings"),
            plural(out.infos, "note", "notes")
        );
    }
    if fixable > 0 {
        let _ = writeln!(
            o,
            "{} can be applied with `cudnnm doctor --fix`{}.",
            plural(fixable, "fix", "fixes"),
            if out.fixes_elsewhere {
                " on the machine the snapshot was taken on"
            } else {
                ""
            }
        );
    }
    o
}

/// The `--report FILE.json` record: the outcome plus the full snapshot.
#[derive(Serialize)]
pub struct Report<'a> {
    /// What this is.
    pub report: &'static str,
    /// The outcome.
    #[serde(flatten)]
    pub outcome: &'a Outcome,
    /// Everything gathered (re-diagnose it with `cudnnm doctor --snapshot FILE`).
    pub snapshot: &'a Snapshot,
}

/// The `--report FILE` text record (any extension but `.json`): the text
/// output, then the loader paths and every cuDNN file found.
pub fn report_text(out: &Outcome, s: &Snapshot) -> String {
    let mut o = format!(
        "cudnnm doctor report — {} (cudnnm {})\n\n",
        s.taken_at, s.cudnnm_version
    );
    o.push_str(&text(out));
    let _ = writeln!(o, "\nPATH:");
    for p in &s.path {
        let _ = writeln!(o, "  {p}");
    }
    if !s.windows() {
        let _ = writeln!(o, "LD_LIBRARY_PATH:");
        for p in &s.ld_library_path {
            let _ = writeln!(o, "  {p}");
        }
    }
    let _ = writeln!(o, "Environment:");
    for (k, v) in &s.env {
        let _ = writeln!(o, "  {k}={v}");
    }
    let _ = writeln!(o, "cuDNN files:");
    for f in &s.files {
        let mut line = format!("  {}", f.path);
        if let Some(t) = &f.link_target {
            let _ = write!(line, " -> {t}");
        }
        if let Some(v) = f
            .library_version
            .as_ref()
            .or(f.header_version.as_ref())
            .or(f.file_version.as_ref())
        {
            let _ = write!(line, " [{v}]");
        }
        let _ = write!(line, " ({})", f.origin.label());
        let _ = writeln!(o, "{line}");
    }
    if let Some(d) = &s.driver {
        let _ = writeln!(o, "nvidia-smi:\n{}", d.output.trim_end());
    }
    if let Some(n) = s.nvcc.as_ref().and_then(|n| n.output.as_deref()) {
        let _ = writeln!(o, "nvcc --version:\n{}", n.trim_end());
    }
    o
}

/// When `CUDA_VISIBLE_DEVICES` names GPUs by index and hides some, while
/// `CUDA_DEVICE_ORDER` is not `PCI_BUS_ID`: its indices count in CUDA's
/// order (fastest first), not nvidia-smi's PCI-bus order the list shows, so
/// "GPU 1" there may be another GPU than nvidia-smi's GPU 1 (CUDA C++
/// Programming Guide, "CUDA Environment Variables").
fn device_order_note(s: &Snapshot) -> Option<String> {
    let gpus = &s.driver.as_ref()?.gpus;
    let visible = s.env.get("CUDA_VISIBLE_DEVICES")?;
    let by_index = visible
        .split(',')
        .any(|e| e.trim().chars().next().is_some_and(|c| c.is_ascii_digit()));
    let pci = s
        .env
        .get("CUDA_DEVICE_ORDER")
        .is_some_and(|o| o.trim().eq_ignore_ascii_case("PCI_BUS_ID"));
    (gpus.len() > 1 && by_index && !pci && gpus.iter().any(|g| g.hidden)).then(|| {
        format!(
            "CUDA_VISIBLE_DEVICES={visible} counts GPUs in CUDA's order, fastest first, not the PCI-bus order of the indices above; set CUDA_DEVICE_ORDER=PCI_BUS_ID to make them the same"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::checks::testkit::Kit;
    use super::*;

    #[test]
    fn text_and_json_come_from_the_same_findings() {
        let mut k = Kit::healthy_linux();
        k.s.ld_library_path.clear();
        let out = Outcome::new(&k.s, k.run());
        assert!(!out.healthy);
        let t = text(&out);
        let j = serde_json::to_value(&out).unwrap();
        for f in j["findings"].as_array().unwrap() {
            let id = f["id"].as_str().unwrap();
            assert!(
                t.contains(&format!("[{id}]")),
                "{id} missing from text:\n{t}"
            );
        }
        assert_eq!(j["errors"], out.errors);
        assert!(t.contains("1 error"), "{t}");
        assert!(
            t.contains("  toolkit    CUDA 12.4.1 at /usr/local/cuda-12.4"),
            "{t}"
        );
    }

    #[test]
    fn a_copy_without_origin_or_full_version_reads_plainly() {
        // An ld.so cache entry in a folder doctor did not list: no origin,
        // the major from its name only. No "(, via …)", no nested brackets.
        let mut k = Kit::linux();
        k.s.ld_cache.push(crate::doctor::snapshot::LdCacheEntry {
            name: "libcudnn.so.9".into(),
            path: "/opt/x/libcudnn.so.9".into(),
            gone: false,
        });
        k.file("/opt/y/libcudnn.so.9");
        let t = summary_text(&summarize(&k.s));
        assert!(
            t.contains("cuDNN      9 (version unknown) — /opt/x/libcudnn.so.9 (via ld.so cache)"),
            "{t}"
        );
        assert!(!t.contains("(, "), "{t}");
        let f = k.file("/opt/y/libcudnn.so.9").clone();
        let known = k.s.version_of(&f).unwrap();
        assert_eq!(known.source, "major from the file name");
    }

    #[test]
    fn healthy_text_says_so_and_names_the_active_cudnn() {
        let k = Kit::healthy_linux();
        let out = Outcome::new(&k.s, k.run());
        let t = text(&out);
        assert!(t.contains("No problems found."), "{t}");
        assert!(
            t.contains("9.1.0 (loaded library) — /usr/local/cuda-12.4/lib64/libcudnn.so.9"),
            "{t}"
        );
        let r = report_text(&out, &k.s);
        assert!(
            r.contains("LD_LIBRARY_PATH:\n  /usr/local/cuda-12.4/lib64"),
            "{r}"
        );
    }
}
