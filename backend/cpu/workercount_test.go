package cpu

import (
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/ir"
)

// workerCountEnv, set in a child process of TestResultsIgnoreWorkerCount,
// makes that test print the results' hash instead of comparing.
const workerCountEnv = "EMBER_CPU_TEST_WORKER_COUNT_CHILD"

// workerCountResults hashes the bits of the results of kernels whose work
// is split over the worker pool and summed in parts: the weight gradient
// outside the direct path (float64; float32 with a stride of 2), and the
// float32 sum of a whole vector between serialElems and a few chunks long;
// and of kernels whose preparation is split (the Winograd conv2d and
// conv_transpose2d, kernels transformed in parts) or whose blocks are (a
// fused bias add and ReLU, its bias read run by run).
func workerCountResults(t *testing.T) string {
	be := newTestBackend()
	o := backend.ConvOptions{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, Padding: [2]int{2, 2}}
	s2 := backend.ConvOptions{Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}, Groups: 1, Padding: [2]int{1, 1}}
	x := randTensor(be, []int{12, 16, 16, 16}, 1)
	g := randTensor(be, []int{12, 16, 16, 16}, 2)
	g2 := randTensor(be, []int{12, 16, 8, 8}, 3)
	x64, g64 := ir.Cast(be, x, backend.F64), ir.Cast(be, g, backend.F64)
	o0 := backend.ConvOptions{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1}
	xw, ww, gw := randTensor(be, []int{8, 32, 12, 12}, 5), randTensor(be, []int{64, 32, 5, 5}, 6), randTensor(be, []int{8, 64, 8, 8}, 7)
	yshape := []int{16, 32, 24, 24}
	relu, ok := be.ExecFused(biasReluProgram(yshape, false), []backend.Tensor{randTensor(be, yshape, 8), randTensor(be, []int{1, 32, 1, 1}, 9)})
	if !ok {
		t.Fatal("the bias and ReLU program was declined")
	}
	h := fnv.New64a()
	for _, r := range []backend.Tensor{
		ir.Conv2d(be, xw, ww, o0),
		ir.ConvTranspose2d(be, gw, ww, o0),
		relu[0],
		conv2dWeightGrad(be, x64, g64, [4]int{16, 16, 5, 5}, o),
		conv2dWeightGrad(be, x, g2, [4]int{16, 16, 3, 3}, s2),
		ir.Reduce(be, backend.ReduceSum, randTensor(be, []int{200003}, 4), 0, false),
	} {
		for _, v := range values(t, be, r) {
			fmt.Fprintf(h, "%x,", math.Float64bits(v))
		}
	}
	return fmt.Sprintf("%x", h.Sum64())
}

// TestResultsIgnoreWorkerCount runs workerCountResults in child processes
// of this test binary with GOMAXPROCS 1, 2 and 3 (the worker pool's size)
// and checks that they give the same bits.
func TestResultsIgnoreWorkerCount(t *testing.T) {
	if os.Getenv(workerCountEnv) != "" {
		fmt.Printf("hash %s\n", workerCountResults(t))
		return
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	var first string
	for _, procs := range []string{"1", "2", "3"} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestResultsIgnoreWorkerCount$", "-test.count", "1")
		cmd.Env = append(os.Environ(), workerCountEnv+"=1", "GOMAXPROCS="+procs)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GOMAXPROCS=%s: %v\n%s", procs, err, out)
		}
		var hash string
		for _, line := range strings.Split(string(out), "\n") {
			if h, ok := strings.CutPrefix(line, "hash "); ok {
				hash = h
			}
		}
		if hash == "" {
			t.Fatalf("GOMAXPROCS=%s: no hash in\n%s", procs, out)
		}
		if first == "" {
			first = hash
		} else if hash != first {
			t.Errorf("GOMAXPROCS=%s: results hash %s, with GOMAXPROCS=1 %s", procs, hash, first)
		}
	}
}
