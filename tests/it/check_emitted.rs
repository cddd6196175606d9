//! `warpwise check` on the CUDA `warpwise emit` writes agrees with the report the kernel
//! came from: for every friendly loop of every sample, under every mapping the report
//! counts, the requests and sectors per warp of each access of the loop's body are the
//! same through both doors.
//!
//! What the comparison assumes, on purpose:
//! - sizes are [`SIZE`] (a multiple of 32), given to both sides: rows then start on
//!   128-byte boundaries, which the report assumes ("assuming 128-byte aligned rows") and a
//!   kernel with a concrete width does not need to (an odd width makes check count the
//!   worst warp, the report the first);
//! - the report counts a warp of 32 iterations; the emitted kernel runs only the loop's
//!   iterations, so where the x loop has fewer than 32 (a constant trip count), check
//!   counts those lanes: a subset of the warp's addresses, so at most the report's count;
//! - accesses emit does not keep as they are are left out, each with its reason: a
//!   loaded pointer or loop bound emit passes as a kernel parameter, and the target of a
//!   reduction, which the kernel accumulates per thread and combines atomically.

use crate::common::{root, scratch, text, warpwise};
use regex::Regex;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The value every size in a count is given, on both sides.
const SIZE: i64 = 1024;

/// The block the kernels are emitted for: 32 wide, so that a warp is 32 iterations of the
/// x loop as the report counts it.
const BLOCK: &str = "32x8";

/// Disagreements that stand, each with the side that is wrong and why: the test fails
/// when one goes away, so that it leaves this list.
const KNOWN: &[(&str, &str, &str)] = &[];

/// What was compared, for the test's output.
#[derive(Default, Debug)]
struct Tally {
    files: usize,
    loops: usize,
    mappings: usize,
    accesses: usize,
    /// Accesses of loops with fewer than 32 iterations along x: check at most the report.
    partial: usize,
    /// Report accesses emit does not keep (parameters, reduction targets).
    left_out: usize,
}

/// One access: its source line (the report's, or the kernel's mapped back), text as
/// both sides can match it, kind, and its requests and sectors per warp.
#[derive(Debug, Clone)]
struct Access {
    line: i64,
    text: String,
    kind: String,
    requests: i64,
    sectors: i64,
}

/// `text` as emit may rename it: `s->f` and `s.f` become parameters `s_f`, and a compound
/// assignment's load is reported by the report with its whole statement.
fn normal(text: &str) -> String {
    let lhs = Regex::new(r"\s[-+*/%&|^]?=\s").unwrap();
    let text = lhs.split(text).next().unwrap_or(text);
    text.replace("->", "_").replace('.', "_").replace(' ', "")
}

/// The names a count is written in (`n`, `in_image->width`).
fn names(expr: &str) -> Vec<String> {
    let ident = Regex::new(r"[A-Za-z_]\w*(?:(?:->|\.)[A-Za-z_]\w*)*").unwrap();
    ident
        .find_iter(expr)
        .map(|m| m.as_str().to_string())
        .filter(|n| !["min", "max", "floor_div", "floor_mod"].contains(&n.as_str()))
        .collect()
}

/// `expr` with every name in `values`, or `None` where a name has none.
fn settle(expr: &str, values: &BTreeMap<String, i64>) -> Option<i64> {
    let mut ctx = HashMap::new();
    for n in names(expr) {
        let v = values.get(&n)?;
        ctx.extend(symbolic::parse_values(&format!("{n}={v}")).unwrap());
    }
    let term = symbolic::parse_term(expr).unwrap_or_else(|e| panic!("`{expr}`: {e:?}"));
    let v = term
        .eval_c(&ctx)
        .unwrap_or_else(|e| panic!("`{expr}`: {e:?}"));
    v.to_string().parse().ok()
}

