package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/writable"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/custody"
	"github.com/custody-sh/custody/store"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Globals are the flags every command takes.
type Globals struct {
	Chdir       string        `short:"C" name:"chdir" placeholder:"DIR" help:"Run as if custody was started in DIR."`
	JSON        bool          `name:"json" help:"Print exactly one JSON envelope."`
	LockTimeout time.Duration `name:"lock-timeout" default:"10s" help:"How long to wait for another custody holding the state file."`
	Debug       bool          `name:"debug" help:"Print every git command line on stderr."`
	// RemoteTimeout bounds how long one remote may take to answer; a
	// remote that does not is asked once per command and named.
	RemoteTimeout time.Duration `name:"remote-timeout" default:"60s" help:"How long one remote may take to answer before its trees are kept as remote-unavailable."`
	// ObserveTimeout bounds each git command that reads a tree or the
	// repository, with whatever it runs (filters, helpers); a tree whose
	// command runs out of it is kept as observation-timed-out.
	ObserveTimeout time.Duration    `name:"observe-timeout" default:"5m" help:"How long one git command observing a tree (git status with the filters it runs) may take before that tree is kept as observation-timed-out."`
	Version        kong.VersionFlag `name:"version" help:"Print the version and exit."`
}

// CLI is the command line. Each command belongs to one of the groups
// --help lists it under (commandGroups); the order here is the order
// within a group.
type CLI struct {
	Globals

	// Every day: trees made, listed, finished.
	Init     InitCmd     `cmd:"" group:"daily" help:"Prepare this repository: the state file and the managed root, excluded from git."`
	New      NewCmd      `cmd:"" group:"daily" help:"Create a managed worktree and print its path."`
	List     ListCmd     `cmd:"" group:"daily" help:"List worktree records."`
	Show     ShowCmd     `cmd:"" group:"daily" help:"Show one record: state, intent, evidence, journal and what it rests on."`
	Path     PathCmd     `cmd:"" group:"daily" help:"Print a tree's path, exactly, on one line."`
	Switch   SwitchCmd   `cmd:"" group:"daily" help:"Change the shell's directory to a tree (with custody shell-init's function; else print its path)."`
	Finish   FinishCmd   `cmd:"" group:"daily" help:"Mark worktrees finished (inside a managed worktree, defaults to it)."`
	Remove   RemoveCmd   `cmd:"" group:"daily" help:"Remove worktrees now, each only with a proof; say why each kept one stays (default: the one you are in)."`
	Land     LandCmd     `cmd:"" group:"daily" help:"Integrate a tree's branch into its proving remote's default branch (push under a lease), then remove the tree on the fresh proof."`
	Reopen   ReopenCmd   `cmd:"" group:"daily" help:"Take a finished worktree back to active."`
	Adopt    AdoptCmd    `cmd:"" group:"daily" help:"Put an existing linked worktree in custody (its branch is never deleted)."`
	Resource ResourceCmd `cmd:"" group:"daily" help:"Per-worktree resources: identity, ensure, gc, list."`

	// Cleanup: what may go, doing it, settling what was interrupted.
	Plan     PlanCmd    `cmd:"" group:"cleanup" help:"Assess every finished worktree: which may go, and why each other is kept."`
	Apply    ApplyCmd   `cmd:"" group:"cleanup" help:"Do exactly what a reviewed plan says, refusing what changed since."`
	Resume   ResumeCmd  `cmd:"" group:"cleanup" help:"Drive every interrupted intent to its one outcome."`
	Abandon  AbandonCmd `cmd:"" group:"cleanup" help:"End the record of a gone tree whose last commit is lost (--acknowledge-unrecoverable)."`
	Sweep    SweepCmd   `cmd:"" group:"cleanup" help:"Discard the build output of idle trees and archive finished work, never removing a tree (--install-timer: daily)."`
	Recovery RecoverCmd `cmd:"" name:"recovered" group:"cleanup" help:"List or prune what custody kept from removed trees (recovery refs, per-worktree config)."`

	// Archives of unpublished work.
	Archive ArchiveCmd `cmd:"" group:"archives" help:"Archive unpublished work, verify, list and restore archives."`

	// Bringing legacy trees into custody.
	Migrate  MigrateCmd  `cmd:"" group:"migration" help:"Bring legacy worktrees into custody or retire them: discover, plan, dispose, apply, status."`
	Relocate RelocateCmd `cmd:"" group:"migration" help:"Move an active worktree (by default into the managed root) under a relocation intent."`

	// Agents: wiring into their configuration, their hooks, teardown from a tree.
	Integrate IntegrateCmd `cmd:"" group:"agents" help:"Wire custody into an agent's configuration (Codex, Claude Code)."`
	Hook      HookCmd      `cmd:"" group:"agents" help:"Agents' hooks: lease a session's worktree, create and retire trees (stdin: the agent's JSON payload)."`
	Teardown  TeardownCmd  `cmd:"" group:"agents" help:"Destroy the resources of the managed worktree custody runs in (no id, no stdin)."`
	Skill     SkillCmd     `cmd:"" group:"agents" help:"Print or write the agent skill (SKILL.md, its reference files, agents/openai.yaml) generated from this command line."`

	// Audit: the journal.
	Journal JournalCmd `cmd:"" group:"audit" help:"Export, verify and show the head of the journal."`

	// Maintenance, and custody itself.
	Doctor   DoctorCmd   `cmd:"" group:"maintenance" help:"Check the state file, the journal and the records."`
	Trust    TrustCmd    `cmd:"" group:"maintenance" help:"Approve custody.toml's exact content, so its commands may run (--revoke withdraws it)."`
	Config   ConfigCmd   `cmd:"" group:"maintenance" help:"custody.toml itself: upgrade it to the current format, comments kept."`
	Complete CompleteCmd `cmd:"" name:"completion" group:"maintenance" help:"Print a shell completion script (bash, zsh or fish)."`
	// CompleteWords is what the completion scripts ask for: tree ids,
	// branches, archive names.
	CompleteWords CompleteWordsCmd `cmd:"" name:"__complete" hidden:"" group:"maintenance" help:"Print the words completion offers (for the completion scripts)."`
	ShellInit     ShellInitCmd     `cmd:"" name:"shell-init" group:"maintenance" help:"Print the shell function that lets custody switch and custody new change directory (bash, zsh or fish)."`
	Man           ManCmd           `cmd:"" group:"maintenance" help:"Print the custody(1) man page in roff."`
	Help          HelpCmd          `cmd:"" group:"maintenance" help:"Print the help of custody or of one command (the same as --help)."`
	Version       VersionCmd       `cmd:"" group:"maintenance" help:"Print the version (the same as --version)."`
}

