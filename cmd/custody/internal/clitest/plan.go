package clitest

import (
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// PlanAllowPending runs custody plan, which exits 0 or 3 with a kept tree (whether a
// kept tree makes plan exit 3 is the plan's contract, not the report's).
func PlanAllowPending(t testing.TB, r *fixtures.Repo, args ...string) Result {
	t.Helper()
	res := Custody(t, r, append([]string{"plan"}, args...)...)
	if res.Code != 0 && res.Code != 3 {
		t.Fatalf("custody plan %v: %s", args, res)
	}
	return res
}
