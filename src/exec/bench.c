/*
 * bench.c -- see bench.h.  The steps of a case live in the files named
 * in bench_impl.h.
 */
#include "bench.h"

#include <dlfcn.h>
#include <stdlib.h>

#include "bench_impl.h"
#include "buffers.h"
#include "checks.h"
#include "module.h"
#include "timing.h"
#include "util.h"

bench *bench_new(int ordinal, int index, kf_device *dev, bool *missing, char *err, size_t errlen)
{
    *missing = false;
    bench *B = calloc(1, sizeof *B);
    if (!B) {
        kf_err(err, errlen, "out of memory");
        return NULL;
    }
    if (gpu_open(&B->g, ordinal, err, errlen) != 0) {
        *missing = gpu_open_missing(&B->g);
        free(B);
        return NULL;
    }
    kf_cu *cu = &B->g.cu;
    if (CU_CALL(&B->g, err, errlen, cu->cuStreamCreate(&B->stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
        goto fail;
    for (int i = 0; i < 2 * KF_BATCH; i++)
        if (CU_CALL(&B->g, err, errlen, cu->cuEventCreate(&B->ev[i], CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
            goto fail;
    /* Twice the L2 size, so that a memset over it evicts everything the
     * previous repetition left in L2. */
    size_t flush_bytes = (size_t)(B->g.info.l2_bytes > 0 ? B->g.info.l2_bytes : (64 << 20)) * 2;
    B->flush_words = flush_bytes / 4;
    if (CU_CALL(&B->g, err, errlen, cu->cuMemAlloc(&B->flush, flush_bytes)) != CUDA_SUCCESS)
        goto fail;
    B->times = malloc(sizeof(double) * KF_MAX_REPS_CAP);
    if (!B->times) {
        kf_err(err, errlen, "out of memory");
        goto fail;
    }
    /* NVML names devices in PCI order, CUDA fastest first: find ours by UUID
     * (cuDeviceGetUuid is looked up here: gpu.h's table need not carry it) */
    typedef CUresult (*uuid_fn)(CUuuid *, CUdevice);
    uuid_fn get_uuid = (uuid_fn)dlsym(B->g.cu.lib, "cuDeviceGetUuid_v2");
    if (!get_uuid)
        get_uuid = (uuid_fn)dlsym(B->g.cu.lib, "cuDeviceGetUuid");
    CUuuid u;
    if (get_uuid && get_uuid(&u, B->g.dev) == CUDA_SUCCESS && !B->g.info.uuid[0])
        kf_nvml_format_uuid((const unsigned char *)u.bytes, B->g.info.uuid, sizeof B->g.info.uuid);
    B->fn_count = (CUresult(*)(unsigned *, CUmodule))dlsym(B->g.cu.lib, "cuModuleGetFunctionCount");
    B->fn_enum = (CUresult(*)(CUfunction *, unsigned, CUmodule))dlsym(B->g.cu.lib, "cuModuleEnumerateFunctions");
    B->fn_name = (CUresult(*)(const char **, CUfunction))dlsym(B->g.cu.lib, "cuFuncGetName");
    B->fn_param = (CUresult(*)(CUfunction, size_t, size_t *, size_t *))dlsym(B->g.cu.lib, "cuFuncGetParamInfo");
    kf_trace("gpu %d: NVML", index);
    bench_nvml_open(&B->nv, B->g.info.uuid, index);
    if (B->nv.ok)
        B->smp = kf_nvml_sampler_start(&B->nv.d, 0.02);
    kf_trace("gpu %d: NVML open", index);
    *dev = B->g.info;
    return B;
fail:
    bench_free(B);
    return NULL;
}

void bench_free(bench *B)
{
    if (!B)
        return;
    kf_cu *cu = &B->g.cu;
    if (B->g.have_ctx) {
        cu->cuCtxSynchronize();
        if (B->flush)
            cu->cuMemFree(B->flush);
        for (int k = 0; k < KF_MAX_BUFFERS; k++) {
            if (B->d_work[k])
                cu->cuMemFree(B->d_work[k]);
            if (B->d_keep[k])
                cu->cuMemFree(B->d_keep[k]);
            for (int i = 0; i < KF_INPUTS; i++) {
                if (B->in[i].d[k])
                    cu->cuMemFree(B->in[i].d[k]);
                if (B->in[i].dref[k])
                    cu->cuMemFree(B->in[i].dref[k]);
                for (int j = 0; j < 2; j++)
                    if (B->in[i].dinit[k][j])
                        cu->cuMemFree(B->in[i].dinit[k][j]);
            }
        }
        if (B->oc_state == 1)
            outcheck_close(&B->oc);
        for (int i = 0; i < 2 * KF_BATCH; i++)
            if (B->ev[i])
                cu->cuEventDestroy(B->ev[i]);
        for (int i = 0; i < 2; i++) {
            if (B->stage[i])
                cu->cuMemFreeHost(B->stage[i]);
            if (B->stage_ev[i])
                cu->cuEventDestroy(B->stage_ev[i]);
        }
        if (B->stream)
            cu->cuStreamDestroy(B->stream);
    }
    gpu_close(&B->g);
    kf_nvml_sampler_stop(B->smp);
    bench_nvml_close(&B->nv);
    free(B->times);
    for (int i = 0; i < KF_INPUTS; i++) {
        data_free(&B->in[i].data);
        for (int k = 0; k < KF_MAX_BUFFERS; k++)
            leave_free(&B->in[i].leave[k]);
    }
    for (int k = 0; k < KF_MAX_BUFFERS; k++) {
        free(B->got[k]);
        free(B->got2[k]);
    }
    free(B->scratch_host);
    free(B);
}

int bench_case(bench *B, const kf_variant *v, const kf_shape *shape, const kf_bench *b, const void *cubin,
               size_t cubin_len, const char *names, kf_result *r)
{
    (void)cubin_len;
    gcase q = {.B = B, .c = {.r = r, .B = B, .last = CUDA_SUCCESS}, .v = v, .shape = shape, .b = b, .names = names};
    r->v = *v;
    r->shape = *shape;
    r->bench = *b;
    r->status = KF_ST_OK;
    r->message[0] = '\0';
    /* the case's parts: setup_ms (module, plan, buffers), verify_ms, bench_ms */
    double tc = kf_now();
    if (load_and_plan(&q, cubin) && prepare_buffers(&q)) {
        r->setup_ms = 1e3 * (kf_now() - tc);
        tc = kf_now();
        bool ok = verify_exact(&q) && verify_accuracy(&q);
        r->verify_ms = 1e3 * (kf_now() - tc);
        tc = kf_now();
        if (ok && r->status == KF_ST_OK && !abandon_checked(&q)) {
            time_case(&q);
            r->bench_ms = 1e3 * (kf_now() - tc);
        }
    } else {
        r->setup_ms = 1e3 * (kf_now() - tc);
    }
    kf_nvml_sampler_cancel(B->smp);
    if (q.c.last != CUDA_SUCCESS && gpu_error_is_sticky(q.c.last))
        return -1;
    if (q.mod)
        B->g.cu.cuModuleUnload(q.mod);
    return 0;
}
