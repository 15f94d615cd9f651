package ember

import (
	"fmt"
	"os"
	"strings"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/fusion"
)

// Fusion: on cpu and cuda devices, chains of elementwise ops (unary,
// binary, where, cast, constants) are queued and run as one kernel — one
// pass over memory — when something reads them (backend/fusion). Results
// are bit-identical to running the ops one by one. It is on by default;
// EMBER_FUSION=0 (or false, off, no) turns it off for every device of the
// process, and DeviceConfig.WithFusion for one device.

// FusionEnv is the environment variable that turns fusion off for every
// device not configured otherwise (DeviceConfig.WithFusion wins) when it
// is "0", "false", "off" or "no" (any case); any other value leaves it on.
const FusionEnv = "EMBER_FUSION"

// fusionTypes are the device types whose backends fuse.
var fusionTypes = map[string]bool{"cpu": true, "cuda": true}

// fusionDefault reports whether fusion is on where nothing configured it:
// EMBER_FUSION unset or not one of its off values (see FusionEnv).
func fusionDefault() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(FusionEnv))) {
	case "0", "false", "off", "no":
		return false
	}
	return true
}

func init() {
	registerLayer(layer{
		name:    "fusion",
		rank:    5, // next to the base, below capture and autodiff
		applies: func(d Device) bool { return fusionTypes[d.ID().Type] && d.state().fusionOn() },
		wrap: func(inner backend.Backend, d Device) backend.Backend {
			// One decorator per device, shared by its stacks (with and
			// without autodiff): a tensor made on one stack may be read by
			// another, and its state belongs to one decorator.
			s := d.state()
			s.fusionOnce.Do(func() { s.fusionBackend, _ = fusion.New(inner, fusion.Options{}) })
			return s.fusionBackend
		},
	})
}

// FusionSetting says whether a device fuses elementwise ops (see
// DeviceConfig.WithFusion).
type FusionSetting uint8

const (
	// FusionDefault follows EMBER_FUSION: on unless it is "0", "false",
	// "off" or "no".
	FusionDefault FusionSetting = iota
	// FusionOn fuses whatever EMBER_FUSION says.
	FusionOn
	// FusionOff runs every op eagerly, one kernel each.
	FusionOff
)

// WithFusion returns c turning fusion on or off for the device (on cpu
// and cuda devices; others never fuse, and the setting is ignored there),
// whatever EMBER_FUSION says. Configure takes one DeviceConfig once, so
// chain it with the dtype settings:
//
//	dev.Configure(ember.DeviceConfig{}.WithFloatDType(ember.FloatF64).WithFusion(false))
//
// It must come before anything builds the device's op stack: its first
// operation, Sync, Flush, Seed or FusionStats (Configure fails with
// ErrAlreadyInitialized after that; Device.Fusion does not count).
func (c DeviceConfig) WithFusion(on bool) DeviceConfig {
	c.Fusion = FusionOff
	if on {
		c.Fusion = FusionOn
	}
	return c
}

// fusionOn reports, and fixes, whether the device's stacks fuse.
func (s *deviceState) fusionOn() bool {
	s.fusionFixed.Store(true)
	return s.fusionWanted()
}

// fusionWanted is the device's setting, FusionDefault resolved by
// fusionDefault.
func (s *deviceState) fusionWanted() bool {
	switch FusionSetting(s.fusion.Load()) {
	case FusionOn:
		return true
	case FusionOff:
		return false
	}
	return fusionDefault()
}

// configureFusion applies f to s, failing once a stack was built.
func (s *deviceState) configureFusion(f FusionSetting, name string) error {
	if f != FusionOn && f != FusionOff {
		return nil // FusionDefault (and values without a meaning) change nothing
	}
	s.stackMu.Lock()
	defer s.stackMu.Unlock()
	if s.fusionFixed.Load() {
		return &DeviceError{Device: name, Op: "configure", Err: fmt.Errorf("%w: fusion is fixed once the device has run", ErrAlreadyInitialized)}
	}
	s.fusion.Store(uint32(f))
	return nil
}

// Fusion reports whether elementwise ops on d are fused (see FusionEnv
// and DeviceConfig.WithFusion), or, before the device has run, whether
// they will be. It opens the device but does not fix the setting, so
// Configure can still change it; false for a device that does not
// initialize.
func (d Device) Fusion() bool {
	s := d.state()
	if s.fusionFixed.Load() {
		st, err := d.tryStack(false)
		if err != nil {
			return false
		}
		_, ok := backend.As[*fusion.Backend](st.top)
		return ok
	}
	b, err := s.open()
	if err != nil || !fusionTypes[d.ID().Type] {
		return false
	}
	if _, ok := backend.As[backend.Fuser](b); !ok {
		return false
	}
	return s.fusionWanted()
}

// FusionStats are a device's fusion counters (see fusion.Stats); ok is
// false on a device that does not fuse.
func (d Device) FusionStats() (s FusionCounters, ok bool) {
	st, err := d.tryStack(false)
	if err != nil {
		return FusionCounters{}, false
	}
	fb, ok := backend.As[*fusion.Backend](st.top)
	if !ok {
		return FusionCounters{}, false
	}
	c := fb.Stats()
	return FusionCounters{
		Nodes: c.Nodes.Load(), Programs: c.Programs.Load(), Single: c.Single.Load(),
		Declined: c.Declined.Load(), Flushes: c.Flushes.Load(), Recomputed: c.Recomputed.Load(),
	}, true
}

// FusionCounters count a device's fused work since it opened: Nodes
// elementwise ops queued, Programs fused programs run (two ops or more in
// one pass), Single groups of one op run alone, Declined programs the
// backend ran op by op, Flushes queue drains, Recomputed intermediates
// computed again on their own because a later use needed them.
type FusionCounters struct {
	Nodes, Programs, Single, Declined, Flushes, Recomputed int64
}
