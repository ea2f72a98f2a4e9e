/*
 * nvml.c -- see nvml.h.
 *
 * NVML is declared here, not taken from nvml.h: the CUDA toolkit ships that
 * header only with its optional NVML development component, and kforge needs
 * a dozen functions whose signatures have not changed since NVML 9 (the
 * energy counter came with Volta).  Where the toolkit does have nvml.h, the
 * constants below are checked against it at compile time.
 */
#include "nvml.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

// ----------------------------------------------------------------------------
// NVML's constants

enum {
    NV_SUCCESS = 0,
    NV_ERROR_NOT_SUPPORTED = 3,
    NV_ERROR_NO_PERMISSION = 4,
    NV_ERROR_FUNCTION_NOT_FOUND = 13,
};
enum { NV_CLOCK_SM = 1, NV_CLOCK_MEM = 2 };
enum { NV_TEMPERATURE_GPU = 0 };
#define NV_UUID_BUFFER_SIZE 96 /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */

/* The Makefile defines KF_TOOLKIT_NVML_H as the toolkit's nvml.h when there
 * is one (<nvml.h> would find this directory's own header first). */
#ifdef KF_TOOLKIT_NVML_H
#include KF_TOOLKIT_NVML_H
_Static_assert((int)NVML_SUCCESS == NV_SUCCESS && (int)NVML_ERROR_NOT_SUPPORTED == NV_ERROR_NOT_SUPPORTED &&
                   (int)NVML_ERROR_NO_PERMISSION == NV_ERROR_NO_PERMISSION &&
                   (int)NVML_ERROR_FUNCTION_NOT_FOUND == NV_ERROR_FUNCTION_NOT_FOUND,
               "nvmlReturn_t values");
_Static_assert((int)NVML_CLOCK_SM == NV_CLOCK_SM && (int)NVML_CLOCK_MEM == NV_CLOCK_MEM &&
                   (int)NVML_TEMPERATURE_GPU == NV_TEMPERATURE_GPU,
               "nvmlClockType_t / nvmlTemperatureSensors_t values");
_Static_assert(NVML_DEVICE_UUID_V2_BUFFER_SIZE == NV_UUID_BUFFER_SIZE, "UUID buffer size");
_Static_assert(nvmlClocksThrottleReasonGpuIdle == KF_NVML_REASON_GPU_IDLE &&
                   nvmlClocksThrottleReasonApplicationsClocksSetting == KF_NVML_REASON_APP_CLOCKS &&
                   nvmlClocksThrottleReasonSwPowerCap == KF_NVML_REASON_SW_POWER_CAP &&
                   nvmlClocksThrottleReasonHwSlowdown == KF_NVML_REASON_HW_SLOWDOWN &&
                   nvmlClocksThrottleReasonSyncBoost == KF_NVML_REASON_SYNC_BOOST &&
                   nvmlClocksThrottleReasonSwThermalSlowdown == KF_NVML_REASON_SW_THERMAL &&
                   nvmlClocksThrottleReasonHwThermalSlowdown == KF_NVML_REASON_HW_THERMAL &&
                   nvmlClocksThrottleReasonHwPowerBrakeSlowdown == KF_NVML_REASON_HW_POWER_BRAKE &&
                   nvmlClocksThrottleReasonDisplayClockSetting == KF_NVML_REASON_DISPLAY_CLOCKS,
               "clock reason bits");
#endif

_Static_assert(sizeof(((kf_nvml_dev *)0)->uuid) >= NV_UUID_BUFFER_SIZE, "kf_nvml_dev.uuid size");

// ----------------------------------------------------------------------------
// Opening

#define NV_PREFIX "NVML not available: "

/* dlsym into a function pointer of the field's own type. */
#define NV_SYM(m, field, name) ((m)->field = (__typeof__((m)->field))dlsym((m)->lib, name))

static const char *nv_error(const kf_nvml *m, int r, char *buf, size_t len)
{
    const char *s = m && m->error_string ? m->error_string(r) : NULL;
    if (s && *s)
        snprintf(buf, len, "%s", s);
    else
        snprintf(buf, len, "NVML error %d", r);
    return buf;
}

