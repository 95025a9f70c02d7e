"""Skillbox: the SkillContext of a Python skill, and the driver that runs it.

A skill is a directory with execute.py, which defines::

    def execute(args, ctx):
        return {"hello": args["name"]}

args is the validated arguments object; ctx is a Context: fetch, env, read_file, write_file and
log, each answered by the Skillbox host under the skill's grants. A refusal raises
PermissionDenied; the other failures raise the other SkillboxError classes below. Import them
with ``from skillbox import PermissionDenied``.

This module is imported once, when the interpreter is snapshotted at build time; every run then
calls _main in a fresh copy of that snapshot.
"""

import base64
import json
import json.encoder
import sys

import _skillbox

__all__ = ["Context", "Response", "SkillboxError", "PermissionDenied", "NotFound",
           "InvalidRequest", "LimitExceeded", "HostError", "HostTimeout"]


class SkillboxError(Exception):
    """A SkillContext operation the host did not carry out. status names why, as the host
    reported it ("denied", "not_found", "invalid", "limit", "timeout", "failed")."""

    status = "failed"


class PermissionDenied(SkillboxError):
    """The skill's grants do not allow the operation. Uncaught, it ends the run as
    permission_denied."""

    status = "denied"


class NotFound(SkillboxError):
    status = "not_found"


class InvalidRequest(SkillboxError):
    status = "invalid"


class LimitExceeded(SkillboxError):
    status = "limit"


class HostError(SkillboxError):
    status = "failed"


class HostTimeout(SkillboxError, TimeoutError):
    """The host did not answer within the operation's timeout."""

    status = "timeout"


_ERRORS = {c.status: c for c in (PermissionDenied, NotFound, InvalidRequest, LimitExceeded,
                                  HostError, HostTimeout)}


# The request encoder and reply decoder are made once (json.dumps and json.loads make an
# encoder or run two regular expressions per call: most of a host call's time in this build).
_encode = json.encoder.c_make_encoder(None, None, json.encoder.encode_basestring_ascii, None,
                                      ":", ",", False, False, True)
_decode = json.JSONDecoder().raw_decode


def _call(op, req):
    req["op"] = op
    reply = _decode(_skillbox.call("".join(_encode(req, 0)).encode()).decode())[0]
    err = reply.get("error")
    if err is not None:
        cls = _ERRORS.get(reply.get("status"), HostError)
        raise cls(err)
    return reply.get("value")


class Response:
    """The answer to ctx.fetch: status, headers (lower-case names), body (text), url."""

    __slots__ = ("status", "headers", "body", "url")

    def __init__(self, status, headers, body, url):
        self.status, self.headers, self.body, self.url = status, headers, body, url

    @property
    def ok(self):
        return 200 <= self.status < 300

    def json(self):
        """The body parsed as JSON."""
        return json.loads(self.body)

    def __repr__(self):
        return f"<Response {self.status} {self.url}>"


class _Env:
    """ctx.env: the environment variables the skill was granted, read-only, None for a name not
    granted. Called (ctx.env("NAME")) or read as an object (ctx.env.NAME, ctx.env["NAME"]), as
    skills written for other runtimes read it. It has no public attribute of its own, so none
    shadows a name."""

    __slots__ = ()

    def __call__(self, name):
        return _call("env", {"name": str(name)})

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # the language's own probes (copy, pickle, ...)
        return self(name)

    def __getitem__(self, name):
        return self(name)

    def __contains__(self, name):
        return self(name) is not None

    def __setattr__(self, *_):
        raise TypeError("ctx.env is read-only")

    __delattr__ = __setitem__ = __delitem__ = __setattr__

    def __repr__(self):
        return "<ctx.env>"


class Context:
    """The SkillContext: what a skill may ask of the host."""

    __slots__ = ()

    env = _Env()

    def fetch(self, url, method="GET", headers=None, body=None):
        """Makes an HTTP request through the host, which checks it against the skill's network
        grant. body may be text, UTF-8 bytes, or a dict or list (sent as JSON)."""
        req = {"url": str(url), "method": str(method).upper()}
        hdrs = {str(k): str(v) for k, v in (headers or {}).items()}
        if isinstance(body, (bytes, bytearray, memoryview)):
            body = bytes(body).decode("utf-8")
        elif isinstance(body, (dict, list)):
            body = json.dumps(body)
            if not any(k.lower() == "content-type" for k in hdrs):
                hdrs["Content-Type"] = "application/json"
        elif body is not None and not isinstance(body, str):
            raise TypeError("fetch: body must be str, bytes, dict or list")
        if hdrs:
            req["headers"] = hdrs
        if body is not None:
            req["body"] = body
        r = _call("fetch", req)
        return Response(r["status"], r.get("headers") or {}, r.get("body") or "", r.get("url") or "")


    def read_file(self, path, binary=False):
        """A file's contents, as text (UTF-8), or as bytes when binary is true."""
        v = _call("readFile", {"path": str(path), "bytes": bool(binary)})
        return base64.b64decode(v) if binary else v

    def write_file(self, path, data):
        """Writes data (str, or bytes) to a file the skill may write."""
        if isinstance(data, str):
            _call("writeFile", {"path": str(path), "data": data})
        elif isinstance(data, (bytes, bytearray, memoryview)):
            _call("writeFile", {"path": str(path), "data64": base64.b64encode(bytes(data)).decode()})
        else:
            raise TypeError("write_file: data must be str or bytes")

    def log(self, message, level="info"):
        """Adds a line to the run's logs; level is debug, info, warn or error."""
        _call("log", {"message": str(message), "level": str(level)})


