//! Printing the CDFG: a readable text form (used by `warpwise ir` and the snapshot tests),
//! Graphviz dot, and rendering of SSA values back to source-level C expressions.

use super::{
    BinOp, Block, Callee, Constant, Function, InstKind, Program, Span, Terminator, UnOp, Value,
};
use crate::loops::{LoopForest, Normalizable};
use std::collections::BTreeMap;
use std::fmt::{self, Write};

/// Turns a span into `file:line:col` for printing; `None` for synthesized code.
pub type Locate<'a> = &'a dyn Fn(Span) -> Option<String>;

/// Renders an SSA value as a C expression over source variables (`i*N + j`, `c->data`,
/// `image->width`): names of parameters and locals, constants, operators, field loads.
pub fn render_value(func: &Function, v: Value) -> String {
    render(func, v, 0, 0)
}

fn precedence(op: BinOp) -> u8 {
    match op {
        BinOp::Mul | BinOp::Div | BinOp::Rem => 10,
        BinOp::Add | BinOp::Sub => 9,
        BinOp::Shl | BinOp::Shr => 8,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 7,
        BinOp::Eq | BinOp::Ne => 6,
        BinOp::BitAnd => 5,
        BinOp::BitXor => 4,
        BinOp::BitOr => 3,
    }
}

fn render(func: &Function, v: Value, parent_precedence: u8, depth: u32) -> String {
    if depth > 12 {
        return format!("{v}");
    }
    let inst = func.inst(v);
    // Phis and parameters read as their variable; other values are expanded to their
    // definition so that expressions come out in terms of inbound variables.
    if let (Some(name), InstKind::Phi(_) | InstKind::Param(_) | InstKind::Undef) =
        (&inst.origin.var_name, &inst.kind)
    {
        return name.clone();
    }
    // A call's result kept in a local (`Image *w = clone_image(img)`, `float *m = malloc(..)`
    // through its cast) reads as that local: the source names it so at the loop.
    let call_in_local = match &inst.kind {
        InstKind::Call { .. } => true,
        InstKind::Cast(inner) => matches!(func.inst(*inner).kind, InstKind::Call { .. }),
        _ => false,
    };
    if let (true, Some(name)) = (call_in_local, &inst.origin.var_name) {
        if !name.starts_with('&') {
            return name.clone();
        }
    }
    match &inst.kind {
        InstKind::Const(Constant::Int(c)) => c.to_string(),
        InstKind::Const(Constant::Float(f)) => format!("{f:?}"),
        InstKind::Param(i) => func
            .params
            .get(*i as usize)
            .and_then(|p| p.name.clone())
            .unwrap_or_else(|| format!("arg{i}")),
        InstKind::Cast(inner) => render(func, *inner, parent_precedence, depth + 1),
        InstKind::Unary(op, a) => {
            let sym = match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
                UnOp::BitNot => "~",
            };
            format!("{sym}{}", render(func, *a, 11, depth + 1))
        }
        InstKind::Binary(op, a, b) => {
            let p = precedence(*op);
            let text = format!(
                "{} {} {}",
                render(func, *a, p, depth + 1),
                op.symbol(),
                render(func, *b, p + 1, depth + 1)
            );
            if p < parent_precedence {
                format!("({text})")
            } else {
                text
            }
        }
        InstKind::Load { addr } => render_place(func, *addr, depth + 1),
        InstKind::SlotAddr(s) => format!("&{}", func.slot(*s).name),
        InstKind::FieldAddr { .. } | InstKind::PtrAdd { .. } | InstKind::GlobalAddr(_) => {
            format!("&{}", render_place(func, v, depth + 1))
        }
        InstKind::Select {
            cond,
            then_value,
            else_value,
        } => format!(
            "({} ? {} : {})",
            render(func, *cond, 0, depth + 1),
            render(func, *then_value, 0, depth + 1),
            render(func, *else_value, 0, depth + 1)
        ),
        InstKind::Call {
            callee: Callee::Direct(name),
            args,
        } => {
            let args: Vec<String> = args
                .iter()
                .map(|a| render(func, *a, 0, depth + 1))
                .collect();
            format!("{name}({})", args.join(", "))
        }
        _ => format!("{v}"),
    }
}

