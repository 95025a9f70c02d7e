;; Stand-ins for the host functions the interpreter imports from "skillbox", so that Wizer can
;; instantiate it. Initialisation never calls them (Wizer would stop if it did); at run time the
;; Go runner (internal/cpython) provides the real ones.
(module
  (func (export "call") (param i32 i32) (result i32) unreachable)
  (func (export "reply") (param i32 i32) (result i32) unreachable)
  (func (export "done") (param i32 i32) unreachable))
