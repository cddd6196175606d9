//! Static loop-carried dependence tests on reconstructed byte addresses.
//!
//! For a loop `L` with induction variable `i`, two accesses through the same base conflict
//! across iterations if some iteration `i` of the first and a later iteration `i + d`
//! (`d >= 1`) of the second touch a common byte. With `f` and `g` their byte offsets, the
//! second's loop variables renamed (`j'`) and `i` replaced by `i + d`, the difference
//! `f - g` must lie in `(-size_f, size_g)` for an overlap (`[f, f + size_f)` and
//! `[g, g + size_g)` meet iff `f < g + size_g` and `g < f + size_f`). The tests, in order:
//!
//! - a symbolic range test (Banerjee-style bounds, as Blume and Eigenmann's range test with
//!   the engine's monotonicity): if the minimum of `f - g` over the iteration space is at
//!   least `size_g`, or its maximum at most `-size_f`, there is no dependence;
//! - a GCD test on the linear difference: if no value `c0 + gcd*m` falls in the window;
//! - an exact test when the difference depends on `d` alone (`4 - 4*d`): it yields the
//!   dependence distance (prefix sum: distance 1).
//!
//! Whatever none of them decides is "unknown": indirect indices (`a[idx[i]]`), aliasing.

use crate::access::MemAccess;
use crate::assumption::{Assumption, Relation};
use crate::budget::Budget;
use crate::coefficient::symbolic_coefficient;
use crate::space::{extreme_in, IvRange, Space};
use frontend::loops::LoopId;
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::collections::{HashMap, HashSet};
use symbolic::{Atom, Expr, Poly, SignEnv, SignSet, Var};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DependenceKind {
    /// Read after write: a later iteration reads what an earlier one wrote.
    Flow,
    /// Write after read.
    Anti,
    /// Write after write.
    Output,
}

impl DependenceKind {
    pub fn as_str(&self) -> &'static str {
        self.pair_kind().as_str()
    }

    /// The kind a report gives a pair that may carry this dependence.
    pub fn pair_kind(&self) -> crate::model::PairKind {
        match self {
            DependenceKind::Flow => crate::model::PairKind::ReadAfterWrite,
            DependenceKind::Anti => crate::model::PairKind::WriteAfterRead,
            DependenceKind::Output => crate::model::PairKind::WriteAfterWrite,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Independent,
    /// Proven, with the distance in iterations when it is a constant.
    Dependent {
        distance: Option<i64>,
    },
    /// `data_dependent`: the addresses depend on values read in the loop (`a[idx[i]]`).
    Unknown {
        why: String,
        data_dependent: bool,
    },
}

/// The result of testing one ordered pair of accesses (`first` in iteration `i`, `second`
/// in iteration `i + d`).
#[derive(Clone, Debug)]
pub struct PairResult {
    pub first: usize,
    pub second: usize,
    pub kind: DependenceKind,
    pub outcome: Outcome,
}

/// A value the loop computes as `dividend / divisor` with C's `/` and a divisor that is not
/// a constant (`ij / n` in a loop linearized by hand), which the reconstruction keeps as a
/// symbol of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quotient {
    pub dividend: Expr,
    pub divisor: Expr,
}

/// The quotient symbols of a function, by symbol.
pub type Quotients = HashMap<Var, Quotient>;

/// Tests every ordered pair with at least one store, through the same base, for a
/// dependence carried by loop `carrier`. `variant` lists symbols (other than induction
/// variables) whose value changes between iterations of the carrier, such as loads of
/// `idx[i]`: a difference that mentions them cannot be decided statically.
///
/// Sign assumptions the tests needed (e.g. `N > 0`) are appended to `assumptions`; each
/// pair tested spends a unit of the function's `budget`.
pub fn carried_dependences(
    accesses: &[MemAccess],
    space: &Space,
    carrier: LoopId,
    variant: &HashSet<Var>,
    quotients: &Quotients,
    assumptions: &mut Vec<Assumption>,
    budget: &Budget,
) -> Vec<PairResult> {
    match CarriedTester::new(accesses, space, carrier, variant, quotients) {
        Some(tester) => tester.test(accesses, assumptions, budget),
        None => Vec::new(),
    }
}

/// The dependence tests of one carrier, prepared once: the renamed space and the variant
/// symbols, cut down to what the addresses mention. Testing many small groups of accesses
/// of one loop (every pair of pointers that may alias) then costs the pairs, not a new
/// space each time.
pub struct CarriedTester {
    renamed: RenamedSpace,
    variant: HashSet<Var>,
    quotients: Quotients,
}

impl std::fmt::Debug for CarriedTester {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CarriedTester")
            .field("carrier", &self.renamed.carrier.var)
            .field("variant", &self.variant.len())
            .finish()
    }
}

impl CarriedTester {
    /// A tester for accesses among `accesses` (those tested later must not mention symbols
    /// these do not); `None` when `carrier` is not in the space.
    pub fn new(
        accesses: &[MemAccess],
        space: &Space,
        carrier: LoopId,
        variant: &HashSet<Var>,
        quotients: &Quotients,
    ) -> Option<CarriedTester> {
        let carrier_range = space.of_loop(carrier)?;
        // Only the variant symbols the addresses mention matter (and those of the
        // quotients they use): a long loop body has thousands of others, and renaming them
        // for every loop made long functions quadratic.
        let mut mentioned: HashSet<Var> = HashSet::new();
        for a in accesses {
            for (_, e) in &a.alternatives {
                mentioned.extend(e.vars());
            }
            // A subscript's variables are its address's, unless terms cancel; a variant
            // symbol left unnamed here would read as the same value in both iterations.
            for (e, _) in &a.extents {
                mentioned.extend(e.vars());
            }
        }
        let quotients: Quotients = quotients
            .iter()
            .filter(|(q, _)| mentioned.contains(*q))
            .map(|(q, quotient)| (q.clone(), quotient.clone()))
            .collect();
        for quotient in quotients.values() {
            mentioned.extend(quotient.dividend.vars());
            mentioned.extend(quotient.divisor.vars());
        }
        let variant: HashSet<Var> = variant
            .iter()
            .filter(|v| mentioned.contains(*v))
            .cloned()
            .collect();
        // The same for the loops: those whose variables the addresses mention, with the
        // loops their bounds mention in turn, and the carrier. A loop calling helpers has
        // their loops in its space (fasttree: 33,666 loop variables, of which 8 appear in
        // an address), and every test walks the space; a loop no address depends on only
        // repeats the accesses, which the tests treat as any iteration (leaving its range
        // out only enlarges the set of iterations).
        let mut keep = mentioned;
        keep.insert(carrier_range.var.clone());
        let mut taken = vec![false; space.ivs.len()];
        loop {
            let mut grew = false;
            for (r, taken) in space.ivs.iter().zip(taken.iter_mut()) {
                if *taken || !keep.contains(&r.var) {
                    continue;
                }
                *taken = true;
                grew = true;
                for e in [&r.init, &r.lo, &r.hi, &r.trips, &r.bound] {
                    keep.extend(e.vars());
                }
            }
            if !grew {
                break;
            }
        }
        // The signs: what the addresses and those loops' bounds mention.
        let space = Space {
            ivs: space
                .ivs
                .iter()
                .zip(&taken)
                .filter(|(_, taken)| **taken)
                .map(|(r, _)| r.clone())
                .collect(),
            env: space.env.restricted_to(&keep),
            assumptions: space.assumptions.clone(),
        };
        let renamed = RenamedSpace::new(&space, carrier_range, &variant);
        Some(CarriedTester {
            renamed,
            variant,
            quotients,
        })
    }

