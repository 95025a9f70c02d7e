;; bigname: asks skillbox_env for a 300-byte name (the ABI takes at most 256). The block is valid,
;; so the answer is a reply with status INVALID (3), not a trap. Outputs that status byte as an
;; ASCII digit, so the run's result is the JSON number 3.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/user" "skillbox_env" (func $env (param i64) (result i64)))
  (func (export "execute") (result i32)
    (local $name i64) (local $i i64) (local $reply i64) (local $out i64)
    (local.set $name (call $alloc (i64.const 300)))
    (block $done
      (loop $fill
        (br_if $done (i64.ge_u (local.get $i) (i64.const 300)))
        (call $store_u8 (i64.add (local.get $name) (local.get $i)) (i32.const 65))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $fill)))
    (local.set $reply (call $env (local.get $name)))
    (local.set $out (call $alloc (i64.const 1)))
    (call $store_u8 (local.get $out) (i32.add (i32.const 48) (call $load_u8 (local.get $reply))))
    (call $output_set (local.get $out) (i64.const 1))
    (i32.const 0)))
