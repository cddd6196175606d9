//! Statements: blocks, `if`, loops (recorded as [`SourceLoop`]s), `switch` as a compare
//! chain, `goto`/labels, `break`/`continue`, `return`.

use super::{err, JumpTargets, LResult, Lowerer};
use crate::ir::{BinOp, Block, IfRegion, InstKind, LoopKind, SourceLoop, Span, Terminator};
use lang_c::ast;
use lang_c::span::Node;
use lang_c::visit::Visit;
use std::collections::{HashMap, HashSet};

/// Loops nested deeper than this in one function are refused (see `nested_loop`): real code
/// stays far below it (PolyBench's deepest nest is 4, the applications' about 8).
pub const MAX_LOOP_NESTING: usize = 128;

impl<'a> Lowerer<'a> {
    pub fn lower_statement(&mut self, s: &Node<ast::Statement>) -> LResult<()> {
        use ast::Statement as S;
        let span: Span = s.span.into();
        if super::stack_exhausted() {
            return super::too_deep(span);
        }
        match &s.node {
            S::Compound(items) => {
                self.scopes.push(span.end);
                let result = self.lower_block_items(items);
                self.scopes.pop();
                result
            }
            S::Expression(Some(e)) => self.rvalue(e).map(|_| ()),
            S::Expression(None) => Ok(()),
            S::If(i) => self.lower_if(i, span),
            S::While(w) => self.nested_loop(span, |l| l.lower_while(w, span)),
            S::DoWhile(d) if super::consteval::runs_once(&d.node) => self.lower_once(d, span),
            S::DoWhile(d) => self.nested_loop(span, |l| l.lower_do_while(d, span)),
            S::For(f) => self.nested_loop(span, |l| l.lower_for(f, span)),
            S::Switch(sw) => self.lower_switch(sw, span),
            S::Labeled(l) => self.lower_labeled(l, span),
            S::Goto(label) => {
                self.gotos.push((label.node.name.clone(), span));
                let target = self.label_block(&label.node.name);
                self.fb.jump(target, span);
                Ok(())
            }
            S::Continue => match self.jumps.iter().rev().find_map(|j| j.continue_to) {
                Some(target) => {
                    self.fb.jump(target, span);
                    Ok(())
                }
                None => err(span, "`continue` outside a loop"),
            },
            S::Break => match self.jumps.last().and_then(|j| j.break_to) {
                Some(target) => {
                    self.fb.jump(target, span);
                    Ok(())
                }
                None => err(span, "`break` outside a loop or switch"),
            },
            S::Return(value) => {
                let value = match value {
                    Some(e) => {
                        let op = self.rvalue(e)?;
                        let ret = self.fb.func.ret;
                        if matches!(self.program.types.get(ret), crate::types::Type::Void) {
                            None
                        } else {
                            Some(self.convert(op, ret, span).value)
                        }
                    }
                    None => None,
                };
                self.fb.terminate(Terminator::Return(value), span);
                Ok(())
            }
            S::Asm(_) => {
                // Inline assembly is opaque: keep it as a call with unknown effects.
                let void = self.void_ty();
                self.fb.emit(
                    InstKind::Call {
                        callee: crate::ir::Callee::Direct("__asm__".into()),
                        args: Vec::new(),
                    },
                    void,
                    span,
                );
                Ok(())
            }
        }
    }

    fn lower_block_items(&mut self, items: &[Node<ast::BlockItem>]) -> LResult<()> {
        for item in items {
            match &item.node {
                ast::BlockItem::Declaration(d) => self.local_declaration(d)?,
                ast::BlockItem::StaticAssert(_) => {}
                ast::BlockItem::Statement(s) => self.lower_statement(s)?,
            }
        }
        Ok(())
    }

