package backend

import "testing"

type fakeDriver struct{ placeholder bool }

func (fakeDriver) Open(id DeviceID) (Backend, error) { return nil, nil }
func (fakeDriver) Devices() []DeviceID               { return nil }
func (fakeDriver) Priority() int                     { return 0 }
func (f fakeDriver) Placeholder() bool               { return f.placeholder }

// TestRegisterReplacesPlaceholders checks that a real driver replaces a
// placeholder registered before or after it, and that two real drivers of
// one name still panic.
func TestRegisterReplacesPlaceholders(t *testing.T) {
	real1, real2 := fakeDriver{}, fakeDriver{}
	RegisterPlaceholder("test-before", fakeDriver{placeholder: true})
	Register("test-before", real1)
	if d, _ := Lookup("test-before"); d != Driver(real1) {
		t.Errorf("placeholder registered first: Lookup = %#v, want the real driver", d)
	}
	Register("test-after", real2)
	RegisterPlaceholder("test-after", fakeDriver{placeholder: true})
	if d, _ := Lookup("test-after"); d != Driver(real2) {
		t.Errorf("placeholder registered second: Lookup = %#v, want the real driver", d)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second real driver of one name did not panic")
		}
	}()
	Register("test-after", fakeDriver{})
}