// App is what a command's Run receives: the parsed globals, the output
// view and lazily built dependencies.
type App struct {
	Globals *Globals
	Stdout  io.Writer
	Stderr  io.Writer
	Ctx     context.Context
	Command string
	// Dir is the directory custody acts from.
	Dir string

	result any
	human  func(w io.Writer)
	// code, when set, overrides the exit code (plan --detailed-exitcode).
	code *int
	// resumePending is set when the automatic resume left something
	// refused: the command then exits 3 even if its own work was done.
	resumePending bool
	// tolerateConfig lets env go on with the default configuration when
	// custody.toml is invalid, keeping the error in configErr (doctor).
	tolerateConfig bool
	configErr      error
	// args are the command line as given, for retries that repeat it.
	args []string
	// statePath is the state file's path once the repository is known.
	statePath string
	// access is what the command declared it does to the repository
	// (access.go), read once before it runs.
	access access
	// getenv reads the environment (nil: os.Getenv); tests set it.
	getenv func(string) string
	// lookupEnv reads the environment telling a variable set empty from
	// one unset (nil: os.LookupEnv), for the pager; tests set it.
	lookupEnv func(string) (string, bool)
	// built is the environment env built, once it has: after an
	// interrupt, what the command committed and left is read from its
	// store.
	built *steps.Env
	// remembered says the repository was recorded in the user-level index
	// of repositories by this command already (rememberRepository).
	remembered bool
	// pendingNote, for a command that only reads, names the interrupted
	// intents it leaves for custody resume; said on stderr when the
	// command succeeds (a failure is its one paragraph).
	pendingNote string
}

