package machine

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"
)

// ConfigFile is the project configuration's file name, at the main
// checkout's root.
const ConfigFile = "custody.toml"

// Config is the project configuration (custody.toml), validated.
type Config struct {
	// Slug names the project in resource handles.
	Slug string
	// Root is the managed worktree root as written ("" for the default),
	// relative to the main checkout or absolute.
	Root string
	// BranchPrefix is prepended to a worktree id to name its branch.
	BranchPrefix string
	// PortBase and PortSpan bound the deterministic @port@ of a worktree.
	PortBase, PortSpan int
	// Resources are declared per worktree, in document order.
	Resources []ResourceSpec
}

// ResourceSpec declares one per-worktree external resource.
type ResourceSpec struct {
	Name    string
	Create  string
	Destroy string
	Ensure  string
	// Required makes a failed create abort `custody new`.
	Required bool
	Retries  int
	// GC lets orphan GC reclaim the resource.
	GC      bool
	Timeout time.Duration
}

// Defaults of the project configuration.
const (
	DefaultPortBase        = 20000
	DefaultPortSpan        = 10000
	DefaultResourceTimeout = 5 * time.Minute
)

// Policy returns the decision policy the configuration implies.
func (c Config) Policy() Policy {
	p := DefaultPolicy()
	if c.BranchPrefix != "" {
		p.BranchPrefix = c.BranchPrefix
	}
	return p
}

// Resource returns the spec named name.
func (c Config) Resource(name string) (ResourceSpec, bool) {
	for _, r := range c.Resources {
		if r.Name == name {
			return r, true
		}
	}
	return ResourceSpec{}, false
}

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

// EnvKey is the .env variable holding the handle of resource name.
func EnvKey(name string) string {
	return "CUSTODY_RESOURCE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// EnvLines are exactly the lines custody writes into worktree id's .env:
// its id, then each of its resources' handles (as the ledger holds them).
func EnvLines(id string, rs []Resource) []string {
	lines := []string{"CUSTODY_WORKTREE_ID=" + id}
	for _, r := range rs {
		if r.Worktree == id {
			lines = append(lines, EnvKey(r.Name)+"="+r.Handle)
		}
	}
	return lines
}
