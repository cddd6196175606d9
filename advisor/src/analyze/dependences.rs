//! A loop's carried dependences (thesis §4.1), phase by phase: the pairs of memory accesses
//! the tests find, the reductions among them, a witness for each pair left and its finding;
//! and the scalars carried from one iteration to the next that are not reductions.

use super::{FunctionContext, LoopFacts};
use crate::access::{collect_accesses, MemAccess};
use crate::assumption::Assumption;
use crate::dependence::{carried_dependences, DependenceKind, Outcome, PairResult};
use crate::model::{Access, DependencePair, PairKind, ReductionKind};
use crate::reductions::Settled;
use crate::rules::{self, ww111_undecided_dependence as undecided, Finding};
use crate::space::Space;
use crate::witness::{Built, Missing};
use analyses::symbols::SymbolOrigin;
use frontend::ir::{InstKind, Span, Value};
use frontend::loops::LoopId;
use std::collections::{HashMap, HashSet};
use symbolic::Var;

impl FunctionContext<'_> {
    /// `accesses` with the symbols the program holds at one integer wherever loop `id`
    /// starts replaced by it: `dim` under `if (coupled && dim == 3)` (code_saturne's
    /// `b[ifac*dim*dim + 4]`), a local set to a constant before the loop. The range
    /// analysis gives the value at the loop's header; only symbols defined outside the
    /// loop and the same in all its iterations are pinned, so every iteration sees that
    /// value. The tests then compare `72*ifac + 32` with `72*ifac` rather than offsets
    /// whose difference `dim*dim*d` has no bound.
    pub(super) fn pin_symbols<'x>(
        &self,
        id: LoopId,
        accesses: &'x [MemAccess],
        variant: &HashSet<Var>,
    ) -> std::borrow::Cow<'x, [MemAccess]> {
        let l = self.forest.loop_(id);
        let mut mentioned: HashSet<&Var> = HashSet::new();
        let mut vars = Vec::new();
        for a in accesses {
            for (_, e) in &a.alternatives {
                vars.clear();
                vars.extend(e.vars());
                for v in &vars {
                    if !mentioned.contains(v) {
                        if let Some(symbol) = self.rec.symbols.info(v) {
                            mentioned.insert(&symbol.var);
                        }
                    }
                }
            }
        }
        let mut pins: HashMap<Var, symbolic::Expr> = HashMap::new();
        for var in mentioned {
            if variant.contains(var) || self.rec.symbols.is_pointer(var) {
                continue;
            }
            let Some(value) = self.rec.symbols.value_of(var) else {
                continue;
            };
            if l.contains(self.func.inst(value).block) {
                continue;
            }
            if let Some(c) = self.ranges.integer_at(l.header, value) {
                pins.insert(var.clone(), symbolic::Expr::integer(c));
            }
        }
        if pins.is_empty() {
            return std::borrow::Cow::Borrowed(accesses);
        }
        let pinned = accesses
            .iter()
            .map(|a| {
                let mut a = a.clone();
                let extents = a.extents.iter_mut().map(|(e, _)| e);
                for e in a.alternatives.iter_mut().map(|(_, e)| e).chain(extents) {
                    if let Ok(p) = e.substitute(&pins) {
                        *e = p;
                    }
                }
                a
            })
            .collect();
        std::borrow::Cow::Owned(pinned)
    }

    /// The updates callees make of globals (`callsites::CallUpdate`), located among the
    /// loop's accesses: the call's one load and one store of the global, at one offset that
    /// is the same in every iteration. A call whose accesses of it are otherwise (merged
    /// past the callee-access limit, privatized) has none.
    fn call_updates(
        &self,
        calls: &[crate::callsites::CallUpdate],
        accesses: &[MemAccess],
    ) -> Vec<crate::reductions::Located> {
        let mut out = Vec::new();
        for c in calls {
            let mine: Vec<usize> = accesses
                .iter()
                .enumerate()
                .filter(|(_, a)| {
                    a.inst == c.call
                        && a.callee.is_some()
                        && a.alternatives
                            .iter()
                            .any(|(b, _)| b.as_ref() == Some(&c.base))
                })
                .map(|(k, _)| k)
                .collect();
            let fixed = |k: &usize| match accesses[*k].alternatives.as_slice() {
                [(Some(b), offset)] => b == &c.base && offset.as_integer().is_some(),
                _ => false,
            };
            let loads = mine.iter().filter(|k| !accesses[**k].is_store).count();
            let stores = mine.len() - loads;
            let same_offset = mine
                .windows(2)
                .all(|w| accesses[w[0]].alternatives == accesses[w[1]].alternatives);
            if loads != 1 || stores != 1 || !mine.iter().all(fixed) || !same_offset {
                continue;
            }
            let (load, store) = if accesses[mine[0]].is_store {
                (mine[1], mine[0])
            } else {
                (mine[0], mine[1])
            };
            out.push(crate::reductions::Located {
                update: crate::reductions::MemoryUpdate {
                    load: c.call,
                    twins: Vec::new(),
                    store: c.call,
                    op: c.op,
                    updates: vec![c.call],
                },
                accesses: vec![load, store],
                invariant: true,
            });
        }
        out
    }

    /// The memory dependences loop `id` carries, phase by phase: the pairs the tests find
    /// (less those `restrict` promises apart), the reductions among them, a witness for
    /// each remaining pair, and one finding per pair of instructions and array.
    pub(super) fn memory_dependences(
        &self,
        id: LoopId,
        accesses: &[MemAccess],
        calls: &[crate::callsites::CallUpdate],
        space: &Space,
        variant: &HashSet<Var>,
        facts: &mut LoopFacts,
    ) {
        let results = self.tested_pairs(id, accesses, space, variant, facts);
        let settled = self.memory_reductions(id, accesses, calls, &results, facts);
        let pairs = CarriedPairs {
            cx: self,
            id,
            accesses,
            space,
            variant,
            witness_cx: self.witness_context(),
            unranged: crate::space::unranged_inner_loops(self.forest, id, self.rec),
        };
        let decided = pairs.witnessed(results, &settled, &facts.assumptions);
        // A pair the budget left untested and nothing else decided: the loop says so.
        if decided.iter().any(|(r, _)| {
            matches!(&r.outcome, Outcome::Unknown { why, .. } if why == crate::budget::UNTESTED)
        }) {
            facts.assumptions.push(self.budget.caveat().into());
        }
        let mut seen = HashSet::new();
        for (r, witness) in decided {
            let (first, second) = (&accesses[r.first], &accesses[r.second]);
            let array = first
                .base()
                .or(second.base())
                .map(|v| v.name().to_string())
                .unwrap_or_else(|| "memory".into());
            // One finding per pair of instructions and array: accesses made inside a called
            // function are the call's instruction, and two calls may conflict on several
            // arrays (`fan2(M, A, B, ..)` on `A` and on `B`), each a pair to settle.
            let key = (
                first.inst.min(second.inst),
                first.inst.max(second.inst),
                array.clone(),
            );
            if !seen.insert(key) {
                continue;
            }
            pairs.report(r, witness, array, facts);
        }
    }

    /// The pairs of `accesses` whose dependence loop `id` may carry, less those a
    /// `restrict` pointer promises apart (the promise joins the assumptions).
    fn tested_pairs(
        &self,
        id: LoopId,
        accesses: &[MemAccess],
        space: &Space,
        variant: &HashSet<Var>,
        facts: &mut LoopFacts,
    ) -> Vec<PairResult> {
        let mut results = carried_dependences(
            accesses,
            space,
            id,
            variant,
            self.quotients(),
            &mut facts.assumptions,
            &self.budget,
        );
        results.retain(|r| {
            let promise = self.restrict_apart(id, &accesses[r.first], &accesses[r.second]);
            if let Some(promise) = &promise {
                let promise = Assumption::plain(promise.clone());
                if !facts.assumptions.contains(&promise) {
                    facts.assumptions.push(promise);
                }
            }
            promise.is_none()
        });
        results
    }

    /// Read-modify-writes whose only carried dependence is on themselves are reductions:
    /// each joins `facts` as a note. Returns them, so that their pairs make no finding.
    fn memory_reductions(
        &self,
        id: LoopId,
        accesses: &[MemAccess],
        calls: &[crate::callsites::CallUpdate],
        results: &[PairResult],
        facts: &mut LoopFacts,
    ) -> Vec<Settled> {
        let program = &self.unit.lowered.program;
        let updates = crate::reductions::memory_updates(
            program,
            self.func,
            self.forest,
            id,
            &self.users,
            self.order(),
        );
        let located = self.call_updates(calls, accesses);
        let invariants = self.invariants(id);
        let settled = crate::reductions::settle(&updates, &located, accesses, results, &|addr| {
            invariants.is_invariant(addr)
        });
        for m in &settled {
            let (load, store) = (&accesses[m.accesses[0]], &accesses[m.accesses[1]]);
            let through_call = calls.iter().find(|c| {
                c.call == store.inst && store.callee.is_some() && store.base() == Some(&c.base)
            });
            let target = match (m.kind, store.base(), through_call) {
                (_, _, Some(c)) => c.name.clone(),
                (ReductionKind::Histogram, Some(base), _) => base.name().to_string(),
                _ => crate::reductions::lvalue(&self.unit.snippet(store.span)),
            };
            let mut spans: Vec<Span> = m
                .update
                .updates
                .iter()
                .map(|u| self.func.inst(*u).origin.span)
                .collect();
            spans.extend([load.span, store.span]);
            let described = crate::reductions::Describe {
                kind: m.kind,
                target,
                index: Vec::new(),
                op: m.update.op,
                ty: load.ty,
                ties: None,
                updates: spans,
                types: &program.types,
                shared: m.shared,
            };
            facts.note_reduction(described.note(&|s| self.line(s)));
            if load.conditional || store.conditional {
                facts.conditional_reductions += 1;
            }
        }
        settled
    }

    /// A pair whose dependence a profile must settle: its finding (WW111) and the pair
    /// under `needs_evidence`.
    fn needs_evidence(
        &self,
        finding: Finding,
        kind: PairKind,
        array: &str,
        a: Access,
        b: Access,
        facts: &mut LoopFacts,
    ) {
        facts.add(finding);
        facts.needs_evidence.push(DependencePair {
            kind,
            array: array.to_string(),
            first: a,
            second: b,
            distance: None,
        });
    }

    fn witness_context(&self) -> crate::witness::Context<'_> {
        crate::witness::Context {
            unit: self.unit,
            func: self.func,
            forest: self.forest,
            rec: self.rec,
            ranges: self.ranges,
            cache: Default::default(),
            searches: Default::default(),
        }
    }

    /// A scalar carried between iterations that is not a reduction: WW101 with a witness
    /// (iteration `k` writes it, `k + 1` reads it), else WW111.
    pub(super) fn scalar_dependence(
        &self,
        id: LoopId,
        phi: Value,
        back: &[Value],
        name: &str,
        update_lines: Vec<u32>,
        facts: &mut LoopFacts,
    ) {
        let space = self.space(id, true);
        let accesses = collect_accesses(
            self.func,
            self.forest,
            id,
            self.rec,
            &self.unit.lowered.program.types,
        );
        let built = match space {
            Ok(space) => {
                let mut assumptions = facts.assumptions.clone();
                assumptions.extend(space.assumptions.iter().cloned());
                let space = self.bounded_by_array_extents(space, &accesses);
                crate::witness::scalar(&self.witness_context(), id, &space, phi, back, &assumptions)
            }
            Err(why) => Err(why.0),
        };
        match built {
            Ok(built) => {
                facts.add(rules::ww101_carried_dependence::scalar(
                    name,
                    update_lines,
                    &built.text,
                    built.witness,
                ));
            }
            Err(why) => {
                let line = update_lines.first().copied().unwrap_or(0);
                let at = Access {
                    line,
                    text: name.to_string(),
                };
                let finding = undecided::likely_scalar(name, line, &why);
                self.needs_evidence(
                    finding,
                    PairKind::ReadAfterWrite,
                    name,
                    at.clone(),
                    at,
                    facts,
                );
            }
        }
    }
}