    /// Tests every ordered pair of `accesses` with at least one store, through the same
    /// base, for a dependence carried by the tester's loop.
    ///
    /// Each pair tested spends one unit of `budget`; once it is spent, the remaining pairs
    /// are undecided.
    pub fn test(
        &self,
        accesses: &[MemAccess],
        assumptions: &mut Vec<Assumption>,
        budget: &Budget,
    ) -> Vec<PairResult> {
        let renamed = &self.renamed;
        let variant = &self.variant;
        let quotients = &self.quotients;
        // A loop body repeats the same access (`a[i]` read in ten statements): accesses
        // with the same addresses, size and direction form one class, each pair of classes
        // is tested once, and only the pairs of classes found possibly dependent are
        // expanded to their members. A body of 5,000 `a[i] += b[i + k]` made 10^8 pairs
        // of accesses that all hashed their addresses to find the test already done.
        let mut class_of: Vec<usize> = Vec::with_capacity(accesses.len());
        let mut members: Vec<Vec<usize>> = Vec::new();
        {
            let mut ids: HashMap<ClassKey, usize> = HashMap::new();
            for (k, a) in accesses.iter().enumerate() {
                let key = (
                    a.alternatives.as_slice(),
                    a.elem_bytes,
                    a.is_store,
                    a.extents.as_slice(),
                );
                let id = *ids.entry(key).or_insert_with(|| {
                    members.push(Vec::new());
                    members.len() - 1
                });
                members[id].push(k);
                class_of.push(id);
            }
        }
        // Classes are numbered in the order of their first access, so visiting the pairs
        // of classes in order meets each pair of addresses (and spends the budget, and
        // gathers assumptions) in the order the pairs of accesses would.
        let mut tested: HashMap<PairKey, (Outcome, Vec<Assumption>)> = HashMap::new();
        let mut class_outcome: HashMap<(usize, usize), Outcome> = HashMap::new();
        for (ca, first_members) in members.iter().enumerate() {
            let first = &accesses[first_members[0]];
            for (cb, second_members) in members.iter().enumerate() {
                let second = &accesses[second_members[0]];
                // Only pairs with a store: a load is paired with the stores alone (a sum
                // of 100,000 loads into one store made 10^10 pairs to skip).
                if !first.is_store && !second.is_store {
                    continue;
                }
                let mut outcome = Outcome::Independent;
                'pairs: for (base_f, f) in &first.alternatives {
                    for (base_g, g) in &second.alternatives {
                        let result = match (base_f, base_g) {
                            (Some(x), Some(y)) if x == y => {
                                let sizes = (first.elem_bytes, second.elem_bytes);
                                let extents = (first.extents.as_slice(), second.extents.as_slice());
                                let key = (f, g, sizes.0, sizes.1, extents.0, extents.1);
                                let (result, needed) = tested.entry(key).or_insert_with(|| {
                                    if !budget.spend() {
                                        let why = crate::budget::UNTESTED.to_string();
                                        let outcome = Outcome::Unknown {
                                            why,
                                            data_dependent: false,
                                        };
                                        return (outcome, Vec::new());
                                    }
                                    let mut needed = Vec::new();
                                    let r = test_pair(
                                        f,
                                        g,
                                        (sizes, extents),
                                        renamed,
                                        variant,
                                        quotients,
                                        &mut needed,
                                    );
                                    (r, needed)
                                });
                                add_assumptions(assumptions, needed);
                                result.clone()
                            }
                            (Some(_), Some(_)) => continue, // different bases: the caller decides about aliasing
                            _ => Outcome::Unknown {
                                why: "the address has no single base pointer".into(),
                                data_dependent: false,
                            },
                        };
                        outcome = merge(outcome, result);
                        if matches!(outcome, Outcome::Dependent { .. }) {
                            break 'pairs;
                        }
                    }
                }
                if outcome != Outcome::Independent {
                    class_outcome.insert((ca, cb), outcome);
                }
            }
        }
        // The possibly dependent pairs of accesses, in the order of the accesses.
        let mut partners: Vec<Vec<usize>> = vec![Vec::new(); members.len()];
        for &(ca, cb) in class_outcome.keys() {
            partners[ca].push(cb);
        }
        let mut out = Vec::new();
        for (a, first) in accesses.iter().enumerate() {
            let ca = class_of[a];
            if partners[ca].is_empty() {
                continue;
            }
            let mut seconds: Vec<usize> = partners[ca]
                .iter()
                .flat_map(|cb| members[*cb].iter().copied())
                .collect();
            seconds.sort_unstable();
            for b in seconds {
                let second = &accesses[b];
                let kind = match (first.is_store, second.is_store) {
                    (true, true) => DependenceKind::Output,
                    (true, false) => DependenceKind::Flow,
                    _ => DependenceKind::Anti,
                };
                out.push(PairResult {
                    first: a,
                    second: b,
                    kind,
                    outcome: class_outcome[&(ca, class_of[b])].clone(),
                });
            }
        }
        out
    }
}

