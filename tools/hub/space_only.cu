// The recorded spaces of benchmark_hub (tools/hub/*.json) are for
// kforge tune --simulate only: their kernels are benchmark_hub's
// (github.com/AutoTuningAssociation/benchmark_hub, kernels/), not included.
#error "this config describes a recorded space for kforge tune --simulate; its kernel is not included"
extern "C" __global__ void space_only(float *out) { out[0] = 0; }
