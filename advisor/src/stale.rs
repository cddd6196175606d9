//! Names a report writes that the loop does not see with the value meant: the
//! reconstruction names a symbol after the variable that held its value where it was made
//! (a parameter at the function's entry, a counter before `--stack_size`), so after `n = n -
//! 1;` the bound of `for (i = 0; i < n; i++)` is `n - 1` in terms of the old `n`. A reader,
//! and a port that writes `map(a[0:n - 1])` at the loop, takes `n` to be the variable as
//! the loop finds it, which is one less.
//!
//! At each loop, a symbol named after a variable whose value at the loop's start is another
//! is stale. When the variable's value there is the symbol's plus a constant (`n - 1`,
//! `k + 1`, a counter's entry), the symbol is rewritten in terms of the variable as the loop
//! finds it (`n` for the old `n - 1`); otherwise it is given the line its value comes from
//! (`n@L3`), which no port takes for a variable in scope. A symbol whose name only embeds a
//! stale variable (`children[stack[stack_size - 1]].nChild`) is marked the same way.

use crate::model::Quantity;
use crate::rebase::{value_at_entry, Definitions};
use analyses::reconstruct::Reconstruction;
use frontend::ir::Function;
use frontend::loops::Loop;
use std::collections::HashMap;
use symbolic::{Expr, Var};

/// How a loop's report rewrites stale symbols: each to an expression over names the loop
/// sees with the value meant.
#[derive(Debug, Default)]
pub struct AtLoop {
    rewrite: HashMap<Var, Expr>,
    /// The names of the function's symbols that are not plain identifiers (`s->n`,
    /// `a[k].len`), longest first: what a text that does not parse is read as.
    compound: Vec<String>,
}

/// The function's symbols [`AtLoop::of`] looks at, found once per function: a loop then
/// looks only at those its report's texts name (every symbol at every loop made 10,000 loops
/// in a row 10^8 steps).
#[derive(Debug, Default)]
pub struct FunctionSymbols {
    /// Symbols named after a variable the function assigns more than once, by name, with
    /// their values: the ones that can be stale somewhere.
    plain: HashMap<String, (Var, frontend::ir::Value)>,
    /// The loads of globals the function reads, by their symbol's name (`n#2`), with the
    /// global's name: stale at a loop when the function may store to the global between
    /// the load and the loop.
    globals: HashMap<String, (Var, frontend::ir::Value, String)>,
    /// The blocks that store to each global, found once: a global no block stores to (the
    /// common case) is never stale, whatever the number of loops.
    global_stores: HashMap<frontend::ir::GlobalId, Vec<frontend::ir::Block>>,
    /// Symbols whose names are not plain identifiers (`s->n`, `a[k].len`), longest first
    /// (then by name), with their values when they have one.
    compound: Vec<(Var, Option<frontend::ir::Value>)>,
    /// The compound symbols by their rarest word (the word fewest of them contain), as
    /// positions in `compound`; those without a word apart.
    by_rarest_word: HashMap<String, Vec<usize>>,
    wordless: Vec<usize>,
}

