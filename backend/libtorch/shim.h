/*
 * The C ABI between package libtorch (Go, through cgo) and ATen (C++).
 *
 * Tensors are opaque handles (lt_tensor, an at::Tensor on the heap) that Go
 * frees with lt_free. Every entry point that can fail returns an lt_status:
 * C++ exceptions are caught inside the shim and come back as a message, so
 * none crosses into Go. Dtype, unary, binary, reduce and distribution codes
 * are the numeric values of package ir's DType, UnaryOp, BinaryOp, ReduceOp
 * and DistributionKind (the Go side checks that they agree).
 */
#ifndef EMBER_LIBTORCH_SHIM_H
#define EMBER_LIBTORCH_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lt_tensor lt_tensor;
typedef struct lt_gen lt_gen;

/* Status codes. */
enum { LT_OK = 0, LT_ERROR = 1, LT_OOM = 2 };

/* lt_status: code LT_OK, or an error with a message (malloc'ed; the caller
 * frees it with lt_free_msg). */
typedef struct {
	int code;
	char *msg;
} lt_status;

/* lt_out receives an op's result: the new handle and the bytes of new
 * storage it holds (0 for a view of an input). */
typedef struct {
	lt_tensor *t;
	int64_t bytes;
} lt_out;

/* Device types of lt_device.type. */
enum { LT_CPU = 0, LT_CUDA = 1, LT_MPS = 2, LT_VULKAN = 3 };

typedef struct {
	int type;
	int index;
} lt_device;

/* Dtypes: ir.DType's values. */
enum {
	LT_F64 = 1, LT_F32 = 2, LT_FLEX32 = 3, LT_F16 = 4, LT_BF16 = 5,
	LT_I64 = 6, LT_I32 = 7, LT_I16 = 8, LT_I8 = 9,
	LT_U64 = 10, LT_U32 = 11, LT_U16 = 12, LT_U8 = 13, LT_BOOL = 14
};

/* Unary ops: ir.UnaryOp's values. */
enum {
	LT_NEG = 1, LT_ABS, LT_SIGN, LT_EXP, LT_LOG, LT_LOG1P, LT_EXPM1, LT_SQRT,
	LT_RSQRT, LT_RECIP, LT_SIN, LT_COS, LT_TANH, LT_SIGMOID, LT_ERF,
	LT_FLOOR, LT_CEIL, LT_ROUND, LT_NOT
};

/* Binary ops: ir.BinaryOp's values. */
enum {
	LT_ADD = 1, LT_SUB, LT_MUL, LT_DIV, LT_FLOORDIV, LT_REM, LT_MOD, LT_POW,
	LT_MAX, LT_MIN, LT_ATAN2, LT_EQ, LT_NE, LT_LT, LT_LE, LT_GT, LT_GE,
	LT_AND, LT_OR, LT_XOR, LT_SHL, LT_SHR
};

/* Reductions: ir.ReduceOp's values. */
enum { LT_SUM = 1, LT_PROD, LT_RMAX, LT_RMIN, LT_ARGMAX, LT_ARGMIN };

/* Distributions: ir.DistributionKind's values. */
enum { LT_DIST_DEFAULT = 0, LT_DIST_UNIFORM, LT_DIST_NORMAL, LT_DIST_BERNOULLI };

/* lt_init installs the shim's caching CPU allocator (once). */
void lt_init(void);
/* The caching allocator: lt_cache_set turns caching on or off (off also
 * frees the cache), lt_cache_release frees the cached blocks, and
 * lt_cache_stats reports the live blocks, their bytes (size classes and
 * as requested) and the bytes cached. */
void lt_cache_set(int enabled);
void lt_cache_release(void);
void lt_cache_stats(int64_t *live, int64_t *in_use, int64_t *requested, int64_t *cached);

void lt_free_msg(char *msg);
void lt_free(lt_tensor *t);

/* Library facts. */
const char *lt_version(void);
int lt_has_cuda(void);
int lt_cuda_count(void);
int lt_has_mps(void);
int lt_has_vulkan(void);
int lt_has_sgemm(void);
int lt_num_threads(void);
void lt_set_num_threads(int n);

/* lt_info fills dtype (an LT_ code), rank and up to max sizes of t. */
lt_status lt_info(lt_tensor *t, int *dtype, int *rank, int64_t *sizes, int max);
/* lt_alias returns a second handle to the same tensor. */
lt_status lt_alias(lt_tensor *t, lt_out *out);

/* Data. bytes holds the tensor's elements, row-major, little-endian (Bool:
 * one byte each, non-zero is true). */
