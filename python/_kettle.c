/* _kettle.c - the C half of the `kettle` Python module (python/kettle/
 * __init__.py is the other): scores rendered to memory or to a file, rooms
 * and drums made and stepped through the public C API, and Kettle's errors
 * raised as kettle.KettleError carrying the library's message, for a score
 * "file:line:col: error: ..." with the line and a caret.
 *
 * A C extension rather than ctypes or cffi: the parameter structs
 * (kt_room_params, kt_timpani_params, kt_render_options) are used as the
 * compiler lays them out, so no copy of their layout in Python can drift
 * from the headers.  Audio comes back as a bytearray of doubles that
 * __init__.py views as a NumPy array, so NumPy's C headers are not needed.
 * The GIL is released while the engine computes; Ctrl-C stops a render or
 * a room's run at the next step. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "kt_config.h"
#include "kt_render.h"

#include <string.h>

static struct PyModuleDef module_def;

typedef struct module_state {
    PyObject *error;        /* kettle.KettleError */
    PyTypeObject *room_type, *timpani_type;
} module_state;

static module_state *state_of(PyObject *module)
{
    return (module_state *)PyModule_GetState(module);
}

/* ---- errors ---- */

/* Raise KettleError(text) with .code, .status, .file, .line, .col and
 * .message (the bare message) set; returns NULL. */
static PyObject *raise_error(PyObject *error_type, int code, const char *text, const char *file,
                             int line, int col, const char *message)
{
    PyObject *exc = PyObject_CallFunction(error_type, "s", text);
    if (!exc)
        return NULL;
    PyObject *values[] = {PyLong_FromLong(code), PyUnicode_FromString(kt_status_name(code)),
                          file && file[0] ? PyUnicode_FromString(file) : Py_NewRef(Py_None),
                          PyLong_FromLong(line), PyLong_FromLong(col),
                          PyUnicode_FromString(message)};
    static const char *names[] = {"code", "status", "file", "line", "col", "message"};
    for (int i = 0; i < 6; i++) {
        if (!values[i] || PyObject_SetAttrString(exc, names[i], values[i]) < 0) {
            for (int j = i; j < 6; j++)
                Py_XDECREF(values[j]);
            Py_DECREF(exc);
            return NULL;
        }
        Py_DECREF(values[i]);
    }
    PyErr_SetObject(error_type, exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *raise_kt(PyObject *module, int code, const kt_error *e)
{
    const char *msg = e->message[0] ? e->message : kt_status_name(code);
    return raise_error(state_of(module)->error, code, msg, NULL, 0, 0, msg);
}

/* A score's error: the compiler-style text with the line and the caret. */
static PyObject *raise_score(PyObject *module, int code, const kt_score_error *e)
{
    if (PyErr_Occurred())    /* Ctrl-C: KeyboardInterrupt, not the render's message */
        return NULL;
    char text[KT_SCORE_PATH_MAX + KT_ERROR_MESSAGE_MAX + 2 * KT_SCORE_LINE_MAX + 64];
    kt_score_error_format(e, text, sizeof text);
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '\n')
        text[--n] = '\0';
    return raise_error(state_of(module)->error, e->code ? e->code : code, text, e->file,
                       e->line, e->col, e->message);
}

/* ---- long work: Ctrl-C and progress ---- */

/* What the engine's callbacks see, without the GIL: a Python callable for
 * progress (or NULL) and the last whole percent it was told. */
typedef struct watcher {
    PyObject *progress;
    int percent;
} watcher;

/* Polled by the engine every step: Ctrl-C (a pending signal) stops it. */
static int interrupted(void *user)
{
    (void)user;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = PyErr_CheckSignals() < 0;
    PyGILState_Release(g);
    return stop;
}

/* progress(done, total) once a percent; an exception in it stops the work
 * and is raised. */
static int report(void *user, int64_t done, int64_t total)
{
    watcher *w = user;
    int percent = total > 0 ? (int)(100 * done / total) : 100;
    if (!w->progress || percent == w->percent)
        return interrupted(user);
    w->percent = percent;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *r = PyObject_CallFunction(w->progress, "LL", (long long)done, (long long)total);
    int stop = !r || PyErr_CheckSignals() < 0;
    Py_XDECREF(r);
    PyGILState_Release(g);
    return stop;
}

static int check_callable(PyObject *progress)
{
    if (progress == Py_None || progress == NULL || PyCallable_Check(progress))
        return 0;
    PyErr_SetString(PyExc_TypeError, "progress must be callable as progress(done, total)");
    return -1;
}

/* ---- rendering a score ---- */

/* The performance from a .csd, an orchestra and a .sco or .mid, or .csd text. */
static int load_score(kt_performance *perf, const char *csd, const char *orc, const char *sco,
                      const char *text, const char *text_name, kt_score_error *err)
{
    if (text)
        return kt_score_parse_csd(perf, text_name ? text_name : "<text>", text, err);
    if (csd)
        return kt_score_load_csd(perf, csd, err);
    if (orc && sco) {
        size_t n = strlen(sco);
        if (n > 4 && (strcmp(sco + n - 4, ".mid") == 0 || strcmp(sco + n - 4, ".MID") == 0))
            return kt_score_load_midi(perf, orc, sco, err);
        return kt_score_load(perf, orc, sco, err);
    }
    memset(err, 0, sizeof *err);
    err->code = KT_EINVAL;
    snprintf(err->message, sizeof err->message,
             "name a .csd, an orchestra and a score, or give the .csd's text");
    return KT_EINVAL;
}

static int parse_device(const char *name, kt_device *device)
{
    static const char *names[] = {"auto", "cpu", "gpu"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, names[i]) == 0) {
            *device = (kt_device)i;
            return 0;
        }
    return -1;
}

