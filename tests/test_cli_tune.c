/* test_cli_tune.c - the tuner and the spectrum as a user meets them, through
 * the kettle program, on a 23-inch drum tuned to D3 with a pedal to E3 in a
 * small room at 11,025 Hz (a second or two of work):
 *   kettle tune    a row per pitch with the (1,1) within 3 cents of it and
 *                  the next partials (the (2,1) between 1.3 and 1.8 times the
 *                  (1,1)); the same as JSON; run again, nothing is measured
 *                  (the cache); a microphone on the drum's axis is warned
 *                  about, on stderr, at its line;
 *   kettle render  tunes the same way (the cache again: 0 runs) and says so;
 *   kettle plot    names the channels after the microphones and prints the
 *                  (1,1) after the pedal within 3 cents of E3, with its note;
 * and bad input is refused with exit status 2. */
#include "kt_spectrum.h"
#include "kt_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define D3_HZ 146.832383958
#define E3_HZ 164.813778456

static char dir[64];
static char out[16384], err[16384];

static const char *orc =
    "sr = 11025\nroom = 0.9 0.9 0.9\nbeta = 0.3\n"
    "mic close 0.65 0.5 0.75\n"
    "mic axis 0.45 0.45 0.8\n"           /* on the drum's axis: a warning */
    "instr 1\n size = 23\n pitch = D3\n pos = 0.45 0.45 0.55\nendin\n";

static void path(char *p, size_t n, const char *name)
{
    snprintf(p, n, "%s/%s", dir, name);
}

static void write_file(const char *name, const char *text)
{
    char p[128];
    path(p, sizeof p, name);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int kettle(const char *a1, const char *a2, const char *a3, const char *a4, const char *a5,
                  const char *a6, const char *a7, const char *a8)
{
    const char *argv[] = {KETTLE_EXE, a1, a2, a3, a4, a5, a6, a7, a8, NULL};
    return kt_test_run((char *const *)argv, NULL, 600, out, err, sizeof out);
}

/* The (1,1) Hz on the table row that starts with `who`, or -1. */
static double row_hz(const char *who)
{
    for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char first[32];
        if (sscanf(l, "%31s", first) == 1 && strcmp(first, who) == 0) {
            /* "...  N/m    146.83 Hz D3 ..." : the number after "N/m" */
            const char *t = strstr(l, "N/m");
            double hz;
            return t && sscanf(t + 3, "%lf", &hz) == 1 ? hz : -1;
        }
    }
    return -1;
}

static void check_tune(const char *orc_path, const char *sco_path, const char *cache)
{
    int st = kettle("tune", orc_path, sco_path, "--threads", "1", "--tuning-cache", cache, NULL);
    KT_CHECK(st == 0, "kettle tune: exit %d\n%s", st, err);
    double d3 = row_hz("1"), e3 = -1;
    for (const char *l = strstr(out, "\n1@"); l && e3 < 0; l = NULL) {
        const char *t = strstr(l, "N/m");
        if (!t || sscanf(t + 3, "%lf", &e3) != 1)
            e3 = -1;
    }
    KT_CHECK(fabs(kt_cents(d3, D3_HZ)) <= 3, "tune: the drum sounds %.3f Hz for D3\n%s", d3, out);
    KT_CHECK(fabs(kt_cents(e3, E3_HZ)) <= 3, "tune: the pedal's E3 sounds %.3f Hz\n%s", e3, out);
    KT_CHECK(strstr(out, "(2,1)") && strstr(out, " x1."), "tune: no partials\n%s", out);
    KT_CHECK(strstr(err, "t.orc:5:5: warning: microphone axis sits on the axis of drum 1") &&
                 !strstr(err, "microphone close"),
             "tune: the microphone on the axis is warned about, the other not:\n%s", err);
}

static void check_json(const char *orc_path, const char *sco_path, const char *cache)
{
    const char *argv[] = {KETTLE_EXE, "tune", orc_path, sco_path, "--json", "-", "--quiet",
                          "--threads", "1", "--tuning-cache", cache, NULL};
    int st = kt_test_run((char *const *)argv, NULL, 600, out, err, sizeof out);
    KT_CHECK(st == 0, "kettle tune --json: exit %d\n%s", st, err);
    int rows = 0;
    const char *key = "\"sounding_hz\": ";
    for (const char *p = strstr(out, key); p; p = strstr(p + 1, key)) {
        double hz = atof(p + 15), want = rows == 0 ? D3_HZ : E3_HZ;
        KT_CHECK(fabs(kt_cents(hz, want)) <= 3, "json row %d: %.3f Hz for %.3f", rows, hz, want);
        const char *r = strstr(p, "\"ratio\": ");
        double ratio = r ? atof(r + 9) : 0;
        KT_CHECK(ratio > 1.3 && ratio < 1.8, "json row %d: (2,1) ratio %.3f", rows, ratio);
        rows++;
    }
    KT_CHECK(rows == 2, "json: %d rows, want 2\n%s", rows, out);
    KT_CHECK(strstr(out, "\"tuning_runs\": 0"), "json: the second tune measured again\n%s", out);
    KT_CHECK(strstr(out, "\"mode\": \"(4,1)\""), "json: no (4,1)\n%s", out);
}

