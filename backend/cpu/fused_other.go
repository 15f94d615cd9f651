//go:build !amd64

package cpu

import "github.com/emberml/ember/backend"

// fusedVV sets o = a op b for Sub, Mul, Div, Max and Min (Add has
// addF32).
func fusedVV(op backend.BinaryOp, o, a, b []float32) { binVV(op, o, a, b) }

// fusedVS sets o = a op s for the fast binary ops.
func fusedVS(op backend.BinaryOp, o, a []float32, s float32) { binVS(op, o, a, s) }

// fusedSV sets o = s op b for the fast binary ops.
func fusedSV(op backend.BinaryOp, o []float32, s float32, b []float32) { binSV(op, o, s, b) }

// fusedSqrt sets o = float32(math.Sqrt(float64(a))).
func fusedSqrt(o, a []float32) { unaryF32(backend.OpSqrt, o, a) }
