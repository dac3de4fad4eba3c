package observe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// ErrConfig is returned when custody.toml cannot be used: a syntax error, an
// unknown key, a wrong type or an invalid value. Errors name the file, the
// line and the key.
var ErrConfig = errors.New("invalid project configuration")

type rawConfig struct {
	// Version is the format's version (machine.ConfigVersion); absent is 1.
	Version *int `toml:"version"`
	Project struct {
		Slug string `toml:"slug"`
	} `toml:"project"`
	Worktree struct {
		Root         string `toml:"root"`
		BranchPrefix string `toml:"branch_prefix"`
		PortBase     *int   `toml:"port_base"`
		PortSpan     *int   `toml:"port_span"`
	} `toml:"worktree"`
	Resources map[string]rawResource `toml:"resources"`
	Cleanup   struct {
		Disposable []string `toml:"disposable"`
	} `toml:"cleanup"`
	Land struct {
		Check string `toml:"check"`
	} `toml:"land"`
}

type rawResource struct {
	Create   string `toml:"create"`
	Destroy  string `toml:"destroy"`
	Ensure   string `toml:"ensure"`
	Required *bool  `toml:"required"`
	Retries  int    `toml:"retries"`
	GC       *bool  `toml:"gc"`
	Timeout  string `toml:"timeout"`
}

var (
	resourceName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]*([_-][a-z0-9]+)*$`) })
	refComponent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`) })
)

// ConfigNewerError is returned (wrapping ErrConfig) for a custody.toml
// whose version is newer than machine.ConfigVersion: this custody would
// misread it, so it reads nothing of it. The CLI names its own version
// (machine.ConfigNewerRefusal).
type ConfigNewerError struct {
	// Path is the file's path.
	Path string
	// Version is the version the file declares.
	Version int64
}

// Error says which version the file declares and which one custody reads.
func (e *ConfigNewerError) Error() string {
	return fmt.Sprintf("%v: %s declares version = %d, newer than the version this custody reads (%d)", ErrConfig, e.Path, e.Version, machine.ConfigVersion)
}

// Unwrap makes errors.Is(err, ErrConfig) hold.
func (e *ConfigNewerError) Unwrap() error { return ErrConfig }

// configRefusal is a refusal about custody.toml: errors.Is(err, ErrConfig)
// holds, and errors.As finds the refusal with its path and retry.
type configRefusal struct{ r *machine.Refusal }

// Error is the refusal's message after ErrConfig's.
func (e *configRefusal) Error() string { return fmt.Sprintf("%v: %s", ErrConfig, e.r.Message) }

// Unwrap returns ErrConfig and the refusal.
func (e *configRefusal) Unwrap() []error { return []error{ErrConfig, e.r} }

// MaxConfigSize bounds custody.toml: a larger file is refused unread.
const MaxConfigSize = 1 << 20

// ConfigSource is custody.toml as it was read: where, whether it exists,
// and the sha256 of its bytes, the digest `custody trust` approves.
type ConfigSource struct {
	// Path is <main-checkout>/custody.toml.
	Path string
	// Present is false when there is no file (the default configuration).
	Present bool
	// Digest is the hex sha256 of the file's bytes; "" when absent.
	Digest string
}

// LoadConfig reads custody.toml at the main checkout's root. A missing file
// is the default configuration.
func LoadConfig(repo hostio.Repo) (machine.Config, error) {
	c, _, err := ReadConfig(repo)
	return c, err
}

// ReadConfig reads custody.toml at the main checkout's root, and says what
// was read. Only a regular file of at most MaxConfigSize bytes is read: a
// symlink (to /dev/zero, to a secret), a FIFO, a device or a directory there
// is ErrConfig naming the path and what it is, never its content.
func ReadConfig(repo hostio.Repo) (machine.Config, ConfigSource, error) {
	path := filepath.Join(repo.MainCheckout, machine.ConfigFile)
	src := ConfigSource{Path: path}
	b, err := safefile.Read(path, MaxConfigSize)
	if errors.Is(err, fs.ErrNotExist) {
		c, err := ParseConfig(path, nil, filepath.Base(repo.MainCheckout))
		return c, src, err
	}
	if err != nil {
		return machine.Config{}, src, fmt.Errorf("%w: %s cannot be read (custody reads only a regular file of at most %d bytes there): %w", ErrConfig, path, MaxConfigSize, err)
	}
	sum := sha256.Sum256(b)
	src.Present, src.Digest = true, hex.EncodeToString(sum[:])
	c, err := ParseConfig(path, b, filepath.Base(repo.MainCheckout))
	return c, src, err
}