/// Appends the assumptions in `needed` that `assumptions` does not hold yet.
fn add_assumptions(assumptions: &mut Vec<Assumption>, needed: &[Assumption]) {
    for n in needed {
        if !assumptions.contains(n) {
            assumptions.push(n.clone());
        }
    }
}

/// What makes two accesses one class for the tests: their addresses, size, direction and
/// subscript extents.
type ClassKey<'a> = (&'a [(Option<Var>, Expr)], u64, bool, &'a [(Expr, u64)]);

/// Subscripts with their declared extents (see [`MemAccess::extents`]).
type Extents<'e> = &'e crate::access::Extents;

/// Two byte offsets, their access sizes and subscript extents: what [`test_pair`] decides
/// on.
type PairKey<'e> = (&'e Expr, &'e Expr, u64, u64, Extents<'e>, Extents<'e>);

impl RenamedSpace {
    /// The two iterations as the subscript tests take them.
    fn pair(&self) -> crate::subscripts::PairSpace<'_> {
        crate::subscripts::PairSpace {
            original: &self.original,
            renamed: &self.space,
            second: &self.second,
            carrier: &self.carrier,
            bounds: &self.bounds,
        }
    }
}

fn merge(current: Outcome, next: Outcome) -> Outcome {
    match (current, next) {
        (d @ Outcome::Dependent { .. }, _) | (_, d @ Outcome::Dependent { .. }) => d,
        (u @ Outcome::Unknown { .. }, _) | (_, u @ Outcome::Unknown { .. }) => u,
        _ => Outcome::Independent,
    }
}

/// The iteration space with the second access's loop variables renamed: the carrier's
/// variable `i` becomes `i + d` (`d >= 1`), inner ones `j` become `j'`.
struct RenamedSpace {
    /// The space and carrier it was renamed from (for the delinearized test).
    original: Space,
    carrier: IvRange,
    space: Space,
    /// Substitution applied to the second access's offset.
    second: HashMap<Var, Expr>,
    /// Inner induction variables and their renamed copies (`j`, `j'`).
    inner_pairs: Vec<(Var, Var)>,
    distance: Var,
    /// The later iteration's names of the variant symbols (`idx[i]'`), made once per
    /// loop: a long function has thousands of them, and every pair is checked against them.
    primed_variant: HashSet<Var>,
    /// The loop bounds for the subscript test, made on first use.
    bounds: std::cell::OnceCell<crate::subscripts::LoopBounds>,
    /// Extremes over `space`, and over the loops inside the carrier (the consecutive-blocks
    /// test's), remembered: the pairs of a carrier ask the same ones again and again.
    extremes: Extremes,
    inner_extremes: Extremes,
}

/// Extremes over one space, remembered by expression, direction and the sign environment
/// they were asked in: the result and the environment after it are functions of those, so
/// a repeated question gets the very answer, environment and assumptions the computation
/// would give. Half of phono3py `fc3.c`'s extremes repeated one already made.
#[derive(Debug, Default)]
struct Extremes {
    known: std::cell::RefCell<HashMap<Expr, Vec<KnownExtreme>>>,
}

#[derive(Debug)]
struct KnownExtreme {
    want_max: bool,
    before: SignEnv,
    after: SignEnv,
    result: Option<Expr>,
    needed: Vec<Assumption>,
}

/// Environments remembered per expression: a few, so that memory stays proportional to
/// the questions.
const ENVIRONMENTS_PER_EXTREME: usize = 4;

impl Extremes {
    /// [`extreme_in`] of `e` over `space`, which must be the space these extremes are of.
    fn of(
        &self,
        e: &Expr,
        space: &Space,
        want_max: bool,
        env: &mut SignEnv,
        assumptions: &mut Vec<Assumption>,
    ) -> Option<Expr> {
        if let Some(known) = self.known.borrow().get(e).and_then(|list| {
            list.iter()
                .find(|k| k.want_max == want_max && k.before == *env)
        }) {
            *env = known.after.clone();
            add_assumptions(assumptions, &known.needed);
            return known.result.clone();
        }
        let before = env.clone();
        let mut needed = Vec::new();
        let result = extreme_in(e, space, want_max, env, &mut needed);
        add_assumptions(assumptions, &needed);
        let mut known = self.known.borrow_mut();
        let list = known.entry(e.clone()).or_default();
        if list.len() < 2 * ENVIRONMENTS_PER_EXTREME {
            list.push(KnownExtreme {
                want_max,
                before,
                after: env.clone(),
                result: result.clone(),
                needed,
            });
        }
        result
    }
}

impl RenamedSpace {
    fn new(space: &Space, carrier: &IvRange, variant: &HashSet<Var>) -> RenamedSpace {
        let d = Var::new("d#dep");
        let mut second: HashMap<Var, Expr> = HashMap::new();
        // Values loaded in the loop differ between the two iterations: `idx[i]` becomes
        // `idx[i]'`, and a difference that keeps either cannot be bounded.
        let mut primed_variant = HashSet::new();
        for v in variant {
            let primed = Var::new(&format!("{}'", v.name()));
            second.insert(v.clone(), Expr::var(primed.name()));
            primed_variant.insert(primed);
        }
        // The next iteration is `i + step`, so iteration `k + d` has `i + step*d`.
        let step_d = Expr::var(d.name())
            .checked_mul(&Expr::integer(BigInt::from(carrier.step)))
            .unwrap_or_else(|_| Expr::var(d.name()));
        let carrier_plus_d = Expr::var(carrier.var.name())
            .checked_add(&step_d)
            .unwrap_or_else(|_| Expr::var(carrier.var.name()));
        second.insert(carrier.var.clone(), carrier_plus_d);
        let carrier_depth = space
            .ivs
            .iter()
            .position(|r| r.loop_id == carrier.loop_id)
            .unwrap_or(0);
        let mut ivs: Vec<IvRange> = space.ivs.clone();
        let mut env = space.env.clone();
        // Loops nested inside the carrier run independently in the second iteration.
        let mut inner_pairs = Vec::new();
        for r in space.ivs.iter().skip(carrier_depth + 1) {
            let primed = Var::new(&format!("{}'", r.var.name()));
            second.insert(r.var.clone(), Expr::var(primed.name()));
            inner_pairs.push((r.var.clone(), primed));
        }
        for r in space.ivs.iter().skip(carrier_depth + 1) {
            let primed = Var::new(&format!("{}'", r.var.name()));
            let lo = r.lo.substitute(&second).unwrap_or_else(|_| r.lo.clone());
            let hi = r.hi.substitute(&second).unwrap_or_else(|_| r.hi.clone());
            env.set(primed.clone(), env.get(&r.var));
            ivs.push(IvRange {
                var: primed,
                lo,
                hi,
                ..r.clone()
            });
        }
        // d ranges over [1, trips - 1]; it is the outermost variable of the renamed space.
        let trips_minus_one = carrier
            .trips
            .checked_sub(&Expr::constant(1))
            .unwrap_or_else(|_| carrier.trips.clone());
        env.set(d.clone(), SignSet::POS);
        let d_range = IvRange {
            var: d.clone(),
            lo: Expr::constant(1),
            hi: trips_minus_one,
            ..carrier.clone()
        };
        ivs.insert(0, d_range);
        RenamedSpace {
            original: space.clone(),
            carrier: carrier.clone(),
            space: Space {
                ivs,
                env,
                assumptions: space.assumptions.clone(),
            },
            second,
            inner_pairs,
            distance: d,
            primed_variant,
            bounds: std::cell::OnceCell::new(),
            extremes: Extremes::default(),
            inner_extremes: Extremes::default(),
        }
    }
}