lt_status lt_from_data(lt_device dev, int dtype, const int64_t *shape, int rank,
		       const void *bytes, size_t nbytes, lt_out *out);
lt_status lt_to_data(lt_tensor *t, void *dst, size_t nbytes);

/* Random generators: one per backend. */
lt_status lt_gen_new(uint64_t seed, lt_gen **out);
void lt_gen_seed(lt_gen *g, uint64_t seed);
void lt_gen_free(lt_gen *g);

/* Creation. Full's value is given already converted to the dtype: ival
 * for integer dtypes, fval (exactly representable) otherwise. */
lt_status lt_full(lt_device dev, int dtype, const int64_t *shape, int rank,
		  double fval, int64_t ival, lt_out *out);
lt_status lt_arange_int(lt_device dev, int dtype, int64_t n, int64_t start, int64_t step, lt_out *out);
lt_status lt_arange_float(lt_device dev, int dtype, int64_t n, double start, double step, lt_out *out);
lt_status lt_random(lt_gen *g, lt_device dev, int dtype, const int64_t *shape, int rank,
		    int dist, double a, double b, lt_out *out);

/* Elementwise. */
lt_status lt_unary(int op, lt_tensor *x, lt_out *out);
lt_status lt_binary(int op, lt_tensor *a, lt_tensor *b, lt_out *out);
lt_status lt_where(lt_tensor *c, lt_tensor *a, lt_tensor *b, lt_out *out);
lt_status lt_cast(lt_tensor *x, int dtype, lt_out *out);

/* Reductions and scans. */
lt_status lt_reduce(int op, lt_tensor *x, int64_t axis, int keepdim, lt_out *out);
lt_status lt_cumsum(lt_tensor *x, int64_t axis, lt_out *out);

/* Movement. ranges: start, end, step per axis; pads: before, after per
 * axis, in axis order; pad's value as lt_full's. */
lt_status lt_reshape(lt_tensor *x, const int64_t *shape, int rank, lt_out *out);
lt_status lt_permute(lt_tensor *x, const int64_t *dims, int rank, lt_out *out);
lt_status lt_expand(lt_tensor *x, const int64_t *shape, int rank, lt_out *out);
lt_status lt_slice(lt_tensor *x, const int64_t *ranges, int rank, lt_out *out);
lt_status lt_pad(lt_tensor *x, const int64_t *pads, int rank, double fval, int64_t ival, lt_out *out);
lt_status lt_flip(lt_tensor *x, const int64_t *dims, int n, lt_out *out);
lt_status lt_cat(lt_tensor *const *xs, int n, int64_t axis, lt_out *out);
lt_status lt_slice_scatter(lt_tensor *src, const int64_t *shape, int rank, const int64_t *ranges, lt_out *out);

/* Indexing. */
lt_status lt_gather(lt_tensor *x, int64_t axis, lt_tensor *index, lt_out *out);
lt_status lt_scatter_add(lt_tensor *x, int64_t axis, lt_tensor *index, lt_tensor *src, lt_out *out);
lt_status lt_index_select(lt_tensor *x, int64_t axis, lt_tensor *index, lt_out *out);

/* Linear algebra and pooling. conv: stride[2], padding[2], dilation[2],
 * output_padding[2], groups; pool: kernel[2], stride[2], padding[2],
 * dilation[2]. */
lt_status lt_matmul(lt_tensor *a, lt_tensor *b, lt_out *out);
lt_status lt_conv2d(lt_tensor *x, lt_tensor *w, const int64_t *conv, int transpose, lt_out *out);
lt_status lt_conv2d_weight_grad(lt_tensor *x, lt_tensor *grad, const int64_t *wshape, const int64_t *conv, lt_out *out);
lt_status lt_max_pool2d(lt_tensor *x, const int64_t *pool, lt_out *out);

/* One Adam/AdamW update (float32 or float64 tensors) as ir's AdamStep
 * decomposition computes it, op by op: hyper holds, in float64, the decay
 * factor (1 - lr*wd when decoupled, else wd), beta1, 1 - beta1, beta2,
 * 1 - beta2, sqrt(1 - beta2^t), eps and lr / (1 - beta1^t), each converted
 * to the dtype before use; flags bit 0: decoupled decay, bit 1: L2 decay.
 * outs receives the new param, m and v. */
lt_status lt_adam_step(lt_tensor *p, lt_tensor *g, lt_tensor *m, lt_tensor *v,
		       const double *hyper, int flags, lt_out *outs);

/* lt_sync waits for the device's queued work. */
lt_status lt_sync(lt_device dev);

#ifdef __cplusplus
}
#endif

#endif
