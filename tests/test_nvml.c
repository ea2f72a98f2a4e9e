/*
 * test_nvml.c -- src/nvml.c without a GPU: the clock-reason text and the
 * throttled verdict, UUID formatting, a machine without NVML
 * (KFORGE_NVML_LIB=/nonexistent), and a scripted fake NVML
 * (tests/fake_nvml.c, built by the Makefile next to this binary) for
 * opening, devices, readings and the window's clock, reason and energy
 * arithmetic.
 *
 *   make build/tests/test_nvml && build/tests/test_nvml
 *
 * Without the fake libraries next to the binary, the fake-NVML tests are
 * skipped with a SKIP line.
 */
#include <check.h>
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "nvml.h"
#include "util.h"

static char fake_old[PATH_MAX + 32], fake_new[PATH_MAX + 32];

/* The fake's controls, from a handle of the same library kf_nvml_open loads. */
typedef struct {
    void *lib;
    void (*reset)(void);
    void (*script)(const char *, const unsigned long long *, int);
    void (*fail_with)(const char *, int);
    int (*calls)(const char *);
} fake;

static fake fake_load(const char *path)
{
    fake f;
    memset(&f, 0, sizeof f);
    f.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(f.lib, "dlopen %s: %s", path, dlerror());
    f.reset = (__typeof__(f.reset))dlsym(f.lib, "fake_nvml_reset");
    f.script = (__typeof__(f.script))dlsym(f.lib, "fake_nvml_script");
    f.fail_with = (__typeof__(f.fail_with))dlsym(f.lib, "fake_nvml_fail");
    f.calls = (__typeof__(f.calls))dlsym(f.lib, "fake_nvml_calls");
    ck_assert(f.reset && f.script && f.fail_with && f.calls);
    f.reset();
    setenv(KF_NVML_LIB_ENV, path, 1);
    return f;
}

static void fake_free(fake *f)
{
    unsetenv(KF_NVML_LIB_ENV);
    dlclose(f->lib);
}

#define SCRIPT(f, what, ...)                                                                   \
    do {                                                                                       \
        const unsigned long long v_[] = {__VA_ARGS__};                                         \
        (f).script(what, v_, (int)(sizeof v_ / sizeof v_[0]));                                 \
    } while (0)

/* A GPU under load: every query answers with one value. */
static void script_steady(fake f)
{
    SCRIPT(f, "sm", 1980);
    SCRIPT(f, "mem", 2619);
    SCRIPT(f, "max_sm", 1980);
    SCRIPT(f, "temp", 45);
    SCRIPT(f, "power", 312500);
    SCRIPT(f, "energy", 1000000);
    SCRIPT(f, "reasons", 0);
}

static void open_dev(kf_nvml *m, kf_nvml_dev *d)
{
    char err[256] = "";
    ck_assert_msg(kf_nvml_open(m, err, sizeof err) == 0, "open: %s", err);
    ck_assert_msg(kf_nvml_device(m, NULL, 0, d, err, sizeof err) == 0, "device: %s", err);
}

// ----------------------------------------------------------------------------
// Reasons, verdict, UUIDs

START_TEST(text_none_and_single)
{
    char buf[256];
    ck_assert_str_eq(kf_nvml_throttle_text(0, buf, sizeof buf), "none");
    ck_assert_str_eq(kf_nvml_throttle_text(KF_NVML_REASON_SW_POWER_CAP, buf, sizeof buf), "sw power cap");
    ck_assert_str_eq(kf_nvml_throttle_text(KF_NVML_REASON_GPU_IDLE, buf, sizeof buf), "gpu idle");
    ck_assert_str_eq(kf_nvml_throttle_text(KF_NVML_REASON_HW_POWER_BRAKE, buf, sizeof buf),
                     "hw power brake slowdown");
}
END_TEST

START_TEST(text_several_in_bit_order)
{
    char buf[256];
    unsigned long long r = KF_NVML_REASON_HW_THERMAL | KF_NVML_REASON_SW_POWER_CAP | KF_NVML_REASON_HW_SLOWDOWN;
    ck_assert_str_eq(kf_nvml_throttle_text(r, buf, sizeof buf), "sw power cap, hw slowdown, hw thermal slowdown");
    r = KF_NVML_REASON_APP_CLOCKS | KF_NVML_REASON_SYNC_BOOST | KF_NVML_REASON_SW_THERMAL |
        KF_NVML_REASON_DISPLAY_CLOCKS;
    ck_assert_str_eq(kf_nvml_throttle_text(r, buf, sizeof buf),
                     "applications clocks setting, sync boost, sw thermal slowdown, display clock setting");
}
END_TEST

