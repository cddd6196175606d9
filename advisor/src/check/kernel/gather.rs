//! Gathers and scatters: an address whose per-lane part is data each lane reads at an
//! address of its own (`in[idx[i]]`, `out[edges[e]]`), or a value derived from such data.
//! The lanes' addresses are then the data's: a bound from 1 request (every lane alike) to
//! every lane its own, reported as WW201 with the range ("may").

use super::{finding_for, Kernel};
use crate::check::model::{AccessReport, Coalescing};
use crate::rules::ww201_uncoalesced::Cause;
use analyses::symbols::SymbolOrigin;
use frontend::ir::{BinOp, Block};
use symbolic::{Expr, Var};

/// How deep a chain of loads (`a[b[c[i]]]`) is followed back to the thread index.
const DEPTH: u32 = 4;

impl Kernel<'_> {
    /// Whether every name of `offset` that differs between a warp's lanes (other than a
    /// thread coordinate) is data each lane reads at an address of its own: a load whose
    /// address steps with the thread index along x, or one whose address depends on such
    /// data. A load at an address the analysis does not model (`d_jW[col]`, `col` from a
    /// division) may give every lane of a warp the same value, so it does not qualify.
    pub(super) fn per_lane_data(&self, offset: &Expr, at: Block, depth: u32) -> bool {
        let varying: Vec<Var> = offset
            .vars()
            .into_iter()
            .filter(|v| self.varies_name(v, at))
            .collect();
        !varying.is_empty() && varying.iter().all(|v| self.read_per_lane(v, depth))
    }

    /// Whether the symbol `var` is a load of data each lane reads at its own address.
    fn read_per_lane(&self, var: &Var, depth: u32) -> bool {
        if depth >= DEPTH {
            return false;
        }
        let Some(symbol) = self.rec.symbols.info(var) else {
            return false;
        };
        let SymbolOrigin::Load { load, address } = symbol.origin else {
            return false;
        };
        let at = self.func().inst(load).block;
        let [form] = self.rec.of(address) else {
            return false;
        };
        let (base, offset) = crate::access::split_base(form, &self.rec.symbols);
        if base.is_none() {
            return false;
        }
        let (offset, _) = self.unrolled(&offset, at);
        if self.varying_name(&offset, at).is_some() {
            return self.per_lane_data(&offset, at, depth + 1);
        }
        // Lanes one or more elements apart read distinct elements; a stride of 0 (or one
        // not written in the thread index) gives the warp's lanes one value.
        let settled = offset.substitute(&self.known).unwrap_or(offset);
        crate::check::warp::stride_along_x(&settled, &self.coordinates)
            .is_some_and(|s| s.as_integer().and_then(|i| i64::try_from(i).ok()) != Some(0))
    }

    /// The guard on data that lets through only the lanes holding one value the same for
    /// the warp (`keys[t] == key`, a lookup's hit): where the values differ, one lane. A
    /// truth test (`!visited[id]`, the data against 0 alone) is no lookup: a flag lets
    /// through as many lanes as hold it.
    fn lookup_guard(&self, b: Block) -> Option<String> {
        self.guards(b)
            .into_iter()
            .find(|g| {
                g.by_data
                    && matches!(
                        (g.op, g.taken),
                        (Some(BinOp::Eq), true) | (Some(BinOp::Ne), false)
                    )
                    && g.difference.as_poly().is_some_and(|p| p.terms().len() >= 2)
            })
            .map(|g| g.text)
    }

    /// The report of a gather (scatter) whose address depends on `var`, per-lane data:
    /// the bounds of `unknown`'s start, the class and the finding. Where a guard lets
    /// through only the lanes holding one value (a lookup) or one lane, it stays unknown.
    pub(super) fn gathered(
        &self,
        mut report: AccessReport,
        offset: &Expr,
        var: &Var,
        b: Block,
    ) -> AccessReport {
        let (masked, note) = self.active_lanes(b);
        report.active = note;
        if masked.restricted && masked.most <= 1 {
            report.reason = Some(format!(
                "the address depends on `{var}`, data read per lane, but one lane runs it"
            ));
            return report;
        }
        if let Some(guard) = self.lookup_guard(b) {
            report.reason = Some(format!(
                "the address depends on `{var}`, data read per lane, but `{guard}` lets through \
                 only the lanes holding one value, one lane where the values differ (a lookup)"
            ));
            return report;
        }
        report.coalescing = Coalescing::DataDependent;
        report.reason = Some(format!(
            "the address depends on `{var}`, data each lane reads at an address of its own: \
             from 1 request (every lane alike) to every lane its own, as the data falls"
        ));
        // A lane that walks from a data-placed start by a uniform step (`dst[dword + i]`)
        // owns a chunk; otherwise the data picks each element.
        let chunk = offset.vars().iter().any(|v| {
            v.name().starts_with("iter(")
                || self
                    .rec
                    .symbols
                    .info(v)
                    .is_some_and(|s| matches!(s.origin, SymbolOrigin::Induction(_)))
        });
        report.finding = Some(finding_for(
            &report,
            Cause::DataDependent {
                value: var.name().to_string(),
                chunk,
            },
        ));
        report
    }
}
