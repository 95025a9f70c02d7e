;; ticker: writes "tick\n" to stdout COUNT times, sleeping MS milliseconds (WASI poll_oneoff)
;; after each line, then outputs nothing. COUNT and MS are the first two numbers of its input,
;; {"count":5,"ms":100} (the runtime hands a module its arguments with their keys sorted). A run
;; that logs as it goes, for tests of event streams, resumption and cancellation; the run's
;; deadline or cancellation cuts a sleep short.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "tick\n")
  (global $pos (mut i64) (i64.const 0))
  ;; number reads the next run of decimal digits of the input from $pos (0 when there is none).
  (func $number (result i64)
    (local $len i64) (local $c i32) (local $n i64) (local $seen i32)
    (local.set $len (call $input_length))
    (block $end
      (loop $scan
        (br_if $end (i64.ge_u (global.get $pos) (local.get $len)))
        (local.set $c (call $input_load_u8 (global.get $pos)))
        (if (i32.and (i32.ge_u (local.get $c) (i32.const 48)) (i32.le_u (local.get $c) (i32.const 57)))
          (then
            (local.set $seen (i32.const 1))
            (local.set $n (i64.add (i64.mul (local.get $n) (i64.const 10))
                                   (i64.extend_i32_u (i32.sub (local.get $c) (i32.const 48))))))
          (else (br_if $end (local.get $seen))))
        (global.set $pos (i64.add (global.get $pos) (i64.const 1)))
        (br $scan)))
    (local.get $n))
  (func (export "execute") (result i32)
    (local $n i64) (local $ms i64) (local $i i64)
    (local.set $n (call $number))
    (local.set $ms (call $number))
    ;; the iovec at 0: "tick\n" at 1024, 5 bytes; the count written goes to 8
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 5))
    ;; the sleep's subscription at 64 (48 bytes): clock, monotonic, relative; its event at 128,
    ;; the count at 192
    (i32.store8 (i32.const 72) (i32.const 0))
    (i32.store (i32.const 80) (i32.const 1))
    (i64.store (i32.const 88) (i64.mul (local.get $ms) (i64.const 1000000)))
    (block $done
      (loop $again
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
        (if (i64.gt_u (local.get $ms) (i64.const 0))
          (then (drop (call $poll (i32.const 64) (i32.const 128) (i32.const 1) (i32.const 192)))))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $again)))
    (i32.const 0)))
