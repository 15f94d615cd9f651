package ember

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
)

// misuse runs f, which must panic with an *Error for op whose message holds
// every fragment (wantMisuse named by op).
func misuse(t *testing.T, op string, f func(), fragments ...string) {
	t.Helper()
	wantMisuse(t, op, op, f, fragments...)
}

func TestMisuseMessages(t *testing.T) {
	dev := Flex()
	a, b := Zeros([]int{2, 3}, dev), Zeros([]int{4, 5}, dev)
	misuse(t, "matmul", func() { a.Matmul(b) }, "[2 3]", "[4 5]", "inner dimensions")
	misuse(t, "matmul", func() { Zeros([]int{2, 2, 3}, dev).Matmul(Zeros([]int{3, 3, 4}, dev)) }, "batch", "[2]", "[3]")
	misuse(t, "sum", func() { a.SumAxis(2, false) }, "axis 2", "rank 2")
	misuse(t, "max", func() { a.MaxAxis(-3, true) }, "axis -3", "rank 2")
	misuse(t, "softmax", func() { a.Softmax(5) }, "axis 5", "rank 2")
	misuse(t, "add", func() { a.Add(b) }, "[2 3]", "[4 5]", "broadcast")
	misuse(t, "where", func() { Where(a, a, a) }, "Bool")
	i := FromInts([]int{4, 5}, []int{2}, dev)
	z := FromInts([]int{1, 0}, []int{2}, dev)
	misuse(t, "div", func() { i.Div(z) }, "division by zero")
	misuse(t, "rem", func() { i.Rem(z) }, "division by zero")
	misuse(t, "gather", func() { a.Gather(1, FromInts([]int{0, 3}, []int{1, 2}, dev)) }, "index 3", "size 3")
	misuse(t, "permute", func() { a.Permute(0, 0) }, "repeated")
	misuse(t, "conv2d", func() { Zeros([]int{1, 3, 5, 5}, dev).Conv2d(Zeros([]int{2, 4, 3, 3}, dev), nil, ConvOptions{}) }, "channels")
	misuse(t, "add", func() { a.Add(Zeros([]int{2, 3}, CPU())) }, "different devices", "flex", "cpu")
	misuse(t, "item", func() { a.Item() }, "one element")
	misuse(t, "max_pool2d", func() { a.MaxPool2d(PoolOptions{}) }, "kernel")
}

func TestToUnusableDevice(t *testing.T) {
	if _, ok := backend.Lookup("cuda"); ok {
		t.Skip("the cuda backend is part of this build")
	}
	x := Ones([]int{2}, Flex())
	reason := CUDA(0).Init()
	if reason == nil {
		t.Fatal("CUDA(0) initialized without a cuda backend")
	}
	err := Try(func() { x.ToDevice(CUDA(0)) })
	if err == nil || !strings.Contains(err.Error(), reason.Error()) || !strings.Contains(err.Error(), "to_device") {
		t.Errorf("ToDevice(cuda:0): %v, want to_device and the reason %q", err, reason)
	}
	if !errors.Is(err, ErrBackendUnavailable) {
		t.Errorf("ToDevice(cuda:0): %v does not wrap ErrBackendUnavailable", err)
	}
	if _, err := x.TryToDevice(CUDA(0)); !errors.Is(err, ErrBackendUnavailable) {
		t.Errorf("TryToDevice(cuda:0): %v", err)
	}
}

func TestTryPassesThrough(t *testing.T) {
	if err := Try(func() {}); err != nil {
		t.Errorf("Try of a normal function: %v", err)
	}
	if msg := recoverString(func() { _ = Try(func() { panic("plain string") }) }); msg != "plain string" {
		t.Errorf("Try must re-raise non-error panics, got %q", msg)
	}
}

func TestNilOperandsAreErrors(t *testing.T) {
	x := Ones([]int{2, 2}, Flex())
	w := Ones([]int{1, 2, 1, 1}, Flex())
	cases := map[string]func(){
		"where":   func() { Where(nil, x, x) },
		"gather":  func() { x.Gather(0, nil) },
		"matmul":  func() { x.Matmul(nil) },
		"conv2d":  func() { x.Reshape(1, 2, 2, 1).Conv2d(nil, nil, ConvOptions{}) },
		"convT2d": func() { x.Reshape(1, 2, 2, 1).ConvTranspose2d(nil, nil, ConvOptions{}) },
		"scatter": func() { x.ScatterAdd(0, nil, x) },
		"select":  func() { x.IndexSelect(0, nil) },
		"convw":   func() { (*Tensor)(nil).Conv2d(w, nil, ConvOptions{}) },
	}
	for name, f := range cases {
		err := Try(f)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), "nil *Tensor") {
			t.Errorf("%s: err = %v, want an *Error naming the nil operand", name, err)
		}
	}
}

func TestIntegerDivScalarByZero(t *testing.T) {
	x := FromInts([]int{4, 5}, []int{2}, Flex())
	if err := Try(func() { x.DivScalar(0) }); err == nil || !strings.Contains(err.Error(), "integer division by zero") {
		t.Fatalf("DivScalar(0): %v", err)
	}
	if got := x.DivScalar(2).Int64s(); got[0] != 2 || got[1] != 2 {
		t.Fatalf("DivScalar(2) = %v, want [2 2]", got)
	}
}

// A DeviceError whose cause already starts with "ember: " or with the
// device's name does not repeat them.
func TestDeviceErrorDoesNotRepeatPrefixes(t *testing.T) {
	cases := []struct {
		e    *DeviceError
		want string
	}{
		{&DeviceError{Device: "cuda:0", Op: "init", Err: fmt.Errorf("cuda:0: %w: libcuda.so.1 not found", ErrBackendUnavailable)},
			"ember: cuda:0: init: backend unavailable: libcuda.so.1 not found"},
		{&DeviceError{Device: "cpu", Op: "configure", Err: fmt.Errorf("ember: cpu: %w", ErrAlreadyInitialized)},
			"ember: cpu: configure: " + ErrAlreadyInitialized.Error()},
		{&DeviceError{Device: "cuda:1", Op: "init", Err: errors.New("cuda:10: other device")},
			"ember: cuda:1: init: cuda:10: other device"},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
		if !errors.Is(c.e, c.e.Err) {
			t.Error("the cause is not wrapped")
		}
	}
}

// An ExecutionError whose cause already names the device and the
// ErrExecution sentinel (as the cuda backend's status errors do) prints
// each once, and still wraps both.
func TestExecutionErrorDoesNotRepeatPrefixes(t *testing.T) {
	cases := []struct {
		e    *ExecutionError
		want string
	}{
		{&ExecutionError{Device: "cuda:0", Err: fmt.Errorf("cuda:0: %w: div: integer division by zero (i32 operands)", ErrExecution)},
			"ember: cuda:0: execution failed: div: integer division by zero (i32 operands)"},
		{&ExecutionError{Device: "cuda:0", Err: errors.New("ember: cuda:0: kernel fault")},
			"ember: cuda:0: execution failed: kernel fault"},
		{&ExecutionError{Device: "cuda:1", Err: fmt.Errorf("cuda:10: %w: gather", ErrExecution)},
			"ember: cuda:1: execution failed: cuda:10: execution failed: gather"},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
		if !errors.Is(c.e, ErrExecution) || !errors.Is(c.e, c.e.Err) {
			t.Error("ErrExecution or the cause is not wrapped")
		}
	}
}
