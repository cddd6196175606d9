//! Arg-min/arg-max in OpenMP ports (`crate::argext` says why the rule is the sequential
//! loop's answer): a struct of the extremum, its iteration and its partners, combined by a
//! `declare reduction` in a block opened before the pragma; the body runs on copies of the
//! variables that start from their entry values (`__typeof__(x) best = x.v;`), inside
//! `do { ... } while (0)` so that a `continue` still reaches the offer after it, and the
//! variables take the combined values after the loop.
//!
//! ```c
//! { typedef struct { __typeof__(best) v; long long r; __typeof__(idx) p0; } ww_arg_best_t;
//! #pragma omp declare reduction(ww_argmin_best : ww_arg_best_t : omp_out = ... ) initializer(omp_priv = omp_orig)
//! ww_arg_best_t ww_arg_best = { best, -1, idx };
//! ww_arg_best_t ww_arg_best_0 = ww_arg_best;
//! #pragma omp target teams distribute parallel for ... reduction(ww_argmin_best : ww_arg_best) firstprivate(ww_arg_best_0)
//! for (i = 0; i < n; i++) { __typeof__(ww_arg_best_0.v) best = ww_arg_best_0.v; ... do {
//!     if (a[i] < best) { best = a[i]; idx = i; }
//! } while (0); if (...) { ww_arg_best.v = best; ww_arg_best.r = i - (0); ... } } best = ww_arg_best.v; idx = ww_arg_best.p0; }
//! ```
//!
//! The rewritten loop is still the sequential loop's C without OpenMP.

use super::counters::{text_edits, TextEdit};
use crate::argext::ArgExtremum;
use crate::counters::{body_and_iteration, prefix_token, suffix_token};
use crate::ctext::{code_tokens, tok_text};
use crate::plan::Ctx;
use advisor::model::{Induction, LoopReport};
use frontend::access_sites::LoopSite;
use frontend::unit::Unit;

/// What a port needs for its loop's arg-min/arg-max reductions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArgPort {
    /// Lines before the pragma: a block opened, the struct types, their `declare
    /// reduction`s and the reduction variables.
    pub preamble: String,
    /// `reduction(ww_argmin_best : ww_arg_best)` and `firstprivate(ww_arg_best_0)`.
    pub clauses: Vec<String>,
    pub edits: Vec<TextEdit>,
    pub notes: Vec<String>,
}

/// Plans the rewrite of the loop at `site` for `args`, merged with `replaced`, the
/// counters' rewrite of the same tokens (whose copies are then declared inside the
/// `do { } while (0)`, and which must put no statement after the loop: the caller refuses
/// that). The port's edits are the merged ones.
pub(crate) fn plan_args(
    ctx: &Ctx<'_>,
    unit: &Unit,
    site: &LoopSite,
    report: &LoopReport,
    induction: &Induction,
    args: &[ArgExtremum],
    replaced: &[(usize, usize, String)],
) -> Result<ArgPort, String> {
    let source = crate::plan::counter_text(ctx, site, report);
    let (open, iteration) = body_and_iteration(&source, induction)?;
    let stmt = source.stmt;
    let toks = code_tokens(stmt);
    let text = |k: usize| toks.get(k).map_or("", |t| tok_text(stmt, t));
    if toks.len() <= open {
        return Err("the loop has no body".into());
    }
    let rank = format!("(long long)({iteration})");
    let mut preamble = String::from("{\n");
    let (mut clauses, mut shadows, mut offers, mut finals, mut notes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for a in args {
        let t = &a.target;
        let (state, entry, ty, id) = (
            format!("ww_arg_{t}"),
            format!("ww_arg_{t}_0"),
            format!("ww_arg_{t}_t"),
            format!("ww_arg{}_{t}", a.op()),
        );
        let mut fields = vec![format!("__typeof__({t}) v;"), "long long r;".to_string()];
        let mut inits = vec![t.clone(), "-1".to_string()];
        shadows.push(format!("__typeof__({entry}.v) {t} = {entry}.v;"));
        let mut stores = vec![format!("{state}.v = {t};"), format!("{state}.r = {rank};")];
        finals.push(format!("{t} = {state}.v;"));
        for (k, p) in a.partners.iter().enumerate() {
            fields.push(format!("__typeof__({p}) p{k};"));
            inits.push(p.clone());
            shadows.push(format!("__typeof__({entry}.p{k}) {p} = {entry}.p{k};"));
            stores.push(format!("{state}.p{k} = {p};"));
            finals.push(format!("{p} = {state}.p{k};"));
        }
        preamble.push_str(&format!(
            "/* warpwise: the arg-{op} of `{t}` with `{partners}` (ties keep the earliest iteration) */\n\
             typedef struct {{ {fields} }} {ty};\n\
             #pragma omp declare reduction({id} : {ty} : omp_out = {better} ? omp_in : omp_out) initializer(omp_priv = omp_orig)\n\
             {ty} {state} = {{ {inits} }};\n\
             {ty} {entry} = {state};\n",
            op = a.op(),
            partners = a.partners.join("`, `"),
            fields = fields.join(" "),
            better = a.better("omp_in.v", "omp_in.r", "omp_out.v", "omp_out.r"),
            inits = inits.join(", "),
        ));
        offers.push(format!(
            "if {} {{ {} }}",
            a.better(t, &rank, &format!("{state}.v"), &format!("{state}.r")),
            stores.join(" ")
        ));
        clauses.push(format!("reduction({id} : {state})"));
        clauses.push(format!("firstprivate({entry})"));
        notes.push(format!(
            "`{t}` ({}) with `{}` is an arg-{op}: each iteration runs on copies that start from the values at the loop's entry and offers its result with its iteration number to `declare reduction({id})`, which keeps the {extremum} and, of equal ones, the earliest iteration; the variables take the result after the loop",
            a.op(),
            a.partners.join("`, `"),
            op = a.op(),
            extremum = if a.max { "largest value" } else { "smallest value" },
        ));
    }
    // `continue` leaves the `do { } while (0)` for the offer; a friendly loop has no
    // `break`, `return` or `goto` out of it.
    let mut replaced = replaced.to_vec();
    prefix_token(
        &mut replaced,
        open,
        &format!("{{ {} do {{ ", shadows.join(" ")),
        text(open),
    );
    let last = toks.len() - 1;
    suffix_token(
        &mut replaced,
        last,
        &format!(
            " }} while (0); {} }} {} }}",
            offers.join(" "),
            finals.join(" ")
        ),
        text(last),
    );
    replaced.sort_by_key(|(first, _, _)| *first);
    let edits = text_edits(ctx, unit, site, &replaced).map_err(|original| {
        format!("{original}: the port cannot wrap the loop's body for the arg-min/arg-max")
    })?;
    Ok(ArgPort {
        preamble,
        clauses,
        edits,
        notes,
    })
}
