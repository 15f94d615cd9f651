// Package fusion is the decorator that runs chains of elementwise ops as
// one kernel: Burn's fusion backend ("the fusion backend batches ops to
// build optimizations"), built on the op IR.
//
// A fusion Backend wraps a base backend that implements backend.Fuser
// (cpu, cuda). Elementwise ops (unary, binary, where, cast) and constants
// (Full) are not run when they arrive: each becomes a pending node of the
// calling goroutine's stream and its result a lazy *Tensor. Any other op,
// and every read, drains the stream first: the pending nodes are grouped
// by shape into ir.FusedPrograms, each evaluated by the base backend in one
// pass over memory (backend.Fuser.ExecFused), and only the values someone
// can still see are written — the nodes no other pending node consumed,
// the ones asked for, and those a node of another shape reads. The other
// intermediates are never stored: a later use recomputes them from their
// inputs (tensors are immutable values, so this gives the same bits) as
// part of the next program, or in a small program of its own.
//
// What drains a stream: an op that is not fused reading one of its
// tensors, ToData, Sync, Flush, Seed, a persistent-allocation window
// (backend.MemoryManager), a tensor of one goroutine's stream used by
// another goroutine (its producer's stream is drained first), and a
// stream reaching Options.MaxNodes pending nodes. Flush dispatches
// without waiting on backends that execute asynchronously.
//
// A group of more than Options.MaxProgramOps ops is cut into consecutive
// programs (each writing the values a later one reads), so that programs
// stay quick to compile and a loop's drains give a few signatures.
//
// Results are bit-identical to the unfused backend: a Fuser computes each
// node exactly as its kernel for that op alone does, and a program it
// declines runs op by op (ir.FusedProgram.Run). A Fuser may decline a
// program only for now (cuda while the program's kernel is compiled in
// the background): nothing is cached on the decorator's side, so a later
// program of the same signature is offered again.
package fusion
