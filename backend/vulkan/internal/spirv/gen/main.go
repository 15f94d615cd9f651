// Command gen compiles the Vulkan backend's GLSL shaders to the SPIR-V
// files the backend embeds, one per variant of spirv.Variants, with glslc
// (Debian package glslc). backend/vulkan runs it through go generate:
//
//	go run ./internal/spirv/gen -src shaders -out spv
//
// Files of out that no variant names any more are removed; out/glslc.version
// records the compiler's version.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/emberml/ember/backend/vulkan/internal/spirv"
)

func main() {
	glslc := flag.String("glslc", "glslc", "the glslc compiler to run")
	src := flag.String("src", "shaders", "directory of the .comp and .glsl sources")
	out := flag.String("out", "spv", "directory to write the .spv files to")
	flag.Parse()
	vs := spirv.Variants()
	if err := spirv.Compile(*glslc, *src, *out, vs); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	v, err := spirv.Version(*glslc)
	if err == nil {
		err = os.WriteFile(filepath.Join(*out, spirv.VersionFile), []byte(v+"\n"), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	want := map[string]bool{}
	for _, v := range vs {
		want[v.Name+".spv"] = true
	}
	old, _ := filepath.Glob(filepath.Join(*out, "*.spv"))
	for _, f := range old {
		if !want[filepath.Base(f)] && strings.HasSuffix(f, ".spv") {
			if err := os.Remove(f); err != nil {
				fmt.Fprintln(os.Stderr, "gen:", err)
				os.Exit(1)
			}
		}
	}
}
