/*
 * check.h - the smallest test harness: CHECK() records a failure with its
 * file and line and goes on; check_done() prints "N passed, N failed" and
 * returns the exit status. Each unit test is one executable.
 */
#ifndef EW_CHECK_H
#define EW_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_pass, check_fail;

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (cond) {                                                      \
			check_pass++;                                            \
		} else {                                                         \
			check_fail++;                                            \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, \
				#cond);                                          \
		}                                                                \
	} while (0)

#define CHECK_EQ(a, b)                                                           \
	do {                                                                     \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b);  \
		if (check_a_ == check_b_) {                                      \
			check_pass++;                                            \
		} else {                                                         \
			check_fail++;                                            \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
				__FILE__, __LINE__, #a, check_a_, #b, check_b_); \
		}                                                                \
	} while (0)

#define CHECK_STR(a, b)                                                          \
	do {                                                                     \
		const char *check_a_ = (a), *check_b_ = (b);                     \
		if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0) {   \
			check_pass++;                                            \
		} else {                                                         \
			check_fail++;                                            \
			fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", \
				__FILE__, __LINE__, #a, check_a_ ? check_a_ : "(null)", \
				check_b_ ? check_b_ : "(null)");                 \
		}                                                                \
	} while (0)

static inline int check_done(void)
{
	printf("%d passed, %d failed\n", check_pass, check_fail);
	return check_fail ? 1 : 0;
}

#endif