impl FunctionSymbols {
    pub fn of(func: &Function, rec: &Reconstruction, definitions: &Definitions) -> FunctionSymbols {
        let mut plain = HashMap::new();
        let mut globals = HashMap::new();
        let mut compound = Vec::new();
        for symbol in rec.symbols.iter() {
            let name = symbol.var.name();
            let value = rec.symbols.value_of(&symbol.var);
            if let Some(v) = value.filter(|v| loaded_global(func, *v).is_some()) {
                let stem = name.split('#').next().unwrap_or(name);
                if is_identifier(stem) {
                    globals.insert(name.to_string(), (symbol.var.clone(), v, stem.to_string()));
                    continue;
                }
            }
            if !is_identifier(name) {
                compound.push((symbol.var.clone(), value));
            } else if let Some(value) = value.filter(|_| definitions.assigned_again(name)) {
                // A counter of the loop is assigned twice (its start and its step).
                plain.insert(name.to_string(), (symbol.var.clone(), value));
            }
        }
        compound.sort_by(|(a, _), (b, _)| {
            (std::cmp::Reverse(a.name().len()), a.name())
                .cmp(&(std::cmp::Reverse(b.name().len()), b.name()))
        });
        // A compound name a text contains has its words among the text's words, the rarest
        // one included: each loop then looks at the compounds keyed by its texts' words, not
        // at all of them (10,000 loops in a row, each over `a[iK]`, made that quadratic).
        let mut frequency: HashMap<&str, usize> = HashMap::new();
        for (var, _) in &compound {
            let mut seen: Vec<&str> = words(var.name()).collect();
            seen.sort_unstable();
            seen.dedup();
            for w in seen {
                *frequency.entry(w).or_default() += 1;
            }
        }
        let mut by_rarest_word: HashMap<String, Vec<usize>> = HashMap::new();
        let mut wordless = Vec::new();
        for (position, (var, _)) in compound.iter().enumerate() {
            match words(var.name()).min_by_key(|w| (frequency[w], *w)) {
                Some(w) => by_rarest_word
                    .entry(w.to_string())
                    .or_default()
                    .push(position),
                None => wordless.push(position),
            }
        }
        let mut global_stores: HashMap<frontend::ir::GlobalId, Vec<frontend::ir::Block>> =
            HashMap::new();
        if !globals.is_empty() {
            for b in func.blocks() {
                for v in &func.block(b).insts {
                    if let frontend::ir::InstKind::Store { addr, .. } = &func.inst(*v).kind {
                        if let frontend::ir::InstKind::GlobalAddr(g) = func.inst(*addr).kind {
                            let blocks = global_stores.entry(g).or_default();
                            if blocks.last() != Some(&b) {
                                blocks.push(b);
                            }
                        }
                    }
                }
            }
        }
        FunctionSymbols {
            plain,
            globals,
            global_stores,
            compound,
            by_rarest_word,
            wordless,
        }
    }

    /// The compound symbols whose names some text of `texts` holds, in `compound`'s order;
    /// `named` is the set of words of those texts.
    fn compounds_in(
        &self,
        named: &std::collections::BTreeSet<&str>,
        texts: &[&str],
    ) -> Vec<&(Var, Option<frontend::ir::Value>)> {
        let mut positions: Vec<usize> = named
            .iter()
            .filter_map(|w| self.by_rarest_word.get(*w))
            .flatten()
            .chain(&self.wordless)
            .copied()
            .collect();
        positions.sort_unstable();
        positions.dedup();
        positions
            .into_iter()
            .map(|k| &self.compound[k])
            .filter(|(var, _)| texts.iter().any(|t| t.contains(var.name())))
            .collect()
    }
}

/// A stale symbol: its value and the variable's value at the loop's start when known.
type Found = (Var, frontend::ir::Value, Option<Expr>);

/// Which plain names are stale at one loop, decided on first question.
struct Staleness<'a> {
    func: &'a Function,
    rec: &'a Reconstruction,
    definitions: &'a Definitions,
    symbols: &'a FunctionSymbols,
    l: &'a Loop,
    known: HashMap<String, Option<Found>>,
}

impl Staleness<'_> {
    fn of(&mut self, name: &str) -> Option<Found> {
        if let Some(known) = self.known.get(name) {
            return known.clone();
        }
        let found = self.decide(name);
        self.known.insert(name.to_string(), found.clone());
        found
    }

    fn is_stale(&mut self, name: &str) -> bool {
        self.of(name).is_some()
    }

    fn decide(&self, name: &str) -> Option<Found> {
        let (var, value) = self.symbols.plain.get(name)?;
        // Values of the loop's own iterations (its counters, what its body loads) are
        // what the report means by their names.
        if self.l.contains(self.func.inst(*value).block) {
            return None;
        }
        let entry = value_at_entry(self.func, self.rec, self.definitions, self.l, name, var)?;
        let at_entry = self.rec.single(entry);
        if at_entry == Some(&Expr::var(name)) {
            return None;
        }
        Some((var.clone(), *value, at_entry.cloned()))
    }
}