/// The object at address `addr` as C: `a[i]`, `c->data`, `s.f`, `*p`.
fn render_place(func: &Function, addr: Value, depth: u32) -> String {
    match &func.inst(addr).kind {
        InstKind::SlotAddr(s) => func.slot(*s).name.clone(),
        InstKind::GlobalAddr(_) => func
            .inst(addr)
            .origin
            .var_name
            .as_deref()
            .unwrap_or("global")
            .trim_start_matches('&')
            .to_string(),
        InstKind::FieldAddr { base, field, .. } => match &func.inst(*base).kind {
            // A field of an array element is `a[i].f`, not `&a[i]->f`.
            InstKind::SlotAddr(_)
            | InstKind::GlobalAddr(_)
            | InstKind::FieldAddr { .. }
            | InstKind::PtrAdd { .. } => {
                format!("{}.{field}", render_place(func, *base, depth + 1))
            }
            _ => format!("{}->{field}", render(func, *base, 12, depth + 1)),
        },
        InstKind::PtrAdd { base, index, scale } => match &func.inst(*base).kind {
            // `row = img + i*n; row[j]` reads as `img[i * n + j]`: pointer arithmetic on the
            // same element type folds into one index; a row of a 2D array (a different
            // scale) keeps its own brackets: `A[i][k]`.
            InstKind::PtrAdd {
                base: inner_base,
                index: inner_index,
                scale: inner_scale,
            } if inner_scale == scale => {
                format!(
                    "{}[{} + {}]",
                    render(func, *inner_base, 12, depth + 1),
                    render(func, *inner_index, 9, depth + 1),
                    render(func, *index, 10, depth + 1)
                )
            }
            // An element of a local, global or member array: `mesh[0]`, `s->lists[c]`, not
            // the address `&mesh[0]` (the array's name is its first element's address in C).
            InstKind::PtrAdd { .. }
            | InstKind::SlotAddr(_)
            | InstKind::GlobalAddr(_)
            | InstKind::FieldAddr { .. } => format!(
                "{}[{}]",
                render_place(func, *base, depth + 1),
                render(func, *index, 0, depth + 1)
            ),
            _ => format!(
                "{}[{}]",
                render(func, *base, 12, depth + 1),
                render(func, *index, 0, depth + 1)
            ),
        },
        _ => format!("*{}", render(func, addr, 11, depth + 1)),
    }
}

/// A linear combination of source expressions with integer coefficients, used to print
/// trip counts like `(2*n + 3) / 4`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinearForm {
    pub terms: BTreeMap<String, i128>,
    pub constant: i128,
}

impl LinearForm {
    pub fn add_constant(mut self, c: i128) -> Self {
        self.constant += c;
        self
    }
    pub fn sub(&self, other: &LinearForm) -> LinearForm {
        self.add_scaled(other, -1)
    }
    fn add_scaled(&self, other: &LinearForm, k: i128) -> LinearForm {
        let mut result = self.clone();
        for (atom, c) in &other.terms {
            *result.terms.entry(atom.clone()).or_insert(0) += c * k;
        }
        result.terms.retain(|_, c| *c != 0);
        result.constant += other.constant * k;
        result
    }
    fn scale(&self, k: i128) -> LinearForm {
        LinearForm::default().add_scaled(self, k)
    }
}

impl fmt::Display for LinearForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (atom, c) in &self.terms {
            let magnitude = c.abs();
            let sign = if *c < 0 { "-" } else { "+" };
            if first {
                if *c < 0 {
                    f.write_str("-")?;
                }
            } else {
                write!(f, " {sign} ")?;
            }
            if magnitude == 1 {
                write!(f, "{atom}")?;
            } else {
                write!(f, "{magnitude}*{atom}")?;
            }
            first = false;
        }
        if first {
            write!(f, "{}", self.constant)
        } else if self.constant > 0 {
            write!(f, " + {}", self.constant)
        } else if self.constant < 0 {
            write!(f, " - {}", -self.constant)
        } else {
            Ok(())
        }
    }
}