// exitSignal carries kong's exit request out of Parse.
type exitSignal struct{ code int }

// run parses args, runs the command and returns the exit code. It never
// panics on bad input: usage errors, refusals and store errors all become
// exit 1 with one error paragraph (or envelope with --json). It is the
// process's one command: the interrupt handling it sets up lasts until the
// process exits.
func run(args []string, stdout, stderr io.Writer) (code int) {
	jsonOut := false
	for _, a := range args {
		if a == "--json" {
			jsonOut = true
		}
		if a == "--" {
			break
		}
	}
	var cli CLI
	app := &App{Globals: &cli.Globals, Stdout: stdout, Stderr: stderr, args: args}
	defer func() {
		if p := recover(); p != nil {
			if ex, ok := p.(exitSignal); ok {
				code = ex.code
				return
			}
			panic(p)
		}
	}()
	var runCommand func() error
	if c, g, ok := fastHook(args); ok {
		// A lease hook runs Go code on one thread at a time: with one P
		// the runtime starts no thread to run the goroutines the start
		// makes (the signal loop, the collector's helpers), and an agent
		// runs this on every prompt and tool call. Blocking system calls
		// still get threads of their own, as with any GOMAXPROCS.
		runtime.GOMAXPROCS(1)
		cli.Globals = g
		app.Command = "hook " + args[1]
		app.access = accessOf(c)
		runCommand = func() error { return c.Run(app) }
	} else {
		model := commandModel(args)
		parser, err := kong.New(model, parserOptions(stdout, stderr)...)
		if err != nil {
			return app.fail(jsonOut, "", fmt.Errorf("internal: %w", err))
		}
		kctx, err := parser.Parse(args)
		cli.Globals = modelGlobals(model)
		if err != nil {
			return app.fail(jsonOut, "", &usageError{err})
		}
		app.Command = commandName(kctx.Command())
		app.access = selectedAccess(kctx)
		runCommand = func() error { return kctx.Run(app) }
	}
	// SIGHUP (the terminal closed) is an interrupt like Ctrl-C and SIGTERM:
	// the command stops starting work, lets what runs end within seconds
	// and reports what it did. The registry lock waits --lock-timeout.
	// The registration lasts until the process exits, right after run
	// returns: undoing it would cost a round trip per signal to the
	// runtime's signal thread (two thread handoffs each) on every hook an
	// agent runs, and change nothing a command does.
	ctx := watchInterrupts()
	app.Ctx = gitfiles.WithLockTimeout(ctx, cli.LockTimeout)
	app.Dir = cli.Chdir
	if app.Dir == "" {
		app.Dir, _ = os.Getwd()
	}
	if fi, err := os.Stat(app.Dir); err != nil || !fi.IsDir() {
		return app.fail(cli.JSON, app.Command, machine.NoDirectoryRefusal(app.Dir))
	}
	err := runCommand()
	if sig, ok := interruptedBy(ctx); ok && interruptExits(app.Command) {
		return app.interrupted(sig, err)
	}
	if err != nil {
		return app.fail(cli.JSON, app.Command, err)
	}
	return app.succeed()
}

// commandName drops kong's argument placeholders: "new <name>" → "new".
func commandName(c string) string {
	var words []string
	for _, w := range strings.Fields(c) {
		if !strings.HasPrefix(w, "<") {
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}

// path resolves a file argument against the directory custody acts from
// (-C), as git -C does.
func (a *App) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.Dir, p)
}

// usageError is a command line kong could not parse.
type usageError struct{ err error }

func (u *usageError) Error() string { return u.err.Error() }
func (u *usageError) Unwrap() error { return u.err }

// done records a command's result and its human rendering. Whether
// something was refused or is pending (exit 3) is the result's to say
// (machine.Pender), decided in exitCode.
func (a *App) done(result any, human func(w io.Writer)) {
	a.result, a.human = result, human
}

// exit overrides the exit code of a successful command (plan
// --detailed-exitcode).
func (a *App) exit(code int) { a.code = &code }

