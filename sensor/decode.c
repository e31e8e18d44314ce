/* decode.c - stub, to be written. */
#include "decode.h"
