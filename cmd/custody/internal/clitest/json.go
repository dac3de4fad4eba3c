package clitest

// Reading custody's --json output in tests. The envelopes are package
// output's OKEnvelope and ErrEnvelope, the ones custody writes; each
// result is decoded into the type the command puts in its envelope
// (machine.Plan, steps.ApplyResult, steps.NewResult, output.ShowResult,
// ...). Where a command's result is a map, a small type below names its
// members; those, and the raw views for checks of which members are
// present, are the only local types. Output is read with custody's own
// codec, so a name that is not UTF-8 is read back byte for byte, as
// custody wrote it.

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/resource"
	"github.com/custody-sh/custody/store"
)

// DecodeResult requires stdout to hold exactly one success envelope
// (version 1, ok true, "command" equal to command, e.g. "resource gc") and
// returns its result decoded into T.
func DecodeResult[T any](t testing.TB, res Result, command string) T {
	t.Helper()
	got, out := DecodeEnvelope[T](t, res)
	if got != command {
		t.Fatalf("envelope command %q, want %q:\n%s", got, command, res)
	}
	return out
}

// DecodeEnvelope requires stdout to hold exactly one success envelope
// (version 1, ok true, a command) and returns its command and its result
// decoded into T.
func DecodeEnvelope[T any](t testing.TB, res Result) (command string, out T) {
	t.Helper()
	env := output.OKEnvelope{Result: &out}
	dec := json.NewDecoder(strings.NewReader(res.Stdout))
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("stdout is not a JSON envelope: %v\n%s", err, res)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", res)
	}
	if env.Version != 1 || !env.OK || env.Command == "" {
		t.Fatalf("envelope version %d ok %v command %q, want 1 true and a command:\n%s", env.Version, env.OK, env.Command, res)
	}
	return env.Command, out
}

// DecodeError requires the exit-1 form of --json: nothing on stdout and
// exactly one error envelope on stderr (version 1, ok false, a code and a
// message). It returns the envelope's error.
func DecodeError(t testing.TB, res Result) output.ErrorBody {
	t.Helper()
	if res.Code != output.ExitError || res.Stdout != "" {
		t.Fatalf("want exit 1 and nothing on stdout:\n%s", res)
	}
	var env output.ErrEnvelope
	dec := json.NewDecoder(strings.NewReader(res.Stderr))
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("stderr is not a JSON error envelope: %v\n%s", err, res)
	}
	if dec.More() {
		t.Fatalf("stderr holds more than one JSON value:\n%s", res)
	}
	if env.Version != 1 || env.OK || env.Error.Code == "" || env.Error.Message == "" {
		t.Fatalf("bad error envelope %+v:\n%s", env, res)
	}
	return env.Error
}

// The results that are maps in the commands, with their members named.
type (
	// ItemsResult is the result of finish and reopen ([]steps.Outcome) and
	// of resume ([]steps.ResumeItem).
	ItemsResult[T any] struct {
		Items []T `json:"items"`
	}
	// ListResult is the result of list.
	ListResult struct {
		Records []output.ListEntry `json:"records"`
	}
	// JournalHeadResult is the result of journal head.
	JournalHeadResult struct {
		Seq  uint64 `json:"seq"`
		Head string `json:"head"`
	}
	// EnsureResult is the result of resource ensure.
	EnsureResult struct {
		ID        string                  `json:"id"`
		Resources []steps.ResourceOutcome `json:"resources"`
	}
	// GCResult is the result of resource gc.
	GCResult struct {
		DryRun bool              `json:"dry_run"`
		Items  []resource.GCItem `json:"items"`
	}
	// ResourceListResult is the result of resource list.
	ResourceListResult struct {
		Resources []machine.Resource `json:"resources"`
	}
)

// RawResult is a result's members as JSON text, for checks of which
// members are present and of their shape (null, [] ...) that decoding into
// a Go type cannot see.
type RawResult = map[string]json.RawMessage

