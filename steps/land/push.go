package land

import (
	"context"
	"errors"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/failpoint"
)

// remoteTip asks the proving remote, as custody asks it, which commit it
// advertises for ref now ("" for none), and whether that commit holds
// want. answered is false when the remote could not be asked or the
// answer could not be read: then nothing is known.
func remoteTip(ctx context.Context, e *steps.Env, view *proof.RemoteView, remote, ref, want string) (tip string, holds, answered bool) {
	args, ok := view.AskArgs(remote, []string{"ls-remote", "--refs"}, ref)
	if !ok {
		return "", false, false
	}
	b, err := e.Git.Observe(ctx, e.Repo.MainCheckout, args...)
	if err != nil {
		return "", false, false
	}
	refs, err := proof.ParseLsRemote(b)
	if err != nil {
		return "", false, false
	}
	for _, r := range refs {
		if r.Name == ref {
			tip = r.Commit
		}
	}
	if tip == "" || tip == want {
		return tip, tip == want, true
	}
	holds, err = proof.IsAncestor(ctx, e.Git, e.Repo, want, tip)
	if err != nil {
		// A commit this repository does not have: it was not built on
		// what custody pushed, as far as can be known here.
		var ee *hostio.ExitError
		if !errors.As(err, &ee) {
			return tip, false, false
		}
		return tip, false, true
	}
	return tip, holds, true
}

// settle finds what became of intent's push and journals it: landed, or
// land-abandoned with why. Unknown journals nothing: the intent stays, and
// the next run asks again.
func settle(ctx context.Context, e *steps.Env, view *proof.RemoteView, id string, in machine.LandIntent) (machine.LandResumption, string, string, error) {
	tip, holds, answered := remoteTip(ctx, e, view, in.Remote, in.Ref, in.New)
	verdict, why := machine.DecideLandResume(in, answered, tip, holds)
	switch verdict {
	case machine.LandResumeLanded:
		return verdict, tip, "", journal(e, id, machine.EventLanded, in)
	case machine.LandResumeNotLanded:
		ab := in
		ab.Why = why
		return verdict, tip, why, journal(e, id, machine.EventLandAbandoned, ab)
	}
	return verdict, tip, why, nil
}

// push sends in.New to in.Ref of in.Push under a lease on in.Old (the
// push is refused unless the ref is exactly what the integration was
// computed against), then asks the proving remote what it advertises and
// settles the intent by that answer, whatever git said of the push: a push
// that failed after the remote took it has landed, one that git reported
// done but the remote does not show has not. It returns the refusal of a
// landing that did not land (nil when it landed).
func push(ctx context.Context, e *steps.Env, view *proof.RemoteView, id, path string, t machine.LandTarget, in machine.LandIntent, retry string) (*machine.Refusal, error) {
	_, pushErr := e.Git.Mutate(ctx, e.Repo.MainCheckout, "push", "--quiet", "--force-with-lease="+in.Ref+":"+in.Old, "--", in.Push, in.New+":"+in.Ref)
	if pushErr != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	failpoint.At("land/after-push")
	verdict, now, why, err := settle(ctx, e, view, id, in)
	if err != nil {
		return nil, err
	}
	switch verdict {
	case machine.LandResumeLanded:
		return nil, nil
	case machine.LandResumeNotLanded:
		if now != in.Old {
			return machine.LandRacedRefusal(path, t, now, retry), nil
		}
	}
	if pushErr != nil {
		why = pushErr.Error() + "; " + why
	}
	return machine.LandPushRefusal(path, t, in.New, why, retry), nil
}
