package ember

import (
	"errors"
	"fmt"

	"github.com/emberml/ember/backend"
)

// DeviceSettings are a device's default dtypes: the dtype of float tensors
// created without one (FromFloats, Zeros, Random, ...), of int tensors
// (FromInts, Arange, Argmax results keep I64) and the bool store.
type DeviceSettings struct {
	FloatDType FloatDType
	IntDType   IntDType
	BoolDType  BoolDType
}

var defaultSettings = DeviceSettings{FloatDType: backend.FloatF32, IntDType: backend.IntI64, BoolDType: BoolNative}

// DeviceConfig changes a device's settings; a zero field leaves that
// setting as it is. Build one with the With methods:
//
//	ember.DeviceConfig{}.WithFloatDType(ember.FloatBF16)
type DeviceConfig struct {
	FloatDType FloatDType
	IntDType   IntDType
	BoolDType  BoolDType
	// Fusion turns the fusion of elementwise ops on or off for the device
	// (FusionDefault: as EMBER_FUSION says; see WithFusion). Unlike the
	// dtypes it is fixed by anything that opens the device's op stack,
	// Sync and queries included.
	Fusion FusionSetting
}

// WithFloatDType returns c with the float dtype set.
func (c DeviceConfig) WithFloatDType(f FloatDType) DeviceConfig { c.FloatDType = f; return c }

// WithIntDType returns c with the int dtype set.
func (c DeviceConfig) WithIntDType(i IntDType) DeviceConfig { c.IntDType = i; return c }

// WithBoolDType returns c with the bool store set.
func (c DeviceConfig) WithBoolDType(b BoolDType) DeviceConfig { c.BoolDType = b; return c }

// Settings returns the device's settings: the defaults F32, I64, Native
// (or, for a device whose backend reports its own, such as a remote
// device's server, those) until Configure changes them. It initializes
// the device when it has not run yet, so that a reported setting is seen.
func (d Device) Settings() DeviceSettings {
	s := d.state()
	s.open()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// opSettings returns the device's settings for an operation that will
// create a tensor with them, and locks them in the same step, under the
// mutex Configure holds: a concurrent Configure either completes first,
// and the operation sees its dtypes, or fails with ErrAlreadyInitialized.
// Operations read the default dtypes only through opSettings (Settings is
// a query and locks nothing). Once locked the settings never change, so
// the locked case needs no mutex.
func (d Device) opSettings() DeviceSettings {
	s := d.state()
	if s.locked.Load() {
		return s.settings
	}
	s.open() // the backend's reported settings first (adoptReported)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.locked.Store(true)
	return s.settings
}

// adoptReported starts the settings from the ones b reports
// (backend.SettingsReporter: a remote device's are its server's) in place
// of the defaults; zero fields keep the defaults. It runs once, when the
// device opens, before Configure or an operation can use the settings.
func (s *deviceState) adoptReported(b backend.Backend) {
	r, ok := backend.As[backend.SettingsReporter](b)
	if !ok {
		return
	}
	rs := r.DeviceSettings()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.configured || s.locked.Load() {
		return
	}
	if rs.FloatDType != 0 && DType(rs.FloatDType).IsFloat() {
		s.settings.FloatDType = rs.FloatDType
	}
	if rs.IntDType != 0 && DType(rs.IntDType).IsInt() {
		s.settings.IntDType = rs.IntDType
	}
	if rs.BoolDType >= BoolNative && rs.BoolDType <= BoolU32 {
		s.settings.BoolDType = rs.BoolDType
	}
}

// Configure sets the device's default dtypes and, with Fusion, whether it
// fuses elementwise ops (see DeviceConfig.WithFusion, which is fixed
// earlier: by Sync and FusionStats too). It must come before the
// device's first tensor operation and at most once; otherwise it returns a
// *DeviceError wrapping ErrAlreadyInitialized. A dtype the device cannot
// compute in gives ErrUnsupportedDType; a dtype of the wrong category (an
// int as FloatDType) is also ErrUnsupportedDType. On error nothing changes.
// Against a concurrent first operation Configure is all or nothing: when
// it returns nil that operation used the new dtypes; otherwise it fails
// with ErrAlreadyInitialized and the operation used the old ones.
// Autodiff variants of a device share its settings.
func (d Device) Configure(cfg DeviceConfig) error {
	s := d.state()
	name := d.Inner().String()
	b, err := s.open()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.configured || s.locked.Load() {
		why := "configured twice"
		if !s.configured {
			why = "settings are locked by the device's first tensor operation"
		}
		return &DeviceError{Device: name, Op: "configure", Err: fmt.Errorf("%w: %s", ErrAlreadyInitialized, why)}
	}
	next := s.settings
	check := func(dt DType, ok bool, what string) error {
		if !ok {
			return &DeviceError{Device: name, Op: "configure", Err: fmt.Errorf("%w: %v is not a %s dtype", ErrUnsupportedDType, dt, what)}
		}
		if !b.SupportsDType(dt) {
			return &DeviceError{Device: name, Op: "configure", Err: fmt.Errorf("%w: %v is not supported by %s", ErrUnsupportedDType, dt, name)}
		}
		return nil
	}
	if cfg.FloatDType != 0 {
		if err := check(DType(cfg.FloatDType), DType(cfg.FloatDType).IsFloat(), "float"); err != nil {
			return err
		}
		next.FloatDType = cfg.FloatDType
	}
	if cfg.IntDType != 0 {
		if err := check(DType(cfg.IntDType), DType(cfg.IntDType).IsInt(), "int"); err != nil {
			return err
		}
		next.IntDType = cfg.IntDType
	}
	if cfg.BoolDType != 0 {
		if cfg.BoolDType < BoolNative || cfg.BoolDType > BoolU32 {
			return &DeviceError{Device: name, Op: "configure", Err: fmt.Errorf("%w: bool store %v", ErrUnsupportedDType, cfg.BoolDType)}
		}
		next.BoolDType = cfg.BoolDType
	}
	if err := s.configureFusion(cfg.Fusion, name); err != nil {
		return err
	}
	s.settings = next
	s.configured = true
	return nil
}

func joinErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}
