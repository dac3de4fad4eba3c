//go:build unix

package gitfiles_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// TestRegistryLockTimeout: a second exclusive lock waits the lock timeout
// the context carries, then is refused with lock-timeout naming the lock
// file and its holder (this process, which wrote its line on taking it).
// Released, the lock is free again and the holder line is gone.
func TestRegistryLockTimeout(t *testing.T) {
	t.Parallel()
	repo := hostio.Repo{CommonDir: t.TempDir()}
	unlock, err := gitfiles.RegistryLock(context.Background(), repo, true)
	if err != nil {
		t.Fatal(err)
	}
	ctx := gitfiles.WithLockTimeout(context.Background(), 200*time.Millisecond)
	start := time.Now()
	_, err = gitfiles.RegistryLock(ctx, repo, false)
	took := time.Since(start)
	var r *machine.Refusal
	if !errors.As(err, &r) || r.Code != machine.CodeLockTimeout {
		t.Fatalf("second lock: %v, want a lock-timeout refusal", err)
	}
	if took < 200*time.Millisecond || took > 3*time.Second {
		t.Errorf("second lock gave up after %v, want about 200ms", took)
	}
	lock := filepath.Join(repo.StateDir(), "registry.lock")
	if r.Path != lock || !strings.Contains(r.Message, fmt.Sprintf("held by pid %d on ", os.Getpid())) || !strings.HasPrefix(r.Retry, "custody --lock-timeout 60s") {
		t.Errorf("refusal does not name %s, its holder pid %d and a longer retry: %+v", lock, os.Getpid(), r)
	}
	unlock()
	if b, _ := os.ReadFile(lock); len(b) != 0 {
		t.Errorf("released lock still names a holder: %q", b)
	}
	unlock2, err := gitfiles.RegistryLock(ctx, repo, true)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	unlock2()
}

// TestRegistryLockInterrupted: a wait for a held lock ends as soon as the
// context does, with the context's error.
func TestRegistryLockInterrupted(t *testing.T) {
	t.Parallel()
	repo := hostio.Repo{CommonDir: t.TempDir()}
	// A reader locks only a lock file a writer made: make it first.
	first, err := gitfiles.RegistryLock(context.Background(), repo, true)
	if err != nil {
		t.Fatal(err)
	}
	first()
	unlock, err := gitfiles.RegistryLock(context.Background(), repo, false)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(gitfiles.WithLockTimeout(context.Background(), time.Minute))
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err = gitfiles.RegistryLock(ctx, repo, true)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted wait: %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("interrupted wait ended %v later", took)
	}
}

// TestRegistryLockNotARegularFile: a FIFO or a symlink at the lock path is
// refused at once: custody neither blocks on it nor writes through it.
func TestRegistryLockNotARegularFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(path, dir string) error
	}{
		{"fifo", func(p, _ string) error { return syscall.Mkfifo(p, 0o644) }},
		{"symlink", func(p, dir string) error {
			return os.Symlink(filepath.Join(dir, "elsewhere"), p)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := hostio.Repo{CommonDir: t.TempDir()}
			if err := os.MkdirAll(repo.StateDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			lock := filepath.Join(repo.StateDir(), "registry.lock")
			if err := tc.make(lock, repo.CommonDir); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := gitfiles.RegistryLock(context.Background(), repo, true)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), lock) {
					t.Errorf("lock at a %s: %v, want an error naming %s", tc.name, err, lock)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("lock at a %s blocked", tc.name)
			}
			if _, err := os.Lstat(filepath.Join(repo.CommonDir, "elsewhere")); err == nil {
				t.Errorf("the lock wrote through the symlink")
			}
		})
	}
}

// TestRegistryReadLockWritesNothing: a reader of the registry creates
// nothing (no state directory, no lock file) where no writer has made the
// lock file, and once one has, it opens that file only to read and still
// waits for the writer that holds it.
func TestRegistryReadLockWritesNothing(t *testing.T) {
	t.Parallel()
	repo := hostio.Repo{CommonDir: t.TempDir()}
	unlock, err := gitfiles.RegistryLock(context.Background(), repo, false)
	if err != nil {
		t.Fatalf("read lock where no writer ever ran: %v", err)
	}
	unlock()
	if _, err := os.Lstat(repo.StateDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a reader made %s (%v)", repo.StateDir(), err)
	}
	held, err := gitfiles.RegistryLock(context.Background(), repo, true)
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	lock := filepath.Join(repo.StateDir(), "registry.lock")
	before, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := gitfiles.WithLockTimeout(context.Background(), 200*time.Millisecond)
	_, err = gitfiles.RegistryLock(ctx, repo, false)
	var r *machine.Refusal
	if !errors.As(err, &r) || r.Code != machine.CodeLockTimeout {
		t.Errorf("a reader did not wait for the writer holding the lock: %v", err)
	}
	if after, err := os.ReadFile(lock); err != nil || string(after) != string(before) {
		t.Errorf("the reader changed the lock file: %q, was %q (%v)", after, before, err)
	}
}
