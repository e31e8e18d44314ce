/*
 * log.c - the logging sink of log.h. The level is process-wide and set once
 * at start-up (before any thread), so reading it needs no lock.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static enum log_level log_level_max = LOG_LVL_INFO;

void log_set_level(enum log_level lvl)
{
	log_level_max = lvl;
}

int log_enabled(enum log_level lvl)
{
	return lvl <= log_level_max;
}

void log_write(enum log_level lvl, const char *group, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	static const int prio[] = {3, 4, 6, 7}; /* syslog priorities for journald */
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "egresswatch: %s: [%s] %s\n", names[lvl], group, line);
	else
		fprintf(stderr, "<%d>[%s] %s\n", prio[lvl], group, line);
}
