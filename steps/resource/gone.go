package resource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/store"
)

// GoneItem is what custody resource gc --gone-repos did with one mirrored
// ledger entry of a repository that is not where it was.
type GoneItem struct {
	// Repository is the repository's id; CommonDir where it was.
	Repository string `json:"repository"`
	CommonDir  string `json:"common_dir"`
	// ID is the ledger entry's id, "<worktree>/<name>"; Handle its handle.
	ID      string          `json:"id"`
	Handle  string          `json:"handle"`
	Outcome machine.Outcome `json:"outcome"`
	// Host is, for an entry recorded on another host (a home directory
	// shared between hosts), that host: only gc --gone-repos there
	// decides it.
	Host string `json:"host,omitempty"`
	// MovedTo is, for a repository that was moved (the same id in the
	// index of repositories at another place), its main checkout there:
	// its resources are kept, its own custody keeps them.
	MovedTo string `json:"moved_to,omitempty"`
	// File is the entry's file in the user-level ledger.
	File    string           `json:"file"`
	Refusal *machine.Refusal `json:"refusal,omitempty"`
}

// GoneResult is what custody resource gc --gone-repos did, entry by
// entry: only the entries of repositories that are not where the ledger
// recorded them are listed.
type GoneResult struct {
	DryRun bool `json:"dry_run"`
	// Ledger is the user-level ledger's directory.
	Ledger string     `json:"ledger"`
	Items  []GoneItem `json:"items"`
}

// Pending reports whether a destroy failed or an entry of a gone
// repository cannot be reclaimed.
func (r GoneResult) Pending() bool {
	for _, it := range r.Items {
		if machine.ItemPending(it.Outcome, it.Refusal) {
			return true
		}
	}
	return false
}

// GoneEnv is what custody resource gc --gone-repos needs: no repository,
// the user-level ledger and the index of repositories.
type GoneEnv struct {
	// Ledger is the user-level ledger's directory (UserLedgerDir).
	Ledger string
	// Index is the index of repositories (steps.RepositoryIndexPath).
	Index string
	// Holder is this process, for the intents it records.
	Holder machine.Holder
	// Now is the injected clock.
	Now func() time.Time
	// Wait bounds each wait for a lock: the ledger's, an indexed
	// repository's state file.
	Wait time.Duration
}

// goneEntry is one mirror file read.
type goneEntry struct {
	path string
	m    machine.Mirror
	err  error
}

// GoneRepos reads the user-level ledger and, for each entry whose
// repository is gone (machine.DecideGone: nothing at its recorded common
// dir, no repository of its id in the index), runs its frozen destroy
// under a destroy intent recorded in the entry's file first, and removes
// the file once the destroy is settled. A repository that was moved (its
// id found in the index at another place) keeps its resources and is
// reported as moved. With dryRun it reports what it would reclaim and why
// the rest is kept, and changes nothing.
//
// It is idempotent and safe to run at once with another: each entry is
// claimed under the ledger's lock (an intent a live custody holds is left
// to it), and an interrupted run leaves the intent, which the next run
// takes over: it ends a command the interrupted run left running, then
// runs the destroy again, unless the file already records the destroy as
// done, when it only removes the file.
func GoneRepos(ctx context.Context, g GoneEnv, dryRun bool) (GoneResult, error) {
	res := GoneResult{DryRun: dryRun, Ledger: g.Ledger, Items: []GoneItem{}}
	if g.Ledger == "" {
		return res, nil
	}
	byRepo, err := readLedger(g.Ledger)
	if err != nil {
		return res, err
	}
	ids := make([]string, 0, len(byRepo))
	for id := range byRepo {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var found *foundRepos
	for _, id := range ids {
		entries := byRepo[id]
		var dirs []string
		for _, en := range entries {
			if en.err == nil && !slices.Contains(dirs, en.m.Repository.CommonDir) {
				dirs = append(dirs, en.m.Repository.CommonDir)
			}
		}
		where := commonDirState(dirs)
		if where == machine.PathPresent {
			continue // its own custody keeps its ledger
		}
		if found == nil {
			f, err := findRepositories(ctx, g)
			if err != nil {
				return res, err
			}
			found = &f
		}
		for _, en := range entries {
			it := GoneItem{Repository: id, File: en.path}
			if en.err != nil {
				it.Outcome, it.Refusal = machine.OutcomeKept, machine.MirrorUnreadableRefusal(en.path, en.err)
				res.Items = append(res.Items, it)
				continue
			}
			it.CommonDir, it.ID, it.Handle = en.m.Repository.CommonDir, en.m.Resource.ID, en.m.Resource.Handle
			if en.m.Repository.ID != id {
				it.Outcome, it.Refusal = machine.OutcomeKept, machine.MirrorUnreadableRefusal(en.path,
					fmt.Errorf("it names repository %s, not %s, the directory it is in", en.m.Repository.ID, id))
				res.Items = append(res.Items, it)
				continue
			}
			v := machine.DecideGone(en.m, goneFacts(g, en.m, where, *found))
			switch {
			case v.OtherHost != "":
				it.Outcome, it.Host = machine.OutcomeKept, v.OtherHost
			case v.MovedTo != "":
				it.Outcome, it.MovedTo = machine.OutcomeKept, v.MovedTo
			case !v.Reclaim:
				it.Outcome, it.Refusal = machine.OutcomeKept, v.Refusal
			case dryRun:
				it.Outcome = machine.OutcomeWouldReclaim
			default:
				out, ref, err := destroyGone(ctx, g, en.path, where, *found)
				if err != nil {
					return res, err
				}
				it.Outcome, it.Refusal = out, ref
			}
			res.Items = append(res.Items, it)
		}
		if !dryRun {
			// A gone repository whose every entry is settled leaves no
			// directory behind; one still holding a file stays.
			_ = os.Remove(filepath.Join(g.Ledger, id))
		}
	}
	return res, nil
}

// readLedger reads every mirror file of the ledger, by repository id; a
// repository's entries in reverse creation order (a worktree's resources
// go as teardown takes them). Files being written (.*.tmp) are skipped.
func readLedger(dir string) (map[string][]goneEntry, error) {
	repos, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the user-level ledger of resources: %w", err)
	}
	out := map[string][]goneEntry{}
	for _, d := range repos {
		if !d.IsDir() || !plainName(d.Name()) {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, d.Name()))
		if err != nil {
			return nil, fmt.Errorf("read the user-level ledger of resources: %w", err)
		}
		var es []goneEntry
		for _, f := range files {
			if !strings.HasSuffix(f.Name(), ".json") || !plainName(f.Name()) {
				continue
			}
			p := filepath.Join(dir, d.Name(), f.Name())
			m, err := readMirror(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue // settled since it was listed
			}
			es = append(es, goneEntry{path: p, m: m, err: err})
		}
		sort.SliceStable(es, func(i, j int) bool {
			a, b := es[i].m.Resource, es[j].m.Resource
			if a.Worktree != b.Worktree {
				return a.Worktree < b.Worktree
			}
			if !a.CreatedAt.Equal(b.CreatedAt) {
				return a.CreatedAt.After(b.CreatedAt)
			}
			return a.ID > b.ID
		})
		if len(es) > 0 {
			out[d.Name()] = es
		}
	}
	return out, nil
}

