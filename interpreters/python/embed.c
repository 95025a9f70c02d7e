/*
 * The embedding of CPython that Skillbox runs skills in (see internal/cpython).
 *
 * wizer.initialize runs once, at build time, under Wizer: it initialises the interpreter in
 * isolated mode and imports the driver module (skillbox.py) and the standard modules most skills
 * use, then Wizer writes the initialised memory into the module. Every run then starts in main,
 * with the interpreter ready: main hands its arguments to skillbox._main, which runs the skill.
 *
 * The builtin module _skillbox is the driver's channel to the host, over functions the module
 * imports from "skillbox" (the runner defines them; Wizer gets stand-ins that trap):
 *
 *   call(req_ptr, req_len) -> reply_len   the host answers the request; -1 when it cannot
 *   reply(buf_ptr, buf_len) -> n          copies the pending reply into guest memory
 *   done(ptr, len)                        the outcome of the run, once, as JSON
 *
 * # Notes
 *
 * The host-side copy of the preopened directory Wizer mapped (the standard library, fd 3) stays
 * in wasi-libc's preopen table in the snapshot, and _start registers the run's preopens after it.
 * A path matching two entries equally resolves to the first, so the runner mounts the standard
 * library first, at the same guest path, and fd 3 means the same at both times.
 */
#include <Python.h>
#include <locale.h>
#include <stdint.h>
#include <string.h>
#include <wasi/api.h>

__attribute__((import_module("skillbox"), import_name("call")))
int32_t skillbox_call(const void *req, int32_t req_len);
__attribute__((import_module("skillbox"), import_name("reply")))
int32_t skillbox_reply(void *buf, int32_t buf_len);
__attribute__((import_module("skillbox"), import_name("done")))
void skillbox_done(const void *buf, int32_t len);

/* _skillbox.call(request: bytes) -> bytes */
static PyObject *sb_call(PyObject *self, PyObject *arg) {
    Py_buffer req;
    if (PyObject_GetBuffer(arg, &req, PyBUF_SIMPLE) < 0)
        return NULL;
    if (req.len > INT32_MAX) {
        PyBuffer_Release(&req);
        PyErr_SetString(PyExc_OverflowError, "_skillbox.call: request too large");
        return NULL;
    }
    int32_t n = skillbox_call(req.buf, (int32_t)req.len);
    PyBuffer_Release(&req);
    if (n < 0) {
        PyErr_SetString(PyExc_RuntimeError, "_skillbox.call: the host did not answer");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL)
        return NULL;
    if (n > 0 && skillbox_reply(PyBytes_AS_STRING(out), n) != n) {
        Py_DECREF(out);
        PyErr_SetString(PyExc_RuntimeError, "_skillbox.call: the host's reply was cut short");
        return NULL;
    }
    return out;
}

/* _skillbox.done(outcome: bytes) -> None */
static PyObject *sb_done(PyObject *self, PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    if (b.len > INT32_MAX) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_OverflowError, "_skillbox.done: outcome too large");
        return NULL;
    }
    skillbox_done(b.buf, (int32_t)b.len);
    PyBuffer_Release(&b);
    Py_RETURN_NONE;
}

