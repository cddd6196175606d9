//! Generated C for benchmarks: about `target_lines` lines of realistic numeric code
//! (nested loops over VLA and fixed arrays, structs, conditionals, calls), deterministic.

use std::fmt::Write;

/// Header shared by every generated function: structs, a typedef, globals, prototypes.
const PRELUDE: &str = r#"#include <math.h>
#include <stdlib.h>

struct particle { double x, y, z; double vx, vy, vz; double mass; int id; };
typedef struct { int rows, cols; double *data; } matrix;
enum mode { MODE_SUM, MODE_MAX, MODE_MIN };

static double table[256];
double global_scale = 1.5;

double dot(const double *a, const double *b, int n);
"#;

/// One family of functions; `i` varies constants and names so no two are the same.
fn function(out: &mut String, i: usize) {
    let c = i % 7 + 1;
    let _ = match i % 4 {
        // Stencil on a VLA parameter with a helper call and a conditional.
        0 => write!(
            out,
            r#"
static double weight_{i}(double a, double b) {{
  return a * {c}.25 + b / ({c}.0 + fabs(a));
}}

void stencil_{i}(int n, int m, double A[n][m], double B[n][m], int steps) {{
  int t, i, j;
  for (t = 0; t < steps; t++) {{
    for (i = 1; i < n - 1; i++) {{
      for (j = 1; j < m - 1; j++) {{
        double v = 0.2 * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
        if (v > {c}.5) {{
          B[i][j] = weight_{i}(v, A[i][j]);
        }} else if (v < -{c}.5) {{
          B[i][j] = -v;
        }} else {{
          B[i][j] = v * global_scale;
        }}
      }}
    }}
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < m - 1; j++)
        A[i][j] = B[i][j];
  }}
}}
"#
        ),
        // Particles: array of structs, indirection, a reduction and a while loop.
        1 => write!(
            out,
            r#"
double particles_{i}(struct particle *p, const int *order, int n, double dt) {{
  int k;
  double energy = 0.0;
  for (k = 0; k < n; k++) {{
    struct particle *q = &p[order[k]];
    q->vx += dt * q->x / (q->mass + {c}.0);
    q->vy += dt * q->y / (q->mass + {c}.0);
    q->vz += dt * q->z / (q->mass + {c}.0);
    q->x += q->vx * dt;
    q->y += q->vy * dt;
    q->z += q->vz * dt;
    energy += 0.5 * q->mass * (q->vx * q->vx + q->vy * q->vy + q->vz * q->vz);
  }}
  k = 0;
  while (k < n && p[k].id != {c}) {{
    k++;
  }}
  if (k < n)
    energy -= p[k].mass;
  return energy;
}}
"#
        ),
        // Matrix struct, pointer arithmetic, a switch and a do-while.
        2 => write!(
            out,
            r#"
double matrix_{i}(matrix *a, const matrix *b, enum mode mode) {{
  int r, s;
  double acc = mode == MODE_MIN ? 1e300 : 0.0;
  for (r = 0; r < a->rows; r++) {{
    double *row = a->data + r * a->cols;
    for (s = 0; s < a->cols; s++) {{
      double v = row[s] * b->data[s * b->cols + r % b->cols] + table[(r + s) & 255];
      switch (mode) {{
      case MODE_SUM:
        acc += v;
        break;
      case MODE_MAX:
        if (v > acc) acc = v;
        break;
      default:
        acc = v < acc ? v : acc;
        break;
      }}
      row[s] = v * {c};
    }}
  }}
  r = 0;
  do {{
    acc *= 0.5;
    r++;
  }} while (r < {c});
  return acc;
}}
"#
        ),
        // Image filter on a flat array with a local array, casts and a call.
        _ => write!(
            out,
            r#"
void blur_{i}(const unsigned char *in, unsigned char *out, int width, int height) {{
  int x, y, dx, dy;
  int kernel[3][3] = {{{{1, 2, 1}}, {{2, 4, 2}}, {{1, 2, 1}}}};
  for (y = 1; y < height - 1; y++) {{
    for (x = 1; x < width - 1; x++) {{
      int sum = 0;
      for (dy = -1; dy <= 1; dy++)
        for (dx = -1; dx <= 1; dx++)
          sum += kernel[dy + 1][dx + 1] * in[(y + dy) * width + (x + dx)];
      sum = sum / 16 + {c};
      out[y * width + x] = (unsigned char)(sum > 255 ? 255 : sum);
    }}
  }}
  for (x = 0; x < width; x++) {{
    out[x] = in[x];
    out[(height - 1) * width + x] = in[(height - 1) * width + x];
  }}
  table[{c}] = dot((const double *)0, (const double *)0, 0);
}}
"#
        ),
    };
}

/// The generated file's text: deterministic, about `target_lines` lines.
pub fn generate(target_lines: usize) -> String {
    let mut text = String::from(PRELUDE);
    let mut i = 0;
    while text.lines().count() < target_lines {
        for _ in 0..64 {
            function(&mut text, i);
            i += 1;
        }
    }
    text
}

/// Writes the generated file as `dir/generated.c` and returns the unit to preprocess (run
/// in `dir`) and its line count.
pub fn write_input(
    dir: &std::path::Path,
    target_lines: usize,
) -> (crate::preprocess::TranslationUnitInput, usize) {
    std::fs::create_dir_all(dir).expect("create the benchmark directory");
    let text = generate(target_lines);
    let lines = text.lines().count();
    std::fs::write(dir.join("generated.c"), &text).expect("write the generated C");
    let input = crate::preprocess::TranslationUnitInput {
        file: "generated.c".into(),
        working_dir: Some(dir.to_path_buf()),
        ..Default::default()
    };
    (input, lines)
}