// ParseConfig parses and validates the configuration in b (named name in
// errors). defaultSlug is the main checkout's directory name.
func ParseConfig(name string, b []byte, defaultSlug string) (machine.Config, error) {
	// A UTF-8 byte order mark, as some editors write, is not content.
	doc, err := parseTOML(bytes.TrimPrefix(b, []byte("\uFEFF")))
	if err == nil {
		// A newer format may hold keys this custody does not know: its
		// version is read first, then what discern wrote, then the rest.
		if v, ok := doc.value([]string{"version"}); ok {
			if n, isInt := v.(int64); isInt && n > machine.ConfigVersion {
				return machine.Config{}, &ConfigNewerError{Path: name, Version: n}
			}
		}
		if e := doc.legacyKey(); e != nil {
			k, _ := machine.LegacyKeyOf(doc.keys.nodes[e.key].head)
			return machine.Config{}, &configRefusal{machine.LegacyKeyRefusal(name, e.line, k)}
		}
		err = doc.checkSchema()
	}
	if err != nil {
		return machine.Config{}, fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
	}
	var raw rawConfig
	fill(reflect.ValueOf(&raw).Elem(), doc.values)
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%w: %s: line %d: %s: %s", ErrConfig, name, doc.line(strings.Split(key, ".")), key, fmt.Sprintf(format, args...))
	}
	badAt := func(path []string, format string, args ...any) error {
		return fmt.Errorf("%w: %s: line %d: %s: %s", ErrConfig, name, doc.line(path), strings.Join(path, "."), fmt.Sprintf(format, args...))
	}
	if raw.Version != nil && *raw.Version < 1 {
		return machine.Config{}, bad("version", "%d is not a version of custody.toml (1 to %d)", *raw.Version, machine.ConfigVersion)
	}
	c := machine.Config{
		Slug:         machine.SanitizeSlug(defaultSlug),
		Root:         raw.Worktree.Root,
		BranchPrefix: raw.Worktree.BranchPrefix,
		PortBase:     machine.DefaultPortBase,
		PortSpan:     machine.DefaultPortSpan,
	}
	if raw.Project.Slug != "" {
		c.Slug = machine.SanitizeSlug(raw.Project.Slug)
	}
	if c.BranchPrefix != "" && (!refComponent().MatchString(c.BranchPrefix) || strings.Contains(c.BranchPrefix, "..") || strings.HasSuffix(c.BranchPrefix, ".lock")) {
		return machine.Config{}, bad("worktree.branch_prefix", "%q is not a valid branch name prefix", c.BranchPrefix)
	}
	if c.Root != "" {
		for _, part := range strings.Split(filepath.ToSlash(c.Root), "/") {
			if part == ".." {
				return machine.Config{}, bad("worktree.root", "%q contains '..'", c.Root)
			}
		}
	}
	if raw.Worktree.PortBase != nil {
		c.PortBase = *raw.Worktree.PortBase
	}
	if raw.Worktree.PortSpan != nil {
		c.PortSpan = *raw.Worktree.PortSpan
	}
	if c.PortBase < 1024 || c.PortBase > 65535 {
		return machine.Config{}, bad("worktree.port_base", "%d is outside 1024..65535", c.PortBase)
	}
	if c.PortSpan < 1 || c.PortSpan > 65536-c.PortBase {
		return machine.Config{}, bad("worktree.port_span", "%d does not fit above port_base %d", c.PortSpan, c.PortBase)
	}
	if len(raw.Cleanup.Disposable) > 0 {
		if _, err := machine.ParsePatterns(raw.Cleanup.Disposable); err != nil {
			return machine.Config{}, bad("cleanup.disposable", "%v", err)
		}
		c.Disposable = raw.Cleanup.Disposable
	}
	if c.LandCheck = raw.Land.Check; c.LandCheck != "" && strings.TrimSpace(c.LandCheck) == "" {
		return machine.Config{}, bad("land.check", "is blank: give the command to run, or leave the key out")
	}
	if t := doc.kind([]string{"resources"}); t != "" && t != "hash" {
		return machine.Config{}, bad("resources", "must be a table of [resources.<name>] tables, not a %s", t)
	}
	// Document order: the first key that names each resource, whether as a
	// [resources.x] header, a dotted key or an inline table.
	var names []string
	seenName := map[string]bool{}
	for _, e := range doc.entries {
		if k := doc.keys.nodes[e.key].head; len(k) >= 2 && k[0] == "resources" && !seenName[k[1]] {
			seenName[k[1]] = true
			names = append(names, k[1])
		}
	}
	handles := map[string]string{}
	for _, n := range names {
		r := raw.Resources[n]
		path := []string{"resources", n}
		if t := doc.kind(path); t != "" && t != "hash" {
			return machine.Config{}, badAt(path, "must be a table, not a %s", t)
		}
		if !resourceName().MatchString(n) || len(n) > 32 {
			return machine.Config{}, badAt(path, "resource name %q must be at most 32 lower case letters and digits, words joined by one '-' or '_'", n)
		}
		h := strings.ReplaceAll(n, "_", "-")
		if other, dup := handles[h]; dup {
			return machine.Config{}, badAt(path, "resources %q and %q would share one handle and one CUSTODY_RESOURCE_ variable", other, n)
		}
		handles[h] = n
		spec := machine.ResourceSpec{Name: n, Create: r.Create, Destroy: r.Destroy, Ensure: r.Ensure,
			Required: true, Retries: r.Retries, GC: true, Timeout: machine.DefaultResourceTimeout}
		if r.Required != nil {
			spec.Required = *r.Required
		}
		if r.GC != nil {
			spec.GC = *r.GC
		}
		if strings.TrimSpace(r.Create) == "" {
			return machine.Config{}, badAt(path, "create is required")
		}
		if strings.TrimSpace(r.Destroy) == "" {
			return machine.Config{}, badAt(path, "destroy is required")
		}
		if r.Retries < 0 || r.Retries > 10 {
			return machine.Config{}, badAt(append(path, "retries"), "%d is outside 0..10", r.Retries)
		}
		if r.Timeout != "" {
			d, err := time.ParseDuration(r.Timeout)
			if err != nil || d <= 0 {
				return machine.Config{}, badAt(append(path, "timeout"), "%q is not a positive duration like \"5m\"", r.Timeout)
			}
			spec.Timeout = d
		}
		c.Resources = append(c.Resources, spec)
	}
	return c, nil
}
