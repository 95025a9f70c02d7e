package cpython

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/tetratelabs/wazero"
)

// The snapshot froze random's state; every run reseeds it (and os.urandom is the host's). The
// str-hash secret stays the snapshot's (see the package doc): the same in every run of a build.
func TestRandomDiffers(t *testing.T) {
	src := "import random, os\ndef execute(args, ctx):\n    return [random.random(), random.getrandbits(64), os.urandom(8).hex(), hash('abc')]\n"
	var prev []any
	for i := 0; i < 2; i++ {
		res, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), src, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		var v []any
		if err := json.Unmarshal(res.Value, &v); err != nil || len(v) != 4 {
			t.Fatalf("value %s, %v", res.Value, err)
		}
		if prev != nil && v[3] != prev[3] {
			t.Fatalf("hash('abc') changed between runs of one build: %v, %v", prev[3], v[3])
		}
		for j := 0; prev != nil && j < 3; j++ {
			if v[j] == prev[j] {
				t.Fatalf("two runs drew the same value %d: %v", j, v[j])
			}
		}
		prev = v
	}
}

// What can never work in the sandbox fails with an error that says so.
func TestSandbox(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := skillDir(t, map[string]string{"data.txt": "mine"})
	if err := os.Symlink(secret, filepath.Join(dir, "leak")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SKILLBOX_HOST_SECRET", "host-secret")
	for _, tt := range []struct{ name, code, want string }{
		{"socket", "import socket\nsocket.socket()", "OSError: sockets are not available in the Skillbox sandbox"},
		{"connect", "import socket\nsocket.create_connection(('127.0.0.1', 80))", "OSError: sockets are not available"},
		{"unix socket", "import socket\nsocket.socket(socket.AF_UNIX, socket.SOCK_STREAM)", "OSError: sockets are not available"},
		{"urlopen", "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:1/')", "sockets are not available"},
		{"subprocess", "import subprocess\nsubprocess.run(['ls'])", "FileNotFoundError: [Errno 44] the Skillbox sandbox runs only this skill's own Python programs ([sys.executable, 'program.py', ...] or [sys.executable, '-m', 'module', ...]): 'ls'"},
		{"subprocess without a runner", "import subprocess, sys\nsubprocess.run([sys.executable, 'data.txt'])", "PermissionDenied: subprocess: only a skill's program may run its other programs"},
		{"executable", "import sys\nprint(sys.executable)", "/usr/local/bin/python3\n"},
		{"os.system", "import os\nos.system('ls')", "OSError: processes are not available in the Skillbox sandbox"},
		{"ctypes", "import ctypes", "ModuleNotFoundError: module 'ctypes' is not available in the Skillbox sandbox: a skill cannot load native code"},
		{"multiprocessing", "import multiprocessing", "module 'multiprocessing' is not available in the Skillbox sandbox: there are no processes"},
		{"process pool", "from concurrent.futures import ProcessPoolExecutor\nprint('imported')\nProcessPoolExecutor()", "imported\n"},
		{"process pool made", "from concurrent.futures import ProcessPoolExecutor\nProcessPoolExecutor()", "OSError: processes are not available"},
		{"webbrowser", "import webbrowser\nprint('opened', webbrowser.open('https://example.com'))", "opened False"},
		{"asyncio connects", "import asyncio\nasyncio.run(asyncio.open_connection('127.0.0.1', 80))", "OSError: sockets are not available"},
		{"asyncio executor", "import asyncio\nasync def m():\n    await asyncio.get_running_loop().run_in_executor(None, print)\nasyncio.run(m())", "RuntimeError: threads are not available"},
		{"asyncio subprocess", "import asyncio\nasyncio.run(asyncio.create_subprocess_exec('ls'))", "OSError: asyncio subprocesses are not available in the Skillbox sandbox"},
		{"thread", "import threading\nthreading.Thread(target=print).start()", "RuntimeError: threads are not available in the Skillbox sandbox"},
		{"_thread", "import _thread\n_thread.start_new_thread(print, ())", "RuntimeError: threads are not available"},
		{"open outside", "open('/etc/passwd')", "PermissionError: [Errno 76] Capabilities insufficient: '/etc/passwd'"},
		{"symlink out", "print(open('/skill/leak').read())", "Error"},
		{"write the skill", "open('/skill/new.txt', 'w')", "Error"},
		{"read the skill", "print(open('/skill/data.txt').read())", "mine"},
		{"environment", "import os\nprint(dict(os.environ), os.getenv('SKILLBOX_HOST_SECRET'))", "{} None"},
		{"argv", "import sys\nprint(sys.argv)", "['/skill/p.py', 'a1']"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "p.py"), []byte(tt.code+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), compiledFor(t, 1024), Program{Dir: dir, Script: "p.py", Argv: []string{"a1"}}, newHost(t, &hostfuncs.Grant{}))
			if err != nil {
				t.Fatal(err)
			}
			out := string(res.Stdout) + string(res.Stderr)
			if !strings.Contains(out, tt.want) || strings.Contains(out, "secret\n") {
				t.Fatalf("exit %d, output:\n%s\nwant it to contain %q", res.ExitCode, out, tt.want)
			}
		})
	}
}

// A small skill's run imports nothing beyond the snapshot: an import the driver makes at run
// time (from the zip, compiled in) costs milliseconds per run and memory per instance.
func TestSnapshotCoversTheDriver(t *testing.T) {
	res, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), `import sys, skillbox
def execute(args, ctx):
    return sorted(set(sys.modules) - skillbox._PRELOADED)`, `{}`)
	if err != nil || string(res.Value) != `["execute"]` {
		t.Fatalf("modules imported by the run: %s, %v", res.Value, err)
	}
}

