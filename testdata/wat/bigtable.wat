;; bigtable: a table whose minimum (1M entries, 8 MiB of host memory) is more than a small memory
;; limit's share for tables. Refused when the skill loads, not when it runs.
(module
  (table 1048576 funcref)
  (func (export "execute") (result i32) (i32.const 0)))
