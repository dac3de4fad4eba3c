package records

// custody show: one record with its state, intent, evidence, journal and
// resources.

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// TestShowJSONMembers: show --json gives the record with its state,
// intent, evidence and journal; "intent" is always present (null when the
// record carries none), as in list.
func TestShowJSONMembers(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, _ := clitest.NewTree(t, r, "shown")
	m := clitest.DecodeResult[clitest.RawResult](t, clitest.MustCustody(t, r, 0, "show", id, "--json"), "show")
	for _, k := range []string{"state", "intent", "evidence", "journal"} {
		if _, ok := m[k]; !ok {
			t.Errorf("show --json result has no %q member (members: %v)", k, slices.Sorted(maps.Keys(m)))
		}
	}
	if in, ok := m["intent"]; ok && string(in) != "null" {
		t.Errorf("show --json of a record without an intent: intent is %s, want null", in)
	}
}

// TestShowListsResources: show names the worktree's resources with their
// state and handle, in JSON and in the human output.
func TestShowListsResources(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	ext := filepath.Join(r.Root, "ext")
	clitest.WriteTrusted(t, r, "[resources.db]\ncreate = \"mkdir -p "+ext+"/@resource@\"\ndestroy = \"rm -rf "+ext+"/@resource@\"\n")
	clitest.MustCustody(t, r, 0, "init")
	id, _ := clitest.NewTree(t, r, "shown")
	res := clitest.ShowRecord(t, r, id).Resources
	if len(res) != 1 || res[0].Name != "db" || res[0].State != "active" {
		t.Fatalf("show --json resources: %+v", res)
	}
	h := res[0].Handle
	if out := clitest.MustCustody(t, r, 0, "show", id).Stdout; !strings.Contains(out, "db active "+h) {
		t.Errorf("show does not list the resource:\n%s", out)
	}
}
