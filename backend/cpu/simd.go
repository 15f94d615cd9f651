package cpu

// copyRowsGo is the portable copyRows: one copy per row.
func copyRowsGo(dst []float32, ldd int, src []float32, lds, rows, cols int) {
	for r := range rows {
		copy(dst[r*ldd:][:cols], src[r*lds:][:cols])
	}
}