fn test_pair(
    f: &Expr,
    g: &Expr,
    ((size_f, size_g), extents): ((u64, u64), (Extents, Extents)),
    renamed: &RenamedSpace,
    variant: &HashSet<Var>,
    quotients: &Quotients,
    assumptions: &mut Vec<Assumption>,
) -> Outcome {
    let too_large = || Outcome::Unknown {
        why: "the address is too large to compare".into(),
        data_dependent: false,
    };
    let Ok(g2) = g.substitute(&renamed.second) else {
        return too_large();
    };
    let Ok(diff) = f.checked_sub(&g2) else {
        return too_large();
    };
    if let Some(v) = diff
        .vars()
        .iter()
        .find(|v| variant.contains(*v) || renamed.primed_variant.contains(*v))
    {
        if let Some(outcome) = delinearized(
            f,
            g,
            (size_f, size_g),
            renamed,
            variant,
            quotients,
            assumptions,
        ) {
            return outcome;
        }
        // Values read in the loop, but held by the declared extents (`h[i][bin[j]]` over
        // `i`, with `double h[N][64]`): the rows still never meet.
        let sizes = (&BigInt::from(size_f), &BigInt::from(size_g));
        if within_extents(f, g, sizes, extents, renamed, assumptions) {
            return Outcome::Independent;
        }
        let name = v.name().trim_end_matches('\'');
        return Outcome::Unknown {
            why: format!(
                "the index depends on `{name}`, which changes from iteration to iteration"
            ),
            data_dependent: true,
        };
    }
    let size_f = BigInt::from(size_f);
    let size_g = BigInt::from(size_g);
    let pair = ((f, g), (&size_f, &size_g), extents);
    // Exact test: the difference depends on the distance alone.
    if let Some(outcome) = in_distance_alone(&diff, pair, renamed, assumptions) {
        return outcome;
    }
    let window = size_f.clone().max(size_g.clone());
    let mut env = renamed.space.env.clone();
    let diff = drop_dominant_pairs(diff, renamed, &window, &mut env, assumptions);
    // After delinearization the difference may depend on the distance alone (`C[i][j]` in
    // gemm's `k` loop: 0 once `j = j'`): the exact test decides it.
    if let Some(outcome) = in_distance_alone(&diff, pair, renamed, assumptions) {
        return outcome;
    }
    if distance_dominates(&diff, renamed, &window, &mut env, assumptions)
        || symbol_dominates(&diff, renamed, &window, &mut env, assumptions)
    {
        return Outcome::Independent;
    }
    let min = renamed
        .extremes
        .of(&diff, &renamed.space, false, &mut env, assumptions);
    let max = renamed
        .extremes
        .of(&diff, &renamed.space, true, &mut env, assumptions);
    let ge = |e: &Option<Expr>, k: &BigInt| {
        e.as_ref()
            .is_some_and(|e| symbolic::compare(e, &Expr::integer(k.clone()), &env).is_ge())
    };
    let le = |e: &Option<Expr>, k: &BigInt| {
        e.as_ref()
            .is_some_and(|e| symbolic::compare(e, &Expr::integer(k.clone()), &env).is_le())
    };
    if ge(&min, &size_g) || le(&max, &-size_f.clone()) {
        return Outcome::Independent;
    }
    if gcd_excludes(&diff, &size_f, &size_g) {
        return Outcome::Independent;
    }
    if ordered_blocks(f, g, (&size_f, &size_g), renamed, assumptions) {
        return Outcome::Independent;
    }
    let pair = renamed.pair();
    if crate::subscripts::elements_never_meet(f, g, (&size_f, &size_g), &pair)
        || crate::subscripts::rows_never_meet(f, g, (&size_f, &size_g), &pair, assumptions)
        || within_extents(f, g, (&size_f, &size_g), extents, renamed, assumptions)
    {
        return Outcome::Independent;
    }
    let sizes = (size_f.to_u64(), size_g.to_u64());
    if let (Some(size_f), Some(size_g)) = sizes {
        let test = |f: &Expr, g: &Expr, assumptions: &mut Vec<Assumption>| {
            let pair = ((size_f, size_g), extents);
            test_pair(f, g, pair, renamed, variant, quotients, assumptions)
        };
        let cases = (renamed, variant, &renamed.space.env);
        if every_remainder_case_independent(f, g, cases, test, assumptions) {
            return Outcome::Independent;
        }
    }
    Outcome::Unknown {
        why: unbounded_difference(&diff, renamed),
        data_dependent: false,
    }
}

/// The most values a remainder is split into (`x % k` for `k` up to 4 takes at most 7).
const MAX_REMAINDER_CASES: usize = 7;

