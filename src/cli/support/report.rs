//! Status lines and warnings several commands print: what a change moved
//! into a backup, backups pruned, what an interrupted import left, unknown
//! settings, a release built for another platform.

use crate::cli::Ctx;
use crate::deploy::NO_CUDNN;
use crate::store::Store;

use super::human_size;

/// A "held" label inside `cuDNN A → B`: `(none)` for a toolkit without cuDNN.
pub fn msg_label(label: &str) -> &str {
    if label == NO_CUDNN { "(none)" } else { label }
}

/// Names the files a change moved into backup `id` that look like cuDNN's
/// but that no cuDNN release ships (see [`crate::deploy::moved_not_from_a_release`]).
pub fn report_not_from_a_release(ctx: &Ctx, id: u64, rels: &[String]) {
    if !rels.is_empty() {
        ctx.status(format!(
            "also moved to backup {id}: {} (not part of any cuDNN release), kept until `cudnnm backups remove {id} --force` deletes them",
            rels.join(", ")
        ));
    }
}

/// Warns of each folder an interrupted import left in the store
/// (`store/.partial-*`), with its size and how to free it. Says nothing
/// while another cudnnm holds the home lock: the folder may be its import.
pub fn report_partials(ctx: &Ctx) {
    if ctx.home.busy() {
        return;
    }
    for p in Store::new(&ctx.home).partials() {
        ctx.warn(format!(
            "an interrupted install left '{}' ({}); the next `cudnnm install` removes it, or delete that folder",
            p.dir.display(),
            human_size(p.bytes)
        ));
    }
}

/// Warns of keys in `config.toml` that cudnnm does not know (a misspelt
/// `mdoe = "copy"` changes nothing), naming the file and the known keys.
/// Says nothing when the file is missing or cannot be read (the commands
/// that need it report that).
pub fn warn_unknown_settings(ctx: &Ctx) {
    let Ok(config) = ctx.home.config() else {
        return;
    };
    if config.unknown.is_empty() {
        return;
    }
    let keys: Vec<&str> = config.unknown.keys().map(String::as_str).collect();
    ctx.warn(format!(
        "'{}' sets {} that cudnnm does not know ({}), which change nothing; the settings are {}",
        ctx.home.config_file().display(),
        if keys.len() == 1 { "a key" } else { "keys" },
        keys.join(", "),
        crate::home::CONFIG_KEYS.join(", ")
    ));
}

/// Says which old backups were pruned.
pub fn report_pruned(ctx: &Ctx, pruned: &[u64]) {
    if !pruned.is_empty() {
        ctx.status(format!(
            "removed old backup{} {} (config keep_backups)",
            if pruned.len() == 1 { "" } else { "s" },
            pruned
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}

/// Warns when a release was built for another platform than this machine
/// (a Windows zip imported on Linux): its libraries cannot load here.
pub fn warn_foreign(ctx: &Ctx, release: &crate::store::Release) {
    if let Some(host) = crate::version::Platform::host()
        && release.platform() != host
    {
        ctx.warn(format!(
            "cuDNN {} is built for {}, not for this {} machine; its libraries will not load here",
            release.id(),
            release.platform(),
            host
        ));
    }
}