/// The linear form of a value in source terms; non-linear parts become atoms.
pub fn linear_form(func: &Function, v: Value) -> Option<LinearForm> {
    linear(func, v, 0)
}

fn linear(func: &Function, v: Value, depth: u32) -> Option<LinearForm> {
    if depth > 16 {
        return None;
    }
    let inst = func.inst(v);
    let atom = |text: String| LinearForm {
        terms: BTreeMap::from([(text, 1)]),
        constant: 0,
    };
    if matches!(
        inst.kind,
        InstKind::Phi(_) | InstKind::Param(_) | InstKind::Undef
    ) {
        return Some(atom(render_value(func, v)));
    }
    match &inst.kind {
        InstKind::Const(Constant::Int(c)) => Some(LinearForm {
            terms: BTreeMap::new(),
            constant: *c,
        }),
        InstKind::Cast(inner) => linear(func, *inner, depth + 1),
        InstKind::Unary(UnOp::Neg, a) => Some(linear(func, *a, depth + 1)?.scale(-1)),
        InstKind::Binary(BinOp::Add, a, b) => {
            Some(linear(func, *a, depth + 1)?.add_scaled(&linear(func, *b, depth + 1)?, 1))
        }
        InstKind::Binary(BinOp::Sub, a, b) => {
            Some(linear(func, *a, depth + 1)?.sub(&linear(func, *b, depth + 1)?))
        }
        InstKind::Binary(BinOp::Mul, a, b) => {
            let (la, lb) = (linear(func, *a, depth + 1)?, linear(func, *b, depth + 1)?);
            if la.terms.is_empty() {
                Some(lb.scale(la.constant))
            } else if lb.terms.is_empty() {
                Some(la.scale(lb.constant))
            } else {
                Some(atom(render_value(func, v)))
            }
        }
        InstKind::Const(Constant::Float(_)) => None,
        _ => Some(atom(render_value(func, v))),
    }
}

fn type_name(program: &Program, ty: crate::types::TypeId) -> String {
    program.types.display(ty)
}

/// Prints a function as text, with the loop forest annotated when given.
pub fn print_function(
    program: &Program,
    func: &Function,
    forest: Option<&LoopForest>,
    locate: Locate,
) -> String {
    print_function_annotated(program, func, forest, locate, &|_| None)
}

/// Per-value text appended to instruction lines by [`print_function_annotated`].
pub type Annotate<'a> = &'a dyn Fn(Value) -> Option<String>;

