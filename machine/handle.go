package machine

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// Handle is a resource's identity: <slug>-<id>-<name>, sanitized to
// [a-z0-9-]. It is unique across worktrees (id), resources (name) and
// projects (slug).
func Handle(slug, id, name string) string {
	return sanitize(slug) + "-" + sanitize(id) + "-" + sanitize(name)
}

// Ident is a handle safe as an unquoted SQL identifier: dashes become
// underscores, one that would start with a digit gets a leading "r_", and
// one longer than MaxIdent keeps a prefix and a digest of the whole handle.
func Ident(handle string) string {
	s := strings.ReplaceAll(handle, "-", "_")
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		s = "r_" + s
	}
	if len(s) > MaxIdent {
		// Keep it unique within the limit: a prefix, then a digest of the
		// whole handle.
		h := fnv.New32a()
		h.Write([]byte(handle))
		s = fmt.Sprintf("%s_%08x", strings.TrimRight(s[:MaxIdent-9], "_"), h.Sum32())
	}
	return s
}

// MaxIdent is the longest identifier PostgreSQL (and a DNS label) keeps.
const MaxIdent = 63

func sanitize(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}

// SanitizeSlug returns s as a project slug ([a-z0-9-], never empty).
func SanitizeSlug(s string) string {
	if v := sanitize(s); v != "" {
		return v
	}
	return "project"
}
