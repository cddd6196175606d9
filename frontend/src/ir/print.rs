//! Rendering SSA values back to source-level C expressions (`i*N + j`, `c->data`) and their
//! linear forms, for reports, trip counts and the listings of `warpwise ir`.

use super::{BinOp, Callee, Constant, Function, InstKind, UnOp, Value};
use std::collections::BTreeMap;
use std::fmt;

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
        InstKind::Cast(inner) => match func.truncations.get(&v) {
            Some(to) => format!("({to})({})", render(func, *inner, 0, depth + 1)),
            None => render(func, *inner, parent_precedence, depth + 1),
        },
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
        InstKind::StringAddr(text) => string_literal(text),
        _ => format!("{v}"),
    }
}

/// A string literal as the source writes it (`"a.c"`), cut after 24 characters
/// (`"%d values from %s and...`): a name a reader recognizes, never SSA numbering.
fn string_literal(text: &str) -> String {
    const SHOWN: usize = 24;
    if text.chars().count() <= SHOWN + 2 {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(SHOWN).collect();
    // Never inside an escape: backslashes at the cut go.
    while cut.ends_with('\\') {
        cut.pop();
    }
    format!("{cut}...\"")
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
        InstKind::Cast(_) if func.truncations.contains_key(&v) => Some(atom(render_value(func, v))),
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
