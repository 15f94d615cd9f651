// Package capture is Ember's recorder: a backend.Backend that appends each
// op it receives to a graph instead of running it (Burn's capture device,
// burn-tensor's Device::capture). The root package's ember.Capture makes
// capture devices and Device.CaptureScope drives the recording; this
// package registers the "capture" driver and does the bookkeeping.
//
// A Backend hands out tensor handles (*Tensor) named by ids from its own
// counter, never reused. Data moved onto it (FromData: parameters,
// constants, a batch) becomes a value, which it keeps. Between Begin and
// Scope.Complete, Exec records every op as an ir.Record over ids, with its
// output shape and dtype, as the kind the caller built (Supports says yes
// to every valid kind, so nothing is decomposed here; a graph replayed on a
// device without a kernel is lowered there). Complete checks the declared
// boundaries (see Scope.Complete for the error classes) and returns an
// ir.Graph: the declared inputs, the values the ops used, the ops, the
// outputs. Drops are not ops: a handle that becomes unreachable
// (runtime.AddCleanup) is only noted, so that it cannot be an output.
//
// Nothing is computed: reading a recorded result fails with
// ErrNotComputed, reading a value returns it, and Seed panics (random ops
// sample where the graph replays). The graph format is package ir's CBOR
// encoding (ir.MarshalGraph), so a graph recorded here replays on any
// device, in this process or another.
package capture
