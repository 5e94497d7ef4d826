/* kt_files.h - how Kettle writes a file, so that nothing is lost and nothing
 * that is not its own is overwritten (issue #24).
 *
 * Every file (audio, checkpoint, picture) is written to a temporary beside
 * it, PATH.tmp-PID-XXXXXX, and renamed over PATH only when complete.  The
 * PID in the name tells the leftovers of a killed run (kill -9, a second
 * Ctrl-C) from the file a live run is writing: the next render or resume of
 * the same output sweeps the first kind away.  Before a render's first step
 * each file it will write is checked: nothing there or a regular file, a
 * folder that takes a new file, and room on its disk. */
#ifndef KT_FILES_H
#define KT_FILES_H

#include "kt_base.h"

/* Create PATH.tmp-PID-XXXXXX (mode 0600) and open it for writing; its name
 * goes to tmp.  Returns the descriptor, or a negative status with a message. */
int kt_file_temp(const char *path, char *tmp, size_t size, kt_error *err);

/* Remove the temporaries whose writer is no longer running, of every file in
 * prefix's folder whose name starts with prefix's last part ("out/take" sweeps
 * those of out/take.wav, out/take_left.wav, out/take.ckpt ...); those of a
 * live process stay.  Returns how many were removed. */
int kt_file_sweep_temps(const char *prefix);

/* Before writing PATH: it is absent or a regular file (a device, FIFO or
 * folder is refused: KT_EINVAL); its folder exists and takes a new file (a
 * temporary is created, written, synced and removed: a read-only or full disk
 * fails here, KT_EIO); and when bytes > 0, its disk has that much free (KT_EIO).
 * `what` names the file in messages ("the output", "the checkpoint"). */
int kt_file_check_writable(const char *path, double bytes, const char *what, kt_error *err);

/* "1.25 GiB", "3.0 MiB" or "40 KiB". */
void kt_file_size_text(double bytes, char *buf, size_t size);

/* The folder holding path ("." when it has no slash) into buf. */
void kt_file_folder(const char *path, char *buf, size_t size);

#endif
