/*
 * fake_nvml.c -- a stand-in for libnvidia-ml.so.1 with scripted answers, so
 * that test_nvml can drive src/nvml.c without a GPU.  The Makefile builds it
 * twice into build/tests/: libfakenvml.so exports the clock reasons under
 * their pre-R535 name (nvmlDeviceGetCurrentClocksThrottleReasons),
 * libfakenvml-new.so (-DFAKE_NVML_EVENT_REASONS) under the new one only.
 *
 * Two devices, index 0 and 1, with the UUIDs below.  The test opens the same
 * library with dlopen (one copy, so one state) and scripts it through the
 * fake_nvml_* functions: each query returns the next value of its script,
 * the last one repeating, or a scripted error code.
 *
 * Processes that cannot call those functions (kforge's fake GPU worker, in
 * tests/compare_suite.sh) script it through the environment, read by
 * nvmlInit_v2: FAKE_NVML_SCRIPT="sm=1980,1755;max_sm=1980;energy+=250;..."
 * gives each named query its values (QUERY=V1,V2,...), or a counter that
 * starts at 1000000 and advances by STEP at every answer (QUERY+=STEP).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_API __attribute__((visibility("default")))

typedef struct nvmlDevice_st *nvmlDevice_t; /* the tag nvml.h and src/nvml.h use */
struct nvmlDevice_st {
    int index;
    const char *uuid;
};

static struct nvmlDevice_st devices[2] = {
    {0, "GPU-00000000-1111-2222-3333-444444444444"},
    {1, "GPU-55555555-6666-7777-8888-999999999999"},
};

enum { Q_INIT, Q_SHUTDOWN, Q_SM, Q_MEM, Q_MAX_SM, Q_TEMP, Q_POWER, Q_ENERGY, Q_REASONS, Q_COUNT };
static const char *const qnames[Q_COUNT] = {"init", "shutdown", "sm", "mem", "max_sm",
                                            "temp", "power", "energy", "reasons"};
#define SCRIPT_MAX 32

static struct {
    unsigned long long v[SCRIPT_MAX];
    int n, next, fail, calls;
    unsigned long long step; /* a counter: v[0] + step per answer */
} q[Q_COUNT];
static int initialised;

static int qindex(const char *what)
{
    for (int i = 0; i < Q_COUNT; i++)
        if (strcmp(qnames[i], what) == 0)
            return i;
    fprintf(stderr, "fake_nvml: unknown query '%s'\n", what);
    return -1;
}

// ----------------------------------------------------------------------------
// The test's controls

FAKE_API void fake_nvml_reset(void)
{
    memset(q, 0, sizeof q);
    initialised = 0;
}

/* Successive calls of WHAT return v[0], v[1], ..., then v[n-1] again. */
FAKE_API void fake_nvml_script(const char *what, const unsigned long long *v, int n)
{
    int i = qindex(what);
    if (i < 0 || n < 0 || n > SCRIPT_MAX)
        return;
    memcpy(q[i].v, v, (size_t)n * sizeof *v);
    q[i].n = n;
    q[i].next = 0;
}

/* Every call of WHAT returns this NVML error code (0: answer again). */
FAKE_API void fake_nvml_fail(const char *what, int code)
{
    int i = qindex(what);
    if (i >= 0)
        q[i].fail = code;
}

FAKE_API int fake_nvml_calls(const char *what)
{
    int i = qindex(what);
    return i < 0 ? -1 : q[i].calls;
}

// ----------------------------------------------------------------------------
// NVML

enum { SUCCESS = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_FOUND = 6, INSUFFICIENT_SIZE = 7 };

static int valid(nvmlDevice_t d)
{
    return d == &devices[0] || d == &devices[1];
}

/* The next scripted value of query i into *out, or its error code. */
static int answer(int i, nvmlDevice_t d, unsigned long long *out)
{
    q[i].calls++;
    if (!initialised)
        return UNINITIALIZED;
    if (!valid(d) || !out)
        return INVALID_ARGUMENT;
    if (q[i].fail)
        return q[i].fail;
    if (q[i].n == 0)
        return 3; /* NVML_ERROR_NOT_SUPPORTED: nothing scripted */
    if (q[i].step) {
        *out = q[i].v[0];
        q[i].v[0] += q[i].step;
        return SUCCESS;
    }
    *out = q[i].v[q[i].next];
    if (q[i].next < q[i].n - 1)
        q[i].next++;
    return SUCCESS;
}

