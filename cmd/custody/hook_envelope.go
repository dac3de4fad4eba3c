package main

import (
	"errors"
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

// hookDone prints env on stdout (and a refusal or error on stderr) and
// makes the command exit 0, whatever --json says: a hook's output is its
// envelope.
func (a *App) hookDone(env *hookEnvelope) {
	env.HookProtocol = HookProtocol
	if env.Outcome == "" {
		env.Outcome = "error"
	}
	if env.Logged == "" && (env.Error != nil || env.Refusal != nil && env.Refusal.Code != machine.CodeNotInWorktree && env.Outcome != string(machine.OutcomeKept)) {
		env.Logged = "stderr"
	}
	subject := machine.Command("custody", "hook", env.Hook)
	if env.Refusal != nil {
		writeRefusal(a.Stderr, subject, env.Refusal)
	}
	if b := env.Error; b != nil {
		writeRefusal(a.Stderr, subject, &machine.Refusal{Code: machine.Code(b.Code), Message: b.Message, Retry: b.Retry})
	}
	a.Globals.JSON = false
	a.done(nil, func(w io.Writer) {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(env)
	})
	a.exit(exitOK)
}
