//! Expressions: rvalues and lvalues, C conversions, pointer arithmetic scaled to bytes,
//! member access, calls, short-circuit operators and initializers.

use super::builder::VarId;
use super::consteval::{parse_char, parse_float, parse_integer, truncate_to};
use super::{err, Binding, LResult, LocalStorage, Lowerer};
use crate::ir::{
    BinOp, Block, Callee, Constant, IfRegion, InstKind, Span, Terminator, UnOp, Value,
};
use crate::types::{ArrayLen, FloatKind, IntRank, Type, TypeId};
use lang_c::ast;
use lang_c::span::Node;

/// A computed value and its C type at this point (after array decay, the pointer type).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operand {
    pub value: Value,
    pub ty: TypeId,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum PlaceKind {
    Ssa(VarId),
    Mem(Value),
}

/// Something that can be assigned: an SSA variable or a memory address.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place {
    pub kind: PlaceKind,
    pub ty: TypeId,
}

/// The byte distance between consecutive elements of a pointee type.
enum Stride {
    Bytes(u64),
    /// A VLA row: `count` elements of `elem_bytes` each, `count` known at run time.
    Dynamic {
        count: Value,
        elem_bytes: u64,
    },
}

impl<'a> Lowerer<'a> {
    pub fn int_const(&mut self, v: i128, span: Span) -> Operand {
        let ty = self.program.types.int();
        self.const_of(v, ty, span)
    }

    pub fn const_of(&mut self, v: i128, ty: TypeId, span: Span) -> Operand {
        let value = self.fb.emit(InstKind::Const(Constant::Int(v)), ty, span);
        Operand { value, ty }
    }

    /// The type an expression would have, without evaluating it: it is lowered into a
    /// block nothing jumps to, which SSA finishing discards.
    pub fn type_of_expression(&mut self, e: &Node<ast::Expression>) -> LResult<TypeId> {
        if let ast::Expression::Identifier(id) = &e.node {
            if let Some(ty) = self.binding_type(&id.node.name) {
                return Ok(ty);
            }
        }
        let saved = self.fb.current();
        let scratch = self.fb.new_block();
        self.fb.seal(scratch);
        self.fb.switch_to(scratch);
        let result = self.expression_type_in_place(e);
        self.fb.terminate(Terminator::Unreachable, Span::NONE);
        self.fb.switch_to(saved);
        result
    }

    fn expression_type_in_place(&mut self, e: &Node<ast::Expression>) -> LResult<TypeId> {
        // Arrays do not decay under sizeof: ask for the lvalue type when there is one.
        if is_lvalue_form(&e.node) {
            if let Ok(place) = self.lvalue(e) {
                return Ok(place.ty);
            }
        }
        Ok(self.rvalue(e)?.ty)
    }

    fn binding_type(&self, name: &str) -> Option<TypeId> {
        match self.scopes.lookup(name)? {
            Binding::Local { ty, .. }
            | Binding::Global { ty, .. }
            | Binding::Function { ty, .. } => Some(*ty),
            _ => None,
        }
    }

    /// Converts an operand to `to` with C's implicit conversion rules.
    pub fn convert(&mut self, op: Operand, to: TypeId, span: Span) -> Operand {
        if op.ty == to {
            return op;
        }
        let types = &self.program.types;
        let same_repr = match (types.get(op.ty), types.get(to)) {
            (Type::Pointer { .. }, Type::Pointer { .. }) => {
                // Only a change of pointee size matters to the analyses (char* vs int*).
                let a = types.pointee(op.ty).and_then(|p| types.size_of(p));
                let b = types.pointee(to).and_then(|p| types.size_of(p));
                a == b
            }
            (
                Type::Int {
                    rank: ra,
                    signed: sa,
                },
                Type::Int {
                    rank: rb,
                    signed: sb,
                },
            ) => {
                types.size_of(op.ty) == types.size_of(to)
                    && sa == sb
                    && (*ra != IntRank::Bool && *rb != IntRank::Bool)
            }
            (Type::Record(a), Type::Record(b)) => a == b,
            (Type::Array { .. }, _) | (Type::Function { .. }, _) => true,
            _ => false,
        };
        if same_repr {
            return Operand {
                value: op.value,
                ty: to,
            };
        }
        if let (Some(c), true) = (self.fb.func.const_int(op.value), types.is_integer(to)) {
            let v = truncate_to(types, to, c);
            return self.const_of(v, to, span);
        }
        let value = self.fb.emit(InstKind::Cast(op.value), to, span);
        if types.is_float(op.ty) && types.is_integer(to) {
            let name = types.display(to);
            self.fb.func.truncations.insert(value, name);
        } else if types.is_integer(op.ty) && types.is_float(to) {
            self.fb.func.float_promotions.insert(value);
        }
        Operand { value, ty: to }
    }

    /// Value of an expression (arrays decay to pointers, functions to function pointers).
    pub fn rvalue(&mut self, e: &Node<ast::Expression>) -> LResult<Operand> {
        use ast::Expression as E;
        let span: Span = e.span.into();
        if super::stack_exhausted() {
            return super::too_deep(span);
        }
        match &e.node {
            E::Identifier(id) => {
                let name = &id.node.name;
                match self.scopes.lookup(name).cloned() {
                    Some(Binding::EnumConst(v)) => Ok(self.int_const(v, span)),
                    Some(Binding::Function { name, ty }) => {
                        let ptr = self.pointer_type(ty, false, false);
                        let value = self.fb.emit(InstKind::FuncAddr(name), ptr, span);
                        Ok(Operand { value, ty: ptr })
                    }
                    Some(_) => {
                        let place = self.lvalue(e)?;
                        Ok(self.load(place, span))
                    }
                    None if name == "__func__"
                        || name == "__FUNCTION__"
                        || name == "__PRETTY_FUNCTION__" =>
                    {
                        let char_ty = self.program.types.char();
                        let ptr = self.pointer_type(char_ty, true, false);
                        let text = self.in_function.clone().unwrap_or_default();
                        let value = self.fb.emit(InstKind::StringAddr(text), ptr, span);
                        Ok(Operand { value, ty: ptr })
                    }
                    None => err(span, format!("use of undeclared identifier `{name}`")),
                }
            }
            E::Constant(c) => self.constant(&c.node, span),
            E::StringLiteral(s) => {
                let char_ty = self.program.types.char();
                let ptr = self.pointer_type(char_ty, false, false);
                let value = self
                    .fb
                    .emit(InstKind::StringAddr(s.node.join("")), ptr, span);
                Ok(Operand { value, ty: ptr })
            }
            E::Member(_) | E::CompoundLiteral(_) => {
                let place = self.lvalue(e)?;
                Ok(self.load(place, span))
            }
            E::Call(call) => self.call(call, span),
            E::SizeOfTy(_) | E::SizeOfVal(_) | E::AlignOf(_) | E::OffsetOf(_) => {
                let ulong = self.program.types.ulong();
                if let Some(v) = self.const_eval(e) {
                    return Ok(self.const_of(v, ulong, span));
                }
                // sizeof of a VLA is computed at run time.
                let ty = match &e.node {
                    E::SizeOfTy(s) => {
                        let ty = self.type_name(&s.node.0)?;
                        self.evaluate_pending_vla()?;
                        ty
                    }
                    E::SizeOfVal(s) => self.type_of_expression(&s.node.0)?,
                    _ => return err(span, "this offsetof/alignof is not a constant"),
                };
                let size = self.runtime_size_of(ty, span)?;
                Ok(Operand {
                    value: size,
                    ty: ulong,
                })
            }
            E::UnaryOperator(u) => self.unary(u, span),
            E::Cast(c) => {
                let ty = self.type_name(&c.node.type_name)?;
                self.evaluate_pending_vla()?;
                let op = self.rvalue(&c.node.expression)?;
                if matches!(self.program.types.get(ty), Type::Void) {
                    return Ok(Operand {
                        value: op.value,
                        ty,
                    });
                }
                let same = op.ty == ty;
                let converted = self.convert(op, ty, span);
                if !same && converted.value == op.value && self.program.types.is_pointer(ty) {
                    // Keep explicit pointer casts visible in the IR (thesis: `cast type e`).
                    let value = self.fb.emit(InstKind::Cast(op.value), ty, span);
                    return Ok(Operand { value, ty });
                }
                Ok(converted)
            }
            E::BinaryOperator(b) => self.binary(b, span),
            E::Conditional(c) => self.conditional(c, span),
            E::Comma(items) => {
                let mut last = None;
                for item in items.iter() {
                    last = Some(self.rvalue(item)?);
                }
                match last {
                    Some(op) => Ok(op),
                    None => err(span, "empty comma expression"),
                }
            }
            E::VaArg(va) => {
                let ty = self.type_name(&va.node.type_name)?;
                let list = self.rvalue(&va.node.va_list)?;
                let value = self.fb.emit(
                    InstKind::Call {
                        callee: Callee::Direct("__builtin_va_arg".into()),
                        args: vec![list.value],
                    },
                    ty,
                    span,
                );
                Ok(Operand { value, ty })
            }
            E::Statement(stmt) => self.statement_expression(stmt, span),
            E::GenericSelection(g) => {
                let controlling = self.type_of_expression(&g.node.expression)?;
                let controlling = self.decayed(controlling);
                let mut default = None;
                for assoc in &g.node.associations {
                    match &assoc.node {
                        ast::GenericAssociation::Type(t) => {
                            let ty = self.type_name(&t.node.type_name)?;
                            if ty == controlling {
                                return self.rvalue(&t.node.expression);
                            }
                        }
                        ast::GenericAssociation::Default(d) => default = Some(d),
                    }
                }
                match default {
                    Some(d) => self.rvalue(d),
                    None => err(span, "no _Generic association matches"),
                }
            }
        }
    }

