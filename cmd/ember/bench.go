package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// BenchConfig is the configuration of `ember bench`.
type BenchConfig struct {
	// Device is a parseable device name, or "" for the cpu device. It
	// comes from --device, else the EMBER_DEVICE environment variable,
	// else cpu.
	Device string
	// DeviceFromEnv reports that Device came from EMBER_DEVICE (errors
	// about the device then name the variable).
	DeviceFromEnv bool `json:"-"`
	// JSON prints one JSON object per measurement.
	JSON bool
	// Families selects the benchmark families to run (benchFamilies' names);
	// empty runs all of them.
	Families []string
	// Plot, when non-empty, is the image file (.png, .svg or .pdf) the
	// results are drawn into against their peers.
	Plot string
	// Context is cancelled on Ctrl-C.
	Context context.Context
	// Out is the command's standard output.
	Out io.Writer
	// ErrOut receives progress lines when it is a terminal.
	ErrOut io.Writer
}

// benchResult is one measurement: a row of the table and, with --json,
// one object.
type benchResult struct {
	Bench   string  `json:"bench"`
	Shape   string  `json:"shape"`
	Backend string  `json:"backend"`
	DType   string  `json:"dtype"`
	Median  float64 `json:"median_seconds"`
	GFLOPS  float64 `json:"gflops,omitempty"`
	GBPS    float64 `json:"gbps,omitempty"`
	// Ratios of this (ember) row's rate to each peer's, keyed by peer name
	// ("ratio_vs_openblas", "ratio_vs_gonum", "ratio_vs_go_copy").
	Ratios map[string]float64 `json:"-"`
	Note   string             `json:"note,omitempty"`
}

