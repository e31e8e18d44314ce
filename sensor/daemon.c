/*
 * daemon.c - service plumbing for `watch` (daemon.h).
 *
 * The notification protocol is one datagram per state on an AF_UNIX socket
 * whose path is in $NOTIFY_SOCKET ('@' at the start means the abstract
 * namespace), as sd_notify(3) documents. Capabilities are kept across the
 * uid change with PR_SET_KEEPCAPS and then trimmed with capset(2), so no
 * libcap is needed.
 */
#include "daemon.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

int daemon_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n;
	int fd, rc = -1;

	if (!path || !*path)
		return 0;
	n = strlen(path);
	if (n >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@'))
		return -1;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) >= 0)
		rc = 0;
	close(fd);
	return rc;
}

uint64_t daemon_watchdog_usec(void)
{
	const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	char *end;
	unsigned long long v;

	if (!usec)
		return 0;
	if (pid && strtol(pid, NULL, 10) != (long)getpid())
		return 0;
	v = strtoull(usec, &end, 10);
	return *end ? 0 : (uint64_t)v;
}

int daemon_drop_privileges(const char *name, char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2];
	/* AF_PACKET sockets, their rings and promiscuous membership need
	 * CAP_NET_RAW alone (CAP_NET_ADMIN is for monitor mode and hardware
	 * timestamps, which the sensor does not use) */
	uint32_t keep = 1u << CAP_NET_RAW;
	struct passwd *pw;

	errno = 0;
	pw = getpwnam(name);
	if (!pw) {
		snprintf(err, errlen, "--user %s: %s", name, errno ? strerror(errno) : "no such user");
		return -1;
	}
	if (prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) < 0 || setgroups(0, NULL) < 0 ||
	    setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0) {
		snprintf(err, errlen, "--user %s: %s", name, strerror(errno));
		return -1;
	}
	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = keep;
	if (syscall(SYS_capset, &hdr, data) < 0) {
		snprintf(err, errlen, "--user %s: keeping CAP_NET_RAW: %s", name, strerror(errno));
		return -1;
	}
	prctl(PR_SET_KEEPCAPS, 0L, 0L, 0L, 0L);
	if (setuid(0) == 0) {
		snprintf(err, errlen, "--user %s: root could be regained", name);
		return -1;
	}
	return 0;
}