    fn decayed(&mut self, ty: TypeId) -> TypeId {
        match self.program.types.get(ty).clone() {
            Type::Array { elem, .. } => self.pointer_type(elem, false, false),
            Type::Function { .. } => self.pointer_type(ty, false, false),
            _ => ty,
        }
    }

    fn constant(&mut self, c: &ast::Constant, span: Span) -> LResult<Operand> {
        match c {
            ast::Constant::Integer(i) => {
                let Some((v, (rank, signed))) = parse_integer(i) else {
                    return err(span, "integer literal is too large");
                };
                let ty = self.program.types.intern(Type::Int { rank, signed });
                Ok(self.const_of(v, ty, span))
            }
            ast::Constant::Character(ch) => match parse_char(ch) {
                Some(v) => Ok(self.int_const(v, span)),
                None => err(span, format!("cannot decode character constant {ch}")),
            },
            ast::Constant::Float(f) => {
                let Some(v) = parse_float(f) else {
                    return err(span, "cannot decode floating literal");
                };
                let kind = match f.suffix.format {
                    ast::FloatFormat::Float => FloatKind::Float,
                    ast::FloatFormat::LongDouble => FloatKind::LongDouble,
                    _ => FloatKind::Double,
                };
                let ty = self.program.types.intern(Type::Float(kind));
                let value = self.fb.emit(InstKind::Const(Constant::Float(v)), ty, span);
                Ok(Operand { value, ty })
            }
        }
    }

    /// Reads a place. Arrays decay to a pointer to their first element.
    pub fn load(&mut self, place: Place, span: Span) -> Operand {
        match place.kind {
            PlaceKind::Ssa(var) => {
                let value = self.fb.use_var(var);
                Operand {
                    value,
                    ty: place.ty,
                }
            }
            PlaceKind::Mem(addr) => match self.program.types.get(place.ty).clone() {
                Type::Array { elem, .. } => {
                    let ty = self.pointer_type(elem, false, false);
                    Operand { value: addr, ty }
                }
                Type::Function { .. } => {
                    let ty = self.pointer_type(place.ty, false, false);
                    Operand { value: addr, ty }
                }
                _ => {
                    let value = self.fb.emit(InstKind::Load { addr }, place.ty, span);
                    if let Some(&(offset, width)) = self.bit_fields.get(&addr) {
                        return self.extract_bits(value, place.ty, offset, width, span);
                    }
                    Operand {
                        value,
                        ty: place.ty,
                    }
                }
            },
        }
    }

    /// The value of the bit-field at `offset`/`width` in its storage unit `unit`.
    fn extract_bits(
        &mut self,
        unit: Value,
        ty: TypeId,
        offset: u32,
        width: u32,
        span: Span,
    ) -> Operand {
        let bits = self.program.types.size_of(ty).unwrap_or(4) as u32 * 8;
        let int = self.program.types.int();
        // Shift the field to the top, then back down: arithmetic for signed fields.
        let up = self.const_of(i128::from(bits - offset - width), int, span);
        let down = self.const_of(i128::from(bits - width), int, span);
        let high = self
            .fb
            .emit(InstKind::Binary(BinOp::Shl, unit, up.value), ty, span);
        let value = self
            .fb
            .emit(InstKind::Binary(BinOp::Shr, high, down.value), ty, span);
        let operand = Operand { value, ty };
        // A bit-field narrower than `int` promotes to `int` (C99 6.3.1.1p2).
        if width < 32 && self.program.types.size_of(ty).unwrap_or(0) <= 4 {
            return self.convert(operand, int, span);
        }
        operand
    }

    /// Stores `value` into the bit-field at `addr`; returns the value the field now holds.
    fn insert_bits(
        &mut self,
        addr: Value,
        value: Operand,
        bits: (u32, u32),
        span: Span,
    ) -> Operand {
        let (offset, width) = bits;
        let ty = value.ty;
        let size = self.program.types.size_of(ty).unwrap_or(4) as u32 * 8;
        let types = &self.program.types;
        let wrap = |v: i128| truncate_to(types, ty, v);
        let field_mask = ((1i128 << width) - 1) << offset;
        let (keep, mask) = (wrap(!field_mask & ((1i128 << size) - 1)), wrap(field_mask));
        let unit = self.fb.emit(InstKind::Load { addr }, ty, span);
        let keep = self.const_of(keep, ty, span);
        let mask = self.const_of(mask, ty, span);
        let int = self.program.types.int();
        let shift = self.const_of(i128::from(offset), int, span);
        let kept = self
            .fb
            .emit(InstKind::Binary(BinOp::BitAnd, unit, keep.value), ty, span);
        let moved = self.fb.emit(
            InstKind::Binary(BinOp::Shl, value.value, shift.value),
            ty,
            span,
        );
        let field = self
            .fb
            .emit(InstKind::Binary(BinOp::BitAnd, moved, mask.value), ty, span);
        let new_unit = self
            .fb
            .emit(InstKind::Binary(BinOp::BitOr, kept, field), ty, span);
        self.fb.emit(
            InstKind::Store {
                addr,
                value: new_unit,
            },
            ty,
            span,
        );
        self.extract_bits(new_unit, ty, offset, width, span)
    }

    pub fn store(&mut self, place: Place, op: Operand, span: Span) -> Operand {
        if let Some(copied) = self.store_complex(&place, op, span) {
            return copied;
        }
        let op = self.convert(op, place.ty, span);
        match place.kind {
            PlaceKind::Ssa(var) => self.fb.def_var(var, op.value),
            PlaceKind::Mem(addr) if self.bit_fields.contains_key(&addr) => {
                let bits = self.bit_fields[&addr];
                return self.insert_bits(addr, op, bits, span);
            }
            PlaceKind::Mem(addr) => {
                self.fb.emit(
                    InstKind::Store {
                        addr,
                        value: op.value,
                    },
                    place.ty,
                    span,
                );
            }
        }
        op
    }

    /// `z = w` for `_Complex` objects: both are laid out as two-element arrays, and the
    /// source has decayed to a pointer to its parts, so the assignment copies the pair
    /// (one load and one store of the whole object, like a struct copy).
    fn store_complex(&mut self, place: &Place, op: Operand, span: Span) -> Option<Operand> {
        let PlaceKind::Mem(addr) = place.kind else {
            return None;
        };
        let types = &self.program.types;
        let Type::Array {
            elem,
            len: crate::types::ArrayLen::Fixed(2),
        } = types.get(place.ty).clone()
        else {
            return None;
        };
        let is_parts = matches!(types.get(elem), Type::Float(_))
            && matches!(types.get(op.ty), Type::Pointer { pointee, .. } if *pointee == elem);
        if !is_parts {
            return None;
        }
        let value = self
            .fb
            .emit(InstKind::Load { addr: op.value }, place.ty, span);
        self.fb
            .emit(InstKind::Store { addr, value }, place.ty, span);
        Some(op)
    }