/// A tested pair with its witness: two iterations that meet, or why there is none.
type Witnessed = (PairResult, Option<Result<Built, Missing>>);

/// What the pairs of loop `id` that a dependence may join are judged against: the loop's
/// space and variant symbols, and one witness search context for all of them (it keeps
/// the searches done, which repeated pairs share).
struct CarriedPairs<'c, 'a> {
    cx: &'c FunctionContext<'a>,
    id: LoopId,
    accesses: &'c [MemAccess],
    space: &'c Space,
    variant: &'c HashSet<Var>,
    witness_cx: crate::witness::Context<'c>,
    /// The inner loops whose range is unknown (one that leaves early), for
    /// [`CarriedPairs::maybe_private`].
    unranged: Vec<(LoopId, crate::space::NotAffine)>,
}

/// One pair of accesses left to report, as the report names it.
struct ReportedPair<'p> {
    kind: DependenceKind,
    array: String,
    first: &'p MemAccess,
    second: &'p MemAccess,
    a: Access,
    b: Access,
    /// Why `array` may be private to each iteration, which makes a conflict on it no claim.
    maybe_private: Option<String>,
}

impl CarriedPairs<'_, '_> {
    /// No claim without two concrete iterations that meet (crate::witness): decided for
    /// every ordered pair first, so that a pair stated with a witness in one order is not
    /// also reported as undecided in the other. The pairs of reductions (`settled`) drop
    /// out, and so do those a witness search shows independent; those with a witness come
    /// first.
    fn witnessed(
        &self,
        results: Vec<PairResult>,
        settled: &[Settled],
        assumptions: &[Assumption],
    ) -> Vec<Witnessed> {
        let reduced = |k: usize| settled.iter().any(|m| m.accesses.contains(&k));
        let mut decided: Vec<_> = results
            .into_iter()
            .filter(|r| !(reduced(r.first) && reduced(r.second)))
            .map(|r| {
                let (first, second) = (&self.accesses[r.first], &self.accesses[r.second]);
                let conditional = first.conditional || second.conditional;
                let distance = match &r.outcome {
                    Outcome::Dependent { distance } => Some(*distance),
                    // A pair the static tests could not decide may still have a witness.
                    Outcome::Unknown {
                        data_dependent: false,
                        ..
                    } => Some(None),
                    _ => None,
                };
                let undecided = matches!(r.outcome, Outcome::Unknown { .. });
                let witness = distance.filter(|_| !conditional).map(|d| {
                    crate::witness::memory(
                        &self.witness_cx,
                        self.id,
                        self.space,
                        first,
                        second,
                        d,
                        undecided,
                        self.variant,
                        assumptions,
                    )
                });
                let mut r = r;
                match &witness {
                    Some(Ok(_)) if matches!(r.outcome, Outcome::Unknown { .. }) => {
                        r.outcome = Outcome::Dependent { distance: None };
                    }
                    // Undecided and no witness: stays undecided, with the tests' reason.
                    Some(Err(Missing::NotShown(_)))
                        if matches!(r.outcome, Outcome::Unknown { .. }) =>
                    {
                        return (r, None);
                    }
                    _ => {}
                }
                (r, witness)
            })
            .filter(|(_, w)| !matches!(w, Some(Err(Missing::Independent))))
            .collect();
        decided.sort_by_key(|(_, w)| !matches!(w, Some(Ok(_))));
        decided
    }

