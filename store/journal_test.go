package store_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// naiveHash recomputes an entry line's hash the way docs/formats.md states
// it, independently of the store's code: hash = sha256(prev + "\n" +
// sha256(body)), body = the line's object without "hash" and
// "body_digest", top-level keys sorted, compact.
func naiveHash(t testing.TB, line []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("entry %s: %v", line, err)
	}
	var prev string
	if err := json.Unmarshal(m["prev"], &prev); err != nil {
		t.Fatalf("entry %s: prev: %v", line, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "hash" && k != "body_digest" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	body := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			body = append(body, ',')
		}
		kb, _ := json.Marshal(k)
		body = append(append(append(body, kb...), ':'), m[k]...)
	}
	body = append(body, '}')
	bodySum := sha256.Sum256(body)
	sum := sha256.Sum256([]byte(prev + "\n" + hex.EncodeToString(bodySum[:])))
	return hex.EncodeToString(sum[:])
}

type journalLine struct {
	line  []byte
	entry store.Entry
}

func journal(t testing.TB, s *store.Store, record string) []journalLine {
	t.Helper()
	var out []journalLine
	err := s.Journal(record, func(line []byte, e store.Entry) error {
		out = append(out, journalLine{slices.Clone(line), e})
		return nil
	})
	if err != nil {
		t.Fatalf("journal %q: %v", record, err)
	}
	return out
}

// interleaved commits the lives of two records, interleaved, and returns
// the transitions in commit order. The second record is left removing,
// with its removal intent.
func interleaved(t testing.TB, s *store.Store) []store.Transition {
	t.Helper()
	a, b := newRecord("a-000001"), newRecord("b-000002")
	now := t0
	var out []store.Transition
	commit := func(rec *machine.Record, to machine.State, tr machine.Trigger) {
		now = now.Add(time.Minute)
		x := step(*rec, to, tr, now)
		*rec = mustCommit(t, s, x)
		out = append(out, x)
	}
	commit(&a, machine.StateProvisioning, machine.TriggerCreate)
	commit(&b, machine.StateProvisioning, machine.TriggerCreate)
	commit(&a, machine.StateActive, machine.TriggerCreated)
	commit(&a, machine.StateFinished, machine.TriggerFinish)
	commit(&b, machine.StateActive, machine.TriggerCreated)
	commit(&a, machine.StateRemoving, machine.TriggerRemove)
	commit(&b, machine.StateFinished, machine.TriggerExpire)
	commit(&a, machine.StateTombstoned, machine.TriggerRemoved)
	commit(&b, machine.StateRemoving, machine.TriggerRemove)
	return out
}

func TestJournalEmpty(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	if seq, head := mustHead(t, s); seq != 0 || head != "" {
		t.Errorf("Head of a fresh store = %d %q, want 0 \"\"", seq, head)
	}
	if got := journal(t, s, ""); len(got) != 0 {
		t.Errorf("a fresh store has %d journal entries", len(got))
	}
}

// TestJournalEntryPerCommit checks that every Commit appends exactly one
// entry, chained to the one before, carrying what the transition said.
func TestJournalEntryPerCommit(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	a, b := newRecord("a-000001"), newRecord("b-000002")
	var trs []store.Transition
	var heads []string
	now := t0
	for i, x := range []struct {
		rec *machine.Record
		to  machine.State
		tr  machine.Trigger
	}{
		{&a, machine.StateProvisioning, machine.TriggerCreate},
		{&b, machine.StateProvisioning, machine.TriggerCreate},
		{&a, machine.StateActive, machine.TriggerCreated},
		{&a, machine.StateFinished, machine.TriggerFinish},
		{&b, machine.StateTombstoned, machine.TriggerDiscard},
		{&a, machine.StateRemoving, machine.TriggerRemove},
		{&a, machine.StateTombstoned, machine.TriggerRemoved},
	} {
		now = now.Add(time.Second)
		tr := step(*x.rec, x.to, x.tr, now)
		*x.rec = mustCommit(t, s, tr)
		trs = append(trs, tr)
		seq, head := mustHead(t, s)
		if seq != uint64(i+1) {
			t.Fatalf("after commit %d Head seq = %d", i+1, seq)
		}
		if head == "" || slices.Contains(heads, head) {
			t.Fatalf("after commit %d Head hash = %q (earlier heads %q)", i+1, head, heads)
		}
		heads = append(heads, head)
		if n := len(journal(t, s, "")); n != i+1 {
			t.Fatalf("after commit %d the journal has %d entries", i+1, n)
		}
	}

	lines := journal(t, s, "")
	prev := ""
	for i, jl := range lines {
		tr, e := trs[i], jl.entry
		want := store.Entry{
			Seq:         uint64(i + 1),
			At:          tr.After.UpdatedAt,
			Record:      tr.After.ID,
			Kind:        string(machine.KindWorktree),
			From:        tr.Before.State.String(),
			To:          tr.After.State.String(),
			Trigger:     string(tr.Trigger),
			Intent:      intentJSON(t, tr.After.Intent),
			Proof:       tr.Proof,
			Observation: tr.Observation,
			Outcome:     tr.Outcome,
			Actor:       tr.Actor,
			Prev:        prev,
			Hash:        heads[i],
		}
		if diff := cmp.Diff(want, e); diff != "" {
			t.Errorf("entry %d (-want +got):\n%s", i+1, diff)
		}
		var decoded store.Entry
		if err := json.Unmarshal(jl.line, &decoded); err != nil {
			t.Fatalf("entry %d line does not parse: %v", i+1, err)
		}
		if diff := cmp.Diff(e, decoded); diff != "" {
			t.Errorf("entry %d: the line and the entry passed to fn differ (-entry +line):\n%s", i+1, diff)
		}
		if bytes.Contains(jl.line, []byte(`"salt":`)) {
			// Committed: the independent verifier of cmd/custody/e2e
			// recomputes it from docs/formats.md.
			if got, _ := store.EntryHash(jl.line, prev); got != e.Hash {
				t.Errorf("entry %d: hash %s, recomputed %s", i+1, e.Hash, got)
			}
		} else if got := naiveHash(t, jl.line); got != e.Hash {
			t.Errorf("entry %d: hash %s, recomputed per docs/formats.md %s", i+1, e.Hash, got)
		}
		prev = e.Hash
	}
	if lines[0].entry.From != "none" {
		t.Errorf("a creation's from is %q, want none", lines[0].entry.From)
	}

	for _, id := range []string{a.ID, b.ID, "x-unknown"} {
		var want []journalLine
		for _, jl := range lines {
			if jl.entry.Record == id {
				want = append(want, jl)
			}
		}
		got := journal(t, s, id)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(journalLine{})); diff != "" {
			t.Errorf("Journal(%q) is not the record's entries in order (-want +got):\n%s", id, diff)
		}
	}
}

func TestJournalCallbackErrorStops(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	interleaved(t, s)
	stop := errors.New("stop")
	calls := 0
	err := s.Journal("", func([]byte, store.Entry) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 3 {
		t.Errorf("Journal with fn failing on the 3rd entry = %v after %d calls, want the error after 3", err, calls)
	}
}

// intentJSON is the journal's form of a worktree intent: its JSON, or null.
func intentJSON(t testing.TB, in *machine.Intent) json.RawMessage {
	t.Helper()
	if in == nil {
		return json.RawMessage("null")
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
