;; sleep: asks WASI poll_oneoff for a one-hour relative clock wait, so that only the run's deadline
;; or its caller can end it (wazero's default nanosleep would not be interrupted), however slow
;; the machine.
(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "execute") (result i32)
    ;; subscription at 0 (48 bytes): userdata 0, tag 0 (clock), clock id 1 (monotonic) at 16,
    ;; timeout at 24, precision at 32, flags 0 at 40 (relative). Event out at 64, count at 128.
    (i32.store8 (i32.const 8) (i32.const 0))
    (i32.store (i32.const 16) (i32.const 1))
    (i64.store (i32.const 24) (i64.const 3600000000000))
    (drop (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 128)))
    (i32.const 0)))
