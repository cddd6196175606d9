//! Which lanes of a warp run an access: the comparisons of the branches that guard it (an
//! edge into a block reached only from the branch, dominating the access: `if
//! (threadIdx.x == 0)`, an early `return` for `tid >= n`), each decided lane by lane from
//! the sign of `left - right` once the lane's coordinates and the known values are in.
//! A lane is dropped when a guard is false for it whatever the other names hold; the warp's
//! count is then over the lanes left. It is exact when every lane left certainly runs the
//! access, or one lane is left (the warp runs the access only when that lane does).

use super::lanes::Lane;
use frontend::ir::BinOp;
use symbolic::{sign_of, Expr, SignEnv, SignSet};

/// One guard: the access runs when `difference` (left minus right) compares to 0 by `op`
/// as `taken` says.
#[derive(Clone, Debug)]
pub struct Guard {
    /// `None`: not a comparison the analysis reads, so never decided.
    pub op: Option<BinOp>,
    pub difference: Expr,
    pub taken: bool,
    /// The condition as written.
    pub text: String,
    /// The condition depends on data read per thread: which lanes pass is the data's.
    pub by_data: bool,
}

/// The lanes that may run the access, per warp that runs it.
#[derive(Clone, Debug)]
pub struct Masked {
    pub warps: Vec<Vec<Lane>>,
    /// Some lane of some warp is dropped: the count is over fewer than the full warp.
    pub restricted: bool,
    /// Every warp's lanes left certainly run the access.
    pub exact: bool,
    /// The most lanes left in a warp.
    pub most: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Truth {
    Always,
    Maybe,
    Never,
}

/// The lanes of `warps` the `guards` let through, `env` the signs of the names.
pub fn active(warps: &[Vec<Lane>], guards: &[Guard], env: &SignEnv) -> Masked {
    let mut masked = Masked {
        warps: Vec::new(),
        restricted: false,
        exact: true,
        most: 0,
    };
    for lanes in warps {
        let mut kept = Vec::new();
        let mut uncertain = 0;
        for lane in lanes {
            match lane_truth(lane, guards, env) {
                Truth::Never => masked.restricted = true,
                Truth::Maybe => {
                    uncertain += 1;
                    kept.push(lane.clone());
                }
                Truth::Always => kept.push(lane.clone()),
            }
        }
        if kept.is_empty() {
            continue;
        }
        masked.exact &= uncertain == 0 || kept.len() == 1;
        masked.most = masked.most.max(kept.len());
        masked.warps.push(kept);
    }
    masked
}

fn lane_truth(lane: &Lane, guards: &[Guard], env: &SignEnv) -> Truth {
    let mut all = Truth::Always;
    for g in guards {
        let truth = match g.difference.substitute(&lane.coords) {
            Ok(d) => {
                g.op.map_or(Truth::Maybe, |op| decide(op, sign_of(&d, env), g.taken))
            }
            Err(_) => Truth::Maybe,
        };
        match truth {
            Truth::Never => return Truth::Never,
            Truth::Maybe => all = Truth::Maybe,
            Truth::Always => {}
        }
    }
    all
}

/// Whether `d op 0` equals `taken` for every value of sign `sign`.
fn decide(op: BinOp, sign: SignSet, taken: bool) -> Truth {
    let (neg, zero, pos) = (sign.has_neg(), sign.has_zero(), sign.has_pos());
    // Which signs make the comparison true.
    let (t_neg, t_zero, t_pos) = match op {
        BinOp::Eq => (false, true, false),
        BinOp::Ne => (true, false, true),
        BinOp::Lt => (true, false, false),
        BinOp::Le => (true, true, false),
        BinOp::Gt => (false, false, true),
        BinOp::Ge => (false, true, true),
        _ => return Truth::Maybe,
    };
    let can =
        |want: bool| (neg && t_neg == want) || (zero && t_zero == want) || (pos && t_pos == want);
    match (can(taken), can(!taken)) {
        (true, false) => Truth::Always,
        (false, true) => Truth::Never,
        // Both, or no value at all (an empty sign set): undecided.
        _ => Truth::Maybe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::lanes::warps;
    use crate::check::warp::Coordinates;
    use symbolic::Var;

    fn guard(op: BinOp, difference: &str) -> Guard {
        Guard {
            op: Some(op),
            difference: symbolic::parse_expr(difference).unwrap(),
            taken: true,
            text: difference.into(),
            by_data: false,
        }
    }

    fn masked(block_x: Option<u64>, g: Guard) -> Masked {
        let c = Coordinates {
            thread: [Some(Var::new("threadIdx.x")), None, None],
            block_dim_x: None,
            free: Vec::new(),
        };
        let env = crate::coalescing::warp_env(&SignEnv::new())
            .with(Var::new("threadIdx.x"), SignSet::NON_NEG)
            .with(Var::new("blockIdx.x"), SignSet::NON_NEG);
        active(&warps(block_x, None, &c), &[g], &env)
    }

    #[test]
    fn thread_zero_is_one_lane_of_the_first_warp() {
        let m = masked(None, guard(BinOp::Eq, "threadIdx.x"));
        assert_eq!(
            (m.warps.len(), m.most, m.exact, m.restricted),
            (1, 1, true, true)
        );
    }

    #[test]
    fn a_half_warp_is_sixteen_lanes() {
        let m = masked(Some(64), guard(BinOp::Lt, "threadIdx.x - 16"));
        assert_eq!((m.warps.len(), m.most, m.exact), (1, 16, true));
    }

    #[test]
    fn a_bound_on_the_global_index_is_not_decided() {
        let m = masked(
            Some(64),
            guard(BinOp::Lt, "64*blockIdx.x + threadIdx.x - n"),
        );
        assert_eq!((m.most, m.restricted), (32, false));
    }
}