    /// Marks `addr`, when this lowering created it (its index is `fresh` or later), as
    /// based on the `restrict`-qualified local pointer that `pointer` names, if it names
    /// one. An address the lowering reused (`p[0]` is `p` itself) stays unmarked: it may
    /// be shared with accesses through other names.
    fn note_restrict(&mut self, addr: Value, fresh: usize, pointer: &Node<ast::Expression>) {
        if addr.index() < fresh {
            return;
        }
        let ast::Expression::Identifier(id) = &pointer.node else {
            return;
        };
        let Some((Binding::Local { ty, decl, .. }, scope)) =
            self.scopes.lookup_scoped(&id.node.name)
        else {
            return;
        };
        if !matches!(
            self.program.types.get(*ty),
            Type::Pointer { restrict: true, .. }
        ) {
            return;
        }
        let (name, decl) = (id.node.name.clone(), *decl);
        let table = &mut self.fb.func.restrict_pointers;
        let index = match table
            .iter()
            .position(|p| p.name == name && p.scope == scope)
        {
            Some(i) => i,
            None => {
                table.push(crate::ir::RestrictPointer { name, scope, decl });
                table.len() - 1
            }
        };
        self.fb.func.insts[addr.index()].origin.restrict = Some(index as u32);
    }

    /// The place `*operand` names (`u` is an indirection).
    fn deref_place(
        &mut self,
        u: &Node<ast::UnaryOperatorExpression>,
        span: Span,
    ) -> LResult<Place> {
        let ptr = self.rvalue(&u.node.operand)?;
        match self.program.types.get(ptr.ty).clone() {
            Type::Pointer { pointee, .. } => Ok(Place {
                kind: PlaceKind::Mem(ptr.value),
                ty: pointee,
            }),
            _ => err(span, "dereference of a value that is not a pointer"),
        }
    }

    /// The place `lhs[rhs]` names (`b` is a subscript).
    fn index_place(
        &mut self,
        b: &Node<ast::BinaryOperatorExpression>,
        span: Span,
    ) -> LResult<Place> {
        let lhs = self.rvalue(&b.node.lhs)?;
        let rhs = self.rvalue(&b.node.rhs)?;
        let (ptr, index, pointer_expr) = if self.program.types.is_pointer(lhs.ty) {
            (lhs, rhs, &b.node.lhs)
        } else {
            (rhs, lhs, &b.node.rhs)
        };
        let Some(pointee) = self.program.types.pointee(ptr.ty) else {
            return err(
                span,
                "subscript of a value that is neither array nor pointer",
            );
        };
        let fresh = self.fb.func.insts.len();
        let addr = self.pointer_offset(ptr, index, false, span)?;
        self.note_restrict(addr.value, fresh, pointer_expr);
        Ok(Place {
            kind: PlaceKind::Mem(addr.value),
            ty: pointee,
        })
    }

    /// The place an lvalue expression designates.
    pub fn lvalue(&mut self, e: &Node<ast::Expression>) -> LResult<Place> {
        use ast::Expression as E;
        let span: Span = e.span.into();
        match &e.node {
            E::Identifier(id) => match self.scopes.lookup(&id.node.name).cloned() {
                Some(Binding::Local {
                    storage: LocalStorage::Ssa(var),
                    ty,
                    ..
                }) => Ok(Place {
                    kind: PlaceKind::Ssa(var),
                    ty,
                }),
                Some(Binding::Local {
                    storage: LocalStorage::Slot(slot),
                    ty,
                    ..
                }) => {
                    let addr = self.slot_addr(slot, ty, span);
                    Ok(Place {
                        kind: PlaceKind::Mem(addr),
                        ty,
                    })
                }
                Some(Binding::Global { id: g, ty }) => {
                    let ptr = self.pointer_type(ty, false, false);
                    let addr = self.fb.emit(InstKind::GlobalAddr(g), ptr, span);
                    let name = self.program.globals[g.index()].name.clone();
                    self.fb.name_value(addr, &format!("&{name}"));
                    Ok(Place {
                        kind: PlaceKind::Mem(addr),
                        ty,
                    })
                }
                Some(Binding::Function { name, ty }) => {
                    let ptr = self.pointer_type(ty, false, false);
                    let addr = self.fb.emit(InstKind::FuncAddr(name), ptr, span);
                    Ok(Place {
                        kind: PlaceKind::Mem(addr),
                        ty,
                    })
                }
                Some(_) => err(span, format!("`{}` is not an object", id.node.name)),
                None => err(
                    span,
                    format!("use of undeclared identifier `{}`", id.node.name),
                ),
            },
            E::UnaryOperator(u)
                if matches!(u.node.operator.node, ast::UnaryOperator::Indirection) =>
            {
                self.deref_place(u, span)
            }
            E::BinaryOperator(b) if matches!(b.node.operator.node, ast::BinaryOperator::Index) => {
                self.index_place(b, span)
            }
            E::Member(m) => {
                let (base_addr, record_ty) = match m.node.operator.node {
                    ast::MemberOperator::Direct => {
                        let base = self.lvalue(&m.node.expression)?;
                        match base.kind {
                            PlaceKind::Mem(addr) => (addr, base.ty),
                            PlaceKind::Ssa(_) => {
                                return err(span, "member of a value that is not in memory")
                            }
                        }
                    }
                    ast::MemberOperator::Indirect => {
                        let ptr = self.rvalue(&m.node.expression)?;
                        match self.program.types.pointee(ptr.ty) {
                            Some(pointee) => (ptr.value, pointee),
                            None => return err(span, "`->` on a value that is not a pointer"),
                        }
                    }
                };
                let fresh = self.fb.func.insts.len();
                let Type::Record(record) = self.program.types.get(record_ty).clone() else {
                    return err(
                        span,
                        format!(
                            "member `{}` of a value that is not a struct or union",
                            m.node.identifier.node.name
                        ),
                    );
                };
                let name = &m.node.identifier.node.name;
                let Some(field) = self.program.types.find_field(record, name) else {
                    return err(m.node.identifier.span, format!("no member named `{name}`"));
                };
                let ptr = self.pointer_type(field.ty, false, false);
                let addr = self.fb.emit(
                    InstKind::FieldAddr {
                        base: base_addr,
                        field: name.clone(),
                        offset: field.offset,
                    },
                    ptr,
                    span,
                );
                if let Some(bits) = field.bit_field {
                    self.bit_fields.insert(addr, bits);
                }
                if m.node.operator.node == ast::MemberOperator::Indirect {
                    self.note_restrict(addr, fresh, &m.node.expression);
                }
                Ok(Place {
                    kind: PlaceKind::Mem(addr),
                    ty: field.ty,
                })
            }
            E::CompoundLiteral(c) => {
                let ty = self.type_name(&c.node.type_name)?;
                let init = Node::new(
                    ast::Initializer::List(c.node.initializer_list.clone()),
                    e.span,
                );
                let ty = self.complete_array_from_init(ty, Some(&init));
                let slot = self.new_slot("compound literal", ty, None, span);
                let addr = self.slot_addr(slot, ty, span);
                self.initialize_memory(addr, ty, &init, true)?;
                Ok(Place {
                    kind: PlaceKind::Mem(addr),
                    ty,
                })
            }
            E::StringLiteral(s) => {
                let char_ty = self.program.types.char();
                let len = super::decl::string_literal_len(&s.node) + 1;
                let ty = self.program.types.array_of(char_ty, ArrayLen::Fixed(len));
                let ptr = self.pointer_type(char_ty, false, false);
                let value = self
                    .fb
                    .emit(InstKind::StringAddr(s.node.join("")), ptr, span);
                Ok(Place {
                    kind: PlaceKind::Mem(value),
                    ty,
                })
            }
            E::Statement(_) | E::Call(_) | E::Conditional(_) | E::Comma(_) | E::Cast(_) => {
                // GNU and C allow member access on struct rvalues (`f().x`): spill to a slot.
                let op = self.rvalue(e)?;
                if matches!(self.program.types.get(op.ty), Type::Record(_)) {
                    let slot = self.new_slot("temporary", op.ty, None, span);
                    let addr = self.slot_addr(slot, op.ty, span);
                    self.fb.emit(
                        InstKind::Store {
                            addr,
                            value: op.value,
                        },
                        op.ty,
                        span,
                    );
                    return Ok(Place {
                        kind: PlaceKind::Mem(addr),
                        ty: op.ty,
                    });
                }
                err(span, "expression is not assignable")
            }
            _ => err(span, "expression is not assignable"),
        }
    }

    fn stride(&mut self, pointee: TypeId, span: Span) -> LResult<Stride> {
        if let Some(size) = self.program.types.size_of(pointee) {
            return Ok(Stride::Bytes(size));
        }
        match self.program.types.get(pointee).clone() {
            Type::Array {
                elem,
                len: ArrayLen::Variable(tag),
            } => {
                let Some(&count) = self.vla_lengths.get(&tag) else {
                    return err(span, "length of a variable-length array is not known here");
                };
                match self.stride(elem, span)? {
                    Stride::Bytes(elem_bytes) => Ok(Stride::Dynamic { count, elem_bytes }),
                    Stride::Dynamic {
                        count: inner,
                        elem_bytes,
                    } => {
                        let long = self.program.types.long();
                        let product =
                            self.fb
                                .emit(InstKind::Binary(BinOp::Mul, count, inner), long, span);
                        Ok(Stride::Dynamic {
                            count: product,
                            elem_bytes,
                        })
                    }
                }
            }
            Type::Function { .. } | Type::Void => Ok(Stride::Bytes(1)),
            _ => err(
                span,
                format!(
                    "arithmetic on a pointer to incomplete type `{}`",
                    self.program.types.display(pointee)
                ),
            ),
        }
    }

