// convolution.cu -- a 2-D convolution of a width x height float image with a
// 17 x 17 filter held in constant memory, tuned by kforge
// (configs/custom/convolution.json):
//
//   output[y][x] = sum over fy, fx of input[y + fy][x + fx] * d_filter[fy][fx]
//
// input is (height + 16) x (width + 16), row-major: the image with its
// 8-pixel border already around it, so every output has all its taps.
// d_filter is a __constant__ array: at each tap every thread of a warp reads
// the same element, which constant memory broadcasts.  kforge writes it
// before any launch (the config's "constants": name, dtype, length, fill).
//
// Tunable (#defined by kforge before this file, as Kernel Tuner does):
//   block_size_x, block_size_y  the thread block
//   tile_size_x, tile_size_y    outputs per thread: in x block_size_x
//                               apart (a warp's loads and stores stay
//                               coalesced), in y consecutive rows (each input
//                               row read serves up to tile_size_y of them)
//   contiguous_x                1: a thread's outputs are consecutive in x
//                               too, and one window of each input row
//                               (vector loads) serves all of them
//   use_padding                 one spare float per shared-memory row
//                               (rows no longer start on the same bank)
//   read_only                   load the input through the read-only
//                               data cache (__ldg)
//
// A block computes a (block_size_x * tile_size_x) x (block_size_y *
// tile_size_y) tile of the output.  It first copies the input under the
// tile, with the 16-pixel apron to its right and below, into shared memory;
// then each thread streams the input rows under its outputs, adding each
// value read to every output that takes it.  Every output
// is accumulated in the same order in every variant -- filter rows top to
// bottom, each row left to right, one fmaf per tap, starting from 0 -- so
// every variant reproduces the reference variant's bits exactly.
//
// planted_bug is not in the shipped space (tests/custom_gpu.sh adds it):
// 1 leaves the last output unwritten, 2 reads the filter transposed; both
// must be caught by verification.

#define FILTER_W 17
#define FILTER_H 17

#ifndef planted_bug
#define planted_bug 0
#endif

#define TILE_W (block_size_x * tile_size_x)
#define TILE_H (block_size_y * tile_size_y)
#define SHARED_W (TILE_W + FILTER_W - 1 + use_padding)
#define SHARED_H (TILE_H + FILTER_H - 1)

