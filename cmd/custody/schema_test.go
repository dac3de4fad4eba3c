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

// CompileSchema compiles the checked-in schema name with an independent
// validator.
func CompileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	path, _ := filepath.Abs(filepath.Join("..", "..", "docs", "schemas", name))
	s, err := c.Compile(path)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	return s
}

// ValidateSchema validates one JSON document against schema name.
func ValidateSchema(t *testing.T, name, what string, doc []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, doc)
	}
	if err := CompileSchema(t, name).Validate(v); err != nil {
		t.Errorf("%s does not validate against docs/schemas/%s: %v\n%s", what, name, err, doc)
	}
}

// TestSchemasValidateOutput validates real output against the schemas: a
// plan file with a removal and a kept tree, every line of a journal export
// and of a redacted one, the ok and error envelopes, and the report's
// --json result. A document that breaks its schema, in either direction,
// fails (the schemas allow no property the types do not write).
func TestSchemasValidateOutput(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	MustCustody(t, r, 0, "init")
	id, path := NewTree(t, r, "merged")
	r.Commit(path, "m.txt", "published\n")
	r.Push(path, "main")
	kept, keptPath := NewTree(t, r, "kept")
	r.WriteFile(keptPath, "notes.txt", "only here\n")
	MustCustody(t, r, 0, "finish", id, kept)
	plan := filepath.Join(r.Root, "plan.json")
	res := PlanAllowPending(t, r, "-o", plan, "--json")
	ValidateSchema(t, "envelope-ok.json", "plan --json", []byte(res.Stdout))
	b, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	ValidateSchema(t, "plan.json", "the plan file", b)
	MustCustody(t, r, 0, "apply", plan)

	for _, args := range [][]string{{"journal", "export"}, {"journal", "export", "--redact"}} {
		out := MustCustody(t, r, 0, args...).Stdout
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) < 5 {
			t.Fatalf("%v: only %d lines", args, len(lines))
		}
		for i, l := range lines {
			ValidateSchema(t, "journal-entry.json", fmt.Sprintf("%s line %d", strings.Join(args, " "), i+1), []byte(l))
		}
	}

	rep := MustCustody(t, r, 0, "journal", "report", "-o", filepath.Join(r.Root, "r.html"), "--json")
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(rep.Stdout), &env); err != nil {
		t.Fatal(err)
	}
	ValidateSchema(t, "envelope-ok.json", "journal report --json", []byte(rep.Stdout))
	ValidateSchema(t, "report-summary.json", "the report's result", env.Result)

	bad := Custody(t, r, "show", "no-such-id", "--json")
	if bad.Code != 1 {
		t.Fatalf("show of an unknown id: %s", bad)
	}
	ValidateSchema(t, "envelope-error.json", "an error envelope", []byte(bad.Stderr))

	// The validator is not vacuous: a plan item with a property the type
	// does not have, and an entry without its hash, fail.
	var p map[string]any
	_ = json.Unmarshal(b, &p)
	p["surprise"] = true
	forged, _ := json.Marshal(p)
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(forged))
	if CompileSchema(t, "plan.json").Validate(v) == nil {
		t.Error("a plan with an unknown property validates")
	}
	v, _ = jsonschema.UnmarshalJSON(strings.NewReader(`{"seq":1}`))
	if CompileSchema(t, "journal-entry.json").Validate(v) == nil {
		t.Error("a journal entry of only seq validates")
	}
}