    /// The finding for one pair on `array`: WW101 with a witness, WW103 for an indirect
    /// update, else WW111 and the pair under `needs_evidence`.
    fn report(
        &self,
        r: PairResult,
        witness: Option<Result<Built, Missing>>,
        array: String,
        facts: &mut LoopFacts,
    ) {
        let (first, second) = (&self.accesses[r.first], &self.accesses[r.second]);
        let (a, b) = (self.cx.access_text(first), self.cx.access_text(second));
        let outcome = match &r.outcome {
            Outcome::Dependent { .. } if first.conditional || second.conditional => Outcome::Unknown {
                why: "both may touch the same element, but under conditions: whether two different iterations do is not known statically".into(),
                data_dependent: false,
            },
            other => other.clone(),
        };
        let maybe_private = self.maybe_private(first, second, &array);
        let pair = ReportedPair {
            kind: r.kind,
            array,
            first,
            second,
            a,
            b,
            maybe_private,
        };
        match &outcome {
            Outcome::Independent => {}
            Outcome::Dependent { distance } => {
                self.report_dependent(pair, *distance, witness, facts)
            }
            Outcome::Unknown {
                why,
                data_dependent,
            } => self.report_unknown(pair, why, *data_dependent, facts),
        }
    }

    /// A local array in a nest with an inner loop that leaves early may be private to each
    /// iteration: the classifier cannot follow what such a loop writes and reads, so a
    /// conflict on it is no claim. Says why, for such an array.
    fn maybe_private(&self, first: &MemAccess, second: &MemAccess, array: &str) -> Option<String> {
        let cx = self.cx;
        let local = first
            .base()
            .or(second.base())
            .and_then(|v| cx.rec.symbols.info(v))
            .is_some_and(|s| matches!(s.origin, SymbolOrigin::Object(o) if matches!(cx.func.inst(o).kind, InstKind::SlotAddr(_))));
        self.unranged.first().filter(|_| local).map(|(early, _)| {
            let line = cx
                .forest
                .loop_(*early)
                .source
                .map(|s| cx.line(cx.func.source_loop(s).keyword_span))
                .unwrap_or(0);
            format!("`{array}` may be private to each iteration, but the loop at line {line} leaves early, so whether each iteration writes every element it reads first is not known")
        })
    }

