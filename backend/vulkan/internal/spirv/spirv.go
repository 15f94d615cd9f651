// Package spirv lists the shader variants of the Vulkan backend and
// compiles them from GLSL (backend/vulkan/shaders) to SPIR-V with glslc,
// the shaderc project's compiler (Debian package glslc). The generator
// (./gen, run by go generate in backend/vulkan) writes one .spv file per
// variant into backend/vulkan/spv, which is committed and embedded; the
// package's test regenerates them and checks that the bytes are equal.
package spirv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Variant is one compiled shader: Name is the .spv file's base name,
// Source the .comp file it is compiled from, Defines the preprocessor
// macros (-D) that select the variant, and Opt glslc's optimization flag.
type Variant struct {
	Name    string
	Source  string
	Defines []string
	Opt     string
}

// DTypes are the dtype suffixes of per-dtype variants and their macros.
var DTypes = []struct{ Suffix, Macro string }{
	{"f64", "DT_F64"}, {"f32", "DT_F32"}, {"f16", "DT_F16"}, {"bf16", "DT_BF16"},
	{"i64", "DT_I64"}, {"i32", "DT_I32"}, {"i16", "DT_I16"}, {"i8", "DT_I8"},
	{"u64", "DT_U64"}, {"u32", "DT_U32"}, {"u16", "DT_U16"}, {"u8", "DT_U8"},
	{"bool", "DT_BOOL"},
}

// Widths are the element widths (bits) of the variants that move values
// bit for bit.
var Widths = []int{8, 16, 32, 64}

// Variants returns every shader variant the backend loads, in a fixed
// order.
func Variants() []Variant {
	var vs []Variant
	perDType := func(src string, opt string, keep func(suffix string) bool) {
		for _, d := range DTypes {
			if keep != nil && !keep(d.Suffix) {
				continue
			}
			vs = append(vs, Variant{Name: src + "_" + d.Suffix, Source: src + ".comp", Defines: []string{d.Macro, "HAVE_F64"}, Opt: opt})
		}
	}
	perWidth := func(src string) {
		for _, w := range Widths {
			vs = append(vs, Variant{Name: fmt.Sprintf("%s_w%d", src, w), Source: src + ".comp", Defines: []string{fmt.Sprintf("WBITS=%d", w)}, Opt: "-O"})
		}
	}
	float := func(s string) bool { return s == "f64" || s == "f32" || s == "f16" || s == "bf16" }
	notBool := func(s string) bool { return s != "bool" }
	// Variants that include dmath.glsl are kept unoptimized: the driver
	// specializes and optimizes them for one op, and spirv-opt's inlining
	// would make each several times larger.
	perDType("unary", "-O0", nil)
	perDType("binary", "-O0", nil)
	perDType("compare", "-O", nil)
	perDType("cast", "-O", nil)
	perDType("reduce", "-O", nil)
	perDType("scatter_add", "-O", nil)
	perDType("matmul", "-O", notBool)
	perDType("conv2d", "-O", float)
	perDType("conv_transpose2d", "-O", float)
	perDType("col2im", "-O", float)
	perWidth("where")
	perWidth("copy")
	perWidth("gather")
	perWidth("index_select")
	perWidth("im2col")
	vs = append(vs,
		Variant{Name: "arange", Source: "arange.comp", Defines: []string{"HAVE_F64"}, Opt: "-O"},
		Variant{Name: "random", Source: "random.comp", Defines: []string{"HAVE_F64"}, Opt: "-O0"},
		Variant{Name: "sgemm", Source: "sgemm.comp", Opt: "-O"},
		Variant{Name: "stats", Source: "stats.comp", Defines: []string{"HAVE_F64"}, Opt: "-O"},
	)
	return vs
}

// VersionFile is the file of the spv directory that records the glslc
// the committed SPIR-V was compiled with (its --version output): another
// glslc may emit other bytes for the same source.
const VersionFile = "glslc.version"

// Version returns the version line glslc at path prints (shaderc's and
// glslang's versions, without the target line).
func Version(glslc string) (string, error) {
	out, err := exec.Command(glslc, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", glslc, err)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "Target:") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; "), nil
}

// Args returns glslc's arguments for compiling v from srcDir to out.
func (v Variant) Args(srcDir, out string) []string {
	args := []string{"--target-env=vulkan1.2", v.Opt, "-I", srcDir}
	for _, d := range v.Defines {
		args = append(args, "-D"+d)
	}
	return append(args, "-o", out, filepath.Join(srcDir, v.Source))
}

// Compile compiles every variant of vs with the glslc at path glslc,
// GOMAXPROCS at a time, writing outDir/<name>.spv. The error lists every
// variant that failed with glslc's message.
func Compile(glslc, srcDir, outDir string, vs []Variant) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, v := range vs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var stderr bytes.Buffer
			cmd := exec.Command(glslc, v.Args(srcDir, filepath.Join(outDir, v.Name+".spv"))...)
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s (%s %s): %v: %s", v.Name, v.Source, strings.Join(v.Defines, " "), err, stderr.String()))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
