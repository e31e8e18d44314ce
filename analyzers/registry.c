/*
 * registry.c - the only list of modules, in the order they run: analyzers
 * first, then detectors. A new module is one file plus one line here.
 */
#include "module.h"

extern const struct module dns_module;
extern const struct module tls_module;
extern const struct module quic_module;
extern const struct module http_module;
extern const struct module h2c_module;
extern const struct module icmp_module;
extern const struct module detect_egress_module;
extern const struct module detect_icmp_tunnel_module;
extern const struct module detect_metadata_module;
extern const struct module detect_rebind_module;
extern const struct module detect_dns_tunnel_module;

const struct module *const modules[] = {
	&dns_module,
	&tls_module,
	&quic_module,
	&http_module,
	&h2c_module,
	&icmp_module,
	&detect_egress_module,
	&detect_icmp_tunnel_module,
	&detect_metadata_module,
	&detect_rebind_module,
	&detect_dns_tunnel_module,
	NULL,
};
