;; logflood: calls skillbox_log with an empty message three million times. Empty entries must
;; still cost the log budget, or the host would keep millions of them.
(module
  (import "extism:host/user" "skillbox_log" (func $log (param i32 i64)))
  (func (export "execute") (result i32)
    (local $i i32)
    (block $done
      (loop $again
        (br_if $done (i32.ge_u (local.get $i) (i32.const 3000000)))
        (call $log (i32.const 1) (i64.const 0))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $again)))
    (i32.const 0)))