    /// A pair the tests or a witness show dependent: WW101 with the witness, unless the
    /// array may be private or the witness chooses the data the loop reads (WW111).
    fn report_dependent(
        &self,
        pair: ReportedPair,
        distance: Option<i64>,
        witness: Option<Result<Built, Missing>>,
        facts: &mut LoopFacts,
    ) {
        let ReportedPair {
            kind,
            array,
            a,
            b,
            maybe_private,
            ..
        } = pair;
        if let (Some(Ok(_)), Some(note)) = (&witness, &maybe_private) {
            let finding = undecided::likely(kind.as_str(), &array, &a, &b, note);
            self.cx
                .needs_evidence(finding, kind.pair_kind(), &array, a, b, facts);
            return;
        }
        let built = match witness {
            Some(Ok(built)) => built,
            Some(Err(Missing::NotShown(why))) => {
                let finding = undecided::likely(kind.as_str(), &array, &a, &b, &why);
                self.cx
                    .needs_evidence(finding, kind.pair_kind(), &array, a, b, facts);
                return;
            }
            _ => return,
        };
        // A witness that picks the values of memory the loop reads anew in each
        // iteration (a face range `group_index[2*t]`, a row start `ptr[i]`)
        // shows a conflict only for data chosen to make one: whether the
        // program's data ever does is for a profile to tell.
        // The loop's own bounds are not such data: a normalizable loop's
        // bounds hold for all its iterations (the report states what that
        // assumes), and choosing how often the loop runs is what every witness
        // does. Names compare symbols, not report text (`start[i + 1]#2`).
        let own_bounds: HashSet<Var> = self
            .space
            .of_loop(self.id)
            .map(|r| r.init.vars().into_iter().chain(r.bound.vars()).collect())
            .unwrap_or_default();
        let chosen_data: Vec<&str> = built
            .witness
            .values
            .keys()
            .filter(|k| {
                self.variant
                    .iter()
                    .any(|v| v.name() == k.as_str() && !own_bounds.contains(v))
            })
            .map(|k| k.as_str())
            .collect();
        if !chosen_data.is_empty() {
            let finding =
                undecided::if_data(kind.as_str(), &array, &a, &b, &built.text, &chosen_data);
            self.cx
                .needs_evidence(finding, kind.pair_kind(), &array, a, b, facts);
            return;
        }
        facts.add(rules::ww101_carried_dependence::memory(
            kind.pair_kind(),
            &array,
            distance,
            &a,
            &b,
            &built.text,
            built.witness,
        ));
    }

