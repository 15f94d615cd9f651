package autodiff

import (
	"github.com/emberml/ember/backend"
	"github.com/emberml/ember/backend/flex"
)

// newInner returns the backend the tests wrap: the portable pure-Go flex
// backend.
func newInner() backend.Backend { return flex.New(backend.DeviceID{Type: "flex"}) }
