package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the side a person types on, and the terminal a program has.
func openPTY(t *testing.T) (person, terminal *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// The skillbox binary on a real terminal asks by itself (--ask auto, the default): the question
// on the terminal, the answer typed there.
func TestRunAsksOnARealTerminal(t *testing.T) {
	dir, pol, url := askFixture(t)
	person, terminal := openPTY(t)
	cmd := exec.Command(binary(t), withTestStore(t, []string{"--cache-dir", cacheDir, "--skills", dir, "--policy", pol,
		"run", "asker", "--args", `{"url":"` + url + `"}`})...)
	var stdout bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = terminal, &stdout, terminal
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	terminal.Close() // the child has it
	var mu sync.Mutex
	var screen strings.Builder
	go func() { // what the terminal shows; it ends when the child does and the side closes
		buf := make([]byte, 4096)
		for {
			n, err := person.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	shown := func() string { mu.Lock(); defer mu.Unlock(); return screen.String() }
	shows := func(s string) bool { return strings.Contains(shown(), s) }
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for !shows("[o/f/d, default d]: ") { // the run asks once it fetches: nothing here races a clock
		select {
		case err := <-exited:
			t.Fatalf("skillbox run ended without asking: %v; stdout %q, the terminal shows %q", err, stdout.String(), shown())
		case <-time.After(time.Millisecond):
		}
	}
	if _, err := io.WriteString(person, "o\n"); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("skillbox run: %v; the terminal shows %q", err, shown())
	}
	if squeeze(stdout.String()) != `{"status":204}` || !shows(`asks to fetch from 127.0.0.1`) {
		t.Errorf("stdout %q, terminal %q", stdout.String(), shown())
	}
}
