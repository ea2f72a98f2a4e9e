"""int8 and uint8 arguments (BAT's MD5Hash has an int8 output) through the Python front end on the
fake GPU: arrays and scalars of one byte go to kforge as .npy files and scalars of those dtypes, and
come back in their dtype."""
import numpy

import kforge

SRC = """
__global__ void k(signed char *x, const unsigned char *y, unsigned char s, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) x[i] = (signed char)(y[i] + s);
}
"""


def test_run_kernel_int8_and_uint8():
    x = numpy.arange(-50, 50, dtype=numpy.int8)
    y = numpy.arange(100, dtype=numpy.uint8)
    r = kforge.run_kernel("k", SRC, 100, [x, y, numpy.uint8(3), numpy.int32(100)], {"block_size_x": 64})
    # the fake GPU hands back kforge's impossible answer for an integer output: its start plus one
    assert r[0].dtype == numpy.int8 and numpy.array_equal(r[0], x + numpy.int8(1))
    assert r[1].dtype == numpy.uint8 and numpy.array_equal(r[1], y + numpy.uint8(1))
    assert r[2] == 3


def test_tune_kernel_int8_verified():
    x = numpy.zeros(1000, dtype=numpy.int8)
    y = (numpy.arange(1000) % 200).astype(numpy.uint8)
    results, env = kforge.tune_kernel("k", SRC, 1000, [x, y, numpy.uint8(7), numpy.int32(1000)],
                                      {"block_size_x": [32, 64, 128]}, quiet=True)
    assert len(results) == 3
    for r in results:
        assert "__error__" not in r, r