/// The numbered names in `texts` (`n#2`): an identifier, `#` and digits.
fn numbered_names<'t>(texts: &[&'t str]) -> std::collections::HashSet<&'t str> {
    let mut out = std::collections::HashSet::new();
    for text in texts {
        let b = text.as_bytes();
        for (at, _) in text.match_indices('#') {
            let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
            let start = (0..at)
                .rev()
                .take_while(|k| ident(b[*k]))
                .last()
                .unwrap_or(at);
            let end = (at + 1..b.len())
                .take_while(|k| b[*k].is_ascii_digit())
                .last()
                .map_or(at + 1, |k| k + 1);
            if start < at && end > at + 1 {
                out.insert(&text[start..end]);
            }
        }
    }
    out
}

/// The global a load reads, when `value` loads a file-scope or static variable itself (not
/// through a pointer, not a member or element of it).
fn loaded_global(func: &Function, value: frontend::ir::Value) -> Option<frontend::ir::GlobalId> {
    let frontend::ir::InstKind::Load { addr } = &func.inst(value).kind else {
        return None;
    };
    match &func.inst(*addr).kind {
        frontend::ir::InstKind::GlobalAddr(g) => Some(*g),
        _ => None,
    }
}

/// Whether a store to the global `value` loads (in one of `stores`, the blocks that store
/// to it) may run after the load and before loop `l` starts: in the load's block after it,
/// or in a block outside the loop that the load's block reaches and that reaches the loop's
/// header. A callee that writes the global is not looked at.
fn stored_before_loop(
    func: &Function,
    value: frontend::ir::Value,
    stores: &[frontend::ir::Block],
    l: &Loop,
) -> bool {
    use frontend::ir::{Block, InstKind};
    let load_block = func.inst(value).block;
    let Some(global) = loaded_global(func, value) else {
        return false;
    };
    let stores_global = |v: &frontend::ir::Value| {
        matches!(&func.inst(*v).kind, InstKind::Store { addr, .. }
            if matches!(func.inst(*addr).kind, InstKind::GlobalAddr(g) if g == global))
    };
    let store_blocks: Vec<Block> = stores.iter().copied().filter(|b| !l.contains(*b)).collect();
    if store_blocks.is_empty() {
        return false;
    }
    // A loop that reads the global itself means the value it finds there, which is the
    // variable's; a load before a store is a value of its own (`reconstruct::versions`),
    // which the report tells from the loop's by line.
    let reads_it_inside = l.blocks.iter().any(|b| {
        func.block(*b).insts.iter().any(|v| {
            matches!(&func.inst(*v).kind, InstKind::Load { addr }
                if matches!(func.inst(*addr).kind, InstKind::GlobalAddr(g) if g == global))
        })
    });
    if reads_it_inside {
        return false;
    }
    // Blocks that reach the loop's header, and blocks the load's block reaches.
    let mut to_header = std::collections::HashSet::new();
    let mut work = vec![l.header];
    while let Some(b) = work.pop() {
        for p in &func.block(b).preds {
            if to_header.insert(*p) {
                work.push(*p);
            }
        }
    }
    let mut from_load = std::collections::HashSet::new();
    let mut work: Vec<Block> = func.block(load_block).terminator.successors();
    while let Some(b) = work.pop() {
        if from_load.insert(b) {
            work.extend(func.block(b).terminator.successors());
        }
    }
    let after_load_in_its_block = func
        .block(load_block)
        .insts
        .iter()
        .skip_while(|v| **v != value)
        .any(stores_global);
    store_blocks.iter().any(|b| {
        let reached = from_load.contains(b) || (*b == load_block && after_load_in_its_block);
        reached && (to_header.contains(b) || *b == l.header)
    })
}

/// The identifier-like words of `text`: every name a use of a variable in it can be (and
/// more: the parts of numbered and member names).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