// git is the git custody runs for this command: every command line on
// stderr with --debug, each remote bounded by --remote-timeout, each
// observation by --observe-timeout.
func (a *App) git() *hostio.Git {
	var trace io.Writer
	if a.Globals.Debug {
		trace = a.Stderr
	}
	g := custody.NewGit(nil, trace)
	g.RemoteTimeout = a.Globals.RemoteTimeout
	g.ObserveTimeout = a.Globals.ObserveTimeout
	return g
}

// env builds the workflow environment: the repository identified exactly
// and its store opened with the lock timeout. create makes the store if it
// does not exist yet (mutating commands).
func (a *App) env(create bool) (*steps.Env, error) {
	g := a.git()
	repo, err := gitfiles.Discover(a.Ctx, g, a.Dir)
	if err != nil {
		return nil, err
	}
	cfg, src, err := observe.ReadConfig(repo)
	if err != nil && a.tolerateConfig && errors.Is(err, observe.ErrConfig) {
		// doctor reports a broken configuration as a problem; it reads the
		// state with the defaults.
		a.configErr = err
		cfg, err = observe.ParseConfig("", nil, filepath.Base(repo.MainCheckout))
	}
	if err != nil {
		return nil, err
	}
	site, err := custody.SiteOf(repo, cfg, src)
	if err != nil {
		return nil, err
	}
	a.statePath = site.StatePath()
	readOnly := a.access == reads
	if !readOnly {
		// Asked before anything is written (the resume of mutatingEnv
		// included), so a command that writes is refused whole.
		if err := writable.Check(filepath.Dir(a.statePath)); err != nil {
			return nil, &refusedUnwritable{err: err, command: a.Command}
		}
	} else if create {
		return nil, fmt.Errorf("internal: custody %s declares that it only reads, and asked to create the state file", a.Command)
	}
	existed := hostio.Lstat(a.statePath).State != machine.PathAbsent
	st, err := store.OpenWith(a.Ctx, a.statePath, store.Options{Timeout: a.Globals.LockTimeout, Create: create, ReadOnly: readOnly})
	if err != nil {
		return nil, err
	}
	if create && !existed {
		// The first command that made this repository's state file
		// records it for list --all-repos, as init does.
		a.rememberRepository(repo, false)
	}
	if up := st.Upgraded(); up != nil {
		// Said on stderr whatever the output mode: stdout keeps exactly
		// the command's own output (one envelope with --json).
		fmt.Fprintf(a.Stderr, "custody: upgraded %s from schema %d to %d; the file as it was is kept at %s\n", st.Path(), up.From, up.To, up.Backup)
	}
	e := custody.NewEnv(site, st, custody.Wiring{Git: g, Clock: custody.ClockFunc(clock()),
		Wait: a.Globals.LockTimeout, Progress: a.progress(), Getenv: a.getenv})
	if !(create && !existed) {
		a.rememberMirrored(repo, st, e.UserLedger)
	}
	a.built = e
	if readOnly {
		// Derived data (the content hash cache, objects a proof needs) is
		// written only where the file system lets it be.
		e.Unwritable = writable.Check(filepath.Dir(a.statePath))
		g.NoFetch = e.Unwritable
		a.pendingNote = pendingNote(a.Ctx, e, a.Command)
	}
	return e, nil
}

// envWithoutState is the environment of a command that only reads git
// and the file system, for a repository custody has no state in yet: no
// store (Env.Store is nil), nothing written.
func (a *App) envWithoutState() (*steps.Env, error) {
	if a.access != reads {
		return nil, fmt.Errorf("internal: custody %s writes, and asked for no state", a.Command)
	}
	g := a.git()
	repo, err := gitfiles.Discover(a.Ctx, g, a.Dir)
	if err != nil {
		return nil, err
	}
	cfg, src, err := observe.ReadConfig(repo)
	if err != nil {
		return nil, err
	}
	site, err := custody.SiteOf(repo, cfg, src)
	if err != nil {
		return nil, err
	}
	g.NoFetch = errors.New("custody has no state in this repository yet")
	e := custody.NewEnv(site, nil, custody.Wiring{Git: g, Clock: custody.ClockFunc(clock()), Actor: "custody",
		Wait: a.Globals.LockTimeout, Progress: a.progress(), Getenv: a.getenv})
	e.Unwritable = g.NoFetch
	a.built = e
	return e, nil
}

