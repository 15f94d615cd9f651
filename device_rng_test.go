package ember_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/emberml/ember"
)

// TestRNGStateResumesStream checks that SetRNGState continues the random
// stream from where RNGState read it: the draws after the restore equal
// the draws that followed the read, on every host backend and through the
// fusion and autodiff decorators, and differ from a fresh seed's.
func TestRNGStateResumesStream(t *testing.T) {
	devs := map[string]ember.Device{"flex": ember.Flex(), "cpu": ember.CPU(), "cpu+autodiff": ember.CPU().Autodiff()}
	for _, name := range []string{"ndarray", "cuda:0"} { // where this build and machine have them
		if d, err := ember.ParseDevice(name); err == nil && d.Init() == nil {
			devs[name] = d
		}
	}
	for name, dev := range devs {
		t.Run(name, func(t *testing.T) {
			dev.Seed(11)
			ember.Randn([]int{7}, dev).Float32s() // advance the stream
			state, err := dev.RNGState()
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Concat(ember.Randn([]int{5}, dev).Float32s(), ember.Rand([]int{3}, dev).Float32s())
			dev.Seed(99)
			other := ember.Randn([]int{5}, dev).Float32s()
			if err := dev.SetRNGState(state); err != nil {
				t.Fatal(err)
			}
			got := slices.Concat(ember.Randn([]int{5}, dev).Float32s(), ember.Rand([]int{3}, dev).Float32s())
			if !slices.Equal(got, want) {
				t.Fatalf("after SetRNGState drew %v, want %v", got, want)
			}
			if slices.Equal(other, want[:5]) {
				t.Fatalf("another seed drew the same values %v", other)
			}
		})
	}
}

// TestRNGStateShared checks that flex and cpu read each other's states
// (cpu draws from a flex generator), so a checkpoint moves between them.
func TestRNGStateShared(t *testing.T) {
	a, b := ember.Flex(), ember.CPU()
	a.Seed(5)
	state, err := a.RNGState()
	if err != nil {
		t.Fatal(err)
	}
	want := ember.Randn([]int{6}, a).Float32s()
	if err := b.SetRNGState(state); err != nil {
		t.Fatal(err)
	}
	if got := ember.Randn([]int{6}, b).Float32s(); !slices.Equal(got, want) {
		t.Fatalf("cpu drew %v from flex's state, flex drew %v", got, want)
	}
}

func TestRNGStateErrors(t *testing.T) {
	dev := ember.Flex()
	dev.Seed(3)
	before, _ := dev.RNGState()
	for _, bad := range [][]byte{nil, []byte("pcg:"), []byte("cuda-philox:0123456789abcdef"), []byte("pcg:0123456789abcdef0")} {
		err := dev.SetRNGState(bad)
		if err == nil {
			t.Fatalf("SetRNGState(%q) accepted", bad)
		}
	}
	if after, _ := dev.RNGState(); !slices.Equal(after, before) {
		t.Fatal("a refused state changed the generator")
	}
	if _, err := ember.Capture().RNGState(); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("RNGState on a capture device: %v, want errors.ErrUnsupported", err)
	}
}