impl AtLoop {
    /// The stale symbols that the loop `l`'s report texts `texts` name; `line` gives a
    /// value's source line. Only [`AtLoop::text`] of those texts is meaningful.
    pub fn of(
        func: &Function,
        rec: &Reconstruction,
        definitions: &Definitions,
        symbols: &FunctionSymbols,
        l: &Loop,
        line: &dyn Fn(frontend::ir::Value) -> u32,
        texts: &[&str],
    ) -> AtLoop {
        let mut staleness = Staleness {
            func,
            rec,
            definitions,
            symbols,
            l,
            known: HashMap::new(),
        };
        let mut rewrite = HashMap::new();
        // Plain variables first: a compound name is stale when it embeds one of them.
        let named: std::collections::BTreeSet<&str> = texts.iter().flat_map(|t| words(t)).collect();
        let stale: Vec<Found> = named.iter().filter_map(|w| staleness.of(w)).collect();
        let mut stale_globals: Vec<(Var, String, frontend::ir::Value)> = Vec::new();
        // A global's value as a load before the loop read it is stale when the function may
        // store to the global between that load and the loop (`n0 = n; n = 5;`): the loop
        // finds another value in it. It keeps the line it was loaded on.
        // Only the loads the texts name (`n#2`), each looked up by its name: a function with
        // a load of `n` per loop would otherwise look at every load at every loop.
        let mut mentioned: Vec<&str> = numbered_names(texts).into_iter().collect();
        mentioned.sort_unstable();
        for token in mentioned {
            let Some((var, value, name)) = symbols.globals.get(token) else {
                continue;
            };
            let Some(stores) =
                loaded_global(func, *value).and_then(|g| symbols.global_stores.get(&g))
            else {
                continue;
            };
            let outside = !l.contains(func.inst(*value).block);
            if outside && stored_before_loop(func, *value, stores, l) {
                stale_globals.push((var.clone(), name.clone(), *value));
            }
        }
        for (var, value, at_entry) in &stale {
            // at_entry = own + c, with c over names the loop sees as meant (an enclosing
            // loop's counter: `wpsi_start + ri - p.ri3`): the old value is own - c.
            let own = Expr::var(var.name());
            // at_entry = -own + c (`i1 = 1 - i1;`, dtaidistance's row swap): own - c negated.
            let replacement = at_entry.as_ref().and_then(|e| {
                let at = |x: i64| {
                    e.substitute(&HashMap::from([(var.clone(), Expr::constant(x))]))
                        .ok()
                };
                let c = at(0)?;
                let a = at(1)?.checked_sub(&c).ok()?.as_integer()?;
                let sign = if a == 1.into() {
                    1
                } else if a == (-1).into() {
                    -1
                } else {
                    return None;
                };
                let linear = Expr::constant(sign)
                    .checked_mul(&own)
                    .ok()?
                    .checked_add(&c)
                    .ok()?;
                if e.checked_sub(&linear).ok()?.as_integer() != Some(0.into()) {
                    return None;
                }
                let vars = c.vars();
                if vars
                    .iter()
                    .any(|v| v == var || staleness.is_stale(v.name()))
                {
                    return None;
                }
                Expr::constant(sign)
                    .checked_mul(&own.checked_sub(&c).ok()?)
                    .ok()
            });
            rewrite.insert(
                var.clone(),
                replacement.unwrap_or_else(|| marked(var.name(), line(*value))),
            );
        }
        // The compound names the texts hold (longest first, as `by_names` takes them).
        let present = symbols.compounds_in(&named, texts);
        for (var, value) in &present {
            let name = var.name();
            let Some(v) = *value else { continue };
            if rewrite.contains_key(var) {
                continue;
            }
            let embeds_a_stale_name =
                words(name).any(|w| mentions(name, w) && staleness.is_stale(w));
            if !embeds_a_stale_name || !embeds_stale(func, rec, definitions, l, v) {
                continue;
            }
            // The local the value was stored in names it well (`p` for
            // `p = *factors++`), when the loop finds that value in it.
            let holder = func.inst(v).origin.var_name.clone().filter(|held| {
                is_identifier(held)
                    && !staleness.is_stale(held)
                    && value_at_entry(func, rec, definitions, l, held, var).is_none_or(|x| x == v)
            });
            rewrite.insert(
                var.clone(),
                holder
                    .map(|h| Expr::var(&h))
                    .unwrap_or_else(|| marked(name, line(v))),
            );
        }
        // A stale global's load (`n#2`) is marked by the global's name and its line.
        for (var, name, value) in &stale_globals {
            rewrite.insert(var.clone(), marked(name, line(*value)));
        }
        let mut compound: Vec<String> = if rewrite.is_empty() {
            Vec::new()
        } else {
            present
                .iter()
                .map(|(var, _)| var.name().to_string())
                .collect()
        };
        if !stale_globals.is_empty() {
            compound.extend(
                stale_globals
                    .iter()
                    .map(|(var, _, _)| var.name().to_string()),
            );
            compound.sort_by(|a, b| {
                (std::cmp::Reverse(a.len()), a).cmp(&(std::cmp::Reverse(b.len()), b))
            });
        }
        AtLoop { rewrite, compound }
    }

