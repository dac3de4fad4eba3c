package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestCommandAgain: the command line comes back quoted for pasting, with
// the extra global flags first; a flag extra names gives way among args
// in either spelling, so the retry uses extra's value; what follows "--"
// is kept as it is.
func TestCommandAgain(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args, extra []string
		want        string
	}{
		{[]string{"plan"}, nil, "custody plan"},
		{[]string{"--json", "list"}, []string{"--lock-timeout", "60s"}, "custody --lock-timeout 60s --json list"},
		{[]string{"--lock-timeout", "1s", "list"}, []string{"--lock-timeout", "60s"}, "custody --lock-timeout 60s list"},
		{[]string{"--lock-timeout=1s", "list"}, []string{"--lock-timeout", "60s"}, "custody --lock-timeout 60s list"},
		{[]string{"--observe-timeout", "2s", "--lock-timeout", "1s", "plan", "-o", "p.json"}, []string{"--observe-timeout", "8s"},
			"custody --observe-timeout 8s --lock-timeout 1s plan -o p.json"},
		{[]string{"--observe-timeout=2s", "plan"}, []string{"--observe-timeout", "8s"}, "custody --observe-timeout 8s plan"},
		{[]string{"new", "--", "--observe-timeout", "a b"}, []string{"--observe-timeout", "8s"}, "custody --observe-timeout 8s new -- --observe-timeout 'a b'"},
	} {
		if got := machine.CommandAgain(tt.args, tt.extra...); got != tt.want {
			t.Errorf("CommandAgain(%q, %q) = %q, want %q", tt.args, tt.extra, got, tt.want)
		}
	}
}
