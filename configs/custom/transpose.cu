// transpose.cu -- a matrix transpose through shared-memory tiles, tuned by
// kforge (configs/custom/transpose.json).  in is height x width, row-major;
// out is width x height.  A block of (tile_dim / vec) x block_rows threads
// moves one tile_dim x tile_dim tile: it reads the tile's rows (coalesced,
// vec floats per load) into shared memory, then writes the tile's columns as
// rows of out (coalesced again, vec floats per store).  pad adds columns to
// the shared tile, so that reading a column spreads over the banks.
//
// Tunable (#defined by kforge): tile_dim, block_rows, pad, vec (1, 2 or 4
// floats per load and store), unroll (1: unroll the tile loops).  The tile
// is dynamic shared memory, tile_dim x (tile_dim + pad) floats (the config's
// "smem"), so that 128 x 128 tiles may opt in above 48 KiB.  planted_bug is
// not in the shipped space: a config that lists it ([0, 1]) gets variants
// that leave the last element unwritten, which verification must catch.
#ifndef planted_bug
#define planted_bug 0
#endif
#if unroll
#define TILE_LOOP _Pragma("unroll")
#else
#define TILE_LOOP _Pragma("unroll 1")
#endif

#define TX (tile_dim / vec)        /* threads across a tile */
#define STRIDE (tile_dim + pad)    /* floats per row of the shared tile */

/* vec floats at p (aligned to vec floats) */
template <int V> struct vecf;
template <> struct vecf<1> { typedef float t; };
template <> struct vecf<2> { typedef float2 t; };
template <> struct vecf<4> { typedef float4 t; };

extern "C" __global__ void transpose(float *out, const float *in, int width, int height)
{
    extern __shared__ float tile[];
    typedef vecf<vec>::t V;
    const int tx = threadIdx.x * vec, x0 = blockIdx.x * tile_dim, y0 = blockIdx.y * tile_dim;
    /* rows y0 + r of in, columns x0 + tx .. x0 + tx + vec - 1 */
    const bool whole_in = width % vec == 0;
    TILE_LOOP
    for (int r = threadIdx.y; r < tile_dim; r += block_rows) {
        int y = y0 + r, x = x0 + tx;
        float v[vec];
        if (whole_in && y < height && x + vec <= width) {
            V w = *(const V *)(in + (size_t)y * width + x);
            const float *f = (const float *)&w;
#pragma unroll
            for (int k = 0; k < vec; k++)
                v[k] = f[k];
        } else {
#pragma unroll
            for (int k = 0; k < vec; k++)
                v[k] = y < height && x + k < width ? in[(size_t)y * width + x + k] : 0.0f;
        }
#pragma unroll
        for (int k = 0; k < vec; k++)
            tile[r * STRIDE + tx + k] = v[k];
    }
    __syncthreads();
    /* rows x0 + r of out (columns of in), columns y0 + tx .. (rows of in) */
    const bool whole_out = height % vec == 0;
    TILE_LOOP
    for (int r = threadIdx.y; r < tile_dim; r += block_rows) {
        int y = x0 + r, x = y0 + tx;
        if (y >= width)
            continue;
        float v[vec];
#pragma unroll
        for (int k = 0; k < vec; k++)
            v[k] = tile[(tx + k) * STRIDE + r];
        if (whole_out && x + vec <= height && !planted_bug) {
            V w;
            float *f = (float *)&w;
#pragma unroll
            for (int k = 0; k < vec; k++)
                f[k] = v[k];
            *(V *)(out + (size_t)y * height + x) = w;
        } else {
#pragma unroll
            for (int k = 0; k < vec; k++) {
                if (planted_bug && x + k == height - 1 && y == width - 1)
                    continue;
                if (x + k < height)
                    out[(size_t)y * height + x + k] = v[k];
            }
        }
    }
}
