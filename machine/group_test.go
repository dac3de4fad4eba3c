package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

func TestDecideGroup(t *testing.T) {
	t.Parallel()
	group := func(host string) *machine.ResourceIntent {
		return &machine.ResourceIntent{Kind: machine.IntentResourceCreate, Group: &machine.Holder{PID: 42, Host: host, Start: 7}}
	}
	for _, tt := range []struct {
		name string
		in   *machine.ResourceIntent
		f    machine.GroupFacts
		want machine.GroupAction
	}{
		{"no-intent", nil, machine.GroupFacts{Host: "h", Alive: true}, machine.GroupNone},
		{"no-group", &machine.ResourceIntent{Kind: machine.IntentResourceCreate}, machine.GroupFacts{Host: "h", Alive: true}, machine.GroupNone},
		{"alive", group("h"), machine.GroupFacts{Host: "h", Alive: true}, machine.GroupEnd},
		{"ended", group("h"), machine.GroupFacts{Host: "h"}, machine.GroupNone},
		{"other-host", group("elsewhere"), machine.GroupFacts{Host: "h", Alive: true}, machine.GroupForeign},
		{"other-host-not-seen", group("elsewhere"), machine.GroupFacts{Host: "h"}, machine.GroupForeign},
	} {
		if got := machine.DecideGroup(tt.in, tt.f); got != tt.want {
			t.Errorf("%s: DecideGroup = %s, want %s", tt.name, got, tt.want)
		}
	}
}