/* The score of the tuning, so that the drum's grid, and so its cache key,
 * is the one `kettle tune` used; the (1,1) is read after the pedal (E3). */
static void check_render_and_plot(const char *orc_path, const char *sco, const char *cache)
{
    char wav[128], png[128];
    path(wav, sizeof wav, "one.wav");
    path(png, sizeof png, "one.png");
    const char *argv[] = {KETTLE_EXE, "render", orc_path, sco, "-o", wav, "--tail", "0",
                          "--threads", "1", "--tuning-cache", cache, NULL};
    int st = kt_test_run((char *const *)argv, NULL, 600, out, err, sizeof out);
    KT_CHECK(st == 0, "render: exit %d\n%s", st, err);
    KT_CHECK(strstr(out, "tuning:    2 pitches, 0 runs"), "render: its tuning line\n%s", out);
    KT_CHECK(strstr(err, "warning: microphone axis"), "render: the warning\n%s", err);
    st = kettle("plot", wav, "-o", png, "--from", "0.2", NULL, NULL);
    KT_CHECK(st == 0, "plot: exit %d\n%s", st, err);
    KT_CHECK(strstr(out, "channels: close, axis\n"), "plot: channel names\n%s", out);
    double best = 1e9;
    char note[16] = "";
    for (const char *p = strstr(out, "peak "); p; p = strstr(p + 1, "peak ")) {
        double hz;
        char n[16];
        if (sscanf(p, "peak %lf Hz %15s", &hz, n) == 2 && fabs(kt_cents(hz, E3_HZ)) < fabs(best)) {
            best = kt_cents(hz, E3_HZ);
            snprintf(note, sizeof note, "%s", n);
        }
    }
    KT_CHECK(fabs(best) <= 3 && !strcmp(note, "E3"),
             "plot: the (1,1) is %+.2f cents from E3 (%s)\n%s", best, note, out);
    struct stat sb;
    KT_CHECK(stat(png, &sb) == 0 && sb.st_size > 1000, "plot: no picture");
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kettle_tune_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char orc_path[128], sco_path[128], bad[128];
    write_file("t.orc", orc);
    write_file("t.sco", "i 1 0 0.45 p 0.6 0\npedal 1 0.1 0.05 E3\n");
    write_file("bad.orc", "sr = 11025\nroom = 0.9 0.9 0.9\nmic m 0.7 0.5 0.75\n"
                          "instr 1\n size = 23\n pitch = A1\n pos = 0.45 0.45 0.55\nendin\n");
    path(orc_path, sizeof orc_path, "t.orc");
    path(sco_path, sizeof sco_path, "t.sco");
    path(bad, sizeof bad, "bad.orc");
    check_tune(orc_path, sco_path, dir);
    check_json(orc_path, sco_path, dir);
    check_render_and_plot(orc_path, sco_path, dir);

    KT_CHECK(kettle("tune", NULL, NULL, NULL, NULL, NULL, NULL, NULL) == 2, "tune: no input");
    KT_CHECK(kettle("tune", orc_path, "--sr", "x", NULL, NULL, NULL, NULL) == 2, "tune: --sr x");
    int st = kettle("tune", bad, "--tuning-cache", "off", NULL, NULL, NULL, NULL);
    KT_CHECK(st == 2 && strstr(err, "bad.orc:6:") && strstr(err, "out of reach"),
             "tune: a pitch out of the drum's reach (exit %d):\n%s", st, err);
    KT_CHECK(kettle("plot", "/nonexistent.wav", NULL, NULL, NULL, NULL, NULL, NULL) == 2,
             "plot: a missing file");
    KT_CHECK(kettle("plot", orc_path, "--peaks", "99", NULL, NULL, NULL, NULL) == 2,
             "plot: --peaks 99");
    kt_test_remove_dir(dir);
    return kt_test_finish("test_cli_tune");
}
