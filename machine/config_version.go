package machine

import (
	"fmt"
	"strings"
)

// ConfigVersion is the newest version of custody.toml's format this custody
// reads and the one `custody config upgrade` writes. A file without a
// `version` key is version 1.
const ConfigVersion = 1

// ConfigFormat is one version of custody.toml's format and the first
// custody release that reads it.
type ConfigFormat struct {
	// Version is the value of the file's `version` key.
	Version int
	// FirstRelease names the first custody release that reads the version
	// ("every release" for version 1, which custody read before the key
	// existed).
	FirstRelease string
}

// ConfigFormats lists every version of custody.toml's format this custody
// knows, oldest first; the last one is ConfigVersion. A change of the
// format that an older custody would misread adds a row here (with the
// release it first ships in) and a rewrite to `custody config upgrade`.
func ConfigFormats() []ConfigFormat {
	return []ConfigFormat{{Version: 1, FirstRelease: "every release"}}
}

// ConfigNewerRefusal refuses custody.toml at path, which declares version
// version, newer than ConfigVersion: this custody (self, its --version
// text) would misread it. The file's own version names the custody that
// reads it: the release whose `custody config upgrade` writes that version.
func ConfigNewerRefusal(path string, version int64, self string) *Refusal {
	return &Refusal{Code: CodeConfigInvalid, Path: path, Retry: "custody --version",
		Message: fmt.Sprintf("%s declares version = %d, which custody %s does not read (it reads version %d): only a custody whose `custody config upgrade` writes version %d reads it; nothing was changed, upgrade custody",
			EscapeControl(path), version, EscapeControl(self), ConfigVersion, version)}
}

// LegacyKey is a key of discern's configuration that custody.toml replaced,
// and what replaced it.
type LegacyKey struct {
	// Path is the key's path: [worktree db] is the [worktree.db] table.
	Path []string
	// Table is true when Path names a table.
	Table bool
	// Replacement says, in a clause, what custody reads instead.
	Replacement string
	// Renames maps the old key under a legacy table to its replacement
	// (clone → create); a key under Path that it does not name has no
	// counterpart and stops `custody config upgrade`.
	Renames map[string]string
	// To is the replacement's path, which `custody config upgrade` writes.
	To []string
}

// LegacyKeys are the keys of discern's configuration (seed 000, ADR 0025)
// that custody.toml replaced, longest path first. A file holding one is
// refused naming the replacement (LegacyKeyMessage), and `custody config
// upgrade` rewrites it.
func LegacyKeys() []LegacyKey {
	return []LegacyKey{
		{Path: []string{"worktree", "db"}, Table: true, To: []string{"resources", "db"},
			Renames:     map[string]string{"clone": "create", "drop": "destroy"},
			Replacement: "a resource: [resources.db] with create (was clone) and destroy (was drop)"},
		{Path: []string{"worktree", "dev_server"}, Table: true, To: []string{"resources", "dev_server"},
			Renames:     map[string]string{"link": "create", "unlink": "destroy"},
			Replacement: "a resource: [resources.dev_server] with create (was link) and destroy (was unlink)"},
		{Path: []string{"worktree", "resources"}, Table: true, To: []string{"resources"},
			Replacement: "[resources.<name>], the same keys one level up"},
		{Path: []string{"worktree", "port"}, To: []string{"worktree", "port_base"},
			Replacement: "[worktree] port_base (with port_span: @port@ is port_base + hash(id) mod port_span)"},
	}
}

// LegacyKeyOf returns the legacy key path is or lies under, and whether
// there is one.
func LegacyKeyOf(path []string) (LegacyKey, bool) {
	for _, k := range LegacyKeys() {
		if len(path) >= len(k.Path) && equalPath(path[:len(k.Path)], k.Path) {
			return k, true
		}
	}
	return LegacyKey{}, false
}

func equalPath(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// LegacyKeyMessage is what a file holding k is told: the key as discern
// wrote it and what replaced it, and the command that rewrites it.
func LegacyKeyMessage(k LegacyKey) string {
	name := strings.Join(k.Path, ".")
	if k.Table {
		name = "[" + name + "]"
	} else {
		name = "[" + strings.Join(k.Path[:len(k.Path)-1], ".") + "] " + k.Path[len(k.Path)-1]
	}
	return fmt.Sprintf("%s is discern's; custody reads %s (custody config upgrade rewrites it)", name, k.Replacement)
}

// LegacyKeyRefusal refuses custody.toml at path, whose line line holds
// the legacy key k: the message names what replaced it, and the retry
// shows the rewrite.
func LegacyKeyRefusal(path string, line int, k LegacyKey) *Refusal {
	return &Refusal{Code: CodeConfigInvalid, Path: path, Retry: "custody config upgrade",
		Message: fmt.Sprintf("%s: line %d: %s", EscapeControl(path), line, LegacyKeyMessage(k))}
}
