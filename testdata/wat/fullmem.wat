;; fullmem: a memory whose minimum is its maximum, then a trap. It never grew: a trap, not
;; memory_limit.
(module
  (memory 16 16)
  (func (export "execute") (result i32)
    unreachable))
