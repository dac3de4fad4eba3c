package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/store"
)

// Abandon tombstones the record id whose tree is gone and whose last
// commit is lost, on a person's word that it is: commit must be exactly
// the record's last known HEAD, and git must confirm that nothing holds
// it — no ref of this repository contains it and no remote that answers
// advertises a ref containing it (every remote must answer). Abandon
// deletes nothing: it only ends a record no proof can ever settle, and the
// journal marks it as the one outcome without a proof. A tree still on
// disk, a commit something holds, or a remote that did not answer is a
// refusal, and the record is left as it was.
func Abandon(ctx context.Context, e *Env, id, commit string) (Outcome, error) {
	rec, err := e.Store.Get(id)
	if errors.Is(err, store.ErrNotFound) {
		return Outcome{ID: id, Outcome: machine.OutcomeRefused, Refusal: &machine.Refusal{Code: machine.CodeUnknownRecord, Retry: "custody list",
			Message: fmt.Sprintf("no worktree record %q in this repository", id)}}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	refuse := func(code machine.Code, retry, format string, args ...any) (Outcome, error) {
		return Outcome{ID: id, Outcome: machine.OutcomeRefused, State: rec.State, Refusal: &machine.Refusal{Code: code, Path: rec.Path, Retry: retry,
			Message: fmt.Sprintf(format, args...) + "; nothing was changed"}}, nil
	}
	if rec.State == machine.StateTombstoned {
		return Outcome{ID: id, Outcome: machine.OutcomeAlreadyDone, State: rec.State}, nil
	}
	head := rec.EffectiveHead()
	if commit != head {
		return refuse(machine.CodeGuardFailed, machine.CommandOn([]string{"custody", "show"}, id),
			"%s is not %s's last commit (%s): abandon acknowledges exactly the commit that is lost", machine.QuoteArg(commit), id, head)
	}
	obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{})
	if err != nil {
		return Outcome{}, err
	}
	if obs.PathState != machine.PathAbsent || obs.Registered || obs.AdminPresent {
		return refuse(machine.CodeWrongState, "custody plan",
			"%s's tree is not gone (path %s%s): abandon ends only a record whose tree no longer exists; plan decides what may happen to a tree", id, obs.PathState, map[bool]string{true: ", registered with git"}[obs.Registered || obs.AdminPresent])
	}
	// A commit git no longer has is held by no ref here; one it has must
	// be held by none.
	_, gone := e.Git.Observe(ctx, e.Repo.MainCheckout, "cat-file", "-e", commit+"^{commit}")
	if gone == nil {
		out, err := e.Git.Observe(ctx, e.Repo.MainCheckout, "for-each-ref", "--contains", commit, "--format=%(refname)")
		if err != nil {
			return Outcome{}, fmt.Errorf("check which refs hold %s: %w", commit, err)
		}
		if refs := strings.Fields(string(out)); len(refs) > 0 {
			return refuse(machine.CodeGuardFailed, "custody plan",
				"%s is not lost: %s holds it", commit, strings.Join(refs, ", "))
		}
	}
	view, err := proof.Advertise(ctx, e.Git, e.Repo)
	if err != nil {
		return Outcome{}, err
	}
	if len(view.Failures) > 0 {
		f := view.Failures[0]
		return refuse(machine.CodeRemoteUnavailable, "git ls-remote --refs "+machine.QuoteArg(f.Remote),
			"remote %s did not answer (%s), so whether it holds %s is unknown", f.Remote, f.Error, commit)
	}
	for _, tip := range view.Tips {
		if tip.Commit == commit || tip.Target == commit {
			return refuse(machine.CodeGuardFailed, "custody plan", "%s is not lost: remote %s advertises it as %s", commit, tip.Remote, tip.Ref)
		}
	}
	if gone == nil {
		p, err := proof.Prove(ctx, e.Git, e.Repo, commit, view)
		if err != nil {
			return refuse(machine.CodeProofFailed, "custody plan", "whether a remote holds %s cannot be told (%v)", commit, err)
		}
		if p != nil {
			return refuse(machine.CodeGuardFailed, "custody plan", "%s is not lost: %s %s holds it (%s)", commit, p.Remote, p.Ref, p.Kind)
		}
	}
	next, err := e.fire(ctx, rec, machine.TriggerAbandon, machine.Firing{Obs: obs, Acknowledged: commit, AckConfirmed: true}, "abandoned: "+commit)
	var r *machine.Refusal
	if errors.As(err, &r) {
		return Outcome{ID: id, Outcome: machine.OutcomeRefused, State: rec.State, Refusal: r}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{ID: id, Outcome: machine.OutcomeAbandoned, State: next.State}, nil
}
