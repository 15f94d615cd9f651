// Package cu binds the subset of the CUDA driver API (libcuda.so.1) that
// Ember's CUDA backend uses, loaded at run time with purego (no cgo).
//
// Every function returns an *Error naming the driver call and the CUDA
// error (cuGetErrorName / cuGetErrorString) when the call does not return
// CUDA_SUCCESS. Load must succeed before any other function is called.
// Driver calls act on the context current on the calling OS thread; callers
// lock their goroutine to its thread (runtime.LockOSThread) and make the
// context current first.
package cu
