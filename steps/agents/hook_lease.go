package agents

import (
	"context"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// HookLease is one session hook's lease operation.
type HookLease struct {
	// Hook names the hook (session-start, heartbeat, session-end).
	Hook    string
	Tree    HookTree
	Request machine.LeaseRequest
	Agent   string
	Actor   string
}

// ChangeHookLease acquires, renews or releases the lease of h.Tree's
// record in its repository's state file, in one transaction that opens the
// file once (store.ChangeLeaseAt), waiting at most wait for it. A tree no
// live record names is a not-in-worktree refusal in the result, not an
// error. The store is returned for what the hook writes next (nil when
// the file could not be opened).
func ChangeHookLease(ctx context.Context, h HookLease, wait time.Duration) (store.LeaseResult, *store.Store, *machine.Refusal, error) {
	res, st, err := store.ChangeLeaseAt(ctx, h.Tree.StatePath(), wait, store.LeaseChange{Path: h.Tree.Path, Key: h.Tree.Key,
		Request: h.Request, Hook: h.Hook, Agent: h.Agent, Actor: h.Actor})
	if err != nil {
		return res, st, nil, err
	}
	if !res.Found {
		return res, st, machine.HookNoLeaseRefusal(h.Tree.Path), nil
	}
	return res, st, res.Decision.Refusal, nil
}

// HookError is the journal detail of a hook that failed or was refused.
type HookError struct {
	Hook    string `json:"hook"`
	Session string `json:"session,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
}

// maxHookErrorMessage bounds the message a hook error journals.
const maxHookErrorMessage = 2 << 10

// LogHookError journals a hook's failure or refusal as a "hook-error"
// event about record (which may be ""), so a person can see why an agent's
// tree was not leased.
func LogHookError(st *store.Store, record, actor string, he HookError, at time.Time) error {
	if len(he.Message) > maxHookErrorMessage {
		he.Message = he.Message[:maxHookErrorMessage] + "…"
	}
	return st.AppendEvent(store.Event{Record: record, Kind: machine.KindWorktree, Event: "hook-error", At: at.UTC(), Detail: he, Actor: actor})
}