static PyObject *result_dict(const kt_render_result *r)
{
    return Py_BuildValue(
        "{s:d,s:d,s:d,s:L,s:d,s:d,s:d,s:i,s:s,s:s,s:(iii),s:d}", "sample_rate_hz",
        r->sample_rate_hz, "output_rate_hz", r->output_rate_hz, "duration_s", r->duration_s,
        "steps", (long long)r->steps, "setup_s", r->setup_s, "run_s", r->run_s, "tuning_s",
        r->tuning_s, "channels", r->channels, "device", r->device, "format",
        kt_timpani_format_name((kt_timpani_format)r->timpani_format), "grid", r->grid.nx,
        r->grid.ny, r->grid.nz, "spacing_m", r->grid.spacing_m);
}

/* render(csd=None, orchestra=None, score=None, text=None, text_name=None,
 *        out=None, sample_rate=0, until=0, tail=-1, threads=0,
 *        device="auto", tuning="calibrated", tuning_cache=None, progress=None)
 * out given: writes the file and returns the result's dict; else returns
 * (bytearray of channels x frames doubles in pascals, channels, frames,
 * sample rate, microphone names, result dict). */
static PyObject *py_render(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"csd", "orchestra", "score", "text", "text_name", "out",
                             "sample_rate", "until", "tail", "threads", "device", "tuning",
                             "tuning_cache", "progress", NULL};
    PyObject *progress = NULL;
    const char *csd = NULL, *orc = NULL, *sco = NULL, *text = NULL, *text_name = NULL;
    const char *out = NULL, *device = "auto", *tuning = "calibrated", *cache = NULL;
    double rate = 0, until = 0, tail = -1;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zzzzzzdddisszO", kwlist, &csd, &orc, &sco,
                                     &text, &text_name, &out, &rate, &until, &tail, &threads,
                                     &device, &tuning, &cache, &progress) ||
        check_callable(progress) < 0)
        return NULL;
    watcher w = {progress == Py_None ? NULL : progress, -1};
    kt_render_options opt;
    kt_render_options_default(&opt);
    opt.sample_rate_hz = rate;
    opt.until_s = until;
    opt.tail_s = tail;
    opt.nthreads = threads;
    opt.tuning_cache = cache;
    opt.stop = interrupted;
    opt.progress = report;
    opt.user = &w;
    if (parse_device(device, &opt.device) < 0)
        return PyErr_Format(PyExc_ValueError, "device must be auto, cpu or gpu, not %s", device);
    if (strcmp(tuning, "calibrated") != 0 && strcmp(tuning, "formula") != 0)
        return PyErr_Format(PyExc_ValueError, "tuning must be calibrated or formula, not %s",
                            tuning);
    opt.tuning = strcmp(tuning, "formula") == 0;

    kt_performance perf;
    kt_performance_init(&perf);
    kt_score_error err;
    memset(&err, 0, sizeof err);
    kt_render_result res;
    memset(&res, 0, sizeof res);
    kt_render_audio audio;
    memset(&audio, 0, sizeof audio);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = load_score(&perf, csd, orc, sco, text, text_name, &err);
    if (rc == 0)
        rc = out ? kt_render(&perf, out, &opt, &res, &err)
                 : kt_render_to_memory(&perf, &opt, &audio, &res, &err);
    Py_END_ALLOW_THREADS
    PyObject *value = NULL;
    if (rc < 0) {
        raise_score(module, rc, &err);
    } else if (out) {
        value = result_dict(&res);
    } else {
        Py_ssize_t bytes = (Py_ssize_t)((size_t)audio.channels * (size_t)audio.frames *
                                        sizeof(double));
        PyObject *samples = PyByteArray_FromStringAndSize(NULL, bytes);
        PyObject *names = PyList_New(perf.mic_count);
        PyObject *info = result_dict(&res);
        if (samples && names && info) {
            memcpy(PyByteArray_AS_STRING(samples), audio.pascals, (size_t)bytes);
            for (int m = 0; m < perf.mic_count; m++)
                PyList_SET_ITEM(names, m, PyUnicode_FromString(perf.mics[m].name));
            value = Py_BuildValue("(OiLdOO)", samples, audio.channels, (long long)audio.frames,
                                  audio.sample_rate_hz, names, info);
        }
        Py_XDECREF(samples);
        Py_XDECREF(names);
        Py_XDECREF(info);
    }
    kt_render_audio_free(&audio);
    kt_render_result_free(&res);
    kt_performance_free(&perf);
    return value;
}