START_TEST(text_unknown_bits)
{
    char buf[256];
    ck_assert_str_eq(kf_nvml_throttle_text(0x200, buf, sizeof buf), "other 0x200");
    ck_assert_str_eq(kf_nvml_throttle_text(0x4 | 0x800 | 0x1000, buf, sizeof buf), "sw power cap, other 0x1800");
}
END_TEST

START_TEST(text_truncates_safely)
{
    char buf[12];
    memset(buf, 'x', sizeof buf);
    const char *s = kf_nvml_throttle_text(0x1ff, buf, sizeof buf);
    ck_assert_ptr_eq(s, buf);
    ck_assert_int_lt(strlen(buf), sizeof buf);
    ck_assert_int_eq(strncmp(buf, "gpu idle", 8), 0);
    char one[1] = {'x'};
    kf_nvml_throttle_text(0x4, one, sizeof one);
    ck_assert_int_eq(one[0], '\0');
    ck_assert_ptr_null(kf_nvml_throttle_text(0x4, NULL, 0));
}
END_TEST

START_TEST(verdict_rule)
{
    /* no reason, and the two benign ones, alone or together: not throttled */
    ck_assert(!kf_nvml_throttled(0));
    ck_assert(!kf_nvml_throttled(KF_NVML_REASON_GPU_IDLE));
    ck_assert(!kf_nvml_throttled(KF_NVML_REASON_APP_CLOCKS));
    ck_assert(!kf_nvml_throttled(KF_NVML_REASON_GPU_IDLE | KF_NVML_REASON_APP_CLOCKS));
    /* every other named reason is a clock limit */
    const unsigned long long limits[] = {KF_NVML_REASON_SW_POWER_CAP, KF_NVML_REASON_HW_SLOWDOWN,
                                         KF_NVML_REASON_SYNC_BOOST, KF_NVML_REASON_SW_THERMAL,
                                         KF_NVML_REASON_HW_THERMAL, KF_NVML_REASON_HW_POWER_BRAKE,
                                         KF_NVML_REASON_DISPLAY_CLOCKS};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        ck_assert(kf_nvml_throttled(limits[i]));
        ck_assert(kf_nvml_throttled(limits[i] | KF_NVML_REASON_GPU_IDLE | KF_NVML_REASON_APP_CLOCKS));
    }
    /* so is a bit newer than this code */
    ck_assert(kf_nvml_throttled(0x200));
    ck_assert(kf_nvml_throttled(1ULL << 63));
}
END_TEST

START_TEST(uuid_format)
{
    const unsigned char b[16] = {0x5c, 0xf0, 0xf7, 0xe5, 0x1e, 0x3b, 0x4f, 0xf9,
                                 0x8e, 0x0c, 0xf5, 0xc2, 0xa4, 0xf0, 0xb6, 0xb8};
    char buf[64];
    kf_nvml_format_uuid(b, buf, sizeof buf);
    ck_assert_str_eq(buf, "GPU-5cf0f7e5-1e3b-4ff9-8e0c-f5c2a4f0b6b8");
    char small[8];
    kf_nvml_format_uuid(b, small, sizeof small);
    ck_assert_str_eq(small, "GPU-5cf");
}
END_TEST

START_TEST(resolution_hint)
{
    double h = kf_nvml_energy_resolution_hint();
    ck_assert(h > 0 && h <= 0.1);
    /* the minimum window is ten counter steps: at most ~10% error */
    ck_assert(KF_NVML_MIN_WINDOW_S >= 10 * h);
}
END_TEST

// ----------------------------------------------------------------------------
// No NVML

START_TEST(open_missing_library)
{
    setenv(KF_NVML_LIB_ENV, "/nonexistent/libnvidia-ml.so.1", 1);
    kf_nvml m;
    memset(&m, 0xab, sizeof m);
    char err[512] = "";
    ck_assert_int_eq(kf_nvml_open(&m, err, sizeof err), -1);
    ck_assert_msg(strncmp(err, "NVML not available: ", 20) == 0, "err: %s", err);
    ck_assert_msg(strstr(err, "/nonexistent/libnvidia-ml.so.1"), "err: %s", err);
    ck_assert_ptr_null(m.lib);
    kf_nvml_close(&m); /* harmless on a failed open */
    kf_nvml_close(NULL);

    /* a device of an NVML that is not open */
    kf_nvml_dev d;
    ck_assert_int_eq(kf_nvml_device(&m, NULL, 0, &d, err, sizeof err), -1);
    kf_nvml_reading s;
    ck_assert_int_eq(kf_nvml_sample(&d, &s, err, sizeof err), -1);
    ck_assert_uint_eq(s.have, 0);
    unsetenv(KF_NVML_LIB_ENV);
}
END_TEST