/// The loops of the report `warpwise analyze FILE` writes.
fn report(file: &Path) -> Vec<Value> {
    let out = warpwise(&["analyze", "--format", "json", &file.to_string_lossy()]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["loops"].as_array().cloned().unwrap_or_default()
}

/// `x=i,y=j` for `emit --mapping`.
fn mapping_arg(mapping: &Value) -> String {
    match mapping["y"].as_str() {
        Some(y) => format!("x={},y={}", mapping["x"].as_str().unwrap(), y),
        None => format!("x={}", mapping["x"].as_str().unwrap()),
    }
}

/// The kernel `emit` writes for `loop_id` under `mapping`, or why it refused.
fn emitted(file: &Path, loop_id: &str, mapping: &str) -> Result<PathBuf, String> {
    let dir = scratch("check-emitted", &loop_id.replace(['/', ':'], "_"));
    let out = warpwise(&[
        "emit",
        "--target",
        "cuda",
        "-o",
        &dir.to_string_lossy(),
        "--loop",
        loop_id,
        "--mapping",
        mapping,
        "--block",
        BLOCK,
        &file.to_string_lossy(),
    ]);
    if !out.status.success() {
        return Err(text(&out).trim().to_string());
    }
    let cu = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "cu"))
        .expect("emit wrote no .cu");
    Ok(cu)
}

/// The kernel's parameter names.
fn parameters(source: &str) -> Vec<String> {
    let signature = Regex::new(r"__global__ void \w+\(([^)]*)\)").unwrap();
    let list = &signature.captures(source).expect("a kernel")[1];
    list.split(',')
        .filter_map(|p| p.split([' ', '*']).next_back())
        .map(str::to_string)
        .collect()
}

/// The names of the kernel's parameters that are not pointers (nor arrays of rows).
fn scalar_parameters(source: &str) -> Vec<String> {
    let signature = Regex::new(r"__global__ void \w+\(([^)]*)\)").unwrap();
    let list = &signature.captures(source).expect("a kernel")[1];
    list.split(',')
        .filter(|p| !p.contains('*') && !p.contains("ww_rows") && !p.contains('['))
        .filter_map(|p| p.split_whitespace().next_back())
        .map(str::to_string)
        .collect()
}

/// The pitch (elements per row) the host code gives each array of rows the kernel takes
/// as `ww_rows` (`const long long ww_A_pitch = ((long long)(n));`), settled with `values`
/// and [`SIZE`] for any other name: the kernel's `ww_A_pitch` is the report's row length.
fn pitches(source: &str, values: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    let pitch = Regex::new(r"const long long (ww_\w+_pitch) = (.*); // elements per row").unwrap();
    pitch
        .captures_iter(source)
        .map(|c| {
            let expr = c[2].replace("(long long)", "").replace("LL", "");
            let values: BTreeMap<String, i64> = names(&expr)
                .into_iter()
                .map(|n| (n, SIZE))
                .chain(values.clone())
                .collect();
            (c[1].to_string(), settle(&expr, &values).unwrap())
        })
        .collect()
}

/// The report's accesses under `mapping`, settled with `values`.
fn reported(mapping: &Value, values: &BTreeMap<String, i64>) -> Vec<Access> {
    let count = |a: &Value, k: &str| {
        let e = a[k].as_str().unwrap();
        settle(e, values).unwrap_or_else(|| panic!("`{e}` not settled by {values:?}"))
    };
    mapping["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| Access {
            line: a["line"].as_i64().unwrap(),
            text: a["text"].as_str().unwrap().to_string(),
            kind: a["kind"].as_str().unwrap().to_string(),
            requests: count(a, "requests_per_warp"),
            sectors: count(a, "sectors_per_warp"),
        })
        .collect()
}

/// Check's accesses of the kernel in `cu` with `values` set, at their lines in the
/// `.cu`; `Err` when check does not read the kernel.
fn checked(cu: &Path, values: &BTreeMap<String, i64>) -> Result<Vec<Access>, String> {
    let cu = cu.to_string_lossy().to_string();
    let mut args = vec!["check".to_string(), "--format".into(), "json".into()];
    for (n, v) in values {
        args.extend(["--set".into(), format!("{n}={v}")]);
    }
    args.push(cu);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = warpwise(&args);
    let doc: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    let Some(kernel) = doc["kernels"].as_array().and_then(|k| k.first()) else {
        return Err(format!("check read no kernel: {}", doc["refused"]));
    };
    Ok(kernel["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let at: Vec<&str> = a["at"].as_str().unwrap().rsplitn(3, ':').collect();
            let value = |k: &str| {
                a[k]["value"]
                    .as_i64()
                    .unwrap_or_else(|| panic!("{k} not settled: {a}"))
            };
            Access {
                line: at[1].parse().unwrap(),
                text: a["access"].as_str().unwrap().to_string(),
                kind: a["kind"].as_str().unwrap().to_string(),
                requests: value("requests"),
                sectors: value("sectors"),
            }
        })
        .collect())
}

