//! Whole objects: where the program allocates the memory a loop gathers from through
//! data-dependent indices, and the object's size in names visible at the loop. No subscript
//! bounds such a gather (`concs[mats[j]]`); a human porter maps the whole allocation, and
//! so does the report, when every store of the pointer, program-wide, is an allocation
//! whose size the program keeps where the loop can read it.

use crate::model::{Quantity, WholeObject};
use crate::program::{FuncRef, ProgramView};
use crate::program_facts::{Allocations, Keeper, SizeTerm};
use analyses::symbols::SymbolOrigin;
use frontend::ir::{BinOp, Callee, Constant, Function, InstKind, Slot, Terminator, Value};
use std::collections::HashMap;

/// Wrappers of wrappers followed at most this deep (`xmalloc` around `malloc`).
const DEPTH: usize = 4;

/// The whole object behind the base pointer `origin` (a symbol's origin in `func`, named
/// `name` in the report) of a loop of unit `unit`; `Err` says why there is none.
pub fn at_loop(
    view: &ProgramView,
    unit: usize,
    func: &Function,
    origin: Option<&SymbolOrigin>,
    name: &str,
) -> Result<WholeObject, String> {
    let program = &view.unit(unit).lowered.program;
    match origin {
        // A fixed-size array is not asked about: the ports map it whole by its name, and
        // the report's notes already say its section is unknown statically.
        Some(SymbolOrigin::Load { address, .. }) => match &func.inst(*address).kind {
            InstKind::FieldAddr { base, field, .. } => {
                let record = record_name(view, unit, func, *base)
                    .ok_or_else(|| format!("`{name}` is not a field of a named struct"))?;
                of_member(view, unit, record, field, name)
            }
            InstKind::GlobalAddr(g) => {
                let global = program.global(*g);
                if global.is_static || global.local_to.is_some() {
                    return Err(format!("`{name}` is a static variable"));
                }
                kept_object(view, unit, &Keeper::Global(global.name.clone()), None)
            }
            _ => Err(format!("`{name}` is not kept in a field or a global")),
        },
        Some(SymbolOrigin::Param(i)) => {
            let at = passed_objects(view, unit, func, *i as usize, name, PASSED_ON)?;
            let (size, sites) = at;
            Ok(WholeObject {
                allocated_at: sites,
                size: Quantity::of(&symbolic::Expr::integer(size.into())),
                reads: Vec::new(),
            })
        }
        _ => Err(format!("`{name}` is not a pointer kept in memory")),
    }
}

/// The whole object a pointer kept at `keeper` points to, with its size in the names the
/// loop reads (`prefix` in front of a field's struct: `data.` for `data.concs`); `Err`
/// says why there is none.
fn kept_object(
    view: &ProgramView,
    unit: usize,
    keeper: &Keeper,
    prefix: Option<&str>,
) -> Result<WholeObject, String> {
    let program = &view.unit(unit).lowered.program;
    let found = view.allocations_of(keeper, || allocations(view, keeper));
    let found = found.as_ref().as_ref().map_err(|e| e.clone())?;
    let mut reads = Vec::new();
    let size = size_expr(&found.size, prefix, &mut reads)?;
    for read in &reads {
        let visible = read.contains('.')
            || read.contains("->")
            || program
                .globals
                .iter()
                .any(|g| &g.name == read && g.local_to.is_none());
        if !visible {
            return Err(format!(
                "the size reads `{read}`, which the loop's file does not declare"
            ));
        }
    }
    reads.sort();
    reads.dedup();
    Ok(WholeObject {
        allocated_at: found.sites.clone(),
        size: Quantity::of(&size),
        reads,
    })
}

/// The whole object behind `name`, a pointer member `field` of a struct of type `record`
/// that the loop names (`data.concs`, reached by a callee through the caller's `data`).
pub fn of_member(
    view: &ProgramView,
    unit: usize,
    record: String,
    field: &str,
    name: &str,
) -> Result<WholeObject, String> {
    let prefix = name
        .strip_suffix(field)
        .filter(|p| p.ends_with('.') || p.ends_with("->"))
        .ok_or_else(|| format!("`{name}` does not name its field `{field}`"))?;
    let keeper = Keeper::Field {
        record,
        field: field.to_string(),
    };
    kept_object(view, unit, &keeper, Some(prefix))
}

