/* flow.c - stub, to be written. */
#include "flow.h"
