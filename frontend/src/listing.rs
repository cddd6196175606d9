//! Listings of a function's IR with its loop forest: the readable text form (`warpwise ir`,
//! the snapshot tests) and Graphviz dot. Apart from `ir` because it prints the loop forest,
//! which is computed from the IR.

use crate::ir::print::render_value;
use crate::ir::{
    Block, Callee, Constant, Function, InstKind, LoopKind, Program, Span, Terminator, UnOp, Value,
};
use crate::loops::{trip_count, LoopForest, LoopId, Normalizable};
use std::fmt::Write;

/// Turns a span into `file:line:col` for printing; `None` for synthesized code.
pub type Locate<'a> = &'a dyn Fn(Span) -> Option<String>;

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
    let space = match func.execution {
        crate::ir::ExecutionSpace::Host => "",
        crate::ir::ExecutionSpace::Kernel => "__global__ ",
        crate::ir::ExecutionSpace::Device => "__device__ ",
        crate::ir::ExecutionSpace::HostDevice => "__host__ __device__ ",
    };
    let _ = writeln!(
        out,
        "{space}function {}({}) -> {}{at}",
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
    let mut stack: Vec<LoopId> = forest.roots().collect();
    stack.reverse();
    while let Some(id) = stack.pop() {
        let l = forest.loop_(id);
        let indent = "  ".repeat(l.depth as usize);
        let source = l
            .source
            .map(|s| {
                let sl = func.source_loop(s);
                let kind = match sl.kind {
                    LoopKind::For => "for",
                    LoopKind::While => "while",
                    LoopKind::DoWhile => "do",
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
            Normalizable::IfInvariant { reads } => {
                let reads: Vec<String> = reads.iter().map(|v| render_value(func, *v)).collect();
                let _ = writeln!(
                    out,
                    "{indent}  normalizable if invariant: {}",
                    reads.join(", ")
                );
            }
            Normalizable::No { reason } => {
                let _ = writeln!(out, "{indent}  not normalizable: {reason}");
            }
        }
        if !matches!(l.normalizable, Normalizable::No { .. }) {
            if let Some(trips) = trip_count(func, l) {
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
