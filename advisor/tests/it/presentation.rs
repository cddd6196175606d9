//! Report text as users read it: names the source writes, qualified by line where
//! a loop's report shows two values of one variable, and expressions free of the analyses'
//! own variables (thread indices, version numbers). Every report here also passes
//! `verify::verify`.

use crate::common;

use advisor::model::{LoopReport, Report, SCHEMA};
use common::marked_report;

/// The marked loop's report, checked by the verifier.
fn verified(source: &str) -> LoopReport {
    let report = marked_report(source);
    let problems = advisor::verify::verify(&Report {
        schema: SCHEMA.into(),
        loops: vec![report.clone()],
        skipped: Vec::new(),
    });
    assert!(problems.is_empty(), "{problems:#?}");
    report
}

/// Every text of `report` (as YAML) contains each of `expected` and none of `absent`.
fn check(source: &str, expected: &[&str], absent: &[&str]) {
    let report = verified(source);
    let yaml = serde_yaml::to_string(&report).expect("serializable");
    for e in expected {
        assert!(yaml.contains(e), "`{e}` missing from:\n{yaml}");
    }
    for a in absent {
        assert!(!yaml.contains(a), "`{a}` present in:\n{yaml}");
    }
}

#[test]
fn a_variable_with_one_value_in_the_loop_reads_as_the_source_names_it() {
    // The second loop over `i` is `i#2` to the analyses; its section names the row `i`.
    check(
        r#"
void rows(int n, double (*a)[64], double *s) {
  for (int i = 0; i < n; i++)
    s[i] = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 64; j++) /* LOOP */
      a[i][j] = s[i] + j;
}
"#,
        &["lo: 512*i", "var: j"],
        &["#", "i_2", "i@"],
    );
}

#[test]
fn two_values_of_one_variable_are_told_apart_by_line() {
    // `m` on entry and `m` after the branch (a merge of two values): the section uses both.
    check(
        r#"
void shifted(int m, int flag, double *a, const double *b) {
  int k = m;
  if (flag)
    m = 3;
  for (int i = 0; i < 8; i++) /* LOOP */
    a[i * k + m] = b[i];
}
"#,
        &["8*m@6"],
        &["#2", "m_2"],
    );
}

/// A global the loop reads (`nc` in the bound and the index) is one value at the loop's
/// start, read after the call before the loop: the global itself (a parameter, the base of
/// its reads) and the value read from it are one variable to the reader, `nc`, not
/// `nc@L` beside `nc`.
#[test]
fn a_global_the_loop_reads_is_its_name() {
    check(
        r#"
int nc = 20;
void g(void);
void f(double *x, int n) {
  g();
  for (int i = 0; i < n; i++) /* LOOP */
    for (int k = 0; k < nc; k++)
      x[nc * i + k] = 0;
}
"#,
        &[
            "hi: 8*n*nc",
            "nc > 0 (the loop runs)",
            "offset_bytes: 8*k + 8*i*nc",
        ],
        &["@"],
    );
}

/// A value of the global read before a call that may write it (`m = nc; g();`) and the
/// global as the loop reads it after the call are two values: each keeps the line it is
/// read on, never one name for both. A call of the C library that writes only through its
/// arguments, or a call that does not return, leaves them one value.
#[test]
fn a_global_a_call_may_write_between_two_reads_is_two_values() {
    let source = |between: &str| {
        format!(
            r#"
#include <stdio.h>
#include <stdlib.h>
int nc = 20;
void g(void);
void f(double *x, int n) {{
  int m = nc;
  {between}
  for (int i = 0; i < n; i++) /* LOOP */
    for (int k = 0; k < m; k++)
      x[nc * i + k] = 0;
}}
"#
        )
    };
    check(
        &source("g();"),
        &[
            "hi: 8*nc@7 - 8*nc@11 + 8*n*nc@11",
            "nc > 0 (the loop runs) (where `nc` is its value at line 7)",
        ],
        // Expressions keep the qualifiers; prose says them in words.
        &["*nc\n", "*nc + ", "*nc - "],
    );
    check(
        &source("nc = 3;"),
        &["hi: 8*nc@7 - 8*nc@11 + 8*n*nc@11"],
        &["*nc\n", "*nc + ", "*nc - "],
    );
    for one_value in ["printf(\"%d\\n\", m);", "if (m < 0) abort();", ""] {
        check(
            &source(one_value),
            &["hi: 8*n*nc", "nc > 0 (the loop runs)"],
            &["@"],
        );
    }
}

