// Package pgserver starts a throwaway PostgreSQL server for tests, from the binaries of the
// machine's PostgreSQL (Debian's postgresql package puts them in /usr/lib/postgresql/N/bin):
// initdb into a temporary directory, then postgres listening on a unix socket only, so tests
// never clash over a port and nothing is reachable from the network.
//
// PostgreSQL refuses to run as root; as root the server runs as the "postgres" user (Debian's
// package creates it), or "nobody" without it, in a directory that user owns.
package pgserver

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx" with database/sql
)

// ErrAbsent is what Start's error is when no PostgreSQL binaries are installed.
var ErrAbsent = errors.New("no PostgreSQL server binaries (initdb, postgres): install Debian's postgresql package")

// Server is a running PostgreSQL.
type Server struct {
	bin  string
	dir  string
	cmd  *exec.Cmd
	done chan error
	log  *bytes.Buffer
	n    atomic.Int64
}

// BinDir finds the directory of initdb and postgres: beside an initdb on PATH, or the newest
// /usr/lib/postgresql/N/bin.
func BinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) }) // 15 before 9
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", ErrAbsent
}

// Start runs initdb and a postgres server; Stop ends it and removes its files.
func Start(ctx context.Context) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tempBase(), "skillbox-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, done: make(chan error, 1), log: &bytes.Buffer{}}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := own(dir); err != nil {
		return fail(err)
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "skillbox",
		"--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C")
	initdb.SysProcAttr = asServerUser()
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w\n%s", err, out))
	}
	s.bin = bin
	if err := s.run(ctx); err != nil {
		return fail(err)
	}
	return s, nil
}

// run starts the server on its data directory and waits until it answers.
func (s *Server) run(ctx context.Context) error {
	// No TCP (listen_addresses empty), the socket in dir, no fsync: a test server. Commits
	// still reach the kernel before they return, so a killed server (Halt) loses none.
	s.cmd = exec.Command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"), "-k", s.dir, "-p", "5432",
		"-c", "listen_addresses=", "-c", "fsync=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200")
	s.cmd.SysProcAttr = asServerUser()
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.done = make(chan error, 1)
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	if err := s.waitReady(ctx); err != nil {
		s.halt(true)
		return err
	}
	return nil
}

// Halt stops the server and keeps its files, for Restart: a fast shutdown (its clients are
// disconnected), or with kill, SIGKILL to the server and every process of it, as a crash.
func (s *Server) Halt(kill bool) { s.halt(kill) }

func (s *Server) halt(kill bool) {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	if kill {
		killGroup(s.cmd.Process.Pid)
	} else {
		_ = s.cmd.Process.Signal(os.Interrupt)
	}
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		killGroup(s.cmd.Process.Pid)
		<-s.done
	}
	if kill {
		// The postmaster's children leave with it; wait until the last has let go of the
		// socket's lock file, or the next server cannot start.
		deadline := time.Now().Add(readyTimeout)
		for groupAlive(s.cmd.Process.Pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	s.cmd = nil
}

// Restart starts the server again on the files Halt kept (after a kill, PostgreSQL recovers
// them first) and waits until it answers.
func (s *Server) Restart(ctx context.Context) error { return s.run(ctx) }

// readyTimeout bounds waitReady: it only guards against a server that never answers, so it is
// generous (a slow, busy machine takes a while to start PostgreSQL).
const readyTimeout = 3 * time.Minute

// waitReady waits until the server answers, up to readyTimeout.
func (s *Server) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		db, err := sql.Open("pgx", s.DSN("postgres"))
		if err == nil {
			err = db.PingContext(ctx)
			db.Close()
		}
		if err == nil {
			return nil
		}
		select {
		case werr := <-s.done:
			return fmt.Errorf("postgres exited: %v\n%s", werr, s.log.String())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not answer within %v: %v\n%s", readyTimeout, err, s.log.String())
		}
	}
}

// DSN is the connection string of database db on this server.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("host=%s port=5432 user=skillbox dbname=%s sslmode=disable", s.dir, db)
}

// NewDatabase creates an empty database and returns its DSN.
func (s *Server) NewDatabase(ctx context.Context) (string, error) {
	return s.create(ctx, fmt.Sprintf("test_%d_%d", os.Getpid(), s.n.Add(1)))
}

// create creates the empty database name and returns its DSN.
func (s *Server) create(ctx context.Context, name string) (string, error) {
	db, err := sql.Open("pgx", s.DSN("postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return s.DSN(name), nil
}

// NewDatabaseURL is NewDatabase, its connection string a postgres:// URL: what skillbox's
// --database takes.
func (s *Server) NewDatabaseURL(ctx context.Context) (string, error) {
	name := fmt.Sprintf("test_%d_%d", os.Getpid(), s.n.Add(1))
	if _, err := s.create(ctx, name); err != nil {
		return "", err
	}
	return "postgres://skillbox@/" + name + "?host=" + url.QueryEscape(s.dir) + "&port=5432&sslmode=disable", nil
}

// Stop ends the server (a fast shutdown, then a kill after 10 s) and removes its files.
func (s *Server) Stop() {
	s.halt(false)
	os.RemoveAll(s.dir)
}

// Log is what the server printed, for a failing test.
func (s *Server) Log() string { return strings.TrimSpace(s.log.String()) }
