/*
 * log.h - leveled, grouped logging to stderr (journal-friendly: one line per
 * message, a syslog priority prefix when stderr is not a TTY).
 *
 * log_err/warn/info/debug(GROUP, fmt, ...) test the level before formatting.
 * Packet-derived strings must be escaped (text_escape) before they reach a
 * log line; per-packet problems go to counters, not logs. Analyzers and
 * detectors never log.
 */
#ifndef EW_LOG_H
#define EW_LOG_H

enum log_level { LOG_LVL_ERR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* Set the most verbose level printed (default LOG_LVL_INFO). */
void log_set_level(enum log_level lvl);
int log_enabled(enum log_level lvl);
void log_write(enum log_level lvl, const char *group, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_at(lvl, group, ...)                                                  \
	do {                                                                     \
		if (log_enabled(lvl))                                            \
			log_write(lvl, group, __VA_ARGS__);                      \
	} while (0)
#define log_err(group, ...) log_at(LOG_LVL_ERR, group, __VA_ARGS__)
#define log_warn(group, ...) log_at(LOG_LVL_WARN, group, __VA_ARGS__)
#define log_info(group, ...) log_at(LOG_LVL_INFO, group, __VA_ARGS__)
#define log_debug(group, ...) log_at(LOG_LVL_DEBUG, group, __VA_ARGS__)

#endif
