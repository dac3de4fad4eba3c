package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestUnexpandedDoubleQuotes: sh starts no single-quoted string inside
// double quotes, so an apostrophe there does not hide a later @token@:
// Unexpanded still names it, and the command is refused before it runs.
func TestUnexpandedDoubleQuotes(t *testing.T) {
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
