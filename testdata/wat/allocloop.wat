;; allocloop: allocates kernel blocks of 1 MiB and never frees them until alloc answers 0, then
;; traps. The run must end as memory_limit with the host holding no more than the run's limit.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (func (export "execute") (result i32)
    (loop $again
      (br_if $again (i64.ne (call $alloc (i64.const 1048576)) (i64.const 0))))
    unreachable))
