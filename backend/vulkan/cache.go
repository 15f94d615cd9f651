//go:build linux && (amd64 || arm64)

package vulkan

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"time"
)

// The driver's pipeline cache (VkPipelineCache) is kept on disk under
// os.UserCacheDir()/ember/vulkan, one file per adapter (its
// pipelineCacheUUID), so that a later process skips compiling the
// shaders again; EMBER_VULKAN_CACHE=0 turns it off. The driver checks the
// header of the data it is given and ignores data of another driver.

// cacheFile returns the pipeline cache file of a ("" when disabled).
func cacheFile(a *Adapter) string {
	if os.Getenv("EMBER_VULKAN_CACHE") == "0" {
		return ""
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "ember", "vulkan", hex.EncodeToString(a.props.PipelineCacheUUID[:])+".bin")
}

// loadPipelineCache returns the saved cache data of a (nil when none).
func loadPipelineCache(a *Adapter) []byte {
	f := cacheFile(a)
	if f == "" {
		return nil
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return nil
	}
	return b
}

// cacheSaveInterval is the least time between two saves of the pipeline
// cache, which holds every pipeline compiled so far.
const cacheSaveInterval = 5 * time.Second

// savePipelineCache writes the device's cache data when pipelines were
// compiled since the last save and the last save is cacheSaveInterval
// old (best effort: a cache that cannot be written only costs compile
// time in the next process).
func (d *device) savePipelineCache() {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := cacheFile(d.adapter)
	if f == "" || !d.cacheDirty || time.Since(d.cacheSaved) < cacheSaveInterval {
		return
	}
	data, err := d.api.PipelineCacheData(d.cache)
	if err != nil || len(data) == 0 {
		return
	}
	d.cacheDirty, d.cacheSaved = false, time.Now()
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		return
	}
	tmp := f + ".tmp" + hex.EncodeToString([]byte{byte(os.Getpid()), byte(os.Getpid() >> 8)})
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return
	}
	_ = os.Rename(tmp, f)
}
