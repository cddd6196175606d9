//! Parser for the C expression syntax printed by [`Expr::to_c`], plus equations (`n = 200`),
//! value lists (`n=200, m=3`) and sign facts (`n > 0, m >= 0`). Errors carry the byte offset.

use crate::error::{ParseError, SymError};
use crate::expr::Expr;
use crate::sign::{SignEnv, SignSet};
use crate::solve::Equation;
use crate::term::{BinOp, Term};
use crate::var::Var;
use num_bigint::BigInt;
use num_rational::BigRational;
use std::collections::HashMap;

const MAX_NESTING: usize = 200;
/// The most binary operators one expression may have. A chain `a + b + c + ...` is a tree as
/// deep as it is long, and everything downstream (normalisation, evaluation, even freeing it)
/// recurses over that depth: a report's 200,000-term section overflowed the stack. Sections
/// warpwise writes have tens of terms.
pub const MAX_OPERATORS: usize = 2_000;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(BigInt),
    Ident(String),
    Op(&'static str),
    End,
}

fn lex(s: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    const OPS: [&str; 19] = [
        "<<", ">>", "==", "<=", ">=", "!=", "+", "-", "*", "/", "%", "&", "~", "(", ")", ",", "=",
        "<", ">",
    ];
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let st = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i < b.len() && (b[i].is_ascii_alphabetic() || b[i] == b'_' || b[i] == b'.') {
                return Err(ParseError {
                    pos: i,
                    msg: "malformed number (only decimal integers are accepted)".into(),
                });
            }
            let n: BigInt = s[st..i].parse().map_err(|_| ParseError {
                pos: st,
                msg: "bad number".into(),
            })?;
            out.push((Tok::Num(n), st));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let st = i;
            loop {
                if i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                    i += 1;
                } else if name_continues_after_arrow(b, i) {
                    // Callers name struct members reached through pointers `c->n`: one symbol.
                    i += 2;
                } else {
                    break;
                }
            }
            out.push((Tok::Ident(s[st..i].to_string()), st));
        } else if let Some(op) = OPS.iter().find(|op| s[i..].starts_with(**op)) {
            out.push((Tok::Op(op), i));
            i += op.len();
        } else {
            let ch = s[i..].chars().next().unwrap_or('?');
            return Err(ParseError {
                pos: i,
                msg: format!("unexpected character `{ch}`"),
            });
        }
    }
    out.push((Tok::End, s.len()));
    Ok(out)
}