/* ---- rooms ---- */

typedef struct room_object {
    PyObject_HEAD
    kt_room *room;
    PyObject *module;
} room_object;

typedef struct timpani_object {
    PyObject_HEAD
    kt_timpani *drum;
    room_object *room;      /* kept alive: the room owns and frees the drum */
} timpani_object;

static int read_position(PyObject *seq, double pos[3])
{
    PyObject *fast = PySequence_Fast(seq, "a position is three numbers (metres)");
    if (!fast)
        return -1;
    int rc = 0;
    if (PySequence_Fast_GET_SIZE(fast) != 3) {
        PyErr_SetString(PyExc_ValueError, "a position is three numbers (metres)");
        rc = -1;
    }
    for (int i = 0; i < 3 && rc == 0; i++) {
        pos[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, i));
        rc = PyErr_Occurred() ? -1 : 0;
    }
    Py_DECREF(fast);
    return rc;
}

static int room_ready(room_object *self)
{
    if (self->room)
        return 0;
    PyErr_SetString(PyExc_RuntimeError, "the room was closed");
    return -1;
}

/* Room(size_m=(1, 1, 1), sample_rate=44100, wall_beta=0, scheme="standard",
 *      reach=0, precision="double", threads=0) */
static int room_init(room_object *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"size_m", "sample_rate", "wall_beta", "scheme", "reach",
                             "precision", "threads", NULL};
    PyObject *size = NULL;
    kt_room_params p;
    kt_room_params_default(&p);
    const char *scheme = "standard", *precision = "double";
    int reach = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Oddsisi", kwlist, &size, &p.sample_rate_hz,
                                     &p.wall_beta, &scheme, &reach, &precision, &p.nthreads))
        return -1;
    if (self->room) {
        PyErr_SetString(PyExc_RuntimeError, "a Room is made once");
        return -1;
    }
    if (size && read_position(size, p.size_m) < 0)
        return -1;
    if (strcmp(precision, "double") != 0 && strcmp(precision, "single") != 0) {
        PyErr_Format(PyExc_ValueError, "precision must be double or single, not %s", precision);
        return -1;
    }
    p.precision = strcmp(precision, "single") == 0 ? KT_SINGLE : KT_DOUBLE;
    kt_error e;
    kt_error_clear(&e);
    PyObject *module = self->module;
    int rc = kt_room_scheme_set(&p, scheme, reach, &e);
    if (rc == 0) {
        kt_room *room = NULL;
        Py_BEGIN_ALLOW_THREADS
        rc = kt_room_create(&p, &room, &e);
        Py_END_ALLOW_THREADS
        self->room = room;
    }
    if (rc < 0) {
        raise_kt(module, rc, &e);
        return -1;
    }
    return 0;
}

