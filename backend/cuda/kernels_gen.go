package cuda

import (
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/emberml/ember/backend"
)

// This file maps Ember dtypes to the C types the generated kernels use and
// caches the generated kernels. Each kernel family (elementwise, cast,
// reduce, movement, random, convolution, scan) has one text/template in its
// own kernels_*.go file; a kernel is generated per (family, dtype, variant),
// named after all three, and compiled by Backend.Kernel at first use.

// ctype describes how one dtype is stored and computed in CUDA C.
type ctype struct {
	// S is the storage type, C the type arithmetic runs in (float for F16
	// and BF16).
	S, C string
	// LD converts a storage value to C and ST a C value to storage (empty:
	// a plain conversion).
	LD, ST string
	// STD converts a double to storage with Cast's semantics (round once
	// to nearest even; truncate and saturate to integers; != 0 to Bool).
	STD string
	// Kind is 'f' for floats, 'i' for integers, 'b' for Bool.
	Kind byte
	// Name is the dtype's short name, used in kernel names.
	Name string
}

var ctypes = map[backend.DType]ctype{
	backend.F64:    {S: "double", C: "double", STD: "(double)", Kind: 'f'},
	backend.F32:    {S: "float", C: "float", STD: "(float)", Kind: 'f'},
	backend.Flex32: {S: "float", C: "float", STD: "(float)", Kind: 'f'},
	backend.F16:    {S: "u16", C: "float", LD: "f16_to_f32", ST: "f32_to_f16", STD: "f64_to_f16", Kind: 'f'},
	backend.BF16:   {S: "u16", C: "float", LD: "bf16_to_f32", ST: "f32_to_bf16", STD: "f64_to_bf16", Kind: 'f'},
	backend.I64:    {S: "i64", C: "i64", STD: "sat_cast<i64>", Kind: 'i'},
	backend.I32:    {S: "i32", C: "i32", STD: "sat_cast<i32>", Kind: 'i'},
	backend.I16:    {S: "i16", C: "i16", STD: "sat_cast<i16>", Kind: 'i'},
	backend.I8:     {S: "i8", C: "i8", STD: "sat_cast<i8>", Kind: 'i'},
	backend.U64:    {S: "u64", C: "u64", STD: "sat_cast<u64>", Kind: 'i'},
	backend.U32:    {S: "u32", C: "u32", STD: "sat_cast<u32>", Kind: 'i'},
	backend.U16:    {S: "u16", C: "u16", STD: "sat_cast<u16>", Kind: 'i'},
	backend.U8:     {S: "u8", C: "u8", STD: "sat_cast<u8>", Kind: 'i'},
	backend.Bool:   {S: "u8", C: "u8", STD: "(u8)0 != ", Kind: 'b'},
}

func init() {
	for dt, c := range ctypes {
		c.Name = dt.String()
		if dt == backend.Flex32 {
			c.Name = "f32" // same storage and arithmetic: share F32's kernels
		}
		ctypes[dt] = c
	}
}

// ctypeOf returns dt's C description.
func ctypeOf(dt backend.DType) ctype {
	c, ok := ctypes[dt]
	if !ok {
		panic(fmt.Errorf("cuda: dtype %v: %w", dt, backend.ErrUnsupportedDType))
	}
	return c
}

// bitsType is the unsigned C type of an element of size bytes: kernels
// that only move data (copies, gather, where) are generated per element
// size, not per dtype.
func bitsType(size int) string {
	switch size {
	case 1:
		return "u8"
	case 2:
		return "u16"
	case 4:
		return "u32"
	}
	return "u64"
}

// ld and st render a load/store conversion call around expr.
func ld(c ctype, expr string) string {
	if c.LD == "" {
		return "(" + expr + ")"
	}
	return c.LD + "(" + expr + ")"
}

func st(c ctype, expr string) string {
	if c.ST == "" {
		return "(" + c.S + ")(" + expr + ")"
	}
	return c.ST + "(" + expr + ")"
}

// std renders the conversion of a double expression to c's storage.
func std(c ctype, expr string) string {
	if c.Kind == 'b' {
		return "(u8)((" + expr + ") != 0.0)"
	}
	return c.STD + "(" + expr + ")"
}

var tmplFuncs = template.FuncMap{"ld": ld, "st": st, "std": std}

// mustTemplate parses one kernel family's template.
func mustTemplate(name, text string) *template.Template {
	return template.Must(template.New(name).Funcs(tmplFuncs).Parse(text))
}

// render executes a family template and prepends the prelude.
func render(t *template.Template, data any) string {
	var sb strings.Builder
	sb.WriteString(prelude)
	if err := t.Execute(&sb, data); err != nil {
		panic(fmt.Sprintf("cuda: kernel template %s: %v", t.Name(), err))
	}
	return sb.String()
}

// genKey identifies a generated kernel on one backend.
type genKey struct {
	b    *Backend
	name string
}

// genKernels caches the generated kernels of every backend by name, so
// that a launch costs one small map lookup and each source is generated
// once.
var genKernels sync.Map // genKey -> *Kernel

// kernel returns the compiled kernel called name, calling gen for its
// source (which must define extern "C" __global__ name) on first use.
func (b *Backend) kernel(name string, gen func() string) *Kernel {
	key := genKey{b, name}
	if k, ok := genKernels.Load(key); ok {
		return k.(*Kernel)
	}
	k := b.Kernel(name, gen())
	genKernels.Store(key, k)
	return k
}
