package machine_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// declaredCodes parses refusals.go for every `Name Code = "value"`
// declaration (var or const), so a code added without a Codes entry fails.
func declaredCodes(t *testing.T) map[string]machine.Code {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "refusals.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]machine.Code{}
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || (gd.Tok != token.VAR && gd.Tok != token.CONST) {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s: not a string literal", name.Name)
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out[name.Name] = machine.Code(v)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("found no Code declarations in refusals.go")
	}
	return out
}

var kebab = regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)

func TestCodesComplete(t *testing.T) {
	t.Parallel()
	declared := declaredCodes(t)
	codes := machine.Codes()
	values := map[machine.Code]string{}
	for name, c := range declared {
		if prev, ok := values[c]; ok {
			t.Errorf("%s and %s share the code %q", name, prev, c)
		}
		values[c] = name
		if !kebab.MatchString(string(c)) {
			t.Errorf("%s = %q is not kebab-case", name, c)
		}
		if codes[c] == "" {
			t.Errorf("%s = %q has no entry in Codes()", name, c)
		}
	}
	for c := range codes {
		if _, ok := values[c]; !ok {
			t.Errorf("Codes() lists %q, which refusals.go does not declare", c)
		}
	}
	sorted := machine.SortedCodes()
	if !slices.IsSorted(sorted) || len(sorted) != len(codes) {
		t.Errorf("SortedCodes() = %v, not the %d sorted codes", sorted, len(codes))
	}
}

// TestCodeValues pins the codes Assess emits: scripts match on them, so a
// rename must fail a test.
func TestCodeValues(t *testing.T) {
	t.Parallel()
	got := map[machine.Code]bool{}
	for _, c := range []machine.Code{
		machine.CodeNotFinished, machine.CodeLeaseLive, machine.CodeIntentPending, machine.CodeInProgress,
		machine.CodeNotOwned, machine.CodePathUnknown, machine.CodeWorktreeMissing, machine.CodeSymlink,
		machine.CodeNotRegistered, machine.CodeAdminKeyMismatch, machine.CodeIdentityChanged, machine.CodeLocked,
		machine.CodePrunable, machine.CodeStatusFailed, machine.CodeUnmerged, machine.CodeTrackedChanges,
		machine.CodeUntrackedFiles, machine.CodeIgnoredFiles, machine.CodeInUse, machine.CodeHeadUnknown,
		machine.CodeNoRemote, machine.CodeRemoteUnavailable, machine.CodeDetachedHead, machine.CodeUnpushedCommits,
		machine.CodeProofFailed, machine.CodeStale, machine.CodeNotInPlan, machine.CodeUnknownRecord,
		machine.CodeWrongState, machine.CodeGuardFailed, machine.CodeRemovalFailed, machine.CodeCreateFailed,
		machine.CodeResumeUnmatched,
	} {
		got[c] = true
	}
	want := map[machine.Code]bool{}
	for _, c := range []machine.Code{
		"not-finished", "lease-live", "intent-pending", "in-progress", "not-owned", "path-unknown",
		"worktree-missing", "symlink", "not-registered", "admin-key-mismatch", "identity-changed", "locked",
		"prunable", "status-failed", "unmerged-paths", "tracked-changes", "untracked-files", "ignored-files",
		"in-use", "head-unknown", "no-remote", "remote-unavailable", "detached-head", "unpushed-commits",
		"proof-failed", "stale", "not-in-plan", "unknown-record", "wrong-state", "guard-failed",
		"removal-failed", "create-failed", "resume-unmatched",
	} {
		want[c] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("code values (-want +got):\n%s", diff)
	}
}

func TestRefusalError(t *testing.T) {
	t.Parallel()
	r := &machine.Refusal{Code: machine.CodeLocked, Message: "x is locked", Path: "/x", Retry: "git worktree unlock /x"}
	if got, want := r.Error(), "x is locked [locked]\n\tto retry: git worktree unlock /x"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	r2 := &machine.Refusal{Code: machine.CodeStale, Message: "changed"}
	if got, want := r2.Error(), "changed [stale]"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var err error = r
	if !errors.Is(err, machine.CodeLocked.AsError()) {
		t.Errorf("errors.Is does not match a refusal by its code")
	}
	if errors.Is(err, machine.CodeStale.AsError()) {
		t.Errorf("errors.Is matches another code")
	}
	if errors.Is(err, r2) {
		t.Errorf("errors.Is matches a target carrying a message")
	}
}
