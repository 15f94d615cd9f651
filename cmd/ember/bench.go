package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// BenchConfig is the configuration of `ember bench`.
type BenchConfig struct {
	// Device is a parseable device name, or "" for the default device
	// ($EMBER_DEVICE, else the best available).
	Device string
	// JSON prints one JSON object per measurement.
	JSON bool
	// Context is cancelled on Ctrl-C.
	Context context.Context
	// Out is the command's standard output.
	Out io.Writer
}

// runBench carries out `ember bench`.
var runBench = func(cfg BenchConfig) error {
	return fmt.Errorf("bench: %w", errNotImplemented)
}

func newBenchCmd() *cobra.Command {
	var cfg BenchConfig
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the throughput of a device",
		Long: `Measure a device's throughput on representative work (matrix multiply,
elementwise ops, convolution, a training step) and print each result as
the median of repeated runs.`,
		Example: `  ember bench
  ember bench --device cpu --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Context = cmd.Context()
			cfg.Out = cmd.OutOrStdout()
			return runBench(cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.Device, "device", "", "device to measure (default $EMBER_DEVICE, else the best available)")
	cmd.Flags().BoolVar(&cfg.JSON, "json", false, "print one JSON object per measurement")
	return cmd
}
