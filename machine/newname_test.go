package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/google/go-cmp/cmp"
)

func TestCheckWorktreeName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		want *machine.Refusal
	}{
		{"fix", nil},
		{"  Fix login ", nil},
		{"ä1", nil},
		{"", &machine.Refusal{Code: machine.CodeEmptyName, Retry: "custody new NAME",
			Message: "the worktree name is empty, so no id can be made of it; nothing was created: give a name such as fix-login"}},
		{" \t\n", &machine.Refusal{Code: machine.CodeEmptyName, Retry: "custody new NAME",
			Message: `the worktree name ' \t\n' has no letter a-z or digit 0-9, so no id can be made of it; nothing was created: give a name such as fix-login`}},
		{"!!!", &machine.Refusal{Code: machine.CodeEmptyName, Retry: "custody new NAME",
			Message: "the worktree name '!!!' has no letter a-z or digit 0-9, so no id can be made of it; nothing was created: give a name such as fix-login"}},
		{"ÄÖÜ", &machine.Refusal{Code: machine.CodeEmptyName, Retry: "custody new NAME",
			Message: "the worktree name 'ÄÖÜ' has no letter a-z or digit 0-9, so no id can be made of it; nothing was created: give a name such as fix-login"}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, machine.CheckWorktreeName(c.name)); diff != "" {
			t.Errorf("CheckWorktreeName(%q) (-want +got):\n%s", c.name, diff)
		}
	}
}
