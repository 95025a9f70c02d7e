;; tablegrow: a table.grow bomb on a table declared without a maximum. Growing by 2^31-1 or by 32M
;; entries must fail (-1) instead of making the host allocate 8 bytes an entry (16 GiB, 256 MiB);
;; growing by 10 must still work. Returns 0 when all three behaved, else traps.
(module
  (table $t 1 funcref)
  (func (export "execute") (result i32)
    (if (i32.ne (table.grow $t (ref.null func) (i32.const 0x7fffffff)) (i32.const -1))
      (then unreachable))
    (if (i32.ne (table.grow $t (ref.null func) (i32.const 33554432)) (i32.const -1))
      (then unreachable))
    (if (i32.lt_s (table.grow $t (ref.null func) (i32.const 10)) (i32.const 0))
      (then unreachable))
    (i32.const 0)))