    pub fn is_empty(&self) -> bool {
        self.rewrite.is_empty()
    }

    /// A report quantity with the stale symbols rewritten; as it is when it names none.
    pub fn quantity(&self, q: &Quantity) -> Quantity {
        if self.rewrite.is_empty() {
            return q.clone();
        }
        match q.expr() {
            Some(expr) if !expr.vars().iter().any(|v| self.rewrite.contains_key(v)) => q.clone(),
            Some(expr) => expr.substitute(&self.rewrite).map_or_else(
                |_| Quantity::c_text(self.by_names(q.text())),
                |e| Quantity::of(&e),
            ),
            // C text the engine does not hold: by its names.
            None => Quantity::c_text(self.by_names(q.text())),
        }
    }

    /// [`Self::text`] on the text: every compound symbol name found in it is one name (a
    /// stale one is replaced by its marked form, the others kept whole), and a stale plain
    /// name elsewhere becomes its rewriting in parentheses.
    fn by_names(&self, text: &str) -> String {
        let mut kept: Vec<String> = Vec::new();
        let mut out = text.to_string();
        for name in &self.compound {
            if !out.contains(name.as_str()) {
                continue;
            }
            let whole = match self.rewrite.get(&Var::new(name)) {
                Some(marked) => marked.to_c(),
                None => name.clone(),
            };
            out = out.replace(name.as_str(), &format!("\u{1}{}\u{1}", kept.len()));
            kept.push(whole);
        }
        // Each stale name becomes a placeholder first, so that no rewriting is rewritten
        // again (one stale name's value may be written with another's).
        for (var, replacement) in &self.rewrite {
            let name = var.name();
            if is_identifier(name) {
                out = replace_word(&out, name, &format!("\u{1}{}\u{1}", kept.len()));
                kept.push(format!("({})", replacement.to_c()));
            }
        }
        for (k, whole) in kept.iter().enumerate() {
            out = out.replace(&format!("\u{1}{k}\u{1}"), whole);
        }
        out
    }
}

/// `text` with every whole-word use of the variable `name` (not a member, not part of a
/// longer name) replaced by `by`.
fn replace_word(text: &str, name: &str, by: &str) -> String {
    let mut out = String::new();
    let mut from = 0;
    while let Some(k) = text[from..].find(name) {
        let start = from + k;
        let end = start + name.len();
        out.push_str(&text[from..start]);
        if is_use(text, start, end) {
            out.push_str(by);
        } else {
            out.push_str(name);
        }
        from = end;
    }
    out.push_str(&text[from..]);
    out
}

/// Whether `text[start..end]` is a use of a variable: a whole word, not a member.
fn is_use(text: &str, start: usize, end: usize) -> bool {
    // `i#2` and `n@6` are names of their own (numbered and qualified symbols).
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || "_#@".contains(c));
    let member = text[..start].ends_with('.') || text[..start].ends_with("->");
    !word(text[..start].chars().next_back()) && !word(text[end..].chars().next()) && !member
}

