package machine_test

// Review of issue 4: tests named TestReviewBug* fail on the code as
// reviewed and assert the behaviour the issue asks for.

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestReviewBugUnexpandedDoubleQuotes: sh starts no single-quoted string
// inside double quotes, so an apostrophe there must not hide a later
// @token@. Observed: Unexpanded returns "" and the command would run with
// the token left in it.
func TestReviewBugUnexpandedDoubleQuotes(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{
		`echo "it's" >/dev/null; rm -rf /srv/@nosuch@`,
		`psql -c "select 'x'" && dropdb "don't-@nosuch@"`,
	} {
		if got := machine.Unexpanded(cmd); got != "@nosuch@" {
			t.Errorf("Unexpanded(%q) = %q, want @nosuch@", cmd, got)
		}
	}
}

// TestReviewBugIdentFitsIdentifierLimit: @resource_ident@ is promised
// SQL-identifier safe, and handles unique across worktrees. PostgreSQL
// (and DNS labels, for a dev server's host name) keep only 63 bytes, so two
// worktrees' identifiers must differ within their first 63 bytes. Observed:
// a long project slug and worktree name push the random part of the id
// past byte 63, so PostgreSQL truncates two worktrees' databases to one name.
func TestReviewBugIdentFitsIdentifierLimit(t *testing.T) {
	t.Parallel()
	slug := machine.SanitizeSlug("acme-enterprise-platform-monorepo")
	name := "implement the new billing pipeline for enterprise customers"
	a := machine.Ident(machine.Handle(slug, machine.WorktreeID(name, [3]byte{1, 2, 3}), "analytics_db"))
	b := machine.Ident(machine.Handle(slug, machine.WorktreeID(name, [3]byte{4, 5, 6}), "analytics_db"))
	if len(a) > 63 {
		t.Errorf("ident %q is %d bytes, more than an SQL identifier or DNS label holds (63)", a, len(a))
	}
	if len(a) > 63 && len(b) > 63 && a[:63] == b[:63] {
		t.Errorf("two worktrees' idents are the same in their first 63 bytes:\n%s\n%s", a, b)
	}
}
