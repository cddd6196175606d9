//! Integer constant expressions (array sizes, enumerators, case labels, bit-field widths)
//! and the decoding of C literals.

use super::{Binding, Lowerer};
use crate::types::{IntRank, Type, TypeId, TypeTable};
use lang_c::ast;
use lang_c::span::Node;

impl<'a> Lowerer<'a> {
    /// Evaluates an integer constant expression; `None` when it is not one.
    pub fn const_eval(&mut self, e: &Node<ast::Expression>) -> Option<i128> {
        // Type names inside (`sizeof(int[n])`) may queue VLA sizes; a constant expression
        // never needs them, and a failed attempt must not leave them behind.
        let pending = self.pending_vla.len();
        let result = self.const_eval_inner(e);
        self.pending_vla.truncate(pending);
        result
    }

    fn const_eval_inner(&mut self, e: &Node<ast::Expression>) -> Option<i128> {
        use ast::Expression as E;
        match &e.node {
            E::Constant(c) => match &c.node {
                ast::Constant::Integer(i) => parse_integer(i).map(|(v, _)| v),
                ast::Constant::Character(ch) => parse_char(ch),
                ast::Constant::Float(_) => None,
            },
            E::Identifier(id) => match self.scopes.lookup(&id.node.name) {
                Some(Binding::EnumConst(v)) => Some(*v),
                _ => None,
            },
            E::UnaryOperator(u) => {
                let v = self.const_eval_inner(&u.node.operand)?;
                match u.node.operator.node {
                    ast::UnaryOperator::Minus => v.checked_neg(),
                    ast::UnaryOperator::Plus => Some(v),
                    ast::UnaryOperator::Complement => Some(!v),
                    ast::UnaryOperator::Negate => Some((v == 0) as i128),
                    _ => None,
                }
            }
            E::BinaryOperator(b) => {
                use ast::BinaryOperator as B;
                let l = self.const_eval_inner(&b.node.lhs)?;
                // Short-circuit operators need not evaluate the other side.
                match b.node.operator.node {
                    B::LogicalAnd if l == 0 => return Some(0),
                    B::LogicalOr if l != 0 => return Some(1),
                    _ => {}
                }
                let r = self.const_eval_inner(&b.node.rhs)?;
                Some(match b.node.operator.node {
                    B::Plus => l.checked_add(r)?,
                    B::Minus => l.checked_sub(r)?,
                    B::Multiply => l.checked_mul(r)?,
                    B::Divide => l.checked_div(r)?,
                    B::Modulo => l.checked_rem(r)?,
                    B::ShiftLeft => l.checked_shl(u32::try_from(r).ok()?)?,
                    B::ShiftRight => l.checked_shr(u32::try_from(r).ok()?)?,
                    B::BitwiseAnd => l & r,
                    B::BitwiseOr => l | r,
                    B::BitwiseXor => l ^ r,
                    B::Less => (l < r) as i128,
                    B::Greater => (l > r) as i128,
                    B::LessOrEqual => (l <= r) as i128,
                    B::GreaterOrEqual => (l >= r) as i128,
                    B::Equals => (l == r) as i128,
                    B::NotEquals => (l != r) as i128,
                    B::LogicalAnd => (r != 0) as i128,
                    B::LogicalOr => (r != 0) as i128,
                    _ => return None,
                })
            }
            E::Conditional(c) => {
                let cond = self.const_eval_inner(&c.node.condition)?;
                if cond != 0 {
                    self.const_eval_inner(&c.node.then_expression)
                } else {
                    self.const_eval_inner(&c.node.else_expression)
                }
            }
            E::Cast(c) => {
                let v = self.const_eval_inner(&c.node.expression)?;
                let ty = self.type_name(&c.node.type_name).ok()?;
                Some(truncate_to(&self.program.types, ty, v))
            }
            E::SizeOfTy(s) => {
                let ty = self.type_name(&s.node.0).ok()?;
                self.program.types.size_of(ty).map(i128::from)
            }
            E::SizeOfVal(s) => {
                let ty = self.type_of_expression(&s.node.0).ok()?;
                self.program.types.size_of(ty).map(i128::from)
            }
            E::AlignOf(a) => {
                let ty = self.type_name(&a.node.0).ok()?;
                Some(i128::from(self.program.types.align_of(ty)))
            }
            E::OffsetOf(o) => self.offset_of(o).map(i128::from),
            E::Comma(items) => items.last().and_then(|e| self.const_eval_inner(e)),
            _ => None,
        }
    }

