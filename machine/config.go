package machine

import (
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
	// Disposable are the [cleanup] disposable patterns (gitignore syntax,
	// relative to each tree, validated by ParsePatterns): what they match
	// is build output a removal may discard, once this exact content is
	// approved (custody trust).
	Disposable []string
	// LandCheck is the [land] check command: custody land runs it in the
	// tree (sh -c) before it integrates, and a failure refuses the
	// landing. It runs only once this exact content is approved
	// (custody trust).
	LandCheck string
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

// EnvKey is the .env variable holding the handle of resource name.
func EnvKey(name string) string {
	return "CUSTODY_RESOURCE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// EnvLines are exactly the lines custody writes into worktree id's .env:
// its id, then each of its resources' handles (as the ledger holds them).
// Each value is written by DotenvValue.
func EnvLines(id string, rs []Resource) []string {
	lines := []string{"CUSTODY_WORKTREE_ID=" + DotenvValue(id)}
	for _, r := range rs {
		if r.Worktree == id {
			lines = append(lines, EnvKey(r.Name)+"="+DotenvValue(r.Handle))
		}
	}
	return lines
}
