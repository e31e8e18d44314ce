/*
 * alert_rec.h - a struct emit for detector tests that records the alerts a
 * detector raises (copied: the alert is borrowed) in R.a[0..R.n), and
 * ignores observations. Include once per test executable; reset R.n = 0
 * between cases.
 */
#ifndef EW_ALERT_REC_H
#define EW_ALERT_REC_H

#include <stdio.h>

#include "analyzers/module.h"
#include "sensor/text.h"

#define MAX_ALERTS 64

struct got {
	char class[32];
	char subject[300];
	char detail[256];
	char evidence[256];
	char outcome[16];
	char src[64];
	int severity, score;
};

static struct {
	struct got a[MAX_ALERTS];
	int n;
} R;

static int rec_alert(struct emit *e, const struct alert *a)
{
	struct got *g;

	(void)e;
	if (R.n >= MAX_ALERTS)
		return 0;
	g = &R.a[R.n++];
	snprintf(g->class, sizeof(g->class), "%s", a->class);
	snprintf(g->subject, sizeof(g->subject), "%s", a->subject ? a->subject : "");
	snprintf(g->detail, sizeof(g->detail), "%s", a->detail ? a->detail : "");
	snprintf(g->evidence, sizeof(g->evidence), "%s", a->evidence ? a->evidence : "");
	snprintf(g->outcome, sizeof(g->outcome), "%s", a->outcome ? a->outcome : "");
	g->severity = a->severity;
	g->score = a->score;
	g->src[0] = '\0';
	if (a->pkt)
		text_addr(g->src, sizeof(g->src), a->pkt->ipv, a->pkt->src);
	return 0;
}

static int rec_obs(struct emit *e, const struct obs *o)
{
	(void)e;
	(void)o;
	return 0;
}

static struct emit E = {rec_obs, rec_alert, NULL};

#endif
