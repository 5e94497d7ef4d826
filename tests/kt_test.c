/* kt_test.c - counters and summary for kt_test.h. */
#include "kt_test.h"

int kt_test_failures = 0;
int kt_test_checks = 0;

int kt_test_finish(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, kt_test_checks, kt_test_failures);
    return kt_test_failures ? 1 : 0;
}
