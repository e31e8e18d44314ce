/*
 * sync.h - the few pthread helpers the sensor's threads share (the store's
 * writer and checkpointer, the replay's reader): a mutex set up together
 * with its condition variables, a broadcast under the mutex, an absolute
 * deadline for pthread_cond_timedwait, and thread names.
 */
#ifndef EW_SYNC_H
#define EW_SYNC_H

#include <pthread.h>
#include <time.h>

/* Set up m and cv[0..n): 0, or -1 with nothing left set up. */
int sync_init(pthread_mutex_t *m, pthread_cond_t *const *cv, int n);

/* Undo sync_init(m, cv, n). */
void sync_destroy(pthread_mutex_t *m, pthread_cond_t *const *cv, int n);

/* Broadcast c with m held, so a sleeper that checked its condition under m
 * cannot miss it. */
void sync_wake(pthread_mutex_t *m, pthread_cond_t *c);

/* CLOCK_MONOTONIC now, in seconds: wall-clock intervals (progress, rate
 * limits, timeouts), never packet time. */
double sync_now(void);

/* CLOCK_REALTIME now + ms, for pthread_cond_timedwait. */
void sync_deadline_ms(struct timespec *ts, unsigned ms);

/* Name the calling thread (at most 15 bytes), as top -H, ps -L, perf and gdb
 * show it: "ew-writer", "ew-ckpt", "ew-reader". Best effort. */
void sync_name_self(const char *name);

#endif