# --- The sandbox's refusals: clear errors for what can never work here. ---

_NO_NATIVE = "is not available in the Skillbox sandbox: a skill cannot load native code"
_NO_PROCESS = "is not available in the Skillbox sandbox: there are no processes"
_NO_NET = ("is not available in the Skillbox sandbox: there is no network but ctx.fetch(url)")
_REFUSED = {
    "ctypes": _NO_NATIVE, "_ctypes": _NO_NATIVE,
    "multiprocessing": _NO_PROCESS, "_multiprocessing": _NO_PROCESS,
    "_posixsubprocess": _NO_PROCESS, "pty": _NO_PROCESS,
    "concurrent.futures.process": _NO_PROCESS,
    "ssl": _NO_NET, "_ssl": _NO_NET, "ftplib": _NO_NET, "imaplib": _NO_NET, "nntplib": _NO_NET,
    "poplib": _NO_NET, "smtplib": _NO_NET, "telnetlib": _NO_NET,
    "tty": "is not available in the Skillbox sandbox: there is no terminal",
    "termios": "is not available in the Skillbox sandbox: there is no terminal",
    "curses": "is not available in the Skillbox sandbox: there is no terminal",
}


class _Refuse:
    """The first finder on sys.meta_path: names the reason a module cannot be imported."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        why = _REFUSED.get(name)
        if why is not None:
            raise ModuleNotFoundError(f"module {name!r} {why}", name=name)
        return None

    @staticmethod
    def invalidate_caches():
        pass


class _Adapt:
    """A finder on sys.meta_path after _Refuse: loads a standard module the sandbox must adapt
    from where it is, then adapts it (_ADAPT)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        adapt = _ADAPT.get(name)
        if adapt is None:
            return None
        import importlib.machinery
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None:
            spec.loader = _Adapted(spec.loader, adapt)
        return spec

    @staticmethod
    def invalidate_caches():
        pass


