package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// InitCmd prepares a repository for custody.
type InitCmd struct{}

// Help is the long help of init.
func (InitCmd) Help() string {
	return `Creates the state file <git-common-dir>/custody/state.db and the managed root
<main-checkout>/.worktrees/, and adds the root to .git/info/exclude (never to a
tracked file). Running it again changes nothing.

EXIT STATUS: 0 done, 1 error.`
}

type initResult struct {
	RepositoryID string `json:"repository_id"`
	State        string `json:"state"`
	Root         string `json:"root"`
	Excluded     bool   `json:"excluded"`
}

// Run initializes the repository.
func (c *InitCmd) Run(a *App) error {
	e, err := a.env(true)
	if err != nil {
		return err
	}
	if err := e.EnsureRoot(); err != nil {
		return err
	}
	id, err := e.Store.RepositoryID()
	if err != nil {
		return err
	}
	added, err := excludeRoot(e.Repo.CommonDir, e.Repo.MainCheckout, e.Root)
	if err != nil {
		return err
	}
	res := initResult{RepositoryID: id, State: e.Store.Path(), Root: e.Root, Excluded: true}
	a.done(res, func(w io.Writer) {
		fmt.Fprintf(w, "custody is ready in %s\n", e.Repo.MainCheckout)
		fmt.Fprintf(w, "  state  %s\n  root   %s", res.State, res.Root)
		if added {
			fmt.Fprint(w, " (added to .git/info/exclude)")
		}
		fmt.Fprintln(w, "\nnext: custody new NAME")
	}, false)
	return nil
}

// excludeRoot adds the managed root to <common>/info/exclude unless a line
// already names it. It reports whether it added the line.
func excludeRoot(common, main, root string) (bool, error) {
	rel, err := filepath.Rel(main, root)
	if err != nil || strings.HasPrefix(rel, "..") {
		return false, nil // outside the checkout: nothing to exclude
	}
	line := "/" + filepath.ToSlash(rel) + "/"
	path := filepath.Join(common, "info", "exclude")
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == line || strings.TrimSpace(l) == strings.TrimSuffix(line, "/") {
			return false, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return false, fmt.Errorf("update %s: %w", path, err)
	}
	defer f.Close()
	prefix := ""
	if len(b) > 0 && !strings.HasSuffix(string(b), "\n") {
		prefix = "\n"
	}
	if _, err := fmt.Fprintf(f, "%s# custody's managed worktrees\n%s\n", prefix, line); err != nil {
		return false, err
	}
	return true, f.Close()
}