/// How many calls a pointer may be passed on through, each caller's own parameter handed
/// to the callee unchanged (NPB CG: `main` → `makea` → `sparse`), before the search stops.
const PASSED_ON: usize = 4;

/// The size of the object every call site passes as parameter `position` of `func` (NPB's
/// `conj_grad(colidx, rowstr, ..., a, ...)` with file-scope arrays): the start of a
/// fixed-size array, a pointer kept where every allocation has one constant size, or the
/// caller's own parameter, whose callers are asked the same (up to `depth` calls up). A
/// size the callee cannot name (another function's variables) is no answer, and neither is
/// a function whose address is taken (a call through a pointer is not seen).
fn passed_objects(
    view: &ProgramView,
    unit: usize,
    func: &Function,
    position: usize,
    name: &str,
    depth: usize,
) -> Result<(u64, Vec<String>), String> {
    let f = view
        .resolve(unit, &func.name)
        .filter(|f| std::ptr::eq(view.function(*f), func))
        .ok_or_else(|| format!("`{}` is not a function of the program", func.name))?;
    let calls = view.call_index();
    if calls.address_taken.contains(&f) {
        return Err(format!("`{}` may be called through a pointer", func.name));
    }
    let sites = calls
        .callers
        .get(&f)
        .filter(|c| !c.is_empty())
        .ok_or_else(|| format!("no call of `{}` in the analysed files", func.name))?;
    let mut size: Option<u64> = None;
    let mut at = Vec::new();
    for (caller, args) in sites {
        let cfunc = view.function(*caller);
        let program = view.program(*caller);
        let arg = *args
            .get(position)
            .ok_or_else(|| format!("a call of `{}` passes no `{name}`", func.name))?;
        let leaves = crate::merged::leaves(cfunc, arg)
            .ok_or_else(|| format!("`{name}` is passed a value merged from too many"))?;
        for leaf in leaves {
            if crate::merged::is_null(cfunc, leaf) {
                continue;
            }
            let (bytes, where_) = match &cfunc.inst(leaf).kind {
                InstKind::GlobalAddr(_) | InstKind::SlotAddr(_) => {
                    let ty = cfunc.inst(leaf).ty;
                    let object = program.types.pointee(ty).unwrap_or(ty);
                    let bytes = program
                        .types
                        .array_elem(object)
                        .and(program.types.size_of(object))
                        .filter(|b| *b > 0)
                        .ok_or_else(|| format!("`{name}` is passed an object of no fixed size"))?;
                    let at = site(view, caller.unit, cfunc.inst(leaf).origin.span)
                        .map(|s| format!("{s} (the array the call there passes)"));
                    (bytes, at)
                }
                // The caller's own parameter, passed on unchanged: its callers decide.
                InstKind::Param(k) if depth > 0 => {
                    let (bytes, sites) =
                        passed_objects(view, caller.unit, cfunc, *k as usize, name, depth - 1)?;
                    for w in sites.iter().skip(1) {
                        if !at.contains(w) {
                            at.push(w.clone());
                        }
                    }
                    (bytes, sites.into_iter().next())
                }
                InstKind::Load { addr } => {
                    let keeper = match &cfunc.inst(*addr).kind {
                        InstKind::FieldAddr { base, field, .. } => Keeper::Field {
                            record: record_name(view, caller.unit, cfunc, *base)
                                .ok_or("a field of an unnamed struct")?,
                            field: field.clone(),
                        },
                        InstKind::GlobalAddr(g)
                            if !program.global(*g).is_static
                                && program.global(*g).local_to.is_none() =>
                        {
                            Keeper::Global(program.global(*g).name.clone())
                        }
                        _ => {
                            return Err(format!("`{name}` is passed a pointer not kept in memory"))
                        }
                    };
                    let found = view.allocations_of(&keeper, || allocations(view, &keeper));
                    let found = found.as_ref().as_ref().map_err(|e| e.clone())?;
                    let SizeTerm::Const(c) = found.size else {
                        return Err(format!(
                            "`{name}` is passed memory of a size `{}` cannot name",
                            func.name
                        ));
                    };
                    let bytes = u64::try_from(c)
                        .ok()
                        .filter(|b| *b > 0)
                        .ok_or("a size not positive")?;
                    (bytes, found.sites.first().cloned())
                }
                _ => {
                    return Err(format!(
                        "`{name}` is passed a pointer that is not a whole object"
                    ))
                }
            };
            match size {
                Some(s) if s != bytes => {
                    return Err(format!(
                        "`{name}` is passed objects of {s} and {bytes} bytes"
                    ));
                }
                _ => size = Some(bytes),
            }
            if let Some(w) = where_ {
                if !at.contains(&w) {
                    at.push(w);
                }
            }
        }
    }
    let size = size.ok_or_else(|| format!("`{name}` is passed only null"))?;
    Ok((size, at))
}

