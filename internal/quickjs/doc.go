// Package quickjs runs JavaScript skills in the QuickJS-NG WASI reactor
// (github.com/aperturerobotics/go-quickjs-wasi-reactor) on wazero: the reactor is compiled once
// per wazero.Runtime (see [Compile]) and every run gets a fresh instance, never reused (see
// [Run]).
//
// A run evaluates a prelude that defines the SkillContext (__ctx), the skill's bundle (an IIFE
// that defines the global __skill), and a driver that awaits __skill.execute(args, __ctx). The
// SkillContext reaches Go through fd_write: the prelude writes one request line, "\x01" followed
// by a JSON object, to fd 1; the host answers it synchronously inside fd_write, by setting the
// global __reply in the guest before fd_write returns (see frame.go). Everything else written to
// fd 1 and fd 2 (print, console.log) is split into lines and handed to [broker.Host.Log], capped.
//
// The guest gets no std or os module (qjs_init_argv, which would add them, is never called), no
// file system, no environment, no arguments; real clocks and a Math.random seeded per run from
// crypto/rand.
package quickjs
