package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/emberml/ember"
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/remote"
)

// remoteServerID returns the DeviceID (index 0) of the server at addr as
// `ember devices --remote` spells it.
func remoteServerID(addr string) backend.DeviceID {
	for _, p := range []string{"quic://", "remote+quic://"} {
		if rest, ok := strings.CutPrefix(addr, p); ok {
			return backend.DeviceID{Type: "remote+quic", Addr: strings.TrimSuffix(rest, "/")}
		}
	}
	addr = strings.TrimPrefix(addr, "remote+")
	typ, a, _ := strings.Cut(ember.RemoteWebSocketType(addr).String(), "://")
	return backend.DeviceID{Type: typ, Addr: a}
}

// listRemote prints the devices of the server cfg.Remote names: the
// device name to use (remote+ws://host:port/N), the server's name for it,
// its model and memory.
func listRemote(cfg DevicesConfig) error {
	ctx := cfg.Context
	if ctx == nil {
		ctx = context.Background()
	}
	id := remoteServerID(cfg.Remote)
	descs, err := remote.ListServer(ctx, id)
	if err != nil {
		return fmt.Errorf("devices --remote %s: %w", cfg.Remote, err)
	}
	rows := make([]deviceRow, len(descs))
	for i, d := range descs {
		id.Index = d.Index
		rows[i] = deviceRow{Name: id.String(), Model: d.Info.Name, Memory: d.Info.MemoryBytes, Type: id.Type,
			Index: d.Index, Available: true}
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
	fmt.Fprintln(tw, "DEVICE\tSERVER DEVICE\tMODEL\tMEMORY")
	for i, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f GiB\n", r.Name, descs[i].Name, r.Model, float64(r.Memory)/(1<<30))
	}
	return tw.Flush()
}