    /// `offsetof(type, a.b[2].c)` for constant designators.
    pub fn offset_of(&mut self, o: &Node<ast::OffsetOfExpression>) -> Option<u64> {
        let mut ty = self.type_name(&o.node.type_name).ok()?;
        let mut offset = 0u64;
        let step = |lowerer: &mut Self, ty: &mut TypeId, name: &str| -> Option<u64> {
            let Type::Record(r) = lowerer.program.types.get(*ty).clone() else {
                return None;
            };
            let found = lowerer.program.types.find_field(r, name)?;
            *ty = found.ty;
            Some(found.offset)
        };
        offset += step(self, &mut ty, &o.node.designator.node.base.node.name)?;
        for member in &o.node.designator.node.members {
            match &member.node {
                ast::OffsetMember::Member(id) | ast::OffsetMember::IndirectMember(id) => {
                    offset += step(self, &mut ty, &id.node.name)?;
                }
                ast::OffsetMember::Index(e) => {
                    let index = u64::try_from(self.const_eval_inner(e)?).ok()?;
                    let elem = self.program.types.array_elem(ty)?;
                    offset += index * self.program.types.size_of(elem)?;
                    ty = elem;
                }
            }
        }
        Some(offset)
    }
}

/// Wraps `v` to the width and signedness of an integer type (values of other types pass).
pub(crate) fn truncate_to(types: &TypeTable, ty: TypeId, v: i128) -> i128 {
    let Type::Int { rank, signed } = types.get(ty) else {
        return v;
    };
    if *rank == IntRank::Bool {
        return (v != 0) as i128;
    }
    let bits = types.size_of(ty).unwrap_or(16) * 8;
    if bits >= 128 {
        return v;
    }
    let mask = (1i128 << bits) - 1;
    let low = v & mask;
    if *signed && low >> (bits - 1) & 1 == 1 {
        low - (1i128 << bits)
    } else {
        low
    }
}

/// Whether `do ... while (e)` runs its body once: `e` is the literal `0` (`while (0)`, and
/// `while (false)` once `<stdbool.h>` has expanded it), the idiom that makes a macro of
/// several statements one statement. Lowering and the access sites both treat it as the
/// block it is, not as a loop, so the two lists of loops agree.
pub(crate) fn runs_once(d: &ast::DoWhileStatement) -> bool {
    match &d.expression.node {
        ast::Expression::Constant(c) => match &c.node {
            ast::Constant::Integer(i) => parse_integer(i).is_some_and(|(v, _)| v == 0),
            _ => false,
        },
        _ => false,
    }
}

