package flex

// Per-element functions of flex's float kernels, for backends that fuse
// elementwise ops and must compute each element exactly as flex does.
// Both take and return float64: flex computes a float32 element in
// float64 and rounds the result to float32 once.

// FloorDivFloat is the FloorDiv op on floats (PyTorch's
// div_floor_floating): a/b rounded toward -Inf, computed through the
// remainder as PyTorch does, with ±0 and ±Inf where PyTorch has them; a
// zero divisor gives a/b.
func FloorDivFloat(a, b float64) float64 { return floorDiv(a, b) }

// ModFloat is the Mod op on floats (Python's %): the remainder of a/b with
// the divisor's sign.
func ModFloat(a, b float64) float64 { return pyMod(a, b) }
