/*
 * worker.h -- the GPU worker process.  Measurements run in a child process,
 * so that a kernel that faults (which leaves the CUDA context unusable) or
 * hangs costs only that case: the parent records it, starts a new worker
 * and goes on.  The parent never initialises CUDA, so it can fork freely.
 *
 * KFORGE_FAKE_GPU=N replaces the GPUs by N synthetic devices, 0..N-1
 * (results are computed on the CPU and timings come from a formula; any
 * value but a number >= 1 or "0" is one device).  It exists for tests of the
 * orchestration (faults, timeouts, signals, resume, tuning, several GPUs)
 * on machines without a GPU; every result it produces names the device
 * "fake-gpu (KFORGE_FAKE_GPU)", each device with its own UUID; any other
 * --device fails as a missing GPU does.  KFORGE_FAKE_GPU_MIXED=1 makes the
 * odd-numbered ones another model ("fake-gpu-b", sm_80);
 * KFORGE_FAKE_GPU_MS=T makes every case take T ms, KFORGE_FAKE_GPU_OPEN_MS=T
 * the opening of each device (as cuInit and the context do).  The fake
 * checks its CPU outputs only up to KF_FAKE_MAX_OUTPUTS outputs and
 * KF_FAKE_MAX_INPUTS input elements; a larger case's result is ok with the
 * message "not verified (fake GPU, N outputs)" (or "N inputs").  A user's
 * kernel (a family with arg_sizes) is looked for in the cubin NVRTC made,
 * and its parameters' count and sizes checked against the config's
 * arguments (cubin.h), as the driver does on a GPU.
 *
 * KFORGE_FAULT_INJECT="crash@K,hang@K,dead@D" makes the worker crash or hang
 * on the K-th case (1-based, counted by the parent across every device), or
 * the worker of device D die on every case -- for the same tests.
 */
#ifndef KF_WORKER_H
#define KF_WORKER_H

#include <sys/types.h>

#include "kforge.h"

#define KF_FAKE_MAX_OUTPUTS ((int64_t)1 << 22)
#define KF_FAKE_MAX_INPUTS ((int64_t)1 << 25)
#define KF_FAKE_NOT_VERIFIED "not verified"

typedef struct gpu_worker gpu_worker;

/* Forks a worker for GPU `ordinal` and waits for it to open the device.
 * NULL with a message if no GPU is usable.  isolate: the worker shows the
 * driver only its own GPU (CUDA_VISIBLE_DEVICES set to the ordinal's entry,
 * worker_visible_entry), which opens in about 2/3 of the time on a machine
 * of two GPUs, less on larger ones; its device count is then 1. */
gpu_worker *worker_start(int ordinal, bool isolate, kf_device *dev, char *err, size_t errlen);

/* worker_start in two steps, so that several devices open at once: forks
 * the worker (NULL with a message if it cannot), then waits for it to open
 * the device (NULL with a message, the worker gone, if it could not; w may
 * be NULL; *missing, if given, true when the device does not exist). */
gpu_worker *worker_spawn(int ordinal, bool isolate, char *err, size_t errlen);
gpu_worker *worker_hello(gpu_worker *w, kf_device *dev, bool *missing, char *err, size_t errlen);

/* The input the workers spawned from now on make while they open their
 * device (bench_make_input_ahead); v NULL: none. */
void worker_input_ahead(const kf_variant *v, const kf_shape *shape, const kf_bench *b);
/* With shared data (datashare.h): the workers spawned from now on make, on
 * a thread, the data of shapes[part], shapes[part + nparts], ... of
 * worker_input_ahead's variant (exact, and realistic where it has an
 * accuracy run) in the shared region instead; shapes stays the caller's
 * until they are spawned.  NULL: none. */
void worker_input_ahead_shapes(const kf_shape *shapes, int nshapes, int part, int nparts);

/* The CUDA_VISIBLE_DEVICES value that shows a process only device `ordinal`
 * of those the parent sees: the ordinal's entry of cvd (the parent's
 * CUDA_VISIBLE_DEVICES, entries separated by commas), or the ordinal itself
 * when cvd is NULL.  0, or -1 when cvd has no such entry. */
int worker_visible_entry(const char *cvd, int ordinal, char *out, size_t len);

/* How many devices --devices all will likely find, without initialising CUDA
 * (the parent must not): the entries of CUDA_VISIBLE_DEVICES when it is
 * set; else KFORGE_FAKE_GPU's count; else the GPUs the driver lists in
 * /proc/driver/nvidia/gpus; 0 when none of these tells.  A guess, so that
 * every worker can open its device at the same time (run.c: start_workers
 * drops those that find no device). */
int worker_device_guess(void);

/* The architecture ("sm_90") of the GPUs with these ordinals (n of them),
 * told without opening a device, so that compiling can start while the
 * workers open theirs: on the fake GPU from its devices; on a GPU from NVML,
 * in a short-lived child process (the caller never touches NVML nor CUDA),
 * and only when every GPU of the host has the same one (NVML's and CUDA's
 * orders differ).  0, or -1 when it cannot be told (then the workers'
 * hellos tell it). */
int worker_arch_guess(const int *ords, int n, char *arch, size_t len);

/* The fd that becomes readable when a result (or the worker's death) is there. */
int worker_fd(const gpu_worker *w);
/* How many devices the worker's process sees (for --devices all). */
int worker_device_count(const gpu_worker *w);
pid_t worker_pid(const gpu_worker *w);

/* Sends one case: its cubin in the cache (cubin_path), or, when cubin is
 * not NULL, one the cache could not store, sent with its lowered names
 * (or NULL).  inject: 0 none, 1 crash, 2 hang (tests). */
int worker_send(gpu_worker *w, const kf_variant *v, const kf_shape *shape, const kf_bench *b,
                const char *cubin_path, const void *cubin, size_t cubin_len, const char *names, int inject);

/* Reads the result of the case in flight.  Returns 0; -1 if the worker ended
 * its process after a fault it reported (r holds the report; status FAULT);
 * -2 if it died without a word (r->status = KF_ST_FAULT with the signal or
 * exit status).  After -1 or -2 the worker is gone: worker_free it and start
 * a new one. */
int worker_recv(gpu_worker *w, kf_result *r);

/* Kills (SIGKILL) and reaps. */
void worker_kill(gpu_worker *w);

/* Tells the worker to exit and returns at once: a process that held a CUDA
 * context takes a while to exit (the driver tears the context down), so a
 * session with several workers tells them all before it waits for each. */
void worker_quit(gpu_worker *w);
/* Asks the worker to finish, reaps it, frees. */
void worker_free(gpu_worker *w);
/* Asks the worker to finish and frees it without waiting for its process
 * to end: the driver's teardown of its context and device memory (seconds
 * on a GPU that held gigabytes) goes on while the caller finishes, and a
 * process of kforge that exits does not wait for it (the worker closed its
 * standard streams first, so a pipe it shared sees its end at once).  The
 * process is reaped by a later worker_spawn or worker_release, or by init
 * once kforge has exited.  Returns whether it was still exiting. */
bool worker_release(gpu_worker *w);

/* Parses KFORGE_FAULT_INJECT for case number k (1-based): 0, 1 crash, 2 hang. */
int worker_injection(int k);
/* KFORGE_FAULT_INJECT names dead@ordinal: that device's worker crashes on every case. */
bool worker_device_dead(int ordinal);

#endif
