//! Statics whose address the program never takes: every use of their address is the address
//! of a load or a store (through constant or variable offsets), so no pointer the program
//! holds points into them and they overlap no memory a pointer reaches.
//!
//! Only `static` globals (file scope or function scope) qualify: their unit is all the code
//! that can name them, and it is analysed; an external global may have its address taken by
//! code outside the analysed files. A unit with a function or declaration that did not lower
//! has code nobody has seen, so none of its statics qualifies.

use std::collections::{HashMap, HashSet};

use frontend::ir::{Function, GlobalId, InstKind, Program, Terminator, Value};
use frontend::unit::Unit;

use crate::program::ProgramView;

impl ProgramView<'_> {
    /// Whether `unit`'s global `g` is a static whose address the program never takes.
    pub fn sealed_static(&self, unit: usize, g: GlobalId) -> bool {
        self.sealed_statics_found_by(|| self.units().iter().map(|u| sealed_in(u)).collect())
            .get(unit)
            .is_some_and(|s| s.contains(&g))
    }

    /// Whether every static of `unit` named `name` is sealed (function-scope statics of
    /// different functions may share a name); false when `unit` has no static of that name.
    pub fn sealed_static_named(&self, unit: usize, name: &str) -> bool {
        let globals = &self.unit(unit).lowered.program.globals;
        let mut named = globals
            .iter()
            .enumerate()
            .filter(|(_, g)| g.name == name)
            .peekable();
        named.peek().is_some()
            && named.all(|(i, g)| g.is_static && self.sealed_static(unit, GlobalId(i as u32)))
    }
}

/// The sealed statics of one unit.
fn sealed_in(unit: &Unit) -> HashSet<GlobalId> {
    if !unit.lowered.errors.is_empty() {
        return HashSet::new();
    }
    let program = &unit.lowered.program;
    let mut taken = vec![false; program.globals.len()];
    let initializers = program.globals.iter().filter_map(|g| g.init.as_deref());
    for func in program.functions.iter().chain(initializers) {
        mark_taken(func, &mut taken);
    }
    sealed_of(program, &taken)
}

fn sealed_of(program: &Program, taken: &[bool]) -> HashSet<GlobalId> {
    program
        .globals
        .iter()
        .enumerate()
        .filter(|(i, g)| g.is_static && !g.is_extern && !taken[*i])
        .map(|(i, _)| GlobalId(i as u32))
        .collect()
}

/// Marks in `taken` every global whose address `func` uses as anything but the address of
/// a load or a store: a stored value, a call argument, a phi, a cast, a comparison, a
/// returned value.
fn mark_taken(func: &Function, taken: &mut [bool]) {
    let derived = addresses_within(func);
    if derived.is_empty() {
        return;
    }
    let mut take = |v: Value| {
        if let Some(g) = derived.get(&v) {
            taken[g.index()] = true;
        }
    };
    for v in func.values() {
        match &func.inst(v).kind {
            InstKind::Load { .. } | InstKind::FieldAddr { .. } => {}
            InstKind::Store { value, .. } => take(*value),
            InstKind::PtrAdd { index, .. } => take(*index),
            other => other.operands().into_iter().for_each(&mut take),
        }
    }
    for block in &func.blocks {
        match block.terminator {
            Terminator::Return(Some(v)) | Terminator::Branch { cond: v, .. } => take(v),
            Terminator::Return(None) | Terminator::Jump(_) | Terminator::Unreachable => {}
        }
    }
}

/// Every value that is a global's address plus offsets (`GlobalAddr`, then `PtrAdd` and
/// `FieldAddr` on it), with its global: a walk from each address to the offsets taken from
/// it, linear in the function's size.
fn addresses_within(func: &Function) -> HashMap<Value, GlobalId> {
    let mut offsets: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut work: Vec<(Value, GlobalId)> = Vec::new();
    for v in func.values() {
        match func.inst(v).kind {
            InstKind::GlobalAddr(g) => work.push((v, g)),
            InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => {
                offsets.entry(base).or_default().push(v)
            }
            _ => {}
        }
    }
    let mut derived = HashMap::new();
    while let Some((v, g)) = work.pop() {
        if derived.insert(v, g).is_none() {
            let next = offsets.get(&v).into_iter().flatten();
            work.extend(next.map(|&w| (w, g)));
        }
    }
    derived
}

#[cfg(test)]
mod tests {
    use crate::program::ProgramView;

    /// Whether the static `name` of `source` is sealed.
    fn check(source: &str, name: &str, sealed: bool) {
        let (_dir, unit) = crate::test_unit::unit(source);
        let view = ProgramView::single(&unit);
        assert_eq!(
            view.sealed_static_named(0, name),
            sealed,
            "{name} in {source}"
        );
    }

    #[test]
    fn loads_and_stores_at_offsets_keep_a_static_sealed() {
        let src = "struct s { int n; double v[4]; };\nstatic struct s t;\nstatic double w[8];\n\
                   double f(int i) { t.v[i] = w[i + 1]; t.n++; return t.v[0] * w[i]; }";
        check(src, "t", true);
        check(src, "w", true);
    }

    #[test]
    fn each_way_out_of_the_file_takes_the_address() {
        let ways = [
            ("stored", "double *kept;\nvoid f(void) { kept = &w[1]; }"),
            ("passed", "void use(double *p);\nvoid f(void) { use(w); }"),
            ("returned", "double *f(void) { return w + 2; }"),
            ("cast", "long f(void) { return (long)&w[0]; }"),
            ("compared", "int f(double *p) { return p == w; }"),
            ("initializer", "double *first = &w[0];"),
        ];
        for (way, code) in ways {
            let src = format!("static double w[8];\n{code}\n");
            check(&src, "w", false);
            assert!(!way.is_empty());
        }
    }

    #[test]
    fn an_external_global_is_never_sealed() {
        check("double w[8];\ndouble f(int i) { return w[i]; }", "w", false);
    }

    #[test]
    fn a_function_that_did_not_lower_unseals_the_file() {
        // A function refused by the lowering: code nobody saw may take addresses.
        let src = "static double w[8];\nvoid f(void) { not_declared = 1; }\n\
                   double h(int i) { return w[i]; }";
        check(src, "w", false);
    }
}
