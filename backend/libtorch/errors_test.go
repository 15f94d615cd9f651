//go:build libtorch && cgo

package libtorch

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// Ops that reach ATen malformed (inference bypassed) come back as *Error
// panics carrying ATen's message: the C++ exception never crosses into Go
// and the process keeps running.
func TestExceptionsBecomeErrors(t *testing.T) {
	x := lt([]float64{1, 2, 3, 4, 5, 6}, []int{2, 3}, backend.F32)
	y := lt([]float64{1, 2, 3, 4}, []int{2, 2}, backend.F32)
	cases := []struct {
		name string
		op   ir.Op
		msg  string
	}{
		{"reshape to 4 elements", ir.Op{Kind: ir.KindReshape, Shape: []int{4}, DType: backend.F32, In: [3]ir.Tensor{x}}, "invalid for input of size 6"},
		{"matmul of mismatched shapes", ir.Op{Kind: ir.KindMatmul, Shape: []int{2, 2}, DType: backend.F32, In: [3]ir.Tensor{x, y}}, "must match"},
		{"add of non-broadcasting shapes", ir.Op{Kind: ir.KindBinary, Sub: uint8(ir.OpAdd), Shape: []int{2, 3}, DType: backend.F32, In: [3]ir.Tensor{x, y}}, "must match"},
		{"permute with a repeated axis", ir.Op{Kind: ir.KindPermute, Ints: []int{0, 0}, Shape: []int{2, 2}, DType: backend.F32, In: [3]ir.Tensor{x}}, "duplicate dims"},
		{"gather out of range", ir.Op{Kind: ir.KindGather, Axis: 1, Shape: []int{1, 1}, DType: backend.F32,
			In: [3]ir.Tensor{x, lt([]float64{7}, []int{1, 1}, backend.I64)}}, "out of bounds"},
		{"index_select out of range", ir.Op{Kind: ir.KindIndexSelect, Axis: 0, Shape: []int{1, 3}, DType: backend.F32,
			In: [3]ir.Tensor{x, lt([]float64{-5}, []int{1}, backend.I64)}}, "out of range"},
	}
	for _, c := range cases {
		err := wantPanic(t, c.name, func() { tb.Exec(c.op) })
		le := wantLibtorchError(t, c.name, err, backend.ErrExecution)
		if !strings.Contains(le.Msg, c.msg) {
			t.Errorf("%s: message %q does not contain %q", c.name, le.Msg, c.msg)
		}
		if errors.Is(err, backend.ErrOutOfMemory) {
			t.Errorf("%s: %v reported as out of memory", c.name, err)
		}
	}
	// The backend still works afterwards.
	expect(t, "add after errors", run1(t, binaryOp(ir.OpAdd, y, y)), []float64{2, 4, 6, 8}, backend.F32)
}

// An allocation libtorch cannot make is an *Error wrapping
// backend.ErrOutOfMemory.
func TestOutOfMemory(t *testing.T) {
	op := ir.Op{Kind: ir.KindFull, DType: backend.F64, Shape: []int{1 << 25, 1 << 22}}
	err := wantPanic(t, "full of 2^47 float64s", func() { tb.Exec(op) })
	wantLibtorchError(t, "full of 2^47 float64s", err, backend.ErrOutOfMemory)
}

// FromData with bytes that do not fit the shape, a dtype ATen lacks, and
// a tensor of another backend all fail with errors, not crashes.
func TestDataErrors(t *testing.T) {
	err := wantPanic(t, "short data", func() {
		tb.FromData(&backend.TensorData{Shape: []int{3}, DType: backend.F32, Bytes: make([]byte, 8)})
	})
	wantLibtorchError(t, "short data", err, backend.ErrExecution)
	err = wantPanic(t, "u32 data", func() {
		tb.FromData(&backend.TensorData{Shape: []int{1}, DType: backend.U32, Bytes: make([]byte, 4)})
	})
	if !errors.Is(err, backend.ErrUnsupportedDType) {
		t.Errorf("u32 FromData: %v does not wrap ErrUnsupportedDType", err)
	}
	for _, dt := range []backend.DType{backend.U16, backend.U32, backend.U64} {
		if tb.SupportsDType(dt) || tb.Supports(ir.KindBinary, dt) {
			t.Errorf("%v claimed supported", dt)
		}
	}
	for _, dt := range append(append([]backend.DType{backend.Bool}, floatDTypes...), intDTypes...) {
		if !tb.SupportsDType(dt) {
			t.Errorf("%v not supported", dt)
		}
	}
	other := fb.FromData(encode([]float64{1}, []int{1}, backend.F32))
	err = wantPanic(t, "flex tensor", func() { exec(t, unaryOp(ir.OpNeg, other)) })
	if !errors.Is(err, backend.ErrInvalidDevice) {
		t.Errorf("flex tensor: %v does not wrap ErrInvalidDevice", err)
	}
}

