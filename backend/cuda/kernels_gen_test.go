package cuda

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/emberml/ember/backend"
)

// allKernelSources generates the source of every kernel the library can
// launch, by name.
func allKernelSources() map[string]string {
	out := map[string]string{}
	add := func(name string, src func() string) { out[name] = src() }
	addElem := func(c elemCall, sizes ...int) {
		vec := elemVec(sizes...)
		for _, v := range []struct {
			contig bool
			idx    string
		}{{true, ""}, {false, "int"}, {false, "i64"}} {
			add(elemSource(c, v.contig, v.idx, vec))
		}
	}
	for _, dt := range backend.AllDTypes {
		s := dt.Size()
		addElem(unaryCall(dt, backend.OpExp), s, s)
		addElem(binaryCall(dt, backend.OpAdd), s, s, s)
		addElem(binaryCall(dt, backend.OpLt), 1, s, s)
		if dt.IsInt() {
			addElem(binaryCall(dt, backend.OpDiv), s, s, s) // the divide family, which checks divisors
		}
		for _, idx := range []string{"int", "i64"} {
			name := "ember_cast_" + ctypeOf(dt).Name + "_" + idx
			add(name, func() string { return castSource(dt, name, idx) })
		}
		for _, cols := range []bool{false, true} {
			name := "ember_reduce_" + ctypeOf(dt).Name + map[bool]string{false: "_rows", true: "_cols"}[cols]
			add(name, func() string { return reduceSource(dt, name, cols) })
		}
		name := "ember_random_" + ctypeOf(dt).Name
		add(name, func() string { return randomSource(dt, name) })
		if dt != backend.F16 && dt != backend.BF16 {
			c := ctypeOf(dt)
			name := "ember_scatter_add_" + c.Name
			add(name, func() string { return render(scatterTmpl, indexSpec{Name: name, T: c.S, Add: scatterAdd(dt)}) })
		}
		if dt != backend.Bool {
			name := "ember_col2im_" + ctypeOf(dt).Name
			add(name, func() string { return col2imSource(dt, name) })
			name = "ember_cumsum_" + ctypeOf(dt).Name
			add(name, func() string { return scanSource(dt, name) })
		}
	}
	for _, s := range []int{1, 2, 4, 8} {
		addElem(whereCall(s), 1, s, s, s)
		addElem(copyCall(s), s, s)
		bt := bitsType(s)
		for _, f := range []struct {
			prefix string
			render func(name string) string
		}{
			{"ember_gather_", func(n string) string { return render(gatherTmpl, indexSpec{Name: n, T: bt}) }},
			{"ember_index_select_", func(n string) string { return render(indexSelectTmpl, indexSpec{Name: n, T: bt}) }},
			{"ember_im2col_", func(n string) string { return render(im2colTmpl, convSpec{Name: n, T: bt}) }},
		} {
			name := f.prefix + bt
			add(name, func() string { return f.render(name) })
		}
	}
	return out
}

// TestKernelSources checks that every generated kernel defines exactly
// the extern "C" function it is named after and that the templates left
// no placeholder behind. With EMBER_CUDA_DUMP=dir the sources are also
// written there (for compiling them offline).
func TestKernelSources(t *testing.T) {
	srcs := allKernelSources()
	if len(srcs) < 150 {
		t.Fatalf("only %d kernel sources", len(srcs))
	}
	entry := regexp.MustCompile(`extern "C" __global__ void (\w+)\(`)
	dir := os.Getenv("EMBER_CUDA_DUMP")
	for name, src := range srcs {
		m := entry.FindAllStringSubmatch(src, -1)
		if len(m) != 1 || m[0][1] != name {
			t.Errorf("%s: entry points %v", name, m)
		}
		if strings.Contains(src, "{{") || strings.Contains(src, "<no value>") {
			t.Errorf("%s: unexpanded template text", name)
		}
		if dir != "" {
			if err := os.WriteFile(filepath.Join(dir, name+".cu"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