/// [`print_function`] with `annotate`'s text, if any, after each instruction line (analysis
/// facts for `warpwise ir --annotate`).
pub fn print_function_annotated(
    program: &Program,
    func: &Function,
    forest: Option<&LoopForest>,
    locate: Locate,
    annotate: Annotate,
) -> String {
    let mut out = String::new();
    let params: Vec<String> = func
        .params
        .iter()
        .map(|p| {
            format!(
                "{}: {}",
                p.name.as_deref().unwrap_or("_"),
                type_name(program, p.ty)
            )
        })
        .collect();
    let at = locate(func.name_span)
        .map(|l| format!("  @ {l}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "function {}({}) -> {}{at}",
        func.name,
        params.join(", "),
        type_name(program, func.ret)
    );
    for (i, slot) in func.slots.iter().enumerate() {
        let _ = writeln!(
            out,
            "  slot{i}: {} {}",
            slot.name,
            type_name(program, slot.ty)
        );
    }
    if let Some(forest) = forest {
        print_loops(&mut out, func, forest, locate);
    }
    for b in func.blocks() {
        print_block(&mut out, program, func, b, forest, annotate);
    }
    out
}

fn print_loops(out: &mut String, func: &Function, forest: &LoopForest, locate: Locate) {
    if let Some(reason) = &forest.irreducible {
        let _ = writeln!(out, "  ! {reason}");
    }
    let mut stack: Vec<crate::loops::LoopId> = forest.roots().collect();
    stack.reverse();
    while let Some(id) = stack.pop() {
        let l = forest.loop_(id);
        let indent = "  ".repeat(l.depth as usize);
        let source = l
            .source
            .map(|s| {
                let sl = func.source_loop(s);
                let kind = match sl.kind {
                    super::LoopKind::For => "for",
                    super::LoopKind::While => "while",
                    super::LoopKind::DoWhile => "do",
                };
                let at = locate(sl.keyword_span).unwrap_or_else(|| "?".into());
                let pragmas = if sl.pragmas.is_empty() {
                    String::new()
                } else {
                    format!(" #pragma {}", sl.pragmas.join("; #pragma "))
                };
                format!("{kind} @ {at}{pragmas}")
            })
            .unwrap_or_else(|| "goto loop".into());
        let blocks: Vec<String> = l.blocks.iter().map(|b| b.to_string()).collect();
        let latches: Vec<String> = l.latches.iter().map(|b| b.to_string()).collect();
        let exits: Vec<String> = l.exits.iter().map(|(a, b)| format!("{a}->{b}")).collect();
        let _ = writeln!(
            out,
            "{indent}loop {id} {source}: header {}, latches [{}], exits [{}], blocks [{}]",
            l.header,
            latches.join(", "),
            exits.join(", "),
            blocks.join(", ")
        );
        for iv in &l.induction_variables {
            let _ = writeln!(
                out,
                "{indent}  induction {} = {}: init {}, step {}",
                iv.name.as_deref().unwrap_or("?"),
                iv.phi,
                render_value(func, iv.init),
                iv.step
            );
        }
        if let Some(test) = &l.exit_test {
            let iv = &l.induction_variables[test.iv];
            let lhs = if test.tests_update {
                format!("{} + {}", iv.name.as_deref().unwrap_or("?"), iv.step)
            } else {
                iv.name.clone().unwrap_or_default()
            };
            let _ = writeln!(
                out,
                "{indent}  runs while {lhs} {} {}",
                test.cmp.symbol(),
                render_value(func, test.bound)
            );
        }
        match &l.normalizable {
            Normalizable::Yes => {}
            Normalizable::IfInvariant { loads } => {
                let loads: Vec<String> = loads.iter().map(|v| render_value(func, *v)).collect();
                let _ = writeln!(
                    out,
                    "{indent}  normalizable if invariant: {}",
                    loads.join(", ")
                );
            }
            Normalizable::No { reason } => {
                let _ = writeln!(out, "{indent}  not normalizable: {reason}");
            }
        }
        if !matches!(l.normalizable, Normalizable::No { .. }) {
            if let Some(trips) = crate::loops::trip_count(func, l) {
                let _ = writeln!(out, "{indent}  trip count: {trips}");
            }
        }
        let mut children = l.children.clone();
        children.sort();
        children.reverse();
        stack.extend(children);
    }
}

fn print_block(
    out: &mut String,
    program: &Program,
    func: &Function,
    b: Block,
    forest: Option<&LoopForest>,
    annotate: Annotate,
) {
    let data = func.block(b);
    let preds: Vec<String> = data.preds.iter().map(|p| p.to_string()).collect();
    let mut notes = Vec::new();
    if !preds.is_empty() {
        notes.push(format!("preds {}", preds.join(", ")));
    }
    if let Some(forest) = forest {
        for id in forest.ids() {
            if forest.loop_(id).header == b {
                notes.push(format!("header of {id}"));
            }
        }
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!("    ; {}", notes.join("; "))
    };
    let _ = writeln!(out, "{b}:{notes}");
    for &v in &data.insts {
        let inst = func.inst(v);
        let text = render_inst(program, func, &inst.kind, inst.ty);
        let name = inst
            .origin
            .var_name
            .as_deref()
            .map(|n| format!("    ; {n}"))
            .unwrap_or_default();
        let name = match annotate(v) {
            Some(note) if name.is_empty() => format!("    ; {note}"),
            Some(note) => format!("{name}  {note}"),
            None => name,
        };
        if matches!(inst.kind, InstKind::Store { .. }) || is_void_call(program, func, v) {
            let _ = writeln!(out, "  {text}{name}");
        } else {
            let _ = writeln!(out, "  {v} = {text}{name}");
        }
    }
    let term = match &data.terminator {
        Terminator::Return(Some(v)) => format!("return {v}"),
        Terminator::Return(None) => "return".into(),
        Terminator::Jump(t) => format!("goto {t}"),
        Terminator::Branch {
            cond,
            then_block,
            else_block,
        } => format!("if {cond} then {then_block} else {else_block}"),
        Terminator::Unreachable => "unreachable".into(),
    };
    let _ = writeln!(out, "  {term}");
}

fn is_void_call(program: &Program, func: &Function, v: Value) -> bool {
    let inst = func.inst(v);
    matches!(inst.kind, InstKind::Call { .. })
        && matches!(program.types.get(inst.ty), crate::types::Type::Void)
}

fn render_inst(
    program: &Program,
    func: &Function,
    kind: &InstKind,
    ty: crate::types::TypeId,
) -> String {
    let t = type_name(program, ty);
    match kind {
        InstKind::Param(i) => format!("param {i} : {t}"),
        InstKind::Const(Constant::Int(c)) => format!("const {c} : {t}"),
        InstKind::Const(Constant::Float(f)) => format!("const {f:?} : {t}"),
        InstKind::Undef => format!("undef : {t}"),
        InstKind::Phi(args) => {
            let args: Vec<String> = args.iter().map(|(b, v)| format!("{b}: {v}")).collect();
            format!("phi [{}] : {t}", args.join(", "))
        }
        InstKind::Binary(op, a, b) => format!("{a} {} {b} : {t}", op.symbol()),
        InstKind::Unary(op, a) => {
            let sym = match op {
                UnOp::Neg => "neg",
                UnOp::Not => "not",
                UnOp::BitNot => "bitnot",
            };
            format!("{sym} {a} : {t}")
        }
        InstKind::Cast(a) => format!("cast {a} : {t}"),
        InstKind::Select {
            cond,
            then_value,
            else_value,
        } => format!("select {cond} ? {then_value} : {else_value} : {t}"),
        InstKind::Load { addr } => format!("load {addr} : {t}"),
        InstKind::Store { addr, value } => format!("store {addr}, {value} : {t}"),
        InstKind::PtrAdd { base, index, scale } => {
            format!("ptr_add {base}, {index} * {scale} : {t}")
        }
        InstKind::FieldAddr {
            base,
            field,
            offset,
        } => format!("field_sel {base}, .{field} (+{offset}) : {t}"),
        InstKind::SlotAddr(s) => format!("addr {s} : {t}"),
        InstKind::GlobalAddr(g) => format!(
            "global {} : {t}",
            program
                .globals
                .get(g.index())
                .map(|g| g.name.as_str())
                .unwrap_or("?")
        ),
        InstKind::FuncAddr(name) => format!("function {name} : {t}"),
        InstKind::StringAddr(text) => format!("string {text} : {t}"),
        InstKind::Call { callee, args } => {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            let callee = match callee {
                Callee::Direct(name) => name.clone(),
                Callee::Indirect(v) => format!("*{v}"),
            };
            let _ = func;
            format!("call {callee}({}) : {t}", args.join(", "))
        }
    }
}

/// Prints a function as a Graphviz digraph: one record node per block, loop headers bold.
pub fn print_dot(program: &Program, func: &Function, forest: Option<&LoopForest>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", escape_dot(&func.name));
    let _ = writeln!(
        out,
        "  node [shape=box, fontname=\"monospace\", fontsize=10];"
    );
    for b in func.blocks() {
        let mut text = String::new();
        print_block(&mut text, program, func, b, forest, &|_| None);
        let is_header = forest.is_some_and(|f| f.ids().any(|id| f.loop_(id).header == b));
        let style = if is_header { ", style=bold" } else { "" };
        let label = escape_dot(&text).replace("\\n", "\\l");
        let _ = writeln!(out, "  {b} [label=\"{label}\"{style}];");
        for (i, s) in func.block(b).terminator.successors().iter().enumerate() {
            let edge_label = match (&func.block(b).terminator, i) {
                (Terminator::Branch { .. }, 0) => " [label=\"T\"]",
                (Terminator::Branch { .. }, _) => " [label=\"F\"]",
                _ => "",
            };
            let _ = writeln!(out, "  {b} -> {s}{edge_label};");
        }
    }
    let _ = writeln!(out, "}}");
    out
}

fn escape_dot(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
