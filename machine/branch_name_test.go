package machine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// branchNames is the table TestBranchNameProblem holds BranchNameProblem
// to: each name and why git check-ref-format --branch refuses it ("" when
// it takes it). steps' TestBranchNameProblemAgreesWithGit asks git itself.
var branchNames = []struct {
	name string
	why  string // "" when git takes it
}{
	{"topic", ""},
	{"feature/login", ""},
	{"a.b", ""},
	{"a-b_c+d=e,f;g'h\"i", ""},
	{"@x", ""},
	{"x@y", ""},
	{"{a}", ""},
	{"caf\xc3\xa9", ""},
	{"\xfe\xff", ""},
	{"refs/heads/x", ""},
	{"x.lockx", ""},
	{"", "it is empty"},
	{"-x", "it begins with '-'"},
	{"HEAD", "HEAD names the checked-out commit, not a branch"},
	{"@", "'@' alone stands for HEAD"},
	{"a b", `it holds " ", which git keeps out of ref names`},
	{"a~1", `it holds "~", which git keeps out of ref names`},
	{"a^", `it holds "^", which git keeps out of ref names`},
	{"a:b", `it holds ":", which git keeps out of ref names`},
	{"a?", `it holds "?", which git keeps out of ref names`},
	{"a*", `it holds "*", which git keeps out of ref names`},
	{"a[b", `it holds "[", which git keeps out of ref names`},
	{`a\b`, `it holds "\\", which git keeps out of ref names`},
	{"a\tb", "it holds a control character"},
	{"a\x7fb", "it holds a control character"},
	{"a\nb", "it holds a control character"},
	{"a..b", "it holds '..'"},
	{"a@{b", "it holds '@{'"},
	{"@{-1}", "it holds '@{'"},
	{"a.", "it ends with '.'"},
	{"a/", "it has an empty component (a '/' at its start or end, or two together)"},
	{"/a", "it has an empty component (a '/' at its start or end, or two together)"},
	{"a//b", "it has an empty component (a '/' at its start or end, or two together)"},
	{".a", `its component ".a" begins with '.'`},
	{"a/.b", `its component ".b" begins with '.'`},
	{"a.lock", `its component "a.lock" ends with '.lock'`},
	{"a.lock/b", `its component "a.lock" ends with '.lock'`},
}

// TestBranchNameProblem: every rule of git check-ref-format --branch, each
// with its reason.
func TestBranchNameProblem(t *testing.T) {
	t.Parallel()
	for _, tt := range branchNames {
		if got := machine.BranchNameProblem(tt.name); got != tt.why {
			t.Errorf("BranchNameProblem(%q) = %q, want %q", tt.name, got, tt.why)
		}
	}
}

// TestSameName: the live trees new's name already goes by are those whose
// id is the name's slug and 6 hex digits (or the slug itself); other
// names, other slugs that merely begin alike, and tombstoned records are
// not.
func TestSameName(t *testing.T) {
	t.Parallel()
	rec := func(id string, st machine.State) machine.Record {
		return machine.Record{ID: id, Kind: machine.KindWorktree, State: st, Path: "/r/.worktrees/" + id}
	}
	live := []machine.Record{
		rec("fix-login-1a2b3c", machine.StateActive),
		rec("fix-login-4d5e6f", machine.StateFinished),
		rec("fix-login-000000", machine.StateTombstoned),
		rec("fix-login-2-aaaaaa", machine.StateActive),
		rec("fix-login", machine.StateActive),
		rec("fix-login-XYZ123", machine.StateActive),
		rec("fix-aaaaaa", machine.StateActive),
	}
	var got []string
	for _, r := range machine.SameName("Fix Login!", live) {
		got = append(got, r.ID)
	}
	if diff := cmp.Diff([]string{"fix-login-1a2b3c", "fix-login-4d5e6f", "fix-login"}, got); diff != "" {
		t.Errorf("SameName (-want +got):\n%s", diff)
	}
	if same := machine.SameName("other", live); len(same) != 0 {
		t.Errorf("SameName(other) = %v, want none", same)
	}
	one := machine.NameInUseWarning("fix login", live[:1])
	if want := "the name 'fix login' is already used by a live tree: fix-login-1a2b3c at /r/.worktrees/fix-login-1a2b3c; the new tree has an id and path of its own"; one != want {
		t.Errorf("NameInUseWarning = %q, want %q", one, want)
	}
	two := machine.NameInUseWarning("fix-login", []machine.Record{live[0], rec("fix-login-9a9a9a", machine.StateActive)})
	if want := "the name fix-login is already used by 2 live trees: fix-login-1a2b3c at /r/.worktrees/fix-login-1a2b3c, fix-login-9a9a9a at /r/.worktrees/fix-login-9a9a9a; the new tree has an id and path of its own"; two != want {
		t.Errorf("NameInUseWarning = %q, want %q", two, want)
	}
}
