/*
 * datashare.h -- one copy of a case's host data for every GPU worker of a
 * session.  Each worker used to fill every input and compute its reference
 * itself: on 4 GPUs the same 4 GiB input of a 2^30 reduction was made 4
 * times, each maker on every CPU, and the sweep's setup time grew with the
 * GPUs.  The session's parent maps one shared anonymous region before it
 * forks its workers (they inherit it, and so do workers started again after
 * a fault); the first worker that wants a key (data.h: family, key axes,
 * shape, seed, lengths, exact or realistic) makes its data there, with the
 * same fill and reference as data_make, and the others wait for it and
 * read the same bytes.  A worker copies the reference outputs into its own
 * memory and reads the inputs from the region while it copies them to its
 * device.  The region's inputs are only read: a planted fault's model,
 * which writes into the inputs it keeps (verify_plant_model changes one
 * element and puts it back), gets private ones (data_make), or another
 * worker would read the changed element meanwhile.
 *
 * The region holds at most a quarter of the host's memory (or of the
 * cgroup's memory.max) at once; a key that does not fit after the least
 * recently used unpinned keys are given up is made privately, as before.
 * KFORGE_SHARED_INPUTS=0 turns sharing off (every worker makes its own, as
 * before); KFORGE_SHARED_INPUTS=NM or NG sets the budget to N MiB or GiB
 * (any other value: the default).  No
 * lock that a dead process keeps: the table's mutex is robust, and a key
 * whose maker died is made by the next worker that wants it.
 */
#ifndef KF_DATASHARE_H
#define KF_DATASHARE_H

#include "data.h"

/* Maps the region (the session's parent, before it forks its workers).
 * Sharing stays off when KFORGE_SHARED_INPUTS=0 or the region cannot be
 * mapped; data_make_shared is then data_make.  Nested calls are counted. */
void datashare_open(void);
/* Unmaps it (after the workers are gone). */
void datashare_close(void);
bool datashare_on(void);

/* data_make through the region: d's inputs point into it (pinned until
 * data_drop_inputs; read them only), its references are its own.  0, or
 * -1 when host memory ran out (d left empty). */
int data_make_shared(data_set *d, const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact);

/* Makes a key's data in the region, unless it is there or being made, and
 * keeps nothing: a worker's thread making the session's inputs ahead. */
void datashare_prefetch(const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact);

/* Unpins d's inputs (data_drop_inputs). */
void datashare_release(data_set *d);

/* Keys made in the region in this session, by every process (tests). */
int datashare_made(void);

#endif
