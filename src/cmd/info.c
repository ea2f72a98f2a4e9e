/*
 * info.c -- `kforge info`: the GPU's properties, driver and NVRTC versions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "rtc.h"
#include "util.h"
#include "worker.h"

static const char *const info_help =
    "usage: kforge info [--device N] [--format table|json]\n"
    "\n"
    "Prints the GPU's properties that matter for reductions: name, compute capability, SMs, L2,\n"
    "memory clock and bus width, theoretical DRAM bandwidth, driver and NVRTC versions.\n";

int cmd_info(int argc, char **argv)
{
    opts o;
    opts_init(&o);
    int pr = parse_opts(argc, argv, info_help, OPT_FORMAT | OPT_DEVICE, &o);
    if (pr != 0)
        return pr > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    int maj = 0, min = 0;
    bool nvrtc = rtc_version(&maj, &min) == 0;
    kf_device d;
    char err[1024];
    gpu_worker *w = worker_start(o.ro.device, false, &d, err, sizeof err);
    if (!w) {
        fprintf(stderr, "kforge: %s\n", err);
        if (nvrtc)
            fprintf(stderr, "kforge: NVRTC %d.%d is available (kforge gen and check --compile work)\n", maj, min);
        run_nodev_hint();
        return KF_EXIT_NODEV;
    }
    worker_free(w);
    char driver[32];
    kf_driver_text(d.driver_version, driver, sizeof driver);
    if (o.json_info) {
        strbuf b = {0};
        sb_append(&b, "{\"name\": ");
        sb_json_string(&b, d.name);
        sb_printf(&b, ", \"cc\": \"%d.%d\", \"sms\": %d, \"l2_bytes\": %lld, \"mem_bytes\": %lld, "
                      "\"mem_clock_khz\": %d, \"bus_width_bits\": %d, \"peak_gbps\": %.15g, ",
                  d.cc_major, d.cc_minor, d.sms, (long long)d.l2_bytes, (long long)d.mem_bytes, d.mem_clock_khz,
                  d.bus_width_bits, d.peak_gbps);
        sb_printf(&b, "\"sm_clock_khz\": %d, \"peak_gflops\": ", d.sm_clock_khz);
        if (d.peak_gflops > 0)
            sb_printf(&b, "%.15g, ", d.peak_gflops);
        else
            sb_append(&b, "null, ");
        sb_printf(&b, "\"max_threads_per_block\": %d, \"max_smem_per_block\": %d, \"driver\": \"%s\", "
                      "\"nvrtc\": \"%d.%d\"}\n",
                  d.max_threads_per_block, d.max_smem_per_block, driver, maj, min);
        char *s = sb_take(&b);
        fputs(s, stdout);
        free(s);
    } else {
        printf("device              %s\n", d.name);
        printf("compute capability  %d.%d (sm_%d%d)\n", d.cc_major, d.cc_minor, d.cc_major, d.cc_minor);
        printf("multiprocessors     %d\n", d.sms);
        printf("L2 cache            %.1f MiB\n", d.l2_bytes / 1048576.0);
        printf("memory              %.1f GiB\n", d.mem_bytes / 1073741824.0);
        printf("memory clock        %d MHz\n", d.mem_clock_khz / 1000);
        printf("memory bus          %d bits\n", d.bus_width_bits);
        printf("peak DRAM bandwidth %.1f GB/s (2 x clock x bus width)\n", d.peak_gbps);
        printf("SM clock            %d MHz (maximum)\n", d.sm_clock_khz / 1000);
        if (d.peak_gflops > 0)
            printf("peak FP32           %.0f GFLOP/s (SMs x SM clock x %d FP32 lanes x 2; no tensor cores)\n",
                   d.peak_gflops, kf_fp32_lanes(d.cc_major, d.cc_minor));
        else
            printf("peak FP32           not known for cc %d.%d (kforge knows the FP32 lanes of sm_60 to sm_12x)\n",
                   d.cc_major, d.cc_minor);
        printf("max threads/block   %d\n", d.max_threads_per_block);
        printf("max shared/block    %d bytes (opt-in)\n", d.max_smem_per_block);
        printf("driver (CUDA)       %s\n", driver);
        if (nvrtc)
            printf("NVRTC               %d.%d\n", maj, min);
        else
            printf("NVRTC               not usable\n");
    }
    return KF_EXIT_OK;
}