    /// `sizeof` evaluated at run time (VLAs).
    pub fn runtime_size_of(&mut self, ty: TypeId, span: Span) -> LResult<Value> {
        let ulong = self.program.types.ulong();
        if let Some(size) = self.program.types.size_of(ty) {
            return Ok(self.const_of(i128::from(size), ulong, span).value);
        }
        let Type::Array {
            elem,
            len: ArrayLen::Variable(tag),
        } = self.program.types.get(ty).clone()
        else {
            return err(
                span,
                format!(
                    "size of incomplete type `{}`",
                    self.program.types.display(ty)
                ),
            );
        };
        let Some(&count) = self.vla_lengths.get(&tag) else {
            return err(span, "length of a variable-length array is not known here");
        };
        let elem_size = self.runtime_size_of(elem, span)?;
        Ok(self
            .fb
            .emit(InstKind::Binary(BinOp::Mul, count, elem_size), ulong, span))
    }

    /// `ptr + index` (or `ptr - index`) in bytes: the thesis' `ptr_add`.
    fn pointer_offset(
        &mut self,
        ptr: Operand,
        index: Operand,
        negate: bool,
        span: Span,
    ) -> LResult<Operand> {
        let Some(pointee) = self.program.types.pointee(ptr.ty) else {
            return err(span, "pointer arithmetic on a value that is not a pointer");
        };
        if !self.program.types.is_integer(index.ty) {
            return err(span, "pointer offset is not an integer");
        }
        let long = self.program.types.long();
        let mut index = self.convert(index, long, span);
        if negate {
            let value = self
                .fb
                .emit(InstKind::Unary(UnOp::Neg, index.value), long, span);
            index = Operand { value, ty: long };
        }
        let (index, scale) = match self.stride(pointee, span)? {
            Stride::Bytes(scale) => (index.value, scale),
            Stride::Dynamic { count, elem_bytes } => {
                let scaled =
                    self.fb
                        .emit(InstKind::Binary(BinOp::Mul, index.value, count), long, span);
                (scaled, elem_bytes)
            }
        };
        let value = self.fb.emit(
            InstKind::PtrAdd {
                base: ptr.value,
                index,
                scale,
            },
            ptr.ty,
            span,
        );
        Ok(Operand { value, ty: ptr.ty })
    }

    fn unary(&mut self, u: &Node<ast::UnaryOperatorExpression>, span: Span) -> LResult<Operand> {
        use ast::UnaryOperator as U;
        let operand = &u.node.operand;
        match u.node.operator.node {
            U::Address => {
                if let ast::Expression::Identifier(id) = &operand.node {
                    if let Some(Binding::Function { name, ty }) =
                        self.scopes.lookup(&id.node.name).cloned()
                    {
                        let ptr = self.pointer_type(ty, false, false);
                        let value = self.fb.emit(InstKind::FuncAddr(name), ptr, span);
                        return Ok(Operand { value, ty: ptr });
                    }
                }
                let place = self.lvalue(operand)?;
                match place.kind {
                    PlaceKind::Mem(addr) => {
                        let ty = self.pointer_type(place.ty, false, false);
                        Ok(Operand { value: addr, ty })
                    }
                    PlaceKind::Ssa(_) => err(span, "address of a register variable"),
                }
            }
            U::Indirection => {
                // Not `lvalue` on a copy of the expression: a copy per level made `***p`
                // quadratic in the number of stars.
                let place = self.deref_place(u, u.span.into())?;
                if matches!(self.program.types.get(place.ty), Type::Function { .. }) {
                    // `(*fp)(x)`: dereferencing a function pointer yields the function.
                    if let PlaceKind::Mem(addr) = place.kind {
                        let ty = self.pointer_type(place.ty, false, false);
                        return Ok(Operand { value: addr, ty });
                    }
                }
                Ok(self.load(place, span))
            }
            U::Plus => {
                let op = self.rvalue(operand)?;
                let ty = self.program.types.promote(op.ty);
                Ok(self.convert(op, ty, span))
            }
            U::Minus | U::Complement => {
                let op = self.rvalue(operand)?;
                if !self.program.types.is_arithmetic(op.ty) {
                    return err(span, "arithmetic on a non-arithmetic value");
                }
                let ty = self.program.types.promote(op.ty);
                let op = self.convert(op, ty, span);
                let un = if matches!(u.node.operator.node, U::Minus) {
                    UnOp::Neg
                } else {
                    UnOp::BitNot
                };
                if let Some(c) = self.fb.func.const_int(op.value) {
                    let v = if un == UnOp::Neg {
                        c.wrapping_neg()
                    } else {
                        !c
                    };
                    let v = truncate_to(&self.program.types, ty, v);
                    return Ok(self.const_of(v, ty, span));
                }
                let value = self.fb.emit(InstKind::Unary(un, op.value), ty, span);
                Ok(Operand { value, ty })
            }
            U::Negate => {
                let op = self.rvalue(operand)?;
                let int = self.program.types.int();
                let value = self
                    .fb
                    .emit(InstKind::Unary(UnOp::Not, op.value), int, span);
                Ok(Operand { value, ty: int })
            }
            U::PreIncrement | U::PreDecrement | U::PostIncrement | U::PostDecrement => {
                let place = self.lvalue(operand)?;
                let old = self.load(place, span);
                let one = self.int_const(1, span);
                let increment = matches!(u.node.operator.node, U::PreIncrement | U::PostIncrement);
                let new = if self.program.types.is_pointer(old.ty) {
                    self.pointer_offset(old, one, !increment, span)?
                } else {
                    let op = if increment { BinOp::Add } else { BinOp::Sub };
                    self.arithmetic(op, old, one, span)?
                };
                let stored = self.store(place, new, span);
                Ok(
                    if matches!(u.node.operator.node, U::PreIncrement | U::PreDecrement) {
                        stored
                    } else {
                        old
                    },
                )
            }
        }
    }

    /// Arithmetic on two arithmetic operands after the usual conversions.
    pub fn arithmetic(
        &mut self,
        op: BinOp,
        lhs: Operand,
        rhs: Operand,
        span: Span,
    ) -> LResult<Operand> {
        let types = &mut self.program.types;
        if !types.is_arithmetic(lhs.ty) || !types.is_arithmetic(rhs.ty) {
            return err(
                span,
                format!("operator `{}` on non-arithmetic operands", op.symbol()),
            );
        }
        let ty = match op {
            // Shifts take the promoted type of the left operand.
            BinOp::Shl | BinOp::Shr => types.promote(lhs.ty),
            _ => types.usual_arithmetic(lhs.ty, rhs.ty),
        };
        let lhs = self.convert(lhs, ty, span);
        let rhs = if matches!(op, BinOp::Shl | BinOp::Shr) {
            let rty = self.program.types.promote(rhs.ty);
            self.convert(rhs, rty, span)
        } else {
            self.convert(rhs, ty, span)
        };
        let result_ty = if op.is_comparison() {
            self.program.types.int()
        } else {
            ty
        };
        let value = self
            .fb
            .emit(InstKind::Binary(op, lhs.value, rhs.value), result_ty, span);
        Ok(Operand {
            value,
            ty: result_ty,
        })
    }

    fn binary(&mut self, b: &Node<ast::BinaryOperatorExpression>, span: Span) -> LResult<Operand> {
        use ast::BinaryOperator as B;
        let op = b.node.operator.node.clone();
        match op {
            B::Index => {
                let place = self.index_place(b, b.span.into())?;
                Ok(self.load(place, span))
            }
            B::LogicalAnd | B::LogicalOr => self.short_circuit(b, span),
            B::Assign => {
                let place = self.lvalue(&b.node.lhs)?;
                let value = self.rvalue(&b.node.rhs)?;
                // The store is located at its target (`c->data[i*N+j]`), as reports name it.
                Ok(self.store(place, value, b.node.lhs.span.into()))
            }
            B::AssignMultiply
            | B::AssignDivide
            | B::AssignModulo
            | B::AssignPlus
            | B::AssignMinus
            | B::AssignShiftLeft
            | B::AssignShiftRight
            | B::AssignBitwiseAnd
            | B::AssignBitwiseXor
            | B::AssignBitwiseOr => {
                let place = self.lvalue(&b.node.lhs)?;
                let old = self.load(place, span);
                let rhs = self.rvalue(&b.node.rhs)?;
                let new = self.binary_values(compound_op(&op), old, rhs, span)?;
                Ok(self.store(place, new, b.node.lhs.span.into()))
            }
            _ => {
                let lhs = self.rvalue(&b.node.lhs)?;
                let rhs = self.rvalue(&b.node.rhs)?;
                let Some(bin) = plain_op(&op) else {
                    return err(span, "unsupported binary operator");
                };
                self.binary_values(bin, lhs, rhs, span)
            }
        }
    }