/// The `.cu` line plus this is the source line: the body is copied line for line, so one
/// offset maps every access; the one most pairs of equal text agree on.
fn line_offset(report: &[Access], kernel: &[Access]) -> Option<i64> {
    let mut votes: BTreeMap<i64, usize> = BTreeMap::new();
    for r in report {
        for k in kernel {
            if normal(&r.text) == normal(&k.text) && r.kind == k.kind {
                *votes.entry(r.line - k.line).or_default() += 1;
            }
        }
    }
    votes.into_iter().max_by_key(|(_, n)| *n).map(|(o, _)| o)
}

/// The array an access text starts with (`c->data[i]`: `c_data`).
fn array(text: &str) -> String {
    let n = normal(text);
    n.split('[').next().unwrap_or(&n).to_string()
}

/// Why the report's access `r` has no counterpart in the emitted kernel, if emit left it
/// out by design.
fn left_out(r: &Access, lp: &Value, params: &[String]) -> Option<&'static str> {
    let text = normal(&r.text);
    if params.contains(&text) {
        return Some("a loaded pointer emit passes as a parameter");
    }
    let nest: Vec<i64> = lp["nest"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|id| id.as_str()?.rsplit(':').nth(1)?.parse().ok())
        .collect();
    if params.contains(&format!("ww_{text}")) && nest.contains(&r.line) {
        return Some("a loop bound emit computes once and passes as a parameter");
    }
    reduction(&r.text, r.line, lp).then_some("a reduction's target")
}

/// Whether `text` at `line` is the target of one of the loop's reductions (emit keeps a
/// private copy per thread and combines them atomically) or emit's own (`ww_`).
fn reduction(text: &str, line: i64, lp: &Value) -> bool {
    let arr = array(text);
    arr.starts_with("ww_")
        || lp["reductions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|red| {
                array(red["target"].as_str().unwrap()) == arr
                    && red["lines"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|l| l.as_i64() == Some(line))
            })
}

/// The x loop's trip count with `values`, when it is a number.
fn x_trips(loops: &[Value], mapping: &Value, values: &BTreeMap<String, i64>) -> Option<i64> {
    let x = loops
        .iter()
        .find(|l| l["id"] == mapping["mapping"]["x_loop"])?;
    let trips = x["induction"]["trip_count"].as_str()?;
    let values: BTreeMap<String, i64> = names(trips)
        .into_iter()
        .map(|n| (n, SIZE))
        .chain(values.clone())
        .collect();
    settle(trips, &values)
}

