package ember

import (
	"slices"

	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/autodiff"
)

// A device's operations run on a stack of backends: the base backend its
// driver opened, then each registered decorator (layer) that applies to
// the device, in registration order. The root package keeps the stack as
// data and knows no decorator beyond its registration, so a new decorator
// (fusion, capture, remote) is one registerLayer call.

// mode selects one of a hardware device's stacks: the Device's autodiff
// and checkpointing switches.
type mode uint8

const (
	modeAutodiff mode = 1 << iota
	modeCheckpointing
	numModes = 4
)

func (d Device) mode() mode {
	var m mode
	if d.autodiff {
		m |= modeAutodiff
		if d.checkpointing {
			m |= modeCheckpointing
		}
	}
	return m
}

// layer is one decorator of the stack.
type layer struct {
	// name identifies the layer in messages.
	name string
	// applies reports whether the layer wraps the stack of d. It may read
	// only d's identity (its ID) and mode: the stack is built once per
	// hardware device and mode.
	applies func(d Device) bool
	// wrap returns the decorator around inner for d.
	wrap func(inner backend.Backend, d Device) backend.Backend
	// rank orders the stack: a layer of lower rank wraps closer to the
	// base backend (capture 10, autodiff 100), whatever the order of
	// registration.
	rank int
}

// layers are the registered decorators, innermost first.
var layers []layer

// registerLayer adds a decorator at its rank (layers of equal rank keep
// their registration order). Called from init functions only.
func registerLayer(l layer) {
	i := len(layers)
	for i > 0 && layers[i-1].rank > l.rank {
		i--
	}
	layers = slices.Insert(layers, i, l)
}

func init() {
	registerLayer(layer{
		name:    "autodiff",
		rank:    100,
		applies: func(d Device) bool { return d.autodiff },
		wrap: func(inner backend.Backend, d Device) backend.Backend {
			return autodiff.New(inner, d.checkpointing)
		},
	})
}

// stack is one built decorator stack.
type stack struct {
	// top runs the device's operations.
	top backend.Backend
	// ad is the stack's autodiff decorator, nil when absent (kept here so
	// that tracking calls do not walk the chain).
	ad *autodiff.Backend
	// guard runs the root's ops on top (see exec.go).
	guard *guard
	// adTop reports that ad is top, so base kinds run with
	// ad.ExecInto (see runTracked).
	adTop bool
}

// build makes (once) and returns the stack of d's mode over base b.
func (s *deviceState) build(d Device, b backend.Backend) *stack {
	m := d.mode()
	s.stackMu.Lock()
	defer s.stackMu.Unlock()
	if st := s.stacks[m].Load(); st != nil {
		return st
	}
	top := b
	for _, l := range layers {
		if l.applies(d) {
			top = l.wrap(top, d)
		}
	}
	st := &stack{top: top}
	st.guard = &guard{top: top}
	st.guard.limit, st.guard.where = s.memoryLimit()
	st.ad, _ = backend.As[*autodiff.Backend](top)
	st.adTop = st.ad != nil && top == backend.Backend(st.ad)
	s.stacks[m].Store(st)
	return st
}