// pendingNote is the line that says which records carry an intent their
// holder left behind ("" when none do): a command that only reads does not
// resume them, and the next command that writes (or custody resume)
// settles them.
func pendingNote(ctx context.Context, e *steps.Env, command string) string {
	pending, err := steps.Interrupted(ctx, e)
	if err != nil || len(pending) == 0 {
		return ""
	}
	names := make([]string, len(pending))
	for i, p := range pending {
		names[i] = fmt.Sprintf("%s (%s %s)", p.ID, p.Intent, p.Kind)
	}
	return fmt.Sprintf("custody: %d interrupted intent(s) wait for custody resume: %s; custody %s only reads, so it leaves them as they are\n",
		len(pending), strings.Join(names, ", "), command)
}

// refuseUnwritable refuses a command that writes in dir (or would make
// it) before it writes anything, when the file system there cannot be
// written: for the commands that write outside the state directory, which
// env checks for every command that writes.
func (a *App) refuseUnwritable(dir string) error {
	if err := writable.Check(dir); err != nil {
		return &refusedUnwritable{err: err, command: a.Command}
	}
	return nil
}

// mutatingEnv builds the environment and first resumes every interrupted
// intent, as every mutating command must.
func (a *App) mutatingEnv() (*steps.Env, error) {
	if a.access == reads {
		return nil, fmt.Errorf("internal: custody %s declares that it only reads, and asked to resume and write", a.Command)
	}
	e, err := a.env(true)
	if err != nil {
		return nil, err
	}
	res, err := steps.Resume(a.Ctx, e)
	if err != nil {
		return nil, err
	}
	a.resumePending = res.LeftForUs()
	if !a.Globals.JSON {
		for _, it := range res.Items {
			if it.Progress != nil {
				// Another custody's live work on this host: its own to
				// report, nothing for this command to say or retry.
				continue
			}
			if it.Refusal != nil {
				writeRefusal(a.Stderr, fmt.Sprintf("resumed %s: %s", it.ID, it.Outcome), it.Refusal)
				continue
			}
			fmt.Fprintf(a.Stderr, "resumed %s: %s\n", it.ID, it.Outcome)
		}
	}
	return e, nil
}

// rememberMirrored records repo in the index of repositories when the
// user-level ledger of resources holds entries of its id: a repository
// moved to a new place is then found there by custody resource gc
// --gone-repos, which keeps its resources (decision 0256). It costs one
// lstat when the ledger is empty, and never fails the command.
func (a *App) rememberMirrored(repo hostio.Repo, st *store.Store, ledger string) {
	if ledger == "" || hostio.Lstat(ledger).State != machine.PathPresent {
		return
	}
	id, err := st.RepositoryID()
	if err != nil || id == "" || id != filepath.Base(id) || hostio.Lstat(filepath.Join(ledger, id)).State != machine.PathPresent {
		return
	}
	a.rememberRepository(repo, false)
}

// rememberRepository records repo in the user-level index of repositories
// that list --all-repos reads (steps.RememberRepository), once per
// command. It never fails the command. When say is set (init), what keeps
// the repository from being recorded is said on stderr, an index there is
// no place for (neither XDG_STATE_HOME nor HOME set) included; the first
// command that makes a state file records it silently, as well as it can.
func (a *App) rememberRepository(repo hostio.Repo, say bool) {
	path, fromHome, err := steps.RepositoryIndexPath(a.getenv)
	if err == nil {
		if a.remembered {
			return
		}
		a.remembered = true
		err = steps.RememberRepository(path, fromHome, repo, clock()())
	}
	if err != nil && say {
		fmt.Fprintf(a.Stderr, "custody: %s is not recorded for custody list --all-repos: %s\n", machine.EscapeControl(repo.MainCheckout), machine.EscapeControl(err.Error()))
	}
}