static void room_dealloc(room_object *self)
{
    PyTypeObject *type = Py_TYPE(self);
    if (self->room)
        kt_room_destroy(self->room);
    Py_XDECREF(self->module);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyObject *room_add_mic(room_object *self, PyObject *args)
{
    const char *name;
    PyObject *where;
    double pos[3];
    if (!PyArg_ParseTuple(args, "sO", &name, &where) || read_position(where, pos) < 0 ||
        room_ready(self) < 0)
        return NULL;
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_room_add_mic(self->room, name, pos, &e);
    return rc < 0 ? raise_kt(self->module, rc, &e) : PyLong_FromLong(rc);
}

static PyObject *room_add_impulse(room_object *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"pos_m", "start_s", "duration_s", "amplitude", NULL};
    PyObject *where;
    double pos[3], start = 0, duration = 0.5e-3, amplitude = 1e-3;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|ddd", kwlist, &where, &start, &duration,
                                     &amplitude) ||
        read_position(where, pos) < 0 || room_ready(self) < 0)
        return NULL;
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_room_add_impulse(self->room, pos, start, duration, amplitude, &e);
    return rc < 0 ? raise_kt(self->module, rc, &e) : Py_NewRef(Py_None);
}

/* add_timpani(inches=29, centre_m=None, tension=0, pitch_hz=0, format=None,
 *             name=None): a standard drum, tuned by tension or by the
 *             formula's pitch (kt_timpani_tension_for_pitch). */
static PyObject *room_add_timpani(room_object *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"inches", "centre_m", "tension", "pitch_hz", "format", "name",
                             NULL};
    int inches = 29;
    PyObject *centre = NULL;
    double tension = 0, pitch = 0;
    const char *format = NULL, *name = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|iOddzz", kwlist, &inches, &centre, &tension,
                                     &pitch, &format, &name) ||
        room_ready(self) < 0)
        return NULL;
    kt_timpani_params p;
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_timpani_params_standard(&p, inches, &e);
    if (rc == 0 && centre && read_position(centre, p.rim_centre_m) < 0)
        return NULL;
    if (rc == 0 && format)
        rc = kt_timpani_format_parse(format, &p.format, &e);
    if (name)
        snprintf(p.name, sizeof p.name, "%s", name);
    if (tension > 0)
        p.tension_N_per_m = tension;
    else if (pitch > 0)
        p.tension_N_per_m = kt_timpani_tension_for_pitch(p.diameter_m / 2,
                                                         p.surface_density_kg_per_m2, pitch);
    kt_timpani *drum = NULL;
    if (rc == 0) {
        Py_BEGIN_ALLOW_THREADS
        rc = createTimpani(self->room, &p, &drum, &e);
        Py_END_ALLOW_THREADS
    }
    if (rc < 0)
        return raise_kt(self->module, rc, &e);
    module_state *st = state_of(self->module);
    timpani_object *t = PyObject_New(timpani_object, st->timpani_type);
    if (!t)
        return NULL;
    t->drum = drum;
    t->room = (room_object *)Py_NewRef(self);
    return (PyObject *)t;
}

