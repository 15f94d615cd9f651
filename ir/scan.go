package ir

// KindCumSum is the inclusive prefix sum along an axis (PyTorch's cumsum):
// In[0] (not Bool), Axis; the output has the input's shape and dtype.
const KindCumSum Kind = 29

func init() {
	register(KindCumSum, Spec{Name: "cumsum", Group: GroupScan, Cost: ComputeBound, NumInputs: 1, Operands: []string{"x"},
		Infer: inferScan, Decompose: decomposeCumSum})
}

func inferScan(op Op) ([]int, DType, error) {
	if err := checkInputs(&op, 1); err != nil {
		return nil, 0, err
	}
	x := op.In[0]
	if x.DType() == Bool {
		return nil, 0, errorf("not defined for Bool tensors (cast first)")
	}
	if err := checkAxis(op.Axis, len(x.Shape())); err != nil {
		return nil, 0, err
	}
	op.Shape, op.DType = x.Shape(), x.DType()
	return op.Shape, op.DType, nil
}

// decomposeCumSum is the inclusive prefix sum along Axis as a Hillis–Steele
// scan: ⌈log₂ n⌉ steps, step d adding the running result shifted by d
// (Slice and zero Pad) to itself. Integer results are exact; float results
// may round differently from a sequential sum (each element is a sum of
// the same terms in another association).
func decomposeCumSum(op Op, e Executor) Outputs {
	y := op.In[0]
	shape := y.Shape()
	ax := op.Axis
	n := shape[ax]
	for d := 1; d < n; d *= 2 {
		rs := FullRanges(shape)
		rs[ax].End = n - d
		pads := make([]int, 2*len(shape))
		pads[2*ax] = d
		y = Add(e, y, Pad(e, Slice(e, y, rs), pads, 0))
	}
	return One(y)
}