/// The size as a normal-form C expression (`12 * n * 8` is `96*n`), or as written when
/// the engine cannot parse it.
/// `size` as an expression at the loop: a sibling field is `prefix` and its name; `reads`
/// collects the variables it names. Built as an expression, not parsed from text: a name
/// may be one of the analyses' numbered symbols (`data#2.max_num_nucs`), which the report's
/// presentation names afterwards.
fn size_expr(
    size: &SizeTerm,
    prefix: Option<&str>,
    reads: &mut Vec<String>,
) -> Result<symbolic::Expr, String> {
    let overflow = |e: symbolic::SymError| format!("with a size too large to compute ({e})");
    Ok(match size {
        SizeTerm::Const(c) => symbolic::Expr::integer((*c).into()),
        SizeTerm::Sibling(field) => {
            let prefix = prefix.ok_or("the size reads a struct field the loop cannot name")?;
            let name = format!("{prefix}{field}");
            reads.push(name.clone());
            symbolic::Expr::var(&name)
        }
        SizeTerm::Global(name) => {
            reads.push(name.clone());
            symbolic::Expr::var(name)
        }
        SizeTerm::Read(name) => {
            return Err(format!(
                "the size reads `{name}`, which only the allocating code names"
            ))
        }
        SizeTerm::Op(op, a, b) => {
            let (a, b) = (size_expr(a, prefix, reads)?, size_expr(b, prefix, reads)?);
            match op {
                '+' => a.checked_add(&b),
                '-' => a.checked_sub(&b),
                _ => a.checked_mul(&b),
            }
            .map_err(overflow)?
        }
    })
}

/// The C name of the struct type `base` points to.
fn record_name(view: &ProgramView, unit: usize, func: &Function, base: Value) -> Option<String> {
    let types = &view.unit(unit).lowered.program.types;
    let pointee = types.pointee(func.inst(base).ty)?;
    matches!(types.get(pointee), frontend::types::Type::Record(_)).then(|| types.display(pointee))
}

/// `file:line` of a span of unit `unit`.
fn site(view: &ProgramView, unit: usize, span: frontend::ir::Span) -> Option<String> {
    let at = view.unit(unit).resolve(span)?;
    let file = at.path.file_name()?.to_string_lossy().into_owned();
    Some(format!("{file}:{}", at.line))
}

