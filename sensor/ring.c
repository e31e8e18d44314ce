/*
 * ring.c - the ring of ring.h: set-up, publishing, and the sleeps (see
 * Sleeping there for why no wake-up is lost).
 */
#include "ring.h"

#include <stdlib.h>
#include <time.h>

#include "sync.h"

/* r->lock guards the sleeps on these */
#define RING_CONDS(r) ((pthread_cond_t *const[]){&(r)->not_empty, &(r)->not_full})

int ring_init(struct ring *r, size_t min_bytes)
{
	memset(r, 0, sizeof(*r));
	r->cap = 8;
	while (r->cap < min_bytes)
		r->cap <<= 1;
	r->buf = malloc(r->cap);
	if (!r->buf)
		return -1;
	if (sync_init(&r->lock, RING_CONDS(r), 2) < 0) {
		free(r->buf);
		r->buf = NULL;
		return -2;
	}
	r->locks_ready = 1;
	return 0;
}

void ring_destroy(struct ring *r)
{
	if (r->locks_ready)
		sync_destroy(&r->lock, RING_CONDS(r), 2);
	r->locks_ready = 0;
	free(r->buf);
	r->buf = NULL;
}

/* ---- the producer ------------------------------------------------------ */

int ring_publish(struct ring *r)
{
	if (r->p_pub == r->p_head)
		return 0;
	r->p_pub = r->p_head;
	atomic_store(&r->head, r->p_head); /* release, and seq_cst: see Sleeping */
	return 1;
}

void ring_wake_consumer(struct ring *r, size_t min_pending)
{
	if (atomic_load(&r->cons_waiting) &&
	    (min_pending == 0 || r->p_pub - atomic_load(&r->tail) >= min_pending))
		sync_wake(&r->lock, &r->not_empty);
}

int ring_wait_room(struct ring *r, size_t need, unsigned poll_ms)
{
	size_t contig = r->cap - (size_t)(r->p_head & (r->cap - 1));
	size_t want = need <= contig ? need : contig + need;
	size_t low = r->cap / 4 > want ? r->cap / 4 : want;

	if (ring_publish(r)) /* the consumer can take all of it */
		ring_wake_consumer(r, 0);
	pthread_mutex_lock(&r->lock);
	atomic_store(&r->prod_waiting, low);
	while (!ring_stopping(r) && r->cap - (size_t)(r->p_head - atomic_load(&r->tail)) < low) {
		if (poll_ms) {
			struct timespec dl;
			sync_deadline_ms(&dl, poll_ms);
			pthread_cond_timedwait(&r->not_full, &r->lock, &dl);
		} else {
			pthread_cond_wait(&r->not_full, &r->lock);
		}
	}
	atomic_store(&r->prod_waiting, 0);
	pthread_mutex_unlock(&r->lock);
	return ring_stopping(r) ? -1 : 0;
}

void ring_stop(struct ring *r)
{
	atomic_store(&r->stop, 1);
	sync_wake(&r->lock, &r->not_full);
}

/* ---- the consumer ------------------------------------------------------ */

void ring_hand_back(struct ring *r)
{
	if (r->c_pub == r->c_rel)
		return;
	r->c_pub = r->c_rel;
	atomic_store(&r->tail, r->c_rel); /* release, and seq_cst: see Sleeping */
	size_t want = atomic_load(&r->prod_waiting);
	if (want && r->cap - (size_t)(atomic_load(&r->head) - r->c_rel) >= want)
		sync_wake(&r->lock, &r->not_full);
}

int ring_wait_data(struct ring *r, unsigned timeout_ms)
{
	struct timespec dl;
	int timed_out = 0;

	ring_hand_back(r); /* the producer can have all of it */
	sync_deadline_ms(&dl, timeout_ms);
	pthread_mutex_lock(&r->lock);
	atomic_store(&r->cons_waiting, 1);
	/* head once more after the time is up: what came at the last moment */
	while ((r->c_head = atomic_load(&r->head)) == r->c_read && !timed_out)
		timed_out = pthread_cond_timedwait(&r->not_empty, &r->lock, &dl) != 0;
	atomic_store(&r->cons_waiting, 0);
	pthread_mutex_unlock(&r->lock);
	return r->c_head != r->c_read;
}
