/*
 * t1.h -- T1 in (issue 37): a T1 file, the Auto-Tuning Association's
 * description of a kernel and its tuning space (BAT's benchmarks ship as
 * T1), read as a kforge config of a custom kernel.  config.c hands the
 * parsed root here when it is a T1 document, and parses what comes back as
 * it would the config the user wrote:
 *
 *   KernelFile, KernelName           custom.source, custom.entry
 *   TuningParameters (int, uint)     custom.params (Values: a list, or a string holding one)
 *   Default of each                  custom.reference.params (the reference configuration)
 *   Conditions[].Expression          custom.constraints (Python's and, or, not, //)
 *   GlobalSize, LocalSize            custom.grid (GlobalSizeType CUDA: blocks; OpenCL:
 *                                    ceil(threads / LocalSize)), custom.block
 *   SharedMemory                     custom.smem (dynamic shared memory, bytes)
 *   CompilerOptions                  custom.compiler_options
 *   Arguments: Scalar                a scalar of FillValue
 *              Vector               a buffer: Size, AccessType ReadOnly/WriteOnly/ReadWrite
 *                                    in/out/inout, FillType Constant (FillValue),
 *                                    Random ([0, FillValue]), Generator "i" (iota);
 *                                    Output 0 on a written buffer: "check": false;
 *                                    MemType Constant: a __constant__ variable ("constants")
 *
 * Informational fields (General, Budget, BenchmarkConfig, verification,
 * BenchmarkName, BenchmarkPath, Stream, Misc, ProblemSize, GridDiv*) are
 * ignored; any other is refused, naming the field and the supported ones.
 */
#ifndef KF_T1_H
#define KF_T1_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* Whether root is a T1 document (KernelSpecification and
 * ConfigurationSpace, no "kernel"). */
bool t1_is(const cJSON *root);

/* The kforge config (a new cJSON object, the caller deletes it) of T1
 * document root; NULL and why ("T1 FIELD: what was expected"). */
cJSON *t1_translate(const cJSON *root, char *err, size_t errlen);

#endif
