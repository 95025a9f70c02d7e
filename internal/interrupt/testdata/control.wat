;; control: branches that cross loops, which Instrument must make one block deeper for each loop
;; crossed: br_table out of two nested loops, br_if carrying a value out of a loop, a loop with
;; parameters and results (a type-index block type), a block with two results, if/else inside
;; a loop, and a loop that is the target of a br_table entry.
(module
  (type $pair (func (param i32 i32) (result i32)))
  (func (export "table") (param $n i32) (result i32)
    (local $acc i32) (local $j i32)
    (block $out
      (loop $outer
        (local.set $j (i32.const 3))
        (loop $inner
          (local.set $j (i32.sub (local.get $j) (i32.const 1)))
          (block $b2
            (block $b1
              (block $b0
                (br_table $b0 $b1 $b2 $inner $b1 $b0 $b2 $out (i32.rem_u (i32.add (local.get $n) (local.get $j)) (i32.const 8))))
              (local.set $acc (i32.add (local.get $acc) (i32.const 1)))
              (br $b2))
            (local.set $acc (i32.add (local.get $acc) (i32.const 10))))
          (br_if $inner (i32.gt_s (local.get $j) (i32.const 0))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br_if $outer (i32.gt_s (local.get $n) (i32.const 0)))))
    (local.get $acc))
  (func (export "params") (param $n i32) (result i32)
    (local $k i32)
    i32.const 0
    local.get $n
    loop $l (type $pair)
      local.set $k
      local.get $k
      i32.add
      local.get $k
      i32.const 1
      i32.sub
      local.get $k
      i32.const 1
      i32.gt_s
      br_if $l
      drop
    end)
  (func (export "carry") (param $n i32) (result i32)
    (block $found (result i32)
      (loop $l
        (if (i32.eq (i32.rem_u (local.get $n) (i32.const 7)) (i32.const 0))
          (then (br $found (i32.mul (local.get $n) (i32.const 3))))
          (else (local.set $n (i32.add (local.get $n) (i32.const 1)))))
        (br $l))
      (i32.const -1)))
  (func (export "pair") (param $n i32) (result i32)
    (block (result i32 i32)
      (local.get $n)
      (loop $l (param i32) (result i32)
        (i32.add (i32.const 2))
        (br_if $l (i32.lt_s (local.tee $n (i32.add (local.get $n) (i32.const 1))) (i32.const 50))))
      (local.get $n))
    (i32.sub)))
