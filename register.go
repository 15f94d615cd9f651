package ember

import (
	// The built-in backends register themselves in their init functions:
	// "flex" (portable pure Go, priority 10) and "cpu" (optimized CPU,
	// priority 20), which imports flex, and "cuda" (NVIDIA GPUs, priority 50).
	_ "github.com/emberml/ember/backend/cpu"
	_ "github.com/emberml/ember/backend/cuda"
)
