//! Unnormalised expression trees in C syntax (what the parser produces and egg rewrites), with
//! direct C evaluation and lowering to the normal form.

use crate::compare::{get_max, get_min};
use crate::error::{EvalError, SymError};
use crate::expr::{Expr, MAX_SHIFT};
use crate::sign::SignEnv;
use crate::var::Var;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::collections::HashMap;

/// Binary operators of the C subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// C `/` (truncating)
    Div,
    /// C `%`
    Rem,
    /// `<<`
    Shl,
    /// `>>` (arithmetic)
    Shr,
    /// `&` (two's complement)
    BitAnd,
}

/// An expression tree as written (C syntax plus `min`, `max`, `floor_div`, `floor_mod`, `rat`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// Integer literal.
    Num(BigInt),
    /// `rat(p, q)`: the rational constant p/q (marks non-integer coefficients in printed C).
    Rat(BigInt, BigInt),
    /// A variable.
    Var(Var),
    /// Unary minus.
    Neg(Box<Term>),
    /// `~x` (two's complement: `-x - 1`).
    BitNot(Box<Term>),
    /// A binary operation.
    Bin(BinOp, Box<Term>, Box<Term>),
    /// `min(a, b, ...)`
    Min(Vec<Term>),
    /// `max(a, b, ...)`
    Max(Vec<Term>),
    /// `floor_div(a, k)`
    FloorDiv(Box<Term>, Box<Term>),
    /// `floor_mod(a, k)`
    FloorMod(Box<Term>, Box<Term>),
}

impl Term {
    /// A binary node.
    pub fn bin(op: BinOp, a: Term, b: Term) -> Term {
        Term::Bin(op, Box::new(a), Box::new(b))
    }

    /// A variable node.
    pub fn var(name: &str) -> Term {
        Term::Var(Var::new(name))
    }

    /// An integer literal.
    pub fn num(n: i64) -> Term {
        Term::Num(BigInt::from(n))
    }

    /// Normal form of the tree; `env` is only used to prune `min`/`max` operands.
    pub fn lower(&self, env: &SignEnv) -> Result<Expr, SymError> {
        Ok(match self {
            Term::Num(n) => Expr::integer(n.clone()),
            Term::Rat(p, q) => {
                if q.is_zero() {
                    return Err(SymError::DivisionByZero);
                }
                Expr::rational(BigRational::new(p.clone(), q.clone()))
            }
            Term::Var(v) => Expr::from(v.clone()),
            Term::Neg(a) => a.lower(env)?.neg(),
            Term::BitNot(a) => a.lower(env)?.neg().checked_sub(&Expr::constant(1))?,
            Term::Bin(op, a, b) => {
                let x = a.lower(env)?;
                match op {
                    BinOp::Add => x.checked_add(&b.lower(env)?)?,
                    BinOp::Sub => x.checked_sub(&b.lower(env)?)?,
                    BinOp::Mul => x.checked_mul(&b.lower(env)?)?,
                    BinOp::Div => x.c_div(&const_int(b, env)?)?,
                    BinOp::Rem => x.c_mod(&const_int(b, env)?)?,
                    BinOp::Shl => x.shl(shift_amount(b, env)?)?,
                    BinOp::Shr => x.shr(shift_amount(b, env)?)?,
                    BinOp::BitAnd => {
                        let y = b.lower(env)?;
                        match (x.as_integer(), y.as_integer()) {
                            (Some(m), _) => lower_mask(&y, &m)?,
                            (None, Some(m)) => lower_mask(&x, &m)?,
                            _ => {
                                return Err(SymError::Unsupported("& of two non-constants".into()))
                            }
                        }
                    }
                }
            }
            Term::Min(ts) => fold(ts, env, get_min)?,
            Term::Max(ts) => fold(ts, env, get_max)?,
            Term::FloorDiv(a, k) => a.lower(env)?.floor_div(&const_int(k, env)?)?,
            Term::FloorMod(a, k) => a.lower(env)?.floor_mod(&const_int(k, env)?)?,
        })
    }

