package machine

import (
	"encoding/hex"
	"strings"
)

// MaxSlug bounds the slug part of a worktree id.
const MaxSlug = 40

// Slug turns a person's name for a worktree into [a-z0-9-]: lower case,
// other runs collapsed to one '-', trimmed, at most MaxSlug bytes. An empty
// result becomes "wt".
func Slug(name string) string {
	s := sanitize(name)
	if len(s) > MaxSlug {
		s = strings.TrimRight(s[:MaxSlug], "-")
	}
	if s == "" {
		s = "wt"
	}
	return s
}

// WorktreeID is slug(name) + "-" + 6 hex digits of random (3 bytes the
// caller drew).
func WorktreeID(name string, random [3]byte) string {
	return Slug(name) + "-" + hex.EncodeToString(random[:])
}

// ValidID reports whether id has the shape WorktreeID makes.
func ValidID(id string) bool {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 || len(id)-i-1 != 6 || Slug(id[:i]) != id[:i] {
		return false
	}
	_, err := hex.DecodeString(id[i+1:])
	return err == nil && strings.ToLower(id[i+1:]) == id[i+1:]
}
