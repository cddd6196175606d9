//! Names for program values in symbolic expressions.
//!
//! Every analysis speaks about the same symbols: a parameter is its name (`n`), an
//! induction variable is its name (`i`), a load from an address that does not change in
//! the loop of interest is one symbol named after the source (`image->width`, `c->data`),
//! the base address of a local array or global is its name. Two loads from the same
//! symbolic address share their symbol (thesis `sym_var`), which is what lets ranges and
//! reconstructions agree. Names are unique per function: a second, different value that
//! would print the same gets a `#2` suffix.

use frontend::ir::{Function, InstKind, Value};
use std::collections::HashMap;
use symbolic::Var;

/// What a symbol stands for, so that later stages can tell pointers from integers and
/// find nested parameters (`c->data` is a load through parameter `c`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolOrigin {
    /// A function parameter (by index).
    Param(u32),
    /// A basic induction variable of a loop (the header phi).
    Induction(Value),
    /// The address of a local array/struct or a global: a base pointer.
    Object(Value),
    /// A value loaded from memory; `address` is the load's address value.
    Load { load: Value, address: Value },
    /// A phi that is not an induction variable (e.g. an accumulator).
    Phi(Value),
    /// The result of a call or an operation the engine does not model.
    Opaque(Value),
}

#[derive(Clone, Debug)]
pub struct Symbol {
    pub var: Var,
    pub origin: SymbolOrigin,
    /// Whether the value is a pointer (base pointers of accesses).
    pub is_pointer: bool,
}

/// The symbols of one function.
#[derive(Clone, Debug, Default)]
pub struct Symbols {
    by_value: HashMap<Value, Var>,
    by_name: HashMap<String, Value>,
    info: HashMap<Var, Symbol>,
    /// The symbols in the order they were made, which [`Symbols::iter`] follows: a hash
    /// map's order changes from run to run, and the witness search's constraints, read
    /// in this order, once changed how many combinations it tried.
    order: Vec<Var>,
    /// Loads keyed by a canonical text of their address, so equal addresses share a symbol.
    by_address: HashMap<String, Var>,
    /// Per base name, the suffix below which every `base#k` is taken: a name loaded a
    /// thousand times (`pOp->p1` in sqlite3's interpreter loop) is not probed from `#2`
    /// each time. Names are never released, so the hint stays true.
    next_suffix: HashMap<String, u32>,
    /// The casts of each value (a call result kept in a local is named after the local
    /// its cast is stored to), found in one pass when first needed.
    casts: Option<HashMap<Value, Vec<Value>>>,
}

/// A symbol named after an expression (`i * 7919 % m`) is parenthesized, so that printed in
/// a product (`4*(i * 7919 % m)`) it still reads as the value it stands for. Names that
/// are one operand already (`n`, `c->data`, `idx[i + 1]`) stay as they are.
fn parenthesized(name: String) -> String {
    let mut depth = 0i32;
    let mut chars = name.chars().peekable();
    let mut atomic = !name.is_empty();
    while let Some(c) = chars.next() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            '-' if depth == 0 && chars.peek() == Some(&'>') => {
                chars.next();
            }
            c if depth == 0 && !(c.is_ascii_alphanumeric() || c == '_' || c == '.') => {
                atomic = false;
                break;
            }
            _ => {}
        }
    }
    if atomic {
        name
    } else {
        format!("({name})")
    }
}

impl Symbols {
    pub fn new() -> Self {
        Self::default()
    }

    /// The symbol of a value, creating it (named after its source rendering) if needed.
    pub fn symbol_for(
        &mut self,
        func: &Function,
        program_types: &frontend::types::TypeTable,
        v: Value,
        origin: SymbolOrigin,
    ) -> Var {
        if let Some(var) = self.by_value.get(&v) {
            return var.clone();
        }
        let base_name = match &origin {
            SymbolOrigin::Param(i) => func
                .params
                .get(*i as usize)
                .and_then(|p| p.name.clone())
                .unwrap_or_else(|| format!("arg{i}")),
            SymbolOrigin::Object(_) => frontend::ir::print::render_value(func, v)
                .trim_start_matches('&')
                .to_string(),
            // A call result kept in a local (`int *a = malloc(...)`) reads as that local,
            // and so does a value chosen by a condition (`n = argc > 1 ? atoi(..) : 100`).
            SymbolOrigin::Opaque(_) | SymbolOrigin::Phi(_) => {
                let casts = self.casts.get_or_insert_with(|| casts_of(func));
                local_name(func, casts, v).unwrap_or_else(|| {
                    truncation(func, program_types, v)
                        .unwrap_or_else(|| frontend::ir::print::render_value(func, v))
                })
            }
            _ => frontend::ir::print::render_value(func, v),
        };
        let name = self.unique_name(&parenthesized(base_name), v);
        let var = Var::new(&name);
        let is_pointer =
            program_types.is_pointer(func.inst(v).ty) || matches!(origin, SymbolOrigin::Object(_));
        self.by_value.insert(v, var.clone());
        self.by_name.insert(name, v);
        self.order.push(var.clone());
        self.info.insert(
            var.clone(),
            Symbol {
                var: var.clone(),
                origin,
                is_pointer,
            },
        );
        var
    }

