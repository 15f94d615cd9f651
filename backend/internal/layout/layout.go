// Package layout holds the stride arithmetic that Ember's backends share:
// row-major strides and contiguity, and the GEMM description of a strided
// matrix. Shapes are not computed here: an op's output shape comes
// inferred with it (ir.Op.Shape), and other shape arithmetic
// (broadcasting, convolution and pooling sizes) is package ir's.
package layout

// RowMajorStrides returns the contiguous row-major strides of shape, in
// elements (the last axis has stride 1).
func RowMajorStrides(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// IsRowMajor reports whether strides lay shape out contiguously in
// row-major order (the last axis has stride 1, each axis the product of
// the sizes after it); axes of size 1 may have any stride.
func IsRowMajor(shape, strides []int) bool {
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && strides[i] != s {
			return false
		}
		s *= shape[i]
	}
	return true
}

// MatrixLayout describes a rows × cols matrix with row stride sr and
// column stride sc (elements) for a BLAS-style GEMM: trans is false for
// row-major storage with leading dimension ld, true for column-major
// storage (its transpose is row-major with ld); ok is false when neither
// fits and the matrix must be copied first. Size-1 axes accept any stride.
func MatrixLayout(rows, cols, sr, sc int) (trans bool, ld int, ok bool) {
	rr, rc := sr, sc
	if rows == 1 {
		rr = max(cols, 1)
	}
	if cols == 1 {
		rc = 1
	}
	if rc == 1 && rr >= max(cols, 1) {
		return false, rr, true
	}
	cr, cc := sr, sc
	if cols == 1 {
		cc = max(rows, 1)
	}
	if rows == 1 {
		cr = 1
	}
	if cr == 1 && cc >= max(rows, 1) {
		return true, cc, true
	}
	return false, 0, false
}