START_TEST(open_library_without_nvml)
{
    /* a library that loads but is not NVML (libm has none of its symbols) */
    setenv(KF_NVML_LIB_ENV, "libm.so.6", 1);
    kf_nvml m;
    char err[512] = "";
    ck_assert_int_eq(kf_nvml_open(&m, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "NVML not available: libm.so.6 lacks nvmlInit_v2"), "err: %s", err);
    ck_assert_ptr_null(m.lib);
    unsetenv(KF_NVML_LIB_ENV);
}
END_TEST

// ----------------------------------------------------------------------------
// The fake NVML

START_TEST(fake_open_close)
{
    fake f = fake_load(fake_old);
    kf_nvml m;
    char err[256] = "";
    ck_assert_msg(kf_nvml_open(&m, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(f.calls("init"), 1);
    ck_assert_str_eq(m.reasons_name, "nvmlDeviceGetCurrentClocksThrottleReasons");
    kf_nvml_close(&m);
    ck_assert_int_eq(f.calls("shutdown"), 1);
    ck_assert_ptr_null(m.lib);
    kf_nvml_close(&m); /* twice: no second shutdown */
    ck_assert_int_eq(f.calls("shutdown"), 1);
    fake_free(&f);
}
END_TEST

START_TEST(fake_init_fails)
{
    fake f = fake_load(fake_old);
    f.fail_with("init", 9); /* NVML_ERROR_DRIVER_NOT_LOADED */
    kf_nvml m;
    char err[256] = "";
    ck_assert_int_eq(kf_nvml_open(&m, err, sizeof err), -1);
    ck_assert_str_eq(err, "NVML not available: nvmlInit_v2: Driver Not Loaded");
    ck_assert_ptr_null(m.lib);
    ck_assert_int_eq(f.calls("shutdown"), 0);
    fake_free(&f);
}
END_TEST

START_TEST(fake_devices)
{
    fake f = fake_load(fake_old);
    kf_nvml m;
    kf_nvml_dev d;
    char err[256] = "";
    ck_assert_int_eq(kf_nvml_open(&m, err, sizeof err), 0);

    ck_assert_msg(kf_nvml_device(&m, NULL, 1, &d, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(d.uuid, "GPU-55555555-6666-7777-8888-999999999999");
    ck_assert_ptr_eq(d.nvml, &m);

    ck_assert_int_eq(kf_nvml_device(&m, "GPU-00000000-1111-2222-3333-444444444444", 7, &d, err, sizeof err), 0);
    ck_assert_str_eq(d.uuid, "GPU-00000000-1111-2222-3333-444444444444");

    ck_assert_int_eq(kf_nvml_device(&m, "GPU-nope", 0, &d, err, sizeof err), -1);
    ck_assert_str_eq(err, "NVML: no device with UUID GPU-nope (Not Found)");
    ck_assert_int_eq(kf_nvml_device(&m, NULL, 2, &d, err, sizeof err), -1);
    ck_assert_str_eq(err, "NVML: no device 2 (Invalid Argument)");
    ck_assert_int_eq(kf_nvml_device(&m, NULL, -1, &d, err, sizeof err), -1);
    kf_nvml_close(&m);
    fake_free(&f);
}
END_TEST

START_TEST(fake_sample_everything)
{
    fake f = fake_load(fake_old);
    script_steady(f);
    SCRIPT(f, "reasons", KF_NVML_REASON_SW_POWER_CAP);
    SCRIPT(f, "energy", 123456789012ULL);
    kf_nvml m;
    kf_nvml_dev d;
    open_dev(&m, &d);
    kf_nvml_reading s;
    char err[256] = "";
    ck_assert_msg(kf_nvml_sample(&d, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(s.have, KF_NVML_HAVE_SM_CLOCK | KF_NVML_HAVE_MEM_CLOCK | KF_NVML_HAVE_MAX_SM_CLOCK |
                                  KF_NVML_HAVE_TEMP | KF_NVML_HAVE_POWER | KF_NVML_HAVE_ENERGY |
                                  KF_NVML_HAVE_REASONS);
    ck_assert_uint_eq(s.sm_mhz, 1980);
    ck_assert_uint_eq(s.mem_mhz, 2619);
    ck_assert_uint_eq(s.max_sm_mhz, 1980);
    ck_assert_uint_eq(s.temp_c, 45);
    ck_assert_double_eq_tol(s.power_w, 312.5, 1e-12);
    ck_assert(s.energy_mj == 123456789012ULL);
    ck_assert(s.reasons == KF_NVML_REASON_SW_POWER_CAP);
    kf_nvml_close(&m);
    fake_free(&f);
}
END_TEST

START_TEST(fake_sample_not_supported)
{
    /* an older GPU: no energy counter, no power reading; not an error */
    fake f = fake_load(fake_old);
    script_steady(f);
    f.fail_with("energy", 3); /* NVML_ERROR_NOT_SUPPORTED */
    f.fail_with("power", 3);
    kf_nvml m;
    kf_nvml_dev d;
    open_dev(&m, &d);
    kf_nvml_reading s;
    char err[256] = "";
    ck_assert_int_eq(kf_nvml_sample(&d, &s, err, sizeof err), 0);
    ck_assert_str_eq(err, "");
    ck_assert(!(s.have & (KF_NVML_HAVE_ENERGY | KF_NVML_HAVE_POWER)));
    ck_assert(s.have & KF_NVML_HAVE_SM_CLOCK);
    ck_assert(s.energy_mj == 0 && s.power_w == 0);
    kf_nvml_close(&m);
    fake_free(&f);
}
END_TEST

START_TEST(fake_sample_gpu_lost)
{
    fake f = fake_load(fake_old);
    script_steady(f);
    f.fail_with("power", 15); /* NVML_ERROR_GPU_IS_LOST */
    f.fail_with("reasons", 15);
    kf_nvml m;
    kf_nvml_dev d;
    open_dev(&m, &d);
    kf_nvml_reading s;
    char err[256] = "";
    ck_assert_int_eq(kf_nvml_sample(&d, &s, err, sizeof err), -1);
    ck_assert_str_eq(err, "NVML: nvmlDeviceGetPowerUsage: GPU is lost"); /* the first failure */
    /* what could be read still is */
    ck_assert(s.have & KF_NVML_HAVE_SM_CLOCK && s.have & KF_NVML_HAVE_ENERGY);
    ck_assert(!(s.have & (KF_NVML_HAVE_POWER | KF_NVML_HAVE_REASONS)));
    kf_nvml_close(&m);
    fake_free(&f);
}
END_TEST

START_TEST(fake_new_reason_name)
{
    fake f = fake_load(fake_new);
    script_steady(f);
    SCRIPT(f, "reasons", KF_NVML_REASON_HW_THERMAL);
    kf_nvml m;
    kf_nvml_dev d;
    open_dev(&m, &d);
    ck_assert_str_eq(m.reasons_name, "nvmlDeviceGetCurrentClocksEventReasons");
    kf_nvml_reading s;
    char err[256] = "";
    ck_assert_int_eq(kf_nvml_sample(&d, &s, err, sizeof err), 0);
    ck_assert(s.reasons == KF_NVML_REASON_HW_THERMAL);
    ck_assert_int_eq(f.calls("reasons"), 1);
    kf_nvml_close(&m);
    fake_free(&f);
}
END_TEST

/* begin (idle GPU), two samples under load, end. */
static kf_nvml_window_result run_window(fake f, double seconds)
{
    SCRIPT(f, "sm", 345, 1980, 1755, 1830);
    SCRIPT(f, "mem", 2619);
    SCRIPT(f, "max_sm", 1980);
    SCRIPT(f, "temp", 31, 52, 58, 57);
    SCRIPT(f, "power", 70000, 650000);
    SCRIPT(f, "energy", 5000000, 5400000, 5900000, 6312345);
    SCRIPT(f, "reasons", KF_NVML_REASON_GPU_IDLE, 0, KF_NVML_REASON_SW_POWER_CAP, KF_NVML_REASON_SW_THERMAL);
    kf_nvml m;
    kf_nvml_dev d;
    open_dev(&m, &d);
    kf_nvml_window w;
    kf_nvml_window_result r;
    char err[256] = "";
    ck_assert_int_eq(kf_nvml_window_begin(&w, &d, 100.0, err, sizeof err), 0);
    ck_assert_int_eq(kf_nvml_window_sample(&w, err, sizeof err), 0);
    ck_assert_int_eq(kf_nvml_window_sample(&w, err, sizeof err), 0);
    ck_assert_int_eq(kf_nvml_window_end(&w, 100.0 + seconds, &r, err, sizeof err), 0);
    kf_nvml_close(&m);
    return r;
}

START_TEST(fake_window_arithmetic)
{
    fake f = fake_load(fake_old);
    kf_nvml_window_result r = run_window(f, 2.5);
    ck_assert_double_eq_tol(r.seconds, 2.5, 1e-12);
    ck_assert_int_eq(r.samples, 3);
    /* the idle begin reading (345 MHz, 31 C, "gpu idle") is not counted */
    ck_assert_uint_eq(r.min_sm_mhz, 1755);
    ck_assert_uint_eq(r.max_sm_mhz, 1980);
    ck_assert_uint_eq(r.max_temp_c, 58);
    ck_assert(r.have_reasons);
    ck_assert(r.reasons == (KF_NVML_REASON_SW_POWER_CAP | KF_NVML_REASON_SW_THERMAL));
    ck_assert(r.throttled);
    /* 6312345 - 5000000 mJ over 2.5 s */
    ck_assert(r.energy_valid);
    ck_assert_str_eq(r.energy_note, "");
    ck_assert_double_eq_tol(r.energy_j, 1312.345, 1e-9);
    ck_assert_double_eq_tol(r.power_w, 1312.345 / 2.5, 1e-9);
    fake_free(&f);
}
END_TEST

START_TEST(fake_window_too_short)
{
    fake f = fake_load(fake_old);
    kf_nvml_window_result r = run_window(f, 0.25);
    ck_assert(!r.energy_valid);
    ck_assert_double_eq_tol(r.energy_j, 1312.345, 1e-9); /* the difference is still there ... */
    ck_assert(r.power_w == 0);                           /* ... but no power from it */
    ck_assert_msg(strstr(r.energy_note, "shorter than 1 s"), "note: %s", r.energy_note);
    ck_assert_uint_eq(r.min_sm_mhz, 1755); /* clocks do not depend on the length */
    fake_free(&f);
}
END_TEST

START_TEST(fake_window_exactly_minimum)
{
    fake f = fake_load(fake_old);
    kf_nvml_window_result r = run_window(f, KF_NVML_MIN_WINDOW_S);
    ck_assert(r.energy_valid);
    ck_assert_double_eq_tol(r.power_w, 1312.345 / KF_NVML_MIN_WINDOW_S, 1e-9);
    fake_free(&f);
}
END_TEST

START_TEST(fake_window_counter_goes_back)
{
    fake f = fake_load(fake_old);
    script_steady(f);
    SCRIPT(f, "energy", 9000000, 100);
    kf_nvml m;
    kf_nvml_dev d;
    open_dev(&m, &d);
    kf_nvml_window w;
    kf_nvml_window_result r;
    char err[256] = "";
    kf_nvml_window_begin(&w, &d, 0, err, sizeof err);
    kf_nvml_window_end(&w, 5, &r, err, sizeof err);
    ck_assert(!r.energy_valid);
    ck_assert(r.energy_j == 0 && r.power_w == 0);
    ck_assert_msg(strstr(r.energy_note, "went back"), "note: %s", r.energy_note);
    ck_assert_int_eq(r.samples, 1);
    ck_assert(!r.throttled);
    kf_nvml_close(&m);
    fake_free(&f);
}
END_TEST

START_TEST(fake_window_no_counter)
{
    fake f = fake_load(fake_old);
    script_steady(f);
    f.fail_with("energy", 3);
    f.fail_with("reasons", 3);
    f.fail_with("sm", 3);
    kf_nvml m;
    kf_nvml_dev d;
    open_dev(&m, &d);
    kf_nvml_window w;
    kf_nvml_window_result r;
    char err[256] = "";
    ck_assert_int_eq(kf_nvml_window_begin(&w, &d, 0, err, sizeof err), 0);
    ck_assert_int_eq(kf_nvml_window_end(&w, 5, &r, err, sizeof err), 0);
    ck_assert(!r.energy_valid && r.energy_j == 0);
    ck_assert_msg(strstr(r.energy_note, "no energy counter"), "note: %s", r.energy_note);
    ck_assert(!r.have_reasons && !r.throttled);
    ck_assert_uint_eq(r.min_sm_mhz, 0);
    ck_assert_uint_eq(r.max_sm_mhz, 0);
    ck_assert_uint_eq(r.max_temp_c, 45);
    kf_nvml_close(&m);
    fake_free(&f);
}
END_TEST

// ----------------------------------------------------------------------------
// What a case records (exec/timing.c, issue 14)

START_TEST(energy_runs_rule)
{
    ck_assert_int_eq(bench_energy_runs(0.5, 1.0), 2);
    ck_assert_int_eq(bench_energy_runs(0.3, 1.0), 4);
    ck_assert_int_eq(bench_energy_runs(2.0, 1.0), 1);     /* one run longer than the window */
    ck_assert_int_eq(bench_energy_runs(10e-6, 1.0), 100000);
    ck_assert_int_eq(bench_energy_runs(0, 1.0), 1);
    ck_assert_int_eq(bench_energy_runs(NAN, 1.0), 1);
    ck_assert_int_eq(bench_energy_runs(1e-12, 1.0), 100000000); /* capped */
}
END_TEST

/* The energy window's schedule: whatever the first guess of a run's time
 * (the timed repetitions, with L2 flushes, are often slower than runs back
 * to back), the window lasts at least the minimum and not much more.  On an
 * H100 the first version ended windows after 0.97..0.98 s for n = 2^20
 * (8.3 us timed, faster back to back) and recorded no energy. */
START_TEST(energy_loop_schedule)
{
    static const struct { double guess, truth; } cases[] = {
        {8.3e-6, 5.5e-6},   /* back to back faster: the H100 case */
        {8.3e-6, 8.3e-6},
        {5e-6, 8e-6},       /* slower than the guess */
        {1e-4, 3e-5},
        {0.3, 0.2},         /* runs of a good part of the window */
        {1e-7, 2e-7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double w = 0;
        long runs = bench_energy_simulate(cases[i].guess, cases[i].truth, 1.0, &w);
        ck_assert_msg(runs >= 2, "[%zu] runs %ld", i, runs);
        ck_assert_double_eq_tol(w, runs * cases[i].truth, 1e-9 * w + 1e-12);
        ck_assert_msg(w >= 1.0, "[%zu] window %.6f s < 1 s (guess %g, truth %g)", i, w, cases[i].guess,
                      cases[i].truth);
        /* at most two chunks (50 ms at the guessed rate, then at the seen
         * one) beyond the minimum, or two runs when one run is long */
        double chunk = 0.05 * (cases[i].truth > cases[i].guess ? cases[i].truth / cases[i].guess : 1);
        double over = 2 * (chunk > cases[i].truth ? chunk : cases[i].truth);
        ck_assert_msg(w <= 1.0 + over + 1e-9, "[%zu] window %.6f s, more than %.3f s over", i, w, over);
    }
    /* one run longer than the window: two runs (one in flight when the first ends) */
    double w = 0;
    ck_assert_int_eq(bench_energy_simulate(2.0, 2.0, 1.0, &w), 2);
    ck_assert_double_eq_tol(w, 4.0, 1e-9);
}
END_TEST

START_TEST(bench_without_nvml)
{
    setenv(KF_NVML_LIB_ENV, "/nonexistent/libnvidia-ml.so.1", 1);
    bench_nvml nv;
    bench_nvml_open(&nv, NULL, 0);
    ck_assert(!nv.ok);
    ck_assert_msg(strncmp(nv.note, "NVML not available: ", 20) == 0, "%s", nv.note);
    /* the fake GPU's path: a note in the result, no figures */
    kf_result r;
    memset(&r, 0, sizeof r);
    r.stats.median_ms = 0.01;
    r.stats.reps = 10;
    kf_bench b;
    kf_bench_defaults(&b);
    b.energy = true;
    bench_nvml_fake(&nv, &b, &r);
    ck_assert(!r.nvml);
    ck_assert_str_eq(r.nvml_note, nv.note);
    ck_assert_int_eq(r.sm_mhz_min, 0);
    ck_assert(r.energy_j == 0);
    bench_nvml_close(&nv);
    unsetenv(KF_NVML_LIB_ENV);
}
END_TEST

START_TEST(fake_bench_by_uuid_and_index)
{
    fake f = fake_load(fake_old);
    bench_nvml nv;
    bench_nvml_open(&nv, "GPU-55555555-6666-7777-8888-999999999999", 0);
    ck_assert_msg(nv.ok, "%s", nv.note);
    ck_assert_str_eq(nv.d.uuid, "GPU-55555555-6666-7777-8888-999999999999"); /* the UUID wins over the index */
    bench_nvml_close(&nv);
    bench_nvml_open(&nv, "", 1);
    ck_assert(nv.ok);
    ck_assert_str_eq(nv.d.uuid, "GPU-55555555-6666-7777-8888-999999999999");
    bench_nvml_close(&nv);
    bench_nvml_open(&nv, "GPU-deadbeef-0000-0000-0000-000000000000", 0);
    ck_assert(!nv.ok);
    ck_assert_msg(strstr(nv.note, "NVML not available") && strstr(nv.note, "deadbeef"), "%s", nv.note);
    ck_assert_int_eq(f.calls("shutdown"), 2 + 1); /* closed after the failed lookup too */
    fake_free(&f);
}
END_TEST

/* Steady clocks at the maximum, no reason: not throttled; the energy window
 * gives energy per run and the average power. */
START_TEST(fake_record_steady_with_energy)
{
    fake f = fake_load(fake_old);
    script_steady(f);
    SCRIPT(f, "energy", 1000000, 1000000, 1000000, 1000000, /* the timed window: begin, sample, end, last */
           1000000, 1000500);                               /* the energy window: +500 mJ */
    bench_nvml nv;
    bench_nvml_open(&nv, NULL, 0);
    ck_assert(nv.ok);
    kf_result r;
    memset(&r, 0, sizeof r);
    r.stats.median_ms = 0.1;
    r.stats.reps = 20;
    kf_bench b;
    kf_bench_defaults(&b);
    b.energy = true;
    bench_nvml_fake(&nv, &b, &r);
    ck_assert(r.nvml);
    ck_assert_str_eq(r.nvml_note, "");
    ck_assert_int_eq(r.sm_mhz_min, 1980);
    ck_assert_int_eq(r.sm_mhz_max, 1980);
    ck_assert_int_eq(r.sm_mhz_limit, 1980);
    ck_assert_int_eq(r.mem_mhz, 2619);
    ck_assert_int_eq(r.temp_c, 45);
    ck_assert(!r.throttled);
    ck_assert_str_eq(r.throttle_reasons, "none");
    /* 0.1 ms a run, chunks of 50 ms: the window ends with the chunk in
     * flight after 1 s has passed, at most two chunks later */
    ck_assert_double_eq_tol(r.energy_window_s, r.energy_runs * 1e-4, 1e-9);
    ck_assert_msg(r.energy_window_s >= 1.0 && r.energy_window_s <= 1.1 + 1e-9, "window %g s", r.energy_window_s);
    ck_assert_double_eq_tol(r.energy_j, 0.5 / r.energy_runs, 1e-15);
    ck_assert_double_eq_tol(r.power_w, 0.5 / r.energy_window_s, 1e-9);
    bench_nvml_close(&nv);
    fake_free(&f);
}
END_TEST

/* A clock drop and a power cap in the timed window: throttled, the range of
 * clocks, and no energy figure without bench.energy (NVML's power reading
 * instead). */
START_TEST(fake_record_throttled)
{
    fake f = fake_load(fake_old);
    script_steady(f);
    SCRIPT(f, "sm", 210, 1980, 1755, 1980);                 /* begin (idle: not counted), sample, end, last */
    SCRIPT(f, "reasons", KF_NVML_REASON_GPU_IDLE, 0, KF_NVML_REASON_SW_POWER_CAP, 0);
    SCRIPT(f, "temp", 30, 61, 64, 50);
    bench_nvml nv;
    bench_nvml_open(&nv, NULL, 0);
    kf_result r;
    memset(&r, 0, sizeof r);
    r.stats.median_ms = 0.1;
    r.stats.reps = 20;
    kf_bench b;
    kf_bench_defaults(&b);
    bench_nvml_fake(&nv, &b, &r);
    ck_assert_int_eq(r.sm_mhz_min, 1755);
    ck_assert_int_eq(r.sm_mhz_max, 1980);
    ck_assert_int_eq(r.temp_c, 64);
    ck_assert(r.throttled);
    ck_assert_str_eq(r.throttle_reasons, "sw power cap");
    ck_assert(r.energy_j == 0 && r.energy_runs == 0);
    ck_assert_double_eq_tol(r.power_w, 312.5, 1e-9);
    bench_nvml_close(&nv);
    fake_free(&f);
}
END_TEST

/* A counter that does not move, and a GPU without the counter: a note, no
 * energy; a failed case records nothing. */
START_TEST(fake_record_energy_notes)
{
    fake f = fake_load(fake_old);
    script_steady(f);
    bench_nvml nv;
    bench_nvml_open(&nv, NULL, 0);
    kf_result r;
    memset(&r, 0, sizeof r);
    r.stats.median_ms = 0.1;
    r.stats.reps = 20;
    kf_bench b;
    kf_bench_defaults(&b);
    b.energy = true;
    bench_nvml_fake(&nv, &b, &r); /* energy stays at 1000000 */
    ck_assert(r.energy_j == 0);
    ck_assert_msg(strstr(r.nvml_note, "no energy"), "%s", r.nvml_note);
    bench_nvml_close(&nv);

    f.reset();
    script_steady(f);
    f.fail_with("energy", 3); /* NOT_SUPPORTED: before Volta */
    bench_nvml_open(&nv, NULL, 0);
    memset(&r, 0, sizeof r);
    r.stats.median_ms = 0.1;
    r.stats.reps = 20;
    bench_nvml_fake(&nv, &b, &r);
    ck_assert(r.nvml && r.energy_j == 0);
    ck_assert_msg(strstr(r.nvml_note, "no energy counter"), "%s", r.nvml_note);
    ck_assert_int_eq(r.sm_mhz_min, 1980);

    memset(&r, 0, sizeof r);
    r.status = KF_ST_WRONG;
    bench_nvml_fake(&nv, &b, &r);
    ck_assert(!r.nvml && r.nvml_note[0] == '\0');
    bench_nvml_close(&nv);
    fake_free(&f);
}
END_TEST

// ----------------------------------------------------------------------------

/* The fake libraries sit next to this binary (build/tests/). */
static bool find_fakes(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return false;
    *slash = '\0';
    snprintf(fake_old, sizeof fake_old, "%s/libfakenvml.so", self);
    snprintf(fake_new, sizeof fake_new, "%s/libfakenvml-new.so", self);
    return access(fake_old, R_OK) == 0 && access(fake_new, R_OK) == 0;
}

/* The sampler reads NVML on its own thread only while a window is open:
 * several readings in a 30 ms window, one in a window shorter than a
 * reading, none while closed; the window's result is a timed window's. */
START_TEST(fake_sampler)
{
    fake f = fake_load(fake_old);
    script_steady(f);
    SCRIPT(f, "reasons", KF_NVML_REASON_SW_POWER_CAP);
    kf_nvml m;
    kf_nvml_dev d;
    open_dev(&m, &d);
    kf_nvml_sampler *S = kf_nvml_sampler_start(&d, 0.002);
    ck_assert_ptr_nonnull(S);
    usleep(20000);
    int c0 = f.calls("sm");
    ck_assert_int_eq(c0, 0);                        /* closed: no reading */

    kf_nvml_window_result r;
    kf_nvml_reading last;
    char err[256] = "";
    double t0 = kf_now();
    kf_nvml_sampler_open(S, t0);
    usleep(30000);
    ck_assert_msg(kf_nvml_sampler_close(S, kf_now(), &r, &last, err, sizeof err) == 0, "%s", err);
    ck_assert_int_ge(r.samples, 3);
    ck_assert_uint_eq(r.min_sm_mhz, 1980);
    ck_assert_uint_eq(r.max_sm_mhz, 1980);
    ck_assert_uint_eq(r.max_temp_c, 45);
    ck_assert(r.have_reasons && r.throttled);
    ck_assert(r.seconds >= 0.029 && r.seconds < 5);
    ck_assert_double_eq_tol(last.power_w, 312.5, 1e-12);
    ck_assert_uint_eq(last.mem_mhz, 2619);
    ck_assert(!r.energy_valid);                     /* energy needs a window's ends */
    ck_assert_int_eq(f.calls("max_sm"), 1);        /* the slow queries: once, */
    ck_assert_int_le(f.calls("energy"), 1);         /* not per reading */
    ck_assert_uint_eq(last.max_sm_mhz, 1980);

    kf_nvml_sampler_open(S, kf_now());              /* shorter than a reading */
    ck_assert_msg(kf_nvml_sampler_close(S, kf_now(), &r, &last, err, sizeof err) == 0, "%s", err);
    ck_assert_int_ge(r.samples, 1);
    ck_assert_uint_eq(last.sm_mhz, 1980);

    usleep(5000);
    int c1 = f.calls("sm");
    usleep(20000);
    ck_assert_int_eq(f.calls("sm"), c1);            /* closed again: idle */
    kf_nvml_sampler_open(S, kf_now());
    kf_nvml_sampler_cancel(S);
    kf_nvml_sampler_stop(S);
    kf_nvml_close(&m);
    fake_free(&f);
}
END_TEST

static Suite *nvml_suite(bool with_fake)
{
    Suite *s = suite_create("nvml");
    TCase *text = tcase_create("reasons");
    tcase_add_test(text, text_none_and_single);
    tcase_add_test(text, text_several_in_bit_order);
    tcase_add_test(text, text_unknown_bits);
    tcase_add_test(text, text_truncates_safely);
    tcase_add_test(text, verdict_rule);
    tcase_add_test(text, uuid_format);
    tcase_add_test(text, resolution_hint);
    suite_add_tcase(s, text);

    TCase *none = tcase_create("no-nvml");
    tcase_add_test(none, open_missing_library);
    tcase_add_test(none, open_library_without_nvml);
    tcase_add_test(none, bench_without_nvml);
    tcase_add_test(text, energy_runs_rule);
    tcase_add_test(text, energy_loop_schedule);
    suite_add_tcase(s, none);

    if (with_fake) {
        TCase *fk = tcase_create("fake-nvml");
        tcase_add_test(fk, fake_open_close);
        tcase_add_test(fk, fake_init_fails);
        tcase_add_test(fk, fake_devices);
        tcase_add_test(fk, fake_sample_everything);
        tcase_add_test(fk, fake_sample_not_supported);
        tcase_add_test(fk, fake_sample_gpu_lost);
        tcase_add_test(fk, fake_new_reason_name);
        tcase_add_test(fk, fake_window_arithmetic);
        tcase_add_test(fk, fake_window_too_short);
        tcase_add_test(fk, fake_window_exactly_minimum);
        tcase_add_test(fk, fake_window_counter_goes_back);
        tcase_add_test(fk, fake_window_no_counter);
        tcase_add_test(fk, fake_bench_by_uuid_and_index);
        tcase_add_test(fk, fake_record_steady_with_energy);
        tcase_add_test(fk, fake_record_throttled);
        tcase_add_test(fk, fake_record_energy_notes);
        tcase_add_test(fk, fake_sampler);
        suite_add_tcase(s, fk);
    }
    return s;
}


int main(void)
{
    bool with_fake = find_fakes();
    if (!with_fake)
        printf("SKIP: fake NVML tests: %s or %s not built (make builds them with the tests)\n", fake_old,
               fake_new);
    SRunner *sr = srunner_create(nvml_suite(with_fake));
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