    /// A pair the tests could not decide: an indirect update (WW103, whose witness is
    /// conditional on data) when a store and a load of one base share an address that the
    /// data picks, else WW111; either way the pair needs run-time evidence.
    fn report_unknown(
        &self,
        pair: ReportedPair,
        why: &str,
        data_dependent: bool,
        facts: &mut LoopFacts,
    ) {
        let ReportedPair {
            kind,
            array,
            first,
            second,
            a,
            b,
            maybe_private,
        } = pair;
        let same_address = first
            .alternatives
            .iter()
            .map(|(_, o)| o)
            .eq(second.alternatives.iter().map(|(_, o)| o));
        // Only for the loop's own accesses: a callee's offset may be unknown
        // for reasons other than data.
        if data_dependent
            && maybe_private.is_none()
            && first.callee.is_none()
            && second.callee.is_none()
            && same_address
            && first.is_store != second.is_store
            && first.base() == second.base()
        {
            // The witness is conditional on data (`key[0] == key[1]`).
            let built = crate::witness::indirect(
                &self.witness_cx,
                self.id,
                self.space,
                first,
                second,
                self.variant,
                &facts.assumptions,
            );
            facts.add(rules::ww103_indirect_update::conditional(
                &b.text,
                &array,
                vec![a.line, b.line],
                built.map(|w| (w.text, w.witness)),
            ));
            // Whether indices repeat is a property of the data (a mesh's face
            // numbering may guarantee they never do across iterations): the
            // witness is conditional, so the loop needs run-time evidence, not a
            // verdict.
            facts.needs_evidence.push(DependencePair {
                kind: kind.pair_kind(),
                array: array.to_string(),
                first: a,
                second: b,
                distance: None,
            });
        } else {
            let finding = undecided::may_touch(&array, &a, &b, why);
            self.cx
                .needs_evidence(finding, kind.pair_kind(), &array, a, b, facts);
        }
    }
}
