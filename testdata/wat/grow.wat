;; grow: a memory.grow bomb. Grows one page at a time until the limit refuses, then traps, as a
;; real program that runs out of memory does. Must be reported as memory_limit.
(module
  (memory 1)
  (func (export "execute") (result i32)
    (block $full
      (loop $more
        (br_if $full (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
        (br $more)))
    unreachable))