/// Kind of an integer literal's type before promotion: (rank, signed).
pub(crate) fn parse_integer(i: &ast::Integer) -> Option<(i128, (IntRank, bool))> {
    let radix = match i.base {
        ast::IntegerBase::Decimal => 10,
        ast::IntegerBase::Octal => 8,
        ast::IntegerBase::Hexadecimal => 16,
        ast::IntegerBase::Binary => 2,
    };
    let digits: String = i.number.chars().filter(|c| *c != '\'').collect();
    let digits = if radix == 8 {
        digits.trim_start_matches('0').to_string()
    } else {
        digits
    };
    let value = if digits.is_empty() {
        0
    } else {
        u128::from_str_radix(&digits, radix).ok()?
    };
    let value = i128::try_from(value).ok()?;
    let decimal = radix == 10;
    let unsigned = i.suffix.unsigned;
    // C99 6.4.4.1: the first type in the list that can represent the value.
    let candidates: &[(IntRank, bool)] = match (i.suffix.size, unsigned, decimal) {
        (ast::IntegerSize::Int, false, true) => &[(IntRank::Int, true), (IntRank::Long, true)],
        (ast::IntegerSize::Int, false, false) => &[
            (IntRank::Int, true),
            (IntRank::Int, false),
            (IntRank::Long, true),
            (IntRank::Long, false),
        ],
        (ast::IntegerSize::Int, true, _) => &[(IntRank::Int, false), (IntRank::Long, false)],
        (ast::IntegerSize::Long, false, true) => &[(IntRank::Long, true)],
        (ast::IntegerSize::Long, false, false) => &[(IntRank::Long, true), (IntRank::Long, false)],
        (ast::IntegerSize::Long, true, _) => &[(IntRank::Long, false)],
        (ast::IntegerSize::LongLong, false, true) => &[(IntRank::LongLong, true)],
        (ast::IntegerSize::LongLong, false, false) => {
            &[(IntRank::LongLong, true), (IntRank::LongLong, false)]
        }
        (ast::IntegerSize::LongLong, true, _) => &[(IntRank::LongLong, false)],
    };
    for &(rank, signed) in candidates {
        let bits = if rank == IntRank::Int { 32 } else { 64 };
        let max = if signed {
            (1i128 << (bits - 1)) - 1
        } else {
            (1i128 << bits) - 1
        };
        if value <= max {
            return Some((value, (rank, signed)));
        }
    }
    Some((value, (IntRank::LongLong, false)))
}

/// The value of a character constant such as `'a'`, `'\n'`, `'\x41'`.
pub(crate) fn parse_char(ch: &str) -> Option<i128> {
    let inner = ch.trim_start_matches(['L', 'u', 'U']);
    let inner = inner.strip_prefix('\'')?.strip_suffix('\'')?;
    let bytes = inner.as_bytes();
    let value = match bytes {
        [b'\\', rest @ ..] => match rest {
            [b'n'] => 10,
            [b't'] => 9,
            [b'r'] => 13,
            [b'0'] => 0,
            [b'a'] => 7,
            [b'b'] => 8,
            [b'f'] => 12,
            [b'v'] => 11,
            [b'\\'] => 92,
            [b'\''] => 39,
            [b'"'] => 34,
            [b'?'] => 63,
            [b'x', hex @ ..] => i128::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?,
            octal if octal.iter().all(|c| (b'0'..=b'7').contains(c)) => {
                i128::from_str_radix(std::str::from_utf8(octal).ok()?, 8).ok()?
            }
            _ => return None,
        },
        [c] => i128::from(*c as i8),
        _ => {
            // Multi-character or UTF-8 constant: implementation-defined; take the first char.
            let c = inner.chars().next()?;
            c as i128
        }
    };
    Some(value)
}

/// The value of a floating literal (decimal or hexadecimal).
pub(crate) fn parse_float(f: &ast::Float) -> Option<f64> {
    match f.base {
        ast::FloatBase::Decimal => f.number.parse::<f64>().ok(),
        ast::FloatBase::Hexadecimal => {
            let (mantissa, exponent) = f.number.split_once(['p', 'P']).unwrap_or((&f.number, "0"));
            let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
            let mut value = 0f64;
            for c in int_part.chars() {
                value = value * 16.0 + f64::from(c.to_digit(16)?);
            }
            let mut scale = 1.0 / 16.0;
            for c in frac_part.chars() {
                value += f64::from(c.to_digit(16)?) * scale;
                scale /= 16.0;
            }
            let exponent: i32 = exponent.parse().ok()?;
            Some(value * 2f64.powi(exponent))
        }
    }
}
