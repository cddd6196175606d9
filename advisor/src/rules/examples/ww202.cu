/* A 32x32 tile read down a column: lane i reads word 32*i + k, so all 32 lanes of a warp
   hit bank k and the read takes 32 passes. Declaring the tile [32][33] spreads them. */
__global__ void row_sums(const float *in, float *out)
{
    __shared__ float tile[32][32];
    int tx = threadIdx.x;
    for (int k = 0; k < 32; k++)
        tile[k][tx] = in[k * 32 + tx];
    __syncthreads();
    float sum = 0;
    for (int k = 0; k < 32; k++)
        sum += tile[tx][k]; /* ACCESS */
    out[tx] = sum;
}
