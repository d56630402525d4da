;; Experiment (ADR 0089, not shipped): certified-push relaxation kernels, the same
;; Gauss–Seidel sweeps as `relax` and `relaxPair` in push.ts, operation for operation
;; (IEEE-754 double multiply and add, no fused multiply-add), so every state is bit-identical
;; to the TypeScript kernels'. Compiled at run time by run.mjs (wabt).
;;
;; A view is five arrays at byte addresses: offsets i32[n+1], targets i32[m], weights f64[m],
;; strength f64[n], invStrength f64[n]. Seeds: nodes i32[ns], weights f64[ns].
(module
  (import "env" "memory" (memory 1))

  ;; One view: p, r f64[n]. Returns the arcs scanned.
  (func (export "relax")
    (param $n i32) (param $off i32) (param $tgt i32) (param $wt i32) (param $str i32) (param $inv i32)
    (param $p i32) (param $r i32) (param $d f64) (param $eps f64)
    (param $sn i32) (param $sw i32) (param $ns i32)
    (result f64)
    (local $u i32) (local $pushed i32) (local $work f64) (local $ru f64) (local $iv f64)
    (local $c f64) (local $k i32) (local $end i32) (local $keep f64) (local $a i32) (local $i i32)
    (local.set $keep (f64.sub (f64.const 1) (local.get $d)))
    (loop $sweep
      (local.set $pushed (i32.const 0))
      (local.set $u (i32.const 0))
      (block $done
        (loop $nodes
          (br_if $done (i32.ge_u (local.get $u) (local.get $n)))
          (local.set $a (i32.add (local.get $r) (i32.shl (local.get $u) (i32.const 3))))
          (local.set $ru (f64.load (local.get $a)))
          (if (f64.gt (f64.abs (local.get $ru))
                      (f64.mul (local.get $eps)
                               (f64.load (i32.add (local.get $str) (i32.shl (local.get $u) (i32.const 3))))))
            (then
              (local.set $iv (f64.load (i32.add (local.get $inv) (i32.shl (local.get $u) (i32.const 3)))))
              (if (f64.eq (local.get $iv) (f64.const 0))
                (then
                  (if (f64.gt (f64.abs (local.get $ru)) (local.get $eps))
                    (then
                      (f64.store (local.get $a) (f64.const 0))
                      (local.set $a (i32.add (local.get $p) (i32.shl (local.get $u) (i32.const 3))))
                      (f64.store (local.get $a)
                        (f64.add (f64.load (local.get $a)) (f64.mul (local.get $keep) (local.get $ru))))
                      (local.set $c (f64.mul (local.get $d) (local.get $ru)))
                      (local.set $i (i32.const 0))
                      (block $sd
                        (loop $seeds
                          (br_if $sd (i32.ge_u (local.get $i) (local.get $ns)))
                          (local.set $a (i32.add (local.get $r)
                            (i32.shl (i32.load (i32.add (local.get $sn) (i32.shl (local.get $i) (i32.const 2)))) (i32.const 3))))
                          (f64.store (local.get $a)
                            (f64.add (f64.load (local.get $a))
                              (f64.mul (local.get $c)
                                (f64.load (i32.add (local.get $sw) (i32.shl (local.get $i) (i32.const 3)))))))
                          (local.set $i (i32.add (local.get $i) (i32.const 1)))
                          (br $seeds)))
                      (local.set $pushed (i32.add (local.get $pushed) (i32.const 1))))))
                (else
                  (f64.store (local.get $a) (f64.const 0))
                  (local.set $a (i32.add (local.get $p) (i32.shl (local.get $u) (i32.const 3))))
                  (f64.store (local.get $a)
                    (f64.add (f64.load (local.get $a)) (f64.mul (local.get $keep) (local.get $ru))))
                  (local.set $c (f64.mul (f64.mul (local.get $d) (local.get $ru)) (local.get $iv)))
                  (local.set $a (i32.add (local.get $off) (i32.shl (local.get $u) (i32.const 2))))
                  (local.set $k (i32.load (local.get $a)))
                  (local.set $end (i32.load offset=4 (local.get $a)))
                  (local.set $work (f64.add (local.get $work) (f64.convert_i32_s (i32.sub (local.get $end) (local.get $k)))))
                  (block $ad
                    (loop $arcs
                      (br_if $ad (i32.ge_s (local.get $k) (local.get $end)))
                      (local.set $a (i32.add (local.get $r)
                        (i32.shl (i32.load (i32.add (local.get $tgt) (i32.shl (local.get $k) (i32.const 2)))) (i32.const 3))))
                      (f64.store (local.get $a)
                        (f64.add (f64.load (local.get $a))
                          (f64.mul (local.get $c)
                            (f64.load (i32.add (local.get $wt) (i32.shl (local.get $k) (i32.const 3)))))))
                      (local.set $k (i32.add (local.get $k) (i32.const 1)))
                      (br $arcs)))
                  (local.set $pushed (i32.add (local.get $pushed) (i32.const 1)))))))
          (local.set $u (i32.add (local.get $u) (i32.const 1)))
          (br $nodes)))
      (br_if $sweep (local.get $pushed)))
    (local.get $work))

  ;; One lane of the paired state (lane = 0 for G, 8 for G_A: byte offset inside a 16-byte pair),
  ;; pushed over one view as `pushNode` in push.ts. Returns -1 (no push) or the arcs scanned.
  (func $push1
    (param $u i32) (param $off i32) (param $tgt i32) (param $wt i32) (param $str i32) (param $inv i32)
    (param $p2 i32) (param $r2 i32) (param $lane i32) (param $d f64) (param $eps f64)
    (param $sn i32) (param $sw i32) (param $ns i32)
    (result i32)
    (local $ru f64) (local $iv f64) (local $c f64) (local $a i32) (local $k i32) (local $end i32) (local $i i32)
    (local.set $a (i32.add (i32.add (local.get $r2) (i32.shl (local.get $u) (i32.const 4))) (local.get $lane)))
    (local.set $ru (f64.load (local.get $a)))
    (if (i32.eqz (f64.gt (f64.abs (local.get $ru))
                  (f64.mul (local.get $eps)
                    (f64.load (i32.add (local.get $str) (i32.shl (local.get $u) (i32.const 3)))))))
      (then (return (i32.const -1))))
    (local.set $iv (f64.load (i32.add (local.get $inv) (i32.shl (local.get $u) (i32.const 3)))))
    (if (f64.eq (local.get $iv) (f64.const 0))
      (then
        (if (i32.eqz (f64.gt (f64.abs (local.get $ru)) (local.get $eps)))
          (then (return (i32.const -1))))
        (f64.store (local.get $a) (f64.const 0))
        (local.set $a (i32.add (i32.add (local.get $p2) (i32.shl (local.get $u) (i32.const 4))) (local.get $lane)))
        (f64.store (local.get $a)
          (f64.add (f64.load (local.get $a)) (f64.mul (f64.sub (f64.const 1) (local.get $d)) (local.get $ru))))
        (local.set $c (f64.mul (local.get $d) (local.get $ru)))
        (local.set $i (i32.const 0))
        (block $sd
          (loop $seeds
            (br_if $sd (i32.ge_u (local.get $i) (local.get $ns)))
            (local.set $a (i32.add (i32.add (local.get $r2)
              (i32.shl (i32.load (i32.add (local.get $sn) (i32.shl (local.get $i) (i32.const 2)))) (i32.const 4)))
              (local.get $lane)))
            (f64.store (local.get $a)
              (f64.add (f64.load (local.get $a))
                (f64.mul (local.get $c)
                  (f64.load (i32.add (local.get $sw) (i32.shl (local.get $i) (i32.const 3)))))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $seeds)))
        (return (i32.const 0))))
    (f64.store (local.get $a) (f64.const 0))
    (local.set $a (i32.add (i32.add (local.get $p2) (i32.shl (local.get $u) (i32.const 4))) (local.get $lane)))
    (f64.store (local.get $a)
      (f64.add (f64.load (local.get $a)) (f64.mul (f64.sub (f64.const 1) (local.get $d)) (local.get $ru))))
    (local.set $c (f64.mul (f64.mul (local.get $d) (local.get $ru)) (local.get $iv)))
    (local.set $a (i32.add (local.get $off) (i32.shl (local.get $u) (i32.const 2))))
    (local.set $k (i32.load (local.get $a)))
    (local.set $end (i32.load offset=4 (local.get $a)))
    (local.set $i (i32.sub (local.get $end) (local.get $k)))
    (block $ad
      (loop $arcs
        (br_if $ad (i32.ge_s (local.get $k) (local.get $end)))
        (local.set $a (i32.add (i32.add (local.get $r2)
          (i32.shl (i32.load (i32.add (local.get $tgt) (i32.shl (local.get $k) (i32.const 2)))) (i32.const 4)))
          (local.get $lane)))
        (f64.store (local.get $a)
          (f64.add (f64.load (local.get $a))
            (f64.mul (local.get $c)
              (f64.load (i32.add (local.get $wt) (i32.shl (local.get $k) (i32.const 3)))))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $arcs)))
    (local.get $i))

  ;; The paired state (G in lane 0, G_A in lane 1 of each f64x2 at p2/r2 + 16u), as `relaxPair`:
  ;; an untainted node's arcs are scanned once for both lanes, the lane that is not over its level
  ;; pushing 0 (x + 0·w = x); a tainted node is pushed per lane over its own view. The arc work of
  ;; each view is written as two f64 at $out.
  (func (export "relaxPair")
    (param $n i32)
    (param $offF i32) (param $tgtF i32) (param $wtF i32) (param $strF i32) (param $invF i32)
    (param $offA i32) (param $tgtA i32) (param $wtA i32) (param $strA i32) (param $invA i32)
    (param $mask i32) (param $p2 i32) (param $r2 i32) (param $d f64) (param $eps f64)
    (param $sn i32) (param $sw i32) (param $ns i32) (param $out i32)
    (local $u i32) (local $pushed i32) (local $workG f64) (local $workA f64) (local $v v128)
    (local $m v128) (local $rm v128) (local $c v128) (local $iv f64) (local $a i32) (local $k i32)
    (local $end i32) (local $w i32) (local $deg f64)
    (loop $sweep
      (local.set $pushed (i32.const 0))
      (local.set $u (i32.const 0))
      (block $done
        (loop $nodes
          (br_if $done (i32.ge_u (local.get $u) (local.get $n)))
          (if (i32.load8_u (i32.add (local.get $mask) (local.get $u)))
            (then
              (local.set $w (call $push1 (local.get $u) (local.get $offF) (local.get $tgtF) (local.get $wtF)
                (local.get $strF) (local.get $invF) (local.get $p2) (local.get $r2) (i32.const 0)
                (local.get $d) (local.get $eps) (local.get $sn) (local.get $sw) (local.get $ns)))
              (if (i32.ge_s (local.get $w) (i32.const 0))
                (then
                  (local.set $workG (f64.add (local.get $workG) (f64.convert_i32_s (local.get $w))))
                  (local.set $pushed (i32.add (local.get $pushed) (i32.const 1)))))
              (local.set $w (call $push1 (local.get $u) (local.get $offA) (local.get $tgtA) (local.get $wtA)
                (local.get $strA) (local.get $invA) (local.get $p2) (local.get $r2) (i32.const 8)
                (local.get $d) (local.get $eps) (local.get $sn) (local.get $sw) (local.get $ns)))
              (if (i32.ge_s (local.get $w) (i32.const 0))
                (then
                  (local.set $workA (f64.add (local.get $workA) (f64.convert_i32_s (local.get $w))))
                  (local.set $pushed (i32.add (local.get $pushed) (i32.const 1))))))
            (else
              (local.set $a (i32.add (local.get $r2) (i32.shl (local.get $u) (i32.const 4))))
              (local.set $v (v128.load (local.get $a)))
              (local.set $m (f64x2.gt (f64x2.abs (local.get $v))
                (f64x2.splat (f64.mul (local.get $eps)
                  (f64.load (i32.add (local.get $strF) (i32.shl (local.get $u) (i32.const 3))))))))
              (if (v128.any_true (local.get $m))
                (then
                  (local.set $iv (f64.load (i32.add (local.get $invF) (i32.shl (local.get $u) (i32.const 3)))))
                  (if (f64.eq (local.get $iv) (f64.const 0))
                    (then
                      (if (i32.ge_s (call $push1 (local.get $u) (local.get $offF) (local.get $tgtF) (local.get $wtF)
                            (local.get $strF) (local.get $invF) (local.get $p2) (local.get $r2) (i32.const 0)
                            (local.get $d) (local.get $eps) (local.get $sn) (local.get $sw) (local.get $ns)) (i32.const 0))
                        (then (local.set $pushed (i32.add (local.get $pushed) (i32.const 1)))))
                      (if (i32.ge_s (call $push1 (local.get $u) (local.get $offA) (local.get $tgtA) (local.get $wtA)
                            (local.get $strA) (local.get $invA) (local.get $p2) (local.get $r2) (i32.const 8)
                            (local.get $d) (local.get $eps) (local.get $sn) (local.get $sw) (local.get $ns)) (i32.const 0))
                        (then (local.set $pushed (i32.add (local.get $pushed) (i32.const 1))))))
                    (else
                      (local.set $pushed (i32.add (local.get $pushed) (i32.const 1)))
                      (local.set $rm (v128.and (local.get $v) (local.get $m)))
                      (v128.store (local.get $a) (v128.andnot (local.get $v) (local.get $m)))
                      (local.set $a (i32.add (local.get $p2) (i32.shl (local.get $u) (i32.const 4))))
                      (v128.store (local.get $a)
                        (f64x2.add (v128.load (local.get $a))
                          (f64x2.mul (f64x2.splat (f64.sub (f64.const 1) (local.get $d))) (local.get $rm))))
                      (local.set $c (f64x2.mul (f64x2.mul (f64x2.splat (local.get $d)) (local.get $rm))
                        (f64x2.splat (local.get $iv))))
                      (local.set $a (i32.add (local.get $offF) (i32.shl (local.get $u) (i32.const 2))))
                      (local.set $k (i32.load (local.get $a)))
                      (local.set $end (i32.load offset=4 (local.get $a)))
                      (local.set $deg (f64.convert_i32_s (i32.sub (local.get $end) (local.get $k))))
                      (if (i32.wrap_i64 (i64x2.extract_lane 0 (local.get $m)))
                        (then (local.set $workG (f64.add (local.get $workG) (local.get $deg)))))
                      (if (i32.wrap_i64 (i64x2.extract_lane 1 (local.get $m)))
                        (then (local.set $workA (f64.add (local.get $workA) (local.get $deg)))))
                      (block $ad
                        (loop $arcs
                          (br_if $ad (i32.ge_s (local.get $k) (local.get $end)))
                          (local.set $a (i32.add (local.get $r2)
                            (i32.shl (i32.load (i32.add (local.get $tgtF) (i32.shl (local.get $k) (i32.const 2)))) (i32.const 4))))
                          (v128.store (local.get $a)
                            (f64x2.add (v128.load (local.get $a))
                              (f64x2.mul (local.get $c)
                                (f64x2.splat (f64.load (i32.add (local.get $wtF) (i32.shl (local.get $k) (i32.const 3))))))))
                          (local.set $k (i32.add (local.get $k) (i32.const 1)))
                          (br $arcs)))))))))
          (local.set $u (i32.add (local.get $u) (i32.const 1)))
          (br $nodes)))
      (br_if $sweep (local.get $pushed)))
    (f64.store (local.get $out) (local.get $workG))
    (f64.store offset=8 (local.get $out) (local.get $workA)))
)
