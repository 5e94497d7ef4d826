/* bench_timeline.c - from a list of device activity records (kernels, copies,
 * fills) to the GPU step they make: steps cut at the air sweep's launches,
 * what runs in each instant of a step, the drums' chains, the idle gaps, the
 * median step, and which stage bounds it (bench_timeline.h).  Pure: the
 * records come from CUPTI (bench/gpu/timeline_cupti.cu) or from a test. */
#include "bench_timeline.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The room's kernels other than its sweep (room/gpu/): lists, sources,
 * microphones, walls, ghosts, solids; anything else in a step is a drum's. */
static const char *const kettle_air[] = {"correct_list", "apply_sources", "record_mics",
                                         "record_later", "fill_walls", "shape_", "abc_",
                                         "fcc_", "ghosts_", NULL};
static const bench_tl_rules kettle_rules = {"sweep", kettle_air};

const bench_tl_rules *bench_tl_kettle_rules(void)
{
    return &kettle_rules;
}

void bench_tl_short_name(const char *d, char *out, size_t size)
{
    static const char anon[] = "(anonymous namespace)::";
    size_t k = 0;
    int depth = 0;
    if (!strncmp(d, "void ", 5))
        d += 5;
    for (; *d && k + 1 < size; d++) {
        if (!strncmp(d, anon, sizeof anon - 1)) {
            d += sizeof anon - 2;
            continue;
        }
        if (*d == '(' && depth == 0)
            break;
        depth += *d == '<' ? 1 : *d == '>' ? -1 : 0;
        out[k++] = *d;
    }
    out[k] = '\0';
}

static int is_sweep(const bench_tl_record *r, const bench_tl_rules *rules)
{
    return r->kind == BENCH_TL_KERNEL && r->name && strstr(r->name, rules->sweep);
}

int bench_tl_class(const bench_tl_record *r, const bench_tl_rules *rules)
{
    if (r->kind != BENCH_TL_KERNEL)
        return BENCH_TL_COPIES;
    if (is_sweep(r, rules))
        return BENCH_TL_SWEEP;
    for (const char *const *a = rules->air; a && *a; a++)
        if (r->name && !strncmp(r->name, *a, strlen(*a)))
            return BENCH_TL_AIR;
    return BENCH_TL_DRUMS;
}