/// Accesses whose offsets read a remainder by a small constant that the two iterations
/// share (its operand names no variable the test renames: `p = t % 2` chosen around the
/// loop, `v + p*n` against `v + (1 - p)*n`, two halves of one block): the remainder is
/// one of a few values, the same in both accesses, so the pair is independent when `test`
/// finds it independent for each value. Each case removes its atom, so the split ends.
fn every_remainder_case_independent(
    f: &Expr,
    g: &Expr,
    (renamed, variant, env): (&RenamedSpace, &HashSet<Var>, &SignEnv),
    test: impl Fn(&Expr, &Expr, &mut Vec<Assumption>) -> Outcome,
    assumptions: &mut Vec<Assumption>,
) -> bool {
    // A value that differs between the two iterations (renamed, or read in the loop) is
    // not one remainder for both.
    let renames = |v: &Var| {
        renamed.second.contains_key(v)
            || *v == renamed.distance
            || variant.contains(v)
            || renamed.primed_variant.contains(v)
    };
    let atom = [f, g].into_iter().find_map(|e| {
        e.as_poly()?.terms().iter().find_map(|(m, _)| {
            m.factors().iter().find_map(|(a, _)| {
                let (operand, k) = match a {
                    Atom::TruncRem(p, k) | Atom::FloorMod(p, k) => (p, k),
                    _ => return None,
                };
                let shared = !Expr::Poly((**operand).clone()).vars().iter().any(renames);
                let small = k
                    .to_usize()
                    .is_some_and(|k| 2 * k - 1 <= MAX_REMAINDER_CASES);
                (shared && small).then(|| a.clone())
            })
        })
    });
    let Some(atom) = atom else {
        return false;
    };
    let Some((operand, k)) = atom.div_parts() else {
        return false;
    };
    let k = k.to_i64().unwrap_or(0);
    // C's `%` has the operand's sign; a floor modulo is never negative.
    let nonneg = matches!(atom, Atom::FloorMod(..))
        || symbolic::sign_of(&Expr::Poly(operand.clone()), env).is_subset(SignSet::NON_NEG);
    let low = if nonneg { 0 } else { 1 - k };
    let mut needed = Vec::new();
    for value in low..k {
        let replaced = |e: &Expr| match e {
            Expr::Poly(p) => p
                .replace_atoms(&|a: &Atom| {
                    (*a == atom).then(|| Poly::constant(BigRational::from_integer(value.into())))
                })
                .ok()
                .map(Expr::Poly),
            _ => None,
        };
        let (Some(f), Some(g)) = (replaced(f), replaced(g)) else {
            return false;
        };
        if !matches!(test(&f, &g, &mut needed), Outcome::Independent) {
            return false;
        }
    }
    add_assumptions(assumptions, &needed);
    true
}

/// Two offsets, their access sizes and subscript extents, as the tests after the first
/// take them.
type Pair<'p> = (
    (&'p Expr, &'p Expr),
    (&'p BigInt, &'p BigInt),
    (Extents<'p>, Extents<'p>),
);

/// The exact test where the difference depends on the distance alone, and a dependence it
/// finds on flat memory dropped when it needs a subscript past its declared extent:
/// `v[j + 1][i]` against `v[j][i]` over `i` with `double v[N][100]` meet 100 iterations
/// apart only through `v[j][i + 100]`, which is not an element of row `j`.
fn in_distance_alone(
    diff: &Expr,
    ((f, g), sizes, extents): Pair<'_>,
    renamed: &RenamedSpace,
    assumptions: &mut Vec<Assumption>,
) -> Option<Outcome> {
    if !diff.vars().iter().all(|v| *v == renamed.distance) {
        return None;
    }
    let outcome = exact_in_distance(diff, &renamed.distance, sizes.0, sizes.1)?;
    if matches!(outcome, Outcome::Dependent { .. })
        && within_extents(f, g, sizes, extents, renamed, assumptions)
    {
        return Some(Outcome::Independent);
    }
    Some(outcome)
}

/// Whether C's in-bounds rule keeps the two accesses apart (see
/// [`crate::subscripts::within_extents_never_meet`]); the loop then assumes it.
fn within_extents(
    f: &Expr,
    g: &Expr,
    sizes: (&BigInt, &BigInt),
    extents: (Extents, Extents),
    renamed: &RenamedSpace,
    assumptions: &mut Vec<Assumption>,
) -> bool {
    let pair = renamed.pair();
    if !crate::subscripts::within_extents_never_meet(f, g, sizes, extents, &pair) {
        return false;
    }
    add_assumptions(assumptions, &[crate::subscripts::WITHIN_EXTENTS.into()]);
    true
}

/// "cannot bound the address difference ..." in the user's terms: the distance between
/// the two iterations is `d` (not the test's internal variable), and the message says
/// what `d` and a primed name are.
fn unbounded_difference(diff: &Expr, renamed: &RenamedSpace) -> String {
    let names: HashSet<String> = diff.vars().iter().map(|v| v.name().to_string()).collect();
    let shown = ["d", "dist", "d_iter"]
        .into_iter()
        .find(|n| !names.contains(*n))
        .unwrap_or("d_iter");
    let distance_named = diff.contains_var(&renamed.distance);
    let text = diff
        .substitute(&HashMap::from([(
            renamed.distance.clone(),
            Expr::var(shown),
        )]))
        .unwrap_or_else(|_| diff.clone())
        .to_c();
    let carrier = renamed.carrier.var.name();
    let primes = names.iter().any(|n| n.ends_with('\''));
    let mut legend = Vec::new();
    if distance_named {
        legend.push(format!(
            "the second access is made `{shown}` >= 1 iterations of `{carrier}` after the first"
        ));
    }
    if primes {
        legend.push("a primed name is its value in the later iteration".to_string());
    }
    if legend.is_empty() {
        format!("cannot bound the address difference {text} (bytes)")
    } else {
        format!(
            "cannot bound the address difference {text} (bytes; {})",
            legend.join("; ")
        )
    }
}