int kf_nvml_open(kf_nvml *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    const char *name = getenv(KF_NVML_LIB_ENV);
    if (!name || !*name)
        name = KF_NVML_LIB_DEFAULT;
    m->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!m->lib) {
        const char *why = dlerror();
        kf_err(err, errlen, NV_PREFIX "cannot load %s (%s)", name, why ? why : "unknown error");
        return -1;
    }

    static const char *const required[] = {"nvmlInit_v2", "nvmlShutdown", "nvmlErrorString",
                                           "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByUUID",
                                           "nvmlDeviceGetUUID"};
    NV_SYM(m, init, required[0]);
    NV_SYM(m, shutdown, required[1]);
    NV_SYM(m, error_string, required[2]);
    NV_SYM(m, by_index, required[3]);
    NV_SYM(m, by_uuid, required[4]);
    NV_SYM(m, uuid, required[5]);
    const void *have[] = {(const void *)m->init, (const void *)m->shutdown, (const void *)m->error_string,
                          (const void *)m->by_index, (const void *)m->by_uuid, (const void *)m->uuid};
    for (size_t i = 0; i < sizeof have / sizeof have[0]; i++) {
        if (!have[i]) {
            kf_err(err, errlen, NV_PREFIX "%s lacks %s (driver too old?)", name, required[i]);
            goto fail;
        }
    }

    /* optional: a reading simply lacks what the library does not have */
    NV_SYM(m, clock, "nvmlDeviceGetClockInfo");
    NV_SYM(m, max_clock, "nvmlDeviceGetMaxClockInfo");
    NV_SYM(m, temperature, "nvmlDeviceGetTemperature");
    NV_SYM(m, power, "nvmlDeviceGetPowerUsage");
    NV_SYM(m, energy, "nvmlDeviceGetTotalEnergyConsumption");
    /* R535 renamed the throttle reasons "clocks event reasons"; the old name
     * is deprecated and may go, the new one is missing from older drivers */
    m->reasons_name = "nvmlDeviceGetCurrentClocksEventReasons";
    if (!NV_SYM(m, reasons, m->reasons_name)) {
        m->reasons_name = "nvmlDeviceGetCurrentClocksThrottleReasons";
        if (!NV_SYM(m, reasons, m->reasons_name))
            m->reasons_name = NULL;
    }

    int r = m->init();
    if (r != NV_SUCCESS) {
        char why[128];
        kf_err(err, errlen, NV_PREFIX "nvmlInit_v2: %s", nv_error(m, r, why, sizeof why));
        goto fail;
    }
    return 0;

fail:
    dlclose(m->lib);
    memset(m, 0, sizeof *m);
    return -1;
}

void kf_nvml_close(kf_nvml *m)
{
    if (!m || !m->lib)
        return;
    m->shutdown();
    dlclose(m->lib);
    memset(m, 0, sizeof *m);
}

int kf_nvml_device(kf_nvml *m, const char *uuid_or_null, int index, kf_nvml_dev *d, char *err,
                   size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (!m || !m->lib) {
        kf_err(err, errlen, "NVML is not open");
        return -1;
    }
    char why[128];
    int r;
    if (uuid_or_null) {
        r = m->by_uuid(uuid_or_null, &d->handle);
        if (r != NV_SUCCESS) {
            kf_err(err, errlen, "NVML: no device with UUID %s (%s)", uuid_or_null, nv_error(m, r, why, sizeof why));
            return -1;
        }
    } else {
        if (index < 0) {
            kf_err(err, errlen, "NVML: device index %d is negative", index);
            return -1;
        }
        r = m->by_index((unsigned)index, &d->handle);
        if (r != NV_SUCCESS) {
            kf_err(err, errlen, "NVML: no device %d (%s)", index, nv_error(m, r, why, sizeof why));
            return -1;
        }
    }
    d->nvml = m;
    if (m->uuid(d->handle, d->uuid, (unsigned)sizeof d->uuid) != NV_SUCCESS)
        snprintf(d->uuid, sizeof d->uuid, "%s", uuid_or_null ? uuid_or_null : "");
    d->uuid[sizeof d->uuid - 1] = '\0';
    return 0;
}

