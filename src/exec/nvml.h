/*
 * nvml.h -- SM and memory clocks, temperature, power, energy and the reasons
 * the clocks are held down, from NVML (libnvidia-ml.so.1).  Like libcuda,
 * NVML is opened at run time with dlopen and never linked: kforge builds and
 * runs without it, and a caller treats "NVML not available: ..." as a note
 * in its output, not as an error.
 *
 *     kf_nvml m;  kf_nvml_dev d;  kf_nvml_window w;  kf_nvml_window_result r;
 *     if (kf_nvml_open(&m, err, sizeof err) == 0 &&
 *         kf_nvml_device(&m, uuid, 0, &d, err, sizeof err) == 0) {
 *         kf_nvml_window_begin(&w, &d, kf_now(), err, sizeof err);
 *         for (...) { run a repetition; kf_nvml_window_sample(&w, err, sizeof err); }
 *         kf_nvml_window_end(&w, kf_now(), &r, err, sizeof err);
 *     }
 *     kf_nvml_close(&m);
 *
 * Environment: KFORGE_NVML_LIB=PATH loads PATH instead of libnvidia-ml.so.1
 * (the tests load a scripted fake, tests/fake_nvml.c, and simulate a machine
 * without NVML with KFORGE_NVML_LIB=/nonexistent).
 *
 * NVML numbers its devices in PCI order, CUDA by default fastest first, so
 * a device is best named by its UUID: kf_nvml_format_uuid turns the bytes of
 * cuDeviceGetUuid into NVML's text form.
 */
#ifndef KF_NVML_H
#define KF_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_NVML_LIB_ENV "KFORGE_NVML_LIB"
#define KF_NVML_LIB_DEFAULT "libnvidia-ml.so.1"

/* The clock-limit reason bits of nvmlDeviceGetCurrentClocksEventReasons
 * (named ...ThrottleReasons before driver R535); the values are NVML's. */
#define KF_NVML_REASON_GPU_IDLE       0x0001ULL /* nothing runs; clocks drop to idle */
#define KF_NVML_REASON_APP_CLOCKS     0x0002ULL /* clocks held at the applications clocks setting */
#define KF_NVML_REASON_SW_POWER_CAP   0x0004ULL /* software power capping lowers the clocks */
#define KF_NVML_REASON_HW_SLOWDOWN    0x0008ULL /* hardware slowdown (clocks /2 or more) */
#define KF_NVML_REASON_SYNC_BOOST     0x0010ULL /* held to the slowest GPU of a sync-boost group */
#define KF_NVML_REASON_SW_THERMAL     0x0020ULL /* software thermal slowdown */
#define KF_NVML_REASON_HW_THERMAL     0x0040ULL /* hardware thermal slowdown */
#define KF_NVML_REASON_HW_POWER_BRAKE 0x0080ULL /* external power brake (power supply) */
#define KF_NVML_REASON_DISPLAY_CLOCKS 0x0100ULL /* limited by the display clock setting */

/* The reasons that do not make a measurement suspect: the GPU was idle when
 * asked, or its clocks are where someone deliberately set them. */
#define KF_NVML_REASONS_BENIGN (KF_NVML_REASON_GPU_IDLE | KF_NVML_REASON_APP_CLOCKS)

/* The shortest window whose energy kf_nvml_window_end calls valid, in
 * seconds.  The counter advances in steps of about
 * kf_nvml_energy_resolution_hint() (0.1 s), so a difference of two reads is
 * off by up to one step's energy at each end; over 1 s that is at most about
 * 10% at constant power.  Shorter regions should be repeated until they last
 * this long. */
#define KF_NVML_MIN_WINDOW_S 1.0

/* NVML's nvmlDevice_t (nvml.h declares it with the same tag). */
typedef struct nvmlDevice_st *kf_nvml_handle;

/* An open NVML.  The function pointers are NULL for what this driver's
 * library lacks; the first six are always there once open. */
