package hostio

import (
	"path/filepath"
)

// Repo is a repository identified exactly: its canonical common git dir and
// main checkout.
type Repo struct {
	// CommonDir is the canonical git common dir (the repository's identity).
	CommonDir string
	// MainCheckout is the canonical path of the main working tree.
	MainCheckout string
	// Toplevel is the working tree the command was started in (the main
	// checkout or a linked worktree).
	Toplevel string
}

// StateDir is where custody keeps its state for the repository.
func (r Repo) StateDir() string { return filepath.Join(r.CommonDir, "custody") }

// AdminDir is git's admin entry of the linked worktree with key.
func (r Repo) AdminDir(key string) string { return filepath.Join(r.CommonDir, "worktrees", key) }
