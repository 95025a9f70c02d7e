;; inner: a loop of $n iterations, each entering an inner loop that runs once: a function that
;; enters short loops often, as an interpreter's JSON or string code does.
(module
  (func (export "inner") (param $n i32) (result i32)
    (local $s i32)
    (loop $outer
      (loop $once
        (local.set $s (i32.add (local.get $s) (local.get $n))))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $outer (i32.gt_s (local.get $n) (i32.const 0))))
    (local.get $s)))
