/* kt_exit.h - the exit statuses of the `kettle` program (docs/render.md),
 * which the benchmarks' option handling returns too. */
#ifndef KT_EXIT_H
#define KT_EXIT_H

enum { KT_EXIT_OK = 0, KT_EXIT_FAIL = 1, KT_EXIT_USAGE = 2, KT_EXIT_CLIPPED = 3 };

#endif
