package steps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/store"
)

// RelocateResult is what Relocate did with one worktree record.
type RelocateResult struct {
	ID      string          `json:"id"`
	Outcome machine.Outcome `json:"outcome"`
	// From is where the tree was; To is where it is to be (and, when
	// relocated or already-done, is).
	From string `json:"from"`
	To   string `json:"to,omitempty"`
	// Head is the commit the tree held, unchanged by the move.
	Head    string           `json:"head,omitempty"`
	State   machine.State    `json:"state,omitempty"`
	Refusal *machine.Refusal `json:"refusal,omitempty"`
}

// Pending reports whether the relocation was refused or left unfinished
// (exit 3).
func (r RelocateResult) Pending() bool { return machine.ItemPending(r.Outcome, r.Refusal) }

// Relocate moves the active worktree record id to dst ("" for the managed
// root's <root>/<id>; otherwise a path, made absolute against the current
// directory) through the worktree machine's relocating state (DESIGN §4):
// a fresh observation of the tree and of the destination; the guard (the
// tree clean, unlocked, unleased and used by no process; the destination
// free, on a real path and inside no other tree); the relocation intent
// {src, dst, HEAD} committed; a non-forced `git worktree move`; then git
// must register exactly dst under the record's admin key with HEAD
// unchanged, and lstat must find nothing at src, before relocated fires,
// which updates the record's path, clears the intent and journals it in
// one transaction. A move git refused steps the record back (the tree is
// where it was) and is a relocation-failed refusal; what fits neither is
// left carrying its intent for resume, which settles it by the same rules.
//
// A record already at dst is already-done. Refusals are returned in the
// result with nothing changed; errors are failures to observe or commit.
// Migration's adopt-and-move calls it too.
func Relocate(ctx context.Context, e *Env, id, dst string) (RelocateResult, error) {
	rec, err := e.Store.Get(id)
	if errors.Is(err, store.ErrNotFound) {
		return RelocateResult{ID: id, Outcome: machine.OutcomeRefused, Refusal: &machine.Refusal{Code: machine.CodeUnknownRecord, Retry: "custody list",
			Message: fmt.Sprintf("no worktree record %q in this repository", id)}}, nil
	}
	if err != nil {
		return RelocateResult{}, err
	}
	res := RelocateResult{ID: id, From: rec.Path, State: rec.State}
	refused := func(r *machine.Refusal) (RelocateResult, error) {
		res.Outcome, res.Refusal = machine.OutcomeRefused, r
		return res, nil
	}
	target, ref, err := relocationTarget(ctx, e, rec, dst)
	if err != nil {
		return RelocateResult{}, err
	}
	if ref != nil {
		return refused(ref)
	}
	res.To = target
	if target == rec.Path && rec.Intent == nil && rec.State == machine.StateActive {
		res.Outcome, res.Head = machine.OutcomeAlreadyDone, rec.EffectiveHead()
		return res, nil
	}
	scope, err := e.assessScope(nil)
	if err != nil {
		return RelocateResult{}, err
	}
	scope.Proof = false
	obs, _, err := e.observe(ctx, rec, scope)
	if err != nil {
		return RelocateResult{}, err
	}
	at := rec
	at.Path = target
	dest, _, err := e.observe(ctx, at, observe.Scope{})
	if err != nil {
		return RelocateResult{}, err
	}
	retry := "custody relocate " + machine.QuoteArg(id)
	if dst != "" {
		retry += " --to " + machine.QuoteArg(target)
	}
	if ref := machine.RelocationBlock(rec, obs, dest, e.Now().UTC(), retry); ref != nil {
		return refused(ref)
	}
	res.Head = obs.Head
	key := rec.AdminKey
	if key == "" {
		key = rec.ID
	}
	intent := &machine.Intent{Kind: machine.IntentRelocation, Path: rec.Path, Destination: target, Branch: rec.Branch,
		Commit: obs.Head, Dev: obs.Dev, Ino: obs.Ino, AdminKey: key, Holder: e.Holder, At: e.Now().UTC()}
	moving, err := e.fire(ctx, rec, machine.TriggerRelocate, machine.Firing{Obs: obs, Intent: intent, Dest: &dest}, "relocation intent")
	var r *machine.Refusal
	if errors.As(err, &r) {
		return refused(r)
	}
	if err != nil {
		return RelocateResult{}, err
	}
	failpoint("relocate/after-intent")
	pause("relocate/before-move")
	var moveErr error
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		moveErr = err
	} else if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		// Something appeared there since the observation: git would move
		// the tree into it, so the move is not made.
		moveErr = fmt.Errorf("the destination appeared after it was observed (lstat: %v)", err)
	} else {
		_, moveErr = observe.ChangeRegistry(ctx, e.Git, e.Repo, "worktree", "move", rec.Path, target)
	}
	failpoint("relocate/after-move")
	if moveErr != nil && ctx.Err() != nil {
		// Interrupted while git moved the tree: where it is is not known
		// yet. The intent stays; resume finishes or steps back.
		res.Outcome, res.State = machine.OutcomeFailed, moving.State
		res.Refusal = &machine.Refusal{Code: machine.CodeIntentPending, Path: rec.Path, Retry: "custody resume",
			Message: fmt.Sprintf("interrupted while git worktree move was moving %s to %s (%v); its relocation intent stays, and custody resume finishes or steps back", rec.Path, target, moveErr)}
		return res, nil
	}
	items, err := worktreeWorkflow().resumeOne(ctx, e, moving, true)
	if err != nil {
		return RelocateResult{}, err
	}
	now, err := e.Store.Get(id)
	if err != nil {
		return RelocateResult{}, err
	}
	res.State = now.State
	it := ResumeItem{Outcome: machine.OutcomeRefused}
	if len(items) > 0 {
		it = items[0]
	}
	switch {
	case it.Outcome == machine.OutcomeRelocated:
		res.Outcome = machine.OutcomeRelocated
	case it.Outcome == machine.OutcomeSteppedBack:
		why := "git reported no error, yet the tree did not move"
		if moveErr != nil {
			why = moveErr.Error()
		}
		return refused(&machine.Refusal{Code: machine.CodeRelocationFailed, Path: rec.Path, Retry: "git worktree list --porcelain",
			Message: machine.EscapeControl(fmt.Sprintf("git worktree move did not move %s to %s (%s); the tree stays where it was and %s is active there", rec.Path, target, why, id))})
	default:
		res.Outcome, res.Refusal = machine.OutcomeRefused, it.Refusal
		if res.Refusal == nil {
			res.Refusal = &machine.Refusal{Code: machine.CodeResumeUnmatched, Path: rec.Path, Retry: "custody show " + machine.QuoteArg(id),
				Message: fmt.Sprintf("after git worktree move, %s was left %s; its relocation intent stays for custody resume", id, now.State)}
		}
	}
	return res, nil
}