fn name_continues_after_arrow(b: &[u8], i: usize) -> bool {
    b.get(i) == Some(&b'-')
        && b.get(i + 1) == Some(&b'>')
        && b.get(i + 2)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    i: usize,
    depth: usize,
    operators: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.i.min(self.toks.len() - 1)].0
    }
    fn pos(&self) -> usize {
        self.toks[self.i.min(self.toks.len() - 1)].1
    }
    fn err<T>(&self, msg: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            pos: self.pos(),
            msg: msg.into(),
        })
    }
    fn bump(&mut self) {
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
    }
    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Tok::Op(o) if *o == op) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, op: &str) -> Result<(), ParseError> {
        if self.eat(op) {
            Ok(())
        } else {
            self.err(format!("expected `{op}`"))
        }
    }

    fn expr(&mut self) -> Result<Term, ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return self.err("expression nested too deeply");
        }
        let r = self.bitand();
        self.depth -= 1;
        r
    }

    /// A binary node, counted against [`MAX_OPERATORS`].
    fn bin(&mut self, op: BinOp, a: Term, b: Term) -> Result<Term, ParseError> {
        self.operators += 1;
        if self.operators > MAX_OPERATORS {
            return self.err("expression too large (more than 2,000 operators)");
        }
        Ok(Term::bin(op, a, b))
    }

    fn bitand(&mut self) -> Result<Term, ParseError> {
        let mut t = self.shift()?;
        while self.eat("&") {
            let rhs = self.shift()?;
            t = self.bin(BinOp::BitAnd, t, rhs)?;
        }
        Ok(t)
    }

    fn shift(&mut self) -> Result<Term, ParseError> {
        let mut t = self.additive()?;
        loop {
            if self.eat("<<") {
                let rhs = self.additive()?;
                t = self.bin(BinOp::Shl, t, rhs)?;
            } else if self.eat(">>") {
                let rhs = self.additive()?;
                t = self.bin(BinOp::Shr, t, rhs)?;
            } else {
                return Ok(t);
            }
        }
    }

    fn additive(&mut self) -> Result<Term, ParseError> {
        let mut t = self.multiplicative()?;
        loop {
            if self.eat("+") {
                let rhs = self.multiplicative()?;
                t = self.bin(BinOp::Add, t, rhs)?;
            } else if self.eat("-") {
                let rhs = self.multiplicative()?;
                t = self.bin(BinOp::Sub, t, rhs)?;
            } else {
                return Ok(t);
            }
        }
    }

    fn multiplicative(&mut self) -> Result<Term, ParseError> {
        let mut t = self.unary()?;
        loop {
            let op = if self.eat("*") {
                BinOp::Mul
            } else if self.eat("/") {
                BinOp::Div
            } else if self.eat("%") {
                BinOp::Rem
            } else {
                return Ok(t);
            };
            let rhs = self.unary()?;
            t = self.bin(op, t, rhs)?;
        }
    }

    fn unary(&mut self) -> Result<Term, ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return self.err("expression nested too deeply");
        }
        let r = if self.eat("-") {
            Ok(Term::Neg(Box::new(self.unary()?)))
        } else if self.eat("+") {
            self.unary()
        } else if self.eat("~") {
            Ok(Term::BitNot(Box::new(self.unary()?)))
        } else {
            self.primary()
        };
        self.depth -= 1;
        r
    }

    fn args(&mut self) -> Result<Vec<Term>, ParseError> {
        self.expect("(")?;
        let mut v = vec![self.expr()?];
        while self.eat(",") {
            v.push(self.expr()?);
        }
        self.expect(")")?;
        Ok(v)
    }

    fn primary(&mut self) -> Result<Term, ParseError> {
        match self.peek().clone() {
            Tok::Num(n) => {
                self.bump();
                Ok(Term::Num(n))
            }
            Tok::Ident(name) => {
                let at = self.pos();
                self.bump();
                let is_call = matches!(self.peek(), Tok::Op("("));
                match (name.as_str(), is_call) {
                    ("min", true) | ("max", true) => {
                        let a = self.args()?;
                        Ok(if name == "min" {
                            Term::Min(a)
                        } else {
                            Term::Max(a)
                        })
                    }
                    ("floor_div", true) | ("floor_mod", true) | ("rat", true) => {
                        let mut a = self.args()?;
                        if a.len() != 2 {
                            return Err(ParseError {
                                pos: at,
                                msg: format!("`{name}` takes 2 arguments"),
                            });
                        }
                        let k = a.pop().unwrap_or(Term::num(1));
                        let x = a.pop().unwrap_or(Term::num(0));
                        match name.as_str() {
                            "floor_div" => Ok(Term::FloorDiv(Box::new(x), Box::new(k))),
                            "floor_mod" => Ok(Term::FloorMod(Box::new(x), Box::new(k))),
                            _ => match (int_literal(&x), int_literal(&k)) {
                                (Some(p), Some(q)) if q != BigInt::from(0) => Ok(Term::Rat(p, q)),
                                _ => Err(ParseError {
                                    pos: at,
                                    msg: "`rat` takes two integer literals, the second nonzero"
                                        .into(),
                                }),
                            },
                        }
                    }
                    (_, true) => Err(ParseError {
                        pos: at,
                        msg: format!("unknown function `{name}`"),
                    }),
                    _ => Ok(Term::Var(Var::new(&name))),
                }
            }
            Tok::Op("(") => {
                self.bump();
                let t = self.expr()?;
                self.expect(")")?;
                Ok(t)
            }
            Tok::End => self.err("unexpected end of input"),
            Tok::Op(o) => self.err(format!("unexpected `{o}`")),
        }
    }
}

