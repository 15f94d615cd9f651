//go:build !amd64

package cpu

// erfISA is erfGeneric: erfGo does all of erfF32's work.
var erfISA = erfGeneric

// erfVec does nothing off amd64 (no vector kernel): it returns 0.
func erfVec(o, a []float32) int { return 0 }

// geluVec does nothing off amd64 (no vector kernel): it returns 0.
func geluVec(o, t []float32, k *[3]float32, swap bool, w []float32) int { return 0 }
