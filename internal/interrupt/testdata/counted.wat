;; counted: functions whose loops count in a local of their own (counter.go), and every way out
;; of them, each of which must charge what the loops used.
(module
  (type $tail (func (param i32) (result i32)))
  ;; falls off its end after $n iterations
  (func (export "falls") (param $n i32) (result i32)
    (loop $l
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (i32.gt_s (local.get $n) (i32.const 0))))
    (local.get $n))
  ;; returns from inside its loop after $n iterations
  (func (export "returns") (param $n i32) (result i32)
    (loop $l
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (if (i32.le_s (local.get $n) (i32.const 0)) (then (return (local.get $n))))
      (br $l))
    (unreachable))
  ;; leaves its loop by a tail call after $n iterations
  (func (export "tail") (param $n i32) (result i32)
    (loop $l
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (i32.gt_s (local.get $n) (i32.const 0))))
    (return_call $leaf (local.get $n)))
  (func $leaf (type $tail) (local.get 0))
  ;; branches to the function's own label from inside its loop after $n iterations
  (func (export "branches") (param $n i32) (result i32)
    (loop $l
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if 1 (local.get $n) (i32.le_s (local.get $n) (i32.const 0)))
      (br $l))
    (unreachable)))