/// Every allocation a pointer kept at `keeper` can hold, program-wide, all of one size;
/// `Err` when some store keeps anything else, the address of the place escapes (a store
/// through it would go unseen), or the allocations' sizes cannot be shown equal.
pub fn allocations(view: &ProgramView, keeper: &Keeper) -> Result<Allocations, String> {
    let shown = match keeper {
        Keeper::Field { field, .. } => format!("`.{field}`"),
        Keeper::Global(name) => format!("`{name}`"),
    };
    let mut found: Vec<Made> = Vec::new();
    for f in view.functions() {
        let func = view.function(f);
        let program = view.program(f);
        let mut users: Option<Vec<Vec<Value>>> = None;
        for b in func.blocks() {
            for &v in &func.block(b).insts {
                let root = match (&func.inst(v).kind, keeper) {
                    (
                        InstKind::FieldAddr { base, field, .. },
                        Keeper::Field { record, field: f2 },
                    ) if field == f2
                        && record_name(view, f.unit, func, *base).as_ref() == Some(record) =>
                    {
                        Some(root_of(func, *base))
                    }
                    (InstKind::GlobalAddr(g), Keeper::Global(name))
                        if &program.global(*g).name == name
                            && !program.global(*g).is_static
                            && program.global(*g).local_to.is_none() =>
                    {
                        None
                    }
                    _ => continue,
                };
                let users = users.get_or_insert_with(|| func.users());
                for &u in &users[v.index()] {
                    let where_ = || {
                        site(view, f.unit, func.inst(u).origin.span)
                            .unwrap_or_else(|| func.name.clone())
                    };
                    match func.inst(u).kind {
                        InstKind::Load { .. } => {}
                        InstKind::Store { addr, value } if addr == v && value != v => {
                            let frame = Frame {
                                func,
                                program,
                                f,
                                root,
                                caller: None,
                            };
                            let leaves = crate::merged::leaves(func, value).ok_or_else(|| {
                                format!("{shown} is assigned a value merged from too many")
                            })?;
                            for leaf in leaves {
                                if crate::merged::is_null(func, leaf) {
                                    continue;
                                }
                                let (size, at) =
                                    allocation(view, &frame, leaf, 0).map_err(|why| {
                                        format!("{shown} is assigned at {} {why}", where_())
                                    })?;
                                let kept = kept_lengths(&frame);
                                let own = match keeper {
                                    Keeper::Field { field, .. } => Some(field.as_str()),
                                    Keeper::Global(_) => None,
                                };
                                found.push(Made {
                                    size: by_lengths(size, &kept, own, 0),
                                    kept,
                                    at,
                                });
                            }
                        }
                        _ => {
                            return Err(format!(
                                "the address of {shown} is taken at {}: a store through it would go unseen",
                                where_()
                            ));
                        }
                    }
                }
            }
        }
    }
    let size = one_size(&found).ok_or_else(|| match found.first() {
        None => format!("no allocation of {shown} in the analysed files"),
        Some(first) => format!(
            "{shown} is allocated with sizes not shown equal ({} and {})",
            first.at,
            found
                .iter()
                .map(|m| m.at.as_str())
                .find(|a| *a != first.at)
                .unwrap_or("?")
        ),
    })?;
    let mut sites: Vec<String> = Vec::new();
    for m in found {
        if !sites.contains(&m.at) {
            sites.push(m.at);
        }
    }
    Ok(Allocations { size, sites })
}

/// One allocation of a kept pointer: its size, the lengths the storing function leaves in
/// the struct's other fields, and where it is made.
struct Made {
    size: SizeTerm,
    kept: HashMap<String, SizeTerm>,
    at: String,
}

/// The size every allocation has: one of theirs (the simplest first) that each equals
/// under the lengths its own storing function leaves in the struct. XSBench allocates
/// `SD.concs` once with `12 * max_num_nucs * 8` bytes and then sets `SD.length_concs` to
/// `SD.length_mats`, which is `12 * SD.max_num_nucs`; its reader of saved data allocates
/// `SD.length_concs * 8`: both are `8 * SD.length_concs` where the loop reads them.
fn one_size(found: &[Made]) -> Option<SizeTerm> {
    let mut candidates: Vec<&SizeTerm> = found.iter().map(|m| &m.size).collect();
    candidates.sort_by_key(|t| nodes(t));
    candidates.dedup();
    candidates.into_iter().find_map(|c| {
        found
            .iter()
            .all(|m| {
                if m.size == *c {
                    return true;
                }
                let same = |t: &SizeTerm| normal(&substitute(t, &m.kept, 0));
                match (same(&m.size), same(c)) {
                    (Some(a), Some(b)) => a == b,
                    _ => false,
                }
            })
            .then(|| c.clone())
    })
}

