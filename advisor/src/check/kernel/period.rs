//! Branches on a remainder tested against zero, `v % R == 0` (also `!= 0`, `!(v % R)`,
//! the operands swapped), where along a warp's lanes `v` is `a*threadIdx.x + c`, `a` a
//! known integer and `c` the same for the lanes, and `R` is the same for the lanes too.
//! The lanes where `R` divides `v` are those `t` with `a*t = -c (mod R)`: none or one
//! residue class modulo the period `P = |R| / gcd(a, R)`. So the truth repeats every `P`
//! threads: `P = 1` keeps every warp whole; `2 <= P <= 32` splits every warp, provided some
//! lane holds it (`gcd(a, R)` divides `c`, shown from `c`'s coefficients); `P > 32` leaves at
//! most one lane per warp where it holds, so only the warps holding such a lane split.
//! Where `R` is not known the class is `periodic`, with the period written in the names of
//! the source (heartwall's `(ei_new+1) % d_common.in_rows == 0`).

use super::Kernel;
use crate::check::model::Divergence;
use crate::coalescing::WARP;
use frontend::ir::{BinOp, Block, Function, InstKind, UnOp, Value};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use symbolic::{Expr, SignSet};

/// A remainder whose lanes the analysis can follow: the dividend's coefficient along x, the
/// divisor's value where known, and the texts that word it.
struct Remainder {
    /// `a`, the dividend's step from one lane to the next.
    step: BigInt,
    /// Whether some lane of every warp is proven to hold a multiple whatever the period:
    /// the dividend's uniform part is a multiple of `a` (so of `gcd(a, R)`).
    reachable: bool,
    /// The gcd of the uniform part's integer coefficients (0 for no uniform part).
    content: BigInt,
    /// `R` where the known values settle it.
    divisor: Option<BigInt>,
    /// The remainder as written (`(ei_new+1) % d_common.in_rows`).
    text: String,
    /// The divisor in the source's names (`d_common.in_rows`).
    divisor_text: String,
    /// Whether the divisor's value comes from the known values (`--set`, a launch), not
    /// from the source.
    settled: bool,
    signed: bool,
}