static int answer_u(int i, nvmlDevice_t d, unsigned *out)
{
    unsigned long long v = 0;
    int r = answer(i, d, out ? &v : NULL);
    if (r == SUCCESS)
        *out = (unsigned)v;
    return r;
}

/* FAKE_NVML_SCRIPT (see the top). */
static void script_from_env(void)
{
    const char *e = getenv("FAKE_NVML_SCRIPT");
    char buf[1024];
    if (!e || strlen(e) >= sizeof buf)
        return;
    strcpy(buf, e);
    for (char *save = NULL, *item = strtok_r(buf, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            continue;
        int counter = eq > item && eq[-1] == '+';
        eq[-counter] = '\0';
        int i = qindex(item);
        if (i < 0)
            continue;
        q[i].n = q[i].next = 0;
        q[i].step = 0;
        if (counter) {
            q[i].v[0] = 1000000;
            q[i].step = strtoull(eq + 1, NULL, 10);
            q[i].n = 1;
            continue;
        }
        for (char *s2 = NULL, *v = strtok_r(eq + 1, ",", &s2); v && q[i].n < SCRIPT_MAX; v = strtok_r(NULL, ",", &s2))
            q[i].v[q[i].n++] = strtoull(v, NULL, 0);
    }
}

FAKE_API int nvmlInit_v2(void)
{
    if (!initialised)
        script_from_env();
    q[Q_INIT].calls++;
    if (q[Q_INIT].fail)
        return q[Q_INIT].fail;
    initialised++;
    return SUCCESS;
}

FAKE_API int nvmlShutdown(void)
{
    q[Q_SHUTDOWN].calls++;
    if (!initialised)
        return UNINITIALIZED;
    initialised--;
    return SUCCESS;
}

FAKE_API const char *nvmlErrorString(int r)
{
    switch (r) {
    case SUCCESS: return "Success";
    case UNINITIALIZED: return "Uninitialized";
    case INVALID_ARGUMENT: return "Invalid Argument";
    case 3: return "Not Supported";
    case NOT_FOUND: return "Not Found";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
    }
}

FAKE_API int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *d)
{
    if (!initialised)
        return UNINITIALIZED;
    if (!d || index >= 2)
        return INVALID_ARGUMENT;
    *d = &devices[index];
    return SUCCESS;
}

FAKE_API int nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d)
{
    if (!initialised)
        return UNINITIALIZED;
    if (!uuid || !d)
        return INVALID_ARGUMENT;
    for (int i = 0; i < 2; i++) {
        if (strcmp(devices[i].uuid, uuid) == 0) {
            *d = &devices[i];
            return SUCCESS;
        }
    }
    return NOT_FOUND;
}

FAKE_API int nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned length)
{
    if (!initialised)
        return UNINITIALIZED;
    if (!valid(d) || !uuid)
        return INVALID_ARGUMENT;
    if (strlen(d->uuid) + 1 > length)
        return INSUFFICIENT_SIZE;
    memcpy(uuid, d->uuid, strlen(d->uuid) + 1);
    return SUCCESS;
}

FAKE_API int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz)
{
    if (type != 1 && type != 2)
        return INVALID_ARGUMENT; /* kforge asks for NVML_CLOCK_SM and NVML_CLOCK_MEM only */
    return answer_u(type == 1 ? Q_SM : Q_MEM, d, mhz);
}

FAKE_API int nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned *mhz)
{
    if (type != 1)
        return INVALID_ARGUMENT;
    return answer_u(Q_MAX_SM, d, mhz);
}

FAKE_API int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *c)
{
    if (sensor != 0)
        return INVALID_ARGUMENT;
    return answer_u(Q_TEMP, d, c);
}

FAKE_API int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw)
{
    return answer_u(Q_POWER, d, mw);
}

FAKE_API int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj)
{
    return answer(Q_ENERGY, d, mj);
}

#ifdef FAKE_NVML_EVENT_REASONS
FAKE_API int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r)
#else
FAKE_API int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r)
#endif
{
    return answer(Q_REASONS, d, r);
}