/// The test for a loop linearized by hand (`for (ij = 0; ij < n * m; ij++)` with
/// `i = ij / m`, `j = ij % m`): the quotient changes from iteration to iteration, so the
/// plain test cannot compare `f` and `g`. With `ij >= 0` and `m > 0`, `ij = m*q + r` with
/// `0 <= r < m` (C's `/` truncates, which is flooring here), and iterations in order are
/// pairs `(q, r)` in lexicographic order: the loop is the nest `for q { for r }`. It is
/// independent when neither level of that nest carries a dependence; anything else leaves
/// the pair to the plain test's verdict (`None`).
fn delinearized(
    f: &Expr,
    g: &Expr,
    sizes: (u64, u64),
    renamed: &RenamedSpace,
    variant: &HashSet<Var>,
    quotients: &Quotients,
    assumptions: &mut Vec<Assumption>,
) -> Option<Outcome> {
    let carrier = &renamed.carrier;
    let original = &renamed.original;
    if carrier.step <= 0 {
        return None;
    }
    let changing: HashSet<Var> = f
        .vars()
        .into_iter()
        .chain(g.vars())
        .filter(|v| variant.contains(v))
        .collect();
    let [q] = changing.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let quotient = quotients.get(q)?;
    if quotient.dividend != Expr::var(carrier.var.name()) {
        return None;
    }
    let m = &quotient.divisor;
    if m.vars()
        .iter()
        .any(|v| variant.contains(v) || original.iv(v).is_some())
    {
        return None;
    }
    let mut env = original.env.clone();
    if !symbolic::compare(&carrier.lo, &Expr::constant(0), &env).is_ge() {
        return None;
    }
    let mut needed = Vec::new();
    if !symbolic::compare(m, &Expr::constant(1), &env).is_ge() {
        // A divisor of unknown sign that is one symbol: assume it positive, and say so.
        let vars: Vec<Var> = m.vars().into_iter().collect();
        let [v] = vars.as_slice() else { return None };
        if *m != Expr::var(v.name()) {
            return None;
        }
        env.set(v.clone(), SignSet::POS);
        needed.push(Assumption::relation(
            format!("{v} > 0"),
            Expr::var(v.name()),
            Relation::Gt,
        ));
    }
    let r = Var::new("r#lin");
    env.set(q.clone(), SignSet::NON_NEG);
    env.set(r.clone(), SignSet::NON_NEG);
    let one = Expr::constant(1);
    let ij = m
        .checked_mul(&Expr::var(q.name()))
        .ok()?
        .checked_add(&Expr::var(r.name()))
        .ok()?;
    let by_parts: HashMap<Var, Expr> = [(carrier.var.clone(), ij)].into_iter().collect();
    let (f, g) = (f.substitute(&by_parts).ok()?, g.substitute(&by_parts).ok()?);
    // `q` ranges over at most `[0, hi]` (`m >= 1`): a larger space than the loop's, which
    // is sound for showing independence.
    let past_hi = carrier.hi.checked_add(&one).ok()?;
    let q_range = IvRange {
        loop_id: carrier.loop_id,
        var: q.clone(),
        init: Expr::constant(0),
        lo: Expr::constant(0),
        hi: carrier.hi.clone(),
        trips: past_hi.clone(),
        step: 1,
        bound: past_hi,
    };
    let r_range = IvRange {
        // Not a loop of the forest: an id no loop has.
        loop_id: LoopId(u32::MAX),
        var: r,
        init: Expr::constant(0),
        lo: Expr::constant(0),
        hi: m.checked_sub(&one).ok()?,
        trips: m.clone(),
        step: 1,
        bound: m.clone(),
    };
    let at = original
        .ivs
        .iter()
        .position(|iv| iv.loop_id == carrier.loop_id)?;
    let mut ivs = original.ivs.clone();
    ivs.splice(at..=at, [q_range.clone(), r_range.clone()]);
    let space = Space {
        ivs,
        env,
        assumptions: original.assumptions.clone(),
    };
    let rest: HashSet<Var> = variant.iter().filter(|v| *v != q).cloned().collect();
    for level in [&q_range, &r_range] {
        let nest = RenamedSpace::new(&space, level, &rest);
        let none: Extents = &[];
        let outcome = test_pair(
            &f,
            &g,
            (sizes, (none, none)),
            &nest,
            &rest,
            &Quotients::new(),
            &mut needed,
        );
        if outcome != Outcome::Independent {
            return None;
        }
    }
    add_assumptions(assumptions, &needed);
    Some(Outcome::Independent)
}

/// The consecutive-blocks test: each iteration of the carrier touches bytes within
/// `[low(i), top(i))`, the bounds taken over the loops inside it. When every iteration's
/// block ends where the next one's begins or before (`top(i) <= low(i + step)`) and the
/// blocks' starts never go back (`low(i) <= low(i + step)`), then for any `d >= 1`,
/// `top(i) <= low(i + 1) <= ... <= low(i + d)`: iterations never share a byte. (And the
/// same with the blocks going down.) This is what a packed triangular matrix needs: row `i`
/// of `distances[i*(2n - i - 1)/2 + j - i - 1]` fills `[T(i), T(i + 1))`, a block whose
/// length changes with `i`, which no single distance or range bound captures.
fn ordered_blocks(
    f: &Expr,
    g: &Expr,
    (size_f, size_g): (&BigInt, &BigInt),
    renamed: &RenamedSpace,
    assumptions: &mut Vec<Assumption>,
) -> bool {
    let original = &renamed.original;
    let carrier = &renamed.carrier;
    if carrier.step <= 0 {
        return false;
    }
    let Some(depth) = original
        .ivs
        .iter()
        .position(|r| r.loop_id == carrier.loop_id)
    else {
        return false;
    };
    let mut env = original.env.clone();
    let mut needed = Vec::new();
    let inner = Space {
        ivs: original.ivs[depth + 1..].to_vec(),
        env: env.clone(),
        assumptions: Vec::new(),
    };
    let block = |e: &Expr, size: &BigInt, env: &mut SignEnv, needed: &mut Vec<Assumption>| {
        let low = renamed.inner_extremes.of(e, &inner, false, env, needed)?;
        let high = renamed.inner_extremes.of(e, &inner, true, env, needed)?;
        let top = high.checked_add(&Expr::integer(size.clone())).ok()?;
        Some((low, top))
    };
    let Some((low_f, top_f)) = block(f, size_f, &mut env, &mut needed) else {
        return false;
    };
    let Some((low_g, top_g)) = block(g, size_g, &mut env, &mut needed) else {
        return false;
    };
    let (Ok(low), Ok(top)) = (
        symbolic::get_min(&low_f, &low_g, &env),
        symbolic::get_max(&top_f, &top_g, &env),
    ) else {
        return false;
    };
    // Iterations `i` that have a successor: `[lo, hi - step]` of the carrier.
    let mut outer = Space {
        ivs: original.ivs[..=depth].to_vec(),
        env: env.clone(),
        assumptions: Vec::new(),
    };
    let step = Expr::integer(BigInt::from(carrier.step));
    let Ok(last_with_next) = carrier.hi.checked_sub(&step) else {
        return false;
    };
    outer.ivs[depth].hi = last_with_next;
    let Ok(next_i) = Expr::var(carrier.var.name()).checked_add(&step) else {
        return false;
    };
    let next = HashMap::from([(carrier.var.clone(), next_i)]);
    let (Ok(low_next), Ok(top_next)) = (low.substitute(&next), top.substitute(&next)) else {
        return false;
    };
    let never_negative =
        |e: Result<Expr, symbolic::SymError>, env: &mut SignEnv, needed: &mut Vec<Assumption>| {
            e.ok()
                .and_then(|e| extreme_in(&e, &outer, false, env, needed))
                .is_some_and(|min| at_least(&min, &BigInt::zero(), env, needed))
        };
    let ascending = never_negative(low_next.checked_sub(&top), &mut env, &mut needed)
        && never_negative(low_next.checked_sub(&low), &mut env, &mut needed);
    let ordered = ascending || {
        never_negative(low.checked_sub(&top_next), &mut env, &mut needed)
            && never_negative(top.checked_sub(&top_next), &mut env, &mut needed)
    };
    if ordered {
        add_assumptions(assumptions, &needed);
    }
    ordered
}

