//! Calls inlined: a copy of a function with the bodies of the functions it calls spliced in
//! at their calls, so that an analysis of one function sees what its callees do with its
//! values (`check` reads a kernel's accesses inside the device functions it calls, as
//! GPUDrano does). The copies keep their spans, so what they report points into the callee.
//!
//! A call is replaced by: the calling block cut after the call, a jump into a copy of the
//! callee's blocks (its parameters the call's arguments, its locals new slots), each of
//! its returns a jump to the block holding the rest, where a phi of the returned values
//! stands for the call's result. Rounds of inlining go as deep as `Limits::depth` (a
//! recursive call stops there) and stop adding once the function would pass
//! `Limits::instructions`; what is left a call is named with its reason.

use super::{
    Block, BlockData, Callee, Function, InstData, InstKind, Origin, Program, Slot, Span,
    Terminator, Value,
};
use std::collections::HashMap;

/// One call an inlined instruction came through: the callee and the call's span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSite {
    pub callee: String,
    pub span: Span,
}

/// A function with its calls inlined.
#[derive(Clone, Debug)]
pub struct Inlined {
    pub func: Function,
    /// For each value and block copied from a callee, the calls it came through, outermost
    /// first; absent for the function's own.
    pub values: HashMap<Value, Vec<CallSite>>,
    pub blocks: HashMap<Block, Vec<CallSite>>,
    /// The callees left called, each with why (sorted, one per name).
    pub left: Vec<(String, &'static str)>,
}

/// How far inlining goes.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Calls inside inlined bodies are inlined again this many times at most.
    pub depth: u32,
    /// No call is inlined once the function holds this many instructions.
    pub instructions: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            depth: 8,
            instructions: 50_000,
        }
    }
}

