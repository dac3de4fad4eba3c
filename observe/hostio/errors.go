package hostio

import (
	"errors"
	"fmt"
)

// ErrMalformed is returned when git's output does not have the shape the
// parsers in this package expect: a truncated record, a missing or extra
// field, an object id that is not hex, an unknown entry kind. Errors wrap it,
// so callers test with errors.Is and never act on a half-parsed observation.
var ErrMalformed = errors.New("malformed git output")

// MalformedAt builds an ErrMalformed error for what, naming where.
func MalformedAt(what, where string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", what, fmt.Sprintf(where, args...), ErrMalformed)
}

// IsHexOID reports whether s is a full object id as git prints it: 40 (SHA-1)
// or 64 (SHA-256) lowercase hex digits.
func IsHexOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ErrOutputTooLarge is returned when a command printed more than the
// runner's bound: a truncated output is never parsed as if it were whole.
var ErrOutputTooLarge = errors.New("command output exceeded its bound")