fn nodes(t: &SizeTerm) -> usize {
    match t {
        SizeTerm::Op(_, a, b) => 1 + nodes(a) + nodes(b),
        _ => 1,
    }
}

/// `t` with each sibling field the storing function sets replaced by what it sets it to,
/// a few levels deep (`length_concs` is `length_mats`, which is `length_num_nucs * ...`).
fn substitute(t: &SizeTerm, kept: &HashMap<String, SizeTerm>, depth: usize) -> SizeTerm {
    match t {
        SizeTerm::Sibling(f) if depth < DEPTH => match kept.get(f) {
            Some(v) => substitute(v, kept, depth + 1),
            None => t.clone(),
        },
        SizeTerm::Op(op, a, b) => SizeTerm::Op(
            *op,
            Box::new(substitute(a, kept, depth)),
            Box::new(substitute(b, kept, depth)),
        ),
        _ => t.clone(),
    }
}

/// The normal form of a size, to compare two: `None` when the engine cannot parse it.
fn normal(t: &SizeTerm) -> Option<String> {
    size_expr(t, Some("self."), &mut Vec::new())
        .ok()
        .map(|e| e.to_c())
}

/// The lengths a function leaves in the struct it stores the pointer into: each field of
/// that struct it assigns exactly once, with the value it assigns (over constants, globals
/// and the struct's other fields). What it assigns twice, or under names the loop cannot
/// read, is left out.
fn kept_lengths(frame: &Frame) -> HashMap<String, SizeTerm> {
    let Some(root) = frame.root else {
        return HashMap::new();
    };
    let func = frame.func;
    let mut stores: HashMap<String, Vec<Value>> = HashMap::new();
    for b in func.blocks() {
        for &v in &func.block(b).insts {
            if let InstKind::Store { addr, value } = func.inst(v).kind {
                if let InstKind::FieldAddr { base, field, .. } = &func.inst(addr).kind {
                    if root_of(func, *base) == root {
                        stores.entry(field.clone()).or_default().push(value);
                    }
                }
            }
        }
    }
    stores
        .into_iter()
        .filter_map(|(field, values)| match values.as_slice() {
            [one] => term(frame, *one).ok().map(|t| (field, t)),
            _ => None,
        })
        .collect()
}

/// Where a struct lives in one function, to tell two fields of the same struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Root {
    Slot(Slot),
    Value(Value),
}

fn root_of(func: &Function, mut v: Value) -> Root {
    loop {
        match func.inst(v).kind {
            InstKind::Cast(inner) => v = inner,
            InstKind::SlotAddr(s) => return Root::Slot(s),
            _ => return Root::Value(v),
        }
    }
}

/// A function whose values a size is read from: the one that stores the pointer (with the
/// struct it stores into), or an allocator it calls, with the call's arguments.
struct Frame<'a> {
    func: &'a Function,
    /// The program of `func`'s unit: its globals.
    program: &'a frontend::ir::Program,
    f: FuncRef,
    root: Option<Root>,
    caller: Option<(&'a Frame<'a>, &'a [Value])>,
}

