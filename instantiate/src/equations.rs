//! Equations from profiled loop counts (thesis §6.1): each profiled loop's trip-count
//! expression, in the program's variables, equals the count the profile observed per
//! entry; the system is solved over the integers (C division truncates, so one count may
//! admit several values: `(2*n + 3) / 4 = 100` gives `n ∈ {199, 200}`).

use super::eval::{self, Values};
use advisor::model::Quantity;
use frontend::loop_ref::LoopRef;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use profile::model::LoopProfile;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use symbolic::{solve, Equation, Expr, Semantics, SignEnv, Var};

/// Which per-entry count stands for a loop whose entries ran different counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CountStatistic {
    Min,
    Mean,
    /// The default: values solved from the largest count give the largest sections, which
    /// is what buffers must hold.
    #[default]
    Max,
}

impl CountStatistic {
    pub fn parse(text: &str) -> Option<CountStatistic> {
        match text {
            "min" => Some(CountStatistic::Min),
            "mean" => Some(CountStatistic::Mean),
            "max" => Some(CountStatistic::Max),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CountStatistic::Min => "min",
            CountStatistic::Mean => "mean",
            CountStatistic::Max => "max",
        }
    }

    fn pick(self, p: &LoopProfile) -> BigRational {
        match self {
            CountStatistic::Min => BigRational::from_integer(p.min_trip.into()),
            CountStatistic::Max => BigRational::from_integer(p.max_trip.into()),
            CountStatistic::Mean => {
                if p.entries == 0 {
                    BigRational::from_integer(0.into())
                } else {
                    BigRational::new(p.iterations.into(), p.entries.into())
                }
            }
        }
    }
}

/// One loop's count as an equation, and whether it was used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountEquation {
    pub loop_id: LoopRef,
    pub trip_count: String,
    /// The count per entry the equation uses (`100`, or `401/4` for a mean).
    pub observed: String,
    pub entries: u64,
    /// `min..max` per entry, when entries differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub varied: Option<String>,
    pub used: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A loop that takes part: its trip count and its profile.
#[derive(Clone, Debug)]
pub struct CountedLoop<'a> {
    pub id: LoopRef,
    pub trip_count: Quantity,
    pub profile: Option<&'a LoopProfile>,
}

/// What the counts say about one variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Determined {
    /// Every solution gives one of these values (several: ambiguous).
    Values(Vec<i64>),
    /// Too many integer solutions to list.
    Range(i64, i64),
}

/// The solved system.
#[derive(Clone, Debug, Default)]
pub struct Solved {
    pub equations: Vec<CountEquation>,
    pub determined: BTreeMap<String, Determined>,
    /// Variables in the used equations that no solution determines.
    pub undetermined: Vec<String>,
    pub conflicts: Vec<String>,
}

