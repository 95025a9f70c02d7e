;; envloop: calls skillbox_env 1000 times (freeing each reply), then outputs the last reply's
;; status digit. Used to measure the cost of one host call against hello.wat.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "free" (func $free (param i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/user" "skillbox_env" (func $env (param i64) (result i64)))
  (func (export "execute") (result i32)
    (local $name i64) (local $i i32) (local $reply i64) (local $status i32) (local $out i64)
    ;; name = "X"
    (local.set $name (call $alloc (i64.const 1)))
    (call $store_u8 (local.get $name) (i32.const 88))
    (block $done
      (loop $again
        (br_if $done (i32.ge_u (local.get $i) (i32.const 1000)))
        (local.set $reply (call $env (local.get $name)))
        (local.set $status (call $load_u8 (local.get $reply)))
        (call $free (local.get $reply))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $again)))
    (local.set $out (call $alloc (i64.const 1)))
    (call $store_u8 (local.get $out) (i32.add (i32.const 48) (local.get $status)))
    (call $output_set (local.get $out) (i64.const 1))
    (i32.const 0)))