// PlanItem returns the plan's item id, failing the test when it has none.
func PlanItem(t testing.TB, p machine.Plan, id string) machine.PlanItem {
	t.Helper()
	it, ok := p.Item(id)
	if !ok {
		t.Fatalf("plan has no item %s: %+v", id, p.Items)
	}
	return it
}

// PlanItemAt returns the plan's item for a worktree path, nil if none.
func PlanItemAt(p machine.Plan, path string) *machine.PlanItem {
	for i := range p.Items {
		if p.Items[i].Path == path {
			return &p.Items[i]
		}
	}
	return nil
}

// ApplyOutcome returns the apply result's item id, failing the test when
// it has none.
func ApplyOutcome(t testing.TB, a steps.ApplyResult, id string) steps.Outcome {
	t.Helper()
	for _, it := range a.Items {
		if it.ID == id {
			return it
		}
	}
	t.Fatalf("apply result has no item %s: %+v", id, a.Items)
	return steps.Outcome{}
}

// RefusalCodes lists the refusals' codes in order.
func RefusalCodes(rs []machine.Refusal) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Code))
	}
	return out
}

// HasCode reports whether one of the refusals has code.
func HasCode(rs []machine.Refusal, code string) bool {
	for _, r := range rs {
		if string(r.Code) == code {
			return true
		}
	}
	return false
}

// ListRecords returns list --json, with --all when all.
func ListRecords(t testing.TB, r *fixtures.Repo, all bool) []output.ListEntry {
	t.Helper()
	args := []string{"list", "--json"}
	if all {
		args = append(args, "--all")
	}
	return DecodeResult[ListResult](t, MustCustody(t, r, 0, args...), "list").Records
}

// ListRecord returns record id of list --all --json, failing the test
// when there is none.
func ListRecord(t testing.TB, r *fixtures.Repo, id string) output.ListEntry {
	t.Helper()
	return recordIn(t, ListRecords(t, r, true), id)
}

// ListRecordWithin is ListRecord with list's observations bounded by d
// (--observe-timeout): for a test whose tree's git status is made to hang,
// where list would wait its default bound to show the tree's status.
func ListRecordWithin(t testing.TB, r *fixtures.Repo, id string, d time.Duration) output.ListEntry {
	t.Helper()
	res := MustCustody(t, r, 0, "--observe-timeout", d.String(), "list", "--json", "--all")
	return recordIn(t, DecodeResult[ListResult](t, res, "list").Records, id)
}

// recordIn is record id of a list --all, failing the test when there is
// none.
func recordIn(t testing.TB, recs []output.ListEntry, id string) output.ListEntry {
	t.Helper()
	for _, rec := range recs {
		if rec.ID == id {
			return rec
		}
	}
	t.Fatalf("no record %s in custody list --all", id)
	return output.ListEntry{}
}

// ShowRecord returns show ID --json.
func ShowRecord(t testing.TB, r *fixtures.Repo, id string) output.ShowResult {
	t.Helper()
	return DecodeResult[output.ShowResult](t, MustCustody(t, r, 0, "show", id, "--json"), "show")
}

// JournalEntries exports the journal, verifies the export up to the
// store's chain head and returns its entries.
func JournalEntries(t testing.TB, r *fixtures.Repo) []store.Entry {
	t.Helper()
	head := DecodeResult[JournalHeadResult](t, MustCustody(t, r, 0, "journal", "head", "--json"), "journal head")
	f, err := os.CreateTemp(r.Root, "journal-*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	file := f.Name()
	MustCustody(t, r, 0, "journal", "export", "-o", file)
	MustCustody(t, r, 0, "journal", "verify", "--head", head.Head, file)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Entry
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var e store.Entry
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("journal line %q: %v", l, err)
		}
		out = append(out, e)
	}
	if uint64(len(out)) != head.Seq {
		t.Errorf("export has %d entries, the store's head is at seq %d", len(out), head.Seq)
	}
	return out
}

// Outcomes maps each item of an apply result to its outcome.
func Outcomes(ap steps.ApplyResult) map[string]string {
	m := map[string]string{}
	for _, it := range ap.Items {
		m[it.ID] = string(it.Outcome)
	}
	return m
}