fn int_literal(t: &Term) -> Option<BigInt> {
    match t {
        Term::Num(n) => Some(n.clone()),
        Term::Neg(a) => int_literal(a).map(|n| -n),
        _ => None,
    }
}

fn parser(s: &str) -> Result<Parser, ParseError> {
    Ok(Parser {
        toks: lex(s)?,
        i: 0,
        depth: 0,
        operators: 0,
    })
}

fn finish(p: &Parser) -> Result<(), ParseError> {
    if matches!(p.peek(), Tok::End) {
        Ok(())
    } else {
        p.err("unexpected trailing input")
    }
}

/// Parses a C expression into a tree (no normalisation).
pub fn parse_term(s: &str) -> Result<Term, ParseError> {
    let mut p = parser(s)?;
    let t = p.expr()?;
    finish(&p)?;
    Ok(t)
}

/// Parses a C expression and normalises it (C `/` and `%` become truncating atoms).
pub fn parse_expr(s: &str) -> Result<Expr, SymError> {
    parse_term(s)?.lower(&SignEnv::new())
}

/// Parses `lhs = rhs` (or `lhs == rhs`).
pub fn parse_equation(s: &str) -> Result<Equation, SymError> {
    let mut p = parser(s)?;
    let l = p.expr()?;
    if !(p.eat("==") || p.eat("=")) {
        return Err(p.err::<()>("expected `=`").unwrap_err().into());
    }
    let r = p.expr()?;
    finish(&p)?;
    let env = SignEnv::new();
    Ok(Equation::new(l.lower(&env)?, r.lower(&env)?))
}

/// Parses a comma-separated list of `name = constant expression`, e.g. `n=200, m=-3`.
pub fn parse_values(s: &str) -> Result<HashMap<Var, BigRational>, SymError> {
    let mut p = parser(s)?;
    let mut out = HashMap::new();
    if matches!(p.peek(), Tok::End) {
        return Ok(out);
    }
    loop {
        let Tok::Ident(name) = p.peek().clone() else {
            return Err(p.err::<()>("expected a variable name").unwrap_err().into());
        };
        p.bump();
        if !(p.eat("=") || p.eat("==")) {
            return Err(p.err::<()>("expected `=`").unwrap_err().into());
        }
        let at = p.pos();
        let e = p.expr()?.lower(&SignEnv::new())?;
        let c = e.as_constant().ok_or_else(|| ParseError {
            pos: at,
            msg: "value must be a constant".into(),
        })?;
        out.insert(Var::new(&name), c);
        if !p.eat(",") {
            break;
        }
    }
    finish(&p)?;
    Ok(out)
}

/// Parses sign facts `v > 0`, `v >= 0`, `v < 0`, `v <= 0`, `v == 0`, `v != 0` separated by commas.
pub fn parse_signs(s: &str) -> Result<SignEnv, SymError> {
    let mut p = parser(s)?;
    let mut env = SignEnv::new();
    if matches!(p.peek(), Tok::End) {
        return Ok(env);
    }
    loop {
        let Tok::Ident(name) = p.peek().clone() else {
            return Err(p.err::<()>("expected a variable name").unwrap_err().into());
        };
        p.bump();
        let set = match p.peek() {
            Tok::Op(">") => SignSet::POS,
            Tok::Op(">=") => SignSet::NON_NEG,
            Tok::Op("<") => SignSet::NEG,
            Tok::Op("<=") => SignSet::NON_POS,
            Tok::Op("==") | Tok::Op("=") => SignSet::ZERO,
            Tok::Op("!=") => SignSet::NON_ZERO,
            _ => return Err(p.err::<()>("expected a comparison").unwrap_err().into()),
        };
        p.bump();
        if !matches!(p.peek(), Tok::Num(n) if *n == BigInt::from(0)) {
            return Err(p.err::<()>("sign facts compare with 0").unwrap_err().into());
        }
        p.bump();
        let v = Var::new(&name);
        let cur = env.get(&v);
        env.set(v, cur.intersect(set));
        if !p.eat(",") {
            break;
        }
    }
    finish(&p)?;
    Ok(env)
}