/// Emits the kernel of `lp` under `mapping`, checks it with the sizes the report's counts
/// are written in set to [`SIZE`], and compares each access of the loop's body with the
/// report's: the disagreements, one line each (`Err`: emit refused, why).
fn check(
    loops: &[Value],
    lp: &Value,
    mapping: &Value,
    tally: &mut Tally,
) -> Result<Vec<String>, String> {
    let id = lp["id"].as_str().unwrap();
    let file = root().join(id.rsplitn(3, ':').nth(2).unwrap());
    let arg = mapping_arg(&mapping["mapping"]);
    let what = format!("{id} {{{arg}}}");
    let cu = emitted(&file, id, &arg).map_err(|e| format!("{what}: emit refuses: {e}"))?;
    let source = std::fs::read_to_string(&cu).unwrap();
    let params = parameters(&source);
    let mut values = BTreeMap::new();
    for a in mapping["accesses"].as_array().unwrap() {
        for k in ["requests_per_warp", "sectors_per_warp"] {
            for n in names(a[k].as_str().unwrap()) {
                values.insert(n, SIZE);
            }
        }
    }
    let expected = reported(mapping, &values);
    let mut set = values.clone();
    set.extend(pitches(&source, &values));
    // The report and check both take a size added to the index alone (`a[i + 2*n]`) to
    // keep the warp on its aligned start; giving check the values too (a multiple of 32 of
    // its own, so that forms that differ by parameters, `slice + k`, `size + k`, stay
    // apart) compares the two on numbers.
    for (i, p) in scalar_parameters(&source).into_iter().enumerate() {
        set.entry(p).or_insert(SIZE * (2 + i as i64));
    }
    let kernel = match checked(&cu, &set) {
        Ok(k) => k,
        // Not a refusal to skip: emit wrote it, so check must read it.
        Err(e) => return Ok(vec![format!("{what}: {e}")]),
    };
    tally.mappings += 1;
    let Some(offset) = line_offset(&expected, &kernel) else {
        return Ok(vec![format!(
            "{what}: no access of the kernel matches the report's"
        )]);
    };
    let partial = x_trips(loops, mapping, &values).is_some_and(|t| t < 32);
    let mut used = vec![false; kernel.len()];
    let mut wrong = Vec::new();
    for r in &expected {
        let found = kernel.iter().enumerate().find(|(i, k)| {
            !used[*i]
                && k.line + offset == r.line
                && k.kind == r.kind
                && normal(&k.text) == normal(&r.text)
        });
        let Some((i, k)) = found else {
            if left_out(r, lp, &params).is_some() {
                tally.left_out += 1;
            } else {
                wrong.push(format!(
                    "{what}: `{}` line {}: not in the kernel",
                    r.text, r.line
                ));
            }
            continue;
        };
        used[i] = true;
        tally.accesses += 1;
        let (report, check) = ((r.requests, r.sectors), (k.requests, k.sectors));
        if report == check {
            continue;
        }
        if partial && check.0 <= report.0 && check.1 <= report.1 {
            tally.partial += 1;
            continue;
        }
        wrong.push(format!(
            "{what}: `{}` {} line {}: report {report:?}, check {check:?} (requests, sectors)",
            r.text, r.kind, r.line
        ));
    }
    for (k, _) in kernel.iter().zip(&used).filter(|(_, u)| !**u) {
        if k.kind != "atomic" && !reduction(&k.text, k.line + offset, lp) {
            wrong.push(format!(
                "{what}: check's `{}` line {}: not in the report",
                k.text, k.line
            ));
        }
    }
    Ok(wrong)
}

/// Every C file under `samples/`.
fn samples() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "c") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("samples"), &mut out);
    out.sort();
    out
}

#[test]
fn check_agrees_with_the_report_on_every_emitted_kernel() {
    let mut tally = Tally::default();
    let mut wrong = Vec::new();
    let mut skipped = Vec::new();
    let mut with_friendly = 0;
    for file in samples() {
        let loops = report(&file);
        let friendly: Vec<&Value> = loops
            .iter()
            .filter(|l| l["verdict"] == "friendly")
            .collect();
        with_friendly += usize::from(!friendly.is_empty());
        let mut counted = false;
        for lp in friendly {
            let mut emitted_any = false;
            for mapping in lp["mappings"].as_array().into_iter().flatten() {
                match check(&loops, lp, mapping, &mut tally) {
                    Ok(w) => {
                        emitted_any = true;
                        wrong.extend(w);
                    }
                    Err(why) => skipped.push(why),
                }
            }
            tally.loops += usize::from(emitted_any);
            counted |= emitted_any;
        }
        tally.files += usize::from(counted);
    }
    for s in &skipped {
        println!("skipped: {s}");
    }
    println!("{tally:?}");
    let mut unseen: Vec<&str> = Vec::new();
    for (loop_id, access, _) in KNOWN {
        let before = wrong.len();
        wrong.retain(|w| !(w.starts_with(loop_id) && w.contains(&format!("`{access}`"))));
        if wrong.len() == before {
            unseen.push(access);
        }
    }
    assert!(
        wrong.is_empty(),
        "check and the report disagree:\n{}",
        wrong.join("\n")
    );
    assert!(unseen.is_empty(), "known disagreements gone: {unseen:?}");
    // Every sample with friendly loops has a kernel compared, and an access that stops
    // being compared shows.
    assert_eq!(tally.files, with_friendly, "{tally:?}");
    assert!(tally.accesses >= 245, "{tally:?}");
}

