package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
)

// TestPlainlyNoIntent: the bytes of a record say it carries no intent
// only when no member anywhere is named intent in any case, and nothing is
// escaped with \u; a value that only spells the word is no name.
func TestPlainlyNoIntent(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{`{"id":"a","state":"tombstoned","evidence":{}}`, true},
		{`{"id":"a","path":"content","note":"intention"}`, true},
		{`{"id":"a","note":"\"intent\": {}"}`, true},
		{`{"id":"a","in_tent":{"kind":"removal"}}`, true},
		{`{"id":"a","intent":null}`, false},
		{`{"id":"a","intent":{"kind":"removal"}}`, false},
		{`{"id":"a","Intent":{"kind":"removal"}}`, false},
		{`{"id":"a","INTENT" : {}}`, false},
		{`{"id":"a","\u0069ntent":{}}`, false},
		{`{"id":"a","path":"caf\udce9"}`, false},
		{`{"id":"a","evidence":{"intent":null}}`, false},
		{`{"id":"a","path":"intent"}`, false},
	} {
		if got := plainlyNoIntent([]byte(tc.v)); got != tc.want {
			t.Errorf("plainlyNoIntent(%s) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// TestPlainlyNoIntentAgreesWithTheDecode: over records as custody writes
// them, with and without intents, with intents nested in their evidence
// and odd bytes in their strings, whenever the bytes say no intent the
// full decode finds none.
func TestPlainlyNoIntentAgreesWithTheDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "intent", `"intent":null`, "\\", `\"intent\":{}`, "caf\xe9", "a\"b", "}"}
	skipped := 0
	for i := range 2000 {
		rec := machine.Record{ID: fmt.Sprintf("r-%d", i), State: machine.StateTombstoned, Path: strs[rng.IntN(len(strs))], Branch: strs[rng.IntN(len(strs))]}
		if rng.IntN(3) == 0 {
			rec.State = machine.StateRemoving
			rec.Intent = &machine.Intent{Kind: machine.IntentRemoval, Path: strs[rng.IntN(len(strs))], At: time.Unix(int64(i), 0).UTC()}
		}
		v, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		var h rowHeader
		if err := json.Unmarshal(v, &h); err != nil {
			t.Fatal(err)
		}
		if plainlyNoIntent(v) {
			skipped++
			if h.hasIntent() {
				t.Fatalf("the bytes say no intent, the decode finds %s:\n%s", h.Intent, v)
			}
		}
	}
	if skipped < 500 {
		t.Fatalf("only %d of 2,000 records were seen to carry no intent: the shortcut does not apply to records as custody writes them", skipped)
	}
}
