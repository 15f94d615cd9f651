package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// DevicesConfig is the configuration of `ember devices`.
type DevicesConfig struct {
	// Stats adds memory usage and measured throughput per device.
	Stats bool
	// JSON prints one JSON object per device instead of a table.
	JSON bool
	// Context is cancelled on Ctrl-C.
	Context context.Context
	// Out is the command's standard output.
	Out io.Writer
}

// runDevices carries out `ember devices`.
var runDevices = func(cfg DevicesConfig) error {
	return fmt.Errorf("devices: %w", errNotImplemented)
}

func newDevicesCmd() *cobra.Command {
	var cfg DevicesConfig
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the compute devices available on this machine",
		Long: `List every local device Ember can use (CPU, CUDA, ROCm, Vulkan/WGPU,
the portable flex backend), one per line, with the name to pass to
--device or EMBER_DEVICE, and mark the one chosen by default.

With --stats, each device also reports its memory use and runs short
micro-benchmarks (compute FLOP/s, memory bandwidth, launch latency).`,
		Example: `  ember devices
  ember devices --stats
  ember devices --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Context = cmd.Context()
			cfg.Out = cmd.OutOrStdout()
			return runDevices(cfg)
		},
	}
	cmd.Flags().BoolVar(&cfg.Stats, "stats", false, "also show memory use and measured throughput")
	cmd.Flags().BoolVar(&cfg.JSON, "json", false, "print one JSON object per device")
	return cmd
}