    /// A binary operator on two values, including pointer arithmetic and comparisons.
    fn binary_values(
        &mut self,
        op: BinOp,
        lhs: Operand,
        rhs: Operand,
        span: Span,
    ) -> LResult<Operand> {
        let lp = self.program.types.is_pointer(lhs.ty);
        let rp = self.program.types.is_pointer(rhs.ty);
        match (op, lp, rp) {
            (BinOp::Add, true, false) => self.pointer_offset(lhs, rhs, false, span),
            (BinOp::Add, false, true) => self.pointer_offset(rhs, lhs, false, span),
            (BinOp::Sub, true, false) => self.pointer_offset(lhs, rhs, true, span),
            (BinOp::Sub, true, true) => {
                // (a - b) / sizeof(*a), an exact division.
                let long = self.program.types.long();
                let a = self.fb.emit(InstKind::Cast(lhs.value), long, span);
                let b = self.fb.emit(InstKind::Cast(rhs.value), long, span);
                let diff = self.fb.emit(InstKind::Binary(BinOp::Sub, a, b), long, span);
                let pointee = self.program.types.pointee(lhs.ty).unwrap_or(long);
                let size = self.runtime_size_of(pointee, span).unwrap_or(diff);
                if size == diff || self.fb.func.const_int(size) == Some(1) {
                    return Ok(Operand {
                        value: diff,
                        ty: long,
                    });
                }
                let value = self
                    .fb
                    .emit(InstKind::Binary(BinOp::Div, diff, size), long, span);
                Ok(Operand { value, ty: long })
            }
            (op, true, _) | (op, _, true) if op.is_comparison() => {
                // Pointer comparisons (also with the null constant 0).
                let int = self.program.types.int();
                let value = self
                    .fb
                    .emit(InstKind::Binary(op, lhs.value, rhs.value), int, span);
                Ok(Operand { value, ty: int })
            }
            (_, false, false) => self.arithmetic(op, lhs, rhs, span),
            _ => {
                // Bit tricks on pointers (alignment masks): compute on the integer address.
                let ulong = self.program.types.ulong();
                let a = self.convert(lhs, ulong, span);
                let b = self.convert(rhs, ulong, span);
                let value = self
                    .fb
                    .emit(InstKind::Binary(op, a.value, b.value), ulong, span);
                Ok(Operand { value, ty: ulong })
            }
        }
    }

    /// `a && b` / `a || b` as control flow producing 0 or 1.
    fn short_circuit(
        &mut self,
        b: &Node<ast::BinaryOperatorExpression>,
        span: Span,
    ) -> LResult<Operand> {
        let int = self.program.types.int();
        let result = self.fb.new_var(None, int);
        let true_block = self.fb.new_block();
        let false_block = self.fb.new_block();
        let join = self.fb.new_block();
        let whole = Node::new(ast::Expression::BinaryOperator(Box::new(b.clone())), b.span);
        self.lower_condition(&whole, true_block, false_block)?;
        self.fb.seal(true_block);
        self.fb.seal(false_block);
        for (block, v) in [(true_block, 1), (false_block, 0)] {
            self.fb.switch_to(block);
            let c = self.int_const(v, span);
            self.fb.def_var(result, c.value);
            self.fb.jump(join, span);
        }
        self.fb.seal(join);
        self.fb.switch_to(join);
        let value = self.fb.use_var(result);
        Ok(Operand { value, ty: int })
    }

    /// Lowers a condition directly into branches, `&&`, `||` and `!` as control flow.
    pub fn lower_condition(
        &mut self,
        e: &Node<ast::Expression>,
        then_block: Block,
        else_block: Block,
    ) -> LResult<()> {
        let span: Span = e.span.into();
        match &e.node {
            ast::Expression::BinaryOperator(b)
                if matches!(b.node.operator.node, ast::BinaryOperator::LogicalAnd) =>
            {
                let middle = self.fb.new_block();
                self.lower_condition(&b.node.lhs, middle, else_block)?;
                self.fb.seal(middle);
                self.fb.switch_to(middle);
                self.lower_condition(&b.node.rhs, then_block, else_block)
            }
            ast::Expression::BinaryOperator(b)
                if matches!(b.node.operator.node, ast::BinaryOperator::LogicalOr) =>
            {
                let middle = self.fb.new_block();
                self.lower_condition(&b.node.lhs, then_block, middle)?;
                self.fb.seal(middle);
                self.fb.switch_to(middle);
                self.lower_condition(&b.node.rhs, then_block, else_block)
            }
            ast::Expression::UnaryOperator(u)
                if matches!(u.node.operator.node, ast::UnaryOperator::Negate) =>
            {
                self.lower_condition(&u.node.operand, else_block, then_block)
            }
            _ => {
                let cond = self.rvalue(e)?;
                let cond = self.truth_value(cond, span);
                self.fb.terminate(
                    Terminator::Branch {
                        cond: cond.value,
                        then_block,
                        else_block,
                    },
                    span,
                );
                Ok(())
            }
        }
    }

    /// A comparison stays as is; any other scalar `x` becomes `x != 0`.
    fn truth_value(&mut self, op: Operand, span: Span) -> Operand {
        if let InstKind::Binary(bin, ..) = self.fb.func.inst(op.value).kind {
            if bin.is_comparison() {
                return op;
            }
        }
        let zero_ty = if self.program.types.is_scalar(op.ty) {
            op.ty
        } else {
            self.program.types.int()
        };
        let zero = if self.program.types.is_float(zero_ty) {
            let value = self
                .fb
                .emit(InstKind::Const(Constant::Float(0.0)), zero_ty, span);
            Operand { value, ty: zero_ty }
        } else {
            self.const_of(0, zero_ty, span)
        };
        let int = self.program.types.int();
        let value = self
            .fb
            .emit(InstKind::Binary(BinOp::Ne, op.value, zero.value), int, span);
        Operand { value, ty: int }
    }

    fn conditional(
        &mut self,
        c: &Node<ast::ConditionalExpression>,
        span: Span,
    ) -> LResult<Operand> {
        // A ternary whose arms cannot trap or have effects stays one `Select` (thesis: the
        // ternary expression); otherwise only the chosen arm may run, so it is control flow.
        if is_pure(&c.node.then_expression.node) && is_pure(&c.node.else_expression.node) {
            let cond = self.rvalue(&c.node.condition)?;
            let cond = self.truth_value(cond, span);
            let a = self.rvalue(&c.node.then_expression)?;
            let b = self.rvalue(&c.node.else_expression)?;
            let ty = self.conditional_type(a.ty, b.ty);
            let a = self.convert(a, ty, span);
            let b = self.convert(b, ty, span);
            let value = self.fb.emit(
                InstKind::Select {
                    cond: cond.value,
                    then_value: a.value,
                    else_value: b.value,
                },
                ty,
                span,
            );
            return Ok(Operand { value, ty });
        }
        let cond_block = self.fb.current();
        let then_block = self.fb.new_block();
        let else_block = self.fb.new_block();
        let join = self.fb.new_block();
        self.lower_condition(&c.node.condition, then_block, else_block)?;
        self.fb.seal(then_block);
        self.fb.seal(else_block);
        self.fb.switch_to(then_block);
        let a = self.rvalue(&c.node.then_expression)?;
        let a_end = self.fb.current();
        self.fb.switch_to(else_block);
        let b = self.rvalue(&c.node.else_expression)?;
        let ty = self.conditional_type(a.ty, b.ty);
        let void = matches!(self.program.types.get(ty), Type::Void);
        let result = self.fb.new_var(None, ty);
        if !void {
            let b = self.convert(b, ty, span);
            self.fb.def_var(result, b.value);
        }
        self.fb.jump(join, span);
        self.fb.switch_to(a_end);
        if !void {
            let a = self.convert(a, ty, span);
            self.fb.def_var(result, a.value);
        }
        self.fb.jump(join, span);
        self.fb.seal(join);
        self.fb.switch_to(join);
        self.fb.func.ifs.push(IfRegion {
            span,
            statement: false,
            then_span: c.node.then_expression.span.into(),
            else_span: Some(c.node.else_expression.span.into()),
            cond_block,
            then_block,
            else_block: Some(else_block),
            join_block: Some(join),
        });
        if void {
            return Ok(Operand { value: a.value, ty });
        }
        let value = self.fb.use_var(result);
        Ok(Operand { value, ty })
    }