// ----------------------------------------------------------------------------
// Reading

/* Whether a query answered; records the first real failure in err. */
static bool nv_ok(const kf_nvml *m, int r, const char *what, int *rc, char *err, size_t errlen)
{
    if (r == NV_SUCCESS)
        return true;
    if (r == NV_ERROR_NOT_SUPPORTED || r == NV_ERROR_NO_PERMISSION || r == NV_ERROR_FUNCTION_NOT_FOUND)
        return false;
    if (*rc == 0) {
        char why[128];
        kf_err(err, errlen, "NVML: %s: %s", what, nv_error(m, r, why, sizeof why));
        *rc = -1;
    }
    return false;
}

static int sample(const kf_nvml_dev *d, kf_nvml_reading *s, bool slow, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (!d || !d->nvml || !d->nvml->lib) {
        kf_err(err, errlen, "NVML: no device");
        return -1;
    }
    const kf_nvml *m = d->nvml;
    int rc = 0;
    unsigned u = 0;
    unsigned long long ull = 0;

    if (m->clock) {
        if (nv_ok(m, m->clock(d->handle, NV_CLOCK_SM, &u), "nvmlDeviceGetClockInfo(SM)", &rc, err, errlen)) {
            s->sm_mhz = u;
            s->have |= KF_NVML_HAVE_SM_CLOCK;
        }
        if (nv_ok(m, m->clock(d->handle, NV_CLOCK_MEM, &u), "nvmlDeviceGetClockInfo(MEM)", &rc, err, errlen)) {
            s->mem_mhz = u;
            s->have |= KF_NVML_HAVE_MEM_CLOCK;
        }
    }
    if (slow && m->max_clock &&
        nv_ok(m, m->max_clock(d->handle, NV_CLOCK_SM, &u), "nvmlDeviceGetMaxClockInfo(SM)", &rc, err, errlen)) {
        s->max_sm_mhz = u;
        s->have |= KF_NVML_HAVE_MAX_SM_CLOCK;
    }
    if (m->temperature &&
        nv_ok(m, m->temperature(d->handle, NV_TEMPERATURE_GPU, &u), "nvmlDeviceGetTemperature", &rc, err, errlen)) {
        s->temp_c = u;
        s->have |= KF_NVML_HAVE_TEMP;
    }
    if (m->power && nv_ok(m, m->power(d->handle, &u), "nvmlDeviceGetPowerUsage", &rc, err, errlen)) {
        s->power_w = u / 1000.0;
        s->have |= KF_NVML_HAVE_POWER;
    }
    if (slow && m->energy &&
        nv_ok(m, m->energy(d->handle, &ull), "nvmlDeviceGetTotalEnergyConsumption", &rc, err, errlen)) {
        s->energy_mj = ull;
        s->have |= KF_NVML_HAVE_ENERGY;
    }
    if (m->reasons && nv_ok(m, m->reasons(d->handle, &ull), m->reasons_name, &rc, err, errlen)) {
        s->reasons = ull;
        s->have |= KF_NVML_HAVE_REASONS;
    }
    return rc;
}

int kf_nvml_sample(const kf_nvml_dev *d, kf_nvml_reading *s, char *err, size_t errlen)
{
    return sample(d, s, true, err, errlen);
}

int kf_nvml_sample_quick(const kf_nvml_dev *d, kf_nvml_reading *s, char *err, size_t errlen)
{
    return sample(d, s, false, err, errlen);
}

// ----------------------------------------------------------------------------
// Clock-limit reasons

