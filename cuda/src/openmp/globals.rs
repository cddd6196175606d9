//! Globals on the device: a file-scope variable that a function compiled for the device
//! reads or writes exists on the device only when it is `declare target`, or the device
//! image does not link (`undefined reference to 'ce'`). Each such global gets
//! `#pragma omp declare target link(name)` after its first declaration in every file that
//! declares it (one entity: later redeclarations inherit it), and each kernel that reaches
//! it through a helper maps it (`map(to: ce)`, `tofrom` when a helper stores into it), so
//! that it behaves as any mapped variable: copied when not present, kept by a data region,
//! current with what the host code wrote before the kernel. `link`, not `to`: a `to`
//! global is always present, so a `map` never refreshes it, and clang refuses a `target
//! update` of one that is `static`. A `const` global keeps the values its definition gives
//! it on the device: it is declared `declare target(name)` once and never mapped.

use super::clauses::LoopPort;
use frontend::ir::{Function, InstKind, Program};
use frontend::loop_ref::LoopRef;
use frontend::unit::Unit;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `#pragma omp declare target(name)` (`link(name)` when `link`) after line `line` of a
/// file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DeviceGlobal {
    pub name: String,
    pub line: u32,
    pub link: bool,
}

/// What the device globals of a program's ports need.
#[derive(Debug, Default)]
pub struct GlobalPlan {
    /// Per file, the declarations to make `declare target`.
    pub declare: BTreeMap<PathBuf, Vec<DeviceGlobal>>,
    /// Per port (loop id): the globals it maps `to` and `tofrom` (a scalar the loop also
    /// names is then mapped, not `firstprivate`, so that it and the helpers read one copy).
    pub maps: BTreeMap<LoopRef, (Vec<String>, Vec<String>)>,
    /// Ports that cannot keep a global consistent (loop id, why).
    pub refused: Vec<(LoopRef, String)>,
}

/// What a function reaches: globals, those of them it stores into (through their address
/// or an element or member of it), and its `static` locals.
type Reach = (BTreeSet<String>, BTreeSet<String>, BTreeSet<String>);

/// The globals `f` reaches, and of those the ones it stores into, and the `static` locals
/// it uses.
fn globals_of(program: &Program, f: &Function) -> Reach {
    let mut read = BTreeSet::new();
    let mut written = BTreeSet::new();
    let mut statics = BTreeSet::new();
    let root = |mut v: frontend::ir::Value| loop {
        match &f.inst(v).kind {
            InstKind::GlobalAddr(g) => return Some(*g),
            InstKind::PtrAdd { base, .. } | InstKind::FieldAddr { base, .. } => v = *base,
            InstKind::Cast(a) => v = *a,
            _ => return None,
        }
    };
    for inst in &f.insts {
        match &inst.kind {
            InstKind::GlobalAddr(g) => {
                let g = program.global(*g);
                if g.local_to.is_none() && !g.is_thread_local {
                    read.insert(g.name.clone());
                } else if g.local_to.is_some() {
                    statics.insert(g.name.clone());
                }
            }
            InstKind::Store { addr, .. } => {
                if let Some(g) = root(*addr) {
                    written.insert(program.global(g).name.clone());
                }
            }
            _ => {}
        }
    }
    (read, written, statics)
}

/// Where the first declaration of global `name` in `unit` ends: the user file (joined to
/// `dir` when relative) and the line of its `;`. `None` in a system header or a macro.
fn declaration_end(unit: &Unit, name: &str, dir: Option<&Path>) -> Option<(PathBuf, u32)> {
    let g = unit
        .lowered
        .program
        .globals
        .iter()
        .find(|g| g.name == name && g.local_to.is_none())?;
    let text = unit.preprocessed.text.as_bytes();
    let mut depth = 0i32;
    let mut at = g.span.end as usize;
    while at < text.len() {
        match text[at] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b';' if depth == 0 => break,
            _ => {}
        }
        at += 1;
    }
    let map = &unit.preprocessed.source_map;
    let start = map.locate(g.span.start as usize);
    let end = map.locate(at);
    if at >= text.len() || map.is_system_header(start.file) || start.file != end.file {
        return None;
    }
    let mut path = map.path(end.file).to_path_buf();
    if let (Some(dir), true) = (dir, path.is_relative()) {
        path = dir.join(&path);
    }
    Some((path, end.line))
}

/// Whether a value of type `ty` holds a pointer (itself, or an element or field of it).
fn holds_pointer(
    types: &frontend::types::TypeTable,
    ty: frontend::types::TypeId,
    depth: u32,
) -> bool {
    use frontend::types::Type;
    if depth > 8 {
        return true;
    }
    match types.get(ty) {
        Type::Pointer { .. } => true,
        Type::Array { elem, .. } => holds_pointer(types, *elem, depth + 1),
        Type::Record(r) => types
            .record(*r)
            .fields
            .iter()
            .any(|f| holds_pointer(types, f.ty, depth + 1)),
        _ => false,
    }
}

