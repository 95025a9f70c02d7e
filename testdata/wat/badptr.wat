;; badptr: hands host functions offsets that are not Extism blocks. Its input picks the call:
;; byte 0 '1' env(123456789), '2' read_file(2^40), '3' fetch(valid empty head, body 7),
;; '4' log(level 1, 99999). Each must stop the run as a trap without touching host memory.
(module
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/user" "skillbox_env" (func $env (param i64) (result i64)))
  (import "extism:host/user" "skillbox_read_file" (func $read_file (param i64) (result i64)))
  (import "extism:host/user" "skillbox_fetch" (func $fetch (param i64 i64) (result i64)))
  (import "extism:host/user" "skillbox_log" (func $log (param i32 i64)))
  (func (export "execute") (result i32)
    (local $which i32) (local $head i64)
    ;; The input is a JSON object: {"case":"1"}. Byte 9 is the digit.
    (local.set $which (call $input_load_u8 (i64.const 9)))
    (if (i32.eq (local.get $which) (i32.const 49))
      (then (drop (call $env (i64.const 123456789)))))
    (if (i32.eq (local.get $which) (i32.const 50))
      (then (drop (call $read_file (i64.const 1099511627776)))))
    (if (i32.eq (local.get $which) (i32.const 51))
      (then
        (local.set $head (call $alloc (i64.const 2)))
        (call $store_u8 (local.get $head) (i32.const 123))
        (call $store_u8 (i64.add (local.get $head) (i64.const 1)) (i32.const 125))
        (drop (call $fetch (local.get $head) (i64.const 7)))))
    (if (i32.eq (local.get $which) (i32.const 52))
      (then (call $log (i32.const 1) (i64.const 99999))))
    (i32.const 0)))