static const struct {
    unsigned long long bit;
    const char *name;
} nv_reasons[] = {
    {KF_NVML_REASON_GPU_IDLE, "gpu idle"},
    {KF_NVML_REASON_APP_CLOCKS, "applications clocks setting"},
    {KF_NVML_REASON_SW_POWER_CAP, "sw power cap"},
    {KF_NVML_REASON_HW_SLOWDOWN, "hw slowdown"},
    {KF_NVML_REASON_SYNC_BOOST, "sync boost"},
    {KF_NVML_REASON_SW_THERMAL, "sw thermal slowdown"},
    {KF_NVML_REASON_HW_THERMAL, "hw thermal slowdown"},
    {KF_NVML_REASON_HW_POWER_BRAKE, "hw power brake slowdown"},
    {KF_NVML_REASON_DISPLAY_CLOCKS, "display clock setting"},
};

const char *kf_nvml_throttle_text(unsigned long long reasons, char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    buf[0] = '\0';
    if (reasons == 0) {
        snprintf(buf, len, "none");
        return buf;
    }
    size_t at = 0;
    unsigned long long known = 0;
    for (size_t i = 0; i < sizeof nv_reasons / sizeof nv_reasons[0]; i++) {
        known |= nv_reasons[i].bit;
        if (!(reasons & nv_reasons[i].bit))
            continue;
        int n = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", nv_reasons[i].name);
        if (n < 0 || (size_t)n >= len - at)
            return buf; /* truncated: snprintf left it terminated */
        at += (size_t)n;
    }
    if (reasons & ~known)
        snprintf(buf + at, len - at, "%sother 0x%llx", at ? ", " : "", reasons & ~known);
    return buf;
}

bool kf_nvml_throttled(unsigned long long reasons)
{
    return (reasons & ~KF_NVML_REASONS_BENIGN) != 0;
}

/*
 * How often the energy counter advances.  NVIDIA documents the counter's
 * unit and start (NVML API Reference, nvmlDeviceGetTotalEnergyConsumption:
 * "total energy consumption for this GPU in millijoules (mJ) since the driver
 * was last reloaded", Volta and later) and that nvmlDeviceGetPowerUsage is
 * "averaged over 1 sec interval" on Ampere (except GA100) and later, but not
 * the counter's update period.  Two independent sources put it at 100 ms or
 * less on recent GPUs:
 *   - PETSc's manual page PetscLogGpuEnergyMeter (which reads this counter):
 *     "For newer GPUs, energy readings are updated every 20-100ms, so this
 *     approach may be inaccurate for short-duration GPU events";
 *   - Yang et al., "Accurate and Convenient Energy Measurements for GPUs: A
 *     Detailed Study of NVIDIA GPU's Built-in Power Sensor", SC24
 *     (arXiv:2312.02741): on A100 and H100 the power sensor runs every
 *     100 ms and samples only 25 ms of each period.
 * The hint is therefore the worst case, 100 ms; KF_NVML_MIN_WINDOW_S follows
 * from it (nvml.h).
 */
double kf_nvml_energy_resolution_hint(void)
{
    return 0.1;
}

void kf_nvml_format_uuid(const unsigned char bytes[16], char *buf, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    char s[41] = "GPU-";
    size_t at = 4;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            s[at++] = '-';
        s[at++] = hex[bytes[i] >> 4];
        s[at++] = hex[bytes[i] & 15];
    }
    s[at] = '\0';
    if (buf && len)
        snprintf(buf, len, "%s", s);
}

// ----------------------------------------------------------------------------
// Windows

static void window_fold(kf_nvml_window *w, const kf_nvml_reading *s)
{
    w->samples++;
    if (s->have & KF_NVML_HAVE_SM_CLOCK) {
        if (!w->have_sm || s->sm_mhz < w->min_sm_mhz)
            w->min_sm_mhz = s->sm_mhz;
        if (!w->have_sm || s->sm_mhz > w->max_sm_mhz)
            w->max_sm_mhz = s->sm_mhz;
        w->have_sm = true;
    }
    if (s->have & KF_NVML_HAVE_TEMP) {
        if (!w->have_temp || s->temp_c > w->max_temp_c)
            w->max_temp_c = s->temp_c;
        w->have_temp = true;
    }
    if (s->have & KF_NVML_HAVE_REASONS) {
        w->reasons |= s->reasons;
        w->have_reasons = true;
    }
}

