package steps

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/store"
)

// Recovered is one thing custody kept from a removed tree: a recovery ref
// (Ref and Commit) or a file (File), as the journal recorded it.
type Recovered struct {
	Record string    `json:"record"`
	At     time.Time `json:"at"`
	Ref    string    `json:"ref,omitempty"`
	Commit string    `json:"commit,omitempty"`
	File   string    `json:"file,omitempty"`
}

// ListRecovered lists every recovery the journal records that still exists
// (a ref still pointing at its commit, a file still present), oldest
// first. It changes nothing.
func ListRecovered(ctx context.Context, e *Env) ([]Recovered, error) {
	var all []Recovered
	err := e.Store.Journal("", func(_ []byte, en store.Entry) error {
		if en.Event != EventRecovered {
			return nil
		}
		var d RecoveredDetail
		if err := json.Unmarshal(en.Detail, &d); err != nil {
			return fmt.Errorf("journal entry %d: recovered detail: %w", en.Seq, err)
		}
		for _, r := range d.Refs {
			all = append(all, Recovered{Record: en.Record, At: en.At, Ref: r.Ref, Commit: r.Commit})
		}
		for _, f := range d.Files {
			all = append(all, Recovered{Record: en.Record, At: en.At, File: f})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out, err := e.Git.Observe(ctx, e.Repo.MainCheckout, "for-each-ref", "--format=%(objectname) %(refname)", RecoveredRefPrefix)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", RecoveredRefPrefix, err)
	}
	lines, err := gitfiles.ParseRefLines(out)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", RecoveredRefPrefix, err)
	}
	refs := map[string]string{}
	for _, l := range lines {
		refs[l.Name] = l.Object
	}
	live := []Recovered{}
	for _, r := range all {
		switch {
		case r.Ref != "" && refs[r.Ref] == r.Commit:
			live = append(live, r)
		case r.File != "":
			if fi, err := os.Lstat(r.File); err == nil && fi.Mode().IsRegular() {
				live = append(live, r)
			}
		}
	}
	return live, nil
}

// PruneRecovered deletes every recovery older than age at now: a ref only
// while it still points at the recorded commit (compare-and-swap), a file
// only inside the recovery directory. What it deleted is journaled
// (EventRecoveredPruned) and returned.
func PruneRecovered(ctx context.Context, e *Env, age time.Duration) ([]Recovered, error) {
	if age <= 0 {
		return nil, fmt.Errorf("recovered prune: --older-than must be positive, not %s", age)
	}
	list, err := ListRecovered(ctx, e)
	if err != nil {
		return nil, err
	}
	cut := e.Now().Add(-age)
	base := filepath.Join(e.Repo.StateDir(), "recovered")
	pruned := []Recovered{}
	byRecord := map[string]*RecoveredDetail{}
	var order []string
	for _, r := range list {
		if !r.At.Before(cut) {
			continue
		}
		switch {
		case r.Ref != "":
			if _, err := e.Git.Mutate(ctx, e.Repo.MainCheckout, "update-ref", "-d", r.Ref, r.Commit); err != nil {
				return pruned, fmt.Errorf("prune %s: %w", r.Ref, err)
			}
		case within(r.File, base):
			if err := os.Remove(r.File); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return pruned, fmt.Errorf("prune %s: %w", r.File, err)
			}
			_ = os.Remove(filepath.Dir(r.File)) // the record's directory, once empty
		default:
			continue
		}
		pruned = append(pruned, r)
		d := byRecord[r.Record]
		if d == nil {
			d = &RecoveredDetail{}
			byRecord[r.Record] = d
			order = append(order, r.Record)
		}
		if r.Ref != "" {
			d.Refs = append(d.Refs, RecoveredRef{Ref: r.Ref, Commit: r.Commit})
		} else {
			d.Files = append(d.Files, r.File)
		}
	}
	for _, id := range order {
		if err := e.Store.AppendEvent(store.Event{Record: id, Kind: machine.KindWorktree, Event: EventRecoveredPruned,
			At: e.Now().UTC(), Detail: byRecord[id], Actor: e.Actor}); err != nil {
			return pruned, fmt.Errorf("journal prune of %s: %w", id, err)
		}
	}
	return pruned, nil
}
