//! Whether a call may keep a pointer it is passed beyond its return (LLVM's `nocapture`):
//! a local whose address goes only to calls that do not keep it is reachable by those calls
//! while they run and by nothing else, so other calls and stores through other pointers
//! leave it alone (`_thread_range(n, &s_id, &e_id)` fills `s_id`; a later
//! `_sbloc_sizes(.., &n_sblocks, ..)` cannot write it).
//!
//! A function of the program keeps its parameter when the pointer, or an address computed
//! from it, is stored as a value, returned, merged with another value (a phi or select,
//! which may then be kept), turned into an integer other than by a comparison, or passed
//! where a callee may keep it. A call of a function the program does not define keeps
//! every pointer, except for C library functions that only read or write through their
//! arguments. Calls through pointers keep everything. A function met again while deciding
//! (recursion) or past a depth is taken to keep it.

use frontend::ir::{Callee, Function, InstKind, Program, Terminator, Value};
use std::collections::HashMap;

/// Library functions that read or write through their pointer arguments and keep none of
/// them (nor return one of them).
const LIBRARY_NON_CAPTURING: &[&str] = &[
    "memset", "memcpy", "memmove", "memcmp", "strlen", "strcmp", "strncmp", "strcpy", "strncpy",
    "printf", "fprintf", "sprintf", "snprintf", "puts", "fputs", "scanf", "fscanf", "sscanf",
    "fread", "fwrite", "frexp", "modf", "qsort",
];

/// How deep into callees a parameter is followed before it is taken to be kept.
const MAX_DEPTH: u32 = 6;

/// Decisions of whether calls keep pointers, remembered for one program.
#[derive(Debug)]
pub struct Captures<'p> {
    program: &'p Program,
    memo: HashMap<(String, usize), bool>,
    deciding: Vec<(String, usize)>,
}

impl<'p> Captures<'p> {
    pub fn new(program: &'p Program) -> Captures<'p> {
        Captures {
            program,
            memo: HashMap::new(),
            deciding: Vec::new(),
        }
    }

    /// Whether a call of `callee` may keep the pointer passed as its argument `index`
    /// after it returns.
    pub fn call_may_keep(&mut self, callee: &Callee, index: usize) -> bool {
        match callee {
            Callee::Direct(name) => self.may_keep(name, index),
            Callee::Indirect(_) => true,
        }
    }

    fn may_keep(&mut self, name: &str, index: usize) -> bool {
        let Some(func) = self.program.function(name) else {
            return !LIBRARY_NON_CAPTURING.contains(&name);
        };
        let key = (name.to_string(), index);
        if let Some(&known) = self.memo.get(&key) {
            return known;
        }
        if self.deciding.contains(&key) || self.deciding.len() as u32 >= MAX_DEPTH {
            return true;
        }
        self.deciding.push(key.clone());
        let kept = self.keeps_parameter(func, index);
        self.deciding.pop();
        self.memo.insert(key, kept);
        kept
    }

    /// Whether `func` may keep its parameter `index`.
    fn keeps_parameter(&mut self, func: &Function, index: usize) -> bool {
        let Some(param) = func
            .values()
            .find(|&v| matches!(func.inst(v).kind, InstKind::Param(i) if i as usize == index))
        else {
            // Variadic, or never read: an argument the function cannot name is not kept.
            return index >= func.params.len();
        };
        let mut users: HashMap<Value, Vec<Value>> = HashMap::new();
        for v in func.values() {
            for o in func.inst(v).kind.operands() {
                users.entry(o).or_default().push(v);
            }
        }
        let returned: Vec<Value> = func
            .blocks()
            .filter_map(|b| match func.block(b).terminator {
                Terminator::Return(Some(r)) => Some(r),
                _ => None,
            })
            .collect();
        let mut derived = vec![param];
        let mut seen = std::collections::HashSet::from([param]);
        while let Some(d) = derived.pop() {
            if returned.contains(&d) {
                return true;
            }
            for &u in users.get(&d).map(Vec::as_slice).unwrap_or(&[]) {
                let keeps = match &func.inst(u).kind {
                    InstKind::Load { .. } => false,
                    InstKind::Store { value, .. } => *value == d,
                    InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. }
                        if *base == d =>
                    {
                        if seen.insert(u) {
                            derived.push(u);
                        }
                        false
                    }
                    InstKind::Cast(_) => {
                        if seen.insert(u) {
                            derived.push(u);
                        }
                        false
                    }
                    InstKind::Binary(op, _, _) => !op.is_comparison(),
                    InstKind::Call { callee, args } => {
                        let positions: Vec<usize> = args
                            .iter()
                            .enumerate()
                            .filter(|(_, a)| **a == d)
                            .map(|(k, _)| k)
                            .collect();
                        matches!(callee, Callee::Indirect(c) if *c == d)
                            || positions.into_iter().any(|k| self.call_may_keep(callee, k))
                    }
                    _ => true,
                };
                if keeps {
                    return true;
                }
            }
        }
        false
    }
}
