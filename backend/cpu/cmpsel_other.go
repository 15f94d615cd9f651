//go:build !amd64

package cpu

import "github.com/emberml/ember/backend"

// cmpVSF32 does nothing here (no vector loops): it returns 0.
func cmpVSF32(op backend.BinaryOp, o []bool, a []float32, s float32) int { return 0 }

// selectF32Vec does nothing here (no vector loops): it returns 0.
func selectF32Vec(o []float32, c []bool, as []float32, ax float32, aScalar bool, bs []float32, bx float32, bScalar bool) int {
	return 0
}

// cmpSelF32Vec does nothing here (no vector loops): it returns 0.
func cmpSelF32Vec(op backend.BinaryOp, o, a []float32, s float32, xs []float32, xv float32, xScalar bool, ys []float32, yv float32, yScalar bool) int {
	return 0
}