    fn lower_if(&mut self, i: &Node<ast::IfStatement>, span: Span) -> LResult<()> {
        let cond_block = self.fb.current();
        let then_block = self.fb.new_block();
        let join = self.fb.new_block();
        let else_block = i.node.else_statement.as_ref().map(|_| self.fb.new_block());
        self.lower_condition(&i.node.condition, then_block, else_block.unwrap_or(join))?;
        self.fb.seal(then_block);
        self.fb.switch_to(then_block);
        self.lower_statement(&i.node.then_statement)?;
        self.fb.jump(join, span);
        if let (Some(block), Some(stmt)) = (else_block, &i.node.else_statement) {
            self.fb.seal(block);
            self.fb.switch_to(block);
            self.lower_statement(stmt)?;
            self.fb.jump(join, span);
        }
        self.fb.seal(join);
        self.fb.switch_to(join);
        self.fb.func.ifs.push(IfRegion {
            span,
            statement: true,
            then_span: i.node.then_statement.span.into(),
            else_span: i.node.else_statement.as_ref().map(|s| s.span.into()),
            cond_block,
            then_block,
            else_block,
            join_block: Some(join),
        });
        Ok(())
    }

    /// `#pragma` lines written directly before a loop keyword (only whitespace, line
    /// markers or other pragmas between).
    fn pragmas_before(&self, keyword: Span) -> Vec<String> {
        self.input
            .pragmas
            .iter()
            .filter(|p| p.anchor == keyword.start as usize)
            .map(|p| p.text.clone())
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn begin_loop(
        &mut self,
        kind: LoopKind,
        keyword: Span,
        span: Span,
        cond_block: Block,
        body_block: Block,
        continue_block: Block,
        exit_block: Block,
        body_span: Span,
    ) -> usize {
        let pragmas = self.pragmas_before(keyword);
        self.fb.func.loops.push(SourceLoop {
            kind,
            keyword_span: keyword,
            span,
            cond_block,
            body_block,
            continue_block,
            exit_block: Some(exit_block),
            pragmas,
            body_span,
        });
        self.fb.func.loops.len() - 1
    }

    /// Lowers a loop one level deeper in the function's loop nest, refusing the function
    /// past [`MAX_LOOP_NESTING`] levels: SSA gives every variable live across a loop a phi at
    /// its header, so a nest of depth d holds d^2 of them (1,000 nested loops took minutes).
    fn nested_loop(
        &mut self,
        span: Span,
        lower: impl FnOnce(&mut Self) -> LResult<()>,
    ) -> LResult<()> {
        if self.loop_depth >= MAX_LOOP_NESTING {
            return err(
                span,
                format!(
                    "loops nested more than {MAX_LOOP_NESTING} deep; warpwise does not analyse this function"
                ),
            );
        }
        self.loop_depth += 1;
        let result = lower(self);
        self.loop_depth -= 1;
        result
    }

    fn lower_while(&mut self, w: &Node<ast::WhileStatement>, span: Span) -> LResult<()> {
        let keyword = keyword_span(span, "while");
        let cond_block = self.fb.new_block();
        let body_block = self.fb.new_block();
        let exit_block = self.fb.new_block();
        self.fb.jump(cond_block, keyword);
        self.begin_loop(
            LoopKind::While,
            keyword,
            span,
            cond_block,
            body_block,
            cond_block,
            exit_block,
            w.node.statement.span.into(),
        );
        self.fb.switch_to(cond_block);
        self.lower_condition(&w.node.expression, body_block, exit_block)?;
        self.fb.seal(body_block);
        self.fb.switch_to(body_block);
        self.jumps.push(JumpTargets {
            break_to: Some(exit_block),
            continue_to: Some(cond_block),
        });
        let result = self.lower_statement(&w.node.statement);
        self.jumps.pop();
        result?;
        self.fb.jump(cond_block, keyword);
        self.fb.seal(cond_block);
        self.fb.seal(exit_block);
        self.fb.switch_to(exit_block);
        Ok(())
    }

    /// `do S while (0)`: `S` once, with `break` and `continue` (which tests the false
    /// condition) both leaving it.
    fn lower_once(&mut self, d: &Node<ast::DoWhileStatement>, span: Span) -> LResult<()> {
        let keyword = keyword_span(span, "do");
        let exit_block = self.fb.new_block();
        self.jumps.push(JumpTargets {
            break_to: Some(exit_block),
            continue_to: Some(exit_block),
        });
        let result = self.lower_statement(&d.node.statement);
        self.jumps.pop();
        result?;
        self.fb.jump(exit_block, keyword);
        self.fb.seal(exit_block);
        self.fb.switch_to(exit_block);
        Ok(())
    }

    fn lower_do_while(&mut self, d: &Node<ast::DoWhileStatement>, span: Span) -> LResult<()> {
        let keyword = keyword_span(span, "do");
        let body_block = self.fb.new_block();
        let cond_block = self.fb.new_block();
        let exit_block = self.fb.new_block();
        self.fb.jump(body_block, keyword);
        self.begin_loop(
            LoopKind::DoWhile,
            keyword,
            span,
            cond_block,
            body_block,
            cond_block,
            exit_block,
            d.node.statement.span.into(),
        );
        self.fb.switch_to(body_block);
        self.jumps.push(JumpTargets {
            break_to: Some(exit_block),
            continue_to: Some(cond_block),
        });
        let result = self.lower_statement(&d.node.statement);
        self.jumps.pop();
        result?;
        self.fb.jump(cond_block, keyword);
        self.fb.seal(cond_block);
        self.fb.switch_to(cond_block);
        self.lower_condition(&d.node.expression, body_block, exit_block)?;
        self.fb.seal(body_block);
        self.fb.seal(exit_block);
        self.fb.switch_to(exit_block);
        Ok(())
    }

    fn lower_for(&mut self, f: &Node<ast::ForStatement>, span: Span) -> LResult<()> {
        let keyword = keyword_span(span, "for");
        self.scopes.push(span.end);
        let result = self.lower_for_scoped(f, span, keyword);
        self.scopes.pop();
        result
    }

    fn lower_for_scoped(
        &mut self,
        f: &Node<ast::ForStatement>,
        span: Span,
        keyword: Span,
    ) -> LResult<()> {
        match &f.node.initializer.node {
            ast::ForInitializer::Empty | ast::ForInitializer::StaticAssert(_) => {}
            ast::ForInitializer::Expression(e) => {
                self.rvalue(e)?;
            }
            ast::ForInitializer::Declaration(d) => self.local_declaration(d)?,
        }
        let cond_block = self.fb.new_block();
        let body_block = self.fb.new_block();
        let step_block = self.fb.new_block();
        let exit_block = self.fb.new_block();
        self.fb.jump(cond_block, keyword);
        self.begin_loop(
            LoopKind::For,
            keyword,
            span,
            cond_block,
            body_block,
            step_block,
            exit_block,
            f.node.statement.span.into(),
        );
        self.fb.switch_to(cond_block);
        match &f.node.condition {
            Some(c) => self.lower_condition(c, body_block, exit_block)?,
            None => self.fb.jump(body_block, keyword),
        }
        self.fb.seal(body_block);
        self.fb.switch_to(body_block);
        self.jumps.push(JumpTargets {
            break_to: Some(exit_block),
            continue_to: Some(step_block),
        });
        let result = self.lower_statement(&f.node.statement);
        self.jumps.pop();
        result?;
        self.fb.jump(step_block, keyword);
        self.fb.seal(step_block);
        self.fb.switch_to(step_block);
        if let Some(step) = &f.node.step {
            self.rvalue(step)?;
        }
        self.fb.jump(cond_block, keyword);
        self.fb.seal(cond_block);
        self.fb.seal(exit_block);
        self.fb.switch_to(exit_block);
        Ok(())
    }

    fn lower_switch(&mut self, sw: &Node<ast::SwitchStatement>, span: Span) -> LResult<()> {
        let scrutinee = self.rvalue(&sw.node.expression)?;
        let promoted = self.program.types.promote(scrutinee.ty);
        let scrutinee = self.convert(scrutinee, promoted, span);
        let exit_block = self.fb.new_block();
        let mut labels = Vec::new();
        collect_case_labels(&sw.node.statement, &mut labels);
        let mut blocks = HashMap::new();
        let mut default_block = None;
        let mut tests = Vec::new();
        for label in &labels {
            let block = self.fb.new_block();
            blocks.insert(label.key, block);
            match &label.kind {
                CaseKind::Default => default_block = Some(block),
                CaseKind::Value(e) => match self.const_eval(e) {
                    Some(v) => tests.push((v, v, block, label.span)),
                    None => return err(e.span, "case label is not a constant"),
                },
                CaseKind::Range(lo, hi) => match (self.const_eval(lo), self.const_eval(hi)) {
                    (Some(a), Some(b)) => tests.push((a, b, block, label.span)),
                    _ => return err(lo.span, "case range is not constant"),
                },
            }
        }
        // The compare chain: one test per case label, in source order, each with its label's
        // span. With the whole statement's, every test of a 5,000-case switch printed the
        // statement as its condition (a quadratic report).
        for (lo, hi, target, span) in tests {
            let next = self.fb.new_block();
            let cond = if lo == hi {
                let c = self.const_of(lo, promoted, span);
                self.fb.emit(
                    InstKind::Binary(BinOp::Eq, scrutinee.value, c.value),
                    self.program.types.int(),
                    span,
                )
            } else {
                let int = self.program.types.int();
                let low = self.const_of(lo, promoted, span);
                let high = self.const_of(hi, promoted, span);
                let ge = self.fb.emit(
                    InstKind::Binary(BinOp::Ge, scrutinee.value, low.value),
                    int,
                    span,
                );
                let le = self.fb.emit(
                    InstKind::Binary(BinOp::Le, scrutinee.value, high.value),
                    int,
                    span,
                );
                self.fb
                    .emit(InstKind::Binary(BinOp::BitAnd, ge, le), int, span)
            };
            self.fb.terminate(
                Terminator::Branch {
                    cond,
                    then_block: target,
                    else_block: next,
                },
                span,
            );
            self.fb.seal(next);
            self.fb.switch_to(next);
        }
        self.fb.jump(default_block.unwrap_or(exit_block), span);
        // The body starts unreachable: only case labels enter it.
        let dead = self.fb.new_block();
        self.fb.seal(dead);
        self.fb.switch_to(dead);
        self.case_blocks.push(blocks.clone());
        let continue_to = self.jumps.last().and_then(|j| j.continue_to);
        self.jumps.push(JumpTargets {
            break_to: Some(exit_block),
            continue_to,
        });
        let result = self.lower_statement(&sw.node.statement);
        self.jumps.pop();
        self.case_blocks.pop();
        result?;
        self.fb.jump(exit_block, span);
        // In block order, not the map's: sealing creates phis, and their order must not
        // change from run to run (reports are deterministic).
        let mut case_blocks: Vec<_> = blocks.values().copied().collect();
        case_blocks.sort();
        for block in case_blocks {
            self.fb.seal(block);
        }
        self.fb.seal(exit_block);
        self.fb.switch_to(exit_block);
        Ok(())
    }

    fn lower_labeled(&mut self, l: &Node<ast::LabeledStatement>, span: Span) -> LResult<()> {
        let target = match &l.node.label.node {
            ast::Label::Identifier(id) => {
                self.defined_labels.insert(id.node.name.clone());
                self.label_block(&id.node.name)
            }
            ast::Label::Case(_) | ast::Label::CaseRange(_) | ast::Label::Default => {
                let key = span.start as usize;
                match self.case_blocks.last().and_then(|m| m.get(&key)) {
                    Some(block) => *block,
                    None => return err(span, "case label outside a switch"),
                }
            }
        };
        self.fb.jump(target, span);
        self.fb.switch_to(target);
        self.lower_statement(&l.node.statement)
    }

    /// The block of a `goto` label; created at first mention, sealed when the function ends.
    fn label_block(&mut self, name: &str) -> Block {
        if let Some(block) = self.labels.get(name) {
            return *block;
        }
        let block = self.fb.new_block();
        self.labels.insert(name.to_string(), block);
        block
    }
}

/// The span of the keyword that starts a statement: its first `len(keyword)` bytes.
fn keyword_span(statement: Span, keyword: &str) -> Span {
    if statement.is_none() {
        return statement;
    }
    Span {
        start: statement.start,
        end: statement.start + keyword.len() as u32,
    }
}

enum CaseKind<'a> {
    Value(&'a Node<ast::Expression>),
    Range(&'a Node<ast::Expression>, &'a Node<ast::Expression>),
    Default,
}

struct CaseLabel<'a> {
    key: usize,
    /// The label itself (`case 5`), which its test in the compare chain is reported by.
    span: Span,
    kind: CaseKind<'a>,
}