/// Whether a global `name` is declared in `unit` before `offset` (visible at file scope).
fn visible_at(unit: &Unit, name: &str, offset: u32) -> bool {
    unit.lowered
        .program
        .globals
        .iter()
        .any(|g| g.name == name && g.local_to.is_none() && g.span.start < offset)
}

/// Plans the device globals of `ports`, each with the index of its unit; `units[k]` was
/// read in `dirs[k]`.
pub fn plan_globals(
    units: &[&Unit],
    dirs: &[Option<&Path>],
    ports: &[(&LoopPort, usize)],
) -> GlobalPlan {
    let mut out = GlobalPlan::default();
    // What each program function reaches (the first definition of a name: one program).
    let mut reach: BTreeMap<&str, Reach> = BTreeMap::new();
    let mut constant: BTreeSet<String> = BTreeSet::new();
    let mut pointers: BTreeSet<String> = BTreeSet::new();
    for unit in units {
        let program = &unit.lowered.program;
        for f in &program.functions {
            reach
                .entry(f.name.as_str())
                .or_insert_with(|| globals_of(program, f));
        }
        for g in &program.globals {
            if g.is_const {
                constant.insert(g.name.clone());
            }
            if holds_pointer(&program.types, g.ty, 0) {
                pointers.insert(g.name.clone());
            }
        }
    }
    let mut per_port: Vec<(&LoopPort, usize, BTreeSet<String>, BTreeSet<String>)> = Vec::new();
    let mut device: BTreeSet<String> = BTreeSet::new();
    for &(p, unit) in ports {
        let mut read = BTreeSet::new();
        let mut written = BTreeSet::new();
        let mut statics = BTreeSet::new();
        for f in &p.device_functions {
            if let Some((r, w, s)) = reach.get(f.as_str()) {
                read.extend(r.iter().cloned());
                written.extend(w.iter().cloned());
                statics.extend(s.iter().cloned());
            }
        }
        // A reduction clause privatizes the loop's own references to the variable; a
        // callee's update of it (a reduction the analysis found through the call) would go
        // to the device's one copy, racing, and the clause's result would miss it.
        if let Some(name) = p
            .reduced
            .iter()
            .find(|n| read.contains(*n) || statics.contains(*n))
        {
            out.refused.push((
                p.loop_id.clone(),
                format!(
                    "the reduction on `{name}` is made in a function it calls: an OpenMP `reduction` clause privatizes only the loop's own references to it, so the calls would update the device's one `{name}` concurrently; left on the host (return the value to combine and update `{name}` in the loop to port it)"
                ),
            ));
            continue;
        }
        device.extend(read.iter().cloned());
        per_port.push((p, unit, read, written));
    }
    if device.is_empty() {
        return out;
    }
    for (unit, dir) in units.iter().zip(dirs) {
        for name in &device {
            if let Some((path, line)) = declaration_end(unit, name, *dir) {
                let entry = out.declare.entry(path).or_default();
                let d = DeviceGlobal {
                    name: name.clone(),
                    line,
                    link: !constant.contains(name),
                };
                if !entry.contains(&d) {
                    entry.push(d);
                }
            }
        }
    }
    for (p, unit, read, written) in per_port {
        // What the loop maps itself: its report's sections take in the accesses of the
        // functions it calls, so its own clause covers them (a `link` global may be
        // mapped by sections).
        let own = |n: &String| p.arrays.iter().any(|a| &a.name == n);
        let reached: Vec<&String> = read
            .iter()
            .filter(|n| !constant.contains(*n) && !own(n))
            .collect();
        if let Some(hidden) = reached
            .iter()
            .find(|n| !visible_at(units[unit], n, p.span.start))
        {
            out.refused.push((
                p.loop_id.clone(),
                format!(
                    "a function it calls reaches the global `{hidden}`, which is not declared in this file before the loop: the kernel cannot map it; declare it (`extern`) above the loop"
                ),
            ));
            continue;
        }
        if let Some(pointer) = reached.iter().find(|n| pointers.contains(**n)) {
            out.refused.push((
                p.loop_id.clone(),
                format!(
                    "a function it calls reaches the global `{pointer}`, which holds a pointer: what it points to is not mapped; pass the array to the function instead"
                ),
            ));
            continue;
        }
        let (tofrom, to): (Vec<String>, Vec<String>) = reached
            .into_iter()
            .cloned()
            .partition(|n| written.contains(n));
        if !to.is_empty() || !tofrom.is_empty() {
            out.maps.insert(p.loop_id.clone(), (to, tofrom));
        }
    }
    out
}
