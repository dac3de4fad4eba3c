package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
	// Check says nothing was to be written (--check).
	Check bool `json:"check,omitempty"`
	// Created says the file did not exist before.
	Created bool `json:"created,omitempty"`
	// Changed says custody's edit changes the file's bytes; Written that
	// it replaced the file with them (never with --check).
	Changed bool       `json:"changed"`
	Written bool       `json:"written"`
	Keys    []CodexKey `json:"keys"`
}

// IntegrateCodex co-manages the Codex app's environment.toml in the main
// checkout of repo (EditCodexEnvironment): it reads the file (missing is
// empty), edits it, and replaces it atomically only when the bytes change,
// keeping its mode. It is idempotent: a second run changes nothing. With
// check it writes nothing and, when the file is not what custody would
// write, refuses with CodeCodexEnvironmentStale. A file custody cannot edit
// safely (not TOML, a symlink, an odd shape) is CodeCodexEnvironmentInvalid
// and nothing is written. A file changed by someone else while custody
// edited it is left as they made it, and the error says to run again.
func IntegrateCodex(repo hostio.Repo, check bool) (IntegrateCodexResult, error) {
	path := filepath.Join(repo.MainCheckout, filepath.FromSlash(CodexFile))
	res := IntegrateCodexResult{Path: path, Check: check}
	src, perm, err := readCodexFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		res.Created = true
	} else if err != nil {
		return res, machine.CodexEnvironmentInvalidRefusal(path, err)
	}
	edit, err := EditCodexEnvironment(src, filepath.Base(repo.MainCheckout))
	if err != nil {
		return res, machine.CodexEnvironmentInvalidRefusal(path, err)
	}
	res.Keys = edit.Keys
	res.Changed = res.Created || !bytes.Equal(edit.Out, src)
	if !res.Changed {
		return res, nil
	}
	if check {
		return res, machine.CodexEnvironmentStaleRefusal(path, addedKeys(edit.Keys), res.Created)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return res, fmt.Errorf("make the directory of %s: %w", path, err)
	}
	// The app may rewrite the file at any moment: what custody replaces
	// must be exactly what it read.
	now, _, err := readCodexFile(path)
	if res.Created && !errors.Is(err, fs.ErrNotExist) || !res.Created && (err != nil || !bytes.Equal(now, src)) {
		return res, fmt.Errorf("%s changed while custody edited it; nothing was written, run custody integrate codex again", path)
	}
	if err := steps.WriteFile(path, edit.Out, perm); err != nil {
		return res, fmt.Errorf("write %s: %w", path, err)
	}
	res.Written = true
	return res, nil
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

// addedKeys names the keys an edit adds or upgrades.
func addedKeys(keys []CodexKey) []string {
	var out []string
	for _, k := range keys {
		if k.Outcome == "added" || k.Outcome == "upgraded" {
			out = append(out, k.Key)
		}
	}
	return out
}