// The devices this libtorch build lacks fail to open with
// ErrBackendUnavailable and say what is missing.
func TestUnavailableDevices(t *testing.T) {
	cases := map[string]backend.DeviceID{
		"CUDA":   {Type: "libtorch", Kind: "cuda", Index: 0},
		"MPS":    {Type: "libtorch", Kind: "mps"},
		"Vulkan": {Type: "libtorch", Kind: "vulkan"},
	}
	for what, id := range cases {
		if what == "CUDA" && HasCUDA() {
			continue
		}
		_, err := Driver{}.Open(id)
		if !errors.Is(err, backend.ErrBackendUnavailable) || !strings.Contains(err.Error(), what) {
			t.Errorf("Open(%v) = %v, want ErrBackendUnavailable naming %s", id, err, what)
		}
	}
	if _, err := (Driver{}).Open(backend.DeviceID{Type: "libtorch", Index: 1}); !errors.Is(err, backend.ErrBackendUnavailable) {
		t.Errorf("Open(libtorch index 1) = %v", err)
	}
}

// The driver registers "libtorch" below flex's priority with the CPU
// device named "libtorch".
func TestDriver(t *testing.T) {
	d, ok := backend.Lookup("libtorch")
	if !ok {
		t.Fatal("no libtorch driver registered")
	}
	if _, ok := d.(Driver); !ok {
		t.Fatalf("libtorch driver is %T", d)
	}
	if d.Priority() >= 10 {
		t.Errorf("priority %d is not below flex's 10", d.Priority())
	}
	ids := d.Devices()
	if len(ids) == 0 || ids[0] != (backend.DeviceID{Type: "libtorch"}) || ids[0].String() != "libtorch" {
		t.Errorf("devices %v: want libtorch first", ids)
	}
	b, err := d.Open(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if info := b.(backend.DeviceDescriber).DeviceInfo(); !strings.HasPrefix(info.Name, "libtorch ") {
		t.Errorf("device info %+v", info)
	}
	if err := b.Sync(); err != nil {
		t.Errorf("Sync: %v", err)
	}
}

// Ops from several goroutines at once give each goroutine its own
// correct results; the test is meant for -race as well.
func TestConcurrentUse(t *testing.T) {
	done := make(chan error, 4)
	for w := range 4 {
		go func() {
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Errorf("worker %d: %v", w, r)
					return
				}
				done <- nil
			}()
			v := float64(w + 1)
			x := lt([]float64{v, v, v, v}, []int{2, 2}, backend.F32)
			for range 200 {
				y := tb.Exec(ir.Op{Kind: ir.KindMatmul, Shape: []int{2, 2}, DType: backend.F32, In: [3]ir.Tensor{x, x}})[0]
				u := tb.Exec(ir.Op{Kind: ir.KindRandom, Shape: []int{16}, DType: backend.F32})[0]
				d, err := tb.ToData(y)
				if err != nil {
					panic(err)
				}
				for _, g := range decode(d) {
					if g != 2*v*v {
						panic(fmt.Sprintf("matmul gave %v, want %v", g, 2*v*v))
					}
				}
				ud, _ := tb.ToData(u)
				for _, g := range decode(ud) {
					if g < 0 || g >= 1 {
						panic(fmt.Sprintf("uniform sample %v", g))
					}
				}
			}
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
