package main

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/observe/writable"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// EnvelopeVersion is the version of the --json envelope shape.
const EnvelopeVersion = output.EnvelopeVersion

// Exit codes (documented in docs/exit-codes.md and every command's help).
const (
	exitOK      = output.ExitOK
	exitError   = output.ExitError
	exitPlanned = output.ExitPlanned
	exitPending = output.ExitPending
	// An interrupted command exits 128 + the signal's number
	// (interruptExit).
	exitHangup     = output.ExitHangup
	exitInterrupt  = output.ExitInterrupt
	exitTerminated = output.ExitTerminated
)

// The --json envelopes (package output, where the end-to-end tests read
// them too).
type (
	okEnvelope  = output.OKEnvelope
	errEnvelope = output.ErrEnvelope
	errorBody   = output.ErrorBody
)

// exitCode is the one place a successful command's exit code is decided:
// 3 when its result (machine.Pender) or the resume it ran first left
// something refused or pending, else 0; a command's own override wins
// (plan: 0 whenever it made a plan, 2 for --detailed-exitcode with
// removals planned).
func (a *App) exitCode() int {
	if a.code != nil {
		return *a.code
	}
	if p, ok := a.result.(machine.Pender); ok && p.Pending() || a.resumePending {
		return exitPending
	}
	return exitOK
}

func (a *App) succeed() int {
	code := a.exitCode()
	// Stdout keeps exactly the command's own output (one envelope with
	// --json).
	fmt.Fprint(a.Stderr, a.pendingNote)
	if err := a.print(); err != nil {
		return exitError
	}
	return code
}

