// transpose.cu -- a matrix transpose through shared-memory tiles, tuned by
// kforge (configs/custom/transpose.json).  in is height x width, row-major;
// out is width x height.  A block of tile_dim x block_rows threads moves
// one tile_dim x tile_dim tile: it reads the tile's rows (coalesced) into
// shared memory, then writes the tile's columns as rows of out (coalesced
// again).  pad = 1 adds a column to the shared tile, so that reading a
// column touches 32 different banks.
//
// Tunable (#defined by kforge): tile_dim, block_rows, pad.  planted_bug is
// not in the shipped space: a config that lists it ([0, 1]) gets variants
// that leave the last element unwritten, which verification must catch.
#ifndef planted_bug
#define planted_bug 0
#endif

extern "C" __global__ void transpose(float *out, const float *in, int width, int height)
{
    __shared__ float tile[tile_dim][tile_dim + pad];
    int x = blockIdx.x * tile_dim + threadIdx.x;
    int y = blockIdx.y * tile_dim + threadIdx.y;
    for (int j = 0; j < tile_dim; j += block_rows)
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * tile_dim + threadIdx.x; /* a column of out: a row of in */
    y = blockIdx.x * tile_dim + threadIdx.y;
    for (int j = 0; j < tile_dim; j += block_rows) {
        if (planted_bug && x == height - 1 && y + j == width - 1)
            continue;
        if (x < height && y + j < width)
            out[(size_t)(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
