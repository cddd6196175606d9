//! SSA construction while lowering, after Braun et al., "Simple and Efficient Construction of
//! Static Single Assignment Form" (CC 2013): per-block current definitions, sealed blocks,
//! incomplete phis, and trivial-phi removal at the end.
//!
//! Lowering writes a local variable with [`FunctionBuilder::def_var`] and reads it with
//! [`FunctionBuilder::use_var`]; phis appear only where two different definitions meet.
//! [`FunctionBuilder::finish`] removes trivial phis, drops unreachable blocks and renumbers
//! blocks and values densely so that printed IR is stable and readable.

use crate::ir::{
    Block, BlockData, Function, IfRegion, InstData, InstKind, Origin, SourceLoop, Span, Terminator,
    Value,
};
use crate::types::TypeId;
use std::collections::HashMap;

/// A local scalar kept in SSA form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct VarId(pub u32);

#[derive(Debug)]
struct VarInfo {
    name: Option<String>,
    ty: TypeId,
}

#[derive(Debug)]
pub(crate) struct FunctionBuilder {
    pub func: Function,
    current: Block,
    vars: Vec<VarInfo>,
    /// Current definition of each variable at the end of each block.
    defs: Vec<HashMap<VarId, Value>>,
    sealed: Vec<bool>,
    incomplete_phis: Vec<Vec<(VarId, Value)>>,
    /// Trivial phis replaced by the value they stand for.
    aliases: HashMap<Value, Value>,
    /// Whether control can reach the end of the current block (false after return/break).
    reachable: Vec<bool>,
    /// The (variable, block) reads in progress through single predecessors: a loop that
    /// only its own back edge enters (dead code after `break`) is a cycle of such blocks.
    reading: std::collections::HashSet<(VarId, Block)>,
}

impl FunctionBuilder {
    pub fn new(func: Function) -> Self {
        let mut builder = FunctionBuilder {
            func,
            current: Block(0),
            vars: Vec::new(),
            defs: Vec::new(),
            sealed: Vec::new(),
            incomplete_phis: Vec::new(),
            aliases: HashMap::new(),
            reachable: Vec::new(),
            reading: std::collections::HashSet::new(),
        };
        let entry = builder.new_block();
        builder.func.entry = entry;
        builder.seal(entry);
        builder.current = entry;
        builder.reachable[entry.index()] = true;
        builder
    }

    pub fn new_var(&mut self, name: Option<String>, ty: TypeId) -> VarId {
        self.vars.push(VarInfo { name, ty });
        VarId(self.vars.len() as u32 - 1)
    }

    pub fn new_block(&mut self) -> Block {
        self.func.blocks.push(BlockData {
            insts: Vec::new(),
            terminator: Terminator::Unreachable,
            terminator_span: Span::NONE,
            preds: Vec::new(),
        });
        self.defs.push(HashMap::new());
        self.sealed.push(false);
        self.incomplete_phis.push(Vec::new());
        self.reachable.push(false);
        Block(self.func.blocks.len() as u32 - 1)
    }

    pub fn current(&self) -> Block {
        self.current
    }

    /// Continues lowering in `block`.
    pub fn switch_to(&mut self, block: Block) {
        self.current = block;
        self.reachable[block.index()] = true;
    }

    /// Whether the current block is still open (no terminator emitted yet).
    pub fn is_open(&self) -> bool {
        self.reachable[self.current.index()]
    }

    /// Ends the current block. Code after a terminator goes to a fresh block without
    /// predecessors, which `finish` removes as unreachable.
    pub fn terminate(&mut self, terminator: Terminator, span: Span) {
        let block = self.current;
        if !self.reachable[block.index()] {
            return;
        }
        for succ in terminator.successors() {
            self.func.blocks[succ.index()].preds.push(block);
        }
        let data = &mut self.func.blocks[block.index()];
        data.terminator = terminator;
        data.terminator_span = span;
        self.reachable[block.index()] = false;
        let dead = self.new_block();
        self.seal(dead);
        self.current = dead;
    }

    pub fn jump(&mut self, target: Block, span: Span) {
        self.terminate(Terminator::Jump(target), span);
    }