// print writes the command's result on stdout: its envelope with --json,
// else its human rendering.
func (a *App) print() error {
	if a.Globals.JSON {
		enc := json.NewEncoder(a.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // retries are shell: keep && and > as they are
		return enc.Encode(okEnvelope{Version: EnvelopeVersion, OK: true, Command: a.Command, Result: a.result})
	}
	if a.human != nil {
		a.human(a.Stdout)
	}
	return nil
}

// describe turns any error into the one-paragraph body users see: a stable
// code, what happened (naming the thing), and the next step.
func describe(err error) errorBody { return describeIn(err, invocation{}) }

// invocation is what describeIn knows of the command that failed, so a
// retry can be the exact command again.
type invocation struct {
	// args are custody's arguments as given (nil when unknown).
	args []string
	// state is the state file's path, once known.
	state string
	// command is the command's name ("plan", "journal export") and access
	// what it declared it does to the repository.
	command string
	access  access
}

// again is the failed command run again, with extra global flags first;
// "custody --help" when the command line is unknown.
func (inv invocation) again(extra ...string) string {
	if inv.args == nil {
		return "custody --help"
	}
	return machine.CommandAgain(inv.args, extra...)
}

// describeIn is describe for the failed invocation inv.
func describeIn(err error, inv invocation) errorBody {
	// Whatever else failed, a write the file system refused is said as
	// such, with the exact path: the first cause to fix.
	if w, ok := writable.Classify(err); ok {
		return unwritableBody(err, w, inv)
	}
	var r *machine.Refusal
	if errors.As(err, &r) {
		msg := r.Message
		if s := err.Error(); !strings.Contains(s, r.Message) {
			msg = s
		} else if pre, _, ok := strings.Cut(s, r.Message); ok && pre != "" {
			msg = pre + r.Message
		}
		return errorBody{Code: string(r.Code), Message: msg, Path: r.Path, Retry: r.Retry}
	}
	var u *usageError
	var te *hostio.TimeoutError
	var linked *safefile.DirError
	var newer *observe.ConfigNewerError
	switch {
	case errors.As(err, &linked):
		return errorBody{Code: string(machine.CodeUnsafeTarget), Path: linked.Path,
			Message: err.Error() + "; nothing was changed. custody keeps its files in the git directory itself: put a real directory there (move what the link names into its place), then run the command again.",
			Retry:   inv.again()}
	case errors.As(err, &u):
		return errorBody{Code: string(machine.CodeUsage), Message: err.Error(), Retry: "custody --help"}
	case errors.Is(err, store.ErrMigrationFailed):
		return errorBody{Code: string(machine.CodeMigrationFailed), Message: err.Error() + ". Keep the file and the copy; report what failed.", Retry: "custody doctor"}
	case errors.Is(err, store.ErrSchemaNewer):
		return errorBody{Code: string(machine.CodeSchemaNewer), Message: err.Error() + ". Upgrade custody to read it.", Retry: "custody --version"}
	case errors.Is(err, store.ErrUnreadable):
		return errorBody{Code: string(machine.CodeStateUnreadable), Message: err.Error() + "; nothing was changed. Fix the file's permissions or filesystem; do not move it aside.", Retry: inv.again()}
	case errors.Is(err, store.ErrCorrupt):
		retry := "custody doctor"
		if inv.state != "" {
			// Moved aside, never deleted: it stays for inspection.
			retry = "mv -n -- " + machine.QuoteArg(inv.state) + " " + machine.QuoteArg(inv.state+".corrupt") + " && custody init"
		}
		return errorBody{Code: string(machine.CodeStateCorrupt), Message: err.Error() + ". Move the file aside (keep it for inspection) and run custody init to start a new one; your worktrees are untouched.", Retry: retry}
	case errors.Is(err, store.ErrLockTimeout):
		msg := err.Error()
		if s := lockHolderSaying(err); s != "" {
			msg += ". " + s + "."
		}
		return errorBody{Code: string(machine.CodeLockTimeout), Message: msg, Retry: inv.again("--lock-timeout", "60s")}
	case errors.Is(err, store.ErrNotInitialized):
		return errorBody{Code: string(machine.CodeNotInitialized), Message: "custody has no state in this repository yet (" + err.Error() + "); nothing was changed.", Retry: "custody init"}
	case errors.Is(err, machine.ErrPlanInvalid):
		return errorBody{Code: string(machine.CodePlanInvalid), Message: err.Error() + "; nothing was done. Make a fresh plan.", Retry: "custody plan -o plan.json"}
	case errors.As(err, &newer):
		r := machine.ConfigNewerRefusal(newer.Path, newer.Version, buildVersion())
		return errorBody{Code: string(r.Code), Message: r.Message, Path: r.Path, Retry: r.Retry}
	case errors.Is(err, steps.ErrConfigChanged):
		return errorBody{Code: string(machine.CodeConfigInvalid), Message: err.Error() + "; run it again to upgrade the file as it is now", Retry: inv.again()}
	case errors.Is(err, observe.ErrConfig):
		return errorBody{Code: string(machine.CodeConfigInvalid), Message: err.Error() + "; nothing was changed. Edit custody.toml to fix it.", Retry: "custody doctor"}
	case errors.As(err, &te) && te.Observing:
		// Of the repository as a whole (its registry, its identity): no
		// one tree to keep, so the command stops, having changed nothing.
		return errorBody{Code: string(machine.CodeObservationTimedOut), Message: err.Error() + "; nothing was changed. If it hangs, find what it waits for (GIT_TRACE=1).",
			Path: te.Cmd.Dir, Retry: inv.again("--observe-timeout", machine.ShortDuration(4*hostio.RoundDeadline(te.After)))}
	case errors.Is(err, store.ErrJournalBroken):
		return errorBody{Code: string(machine.CodeJournalBroken), Message: err.Error(), Retry: "custody doctor"}
	}
	return errorBody{Code: "error", Message: err.Error(), Retry: "custody doctor"}
}

// lockHolderSaying is the sentence that ends the message of a lock
// timeout err: another custody is still running only when the holder is
// known to be custody (store.HolderError); a holder known to be another
// program is to be let finish or ended; of one that could not be
// identified nothing more is said.
func lockHolderSaying(err error) string {
	var h *store.HolderError
	switch {
	case !errors.As(err, &h):
		return ""
	case h.Custody:
		return "Another custody is still running in this repository"
	case strings.HasPrefix(h.Desc, "held by "):
		return "It is not custody: let it finish (or end it), then run the command again"
	}
	return ""
}

// invocation is what describeIn knows of this command.
func (a *App) invocation() invocation {
	return invocation{args: a.args, state: a.statePath, command: a.Command, access: a.access}
}

func (a *App) fail(jsonOut bool, command string, err error) int {
	body := describeIn(err, a.invocation())
	if jsonOut {
		enc := json.NewEncoder(a.Stderr)
		enc.SetEscapeHTML(false) // retries are shell: keep && and > as they are
		_ = enc.Encode(errEnvelope{Version: EnvelopeVersion, OK: false, Error: body})
		return exitError
	}
	prefix := "custody"
	if command != "" {
		prefix += " " + command
	}
	writeRefusal(a.Stderr, prefix, &machine.Refusal{Code: machine.Code(body.Code), Message: body.Message, Retry: body.Retry})
	return exitError
}

// table writes aligned rows, each cell with its control characters and
// bytes that are not UTF-8 escaped (a path holding a newline stays on its
// row).
func table(w io.Writer, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	escaped := make([][]string, len(rows))
	for i, r := range rows {
		escaped[i] = make([]string, len(r))
		for j, c := range r {
			escaped[i][j] = machine.EscapeControl(c)
		}
	}
	rows = escaped
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			if i < len(width) && len(c) > width[i] {
				width[i] = len(c)
			}
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", width[i]-len(c)+2))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// sayf writes a line of human output with every string argument's control
// characters and bytes that are not UTF-8 escaped (machine.EscapeControl),
// so a name it splices stays on its line and the output stays UTF-8. A
// command already quoted for pasting holds none and passes unchanged.
func sayf(w io.Writer, format string, args ...any) {
	for i, a := range args {
		if v := reflect.ValueOf(a); v.Kind() == reflect.String {
			args[i] = machine.EscapeControl(v.String())
		}
	}
	fmt.Fprintf(w, format, args...)
}
