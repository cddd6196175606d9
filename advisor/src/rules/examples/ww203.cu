/* Even and odd threads take different formulas: the condition alternates between
   neighbouring lanes, so every warp runs both sides one after the other, half of its lanes
   idle in each. */
__global__ void even_odd(float *a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[i];
    if (threadIdx.x % 2 == 0) /* BRANCH */
        v = rsqrtf(v);
    else
        v = __expf(v);
    a[i] = v;
}