/// Case labels of one switch body, not descending into nested switches.
fn collect_case_labels<'a>(s: &'a Node<ast::Statement>, out: &mut Vec<CaseLabel<'a>>) {
    use ast::Statement as S;
    match &s.node {
        S::Labeled(l) => {
            let key = s.span.start;
            let span = l.node.label.span.into();
            match &l.node.label.node {
                ast::Label::Case(e) => out.push(CaseLabel {
                    key,
                    span,
                    kind: CaseKind::Value(e),
                }),
                ast::Label::CaseRange(r) => out.push(CaseLabel {
                    key,
                    span,
                    kind: CaseKind::Range(&r.node.low, &r.node.high),
                }),
                ast::Label::Default => out.push(CaseLabel {
                    key,
                    span,
                    kind: CaseKind::Default,
                }),
                ast::Label::Identifier(_) => {}
            }
            collect_case_labels(&l.node.statement, out);
        }
        S::Compound(items) => {
            for item in items {
                if let ast::BlockItem::Statement(st) = &item.node {
                    collect_case_labels(st, out);
                }
            }
        }
        S::If(i) => {
            collect_case_labels(&i.node.then_statement, out);
            if let Some(e) = &i.node.else_statement {
                collect_case_labels(e, out);
            }
        }
        S::While(w) => collect_case_labels(&w.node.statement, out),
        S::DoWhile(d) => collect_case_labels(&d.node.statement, out),
        S::For(f) => collect_case_labels(&f.node.statement, out),
        _ => {}
    }
}