static PyMethodDef sb_methods[] = {
    {"call", sb_call, METH_O, "call(request: bytes) -> bytes: one SkillContext request to the host."},
    {"done", sb_done, METH_O, "done(outcome: bytes): the run's outcome, as JSON."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef sb_module = {
    PyModuleDef_HEAD_INIT, "_skillbox", "The channel to the Skillbox host.", -1, sb_methods,
};

static PyObject *sb_init(void) { return PyModule_Create(&sb_module); }

/* lxml's extension modules (Cython-generated C, built by build.sh with libxml2 and libxslt),
 * compiled in: WASI has no dlopen. They are builtin modules under their dotted names; the pure
 * Python package lxml is in the standard library, and the driver's _Builtin finder imports them
 * as its submodules (CPython 3.11's BuiltinImporter looks at top-level names only). */
PyMODINIT_FUNC PyInit_etree(void);
PyMODINIT_FUNC PyInit_objectify(void);
/* Pillow's (over zlib), the same way: PIL is in the standard library, these are its C. */
PyMODINIT_FUNC PyInit__imaging(void);
PyMODINIT_FUNC PyInit__imagingmath(void);
PyMODINIT_FUNC PyInit__imagingmorph(void);

static int initialised = 0;

/* While Wizer runs skillbox_initialize, the clock and the random source are fixed: what the
 * initialisation draws from them (the random module's seed, the bytes freed blocks are left
 * holding) is written into the snapshot, and two builds of the same inputs should make the same
 * python.wasm. The link wraps wasi-libc's calls (-Wl,--wrap); once initialised is set, in the
 * snapshot, every run gets the host's (TestRunSeesTheHostsClockAndRandomness). Nothing drawn
 * here would stay secret anyway: the snapshot is public, and each run reseeds the random module
 * (skillbox.py). */
__wasi_errno_t __real___wasi_random_get(uint8_t *buf, __wasi_size_t len);
__wasi_errno_t __real___wasi_clock_time_get(__wasi_clockid_t id, __wasi_timestamp_t precision,
                                            __wasi_timestamp_t *time);

__wasi_errno_t __wrap___wasi_random_get(uint8_t *buf, __wasi_size_t len) {
    static uint64_t state = 0x9e3779b97f4a7c15u;
    if (initialised)
        return __real___wasi_random_get(buf, len);
    for (__wasi_size_t i = 0; i < len; i++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        buf[i] = (uint8_t)(state >> 56);
    }
    return 0;
}

__wasi_errno_t __wrap___wasi_clock_time_get(__wasi_clockid_t id, __wasi_timestamp_t precision,
                                            __wasi_timestamp_t *time) {
    static __wasi_timestamp_t now = 315532800ull * 1000000000ull; /* 1980, the zip format's epoch */
    if (initialised)
        return __real___wasi_clock_time_get(id, precision, time);
    *time = now += 1000;
    return 0;
}

/* The same for what the build machine's files say of themselves: their times, device and inode
 * numbers, which differ from one checkout or machine to the next. */
static void fixed_stat(__wasi_filestat_t *st) {
    st->dev = 0;
    st->ino = 0;
    st->atim = st->mtim = st->ctim = 315532800ull * 1000000000ull;
}

__wasi_errno_t __real___wasi_path_filestat_get(__wasi_fd_t fd, __wasi_lookupflags_t flags,
                                               const char *path, __wasi_filestat_t *st);
__wasi_errno_t __real___wasi_fd_filestat_get(__wasi_fd_t fd, __wasi_filestat_t *st);
__wasi_errno_t __real___wasi_fd_readdir(__wasi_fd_t fd, uint8_t *buf, __wasi_size_t len,
                                        __wasi_dircookie_t cookie, __wasi_size_t *used);

__wasi_errno_t __wrap___wasi_path_filestat_get(__wasi_fd_t fd, __wasi_lookupflags_t flags,
                                               const char *path, __wasi_filestat_t *st) {
    __wasi_errno_t e = __real___wasi_path_filestat_get(fd, flags, path, st);
    if (!initialised && e == 0)
        fixed_stat(st);
    return e;
}

__wasi_errno_t __wrap___wasi_fd_filestat_get(__wasi_fd_t fd, __wasi_filestat_t *st) {
    __wasi_errno_t e = __real___wasi_fd_filestat_get(fd, st);
    if (!initialised && e == 0)
        fixed_stat(st);
    return e;
}

__wasi_errno_t __wrap___wasi_fd_readdir(__wasi_fd_t fd, uint8_t *buf, __wasi_size_t len,
                                        __wasi_dircookie_t cookie, __wasi_size_t *used) {
    __wasi_errno_t e = __real___wasi_fd_readdir(fd, buf, len, cookie, used);
    if (initialised || e != 0)
        return e;
    for (size_t off = 0; off + sizeof(__wasi_dirent_t) <= *used;) {
        __wasi_dirent_t d;
        memcpy(&d, buf + off, sizeof d);
        d.d_ino = 0;
        memcpy(buf + off, &d, sizeof d);
        off += sizeof d + d.d_namlen;
    }
    return e;
}

static void fail(PyStatus st) {
    if (PyStatus_Exception(st))
        Py_ExitStatusException(st);
}

__attribute__((export_name("wizer.initialize")))
void skillbox_initialize(void) {
    if (PyImport_AppendInittab("_skillbox", sb_init) < 0 ||
        PyImport_AppendInittab("lxml.etree", PyInit_etree) < 0 ||
        PyImport_AppendInittab("lxml.objectify", PyInit_objectify) < 0 ||
        PyImport_AppendInittab("PIL._imaging", PyInit__imaging) < 0 ||
        PyImport_AppendInittab("PIL._imagingmath", PyInit__imagingmath) < 0 ||
        PyImport_AppendInittab("PIL._imagingmorph", PyInit__imagingmorph) < 0)
        abort();
    /* LC_CTYPE C.UTF-8 (Python's isolated configuration leaves the locale alone): wasi-libc's
     * iconv, which libxml2 converts other encodings with, reads and writes UTF-8 through the
     * locale's mbrtowc/wcrtomb, and in the "C" locale it turns every non-ASCII character into
     * garbage ("*", or a parse error). */
    if (setlocale(LC_CTYPE, "C.UTF-8") == NULL)
        abort();
    /* UTF-8 mode: the guest has no locale (WASI's is "C"), and without it open(), print and file
     * names would be ASCII, so any non-ASCII text a skill writes would raise. */
    PyPreConfig pre;
    PyPreConfig_InitIsolatedConfig(&pre);
    pre.utf8_mode = 1;
    fail(Py_PreInitialize(&pre));
    PyConfig c;
    PyConfig_InitIsolatedConfig(&c);
    /* The standard library is /usr/local/lib/python3.11 and nothing else: no zip to look for, no
     * site-packages, no bytecode written, no signal handlers, stdio unbuffered (output reaches the
     * host even when the run is stopped). */
    fail(PyConfig_SetString(&c, &c.home, L"/usr/local"));
    fail(PyConfig_SetString(&c, &c.program_name, L"python3"));
    c.module_search_paths_set = 1;
    fail(PyWideStringList_Append(&c.module_search_paths, L"/usr/local/lib/python3.11"));
    c.site_import = 0;
    c.write_bytecode = 0;
    c.install_signal_handlers = 0;
    c.buffered_stdio = 0;
    c.parse_argv = 0;
    c.pathconfig_warnings = 0;
    /* A fixed hash seed (PYTHONHASHSEED=0): the snapshot holds the str and bytes hash secret, and
     * every dict and set built in it, so each run has the secret the build drew anyway; drawing
     * it at random only made two builds of the same inputs differ. */
    c.use_hash_seed = 1;
    c.hash_seed = 0;
    fail(Py_InitializeFromConfig(&c));
    PyConfig_Clear(&c);
    if (PyRun_SimpleString("import skillbox; skillbox._preload()") != 0)
        abort();
    initialised = 1;
}

int main(int argc, char **argv) {
    if (!initialised)
        skillbox_initialize();
    PyObject *args = PyList_New(argc);
    if (args == NULL)
        return 70;
    for (int i = 0; i < argc; i++) {
        PyObject *s = PyUnicode_DecodeFSDefault(argv[i]);
        if (s == NULL)
            return 70;
        PyList_SET_ITEM(args, i, s);
    }
    PyObject *mod = PyImport_ImportModule("skillbox");
    PyObject *res = mod ? PyObject_CallMethod(mod, "_main", "O", args) : NULL;
    if (res == NULL) {
        PyErr_Print();
        return 70;
    }
    long rc = PyLong_AsLong(res);
    if (rc == -1 && PyErr_Occurred()) {
        PyErr_Print();
        return 70;
    }
    /* No Py_Finalize: the instance is thrown away after the run. */
    return (int)rc;
}
