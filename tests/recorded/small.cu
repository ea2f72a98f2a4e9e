// tests/recorded: a space for kforge tune --simulate; never compiled there.
extern "C" __global__ void small(float *out) { out[0] = block_size_x * tile_size_x; }
