;; fullmem: a memory whose minimum is its maximum (with the kernel's 1 MiB, a memoryMiB of 2 is full
;; at the start), then a trap. It never grew: a trap, not
;; memory_limit.
(module
  (memory 16 16)
  (func (export "execute") (result i32)
    unreachable))
