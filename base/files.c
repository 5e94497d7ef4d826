/* files.c - temporaries, their sweep, and the checks made before a render
 * writes anything (kt_files.h). */
#include "kt_files.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define TEMP_MARK ".tmp-"
#define PROBE_BYTES 4096

int kt_file_temp(const char *path, char *tmp, size_t size, kt_error *err)
{
    int n = snprintf(tmp, size, "%s" TEMP_MARK "%ld-XXXXXX", path, (long)getpid());
    if (n < 0 || (size_t)n >= size)
        return kt_fail(err, KT_EINVAL, "%s: the path is too long", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return kt_fail(err, KT_EIO, "%s: cannot create a file in its folder: %s", path,
                       strerror(errno));
    return fd;
}

void kt_file_size_text(double bytes, char *buf, size_t size)
{
    if (bytes >= 1073741824.0)
        snprintf(buf, size, "%.2f GiB", bytes / 1073741824.0);
    else if (bytes >= 1048576.0)
        snprintf(buf, size, "%.1f MiB", bytes / 1048576.0);
    else
        snprintf(buf, size, "%.0f KiB", ceil(bytes / 1024.0));
}

void kt_file_folder(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, size, ".");
    else if (slash == path)
        snprintf(buf, size, "/");
    else
        snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

/* The writer's pid when name is a temporary of a file whose name starts with
 * prefix ("take.wav.tmp-1234-a1B2c3" for "take"), else 0. */
static long temp_owner(const char *name, const char *prefix)
{
    const char *mark = strstr(name, TEMP_MARK);
    for (const char *m = mark; m; m = strstr(m + 1, TEMP_MARK))
        mark = m;
    if (!mark || strncmp(name, prefix, strlen(prefix)) != 0 ||
        (size_t)(mark - name) < strlen(prefix))
        return 0;
    char *end;
    long pid = strtol(mark + strlen(TEMP_MARK), &end, 10);
    return pid > 0 && *end == '-' && strlen(end + 1) == 6 ? pid : 0;
}

int kt_file_sweep_temps(const char *prefix)
{
    char folder[PATH_MAX], full[PATH_MAX];
    kt_file_folder(prefix, folder, sizeof folder);
    const char *slash = strrchr(prefix, '/'), *base = slash ? slash + 1 : prefix;
    DIR *d = opendir(folder);
    int removed = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        long pid = temp_owner(e->d_name, base);
        /* EPERM: alive, another user's */
        if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        if (snprintf(full, sizeof full, "%s/%s", folder, e->d_name) < (int)sizeof full)
            removed += unlink(full) == 0;
    }
    if (d)
        closedir(d);
    return removed;
}

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m)    ? "a folder"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* A block written, synced and removed: the folder takes a file and the disk
 * a write (EROFS, EACCES, ENOSPC, EDQUOT show up here, not after the render). */
static int probe(const char *path, const char *folder, const char *what, kt_error *err)
{
    char tmp[PATH_MAX];
    kt_error e;
    kt_error_clear(&e);
    int fd = kt_file_temp(path, tmp, sizeof tmp, &e);
    if (fd < 0)
        return kt_fail(err, e.code, "%s %s", what, e.message);
    static const char block[PROBE_BYTES];
    int ok = write(fd, block, sizeof block) == (ssize_t)sizeof block && fsync(fd) == 0;
    int why = errno;
    ok &= close(fd) == 0;
    unlink(tmp);
    if (!ok)
        return kt_fail(err, KT_EIO, "%s %s: a test write in %s failed: %s", what, path, folder,
                       strerror(why));
    return KT_OK;
}

int kt_file_check_writable(const char *path, double bytes, const char *what, kt_error *err)
{
    char folder[PATH_MAX];
    struct stat st;
    if (!path || !path[0])
        return kt_fail(err, KT_EINVAL, "%s has no name", what);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return kt_fail(err, KT_EINVAL, "%s %s is %s; Kettle writes only regular files", what,
                       path, file_kind(st.st_mode));
    kt_file_folder(path, folder, sizeof folder);
    if (stat(folder, &st) != 0)
        return kt_fail(err, KT_EINVAL, "%s %s: there is no folder %s", what, path, folder);
    if (!S_ISDIR(st.st_mode))
        return kt_fail(err, KT_EINVAL, "%s %s: %s is not a folder", what, path, folder);
    int rc = probe(path, folder, what, err);
    struct statvfs vs;
    double free_bytes = rc == 0 && bytes > 0 && statvfs(folder, &vs) == 0
                            ? (double)vs.f_bavail * vs.f_frsize : INFINITY;
    if (free_bytes < bytes) {
        char need[32], have[32];
        kt_file_size_text(bytes, need, sizeof need);
        kt_file_size_text(free_bytes, have, sizeof have);
        rc = kt_fail(err, KT_EIO, "%s %s needs about %s but %s has %s free", what, path, need,
                     folder, have);
    }
    return rc;
}
