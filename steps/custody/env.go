package custody

import (
	"context"
	"io"
	"os"
	"os/user"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/archive"
	"github.com/custody-sh/custody/steps/resource"
	"github.com/custody-sh/custody/store"
)

// Site is one repository found exactly, with its configuration and its
// managed root: everything an Env rests on but the store and the ports.
type Site struct {
	Repo hostio.Repo
	// Config is the project configuration (custody.toml), and Source
	// where it was read from and the digest of its bytes.
	Config machine.Config
	Source observe.ConfigSource
	// Root is the managed worktree root, canonical.
	Root string
}

// StatePath is the site's state file.
func (s Site) StatePath() string { return steps.StatePath(s.Repo) }

// Locate finds the repository dir belongs to (its common dir and main
// checkout, exactly: a bare repository is refused), reads its
// custody.toml and resolves its managed root. It reads, and writes
// nothing.
func Locate(ctx context.Context, g *hostio.Git, dir string) (Site, error) {
	repo, err := gitfiles.Discover(ctx, g, dir)
	if err != nil {
		return Site{}, err
	}
	cfg, src, err := observe.ReadConfig(repo)
	if err != nil {
		return Site{}, err
	}
	return SiteOf(repo, cfg, src)
}

// SiteOf is the site of repo under configuration cfg read from src: it
// resolves the managed root (steps.ResolveRoot refuses one under a
// symlink, or one no exclude line can name).
func SiteOf(repo hostio.Repo, cfg machine.Config, src observe.ConfigSource) (Site, error) {
	root, err := steps.ResolveRoot(repo, cfg.Root)
	if err != nil {
		return Site{}, err
	}
	return Site{Repo: repo, Config: cfg, Source: src, Root: root}, nil
}

// NewGit is the git custody runs: git on PATH through one runner, each
// command handed to through when it is set, each command line written to
// trace when it is set.
func NewGit(through GitRunner, trace io.Writer) *hostio.Git {
	g := hostio.NewGit(&hostio.Runner{Trace: trace})
	if through != nil {
		g.Through = through.RunGit
	}
	return g
}

// Wiring is what NewEnv puts into an Env around a site and its store.
// Every field may be left zero for the real one.
type Wiring struct {
	// Git runs git (nil: NewGit(nil, nil)). The same Git must have been
	// given to Locate, so that a remote that did not answer is asked once.
	Git *hostio.Git
	// Clock is the time (nil: SystemClock).
	Clock Clock
	// Processes scans processes (nil: SystemProcesses).
	Processes ProcessScanner
	// Progress receives progress reports (nil: none).
	Progress steps.Progress
	// Actor names who acts, in the journal ("": DefaultActor).
	Actor string
	// Wait bounds how long apply waits for another live process's intent
	// on the same tree (zero: none).
	Wait time.Duration
	// Getenv reads the environment (nil: os.Getenv), for the place of the
	// user-level ledger of resources.
	Getenv func(string) string
}

// NewEnv builds the environment every workflow of the core runs in, for
// site, its store st (nil for a command that reads git alone) and the
// ports w names, and registers every feature the core does not import
// (Register). It is the one constructor: the custody command builds each
// command's Env with it, and Open does.
func NewEnv(site Site, st *store.Store, w Wiring) *steps.Env {
	g := w.Git
	if g == nil {
		g = NewGit(nil, nil)
	}
	clock := w.Clock
	if clock == nil {
		clock = SystemClock()
	}
	e := &steps.Env{
		Repo: site.Repo, Git: g, Store: st, Policy: site.Config.Policy(), Config: site.Config, ConfigSource: site.Source,
		Root: site.Root, Now: clock.Now, Actor: w.Actor, Holder: steps.Self(), Wait: w.Wait, Progress: w.Progress,
	}
	if e.Actor == "" {
		e.Actor = DefaultActor()
	}
	if w.Processes != nil {
		e.Processes = scanWith(w.Processes)
	}
	Register(e)
	e.UserLedger = resource.UserLedgerDir(w.Getenv)
	return e
}

// Register gives e the features the core does not import (decision
// 0230): each kind's workflow, in the order resume settles them
// (worktrees first: a worktree's own resume re-drives a provisioning
// tree's resources; then the resource ledger; then archives), and the
// feature implementations of the interfaces the core declares.
func Register(e *steps.Env) {
	e.Workflows = []steps.Resumer{steps.WorktreeWorkflow(), resource.Workflow(), archive.Workflow()}
	e.Resources = resource.Lifecycle{}
	e.Archives = archive.Removal{}
}

// DefaultActor names who acts, for the journal: the user and the host
// ("user@host"), as much of it as is known ("custody" when neither is).
func DefaultActor() string {
	actor := "custody"
	if u, err := user.Current(); err == nil {
		actor = u.Username
	}
	if h, err := os.Hostname(); err == nil {
		actor += "@" + h
	}
	return actor
}