    /// The shared symbol of a load from an address; `key` is the address's reconstructed
    /// symbolic expression printed, so equal addresses share the symbol.
    pub fn load_symbol(
        &mut self,
        func: &Function,
        types: &frontend::types::TypeTable,
        load: Value,
        address: Value,
        key: String,
    ) -> Var {
        if let Some(var) = self.by_address.get(&key) {
            let var = var.clone();
            self.by_value.insert(load, var.clone());
            return var;
        }
        let var = self.symbol_for(func, types, load, SymbolOrigin::Load { load, address });
        self.by_address.insert(key, var.clone());
        var
    }

    /// The one symbol of a memory object (a local array, a global): every `SlotAddr` or
    /// `GlobalAddr` instruction of the same object yields it.
    pub fn object_symbol(
        &mut self,
        func: &Function,
        types: &frontend::types::TypeTable,
        v: Value,
        key: String,
    ) -> Var {
        let key = format!("object {key}");
        if let Some(var) = self.by_address.get(&key) {
            let var = var.clone();
            self.by_value.insert(v, var.clone());
            return var;
        }
        let var = self.symbol_for(func, types, v, SymbolOrigin::Object(v));
        self.by_address.insert(key, var.clone());
        var
    }

    fn unique_name(&mut self, base: &str, v: Value) -> String {
        let base = if base.is_empty() {
            format!("{v}")
        } else {
            base.to_string()
        };
        if !self.by_name.contains_key(&base) {
            return base;
        }
        let from = self.next_suffix.get(&base).copied().unwrap_or(2);
        for k in from.. {
            let candidate = format!("{base}#{k}");
            if !self.by_name.contains_key(&candidate) {
                self.next_suffix.insert(base, k + 1);
                return candidate;
            }
        }
        unreachable!("an unbounded counter always finds a free name")
    }

    /// The symbol of a load from the address whose reconstruction prints as `key` (see
    /// [`Symbols::load_symbol`]), if the function loads from it.
    pub fn load_at(&self, key: &str) -> Option<&Var> {
        self.by_address.get(key)
    }

    pub fn var_of(&self, v: Value) -> Option<&Var> {
        self.by_value.get(&v)
    }

    pub fn info(&self, var: &Var) -> Option<&Symbol> {
        self.info.get(var)
    }

    pub fn value_of(&self, var: &Var) -> Option<Value> {
        self.by_name.get(var.name()).copied()
    }

    pub fn is_pointer(&self, var: &Var) -> bool {
        self.info.get(var).is_some_and(|s| s.is_pointer)
    }

    /// Every symbol, in the order they were made.
    pub fn iter(&self) -> impl Iterator<Item = &Symbol> {
        self.order.iter().filter_map(|v| self.info.get(v))
    }

    /// Whether a symbol's value is an address of program memory (for alias questions).
    pub fn is_object(&self, var: &Var) -> bool {
        matches!(
            self.info.get(var).map(|s| &s.origin),
            Some(SymbolOrigin::Object(_))
        )
    }
}

/// The name of the local variable that holds `v`, directly or through one cast (the first
/// named one).
fn local_name(func: &Function, casts: &HashMap<Value, Vec<Value>>, v: Value) -> Option<String> {
    let named = |x: Value| {
        func.inst(x)
            .origin
            .var_name
            .clone()
            .filter(|n| !n.starts_with('&'))
    };
    if let Some(name) = named(v) {
        return Some(name);
    }
    casts.get(&v)?.iter().find_map(|&c| named(c))
}

/// Each value's casts, in instruction order.
fn casts_of(func: &Function) -> HashMap<Value, Vec<Value>> {
    let mut casts: HashMap<Value, Vec<Value>> = HashMap::new();
    for (i, inst) in func.insts.iter().enumerate() {
        if let frontend::ir::InstKind::Cast(inner) = inst.kind {
            casts.entry(inner).or_default().push(Value(i as u32));
        }
    }
    casts
}

/// A conversion of a floating-point value to an integer type written out, `(int)(sqrt(x))`:
/// the rendering of values leaves casts out, and this one truncates.
fn truncation(func: &Function, types: &frontend::types::TypeTable, v: Value) -> Option<String> {
    let InstKind::Cast(inner) = func.inst(v).kind else {
        return None;
    };
    let to = func.inst(v).ty;
    (types.is_float(func.inst(inner).ty) && types.is_integer(to)).then(|| {
        format!(
            "({})({})",
            types.display(to),
            frontend::ir::print::render_value(func, inner)
        )
    })
}