/// So is a local whose address a call takes before the loop: the call writes it, and the
/// loop reads what it wrote.
#[test]
fn a_local_a_call_fills_is_its_name() {
    check(
        r#"
void sizes(int *rows);
void f(double *x, int n) {
  int rows;
  sizes(&rows);
  for (int i = 0; i < n; i++) /* LOOP */
    for (int k = 0; k < rows; k++)
      x[rows * i + k] = 0;
}
"#,
        &["hi: 8*n*rows", "rows > 0 (the loop runs)"],
        &["@"],
    );
}

#[test]
fn overlaps_that_grow_with_the_thread_are_the_most_in_the_block() {
    // Thread i reads a[0..i]: it shares 8*i + 8 bytes with thread i + 1, which the report
    // states for the block's last thread, not in terms of the thread index.
    let report = verified(
        r#"
void prefix(int n, const double *a, double *out) {
  for (int i = 0; i < n; i++) { /* LOOP */
    double s = 0;
    for (int j = 0; j <= i; j++)
      s += a[j];
    out[i] = s;
  }
}
"#,
    );
    let area = report
        .shared_memory
        .iter()
        .find(|s| s.array == "a")
        .expect("a is shared");
    assert_eq!(
        area.overlap_x_bytes.as_deref(),
        Some("8*block.x + 8*blockDim.x")
    );
}

/// The parameter names of the marked loop's report, in order.
fn parameter_names(source: &str) -> Vec<(String, String)> {
    verified(source)
        .parameters
        .iter()
        .map(|p| (p.name.clone(), format!("{:?}", p.kind)))
        .collect()
}

/// code_saturne's halo dump (cs_halo.c): in each sweep `index` is the send index or the
/// halo index.
const HALO_DUMP: &str = r#"
struct halo { int *send_index, *index; };
int dump(const struct halo *h, int n) {
  int s = 0;
  for (int which = 0; which < 2; which++) {
    int *index = which ? h->send_index : h->index;
    for (int i = 0; i < n; i++) /* LOOP */
      s += index[2*i] + index[2*i + 1] + index[2*i + 2];
  }
  return s;
}
"#;

#[test]
fn a_pointer_chosen_between_two_arrays_is_one_parameter() {
    // Its three accesses are one array the loop reads, not three parameters named by
    // their text.
    let names = parameter_names(HALO_DUMP);
    let arrays: Vec<&(String, String)> = names.iter().filter(|(_, k)| k == "Array").collect();
    assert_eq!(arrays.len(), 1, "{names:?}");
    assert_eq!(arrays[0].0, "index", "{names:?}");
    check(
        HALO_DUMP,
        &["it points into `h->index` or `h->send_index`"],
        &[],
    );
}

#[test]
fn a_pointer_the_loop_advances_is_a_scalar_and_the_memory_it_points_to() {
    // velvet's graph walks (concatenatedGraph.c): `node` is written (the walk's end is
    // used after the loop) and what it points to is read: `node` and `*node`.
    let names = parameter_names(
        r#"
struct node { struct node *next; int length; };
int walk(struct node *start, int steps) {
  struct node *node = start;
  int total = 0;
  for (int k = 0; k < steps; k++) { /* LOOP */
    total += node->length;
    node = node->next;
  }
  return total + node->length;
}
"#,
    );
    assert!(
        names.iter().any(|(n, k)| n == "node" && k == "Scalar"),
        "{names:?}"
    );
    assert!(
        names.iter().any(|(n, k)| n == "*node" && k != "Scalar"),
        "{names:?}"
    );
}