    /// Direct evaluation with C semantics (unbounded integers: no overflow), used as the
    /// reference the normal form is tested against. `&` and shifts need integer operands.
    pub fn eval_c(&self, ctx: &HashMap<Var, BigRational>) -> Result<BigRational, EvalError> {
        let int = |t: &Term| -> Result<BigInt, EvalError> {
            let v = t.eval_c(ctx)?;
            if v.is_integer() {
                Ok(v.to_integer())
            } else {
                Err(EvalError::NonInteger(v.to_string()))
            }
        };
        Ok(match self {
            Term::Num(n) => BigRational::from_integer(n.clone()),
            Term::Rat(p, q) => {
                if q.is_zero() {
                    return Err(EvalError::DivisionByZero);
                }
                BigRational::new(p.clone(), q.clone())
            }
            Term::Var(v) => ctx
                .get(v)
                .cloned()
                .ok_or_else(|| EvalError::UnboundVar(v.name().into()))?,
            Term::Neg(a) => -a.eval_c(ctx)?,
            Term::BitNot(a) => BigRational::from_integer(!int(a)?),
            Term::Bin(op, a, b) => match op {
                BinOp::Add => a.eval_c(ctx)? + b.eval_c(ctx)?,
                BinOp::Sub => a.eval_c(ctx)? - b.eval_c(ctx)?,
                BinOp::Mul => a.eval_c(ctx)? * b.eval_c(ctx)?,
                BinOp::Div | BinOp::Rem => {
                    let (x, y) = (int(a)?, int(b)?);
                    if y.is_zero() {
                        return Err(EvalError::DivisionByZero);
                    }
                    // num-bigint's `/` and `%` truncate like C.
                    BigRational::from_integer(if *op == BinOp::Div { x / y } else { x % y })
                }
                BinOp::Shl | BinOp::Shr => {
                    let (x, k) = (int(a)?, int(b)?);
                    let k = k
                        .to_u32()
                        .filter(|k| *k <= MAX_SHIFT)
                        .ok_or_else(|| EvalError::TooLarge(format!("shift by {k}")))?;
                    let p = BigInt::one() << k as usize;
                    BigRational::from_integer(if *op == BinOp::Shl {
                        x * p
                    } else {
                        num_integer::Integer::div_floor(&x, &p)
                    })
                }
                BinOp::BitAnd => BigRational::from_integer(int(a)? & int(b)?),
            },
            Term::Min(ts) => eval_fold(ts, ctx, |a, b| a.min(b))?,
            Term::Max(ts) => eval_fold(ts, ctx, |a, b| a.max(b))?,
            Term::FloorDiv(a, k) | Term::FloorMod(a, k) => {
                let (x, y) = (int(a)?, int(k)?);
                if y.is_zero() {
                    return Err(EvalError::DivisionByZero);
                }
                let q = num_integer::Integer::div_floor(&x, &y);
                BigRational::from_integer(if matches!(self, Term::FloorDiv(..)) {
                    q
                } else {
                    x - y * q
                })
            }
        })
    }
}

fn eval_fold(
    ts: &[Term],
    ctx: &HashMap<Var, BigRational>,
    f: impl Fn(BigRational, BigRational) -> BigRational,
) -> Result<BigRational, EvalError> {
    let mut acc: Option<BigRational> = None;
    for t in ts {
        let v = t.eval_c(ctx)?;
        acc = Some(match acc {
            None => v,
            Some(a) => f(a, v),
        });
    }
    acc.ok_or_else(|| EvalError::NonInteger("empty min/max".into()))
}

fn fold(
    ts: &[Term],
    env: &SignEnv,
    f: impl Fn(&Expr, &Expr, &SignEnv) -> Result<Expr, SymError>,
) -> Result<Expr, SymError> {
    let mut acc: Option<Expr> = None;
    for t in ts {
        let e = t.lower(env)?;
        acc = Some(match acc {
            None => e,
            Some(a) => f(&a, &e, env)?,
        });
    }
    acc.ok_or_else(|| SymError::Unsupported("min/max without operands".into()))
}

fn const_int(t: &Term, env: &SignEnv) -> Result<BigInt, SymError> {
    let e = t.lower(env)?;
    e.as_integer()
        .ok_or_else(|| SymError::NonConstant(format!("{e}")))
}

fn shift_amount(t: &Term, env: &SignEnv) -> Result<u32, SymError> {
    let k = const_int(t, env)?;
    if k.is_negative() {
        return Err(SymError::Unsupported(format!("negative shift {k}")));
    }
    k.to_u32()
        .filter(|k| *k <= MAX_SHIFT)
        .ok_or_else(|| SymError::TooLarge(format!("shift by {k}")))
}

/// `x & m` for masks the normal form can express (two's complement, all integers `x`):
/// `x & (2^k - 1) = x mod 2^k`, `x & -2^k = x - x mod 2^k`, `x & -1 = x`, `x & 0 = 0`.
pub(crate) fn lower_mask(x: &Expr, m: &BigInt) -> Result<Expr, SymError> {
    if m.is_zero() {
        return Ok(Expr::constant(0));
    }
    let plus = m + 1u32;
    if !m.is_negative() && (&plus & m).is_zero() {
        return x.floor_mod(&plus);
    }
    let neg = -m;
    if m.is_negative() && (&neg & (&neg - 1u32)).is_zero() {
        if neg.is_one() {
            return Ok(x.clone());
        }
        return x.checked_sub(&x.floor_mod(&neg)?);
    }
    Err(SymError::Unsupported(format!("& with mask {m}")))
}
