/*
 * sync.c - see sync.h.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "sync.h"

int sync_init(pthread_mutex_t *m, pthread_cond_t *const *cv, int n)
{
	int i;

	if (pthread_mutex_init(m, NULL) != 0)
		return -1;
	for (i = 0; i < n; i++)
		if (pthread_cond_init(cv[i], NULL) != 0)
			break;
	if (i == n)
		return 0;
	while (i-- > 0)
		pthread_cond_destroy(cv[i]);
	pthread_mutex_destroy(m);
	return -1;
}

void sync_destroy(pthread_mutex_t *m, pthread_cond_t *const *cv, int n)
{
	for (int i = 0; i < n; i++)
		pthread_cond_destroy(cv[i]);
	pthread_mutex_destroy(m);
}

void sync_wake(pthread_mutex_t *m, pthread_cond_t *c)
{
	pthread_mutex_lock(m);
	pthread_cond_broadcast(c);
	pthread_mutex_unlock(m);
}

double sync_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sync_deadline_ms(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

void sync_name_self(const char *name)
{
	(void)pthread_setname_np(pthread_self(), name);
}
