/* query.c - stub */