/// Names of variables whose address is taken (`&x`) anywhere in a function body. Shadowing
/// is ignored on purpose: a name taken anywhere stays in memory everywhere, which is safe.
pub(crate) fn address_taken_names(body: &Node<ast::Statement>) -> HashSet<String> {
    struct Finder {
        names: HashSet<String>,
    }
    impl<'ast> Visit<'ast> for Finder {
        fn visit_unary_operator_expression(
            &mut self,
            n: &'ast ast::UnaryOperatorExpression,
            span: &'ast lang_c::span::Span,
        ) {
            if matches!(n.operator.node, ast::UnaryOperator::Address) {
                if let Some(name) = root_identifier(&n.operand.node) {
                    self.names.insert(name);
                }
            }
            lang_c::visit::visit_unary_operator_expression(self, n, span);
        }
    }
    let mut finder = Finder {
        names: HashSet::new(),
    };
    finder.visit_statement(&body.node, &body.span);
    finder.names
}

/// `x` for `&x`, `&x.f`, `&x[3]` when `x` is an aggregate or scalar named directly.
fn root_identifier(e: &ast::Expression) -> Option<String> {
    match e {
        ast::Expression::Identifier(id) => Some(id.node.name.clone()),
        ast::Expression::Member(m)
            if matches!(m.node.operator.node, ast::MemberOperator::Direct) =>
        {
            root_identifier(&m.node.expression.node)
        }
        _ => None,
    }
}