#[test]
fn an_element_of_a_member_array_prints_without_an_address_of() {
    // GraphicsMagick's median filter (effect.c): `list = pixel_list->lists + channel`, then
    // `list->nodes[color].next[0]` is `pixel_list->lists[channel].nodes[color].next[0]`.
    check(
        r#"
struct node { unsigned short next[9]; unsigned int count; };
struct list { struct node nodes[65537]; };
struct plist { struct list lists[4]; unsigned long center; };
void median(struct plist *pixel_list, unsigned short *channels) {
  unsigned long center = pixel_list->center;
  for (int channel = 0; channel < 4; channel++) { /* LOOP */
    struct list *list = pixel_list->lists + channel;
    unsigned long color = 65536L, count = 0;
    do {
      color = list->nodes[color].next[0];
      count += list->nodes[color].count;
    } while (count <= center);
    channels[channel] = color;
  }
}
"#,
        &["pixel_list->lists[channel].nodes[color].next[0]"],
        &["&pixel_list", "(&"],
    );
}

/// Four inner loops over their own `i` in one outer loop: the report tells their `i`s apart
/// (`i@5`, `i@7`), but each access's offset is read at its line, where `i` is the loop's
/// that holds it, and the mapping's `x` beside its loop.
#[test]
fn a_loop_variable_reads_plainly_where_its_loop_names_it() {
    let report = verified(
        r#"
void faces(int n, const int *cell, double (*dam)[3][3], double (*rhs)[3]) {
  for (int f = 0; f < n; f++) { /* LOOP */
    int c = cell[f];
    for (int i = 0; i < 3; i++)
      dam[c][i][i] += 1.0;
    for (int i = 0; i < 3; i++)
      rhs[c][i] += 2.0;
  }
}
"#,
    );
    let offsets: Vec<(u32, &str)> = report.mappings[0]
        .accesses
        .iter()
        .map(|a| (a.line, a.offset_bytes.single().expect("one form").as_str()))
        .collect();
    assert!(offsets.contains(&(6, "72*cell[f] + 32*i")), "{offsets:?}");
    assert!(offsets.contains(&(8, "24*cell[f] + 8*i")), "{offsets:?}");
    // Where one text holds both, they are still told apart.
    let yaml = serde_yaml::to_string(&report).expect("serializable");
    assert!(!yaml.contains("#"), "{yaml}");
}

/// An inner loop redeclaring the outer loop's name: inside it, `i` is the inner one, so the
/// outer `i` read there (through `k`) keeps its qualifier, and the inner one reads plainly.
#[test]
fn a_shadowed_loop_variable_keeps_its_qualifier() {
    let report = verified(
        r#"
void shadow(int n, double *a, const double *b) {
  for (int f = 0; f < n; f++) { /* LOOP */
    for (int i = 0; i < 4; i++) {
      int k = i;
      for (int i = 0; i < 4; i++)
        a[4 * f + k] += b[i];
    }
  }
}
"#,
    );
    let offsets: Vec<(&str, &str)> = report.mappings[0]
        .accesses
        .iter()
        .map(|a| {
            (
                a.text.as_str(),
                a.offset_bytes.single().expect("one form").as_str(),
            )
        })
        .collect();
    assert!(offsets.contains(&("b[i]", "8*i")), "{offsets:?}");
    assert!(
        offsets.contains(&("a[4 * f + k]", "32*f + 8*i@4")),
        "{offsets:?}"
    );
}

/// Two loops over one `ii` inside the loop: a finding about an access in each reads its
/// unprimed names at the first access and its primed names at the second, so the two
/// values of `ii` are `ii` and `ii'` there (each the one its access's line sees), though the
/// loop's other texts tell them apart by line.
#[test]
fn a_pair_finding_reads_each_access_s_names_at_its_line() {
    let report = verified(
        r#"
void two(int n, int m, int se, const int *flag, double *xa) {
  for (int k = 0; k < n; k++) { /* LOOP */
    int ii;
    if (flag[k]) {
      for (ii = 0; ii < m; ii++)
        for (int kk = 0; kk < se; kk++)
          xa[(ii * se + kk) * 2] = 1.0;
    } else {
      for (ii = 0; ii < m * se; ii++)
        xa[ii * 2] = 2.0;
    }
  }
}
"#,
    );
    let messages: Vec<&str> = report
        .reasons
        .iter()
        .flat_map(|r| std::iter::once(r).chain(&r.instances))
        .map(|r| r.message.as_str())
        .filter(|m| m.contains("cannot bound the address difference"))
        .collect();
    assert!(!messages.is_empty(), "{:#?}", report.reasons);
    for m in &messages {
        assert!(!m.contains("ii@"), "{m}");
    }
    assert!(
        messages
            .iter()
            .any(|m| m.contains("-16*ii' + 16*kk + 16*ii*se")),
        "{messages:#?}"
    );
}