/// Builds the equations of `loops` and solves them. `loop_vars` are names that are loop
/// induction variables: a count mentioning one varies per entry and gives no equation.
pub fn solve_counts(
    loops: &[CountedLoop<'_>],
    loop_vars: &BTreeSet<String>,
    statistic: CountStatistic,
) -> Solved {
    solve_counts_given(loops, loop_vars, statistic, &Values::new())
}

/// As [`solve_counts`], with the variables in `known` replaced by their values first (for a
/// second pass: values recorded at entry can determine the remaining variables).
pub fn solve_counts_given(
    loops: &[CountedLoop<'_>],
    loop_vars: &BTreeSet<String>,
    statistic: CountStatistic,
    known: &Values,
) -> Solved {
    let mut solved = Solved::default();
    let mut equations = Vec::new();
    for l in loops {
        let Some(p) = l.profile else { continue };
        let observed = statistic.pick(p);
        let varied = (p.min_trip != p.max_trip).then(|| format!("{}..{}", p.min_trip, p.max_trip));
        let mut eq = CountEquation {
            loop_id: l.id.clone(),
            trip_count: l.trip_count.to_string(),
            observed: observed.to_string(),
            entries: p.entries,
            varied: varied.clone(),
            used: false,
            note: None,
        };
        // The names left once the known ones have values, as the text names them.
        let vars: BTreeSet<String> = eval::variables(&l.trip_count)
            .into_iter()
            .filter(|v| !known.contains_key(v))
            .collect();
        let expr = eval::with_values(&l.trip_count, known);
        eq.note = if p.entries == 0 {
            Some("never entered".into())
        } else if let Err(e) = &expr {
            Some(e.to_string())
        } else if vars.is_empty() {
            Some("constant trip count: determines nothing".into())
        } else if let Some(iv) = vars.iter().find(|v| loop_vars.contains(*v)) {
            Some(format!(
                "the count depends on the enclosing loop's `{iv}`: no single equation"
            ))
        } else if p.max_trip == 0 {
            // The trip-count expression holds when the loop runs; zero iterations only
            // bound the variables.
            Some("the loop never iterated: its count bounds the variables but fixes none".into())
        } else {
            None
        };
        if let (None, Ok(expr)) = (&eq.note, expr) {
            eq.used = true;
            if varied.is_some() {
                eq.note = Some(format!(
                    "entries ran {} iterations; the equation uses the {}",
                    varied.as_deref().unwrap_or_default(),
                    statistic.as_str()
                ));
            }
            equations.push(Equation::new(expr, Expr::rational(observed)));
        }
        solved.equations.push(eq);
    }
    if equations.is_empty() {
        return solved;
    }
    let unknowns: BTreeSet<Var> = equations
        .iter()
        .flat_map(|e| e.lhs.vars().into_iter())
        .collect();
    let unknowns: Vec<Var> = unknowns.into_iter().collect();
    let solution = solve(&equations, &unknowns, Semantics::Integer, &SignEnv::new());
    solved.conflicts = solution.conflicts.clone();
    for v in &unknowns {
        let name = v.name().to_string();
        if let Some(range) = solution.ranges.iter().find(|r| &r.var == v) {
            if let (Some(lo), Some(hi)) = (range.low.to_i64(), range.high.to_i64()) {
                solved.determined.insert(name, Determined::Range(lo, hi));
                continue;
            }
        }
        let complete = solution.alternatives.iter().all(|a| {
            a.values
                .get(v)
                .and_then(Expr::as_constant)
                .is_some_and(|c| c.is_integer())
        });
        let values: Vec<i64> = solution
            .constant_values(v)
            .iter()
            .filter_map(|c| c.to_integer().to_i64())
            .collect();
        if complete && !values.is_empty() && solution.ranges.is_empty() {
            solved.determined.insert(name, Determined::Values(values));
        } else {
            solved.undetermined.push(name);
        }
    }
    if solution.alternatives.is_empty() && solution.ranges.is_empty() {
        solved.conflicts.push(format!(
            "the counts of loops {} admit no integer solution together",
            solved
                .equations
                .iter()
                .filter(|e| e.used)
                .map(|e| e.loop_id.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    solved
}

/// Keeps the candidate values of each variable that are consistent with loops whose count
/// varied (their evaluated count must lie in the observed `[min, max]`), given `known`.
pub fn consistent_with_ranges(
    candidates: &[i64],
    var: &str,
    loops: &[CountedLoop<'_>],
    known: &Values,
) -> Vec<i64> {
    candidates
        .iter()
        .copied()
        .filter(|c| {
            let mut values = known.clone();
            values.insert(var.to_string(), *c);
            loops.iter().all(|l| {
                let Some(p) = l.profile else { return true };
                if p.entries == 0 {
                    return true;
                }
                match eval::eval_int(&l.trip_count, &values) {
                    Ok(count) => {
                        let count = count.max(0) as u64;
                        p.min_trip <= count && count <= p.max_trip
                    }
                    Err(_) => true,
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(min: u64, max: u64, entries: u64) -> LoopProfile {
        LoopProfile {
            entries,
            iterations: (min + max) / 2 * entries,
            min_trip: min,
            max_trip: max,
            ..Default::default()
        }
    }

    fn check(loops: &[(&str, LoopProfile)], expected: &[(&str, Determined)]) {
        let counted: Vec<CountedLoop> = loops
            .iter()
            .enumerate()
            .map(|(k, (t, p))| CountedLoop {
                id: format!("a.c:{}:1", k + 1).parse().unwrap(),
                trip_count: Quantity::read(t),
                profile: Some(p),
            })
            .collect();
        let solved = solve_counts(&counted, &BTreeSet::new(), CountStatistic::Max);
        let expected: BTreeMap<String, Determined> = expected
            .iter()
            .map(|(n, d)| (n.to_string(), d.clone()))
            .collect();
        assert_eq!(solved.determined, expected, "{:?}", solved);
    }

    #[test]
    fn thesis_every_fourth_add_is_ambiguous() {
        check(
            &[("(2*n + 3) / 4", profile(100, 100, 1))],
            &[("n", Determined::Values(vec![199, 200]))],
        );
    }

    #[test]
    fn two_loops_determine_two_variables() {
        check(
            &[("n", profile(30, 30, 1)), ("m - n", profile(12, 12, 30))],
            &[
                ("m", Determined::Values(vec![42])),
                ("n", Determined::Values(vec![30])),
            ],
        );
    }

    #[test]
    fn contradicting_counts_are_a_conflict() {
        let p1 = profile(10, 10, 1);
        let p2 = profile(11, 11, 1);
        let loops = [
            CountedLoop {
                id: "a.c:1:1".parse().unwrap(),
                trip_count: Quantity::read("n"),
                profile: Some(&p1),
            },
            CountedLoop {
                id: "a.c:2:1".parse().unwrap(),
                trip_count: Quantity::read("n"),
                profile: Some(&p2),
            },
        ];
        let solved = solve_counts(&loops, &BTreeSet::new(), CountStatistic::Max);
        assert!(solved.determined.is_empty(), "{solved:?}");
        assert!(!solved.conflicts.is_empty());
    }

    #[test]
    fn counts_over_an_induction_variable_are_not_equations() {
        let p = profile(0, 9, 10);
        let loops = [CountedLoop {
            id: "a.c:3:1".parse().unwrap(),
            trip_count: Quantity::read("i"),
            profile: Some(&p),
        }];
        let ivs: BTreeSet<String> = ["i".to_string()].into();
        let solved = solve_counts(&loops, &ivs, CountStatistic::Max);
        assert!(!solved.equations[0].used);
        assert!(solved.determined.is_empty());
    }
}
