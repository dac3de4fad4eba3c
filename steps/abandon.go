package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
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
		return Outcome{ID: id, Outcome: machine.OutcomeRefused, Refusal: machine.NoRecordRefusal(id)}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	refuse := func(r *machine.Refusal) (Outcome, error) {
		return Outcome{ID: id, Outcome: machine.OutcomeRefused, State: rec.State, Refusal: r}, nil
	}
	if rec.State == machine.StateTombstoned {
		return Outcome{ID: id, Outcome: machine.OutcomeAlreadyDone, State: rec.State}, nil
	}
	head := rec.EffectiveHead()
	if commit != head {
		// A prefix custody printed (machine.Abbrev) names the commit when
		// it names nothing else git holds; the outcome says it whole.
		switch lower := strings.ToLower(commit); {
		case machine.IsCommitPrefix(commit, head):
		case lower != "" && machine.IsFullCommit(head) && strings.HasPrefix(head, lower):
			return refuse(machine.AbandonShortCommitRefusal(id, rec.Path, commit, head))
		default:
			return refuse(machine.AbandonNotLastCommitRefusal(id, rec.Path, commit, head))
		}
		others, err := otherObjects(ctx, e, strings.ToLower(commit), head)
		if err != nil {
			return Outcome{}, err
		}
		if len(others) > 0 {
			return refuse(machine.AbandonAmbiguousCommitRefusal(id, rec.Path, commit, head, others))
		}
		commit = head
	}
	obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{})
	if err != nil {
		return Outcome{}, err
	}
	if obs.PathState != machine.PathAbsent || obs.Registered || obs.AdminPresent {
		return refuse(machine.AbandonTreeNotGoneRefusal(id, rec.Path, obs.PathState, obs.Registered || obs.AdminPresent))
	}
	view, err := proof.Advertise(ctx, e.Git, e.Repo)
	if err != nil {
		return Outcome{}, err
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
			return refuse(machine.AbandonHeldByRefsRefusal(rec.Path, commit, refs, view.Evidence()))
		}
	}
	if len(view.Failures) > 0 {
		return refuse(machine.AbandonRemoteUnavailableRefusal(rec.Path, commit, view.Failures[0]))
	}
	for _, tip := range view.Tips {
		if tip.Commit == commit || tip.Target == commit {
			return refuse(machine.AbandonAdvertisedRefusal(rec.Path, commit, tip.Remote, tip.Ref))
		}
	}
	if gone == nil {
		p, err := proof.Prove(ctx, e.Git, e.Repo, commit, view)
		if err != nil {
			return refuse(machine.AbandonProofFailedRefusal(rec.Path, commit, err))
		}
		if p != nil {
			return refuse(machine.AbandonProvenRefusal(rec.Path, commit, *p))
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
	return Outcome{ID: id, Outcome: machine.OutcomeAbandoned, State: next.State, Commit: commit}, nil
}

// otherObjects lists the objects git holds, other than head, whose ids
// begin with prefix (git rev-parse --disambiguate).
func otherObjects(ctx context.Context, e *Env, prefix, head string) ([]string, error) {
	out, err := e.Git.Observe(ctx, e.Repo.MainCheckout, "rev-parse", "--disambiguate="+prefix)
	if err != nil {
		var exit *hostio.ExitError
		if errors.As(err, &exit) && len(strings.TrimSpace(string(out))) == 0 {
			return nil, nil // git holds no object the prefix names
		}
		return nil, fmt.Errorf("list the objects %s names: %w", prefix, err)
	}
	var others []string
	for _, o := range strings.Fields(string(out)) {
		if o != head {
			others = append(others, o)
		}
	}
	return others, nil
}