/// A global pointer copied into a local before the loop (`mq = glob_mq`): the struct it
/// points to is a parameter named `glob_mq`, a field read through it is the path
/// `glob_mq->flag`, and the access to the field reads from the one value the global holds:
/// `glob_mq`, not `glob_mq@4` beside the path, which names the same value.
#[test]
fn a_global_pointer_heading_a_path_is_one_value() {
    check(
        r#"
typedef struct { int n; double pad[38]; unsigned *flag; } mq_t;
mq_t *glob_mq;
void f(double *var, double *out, int n) {
  mq_t *mq = glob_mq;
  for (int i = 0; i < n; i++) /* LOOP */
    if (!(mq->flag[i] & 2))
      out[i] = var[i];
}
"#,
        &[
            "base: glob_mq\n",
            "base: glob_mq->flag\n",
            "name: glob_mq\n",
        ],
        &["glob_mq@"],
    );
}

/// Two reads of one global pointer inside the loop, with a store between them into a
/// parameter's memory: the loop cannot change the global (distinct parameters and globals
/// do not overlap, an assumption the report states), so both read the value it holds where
/// the loop starts, one name. The pointer is the one parameter of what it points to
/// (not nested: no other parameter reaches it), its own storage none. A loop that writes
/// the global keeps the two values apart.
#[test]
fn reads_of_a_global_the_loop_cannot_change_are_one_value() {
    check(
        r#"
double *table;
void f(double *out, int n) {
  for (int i = 0; i < n; i++) { /* LOOP */
    out[i] = table[i];
    out[i] += table[i + 1];
  }
}
"#,
        &[
            "base: table\n",
            "- name: table\n  role: in\n  kind: array\n  c_type: double *\n",
        ],
        &["table@", "double **", "nested"],
    );
    check(
        r#"
double *table;
double *other;
void f(double *out, int n) {
  for (int i = 0; i < n; i++) { /* LOOP */
    out[i] = table[i];
    table = other;
    out[i] += table[i + 1];
  }
}
"#,
        &["table@6", "table@8"],
        &[],
    );
}

#[test]
fn an_access_reads_a_search_loop_s_result_by_its_name() {
    // code_saturne's CSR fill: each branch searches the row for its column, and the access
    // after the search reads `kk` as the source does; the loop's report holds the two
    // searches' results, which the mappings' offsets read each at its own access.
    check(
        r#"
void fill(int n, const int *ij, const int *row, const int *col, double *val,
          const double *xa) {
  for (int f = 0; f < n; f++) { /* LOOP */
    int kk;
    int ii = ij[2 * f], jj = ij[2 * f + 1];
    if (ii < jj) {
      for (kk = row[ii]; col[kk] != jj; kk++);
      val[kk] += xa[f];
    } else {
      for (kk = row[jj]; col[kk] != ii; kk++);
      val[kk] += xa[f];
    }
  }
}
"#,
        &["offset_bytes: 8*kk\n"],
        &["offset_bytes: 8*kk@"],
    );
}

#[test]
fn a_while_loop_s_variable_reads_by_its_name_in_its_mapping() {
    // fasttree's `while (iSave < n) top[iSave++] = -1;` after a loop that also steps
    // `iSave`: at the `while`, `iSave` is the loop's own variable.
    check(
        r#"
void fill(int n, int m, const int *v, int *top) {
  int iSave = 0;
  for (int i = 0; i < n && iSave < m; i++)
    if (v[i] > 0)
      top[iSave++] = v[i];
  while (iSave < m) /* LOOP */
    top[iSave++] = -1;
}
"#,
        &["x: iSave\n"],
        &["x: iSave@"],
    );
}