/// `func` with the calls `wanted` accepts inlined.
pub fn inline_calls(
    program: &Program,
    func: &Function,
    limits: Limits,
    wanted: impl Fn(&Function) -> bool,
) -> Inlined {
    let mut out = func.clone();
    let mut chains = Chains::default();
    let mut left: Vec<(String, &'static str)> = Vec::new();
    for round in 0..=limits.depth {
        let calls: Vec<(Value, &Function)> = out
            .values()
            .filter_map(|v| match &out.inst(v).kind {
                InstKind::Call {
                    callee: Callee::Direct(name),
                    ..
                } => program.function(name).filter(|f| wanted(f)).map(|f| (v, f)),
                _ => None,
            })
            .filter(|&(v, _)| in_a_block(&out, v))
            .collect();
        if calls.is_empty() {
            break;
        }
        let mut replaced: HashMap<Value, Value> = HashMap::new();
        for (call, callee) in calls {
            let why = if round == limits.depth {
                Some("calls nest deeper than inlining goes (recursion?)")
            } else if out.insts.len() + callee.insts.len() > limits.instructions {
                Some("inlining it would make the kernel too large")
            } else {
                None
            };
            match why {
                Some(why) => left.push((callee.name.clone(), why)),
                None => {
                    if let Some(one) = inline_one(&mut out, call, callee, &mut chains) {
                        replaced.insert(call, one);
                    }
                }
            }
        }
        // Once per round, not per call: rewriting every use is a pass over the function.
        replace_uses(&mut out, &replaced);
    }
    left.sort();
    left.dedup_by(|a, b| a.0 == b.0);
    Inlined {
        func: out,
        values: chains.values,
        blocks: chains.blocks,
        left,
    }
}

/// The calls each copied value and block came through.
#[derive(Default)]
struct Chains {
    values: HashMap<Value, Vec<CallSite>>,
    blocks: HashMap<Block, Vec<CallSite>>,
}

/// Whether `v` is listed in its block (an instruction that was a call already inlined is).
fn in_a_block(func: &Function, v: Value) -> bool {
    func.block(func.inst(v).block).insts.contains(&v)
}

/// Splices a copy of `callee` in place of the call `call` of `func`.
/// Returns the value that stands for the call where the callee returns one value on every
/// path: the caller must make the call's uses uses of it.
fn inline_one(
    func: &mut Function,
    call: Value,
    callee: &Function,
    chains: &mut Chains,
) -> Option<Value> {
    let InstKind::Call { args, .. } = func.inst(call).kind.clone() else {
        return None;
    };
    let at = func.inst(call).block;
    let mut chain = chains.values.get(&call).cloned().unwrap_or_default();
    chain.push(CallSite {
        callee: callee.name.clone(),
        span: func.inst(call).origin.span,
    });
    let position = func.block(at).insts.iter().position(|&v| v == call)?;
    let block_base = func.blocks.len() as u32;
    let slot_base = func.slots.len() as u32;
    let rest = Block(block_base + callee.blocks.len() as u32);
    let undef_type = func.inst(call).ty;

    // The callee's values: its parameters are the arguments, the others new instructions.
    let mut map: Vec<Value> = Vec::with_capacity(callee.insts.len());
    let mut next = func.insts.len() as u32;
    for v in callee.values() {
        match callee.inst(v).kind {
            InstKind::Param(i) if (i as usize) < args.len() => map.push(args[i as usize]),
            _ => {
                map.push(Value(next));
                next += 1;
            }
        }
    }
    let block_of = |b: Block| Block(block_base + b.0);
    let mut returns: Vec<(Block, Option<Value>)> = Vec::new();
    for v in callee.values() {
        let data = callee.inst(v);
        if matches!(data.kind, InstKind::Param(i) if (i as usize) < args.len()) {
            continue;
        }
        let mut kind = match data.kind {
            // A parameter the call does not pass (a K&R call) is undefined.
            InstKind::Param(_) => InstKind::Undef,
            InstKind::SlotAddr(s) => InstKind::SlotAddr(Slot(slot_base + s.0)),
            ref k => k.clone(),
        };
        kind.map_operands(|o| map[o.index()]);
        if let InstKind::Phi(incoming) = &mut kind {
            incoming.iter_mut().for_each(|(b, _)| *b = block_of(*b));
        }
        chains
            .values
            .insert(Value(func.insts.len() as u32), chain.clone());
        func.insts.push(InstData {
            kind,
            ty: data.ty,
            block: block_of(data.block),
            origin: Origin {
                // The callee's restrict pointers are not this function's.
                restrict: None,
                ..data.origin.clone()
            },
        });
    }
    for b in callee.blocks() {
        let data = callee.block(b);
        let passed = |v: &&Value| matches!(callee.inst(**v).kind, InstKind::Param(i) if (i as usize) < args.len());
        let insts: Vec<Value> = data
            .insts
            .iter()
            .filter(|v| !passed(v))
            .map(|&v| map[v.index()])
            .collect();
        let terminator = match &data.terminator {
            Terminator::Return(value) => {
                returns.push((block_of(b), value.map(|r| map[r.index()])));
                Terminator::Jump(rest)
            }
            Terminator::Jump(t) => Terminator::Jump(block_of(*t)),
            Terminator::Branch {
                cond,
                then_block,
                else_block,
            } => Terminator::Branch {
                cond: map[cond.index()],
                then_block: block_of(*then_block),
                else_block: block_of(*else_block),
            },
            Terminator::Unreachable => Terminator::Unreachable,
        };
        let mut preds: Vec<Block> = data.preds.iter().map(|&p| block_of(p)).collect();
        if b == callee.entry {
            preds.push(at);
        }
        chains.blocks.insert(block_of(b), chain.clone());
        func.blocks.push(BlockData {
            insts,
            terminator,
            terminator_span: data.terminator_span,
            preds,
        });
    }
    if let Some(outer) = chains.blocks.get(&at).cloned() {
        chains.blocks.insert(rest, outer);
    }
    func.slots.extend(callee.slots.iter().cloned());

    // The calling block: cut after the call; the rest moves to a new block.
    let tail: Vec<Value> = func.blocks[at.index()].insts.split_off(position + 1);
    func.blocks[at.index()].insts.pop();
    let old_terminator = std::mem::replace(
        &mut func.blocks[at.index()].terminator,
        Terminator::Jump(block_of(callee.entry)),
    );
    for s in old_terminator.successors() {
        let succ = &mut func.blocks[s.index()];
        succ.preds
            .iter_mut()
            .filter(|p| **p == at)
            .for_each(|p| *p = rest);
        for &v in &succ.insts.clone() {
            if let InstKind::Phi(incoming) = &mut func.insts[v.index()].kind {
                incoming
                    .iter_mut()
                    .filter(|(b, _)| *b == at)
                    .for_each(|(b, _)| *b = rest);
            }
        }
    }
    for &v in &tail {
        func.insts[v.index()].block = rest;
    }
    // The call's value: what the callee returns, a phi where the returns differ, undefined
    // where it returns nothing.
    let preds: Vec<Block> = returns.iter().map(|(b, _)| *b).collect();
    let mut values: Vec<Value> = returns.iter().filter_map(|(_, v)| *v).collect();
    values.dedup();
    let result = &mut func.insts[call.index()];
    result.block = rest;
    result.ty = undef_type;
    let mut insts = Vec::new();
    let mut stands_for = None;
    match values.as_slice() {
        [] => {
            result.kind = InstKind::Undef;
            insts.push(call);
        }
        [one] if returns.iter().all(|(_, v)| v.is_some()) => {
            // One value on every path: it is the call's value (a phi of it alone is not SSA).
            let one = *one;
            result.kind = InstKind::Undef;
            insts.push(call);
            stands_for = Some(one);
        }
        _ => {
            let undefined = Value(func.insts.len() as u32);
            func.insts.push(InstData {
                kind: InstKind::Undef,
                ty: undef_type,
                block: block_of(callee.entry),
                origin: func.insts[call.index()].origin.clone(),
            });
            let entry = &mut func.blocks[block_of(callee.entry).index()].insts;
            let first_non_phi = entry
                .iter()
                .position(|v| !matches!(func.insts[v.index()].kind, InstKind::Phi(_)))
                .unwrap_or(entry.len());
            entry.insert(first_non_phi, undefined);
            let incoming = returns
                .iter()
                .map(|(b, v)| (*b, v.unwrap_or(undefined)))
                .collect();
            func.insts[call.index()].kind = InstKind::Phi(incoming);
            insts.push(call);
        }
    }
    insts.extend(tail);
    let terminator_span = func.blocks[at.index()].terminator_span;
    func.blocks.push(BlockData {
        insts,
        terminator: old_terminator,
        terminator_span,
        preds,
    });
    stands_for
}

/// Every use of a key of `replaced` (operands and terminators) made a use of its value,
/// followed through chains (`f(g(x))` where `f` returns its argument, `g`'s call replaced
/// too).
fn replace_uses(func: &mut Function, replaced: &HashMap<Value, Value>) {
    if replaced.is_empty() {
        return;
    }
    let swap = |mut v: Value| {
        // A chain is at most as long as the round's calls.
        for _ in 0..=replaced.len() {
            match replaced.get(&v) {
                Some(&next) => v = next,
                None => break,
            }
        }
        v
    };
    for data in &mut func.insts {
        data.kind.map_operands(swap);
    }
    for block in &mut func.blocks {
        match &mut block.terminator {
            Terminator::Return(Some(v)) => *v = swap(*v),
            Terminator::Branch { cond, .. } => *cond = swap(*cond),
            _ => {}
        }
    }
}
