package ember

import (
	// The built-in backends register themselves in their init functions:
	// "flex" (portable pure Go, priority 10) and "cpu" (optimized CPU,
	// priority 20), which imports flex. The GPU backends register where
	// their loaders work (register_cuda.go).
	_ "github.com/emberml/ember/backend/capture"
	_ "github.com/emberml/ember/backend/cpu"
	_ "github.com/emberml/ember/backend/ndarray"
	// The remote device types "remote+ws", "remote+wss" and
	// "remote+quic" (remote.go).
	_ "github.com/emberml/ember/backend/remote"
)
