package winograd

// fma32 returns x·y + z in float32 with the product exact (a product of
// two float32 values is exact in float64, so only the sum is rounded,
// there and then once more to float32; the double rounding differs from
// the fused instruction's single one in rare halfway cases, which the
// tests' tolerances cover).
func fma32(x, y, z float32) float32 {
	return float32(float64(x)*float64(y) + float64(z))
}
