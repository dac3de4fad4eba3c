package machine

import "fmt"

// Next returns the record after rec takes trigger t to state `to` over f. It
// is pure: the store persists its result. Intent-carrying triggers attach
// f.Intent; completing triggers clear the intent and record evidence.
func Next(rec Record, to State, t Trigger, f Firing) Record {
	n := rec
	if rec.Intent != nil {
		in := *rec.Intent
		n.Intent = &in
	}
	n.State = to
	n.Rev = rec.Rev + 1
	n.UpdatedAt = f.Now
	switch t {
	case TriggerCreate:
		n.CreatedAt = f.Now
		n.Kind = KindWorktree
		n.Intent = copyIntent(f.Intent)
	case TriggerAdopt:
		n.CreatedAt = f.Now
		n.Kind = KindWorktree
		n.Dev, n.Ino = f.Obs.Dev, f.Obs.Ino
		n.Intent = nil
	case TriggerRelocate, TriggerRemove, TriggerSettle:
		n.Intent = copyIntent(f.Intent)
		if t != TriggerRelocate {
			n.Evidence.PlanID = f.Intent.PlanID
		}
	case TriggerCreated:
		n.Intent = nil
		n.Dev, n.Ino = f.Obs.Dev, f.Obs.Ino
		n.AdminKey = f.Obs.AdminKey
	case TriggerFinish, TriggerExpire:
		n.Evidence.FinalHead = f.Obs.Head
		if t == TriggerFinish && f.Obs.PathState == PathPresent && f.Obs.Dev != 0 {
			// A person finishing the tree vouches for the directory now at
			// its path (restored by copy, it has a new inode).
			n.Dev, n.Ino = f.Obs.Dev, f.Obs.Ino
		}
		n.Evidence.FinishedAt = f.Now
	case TriggerReopen:
		n.Evidence.FinalHead = ""
	case TriggerRelocated:
		if rec.Intent != nil {
			n.Path = rec.Intent.Destination
		}
		if f.Dest != nil {
			n.Dev, n.Ino = f.Dest.Dev, f.Dest.Ino
		}
		n.Intent = nil
	case TriggerRemoved:
		if rec.Intent != nil {
			n.Evidence.Proof = rec.Intent.Proof
		}
		n.Evidence.RemovedAt = f.Now
		n.Evidence.BranchOutcome = f.Evidence.BranchOutcome
		n.Evidence.BranchReason = f.Evidence.BranchReason
		n.Evidence.Outcome = string(OutcomeRemoved)
		n.Intent = nil
	case TriggerSettled:
		if rec.Intent != nil {
			n.Evidence.Proof = rec.Intent.Proof
			n.Evidence.Settlement = copySettlement(rec.Intent.Settlement)
		}
		n.Evidence.RemovedAt = f.Now
		n.Evidence.BranchOutcome = f.Evidence.BranchOutcome
		n.Evidence.BranchReason = f.Evidence.BranchReason
		n.Evidence.Outcome = string(OutcomeSettled)
		n.Intent = nil
	case TriggerTakeOver:
		n.Intent = copyIntent(f.Intent)
	case TriggerRetreat, TriggerStepBack:
		n.Intent = nil
	case TriggerDiscard:
		n.Evidence.Outcome = string(OutcomeDiscarded)
		n.Evidence.BranchOutcome = f.Evidence.BranchOutcome
		n.Evidence.BranchReason = f.Evidence.BranchReason
		n.Intent = nil
	case TriggerAbandon:
		n.Evidence.Outcome = "abandoned: " + f.Acknowledged
		n.Intent = nil
	default:
		panic(fmt.Sprintf("machine: no record change declared for trigger %q", t))
	}
	return n
}

func copyIntent(in *Intent) *Intent {
	if in == nil {
		return nil
	}
	c := *in
	c.Settlement = copySettlement(in.Settlement)
	return &c
}

func copySettlement(s *Settlement) *Settlement {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}