/// The largest magnitude `e` reaches over the renamed iteration space.
fn reach(
    e: &Expr,
    renamed: &RenamedSpace,
    env: &mut SignEnv,
    assumptions: &mut Vec<Assumption>,
) -> Option<Expr> {
    let hi = renamed
        .extremes
        .of(e, &renamed.space, true, env, assumptions)?;
    let lo = renamed
        .extremes
        .of(e, &renamed.space, false, env, assumptions)?;
    symbolic::get_max(&hi, &lo.neg(), env).ok()
}

/// `|c|` for a coefficient of known sign.
fn magnitude(c: &Expr, env: &SignEnv) -> Option<Expr> {
    match symbolic::sign_of(c, env) {
        s if s.is_subset(SignSet::POS) => Some(c.clone()),
        s if s.is_subset(SignSet::NEG) => Some(c.neg()),
        _ => None,
    }
}

/// `|c|` for a coefficient whose sign the environment knows, or that is a positive
/// multiple of the carrier's trip count (`num_band1*num_band2` in a loop over
/// `b12 < num_band1*num_band2`): a product of symbols of unknown signs, positive since the
/// carrier runs whenever it carries a dependence.
fn magnitude_in(c: &Expr, renamed: &RenamedSpace, env: &SignEnv) -> Option<Expr> {
    magnitude(c, env).or_else(|| positive_multiple(c, &renamed.carrier.trips).then(|| c.clone()))
}

/// Whether `c == k*t` for a positive rational `k`.
fn positive_multiple(c: &Expr, t: &Expr) -> bool {
    let (Some(cp), Some(tp)) = (c.as_poly(), t.as_poly()) else {
        return false;
    };
    let (Some((monomial, ct)), false) = (cp.terms().first(), tp.is_constant()) else {
        return false;
    };
    let Some((_, tt)) = tp.terms().iter().find(|(m, _)| m == monomial) else {
        return false;
    };
    let k = ct / tt;
    k.is_positive()
        && t.checked_mul(&Expr::rational(k))
            .and_then(|kt| c.checked_sub(&kt))
            .is_ok_and(|rest| rest.as_constant().is_some_and(|r| r.is_zero()))
}

/// Whether `margin >= window`. When that depends only on the signs of symbols with no
/// known sign, they are assumed non-negative (reported), as the thesis' coalescing analysis
/// increases precision by assumptions.
fn at_least(
    margin: &Expr,
    window: &BigInt,
    env: &mut SignEnv,
    assumptions: &mut Vec<Assumption>,
) -> bool {
    let target = Expr::integer(window.clone());
    if symbolic::compare(margin, &target, env).is_ge() {
        return true;
    }
    let unknown: Vec<Var> = margin
        .vars()
        .into_iter()
        .filter(|v| env.get(v).is_top())
        .collect();
    if unknown.is_empty() {
        return false;
    }
    let mut trial = env.clone();
    for v in &unknown {
        trial.set(v.clone(), SignSet::NON_NEG);
    }
    if symbolic::compare(margin, &target, &trial).is_ge() {
        for v in unknown {
            assumptions.push(Assumption::relation(
                format!("{v} >= 0"),
                Expr::var(v.name()),
                Relation::Ge,
            ));
            env.set(v, SignSet::NON_NEG);
        }
        return true;
    }
    false
}

/// `diff = c*d + rest` with `d >= 1`: if `|c|` exceeds everything `rest` can reach by the
/// access size, iterations `d` apart never meet (`A[x][y]` over rows `x`: a row is `4*N`
/// bytes and the column part reaches at most `4*(N-1)`).
fn distance_dominates(
    diff: &Expr,
    renamed: &RenamedSpace,
    window: &BigInt,
    env: &mut SignEnv,
    assumptions: &mut Vec<Assumption>,
) -> bool {
    let Some(poly) = diff.as_poly() else {
        return false;
    };
    let Some((c, rest)) = symbolic_coefficient(poly, &renamed.distance) else {
        return false;
    };
    if c.is_zero() {
        return false;
    }
    let c = Expr::Poly(c);
    let Some(c_magnitude) = magnitude_in(&c, renamed, env).or_else(|| {
        // The coefficient's sign is unknown only through a symbol: assume it positive,
        // as the monotonicity analysis does, and say so.
        let vars: Vec<Var> = c.vars().into_iter().collect();
        let [v] = vars.as_slice() else { return None };
        env.set(v.clone(), SignSet::POS);
        assumptions.push(Assumption::relation(
            format!("{v} > 0"),
            Expr::var(v.name()),
            Relation::Gt,
        ));
        magnitude(&c, env)
    }) else {
        return false;
    };
    let Some(r) = reach(&Expr::Poly(rest), renamed, env, assumptions) else {
        return false;
    };
    match c_magnitude.checked_sub(&r) {
        Ok(margin) => at_least(&margin, window, env, assumptions),
        Err(_) => false,
    }
}