typedef struct {
    void *lib;                                           /* NULL when closed */
    int (*init)(void);                                   /* nvmlInit_v2 */
    int (*shutdown)(void);                               /* nvmlShutdown */
    const char *(*error_string)(int);                    /* nvmlErrorString */
    int (*by_index)(unsigned, kf_nvml_handle *);         /* nvmlDeviceGetHandleByIndex_v2 */
    int (*by_uuid)(const char *, kf_nvml_handle *);      /* nvmlDeviceGetHandleByUUID */
    int (*uuid)(kf_nvml_handle, char *, unsigned);       /* nvmlDeviceGetUUID */
    int (*clock)(kf_nvml_handle, int, unsigned *);       /* nvmlDeviceGetClockInfo (MHz) */
    int (*max_clock)(kf_nvml_handle, int, unsigned *);   /* nvmlDeviceGetMaxClockInfo (MHz) */
    int (*temperature)(kf_nvml_handle, int, unsigned *); /* nvmlDeviceGetTemperature (C) */
    int (*power)(kf_nvml_handle, unsigned *);            /* nvmlDeviceGetPowerUsage (mW) */
    int (*energy)(kf_nvml_handle, unsigned long long *); /* nvmlDeviceGetTotalEnergyConsumption (mJ) */
    int (*reasons)(kf_nvml_handle, unsigned long long *); /* ...ClocksEventReasons or ...ThrottleReasons */
    const char *reasons_name;                            /* which of the two was found */
} kf_nvml;

/* One GPU as NVML sees it.  Valid while its kf_nvml is open. */
typedef struct {
    const kf_nvml *nvml;
    kf_nvml_handle handle;
    char uuid[96];              /* "GPU-5cf0f7e5-1e3b-4ff9-8e0c-f5c2a4f0b6b8" */
} kf_nvml_dev;

/* What kf_nvml_sample read: the KF_NVML_HAVE_* bits of `have` say which
 * fields hold a value (the others are 0: not supported on this GPU, not
 * permitted, or missing from this driver's NVML). */
enum {
    KF_NVML_HAVE_SM_CLOCK = 1 << 0,
    KF_NVML_HAVE_MEM_CLOCK = 1 << 1,
    KF_NVML_HAVE_MAX_SM_CLOCK = 1 << 2,
    KF_NVML_HAVE_TEMP = 1 << 3,
    KF_NVML_HAVE_POWER = 1 << 4,
    KF_NVML_HAVE_ENERGY = 1 << 5,
    KF_NVML_HAVE_REASONS = 1 << 6,
};
typedef struct {
    unsigned have;
    unsigned sm_mhz, mem_mhz;   /* current clocks */
    unsigned max_sm_mhz;        /* the SM clock's maximum (boost) */
    unsigned temp_c;            /* GPU core temperature */
    double power_w;             /* board power (averaged over 1 s on Ampere and later, except GA100) */
    uint64_t energy_mj;         /* energy since the driver was loaded (Volta and later) */
    unsigned long long reasons; /* KF_NVML_REASON_* bits */
} kf_nvml_reading;

/* Loads NVML ($KFORGE_NVML_LIB, else libnvidia-ml.so.1), resolves its
 * functions and calls nvmlInit_v2.  0, or -1 with a message that begins
 * "NVML not available: " (callers print it as a note and go on without). */
int kf_nvml_open(kf_nvml *m, char *err, size_t errlen);

/* nvmlShutdown and dlclose; safe on a closed or zeroed kf_nvml. */
void kf_nvml_close(kf_nvml *m);

/* The device with this UUID ("GPU-..."), or when uuid_or_null is NULL the
 * one with this NVML index.  0, or -1 with a message. */
int kf_nvml_device(kf_nvml *m, const char *uuid_or_null, int index, kf_nvml_dev *d, char *err,
                   size_t errlen);

/* Reads everything kf_nvml_reading holds.  0 when every query answered or
 * said the GPU does not support it (see s->have); -1 when a query failed
 * otherwise (GPU lost, ...), with the first failure in err; the fields that
 * could be read are filled either way. */
int kf_nvml_sample(const kf_nvml_dev *d, kf_nvml_reading *s, char *err, size_t errlen);
/* kf_nvml_sample without the two slow queries (milliseconds each on an H200:
 * the maximum SM clock and the energy counter): clocks, temperature, power
 * and reasons, microseconds in all. */
int kf_nvml_sample_quick(const kf_nvml_dev *d, kf_nvml_reading *s, char *err, size_t errlen);

/* The active reasons as text: "none", or names joined by ", " ("sw power
 * cap, hw thermal slowdown"; unknown bits as "other 0x200").  Returns buf. */
const char *kf_nvml_throttle_text(unsigned long long reasons, char *buf, size_t len);

/* The verdict: true when any reason other than KF_NVML_REASONS_BENIGN (GPU
 * idle, applications clocks setting) is set.  Bits this code has no name for
 * count: NVML adds new limits over time (newer drivers report board limit
 * and reliability reasons), and they lower clocks too. */