int kf_nvml_window_begin(kf_nvml_window *w, const kf_nvml_dev *d, double now_s, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->dev = d;
    w->t0_s = now_s;
    return kf_nvml_sample(d, &w->start, err, errlen);
}

int kf_nvml_window_sample(kf_nvml_window *w, char *err, size_t errlen)
{
    kf_nvml_reading s;
    int rc = kf_nvml_sample(w->dev, &s, err, errlen);
    window_fold(w, &s);
    return rc;
}

/* r from the window and its last reading (end: NULL when the energy counter
 * was not read at the end). */
static void window_result(const kf_nvml_window *w, double now_s, const kf_nvml_reading *end,
                          kf_nvml_window_result *r)
{
    kf_nvml_reading none;
    memset(&none, 0, sizeof none);
    const kf_nvml_reading s = end ? *end : none;
    memset(r, 0, sizeof *r);
    r->seconds = now_s - w->t0_s;
    r->samples = w->samples;
    r->min_sm_mhz = w->min_sm_mhz;
    r->max_sm_mhz = w->max_sm_mhz;
    r->max_temp_c = w->max_temp_c;
    r->reasons = w->reasons;
    r->have_reasons = w->have_reasons;
    r->throttled = kf_nvml_throttled(w->reasons);

    if (!(w->start.have & KF_NVML_HAVE_ENERGY) || !(s.have & KF_NVML_HAVE_ENERGY)) {
        snprintf(r->energy_note, sizeof r->energy_note, "no energy counter (needs Volta or later)");
    } else if (s.energy_mj < w->start.energy_mj) {
        snprintf(r->energy_note, sizeof r->energy_note, "the energy counter went back (driver reloaded?)");
    } else {
        r->energy_j = (double)(s.energy_mj - w->start.energy_mj) / 1000.0;
        if (!(r->seconds >= KF_NVML_MIN_WINDOW_S)) {
            snprintf(r->energy_note, sizeof r->energy_note,
                     "window of %.3g s is shorter than %.3g s (the energy counter advances every ~%.0f ms)",
                     r->seconds, KF_NVML_MIN_WINDOW_S, kf_nvml_energy_resolution_hint() * 1000);
        } else {
            r->energy_valid = true;
            r->power_w = r->energy_j / r->seconds;
        }
    }
}

int kf_nvml_window_end(kf_nvml_window *w, double now_s, kf_nvml_window_result *r, char *err,
                       size_t errlen)
{
    kf_nvml_reading s;
    int rc = kf_nvml_sample(w->dev, &s, err, errlen);
    window_fold(w, &s);
    window_result(w, now_s, &s, r);
    return rc;
}

// ----------------------------------------------------------------------------
// Sampler: readings on a thread of their own while a window is open

struct kf_nvml_sampler {
    const kf_nvml_dev *dev;
    double period_s;
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* open, close, stop, a reading done */
    bool open, stop;
    unsigned window;            /* counts windows: a reading begun in an older one is dropped */
    kf_nvml_window w;           /* this window's readings, folded */
    kf_nvml_reading last;
    char err[160];
    bool have_max;              /* read on the sampler thread only */
    unsigned max_sm_mhz, max_have;
};

static struct timespec deadline_after(double s)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double ns = (double)ts.tv_nsec + s * 1e9;
    ts.tv_sec += (time_t)(ns / 1e9);
    ts.tv_nsec = (long)fmod(ns, 1e9);
    return ts;
}

