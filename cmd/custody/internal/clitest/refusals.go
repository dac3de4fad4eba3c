package clitest

// Refusals found anywhere in an envelope, and plans written outside the
// repository, for the tests that paste custody's advice.

import (
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// PlanOutside writes a plan of r to a file outside the repository.
func PlanOutside(t *testing.T, r *fixtures.Repo, want int) string {
	t.Helper()
	file := filepath.Join(r.Root, "p.json")
	MustCustody(t, r, want, "plan", "-o", file)
	return file
}

// JSONRefusal is a refusal object found anywhere in an envelope.
type JSONRefusal struct{ Code, Retry, Path string }

// JSONRefusals walks v and returns every object that has a "code" and a
// "message": a refusal, or the error of an error envelope.
func JSONRefusals(v any) []JSONRefusal {
	var out []JSONRefusal
	switch v := v.(type) {
	case map[string]any:
		code, hasCode := v["code"].(string)
		_, hasMessage := v["message"].(string)
		if hasCode && hasMessage {
			retry, _ := v["retry"].(string)
			path, _ := v["path"].(string)
			out = append(out, JSONRefusal{Code: code, Retry: retry, Path: path})
		}
		for _, e := range v {
			out = append(out, JSONRefusals(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, JSONRefusals(e)...)
		}
	}
	return out
}
