package hostio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Git runs git through one Runner with custody's fixed environment.
type Git struct {
	Runner *Runner
	// Bin is the git program (default "git", found on PATH).
	Bin string
	// RemoteTimeout bounds each remote's advertisement and fetch (zero:
	// the package's RemoteTimeout).
	RemoteTimeout time.Duration
	// ObserveTimeout bounds each git command that only reads (Observe,
	// ObserveInput, ObserveObjects) when its context carries no deadline
	// of its own (zero: the package's ObserveTimeout). Commands that
	// change the repository keep the Runner's deadline.
	ObserveTimeout time.Duration
	// Timeouts, when set, collects the commands of this Git that ran out
	// of time (noting): the observation of one tree.
	Timeouts *timeoutNotes
	// NoFetch, when set, says why the repository cannot take objects (a
	// read-only file system): the commits of an advertised tip that are
	// not here are then not fetched, and each remote they belong to is a
	// failure naming this reason.
	NoFetch error
	// Unanswered remembers the remotes that did not answer, so that each
	// is asked once per Git (one command), however many trees it speaks
	// for; nil remembers nothing.
	Unanswered *remoteMemo
	// Through, when set, is handed each git command in place of the
	// Runner, with run, which runs it on the Runner with custody's
	// environment and limits (what Through returns is what the command
	// returned). A program that embeds custody records or times git's
	// commands through it; nil runs each command on the Runner directly.
	Through func(ctx context.Context, c Cmd, run func(context.Context, Cmd) (Result, error)) (Result, error)
}

// remoteMemo is the remotes one Git found unavailable: each remote (by name
// and URLs) with the failure it gave. A remembered failure only ever keeps
// trees, never proves one.
type remoteMemo struct {
	mu     sync.Mutex
	failed map[string]string
}

