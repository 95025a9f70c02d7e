;; tailcall: a loop made of return_call (tail calls), no `loop`: the function-entry check stops
;; it. Counts down from its parameter; from -1 it never ends. Needs wazero's tail-call feature.
(module
  (func $down (export "down") (param $n i32) (result i32)
    (if (i32.eqz (local.get $n)) (then (return (i32.const 7))))
    (return_call $down (i32.sub (local.get $n) (i32.const 1)))))