/* run(steps, progress=None): steps the room; Ctrl-C stops it between steps. */
static PyObject *room_run(room_object *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"steps", "progress", NULL};
    long long steps;
    PyObject *progress = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "L|O", kwlist, &steps, &progress) ||
        check_callable(progress) < 0 || room_ready(self) < 0)
        return NULL;
    watcher w = {progress == Py_None ? NULL : progress, -1};
    kt_error e;
    kt_error_clear(&e);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = kt_room_run(self->room, steps, report, &w, &e);
    Py_END_ALLOW_THREADS
    if (rc < 0 && PyErr_Occurred())
        return NULL;
    return rc < 0 ? raise_kt(self->module, rc, &e) : Py_NewRef(Py_None);
}

/* signal(mic): the microphone's pressure (Pa) as a bytearray of doubles. */
static PyObject *room_signal(room_object *self, PyObject *args)
{
    int mic;
    if (!PyArg_ParseTuple(args, "i", &mic) || room_ready(self) < 0)
        return NULL;
    if (mic < 0 || mic >= kt_room_mic_count(self->room))
        return PyErr_Format(PyExc_IndexError, "no microphone %d (the room has %d)", mic,
                            kt_room_mic_count(self->room));
    int64_t n = 0;
    const double *x = kt_room_mic_signal(self->room, mic, &n);
    return PyByteArray_FromStringAndSize((const char *)x, (Py_ssize_t)(n * (int64_t)sizeof *x));
}

static PyObject *room_mic_names(room_object *self, PyObject *unused)
{
    (void)unused;
    if (room_ready(self) < 0)
        return NULL;
    int n = kt_room_mic_count(self->room);
    PyObject *names = PyList_New(n);
    for (int m = 0; names && m < n; m++)
        PyList_SET_ITEM(names, m, PyUnicode_FromString(kt_room_mic_name(self->room, m)));
    return names;
}

/* write(path, normalize=False): the microphones to WAV/AIFF/FLAC, one channel each. */
static PyObject *room_write(room_object *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "normalize", NULL};
    PyObject *path = NULL;    /* bytes, from str or os.PathLike */
    int normalize = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|p", kwlist, PyUnicode_FSConverter, &path,
                                     &normalize))
        return NULL;
    if (room_ready(self) < 0) {
        Py_DECREF(path);
        return NULL;
    }
    kt_output_options o;
    kt_output_options_default(&o);
    o.interleaved = 1;
    o.normalize = normalize;
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_room_write_audio(self->room, PyBytes_AS_STRING(path), &o, NULL, &e);
    Py_DECREF(path);
    return rc < 0 ? raise_kt(self->module, rc, &e) : Py_NewRef(Py_None);
}

static PyObject *room_grid(room_object *self, PyObject *unused)
{
    (void)unused;
    if (room_ready(self) < 0)
        return NULL;
    const kt_room_grid *g = kt_room_get_grid(self->room);
    return Py_BuildValue("{s:(iii),s:d,s:d,s:d,s:n,s:L}", "nodes", g->nx, g->ny, g->nz,
                         "spacing_m", g->spacing_m, "time_step_s", g->time_step_s, "courant",
                         g->courant, "bytes", (Py_ssize_t)g->bytes, "steps",
                         (long long)kt_room_step_index(self->room));
}

static PyObject *room_energy(room_object *self, PyObject *unused)
{
    (void)unused;
    if (room_ready(self) < 0)
        return NULL;
    return PyFloat_FromDouble(kt_room_total_energy(self->room));
}

static PyObject *room_close(room_object *self, PyObject *unused)
{
    (void)unused;
    /* drums still referenced keep the room object, not its engine: they
     * then refuse to work (timpani_ready) */
    kt_room_destroy(self->room);
    self->room = NULL;
    return Py_NewRef(Py_None);
}

