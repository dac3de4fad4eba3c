package machine_test

import (
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/google/go-cmp/cmp"
)

func TestResolveReference(t *testing.T) {
	t.Parallel()
	const root = "/r/.worktrees"
	cands := []machine.Candidate{
		{ID: "fix-1a2b3c", Path: root + "/fix-1a2b3c"},
		{ID: "fix-1a9f00", Path: root + "/fix-1a9f00"},
		{ID: "docs-77aa01", Path: root + "/docs-77aa01"},
		{ID: "old-000001", Path: root + "/old-000001", Gone: true},
		{ID: "fix", Path: "/elsewhere/fix-adopted"},               // an adopted tree whose id is a prefix of others
		{ID: "web-123456", Path: "/elsewhere/checkout"},           // an adopted tree: its directory is not its id
		{ID: "api-abcdef", Path: "/other/checkout"},               // another with the same directory name
		{ID: "outer-111111", Path: "/nest"},                       // a tree holding another
		{ID: "inner-222222", Path: "/nest/inner"},                 //
		{ID: "reused-333333", Path: root + "/reused", Gone: true}, // a gone tree's directory, taken again
		{ID: "reused-444444", Path: root + "/reused"},
	}
	tests := []struct {
		name    string
		ref     machine.Reference
		want    string       // the id it resolves to
		code    machine.Code // or the refusal
		listing string       // a substring the refusal's message must hold
	}{
		{name: "exact id", ref: machine.Reference{Text: "fix-1a2b3c"}, want: "fix-1a2b3c"},
		{name: "exact id beats being a prefix of others", ref: machine.Reference{Text: "fix"}, want: "fix"},
		{name: "unique prefix", ref: machine.Reference{Text: "fix-1a2"}, want: "fix-1a2b3c"},
		{name: "unique prefix of the name part", ref: machine.Reference{Text: "doc"}, want: "docs-77aa01"},
		{name: "ambiguous prefix lists both", ref: machine.Reference{Text: "fix-1a"}, code: machine.CodeAmbiguousReference,
			listing: "fix-1a2b3c (/r/.worktrees/fix-1a2b3c), fix-1a9f00 (/r/.worktrees/fix-1a9f00)"},
		{name: "directory name", ref: machine.Reference{Text: "fix-adopted"}, want: "fix"},
		{name: "ambiguous directory name", ref: machine.Reference{Text: "checkout"}, code: machine.CodeAmbiguousReference,
			listing: "api-abcdef (/other/checkout), web-123456 (/elsewhere/checkout)"},
		{name: "absolute path", ref: machine.Reference{Text: "/elsewhere/checkout", Path: "/elsewhere/checkout"}, want: "web-123456"},
		{name: "relative path, resolved by the caller", ref: machine.Reference{Text: ".worktrees/docs-77aa01", Path: root + "/docs-77aa01"}, want: "docs-77aa01"},
		{name: "path inside a tree", ref: machine.Reference{Text: "./src", Path: root + "/docs-77aa01/src"}, want: "docs-77aa01"},
		{name: "trailing slash", ref: machine.Reference{Text: "docs-77aa01/", Path: root + "/docs-77aa01"}, want: "docs-77aa01"},
		{name: "nested: the deepest tree", ref: machine.Reference{Text: "/nest/inner/a", Path: "/nest/inner/a"}, want: "inner-222222"},
		{name: "nested: the outer tree", ref: machine.Reference{Text: "/nest/b", Path: "/nest/b"}, want: "outer-111111"},
		{name: "a path is never a prefix", ref: machine.Reference{Text: "/r/.worktrees/fix-1a2", Path: "/r/.worktrees/fix-1a2"}, code: machine.CodeUnknownRecord},
		{name: "a path above every tree", ref: machine.Reference{Text: ".", Path: "/r"}, code: machine.CodeUnknownRecord},
		{name: "a gone tree by id", ref: machine.Reference{Text: "old-000001"}, want: "old-000001"},
		{name: "a gone tree by prefix when nothing live matches", ref: machine.Reference{Text: "old"}, want: "old-000001"},
		{name: "live beats gone for the same directory", ref: machine.Reference{Text: "reused"}, want: "reused-444444"},
		{name: "live beats gone for a prefix", ref: machine.Reference{Text: "reused-"}, want: "reused-444444"},
		{name: "typo", ref: machine.Reference{Text: "fxi-1a2b3c"}, code: machine.CodeUnknownRecord, listing: `"fxi-1a2b3c"`},
		{name: "empty", ref: machine.Reference{Text: ""}, code: machine.CodeUnknownRecord},
		{name: "a plain word naming a subdirectory of a tree", ref: machine.Reference{Text: "src", Path: root + "/docs-77aa01/src"}, want: "docs-77aa01"},
		{name: "a plain word: its prefix match comes first", ref: machine.Reference{Text: "doc", Path: root + "/fix-1a2b3c/doc"}, want: "docs-77aa01"},
		{name: "a prefix is not a substring", ref: machine.Reference{Text: "1a2b3c"}, code: machine.CodeUnknownRecord},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, r := machine.ResolveReference(tt.ref, cands, "custody list")
			if tt.code == "" {
				if r != nil {
					t.Fatalf("refused %+v, want %s", r, tt.want)
				}
				if diff := cmp.Diff(tt.want, got.ID); diff != "" {
					t.Fatalf("resolved to (-want +got):\n%s", diff)
				}
				return
			}
			if r == nil {
				t.Fatalf("resolved to %s, want refusal %s", got.ID, tt.code)
			}
			if diff := cmp.Diff(tt.code, r.Code); diff != "" {
				t.Errorf("code (-want +got):\n%s", diff)
			}
			if r.Retry != "custody list" {
				t.Errorf("retry %q, want custody list", r.Retry)
			}
			if tt.listing != "" && !strings.Contains(r.Message, tt.listing) {
				t.Errorf("message %q does not hold %q", r.Message, tt.listing)
			}
		})
	}
}
