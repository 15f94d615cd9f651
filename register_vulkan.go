package ember

// The Vulkan backend registers "vulkan" and "wgpu" (on Linux the portable
// graphics API is Vulkan). It loads libvulkan.so.1 at run time through
// purego on Linux (amd64, arm64); on other platforms the package
// registers drivers whose Init says the backend cannot run there.
import _ "github.com/emberml/ember/backend/vulkan"