    fn conditional_type(&mut self, a: TypeId, b: TypeId) -> TypeId {
        let types = &mut self.program.types;
        if types.is_arithmetic(a) && types.is_arithmetic(b) {
            types.usual_arithmetic(a, b)
        } else if types.is_pointer(a) {
            a
        } else {
            b
        }
    }

    fn call(&mut self, call: &Node<ast::CallExpression>, span: Span) -> LResult<Operand> {
        let callee_expr = &call.node.callee;
        let mut compiler_builtin = None;
        let (callee, fn_ty) = match &callee_expr.node {
            ast::Expression::Identifier(id) => match self.scopes.lookup(&id.node.name).cloned() {
                Some(Binding::Function { name, ty }) => {
                    if let Some(result) = self.complex_part(&name, call, span)? {
                        return Ok(result);
                    }
                    (Callee::Direct(name), Some(ty))
                }
                Some(_) => {
                    let f = self.rvalue(callee_expr)?;
                    (Callee::Indirect(f.value), self.function_type_of(f.ty))
                }
                None => {
                    let name = id.node.name.clone();
                    if let Some(result) = self.builtin(&name, call, span)? {
                        return Ok(result);
                    }
                    // The compiler declares its own builtins: no header does, and no
                    // warning is due (sqlite3.c alone gave 113).
                    compiler_builtin = builtin_result(&name);
                    if compiler_builtin.is_none() {
                        self.warn(
                            id.span,
                            format!("implicit declaration of function `{name}`"),
                        );
                    }
                    (Callee::Direct(name), None)
                }
            },
            _ => {
                let f = self.rvalue(callee_expr)?;
                match self.fb.func.inst(f.value).kind.clone() {
                    InstKind::FuncAddr(name) => (Callee::Direct(name), self.function_type_of(f.ty)),
                    _ => (Callee::Indirect(f.value), self.function_type_of(f.ty)),
                }
            }
        };
        let (mut ret, params) = match fn_ty.map(|t| self.program.types.get(t).clone()) {
            Some(Type::Function { ret, params, .. }) => (ret, params),
            _ => (self.program.types.int(), Vec::new()),
        };
        let mut args = Vec::with_capacity(call.node.arguments.len());
        for (i, arg) in call.node.arguments.iter().enumerate() {
            let value = self.rvalue(arg)?;
            if let Some(result) = compiler_builtin.take() {
                ret = self.builtin_type(result, Some(value.ty));
            }
            let value = match params.get(i) {
                Some(&pty) => self.convert(value, pty, arg.span.into()),
                None => {
                    // Default argument promotions for variadic and unprototyped calls.
                    let ty = if self.program.types.get(value.ty) == &Type::Float(FloatKind::Float) {
                        self.program.types.double()
                    } else {
                        self.program.types.promote(value.ty)
                    };
                    self.convert(value, ty, arg.span.into())
                }
            };
            args.push(value.value);
        }
        if let Some(result) = compiler_builtin {
            ret = self.builtin_type(result, None);
        }
        let value = self.fb.emit(InstKind::Call { callee, args }, ret, span);
        Ok(Operand { value, ty: ret })
    }

    /// The type a compiler builtin's call has, given its first argument's type.
    fn builtin_type(&mut self, result: BuiltinResult, first: Option<TypeId>) -> TypeId {
        let types = &mut self.program.types;
        let int = |rank, signed| Type::Int { rank, signed };
        match result {
            BuiltinResult::Void => types.void(),
            BuiltinResult::Bool => types.bool(),
            BuiltinResult::Int => types.int(),
            BuiltinResult::Unsigned(rank) => types.intern(int(rank, false)),
            BuiltinResult::Float(kind) => types.intern(Type::Float(kind)),
            BuiltinResult::Pointee => match first.and_then(|t| types.pointee(t)) {
                Some(t) => t,
                None => types.int(),
            },
        }
    }

    fn function_type_of(&self, ty: TypeId) -> Option<TypeId> {
        match self.program.types.get(ty) {
            Type::Function { .. } => Some(ty),
            Type::Pointer { pointee, .. } => match self.program.types.get(*pointee) {
                Type::Function { .. } => Some(*pointee),
                _ => None,
            },
            _ => None,
        }
    }

    /// `creal`, `cimag`, `cabs` and `carg` (and their `f`/`l` forms) of a `_Complex`
    /// lvalue, lowered to what they read: C99 6.2.5p13 lays a complex number out as an
    /// array of its real and imaginary parts, so `creal(z)` is a load of `((T *)&z)[0]`,
    /// `cimag(z)` of `[1]`, `cabs(z)` is `hypot(re, im)` and `carg(z)` `atan2(im, re)`.
    /// Every analysis then sees the exact bytes read, and the math calls are device
    /// functions. Anything else (a complex rvalue, a program's own `creal`) stays a call.
    fn complex_part(
        &mut self,
        name: &str,
        call: &Node<ast::CallExpression>,
        span: Span,
    ) -> LResult<Option<Operand>> {
        let (stem, kind) = match name.strip_suffix('f') {
            Some(stem @ ("creal" | "cimag" | "cabs" | "carg")) => (stem, FloatKind::Float),
            _ => match name.strip_suffix('l') {
                Some(stem @ ("creal" | "cimag" | "cabs" | "carg")) => (stem, FloatKind::LongDouble),
                _ => match name {
                    "creal" | "cimag" | "cabs" | "carg" => (name, FloatKind::Double),
                    _ => return Ok(None),
                },
            },
        };
        if self.program.function(name).is_some() {
            return Ok(None);
        }
        let [arg] = call.node.arguments.as_slice() else {
            return Ok(None);
        };
        // Only a complex object in memory (a name, element, member or dereference).
        let is_lvalue = match &arg.node {
            ast::Expression::Identifier(_) | ast::Expression::Member(_) => true,
            ast::Expression::UnaryOperator(u) => {
                matches!(u.node.operator.node, ast::UnaryOperator::Indirection)
            }
            ast::Expression::BinaryOperator(b) => {
                matches!(b.node.operator.node, ast::BinaryOperator::Index)
            }
            _ => false,
        };
        if !is_lvalue {
            return Ok(None);
        }
        let ty = self.program.types.intern(Type::Float(kind));
        let complex = self
            .program
            .types
            .array_of(ty, crate::types::ArrayLen::Fixed(2));
        let place = self.lvalue(arg)?;
        let points_to_parts = matches!(
            self.program.types.get(place.ty),
            Type::Pointer { pointee, .. } if *pointee == ty
        );
        let addr = match place.kind {
            PlaceKind::Mem(addr) if place.ty == complex => Some(addr),
            // A `_Complex` parameter: adjusted like an array parameter, it holds a pointer
            // to the caller's parts.
            PlaceKind::Ssa(var) if points_to_parts => Some(self.fb.use_var(var)),
            _ => None,
        };
        let Some(addr) = addr else {
            // Not a complex object after all: an ordinary call on its value.
            let value = self.load(place, span);
            let result = self.fb.emit(
                InstKind::Call {
                    callee: Callee::Direct(name.to_string()),
                    args: vec![value.value],
                },
                ty,
                span,
            );
            return Ok(Some(Operand { value: result, ty }));
        };
        let (re_addr, _) = self.element_at(addr, complex, 0, span)?;
        let (im_addr, _) = self.element_at(addr, complex, 1, span)?;
        let re = self.load(
            Place {
                kind: PlaceKind::Mem(re_addr),
                ty,
            },
            span,
        );
        let im = self.load(
            Place {
                kind: PlaceKind::Mem(im_addr),
                ty,
            },
            span,
        );
        let suffix = match kind {
            FloatKind::Float => "f",
            FloatKind::LongDouble => "l",
            _ => "",
        };
        let math = |f: &str| Callee::Direct(format!("{f}{suffix}"));
        let value = match stem {
            "creal" => return Ok(Some(re)),
            "cimag" => return Ok(Some(im)),
            "cabs" => self.fb.emit(
                InstKind::Call {
                    callee: math("hypot"),
                    args: vec![re.value, im.value],
                },
                ty,
                span,
            ),
            _ => self.fb.emit(
                InstKind::Call {
                    callee: math("atan2"),
                    args: vec![im.value, re.value],
                },
                ty,
                span,
            ),
        };
        Ok(Some(Operand { value, ty }))
    }