// commonDirState is what stands at a repository's recorded common dirs
// (one per place it was recorded at): present when any is, unknown when
// any cannot be observed, else absent.
func commonDirState(dirs []string) machine.PathState {
	st := machine.PathAbsent
	for _, d := range dirs {
		switch hostio.Lstat(d).State {
		case machine.PathPresent:
			return machine.PathPresent
		case machine.PathUnknown:
			st = machine.PathUnknown
		}
	}
	return st
}

// foundRepos is the index of repositories read for ids: each indexed
// repository whose common dir is present, by its repository id, and the
// ones whose id could not be read.
type foundRepos struct {
	byID       map[string]machine.IndexedRepository
	unreadable []string
}

// findRepositories reads the id of every repository in the index whose
// common dir is present, from its state file opened read-only. One that
// has no state file has no id; one whose id cannot be read is named.
func findRepositories(ctx context.Context, g GoneEnv) (foundRepos, error) {
	f := foundRepos{byID: map[string]machine.IndexedRepository{}}
	if g.Index == "" {
		return f, nil
	}
	x, err := steps.ReadRepositoryIndex(g.Index)
	if err != nil {
		return f, err
	}
	for _, r := range x.Repositories {
		if hostio.Lstat(r.CommonDir).State == machine.PathAbsent {
			continue
		}
		id, err := repositoryID(ctx, g, r)
		switch {
		case errors.Is(err, store.ErrNotInitialized):
		case err != nil:
			f.unreadable = append(f.unreadable, r.CommonDir)
		case id != "":
			f.byID[id] = r
		}
	}
	return f, nil
}

// repositoryID reads the repository id of indexed repository r.
func repositoryID(ctx context.Context, g GoneEnv, r machine.IndexedRepository) (string, error) {
	st, err := store.OpenWith(ctx, steps.StatePath(hostio.Repo{CommonDir: r.CommonDir, MainCheckout: r.MainCheckout}),
		store.Options{Timeout: g.Wait, ReadOnly: true})
	if err != nil {
		return "", err
	}
	return st.RepositoryID()
}

// goneFacts observes what DecideGone decides on for m.
func goneFacts(g GoneEnv, m machine.Mirror, where machine.PathState, found foundRepos) machine.GoneFacts {
	f := machine.GoneFacts{Host: g.Holder.Host, CommonDir: where, Tree: hostio.Lstat(m.Resource.Path).State, Parent: machine.PathUnknown}
	if mc := m.Repository.MainCheckout; filepath.IsAbs(mc) && filepath.Dir(mc) != mc {
		f.Parent = hostio.Lstat(filepath.Dir(mc)).State
	}
	if m.Resource.Path == "" || !filepath.IsAbs(m.Resource.Path) {
		f.Tree = machine.PathUnknown
	}
	if r, ok := found.byID[m.Repository.ID]; ok {
		f.MovedTo = r.MainCheckout
	}
	if len(found.unreadable) > 0 {
		f.Unreadable = found.unreadable[0]
	}
	f.HolderAlive = m.Resource.Intent != nil && steps.HolderAlive(m.Resource.Intent.Holder, g.Holder)
	return f
}

