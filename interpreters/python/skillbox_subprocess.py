"""subprocess in the Skillbox sandbox: a program may run another Python program of its own skill.

There are no processes here. A Popen of [sys.executable, "other.py", ...] or
[sys.executable, "-m", "package.module", ...] asks the host to run that program of the skill in a
fresh interpreter, under the same grant, deadline and memory as the program that asked, and gives
back its exit code and output as a child process would. Anything else (git, a shell, python -c)
is refused with FileNotFoundError naming the program, as a program that is not installed is.

The child runs to its end when its parent first waits for it (communicate, wait, poll, leaving
the with block), reads its output or closes its stdin PIPE: then its input is complete, and a
timeout given to communicate or wait (run's timeout=) bounds it. skillbox's driver loads this
module when a program imports subprocess.
"""

import errno
import io
import os
import sys

import skillbox

_PYTHONS = {"python", "python3", "python3.11"}
_FLAGS = set("bBdEiIOqsSuvx")  # python's one-letter options, which change nothing a child sees here
_USE = ("the Skillbox sandbox runs only this skill's own Python programs "
        "([sys.executable, 'program.py', ...] or [sys.executable, '-m', 'module', ...])")


def _refuse(program, why=_USE):
    return FileNotFoundError(errno.ENOENT, why, program)


def _target(args, executable, shell, cwd):
    """What args asks to run: (path, module, argv), path the program's file in the guest and
    module its name when run with -m. Raises FileNotFoundError for anything but a program of the
    skill."""
    if shell:
        cmd = args if isinstance(args, (str, bytes)) else " ".join(map(os.fsdecode, args))
        raise _refuse(os.fsdecode(cmd), "there is no shell: " + _USE)
    if isinstance(args, (str, bytes, os.PathLike)):
        args = [args]
    argv = [os.fsdecode(a) for a in args]
    if not argv:
        raise IndexError("list index out of range")  # as subprocess says of an empty args
    prog = os.fsdecode(executable) if executable is not None else argv[0]
    if prog != sys.executable and os.path.basename(prog) not in _PYTHONS:
        raise _refuse(prog)
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-X", "-W"):
            i += 2
        elif a.startswith(("-X", "-W")):
            i += 1
        elif a == "-m" or a.startswith("-m"):
            module = a[2:] or (argv[i + 1] if i + 1 < len(argv) else "")
            rest = argv[i + 1:] if a != "-m" else argv[i + 2:]
            return _module(module, rest)
        elif a == "--":
            i += 1
            break
        elif a.startswith("-") and a != "-":
            if a == "-c" or a.startswith("-c"):
                raise _refuse(prog + " -c", "python -c: code given on the command line is not a "
                              "program of this skill; " + _USE)
            if not set(a[1:]) <= _FLAGS:
                raise _refuse(f"{prog} {a}", f"python option {a} is not supported here; " + _USE)
            i += 1
        else:
            break
    if i >= len(argv) or argv[i] == "-":
        raise _refuse(prog, "python without a program file (reading it from stdin) cannot run "
                      "here; " + _USE)
    path = os.path.normpath(os.path.join(os.fsdecode(cwd) if cwd is not None else os.getcwd(), argv[i]))
    return path, "", argv[i + 1:]


def _module(name, argv):
    """The (path, module, argv) of python -m name: the file it would run, found on sys.path as
    python would find it (a package runs its __main__)."""
    import importlib.util
    if not name:
        raise _refuse("python -m", "python -m needs a module name; " + _USE)
    try:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations is not None:
            name += ".__main__"
            spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.has_location or not spec.origin:
        raise _refuse(f"python -m {name}", f"no module named {name!r} in this skill; " + _USE)
    return spec.origin, name, argv


_pids = iter(range(1000, 1 << 30))


class _Deferred:
    """A child's stdout or stderr PIPE read before the child ran: reading it runs the child."""

    def __init__(self, proc, which):
        self._proc, self._which = proc, which

    def _stream(self):
        self._proc._start()
        return getattr(self._proc, self._which)

    def __getattr__(self, name):
        return getattr(self._stream(), name)

    def __iter__(self):
        return iter(self._stream())

    def __enter__(self):
        return self._stream()

    def __exit__(self, *exc):
        self._stream().close()


class _Stdin(io.BytesIO):
    """A child's stdin PIPE: what is written is its input, complete when it is closed."""

    def __init__(self, proc):
        super().__init__()
        self._proc = proc

    def close(self):
        if not self.closed:
            self._proc._pending = self.getvalue()
        super().close()
        self._proc._start()