    /// GCC builtins that have no declaration in any header and need lowering of their own.
    fn builtin(
        &mut self,
        name: &str,
        call: &Node<ast::CallExpression>,
        span: Span,
    ) -> LResult<Option<Operand>> {
        match name {
            "__builtin_expect" | "__builtin_assume_aligned" => match call.node.arguments.first() {
                Some(first) => {
                    let value = self.rvalue(first)?;
                    for rest in call.node.arguments.iter().skip(1) {
                        self.rvalue(rest)?;
                    }
                    Ok(Some(value))
                }
                None => err(span, format!("`{name}` needs an argument")),
            },
            "__builtin_constant_p" => Ok(Some(self.int_const(0, span))),
            "__builtin_unreachable" | "__builtin_trap" => {
                let void = self.void_ty();
                let value = self.fb.emit(
                    InstKind::Call {
                        callee: Callee::Direct(name.into()),
                        args: Vec::new(),
                    },
                    void,
                    span,
                );
                Ok(Some(Operand { value, ty: void }))
            }
            _ => Ok(None),
        }
    }

    fn statement_expression(
        &mut self,
        stmt: &Node<ast::Statement>,
        span: Span,
    ) -> LResult<Operand> {
        let ast::Statement::Compound(items) = &stmt.node else {
            return err(span, "statement expression without braces");
        };
        self.scopes.push(span.end);
        let mut last = None;
        let result = (|| {
            for (i, item) in items.iter().enumerate() {
                let is_last = i + 1 == items.len();
                match &item.node {
                    ast::BlockItem::Statement(s) if is_last => {
                        if let ast::Statement::Expression(Some(e)) = &s.node {
                            last = Some(self.rvalue(e)?);
                        } else {
                            self.lower_statement(s)?;
                        }
                    }
                    ast::BlockItem::Statement(s) => self.lower_statement(s)?,
                    ast::BlockItem::Declaration(d) => self.local_declaration(d)?,
                    ast::BlockItem::StaticAssert(_) => {}
                }
            }
            Ok(())
        })();
        self.scopes.pop();
        result?;
        Ok(match last {
            Some(op) => op,
            None => {
                let void = self.void_ty();
                let c = self.int_const(0, span);
                Operand {
                    value: c.value,
                    ty: void,
                }
            }
        })
    }

    /// Initializes memory at `addr` of type `ty`; with `zero_fill` the object is zeroed first
    /// when the initializer is a brace list (C99 6.7.8p21: members without one are zero).
    pub fn initialize_memory(
        &mut self,
        addr: Value,
        ty: TypeId,
        init: &Node<ast::Initializer>,
        zero_fill: bool,
    ) -> LResult<()> {
        let span: Span = init.span.into();
        match &init.node {
            ast::Initializer::Expression(e) => {
                if let (Type::Array { .. }, ast::Expression::StringLiteral(_)) =
                    (self.program.types.get(ty), &e.node)
                {
                    let src = self.rvalue(e)?;
                    let mut size = self.runtime_size_of(ty, span)?;
                    let void = self.void_ty();
                    // `char buf[8] = "hi"`: copy the literal with its terminator, zero the rest.
                    let literal_size = match &e.node {
                        ast::Expression::StringLiteral(lit) => {
                            super::decl::string_literal_len(&lit.node) + 1
                        }
                        _ => 0,
                    };
                    if let Some(array_size) = self.program.types.size_of(ty) {
                        if literal_size < array_size {
                            let zero = self.int_const(0, span);
                            self.fb.emit(
                                InstKind::Call {
                                    callee: Callee::Direct("memset".into()),
                                    args: vec![addr, zero.value, size],
                                },
                                void,
                                span,
                            );
                            let ulong = self.program.types.ulong();
                            size = self.const_of(i128::from(literal_size), ulong, span).value;
                        }
                    }
                    self.fb.emit(
                        InstKind::Call {
                            callee: Callee::Direct("memcpy".into()),
                            args: vec![addr, src.value, size],
                        },
                        void,
                        span,
                    );
                    return Ok(());
                }
                let value = self.rvalue(e)?;
                self.store(
                    Place {
                        kind: PlaceKind::Mem(addr),
                        ty,
                    },
                    value,
                    span,
                );
                Ok(())
            }
            ast::Initializer::List(items) => {
                if zero_fill {
                    let size = self.runtime_size_of(ty, span)?;
                    let zero = self.int_const(0, span);
                    let void = self.void_ty();
                    self.fb.emit(
                        InstKind::Call {
                            callee: Callee::Direct("memset".into()),
                            args: vec![addr, zero.value, size],
                        },
                        void,
                        span,
                    );
                }
                if self.program.types.is_scalar(ty) {
                    if let Some(first) = items.first() {
                        return self.initialize_memory(addr, ty, &first.node.initializer, false);
                    }
                    return Ok(());
                }
                let mut cursor: u64 = 0;
                let mut k = 0;
                while k < items.len() {
                    let item = &items[k];
                    let (sub_addr, sub_ty, next) =
                        self.designated(addr, ty, &item.node.designation, cursor, span)?;
                    cursor = next;
                    if self.elides_braces(sub_ty, &item.node.initializer) {
                        k += self.initialize_elided(sub_addr, sub_ty, &items[k..], span)?;
                    } else {
                        self.initialize_memory(sub_addr, sub_ty, &item.node.initializer, false)?;
                        k += 1;
                    }
                }
                Ok(())
            }
        }
    }

    /// The address and type an initializer item designates; returns the next position.
    fn designated(
        &mut self,
        base: Value,
        ty: TypeId,
        designation: &[Node<ast::Designator>],
        cursor: u64,
        span: Span,
    ) -> LResult<(Value, TypeId, u64)> {
        let mut addr = base;
        let mut current_ty = ty;
        let mut next = cursor + 1;
        let mut position = cursor;
        if let Some(first) = designation.first() {
            position = self.designator_position(first, ty)?;
            next = position + 1;
        }
        // Step into element/field `position`, then follow any nested designators.
        let (a, t) = self.element_at(addr, current_ty, position, span)?;
        addr = a;
        current_ty = t;
        for d in designation.iter().skip(1) {
            let index = self.designator_position(d, current_ty)?;
            let (a, t) = self.element_at(addr, current_ty, index, span)?;
            addr = a;
            current_ty = t;
        }
        Ok((addr, current_ty, next))
    }

    /// The element index or field position a designator (`[3]`, `[1 ... 4]`, `.f`) selects
    /// in an object of type `ty`.
    fn designator_position(&mut self, d: &Node<ast::Designator>, ty: TypeId) -> LResult<u64> {
        match &d.node {
            ast::Designator::Index(e) => match self.const_eval(e) {
                Some(v) => Ok(v.max(0) as u64),
                None => err(d.span, "array designator is not a constant"),
            },
            ast::Designator::Range(r) => match self.const_eval(&r.node.from) {
                Some(v) => Ok(v.max(0) as u64),
                None => err(d.span, "range designator is not a constant"),
            },
            ast::Designator::Member(id) => {
                let Type::Record(r) = self.program.types.get(ty).clone() else {
                    return err(d.span, "member designator for a non-struct");
                };
                let record = self.program.types.record(r);
                match record
                    .fields
                    .iter()
                    .position(|f| f.name.as_deref() == Some(id.node.name.as_str()))
                {
                    Some(i) => Ok(i as u64),
                    None => err(id.span, format!("no member named `{}`", id.node.name)),
                }
            }
        }
    }

    fn element_at(
        &mut self,
        addr: Value,
        ty: TypeId,
        index: u64,
        span: Span,
    ) -> LResult<(Value, TypeId)> {
        match self.program.types.get(ty).clone() {
            Type::Array { elem, .. } => {
                let long = self.program.types.long();
                let i = self.const_of(i128::from(index), long, span);
                let ptr = self.pointer_type(elem, false, false);
                let scale = self.program.types.size_of(elem).unwrap_or(1);
                let value = self.fb.emit(
                    InstKind::PtrAdd {
                        base: addr,
                        index: i.value,
                        scale,
                    },
                    ptr,
                    span,
                );
                Ok((value, elem))
            }
            Type::Record(r) => {
                let record = self.program.types.record(r).clone();
                let Some(field) = record.fields.get(index as usize) else {
                    return err(span, "too many initializers for this struct");
                };
                let ptr = self.pointer_type(field.ty, false, false);
                let value = self.fb.emit(
                    InstKind::FieldAddr {
                        base: addr,
                        field: field.name.clone().unwrap_or_default(),
                        offset: field.offset,
                    },
                    ptr,
                    span,
                );
                if let Some(width) = field.bit_width {
                    self.bit_fields.insert(value, (field.bit_offset, width));
                }
                Ok((value, field.ty))
            }
            _ => err(span, "braces around a scalar initializer"),
        }
    }

