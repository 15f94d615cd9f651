package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/emberml/ember"

	"github.com/spf13/cobra"
)

// DevicesConfig is the configuration of `ember devices`.
type DevicesConfig struct {
	// Stats adds memory usage and measured throughput per device.
	Stats bool
	// JSON prints one JSON object per device instead of a table.
	JSON bool
	// Remote, when set, lists the devices of the Ember server at this
	// address instead of the local ones: "ws://host:3000", "host:3000",
	// "wss://host" or "quic://PEERID@host:port".
	Remote string
	// Context is cancelled on Ctrl-C.
	Context context.Context
	// Out is the command's standard output.
	Out io.Writer
}

// runDevices carries out `ember devices`.
var runDevices = listDevices

// deviceRow is one line of `ember devices` (and its --json object).
type deviceRow struct {
	Name      string `json:"name"`
	Model     string `json:"model,omitempty"`
	Memory    uint64 `json:"memory_bytes,omitempty"`
	Type      string `json:"type"`
	Index     int    `json:"index"`
	Default   bool   `json:"default"`
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	// Fusion says whether elementwise ops are fused on the device
	// (EMBER_FUSION, DeviceConfig.WithFusion).
	Fusion bool     `json:"fusion"`
	Stats  []string `json:"stats,omitempty"`
}

// listDevices prints the present devices, then the backends this build
// knows of but cannot run here, with the reason Init gives.
func listDevices(cfg DevicesConfig) error {
	if cfg.Remote != "" {
		return listRemote(cfg)
	}
	def := ember.DefaultDevice()
	var rows []deviceRow
	seen := map[string]bool{}
	for _, d := range ember.Enumerate() {
		r := deviceRow{Name: d.String(), Type: d.Type().String(), Index: int(d.Index()), Default: d.Equal(def), Available: true}
		if err := d.Init(); err != nil {
			r.Available, r.Reason = false, unavailableReason(r.Name, err)
		} else {
			r.Fusion = d.Fusion()
		}
		if info, err := d.Info(); err == nil && d.Type() != ember.TypeCPU && d.Type() != ember.TypeFlex {
			r.Model, r.Memory = info.Name, info.MemoryBytes
		}
		if cfg.Stats && r.Available {
			r.Stats = deviceStats(d)
		}
		seen[r.Name] = true
		rows = append(rows, r)
	}
	for _, d := range []ember.Device{ember.CUDA(0), ember.ROCm(0), ember.Vulkan(ember.DefaultKind), ember.WGPU(ember.DefaultKind)} {
		if seen[d.String()] {
			continue
		}
		if err := d.Init(); err != nil {
			rows = append(rows, deviceRow{Name: d.String(), Type: d.Type().String(), Index: int(d.Index()), Reason: unavailableReason(d.String(), err)})
		}
	}
	if cfg.JSON {
		enc := json.NewEncoder(cfg.Out)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(cfg.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tBACKEND\tSTATUS")
	for _, r := range rows {
		status := "available"
		if r.Default {
			status += " (default)"
		}
		if !r.Available {
			status = "unavailable: " + r.Reason
		}
		if r.Model != "" {
			status += fmt.Sprintf(": %s, %.1f GiB", r.Model, float64(r.Memory)/(1<<30))
		}
		if r.Fusion {
			status += ", fusion on"
		} else if r.Available && fusionCapable[r.Type] {
			status += ", fusion off"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Type, status)
		for _, line := range r.Stats {
			fmt.Fprintf(tw, "\t\t%s\n", line)
		}
	}
	return tw.Flush()
}

// unavailableReason is the text of the error with which the device name
// failed to initialize, without what its row already says: the leading
// "ember: NAME: init: " and "backend unavailable: " of a *ember.DeviceError
// ("unavailable: the vulkan backend is not part of this build").
func unavailableReason(name string, err error) string {
	msg := strings.TrimPrefix(err.Error(), "ember: ")
	msg = strings.TrimPrefix(msg, name+": ")
	msg = strings.TrimPrefix(msg, "init: ")
	if rest, ok := strings.CutPrefix(msg, ember.ErrBackendUnavailable.Error()+": "); ok && rest != "" {
		msg = rest
	}
	return msg
}

// fusionCapable are the backends that fuse elementwise ops unless
// EMBER_FUSION=0 turns it off.
var fusionCapable = map[string]bool{"cpu": true, "cuda": true}

// statKeys are the micro-benchmarks `ember devices --stats` runs.
var statKeys = []ember.ThroughputKey{
	ember.ComputeDirect(ember.F32),
	ember.ComputeDirect(ember.F64),
	ember.ComputeCMMA(ember.F16, 16, 16, 16),
	ember.Memory(),
	ember.MemoryRead(),
	ember.MemoryWrite(),
	ember.MemoryWorkingSet(ember.AccessSequential, 32<<10),
	ember.MemoryWorkingSet(ember.AccessRandom, 64<<20),
	ember.Launch(),
}

// deviceStats returns the lines --stats prints under a device: the
// allocator's usage where the backend reports it, then one aligned row per
// throughput measurement (ThroughputStat.String).
func deviceStats(d ember.Device) []string {
	var lines []string
	if u, ok := d.MemoryPoolUsage(); ok {
		lines = append(lines, fmt.Sprintf("%-20s %-20s %d allocations, %.1f MiB in use, %.1f MiB reserved",
			"memory-usage", "", u.NumberAllocs, float64(u.BytesInUse)/(1<<20), float64(u.BytesReserved)/(1<<20)))
	}
	for _, s := range d.PerformanceStats(statKeys) {
		lines = append(lines, s.String())
	}
	return lines
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
  ember devices --json
  ember devices --remote gpu-host:3000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Context = cmd.Context()
			cfg.Out = cmd.OutOrStdout()
			return runDevices(cfg)
		},
	}
	cmd.Flags().BoolVar(&cfg.Stats, "stats", false, "also show memory use and measured throughput")
	cmd.Flags().BoolVar(&cfg.JSON, "json", false, "print one JSON object per device")
	cmd.Flags().StringVar(&cfg.Remote, "remote", "", "list the devices of the Ember server at `ADDR` (host:port, ws://, wss:// or quic://PEERID@host:port)")
	return cmd
}
