/*
 * transpose.c -- out-of-place matrix transpose B = A^T with fixed-size
 * two-dimensional array parameters.
 *
 * Reproduces: the mapping trade-off of thesis Section 5.1 ("Improving
 * coalescing"): no loop order makes both accesses coalesced, which is
 * the case for a shared-memory tile (Section 5.2).
 *
 * Known answers (N = 160 rows, M = 128 columns of A), function transpose():
 *   Loops:
 *     line 37  for i   trip count N = 160
 *     line 38  for j   trip count M = 128 per i
 *   GPU-friendly: yes, 2D nest (each (i, j) writes its own B[j][i], A is
 *     only read; normalizable; no calls).
 *   Accessed byte sections, half-open (int = 4 bytes):
 *     A  read   [0, 4*N*M) = [0, 81920)
 *     B  write  [0, 4*M*N) = [0, 81920)
 *   Coalescing (warp 32, 128-byte line):
 *     natural mapping (Grid.x = i): A[i][j] stride 4*M bytes, M/4 = 32
 *       requests; B[j][i] stride 4 bytes, 1 request.
 *     reversed mapping (Grid.x = j): A[i][j] 1 request; B[j][i] stride
 *       4*N bytes, N/4 = 40 -> clamped to 32 requests.
 *     Either way one access is uncoalesced: stage a 32 x 32 tile in
 *     shared memory.
 */
#include <stdint.h>
#include <stdio.h>

#define N 160
#define M 128

static int A_data[N][M];
static int B_data[M][N];

void transpose(int A[N][M], int B[M][N])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            B[j][i] = A[i][j];
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            A_data[i][j] = i * 1000 + j;
    transpose(A_data, B_data);
    uint64_t h = 0;
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++)
            h = h * 1000003u + (uint32_t)B_data[j][i];
    printf("checksum: %llu\n", (unsigned long long)h);
    return 0;
}