/// `diff = S*c + rest` for a positive symbol `S` (a row length `N`): if `c` never reaches 0
/// over the space, `|S*c| >= S*min|c|`; when that exceeds what `rest` reaches, the accesses
/// are in different rows (Fan2's `A[t*N + y]` read and `A[x*N + y]` written with `x > t`).
fn symbol_dominates(
    diff: &Expr,
    renamed: &RenamedSpace,
    window: &BigInt,
    env: &mut SignEnv,
    assumptions: &mut Vec<Assumption>,
) -> bool {
    let Some(poly) = diff.as_poly() else {
        return false;
    };
    let induction: HashSet<&Var> = renamed.space.ivs.iter().map(|r| &r.var).collect();
    for s in diff.vars() {
        if induction.contains(&s) || !env.get(&s).is_subset(SignSet::POS) {
            continue;
        }
        let Some((c, rest)) = symbolic_coefficient(poly, &s) else {
            continue;
        };
        let c = Expr::Poly(c);
        if c.contains_var(&s) {
            continue;
        }
        let (Some(c_hi), Some(c_lo)) = (
            renamed
                .extremes
                .of(&c, &renamed.space, true, env, assumptions),
            renamed
                .extremes
                .of(&c, &renamed.space, false, env, assumptions),
        ) else {
            continue;
        };
        let one = Expr::constant(1);
        let smallest = if symbolic::compare(&c_hi, &one.neg(), env).is_le() {
            c_hi.neg()
        } else if symbolic::compare(&c_lo, &one, env).is_ge() {
            c_lo
        } else {
            continue;
        };
        let Ok(floor) = Expr::var(s.name()).checked_mul(&smallest) else {
            continue;
        };
        let Some(r) = reach(&Expr::Poly(rest), renamed, env, assumptions) else {
            continue;
        };
        if floor
            .checked_sub(&r)
            .is_ok_and(|m| at_least(&m, window, env, assumptions))
        {
            return true;
        }
    }
    false
}

/// Delinearization: in `c*(j - j') + rest`, if `|c|` exceeds everything `rest` can reach by
/// at least the access size, the two accesses can only meet when `j = j'`, so the pair is
/// dropped (`B[j][i]` flattened to `640*j + 4*i`: rows never meet unless the row is equal).
fn drop_dominant_pairs(
    diff: Expr,
    renamed: &RenamedSpace,
    window: &BigInt,
    env: &mut SignEnv,
    assumptions: &mut Vec<Assumption>,
) -> Expr {
    let mut current = diff;
    for (v, primed) in &renamed.inner_pairs {
        let Some(poly) = current.as_poly() else { break };
        let Some((c, rest)) = symbolic_coefficient(poly, v) else {
            continue;
        };
        let Some((c2, rest)) = symbolic_coefficient(&rest, primed) else {
            continue;
        };
        if c.is_zero() || c2 != c.neg() {
            continue;
        }
        let Some(c_magnitude) = magnitude_in(&Expr::Poly(c), renamed, env) else {
            continue;
        };
        let rest = Expr::Poly(rest);
        let Some(r) = reach(&rest, renamed, env, assumptions) else {
            continue;
        };
        if c_magnitude
            .checked_sub(&r)
            .is_ok_and(|m| at_least(&m, window, env, assumptions))
        {
            current = rest;
        }
    }
    current
}

/// `diff = c0 + c1*d`: overlap iff `-size_f < diff < size_g` for some integer `d >= 1`.
fn exact_in_distance(diff: &Expr, d: &Var, size_f: &BigInt, size_g: &BigInt) -> Option<Outcome> {
    let poly = diff.as_poly()?;
    if !diff.is_exact_integer() || (poly.contains_var(d) && !poly.is_linear_in(d)) {
        return None;
    }
    let c0 = poly.constant_term();
    let c1 = poly
        .linear_coeff(d)
        .map(|(c, _)| c)
        .unwrap_or_else(BigRational::zero);
    let lo = BigRational::from_integer(-size_f.clone());
    let hi = BigRational::from_integer(size_g.clone());
    if c1.is_zero() {
        let overlaps = c0 > lo && c0 < hi;
        return Some(if overlaps {
            Outcome::Dependent { distance: None }
        } else {
            Outcome::Independent
        });
    }
    // Smallest integer d >= 1 with lo < c0 + c1*d < hi.
    let (a, b) = ((lo - &c0) / &c1, (hi - &c0) / &c1);
    let (low, high) = if c1.is_positive() { (a, b) } else { (b, a) };
    let mut candidate = low.floor() + BigRational::one();
    if candidate < BigRational::one() {
        candidate = BigRational::one();
    }
    if candidate < high {
        let distance = candidate.to_integer().to_i64();
        return Some(Outcome::Dependent { distance });
    }
    Some(Outcome::Independent)
}

/// GCD test: the difference takes only values `c0 + g*m`; none of them in the window.
fn gcd_excludes(diff: &Expr, size_f: &BigInt, size_g: &BigInt) -> bool {
    let Some(poly) = diff.as_poly() else {
        return false;
    };
    if !diff.is_exact_integer() || poly.degree() > 1 {
        return false;
    }
    let mut g = BigInt::zero();
    let mut c0 = BigInt::zero();
    for (monomial, coefficient) in poly.terms() {
        if !coefficient.is_integer() {
            return false;
        }
        let c = coefficient.to_integer();
        if monomial.is_one() {
            c0 = c;
        } else {
            if !matches!(monomial.factors(), [(symbolic::Atom::Var(_), 1)]) {
                return false;
            }
            g = g.gcd(&c);
        }
    }
    if g.is_zero() {
        return false;
    }
    // Values c0 + g*m inside (-size_f, size_g)?
    let lo: BigInt = -size_f.clone() + 1;
    let hi: BigInt = size_g.clone() - 1;
    let first = {
        let r = (lo.clone() - &c0).mod_floor(&g);
        if r.is_zero() {
            lo.clone()
        } else {
            lo.clone() + (&g - r)
        }
    };
    first > hi
}