// The compression modules the interpreter links (bz2, lzma) round-trip (xz at preset 1: its
// default preset's encoder alone needs about 94 MiB, past this run's memory); sqlite3 keeps a database in memory and in a file of the run's /tmp, with transactions,
// and reads it back after closing it.
func TestCompressionAndSQLite(t *testing.T) {
	tmp := t.TempDir()
	res, err := Run(context.Background(), compiledFor(t, 1024), Program{
		Dir: skillDir(t, map[string]string{"execute.py": `import bz2, lzma, sqlite3, tarfile, io, os
def execute(args, ctx):
    data = bytes(range(256)) * 64
    out = {"bz2": bz2.decompress(bz2.compress(data)) == data,
           "xz": lzma.decompress(lzma.compress(data, preset=1)) == data,
           "lzma_alone": lzma.decompress(lzma.compress(data, format=lzma.FORMAT_ALONE, preset=1)) == data}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz", preset=1) as tar:
        info = tarfile.TarInfo("a.txt"); info.size = 5
        tar.addfile(info, io.BytesIO(b"hello"))
    with tarfile.open(fileobj=io.BytesIO(buf.getvalue()), mode="r:xz") as tar:
        out["tar_xz"] = tar.extractfile("a.txt").read().decode()
    mem = sqlite3.connect(":memory:")
    mem.execute("create table t (k text primary key, v integer)")
    mem.executemany("insert into t values (?, ?)", [("a", 1), ("b", 2)])
    out["memory"] = mem.execute("select sum(v) from t").fetchone()[0]
    path = "/tmp/db.sqlite"
    con = sqlite3.connect(path)
    with con:
        con.execute("create table n (x)")
        con.executemany("insert into n values (?)", [(i,) for i in range(100)])
    try:
        with con:
            con.execute("insert into n values (1000)")
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    con.close()
    again = sqlite3.connect(path)
    out["file"] = again.execute("select count(*), max(x) from n").fetchone()
    out["version"] = sqlite3.sqlite_version
    out["size"] = os.path.getsize(path) > 0
    return out`}),
		FSConfig: func(f wazero.FSConfig) wazero.FSConfig { return f.WithDirMount(tmp, "/tmp") },
	}, newHost(t, &hostfuncs.Grant{}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"bz2":true,"xz":true,"lzma_alone":true,"tar_xz":"hello","memory":3,"file":[100,99],"version":"3.40.1","size":true}`
	if string(res.Value) != want {
		t.Fatalf("got  %s\nwant %s", res.Value, want)
	}
	if _, err := os.Stat(filepath.Join(tmp, "db.sqlite")); err != nil {
		t.Fatalf("the database is not in the run's /tmp: %v", err)
	}
}

// asyncio runs coroutines without sockets: an async execute that awaits the event loop
// (sleeps, tasks, queues, timeouts), which the driver runs on asyncio's loop once the skill
// imported asyncio.
func TestAsyncio(t *testing.T) {
	res, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), `import asyncio

async def work(i, q):
    await asyncio.sleep(0.001 * i)
    await q.put(i * i)

async def execute(args, ctx):
    q = asyncio.Queue()
    await asyncio.gather(*(work(i, q) for i in range(4)))
    got = sorted([q.get_nowait() for _ in range(4)])
    try:
        await asyncio.wait_for(asyncio.sleep(60), 0.01)
        timed_out = False
    except asyncio.TimeoutError:
        timed_out = True
    task = asyncio.create_task(asyncio.sleep(0, result="task"))
    return {"squares": got, "timed_out": timed_out, "task": await task}
`, `{}`)
	if err != nil || string(res.Value) != `{"squares":[0,1,4,9],"timed_out":true,"task":"task"}` {
		t.Fatalf("%s %v", res.Value, err)
	}
}

// The standard library a skill may rely on works, including what the snapshot does not hold
// (imported from the zip at run time); what this build lacks says so.
func TestStdlib(t *testing.T) {
	res, err := runSkill(t, context.Background(), newHost(t, &hostfuncs.Grant{}), `import io, zlib, gzip, zipfile, hashlib, email, unicodedata, tomllib, decimal
import dataclasses, typing, xml.etree.ElementTree as ET, html.parser
def execute(args, ctx):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.txt", "hello " * 100)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        unzipped = z.read("a.txt").decode()
    out = [zlib.decompress(zlib.compress(b"x" * 1000)) == b"x" * 1000,
           gzip.decompress(gzip.compress(b"gz")) == b"gz", unzipped == "hello " * 100,
           hashlib.sha256(b"x").hexdigest()[:8], unicodedata.name("é"),
           tomllib.loads('a = 1')["a"], str(decimal.Decimal("0.1") + decimal.Decimal("0.2")),
           ET.fromstring("<a><b>t</b></a>").find("b").text,
           email.message_from_string("Subject: hi\n\nbody")["Subject"]]
    for m in ("ssl",):
        try:
            __import__(m)
            out.append(m + " imported")
        except ImportError as e:
            out.append(str(e))
    return out`, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `[true,true,true,"2d711642","LATIN SMALL LETTER E WITH ACUTE",1,"0.3","t","hi",` +
		`"module 'ssl' is not available in the Skillbox sandbox: there is no network but ctx.fetch(url)"]`
	if string(res.Value) != want {
		t.Fatalf("got  %s\nwant %s", res.Value, want)
	}
}
