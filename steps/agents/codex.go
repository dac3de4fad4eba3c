package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/steps"
)

// codexFileLimit bounds the environment.toml custody reads.
const codexFileLimit = 1 << 20

// IntegrateCodexResult reports what `custody integrate codex` found and did.
type IntegrateCodexResult struct {
	// Path is the environment.toml in the main checkout.
	Path string `json:"path"`
	// Mode is integrate, merge or remove (CodexMode).
	Mode string `json:"mode"`
	// Check says nothing was to be written (--check).
	Check bool `json:"check,omitempty"`
	// Created says the file did not exist before.
	Created bool `json:"created,omitempty"`
	// Changed says custody's edit changes the file's bytes; Written that
	// it replaced the file with them (never with --check).
	Changed bool       `json:"changed"`
	Written bool       `json:"written"`
	Keys    []CodexKey `json:"keys"`
	// Lacking names the tables (setup, setup.linux, …) whose script the
	// app runs without custody's line after this run: scripts of the
	// person's that integrate left as they were. Empty after --remove.
	Lacking []string `json:"lacking"`
	// Refusal says, when Lacking is not empty, what the app then does
	// without custody and how to merge custody's line in
	// (CodeCodexScriptOwn).
	Refusal *machine.Refusal `json:"refusal,omitempty"`
}

// Pending reports scripts left without custody's line.
func (r IntegrateCodexResult) Pending() bool { return r.Refusal != nil }

// IntegrateCodex co-manages the Codex app's environment.toml in the main
// checkout of repo (EditCodexEnvironment in mode): it reads the file
// (missing is empty), edits it, and replaces it atomically only when the
// bytes change, keeping its mode. It is idempotent: a second run changes
// nothing. With check it writes nothing and, when the file is not what
// custody would write or a table the app runs lacks custody's line,
// refuses with CodeCodexEnvironmentStale naming the tables. A file custody
// cannot edit safely (not TOML, a symlink, an odd shape) is
// CodeCodexEnvironmentInvalid and nothing is written. A file changed by
// someone else while custody edited it is left as they made it, and the
// error says to run again. Scripts of the person's that integrate leaves
// without custody's line are named in the result's Refusal
// (CodeCodexScriptOwn), with the merged scripts in its keys.
func IntegrateCodex(repo hostio.Repo, mode CodexMode, check bool) (IntegrateCodexResult, error) {
	path := filepath.Join(repo.MainCheckout, filepath.FromSlash(CodexFile))
	res := IntegrateCodexResult{Path: path, Mode: mode.String(), Check: check, Keys: []CodexKey{}, Lacking: []string{}}
	retry := "custody integrate codex"
	if mode == CodexRemove {
		retry += " --remove"
	}
	src, perm, err := readCodexFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if mode == CodexRemove {
			return res, nil // nothing of custody's to take out
		}
		res.Created = true
	} else if err != nil {
		return res, machine.CodexEnvironmentInvalidRefusal(path, retry, err)
	}
	edit, err := EditCodexEnvironment(src, filepath.Base(repo.MainCheckout), mode)
	if err != nil {
		return res, machine.CodexEnvironmentInvalidRefusal(path, retry, err)
	}
	res.Keys = edit.Keys
	res.Lacking = append(res.Lacking, edit.Lacking()...)
	res.Changed = res.Created || !bytes.Equal(edit.Out, src)
	if check {
		if stale := codexStale(path, res); stale != nil {
			return res, stale
		}
		return res, nil
	}
	if res.Changed {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return res, fmt.Errorf("make the directory of %s: %w", path, err)
		}
		// The app may rewrite the file at any moment: what custody
		// replaces must be exactly what it read.
		now, _, err := readCodexFile(path)
		if res.Created && !errors.Is(err, fs.ErrNotExist) || !res.Created && (err != nil || !bytes.Equal(now, src)) {
			return res, fmt.Errorf("%s changed while custody edited it; nothing was written, run %s again", path, retry)
		}
		if err := steps.WriteFile(path, edit.Out, perm); err != nil {
			return res, fmt.Errorf("write %s: %w", path, err)
		}
		res.Written = true
	}
	if len(res.Lacking) > 0 {
		res.Refusal = machine.CodexScriptOwnRefusal(path, codexOwnMessage(path, edit.Keys))
	}
	return res, nil
}

// codexStale is --check's refusal when the file lacks anything integrate
// (or --merge) would write: the tables named by their TOML names.
func codexStale(path string, res IntegrateCodexResult) error {
	if res.Created {
		return machine.CodexEnvironmentMissingRefusal(path)
	}
	var tables, keys []string
	retry := "custody integrate codex"
	for _, k := range res.Keys {
		switch {
		case k.Table == "" && k.Outcome == "added":
			keys = append(keys, k.Key)
		case k.Outcome == "added" || k.Outcome == "upgraded" || k.Outcome == "merged" || k.Outcome == "own":
			tables = append(tables, k.Table)
		}
		if k.Outcome == "own" || k.Outcome == "merged" {
			retry = "custody integrate codex --merge"
		}
	}
	if len(tables) == 0 && len(keys) == 0 && !res.Changed {
		return nil
	}
	return machine.CodexEnvironmentStaleRefusal(path, retry, tables, keys)
}

// codexOwnMessage is the paragraph about scripts of the person's that run
// without custody's line: each table, where it runs, and what the app's
// trees then miss.
func codexOwnMessage(path string, keys []CodexKey) string {
	tables := map[string][]string{}
	n := 0
	for _, k := range keys {
		if k.Outcome != "own" {
			continue
		}
		kind, platform, _ := strings.Cut(k.Table, ".")
		where := "every platform without an override"
		if platform != "" {
			where = platform
		}
		tables[kind] = append(tables[kind], fmt.Sprintf("[%s] (%s)", k.Table, where))
		n++
	}
	var clauses []string
	if t := tables["setup"]; len(t) > 0 {
		clauses = append(clauses, strings.Join(t, " and ")+" without custody's line, so its trees there are never put in custody (custody adopt --if-needed) nor their resources made (custody resource ensure)")
	}
	if t := tables["cleanup"]; len(t) > 0 {
		clauses = append(clauses, strings.Join(t, " and ")+" without custody's line, so the resources of the trees it removes there are never destroyed (custody teardown)")
	}
	return fmt.Sprintf("%s: the Codex app runs %s. %s your own, left as %s; the merged %s below %s custody's line first and %s every byte of yours, and %s written by custody integrate codex --merge",
		path, strings.Join(clauses, "; and it runs "), plural(n, "That script is", "Those scripts are"), plural(n, "it was", "they were"),
		plural(n, "script", "scripts"), plural(n, "puts", "put"), plural(n, "keeps", "keep"), plural(n, "it is", "they are"))
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// readCodexFile reads environment.toml and its permission bits (0o644 for
// a file that does not exist yet).
func readCodexFile(path string) ([]byte, fs.FileMode, error) {
	b, err := safefile.Read(path, codexFileLimit)
	if err != nil {
		return nil, 0o644, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, 0o644, err
	}
	return b, fi.Mode().Perm(), nil
}
