package cpython

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// While the snapshot is made, the clock, the random source and files' times and inode numbers
// are fixed (embed.c), so that two builds make the same interpreter; a run gets the host's: the
// time now, fresh random bytes (and a random module reseeded from them), and a file's own times.
// Were the fixed ones to leak into runs, every run would draw the same "random" bytes.
func TestRunSeesTheHostsClockAndRandomness(t *testing.T) {
	tmp := t.TempDir()
	dir := skillDir(t, map[string]string{"p.py": `import os, random, time
open("/tmp/f", "w").close()
st = os.stat("/tmp/f")
print(time.time(), time.time_ns() > 1_000_000_000 * 10**9, os.urandom(16).hex(), random.random(), st.st_mtime, st.st_ino != 0)
`})
	c := compiledFor(t, 256)
	run := func() []string {
		res, err := Run(context.Background(), c, Program{Dir: dir, Script: "p.py",
			FSConfig: func(f wazero.FSConfig) wazero.FSConfig { return f.WithDirMount(tmp, "/tmp") }}, newHost(t, &hostfuncs.Grant{}))
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("exit %d, %v: %s", res.ExitCode, err, res.Stderr)
		}
		return strings.Fields(string(res.Stdout))
	}
	a, b := run(), run()
	now := float64(time.Now().Unix())
	for _, f := range [][]string{a, b} {
		ts, err := strconv.ParseFloat(f[0], 64)
		if err != nil || ts < now-3600 || ts > now+3600 || f[1] != "True" {
			t.Errorf("time.time() in a run is %s (time_ns past 2001: %s), want about %.0f", f[0], f[1], now)
		}
		mt, err := strconv.ParseFloat(f[4], 64)
		if err != nil || mt < now-3600 || mt > now+3600 || f[5] != "True" {
			t.Errorf("a file the run wrote has mtime %s and an inode (%s), want about %.0f and one", f[4], f[5], now)
		}
	}
	if a[2] == b[2] || a[3] == b[3] {
		t.Errorf("two runs drew the same random bytes (%s, %s) or the same random.random() (%s, %s)", a[2], b[2], a[3], b[3])
	}
}
