/* Particles kept as an array of structures: neighbouring threads read and write `x`
   12 bytes apart, so a warp's 128 bytes of `x` come in 12 sectors instead of 4. */
struct Particle { float x, y, z; };

__global__ void shift(struct Particle *p, float dx)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    p[i].x += dx; /* ACCESS */
}
