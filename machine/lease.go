package machine

import (
	"fmt"
	"time"
)

// LeaseOp is what a session hook asks of a worktree's lease.
type LeaseOp string

// The lease operations, one per session hook.
const (
	// LeaseAcquire takes the lease at the start of a session.
	LeaseAcquire LeaseOp = "acquire"
	// LeaseRenew extends the lease while the session works (a heartbeat);
	// it takes the lease when none is live, so a session outlives a lease
	// that expired while its machine slept.
	LeaseRenew LeaseOp = "renew"
	// LeaseRelease drops the lease at the end of a session.
	LeaseRelease LeaseOp = "release"
)

// LeaseOutcome is what a lease operation did. It is part of the hook
// protocol: a value never changes meaning once released.
type LeaseOutcome string

// The lease outcomes.
const (
	// LeaseAcquired: the session now holds a lease it did not hold.
	LeaseAcquired LeaseOutcome = "acquired"
	// LeaseRenewed: the session's lease was extended.
	LeaseRenewed LeaseOutcome = "renewed"
	// LeaseUnchanged: the session holds a lease renewed recently enough
	// that nothing was written.
	LeaseUnchanged LeaseOutcome = "unchanged"
	// LeaseReleased: the session's lease was dropped.
	LeaseReleased LeaseOutcome = "released"
	// LeaseNotHeld: the session held no live lease to release; nothing
	// was changed.
	LeaseNotHeld LeaseOutcome = "not-held"
	// LeaseRefused: nothing was changed; the refusal says why.
	LeaseRefused LeaseOutcome = "refused"
)

// LeaseRequest is one session hook's request.
type LeaseRequest struct {
	Op LeaseOp
	// Session identifies the session; it becomes the lease's holder.
	Session string
	// Now is the time of the request.
	Now time.Time
	// Duration is how long a lease taken or renewed now lasts.
	Duration time.Duration
}

// LeaseDecision is what DecideLease concluded: the lease to store (Put),
// or to drop (Drop), or nothing to write.
type LeaseDecision struct {
	Outcome LeaseOutcome
	// Put is the lease to store, nil when nothing is stored.
	Put *Lease
	// Drop says the record's lease is to be deleted.
	Drop    bool
	Refusal *Refusal
}

// Writes reports whether the decision changes the store.
func (d LeaseDecision) Writes() bool { return d.Put != nil || d.Drop }

// LeaseRenewEvery is the fraction of a lease's duration that must have
// passed since it was last written before a renewal writes it again:
// agents heartbeat on every prompt and tool call, and a write (an fsync and
// a journal entry) for each would cost them time and bloat the journal.
const LeaseRenewEvery = 10 // a tenth of the duration

// DecideLease decides one lease operation over the record and its current
// lease (nil when none), both as they are inside the transaction that will
// write the decision. A lease is taken or renewed only while the record is
// active and only when no other session holds a live one; it is renewed or
// released only by its holder. DecideLease is pure: time is in req.
func DecideLease(rec Record, cur *Lease, req LeaseRequest) LeaseDecision {
	held := cur != nil && cur.Holder == req.Session
	liveOther := cur.Live(req.Now) && !held
	if req.Op == LeaseRelease {
		switch {
		case held:
			return LeaseDecision{Outcome: LeaseReleased, Drop: true}
		case liveOther:
			return LeaseDecision{Outcome: LeaseRefused, Refusal: leaseHeld(rec, cur, req)}
		}
		return LeaseDecision{Outcome: LeaseNotHeld}
	}
	if rec.State != StateActive {
		r := refuse(CodeWrongState, rec.Path, CommandOn([]string{"custody", "show"}, rec.ID),
			"%s is %s: a session takes a lease only on an active tree (%s makes it active again)", rec.ID, rec.State, CommandOn([]string{"custody", "reopen"}, rec.ID))
		if rec.State == StateFinished {
			r.Retry = CommandOn([]string{"custody", "reopen"}, rec.ID)
		}
		return LeaseDecision{Outcome: LeaseRefused, Refusal: &r}
	}
	if liveOther {
		return LeaseDecision{Outcome: LeaseRefused, Refusal: leaseHeld(rec, cur, req)}
	}
	next := &Lease{Record: rec.ID, Holder: req.Session, Expires: req.Now.Add(req.Duration).UTC()}
	if !held || !cur.Live(req.Now) {
		return LeaseDecision{Outcome: LeaseAcquired, Put: next}
	}
	// Held and live: write only once a tenth of the duration has passed
	// since the last write, and never shorten the lease.
	if !cur.Expires.Before(next.Expires.Add(-req.Duration / LeaseRenewEvery)) {
		return LeaseDecision{Outcome: LeaseUnchanged}
	}
	return LeaseDecision{Outcome: LeaseRenewed, Put: next}
}

// leaseHeld is the refusal of a session asking about a lease another
// session holds.
func leaseHeld(rec Record, cur *Lease, req LeaseRequest) *Refusal {
	r := refuse(CodeLeaseHeld, rec.Path, CommandOn([]string{"custody", "show"}, rec.ID),
		"%s is leased by session %s until %s; session %s %s nothing", rec.ID, EscapeControl(cur.Holder),
		cur.Expires.UTC().Format(time.RFC3339), EscapeControl(req.Session), map[LeaseOp]string{
			LeaseAcquire: "takes", LeaseRenew: "renews", LeaseRelease: "releases"}[req.Op])
	return &r
}

// ValidSession checks a session id a hook was given: present, at most 256
// bytes, printable.
func ValidSession(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("no session id (session_id in the payload, or --session)")
	case len(s) > 256:
		return fmt.Errorf("the session id is %d bytes, more than 256", len(s))
	case EscapeControl(s) != s:
		return fmt.Errorf("the session id %s holds control characters", EscapeControl(s))
	}
	return nil
}
