package main

import (
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps/land"
	"github.com/custody-sh/custody/steps/report"
	"github.com/custody-sh/custody/steps/resource"
	"github.com/custody-sh/custody/steps/sweep"
	"github.com/custody-sh/custody/store"
)

//go:generate go test -run TestSchemasFresh -update-schemas

// exportLine is one line of journal export: the stored entry, plus the two
// members a redacted line carries.
type exportLine struct {
	store.Entry
	// Salt and Redact are a committed entry's (schema 7 on): its random
	// salt (never in a redacted line) and where its redactable values are.
	Salt   string           `json:"salt,omitempty"`
	Redact []store.RedactAt `json:"redact,omitempty"`
	// MemberDigests is a redacted committed line's digest of each member;
	// its redactable values are then {"commit","redacted"} objects.
	MemberDigests map[string]string `json:"member_digests,omitempty"`
	BodyDigest    string            `json:"body_digest,omitempty"`
	Redacted      []string          `json:"redacted,omitempty"`
}

// schemaBase is where the schemas' ids live, beside the files.
const schemaBase = "https://custody.sh/schemas/"

// schemas returns every versioned surface's JSON Schema, by its file name
// in docs/schemas/, drawn from the Go types that write it (machine.JSONSchema).
func schemas() map[string][]byte {
	out := map[string][]byte{}
	for name, s := range map[string]struct {
		v     any
		title string
	}{
		"plan.json":                   {machine.Plan{}, "custody.plan/1: a plan file (custody plan -o)"},
		"journal-entry.json":          {exportLine{}, "one line of custody journal export (jsonl), unredacted (or redacted under the first rule)"},
		"journal-entry-redacted.json": {exportLine{}, "one line of custody journal export --redact (jsonl): any string may stand replaced by its commitment {commit, redacted} (docs/formats.md, 'Committed entries')"},
		"envelope-ok.json":            {okEnvelope{}, "the --json envelope of a command that did its work (exit 0 or 3), on stdout"},
		"envelope-error.json":         {errEnvelope{}, "the --json envelope of a command that failed (exit 1), on stderr"},
		"report-summary.json":         {report.ReportResult{}, "the result of custody journal report --json: its summary and verification banner"},
		"archive-manifest.json":       {machine.ArchiveManifest{}, machine.ArchiveFormat + ": the manifest.json of an archive directory"},
		"hook-envelope.json":          {hookEnvelope{}, "hook protocol 1: the one envelope every custody hook prints on stdout"},
		"migrate-plan.json":           {machine.MigratePlan{}, machine.MigratePlanFormat + ": a migrate plan file (custody migrate plan -o)"},
		"remove-result.json":          {removeResult{}, "the result of custody remove --json: what became of each tree named, with its proof or its refusals"},
		"list-result.json":            {output.ListResult{}, "the result of custody list --json: each record, its one word and what list read of its tree"},
		"repositories-result.json":    {output.RepositoriesResult{}, "the result of custody list --all-repos --json: each repository custody init ran in, its trees counted"},
		"repositories-index.json":     {machine.RepositoryIndex{}, machine.RepositoryIndexFormat + ": the index of repositories in $XDG_STATE_HOME/custody/repositories.json"},
		"resource-mirror.json":        {machine.Mirror{}, machine.MirrorFormat + ": one ledger entry mirrored in $XDG_STATE_HOME/custody/resources/<repository id>/"},
		"gone-repos-result.json":      {resource.GoneResult{}, "the result of custody resource gc --gone-repos --json: each mirrored resource of a repository that is not where it was"},
		"land-result.json":            {land.Result{}, "the result of custody land --json: the landing (target, old and new tip, method) and what became of the tree"},
		"sweep-result.json":           {sweep.Result{}, "the result of custody sweep --json: what became of each tree (left with why, or idle: build output discarded, work archived)"},
	} {
		sch := machine.JSONSchema(s.v, schemaBase+name, s.title)
		if name == "journal-entry-redacted.json" {
			sch = committedStrings(sch)
		}
		b, err := json.MarshalIndent(sch, "", "  ")
		if err != nil {
			panic(err) // a schema is maps of plain values
		}
		out[name] = append(b, '\n')
	}
	return out
}

// committedStrings returns schema s with every string replaced by "that
// string, or a commitment": what a redacted committed line may hold in any
// string's place ({"commit": 64 hex digits, "redacted": its kind}).
func committedStrings(s map[string]any) map[string]any {
	commitment := map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"required":             []any{"commit", "redacted"},
		"properties": map[string]any{
			"commit":   map[string]any{"type": "string", "pattern": "^[0-9a-f]{64}$"},
			"redacted": map[string]any{"type": "string", "enum": []any{store.RedactPath, store.RedactHost, store.RedactUser, store.RedactURL, store.RedactCommand, store.RedactSecret}},
		},
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(t))
			for k, x := range t {
				out[k] = walk(x)
			}
			isString := out["type"] == "string"
			if ts, ok := out["type"].([]any); ok {
				for _, x := range ts {
					isString = isString || x == "string"
				}
			}
			if isString {
				return map[string]any{"anyOf": []any{out, commitment}}
			}
			return out
		case []any:
			out := make([]any, len(t))
			for i, x := range t {
				out[i] = walk(x)
			}
			return out
		}
		return v
	}
	return walk(s).(map[string]any)
}
