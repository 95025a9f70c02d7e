;; stdout: writes its input to stdout (WASI fd_write) and outputs nothing. Tests that what one
;; run writes never reaches another run's log (the runtime reuses what instances write through).
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (memory (export "memory") 1)
  (func (export "execute") (result i32)
    (local $n i32) (local $i i32)
    (local.set $n (i32.wrap_i64 (call $input_length)))
    (if (i32.gt_u (local.get $n) (i32.const 4096)) (then (local.set $n (i32.const 4096))))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store8 (i32.add (i32.const 1024) (local.get $i))
                    (call $input_load_u8 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    ;; one iovec at 0: the copy at 1024, n bytes; the count written goes to 8
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (local.get $n))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    (i32.const 0)))