impl Kernel<'_> {
    /// The class of a branch on a remainder tested against zero, when its period along the
    /// threads can be shown; `None` otherwise (the caller's class stands).
    pub(super) fn periodic(&self, cond: Value, b: Block) -> Option<(Divergence, String)> {
        let r = self.remainder(cond, b)?;
        let Some(divisor) = &r.divisor else {
            if !r.reachable {
                return None;
            }
            let period = match (r.step.abs().is_one(), r.signed) {
                (true, true) => format!("|{}|", r.divisor_text),
                (true, false) => r.divisor_text.clone(),
                (false, true) => format!(
                    "|{}| / gcd({}, {})",
                    r.divisor_text,
                    r.step.abs(),
                    r.divisor_text
                ),
                (false, false) => format!(
                    "{} / gcd({}, {})",
                    r.divisor_text,
                    r.step.abs(),
                    r.divisor_text
                ),
            };
            return Some((
                Divergence::Periodic,
                format!(
                    "`{text}` is 0 on one thread in every P = {period} along the thread index \
                     (`{divisor}` is the same for the warp's threads): every warp diverges when P \
                     is 2 to 32, only the warps holding such a thread when P is above 32, none \
                     when P is 1",
                    text = r.text,
                    divisor = r.divisor_text,
                ),
            ));
        };
        let period = divisor.abs() / divisor.abs().gcd(&r.step.abs());
        let settled = if r.settled {
            format!(" ({} = {divisor})", r.divisor_text)
        } else {
            String::new()
        };
        if period.is_one() {
            return Some((
                Divergence::Never,
                format!(
                    "{known}`{}` repeats every thread: the condition is the same for every \
                     thread of a warp",
                    r.text,
                    known = if r.settled {
                        format!("with the known sizes{settled} ")
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        if period > BigInt::from(WARP) {
            return Some((
                Divergence::SomeWarps,
                format!(
                    "`{text}` is 0 on one thread in every {period} along the thread \
                     index{settled}: a warp holds at most one such thread, so only the warps \
                     holding one diverge, 32 in every {period} warps consecutive along the \
                     thread index",
                    text = r.text
                ),
            ));
        }
        // Some lane holds a multiple when `gcd(a, R)` divides the uniform part.
        let divides = (&r.content % divisor.abs().gcd(&r.step.abs())).is_zero();
        divides.then(|| {
            (
                Divergence::EveryWarp,
                format!(
                    "`{}` is 0 on one thread in every {period} along the thread \
                     index{settled}, so the condition changes inside every warp",
                    r.text
                ),
            )
        })
    }

    /// The remainder `cond` tests against zero, when its lanes can be followed.
    fn remainder(&self, cond: Value, b: Block) -> Option<Remainder> {
        let func = self.func();
        let rem = self.tested_remainder(cond)?;
        let InstKind::Binary(BinOp::Rem, dividend, divisor) = func.inst(rem).kind else {
            return None;
        };
        // A warp is 32 consecutive `threadIdx.x` only where the block's rows are whole warps.
        let x = self.coordinates.thread[0].as_ref()?;
        if self.varying_axes[1] || self.varying_axes[2] || self.variance.varies_at(divisor, b) {
            return None;
        }
        // A dividend narrowed by a cast may wrap around, off its expression.
        if self.rec.inexact.contains(&dividend) {
            return None;
        }
        let (dividend_expr, _) = self.unrolled(self.rec.single(dividend)?, b);
        if self.varying_name(&dividend_expr, b).is_some() {
            return None;
        }
        let dividend_expr = dividend_expr
            .substitute(&self.known)
            .unwrap_or(dividend_expr);
        let (step, uniform) = dividend_expr.as_poly()?.linear_coeff(x)?;
        if !step.is_integer() {
            return None;
        }
        let step = step.to_integer();
        let mut content = BigInt::zero();
        for (_, c) in uniform.terms() {
            if !c.is_integer() {
                return None;
            }
            content = content.gcd(&c.to_integer());
        }
        let written = self.rec.single(divisor)?;
        // The divisor in the source's names (`d_common.in_rows`; a parameter's instruction
        // spans its declaration, so not its text).
        let divisor_text = written.to_string();
        let divisor_expr = written
            .substitute(&self.known)
            .unwrap_or_else(|_| written.clone());
        let settled = written.as_integer().is_none();
        let known = divisor_expr.as_integer();
        if known.as_ref().is_some_and(Zero::is_zero) {
            return None;
        }
        let types = &self.program().types;
        let signed = types.is_signed(func.inst(rem).ty);
        // An unsigned dividend below zero wraps around, which breaks the period unless the
        // divisor divides the wrap (a power of two).
        let power_of_two = known
            .as_ref()
            .is_some_and(|k| k.sign() == num_bigint::Sign::Plus && (k & (k - 1u32)).is_zero());
        let nonnegative = step.sign() == num_bigint::Sign::Plus
            && symbolic::sign_of(&Expr::Poly(uniform), &self.env).is_subset(SignSet::NON_NEG);
        // An unsigned remainder by a negative constant divides by that constant plus the wrap.
        let negative = known
            .as_ref()
            .is_some_and(|k| k.sign() == num_bigint::Sign::Minus);
        if !signed && (negative || (!power_of_two && !nonnegative)) {
            return None;
        }
        let unit = self.setting.unit;
        Some(Remainder {
            reachable: content.is_zero() || (&content % &step).is_zero(),
            step,
            content,
            divisor: known,
            text: unit.snippet(func.inst(rem).origin.span),
            divisor_text,
            settled,
            signed,
        })
    }

    /// The remainder whose being 0 decides `cond`: through `== 0`, `!= 0`, `!` and casts
    /// that keep every value (none of them changes which lanes agree).
    fn tested_remainder(&self, mut v: Value) -> Option<Value> {
        let func = self.func();
        loop {
            match func.inst(v).kind {
                InstKind::Binary(BinOp::Rem, ..) => return Some(v),
                InstKind::Binary(BinOp::Eq | BinOp::Ne, l, r) => {
                    v = if self.is_zero(r) {
                        l
                    } else if self.is_zero(l) {
                        r
                    } else {
                        return None;
                    };
                }
                InstKind::Unary(UnOp::Not, x) => v = x,
                InstKind::Cast(x) if widening(self, func, x, v) => v = x,
                _ => return None,
            }
        }
    }

    fn is_zero(&self, v: Value) -> bool {
        self.rec.single(v).is_some_and(|e| *e == Expr::constant(0))
    }
}

/// Whether the cast of `from` to `to` keeps 0 and only 0 at 0: an integer to an integer at
/// least as wide (a narrowing one can make a multiple of 256 zero).
fn widening(kernel: &Kernel, func: &Function, from: Value, to: Value) -> bool {
    let types = &kernel.program().types;
    let (a, b) = (func.inst(from).ty, func.inst(to).ty);
    types.is_integer(a) && types.is_integer(b) && types.size_of(b) >= types.size_of(a)
}