func (m *remoteMemo) Get(key string) (string, bool) {
	if m == nil {
		return "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	why, ok := m.failed[key]
	return why, ok
}

func (m *remoteMemo) Put(key, why string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.failed[key]; !ok {
		m.failed[key] = why
	}
}

func (g *Git) RemoteBound() time.Duration {
	if g.RemoteTimeout > 0 {
		return g.RemoteTimeout
	}
	return RemoteTimeout
}

// NewGit returns a Git over r.
// A Git is meant for one command: a remote that did not answer it is not
// asked again by it.
func NewGit(r *Runner) *Git {
	return &Git{Runner: r, Bin: "git", Unanswered: &remoteMemo{failed: map[string]string{}}}
}

// CleanEnv is the process's environment without the variables that would
// point git (or a command that runs git) at another repository than the
// one it is started in: custody may itself run inside a git hook.
func CleanEnv() []string {
	drop := map[string]bool{
		"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_COMMON_DIR": true,
		"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_PREFIX": true,
		"GIT_NAMESPACE": true,
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if drop[k] {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// gitEnv is the environment every git command runs with: CleanEnv plus
// custody's fixed settings. The ext:: transport (a remote URL that is a
// shell command) is never allowed, whatever the repository's or the
// user's protocol.ext.allow says: asking a remote must not run code. No
// fsmonitor is asked either (core.fsmonitor=false): git runs a configured
// hook whenever it reads an index, even for diff-tree against an index
// that does not exist, and custody never needs what it says, so one that
// hangs cannot hold a proof (decision 0224).
// Configuration passed in the environment by whoever started custody
// (GIT_CONFIG_COUNT and its keys, and GIT_CONFIG_PARAMETERS, which `git -c`
// sets for its children and which git reads after the others, so it would
// win) is replaced by this one entry.
func gitEnv(observing bool) []string {
	var env []string
	for _, kv := range CleanEnv() {
		if !strings.HasPrefix(kv, "GIT_CONFIG_KEY_") && !strings.HasPrefix(kv, "GIT_CONFIG_VALUE_") && !strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") &&
			!strings.HasPrefix(kv, "GIT_CONFIG_PARAMETERS=") {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_NO_REPLACE_OBJECTS=1",
		"GIT_GRAFT_FILE=/dev/null", "GIT_ASKPASS=", "SSH_ASKPASS=", "GIT_SSH_VARIANT=ssh",
		"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=protocol.ext.allow", "GIT_CONFIG_VALUE_0=never",
		"GIT_CONFIG_KEY_1=core.fsmonitor", "GIT_CONFIG_VALUE_1=false")
	if observing {
		env = append(env, "GIT_OPTIONAL_LOCKS=0")
	}
	return env
}

func (g *Git) run(ctx context.Context, observing bool, dir string, stdin []byte, args ...string) ([]byte, error) {
	return g.runCmd(ctx, observing, Cmd{Dir: dir, Args: append([]string{g.program()}, args...), Stdin: stdin})
}

// program is the git program: Bin, else git on PATH.
func (g *Git) program() string {
	if g.Bin == "" {
		return "git"
	}
	return g.Bin
}

// runCmd runs c on the Git's runner with git's environment: an observing
// command bounded by ObserveTimeout. A command that runs out of time is
// noted, when the Git notes them (noting).
func (g *Git) runCmd(ctx context.Context, observing bool, c Cmd) ([]byte, error) {
	r := *g.Runner
	r.Env = gitEnv(observing)
	if observing {
		r.Deadline = g.observeTimeout()
	}
	var res Result
	var err error
	if g.Through != nil {
		res, err = g.Through(ctx, c, r.Run)
	} else {
		res, err = r.Run(ctx, c)
	}
	var te *TimeoutError
	if observing && errors.As(err, &te) {
		te.Observing = true
	}
	g.Timeouts.Note(err)
	return res.Stdout, err
}

func (g *Git) observeTimeout() time.Duration {
	if g.ObserveTimeout > 0 {
		return g.ObserveTimeout
	}
	return ObserveTimeout
}

// RemoteTimeout bounds one remote's advertisement or fetch, unless
// Git.RemoteTimeout says otherwise.
const RemoteTimeout = 60 * time.Second

// ObserveTimeout bounds one git command that only reads, unless
// Git.ObserveTimeout says otherwise: git status of the largest trees, with
// the filters it runs, ends well within it, and a filter, hook or helper
// that hangs holds a plan no longer than this (decision 0224).
const ObserveTimeout = 5 * time.Minute

// Observe runs a read-only git command in dir with GIT_OPTIONAL_LOCKS=0.
func (g *Git) Observe(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return g.run(ctx, true, dir, nil, args...)
}

// ObserveInput is Observe with stdin.
func (g *Git) ObserveInput(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	return g.run(ctx, true, dir, stdin, args...)
}

// ObserveObjects is ObserveInput for a command that must read git's
// objects and nothing else (diff-tree's patches, which proofs hash): git
// runs it against an index file that does not exist, so it never takes a
// checked-out file for the blob an index entry with clean stat data says
// it holds (diff's reuse of working tree files). A file at that path (it
// is under custody's own state directory) is refused, not read.
func (g *Git) ObserveObjects(ctx context.Context, repo Repo, stdin []byte, args ...string) ([]byte, error) {
	none := filepath.Join(repo.StateDir(), "no-index")
	if _, err := os.Lstat(none); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s exists (custody never makes it), so git cannot be shown an empty index there: remove it", none)
	}
	return g.runCmd(ctx, true, Cmd{Dir: repo.MainCheckout, Args: append([]string{g.program()}, args...), Stdin: stdin, Env: []string{"GIT_INDEX_FILE=" + none}})
}

// Mutate runs a git command that changes the repository.
func (g *Git) Mutate(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return g.run(ctx, false, dir, nil, args...)
}

// MutateInput is Mutate with stdin.
func (g *Git) MutateInput(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	return g.run(ctx, false, dir, stdin, args...)
}

// MutateWithEnv is Mutate with extra environment (NAME=value) on top of
// custody's fixed one: for a command that changes the repository and must
// tell what it runs under, as ChangeRegistry names the registry lock it
// holds (RegistryHeldEnv) to a custody its hooks start.
func (g *Git) MutateWithEnv(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	return g.runCmd(ctx, false, Cmd{Dir: dir, Args: append([]string{g.program()}, args...), Env: env})
}

// RunWith runs git in dir with extra environment (GIT_INDEX_FILE,
// GIT_OBJECT_DIRECTORY, …) on top of custody's fixed one: for scratch
// repositories, indexes and object directories only, never to point git
// at the repository a person works in.
func (g *Git) RunWith(ctx context.Context, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	return g.runCmd(ctx, false, Cmd{Dir: dir, Args: append([]string{g.program()}, args...), Stdin: stdin, Env: env})
}