def adapt(m):
    """Makes subprocess's Popen (and so run, call, check_call, check_output) run programs of the
    skill as nested runs."""
    PIPE, STDOUT, DEVNULL = m.PIPE, m.STDOUT, m.DEVNULL

    class Popen:
        def __init__(self, args, bufsize=-1, executable=None, stdin=None, stdout=None, stderr=None,
                     preexec_fn=None, close_fds=True, shell=False, cwd=None, env=None,
                     universal_newlines=None, startupinfo=None, creationflags=0,
                     restore_signals=True, start_new_session=False, pass_fds=(), *, user=None,
                     group=None, extra_groups=None, encoding=None, errors=None, text=None,
                     umask=-1, pipesize=-1, process_group=None):
            self.args = args
            self.returncode = None
            self.stdin = self.stdout = self.stderr = None
            self._ran = False
            self._path, self._module, self._argv = _target(args, executable, shell, cwd)
            self._cwd = os.fsdecode(cwd) if cwd is not None else os.getcwd()
            self.text_mode = bool(encoding or errors or text or universal_newlines)
            self.encoding, self.errors = encoding or "utf-8", errors or "strict"
            self._io = (stdin, stdout, stderr)
            self._pending = b""
            self.pid = next(_pids)
            if stdin == PIPE:
                self.stdin = _Stdin(self)
                if self.text_mode:
                    self.stdin = io.TextIOWrapper(self.stdin, self.encoding, self.errors,
                                                  write_through=True)
            elif stdin is not None and stdin != DEVNULL:
                self._pending = _read_all(stdin)
            for which, spec in (("stdout", stdout), ("stderr", stderr)):
                if spec == PIPE:
                    setattr(self, which, _Deferred(self, which))

        def _start(self, timeout=None):
            if self._ran:
                return
            self._ran = True
            stdin, stdout, stderr = self._io
            req = {"path": self._path, "module": self._module, "argv": self._argv, "cwd": self._cwd,
                   "stdin": _b64(self._pending), "merge": stderr == STDOUT}
            if timeout is not None:
                req["timeout_ms"] = max(1, int(timeout * 1000))
            try:
                out = skillbox._call("run", req)
            except skillbox.NotFound as e:
                self.returncode = 255
                raise _refuse(self._path, str(e)) from None
            import base64
            data = base64.b64decode(out.get("stdout") or ""), base64.b64decode(out.get("stderr") or "")
            self.returncode = out.get("exit", 1)
            for which, spec, b in (("stdout", stdout, data[0]), ("stderr", stderr, data[1])):
                if spec == PIPE:
                    s = io.BytesIO(b)
                    if self.text_mode:
                        s = io.TextIOWrapper(s, self.encoding, self.errors)
                    setattr(self, which, s)
                elif spec is None:
                    _write(getattr(sys, which), b)
                elif spec not in (DEVNULL, STDOUT):
                    _write(spec, b)
            for which in ("stdout", "stderr"):
                if out.get(which + "_dropped"):
                    print(f"skillbox: {self._path}: {out[which + '_dropped']} bytes of its {which} "
                          "were cut (the run's maxOutputBytes)", file=sys.stderr)
            if out.get("timed_out"):
                raise m.TimeoutExpired(self.args, timeout, output=data[0], stderr=data[1])

        def communicate(self, input=None, timeout=None):
            if input is not None and not self._ran:
                self._pending = input.encode(self.encoding, self.errors) if isinstance(input, str) else bytes(input)
            elif self.stdin is not None and not self.stdin.closed and not self._ran:
                self.stdin.flush()  # what was written to the PIPE is the input
                self._pending = getattr(self.stdin, "buffer", self.stdin).getvalue()
            self._start(timeout)
            got = []
            for which in ("stdout", "stderr"):
                s = getattr(self, which)
                got.append(None if s is None or isinstance(s, _Deferred) else s.read())
            return tuple(got)

        def wait(self, timeout=None):
            self._start(timeout)
            return self.returncode

        def poll(self):
            self._start()
            return self.returncode

        def kill(self):
            if not self._ran:
                self._ran, self.returncode = True, -9

        terminate = kill

        def send_signal(self, sig):
            self.kill()

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            for s in (self.stdout, self.stderr):
                if s is not None and not isinstance(s, _Deferred):
                    s.close()
            if self.stdin is not None and not self.stdin.closed:
                self.stdin.close()
            self.wait()

        def __repr__(self):
            return f"<Popen: returncode: {self.returncode} args: {self.args!r}>"

    m.Popen = Popen


def _b64(data):
    import base64
    return base64.b64encode(data).decode()


def _read_all(f):
    """All of a file object's or file descriptor's bytes: a child's stdin."""
    if isinstance(f, int):
        chunks = []
        while True:
            b = os.read(f, 1 << 16)
            if not b:
                return b"".join(chunks)
            chunks.append(b)
    data = f.read()
    return data.encode() if isinstance(data, str) else data


def _write(f, data):
    """Writes a child's output where its parent's would go, or to the file it was given."""
    if not data:
        return
    if isinstance(f, int):
        os.write(f, data)
        return
    buf = getattr(f, "buffer", None)
    if buf is not None:
        f.flush()
        buf.write(data)
        buf.flush()
    elif isinstance(f, (io.RawIOBase, io.BufferedIOBase)) or "b" in getattr(f, "mode", ""):
        f.write(data)
    else:
        f.write(data.decode("utf-8", "replace"))
