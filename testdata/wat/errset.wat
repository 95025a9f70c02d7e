;; errset: sets an Extism error of 12 MiB (a fresh block: zero bytes) and fails. The message
;; must reach the caller cut to the run's maxOutputBytes, like any output of the guest.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (func (export "execute") (result i32)
    (call $error_set (call $alloc (i64.const 12582912)))
    (i32.const 1)))
