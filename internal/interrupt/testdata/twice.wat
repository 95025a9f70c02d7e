;; twice: exponential recursion without a loop. Each call calls itself twice with depth-1; from
;; depth 60 that is 2^60 calls, never deeper than 60 frames. Only a check at function entry can
;; stop it (wazero's own interruption checks loop headers only).
(module
  (func $twice (param $d i32)
    (if (local.get $d)
      (then
        (call $twice (i32.sub (local.get $d) (i32.const 1)))
        (call $twice (i32.sub (local.get $d) (i32.const 1))))))
  (func (export "execute") (param $d i32) (result i32)
    (call $twice (local.get $d))
    (i32.const 0)))
