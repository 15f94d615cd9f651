package ember

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
)

func init() {
	// Until the optimized CPU backend exists, "cpu" runs on the Flex kernels.
	if _, ok := backend.Lookup("cpu"); !ok {
		backend.Register("cpu", flex.NewDriver("cpu", 20))
	}
}