/// The access `access` in the report's `mapping` of `loop_id` and in check's report of
/// the kernel emitted for it (sizes unset on both sides), as each writes it.
fn both_sides(loop_id: &str, mapping: &str, access: &str) -> (Value, Value) {
    // Relative, as the report names its loops by the path it was given.
    let file = Path::new(loop_id.rsplitn(3, ':').nth(2).unwrap());
    let loops = report(file);
    let lp = loops.iter().find(|l| l["id"] == loop_id).unwrap();
    let m = lp["mappings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| mapping_arg(&m["mapping"]) == mapping)
        .unwrap();
    let find = |list: &Value, key: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|a| a[key] == access)
            .cloned()
            .unwrap_or_else(|| panic!("no `{access}` in {list}"))
    };
    let cu = emitted(file, loop_id, mapping).unwrap();
    let out = warpwise(&["check", "--format", "json", &cu.to_string_lossy()]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        find(&m["accesses"], "text"),
        find(&doc["kernels"][0]["accesses"], "access"),
    )
}

#[test]
fn a_branch_that_picks_the_address_per_lane_mixes_its_forms_in_one_warp() {
    // `idx` is `slice + k` or `size + k` by a branch on the lane's own `k`: at the ends of
    // the array a warp's lanes take both, so the warp touches both forms' granules. Both
    // doors count every form together, at most 1 + 1 requests and 4 + 4 sectors on aligned
    // rows, 2 + 2 requests without; the forms' maximum (1 request, 2 unaligned), as if a
    // warp took one form, was wrong.
    let id = "samples/signal_conv1d.c:44:5";
    let (report, check) = both_sides(id, "x=i", "in[idx]");
    let counts = |a: &Value, keys: [&str; 3]| keys.map(|k| a.pointer(k).unwrap().to_string());
    assert_eq!(
        counts(
            &report,
            [
                "/requests_per_warp",
                "/sectors_per_warp",
                "/unaligned_requests_per_warp"
            ]
        ),
        ["\"2\"", "\"8\"", "\"4\""]
    );
    assert_eq!(
        counts(
            &check,
            ["/requests/value", "/sectors/value", "/requests/unaligned"]
        ),
        ["2", "8", "\"4\""]
    );
    // The run decides: size 1024, slice 3. The inner loop's `k` moves the warp's addresses
    // off the 128-byte boundary the aligned count assumes, so the bound is the unaligned
    // one: 4 requests, 10 sectors (check's `unaligned`).
    let cu = emitted(Path::new("samples/signal_conv1d.c"), id, "x=i").unwrap();
    let source: &'static str = Box::leak(std::fs::read_to_string(cu).unwrap().into_boxed_str());
    let run = crate::check_kernels::Run::of(&crate::check_kernels::Fixture {
        name: "conv1d",
        source,
        set: &[],
        kernel: "conv1d_L44_kernel",
        grid: [4, 1, 1],
        block: [256, 1, 1],
        buffers: &[("in", "int", 2 * 1024 + 8), ("out", "int", 1024)],
        init: "",
        args: "in, out, 1024, 3",
    });
    assert_eq!(check.pointer("/sectors/unaligned").unwrap(), "10");
    let seen = run.per_execution("in", false);
    for (range, line, most) in [(seen.requests, 128, 4), (seen.sectors, 32, 10)] {
        let widest = range.unwrap().max;
        println!("{line}-byte granules: at most {widest} in one execution of a warp");
        assert!(
            widest <= most,
            "{line}-byte granules: a warp's execution touched {widest}, the count is {most}"
        );
    }
    // More than the old count without aligned rows: a warp mixes the forms.
    assert!(seen.requests.unwrap().max > 2, "{seen:?}");
}
