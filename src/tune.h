/*
 * tune.h -- autotuning: `kforge tune SPACE` searches a space of variants with
 * a strategy, and `kforge best` prints the best known variant from the
 * tuning database.
 */
#ifndef KF_TUNE_H
#define KF_TUNE_H

int tune_main(int argc, char **argv);
int best_main(int argc, char **argv);

#endif