    pub fn emit(&mut self, kind: InstKind, ty: TypeId, span: Span) -> Value {
        let block = self.current;
        let value = self.push_inst(
            kind,
            ty,
            block,
            Origin {
                span,
                var_name: None,
                restrict: None,
            },
        );
        self.func.blocks[block.index()].insts.push(value);
        value
    }

    /// Records the source name of a value, for printing (`v3 (i)`).
    pub fn name_value(&mut self, value: Value, name: &str) {
        let origin = &mut self.func.insts[value.index()].origin;
        if origin.var_name.is_none() {
            origin.var_name = Some(name.to_string());
        }
    }

    fn push_inst(&mut self, kind: InstKind, ty: TypeId, block: Block, origin: Origin) -> Value {
        self.func.insts.push(InstData {
            kind,
            ty,
            block,
            origin,
        });
        Value(self.func.insts.len() as u32 - 1)
    }

    /// Marks `block` as having all its predecessors; completes its pending phis.
    pub fn seal(&mut self, block: Block) {
        if self.sealed[block.index()] {
            return;
        }
        self.sealed[block.index()] = true;
        let pending = std::mem::take(&mut self.incomplete_phis[block.index()]);
        for (var, phi) in pending {
            self.add_phi_operands(var, phi);
        }
    }

    pub fn seal_all(&mut self) {
        for b in 0..self.func.blocks.len() {
            self.seal(Block(b as u32));
        }
    }

    pub fn def_var(&mut self, var: VarId, value: Value) {
        let block = self.current;
        self.defs[block.index()].insert(var, value);
        if let Some(name) = self.vars[var.0 as usize].name.clone() {
            self.name_value(value, &name);
        }
    }

    pub fn use_var(&mut self, var: VarId) -> Value {
        let block = self.current;
        self.read_var(var, block)
    }

    fn read_var(&mut self, var: VarId, block: Block) -> Value {
        if let Some(&v) = self.defs[block.index()].get(&var) {
            return self.resolve(v);
        }
        self.read_var_recursive(var, block)
    }

    fn read_var_recursive(&mut self, var: VarId, block: Block) -> Value {
        let value = if !self.sealed[block.index()] {
            let phi = self.new_phi(var, block);
            self.incomplete_phis[block.index()].push((var, phi));
            phi
        } else {
            let preds = self.func.blocks[block.index()].preds.clone();
            match preds.as_slice() {
                [] => {
                    let ty = self.vars[var.0 as usize].ty;
                    let origin = Origin {
                        span: Span::NONE,
                        var_name: self.vars[var.0 as usize].name.clone(),
                        restrict: None,
                    };
                    let undef = self.push_inst(InstKind::Undef, ty, block, origin);
                    self.insert_at_front(block, undef);
                    undef
                }
                [single] if !self.reading.contains(&(var, block)) => {
                    self.reading.insert((var, block));
                    let value = self.read_var(var, *single);
                    self.reading.remove(&(var, block));
                    value
                }
                // Back at a block whose read is in progress: a cycle, broken by a phi as
                // at a loop header.
                _ => {
                    // Break cycles through loops: define the phi before reading operands.
                    let phi = self.new_phi(var, block);
                    self.defs[block.index()].insert(var, phi);
                    self.add_phi_operands(var, phi)
                }
            }
        };
        self.defs[block.index()].insert(var, value);
        value
    }

    fn new_phi(&mut self, var: VarId, block: Block) -> Value {
        let info = &self.vars[var.0 as usize];
        let origin = Origin {
            span: Span::NONE,
            var_name: info.name.clone(),
            restrict: None,
        };
        let ty = info.ty;
        let phi = self.push_inst(InstKind::Phi(Vec::new()), ty, block, origin);
        self.insert_at_front(block, phi);
        phi
    }

    fn insert_at_front(&mut self, block: Block, value: Value) {
        let position = {
            let insts = &self.func.blocks[block.index()].insts;
            insts
                .iter()
                .position(|v| {
                    !matches!(
                        self.func.insts[v.index()].kind,
                        InstKind::Phi(_) | InstKind::Undef
                    )
                })
                .unwrap_or(insts.len())
        };
        self.func.blocks[block.index()]
            .insts
            .insert(position, value);
    }