// destroyGone claims the entry at path (re-read and re-decided under the
// ledger's lock, its destroy intent written), runs its frozen destroy
// with its retries, and settles it: a destroy that exited 0 is first
// recorded in the file, then the file is removed; a failed one is
// recorded with the intent cleared, and the file stays for the next run.
func destroyGone(ctx context.Context, g GoneEnv, path string, where machine.PathState, found foundRepos) (machine.Outcome, *machine.Refusal, error) {
	var m machine.Mirror
	var ref *machine.Refusal
	done := false
	err := withLedgerLock(ctx, g, func() error {
		var err error
		m, err = readMirror(path)
		if errors.Is(err, fs.ErrNotExist) {
			done = true
			return nil
		}
		if err != nil {
			ref = machine.MirrorUnreadableRefusal(path, err)
			return nil
		}
		if m.Resource.Evidence.Outcome == string(machine.TriggerDestroyed) {
			return nil // the destroy ran and was recorded; only the file is left
		}
		if v := machine.DecideGone(m, goneFacts(g, m, where, found)); !v.Reclaim {
			ref = v.Refusal
			if v.Refusal == nil {
				ref = &machine.Refusal{Code: machine.CodeWorktreeLive, Path: m.Repository.CommonDir, Retry: machine.GoneRetry,
					Message: fmt.Sprintf("the repository of %s is no longer gone", m.Resource.ID)}
			}
			return nil
		}
		m.Resource.Intent = machine.MirrorIntent(m, g.Holder, g.Now())
		return putMirror(filepath.Dir(path), m)
	})
	switch {
	case err != nil:
		return "", nil, err
	case done:
		return machine.OutcomeAlreadyDone, nil, nil
	case ref != nil:
		return machine.OutcomeKept, ref, nil
	}
	dir := filepath.Dir(path)
	r := m.Resource
	outcome := machine.OutcomeDestroyed
	if r.Evidence.Outcome == string(machine.TriggerDestroyed) {
		outcome = machine.OutcomeAlreadyDone // an interrupted run destroyed it
	} else {
		failpoint.At("resource/gone-after-intent")
		code, attempts, out := runGone(ctx, g, dir, &m)
		if err := ctx.Err(); err != nil {
			return "", nil, fmt.Errorf("the destroy of resource %s was interrupted and its process group ended; its intent is left for the next custody resource gc --gone-repos: %w", r.ID, err)
		}
		m.Resource.Intent = nil
		t := machine.TriggerDestroyed
		if code != 0 {
			t = machine.TriggerDestroyFailed
		}
		m.Resource.Evidence = machine.ResourceEvidence{Outcome: string(t), ExitCode: code, Attempts: attempts}
		m.Resource.UpdatedAt = g.Now().UTC()
		if err := putMirror(dir, m); err != nil {
			return "", nil, err
		}
		if code != 0 {
			return machine.OutcomeFailed, machine.GoneDestroyFailedRefusal(m, code, out), nil
		}
		failpoint.At("resource/gone-after-destroy")
	}
	if err := dropMirror(path); err != nil {
		return "", nil, err
	}
	return outcome, nil, nil
}

// runGone runs m's frozen destroy up to 1+retries times until it exits 0,
// recording each attempt's process group in the file's intent before it
// is waited for, as a repository's ledger does (recordGroup).
func runGone(ctx context.Context, g GoneEnv, dir string, m *machine.Mirror) (code, attempts int, out string) {
	for attempts = 1; ; attempts++ {
		onStart := func(pid int) error {
			in := *m.Resource.Intent
			in.Group = &machine.Holder{PID: pid, Host: g.Holder.Host, Start: hostio.ProcessStart(pid)}
			next := *m
			next.Resource.Intent = &in
			if err := putMirror(dir, next); err != nil {
				return err
			}
			*m = next
			return nil
		}
		code, out = runCommandOn(ctx, g.Holder.Host, g.Ledger, m.Resource, m.Resource.Destroy, onStart)
		if code == 0 || attempts > m.Resource.Retries || ctx.Err() != nil || machine.Unexpanded(m.Resource.Destroy) != "" {
			return code, attempts, out
		}
	}
}

// withLedgerLock runs fn holding the user-level ledger's lock (the file
// gone.lock in it), waiting at most g.Wait for another custody resource
// gc --gone-repos to release it.
func withLedgerLock(ctx context.Context, g GoneEnv, fn func() error) error {
	p := filepath.Join(g.Ledger, "gone.lock")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open the lock of the user-level ledger: %w", err)
	}
	defer f.Close()
	deadline := time.Now().Add(g.Wait)
	for {
		err := tryLock(f)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return &machine.Refusal{Code: machine.CodeLockTimeout, Path: p, Retry: "custody --lock-timeout 60s resource gc --gone-repos",
				Message: fmt.Sprintf("%s, the lock of the user-level ledger of resources, was held by another run for longer than %s", p, g.Wait)}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fn() // the lock goes with the file's close
}