__constant__ float d_filter[FILTER_H * FILTER_W];

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y, 1)
convolution(float *output, const float *input, int width, int height)
{
    __shared__ __align__(16) float tile[SHARED_H][SHARED_W];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H; /* the tile's first output */
    const int in_w = width + FILTER_W - 1, in_h = height + FILTER_H - 1;

    /* the input under the tile and its apron; past the input's edge, 0 (only
     * outputs past the image's edge, which are not written, read those) */
    for (int i = ty; i < TILE_H + FILTER_H - 1; i += block_size_y)
        for (int j = tx; j < TILE_W + FILTER_W - 1; j += block_size_x) {
            const int y = y0 + i, x = x0 + j;
            float v = 0.0f;
            if (y < in_h && x < in_w) {
                const float *p = input + (size_t)y * in_w + x;
#if read_only
                v = __ldg(p);
#else
                v = *p;
#endif
            }
            tile[i][j] = v;
        }
    __syncthreads();

    float sum[tile_size_y][tile_size_x];
#pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++)
#pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++)
            sum[ti][tj] = 0.0f;

    /* The thread's outputs: tile_size_y consecutive rows from rb, columns
     * tx + tj * block_size_x.  The input rows under them stream through
     * once, top to bottom: each value read from shared memory serves every
     * output of the thread that needs it (up to tile_size_y of them, one
     * filter row apart), so a thread does up to tile_size_y fmaf per load.
     * Each output still takes its taps in one order -- filter rows top to
     * bottom (fy = r - ti grows with r), each row left to right -- the same
     * in every variant, so every variant gives the reference's bits. */
    const int rb = ty * tile_size_y;
#if contiguous_x
    /* the thread's outputs also consecutive in x, from cb: a row's window of
     * tile_size_x + 16 values serves all of them, read as float4 (float2)
     * where the tile's rows keep 16 (8) bytes of alignment */
    const int cb = tx * tile_size_x;
#pragma unroll 1
    for (int r = 0; r < tile_size_y + FILTER_H - 1; r++) {
        float w[tile_size_x + FILTER_W - 1];
        const float *row = &tile[rb + r][cb];
        if (tile_size_x % 4 == 0 && SHARED_W % 4 == 0) {
#pragma unroll
            for (int k = 0; k < (tile_size_x + FILTER_W - 1) / 4; k++) {
                const float4 q = ((const float4 *)row)[k];
                w[4 * k] = q.x, w[4 * k + 1] = q.y, w[4 * k + 2] = q.z, w[4 * k + 3] = q.w;
            }
#pragma unroll
            for (int k = (tile_size_x + FILTER_W - 1) / 4 * 4; k < tile_size_x + FILTER_W - 1; k++)
                w[k] = row[k];
        } else if (tile_size_x % 2 == 0 && SHARED_W % 2 == 0) {
#pragma unroll
            for (int k = 0; k < (tile_size_x + FILTER_W - 1) / 2; k++) {
                const float2 q = ((const float2 *)row)[k];
                w[2 * k] = q.x, w[2 * k + 1] = q.y;
            }
#pragma unroll
            for (int k = (tile_size_x + FILTER_W - 1) / 2 * 2; k < tile_size_x + FILTER_W - 1; k++)
                w[k] = row[k];
        } else {
#pragma unroll
            for (int k = 0; k < tile_size_x + FILTER_W - 1; k++)
                w[k] = row[k];
        }
#pragma unroll
        for (int fx = 0; fx < FILTER_W; fx++) {
#pragma unroll
            for (int ti = 0; ti < tile_size_y; ti++) {
                const int fy = r - ti;
                if (fy >= 0 && fy < FILTER_H) {
#if planted_bug == 2
                    const float f = d_filter[fx * FILTER_W + fy]; /* the filter transposed: wrong */
#else
                    const float f = d_filter[fy * FILTER_W + fx];
#endif
#pragma unroll
                    for (int tj = 0; tj < tile_size_x; tj++)
                        sum[ti][tj] = fmaf(w[tj + fx], f, sum[ti][tj]);
                }
            }
        }
    }
#else
#pragma unroll 1
    for (int r = 0; r < tile_size_y + FILTER_H - 1; r++) {
#pragma unroll
        for (int fx = 0; fx < FILTER_W; fx++) {
            float v[tile_size_x];
#pragma unroll
            for (int tj = 0; tj < tile_size_x; tj++)
                v[tj] = tile[rb + r][tx + tj * block_size_x + fx];
#pragma unroll
            for (int ti = 0; ti < tile_size_y; ti++) {
                const int fy = r - ti;
                if (fy >= 0 && fy < FILTER_H) {
#if planted_bug == 2
                    const float f = d_filter[fx * FILTER_W + fy]; /* the filter transposed: wrong */
#else
                    const float f = d_filter[fy * FILTER_W + fx];
#endif
#pragma unroll
                    for (int tj = 0; tj < tile_size_x; tj++)
                        sum[ti][tj] = fmaf(v[tj], f, sum[ti][tj]);
                }
            }
        }
    }

#endif

#pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++)
#pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++) {
#if contiguous_x
            const int y = y0 + rb + ti, x = x0 + cb + tj;
#else
            const int y = y0 + rb + ti, x = x0 + tx + tj * block_size_x;
#endif
            if (planted_bug == 1 && y == height - 1 && x == width - 1)
                continue; /* the last output never written: wrong */
            if (y < height && x < width)
                output[(size_t)y * width + x] = sum[ti][tj];
        }
}
