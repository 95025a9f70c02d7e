package interop

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildSkillbox builds the CLI as a user installs it.
func buildSkillbox(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "skillbox")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/skillbox").CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/skillbox: %v\n%s", err, out)
	}
	return bin
}

// servingLine is what skillbox serve prints once it listens.
var servingLine = regexp.MustCompile(`skillbox: serving \d+ skills on (http://\S+) \(keys: \d+\)`)

// served is a running `skillbox serve`.
type served struct {
	cmd  *exec.Cmd
	url  string // the base URL, http://127.0.0.1:<port>
	mu   sync.Mutex
	log  bytes.Buffer
	err  error
	done chan struct{}
}

func (s *served) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// serve starts `skillbox serve` on a free loopback port with args before the command, and
// stops it (SIGTERM, as an operator would) when t and its subtests are done, failing t if it
// did not stop cleanly.
func serve(t *testing.T, bin string, args ...string) *served {
	t.Helper()
	cmd := exec.Command(bin, append(args, "serve", "--addr", "127.0.0.1:0")...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, done: make(chan struct{})}
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case url <- m[1]:
				default:
				}
			}
		}
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		// A hang guard: serve drains its runs and stops within moments; it is given minutes.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		select {
		case <-s.done:
			if s.err != nil {
				t.Errorf("skillbox serve did not stop cleanly on SIGTERM: %v\n%s", s.err, s.stderr())
			}
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-s.done
			t.Errorf("skillbox serve did not stop within 2 minutes of SIGTERM:\n%s", s.stderr())
		}
	})
	select {
	case s.url = <-url:
	case <-s.done:
		t.Fatalf("skillbox serve exited before listening: %v\n%s", s.err, s.stderr())
	case <-time.After(5 * time.Minute): // a hang guard
		t.Fatalf("skillbox serve did not listen within 5 minutes:\n%s", s.stderr())
	}
	return s
}