// MarshalJSON flattens Ratios into "ratio_vs_<peer>" fields.
func (r benchResult) MarshalJSON() ([]byte, error) {
	type plain benchResult
	b, err := json.Marshal(plain(r))
	if err != nil || len(r.Ratios) == 0 {
		return b, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range r.Ratios {
		m["ratio_vs_"+strings.ReplaceAll(k, "-", "_")] = v
	}
	return json.Marshal(m)
}

// rate is the row's throughput for ratios (GFLOP/s or GB/s).
func (r benchResult) rate() float64 { return max(r.GFLOPS, r.GBPS) }

// runBench carries out `ember bench`.
var runBench = benchMain

func newBenchCmd() *cobra.Command {
	var cfg BenchConfig
	cmd := &cobra.Command{
		Use:   "bench [family...]",
		Short: "Measure the throughput of a device",
		Long: `Measure a device's throughput on representative work and print each
result as the median of repeated runs (after a warm-up), beside reference
implementations measured in the same run:

  matmul   square f32 products 256..2048 and f64 1024 (peers: OpenBLAS, gonum)
  add      16M-element f32 add (peer: Go's copy of the same bytes)
  sum      16M-element f32 sum (peer: Go's copy)
  conv2d   batch 64, 3x3, 64->64 channels, 56x56, padding 1
  softmax  the softmax, log-softmax and layer-norm rows of kernels
           (runs only when named: kernels includes them)
  fusion   gelu(x*a+b)*c on 16M f32, fused against op by op on the same device
  mnist    the MNIST MLP training step row of kernels (784-128-10, batch
           64, Adam; runs only when named: kernels includes it)
  backends f32 matmul 512, 16M add and the MNIST step on cpu, ndarray and
           libtorch (those that initialize; libtorch needs -tags libtorch),
           each row's speed relative to cpu's
  vs-cuda  f32 matmul 4096 and 2^28-element f32 add on --device and on
           cuda:0 in one process, the device's rate relative to cuda:0's
           (runs only when named: it needs 3 GiB on each device)
  kernels  the kernels of the performance targets against their peers,
           the two sides timed in turn for 5 rounds (each the median of 15
           calls after 100 ms of warm-up calls; the row gives the median
           over the rounds): softmax, log-softmax and layer-norm of
           [4096, 1024] f32, the MNIST MLP step and the MNIST CNN's two
           convolutions (forward, input and weight gradients) against
           PyTorch at its fastest thread setting (1, 2 or its default);
           sums of [4096, 4096] f32 along each axis (peer: Go's copy);
           the fused Adam step of the MLP's parameters against the
           composed update (optim's StepWith); on a CUDA device also
           sum 2^28, axis sums of [16384, 16384], softmax [16384, 4096],
           bf16 add 2^28 and conv2d 64x64x56x56 3x3 in f32 and bf16
           against PyTorch on cuda. PyTorch runs under the Python that
           $EMBER_TORCH_PYTHON names, else python3 or /usr/bin/python3;
           where none has torch the rows come without it and a line says
           why

Positional arguments select families; none runs all but vs-cuda, softmax
and mnist (kernels has their rows).
--plot FILE draws each result's speed relative to its peers (a bar per
peer, log scale) into a .png, .svg or .pdf file.`,
		Example: `  ember bench
  ember bench --json matmul
  ember bench --device flex add sum
  ember bench --plot bench.png matmul add sum fusion
  ember bench --device vulkan vs-cuda
  EMBER_TORCH_PYTHON=$HOME/venv/bin/python ember bench --json kernels`,
		Args: func(_ *cobra.Command, args []string) error {
			for _, a := range args {
				if !slices.ContainsFunc(benchFamilies, func(f benchFamily) bool { return f.name == a }) {
					return fmt.Errorf("unknown benchmark family %q (have %s)", a, familyNames())
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if env := os.Getenv("EMBER_DEVICE"); !cmd.Flags().Changed("device") && env != "" {
				cfg.Device, cfg.DeviceFromEnv = env, true
			}
			if cfg.Plot != "" {
				if !slices.Contains([]string{".png", ".svg", ".pdf"}, strings.ToLower(filepath.Ext(cfg.Plot))) {
					return fmt.Errorf("--plot %q: the file name must end in .png, .svg or .pdf", cfg.Plot)
				}
				if st, err := os.Stat(filepath.Dir(cfg.Plot)); err != nil || !st.IsDir() {
					return fmt.Errorf("--plot %q: directory %s does not exist", cfg.Plot, filepath.Dir(cfg.Plot))
				}
			}
			cfg.Families = args
			cfg.Context = cmd.Context()
			cfg.Out = cmd.OutOrStdout()
			cfg.ErrOut = cmd.ErrOrStderr()
			return runBench(cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.Device, "device", "", "device to measure (default $EMBER_DEVICE, else cpu)")
	cmd.Flags().BoolVar(&cfg.JSON, "json", false, "print one JSON object per measurement")
	cmd.Flags().StringVar(&cfg.Plot, "plot", "", "draw the results against their peers into `FILE` (.png, .svg or .pdf)")
	return cmd
}

func familyNames() string {
	var n []string
	for _, f := range benchFamilies {
		n = append(n, f.name)
	}
	return strings.Join(n, ", ")
}

// benchMain runs the selected families and prints their results.
func benchMain(cfg BenchConfig) error {
	b, err := newBencher(cfg)
	if err != nil {
		return err
	}
	defer b.closePeers()
	var all []benchResult
	for _, f := range benchFamilies {
		if len(cfg.Families) > 0 && !slices.Contains(cfg.Families, f.name) || len(cfg.Families) == 0 && f.explicit {
			continue
		}
		rows, err := f.run(b)
		if err != nil {
			return fmt.Errorf("bench %s: %w", f.name, err)
		}
		if cfg.JSON {
			enc := json.NewEncoder(cfg.Out)
			for _, r := range rows {
				if err := enc.Encode(r); err != nil {
					return err
				}
			}
		}
		all = append(all, rows...)
		if err := b.ctx.Err(); err != nil {
			return err
		}
	}
	b.progress("")
	if cfg.Plot != "" {
		if err := writeBenchPlot(cfg.Plot, b.name, all); err != nil {
			return err
		}
	}
	if cfg.JSON {
		// The notes keep standard output one JSON object per line.
		if cfg.ErrOut != nil {
			for _, n := range b.notes {
				fmt.Fprintln(cfg.ErrOut, n)
			}
		}
		return nil
	}
	if err := printBenchTable(cfg.Out, all); err != nil {
		return err
	}
	for _, n := range b.notes {
		fmt.Fprintln(cfg.Out, n)
	}
	if cfg.Plot != "" {
		fmt.Fprintf(cfg.Out, "wrote the comparison with the peers to %s\n", cfg.Plot)
	}
	return nil
}

// printBenchTable prints the results aligned, ratios to peers last.
func printBenchTable(w io.Writer, rows []benchResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCH\tSHAPE\tDTYPE\tBACKEND\tMEDIAN\tRATE\tVS PEERS")
	for _, r := range rows {
		rate := ""
		switch {
		case r.GFLOPS > 0:
			rate = fmt.Sprintf("%.1f GFLOP/s", r.GFLOPS)
		case r.GBPS > 0:
			rate = fmt.Sprintf("%.1f GB/s", r.GBPS)
		}
		var ratios []string
		for _, k := range slices.Sorted(mapKeys(r.Ratios)) {
			ratios = append(ratios, fmt.Sprintf("%.2fx %s", r.Ratios[k], k))
		}
		med := ""
		if r.Median > 0 {
			med = time.Duration(r.Median * 1e9).Round(time.Microsecond).String()
		}
		extra := strings.Join(ratios, ", ")
		if r.Note != "" {
			extra = strings.TrimPrefix(extra+"; "+r.Note, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Bench, r.Shape, r.DType, r.Backend, med, rate, extra)
	}
	return tw.Flush()
}

func mapKeys(m map[string]float64) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