static void *sampler_main(void *arg)
{
    kf_nvml_sampler *S = arg;
    pthread_mutex_lock(&S->mu);
    while (!S->stop) {
        if (!S->open) {
            pthread_cond_wait(&S->cv, &S->mu);
            continue;
        }
        unsigned window = S->window;
        pthread_mutex_unlock(&S->mu);
        kf_nvml_reading s;
        char err[160] = "";
        if (!S->have_max) { /* the maximum clock does not change: read it once */
            kf_nvml_sample(S->dev, &s, err, sizeof err);
            S->have_max = true;
            S->max_sm_mhz = s.max_sm_mhz;
            S->max_have = s.have & KF_NVML_HAVE_MAX_SM_CLOCK;
        } else {
            kf_nvml_sample_quick(S->dev, &s, err, sizeof err);
            s.max_sm_mhz = S->max_sm_mhz;
            s.have |= S->max_have;
        }
        s.have &= ~(unsigned)KF_NVML_HAVE_ENERGY;
        pthread_mutex_lock(&S->mu);
        if (S->open && S->window == window) {
            window_fold(&S->w, &s);
            S->last = s;
            if (err[0] && !S->err[0])
                snprintf(S->err, sizeof S->err, "%s", err);
        }
        pthread_cond_broadcast(&S->cv);
        struct timespec until = deadline_after(S->period_s);
        while (S->open && S->window == window && !S->stop)
            if (pthread_cond_timedwait(&S->cv, &S->mu, &until) != 0)
                break;
    }
    pthread_mutex_unlock(&S->mu);
    return NULL;
}

kf_nvml_sampler *kf_nvml_sampler_start(const kf_nvml_dev *d, double period_s)
{
    kf_nvml_sampler *S = calloc(1, sizeof *S);
    if (!S)
        return NULL;
    S->dev = d;
    S->period_s = period_s > 0 ? period_s : 0.02;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    bool ok = pthread_mutex_init(&S->mu, NULL) == 0;
    if (ok && pthread_cond_init(&S->cv, &ca) != 0) {
        pthread_mutex_destroy(&S->mu);
        ok = false;
    }
    pthread_condattr_destroy(&ca);
    if (ok && pthread_create(&S->tid, NULL, sampler_main, S) != 0) {
        pthread_cond_destroy(&S->cv);
        pthread_mutex_destroy(&S->mu);
        ok = false;
    }
    if (!ok) {
        free(S);
        return NULL;
    }
    return S;
}

void kf_nvml_sampler_open(kf_nvml_sampler *S, double now_s)
{
    pthread_mutex_lock(&S->mu);
    memset(&S->w, 0, sizeof S->w);
    memset(&S->last, 0, sizeof S->last);
    S->w.dev = S->dev;
    S->w.t0_s = now_s;
    S->err[0] = '\0';
    S->window++;
    S->open = true;
    pthread_cond_broadcast(&S->cv);
    pthread_mutex_unlock(&S->mu);
}

int kf_nvml_sampler_close(kf_nvml_sampler *S, double now_s, kf_nvml_window_result *r, kf_nvml_reading *last,
                          char *err, size_t errlen)
{
    pthread_mutex_lock(&S->mu);
    /* a window shorter than one reading: wait for the reading it started
     * (a few milliseconds; never more than a second) */
    struct timespec until = deadline_after(1.0);
    while (S->w.samples == 0 && !S->stop)
        if (pthread_cond_timedwait(&S->cv, &S->mu, &until) != 0)
            break;
    S->open = false;
    S->window++;
    window_result(&S->w, now_s, NULL, r);
    *last = S->last;
    int rc = S->err[0] || S->w.samples == 0 ? -1 : 0;
    if (S->err[0])
        kf_err(err, errlen, "%s", S->err);
    else if (S->w.samples == 0)
        kf_err(err, errlen, "NVML: no reading within 1 s");
    pthread_cond_broadcast(&S->cv);
    pthread_mutex_unlock(&S->mu);
    return rc;
}

void kf_nvml_sampler_cancel(kf_nvml_sampler *S)
{
    if (!S)
        return;
    pthread_mutex_lock(&S->mu);
    if (S->open) {
        S->open = false;
        S->window++;
        pthread_cond_broadcast(&S->cv);
    }
    pthread_mutex_unlock(&S->mu);
}

void kf_nvml_sampler_stop(kf_nvml_sampler *S)
{
    if (!S)
        return;
    pthread_mutex_lock(&S->mu);
    S->stop = true;
    pthread_cond_broadcast(&S->cv);
    pthread_mutex_unlock(&S->mu);
    pthread_join(S->tid, NULL);
    pthread_cond_destroy(&S->cv);
    pthread_mutex_destroy(&S->mu);
    free(S);
}