static int launch_order(const void *pa, const void *pb)
{
    const bench_tl_record *a = pa, *b = pb;
    if (a->launch != b->launch)
        return a->launch < b->launch ? -1 : 1;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

/* Where each step begins: a sweep kernel not preceded (among kernels) by
 * another (a sweep in several kernels is one step).  Returns the count. */
static size_t step_starts(const bench_timeline *tl, const bench_tl_rules *rules, size_t *at)
{
    size_t count = 0;
    int before = 0;
    for (size_t i = 0; i < tl->n; i++) {
        const bench_tl_record *r = &tl->rec[i];
        if (r->kind != BENCH_TL_KERNEL)
            continue;
        int sweep = is_sweep(r, rules) != 0;
        if (sweep && !before)
            at[count++] = i;
        before = sweep;
    }
    return count;
}

/* A change of what runs: class c starts (+1) or ends (-1) at t_ns. */
typedef struct tl_event {
    uint64_t t_ns;
    int c, delta;
} tl_event;

static int event_order(const void *pa, const void *pb)
{
    const tl_event *a = pa, *b = pb;
    return a->t_ns < b->t_ns ? -1 : a->t_ns > b->t_ns;
}

/* Walks the step's window [t0, t1) through the events (sorted): each
 * instant goes to the first class running (or idle); idle stretches are the
 * gaps. */
static void attribute(bench_tl_step *s, const tl_event *ev, size_t ne, uint64_t t0, uint64_t t1)
{
    int running[BENCH_TL_IDLE] = {0};
    uint64_t t = t0, gap_start = 0;
    int idle_before = 0;
    for (size_t e = 0; e <= ne; e++) {
        uint64_t next = e < ne ? ev[e].t_ns : t1;
        next = next < t0 ? t0 : next > t1 ? t1 : next;
        if (next > t) {
            int c = 0;
            while (c < BENCH_TL_IDLE && running[c] == 0)
                c++;
            s->share_us[c] += (double)(next - t) * 1e-3;
            if (c == BENCH_TL_IDLE && !idle_before) {
                s->gaps++;
                gap_start = t;
            }
            idle_before = c == BENCH_TL_IDLE;
            double gap = idle_before ? (double)(next - gap_start) * 1e-3 : 0;
            if (gap > s->gap_max_us) {
                s->gap_max_us = gap;
                s->gap_max_at_us = (double)(gap_start - t0) * 1e-3;
            }
            t = next;
        }
        if (e < ne)
            running[ev[e].c] += ev[e].delta;
    }
}

/* The shares and gaps of step k: every record of steps k-1 .. k+1 (and the
 * partial steps at either end) that overlaps its window counts. */
static void measure_shares(bench_timeline *tl, const bench_tl_rules *rules, const size_t *at,
                          size_t nat, size_t k, tl_event *ev)
{
    bench_tl_step *s = &tl->step[k];
    const uint64_t t0 = tl->rec[at[k]].start_ns, t1 = tl->rec[at[k + 1]].start_ns;
    size_t lo = k > 0 ? at[k - 1] : 0, hi = k + 2 < nat ? at[k + 2] : tl->n, ne = 0;
    for (size_t i = lo; i < hi; i++) {
        const bench_tl_record *r = &tl->rec[i];
        if (r->end_ns <= t0 || r->start_ns >= t1)
            continue;
        int c = bench_tl_class(r, rules);
        ev[ne++] = (tl_event){r->start_ns, c, 1};
        ev[ne++] = (tl_event){r->end_ns, c, -1};
    }
    qsort(ev, ne, sizeof *ev, event_order);
    attribute(s, ev, ne, t0, t1);
}

/* The sweep's span and the drums' chains of step k, from its own records. */
static void measure_chains(bench_timeline *tl, const bench_tl_rules *rules, size_t k)
{
    bench_tl_step *s = &tl->step[k];
    const char *head = NULL;
    uint64_t lo[BENCH_TL_MAX_DRUMS], hi[BENCH_TL_MAX_DRUMS], sweep_end = 0;
    for (size_t i = s->first; i < s->first + s->count; i++) {
        const bench_tl_record *r = &tl->rec[i];
        int c = bench_tl_class(r, rules);
        tl->drum[i] = 0;
        if (c == BENCH_TL_SWEEP && r->end_ns > sweep_end)
            sweep_end = r->end_ns;
        if (c != BENCH_TL_DRUMS)
            continue;
        if (!head)
            head = r->name;
        if (!strcmp(r->name, head) && s->drums < BENCH_TL_MAX_DRUMS) {
            lo[s->drums] = r->start_ns;
            hi[s->drums++] = r->end_ns;
        }
        int d = s->drums - 1;
        lo[d] = r->start_ns < lo[d] ? r->start_ns : lo[d];
        hi[d] = r->end_ns > hi[d] ? r->end_ns : hi[d];
        tl->drum[i] = d + 1;
    }
    s->sweep_us = (double)(sweep_end - tl->rec[s->first].start_ns) * 1e-3;
    for (int d = 0; d < s->drums; d++)
        s->chain_us[d] = (double)(hi[d] - lo[d]) * 1e-3;
}

/* Median over the steps of one figure, read at byte offset `field` of a
 * step; steps without it (a chain a step lacks) are left out. */
static double median_of(const bench_timeline *tl, size_t field, int chain, double *v)
{
    int m = 0;
    for (int k = 0; k < tl->steps; k++) {
        const bench_tl_step *s = &tl->step[k];
        if (chain >= 0 && chain >= s->drums)
            continue;
        v[m++] = *(const double *)((const char *)s + field);
    }
    return kt_median(v, m);
}

static void typical_step(bench_timeline *tl, double *v)
{
    bench_tl_step *t = &tl->typical;
    memset(t, 0, sizeof *t);
    t->length_us = median_of(tl, offsetof(bench_tl_step, length_us), -1, v);
    t->sweep_us = median_of(tl, offsetof(bench_tl_step, sweep_us), -1, v);
    t->gap_max_us = median_of(tl, offsetof(bench_tl_step, gap_max_us), -1, v);
    for (int c = 0; c < BENCH_TL_SHARES; c++)
        t->share_us[c] = median_of(tl, offsetof(bench_tl_step, share_us) + c * sizeof(double),
                                   -1, v);
    for (int k = 0; k < tl->steps; k++)
        v[k] = tl->step[k].gaps;
    t->gaps = (int)lround(kt_median(v, tl->steps));
    for (int k = 0; k < tl->steps; k++)
        v[k] = tl->step[k].drums;
    t->drums = (int)lround(kt_median(v, tl->steps));
    for (int d = 0; d < t->drums; d++)
        t->chain_us[d] = median_of(tl, offsetof(bench_tl_step, chain_us) + d * sizeof(double),
                                   d, v);
    tl->median = tl->slowest = 0;
    for (int k = 1; k < tl->steps; k++) {
        const double len = tl->step[k].length_us;
        if (fabs(len - t->length_us) < fabs(tl->step[tl->median].length_us - t->length_us))
            tl->median = k;
        if (len > tl->step[tl->slowest].length_us)
            tl->slowest = k;
    }
}

int bench_tl_analyse(const bench_tl_record *rec, size_t n, const bench_tl_rules *rules,
                     bench_timeline *tl, kt_error *err)
{
    memset(tl, 0, sizeof *tl);
    tl->rec = malloc((n ? n : 1) * sizeof *tl->rec);
    tl->drum = calloc(n ? n : 1, sizeof *tl->drum);
    size_t *at = malloc((n ? n : 1) * sizeof *at);
    tl_event *ev = malloc(2 * (n ? n : 1) * sizeof *ev);
    int rc = KT_OK;
    if (!tl->rec || !tl->drum || !at || !ev)
        rc = kt_fail(err, KT_ENOMEM, "out of memory for %zu timeline records", n);
    size_t nat = 0;
    if (rc == KT_OK) {
        memcpy(tl->rec, rec, n * sizeof *rec);
        tl->n = n;
        qsort(tl->rec, n, sizeof *rec, launch_order);
        nat = step_starts(tl, rules, at);
        if (nat < 2)
            rc = kt_fail(err, KT_EINVAL, "the timeline holds %zu launches of a '%s' kernel: "
                         "no whole step", nat, rules->sweep);
    }
    if (rc == KT_OK && !(tl->step = calloc(nat, sizeof *tl->step)))
        rc = kt_fail(err, KT_ENOMEM, "out of memory for %zu timeline steps", nat);
    for (size_t k = 0; rc == KT_OK && k + 1 < nat; k++) {
        bench_tl_step *s = &tl->step[k];
        s->first = at[k];
        s->count = at[k + 1] - at[k];
        s->start_us = (double)(tl->rec[at[k]].start_ns - tl->rec[at[0]].start_ns) * 1e-3;
        s->length_us = (double)(tl->rec[at[k + 1]].start_ns - tl->rec[at[k]].start_ns) * 1e-3;
        measure_shares(tl, rules, at, nat, k, ev);
        measure_chains(tl, rules, k);
        tl->steps++;
    }
    if (rc == KT_OK)
        typical_step(tl, (double *)ev);
    free(at);
    free(ev);
    if (rc < 0)
        bench_tl_free(tl);
    return rc;
}

void bench_tl_free(bench_timeline *tl)
{
    for (int k = 0; k < tl->nnames; k++)
        free(tl->names[k]);
    free(tl->names);
    free(tl->rec);
    free(tl->drum);
    free(tl->step);
    memset(tl, 0, sizeof *tl);
}

static const char *const share_names[BENCH_TL_SHARES] = {
    "the air's sweep", "the drums' kernels (no sweep running)",
    "the air's other kernels (lists, sources, microphones)", "copies and fills",
    "idle (no kernel running: launch latency, waits)"};

/* The share that takes most of the step. */
static int bound_share(const bench_tl_step *s)
{
    int best = 0;
    for (int c = 1; c < BENCH_TL_SHARES; c++)
        if (s->share_us[c] > s->share_us[best])
            best = c;
    return best;
}

const char *bench_tl_bound(const bench_tl_step *s)
{
    return share_names[bound_share(s)];
}

static int start_order(const void *pa, const void *pb)
{
    const bench_tl_record *a = *(const bench_tl_record *const *)pa;
    const bench_tl_record *b = *(const bench_tl_record *const *)pb;
    return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

/* The median step's records, by start time. */
static void print_kernels(FILE *f, const bench_timeline *tl)
{
    const bench_tl_step *s = &tl->step[tl->median];
    const bench_tl_record **r = malloc(s->count * sizeof *r);
    if (!r)
        return;
    for (size_t i = 0; i < s->count; i++)
        r[i] = &tl->rec[s->first + i];
    qsort(r, s->count, sizeof *r, start_order);
    const uint64_t t0 = tl->rec[s->first].start_ns;
    fprintf(f, "  %-40s %8s %10s %10s %10s %5s %8s\n", "kernel", "stream", "start us",
            "end us", "us", "drum", "node");
    for (size_t i = 0; i < s->count; i++) {
        const int d = tl->drum[r[i] - tl->rec];
        char drum[12] = "", node[24] = "-";
        if (d > 0)
            snprintf(drum, sizeof drum, "%d", d);
        if (r[i]->node)
            snprintf(node, sizeof node, "%llu", (unsigned long long)r[i]->node);
        fprintf(f, "  %-40.40s %8u %10.2f %10.2f %10.2f %5s %8s\n", r[i]->name, r[i]->stream,
                ((double)r[i]->start_ns - (double)t0) * 1e-3,
                ((double)r[i]->end_ns - (double)t0) * 1e-3,
                (double)(r[i]->end_ns - r[i]->start_ns) * 1e-3, drum, node);
    }
    free(r);
}

/* The median step's time by what ran (its shares add up to it), then the
 * medians over every step of its length and of each drum's chain. */
static void print_summary(FILE *f, const bench_timeline *tl)
{
    const bench_tl_step *t = &tl->typical, *m = &tl->step[tl->median],
                        *slow = &tl->step[tl->slowest];
    const double len = m->length_us > 0 ? m->length_us : 1;
    fprintf(f, "  the median step, %.2f us (the median over %d steps %.2f, the slowest %.2f "
               "us: copies %.2f, idle %.2f); the sweep kernel %.2f us:\n", m->length_us,
            tl->steps, t->length_us, slow->length_us, slow->share_us[BENCH_TL_COPIES],
            slow->share_us[BENCH_TL_IDLE], m->sweep_us);
    for (int c = 0; c < BENCH_TL_SHARES; c++)
        fprintf(f, "    %-55s %9.2f us %5.1f %%\n", share_names[c], m->share_us[c],
                100 * m->share_us[c] / len);
    fprintf(f, "  not the sweep: %.2f us of the step (%.1f %%); idle in %d gaps, the longest "
               "%.2f us at %.2f us\n", m->length_us - m->share_us[BENCH_TL_SWEEP],
            100 * (1 - m->share_us[BENCH_TL_SWEEP] / len), m->gaps, m->gap_max_us,
            m->gap_max_at_us);
    fprintf(f, "  with the drums wholly beside the sweep and no idle time: %.2f us (the sweep, "
               "the air's other kernels, copies)\n", m->share_us[BENCH_TL_SWEEP] +
            m->share_us[BENCH_TL_AIR] + m->share_us[BENCH_TL_COPIES]);
    int longest = 0;
    if (m->drums > 0) {
        fprintf(f, "  drum chains, first start to last end:");
        for (int d = 0; d < m->drums; d++) {
            fprintf(f, " %d: %.2f us%s", d + 1, m->chain_us[d], d + 1 < m->drums ? "," : "\n");
            longest = m->chain_us[d] > m->chain_us[longest] ? d : longest;
        }
        fprintf(f, "  longest chain: drum %d, %.2f us (%.1f %% of the step; its median over "
                   "the steps %.2f us)\n", longest + 1, m->chain_us[longest],
                100 * m->chain_us[longest] / len, t->chain_us[longest]);
    }
    fprintf(f, "  bound by: %s, %.1f %% of the step\n", bench_tl_bound(m),
            100 * m->share_us[bound_share(m)] / len);
}

void bench_tl_print(FILE *f, const bench_timeline *tl)
{
    fprintf(f, "  the median step's kernels (step %d of %d; times from its sweep's start):\n",
            tl->median, tl->steps);
    print_kernels(f, tl);
    print_summary(f, tl);
}

/* A JSON string's inside: quotes and backslashes escaped, controls dropped. */
static void json_text(FILE *f, const char *s)
{
    for (; s && *s; s++)
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
}

void bench_tl_chrome(FILE *f, const bench_timeline *tl, int pid, const char *label, int steps,
                     int *first)
{
    int s0 = tl->median - steps / 2, s1;
    s0 = s0 < 0 ? 0 : s0;
    s1 = s0 + steps < tl->steps ? s0 + steps : tl->steps;
    const uint64_t t0 = tl->rec[tl->step[s0].first].start_ns;
    fprintf(f, "%s{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": "
               "{\"name\": \"", *first ? "" : ",\n", pid);
    json_text(f, label);
    fprintf(f, "\"}}");
    *first = 0;
    for (int k = s0; k < s1; k++) {
        const bench_tl_step *s = &tl->step[k];
        for (size_t i = s->first; i < s->first + s->count; i++) {
            const bench_tl_record *r = &tl->rec[i];
            fprintf(f, ",\n{\"name\": \"");
            json_text(f, r->name);
            fprintf(f, "\", \"ph\": \"X\", \"pid\": %d, \"tid\": %u, \"ts\": %.3f, "
                       "\"dur\": %.3f, \"args\": {\"step\": %d, \"drum\": %d}}",
                    pid, r->stream, ((double)r->start_ns - (double)t0) * 1e-3,
                    (double)(r->end_ns - r->start_ns) * 1e-3, k, tl->drum[i]);
        }
    }
}
