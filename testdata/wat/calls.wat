;; calls: calls skillbox_env N times, reading each reply's status and freeing it, then outputs the
;; last status digit. N is the digits of its input read as one decimal number ({"n":1000} makes
;; 1000 calls). The benchmarks take the cost of one host call from runs of different N.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "free" (func $free (param i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/user" "skillbox_env" (func $env (param i64) (result i64)))
  (func (export "execute") (result i32)
    (local $len i64) (local $j i64) (local $c i32) (local $n i32)
    (local $name i64) (local $i i32) (local $reply i64) (local $status i32) (local $out i64)
    (local.set $len (call $input_length))
    (block $parsed
      (loop $digit
        (br_if $parsed (i64.ge_u (local.get $j) (local.get $len)))
        (local.set $c (call $input_load_u8 (local.get $j)))
        (if (i32.and (i32.ge_u (local.get $c) (i32.const 48)) (i32.le_u (local.get $c) (i32.const 57)))
          (then (local.set $n (i32.add (i32.mul (local.get $n) (i32.const 10))
                                       (i32.sub (local.get $c) (i32.const 48))))))
        (local.set $j (i64.add (local.get $j) (i64.const 1)))
        (br $digit)))
    ;; name = "X"
    (local.set $name (call $alloc (i64.const 1)))
    (call $store_u8 (local.get $name) (i32.const 88))
    (block $done
      (loop $again
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $reply (call $env (local.get $name)))
        (local.set $status (call $load_u8 (local.get $reply)))
        (call $free (local.get $reply))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $again)))
    (local.set $out (call $alloc (i64.const 1)))
    (call $store_u8 (local.get $out) (i32.add (i32.const 48) (local.get $status)))
    (call $output_set (local.get $out) (i64.const 1))
    (i32.const 0)))
