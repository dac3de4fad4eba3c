package bytejson_test

import (
	"encoding/json"
	"testing"

	"github.com/custody-sh/custody/machine/bytejson"
)

// benchDoc is a plan-like document: 100 items of paths, ids and digests.
func benchDoc() []doc {
	out := make([]doc, 100)
	for i := range out {
		out[i] = doc{Path: "/home/me/src/repo/.worktrees/fix-login-1a2b3c", Branch: "custody/fix-login-1a2b3c",
			Names: []string{"sha256:0123456789abcdef", "refs/heads/main"}, ByName: map[string]string{"kind": "ancestry", "remote": "origin"}, N: i}
	}
	return out
}

// BenchmarkMarshal compares encoding/json and bytejson on the same
// document of valid UTF-8 (what nearly every file custody writes holds).
func BenchmarkMarshal(b *testing.B) {
	v := benchDoc()
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bytejson", func(b *testing.B) {
		for b.Loop() {
			if _, err := bytejson.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkUnmarshal is BenchmarkMarshal's reading side.
func BenchmarkUnmarshal(b *testing.B) {
	data, err := json.Marshal(benchDoc())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var v []doc
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bytejson", func(b *testing.B) {
		for b.Loop() {
			var v []doc
			if err := bytejson.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
