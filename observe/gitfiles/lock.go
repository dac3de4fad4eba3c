package gitfiles

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// DefaultLockTimeout is how long RegistryLock waits when the context
// carries no lock timeout (DESIGN §7's default for --lock-timeout).
const DefaultLockTimeout = 10 * time.Second

// InterruptGrace is how long a registry change already running may go on
// after an interrupt before its process group is killed: long enough for
// `git worktree add`/`remove` to finish their ordinary work, short enough
// that Ctrl-C ends custody within seconds even when a hook blocks.
const InterruptGrace = 5 * time.Second

// RegistryHeldEnv is the variable custody sets on the git commands it runs
// under the exclusive registry lock. A custody started by one of them (from
// a hook or a filter) finds the holder named there among its ancestors and
// does not wait for a lock that its own ancestor holds on its behalf.
const RegistryHeldEnv = "CUSTODY_REGISTRY_HELD"

type lockTimeoutKey struct{}

// WithLockTimeout returns ctx carrying d, the longest RegistryLock waits
// for another process (the command line's --lock-timeout).
func WithLockTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, lockTimeoutKey{}, d)
}

// lockTimeout is the lock timeout ctx carries, or DefaultLockTimeout.
func lockTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(lockTimeoutKey{}).(time.Duration); ok && d > 0 {
		return d
	}
	return DefaultLockTimeout
}

// RegistryLock serializes custody's changes to git's worktree registry
// (`git worktree add`/`remove`) against its own reads of it. git writes a
// new admin entry in several steps, and a concurrent `git worktree list`
// that reads the half-written entry fails; custody processes therefore take
// this lock (exclusive to change, shared to read) around those commands.
// It is a file lock in <common>/custody/, held only around one git command,
// never across a store transaction.
//
// It waits at most the lock timeout ctx carries (WithLockTimeout), and
// returns ctx's error as soon as ctx ends; a timeout is a lock-timeout
// refusal naming the exclusive holder (pid, host, command, since when).
// An exclusive holder writes that record into the lock file. A process
// descended from the exclusive holder's git command (a hook calling
// custody) does not wait: the lock is held on its behalf (see
// RegistryHeldEnv and docs/decisions/0017).
func RegistryLock(ctx context.Context, repo hostio.Repo, exclusive bool) (func(), error) {
	unlock, _, err := lockRegistry(ctx, repo, exclusive)
	return unlock, err
}