/// The size of the allocation `v` of `frame` returns, and where it is made.
fn allocation(
    view: &ProgramView,
    frame: &Frame,
    v: Value,
    depth: usize,
) -> Result<(SizeTerm, String), String> {
    let func = frame.func;
    let InstKind::Call {
        callee: Callee::Direct(name),
        args,
    } = &func.inst(v).kind
    else {
        return Err("a pointer that is not a new allocation".into());
    };
    let arg = |i: usize| {
        args.get(i)
            .copied()
            .ok_or_else(|| format!("`{name}` has too few arguments"))
    };
    let mul = |a: SizeTerm, b: SizeTerm| SizeTerm::Op('*', Box::new(a), Box::new(b));
    let at = || site(view, frame.f.unit, func.inst(v).origin.span).unwrap_or_else(|| name.clone());
    let size = match name.as_str() {
        "malloc" | "valloc" => term(frame, arg(0)?)?,
        "calloc" | "polybench_alloc_data" => mul(term(frame, arg(0)?)?, term(frame, arg(1)?)?),
        "aligned_alloc" | "memalign" | "realloc" => term(frame, arg(1)?)?,
        _ => {
            let callee = view
                .resolve(frame.f.unit, name)
                .filter(|g| depth < DEPTH && view.allocators().contains_key(g))
                .ok_or_else(|| format!("the result of `{name}`, not a new allocation"))?;
            let inner = Frame {
                func: view.function(callee),
                program: view.program(callee),
                f: callee,
                root: None,
                caller: Some((frame, args)),
            };
            let mut found: Option<(SizeTerm, String)> = None;
            for b in inner.func.blocks() {
                let Terminator::Return(Some(r)) = inner.func.block(b).terminator else {
                    continue;
                };
                let leaves = crate::merged::leaves(inner.func, r)
                    .ok_or_else(|| format!("`{name}` returns a value merged from too many"))?;
                for leaf in leaves {
                    if crate::merged::is_null(inner.func, leaf) {
                        continue;
                    }
                    let (s, at) = allocation(view, &inner, leaf, depth + 1)?;
                    match &found {
                        Some((known, _)) if *known != s => {
                            return Err(format!("`{name}` allocates with different sizes"));
                        }
                        Some(_) => {}
                        None => found = Some((s, at)),
                    }
                }
            }
            return found.ok_or_else(|| format!("`{name}` returns no allocation"));
        }
    };
    Ok((size, at()))
}

/// `v` of `frame` as a size over names the loop can read.
fn term(frame: &Frame, v: Value) -> Result<SizeTerm, String> {
    let func = frame.func;
    let op = |c: char, a: Value, b: Value| -> Result<SizeTerm, String> {
        Ok(SizeTerm::Op(
            c,
            Box::new(term(frame, a)?),
            Box::new(term(frame, b)?),
        ))
    };
    match &func.inst(v).kind {
        InstKind::Const(Constant::Int(c)) => Ok(SizeTerm::Const(*c)),
        InstKind::Cast(inner) => term(frame, *inner),
        InstKind::Binary(BinOp::Add, a, b) => op('+', *a, *b),
        InstKind::Binary(BinOp::Sub, a, b) => op('-', *a, *b),
        InstKind::Binary(BinOp::Mul, a, b) => op('*', *a, *b),
        InstKind::Binary(BinOp::Shl, a, b) => match func.const_int(*b) {
            Some(k @ 0..=40) => Ok(SizeTerm::Op(
                '*',
                Box::new(term(frame, *a)?),
                Box::new(SizeTerm::Const(1i128 << k)),
            )),
            _ => Err("with a size shifted by a variable".into()),
        },
        InstKind::Param(i) => match frame.caller {
            Some((caller, args)) => {
                let arg = args
                    .get(*i as usize)
                    .ok_or("with a size from a missing argument")?;
                term(caller, *arg)
            }
            None => Err(format!(
                "with a size that depends on a parameter of `{}`",
                func.name
            )),
        },
        InstKind::Load { addr } => kept_value(frame, *addr),
        _ => match stored_through_parameter(frame, v) {
            // `*max_num_poles = max_poles;` before `malloc(n * max_poles * ...)`: the
            // caller's field the pointer points to keeps the value.
            Some(j) => match frame.caller {
                Some((caller, args)) => {
                    let arg = args.get(j).ok_or("with a size from a missing argument")?;
                    kept_value(caller, *arg)
                }
                None => Err("with a size the program computes and does not keep".into()),
            },
            None => Err("with a size the program computes and does not keep".into()),
        },
    }
}

