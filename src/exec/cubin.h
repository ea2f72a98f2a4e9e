/*
 * cubin.h -- what a cubin (the ELF file NVRTC writes) says about its
 * kernels, read without a GPU or driver: their names and the sizes of their
 * parameters.  The fake GPU checks a family's entries and arg_sizes with it,
 * as the driver's cuModuleGetFunction and cuFuncGetParamInfo do on a GPU.
 *
 * A kernel has a section ".nv.info.NAME" (NAME: the extern "C" name or the
 * mangled one) whose EIATTR_KPARAM_INFO records give each parameter's
 * ordinal and size.
 */
#ifndef KF_CUBIN_H
#define KF_CUBIN_H

#include <stdbool.h>
#include <stddef.h>

/* Whether cubin (len bytes) is an ELF file this reader understands. */
bool cubin_ok(const void *cubin, size_t len);

/* The kernels' names, comma-separated, into buf ("none" if there are none). */
void cubin_kernels(const void *cubin, size_t len, char *buf, size_t buflen);

/* Whether the kernel called name is in the cubin. */
bool cubin_has_kernel(const void *cubin, size_t len, const char *name);

/* The one kernel whose mangled name begins with prefix (a C++ name, as
 * module.c's find_cxx looks for one): its name into out, true; false when
 * none or several do. */
bool cubin_find_prefix(const void *cubin, size_t len, const char *prefix, char *out, size_t outlen);

/* The sizes in bytes of kernel name's parameters, in order, into sizes
 * (at most max): their count, or -1 when the cubin does not say (no such
 * kernel, or records this reader does not know). */
int cubin_param_sizes(const void *cubin, size_t len, const char *name, size_t *sizes, int max);

/* The size in bytes of the module variable (a __constant__ or __device__
 * variable) called name, from the cubin's symbol table: as
 * cuModuleGetGlobal gives it on a GPU; -1 when there is none or the cubin
 * does not say. */
long long cubin_global_size(const void *cubin, size_t len, const char *name);

#endif
