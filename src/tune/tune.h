/*
 * tune.h -- autotuning: `kforge tune SPACE` searches a space of variants with
 * a strategy (strategy.h), measuring through the run session, and records
 * the best per size in the tuning database (tunedb.h).
 */
#ifndef KF_TUNE_H
#define KF_TUNE_H

int tune_main(int argc, char **argv);

#endif