/// The parameter `j` through which `frame`'s function stores the value `v` where its caller
/// can read it when it returns: the function's one store through that pointer, in a block
/// dominating every return, and the pointer used for nothing else.
fn stored_through_parameter(frame: &Frame, v: Value) -> Option<usize> {
    let func = frame.func;
    let users = func.users();
    let mut store = None;
    for b in func.blocks() {
        for &s in &func.block(b).insts {
            if let InstKind::Store { addr, value } = func.inst(s).kind {
                if value == v && matches!(func.inst(addr).kind, InstKind::Param(_)) {
                    store = Some((s, addr));
                }
            }
        }
    }
    let (store, pointer) = store?;
    let InstKind::Param(j) = func.inst(pointer).kind else {
        return None;
    };
    if users[pointer.index()].as_slice() != [store] {
        return None;
    }
    let dominators = frontend::ir::dominators::Dominators::of(func);
    let at = func.inst(store).block;
    func.blocks()
        .filter(|b| matches!(func.block(*b).terminator, Terminator::Return(_)))
        .all(|b| dominators.dominates(at, b))
        .then_some(j as usize)
}

/// Field `field` of the struct at `base` of `frame`, where that struct is a parameter the
/// function received by value and never writes: the same field of what its caller passed,
/// or, in the storing function, a value only a sibling length can name.
fn passed_struct_field(frame: &Frame, base: Value, field: &str) -> Result<SizeTerm, String> {
    let func = frame.func;
    let cannot = || Err("with a size read from memory the loop cannot name".to_string());
    let Root::Slot(slot) = root_of(func, base) else {
        return cannot();
    };
    let Some(param) = read_only_parameter(func, slot) else {
        return cannot();
    };
    match frame.caller {
        Some((caller, args)) => {
            let arg = args
                .get(param)
                .ok_or("with a size from a missing argument")?;
            let InstKind::Load { addr } = caller.func.inst(*arg).kind else {
                return cannot();
            };
            if caller.root.is_some() && caller.root == Some(root_of(caller.func, addr)) {
                return Ok(SizeTerm::Sibling(field.to_string()));
            }
            passed_struct_field(caller, addr, field)
        }
        None => Ok(SizeTerm::Read(format!(
            "{}.{field}",
            func.slots[slot.index()].name
        ))),
    }
}

/// The parameter a struct slot holds when the function only reads it: one store, of the
/// parameter itself, and otherwise loads of it or of its fields.
fn read_only_parameter(func: &Function, slot: Slot) -> Option<usize> {
    let users = func.users();
    let mut param = None;
    for b in func.blocks() {
        for &v in &func.block(b).insts {
            if func.inst(v).kind != InstKind::SlotAddr(slot) {
                continue;
            }
            for &u in &users[v.index()] {
                match &func.inst(u).kind {
                    InstKind::Load { .. } => {}
                    InstKind::Store { addr, value } if *addr == v => {
                        match (func.inst(*value).kind.clone(), param) {
                            (InstKind::Param(i), None) => param = Some(i as usize),
                            _ => return None,
                        }
                    }
                    InstKind::FieldAddr { .. } => {
                        let loads_only = users[u.index()]
                            .iter()
                            .all(|x| matches!(func.inst(*x).kind, InstKind::Load { .. }));
                        if !loads_only {
                            return None;
                        }
                    }
                    _ => return None,
                }
            }
        }
    }
    param
}