static PyMethodDef room_methods[] = {
    {"add_mic", (PyCFunction)room_add_mic, METH_VARARGS, "add_mic(name, pos_m) -> index"},
    {"add_impulse", (PyCFunction)(void (*)(void))room_add_impulse, METH_VARARGS | METH_KEYWORDS,
     "add_impulse(pos_m, start_s=0, duration_s=5e-4, amplitude=1e-3)"},
    {"add_timpani", (PyCFunction)(void (*)(void))room_add_timpani, METH_VARARGS | METH_KEYWORDS,
     "add_timpani(inches=29, centre_m=None, tension=0, pitch_hz=0, format=None, name=None)"},
    {"run", (PyCFunction)(void (*)(void))room_run, METH_VARARGS | METH_KEYWORDS,
     "run(steps, progress=None): progress(done, total) is called once a percent"},
    {"signal", (PyCFunction)room_signal, METH_VARARGS, "signal(mic) -> bytearray of doubles"},
    {"mic_names", (PyCFunction)room_mic_names, METH_NOARGS, "the microphones' names"},
    {"write", (PyCFunction)(void (*)(void))room_write, METH_VARARGS | METH_KEYWORDS,
     "write(path, normalize=False)"},
    {"grid", (PyCFunction)room_grid, METH_NOARGS, "the grid as a dict"},
    {"energy", (PyCFunction)room_energy, METH_NOARGS, "discrete energy (J), air and drums"},
    {"close", (PyCFunction)room_close, METH_NOARGS, "free the room now"},
    {NULL, NULL, 0, NULL},
};

static PyObject *room_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args;
    (void)kw;
    room_object *self = (room_object *)type->tp_alloc(type, 0);
    if (self) {
        /* the module, for its error class (kettle.Room is a subclass) */
        self->module = Py_XNewRef(PyType_GetModuleByDef(type, &module_def));
        if (!self->module) {
            Py_DECREF(self);
            return NULL;
        }
    }
    return (PyObject *)self;
}

static PyType_Slot room_slots[] = {
    {Py_tp_new, room_new},
    {Py_tp_init, room_init},
    {Py_tp_dealloc, room_dealloc},
    {Py_tp_methods, room_methods},
    {Py_tp_doc, "Room(size_m=(1, 1, 1), sample_rate=44100, wall_beta=0, scheme='standard', "
                "reach=0, precision='double', threads=0): a box of air (kettle.h)"},
    {0, NULL},
};

static PyType_Spec room_spec = {"kettle._kettle.Room", sizeof(room_object), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, room_slots};

/* ---- drums ---- */

static int timpani_ready(timpani_object *self)
{
    return room_ready(self->room);
}

static void timpani_dealloc(timpani_object *self)
{
    PyTypeObject *type = Py_TYPE(self);
    Py_XDECREF(self->room);
    PyObject_Free(self);
    Py_DECREF(type);
}

/* strike(start_s, force_N, contact_s=2e-3, x_m=0, y_m=0) */
static PyObject *timpani_strike(timpani_object *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"start_s", "force_N", "contact_s", "x_m", "y_m", NULL};
    double start, force, contact = 2e-3, x = 0, y = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "dd|ddd", kwlist, &start, &force, &contact, &x,
                                     &y) ||
        timpani_ready(self) < 0)
        return NULL;
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_timpani_strike(self->drum, start, force, contact, x, y, &e);
    return rc < 0 ? raise_kt(self->room->module, rc, &e) : Py_NewRef(Py_None);
}

static PyObject *timpani_set_tension(timpani_object *self, PyObject *args)
{
    double tension;
    if (!PyArg_ParseTuple(args, "d", &tension) || timpani_ready(self) < 0)
        return NULL;
    kt_error e;
    kt_error_clear(&e);
    int rc = kt_timpani_set_tension(self->drum, tension, &e);
    return rc < 0 ? raise_kt(self->room->module, rc, &e) : Py_NewRef(Py_None);
}

static PyObject *timpani_info(timpani_object *self, PyObject *unused)
{
    (void)unused;
    if (timpani_ready(self) < 0)
        return NULL;
    kt_timpani_info i;
    kt_timpani_get_info(self->drum, &i);
    return Py_BuildValue("{s:i,s:i,s:d,s:(ii),s:i,s:(ii),s:d}", "membrane_n", i.membrane_n,
                         "membrane_inside", i.membrane_inside, "membrane_spacing_m",
                         i.membrane_spacing_m, "window", i.window_nx, i.window_ny,
                         "boundary_rows", i.boundary_rows, "layers", i.layer_below,
                         i.layer_above, "energy_J", kt_timpani_energy(self->drum));
}

