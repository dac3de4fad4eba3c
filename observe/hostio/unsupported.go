package hostio

import (
	"errors"
	"runtime"
)

// UnsupportedError says that something custody needs is missing on this
// operating system (process groups, file locks, device and inode
// identities, an in-use scan). It satisfies errors.Is(err,
// errors.ErrUnsupported); custody then keeps what it cannot judge.
type UnsupportedError struct {
	// What names the missing facility, e.g. "file locks".
	What string
	// OS is the operating system (runtime.GOOS) that lacks it.
	OS string
}

// Unsupported is an UnsupportedError for what on this system.
func Unsupported(what string) error {
	return &UnsupportedError{What: what, OS: runtime.GOOS}
}

// Error names the facility and the system.
func (e *UnsupportedError) Error() string {
	return e.What + " are not supported on " + e.OS + "; custody runs on linux and darwin"
}

// Is makes the error match errors.ErrUnsupported.
func (e *UnsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }
