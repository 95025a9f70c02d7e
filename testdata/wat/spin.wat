;; spin: CPU-bound work with no host call: N iterations of an integer hash, N the digits of its
;; input ({"n":1000000}); outputs nothing. The benchmarks compare it with interruption on and off.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (global $sink (mut i64) (i64.const 0))
  (func (export "execute") (result i32)
    (local $len i64) (local $j i64) (local $c i32) (local $n i64) (local $i i64) (local $h i64)
    (local.set $len (call $input_length))
    (block $parsed
      (loop $digit
        (br_if $parsed (i64.ge_u (local.get $j) (local.get $len)))
        (local.set $c (call $input_load_u8 (local.get $j)))
        (if (i32.and (i32.ge_u (local.get $c) (i32.const 48)) (i32.le_u (local.get $c) (i32.const 57)))
          (then (local.set $n (i64.add (i64.mul (local.get $n) (i64.const 10))
                                       (i64.extend_i32_u (i32.sub (local.get $c) (i32.const 48)))))))
        (local.set $j (i64.add (local.get $j) (i64.const 1)))
        (br $digit)))
    (local.set $h (i64.const 1469598103934665603))
    (block $done
      (loop $again
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (local.set $h (i64.mul (i64.xor (local.get $h) (local.get $i)) (i64.const 1099511628211)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $again)))
    (global.set $sink (local.get $h))
    (i32.const 0)))
