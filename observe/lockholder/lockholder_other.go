//go:build !linux

package lockholder

// Holders cannot tell who holds a lock here: ErrUnsupported.
func Holders(string) ([]Process, error) { return nil, ErrUnsupported }