#[test]
fn a_path_s_head_is_the_pointer_the_path_is_read_through() {
    // code_saturne's internal coupling: `cpl` assigned twice in the function; the loop
    // reads `cpl->vect` through its second value, which is the `cpl` of the loop's texts.
    check(
        r#"
typedef struct { int n; double (*vect)[3]; } coupling_t;
coupling_t *by_id(int id);
void f(int id, int n_local, const int *faces, double *rhs, int ircflp) {
  coupling_t *cpl = 0;
  if (ircflp) {
    cpl = by_id(id);
    for (int jj = 0; jj < n_local; jj++)
      rhs[faces[jj]] += cpl->vect[jj][0];
  }
  cpl = by_id(id + 1);
  for (int jj = 0; jj < n_local; jj++) /* LOOP */
    rhs[jj] += cpl->vect[jj][2];
}
"#,
        &["base: cpl\n", "base: cpl->vect\n"],
        &["cpl@"],
    );
}

/// A loop that continues the counter a previous loop left (`for (; ci < width; ci++)`,
/// dtaidistance's first rows): its bounds and sections are read where it starts, where
/// `ci` is that value, so they name it `ci`, not `ci@9` beside the loop's own `ci`.
#[test]
fn a_counter_a_loop_continues_reads_plainly_in_its_bounds_and_sections() {
    check(
        r#"
void rows(double *wps, long l1, long l2, long psi_2b) {
  long ri, ci, wpsi;
  const long inf_cols = 1, inf_rows = 1;
  long width = l2 + inf_cols;
  wpsi = 0;
  for (ri = 0; ri < inf_rows; ri++) {
    for (ci = 0; ci < inf_cols + psi_2b; ci++) {
      wps[wpsi] = 0;
      wpsi++;
    }
    for (; ci < width; ci++) { /* LOOP */
      wps[wpsi] = 1.0;
      wpsi++;
    }
  }
  wpsi = inf_rows * width;
  for (; ri < inf_rows + l1; ri++) {
    for (ci = 0; ci < inf_cols; ci++) {
      wps[wpsi] = 2.0;
      wpsi++;
    }
    wpsi += width - inf_cols;
  }
}
"#,
        &[
            "lower: ci\n",
            "trip_count: -ci + l2 + 1",
            "size: -8*ci + 8*l2 + 8",
        ],
        &["ci@"],
    );
}

#[test]
fn two_values_of_one_pointer_in_a_message_say_their_lines_in_words() {
    // `p` before and after the call that may move it: a message names both, each with the
    // line that reads it, and no qualified name is left in the prose (parameters and
    // expressions keep theirs: they must name one value each).
    let report = verified(
        r#"
void advance(double **pp);
void f(int n, double *out) {
  double *p = out;
  for (int i = 0; i < n; i++) { /* LOOP */
    p[i] = 1;
    advance(&p);
    out[i] = p[i + 1];
  }
}
"#,
    );
    let messages: Vec<&str> = report.reasons.iter().map(|r| r.message.as_str()).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("`p` (line 6) and `p` (line 8) may point into the same array")),
        "{messages:#?}"
    );
    assert!(messages.iter().all(|m| !m.contains('@')), "{messages:#?}");
    let names: Vec<&str> = report.parameters.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.contains(&"p@6") && names.contains(&"p@8"),
        "{names:?}"
    );
    // The pairs a profile settles name the source's variables; the accesses' lines tell
    // the two values of `p` apart.
    let pairs: Vec<(&str, u32, u32)> = report
        .needs_evidence
        .iter()
        .map(|d| (d.array.as_str(), d.first.line, d.second.line))
        .collect();
    assert!(pairs.contains(&("p / p", 6, 8)), "{pairs:?}");
    assert!(pairs.iter().all(|(a, ..)| !a.contains('@')), "{pairs:?}");
}

#[test]
fn a_string_literal_a_callee_reads_is_no_array_the_loop_writes() {
    // Modifying a string literal is undefined (C99 6.4.5p6): `ids[i]` cannot write what
    // `tag` reads of "abc", and the literal has no internal name to show.
    let report = common::check(
        r#"
static int tag(const char *s, int i) { return s[0] + i; }
void f(int n, int *ids) {
  for (int i = 0; i < n; i++) /* LOOP */
    ids[i] = tag("abc", i);
}
"#,
        advisor::model::Verdict::Friendly,
    );
    let yaml = serde_yaml::to_string(&report).expect("serializable");
    assert!(!yaml.contains("`v"), "{yaml}");
}
