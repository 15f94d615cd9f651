//go:build libtorch && cgo

// The shim's caching CPU allocator (lt_init, lt_cache_*), which serves
// every ATen CPU allocation of the process once installed.

#include "shim.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace {

// ATen's default CPU allocator returns every block to malloc, which hands
// large ones back to the kernel: each new large tensor then pays page
// faults over all its memory (more than the arithmetic of an add). This
// allocator keeps freed blocks of at least kMinCached bytes, by size class
// (multiples of an eighth of the size's power of two), for reuse, up to
// kMaxCached bytes in all; smaller blocks go straight back to malloc.

constexpr size_t kHeader = 64; // c10's alignment; holds the block's header
constexpr size_t kMinCached = size_t(64) << 10;
constexpr size_t kMaxCached = size_t(1) << 30;

struct BlockHeader {
	size_t size;	// the block's size class (bytes after the header)
	size_t request; // the bytes asked for
};

struct Cache {
	std::mutex mu;
	std::unordered_map<size_t, std::vector<char *>> free; // by size class
	size_t cached = 0, in_use = 0, requested = 0, live = 0;
	bool enabled = true;
};

// cache is never destroyed: deleters may run until the process exits.
Cache &cache() {
	static Cache *c = new Cache();
	return *c;
}

size_t size_class(size_t n) {
	if (n < kMinCached) {
		return n;
	}
	size_t p = size_t(1) << (63 - __builtin_clzll(n));
	size_t q = std::max(kMinCached, p / 8);
	return (n + q - 1) / q * q;
}

// drop_cache frees the cached blocks; c.mu must be held.
void drop_cache(Cache &c) {
	for (auto &e : c.free) {
		for (char *b : e.second) {
			std::free(b);
		}
	}
	c.free.clear();
	c.cached = 0;
}

void release_block(void *p) {
	if (p == nullptr) {
		return;
	}
	char *base = static_cast<char *>(p) - kHeader;
	auto *h = reinterpret_cast<BlockHeader *>(base);
	Cache &c = cache();
	{
		std::lock_guard<std::mutex> l(c.mu);
		c.in_use -= h->size;
		c.requested -= h->request;
		c.live--;
		if (c.enabled && h->size >= kMinCached && c.cached + h->size <= kMaxCached) {
			c.free[h->size].push_back(base);
			c.cached += h->size;
			return;
		}
	}
	std::free(base);
}

class CachingCPUAllocator final : public c10::Allocator {
      public:
	c10::DataPtr allocate(size_t n) const override {
		c10::Device cpu(c10::kCPU);
		if (n == 0) {
			return {nullptr, nullptr, &release_block, cpu};
		}
		size_t size = size_class(n);
		char *base = nullptr;
		Cache &c = cache();
		{
			std::lock_guard<std::mutex> l(c.mu);
			auto it = c.free.find(size);
			if (it != c.free.end() && !it->second.empty()) {
				base = it->second.back();
				it->second.pop_back();
				c.cached -= size;
			}
		}
		if (base == nullptr) {
			void *b = nullptr;
			if (posix_memalign(&b, kHeader, size + kHeader) != 0) {
				{
					std::lock_guard<std::mutex> l(c.mu);
					drop_cache(c);
				}
				if (posix_memalign(&b, kHeader, size + kHeader) != 0) {
					throw std::bad_alloc();
				}
			}
			base = static_cast<char *>(b);
		}
		auto *h = reinterpret_cast<BlockHeader *>(base);
		h->size = size;
		h->request = n;
		{
			std::lock_guard<std::mutex> l(c.mu);
			c.in_use += size;
			c.requested += n;
			c.live++;
		}
		void *p = base + kHeader;
		return {p, p, &release_block, cpu};
	}

	c10::DeleterFnPtr raw_deleter() const override { return &release_block; }
};

} // namespace

extern "C" {

void lt_init(void) {
	static std::once_flag once;
	std::call_once(once, [] {
		static CachingCPUAllocator alloc;
		c10::SetCPUAllocator(&alloc, /*priority=*/1);
	});
}

void lt_cache_set(int enabled) {
	Cache &c = cache();
	std::lock_guard<std::mutex> l(c.mu);
	c.enabled = enabled != 0;
	if (!c.enabled) {
		drop_cache(c);
	}
}

void lt_cache_release(void) {
	Cache &c = cache();
	std::lock_guard<std::mutex> l(c.mu);
	drop_cache(c);
}

void lt_cache_stats(int64_t *live, int64_t *in_use, int64_t *requested, int64_t *cached) {
	Cache &c = cache();
	std::lock_guard<std::mutex> l(c.mu);
	*live = static_cast<int64_t>(c.live);
	*in_use = static_cast<int64_t>(c.in_use);
	*requested = static_cast<int64_t>(c.requested);
	*cached = static_cast<int64_t>(c.cached);
}

} // extern "C"