/// Whether the value `v` (a load, say) is computed from a named variable's value that is
/// not the one the variable holds when `l` starts: the name in its text would then be read
/// as another value. The operands are followed through the computation of its address
/// (at most [`MAX_OPERANDS`] values).
fn embeds_stale(
    func: &Function,
    rec: &Reconstruction,
    definitions: &Definitions,
    l: &Loop,
    v: frontend::ir::Value,
) -> bool {
    let mut stack = func.inst(v).kind.operands();
    let mut seen = std::collections::HashSet::new();
    while let Some(x) = stack.pop() {
        if !seen.insert(x) || seen.len() > MAX_OPERANDS {
            // Too large to tell: named as it is (what the report did before).
            return false;
        }
        let inst = func.inst(x);
        // A value of the loop's own iterations is what its name means in the loop
        // (`H->i[i + 1]` with the loop's `i`).
        let outside = !l.contains(inst.block);
        if let Some(name) = inst
            .origin
            .var_name
            .as_deref()
            .filter(|n| outside && is_identifier(n) && definitions.assigned_again(n))
        {
            let own = rec.symbol(x).cloned().unwrap_or_else(|| Var::new(""));
            if let Some(entry) = value_at_entry(func, rec, definitions, l, name, &own) {
                if entry != x && rec.single(entry) != rec.single(x) {
                    return true;
                }
            }
        }
        if !matches!(inst.kind, frontend::ir::InstKind::Phi(_)) {
            stack.extend(inst.kind.operands());
        }
    }
    false
}

/// Most values [`embeds_stale`] follows.
const MAX_OPERANDS: usize = 64;

/// The symbol `name` as the value it had at `line` before the loop changed it: `n@L3`, a
/// name no C scope declares and no port writes as `n` (unlike `n@3`, a value the loop
/// itself computes at line 3, see `present`).
fn marked(name: &str, line: u32) -> Expr {
    Expr::var(&format!("{name}@L{line}"))
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether the C text `text` uses the variable `name` (not a member or a longer name).
fn mentions(text: &str, name: &str) -> bool {
    let mut from = 0;
    while let Some(k) = text[from..].find(name) {
        let start = from + k;
        let end = start + name.len();
        if is_use(text, start, end) {
            return true;
        }
        from = end;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{mentions, replace_word};

    #[test]
    fn a_name_is_mentioned_as_a_whole_word_and_not_as_a_member() {
        assert!(mentions(
            "children[stack[stack_size - 1]].nChild",
            "stack_size"
        ));
        assert!(mentions("children[stack[stack_size - 1]].nChild", "stack"));
        assert!(!mentions(
            "children[stack[stack_size - 1]].nChild",
            "nChild"
        ));
        assert!(!mentions("s->n", "n"));
        assert!(!mentions("nodes[k]", "node"));
        assert!(!mentions("512*i#2", "i"));
    }

    #[test]
    fn a_rewriting_is_not_rewritten_again() {
        use super::{AtLoop, Quantity};
        use symbolic::{Expr, Var};
        // `n` is written with `m`, and `m` is stale too: each is replaced once, and the
        // compound name `a[k].len` stays whole.
        let at = AtLoop {
            rewrite: [
                (Var::new("n"), symbolic::parse_expr("m - 1").unwrap()),
                (Var::new("m"), Expr::var("m@L4")),
            ]
            .into_iter()
            .collect(),
            compound: vec!["a[k].len".to_string()],
        };
        // By its text where the engine does not hold it (a name with brackets)...
        let text = Quantity::read("a[k].len + n + m");
        assert!(text.expr().is_none());
        assert_eq!(at.quantity(&text).text(), "a[k].len + (m - 1) + (m@L4)");
        // ... and as an expression where it does: one substitution of both at once.
        let typed = Quantity::of(&Expr::var("n").checked_add(&Expr::var("m")).unwrap());
        let rewritten = at.quantity(&typed);
        let expected = Expr::var("m")
            .checked_add(&Expr::var("m@L4"))
            .and_then(|e| e.checked_sub(&Expr::constant(1)))
            .unwrap();
        assert_eq!(rewritten.expr(), Some(&expected));
        assert_eq!(rewritten.text(), expected.to_c());
    }

    #[test]
    fn a_stale_name_is_replaced_where_it_is_a_variable() {
        assert_eq!(
            replace_word("4*n + s->n + nn + n", "n", "(n + 1)"),
            "4*(n + 1) + s->n + nn + (n + 1)"
        );
    }
}