    fn add_phi_operands(&mut self, var: VarId, phi: Value) -> Value {
        let block = self.func.insts[phi.index()].block;
        let preds = self.func.blocks[block.index()].preds.clone();
        let mut args = Vec::with_capacity(preds.len());
        for pred in preds {
            args.push((pred, self.read_var(var, pred)));
        }
        self.func.insts[phi.index()].kind = InstKind::Phi(args);
        self.try_remove_trivial_phi(phi)
    }

    fn try_remove_trivial_phi(&mut self, phi: Value) -> Value {
        let InstKind::Phi(args) = &self.func.insts[phi.index()].kind else {
            return phi;
        };
        let mut same: Option<Value> = None;
        for &(_, arg) in args {
            let arg = self.resolve_ref(arg);
            if Some(arg) == same || arg == phi {
                continue;
            }
            if same.is_some() {
                return phi;
            }
            same = Some(arg);
        }
        match same {
            Some(v) => {
                self.aliases.insert(phi, v);
                v
            }
            // A phi reachable only through itself: the variable is undefined here.
            None => phi,
        }
    }

    fn resolve_ref(&self, mut v: Value) -> Value {
        while let Some(&next) = self.aliases.get(&v) {
            v = next;
        }
        v
    }

    fn resolve(&mut self, v: Value) -> Value {
        self.resolve_ref(v)
    }

    /// Completes SSA construction and returns the function with dense numbering.
    pub fn finish(mut self) -> Function {
        self.seal_all();
        // Blocks only become unreachable by construction: sealing and phi removal keep
        // every edge, so one reachability serves both passes below.
        let reachable = reachable_blocks(&self.func);
        self.drop_unreachable_phi_arguments(&reachable);
        self.remove_trivial_phis();
        let aliases = std::mem::take(&mut self.aliases);
        let resolve = |mut v: Value| {
            while let Some(&next) = aliases.get(&v) {
                v = next;
            }
            v
        };
        for inst in &mut self.func.insts {
            inst.kind.map_operands(resolve);
        }
        for block in &mut self.func.blocks {
            match &mut block.terminator {
                Terminator::Return(Some(v)) => *v = resolve(*v),
                Terminator::Branch { cond, .. } => *cond = resolve(*cond),
                _ => {}
            }
            block.insts.retain(|v| !aliases.contains_key(v));
        }
        compact(self.func, &reachable)
    }

    /// Removes the phi arguments that come from blocks unreachable from the entry, so that a
    /// phi they alone kept apart is removed as trivial. The statements before a `switch`'s
    /// first label form such a block: it falls through into the first case, whose phis then
    /// merged each variable with itself and the dead block's undefined value. `compact`
    /// dropped the dead argument only after trivial-phi removal, leaving one-argument phis
    /// that hid every induction variable of a loop around a `switch`.
    fn drop_unreachable_phi_arguments(&mut self, reachable: &[bool]) {
        for inst in &mut self.func.insts {
            if let InstKind::Phi(args) = &mut inst.kind {
                if reachable[inst.block.index()] {
                    args.retain(|(b, _)| reachable[b.index()]);
                }
            }
        }
    }