// lockRegistry is RegistryLock that also returns the RegistryHeldEnv value
// for the commands run under an exclusive lock it took ("" when the lock is
// held on this process's behalf, or shared).
func lockRegistry(ctx context.Context, repo hostio.Repo, exclusive bool) (func(), string, error) {
	dir := repo.StateDir()
	path := filepath.Join(dir, "registry.lock")
	var f *os.File
	var err error
	if exclusive {
		if err := safefile.DirBelow(repo.CommonDir, dir, true, 0o755); err != nil {
			return nil, "", fmt.Errorf("worktree registry lock: %w", err)
		}
		f, err = safefile.Open(path, os.O_CREATE|os.O_RDWR, 0o644)
	} else {
		// A reader creates nothing and opens the file only to read, so it
		// reads the registry on a read-only file system too. Where no lock
		// file exists yet, no custody has changed the registry under it
		// and there is nothing to wait for (a first writer racing this read
		// is what WorktreeList's retry absorbs).
		if err := safefile.DirBelow(repo.CommonDir, dir, false, 0o755); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("worktree registry lock: %w", err)
		}
		f, err = safefile.Open(path, os.O_RDONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return func() {}, "", nil
		}
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, "", machine.RegistryLockSymlinkRefusal(path)
	}
	if err != nil {
		return nil, "", fmt.Errorf("worktree registry lock %s: %w", path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, "", machine.RegistryLockNotRegularRefusal(path)
	}
	deadline := time.Now().Add(lockTimeout(ctx))
	for {
		err := tryLock(f, exclusive)
		if err == nil {
			token := ""
			if exclusive {
				noteRegistryHolder(f)
				token = heldToken(f, os.Getpid())
			}
			return func() {
				if exclusive {
					_ = f.Truncate(0)
				}
				unlockFile(f)
				f.Close()
			}, token, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, "", fmt.Errorf("worktree registry lock %s: %w", path, err)
		}
		if heldForUs(f) {
			f.Close()
			return func() {}, "", nil
		}
		if time.Now().After(deadline) {
			holder := registryHolder(f)
			f.Close()
			return nil, "", machine.RegistryLockHeldRefusal(path, lockTimeout(ctx), holder, retryLonger())
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, "", fmt.Errorf("waiting for the worktree registry lock %s: %w", path, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// noteRegistryHolder writes who holds the exclusive lock into the lock
// file: "pid <pid> on <host> (<command>) since <time>".
func noteRegistryHolder(f *os.File) {
	host, _ := os.Hostname()
	line := machine.HolderNote(os.Getpid(), host, os.Args, time.Now())
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(line), 0)
}

// readHolder is the holder line in the lock file ("" when none).
func readHolder(f *os.File) string {
	b := make([]byte, 512)
	n, _ := f.ReadAt(b, 0)
	s, _, _ := strings.Cut(string(b[:n]), "\n")
	return strings.ToValidUTF8(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s), "?")
}

// registryHolder says who holds the lock, for a timeout's message.
func registryHolder(f *os.File) string {
	h := readHolder(f)
	if pid, ok := holderPID(h); ok && hostio.ProcessAlive(pid) {
		return "held by " + h
	}
	return "held by a reader, or a process that is not custody or did not say who it is"
}

// holderPID is the pid of a holder line.
func holderPID(line string) (int, bool) {
	rest, ok := strings.CutPrefix(line, "pid ")
	if !ok {
		return 0, false
	}
	n, _, _ := strings.Cut(rest, " ")
	pid, err := strconv.Atoi(n)
	return pid, err == nil && pid > 0
}

// heldToken names the lock file f and its holder pid for RegistryHeldEnv:
// "<dev>:<ino>:<pid>".
func heldToken(f *os.File, pid int) string {
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	dev, ino, ok := hostio.DevIno(fi)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d", dev, ino, pid)
}

// heldForUs reports whether the exclusive holder of f is an ancestor of
// this process that announced it through RegistryHeldEnv: this process then
// runs inside that holder's git command (a hook), which waits for it.
func heldForUs(f *os.File) bool {
	tok := os.Getenv(RegistryHeldEnv)
	if tok == "" {
		return false
	}
	i := strings.LastIndexByte(tok, ':')
	if i < 0 {
		return false
	}
	pid, err := strconv.Atoi(tok[i+1:])
	if err != nil || pid <= 1 || heldToken(f, pid) != tok {
		return false
	}
	if p, ok := holderPID(readHolder(f)); !ok || p != pid {
		return false
	}
	return isAncestorProcess(pid)
}

// isAncestorProcess reports whether pid is this process's parent, grandparent, …
// (see ParentPID; false where a parent cannot be read).
func isAncestorProcess(pid int) bool {
	cur := os.Getppid()
	for depth := 0; cur > 1 && depth < 64; depth++ {
		if cur == pid {
			return true
		}
		var err error
		if cur, err = hostio.ParentPID(cur); err != nil {
			return false
		}
	}
	return false
}

// retryLonger is this command run again with a longer lock timeout: the
// arguments as given, without the --lock-timeout they had (the last one
// given would win).
func retryLonger() string { return machine.CommandAgain(os.Args[1:], "--lock-timeout", "60s") }

// racyRegistry reports whether err is git failing on another process's
// half-written worktree admin entry, which a retry gets past.
func racyRegistry(err error) bool {
	var ee *hostio.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	s := ee.Stderr
	return strings.Contains(s, "commondir") || strings.Contains(s, "gitdir") && strings.Contains(s, "failed to read")
}

// WorktreeList runs `git worktree list --porcelain -z` under the shared
// registry lock, retrying briefly when git trips over an admin entry a
// process outside custody is writing.
func WorktreeList(ctx context.Context, g *hostio.Git, repo hostio.Repo, dir string) ([]byte, error) {
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
// (`git worktree add`, `remove`) under the exclusive registry lock. An
// interrupt (ctx ending) does not stop the command at once, since that
// would leave a half-made or half-removed tree: it gets InterruptGrace to
// finish, then its process group is killed (a hook that blocks must not
// keep custody from ending). It runs at most RegistryTimeout.
//
// The command runs with RegistryHeldEnv naming this process, so a custody
// that one of its hooks starts reads the registry, or changes it, without
// waiting for the lock this process holds (docs/decisions/0017).
func ChangeRegistry(ctx context.Context, g *hostio.Git, repo hostio.Repo, args ...string) ([]byte, error) {
	unlock, token, err := lockRegistry(ctx, repo, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RegistryTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		select {
		case <-time.After(InterruptGrace):
			cancel()
		case <-rctx.Done():
		}
	})
	defer stop()
	var env []string
	if token != "" {
		env = []string{RegistryHeldEnv + "=" + token}
	}
	out, err := g.MutateWithEnv(rctx, repo.MainCheckout, env, args...)
	if err != nil && ctx.Err() != nil && rctx.Err() != nil {
		return out, fmt.Errorf("interrupted, and ended %s after the interrupt: %w", InterruptGrace, err)
	}
	return out, err
}
