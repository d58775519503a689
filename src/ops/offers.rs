//! What the catalog can install on this machine, and the `help:` words for
//! installing a release no store holds, by the one rule every install hint
//! follows ([`crate::catalog::offer::advise_on`]).

use super::Session;
use super::gpu::GpuGate;
use crate::catalog::offer::{self, Advice, Offer};
use crate::command::CommandLine;
use crate::version::Spec;

/// What the catalog (the user's `catalog.toml` over the embedded one, or
/// the embedded one when that cannot be read) can install on this machine:
/// the offers every install hint chooses from ([`offer::advise`]).
pub fn machine_offers(session: &Session<'_>) -> Vec<Offer> {
    offer::offers_for(&session.catalog_or_embedded(), session.env.platform())
}

/// The `help:` words for installing `spec`, which no store holds, by the
/// one rule ([`offer::advise_on`]), each command for this home and the
/// user's shell; with the command itself when the catalog has the release
/// and it runs on the GPUs in use. The GPUs are asked only when there is a
/// command to check: this is a failure's hint, never the path `env`,
/// `exec` and the shell hooks take. An installed release the hint names is
/// said as `how` takes it (`cudnnm default V` for `default`, `cudnnm pin V`
/// for `pin`; [`CommandLine::use_as`]).
pub fn install_advice(
    session: &Session<'_>,
    spec: &Spec,
    how: fn(String) -> CommandLine,
) -> (String, Option<String>) {
    let offers = machine_offers(session);
    // The one CUDA toolkit found, if one: the build for its CUDA, as
    // `install` picks it (with several, the spec's newest CUDA).
    let toolkits = crate::toolkit::discover(session.env);
    let toolkit = match toolkits.as_slice() {
        [t] => Some(&t.cuda),
        _ => None,
    };
    let mut advice = offer::advise(&offers, spec, toolkit);
    let gate;
    if matches!(advice, Advice::Install(_)) {
        gate = GpuGate::read(session);
        advice = gate.with_fit(|fit| offer::advise_on(&offers, spec, toolkit, fit));
    }
    let render = |c: CommandLine| session.printed(c.use_as(how));
    (advice.hint(&render), advice.command().map(render))
}
