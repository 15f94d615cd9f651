package spirv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommittedSPIRV regenerates every shader variant with glslc and
// checks that the result is byte for byte the committed file of
// backend/vulkan/spv, and that no committed file lacks a variant: the
// embedded SPIR-V is what the GLSL sources compile to.
func TestCommittedSPIRV(t *testing.T) {
	glslc, err := exec.LookPath("glslc")
	if err != nil {
		t.Skip("glslc is not installed (Debian: apt-get install glslc; make test installs it), so the committed SPIR-V cannot be regenerated here")
	}
	src, committed := filepath.Join("..", "..", "shaders"), filepath.Join("..", "..", "spv")
	have, err := Version(glslc)
	if err != nil {
		t.Fatal(err)
	}
	wantVersion, err := os.ReadFile(filepath.Join(committed, VersionFile))
	if err != nil {
		t.Fatalf("the committed SPIR-V does not record its glslc (run go generate ./backend/vulkan): %v", err)
	}
	if w := strings.TrimSpace(string(wantVersion)); w != have {
		t.Fatalf("the committed SPIR-V was compiled by %q, this glslc is %q: another compiler may emit other bytes; regenerate with go generate ./backend/vulkan (and commit) or install that glslc", w, have)
	}
	out := t.TempDir()
	vs := Variants()
	if err := Compile(glslc, src, out, vs); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, v := range vs {
		names[v.Name+".spv"] = true
		got, err := os.ReadFile(filepath.Join(out, v.Name+".spv"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(committed, v.Name+".spv"))
		if err != nil {
			t.Errorf("%s: not committed (run go generate ./backend/vulkan): %v", v.Name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the committed SPIR-V (%d bytes) differs from what %s compiles to (%d bytes); run go generate ./backend/vulkan",
				v.Name, len(want), v.Source, len(got))
		}
	}
	files, _ := filepath.Glob(filepath.Join(committed, "*.spv"))
	for _, f := range files {
		if !names[filepath.Base(f)] {
			t.Errorf("%s is committed but no variant makes it", f)
		}
	}
}

// TestVariantNamesUnique checks that no two variants write one file.
func TestVariantNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range Variants() {
		if seen[v.Name] {
			t.Errorf("variant %s listed twice", v.Name)
		}
		seen[v.Name] = true
		if v.Opt == "" || v.Source == "" {
			t.Errorf("variant %s lacks a source or an optimization flag", v.Name)
		}
	}
}
