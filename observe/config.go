package observe

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// ErrConfig is returned when custody.toml cannot be used: a syntax error, an
// unknown key, a wrong type or an invalid value. Errors name the file, the
// line and the key.
var ErrConfig = errors.New("invalid project configuration")

type rawConfig struct {
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
	var raw rawConfig
	md, err := toml.Decode(string(b), &raw)
	if err != nil {
		return machine.Config{}, fmt.Errorf("%w: %s: %s", ErrConfig, name, strings.TrimPrefix(err.Error(), "toml: "))
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		return machine.Config{}, fmt.Errorf("%w: %s: line %d: unknown key %q", ErrConfig, name, keyLine(b, k), k.String())
	}
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%w: %s: line %d: %s: %s", ErrConfig, name, keyLine(b, toml.Key(strings.Split(key, "."))), key, fmt.Sprintf(format, args...))
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
	if t := md.Type("resources"); t != "" && t != "Hash" {
		return machine.Config{}, bad("resources", "must be a table of [resources.<name>] tables, not a %s", strings.ToLower(md.Type("resources")))
	}
	// Document order: the first key that names each resource, whether as a
	// [resources.x] header, a dotted key or an inline table.
	var names []string
	seenName := map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) >= 2 && k[0] == "resources" && !seenName[k[1]] {
			seenName[k[1]] = true
			names = append(names, k[1])
		}
	}
	handles := map[string]string{}
	for _, n := range names {
		r := raw.Resources[n]
		key := "resources." + n
		if t := md.Type("resources", n); t != "" && t != "Hash" {
			return machine.Config{}, bad(key, "must be a table, not a %s", strings.ToLower(md.Type("resources", n)))
		}
		if !resourceName().MatchString(n) || len(n) > 32 {
			return machine.Config{}, bad(key, "resource name %q must be at most 32 lower case letters and digits, words joined by one '-' or '_'", n)
		}
		h := strings.ReplaceAll(n, "_", "-")
		if other, dup := handles[h]; dup {
			return machine.Config{}, bad(key, "resources %q and %q would share one handle and one CUSTODY_RESOURCE_ variable", other, n)
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
			return machine.Config{}, bad(key, "create is required")
		}
		if strings.TrimSpace(r.Destroy) == "" {
			return machine.Config{}, bad(key, "destroy is required")
		}
		if r.Retries < 0 || r.Retries > 10 {
			return machine.Config{}, bad(key+".retries", "%d is outside 0..10", r.Retries)
		}
		if r.Timeout != "" {
			d, err := time.ParseDuration(r.Timeout)
			if err != nil || d <= 0 {
				return machine.Config{}, bad(key+".timeout", "%q is not a positive duration like \"5m\"", r.Timeout)
			}
			spec.Timeout = d
		}
		c.Resources = append(c.Resources, spec)
	}
	return c, nil
}

// keyLine finds the line where key is set: its own "k = v" line (also as
// a dotted key or inside an inline table), or its table's header; 0 when it
// cannot be found.
func keyLine(b []byte, key toml.Key) int {
	want := strings.Join(key, ".")
	cur := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			end := strings.LastIndex(line, "]")
			if end < 0 {
				continue
			}
			cur = normalizeKey(strings.Trim(line[:end+1], "[] "))
			if cur == want || strings.HasPrefix(want+".", cur+".") && len(cur) == len(want) {
				return n
			}
			continue
		}
		k, _, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		full := normalizeKey(k)
		if cur != "" {
			full = cur + "." + full
		}
		if full == want || strings.HasPrefix(want, full+".") {
			return n
		}
	}
	return 0
}

// normalizeKey turns a TOML key as written (`a . "b c"`) into "a.b c".
func normalizeKey(k string) string {
	var parts []string
	for _, p := range strings.Split(k, ".") {
		parts = append(parts, strings.Trim(strings.TrimSpace(p), `"'`))
	}
	return strings.Join(parts, ".")
}
