/*
 * schema.h - the migrations of schema/, compiled in by schema/embed.py.
 * schema_migrations[] is ordered by version and ends with {0, NULL, NULL}.
 */
#ifndef EW_SCHEMA_H
#define EW_SCHEMA_H

struct schema_migration {
	int version;      /* 1, 2, ...: PRAGMA user_version after applying it */
	const char *name; /* file name, for error messages */
	const char *sql;
};

extern const struct schema_migration schema_migrations[];

#endif
