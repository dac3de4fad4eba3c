package store_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
)

// TestSideWritesCommitWithTheTransition: a transition's side writes commit
// in its transaction, and one that fails (a port another live record
// holds) writes nothing at all: no record, no lease, no journal entry.
func TestSideWritesCommitWithTheTransition(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	a := step(newRecord("a-000001"), machine.StateProvisioning, machine.TriggerCreate, t0)
	a.After.Port = 30000
	a.Side = []store.SideWrite{store.ClaimPort(a.After.ID, 30000), store.AcquireLease(machine.Lease{Record: a.After.ID, Holder: "agent", Expires: t0})}
	mustCommit(t, s, a)
	leases, err := s.Leases()
	if err != nil || leases[a.After.ID] == nil {
		t.Fatalf("the lease side write did not commit with the transition: %v %v", leases, err)
	}
	seq, head := mustHead(t, s)

	b := step(newRecord("b-000002"), machine.StateProvisioning, machine.TriggerCreate, t0)
	b.After.Port = 30000
	b.Side = []store.SideWrite{store.AcquireLease(machine.Lease{Record: b.After.ID, Holder: "agent", Expires: t0}), store.ClaimPort(b.After.ID, 30000)}
	if err := s.Commit(b); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second live record on port 30000: %v, want ErrConflict", err)
	}
	if _, err := s.Get(b.After.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused transition stored its record: %v", err)
	}
	if leases, _ := s.Leases(); leases[b.After.ID] != nil {
		t.Errorf("the refused transition kept its lease side write")
	}
	if seq2, head2 := mustHead(t, s); seq2 != seq || head2 != head {
		t.Errorf("the refused transition moved the journal: %d %s → %d %s", seq, head, seq2, head2)
	}

	// Once a is tombstoned, its port is free again; the release side
	// write drops its lease in the same transaction.
	rel := step(mustGet(t, s, a.After.ID), machine.StateTombstoned, machine.TriggerDiscard, t0)
	rel.Side = []store.SideWrite{store.ReleaseLease(a.After.ID)}
	mustCommit(t, s, rel)
	if leases, _ := s.Leases(); leases[a.After.ID] != nil {
		t.Errorf("the release side write did not drop the lease")
	}
	b.Side = []store.SideWrite{store.ClaimPort(b.After.ID, 30000)}
	mustCommit(t, s, b)
}

// TestAppendEvent: an event is a journal entry that is not a transition,
// chained like every entry, with its detail; its side writes commit with
// it, and a side write into a bucket that holds records (or the journal) is
// refused with nothing written.
func TestAppendEvent(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	mustCommit(t, s, step(newRecord("a-000001"), machine.StateProvisioning, machine.TriggerCreate, t0))
	ev := store.Event{Record: "a-000001", Kind: machine.KindWorktree, Event: "approval", At: t0,
		Detail: map[string]string{"sha256": "abc"}, Actor: "ada"}
	if err := s.AppendEvent(ev, store.PutValue("plans", "approval-1", map[string]string{"ok": "yes"})); err != nil {
		t.Fatal(err)
	}
	entries := journal(t, s, "a-000001")
	if len(entries) != 2 {
		t.Fatalf("journal holds %d entries, want the transition and the event", len(entries))
	}
	e := entries[1].entry
	if e.Event != "approval" || e.From != "" || e.To != "" || e.Trigger != "" || e.Actor != "ada" || e.Prev != entries[0].entry.Hash {
		t.Errorf("event entry = %+v", e)
	}
	var d map[string]string
	if err := json.Unmarshal(e.Detail, &d); err != nil || d["sha256"] != "abc" {
		t.Errorf("event detail = %s (%v)", e.Detail, err)
	}
	seq, head := mustHead(t, s)
	for _, bad := range []string{"records", "ledger", "journal", "meta", "intents", "no-such-bucket"} {
		err := s.AppendEvent(store.Event{Event: "proposal", At: t0}, store.PutValue(bad, "k", "v"))
		if !errors.Is(err, store.ErrUnknownKind) {
			t.Errorf("a side write into %s: %v, want refused", bad, err)
		}
	}
	if err := s.AppendEvent(store.Event{At: t0}); err == nil {
		t.Errorf("an event without a name was written")
	}
	if seq2, head2 := mustHead(t, s); seq2 != seq || head2 != head {
		t.Errorf("refused events moved the journal")
	}
}

// gadget is a kind no schema registers.
type gadget struct{ machine.Resource }

func (gadget) RowKind() machine.Kind { return "gadget" }

// TestCommitUnknownKind: a record of a kind the schema has no bucket for
// is refused, nothing written.
func TestCommitUnknownKind(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	g := gadget{machine.Resource{ID: "x/db", State: machine.StateProvisioning, Rev: 1}}
	seq, _ := mustHead(t, s)
	if err := store.CommitChange(s, store.Change[gadget]{After: g, Trigger: machine.TriggerDeclare}); !errors.Is(err, store.ErrUnknownKind) {
		t.Errorf("commit of an unregistered kind: %v, want ErrUnknownKind", err)
	}
	if seq2, _ := mustHead(t, s); seq2 != seq {
		t.Errorf("the refused commit wrote a journal entry")
	}
	if _, err := store.Load[gadget](s, "gadget", "x/db"); !errors.Is(err, store.ErrUnknownKind) {
		t.Errorf("Load of an unknown kind: %v, want ErrUnknownKind", err)
	}
	if _, err := store.ListKind[gadget](s, "gadget"); !errors.Is(err, store.ErrUnknownKind) {
		t.Errorf("ListKind of an unknown kind: %v, want ErrUnknownKind", err)
	}
}
