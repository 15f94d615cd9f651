package remote

import (
	"testing"

	"github.com/emberml/ember/ir"
)

// BenchmarkEncodeOp measures the client's encoding of one op: the
// ir.Record of a broadcast add and the task around it.
func BenchmarkEncodeOp(b *testing.B) {
	x := ir.NewRef(1, []int{64, 128}, ir.F32)
	y := ir.NewRef(2, []int{128}, ir.F32)
	op := ir.Op{Kind: ir.KindBinary, Sub: uint8(ir.OpAdd), In: [3]ir.Tensor{x, y}}
	if err := op.Infer(); err != nil {
		b.Fatal(err)
	}
	id := func(t ir.Tensor) ir.TensorID { return t.(*ir.Ref).ID() }
	outs := []ir.TensorID{3}
	b.ReportAllocs()
	for b.Loop() {
		rec := ir.Encode(op, id, outs)
		if _, err := encMode.Marshal(&task{Op: &rec}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBatch measures the server's decoding of a batch of 256
// encoded ops.
func BenchmarkDecodeBatch(b *testing.B) {
	x := ir.NewRef(1, []int{64, 128}, ir.F32)
	y := ir.NewRef(2, []int{128}, ir.F32)
	op := ir.Op{Kind: ir.KindBinary, Sub: uint8(ir.OpAdd), In: [3]ir.Tensor{x, y}}
	if err := op.Infer(); err != nil {
		b.Fatal(err)
	}
	recs := make([]ir.Record, 256)
	tasks := make([]task, 256)
	for i := range recs {
		recs[i] = ir.Encode(op, func(t ir.Tensor) ir.TensorID { return t.(*ir.Ref).ID() }, []ir.TensorID{ir.TensorID(3 + i)})
		tasks[i] = task{Op: &recs[i]}
	}
	frame, err := encMode.Marshal(&clientFrame{Tasks: tasks})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeClientFrame(frame); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundTrip measures a read of a small tensor from a server on
// loopback: one request and its reply.
func BenchmarkRoundTrip(b *testing.B) {
	c := startServer(b, 1, ServerOptions{}).connect(b, 0, ClientOptions{HostCacheBytes: -1})
	x := c.FromData(ir.FromSlice([]float32{1, 2, 3, 4}, []int{4}))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ToData(x); err != nil {
			b.Fatal(err)
		}
	}
}