class _Builtin:
    """A finder on sys.meta_path after _Adapt: the builtin modules with dotted names (lxml.etree,
    lxml.objectify, PIL._imaging, ...: compiled into the interpreter, their packages lxml and PIL
    in the standard library), which CPython's BuiltinImporter does not look for, as it looks for
    top-level names only."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        import _imp
        if path is None or not _imp.is_builtin(name):
            return None
        import importlib.machinery
        return importlib.machinery.BuiltinImporter.find_spec(name)

    @staticmethod
    def invalidate_caches():
        pass


class _Adapted:
    """A module's loader, which adapts the module once it has run."""

    def __init__(self, loader, adapt):
        self._loader, self._adapt = loader, adapt

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._adapt(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


def _adapt_selector_events(m):
    """asyncio's event loop opens a socket pair to be woken from other threads; there are no
    threads here, nor sockets. Without it, coroutines, tasks, timers and queues run as
    anywhere; what needs a socket or a process says why it cannot."""
    loop = m.BaseSelectorEventLoop

    def _make_self_pipe(self):
        self._ssock = self._csock = None

    loop._make_self_pipe = _make_self_pipe
    loop._close_self_pipe = lambda self: None
    loop._write_to_self = lambda self: None


def _adapt_base_events(m):
    """Name loops' address lookups and executors for what they need: they would hand the work
    to a thread, and the thread's failure would hide why. Its subprocesses would need pipes
    to a process; subprocess.run runs the skill's own programs."""

    async def lookup(self, *args, **kwargs):
        _no_socket()

    def run_in_executor(self, executor, func, *args):
        _no_threads()

    async def subprocess(self, *args, **kwargs):
        raise OSError("asyncio subprocesses are not available in the Skillbox sandbox: run the "
                      "skill's own programs with subprocess.run([sys.executable, 'program.py'])")

    m.BaseEventLoop.getaddrinfo = m.BaseEventLoop.getnameinfo = lookup
    m.BaseEventLoop.run_in_executor = run_in_executor
    m.BaseEventLoop.subprocess_exec = m.BaseEventLoop.subprocess_shell = subprocess


def _adapt_futures(m):
    """ProcessPoolExecutor imports, as programs import it beside ThreadPoolExecutor and use it
    only when asked, and says why when one is made: there are no processes."""

    class ProcessPoolExecutor:
        def __init__(self, *args, **kwargs):
            _no_process()

    lazy = m.__getattr__

    def __getattr__(name):
        if name == "ProcessPoolExecutor":
            return ProcessPoolExecutor
        return lazy(name)

    m.__getattr__ = __getattr__


def _adapt_subprocess(m):
    """A program runs another Python program of its skill as a nested run (skillbox_subprocess,
    loaded only when a program imports subprocess)."""
    import skillbox_subprocess
    skillbox_subprocess.adapt(m)


_ADAPT = {"asyncio.selector_events": _adapt_selector_events, "asyncio.base_events": _adapt_base_events,
          "concurrent.futures": _adapt_futures, "subprocess": _adapt_subprocess}


def _no_threads(*args, **kwargs):
    raise RuntimeError("threads are not available in the Skillbox sandbox: a skill runs on one "
                       "thread (do the work in turn)")


def _no_socket(*args, **kwargs):
    raise OSError("sockets are not available in the Skillbox sandbox: there is no network but "
                  "ctx.fetch(url)")


def _no_process(*args, **kwargs):
    raise OSError("processes are not available in the Skillbox sandbox: there is no shell and "
                  "no other program to run")


def _guard():
    import _thread
    import os
    import socket
    import threading
    os.system = _no_process  # absent on WASI: an AttributeError would not say why
    # WASI has no PATH to find the interpreter by: name it, as programs run their skill's other
    # programs with [sys.executable, "other.py"] (skillbox_subprocess).
    sys.executable = sys.executable or "/usr/local/bin/python3"
    _thread.start_new_thread = _thread.start_new = _no_threads
    threading._start_new_thread = _no_threads
    threading.Thread.start = lambda self: _no_threads()
    socket.socket.__init__ = lambda self, *a, **k: _no_socket()
    if not hasattr(socket, "AF_UNIX"):  # WASI has none: let socket(AF_UNIX) say why it fails
        socket.AF_UNIX = 1
    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr",
                 "create_connection", "create_server", "socketpair", "fromfd"):
        setattr(socket, name, _no_socket)
    sys.meta_path[:0] = [_Refuse, _Adapt, _Builtin]


def _preload():
    """Runs at build time, in the snapshot: imports what most skills use, so runs need not.

    Each module here costs every instance memory (typing and dataclasses alone would add 1.1 MiB
    to the 7 MiB an instance starts with); those left out import on demand, from the zip."""
    import argparse, base64, collections, csv, datetime, decimal, fractions, functools  # noqa
    import hashlib, io, itertools, json, math, os, pathlib, random, re, runpy  # noqa
    import statistics, string, struct, textwrap, time, traceback, urllib.parse  # noqa
    import importlib.util  # the driver's, to load execute.py
    # The first compile in an interpreter builds the AST types (about 15 ms here): do it now.
    compile("def f(a, *b, c=1, **d):\n    return [x for x in a] and f'{a!r}'\nclass C: pass\n",
            "<preload>", "exec")
    import gc
    _guard()
    global _PRELOADED
    _PRELOADED = frozenset(sys.modules)
    gc.collect()
    gc.freeze()


_PRELOADED = frozenset()  # the modules in the snapshot (a test checks a run adds none)


# --- The driver. ---

def _kind(e):
    if isinstance(e, PermissionDenied):
        return "permission_denied"
    if isinstance(e, MemoryError):
        return "memory_limit"
    return "skill_error"


def _is_driver(filename):
    # co_filename, not __file__: the module was loaded from skillbox.pyc.
    return filename == _is_driver.__code__.co_filename or filename.startswith("<frozen ")