    /// Repeats trivial-phi detection until nothing changes: Braun's recursive removal of
    /// phi users, done as a fixpoint because the IR keeps no use lists.
    fn remove_trivial_phis(&mut self) {
        loop {
            let mut changed = false;
            for index in 0..self.func.insts.len() {
                let phi = Value(index as u32);
                if self.aliases.contains_key(&phi) || !self.func.insts[index].kind.is_phi() {
                    continue;
                }
                if self.try_remove_trivial_phi(phi) != phi {
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
}

/// Which blocks the entry reaches, by block index.
fn reachable_blocks(func: &Function) -> Vec<bool> {
    let mut reachable = vec![false; func.blocks.len()];
    let mut stack = vec![func.entry];
    while let Some(b) = stack.pop() {
        if std::mem::replace(&mut reachable[b.index()], true) {
            continue;
        }
        stack.extend(func.blocks[b.index()].terminator.successors());
    }
    reachable
}

/// Drops blocks unreachable from the entry and renumbers blocks (in creation order) and
/// values (in block order), rewriting every reference.
fn compact(mut func: Function, reachable: &[bool]) -> Function {
    let block_count = func.blocks.len();
    let mut block_map = vec![None; block_count];
    let mut next = 0u32;
    for (i, r) in reachable.iter().enumerate() {
        if *r {
            block_map[i] = Some(Block(next));
            next += 1;
        }
    }
    let map_block = |b: Block| block_map[b.index()];

    let mut value_map = vec![None; func.insts.len()];
    let mut next_value = 0u32;
    for (i, block) in func.blocks.iter().enumerate() {
        if !reachable[i] {
            continue;
        }
        for v in &block.insts {
            value_map[v.index()] = Some(Value(next_value));
            next_value += 1;
        }
    }
    // Operands that point at values in dropped blocks cannot occur in reachable code, since
    // definitions dominate uses; map them defensively to the value itself.
    let map_value = |v: Value| value_map[v.index()].unwrap_or(v);

    let mut new_insts: Vec<Option<InstData>> = vec![None; next_value as usize];
    let old_insts = std::mem::take(&mut func.insts);
    for (i, mut inst) in old_insts.into_iter().enumerate() {
        let Some(new_v) = value_map[i] else { continue };
        let Some(new_block) = map_block(inst.block) else {
            continue;
        };
        inst.block = new_block;
        if let InstKind::Phi(args) = &mut inst.kind {
            args.retain(|(b, _)| reachable[b.index()]);
            for (b, _) in args.iter_mut() {
                *b = map_block(*b).unwrap_or(*b);
            }
        }
        inst.kind.map_operands(map_value);
        new_insts[new_v.index()] = Some(inst);
    }
    func.insts = new_insts.into_iter().flatten().collect();

    let old_blocks = std::mem::take(&mut func.blocks);
    for (i, mut block) in old_blocks.into_iter().enumerate() {
        if !reachable[i] {
            continue;
        }
        block.insts = block.insts.iter().map(|v| map_value(*v)).collect();
        block.preds = block.preds.iter().filter_map(|b| map_block(*b)).collect();
        block.terminator = match block.terminator {
            Terminator::Return(v) => Terminator::Return(v.map(map_value)),
            Terminator::Jump(b) => Terminator::Jump(map_block(b).unwrap_or(b)),
            Terminator::Branch {
                cond,
                then_block,
                else_block,
            } => Terminator::Branch {
                cond: map_value(cond),
                then_block: map_block(then_block).unwrap_or(then_block),
                else_block: map_block(else_block).unwrap_or(else_block),
            },
            Terminator::Unreachable => Terminator::Unreachable,
        };
        func.blocks.push(block);
    }
    func.entry = map_block(func.entry).unwrap_or(Block(0));
    for param in &mut func.params {
        param.value = map_value(param.value);
        param.vla_dims = param.vla_dims.iter().map(|v| map_value(*v)).collect();
    }
    for slot in &mut func.slots {
        slot.vla_size = slot.vla_size.map(map_value);
    }
    func.truncations = std::mem::take(&mut func.truncations)
        .into_iter()
        .filter_map(|(v, to)| Some((value_map[v.index()]?, to)))
        .collect();
    func.float_promotions = std::mem::take(&mut func.float_promotions)
        .into_iter()
        .filter_map(|v| value_map[v.index()])
        .collect();
    func.loops = std::mem::take(&mut func.loops)
        .into_iter()
        .filter_map(|l| {
            Some(SourceLoop {
                cond_block: map_block(l.cond_block)?,
                body_block: map_block(l.body_block)?,
                continue_block: map_block(l.continue_block).or(map_block(l.cond_block))?,
                exit_block: l.exit_block.and_then(map_block),
                ..l
            })
        })
        .collect();
    func.ifs = std::mem::take(&mut func.ifs)
        .into_iter()
        .filter_map(|r| {
            Some(IfRegion {
                cond_block: map_block(r.cond_block)?,
                then_block: map_block(r.then_block)?,
                else_block: r.else_block.and_then(map_block),
                join_block: r.join_block.and_then(map_block),
                ..r
            })
        })
        .collect();
    func
}
