package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps/agents"
	"github.com/custody-sh/custody/store"
)

// HookProtocol is the version of the envelope every hook prints. A change
// of its shape bumps it; agents' hook configurations depend on it.
const HookProtocol = output.HookProtocol

// The envelope every hook prints (package output, where the end-to-end
// tests read it too).
type (
	hookEnvelope     = output.HookEnvelope
	hookEnsureResult = output.HookEnsureResult
)

// refuseHook records r as the hook's outcome: "ignored" when the hook's
// directory holds no tree custody keeps (a session in the main checkout is
// no fault), "refused" otherwise.
func refuseHook(env *hookEnvelope, r *machine.Refusal) {
	env.Refusal = r
	env.OK = r.Code == machine.CodeNotInWorktree
	env.Outcome = string(machine.LeaseRefused)
	if env.OK {
		env.Outcome = string(machine.OutcomeIgnored)
	}
}

// failHook records err: a refusal as refuseHook does, anything else as the
// one-paragraph error body every command prints.
func failHook(env *hookEnvelope, a *App, err error) {
	var r *machine.Refusal
	if errors.As(err, &r) {
		refuseHook(env, r)
		return
	}
	b := describeIn(err, a.invocation())
	env.OK, env.Outcome, env.Error = false, "error", &b
}

// journalHook logs the hook's refusal or error as a hook-error event, when
// journalsRefusal says a refusal is worth it.
func journalHook(env *hookEnvelope, st *store.Store, record, actor string, at time.Time) {
	he := agents.HookError{Hook: env.Hook, Session: env.Session, Path: env.Path}
	switch {
	case env.Error != nil:
		he.Code, he.Message = env.Error.Code, env.Error.Message
	case env.Refusal != nil && journalsRefusal(env):
		he.Code, he.Message = string(env.Refusal.Code), env.Refusal.Message
	default:
		return
	}
	if st != nil && agents.LogHookError(st, record, actor, he, at) == nil {
		env.Logged = "journal"
		return
	}
	env.Logged = "stderr"
}

// journalsRefusal reports whether the hook's refusal goes into the
// journal. Not a tree custody keeps no record of (a session outside
// managed trees is normal), nor a tree worktree-remove kept (plan's
// reasons are its outcome, not a fault), nor a heartbeat's refusal: a
// second session in a leased tree heartbeats on every tool call, and an
// entry (and an fsync) for each would bloat the journal and slow the
// agent; its session-start and session-end refusals are journaled.
func journalsRefusal(env *hookEnvelope) bool {
	r := env.Refusal
	return r != nil && r.Code != machine.CodeNotInWorktree && env.Outcome != string(machine.OutcomeKept) && env.Hook != "heartbeat"
}

// hookDone prints env on stdout (and a refusal or error on stderr, one
// line) and sets the exit code: 0 for every lease hook, whatever --json
// says (a hook's output is its envelope), and for worktree-remove what the
// agent acts on (hookExit).
func (a *App) hookDone(env *hookEnvelope) {
	env.HookProtocol = HookProtocol
	if env.Outcome == "" {
		env.Outcome = "error"
	}
	if env.Logged == "" && (env.Error != nil || env.Refusal != nil && env.Refusal.Code != machine.CodeNotInWorktree && env.Outcome != string(machine.OutcomeKept)) {
		env.Logged = "stderr"
	}
	for _, line := range hookLines(env) {
		fmt.Fprintln(a.Stderr, line)
	}
	a.Globals.JSON = false
	a.done(nil, func(w io.Writer) {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(env)
	})
	a.exit(hookExit(env))
}

// hookLines are what a hook says on stderr, a line each: worktree-remove
// its removeLine, a lease hook its refusal and its error.
func hookLines(env *hookEnvelope) []string {
	if env.Hook == "worktree-remove" {
		if line := removeLine(env); line != "" {
			return []string{line}
		}
		return nil
	}
	subject := machine.Command("custody", "hook", env.Hook)
	var lines []string
	if env.Refusal != nil {
		lines = append(lines, hookLine(subject, env.Refusal))
	}
	if env.Error != nil {
		lines = append(lines, hookLine(subject, errorRefusal(env.Error)))
	}
	return lines
}

// errorRefusal is an error body as the refusal hookLine writes.
func errorRefusal(b *errorBody) *machine.Refusal {
	return &machine.Refusal{Code: machine.Code(b.Code), Message: b.Message, Retry: b.Retry}
}

// hookLine is a hook's refusal or error as one line a person reading the
// agent's log understands: the hook, the code, the reason and the command
// to run next. An agent keeps a hook's stderr in its log, a line each.
func hookLine(subject string, r *machine.Refusal) string {
	return fmt.Sprintf("%s [%s]: %s; next: %s", machine.EscapeControl(subject), r.Code,
		machine.EscapeControl(r.Message), machine.EscapeControl(retryOf(r)))
}

// hookExit is the hook's exit code. The lease hooks exit 0 whatever
// happened: they never block a session. worktree-remove exits 0 only when
// the tree is gone (removed now, settled, or already gone), 1 when it
// failed and 3 when the tree was kept or the request refused: Claude Code
// counts 0 as "removed" and tells the model and the person so, and on any
// other code says it could not remove the tree and leaves it at its path.
func hookExit(env *hookEnvelope) int {
	if env.Hook != "worktree-remove" {
		return exitOK
	}
	switch {
	case env.Error != nil:
		return exitError
	case env.OK:
		return exitOK
	}
	return exitPending
}

// removeLine is worktree-remove's line on stderr: nothing when the tree is
// gone; what kept it and the command that lets it go; or why the request
// was refused or failed.
func removeLine(env *hookEnvelope) string {
	subject := machine.Command("custody", "hook", env.Hook)
	switch {
	case env.OK:
		return ""
	case env.Error != nil:
		return hookLine(subject, errorRefusal(env.Error))
	case env.Refusal != nil && env.Outcome == string(machine.OutcomeKept):
		r := env.Refusal
		more := ""
		if n := len(env.Refusals) - 1; n > 0 {
			more = fmt.Sprintf(" (and %d more reason(s): %s)", n, machine.Command("custody", "show", env.ID))
		}
		return fmt.Sprintf("%s: kept %s at %s [%s]: %s%s; to let it go: %s", machine.EscapeControl(subject), machine.EscapeControl(env.ID),
			machine.EscapeControl(env.Path), r.Code, machine.EscapeControl(r.Message), more, machine.EscapeControl(retryOf(r)))
	case env.Refusal != nil:
		return hookLine(subject, env.Refusal)
	}
	return subject + ": the tree was not removed; run custody plan to see why"
}
