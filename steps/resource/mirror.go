package resource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// The user-level ledger of resources (decision 0256) is a directory of
// directories: $XDG_STATE_HOME/custody/resources/<repository id>/, one per
// repository, each holding one file per ledger entry,
// <sha256 of the entry id, 32 hex digits>.json (machine.Mirror, 0600).
// One file per entry, each replaced whole by an atomic rename
// (steps.WriteFile), means custody processes of different repositories
// never write the same file, and one repository's custody writes an entry
// only while its own ledger entry is held (by compare-and-swap). Only
// custody resource gc --gone-repos writes the files of a repository that
// is gone, and it claims each under one lock file (gone.lock).

// UserLedgerName is the user-level ledger's directory beside the index
// of repositories.
const UserLedgerName = "resources"

// mirrorLimit bounds what custody reads of one mirror file.
const mirrorLimit = 1 << 20

// UserLedgerDir is the directory of the user-level ledger of resources:
// resources/ beside the index of repositories
// (steps.RepositoryIndexPath's rules). It is "" when there is no state
// home, or when it would be made below a HOME that is not a directory:
// then nothing is mirrored, as no index is kept.
func UserLedgerDir(getenv func(string) string) string {
	index, fromHome, err := steps.RepositoryIndexPath(getenv)
	if err != nil {
		return ""
	}
	dir := filepath.Join(filepath.Dir(index), UserLedgerName)
	if fromHome {
		home := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(index))))
		if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
			return ""
		}
	}
	return dir
}

// mirrorFile is the name of entry id's file.
func mirrorFile(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16]) + ".json"
}

// plainName reports whether s can name a directory of the ledger: a
// repository id is hex made by the store, never a path.
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`) && !strings.HasPrefix(s, ".")
}

// mirrorRepository is e's repository as its mirrors record it.
func mirrorRepository(e *steps.Env) (machine.MirrorRepository, error) {
	id, err := e.Store.RepositoryID()
	if err != nil {
		return machine.MirrorRepository{}, fmt.Errorf("read the repository id for the user-level ledger: %w", err)
	}
	if !plainName(id) {
		return machine.MirrorRepository{}, fmt.Errorf("the repository id %q cannot name a directory of the user-level ledger", id)
	}
	return machine.MirrorRepository{ID: id, CommonDir: e.Repo.CommonDir, MainCheckout: e.Repo.MainCheckout, Host: e.Holder.Host}, nil
}

// writeMirror mirrors ledger entry r to the user-level ledger, durably
// (steps.WriteFile), before the caller commits what runs its create. It
// does nothing when e keeps no user-level ledger.
func writeMirror(e *steps.Env, r machine.Resource) error {
	if e.UserLedger == "" {
		return nil
	}
	repo, err := mirrorRepository(e)
	if err != nil {
		return err
	}
	return putMirror(filepath.Join(e.UserLedger, repo.ID), machine.MirrorOf(repo, r))
}

// putMirror writes m into dir, making dir (0700) where missing.
func putMirror(dir string, m machine.Mirror) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("make the user-level ledger of resources %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := steps.WriteFile(filepath.Join(dir, mirrorFile(m.Resource.ID)), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("mirror resource %s to the user-level ledger: %w", m.Resource.ID, err)
	}
	return nil
}

// removeMirror removes entry id's mirror once its destroy is settled (its
// ledger entry tombstoned), durably. A mirror already gone is fine.
func removeMirror(e *steps.Env, id string) error {
	if e.UserLedger == "" {
		return nil
	}
	repo, err := mirrorRepository(e)
	if err != nil {
		return err
	}
	return dropMirror(filepath.Join(e.UserLedger, repo.ID, mirrorFile(id)))
}

// dropMirror removes the mirror file at path and syncs its directory.
func dropMirror(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the mirror %s: %w", path, err)
	}
	if err := steps.SyncDir(filepath.Dir(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sync %s: %w", filepath.Dir(path), err)
	}
	return nil
}

// readMirror reads the mirror file at path. It refuses a file that is not
// regular, or that others than its owner may write: what it holds is run.
func readMirror(path string) (machine.Mirror, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return machine.Mirror{}, err
	}
	if !fi.Mode().IsRegular() {
		return machine.Mirror{}, fmt.Errorf("it is %s", steps.DescribeMode(fi.Mode()))
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return machine.Mirror{}, fmt.Errorf("others than its owner may write it (mode %v)", fi.Mode().Perm())
	}
	b, err := safefile.Read(path, mirrorLimit)
	if err != nil {
		return machine.Mirror{}, err
	}
	return machine.ParseMirror(b)
}

// syncMirrors brings this repository's part of the user-level ledger in
// line with its ledger: every live entry is mirrored (an entry made
// before mirrors existed, or whose mirror a failed write left out), and a
// mirror whose entry is destroyed or was never committed is removed,
// unless a live custody holds its intent (it is about to commit it).
// custody resource gc runs it; it is idempotent.
func syncMirrors(_ context.Context, e *steps.Env) error {
	if e.UserLedger == "" {
		return nil
	}
	repo, err := mirrorRepository(e)
	if err != nil {
		return err
	}
	dir := filepath.Join(e.UserLedger, repo.ID)
	all, err := e.Store.Resources()
	if err != nil {
		return err
	}
	live := map[string]bool{}
	for _, r := range all {
		if r.State == machine.StateTombstoned {
			continue
		}
		live[mirrorFile(r.ID)] = true
		m, err := readMirror(filepath.Join(dir, mirrorFile(r.ID)))
		if err == nil && m.Repository == repo && m.Resource.Destroy == r.Destroy && m.Resource.Handle == r.Handle {
			continue
		}
		if err := putMirror(dir, machine.MirrorOf(repo, r)); err != nil {
			return err
		}
	}
	names, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, n := range names {
		if live[n.Name()] || !strings.HasSuffix(n.Name(), ".json") || !plainName(n.Name()) {
			continue
		}
		p := filepath.Join(dir, n.Name())
		m, err := readMirror(p)
		if err != nil {
			continue // not ours to remove: gc --gone-repos reports it
		}
		if m.Resource.Intent != nil && steps.HolderAlive(m.Resource.Intent.Holder, e.Holder) {
			continue
		}
		if r, err := e.Store.GetResource(m.Resource.ID); err == nil && r.State != machine.StateTombstoned {
			continue
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := dropMirror(p); err != nil {
			return err
		}
	}
	return nil
}
