/* dns.c - stub, to be written. */
#include "module.h"