/* displacement(): u^n (m) as a bytearray of n x n doubles. */
static PyObject *timpani_displacement(timpani_object *self, PyObject *unused)
{
    (void)unused;
    if (timpani_ready(self) < 0)
        return NULL;
    kt_timpani_info i;
    kt_timpani_get_info(self->drum, &i);
    size_t n = (size_t)i.membrane_n * (size_t)i.membrane_n;
    return Py_BuildValue("(Ni)",
                         PyByteArray_FromStringAndSize(
                             (const char *)kt_timpani_displacement(self->drum),
                             (Py_ssize_t)(n * sizeof(double))),
                         i.membrane_n);
}

static PyMethodDef timpani_methods[] = {
    {"strike", (PyCFunction)(void (*)(void))timpani_strike, METH_VARARGS | METH_KEYWORDS,
     "strike(start_s, force_N, contact_s=2e-3, x_m=0, y_m=0)"},
    {"set_tension", (PyCFunction)timpani_set_tension, METH_VARARGS, "set_tension(N_per_m)"},
    {"info", (PyCFunction)timpani_info, METH_NOARGS, "grid sizes and energy as a dict"},
    {"displacement", (PyCFunction)timpani_displacement, METH_NOARGS,
     "(bytearray of n x n doubles, n): the membrane's displacement"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot timpani_slots[] = {
    {Py_tp_dealloc, timpani_dealloc},
    {Py_tp_methods, timpani_methods},
    {Py_tp_doc, "A kettledrum in a Room (Room.add_timpani; timpani.h)"},
    {0, NULL},
};

static PyType_Spec timpani_spec = {"kettle._kettle.Timpani", sizeof(timpani_object), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                   timpani_slots};

/* ---- the module ---- */

static PyMethodDef module_methods[] = {
    {"render", (PyCFunction)(void (*)(void))py_render, METH_VARARGS | METH_KEYWORDS,
     "render(csd=None, orchestra=None, score=None, text=None, text_name=None, out=None, "
     "sample_rate=0, until=0, tail=-1, threads=0, device='auto', tuning='calibrated', "
     "tuning_cache=None, progress=None)"},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *m)
{
    module_state *st = state_of(m);
    st->error = PyErr_NewExceptionWithDoc(
        "kettle.KettleError",
        "An error from Kettle: str() is its message (for a score, file:line:col: error: ... "
        "with the line); .code and .status name the kt_status, .file, .line and .col the "
        "place in a score (None and 0 elsewhere), .message the bare message.",
        PyExc_RuntimeError, NULL);
    st->room_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &room_spec, NULL);
    st->timpani_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &timpani_spec, NULL);
    if (!st->error || !st->room_type || !st->timpani_type ||
        PyModule_AddObjectRef(m, "KettleError", st->error) < 0 ||
        PyModule_AddObjectRef(m, "Room", (PyObject *)st->room_type) < 0 ||
        PyModule_AddObjectRef(m, "Timpani", (PyObject *)st->timpani_type) < 0 ||
        PyModule_AddStringConstant(m, "version", KT_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "cuda", KETTLE_CUDA_ENABLED) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
    module_state *st = state_of(m);
    Py_VISIT(st->error);
    Py_VISIT(st->room_type);
    Py_VISIT(st->timpani_type);
    return 0;
}

static int module_clear(PyObject *m)
{
    module_state *st = state_of(m);
    Py_CLEAR(st->error);
    Py_CLEAR(st->room_type);
    Py_CLEAR(st->timpani_type);
    return 0;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_kettle", "Kettle's C engine (see the kettle package).",
    sizeof(module_state), module_methods, module_slots, module_traverse, module_clear, NULL,
};

PyMODINIT_FUNC PyInit__kettle(void)
{
    return PyModuleDef_Init(&module_def);
}
