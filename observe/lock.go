package observe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// RegistryLock serializes custody's changes to git's worktree registry
// (`git worktree add`/`remove`) against its own reads of it. git writes a
// new admin entry in several steps, and a concurrent `git worktree list`
// that reads the half-written entry fails; custody processes therefore take
// this lock (exclusive to change, shared to read) around those commands.
// It is a file lock in <common>/custody/, held only around one git command,
// never across a store transaction.
func RegistryLock(ctx context.Context, repo Repo, exclusive bool) (func(), error) {
	dir := repo.StateDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("worktree registry lock: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "registry.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("worktree registry lock: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("worktree registry lock: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// racyRegistry reports whether err is git failing on another process's
// half-written worktree admin entry, which a retry gets past.
func racyRegistry(err error) bool {
	var ee *ExitError
	if !errors.As(err, &ee) {
		return false
	}
	s := ee.Stderr
	return strings.Contains(s, "commondir") || strings.Contains(s, "gitdir") && strings.Contains(s, "failed to read")
}

// WorktreeList runs `git worktree list --porcelain -z` under the shared
// registry lock, retrying briefly when git trips over an admin entry a
// process outside custody is writing.
func WorktreeList(ctx context.Context, g *Git, repo Repo, dir string) ([]byte, error) {
	var out []byte
	var err error
	for attempt := 0; attempt < 6; attempt++ {
		unlock, lerr := RegistryLock(ctx, repo, false)
		if lerr != nil {
			return nil, lerr
		}
		out, err = g.Observe(ctx, dir, "worktree", "list", "--porcelain", "-z")
		unlock()
		if err == nil || !racyRegistry(err) {
			return out, err
		}
		time.Sleep(time.Duration(10<<attempt) * time.Millisecond)
	}
	return out, err
}

// RegistryTimeout bounds one change of the worktree registry.
const RegistryTimeout = 10 * time.Minute

// ChangeRegistry runs a git command that changes the worktree registry
// (`git worktree add`, `remove`) under the exclusive registry lock. Once
// started, the command is not cancelled with ctx (an interrupt would leave a
// half-made or half-removed tree); it runs to its end or RegistryTimeout.
func ChangeRegistry(ctx context.Context, g *Git, repo Repo, args ...string) ([]byte, error) {
	unlock, err := RegistryLock(ctx, repo, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RegistryTimeout)
	defer cancel()
	return g.Mutate(rctx, repo.MainCheckout, args...)
}