bool kf_nvml_throttled(unsigned long long reasons);

/* The period, in seconds, at which NVML's total energy counter advances:
 * 0.1 (see nvml.c for the sources).  A hint, not a guarantee. */
double kf_nvml_energy_resolution_hint(void);

/* NVML's text form of a 16-byte UUID (as cuDeviceGetUuid gives it):
 * "GPU-" + 8-4-4-4-12 lowercase hex digits.  len >= 41. */
void kf_nvml_format_uuid(const unsigned char bytes[16], char *buf, size_t len);

// ----------------------------------------------------------------------------
// Sampling around a measured region

/* Between begin and end.  Zero-initialisation is not needed. */
typedef struct {
    const kf_nvml_dev *dev;
    double t0_s;
    kf_nvml_reading start;      /* the energy baseline */
    int samples;
    unsigned min_sm_mhz, max_sm_mhz, max_temp_c;
    unsigned long long reasons;
    bool have_sm, have_temp, have_reasons;
} kf_nvml_window;

typedef struct {
    double seconds;             /* end's now_s - begin's now_s */
    int samples;                /* readings folded in: the sample calls and end's */
    unsigned min_sm_mhz;        /* over those readings; 0 when none had the SM clock */
    unsigned max_sm_mhz;
    unsigned max_temp_c;        /* 0 when no reading had it */
    unsigned long long reasons; /* OR of those readings' reasons */
    bool have_reasons;          /* some reading had them */
    bool throttled;             /* kf_nvml_throttled(reasons) */
    double energy_j;            /* counter at end - counter at begin, when both were read and it did not go back */
    bool energy_valid;          /* that, and seconds >= KF_NVML_MIN_WINDOW_S */
    double power_w;             /* energy_j / seconds when energy_valid, else 0 */
    char energy_note[128];      /* why energy_valid is false ("" when it is true) */
} kf_nvml_window_result;

/* Starts a window at now_s (kf_now(); a parameter so that tests can script
 * time): reads the energy counter.  Call it before the region's first launch.
 * The begin reading's clocks and reasons are not counted: they describe the
 * GPU before the work reached it (idle clocks, "GPU idle").  -1 with a
 * message when the reading failed (see kf_nvml_sample); the window still
 * works, without what could not be read. */
int kf_nvml_window_begin(kf_nvml_window *w, const kf_nvml_dev *d, double now_s, char *err, size_t errlen);

/* Folds one reading into the window: call it while the region runs (between
 * repetitions).  Each call costs a few NVML queries (tens of microseconds). */
int kf_nvml_window_sample(kf_nvml_window *w, char *err, size_t errlen);

/* Takes the last reading, folds it in and fills r.  Call it right after the
 * region (after synchronising), before the clocks fall back. */
int kf_nvml_window_end(kf_nvml_window *w, double now_s, kf_nvml_window_result *r, char *err,
                       size_t errlen);

// ----------------------------------------------------------------------------
// Sampling on a thread of its own

/* A thread that takes readings while a window is open: the first right after
 * kf_nvml_sampler_open, then one every period_s, all while the region runs,
 * so that the thread that drives the GPU makes no NVML call (a reading costs
 * milliseconds on some machines: reading around each case in the measuring
 * thread more than doubled a tuning sweep on two H200s).  Idle between
 * windows.  NULL when the thread cannot be started (then use a window). */
typedef struct kf_nvml_sampler kf_nvml_sampler;
kf_nvml_sampler *kf_nvml_sampler_start(const kf_nvml_dev *d, double period_s);
/* Opens a window at now_s (kf_now()). */
void kf_nvml_sampler_open(kf_nvml_sampler *s, double now_s);
/* Closes it: r as kf_nvml_window_end fills it from the readings taken while
 * it was open (no energy: that needs readings at the window's very ends),
 * *last the latest of them.  When the window was shorter than one reading,
 * waits for the reading it started.  -1 with a message when a reading
 * failed or none came within 1 s. */
int kf_nvml_sampler_close(kf_nvml_sampler *s, double now_s, kf_nvml_window_result *r, kf_nvml_reading *last,
                          char *err, size_t errlen);
/* Closes the window, if open, without a result (a case that failed). */
void kf_nvml_sampler_cancel(kf_nvml_sampler *s);
/* Stops the thread and frees s (NULL is fine). */
void kf_nvml_sampler_stop(kf_nvml_sampler *s);

#endif
