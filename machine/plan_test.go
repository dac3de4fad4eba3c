package machine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// testPlan is what plan writes for the fixture and one kept record.
func testPlan() machine.Plan {
	obs := removableObs()
	kept := machine.Refusal{Code: machine.CodeUnpushedCommits, Message: "x is on no ref", Path: "/repo/.worktrees/wip-0a0b0c", Retry: "git push"}
	return machine.Plan{
		Repository: machine.PlanRepository{ID: "repo-7f3a", CommonDir: "/repo/.git"},
		CreatedAt:  testNow,
		Items: []machine.PlanItem{
			{
				ID: testID, Kind: machine.KindWorktree, State: machine.StateFinished, Action: machine.ActionRemove,
				Path: testPath, Branch: testBranch, Head: headCommit, Proof: removableProof(),
				Fingerprint: machine.Fingerprint(obs),
			},
			{
				ID: "wip-0a0b0c", Kind: machine.KindWorktree, State: machine.StateFinished, Action: machine.ActionKeep,
				Path: "/repo/.worktrees/wip-0a0b0c", Head: otherHead, Refusal: &kept, Refusals: []machine.Refusal{kept},
			},
		},
	}
}

func sealedBytes(t testing.TB, p machine.Plan) []byte {
	t.Helper()
	b, err := json.MarshalIndent(machine.Seal(p), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// marshalUnsealed writes p exactly as given: an edit made after sealing.
func marshalUnsealed(t testing.TB, p machine.Plan) []byte {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPlanRoundTrip(t *testing.T) {
	t.Parallel()
	sealed := machine.Seal(testPlan())
	if sealed.Format != machine.PlanFormat {
		t.Errorf("Format = %q, want %q", sealed.Format, machine.PlanFormat)
	}
	if !fingerprintRE.MatchString(sealed.PlanID) {
		t.Errorf("PlanID = %q, want sha256:<64 hex>", sealed.PlanID)
	}
	if again := machine.Seal(sealed); again.PlanID != sealed.PlanID {
		t.Errorf("sealing twice changed the id: %s != %s", again.PlanID, sealed.PlanID)
	}
	for _, b := range [][]byte{sealedBytes(t, testPlan()), marshalUnsealed(t, sealed), append(sealedBytes(t, testPlan()), '\n')} {
		got, err := machine.ParsePlan(b)
		if err != nil {
			t.Fatalf("ParsePlan: %v", err)
		}
		if diff := cmp.Diff(sealed, got); diff != "" {
			t.Errorf("round trip (-sealed +parsed):\n%s", diff)
		}
	}
	rm, kp := sealed.Counts()
	if rm != 1 || kp != 1 {
		t.Errorf("Counts = %d, %d, want 1, 1", rm, kp)
	}
	if it, ok := sealed.Item("wip-0a0b0c"); !ok || it.Action != machine.ActionKeep {
		t.Errorf("Item(wip-0a0b0c) = %+v, %v", it, ok)
	}
	if _, ok := sealed.Item("nope"); ok {
		t.Errorf("Item(nope) found an item")
	}
	// The id covers the body: a different plan has a different id.
	other := testPlan()
	other.Items[1].Action = machine.ActionRemove
	if machine.Seal(other).PlanID == sealed.PlanID {
		t.Errorf("two different plans share an id")
	}
}

func TestParsePlanRejects(t *testing.T) {
	t.Parallel()
	edited := func(mutate func(*machine.Plan)) func(testing.TB) []byte {
		return func(t testing.TB) []byte {
			p := machine.Seal(testPlan())
			mutate(&p)
			return marshalUnsealed(t, p)
		}
	}
	resealed := func(mutate func(*machine.Plan)) func(testing.TB) []byte {
		return func(t testing.TB) []byte {
			p := testPlan()
			mutate(&p)
			return sealedBytes(t, p)
		}
	}
	raw := func(s string) func(testing.TB) []byte { return func(testing.TB) []byte { return []byte(s) } }
	valid := func(t testing.TB) []byte { return sealedBytes(t, testPlan()) }
	tests := []struct {
		name  string
		input func(testing.TB) []byte
		msg   string
	}{
		{"edited-path", edited(func(p *machine.Plan) { p.Items[0].Path = "/home/me" }), "does not match its body"},
		{"edited-action", edited(func(p *machine.Plan) { p.Items[1].Action = machine.ActionRemove }), "does not match its body"},
		{"edited-repository", edited(func(p *machine.Plan) { p.Repository.ID = "repo-other" }), "does not match its body"},
		{"edited-fingerprint", edited(func(p *machine.Plan) { p.Items[0].Fingerprint = machine.Fingerprint(machine.WorktreeObservation{}) }), "does not match its body"},
		{"item-dropped", edited(func(p *machine.Plan) { p.Items = p.Items[1:] }), "does not match its body"},
		{"no-plan-id", edited(func(p *machine.Plan) { p.PlanID = "" }), "does not match its body"},
		{"wrong-format", edited(func(p *machine.Plan) { p.Format = "custody.plan/2" }), `format "custody.plan/2"`},
		{"no-format", edited(func(p *machine.Plan) { p.Format = "" }), `format ""`},
		{"unknown-field", func(t testing.TB) []byte {
			return bytes.Replace(valid(t), []byte("{"), []byte(`{"approved_by":"me",`), 1)
		}, "unknown field"},
		{"unknown-item-field", func(t testing.TB) []byte {
			return bytes.Replace(valid(t), []byte(`"kind": "worktree"`), []byte(`"kind": "worktree", "force": true`), 1)
		}, "unknown field"},
		{"duplicate-id", resealed(func(p *machine.Plan) { p.Items[1].ID = testID }), "appears twice"},
		{"empty-id", resealed(func(p *machine.Plan) { p.Items[1].ID = "" }), "has no id"},
		{"no-repository", resealed(func(p *machine.Plan) { p.Repository.ID = "" }), "no repository id"},
		{"unknown-action", resealed(func(p *machine.Plan) { p.Items[1].Action = "archive" }), `unknown action "archive"`},
		{"remove-without-proof", resealed(func(p *machine.Plan) { p.Items[0].Proof = nil }), "removes without"},
		{"remove-without-fingerprint", resealed(func(p *machine.Plan) { p.Items[0].Fingerprint = "" }), "removes without"},
		{"remove-proof-of-other-head", resealed(func(p *machine.Plan) { p.Items[0].Proof.Head = otherHead }), "removes without"},
		{"remove-short-head", resealed(func(p *machine.Plan) {
			p.Items[0].Head = headCommit[:12]
			p.Items[0].Proof.Head = headCommit[:12]
		}), "removes without"},
		{"remove-proof-without-kind", resealed(func(p *machine.Plan) { p.Items[0].Proof.Kind = "" }), "removes without"},
		{"trailing-object", func(t testing.TB) []byte { return append(valid(t), []byte("\n{}")...) }, "trailing data"},
		{"trailing-plan", func(t testing.TB) []byte { return append(valid(t), valid(t)...) }, "trailing data"},
		{"trailing-garbage", func(t testing.TB) []byte { return append(valid(t), " x"...) }, "trailing data"},
		{"truncated-half", func(t testing.TB) []byte { b := valid(t); return b[:len(b)/2] }, "not a custody plan"},
		{"truncated-last-byte", func(t testing.TB) []byte { b := valid(t); return b[:len(b)-1] }, "not a custody plan"},
		{"empty", raw(""), "not a custody plan"},
		{"null", raw("null"), "format"},
		{"array", raw("[]"), "not a custody plan"},
		{"string", raw(`"custody.plan/1"`), "not a custody plan"},
		{"wrong-type", raw(`{"format":"custody.plan/1","items":{}}`), "not a custody plan"},
		{"too-large", func(testing.TB) []byte { return bytes.Repeat([]byte(" "), machine.MaxPlanBytes+1) }, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := machine.ParsePlan(tt.input(t))
			if !errors.Is(err, machine.ErrPlanInvalid) {
				t.Fatalf("ParsePlan = %v, want ErrPlanInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
			if diff := cmp.Diff(machine.Plan{}, p); diff != "" {
				t.Errorf("a refused plan came back non-zero:\n%s", diff)
			}
		})
	}
}

func FuzzParsePlan(f *testing.F) {
	valid := sealedBytes(f, testPlan())
	f.Add(valid)
	f.Add(marshalUnsealed(f, machine.Seal(testPlan())))
	f.Add(sealedBytes(f, machine.Plan{Repository: machine.PlanRepository{ID: "r"}}))
	for _, n := range []int{0, 1, 10, len(valid) / 3, len(valid) / 2, len(valid) - 2, len(valid) - 1} {
		f.Add(valid[:n])
	}
	f.Add(append(bytes.Clone(valid), valid...))
	f.Add([]byte("garbage"))
	f.Add([]byte("{}"))
	f.Add([]byte("null"))
	f.Add([]byte(`{"format":"custody.plan/1","plan_id":"","items":[{"id":"a","action":"remove"}]}`))
	f.Add([]byte{0xff, 0xfe, '{'})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := machine.ParsePlan(b)
		if err != nil {
			if !errors.Is(err, machine.ErrPlanInvalid) {
				t.Fatalf("ParsePlan error %v does not wrap ErrPlanInvalid", err)
			}
			return
		}
		if got := machine.Seal(p).PlanID; got != p.PlanID {
			t.Fatalf("accepted plan re-seals to %s, carries %s", got, p.PlanID)
		}
		again, err := machine.ParsePlan(marshalUnsealed(t, p))
		if err != nil {
			t.Fatalf("accepted plan does not parse after re-encoding: %v", err)
		}
		if diff := cmp.Diff(p, again); diff != "" {
			t.Fatalf("re-encoded plan differs (-first +second):\n%s", diff)
		}
	})
}