def _failure(e):
    """The outcome of a run ended by e, whose traceback has gone to stderr (the logs)."""
    import traceback
    if isinstance(e, MemoryError):
        traceback.clear_frames(e.__traceback__)  # free what the skill held before formatting
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None and _is_driver(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next  # the skill's frames only, as python3 would print them
    try:
        traceback.print_exception(type(e), e, tb)
    except MemoryError:
        pass
    try:
        message = str(e)
    except Exception:  # noqa: BLE001 - a __str__ that raises
        message = "<the exception's str() failed>"
    if len(message) > 4096:
        message = message[:4096] + " [cut]"
    out = {"ok": False, "kind": _kind(e), "type": type(e).__name__, "message": message}
    if isinstance(e, SyntaxError):
        # Where it is, apart from the message: the host places the problem at file:line:col.
        out["syntax"] = {"msg": str(e.msg)[:4096], "line": _int(e.lineno), "column": _int(e.offset)}
    return out


def _int(v):
    """v when it is an int (a SyntaxError's place may be None, or anything code set), else 0."""
    return v if type(v) is int and 0 <= v < 1 << 31 else 0


def _prepare(path):
    """Per-run setup: fresh randomness and the skill's import path."""
    import os
    import random
    random.seed()  # the snapshot froze the generator: reseed from the host's crypto/rand
    here = os.path.dirname(path)
    sys.path[:0] = ([here] if here != "/skill" else []) + ["/skill", "/skill/lib"]


def _settle(coro):
    """The value of an async execute: its coroutine run to the end, by asyncio's event loop when
    the skill imported asyncio (nothing else it awaits can need one), else stepped here, so a
    coroutine that awaits only coroutines costs no import of asyncio."""
    if "asyncio" in sys.modules:
        return sys.modules["asyncio"].run(coro)
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("execute awaited something that needs an event loop: import asyncio in the "
                       "skill to run one")


def _execute(path, args_json, code=None):
    """Imports path as the module execute and calls its execute. code, when given, is the
    module's code, compiled by _compile from the same file: the run skips compiling it."""
    import importlib.util
    _prepare(path)
    sys.argv = [path]
    spec = importlib.util.spec_from_file_location("execute", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["execute"] = mod
    if code is None:
        spec.loader.exec_module(mod)
    else:
        exec(code, mod.__dict__)  # what exec_module does with the code it compiles
    fn = getattr(mod, "execute", None)
    if not callable(fn):
        raise TypeError(f"{path} defines no function execute(args, ctx)")
    result = fn(json.loads(args_json), Context())
    if type(result).__name__ == "coroutine":
        result = _settle(result)
    try:  # allow_nan=False: NaN and Infinity are not JSON
        out = json.dumps(result, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    except UnicodeEncodeError:  # a lone surrogate: escaped, it is still JSON
        out = json.dumps(result, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError) as e:
        raise TypeError(f"execute's result is not JSON-serialisable: {e}") from None
    return b'{"ok":true,"result":' + out + b"}"


def _compile(path):
    """Compiles the source on standard input as an import of path would (no code of it runs)
    and writes the code object, marshalled, to standard output: the host keeps it for the runs
    of that source (see _execute)."""
    import marshal
    code = compile(sys.stdin.buffer.read(), path, "exec", dont_inherit=True)
    sys.stdout.buffer.write(marshal.dumps(code))
    sys.stdout.flush()
    return b'{"ok":true,"result":null}'


def _stdin_code():
    """The code object the host passed on standard input, which is then at its end, as a run
    without one finds it."""
    import marshal
    return marshal.loads(sys.stdin.buffer.read())


def _script(path, cwd, argv, module=""):
    """Runs the program at path as __main__, as python3 path argv... would; or, given its module
    name (path being that module's file), as python3 -m module argv... would."""
    import os
    import runpy
    _prepare(path)
    if cwd:
        try:
            os.chdir(cwd)  # where relative paths lead: a writable grant, else the private /tmp
        except OSError:
            pass
    sys.argv = [path] + argv
    try:
        if module:
            root = path  # the directory the module's top package is in, first on sys.path
            for _ in module.split("."):
                root = os.path.dirname(root)
            sys.path.insert(0, root)
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code & 0xFF
        print(code, file=sys.stderr)
        return 1
    return 0


def _main(argv):
    """Runs one skill: argv is [program, "execute", path, args JSON] (then "code" when standard
    input holds path's code, see _compile), [program, "script", path, working directory, arg...],
    [program, "module", path, working directory, module name, arg...] or [program, "compile",
    path]. Returns the exit code."""
    rc = 0
    try:
        if len(argv) < 3:
            raise RuntimeError("skillbox: no program")
        if argv[1] == "execute":
            code = _stdin_code() if argv[4:5] == ["code"] else None
            outcome = _execute(argv[2], argv[3] if len(argv) > 3 else "null", code)
        elif argv[1] == "compile":
            outcome = _compile(argv[2])
        else:
            if argv[1] == "module":
                rc = _script(argv[2], argv[3], argv[5:], module=argv[4])
            else:
                rc = _script(argv[2], argv[3] if len(argv) > 3 else "", argv[4:])
            outcome = json.dumps({"ok": True, "exit": rc}).encode()
    except BaseException as e:  # noqa: BLE001 - every failure is the skill's outcome
        rc = 1
        outcome = json.dumps(_failure(e)).encode()
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:  # noqa: BLE001
            pass
    _skillbox.done(outcome)
    return rc
