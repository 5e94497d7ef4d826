/* kt_cli.h - the `kettle` program's subcommands.  Each lives in its own
 * cli/cmd_*.c file, takes argc/argv starting at its own name, prints its own
 * --help, and returns the process exit status (0 ok, 1 failure, 2 bad input).
 * Only the CLI exits; the library below returns errors. */
#ifndef KT_CLI_H
#define KT_CLI_H

int kt_cmd_version(int argc, char **argv);
int kt_cmd_render(int argc, char **argv);
int kt_cmd_plot(int argc, char **argv);
int kt_cmd_bench_spmv(int argc, char **argv);
int kt_cmd_bench_room(int argc, char **argv);
int kt_cmd_bench_timpani(int argc, char **argv);

/* Exit statuses. */
enum { KT_EXIT_OK = 0, KT_EXIT_FAIL = 1, KT_EXIT_USAGE = 2 };

#endif
