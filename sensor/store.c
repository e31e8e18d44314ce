/* store.c - stub, to be written. */
#include "store.h"
