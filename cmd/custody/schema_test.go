package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var updateSchemas = flag.Bool("update-schemas", false, "rewrite docs/schemas/ from the Go types")

// TestSchemasFresh fails when a schema in docs/schemas/ no longer matches
// the Go type it is drawn from.
func TestSchemasFresh(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "schemas")
	for name, want := range schemas() {
		path := filepath.Join(dir, name)
		if *updateSchemas {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/schemas/%s is stale. To update, run 'go generate ./...'.", name)
		}
	}
}

// TestSchemasValidateOutput validates real output against the schemas: a
// plan file with a removal and a kept tree, every line of a journal export
// and of a redacted one, the ok and error envelopes, the report's --json
// result and remove's (removed, archived and removed, kept). A document that breaks its schema, in either direction,
// fails (the schemas allow no property the types do not write).
func TestSchemasValidateOutput(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	id, path := clitest.NewTree(t, r, "merged")
	r.Commit(path, "m.txt", "published\n")
	r.Push(path, "main")
	kept, keptPath := clitest.NewTree(t, r, "kept")
	r.WriteFile(keptPath, "notes.txt", "only here\n")
	clitest.MustCustody(t, r, 0, "finish", id, kept)
	plan := filepath.Join(r.Root, "plan.json")
	res := clitest.PlanAllowPending(t, r, "-o", plan, "--json")
	clitest.ValidateSchema(t, "envelope-ok.json", "plan --json", []byte(res.Stdout))
	b, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	clitest.ValidateSchema(t, "plan.json", "the plan file", b)
	validateResult(t, "list-result.json", "list --json", clitest.MustCustody(t, r, 0, "list", "--json").Stdout)
	clitest.MustCustody(t, r, 0, "apply", plan)
	validateResult(t, "list-result.json", "list --all --json", clitest.MustCustody(t, r, 0, "list", "--all", "--json").Stdout)
	validateResult(t, "repositories-result.json", "list --all-repos --json", clitest.MustCustody(t, r, 0, "list", "--all-repos", "--json").Stdout)
	index, err := os.ReadFile(filepath.Join(r.Home, ".local", "state", "custody", "repositories.json"))
	if err != nil {
		t.Fatal(err)
	}
	clitest.ValidateSchema(t, "repositories-index.json", "the index of repositories", index)

	for _, args := range [][]string{{"journal", "export"}, {"journal", "export", "--redact"}} {
		out := clitest.MustCustody(t, r, 0, args...).Stdout
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) < 5 {
			t.Fatalf("%v: only %d lines", args, len(lines))
		}
		schema := "journal-entry.json"
		if len(args) == 3 {
			schema = "journal-entry-redacted.json"
		}
		for i, l := range lines {
			clitest.ValidateSchema(t, schema, fmt.Sprintf("%s line %d", strings.Join(args, " "), i+1), []byte(l))
		}
	}

	rep := clitest.MustCustody(t, r, 0, "journal", "report", "-o", filepath.Join(r.Root, "r.html"), "--json")
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(rep.Stdout), &env); err != nil {
		t.Fatal(err)
	}
	clitest.ValidateSchema(t, "envelope-ok.json", "journal report --json", []byte(rep.Stdout))
	clitest.ValidateSchema(t, "report-summary.json", "the report's result", env.Result)

	// remove --json: a tree removed, one archived then removed, one kept.
	gone, _ := clitest.NewTree(t, r, "gone")
	archived, archivedPath := clitest.NewTree(t, r, "archived")
	r.WriteFile(archivedPath, "draft.txt", "only here\n")
	stays, staysPath := clitest.NewTree(t, r, "stays")
	r.WriteFile(staysPath, "notes.txt", "only here\n")
	rm := clitest.Custody(t, r, "remove", "--json", gone, stays)
	if rm.Code != 3 {
		t.Fatalf("remove of a removable and a kept tree: %s", rm)
	}
	clitest.ValidateSchema(t, "envelope-ok.json", "remove --json", []byte(rm.Stdout))
	for _, out := range []string{rm.Stdout, clitest.MustCustody(t, r, 0, "remove", "--json", "--archive", archived).Stdout} {
		if err := json.Unmarshal([]byte(out), &env); err != nil {
			t.Fatal(err)
		}
		clitest.ValidateSchema(t, "remove-result.json", "remove's result", env.Result)
	}

	// land --json: a tree landed and removed, one not landed (dirty).
	landed, landedPath := clitest.NewTree(t, r, "landed")
	r.Commit(landedPath, "landed.txt", "landed\n")
	dirty, dirtyPath := clitest.NewTree(t, r, "dirty")
	r.WriteFile(dirtyPath, "notes.txt", "only here\n")
	for _, run := range []clitest.Result{clitest.MustCustody(t, r, 0, "land", "--rebase", "--yes", "--json", landed), clitest.MustCustody(t, r, 3, "land", "--yes", "--json", dirty)} {
		clitest.ValidateSchema(t, "envelope-ok.json", "land --json", []byte(run.Stdout))
		if err := json.Unmarshal([]byte(run.Stdout), &env); err != nil {
			t.Fatal(err)
		}
		clitest.ValidateSchema(t, "land-result.json", "land's result", env.Result)
	}

	bad := clitest.Custody(t, r, "show", "no-such-id", "--json")
	if bad.Code != 1 {
		t.Fatalf("show of an unknown id: %s", bad)
	}
	clitest.ValidateSchema(t, "envelope-error.json", "an error envelope", []byte(bad.Stderr))

	// The validator is not vacuous: a plan item with a property the type
	// does not have, and an entry without its hash, fail.
	var p map[string]any
	_ = json.Unmarshal(b, &p)
	p["surprise"] = true
	forged, _ := json.Marshal(p)
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(forged))
	if clitest.CompileSchema(t, "plan.json").Validate(v) == nil {
		t.Error("a plan with an unknown property validates")
	}
	v, _ = jsonschema.UnmarshalJSON(strings.NewReader(`{"seq":1}`))
	if clitest.CompileSchema(t, "journal-entry.json").Validate(v) == nil {
		t.Error("a journal entry of only seq validates")
	}
}

// validateResult validates out, one --json envelope, against
// envelope-ok.json and its result against the schema name.
func validateResult(t *testing.T, name, what, out string) {
	t.Helper()
	clitest.ValidateSchema(t, "envelope-ok.json", what, []byte(out))
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatal(err)
	}
	clitest.ValidateSchema(t, name, what+"'s result", env.Result)
}