    /// Whether `init` is a scalar written without braces for an aggregate member.
    fn elides_braces(&self, sub_ty: TypeId, init: &Node<ast::Initializer>) -> bool {
        let is_string = matches!(&init.node, ast::Initializer::Expression(e) if matches!(e.node, ast::Expression::StringLiteral(_)));
        matches!(init.node, ast::Initializer::Expression(_))
            && !self.program.types.is_scalar(sub_ty)
            && !is_string
    }

    /// Brace elision (C99 6.7.8p20): an aggregate member initialized without braces takes
    /// as many of the following undesignated items as it has members. Returns how many.
    fn initialize_elided(
        &mut self,
        addr: Value,
        ty: TypeId,
        items: &[Node<ast::InitializerListItem>],
        span: Span,
    ) -> LResult<usize> {
        let count = match self.program.types.get(ty) {
            Type::Array {
                len: ArrayLen::Fixed(n),
                ..
            } => *n,
            Type::Record(r) => {
                let record = self.program.types.record(*r);
                if record.is_union {
                    1
                } else {
                    record.fields.len() as u64
                }
            }
            _ => 1,
        };
        let mut used = 0;
        for position in 0..count {
            let Some(item) = items.get(used) else {
                break;
            };
            if used > 0 && !item.node.designation.is_empty() {
                break;
            }
            let (sub_addr, sub_ty) = self.element_at(addr, ty, position, span)?;
            if self.elides_braces(sub_ty, &item.node.initializer) {
                used += self.initialize_elided(sub_addr, sub_ty, &items[used..], span)?;
            } else {
                self.initialize_memory(sub_addr, sub_ty, &item.node.initializer, false)?;
                used += 1;
            }
        }
        Ok(used.max(1))
    }
}

fn compound_op(op: &ast::BinaryOperator) -> BinOp {
    use ast::BinaryOperator as B;
    match op {
        B::AssignMultiply => BinOp::Mul,
        B::AssignDivide => BinOp::Div,
        B::AssignModulo => BinOp::Rem,
        B::AssignPlus => BinOp::Add,
        B::AssignMinus => BinOp::Sub,
        B::AssignShiftLeft => BinOp::Shl,
        B::AssignShiftRight => BinOp::Shr,
        B::AssignBitwiseAnd => BinOp::BitAnd,
        B::AssignBitwiseXor => BinOp::BitXor,
        _ => BinOp::BitOr,
    }
}

fn plain_op(op: &ast::BinaryOperator) -> Option<BinOp> {
    use ast::BinaryOperator as B;
    Some(match op {
        B::Multiply => BinOp::Mul,
        B::Divide => BinOp::Div,
        B::Modulo => BinOp::Rem,
        B::Plus => BinOp::Add,
        B::Minus => BinOp::Sub,
        B::ShiftLeft => BinOp::Shl,
        B::ShiftRight => BinOp::Shr,
        B::Less => BinOp::Lt,
        B::Greater => BinOp::Gt,
        B::LessOrEqual => BinOp::Le,
        B::GreaterOrEqual => BinOp::Ge,
        B::Equals => BinOp::Eq,
        B::NotEquals => BinOp::Ne,
        B::BitwiseAnd => BinOp::BitAnd,
        B::BitwiseXor => BinOp::BitXor,
        B::BitwiseOr => BinOp::BitOr,
        _ => return None,
    })
}

fn is_lvalue_form(e: &ast::Expression) -> bool {
    use ast::Expression as E;
    match e {
        E::Identifier(_) | E::Member(_) | E::StringLiteral(_) | E::CompoundLiteral(_) => true,
        E::UnaryOperator(u) => matches!(u.node.operator.node, ast::UnaryOperator::Indirection),
        E::BinaryOperator(b) => matches!(b.node.operator.node, ast::BinaryOperator::Index),
        _ => false,
    }
}

/// Whether evaluating the expression can neither trap nor have an effect: no memory access,
/// call, assignment or division. Expressions of more than [`PURE_BUDGET`] nodes count as
/// impure (they are lowered as control flow, which is always correct): the check runs at
/// every `?:` of a chain, and unbounded it would be quadratic.
pub(crate) fn is_pure(e: &ast::Expression) -> bool {
    let mut budget = PURE_BUDGET;
    pure_within(e, &mut budget)
}

const PURE_BUDGET: u32 = 256;

fn pure_within(e: &ast::Expression, budget: &mut u32) -> bool {
    use ast::Expression as E;
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    match e {
        E::Identifier(_)
        | E::Constant(_)
        | E::StringLiteral(_)
        | E::SizeOfTy(_)
        | E::SizeOfVal(_)
        | E::AlignOf(_)
        | E::OffsetOf(_) => true,
        E::UnaryOperator(u) => {
            matches!(
                u.node.operator.node,
                ast::UnaryOperator::Plus
                    | ast::UnaryOperator::Minus
                    | ast::UnaryOperator::Complement
                    | ast::UnaryOperator::Negate
            ) && pure_within(&u.node.operand.node, budget)
        }
        E::Cast(c) => pure_within(&c.node.expression.node, budget),
        E::BinaryOperator(b) => {
            use ast::BinaryOperator as B;
            matches!(
                b.node.operator.node,
                B::Multiply
                    | B::Plus
                    | B::Minus
                    | B::ShiftLeft
                    | B::ShiftRight
                    | B::Less
                    | B::Greater
                    | B::LessOrEqual
                    | B::GreaterOrEqual
                    | B::Equals
                    | B::NotEquals
                    | B::BitwiseAnd
                    | B::BitwiseXor
                    | B::BitwiseOr
            ) && pure_within(&b.node.lhs.node, budget)
                && pure_within(&b.node.rhs.node, budget)
        }
        E::Conditional(c) => {
            pure_within(&c.node.condition.node, budget)
                && pure_within(&c.node.then_expression.node, budget)
                && pure_within(&c.node.else_expression.node, budget)
        }
        _ => false,
    }
}

/// What a call of a compiler builtin (GCC's and clang's `__builtin_*`, `__atomic_*`,
/// `__sync_*`) returns, by the GCC manual's prototypes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BuiltinResult {
    Void,
    Bool,
    Int,
    Unsigned(IntRank),
    Float(FloatKind),
    /// The type the first argument points to (`__atomic_load_n(&x, order)` is an `x`).
    Pointee,
}

/// [`BuiltinResult`] of the builtin `name`; `None` for a name that is not one.
fn builtin_result(name: &str) -> Option<BuiltinResult> {
    use BuiltinResult::*;
    let bits = |rest: &str| match rest {
        "" | "l" | "ll" => Some(Int),
        _ => None,
    };
    if let Some(op) = name.strip_prefix("__builtin_") {
        for stem in ["clz", "ctz", "popcount", "parity", "ffs", "clrsb"] {
            if let Some(result) = op.strip_prefix(stem).and_then(bits) {
                return Some(result);
            }
        }
        return Some(match op {
            "bswap16" => Unsigned(IntRank::Short),
            "bswap32" => Unsigned(IntRank::Int),
            "bswap64" => Unsigned(IntRank::Long),
            "inff" | "huge_valf" | "nanf" => Float(FloatKind::Float),
            "inf" | "huge_val" | "nan" => Float(FloatKind::Double),
            "infl" | "huge_vall" | "nanl" => Float(FloatKind::LongDouble),
            "va_start" | "va_end" | "va_copy" | "prefetch" => Void,
            "add_overflow" | "sub_overflow" | "mul_overflow" => Bool,
            // Other builtins are library functions under another name (`__builtin_memcpy`)
            // or compiler queries; their headers' declarations are not needed to analyse.
            _ => Int,
        });
    }
    if name.starts_with("__atomic_") || name.starts_with("__sync_") {
        return Some(match name {
            "__atomic_store_n"
            | "__atomic_store"
            | "__atomic_load"
            | "__atomic_exchange"
            | "__atomic_thread_fence"
            | "__atomic_signal_fence"
            | "__atomic_clear"
            | "__sync_synchronize"
            | "__sync_lock_release" => Void,
            "__atomic_compare_exchange_n"
            | "__atomic_compare_exchange"
            | "__atomic_test_and_set"
            | "__atomic_always_lock_free"
            | "__atomic_is_lock_free"
            | "__sync_bool_compare_and_swap" => Bool,
            // Loads, exchanges and read-modify-writes return the object's value.
            _ => Pointee,
        });
    }
    None
}
