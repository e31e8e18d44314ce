/*
 * daemon.h - what `watch` needs to behave as a service: the systemd
 * notification protocol (readiness, watchdog, reload, stop) without linking
 * libsystemd, and dropping root after the capture and the database are open.
 */
#ifndef EW_DAEMON_H
#define EW_DAEMON_H

#include <stddef.h>
#include <stdint.h>

/* Send a state string ("READY=1", "WATCHDOG=1", "STOPPING=1", ...) to the
 * socket named by $NOTIFY_SOCKET. No-op (returns 0) when it is unset;
 * -1 when the send failed. */
int daemon_notify(const char *state);

/* The watchdog period asked for by systemd ($WATCHDOG_USEC, for this pid),
 * in microseconds; 0 when there is none. Ping at half of it. */
uint64_t daemon_watchdog_usec(void);

/*
 * Become user `name` (its uid, gid and no supplementary groups), keeping only
 * CAP_NET_RAW so an interface that went away can be opened again. Returns 0,
 * or -1 with a reason naming the user in err.
 */
int daemon_drop_privileges(const char *name, char *err, size_t errlen);

#endif
