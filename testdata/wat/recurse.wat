;; recurse: unbounded recursion. wazero's call stack limit must stop it as a trap.
(module
  (func $down (param $n i64) (result i64)
    (call $down (i64.add (local.get $n) (i64.const 1))))
  (func (export "execute") (result i32)
    (drop (call $down (i64.const 0)))
    (i32.const 0)))