/// `size` with the values only the storing function names (`input.n_nuclides`) replaced
/// by a sibling length it sets to a factor of the size: RSBench allocates
/// `input.n_nuclides * sizeof(int)` bytes and sets `SD.length_n_windows = input.n_nuclides`,
/// so the size is `4 * length_n_windows`. A size without such values is left as it is.
fn by_lengths(
    size: SizeTerm,
    kept: &HashMap<String, SizeTerm>,
    own: Option<&str>,
    depth: usize,
) -> SizeTerm {
    if !reads_local(&size) || depth >= DEPTH {
        return size;
    }
    let Some((constant, factors)) = product(&size) else {
        return size;
    };
    let mut fields: Vec<&String> = kept.keys().collect();
    fields.sort();
    // The length that stands for the most of the size's names (`length_poles` for
    // `n_nuclides * max_poles`, not `length_n_windows` for `n_nuclides` alone); of equal
    // ones, the one named after the pointer's own field (`length_n_windows`, not the
    // equal `length_n_poles`, for `n_windows`).
    let named = |field: &str| own.is_some_and(|own| field.contains(own));
    let mut best: Option<(usize, &String, i128, Vec<SizeTerm>)> = None;
    for field in fields {
        let length = &kept[field];
        if !reads_local(length) {
            continue;
        }
        let Some((divisor, needed)) = product(length) else {
            continue;
        };
        if divisor == 0 || constant % divisor != 0 {
            continue;
        }
        let mut rest = factors.clone();
        let contained = needed
            .iter()
            .all(|x| match rest.iter().position(|y| y == x) {
                Some(at) => {
                    rest.remove(at);
                    true
                }
                None => false,
            });
        let better = |b: &(usize, &String, i128, Vec<SizeTerm>)| {
            needed.len() > b.0 || (needed.len() == b.0 && named(field) && !named(b.1))
        };
        if contained && best.as_ref().is_none_or(better) {
            best = Some((needed.len(), field, constant / divisor, rest));
        }
    }
    let Some((_, field, constant, rest)) = best else {
        return size;
    };
    let mut rebuilt = SizeTerm::Op(
        '*',
        Box::new(SizeTerm::Const(constant)),
        Box::new(SizeTerm::Sibling(field.clone())),
    );
    for f in rest {
        rebuilt = SizeTerm::Op('*', Box::new(rebuilt), Box::new(f));
    }
    by_lengths(rebuilt, kept, own, depth + 1)
}

fn reads_local(t: &SizeTerm) -> bool {
    match t {
        SizeTerm::Read(_) => true,
        SizeTerm::Op(_, a, b) => reads_local(a) || reads_local(b),
        _ => false,
    }
}

/// A product of constants and names as (the constants' product, the names); `None` for a
/// sum or difference.
fn product(t: &SizeTerm) -> Option<(i128, Vec<SizeTerm>)> {
    match t {
        SizeTerm::Const(c) => Some((*c, Vec::new())),
        SizeTerm::Op('*', a, b) => {
            let (ca, mut fa) = product(a)?;
            let (cb, fb) = product(b)?;
            fa.extend(fb);
            Some((ca.checked_mul(cb)?, fa))
        }
        SizeTerm::Op(..) => None,
        name => Some((1, vec![name.clone()])),
    }
}

/// The value loaded from `addr` of `frame`, when the loop can read the same place: a field
/// of the struct the pointer is stored into, a global, or (in an allocator) what a pointer
/// argument points to.
fn kept_value(frame: &Frame, addr: Value) -> Result<SizeTerm, String> {
    let func = frame.func;
    let program = frame.program;
    match &func.inst(addr).kind {
        InstKind::FieldAddr { base, field, .. }
            if frame.root.is_some() && frame.root == Some(root_of(func, *base)) =>
        {
            Ok(SizeTerm::Sibling(field.clone()))
        }
        InstKind::FieldAddr { base, field, .. } => passed_struct_field(frame, *base, field),
        InstKind::GlobalAddr(g) => {
            let global = program.global(*g);
            if global.is_static || global.local_to.is_some() {
                return Err(format!(
                    "with a size read from the static `{}`",
                    global.name
                ));
            }
            Ok(SizeTerm::Global(global.name.clone()))
        }
        InstKind::Param(i) => match frame.caller {
            // `*max_num_nucs` in an allocator that received `&SD.max_num_nucs`.
            Some((caller, args)) => {
                let arg = args
                    .get(*i as usize)
                    .ok_or("with a size from a missing argument")?;
                kept_value(caller, *arg)
            }
            None => Err("with a size read through a pointer parameter".into()),
        },
        InstKind::Cast(inner) => kept_value(frame, *inner),
        _ => Err("with a size read from memory the loop cannot name".into()),
    }
}
